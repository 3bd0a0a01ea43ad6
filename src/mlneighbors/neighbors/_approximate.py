"""Approximate backends: faiss (IVF-Flat, HNSW), hnswlib and pynndescent.

Each library is imported only when an index is built; a missing one raises ``ImportError``
naming the extra to install.  Each adapter is normalised to the protocol the same way:

- the library proposes k candidate rows per query (libraries differ: hnswlib and pynndescent
  return ``(idx, dist)``, faiss and hnswlib squared L2, faiss pads with ``-1``, hnswlib raises
  when ``ef`` is too small to find k);
- the candidates' distances are recomputed in float64 by the same reference the exact index
  uses, and each row is sorted by (distance, index): returned distances are true distances,
  directly comparable with the exact backend's, and ties go to the lower index;
- a row the library could not fill with k distinct valid rows (``-1`` padding, duplicates)
  is answered exactly by brute force, so there is never ``-1`` padding.

Cosine is searched as euclidean distance between L2-normalised rows (same order for non-zero
rows) for faiss and hnswlib; pynndescent uses its own cosine.  faiss and hnswlib need dense
float32 vectors: CSR input is densified for them (pynndescent takes CSR as is).
"""

from __future__ import annotations

import math
import numbers
from types import ModuleType
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp
from sklearn.utils import check_random_state

from .._config import working_memory_bytes
from ._base import BaseIndex, check_positive_int, import_optional, resolve_n_jobs
from ._distance import Matrix, Reference

__all__ = ["FaissHNSWIndex", "FaissIVFIndex", "HnswlibIndex", "PyNNDescentIndex"]



def _seed(random_state: Any) -> int:
    """An int seed for libraries that take one (faiss, hnswlib)."""
    if random_state is None or isinstance(random_state, numbers.Integral):
        return 0 if random_state is None else int(random_state)
    return int(check_random_state(random_state).randint(0, 2**31 - 1))


def _dense32(A: Matrix) -> np.ndarray:
    A = A.toarray() if sp.issparse(A) else A
    return np.ascontiguousarray(A, dtype=np.float32)


class ApproximateIndex(BaseIndex):
    """Shared machinery of the approximate adapters (re-ranking, repairs, lazy import)."""

    exact: ClassVar[bool] = False
    module: ClassVar[str] = ""
    extra: ClassVar[str] = ""
    package: ClassVar[str] = ""

    def _library(self) -> ModuleType:
        return import_optional(self.module, backend=self.name, extra=self.extra, package=self.package)

    def _build(self, X: Matrix) -> None:
        lib = self._library()
        self._ref = Reference(X, self.metric)
        self._build_library(lib, X)

    def _query(self, Q: Matrix, k: int) -> tuple[np.ndarray, np.ndarray]:
        ref = self._ref
        Qp = ref.prepare(Q)
        cand = np.asarray(self._search_library(Q, Qp, k), dtype=np.intp).reshape(Q.shape[0], k)
        srt = np.sort(cand, axis=1)
        bad = (srt[:, 0] < 0) | (srt[:, -1] >= ref.n_samples) | np.any(srt[:, 1:] == srt[:, :-1], axis=1)
        cand[bad] = 0
        dist = ref.grid_distances(Qp, cand, working_memory_bytes())
        order = np.lexsort((cand, dist), axis=1)
        dist = np.take_along_axis(dist, order, axis=1)
        idx = np.take_along_axis(cand, order, axis=1)
        if bad.any():
            dist[bad], idx[bad] = ref.brute_force(Qp[np.flatnonzero(bad)], k, working_memory_bytes())
        return dist, idx

    def _build_library(self, lib: ModuleType, X: Matrix) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _search_library(self, Q: Matrix, Qp: Matrix, k: int) -> np.ndarray:  # pragma: no cover
        raise NotImplementedError


