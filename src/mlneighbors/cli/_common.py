"""What every command shares: one-line errors, output formats, parameter values, progress."""

from __future__ import annotations

import argparse
import csv
import difflib
import io
import json
import os
import sys
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._json import finite as _finite

FORMATS = ("table", "json", "csv")

#: seconds a step runs before its progress bar appears (quick commands print no bar)
BAR_DELAY = 1.0

#: metrics evaluate and compare report unless --metrics says otherwise
DEFAULT_METRICS = (
    "hamming_loss",
    "subset_accuracy",
    "example_accuracy",
    "example_f1",
    "micro_f1",
    "macro_f1",
    "one_error",
    "ranking_loss",
    "normalized_coverage",
    "average_precision",
)


class CLIError(Exception):
    """A user error: printed as one line, exit status 2."""


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one clear line, not a usage dump
        raise CLIError(f"{self.prog}: {message}")

    def print_help(self, file: Any = None) -> None:
        """argparse's, except that a closed standard output (``--help | head``) is not passed
        over in silence: the command ends as any other whose reader went away."""
        (file or sys.stdout).write(self.format_help())


@dataclass
class Outputs:
    """What a command has written so far, for the line printed when it is interrupted, and
    the folders it created for its outputs (removed again if it ends with nothing in them)."""

    folder: str
    done: list[str] = field(default_factory=list)
    created: list[Path] = field(default_factory=list)

    def interrupted(self) -> str:
        if not self.done:
            return f"interrupted; nothing written to {self.folder}"
        return f"interrupted; {self.folder} holds only complete runs ({', '.join(self.done)})"

    def discard_empty(self) -> None:
        """Remove the folders this command created that are still empty (deepest first)."""
        from .._files import remove_empty

        remove_empty(self.created)


def prepare_folder(folder: str | os.PathLike[str], outputs: Outputs) -> None:
    """Create ``folder`` if needed and prove it writable (before any computing); the folders
    created are remembered in ``outputs``, to be removed if the command fails."""
    from .._files import make_folder

    outputs.created = make_folder(folder)  # deepest first


def check_out_file(path: str, cmd: str) -> None:
    """``--out`` must name a file: a folder there is refused, naming it."""
    if os.path.isdir(path):
        raise CLIError(f"mlneighbors {cmd}: --out {path} is a folder; give a file name, e.g. "
                       f"{os.path.join(path, 'model.skops' if cmd == 'fit' else 'predictions.csv')}")


def choice_error(what: str, value: str, valid: Sequence[str], cmd: str) -> CLIError:
    close = difflib.get_close_matches(value, list(valid), n=2, cutoff=0.6)
    hint = f" (did you mean {', '.join(repr(c) for c in close)}?)" if close else ""
    return CLIError(f"mlneighbors {cmd}: unknown {what} {value!r}{hint}; valid: {', '.join(valid)}")


def parse_value(text: str, default: Any, booleans: bool = True) -> Any:
    """A ``--param`` value as the parameter's type (from its default), else a literal guess;
    ``booleans``: whether true/false may be guessed (not for a parameter that takes none).

    >>> parse_value("true", 10)
    Traceback (most recent call last):
    ...
    ValueError: expected an integer
    """
    low = text.strip().lower()
    if isinstance(default, bool):
        if low in ("true", "yes", "1", "on"):
            return True
        if low in ("false", "no", "0", "off"):
            return False
        raise ValueError("expected true or false")
    if low in ("none", "null"):
        return None
    if low in ("true", "false") and not isinstance(default, (int, float)):
        if not booleans:
            raise ValueError("the parameter takes no true/false")
        return low == "true"
    if isinstance(default, int):
        try:
            return int(text)
        except ValueError:
            raise ValueError("expected an integer") from None
    if isinstance(default, float):
        try:
            return int(text) if low.lstrip("+-").isdigit() else float(text)
        except ValueError:
            raise ValueError("expected a number") from None
    if text.strip()[:1] in "{[":
        try:
            return json.loads(text)
        except json.JSONDecodeError:
            raise ValueError("expected JSON") from None
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return text


def key_values(items: Sequence[str] | None, option: str, cmd: str) -> list[tuple[str, str]]:
    """``KEY=VALUE`` arguments split in two, or one clear line naming the option."""
    pairs = []
    for item in items or []:
        if "=" not in item:
            raise CLIError(f"mlneighbors {cmd}: {option} expects key=value, got {item!r}")
        key, text = (part.strip() for part in item.split("=", 1))
        pairs.append((key, text))
    return pairs


