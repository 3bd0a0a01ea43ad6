"""The shared estimator base: validation, binarised targets, the index, leave-one-out counts.

Every model of the package is a thin subclass: it learns its label statistics from
the leave-one-out neighbours of the training set (``_fit_labels``) and turns the
neighbours of a block of queries into scores and decisions (``_score_block``).
"""

from __future__ import annotations

import warnings
from numbers import Integral
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, MultiOutputMixin
from sklearn.preprocessing import LabelBinarizer
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import check_is_fitted, validate_data

from ._counts import membership_counts, row_blocks

__all__ = ["KNeighborsMultilabelBase", "LabelWarning", "NeighborsWarning"]


class LabelWarning(UserWarning):
    """A recoverable condition of the training labels (a label nobody has, ...)."""


class NeighborsWarning(UserWarning):
    """``n_neighbors`` was clipped to the neighbours the training set has."""


class KNeighborsMultilabelBase(MultiOutputMixin, ClassifierMixin, BaseEstimator):
    """Base class of the lazy multi-label classifiers.

    Targets
        A 2-D binary indicator ``Y`` of shape (n_samples, n_labels), dense or sparse,
        is a multi-label problem: ``predict`` returns an (n, n_labels) array of Y's
        dtype and ``predict_proba`` an (n, n_labels) array of scores; ``classes_`` is a
        list of ``n_labels`` arrays ``[0, 1]`` (scikit-learn's multi-output convention).
        A 1-D ``y`` (binary or multiclass), or a column vector that is not a 0/1
        indicator, is binarised one column per class as scikit-learn's one-vs-rest
        does (``classes_`` is set); ``predict`` returns the class of highest score
        (ties: the first class) and ``predict_proba`` the scores normalised to sum
        to 1 over the classes.

    Neighbours
        ``n_neighbors_`` (the ``k`` actually used) is ``n_neighbors``, clipped with a
        :class:`NeighborsWarning` to ``n_samples - 1`` (leave-one-out models) or
        ``n_samples`` (the others) when the training set is smaller, as scikit-learn's
        ``LocalOutlierFactor`` does.

    Subclasses set ``_needs_loo`` (whether fit needs the leave-one-out counts of the
    training set) and implement ``_fit_labels(Y, X)`` and ``_score_block(neighbors, X)``;
    they read ``k`` from ``self.n_neighbors_``.
    """

    _parameter_constraints: dict = {
        "n_neighbors": [Interval(Integral, 1, None, closed="left")],
        "metric": [StrOptions({"euclidean", "cosine"})],
        "backend": [str, HasMethods(["build", "query"])],
        "backend_params": [dict, None],
        "n_jobs": [Integral, None],
    }

    #: whether ``fit`` needs the leave-one-out membership counts of the training rows
    _needs_loo: bool = True

    # -- fit ---------------------------------------------------------------------------

    def fit(self, X: Any, y: Any) -> KNeighborsMultilabelBase:
        """Fit the model on features ``X`` and targets ``y``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : {array-like, sparse matrix} of shape (n_samples, n_labels) or (n_samples,)
            A binary label indicator, or 1-D class labels.

        Returns
        -------
        self : object
        """
        self._validate_params()
        X, Y = self._validate_training_data(X, y)
        n = X.shape[0]
        k = self.n_neighbors
        limit = n - 1 if self._needs_loo else n
        if k > limit:
            warnings.warn(
                f"n_neighbors={k} is more than the {limit} neighbours that {n} training rows "
                + ("leave (leave-one-out excludes the row itself)" if self._needs_loo else "have")
                + f"; using n_neighbors_={limit}",
                NeighborsWarning,
                stacklevel=2,
            )
        self.n_neighbors_ = min(k, limit)
        self._check_params(n)
        self._index = self._make_index().build(X)
        self._Y = Y
        self._fit_labels(Y, X)
        return self

    def _validate_training_data(self, X: Any, y: Any) -> tuple[Any, np.ndarray]:
        X, Y, classes, y_dtype = validate_training_data(self, X, y)
        self._multilabel = classes is None
        if self._multilabel:
            self._y_dtype = y_dtype
            # scikit-learn's multi-output convention (KNeighborsClassifier): one array of
            # classes per label; scorers read it to recognise a multi-label classifier
            self.classes_ = [np.array([0, 1], dtype=self._y_dtype) for _ in range(Y.shape[1])]
        else:
            self.classes_ = classes
        self.n_labels_ = Y.shape[1]
        empty = Y.sum(axis=0) == 0
        if empty.any():
            warnings.warn(
                f"{int(empty.sum())} label(s) have no positive training example "
                f"(columns {np.flatnonzero(empty)[:10].tolist()}); they are never predicted",
                LabelWarning,
                stacklevel=3,
            )
        return X, Y

    def _make_index(self) -> Any:
        from .neighbors import resolve_backend

        index = resolve_backend(self.backend, self.metric, self.backend_params)
        if self.n_jobs is not None and "n_jobs" in getattr(index, "get_params", dict)():
            index.set_params(n_jobs=self.n_jobs)
        return index

    def _check_params(self, n_samples: int) -> None:
        """Checks of the subclass parameters that need the data (after n_neighbors)."""

    def _loo_counts(self, X: Any) -> tuple[np.ndarray, np.ndarray]:
        """Leave-one-out neighbours of the training rows ``X`` and their membership counts.

        Returns ``(neighbors, C)``: ``neighbors`` (n, k) row numbers, ``C`` (n, L) int32.
        """
        from .neighbors import loo_kneighbors

        _, neighbors = loo_kneighbors(self._index, X, self.n_neighbors_)
        return neighbors, membership_counts(neighbors, self._Y)

    def _fit_labels(self, Y: np.ndarray, X: Any) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    # -- predict -----------------------------------------------------------------------

    def _score_block(self, neighbors: np.ndarray, X: Any) -> tuple[np.ndarray, np.ndarray]:
        """Scores in (0, 1) and decisions for one block of queries."""
        raise NotImplementedError  # pragma: no cover - abstract

    def _scores_and_decisions(self, X: Any) -> tuple[np.ndarray, np.ndarray]:
        check_is_fitted(self, "_index")
        X = validate_data(self, X, accept_sparse="csr", dtype=np.float64, reset=False)
        k = self.n_neighbors_
        _, neighbors = self._index.query(X, k)
        n = X.shape[0]
        scores = np.empty((n, self.n_labels_), dtype=np.float64)
        decisions = np.empty((n, self.n_labels_), dtype=bool)
        for rows in row_blocks(n, self.n_labels_ * k):
            scores[rows], decisions[rows] = self._score_block(neighbors[rows], X[rows])
        return scores, decisions

    def predict(self, X: Any) -> np.ndarray:
        """Predicted label indicator (n, n_labels), or classes (n,) for a 1-D target."""
        scores, decisions = self._scores_and_decisions(X)
        if self._multilabel:
            return decisions.astype(self._y_dtype)
        return self.classes_[np.argmax(scores, axis=1)]

    def predict_proba(self, X: Any) -> np.ndarray:
        """Scores of shape (n, n_labels), strictly inside (0, 1); for a 1-D target,
        class probabilities (n, n_classes) that sum to 1."""
        scores, _ = self._scores_and_decisions(X)
        if self._multilabel:
            return scores
        total = scores.sum(axis=1, keepdims=True)
        # all-zero scores (possible only with smoothing=0): uniform over the classes
        uniform = np.full_like(scores, 1.0 / scores.shape[1])
        return np.divide(scores, total, out=uniform, where=total > 0)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.target_tags.multi_output = True
        tags.classifier_tags.multi_label = True
        return tags


