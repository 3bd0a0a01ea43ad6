"""BRkNN and its extensions -a and -b (Spyromitros, Tsoumakas & Vlahavas 2008)."""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from ._base import CountTableModel
from ._counts import table_top_k, top_m, vote_scores
from ._docstrings import fill_doc
from ._params import Options

__all__ = ["BRkNN"]


@fill_doc
class BRkNN(CountTableModel):
    """Binary relevance kNN: each label predicted from the share of neighbours that carry it.

    The confidence of label ``l`` is ``c_l = C_l / k``, ``C_l`` the number of the ``k``
    nearest neighbours carrying ``l``.

    - ``extension=None`` (BRkNN): predict ``l`` when ``c_l >= 0.5``.
    - ``extension="a"`` (BRkNN-a): as BRkNN; when that predicts no label, predict the
      single label of highest confidence (ties: the lowest label index). When every
      confidence is 0 the set stays empty.
    - ``extension="b"`` (BRkNN-b): predict the ``m`` labels of highest confidence (ties:
      the lowest label index), ``m`` the mean size of the neighbours' label sets
      rounded half up (1.5 -> 2). ``m = 0`` predicts the empty set.

    Parameters
    ----------
    {n_neighbors_parameter}
    extension : {None, "a", "b"}, default=None
    {metric_parameter}
    {backend_parameters_named}

    Attributes
    ----------
    {neighbors_attributes}

    Notes
    -----
    ``predict`` applies the rules above to the raw votes. ``predict_proba`` reports the
    smoothed, order-preserving confidence ``(C_l + 1) / (k + 1.5)``, strictly inside
    (0, 1) as scikit-learn's multi-label checks require (the raw fraction reaches 0
    and 1); it is above 0.5 exactly where plain BRkNN predicts the label.  The
    extensions -a and -b do not threshold it: their predictions can include a label
    scored below 0.5 (-a's fallback, -b's top ``m``) or leave out one scored above.
    Fitting stores the training set; there is nothing to learn.

    *What the scores mean for ranking metrics.*  A vote fraction takes only ``k + 1``
    values (11 at ``k = 10``), so most labels of a row tie, and ranking metrics (ranking
    loss, one-error, coverage, average precision) break those ties by the lower label
    index: they then measure the tie rule about as much as the method.  The votes also
    ignore how frequent a label is, and on many data sets BRkNN ranks labels worse than
    their training frequencies do.  That is the method; for rankings prefer a model whose
    scores are posteriors (ML-kNN, DML-kNN, LAML-kNN).

    References
    ----------
    E. Spyromitros, G. Tsoumakas, I. Vlahavas. An empirical study of lazy multilabel
    classification algorithms. SETN 2008, LNAI 5138, pp. 401-406.

    Examples
    --------
    >>> import numpy as np
    >>> from mlneighbors import BRkNN
    >>> X = np.array([[0.0], [0.1], [0.2], [1.0], [1.1], [1.2]])
    >>> Y = np.array([[1, 0], [1, 0], [0, 1], [0, 1], [0, 1], [0, 0]])
    >>> BRkNN(n_neighbors=3, extension="b").fit(X, Y).predict([[0.1], [1.1]])
    array([[1, 0],
           [0, 1]])
    """

    _constraints: dict = {
        **CountTableModel._constraints,
        "extension": [Options("a", "b"), None],
    }
    _needs_loo = False

    def __init__(
        self,
        n_neighbors: int = 10,
        *,
        extension: str | None = None,
        metric: str = "euclidean",
        backend: Any = "exact",
        backend_params: dict | None = None,
        n_jobs: int | None = None,
    ) -> None:
        self.n_neighbors = n_neighbors
        self.extension = extension
        self.metric = metric
        self.backend = backend
        self.backend_params = backend_params
        self.n_jobs = n_jobs

    def _fit_labels(self, X: Any, Y: Any) -> None:
        self._set_sizes = np.asarray(Y.sum(axis=1, dtype=np.int64)).ravel()
        k, L = self.n_neighbors_, Y.shape[1]
        counts = np.arange(k + 1)
        # the same vote score and plain rule for every label: one row, broadcast (no copy)
        self._set_tables(np.broadcast_to(vote_scores(counts, k), (1, L, k + 1)),
                         np.broadcast_to(2 * counts >= k, (1, L, k + 1)))

    def _counts_only(self) -> bool:
        return True  # its rules read the counts and the neighbours' set sizes, summed: no order

    def _row_rule(self, C: Any, decisions: Any, neighbors: np.ndarray, sparse_output: bool) -> Any:
        if self.extension is None:
            return decisions
        k = self.n_neighbors_
        if self.extension == "b":
            # m = round-half-up(sum |Y_j| / k), in integers: floor((2 sum + k) / 2k)
            m = (2 * self._set_sizes[neighbors].sum(axis=1) + k) // (2 * k)
            if not sp.issparse(C):
                return top_m(C, m)
            return self._top_m_sparse(C, m, sparse_output)
        if not sp.issparse(C):  # BRkNN-a on dense counts
            empty = ~decisions.any(axis=1) & (C.max(axis=1) > 0)
            rows = np.flatnonzero(empty)
            decisions[rows, np.argmax(C[rows], axis=1)] = True  # argmax: lowest index on ties
            return decisions
        # BRkNN-a on sparse counts: the label of most votes (lowest index on ties) for rows
        # that predict nothing but have votes
        nnz = np.diff(C.indptr)
        decided = (np.diff(decisions.indptr) if sp.issparse(decisions) else decisions.any(axis=1)) > 0
        rows = np.flatnonzero(~decided & (nnz > 0))
        if len(rows) == 0:
            return decisions
        entry_rows = np.repeat(np.arange(C.shape[0]), nnz)
        order = np.lexsort((C.indices, -C.data, entry_rows))
        first = order[np.searchsorted(entry_rows[order], rows)]
        best = C.indices[first]
        if not sp.issparse(decisions):
            decisions[rows, best] = True
            return decisions
        extra = sp.csr_matrix((np.ones(len(rows), dtype=decisions.dtype), (rows, best)), shape=decisions.shape)
        return (decisions + extra).tocsr()

    def _top_m_sparse(self, C: sp.csr_matrix, m: np.ndarray, sparse_output: bool) -> Any:
        """BRkNN-b's top-m labels from sparse counts (ties: the lower label index)."""
        n_rows, L = C.shape
        width = int(min(max(int(m.max(initial=0)), 1), L))
        _, labels = table_top_k(self._score_table, C, None, width, self._zero_order_of())
        keep = np.arange(width) < m[:, None]
        rows = np.nonzero(keep)[0]
        cols = labels[keep]
        if sparse_output:
            out = sp.csr_matrix((np.ones(len(rows), dtype=np.int8), (rows, cols)), shape=(n_rows, L))
            out.sort_indices()
            return out
        dense = np.zeros((n_rows, L), dtype=bool)
        dense[rows, cols] = True
        return dense

    def _zero_order_of(self) -> np.ndarray:
        if self._zero_order is None:
            self._zero_order = np.argsort(-self._score_table[:, :, 0], axis=1, kind="stable")
        return self._zero_order
