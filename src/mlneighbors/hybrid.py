"""Hybrid kNN: PCA candidate search + a multiple-regression label model.

Nedungadi & Haripriya, Feature and search space reduction for label-dependent multi-label
classification; the formulas are in the user guide, :doc:`/user_guide/hybrid`.

The candidate search is the ``"pca-window"`` backend of ``mlneighbors.neighbors``
(:class:`~mlneighbors.neighbors.PCAWindowIndex`); the label model is :func:`label_regression`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.linalg

from ._base import KNeighborsMultilabelBase
from ._counts import count_matrix
from ._docstrings import fill_doc
from ._params import HasMethods, Instance, Integer, Options, Real

__all__ = ["HybridKNN", "label_regression"]


def label_regression(Y: np.ndarray, ridge: float = 1e-6) -> tuple[np.ndarray, np.ndarray]:
    """Ridge regression of every label on the other labels, with intercept, all at once.

    For label ``l`` it minimises ``mean_i (Y[i, l] - a_l - sum_{m != l} B[l, m] Y[i, m])^2
    + ridge * sum_{m != l} B[l, m]^2``.  With ``A = cov(Y) + ridge * I`` (population
    covariance) and ``P = inv(A)``, the block-inverse identity gives every regression from
    one inverse: ``B[l, m] = -P[l, m] / P[l, l]`` (m != l), ``a = mean(Y) - B @ mean(Y)``.
    A constant label gets ``B[l] = 0`` and ``a_l`` = its mean; ``ridge > 0`` keeps
    collinear labels (one-hot classes, duplicated columns) defined.

    Parameters
    ----------
    Y : ndarray of shape (n_samples, n_labels)
        Binary label indicator.
    ridge : float, default=1e-6
        ``> 0``, on the scale of the label covariance (entries at most 0.25).

    Returns
    -------
    intercept : ndarray of shape (n_labels,)
    coef : ndarray of shape (n_labels, n_labels)
        ``coef[l, m]``, the weight of label ``m`` in predicting label ``l``; zero diagonal.
        A neighbour with labels ``y`` predicts ``intercept + coef @ y``.

    Examples
    --------
    Two labels that always come together predict each other:

    >>> import numpy as np
    >>> from mlneighbors.hybrid import label_regression
    >>> intercept, coef = label_regression(np.array([[1, 1], [0, 0], [1, 1], [0, 0]]))
    >>> (intercept + coef @ np.array([1, 1])).round(3)
    array([1., 1.])
    """

    Y = np.asarray(Y, dtype=np.float64)
    n, n_labels = Y.shape
    mean = Y.mean(axis=0)
    Yc = Y - mean
    A = Yc.T @ Yc / n + ridge * np.eye(n_labels)
    P = scipy.linalg.inv(A, check_finite=False)
    coef = -P / np.diag(P)[:, None]
    np.fill_diagonal(coef, 0.0)
    return mean - coef @ mean, coef


@fill_doc
class HybridKNN(KNeighborsMultilabelBase):
    """Hybrid kNN: neighbours from a PCA candidate search, labels from a regression model.

    Fit: a label model (each label regressed on the other labels) and a PCA of the
    features, with the training rows sorted along every kept component.  Predict: on
    each component the ``n_candidates`` training rows nearest to the query along that
    axis are candidates; among their union the ``n_neighbors`` of highest cosine
    similarity to the query in the projected space are the neighbours; each neighbour
    predicts every label from its *other* labels with the label model; the average over
    the neighbours, clipped to [0, 1], is the score; a label is predicted when the score
    is ``>= threshold``.

    Parameters
    ----------
    n_neighbors : int, default=10
        ``k``, at least 1; clipped to ``n_samples`` with a ``NeighborsWarning`` when the
        training set is smaller; at most ``n_candidates`` with the "pca-window" backend.
    n_components : int, float or None, default=0.95
        Kept principal components of the "pca-window" backend.  A float in (0, 1): the
        fewest components explaining more than that fraction of the variance
        (scikit-learn's rule), at most 50; an int: that many (at most
        ``min(n_samples, n_features)``); None: all.
    n_candidates : int, default=80
        Candidates per component of the "pca-window" backend (the paper's ``L``, 80 in its
        experiments); values above the number of training rows mean all of them.
    label_model : {"regression", "vote"}, default="regression"
        "regression": a neighbour with labels ``y`` predicts ``label_intercept_ +
        label_coef_ @ y`` (see :func:`label_regression`).  "vote": it predicts its own
        labels (``label_coef_`` is the identity), so the score is the neighbours' mean.
    threshold : float, default=0.5
        In [0, 1]; a label is predicted when its score is ``>= threshold``.
    ridge : float, default=1e-6
        Ridge of the label regressions, ``> 0`` (see :func:`label_regression`).
    backend : str or index object, default="pca-window"
        The neighbour search, always by cosine distance.  "pca-window": the paper's PCA
        candidate search (:class:`~mlneighbors.neighbors.PCAWindowIndex`, configured by
        ``n_components`` and ``n_candidates``).  Any other backend (``"exact"``, a
        registered name or an index object): the ``k`` nearest by cosine similarity in the
        full feature space, no PCA -- with ``"exact"``, the paper's "Regression" column.
    backend_params : dict, default=None
        Keyword arguments of the backend (other than ``n_components`` and ``n_candidates``).
    {n_jobs_parameter}

    Attributes
    ----------
    label_intercept_ : ndarray of shape (n_labels,)
    label_coef_ : ndarray of shape (n_labels, n_labels)
    components_ : ndarray of shape (n_components_, n_features)
        Principal axes (only with the "pca-window" backend, as the next three).
    mean_ : ndarray of shape (n_features,)
        The training mean the projection subtracts.
    explained_variance_ratio_ : ndarray of shape (n_components_,)
    n_components_ : int
    {neighbors_attributes}

    Notes
    -----
    *Candidate windows.*  Along one component the ``n_candidates`` nearest training rows
    are the window grown outward from the query's coordinate; the candidate set of a query
    is the union over components, so it has between ``n_candidates`` and
    ``n_components_ * n_candidates`` rows: :meth:`candidate_fraction` reports its mean size
    relative to the training set, the quantity this method exists to make small.  Among
    the candidates the neighbours are ordered by cosine distance ``1 - cos`` in the
    projected (centred) space, ties by lower training index; see
    :class:`~mlneighbors.neighbors.PCAWindowIndex`.

    *Label model.*  The regression of each label on the other labels is linear,
    so averaging the k neighbours' predictions equals predicting from the mean of their
    label vectors: ``score = clip(label_intercept_ + label_coef_ @ mean_y, 0, 1)``.  The
    decision compares the clipped score, so ``threshold=0`` predicts every label.

    *Speed* (``benchmarks/hybrid.py``, k = 10, L = 80, test split, 2-core machine):
    on emotions (raw features, 3 components) the candidate set is 48 % of the training
    set, the neighbours are 96 % of the exact ones in the projected space, and the
    search takes 1.7x the time of exact brute force there; on yeast (50 components) the
    candidates are 93 % of the training set (recall 99 %) and the search is about 20x
    slower than brute force, whose cost per point is one fused GEMM entry while each
    candidate costs a gather.  The candidate search pays only when the training set is
    much larger than ``n_components_ * n_candidates``.

    *Scores.*  ``predict_proba`` is the clipped average itself, so it can be exactly 0 or
    1, and with ``label_model="vote"`` and an even ``k`` a score of exactly 0.5 is
    predicted (a score equal to ``threshold`` predicts the label).  scikit-learn's
    multilabel checks want probabilities strictly inside (0, 1) that round to the
    prediction: the defaults pass them, the "vote" model in general does not; these scores
    are kept.

    For a 1-D target (classes), ``predict`` returns the class of highest score (ties: the
    first) and ``predict_proba`` the scores normalised to sum 1 (uniform where all are 0).

    References
    ----------
    P. Nedungadi, H. Haripriya. Feature and search space reduction for label-dependent
    multi-label classification.

    Examples
    --------
    >>> import numpy as np
    >>> from mlneighbors import HybridKNN
    >>> rng = np.random.default_rng(0)
    >>> X = np.vstack([rng.normal(0, 1, (20, 4)) + 3, rng.normal(0, 1, (20, 4)) - 3])
    >>> Y = np.repeat([[1, 0], [0, 1]], 20, axis=0)
    >>> model = HybridKNN(n_neighbors=3, n_candidates=5).fit(X, Y)
    >>> model.predict([[3.0, 3.0, 3.0, 3.0], [-3.0, -3.0, -3.0, -3.0]])
    array([[1, 0],
           [0, 1]])
    """

    _constraints: dict = {
        "n_neighbors": [Integer(1)],
        "n_components": [
            Integer(1),
            Real(0, 1, closed="neither", integers=False),
            None,
        ],
        "n_candidates": [Integer(1)],
        "label_model": [Options("regression", "vote")],
        "threshold": [Real(0, 1)],
        "ridge": [Real(0, closed="neither")],
        "backend": [Instance(str), HasMethods("build", "query")],
        "backend_params": [Instance(dict), None],
        "n_jobs": [Integer(), None],
    }
    #: partial_fit and forget refit on the rows now: its projection (PCA) is learnt from all rows at once
    update_rule = "refit"

    _needs_loo = False
    # the PCA, the label model and its products on one BLAS thread: the same numbers on any
    # number of threads (a BLAS splits a product differently on 1 and 2 threads)
    _one_blas_thread = True

    def __init__(
        self,
        n_neighbors: int = 10,
        *,
        n_components: int | float | None = 0.95,
        n_candidates: int = 80,
        label_model: str = "regression",
        threshold: float = 0.5,
        ridge: float = 1e-6,
        backend: Any = "pca-window",
        backend_params: dict | None = None,
        n_jobs: int | None = None,
    ) -> None:
        self.n_neighbors = n_neighbors
        self.n_components = n_components
        self.n_candidates = n_candidates
        self.label_model = label_model
        self.threshold = threshold
        self.ridge = ridge
        self.backend = backend
        self.backend_params = backend_params
        self.n_jobs = n_jobs

    def _index_metric(self) -> str:
        return "cosine"  # the paper's similarity

    def _windowed(self) -> bool:
        return isinstance(self.backend, str) and self.backend == "pca-window"

    def _make_index(self) -> Any:
        index = super()._make_index()
        if self._windowed():
            index.set_params(n_components=self.n_components, n_candidates=self.n_candidates)
        return index

    def _check_params(self, n_samples: int) -> None:
        if not np.isfinite(self.ridge):
            raise ValueError(f"ridge must be a finite number > 0, got {self.ridge!r}")
        if self._windowed() and self.n_candidates < self.n_neighbors_:
            raise ValueError(
                f"n_candidates={self.n_candidates} must be >= n_neighbors={self.n_neighbors_}: "
                "the neighbours are chosen among the candidates"
            )
        if self._windowed() and self.backend_params and {"n_components", "n_candidates"} & set(self.backend_params):
            raise ValueError("set n_components and n_candidates on HybridKNN itself, not in backend_params")

    def _fit_labels(self, X: Any, Y: Any) -> None:
        n, L = Y.shape
        # the label model regresses every label on all the others: (L, L) matrices
        Y = self._dense_labels("label model (n x L labels and three L x L matrices)", n * L + 3 * L * L)
        if self.label_model == "regression":
            self.label_intercept_, self.label_coef_ = label_regression(Y, self.ridge)
        else:
            self.label_intercept_ = np.zeros(Y.shape[1])
            self.label_coef_ = np.eye(Y.shape[1])
        if self._windowed():
            index = self._get_index()
            for name in ("components_", "mean_", "explained_variance_ratio_", "n_components_"):
                setattr(self, name, getattr(index, name))

    @fill_doc
    def candidate_fraction(self, X: Any) -> float:
        """Mean size of the candidate set of the queries ``X``, as a fraction of the
        training set (1.0 without the "pca-window" backend): the share of brute-force work.

        {x_queries_sections}
        fraction : float
        """

        X = self._validate_queries(X)
        index = self._get_index()
        if not hasattr(index, "candidate_fraction"):
            return 1.0
        return index.candidate_fraction(X)

    # -- predict -----------------------------------------------------------------------

    def _score_block(self, neighbors: np.ndarray, X: Any) -> tuple[np.ndarray, np.ndarray]:
        C = count_matrix(neighbors, self._Y)
        mean_y = (C.toarray() if hasattr(C, "toarray") else C) / self.n_neighbors_
        scores = self.label_intercept_ + mean_y @ self.label_coef_.T
        np.clip(scores, 0.0, 1.0, out=scores)
        return scores, scores >= self.threshold
