"""Invariants every model keeps: label permutation, training-row order, no NaN, 1-D targets."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from mlneighbors import BRkNN, DMLkNN, LAMLkNN, LPkNN, MLkNN

from .conftest import tie_data, to_format

pytestmark = pytest.mark.filterwarnings("ignore:.*no positive training example:UserWarning")


def all_models(k=5):
    return [
        MLkNN(k),
        BRkNN(k),
        BRkNN(k, extension="a"),
        BRkNN(k, extension="b"),
        LPkNN(k),
        DMLkNN(k, delta=2),
        LAMLkNN(k, n_clusters=3, random_state=0),
    ]


def ids(models):
    return [repr(m) for m in models]


MODELS = all_models()


def tie_free_order(scores, predictions):
    """Rows whose prediction cannot depend on the label order (no tie at the decision)."""
    ordered = np.sort(scores, axis=1)[:, ::-1]
    m = predictions.sum(axis=1)
    rows = np.arange(len(scores))
    at = ordered[rows, np.clip(m - 1, 0, None)]
    after = ordered[rows, np.clip(m, None, scores.shape[1] - 1)]
    return (m == 0) | (m == scores.shape[1]) | (at != after)


@pytest.mark.parametrize("model", MODELS, ids=ids(MODELS))
def test_permuting_label_columns_permutes_outputs(model, fmt):
    X, Y, Q = tie_data(np.random.default_rng(5), "empty", n_labels=7, n_test=150)
    X, Q = to_format(X, fmt), to_format(Q, fmt)
    perm = np.random.default_rng(1).permutation(Y.shape[1])
    base = model.fit(X, Y)
    scores, predictions = base.predict_proba(Q), base.predict(Q)
    permuted = type(model)(**model.get_params()).fit(X, Y[:, perm])
    np.testing.assert_array_equal(permuted.predict_proba(Q), scores[:, perm])
    got = permuted.predict(Q)
    if getattr(model, "extension", None) in ("a", "b"):
        # the rules break confidence ties by label index: compare where no tie decides
        rows = tie_free_order(scores, predictions)
        assert rows.sum() >= 20
        np.testing.assert_array_equal(got[rows], predictions[rows][:, perm])
    else:
        np.testing.assert_array_equal(got, predictions[:, perm])


@pytest.mark.parametrize("model", MODELS, ids=ids(MODELS))
def test_shuffling_training_rows_changes_nothing_without_distance_ties(model, rng):
    X = rng.normal(size=(60, 4))  # continuous: no distance ties
    Y = (rng.random((60, 5)) < 0.35).astype(int)
    Q = rng.normal(size=(30, 4))
    order = rng.permutation(60)
    if isinstance(model, LAMLkNN):
        model = LAMLkNN(5, n_clusters=1)  # k-means itself depends on the row order
    first = model.fit(X, Y)
    scores, predictions = first.predict_proba(Q), first.predict(Q)
    second = type(model)(**model.get_params()).fit(X[order], Y[order])
    np.testing.assert_array_equal(second.predict_proba(Q), scores)
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


@pytest.mark.parametrize("model", MODELS, ids=ids(MODELS))
def test_single_label_column_is_a_one_label_problem(model, rng):
    X = rng.normal(size=(80, 2))
    y = (X[:, 0] > 0).astype(int)[:, None]
    model.fit(X, y)
    assert model.n_labels_ == 1
    assert len(model.classes_) == 1 and model.classes_[0].tolist() == [0, 1]
    assert model.predict(X).shape == (80, 1)
    assert model.predict_proba(X).shape == (80, 1)
    assert (model.predict(X) == y).mean() > 0.7


@pytest.mark.parametrize("model", MODELS, ids=ids(MODELS))
@pytest.mark.parametrize("classes", [["no", "yes"], ["a", "b", "c"], [3, 7, 11, 20]])
def test_one_d_target_works_like_one_vs_rest(model, classes, rng):
    centres = rng.normal(scale=4.0, size=(len(classes), 2))
    which = rng.integers(0, len(classes), size=90)
    which[: len(classes)] = np.arange(len(classes))
    X = centres[which] + rng.normal(size=(90, 2))
    y = np.array(classes, dtype=object if isinstance(classes[0], str) else None)[which]
    model.fit(X, y)
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
    multi = type(model)(**model.get_params()).fit(X, indicator)
    raw = multi.predict_proba(X)
    np.testing.assert_allclose(proba, raw / raw.sum(axis=1, keepdims=True), rtol=1e-12)


def test_sparse_and_dense_give_the_same_model(rng):
    X, Y, Q = tie_data(rng, "empty")
    for model in all_models(4):
        dense = type(model)(**model.get_params()).fit(X, Y)
        sparse = type(model)(**model.get_params()).fit(sp.csr_matrix(X), sp.csr_matrix(Y))
        np.testing.assert_array_equal(dense.predict_proba(Q), sparse.predict_proba(sp.csr_matrix(Q)))
        np.testing.assert_array_equal(dense.predict(Q), sparse.predict(Q))


def test_predict_keeps_the_dtype_of_y(rng):
    X = rng.normal(size=(30, 2))
    Y = rng.random((30, 3)) < 0.5
    assert MLkNN(3).fit(X, Y).predict(X).dtype == bool
    assert MLkNN(3).fit(X, Y.astype(np.float32)).predict(X).dtype == np.float32
    assert MLkNN(3).fit(X, Y.astype(int)).predict(X).dtype == int