def format_rows(rows: list[dict[str, Any]], fmt: str, columns: Sequence[str] | None = None) -> str:
    """Render a list of flat records as an aligned text table, JSON or CSV."""
    columns = list(columns) if columns is not None else (list(rows[0]) if rows else [])
    if fmt == "json":
        return dumps([{c: r.get(c) for c in columns} for r in rows])
    if fmt == "csv":
        buf = io.StringIO()
        writer = csv.DictWriter(buf, fieldnames=columns, extrasaction="ignore", lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
        return buf.getvalue().rstrip("\n")
    cells = [[_cell(r.get(c)) for c in columns] for r in rows]
    widths = [max([len(c)] + [len(row[i]) for row in cells]) for i, c in enumerate(columns)]
    numeric = [all(_is_number(r.get(c)) for r in rows) for c in columns]

    def line(values: Sequence[str]) -> str:
        return "  ".join(
            v.rjust(w) if num else v.ljust(w) for v, w, num in zip(values, widths, numeric, strict=True)
        ).rstrip()

    out = [line(columns), line(["-" * w for w in widths])]
    out.extend(line(row) for row in cells)
    return "\n".join(out)




def dumps(value: Any, indent: int | None = 2) -> str:
    """Valid JSON (a NaN, say a recall not measured, is written null: ``NaN`` is no JSON)."""
    return json.dumps(_finite(value), indent=indent, allow_nan=False)


def emit(rows: list[dict[str, Any]], fmt: str, columns: Sequence[str], meta: dict[str, Any]) -> None:
    """Print results: a table (under the header printed when the run started), or JSON /
    CSV that carry ``meta`` (the dataset, protocol, seed, model parameters and library
    version) with the rows."""
    if fmt == "table":
        print(format_rows(rows, "table", columns))
    elif fmt == "json":
        print(dumps({**meta, "results": [{c: r.get(c) for c in columns} for r in rows]}))
    else:
        flat = {k: (dumps(v, indent=None) if isinstance(v, (dict, list)) else v) for k, v in meta.items()}
        print(format_rows([{**r, **flat} for r in rows], "csv", [*columns, *flat]))


def progress_listener(quiet: bool) -> Any:
    """The progress bars of a run: tqdm bars on stderr when it is a terminal (and not
    --quiet), None otherwise (nothing is drawn).

    Every long computation reports to it (``mlneighbors._progress``): the fits of the folds,
    the blocks of each neighbour search, the reproductions' steps.  A bar appears once its
    step has lasted a second, so quick commands print nothing extra.  Without tqdm there is
    no bar (it is an optional extra).
    """
    if quiet or not sys.stderr.isatty():
        return None
    try:
        from .._progress import TqdmBars

        return TqdmBars(sys.stderr, delay=BAR_DELAY)
    except ImportError:
        return None


def header(text: str, fmt: str, quiet: bool) -> None:
    """What a run computes, printed before it starts: above the table on standard output,
    or on standard error where standard output is JSON or CSV (not with --quiet)."""
    if fmt == "table":
        print(text, flush=True)
    elif not quiet:
        print(text, file=sys.stderr, flush=True)


def note(message: str, quiet: bool = False) -> None:
    """A one-line notice on standard error (k clipped, a default chosen for the user)."""
    if not quiet:
        print(f"note: {message}", file=sys.stderr)


def warning_line(message: Any) -> None:
    """A warning as one line on standard error: ``warning: <message>`` (no source line)."""
    print(f"warning: {' '.join(str(message).split())}", file=sys.stderr)


def show_warning(message: Any, category: Any, filename: str, lineno: int, file: Any = None,
                 line: Any = None) -> None:
    """``warnings.showwarning`` for the command line: the message only, on one line."""
    warning_line(message)


def relay_warnings(caught: Sequence[warnings.WarningMessage], quiet: bool,
                   label_names: Sequence[str] | None = None) -> None:
    """The warnings recorded while fitting, once each: a clipped k as a note (the runner fits
    many folds: one line per distinct k), any other as a warning line (per kind: the first
    message, with how many others like it).  ``label_names``: the data's labels, which name
    those a warning gives by column (a label no training row has)."""
    from .._base import unseen_labels_message
    from ..exceptions import NeighborsWarning

    notes: list[str] = []
    others: dict[type, list[str]] = {}
    for w in caught:
        if issubclass(w.category, NeighborsWarning):
            text = str(w.message).split("; using ")
            msg = f"{text[0]}; using {text[1]}" if len(text) == 2 else str(w.message)
            if msg not in notes:
                notes.append(msg)
            continue
        msg = str(w.message)
        positions = getattr(w.message, "label_positions", None)
        if positions is not None and label_names is not None:
            msg = unseen_labels_message(positions, label_names)
        if msg not in others.setdefault(w.category, []):
            others[w.category].append(msg)
    for msg in notes:
        note(msg, quiet)
    for messages in others.values():
        more = len(messages) - 1
        warning_line(messages[0] + (f" (and {more} similar warning{'s' if more > 1 else ''})" if more else ""))


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) or value is None


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.4f}"
    return str(value)
