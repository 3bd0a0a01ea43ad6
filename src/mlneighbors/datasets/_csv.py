"""CSV (and TSV) files through pandas: a header line, the label columns named by the caller."""

from __future__ import annotations

import gzip
import os
import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from mlneighbors.datasets._arff import utf8_problem
from mlneighbors.datasets._dataset import Dataset, DatasetError, label_problem, shown_names

__all__ = ["NO_HEADER_HINT", "header_looks_like_data", "load_csv"]

PathLike = str | os.PathLike[str]

_RANGE_RE = re.compile(r"\s*(-?\d+)?\s*:\s*(-?\d+)?\s*")
_FIELDS_RE = re.compile(r"Expected (\d+) fields in line (\d+), saw (\d+)")
_UNNAMED_RE = re.compile(r"Unnamed: \d+")  # pandas' name for an empty cell of the header
_OPTION = "label_columns (--label-columns)"

#: What a message says where line 1 of a CSV file, read as the header, looks like a row of data.
NO_HEADER_HINT = "if the file has no header line, pass header=False (--no-header)"


def load_csv(
    path: PathLike,
    label_columns: str | Sequence[str],
    *,
    sep: str | None = None,
    header: bool = True,
) -> Dataset:
    """Load a CSV file whose first line names the columns; some columns are the labels.

    Needs pandas (the ``pandas`` extra).

    Parameters
    ----------
    path : str or path-like
        ``.csv`` or ``.tsv``, optionally gzip-compressed (``.gz``). Line 1 is the
        header (unless ``header=False``); each following line is one instance.
    label_columns : str or sequence of str
        The label columns: names (``"a,b,c"`` or ``["a", "b", "c"]``), or a
        0-based range of positions written as a Python slice (``"5:10"``,
        ``"-3:"`` for the last three, ``":2"`` for the first two). Every other
        column is a feature.  An empty sequence: no labels (rows to predict).
    sep : str, default=None
        The field separator; by default a tab for ``.tsv`` files, else a comma.
    header : bool, default=True
        Whether line 1 names the columns. Without a header every line is a row,
        ``label_columns`` must be a range, and the columns are named ``f0, ...``
        (features) and ``label0, ...`` (labels): they match other files by
        position only (``Dataset.named`` is False). A line 1 made only of
        numbers (and empty cells), read as the header, is probably a row of
        data: ``notes`` says so, and so does an error about the names it
        gives (a label column, or, in :func:`load_file` with ``like``, a
        feature it does not find). The column numbers 0, 1, ... (or 1, 2,
        ...) that pandas' ``to_csv`` writes for unnamed columns are names.

    Returns
    -------
    Dataset
        X dense float64 (an empty cell, or a line with fewer fields than the
        header, is NaN, said in ``notes``), Y int8 0/1 (``True``/``False`` are
        accepted), names from the header. Y's columns come in the order
        ``label_columns`` gives them. Rows that are entirely empty are skipped; a
        first column without a name that holds 0, 1, ..., n-1 is the index
        pandas' ``to_csv`` writes, and is dropped.

    Raises
    ------
    DatasetError
        An empty file, a line with more fields than the first, bytes that are
        not UTF-8, a repeated column name, a ``label_columns`` that names no
        column or selects none, a feature that is not a number, or a label that
        is not 0/1 (a label coded -1/+1 gets how to recode it); the message
        names the file and, for a value, its line.
    ImportError
        pandas is not installed.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "tiny.csv"
    >>> _ = path.write_text("x1,x2,sport,music\\n0.5,1,1,0\\n2,0,0,1\\n")
    >>> data = load_csv(path, "-2:")
    >>> data.label_names, data.Y.tolist(), data.X.tolist()
    (['sport', 'music'], [[1, 0], [0, 1]], [[0.5, 1.0], [2.0, 0.0]])
    """
    pd = _pandas()
    name = os.fspath(path)
    if sep is None:
        sep = "\t" if name.lower().removesuffix(".gz").endswith(".tsv") else ","
    frame = _read_frame(pd, path, sep, header)
    notes: list[str] = []
    frame, lines = _drop_empty_rows(frame, notes, 2 if header else 1)
    if header:
        frame = _drop_written_index(frame, notes)
        columns = [str(column) for column in frame.columns]
        if header_looks_like_data(columns):
            notes.append(f"line 1 holds only numbers, yet it is read as the header naming the columns; "
                         f"{NO_HEADER_HINT}")
    else:
        columns = [str(j) for j in range(frame.shape[1])]
        if not isinstance(label_columns, str) and len(label_columns) or (
            isinstance(label_columns, str) and _RANGE_RE.fullmatch(label_columns) is None
        ):
            raise DatasetError(
                f"{name}: without a header line the columns have no names; give {_OPTION} as a "
                "0-based range ('5:10', '-3:')"
            )
    labels = _label_positions(label_columns, columns, name)
    features = [j for j in range(len(columns)) if j not in set(labels)]
    X = np.column_stack(
        [_numbers(pd, frame.iloc[:, j], lines, name, "feature column") for j in features]
    ).reshape(len(frame), len(features))
    Y = np.column_stack(
        [_numbers(pd, frame.iloc[:, j], lines, name, "label") for j in labels] or [np.empty((len(frame), 0))]
    ).reshape(len(frame), len(labels))
    feature_names = [columns[j] for j in features] if header else [f"f{j}" for j in range(len(features))]
    label_names = [columns[j] for j in labels] if header else [f"label{j}" for j in range(len(labels))]
    for i, label in enumerate(label_names):
        problem = label_problem(Y[:, i], lines)
        if problem:
            where = "" if header else f" (column {labels[i]})"
            raise DatasetError(f"{name}: label {label!r}{where} {problem}")
    n_missing = int(np.isnan(X).sum())
    if n_missing:
        notes.append(f"{n_missing} empty feature value(s) are NaN in X")
    return Dataset(
        X=np.ascontiguousarray(X, dtype=np.float64),
        Y=Y.astype(np.int8),
        feature_names=feature_names,
        label_names=label_names,
        notes=notes,
        source=name,
        named=header,
        lines=lines,
    )


