"""Label-based bipartition metrics: micro-averaged (counts pooled over labels) and macro-averaged
(per-label values averaged) precision, recall and F1.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from ._bipartition import _bipartition_counts, _BipartitionCounts, _pr_f1
from ._docstrings import fill_doc
from ._validation import MatrixLike


def _label_counts(c: _BipartitionCounts) -> tuple[NDArray, NDArray, NDArray]:
    tp = c.col_inter
    return tp, c.col_pred - tp, c.col_true - tp


def _micro(c: _BipartitionCounts, which: int) -> float:
    tp, fp, fn = (np.asarray(x.sum()) for x in _label_counts(c))
    return float(_pr_f1(tp, fp, fn)[which])


def _macro(c: _BipartitionCounts, which: int) -> float:
    return float(_pr_f1(*_label_counts(c))[which].mean())


@fill_doc
def micro_precision(Y_true: MatrixLike, Y_pred: MatrixLike) -> float:
    """Micro-averaged precision ``TP / (TP + FP)`` on counts pooled over all labels.

    {bipartition_parameters}

    {returns_higher}

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


@fill_doc
def micro_recall(Y_true: MatrixLike, Y_pred: MatrixLike) -> float:
    """Micro-averaged recall ``TP / (TP + FN)`` on counts pooled over all labels.

    {bipartition_parameters}

    {returns_higher}

    Notes
    -----
    ``TP + FP + FN = 0`` gives 1; otherwise ``TP + FN = 0`` gives 0 (MULAN).

    Examples
    --------
    >>> micro_recall([[1, 1, 0], [0, 1, 0]], [[1, 0, 1], [0, 1, 0]])
    0.6666666666666666
    """
    return _micro(_bipartition_counts(Y_true, Y_pred), 1)


@fill_doc
def micro_f1(Y_true: MatrixLike, Y_pred: MatrixLike) -> float:
    """Micro-averaged F1 ``2 TP / (2 TP + FP + FN)`` on counts pooled over all labels.

    {bipartition_parameters}

    {returns_higher}

    Notes
    -----
    ``TP + FP + FN = 0`` gives 1 (MULAN); no other denominator can vanish.

    Examples
    --------
    >>> micro_f1([[1, 1, 0], [0, 1, 0]], [[1, 0, 1], [0, 1, 0]])
    0.6666666666666666
    """
    return _micro(_bipartition_counts(Y_true, Y_pred), 2)


@fill_doc
def macro_precision(Y_true: MatrixLike, Y_pred: MatrixLike) -> float:
    """Macro-averaged precision: ``tp_l / (tp_l + fp_l)`` per label, averaged over labels.

    {bipartition_parameters}

    {returns_higher}

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


@fill_doc
def macro_recall(Y_true: MatrixLike, Y_pred: MatrixLike) -> float:
    """Macro-averaged recall: ``tp_l / (tp_l + fn_l)`` per label, averaged over labels.

    {bipartition_parameters}

    {returns_higher}

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


@fill_doc
def macro_f1(Y_true: MatrixLike, Y_pred: MatrixLike) -> float:
    """Macro-averaged F1: ``2 tp_l / (2 tp_l + fp_l + fn_l)`` per label, averaged over labels.

    {bipartition_parameters}

    {returns_higher}

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
