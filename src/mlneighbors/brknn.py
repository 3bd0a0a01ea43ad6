"""BRkNN and its extensions -a and -b (Spyromitros, Tsoumakas & Vlahavas 2008)."""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from ._base import CountTableModel, KNeighborsMultilabelBase
from ._counts import (
    distance_weights,
    row_blocks,
    table_top_k,
    top_m,
    vote_scores,
    weighted_vote_scores,
    weighted_votes,
)
from ._dask_estimators import lazy_on_dask
from ._docstrings import fill_doc
from ._params import HasMethods, Options

__all__ = ["BRkNN"]

#: the largest float below 1/2: the score of a label not predicted whose smoothed weighted share
#: would reach 1/2 (only weights make such a share possible)
_BELOW_HALF = np.nextafter(0.5, 0.0)


def _uniform(weights: Any) -> bool:
    return isinstance(weights, str) and weights == "uniform"


class WeightedVotes:
    """``weights=`` of the vote models (BRkNN, LPkNN): the neighbours' weighted votes.

    With ``weights="uniform"`` the model is its count-table self, unchanged.  Otherwise each
    block of queries is searched with distances (``_query``), weighted
    (:func:`~mlneighbors._counts.distance_weights`), and its votes are a weighted sparse
    product (:func:`~mlneighbors._counts.weighted_votes`); the model's rule over a dense
    block is ``_weighted_rule(V, W, neighbors, w)``.
    """

    def _vote_weights(self, X: Any) -> tuple[np.ndarray, np.ndarray]:
        """The neighbours (n, k) of validated queries ``X`` and their weights (n, k)."""
        dist, idx = self._query(X, self.n_neighbors_)
        return idx, distance_weights(dist, self.weights)

    def _weighted_blocks(self, X: Any):
        """(rows, neighbours, weights, V dense, W) of validated queries, a block at a time."""
        idx, w = self._vote_weights(X)
        for rows in row_blocks(X.shape[0], self.n_labels_ * self.n_neighbors_):
            V, W = weighted_votes(idx[rows], w[rows], self._Y)
            yield rows, idx[rows], w[rows], (V.toarray() if sp.issparse(V) else V), W

    def _scores_and_decisions(self, X: Any) -> tuple[np.ndarray, np.ndarray]:
        if _uniform(self.weights):
            return super()._scores_and_decisions(X)
        X = self._validate_queries(X)
        n = X.shape[0]
        scores = np.empty((n, self.n_labels_), dtype=np.float64)
        decisions = np.empty((n, self.n_labels_), dtype=bool)
        for rows, idx, w, V, W in self._weighted_blocks(X):
            scores[rows], decisions[rows] = self._weighted_rule(V, W, idx, w)
        return scores, decisions

    @lazy_on_dask
    def predict(self, X: Any, *, sparse_output: bool = False) -> Any:
        """Predicted label indicator (n, n_labels); a CSR matrix with ``sparse_output=True``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_queries, n_features)
        sparse_output : bool, default=False
            Return a CSR 0/1 matrix.  Uniform votes compute it from the sparse counts without
            forming the (n_queries, n_labels) array; weighted votes decide a block of rows
            at a time (the block sized from the working memory).

        Returns
        -------
        Y_pred : ndarray or CSR matrix of shape (n_queries, n_labels)
        """
        if not sparse_output or _uniform(self.weights):
            return super().predict(X, sparse_output=sparse_output)
        if not self._multilabel:
            raise ValueError("sparse_output=True needs a multi-label target (a 2-D indicator)")
        Xv = self._validate_queries(X)
        parts = [sp.csr_matrix(self._weighted_rule(V, W, idx, w)[1], dtype=np.int8)
                 for _, idx, w, V, W in self._weighted_blocks(Xv)]
        out = sp.vstack(parts, format="csr") if parts else sp.csr_matrix((0, self.n_labels_), dtype=np.int8)
        return out.astype(self._y_dtype)

    def predict_top_k(self, X: Any, k: int) -> tuple[np.ndarray, np.ndarray]:
        if _uniform(self.weights):
            return super().predict_top_k(X, k)
        # weighted scores are no count-table look-up: rank each block's score rows
        return KNeighborsMultilabelBase.predict_top_k(self, X, k)

    predict_top_k.__doc__ = KNeighborsMultilabelBase.predict_top_k.__doc__


