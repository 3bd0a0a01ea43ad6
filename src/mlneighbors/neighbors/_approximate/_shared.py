"""The shared base of the approximate backends: re-ranking, the tie rule, the -1 repair, recall calibration.

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

from ..._config import working_memory_bytes
from ..._docstrings import fill_doc
from ..._progress import task
from .._capabilities import Capabilities
from .._distance import Matrix, Reference
from .._exact import ExactIndex
from .._loo import loo_kneighbors
from .._protocol import BaseIndex, check_metric, check_positive_int, check_recall, import_optional
from .._recall import (
    DEFAULT_RECALL,
    RECALL_SAMPLE,
    calibrate,
    exact_loo,
    low_recall_share,
    mean_recall,
    sample_rows,
    tie_aware_hits,
)

__all__ = ["ApproximateIndex"]

# fewer sampled rows than this (an index of fewer than 5 * 20 rows): no held-out calibration,
# the widest search
_MIN_HELD = 20


def _seed(random_state: Any) -> int:
    """An int seed for libraries that take one (faiss, hnswlib)."""
    if random_state is None or isinstance(random_state, numbers.Integral):
        return 0 if random_state is None else int(random_state)
    return int(check_random_state(random_state).randint(0, 2**31 - 1))


#: the Attributes a calibrated adapter documents (``{fitted}``: its breadth's fitted name), one
#: text for all: an adapter's docstring says ``{recall_attributes}`` where they go
_RECALL_ATTRIBUTES = """    recall_ : float
        Tie-aware recall@``recall_k`` of leave-one-out queries of a seeded sample of
        ``recall_rows_`` indexed rows against their exact neighbours, at ``{fitted}``;
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
        measured before they were added to the index, at ``{fitted}``; NaN for fewer than 100
        rows (none held out).
    query_low_recall_share_ : float
        The share of those new queries whose recall@``recall_k`` is below one half (NaN
        as ``query_recall_``).
