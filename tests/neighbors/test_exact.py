"""The exact brute force against its loop twin (dense data)."""

import numpy as np
import pytest

from mlneighbors.neighbors import ExactIndex

from ._twins import distances_to, tricky_data, tricky_queries, twin_kneighbors

METRICS = ["euclidean", "cosine", "manhattan"]


@pytest.mark.parametrize("metric", METRICS)
@pytest.mark.parametrize("precision", ["float32", "float64"])
@pytest.mark.parametrize("integer", [False, True])
def test_agrees_with_loop_twin_bit_for_bit(rng, metric, precision, integer):
    # n and the number of queries are not multiples of the (tiny) block size
    X = tricky_data(rng, 157, 7, integer=integer)
    Q = tricky_queries(rng, X, 41)
    index = ExactIndex(metric=metric, precision=precision, working_memory=0.01, n_jobs=2).build(X)
    for k in (1, 6, 156, 157):
        dist, idx = index.query(Q, k)
        ref_dist, ref_idx = twin_kneighbors(X, Q, k, metric)
        np.testing.assert_array_equal(idx, ref_idx)
        np.testing.assert_array_equal(dist, ref_dist)
        assert dist.dtype == np.float64 and idx.dtype == np.intp


@pytest.mark.parametrize("metric", ["euclidean", "cosine"])
def test_near_ties_below_float32_resolution(rng, metric):
    # 300 points at (almost) the same distance from the query: float32 cannot order them,
    # the float64 re-ranking must, exactly as the twin does
    d = 5
    q = rng.standard_normal(d)
    u = rng.standard_normal((300, d))
    u /= np.linalg.norm(u, axis=1)[:, None]
    radius = 3.0 * (1 + 1e-11 * rng.standard_normal(300))
    X = np.vstack([q + radius[:, None] * u, q + 10 * u[:50]])
    if metric == "cosine":
        X = np.vstack([q * (1 + 1e-12 * rng.standard_normal((300, 1))) + 1e-9 * u, u[:50]])
    for k in (1, 10, 299):
        dist, idx = ExactIndex(metric=metric).build(X).query(q[None, :], k)
        ref_dist, ref_idx = twin_kneighbors(X, q[None, :], k, metric)
        np.testing.assert_array_equal(idx, ref_idx)
        np.testing.assert_array_equal(dist, ref_dist)


@pytest.mark.parametrize("metric", METRICS)
def test_result_for_k_is_prefix_of_larger_k(rng, metric):
    X = tricky_data(rng, 120, 4, integer=True)
    Q = tricky_queries(rng, X, 30)
    index = ExactIndex(metric=metric).build(X)
    dist30, idx30 = index.query(Q, 30)
    for k in range(1, 30):
        dist, idx = index.query(Q, k)
        np.testing.assert_array_equal(idx, idx30[:, :k])
        np.testing.assert_array_equal(dist, dist30[:, :k])


def test_ties_go_to_the_lower_index():
    X = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0], [0.0, -1.0], [1.0, 0.0], [5.0, 5.0]])
    dist, idx = ExactIndex().build(X).query(np.zeros((1, 2)), 5)
    np.testing.assert_array_equal(idx, [[0, 1, 2, 3, 4]])
    np.testing.assert_array_equal(dist, [[1.0] * 5])
    dist, idx = ExactIndex().build(X).query([[1.0, 0.0]], 3)
    np.testing.assert_array_equal(idx, [[0, 4, 1]])


def test_blocks_and_threads_do_not_change_the_result(rng, monkeypatch):
    # the thread pool even for this small search (small searches run in the calling thread)
    import mlneighbors.neighbors._exact as exact

    monkeypatch.setattr(exact, "_SMALL_WORK", 0)
    X = tricky_data(rng, 3001, 8)
    Q = tricky_queries(rng, X, 397)
    ref = twin_kneighbors(X, Q, 11)
    for wm, jobs in [(0.05, 2), (0.5, 1), (64, 2), (0.2, 3)]:
        got = ExactIndex(working_memory=wm, n_jobs=jobs).build(X).query(Q, 11)
        np.testing.assert_array_equal(got[1], ref[1])
        np.testing.assert_array_equal(got[0], ref[0])


