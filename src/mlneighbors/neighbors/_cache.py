"""Search once for the largest k, serve every smaller k as a prefix."""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np
import scipy.sparse as sp

from ._backend_registry import resolve_backend
from ._capabilities import Capabilities, get_capabilities
from ._protocol import check_k

__all__ = ["NeighborCache", "fingerprint"]


def fingerprint(X: Any) -> str:
    """A content hash of a dense array or sparse matrix (shape, dtype and values)."""
    digest = hashlib.blake2b(digest_size=16)
    feed(digest, X)
    return digest.hexdigest()


def feed(digest: Any, X: Any, *, sort_indices: bool = False) -> None:
    """Update a ``hashlib`` digest with the content of a dense array or sparse matrix: its shape,
    and the dtype, shape and bytes of each array (CSR: data, indices, indptr). ``sort_indices``:
    a copy of CSR rows with their indices sorted, so that two orders of the same rows hash alike
    (without it nothing is copied)."""
    if sp.issparse(X):
        X = sp.csr_matrix(X, copy=sort_indices)
        if sort_indices:
            X.sort_indices()
        parts = [X.data, X.indices, X.indptr]
        digest.update(f"csr{X.shape}".encode())
    else:
        parts = [np.asarray(X)]
    for part in parts:
        part = np.ascontiguousarray(part)
        digest.update(f"{part.shape}{part.dtype.str}".encode())
        digest.update(part.view(np.uint8).ravel() if part.size else b"")


class _Store:
    """What every copy of one cache shares: built indexes and query results by content."""

    def __init__(self) -> None:
        self.indexes: dict[str, Any] = {}
        self.results: dict[tuple[str, str], tuple[np.ndarray, np.ndarray]] = {}
        self.searches = 0  # how many searches reached the wrapped index
        self.requests = 0  # how many were asked for (each a search of its own without the cache)

    def clear(self) -> None:
        self.indexes.clear()
        self.results.clear()
        self.searches = 0
        self.requests = 0


class NeighborCache:
    """An index that remembers: one search per (indexed data, queries), prefixes for smaller k.

    Wraps an unbuilt exact index (a registered name or an index object). ``build(X)``
    builds the wrapped index once per distinct content of ``X``; ``query(Q, k)`` runs the
    wrapped search once per distinct ``(X, Q)`` at the largest ``k`` asked so far (or
    ``k_max`` when given) and answers every smaller ``k`` with the first ``k`` columns,
    which is the exact result for ``k`` by the tie rule (ascending distance, then lower
    row number). That is what a sweep over ``k`` needs: ask for the largest ``k`` first
    (or set ``k_max``), and the other values cost no search.

    Copies share the store (an estimator copies its backend before building it), so one
    cache passed as ``backend=`` to many estimators serves them all. Only indexes that
    declare themselves prefix-safe are accepted (``Capabilities.prefix_safe``: the exact
    ones): an approximate result for ``k`` is not a prefix of the one for a larger ``k``.
    A search other than the global top-k (the label-restricted search of BKNN) uses the
    wrapped index (``wrapped``) itself.

    Parameters
    ----------
    index : str or index object, default="exact"
    metric : str, default="euclidean"
    k_max : int, default=None
        Search at least this many neighbours on a cache miss.
    **params
        Parameters of a registered index.

    Examples
    --------
    >>> import numpy as np
    >>> from mlneighbors.neighbors import NeighborCache
    >>> X = np.random.default_rng(0).normal(size=(40, 3))
    >>> cache = NeighborCache(k_max=10).build(X)
    >>> d10, i10 = cache.query(X[:5], 10)
    >>> d3, i3 = cache.query(X[:5], 3)
    >>> bool((i3 == i10[:, :3]).all()), cache.searches
    (True, 1)
    """

    def __init__(
        self, index: Any = "exact", *, metric: str = "euclidean", k_max: int | None = None, **params: Any
    ) -> None:
        self._template = resolve_backend(index, metric, params)
        wrapped = get_capabilities(self._template)
        if not wrapped.prefix_safe:
            raise ValueError(
                "NeighborCache serves smaller k as prefixes, which only a prefix-safe (exact) index allows; "
                f"got {type(self._template).__name__} (exact={wrapped.exact}, prefix_safe={wrapped.prefix_safe})"
            )
        self.metric = getattr(self._template, "metric", metric)
        self.k_max = k_max
        self._store = _Store()
        self._key: str | None = None

    @property
    def capabilities(self) -> Capabilities:
        """The wrapped index's, for the cache's one metric."""
        wrapped = get_capabilities(self._template)
        return Capabilities(exact=wrapped.exact, metrics=(self.metric,), sparse=wrapped.sparse, prefix_safe=True,
                            true_distances=wrapped.true_distances)

    @property
    def exact(self) -> bool:
        """Whether the wrapped index is exact."""
        return self.capabilities.exact

    @property
    def wrapped(self) -> Any:
        """The unbuilt index the cache wraps (a search other than the global top-k, such as
        :class:`~mlneighbors.neighbors.LabelRestrictedIndex`'s, builds and queries it directly)."""
        return self._template

    @property
    def name(self) -> str:
        """The name of the wrapped index."""
        return str(getattr(self._template, "name", type(self._template).__name__))

    @property
    def searches(self) -> int:
        """Searches that reached the wrapped index (cache misses)."""
        return self._store.searches

    @property
    def requests(self) -> int:
        """Searches asked for (``query`` calls), hits and misses: what separate searches would run."""
        return self._store.requests

    def clear(self) -> None:
        """Forget every built index and result (in every copy)."""
        self._store.clear()

    def __deepcopy__(self, memo: dict) -> NeighborCache:
        twin = object.__new__(NeighborCache)
        twin.__dict__.update(self.__dict__)  # the same store: copies share the cache
        return twin

    def __getstate__(self) -> dict:
        return self.__dict__

    def build(self, X: Any) -> NeighborCache:
        key = fingerprint(X)
        if key not in self._store.indexes:
            self._store.indexes[key] = resolve_backend(self._template, self.metric, None).build(X)
        self._key = key
        index = self._store.indexes[key]
        self.n_samples_fit_ = getattr(index, "n_samples_fit_", X.shape[0])
        self.n_features_in_ = getattr(index, "n_features_in_", X.shape[1])
        return self

    def query(self, Q: Any, k: int) -> tuple[np.ndarray, np.ndarray]:
        if self._key is None:
            raise ValueError("this NeighborCache is not built yet; call build(X) first")
        k = check_k(k, self.n_samples_fit_)  # before a cached result is sliced with it
        index = self._store.indexes[self._key]
        slot = (self._key, fingerprint(Q))
        self._store.requests += 1
        cached = self._store.results.get(slot)
        if cached is None or cached[1].shape[1] < k:
            want = max(k, self.k_max or 0)
            want = min(want, self.n_samples_fit_) if want > k else k
            cached = index.query(Q, want)
            self._store.results[slot] = cached
            self._store.searches += 1
        dist, idx = cached
        # copies: a caller that writes into its answer must not change what later queries get
        return dist[:, :k].copy(), idx[:, :k].copy()
