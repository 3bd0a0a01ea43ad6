"""Leave-one-out neighbours: own row excluded by index, duplicates kept."""

import numpy as np
import pytest
import scipy.sparse as sp

from mlneighbors.neighbors import ExactIndex, ShardedIndex, loo_kneighbors

from ._twins import tricky_data, twin_kneighbors


@pytest.mark.parametrize("metric", ["euclidean", "cosine", "manhattan"])
@pytest.mark.parametrize("integer", [False, True])
def test_loo_equals_twin_with_duplicates(rng, metric, integer):
    X = tricky_data(rng, 131, 5, integer=integer)
    index = ExactIndex(metric=metric, working_memory=0.01).build(X)
    for k in (1, 9, 130):  # k = n - 1 included
        dist, idx = loo_kneighbors(index, X, k)
        ref_dist, ref_idx = twin_kneighbors(X, X, k, metric, exclude=np.arange(len(X)))
        np.testing.assert_array_equal(idx, ref_idx)
        np.testing.assert_array_equal(dist, ref_dist)
        assert not np.any(idx == np.arange(len(X))[:, None])


def test_duplicates_of_a_row_stay_and_come_first():
    # rows 0-3 are identical: row 3's nearest are 0, 1, 2 (lower indices first), itself not
    X = np.array([[1.0, 1.0]] * 4 + [[1.0, 2.0], [5.0, 5.0]])
    dist, idx = loo_kneighbors(ExactIndex().build(X), X, 3)
    np.testing.assert_array_equal(idx[3], [0, 1, 2])
    np.testing.assert_array_equal(dist[3], [0.0, 0.0, 0.0])
    np.testing.assert_array_equal(idx[0], [1, 2, 3])
    # k = 1: row 3 is not among its own 2 nearest (0 and 1 come first): the last is dropped
    dist, idx = loo_kneighbors(ExactIndex().build(X), X, 1)
    np.testing.assert_array_equal(idx[:, 0], [1, 0, 0, 0, 0, 4])


def test_loo_prefix_property(rng):
    X = tricky_data(rng, 90, 3, integer=True)
    index = ExactIndex().build(X)
    dist30, idx30 = loo_kneighbors(index, X, 30)
    for k in (1, 2, 10, 29):
        dist, idx = loo_kneighbors(index, X, k)
        np.testing.assert_array_equal(idx, idx30[:, :k])
        np.testing.assert_array_equal(dist, dist30[:, :k])


def test_loo_sparse_and_sharded(rng):
    X = tricky_data(rng, 70, 6, integer=True)
    X[X < 1] = 0
    ref = twin_kneighbors(X, X, 8, exclude=np.arange(70))
    for index, data in [(ExactIndex(), sp.csr_matrix(X)), (ShardedIndex(ExactIndex(), 4), X)]:
        dist, idx = loo_kneighbors(index.build(data), data, 8)
        np.testing.assert_array_equal(idx, ref[1])
        np.testing.assert_array_equal(dist, ref[0])


class BruteForce:
    """A minimal user backend: only build and query (no n_samples_fit_)."""

    exact = True
    metric = "euclidean"

    def build(self, X):
        self.X = np.asarray(X, float)
        return self

    def query(self, Q, k):
        return twin_kneighbors(self.X, Q, k)


def test_loo_with_a_user_backend(rng):
    X = tricky_data(rng, 40, 3, integer=True)
    dist, idx = loo_kneighbors(BruteForce().build(X), X, 5)
    np.testing.assert_array_equal(idx, twin_kneighbors(X, X, 5, exclude=np.arange(40))[1])


def test_loo_errors(rng):
    X = rng.standard_normal((10, 2))
    index = ExactIndex().build(X)
    with pytest.raises(ValueError, match="k <= n_samples - 1"):
        loo_kneighbors(index, X, 10)
    with pytest.raises(ValueError, match="k must be >= 1"):
        loo_kneighbors(index, X, 0)
    with pytest.raises(ValueError, match="built on 10 rows"):
        loo_kneighbors(index, X[:5], 2)

    class Broken(BruteForce):
        def query(self, Q, k):
            d, i = super().query(Q, k)
            i[:, 1] = np.arange(len(Q))
            i[:, 0] = np.arange(len(Q))
            return d, i

    with pytest.raises(ValueError, match="more than once"):
        loo_kneighbors(Broken().build(X), X, 3)


def _drop_self_twin(dist, idx, self_rows, k, rows=None):
    """One query at a time: its entries in order, its own row skipped, the first k kept."""
    out_d = np.full((len(dist), k), np.inf)
    out_i = np.full((len(dist), k), -1, dtype=np.intp)
    for q in range(len(dist)):
        kept = [(d, i) for d, i in zip(dist[q], idx[q], strict=True)
                if (i if rows is None else rows[i]) != self_rows[q]][:k]
        for j, (d, i) in enumerate(kept):
            out_d[q, j], out_i[q, j] = d, i
    return out_d, out_i