def test_the_memory_a_search_keeps_serves_the_next_and_never_two_at_once(rng, monkeypatch):
    # a thread keeps its last search's proxy block for the next (no page faults for it again),
    # never one over _KEEP_BYTES; a search run by a progress listener during another (in the
    # same thread) gets memory of its own: both answers equal the twin's
    import mlneighbors
    import mlneighbors.neighbors._threads as threads

    X, Q = tricky_data(rng, 400, 6), tricky_data(rng, 90, 6)
    X2, Q2 = tricky_data(rng, 300, 5), tricky_data(rng, 70, 5)
    index, other = ExactIndex(n_jobs=1).build(X), ExactIndex(n_jobs=1).build(X2)
    index.query(Q, 5)
    first = threads._kept.__dict__.get(0)
    assert first is not None and first.nbytes >= 90 * 400 * 4
    index.query(Q, 5)
    assert threads._kept.__dict__.get(0) is first  # the same memory again
    inner: list = []

    def listener(event):  # a search inside the search (once: its own events come here too)
        if not event.closed and not inner:
            inner.append(None)
            inner[0] = other.query(Q2, 4)

    with mlneighbors.config_context(progress=listener):
        got = index.query(Q, 5)
    assert inner
    for result, twin in ((got, twin_kneighbors(X, Q, 5)), (inner[0], twin_kneighbors(X2, Q2, 4))):
        np.testing.assert_array_equal(result[1], twin[1])
        np.testing.assert_array_equal(result[0], twin[0])
    taken = threads.scratch(0, (10, 20), np.dtype(np.float32))  # out of the slot while in use
    again = threads.scratch(0, (10, 20), np.dtype(np.float32))
    assert np.shares_memory(taken, first) and not np.shares_memory(taken, again)
    threads.keep(0, taken)
    assert np.shares_memory(threads.scratch(0, (5, 8), np.dtype(np.float64)), first)
    monkeypatch.setattr(threads, "_KEEP_BYTES", 1000)  # larger blocks: given back at the end
    threads._kept.__dict__.clear()
    index.query(Q, 5)
    assert 0 not in threads._kept.__dict__


@pytest.mark.parametrize("scale", [1e-150, 1e-30, 1e30, 1e100])
def test_extreme_scales(rng, scale):
    X = tricky_data(rng, 80, 5)
    Q = tricky_queries(rng, X, 12) * scale
    X = X * scale
    for metric in METRICS:
        dist, idx = ExactIndex(metric=metric).build(X).query(Q, 7)
        ref_dist, ref_idx = twin_kneighbors(X, Q, 7, metric)
        np.testing.assert_array_equal(idx, ref_idx)
        np.testing.assert_array_equal(dist, ref_dist)


def test_queries_far_beyond_float32_range(rng):
    X = tricky_data(rng, 60, 4)
    Q = np.vstack([X[:3] * 1e45, rng.standard_normal((3, 4)) * 1e60, X[3:5]])
    dist, idx = ExactIndex().build(X).query(Q, 9)
    ref_dist, ref_idx = twin_kneighbors(X, Q, 9)
    np.testing.assert_array_equal(idx, ref_idx)
    np.testing.assert_array_equal(dist, ref_dist)


def test_outlier_norm_and_constant_data(rng):
    X = rng.standard_normal((90, 3))
    X[17] *= 1e6  # one huge row widens the float32 error bound for everyone
    Q = rng.standard_normal((10, 3))
    np.testing.assert_array_equal(ExactIndex().build(X).query(Q, 5)[1], twin_kneighbors(X, Q, 5)[1])
    Z = np.zeros((40, 3))  # every distance tied
    dist, idx = ExactIndex().build(Z).query(Q, 6)
    np.testing.assert_array_equal(idx, np.tile(np.arange(6), (10, 1)))
    np.testing.assert_array_equal(dist, np.repeat(np.linalg.norm(Q, axis=1)[:, None], 6, axis=1))


def test_single_row_and_single_feature():
    dist, idx = ExactIndex().build([[2.0]]).query([[5.0], [2.0]], 1)
    np.testing.assert_array_equal(idx, [[0], [0]])
    np.testing.assert_array_equal(dist, [[3.0], [0.0]])


def test_input_types_are_converted(rng):
    X = rng.integers(0, 5, size=(30, 4))
    Q = X[:5].tolist()
    a = ExactIndex().build(X).query(Q, 4)
    b = ExactIndex().build(X.astype(np.float32)[:, ::1]).query(np.asfortranarray(np.array(Q, float)), 4)
    np.testing.assert_array_equal(a[1], b[1])
    np.testing.assert_array_equal(a[0], b[0])


def test_distances_are_the_reference_distances(rng):
    X = rng.standard_normal((50, 6))
    Q = rng.standard_normal((4, 6))
    for metric in METRICS:
        dist, idx = ExactIndex(metric=metric).build(X).query(Q, 50)
        for i in range(4):
            if metric == "cosine":
                Xn = X / np.sqrt((X * X).sum(1))[:, None]
                qn = Q[i] / np.sqrt((Q[i] * Q[i]).sum())
                expect = distances_to(Xn, qn, metric)
            else:
                expect = distances_to(X, Q[i], metric)
            np.testing.assert_array_equal(dist[i], expect[idx[i]])
            assert np.all(np.diff(dist[i]) >= 0)