@fill_doc
class BRkNN(WeightedVotes, CountTableModel):
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

    With ``weights`` other than ``"uniform"`` every neighbour votes with its weight ``w_j``:
    ``c_l = V_l / W``, ``V_l`` the summed weights of the neighbours carrying ``l`` and ``W``
    the summed weights of all ``k``; the rules above read these weighted shares, and -b's
    ``m`` is the weighted mean size of the neighbours' label sets, ``sum_j w_j |Y_j| / W``,
    rounded half up.

    Parameters
    ----------
    {n_neighbors_parameter}
    extension : {None, "a", "b"}, default=None
    weights : {"uniform", "distance"} or callable, default="uniform"
        The neighbours' vote weights, scikit-learn's ``KNeighborsClassifier`` convention:
        ``"uniform"``, one vote each (the paper's rule); ``"distance"``, ``1 / d``, and when
        some neighbours are at distance 0 they get all the weight (1 each, the others 0), as
        scikit-learn does; a callable is given the (n_queries, k) distances and returns
        (n_queries, k) finite weights >= 0 (MULAN's similarity weight on distances in
        [0, 1]: ``lambda d: 1 - d``).  A row whose weights are all 0 has no vote.
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

    *Weighted votes.*  ``predict_proba`` is the smoothed weighted share
    ``(k V_l / W + 1) / (k + 1.5)`` (weights of 1 give the uniform score bit for bit); a label
    not predicted whose share lies within ``1 / (4 k)`` below 1/2 (only weights allow that)
    is reported just below 0.5, so that the score is still above 0.5 exactly where plain
    BRkNN predicts.  Weighted votes need the neighbours' distances: the search returns them
    and ``predict_top_k`` sorts each block's score rows.

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
        "weights": [Options("uniform", "distance"), HasMethods("__call__")],
    }
    _needs_loo = False

    def __init__(
        self,
        n_neighbors: int = 10,
        *,
        extension: str | None = None,
        weights: Any = "uniform",
        metric: str = "euclidean",
        backend: Any = "exact",
        backend_params: dict | None = None,
        n_jobs: int | None = None,
    ) -> None:
        self.n_neighbors = n_neighbors
        self.extension = extension
        self.weights = weights
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
        # its uniform rules read the counts and the neighbours' set sizes, summed: no order;
        # weighted votes need the distances
        return _uniform(self.weights)

    def _weighted_rule(self, V: np.ndarray, W: np.ndarray, neighbors: np.ndarray, w: np.ndarray
                       ) -> tuple[np.ndarray, np.ndarray]:
        """Scores and decisions of a block from its weighted votes ``V`` (m, L) and totals ``W``."""
        share = self._shares(V, W)
        decisions = share >= 0.5
        scores = weighted_vote_scores(V, W, self.n_neighbors_)
        scores[~decisions] = np.minimum(scores[~decisions], _BELOW_HALF)
        if self.extension == "a":
            rows = np.flatnonzero(~decisions.any(axis=1) & (V.max(axis=1, initial=0.0) > 0))
            decisions[rows, np.argmax(V[rows], axis=1)] = True  # argmax: lowest index on ties
        elif self.extension == "b":
            decisions = top_m(V, self._weighted_m(W, neighbors, w))
        return scores, decisions

    @staticmethod
    def _shares(V: np.ndarray, W: np.ndarray) -> np.ndarray:
        return np.divide(V, W[:, None], out=np.zeros(V.shape), where=W[:, None] > 0)

    def _weighted_m(self, W: np.ndarray, neighbors: np.ndarray, w: np.ndarray) -> np.ndarray:
        """-b's ``m``: the weighted mean set size rounded half up, ``floor((2 A + W) / 2 W)``
        (``A = sum_j w_j |Y_j|``; exact for integer weights, as the uniform rule's integers)."""
        A = (w * self._set_sizes[neighbors]).sum(axis=1)
        half_up = np.floor(np.divide(2 * A + W, 2 * W, out=np.zeros(len(W)), where=W > 0))
        return half_up.astype(np.int64)

    def _explain_weighted(self, X: Any) -> tuple:
        """``explain``'s terms of weighted votes (``mlneighbors._explain``): the same names as
        the uniform ones, ``votes`` the summed weights, ``total_weight`` each row's ``W``."""
        idx, w = self._vote_weights(X)
        V, W = weighted_votes(idx, w, self._Y)
        V = V.toarray() if sp.issparse(V) else V
        scores, decisions = self._weighted_rule(V, W, idx, w)
        share = self._shares(V, W)
        threshold = np.full(V.shape, 0.5)
        terms = {"votes": V, "share": share, "threshold": threshold}
        row_terms: dict[str, np.ndarray] = {"total_weight": W}
        rule = "predicted where share = weighted votes / total weight >= threshold"
        if self.extension == "a":
            terms["fallback"] = decisions & ~(share >= threshold)
            rule += ", or where fallback (the most voted label of a row that predicts none)"
        elif self.extension == "b":
            order = np.argsort(-V, axis=1, kind="stable")
            rank = np.empty_like(order)
            np.put_along_axis(rank, order, np.arange(V.shape[1])[None, :], axis=1)
            terms["rank"] = rank + 1
            row_terms["m"] = self._weighted_m(W, idx, w)
            rule = ("predicted where rank <= m: the m labels of most weighted votes (ties: lower label), m the "
                    "neighbours' weighted mean label-set size rounded half up; threshold not used")
        terms["score"] = scores
        return terms, scores, decisions, rule, row_terms, {"weight": w}

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