def _pandas() -> Any:
    try:
        import pandas
    except ImportError as exc:
        raise ImportError("reading CSV files needs pandas: pip install 'mlneighbors[pandas]'") from exc
    return pandas


def _read_frame(pd: Any, path: PathLike, sep: str, has_header: bool) -> Any:
    """The table, every failure of pandas' reader said as one line naming the file."""
    try:
        header = pd.read_csv(path, sep=sep, header=None, nrows=1, dtype=str).iloc[0].tolist()
        frame = pd.read_csv(path, sep=sep, skip_blank_lines=False, header=0 if has_header else None)
    except (FileNotFoundError, IsADirectoryError, PermissionError):
        raise
    except UnicodeDecodeError as exc:
        raise DatasetError(_not_utf8(path, exc)) from None
    except pd.errors.EmptyDataError:
        raise DatasetError(f"{path}: the file is empty; expected a header line naming the columns") from None
    except pd.errors.ParserError as exc:
        fields = _FIELDS_RE.search(str(exc))
        if fields is None:
            raise DatasetError(f"{path}: not readable as CSV ({exc})") from None
        expected, line, found = fields.groups()
        raise DatasetError(
            f"{path}, line {line}: expected {expected} fields, as "
            f"{'the header' if has_header else 'line 1'} has, found {found}"
        ) from None
    except (ValueError, OSError, EOFError) as exc:  # a damaged compressed file, ...
        raise DatasetError(f"{path}: not readable as CSV ({type(exc).__name__}: {exc})") from exc
    repeated = sorted({str(c) for c in header if header.count(c) > 1}) if has_header else []
    if repeated:
        cells = ["" if isinstance(c, float) else str(c) for c in header]  # an empty cell: NaN
        raise DatasetError(
            f"{path}, line 1: column names appear twice: {shown_names(repeated)}"
            + (f"; line 1 holds only numbers: {NO_HEADER_HINT}" if header_looks_like_data(cells) else "")
        )
    return frame


def _not_utf8(path: PathLike, exc: UnicodeDecodeError) -> str:
    with open(path, "rb") as fh:
        raw = fh.read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as located:
        line, problem = utf8_problem(raw, located)
        return f"{path}, line {line}: {problem}"
    return f"{path}: {exc}"