def test_attributes():
    index = ExactIndex(metric="cosine")
    assert index.exact is True and index.metric == "cosine"
    index.build(np.eye(3))
    assert index.n_samples_fit_ == 3 and index.n_features_in_ == 3


def test_values_whose_squares_overflow_are_rejected(rng):
    X = rng.standard_normal((10, 3))
    with pytest.raises(ValueError, match="overflow"):
        ExactIndex().build(X * 1e160)
    index = ExactIndex().build(X)
    with pytest.raises(ValueError, match="Q has values"):
        index.query(X * 1e160, 2)


@pytest.mark.parametrize("sparse_strategy", ["densify", "sparse"])
def test_pickles_cleanly(rng, sparse_strategy):
    import pickle

    import scipy.sparse as sp

    X = tricky_data(rng, 60, 5, integer=True)
    for data in (X, sp.csr_matrix(X)):
        index = ExactIndex(metric="cosine", sparse_strategy=sparse_strategy).build(data)
        again = pickle.loads(pickle.dumps(index))
        for a, b in zip(again.query(X[:9], 6), index.query(X[:9], 6), strict=True):
            np.testing.assert_array_equal(a, b)
        assert again.get_params() == index.get_params()


def test_heterogeneous_norms_and_the_second_pass(rng, monkeypatch):
    # birds-like data: most rows of norm ~1e2, a few of norm ~1e5, near-ties among the small
    X = rng.standard_normal((300, 6)) * 100
    X[::37] *= 1000
    base = X[5].copy()
    X[200:260] = base + 1e-9 * rng.standard_normal((60, 6))
    Q = np.vstack([base, X[:20] + 0.5, X[::37][:3] * 1.0001])
    ref = twin_kneighbors(X, Q, 15)
    got = ExactIndex().build(X).query(Q, 15)
    np.testing.assert_array_equal(got[1], ref[1])
    np.testing.assert_array_equal(got[0], ref[0])
    # white box: with no first-pass slack the rigorous second threshold must add the rows
    import mlneighbors.neighbors._exact as exact_module

    monkeypatch.setattr(exact_module, "_FIRST_PASS_SLACK", 0.0)
    got = ExactIndex().build(X).query(Q, 15)
    np.testing.assert_array_equal(got[1], ref[1])
    np.testing.assert_array_equal(got[0], ref[0])


@pytest.mark.parametrize("n", [37, 640, 1001])
@pytest.mark.parametrize("levels", [3, None])
def test_group_survivors_equal_the_mask(rng, n, levels):
    # the selection through the group minima against the plain mask of the block: the same
    # entries, put in the same (row, value, column) order, ties and the columns past the groups included
    from mlneighbors.neighbors._select import group_minima, group_survivors, kth_upper_bound, sort_entries, survivors

    P = rng.standard_normal((23, n)).astype(np.float32)
    if levels:
        P = rng.integers(0, levels, size=P.shape).astype(np.float32)
    P[4] = -0.0
    for k in (1, 5):
        mins = group_minima(P, k)
        thr = kth_upper_bound(P, k, mins).astype(np.float32) + np.float32(0.1)
        got = sort_entries(*group_survivors(P, k, mins, thr, limit=P.size * 40), n)
        want = survivors(P <= thr[:, None], P)
        for a, b in zip(got, want, strict=True):
            np.testing.assert_array_equal(a, b)
        assert group_survivors(P, k, mins, thr, limit=0) is None  # too many to gather: the mask path


@pytest.mark.parametrize("shape", [(23, 640), (1, 5), (5, 1), (0, 4), (4, 0), (300, 37)])
def test_mask_entries_equal_numpy_nonzero(rng, shape):
    # the fast row and column of a mask's True entries against np.nonzero: the same entries in
    # the same (row-major) order, on dense, sparse, empty, full and strided masks
    from mlneighbors.neighbors._select import mask_entries

    for share in (0.0, 0.02, 0.5, 1.0):
        mask = rng.random(shape) < share
        for view in (mask, mask[:, ::2], mask[::3], mask.T):
            got, want = mask_entries(view), np.nonzero(view)
            for a, b in zip(got, want, strict=True):
                np.testing.assert_array_equal(a, b)
                assert a.dtype == b.dtype


@pytest.mark.parametrize("n", [300, 2048, 5000])
def test_group_minima_both_ways_equal_a_loop(rng, n):
    # the passes and the reduction (long rows take the faster on the machine) against a loop
    # over the strided groups; the columns past the last group belong to none
    from mlneighbors.neighbors._select import _groups, _minima_by_passes, _minima_by_reduction, group_minima

    P = rng.standard_normal((9, n)).astype(np.float32)
    P[3, ::7] = -0.0
    for k in (1, 10):
        g = _groups(n, k)
        width = n // g
        want = np.array([[P[q, j::width][:g].min() for j in range(width)] for q in range(9)])
        np.testing.assert_array_equal(_minima_by_passes(P, g, width), want)
        np.testing.assert_array_equal(_minima_by_reduction(P, g, width), want)
        np.testing.assert_array_equal(group_minima(P, k), want)


