"""pynndescent's nearest-neighbour-descent graph as a backend."""

from __future__ import annotations

from contextlib import nullcontext
from types import ModuleType
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp

from ..._docstrings import fill_doc
from ..._progress import task
from .._capabilities import Capabilities
from .._distance import Matrix, Reference
from .._protocol import check_positive_int
from .._recall import RECALL_SAMPLE, low_recall_share, mean_recall, sample_rows
from ._shared import ApproximateIndex, _seed

__all__ = ["PyNNDescentIndex"]


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
    # its index holds numba functions: not saved with a model, rebuilt on load
    capabilities: ClassVar[Capabilities] = Capabilities(
        metrics=("euclidean", "cosine", "manhattan"), sparse=True, float32_rows=("euclidean", "cosine", "manhattan"),
        loo_queries=True,
    )

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

    def check_params(self) -> None:
        check_positive_int(self.n_neighbors, "n_neighbors", minimum=2)
        if isinstance(self.epsilon, bool) or not isinstance(self.epsilon, (int, float)) or self.epsilon < 0:
            raise ValueError(f"epsilon must be a number >= 0, got {self.epsilon!r}")
        self.check_recall_params()

    @staticmethod
    def _data(A: Matrix, sparse: bool | None = None) -> Matrix:
        """float32 rows for pynndescent, CSR or dense as ``sparse`` says (None: as ``A`` is);
        its index takes queries of the format it was built on."""
        sparse = sp.issparse(A) if sparse is None else sparse
        if sparse:
            return sp.csr_matrix(A).astype(np.float32)
        return ApproximateIndex.dense32(A)

    @fill_doc
    def build_rows(self, X: Matrix) -> None:
        """Build on every row (pynndescent adds no rows later), then measure the recall of
        leave-one-out queries (through the graph, as ``fit``) on a seeded sample of rows.

        Parameters
        ----------
        {build_rows_parameter}
        """
        lib = self.library()
        self._ref = Reference(X, self.metric)
        n = X.shape[0]
        self._order = np.arange(n)
        with task(f"build {self.name} index", n) as progress:
            self.build_library(lib, X, self._order, progress)
        self.n_samples_fit_, self.n_features_in_ = X.shape
        k = min(self.recall_k, n - 1)
        rows = sample_rows(n, RECALL_SAMPLE, _seed(self.random_state))
        hits = self._loo_hits(X, rows, k, None, None) if k >= 1 else np.zeros(0, dtype=np.intp)
        self.recall_, self.low_recall_share_ = mean_recall(hits, k), low_recall_share(hits / max(k, 1))
        # no rows held out: pynndescent cannot add them later
        self.query_recall_ = self.query_low_recall_share_ = float("nan")
        self.recall_rows_ = len(rows)

    def build_library(self, pynndescent: ModuleType, X: Matrix, rows: np.ndarray, progress: Any) -> None:
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

    def search_library(self, Q: Matrix, Qp: Matrix, k: int, breadth: Any) -> np.ndarray:
        idx, _ = self._index.query(self._data(Q, sp.issparse(self._ref.X)), k=k, epsilon=self.epsilon)
        return idx

    @fill_doc
    def loo_query_rows(self, X: Matrix, rows: np.ndarray | None, m: int) -> tuple[np.ndarray, np.ndarray] | None:
        """The ``m`` nearest of the graph's neighbours of the indexed ``rows`` of ``X`` (None:
        all; the row itself among them), re-ranked in float64; rows with fewer than ``m``
        valid ones are searched.  None when the graph is not used (``loo_graph=False``, or
        no more than ``m`` neighbours a row in the graph).

        Parameters
        ----------
        {loo_rows_parameters}

        Returns
        -------
        answer : (ndarray, ndarray) or None
            Distances and indices of shape (n_rows, m); None where the graph is not used.
        """
        graph = self.__dict__.get("_graph")
        if not self.loo_graph or graph is None or graph.shape[1] <= m:
            return None
        rows = np.arange(X.shape[0]) if rows is None else rows
        dist = np.empty((len(rows), m))
        idx = np.empty((len(rows), m), dtype=np.intp)
        step = max(1, self.query_block // 4)
        with task(f"neighbours {self.name} graph", len(rows)) if len(rows) > step else nullcontext() as progress:
            for a in range(0, len(rows), step):
                Qb = X[rows[a : a + step]]

                def search(Qp: Matrix, short: np.ndarray, k: int, Qb: Matrix = Qb) -> tuple[np.ndarray, np.ndarray]:
                    return self.query_rows(Qb[short], k)

                cand = graph[rows[a : a + step]].astype(np.intp)
                dist[a : a + step], idx[a : a + step] = self._rank(self._ref.prepare(Qb), cand, m, search)
                if progress is not None:
                    progress.advance(Qb.shape[0])
        return dist, idx

