"""Live models on the command line: the rows' identifiers (``fit --id-column``), ``update``
(new labelled rows: ``partial_fit``) and ``forget`` (rows removed by identifier).

A model file is rewritten whole or not at all: to ``--out``, or in place, through a temporary
file in the model's folder that is flushed to disk and then renamed over the old file
(``os.replace``), so that a crash at any moment leaves the old file as it was.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import io
import json
import os
import shutil
import tempfile
import warnings
import zipfile
from dataclasses import replace
from typing import Any

from ._common import CLIError, Outputs, check_out_file, note, prepare_folder, relay_warnings
from ._data import (
    Data,
    _check_flags,
    _file_options,
    _format_of,
    _print_notes,
    add_data_args,
    labels_of,
    load,
    read_file,
)

ID_COLUMN_HELP = ("the column of DATA holding the rows' unique identifiers (CSV: integers or strings; ARFF: a "
                  "numeric attribute of integers): neither a feature nor a label; 'mlneighbors forget' removes "
                  "rows by them")


def add_id_column_arg(p: argparse.ArgumentParser, what: str = "DATA") -> None:
    p.add_argument("--id-column", metavar="NAME", help=ID_COLUMN_HELP.replace("DATA", what))


def add_live_parsers(sub: Any) -> None:
    """The parsers of ``update`` and ``forget``."""
    p = sub.add_parser("update", help="add labelled rows to a saved model (partial_fit) and write it",
                       description="Add the labelled rows of ROWS to the model in MODEL_FILE (its partial_fit) "
                       "and write the model: to --out, or in place (atomically: a crash leaves the old file "
                       "whole). ROWS has the model's features, matched by name where both name them, and its "
                       "labels (a CSV file's label columns are the model's label names unless a label option "
                       "says otherwise). The model's scaler and other transforms are kept as fitted.")
    p.add_argument("model_file", metavar="MODEL_FILE", help="a model written by 'mlneighbors fit'")
    add_data_args(p, test=False, data_help="the new labelled rows: ARFF, libsvm, .mat or CSV, read as "
                  "'mlneighbors fit' reads its file")
    for action in p._actions:  # the new rows, as the description calls them
        if action.dest == "data":
            action.metavar = "ROWS"
    add_id_column_arg(p, "ROWS")
    p.add_argument("--out", metavar="FILE", help="write the updated model here (default: replace MODEL_FILE)")
    p.add_argument("--quiet", action="store_true")
    p.set_defaults(func=cmd_update)

    p = sub.add_parser("forget", help="remove training rows from a saved model by identifier and write it",
                       description="Remove the training rows with the given identifiers from the model in "
                       "MODEL_FILE (its forget) and write the model: to --out, or in place (atomically: a "
                       "crash leaves the old file whole). An identifier the model does not know, or one given "
                       "twice, is an error and nothing is written.")
    p.add_argument("model_file", metavar="MODEL_FILE", help="a model written by 'mlneighbors fit'")
    p.add_argument("--ids", required=True, metavar="FILE|ID,...",
                   help="the identifiers: comma-separated, or a file holding one per line")
    p.add_argument("--out", metavar="FILE", help="write the updated model here (default: replace MODEL_FILE)")
    p.add_argument("--quiet", action="store_true")
    p.set_defaults(func=cmd_forget)


# --------------------------------------------------------------------------------------
# identifiers from a column
# --------------------------------------------------------------------------------------


def _typed(values: list[str]) -> Any:
    """The identifiers as int64 where every one is an integer, else as strings."""
    import numpy as np

    try:
        return np.array([int(v) for v in values], dtype=np.int64)
    except (ValueError, OverflowError):
        return np.array(values, dtype=str)


def _csv_ids(path: str, column: str, cmd: str) -> tuple[list[str] | None, str]:
    """The cells of ``column`` in the data rows of a CSV file (rows wholly empty skipped, as
    the reader skips them), and the file's text with those cells numbered 0, 1, ... so that
    the reader takes the column for numbers whatever the identifiers are."""
    opener = gzip.open if path.lower().endswith(".gz") else open
    sep = "\t" if path.lower().removesuffix(".gz").endswith(".tsv") else ","
    try:
        with opener(path, "rt", encoding="utf-8", newline="") as fh:
            rows = list(csv.reader(fh, delimiter=sep))
    except (OSError, UnicodeDecodeError, csv.Error):
        return None, ""  # the reader says what is wrong with the file
    if not rows or column not in rows[0]:
        columns = ", ".join(repr(c) for c in (rows[0] if rows else [])[:20])
        raise CLIError(f"mlneighbors {cmd}: {path} has no column {column!r} (--id-column); its columns: "
                       f"{columns or 'none'}")
    j = rows[0].index(column)
    ids: list[str] = []
    for i, row in enumerate(rows[1:], start=2):
        if not any(cell.strip() for cell in row):
            continue
        cell = row[j].strip() if j < len(row) else ""
        if not cell:
            raise CLIError(f"mlneighbors {cmd}: {path}, line {i}: the identifier column {column!r} is empty; "
                           "every row needs its identifier")
        ids.append(cell)
        row[j] = str(len(ids) - 1)
    buf = io.StringIO()
    csv.writer(buf, delimiter=sep, lineterminator="\n").writerows(rows)
    return ids, buf.getvalue()


def _drop_column(data: Any, column: str, path: str, cmd: str) -> tuple[Any, Any]:
    """``data`` without the feature ``column``, and that column's values."""
    import numpy as np

    names = [str(n) for n in data.feature_names]
    if column not in names:
        where = "a label column" if column in data.label_names else "not a column"
        raise CLIError(f"mlneighbors {cmd}: {path}: --id-column {column!r} is {where} of the file; its features: "
                       f"{', '.join(repr(n) for n in names[:20])}")
    j = names.index(column)
    values = data.X[:, [j]]
    values = np.asarray(values.toarray() if hasattr(values, "toarray") else values).ravel()
    keep = [i for i in range(len(names)) if i != j]
    return replace(data, X=data.X[:, keep], feature_names=[names[i] for i in keep]), values


