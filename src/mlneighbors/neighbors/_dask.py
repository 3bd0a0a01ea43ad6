"""Exact search on a Dask cluster: shards built and kept on the workers, a tree of merges.

How a search runs
-----------------
``build(X)`` splits the rows into ``n_shards`` contiguous shards and builds every shard into
an ``inner`` index *on a worker*, where it stays (a future per shard; nothing is sent again
per query).  ``query(Q, k)`` splits the queries into row blocks; for every (block, shard)
pair the worker holding the shard computes the shard's top-k with global row numbers, and
the per-shard lists of a block are merged by a tree of tasks (``split_every`` lists per
merge, :func:`~mlneighbors.neighbors.merge_kneighbors`: distance, then lower global row).
With an exact inner index the result is the unsharded exact result, ties included, because
a distance of the exact engine depends only on the two rows (see ``_sharded``).

Where the data lives
--------------------
- NumPy / CSR ``X``: every shard's rows travel inside the task that builds it, so the
  scheduler keeps them as that task's recipe; a worker lost with its shards is replaced by
  running the recipe again on another worker.
- ``dask.array.Array`` ``X`` (dense, or of CSR chunks): shards are rechunked rows of the
  array and are built from its chunks on the workers; the rows never reach the client, and a
  lost shard is recomputed from the array's own graph.
- Queries: NumPy / CSR blocks travel the same way as NumPy shards; the blocks of a dask array
  are computed where they lie; querying with the very object the index was built on
  (leave-one-out, ``loo_kneighbors(index, X, k)``) reads the query rows from the shards
  themselves, so ``X`` is not sent twice.

Only the ``(n, k)`` results come back to the caller.  Every wait is watched: a query whose
cluster has had no worker for ``distributed.scheduler.no-workers-timeout`` (Dask's setting,
10 s when unset) fails with an error instead of waiting forever.
"""

from __future__ import annotations

import copy
import math
import time
import uuid
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp

from .._config import block_rows, get_config
from .._docstrings import fill_doc
from .._progress import task
from ._backend_registry import BACKENDS, resolve_backend
from ._capabilities import METRICS, Capabilities, get_capabilities
from ._exact import ExactIndex
from ._loo import drop_self
from ._protocol import BaseIndex, check_data, check_positive_int, import_optional, is_dask_array, unbuilt_copy
from ._recall import RECALL_SAMPLE, low_recall_share, sample_rows, tie_aware_recall, tie_aware_recalls
from ._sharded import merge_kneighbors

__all__ = ["DaskIndex", "is_dask_array"]

#: per-shard lists merged by one task of the tree reduction (dask's own default for trees)
SPLIT_EVERY = 8
# seconds between two looks at the cluster while a result is awaited
_POLL_S = 0.5
# how long a cluster may have no worker at all before a search fails (when Dask's
# ``distributed.scheduler.no-workers-timeout`` is not set): adaptive clusters scale up from zero
_NO_WORKERS_S = 10.0

_HOW_TO_START = (
    "start one first, e.g. `from distributed import Client, LocalCluster; client = Client(LocalCluster())` "
    "on this machine, or `client = Client('tcp://scheduler-address:8786')` for a running cluster"
)


def check_dask_matrix(X: Any, *, name: str, n_features: int | None = None) -> Any:
    """Validate a dask array without computing it: 2-D, numeric, known row chunks.

    Values (finiteness, the conversion to float64) are checked on the workers, block by block.
    """
    if X.ndim != 2:
        raise ValueError(f"{name} must be a 2-D dask array, got shape {X.shape}")
    if any(math.isnan(c) for c in X.chunks[0]):
        raise ValueError(f"{name} has unknown chunk sizes; call {name}.compute_chunk_sizes() first")
    if np.dtype(X.dtype).kind not in "biuf":
        raise ValueError(f"{name} must hold numbers, got dtype {X.dtype}")
    if n_features is not None and X.shape[1] != n_features:
        raise ValueError(f"{name} has {X.shape[1]} features, but the index was built on X with {n_features} features")
    return X


class _Shard:
    """One shard on a worker: its validated rows, their built index and its first global row."""

    def __init__(self, X: Any, index: Any, start: int) -> None:
        self.X = X
        self.index = index
        self.start = start

    def __sizeof__(self) -> int:
        # what Dask weighs before moving a shard: its rows and the index's arrays (a plain
        # object would weigh a few bytes, and the scheduler would move it freely)
        from dask.sizeof import sizeof

        return sizeof(self.X) + sizeof(vars(self.index))


