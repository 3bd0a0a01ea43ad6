"""Stratified multi-label cross-validation and a cross-validation runner.

:class:`MultilabelStratifiedKFold` splits a multi-label data set by iterative
stratification (Sechidis, Tsoumakas & Vlahavas, 2011) and follows
scikit-learn's splitter protocol, so it can be passed as ``cv=`` to
:func:`sklearn.model_selection.cross_validate` or
:class:`sklearn.model_selection.GridSearchCV`.
:func:`cross_validate` runs any scikit-learn multi-label estimator over such
folds and scores every fold with :func:`mlneighbors.metrics.evaluate`.
"""

from __future__ import annotations

import numbers
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.model_selection import BaseCrossValidator
from sklearn.utils import check_random_state
from sklearn.utils.parallel import Parallel, delayed
from sklearn.utils.validation import check_consistent_length, indexable

from mlneighbors.metrics import METRICS, evaluate

__all__ = [
    "CVResult",
    "MultilabelStratifiedKFold",
    "cross_validate",
    "iterative_stratification",
]


# ---------------------------------------------------------------------------
# Iterative stratification
# ---------------------------------------------------------------------------


def _check_label_matrix(Y: Any, name: str = "Y") -> sp.csr_matrix:
    """Validate a binary label matrix and return it as CSR with unit data.

    Parameters
    ----------
    Y : array-like or sparse matrix of shape (n_samples, n_labels)
        Label indicator matrix with values in {0, 1} (bool accepted).
    name : str, default="Y"
        Name used in error messages.

    Returns
    -------
    Y : scipy.sparse.csr_matrix of shape (n_samples, n_labels), dtype int8
        Canonical CSR (sorted indices, no explicit zeros, all data equal to 1).
    """
    if Y is None:
        raise ValueError(
            f"{name} is required: a 2-D label indicator matrix of shape "
            "(n_samples, n_labels); got None."
        )
    if sp.issparse(Y):
        if Y.ndim != 2:
            raise ValueError(f"{name} must be 2-D (n_samples, n_labels); got shape {Y.shape}.")
        Y = sp.csr_matrix(Y, copy=True)
        Y.eliminate_zeros()
        values = Y.data
    else:
        Y = np.asarray(Y)
        if Y.ndim != 2:
            raise ValueError(
                f"{name} must be a 2-D label indicator matrix of shape "
                f"(n_samples, n_labels); got an array of shape {Y.shape}."
            )
        if Y.dtype == object:
            try:
                Y = Y.astype(np.float64)
            except (TypeError, ValueError):
                raise ValueError(f"{name} must be numeric with values in {{0, 1}}.") from None
        values = Y
    if values.dtype != bool:
        with np.errstate(invalid="ignore"):
            binary = np.all((values == 0) | (values == 1))
        if not binary:
            bad = np.unique(values[~((values == 0) | (values == 1))])[:5]
            raise ValueError(
                f"{name} must be a binary label indicator matrix with values in "
                f"{{0, 1}}; found other values such as {bad.tolist()}."
            )
    if sp.issparse(Y):
        Y.data = np.ones_like(Y.data, dtype=np.int8)
        Y = Y.astype(np.int8)
    else:
        Y = sp.csr_matrix(Y.astype(np.int8, copy=False))
    Y.sum_duplicates()
    Y.sort_indices()
    return Y


