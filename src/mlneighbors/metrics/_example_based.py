"""Example-based bipartition metrics: per-instance values averaged over instances.

Hamming loss, subset accuracy and the example-based accuracy, precision, recall and F1, each
first as a kernel on :class:`._bipartition._BipartitionCounts` (shared by :func:`evaluate`),
then as the public function.
"""

from __future__ import annotations

import numpy as np

from ._bipartition import _bipartition_counts, _BipartitionCounts, _pr_f1
from ._docstrings import fill_doc
from ._validation import MatrixLike


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


@fill_doc
def hamming_loss(Y_true: MatrixLike, Y_pred: MatrixLike) -> float:
    """Hamming loss: the fraction of (instance, label) pairs predicted wrongly.

    ``mean over i of |Z_i xor Y_i| / L``, Z the predicted and Y the true sets.
    No denominator can vanish (inputs have at least one label).

    {bipartition_parameters}

    {returns_lower}

    Examples
    --------
    >>> hamming_loss([[1, 0, 1], [0, 0, 0]], [[1, 1, 0], [0, 0, 0]])
    0.3333333333333333
    """
    return _hamming_from(_bipartition_counts(Y_true, Y_pred))


@fill_doc
def subset_accuracy(Y_true: MatrixLike, Y_pred: MatrixLike) -> float:
    """Subset accuracy (exact match): the fraction of instances with ``Z_i == Y_i``.

    {bipartition_parameters}

    {returns_higher} Two empty sets match.

    Examples
    --------
    >>> subset_accuracy([[1, 0], [0, 0]], [[1, 0], [0, 1]])
    0.5
    """
    return _subset_accuracy_from(_bipartition_counts(Y_true, Y_pred))


@fill_doc
def example_accuracy(Y_true: MatrixLike, Y_pred: MatrixLike) -> float:
    """Example-based accuracy (Jaccard index) averaged over instances.

    ``mean over i of |Z_i ∩ Y_i| / |Z_i ∪ Y_i|``.

    {bipartition_parameters}

    {returns_higher}

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


@fill_doc
def example_precision(Y_true: MatrixLike, Y_pred: MatrixLike) -> float:
    """Example-based precision ``mean over i of |Z_i ∩ Y_i| / |Z_i|``.

    {bipartition_parameters}

    {returns_higher}

    Notes
    -----
    Zero denominator (``|Z_i| = 0``): 1 when ``Y_i`` is empty too, else 0 (MULAN).

    Examples
    --------
    >>> example_precision([[1, 1, 0], [1, 0, 0]], [[1, 0, 1], [0, 0, 0]])
    0.25
    """
    return _example_precision_from(_bipartition_counts(Y_true, Y_pred))


@fill_doc
def example_recall(Y_true: MatrixLike, Y_pred: MatrixLike) -> float:
    """Example-based recall ``mean over i of |Z_i ∩ Y_i| / |Y_i|``.

    {bipartition_parameters}

    {returns_higher}

    Notes
    -----
    Zero denominator (``|Y_i| = 0``): 1 when ``Z_i`` is empty too, else 0 (MULAN).

    Examples
    --------
    >>> example_recall([[1, 1, 0], [0, 0, 0]], [[1, 0, 1], [0, 1, 0]])
    0.25
    """
    return _example_recall_from(_bipartition_counts(Y_true, Y_pred))


@fill_doc
def example_f1(Y_true: MatrixLike, Y_pred: MatrixLike) -> float:
    """Example-based F1 ``mean over i of 2 |Z_i ∩ Y_i| / (|Z_i| + |Y_i|)``.

    {bipartition_parameters}

    {returns_higher}

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