def test_faster_of_times_both_ways_then_keeps_the_faster():
    # each way in turn on the large blocks until both have their trials, then the faster only;
    # small blocks are never timed and take the first way until the choice
    import time

    from mlneighbors.neighbors._select import FasterOf

    calls = []

    def slow(P):
        calls.append("slow")
        time.sleep(0.002)
        return P + 1

    def fast(P):
        calls.append("fast")
        return P + 1

    small, large = np.zeros(10), np.zeros(100)
    chooser = FasterOf(slow, fast, min_entries=100, trials=2)
    for P in (small, large, large, small, large, large):
        np.testing.assert_array_equal(chooser(P), P + 1)
    assert calls == ["slow", "slow", "fast", "slow", "slow", "fast"]
    assert chooser.chosen == 1 and [len(t) for t in chooser.times] == [2, 2]
    calls.clear()
    chooser(small), chooser(large)
    assert calls == ["fast", "fast"]
    # the other way round: the first way kept where it is the faster
    chooser = FasterOf(fast, slow, min_entries=1, trials=1)
    for _ in range(3):
        chooser(large)
    assert chooser.chosen == 0


@pytest.mark.parametrize("n", [7, 100, 1000])
def test_group_minima_of_a_transposed_block(rng, n):
    # axis=0: the minima of the strided row groups of every column, against a loop over the groups
    from mlneighbors.neighbors._select import _groups, group_minima

    U = rng.standard_normal((n, 13)).astype(np.float32)
    for k in (1, 5):
        g = _groups(n, k)
        width = n // g
        want = np.array([[U[j::width][:g, q].min() for j in range(width)] for q in range(13)]).T
        np.testing.assert_array_equal(group_minima(U, k, axis=0), want)
        np.testing.assert_array_equal(group_minima(U, k, axis=0), group_minima(np.ascontiguousarray(U.T), k).T)


def test_many_ties_take_the_mask_path(rng):
    # rows that all tie (three distinct rows repeated): the groups would gather everything
    X = np.repeat(rng.integers(0, 2, size=(3, 6)).astype(np.float64), 400, axis=0)
    Q = tricky_queries(rng, X, 20)
    got = ExactIndex().build(X).query(Q, 7)
    ref = twin_kneighbors(X, Q, 7)
    np.testing.assert_array_equal(got[1], ref[1])
    np.testing.assert_array_equal(got[0], ref[0])


@pytest.mark.parametrize("metric", ["euclidean", "cosine"])
@pytest.mark.parametrize("sparse", [False, True])
def test_columns_zero_in_every_indexed_row_are_left_out_of_the_gemm(rng, metric, sparse):
    # most columns zero in every indexed row (as in genbase: 99 of 1,185 used): the GEMM runs
    # on the others; the queries have values there, which change their distances, not their order
    import scipy.sparse as sp

    X = tricky_data(rng, 300, 40, integer=True)
    X[:, 5:] = 0.0
    X[:, 20] = rng.integers(0, 2, 300)
    Q = tricky_queries(rng, X, 50) + rng.integers(0, 3, size=(50, 40))
    index = ExactIndex(metric=metric, sparse_strategy="densify").build(sp.csr_matrix(X) if sparse else X)
    assert index._cols.tolist() == [0, 1, 2, 3, 4, 20]
    for k in (1, 8):
        got = index.query(Q, k)
        # sparse rows: the reference distances sum the stored entries (a few ulps from the dense
        # twin's sums, enough to reorder cosine ties); scipy's product, every column, is the twin
        ref = (ExactIndex(metric=metric, sparse_strategy="sparse").build(sp.csr_matrix(X)).query(Q, k) if sparse
               else twin_kneighbors(X, Q, k, metric))
        np.testing.assert_array_equal(got[1], ref[1])
        np.testing.assert_array_equal(got[0], ref[0])
    assert ExactIndex().build(rng.standard_normal((30, 6)))._cols is None  # every column used


