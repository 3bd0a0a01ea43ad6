"""The array kernels of ``_counts`` against loops, including tiny memory budgets (many blocks)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from mlneighbors._counts import count_tables, distinct_rows, dml_votes, membership_counts, row_blocks


def test_row_blocks_cover_every_row_once():
    blocks = row_blocks(10, 3, cells=7)
    assert [b.start for b in blocks] == [0, 2, 4, 6, 8]
    assert np.concatenate([np.arange(10)[b] for b in blocks]).tolist() == list(range(10))
    assert row_blocks(0, 5) == []


@pytest.mark.parametrize("sparse_y", [False, True])
@pytest.mark.parametrize("gather", [True, False], ids=["gather", "product"])
def test_membership_counts_and_tables_equal_loops(rng, monkeypatch, sparse_y, gather):
    import mlneighbors._counts as counts

    if not gather:  # the sparse product that large label sides take
        monkeypatch.setattr(counts, "_GATHER_CELLS", 0)
    n, L, k = 30, 7, 5
    Y = (rng.random((n, L)) < 0.3).astype(np.int8)
    neighbors = np.array([rng.choice(n, size=k, replace=False) for _ in range(n)])
    C = membership_counts(neighbors, sp.csr_matrix(Y) if sparse_y else Y)
    loop = [[sum(int(Y[a, l]) for a in neighbors[q]) for l in range(L)] for q in range(n)]
    assert C.dtype == np.int32
    np.testing.assert_array_equal(C, loop)
    c1, c0 = count_tables(C, Y, k)
    for l in range(L):
        for j in range(k + 1):
            assert c1[l, j] == sum(1 for i in range(n) if Y[i, l] == 1 and C[i, l] == j)
            assert c0[l, j] == sum(1 for i in range(n) if Y[i, l] == 0 and C[i, l] == j)


@pytest.mark.parametrize("delta", [0, 1, 2, 4, 5])
@pytest.mark.parametrize("cells", [1, 37, 1 << 22])
@pytest.mark.parametrize("method", ["auto", "dense", "sparse"])
def test_dml_votes_equal_loops(rng, delta, cells, method):
    n, m, L, k = 45, 33, 9, 5
    positive = rng.random((n, L)) < 0.4
    Ct = rng.integers(0, k + 1, size=(n, L))
    Ct[rng.random((n, L)) < 0.6] = 0  # mostly zeros, as with sparse label sets
    Ct[:, 0] = 0  # a label whose counts are all 0
    Cq = rng.integers(0, k + 1, size=(m, L))
    Cq[:3] = Ct[:3]  # queries with a training profile
    c1, c0 = count_tables(Ct, positive, k)
    V1, V0 = dml_votes(Cq, Ct.astype(np.int8), positive, c1, c0, delta, cells=cells, method=method)
    for q in range(m):
        A = [i for i in range(n) if all(abs(Ct[i, l] - Cq[q, l]) <= delta for l in range(L))]
        for l in range(L):
            assert V1[q, l] == sum(1 for i in A if Ct[i, l] == Cq[q, l] and positive[i, l])
            assert V0[q, l] == sum(1 for i in A if Ct[i, l] == Cq[q, l] and not positive[i, l])


def test_dml_votes_no_queries():
    c1 = np.zeros((2, 4), dtype=np.int64)
    V1, V0 = dml_votes(np.zeros((0, 2), dtype=np.int64), np.zeros((3, 2), np.int8), np.zeros((3, 2), bool), c1, c1, 1)
    assert V1.shape == V0.shape == (0, 2)


@pytest.mark.parametrize("n_cols", [1, 7, 8, 64, 65, 150])
def test_distinct_rows_equal_numpy_unique(rng, n_cols):
    Y = (rng.random((300, n_cols)) < 0.1).astype(np.int8)
    Y[::7] = Y[3]  # repeated sets
    Y[5] = 0
    sets, ids = distinct_rows(Y)
    ref_sets, ref_ids = np.unique(Y, axis=0, return_inverse=True)
    np.testing.assert_array_equal(sets, ref_sets)
    np.testing.assert_array_equal(ids, ref_ids.ravel())
    np.testing.assert_array_equal(sets[ids], Y)
    empty_sets, empty_ids = distinct_rows(Y[:0])
    assert empty_sets.shape == (0, n_cols) and empty_ids.shape == (0,)


def test_count_tables_per_group_equal_loops(rng):
    n, L, k, G = 40, 5, 4, 3
    C = rng.integers(0, k + 1, size=(n, L))
    Y = rng.random((n, L)) < 0.4
    groups = rng.integers(0, G, size=n)
    c1, c0 = count_tables(C, Y, k, groups=groups, n_groups=G)
    assert c1.shape == c0.shape == (G, L, k + 1)
    for g in range(G):
        for l in range(L):
            for j in range(k + 1):
                members = [i for i in range(n) if groups[i] == g and C[i, l] == j]
                assert c1[g, l, j] == sum(1 for i in members if Y[i, l])
                assert c0[g, l, j] == sum(1 for i in members if not Y[i, l])
    np.testing.assert_array_equal(c1.sum(axis=0), count_tables(C, Y, k)[0])
