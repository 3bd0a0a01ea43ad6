"""Metrics at the top of the ranking, the Extreme Classification Repository's: precision and
nDCG at k and their propensity-scored forms.

A ranking is a score matrix (dense or sparse, never densified) or the label indices of a top-k
prediction; the rows go in blocks, and one pass serves every k asked (:func:`evaluate`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import cast

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

from ._docstrings import fill_doc
from ._propensity import _inverse_propensities
from ._validation import (
    _F64,
    MatrixLike,
    _block_elements,
    _BoolMatrix,
    _check_binary,
    _check_k,
    _check_same_shape,
    _check_scores,
    _check_sparse_scores,
)


def _check_ranking(ranking: MatrixLike, shape: tuple[int, int], k: int) -> NDArray | sp.csr_matrix:
    """A labels array, cut to its first k columns (intp), or a validated score matrix."""
    n, L = shape
    if sp.issparse(ranking):
        S: NDArray | sp.csr_matrix = _check_sparse_scores(ranking, "ranking")
        _check_same_shape(shape, S.shape, "ranking")
        return S
    R = np.asarray(ranking)
    if R.dtype.kind not in "iu":
        S = _check_scores(R, "ranking")
        _check_same_shape(shape, S.shape, "ranking")
        return S
    if R.ndim != 2 or R.shape[0] != n:
        raise ValueError(
            f"ranking (label indices) must have shape (n_samples, k') = ({n}, k'); got shape {R.shape}"
        )
    if R.shape[1] < k:
        raise ValueError(f"ranking holds k'={R.shape[1]} labels a row, fewer than k={k}")
    top = R[:, :k]
    low, high = int(top.min()), int(top.max())
    if low < 0 or high >= L:
        raise ValueError(
            f"ranking holds label indices outside [0, {L}): found {low if low < 0 else high}; "
            "an integer ranking is read as label indices (pass a score matrix as floats)"
        )
    ordered = np.sort(top, axis=1)
    repeats = ordered[:, 1:] == ordered[:, :-1]
    if repeats.any():
        row = int(np.flatnonzero(repeats.any(axis=1))[0])
        raise ValueError(
            f"ranking repeats a label within the first k={k} positions (row {row}); an integer "
            "ranking is read as label indices (pass a score matrix as floats)"
        )
    return top.astype(np.intp, copy=False)


def _is_labels(R: NDArray | sp.csr_matrix) -> bool:
    return not sp.issparse(R) and R.dtype.kind in "iu"


def _member(sorted_keys: NDArray[np.int64], keys: NDArray[np.int64]) -> NDArray[np.bool_]:
    """Whether each key occurs in the sorted array ``sorted_keys``."""
    if sorted_keys.size == 0:
        return np.zeros(keys.shape, dtype=np.bool_)
    pos = np.minimum(np.searchsorted(sorted_keys, keys), sorted_keys.size - 1)
    return sorted_keys[pos] == keys


def _top_k_dense(S: NDArray[np.floating], k: int) -> NDArray[np.intp]:
    """Each row's k best labels, best first, equal scores by increasing label index (k <= L)."""
    m, L = S.shape
    # a partition finds the k-th best score; the ties at it are taken lowest index first
    kth = np.partition(S, L - k, axis=1)[:, L - k, None]
    above = S > kth
    tied = S == kth
    room = k - above.sum(axis=1, keepdims=True)
    keep = above | (tied & (np.cumsum(tied, axis=1) <= room))
    cols = np.nonzero(keep)[1].reshape(m, k)  # increasing label index within each row
    order = np.argsort(-np.take_along_axis(S, cols, axis=1), axis=1, kind="stable")
    return np.take_along_axis(cols, order, axis=1)


def _top_k_sparse(S: sp.csr_matrix, k: int) -> NDArray[np.intp]:
    """As :func:`_top_k_dense` for canonical CSR scores without stored zeros; missing entries score 0."""
    m, L = S.shape
    stored = np.diff(S.indptr)
    srow = np.repeat(np.arange(m, dtype=np.int64), stored)
    # the k lowest unstored labels of row i lie in [0, k + stored_i): the only score-0
    # candidates that can reach the top k, and only in a row with fewer than k positive scores
    positive = np.bincount(srow[S.data > 0], minlength=m)
    span = np.where(positive < k, np.minimum(L, k + stored), 0)
    zrow = np.repeat(np.arange(m, dtype=np.int64), span)
    zcol = np.arange(zrow.size, dtype=np.int64) - np.repeat(np.cumsum(span) - span, span)
    free = ~_member(srow * L + S.indices, zrow * L + zcol)
    zrow, zcol = zrow[free], zcol[free]
    rows = np.concatenate([srow, zrow])
    cols = np.concatenate([S.indices.astype(np.int64), zcol])
    vals = np.concatenate([S.data, np.zeros(zcol.size, dtype=S.dtype)])
    order = np.lexsort((cols, -vals, rows))
    rows, cols = rows[order], cols[order]
    count = np.bincount(rows, minlength=m)
    pos = np.arange(rows.size) - np.repeat(np.cumsum(count) - count, count)
    return cols[pos < k].reshape(m, k).astype(np.intp, copy=False)