@pytest.mark.parametrize("support", [False, True])
@pytest.mark.parametrize("metric", ["euclidean", "cosine"])
def test_query_rows_from_stored_values_equal_the_dense_product(rng, metric, support):
    # CSR queries on densified rows: the GEMM's query block is written from the stored values
    # alone; its numbers equal the dense twin's (the rows times the factor, rounded to float32),
    # with canonical CSR or not (duplicates summed), dense queries rounded into the block too
    import scipy.sparse as sp

    X = np.where(rng.random((80, 30)) < 0.2, rng.standard_normal((80, 30)) * 1e3, 0.0)
    if support:
        X[:, 7:12] = 0.0  # columns zero in every indexed row: left out of the GEMM
    Q = np.where(rng.random((25, 30)) < 0.3, rng.standard_normal((25, 30)), 0.0)
    index = ExactIndex(metric=metric, sparse_strategy="densify").build(sp.csr_matrix(X))
    assert index._strategy == "dense" and (index._cols is not None) == support

    def check(index, qb):  # against the dense rows, their kept columns, times the factor, rounded
        terms = index._model.terms(qb)
        cols = slice(None) if index._cols is None else index._cols
        rows = qb.toarray() if sp.issparse(qb) else qb
        twin = (rows[:, cols] * index._model.query_factor(terms)).astype(np.float32)
        np.testing.assert_array_equal(index._query_rows(qb, terms)[:, : twin.shape[1]], twin)

    qb = index._ref.prepare(Q)
    duplicated = sp.csr_matrix((np.repeat(qb.data, 2) / 2, np.repeat(qb.indices, 2), 2 * qb.indptr), shape=qb.shape)
    assert not duplicated.has_canonical_format
    check(index, qb)
    check(index, duplicated)
    dense = ExactIndex(metric=metric).build(X)  # dense rows and queries
    assert dense._strategy == "dense" and dense._model.center is None
    check(dense, dense._ref.prepare(Q))


@pytest.fixture
def small_tiles(monkeypatch):
    """Tiles of 16 indexed rows: the tiled search (many indexed rows) on a small set."""
    import mlneighbors.neighbors._exact as exact

    monkeypatch.setattr(exact, "_TILE_ROWS", 16)
    monkeypatch.setattr(exact, "_STREAM_QUERIES", 7)
    return exact


@pytest.mark.parametrize("metric", ["euclidean", "cosine"])
@pytest.mark.parametrize("precision", ["float32", "float64"])
@pytest.mark.parametrize("integer", [False, True])
def test_tiled_search_agrees_with_loop_twin(rng, small_tiles, metric, precision, integer):
    # 157 rows: 9 tiles of 16 and a last one of 13; blocks of 7 queries
    X = tricky_data(rng, 157, 7, integer=integer)
    Q = tricky_queries(rng, X, 41)
    index = ExactIndex(metric=metric, precision=precision, n_jobs=2).build(X)
    for k in (1, 6, 20, 157):
        dist, idx = index.query(Q, k)
        ref_dist, ref_idx = twin_kneighbors(X, Q, k, metric)
        np.testing.assert_array_equal(idx, ref_idx)
        np.testing.assert_array_equal(dist, ref_dist)


def test_tiled_search_second_pass_and_many_ties(rng, small_tiles, monkeypatch):
    # the rescan of whole proxy rows (no first-pass slack, heterogeneous norms) ...
    X = rng.standard_normal((300, 6)) * 100
    X[::37] *= 1000
    X[200:260] = X[5] + 1e-9 * rng.standard_normal((60, 6))
    Q = np.vstack([X[5], X[:20] + 0.5, X[::37][:3] * 1.0001])
    monkeypatch.setattr(small_tiles, "_FIRST_PASS_SLACK", 0.0)
    got = ExactIndex().build(X).query(Q, 15)
    ref = twin_kneighbors(X, Q, 15)
    np.testing.assert_array_equal(got[1], ref[1])
    np.testing.assert_array_equal(got[0], ref[0])
    # ... and rows that all tie, more candidates than the budget holds: the plain search
    X = np.repeat(rng.integers(0, 2, size=(3, 6)).astype(np.float64), 300, axis=0)
    Q = tricky_queries(rng, X, 20)
    got = ExactIndex(working_memory=0.05).build(X).query(Q, 7)
    ref = twin_kneighbors(X, Q, 7)
    np.testing.assert_array_equal(got[1], ref[1])
    np.testing.assert_array_equal(got[0], ref[0])


def test_sort_keys_equal_lexsort(rng):
    # the 64-bit key sort and the quicksort + radix + tie-run fix against numpy's lexsort, their
    # slow twin: ties, -0.0 and 0.0, negative values, rows out of order and beyond 2**16
    from mlneighbors.neighbors._select import row_distance_order, row_value_order

    for trial in range(200):
        m = int(rng.integers(0, 300))
        rows = np.sort(rng.integers(0, [40, 70000][trial % 2], m))
        if trial % 3 == 0:
            rows = rng.permutation(rows)
        pool = np.array([-0.0, 0.0, 1.5, -1.5, 3e38, -3e38, 1e-45, -1e-45, 2.0], dtype=np.float32)
        vals = rng.choice(pool, m) if trial % 2 else rng.standard_normal(m).astype(np.float32)
        np.testing.assert_array_equal(row_value_order(rows, vals), np.lexsort((vals, rows)))
        np.testing.assert_array_equal(row_value_order(rows, vals.astype(np.float64)), np.lexsort((vals, rows)))
        dist = rng.choice([0.0, 1.0, 2.0], m) if trial % 2 else np.abs(rng.standard_normal(m))
        cols = rng.permutation(m) if trial % 4 else rng.choice(10**6, m, replace=False)  # (row, column) unique
        np.testing.assert_array_equal(row_distance_order(rows, dist, cols), np.lexsort((cols, dist, rows)))


