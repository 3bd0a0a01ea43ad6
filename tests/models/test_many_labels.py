"""Many labels: the sparse label side equals the dense one, top-k equals the full sort, and a
fit with 10^5 labels stays within a memory budget."""

from __future__ import annotations

import tracemalloc
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone

from mlneighbors import BRkNN, LPkNN, MLkNN
from mlneighbors._base import CountTableModel

from ..registry import classifiers

pytestmark = pytest.mark.filterwarnings("ignore:.*no positive training example:UserWarning")

#: the registry's count models (a score is a look-up at the label's neighbour count: sparse
#: output and top-k without the score rows), and ML-kNN without smoothing (scores of 0 and 1)
COUNT_MODELS = classifiers(lambda m: isinstance(m, CountTableModel)) + [
    pytest.param(MLkNN(4, smoothing=0.0), id="mlknn-unsmoothed")]
#: the registry's other classifiers
OTHER_MODELS = classifiers(lambda m: not isinstance(m, CountTableModel))


def _fresh(model):
    return clone(model)


def _labels(rng, n=90, L=40):
    """Sparse label sets with the corner cases: a label nobody has, one everybody has,
    rows with no label, and a Zipf-like spread of frequencies."""
    p = 0.5 / np.arange(1, L + 1) ** 0.8
    Y = (rng.random((n, L)) < p).astype(np.int8)
    Y[:, 3] = 0  # nobody
    Y[:, 5] = 1  # everybody
    Y[[0, 7, 11]] = 0  # rows with no label
    return Y


@pytest.fixture
def problem(rng):
    X = rng.normal(size=(90, 4))
    Q = rng.normal(size=(30, 4))
    return X, _labels(rng), Q


@pytest.mark.parametrize("model", COUNT_MODELS + OTHER_MODELS)
def test_a_sparse_y_gives_the_dense_results(model, problem):
    X, Y, Q = problem
    dense = _fresh(model).fit(X, Y)
    sparse = _fresh(model).fit(X, sp.csr_matrix(Y))
    np.testing.assert_array_equal(sparse.predict(Q), dense.predict(Q))
    np.testing.assert_allclose(sparse.predict_proba(Q), dense.predict_proba(Q), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("model", COUNT_MODELS)
@pytest.mark.parametrize("labels_format", ["dense", "csr"])
def test_sparse_predictions_are_the_dense_ones(model, labels_format, problem):
    X, Y, Q = problem
    fitted = _fresh(model).fit(X, Y if labels_format == "dense" else sp.csr_matrix(Y))
    got = fitted.predict(Q, sparse_output=True)
    assert sp.issparse(got) and got.format == "csr"
    np.testing.assert_array_equal(got.toarray(), fitted.predict(Q))


def _full_sort(scores, k):
    order = np.argsort(-scores, axis=1, kind="stable")[:, :k]
    return np.take_along_axis(scores, order, axis=1), order


@pytest.mark.parametrize("model", COUNT_MODELS + OTHER_MODELS)
@pytest.mark.parametrize("k", [1, 3, 40])
def test_top_k_equals_the_full_sort_ties_included(model, k, problem):
    X, Y, Q = problem
    fitted = _fresh(model).fit(X, sp.csr_matrix(Y))
    scores, labels = fitted.predict_top_k(Q, k)
    want_scores, want_labels = _full_sort(fitted.predict_proba(Q), k)
    np.testing.assert_array_equal(labels, want_labels)
    np.testing.assert_array_equal(scores, want_scores)


def test_top_k_refuses_a_bad_k(problem):
    X, Y, Q = problem
    model = MLkNN(3).fit(X, Y)
    for bad in (0, Y.shape[1] + 1, 2.5):
        with pytest.raises(ValueError, match=r"k must be an integer in \[1, 40\]"):
            model.predict_top_k(Q, bad)


def test_the_count_tables_of_a_sparse_y_are_the_dense_ones(rng):
    from mlneighbors._counts import count_matrix, count_tables

    Y = _labels(rng, n=70, L=25)
    neighbors = np.argsort(rng.random((70, 70)), axis=1)[:, :6]
    groups = rng.integers(0, 3, size=70)
    for g, G in ((None, 1), (groups, 3)):
        dense = count_tables(count_matrix(neighbors, Y), Y, 6, groups=g, n_groups=G)
        sparse = count_tables(count_matrix(neighbors, sp.csr_matrix(Y)), sp.csr_matrix(Y), 6, groups=g, n_groups=G)
        np.testing.assert_array_equal(sparse[0], dense[0])
        np.testing.assert_array_equal(sparse[1], dense[1])


@pytest.mark.parametrize("name", ["enron", "bibtex", "corel5k"])
def test_shared_sets_give_the_same_results_with_a_sparse_y(shared_data, name):
    from mlneighbors.datasets import load_dataset

    train, test = load_dataset(name, "train"), load_dataset(name, "test")
    Y = np.asarray(train.Y)
    Q = test.X[:300]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for model in (MLkNN(10), BRkNN(10, extension="b"), LPkNN(10)):
            dense = _fresh(model).fit(train.X, Y)
            sparse = _fresh(model).fit(train.X, sp.csr_matrix(Y))
            np.testing.assert_array_equal(sparse.predict(Q), dense.predict(Q))
            np.testing.assert_allclose(sparse.predict_proba(Q), dense.predict_proba(Q), rtol=1e-12)


def test_a_hundred_thousand_labels_fit_in_a_bounded_memory(rng):
    """n = 2000 rows, L = 10^5 labels, 5 labels a row: a dense label side would hold
    n x L = 2e8 counts (1.6 GB as int64); the sparse one holds what Y holds."""
    n, L, per_row = 2000, 100_000, 5
    labels = rng.integers(0, L, size=(n, per_row))
    Y = sp.csr_matrix((np.ones(n * per_row, dtype=np.int8), (np.repeat(np.arange(n), per_row), labels.ravel())),
                      shape=(n, L))
    Y.data[:] = 1
    X = rng.normal(size=(n, 8))
    Q = rng.normal(size=(50, 8))
    tracemalloc.start()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = MLkNN(10).fit(X, Y)
        scores, top = model.predict_top_k(Q, 5)
        predicted = model.predict(Q, sparse_output=True)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    # the count and likelihood tables are L x (k + 1) float64 (four of them: 35 MB) plus the
    # score and decision tables; no (n, L) array
    assert peak < 200 * 2**20, peak
    assert top.shape == (50, 5) and predicted.shape == (50, L)