def _read_with_ids(path: str, args: argparse.Namespace, cmd: str) -> tuple[Any, Any]:
    """A data file and its rows' identifiers from ``--id-column`` (the column dropped)."""
    import numpy as np

    from ..datasets import load_file

    column = args.id_column
    fmt = _format_of(path, args.input_format)
    if fmt not in ("csv", "arff"):
        raise CLIError(f"mlneighbors {cmd}: --id-column names a column of a CSV or ARFF file; {path} is read as "
                       f"{fmt or 'an unknown format'}, which names no columns")
    if fmt == "csv" and getattr(args, "no_header", False):
        raise CLIError(f"mlneighbors {cmd}: --id-column names a column by the header line, and --no-header says "
                       f"{path} has none")
    if fmt == "arff" or not os.path.isfile(path):
        data = read_file(path, args, cmd)
        data, values = _drop_column(data, column, path, cmd)
        if not (np.isfinite(values).all() and (values == np.round(values)).all()):
            bad = values[~(np.isfinite(values) & (values == np.round(values)))][0]
            raise CLIError(f"mlneighbors {cmd}: {path}: the identifier attribute {column!r} holds {bad!r}; an "
                           "ARFF identifier attribute holds integers (string identifiers: use a CSV file)")
        ids = values.astype(np.int64)
        cells = [str(v) for v in ids]
    else:
        cells, text = _csv_ids(path, column, cmd)
        if cells is None:  # not readable as text: the reader's own words on why
            read_file(path, args, cmd)
            raise CLIError(f"mlneighbors {cmd}: {path}: cannot read the identifier column {column!r}")
        options = _file_options(args)
        _check_flags(path, options, cmd)
        folder = tempfile.mkdtemp(prefix="mlneighbors-ids-")
        copy = os.path.join(folder, os.path.basename(path).removesuffix(".gz"))
        try:
            with open(copy, "w", encoding="utf-8", newline="") as fh:
                fh.write(text)
            data = load_file(copy, **{**options, "format": "csv"})
        except (ValueError, OSError, ImportError) as exc:  # said of the user's file, not of the copy
            message = " ".join(str(exc).replace(copy, path).split())
            raise CLIError(f"mlneighbors {cmd}: {message}") from None
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        data = replace(data, source=path, notes=[t.replace(copy, path) for t in data.notes])
        _print_notes(data, args)
        data, _ = _drop_column(data, column, path, cmd)
        ids = _typed(cells)
    if len(ids) != data.n_samples:  # the raw reading and the reader disagree on the rows
        raise CLIError(f"mlneighbors {cmd}: {path}: found {len(ids)} identifiers in column {column!r} for "
                       f"{data.n_samples} rows")
    _check_unique(ids, data, path, column, cmd)
    return data, ids


