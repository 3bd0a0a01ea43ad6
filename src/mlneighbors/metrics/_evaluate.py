""":func:`evaluate`: several metrics from one validation of the inputs, sharing their statistics."""

from __future__ import annotations

from collections.abc import Iterable
from functools import cached_property
from typing import cast

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

from ._at_k import _AtKStats
from ._bipartition import _BipartitionCounts
from ._propensity import _inverse_propensities
from ._ranking import _label_map_from_checked, _RankingStats
from ._registry import _AT_K, _BIPARTITION_FROM_COUNTS, _RANKING_FROM_STATS, METRICS
from ._validation import MatrixLike, _BoolMatrix, _check_binary, _check_same_shape, _check_scores, _check_sparse_scores


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
