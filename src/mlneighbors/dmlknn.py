"""DML-kNN: dependent multi-label kNN (Younes, Abdallah & Denoeux 2008, as coded in MULAN)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ._base import KNeighborsMultilabelBase
from ._counts import count_matrix, count_tables, decide, dml_votes
from ._docstrings import fill_doc
from ._params import Integer, Real

__all__ = ["DMLkNN"]


@fill_doc
class DMLkNN(KNeighborsMultilabelBase):
    """DML-kNN: ML-kNN's posterior counted among training instances with a similar label profile.

    Fit keeps ML-kNN's prior, the per-label totals ``C1[l] = sum_i Y[i, l]`` and
    ``C0[l] = n - C1[l]``, and the leave-one-out count vectors ``C_i`` of every
    training instance. For a query with count vector ``C_x``:

    - ``A = {i : |C_i(q) - C_x(q)| <= delta for every label q}``;
    - ``V1[l] = #{i in A : C_i(l) = C_x(l), Y[i, l] = 1}``, ``V0[l]`` likewise with
      ``Y[i, l] = 0``;
    - ``a = P(H1_l) (s + V1[l]) / (s L + C1[l])``, ``b = P(H0_l) (s + V0[l]) / (s L + C0[l])``
      (MULAN's denominators, kept for comparability); score ``a / (a + b)``,
      predicted when ``a >= b``.

    Parameters
    ----------
    {n_neighbors_loo_parameter}
    smoothing : float, default=1.0
    delta : int, default=6
        Largest per-label difference of neighbour counts for a training instance to
        resemble the query (MULAN hard-codes 6). ``delta >= n_neighbors`` puts every
        training instance in ``A``.
    {metric_parameter}
    {backend_parameters_named}

    Attributes
    ----------
    prior_ : ndarray of shape (n_labels,)
    {neighbors_attributes}

    Notes
    -----
    The comparison of a block of queries with the (n, L) training count matrix is
    vectorised (:func:`mlneighbors._counts.dml_votes`): the training rows *outside* ``A``
    are found with one matrix product per block of queries, and ``V1``, ``V0`` are the
    count tables of ML-kNN minus the contribution of those rows, a second product.  When
    ``A`` holds almost every training row (sparse label sets, as in text data) both
    products are small; ``delta >= n_neighbors`` needs none.

    *Many labels.*  The rule compares all of a query's label counts with every training
    row's, so the fit keeps the training counts as a dense (n, L) int8 matrix whatever
    ``Y`` is (sparse Y is accepted; a fit that would not fit in memory fails at once,
    naming its estimate); prefer ML-kNN or LAML-kNN for thousands of labels.

    With ``smoothing=0`` a label nobody has (or everybody has) makes a denominator 0; its
    term is then taken as 0 (its prior is 0 too), so scores never become NaN.

    References
    ----------
    Z. Younes, F. Abdallah, T. Denoeux. Multi-label classification algorithm derived
    from k-nearest neighbor rule with label dependencies. EUSIPCO 2008.

    Examples
    --------
    >>> import numpy as np
    >>> from mlneighbors import DMLkNN
    >>> X = np.array([[0.0], [0.1], [0.2], [1.0], [1.1], [1.2]])
    >>> Y = np.array([[1, 0], [1, 0], [1, 0], [0, 1], [0, 1], [0, 1]])
    >>> DMLkNN(n_neighbors=2, delta=0).fit(X, Y).predict([[0.05], [1.05]])
    array([[1, 0],
           [0, 1]])
    """

    _constraints: dict = {
        **KNeighborsMultilabelBase._constraints,
        "smoothing": [Real(0)],
        "delta": [Integer(0)],
    }

    def __init__(
        self,
        n_neighbors: int = 10,
        *,
        smoothing: float = 1.0,
        delta: int = 6,
        metric: str = "euclidean",
        backend: Any = "exact",
        backend_params: dict | None = None,
        n_jobs: int | None = None,
    ) -> None:
        self.n_neighbors = n_neighbors
        self.smoothing = smoothing
        self.delta = delta
        self.metric = metric
        self.backend = backend
        self.backend_params = backend_params
        self.n_jobs = n_jobs

    def _fit_labels(self, X: Any, Y: Any) -> None:
        s = float(self.smoothing)
        n, L = Y.shape
        # the rule compares every label's count of a query with every training row's: it
        # keeps the (n, L) training counts dense (int8), however sparse Y is
        Y = self._dense_labels("training count matrix (n x L)", n * L, itemsize=3)
        positives = Y.sum(axis=0, dtype=np.int64)
        self.prior_ = (s + positives) / (2 * s + n)
        self._denominators = (s * L + positives, s * L + (n - positives))
        _, C = self._loo_counts()
        C = C.toarray() if hasattr(C, "toarray") else C
        k = self.n_neighbors_
        self._train_counts = C.astype(np.int8 if k < 128 else np.int32)
        self._positive = Y.astype(bool)
        self._tables = count_tables(C, Y, k)

    def _counts_only(self) -> bool:
        return True  # the votes compare count vectors

    def _score_block(self, neighbors: np.ndarray, X: Any) -> tuple[np.ndarray, np.ndarray]:
        Cx = count_matrix(neighbors, self._Y)
        _, _, a, b = self._vote_terms(Cx.toarray() if hasattr(Cx, "toarray") else Cx)
        return decide(a, b)

    def _vote_terms(self, Cx: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(V1, V0, a, b)`` of queries whose dense label counts are ``Cx``: the similar training
        rows with and without each label, and the two weighted likelihoods (``explain`` shows them)."""
        V1, V0 = dml_votes(Cx, self._train_counts, self._positive, *self._tables, self.delta)
        s = float(self.smoothing)
        den1, den0 = self._denominators
        with np.errstate(invalid="ignore", divide="ignore"):
            a = self.prior_ * (s + V1) / den1
            b = (1.0 - self.prior_) * (s + V0) / den0
        a[:, den1 == 0] = 0.0
        b[:, den0 == 0] = 0.0
        return V1, V0, a, b
