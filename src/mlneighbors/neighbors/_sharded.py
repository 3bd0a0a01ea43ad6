"""Sharded search: one index per block of rows, per-shard top-k merged into the global top-k.

This is the shape of the distributed path (faiss ``contrib/exhaustive_search.py``): every
shard answers with its own k best, row numbers offset by the shard's first row, and a merge
keeps the k best of the union by (distance, row number).  For exact shards the merge equals
the unsharded exact result, ties included, because a reported distance depends only on the
two rows (see ``_distance``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.exceptions import NotFittedError

from ._capabilities import Capabilities, get_capabilities
from ._protocol import check_data, check_k, check_positive_int, check_result, unbuilt_copy

__all__ = ["ShardedIndex", "merge_kneighbors"]


def merge_kneighbors(dists: Sequence[np.ndarray], idxs: Sequence[np.ndarray], k: int) -> tuple[np.ndarray, np.ndarray]:
    """Merge per-shard neighbour lists into the k best by (distance, index).

    Parameters
    ----------
    dists, idxs : sequences of arrays of shape (n_queries, k_s)
        Per-shard distances and *global* indices (already offset), each row sorted or not.
    k : int
        Number of neighbours to keep; at most the total ``sum(k_s)``.

    Returns
    -------
    dist : ndarray of shape (n_queries, k), float64
    idx : ndarray of shape (n_queries, k), intp

    Examples
    --------
    >>> import numpy as np
    >>> from mlneighbors.neighbors import merge_kneighbors
    >>> dist, idx = merge_kneighbors([np.array([[0.5, 2.0]]), np.array([[0.5, 1.0]])],
    ...                              [np.array([[3, 1]]), np.array([[7, 9]])], k=3)
    >>> dist, idx
    (array([[0.5, 0.5, 1. ]]), array([[3, 7, 9]]))
    """

    D = np.concatenate([np.asarray(d, dtype=np.float64) for d in dists], axis=1)
    Ix = np.concatenate([np.asarray(i, dtype=np.intp) for i in idxs], axis=1)
    if k > D.shape[1]:
        raise ValueError(f"k={k} is larger than the number of merged candidates ({D.shape[1]})")
    order = np.lexsort((Ix, D), axis=1)[:, :k]
    return np.take_along_axis(D, order, axis=1), np.take_along_axis(Ix, order, axis=1)


class ShardedIndex(BaseEstimator):
    """Any index, split over ``n_shards`` contiguous blocks of rows.

    Parameters
    ----------
    index : object with ``build`` and ``query``
        Prototype; every shard gets an unbuilt copy (``sklearn.base.clone``, or a deep copy
        for objects that are not scikit-learn style).
    n_shards : int
        Number of shards: nearly equal contiguous blocks of rows (at most one per row).

    Attributes
    ----------
    shards_ : list
        The built per-shard indexes.
    offsets_ : ndarray of shape (n_shards_used + 1,)
        First row of every shard, and the total.
    n_samples_fit_, n_features_in_ : int

    Notes
    -----
    ``query`` asks every shard for ``min(k, shard size)`` neighbours and merges with
    :func:`merge_kneighbors`.  With exact shards the result equals the unsharded exact
    result, ties included.  Shards are queried one after another; each shard's own
    ``n_jobs`` decides its parallelism.

    Examples
    --------
    >>> import numpy as np
    >>> from mlneighbors.neighbors import ShardedIndex, get_index
    >>> X = np.random.default_rng(0).normal(size=(100, 5))
    >>> index = ShardedIndex(get_index("exact"), n_shards=4).build(X)
    >>> np.array_equal(index.query(X[:3], 5)[1], get_index("exact").build(X).query(X[:3], 5)[1])
    True
    """

    def __init__(self, index: Any, n_shards: int) -> None:
        self.index = index
        self.n_shards = n_shards

    @property
    def metric(self) -> str:
        return getattr(self.index, "metric", "euclidean")

    @property
    def capabilities(self) -> Capabilities:
        """The shards' index's: the merge by (distance, row) keeps exactness, the tie rule and
        the prefix property."""
        own = get_capabilities(self.index)
        return Capabilities(exact=own.exact, metrics=own.metrics, sparse=own.sparse, prefix_safe=own.prefix_safe,
                            true_distances=own.true_distances)

    @property
    def exact(self) -> bool:
        """Whether the shards' index is exact."""
        return self.capabilities.exact

    def build(self, X: Any) -> ShardedIndex:
        """Split the rows of ``X`` into shards and build one index per shard.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        self : ShardedIndex
        """
        check_positive_int(self.n_shards, "n_shards")
        if not (callable(getattr(self.index, "build", None)) and callable(getattr(self.index, "query", None))):
            raise TypeError(f"index must have build(X) and query(Q, k) methods, got {self.index!r}")
        X = check_data(X, name="X")
        n = X.shape[0]
        bounds = np.linspace(0, n, min(self.n_shards, n) + 1).round().astype(np.intp)
        bounds = np.unique(bounds)
        self.shards_ = [unbuilt_copy(self.index).build(X[a:b]) for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
        self.offsets_ = bounds
        self.n_samples_fit_ = n
        self.n_features_in_ = X.shape[1]
        return self

    def query(self, Q: Any, k: int) -> tuple[np.ndarray, np.ndarray]:
        """The k nearest indexed rows of every row of ``Q``: (dist, idx), as any index.

        Parameters
        ----------
        Q : {array-like, sparse matrix} of shape (n_queries, n_features)
        k : int

        Returns
        -------
        dist : ndarray of shape (n_queries, k)
        idx : ndarray of shape (n_queries, k)
        """
        if not hasattr(self, "shards_"):
            raise NotFittedError("This ShardedIndex is not built yet; call build(X) before query(Q, k).")
        k = check_k(k, self.n_samples_fit_)
        Q = check_data(Q, name="Q")
        if Q.shape[1] != self.n_features_in_:
            raise ValueError(
                f"Q has {Q.shape[1]} features, but the index was built on X with {self.n_features_in_} features"
            )
        dists, idxs = [], []
        for shard, start, stop in zip(self.shards_, self.offsets_[:-1], self.offsets_[1:], strict=True):
            kk = min(k, int(stop - start))
            d, i = check_result(*shard.query(Q, kk), Q.shape[0], kk, int(stop - start), shard)
            dists.append(d)
            idxs.append(i + start)
        return merge_kneighbors(dists, idxs, k)