def validate_training_data(
    estimator: Any, X: Any, y: Any
) -> tuple[Any, np.ndarray, np.ndarray | None, np.dtype | None]:
    """Validate ``X`` and a target; return ``(X, Y, classes, y_dtype)``.

    ``Y`` is an int8 (n, n_labels) 0/1 matrix. A 2-D 0/1 target is a label indicator:
    ``classes`` is None and ``y_dtype`` its dtype. A 1-D target (or a column vector that
    is not 0/1) is binarised one column per class as one-vs-rest does (two classes give
    two columns, one class a single column of ones): ``classes`` are the classes and
    ``y_dtype`` None. Anything else raises ``ValueError("Unknown label type: ...")``.
    """
    if y is None:
        raise ValueError(
            f"{type(estimator).__name__} requires y to be passed, but the target y is None"
        )
    X, y = validate_data(
        estimator,
        X,
        y,
        accept_sparse="csr",
        dtype=np.float64,
        multi_output=True,
        y_numeric=False,
        ensure_min_samples=2,
    )
    if sp.issparse(y):
        y = sp.csr_matrix(y)
    if _is_indicator(y):
        Y = y.toarray() if sp.issparse(y) else np.asarray(y)
        return X, Y.astype(np.int8), None, Y.dtype
    target = type_of_target(y)
    if target not in ("binary", "multiclass"):
        raise ValueError(
            f"Unknown label type: {target!r}. y must be a binary label indicator of "
            "shape (n_samples, n_labels) or 1-D class labels"
            + (" (a 2-D y must hold only 0 and 1)" if np.ndim(y) == 2 else "")
        )
    y = np.ravel(y.toarray() if sp.issparse(y) else y)
    binarizer = LabelBinarizer().fit(y)
    Y = binarizer.transform(y).astype(np.int8)
    if len(binarizer.classes_) == 1:  # every row has the one class
        Y = np.ones((len(y), 1), dtype=np.int8)
    elif Y.shape[1] == 1:  # two classes: one column each, as one-vs-rest scores them
        Y = np.hstack([1 - Y, Y])
    return X, Y, binarizer.classes_, None


def _is_indicator(y: Any) -> bool:
    """A 2-D target of 0/1 values (one column included) is a multi-label indicator."""
    if y.ndim != 2:
        return False
    values = y.data if sp.issparse(y) else np.asarray(y)
    if values.dtype.kind not in "biuf":
        return False
    # one pass, no sort (np.unique sorted every label value: a tenth of a fit on corel5k)
    return values.dtype.kind == "b" or bool(((values == 0) | (values == 1)).all())
