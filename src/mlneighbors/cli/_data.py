"""Data for a command: a registered dataset by name or the user's own file by path.

A DATA argument that names a registered dataset is read from the data directory; anything
else is a file, read by :func:`mlneighbors.datasets.load_file` with the file options
(``--xml``, ``--labels-first``, ``--labels-last``, ``--label-columns``, ``--no-header``,
``--input-format``).  A test part comes from the dataset's standard split, a ``.mat`` file's
own split (``--split``), or ``--test FILE``, whose columns are matched to the training data's
(by name where both name them); without one, cross-validation.  What the readers note about
a file (nominal codes, labels mapped, columns reordered) is printed once as ``note: ...``.
Features are scaled with the training part's statistics: min-max for dense data and none for
sparse data unless ``--scale`` says otherwise (estimators never rescale; the command line
does, because that is what a user of these methods needs).
"""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ._common import CLIError, note

if TYPE_CHECKING:  # numpy and scipy are imported by the commands that read data, not by the parser
    import numpy as np

SCALES = ("minmax", "standard", "none")


def add_data_args(p: argparse.ArgumentParser, *, test: bool = True, data_help: str | None = None,
                  data: bool = True) -> None:
    """DATA, ``--test`` (``test``), the options for reading a data file and ``--data-home``;
    ``data=False``: no DATA argument (benchmark names its datasets with ``--datasets``)."""
    if data:
        p.add_argument("data", metavar="DATA",
                       help=data_help or "a registered dataset (see 'mlneighbors datasets') or a data file: Mulan/MEKA "
                                         "ARFF (.arff[.gz]), libsvm (.svm), MATLAB (.mat), CSV (.csv)")
    if test:
        p.add_argument("--test", metavar="FILE", help="a test file (same format and options as DATA)")
    group = p.add_argument_group("reading a data file")
    group.add_argument("--xml", metavar="FILE", help="Mulan XML naming the label attributes of an ARFF file")
    group.add_argument("--labels-first", type=int, metavar="N", help="the first N attributes/columns are the labels")
    group.add_argument("--labels-last", type=int, metavar="N", help="the last N attributes/columns are the labels")
    group.add_argument("--label-columns", metavar="SPEC",
                       help="CSV: the label columns by name ('a,b,c') or a 0-based range ('5:10'; "
                            "write --label-columns=-3: for the last three)")
    group.add_argument("--no-header", action="store_true",
                       help="CSV: line 1 is a row, not column names (columns then match by position)")
    group.add_argument("--input-format", choices=("arff", "libsvm", "mat", "csv"),
                       help="the file's format, whatever its extension says")
    p.add_argument("--data-home", metavar="DIR", help="data directory of the registered datasets")


def add_scale_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--scale", choices=SCALES,
                   help="scale the features with the training part's statistics (default: minmax for dense "
                        "data, none for sparse data)")
    p.add_argument("--minmax", action="store_const", const="minmax", dest="scale", help=argparse.SUPPRESS)


@dataclass
class Data:
    """What a command reads: a training part, a test part or None, and how they were found."""

    label: str
    train: Any
    test: Any | None
    registered: bool


def _file_options(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "format": args.input_format,
        "xml": args.xml,
        "labels_first": args.labels_first,
        "labels_last": args.labels_last,
        "label_columns": args.label_columns,
        "header": not getattr(args, "no_header", False),
    }


#: the file options as the command line spells them, and the formats each applies to
_FLAGS = {
    "xml": ("--xml", ("arff",)),
    "labels_first": ("--labels-first", ("arff", "csv")),
    "labels_last": ("--labels-last", ("arff", "csv")),
    "label_columns": ("--label-columns", ("csv",)),
    "header": ("--no-header", ("csv",)),
}


def _format_of(path: str, given: str | None) -> str | None:
    """The format load_file will read ``path`` as (None: it will say why it cannot tell)."""
    from ..datasets import FORMATS

    if given:
        return given
    suffix = os.path.splitext(os.path.basename(path).lower().removesuffix(".gz"))[1]
    return next((fmt for fmt, suffixes in FORMATS.items() if suffix in suffixes), None)


def _check_flags(path: str, options: dict[str, Any], cmd: str) -> None:
    """The file options' conflicts, in the flags the user typed (load_file's messages name
    its parameters)."""
    given = [key for key in _FLAGS if options[key] is not None and options[key] is not True]
    if "labels_first" in given and "labels_last" in given:
        raise CLIError(f"mlneighbors {cmd}: --labels-first and --labels-last exclude each other")
    ways = [key for key in ("xml", "label_columns") if key in given]
    if ways and ({"labels_first", "labels_last"} & set(given) or len(ways) > 1):
        raise CLIError(f"mlneighbors {cmd}: give the labels one way: --labels-first/--labels-last, --xml or "
                       "--label-columns")
    fmt = _format_of(path, options["format"])
    for key in given:
        flag, formats = _FLAGS[key]
        if fmt is not None and fmt not in formats:
            raise CLIError(f"mlneighbors {cmd}: {flag} applies to {' and '.join(f.upper() for f in formats)} files; "
                           f"{path} is read as {fmt}")


