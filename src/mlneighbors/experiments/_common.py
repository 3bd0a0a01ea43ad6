"""What every reproduction shares: folds, scaling, k sweeps, the tidy table, files written whole.

Nothing here knows a paper. A reproduction module describes its tables (:class:`Layout`),
computes its cells (:func:`cell`), names its protocol decisions and its findings
(:class:`Finding`), and hands them to :func:`finish`, which writes ``table.csv``,
``table.md`` and ``report.md`` (and the figures it was given) into ``<out>/<paper>/``.
"""

from __future__ import annotations

import csv
import io
import math
import os
import tempfile
import time
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import scipy.sparse as sp

__all__ = [
    "COLUMNS",
    "REPORT_THRESHOLD",
    "Finding",
    "Layout",
    "ProgressBar",
    "ProgressFactory",
    "Reproduction",
    "cell",
    "finish",
    "markdown_table",
    "minmax_scale",
    "new_figure",
    "pivot",
    "require_matplotlib",
    "stratified_folds",
    "sweep_k",
]

#: The columns of every ``table.csv``, in order.
COLUMNS = ("table", "dataset", "method", "metric", "setting", "ours", "paper", "diff")

#: A cell further than this from the paper's number is named in ``report.md``.
REPORT_THRESHOLD = 0.02


# --------------------------------------------------------------------------------------
# progress
# --------------------------------------------------------------------------------------


class ProgressBar(Protocol):
    """What a reproduction calls on a progress bar (tqdm's ``update`` and ``close``)."""

    def update(self, n: int = 1) -> Any: ...

    def close(self) -> Any: ...


#: ``factory(total, description)`` -> a progress bar; the command line passes tqdm's.
ProgressFactory = Callable[[int, str], ProgressBar]


class _NoProgress:
    def update(self, n: int = 1) -> None:
        pass

    def close(self) -> None:
        pass


@contextmanager
def progress_bar(factory: ProgressFactory | None, total: int, desc: str) -> Iterator[ProgressBar]:
    bar = factory(total, desc) if factory is not None else _NoProgress()
    try:
        yield bar
    finally:
        bar.close()


# --------------------------------------------------------------------------------------
# the tidy table
# --------------------------------------------------------------------------------------


def _number(value: Any) -> float | None:
    if value is None:
        return None
    value = float(value)
    return None if math.isnan(value) else value


def cell(
    table: str,
    dataset: str,
    method: str,
    metric: str,
    setting: str = "",
    ours: float | None = None,
    paper: float | None = None,
) -> dict[str, Any]:
    """One row of the tidy table; ``diff = ours - paper`` when both exist."""
    ours, paper = _number(ours), _number(paper)
    diff = ours - paper if ours is not None and paper is not None else None
    return {
        "table": table,
        "dataset": dataset,
        "method": method,
        "metric": metric,
        "setting": setting,
        "ours": ours,
        "paper": paper,
        "diff": diff,
    }


@dataclass(frozen=True)
class Layout:
    """How one table of the tidy rows is laid out for reading.

    ``index`` fields make the rows and ``columns`` fields the columns of ``table.md``
    (the paper's own layout); ``text_index`` / ``text_columns`` do the same for the
    narrower table the command line prints (default: the same as ``table.md``).
    """

    table: str
    title: str
    index: tuple[str, ...]
    columns: tuple[str, ...]
    text_index: tuple[str, ...] | None = None
    text_columns: tuple[str, ...] | None = None
    digits: int = 4
    #: column renames of the printed table (e.g. two method versions sharing one column)
    text_aliases: Mapping[str, str] | None = None


@dataclass(frozen=True)
class Finding:
    """An explanation of differences from the paper, and the cells it applies to.

    Each of ``table``, ``dataset``, ``method``, ``metric`` is None (any value), a string
    or a tuple of strings.  ``report.md`` lists every cell further than
    :data:`REPORT_THRESHOLD` from the paper under the first finding that matches it.
    """

    text: str
    table: str | tuple[str, ...] | None = None
    dataset: str | tuple[str, ...] | None = None
    method: str | tuple[str, ...] | None = None
    metric: str | tuple[str, ...] | None = None

    def matches(self, row: Mapping[str, Any]) -> bool:
        for name in ("table", "dataset", "method", "metric"):
            want = getattr(self, name)
            if want is None:
                continue
            if row[name] not in ((want,) if isinstance(want, str) else want):
                return False
        return True


