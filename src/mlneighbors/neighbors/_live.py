"""Exact leave-one-out neighbour lists kept up to date as rows are added and removed.

A live model (``partial_fit``, ``forget``) keeps, for every training row, the ``depth``
nearest other rows in the order (reference distance, row number) that every exact backend
returns, with their distances (``_distance.Reference``: a function of the two rows alone, the
same whichever side is the query).  Two questions then make an update exact without a new
search of all rows:

- :func:`exact_lists`: the exact ``depth`` nearest other rows of some rows (new rows, or
  rows whose list a removal left too short), among all rows;
- :func:`entering_pairs`: for old rows and their current radius (the distance of their list's
  last entry), the new rows strictly closer than it.  A new row is numbered after every old
  row, so at an equal distance it stays behind: strict is the tie rule.

Both read a float64 product of one block of rows against another (the "tile") as an estimate
of every pair's squared distance (cosine: of the distance), with a rigorous bound on its
rounding error (standard model: a dot product of ``d`` terms is within ``gamma_d`` of the sum
of its terms' magnitudes), so that the pairs it cannot rule out are few; their reference
distances decide.  The tiles hold about the working memory (``working_memory``) at once.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import scipy.sparse as sp

from .._config import CACHE_BYTES, working_memory_bytes
from ._distance import Matrix, Reference, normalize_rows, row_norms_sq

__all__ = ["entering_pairs", "exact_lists", "merge_lists"]

# the unit roundoff of float64 and of float32
_U = 2.0**-53
_U32 = 2.0**-24
# from this many new rows on, the products of ``entering_pairs`` are float32 (dense rows)
_FLOAT32_ROWS = 32
# float64 values of a tile's temporaries per pair (the product, the estimate, the bound, masks)
_TILE_VALUES = 6


class _Rows:
    """Rows in the tile's form: float64 (dense) or CSR, normalised for cosine, with their
    squared norms (euclidean)."""

    def __init__(self, X: Matrix, metric: str) -> None:
        if metric not in ("euclidean", "cosine"):
            raise ValueError(f"live updates support the euclidean and cosine metrics, not {metric!r}")
        self.metric = metric
        self.sparse = sp.issparse(X)
        self.raw = X
        A = normalize_rows(X) if metric == "cosine" else X
        if not self.sparse:
            A = np.asarray(A, dtype=np.float64)
        self.A = A
        self.sq = row_norms_sq(X) if metric == "euclidean" else None
        self.n = X.shape[0]
        self.d = X.shape[1]

    def take(self, rows: slice | np.ndarray) -> _Rows:
        part = object.__new__(_Rows)
        part.metric, part.sparse, part.d = self.metric, self.sparse, self.d
        part.raw = self.raw[rows]
        part.A = self.A[rows]
        part.sq = None if self.sq is None else self.sq[rows]
        part.n = part.A.shape[0]
        return part


def _tile(Q: _Rows, X: _Rows) -> tuple[np.ndarray, np.ndarray, float]:
    """``(est, err, rel)``: the estimated squared distances (cosine: distances) of every pair
    of a row of ``Q`` and a row of ``X``, a bound on each estimate's error, and the relative
    error allowed on a threshold (the reference distance's own rounding)."""
    G = Q.A @ X.A.T
    if sp.issparse(G):
        G = G.toarray()
    G = np.asarray(G, dtype=np.float64)
    gamma = 4.0 * (Q.d + 16) * _U  # four times the standard bound: rounding of the bound itself, norms
    if Q.metric == "cosine":
        np.subtract(1.0, G, out=G)
        return G, np.full((1, 1), gamma * 2.0), gamma
    nq = np.sqrt(Q.sq)
    nx = np.sqrt(X.sq)
    err = np.add.outer(nq, nx)
    err *= err
    err *= gamma
    G *= -2.0
    G += Q.sq[:, None]
    G += X.sq[None, :]
    return G, err, gamma


def _open(est: np.ndarray, err: np.ndarray, rel: float, threshold: np.ndarray, metric: str) -> np.ndarray:
    """The pairs whose reference distance may be at most ``threshold`` (one per row of ``est``)."""
    t = threshold if metric == "cosine" else threshold * threshold
    t = t * (1.0 + rel) + (rel if metric == "cosine" else 0.0)
    return est - err <= t[:, None]


def _tiles(n_rows: int, n_cols: int, budget: int, values: int = _TILE_VALUES) -> Iterator[tuple[slice, slice]]:
    """Blocks of rows and columns whose tile (``values`` float64 numbers per pair) holds about
    ``budget`` bytes."""
    cols = max(1, min(n_cols, budget // (8 * values)))
    rows = max(1, budget // (8 * values * cols))
    for c in range(0, n_cols, cols):
        for r in range(0, n_rows, rows):
            yield slice(r, min(r + rows, n_rows)), slice(c, min(c + cols, n_cols))


def _ref_pairs(Q: _Rows, X: _Rows, rows: np.ndarray, cols: np.ndarray, budget: int) -> np.ndarray:
    """Reference distances between ``Q.raw[rows]`` and ``X.raw[cols]`` (pairwise)."""
    if len(rows) == 0:
        return np.empty(0)
    ref = Reference(X.raw, X.metric)
    return ref.pair_distances(ref.prepare(Q.raw), rows, cols, budget)


def _block_best(
    Q: _Rows, X: _Rows, est: np.ndarray, err: np.ndarray, rel: float, depth: int, budget: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every pair of the tile that may be among its row's ``depth`` nearest within the tile
    (excluded pairs hold ``inf`` in ``est``): ``(rows, cols, dist)``, exact distances."""
    m, b = est.shape
    kk = min(depth, b)
    first = np.argpartition(est, kk - 1, axis=1)[:, :kk] if kk < b else np.broadcast_to(np.arange(b), (m, b))
    rows = np.repeat(np.arange(m), kk)
    cols = np.asarray(first).ravel()
    finite = np.isfinite(est[rows, cols])
    d = np.full(len(rows), np.inf)
    d[finite] = _ref_pairs(Q, X, rows[finite], cols[finite], budget)
    bound = d.reshape(m, kk).max(axis=1)  # inf: fewer than depth rows left in the tile
    bound[~np.isfinite(bound)] = np.inf
    keep = _open(est, err, rel, bound, Q.metric) & np.isfinite(est)
    r, c = np.nonzero(keep)
    return r, c, _ref_pairs(Q, X, r, c, budget)


def merge_lists(
    dist: np.ndarray, idx: np.ndarray, lengths: np.ndarray, rows: np.ndarray, cols: np.ndarray, cand: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Lists ``(dist, idx)`` (one per row, ``inf``/``-1`` padded) merged with the candidates
    ``(rows, cols, cand)`` (row of the list, row number, distance): the first ``lengths[r]``
    of each row's union in the order (distance, row number).  A candidate already in its
    row's list must not be given again.

    The candidates are sorted among themselves (few), the best ``width`` of each row laid
    beside its list, and each row of the two sorted along its own axis (short rows)."""
    n, width = idx.shape
    rows = np.asarray(rows, dtype=np.intp)
    cols = np.asarray(cols, dtype=np.intp)
    cand = np.asarray(cand, dtype=np.float64)
    order = np.lexsort((cols, cand, rows))
    rows, cols, cand = rows[order], cols[order], cand[order]
    rank = np.arange(len(rows)) - np.searchsorted(rows, rows, side="left")
    keep = rank < width
    ext_d = np.full((n, 2 * width), np.inf)
    ext_i = np.full((n, 2 * width), np.iinfo(np.intp).max, dtype=np.intp)
    valid = idx >= 0
    ext_d[:, :width] = np.where(valid, dist, np.inf)
    ext_i[:, :width] = np.where(valid, idx, np.iinfo(np.intp).max)
    ext_d[rows[keep], width + rank[keep]] = cand[keep]
    ext_i[rows[keep], width + rank[keep]] = cols[keep]
    first = np.lexsort((ext_i, ext_d), axis=1)[:, :width]
    out_d = np.take_along_axis(ext_d, first, axis=1)
    out_i = np.take_along_axis(ext_i, first, axis=1)
    beyond = np.arange(width)[None, :] >= np.asarray(lengths)[:, None]
    out_d[beyond] = np.inf
    out_i[beyond | (out_i == np.iinfo(np.intp).max)] = -1
    return out_d, out_i


def exact_lists(
    X: Matrix, queries: np.ndarray, depth: int, metric: str, *, working_memory: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """The exact ``depth`` nearest other rows of the rows ``queries`` of ``X``.

    Parameters
    ----------
    X : ndarray or CSR matrix of shape (n_samples, n_features)
        All rows (validated).
    queries : ndarray of int
        The rows whose lists are wanted; each one's own row is left out (its duplicates stay).
    depth : int
        Entries per list, at most ``n_samples - 1``.
    metric : {"euclidean", "cosine"}
    working_memory : int, default=None
        MiB of a tile; None: the package's setting.

    Returns
    -------
    dist : ndarray of shape (len(queries), depth), float64
        Reference distances, ascending.
    idx : ndarray of shape (len(queries), depth), intp
        Row numbers; at equal distance the lower first: what ``loo_kneighbors`` returns from
        any exact backend.
    """
    queries = np.asarray(queries, dtype=np.intp)
    budget = working_memory_bytes(working_memory=working_memory)
    rows_all = _Rows(X, metric)
    Q = rows_all.take(queries)
    m, n = len(queries), rows_all.n
    found_r, found_c, found_d = [], [], []
    for rs, cs in _tiles(m, n, budget):
        Qb, Xb = Q.take(rs), rows_all.take(cs)
        est, err, rel = _tile(Qb, Xb)
        own = queries[rs] - cs.start
        inside = (own >= 0) & (own < est.shape[1])
        est[np.flatnonzero(inside), own[inside]] = np.inf
        r, c, d = _block_best(Qb, Xb, est, err, rel, depth, budget)
        found_r.append(r + rs.start)
        found_c.append(c + cs.start)
        found_d.append(d)
    empty_d = np.full((m, depth), np.inf)
    empty_i = np.full((m, depth), -1, dtype=np.intp)
    return merge_lists(empty_d, empty_i, np.full(m, depth), np.concatenate(found_r or [np.zeros(0, np.intp)]),
                       np.concatenate(found_c or [np.zeros(0, np.intp)]), np.concatenate(found_d or [np.zeros(0)]))


def entering_pairs(
    X_old: Matrix,
    radii: np.ndarray,
    X_new: Matrix,
    metric: str,
    *,
    sq_old: np.ndarray | None = None,
    floors: np.ndarray | None = None,
    working_memory: int | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The pairs (old row, new row) whose reference distance is strictly below the old row's
    radius: the new rows that enter an old row's list (numbered after every old row, a new
    row at the radius stays out).

    One product per tile and one comparison per pair: the estimate ``2 x.q - ||q||^2`` of a pair
    (euclidean; ``x_hat.q_hat`` for cosine) is compared with a threshold of its old row that
    holds the row's squared norm, radius and error bound (the bound taken at the largest norm of
    the tile's new rows); the pairs it leaves open are decided by their reference distances.

    Parameters
    ----------
    X_old : ndarray or CSR matrix of shape (n_old, n_features)
    radii : ndarray of shape (n_old,)
        Each old row's radius (``inf``: every new row enters).
    X_new : ndarray or CSR matrix of shape (n_new, n_features)
    metric : {"euclidean", "cosine"}
    sq_old : ndarray of shape (n_old,), default=None
        The old rows' squared norms (``row_norms_sq``), when known (euclidean).
    floors : ndarray of shape (n_new,), default=None
        Only the pairs whose old row's radius exceeds the new row's floor: the caller knows the
        others.  A new row's floor is the distance of the last of its exact nearest old rows (a
        pair outside them is at least that far, so it enters only an old row of larger radius);
        the pairs among them are the caller's to check.  Old rows are taken by radius, largest
        first, and new rows by floor, smallest first: each tile of old rows meets only the new
        rows whose floor is below its largest radius (about half of the pairs, where the new
        rows are like the old ones).
    working_memory : int, default=None
        MiB of a tile; None: the package's setting.

    Returns
    -------
    rows : ndarray of int
        Old row numbers.
    cols : ndarray of int
        New row numbers (0 for the first new row).
    dist : ndarray of float64
        Their reference distances.
    """
    if metric not in ("euclidean", "cosine"):
        raise ValueError(f"live updates support the euclidean and cosine metrics, not {metric!r}")
    budget = working_memory_bytes(working_memory=working_memory)
    radii = np.asarray(radii, dtype=np.float64)
    n_old, n_new, d = X_old.shape[0], X_new.shape[0], X_old.shape[1]
    cosine = metric == "cosine"
    # many new rows: float32 products (half the time of float64), their error bound accordingly
    single = not sp.issparse(X_old) and not sp.issparse(X_new) and n_new >= _FLOAT32_ROWS
    gamma = 4.0 * (d + 16) * (_U32 if single else _U)
    Qn = normalize_rows(X_new) if cosine else X_new
    if sp.issparse(Qn) and d * n_new * 8 > budget:
        Qt = Qn.T.tocsc()
    elif sp.issparse(Qn):  # sparse rows times dense new rows: one pass, a dense product
        Qt = Qn.T.toarray()
    else:
        Qt = np.asarray(Qn, dtype=np.float64).T
    if cosine:
        thr_all = 1.0 - (radii * (1.0 + gamma) + 3.0 * gamma)
    else:
        sq_old = row_norms_sq(X_old) if sq_old is None else sq_old
        sq_new = row_norms_sq(X_new)
        q_top = np.sqrt(sq_new.max(initial=0.0))
        err = gamma * (np.sqrt(sq_old) + q_top) ** 2
        thr_all = sq_old - (radii * radii) * (1.0 + gamma) - err
        # 2 q (exact) and, in float32, -||q||^2 as one more term of the product: no pass per tile
        Qt = Qt * 2.0
        if single:
            Qt = np.vstack([Qt, -sq_new[None, :]])
    if single:
        Qt = np.ascontiguousarray(Qt, dtype=np.float32)
    if floors is None:  # every pair
        order, q_order, q_floor = None, np.arange(n_new), np.full(n_new, -np.inf)
    else:  # old rows by radius, largest first; new rows by floor, smallest first: a staircase
        order = np.argsort(-radii, kind="stable")
        q_order = np.argsort(floors, kind="stable")
        q_floor = np.asarray(floors, dtype=np.float64)[q_order]
        Qt = Qt[:, q_order]
    out_r, out_c, out_d = [], [], []
    tile = min(budget, CACHE_BYTES["live_tile"])
    step = max(1, tile // (8 * max(1, n_new)))
    for a in range(0, n_old, step):
        rows = slice(a, min(a + step, n_old)) if order is None else order[a : a + step]
        top = radii[rows].max(initial=-np.inf)
        width_c = int(np.searchsorted(q_floor, top, side="left"))  # the new rows whose floor is below
        if width_c == 0:
            if order is not None:
                break  # the radii only shrink from here
            continue
        block = X_old[rows]
        if cosine:
            block = normalize_rows(block)
        if single:
            width = d if cosine else d + 1
            rows32 = np.empty((block.shape[0], width), dtype=np.float32)
            rows32[:, :d] = block
            if not cosine:
                rows32[:, d] = 1.0
            G = rows32 @ Qt[:, :width_c]
        else:
            G = block @ Qt[:, :width_c]
            if sp.issparse(G):
                G = G.toarray()
            G = np.asarray(G, dtype=np.float64)
            if not cosine:
                G -= sq_new[q_order[:width_c]][None, :]
        thr = thr_all[rows]
        hit = np.flatnonzero(G.max(axis=1) >= thr)  # a reduction: the rows with any pair open
        if len(hit) == 0:
            continue
        r, c = np.nonzero(G[hit] >= thr[hit][:, None])
        r = (hit[r] + a) if order is None else order[a + hit[r]]
        c = q_order[c]
        keep = radii[r] > (-np.inf if floors is None else floors[c])  # the others: the caller's
        r, c = r[keep], c[keep]
        d_rc = _pair_reference(X_old, X_new, r, c, metric, budget)
        inside = d_rc < radii[r]
        out_r.append(r[inside])
        out_c.append(c[inside])
        out_d.append(d_rc[inside])
    if not out_r:
        return np.zeros(0, np.intp), np.zeros(0, np.intp), np.zeros(0)
    return np.concatenate(out_r), np.concatenate(out_c), np.concatenate(out_d)


def _pair_reference(A: Matrix, B: Matrix, rows: np.ndarray, cols: np.ndarray, metric: str, budget: int) -> np.ndarray:
    """Reference distances of the pairs ``(A[rows[i]], B[cols[i]])``, from the rows involved only."""
    ua, ia = np.unique(rows, return_inverse=True)
    ub, ib = np.unique(cols, return_inverse=True)
    ref = Reference(A[ua], metric)
    return ref.pair_distances(ref.prepare(B[ub]), ib, ia, budget)
