"""The registry :data:`METRICS`: every metric by name, as a :class:`Metric` record."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Literal

from ._at_k import ndcg_at_k, precision_at_k, psndcg_at_k, psprecision_at_k
from ._bipartition import _BipartitionCounts
from ._example_based import (
    _example_accuracy_from,
    _example_f1_from,
    _example_precision_from,
    _example_recall_from,
    _hamming_from,
    _subset_accuracy_from,
    example_accuracy,
    example_f1,
    example_precision,
    example_recall,
    hamming_loss,
    subset_accuracy,
)
from ._label_based import (
    _macro,
    _micro,
    macro_f1,
    macro_precision,
    macro_recall,
    micro_f1,
    micro_precision,
    micro_recall,
)
from ._ranking import (
    _average_precision_from,
    _coverage_from,
    _normalized_coverage_from,
    _one_error_from,
    _ranking_loss_from,
    _RankingStats,
    average_precision,
    coverage,
    label_map,
    one_error,
    ranking_loss,
)
from ._validation import MatrixLike


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
