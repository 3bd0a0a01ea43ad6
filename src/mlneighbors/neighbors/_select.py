"""Vectorised top-k selection on a block of proxy values (numpy only).

The selection never sorts or partitions the whole block.  For a block ``P`` of shape
(b, n) it

1. takes the minimum over strided groups of ``g`` columns (:func:`group_minima`: g
   contiguous ``np.minimum`` passes), so the k-th smallest group minimum ``ub`` is an upper
   bound of the k-th smallest value of the row (k distinct entries are <= ``ub``);
2. keeps the entries ``P <= ub + slack``: through the groups whose minimum is below the
   threshold (:func:`group_survivors`, which reads only those groups again: on long rows a
   few hundred entries of each row), or, where that would gather much of the block (short
   rows, many ties), by one comparison and ``np.flatnonzero``;
3. sorts only those survivors (one 64-bit key, :func:`row_value_order`).

Measured on a 2-core AMD EPYC with AVX-512 (1,024 x 8,192 float32 block, per entry): the
group minima 0.27 ns (a reduction over the middle axis of the reshaped block: 0.75 ns),
the comparison 0.14 ns, ``np.flatnonzero`` 0.38 ns; the float32 GEMM that produces the block
costs about 2.1 ns per entry at d = 128 on one core.  So no compiled kernel is needed to keep
the selection off the critical path.  Which way of taking the group minima of long rows is the
faster depends on the machine's memory (on a 2-core AMD EPYC of the Zen 3 generation, AVX2, the
passes took 1.4 ns an entry and the reduction 0.8-0.9 ns): :data:`LONG_ROW_MINIMA` times both on
the first large blocks of a process and keeps the faster.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

#: bytes of temporaries per surviving entry (flat index, row, column, value, sort order)
SURVIVOR_BYTES = 48

#: the groups' path (:func:`group_survivors`) only where it gathers at most this share of the
#: block: each gathered value is a read at its own place in the row (strided groups), the
#: mask a pass at the speed of memory.  Measured on a 2-core AMD EPYC (AVX-512), leave-one-out
#: + queries, groups against the mask: random 20,000 x 128 rows (1.8 % gathered) 609 and
#: 628 ms; corel16k001 (7 %) 478 and 447, bibtex (11 %) 274 and 262, ohsumed (6 %) 551 and
#: 530, yahoo-science (10 %) 78 and 75 (a share of 1/8 let all of these through)
GROUP_SHARE = 1 / 32


def survivor_limit(P: np.ndarray, budget: int | None = None) -> int:
    """The most entries :func:`group_survivors` may gather from block ``P``: its share of the
    block (``GROUP_SHARE``), and what ``budget`` bytes of temporaries hold."""
    limit = int(P.size * GROUP_SHARE)
    return limit if budget is None else min(limit, budget // SURVIVOR_BYTES)


def mask_entries(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Row and column of the True entries of a 2-D ``mask``, in row-major order: what
    ``np.nonzero(mask)`` gives, from one ``np.flatnonzero`` (NumPy 2.4's ``nonzero`` of a
    2-D mask walks it with a multi-index: 6-7x as slow, 1.2 ms against 0.16 ms for the mask
    of a 1,024 x 8,192 block's group minima, 1,024 x 256, on a 2-core AMD EPYC, AVX2)."""
    return np.divmod(np.flatnonzero(mask), max(mask.shape[1], 1))