def read_file(path: str, args: argparse.Namespace, cmd: str, *, like: Any = None, split: str = "all") -> Any:
    """One data file with the command's file options; one clear line on any problem.

    ``like``: the fitted model (rows to predict: its features, matched by name where both
    sides have names, label columns dropped) or the training data (a test file).  The
    readers' notes are printed once (``--quiet``: not at all).
    """
    from ..datasets import load_file

    options = _file_options(args)
    _check_flags(path, options, cmd)
    try:
        data = load_file(path, like=like, split=split, **options)
    except FileNotFoundError as exc:
        raise CLIError(f"mlneighbors {cmd}: no such file: {exc.filename or path}") from None
    except IsADirectoryError as exc:
        raise CLIError(f"mlneighbors {cmd}: {exc.filename or path} is a folder, not a data file") from None
    except (ValueError, OSError, ImportError) as exc:
        raise CLIError(f"mlneighbors {cmd}: {' '.join(str(exc).split())}") from None
    _print_notes(data, args)
    return data


def _print_notes(data: Any, args: argparse.Namespace) -> None:
    """What the reader did that the user should know, once per command (train and test
    files often share a note)."""
    seen = vars(args).setdefault("_notes_printed", set())
    for text in data.notes:
        if text not in seen:
            seen.add(text)
            note(f"{data.source}: {text}", getattr(args, "quiet", False))


def load(args: argparse.Namespace, cmd: str, *, whole: bool = False) -> Data:
    """DATA (and --test) as datasets; a registered name uses its standard split when it ships
    one (``whole``: all of it, for a model fitted once).  A test file's columns are matched
    to the training data's."""
    from ..datasets import list_datasets, load_dataset

    name = args.data
    test_file = getattr(args, "test", None)
    if name in list_datasets():
        from ..datasets import get_dataset_spec

        spec = get_dataset_spec(name)
        split = not whole and not test_file and "train" in spec.splits and not getattr(args, "cv", None)
        if getattr(args, "split", False) and "train" not in spec.splits:
            raise CLIError(f"mlneighbors {cmd}: dataset {name!r} ships no standard train/test split; "
                           f"{_instead(cmd)}")
        train = load_dataset(name, "train" if split else "all", args.data_home)
        for text in spec.notes:  # what the registry says of its data (an unordered code, ...)
            note(f"{name}: {text}", getattr(args, "quiet", False))
        if split:
            test = load_dataset(name, "test", args.data_home)
        else:
            test = read_file(test_file, args, cmd, like=train) if test_file else None
        return Data(name, train, test, registered=True)
    if "/" not in name and "." not in name:
        from difflib import get_close_matches

        close = get_close_matches(name, list_datasets(), n=2, cutoff=0.6)
        hint = f" (did you mean {', '.join(repr(c) for c in close)}?)" if close else ""
        raise CLIError(f"mlneighbors {cmd}: {name!r} is neither a registered dataset{hint} nor a file; "
                       f"registered: {', '.join(list_datasets())}")
    if getattr(args, "split", False) and not test_file:
        if _format_of(name, args.input_format) == "mat":  # a .mat file may hold its own split
            try:
                train = read_file(name, args, cmd, split="train")
            except CLIError:
                if not _mat_has_split(name):  # the reader's words are Python's (split='all'): the flags'
                    raise CLIError(f"mlneighbors {cmd}: {name} has no train/test split (it holds data and target): "
                                   f"{_instead(cmd)}") from None
                raise
            return Data(name, train, read_file(name, args, cmd, like=train, split="test"), registered=False)
        raise CLIError(f"mlneighbors {cmd}: {name} has no standard train/test split (a data file has none; a .mat "
                       f"file holding train and test parts has one); {_instead(cmd)}")
    train = read_file(name, args, cmd)
    test = read_file(test_file, args, cmd, like=train) if test_file else None
    return Data(name, train, test, registered=False)


def _instead(cmd: str) -> str:
    """What to do instead of --split, in the options the command has."""
    if cmd.startswith("benchmark"):
        return "drop --split to cross-validate it (--cv N)"
    return "drop --split and use --cv N, or give --test FILE"


def _mat_has_split(path: str) -> bool:
    """Whether a .mat file holds a train/test split (True where it cannot be read: the reader's
    own error then says what is wrong)."""
    from ..datasets import load_mat

    try:
        return "train" in load_mat(path)
    except (ValueError, OSError):
        return True


def scale_for(args: argparse.Namespace, X: Any) -> str:
    """The scaling of the run: --scale, else min-max for dense data and none for sparse."""
    import scipy.sparse as sp

    if args.scale is not None:
        return args.scale
    return "none" if sp.issparse(X) else "minmax"


def describe_scale(scale: str, chosen: bool) -> str:
    """How the features were scaled, and whether that was the default, for the output header."""
    text = {
        "minmax": "features min-max scaled with the training ranges",
        "standard": "features standardised with the training statistics",
        "none": "features not scaled",
    }[scale]
    if not chosen:
        text += f" (the default for {'sparse' if scale == 'none' else 'dense'} data; --scale to change)"
    return text


def labels_of(dataset: Any) -> np.ndarray:
    import numpy as np

    return np.asarray(dataset.Y)