@pytest.mark.parametrize("block", [1, 7, 1 << 20])
def test_drop_self_in_blocks_equals_a_loop_twin(rng, monkeypatch, block):
    """The blocked pass (a 10^6-row result is not masked whole) keeps exactly the entries a loop
    keeps, whether a query's own row is in its result, absent, or searched among a subset."""
    from mlneighbors.neighbors import _loo

    monkeypatch.setattr(_loo, "_DROP_BLOCK", block)
    n, m = 53, 6
    idx = rng.integers(0, 40, (n, m))
    dist = np.sort(rng.random((n, m)), axis=1)
    self_rows = np.where(rng.random(n) < 0.6, idx[np.arange(n), rng.integers(0, m, n)], 1000)
    for k in (1, m - 1, m):
        got = _loo.drop_self(dist, idx, self_rows, k)
        np.testing.assert_array_equal(got[0], _drop_self_twin(dist, idx, self_rows, k)[0])
        np.testing.assert_array_equal(got[1], _drop_self_twin(dist, idx, self_rows, k)[1])
    rows = rng.permutation(100)[:40]  # idx numbers a subset of the rows
    got = _loo.drop_self(dist, idx, rows[self_rows % 40], 4, rows=rows)
    want = _drop_self_twin(dist, idx, rows[self_rows % 40], 4, rows=rows)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])


@pytest.mark.parametrize("metric", ["euclidean", "cosine"])
@pytest.mark.parametrize("integer", [False, True])
@pytest.mark.parametrize("precision", ["float32", "float64"])
@pytest.mark.parametrize("n_jobs", [1, 2, 3])
def test_symmetric_loo_equals_twin(rng, monkeypatch, metric, integer, precision, n_jobs):
    # the exact engine's own leave-one-out (each block pair's products computed once, for
    # both blocks): blocks of 16 rows here, so that 203 rows make 13 blocks (the last shorter);
    # on 2 and 3 workers, the pipeline (each block's GEMM in column shares that cut across the
    # later blocks, the selections beside them)
    import mlneighbors.neighbors._exact as exact

    monkeypatch.setattr(exact, "_LOO_MIN_BLOCK", 16)
    monkeypatch.setattr(exact, "_LOO_BLOCKS", 16)
    monkeypatch.setattr(exact, "_SMALL_WORK", 0)  # the thread pool too
    X = tricky_data(rng, 203, 6, integer=integer)
    X[5] *= 1e4  # one row of a far larger norm: the local error bounds of the second pass
    index = ExactIndex(metric=metric, precision=precision, n_jobs=n_jobs).build(X)
    assert index.loo_query_rows(X, None, 3) is not None  # the symmetric path answers
    for k in (1, 9, 202):
        dist, idx = loo_kneighbors(index, X, k)
        ref_dist, ref_idx = twin_kneighbors(X, X, k, metric, exclude=np.arange(len(X)))
        np.testing.assert_array_equal(idx, ref_idx)
        np.testing.assert_array_equal(dist, ref_dist)


@pytest.mark.parametrize("metric", ["euclidean", "cosine"])
def test_symmetric_loo_with_ties_past_the_budget(rng, monkeypatch, metric):
    # eight distinct rows repeated: every entry of a block ties with the threshold, so the
    # earlier blocks' columns (kept as their GEMMs gave them) and the block's own cannot be
    # selected apart within the budget: the whole proxy rows are assembled and selected in
    # chunks; the answer is still the twin's
    import mlneighbors.neighbors._exact as exact

    whole = []
    select = exact.ExactIndex._select_block

    def spy(self, qb, P, *args, **kwargs):
        whole.append(P.shape[1] == len(X))
        return select(self, qb, P, *args, **kwargs)

    monkeypatch.setattr(exact.ExactIndex, "_select_block", spy)
    X = rng.integers(0, 2, size=(8, 3)).astype(np.float64)[rng.integers(0, 8, 1600)] + 1.0
    index = ExactIndex(metric=metric, working_memory=16, n_jobs=1).build(X)
    assert index.loo_query_rows(X, None, 3) is not None  # the symmetric path answers
    assert sum(whole) > 1  # blocks took the whole rows
    dist, idx = loo_kneighbors(index, X, 6)
    ref_dist, ref_idx = twin_kneighbors(X, X, 6, metric, exclude=np.arange(len(X)))
    np.testing.assert_array_equal(idx, ref_idx)
    np.testing.assert_array_equal(dist, ref_dist)


