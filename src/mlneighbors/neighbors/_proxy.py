"""The float proxy of the exact engines and its rigorous rounding-error bounds (numpy only).

Both exact engines (:class:`~mlneighbors.neighbors.ExactIndex` on the CPU and
:class:`~mlneighbors.neighbors.TorchIndex` on a torch device) rank the indexed rows of a
query by a proxy from one GEMM, ``p = ||x||^2 - 2 q.x`` (euclidean; ``||q||^2`` is constant per
query) or ``p = -2 q_hat.x_hat`` (cosine), computed in float32, and re-rank the rows that the
rounding error of the proxy cannot exclude with the float64 reference distances
(``_distance``).  This module holds what they share:

- :class:`ProxyModel`: the constants of one indexed data set (precision, power-of-two scale,
  largest norm, whether the proxy is exact on integer data) and, per block of queries, the
  error bounds (:class:`Bounds`);
- :func:`rerank`: from candidate entries of a proxy block (every entry up to a known
  threshold), the first k rows by (reference distance, row number).

The bound (standard floating-point model, ``u`` the unit roundoff, any summation order):
``|p~ - p| <= (m + 16) u (||x||^2 + 2 ||q|| ||x||)``, plus the rounding of the float64
reference distances themselves, where ``m`` is the number of terms of the sum that are not
exact zeros: at most d + 1, and at most the query's non-zero values + 1 (a product with a zero
factor is an exact zero, and adding it rounds nothing: the sum of the other terms is what
any order of summation rounds, as if the zeros were not there; text rows of 60 non-zero
values among 743 columns get a bound 12 times tighter).  It holds for any GEMM that rounds
to nearest in the proxy's precision (a BLAS, cuBLAS without TF32, a sparse product).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse as sp

from ._distance import Matrix, Reference, row_norms_sq
from ._select import first_k, row_distance_order, row_starts

__all__ = ["Bounds", "ProxyModel", "QueryTerms", "rerank"]

U = {np.dtype(np.float32): 2.0**-24, np.dtype(np.float64): 2.0**-53}
EXACT_INT = {np.dtype(np.float32): 2.0**24, np.dtype(np.float64): 2.0**53}


#: values checked at once by :func:`is_integral` (their temporaries stay in the cache)
_INTEGRAL_CHUNK = 1 << 15


def is_integral(X: Matrix) -> bool:
    """Whether every stored value is an integer (continuous data answer after one row)."""
    data = X.data if sp.issparse(X) else X
    head = data.ravel()[:256] if data.flags.c_contiguous or data.ndim == 1 else data[:1]
    if not np.all(head == np.rint(head)):
        return False
    if not (data.ndim == 1 or data.flags.c_contiguous):
        return bool(np.all(data == np.rint(data)))
    flat = data.reshape(-1)
    for a in range(0, flat.size, _INTEGRAL_CHUNK):
        part = flat[a : a + _INTEGRAL_CHUNK]
        if not np.all(part == np.rint(part)):
            return False
    return True


#: rows of the indexed data that :func:`_center_of` looks at, at most
_CENTER_SAMPLE = 256


def _center_of(X: np.ndarray, sq: np.ndarray, integral: bool) -> np.ndarray | None:
    """A point near the middle of dense rows ``X`` (the mean of a strided sample of rows;
    floored on integer data, so that shifted integers stay integers) when the rows are much
    nearer to it than to the origin, else None.

    Distances do not change when every row and query is shifted by the same point, but the
    proxy's rounding error grows with the norms (``||x||^2 + 2 ||q|| ||x||``): features that
    all sit far from zero (emotions' rhythm and timbre statistics: median norm 181, 26 around
    their mean, neighbours at distance 7) leave most near neighbours inside the bound of one
    another, to be settled by reference distances.  A column that is zero in every row gets
    0 (the GEMM leaves such columns out, ``ExactIndex._support``).  ``sq``: the squared row
    norms (the mean squared norm around the center follows from theirs, no second pass)."""
    mean = X[:: max(1, X.shape[0] // _CENTER_SAMPLE)].mean(axis=0, dtype=np.float64)
    center = np.floor(mean) if integral else mean
    raw = float(sq.mean())
    around = raw - 2 * float(center @ mean) + float(center @ center)
    # half the typical norm: a quarter of the typical proxy error, or not worth the shift
    return center if around < raw / 4 else None


#: the largest scale: its square (the scale of squared norms) stays a finite float64
_MAX_SCALE = 2.0**500


def _scale_of(max_norm: float) -> float:
    """A power of two bringing ``max_norm`` into (1/2, 1], at most ``_MAX_SCALE``: exact, so it
    changes no ranking.  (Rows below 2**-500, which ``check_scale`` warns of, stay smaller: a
    scale of 2**517 made the squared norms infinite and the search fail.)"""
    if max_norm == 0.0 or not math.isfinite(max_norm):
        return 1.0
    return min(2.0 ** (-math.ceil(math.log2(max_norm))), _MAX_SCALE)


def _nonzero_bytes(part: np.ndarray) -> np.ndarray:
    """1 where ``part`` is not zero, else 0, as bytes: their sums count the values that are not
    zero 1.6-2.5x as fast as ``count_nonzero`` along an axis."""
    return np.not_equal(part, 0).view(np.uint8)


def row_nonzeros(X: Matrix) -> np.ndarray:
    """The values of each row that are not zero (sparse: stored): at most the terms of the
    row's products in a GEMM that are not exact zeros."""
    if sp.issparse(X):
        return np.diff(X.indptr)
    # sums into the narrowest integer that holds d; masks of 128 KiB, which stay in the cache
    out = np.empty(X.shape[0], dtype=np.uint16 if X.shape[1] < 2**16 else np.int64)
    step = max(1, (1 << 17) // max(1, X.shape[1]))
    for a in range(0, X.shape[0], step):
        np.add.reduce(_nonzero_bytes(X[a : a + step]), axis=1, dtype=out.dtype, out=out[a : a + step])
    return out


def column_nonzeros(
    X: Matrix, step: int, rows: Callable[[Callable[[int, int], Any]], list[Any]] | None = None
) -> np.ndarray:
    """The values of each column that are not zero (sparse: stored); dense rows are read in
    slices of ``step`` rows, in the caller's shares of them (``rows``, as :class:`ProxyModel`)."""
    d = X.shape[1]
    if sp.issparse(X):
        return np.bincount(X.indices, minlength=d)

    def share(a0: int, b0: int) -> np.ndarray:
        counts = np.zeros(d, dtype=np.int64)
        for a in range(a0, b0, step):
            counts += np.add.reduce(_nonzero_bytes(X[a : min(a + step, b0)]), axis=0, dtype=np.int32)
        return counts

    return np.sum((rows or (lambda fn: [fn(0, X.shape[0])]))(share), axis=0)


def gemm_dtype(precision: str, n_features: int) -> np.dtype:
    """The proxy's precision: ``precision``, but float64 where the float32 error bound would be
    useless (more than about 260,000 features)."""
    dtype = np.dtype(precision)
    if dtype == np.float32 and (n_features + 17) * U[dtype] > 1 / 64:
        return np.dtype(np.float64)
    return dtype


class QueryTerms:
    """Per-query quantities of a block: squared norms and norms (scaled units), the block's
    largest norm, the power-of-four factor ``w`` applied to the block (1 unless a query is
    so large that float32 products could overflow) and, where the GEMM sees the queries'
    zeros as zeros (not shifted), their values that are not zero (else None)."""

    def __init__(self, qsq: np.ndarray, qnorm: np.ndarray, top: float, w: float, nnz: np.ndarray | None = None) -> None:
        self.qsq = qsq
        self.qnorm = qnorm
        self.top = top
        self.w = w
        self.nnz = nnz


class ProxyModel:
    """The proxy of one indexed data set (euclidean or cosine): precision, scale and bounds.

    Parameters
    ----------
    X : ndarray or csr_matrix of shape (n_samples, n_features), float64
        The validated indexed data.
    ref : Reference
        Its reference distances (cosine: ``ref.X`` holds the normalised rows).
    precision : {"float32", "float64"}
        Requested precision of the GEMM; float64 is used where the float32 bound would be
        useless (more than about 260,000 features).
    shift : bool, default=False
        Euclidean dense rows only: let the proxy work on the rows and queries shifted by a
        point near the middle of the data (``center``), where that makes the norms much
        smaller (:func:`_center_of`); the caller multiplies ``scaled_rows`` and queries
        through :meth:`shifted`.
    rows : callable, default=None
        Runs a pass over the rows in shares (``ExactIndex``'s ``row_shares`` of ``_threads``); None: at once.
    stored : csr_matrix, default=None
        Dense ``X`` as CSR (float64; cosine: ``ref.X``'s), when the caller has it: the passes
        over the rows read its stored values (the center, if any, is still taken from ``X``).

    Attributes
    ----------
    dtype : numpy dtype of the GEMM.
    scale : float
        Power of two applied to the euclidean data (largest norm into (1/2, 1]); 1 when the
        proxy is exact (integer data) and for cosine.
    max_norm : float
        Largest row norm, scaled.
    integral : bool
        Euclidean integer data small enough that the proxy of integer queries is exact.
    center : ndarray of shape (n_features,) or None
        The point subtracted from rows and queries before the GEMM (``shift``), or None.
        The norms above are those of the shifted rows.
    row_sq : ndarray of shape (n_samples,) or None
        Squared row norms, scaled (the extra column of the euclidean GEMM).
    row_nnz : ndarray of shape (n_samples,) or None
        The values of each row that are not zero (:func:`row_nonzeros`), for the bounds of
        the indexed rows as queries; None where they count every column or are not needed
        (integer data, cosine, rows shifted: the GEMM sees ``x - c``).
    extra : int
        1 for euclidean (the GEMM carries the squared norm as one more column), else 0.
    """

    def __init__(
        self, X: Matrix, ref: Reference, precision: str, *, shift: bool = False,
        rows: Callable[[Callable[[int, int], Any]], list[Any]] | None = None, stored: sp.csr_matrix | None = None
    ) -> None:
        d = X.shape[1]
        # each pass over the rows: in the caller's shares of them (``rows``), the same numbers;
        # over the stored values of dense rows where the caller has them (``stored``, float64)
        shares = rows or (lambda fn: [fn(0, X.shape[0])])
        src = X if stored is None else stored
        rows_of = lambda a, b: src if (a, b) == (0, X.shape[0]) else src[a:b]  # noqa: E731 (no copy of a CSR)
        by_rows = lambda f, *args: np.concatenate(shares(lambda a, b: f(rows_of(a, b), *args)))  # noqa: E731
        self.metric = ref.metric
        self.n_features = d
        self.dtype = dtype = gemm_dtype(precision, d)
        self._data = ref.X  # normalised rows for cosine
        self.center = None
        if self.metric == "euclidean":
            integral = all(shares(lambda a, b: is_integral(rows_of(a, b))))
            sq = by_rows(row_norms_sq)
            if shift and not sp.issparse(X):
                self.center = _center_of(X, sq, integral)
                if self.center is not None:  # the dense rows, shifted
                    sq = np.concatenate(shares(lambda a, b: row_norms_sq(X[a:b], self.center)))
            max_norm = math.sqrt(float(sq.max()))
            self.integral = integral and sq.max() < EXACT_INT[dtype] / 4
            self.scale = 1.0 if self.integral else _scale_of(max_norm)
            self.max_norm = max_norm * self.scale
            self.row_sq = sq * (self.scale * self.scale)
            self.extra = 1
        else:
            self.integral = False
            self.scale = 1.0
            self.max_norm = math.sqrt(float(row_norms_sq(self._data).max()))
            self.row_sq = None
            self.extra = 0
        # the leave-one-out's bounds on its own rows (:meth:`indexed_terms`; cosine counts them there)
        self.row_nnz = by_rows(row_nonzeros) if self.metric == "euclidean" and self._counts_zeros() else None

    def _counts_zeros(self) -> bool:
        """Whether the bounds count the queries' non-zero values: not where the GEMM sees
        ``x - c`` (every column counts), nor on integer data (their proxy is exact: the bounds
        of a non-integer query then count every column, as they may)."""
        return getattr(self, "center", None) is None and not self.integral

    def scaled_rows(self, a: int, b: int) -> Matrix:
        """Rows ``a:b`` of the indexed data as the GEMM sees them (shifted, scaled; not yet
        cast), in the data's own format."""
        part = self._data if (a, b) == (0, self._data.shape[0]) else self._data[a:b]
        center = getattr(self, "center", None)  # (indexes saved before it have none)
        if center is None:
            return part * self.scale if self.scale != 1.0 else part
        part = part - center  # float64 (float32 rows too)
        part *= self.scale  # in place: one temporary, as without the shift
        return part

    def shifted(self, part: np.ndarray, cols: np.ndarray | None = None) -> np.ndarray:
        """Dense query values ``part`` (the columns ``cols`` of the queries, or all) shifted
        by the model's center (it has one), float64: a new array the caller may scale in place."""
        return np.subtract(part, self.center if cols is None else self.center[cols], dtype=np.float64)

    def terms(self, qb: Matrix) -> QueryTerms:
        """Norms and block factor of prepared queries (``Reference.prepare``)."""
        s = self.scale
        center = getattr(self, "center", None)  # (indexes saved before it have none)
        nnz = row_nonzeros(qb) if self._counts_zeros() else None
        if self.metric == "cosine":  # rows of qb are already normalised; norms <= 1
            qnorm = np.sqrt(row_norms_sq(qb))
            return QueryTerms(qnorm * qnorm, qnorm, float(qnorm.max()), 1.0, nnz)
        qsq = row_norms_sq(qb, center) * (s * s)  # scaling by a power of two is exact
        return self._euclidean_terms(qsq, nnz)

    def indexed_terms(self, a: int, b: int, qb: Matrix) -> QueryTerms:
        """:meth:`terms` of the indexed rows ``a:b`` as queries (``qb``: them, prepared):
        euclidean, their squared norms are the model's, computed by the same function at the
        build (no pass over them)."""
        nnz = getattr(self, "row_nnz", None)  # (indexes saved before it count none)
        if self.row_sq is None:
            return self.terms(qb)
        return self._euclidean_terms(self.row_sq[a:b], None if nnz is None else nnz[a:b])

    def _euclidean_terms(self, qsq: np.ndarray, nnz: np.ndarray | None = None) -> QueryTerms:
        qnorm = np.sqrt(qsq)
        top = float(qnorm.max())
        # a query far larger than the data: scale the block down (a power of 4) so the
        # float32 products cannot overflow; the ranking of a row is unchanged
        w = 1.0
        if top > 2.0**40:
            w = 4.0 ** (-(math.ceil(math.log2(top)) - 40))
        return QueryTerms(qsq, qnorm, top, w, nnz)

    def query_factor(self, terms: QueryTerms) -> float:
        """The factor of the query rows in the GEMM (``-2 w s``; ``-2`` for cosine)."""
        return -2.0 if self.metric == "cosine" else -2.0 * terms.w * self.scale

    def exact_proxy(self, terms: QueryTerms, qb: Matrix, indexed: bool = False, symmetric: bool = False) -> bool:
        """Whether the proxy of this block is exact (integer data, integer queries, every
        partial sum below the precision's integer range).  ``qb``: the queries themselves,
        not shifted (a shifted value can round to an integer; the center of integer data is
        an integer, so shifted integers are the same integers moved); ``indexed``: they are
        indexed rows (integers when the data are); ``symmetric``: see :meth:`bounds`."""
        M, top = self.max_norm, terms.top
        return (
            self.integral
            and terms.w == 1.0
            and (indexed or is_integral(qb))
            and 2 * top * M + M * M + (top * top if symmetric else 0.0) < EXACT_INT[self.dtype]
        )

    def bounds(
        self, terms: QueryTerms, qb: Matrix, first_pass: float = 4.0, indexed: bool = False, symmetric: bool = False
    ) -> Bounds:
        """The rounding-error bounds of the proxy block of the prepared queries ``qb``;
        ``first_pass``: the first-pass slack in error bounds (``Bounds.slack``); ``indexed``:
        the queries are indexed rows (:meth:`exact_proxy`).

        ``symmetric`` (euclidean; indexed rows as queries): the GEMM carries the query's
        squared norm as one more term, ``||q||^2 + ||x||^2 - 2 q.x`` (the squared distance
        itself, the same number for either row of a pair: the symmetric leave-one-out).  Its
        bound is the proxy's with d + 2 terms, whose absolute values sum to at most
        ``(||q|| + ||x||)^2`` instead of ``||x||^2 + 2 ||q|| ||x||``; the rounding of the stored
        norm ``||q||^2`` (relative u) is within the same ``3 u`` of that sum, and no
        ``||q||^2`` is added to the proxy to reach a squared distance."""
        dtype = self.dtype
        d = self.n_features + symmetric  # the terms of the GEMM's sums, less one
        u = U[dtype]
        # the terms of each query's sums that are not exact zeros (see the module's docstring)
        m = np.full(len(terms.qsq), d + 1.0)
        if terms.nnz is not None:
            np.minimum(m, terms.nnz + (1.0 + symmetric), out=m)
        gamma = m * u / (1 - m * u)
        c_round = 1.01 * (gamma * (1 + 2 * u + u * u) + 3 * u)  # per query
        c_ref = 4 * (d + 16) * U[np.dtype(np.float64)]
        if getattr(self, "center", None) is not None:
            # the shift rounds each value of x - c and q - c in float64 (relative u64): the
            # squared distance of the rounded pair differs by at most 2.01 u64 (||q|| + ||x||)^2
            c_ref += 3 * U[np.dtype(np.float64)]
        tiny = (d + 2) * 2.0**-100
        M = self.max_norm
        s = self.scale
        qsq, qnorm, w = terms.qsq, terms.qnorm, terms.w
        own = 1.0 if symmetric else 0.0  # the query's own squared norm among the GEMM's terms
        if symmetric:
            qsq = np.zeros_like(qsq)  # what the proxy lacks of a squared distance: nothing
        if self.metric == "cosine":
            eps = c_round * 2 * qnorm * M + c_ref * 2 * (1 + qnorm * M) + tiny
            return Bounds(slack=2.0 * eps)
        if self.exact_proxy(terms, qb, indexed, symmetric):
            return Bounds(exact=lambda v, rows: np.sqrt(np.maximum(qsq[rows] + v, 0.0)))

        def eps(R: np.ndarray, rows: slice) -> np.ndarray:
            """Error bound of the proxy (and of the reference distances) for every indexed row
            of norm <= R (scaled units), per query."""
            qn = qnorm[rows]
            return w * (c_round[rows] * (R * R + 2 * qn * R + own * qn * qn) + c_ref * (qn + R) ** 2) + tiny

        def slack(ub: np.ndarray) -> np.ndarray:
            # first pass: a generous guess of the neighbourhood's radius from the proxy
            radius = np.sqrt(np.maximum(qsq + ub / w, 0.0)) * 1.125 + 2.0**-20 * M
            return first_pass * eps(np.minimum(qnorm + radius, M), slice(None))

        def refine(D: np.ndarray, c0: int, c1: int) -> np.ndarray:
            # D (unscaled) >= the k-th reference distance; the k nearest rows and everything
            # tied with them have norm <= ||q|| + D and proxy <= D^2 - ||q||^2 (+ error)
            Ds = D * s * (1 + 2.0**-40)
            rows = slice(c0, c1)
            R = np.minimum(qnorm[rows] + Ds, M)
            q2 = qsq[rows]
            return w * (Ds * Ds - q2) + eps(R, rows) + 2.0**-50 * w * (Ds * Ds + q2)

        def interval(v: np.ndarray, cols: np.ndarray, qrows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            # an indexed row of norm <= R whose proxy against query q is v lies at (scaled) squared
            # distance ||q||^2 + (v -+ eps(R)) / w, the reference distance's own rounding
            # included in eps; eps is doubled, and the float64 rounding of these sums (relative
            # to their terms, not to the result: cancellation) added, as refine adds its own
            qn, q2 = qnorm[qrows], qsq[qrows]
            R = np.sqrt(self.row_sq[cols]) * (1 + 2.0**-30)
            e = 2 * (c_round[qrows] * (R * R + 2 * qn * R + own * qn * qn) + c_ref * (qn + R) ** 2) + 2 * tiny / w
            t = v / w
            e += 2.0**-50 * (q2 + np.abs(t) + e)
            lo = np.sqrt(np.maximum(q2 + t - e, 0.0)) * ((1 - 2.0**-50) / s)
            hi = np.sqrt(np.maximum(q2 + t + e, 0.0)) * ((1 + 2.0**-50) / s)
            return lo, hi

        return Bounds(slack=slack, refine=refine, interval=interval)


class Bounds:
    """What the selection needs to know about a proxy block's rounding error.

    exact : maps proxy values (and block rows) to distances when the proxy is exact
        (integer data), else None;
    slack : per-row slack (array) or a function of the per-row upper bound of the k-th
        proxy, for the first pass;
    refine : None, or the rigorous per-row threshold from an upper bound of the k-th
        reference distance (euclidean: local norms, not the largest norm of the data).
    interval : None, or (with ``refine``) ``interval(v, cols, qrows)``: from the proxy values
        ``v`` of entries (query row ``qrows`` of the block, indexed row ``cols``), a lower and
        an upper bound of each entry's reference distance, without computing it.
    """

    def __init__(
        self,
        *,
        exact: Callable[..., np.ndarray] | None = None,
        slack: np.ndarray | Callable[[np.ndarray], np.ndarray] | None = None,
        refine: Callable[[np.ndarray, int, int], np.ndarray] | None = None,
        interval: Callable[[np.ndarray, np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]] | None = None,
    ) -> None:
        self.from_proxy = exact
        self._slack = slack
        self.refine = refine
        self.interval = interval

    def slack(self, ub: np.ndarray) -> np.ndarray:
        if self.from_proxy is not None or self._slack is None:
            return np.zeros_like(ub)
        return self._slack(ub) if callable(self._slack) else self._slack


def rerank(
    ref: Reference,
    qb: Matrix,
    cand: tuple[np.ndarray, np.ndarray, np.ndarray],
    k: int,
    bounds: Bounds,
    *,
    rows: tuple[int, int],
    covered: np.ndarray,
    slack: np.ndarray,
    rescan: Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]],
    budget: int,
    sets: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """The first k indexed rows by (reference distance, row) of the queries ``rows`` of ``qb``.

    Parameters
    ----------
    ref : Reference
    qb : prepared query block
    cand : (r, c, v)
        Candidate entries of the proxy block: query row (0 for ``rows[0]``), indexed row and
        proxy value, grouped by query row and ascending in value within a row (ties in any
        order); every entry of a row with proxy ``<= covered`` is among them, and at least k.
    k : int
    bounds : the block's :class:`Bounds` (not exact)
    rows : (c0, c1)
        The query rows of ``qb`` the candidates belong to.
    covered : ndarray of shape (c1 - c0,), float64
    slack : ndarray of shape (c1 - c0,), float64
        The cosine threshold above the k-th proxy (unused for euclidean).
    rescan : callable
        ``rescan(short, thr)`` returns ``(r, c)``, every entry of the query rows ``short``
        (local numbers) with proxy ``<= thr`` (float64, per row): asked only for rows whose
        rigorous threshold exceeds ``covered``.
    budget : int
        Bytes for the temporaries of the reference distances.
    sets : bool, default=False
        Only the set of each row's k nearest is asked for (a model that counts labels): a row
        whose first k candidates by proxy are certain from the error bounds alone (their
        largest possible distance below the least possible distance of every other row) is
        answered with them, in proxy order, and NaN distances; the other rows as without it.

    Returns
    -------
    dist : ndarray of shape (c1 - c0, k), float64
    idx : ndarray of shape (c1 - c0, k), intp
    """
    r, c, v = cand
    c0, c1 = rows
    n_rows = c1 - c0
    starts = row_starts(r, n_rows)
    pos = first_k(starts, k)
    done = None
    if sets and (bounds.refine is None or bounds.interval is not None):
        done, top, found = certain_sets(ref, qb, cand, k, bounds, rows=rows, pos=pos, covered=covered,
                                        slack=slack, budget=budget)
        if done.all():
            return np.full((n_rows, k), np.nan), found
        left = np.flatnonzero(~done)  # rows the candidates stop short for: as without sets
    known = np.full(len(r), np.nan)
    if bounds.refine is None:
        thr2 = v[starts[:-1] + k - 1].astype(np.float64) + slack
    else:
        # the reference distances of the k best by proxy bound the k-th distance; the
        # candidates' norms are then bounded too, and so is the proxy's error
        if done is None:
            dk = ref.grid_distances(qb[c0:c1], c[pos], budget)
            known[pos] = dk
            top = dk.max(axis=1)
        else:
            dk = ref.grid_distances(qb[c0 + left], c[pos[left]], budget)
            known[pos[left]] = dk
            top[left] = dk.max(axis=1)
        thr2 = bounds.refine(top, c0, c1)
    keep = v <= thr2[r]
    if done is not None:
        keep &= ~done[r]
    short = np.flatnonzero(thr2 > covered)
    if short.size:  # rare: the candidates stop short of the threshold for these rows
        r_more, c_more = rescan(short, thr2[short])
        keep &= ~np.isin(r, short)
        r = np.concatenate([r[keep], r_more])
        c = np.concatenate([c[keep], c_more])
        known = np.concatenate([known[keep], np.full(len(r_more), np.nan)])
        keep = np.ones(len(r), dtype=bool)
    r, c, dr = r[keep], c[keep], known[keep]
    todo = np.flatnonzero(np.isnan(dr))
    dr[todo] = ref.pair_distances(qb, c0 + r[todo], c[todo], budget)
    order = row_distance_order(r, dr, c)
    r, c, dr = r[order], c[order], dr[order]
    if done is None:
        pos = first_k(row_starts(r, n_rows), k)
        return dr[pos], c[pos]
    pos = row_starts(r, n_rows)[left, None] + np.arange(k)
    dist = np.full((n_rows, k), np.nan)
    dist[left], found[left] = dr[pos], c[pos]
    return dist, found


def certain_sets(
    ref: Reference,
    qb: Matrix,
    cand: tuple[np.ndarray, np.ndarray, np.ndarray],
    k: int,
    bounds: Bounds,
    *,
    rows: tuple[int, int],
    pos: np.ndarray,
    covered: np.ndarray,
    slack: np.ndarray,
    budget: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The set of each row's k nearest, with reference distances only where the bounds leave
    the answer open (``rerank`` with ``sets``; its arguments, ``pos`` its first k by proxy).

    Each candidate's reference distance lies in an interval known from its proxy (euclidean:
    ``bounds.interval``; cosine and manhattan: the proxy itself, with the slack that the
    first pass adds, ``slack``, as the width).  ``top``, the largest upper end among the first
    k by proxy, bounds the k-th distance, so every row beyond the threshold ``refine(top)``
    is farther than all of them: out.  A first-k candidate whose upper end is below the lower
    end of every other candidate under that threshold is in.  The rest (typically none, or
    two or three around the k-th) get their reference distances and fill the remaining places
    by (distance, row), the engine's own order.

    Returns ``done`` (n_rows,) bool: the rows answered (the others: the candidates stop short
    of the threshold); ``top`` (n_rows,) as above; ``found`` (n_rows, k): the answer of the
    rows done, any order within a row.
    """
    r, c, v = cand
    c0, c1 = rows
    n_rows = c1 - c0
    vf = v.astype(np.float64)
    if bounds.refine is None:
        lo, hi = vf, vf + slack[r]
        top = hi[pos[:, -1]]  # ascending proxy within a row: the k-th has the largest
        thr2 = top
    else:
        lo, hi = bounds.interval(vf, c, c0 + r)
        top = hi[pos].max(axis=1)
        thr2 = bounds.refine(top, c0, c1)
    first = np.zeros(len(r), dtype=bool)
    first[pos] = True
    rest = ~first & (v <= thr2[r])  # every other row under the threshold is a candidate (done rows)
    least = np.full(n_rows, np.inf)
    np.minimum.at(least, r[rest], lo[rest])
    done = thr2 <= covered
    sure = first & (hi < least[r])
    need = k - np.bincount(r[sure], minlength=n_rows)
    found = c[pos]  # the rows whose first k are all in
    open_rows = done & (need > 0)
    if not open_rows.any():
        return done, top, found
    keep = open_rows[r]
    sure &= keep
    ambiguous = (first | rest) & ~sure & keep
    ra, ca = r[ambiguous], c[ambiguous]
    da = ref.pair_distances(qb, c0 + ra, ca, budget)
    order = row_distance_order(ra, da, ca)
    ra, ca = ra[order], ca[order]
    take = np.arange(len(ra)) - row_starts(ra, n_rows)[ra] < need[ra]
    rr = np.concatenate([r[sure], ra[take]])
    found[open_rows] = np.concatenate([c[sure], ca[take]])[np.argsort(rr, kind="stable")].reshape(-1, k)
    return done, top, found