def _build_shard(X: Any, inner: Any, start: int, working_memory: float) -> _Shard:
    """Validate a block of rows and build the inner index on it (runs on a worker)."""
    from distributed import get_worker

    X = check_data(X, name="X")
    index = unbuilt_copy(inner)
    params = index.get_params() if callable(getattr(index, "get_params", None)) else {}
    defaults = {}
    if "n_jobs" in params and params["n_jobs"] is None:
        defaults["n_jobs"] = get_worker().state.nthreads  # this worker's threads, not the machine's
    if "working_memory" in params and params["working_memory"] is None:
        defaults["working_memory"] = working_memory  # the caller's setting, not the worker's
    if defaults:
        index.set_params(**defaults)
    return _Shard(X, index.build(X), start)


def _query_shard(shard: _Shard, Q: Any, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The shard's top-k for a block of queries, with global row numbers."""
    dist, idx = shard.index.query(Q, min(k, shard.X.shape[0]))
    return np.asarray(dist, dtype=np.float64), np.asarray(idx, dtype=np.intp) + shard.start


def _exact_shard(shard: _Shard, Q: Any, k: int, metric: str) -> tuple[np.ndarray, np.ndarray]:
    """The shard's exact top-k for a few queries (the recall of an approximate inner index)."""
    dist, idx = ExactIndex(metric=metric, n_jobs=1).build(shard.X).query(Q, min(k, shard.X.shape[0]))
    return dist, idx + shard.start


def _shard_recall(shard: _Shard) -> float | None:
    return getattr(shard.index, "recall_", None)


def _merge(k: int, *parts: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """One node of the tree reduction: the k best of some per-shard lists."""
    dists = [p[0] for p in parts]
    idxs = [p[1] for p in parts]
    return merge_kneighbors(dists, idxs, min(k, sum(d.shape[1] for d in dists)))


def _shard_rows(shard: _Shard, a: int, b: int) -> Any:
    return shard.X[a:b]


def _stack(*parts: Any) -> Any:
    return sp.vstack(parts, format="csr") if sp.issparse(parts[0]) else np.concatenate(parts)


def _block(Q: Any) -> Any:
    """A block of queries as a task's result: the scheduler keeps the block as the recipe."""
    return Q


def _no_workers_timeout() -> float:
    import dask

    value = dask.config.get("distributed.scheduler.no-workers-timeout", None)
    return _NO_WORKERS_S if value is None else dask.utils.parse_timedelta(value)


def gather(client: Any, futures: list, what: str = "search", *, fetch: bool = True) -> list | None:
    """Wait for ``futures`` and gather their results (``fetch=False``: only wait, raising the
    first task's error); an error, not a hang, when the cluster has had no worker at all for
    ``distributed.scheduler.no-workers-timeout`` seconds, and an error naming the client when
    it loses its scheduler.

    Workers lost on the way are Dask's business: their tasks, and the data they held, are
    recomputed from their recipes on the workers that remain.
    """
    from concurrent.futures import CancelledError

    from distributed.client import ClosedClientError
    from distributed.comm import CommClosedError

    try:
        _wait(client, futures, what)
        if fetch:
            return client.gather(futures)
    except (CancelledError, ClosedClientError, OSError) as exc:
        # a broken connection is the scheduler's loss even before the client has noticed it;
        # another error of a running client is a task's own (or a cancellation)
        if client.status == "running" and not isinstance(exc, CommClosedError):
            raise
        raise RuntimeError(
            f"the Dask client {describe_client(client)} lost its scheduler during the {what} (the client is "
            f"{client.status}); the {what} cannot finish: start the cluster again and pass a running client "
            "(client=..., or backend_params={'client': client} for a model), or None for Dask's current client"
        ) from exc
    for future in futures:
        if future.status == "error":
            future.result()  # raises the task's exception here
    return None


def _wait(client: Any, futures: list, what: str) -> None:
    import asyncio

    from distributed import wait

    grace = _no_workers_timeout()
    alone_since = None
    # a bar over the tasks (mlneighbors.set_config(progress=True)): a long search on a cluster
    # otherwise runs for minutes without a sign
    with task(f"Dask {what}", total=len(futures), unit="tasks") as progress:
        while True:
            try:
                with client.as_current():  # wait() talks through the current client, which may be another
                    wait(futures, timeout=_POLL_S)
                progress.advance(len(futures) - progress.done)
                return
            except (TimeoutError, asyncio.TimeoutError):
                progress.advance(sum(future.done() for future in futures) - progress.done)
                if client.status != "running":
                    running_client(client)  # waits while it reconnects; an error naming it when it will not
                    continue
                if client.nthreads():
                    alone_since = None
                    continue
                alone_since = time.monotonic() if alone_since is None else alone_since
                if time.monotonic() - alone_since > grace:
                    raise RuntimeError(
                        f"the Dask cluster at {client.scheduler.address} has had no worker for {grace:g} s; "
                        f"the {what} cannot finish (start workers, or set distributed.scheduler.no-workers-timeout "
                        "to wait longer)"
                    ) from None


def describe_client(client: Any) -> str:
    """A client's id and its scheduler's address, also once it is closed (when it has forgotten
    its scheduler, the address is its cluster's or the one it was created with)."""
    address = getattr(getattr(client, "scheduler", None), "address", None)
    if address is None:
        try:
            address = client.cluster.scheduler_address
        except Exception:  # no cluster, or one already closed
            address = None
    if address is None:
        start = getattr(client, "_start_arg", None)  # no public name for it once the client is closed
        address = start if isinstance(start, str) else None
    return f"{getattr(client, 'id', type(client).__name__)} (scheduler {address or 'unknown'})"


def running_client(client: Any) -> Any:
    """``client`` when it is running; while it reconnects, wait up to Dask's connect timeout
    (``distributed.comm.timeouts.connect``, the client's own reconnection limit by default).

    Raises
    ------
    ValueError
        The client is closed, failed or never started (its scheduler was stopped or cannot be
        reached); the message names it and its scheduler, and says what to pass instead.
    """
    import dask

    if client.status == "connecting":
        limit = time.monotonic() + dask.utils.parse_timedelta(dask.config.get("distributed.comm.timeouts.connect"))
        while client.status == "connecting" and time.monotonic() < limit:
            time.sleep(0.05)
    if client.status == "running":
        return client
    raise ValueError(
        f"the Dask client {describe_client(client)} is {client.status}, not running: its scheduler was "
        "stopped or cannot be reached, or the client was closed. Pass a running client (client=..., or "
        "backend_params={'client': client} for a model), or None to use Dask's current client"
    )


def _preferring(*workers: str | None) -> dict:
    """``submit`` keywords that place a task on one of ``workers`` when one of them is up, and
    elsewhere when none is (a loose restriction: lost work is redone on the workers left)."""
    workers = tuple(w for w in workers if w)
    return {"workers": list(workers), "allow_other_workers": True} if workers else {}


@contextmanager
def _large_graphs_expected() -> Iterator[None]:
    """Rows sent inside tasks on purpose (the scheduler keeps them to recompute a lost shard
    or block): Dask's advice to load large data with Dask instead does not apply."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Sending large graph", category=UserWarning)
        yield


@fill_doc
class DaskIndex(BaseIndex):
    """Any index, sharded over the workers of a Dask cluster; exact with the exact inner index.

    Parameters
    ----------
    metric : {"euclidean", "cosine", "manhattan"}, default="euclidean"
        Passed to the inner index (which must support it).
    client : distributed.Client, default=None
        The cluster's client.  None: Dask's current default client (the last one created);
        without one, ``build`` raises ``ValueError`` saying how to start one.  A cluster is
        never started here.  A client is never pickled or saved: a copy of the index (or of a
        model holding it in ``backend_params``) uses the current client.  A closed client, or
        one whose scheduler is gone, raises ``ValueError`` naming it and its scheduler.
    n_shards : int, default=None
        Number of shards (nearly equal contiguous blocks of rows, at most one per row).
        None: one per worker thread of the cluster when the index is built.
    inner : str or index object, default="exact"
        The index of every shard: a registered backend name (:func:`get_index`) or any object
        with ``build(X)`` and ``query(Q, k)``.  Its ``n_jobs`` (when it has one and it is None)
        becomes the threads of the worker holding the shard, and its ``working_memory`` the
        caller's setting (:func:`mlneighbors.set_config`).
    inner_params : dict, default=None
        Parameters of ``inner``; an approximate inner index takes ``recall`` here (each shard
        calibrates its search to it on its own rows).
    recall_k : int, default=10
        The k of ``recall_`` (and of an approximate inner index's own calibration; the
        estimators set it to their ``n_neighbors``).

    Attributes
    ----------
    {index_attributes}
    offsets_ : ndarray of shape (n_shards_ + 1,)
        First global row of every shard, and the total.
    n_shards_ : int
        Number of shards built.
    recall_ : float
        1.0 with an exact inner index; with an approximate one, the tie-aware recall@
        ``recall_k`` of the sharded search (leave-one-out queries of a seeded sample of 1,000
        rows, searched through every shard and merged) against the exact neighbours of the
        same rows, computed shard by shard on the workers.
    low_recall_share_ : float
        0.0 with an exact inner index; with an approximate one, the share of the same sampled
        queries whose recall@``recall_k`` is below one half.

    Notes
    -----
    ``X`` and the queries may be NumPy arrays, SciPy CSR matrices or ``dask.array.Array``
    (dense, or with CSR chunks); see the module docstring for where the rows live and how a
    lost worker is recovered from.  Queries are split into blocks sized from the working
    memory (the query rows plus the lists that one merge holds).  ``query`` returns NumPy
    arrays, as every index; an estimator's ``predict`` on a dask array is lazy instead (see
    ``mlneighbors._dask_estimators``).

    A built index holds futures: copies made by ``pickle`` (a model sent to a worker) refer
    to the same shards while the original index exists, and search from inside a task with
    ``distributed.worker_client``.

    Examples
    --------
    >>> import numpy as np
    >>> from distributed import Client, LocalCluster
    >>> from mlneighbors.neighbors import get_index
    >>> client = Client(LocalCluster(n_workers=2, processes=False))  # doctest: +SKIP
    >>> X = np.random.default_rng(0).normal(size=(1000, 8))
    >>> index = get_index("dask", n_shards=4).build(X)              # doctest: +SKIP
    >>> dist, idx = index.query(X[:3], k=5)                          # doctest: +SKIP
    """

    name: ClassVar[str] = "dask"
    module: ClassVar[str] = "distributed"
    package: ClassVar[str] = "dask[distributed]"
    extra: ClassVar[str] = "dask"

    def __init__(
        self,
        *,
        metric: str = "euclidean",
        client: Any = None,
        n_shards: int | None = None,
        inner: Any = "exact",
        inner_params: dict | None = None,
        recall_k: int = 10,
    ) -> None:
        self.metric = metric
        self.client = client
        self.n_shards = n_shards
        self.inner = inner
        self.inner_params = inner_params
        self.recall_k = recall_k

    def __sklearn_clone__(self) -> DaskIndex:
        # a Client cannot be deep-copied: a copy of the index shares it
        params = {key: value for key, value in self.get_params(deep=False).items() if key != "client"}
        return type(self)(client=self.client, **copy.deepcopy(params))

    def __getstate__(self) -> dict:
        # a pickled index is a handle: shard keys, no client (neither the one given nor the one
        # it used: a copy uses the current client, or a worker's), not the rows it was built from
        state = dict(self.__dict__)
        state.pop("_client", None)
        state.pop("_source", None)
        if "_shards" in state:
            state["_shards"] = [getattr(shard, "key", shard) for shard in state["_shards"]]
        state["client"] = None
        return state

    @property
    def capabilities(self) -> Capabilities:  # type: ignore[override]
        """The inner index's (exact, metrics, sparse rows, prefix-safe, true distances), and
        dask arrays; no ``recall`` of its own (``inner_params`` takes it)."""
        inner = self.inner
        if isinstance(inner, str):
            inner = BACKENDS[inner]() if inner in BACKENDS and inner != self.name else None
        own = get_capabilities(inner) if inner is not None else Capabilities(metrics=METRICS)
        return Capabilities(exact=own.exact, metrics=own.metrics, sparse=own.sparse, prefix_safe=own.prefix_safe,
                            true_distances=own.true_distances, dask_arrays=True)

    # ------------------------------------------------------------------ parameters
    def check_params(self) -> None:
        check_positive_int(self.n_shards, "n_shards", allow_none=True)
        check_positive_int(self.recall_k, "recall_k")
        if self.client is not None and not callable(getattr(self.client, "submit", None)):
            raise TypeError(f"client must be a distributed.Client or None, got {self.client!r}")
        if isinstance(self.inner, str):
            if self.inner == self.name or self.inner not in BACKENDS:
                valid = sorted(b for b in BACKENDS if b != self.name)
                raise ValueError(f"inner must be one of {valid} or an index object, got {self.inner!r}")
        if self.inner_params is not None and not isinstance(self.inner_params, dict):
            raise TypeError(f"inner_params must be a dict or None, got {self.inner_params!r}")

    def _new_client(self) -> Any:
        distributed = import_optional("distributed", backend=self.name, extra="dask", package="dask[distributed]")
        if self.client is not None:
            return running_client(self.client)
        try:
            client = distributed.default_client()
        except ValueError:
            raise ValueError(
                f"backend={self.name!r} needs a Dask client: client=None (as in a model that was saved or "
                "pickled: a client is never kept) and there is no current client; " + _HOW_TO_START
                + ", or give it one: model.set_params(backend_params={'client': client})"
            ) from None
        return running_client(client)

    @contextmanager
    def _session(self) -> Iterator[Any]:
        """The client to talk to the cluster: the one the index was built with, or, inside a
        task on a worker, a ``worker_client`` (it leaves the worker's thread pool while the
        search runs, so the search's own tasks can use it)."""
        from distributed import get_worker, worker_client

        try:
            get_worker()
        except ValueError:
            client = self.__dict__.get("_client")
            if client is None or client.status != "running":
                client = self._client = self._new_client()
            yield client
        else:
            with worker_client() as client:
                yield client

    def _futures(self, client: Any) -> list:
        """The shard futures, bound to ``client`` (a handle holds only their keys)."""
        from distributed import Future

        if all(isinstance(s, Future) and s.client is client for s in self._shards):
            return self._shards
        return [Future(getattr(s, "key", s), client) for s in self._shards]

    def _check_data(self, X: Any, *, name: str) -> Any:
        if is_dask_array(X):
            return check_dask_matrix(X, name=name)
        return check_data(X, name=name)

    # ------------------------------------------------------------------ build
    def build_rows(self, X: Any) -> None:
        """Split the rows into shards and build them on the workers (X validated: array, CSR
        or dask array).

        Parameters
        ----------
        X : ndarray, CSR matrix or dask array of shape (n_samples, n_features)
            The validated rows to index.
        """
        client = self._client = self._new_client()
        inner = resolve_backend(self.inner, self.metric, self.inner_params)  # bad inner: here, not on a worker
        if "recall_k" in getattr(inner, "get_params", dict)() and "recall_k" not in (self.inner_params or {}):
            inner.set_params(recall_k=self.recall_k)
        n = X.shape[0]
        n_shards = self.n_shards
        if n_shards is None:
            n_shards = sum(client.nthreads().values())
            if n_shards == 0:
                raise ValueError("the Dask cluster has no worker yet: pass n_shards, or wait for workers first "
                                 "(client.wait_for_workers(n))")
        bounds = np.unique(np.linspace(0, n, min(n_shards, n) + 1).round().astype(np.intp))
        memory = get_config()["working_memory"]
        tag = uuid.uuid4().hex
        if is_dask_array(X):  # the shards' rows: blocks computed where the chunks lie
            rows = X.rechunk((tuple(np.diff(bounds).tolist()), (X.shape[1],)))
            parts = client.compute(rows.to_delayed().ravel().tolist())
        else:  # the shards' rows travel inside their build tasks
            parts = [X[a:b] for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
        # one shard per worker thread in turn, loosely (allow_other_workers): a lost shard is
        # rebuilt elsewhere, from its task's rows or from the dask array's graph
        spread = [w for w, threads in sorted(client.nthreads().items()) for _ in range(threads)] or [None]
        with _large_graphs_expected():
            shards = [
                client.submit(_build_shard, part, inner, int(a), memory, key=f"mlneighbors-shard-{tag}-{i}",
                              **_preferring(spread[i % len(spread)]))
                for i, (part, a) in enumerate(zip(parts, bounds[:-1], strict=True))
            ]
        gather(client, shards, "build", fetch=False)  # errors in the data (NaN, ...) surface here
        self._shards = shards
        # querying with this very object (leave-one-out: loo_kneighbors(index, X, k)) reads
        # the rows from the shards instead of sending them again
        self._source = X
        self.offsets_ = bounds
        self.n_shards_ = len(shards)
        self.n_samples_fit_, self.n_features_in_ = X.shape  # the recall's queries search the shards
        self.recall_, self.low_recall_share_ = (1.0, 0.0) if self.exact else self._measure_recall(client, X)

    def _measure_recall(self, client: Any, X: Any) -> tuple[float, float]:
        """Tie-aware recall of the sharded approximate search on a seeded sample of rows, and the
        share of those rows whose recall is below one half."""
        n = X.shape[0]
        k = min(self.recall_k, n - 1)
        if k < 1:
            return 1.0, 0.0
        rows = sample_rows(n, RECALL_SAMPLE, 0)
        Q = X[rows]
        Q = check_data(Q.compute() if is_dask_array(Q) else Q, name="X")
        approx = drop_self(*self.query_rows(Q, k + 1), rows, k)
        with _large_graphs_expected():
            parts = [client.submit(_exact_shard, shard, Q, k + 1, self.metric) for shard in self._shards]
        results = gather(client, parts, "recall measurement")
        exact = drop_self(*merge_kneighbors([r[0] for r in results], [r[1] for r in results], k + 1), rows, k)
        return tie_aware_recall(approx[0], exact[0]), low_recall_share(tie_aware_recalls(approx[0], exact[0]))

    # ------------------------------------------------------------------ query
    def query_rows(self, Q: Any, k: int) -> tuple[np.ndarray, np.ndarray]:
        itself = Q is self.__dict__.get("_source")
        rows = block_rows(self._row_bytes(Q, k))
        with self._session() as client:
            shards = self._futures(client)
            tag = uuid.uuid4().hex
            with _large_graphs_expected():
                blocks = self._blocks(client, shards, None if itself else Q, rows, tag)
            # a search runs where its shard lies, even when its block of queries weighs more
            # (loosely: a lost shard is rebuilt elsewhere and its searches follow)
            homes = client.who_has(shards)
            merged = [self._search(client, shards, homes, block, k, f"{tag}-{b}") for b, block in enumerate(blocks)]
            results = gather(client, merged)
        return np.concatenate([r[0] for r in results]), np.concatenate([r[1] for r in results])

    def _row_bytes(self, Q: Any, k: int) -> float:
        """Memory of one query row in a block: its values and the lists one merge holds."""
        d = self.n_features_in_
        if sp.issparse(Q) and Q.shape[0]:
            q_bytes = 12.0 * Q.nnz / Q.shape[0] + 8
        else:
            q_bytes = 8.0 * d
        return q_bytes + 16.0 * k * (SPLIT_EVERY + 1)

    def _blocks(self, client: Any, shards: list, Q: Any, rows: int, tag: str) -> list:
        """Futures of the query blocks, in query order; ``Q=None``: the indexed rows themselves."""
        if Q is None:  # the indexed rows, read from the shards where they lie
            return [self._stacked_rows(client, shards, a, min(a + rows, self.n_samples_fit_), f"{tag}-{a}")
                    for a in range(0, self.n_samples_fit_, rows)]
        if is_dask_array(Q):
            if max(Q.chunks[0], default=0) > rows or len(Q.chunks[1]) > 1:
                Q = Q.rechunk({0: min(rows, max(Q.chunks[0])), 1: -1})
            return client.compute(Q.to_delayed().ravel().tolist())
        return [client.submit(_block, Q[a : a + rows], key=f"mlneighbors-query-{tag}-{a}")
                for a in range(0, Q.shape[0], rows)]

    def _stacked_rows(self, client: Any, shards: list, a: int, b: int, tag: str) -> Any:
        """The future of indexed rows ``a:b``: a piece of every shard they span, taken where
        the shard lies (a task that read several shards would move them), then stacked."""
        starts, stops = self.offsets_[:-1], self.offsets_[1:]
        pieces = [
            client.submit(_shard_rows, shards[s], max(a, start) - start, min(b, stop) - start,
                          key=f"mlneighbors-rows-{tag}-{s}")
            for s, (start, stop) in enumerate(zip(starts, stops, strict=True)) if start < b and stop > a
        ]
        return pieces[0] if len(pieces) == 1 else client.submit(_stack, *pieces, key=f"mlneighbors-stack-{tag}")

    def _search(self, client: Any, shards: list, homes: Any, block: Any, k: int, tag: str) -> Any:
        """The future of one block's global top-k: every shard's, merged by a tree."""
        parts = [client.submit(_query_shard, shard, block, k, key=f"mlneighbors-knn-{tag}-{s}",
                               **_preferring(*homes.get(shard.key, ())))
                 for s, shard in enumerate(shards)]
        level = 0
        while len(parts) > 1:
            parts = [client.submit(_merge, k, *parts[i : i + SPLIT_EVERY], key=f"mlneighbors-merge-{tag}-{level}-{i}")
                     for i in range(0, len(parts), SPLIT_EVERY)]
            level += 1
        return parts[0]
