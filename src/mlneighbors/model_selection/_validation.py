"""Validation: for each split, fit, predict and score every model, sharing one neighbour search.

:func:`evaluate_models` is the one evaluation loop of the package: cross-validation folds or
a train/test pair, several models (and several ``k``) per split, features scaled with the
training part's ranges, and one :class:`~mlneighbors.neighbors.NeighborCache` per split and
metric so that every model with an exact backend reads its neighbours from one search.
:func:`cross_validate` is its one-model form; the command line and the papers'
reproductions call it too.
"""

from __future__ import annotations

import inspect
import numbers
import time
from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.model_selection import BaseCrossValidator
from sklearn.utils.parallel import Parallel, delayed
from sklearn.utils.validation import indexable

from .._progress import task
from ..metrics import METRICS, evaluate
from ._split import MultilabelStratifiedKFold

__all__ = ["CVResult", "FittedSplit", "cross_validate", "evaluate_models", "make_scaler"]

SCALERS = ("minmax", "standard", "none")


#: the spread of per-fold values every output of the package reports (evaluate, CVResult, the
#: benchmark report), said in their headers
STD_DEFINITION = "sample standard deviation over folds (ddof = 1)"


def _sample_std(values: Any) -> float:
    """The sample standard deviation (``ddof=1``) of per-fold values; NaN for one value."""
    values = np.asarray(values, dtype=np.float64)
    return float(np.std(values, ddof=1)) if values.size > 1 else float("nan")


@dataclass(frozen=True)
class CVResult:
    """Per-fold metric values and timings of :func:`cross_validate`.

    Parameters
    ----------
    per_fold : dict of str to ndarray of shape (n_folds,)
        Metric name -> value on each test fold, in fold order.
    fit_time : ndarray of shape (n_folds,)
        Seconds spent in ``fit`` per fold.
    predict_time : ndarray of shape (n_folds,)
        Seconds spent in ``predict`` and the score method per fold.
    test_indices : tuple of ndarray
        Test indices of each fold.
    predictions : ndarray of shape (n_samples, n_labels) or None
        Out-of-fold bipartitions (when ``return_predictions=True`` and
        ``predict`` was called).
    scores : ndarray of shape (n_samples, n_labels) or None
        Out-of-fold ranking scores (when ``return_predictions=True`` and scores
        were computed).

    Examples
    --------
    >>> import numpy as np
    >>> from mlneighbors import MLkNN
    >>> from mlneighbors.model_selection import cross_validate
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(60, 3))
    >>> Y = np.column_stack([X[:, 0] > 0, X[:, 1] > 0]).astype(int)
    >>> result = cross_validate(MLkNN(5), X, Y, cv=3, metrics=["hamming_loss"])
    >>> result.n_folds, sorted(result.mean)
    (3, ['hamming_loss'])
    """

    per_fold: dict[str, np.ndarray]
    fit_time: np.ndarray
    predict_time: np.ndarray
    test_indices: tuple[np.ndarray, ...] = field(repr=False)
    predictions: np.ndarray | None = field(default=None, repr=False)
    scores: np.ndarray | None = field(default=None, repr=False)

    @property
    def n_folds(self) -> int:
        """Number of folds."""
        return len(self.fit_time)

    @property
    def mean(self) -> dict[str, float]:
        """Metric name -> mean over folds."""
        return {name: float(np.mean(v)) for name, v in self.per_fold.items()}

    @property
    def std(self) -> dict[str, float]:
        """Metric name -> sample standard deviation over folds (``ddof=1``, as the benchmark
        report and papers' tables give it; NaN with a single fold)."""
        return {name: _sample_std(v) for name, v in self.per_fold.items()}

    def to_rows(self, *, per_fold: bool = False) -> list[dict[str, Any]]:
        """Rows for a table.

        Parameters
        ----------
        per_fold : bool, default=False
            If False, one row per metric with keys ``metric``, ``mean`` and
            ``std`` (fit and predict times appear as rows ``fit_time`` and
            ``predict_time``). If True, one row per fold with key ``fold``,
            one key per metric and the two times.

        Returns
        -------
        rows : list of dict
        """
        if per_fold:
            return [
                {
                    "fold": j,
                    **{name: float(v[j]) for name, v in self.per_fold.items()},
                    "fit_time": float(self.fit_time[j]),
                    "predict_time": float(self.predict_time[j]),
                }
                for j in range(self.n_folds)
            ]
        mean, std = self.mean, self.std
        rows = [{"metric": name, "mean": mean[name], "std": std[name]} for name in self.per_fold]
        for name, times in (("fit_time", self.fit_time), ("predict_time", self.predict_time)):
            rows.append({"metric": name, "mean": float(np.mean(times)), "std": _sample_std(times)})
        return rows


