"""ML-kNN: multi-label k-nearest neighbours with Bayesian posteriors (Zhang & Zhou 2007)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ._base import CountTableModel
from ._counts import count_tables, decide, label_likelihoods
from ._docstrings import fill_doc
from ._params import Real

__all__ = ["MLkNN"]


@fill_doc
class MLkNN(CountTableModel):
    r"""ML-kNN: the k nearest neighbours' label counts, turned into posteriors.

    For every label :math:`l` the prior :math:`P(H^1_l)` and the likelihoods
    :math:`P(E_j \mid H^1_l)` and :math:`P(E_j \mid H^0_l)` of seeing :math:`j` of the
    :math:`k` neighbours with the label (among the rows with the label, and among those
    without it) are counted on the training set, the neighbours of each training instance
    found with the instance itself left out (its duplicates stay).  A query whose
    neighbours carry the label :math:`C` times scores

    .. math::

       \dfrac{a}{a + b}, \qquad a = P(H^1_l)\,P(E_C \mid H^1_l), \quad
       b = P(H^0_l)\,P(E_C \mid H^0_l)

    for label :math:`l`, which is predicted when :math:`a \geq b` (an exact tie predicts
    it, as the original code does).

    Parameters
    ----------
    {n_neighbors_loo_parameter}
    smoothing : float, default=1.0
        Laplace smoothing ``s`` of the prior and the likelihoods (``s >= 0``).
    {metric_parameter}
    {backend_parameter}
    {backend_params_parameter}
    {n_jobs_parameter}

    Attributes
    ----------
    prior_ : ndarray of shape (n_labels,)
        :math:`P(H^1_l)`, the smoothed share of training rows with label :math:`l`.
    cond_prob_true_ : ndarray of shape (n_labels, n_neighbors + 1)
        :math:`P(E_j \mid H^1_l)` at ``[l, j]``.
    cond_prob_false_ : ndarray of shape (n_labels, n_neighbors + 1)
        :math:`P(E_j \mid H^0_l)` at ``[l, j]``.
    {neighbors_attributes}

    Notes
    -----
    Exactly ``k`` neighbours are used, in ascending distance with ties broken by the
    lower training index (MULAN keeps every neighbour tied at the k-th distance).

    *Many labels.*  With a sparse ``Y`` the label side costs what Y holds: the counts are
    a sparse product and the count tables come from the non-zero counts, O(n k c + L k)
    for ``c`` labels per row; no (n, L) array is formed unless ``predict_proba`` asks for
    one.  :meth:`predict_top_k` gives the best labels of each query without the dense
    scores, and ``predict(X, sparse_output=True)`` a CSR matrix.
    Features are never rescaled. With ``smoothing=0`` scores can be exactly 0 or 1.

    References
    ----------
    M.-L. Zhang, Z.-H. Zhou. ML-KNN: A lazy learning approach to multi-label
    learning. Pattern Recognition 40(7):2038-2048, 2007.

    Examples
    --------
    >>> import numpy as np
    >>> from mlneighbors import MLkNN
    >>> X = np.array([[0.0], [0.1], [0.2], [0.3], [1.0], [1.1], [1.2], [1.3]])
    >>> Y = np.array([[1, 0], [1, 0], [1, 1], [1, 0], [0, 1], [0, 1], [1, 1], [0, 1]])
    >>> model = MLkNN(n_neighbors=3).fit(X, Y)
    >>> model.predict([[0.05], [1.05]])
    array([[1, 0],
           [0, 1]])
    >>> model.predict_proba([[0.05], [1.05]]).round(3)
    array([[0.854, 0.226],
           [0.226, 0.854]])
    """

    _constraints: dict = {
        **CountTableModel._constraints,
        "smoothing": [Real(0)],
    }

    def __init__(
        self,
        n_neighbors: int = 10,
        *,
        smoothing: float = 1.0,
        metric: str = "euclidean",
        backend: Any = "exact",
        backend_params: dict | None = None,
        n_jobs: int | None = None,
    ) -> None:
        self.n_neighbors = n_neighbors
        self.smoothing = smoothing
        self.metric = metric
        self.backend = backend
        self.backend_params = backend_params
        self.n_jobs = n_jobs

    def _fit_labels(self, X: Any, Y: Any) -> None:
        _, C = self._loo_counts()
        # integer histograms: partial_fit and forget update them by what leaves and comes
        self._positives = np.asarray(Y.sum(axis=0, dtype=np.int64)).ravel()
        self._c1, self._c0 = count_tables(C, Y, self.n_neighbors_)
        self._learn_tables(Y.shape[0])

    def _update_labels(self, delta: Any) -> None:
        k = self.n_neighbors_
        c1, c0, positives = self._c1.copy(), self._c0.copy(), self._positives.copy()  # new arrays: see _apply
        for sign, parts in ((-1, delta.gone), (1, delta.come)):
            for C, Y in parts:
                t1, t0 = count_tables(C, Y, k)
                c1 += sign * t1
                c0 += sign * t0
        for sign, Y in ((-1, delta.removed_labels), (1, delta.added_labels)):
            if Y is not None:
                positives += sign * np.asarray(Y.sum(axis=0, dtype=np.int64)).ravel()
        self._c1, self._c0, self._positives = c1, c0, positives
        self._learn_tables(self._Y.shape[0])

    def _learn_tables(self, n: int) -> None:
        s = float(self.smoothing)
        self.prior_ = (s + self._positives) / (2 * s + n)
        self.cond_prob_true_ = label_likelihoods(self._c1, s)
        self.cond_prob_false_ = label_likelihoods(self._c0, s)
        # the posterior of every (label, count): a query's cell is a look-up at its count
        prior = self.prior_[:, None]
        scores, decisions = decide(prior * self.cond_prob_true_, (1.0 - prior) * self.cond_prob_false_)
        self._set_tables(scores[None], decisions[None])
