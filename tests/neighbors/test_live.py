"""The live models' kernel (``neighbors._live``) against its slow twins: every pair's reference
distance, sorted by (distance, row number) in a loop."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from mlneighbors.neighbors import ExactIndex, loo_kneighbors
from mlneighbors.neighbors._distance import Reference
from mlneighbors.neighbors._internal import entering_pairs, exact_lists, merge_lists


def _all_distances(X, metric):
    ref = Reference(X, metric)
    n = X.shape[0]
    rows = np.repeat(np.arange(n), n)
    cols = np.tile(np.arange(n), n)
    return ref.pair_distances(ref.prepare(X), rows, cols, 1 << 24).reshape(n, n)


def _twin_lists(X, queries, depth, metric):
    D = _all_distances(X, metric)
    dist, idx = [], []
    for q in queries:
        order = sorted((D[q, j], j) for j in range(X.shape[0]) if j != q)[:depth]
        dist.append([d for d, _ in order])
        idx.append([j for _, j in order])
    return np.array(dist), np.array(idx)


def _data(kind, n=70, d=5, seed=0):
    rng = np.random.default_rng(seed)
    if kind == "ties":  # a small grid: duplicated rows and ties at every place
        return rng.integers(0, 3, (n, d)).astype(np.float64)
    if kind == "sparse":
        return sp.random(n, 40, density=0.15, format="csr", random_state=seed, data_rvs=lambda m: rng.integers(1, 4, m))
    if kind == "float32":
        return rng.standard_normal((n, d)).astype(np.float32)
    if kind == "scaled":  # norms from 1e-3 to 1e4: the error bound is per pair
        return rng.standard_normal((n, d)) * np.logspace(-3, 4, n)[:, None]
    return rng.standard_normal((n, d))


KINDS = ["dense", "ties", "sparse", "float32", "scaled"]


@pytest.mark.parametrize("metric", ["euclidean", "cosine"])
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("working_memory", [None, 1e-3])
def test_exact_lists_equal_the_twin_and_the_exact_engine(kind, metric, working_memory):
    X = _data(kind)
    queries = np.array([0, 5, 17, 69, 33])
    depth = 9
    dist, idx = exact_lists(X, queries, depth, metric, working_memory=working_memory)
    t_dist, t_idx = _twin_lists(X, queries, depth, metric)
    np.testing.assert_array_equal(idx, t_idx)
    np.testing.assert_array_equal(dist, t_dist)
    e_dist, e_idx = loo_kneighbors(ExactIndex(metric=metric).build(X), X, depth, rows=queries)
    np.testing.assert_array_equal(idx, e_idx)
    np.testing.assert_array_equal(dist, e_dist)


@pytest.mark.parametrize("n_new", [20, 40])  # float64 products for a few new rows, float32 for more
@pytest.mark.parametrize("metric", ["euclidean", "cosine"])
@pytest.mark.parametrize("kind", KINDS)
def test_entering_pairs_equal_the_twin(kind, metric, n_new):
    X = _data(kind, n=60 + n_new)
    old, new = X[:60], X[60:]
    D = _all_distances(X, metric)[:60, 60:]
    # radii that are distances of the data themselves: ties at the radius must stay out
    rng = np.random.default_rng(3)
    radii = D[np.arange(60), rng.integers(0, n_new, 60)]
    radii[::7] = np.inf
    r, c, d = entering_pairs(old, radii, new, metric, working_memory=1e-3)
    got = sorted(zip(r.tolist(), c.tolist(), d.tolist(), strict=True))
    want = sorted((i, j, D[i, j]) for i in range(60) for j in range(n_new) if D[i, j] < radii[i])
    assert got == want
    assert len(want) > 0


def test_merge_lists_equals_a_loop():
    rng = np.random.default_rng(0)
    n, width = 30, 6
    dist = np.sort(rng.integers(0, 5, (n, width)).astype(float), axis=1)
    idx = np.argsort(rng.random((n, 200)), axis=1)[:, :width]
    idx = np.take_along_axis(idx, np.lexsort((idx, dist), axis=1), axis=1)
    lengths = rng.integers(1, width + 1, n)
    for i in range(n):
        idx[i, lengths[i]:] = -1
        dist[i, lengths[i]:] = np.inf
    rows = np.concatenate([rng.integers(0, n, 50), np.zeros(15, dtype=int)])  # row 0: more than its width
    cols = 200 + np.arange(65)
    cand = rng.integers(0, 5, 65).astype(float)
    got_d, got_i = merge_lists(dist, idx, lengths, rows, cols, cand)
    for i in range(n):
        entries = [(dist[i, j], idx[i, j]) for j in range(lengths[i])]
        entries += [(cand[t], cols[t]) for t in range(65) if rows[t] == i]
        entries = sorted(entries)[: lengths[i]]
        assert got_i[i, : lengths[i]].tolist() == [j for _, j in entries]
        assert got_d[i, : lengths[i]].tolist() == [d for d, _ in entries]
        assert (got_i[i, lengths[i]:] == -1).all()