@dataclass(frozen=True)
class FittedSplit:
    """One model fitted on one split, as :func:`evaluate_models` hands it to ``on_fit``.

    Parameters
    ----------
    split : int
        The split's number (fold order).
    name : hashable
        The model's key in ``models``.
    model : estimator
        The fitted model (its neighbours can be read with ``model.kneighbors``: with a shared
        search that costs no new search).
    Y_train : the labels the model was fitted on.
    X_test, Y_test : the test part, as the model saw it (scaled when ``scale`` is set).
    predictions, scores : ndarray or None
        ``predict`` and the ranking scores, when the metrics needed them.
    values : dict of str to float
        The metrics of this split.

    Examples
    --------
    >>> import numpy as np
    >>> from mlneighbors import MLkNN
    >>> from mlneighbors.model_selection import evaluate_models
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(60, 3))
    >>> Y = np.column_stack([X[:, 0] > 0, X[:, 1] > 0]).astype(int)
    >>> seen = []
    >>> _ = evaluate_models({"mlknn": MLkNN(5)}, X, Y, cv=3, metrics=["hamming_loss"],
    ...                     on_fit=lambda fitted: seen.append((fitted.split, fitted.name)))
    >>> seen
    [(0, 'mlknn'), (1, 'mlknn'), (2, 'mlknn')]
    """

    split: int
    name: Hashable
    model: Any
    Y_train: Any = field(repr=False)
    X_test: Any = field(repr=False)
    Y_test: Any = field(repr=False)
    predictions: np.ndarray | None = field(repr=False)
    scores: np.ndarray | None = field(repr=False)
    values: dict[str, float]


def make_scaler(kind: str, *, sparse: bool) -> Any:
    """A feature scaler for ``kind`` in ``{"minmax", "standard", "none"}`` (None for "none").

    ``"minmax"`` is MULAN's ``Normalize`` (every feature to [0, 1] with the training
    ranges): :class:`~sklearn.preprocessing.MinMaxScaler` for dense data, and for sparse
    data :class:`~sklearn.preprocessing.MaxAbsScaler`, which is the same map for
    non-negative sparse features (every column has an implicit zero) and keeps the matrix
    sparse.  ``"standard"``: :class:`~sklearn.preprocessing.StandardScaler` (without
    centring for sparse data).  Test values outside the training range are not clipped.

    Parameters
    ----------
    kind : {"minmax", "standard", "none"}
    sparse : bool
        Whether the features are a sparse matrix.

    Returns
    -------
    scaler : transformer or None

    Examples
    --------
    >>> make_scaler("minmax", sparse=False)
    MinMaxScaler()
    >>> make_scaler("minmax", sparse=True)
    MaxAbsScaler()
    """
    from sklearn.preprocessing import MaxAbsScaler, MinMaxScaler, StandardScaler

    if kind == "minmax":
        return MaxAbsScaler() if sparse else MinMaxScaler()
    if kind == "standard":
        return StandardScaler(with_mean=not sparse)
    if kind == "none" or kind is None:
        return None
    raise ValueError(f"unknown scaling {kind!r}; valid: {', '.join(SCALERS)}")


def _scale(scale: Any, X_train: Any, X_test: Any) -> tuple[Any, Any]:
    """Fit the scaler on the training part, apply it to both parts."""
    scaler = make_scaler(scale, sparse=sp.issparse(X_train)) if isinstance(scale, str) else clone(scale)
    if scaler is None:
        return X_train, X_test
    scaler.fit(X_train)
    Xtr, Xte = scaler.transform(X_train), scaler.transform(X_test)
    if sp.issparse(Xtr):
        return sp.csr_matrix(Xtr), sp.csr_matrix(Xte)
    return np.ascontiguousarray(Xtr), np.ascontiguousarray(Xte)


def _take_rows(A: Any, idx: np.ndarray) -> Any:
    if hasattr(A, "iloc"):
        return A.iloc[idx]
    if sp.issparse(A):
        return A[idx]
    return np.ascontiguousarray(A[idx])


