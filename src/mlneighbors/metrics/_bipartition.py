"""The counts from which every bipartition metric follows, and MULAN's precision, recall and F1.

One pass over the rows of ``Y_true`` and ``Y_pred`` (in blocks) gives the per-instance counts
of the example-based metrics and the per-label counts of the label-based ones.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

from ._validation import _F64, MatrixLike, _block_elements, _BoolMatrix, _check_binary, _check_same_shape, _dense


@dataclass(frozen=True)
class _BipartitionCounts:
    """Per-instance and per-label counts from which every bipartition metric follows."""

    n_samples: int
    n_labels: int
    row_true: NDArray[np.int64]  # |Y_i|
    row_pred: NDArray[np.int64]  # |Z_i|
    row_inter: NDArray[np.int64]  # |Z_i ∩ Y_i|
    col_true: NDArray[np.int64]  # tp + fn per label
    col_pred: NDArray[np.int64]  # tp + fp per label
    col_inter: NDArray[np.int64]  # tp per label

    @classmethod
    def from_checked(cls, Yt: _BoolMatrix, Yp: _BoolMatrix) -> _BipartitionCounts:
        n, L = Yt.shape
        if sp.issparse(Yt) and sp.issparse(Yp):
            inter = Yt.multiply(Yp)  # type: ignore[union-attr]

            def rows(M: sp.spmatrix) -> NDArray[np.int64]:
                return np.asarray(M.sum(axis=1), dtype=np.int64).ravel()

            def cols(M: sp.spmatrix) -> NDArray[np.int64]:
                return np.asarray(M.sum(axis=0), dtype=np.int64).ravel()

            return cls(n, L, rows(Yt), rows(Yp), rows(inter), cols(Yt), cols(Yp), cols(inter))

        T, P = _dense(Yt), _dense(Yp)
        row_true = np.empty(n, np.int64)
        row_pred = np.empty(n, np.int64)
        row_inter = np.empty(n, np.int64)
        col_true = np.zeros(L, np.int64)
        col_pred = np.zeros(L, np.int64)
        col_inter = np.zeros(L, np.int64)
        step = max(1, _block_elements() // L)
        for a in range(0, n, step):
            t, p = T[a : a + step], P[a : a + step]
            i = t & p
            row_true[a : a + step] = t.sum(axis=1, dtype=np.int64)
            row_pred[a : a + step] = p.sum(axis=1, dtype=np.int64)
            row_inter[a : a + step] = i.sum(axis=1, dtype=np.int64)
            col_true += t.sum(axis=0, dtype=np.int64)
            col_pred += p.sum(axis=0, dtype=np.int64)
            col_inter += i.sum(axis=0, dtype=np.int64)
        return cls(n, L, row_true, row_pred, row_inter, col_true, col_pred, col_inter)


def _bipartition_counts(Y_true: MatrixLike, Y_pred: MatrixLike) -> _BipartitionCounts:
    Yt = _check_binary(Y_true, "Y_true")
    Yp = _check_binary(Y_pred, "Y_pred")
    _check_same_shape(Yt.shape, Yp.shape, "Y_pred")
    return _BipartitionCounts.from_checked(Yt, Yp)


def _pr_f1(tp: ArrayLike, fp: ArrayLike, fn: ArrayLike) -> tuple[_F64, _F64, _F64]:
    """MULAN's precision, recall and F1 from counts, elementwise.

    tp + fp + fn == 0 gives 1 for all three; otherwise a zero denominator gives 0.
    """
    tp = np.asarray(tp, dtype=np.float64)
    fp = np.asarray(fp, dtype=np.float64)
    fn = np.asarray(fn, dtype=np.float64)
    empty = (tp + fp + fn) == 0
    prec = np.divide(tp, tp + fp, out=np.zeros_like(tp), where=(tp + fp) > 0)
    rec = np.divide(tp, tp + fn, out=np.zeros_like(tp), where=(tp + fn) > 0)
    f1 = np.divide(2 * tp, 2 * tp + fp + fn, out=np.zeros_like(tp), where=~empty)
    prec[empty] = 1.0
    rec[empty] = 1.0
    f1[empty] = 1.0
    return prec, rec, f1
