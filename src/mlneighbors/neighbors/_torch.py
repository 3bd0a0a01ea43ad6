"""Exact k-nearest neighbours on a torch device (a CUDA GPU, or the CPU).

The design of :class:`~mlneighbors.neighbors.ExactIndex` with the GEMM and the candidate
selection on the device; the result is the same, neighbour for neighbour.

How a block of queries is answered
----------------------------------
1. **Proxy on the device.**  One float32 GEMM of the augmented rows ``[s x, s^2 ||x||^2, 1]``
   (euclidean; ``x_hat`` for cosine) with ``[-2 w s q, w, 0]``, exactly the numbers the CPU
   engine multiplies (``_proxy.ProxyModel``), zero-padded to a multiple of 8 columns (exact
   zeros change no sum).  TF32 is switched off for the GEMM whatever torch's global setting:
   the rounding-error bound assumes float32 products.  Sparse rows are densified on the
   device, or the queries stay sparse for torch's CSR product (``sparse_strategy``).
2. **Integer data** (binary text features, counts): the query's last column carries
   ``||q||^2``, so the GEMM gives the squared distance itself, exactly (every partial sum is
   an integer below 2**24); it is packed with the row number into one integer key,
   ``dist2 * n + row``, and ``torch.topk`` of the keys *is* the first k by (distance, row):
   keys are distinct, so the order of ``topk`` among equal values never matters.  Distances
   are ``sqrt(dist2)``, bit for bit the reference distances.
3. **Other data**: ``torch.topk`` takes the ``c = k + max(16, k // 2)`` smallest proxies (ties
   in any order: only the set is used).  On the host, the float64 reference distances of the k
   best by proxy bound the k-th distance, which gives a rigorous proxy threshold (the CPU
   engine's ``refine``); the candidates within it are re-ranked by (reference distance, row)
   (``_proxy.rerank``).  Every row with a proxy below the c-th is among the candidates; a
   query whose threshold reaches the c-th proxy (many rows tied at the k-th distance) is
   searched again on the device, every row under its threshold kept.

Device memory
-------------
The plan (``_torch_plan``: the budget, the shard and block sizes, the candidates, the key
type, densified or sparse queries) is made apart from the search.  The index is stored once
on the device (float32, ``n x (d + 2)``) when it takes at most half of the budget
(``memory_budget``, else the free device memory from ``torch.cuda.mem_get_info``); otherwise
it is cut into shards that stream through the device at every query, each shard's exact top-k
merged by (distance, row) like :class:`~mlneighbors.neighbors.ShardedIndex`.  Blocks of
queries are sized from what is left.  An out-of-memory error of the device is caught: the
cache is released, the block (or shard) halved and the work retried; a single row that still
does not fit raises ``MemoryError``.

Host threads finish the blocks (reference distances, re-ranking) while the device computes
the next ones.
"""

from __future__ import annotations

import contextlib
import math
import warnings
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from types import ModuleType
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp

from .._config import working_memory_bytes
from .._docstrings import fill_doc
from ._capabilities import Capabilities
from ._distance import Matrix, Reference
from ._protocol import BaseIndex, import_optional
from ._proxy import EXACT_INT, Bounds, ProxyModel, QueryTerms, rerank
from ._select import round_up
from ._sharded import merge_kneighbors
from ._threads import thread_pool
from ._torch_plan import DevicePlan, candidates, choose_strategy, key_dtype, padded_width

__all__ = ["TorchIndex"]


def _import_torch() -> ModuleType:
    return import_optional("torch", backend="torch", extra="gpu")


def _oom_errors(torch: ModuleType) -> tuple[type[BaseException], ...]:
    """The exceptions of a device that ran out of memory (torch.OutOfMemoryError from 2.5 on)."""
    return (getattr(torch, "OutOfMemoryError", None) or torch.cuda.OutOfMemoryError,)


