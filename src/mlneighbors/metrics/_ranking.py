"""Ranking metrics on a real score per (instance, label): one-error, coverage, ranking loss,
average precision (one blocked argsort per row) and the label-based ``label_map`` (per label).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from ._docstrings import fill_doc
from ._validation import (
    MatrixLike,
    _block_elements,
    _BoolMatrix,
    _check_binary,
    _check_same_shape,
    _check_scores,
    _dense,
)


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


@fill_doc
def one_error(Y_true: MatrixLike, scores: MatrixLike) -> float:
    """One-error: the fraction of instances whose top-ranked label is not relevant.

    {ranking_parameters}

    {returns_lower}

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


@fill_doc
def coverage(Y_true: MatrixLike, scores: MatrixLike, *, normalize: bool = False) -> float:
    """Coverage: how far down the ranking one must go to cover every relevant label.

    Per instance, the rank (1 = top) of the lowest-ranked relevant label minus 1;
    averaged over instances.

    {ranking_parameters}
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


@fill_doc
def ranking_loss(Y_true: MatrixLike, scores: MatrixLike) -> float:
    """Ranking loss: the fraction of (relevant, irrelevant) label pairs ordered wrongly.

    Per instance, ``#{(r, s) : r relevant, s irrelevant, s ranked above r} /
    (|Y_i| (L - |Y_i|))``; averaged over instances.

    {ranking_parameters}

    {returns_lower}

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


@fill_doc
def average_precision(Y_true: MatrixLike, scores: MatrixLike) -> float:
    """Average precision (example-based, ranking; Zhang & Zhou).

    Per instance with relevant labels,
    ``(1 / |Y_i|) * sum over relevant r of #{relevant r' : rank(r') <= rank(r)} / rank(r)``;
    averaged over those instances.

    {ranking_parameters}

    {returns_higher} NaN when no instance has a relevant label.

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


@fill_doc
def label_map(Y_true: MatrixLike, scores: MatrixLike) -> float:
    """Label-based mean average precision (MAP, TRECVID style).

    For each label l, rank the instances by decreasing ``scores[:, l]`` and take
    the non-interpolated average precision
    ``(1 / P_l) * sum over positive instances i of #{positives at positions <= pos(i)} / pos(i)``
    (``P_l`` the number of positive instances, positions from 1); then average
    over labels.

    {ranking_parameters}

    {returns_higher} NaN when no label has a positive instance.

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