class _FaissBase(ApproximateIndex):
    module: ClassVar[str] = "faiss"
    extra: ClassVar[str] = "faiss"
    package: ClassVar[str] = "faiss"

    def _lib_vectors(self, X: Matrix, Xp: Matrix) -> np.ndarray:
        return _dense32(Xp if self.metric == "cosine" else X)

    def __getstate__(self) -> dict[str, Any]:
        state = super().__getstate__()
        if "_index" in state:
            faiss = self._library()
            state = dict(state)
            state["_index"] = faiss.serialize_index(state["_index"])
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        if isinstance(state.get("_index"), np.ndarray):
            faiss = import_optional("faiss", backend=self.name, extra="faiss")
            state = dict(state)
            state["_index"] = faiss.deserialize_index(state["_index"])
        super().__setstate__(state)


class FaissIVFIndex(_FaissBase):
    """faiss ``IndexIVFFlat``: k-means cells, exhaustive search of the ``nprobe`` nearest cells.

    Parameters
    ----------
    metric : {"euclidean", "cosine"}, default="euclidean"
    nlist : int or None, default=None
        Number of cells; None means ``round(sqrt(n))``, at most ``n // 39`` (faiss wants 39
        training points per centroid) and at least 1.
    nprobe : int, default=10
        Cells searched per query (capped at ``nlist``).  Higher is slower and more exact.
    random_state : int, RandomState or None, default=0
        Seed of faiss's k-means.

    Notes
    -----
    Needs ``pip install 'mlneighbors[faiss]'``.  faiss uses all cores (OpenMP).  Rows whose
    probed cells hold fewer than k points are answered exactly (faiss would pad with -1).

    Examples
    --------
    >>> from mlneighbors import MLkNN
    >>> from mlneighbors.neighbors import FaissIVFIndex
    >>> FaissIVFIndex(nprobe=20)  # faiss is imported when the index is built
    FaissIVFIndex(nprobe=20)
    >>> model = MLkNN(10, backend="faiss-ivf", backend_params={"nprobe": 20})
    """

    name: ClassVar[str] = "faiss-ivf"

    def __init__(
        self,
        *,
        metric: str = "euclidean",
        nlist: int | None = None,
        nprobe: int = 10,
        random_state: Any = 0,
    ) -> None:
        self.metric = metric
        self.nlist = nlist
        self.nprobe = nprobe
        self.random_state = random_state

    def _check_params(self) -> None:
        check_positive_int(self.nlist, "nlist", allow_none=True)
        check_positive_int(self.nprobe, "nprobe")

    def _build_library(self, faiss: ModuleType, X: Matrix) -> None:
        V = self._lib_vectors(X, self._ref.X)
        n, d = V.shape
        nlist = self.nlist if self.nlist is not None else int(round(math.sqrt(n)))
        nlist = max(1, min(nlist, n // 39 if n >= 39 else 1, n))
        quantizer = faiss.IndexFlatL2(d)
        index = faiss.IndexIVFFlat(quantizer, d, nlist, faiss.METRIC_L2)
        index.cp.seed = _seed(self.random_state)
        index.cp.min_points_per_centroid = 1  # small data: no "provide at least 39 points" noise
        index.train(V)
        index.add(V)
        self._quantizer = quantizer  # the IVF index refers to it
        self._index = index
        self.nlist_ = nlist

    def __getstate__(self) -> dict[str, Any]:
        state = dict(super().__getstate__())
        state.pop("_quantizer", None)  # serialize_index stores the quantizer with the index
        return state

    def _search_library(self, Q: Matrix, Qp: Matrix, k: int) -> np.ndarray:
        self._index.nprobe = min(self.nprobe, self.nlist_)
        _, idx = self._index.search(self._lib_vectors(Q, Qp), k)
        return idx


class FaissHNSWIndex(_FaissBase):
    """faiss ``IndexHNSWFlat``: a hierarchical navigable small-world graph.

    Parameters
    ----------
    metric : {"euclidean", "cosine"}, default="euclidean"
    M : int, default=32
        Graph degree.
    ef_construction : int, default=40
        Candidate list size while building.
    ef_search : int, default=64
        Candidate list size while searching; raised to k when smaller (HNSW needs ef >= k).

    Notes
    -----
    Needs ``pip install 'mlneighbors[faiss]'``.  faiss builds the graph in parallel (OpenMP),
    so the graph, and rarely the result, can vary between builds.

    Examples
    --------
    >>> from mlneighbors import MLkNN
    >>> from mlneighbors.neighbors import FaissHNSWIndex
    >>> FaissHNSWIndex(ef_search=128)  # faiss is imported when the index is built
    FaissHNSWIndex(ef_search=128)
    >>> model = MLkNN(10, backend="faiss-hnsw", backend_params={"ef_search": 128})
    """

    name: ClassVar[str] = "faiss-hnsw"

    def __init__(
        self, *, metric: str = "euclidean", M: int = 32, ef_construction: int = 40, ef_search: int = 64
    ) -> None:
        self.metric = metric
        self.M = M
        self.ef_construction = ef_construction
        self.ef_search = ef_search

    def _check_params(self) -> None:
        check_positive_int(self.M, "M", minimum=2)
        check_positive_int(self.ef_construction, "ef_construction")
        check_positive_int(self.ef_search, "ef_search")

    def _build_library(self, faiss: ModuleType, X: Matrix) -> None:
        V = self._lib_vectors(X, self._ref.X)
        index = faiss.IndexHNSWFlat(V.shape[1], self.M, faiss.METRIC_L2)
        index.hnsw.efConstruction = self.ef_construction
        index.add(V)
        self._index = index

    def _search_library(self, Q: Matrix, Qp: Matrix, k: int) -> np.ndarray:
        faiss = self._library()
        params = faiss.SearchParametersHNSW()
        params.efSearch = max(self.ef_search, k)
        _, idx = self._index.search(self._lib_vectors(Q, Qp), k, params=params)
        return idx


class HnswlibIndex(ApproximateIndex):
    """hnswlib's HNSW graph.

    Parameters
    ----------
    metric : {"euclidean", "cosine"}, default="euclidean"
    M : int, default=16
        Graph degree.
    ef_construction : int, default=200
        Candidate list size while building.
    ef : int, default=50
        Candidate list size while searching; raised to k when smaller (hnswlib needs
        ef >= k), and raised further, up to n, when hnswlib cannot find k results.
    random_state : int, RandomState or None, default=0
        Seed of the level generator.
    n_jobs : int or None, default=None
        Threads for building and searching; None or -1 means all CPUs.  A build with more
        than one thread is not reproducible bit for bit (insertion order varies).

    Notes
    -----
    Needs ``pip install 'mlneighbors[hnsw]'``.

    Examples
    --------
    >>> from mlneighbors import MLkNN
    >>> from mlneighbors.neighbors import HnswlibIndex
    >>> HnswlibIndex(ef=100)  # hnswlib is imported when the index is built
    HnswlibIndex(ef=100)
    >>> model = MLkNN(10, backend="hnswlib", backend_params={"ef": 100})
    """

    name: ClassVar[str] = "hnswlib"
    module: ClassVar[str] = "hnswlib"
    extra: ClassVar[str] = "hnsw"
    package: ClassVar[str] = "hnswlib"

    def __init__(
        self,
        *,
        metric: str = "euclidean",
        M: int = 16,
        ef_construction: int = 200,
        ef: int = 50,
        random_state: Any = 0,
        n_jobs: int | None = None,
    ) -> None:
        self.metric = metric
        self.M = M
        self.ef_construction = ef_construction
        self.ef = ef
        self.random_state = random_state
        self.n_jobs = n_jobs

    def _check_params(self) -> None:
        check_positive_int(self.M, "M", minimum=2)
        check_positive_int(self.ef_construction, "ef_construction")
        check_positive_int(self.ef, "ef")

    def _build_library(self, hnswlib: ModuleType, X: Matrix) -> None:
        V = _dense32(self._ref.X if self.metric == "cosine" else X)
        n, d = V.shape
        index = hnswlib.Index(space="l2", dim=d)
        index.init_index(
            max_elements=n, M=self.M, ef_construction=self.ef_construction, random_seed=_seed(self.random_state)
        )
        index.add_items(V, np.arange(n), num_threads=resolve_n_jobs(self.n_jobs))
        self._index = index

    def _search_library(self, Q: Matrix, Qp: Matrix, k: int) -> np.ndarray:
        V = _dense32(Qp if self.metric == "cosine" else Q)
        n = self._ref.n_samples
        ef = max(self.ef, k)
        while True:
            self._index.set_ef(ef)
            try:
                labels, _ = self._index.knn_query(V, k=k, num_threads=resolve_n_jobs(self.n_jobs))
                return labels.astype(np.intp)
            except RuntimeError:  # "Cannot return the results in a contiguous 2D array"
                if ef >= n:
                    return np.full((V.shape[0], k), -1, dtype=np.intp)  # repaired by brute force
                ef = min(2 * ef, n)


class PyNNDescentIndex(ApproximateIndex):
    """pynndescent's nearest-neighbour-descent graph.

    Parameters
    ----------
    metric : {"euclidean", "cosine", "manhattan"}, default="euclidean"
    n_neighbors : int, default=30
        Degree of the k-NN graph built (capped at n - 1).
    epsilon : float, default=0.1
        Search breadth (pynndescent's ``query(epsilon=...)``); higher is slower and more exact.
    random_state : int, RandomState or None, default=0
    n_jobs : int or None, default=None
        Threads (pynndescent / numba); None means pynndescent's default.

    Notes
    -----
    Needs ``pip install 'mlneighbors[pynndescent]'``.  CSR input is used as is.  The first
    build in a process compiles pynndescent's numba kernels (seconds).

    Examples
    --------
    >>> from mlneighbors import MLkNN
    >>> from mlneighbors.neighbors import PyNNDescentIndex
    >>> PyNNDescentIndex(epsilon=0.2)  # pynndescent is imported when the index is built
    PyNNDescentIndex(epsilon=0.2)
    >>> model = MLkNN(10, backend="pynndescent", backend_params={"epsilon": 0.2})
    """


    name: ClassVar[str] = "pynndescent"
    module: ClassVar[str] = "pynndescent"
    extra: ClassVar[str] = "pynndescent"
    package: ClassVar[str] = "pynndescent"
    supported_metrics: ClassVar[tuple[str, ...]] = ("euclidean", "cosine", "manhattan")

    def __init__(
        self,
        *,
        metric: str = "euclidean",
        n_neighbors: int = 30,
        epsilon: float = 0.1,
        random_state: Any = 0,
        n_jobs: int | None = None,
    ) -> None:
        self.metric = metric
        self.n_neighbors = n_neighbors
        self.epsilon = epsilon
        self.random_state = random_state
        self.n_jobs = n_jobs

    def _check_params(self) -> None:
        check_positive_int(self.n_neighbors, "n_neighbors", minimum=2)
        if isinstance(self.epsilon, bool) or not isinstance(self.epsilon, (int, float)) or self.epsilon < 0:
            raise ValueError(f"epsilon must be a number >= 0, got {self.epsilon!r}")

    @staticmethod
    def _data(A: Matrix) -> Matrix:
        return A.astype(np.float32) if sp.issparse(A) else _dense32(A)

    def _build_library(self, pynndescent: ModuleType, X: Matrix) -> None:
        n = X.shape[0]
        self._index = pynndescent.NNDescent(
            self._data(X),
            metric=self.metric,
            n_neighbors=max(2, min(self.n_neighbors, n - 1)),
            random_state=self.random_state,
            n_jobs=self.n_jobs,
            verbose=False,
        )
        self._index.prepare()

    def _search_library(self, Q: Matrix, Qp: Matrix, k: int) -> np.ndarray:
        idx, _ = self._index.query(self._data(Q), k=k, epsilon=self.epsilon)
        return idx
