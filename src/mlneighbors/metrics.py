"""Multi-label evaluation measures, with MULAN's definitions.

Two families, following MULAN (Tsoumakas et al.) and the project spec
(``docs/ALGORITHMS.md``, section "Metrics"):

* **Bipartition metrics** ``metric(Y_true, Y_pred)`` compare the predicted
  label sets ``Z_i`` with the true sets ``Y_i``: Hamming loss, subset
  accuracy, the example-based accuracy / precision / recall / F1 and the
  label-based micro and macro precision / recall / F1.
* **Ranking metrics** ``metric(Y_true, scores)`` use a real-valued score per
  (instance, label): one-error, coverage, ranking loss, (example-based,
  ranking) average precision and the label-based mean average precision
  ``label_map``.

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
  which is densified); NaN and +-inf are rejected with ``ValueError``.
* **Strict ranks and the tie rule.** In each row the labels are ranked by
  decreasing score; equal scores are ranked by increasing label index (for
  equal scores label 0 is ranked above label 3). Rank 1 is the top. Note that
  MULAN's ``MultiLabelOutput.ranksFromValues`` breaks ties the other way
  round (higher index first); the project spec fixes the lower-index rule.
* **Zero denominators** follow MULAN's ``InformationRetrievalMeasures`` and
  are stated in each docstring.

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

Evaluating 100 000 x 1000 matrices is fine: everything is vectorised and the
ranking metrics work on blocks of rows (labels for ``label_map``) of about a
million entries, so the extra memory stays bounded.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cached_property, partial
from typing import Literal, Union, cast

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

from ._config import working_memory_bytes

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
    "one_error",
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
            bad = blk[~finite]
            kinds = sorted({"NaN" if np.isnan(v) else ("inf" if v > 0 else "-inf") for v in bad[:1000]})
            raise ValueError(
                f"{name} must be finite; found {', '.join(kinds)} "
                f"({int(bad.size)} non-finite value(s) in rows {a}..{a + blk.shape[0] - 1})"
            )
    return A


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
# Registry and the single entry point
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Metric:
    """A named metric and how to read it.

    Attributes
    ----------
    name : str
        Key in :data:`METRICS` and in the dict :func:`evaluate` returns.
    func : callable
        ``func(Y_true, Y_pred)`` for a bipartition metric, ``func(Y_true, scores)``
        for a ranking metric; returns a float.
    kind : {"bipartition", "ranking"}
        Which second input the metric needs.
    greater_is_better : bool
        True for accuracies, precisions, recalls, F1s and average precisions;
        False for the losses, one-error and coverage.
    """

    name: str
    func: Callable[[MatrixLike, MatrixLike], float]
    kind: Literal["bipartition", "ranking"]
    greater_is_better: bool

    def __call__(self, Y_true: MatrixLike, Y_other: MatrixLike) -> float:
        """Apply :attr:`func` to ``(Y_true, Y_pred)`` or ``(Y_true, scores)``."""
        return self.func(Y_true, Y_other)


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

_PUBLIC_FUNCS: dict[str, Callable[[MatrixLike, MatrixLike], float]] = {
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
}

#: Every metric by name: the public functions plus ``"normalized_coverage"``
#: (:func:`coverage` with ``normalize=True``). Bipartition metrics first, in
#: the order :func:`evaluate` reports them.
METRICS: dict[str, Metric] = {
    name: Metric(
        name=name,
        func=func,
        kind="bipartition" if name in _BIPARTITION_FROM_COUNTS else "ranking",
        greater_is_better=name not in _LOWER_IS_BETTER,
    )
    for name, func in _PUBLIC_FUNCS.items()
}


class _Prepared:
    """Inputs validated once; the shared statistics computed on first use."""

    def __init__(self, Y_true: MatrixLike, Y_pred: MatrixLike | None, scores: MatrixLike | None) -> None:
        self.Yt = _check_binary(Y_true, "Y_true")
        self.Yp: _BoolMatrix | None = None
        self.S: NDArray[np.floating] | None = None
        if Y_pred is not None:
            self.Yp = _check_binary(Y_pred, "Y_pred")
            _check_same_shape(self.Yt.shape, self.Yp.shape, "Y_pred")
        if scores is not None:
            self.S = _check_scores(scores, "scores")
            _check_same_shape(self.Yt.shape, self.S.shape, "scores")

    # evaluate() has checked that the input each metric needs is present
    @cached_property
    def counts(self) -> _BipartitionCounts:
        return _BipartitionCounts.from_checked(self.Yt, cast(_BoolMatrix, self.Yp))

    @cached_property
    def ranking(self) -> _RankingStats:
        return _RankingStats.from_checked(self.Yt, cast("NDArray[np.floating]", self.S))

    def value(self, name: str) -> float:
        if name in _BIPARTITION_FROM_COUNTS:
            return float(_BIPARTITION_FROM_COUNTS[name](self.counts))
        if name == "label_map":
            return float(_label_map_from_checked(self.Yt, cast("NDArray[np.floating]", self.S)))
        return float(_RANKING_FROM_STATS[name](self.ranking))


def _resolve_names(metrics: str | Iterable[str] | None, have_pred: bool, have_scores: bool) -> list[str]:
    if metrics is None:
        names = [
            m.name
            for m in METRICS.values()
            if (m.kind == "bipartition" and have_pred) or (m.kind == "ranking" and have_scores)
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
    return list(dict.fromkeys(requested))


def evaluate(
    Y_true: MatrixLike,
    Y_pred: MatrixLike | None = None,
    scores: MatrixLike | None = None,
    *,
    metrics: str | Iterable[str] | None = None,
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
        given, ranking metrics when ``scores`` is given).

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
        whose input (``Y_pred`` or ``scores``) is None; neither given with
        ``metrics=None``; or any invalid input (see the individual functions).

    Notes
    -----
    The inputs are validated and converted once. All bipartition metrics share
    one pass computing per-instance and per-label counts; one-error, coverage,
    ranking loss and average precision share one blocked argsort of the
    scores per row; ``label_map`` sorts per label.

    Examples
    --------
    >>> evaluate([[1, 0], [0, 1]], [[1, 0], [1, 1]], metrics=["hamming_loss", "subset_accuracy"])
    {'hamming_loss': 0.25, 'subset_accuracy': 0.5}
    """
    names = _resolve_names(metrics, Y_pred is not None, scores is not None)
    prepared = _Prepared(Y_true, Y_pred, scores)
    return {name: prepared.value(name) for name in names}

