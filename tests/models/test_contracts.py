"""The contract every model keeps, checked on every example of the registry with no way out.

scikit-learn's estimator checks (``test_estimator_checks.py``) hold the models to scikit-learn's
contract, and a model that fails one of them for a good reason lists it as an expected failure:
which then hides every other fault that check would have found (its range check of
``predict_proba`` among them).  The checks here have no such table.  Each is a function of an
estimator factory (a callable returning a fresh unfitted estimator), run on every example of the
registry (``mlneighbors._registry``) with what its entry declares, and on deliberately broken
toy models, which each must reject:

- :func:`check_scores_in_range`: every ``predict_proba`` score lies in [0, 1];
- :func:`check_predict_follows_scores`: ``predict`` follows from the scores as the example's
  ``predicts`` says (a threshold of ``predict_proba`` or of ``decision_function``, a top of the
  ranking, or a rule of its own, said in words);
- :func:`check_parameters_matter`: every parameter changes some output for some other value its
  ``_constraints`` admit (or the entry's ``tries``), unless the entry declares it ``inert`` with
  a reason, and then it changes none.
"""

from __future__ import annotations

import operator
import re
import warnings
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np
import pytest
from sklearn.base import clone

from mlneighbors import BRkNN, MLkNN
from mlneighbors._params import Integer, Options, RandomState, Real
from mlneighbors._registry import ESTIMATORS, build

from .conftest import corner_data

Data = tuple[np.ndarray, np.ndarray, np.ndarray]  # (X, Y, queries)


