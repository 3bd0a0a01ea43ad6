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

Recall
------
After the library's build, every adapter measures its **recall** (``recall_``): the tie-aware
recall@k of leave-one-out queries of a seeded sample of the indexed rows
(:data:`~mlneighbors.neighbors._recall.RECALL_SAMPLE` = 1,000 rows) against the exact
leave-one-out neighbours of the same rows (``_recall``).  The adapters with a search breadth
(hnswlib's ``ef``, faiss HNSW's ``ef_search``, faiss IVF's ``nprobe``) **calibrate** it on that
sample when it is not given: the smallest breadth whose recall reaches ``recall`` (0.95 when
None).  ``recall_k`` is the k of that recall; the estimators set it to their ``n_neighbors``.

Cosine is searched as euclidean distance between L2-normalised rows (same order for non-zero
rows) for faiss and hnswlib; pynndescent uses its own cosine.  faiss and hnswlib need dense
float32 vectors: CSR input is densified for them (pynndescent takes CSR as is).

Long builds and searches report their progress (``mlneighbors._progress``: nothing is shown
unless a listener is installed, as the command line does).
"""

from __future__ import annotations

import math
import numbers
from contextlib import nullcontext
from types import ModuleType
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp
from sklearn.utils import check_random_state

from .._config import working_memory_bytes
from .._progress import task
from ._base import BaseIndex, check_metric, check_positive_int, import_optional, resolve_n_jobs
from ._distance import Matrix, Reference
from ._loo import loo_kneighbors
from ._recall import DEFAULT_RECALL, RECALL_SAMPLE, calibrate, exact_loo, sample_rows, tie_aware_recall

__all__ = ["FaissHNSWIndex", "FaissIVFIndex", "HnswlibIndex", "PyNNDescentIndex"]

# rows added to a library's index per call (progress is reported between calls)
_BUILD_BLOCK = 1 << 15
# queries per call of the library (progress is reported between calls; the libraries spread
# one call over their threads)
_QUERY_BLOCK = 1 << 14
# faiss IVF: cells per sqrt(n) rows when nlist is None
_IVF_CELLS_PER_SQRT_N = 1.0



def _seed(random_state: Any) -> int:
    """An int seed for libraries that take one (faiss, hnswlib)."""
    if random_state is None or isinstance(random_state, numbers.Integral):
        return 0 if random_state is None else int(random_state)
    return int(check_random_state(random_state).randint(0, 2**31 - 1))


def _dense32(A: Matrix) -> np.ndarray:
    A = A.toarray() if sp.issparse(A) else A
    return np.ascontiguousarray(A, dtype=np.float32)


class ApproximateIndex(BaseIndex):
    """Shared machinery of the approximate adapters (re-ranking, repairs, lazy import, the
    recall measured and calibrated at build, saving the library's index as data)."""

    exact: ClassVar[bool] = False
    module: ClassVar[str] = ""
    extra: ClassVar[str] = ""
    package: ClassVar[str] = ""
    #: the search breadth calibrated to ``recall`` ("" for an adapter without one)
    breadth: ClassVar[str] = ""

    recall: float | None
    recall_k: int

    def _library(self) -> ModuleType:
        return import_optional(self.module, backend=self.name, extra=self.extra, package=self.package)

    def _check_recall_params(self) -> None:
        check_positive_int(self.recall_k, "recall_k")
        r = self.recall
        if r is not None and (isinstance(r, bool) or not isinstance(r, numbers.Real) or not 0.0 < r <= 1.0):
            raise ValueError(f"recall must be a number in (0, 1] or None, got recall={r!r}")
        if r is not None and self.breadth and getattr(self, self.breadth) is not None:
            raise ValueError(
                f"give recall (the {self.breadth} that reaches it is calibrated at build) or "
                f"{self.breadth} (fixed), not both: got recall={r!r}, {self.breadth}={getattr(self, self.breadth)!r}"
            )

    def _build(self, X: Matrix) -> None:
        lib = self._library()
        self._ref = Reference(X, self.metric)
        n = X.shape[0]
        with task(f"build {self.name} index", n) as progress:
            self._build_library(lib, X, progress)
        self.n_samples_fit_, self.n_features_in_ = X.shape  # the calibration queries the index
        self._calibrate(X)

    # ------------------------------------------------------------------ recall
    def _breadth_range(self, k: int) -> tuple[int, int]:  # pragma: no cover - abstract
        """The smallest and largest useful breadth for ``k`` neighbours."""
        raise NotImplementedError

    def _calibrate(self, X: Matrix) -> None:
        """Measure the recall on a seeded sample of leave-one-out queries; when the breadth is
        not given, first calibrate it to the smallest value reaching ``recall``."""
        n = X.shape[0]
        k = min(self.recall_k, n - 1)
        fixed = getattr(self, self.breadth) if self.breadth else None
        if self.breadth:
            self._breadth = fixed if fixed is not None else self._breadth_range(max(k, 1) + 1)[0]
        if k < 1:  # one row: nothing to miss
            self.recall_ = 1.0
            self.recall_rows_ = 0
            return
        rows = sample_rows(n, RECALL_SAMPLE, _seed(getattr(self, "random_state", 0)))
        exact_dist, _ = exact_loo(X, self.metric, rows, k)
        with task(f"calibrate {self.name} recall", 1) as progress:

            def measure(breadth: int | None) -> float:
                if breadth is not None:
                    self._breadth = breadth
                dist, _ = loo_kneighbors(self, X, k, rows=rows, validated=True)
                return tie_aware_recall(dist, exact_dist)

            if not self.breadth or fixed is not None:
                self.recall_ = measure(None)
            else:
                lo, hi = self._breadth_range(k + 1)  # leave-one-out asks for k + 1
                target = DEFAULT_RECALL if self.recall is None else float(self.recall)
                self._breadth, self.recall_ = calibrate(measure, lo, hi, target)
            progress.advance(1)
        self.recall_rows_ = len(rows)
        if self.breadth:
            setattr(self, self.breadth + "_", int(self._breadth))

    # ------------------------------------------------------------------ query
    def _query(self, Q: Matrix, k: int) -> tuple[np.ndarray, np.ndarray]:
        nq = Q.shape[0]
        dist = np.empty((nq, k), dtype=np.float64)
        idx = np.empty((nq, k), dtype=np.intp)
        step = max(1, min(_QUERY_BLOCK, working_memory_bytes() // (16 * k + 8 * self._ref.n_features + 64)))
        with task(f"search {self.name}", nq) if nq > step else nullcontext() as progress:
            for a in range(0, nq, step):
                b = min(a + step, nq)
                Qp = self._ref.prepare(Q[a:b])
                cand = np.asarray(self._search_library(Q[a:b], Qp, k), dtype=np.intp).reshape(b - a, k)
                dist[a:b], idx[a:b] = self._rank(Qp, cand, k, self._brute_force)
                if progress is not None:
                    progress.advance(b - a)
        return dist, idx

    def _brute_force(self, Qp: Matrix, rows: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        return self._ref.brute_force(Qp[rows], k, working_memory_bytes())

    def _rank(self, Qp: Matrix, cand: np.ndarray, k: int, repair: Any) -> tuple[np.ndarray, np.ndarray]:
        """The first k of every row's candidates by (float64 distance, row); rows without k
        distinct valid candidates (``-1`` padding, duplicates) are answered by ``repair(Qp,
        rows, k)`` instead."""
        ref = self._ref
        m = cand.shape[1]
        order = np.argsort(cand, axis=1, kind="stable")
        srt = np.take_along_axis(cand, order, axis=1)
        invalid = (srt < 0) | (srt >= ref.n_samples)
        invalid[:, 1:] |= srt[:, 1:] == srt[:, :-1]  # a repeated candidate counts once
        bad_sorted = invalid
        invalid = np.empty_like(bad_sorted)
        np.put_along_axis(invalid, order, bad_sorted, axis=1)
        short = np.flatnonzero((m - invalid.sum(axis=1)) < k)
        cand = np.where(invalid, 0, cand)
        dist = ref.grid_distances(Qp, cand, working_memory_bytes())
        dist[invalid] = np.inf
        order = np.lexsort((cand, dist), axis=1)[:, :k]
        dist = np.take_along_axis(dist, order, axis=1)
        idx = np.take_along_axis(cand, order, axis=1)
        if short.size:
            dist[short], idx[short] = repair(Qp, short, k)
        return dist, idx

    def _build_library(self, lib: ModuleType, X: Matrix, progress: Any) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _search_library(self, Q: Matrix, Qp: Matrix, k: int) -> np.ndarray:  # pragma: no cover
        raise NotImplementedError

    # ------------------------------------------------------------------ saved as data
    def _export_library(self) -> dict[str, Any]:  # pragma: no cover - abstract
        """The library's built index as plain data (numbers, strings, arrays)."""
        raise NotImplementedError

    def _import_library(self, data: dict[str, Any]) -> None:  # pragma: no cover - abstract
        """Rebuild the library's index from :meth:`_export_library`'s data, after checking
        that data (a damaged index is a ``ValueError``, never a crash in the library)."""
        raise NotImplementedError

    def _saved_state(self) -> dict[str, Any]:
        """Everything a built index needs besides its parameters and the indexed rows."""
        return {
            "library": self._export_library(),
            "n_samples": int(self.n_samples_fit_),
            "n_features": int(self.n_features_in_),
            "breadth": int(self._breadth) if self.breadth else None,
            "recall": float(self.recall_),
            "recall_rows": int(self.recall_rows_),
        }

    def _restore_state(self, state: dict[str, Any], X: Matrix) -> None:
        """Make this unbuilt index the saved one, on its indexed rows ``X`` (no build)."""
        n, d = X.shape
        if (state["n_samples"], state["n_features"]) != (n, d):
            raise ValueError(
                f"the saved {self.name} index was built on {state['n_samples']} x {state['n_features']} rows, "
                f"but the model's training rows are {n} x {d}"
            )
        check_metric(self.metric, self.supported_metrics, self.name)
        self._check_params()
        self._ref = Reference(X, self.metric)
        self.n_samples_fit_, self.n_features_in_ = n, d
        self._import_library(state["library"])
        if self.breadth:
            self._breadth = int(state["breadth"])
            setattr(self, self.breadth + "_", self._breadth)
        self.recall_ = float(state["recall"])
        self.recall_rows_ = int(state["recall_rows"])


class _FaissBase(ApproximateIndex):
    module: ClassVar[str] = "faiss"
    extra: ClassVar[str] = "faiss"
    package: ClassVar[str] = "faiss"

    def _lib_vectors(self, X: Matrix, Xp: Matrix) -> np.ndarray:
        return _dense32(Xp if self.metric == "cosine" else X)

    def _add(self, index: Any, V: np.ndarray, progress: Any) -> None:
        for a in range(0, len(V), _BUILD_BLOCK):
            index.add(V[a : a + _BUILD_BLOCK])
            progress.advance(min(_BUILD_BLOCK, len(V) - a))

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

    def _export_library(self) -> dict[str, Any]:
        return {"faiss_index": np.asarray(self._library().serialize_index(self._index), dtype=np.uint8)}

    def _import_library(self, data: dict[str, Any]) -> None:
        faiss = self._library()
        raw = data.get("faiss_index")
        if not isinstance(raw, np.ndarray) or raw.dtype != np.uint8 or raw.ndim != 1:
            raise ValueError(f"the saved {self.name} index is damaged: no serialized faiss index")
        try:
            index = faiss.deserialize_index(raw)
        except Exception as exc:  # faiss raises RuntimeError on what it cannot read
            raise ValueError(f"the saved {self.name} index is damaged: faiss cannot read it ({exc})") from None
        if index.d != self.n_features_in_ or index.ntotal != self.n_samples_fit_:
            raise ValueError(
                f"the saved {self.name} index is damaged: it holds {index.ntotal} vectors of {index.d} "
                f"features, the model {self.n_samples_fit_} of {self.n_features_in_}"
            )
        self._check_faiss(faiss, index)
        self._index = index

    def _check_faiss(self, faiss: ModuleType, index: Any) -> None:  # pragma: no cover - abstract
        raise NotImplementedError


class FaissIVFIndex(_FaissBase):
    """faiss ``IndexIVFFlat``: k-means cells, exhaustive search of the ``nprobe`` nearest cells.

    Parameters
    ----------
    metric : {"euclidean", "cosine"}, default="euclidean"
    nlist : int or None, default=None
        Number of cells; None means ``round(sqrt(n))``, at most ``n // 39`` (faiss wants 39
        training points per centroid) and at least 1.
    nprobe : int or None, default=None
        Cells searched per query (capped at ``nlist``).  Higher is slower and more exact.
        None: the smallest number that reaches ``recall`` on the calibration sample.
    recall : float in (0, 1] or None, default=None
        The recall@``recall_k`` that ``nprobe`` is calibrated to reach (None: 0.95); not
        together with ``nprobe``.
    recall_k : int, default=10
        The k of that recall (the estimators set it to their ``n_neighbors``).
    random_state : int, RandomState or None, default=0
        Seed of faiss's k-means and of the calibration sample.

    Attributes
    ----------
    nlist_ : int
        Cells used.
    nprobe_ : int
        Cells searched per query: ``nprobe``, or the calibrated value.
    recall_ : float
        Tie-aware recall@``recall_k`` of leave-one-out queries of a seeded sample of 1,000
        indexed rows (all rows when fewer) against their exact neighbours, at ``nprobe_``;
        its standard error is at most ``sqrt(recall_ (1 - recall_) / 1000)``.
    recall_rows_ : int
        Rows of that sample.

    Notes
    -----
    Needs ``pip install 'mlneighbors[faiss]'``.  faiss uses all cores (OpenMP).  Rows whose
    probed cells hold fewer than k points are answered exactly (faiss would pad with -1).

    Examples
    --------
    >>> from mlneighbors import MLkNN
    >>> from mlneighbors.neighbors import FaissIVFIndex
    >>> FaissIVFIndex(recall=0.9)  # faiss is imported when the index is built
    FaissIVFIndex(recall=0.9)
    >>> model = MLkNN(10, backend="faiss-ivf", backend_params={"nprobe": 20})
    """

    name: ClassVar[str] = "faiss-ivf"
    breadth: ClassVar[str] = "nprobe"

    def __init__(
        self,
        *,
        metric: str = "euclidean",
        nlist: int | None = None,
        nprobe: int | None = None,
        recall: float | None = None,
        recall_k: int = 10,
        random_state: Any = 0,
    ) -> None:
        self.metric = metric
        self.nlist = nlist
        self.nprobe = nprobe
        self.recall = recall
        self.recall_k = recall_k
        self.random_state = random_state

    def _check_params(self) -> None:
        check_positive_int(self.nlist, "nlist", allow_none=True)
        check_positive_int(self.nprobe, "nprobe", allow_none=True)
        self._check_recall_params()

    def _build_library(self, faiss: ModuleType, X: Matrix, progress: Any) -> None:
        V = self._lib_vectors(X, self._ref.X)
        n, d = V.shape
        nlist = self.nlist if self.nlist is not None else int(round(_IVF_CELLS_PER_SQRT_N * math.sqrt(n)))
        nlist = max(1, min(nlist, n // 39 if n >= 39 else 1, n))
        quantizer = faiss.IndexFlatL2(d)
        index = faiss.IndexIVFFlat(quantizer, d, nlist, faiss.METRIC_L2)
        index.cp.seed = _seed(self.random_state)
        index.cp.min_points_per_centroid = 1  # small data: no "provide at least 39 points" noise
        index.train(V)
        self._add(index, V, progress)
        self._quantizer = quantizer  # the IVF index refers to it
        self._index = index
        self.nlist_ = nlist

    def _breadth_range(self, k: int) -> tuple[int, int]:
        return 1, self.nlist_

    def __getstate__(self) -> dict[str, Any]:
        state = dict(super().__getstate__())
        state.pop("_quantizer", None)  # serialize_index stores the quantizer with the index
        return state

    def _search_library(self, Q: Matrix, Qp: Matrix, k: int) -> np.ndarray:
        self._index.nprobe = min(self._breadth, self.nlist_)
        _, idx = self._index.search(self._lib_vectors(Q, Qp), k)
        return idx

    def _saved_state(self) -> dict[str, Any]:
        return {**super()._saved_state(), "nlist": int(self.nlist_)}

    def _restore_state(self, state: dict[str, Any], X: Matrix) -> None:
        super()._restore_state(state, X)
        self.nlist_ = int(state["nlist"])

    def _check_faiss(self, faiss: ModuleType, index: Any) -> None:
        ivf = faiss.extract_index_ivf(index)
        n = self.n_samples_fit_
        lists = ivf.invlists
        sizes = np.array([lists.list_size(c) for c in range(ivf.nlist)], dtype=np.int64)
        ids = [faiss.rev_swig_ptr(lists.get_ids(c), int(size)) for c, size in enumerate(sizes) if size]
        ids = np.concatenate(ids) if ids else np.empty(0, dtype=np.int64)
        if (ivf.quantizer.ntotal != ivf.nlist or sizes.sum() != n
                or not np.array_equal(np.sort(ids), np.arange(n))):
            raise ValueError(f"the saved {self.name} index is damaged: its cells do not hold rows 0 .. {n - 1} once each")
        self._quantizer = ivf.quantizer


class FaissHNSWIndex(_FaissBase):
    """faiss ``IndexHNSWFlat``: a hierarchical navigable small-world graph.

    Parameters
    ----------
    metric : {"euclidean", "cosine"}, default="euclidean"
    M : int, default=32
        Graph degree.
    ef_construction : int, default=40
        Candidate list size while building.
    ef_search : int or None, default=None
        Candidate list size while searching; raised to k when smaller (HNSW needs ef >= k).
        None: the smallest value that reaches ``recall`` on the calibration sample.
    recall : float in (0, 1] or None, default=None
        The recall@``recall_k`` that ``ef_search`` is calibrated to reach (None: 0.95); not
        together with ``ef_search``.
    recall_k : int, default=10
        The k of that recall (the estimators set it to their ``n_neighbors``).
    random_state : int, RandomState or None, default=0
        Seed of the calibration sample.

    Attributes
    ----------
    ef_search_ : int
        ``ef_search``, or the calibrated value.
    recall_ : float
        Tie-aware recall@``recall_k`` of leave-one-out queries of a seeded sample of 1,000
        indexed rows (all rows when fewer) against their exact neighbours, at ``ef_search_``;
        its standard error is at most ``sqrt(recall_ (1 - recall_) / 1000)``.
    recall_rows_ : int
        Rows of that sample.

    Notes
    -----
    Needs ``pip install 'mlneighbors[faiss]'``.  faiss builds the graph in parallel (OpenMP),
    so the graph, and rarely the result, can vary between builds.

    Examples
    --------
    >>> from mlneighbors import MLkNN
    >>> from mlneighbors.neighbors import FaissHNSWIndex
    >>> FaissHNSWIndex(recall=0.99)  # faiss is imported when the index is built
    FaissHNSWIndex(recall=0.99)
    >>> model = MLkNN(10, backend="faiss-hnsw", backend_params={"ef_search": 128})
    """

    name: ClassVar[str] = "faiss-hnsw"
    breadth: ClassVar[str] = "ef_search"

    def __init__(
        self,
        *,
        metric: str = "euclidean",
        M: int = 32,
        ef_construction: int = 40,
        ef_search: int | None = None,
        recall: float | None = None,
        recall_k: int = 10,
        random_state: Any = 0,
    ) -> None:
        self.metric = metric
        self.M = M
        self.ef_construction = ef_construction
        self.ef_search = ef_search
        self.recall = recall
        self.recall_k = recall_k
        self.random_state = random_state

    def _check_params(self) -> None:
        check_positive_int(self.M, "M", minimum=2)
        check_positive_int(self.ef_construction, "ef_construction")
        check_positive_int(self.ef_search, "ef_search", allow_none=True)
        self._check_recall_params()

    def _build_library(self, faiss: ModuleType, X: Matrix, progress: Any) -> None:
        V = self._lib_vectors(X, self._ref.X)
        index = faiss.IndexHNSWFlat(V.shape[1], self.M, faiss.METRIC_L2)
        index.hnsw.efConstruction = self.ef_construction
        self._add(index, V, progress)
        self._index = index

    def _breadth_range(self, k: int) -> tuple[int, int]:
        return k, max(k, self.n_samples_fit_)

    def _search_library(self, Q: Matrix, Qp: Matrix, k: int) -> np.ndarray:
        faiss = self._library()
        params = faiss.SearchParametersHNSW()
        params.efSearch = max(self._breadth, k)
        _, idx = self._index.search(self._lib_vectors(Q, Qp), k, params=params)
        return idx

    def _check_faiss(self, faiss: ModuleType, index: Any) -> None:
        hnsw = faiss.downcast_index(index).hnsw
        n = self.n_samples_fit_
        levels = faiss.vector_to_array(hnsw.levels)
        offsets = faiss.vector_to_array(hnsw.offsets)
        neighbors = faiss.vector_to_array(hnsw.neighbors)
        cum = faiss.vector_to_array(hnsw.cum_nneighbor_per_level)
        ok = (
            levels.shape == (n,) and offsets.shape == (n + 1,) and len(cum) > 0
            and levels.min(initial=1) >= 1 and levels.max(initial=1) <= len(cum) - 1
            and offsets[0] == 0 and np.array_equal(np.diff(offsets), cum[levels])
            and offsets[-1] == len(neighbors)
            and neighbors.min(initial=-1) >= -1 and neighbors.max(initial=-1) < n
            and (n == 0 or 0 <= hnsw.entry_point < n) and hnsw.max_level == levels.max(initial=1) - 1
        )
        if not ok:
            raise ValueError(f"the saved {self.name} index is damaged: its graph is inconsistent")


class HnswlibIndex(ApproximateIndex):
    """hnswlib's HNSW graph.

    Parameters
    ----------
    metric : {"euclidean", "cosine"}, default="euclidean"
    M : int, default=16
        Graph degree.
    ef_construction : int, default=100
        Candidate list size while building.
    ef : int or None, default=None
        Candidate list size while searching; raised to k when smaller (hnswlib needs
        ef >= k), and raised further, up to n, when hnswlib cannot find k results.
        None: the smallest value that reaches ``recall`` on the calibration sample.
    recall : float in (0, 1] or None, default=None
        The recall@``recall_k`` that ``ef`` is calibrated to reach (None: 0.95); not together
        with ``ef``.
    recall_k : int, default=10
        The k of that recall (the estimators set it to their ``n_neighbors``).
    random_state : int, RandomState or None, default=0
        Seed of the level generator and of the calibration sample.
    n_jobs : int or None, default=None
        Threads for building and searching; None or -1 means all CPUs.  A build with more
        than one thread is not reproducible bit for bit (insertion order varies).

    Attributes
    ----------
    ef_ : int
        ``ef``, or the calibrated value.
    recall_ : float
        Tie-aware recall@``recall_k`` of leave-one-out queries of a seeded sample of 1,000
        indexed rows (all rows when fewer) against their exact neighbours, at ``ef_``; its
        standard error is at most ``sqrt(recall_ (1 - recall_) / 1000)``.
    recall_rows_ : int
        Rows of that sample.

    Notes
    -----
    Needs ``pip install 'mlneighbors[hnsw]'``.

    Examples
    --------
    >>> from mlneighbors import MLkNN
    >>> from mlneighbors.neighbors import HnswlibIndex
    >>> HnswlibIndex(recall=0.99)  # hnswlib is imported when the index is built
    HnswlibIndex(recall=0.99)
    >>> model = MLkNN(10, backend="hnswlib", backend_params={"ef": 100})
    """

    name: ClassVar[str] = "hnswlib"
    module: ClassVar[str] = "hnswlib"
    extra: ClassVar[str] = "hnsw"
    package: ClassVar[str] = "hnswlib"
    breadth: ClassVar[str] = "ef"

    def __init__(
        self,
        *,
        metric: str = "euclidean",
        M: int = 16,
        ef_construction: int = 100,
        ef: int | None = None,
        recall: float | None = None,
        recall_k: int = 10,
        random_state: Any = 0,
        n_jobs: int | None = None,
    ) -> None:
        self.metric = metric
        self.M = M
        self.ef_construction = ef_construction
        self.ef = ef
        self.recall = recall
        self.recall_k = recall_k
        self.random_state = random_state
        self.n_jobs = n_jobs

    def _check_params(self) -> None:
        check_positive_int(self.M, "M", minimum=2)
        check_positive_int(self.ef_construction, "ef_construction")
        check_positive_int(self.ef, "ef", allow_none=True)
        self._check_recall_params()

    def _build_library(self, hnswlib: ModuleType, X: Matrix, progress: Any) -> None:
        V = _dense32(self._ref.X if self.metric == "cosine" else X)
        n, d = V.shape
        index = hnswlib.Index(space="l2", dim=d)
        index.init_index(
            max_elements=n, M=self.M, ef_construction=self.ef_construction, random_seed=_seed(self.random_state)
        )
        threads = resolve_n_jobs(self.n_jobs)
        for a in range(0, n, _BUILD_BLOCK):
            b = min(a + _BUILD_BLOCK, n)
            index.add_items(V[a:b], np.arange(a, b), num_threads=threads)
            progress.advance(b - a)
        self._index = index

    def _breadth_range(self, k: int) -> tuple[int, int]:
        return k, max(k, self.n_samples_fit_)

    def _search_library(self, Q: Matrix, Qp: Matrix, k: int) -> np.ndarray:
        V = _dense32(Qp if self.metric == "cosine" else Q)
        n = self._ref.n_samples
        ef = max(self._breadth, k)
        while True:
            self._index.set_ef(ef)
            try:
                labels, _ = self._index.knn_query(V, k=k, num_threads=resolve_n_jobs(self.n_jobs))
                return labels.astype(np.intp)
            except RuntimeError:  # "Cannot return the results in a contiguous 2D array"
                if ef >= n:
                    return np.full((V.shape[0], k), -1, dtype=np.intp)  # repaired by brute force
                ef = min(2 * ef, n)

    def _export_library(self) -> dict[str, Any]:
        (state,) = self._index.__getstate__()
        return dict(state)

    def _import_library(self, data: dict[str, Any]) -> None:
        hnswlib = self._library()
        _check_hnswlib_state(data, self.n_samples_fit_, self.n_features_in_)
        index = hnswlib.Index.__new__(hnswlib.Index)
        try:
            index.__setstate__((dict(data),))
        except Exception as exc:  # hnswlib's own checks (a version it does not read, ...)
            raise ValueError(f"the saved hnswlib index is damaged: hnswlib cannot read it ({exc})") from None
        self._index = index


def _check_hnswlib_state(st: dict[str, Any], n: int, d: int) -> None:
    """Check hnswlib's saved state before hnswlib reads it (its reader trusts every size and
    offset: a damaged state would make it read or write outside its buffers)."""

    def bad(why: str) -> ValueError:
        return ValueError(f"the saved hnswlib index is damaged: {why}")

    ints = ("ser_version", "dim", "max_elements", "cur_element_count", "size_data_per_element", "label_offset",
            "offset_data", "offset_level0", "max_level", "enterpoint_node", "max_M", "max_M0", "M",
            "size_links_per_element")
    arrays = {"data_level0": np.int8, "link_lists": np.int8, "element_levels": np.int32,
              "label_lookup_external": np.uint64, "label_lookup_internal": np.uint32}
    for key in ints:
        if not isinstance(st.get(key), numbers.Integral) or isinstance(st.get(key), bool):
            raise bad(f"{key} is missing or not an integer")
    for key, dtype in arrays.items():
        a = st.get(key)
        if not isinstance(a, np.ndarray) or a.dtype != dtype or a.ndim != 1:
            raise bad(f"{key} is missing or not a 1-D {np.dtype(dtype).name} array")
    if st.get("space") != "l2" or st.get("has_deletions") or st.get("allow_replace_deleted"):
        raise bad("not an l2 index without deletions, as this package builds")
    m0, m = st["max_M0"], st["max_M"]
    links0 = 4 + 4 * m0
    if not (st["ser_version"] == 1 and st["dim"] == d and st["cur_element_count"] == n and st["max_elements"] == n
            and st["offset_level0"] == 0 and st["offset_data"] == links0 and st["label_offset"] == links0 + 4 * d
            and st["size_data_per_element"] == links0 + 4 * d + 8 and st["size_links_per_element"] == 4 + 4 * m
            and 0 < m <= 1 << 16 and 0 < m0 <= 1 << 16):
        raise bad(f"its sizes do not describe {n} rows of {d} features")
    levels = st["element_levels"]
    if (len(st["data_level0"]) != n * st["size_data_per_element"] or levels.shape != (n,)
            or st["label_lookup_external"].shape != (n,) or st["label_lookup_internal"].shape != (n,)):
        raise bad("its arrays do not hold one entry per row")
    if n and (levels.min() < 0 or levels.max() != st["max_level"] or not 0 <= st["enterpoint_node"] < n):
        raise bad("its levels or its entry point are out of range")
    if len(st["link_lists"]) != int(levels.astype(np.int64).sum()) * st["size_links_per_element"]:
        raise bad("its upper-level link lists do not match the levels")
    ext, internal = st["label_lookup_external"], st["label_lookup_internal"]
    if not (np.array_equal(np.sort(ext), np.arange(n, dtype=np.uint64)) and internal.max(initial=0) < max(n, 1)
            and np.array_equal(np.sort(internal), np.arange(n, dtype=np.uint32))):
        raise bad("its row labels are not the rows 0 .. n - 1 once each")
    blocks = st["data_level0"].view(np.uint8).reshape(n, st["size_data_per_element"])
    _check_links(blocks[:, :links0], m0, n, bad)
    if len(st["link_lists"]):
        _check_links(st["link_lists"].view(np.uint8).reshape(-1, st["size_links_per_element"]), m, n, bad)


def _check_links(raw: np.ndarray, width: int, n: int, bad: Any) -> None:
    """Link lists (a uint32 count, then ``width`` uint32 row numbers): counts and rows in range."""
    for a in range(0, len(raw), _BUILD_BLOCK):
        lists = np.ascontiguousarray(raw[a : a + _BUILD_BLOCK]).view(np.uint32)
        counts = lists[:, 0] & 0xFFFF
        used = np.arange(width)[None, :] < counts[:, None]
        if counts.max(initial=0) > width or (lists[:, 1:][used] >= n).any():
            raise bad("a link list has too many links or a row number out of range")


class PyNNDescentIndex(ApproximateIndex):
    """pynndescent's nearest-neighbour-descent graph.

    Parameters
    ----------
    metric : {"euclidean", "cosine", "manhattan"}, default="euclidean"
    n_neighbors : int, default=30
        Degree of the k-NN graph built (capped at n - 1).
    epsilon : float, default=0.1
        Search breadth (pynndescent's ``query(epsilon=...)``); higher is slower and more exact.
    loo_graph : bool, default=True
        Leave-one-out neighbours of the indexed rows (a model's ``fit``) are read from the
        k-NN graph the build made (its ``n_neighbors`` candidates per row, re-ranked in
        float64) instead of searched, when the graph holds more than ``k`` of them.
    recall_k : int, default=10
        The k of ``recall_`` (the estimators set it to their ``n_neighbors``).
    random_state : int, RandomState or None, default=0
    n_jobs : int or None, default=None
        Threads (pynndescent / numba); None means pynndescent's default.

    Attributes
    ----------
    recall_ : float
        Tie-aware recall@``recall_k`` of leave-one-out queries of a seeded sample of 1,000
        indexed rows (all rows when fewer) against their exact neighbours (no calibration:
        ``epsilon`` and ``n_neighbors`` set the breadth).
    recall_rows_ : int
        Rows of that sample.

    Notes
    -----
    Needs ``pip install 'mlneighbors[pynndescent]'``.  CSR input is used as is.  The first
    build in a process compiles pynndescent's numba kernels (seconds).  Its index is not
    saved with a model (``include_index``): it is rebuilt on first use.

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

    recall = None

    def __init__(
        self,
        *,
        metric: str = "euclidean",
        n_neighbors: int = 30,
        epsilon: float = 0.1,
        loo_graph: bool = True,
        recall_k: int = 10,
        random_state: Any = 0,
        n_jobs: int | None = None,
    ) -> None:
        self.metric = metric
        self.n_neighbors = n_neighbors
        self.epsilon = epsilon
        self.loo_graph = loo_graph
        self.recall_k = recall_k
        self.random_state = random_state
        self.n_jobs = n_jobs

    def _check_params(self) -> None:
        check_positive_int(self.n_neighbors, "n_neighbors", minimum=2)
        if isinstance(self.epsilon, bool) or not isinstance(self.epsilon, (int, float)) or self.epsilon < 0:
            raise ValueError(f"epsilon must be a number >= 0, got {self.epsilon!r}")
        self._check_recall_params()

    @staticmethod
    def _data(A: Matrix) -> Matrix:
        return A.astype(np.float32) if sp.issparse(A) else _dense32(A)

    def _build_library(self, pynndescent: ModuleType, X: Matrix, progress: Any) -> None:
        n = X.shape[0]
        self._index = pynndescent.NNDescent(
            self._data(X),
            metric=self.metric,
            n_neighbors=max(2, min(self.n_neighbors, n - 1)),
            random_state=self.random_state,
            n_jobs=self.n_jobs,
            verbose=False,
        )
        self._graph = np.asarray(self._index.neighbor_graph[0])
        self._index.prepare()
        progress.advance(n)

    def _search_library(self, Q: Matrix, Qp: Matrix, k: int) -> np.ndarray:
        idx, _ = self._index.query(self._data(Q), k=k, epsilon=self.epsilon)
        return idx

    def _loo_graph(self, X: Matrix, rows: np.ndarray, m: int) -> tuple[np.ndarray, np.ndarray] | None:
        """The ``m`` nearest of the graph's neighbours of the indexed ``rows`` of ``X`` (the
        row itself among them), re-ranked in float64; rows with fewer than ``m`` valid ones
        are searched.  None when the graph is not used (``loo_graph=False``, or no more than
        ``m`` neighbours a row in the graph)."""
        graph = self.__dict__.get("_graph")
        if not self.loo_graph or graph is None or graph.shape[1] <= m:
            return None
        dist = np.empty((len(rows), m))
        idx = np.empty((len(rows), m), dtype=np.intp)
        step = max(1, _QUERY_BLOCK // 4)
        with task(f"neighbours {self.name} graph", len(rows)) if len(rows) > step else nullcontext() as progress:
            for a in range(0, len(rows), step):
                Qb = X[rows[a : a + step]]

                def search(Qp: Matrix, short: np.ndarray, k: int, Qb: Matrix = Qb) -> tuple[np.ndarray, np.ndarray]:
                    return self._query(Qb[short], k)

                cand = graph[rows[a : a + step]].astype(np.intp)
                dist[a : a + step], idx[a : a + step] = self._rank(self._ref.prepare(Qb), cand, m, search)
                if progress is not None:
                    progress.advance(Qb.shape[0])
        return dist, idx