def _positive_column(proba: np.ndarray, classes: Any) -> np.ndarray:
    """Probability of the positive class from one label's (n, n_classes) array."""
    proba = np.asarray(proba)
    if proba.ndim == 1:
        return proba.astype(np.float64)
    if classes is not None:
        classes = np.asarray(classes)
        hit = np.flatnonzero(classes == 1)
        if hit.size:
            return proba[:, hit[0]].astype(np.float64)
        # The label took one value only in this training fold.
        constant = 1.0 if classes.size and bool(classes[0]) else 0.0
        return np.full(proba.shape[0], constant)
    if proba.shape[1] == 2:
        return proba[:, 1].astype(np.float64)
    raise ValueError(
        "predict_proba returned a per-label array of shape "
        f"{proba.shape} and the estimator has no classes_ to find the positive class."
    )


def _label_scores(estimator: Any, X: Any) -> np.ndarray:
    """(n, L) ranking scores from predict_proba, else decision_function."""
    if hasattr(estimator, "predict_proba"):
        proba = estimator.predict_proba(X)
        if isinstance(proba, list):
            classes = getattr(estimator, "classes_", None)
            if not isinstance(classes, list) or len(classes) != len(proba):
                classes = [None] * len(proba)
            return np.column_stack([_positive_column(p, c) for p, c in zip(proba, classes, strict=True)])
        proba = proba.toarray() if sp.issparse(proba) else np.asarray(proba)
        return proba.astype(np.float64, copy=False)
    scores = estimator.decision_function(X)
    scores = scores.toarray() if sp.issparse(scores) else np.asarray(scores)
    return scores.astype(np.float64, copy=False)


def _predictions(model: Any, X: Any, need_pred: bool, need_scores: bool) -> tuple[Any, Any]:
    """``predict(X)`` and the ranking scores, each when asked.  A multi-label model of this
    package (alone or last in a Pipeline) gives both from one search: its ``predict`` and
    ``predict_proba`` are two views of ``_scores_and_decisions``, so the answers are those of
    the two calls (a model whose search is not shared, as BKNN's, searched the test rows twice)."""
    from sklearn.pipeline import Pipeline as SklearnPipeline

    from .._base import KNeighborsMultilabelBase

    final, Xt = model, X
    if isinstance(model, SklearnPipeline):
        final = model.steps[-1][1]
    if (need_pred and need_scores and isinstance(final, KNeighborsMultilabelBase)
            and getattr(final, "_multilabel", False)):
        if final is not model:
            Xt = model[:-1].transform(X)
        scores, decisions = final._scores_and_decisions(Xt)
        return decisions.astype(final._y_dtype), scores.astype(np.float64, copy=False)
    return (model.predict(X) if need_pred else None), (_label_scores(model, X) if need_scores else None)


def _has_scores(estimator: Any) -> bool:
    return hasattr(estimator, "predict_proba") or hasattr(estimator, "decision_function")


def _metric_kinds(metrics: Any) -> tuple[list[str] | None, bool, bool]:
    """Check metric names; tell whether predict and scores are needed (None: decided later)."""
    if metrics is None:
        return None, True, False
    names = [metrics] if isinstance(metrics, str) else list(metrics)
    if not names:
        raise ValueError("metrics must name at least one metric; got an empty list.")
    unknown = [name for name in names if name not in METRICS]
    if unknown:
        # Same message as evaluate's, but before any estimator is fitted.
        raise ValueError(f"unknown metric name(s) {unknown}; valid names are {sorted(METRICS)}")
    kinds = {METRICS[name].kind for name in names}
    return names, "bipartition" in kinds, "ranking" in kinds


