"""hnswlib's HNSW graph as a backend."""

from __future__ import annotations

import numbers
from types import ModuleType
from typing import Any, ClassVar

import numpy as np

from .._distance import Matrix
from .._protocol import check_positive_int, resolve_n_jobs
from ._shared import ApproximateIndex, _seed

__all__ = ["HnswlibIndex"]


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
    {recall_attributes}

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

    def check_params(self) -> None:
        check_positive_int(self.M, "M", minimum=2)
        check_positive_int(self.ef_construction, "ef_construction")
        check_positive_int(self.ef, "ef", allow_none=True)
        self.check_recall_params()

    def build_library(self, hnswlib: ModuleType, X: Matrix, rows: np.ndarray, progress: Any) -> None:
        n, d = X.shape
        index = hnswlib.Index(space="l2", dim=d)
        index.init_index(
            max_elements=n, M=self.M, ef_construction=self.ef_construction, random_seed=_seed(self.random_state)
        )
        self._index = index
        self._added = 0
        self.add_library(X, rows, progress)

    def add_library(self, X: Matrix, rows: np.ndarray, progress: Any) -> None:
        threads = resolve_n_jobs(self.n_jobs)
        for a in range(0, len(rows), self.build_block):
            part = rows[a : a + self.build_block]
            ids = np.arange(self._added, self._added + len(part))
            self._index.add_items(self.vectors(part), ids, num_threads=threads)
            self._added += len(part)
            progress.advance(len(part))

    def grow_library(self, n: int) -> None:
        if n > self._index.get_max_elements():
            self._index.resize_index(n)

    def breadth_range(self, k: int) -> tuple[int, int]:
        return k, max(k, self.n_samples_fit_)

    def search_library(self, Q: Matrix, Qp: Matrix, k: int, breadth: Any) -> np.ndarray:
        V = self.dense32(Qp if self.metric == "cosine" else Q)
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

    def export_library(self) -> dict[str, Any]:
        (state,) = self._index.__getstate__()
        return dict(state)

    def import_library(self, data: dict[str, Any]) -> None:
        hnswlib = self.library()
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
    for a in range(0, len(raw), ApproximateIndex.build_block):
        lists = np.ascontiguousarray(raw[a : a + ApproximateIndex.build_block]).view(np.uint32)
        counts = lists[:, 0] & 0xFFFF
        used = np.arange(width)[None, :] < counts[:, None]
        if counts.max(initial=0) > width or (lists[:, 1:][used] >= n).any():
            raise bad("a link list has too many links or a row number out of range")