@dataclass
class Reproduction:
    """The result of one reproduction.

    Attributes
    ----------
    paper : str
        The reproduction's name (``"spyromitros2008"``, ...).
    title : str
        The paper it reproduces.
    rows : list of dict
        The tidy table: one dict per cell with the keys of :data:`COLUMNS`.
    layouts : list of Layout
        How each table is laid out for reading.
    notes : list of str
        The protocol decisions (what was run, and why).
    findings : list of Finding
        What was found about the differences from the paper.
    quick : bool
        Whether this was the quick mode (fewer folds, k values, datasets).
    seconds : float
        Wall time of the computation.
    files : list of Path
        The files written (empty when no output directory was given).
    stats : dict
        Counters of the run (``searches_per_fold``, ...).
    """

    paper: str
    title: str
    rows: list[dict[str, Any]]
    layouts: list[Layout]
    notes: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    quick: bool = False
    seconds: float = 0.0
    files: list[Path] = field(default_factory=list)
    stats: dict[str, Any] = field(default_factory=dict)

    def differences(self, threshold: float = REPORT_THRESHOLD) -> list[dict[str, Any]]:
        """The cells further than ``threshold`` from the paper's number."""
        return [r for r in self.rows if r["diff"] is not None and abs(r["diff"]) > threshold]

    def tables(self, *, text: bool = True) -> list[tuple[str, list[dict[str, Any]]]]:
        """Every table laid out for reading: ``(title, rows of strings)``.

        Each cell reads ``ours / paper`` (``-`` where a side has no number); a cell more
        than :data:`REPORT_THRESHOLD` from the paper is marked ``*``.
        """
        out = []
        for layout in self.layouts:
            rows = [r for r in self.rows if r["table"] == layout.table]
            index = (layout.text_index or layout.index) if text else layout.index
            columns = (layout.text_columns or layout.columns) if text else layout.columns
            aliases = layout.text_aliases if text else None
            out.append((layout.title, pivot(rows, index, columns, digits=layout.digits, text=text,
                                            aliases=aliases)))
        return out


def _fmt(value: float | None, digits: int) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def pivot(
    rows: Sequence[Mapping[str, Any]],
    index: Sequence[str],
    columns: Sequence[str],
    *,
    digits: int = 4,
    text: bool = True,
    aliases: Mapping[str, str] | None = None,
) -> list[dict[str, Any]]:
    """Lay tidy rows out as a table: one row per ``index`` value, one column per ``columns`` value.

    A cell is ``"ours / paper"`` (``text=True``) or ``"ours (paper)"`` (markdown), with a
    trailing ``*`` when the two differ by more than :data:`REPORT_THRESHOLD`.  Rows are
    grouped by the first index field, then the second..., each in order of first appearance;
    ``aliases`` renames columns.
    """
    table: dict[tuple, dict[str, Any]] = {}
    names: list[str] = []
    first_seen: list[dict[Any, int]] = [{} for _ in index]
    for r in rows:
        key = tuple(r[f] for f in index)
        for seen, value in zip(first_seen, key):
            seen.setdefault(value, len(seen))
        rec = table.setdefault(key, {f: r[f] for f in index})
        name = " ".join(str(r[c]) for c in columns if r[c] not in ("", None)) or "value"
        name = (aliases or {}).get(name, name)
        if name not in names:
            names.append(name)
        ours, paper = _fmt(r["ours"], digits), _fmt(r["paper"], digits)
        if r["paper"] is None:
            value = ours
        elif r["ours"] is None:
            value = f"- / {paper}" if text else f"({paper})"
        else:
            value = f"{ours} / {paper}" if text else f"{ours} ({paper})"
        if r["diff"] is not None and abs(r["diff"]) > REPORT_THRESHOLD:
            value += " *"
        rec[name] = value
    order = sorted(table, key=lambda key: tuple(seen[v] for seen, v in zip(first_seen, key)))
    return [{**{f: table[key][f] for f in index}, **{n: table[key].get(n, "") for n in names}} for key in order]


def markdown_table(rows: Sequence[Mapping[str, Any]], columns: Sequence[str] | None = None) -> str:
    """A GitHub-flavoured markdown table."""
    columns = list(columns) if columns is not None else (list(rows[0]) if rows else [])

    def esc(value: Any) -> str:
        if value is None:
            return ""
        if isinstance(value, float):
            return f"{value:.4f}"
        return str(value).replace("|", "\\|")

    lines = ["| " + " | ".join(columns) + " |", "|" + "|".join("---" for _ in columns) + "|"]
    lines += ["| " + " | ".join(esc(r.get(c)) for c in columns) + " |" for r in rows]
    return "\n".join(lines)


# --------------------------------------------------------------------------------------
# data, folds, scaling
# --------------------------------------------------------------------------------------


def load(name: str, split: str = "all", data_home: Any = None) -> Any:
    from ..datasets import load_dataset

    return load_dataset(name, split, data_home)


