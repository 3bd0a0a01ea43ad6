"""IBLR-ML and IBLR-ML+: logistic regression on the neighbours' label evidence (Cheng & Huellermeier 2009).

The formulas are in the user guide, :doc:`/user_guide/iblr`; MULAN's ``IBLR_ML`` is the
reference implementation whose choices (the evidence as the share of neighbours with the label,
Weka's ``Logistic`` with ridge 1e-8 on standardised inputs, a 0.5 threshold that predicts a tie)
are kept.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.special import expit
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression

from ._base import KNeighborsMultilabelBase
from ._config import check_fits
from ._counts import count_matrix
from ._docstrings import fill_doc
from ._params import Instance, Real
from .neighbors._internal import each_block, resolve_n_jobs

__all__ = ["IBLRML"]

#: the solver's stopping rule: Weka's Logistic optimises to convergence; so does this, in
#: practice (the per-label iterations are in ``n_iter_``)
_TOL = 1e-6
_MAX_ITER = 1000
_ABOVE_HALF = float(np.nextafter(0.5, 1.0))


#: the regressions take their inputs as a sparse matrix below this share of nonzeros (a
#: product with a CSR matrix of 7 % nonzeros took 0.30 ms an iteration, dense 0.53: corel5k)
_SPARSE_BELOW = 0.25


def _sparse_pays(Z: Any) -> bool:
    if sp.issparse(Z):
        return False
    return np.count_nonzero(Z) < _SPARSE_BELOW * Z.size


def _column_scale(Z: Any) -> np.ndarray:
    """``1 / std`` of every column of ``Z`` (sample standard deviation, as Weka's Logistic
    standardises), 0 for a constant column (Weka removes it: its coefficient stays 0)."""
    n = Z.shape[0]
    if n < 2:
        return np.zeros(Z.shape[1])
    if sp.issparse(Z):
        mean = np.asarray(Z.mean(axis=0)).ravel()
        square = np.asarray(Z.multiply(Z).mean(axis=0)).ravel()
        var = np.maximum(square - mean * mean, 0.0) * (n / (n - 1))
    else:
        var = np.var(Z, axis=0, ddof=1)
    std = np.sqrt(var)
    # a column constant up to rounding is constant
    constant = std <= 1e-12 * np.maximum(1.0, np.abs(np.asarray(Z.max(axis=0).todense()).ravel()
                                                      if sp.issparse(Z) else np.abs(Z).max(axis=0)))
    return np.where(constant, 0.0, 1.0 / np.where(constant, 1.0, std))


def decide_logistic(margin: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Scores ``1 / (1 + exp(-margin))`` and decisions ``score >= 0.5`` (MULAN's threshold: a
    tie predicts the label, reported as the next float above 0.5, as ML-kNN's ties are)."""
    scores = expit(margin)
    decisions = scores >= 0.5
    scores[decisions & (scores <= 0.5)] = _ABOVE_HALF
    return scores, decisions