def resolve_device(torch: ModuleType, device: Any) -> str:
    """The torch device string for ``device`` (None: the current GPU when one is visible,
    else the CPU); ``ValueError`` for a device that is unknown or not available here."""
    if device is None:
        return f"cuda:{torch.cuda.current_device()}" if torch.cuda.is_available() else "cpu"
    if isinstance(device, torch.device):
        device = str(device)
    if not isinstance(device, str):
        raise TypeError(f"device must be None or a string such as 'cuda' or 'cpu', got device={device!r}")
    try:
        dev = torch.device(device)
    except (RuntimeError, ValueError):
        raise ValueError(f"device must be None, 'cpu', 'cuda' or 'cuda:N', got device={device!r}") from None
    if dev.type == "cpu":
        return "cpu"
    if dev.type != "cuda":
        raise ValueError(f"device must be None, 'cpu', 'cuda' or 'cuda:N', got device={device!r} ({dev.type})")
    if not torch.cuda.is_available():
        raise ValueError(
            f"device={device!r} is not available: this torch ({torch.__version__}) sees no CUDA device; "
            "use device='cpu', or device=None for the GPU when there is one"
        )
    count = torch.cuda.device_count()
    index = torch.cuda.current_device() if dev.index is None else dev.index
    if index >= count:
        raise ValueError(f"device={device!r} is not available: torch sees {count} CUDA device(s)")
    return f"cuda:{index}"


@contextlib.contextmanager
def _ieee_float32(torch: ModuleType) -> Iterator[None]:
    """float32 matrix products in IEEE float32 (no TF32 or bf16), whatever the global setting;
    the previous setting is restored afterwards."""
    new_api = [getattr(torch.backends, name, None) for name in ("cuda", "mkldnn")]
    new_api = [b.matmul for b in new_api if b is not None and hasattr(b, "matmul")]
    if new_api and all(_has_fp32_precision(m) for m in new_api):  # torch >= 2.9
        previous = [m.fp32_precision for m in new_api]
        for m in new_api:
            m.fp32_precision = "ieee"
        try:
            yield
        finally:
            for m, value in zip(new_api, previous, strict=True):
                m.fp32_precision = value
        return
    previous_precision = torch.get_float32_matmul_precision()  # pragma: no cover - torch < 2.9
    previous_tf32 = torch.backends.cuda.matmul.allow_tf32  # pragma: no cover
    torch.set_float32_matmul_precision("highest")  # pragma: no cover
    torch.backends.cuda.matmul.allow_tf32 = False  # pragma: no cover
    try:  # pragma: no cover
        yield
    finally:  # pragma: no cover
        torch.set_float32_matmul_precision(previous_precision)
        torch.backends.cuda.matmul.allow_tf32 = previous_tf32


def _has_fp32_precision(matmul: Any) -> bool:
    try:
        return isinstance(matmul.fp32_precision, str)
    except (AttributeError, RuntimeError):
        return False


def _device_select(torch: ModuleType, qa: Any, data: Any, take: int, keys: tuple | None) -> tuple[Any, Any]:
    """The device work of one block: the proxy block by one product and its selection.

    ``qa`` is the (b, D) query matrix (dense, or sparse CSR), ``data`` the shard's (D, n)
    rows (a transposed view or contiguous).  Without ``keys``: the ``take`` smallest
    proxies of every row and their columns (``torch.topk``, ascending).  With
    ``keys = (n, dtype, arange)`` (the product is the exact squared distance, an integer):
    the ``take`` smallest keys ``dist2 * n + column`` and None.
    """
    if qa.layout == torch.sparse_csr:
        P = torch.sparse.mm(qa, data)
    else:
        P = qa @ data
    if keys is None:
        vals, cols = torch.topk(P, take, dim=1, largest=False, sorted=True)
        return vals, cols
    n, dtype, arange = keys
    K = P.to(dtype)
    del P
    torch.add(arange, K, alpha=n, out=K)
    return torch.topk(K, take, dim=1, largest=False, sorted=True).values, None


class _Shard:
    """Rows ``start:stop`` of the index on the device: ``data`` (D, n_rows), a
    transposed view of the row-major copy (dense strategy) or a contiguous copy (sparse)."""

    def __init__(self, start: int, stop: int, data: Any) -> None:
        self.start = start
        self.stop = stop
        self.data = data
        self.arange: dict[Any, Any] = {}  # column numbers per key dtype, made once


class _Block:
    """One block of queries between its launch on the device and its finish on the host."""

    def __init__(self, a: int, b: int, qb: Matrix, terms: QueryTerms, bounds: Bounds | None) -> None:
        self.a, self.b = a, b
        self.qb = qb
        self.terms = terms
        self.bounds = bounds  # None: exact integer keys
        self.host: tuple[Any, Any] = (None, None)
        self.event: Any = None


