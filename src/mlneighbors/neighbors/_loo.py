"""Leave-one-out neighbours: the one place where a point's own row is excluded."""

from __future__ import annotations

from typing import Any

import numpy as np

from ._base import check_k

__all__ = ["loo_kneighbors"]


def loo_kneighbors(index: Any, X: Any, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The k nearest neighbours of every indexed row, its own row excluded.

    Asks the index for ``k + 1`` neighbours of the rows it was built on and removes each
    row's own index (scikit-learn's ``kneighbors(X=None)`` does the same).  Duplicates of a
    row are other rows and stay.  The order is the index's own (distance, then lower index),
    so the result for k is the prefix of the result for any larger k.  When the row itself
    is not among the ``k + 1`` returned (more than k duplicates with lower indices, or an
    approximate backend that missed it), the last of the ``k + 1`` is dropped instead.

    Every model calls this once per ``fit``; no backend and no model re-implements it.

    Parameters
    ----------
    index : built index (see :class:`~mlneighbors.neighbors.NeighborIndex`)
    X : array-like or CSR of shape (n_samples, n_features)
        The matrix the index was built on (its rows are the queries).
    k : int
        Number of neighbours, ``1 <= k <= n_samples - 1``.

    Returns
    -------
    dist : ndarray of shape (n_samples, k), float64
    idx : ndarray of shape (n_samples, k), intp

    Examples
    --------
    >>> import numpy as np
    >>> from mlneighbors.neighbors import ExactIndex, loo_kneighbors
    >>> X = np.array([[0.0], [0.0], [1.0], [3.0]])
    >>> dist, idx = loo_kneighbors(ExactIndex().build(X), X, k=2)
    >>> idx
    array([[1, 2],
           [0, 2],
           [0, 1],
           [2, 0]])
    """
    n = X.shape[0]
    n_fit = getattr(index, "n_samples_fit_", n)
    if n_fit != n:
        raise ValueError(f"X has {n} rows, but the index was built on {n_fit} rows")
    k = check_k(k, n)
    if k > n - 1:
        raise ValueError(f"leave-one-out needs k <= n_samples - 1 = {n - 1}, got k={k}")
    dist, idx = index.query(X, k + 1)
    dist = np.asarray(dist, dtype=np.float64)
    idx = np.asarray(idx, dtype=np.intp)
    if idx.shape != (n, k + 1) or dist.shape != (n, k + 1):
        raise ValueError(f"the index returned arrays of shape {idx.shape} and {dist.shape}, expected {(n, k + 1)}")
    drop = idx == np.arange(n)[:, None]
    n_self = drop.sum(axis=1)
    if np.any(n_self > 1):
        raise ValueError("the index returned a row more than once among its own neighbours")
    drop[n_self == 0, k] = True
    keep = ~drop
    return dist[keep].reshape(n, k), idx[keep].reshape(n, k)