def _groups(n: int, k: int) -> int:
    """Columns per group of a row of ``n`` values: at least ~4k groups, so that the k-th
    smallest group minimum is close to the k-th value."""
    return max(1, min(32, n // (4 * k)))


class FasterOf:
    """Of two ways to compute the same array, the faster on this machine.

    The first blocks of at least ``min_entries`` entries that a process gives it go to each
    way in turn, timed, ``trials`` blocks each; from then on the way with the lower median time
    per entry runs.  Smaller blocks are never timed: they take the first way until the choice
    is made, then the chosen one.  The ways must give equal arrays: only the time differs.
    """

    def __init__(self, first: Callable[..., np.ndarray], second: Callable[..., np.ndarray],
                 min_entries: int = 1 << 20, trials: int = 3) -> None:
        self.ways = (first, second)
        self.min_entries = min_entries
        self.trials = trials
        self.times: tuple[list[float], list[float]] = ([], [])  # seconds per entry, by way
        self.chosen: int | None = None

    def __call__(self, P: np.ndarray, *args: Any) -> np.ndarray:
        if self.chosen is not None or P.size < self.min_entries:
            return self.ways[self.chosen or 0](P, *args)
        way = int(len(self.times[1]) < len(self.times[0]))  # the way timed fewer times
        start = time.perf_counter()
        out = self.ways[way](P, *args)
        self.record(way, (time.perf_counter() - start) / P.size)
        return out

    def record(self, way: int, seconds_per_entry: float) -> None:
        """One timing of ``way``; the choice once both ways have ``trials`` of them.  (Threads
        may time blocks at once: a list's append is atomic, and a choice made twice is the same.)"""
        self.times[way].append(seconds_per_entry)
        if self.chosen is None and min(len(t) for t in self.times) >= self.trials:
            self.chosen = int(np.median(self.times[1]) < np.median(self.times[0]))


def _minima_by_passes(P: np.ndarray, g: int, width: int, axis: int = 1) -> np.ndarray:
    # g contiguous np.minimum passes, each over one strip of width columns (rows, axis=0)
    part = (lambda j: P[j * width : (j + 1) * width]) if axis == 0 else (lambda j: P[:, j * width : (j + 1) * width])
    mins = part(0).copy()
    for j in range(1, g):
        np.minimum(mins, part(j), out=mins)
    return mins


def _minima_by_reduction(P: np.ndarray, g: int, width: int) -> np.ndarray:
    # one reduction over the middle axis of the (b, g, width) view: reads each row in order
    return np.minimum.reduce(P[:, : g * width].reshape(P.shape[0], g, width), axis=1)


#: groups of at least this many columns make a long row, whose group minima take the faster of
#: the two ways on this machine (:class:`FasterOf`); shorter rows take the passes.  On the Zen 3
#: neither way wins there: 40 columns a group, the passes took 0.5-0.7 ns an entry against the
#: reduction's 1.0-1.45 on blocks of 404 rows, and 1.8-2.1 against 1.43 on 1,196 rows straight
#: after their GEMM (1.06 against 1.41 in an earlier run); at most 0.5 ms of scene's 40 ms job
LONG_ROW_GROUPS = 64
LONG_ROW_MINIMA = FasterOf(_minima_by_passes, _minima_by_reduction)


def group_minima(P: np.ndarray, k: int, axis: int = 1) -> np.ndarray:
    """The minima of the strided column groups of every row of ``P``, shape (b, n // g).

    Group j holds the columns ``j, j + n // g, j + 2 (n // g), ...`` (g of them): rows that
    are close in the data (duplicates, sorted files) land in different groups.  Computed by
    g contiguous ``np.minimum`` passes, or on long rows by the faster on this machine of those
    and one reduction over the middle axis of the reshaped block (:data:`LONG_ROW_MINIMA`).
    ``axis=0``: the minima of the row groups of every column, shape (n // g, b), for a block
    stored transposed (its passes read contiguous rows).
    """
    n = P.shape[axis]
    g = _groups(n, k)
    if g == 1:
        return P
    width = n // g
    if axis == 1 and width >= LONG_ROW_GROUPS:
        return LONG_ROW_MINIMA(P, g, width)
    return _minima_by_passes(P, g, width, axis)


def kth_upper_bound(P: np.ndarray, k: int, mins: np.ndarray | None = None) -> np.ndarray:
    """An upper bound (float64) of the k-th smallest entry of every row of ``P``.

    The bound is the k-th smallest of the minima of ``n // g`` disjoint groups of columns
    (:func:`group_minima`, or ``mins`` when given); those k minima are k distinct entries, so
    at least k entries are <= the bound.
    """
    if mins is None:
        mins = group_minima(P, k)
    return np.partition(mins, k - 1, axis=1)[:, k - 1].astype(np.float64)


def group_survivors(
    P: np.ndarray, k: int, mins: np.ndarray, thr: np.ndarray, limit: int, own: bool = False
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """Row, column and value of the entries ``P <= thr`` (per row), in no particular order
    (:func:`sort_entries` orders them), found through the group minima: only the groups whose
    minimum is ``<= thr`` are read again, so the block is passed over once (by
    :func:`group_minima`) instead of by a comparison and a ``flatnonzero``.  None when more
    than ``limit`` entries would be gathered (ties of a large part of the row, or short rows:
    the caller takes the mask path).  ``own``: ``thr`` is at least the block's own k-th group
    minimum, so every row has k groups under it (short rows are declined before any work).
    """
    b, n = P.shape
    g = _groups(n, k)
    width = n // g
    if own and b * min(k, mins.shape[1]) * g > limit:
        return None
    gr, gj = mask_entries(mins <= thr[:, None])
    if len(gr) * g > limit:
        return None
    cols = gj[:, None] + width * np.arange(g)
    vals = np.take(P.reshape(-1), (gr * n)[:, None] + cols)  # one flat gather: fastest
    keep = vals <= thr[gr][:, None]
    rows = np.broadcast_to(gr[:, None], cols.shape)[keep]
    cols, vals = cols[keep], vals[keep]
    if width * g < n:  # the last n % g columns belong to no group
        tr, tc = mask_entries(P[:, width * g :] <= thr[:, None])
        rows = np.concatenate([rows, tr])
        cols = np.concatenate([cols, tc + width * g])
        vals = np.concatenate([vals, P[tr, tc + width * g]])
    return rows, cols, vals


def sort_entries(
    rows: np.ndarray, cols: np.ndarray, vals: np.ndarray, n: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Entries (row, column < n, value) in any order, sorted by (row, value, column)."""
    # (row, column) order first, so that the stable sort by (row, value) keeps ties in column order
    by_entry = np.argsort(rows.astype(np.int64) * n + cols)
    rows, cols, vals = rows[by_entry], cols[by_entry], vals[by_entry]
    order = row_value_order(rows, vals)
    return rows[order], cols[order], vals[order]


def round_up(x: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """``x`` (float64) cast to ``dtype``, rounded towards +inf so that comparisons keep every
    entry the float64 threshold keeps."""
    y = x.astype(dtype)
    low = y.astype(np.float64) < x
    if low.any():
        y[low] = np.nextafter(y[low], np.array(np.inf, dtype=dtype))
    return y


def survivor_chunks(mask: np.ndarray, budget: int) -> list[tuple[int, int]]:
    """Split the rows of ``mask`` so that each chunk's survivors fit in ``budget`` bytes."""
    b = mask.shape[0]
    total = np.count_nonzero(mask)
    if total * SURVIVOR_BYTES <= budget:
        return [(0, b)]
    counts = np.count_nonzero(mask, axis=1)
    csum = np.cumsum(counts)
    chunks = []
    a = 0
    while a < b:
        base = csum[a - 1] if a > 0 else 0
        e = int(np.searchsorted(csum, base + budget // SURVIVOR_BYTES, side="right"))
        e = max(e, a + 1)
        chunks.append((a, e))
        a = e
    return chunks


def survivors(mask: np.ndarray, P: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Row, column and value of the True entries of ``mask``, sorted by (row, value, column)."""
    n = P.shape[1]
    flat = np.flatnonzero(mask)
    rows = flat // n
    cols = flat - rows * n
    vals = P.reshape(-1)[flat]
    # flat indices come in (row, column) order and the sort is stable: ties keep column order
    order = row_value_order(rows, vals)
    return rows[order], cols[order], vals[order]


def row_value_order(rows: np.ndarray, vals: np.ndarray) -> np.ndarray:
    """The stable order of entries by (row, value): ``np.lexsort((vals, rows))``.

    Float32 values and rows below 2**31 are sorted as one 64-bit key (the row in the high
    half, the value's bits made order-preserving in the low half) by one stable argsort, ten
    times faster than ``lexsort`` on a few thousand entries; other values use ``lexsort``.
    """
    if vals.dtype != np.float32 or not len(rows) or rows.max() >= 2**31:
        return np.lexsort((vals, rows))
    bits = (vals + np.float32(0.0)).view(np.uint32)  # + 0: -0.0 becomes 0.0 (they compare equal)
    # negative values: every bit flipped (larger magnitude first); others: the sign bit set
    flip = (-(bits >> np.uint32(31)).astype(np.int32)).view(np.uint32) | np.uint32(0x80000000)
    key = rows.astype(np.int64) << 32
    key |= (bits ^ flip).astype(np.int64)
    return np.argsort(key, kind="stable")


def row_distance_order(rows: np.ndarray, dist: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """The order of entries by (row, distance, column): ``np.lexsort((cols, dist, rows))``.

    Distances by numpy's quicksort, then rows by a stable sort (a radix sort for fewer than
    2**16 rows); the runs of equal (row, distance) that remain (duplicate rows) are then put
    in column order, the few entries in them by ``lexsort``.
    """
    if not len(rows):
        return np.lexsort((cols, dist, rows))
    by_dist = np.argsort(dist)
    r = rows[by_dist]
    order = by_dist[np.argsort(r.astype(np.uint16) if r.max() < 2**16 else r, kind="stable")]
    rs, ds = rows[order], dist[order]
    same = (rs[1:] == rs[:-1]) & (ds[1:] == ds[:-1])
    if same.any():
        tied = np.zeros(len(order), dtype=bool)
        tied[1:] = same
        tied[:-1] |= same
        pos = np.flatnonzero(tied)
        run = np.cumsum(np.concatenate(([True], ~same)))[pos]  # one number per run of equal keys
        sub = order[pos]
        order[pos] = sub[np.lexsort((cols[sub], run))]
    return order


def row_starts(rows: np.ndarray, n_rows: int) -> np.ndarray:
    """Start offsets (length n_rows + 1) of each row's run in an array sorted by row."""
    starts = np.zeros(n_rows + 1, dtype=np.intp)
    np.cumsum(np.bincount(rows, minlength=n_rows), out=starts[1:])
    return starts


def first_k(starts: np.ndarray, k: int) -> np.ndarray:
    """Positions (n_rows, k) of the first k entries of every row's run."""
    return starts[:-1, None] + np.arange(k)