# ---------------------------------------------------------------------------- rows far from the origin
def offset_data(rng, n, d, *, integer):
    """Tricky rows moved far from the origin (features that all sit far from zero): the
    proxy works on them shifted by their center."""
    X = tricky_data(rng, n, d, integer=integer)
    return X + (1000.0 if integer else 250.3)


@pytest.mark.parametrize("precision", ["float32", "float64"])
@pytest.mark.parametrize("integer", [False, True])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_rows_far_from_the_origin_agree_with_the_loop_twin(rng, precision, integer, dtype):
    from mlneighbors.neighbors import loo_kneighbors
    from mlneighbors.neighbors._protocol import search

    X = offset_data(rng, 157, 7, integer=integer).astype(dtype)
    Q = tricky_queries(rng, X - X.mean(axis=0), 41) + X.mean(axis=0)
    index = ExactIndex(precision=precision, working_memory=0.01, n_jobs=2).build(X)
    center = index._model.center
    assert center is not None
    if integer:  # an integer center: shifted integers stay exact, the proxy stays exact
        np.testing.assert_array_equal(center, np.rint(center))
        assert index._model.integral
    for k in (1, 6, 156):
        dist, idx = index.query(Q, k)
        ref_dist, ref_idx = twin_kneighbors(X, Q, k)
        np.testing.assert_array_equal(idx, ref_idx)
        np.testing.assert_array_equal(dist, ref_dist)
        sets = search(index, Q, k, validated=True, order=False)
        np.testing.assert_array_equal(np.sort(sets, axis=1), np.sort(ref_idx, axis=1))
        ref = twin_kneighbors(X, X, k, exclude=np.arange(len(X)))
        got = loo_kneighbors(index, X, k)
        np.testing.assert_array_equal(got[1], ref[1])
        np.testing.assert_array_equal(got[0], ref[0])


def test_near_ties_far_from_the_origin(rng):
    # 300 points at (almost) the same distance from the query, all of them 1000 away from
    # the origin: the shifted proxy still cannot order them, the float64 re-ranking does
    d = 5
    q = rng.standard_normal(d) + 1000.0
    u = rng.standard_normal((300, d))
    u /= np.linalg.norm(u, axis=1)[:, None]
    radius = 3.0 * (1 + 1e-11 * rng.standard_normal(300))
    X = np.vstack([q + radius[:, None] * u, q + 10 * u[:50]])
    index = ExactIndex().build(X)
    assert index._model.center is not None
    for k in (1, 10, 299):
        dist, idx = index.query(q[None, :], k)
        ref_dist, ref_idx = twin_kneighbors(X, q[None, :], k)
        np.testing.assert_array_equal(idx, ref_idx)
        np.testing.assert_array_equal(dist, ref_dist)


def test_the_shift_is_taken_only_where_it_shrinks_the_norms(rng):
    import scipy.sparse as sp

    from mlneighbors.neighbors._proxy import _center_of

    X = rng.standard_normal((200, 6))
    assert ExactIndex().build(X)._model.center is None  # around the origin already
    assert ExactIndex().build(X + 100.0)._model.center is not None
    assert ExactIndex(metric="cosine").build(X + 100.0)._model.center is None  # not translation invariant
    assert ExactIndex(sparse_strategy="densify").build(sp.csr_matrix(X + 100.0))._model.center is None
    # columns zero in every row get a zero center (the GEMM leaves them out)
    Z = X + 100.0
    Z[:, 2] = 0.0
    center = _center_of(Z, (Z * Z).sum(axis=1), integral=False)
    assert center[2] == 0.0 and np.all(center[[0, 1, 3, 4, 5]] > 90)
    # integer rows: a floored center
    center = _center_of(np.rint(Z), (np.rint(Z) ** 2).sum(axis=1), integral=True)
    np.testing.assert_array_equal(center, np.floor(center))