def stratified_folds(Y: Any, n_splits: int, random_state: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Seeded, shuffled multi-label stratified K-fold splits (iterative stratification)."""
    from ..model_selection import MultilabelStratifiedKFold

    cv = MultilabelStratifiedKFold(n_splits=n_splits, shuffle=True, random_state=random_state)
    return list(cv.split(None, Y))


def minmax_scale(X_train: Any, X_test: Any | None = None) -> tuple[Any, Any]:
    """Min-max scaling with the training ranges (MULAN's ``Normalize``), applied to both parts.

    Dense: :class:`sklearn.preprocessing.MinMaxScaler` (a constant column maps to 0).
    Sparse: :class:`~sklearn.preprocessing.MaxAbsScaler`, which is the same map for the
    non-negative sparse sets here (every column has an implicit zero, so its minimum is 0)
    and keeps the matrix sparse.  Test values outside the training range are not clipped.
    """
    from sklearn.preprocessing import MaxAbsScaler, MinMaxScaler

    scaler = MaxAbsScaler() if sp.issparse(X_train) else MinMaxScaler()
    scaler.fit(X_train)
    Xtr = scaler.transform(X_train)
    Xte = scaler.transform(X_test) if X_test is not None else None
    if sp.issparse(Xtr):
        return sp.csr_matrix(Xtr), (sp.csr_matrix(Xte) if Xte is not None else None)
    return np.ascontiguousarray(Xtr), (np.ascontiguousarray(Xte) if Xte is not None else None)


def take(X: Any, rows: np.ndarray) -> Any:
    return X[rows] if sp.issparse(X) else np.ascontiguousarray(X[rows])


@contextmanager
def collect_warnings(bucket: dict[str, int]) -> Iterator[None]:
    """Record warnings (category and the start of the message) instead of printing them."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield
    for w in caught:
        key = f"{w.category.__name__}: {str(w.message).split(';')[0][:90]}"
        bucket[key] = bucket.get(key, 0) + 1


# --------------------------------------------------------------------------------------
# k sweeps on one fold: one neighbour search per (training set, query set)
# --------------------------------------------------------------------------------------

#: ``factory(k, backend)`` -> an unfitted estimator using ``backend`` for its neighbours.
ModelFactory = Callable[[int, Any], Any]


def sweep_k(
    factories: Mapping[str, ModelFactory],
    ks: Sequence[int],
    X_train: Any,
    Y_train: np.ndarray,
    X_test: Any,
    Y_test: np.ndarray,
    metrics: Sequence[str],
    *,
    on_predict: Callable[[str, int, np.ndarray], None] | None = None,
    progress: ProgressBar | None = None,
    cache: Any = None,
) -> tuple[dict[tuple[str, int], dict[str, float]], int]:
    """Fit and score every model at every ``k`` on one fold, sharing one neighbour cache.

    One :class:`~mlneighbors.neighbors.NeighborCache` with ``k_max = max(ks) + 1``
    is the ``backend`` of every model: the leave-one-out neighbours of the training set
    (``k + 1`` asked, own row dropped) and the neighbours of the test set are each searched
    once, at the largest ``k``, and every other (model, k) reads a prefix.  Pass ``cache``
    to keep it (e.g. to read the neighbours afterwards with ``cache.build(X_train).query``,
    which costs no further search).

    Returns
    -------
    results : dict
        ``(method, k) -> {metric: value}``.
    searches : int
        How many searches reached the index (2 when both the training and the test set
        were queried).
    """
    from ..metrics import METRICS, evaluate
    from ..neighbors import NeighborCache

    need_scores = any(METRICS[m].kind == "ranking" for m in metrics)
    if cache is None:
        cache = NeighborCache(k_max=max(ks) + 1)
    results: dict[tuple[str, int], dict[str, float]] = {}
    for k in sorted(ks, reverse=True):
        for name, make in factories.items():
            model = make(k, cache).fit(X_train, Y_train)
            pred = model.predict(X_test)
            scores = model.predict_proba(X_test) if need_scores else None
            results[(name, k)] = evaluate(Y_test, pred, scores, metrics=list(metrics))
            if on_predict is not None:
                on_predict(name, k, pred)
            if progress is not None:
                progress.update(1)
    return results, cache.searches


def fit_and_score(model: Any, X_train: Any, Y_train: np.ndarray, X_test: Any, Y_test: np.ndarray,
                  metrics: Sequence[str]) -> dict[str, float]:
    """Fit one model and evaluate it on the test part."""
    from ..metrics import METRICS, evaluate

    model.fit(X_train, Y_train)
    need_pred = any(METRICS[m].kind == "bipartition" for m in metrics)
    need_scores = any(METRICS[m].kind == "ranking" for m in metrics)
    pred = model.predict(X_test) if need_pred else None
    scores = model.predict_proba(X_test) if need_scores else None
    return evaluate(Y_test, pred, scores, metrics=list(metrics))


# --------------------------------------------------------------------------------------
# files, written whole or not at all
# --------------------------------------------------------------------------------------


@contextmanager
def _atomic_path(path: Path) -> Iterator[Path]:
    """A temporary name in ``path``'s folder, renamed to ``path`` on success, removed on failure."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        yield Path(tmp)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def write_text(path: Path, text: str) -> Path:
    """Write ``text`` to ``path`` whole (a temporary file of the same folder, then a rename)."""
    with _atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return path


def _csv_value(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.6f}"
    return value


def rows_to_csv(rows: Iterable[Mapping[str, Any]], columns: Sequence[str] = COLUMNS) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(columns)
    for r in rows:
        writer.writerow([_csv_value(r.get(c)) for c in columns])
    return buf.getvalue()


def require_matplotlib() -> None:
    """Raise one clear ImportError when matplotlib (the ``plot`` extra) is missing."""
    try:
        import matplotlib  # noqa: F401
    except ImportError as exc:
        raise ImportError(
            "the figures need matplotlib: pip install 'mlneighbors[plot]' (or ask for no figures)"
        ) from exc


def new_figure(width: float = 6.0, height: float = 4.0) -> Any:
    """A matplotlib Figure that does not touch pyplot's global state or any GUI backend."""
    require_matplotlib()
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), layout="constrained")