def _top_rows(R: NDArray | sp.csr_matrix, a: int, b: int, depth: int) -> NDArray[np.intp]:
    if _is_labels(R):
        return R[a:b, :depth]  # type: ignore[index,return-value]
    if sp.issparse(R):
        return _top_k_sparse(R[a:b], depth)  # type: ignore[index]
    return _top_k_dense(R[a:b], depth)  # type: ignore[index]


def _true_labels(Yt: _BoolMatrix, a: int, b: int) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """(row within the block, label) of every true label of rows a..b-1, sorted by row then label."""
    if sp.issparse(Yt):
        indptr = Yt.indptr[a : b + 1]  # type: ignore[union-attr]
        rows = np.repeat(np.arange(b - a, dtype=np.int64), np.diff(indptr))
        return rows, Yt.indices[indptr[0] : indptr[-1]].astype(np.int64)  # type: ignore[union-attr]
    rows, cols = np.nonzero(Yt[a:b])
    return rows.astype(np.int64, copy=False), cols.astype(np.int64, copy=False)


@dataclass(frozen=True)
class _AtKStats:
    """Sums over instances of the at-k quantities, for each k asked (one pass over the rows)."""

    n_samples: int
    ks: tuple[int, ...]
    precision_sum: _F64  # sum of P@k
    ndcg_sum: _F64  # sum of nDCG@k
    ps_gain: _F64 | None  # sum of 1/p_l over the relevant labels of the top k
    ps_best: _F64 | None  # sum of the k largest 1/p_l among the true labels
    psdcg_gain: _F64 | None  # the same two, discounted by 1/log2(position + 1)
    psdcg_best: _F64 | None

    @classmethod
    def from_checked(
        cls, Yt: _BoolMatrix, R: NDArray | sp.csr_matrix, ks: Iterable[int], inv: _F64 | None
    ) -> _AtKStats:
        n, L = Yt.shape
        ks = tuple(sorted(set(ks)))
        k_max = ks[-1]
        depth = min(k_max, L)  # a labels array has been cut to k_max <= L columns
        disc = 1.0 / np.log2(np.arange(2, k_max + 2))
        ideal = np.cumsum(disc)
        sums = np.zeros((6, len(ks)))
        # entries of temporaries per row: the top positions, the true labels, the scores
        width = depth + (Yt.nnz / n if sp.issparse(Yt) else L)  # type: ignore[union-attr]
        if not _is_labels(R):
            width += 3 * R.nnz / n + 2 * depth if sp.issparse(R) else L  # type: ignore[union-attr]
        step = max(1, int(_block_elements() // width))
        for a in range(0, n, step):
            b = min(n, a + step)
            trow, tcol = _true_labels(Yt, a, b)
            T = _top_rows(R, a, b, depth)
            rel = _member(trow * L + tcol, np.arange(b - a, dtype=np.int64)[:, None] * L + T)
            n_true = np.bincount(trow, minlength=b - a)
            has = n_true > 0
            hits = np.cumsum(rel, axis=1)
            dcg = np.cumsum(rel * disc[:depth], axis=1)
            if inv is not None:
                gain = np.where(rel, inv[T], 0.0)
                gain_cum = np.cumsum(gain, axis=1)
                gain_dcg = np.cumsum(gain * disc[:depth], axis=1)
                # the best ranking puts the row's true labels first, rarest (largest 1/p) first
                w = inv[tcol]
                w = w[np.lexsort((-w, trow))]
                pos = np.arange(w.size) - np.repeat(np.cumsum(n_true) - n_true, n_true)
            for j, k in enumerate(ks):
                c = min(k, depth) - 1  # positions past L hold no label
                sums[0, j] += hits[:, c].sum() / k
                sums[1, j] += (dcg[has, c] / ideal[np.minimum(n_true[has], k) - 1]).sum()
                if inv is not None:
                    top = pos < k
                    sums[2, j] += gain_cum[:, c].sum()
                    sums[3, j] += w[top].sum()
                    sums[4, j] += gain_dcg[:, c].sum()
                    sums[5, j] += (w[top] * disc[pos[top]]).sum()
        if inv is None:
            return cls(n, ks, sums[0], sums[1], None, None, None, None)
        return cls(n, ks, *sums)

    def _at(self, values: _F64 | None, k: int) -> float:
        return float(cast(_F64, values)[self.ks.index(k)])

    def precision(self, k: int) -> float:
        return self._at(self.precision_sum, k) / self.n_samples

    def ndcg(self, k: int) -> float:
        return self._at(self.ndcg_sum, k) / self.n_samples

    def psprecision(self, k: int) -> float:
        best = self._at(self.ps_best, k)
        return self._at(self.ps_gain, k) / best if best > 0 else float("nan")

    def psndcg(self, k: int) -> float:
        best = self._at(self.psdcg_best, k)
        return self._at(self.psdcg_gain, k) / best if best > 0 else float("nan")


def _at_k_value(
    kind: str,
    Y_true: MatrixLike,
    ranking: MatrixLike,
    k: object,
    p: ArrayLike | None = None,
    Y_train: MatrixLike | None = None,
) -> float:
    k = _check_k(k)
    Yt = _check_binary(Y_true, "Y_true")
    R = _check_ranking(ranking, Yt.shape, k)
    inv = _inverse_propensities(p, Y_train, Yt.shape[1]) if kind.startswith("ps") else None
    return float(getattr(_AtKStats.from_checked(Yt, R, (k,), inv), kind)(k))


@fill_doc
def precision_at_k(Y_true: MatrixLike, ranking: MatrixLike, k: int = 5) -> float:
    """Precision at k: the fraction of the top k ranked labels that are relevant.

    ``P@k = (1 / k) * sum over the top k labels l of y_l``, averaged over instances.

    {at_k_parameters}

    {returns_higher} At most ``mean of min(k, |Y_i|) / k``.

    Notes
    -----
    The Extreme Classification Repository's definition (its ``precision_k``):
    an instance without relevant labels scores 0 and counts in the mean; the
    denominator is k even when fewer than k labels are relevant.

    {xc_references}

    Examples
    --------
    >>> precision_at_k([[1, 0, 1], [0, 1, 0]], [[0.9, 0.5, 0.1], [0.2, 0.2, 0.6]], k=2)
    0.25
    >>> precision_at_k([[1, 0, 1], [0, 1, 0]], [[0, 2], [1, 0]], k=1)  # label indices, best first
    1.0
    """
    return _at_k_value("precision", Y_true, ranking, k)


@fill_doc
def ndcg_at_k(Y_true: MatrixLike, ranking: MatrixLike, k: int = 5) -> float:
    """Normalised discounted cumulative gain at k.

    ``DCG@k = sum over positions r = 1..k of y_(r) / log2(r + 1)``, y_(r) the
    relevance of the label ranked r-th; ``nDCG@k = DCG@k / sum over r = 1..min(k, |Y_i|)
    of 1 / log2(r + 1)`` (the DCG of a perfect ranking), averaged over instances.

    {at_k_parameters}

    Returns
    -------
    float
        In [0, 1]; higher is better; 1 for a perfect ranking when every
        instance has a relevant label.

    Notes
    -----
    The Extreme Classification Repository's definition (its ``nDCG_k``): an
    instance without relevant labels scores 0 and counts in the mean.

    {xc_references}

    Examples
    --------
    >>> round(ndcg_at_k([[1, 0, 1]], [[0.9, 0.5, 0.1]], k=2), 6)  # 1 / (1 + 1/log2(3))
    0.613147
    """
    return _at_k_value("ndcg", Y_true, ranking, k)


@fill_doc
def psprecision_at_k(
    Y_true: MatrixLike,
    ranking: MatrixLike,
    k: int = 5,
    *,
    propensities: ArrayLike | None = None,
    Y_train: MatrixLike | None = None,
) -> float:
    """Propensity-scored precision at k (PSP@k), normalised as in the Extreme Classification Repository.

    ``PSP@k = sum_i sum over the top k labels l of y_il / p_l`` divided by
    ``sum_i (the sum of the k largest 1 / p_l over the true labels of i)``.

    {at_k_parameters}
    {ps_parameters}

    {ps_returns}

    Notes
    -----
    {ps_normalisation}

    {ps_references}

    Examples
    --------
    >>> psprecision_at_k([[1, 0, 1]], [[0.9, 0.5, 0.1]], k=2, propensities=[0.5, 1.0, 0.25])
    0.3333333333333333
    """
    return _at_k_value("psprecision", Y_true, ranking, k, propensities, Y_train)


@fill_doc
def psndcg_at_k(
    Y_true: MatrixLike,
    ranking: MatrixLike,
    k: int = 5,
    *,
    propensities: ArrayLike | None = None,
    Y_train: MatrixLike | None = None,
) -> float:
    """Propensity-scored nDCG at k (PSnDCG@k), normalised as in the Extreme Classification Repository.

    ``PSDCG@k = sum over positions r = 1..k of y_(r) / (p_(r) log2(r + 1))``;
    ``PSnDCG@k = sum_i PSDCG@k_i / sum_i (PSDCG@k_i of the best ranking)``.

    {at_k_parameters}
    {ps_parameters}

    {ps_returns}

    Notes
    -----
    {ps_normalisation} (The repository divides both sums by ``sum over r = 1..k of
    1 / log2(r + 1)`` for every instance; the factor cancels.)

    {ps_references}

    Examples
    --------
    >>> round(psndcg_at_k([[1, 0, 1]], [[0.9, 0.5, 0.1]], k=2, propensities=[0.5, 1.0, 0.25]), 6)
    0.380094
    """
    return _at_k_value("psndcg", Y_true, ranking, k, propensities, Y_train)