def _resolve_splits(cv: Any, X: Any, Y: Any, random_state: Any) -> list[tuple[np.ndarray, np.ndarray]]:
    if isinstance(cv, bool):
        raise TypeError(f"cv must be an int, a splitter or an iterable of (train, test); got {cv!r}.")
    if isinstance(cv, numbers.Integral):
        if cv < 2:
            raise ValueError(f"cv must be at least 2 when an int; got cv={cv}.")
        splitter = MultilabelStratifiedKFold(n_splits=int(cv), shuffle=True, random_state=random_state)
        raw: Iterable[Any] = splitter.split(X, Y)
    elif hasattr(cv, "split"):
        raw = cv.split(X, Y)
    elif isinstance(cv, Iterable):
        raw = cv
    else:
        raise TypeError(
            "cv must be an int, a splitter with a split(X, y) method or an iterable "
            f"of (train, test) index arrays; got {type(cv).__name__}."
        )
    splits = []
    n = Y.shape[0]
    for pair in raw:
        train, test = (np.asarray(part) for part in pair)
        if train.dtype == bool:
            train = np.flatnonzero(train)
        if test.dtype == bool:
            test = np.flatnonzero(test)
        splits.append((train.astype(np.intp, copy=False), test.astype(np.intp, copy=False)))
        for part in splits[-1]:
            if part.size and (part.min() < 0 or part.max() >= n):
                raise ValueError(f"cv yielded indices outside [0, {n}) for {n} samples.")
    if len(splits) < 2:
        raise ValueError(f"cv must produce at least 2 splits; got {len(splits)}.")
    return splits


def _check_xy(X: Any, Y: Any, what: str = "") -> tuple[Any, Any]:
    if not hasattr(Y, "shape"):
        Y = np.asarray(Y)
    if Y.ndim != 2:
        raise ValueError(
            f"Y{what} must be a 2-D label indicator matrix of shape (n_samples, n_labels); got shape {Y.shape}."
        )
    n_x = X.shape[0] if hasattr(X, "shape") else len(X)
    if n_x != Y.shape[0]:
        raise ValueError(f"X{what} and Y{what} have different numbers of samples: X has {n_x}, Y has {Y.shape[0]}.")
    return indexable(X, Y)


def _k_max(models: Mapping[Hashable, Any]) -> int:
    """The largest neighbour count any model asks for, plus one (leave-one-out asks k + 1)."""
    ks = [
        v for m in models.values() for key, v in m.get_params(deep=True).items()
        if (key == "n_neighbors" or key.endswith("__n_neighbors")) and isinstance(v, numbers.Integral)
    ]
    return max(ks, default=0) + 1


def _route_backends(model: Any, caches: dict[Any, Any], k_max: int, backend: Any, backend_params: Any,
                    share: bool) -> None:
    """Point the neighbour search of ``model`` (a pipeline's steps included) where the run says.

    Every ``backend`` parameter set to ``"exact"`` becomes ``backend`` (with
    ``backend_params``) when one is given; then, with ``share``, every registered backend
    that declares itself prefix-safe (``Capabilities.prefix_safe``: the exact ones) becomes
    the split's neighbour cache for its metric: one search for every model and every k.  A
    model that fixes its own search (HybridKNN's "pca-window") keeps it.
    """
    from ..neighbors import BACKENDS, NeighborCache, get_capabilities, get_index

    params = model.get_params(deep=True)
    updates: dict[str, Any] = {}
    for key, value in params.items():
        if not (key == "backend" or key.endswith("__backend")):
            continue
        prefix = key[: -len("backend")]
        extra = dict(params.get(prefix + "backend_params") or {})
        if backend is not None and isinstance(value, str) and value == "exact":
            value, extra = backend, dict(backend_params or {})
            updates[key] = value
            if prefix + "backend_params" in params:
                updates[prefix + "backend_params"] = extra or None
        if not share or not isinstance(value, str) or value not in BACKENDS:
            continue
        metric = params.get(prefix + "metric")
        if not isinstance(metric, str):
            continue  # the model fixes its own metric: not shared
        index = get_index(value, metric=metric, **extra)  # a bad backend_params raises here, as in fit
        if not get_capabilities(index).prefix_safe:
            continue
        n_jobs = params.get(prefix + "n_jobs")
        if n_jobs is not None and "n_jobs" in index.get_params():
            extra.setdefault("n_jobs", n_jobs)
        cache_key = (value, metric, repr(sorted(extra.items())))
        if cache_key not in caches:
            caches[cache_key] = NeighborCache(value, metric=metric, k_max=k_max, **extra)
        updates[key] = caches[cache_key]
        if prefix + "backend_params" in params:
            updates[prefix + "backend_params"] = None
    if updates:
        model.set_params(**updates)


class _Both:
    """Advances two progress objects (the task of the fits and a caller's ``progress``)."""

    def __init__(self, first: Any, second: Any) -> None:
        self.first, self.second = first, second

    def update(self, n: int = 1) -> None:
        self.first.update(n)
        self.second.update(n)


