"""The float64 reference distances that every index reports.

Every backend, exact or approximate, finds candidate neighbours its own way and then asks
:class:`Reference` for the distances it returns.  A distance is a deterministic function of
the two rows alone (never of block sizes, shards or the position of a row in a batch), so
equal rows give bit-identical distances and the tie rule "lower index first" is applied to
the very numbers that are returned.

Definitions (float64 throughout):

- ``euclidean``: dense ``sqrt(sum((x - q) ** 2))`` (numpy's row sum); sparse: the same sum
  over the stored entries of ``x - q``, accumulated in column order.
- ``cosine``: ``1 - sum(x_hat * q_hat)`` clipped to [0, 2], where ``x_hat = x / ||x||`` and a
  zero row stays zero (so its distance to anything is 1, as in scikit-learn).
- ``manhattan``: ``sum(abs(x - q))``, dense numpy row sum / sparse sum in column order.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import scipy.sparse as sp

from .._config import CACHE_BYTES
from ..exceptions import DataScaleWarning

Matrix = np.ndarray | sp.csr_matrix

# small chunks of pairs: their temporaries stay in cache and are recycled by the allocator
_PAIR_CHUNK_BYTES = CACHE_BYTES["pair_chunk"]


def row_norms_sq(X: Matrix, center: np.ndarray | None = None) -> np.ndarray:
    """Squared row norms in float64 (dense: numpy row sum; sparse: sum in column order).
    Float32 rows are summed in float64: the numbers of their float64 copy.  ``center``
    (dense rows only): the norms of ``X - center``, the difference rounded in float64."""
    if sp.issparse(X):
        rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
        return np.bincount(rows, weights=X.data * X.data, minlength=X.shape[0])
    # slices of rows whose temporaries stay in the cache (each row's sum is the same)
    out = np.empty(X.shape[0])
    step = max(1, _PAIR_CHUNK_BYTES // (8 * max(1, X.shape[1])))
    for a in range(0, X.shape[0], step):
        if center is None:
            part = X[a : a + step].astype(np.float64, copy=False)
            out[a : a + step] = (part * part).sum(axis=1)
        else:  # one temporary, squared in place
            part = X[a : a + step] - center
            part *= part
            out[a : a + step] = part.sum(axis=1)
    return out


def normalize_rows(X: Matrix) -> Matrix:
    """Rows divided by their L2 norm; zero rows stay zero."""
    norms = np.sqrt(row_norms_sq(X))
    norms[norms == 0] = 1.0
    if sp.issparse(X):
        X = X.copy()
        X.data /= np.repeat(norms, np.diff(X.indptr))
        return X
    return X / norms[:, None]


class Reference:
    """Float64 data and the exact pair distances computed from it.

    Parameters
    ----------
    X : ndarray or csr_matrix of shape (n_samples, n_features), float64
        Validated data (see ``check_data``); dense float32 rows are kept as they are and
        every distance is computed from their float64 values.
    metric : {"euclidean", "cosine", "manhattan"}
    """

    def __init__(self, X: Matrix, metric: str) -> None:
        self.metric = metric
        self.sparse = sp.issparse(X)
        self.X = normalize_rows(X) if metric == "cosine" else X
        self.n_samples, self.n_features = X.shape
        if self.sparse:
            self._row_nnz = np.diff(self.X.indptr)

    def prepare(self, Q: Matrix) -> Matrix:
        """Queries in the form the pair distances use: X's storage format, normalised for cosine."""
        if self.sparse and not sp.issparse(Q):
            Q = sp.csr_matrix(Q)
        elif not self.sparse and sp.issparse(Q):
            Q = Q.toarray()
        return normalize_rows(Q) if self.metric == "cosine" else Q

    def pair_distances(self, Qp: Matrix, rows: np.ndarray, cols: np.ndarray, budget: int) -> np.ndarray:
        """Distances between ``Qp[rows[i]]`` and ``X[cols[i]]`` for every i, float64.

        Work is done in chunks of pairs whose temporaries fit in ``budget`` bytes.
        """
        n_pairs = len(rows)
        out = np.empty(n_pairs, dtype=np.float64)
        if n_pairs == 0:
            return out
        if not self.sparse and n_pairs > self.n_samples // 2:  # perhaps a zero query: all its rows tie
            hit = ~Qp.any(axis=1)[rows]
            if hit.any():
                out[hit] = self.from_origin(budget)[cols[hit]]
                rest = np.flatnonzero(~hit)
                out[rest] = self.pair_distances(Qp, rows[rest], cols[rest], budget)
                return out
        # small chunks: their temporaries stay in cache and are recycled by the allocator
        # (large fresh arrays are page-faulted in every time, slow in a virtual machine)
        budget = min(budget, _PAIR_CHUNK_BYTES)
        if self.sparse:
            q_nnz = np.diff(Qp.indptr)
            # scipy's fancy indexing, the difference and the row sums all hold ~3 copies
            pair_bytes = 3 * 12 * (self._row_nnz[cols] + q_nnz[rows]) + 64
            bounds = _chunk_bounds(pair_bytes, budget)
        else:
            step = max(1, budget // (2 * 8 * max(1, self.n_features) + 64))
            bounds = range(0, n_pairs + step, step)
        starts = list(bounds)
        for a, b in zip(starts[:-1], starts[1:], strict=True):
            if a >= n_pairs:
                break
            b = min(b, n_pairs)
            out[a:b] = self._pairs(Qp, rows[a:b], cols[a:b])
        return out

    def from_origin(self, budget: int) -> np.ndarray:
        """The distance of every indexed row to the zero query (dense rows), computed once.

        A zero query is at the same distance from every row of the same norm (normalised
        text: from every row), so the proxy's bounds leave all of them open: this answers
        them by a look-up.  The numbers are :meth:`_dense`'s for that pair, bit for bit (the
        same operations on rows of the same layout)."""
        if getattr(self, "_origin", None) is None:
            n, d = self.n_samples, self.n_features
            origin = np.empty(n)
            zero = np.zeros(d)
            step = max(1, min(budget, _PAIR_CHUNK_BYTES) // (8 * max(1, d)))
            for a in range(0, n, step):
                origin[a : a + step] = self._dense(np.array(self.X[a : a + step], dtype=np.float64), zero)
            self._origin = origin
        return self._origin

    def grid_distances(self, Qp: Matrix, cols: np.ndarray, budget: int) -> np.ndarray:
        """Distances between ``Qp[i]`` and ``X[cols[i, j]]``: an array like ``cols`` (b, m).

        Dense data broadcast each query row over its m rows of X instead of gathering it m
        times (the same numbers as ``pair_distances``, bit for bit).
        """
        b, m = cols.shape
        if self.sparse or m == 0:
            rows = np.repeat(np.arange(b), m)
            return self.pair_distances(Qp, rows, cols.ravel(), budget).reshape(b, m)
        out = np.empty((b, m), dtype=np.float64)
        step = max(1, min(budget, _PAIR_CHUNK_BYTES) // (8 * m * max(1, self.n_features) + 64))
        for a in range(0, b, step):
            G = self.X[cols[a : a + step]]  # (rows, m, d)
            out[a : a + step] = self._dense(G, Qp[a : a + step, None, :])
        return out

    def _dense(self, G: np.ndarray, Qb: np.ndarray) -> np.ndarray:
        """Reduce gathered rows ``G`` of X against (broadcast) query rows ``Qb``, in place:
        the definitions of the module docstring, summed along the last axis (float32 rows
        are taken to float64 first: the same numbers as from their float64 copy)."""
        if G.dtype != np.float64:
            G = G.astype(np.float64)
        if self.metric == "cosine":
            G *= Qb
            return np.clip(1.0 - G.sum(axis=-1), 0.0, 2.0)
        G -= Qb
        if self.metric == "manhattan":
            np.abs(G, out=G)
            return G.sum(axis=-1)
        G *= G
        return np.sqrt(G.sum(axis=-1))

    def _pairs(self, Qp: Matrix, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        X = self.X
        if not self.sparse:
            return self._dense(X[cols], Qp[rows])
        if self.metric == "manhattan":
            diff = X[cols] - Qp[rows]
            return _sparse_row_sums(abs(diff))
        if self.metric == "cosine":
            prod = X[cols].multiply(Qp[rows]).tocsr()
            return np.clip(1.0 - _sparse_row_sums(prod), 0.0, 2.0)
        diff = (X[cols] - Qp[rows]).tocsr()
        diff.data *= diff.data
        return np.sqrt(_sparse_row_sums(diff))

    def brute_force(self, Qp: Matrix, k: int, budget: int) -> tuple[np.ndarray, np.ndarray]:
        """Exact k nearest neighbours of every row of ``Qp`` from pair distances alone.

        Slow (every pair, O(n_features) each) and used only to repair the rows an
        approximate library could not answer (``-1`` padding, duplicates).
        """
        n = self.n_samples
        nq = Qp.shape[0]
        dist = np.empty((nq, k))
        idx = np.empty((nq, k), dtype=np.intp)
        cols_all = np.arange(n)
        step = max(1, budget // (48 * n))
        for a in range(0, nq, step):
            b = min(a + step, nq)
            rows = np.repeat(np.arange(a, b), n)
            cols = np.tile(cols_all, b - a)
            d = self.pair_distances(Qp, rows, cols, budget).reshape(b - a, n)
            order = np.lexsort((np.broadcast_to(cols_all, d.shape), d), axis=1)[:, :k]
            dist[a:b] = np.take_along_axis(d, order, axis=1)
            idx[a:b] = order
        return dist, idx


#: beyond this magnitude squared distances overflow float64 (2**1000 is near its maximum)
_TOO_LARGE = 2.0**500
#: below this largest magnitude every squared difference is below float64's smallest normal
#: number (2**-1022): distances underflow to 0 or to denormals, and every neighbour ties
_TOO_SMALL = 2.0**-512


def finite_top(A: np.ndarray) -> float | None:
    """The largest magnitude of a dense array, or None when a value is NaN or infinite (its
    extremes say both: a fast finiteness check that also gives :func:`check_scale` its input)."""
    hi, lo = float(A.max()), float(A.min())
    return max(hi, -lo) if math.isfinite(hi) and math.isfinite(lo) else None


def check_scale(A: Matrix, name: str, *, top: float | None = None) -> None:
    """The one check of the data's scale that every neighbour search relies on.

    Raises ``ValueError`` when a value's magnitude exceeds ``2**500`` (about ``3e150``):
    squared distances would overflow.  Warns (:class:`~mlneighbors.exceptions.DataScaleWarning`)
    when the largest magnitude is below ``2**-512`` (about ``7e-155``) but not 0: squared
    distances underflow and every neighbour ties at distance 0.  Both say how to fix it.

    Parameters
    ----------
    A : {ndarray, sparse matrix}
        The data.
    name : str
        Its name in the messages.
    top : float, default=None
        The largest magnitude of the data when the caller has it already (None: computed).

    Returns
    -------
    None

    Examples
    --------
    >>> import numpy as np
    >>> from mlneighbors.neighbors import check_scale
    >>> check_scale(np.array([[1.0, 2.0]]), "X")
    >>> check_scale(np.array([[1e200]]), "X")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: X has values of magnitude above 2**500 (~3e150): squared distances would overflow ...
    """

    data = A.data if sp.issparse(A) else A
    if not data.size:
        return
    if top is None:
        top = max(float(data.max()), -float(data.min()))
    if top > _TOO_LARGE:
        raise ValueError(
            f"{name} has values of magnitude above 2**500 (~3e150): squared distances would "
            "overflow float64; rescale the data"
        )
    if 0.0 < top < _TOO_SMALL:
        warnings.warn(
            f"{name}'s largest magnitude is {top:.3g}: squared distances underflow float64 and every "
            "neighbour ties at distance 0; rescale the features (e.g. sklearn's MinMaxScaler or "
            "StandardScaler)",
            DataScaleWarning,
            stacklevel=3,
        )


def _sparse_row_sums(M: sp.csr_matrix) -> np.ndarray:
    """Row sums of a CSR matrix, each accumulated in storage (column) order."""
    M = M.tocsr()
    rows = np.repeat(np.arange(M.shape[0]), np.diff(M.indptr))
    return np.bincount(rows, weights=M.data, minlength=M.shape[0])


def _chunk_bounds(item_bytes: np.ndarray, budget: int) -> list[int]:
    """Split a sequence of items into consecutive chunks of at most ``budget`` bytes each
    (a chunk holds at least one item)."""
    csum = np.cumsum(item_bytes)
    bounds = [0]
    total = len(item_bytes)
    while bounds[-1] < total:
        a = bounds[-1]
        base = csum[a - 1] if a > 0 else 0
        b = int(np.searchsorted(csum, base + budget, side="right"))
        bounds.append(max(b, a + 1))
    return bounds