@fill_doc
class TorchIndex(BaseIndex):
    """Exact k-nearest neighbours with PyTorch: the GEMM and the selection on a GPU (or the CPU).

    The same results as :class:`ExactIndex` (``get_index("exact")``), neighbour for neighbour:
    the first k of all indexed rows in the order (float64 reference distance, row number),
    ties broken by the lower row, the result for k a prefix of any larger k; distances are the
    reference distances, bit for bit.

    Parameters
    ----------
    metric : {"euclidean", "cosine"}, default="euclidean"
        ``cosine`` is ``1 - cos(x, q)`` (a zero row is at distance 1 from everything).
    device : str or None, default=None
        ``"cuda"``, ``"cuda:N"`` or ``"cpu"``; None: the current GPU when torch sees one, else
        the CPU.  Resolved when the index is built (and again when a pickled index is first
        queried: a model saved on a GPU machine predicts on one without).
    memory_budget : float or None, default=None
        MiB of device memory for the index and the temporaries of a query together.  None:
        on a GPU, the free memory (``torch.cuda.mem_get_info``) when the index is built and
        when it is queried; on the CPU, the index plus the package's ``working_memory`` for
        the temporaries (:func:`mlneighbors.set_config`).  An index larger than half of the
        budget is cut into shards that stream through the device at every query.
    sparse_strategy : {"auto", "densify", "sparse"}, default="auto"
        For sparse CSR data: ``"densify"`` densifies every block of queries on the device for
        the dense GEMM; ``"sparse"`` keeps the queries sparse (torch's CSR product);
        ``"auto"`` picks by a cost model (stored values per row against the number of
        features; its measurements: see the neighbour-search guide).

    Attributes
    ----------
    {index_attributes}
    device_ : str
        The resolved device, e.g. ``"cuda:0"`` or ``"cpu"``.
    strategy_ : {"dense", "sparse"}
        How the proxy is computed (see ``sparse_strategy``).
    n_shards_ : int
        Shards the index is cut into on the device (1: stored there once).

    Notes
    -----
    Needs PyTorch (``pip install 'mlneighbors[gpu]'``); it is imported when the index is built.
    See the module ``mlneighbors.neighbors._torch`` for the design.  The index keeps a
    reference to float64 ``X`` on the host (the reference distances are computed there) and a
    float32 copy on the device; pickling drops the device copy, which is made again on the
    first query.

    Examples
    --------
    >>> import numpy as np
    >>> from mlneighbors.neighbors import get_index
    >>> X = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 0.0]])
    >>> index = get_index("torch", device="cpu").build(X)
    >>> dist, idx = index.query([[0.9, 0.0]], k=3)
    >>> idx
    array([[1, 3, 0]])
    >>> dist.round(3).tolist()
    [[0.1, 0.1, 0.9]]
    """

    name: ClassVar[str] = "torch"
    capabilities: ClassVar[Capabilities] = Capabilities(exact=True, metrics=("euclidean", "cosine"), sparse=True)
    module: ClassVar[str] = "torch"
    extra: ClassVar[str] = "gpu"

    def __init__(
        self,
        *,
        metric: str = "euclidean",
        device: str | None = None,
        memory_budget: float | None = None,
        sparse_strategy: str = "auto",
    ) -> None:
        self.metric = metric
        self.device = device
        self.memory_budget = memory_budget
        self.sparse_strategy = sparse_strategy

    # ------------------------------------------------------------------ parameters
    def check_params(self) -> None:
        mb = self.memory_budget
        if mb is not None and (isinstance(mb, bool) or not isinstance(mb, (int, float)) or not 0 < mb < math.inf):
            raise ValueError(f"memory_budget must be a positive number of MiB or None, got memory_budget={mb!r}")
        if self.sparse_strategy not in ("auto", "densify", "sparse"):
            raise ValueError(
                f"sparse_strategy must be 'auto', 'densify' or 'sparse', got sparse_strategy={self.sparse_strategy!r}"
            )

    @property
    def device_(self) -> str:
        if not hasattr(self, "_ref"):
            raise AttributeError("device_ is set by build")
        return self._device(_import_torch())

    @property
    def strategy_(self) -> str:
        if not hasattr(self, "_strategy"):
            raise AttributeError("strategy_ is set by build")
        return self._strategy

    @property
    def n_shards_(self) -> int:
        if not hasattr(self, "_ref"):
            raise AttributeError("n_shards_ is set by build")
        self._resident(_import_torch())
        return -(-self._ref.n_samples // self._shard_rows)

    # ------------------------------------------------------------------ build
    def build_rows(self, X: Matrix) -> None:
        torch = _import_torch()
        self._device_name = resolve_device(torch, self.device)
        self._ref = Reference(X, self.metric)
        self._model = ProxyModel(X, self._ref, "float32")  # the precision: float32 but for very many features
        # euclidean rows carry ||x||^2 and a 1 (the query's ||q||^2 when the proxy is exact)
        self._width = padded_width(X.shape[1], self._model.extra)
        self._strategy = choose_strategy(X, self.sparse_strategy, self._device_name, self._width)
        self._shards: list[_Shard] | None = None
        self._shard_rows: int | None = None
        self._resident(torch)  # on the device now: a lack of memory shows at build

    def _device(self, torch: ModuleType) -> str:
        """The resolved device (again after unpickling: the machine may have changed)."""
        if getattr(self, "_device_name", None) is None:
            self._device_name = resolve_device(torch, self.device)
        return self._device_name

    def _plan(self, torch: ModuleType) -> DevicePlan:
        """The memory plan on the device of now (again after unpickling)."""
        return DevicePlan(n_rows=self._ref.n_samples, width=self._width, dtype=self._model.dtype,
                          device=self._device(torch), memory_budget=self.memory_budget)

    def _temporary_bytes(self, torch: ModuleType, shard: _Shard) -> float:
        """Bytes for the temporaries of a query while ``shard`` is on the device."""
        plan = self._plan(torch)
        resident = sum(s.stop - s.start for s in self.__dict__.get("_shards") or [])
        return plan.temporary_bytes(plan.free_memory(torch), resident, shard.stop - shard.start)

    def _resident(self, torch: ModuleType) -> list[_Shard] | None:
        """The index stored on the device, or None when it streams in shards.

        The shard size comes from the budget (on first use: again after unpickling, on the
        machine and device of then); one shard is uploaded once and kept.
        """
        n = self._ref.n_samples
        if getattr(self, "_shard_rows", None) is None:
            self._shards = None
            plan = self._plan(torch)
            self._shard_rows = plan.shard_rows(plan.free_memory(torch))
        if self._shards is None and self._shard_rows == n:
            try:
                self._shards = [self._upload(torch, 0, n)]
            except _oom_errors(torch):
                self._release(torch)
                self._shard_rows = max(1, n // 2)  # it did not fit: stream it
        return self._shards

    def _upload(self, torch: ModuleType, a: int, b: int) -> _Shard:
        """Rows ``a:b`` of the index on the device (the GEMM's precision), converted in budgeted
        slices."""
        model, dev, d = self._model, self._device(torch), self._ref.n_features
        # the sparse product wants (D, n) contiguous, the GEMM takes the transposed view of (n, D)
        transposed = self._strategy == "sparse"
        shape = (self._width, b - a) if transposed else (b - a, self._width)
        buffer = torch.zeros(shape, dtype=getattr(torch, model.dtype.name), device=dev)
        rows = buffer.T if transposed else buffer
        step = DevicePlan.upload_rows(d)
        for lo in range(a, b, step):
            hi = min(lo + step, b)
            rows[lo - a : hi - a, :d] = self._to_device(torch, model.scaled_rows(lo, hi).astype(model.dtype))
        if model.extra:
            rows[:, d] = torch.from_numpy(model.row_sq[a:b].astype(model.dtype)).to(dev)
            rows[:, d + 1] = 1.0
        return _Shard(a, b, buffer if transposed else buffer.T)

    def _to_device(self, torch: ModuleType, part: Matrix, *, sparse: bool = False) -> Any:
        """A host matrix on the device: dense, or CSR (densified there unless ``sparse``)."""
        dev = self._device(torch)
        if not sp.issparse(part):
            return torch.from_numpy(np.ascontiguousarray(part)).to(dev)
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="Sparse CSR tensor support is in beta")
            # torch 2.11 says so once even where check_invariants=False is passed (2.13 does not)
            warnings.filterwarnings("ignore", message="Sparse invariant checks are implicitly disabled")
            csr = torch.sparse_csr_tensor(
                torch.from_numpy(part.indptr.astype(np.int64)),
                torch.from_numpy(part.indices.astype(np.int64)),
                torch.from_numpy(part.data),
                size=part.shape,
                check_invariants=False,
            ).to(dev)
            return csr if sparse else csr.to_dense()

    def _release(self, torch: ModuleType) -> None:
        if self._device(torch).startswith("cuda"):
            torch.cuda.empty_cache()

    def __getstate__(self) -> dict[str, Any]:
        # no device tensors in a pickle: the device copy is made again on first use, on the
        # device of the machine that loads it
        state = super().__getstate__()
        return {key: value for key, value in state.items() if key not in ("_shards", "_shard_rows", "_device_name")}

    # ------------------------------------------------------------------ query
    def query_rows(self, Q: Matrix, k: int) -> tuple[np.ndarray, np.ndarray]:
        torch = _import_torch()
        with _ieee_float32(torch), torch.no_grad():
            resident = self._resident(torch)
            if resident is not None:
                return self._search_shard(torch, resident[0], Q, k)
            # shards stream through the device; the exact top-k of each is merged by
            # (distance, row), as ShardedIndex does
            n = self._ref.n_samples
            dist, idx = np.empty((Q.shape[0], 0)), np.empty((Q.shape[0], 0), dtype=np.intp)
            shards = self._halving(torch, n, self._shard_rows, lambda a, b: self._upload(torch, a, b), "index row")
            for _, stop, shard in shards:
                d, i = self._search_shard(torch, shard, Q, min(k, shard.stop - shard.start))
                dist, idx = merge_kneighbors([dist, d], [idx, i], min(k, stop))
                del shard  # before the next shard is uploaded
                self._release(torch)
            return dist, idx

    def _halving(
        self, torch: ModuleType, n: int, rows: int, run: Callable[[int, int], Any], what: str
    ) -> Iterator[tuple[int, int, Any]]:
        """``run(a, b)`` over consecutive chunks of ``range(n)`` of ``rows`` items; a chunk that
        runs the device out of memory is halved and tried again."""
        a = 0
        while a < n:
            b = min(a + rows, n)
            try:
                out = run(a, b)
            except _oom_errors(torch) as exc:
                self._release(torch)
                if b - a == 1:
                    raise MemoryError(
                        f"TorchIndex: device {self._device(torch)!r} ran out of memory with a single {what} "
                        f"({self._ref.n_samples} indexed rows of {self._width} {self._model.dtype} columns); "
                        "set a smaller memory_budget or free device memory"
                    ) from exc
                rows = (b - a) // 2
                continue
            yield a, b, out
            out = None  # not held while the next chunk is made
            a = b

    def _search_shard(self, torch: ModuleType, shard: _Shard, Q: Matrix, k: int) -> tuple[np.ndarray, np.ndarray]:
        """The exact k nearest rows of the shard for every query (global row numbers)."""
        nq = Q.shape[0]
        n = shard.stop - shard.start
        take = candidates(k, n)
        dist = np.empty((nq, k), dtype=np.float64)
        idx = np.empty((nq, k), dtype=np.intp)
        plan = self._plan(torch)
        rows = plan.query_rows(nq, n, take, self._temporary_bytes(torch, shard))

        def launch(a: int, b: int) -> _Block:
            return self._launch(torch, shard, Q, a, b, k, take)

        # host threads finish blocks (reference distances, re-ranking; numpy releases the GIL)
        # while this thread queues the next blocks on the device; a few blocks at most wait
        # (on the CPU device torch's own threads take the cores: one host thread)
        workers = plan.host_workers()
        pool = thread_pool(workers)
        pending: deque[Future] = deque()
        for _, _, block in self._halving(torch, nq, rows, launch, "query row"):
            pending.append(pool.submit(self._finish, torch, shard, block, k, dist, idx))
            while len(pending) > workers:
                pending.popleft().result()
        while pending:
            pending.popleft().result()
        return dist, idx

    def _query_matrix(
        self, torch: ModuleType, qb: Matrix, terms: QueryTerms, *, sparse: bool, exact: bool = False
    ) -> Any:
        """The (b, D) query rows of the GEMM on the device (float32, or float64 where the model
        says so: more than about 260,000 features).

        Euclidean: ``[-2 w s q, w, 0, 0...]`` against the rows ``[s x, s^2 ||x||^2, 1, 0...]``:
        the proxy.  ``exact``: ``[-2 q, 1, ||q||^2, 0...]``, the squared distance itself (exact
        integers).  Cosine: ``[-2 q_hat, 0...]``.
        """
        model, d = self._model, self._ref.n_features
        b = qb.shape[0]
        scaled = (qb * model.query_factor(terms)).astype(model.dtype)
        tail = np.zeros((b, self._width - d), dtype=model.dtype)
        if model.extra:
            tail[:, 0] = terms.w
            if exact:
                tail[:, 1] = terms.qsq
        if sparse:  # the extra columns as more stored values of the CSR rows
            return self._to_device(torch, sp.hstack([scaled, sp.csr_matrix(tail)], format="csr"), sparse=True)
        qa = torch.empty((b, self._width), dtype=getattr(torch, model.dtype.name), device=self._device(torch))
        qa[:, :d] = self._to_device(torch, scaled)
        qa[:, d:] = self._to_device(torch, tail)
        return qa

    def _launch(self, torch: ModuleType, shard: _Shard, Q: Matrix, a: int, b: int, k: int, take: int) -> _Block:
        """Queue the device work of queries ``a:b`` and the copy of its result to the host."""
        model = self._model
        qb = self._ref.prepare(Q[a:b])  # X's format, normalised for cosine
        terms = model.terms(qb)
        # integer data whose squared distances (and every partial sum) are exact in the GEMM
        top = (terms.top + model.max_norm) ** 2
        exact = self.metric == "euclidean" and model.exact_proxy(terms, qb) and top < EXACT_INT[model.dtype]
        block = _Block(a, b, qb, terms, None if exact else model.bounds(terms, qb))
        dev = self._device(torch)
        qa = self._query_matrix(torch, qb, terms, sparse=self._strategy == "sparse", exact=exact)
        keys = None
        if exact:
            n = shard.stop - shard.start
            dtype = getattr(torch, key_dtype(top, n))  # the largest key fits
            if dtype not in shard.arange:
                shard.arange[dtype] = torch.arange(n, dtype=dtype, device=dev)
            keys = (n, dtype, shard.arange[dtype])
        vals, cols = _device_select(torch, qa, shard.data, k if exact else take, keys)
        if dev == "cpu":
            block.host = (vals, cols)
            return block
        host = []
        for t in (vals, cols):
            if t is None:
                host.append(None)
                continue
            h = torch.empty(t.shape, dtype=t.dtype, pin_memory=True)
            h.copy_(t, non_blocking=True)
            host.append(h)
        block.host = (host[0], host[1])
        block.event = torch.cuda.Event()
        block.event.record(torch.cuda.current_stream(dev))
        return block

    def _finish(
        self, torch: ModuleType, shard: _Shard, block: _Block, k: int, dist: np.ndarray, idx: np.ndarray
    ) -> None:
        """Host side of a block: decode the keys, or re-rank the candidates exactly."""
        if block.event is not None:
            block.event.synchronize()
        a, b = block.a, block.b
        vals = block.host[0].numpy()
        if block.bounds is None:  # exact integer keys: (squared distance, row) order
            n = shard.stop - shard.start
            dist2, cols = np.divmod(vals.astype(np.int64), n)
            dist[a:b] = np.sqrt(dist2.astype(np.float64))
            idx[a:b] = cols + shard.start
            return
        cols = block.host[1].numpy()
        nb, take = cols.shape
        r = np.repeat(np.arange(nb), take)
        c = cols.ravel() + shard.start  # row numbers of the whole index
        covered = np.full(nb, np.inf)
        if take < shard.stop - shard.start:  # every entry below the last candidate was taken
            covered = np.nextafter(vals[:, -1], vals.dtype.type(-np.inf)).astype(np.float64)
        slack = block.bounds.slack(vals[:, k - 1].astype(np.float64))

        def rescan(short: np.ndarray, thr: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            return self._rescan(torch, shard, block, short, thr)

        dist[a:b], idx[a:b] = rerank(
            self._ref, block.qb, (r, c, vals.ravel()), k, block.bounds,
            rows=(0, nb), covered=covered, slack=slack, rescan=rescan, budget=working_memory_bytes(),
        )

    def _rescan(
        self, torch: ModuleType, shard: _Shard, block: _Block, short: np.ndarray, thr: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """Every entry of the block rows ``short`` with proxy <= ``thr``, from the device."""
        n = shard.stop - shard.start
        rows_out, cols_out = [], []
        qb_short = block.qb[short]
        rows = self._plan(torch).rescan_rows(len(short), n, self._temporary_bytes(torch, shard))

        def run(a: int, b: int) -> tuple[np.ndarray, np.ndarray]:
            # the block's own terms (its factor w): the proxies the thresholds are about
            qa = self._query_matrix(torch, qb_short[a:b], block.terms, sparse=False)
            P = qa @ shard.data
            limit = torch.from_numpy(round_up(thr[a:b], self._model.dtype)).to(P.device)
            hits = torch.nonzero(P <= limit[:, None]).cpu().numpy()
            return short[a + hits[:, 0]], hits[:, 1] + shard.start

        for _, _, (r, c) in self._halving(torch, len(short), rows, run, "query row"):
            rows_out.append(r)
            cols_out.append(c)
        return np.concatenate(rows_out), np.concatenate(cols_out)

