"""Exact brute-force k-nearest-neighbour search, dense and sparse, in blocks.

How a block of queries is answered
----------------------------------
1. **Proxy.**  One GEMM per block gives a value that ranks the indexed rows like the
   distance does: ``p = ||x||^2 - 2 q.x`` (euclidean; ``||q||^2`` is constant per query) or
   ``p = -2 q_hat.x_hat`` (cosine), in float32 by default (``precision``).  Sparse data either
   densify the indexed rows once (when they fit ``working_memory``) or use scipy's sparse
   product, whichever the cost model below picks; ``manhattan`` uses scikit-learn's
   ``pairwise_distances`` as its proxy.
2. **Candidates.**  The proxy's rounding error is bounded rigorously (standard floating-point
   model): ``|p~ - p| <= (m + 16) u (||x||^2 + 2 ||q|| ||x||)``, ``u`` the unit roundoff and
   ``m`` the query's values that are not zero, at most d (a zero product rounds nothing).  A
   first pass keeps the entries within a generous estimate of that bound of the k-th smallest
   proxy, found without sorting the block (see ``_select``).  Euclidean: the float64
   distances of the k best by proxy give an upper bound ``D`` of the k-th distance; every row
   that can be among the k nearest (or tied with the k-th) then has norm <= ``||q|| + D``, so
   its error is bounded by the *local* bound (not by the largest norm of the data, which
   matters for data like birds, norms 18 to 92,000) and its proxy by ``D^2 - ||q||^2`` plus
   that bound: those rows are the candidates (rows the first pass missed are taken from the
   block again).  Cosine (norms <= 1) and manhattan use the global bound directly.
3. **Exact distances.**  The float64 reference distances (``_distance``) of the candidates
   only; sorted by (distance, index); the first k are returned.

Leave-one-out
-------------
When the queries are the indexed rows themselves (``loo_kneighbors``, every model's ``fit``),
the products of row blocks I and J serve both blocks: each pair is computed once (about half
the GEMM of the plain search; ``loo_query_rows``), the products of J > I kept for block J while
its turn comes, as long as they fit in the working memory (dense rows; about 14,000 rows
at the default 256 MiB).  The GEMM then carries both squared norms as two more terms, so that
each number is the squared distance itself, the proxy of both rows of the pair (its bound
that of d + 2 terms summing to ``(||q|| + ||x||)^2``); selection and re-ranking as above.

What is guaranteed
------------------
The result is the first k of the order of all indexed rows by (float64 reference distance,
row number), whatever the precision of the proxy.  Hence: ties are broken by the lower row
number on the returned numbers themselves; the result for k is the prefix of the result for
any larger k; block sizes, thread counts, shards and dense/sparse blocking of the indexed rows
do not change the result.  Distances agree bit for bit with the loop twin of the tests for
dense data (``sqrt(sum((x - q) ** 2))`` with numpy's row sum); sparse data sum the stored
entries in column order, which differs from the dense sum by a few ulps (relative 1e-15),
and on integer-valued data (binary text features) both are exact and identical.

When the indexed data and a query block are integer valued and small enough that the float32
GEMM is exact (every partial sum below 2**24), the proxy *is* the squared distance and no
re-ranking is needed: the first k by (proxy, index) are taken directly.  Binary text data
(bibtex, enron, corel5k, ohsumed, ...) take this path, whatever the number of exact ties.
"""

from __future__ import annotations

import threading
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp

from .._config import CACHE_BYTES, working_memory_bytes
from .._docstrings import fill_doc
from .._progress import task
from ._capabilities import Capabilities
from ._distance import Matrix, Reference
from ._protocol import BaseIndex, canonical_rows, check_positive_int, resolve_n_jobs
from ._proxy import Bounds, ProxyModel, QueryTerms, U, column_nonzeros, gemm_dtype, is_integral, rerank
from ._select import (
    SURVIVOR_BYTES,
    first_k,
    group_minima,
    group_survivors,
    kth_upper_bound,
    mask_entries,
    round_up,
    row_starts,
    row_value_order,
    sort_entries,
    survivor_chunks,
    survivor_limit,
    survivors,
)
from ._threads import AHEAD, keep, on_workers, pipeline, row_shares, scratch

__all__ = ["ExactIndex"]
# a block holds at most this many proxy values (32 MiB in float32): the GEMM output then
# stays in the last-level cache for the passes of the selection
_MAX_BLOCK_ELEMENTS = CACHE_BYTES["proxy_block"] // 4
# cost model for sparse data, CSR or dense rows that are mostly zeros (nanoseconds, measured on
# a 2-core AMD EPYC, AVX2): float32 GEMM per multiply-add and core; scipy's sparse product per
# multiply-add and per output entry, on one thread (scipy 1.17 releases the GIL in it: two
# threads ran two products in 0.43 of the time one took for both, which this model leaves out:
# on 8,000 x 1,000 binary rows stored dense, the leave-one-out took 0.08, 0.17 and 0.32 s by the
# sparse product at 1, 2 and 3 % non-zero values against 0.36 s by the GEMM, and at 5 % 0.62
# against 0.37, where the model picks the GEMM; AVX-512 kernels)
_NS_GEMM_MAC = 0.029
_NS_SPARSE_MAC = 12.0
_NS_SPARSE_OUT = 2.0

# the first pass keeps rows within this many error bounds (estimated from the proxy) of the
# k-th proxy; the rigorous second threshold (from float64 distances) then rarely needs more
_FIRST_PASS_SLACK = 4.0

