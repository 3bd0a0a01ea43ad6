"""BLDA: class-balanced multi-label linear discriminant analysis.

Wang, Ding & Huang, Multi-label classification: inconsistency and class balanced k-nearest
neighbor (AAAI 2010); the formulas are in ``docs/user_guide/bknn_blda.rst``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.linalg
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from ._config import check_fits, working_memory_bytes
from ._dask_estimators import training_data
from ._docstrings import fill_doc
from ._params import Integer, Real, validate_params
from ._persist import VersionedState
from ._targets import in_fit_order, target_classes
from .neighbors._internal import blas_single_thread

__all__ = ["BLDA"]


@fill_doc
class BLDA(VersionedState, ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Class-balanced multi-label LDA: a linear projection to at most ``n_labels - 1`` dims.

    Every instance contributes once per label it carries (class-wise scatter matrices):

    - ``m_l`` = mean of the instances with label ``l``; ``m`` = the *multi-label global
      mean* ``sum_l sum_i Y[i, l] x_i / sum_l sum_i Y[i, l]`` (not the plain mean);
    - ``S_b = sum_l n_l (m_l - m)(m_l - m)^T``,
      ``S_w = sum_l sum_i Y[i, l] (x_i - m_l)(x_i - m_l)^T``;
    - the projection is spanned by the top ``r`` generalised eigenvectors of
      ``S_b u = lambda (S_w + rho I) u`` with ``rho = reg * trace(S_w) / n_features``
      (``scipy.linalg.eigh``).

    Parameters
    ----------
    n_components : int, default=None
        ``r``.  None: ``min(n_labels - 1, rank)``, the paper's ``n_labels - 1`` unless the
        centred training data have a lower rank.  Larger than ``n_labels - 1`` (``S_b``
        has rank at most that) or than the rank raises ``ValueError``.
    reg : float, default=1e-3
        Ridge on ``S_w``, relative to its mean eigenvalue (``S_w`` is singular whenever
        ``n_features >= n_samples``).  0 is allowed when ``S_w`` is positive definite.

    Attributes
    ----------
    components_ : ndarray of shape (n_components_, n_features)
        The eigenvectors ``u`` (rows), in decreasing order of eigenvalue, scaled so that
        ``u^T (S_w + rho I) u = 1``; the sign makes each row's largest entry positive.
    eigenvalues_ : ndarray of shape (n_components_,)
        The generalised eigenvalues ``lambda``, decreasing.
    mean_ : ndarray of shape (n_features,)
        The multi-label global mean ``m``.
    n_components_ : int
    rank_ : int
        Numerical rank of the training data centred at their plain mean: the eigenvalues
        of the smaller Gram matrix above ``max(n_samples, n_features) * eps * largest``.
    regularization_ : float
        ``rho``.
    n_labels_ : int
    classes_ : ndarray or list of ndarray
        The classes of a 1-D target (one column per class); for a label indicator, one
        array ``[0, 1]`` per label.
    n_features_in_ : int

    Notes
    -----
    ``transform(X) = (X - mean_) @ components_.T``; the shift by ``mean_`` is a constant
    (it changes no distance between projected points).

    *High dimensions.*  Every scatter direction is a difference of training points, so
    both matrices live in the span of the centred data.  When ``n_features > n_samples``
    the problem is solved in that span: an eigendecomposition of the (n, n) Gram matrix
    gives an orthonormal basis, the data are expressed in it (dense, at most
    ``n_samples`` columns) and the eigenproblem is solved there.  This is exact, not an
    approximation: outside the span ``S_b`` is 0, so the top eigenvectors lie inside it,
    and ``rho`` keeps its ``n_features`` denominator.  No (n_features, n_features)
    matrix is formed.  Sparse input with ``n_features <= n_samples`` is densified
    (an (n_samples, n_features) array); with ``n_features > n_samples`` only the Gram
    matrix and the (n_samples, rank) coordinates are dense.

    *Choices the paper leaves open.*  Labels without members are left out (their mean is
    undefined; they add nothing to either matrix).  A 1-D target is binarised one column
    per class, so single-label data give classical LDA (the multi-label global mean is
    then the plain mean).  The eigenvectors are ``S_w``-normalised as in classical LDA.

    {wang2010_references}

    Examples
    --------
    >>> import numpy as np
    >>> from mlneighbors import BLDA
    >>> X = np.array([[0.0, 0.0], [0.2, 1.0], [2.0, 0.1], [2.2, 0.9], [1.0, 3.0], [1.1, 3.2]])
    >>> Y = np.array([[1, 0, 0], [1, 0, 0], [0, 1, 0], [0, 1, 0], [0, 0, 1], [1, 0, 1]])
    >>> BLDA().fit(X, Y).transform(X).shape
    (6, 2)
    """

    _constraints: dict = {
        "n_components": [Integer(1), None],
        "reg": [Real(0)],
    }

    def __init__(self, n_components: int | None = None, *, reg: float = 1e-3) -> None:
        self.n_components = n_components
        self.reg = reg

    @fill_doc
    def fit(self, X: Any, y: Any) -> BLDA:
        """Learn the projection from features ``X`` and labels ``y``.

        {fit_parameters}
        """
        validate_params(self)
        if not np.isfinite(self.reg):
            raise ValueError(f"reg must be a finite number >= 0, got {self.reg!r}")
        # every product and the eigen-solver on one BLAS thread: a BLAS splits them differently
        # on 1 and 2 threads, which rounds differently, and BKNN's thresholds after the
        # projection are learnt on nearly tied scores
        with blas_single_thread():
            return self._fit(X, y)

    def _fit(self, X: Any, y: Any) -> BLDA:
        X, Y = self._validate_training_data(X, y)
        n, d = X.shape
        if sp.issparse(Y):
            check_fits(8 * Y.shape[0] * Y.shape[1], "BLDA's label matrix (n x L, float64)")
            Y = Y.toarray()
        Y = Y[:, Y.sum(axis=0) > 0].astype(np.float64)  # labels without members add nothing
        n_eff = Y.shape[1]
        if n_eff < 2:
            raise ValueError(
                f"BLDA needs at least two labels with a positive example, got {n_eff}: "
                "S_b has rank n_labels - 1"
            )
        distinct = np.unique(Y.T.astype(bool), axis=0).shape[0]
        if distinct < 2:
            raise ValueError(
                "BLDA needs at least two labels with different members: every label with a positive "
                "example is carried by the same rows (S_b = 0, no direction separates them)"
            )
        Z, basis, self.rank_ = _span_coordinates(X)
        if self.rank_ == 0:
            raise ValueError("the training data are constant (rank 0): nothing to project")
        r_max = min(n_eff - 1, self.rank_)
        if self.n_components is None:
            r = r_max
        elif self.n_components > n_eff - 1:
            raise ValueError(
                f"n_components={self.n_components} is larger than n_labels - 1 = {n_eff - 1} "
                "(labels with a positive example): S_b has rank at most n_labels - 1"
            )
        elif self.n_components > self.rank_:
            raise ValueError(
                f"n_components={self.n_components} is larger than the rank of the centred "
                f"training data ({self.rank_})"
            )
        else:
            r = self.n_components
        S_b, S_w = _scatter_matrices(Z, Y)
        trace = np.trace(S_w)
        if trace <= 0:  # every class is a single point: scale the ridge by the total scatter
            trace = np.trace(S_b)
        self.regularization_ = float(self.reg) * trace / d
        k = S_b.shape[0]
        B = S_w + self.regularization_ * np.eye(k)
        singular = ValueError(
            f"S_w + rho I is not positive definite (reg={self.reg}): S_w is singular, "
            "as it is whenever n_features >= n_samples - n_labels; use reg > 0"
        )
        if self.reg == 0:  # rounding can leave a singular S_w barely positive
            w = scipy.linalg.eigvalsh(B)
            if w[0] <= w[-1] * k * np.finfo(np.float64).eps * 10:
                raise singular
        try:
            vals, vecs = scipy.linalg.eigh(S_b, B, subset_by_index=[k - r, k - 1])
        except np.linalg.LinAlgError as exc:
            raise singular from exc
        vals, vecs = vals[::-1], vecs[:, ::-1]
        components = (vecs if basis is None else basis @ vecs).T
        top = np.argmax(np.abs(components), axis=1)
        signs = np.sign(components[np.arange(r), top])
        signs[signs == 0] = 1.0
        self.components_ = components * signs[:, None]
        self.eigenvalues_ = vals
        self.n_components_ = r
        labels_per_row = Y.sum(axis=1)
        self.mean_ = np.asarray(X.T @ labels_per_row).ravel() / labels_per_row.sum()
        return self

    @fill_doc
    def transform(self, X: Any) -> np.ndarray:
        """Project ``X``: ``(X - mean_) @ components_.T``.

        {x_samples_sections}
        X_new : ndarray of shape (n_samples, n_components_)
            Dense, whatever ``X`` is.
        """

        check_is_fitted(self, "components_")
        X = validate_data(self, in_fit_order(self, X), accept_sparse="csr", dtype=np.float64, reset=False)
        W = self.components_.T
        with blas_single_thread():  # the same numbers on any number of threads (see fit)
            return np.asarray(X @ W) - self.mean_ @ W

    @property
    def _n_features_out(self) -> int:
        return self.n_components_

    def _validate_training_data(self, X: Any, y: Any) -> tuple[Any, np.ndarray]:
        """Features and a binary (n, n_labels) target, 1-D classes binarised (as the
        classifiers of the package do, so a Pipeline sees the same labels)."""
        X, Y, classes, y_dtype = training_data(self, X, y)
        X = X.astype(np.float64, copy=False)  # the projection is computed in float64 (float32 rows too)
        self.classes_ = target_classes(classes, y_dtype, Y.shape[1])
        self.n_labels_ = Y.shape[1]
        return X, Y

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.target_tags.required = True
        return tags


