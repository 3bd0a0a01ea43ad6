"""LPkNN: label powerset kNN (Spyromitros, Tsoumakas & Vlahavas 2008)."""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from ._base import CountTableModel
from ._counts import distinct_rows, vote_scores, weighted_vote_scores, weighted_votes
from ._docstrings import fill_doc
from ._params import HasMethods, Options
from .brknn import WeightedVotes

__all__ = ["LPkNN"]


@fill_doc
class LPkNN(WeightedVotes, CountTableModel):
    """Label powerset kNN: predict the label set that occurs most often among the neighbours.

    Every distinct label set of the training data is one class. A query gets the
    label set carried by most of its ``k`` nearest neighbours; among tied sets, the
    one whose first occurrence in the neighbour order (ascending distance, ties by
    training index) is nearest.  With ``weights`` other than ``"uniform"`` a label set's vote
    is the summed weight of the neighbours carrying it (same tie rule).

    Parameters
    ----------
    {n_neighbors_parameter}
    weights : {"uniform", "distance"} or callable, default="uniform"
        The neighbours' vote weights, as :class:`~mlneighbors.BRkNN`'s: ``"distance"`` is
        ``1 / d`` (neighbours at distance 0, if any, get all the weight), a callable maps the
        (n_queries, k) distances to (n_queries, k) finite weights >= 0.
    {metric_parameter}
    {backend_parameters_named}

    Attributes
    ----------
    label_sets_ : ndarray or CSR matrix of shape (n_sets, n_labels)
        The distinct label sets of the training data (CSR when Y is sparse).
    {neighbors_attributes}

    Notes
    -----
    Scores for ranking are the neighbours' vote fractions, as BRkNN's, reported
    smoothed as ``(C_l + 1) / (k + 1.5)`` so that they lie strictly inside (0, 1)
    (:func:`mlneighbors._counts.vote_scores`).  The predicted set is the winning label set,
    not a threshold of these scores.  Like BRkNN's, these scores take only ``k + 1`` values,
    so most labels of a row tie and ranking metrics measure the tie rule (the lower label
    index first) about as much as the method; for rankings prefer ML-kNN, DML-kNN or
    LAML-kNN, whose scores are posteriors.  With weights the scores are the smoothed
    weighted shares ``(k V_l / W + 1) / (k + 1.5)`` (``V_l``: the summed weights of the
    neighbours carrying ``l``, ``W``: of all ``k``).

    References
    ----------
    E. Spyromitros, G. Tsoumakas, I. Vlahavas. An empirical study of lazy multilabel
    classification algorithms. SETN 2008.

    Examples
    --------
    >>> import numpy as np
    >>> from mlneighbors import LPkNN
    >>> X = np.array([[0.0], [0.1], [0.2], [1.0], [1.1], [1.2]])
    >>> Y = np.array([[1, 1], [1, 1], [1, 0], [0, 1], [0, 1], [1, 0]])
    >>> LPkNN(n_neighbors=3).fit(X, Y).predict([[0.05], [1.05]])
    array([[1, 1],
           [0, 1]])
    """

    _constraints: dict = {
        **CountTableModel._constraints,
        "weights": [Options("uniform", "distance"), HasMethods("__call__")],
    }
    _needs_loo = False

    def __init__(
        self,
        n_neighbors: int = 10,
        *,
        weights: Any = "uniform",
        metric: str = "euclidean",
        backend: Any = "exact",
        backend_params: dict | None = None,
        n_jobs: int | None = None,
    ) -> None:
        self.n_neighbors = n_neighbors
        self.weights = weights
        self.metric = metric
        self.backend = backend
        self.backend_params = backend_params
        self.n_jobs = n_jobs

    def _fit_labels(self, X: Any, Y: Any) -> None:
        self.label_sets_, self._set_of_row = distinct_rows(Y)
        k, L = self.n_neighbors_, Y.shape[1]
        counts = np.arange(k + 1)
        # scores for ranking: the vote fractions; decisions: the winning set (the row rule)
        self._set_tables(np.broadcast_to(vote_scores(counts, k), (1, L, k + 1)),
                         np.broadcast_to(np.zeros(k + 1, dtype=bool), (1, L, k + 1)))

    def _set_votes(self, neighbors: np.ndarray, w: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Each neighbour's set id (m, k) and the (weighted) votes of its set (m, k)."""
        sets = self._set_of_row[neighbors]
        same = sets[:, :, None] == sets[:, None, :]
        if w is None:
            return sets, same.sum(axis=2)
        # the same terms in the same order for two neighbours of one set: equal sums
        return sets, (same * w[:, None, :]).sum(axis=2)

    def _winning_sets(self, neighbors: np.ndarray, w: np.ndarray | None = None) -> Any:
        sets, votes = self._set_votes(neighbors, w)
        # votes[q, j]: the neighbours of q carrying the set of its j-th neighbour (or their
        # weight); the first position of the largest is the first occurrence of the winning
        # set, and of all tied sets the one that occurs first
        return self.label_sets_[sets[np.arange(len(sets)), np.argmax(votes, axis=1)]]

    def _weighted_rule(self, V: np.ndarray, W: np.ndarray, neighbors: np.ndarray, w: np.ndarray
                       ) -> tuple[np.ndarray, np.ndarray]:
        chosen = self._winning_sets(neighbors, w)
        decisions = chosen.toarray().astype(bool) if sp.issparse(chosen) else chosen.astype(bool)
        return weighted_vote_scores(V, W, self.n_neighbors_), decisions

    def _explain_weighted(self, X: Any) -> tuple:
        """``explain``'s terms of weighted votes (``mlneighbors._explain``)."""
        idx, w = self._vote_weights(X)
        V, W = weighted_votes(idx, w, self._Y)
        V = V.toarray() if sp.issparse(V) else V
        scores, decisions = self._weighted_rule(V, W, idx, w)
        _, set_votes = self._set_votes(idx, w)
        first = np.argmax(set_votes, axis=1)
        rows = np.arange(len(idx))
        row_terms = {"winning_set_votes": set_votes[rows, first], "winning_rank": first + 1, "total_weight": W}
        rule = ("the label set of most weight among the neighbours (set_votes; ties: the nearest), i.e. that of "
                "the neighbour at winning_rank; score = (k votes / total_weight + 1) / (k + 1.5) ranks labels only")
        return {"votes": V, "score": scores}, scores, decisions, rule, row_terms, {"set_votes": set_votes,
                                                                                   "weight": w}

    def _row_rule(self, C: Any, decisions: Any, neighbors: np.ndarray, sparse_output: bool) -> Any:
        chosen = self._winning_sets(neighbors)
        if sparse_output:
            return sp.csr_matrix(chosen, dtype=np.int8)
        return chosen.toarray().astype(bool) if sp.issparse(chosen) else chosen.astype(bool)
