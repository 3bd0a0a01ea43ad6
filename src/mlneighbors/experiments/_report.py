"""Reporting of the reproductions: the tidy table, its layouts, markdown and files written whole.

Nothing here knows a paper or runs a model. A reproduction module describes its tables
(:class:`Layout`), computes its cells (:func:`cell`), names its protocol decisions and its
findings (:class:`Finding`), and hands them to :func:`finish`, which writes ``table.csv``,
``table.md`` and ``report.md`` (and the figures it was given) into ``<out>/<paper>/``.
"""

from __future__ import annotations

import csv
import io
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._files import atomic_path, staged_folder

__all__ = [
    "COLUMNS",
    "REPORT_THRESHOLD",
    "Finding",
    "Layout",
    "Reproduction",
    "cell",
    "finish",
    "markdown_table",
    "new_figure",
    "pivot",
    "require_matplotlib",
    "rows_to_csv",
    "write_text",
]

#: The columns of every ``table.csv``, in order.
COLUMNS = ("table", "dataset", "method", "metric", "setting", "ours", "paper", "diff")

#: A cell further than this from the paper's number is named in ``report.md``.
REPORT_THRESHOLD = 0.02


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
        for seen, value in zip(first_seen, key, strict=True):
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
    order = sorted(table, key=lambda key: tuple(seen[v] for seen, v in zip(first_seen, key, strict=True)))
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
# files, written whole or not at all
# --------------------------------------------------------------------------------------


def write_text(path: Path, text: str) -> Path:
    """Write ``text`` to ``path`` whole (a temporary file of the same folder, then a rename)."""
    with atomic_path(path) as tmp:
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
    with atomic_path(path) as tmp:
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
    """Write ``<out>/<paper>/``: table.csv, table.md, report.md and each figure as PNG.

    The files are written into a staging folder beside it, which replaces ``<out>/<paper>``
    at the end: they appear together or not at all.
    """
    if out is None:
        return rep
    folder = Path(out) / rep.paper
    names = ["table.csv", "table.md", *(f"{name}.png" for name in figures or {}), "report.md"]
    with staged_folder(folder) as stage:
        write_text(stage / "table.csv", rows_to_csv(rep.rows))
        write_text(stage / "table.md", tables_markdown(rep))
        for name, fig in (figures or {}).items():
            save_png(fig, stage / f"{name}.png")
        write_text(stage / "report.md", report_markdown(rep))
    rep.files = [folder / name for name in names]
    return rep


