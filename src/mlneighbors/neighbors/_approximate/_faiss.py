"""faiss's backends: IVF-Flat, HNSW and their union (no query left without its neighbours)."""

from __future__ import annotations

import math
from types import ModuleType
from typing import Any, ClassVar

import numpy as np

from .._distance import Matrix
from .._protocol import check_positive_int, import_optional
from ._shared import ApproximateIndex, _seed

__all__ = ["FaissHNSWIndex", "FaissIVFIndex", "FaissUnionIndex"]

# faiss IVF: cells per sqrt(n) rows when nlist is None
_IVF_CELLS_PER_SQRT_N = 1.0
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
        return self.dense32(Xp if self.metric == "cosine" else X)

    def add_library(self, X: Matrix, rows: np.ndarray, progress: Any) -> None:
        for a in range(0, len(rows), self.build_block):
            self._index.add(self.vectors(rows[a : a + self.build_block]))
            progress.advance(len(rows[a : a + self.build_block]))

    def __getstate__(self) -> dict[str, Any]:
        state = super().__getstate__()
        if "_index" in state:
            faiss = self.library()
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

    def export_library(self) -> dict[str, Any]:
        faiss = self.library()
        return {"faiss_index": _faiss_bytes(faiss, self._index, self._io_flags(faiss))}

    def import_library(self, data: dict[str, Any]) -> None:
        faiss = self.library()
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
    index.train(owner.vectors(train))
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

    def saved_state(self) -> dict[str, Any]:
        return {**super().saved_state(), "nlist": int(self.nlist_)}

    def restore_state(self, state: dict[str, Any], X: Matrix) -> None:
        super().restore_state(state, X)
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
    {recall_attributes}

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

    def check_params(self) -> None:
        check_positive_int(self.nlist, "nlist", allow_none=True)
        check_positive_int(self.nprobe, "nprobe", allow_none=True)
        self.check_recall_params()

    def build_library(self, faiss: ModuleType, X: Matrix, rows: np.ndarray, progress: Any) -> None:
        self._index, self._quantizer, self.nlist_ = _trained_ivf(self, faiss, X, rows, self.nlist, flat=True)
        self.add_library(X, rows, progress)

    def breadth_range(self, k: int) -> tuple[int, int]:
        return 1, self.nlist_

    def search_library(self, Q: Matrix, Qp: Matrix, k: int, breadth: Any) -> np.ndarray:
        faiss = self.library()
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
    {recall_attributes}

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

    def check_params(self) -> None:
        check_positive_int(self.M, "M", minimum=2)
        check_positive_int(self.ef_construction, "ef_construction")
        check_positive_int(self.ef_search, "ef_search", allow_none=True)
        self.check_recall_params()

    def build_library(self, faiss: ModuleType, X: Matrix, rows: np.ndarray, progress: Any) -> None:
        self._index = self._new_graph(faiss, X.shape[1])
        self.add_library(X, rows, progress)

    def _new_graph(self, faiss: ModuleType, d: int) -> Any:
        index = faiss.IndexHNSWFlat(d, self.M, faiss.METRIC_L2)
        index.hnsw.efConstruction = self.ef_construction
        return index

    def _io_flags(self, faiss: ModuleType) -> int:
        # the graph only: the vectors are the model's training rows, saved once (by the model)
        return faiss.IO_FLAG_SKIP_STORAGE

    def breadth_range(self, k: int) -> tuple[int, int]:
        return k, max(k, self.n_samples_fit_)

    def search_library(self, Q: Matrix, Qp: Matrix, k: int, breadth: Any) -> np.ndarray:
        return self._search_graph(self._lib_vectors(Q, Qp), k, breadth)

    def _search_graph(self, vectors: np.ndarray, k: int, breadth: Any) -> np.ndarray:
        params = self.library().SearchParametersHNSW()
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
        model's rows in the library's order, as :meth:`add_library` gave them, written in place."""
        if index.storage is not None:  # layout 1
            return index
        n, d = self.n_samples_fit_, self.n_features_in_
        storage = faiss.IndexFlatL2(d)
        storage.codes.resize(n * d * 4)
        if n:
            vectors = faiss.rev_swig_ptr(storage.codes.data(), n * d * 4).view(np.float32).reshape(n, d)
            for a in range(0, n, self.build_block):
                vectors[a : a + self.build_block] = self.vectors(self._order[a : a + self.build_block])
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
    {recall_attributes}

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

    def check_params(self) -> None:
        super().check_params()
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

    def build_library(self, faiss: ModuleType, X: Matrix, rows: np.ndarray, progress: Any) -> None:
        self._index = self._new_graph(faiss, X.shape[1])
        if not self._index.is_trained:
            # the codes' range per feature, from a seeded sample (rows outside it are clipped:
            # the codes only guide the search, the candidates are ranked by exact distances)
            size = min(len(rows), _SQ_TRAIN_ROWS)
            sample = np.sort(np.random.default_rng(_seed(self.random_state)).choice(rows, size, replace=False))
            self._index.train(self.vectors(sample))
        self._ivf, self._quantizer, self.nlist_ = _trained_ivf(
            self, faiss, X, rows, self.nlist, flat=False, cells_per_sqrt_n=_UNION_CELLS_PER_SQRT_N,
            points_per_cell=_UNION_POINTS_PER_CELL)
        self.add_library(X, rows, progress)

    def add_library(self, X: Matrix, rows: np.ndarray, progress: Any) -> None:
        for a in range(0, len(rows), self.build_block):
            vectors = self.vectors(rows[a : a + self.build_block])
            self._index.add(vectors)  # both number the rows in the order they are added
            self._ivf.add(vectors)
            progress.advance(len(vectors))

    def breadth_range(self, k: int, floor: int = _UNION_EF_MIN) -> tuple[int, int]:
        return max(k, floor), max(k, floor, self.n_samples_fit_)

    def loo_breadth_range(self, k: int) -> tuple[int, int]:
        return self.breadth_range(k, _UNION_LOO_EF_MIN)

    def _check_faiss(self, faiss: ModuleType, index: Any) -> None:
        if isinstance(index, faiss.IndexHNSWSQ):  # saved with its codes
            self._check_graph(faiss, index.hnsw)
            if index.storage is None:  # faiss checks that codes it reads are one a row
                raise ValueError(f"the saved {self.name} index is damaged: it was saved without its codes")
        else:  # a float32 graph (saved without its vectors)
            super()._check_faiss(faiss, index)

    def search_library(self, Q: Matrix, Qp: Matrix, k: int, breadth: Any) -> np.ndarray:
        vectors = self._lib_vectors(Q, Qp)
        from_graph = self._search_graph(vectors, k, breadth)
        cells = self.library().SearchParametersIVF()
        cells.nprobe = min(int(self.nprobe), self.nlist_)
        _, from_cells = self._ivf.search(vectors, 2 * k, params=cells)
        return np.hstack([from_graph, from_cells])  # -1 padding and repeats: _rank counts them out

    def __getstate__(self) -> dict[str, Any]:
        state = dict(super().__getstate__())
        if "_ivf" in state:
            state["_ivf"] = self.library().serialize_index(state["_ivf"])
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        if isinstance(state.get("_ivf"), np.ndarray):
            faiss = import_optional("faiss", backend=self.name, extra="faiss")
            state = dict(state)
            state["_ivf"] = faiss.deserialize_index(state["_ivf"])
            state["_quantizer"] = faiss.extract_index_ivf(state["_ivf"]).quantizer
        super().__setstate__(state)

    def export_library(self) -> dict[str, Any]:
        return {**super().export_library(), "faiss_ivf": _faiss_bytes(self.library(), self._ivf)}

    def import_library(self, data: dict[str, Any]) -> None:
        super().import_library(data)
        faiss = self.library()
        ivf = _read_faiss(faiss, data.get("faiss_ivf"), self.name, "faiss IVF")
        if ivf.d != self.n_features_in_:
            raise ValueError(f"the saved {self.name} index is damaged: its IVF holds vectors of {ivf.d} features")
        self._quantizer = _checked_ivf(faiss, ivf, self.n_samples_fit_, self.name)
        self._ivf = ivf

