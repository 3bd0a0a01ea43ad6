"""Sparse CSR input: the same neighbours as dense, with every strategy."""

import numpy as np
import pytest
import scipy.sparse as sp

from mlneighbors.neighbors import ExactIndex

from ._twins import distances_to, twin_kneighbors

STRATEGIES = ["auto", "densify", "sparse"]


def sparse_data(rng, n, d, density, *, integer):
    """Text-like rows: few non-zeros, duplicates, an empty row."""
    X = sp.random(n, d, density=density, format="csr", random_state=rng, dtype=np.float64)
    if integer:
        X.data[:] = 1.0
    else:
        X.data = rng.standard_normal(X.nnz)
    X = X.toarray()
    X[5] = 0.0
    X[rng.choice(n, 10)] = X[rng.choice(n, 10)]
    return X


def assert_same_up_to_roundoff(dist, idx, X, Q, metric, ref_dist, ref_idx, rtol=1e-12):
    """Equal distances up to a few ulps; indices equal except where distances tie to that level."""
    np.testing.assert_allclose(dist, ref_dist, rtol=rtol, atol=1e-14)
    Xd = X.toarray() if sp.issparse(X) else X
    Qd = Q.toarray() if sp.issparse(Q) else Q
    for i in np.flatnonzero((idx != ref_idx).any(axis=1)):
        if metric == "cosine":
            norms = np.sqrt((Xd * Xd).sum(1))
            norms[norms == 0] = 1
            qn = np.sqrt((Qd[i] * Qd[i]).sum()) or 1.0
            true = distances_to(Xd / norms[:, None], Qd[i] / qn, metric)
        else:
            true = distances_to(Xd, Qd[i], metric)
        np.testing.assert_allclose(true[idx[i]], ref_dist[i], rtol=rtol, atol=1e-14)


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("metric", ["euclidean", "manhattan"])
def test_binary_sparse_equals_twin_exactly(rng, strategy, metric):
    # binary text-like data: the float32 proxy is exact, every tie must follow the index rule
    X = sparse_data(rng, 203, 40, 0.1, integer=True)
    Q = np.vstack([X[:20], sparse_data(rng, 23, 40, 0.1, integer=True)])
    index = ExactIndex(metric=metric, sparse_strategy=strategy, working_memory=0.02).build(sp.csr_matrix(X))
    for k in (1, 10, 203):
        for Qin in (sp.csr_matrix(Q), Q):
            dist, idx = index.query(Qin, k)
            ref_dist, ref_idx = twin_kneighbors(X, Q, k, metric)
            np.testing.assert_array_equal(idx, ref_idx)
            np.testing.assert_array_equal(dist, ref_dist)


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("metric", ["euclidean", "cosine", "manhattan"])
@pytest.mark.parametrize("integer", [False, True])
def test_sparse_matches_dense(rng, strategy, metric, integer):
    X = sparse_data(rng, 150, 30, 0.15, integer=integer)
    Q = np.vstack([X[:15], np.zeros((1, 30)), sparse_data(rng, 20, 30, 0.15, integer=integer)])
    Xs = sp.csr_matrix(X)
    for k in (1, 7, 150):
        dense = ExactIndex(metric=metric).build(X).query(Q, k)
        for Qin in (sp.csr_matrix(Q), Q):
            dist, idx = ExactIndex(metric=metric, sparse_strategy=strategy).build(Xs).query(Qin, k)
            if integer and metric != "cosine":
                np.testing.assert_array_equal(idx, dense[1])
                np.testing.assert_array_equal(dist, dense[0])
            else:
                assert_same_up_to_roundoff(dist, idx, X, Q, metric, *dense)


def test_dense_index_sparse_queries(rng):
    X = sparse_data(rng, 80, 12, 0.3, integer=False)
    Q = sparse_data(rng, 9, 12, 0.3, integer=False)
    a = ExactIndex().build(X).query(sp.csr_matrix(Q), 5)
    b = ExactIndex().build(X).query(Q, 5)
    np.testing.assert_array_equal(a[1], b[1])
    np.testing.assert_array_equal(a[0], b[0])


def test_non_canonical_csr_and_other_formats(rng):
    X = sparse_data(rng, 60, 10, 0.3, integer=True)
    coo = sp.coo_matrix(X)
    # duplicate entries that sum to the original values, unsorted
    dup = sp.coo_matrix(
        (np.r_[coo.data / 2, coo.data / 2], (np.r_[coo.row, coo.row], np.r_[coo.col, coo.col])), shape=X.shape
    )
    ref = twin_kneighbors(X, X[:8], 6)
    for Xin in (dup.tocsr(), sp.csc_matrix(X), coo, sp.csr_array(X)):
        dist, idx = ExactIndex().build(Xin).query(X[:8], 6)
        np.testing.assert_array_equal(idx, ref[1])
        np.testing.assert_array_equal(dist, ref[0])


def test_cosine_zero_rows_are_at_distance_one(rng):
    X = sp.csr_matrix(np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 0.0], [0.0, 2.0]]))
    dist, idx = ExactIndex(metric="cosine").build(X).query(sp.csr_matrix([[0.0, 0.0], [3.0, 0.0]]), 4)
    np.testing.assert_array_equal(idx, [[0, 1, 2, 3], [1, 0, 2, 3]])
    np.testing.assert_array_equal(dist, [[1.0, 1.0, 1.0, 1.0], [0.0, 1.0, 1.0, 1.0]])
