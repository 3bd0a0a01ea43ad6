"""LPkNN: label powerset kNN (Spyromitros, Tsoumakas & Vlahavas 2008)."""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from ._base import CountTableModel
from ._counts import distinct_rows, vote_scores
from ._docstrings import fill_doc

__all__ = ["LPkNN"]


@fill_doc
class LPkNN(CountTableModel):
    """Label powerset kNN: predict the label set that occurs most often among the neighbours.

    Every distinct label set of the training data is one class. A query gets the
    label set carried by most of its ``k`` nearest neighbours; among tied sets, the
    one whose first occurrence in the neighbour order (ascending distance, ties by
    training index) is nearest.

    Parameters
    ----------
    {n_neighbors_parameter}
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
    LAML-kNN, whose scores are posteriors.

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

    _needs_loo = False

    def __init__(
        self,
        n_neighbors: int = 10,
        *,
        metric: str = "euclidean",
        backend: Any = "exact",
        backend_params: dict | None = None,
        n_jobs: int | None = None,
    ) -> None:
        self.n_neighbors = n_neighbors
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

    def _row_rule(self, C: Any, decisions: Any, neighbors: np.ndarray, sparse_output: bool) -> Any:
        sets = self._set_of_row[neighbors]  # (m, k) set id of each neighbour
        # votes[q, j]: how many neighbours of q carry the set of its j-th neighbour; the
        # first position of the largest count is the first occurrence of the winning
        # set, and of all tied sets the one that occurs first
        votes = (sets[:, :, None] == sets[:, None, :]).sum(axis=2)
        winner = sets[np.arange(len(sets)), np.argmax(votes, axis=1)]
        chosen = self.label_sets_[winner]
        if sparse_output:
            return sp.csr_matrix(chosen, dtype=np.int8)
        return chosen.toarray().astype(bool) if sp.issparse(chosen) else chosen.astype(bool)
