"""Splitting: iterative stratification of multi-label data (Sechidis, Tsoumakas & Vlahavas 2011).

:class:`MultilabelStratifiedKFold` follows scikit-learn's splitter protocol, so it can be
passed as ``cv=`` to :func:`sklearn.model_selection.cross_validate` or
:class:`sklearn.model_selection.GridSearchCV`.
"""

from __future__ import annotations

import numbers
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.model_selection import BaseCrossValidator
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_consistent_length

from .._docstrings import fill_doc

__all__ = ["MultilabelStratifiedKFold", "iterative_stratification"]


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


@fill_doc
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

    {sechidis_references}

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


@fill_doc
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

    {sechidis_references}

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