# below this much work a search runs in the calling thread, the GEMM on the BLAS's own
# threads: the selection of a few thousand rows gains less from the workers than their hand-offs
# cost.  Work: (query, row) entries times (d + 1 + _ENTRY_WORK), the GEMM's multiply-adds and the
# selection of an entry counted as _ENTRY_WORK of them.  Measured with a search (or ML-kNN fit +
# predict) after an idle moment, as a user runs it: scene 29 ms with the workers, 24 ms without;
# enron 33 and 23; 3,000 x 64 leave-one-out 44 and 39; yahoo-science (11 x 10^6 entries of 744
# multiply-adds) 141 and 176; 8,000 x 16 (64 x 10^6 entries) 125 and 190; 4,000 x 8 45 and 50
_SMALL_WORK = 1 << 31
_ENTRY_WORK = 600

# the indexed rows are converted to the GEMM's form in slices of about this many bytes (float64)
_BUILD_SLICE_BYTES = 1 << 22
#: dense indexed data of at least this many values is read by the build's passes in the worker
#: threads (below it, handing the shares over costs more than it saves)
_PARALLEL_BUILD = 1 << 20

# indexed rows per tile when there are many (at least twice this many): blocks of up to
# _STREAM_QUERIES queries are searched tile by tile (a GEMM of 512 x 8,192 x 129 runs at the
# BLAS's full speed, one of 83 x 100,000 x 129 about 30 % slower: it packs every indexed row
# for 83 products)
_TILE_ROWS = 16384
_STREAM_QUERIES = _MAX_BLOCK_ELEMENTS // _TILE_ROWS

# symmetric leave-one-out: rows per block at least this many (a GEMM of smaller blocks runs
# slower), and about this many blocks where the rows allow (the products of blocks I and J
# are computed once for both: B (B + 1) / 2 of the B^2 products)
_LOO_MIN_BLOCK = 512
_LOO_BLOCKS = 12

def exact_first_k(
    cand: tuple[np.ndarray, np.ndarray, np.ndarray], k: int, bounds: Bounds, c0: int, c1: int
) -> tuple[np.ndarray, np.ndarray]:
    """The first k of the candidates of query rows ``c0:c1`` (sorted by row, proxy, column)
    where the proxy is exact (``bounds.from_proxy``): the (value, column) order is the answer."""
    r, c, v = cand
    pos = first_k(row_starts(r, c1 - c0), k)
    return bounds.from_proxy(v[pos], c0 + r[pos]), c[pos]


def sparse_product_ns(counts: np.ndarray, n: int, f: float = 1.0) -> float:
    """The cost model's nanoseconds per output entry of scipy's sparse product of ``n`` rows
    by themselves, whose columns hold c_j values that are not zero: the multiply-adds of
    X @ X.T are sum c_j^2 (per entry on average: an estimate for the queries too).  ``counts``:
    the c_j, or those of one row in ``f`` (each about binomial(c_j, 1/f): sum c_j^2 is then
    about f^2 sum s_j^2 - f (f - 1) sum s_j)."""
    s = np.asarray(counts, dtype=np.float64)
    pairs = max(f * f * float(s @ s) - f * (f - 1) * float(s.sum()), 0.0)
    return _NS_SPARSE_MAC * pairs / max(float(n) * n, 1.0) + _NS_SPARSE_OUT


def _stored(A: np.ndarray) -> sp.csr_matrix:
    """Dense rows ``A`` as CSR (what scipy's product takes): 6x as fast as ``csr_matrix(A)``
    (a boolean mask's non-zero positions, where numpy's are slow on floats)."""
    b, d = A.shape
    A = np.ascontiguousarray(A)
    flat = np.flatnonzero(np.not_equal(A, 0))
    indptr = np.searchsorted(flat, np.arange(b + 1, dtype=np.int64) * d)
    index = np.int32 if b * d < 2**31 else np.int64
    return sp.csr_matrix((A.reshape(-1)[flat], (flat % max(d, 1)).astype(index), indptr.astype(index)), shape=(b, d))


def _least_of(pieces: list[np.ndarray]) -> list[np.ndarray]:
    """The elementwise minimum of the pieces of each shape (a piece alone is itself)."""
    out = []
    for shape in dict.fromkeys(T.shape for T in pieces):
        same = [T for T in pieces if T.shape == shape]
        least = same[0] if len(same) == 1 else np.minimum(same[0], same[1])
        for T in same[2:]:
            np.minimum(least, T, out=least)
        out.append(least)
    return out


