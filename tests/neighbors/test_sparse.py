"""Sparse CSR input: the same neighbours as dense, with every strategy."""

import numpy as np
import pytest
import scipy.sparse as sp

from mlneighbors.neighbors import ExactIndex, loo_kneighbors

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


# ---------------------------------------------------------------- dense rows that are mostly zeros
# (text stored dense, as slashdot's and corel16k001's ARFF files are: 8 words a row of 500-1,079):
# the proxy from scipy's product of their stored values, the distances from the dense rows


@pytest.mark.parametrize("metric", ["euclidean", "cosine"])
@pytest.mark.parametrize("integer", [False, True])
@pytest.mark.parametrize("n_jobs", [1, 2])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_dense_rows_of_mostly_zeros_equal_the_twin(rng, metric, integer, n_jobs, dtype):
    X = sparse_data(rng, 240, 400, 0.01, integer=integer)
    X[rng.choice(240, 20)] = -X[rng.choice(240, 20)]  # sign flips: more exact ties
    X = X.astype(dtype).astype(np.float64)  # the values the float32 input holds
    Q = np.vstack([X[:20], np.zeros((1, 400)), sparse_data(rng, 30, 400, 0.01, integer=integer)])
    Q = Q.astype(dtype).astype(np.float64)  # (a float32 index reads its queries in float32)
    # a small working memory: many blocks of queries
    index = ExactIndex(metric=metric, n_jobs=n_jobs, working_memory=0.05).build(X.astype(dtype))
    assert index.strategy_ == "sparse"
    for k in (1, 10, 240):
        ref_dist, ref_idx = twin_kneighbors(X, Q, k, metric)
        for Qin in (Q.astype(dtype), sp.csr_matrix(Q)):
            dist, idx = index.query(Qin, k)
            np.testing.assert_array_equal(idx, ref_idx)
            np.testing.assert_array_equal(dist, ref_dist)
        dist, idx = loo_kneighbors(index, X.astype(dtype), k - 1 or 1)
        ref_dist, ref_idx = twin_kneighbors(X, X, k - 1 or 1, metric, exclude=np.arange(len(X)))
        np.testing.assert_array_equal(idx, ref_idx)
        np.testing.assert_array_equal(dist, ref_dist)


def test_the_strategy_of_dense_rows(rng):
    X = sparse_data(rng, 240, 400, 0.01, integer=False)
    assert ExactIndex(n_jobs=2).build(X).strategy_ == "sparse"  # by the cost model
    assert ExactIndex(n_jobs=2, sparse_strategy="densify").build(X).strategy_ == "dense"
    # many values that are not zero: the GEMM by the cost model, the sparse product when asked
    full = rng.standard_normal((240, 40))
    assert ExactIndex(n_jobs=2).build(full).strategy_ == "dense"
    assert ExactIndex(n_jobs=2, sparse_strategy="sparse").build(full).strategy_ == "sparse"
    # rows far from the origin (one column of 1,000s): the GEMM sees them shifted, never zeros
    far = X.copy()
    far[:, 0] = 1000.0 + rng.random(240)
    index = ExactIndex(sparse_strategy="sparse").build(far)
    assert index._model.center is not None and index.strategy_ == "dense"


@pytest.mark.parametrize("shape", [(0, 5), (7, 1), (1, 9), (300, 37), (64, 0)])
def test_stored_rows_equal_scipy(rng, shape):
    from mlneighbors.neighbors._exact import _stored

    A = np.where(rng.random(shape) < 0.2, rng.standard_normal(shape), 0.0)
    if A.size:
        A.flat[0] = -0.0  # a zero, whatever its sign
    for part in (A, A.astype(np.float32), A[:, ::-1]):  # a view that is not contiguous too
        got, want = _stored(part), sp.csr_matrix(part)
        assert got.shape == want.shape and got.dtype == want.dtype and got.has_canonical_format
        np.testing.assert_array_equal(got.indptr, want.indptr)
        np.testing.assert_array_equal(got.indices, want.indices)
        np.testing.assert_array_equal(got.data, want.data)


@pytest.mark.parametrize("step", [1, 7, 1000])
def test_column_counts_equal_count_nonzero(rng, step):
    from mlneighbors.neighbors._proxy import column_nonzeros
    from mlneighbors.neighbors._threads import row_shares

    X = np.where(rng.random((50, 13)) < 0.3, rng.standard_normal((50, 13)), 0.0)
    X[:, 4] = 0.0
    want = np.count_nonzero(X, axis=0)
    for rows in (None, row_shares(50, 3)):
        np.testing.assert_array_equal(column_nonzeros(X, step, rows), want)
    np.testing.assert_array_equal(column_nonzeros(sp.csr_matrix(X), step), want)


@pytest.mark.parametrize("case", ["binary", "continuous", "far"])
def test_the_proxy_model_from_stored_values_is_the_dense_rows_model(rng, case):
    # the build of dense rows that are mostly zeros hands the model their CSR form: the same
    # constants as from the dense rows (the norms to rounding: summed over the stored values)
    from mlneighbors.neighbors._distance import Reference
    from mlneighbors.neighbors._proxy import ProxyModel

    X = sparse_data(rng, 200, 300, 0.02, integer=case == "binary")
    if case == "far":
        X[:, 7] = 1000.0 + rng.random(200)  # far from the origin: the model shifts the dense rows
    ref = Reference(X, "euclidean")
    dense = ProxyModel(X, ref, "float32", shift=True)
    stored = ProxyModel(X, ref, "float32", shift=True, stored=sp.csr_matrix(X))
    assert (dense.center is None) == (case != "far") and (stored.center is None) == (dense.center is None)
    if dense.center is not None:
        np.testing.assert_array_equal(stored.center, dense.center)
        np.testing.assert_array_equal(stored.row_sq, dense.row_sq)  # from the dense rows, shifted
    np.testing.assert_allclose(stored.row_sq, dense.row_sq, rtol=1e-15)
    assert (stored.integral, stored.scale, stored.extra, stored.dtype) == (dense.integral, dense.scale, dense.extra,
                                                                         dense.dtype)
    assert stored.max_norm == pytest.approx(dense.max_norm, rel=1e-15)
    if dense.row_nnz is None:
        assert stored.row_nnz is None
    else:
        np.testing.assert_array_equal(stored.row_nnz, dense.row_nnz)