def _check_unique(ids: Any, data: Any, path: str, column: str, cmd: str) -> None:
    import numpy as np

    values, first, counts = np.unique(ids, return_index=True, return_counts=True)
    if (counts > 1).any():
        value = values[counts > 1][0]
        rows = np.flatnonzero(ids == value)[:2]
        lines = data.lines
        where = (f"lines {int(lines[rows[0]])} and {int(lines[rows[1]])}" if lines is not None
                 else f"rows {rows[0]} and {rows[1]}")
        raise CLIError(f"mlneighbors {cmd}: {path}: the identifier column {column!r} holds {value.item()!r} "
                       f"twice ({where}); identifiers must be unique")


def load_with_ids(args: argparse.Namespace, cmd: str) -> tuple[Any, Any]:
    """``load(args, cmd, whole=True)`` and the rows' identifiers of ``--id-column`` (None
    without it): what ``fit`` reads."""
    from ..datasets import list_datasets

    if getattr(args, "id_column", None) is None:
        return load(args, cmd, whole=True), None
    if args.data in list_datasets():
        raise CLIError(f"mlneighbors {cmd}: --id-column names a column of a data file; the registered dataset "
                       f"{args.data!r} has no identifier column (its rows are numbered 0, 1, ...)")
    data, ids = _read_with_ids(args.data, args, cmd)
    return Data(args.data, data, None, registered=False), ids


# --------------------------------------------------------------------------------------
# the model file: read, and written whole or not at all
# --------------------------------------------------------------------------------------


def _read_model(path: str, cmd: str) -> Any:
    from .. import load as load_model
    from ..exceptions import ModelFileError

    if not os.path.isfile(path):
        raise CLIError(f"mlneighbors {cmd}: no model file {path!r} (write one with 'mlneighbors fit')")
    try:
        model = load_model(path)
    except ModelFileError as exc:
        raise CLIError(f"mlneighbors {cmd}: {exc}") from None
    method = "partial_fit" if cmd == "update" else "forget"
    if not hasattr(model, method) or not hasattr(model, "training_ids_"):
        raise CLIError(f"mlneighbors {cmd}: {path} holds a {type(model).__name__} without {method} (or not "
                       f"fitted); refit it with 'mlneighbors fit' of this version")
    return model


def _had_index(path: str) -> bool:
    """Whether the model file holds a saved neighbour index (written with ``--include-index``):
    the updated file keeps one then."""
    try:
        with zipfile.ZipFile(path) as archive:
            return "_saved_index" in json.dumps(json.loads(archive.read("schema.json")))
    except (OSError, ValueError, KeyError, zipfile.BadZipFile):
        return False


def _fsync(path: str | os.PathLike[str], directory: bool = False) -> None:
    fd = os.open(path, os.O_RDONLY | (getattr(os, "O_DIRECTORY", 0) if directory else 0))
    try:
        os.fsync(fd)
    except OSError:  # a file system without fsync of folders: the rename still is atomic
        if not directory:
            raise
    finally:
        os.close(fd)


def write_model(model: Any, path: str, cmd: str, *, include_index: bool) -> None:
    """``mlneighbors.save`` to a temporary file beside ``path``, flushed to disk, then renamed
    over ``path``: a failure or a crash at any point leaves the old file whole (and no
    temporary file, except after a crash, which cannot clean up)."""
    from .. import save
    from .._files import atomic_path

    final = model.steps[-1][1] if getattr(model, "steps", None) else model
    if include_index and hasattr(final, "recall_"):
        final.recall_  # noqa: B018 - builds the index again (an update drops it), so that it is saved
    try:
        with atomic_path(path) as tmp:
            save(model, tmp, include_index=include_index)
            _fsync(tmp)
        _fsync(os.path.dirname(os.path.abspath(path)), directory=True)
    except ValueError as exc:
        raise CLIError(f"mlneighbors {cmd}: cannot write {path}: {' '.join(str(exc).split())}") from None
    except OSError as exc:
        raise CLIError(f"mlneighbors {cmd}: cannot write {path}: {exc.strerror or exc}") from None


