"""The working-memory budget: blocks, not the whole distance matrix."""

import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp

from mlneighbors.neighbors import ExactIndex

MiB = 2**20


def traced_peak(fn):
    """Peak memory (bytes) allocated while ``fn`` runs, above what was allocated before."""
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        result = fn()
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    return result, peak


@pytest.mark.parametrize("metric", ["euclidean", "cosine"])
def test_dense_query_stays_within_budget(rng, metric):
    X = rng.standard_normal((20000, 8))
    Q = np.vstack([X[:700], rng.standard_normal((800, 8))])
    index = ExactIndex(metric=metric, working_memory=2, n_jobs=2).build(X)
    (dist, idx), peak = traced_peak(lambda: index.query(Q, 5))
    # the whole float32 distance matrix would be 1500 x 20000 x 4 bytes = 114 MiB
    assert peak <= 2 * MiB + dist.nbytes + idx.nbytes + 64 * 1024


def test_sparse_index_is_not_densified_beyond_budget(rng):
    X = sp.random(20000, 3000, density=0.002, format="csr", random_state=rng, dtype=np.float64)
    Q = X[:300]
    # a dense float32 copy would take 20000 x 3001 x 4 bytes = 229 MiB
    index, build_peak = traced_peak(lambda: ExactIndex(working_memory=4, n_jobs=2).build(X))
    assert build_peak <= 4 * X.data.nbytes + 4 * MiB
    (dist, idx), peak = traced_peak(lambda: index.query(Q, 5))
    assert peak <= 4 * MiB + dist.nbytes + idx.nbytes + 64 * 1024
    np.testing.assert_array_equal(idx[:, 0], np.arange(300))


@pytest.mark.parametrize("metric", ["euclidean", "cosine"])
def test_symmetric_leave_one_out_stays_within_budget(rng, metric):
    # the products kept for later blocks, the block of proxy rows and the selection together
    from mlneighbors.neighbors import loo_kneighbors

    X = rng.standard_normal((3000, 8))
    index = ExactIndex(metric=metric, working_memory=32, n_jobs=2).build(X)
    assert index.loo_query_rows(X, None, 2) is not None  # the symmetric path
    (dist, idx), peak = traced_peak(lambda: loo_kneighbors(index, X, 5))
    # the whole float32 product matrix would be 3000 x 3000 x 4 bytes = 34 MiB
    assert peak <= 32 * MiB + 3 * (dist.nbytes + idx.nbytes)
    assert ExactIndex(metric=metric, working_memory=8).build(X).loo_query_rows(X, None, 2) is None


def test_tiled_query_stays_within_budget(rng):
    # 40,000 indexed rows: the search runs in tiles of the indexed rows
    X = rng.standard_normal((40000, 4))
    Q = np.vstack([X[:300], rng.standard_normal((300, 4))])
    index = ExactIndex(working_memory=2, n_jobs=2).build(X)
    (dist, idx), peak = traced_peak(lambda: index.query(Q, 5))
    assert peak <= 2 * MiB + dist.nbytes + idx.nbytes + 64 * 1024
    np.testing.assert_array_equal(idx[:300, 0], np.arange(300))