def _drop_empty_rows(frame: Any, notes: list[str], first_line: int) -> tuple[Any, np.ndarray]:
    """The rows holding something, and the line of each (row i of the table is line
    ``first_line + i``)."""
    empty = frame.isna().all(axis=1).to_numpy()
    lines = np.flatnonzero(~empty) + first_line
    if empty.any():
        notes.append(f"skipped {int(empty.sum())} empty line(s)")
        frame = frame[~empty]
    return frame, lines


def header_looks_like_data(cells: Sequence[str]) -> bool:
    """Whether the cells of a header line look like a row of data: each a number or empty
    (pandas names an empty cell ``Unnamed: j``), at least one a number, and the numbers not
    the columns' own numbering 0, 1, ... or 1, 2, ... (the header pandas' ``to_csv`` writes
    for a frame without column names).

    >>> header_looks_like_data(["0.5", "1.25", "Unnamed: 2", "1", "0"])
    True
    >>> header_looks_like_data(["x1", "x2", "sport"]), header_looks_like_data(["0", "1", "2", "3"])
    (False, False)
    """
    numbers = []
    for cell in cells:
        if not cell.strip() or _UNNAMED_RE.fullmatch(cell):
            continue
        try:
            numbers.append(float(cell))
        except ValueError:
            return False
    n = len(cells)
    numbered = len(numbers) == n and numbers in (list(range(n)), list(range(1, n + 1)))
    return bool(numbers) and not numbered


def _drop_written_index(frame: Any, notes: list[str]) -> Any:
    if frame.shape[1] < 2 or not str(frame.columns[0]).startswith("Unnamed: 0"):
        return frame
    first = frame.iloc[:, 0].to_numpy()
    if first.dtype.kind in "iuf" and np.array_equal(first, np.arange(len(frame))):
        notes.append(
            "dropped the first column: it has no name and holds 0, 1, ..., n-1 (the index "
            "pandas' to_csv writes)"
        )
        return frame.iloc[:, 1:]
    return frame


def _label_positions(spec: str | Sequence[str], header: list[str], origin: str) -> list[int]:
    """The 0-based positions of the label columns ``spec`` names or selects (an empty
    sequence: no labels, every column a feature)."""
    if not isinstance(spec, str) and len(spec) == 0:
        return []
    if isinstance(spec, str):
        selected = _RANGE_RE.fullmatch(spec)
        if selected is not None:
            start, stop = (None if g is None else int(g) for g in selected.groups())
            positions = list(range(len(header)))[start:stop]
            if not positions:
                raise DatasetError(
                    f"{origin}: {_OPTION} {spec!r} selects none of the {len(header)} columns"
                )
            return _leave_features(positions, header, origin)
        names = [part.strip() for part in spec.split(",")]
    else:
        names = [str(part) for part in spec]
    where = {name: j for j, name in enumerate(header)}
    for name in names:
        if name not in where:
            raise DatasetError(
                f"{origin}: {_OPTION} names {name!r}, which is not a column; columns are: "
                f"{shown_names(header, 20)}"
                + (f" (line 1 holds only numbers: {NO_HEADER_HINT})" if header_looks_like_data(header) else "")
            )
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise DatasetError(f"{origin}: {_OPTION} names {shown_names(repeated)} twice")
    return _leave_features([where[name] for name in names], header, origin)


def _leave_features(positions: list[int], header: list[str], origin: str) -> list[int]:
    if len(positions) == len(header):
        raise DatasetError(
            f"{origin}: {_OPTION} takes all {len(header)} columns as labels; at least one must "
            "be a feature"
        )
    return positions


def _numbers(pd: Any, column: Any, lines: np.ndarray, origin: str, what: str) -> np.ndarray:
    """A column as floats; the first value that is not a number is refused with its line."""
    if column.dtype.kind in "biuf":
        return column.to_numpy(dtype=np.float64)
    converted = pd.to_numeric(column, errors="coerce")
    bad = np.flatnonzero((converted.isna() & column.notna()).to_numpy())
    if bad.size:
        row = int(bad[0])
        expected = "numbers: drop the column or encode it" if what != "label" else "0 or 1"
        raise DatasetError(
            f"{origin}: {what} {str(column.name)!r} holds {column.iloc[row]!r} at line "
            f"{int(lines[row])}; expected {expected}"
        )
    return converted.to_numpy(dtype=np.float64)