@fill_doc
class IBLRML(KNeighborsMultilabelBase):
    r"""IBLR-ML: a logistic regression per label on the neighbours' label evidence.

    For a row :math:`x` the evidence for label :math:`j` is the share of its ``k`` nearest
    training rows that carry it, :math:`e_j(x) = C_x(j) / k`.  For every label :math:`l` a
    logistic regression is fitted on the training rows, each described by the evidence of
    its *leave-one-out* neighbours for every label (IBLR-ML+, ``plus=True``: and by its own
    features), so that the model learns how much each label's evidence says about label
    :math:`l`, correlations between labels included:

    .. math::

       \log \dfrac{P(y_l = 1 \mid x)}{P(y_l = 0 \mid x)}
       = \alpha_{l,0} + \sum_{j=1}^{L} \alpha_{l,j}\, e_j(x)
       \; \left[ + \sum_{f=1}^{d} \beta_{l,f}\, x_f \right]

    The score is that probability; the label is predicted when it is :math:`\geq 0.5`.

    Parameters
    ----------
    {n_neighbors_loo_parameter}
    plus : bool, default=False
        IBLR-ML+: the regressions also read the row's features (MULAN's ``addFeatures``).
    ridge : float, default=1e-8
        ``> 0``: the penalty ``ridge * ||alpha||^2`` (the intercept not penalised) added to
        each regression's negative log-likelihood, on inputs standardised to unit variance:
        Weka's ``Logistic``, which MULAN's IBLR-ML uses, with its default.  scikit-learn's
        ``LogisticRegression`` is run with ``C = 1 / (2 ridge)``.
    {metric_parameter}
    {backend_parameter}
    {backend_params_parameter}
    {n_jobs_parameter}

    Attributes
    ----------
    coef_ : ndarray of shape (n_labels, n_labels) or (n_labels, n_labels + n_features)
        :math:`\alpha_{l,j}` at ``[l, j]`` (per unit of evidence, a share in [0, 1]); with
        ``plus``, :math:`\beta_{l,f}` at ``[l, n_labels + f]`` (per unit of the feature as
        given: the standardisation is folded in).
    intercept_ : ndarray of shape (n_labels,)
        :math:`\alpha_{l,0}`; ``-inf`` for a label no training row has, ``inf`` for one
        every row has (no regression is fitted: the score is 0 or 1).
    n_iter_ : ndarray of shape (n_labels,)
        The solver's iterations per label (0 where none was fitted).
    {neighbors_attributes}

    Notes
    -----
    The training rows' evidence comes from their leave-one-out neighbours (each row's own
    index left out, its duplicates kept), as MULAN's search skips the query instance: with
    the row among its own neighbours its label would leak into its evidence.

    *Regularisation.*  With the default ``ridge=1e-8`` the regressions are practically
    maximum likelihood, as in the paper; on (nearly) separable training data the
    coefficients grow large and the solver may stop at its iteration limit (a
    ``ConvergenceWarning`` names the labels).  A larger ``ridge`` (0.01 to 1) gives smoother
    scores on small data sets.  The regressions are one scikit-learn ``LogisticRegression``
    (lbfgs, ``tol=1e-6``, at most 1000 iterations) per label, a loop over the labels only:
    each label is its own convex problem, and scikit-learn fits independent binary
    regressions one at a time (its multi-output wrapper is the same loop); the evidence of
    all rows and labels comes from one vectorised count.  The labels' regressions run on
    ``n_jobs`` threads, each on one BLAS thread (a label's numbers do not depend on them), and
    read their inputs as a sparse matrix when fewer than a quarter of them are nonzero (many
    labels: a row's ``k`` neighbours carry few of them); on a 2-core machine corel5k's fit took
    44 s instead of 82, corel16k001's IBLR-ML+ 14 s instead of 151.

    Features are never rescaled by the model (the standardisation inside the regressions
    changes only what ``ridge`` penalises); the command line min-max scales them, as MULAN
    does.

    References
    ----------
    W. Cheng, E. Huellermeier. Combining instance-based learning and logistic regression
    for multilabel classification. Machine Learning 76(2-3):211-225, 2009.

    Examples
    --------
    >>> import numpy as np
    >>> from mlneighbors import IBLRML
    >>> X = np.array([[0.0], [0.1], [0.2], [0.3], [1.0], [1.1], [1.2], [1.3]])
    >>> Y = np.array([[1, 0], [1, 0], [1, 1], [1, 0], [0, 1], [0, 1], [1, 1], [0, 1]])
    >>> model = IBLRML(n_neighbors=3, ridge=0.1).fit(X, Y)
    >>> model.predict([[0.05], [1.05]])
    array([[1, 0],
           [0, 1]])
    """

    _constraints: dict = {
        **KNeighborsMultilabelBase._constraints,
        "plus": [Instance(bool)],
        "ridge": [Real(0, closed="neither")],
    }
    #: partial_fit and forget refit on the rows now: every regression is learnt from all rows at once
    update_rule = "refit"
    # the regressions (L-BFGS's products) and the margins on one BLAS thread: the same numbers on
    # any number of threads (a BLAS splits a product differently on 1 and 2 threads)
    _one_blas_thread = True

    def __init__(
        self,
        n_neighbors: int = 10,
        *,
        plus: bool = False,
        ridge: float = 1e-8,
        metric: str = "euclidean",
        backend: Any = "exact",
        backend_params: dict | None = None,
        n_jobs: int | None = None,
    ) -> None:
        self.n_neighbors = n_neighbors
        self.plus = plus
        self.ridge = ridge
        self.metric = metric
        self.backend = backend
        self.backend_params = backend_params
        self.n_jobs = n_jobs

    def _check_params(self, n_samples: int) -> None:
        if not np.isfinite(self.ridge):
            raise ValueError(f"ridge must be a finite number > 0, got {self.ridge!r}")

    def _counts_only(self) -> bool:
        return True  # the evidence is the neighbours' label counts

    def _inputs(self, C: Any, X: Any) -> Any:
        """The regressions' inputs of rows with counts ``C``: the evidence (and the features)."""
        evidence = (C.toarray() if sp.issparse(C) else np.asarray(C)) / self.n_neighbors_
        if not self.plus:
            return evidence
        if sp.issparse(X):
            return sp.hstack([sp.csr_matrix(evidence), X], format="csr", dtype=np.float64)
        return np.hstack([evidence, np.asarray(X, dtype=np.float64)])

    def _fit_labels(self, X: Any, Y: Any) -> None:
        n, L = Y.shape
        width = L + (X.shape[1] if self.plus and not sp.issparse(X) else 0)
        check_fits(2 * n * width * 8 + n * L, f"{type(self).__name__}'s regression inputs (n x inputs, twice)")
        _, C = self._loo_counts()
        Z = self._inputs(C, X)
        scale = _column_scale(Z)
        Zs = Z @ sp.diags(scale, format="csr") if sp.issparse(Z) else Z * scale
        Y = self._dense_labels("labels (n x L)", n * L, itemsize=1)
        positives = Y.sum(axis=0, dtype=np.int64)
        if _sparse_pays(Zs):  # the evidence of k neighbours is mostly zeros when labels are many
            Zs = sp.csr_matrix(Zs)
        coef = np.zeros((L, Z.shape[1]))
        intercept = np.where(positives == n, np.inf, -np.inf)
        n_iter = np.zeros(L, dtype=np.int64)

        def fit_label(label: int) -> None:
            model = LogisticRegression(C=1.0 / (2.0 * self.ridge), tol=_TOL, max_iter=_MAX_ITER)
            model.fit(Zs, Y[:, label])
            coef[label] = model.coef_[0] * scale
            intercept[label] = model.intercept_[0]
            n_iter[label] = int(np.max(model.n_iter_))

        # one binary regression per label: independent convex problems, which scikit-learn
        # fits one at a time (no Python loop over rows anywhere), on n_jobs threads, each
        # on one BLAS thread: a label's numbers do not depend on the threads
        labels = [int(label) for label in np.flatnonzero((positives > 0) & (positives < n))]
        with warnings.catch_warnings():  # here, not in the threads: the filters are the process's
            warnings.simplefilter("ignore", ConvergenceWarning)
            each_block(fit_label, labels, resolve_n_jobs(self.n_jobs))
        stalled = [label for label in labels if n_iter[label] >= _MAX_ITER]
        if stalled:
            warnings.warn(
                f"{type(self).__name__}: the regressions of labels {stalled[:10]} stopped at {_MAX_ITER} iterations "
                f"(ridge={self.ridge!r} on nearly separable data: the coefficients grow without bound); "
                "a larger ridge converges",
                ConvergenceWarning,
                stacklevel=4,  # the caller of fit
            )
        self.coef_, self.intercept_, self.n_iter_ = coef, intercept, n_iter

    def _margin_terms(self, C: Any, X: Any) -> dict[str, np.ndarray]:
        """The evidence of queries with counts ``C`` and the parts of each label's log-odds
        (``explain`` shows them): ``evidence``, ``evidence_part``, ``feature_part`` (plus only),
        ``intercept`` and ``margin``, all (m, n_labels)."""
        L = self.n_labels_
        evidence = (C.toarray() if sp.issparse(C) else np.asarray(C)) / self.n_neighbors_
        terms = {"evidence": evidence, "evidence_part": evidence @ self.coef_[:, :L].T}
        margin = self.intercept_ + terms["evidence_part"]
        if self.plus:
            part = X @ self.coef_[:, L:].T
            terms["feature_part"] = np.asarray(part.toarray() if sp.issparse(part) else part, dtype=np.float64)
            margin = margin + terms["feature_part"]
        terms["intercept"] = np.broadcast_to(self.intercept_, margin.shape).copy()
        terms["margin"] = margin
        return terms

    def _score_block(self, neighbors: np.ndarray, X: Any) -> tuple[np.ndarray, np.ndarray]:
        return decide_logistic(self._margin_terms(count_matrix(neighbors, self._Y), X)["margin"])