def save_png(fig: Any, path: Path) -> Path:
    """Save a figure as PNG, whole or not at all."""
    with _atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", dpi=110)
    return path


def report_markdown(rep: Reproduction) -> str:
    """``report.md``: the protocol, then every cell more than the threshold away and why."""
    lines = [f"# {rep.paper}: {rep.title}", ""]
    mode = "quick mode (a smoke run: fewer folds, k values and datasets)" if rep.quick else "full run"
    lines += [f"{mode}; wall time {rep.seconds:.1f} s.", "", "## Protocol", ""]
    lines += [f"- {n}" for n in rep.notes]
    if rep.stats:
        lines += ["", "## Run statistics", ""]
        lines += [f"- {k}: {v}" for k, v in rep.stats.items()]
    differing = rep.differences()
    compared = sum(r["diff"] is not None for r in rep.rows)
    lines += [
        "",
        f"## Cells more than {REPORT_THRESHOLD} away from the paper",
        "",
        f"{len(differing)} of {compared} cells with a paper number differ by more than "
        f"{REPORT_THRESHOLD} (diff = ours - paper).",
    ]
    groups: dict[int, list[dict[str, Any]]] = {}
    for r in differing:
        match = next((i for i, f in enumerate(rep.findings) if f.matches(r)), -1)
        groups.setdefault(match, []).append(r)
    cols = ["table", "dataset", "method", "metric", "setting", "ours", "paper", "diff"]
    for i in sorted(groups, key=lambda j: (j < 0, j)):
        text = rep.findings[i].text if i >= 0 else "No explanation found."
        lines += ["", f"### {len(groups[i])} cell(s)", "", text, "", markdown_table(groups[i], cols)]
    unused = [f for i, f in enumerate(rep.findings) if i not in groups]
    if unused:
        lines += ["", "## Other findings", ""]
        lines += [f"- {f.text}" for f in unused]
    return "\n".join(lines) + "\n"


def tables_markdown(rep: Reproduction) -> str:
    parts = [f"# {rep.paper}: {rep.title}", "", "Each cell: ours (paper); `*` marks a difference "
             f"of more than {REPORT_THRESHOLD}; `-` where a side has no number."]
    for title, rows in rep.tables(text=False):
        parts += ["", f"## {title}", "", markdown_table(rows)]
    return "\n".join(parts) + "\n"


def finish(
    rep: Reproduction,
    out: str | os.PathLike[str] | None,
    figures: Mapping[str, Any] | None = None,
) -> Reproduction:
    """Write ``<out>/<paper>/``: table.csv, table.md, report.md and each figure as PNG."""
    if out is None:
        return rep
    folder = Path(out) / rep.paper
    files = [write_text(folder / "table.csv", rows_to_csv(rep.rows))]
    files.append(write_text(folder / "table.md", tables_markdown(rep)))
    for name, fig in (figures or {}).items():
        files.append(save_png(fig, folder / f"{name}.png"))
    files.append(write_text(folder / "report.md", report_markdown(rep)))
    rep.files = files
    return rep


class Timer:
    def __init__(self) -> None:
        self.start = time.perf_counter()

    @property
    def seconds(self) -> float:
        return time.perf_counter() - self.start