def _span_coordinates(X: Any) -> tuple[np.ndarray, np.ndarray | None, int]:
    """Dense coordinates of the data in which to solve, the basis (None: the identity)
    and the numerical rank of the data centred at their plain mean."""
    n, d = X.shape
    xbar = np.asarray(X.mean(axis=0)).ravel()
    eps = np.finfo(np.float64).eps
    if d <= n:
        Z = (X.toarray() if sp.issparse(X) else np.asarray(X)) - xbar
        vals = scipy.linalg.eigvalsh(Z.T @ Z)
        top = max(vals.max(), 0.0)
        rank = int(np.sum(vals > top * max(n, d) * eps)) if top > 0 else 0
        return Z, None, rank
    if sp.issparse(X):
        r = np.asarray(X @ xbar).ravel()
        G = np.asarray((X @ X.T).toarray()) - r[:, None] - r[None, :] + xbar @ xbar
    else:
        Xc = X - xbar
        G = Xc @ Xc.T
    G = (G + G.T) / 2
    vals, vecs = scipy.linalg.eigh(G)
    top = max(vals.max(), 0.0)
    keep = vals > top * max(n, d) * eps if top > 0 else np.zeros(n, dtype=bool)
    rank = int(keep.sum())
    U, sv = vecs[:, keep], np.sqrt(vals[keep])
    Z = U * sv  # coordinates of the centred rows in the basis below
    if sp.issparse(X):
        XtU = np.asarray(X.T @ U) - np.outer(xbar, U.sum(axis=0))
    else:
        XtU = Xc.T @ U
    basis = XtU / sv  # orthonormal columns spanning the centred rows
    return Z, basis, rank


def _scatter_matrices(Z: np.ndarray, Y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``S_b`` and ``S_w`` (class-wise, every (row, label) pair once) of the rows of ``Z``."""
    n_l = Y.sum(axis=0)
    labels_per_row = Y.sum(axis=1)
    means = (Y.T @ Z) / n_l[:, None]  # m_l
    m = (labels_per_row @ Z) / labels_per_row.sum()  # the multi-label global mean
    between = (means - m) * np.sqrt(n_l)[:, None]
    S_b = between.T @ between
    rows, labels = np.nonzero(Y)
    k = Z.shape[1]
    S_w = np.zeros((k, k))
    # (pair x dimension) blocks: a quarter of the working memory for the differences
    step = max(1, working_memory_bytes(share=0.25) // (8 * max(k, 1)))
    for a in range(0, len(rows), step):  # chunks of (row, label) pairs, for memory only
        diff = Z[rows[a : a + step]] - means[labels[a : a + step]]
        S_w += diff.T @ diff
    return (S_b + S_b.T) / 2, (S_w + S_w.T) / 2
