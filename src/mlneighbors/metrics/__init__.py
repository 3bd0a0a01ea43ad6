"""Multi-label evaluation measures: MULAN's, and the Extreme Classification Repository's at k.

Two families following MULAN (Tsoumakas et al.), whose definitions, zero
denominators and differences from scikit-learn the user guide states
(:doc:`/user_guide/metrics`, ``docs/user_guide/metrics.rst``), and a third from
extreme classification:

* **Bipartition metrics** ``metric(Y_true, Y_pred)`` compare the predicted
  label sets ``Z_i`` with the true sets ``Y_i``: Hamming loss, subset
  accuracy, the example-based accuracy / precision / recall / F1 and the
  label-based micro and macro precision / recall / F1.
* **Ranking metrics** ``metric(Y_true, scores)`` use a real-valued score per
  (instance, label): one-error, coverage, ranking loss, (example-based,
  ranking) average precision and the label-based mean average precision
  ``label_map``.
* **Metrics at k** ``metric(Y_true, ranking, k=...)`` score the k labels
  ranked first, with the definitions of the Extreme Classification
  Repository (Bhatia, Dahiya, Jain, Mittal, Prabhu & Varma): precision and
  nDCG at k, and their propensity-scored forms (Jain, Prabhu & Varma, KDD
  2016), which weight label l by ``1 / p_l`` (:func:`propensities`) and are
  normalised by the best value achievable. ``ranking`` is a score matrix or
  the label indices of a top-k prediction, best first. A sparse ``Y_true`` or
  sparse scores are never densified: the work goes in blocks of rows.

Every function returns a Python ``float``. :data:`METRICS` describes every
metric (:class:`Metric`) and :func:`evaluate` computes several of them from
one validation of the inputs.

Conventions shared by every function
------------------------------------
* ``Y_true`` and ``Y_pred`` are binary indicator matrices of shape
  ``(n_samples, n_labels)``: dense array-likes (bool, int or float holding
  only 0 and 1) or scipy sparse matrices / arrays in any format. Anything else
  raises ``ValueError`` naming the offending values.
* ``scores`` is a real ``(n_samples, n_labels)`` matrix (dense, or sparse,
  which is densified except by the metrics at k); NaN and +-inf are rejected
  with ``ValueError``.
* **Strict ranks and the tie rule.** In each row the labels are ranked by
  decreasing score; equal scores are ranked by increasing label index (for
  equal scores label 0 is ranked above label 3). Rank 1 is the top. Note that
  MULAN's ``MultiLabelOutput.ranksFromValues`` breaks ties the other way
  round (higher index first); this package fixes the lower-index rule.
* **Zero denominators** follow MULAN's ``InformationRetrievalMeasures`` and
  are stated in each docstring.
* **Sparse scores**: a missing entry is a score of 0, ranked among the other
  zeros by the tie rule. (The repository's MATLAB tools differ: their
  ``sort_sparse_mat`` ranks only the stored entries, so a missing entry never
  reaches the top k; the two agree when every row stores k positive scores.)

Edge-case decisions, in one place
---------------------------------
* Example-based: both sets empty -> 1 (accuracy, precision, recall, F1);
  ``|Z| = 0`` with ``Y`` non-empty -> precision 0; ``|Y| = 0`` with ``Z``
  non-empty -> recall 0 (and accuracy, F1 0 by their formulas).
* Label-based, per label and for the pooled micro counts alike:
  ``tp + fp + fn = 0`` -> P = R = F1 = 1; else ``tp + fp = 0`` -> P = 0 and
  ``tp + fn = 0`` -> R = 0. Macro F1 is the mean of per-label F1s.
* One-error: an instance without relevant labels is an error (MULAN).
* Coverage and ranking loss: an instance without relevant labels (and, for
  ranking loss, one with every label relevant) contributes 0 and counts.
* Average precision: instances without relevant labels are skipped; NaN if
  every instance is skipped (MULAN's 0/0).
* ``label_map``: instances with equal scores are ranked by increasing
  instance index; labels without positive instances are skipped; NaN if every
  label is skipped (MULAN's ``MeanAveragePrecision``).
* At k (the repository's conventions): an instance without relevant labels
  scores 0 in P@k and nDCG@k and counts in the mean; PSP@k and PSnDCG@k are
  ratios of sums over instances (to which such an instance adds 0), NaN when
  no instance has a relevant label.

Evaluating 100 000 x 1000 matrices is fine: everything is vectorised and the
ranking metrics work on blocks of rows (labels for ``label_map``) of about a
million entries, so the extra memory stays bounded.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cached_property, partial
from typing import Literal, Union, cast

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

from .._config import working_memory_bytes

__all__ = [
    "METRICS",
    "Metric",
    "average_precision",
    "coverage",
    "evaluate",
    "example_accuracy",
    "example_f1",
    "example_precision",
    "example_recall",
    "hamming_loss",
    "label_map",
    "macro_f1",
    "macro_precision",
    "macro_recall",
    "micro_f1",
    "micro_precision",
    "micro_recall",
    "ndcg_at_k",
    "one_error",
    "precision_at_k",
    "propensities",
    "psndcg_at_k",
    "psprecision_at_k",
    "ranking_loss",
    "subset_accuracy",
]

#: A dense array-like or a scipy sparse matrix / array.
MatrixLike = Union[ArrayLike, "sp.spmatrix", "sp.sparray"]

# Bytes of temporaries per entry of a block of the blocked kernels: the ranking metrics hold
# about 30 int64/float64 arrays of the block's shape (ranks, sorted scores, masks, cumulative
# counts, ...) at once; 1,048,576 entries a block at the default 256 MiB.
_ENTRY_BYTES = 256


def _block_elements() -> int:
    return max(1, working_memory_bytes() // _ENTRY_BYTES)

_BoolMatrix = Union[NDArray[np.bool_], "sp.csr_matrix"]


# ---------------------------------------------------------------------------
# Validation
# ---------------------------------------------------------------------------


def _shape_2d(X: object, name: str) -> tuple[int, int]:
    ndim = getattr(X, "ndim", None)
    shape = getattr(X, "shape", None)
    if ndim != 2:
        raise ValueError(
            f"{name} must be a 2-D (n_samples, n_labels) array; got a {ndim}-D input "
            f"of shape {shape}"
        )
    n, L = (int(s) for s in X.shape)  # type: ignore[attr-defined]
    if n == 0 or L == 0:
        raise ValueError(
            f"{name} must have at least one sample and one label; got shape {(n, L)}"
        )
    return n, L


def _non_binary_error(name: str, bad: np.ndarray) -> ValueError:
    values = np.unique(bad)
    shown = ", ".join(repr(v.item()) for v in values[:5])
    more = f" and {values.size - 5} other value(s)" if values.size > 5 else ""
    return ValueError(
        f"{name} must be a binary indicator matrix holding only 0 and 1 "
        f"(or False/True); found the value(s) {shown}{more}"
    )


def _check_binary(Y: MatrixLike, name: str) -> _BoolMatrix:
    """Validate a binary indicator matrix; return a bool ndarray or a bool CSR matrix."""
    if sp.issparse(Y):
        _shape_2d(Y, name)
        Yc = sp.csr_matrix(Y, copy=True)
        Yc.sum_duplicates()
        data = Yc.data
        if data.dtype != np.bool_:
            if not (np.issubdtype(data.dtype, np.number)):
                raise ValueError(f"{name} must be numeric or boolean; got dtype {data.dtype}")
            ok = (data == 0) | (data == 1)
            if not ok.all():
                raise _non_binary_error(name, data[~ok])
        Yc.eliminate_zeros()
        Yc = Yc.astype(np.bool_)
        return Yc

    A = np.asarray(Y)
    n, L = _shape_2d(A, name)
    if A.dtype == np.bool_:
        return np.ascontiguousarray(A)
    if not np.issubdtype(A.dtype, np.number) or np.issubdtype(A.dtype, np.complexfloating):
        raise ValueError(f"{name} must be numeric or boolean; got dtype {A.dtype}")
    out = np.empty((n, L), dtype=np.bool_)
    step = max(1, _block_elements() // L)
    for a in range(0, n, step):
        blk = A[a : a + step]
        is_one = blk == 1
        ok = is_one | (blk == 0)
        if not ok.all():
            raise _non_binary_error(name, blk[~ok])
        out[a : a + step] = is_one
    return out


def _check_scores(S: MatrixLike, name: str = "scores") -> NDArray[np.floating]:
    """Validate a real score matrix; return a C-contiguous float ndarray (float32 kept)."""
    if sp.issparse(S):
        _shape_2d(S, name)
        A = S.toarray()  # type: ignore[union-attr]
    else:
        A = np.asarray(S)
    n, L = _shape_2d(A, name)
    if A.dtype == np.bool_ or (
        np.issubdtype(A.dtype, np.number) and not np.issubdtype(A.dtype, np.complexfloating)
    ):
        if not np.issubdtype(A.dtype, np.floating):
            # ints (unsigned ones too) would overflow when negated for the sort
            A = A.astype(np.float64)
    else:
        raise ValueError(f"{name} must be a real-valued matrix; got dtype {A.dtype}")
    A = np.ascontiguousarray(A)
    step = max(1, _block_elements() // L)
    for a in range(0, n, step):
        blk = A[a : a + step]
        finite = np.isfinite(blk)
        if not finite.all():
            raise _non_finite_error(name, blk[~finite], a, a + blk.shape[0] - 1)
    return A


def _non_finite_error(name: str, bad: np.ndarray, first_row: int, last_row: int) -> ValueError:
    kinds = sorted({"NaN" if np.isnan(v) else ("inf" if v > 0 else "-inf") for v in bad[:1000]})
    return ValueError(
        f"{name} must be finite; found {', '.join(kinds)} "
        f"({int(bad.size)} non-finite value(s) in rows {first_row}..{last_row})"
    )


def _check_same_shape(shape_true: tuple[int, ...], other: tuple[int, ...], other_name: str) -> None:
    if tuple(shape_true) != tuple(other):
        raise ValueError(
            f"Y_true and {other_name} must have the same shape; "
            f"got Y_true {tuple(shape_true)} and {other_name} {tuple(other)}"
        )


def _dense(Y: _BoolMatrix) -> NDArray[np.bool_]:
    return Y.toarray() if sp.issparse(Y) else Y  # type: ignore[union-attr,return-value]


# ---------------------------------------------------------------------------
# Bipartition kernels: everything derives from a few counts
# ---------------------------------------------------------------------------


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


_F64 = NDArray[np.float64]


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


def _hamming_from(c: _BipartitionCounts) -> float:
    wrong = c.row_true.sum() + c.row_pred.sum() - 2 * c.row_inter.sum()
    return float(wrong / (c.n_samples * c.n_labels))


def _subset_accuracy_from(c: _BipartitionCounts) -> float:
    exact = (c.row_true == c.row_inter) & (c.row_pred == c.row_inter)
    return float(np.mean(exact))


def _example_accuracy_from(c: _BipartitionCounts) -> float:
    union = c.row_true + c.row_pred - c.row_inter
    acc = np.divide(c.row_inter, union, out=np.ones(c.n_samples), where=union > 0)
    return float(acc.mean())


def _example_precision_from(c: _BipartitionCounts) -> float:
    tp = c.row_inter
    prec, _, _ = _pr_f1(tp, c.row_pred - tp, c.row_true - tp)
    return float(prec.mean())


def _example_recall_from(c: _BipartitionCounts) -> float:
    tp = c.row_inter
    _, rec, _ = _pr_f1(tp, c.row_pred - tp, c.row_true - tp)
    return float(rec.mean())


def _example_f1_from(c: _BipartitionCounts) -> float:
    tp = c.row_inter
    _, _, f1 = _pr_f1(tp, c.row_pred - tp, c.row_true - tp)
    return float(f1.mean())


def _label_counts(c: _BipartitionCounts) -> tuple[NDArray, NDArray, NDArray]:
    tp = c.col_inter
    return tp, c.col_pred - tp, c.col_true - tp


def _micro(c: _BipartitionCounts, which: int) -> float:
    tp, fp, fn = (np.asarray(x.sum()) for x in _label_counts(c))
    return float(_pr_f1(tp, fp, fn)[which])


def _macro(c: _BipartitionCounts, which: int) -> float:
    return float(_pr_f1(*_label_counts(c))[which].mean())


# ---------------------------------------------------------------------------
# Ranking kernels
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _RankingStats:
    """Sums over instances of the per-instance ranking losses (one pass over the rows)."""

    n_samples: int
    n_labels: int
    one_error_sum: float
    coverage_sum: float
    ranking_loss_sum: float
    ap_sum: float
    ap_count: int

    @classmethod
    def from_checked(cls, Yt: _BoolMatrix, S: NDArray[np.floating]) -> _RankingStats:
        n, L = S.shape
        positions = np.arange(L, dtype=np.int64)
        inv_rank = 1.0 / np.arange(1, L + 1, dtype=np.float64)
        one_error = coverage = rloss = ap_sum = 0.0
        ap_count = 0
        step = max(1, _block_elements() // L)
        for a in range(0, n, step):
            b = min(n, a + step)
            Y = _dense(Yt[a:b])
            # stable sort of -scores: equal scores keep increasing label index
            order = np.argsort(-S[a:b], axis=1, kind="stable")
            R = np.take_along_axis(Y, order, axis=1)  # relevance by rank position
            k = R.sum(axis=1, dtype=np.int64)
            has = k > 0

            one_error += float(np.count_nonzero(~R[:, 0]))

            last = (L - 1) - np.argmax(R[:, ::-1], axis=1)  # 0-based rank of lowest relevant
            coverage += float(last[has].sum())

            # wrong pairs = sum over relevant positions j of #irrelevant before j
            #             = sum(j) - k (k - 1) / 2
            wrong = R @ positions - k * (k - 1) // 2
            pairs = k * (L - k)
            rloss += float(np.divide(wrong, pairs, out=np.zeros(b - a), where=pairs > 0).sum())

            cum = np.cumsum(R, axis=1, dtype=np.int64)
            prec_sum = np.where(R, cum * inv_rank, 0.0).sum(axis=1)
            ap_sum += float((prec_sum[has] / k[has]).sum())
            ap_count += int(np.count_nonzero(has))
        return cls(n, L, one_error, coverage, rloss, ap_sum, ap_count)


def _label_map_from_checked(Yt: _BoolMatrix, S: NDArray[np.floating]) -> float:
    n, L = S.shape
    Ycols = Yt.tocsc() if sp.issparse(Yt) else Yt  # type: ignore[union-attr]
    inv_rank = 1.0 / np.arange(1, n + 1, dtype=np.float64)
    ap_sum = 0.0
    n_valid = 0
    step = max(1, _block_elements() // n)
    for a in range(0, L, step):
        b = min(L, a + step)
        # one row per label, instances along the row
        St = np.ascontiguousarray(-S[:, a:b].T)
        Yb = Ycols[:, a:b]
        Yb = np.ascontiguousarray((Yb.toarray() if sp.issparse(Yb) else Yb).T)
        order = np.argsort(St, axis=1, kind="stable")  # ties: lower instance index first
        R = np.take_along_axis(Yb, order, axis=1)
        pos = R.sum(axis=1, dtype=np.int64)
        has = pos > 0
        cum = np.cumsum(R, axis=1, dtype=np.int64)
        prec_sum = np.where(R, cum * inv_rank, 0.0).sum(axis=1)
        ap_sum += float((prec_sum[has] / pos[has]).sum())
        n_valid += int(np.count_nonzero(has))
    return ap_sum / n_valid if n_valid else float("nan")


def _ranking_inputs(Y_true: MatrixLike, scores: MatrixLike) -> tuple[_BoolMatrix, NDArray[np.floating]]:
    Yt = _check_binary(Y_true, "Y_true")
    S = _check_scores(scores, "scores")
    _check_same_shape(Yt.shape, S.shape, "scores")
    return Yt, S


def _one_error_from(s: _RankingStats) -> float:
    return s.one_error_sum / s.n_samples


def _coverage_from(s: _RankingStats) -> float:
    return s.coverage_sum / s.n_samples


def _normalized_coverage_from(s: _RankingStats) -> float:
    return s.coverage_sum / (s.n_samples * s.n_labels)


def _ranking_loss_from(s: _RankingStats) -> float:
    return s.ranking_loss_sum / s.n_samples


def _average_precision_from(s: _RankingStats) -> float:
    return s.ap_sum / s.ap_count if s.ap_count else float("nan")


# ---------------------------------------------------------------------------
# Public bipartition metrics
# ---------------------------------------------------------------------------

def hamming_loss(Y_true: MatrixLike, Y_pred: MatrixLike) -> float:
    """Hamming loss: the fraction of (instance, label) pairs predicted wrongly.

    ``mean over i of |Z_i xor Y_i| / L``, Z the predicted and Y the true sets.
    No denominator can vanish (inputs have at least one label).

    Parameters
    ----------
    Y_true : array-like or sparse matrix of shape (n_samples, n_labels)
        True binary label indicator (values 0/1 or False/True).
    Y_pred : array-like or sparse matrix of shape (n_samples, n_labels)
        Predicted binary label indicator.

    Returns
    -------
    float
        In [0, 1]; lower is better.

    Examples
    --------
    >>> hamming_loss([[1, 0, 1], [0, 0, 0]], [[1, 1, 0], [0, 0, 0]])
    0.3333333333333333
    """
    return _hamming_from(_bipartition_counts(Y_true, Y_pred))


def subset_accuracy(Y_true: MatrixLike, Y_pred: MatrixLike) -> float:
    """Subset accuracy (exact match): the fraction of instances with ``Z_i == Y_i``.

    Parameters
    ----------
    Y_true : array-like or sparse matrix of shape (n_samples, n_labels)
        True binary label indicator (values 0/1 or False/True).
    Y_pred : array-like or sparse matrix of shape (n_samples, n_labels)
        Predicted binary label indicator.

    Returns
    -------
    float
        In [0, 1]; higher is better. Two empty sets match.

    Examples
    --------
    >>> subset_accuracy([[1, 0], [0, 0]], [[1, 0], [0, 1]])
    0.5
    """
    return _subset_accuracy_from(_bipartition_counts(Y_true, Y_pred))


def example_accuracy(Y_true: MatrixLike, Y_pred: MatrixLike) -> float:
    """Example-based accuracy (Jaccard index) averaged over instances.

    ``mean over i of |Z_i ∩ Y_i| / |Z_i ∪ Y_i|``.

    Parameters
    ----------
    Y_true : array-like or sparse matrix of shape (n_samples, n_labels)
        True binary label indicator (values 0/1 or False/True).
    Y_pred : array-like or sparse matrix of shape (n_samples, n_labels)
        Predicted binary label indicator.

    Returns
    -------
    float
        In [0, 1]; higher is better.

    Notes
    -----
    Zero denominator: an instance with ``Z_i`` and ``Y_i`` both empty scores 1
    (MULAN). scikit-learn's ``jaccard_score(average="samples")`` scores it 0
    by default.

    Examples
    --------
    >>> example_accuracy([[1, 1, 0], [0, 0, 0]], [[1, 0, 1], [0, 0, 0]])
    0.6666666666666666
    """
    return _example_accuracy_from(_bipartition_counts(Y_true, Y_pred))


def example_precision(Y_true: MatrixLike, Y_pred: MatrixLike) -> float:
    """Example-based precision ``mean over i of |Z_i ∩ Y_i| / |Z_i|``.

    Parameters
    ----------
    Y_true : array-like or sparse matrix of shape (n_samples, n_labels)
        True binary label indicator (values 0/1 or False/True).
    Y_pred : array-like or sparse matrix of shape (n_samples, n_labels)
        Predicted binary label indicator.

    Returns
    -------
    float
        In [0, 1]; higher is better.

    Notes
    -----
    Zero denominator (``|Z_i| = 0``): 1 when ``Y_i`` is empty too, else 0 (MULAN).

    Examples
    --------
    >>> example_precision([[1, 1, 0], [1, 0, 0]], [[1, 0, 1], [0, 0, 0]])
    0.25
    """
    return _example_precision_from(_bipartition_counts(Y_true, Y_pred))


def example_recall(Y_true: MatrixLike, Y_pred: MatrixLike) -> float:
    """Example-based recall ``mean over i of |Z_i ∩ Y_i| / |Y_i|``.

    Parameters
    ----------
    Y_true : array-like or sparse matrix of shape (n_samples, n_labels)
        True binary label indicator (values 0/1 or False/True).
    Y_pred : array-like or sparse matrix of shape (n_samples, n_labels)
        Predicted binary label indicator.

    Returns
    -------
    float
        In [0, 1]; higher is better.

    Notes
    -----
    Zero denominator (``|Y_i| = 0``): 1 when ``Z_i`` is empty too, else 0 (MULAN).

    Examples
    --------
    >>> example_recall([[1, 1, 0], [0, 0, 0]], [[1, 0, 1], [0, 1, 0]])
    0.25
    """
    return _example_recall_from(_bipartition_counts(Y_true, Y_pred))


def example_f1(Y_true: MatrixLike, Y_pred: MatrixLike) -> float:
    """Example-based F1 ``mean over i of 2 |Z_i ∩ Y_i| / (|Z_i| + |Y_i|)``.

    Parameters
    ----------
    Y_true : array-like or sparse matrix of shape (n_samples, n_labels)
        True binary label indicator (values 0/1 or False/True).
    Y_pred : array-like or sparse matrix of shape (n_samples, n_labels)
        Predicted binary label indicator.

    Returns
    -------
    float
        In [0, 1]; higher is better.

    Notes
    -----
    Zero denominator (both sets empty): 1 (MULAN). F1 is computed per
    instance, not as the harmonic mean of :func:`example_precision` and
    :func:`example_recall`.

    Examples
    --------
    >>> example_f1([[1, 1, 0], [0, 0, 0]], [[1, 0, 0], [0, 0, 0]])
    0.8333333333333333
    """
    return _example_f1_from(_bipartition_counts(Y_true, Y_pred))


def micro_precision(Y_true: MatrixLike, Y_pred: MatrixLike) -> float:
    """Micro-averaged precision ``TP / (TP + FP)`` on counts pooled over all labels.

    Parameters
    ----------
    Y_true : array-like or sparse matrix of shape (n_samples, n_labels)
        True binary label indicator (values 0/1 or False/True).
    Y_pred : array-like or sparse matrix of shape (n_samples, n_labels)
        Predicted binary label indicator.

    Returns
    -------
    float
        In [0, 1]; higher is better.

    Notes
    -----
    The per-label rule applied to the pooled counts (MULAN):
    ``TP + FP + FN = 0`` (nothing true, nothing predicted) gives 1;
    otherwise ``TP + FP = 0`` gives 0.

    Examples
    --------
    >>> micro_precision([[1, 1, 0], [0, 1, 0]], [[1, 0, 1], [0, 1, 0]])
    0.6666666666666666
    """
    return _micro(_bipartition_counts(Y_true, Y_pred), 0)


def micro_recall(Y_true: MatrixLike, Y_pred: MatrixLike) -> float:
    """Micro-averaged recall ``TP / (TP + FN)`` on counts pooled over all labels.

    Parameters
    ----------
    Y_true : array-like or sparse matrix of shape (n_samples, n_labels)
        True binary label indicator (values 0/1 or False/True).
    Y_pred : array-like or sparse matrix of shape (n_samples, n_labels)
        Predicted binary label indicator.

    Returns
    -------
    float
        In [0, 1]; higher is better.

    Notes
    -----
    ``TP + FP + FN = 0`` gives 1; otherwise ``TP + FN = 0`` gives 0 (MULAN).

    Examples
    --------
    >>> micro_recall([[1, 1, 0], [0, 1, 0]], [[1, 0, 1], [0, 1, 0]])
    0.6666666666666666
    """
    return _micro(_bipartition_counts(Y_true, Y_pred), 1)


def micro_f1(Y_true: MatrixLike, Y_pred: MatrixLike) -> float:
    """Micro-averaged F1 ``2 TP / (2 TP + FP + FN)`` on counts pooled over all labels.

    Parameters
    ----------
    Y_true : array-like or sparse matrix of shape (n_samples, n_labels)
        True binary label indicator (values 0/1 or False/True).
    Y_pred : array-like or sparse matrix of shape (n_samples, n_labels)
        Predicted binary label indicator.

    Returns
    -------
    float
        In [0, 1]; higher is better.

    Notes
    -----
    ``TP + FP + FN = 0`` gives 1 (MULAN); no other denominator can vanish.

    Examples
    --------
    >>> micro_f1([[1, 1, 0], [0, 1, 0]], [[1, 0, 1], [0, 1, 0]])
    0.6666666666666666
    """
    return _micro(_bipartition_counts(Y_true, Y_pred), 2)


def macro_precision(Y_true: MatrixLike, Y_pred: MatrixLike) -> float:
    """Macro-averaged precision: ``tp_l / (tp_l + fp_l)`` per label, averaged over labels.

    Parameters
    ----------
    Y_true : array-like or sparse matrix of shape (n_samples, n_labels)
        True binary label indicator (values 0/1 or False/True).
    Y_pred : array-like or sparse matrix of shape (n_samples, n_labels)
        Predicted binary label indicator.

    Returns
    -------
    float
        In [0, 1]; higher is better.

    Notes
    -----
    Per label (MULAN): ``tp + fp + fn = 0`` gives 1; otherwise ``tp + fp = 0``
    (the label is never predicted but occurs) gives 0. Every label counts in
    the average.

    Examples
    --------
    >>> macro_precision([[1, 0], [1, 0]], [[1, 0], [0, 0]])
    1.0
    """
    return _macro(_bipartition_counts(Y_true, Y_pred), 0)


def macro_recall(Y_true: MatrixLike, Y_pred: MatrixLike) -> float:
    """Macro-averaged recall: ``tp_l / (tp_l + fn_l)`` per label, averaged over labels.

    Parameters
    ----------
    Y_true : array-like or sparse matrix of shape (n_samples, n_labels)
        True binary label indicator (values 0/1 or False/True).
    Y_pred : array-like or sparse matrix of shape (n_samples, n_labels)
        Predicted binary label indicator.

    Returns
    -------
    float
        In [0, 1]; higher is better.

    Notes
    -----
    Per label (MULAN): ``tp + fp + fn = 0`` gives 1; otherwise ``tp + fn = 0``
    (the label never occurs but is predicted) gives 0.

    Examples
    --------
    >>> macro_recall([[1, 0], [1, 0]], [[1, 0], [0, 0]])
    0.75
    """
    return _macro(_bipartition_counts(Y_true, Y_pred), 1)


def macro_f1(Y_true: MatrixLike, Y_pred: MatrixLike) -> float:
    """Macro-averaged F1: ``2 tp_l / (2 tp_l + fp_l + fn_l)`` per label, averaged over labels.

    Parameters
    ----------
    Y_true : array-like or sparse matrix of shape (n_samples, n_labels)
        True binary label indicator (values 0/1 or False/True).
    Y_pred : array-like or sparse matrix of shape (n_samples, n_labels)
        Predicted binary label indicator.

    Returns
    -------
    float
        In [0, 1]; higher is better.

    Notes
    -----
    Per label (MULAN): ``tp + fp + fn = 0`` (nobody has the label and nobody
    is predicted to) gives 1; scikit-learn's ``f1_score(average="macro")``
    gives such a label 0 by default (``zero_division=1.0`` makes them agree).
    F1 is per label, not the harmonic mean of macro precision and recall.

    Examples
    --------
    >>> macro_f1([[1, 0], [1, 0]], [[1, 0], [0, 0]])
    0.8333333333333333
    """
    return _macro(_bipartition_counts(Y_true, Y_pred), 2)


# ---------------------------------------------------------------------------
# Public ranking metrics
# ---------------------------------------------------------------------------


def one_error(Y_true: MatrixLike, scores: MatrixLike) -> float:
    """One-error: the fraction of instances whose top-ranked label is not relevant.

    Parameters
    ----------
    Y_true : array-like or sparse matrix of shape (n_samples, n_labels)
        True binary label indicator.
    scores : array-like or sparse matrix of shape (n_samples, n_labels)
        Finite real scores; higher means more relevant.

    Returns
    -------
    float
        In [0, 1]; lower is better.

    Notes
    -----
    The top label is the one with the highest score, the lowest label index
    among equal top scores. An instance without relevant labels counts as an
    error (its top label cannot be relevant), as MULAN's ``OneError`` does.

    Examples
    --------
    >>> one_error([[0, 1], [1, 0]], [[0.5, 0.5], [0.9, 0.1]])
    0.5
    """
    return _one_error_from(_RankingStats.from_checked(*_ranking_inputs(Y_true, scores)))


def coverage(Y_true: MatrixLike, scores: MatrixLike, *, normalize: bool = False) -> float:
    """Coverage: how far down the ranking one must go to cover every relevant label.

    Per instance, the rank (1 = top) of the lowest-ranked relevant label minus 1;
    averaged over instances.

    Parameters
    ----------
    Y_true : array-like or sparse matrix of shape (n_samples, n_labels)
        True binary label indicator.
    scores : array-like or sparse matrix of shape (n_samples, n_labels)
        Finite real scores; higher means more relevant.
    normalize : bool, default=False
        Divide by the number of labels L (the normalised coverage of the
        PAKDD 2018 tables).

    Returns
    -------
    float
        In [0, L - 1] (normalised: [0, (L - 1) / L]); lower is better.

    Notes
    -----
    Ranks are strict, equal scores ranked by increasing label index. An
    instance without relevant labels contributes 0 and still counts in the
    mean (MULAN). ``sklearn.metrics.coverage_error`` is this value + 1 on the
    instances that have relevant labels (when scores have no ties; sklearn
    ranks ties pessimistically).

    Examples
    --------
    >>> coverage([[1, 0, 1], [0, 0, 0]], [[0.9, 0.5, 0.1], [0.3, 0.2, 0.1]])
    1.0
    >>> coverage([[1, 0, 1], [0, 0, 0]], [[0.9, 0.5, 0.1], [0.3, 0.2, 0.1]], normalize=True)
    0.3333333333333333
    """
    stats = _RankingStats.from_checked(*_ranking_inputs(Y_true, scores))
    return _normalized_coverage_from(stats) if normalize else _coverage_from(stats)


def ranking_loss(Y_true: MatrixLike, scores: MatrixLike) -> float:
    """Ranking loss: the fraction of (relevant, irrelevant) label pairs ordered wrongly.

    Per instance, ``#{(r, s) : r relevant, s irrelevant, s ranked above r} /
    (|Y_i| (L - |Y_i|))``; averaged over instances.

    Parameters
    ----------
    Y_true : array-like or sparse matrix of shape (n_samples, n_labels)
        True binary label indicator.
    scores : array-like or sparse matrix of shape (n_samples, n_labels)
        Finite real scores; higher means more relevant.

    Returns
    -------
    float
        In [0, 1]; lower is better.

    Notes
    -----
    Uses the strict ranks (equal scores ranked by increasing label index), so
    a tied pair is wrong exactly when the irrelevant label has the lower index.
    Zero denominator (all or no labels relevant): the instance scores 0 and
    still counts in the mean (MULAN).

    Examples
    --------
    >>> ranking_loss([[1, 0, 1]], [[0.9, 0.5, 0.1]])
    0.5
    """
    return _ranking_loss_from(_RankingStats.from_checked(*_ranking_inputs(Y_true, scores)))


def average_precision(Y_true: MatrixLike, scores: MatrixLike) -> float:
    """Average precision (example-based, ranking; Zhang & Zhou).

    Per instance with relevant labels,
    ``(1 / |Y_i|) * sum over relevant r of #{relevant r' : rank(r') <= rank(r)} / rank(r)``;
    averaged over those instances.

    Parameters
    ----------
    Y_true : array-like or sparse matrix of shape (n_samples, n_labels)
        True binary label indicator.
    scores : array-like or sparse matrix of shape (n_samples, n_labels)
        Finite real scores; higher means more relevant.

    Returns
    -------
    float
        In [0, 1]; higher is better. NaN when no instance has a relevant label.

    Notes
    -----
    Strict ranks, equal scores ranked by increasing label index. Instances
    without relevant labels are skipped (MULAN); if every instance is skipped
    the mean is 0/0 and NaN is returned (MULAN's value too).
    scikit-learn's ``label_ranking_average_precision_score`` instead counts
    such instances as 1 (and ranks ties pessimistically).

    Examples
    --------
    >>> average_precision([[1, 0, 1], [0, 0, 0]], [[0.9, 0.5, 0.1], [0.3, 0.2, 0.1]])
    0.8333333333333333
    """
    return _average_precision_from(_RankingStats.from_checked(*_ranking_inputs(Y_true, scores)))


def label_map(Y_true: MatrixLike, scores: MatrixLike) -> float:
    """Label-based mean average precision (MAP, TRECVID style).

    For each label l, rank the instances by decreasing ``scores[:, l]`` and take
    the non-interpolated average precision
    ``(1 / P_l) * sum over positive instances i of #{positives at positions <= pos(i)} / pos(i)``
    (``P_l`` the number of positive instances, positions from 1); then average
    over labels.

    Parameters
    ----------
    Y_true : array-like or sparse matrix of shape (n_samples, n_labels)
        True binary label indicator.
    scores : array-like or sparse matrix of shape (n_samples, n_labels)
        Finite real scores; higher means more relevant.

    Returns
    -------
    float
        In [0, 1]; higher is better. NaN when no label has a positive instance.

    Notes
    -----
    Ties between instances: the lower instance index is ranked first (MULAN's
    stable sort of the instances in input order gives the same). A label with
    no positive instance is left out of the average (MULAN's
    ``MeanAveragePrecision``); if every label is left out, NaN is returned.

    Examples
    --------
    >>> label_map([[1, 0], [0, 1], [1, 0]], [[0.9, 0.2], [0.8, 0.1], [0.1, 0.3]])
    0.5833333333333333
    """
    return _label_map_from_checked(*_ranking_inputs(Y_true, scores))


# ---------------------------------------------------------------------------
# Metrics at the top of the ranking (the Extreme Classification Repository's)
# ---------------------------------------------------------------------------


def _check_k(k: object) -> int:
    if isinstance(k, (bool, np.bool_)) or not isinstance(k, numbers.Integral):
        raise TypeError(f"k must be an integer; got {k!r} of type {type(k).__name__}")
    if k < 1:
        raise ValueError(f"k must be at least 1; got k={k}")
    return int(k)


def _check_positive(value: object, name: str) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number; got {value!r} of type {type(value).__name__}")
    if not (np.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be positive and finite; got {name}={value!r}")
    return float(value)


def _label_counts_of(Yt: _BoolMatrix) -> NDArray[np.int64]:
    if sp.issparse(Yt):
        return np.bincount(Yt.indices, minlength=Yt.shape[1]).astype(np.int64)  # type: ignore[union-attr]
    return Yt.sum(axis=0, dtype=np.int64)  # type: ignore[union-attr,return-value]


def propensities(Y_train: MatrixLike, A: float = 0.55, B: float = 1.5) -> NDArray[np.float64]:
    """Label propensities of Jain, Prabhu & Varma (2016) from the training label frequencies.

    ``p_l = 1 / (1 + C exp(-A log(N_l + B)))`` with ``C = (log N - 1) (B + 1)^A``,
    N the number of training rows, N_l the number of them holding label l and
    log the natural logarithm. The propensity-scored metrics weight label l by
    ``1 / p_l``, so that rare labels count more.

    Parameters
    ----------
    Y_train : array-like or sparse matrix of shape (n_train, n_labels)
        Training binary label indicator (at least 3 rows).
    A : float, default=0.55
        Exponent of the propensity model (> 0).
    B : float, default=1.5
        Offset of the propensity model (> 0).

    Returns
    -------
    ndarray of shape (n_labels,)
        ``p_l`` in (0, 1); a label no training row holds gets the smallest value.

    Raises
    ------
    ValueError
        ``Y_train`` is not a binary indicator matrix or has fewer than 3 rows
        (``C`` is positive only for ``N > e``); ``A`` or ``B`` not positive.

    Notes
    -----
    A = 0.55 and B = 1.5 are the repository's values for every data set but
    Wikipedia (A = 0.5, B = 0.4) and Amazon (A = 0.6, B = 2.6).

    References
    ----------
    H. Jain, Y. Prabhu and M. Varma, "Extreme multi-label loss functions for
    recommendation, tagging, ranking & other missing label applications",
    KDD 2016.

    Examples
    --------
    >>> propensities([[1, 0, 0], [1, 0, 0], [1, 1, 0], [1, 0, 0]]).round(4)
    array([0.7998, 0.7213, 0.6615])
    """
    A = _check_positive(A, "A")
    B = _check_positive(B, "B")
    Yt = _check_binary(Y_train, "Y_train")
    n = Yt.shape[0]
    if n < 3:
        raise ValueError(
            f"Y_train must have at least 3 rows to give propensities in (0, 1): "
            f"C = (log N - 1)(B + 1)^A is positive only for N > e; got N = {n}"
        )
    C = (np.log(n) - 1.0) * (B + 1.0) ** A
    return 1.0 / (1.0 + C * np.exp(-A * np.log(_label_counts_of(Yt) + B)))


def _inverse_propensities(p: ArrayLike | None, Y_train: MatrixLike | None, n_labels: int) -> NDArray[np.float64]:
    """``1 / p_l`` from the propensities given or from the training labels (exactly one of them)."""
    if p is None and Y_train is None:
        raise ValueError(
            "the propensity-scored metrics need the label propensities: pass Y_train (the "
            "training labels) or propensities (from mlneighbors.metrics.propensities)"
        )
    if p is not None and Y_train is not None:
        raise ValueError("pass either Y_train or propensities, not both")
    if Y_train is not None:
        p = propensities(Y_train)
        if p.shape[0] != n_labels:
            raise ValueError(
                f"Y_train must have the {n_labels} label columns of Y_true; got {p.shape[0]}"
            )
        return 1.0 / p
    P = np.asarray(p)
    if not np.issubdtype(P.dtype, np.number) or np.issubdtype(P.dtype, np.complexfloating):
        raise ValueError(f"propensities must be real numbers; got dtype {P.dtype}")
    if P.shape != (n_labels,):
        raise ValueError(f"propensities must have shape (n_labels,) = ({n_labels},); got shape {P.shape}")
    P = P.astype(np.float64)
    bad = ~(np.isfinite(P) & (P > 0))
    if bad.any():
        raise ValueError(
            f"propensities must be positive and finite; found {P[bad][:5].tolist()} "
            f"at label(s) {np.flatnonzero(bad)[:5].tolist()}"
        )
    return 1.0 / P


def _check_sparse_scores(S: MatrixLike, name: str) -> sp.csr_matrix:
    """Validate sparse scores; return a float CSR copy, canonical and without stored zeros."""
    _shape_2d(S, name)
    C = sp.csr_matrix(S, copy=True)
    dt = C.dtype
    if not (dt == np.bool_ or (np.issubdtype(dt, np.number) and not np.issubdtype(dt, np.complexfloating))):
        raise ValueError(f"{name} must be a real-valued matrix; got dtype {dt}")
    if not np.issubdtype(dt, np.floating):
        C = C.astype(np.float64)
    C.sum_duplicates()
    finite = np.isfinite(C.data)
    if not finite.all():
        rows = np.repeat(np.arange(C.shape[0]), np.diff(C.indptr))[~finite]
        raise _non_finite_error(name, C.data[~finite], int(rows[0]), int(rows[-1]))
    # a stored zero is a missing entry: both rank as score 0 by the tie rule
    C.eliminate_zeros()
    return C


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


# shared parts of the docstrings of the four metrics at k
_XC_REFERENCE_DOC = """K. Bhatia, K. Dahiya, H. Jain, A. Mittal, Y. Prabhu and M. Varma, "The
    extreme classification repository: multi-label datasets and code", 2016,
    http://manikvarma.org/downloads/XC/XMLRepository.html"""

_JPV_REFERENCE_DOC = """H. Jain, Y. Prabhu and M. Varma, "Extreme multi-label loss functions for
    recommendation, tagging, ranking & other missing label applications",
    KDD 2016."""

_PS_RETURNS_DOC = """float
        In [0, 1]; higher is better; 1 for a ranking that puts each instance's
        true labels first, rarest first. NaN when no instance has a relevant label."""

_RANKING_PARAMETERS_DOC = """Y_true : array-like or sparse matrix of shape (n_samples, n_labels)
        True binary label indicator; a sparse one is never densified.
    ranking : array-like of shape (n_samples, k'), or array-like or sparse matrix of shape (n_samples, n_labels)
        Either the label indices of each row's top k' labels, best first, as
        an integer array (the ``labels`` of a top-k prediction; k' >= k,
        no repeated label among the first k), or a real score matrix (float
        or bool; dense, or sparse with missing entries scoring 0), ranked by
        decreasing score, equal scores by increasing label index.
    k : int, default=5
        Number of top positions evaluated (>= 1). With a score matrix k may
        exceed n_labels: the positions past the last label hold no label."""


def precision_at_k(Y_true: MatrixLike, ranking: MatrixLike, k: int = 5) -> float:
    """Precision at k: the fraction of the top k ranked labels that are relevant.

    ``P@k = (1 / k) * sum over the top k labels l of y_l``, averaged over instances.

    Parameters
    ----------
    {parameters}

    Returns
    -------
    float
        In [0, 1]; higher is better. At most ``mean of min(k, |Y_i|) / k``.

    Notes
    -----
    The Extreme Classification Repository's definition (its ``precision_k``):
    an instance without relevant labels scores 0 and counts in the mean; the
    denominator is k even when fewer than k labels are relevant.

    References
    ----------
    {xc_reference}

    Examples
    --------
    >>> precision_at_k([[1, 0, 1], [0, 1, 0]], [[0.9, 0.5, 0.1], [0.2, 0.2, 0.6]], k=2)
    0.25
    >>> precision_at_k([[1, 0, 1], [0, 1, 0]], [[0, 2], [1, 0]], k=1)  # label indices, best first
    1.0
    """
    return _at_k_value("precision", Y_true, ranking, k)


def ndcg_at_k(Y_true: MatrixLike, ranking: MatrixLike, k: int = 5) -> float:
    """Normalised discounted cumulative gain at k.

    ``DCG@k = sum over positions r = 1..k of y_(r) / log2(r + 1)``, y_(r) the
    relevance of the label ranked r-th; ``nDCG@k = DCG@k / sum over r = 1..min(k, |Y_i|)
    of 1 / log2(r + 1)`` (the DCG of a perfect ranking), averaged over instances.

    Parameters
    ----------
    {parameters}

    Returns
    -------
    float
        In [0, 1]; higher is better; 1 for a perfect ranking when every
        instance has a relevant label.

    Notes
    -----
    The Extreme Classification Repository's definition (its ``nDCG_k``): an
    instance without relevant labels scores 0 and counts in the mean.

    References
    ----------
    {xc_reference}

    Examples
    --------
    >>> round(ndcg_at_k([[1, 0, 1]], [[0.9, 0.5, 0.1]], k=2), 6)  # 1 / (1 + 1/log2(3))
    0.613147
    """
    return _at_k_value("ndcg", Y_true, ranking, k)


_PS_PARAMETERS_DOC = """propensities : array-like of shape (n_labels,), default=None
        Label propensities ``p_l > 0`` (:func:`propensities`); label l weighs ``1 / p_l``.
    Y_train : array-like or sparse matrix of shape (n_train, n_labels), default=None
        Training labels, from which the propensities are computed with the
        defaults A = 0.55, B = 1.5 (call :func:`propensities` for others).
        Exactly one of ``propensities`` and ``Y_train`` is given."""

_PS_NORMALISATION_DOC = """The propensity-scored sums are normalised as the repository's
    ``precision_wt_k`` and ``nDCG_wt_k`` do, by the best value achievable:
    the sum over instances of the propensity-scored value is divided by the
    sum over instances of the value of the best ranking, which puts each
    instance's true labels first in decreasing order of ``1 / p_l`` (the k
    largest inverse propensities among its true labels). This is a ratio of
    means, not a mean of per-instance ratios: an instance whose true labels
    are rare weighs more. Instances without relevant labels add 0 to both
    sums, so they do not count; NaN when no instance has a relevant label
    (0/0). The KDD 2016 paper defines PSP@k and PSnDCG@k without this
    normalisation."""


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

    Parameters
    ----------
    {parameters}
    {ps_parameters}

    Returns
    -------
    {ps_returns}

    Notes
    -----
    {normalisation}

    References
    ----------
    {jpv_reference}
    {xc_reference}

    Examples
    --------
    >>> psprecision_at_k([[1, 0, 1]], [[0.9, 0.5, 0.1]], k=2, propensities=[0.5, 1.0, 0.25])
    0.3333333333333333
    """
    return _at_k_value("psprecision", Y_true, ranking, k, propensities, Y_train)


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

    Parameters
    ----------
    {parameters}
    {ps_parameters}

    Returns
    -------
    {ps_returns}

    Notes
    -----
    {normalisation} (The repository divides both sums by ``sum over r = 1..k of
    1 / log2(r + 1)`` for every instance; the factor cancels.)

    References
    ----------
    {jpv_reference}
    {xc_reference}

    Examples
    --------
    >>> round(psndcg_at_k([[1, 0, 1]], [[0.9, 0.5, 0.1]], k=2, propensities=[0.5, 1.0, 0.25]), 6)
    0.380094
    """
    return _at_k_value("psndcg", Y_true, ranking, k, propensities, Y_train)


for _f in (precision_at_k, ndcg_at_k, psprecision_at_k, psndcg_at_k):
    _f.__doc__ = cast(str, _f.__doc__).format(
        parameters=_RANKING_PARAMETERS_DOC,
        ps_parameters=_PS_PARAMETERS_DOC,
        ps_returns=_PS_RETURNS_DOC,
        normalisation=_PS_NORMALISATION_DOC,
        xc_reference=_XC_REFERENCE_DOC,
        jpv_reference=_JPV_REFERENCE_DOC,
    )
del _f


# ---------------------------------------------------------------------------
# Registry and the single entry point
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Metric:
    """A named metric and how to read it.

    Parameters
    ----------
    name : str
        Key in :data:`METRICS` and in the dict :func:`evaluate` returns.
    func : callable
        ``func(Y_true, Y_pred)`` for a bipartition metric, ``func(Y_true, scores)``
        for a ranking metric; returns a float.
    kind : {"bipartition", "ranking"}
        Which second input the metric needs.
    greater_is_better : bool
        True for accuracies, precisions, recalls, F1s, average precisions and
        the at-k metrics; False for the losses, one-error and coverage.
    needs_propensities : bool, default=False
        True for the propensity-scored metrics, whose ``func`` also needs
        ``Y_train=`` or ``propensities=`` (and :func:`evaluate` its ``Y_train``
        or ``propensities``).

    Examples
    --------
    >>> from mlneighbors.metrics import METRICS
    >>> metric = METRICS["hamming_loss"]
    >>> metric.kind, metric.greater_is_better
    ('bipartition', False)
    >>> metric([[1, 0], [0, 1]], [[1, 1], [0, 1]])
    0.25
    """


    name: str
    func: Callable[..., float]
    kind: Literal["bipartition", "ranking"]
    greater_is_better: bool
    needs_propensities: bool = False

    def __call__(self, Y_true: MatrixLike, Y_other: MatrixLike, **kwargs: object) -> float:
        """Apply :attr:`func` to ``(Y_true, Y_pred)`` or ``(Y_true, scores)`` (and ``kwargs``)."""
        return self.func(Y_true, Y_other, **kwargs)


_BIPARTITION_FROM_COUNTS: dict[str, Callable[[_BipartitionCounts], float]] = {
    "hamming_loss": _hamming_from,
    "subset_accuracy": _subset_accuracy_from,
    "example_accuracy": _example_accuracy_from,
    "example_precision": _example_precision_from,
    "example_recall": _example_recall_from,
    "example_f1": _example_f1_from,
    "micro_precision": partial(_micro, which=0),
    "micro_recall": partial(_micro, which=1),
    "micro_f1": partial(_micro, which=2),
    "macro_precision": partial(_macro, which=0),
    "macro_recall": partial(_macro, which=1),
    "macro_f1": partial(_macro, which=2),
}

_RANKING_FROM_STATS: dict[str, Callable[[_RankingStats], float]] = {
    "one_error": _one_error_from,
    "coverage": _coverage_from,
    "normalized_coverage": _normalized_coverage_from,
    "ranking_loss": _ranking_loss_from,
    "average_precision": _average_precision_from,
}

_LOWER_IS_BETTER = {"hamming_loss", "one_error", "coverage", "normalized_coverage", "ranking_loss"}

_AT_K_FUNCS: dict[str, Callable[..., float]] = {
    "precision": precision_at_k,
    "ndcg": ndcg_at_k,
    "psprecision": psprecision_at_k,
    "psndcg": psndcg_at_k,
}

#: the at-k metrics of METRICS: name -> (kind, k); k = 1, 3, 5 as the repository reports them
_AT_K: dict[str, tuple[str, int]] = {f"{kind}_at_{k}": (kind, k) for kind in _AT_K_FUNCS for k in (1, 3, 5)}

_PUBLIC_FUNCS: dict[str, Callable[..., float]] = {
    "hamming_loss": hamming_loss,
    "subset_accuracy": subset_accuracy,
    "example_accuracy": example_accuracy,
    "example_precision": example_precision,
    "example_recall": example_recall,
    "example_f1": example_f1,
    "micro_precision": micro_precision,
    "micro_recall": micro_recall,
    "micro_f1": micro_f1,
    "macro_precision": macro_precision,
    "macro_recall": macro_recall,
    "macro_f1": macro_f1,
    "one_error": one_error,
    "coverage": coverage,
    "normalized_coverage": partial(coverage, normalize=True),
    "ranking_loss": ranking_loss,
    "average_precision": average_precision,
    "label_map": label_map,
    **{name: partial(_AT_K_FUNCS[kind], k=k) for name, (kind, k) in _AT_K.items()},
}

#: Every metric by name: the public functions plus ``"normalized_coverage"``
#: (:func:`coverage` with ``normalize=True``) and the at-k metrics
#: ``precision_at_k``, ``ndcg_at_k``, ``psprecision_at_k`` and ``psndcg_at_k``
#: at k = 1, 3 and 5 (``"precision_at_1"`` ... ``"psndcg_at_5"``; ranking
#: metrics, computed from the scores). Bipartition metrics first, in the order
#: :func:`evaluate` reports them.
METRICS: dict[str, Metric] = {
    name: Metric(
        name=name,
        func=func,
        kind="bipartition" if name in _BIPARTITION_FROM_COUNTS else "ranking",
        greater_is_better=name not in _LOWER_IS_BETTER,
        needs_propensities=name in _AT_K and _AT_K[name][0].startswith("ps"),
    )
    for name, func in _PUBLIC_FUNCS.items()
}


class _Prepared:
    """Inputs validated once; the shared statistics computed on first use."""

    def __init__(
        self,
        Y_true: MatrixLike,
        Y_pred: MatrixLike | None,
        scores: MatrixLike | None,
        names: list[str],
        Y_train: MatrixLike | None = None,
        propensities: ArrayLike | None = None,
    ) -> None:
        self.Yt = _check_binary(Y_true, "Y_true")
        self.Yp: _BoolMatrix | None = None
        self.S: NDArray[np.floating] | None = None
        if Y_pred is not None:
            self.Yp = _check_binary(Y_pred, "Y_pred")
            _check_same_shape(self.Yt.shape, self.Yp.shape, "Y_pred")
        at_k = [name for name in names if name in _AT_K]
        self._ks = [_AT_K[name][1] for name in at_k]
        if scores is not None:
            if at_k and all(name in _AT_K for name in names if METRICS[name].kind == "ranking"):
                # only the at-k metrics read the scores: sparse ones need not be densified
                self.S = _check_sparse_scores(scores, "scores") if sp.issparse(scores) else _check_scores(scores)
            else:
                self.S = _check_scores(scores, "scores")
            _check_same_shape(self.Yt.shape, self.S.shape, "scores")
        self._inv = None
        if any(METRICS[name].needs_propensities for name in at_k):
            self._inv = _inverse_propensities(propensities, Y_train, self.Yt.shape[1])

    # evaluate() has checked that the input each metric needs is present
    @cached_property
    def counts(self) -> _BipartitionCounts:
        return _BipartitionCounts.from_checked(self.Yt, cast(_BoolMatrix, self.Yp))

    @cached_property
    def ranking(self) -> _RankingStats:
        return _RankingStats.from_checked(self.Yt, cast("NDArray[np.floating]", self.S))

    @cached_property
    def at_k(self) -> _AtKStats:
        return _AtKStats.from_checked(self.Yt, cast("NDArray[np.floating]", self.S), self._ks, self._inv)

    def value(self, name: str) -> float:
        if name in _AT_K:
            kind, k = _AT_K[name]
            return float(getattr(self.at_k, kind)(k))
        if name in _BIPARTITION_FROM_COUNTS:
            return float(_BIPARTITION_FROM_COUNTS[name](self.counts))
        if name == "label_map":
            return float(_label_map_from_checked(self.Yt, cast("NDArray[np.floating]", self.S)))
        return float(_RANKING_FROM_STATS[name](self.ranking))


def _resolve_names(
    metrics: str | Iterable[str] | None, have_pred: bool, have_scores: bool, have_propensities: bool
) -> list[str]:
    if metrics is None:
        names = [
            m.name
            for m in METRICS.values()
            if m.name not in _AT_K
            and ((m.kind == "bipartition" and have_pred) or (m.kind == "ranking" and have_scores))
        ]
        if not names:
            raise ValueError("evaluate needs Y_pred (bipartition metrics) and/or scores (ranking metrics); got neither")
        return names
    requested = [metrics] if isinstance(metrics, str) else list(metrics)
    unknown = [m for m in requested if m not in METRICS]
    if unknown:
        raise ValueError(f"unknown metric name(s) {unknown}; valid names are {sorted(METRICS)}")
    for name in requested:
        kind = METRICS[name].kind
        if kind == "bipartition" and not have_pred:
            raise ValueError(f"metric {name!r} is a bipartition metric and needs Y_pred, but Y_pred is None")
        if kind == "ranking" and not have_scores:
            raise ValueError(f"metric {name!r} is a ranking metric and needs scores, but scores is None")
        if METRICS[name].needs_propensities and not have_propensities:
            raise ValueError(
                f"metric {name!r} is propensity-scored and needs Y_train (the training labels) "
                "or propensities, but both are None"
            )
    return list(dict.fromkeys(requested))


def evaluate(
    Y_true: MatrixLike,
    Y_pred: MatrixLike | None = None,
    scores: MatrixLike | None = None,
    *,
    metrics: str | Iterable[str] | None = None,
    Y_train: MatrixLike | None = None,
    propensities: ArrayLike | None = None,
) -> dict[str, float]:
    """Compute several metrics from one validation of the inputs.

    Parameters
    ----------
    Y_true : array-like or sparse matrix of shape (n_samples, n_labels)
        True binary label indicator.
    Y_pred : array-like or sparse matrix of shape (n_samples, n_labels), default=None
        Predicted binary label indicator; needed by the bipartition metrics.
    scores : array-like or sparse matrix of shape (n_samples, n_labels), default=None
        Finite real scores; needed by the ranking metrics.
    metrics : str or iterable of str, default=None
        Names from :data:`METRICS` (a single string is one name). None: every
        metric whose input was given (bipartition metrics when ``Y_pred`` is
        given, ranking metrics when ``scores`` is given) except the at-k
        metrics, which are computed only when named.
    Y_train : array-like or sparse matrix of shape (n_train, n_labels), default=None
        Training labels, whose label frequencies give the propensities
        (:func:`propensities`, A = 0.55, B = 1.5) of the propensity-scored
        metrics (``psprecision_at_*``, ``psndcg_at_*``); not read by the others.
    propensities : array-like of shape (n_labels,), default=None
        The propensities themselves, instead of ``Y_train``.

    Returns
    -------
    dict of str to float
        ``{name: value}`` in the order asked for (None: the order of
        :data:`METRICS`), duplicates removed. Values equal those of the
        individual functions.

    Raises
    ------
    ValueError
        An unknown metric name (the message lists the valid ones); a metric
        whose input (``Y_pred`` or ``scores``) is None; a propensity-scored
        metric with both ``Y_train`` and ``propensities`` None; neither
        ``Y_pred`` nor ``scores`` given with ``metrics=None``; or any invalid
        input (see the individual functions).

    Notes
    -----
    The inputs are validated and converted once. All bipartition metrics share
    one pass computing per-instance and per-label counts; one-error, coverage,
    ranking loss and average precision share one blocked argsort of the
    scores per row; ``label_map`` sorts per label; the at-k metrics share one
    pass selecting each row's top labels for the largest k asked (sparse
    scores stay sparse when no other ranking metric is asked for).

    Examples
    --------
    >>> evaluate([[1, 0], [0, 1]], [[1, 0], [1, 1]], metrics=["hamming_loss", "subset_accuracy"])
    {'hamming_loss': 0.25, 'subset_accuracy': 0.5}
    >>> values = evaluate([[1, 0], [0, 1]], scores=[[0.9, 0.1], [0.8, 0.2]],
    ...                   metrics=["precision_at_1", "psprecision_at_1"], Y_train=[[1, 0], [1, 0], [0, 1]])
    >>> {name: round(value, 4) for name, value in values.items()}
    {'precision_at_1': 0.5, 'psprecision_at_1': 0.4962}
    """
    have_propensities = Y_train is not None or propensities is not None
    names = _resolve_names(metrics, Y_pred is not None, scores is not None, have_propensities)
    prepared = _Prepared(Y_true, Y_pred, scores, names, Y_train, propensities)
    return {name: prepared.value(name) for name in names}