def _rows(n: int) -> str:
    return f"{n} training row{'' if n == 1 else 's'}"


def _target(args: argparse.Namespace, cmd: str) -> str:
    if args.out is None or os.path.abspath(args.out) == os.path.abspath(args.model_file):
        return args.model_file
    check_out_file(args.out, cmd)
    args.outputs = Outputs(args.out)
    prepare_folder(os.path.dirname(os.path.abspath(args.out)), args.outputs)
    return args.out


def _transforms_note(model: Any, cmd: str, quiet: bool) -> None:
    """What ``update`` and ``forget`` do not redo: the fitted transforms of the Pipeline."""
    kept = [est for _, est in getattr(model, "steps", [])[:-1] if est not in (None, "passthrough")]
    if not kept:
        return
    scalers = ["Scaler" in type(e).__name__ for e in kept]
    what = " and ".join(f"the {'scaler' if scaler else 'transform'} ({type(e).__name__})"
                        for e, scaler in zip(kept, scalers, strict=True))
    verb = "is" if len(kept) == 1 else "are"
    redo = " and ".join(([ "rescale"] if any(scalers) else []) + (["re-project"] if not all(scalers) else []))
    if cmd == "update":
        note(f"{what} fitted on the original rows {verb} kept, not refitted with the new rows; a refit on all "
             f"rows ('mlneighbors fit') would {redo}", quiet)
    else:
        note(f"{what} fitted with the forgotten rows among the original ones {verb} kept, and what it learnt "
             f"(a scaler's ranges, a projection) may be their values; a refit on the remaining rows "
             f"('mlneighbors fit') would {redo} and hold nothing of them", quiet)


# --------------------------------------------------------------------------------------
# update
# --------------------------------------------------------------------------------------


def _reference(model: Any, path: str) -> Any:
    """The model's columns as an empty training Dataset, which the new rows' file is matched
    to as a test file is to its training file (features and labels, by name where named)."""
    import numpy as np
    import scipy.sparse as sp

    from ..datasets import Dataset

    features = getattr(model, "feature_names_", None)
    labels = list(getattr(model, "label_names_", None) or [])
    d = int(model.n_features_in_)
    base = getattr(model, "libsvm_index_base_", None)
    X = sp.csr_matrix((0, d)) if base is not None else np.empty((0, d))
    return Dataset(X, np.empty((0, len(labels)), dtype=np.int8),
                   list(features) if features is not None else [f"f{j}" for j in range(d)], labels,
                   source=f"of {path}", named=features is not None, index_base=base)


def _match(data: Any, reference: Any, path: str, cmd: str) -> Any:
    """The rows of ``data`` with ``reference``'s features and labels, by name, in its order."""
    if not reference.named:
        if data.n_features != reference.n_features or data.n_labels != reference.n_labels:
            raise CLIError(f"mlneighbors {cmd}: {path} has {data.n_features} features and {data.n_labels} labels; "
                           f"the model was fitted on {reference.n_features} and {reference.n_labels}")
        return data
    order = []
    for kind, have, want in (("feature", data.feature_names, reference.feature_names),
                             ("label", data.label_names, reference.label_names)):
        have, want = [str(n) for n in have], [str(n) for n in want]
        missing = [n for n in want if n not in have]
        unknown = [n for n in have if n not in want]
        if missing or unknown:
            said = "; ".join(part for part in (
                f"missing the model's {kind}(s) {', '.join(map(repr, missing[:8]))}" if missing else "",
                f"{kind}(s) the model does not know: {', '.join(map(repr, unknown[:8]))}" if unknown else "")
                if part)
            raise CLIError(f"mlneighbors {cmd}: {path}: {said}")
        order.append([have.index(n) for n in want])
    return replace(data, X=data.X[:, order[0]], Y=data.Y[:, order[1]],
                   feature_names=list(reference.feature_names), label_names=list(reference.label_names))