@pytest.mark.parametrize("offset", [0.0, 500.0])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_indexed_rows_terms_are_the_queries_terms(rng, offset, dtype):
    # the symmetric leave-one-out takes its queries' norms from the build (indexed_terms):
    # the same numbers, bit for bit, as computing them from the rows (shifted rows too)
    X = (rng.standard_normal((300, 7)) + offset).astype(dtype)
    index = ExactIndex().build(X)
    model = index._model
    assert (model.center is not None) == bool(offset)
    for a, b in [(0, 300), (17, 123)]:
        qb = index._ref.prepare(X[a:b])
        got, want = model.indexed_terms(a, b, qb), model.terms(qb)
        np.testing.assert_array_equal(got.qsq, want.qsq)
        np.testing.assert_array_equal(got.qnorm, want.qnorm)
        assert (got.top, got.w) == (want.top, want.w)


def test_symmetric_loo_of_integers_checks_no_block(rng, monkeypatch):
    # the indexed rows are integers when the data are: the leave-one-out's blocks are not read
    # again to find it out, and the exact proxy answers
    import mlneighbors.neighbors._exact as exact
    import mlneighbors.neighbors._proxy as proxy

    monkeypatch.setattr(exact, "_LOO_MIN_BLOCK", 16)
    X = tricky_data(rng, 200, 5, integer=True)
    index = ExactIndex().build(X)
    assert index._model.integral and index.loo_query_rows(X, None, 3) is not None
    checked = []
    is_integral = proxy.is_integral
    monkeypatch.setattr(proxy, "is_integral", lambda A: checked.append(A.shape) or is_integral(A))
    dist, idx = loo_kneighbors(index, X, 4)
    assert not checked
    ref_dist, ref_idx = twin_kneighbors(X, X, 4, exclude=np.arange(len(X)))
    np.testing.assert_array_equal(idx, ref_idx)
    np.testing.assert_array_equal(dist, ref_dist)
    index.query(X[:30], 4)
    assert checked  # queries are other rows: checked


def test_symmetric_loo_declines_what_it_cannot_do(rng, monkeypatch):
    import mlneighbors.neighbors._exact as exact

    monkeypatch.setattr(exact, "_LOO_MIN_BLOCK", 16)
    X = tricky_data(rng, 200, 4)
    index = ExactIndex().build(X)
    assert index.loo_query_rows(X, None, 3) is not None
    assert index.loo_query_rows(X, np.arange(5), 3) is None  # a subset of the rows: the plain search
    assert index.loo_query_rows(np.rint(X).astype(np.int64), None, 3) is None  # not validated: the plain search
    assert ExactIndex(working_memory=0.05).build(X).loo_query_rows(X, None, 3) is None  # products do not fit
    assert ExactIndex(metric="manhattan").build(X).loo_query_rows(X, None, 3) is None
    assert ExactIndex().build(X[:32]).loo_query_rows(X[:32], None, 3) is None  # fewer than 3 blocks
    S = sp.csr_matrix(np.where(X > 1, X, 0.0))
    assert ExactIndex(sparse_strategy="sparse").build(S).loo_query_rows(S, None, 3) is None


@pytest.mark.parametrize("case", ["plain", "far", "shifted", "integer", "sparse"])
def test_symmetric_proxy_bounds_hold_for_every_pair(rng, case):
    # the symmetric leave-one-out's proxy carries both squared norms as GEMM terms (the
    # squared distance itself): for every pair of rows its bounds put the reference distance
    # inside the interval they give from the proxy, the threshold refined from a distance
    # keeps every entry at most that far, and on integers the proxy is exact; the bounds of
    # the other proxy (the query's norm not in the GEMM) read the same numbers wrongly
    n = 150
    X = rng.standard_normal((n, 40))
    if case == "far":
        X[3] *= 1e3  # one row of a far larger norm
    elif case == "shifted":
        X += 500.0  # rows far from the origin: the model shifts them
    elif case == "integer":
        X = rng.integers(-20, 21, size=(n, 40)).astype(np.float64)
    elif case == "sparse":  # one to three values a row, of any size: the bound counts those terms only
        X = np.where(rng.random((n, 40)) < 0.05, X * np.exp(3 * rng.standard_normal((n, 40))), 0.0)
        X[np.arange(n), rng.integers(0, 40, n)] = rng.standard_normal(n)
    index = ExactIndex().build(X)
    model = index._model
    assert (model.center is not None) == (case == "shifted") and model.integral == (case == "integer")
    width = index._Xa.shape[1] - 1
    A, sq, one = index._Xa[:, :width], index._Xa[:, width], np.ones(n, dtype=np.float32)
    V = np.column_stack([-2 * A, sq, one]) @ np.column_stack([A, one, sq]).T  # float32, as the search's GEMM
    qb = index._ref.prepare(X)
    terms = model.indexed_terms(0, n, qb)
    bounds = model.bounds(terms, qb, indexed=True, symmetric=True)
    r, c = np.divmod(np.arange(n * n), n)
    ref = index._ref.pair_distances(qb, r, c, 1 << 24)
    if case == "integer":
        np.testing.assert_array_equal(bounds.from_proxy(V[r, c], r), ref)
        return
    lo, hi = bounds.interval(V[r, c].astype(np.float64), c, r)
    assert np.all(lo <= ref) and np.all(ref <= hi)
    D = ref.reshape(n, n)
    kth = np.sort(D, axis=1)[:, 5]
    near_r, near_c = np.nonzero(D <= kth[:, None])
    assert np.all(V[near_r, near_c] <= bounds.refine(kth, 0, n)[near_r])
    lo, hi = model.bounds(terms, qb, indexed=True).interval(V[r, c].astype(np.float64), c, r)
    assert not (np.all(lo <= ref) and np.all(ref <= hi))


