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
(:data:`~mlneighbors.neighbors._recall.RECALL_SAMPLE` = 1,000 rows, ``recall_rows_``; where
rows are held out as new queries, a fifth of the rows below 5,000 and every row below 100)
against the exact leave-one-out neighbours of the same rows (``_recall``), and, per row of the same sample, the
share of rows whose recall@k is below one half (``low_recall_share_``: a mean hides a few
queries with every neighbour wrong).  The adapters that hold rows out as new queries measure
both for them too (``query_recall_``, ``query_low_recall_share_``).  The adapters with a search breadth
(hnswlib's ``ef``, faiss HNSW's ``ef_search``, faiss IVF's ``nprobe``) **calibrate** it on that
sample when it is not given: the smallest breadth whose recall reaches ``recall`` (0.96 when
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
from ._base import BaseIndex, check_metric, check_positive_int, check_recall, import_optional, resolve_n_jobs
from ._capabilities import Capabilities
from ._distance import Matrix, Reference
from ._exact import ExactIndex
from ._loo import loo_kneighbors
from ._recall import (
    DEFAULT_RECALL,
    RECALL_SAMPLE,
    calibrate,
    exact_loo,
    low_recall_share,
    mean_recall,
    sample_rows,
    tie_aware_hits,
)

__all__ = ["FaissHNSWIndex", "FaissIVFIndex", "HnswlibIndex", "PyNNDescentIndex"]

# rows added to a library's index per call (progress is reported between calls)
_BUILD_BLOCK = 1 << 15
# queries per call of the library (progress is reported between calls; the libraries spread
# one call over their threads)
_QUERY_BLOCK = 1 << 14
# faiss IVF: cells per sqrt(n) rows when nlist is None
_IVF_CELLS_PER_SQRT_N = 1.0
# fewer sampled rows than this (an index of fewer than 5 * 20 rows): no held-out calibration,
# the widest search
_MIN_HELD = 20
#: the union's smallest graph breadth for new queries (``benchmarks/tail.py``: at ef 32 one query
#: in 10^4 of the hard law fell below recall 0.5, at 64 none of 4 x 10^4), and for the
#: leave-one-out queries of indexed rows, which find themselves and through their own links
#: their neighbours (at ef 32 none of 5 x 10^4 of the hard law, 10^4 of each other law, with
#: the IVF below)
_UNION_EF_MIN = 64
_UNION_LOO_EF_MIN = 32
#: the union's IVF: 4 sqrt(n) cells of 8-bit codes, k-means trained on 64 rows a cell (what
#: benchmarks/tail.py measured; at 10^6 rows, 4,000 cells of 250 rows, 32 searched: at 10^6 x 128
#: its scan took half of the search with 2 sqrt(n) cells)
_UNION_CELLS_PER_SQRT_N = 4.0
_UNION_POINTS_PER_CELL = 64
#: what the union's graph may hold of the rows (``FaissUnionIndex(storage=...)``)
_UNION_STORAGES = ("sq8", "float32")
#: rows sampled to fix the range of 8-bit codes
_SQ_TRAIN_ROWS = 1 << 16



def _seed(random_state: Any) -> int:
    """An int seed for libraries that take one (faiss, hnswlib)."""
    if random_state is None or isinstance(random_state, numbers.Integral):
        return 0 if random_state is None else int(random_state)
    return int(check_random_state(random_state).randint(0, 2**31 - 1))


def _dense32(A: Matrix) -> np.ndarray:
    A = A.toarray() if sp.issparse(A) else A
    return np.ascontiguousarray(A, dtype=np.float32)


def _seen(faiss: ModuleType, vector: Any) -> np.ndarray:
    """A read-only NumPy view of a faiss vector, not a copy (valid while its index lives)."""
    if vector.size() == 0:
        return np.empty(0, dtype=faiss.vector_to_array(vector).dtype)
    view = faiss.rev_swig_ptr(vector.data(), vector.size())
    view.flags.writeable = False
    return view


class _BytesReader:
    """A faiss reader of bytes, chunk by chunk (``faiss.deserialize_index`` first copies the
    whole of them into a buffer of its own)."""

    def __init__(self, faiss: ModuleType, raw: bytes | memoryview) -> None:
        self._view = memoryview(raw)
        self._at = 0
        self.reader = faiss.PyCallbackIOReader(self._read, 1 << 20)

    def _read(self, size: int) -> bytes:
        a = self._at
        self._at = min(a + size, len(self._view))
        return bytes(self._view[a : self._at])


class ApproximateIndex(BaseIndex):
    """Shared machinery of the approximate adapters (re-ranking, repairs, lazy import, the
    recall measured and calibrated at build, saving the library's index as data).

    The library's index holds the rows in the order ``_order`` (library id -> row number):
    the rows of the calibration sample come last, so that they can be queried before they
    are added (see :meth:`_build`).
    """

    capabilities: ClassVar[Capabilities] = Capabilities(metrics=("euclidean", "cosine"), sparse=True, recall=True)
    module: ClassVar[str] = ""
    extra: ClassVar[str] = ""
    package: ClassVar[str] = ""
    #: the search breadth calibrated to ``recall`` ("" for an adapter without one)
    breadth: ClassVar[str] = ""

    recall: float | None
    recall_k: int

    def _keeps_float32(self) -> bool:
        # the libraries get float32 vectors and the re-ranking computes in float64 from any rows:
        # dense float32 rows are kept once, as given (issue 29: 10^6 x 128 held twice otherwise)
        return True

    def _library(self) -> ModuleType:
        return import_optional(self.module, backend=self.name, extra=self.extra, package=self.package)

    def set_params(self, **params: Any) -> ApproximateIndex:
        """scikit-learn's ``set_params``, except that the search breadth (``ef``, ``ef_search``,
        ``nprobe``) of a built index cannot be changed: it is fixed at build (given or calibrated
        to ``recall``, with the recall measured at it), so a new value would be ignored by the
        queries.  Set it, then build again."""
        changed = self.breadth and self.breadth in params and params[self.breadth] != getattr(self, self.breadth)
        if changed and hasattr(self, "_breadth"):
            raise ValueError(
                f"{type(self).__name__}: {self.breadth} is fixed when the index is built (given, or "
                f"calibrated to recall); set {self.breadth}={params[self.breadth]!r} and build again"
            )
        return super().set_params(**params)

    def _check_recall_params(self) -> None:
        check_positive_int(self.recall_k, "recall_k")
        r = self.recall
        check_recall(r)
        if r is not None and self.breadth and getattr(self, self.breadth) is not None:
            raise ValueError(
                f"give recall (the {self.breadth} that reaches it is calibrated at build) or "
                f"{self.breadth} (fixed), not both: got recall={r!r}, {self.breadth}={getattr(self, self.breadth)!r}"
            )

    def _vectors(self, rows: np.ndarray) -> np.ndarray:
        """The library's float32 vectors of some rows (normalised for cosine)."""
        return _dense32(self._ref.X[rows])

    def _build(self, X: Matrix) -> None:
        """Build, then measure (and calibrate) the recall on seeded samples of rows.

        The rows of a first sample are added to the library's index last.  Before they are
        added they are queries the index has never seen, as a model's test rows are: the
        breadth of ``query`` (``ef_``, ...) is calibrated on them, and ``query_recall_``
        measured.  A row that is in the index finds itself and, through it, its neighbours
        more easily (in a graph its own links are its near neighbours): after the first sample
        is added, the breadth of the leave-one-out queries of ``fit`` (``loo_ef_``, ...) is
        calibrated on a second sample, of rows added in the build's order (the rows added
        last have links chosen among all rows: they would overstate the recall), as
        leave-one-out queries, and ``recall_`` measured.
        """
        lib = self._library()
        self._ref = Reference(X, self.metric)
        n = X.shape[0]
        k = min(self.recall_k, n - 2)
        seed = _seed(getattr(self, "random_state", 0))
        size = min(RECALL_SAMPLE, n // 5)
        held = sample_rows(n, size, seed)
        if k < 1 or len(held) < _MIN_HELD:
            held = held[:0]
        rest = np.setdiff1d(np.arange(n), held, assume_unique=True)
        loo_rows = np.sort(rest[sample_rows(len(rest), size, seed + 1)]) if len(held) else held
        self._order = np.concatenate([rest, held]).astype(np.intp)
        if len(held):
            # the exact answers first, and the exact index (a float32 copy of the rows) freed
            # before the library's index is built: the two are never held together
            exact = ExactIndex(metric=self.metric).build(X)
            kth = self._kth_outside(exact, X, held, k)
            exact_kth = loo_kneighbors(exact, X, k, rows=loo_rows, validated=True)[0][:, -1]
            del exact
        with task(f"build {self.name} index", n) as progress:
            self._build_library(lib, X, rest, progress)
            self.n_samples_fit_, self.n_features_in_ = X.shape  # the calibration queries the index
            fixed = getattr(self, self.breadth) if self.breadth else None
            target = DEFAULT_RECALL if self.recall is None else float(self.recall)
            lo, hi = self._breadth_range(k + 1) if self.breadth else (0, 0)
            loo_lo, loo_hi = self._loo_breadth_range(k + 1) if self.breadth else (0, 0)
            if len(held):
                self._breadth, self.query_recall_, self.query_low_recall_share_ = self._calibrated(
                    lambda b: self._held_out_hits(X, held, k, b, kth), k, fixed, lo, hi, target)
            else:
                self._breadth = fixed if fixed is not None else hi
                self.query_recall_ = self.query_low_recall_share_ = float("nan")
            self._add_library(X, held, progress)
        if len(held):
            self._loo_breadth, self.recall_, self.low_recall_share_ = self._calibrated(
                lambda b: self._loo_hits(X, loo_rows, k, b, exact_kth), k, fixed, loo_lo, loo_hi, target)
        else:  # a handful of rows: the widest search, measured on every row
            self._loo_breadth = self._breadth
            hits = self._loo_hits(X, np.arange(n), k, self._breadth, None) if k >= 1 else np.zeros(0, dtype=np.intp)
            self.recall_, self.low_recall_share_ = mean_recall(hits, k), low_recall_share(hits / max(k, 1))
        self.recall_rows_ = len(loo_rows) if len(held) else n
        if self.breadth:
            setattr(self, self.breadth + "_", int(self._breadth))
            setattr(self, "loo_" + self.breadth + "_", int(self._loo_breadth))

    def _calibrated(self, hits_at: Any, k: int, fixed: int | None, lo: int, hi: int, target: float
                    ) -> tuple[Any, float, float]:
        """``(breadth, recall, low share)``: the fixed breadth, or the one calibrated to the
        mean recall ``target``; the mean recall@k of the sample's rows at it, and the share of
        them whose recall@k is below one half (``hits_at(breadth)``: every row's
        :func:`~mlneighbors.neighbors._recall.tie_aware_hits`)."""
        shares: dict[Any, float] = {}

        def measure(breadth: Any) -> float:
            hits = hits_at(breadth)
            shares[breadth] = low_recall_share(hits / k)
            return mean_recall(hits, k)

        if not self.breadth:
            breadth, recall = None, measure(None)
        elif fixed is not None:
            breadth, recall = fixed, measure(fixed)
        else:
            breadth, recall = calibrate(measure, lo, hi, target)
        return breadth, recall, shares[breadth]

    @staticmethod
    def _kth_outside(exact: Any, X: Matrix, held: np.ndarray, k: int) -> np.ndarray:
        """The exact k-th distance of every held-out row among the rows outside the sample
        (what the library holds before the sample is added)."""
        n = X.shape[0]
        out = np.empty(len(held))
        in_sample = np.zeros(n, dtype=bool)
        in_sample[held] = True
        todo = np.arange(len(held))
        # enough neighbours that k of them are outside the sample, for nearly every row
        m = min(n, k + 2 + 2 * int(math.ceil((k + 1) * len(held) / max(1, n - len(held)))))
        while todo.size:
            dist, idx = exact.query(X[held[todo]], m)
            outside = ~in_sample[idx]
            enough = outside.sum(axis=1) >= k
            kth = np.where(outside, dist, np.inf)
            kth.sort(axis=1)
            out[todo[enough]] = kth[enough, k - 1]
            todo = todo[~enough]
            m = min(n, 2 * m)
        return out

    def _held_out_hits(self, X: Matrix, held: np.ndarray, k: int, breadth: Any, kth: np.ndarray) -> np.ndarray:
        """Per row, the hits of the recall@k (``tie_aware_hits``) of the sample's rows as queries
        the index does not hold yet."""

        def miss(Qp: Matrix, short: np.ndarray, kk: int) -> tuple[np.ndarray, np.ndarray]:
            return np.full((len(short), kk), np.inf), np.zeros((len(short), kk), dtype=np.intp)

        dist, _ = self._query_at(X[held], k, breadth, miss, progress=False)
        return tie_aware_hits(dist, kth)

    def _loo_hits(self, X: Matrix, rows: np.ndarray, k: int, breadth: Any, kth: np.ndarray | None) -> np.ndarray:
        """Per row, the hits of the recall@k of leave-one-out queries of indexed ``rows``
        (``loo_kneighbors``, as ``fit``) against their exact k-th distances ``kth`` (None:
        measured here)."""
        self._loo_breadth = breadth
        dist, _ = loo_kneighbors(self, X, k, rows=rows, validated=True)
        if kth is None:
            kth = exact_loo(X, self.metric, rows, k)[0][:, -1]
        return tie_aware_hits(dist, kth)

    # ------------------------------------------------------------------ recall
    def _breadth_range(self, k: int) -> tuple[int, int]:  # pragma: no cover - abstract
        """The smallest and largest useful breadth for ``k`` neighbours."""
        raise NotImplementedError

    def _loo_breadth_range(self, k: int) -> tuple[int, int]:
        """The same for the leave-one-out queries of indexed rows (``k`` with the row itself)."""
        return self._breadth_range(k)

    # ------------------------------------------------------------------ query
    def _query(self, Q: Matrix, k: int) -> tuple[np.ndarray, np.ndarray]:
        return self._query_at(Q, k, getattr(self, "_breadth", None), self._brute_force)

    def _loo_query(self, X: Matrix, rows: np.ndarray | None, m: int) -> tuple[np.ndarray, np.ndarray] | None:
        """Leave-one-out queries of the indexed ``rows`` of ``X`` (None: all), ``m`` neighbours
        each (the row itself among them), at the breadth calibrated for them."""
        if not self.breadth:
            return None
        return self._query_at(X if rows is None else X[rows], m, self._loo_breadth, self._brute_force)

    def _query_at(self, Q: Matrix, k: int, breadth: Any, repair: Any, *, progress: bool = True
                  ) -> tuple[np.ndarray, np.ndarray]:
        nq = Q.shape[0]
        dist = np.empty((nq, k), dtype=np.float64)
        idx = np.empty((nq, k), dtype=np.intp)
        step = max(1, min(_QUERY_BLOCK, working_memory_bytes() // (16 * k + 8 * self._ref.n_features + 64)))
        with task(f"search {self.name}", nq) if progress and nq > step else nullcontext() as bar:
            for a in range(0, nq, step):
                b = min(a + step, nq)
                Qp = self._ref.prepare(Q[a:b])
                # k candidates a row, or more (the union's two structures): ranked together
                found = np.asarray(self._search_library(Q[a:b], Qp, k, breadth), dtype=np.intp).reshape(b - a, -1)
                cand = np.where(found >= 0, self._order[np.clip(found, 0, len(self._order) - 1)], -1)
                cand[found >= len(self._order)] = -1
                dist[a:b], idx[a:b] = self._rank(Qp, cand, k, repair)
                if bar is not None:
                    bar.advance(b - a)
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
        bad_sorted = (srt < 0) | (srt >= ref.n_samples)
        bad_sorted[:, 1:] |= srt[:, 1:] == srt[:, :-1]  # a repeated candidate counts once
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

    def _build_library(self, lib: ModuleType, X: Matrix, rows: np.ndarray, progress: Any) -> None:  # pragma: no cover
        """Build the library's index on ``rows`` of ``X`` (library ids 0 .. len(rows) - 1)."""
        raise NotImplementedError

    def _add_library(self, X: Matrix, rows: np.ndarray, progress: Any) -> None:  # pragma: no cover
        """Add ``rows`` to the built library index (the next library ids)."""
        raise NotImplementedError

    def _search_library(self, Q: Matrix, Qp: Matrix, k: int, breadth: Any) -> np.ndarray:  # pragma: no cover
        """Library ids of k candidates of every query, at a search breadth."""
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
            "order": np.asarray(self._order, dtype=np.int64),
            "n_samples": int(self.n_samples_fit_),
            "n_features": int(self.n_features_in_),
            "breadth": int(self._breadth) if self.breadth else None,
            "loo_breadth": int(self._loo_breadth) if self.breadth else None,
            "recall": float(self.recall_),
            "query_recall": float(self.query_recall_),
            "recall_rows": int(self.recall_rows_),
            "low_recall_share": float(self.low_recall_share_),
            "query_low_recall_share": float(self.query_low_recall_share_),
        }

    def _restore_state(self, state: dict[str, Any], X: Matrix) -> None:
        """Make this unbuilt index the saved one, on its indexed rows ``X`` (no build)."""
        n, d = X.shape
        if (state["n_samples"], state["n_features"]) != (n, d):
            raise ValueError(
                f"the saved {self.name} index was built on {state['n_samples']} x {state['n_features']} rows, "
                f"but the model's training rows are {n} x {d}"
            )
        order = state["order"]
        if not (isinstance(order, np.ndarray) and order.shape == (n,) and order.dtype == np.int64
                and np.array_equal(np.sort(order), np.arange(n))):
            raise ValueError(f"the saved {self.name} index is damaged: its row order is not a permutation of the rows")
        check_metric(self.metric, self.capabilities.metrics, self.name)
        self._check_params()
        self._ref = Reference(X, self.metric)
        self._order = order.astype(np.intp)
        self.n_samples_fit_, self.n_features_in_ = n, d
        self._import_library(state["library"])
        if self.breadth:
            self._breadth, self._loo_breadth = int(state["breadth"]), int(state["loo_breadth"])
            setattr(self, self.breadth + "_", self._breadth)
            setattr(self, "loo_" + self.breadth + "_", self._loo_breadth)
        self.recall_ = float(state["recall"])
        self.query_recall_ = float(state["query_recall"])
        self.recall_rows_ = int(state["recall_rows"])
        # an index saved before the shares were measured: not measured (NaN), not zero
        self.low_recall_share_ = float(state.get("low_recall_share", float("nan")))
        self.query_low_recall_share_ = float(state.get("query_low_recall_share", float("nan")))


def _faiss_bytes(faiss: ModuleType, index: Any, flags: int = 0) -> bytes:
    """A faiss index written with ``write_index`` (``flags``) as bytes, which load without a copy."""
    writer = faiss.VectorIOWriter()
    faiss.write_index(index, writer, flags)
    return _seen(faiss, writer.data).tobytes()


def _read_faiss(faiss: ModuleType, raw: Any, name: str, part: str) -> Any:
    """The faiss index of saved bytes ``raw`` (``part``: what it is, for the message); a
    ``ValueError`` naming the index when they are missing or faiss cannot read them."""
    if not isinstance(raw, (bytes, memoryview)):
        raise ValueError(f"the saved {name} index is damaged: no serialized {part}")
    try:
        return faiss.read_index(_BytesReader(faiss, raw).reader)
    except Exception as exc:  # faiss raises RuntimeError on what it cannot read
        raise ValueError(f"the saved {name} index is damaged: faiss cannot read its {part} ({exc})") from None


class _FaissBase(ApproximateIndex):
    module: ClassVar[str] = "faiss"
    extra: ClassVar[str] = "faiss"
    package: ClassVar[str] = "faiss"

    def _lib_vectors(self, X: Matrix, Xp: Matrix) -> np.ndarray:
        return _dense32(Xp if self.metric == "cosine" else X)

    def _add_library(self, X: Matrix, rows: np.ndarray, progress: Any) -> None:
        for a in range(0, len(rows), _BUILD_BLOCK):
            self._index.add(self._vectors(rows[a : a + _BUILD_BLOCK]))
            progress.advance(len(rows[a : a + _BUILD_BLOCK]))

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

    def _io_flags(self, faiss: ModuleType) -> int:
        """faiss's ``write_index`` flags of the saved index."""
        return 0

    def _export_library(self) -> dict[str, Any]:
        faiss = self._library()
        return {"faiss_index": _faiss_bytes(faiss, self._index, self._io_flags(faiss))}

    def _import_library(self, data: dict[str, Any]) -> None:
        faiss = self._library()
        raw = data.get("faiss_index")
        if isinstance(raw, np.ndarray) and raw.dtype == np.uint8 and raw.ndim == 1:  # layout 1
            raw = raw.data
        index = _read_faiss(faiss, raw, self.name, "faiss index")
        if index.d != self.n_features_in_ or index.ntotal != self.n_samples_fit_:
            raise ValueError(
                f"the saved {self.name} index is damaged: it holds {index.ntotal} vectors of {index.d} "
                f"features, the model {self.n_samples_fit_} of {self.n_features_in_}"
            )
        self._check_faiss(faiss, index)
        self._index = self._completed(faiss, index)

    def _completed(self, faiss: ModuleType, index: Any) -> Any:
        """The read index made whole (what it was saved without)."""
        return index

    def _check_faiss(self, faiss: ModuleType, index: Any) -> None:  # pragma: no cover - abstract
        raise NotImplementedError


def _trained_ivf(owner: ApproximateIndex, faiss: ModuleType, X: Matrix, rows: np.ndarray, nlist: int | None,
                 *, flat: bool, cells_per_sqrt_n: float = _IVF_CELLS_PER_SQRT_N, points_per_cell: int | None = None
                 ) -> tuple[Any, Any, int]:
    """A trained, empty faiss IVF index of the ``rows`` of ``X`` (``owner``'s vectors and seed):
    ``(index, quantizer, nlist)``.  ``flat``: float32 vectors in the cells (``IndexIVFFlat``);
    else 8-bit codes (``IndexIVFScalarQuantizer``, a quarter of the memory: enough where the
    candidates are re-ranked exactly anyway).  ``nlist`` None: ``cells_per_sqrt_n`` x sqrt(n)
    cells; k-means trains on at most ``points_per_cell`` rows a cell (None: faiss's 256)."""
    n, d = len(rows), X.shape[1]
    nlist = nlist if nlist is not None else int(round(cells_per_sqrt_n * math.sqrt(n)))
    nlist = max(1, min(nlist, n // 39 if n >= 39 else 1, n))
    quantizer = faiss.IndexFlatL2(d)
    if flat:
        index = faiss.IndexIVFFlat(quantizer, d, nlist, faiss.METRIC_L2)
    else:
        index = faiss.IndexIVFScalarQuantizer(quantizer, d, nlist, faiss.ScalarQuantizer.QT_8bit, faiss.METRIC_L2)
    seed = _seed(getattr(owner, "random_state", 0))
    index.cp.seed = seed
    index.cp.min_points_per_centroid = 1  # small data: no "provide at least 39 points" noise
    if points_per_cell is not None:
        index.cp.max_points_per_centroid = points_per_cell
    # k-means trains on at most max_points_per_centroid rows a cell (faiss would sample them)
    most = index.cp.max_points_per_centroid * nlist
    rng = np.random.default_rng(seed)
    train = rows if n <= most else np.sort(rng.choice(rows, most, replace=False))
    index.train(owner._vectors(train))
    return index, quantizer, nlist  # the IVF index refers to its quantizer: keep both


def _checked_ivf(faiss: ModuleType, index: Any, n: int, name: str) -> Any:
    """The quantizer of a read IVF index whose cells hold the rows 0 .. n - 1 once each."""
    ivf = faiss.extract_index_ivf(index)
    lists = ivf.invlists
    sizes = np.array([lists.list_size(c) for c in range(ivf.nlist)], dtype=np.int64)
    ids = [faiss.rev_swig_ptr(lists.get_ids(c), int(size)) for c, size in enumerate(sizes) if size]
    ids = np.concatenate(ids) if ids else np.empty(0, dtype=np.int64)
    if ivf.quantizer.ntotal != ivf.nlist or sizes.sum() != n or not np.array_equal(np.sort(ids), np.arange(n)):
        raise ValueError(f"the saved {name} index is damaged: its cells do not hold rows 0 .. {n - 1} once each")
    return ivf.quantizer


class _WithIVF:
    """What the indexes holding a faiss IVF share: the number of its lists in the saved state,
    and no quantizer in a pickle (``serialize_index`` stores it with the IVF)."""

    nlist_: int

    def __getstate__(self) -> dict[str, Any]:
        state = dict(super().__getstate__())
        state.pop("_quantizer", None)
        return state

    def _saved_state(self) -> dict[str, Any]:
        return {**super()._saved_state(), "nlist": int(self.nlist_)}

    def _restore_state(self, state: dict[str, Any], X: Matrix) -> None:
        super()._restore_state(state, X)
        self.nlist_ = int(state["nlist"])


class FaissIVFIndex(_WithIVF, _FaissBase):
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
        The recall@``recall_k`` that ``nprobe`` is calibrated to reach (None: 0.96, so that
        at least 0.95 is reached within the calibration sample's error); not
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
        Tie-aware recall@``recall_k`` of leave-one-out queries of a seeded sample of
        ``recall_rows_`` indexed rows against their exact neighbours, at ``nprobe_``;
        its standard error is at most ``sqrt(recall_ (1 - recall_) / recall_rows_)``.
    recall_rows_ : int
        Rows of that sample: ``min(1000, n // 5)`` of the n indexed rows (as many again are
        held out as new queries), all n below 100 rows (none held out).
    low_recall_share_ : float
        The share of that sample's rows whose recall@``recall_k`` is below one half: the
        queries that lost most of their neighbours, which the mean hides (one row is
        ``1 / recall_rows_``; a share of 0 bounds the true one at
        ``1 - 0.05 ** (1 / recall_rows_)`` with 95 % confidence: 0.3 % at 1,000 rows, 3 % at
        100, i.e. 500 indexed rows).
    query_recall_ : float
        The same recall for rows of another sample as new queries (``predict``'s search),
        measured before they were added to the index, at ``nprobe_``; NaN for fewer than 100
        rows (none held out).
    query_low_recall_share_ : float
        The share of those new queries whose recall@``recall_k`` is below one half (NaN
        as ``query_recall_``).

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

    def _build_library(self, faiss: ModuleType, X: Matrix, rows: np.ndarray, progress: Any) -> None:
        self._index, self._quantizer, self.nlist_ = _trained_ivf(self, faiss, X, rows, self.nlist, flat=True)
        self._add_library(X, rows, progress)

    def _breadth_range(self, k: int) -> tuple[int, int]:
        return 1, self.nlist_

    def _search_library(self, Q: Matrix, Qp: Matrix, k: int, breadth: Any) -> np.ndarray:
        faiss = self._library()
        params = faiss.SearchParametersIVF()
        params.nprobe = min(int(breadth), self.nlist_)
        _, idx = self._index.search(self._lib_vectors(Q, Qp), k, params=params)
        return idx

    def _check_faiss(self, faiss: ModuleType, index: Any) -> None:
        self._quantizer = _checked_ivf(faiss, index, self.n_samples_fit_, self.name)


class FaissHNSWIndex(_FaissBase):
    """faiss ``IndexHNSWFlat``: a hierarchical navigable small-world graph.

    Parameters
    ----------
    metric : {"euclidean", "cosine"}, default="euclidean"
    M : int, default=48
        Graph degree.
    ef_construction : int, default=40
        Candidate list size while building.
    ef_search : int or None, default=None
        Candidate list size while searching; raised to k when smaller (HNSW needs ef >= k).
        None: the smallest value that reaches ``recall`` on the calibration sample.
    recall : float in (0, 1] or None, default=None
        The recall@``recall_k`` that ``ef_search`` is calibrated to reach (None: 0.96, so that
        at least 0.95 is reached within the calibration sample's error); not
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
        Tie-aware recall@``recall_k`` of leave-one-out queries of a seeded sample of
        ``recall_rows_`` indexed rows against their exact neighbours, at ``ef_search_``;
        its standard error is at most ``sqrt(recall_ (1 - recall_) / recall_rows_)``.
    recall_rows_ : int
        Rows of that sample: ``min(1000, n // 5)`` of the n indexed rows (as many again are
        held out as new queries), all n below 100 rows (none held out).
    low_recall_share_ : float
        The share of that sample's rows whose recall@``recall_k`` is below one half: the
        queries that lost most of their neighbours, which the mean hides (one row is
        ``1 / recall_rows_``; a share of 0 bounds the true one at
        ``1 - 0.05 ** (1 / recall_rows_)`` with 95 % confidence: 0.3 % at 1,000 rows, 3 % at
        100, i.e. 500 indexed rows).
    query_recall_ : float
        The same recall for rows of another sample as new queries (``predict``'s search),
        measured before they were added to the index, at ``ef_search_``; NaN for fewer than 100
        rows (none held out).
    query_low_recall_share_ : float
        The share of those new queries whose recall@``recall_k`` is below one half (NaN
        as ``query_recall_``).

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
        M: int = 48,
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

    def _build_library(self, faiss: ModuleType, X: Matrix, rows: np.ndarray, progress: Any) -> None:
        self._index = self._new_graph(faiss, X.shape[1])
        self._add_library(X, rows, progress)

    def _new_graph(self, faiss: ModuleType, d: int) -> Any:
        index = faiss.IndexHNSWFlat(d, self.M, faiss.METRIC_L2)
        index.hnsw.efConstruction = self.ef_construction
        return index

    def _io_flags(self, faiss: ModuleType) -> int:
        # the graph only: the vectors are the model's training rows, saved once (by the model)
        return faiss.IO_FLAG_SKIP_STORAGE

    def _breadth_range(self, k: int) -> tuple[int, int]:
        return k, max(k, self.n_samples_fit_)

    def _search_library(self, Q: Matrix, Qp: Matrix, k: int, breadth: Any) -> np.ndarray:
        return self._search_graph(self._lib_vectors(Q, Qp), k, breadth)

    def _search_graph(self, vectors: np.ndarray, k: int, breadth: Any) -> np.ndarray:
        params = self._library().SearchParametersHNSW()
        params.efSearch = max(int(breadth), k)
        _, idx = self._index.search(vectors, k, params=params)
        return idx

    def _check_faiss(self, faiss: ModuleType, index: Any) -> None:
        # read_index gives the index its own type (no downcast: a downcast copy does not own it)
        if not isinstance(index, faiss.IndexHNSWFlat):
            raise ValueError(f"the saved {self.name} index is damaged: it is an {type(index).__name__}, "
                             "not an IndexHNSWFlat")
        self._check_graph(faiss, index.hnsw)
        if index.storage is not None and index.storage.ntotal != self.n_samples_fit_:
            raise ValueError(f"the saved {self.name} index is damaged: its vectors are not one a row")

    def _completed(self, faiss: ModuleType, index: Any) -> Any:
        """Saved without its vectors (layout 2): their float32 storage, made again from the
        model's rows in the library's order, as :meth:`_add_library` gave them, written in place."""
        if index.storage is not None:  # layout 1
            return index
        n, d = self.n_samples_fit_, self.n_features_in_
        storage = faiss.IndexFlatL2(d)
        storage.codes.resize(n * d * 4)
        if n:
            vectors = faiss.rev_swig_ptr(storage.codes.data(), n * d * 4).view(np.float32).reshape(n, d)
            for a in range(0, n, _BUILD_BLOCK):
                vectors[a : a + _BUILD_BLOCK] = self._vectors(self._order[a : a + _BUILD_BLOCK])
        storage.ntotal = n
        storage.this.disown()  # the HNSW index owns it now
        index.storage = storage
        index.own_fields = True
        return index

    def _check_graph(self, faiss: ModuleType, hnsw: Any) -> None:
        n = self.n_samples_fit_
        levels, offsets, neighbors, cum = (
            _seen(faiss, v) for v in (hnsw.levels, hnsw.offsets, hnsw.neighbors, hnsw.cum_nneighbor_per_level))
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


class FaissUnionIndex(_WithIVF, FaissHNSWIndex):
    """A faiss HNSW graph and a faiss IVF, their candidates merged and re-ranked exactly.

    An HNSW search fails whole queries now and then: on clustered data its greedy search can
    stay among rows of the wrong cluster and return none of the true neighbours, while the
    mean recall still reads 0.96-0.99.  An IVF fails elsewhere (a query near the border of
    its cells).  This index asks both, a better-built graph (``ef_construction=100``, over
    8-bit codes of the rows) for ``k`` candidates and an IVF of 8-bit codes
    (``IndexIVFScalarQuantizer``) for ``2 k`` from its ``nprobe`` nearest cells, and ranks
    the union by exact float64 distances: a query loses its neighbours only where both
    structures fail.  Measured with ``benchmarks/tail.py`` at 10^5 x 128 on three laws (a
    label mixture, 1,000 clusters, and 5,000 tiny tight clusters made hard for HNSW): one
    query of 10^5 of the hard law below recall@10 0.5 (five seeds, leave-one-out and new),
    none of the others, against 0.05-2.8 % of queries for ``"faiss-hnsw"``, ``"hnswlib"``
    and ``"faiss-ivf"`` calibrated to the same mean.  The defaults are the cheapest of a
    sweep (M 16-64, ``ef_construction`` 40-200, ``nprobe`` 8-32, cells sqrt(n)-4 sqrt(n),
    the graph over float32 rows or codes, breadths 32-64) that kept that tail: at 10^6 x 128
    its fit and prediction were 10.7 (label mixture) to 15.7 (hard law) times faster than the
    exact search's.

    Parameters
    ----------
    metric : {"euclidean", "cosine"}, default="euclidean"
    M : int, default=32
        Graph degree.
    ef_construction : int, default=100
        Candidate list size while building the graph (at 40, 2-5 queries in 2 x 10^4 of the
        hard law were lost; 200 doubles the build for no measured gain).
    ef_search : int or None, default=None
        Candidate list size of the graph's search (at least k).  None: calibrated to
        ``recall``, never below 64 for new queries (at 32 five in 10^4 of the label mixture
        were lost) and never below 32 for the leave-one-out queries of ``fit`` (an indexed
        row finds itself, and its neighbours through its own links: none of 7 x 10^4 lost at
        32 on the three laws).
    nlist : int or None, default=None
        IVF cells; None means ``round(4 sqrt(n))``, at most ``n // 39``.
    nprobe : int, default=32
        IVF cells searched per query.
    storage : {"sq8", "float32"}, default="sq8"
        What the graph holds of the rows to find its way: 8-bit codes (``IndexHNSWSQ``, a
        quarter of the memory; the candidates are ranked by exact distances anyway), or a
        float32 copy (``IndexHNSWFlat``, as ``"faiss-hnsw"``).  On the label mixture at 10^5
        x 128 the codes made the build 26 % and the search 29 % faster, with no query lost
        (``benchmarks/tail.py``).
    recall : float in (0, 1] or None, default=None
        The recall@``recall_k`` that ``ef_search`` is calibrated to reach (None: 0.96).
    recall_k : int, default=10
        The k of that recall (the estimators set it to their ``n_neighbors``).
    random_state : int, RandomState or None, default=0
        Seed of faiss's k-means and of the calibration sample.

    Attributes
    ----------
    ef_search_ : int
        ``ef_search``, or the value calibrated for new queries (``predict``'s).
    loo_ef_search_ : int
        ``ef_search``, or the value calibrated for the leave-one-out queries (``fit``'s).
    nlist_ : int
        IVF cells used.
    recall_ : float
        Tie-aware recall@``recall_k`` of leave-one-out queries of a seeded sample of
        ``recall_rows_`` indexed rows against their exact neighbours.
    recall_rows_ : int
        Rows of that sample: ``min(1000, n // 5)`` of the n indexed rows (as many again are
        held out as new queries), all n below 100 rows (none held out).
    low_recall_share_ : float
        The share of that sample's rows whose recall@``recall_k`` is below one half (one row
        is ``1 / recall_rows_``; a share of 0 bounds the true one at
        ``1 - 0.05 ** (1 / recall_rows_)`` with 95 % confidence: 0.3 % at 1,000 rows, 3 % at
        100, i.e. 500 indexed rows).
    query_recall_ : float
        The same recall for rows of another sample as new queries (``predict``'s search).
    query_low_recall_share_ : float
        The share of those new queries whose recall@``recall_k`` is below one half.

    Notes
    -----
    Needs ``pip install 'mlneighbors[faiss]'``.  Memory beyond the rows: the graph (about
    ``8 M`` bytes a row) with its codes of the rows (one byte a feature a row; four with
    ``storage="float32"``), and the IVF's codes (one byte a feature a row) with its row
    numbers.  A saved index keeps the storage it was built with.

    Examples
    --------
    >>> from mlneighbors import MLkNN
    >>> from mlneighbors.neighbors import FaissUnionIndex
    >>> FaissUnionIndex(recall=0.99)  # faiss is imported when the index is built
    FaissUnionIndex(recall=0.99)
    >>> model = MLkNN(10, backend="faiss-union")
    """

    name: ClassVar[str] = "faiss-union"

    def __init__(
        self,
        *,
        metric: str = "euclidean",
        M: int = 32,
        ef_construction: int = 100,
        ef_search: int | None = None,
        nlist: int | None = None,
        nprobe: int = 32,
        storage: str = "sq8",
        recall: float | None = None,
        recall_k: int = 10,
        random_state: Any = 0,
    ) -> None:
        super().__init__(metric=metric, M=M, ef_construction=ef_construction, ef_search=ef_search,
                         recall=recall, recall_k=recall_k, random_state=random_state)
        self.nlist = nlist
        self.nprobe = nprobe
        self.storage = storage

    def _check_params(self) -> None:
        super()._check_params()
        check_positive_int(self.nlist, "nlist", allow_none=True)
        check_positive_int(self.nprobe, "nprobe")
        if self.storage not in _UNION_STORAGES:
            raise ValueError(f"storage must be one of {', '.join(map(repr, _UNION_STORAGES))}; got {self.storage!r}")

    def _new_graph(self, faiss: ModuleType, d: int) -> Any:
        if self.storage == "float32":
            return super()._new_graph(faiss, d)
        index = faiss.IndexHNSWSQ(d, faiss.ScalarQuantizer.QT_8bit, self.M, faiss.METRIC_L2)
        index.hnsw.efConstruction = self.ef_construction
        return index

    def _io_flags(self, faiss: ModuleType) -> int:
        # codes are saved with the graph: they cannot be made again from the rows alone
        return 0 if isinstance(self._index, faiss.IndexHNSWSQ) else super()._io_flags(faiss)

    def _build_library(self, faiss: ModuleType, X: Matrix, rows: np.ndarray, progress: Any) -> None:
        self._index = self._new_graph(faiss, X.shape[1])
        if not self._index.is_trained:
            # the codes' range per feature, from a seeded sample (rows outside it are clipped:
            # the codes only guide the search, the candidates are ranked by exact distances)
            size = min(len(rows), _SQ_TRAIN_ROWS)
            sample = np.sort(np.random.default_rng(_seed(self.random_state)).choice(rows, size, replace=False))
            self._index.train(self._vectors(sample))
        self._ivf, self._quantizer, self.nlist_ = _trained_ivf(
            self, faiss, X, rows, self.nlist, flat=False, cells_per_sqrt_n=_UNION_CELLS_PER_SQRT_N,
            points_per_cell=_UNION_POINTS_PER_CELL)
        self._add_library(X, rows, progress)

    def _add_library(self, X: Matrix, rows: np.ndarray, progress: Any) -> None:
        for a in range(0, len(rows), _BUILD_BLOCK):
            vectors = self._vectors(rows[a : a + _BUILD_BLOCK])
            self._index.add(vectors)  # both number the rows in the order they are added
            self._ivf.add(vectors)
            progress.advance(len(vectors))

    def _breadth_range(self, k: int, floor: int = _UNION_EF_MIN) -> tuple[int, int]:
        return max(k, floor), max(k, floor, self.n_samples_fit_)

    def _loo_breadth_range(self, k: int) -> tuple[int, int]:
        return self._breadth_range(k, _UNION_LOO_EF_MIN)

    def _check_faiss(self, faiss: ModuleType, index: Any) -> None:
        if isinstance(index, faiss.IndexHNSWSQ):  # saved with its codes
            self._check_graph(faiss, index.hnsw)
            if index.storage is None:  # faiss checks that codes it reads are one a row
                raise ValueError(f"the saved {self.name} index is damaged: it was saved without its codes")
        else:  # a float32 graph (saved without its vectors)
            super()._check_faiss(faiss, index)

    def _search_library(self, Q: Matrix, Qp: Matrix, k: int, breadth: Any) -> np.ndarray:
        vectors = self._lib_vectors(Q, Qp)
        from_graph = self._search_graph(vectors, k, breadth)
        cells = self._library().SearchParametersIVF()
        cells.nprobe = min(int(self.nprobe), self.nlist_)
        _, from_cells = self._ivf.search(vectors, 2 * k, params=cells)
        return np.hstack([from_graph, from_cells])  # -1 padding and repeats: _rank counts them out

    def __getstate__(self) -> dict[str, Any]:
        state = dict(super().__getstate__())
        if "_ivf" in state:
            state["_ivf"] = self._library().serialize_index(state["_ivf"])
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        if isinstance(state.get("_ivf"), np.ndarray):
            faiss = import_optional("faiss", backend=self.name, extra="faiss")
            state = dict(state)
            state["_ivf"] = faiss.deserialize_index(state["_ivf"])
            state["_quantizer"] = faiss.extract_index_ivf(state["_ivf"]).quantizer
        super().__setstate__(state)

    def _export_library(self) -> dict[str, Any]:
        return {**super()._export_library(), "faiss_ivf": _faiss_bytes(self._library(), self._ivf)}

    def _import_library(self, data: dict[str, Any]) -> None:
        super()._import_library(data)
        faiss = self._library()
        ivf = _read_faiss(faiss, data.get("faiss_ivf"), self.name, "faiss IVF")
        if ivf.d != self.n_features_in_:
            raise ValueError(f"the saved {self.name} index is damaged: its IVF holds vectors of {ivf.d} features")
        self._quantizer = _checked_ivf(faiss, ivf, self.n_samples_fit_, self.name)
        self._ivf = ivf


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
        The recall@``recall_k`` that ``ef`` is calibrated to reach (None: 0.96, so that at
        least 0.95 is reached within the calibration sample's error); not together
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
        Tie-aware recall@``recall_k`` of leave-one-out queries of a seeded sample of
        ``recall_rows_`` indexed rows against their exact neighbours, at ``ef_``; its
        standard error is at most ``sqrt(recall_ (1 - recall_) / recall_rows_)``.
    recall_rows_ : int
        Rows of that sample: ``min(1000, n // 5)`` of the n indexed rows (as many again are
        held out as new queries), all n below 100 rows (none held out).
    low_recall_share_ : float
        The share of that sample's rows whose recall@``recall_k`` is below one half: the
        queries that lost most of their neighbours, which the mean hides (one row is
        ``1 / recall_rows_``; a share of 0 bounds the true one at
        ``1 - 0.05 ** (1 / recall_rows_)`` with 95 % confidence: 0.3 % at 1,000 rows, 3 % at
        100, i.e. 500 indexed rows).
    query_recall_ : float
        The same recall for rows of another sample as new queries (``predict``'s search),
        measured before they were added to the index, at ``ef_``; NaN for fewer than 100
        rows (none held out).
    query_low_recall_share_ : float
        The share of those new queries whose recall@``recall_k`` is below one half (NaN
        as ``query_recall_``).

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

    def _build_library(self, hnswlib: ModuleType, X: Matrix, rows: np.ndarray, progress: Any) -> None:
        n, d = X.shape
        index = hnswlib.Index(space="l2", dim=d)
        index.init_index(
            max_elements=n, M=self.M, ef_construction=self.ef_construction, random_seed=_seed(self.random_state)
        )
        self._index = index
        self._added = 0
        self._add_library(X, rows, progress)

    def _add_library(self, X: Matrix, rows: np.ndarray, progress: Any) -> None:
        threads = resolve_n_jobs(self.n_jobs)
        for a in range(0, len(rows), _BUILD_BLOCK):
            part = rows[a : a + _BUILD_BLOCK]
            ids = np.arange(self._added, self._added + len(part))
            self._index.add_items(self._vectors(part), ids, num_threads=threads)
            self._added += len(part)
            progress.advance(len(part))

    def _breadth_range(self, k: int) -> tuple[int, int]:
        return k, max(k, self.n_samples_fit_)

    def _search_library(self, Q: Matrix, Qp: Matrix, k: int, breadth: Any) -> np.ndarray:
        V = _dense32(Qp if self.metric == "cosine" else Q)
        n = self._ref.n_samples
        ef = max(int(breadth), k)
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
        self._added = self.n_samples_fit_


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
    low_recall_share_ : float
        The share of that sample's rows whose recall@``recall_k`` is below one half: the
        queries that lost most of their neighbours, which the mean hides (one row of
        1,000 is 0.1 %).
    query_recall_, query_low_recall_share_ : float
        NaN: no rows are held out as new queries (pynndescent adds no rows to a built
        index).

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
    # no search breadth to calibrate: no recall parameter (its recall_ is measured)
    capabilities: ClassVar[Capabilities] = Capabilities(metrics=("euclidean", "cosine", "manhattan"), sparse=True)

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
    def _data(A: Matrix, sparse: bool | None = None) -> Matrix:
        """float32 rows for pynndescent, CSR or dense as ``sparse`` says (None: as ``A`` is);
        its index takes queries of the format it was built on."""
        sparse = sp.issparse(A) if sparse is None else sparse
        if sparse:
            return sp.csr_matrix(A).astype(np.float32)
        return _dense32(A)

    def _build(self, X: Matrix) -> None:
        """Build on every row (pynndescent adds no rows later), then measure the recall of
        leave-one-out queries (through the graph, as ``fit``) on a seeded sample of rows."""
        lib = self._library()
        self._ref = Reference(X, self.metric)
        n = X.shape[0]
        self._order = np.arange(n)
        with task(f"build {self.name} index", n) as progress:
            self._build_library(lib, X, self._order, progress)
        self.n_samples_fit_, self.n_features_in_ = X.shape
        k = min(self.recall_k, n - 1)
        rows = sample_rows(n, RECALL_SAMPLE, _seed(self.random_state))
        hits = self._loo_hits(X, rows, k, None, None) if k >= 1 else np.zeros(0, dtype=np.intp)
        self.recall_, self.low_recall_share_ = mean_recall(hits, k), low_recall_share(hits / max(k, 1))
        # no rows held out: pynndescent cannot add them later
        self.query_recall_ = self.query_low_recall_share_ = float("nan")
        self.recall_rows_ = len(rows)

    def _build_library(self, pynndescent: ModuleType, X: Matrix, rows: np.ndarray, progress: Any) -> None:
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

    def _search_library(self, Q: Matrix, Qp: Matrix, k: int, breadth: Any) -> np.ndarray:
        idx, _ = self._index.query(self._data(Q, sp.issparse(self._ref.X)), k=k, epsilon=self.epsilon)
        return idx

    def _loo_query(self, X: Matrix, rows: np.ndarray | None, m: int) -> tuple[np.ndarray, np.ndarray] | None:
        """The ``m`` nearest of the graph's neighbours of the indexed ``rows`` of ``X`` (None:
        all; the row itself among them), re-ranked in float64; rows with fewer than ``m``
        valid ones are searched.  None when the graph is not used (``loo_graph=False``, or
        no more than ``m`` neighbours a row in the graph)."""
        graph = self.__dict__.get("_graph")
        if not self.loo_graph or graph is None or graph.shape[1] <= m:
            return None
        rows = np.arange(X.shape[0]) if rows is None else rows
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