def cmd_update(args: argparse.Namespace) -> int:
    """Add the labelled rows of DATA to the saved model (``partial_fit``) and write it."""
    from ..exceptions import InvalidParameterError
    from ._commands import _storage_for

    target = _target(args, "update")
    model = _read_model(args.model_file, "update")
    reference = _reference(model, args.model_file)
    labels_given = any(v is not None for v in (args.xml, args.labels_first, args.labels_last, args.label_columns))
    if not labels_given and _format_of(args.data, args.input_format) == "csv" and reference.label_names:
        args.label_columns = list(reference.label_names)  # a CSV file's labels: the model's, by name
    if args.id_column is not None:
        data, ids = _read_with_ids(args.data, args, "update")
        data = _match(data, reference, args.data, "update")
    else:
        data, ids = read_file(args.data, args, "update", like=reference), None
    if ids is None and model.training_ids_.dtype.kind == "U":
        raise CLIError(f"mlneighbors update: the rows of {args.model_file} are known by string identifiers; give "
                       f"the identifiers of the new rows with --id-column NAME (a column of {args.data})")
    X = _storage_for(model, data.X)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            model.partial_fit(X, labels_of(data), ids=ids)
        except InvalidParameterError as exc:
            raise CLIError(f"mlneighbors update: {exc}") from None
        except ValueError as exc:
            raise CLIError(f"mlneighbors update: {' '.join(str(exc).split())} (adding the rows of {args.data} "
                           f"to {args.model_file})") from None
    relay_warnings(caught, args.quiet, data.label_names if data.named else None)
    write_model(model, target, "update", include_index=_had_index(args.model_file))
    _transforms_note(model, "update", args.quiet)
    if not args.quiet:
        print(f"wrote {target}: {_rows(data.n_samples)} of {args.data} added; {_rows(len(model.training_ids_))} "
              "in all")
    return 0


# --------------------------------------------------------------------------------------
# forget
# --------------------------------------------------------------------------------------


def _ids_given(text: str, training_ids: Any, cmd: str) -> Any:
    """The identifiers of ``--ids``: a file with one per line (where ``text`` names an existing
    file) or a comma-separated list, typed as the model's identifiers."""
    import numpy as np

    if os.path.isfile(text):
        try:
            with open(text, encoding="utf-8") as fh:
                values = [line.strip() for line in fh]
        except (OSError, UnicodeDecodeError) as exc:
            raise CLIError(f"mlneighbors {cmd}: cannot read --ids file {text}: {exc}") from None
        source = f"the file {text}"
    else:
        values = [part.strip() for part in text.split(",")]
        source = "--ids" if "," in text else f"--ids (no file {text!r} exists)"
    values = [v for v in values if v]
    if not values:
        raise CLIError(f"mlneighbors {cmd}: {source} gives no identifier")
    if training_ids.dtype.kind != "U":
        bad = next((v for v in values if not v.lstrip("+-").isdigit()), None)
        if bad is not None:
            raise CLIError(f"mlneighbors {cmd}: {source} gives {bad!r}, which is not an integer; the model's rows "
                           "are known by integer identifiers")
        return np.array([int(v) for v in values], dtype=np.int64)
    return np.array(values, dtype=str)


def cmd_forget(args: argparse.Namespace) -> int:
    """Remove training rows of the saved model by identifier (``forget``) and write it."""
    target = _target(args, "forget")
    model = _read_model(args.model_file, "forget")
    ids = _ids_given(args.ids, model.training_ids_, "forget")
    n = len(model.training_ids_)
    try:
        model.forget(ids)
    except ValueError as exc:
        hint = "" if "," in args.ids or os.path.isfile(args.ids) else f" (and no file {args.ids!r} exists)"
        raise CLIError(f"mlneighbors forget: {args.model_file}: {' '.join(str(exc).split())}{hint}; nothing "
                       "written") from None
    write_model(model, target, "forget", include_index=_had_index(args.model_file))
    _transforms_note(model, "forget", args.quiet)
    if not args.quiet:
        print(f"wrote {target}: {_rows(n - len(model.training_ids_))} forgotten; "
              f"{_rows(len(model.training_ids_))} left")
    return 0