def test_the_shift_leaves_fewer_candidates_to_the_reference_distances(rng, monkeypatch):
    # what the shift is for: far from the origin, the unshifted float32 proxy's error covers
    # many near neighbours, which then need their reference distances; shifted, few do
    import mlneighbors.neighbors._distance as distance
    import mlneighbors.neighbors._proxy as proxy

    X = rng.standard_normal((600, 20)) + 200.0
    Q = rng.standard_normal((100, 20)) + 200.0
    pairs = []
    real = distance.Reference.pair_distances

    def counted(self, Qp, rows, cols, budget):
        pairs.append(len(rows))
        return real(self, Qp, rows, cols, budget)

    monkeypatch.setattr(distance.Reference, "pair_distances", counted)
    shifted = ExactIndex().build(X).query_rows(Q, 10, sets=True)[1]
    n_shifted = sum(pairs)
    pairs.clear()
    monkeypatch.setattr(proxy, "_center_of", lambda X, sq, integral: None)
    plain = ExactIndex().build(X).query_rows(Q, 10, sets=True)[1]
    np.testing.assert_array_equal(np.sort(shifted, axis=1), np.sort(plain, axis=1))
    assert n_shifted * 10 < sum(pairs)


def test_the_shift_in_tiles_and_the_symmetric_leave_one_out(rng, small_tiles, monkeypatch):
    from mlneighbors.neighbors import loo_kneighbors

    monkeypatch.setattr(small_tiles, "_LOO_MIN_BLOCK", 16)
    monkeypatch.setattr(small_tiles, "_LOO_BLOCKS", 16)
    X = offset_data(rng, 203, 6, integer=False)
    Q = X[:40] + 0.01
    index = ExactIndex().build(X)
    assert index._model.center is not None
    assert index.loo_query_rows(X, None, 4) is not None  # the symmetric path answers
    for k in (1, 9):
        np.testing.assert_array_equal(index.query(Q, k)[1], twin_kneighbors(X, Q, k)[1])
        ref = twin_kneighbors(X, X, k, exclude=np.arange(len(X)))
        got = loo_kneighbors(index, X, k)
        np.testing.assert_array_equal(got[1], ref[1])
        np.testing.assert_array_equal(got[0], ref[0])


