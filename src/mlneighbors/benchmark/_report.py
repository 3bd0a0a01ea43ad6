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
from ._stats import Comparison, _check_alpha, compare

__all__ = ["MetricReport", "Report", "build_report"]

#: a cell's states, see the module's notes
_OK, _FAILED, _INCOMPLETE, _MISSING = "ok", "failed", "incomplete", "missing"


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
    comparison = compare(mean[kept], models=names_m, greater_is_better=greater, control=use_control, alpha=alpha)
    if control is not None and use_control is None:
        comparison = _with_note(comparison, f"the control {control} has no value for this metric: no Holm test")
    return MetricReport(metric, greater, names_d, names_m, absent, mean, std, folds, values, failed, status, best,
                        dropped, comparison)


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
                                    control, alpha, expected=folds is not None, twins=twins)
               for name in names}
    return Report(reports, alpha=alpha, control=control, provenance=provenance)


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
                body.append([_md_escape(dataset), *cells])
            if c.n_datasets:
                body.append([f"average rank (N = {c.n_datasets})", *(_num(x, 2) for x in c.average_ranks)])
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
            out += _md_table(["first", "second", "W", "wins/ties/losses", "p", "Holm p", "differs"],
                             [[_md_escape(w.first), _md_escape(w.second), _num(w.statistic, 1),
                               f"{w.wins}/{w.ties}/{w.losses}", _p(w.pvalue), _p(w.adjusted),
                               "yes" if w.reject else "no"] for w in c.wilcoxon], "llrrrrl")
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
                rows.append([_tex(short[dataset]), *cells])
            footer = ([[f"Average rank ($N = {c.n_datasets}$)", *(_num(x, 2) for x in c.average_ranks)]]
                      if c.n_datasets else [])
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
                                  ["First", "Second", "$W$", "W/T/L", "$p$", "Holm $p$", "Differs"],
                                  [[_tex(w.first), _tex(w.second), _num(w.statistic, 1),
                                    f"{w.wins}/{w.ties}/{w.losses}", _tex(_p(w.pvalue)), _tex(_p(w.adjusted)),
                                    "yes" if w.reject else "no"] for w in c.wilcoxon], "llrrrrl")
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

    def to_csv(self) -> str:
        """The cells as CSV: one row per metric, dataset and model (absent models included).

        Columns :attr:`CSV_COLUMNS`; ``std`` is the sample standard deviation over folds
        (ddof = 1); ``status`` is ``ok``, ``failed``, ``incomplete``, ``missing`` or
        ``absent``; ``best`` is 1 or 0; ``rank`` (on the dataset) and ``average_rank`` are
        empty where the dataset or model is out of the ranks. Each row carries its provenance:
        the version that wrote the results, the protocol (JSON), its seed, the dataset's sha256
        and the configuration's parameters (JSON), empty when the report was built without it.
        The tests are in :meth:`to_json`, :meth:`to_markdown` and :meth:`to_latex`.

        Returns
        -------
        str
        """
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(self.CSV_COLUMNS)
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

        for r in self.metrics.values():
            ranks = r._rank_of()
            average = dict(zip(r.models, r.comparison.average_ranks, strict=True))
            for i, dataset in enumerate(r.datasets):
                for j, model in enumerate(r.models):
                    writer.writerow([r.metric, dataset, model, _num(r.mean[i, j], 6), _num(r.std[i, j], 6),
                                     r.folds[i], r.failed[i, j], r.status[i, j], int(r.best[i, j]),
                                     _num(ranks[i, j], 2), _num(average[model], 4), *origin(dataset, model)])
                for model in r.absent:
                    writer.writerow([r.metric, dataset, model, "", "", r.folds[i], 0, "absent", 0, "", "",
                                     *origin(dataset, model)])
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

    def cd_diagram(self, path: str | os.PathLike[str], metric: str | None = None) -> None:
        """Draw a metric's critical-difference diagram (Demšar 2006, Fig. 1) into ``path``.

        Parameters
        ----------
        path : str or os.PathLike
            Ending in ``.png`` or ``.svg``; written whole or not at all.
        metric : str, optional
            The metric; may be left out when the report has only one.

        Raises
        ------
        ValueError
            An unknown metric, another suffix, or a metric whose tests were skipped (the
            message says why).
        ImportError
            Without matplotlib (the ``plot`` extra).
        """
        from ._diagram import cd_diagram

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
        cd_diagram(c.average_ranks, c.models, c.critical_difference, path, title=title)