def _run_split(
    split: int,
    models: Mapping[Hashable, Any],
    parts: tuple[Any, Any, Any, Any],
    names: list[str] | None,
    need_pred: bool,
    need_scores: bool,
    scale: Any,
    share_neighbors: bool,
    backend: tuple[Any, Any],
    on_fit: Callable[[FittedSplit], Any] | None,
    progress: Any,
) -> dict[Hashable, tuple[dict[str, float], float, float, Any, Any]]:
    X_train, Y_train, X_test, Y_test = parts
    if scale is not None:
        X_train, X_test = _scale(scale, X_train, X_test)
    caches: dict[Any, Any] = {}
    k_max = _k_max(models)
    out = {}
    for name, template in models.items():
        model = clone(template)
        _route_backends(model, caches, k_max, *backend, share_neighbors)
        scores_wanted = need_scores or (names is None and _has_scores(model))
        t0 = time.perf_counter()
        model.fit(X_train, Y_train)
        t1 = time.perf_counter()
        pred, scores = _predictions(model, X_test, need_pred, scores_wanted)
        t2 = time.perf_counter()
        values = evaluate(Y_test, pred, scores, metrics=names, Y_train=Y_train)
        if on_fit is not None:
            on_fit(FittedSplit(split, name, model, Y_train, X_test, Y_test, pred, scores, values))
        if progress is not None:
            progress.update(1)
        out[name] = (values, t1 - t0, t2 - t1, pred, scores)
    return out