@pytest.mark.parametrize("metric", METRICS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_zero_query_among_rows_of_one_norm(rng, metric, dtype, monkeypatch):
    # normalised rows (text): a zero query is at distance 1 from every row up to the last
    # bits, so its candidates are all the rows; their distances come from a cached look-up,
    # the same numbers as the pair distances, bit for bit
    from mlneighbors.neighbors import loo_kneighbors
    from mlneighbors.neighbors._distance import Reference
    from mlneighbors.neighbors._protocol import search

    X = np.abs(rng.standard_normal((300, 12)))
    X /= np.linalg.norm(X, axis=1)[:, None]
    X[[7, 150]] = 0.0  # zero rows: their leave-one-out queries are zero too
    X = X.astype(dtype)
    Q = np.vstack([np.zeros((2, 12)), X[:5] * 0.5])
    looked_up = []
    real = Reference.from_origin
    monkeypatch.setattr(Reference, "from_origin", lambda self, budget: looked_up.append(1) or real(self, budget))
    index = ExactIndex(metric=metric).build(X)
    for k in (1, 10, 299):
        dist, idx = index.query(Q, k)
        ref_dist, ref_idx = twin_kneighbors(X, Q, k, metric)
        np.testing.assert_array_equal(idx, ref_idx)
        np.testing.assert_array_equal(dist, ref_dist)
        sets = search(index, Q, k, validated=True, order=False)
        np.testing.assert_array_equal(np.sort(sets, axis=1), np.sort(ref_idx, axis=1))
        ref = twin_kneighbors(X, X, k, metric, exclude=np.arange(len(X)))
        got = loo_kneighbors(index, X, k)
        np.testing.assert_array_equal(got[1], ref[1])
        np.testing.assert_array_equal(got[0], ref[0])
    if metric == "euclidean":  # (cosine and manhattan bound a zero query tightly enough)
        assert looked_up
    # the look-up is the pair distances' own numbers
    ref = index._ref
    np.testing.assert_array_equal(
        ref.from_origin(1 << 20), ref._pairs(np.zeros((1, 12)), np.zeros(300, dtype=np.intp), np.arange(300))
    )


def test_bounds_count_the_terms_that_are_not_zero(rng):
    # a product with a zero factor adds an exact zero: the proxy's error bound counts the
    # query's non-zero values (+ the norm's term), not the columns.  Against the engine's own
    # GEMM, every pair's reference distance lies inside the interval from its proxy and the
    # threshold refined from a distance keeps every entry at most that far; sparse queries'
    # bounds are many times tighter than dense ones'
    n, d = 300, 200
    X = np.where(rng.random((n, d)) < 0.03, rng.standard_normal((n, d)) * np.exp(3 * rng.standard_normal((n, d))), 0.0)
    X[:5] = rng.standard_normal((5, d))  # a few dense rows among them
    Q = np.where(rng.random((60, d)) < 0.03, rng.standard_normal((60, d)), 0.0)
    Q[0] = rng.standard_normal(d)  # and a dense query
    index = ExactIndex().build(X)
    model = index._model
    assert model.center is None
    np.testing.assert_array_equal(model.row_nnz, [np.count_nonzero(row) for row in X])
    qb = index._ref.prepare(Q)
    terms = model.terms(qb)
    np.testing.assert_array_equal(terms.nnz, [np.count_nonzero(row) for row in Q])
    P = index._query_rows(qb, terms) @ index._Xa.T  # the search's GEMM
    bounds = model.bounds(terms, qb)
    r, c = np.divmod(np.arange(P.size), n)
    ref = index._ref.pair_distances(qb, r, c, 1 << 24)
    lo, hi = bounds.interval(P[r, c].astype(np.float64), c, r)
    assert np.all(lo <= ref) and np.all(ref <= hi)
    D = ref.reshape(P.shape)
    kth = np.sort(D, axis=1)[:, 4]
    near_r, near_c = np.nonzero(D <= kth[:, None])
    assert np.all(P[near_r, near_c] <= bounds.refine(kth, 0, len(Q))[near_r])
    dense = model.bounds(type(terms)(terms.qsq, terms.qnorm, terms.top, terms.w), qb)  # as if every value counted
    ub = np.ones(len(Q))
    assert np.all(bounds.slack(ub)[1:] < dense.slack(ub)[1:] / 10)
    assert bounds.slack(ub)[0] == dense.slack(ub)[0]


@pytest.mark.parametrize("kind", ["float", "integer", "shifted", "sparse"])
def test_build_in_shares_of_rows_is_the_serial_build(rng, monkeypatch, kind):
    # the build's passes over dense rows run in the worker threads, each its share of the rows
    # (large data): the same index, array for array, as one thread's build
    import scipy.sparse as sp

    import mlneighbors.neighbors._exact as exact

    X = rng.standard_normal((301, 17)) * (rng.random((301, 17)) < 0.5)
    X[:, 3:7] = 0.0  # columns no row uses (the support)
    if kind == "integer":
        X = np.rint(X * 3)
    elif kind == "shifted":
        X += 500.0
    elif kind == "sparse":
        X = sp.csr_matrix(X)
    serial = ExactIndex(n_jobs=1).build(X)
    monkeypatch.setattr(exact, "_PARALLEL_BUILD", 1)
    shares = []
    row_shares = exact.row_shares
    monkeypatch.setattr(exact, "row_shares", lambda n, t: shares.append(t) or row_shares(n, t))
    parallel = ExactIndex(n_jobs=2).build(X)
    assert shares == ([2, 1] if kind == "sparse" else [2])  # sparse rows: their densified copy only
    for a, b in [(serial._Xa, parallel._Xa), (serial._model.row_sq, parallel._model.row_sq)]:
        np.testing.assert_array_equal(a, b)
    for name in ("row_nnz", "center"):
        a, b = getattr(serial._model, name), getattr(parallel._model, name)
        assert (a is None) == (b is None) and (a is None or np.array_equal(a, b))
    assert (serial._model.integral, serial._model.scale) == (parallel._model.integral, parallel._model.scale)
    assert (serial._model.integral, serial._model.center is None) == (kind == "integer", kind != "shifted")
    if kind == "shifted":  # every column is far from zero
        assert serial._cols is None and parallel._cols is None
    else:
        np.testing.assert_array_equal(serial._cols, parallel._cols)
        assert 3 not in serial._cols


@pytest.mark.filterwarnings("ignore::mlneighbors.exceptions.DataScaleWarning")
@pytest.mark.parametrize("strategy", ["auto", "densify", "sparse"])
@pytest.mark.parametrize("sparse", [False, True])
def test_rows_below_the_scale_warning_equal_the_twin(strategy, sparse):
    # found by the property test: rows of 3e-156 had a proxy scale of 2**517, whose square is
    # infinite (the search failed); the scale now stops at 2**500
    import scipy.sparse as sp

    t = 3.08360637e-156
    X = np.array([[0.0, t], [t, t], [0.0, 0.0], [1e-300, 0.0], [t, 0.0]])
    Q = np.array([[0.0, 0.0], [t, 0.0], [1.0, 0.0], [1e-200, 0.0]])
    index = ExactIndex(sparse_strategy=strategy).build(sp.csr_matrix(X) if sparse else X)
    for k in (1, 3, 5):
        dist, idx = index.query(Q, k)
        ref_dist, ref_idx = twin_kneighbors(X, Q, k)
        np.testing.assert_array_equal(idx, ref_idx)
        np.testing.assert_array_equal(dist, ref_dist)