"""


class ApproximateIndex(BaseIndex):
    """The base of an approximate library's adapter: what the library lacks, done once.

    An adapter says how to build, extend, search, export and import the library's index (the
    hooks below); this base makes of it a backend of the protocol: the library imported when
    an index is built (a missing one raises ``ImportError`` naming ``extra``); the library's
    candidates re-ranked by float64 true distances with the exact search's tie rule (lower
    row first); a row the library could not fill with k distinct valid rows (``-1`` padding,
    duplicates) answered by brute force, so never ``-1``; the recall measured at build and
    the search breadth calibrated to ``recall`` (``recall_``, ``low_recall_share_``,
    ``query_recall_``, ...); the leave-one-out queries of ``fit`` at their own breadth; and
    the built index saved as data with a model (``saved_state`` / ``restore_state``).

    The library's index holds the rows in the order ``_order`` (library id -> row number):
    the rows of the calibration sample come last, so that they can be queried before they
    are added (see :meth:`build_rows`).

    Class attributes an adapter sets: ``name`` (its backend name), ``module`` (what is
    imported), ``package`` (what ``pip`` installs), ``extra`` (the ``mlneighbors[...]`` extra
    that installs it), ``breadth`` (the name of the search-breadth parameter calibrated to
    ``recall``, e.g. ``"ef"``; "" for none), and ``capabilities`` where they differ from the
    default here.  Its constructor stores ``metric``, its own parameters, ``recall``,
    ``recall_k`` and ``random_state`` (all keyword-only, scikit-learn's convention).

    Hooks an adapter implements (each documented below): :meth:`build_library`,
    :meth:`add_library`, :meth:`search_library`, :meth:`breadth_range` (with a breadth),
    :meth:`export_library` and :meth:`import_library` (saving; or declare
    ``saved_state=False`` in ``capabilities``), and :meth:`check_params` (its parameters, then
    :meth:`check_recall_params`).  Helpers it may use: :meth:`library`, :meth:`vectors`,
    :meth:`dense32`, ``build_block`` and ``n_samples_fit_`` / ``n_features_in_``.

    An adapter pickles as any Python object (a model is sent to other processes); a library
    index that does not pickle is dropped in ``__getstate__`` and made again from
    :meth:`export_library`'s data in ``__setstate__`` (as the faiss adapters do).
    :func:`~mlneighbors.neighbors.check_index` tests an adapter against all of this.

    Examples
    --------
    hnswlib's adapter (``mlneighbors/neighbors/_approximate/_hnswlib.py``) is the shortest
    complete one; every registered adapter is one:

    >>> from mlneighbors.neighbors import ApproximateIndex, HnswlibIndex
    >>> issubclass(HnswlibIndex, ApproximateIndex), HnswlibIndex.breadth, HnswlibIndex.extra
    (True, 'ef', 'hnsw')
    """

    # float32 rows: the libraries get float32 vectors and the re-ranking computes in float64
    # from any rows, so dense float32 rows are kept once, as given (issue 29: 10^6 x 128 held
    # twice otherwise)
    capabilities: ClassVar[Capabilities] = Capabilities(
        metrics=("euclidean", "cosine"), sparse=True, recall=True, float32_rows=("euclidean", "cosine"),
        loo_queries=True, saved_state=True, adds_rows=True,
    )
    #: the search breadth calibrated to ``recall`` ("" for an adapter without one)
    breadth: ClassVar[str] = ""
    #: rows handed to the library's build per call (progress is reported between calls)
    build_block: ClassVar[int] = 1 << 15
    #: queries per call of the library (progress is reported between calls; the libraries
    #: spread one call over their threads)
    query_block: ClassVar[int] = 1 << 14

    recall: float | None
    recall_k: int

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        marker = "    {recall_attributes}\n"
        if cls.__doc__ and marker in cls.__doc__:  # (None under python -OO)
            cls.__doc__ = cls.__doc__.replace(marker, _RECALL_ATTRIBUTES.replace("{fitted}", cls.breadth + "_"))

    def library(self) -> ModuleType:
        """The library's module, imported now (``ImportError`` naming the extra when absent).

        Returns
        -------
        module : module
            The module named by the class's ``module`` attribute.
        """
        return import_optional(self.module, backend=self.name, extra=self.extra, package=self.package or None)

    @staticmethod
    def dense32(A: Matrix) -> np.ndarray:
        """Rows as a C-contiguous dense float32 array (CSR densified), what most libraries take.

        Parameters
        ----------
        A : ndarray or CSR matrix of shape (n_rows, n_features)

        Returns
        -------
        rows : ndarray of shape (n_rows, n_features), float32
        """
        A = A.toarray() if sp.issparse(A) else A
        return np.ascontiguousarray(A, dtype=np.float32)

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

    def check_recall_params(self) -> None:
        """Check ``recall_k`` and ``recall`` (and that ``recall`` and a fixed breadth are not
        both given); an adapter's :meth:`check_params` calls it after its own checks."""
        check_positive_int(self.recall_k, "recall_k")
        r = self.recall
        check_recall(r)
        if r is not None and self.breadth and getattr(self, self.breadth) is not None:
            raise ValueError(
                f"give recall (the {self.breadth} that reaches it is calibrated at build) or "
                f"{self.breadth} (fixed), not both: got recall={r!r}, {self.breadth}={getattr(self, self.breadth)!r}"
            )

    def vectors(self, rows: np.ndarray) -> np.ndarray:
        """The library's float32 vectors of indexed ``rows`` (normalised for cosine: the
        libraries search cosine as euclidean between unit rows).

        Parameters
        ----------
        rows : ndarray of int
            Numbers of indexed rows.

        Returns
        -------
        vectors : ndarray of shape (len(rows), n_features), float32
        """
        return self.dense32(self._ref.X[rows])

    @fill_doc
    def build_rows(self, X: Matrix) -> None:
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

        Parameters
        ----------
        {build_rows_parameter}
        """
        lib = self.library()
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
            self.build_library(lib, X, rest, progress)
            self.n_samples_fit_, self.n_features_in_ = X.shape  # the calibration queries the index
            fixed = getattr(self, self.breadth) if self.breadth else None
            target = DEFAULT_RECALL if self.recall is None else float(self.recall)
            lo, hi = self.breadth_range(k + 1) if self.breadth else (0, 0)
            loo_lo, loo_hi = self.loo_breadth_range(k + 1) if self.breadth else (0, 0)
            if len(held):
                self._breadth, self.query_recall_, self.query_low_recall_share_ = self._calibrated(
                    lambda b: self._held_out_hits(X, held, k, b, kth), k, fixed, lo, hi, target)
            else:
                self._breadth = fixed if fixed is not None else hi
                self.query_recall_ = self.query_low_recall_share_ = float("nan")
            self.add_library(X, held, progress)
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

    def add_rows(self, X: Matrix) -> None:
        """Add the rows after the indexed ones to the library's index (its graph, its lists),
        then measure ``recall_`` and ``low_recall_share_`` again, as at build, on a seeded
        sample of all rows (the search breadths calibrated at build are kept).

        Parameters
        ----------
        X : ndarray or CSR matrix of shape (n_samples, n_features)
            Every row now, validated: the indexed rows first, as they were, then the new ones.
        """
        n_old, n = self.n_samples_fit_, X.shape[0]
        if n < n_old or X.shape[1] != self.n_features_in_:
            raise ValueError(f"{self.name}: add_rows takes the {n_old} indexed rows followed by new ones, "
                             f"got {X.shape[0]} rows of {X.shape[1]} features")
        new = np.arange(n_old, n, dtype=np.intp)
        self._ref = Reference(X, self.metric)
        self.grow_library(n)
        with task(f"add to the {self.name} index", len(new)) as progress:
            self.add_library(X, new, progress)
        self._order = np.concatenate([self._order, new])
        self.n_samples_fit_ = n
        k = min(self.recall_k, n - 2)
        if k < 1:
            return
        seed = _seed(getattr(self, "random_state", 0)) + 2
        rows = np.sort(sample_rows(n, min(RECALL_SAMPLE, n), seed))
        hits = self._loo_hits(X, rows, k, self._loo_breadth, None)
        self.recall_, self.low_recall_share_ = mean_recall(hits, k), low_recall_share(hits / k)
        self.recall_rows_ = len(rows)

    def grow_library(self, n: int) -> None:
        """Make room for ``n`` rows in the library's index before rows are added (hook: nothing
        by default; hnswlib's index has a capacity).

        Parameters
        ----------
        n : int
            The number of rows it will hold.
        """

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
    def breadth_range(self, k: int) -> tuple[int, int]:  # pragma: no cover - abstract
        """The smallest and largest useful search breadth for ``k`` neighbours (hook, for an
        adapter with a ``breadth``): the calibration searches between them.

        Parameters
        ----------
        k : int
            Neighbours asked.

        Returns
        -------
        lo, hi : int
        """
        raise NotImplementedError

    def loo_breadth_range(self, k: int) -> tuple[int, int]:
        """The same for the leave-one-out queries of indexed rows (hook, optional; default:
        :meth:`breadth_range`).

        Parameters
        ----------
        k : int
            Neighbours asked of each indexed row, the row itself among them.

        Returns
        -------
        low, high : int
            The smallest and largest useful search breadth.
        """
        return self.breadth_range(k)

    # ------------------------------------------------------------------ query
    def query_rows(self, Q: Matrix, k: int) -> tuple[np.ndarray, np.ndarray]:
        """The ``k`` nearest indexed rows of validated queries: the library's candidates at the
        built breadth, re-ranked by exact distances with the tie rule, queries it answered
        short searched by brute force.

        Parameters
        ----------
        Q : ndarray or CSR matrix of shape (n_queries, n_features)
        k : int

        Returns
        -------
        dist, idx : ndarray of shape (n_queries, k)
        """
        return self._query_at(Q, k, getattr(self, "_breadth", None), self._brute_force)

    @fill_doc
    def loo_query_rows(self, X: Matrix, rows: np.ndarray | None, m: int) -> tuple[np.ndarray, np.ndarray] | None:
        """Leave-one-out queries of the indexed ``rows`` of ``X`` (None: all), ``m`` neighbours
        each (the row itself among them), at the breadth calibrated for them.

        Parameters
        ----------
        {loo_rows_parameters}

        Returns
        -------
        answer : (ndarray, ndarray) or None
            Distances and indices of shape (n_rows, m); None where the index has no breadth
            of its own (the caller then queries the rows).
        """
        if not self.breadth:
            return None
        return self._query_at(X if rows is None else X[rows], m, self._loo_breadth, self._brute_force)

    def _query_at(self, Q: Matrix, k: int, breadth: Any, repair: Any, *, progress: bool = True
                  ) -> tuple[np.ndarray, np.ndarray]:
        nq = Q.shape[0]
        dist = np.empty((nq, k), dtype=np.float64)
        idx = np.empty((nq, k), dtype=np.intp)
        step = max(1, min(self.query_block, working_memory_bytes() // (16 * k + 8 * self._ref.n_features + 64)))
        with task(f"search {self.name}", nq) if progress and nq > step else nullcontext() as bar:
            for a in range(0, nq, step):
                b = min(a + step, nq)
                Qp = self._ref.prepare(Q[a:b])
                # k candidates a row, or more (the union's two structures): ranked together
                found = np.asarray(self.search_library(Q[a:b], Qp, k, breadth), dtype=np.intp).reshape(b - a, -1)
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

    def build_library(self, lib: ModuleType, X: Matrix, rows: np.ndarray, progress: Any) -> None:  # pragma: no cover
        """Build the library's index on indexed ``rows`` of ``X`` (hook, required).

        Parameters
        ----------
        lib : module
            The library (:meth:`library`).
        X : ndarray or CSR matrix of shape (n_samples, n_features)
            Every indexed row, validated (never write to it); take the rows' float32 vectors
            with :meth:`vectors` (normalised for cosine).
        rows : ndarray of int
            The rows to index, in order: they get library ids ``0 .. len(rows) - 1``.
        progress : object
            ``progress.advance(n)`` after each ``build_block`` of rows.
        """
        raise NotImplementedError

    def add_library(self, X: Matrix, rows: np.ndarray, progress: Any) -> None:  # pragma: no cover
        """Add indexed ``rows`` of ``X`` to the built library index (hook, required): they get
        the next library ids, in order (the calibration sample is added last, after it was
        queried as new rows).

        Parameters
        ----------
        X : ndarray or CSR matrix of shape (n_samples, n_features)
            The indexed rows.
        rows : ndarray of int
            The rows to add, in the order of their library ids.
        progress : object
            The build's progress task: ``progress.advance(n)`` after each block.
        """
        raise NotImplementedError

    def search_library(self, Q: Matrix, Qp: Matrix, k: int, breadth: Any) -> np.ndarray:  # pragma: no cover
        """Library ids of about ``k`` candidates of every query (hook, required).

        Parameters
        ----------
        Q : ndarray or CSR matrix of shape (n_queries, n_features)
            The queries as validated.
        Qp : ndarray or CSR matrix of shape (n_queries, n_features)
            The same prepared for the metric (unit rows for cosine): what a library that
            searches cosine as euclidean takes (``self.dense32(Qp)``).
        k : int
            Candidates per query wanted (more are allowed: all are ranked).
        breadth : int or None
            The search breadth to use (None for an adapter without one).

        Returns
        -------
        ids : ndarray of int of shape (n_queries, m)
            Library ids; ``-1`` or a repeated id where the library found fewer: that row is
            answered by brute force.
        """
        raise NotImplementedError

    # ------------------------------------------------------------------ saved as data
    def export_library(self) -> dict[str, Any]:  # pragma: no cover - abstract
        """The library's built index as plain data: numbers, strings, bytes and NumPy arrays
        (hook, for ``capabilities.saved_state``; skops saves them without running code)."""
        raise NotImplementedError

    def import_library(self, data: dict[str, Any]) -> None:  # pragma: no cover - abstract
        """Make the library's index again from :meth:`export_library`'s data, as loaded from
        a file (hook, for ``capabilities.saved_state``).

        Validate ``data`` before the library reads it: every size, offset and dtype against
        ``n_samples_fit_`` and ``n_features_in_`` (set before this is called), since a
        library's reader may trust what it is given and read or write outside its buffers.
        Anything wrong is a ``ValueError`` naming the index, never a crash in the library.

        Parameters
        ----------
        data : dict
            What :meth:`export_library` returned, as loaded.
        """
        raise NotImplementedError

    def saved_state(self) -> dict[str, Any]:
        """Everything a built index needs besides its parameters and the indexed rows.

        Returns
        -------
        state : dict
            The library's :meth:`export_library` data, the breadth and the recall measured.
        """
        return {
            "library": self.export_library(),
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

    def restore_state(self, state: dict[str, Any], X: Matrix) -> None:
        """Make this unbuilt index the saved one, on its indexed rows ``X`` (no build).

        Parameters
        ----------
        state : dict
            What :meth:`saved_state` returned, as loaded: every size checked before the
            library reads it.
        X : ndarray or CSR matrix of shape (n_samples, n_features)
        """
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
        self.check_params()
        self._ref = Reference(X, self.metric)
        self._order = order.astype(np.intp)
        self.n_samples_fit_, self.n_features_in_ = n, d
        self.import_library(state["library"])
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

