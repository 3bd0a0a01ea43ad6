"""Invariants every model keeps, as one table: which model keeps which invariant, and why not.

The models are the classifiers of the package's registry (``tests/registry.py``); a model is held
to every invariant bit for bit unless ``RTOL`` gives its scores a tolerance or ``EXEMPT`` says,
for an invariant it does not keep, why.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone

from mlneighbors import BRkNN, DMLkNN, LAMLkNN, LPkNN, MLkNN
from mlneighbors._registry import examples

from ..registry import classifiers
from .conftest import corner_data, to_format

pytestmark = pytest.mark.filterwarnings("ignore:.*no positive training example:UserWarning")

_SCORES_ARE_NOT_OVR = "its 1-D scores are the similarity masses; its multi-label scores a map of the margin"
_NO_OTHER_LABELS = "its label model predicts a label from the other labels: with one label the score is its frequency"
_PCA_SUMS = "the PCA's sums depend on the row order at the level of rounding, which can move a window"
_BKNN = {
    "one_label": "with one label f = (s - sbar) / sbar is 0 for every row: BKNN compares labels",
    "one_vs_rest": _SCORES_ARE_NOT_OVR,
}

#: registry example id -> relative tolerance of its score comparisons (absent: 0, bit for bit)
RTOL = {"bknn": 1e-12, "bknn-cosine-per-label": 1e-12, "hybrid": 1e-9, "hybrid-exact": 1e-9,
        # an iterative solver (lbfgs): the order of rows and columns moves its sums at rounding level
        "iblr-ml": 1e-6, "iblr-ml-plus": 1e-6}
#: registry example id -> {invariant it does not keep: why}
EXEMPT = {
    "bknn": _BKNN,
    "bknn-cosine-per-label": _BKNN,
    "hybrid": {"row_order": _PCA_SUMS, "one_label": _NO_OTHER_LABELS},
    "hybrid-exact": {"one_label": _NO_OTHER_LABELS},
}


def cases(invariant):
    """The (model, rtol) of every model that keeps ``invariant``; the others skipped with the reason."""
    out = []
    for param in classifiers():
        (model,), name = param.values, param.id
        exempt = EXEMPT.get(name, {})
        marks = [pytest.mark.skip(reason=exempt[invariant])] if invariant in exempt else []
        out.append(pytest.param(model, RTOL.get(name, 0.0), id=name, marks=marks))
    return out


def test_the_tables_name_only_registered_models():
    names = {name for name, _ in examples()}
    assert set(RTOL) <= names and set(EXEMPT) <= names


def assert_scores(got, want, rtol):
    if rtol == 0.0:
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-13)


def fresh(model):
    return clone(model)


def tie_free_order(scores, predictions):
    """Rows whose prediction cannot depend on the label order (no tie at the decision)."""
    ordered = np.sort(scores, axis=1)[:, ::-1]
    m = predictions.sum(axis=1)
    rows = np.arange(len(scores))
    at = ordered[rows, np.clip(m - 1, 0, None)]
    after = ordered[rows, np.clip(m, None, scores.shape[1] - 1)]
    return (m == 0) | (m == scores.shape[1]) | (at != after)


@pytest.mark.parametrize("model, rtol", cases("label_order"))
def test_permuting_label_columns_permutes_outputs(model, rtol, fmt):
    X, Y, Q = corner_data(np.random.default_rng(5), "empty", n_labels=7, n_test=150)
    X, Q = to_format(X, fmt), to_format(Q, fmt)
    perm = np.random.default_rng(1).permutation(Y.shape[1])
    base = fresh(model).fit(X, Y)
    scores, predictions = base.predict_proba(Q), base.predict(Q)
    permuted = fresh(model).fit(X, Y[:, perm])
    assert_scores(permuted.predict_proba(Q), scores[:, perm], rtol)
    got = permuted.predict(Q)
    if getattr(model, "extension", None) in ("a", "b"):
        # the rules break confidence ties by label index: compare where no tie decides
        rows = tie_free_order(scores, predictions)
        assert rows.sum() >= 20
        np.testing.assert_array_equal(got[rows], predictions[rows][:, perm])
    else:
        np.testing.assert_array_equal(got, predictions[:, perm])


@pytest.mark.parametrize("model, rtol", cases("row_order"))
def test_shuffling_training_rows_changes_nothing_without_distance_ties(model, rtol, rng):
    X = rng.normal(size=(60, 4))  # continuous: no distance ties
    Y = (rng.random((60, 5)) < 0.35).astype(int)
    Q = rng.normal(size=(30, 4))
    order = rng.permutation(60)
    if isinstance(model, LAMLkNN):
        model = clone(model).set_params(n_clusters=1)  # k-means itself depends on the row order
    first = fresh(model).fit(X, Y)
    scores, predictions = first.predict_proba(Q), first.predict(Q)
    second = fresh(model).fit(X[order], Y[order])
    assert_scores(second.predict_proba(Q), scores, rtol)
    np.testing.assert_array_equal(second.predict(Q), predictions)


ALL_K = [
    MLkNN,
    BRkNN,
    lambda k: BRkNN(k, extension="a"),
    lambda k: BRkNN(k, extension="b"),
    LPkNN,
    DMLkNN,
    lambda k: DMLkNN(k, delta=0),
    lambda k: LAMLkNN(k, n_clusters=3, random_state=0),
]


@pytest.mark.parametrize("make", ALL_K)
@pytest.mark.parametrize("smoothing", [1.0, 0.0])
def test_no_nan_with_empty_and_full_labels_and_largest_k(make, smoothing, rng):
    n = 25
    X = rng.integers(0, 3, size=(n, 3)).astype(float)
    Y = (rng.random((n, 5)) < 0.4).astype(int)
    Y[:, 0] = 0  # nobody
    Y[:, 1] = 1  # everybody
    Q = np.vstack([X[:5], rng.integers(0, 3, size=(10, 3))])
    for k in (1, n - 1):
        model = make(k)
        if "smoothing" in model.get_params():
            model.set_params(smoothing=smoothing)
        model.fit(X, Y)
        proba, predicted = model.predict_proba(Q), model.predict(Q)
        assert np.isfinite(proba).all()
        assert ((proba >= 0) & (proba <= 1)).all()
        if smoothing > 0:
            assert ((proba > 0) & (proba < 1)).all()
        assert set(np.unique(predicted)) <= {0, 1}
        if not isinstance(model, BRkNN) or model.extension != "b":
            assert (predicted[:, 0] == 0).all() or isinstance(model, DMLkNN) and smoothing == 0
        assert (predicted[:, 1] == 1).all()


@pytest.mark.parametrize("model, rtol", cases("one_label"))
def test_single_label_column_is_a_one_label_problem(model, rtol, rng):
    X = rng.normal(size=(80, 2))
    y = (X[:, 0] > 0).astype(int)[:, None]
    model = fresh(model).fit(X, y)
    assert model.n_labels_ == 1
    assert len(model.classes_) == 1 and model.classes_[0].tolist() == [0, 1]
    assert model.predict(X).shape == (80, 1)
    assert model.predict_proba(X).shape == (80, 1)
    assert (model.predict(X) == y).mean() > 0.7


@pytest.mark.parametrize("model, rtol", cases("one_vs_rest"))
@pytest.mark.parametrize("classes", [["no", "yes"], ["a", "b", "c"], [3, 7, 11, 20]])
def test_one_d_target_works_like_one_vs_rest(model, rtol, classes, rng):
    centres = rng.normal(scale=4.0, size=(len(classes), 2))
    which = rng.integers(0, len(classes), size=90)
    which[: len(classes)] = np.arange(len(classes))
    X = centres[which] + rng.normal(size=(90, 2))
    y = np.array(classes, dtype=object if isinstance(classes[0], str) else None)[which]
    model = fresh(model).fit(X, y)
    np.testing.assert_array_equal(model.classes_, sorted(classes))
    assert model.n_labels_ == len(classes)
    predicted = model.predict(X)
    proba = model.predict_proba(X)
    assert predicted.shape == (90,) and proba.shape == (90, len(classes))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_array_equal(predicted, model.classes_[np.argmax(proba, axis=1)])
    assert (predicted == y).mean() > 0.7
    # the same model on the binarised indicator gives the same per-class scores (renormalised)
    indicator = (y[:, None] == model.classes_[None, :]).astype(int)
    multi = fresh(model).fit(X, indicator)
    raw = multi.predict_proba(X)
    np.testing.assert_allclose(proba, raw / raw.sum(axis=1, keepdims=True), rtol=max(rtol, 1e-12))


@pytest.mark.parametrize("model, rtol", cases("sparse_input"))
def test_sparse_and_dense_give_the_same_model(model, rtol, rng):
    X, Y, Q = corner_data(rng, "empty")
    dense = fresh(model).fit(X, Y)
    sparse = fresh(model).fit(sp.csr_matrix(X), sp.csr_matrix(Y))
    assert_scores(sparse.predict_proba(sp.csr_matrix(Q)), dense.predict_proba(Q), max(rtol, 1e-12) if rtol else 0.0)
    np.testing.assert_array_equal(dense.predict(Q), sparse.predict(Q))


def test_predict_keeps_the_dtype_of_y(rng):
    X = rng.normal(size=(30, 2))
    Y = rng.random((30, 3)) < 0.5
    assert MLkNN(3).fit(X, Y).predict(X).dtype == bool
    assert MLkNN(3).fit(X, Y.astype(np.float32)).predict(X).dtype == np.float32
    assert MLkNN(3).fit(X, Y.astype(int)).predict(X).dtype == int