def _run_pipeline(n_blocks, shares, n_threads, fail=None):
    # the leave-one-out's scheduler with stand-ins that sleep a little and log their start and
    # end, in the order they happen (one lock); ``fail``: the job that raises
    import threading
    import time

    from mlneighbors.neighbors._threads import pipeline

    log, lock = [], threading.Lock()

    def job(kind, i, *rest):
        with lock:
            log.append(("start", kind, i, *rest))
        time.sleep(0.002 if kind == "gemm" else 0.003)
        if fail == (kind, i, *rest):
            raise RuntimeError(f"{kind} {i} failed")
        with lock:
            log.append(("end", kind, i, *rest))

    def release(j):
        log.append(("end", "release", j))  # under the scheduler's lock

    pipeline(n_blocks, shares, lambda i, c0, c1: job("gemm", i, c0, c1), lambda i: job("select", i), release,
              n_threads)
    return log


@pytest.mark.parametrize("n_threads", [2, 3])
@pytest.mark.parametrize("ahead", [1, 2])
def test_pipeline_selects_a_block_only_once_its_products_are_in(monkeypatch, n_threads, ahead):
    import mlneighbors.neighbors._threads as threads

    monkeypatch.setattr(threads, "AHEAD", ahead)
    n_blocks = 7
    shares = [(i, c, c + 1) for i in range(n_blocks) for c in range(i, n_blocks)]  # fewer as blocks go
    log = _run_pipeline(n_blocks, shares, n_threads)
    ended = [entry[1:] for entry in log if entry[0] == "end"]
    # every share and every selection exactly once
    assert sorted(e for e in ended if e[0] == "gemm") == sorted(("gemm", *s) for s in shares)
    assert sorted(e[1] for e in ended if e[0] == "select") == list(range(n_blocks))
    # each block released once, in order, once the selections up to it are done
    assert [e[1] for e in ended if e[0] == "release"] == list(range(n_blocks))
    for at, entry in enumerate(log):
        if entry[1] == "release":
            done = {e[2] for e in log[:at] if e[:2] == ("end", "select")}
            assert set(range(entry[2] + 1)) <= done
    for at, (what, kind, i, *_) in enumerate(log):
        if what != "start":
            continue
        before = {entry[1:] for entry in log[:at] if entry[0] == "end"}
        if kind == "select":  # every share of the blocks up to it is done
            assert all(("gemm", *s) in before for s in shares if s[0] <= i)
        else:  # the GEMMs run at most AHEAD blocks ahead of the first block not selected
            assert all(("select", j) in before for j in range(i - threads.AHEAD))
    # a selection starts beside another only where no GEMM share could run instead
    running = set()
    for at, (what, kind, i, *_) in enumerate(log):
        if kind != "select":
            continue
        if what == "start" and running:
            started = {entry[1:] for entry in log[:at] if entry[0] == "start"}
            selected = {entry[2] for entry in log[:at] if entry[0] == "end" and entry[1] == "select"}
            low = min(set(range(n_blocks)) - selected)
            assert all(("gemm", *s) in started for s in shares if s[0] <= low + threads.AHEAD)
        (running.add if what == "start" else running.discard)(i)


@pytest.mark.parametrize("fail", [("gemm", 2, 2, 3), ("select", 1)])
def test_pipeline_error_reaches_the_caller_and_stops_the_workers(fail):
    shares = [(i, c, c + 1) for i in range(6) for c in range(i, 6)]
    with pytest.raises(RuntimeError, match="failed"):
        _run_pipeline(6, shares, 2, fail=fail)
    # the pool's workers are free again: the same scheduler runs to the end
    log = _run_pipeline(6, shares, 2)
    assert sum(entry[:2] == ("end", "select") for entry in log) == 6