def evaluate_models(
    models: Mapping[Hashable, Any],
    X: Any,
    Y: Any,
    *,
    cv: int | BaseCrossValidator | Iterable[tuple[np.ndarray, np.ndarray]] = 10,
    test: tuple[Any, Any] | None = None,
    metrics: str | Iterable[str] | None = None,
    scale: str | Any | None = None,
    share_neighbors: bool = True,
    backend: Any = None,
    backend_params: dict | None = None,
    random_state: int | np.random.RandomState | None = None,
    n_jobs: int | None = None,
    return_predictions: bool = False,
    on_fit: Callable[[FittedSplit], Any] | None = None,
    progress: Any = None,
) -> dict[Hashable, CVResult]:
    """Fit, predict and score every model on every split.

    Parameters
    ----------
    models : mapping of hashable to estimator
        Unfitted estimators (cloned for every split), by any key (a name, ``(name, k)``).
    X : array-like or sparse matrix of shape (n_samples, n_features)
    Y : array-like or sparse matrix of shape (n_samples, n_labels)
        Binary label indicator matrix.
    cv : int, cross-validation splitter or iterable, default=10
        An int ``k`` means ``MultilabelStratifiedKFold(n_splits=k, shuffle=True,
        random_state=random_state)``; a splitter's ``split(X, Y)`` is used as is; an
        iterable yields (train, test) index arrays.  Ignored when ``test`` is given.
    test : tuple (X_test, Y_test), default=None
        A held-out test part: one split, trained on all of ``X``.
    metrics : str, iterable of str or None, default=None
        Names from :data:`mlneighbors.metrics.METRICS`.  None computes every bipartition
        metric, plus every ranking metric (those at k only when named) for the models
        with ``predict_proba`` or ``decision_function``.
    scale : {"minmax", "standard", "none"}, transformer or None, default=None
        Scale the features of every split with the training part's statistics
        (:func:`make_scaler`, or a clone of the given transformer).
    share_neighbors : bool, default=True
        One :class:`~mlneighbors.neighbors.NeighborCache` per split and metric replaces
        every exact registered backend (``backend="exact"``, a pipeline step's too): the
        training set's leave-one-out neighbours and the test set's neighbours are each
        searched once, at the largest ``n_neighbors`` of the models, and every model and
        every ``k`` read a prefix.  The results are those of separate searches.
    backend : str or index object, default=None
        Replaces every ``backend="exact"`` of the models (a pipeline step's too) for this
        run: ``"torch"``, say, to run every model and every k on a GPU.  None keeps the
        models' own backends.
    backend_params : dict, default=None
        Parameters of ``backend``.
    random_state : int, RandomState instance or None, default=None
        Seed of the folds when ``cv`` is an int.
    n_jobs : int or None, default=None
        Splits run in parallel (joblib); None means 1.  ``on_fit`` and ``progress`` need
        ``n_jobs`` None or 1 (they run where the split runs).
    return_predictions : bool, default=False
        Also return out-of-fold predictions and scores (the test folds must partition the
        samples).
    on_fit : callable, default=None
        Called with a :class:`FittedSplit` after each model of each split.
    progress : object with ``update(n)``, default=None
        Advanced by one after each model of each split (a tqdm bar, say).  The fits and the
        neighbour searches inside them are also reported to the package's progress setting
        (``mlneighbors.config_context(progress=True)`` draws bars), whatever this is.

    Returns
    -------
    results : dict of hashable to CVResult
        One :class:`CVResult` per model, in the order of ``models``.

    Examples
    --------
    >>> import numpy as np
    >>> from mlneighbors import BRkNN, MLkNN
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(80, 4))
    >>> Y = (X[:, :3] + rng.normal(scale=0.5, size=(80, 3)) > 0).astype(int)
    >>> models = {("ML-kNN", k): MLkNN(k) for k in (3, 5)} | {("BRkNN", 5): BRkNN(5)}
    >>> results = evaluate_models(models, X, Y, cv=4, metrics=["hamming_loss"], random_state=0)
    >>> sorted(results), results[("ML-kNN", 3)].per_fold["hamming_loss"].shape
    ([('BRkNN', 5), ('ML-kNN', 3), ('ML-kNN', 5)], (4,))
    """
    if not models:
        raise ValueError("models must hold at least one estimator")
    if n_jobs not in (None, 1) and (on_fit is not None or progress is not None):
        raise ValueError("on_fit and progress need n_jobs=None or 1: they run where each split runs")
    if isinstance(scale, str) and scale not in SCALERS:
        raise ValueError(f"unknown scaling {scale!r}; valid: {', '.join(SCALERS)}")
    X, Y = _check_xy(X, Y)
    names, need_pred, need_scores = _metric_kinds(metrics)
    if need_scores:
        lacking = [name for name, m in models.items() if not _has_scores(m)]
        if lacking:
            raise ValueError(
                f"metrics {names} include ranking metrics, which need scores, but "
                f"{', '.join(type(models[n]).__name__ for n in lacking)} has neither predict_proba "
                "nor decision_function."
            )
    need_pred = need_pred or return_predictions

    if test is not None:
        X_test, Y_test = _check_xy(*test, what="_test")
        n_test = Y_test.shape[0]
        parts = [(X, Y, X_test, Y_test)]
        test_indices: tuple[np.ndarray, ...] = (np.arange(n_test),)
        n_out = n_test
    else:
        splits = _resolve_splits(cv, X, Y, random_state)
        parts = [
            (_take_rows(X, tr), _take_rows(Y, tr), _take_rows(X, te), _take_rows(Y, te)) for tr, te in splits
        ]
        test_indices = tuple(te for _, te in splits)
        n_out = Y.shape[0]
        if return_predictions:
            tests = np.concatenate(test_indices)
            if tests.size != n_out or np.unique(tests).size != n_out:
                raise ValueError(
                    "return_predictions=True needs test folds that partition the samples "
                    "(every sample in exactly one test fold)."
                )

    # every fit is told to the progress listener, if any (mlneighbors._progress); the
    # searches inside a fit report their blocks as tasks of their own
    with task("fit and score", total=len(parts) * len(models), unit="fits") as fits:
        if n_jobs in (None, 1):
            steps = fits if progress is None else _Both(fits, progress)
            per_split = [
                _run_split(j, models, part, names, need_pred, need_scores, scale, share_neighbors,
                           (backend, backend_params), on_fit, steps)
                for j, part in enumerate(parts)
            ]
        else:  # the splits run elsewhere: each is told when its result comes back (joblib >= 1.3)
            streams = "return_as" in inspect.signature(Parallel.__init__).parameters
            per_split = []
            for result in Parallel(n_jobs=n_jobs, **({"return_as": "generator"} if streams else {}))(
                delayed(_run_split)(j, models, part, names, need_pred, need_scores, scale, share_neighbors,
                                    (backend, backend_params), None, None)
                for j, part in enumerate(parts)
            ):
                per_split.append(result)
                fits.advance(len(models))

    results = {}
    for name in models:
        out = [split[name] for split in per_split]
        metric_names = list(out[0][0])
        predictions = oof_scores = None
        if return_predictions:
            n_labels = Y.shape[1]
            for test_idx, (_, _, _, pred, score) in zip(test_indices, out, strict=True):
                if pred is not None:
                    pred = pred.toarray() if sp.issparse(pred) else np.asarray(pred)
                    if predictions is None:
                        predictions = np.zeros((n_out, n_labels), dtype=pred.dtype)
                    predictions[test_idx] = pred
                if score is not None:
                    if oof_scores is None:
                        oof_scores = np.zeros((n_out, n_labels), dtype=np.float64)
                    oof_scores[test_idx] = score
        results[name] = CVResult(
            per_fold={m: np.array([fold[0][m] for fold in out], dtype=np.float64) for m in metric_names},
            fit_time=np.array([fold[1] for fold in out]),
            predict_time=np.array([fold[2] for fold in out]),
            test_indices=test_indices,
            predictions=predictions,
            scores=oof_scores,
        )
    return results


