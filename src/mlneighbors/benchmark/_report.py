"""The benchmark report: per metric, the table of means, the ranks, the tests; as Markdown, LaTeX, CSV, JSON.

:func:`build_report` reads the results store's rows ``(dataset, model, fold, metric, value)``
and computes, for every metric, the mean and standard deviation over folds of every dataset and
model, the best per dataset, and on the datasets where every model has a value the average ranks
and the tests of :mod:`mlneighbors.benchmark._stats`. Nothing is recomputed from the data.

Which cells count, in one place
-------------------------------
* A cell is one (dataset, model) of a metric. Its folds are those that any model has a row for
  on that dataset and metric. The cell is **ok** when it has a finite value on each of them,
  **failed** when a fold's value is NaN (the run failed there), **incomplete** when a fold has
  no row, **missing** when it has no row at all. Only ok cells get a mean (never a mean over
  fewer folds), a standard deviation (``ddof=1``; none with one fold) and a place in the ranks.
* A dataset with a cell that is not ok is **dropped** from the ranks and tests of that metric
  (never an average rank over fewer datasets for some models than for others); the report says
  which datasets were dropped and why. The table of means still shows them.
* A model with no row at all for a metric (a ranking metric for a model without scores) is
  **absent** from that metric: not a column of its table, not ranked, and named as absent.
* The best cell of a dataset is the ok cell with the highest mean (lowest for a metric that is
  better low); equal means are all marked.
* Better high or low comes from the library's metric registry,
  :data:`mlneighbors.metrics.METRICS` (``greater_is_better``).
* The tests reviewers ask for beside Demšar's are asked for, not default (the Bayesian test
  samples a posterior per pair: seconds per metric): ``bayesian=True`` adds the Bayesian
  signed-rank test of every pair (baycomp), ``fold_test=True`` Nadeau and Bengio's corrected
  resampled t-test of every configuration against the control on each dataset's folds, marked
  as Weka and MEKA mark it. The effect sizes of the Wilcoxon pairs (mean difference and
  rank-biserial correlation) are cheap and always given.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._json import finite as _finite
from ..metrics import METRICS
from ..model_selection._validation import STD_DEFINITION
from ._stats import Comparison, _check_alpha, compare, corrected_resampled_t, wilcoxon_cliques

__all__ = ["FoldTests", "MetricReport", "Report", "build_report"]

#: a cell's states, see the module's notes
_OK, _FAILED, _INCOMPLETE, _MISSING = "ok", "failed", "incomplete", "missing"


@dataclass(frozen=True)
class FoldTests:
    """Nadeau and Bengio's corrected resampled t-test against the control, per dataset.

    Weka's and MEKA's experimenters mark each configuration on each dataset against a base:
    ``v`` significantly better, ``*`` significantly worse, nothing for no significant
    difference (:func:`mlneighbors.benchmark.corrected_resampled_t`, two-sided, at ``alpha``).

    Parameters
    ----------
    control : str
        The configuration every other is tested against.
    test_train_ratio : float
        ``n_test / n_train`` of a fold (``1 / (k - 1)`` for ``k``-fold cross-validation).
    statistic, pvalue : ndarray of shape (n_datasets, n_models)
        ``t`` of the configuration minus the control and its p-value; NaN for the control and
        where either cell is not ok.
    mark : ndarray of str of shape (n_datasets, n_models)
        ``"v"``, ``"*"`` or ``""``.
    models : tuple of str
        The configurations, in the order of the columns.

    Examples
    --------
    >>> from mlneighbors.benchmark import build_report
    >>> rows = [(d, m, f, "micro_f1", v + 0.01 * f + (0.05 if m == "B" else 0.0))
    ...         for d, v in (("emotions", 0.6), ("scene", 0.7)) for m in ("A", "B") for f in range(4)]
    >>> rows[-1] = ("scene", "B", 3, "micro_f1", 0.74)
    >>> tests = build_report(rows, control="A", fold_test=True, test_train_ratio=1 / 3)["micro_f1"].fold_tests
    >>> tests.mark.tolist(), tests.wins_ties_losses("B")
    ([['', 'v'], ['', '']], (1, 1, 0))
    """

    control: str
    test_train_ratio: float
    statistic: NDArray[np.float64]
    pvalue: NDArray[np.float64]
    mark: NDArray[np.str_]
    models: tuple[str, ...] = ()

    def wins_ties_losses(self, model: str) -> tuple[int, int, int]:
        """Weka's ``(v/ /*)``: the datasets where ``model`` is marked ``v``, unmarked but tested, ``*``.

        Parameters
        ----------
        model : str
            A configuration other than the control.

        Returns
        -------
        tuple of int
            Wins, ties and losses against the control.
        """
        j = self.models.index(model)
        tested = np.isfinite(self.pvalue[:, j])
        wins = int((self.mark[:, j] == "v").sum())
        losses = int((self.mark[:, j] == "*").sum())
        return wins, int(tested.sum()) - wins - losses, losses


@dataclass(frozen=True)
class MetricReport:
    """One metric of a :class:`Report`.

    Parameters
    ----------
    metric : str
        The metric's name in :data:`mlneighbors.metrics.METRICS`.
    greater_is_better : bool
        From the registry.
    datasets : tuple of str
        Every dataset with a row for this metric, in the rows' order.
    models : tuple of str
        Every model with a row for this metric, in the rows' order.
    absent : tuple of str
        The models of the rows with no row for this metric.
    mean, std : ndarray of shape (n_datasets, n_models)
        Over the folds of ok cells; NaN elsewhere (``std`` also with a single fold).
    folds : ndarray of shape (n_datasets,)
        Each dataset's number of folds (those any model has a row for).
    values, failed : ndarray of shape (n_datasets, n_models)
        Each cell's number of folds with a finite value, with NaN.
    status : ndarray of str of shape (n_datasets, n_models)
        ``"ok"``, ``"failed"``, ``"incomplete"`` or ``"missing"``.
    best : ndarray of bool of shape (n_datasets, n_models)
        The best ok cell(s) of each dataset.
    dropped : dict
        Dataset -> why it is left out of the ranks and tests.
    comparison : Comparison
        The ranks and tests on the kept datasets (``datasets`` without ``dropped``).
    fold_tests : FoldTests or None
        Per dataset, every configuration against the control on the folds (None unless asked).

    Examples
    --------
    >>> from mlneighbors.benchmark import build_report
    >>> rows = [("emotions", "A", 0, "hamming_loss", 0.2), ("emotions", "B", 0, "hamming_loss", float("nan")),
    ...         ("scene", "A", 0, "hamming_loss", 0.1), ("scene", "B", 0, "hamming_loss", 0.12)]
    >>> r = build_report(rows)["hamming_loss"]
    >>> r.status.tolist(), r.dropped
    ([['ok', 'failed'], ['ok', 'ok']], {'emotions': 'B failed on 1 of 1 folds'})
    """

    metric: str
    greater_is_better: bool
    datasets: tuple[str, ...]
    models: tuple[str, ...]
    absent: tuple[str, ...]
    mean: NDArray[np.float64]
    std: NDArray[np.float64]
    folds: NDArray[np.int64]
    values: NDArray[np.int64]
    failed: NDArray[np.int64]
    status: NDArray[np.str_]
    best: NDArray[np.bool_]
    dropped: dict[str, str]
    comparison: Comparison
    fold_tests: FoldTests | None = None

    @property
    def kept(self) -> tuple[str, ...]:
        """The datasets ranked and tested."""
        return tuple(d for d in self.datasets if d not in self.dropped)

    @property
    def notes(self) -> tuple[str, ...]:
        """Every decision a reader needs: dropped datasets, absent models, then the tests' notes."""
        notes = []
        if self.dropped:
            notes.append(f"{len(self.dropped)} of {len(self.datasets)} datasets dropped from the ranks and tests "
                         "(a model has no value there): "
                         + "; ".join(f"{d}: {why}" for d, why in self.dropped.items()))
        if self.absent:
            notes.append("no value for this metric (absent, not failed): " + ", ".join(self.absent))
        return tuple(notes) + self.comparison.notes

    def _rank_of(self) -> NDArray[np.float64]:
        """Each cell's rank on its dataset, NaN on dropped datasets."""
        ranks = np.full(self.mean.shape, np.nan)
        kept = np.array([d not in self.dropped for d in self.datasets], dtype=bool)
        ranks[kept] = self.comparison.ranks
        return ranks