@fill_doc
class ExactIndex(BaseIndex):
    """Exact k-nearest neighbours by blocked brute force (dense ndarray or sparse CSR).

    Parameters
    ----------
    metric : {"euclidean", "cosine", "manhattan"}, default="euclidean"
        ``cosine`` is ``1 - cos(x, q)`` (a zero row is at distance 1 from everything);
        ``manhattan`` uses scikit-learn's ``pairwise_distances`` for the candidate search.
    precision : {"float32", "float64"}, default="float32"
        Precision of the candidate search (the GEMM).  Returned distances are float64 and the
        result is exact either way (see Notes); float32 is about twice as fast.
    working_memory : float, default=None
        Memory budget in MiB for the temporaries of a query (all threads together): blocks of
        queries are sized so that the proxy block, the selection and the re-ranking fit.  The
        budget is respected down to a single query row per block.  It also decides whether
        sparse indexed data may be densified once (only if the dense float32 copy fits).
        None: the package's setting (:func:`mlneighbors.set_config`, 256 MiB by default),
        read when the index is built.
    sparse_strategy : {"auto", "densify", "sparse"}, default="auto"
        For sparse CSR indexed data: ``"densify"`` keeps a dense float32 copy and uses the
        GEMM; ``"sparse"`` uses scipy's sparse product (never densifies the indexed data);
        ``"auto"`` picks by a cost model (sparse when the rows share few non-zero columns, as
        in corel5k) and never densifies what does not fit ``working_memory``.  Dense indexed
        rows that are mostly zeros (text stored dense, as slashdot's 8 words a row of 1,079)
        take the same choice: ``"auto"`` and ``"sparse"`` may search their stored values
        with the sparse product (not where the rows are searched shifted to a center), the
        distances still from the dense rows.
    n_jobs : int or None, default=None
        Worker threads; None or -1 means all CPUs (like faiss and the BLAS).  Each worker
        runs its own blocks with a single-threaded BLAS.

    Attributes
    ----------
    {index_attributes}
    strategy_ : {"dense", "sparse", "pairwise"}
        How candidates are searched: float GEMM on dense rows (dense data, or sparse data
        densified once), scipy's sparse product (sparse data, or dense rows that are mostly
        zeros), or scikit-learn's pairwise distances (manhattan).

    Notes
    -----
    **Precision.**  Candidates are searched with a float32 GEMM (``precision``); every
    returned distance is computed in float64 from the float64 data (``_distance``: dense
    ``sqrt(sum((x - q) ** 2))``, sparse the same sum over stored entries in column order).
    The candidate search ranks by a cheap proxy (``||x||^2 - 2 q.x``) and keeps every row
    within twice a rigorous rounding-error bound of the k-th smallest proxy; only those are
    re-ranked.  The result is therefore the first k rows in the order (float64 distance, row
    number), whatever the proxy's precision: exact, ties broken by the lower row number, and
    the result for k is the prefix of the result for any larger k.

    **Tolerance against a float64 loop twin** (tests/neighbors): dense data, 0 (bit-identical
    distances and indices, ties included); sparse data, distances within a few ulps (tested at
    rtol 1e-12) and indices identical except among neighbours whose distances agree to that
    level; integer-valued data (binary text features), identical for euclidean and manhattan.

    The index keeps a reference to float64 ``X`` (no copy, as scikit-learn's
    ``NearestNeighbors``); do not modify it after ``build``.

    Examples
    --------
    >>> import numpy as np
    >>> from mlneighbors.neighbors import ExactIndex
    >>> X = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 0.0]])
    >>> dist, idx = ExactIndex().build(X).query([[0.9, 0.0]], k=3)
    >>> idx
    array([[1, 3, 0]])
    >>> dist.round(3).tolist()
    [[0.1, 0.1, 0.9]]
    """

    name: ClassVar[str] = "exact"
    # float32 rows: euclidean and cosine make the float32 GEMM of the proxy from the rows as
    # given (the manhattan path sums in the rows' own precision: a float64 copy); query_rows and
    # loo_query_rows take sets=True (search(..., order=False))
    capabilities: ClassVar[Capabilities] = Capabilities(
        exact=True, metrics=("euclidean", "cosine", "manhattan"), sparse=True, label_masking=("euclidean", "cosine"),
        float32_rows=("euclidean", "cosine"), loo_queries=True, neighbour_sets=True,
    )

    def __init__(
        self,
        *,
        metric: str = "euclidean",
        precision: str = "float32",
        working_memory: float | None = None,
        sparse_strategy: str = "auto",
        n_jobs: int | None = None,
    ) -> None:
        self.metric = metric
        self.precision = precision
        self.working_memory = working_memory
        self.sparse_strategy = sparse_strategy
        self.n_jobs = n_jobs

    # ------------------------------------------------------------------ parameters
    def check_params(self) -> None:
        if self.precision not in ("float32", "float64"):
            raise ValueError(f"precision must be 'float32' or 'float64', got {self.precision!r}")
        if self.sparse_strategy not in ("auto", "densify", "sparse"):
            raise ValueError(f"sparse_strategy must be 'auto', 'densify' or 'sparse', got {self.sparse_strategy!r}")
        wm = self.working_memory
        if wm is not None and (isinstance(wm, bool) or not isinstance(wm, (int, float)) or not wm > 0):
            raise ValueError(f"working_memory must be a positive number of MiB or None, got {wm!r}")
        if self.n_jobs is not None:
            check_positive_int(self.n_jobs, "n_jobs", minimum=-(10**6))
            if self.n_jobs == 0:
                raise ValueError("n_jobs must not be 0 (None or -1 means all CPUs)")

    # ------------------------------------------------------------------ build
    def build_rows(self, X: Matrix) -> None:
        n, d = X.shape
        self._budget = working_memory_bytes(working_memory=self.working_memory)
        self._n_threads = resolve_n_jobs(self.n_jobs)
        self._ref = Reference(X, self.metric)
        if self.metric == "manhattan":
            self._dtype = np.dtype(np.float64)
            self._integral = is_integral(X)
            l1 = abs(X).sum(axis=1)
            self._max_l1 = float(np.max(l1))
            self._strategy = "pairwise"
            return
        # large data: the build's passes over the rows in the worker threads, each its share of
        # them (sparse rows: their densified copy; the passes over their stored values are short)
        shares = row_shares(n, self._n_threads if n * d >= _PARALLEL_BUILD else 1)
        rows = row_shares(n, 1) if sp.issparse(X) else shares
        # slices of rows small enough to stay in the cache (a large temporary is page-faulted in)
        step = max(1, min(self._budget, _BUILD_SLICE_BYTES) // (8 * max(d, 1)))
        counts = column_nonzeros(X, step, rows)
        dtype = self._dtype = gemm_dtype(self.precision, d)
        self._strategy = self._pick_strategy(X, counts)
        stored = None
        if self._strategy == "sparse" and not sp.issparse(X):
            # dense rows, mostly zeros: the model's passes and the product read their stored
            # values (float64: float32 rows' norms are summed in float64, as for their dense form)
            parts = [_stored(self._ref.X[a : min(a + step, n)]) for a in range(0, n, step)]
            stored = sp.vstack(parts, format="csr").astype(np.float64)
        model = self._model = ProxyModel(X, self._ref, self.precision, shift=True, rows=rows, stored=stored)
        if model.center is not None:  # rows far from the origin: the GEMM sees them shifted, never zeros
            self._strategy = "dense"
        if self._strategy == "sparse":
            if stored is None:
                self._XT = model.scaled_rows(0, n).T.tocsr().astype(dtype)
            else:  # scaled by a power of two (exact), as scaled_rows scales the dense rows
                self._XT = (stored * model.scale if model.scale != 1.0 else stored).T.tocsr().astype(dtype)
            self._xn = model.row_sq.astype(dtype) if self.metric == "euclidean" else None
        else:
            cols = self._cols = self._support(counts)
            width = d if cols is None else len(cols)
            Xa = np.empty((n, width + model.extra), dtype=dtype)

            def fill(a0: int, b0: int) -> None:
                for a in range(a0, b0, step):  # sparse rows are densified slice by slice
                    b = min(a + step, b0)
                    part = model.scaled_rows(a, b)
                    part = part if cols is None else part[:, cols]
                    Xa[a:b, :width] = part.toarray() if sp.issparse(part) else part

            shares(fill)
            if model.extra:
                Xa[:, width] = model.row_sq
            self._Xa = Xa

    @staticmethod
    def _support(counts: np.ndarray) -> np.ndarray | None:
        """The columns where some indexed row is not zero (``counts``: :func:`column_nonzeros`),
        when they are fewer than 90 % of the columns (else None): the GEMM of the proxy needs
        no other (a column that is zero in every indexed row adds the same ``q_j^2`` to every
        distance of a query, and nothing to its proxy ``||x||^2 - 2 q.x``)."""
        cols = np.flatnonzero(counts)
        return cols if len(cols) < 0.9 * len(counts) else None

    @property
    def strategy_(self) -> str:
        if not hasattr(self, "_strategy"):
            raise AttributeError("strategy_ is set by build")
        return self._strategy

    def _pick_strategy(self, X: Matrix, counts: np.ndarray) -> str:
        """"sparse" (scipy's product of the stored values) or "dense" (the GEMM), for CSR rows
        and for dense rows that are mostly zeros (slashdot's and corel16k001's binary words:
        under 2 % of the values), by ``sparse_strategy`` and the cost model; ``counts``: the
        values of each column that are not zero (:func:`column_nonzeros`).  Dense rows that the
        proxy sees shifted to a center take the GEMM whatever this says (``build_rows``)."""
        n, d = X.shape
        if sp.issparse(X):
            dense_bytes = n * (d + 1) * self._dtype.itemsize
            if self.sparse_strategy == "auto" and dense_bytes > self._budget:
                return "sparse"
        if self.sparse_strategy != "auto":
            return "sparse" if self.sparse_strategy == "sparse" else "dense"
        t_sparse = sparse_product_ns(counts, n)
        t_dense = _NS_GEMM_MAC * (d + 1) * (4 if self._dtype == np.float32 else 8) / 4
        t_dense /= self._n_threads
        return "sparse" if t_sparse < t_dense else "dense"

    # ------------------------------------------------------------------ query
    def query_rows(self, Q: Matrix, k: int, sets: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """The k nearest rows of validated queries ``Q``; ``sets``: only each query's set of
        them is needed (``rerank``: rows certain from the proxy alone come in proxy order,
        with NaN distances).

        Parameters
        ----------
        Q : ndarray or CSR matrix of shape (n_queries, n_features)
        k : int
        sets : bool, default=False
            Only each query's set of neighbours is needed.

        Returns
        -------
        dist, idx : ndarray of shape (n_queries, k)
        """
        ref = self._ref
        nq = Q.shape[0]
        n = ref.n_samples
        dist = np.empty((nq, k), dtype=np.float64)
        idx = np.empty((nq, k), dtype=np.intp)

        n_threads = self._n_threads
        per_thread = self._budget // n_threads
        itemsize = 8 if self._strategy == "pairwise" else self._dtype.itemsize
        row_bytes = n * (itemsize + 1) + 16 * ref.n_features + 64
        if self._strategy == "sparse":
            row_bytes += n * (itemsize + 4)  # the sparse product before it is densified
        # many indexed rows: blocks of many queries against tiles of the indexed rows (the
        # GEMM of a few queries against all rows packs every row for a few products)
        stream = self._strategy == "dense" and n >= 2 * _TILE_ROWS
        if stream:
            row_bytes = _TILE_ROWS * (itemsize + 1) + 16 * ref.n_features + 64
        rows = int(0.6 * per_thread) // row_bytes
        rows = max(1, min(rows, _STREAM_QUERIES if stream else max(1, _MAX_BLOCK_ELEMENTS // n)))
        if nq * n * (ref.n_features + 1 + _ENTRY_WORK) < _SMALL_WORK:
            n_threads = 1  # the workers' hand-offs would cost more than they gain
        # the same number of equal blocks for every thread: with 4 blocks of 1,500 rows for
        # 4,880 queries on 2 threads, one thread would do 3,000 rows while the other waits
        n_blocks = -(-max(nq, 1) // rows)
        n_blocks = -(-n_blocks // n_threads) * n_threads
        rows = max(1, -(-nq // n_blocks))
        rest = max(per_thread - rows * row_bytes, per_thread // 4)
        starts = iter(range(0, nq, rows))
        lock = threading.Lock()
        stop = threading.Event()  # set when the caller is interrupted: workers end early

        def worker() -> None:
            # one proxy block and one mask per worker, reused: fresh large arrays would be
            # page-faulted in on every block (expensive, especially in a virtual machine), and
            # kept by the thread for its next search (``scratch``)
            buffers: list[np.ndarray | None] = [
                None if self._strategy == "pairwise" else scratch(0, (rows, _TILE_ROWS if stream else n), self._dtype),
                None,  # the mask, made when a block needs it (many ties)
            ]
            try:
                # workers pull block starts one at a time (no queue of pending tasks to hold)
                while True:
                    with lock:
                        a = next(starts, None)
                    if a is None or stop.is_set():
                        return
                    self._search_block(Q, a, min(a + rows, nq), k, rest, dist, idx, buffers, sets)
                    progress.advance(min(a + rows, nq) - a)
            finally:
                for slot, array in enumerate(buffers):
                    keep(slot, array)

        # the blocks done are told to the progress listener, if any (mlneighbors._progress)
        with task("neighbour search", total=nq, unit="rows") as progress:
            if n_threads > 1 and nq > rows:
                on_workers(worker, n_threads, stop.set)
            else:
                worker()
        return dist, idx

    # ------------------------------------------------------------------ leave-one-out
    @fill_doc
    def loo_query_rows(
        self, X: Matrix, rows: np.ndarray | None, m: int, sets: bool = False
    ) -> tuple[np.ndarray, np.ndarray] | None:
        """The ``m`` nearest rows of every indexed row (itself among them; ``loo_kneighbors``
        drops it), from half the products: the queries are the indexed rows, so the dot
        products of row blocks I and J serve both (symmetric leave-one-out).

        Row blocks are taken in order; block I's products with every block J >= I are computed
        (all of block I's rows in each GEMM; on the workers, each thread a share of the
        columns) and kept as the GEMM gives them, ``(|I|, |J|)``: block I reads them along their
        rows, block J (later) along their columns (``_select_split``: nothing is copied or
        transposed).  Euclidean, the GEMM takes both squared norms as two more terms
        (``[-2 x_i, ||x_i||^2, 1]`` against ``[x_j, 1, ||x_j||^2]``), so that each number is the squared
        distance itself, the proxy of both rows of the pair (``ProxyModel.bounds`` with
        ``symmetric``: no norm is added afterwards, where adding each row's norm to the
        products wrote every entry twice more: 14 % of the threads' time in corel16k001's fit
        and predict); cosine, ``-2 x_i.x_j`` is the proxy of both already.  Then block I is
        selected and re-ranked as a block of queries is, on the workers beside the next block's
        GEMMs (``pipeline``).  The answer is the engine's own (the first m by reference
        distance and row), whatever the proxy's rounding.

        None (the plain search answers) for a subset of rows, rows not as validation leaves
        them, other strategies than dense rows, fewer than 3 blocks, or when the kept products
        (at most about n^2 / 4 values) would not fit in the working memory beside the block
        and its selection.

        Parameters
        ----------
        {loo_rows_parameters}
        sets : bool, default=False
            Only each row's set of neighbours is needed.

        Returns
        -------
        dist, idx : ndarray of shape (n_rows, m)
        """
        n, d = self._ref.n_samples, self._ref.n_features
        # rows as validation leaves them (anything else: the plain search validates it)
        if rows is not None or self._strategy != "dense" or not canonical_rows(self, X) or X.shape != (n, d):
            return None
        itemsize = self._dtype.itemsize
        n_threads = self._n_threads if n * n * (d + 1 + _ENTRY_WORK) >= _SMALL_WORK else 1
        size = max(1, min(_MAX_BLOCK_ELEMENTS // n, max(_LOO_MIN_BLOCK, -(-n // _LOO_BLOCKS))))
        size = -(-n // -(-n // size))  # blocks of equal size
        blocks = list(range(0, n, size))
        rest = max(self._budget // (8 * n_threads), 1 << 20)  # per selection and its re-ranking (one a thread)
        model = self._model
        width = self._Xa.shape[1] - model.extra  # the columns kept (``_support``)
        # the products kept at most: while block I is selected, those of the blocks up to I + ahead
        # (their GEMMs may be done) with every block J >= I
        ahead = AHEAD if n_threads > 1 else 0
        nb = len(blocks)
        most_kept = max(sum(min(j, i + ahead) + 1 for j in range(i, nb)) for i in range(nb)) * size * size * itemsize
        if len(blocks) < 3 or most_kept + n * (width + 2) * itemsize + n_threads * rest > self._budget:
            return None
        dist = np.empty((n, m), dtype=np.float64)
        idx = np.empty((n, m), dtype=np.intp)
        A = self._Xa[:, :width]  # the scaled rows (the extra column holds their squared norms)
        if model.extra:  # [x, 1, ||x||^2] against [-2 x, ||x||^2, 1]: the squared distance
            rhs = np.empty((n, width + 2), dtype=self._dtype)
            rhs[:, :width] = A
            rhs[:, width] = 1.0
            rhs[:, width + 1] = self._Xa[:, width]
        else:  # cosine: -2 x_i.x_j is symmetric already
            rhs = A
        # the products of blocks I <= J, (|I|, |J|) as the GEMM gives them: block I's proxy
        # columns of block J, and (read along its columns) block J's of block I; one array for
        # each J, its last piece J's own products, whose pages are touched only as the blocks I
        # fill them and are given back all at once after block J (large, so the system can back
        # it with huge pages: one array for each pair paged its memory in by 4 KiB pages,
        # corel16k001's fit and predict 405-415 ms against 385-395)
        kept: list[np.ndarray | None] = [np.empty((j + 1, size, min(j0 + size, n) - j0), dtype=self._dtype)
                                         for j, j0 in enumerate(blocks)]
        made: dict[int, np.ndarray] = {}  # each block's left-hand side, made once
        making = [threading.Lock() for _ in blocks]

        def products(i: int, c0: int, c1: int) -> None:
            # block I's products with the indexed rows c0:c1 (c0 >= I's first row), into the
            # arrays of the blocks J they fall in
            i0, i1 = blocks[i], min(blocks[i] + size, n)
            with making[i]:
                lhs = made.get(i)
                if lhs is None:
                    lhs = made[i] = np.empty((i1 - i0, rhs.shape[1]), dtype=self._dtype)
                    np.multiply(A[i0:i1], np.array(-2.0, dtype=A.dtype), out=lhs[:, :width])  # exact: a power of two
                    if model.extra:
                        lhs[:, width] = self._Xa[i0:i1, width]
                        lhs[:, width + 1] = 1.0
            for j in range(i, len(blocks)):
                a, b = max(c0, blocks[j]), min(c1, blocks[j] + size, n)
                if a < b:
                    np.matmul(lhs, rhs[a:b].T, out=kept[j][i][: i1 - i0, a - blocks[j] : b - blocks[j]])

        def select(i: int) -> None:
            # block I from its products with the blocks J >= I and the earlier blocks', as a
            # block of queries is
            i0, i1 = blocks[i], min(blocks[i] + size, n)
            pieces = kept[i]
            made.pop(i, None)
            qb = self._ref.prepare(X[i0:i1])
            # the queries are the indexed rows: their norms are known, and they are integers if the data are
            terms = model.indexed_terms(i0, i1, qb)
            bounds = model.bounds(terms, qb, _FIRST_PASS_SLACK, indexed=True, symmetric=bool(model.extra))
            after = [pieces[i][: i1 - i0]] + [T[i][: i1 - i0] for T in kept[i + 1 :]]
            self._select_split(qb, list(pieces[:i]), after, bounds, m, rest, dist[i0:i1], idx[i0:i1], sets)
            progress.advance(i1 - i0)

        def release(j: int) -> None:  # block J's products are read by the selections of blocks I <= J
            kept[j] = None

        with task("neighbour search", total=n, unit="rows") as progress:
            if n_threads == 1:  # the GEMM on the BLAS's own threads
                for i, i0 in enumerate(blocks):
                    products(i, i0, n)
                    select(i)
                    release(i)
            else:
                # each block's products with the rows from its own on, in one share of columns per
                # thread (all of the block's rows in each GEMM: one of 477 rows runs 5-9 % faster
                # than one of 238)
                shares = [(i, c, min(c + -(-(n - i0) // n_threads), n))
                          for i, i0 in enumerate(blocks) for c in range(i0, n, -(-(n - i0) // n_threads))]
                pipeline(len(blocks), shares, products, select, release, n_threads)
        return dist, idx

    def _search_block(
        self,
        Q: Matrix,
        a: int,
        b: int,
        k: int,
        budget: int,
        dist: np.ndarray,
        idx: np.ndarray,
        buffers: list[np.ndarray | None],
        sets: bool = False,
    ) -> None:
        # queries are converted (X's format, cosine normalisation) block by block: bounded memory
        qb = self._ref.prepare(Q[a:b])
        n = self._ref.n_samples
        if buffers[0] is not None and buffers[0].shape[1] < n:  # a tile of the indexed rows
            if self._search_tiles(qb, k, budget, dist[a:b], idx[a:b], buffers[0], sets):
                return
            # ties kept more candidates than the budget holds: whole proxy rows, in blocks that fit
            step = max(1, min(b - a, _MAX_BLOCK_ELEMENTS // n, budget // (2 * n * (self._dtype.itemsize + 1))))
            whole: list[np.ndarray | None] = [np.empty((step, n), dtype=self._dtype), None]
            for a2 in range(a, b, step):
                self._search_block(Q, a2, min(a2 + step, b), k, budget, dist, idx, whole, sets)
            return
        P, bounds = self._proxy(qb, None if buffers[0] is None else buffers[0][: b - a])
        self._select_block(qb, P, bounds, k, budget, dist[a:b], idx[a:b], buffers, sets)

    def _search_tiles(
        self, qb: Matrix, k: int, budget: int, dist: np.ndarray, idx: np.ndarray, tile: np.ndarray, sets: bool = False
    ) -> bool:
        """The prepared queries ``qb`` against the indexed rows tile by tile (many dense rows),
        into ``dist`` and ``idx``; False, with nothing written, when ties keep more candidates
        than ``budget`` holds.

        Each tile's proxy block gives an upper bound of the k-th proxy (its group minima); the
        threshold of a query is the least of its tiles' so far, and a tile keeps its entries
        below it.  The k entries under the least bound were kept by their tile, and every
        entry under the final threshold by its own, so the candidates are those of the whole
        row: ranked as by :meth:`_select_block`.  Rows the re-ranking finds short of
        candidates get their whole proxy row again (rare).
        """
        n = self._ref.n_samples
        model = self._model
        terms = model.terms(qb)
        bounds = model.bounds(terms, qb, _FIRST_PASS_SLACK)
        qa = self._query_rows(qb, terms)
        dtype = self._dtype
        thr = np.full(qb.shape[0], np.inf, dtype=dtype)
        found: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        kept = 0
        for j0 in range(0, n, tile.shape[1]):
            j1 = min(j0 + tile.shape[1], n)
            P = np.matmul(qa, self._Xa[j0:j1].T, out=tile[: qb.shape[0], : j1 - j0])
            mins = group_minima(P, k)
            if mins.shape[1] >= k:  # this tile's bound: k of its entries are below it
                ub = kth_upper_bound(P, k, mins)
                np.minimum(thr, round_up(ub + bounds.slack(ub), dtype), out=thr)
            part = group_survivors(P, k, mins, thr, limit=survivor_limit(P, budget))
            if part is None:
                r, c = mask_entries(P <= thr[:, None])
                part = (r, c, P[r, c])
            found.append((part[0], part[1] + j0, part[2]))
            kept += len(part[0])
            if kept * SURVIVOR_BYTES > budget:
                return False
        r, c, v = (np.concatenate(x) for x in zip(*found, strict=True))
        keep = v <= thr[r]
        cand = sort_entries(r[keep], c[keep], v[keep], n)

        def rescan(short: np.ndarray, thr2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            # whole proxy rows again, as many at once as the budget holds
            step = max(1, budget // (n * (dtype.itemsize + 1)))
            found = []
            for s0 in range(0, len(short), step):
                limit = round_up(thr2[s0 : s0 + step], dtype)[:, None]
                flat = np.flatnonzero(np.matmul(qa[short[s0 : s0 + step]], self._Xa.T) <= limit)
                found.append((short[s0 + flat // n], flat % n))
            return tuple(np.concatenate(x) for x in zip(*found, strict=True))

        slack = bounds.slack(thr.astype(np.float64))
        dist[:], idx[:] = self._first_k(qb, cand, k, bounds, (0, qb.shape[0]), thr, slack, rescan, budget, sets)
        return True

    def _first_k(
        self, qb: Matrix, cand: tuple[np.ndarray, np.ndarray, np.ndarray], k: int, bounds: Bounds,
        rows: tuple[int, int], thr: np.ndarray, slack: np.ndarray, rescan: Any, budget: int, sets: bool
    ) -> tuple[np.ndarray, np.ndarray]:
        """The first k rows of the queries ``rows`` (c0, c1) of ``qb`` from their candidates
        (sorted by query, proxy, column: every entry under the threshold ``thr`` of these
        queries): read from the proxy where it is exact, else re-ranked (``rerank``)."""
        if bounds.from_proxy is not None:
            return exact_first_k(cand, k, bounds, *rows)
        return rerank(self._ref, qb, cand, k, bounds, rows=rows, covered=thr.astype(np.float64), slack=slack,
                      rescan=rescan, budget=budget, sets=sets)

    def _select_block(
        self,
        qb: Matrix,
        P: np.ndarray,
        bounds: Bounds,
        k: int,
        budget: int,
        dist: np.ndarray,
        idx: np.ndarray,
        buffers: list[np.ndarray | None],
        sets: bool = False,
    ) -> None:
        """The k nearest rows of the prepared queries ``qb`` from their proxy block ``P``
        (b, n), written into ``dist`` and ``idx`` (b, k) (``sets``: see ``query_rows``)."""
        n = P.shape[1]
        mins = group_minima(P, k)
        ub = kth_upper_bound(P, k, mins)
        slack = bounds.slack(ub)
        thr = round_up(ub + slack, P.dtype)
        # through the groups when they leave little to read again (long rows), else by one
        # comparison of the block (short rows, or many ties)
        found = group_survivors(P, k, mins, thr, limit=survivor_limit(P, budget), own=True)
        if found is not None:
            chunks = [((0, P.shape[0]), sort_entries(*found, n))]
        else:  # a large part of the rows tie: one mask, its survivors in chunks of rows
            if buffers[1] is None or buffers[1].shape[0] < P.shape[0] or buffers[1].shape[1] != n:
                buffers[1] = scratch(1, P.shape, np.dtype(bool))
            mask = np.less_equal(P, thr[:, None], out=buffers[1][: P.shape[0]])
            chunks = (((c0, c1), survivors(mask[c0:c1], P[c0:c1])) for c0, c1 in survivor_chunks(mask, budget))
        for (c0, c1), cand in chunks:

            def rescan(short: np.ndarray, thr2: np.ndarray, c0: int = c0) -> tuple[np.ndarray, np.ndarray]:
                sub = P[c0 + short] <= round_up(thr2, P.dtype)[:, None]
                flat = np.flatnonzero(sub)
                return short[flat // n], flat % n

            dist[c0:c1], idx[c0:c1] = self._first_k(qb, cand, k, bounds, (c0, c1), thr[c0:c1], slack[c0:c1],
                                                    rescan, budget, sets)

    def _select_split(
        self, qb: Matrix, before: list[np.ndarray], after: list[np.ndarray], bounds: Bounds, k: int, budget: int,
        dist: np.ndarray, idx: np.ndarray, sets: bool
    ) -> None:
        """:meth:`_select_block` of the proxy block ``[T.T for T in before] + after`` (its
        columns in that order) without assembling it: ``before``, blocks of columns stored
        transposed, all of one shape; ``after``, blocks of columns as they are.  Elementwise
        minima of the pieces of one shape, then their groups (the row groups of the stored
        blocks, the column groups of the others), are minima of disjoint groups of entries:
        the k-th least of all of them bounds the k-th proxy, and each piece keeps its
        entries under the threshold by one comparison."""
        b = after[0].shape[0]
        widths = [len(T) for T in before] + [T.shape[1] for T in after]
        starts = np.cumsum([0] + widths).tolist()
        n = starts[-1]
        mins = [group_minima(least, k, axis=0).T for least in _least_of(before)]
        mins += [group_minima(least, k) for least in _least_of(after)]
        mins = np.concatenate(mins, axis=1)
        whole = lambda: np.concatenate([T.T for T in before] + after, axis=1)  # noqa: E731
        if mins.shape[1] < k:  # fewer groups than k (k near n): the whole block
            self._select_block(qb, whole(), bounds, k, budget, dist, idx, [None, None], sets)
            return
        ub = kth_upper_bound(mins, k, mins)
        slack = bounds.slack(ub)
        thr = round_up(ub + slack, mins.dtype)
        masks = [T <= thr for T in before] + [T <= thr[:, None] for T in after]
        if sum(np.count_nonzero(mask) for mask in masks) * SURVIVOR_BYTES > budget:  # many ties: in chunks
            self._select_block(qb, whole(), bounds, k, budget, dist, idx, [None, None], sets)
            return
        found = []
        for i, (T, mask) in enumerate(zip(before + after, masks, strict=True)):
            r, c = mask_entries(mask)
            if i < len(before):  # (indexed row, query) pairs
                r, c = c, r
            found.append((r, c + starts[i], T[c, r] if i < len(before) else T[r, c]))
        # by row, then column: the pieces in column order, each in column order within a row
        r, c, v = (np.concatenate(x) for x in zip(*found, strict=True))
        order = row_value_order(r, v)
        cand = r[order], c[order], v[order]

        def rescan(short: np.ndarray, thr2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            rows = np.concatenate([T[:, short].T for T in before] + [T[short] for T in after], axis=1)
            flat = np.flatnonzero(rows <= round_up(thr2, mins.dtype)[:, None])
            return short[flat // n], flat % n

        dist[:], idx[:] = self._first_k(qb, cand, k, bounds, (0, b), thr, slack, rescan, budget, sets)

    def _query_rows(self, qb: Matrix, terms: QueryTerms) -> np.ndarray:
        """The prepared queries as the GEMM of the dense strategy takes them: the columns of
        ``_Xa`` (``_support``), shifted and scaled by the query factor, and the extra column
        (euclidean)."""
        model = self._model
        cols = getattr(self, "_cols", None)  # (indexes saved before it have every column)
        width = self._Xa.shape[1] - model.extra
        part = qb if cols is None else qb[:, cols]
        qa = np.empty((qb.shape[0], width + model.extra), dtype=self._dtype)
        if getattr(model, "center", None) is None:
            factor = model.query_factor(terms)
            if sp.issparse(part) and part.has_canonical_format:
                # the stored values alone, scaled and rounded as the dense product would, into the
                # zeroed block: no dense float64 copy of the queries (two of them, 9 MB for enron's
                # 579 test rows: growing and trimming the heap by as much on every call)
                qa[:, :width] = 0.0
                qa[np.repeat(np.arange(part.shape[0]), np.diff(part.indptr)), part.indices] = part.data * factor
            elif sp.issparse(part):
                qa[:, :width] = part.toarray() * factor
            else:  # the float64 product rounded into the block as it is written
                np.multiply(part, factor, out=qa[:, :width], casting="same_kind")
        else:  # dense rows (a center is only taken for them)
            part = model.shifted(part, cols)
            part *= model.query_factor(terms)
            qa[:, :width] = part
        if model.extra:
            qa[:, width] = terms.w
        return qa

    def _proxy(self, qb: Matrix, out: np.ndarray | None) -> tuple[np.ndarray, Bounds]:
        """Proxy block ``P`` (b, n), written into ``out`` where the path allows, and the
        rounding-error bounds that go with it."""
        d = self._ref.n_features
        if self._strategy == "pairwise":
            from sklearn.metrics import pairwise_distances

            P = pairwise_distances(qb, self._ref.X, metric="manhattan")
            ql1 = np.asarray(abs(qb).sum(axis=1)).ravel()
            if self._integral and is_integral(qb) and ql1.max() + self._max_l1 < 2.0**52:
                return P, Bounds(exact=lambda v, rows: v.astype(np.float64))
            u = U[np.dtype(np.float64)]
            slack = 2.02 * (d + 16) * u * (ql1 + self._max_l1) + 2.0**-1000
            return P, Bounds(slack=slack)

        model = self._model
        if self._strategy == "sparse" and not sp.issparse(qb):
            # dense rows that are mostly zeros: their norms, integrality and products from their
            # stored values (the reference distances still from qb, by the caller)
            qb = _stored(qb)
        terms = model.terms(qb)
        if self._strategy == "sparse":
            ((qb * model.query_factor(terms)).astype(self._dtype) @ self._XT).toarray(out=out)
            if model.extra:
                out += (self._xn * terms.w).astype(self._dtype) if terms.w != 1.0 else self._xn
        else:
            np.matmul(self._query_rows(qb, terms), self._Xa.T, out=out)
        return out, model.bounds(terms, qb, _FIRST_PASS_SLACK)