def cross_validate(
    estimator: Any,
    X: Any,
    Y: Any,
    *,
    cv: int | BaseCrossValidator | Iterable[tuple[np.ndarray, np.ndarray]] = 10,
    metrics: str | Iterable[str] | None = None,
    random_state: int | np.random.RandomState | None = None,
    n_jobs: int | None = None,
    return_predictions: bool = False,
) -> CVResult:
    """Cross-validate a multi-label estimator and score every fold.

    Parameters
    ----------
    estimator : estimator object
        Any scikit-learn style multi-label estimator with ``fit(X, Y)`` and
        ``predict(X)``; ``predict_proba(X)`` (or ``decision_function(X)``)
        is needed only for ranking metrics. Cloned for every fold.
    X : array-like or sparse matrix of shape (n_samples, n_features)
        Features.
    Y : array-like or sparse matrix of shape (n_samples, n_labels)
        Binary label indicator matrix.
    cv : int, cross-validation splitter or iterable, default=10
        An int ``k`` means ``MultilabelStratifiedKFold(n_splits=k,
        shuffle=True, random_state=random_state)``; a splitter's
        ``split(X, Y)`` is used as is; an iterable yields (train, test) index
        arrays.
    metrics : str, iterable of str or None, default=None
        Names from :data:`mlneighbors.metrics.METRICS`. None computes every
        bipartition metric, plus every ranking metric (those at k only when named) when
        the estimator has ``predict_proba`` or ``decision_function``.
    random_state : int, RandomState instance or None, default=None
        Seed for the folds when ``cv`` is an int; ignored otherwise.
    n_jobs : int or None, default=None
        Number of folds fitted in parallel (joblib); None means 1.
    return_predictions : bool, default=False
        Also return out-of-fold predictions and scores. The test folds must
        then partition the samples.

    Returns
    -------
    result : CVResult
        Per-fold metric values with ``mean``, ``std`` and ``to_rows()``.

    Notes
    -----
    The one-model form of :func:`evaluate_models` (the estimator is used as given: no
    neighbour cache, no scaling).  Ranking scores come from ``predict_proba``; a list of
    per-label ``(n, n_classes)`` arrays (as returned by
    :class:`sklearn.multioutput.MultiOutputClassifier` or
    :class:`sklearn.neighbors.KNeighborsClassifier`) is reduced to the
    probability of class 1 of each label. Without ``predict_proba``,
    ``decision_function`` is used. Scores are only computed when a ranking
    metric is requested, and ``predict`` only when a bipartition metric is.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.neighbors import KNeighborsClassifier
    >>> rng = np.random.RandomState(0)
    >>> X = rng.rand(60, 3)
    >>> Y = (X[:, :2] > 0.5).astype(int)
    >>> res = cross_validate(KNeighborsClassifier(3), X, Y, cv=3,
    ...                      metrics=["hamming_loss", "ranking_loss"], random_state=0)
    >>> res.per_fold["hamming_loss"].shape
    (3,)
    >>> sorted(res.mean)
    ['hamming_loss', 'ranking_loss']
    """
    results = evaluate_models(
        {"estimator": estimator}, X, Y, cv=cv, metrics=metrics, share_neighbors=False,
        random_state=random_state, n_jobs=n_jobs, return_predictions=return_predictions,
    )
    return results["estimator"]