def _first_seen(column: NDArray[Any]) -> tuple[list[str], NDArray[np.intp]]:
    """The distinct values in order of first appearance, and each row's code in that order."""
    names, first, inverse = np.unique(column, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    code = np.empty(len(names), dtype=np.intp)
    code[order] = np.arange(len(names))
    return [str(x) for x in names[order]], code[inverse.reshape(-1)]


def _columns(rows: Iterable[Sequence[Any]]) -> tuple[NDArray[Any], ...]:
    data = list(rows)
    if not data:
        raise ValueError("no rows to report: the store holds no result")
    try:
        table = np.empty((len(data), 5), dtype=object)
        table[:] = [tuple(r) for r in data]
        return (table[:, 0].astype(str), table[:, 1].astype(str), table[:, 2].astype(np.int64),
                table[:, 3].astype(str), table[:, 4].astype(np.float64))
    except (TypeError, ValueError):
        pass
    for i, r in enumerate(data):  # only to name the first bad row
        try:
            dataset, model, fold, metric, value = r
            int(fold), float(value)
        except (TypeError, ValueError):
            raise ValueError(f"row {i} is not (dataset, model, fold, metric, value): {r!r}") from None
    raise ValueError("the rows are not (dataset, model, fold, metric, value) tuples")


def _pick_metrics(metrics: str | Iterable[str] | None, present: list[str]) -> list[str]:
    unknown = [m for m in present if m not in METRICS]
    if metrics is None:
        if unknown:
            raise ValueError(f"the rows hold metric(s) {unknown} that the library does not know, so whether they "
                             f"are better high or low is unknown; valid names are {sorted(METRICS)}")
        return [m for m in METRICS if m in present]  # the registry's order
    asked = [metrics] if isinstance(metrics, str) else list(metrics)
    bad = [m for m in asked if m not in METRICS]
    if bad:
        raise ValueError(f"unknown metric(s) {bad}; valid names are {sorted(METRICS)}")
    lacking = [m for m in asked if m not in present]
    if lacking:
        raise ValueError(f"no rows for metric(s) {lacking}; the rows hold {present}")
    return list(dict.fromkeys(asked))


def _why(dataset_status: NDArray[np.str_], values: NDArray[np.int64], failed: NDArray[np.int64], folds: int,
         models: tuple[str, ...]) -> str:
    have = values + failed
    if len(models) > 1 and (dataset_status == _INCOMPLETE).all() and (have == have[0]).all():
        return f"every model has {have[0]} of the protocol's {folds} folds"
    parts = []
    for j, state in enumerate(dataset_status):
        if state == _FAILED:
            parts.append(f"{models[j]} failed on {failed[j]} of {folds} folds")
        elif state == _INCOMPLETE:
            parts.append(f"{models[j]} has {values[j] + failed[j]} of {folds} folds")
        elif state == _MISSING:
            parts.append(f"{models[j]} missing")
    return ", ".join(parts)


def _metric_report(
    metric: str,
    V: NDArray[np.float64],
    P: NDArray[np.bool_],
    datasets: list[str],
    models: list[str],
    control: str | None,
    alpha: float,
    *,
    expected: bool = False,
    twins: Mapping[str, str] | None = None,
    tests: Mapping[str, Any] | None = None,
    fold_ratio: float | None = None,
) -> MetricReport:
    """One metric from its value cube ``V`` and row mask ``P``, both (dataset, model, fold);
    ``expected``: every fold of the cube's axis is the protocol's, asked of every dataset."""
    greater = METRICS[metric].greater_is_better
    has = P.any(axis=2)
    d_in, m_in = has.any(axis=1), has.any(axis=0)
    V, P = V[d_in][:, m_in], P[d_in][:, m_in]
    names_d = tuple(d for d, keep in zip(datasets, d_in, strict=True) if keep)
    names_m = tuple(m for m, keep in zip(models, m_in, strict=True) if keep)
    absent = tuple(m for m, keep in zip(models, m_in, strict=True) if not keep)

    if expected:
        expected_folds = np.ones((P.shape[0], P.shape[2]), dtype=bool)  # (dataset, fold): the protocol's
    else:
        expected_folds = P.any(axis=1)  # (dataset, fold): the folds any model has a row for
    folds = expected_folds.sum(axis=1)
    nan = np.isnan(V) & P
    values = (P & ~nan).sum(axis=2)
    failed = nan.sum(axis=2)
    complete = (P | ~expected_folds[:, None, :]).all(axis=2)
    status = np.full(values.shape, _OK, dtype="<U10")
    status[~complete] = _INCOMPLETE
    status[failed > 0] = _FAILED
    status[~P.any(axis=2)] = _MISSING
    ok = status == _OK

    filled = np.where(P & ~nan, V, 0.0)
    n = np.maximum(values, 1)
    mean = filled.sum(axis=2) / n
    spread = np.where(P & ~nan, V - mean[:, :, None], 0.0)
    std = np.sqrt((spread**2).sum(axis=2) / np.maximum(values - 1, 1))
    mean = np.where(ok, mean, np.nan)
    std = np.where(ok & (values > 1), std, np.nan)

    signed = np.where(ok, mean if greater else -mean, -np.inf)
    top = signed.max(axis=1, keepdims=True)
    best = ok & (signed == top)

    dropped = {names_d[i]: _why(status[i], values[i], failed[i], int(folds[i]), names_m)
               for i in np.flatnonzero(~ok.all(axis=1))}
    for name, first in (twins or {}).items():
        if name in names_d and first in names_d:
            dropped[name] = f"the same data as {first} (one sha256): counted once"
    kept = np.array([name not in dropped for name in names_d], dtype=bool)
    use_control = control if control in names_m else None
    comparison = compare(mean[kept], models=names_m, greater_is_better=greater, control=use_control, alpha=alpha,
                         **(tests or {}))
    if control is not None and use_control is None:
        comparison = _with_note(comparison, f"the control {control} has no value for this metric: no Holm test")
    fold_tests = None
    if fold_ratio is not None and use_control is not None:
        fold_tests = _fold_tests(V, expected_folds, ok, names_m, use_control, greater, alpha, fold_ratio)
    return MetricReport(metric, greater, names_d, names_m, absent, mean, std, folds, values, failed, status, best,
                        dropped, comparison, fold_tests)


def _fold_tests(V: NDArray[np.float64], expected_folds: NDArray[np.bool_], ok: NDArray[np.bool_],
                models: tuple[str, ...], control: str, greater: bool, alpha: float, ratio: float) -> FoldTests:
    """Every configuration against ``control`` on each dataset's folds (both cells ok)."""
    c = models.index(control)
    statistic = np.full(ok.shape, np.nan)
    pvalue = np.full(ok.shape, np.nan)
    mark = np.full(ok.shape, "", dtype="<U1")
    for i in range(ok.shape[0]):
        on = expected_folds[i]
        if not ok[i, c] or on.sum() < 2:
            continue
        for j in range(ok.shape[1]):
            if j == c or not ok[i, j]:
                continue
            result = corrected_resampled_t(V[i, j, on], V[i, c, on], test_train_ratio=ratio)
            statistic[i, j], pvalue[i, j] = result.statistic, result.pvalue
            if result.pvalue <= alpha:
                better = result.mean_difference > 0 if greater else result.mean_difference < 0
                mark[i, j] = "v" if better else "*"
    return FoldTests(control, float(ratio), statistic, pvalue, mark, tuple(models))


def _with_note(comparison: Comparison, note: str) -> Comparison:
    return replace(comparison, notes=comparison.notes + (note,))


def build_report(
    rows: Iterable[Sequence[Any]],
    *,
    metrics: str | Iterable[str] | None = None,
    control: str | None = None,
    alpha: float = 0.05,
    folds: int | None = None,
    provenance: Mapping[str, Any] | None = None,
    bayesian: bool = False,
    rope: float = 0.01,
    samples: int = 50000,
    seed: int = 0,
    fold_test: bool = False,
    test_train_ratio: float | None = None,
) -> Report:
    """The benchmark report of a results store's rows: tables of means, ranks and tests per metric.

    Parameters
    ----------
    rows : iterable of tuple
        ``(dataset, model, fold, metric, value)``, one per cell of the store; ``value`` NaN when
        that cell ran and failed. A (dataset, model) without rows is missing.
    metrics : str or iterable of str, optional
        The metrics to report, names of :data:`mlneighbors.metrics.METRICS`; by default every
        metric of the rows, in the registry's order.
    control : str, optional
        A model to test every other model against with Holm's procedure; without one there is
        no Holm test.
    alpha : float, default=0.05
        The significance level of every test.
    folds : int, optional
        The folds the protocol asks of every dataset (numbered 0 to ``folds - 1``): a cell
        lacking one is incomplete, even where every model lacks it. By default the protocol of
        ``provenance``; without either, the folds any model has a row for.
    provenance : dict, optional
        Where the rows come from, as :meth:`Store.provenance` (or :func:`read_store`) gives
        it: the protocol, each dataset's sha256, the configurations' parameters, the version.
        Every output of the report states it, and two datasets holding the same data (one
        sha256) count once: the later names are dropped from the ranks and tests, said why.
    bayesian : bool, default=False
        Also the Bayesian signed-rank test of every pair over the kept datasets
        (:func:`~mlneighbors.benchmark.bayesian_signed_rank`, computed by baycomp: the ``stats``
        extra), with these three parameters:
    rope : float, default=0.01
        Its region of practical equivalence, in the metric's units.
    samples : int, default=50000
        Its posterior samples.
    seed : int, default=0
        Its seed: the same report gives the same probabilities.
    fold_test : bool, default=False
        Also Nadeau and Bengio's corrected resampled t-test of every configuration against
        ``control`` on each dataset's folds (each metric's ``fold_tests``); needs ``control``
        and 2 or more folds.
    test_train_ratio : float, optional
        ``n_test / n_train`` of a fold for ``fold_test``; by default ``1 / (k - 1)`` from the
        ``k``-fold protocol of ``provenance``.

    Returns
    -------
    Report

    Raises
    ------
    ValueError
        No rows, a row that is not a 5-tuple of the right types, two rows for the same
        (dataset, model, fold, metric), a fold outside the protocol's, an unknown metric, a
        control that is not a model of the rows, or ``alpha`` outside (0, 1).

    Examples
    --------
    >>> from mlneighbors.benchmark import build_report
    >>> rows = [(d, m, f, "micro_f1", v)
    ...         for d, base in [("emotions", 0.6), ("scene", 0.7), ("yeast", 0.64)]
    ...         for m, bonus in [("MLkNN(k=10)", 0.02), ("BRkNN(k=10)", 0.0), ("DMLkNN(k=10)", 0.01)]
    ...         for f, v in enumerate([base + bonus, base + bonus + 0.01])]
    >>> report = build_report(rows, control="MLkNN(k=10)")
    >>> report["micro_f1"].comparison.average_ranks
    array([1., 3., 2.])
    >>> print(report.to_markdown().splitlines()[4])
    | emotions | **0.6250 ± 0.0071** | 0.6050 ± 0.0071 | 0.6150 ± 0.0071 |
    """
    alpha = _check_alpha(alpha)
    dataset_col, model_col, fold_col, metric_col, value_col = _columns(rows)
    datasets, d = _first_seen(dataset_col)
    models, m = _first_seen(model_col)
    fold_ids, f = _first_seen(fold_col)
    present, t = _first_seen(metric_col)
    if control is not None and control not in models:
        raise ValueError(f"control {control!r} is not a model of the rows; the models are {models}")
    names = _pick_metrics(metrics, present)

    provenance = None if provenance is None else dict(provenance)
    if folds is None and provenance is not None:
        folds = _protocol_folds(provenance.get("protocol"))
    if folds is not None:
        if isinstance(folds, bool) or not isinstance(folds, (int, np.integer)) or folds < 1:
            raise ValueError(f"folds must be a positive integer, got {folds!r}")
        outside = [x for x in fold_ids if not 0 <= int(x) < folds]
        if outside:
            raise ValueError(f"the rows hold fold {outside[0]}, outside the protocol's {folds} fold(s) "
                             f"(0 to {folds - 1})")
        # every fold of the protocol is an axis position, also one no model has a row for
        f = np.array([int(x) for x in fold_ids], dtype=np.int64)[f]
        fold_ids = list(range(int(folds)))
    twins = _twins(datasets, provenance)
    fold_ratio = None
    if fold_test:
        fold_ratio = _fold_ratio(control, test_train_ratio, provenance)
    tests = {"bayesian": bool(bayesian), "rope": rope, "samples": samples, "seed": seed} if bayesian else None
    shape = (len(present), len(datasets), len(models), len(fold_ids))
    flat = np.ravel_multi_index((t, d, m, f), shape)
    unique, counts = np.unique(flat, return_counts=True)
    if (counts > 1).any():
        ti, di, mi, fi = np.unravel_index(unique[counts > 1][0], shape)
        raise ValueError(f"two rows for dataset {datasets[di]!r}, model {models[mi]!r}, fold {fold_ids[fi]}, "
                         f"metric {present[ti]!r}: the rows mix two runs")
    V = np.full(shape, np.nan)
    P = np.zeros(shape, dtype=bool)
    V.reshape(-1)[flat] = value_col
    P.reshape(-1)[flat] = True
    reports = {name: _metric_report(name, V[present.index(name)], P[present.index(name)], datasets, models,
                                    control, alpha, expected=folds is not None, twins=twins, tests=tests,
                                    fold_ratio=fold_ratio)
               for name in names}
    return Report(reports, alpha=alpha, control=control, provenance=provenance)


def _fold_ratio(control: str | None, ratio: float | None, provenance: Mapping[str, Any] | None) -> float:
    """The test/train ratio of the corrected resampled t-test: given, or the protocol's ``1/(k-1)``."""
    if control is None:
        raise ValueError("fold_test compares every configuration with a control: give control")
    if ratio is not None:
        if isinstance(ratio, bool) or not (math.isfinite(ratio) and ratio > 0):
            raise ValueError(f"test_train_ratio must be a number > 0, got {ratio!r}")
        return float(ratio)
    protocol = (provenance or {}).get("protocol")
    if not protocol:
        raise ValueError("fold_test needs the folds' test/train ratio: give test_train_ratio, or the provenance "
                         "of a store (its protocol)")
    if protocol.get("kind") == "split":
        raise ValueError("fold_test tests over a dataset's folds; the standard split is one fold")
    return 1.0 / (int(protocol["folds"]) - 1)


def _protocol_folds(protocol: Any) -> int | None:
    """The folds a stored protocol asks of every dataset (None: no protocol recorded)."""
    if not protocol:
        return None
    if protocol.get("kind") == "split":
        return 1
    return int(protocol["folds"]) * int(protocol.get("repeats", 1))


def _twins(datasets: list[str], provenance: Mapping[str, Any] | None) -> dict[str, str]:
    """Dataset -> the first dataset of the rows that holds the same data (one sha256)."""
    if provenance is None:
        return {}
    described = provenance.get("datasets") or {}
    first: dict[str, str] = {}
    twins = {}
    for name in datasets:
        digest = (described.get(name) or {}).get("sha256")
        if digest is None:
            continue
        seen = first.setdefault(digest, name)
        if seen != name:
            twins[name] = seen
    return twins


# --------------------------------------------------------------------------------------------
# formatting
# --------------------------------------------------------------------------------------------


def _num(x: float, digits: int = 4) -> str:
    return "" if x is None or not math.isfinite(x) else f"{x:.{digits}f}"


def _p(p: float) -> str:
    return "< 0.0001" if p < 1e-4 else f"{p:.4f}"


def _p_is(p: float) -> str:
    """``p = 0.0123`` or ``p < 0.0001``."""
    return "p < 0.0001" if p < 1e-4 else f"p = {p:.4f}"


def _stat(x: float, digits: int = 3) -> str:
    return "inf" if math.isinf(x) else f"{x:.{digits}f}"




def _cell_text(r: MetricReport, i: int, j: int) -> str:
    state = r.status[i, j]
    if state == _OK:
        std = r.std[i, j]
        return _num(r.mean[i, j]) + ("" if math.isnan(std) else f" ± {_num(std)}")
    if state == _FAILED:
        return f"failed ({r.failed[i, j]} of {r.folds[i]} folds)"
    if state == _INCOMPLETE:
        return f"incomplete ({r.values[i, j] + r.failed[i, j]} of {r.folds[i]} folds)"
    return "missing"


def _direction(r: MetricReport) -> str:
    return "higher is better" if r.greater_is_better else "lower is better"


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|")


def _md_table(header: list[str], rows: list[list[str]], align: str) -> list[str]:
    lines = ["| " + " | ".join(_md_escape(h) for h in header) + " |",
             "|" + "|".join("---" if a == "l" else "---:" for a in align) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


_LATEX_SPECIAL = {"&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{", "}": r"\}",
                  "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "\\": r"\textbackslash{}",
                  # pdflatex's default (OT1) font encoding prints < > | as other glyphs (N > 10 as N ¿ 10)
                  "<": r"\textless{}", ">": r"\textgreater{}", "|": r"\textbar{}",
                  "±": r"$\pm$", "≤": r"$\leq$", "≥": r"$\geq$", "×": r"$\times$", "−": "$-$", "–": "--", "—": "---"}


def _tex(text: str) -> str:
    return "".join(_LATEX_SPECIAL.get(c, c) for c in text)


def _tex_path(text: str) -> str:
    """A long name (a file's path) that may break after each ``/``."""
    return r"/\allowbreak{}".join(_tex(part) for part in text.split("/"))


#: a table no wider than the text: scaled down where wider, never up (graphicx)
_FIT_OPEN = r"\resizebox{\ifdim\width>\linewidth\linewidth\else\width\fi}{!}{%"


def _tex_table(caption: str, header: list[str], rows: list[list[str]], align: str, *,
               footer: Sequence[list[str]] = (), below: Sequence[str] = (), label: str | None = None,
               narrow: bool = False) -> list[str]:
    """A booktabs table in a float, no wider than the text; ``below``: paragraphs under the
    table in the same float (the tests of its values: they stay with it); ``narrow``: columns
    closer together (a table of many models)."""
    lines = [r"\begin{table}[htbp]", r"\centering", rf"\caption{{{caption}}}"]
    if label is not None:
        lines.append(rf"\label{{{label}}}")
    if narrow:
        lines.append(r"\setlength{\tabcolsep}{4pt}")
    lines += [_FIT_OPEN, rf"\begin{{tabular}}{{{align}}}", r"\toprule", " & ".join(header) + r" \\", r"\midrule"]
    lines += [" & ".join(row) + r" \\" for row in rows]
    if footer:
        lines.append(r"\midrule")
        lines += [" & ".join(row) + r" \\" for row in footer]
    lines += [r"\bottomrule", r"\end{tabular}}"]
    if below:
        lines += [r"\par\smallskip", r"\begin{minipage}{\linewidth}\footnotesize\raggedright"]
        lines += [paragraph + r"\par" for paragraph in below]
        lines.append(r"\end{minipage}")
    lines.append(r"\end{table}")
    return lines


def _sentence(text: str) -> str:
    """A note as a sentence: capital first, full stop last."""
    text = text[:1].upper() + text[1:]
    return text if text.endswith((".", "!", "?")) else text + "."


def _tex_cell(r: MetricReport, i: int, j: int) -> str:
    """A cell of the means' table: the mean, its standard deviation smaller beside it."""
    if r.status[i, j] != _OK:
        return _tex(_cell_text(r, i, j))
    std = r.std[i, j]
    return _num(r.mean[i, j]) + ("" if math.isnan(std) else rf"\,{{\scriptsize$\pm${_num(std)}}}")


def _tex_head(name: str) -> str:
    """A configuration's name as a column head, broken after each ``:`` (``mlknn:`` over
    ``k=10``): a column as wide as its numbers."""
    parts = name.split(":")
    if len(parts) == 1:
        return _tex(name)
    lines = [_tex(p) + ":" for p in parts[:-1]] + [_tex(parts[-1])]
    return r"\begin{tabular}[b]{@{}r@{}}" + r"\\".join(lines) + r"\end{tabular}"


def _short_names(names: Sequence[str]) -> dict[str, str]:
    """Datasets read from files named by their file's stem (``flags`` for ``../a/flags.arff``)
    where that stays unique: a table column the width of a name, not of a path."""
    def stem(name: str) -> str:
        base = os.path.basename(name.rstrip("/\\")) or name
        for suffix in (".gz", ".arff", ".csv", ".svm", ".libsvm", ".txt", ".mat", ".xml"):
            if base.lower().endswith(suffix) and len(base) > len(suffix):
                base = base[: -len(suffix)]
        return base

    short = {name: stem(name) for name in names}
    counts: dict[str, int] = {}
    for value in short.values():
        counts[value] = counts.get(value, 0) + 1
    return {name: value if counts[value] == 1 else name for name, value in short.items()}


def _protocol_text(protocol: Mapping[str, Any] | None) -> str:
    if not protocol:
        return "not recorded"
    if protocol.get("kind") == "split":
        return f"each dataset's standard train/test split (seed {protocol.get('seed')})"
    repeats = int(protocol.get("repeats", 1))
    text = f"{protocol.get('folds')}-fold stratified cross-validation"
    if repeats > 1:
        text += f", repeated {repeats} times (repeat r shuffled with seed {protocol.get('seed')} + r)"
    return text + f", seed {protocol.get('seed')}"


def _params_text(params: Mapping[str, Any] | None) -> str:
    """``n_neighbors=10, smoothing=1.0, ...``: every parameter, sorted, values as JSON."""
    if params is None:
        return ""
    return ", ".join(f"{key}={json.dumps(params[key], sort_keys=True)}" for key in sorted(params))


def _run_text(run: Mapping[str, Any]) -> str:
    machine = run.get("machine")
    where = machine.get("platform", "") if isinstance(machine, dict) else str(machine or "")
    end = run.get("ended") or "not ended (interrupted)"
    return f"run {run.get('run')}: mlneighbors {run.get('version')}, {run.get('started')} to {end}, {where}"


def _label(text: str) -> str:
    """A LaTeX label from a name: letters, digits and hyphens."""
    return "".join(c if c.isalnum() else "-" for c in text)


#: Weka's LaTeX marks of a significant win and loss against the base
_TEX_MARKS = {"v": r"\,$\circ$", "*": r"\,$\bullet$", "": ""}

_EFFECT_TEXT = ("Effect sizes: the mean difference over the datasets, in the metric's units, and the matched-pairs "
                "rank-biserial correlation r = (R+ - R-) / (R+ + R-) of the signed ranks (Kerby 2014), in [-1, 1]; "
                "both positive when the first is better.")


def _md_mark(mark: str) -> str:
    return {"v": "v", "*": "\\*"}.get(mark, "")


def _fold_counts(r: MetricReport) -> list[str]:
    """Weka's ``(v/ /*)`` line: wins, ties and losses against the control per configuration."""
    tests = r.fold_tests
    if tests is None:
        return []
    return ["control" if m == tests.control else "({}/{}/{})".format(*tests.wins_ties_losses(m)) for m in r.models]


def _fold_text(r: MetricReport, alpha: float) -> str:
    tests = r.fold_tests
    if tests is None:
        return ""
    return (f"Per dataset, every configuration against the control {tests.control} by Nadeau and Bengio's corrected "
            f"resampled t-test over the folds (t = mean(d) / sqrt((1/J + n_test/n_train) s^2), J - 1 degrees of "
            f"freedom, n_test/n_train = {tests.test_train_ratio:.4g}, two-sided, alpha = {alpha}), marked as Weka "
            "and MEKA mark it: v significantly better than the control, * significantly worse; (v/ /*) counts the "
            "datasets.")


def _bayes_text(c: Comparison) -> str:
    b = c.bayesian[0]
    return (f"Bayesian signed-rank tests over the {c.n_datasets} datasets (Benavoli et al. 2014, 2017; computed by "
            f"baycomp, {b.samples} posterior samples, seed {b.seed}), region of practical equivalence +/- {b.rope:g}: "
            "the probability that the first is better, that the two are equivalent, that the second is better; "
            "decision: a probability above 0.95.")




class Report:
    """A benchmark report: one :class:`MetricReport` per metric, and its outputs.

    Made by :func:`build_report`. ``report[metric]`` is a metric's :class:`MetricReport`;
    iterating gives the metrics' names.

    Parameters
    ----------
    metrics : dict
        Metric name -> :class:`MetricReport`, in the order to report them.
    alpha : float
        The significance level of every test.
    control : str or None
        The control model of Holm's tests.
    provenance : dict or None
        Where the results come from (:meth:`Store.provenance`): every output states it.

    Examples
    --------
    >>> from mlneighbors.benchmark import build_report
    >>> rows = [(d, m, 0, "micro_f1", v) for d in ("emotions", "scene") for m, v in (("A", 0.7), ("B", 0.6))]
    >>> report = build_report(rows)
    >>> list(report), report["micro_f1"].comparison.average_ranks
    (['micro_f1'], array([1., 2.]))
    >>> print(report.to_csv().splitlines()[1])
    micro_f1,emotions,A,0.700000,,1,0,ok,1,1.00,1.0000,,,,,
    """

    def __init__(self, metrics: dict[str, MetricReport], *, alpha: float, control: str | None,
                 provenance: dict[str, Any] | None = None) -> None:
        self.metrics = metrics
        self.alpha = alpha
        self.control = control
        self.provenance = provenance

    def __getitem__(self, metric: str) -> MetricReport:
        try:
            return self.metrics[metric]
        except KeyError:
            raise KeyError(f"no metric {metric!r} in this report; it has {list(self.metrics)}") from None

    def __iter__(self) -> Iterator[str]:
        return iter(self.metrics)

    def __len__(self) -> int:
        return len(self.metrics)

    def __repr__(self) -> str:
        return f"Report(metrics={list(self.metrics)}, alpha={self.alpha}, control={self.control!r})"

    # -- Markdown -------------------------------------------------------------------------------

    def to_markdown(self) -> str:
        """The report as Markdown: per metric the table of means (best in bold), the average
        ranks, the tests and the notes.

        Returns
        -------
        str
        """
        out: list[str] = []
        for r in self.metrics.values():
            c = r.comparison
            out += [f"## {r.metric} ({_direction(r)}): mean ± {STD_DEFINITION}", ""]
            header = ["dataset", *r.models]
            body = []
            for i, dataset in enumerate(r.datasets):
                cells = [_md_escape(_cell_text(r, i, j)) for j in range(len(r.models))]
                cells = [f"**{text}**" if r.best[i, j] else text for j, text in enumerate(cells)]
                if r.fold_tests is not None:
                    cells = [f"{text} {_md_mark(r.fold_tests.mark[i, j])}".rstrip() for j, text in enumerate(cells)]
                body.append([_md_escape(dataset), *cells])
            if c.n_datasets:
                body.append([f"average rank (N = {c.n_datasets})", *(_num(x, 2) for x in c.average_ranks)])
            if r.fold_tests is not None:
                body.append(["(v/ /\\*) against the control", *_fold_counts(r)])
            out += _md_table(header, body, "l" + "r" * len(r.models))
            out += ["", *self._tests_markdown(r)]
            if r.notes:
                out += ["Notes:", "", *(f"- {_md_escape(note)}" for note in r.notes), ""]
        out += self._provenance_markdown()
        return "\n".join(out).rstrip("\n") + "\n"

    def _provenance_markdown(self) -> list[str]:
        prov = self.provenance
        if prov is None:
            return []
        out = ["## Provenance", "",
               f"Results written by mlneighbors {prov.get('mlneighbors')}; protocol: "
               f"{_protocol_text(prov.get('protocol'))}; store: `{prov.get('store')}`.", ""]
        described = prov.get("datasets") or {}
        if described:
            out += _md_table(["dataset", "rows", "features", "labels", "test rows", "scaling", "sha256 of the data",
                              "sha256 of the folds"],
                             [[_md_escape(name), str(d.get("n_samples")), str(d.get("n_features")),
                               str(d.get("n_labels")), "" if d.get("n_test") is None else str(d.get("n_test")),
                               str(d.get("scale")), f"`{d.get('sha256')}`", f"`{d.get('folds_sha256')}`"]
                              for name, d in described.items()], "lrrrrlll")
            out.append("")
        models = prov.get("models") or {}
        if models:
            out += _md_table(["configuration", "parameters"],
                             [[_md_escape(name), _md_escape(_params_text(params))] for name, params in models.items()],
                             "ll")
            out.append("")
        runs = prov.get("runs") or []
        if runs:
            out += [f"Runs: {len(runs)}, " + "; ".join(_run_text(run) for run in runs) + ".", ""]
        return out

    def _tests_markdown(self, r: MetricReport) -> list[str]:
        c, out = r.comparison, []
        if r.fold_tests is not None:
            out += [_md_escape(_fold_text(r, c.alpha)).replace("*", "\\*"), ""]
        if c.friedman is not None:
            fr = c.friedman
            out += [f"Friedman: chi2_F = {_stat(fr.statistic)} (df = {fr.n_models - 1}), {_p_is(fr.pvalue)}; "
                    f"Iman-Davenport: F_F = {_stat(fr.f_statistic)} (df = {fr.n_models - 1}, "
                    f"{(fr.n_models - 1) * (fr.n_datasets - 1)}), {_p_is(fr.f_pvalue)}.", ""]
        if c.critical_difference is not None:
            separated = [f"{p.first} < {p.second} ({_num(p.rank_difference, 2)})" for p in c.nemenyi if p.separated]
            out += [f"Nemenyi: critical difference CD = {_num(c.critical_difference, 3)} (alpha = {c.alpha}, "
                    f"k = {len(c.models)}, N = {c.n_datasets}); pairs it separates (better < worse, rank "
                    f"difference): {_md_escape('; '.join(separated)) if separated else 'none'}.", ""]
        if c.holm:
            out += [f"Holm's test against the control {_md_escape(c.control or '')} "
                    f"(z on average ranks, alpha = {c.alpha}):", ""]
            out += _md_table(["model", "z", "p", "Holm p", "differs"],
                             [[_md_escape(h.model), _num(h.z, 3), _p(h.pvalue), _p(h.adjusted),
                               "yes" if h.reject else "no"] for h in c.holm], "lrrrl")
            out.append("")
        if c.wilcoxon:
            out += [f"Wilcoxon signed-rank tests over the {c.n_datasets} datasets, Holm-corrected over "
                    f"{len(c.wilcoxon)} pair(s):", ""]
            out += _md_table(["first", "second", "W", "wins/ties/losses", "p", "Holm p", "differs", "mean difference",
                              "rank-biserial r"],
                             [[_md_escape(w.first), _md_escape(w.second), _num(w.statistic, 1),
                               f"{w.wins}/{w.ties}/{w.losses}", _p(w.pvalue), _p(w.adjusted),
                               "yes" if w.reject else "no", _num(w.mean_difference), _num(w.rank_biserial, 3)]
                              for w in c.wilcoxon], "llrrrrlrr")
            out += ["", _EFFECT_TEXT, ""]
        if c.bayesian:
            out += [_md_escape(_bayes_text(c)), ""]
            out += _md_table(["first", "second", "P(first better)", "P(equivalent)", "P(second better)", "decision"],
                             [[_md_escape(b.first), _md_escape(b.second), _num(b.left), _num(b.equivalent),
                               _num(b.right), _md_escape(b.decision)] for b in c.bayesian], "llrrrl")
            out.append("")
        return out

    # -- LaTeX ----------------------------------------------------------------------------------

    def to_latex(self) -> str:
        r"""The report as LaTeX tables, best in bold: needs ``\usepackage{booktabs,graphicx}``.

        Per metric: a table of means with the average ranks and, under it in the same float, the
        metric's Friedman, Iman-Davenport and Nemenyi results and notes; tables of the Holm and
        Wilcoxon tests; then the provenance (version, protocol, each dataset's sha256, every
        configuration's parameters). A table wider than the text is scaled down to it.
        Datasets read from files are named by their file's stem where that is unique.

        Returns
        -------
        str
        """
        out = [r"% mlneighbors benchmark report; needs \usepackage{booktabs} and \usepackage{graphicx}", ""]
        short = _short_names([d for r in self.metrics.values() for d in r.datasets])
        for r in self.metrics.values():
            c = r.comparison
            rows = []
            for i, dataset in enumerate(r.datasets):
                cells = [_tex_cell(r, i, j) for j in range(len(r.models))]
                cells = [rf"\textbf{{{text}}}" if r.best[i, j] else text for j, text in enumerate(cells)]
                if r.fold_tests is not None:
                    cells = [text + _TEX_MARKS[r.fold_tests.mark[i, j]] for j, text in enumerate(cells)]
                rows.append([_tex(short[dataset]), *cells])
            footer = ([[f"Average rank ($N = {c.n_datasets}$)", *(_num(x, 2) for x in c.average_ranks)]]
                      if c.n_datasets else [])
            if r.fold_tests is not None:
                footer.append([r"($\circ$/ /$\bullet$)", *(_tex(x) for x in _fold_counts(r))])
            caption = (f"{_tex(r.metric)} ({_direction(r)}): mean $\\pm$ {_tex(STD_DEFINITION)}; best per dataset in "
                       "bold.")
            below = []
            tests = []
            if c.friedman is not None:
                fr = c.friedman
                tests.append(f"Friedman: $\\chi^2_F = {_stat(fr.statistic)}$, ${_p_is(fr.pvalue)}$; "
                             f"Iman--Davenport: $F_F = {_stat(fr.f_statistic)}$, ${_p_is(fr.f_pvalue)}$.")
            if c.critical_difference is not None:
                separated = [f"{_tex(p.first)} vs {_tex(p.second)}" for p in c.nemenyi if p.separated]
                tests.append(f"Nemenyi: $CD = {_num(c.critical_difference, 3)}$; "
                             f"separated: {'; '.join(separated) if separated else 'none'}.")
            if r.fold_tests is not None:
                tests.append(_tex(_fold_text(r, c.alpha)).replace(" v ", r" $\circ$ ").replace(
                    r" * ", r" $\bullet$ ").replace(r"(v/ /*)", r"($\circ$/ /$\bullet$)"))
            if tests:
                below.append(f"\\textit{{Tests on {_tex(r.metric)}}} ($N = {c.n_datasets}$ datasets, "
                             f"$k = {len(c.models)}$ models, $\\alpha = {c.alpha}$). " + " ".join(tests))
            below += [f"\\textit{{Note {n}.}} {_tex(_sentence(note))}" for n, note in enumerate(r.notes, 1)]
            out += _tex_table(caption, ["Dataset", *(_tex_head(m) for m in r.models)], rows,
                              "l" + "r" * len(r.models), footer=footer, below=below,
                              label=f"tab:mlneighbors-{_label(r.metric)}", narrow=True)
            out.append("")
            if c.holm:
                out += _tex_table(f"{_tex(r.metric)}: Holm's test against {_tex(c.control or '')} "
                                  f"($\\alpha = {c.alpha}$).",
                                  ["Model", "$z$", "$p$", "Holm $p$", "Differs"],
                                  [[_tex(h.model), _num(h.z, 3), _tex(_p(h.pvalue)), _tex(_p(h.adjusted)),
                                    "yes" if h.reject else "no"] for h in c.holm], "lrrrl")
                out.append("")
            if c.wilcoxon:
                out += _tex_table(f"{_tex(r.metric)}: Wilcoxon signed-rank tests over the {c.n_datasets} "
                                  f"datasets, Holm-corrected over {len(c.wilcoxon)} pair(s) "
                                  f"($\\alpha = {c.alpha}$).",
                                  ["First", "Second", "$W$", "W/T/L", "$p$", "Holm $p$", "Differs", r"$\bar{d}$",
                                   "$r$"],
                                  [[_tex(w.first), _tex(w.second), _num(w.statistic, 1),
                                    f"{w.wins}/{w.ties}/{w.losses}", _tex(_p(w.pvalue)), _tex(_p(w.adjusted)),
                                    "yes" if w.reject else "no", _num(w.mean_difference), _num(w.rank_biserial, 3)]
                                   for w in c.wilcoxon], "llrrrrlrr",
                                  below=[_tex(_EFFECT_TEXT) + r" ($\bar{d}$, $r$)"])
                out.append("")
            if c.bayesian:
                out += _tex_table(f"{_tex(r.metric)}: " + _tex(_bayes_text(c)),
                                  ["First", "Second", "$P$(first)", "$P$(equivalent)", "$P$(second)", "Decision"],
                                  [[_tex(b.first), _tex(b.second), _num(b.left), _num(b.equivalent), _num(b.right),
                                    _tex(b.decision)] for b in c.bayesian], "llrrrl")
                out.append("")
        out += self._provenance_latex(short)
        return "\n".join(out).rstrip("\n") + "\n"

    def _provenance_latex(self, short: Mapping[str, str]) -> list[str]:
        prov = self.provenance
        if prov is None:
            return []
        caption = (f"Provenance: mlneighbors {_tex(str(prov.get('mlneighbors')))}; "
                   f"{_tex(_protocol_text(prov.get('protocol')))}.")
        described = prov.get("datasets") or {}
        rows = [[_tex(short.get(name, name)), str(d.get("n_samples")), str(d.get("n_features")),
                 str(d.get("n_labels")), _tex(str(d.get("scale"))), rf"\texttt{{\scriptsize {d.get('sha256')}}}"]
                for name, d in described.items()]
        out = _tex_table(caption, ["Dataset", "$n$", "$d$", "$L$", "Scaling", "sha256 of the data"], rows,
                         "lrrrll", label="tab:mlneighbors-provenance")
        renamed = [(name, short[name]) for name in described if short.get(name, name) != name]
        if renamed:
            out[-1:-1] = [r"\par\smallskip", r"\begin{minipage}{\linewidth}\footnotesize\raggedright",
                          "Datasets read from files: " + "; ".join(
                              f"{_tex(s)}: \\texttt{{{_tex_path(name)}}}" for name, s in renamed) + r".\par",
                          r"\end{minipage}"]
        models = prov.get("models") or {}
        if models:
            out += ["", r"\begin{table}[htbp]", r"\centering",
                    r"\caption{The configurations and every parameter of each.}",
                    r"\label{tab:mlneighbors-configurations}", r"\footnotesize",
                    r"\begin{tabular}{@{}lp{0.72\linewidth}@{}}", r"\toprule", r"Configuration & Parameters \\",
                    r"\midrule"]
            breakable = r", \allowbreak{}"
            out += [_tex(name) + " & " + _tex(_params_text(params)).replace(", ", breakable) + r" \\"
                    for name, params in models.items()]
            out += [r"\bottomrule", r"\end{tabular}", r"\end{table}"]
        return out

    # -- CSV ------------------------------------------------------------------------------------

    #: the columns of :meth:`to_csv`
    CSV_COLUMNS = ("metric", "dataset", "model", "mean", "std", "folds", "failed_folds", "status", "best", "rank",
                   "average_rank", "mlneighbors", "protocol", "seed", "dataset_sha256", "params")
    #: the columns :meth:`to_csv` adds when the report ran ``fold_test``
    FOLD_CSV_COLUMNS = ("fold_t", "fold_p", "fold_mark")

    def to_csv(self) -> str:
        """The cells as CSV: one row per metric, dataset and model (absent models included).

        Columns :attr:`CSV_COLUMNS`; ``std`` is the sample standard deviation over folds
        (ddof = 1); ``status`` is ``ok``, ``failed``, ``incomplete``, ``missing`` or
        ``absent``; ``best`` is 1 or 0; ``rank`` (on the dataset) and ``average_rank`` are
        empty where the dataset or model is out of the ranks. Each row carries its provenance:
        the version that wrote the results, the protocol (JSON), its seed, the dataset's sha256
        and the configuration's parameters (JSON), empty when the report was built without it.
        The tests are in :meth:`to_json`, :meth:`to_markdown` and :meth:`to_latex`, except the
        per-dataset test against the control (``fold_test``): when it ran, the columns
        :attr:`FOLD_CSV_COLUMNS` follow, the cell's ``t`` against the control, its p-value and
        its mark (``v``, ``*`` or empty; all empty for the control and untested cells).

        Returns
        -------
        str
        """
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        with_folds = any(r.fold_tests is not None for r in self.metrics.values())
        writer.writerow(self.CSV_COLUMNS + (self.FOLD_CSV_COLUMNS if with_folds else ()))
        prov = self.provenance or {}
        protocol = prov.get("protocol")
        common = ["" if prov.get("mlneighbors") is None else prov["mlneighbors"],
                  "" if protocol is None else json.dumps(protocol, sort_keys=True),
                  "" if protocol is None else protocol.get("seed", "")]
        described = prov.get("datasets") or {}
        params = prov.get("models") or {}

        def origin(dataset: str, model: str) -> list[Any]:
            return [*common, (described.get(dataset) or {}).get("sha256", ""),
                    json.dumps(params[model], sort_keys=True) if model in params else ""]

        def fold(r: MetricReport, i: int, j: int | None) -> list[Any]:
            if not with_folds:
                return []
            if r.fold_tests is None or j is None:
                return ["", "", ""]
            t = r.fold_tests.statistic[i, j]
            return ["" if math.isnan(t) else repr(float(t)), _num(r.fold_tests.pvalue[i, j], 6),
                    r.fold_tests.mark[i, j]]

        for r in self.metrics.values():
            ranks = r._rank_of()
            average = dict(zip(r.models, r.comparison.average_ranks, strict=True))
            for i, dataset in enumerate(r.datasets):
                for j, model in enumerate(r.models):
                    writer.writerow([r.metric, dataset, model, _num(r.mean[i, j], 6), _num(r.std[i, j], 6),
                                     r.folds[i], r.failed[i, j], r.status[i, j], int(r.best[i, j]),
                                     _num(ranks[i, j], 2), _num(average[model], 4), *origin(dataset, model),
                                     *fold(r, i, j)])
                for model in r.absent:
                    writer.writerow([r.metric, dataset, model, "", "", r.folds[i], 0, "absent", 0, "", "",
                                     *origin(dataset, model), *fold(r, i, None)])
        return buf.getvalue()

    # -- JSON -----------------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """The whole report as plain Python (what :meth:`to_json` writes; NaN and infinity as None).

        Returns
        -------
        dict
        """
        metrics = []
        for r in self.metrics.values():
            c = r.comparison
            ranks = r._rank_of()
            cells = [{"dataset": dataset, "model": model, "mean": float(r.mean[i, j]), "std": float(r.std[i, j]),
                      "folds": int(r.folds[i]), "failed_folds": int(r.failed[i, j]), "status": str(r.status[i, j]),
                      "best": bool(r.best[i, j]), "rank": float(ranks[i, j])}
                     for i, dataset in enumerate(r.datasets) for j, model in enumerate(r.models)]
            metrics.append({
                "metric": r.metric,
                "greater_is_better": r.greater_is_better,
                "models": list(r.models),
                "absent": list(r.absent),
                "datasets": list(r.datasets),
                "kept": list(r.kept),
                "dropped": dict(r.dropped),
                "cells": cells,
                "n_datasets": c.n_datasets,
                "average_ranks": {m: float(x) for m, x in zip(c.models, c.average_ranks, strict=True)},
                "friedman": asdict(c.friedman) if c.friedman is not None else None,
                "critical_difference": c.critical_difference,
                "nemenyi": [asdict(p) for p in c.nemenyi],
                "control": c.control,
                "holm": [asdict(h) for h in c.holm],
                "wilcoxon": [asdict(w) for w in c.wilcoxon],
                "notes": list(r.notes),
            })
            if c.bayesian:
                metrics[-1]["bayesian"] = [{**asdict(b), "decision": b.decision} for b in c.bayesian]
            if r.fold_tests is not None:
                ft = r.fold_tests
                metrics[-1]["fold_tests"] = {
                    "test": "Nadeau and Bengio's corrected resampled t-test against the control, per dataset",
                    "control": ft.control, "test_train_ratio": ft.test_train_ratio,
                    "cells": [{"dataset": dataset, "model": model, "t": float(ft.statistic[i, j]),
                               "p": float(ft.pvalue[i, j]), "mark": str(ft.mark[i, j])}
                              for i, dataset in enumerate(r.datasets) for j, model in enumerate(r.models)
                              if model != ft.control],
                    "wins_ties_losses": {m: list(ft.wins_ties_losses(m)) for m in r.models if m != ft.control},
                }
        return _finite({"alpha": self.alpha, "control": self.control, "std": STD_DEFINITION, "metrics": metrics,
                        "provenance": self.provenance})

    def to_json(self) -> str:
        """The whole report as JSON (:meth:`to_dict`), indented.

        Returns
        -------
        str
        """
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False, allow_nan=False) + "\n"

    # -- the diagram ----------------------------------------------------------------------------

    def cd_diagram(self, path: str | os.PathLike[str], metric: str | None = None, *,
                   cliques: str = "nemenyi") -> None:
        """Draw a metric's critical-difference diagram (Demšar 2006, Fig. 1) into ``path``.

        Parameters
        ----------
        path : str or os.PathLike
            Ending in ``.png`` or ``.svg``; written whole or not at all.
        metric : str, optional
            The metric; may be left out when the report has only one.
        cliques : {"nemenyi", "wilcoxon-holm"}, default="nemenyi"
            What the bars join: models less than Nemenyi's critical difference apart, or
            models no Holm-corrected Wilcoxon signed-rank test separates (Benavoli, Corani and
            Mangili 2016; :func:`~mlneighbors.benchmark.wilcoxon_cliques`), drawn without the
            critical difference.

        Raises
        ------
        ValueError
            An unknown metric, another suffix, or a metric whose tests were skipped (the
            message says why).
        ImportError
            Without matplotlib (the ``plot`` extra).
        """
        from ._diagram import cd_diagram

        if cliques not in ("nemenyi", "wilcoxon-holm"):
            raise ValueError(f"cliques must be 'nemenyi' or 'wilcoxon-holm'; got {cliques!r}")
        if metric is None:
            if len(self.metrics) != 1:
                raise ValueError(f"name the metric to draw: the report has {list(self.metrics)}")
            metric = next(iter(self.metrics))
        r = self[metric]
        c = r.comparison
        if c.critical_difference is None:
            why = "; ".join(c.notes) or "no test was run"
            raise ValueError(f"no critical-difference diagram for {metric}: {why}")
        title = f"{metric} ({_direction(r)}), N = {c.n_datasets} datasets, alpha = {c.alpha}"
        if c.friedman is not None:
            title += f"\nFriedman {_p_is(c.friedman.pvalue)}, Iman-Davenport {_p_is(c.friedman.f_pvalue)}"
        if cliques == "wilcoxon-holm":
            title += "\nbars: no difference by Wilcoxon signed-rank tests, Holm-corrected"
            cd_diagram(c.average_ranks, c.models, None, path, title=title,
                       groups=wilcoxon_cliques(c.models, c.average_ranks, c.wilcoxon))
            return
        cd_diagram(c.average_ranks, c.models, c.critical_difference, path, title=title)