def _greedy_slots(
    keys: Sequence[np.ndarray], n_items: int, step: int, rng: np.random.RandomState
) -> np.ndarray:
    """Folds chosen by ``n_items`` greedy picks of the lexicographic maximum.

    Each pick takes the fold with the largest ``keys[0]``, ties broken by the
    next key, remaining ties at random, and then lowers every key of that fold
    by ``step``. Because one fold's keys only decrease, a fold offers the
    sequence of "slots" ``(k0 - t*step, k1 - t*step, ...)`` for t = 0, 1, ...
    and the greedy picks are exactly the ``n_items`` largest slots in sorted
    order. That turns the inherently sequential loop into one sort.

    Parameters
    ----------
    keys : sequence of ndarray of shape (n_folds,), int64
        Primary key first.
    n_items : int
        Number of picks.
    step : int
        Amount by which the chosen fold's keys drop per pick.
    rng : RandomState
        Draws one uniform per (fold, slot), shape (n_folds, n_items), for the
        random tie-break: among equal keys the slot with the larger draw wins.

    Returns
    -------
    folds : ndarray of shape (n_items,), intp
        ``folds[i]`` is the fold of the i-th pick.
    """
    n_folds = keys[0].shape[0]
    tie = rng.random_sample((n_folds, n_items))
    if n_items == 0:
        return np.empty(0, dtype=np.intp)
    # Only a few slots per fold can make the cut: with m = ceil(n_items / k),
    # every fold has m slots at or above min(keys[0]) - (m - 1) * step, so the
    # cut lies at or above that level and fold j keeps at most
    # (keys[0][j] - min(keys[0])) // step + m slots. This keeps the sort at
    # about n_items + k entries instead of k * n_items.
    primary = keys[0]
    per_fold = -(-n_items // n_folds)
    cap = np.minimum((primary - primary.min()) // step + per_fold, n_items).astype(np.intp)
    fold = np.repeat(np.arange(n_folds, dtype=np.intp), cap)
    slot = np.arange(fold.size, dtype=np.intp) - np.repeat(np.cumsum(cap) - cap, cap)
    drop = slot.astype(np.int64) * step
    # np.lexsort sorts ascending on the last key first; negate for "largest".
    sort_keys = [-tie[fold, slot]]
    for key in reversed(keys):
        sort_keys.append(drop - key[fold])
    best = np.lexsort(sort_keys)[:n_items]
    return fold[best]


def iterative_stratification(
    Y: Any,
    n_splits: int = 5,
    *,
    shuffle: bool = False,
    random_state: int | np.random.RandomState | None = None,
) -> np.ndarray:
    """Assign every sample to one of ``n_splits`` folds by iterative stratification.

    Parameters
    ----------
    Y : array-like or sparse matrix of shape (n_samples, n_labels)
        Binary label indicator matrix.
    n_splits : int, default=5
        Number of folds, at least 2 and at most ``n_samples``.
    shuffle : bool, default=False
        Whether to visit the samples in a random order instead of row order.
        The order decides which of a label's examples goes to which fold.
    random_state : int, RandomState instance or None, default=None
        Seed for the random tie-breaks (always used) and the shuffle.

    Returns
    -------
    folds : ndarray of shape (n_samples,), intp
        ``folds[i]`` is the test fold of sample ``i``.

    Notes
    -----
    Algorithm 1 of Sechidis et al. with equal fold proportions. Every fold
    ``j`` keeps a desired number of examples ``c_j`` and, per label ``i``, a
    desired number of positive examples ``c_j^i`` (initially ``n / k`` and
    ``|D^i| / k``). Repeatedly the label with the fewest (but at least one)
    unassigned examples is taken (ties at random); each of its unassigned
    examples goes to the fold with the largest ``c_j^i`` for that label, ties
    broken by the largest ``c_j``, then at random; the fold's desired counts
    drop for every label the example carries. Examples with no label are
    distributed at the end to the folds with the largest ``c_j`` (as the paper
    suggests), which evens out the fold sizes as far as their number allows.

    The examples of one label are assigned in one vectorised step: within a
    label only that label's ``c_j^i`` and ``c_j`` steer the choice, and the
    greedy choices equal the top entries of a sort (see ``_greedy_slots``).
    Desired counts are kept multiplied by ``k`` so that they are integers and
    ties are exact. Cost: one pass over the labels, about
    ``O(nnz + n k + n log n + k L^2)`` for ``L`` labels.

    References
    ----------
    .. [1] K. Sechidis, G. Tsoumakas and I. Vlahavas, "On the Stratification
       of Multi-Label Data", ECML PKDD 2011, LNCS 6913, pp. 145-158.

    Examples
    --------
    >>> import numpy as np
    >>> Y = np.array([[1, 0], [1, 0], [0, 1], [0, 1], [1, 1], [1, 1]])
    >>> folds = iterative_stratification(Y, n_splits=2, random_state=0)
    >>> np.bincount(folds).tolist()
    [3, 3]
    >>> [Y[folds == j].sum(axis=0).tolist() for j in range(2)]
    [[2, 2], [2, 2]]
    """
    n_splits = _check_n_splits(n_splits)
    Ycsr = _check_label_matrix(Y)
    n_samples, n_labels = Ycsr.shape
    if n_splits > n_samples:
        raise ValueError(
            f"Cannot have n_splits={n_splits} greater than the number of samples: "
            f"n_samples={n_samples}."
        )
    rng = check_random_state(random_state)
    k = n_splits

    perm = None
    if shuffle:
        perm = rng.permutation(n_samples)
        Ycsr = Ycsr[perm]
    Ycsc = Ycsr.tocsc()
    Ycsc.sort_indices()
    indptr, indices = Ycsr.indptr, Ycsr.indices

    remaining = np.bincount(Ycsr.indices, minlength=n_labels).astype(np.int64)
    # Desired counts times k: c_j * k = n, c_j^i * k = |D^i|, minus k per example.
    want_total = np.full(k, n_samples, dtype=np.int64)
    want_label = np.tile(remaining, (k, 1))
    folds = np.full(n_samples, -1, dtype=np.intp)
    assigned = np.zeros(n_samples, dtype=bool)

    while True:
        positive = remaining > 0
        if not positive.any():
            break
        fewest = remaining[positive].min()
        candidates = np.flatnonzero(remaining == fewest)
        label = candidates[rng.randint(candidates.size)] if candidates.size > 1 else candidates[0]

        rows = Ycsc.indices[Ycsc.indptr[label] : Ycsc.indptr[label + 1]]
        rows = rows[~assigned[rows]]
        chosen = _greedy_slots((want_label[:, label], want_total), rows.size, k, rng)
        folds[rows] = chosen
        assigned[rows] = True

        # The labels of the rows just placed, gathered straight from the CSR
        # arrays (scipy's row indexing costs more than the work per label).
        starts = indptr[rows]
        lengths = indptr[rows + 1] - starts
        offsets = np.cumsum(lengths) - lengths
        entries = np.repeat(starts - offsets, lengths) + np.arange(lengths.sum())
        cols = indices[entries]
        np.subtract.at(want_label, (np.repeat(chosen, lengths), cols), k)
        np.subtract.at(want_total, chosen, k)
        np.subtract.at(remaining, cols, 1)

    empty = np.flatnonzero(~assigned)
    if empty.size:
        folds[empty] = _greedy_slots((want_total,), empty.size, k, rng)

    if perm is not None:
        unshuffled = np.empty_like(folds)
        unshuffled[perm] = folds
        folds = unshuffled
    return folds


def _check_n_splits(n_splits: Any, name: str = "n_splits") -> int:
    if isinstance(n_splits, bool) or not isinstance(n_splits, numbers.Integral):
        raise TypeError(f"{name} must be an int; got {n_splits!r} of type {type(n_splits).__name__}.")
    if n_splits < 2:
        raise ValueError(f"{name} must be at least 2; got {name}={n_splits}.")
    return int(n_splits)


class MultilabelStratifiedKFold(BaseCrossValidator):
    """Multi-label stratified K-fold cross-validator (iterative stratification).

    Splits the samples into ``n_splits`` folds of (nearly) equal size such that
    the proportion of positive examples of every label is as equal across
    folds as the greedy algorithm of Sechidis et al. achieves. Each fold is
    used once as the test set.

    Parameters
    ----------
    n_splits : int, default=5
        Number of folds, at least 2.
    shuffle : bool, default=False
        Whether to visit the samples in a random order instead of row order.
    random_state : int, RandomState instance or None, default=None
        Seed for the random tie-breaks and the shuffle. Unlike
        :class:`sklearn.model_selection.StratifiedKFold` it is used even when
        ``shuffle=False``, since the algorithm breaks ties at random; pass an
        int for reproducible folds.

    See Also
    --------
    iterative_stratification : The fold assignment as an array.
    sklearn.model_selection.StratifiedKFold : The single-label counterpart.

    Notes
    -----
    Test folds partition the samples. The algorithm favours label balance
    over exact fold sizes: samples with no positive label are spread over the
    folds furthest below their desired size (which evens the sizes out when
    there are enough of them), but when every sample carries a label the
    sizes can differ by a few percent, as in the paper (its "ED" measure) and
    the ``iterative-stratification`` package. See
    :func:`iterative_stratification` for the algorithm.

    References
    ----------
    .. [1] K. Sechidis, G. Tsoumakas and I. Vlahavas, "On the Stratification
       of Multi-Label Data", ECML PKDD 2011, LNCS 6913, pp. 145-158.

    Examples
    --------
    >>> import numpy as np
    >>> from mlneighbors.model_selection import MultilabelStratifiedKFold
    >>> Y = np.array([[1, 0], [1, 0], [0, 1], [0, 1], [1, 1], [1, 1], [0, 0], [0, 0]])
    >>> cv = MultilabelStratifiedKFold(n_splits=2, random_state=0)
    >>> cv.get_n_splits()
    2
    >>> for train, test in cv.split(np.zeros((8, 1)), Y):
    ...     print(len(train), len(test), Y[test].sum(axis=0).tolist())
    4 4 [2, 2]
    4 4 [2, 2]
    """

    def __init__(
        self,
        n_splits: int = 5,
        *,
        shuffle: bool = False,
        random_state: int | np.random.RandomState | None = None,
    ) -> None:
        self.n_splits = n_splits
        self.shuffle = shuffle
        self.random_state = random_state

    def split(
        self, X: Any, y: Any = None, groups: Any = None
    ) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """Generate indices to split data into training and test sets.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or None
            Only its length is checked against ``y``; may be None.
        y : array-like or sparse matrix of shape (n_samples, n_labels)
            Binary label indicator matrix; stratification is done on it.
        groups : object
            Ignored, present for API compatibility.

        Yields
        ------
        train : ndarray of shape (n_train,), intp
            Training indices for that split, sorted.
        test : ndarray of shape (n_test,), intp
            Test indices for that split, sorted.
        """
        if y is None:
            raise ValueError(
                "MultilabelStratifiedKFold.split needs y, the (n_samples, n_labels) "
                "label indicator matrix; got y=None."
            )
        if X is not None:
            check_consistent_length(X, y)
        folds = iterative_stratification(
            y, self.n_splits, shuffle=self.shuffle, random_state=self.random_state
        )
        for j in range(self.n_splits):
            test = folds == j
            yield np.flatnonzero(~test), np.flatnonzero(test)

    def get_n_splits(self, X: Any = None, y: Any = None, groups: Any = None) -> int:
        """Return the number of splitting iterations, ``n_splits``.

        Parameters
        ----------
        X, y, groups : object
            Ignored, present for API compatibility.

        Returns
        -------
        n_splits : int
        """
        return _check_n_splits(self.n_splits)


# ---------------------------------------------------------------------------
# Cross-validation runner
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class CVResult:
    """Per-fold metric values and timings of :func:`cross_validate`.

    Attributes
    ----------
    per_fold : dict of str to ndarray of shape (n_folds,)
        Metric name -> value on each test fold, in fold order.
    fit_time : ndarray of shape (n_folds,)
        Seconds spent in ``fit`` per fold.
    predict_time : ndarray of shape (n_folds,)
        Seconds spent in ``predict`` and the score method per fold.
    test_indices : tuple of ndarray
        Test indices of each fold.
    predictions : ndarray of shape (n_samples, n_labels) or None
        Out-of-fold bipartitions (when ``return_predictions=True`` and
        ``predict`` was called).
    scores : ndarray of shape (n_samples, n_labels) or None
        Out-of-fold ranking scores (when ``return_predictions=True`` and scores
        were computed).
    """

    per_fold: dict[str, np.ndarray]
    fit_time: np.ndarray
    predict_time: np.ndarray
    test_indices: tuple[np.ndarray, ...] = field(repr=False)
    predictions: np.ndarray | None = field(default=None, repr=False)
    scores: np.ndarray | None = field(default=None, repr=False)

    @property
    def n_folds(self) -> int:
        """Number of folds."""
        return len(self.fit_time)

    @property
    def mean(self) -> dict[str, float]:
        """Metric name -> mean over folds."""
        return {name: float(np.mean(v)) for name, v in self.per_fold.items()}

    @property
    def std(self) -> dict[str, float]:
        """Metric name -> standard deviation over folds (``ddof=0``, like scikit-learn)."""
        return {name: float(np.std(v)) for name, v in self.per_fold.items()}

    def to_rows(self, *, per_fold: bool = False) -> list[dict[str, Any]]:
        """Rows for a table.

        Parameters
        ----------
        per_fold : bool, default=False
            If False, one row per metric with keys ``metric``, ``mean`` and
            ``std`` (fit and predict times appear as rows ``fit_time`` and
            ``predict_time``). If True, one row per fold with key ``fold``,
            one key per metric and the two times.

        Returns
        -------
        rows : list of dict
        """
        if per_fold:
            return [
                {
                    "fold": j,
                    **{name: float(v[j]) for name, v in self.per_fold.items()},
                    "fit_time": float(self.fit_time[j]),
                    "predict_time": float(self.predict_time[j]),
                }
                for j in range(self.n_folds)
            ]
        mean, std = self.mean, self.std
        rows = [{"metric": name, "mean": mean[name], "std": std[name]} for name in self.per_fold]
        for name, times in (("fit_time", self.fit_time), ("predict_time", self.predict_time)):
            rows.append({"metric": name, "mean": float(np.mean(times)), "std": float(np.std(times))})
        return rows


def _take_rows(A: Any, idx: np.ndarray) -> Any:
    if hasattr(A, "iloc"):
        return A.iloc[idx]
    return A[idx]


def _positive_column(proba: np.ndarray, classes: Any) -> np.ndarray:
    """Probability of the positive class from one label's (n, n_classes) array."""
    proba = np.asarray(proba)
    if proba.ndim == 1:
        return proba.astype(np.float64)
    if classes is not None:
        classes = np.asarray(classes)
        hit = np.flatnonzero(classes == 1)
        if hit.size:
            return proba[:, hit[0]].astype(np.float64)
        # The label took one value only in this training fold.
        constant = 1.0 if classes.size and bool(classes[0]) else 0.0
        return np.full(proba.shape[0], constant)
    if proba.shape[1] == 2:
        return proba[:, 1].astype(np.float64)
    raise ValueError(
        "predict_proba returned a per-label array of shape "
        f"{proba.shape} and the estimator has no classes_ to find the positive class."
    )


def _label_scores(estimator: Any, X: Any) -> np.ndarray:
    """(n, L) ranking scores from predict_proba, else decision_function."""
    if hasattr(estimator, "predict_proba"):
        proba = estimator.predict_proba(X)
        if isinstance(proba, list):
            classes = getattr(estimator, "classes_", None)
            if not isinstance(classes, list) or len(classes) != len(proba):
                classes = [None] * len(proba)
            return np.column_stack([_positive_column(p, c) for p, c in zip(proba, classes)])
        proba = proba.toarray() if sp.issparse(proba) else np.asarray(proba)
        return proba.astype(np.float64, copy=False)
    scores = estimator.decision_function(X)
    scores = scores.toarray() if sp.issparse(scores) else np.asarray(scores)
    return scores.astype(np.float64, copy=False)


def _fit_and_evaluate(
    estimator: Any,
    X: Any,
    Y: Any,
    train: np.ndarray,
    test: np.ndarray,
    metrics: list[str] | None,
    need_pred: bool,
    need_scores: bool,
) -> tuple[dict[str, float], float, float, Any, np.ndarray | None]:
    t0 = time.perf_counter()
    estimator.fit(_take_rows(X, train), _take_rows(Y, train))
    t1 = time.perf_counter()
    X_test = _take_rows(X, test)
    Y_pred = estimator.predict(X_test) if need_pred else None
    scores = _label_scores(estimator, X_test) if need_scores else None
    t2 = time.perf_counter()
    values = evaluate(_take_rows(Y, test), Y_pred, scores, metrics=metrics)
    return values, t1 - t0, t2 - t1, Y_pred, scores


def _resolve_splits(cv: Any, X: Any, Y: Any, random_state: Any) -> list[tuple[np.ndarray, np.ndarray]]:
    if isinstance(cv, bool):
        raise TypeError(f"cv must be an int, a splitter or an iterable of (train, test); got {cv!r}.")
    if isinstance(cv, numbers.Integral):
        if cv < 2:
            raise ValueError(f"cv must be at least 2 when an int; got cv={cv}.")
        splitter = MultilabelStratifiedKFold(n_splits=int(cv), shuffle=True, random_state=random_state)
        raw: Iterable[Any] = splitter.split(X, Y)
    elif hasattr(cv, "split"):
        raw = cv.split(X, Y)
    elif isinstance(cv, Iterable):
        raw = cv
    else:
        raise TypeError(
            "cv must be an int, a splitter with a split(X, y) method or an iterable "
            f"of (train, test) index arrays; got {type(cv).__name__}."
        )
    splits = []
    n = Y.shape[0]
    for pair in raw:
        train, test = (np.asarray(part) for part in pair)
        if train.dtype == bool:
            train = np.flatnonzero(train)
        if test.dtype == bool:
            test = np.flatnonzero(test)
        splits.append((train.astype(np.intp, copy=False), test.astype(np.intp, copy=False)))
        for part in splits[-1]:
            if part.size and (part.min() < 0 or part.max() >= n):
                raise ValueError(f"cv yielded indices outside [0, {n}) for {n} samples.")
    if len(splits) < 2:
        raise ValueError(f"cv must produce at least 2 splits; got {len(splits)}.")
    return splits


def _metric_kinds(metrics: Any) -> tuple[list[str] | None, bool, bool]:
    """Check metric names; tell whether predict and scores are needed (None: decided later)."""
    if metrics is None:
        return None, True, False
    names = [metrics] if isinstance(metrics, str) else list(metrics)
    if not names:
        raise ValueError("metrics must name at least one metric; got an empty list.")
    unknown = [name for name in names if name not in METRICS]
    if unknown:
        # Same message as evaluate's, but before any estimator is fitted.
        raise ValueError(f"unknown metric name(s) {unknown}; valid names are {sorted(METRICS)}")
    kinds = {METRICS[name].kind for name in names}
    need_pred = "bipartition" in kinds
    need_scores = "ranking" in kinds
    return names, need_pred, need_scores


def cross_validate(
    estimator: Any,
    X: Any,
    Y: Any,
    *,
    cv: int | BaseCrossValidator | Iterable[tuple[np.ndarray, np.ndarray]] = 10,
    metrics: str | Iterable[str] | None = None,
    random_state: int | np.random.RandomState | None = None,
    n_jobs: int | None = None,
    return_predictions: bool = False,
) -> CVResult:
    """Cross-validate a multi-label estimator and score every fold.

    Parameters
    ----------
    estimator : estimator object
        Any scikit-learn style multi-label estimator with ``fit(X, Y)`` and
        ``predict(X)``; ``predict_proba(X)`` (or ``decision_function(X)``)
        is needed only for ranking metrics. Cloned for every fold.
    X : array-like or sparse matrix of shape (n_samples, n_features)
        Features.
    Y : array-like or sparse matrix of shape (n_samples, n_labels)
        Binary label indicator matrix.
    cv : int, cross-validation splitter or iterable, default=10
        An int ``k`` means ``MultilabelStratifiedKFold(n_splits=k,
        shuffle=True, random_state=random_state)``; a splitter's
        ``split(X, Y)`` is used as is; an iterable yields (train, test) index
        arrays.
    metrics : str, iterable of str or None, default=None
        Names from :data:`mlneighbors.metrics.METRICS`. None computes every
        bipartition metric, plus every ranking metric when the estimator has
        ``predict_proba`` or ``decision_function``.
    random_state : int, RandomState instance or None, default=None
        Seed for the folds when ``cv`` is an int; ignored otherwise.
    n_jobs : int or None, default=None
        Number of folds fitted in parallel (joblib); None means 1.
    return_predictions : bool, default=False
        Also return out-of-fold predictions and scores. The test folds must
        then partition the samples.

    Returns
    -------
    result : CVResult
        Per-fold metric values with ``mean``, ``std`` and ``to_rows()``.

    Notes
    -----
    Ranking scores come from ``predict_proba``; a list of per-label
    ``(n, n_classes)`` arrays (as returned by
    :class:`sklearn.multioutput.MultiOutputClassifier` or
    :class:`sklearn.neighbors.KNeighborsClassifier`) is reduced to the
    probability of class 1 of each label. Without ``predict_proba``,
    ``decision_function`` is used. Scores are only computed when a ranking
    metric is requested, and ``predict`` only when a bipartition metric is.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.neighbors import KNeighborsClassifier
    >>> rng = np.random.RandomState(0)
    >>> X = rng.rand(60, 3)
    >>> Y = (X[:, :2] > 0.5).astype(int)
    >>> res = cross_validate(KNeighborsClassifier(3), X, Y, cv=3,
    ...                      metrics=["hamming_loss", "ranking_loss"], random_state=0)
    >>> res.per_fold["hamming_loss"].shape
    (3,)
    >>> sorted(res.mean)
    ['hamming_loss', 'ranking_loss']
    """
    if not hasattr(Y, "shape"):
        Y = np.asarray(Y)
    if Y.ndim != 2:
        raise ValueError(
            f"Y must be a 2-D label indicator matrix of shape (n_samples, n_labels); got shape {Y.shape}."
        )
    n_x = X.shape[0] if hasattr(X, "shape") else len(X)
    if n_x != Y.shape[0]:
        raise ValueError(f"X and Y have different numbers of samples: X has {n_x}, Y has {Y.shape[0]}.")
    X, Y = indexable(X, Y)

    names, need_pred, need_scores = _metric_kinds(metrics)
    if names is None:
        need_scores = hasattr(estimator, "predict_proba") or hasattr(estimator, "decision_function")
    elif need_scores and not (
        hasattr(estimator, "predict_proba") or hasattr(estimator, "decision_function")
    ):
        raise ValueError(
            f"metrics {names} include ranking metrics, which need scores, but "
            f"{type(estimator).__name__} has neither predict_proba nor decision_function."
        )
    need_pred = need_pred or return_predictions

    splits = _resolve_splits(cv, X, Y, random_state)
    if return_predictions:
        tests = np.concatenate([test for _, test in splits])
        if tests.size != Y.shape[0] or np.unique(tests).size != Y.shape[0]:
            raise ValueError(
                "return_predictions=True needs test folds that partition the samples "
                "(every sample in exactly one test fold)."
            )

    out = Parallel(n_jobs=n_jobs)(
        delayed(_fit_and_evaluate)(
            clone(estimator), X, Y, train, test, names, need_pred, need_scores
        )
        for train, test in splits
    )

    metric_names = list(out[0][0])
    per_fold = {name: np.array([fold[0][name] for fold in out], dtype=np.float64) for name in metric_names}
    fit_time = np.array([fold[1] for fold in out])
    predict_time = np.array([fold[2] for fold in out])
    test_indices = tuple(test for _, test in splits)

    predictions = oof_scores = None
    if return_predictions:
        n, n_labels = Y.shape
        for (_, test), (_, _, _, pred, score) in zip(splits, out):
            if pred is not None:
                pred = pred.toarray() if sp.issparse(pred) else np.asarray(pred)
                if predictions is None:
                    predictions = np.zeros((n, n_labels), dtype=pred.dtype)
                predictions[test] = pred
            if score is not None:
                if oof_scores is None:
                    oof_scores = np.zeros((n, n_labels), dtype=np.float64)
                oof_scores[test] = score
    return CVResult(
        per_fold=per_fold,
        fit_time=fit_time,
        predict_time=predict_time,
        test_indices=test_indices,
        predictions=predictions,
        scores=oof_scores,
    )