def contract_data(seed: int = 0, n: int = 60, n_features: int = 5, n_labels: int = 6, n_queries: int = 20) -> Data:
    """Rows whose labels depend on the features (every parameter of the search and of the rule
    has something to change) and on each other (label 5 is labels 0 and 1 together: the
    hybrid's regression of a label on the others has something to find)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, n_features))
    Q = rng.normal(size=(n_queries, n_features))
    Y = (X @ rng.normal(size=(n_features, n_labels)) + rng.normal(size=(n, n_labels)) > 0.8).astype(np.int64)
    Y[:, 5] = Y[:, 0] & Y[:, 1]
    return X, Y, Q


def datasets() -> list[Data]:
    """The contract data and the models' corner cases (duplicate rows, a label nobody has, a
    label everybody has, rows without labels)."""
    rng = np.random.default_rng(20261122)
    return [contract_data(),
            corner_data(rng, n_features=4, continuous=True),
            corner_data(rng, variant="empty", n_features=4, continuous=True)]


def _fitted(make: Callable[[], Any], X: np.ndarray, Y: np.ndarray) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a label without members, k clipped: the data are meant so
        return make().fit(X, Y)


# -- the checks ---------------------------------------------------------------------------


def check_scores_in_range(make: Callable[[], Any], data: Iterable[Data]) -> None:
    """Every ``predict_proba`` score of every query, and of the training rows, is in [0, 1]."""
    for X, Y, Q in data:
        model = _fitted(make, X, Y)
        for name, rows in (("queries", Q), ("training rows", X)):
            scores = np.asarray(model.predict_proba(rows))
            bad = ~((scores >= 0.0) & (scores <= 1.0))  # NaN is outside too
            assert not bad.any(), (
                f"{type(model).__name__}.predict_proba scores outside [0, 1] on the {name}: "
                f"{scores[bad][:5].tolist()} (of {int(bad.sum())})")


_COMPARE = {">": operator.gt, ">=": operator.ge}


def check_predict_follows_scores(make: Callable[[], Any], rule: str | None, data: Iterable[Data]) -> None:
    """``predict`` follows from the scores as ``rule`` (an example's ``predicts``) says."""
    assert rule, "a classifier says how predict follows from its scores (Example.predicts in mlneighbors/_registry.py)"
    if rule.startswith("own rule: "):
        assert len(rule) > len("own rule: ") + 10, f"{rule!r}: say in a line what the rule is"
        return
    for X, Y, Q in data:
        model = _fitted(make, X, Y)
        name = type(model).__name__
        predicted = np.asarray(model.predict(Q)).astype(bool)
        proba = np.asarray(model.predict_proba(Q))
        if rule == "top of proba":
            lowest_in = np.where(predicted, proba, np.inf).min(axis=1)
            highest_out = np.where(predicted, -np.inf, proba).max(axis=1)
            bad = np.flatnonzero(lowest_in < highest_out)
            assert not len(bad), (f"{name}.predict is not a top of the predict_proba ranking on rows "
                                  f"{bad[:5].tolist()}: a predicted label scores below one left out")
            continue
        parsed = re.fullmatch(r"(proba|decision) (>|>=) (\S+)", rule)
        assert parsed, f"{rule!r} is no rule of Example.predicts (mlneighbors/_registry.py)"
        what, op, value = parsed.groups()
        scores = proba if what == "proba" else np.asarray(model.decision_function(Q))
        bound = model.get_params()[value] if value in model.get_params() else float(value)
        want = _COMPARE[op](scores, bound)
        bad = np.argwhere(predicted != want)
        assert not len(bad), (f"{name}.predict disagrees with '{rule}' at (row, label) {bad[:5].tolist()}: "
                              f"predicted {bool(predicted[tuple(bad[0])])}, score {float(scores[tuple(bad[0])])!r}")


def _others(value: Any, alternatives: Iterable[Any]) -> list[Any]:
    """Values other than ``value`` that the constraints ``alternatives`` admit: both sides of it
    and the bounds of a range, the other options, None where None is admitted."""
    numeric = isinstance(value, (int, float, np.number)) and not isinstance(value, (bool, np.bool_))
    found: list[Any] = []
    for alt in alternatives:
        if alt is None:
            candidates: list[Any] = [None]
        elif isinstance(alt, Options):
            candidates = list(alt.values)
        elif isinstance(alt, Integer):
            candidates = [value * 2, value + 1, value - 1] if numeric else [1, 2, 5]
            candidates += [b for b in (alt.low, alt.high) if b is not None]
        elif isinstance(alt, Real):
            candidates = [value * 10, value / 10, value + 1] if numeric else [0.1, 1.0, 10.0]
            if alt.low is not None and alt.high is not None:
                candidates += [alt.low + (alt.high - alt.low) * f for f in (0.1, 0.5, 0.9)]
            candidates += [b for b in (alt.low, alt.high) if b is not None]
        elif isinstance(alt, RandomState):
            candidates = [value + 1] if numeric else [0, 1]
        else:  # an instance of a class, an object with methods: nothing to make up
            candidates = []
        for candidate in candidates:
            admitted = candidate is None if alt is None else alt.admits(candidate)
            if admitted and not _same_value(candidate, value) and not any(_same_value(candidate, f) for f in found):
                found.append(candidate)
    return found


def _same_value(a: Any, b: Any) -> bool:
    return type(a) is type(b) and (a is b or (isinstance(a, (str, int, float)) and a == b))


def _outputs(model: Any, Q: np.ndarray) -> list[np.ndarray]:
    methods = [m for m in ("predict", "predict_proba", "decision_function", "transform") if hasattr(model, m)]
    return [np.asarray(getattr(model, m)(Q), dtype=float) for m in methods]


def _changed(a: list[np.ndarray], b: list[np.ndarray]) -> bool:
    """Whether some output differs beyond rounding (a shape, a prediction, a score)."""
    return any(x.shape != y.shape or not np.allclose(x, y, rtol=1e-9, atol=1e-12, equal_nan=True)
               for x, y in zip(a, b, strict=True))


def check_parameters_matter(make: Callable[[], Any], data: Data, inert: Mapping[str, str] = {},
                            tries: Mapping[str, Iterable[Any]] = {}) -> None:
    """Every parameter of ``make()`` changes some output (``predict``, ``predict_proba``,
    ``decision_function``, ``transform``) on ``data`` for some other value: one its class's
    ``_constraints`` admit, or one of ``tries[name]``.  A parameter in ``inert`` (name ->
    reason) must change none, for every value tried; a value whose fit raises changes nothing."""
    X, Y, Q = data
    model = make()
    name = type(model).__name__
    params = model.get_params(deep=False)
    assert set(inert) <= set(params) and set(tries) <= set(params), (
        f"inert or tries name parameters {name} does not have: {sorted((set(inert) | set(tries)) - set(params))}")
    for key, why in inert.items():
        assert isinstance(why, str) and len(why) > 10, f"{name}: say in a line why {key!r} is inert"
    base = _outputs(_fitted(make, X, Y), Q)
    ignored, moved = [], []
    for key, value in params.items():
        values = [build(v) for v in tries.get(key, ())] + _others(value, type(model)._constraints[key])
        changing = []
        for other in values:
            try:
                outputs = _outputs(_fitted(lambda key=key, other=other: clone(make()).set_params(**{key: other}), X, Y),
                                   Q)
            except (ValueError, TypeError):  # a value this data or the other parameters do not allow
                continue
            if _changed(base, outputs):
                changing.append(other)
                if key not in inert:
                    break
        if key in inert and changing:
            moved.append(f"{key} (to {changing[0]!r})")
        elif key not in inert and not changing:
            ignored.append(f"{key} (tried {values!r})" if values else f"{key} (no value to try: add some to tries)")
    assert not ignored, (f"{name}: these parameters change no output; make them matter or declare them inert "
                         f"with a reason (mlneighbors/_registry.py): {'; '.join(ignored)}")
    assert not moved, f"{name}: these parameters are declared inert but change outputs: {'; '.join(moved)}"


# -- every example of the registry ------------------------------------------------------------


def _factory(entry, example) -> Callable[[], Any]:
    return lambda: entry.load()(**{k: build(v) for k, v in example.params.items()})


CASES = [pytest.param(entry, example, id=example.id) for entry in ESTIMATORS for example in entry.examples]
CLASSIFIERS = [case for case in CASES if hasattr(case.values[0].load(), "predict")]


@pytest.mark.parametrize("entry, example", CLASSIFIERS)
def test_scores_are_in_range(entry, example):
    check_scores_in_range(_factory(entry, example), datasets())


@pytest.mark.parametrize("entry, example", CLASSIFIERS)
def test_predict_follows_the_scores_as_declared(entry, example):
    check_predict_follows_scores(_factory(entry, example), example.predicts, datasets())


@pytest.mark.parametrize("entry, example", CASES)
def test_every_parameter_changes_some_output_or_is_declared_inert(entry, example):
    check_parameters_matter(_factory(entry, example), contract_data(), {**entry.inert, **example.inert}, entry.tries)


def test_a_transformer_declares_no_predict_rule():
    for _, example in (case.values for case in CASES if case not in CLASSIFIERS):
        assert example.predicts is None, f"{example.id}: a transformer has no predict to follow its scores"


# -- broken toys: every check must reject the fault it is for --------------------------------


class _ProbaUpToTwo(MLkNN):
    """Scores doubled: up to 2 (what scikit-learn's one range check, listed as an expected
    failure of a model that fails it for another reason, never reported)."""

    def predict_proba(self, X):
        return 2.0 * super().predict_proba(X)


class _IgnoresSmoothing(MLkNN):
    """Fits with smoothing 1 whatever its parameter says."""

    def _fit_labels(self, X, Y):
        given, self.smoothing = self.smoothing, 1.0
        try:
            super()._fit_labels(X, Y)
        finally:
            self.smoothing = given


class _AddsAParameterItIgnores(BRkNN):
    """A new parameter, declared and checked, that the rule never reads."""

    _constraints = {**BRkNN._constraints, "min_votes": [Integer(1)]}

    def __init__(self, n_neighbors=4, *, min_votes=1, extension=None, metric="euclidean", backend="exact",
                 backend_params=None, n_jobs=None):
        super().__init__(n_neighbors, extension=extension, metric=metric, backend=backend,
                         backend_params=backend_params, n_jobs=n_jobs)
        self.min_votes = min_votes


class _PredictsTheOtherLabels(BRkNN):
    """Predicts exactly the labels its threshold leaves out."""

    def predict(self, X):
        return 1 - super().predict(X)


_MLKNN = next(entry for entry in ESTIMATORS if entry.name == "MLkNN")


def test_the_range_check_rejects_scores_up_to_2():
    with pytest.raises(AssertionError, match=r"_ProbaUpToTwo.predict_proba scores outside \[0, 1\]"):
        check_scores_in_range(lambda: _ProbaUpToTwo(4), datasets())
    check_scores_in_range(lambda: MLkNN(4), datasets())  # and passes the model it broke


@pytest.mark.parametrize("make, needle", [
    (lambda: _IgnoresSmoothing(4), "_IgnoresSmoothing: these parameters change no output.*smoothing"),
    (lambda: _AddsAParameterItIgnores(4), "_AddsAParameterItIgnores: these parameters change no output.*min_votes"),
], ids=["ignores-smoothing", "adds-a-parameter-it-ignores"])
def test_the_parameter_check_rejects_a_parameter_ignored(make, needle):
    with pytest.raises(AssertionError, match=needle):
        check_parameters_matter(make, contract_data(), _MLKNN.inert)


def test_the_parameter_check_rejects_an_inert_declaration_that_is_not_true():
    with pytest.raises(AssertionError, match="declared inert but change outputs: smoothing"):
        check_parameters_matter(lambda: MLkNN(4), contract_data(), {**_MLKNN.inert, "smoothing": "says it does not"})


def test_the_predict_check_rejects_predictions_against_the_scores():
    with pytest.raises(AssertionError, match=r"_PredictsTheOtherLabels.predict disagrees with 'proba > 0.5'"):
        check_predict_follows_scores(lambda: _PredictsTheOtherLabels(4), "proba > 0.5", datasets())
    with pytest.raises(AssertionError, match="is not a top of the predict_proba ranking"):
        check_predict_follows_scores(lambda: _PredictsTheOtherLabels(4), "top of proba", datasets())
    with pytest.raises(AssertionError, match="says how predict follows from its scores"):
        check_predict_follows_scores(lambda: BRkNN(4), None, datasets())
