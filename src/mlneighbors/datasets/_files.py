"""One entry point for a dataset given by path, in any of the formats the readers know."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from mlneighbors.datasets._csv import load_csv
from mlneighbors.datasets._dataset import Dataset, DatasetError
from mlneighbors.datasets._formats import _load_arff
from mlneighbors.datasets._libsvm import load_libsvm
from mlneighbors.datasets._mat import load_mat

__all__ = ["FORMATS", "load_file"]

PathLike = str | os.PathLike[str]

#: The formats :func:`load_file` reads, and the extensions that select each.
FORMATS: dict[str, tuple[str, ...]] = {
    "arff": (".arff",),
    "libsvm": (".svm", ".libsvm", ".svmlight"),
    "mat": (".mat",),
    "csv": (".csv", ".tsv"),
}
_TEXT_FORMATS = ("arff", "libsvm", "csv")
_SPLIT_SUFFIXES = ("-train", "-test", "_train", "_test")


def load_file(
    path: PathLike,
    *,
    format: str | None = None,
    xml: PathLike | None = None,
    labels_first: int | None = None,
    labels_last: int | None = None,
    label_columns: str | Sequence[str] | None = None,
) -> Dataset:
    """Load a multi-label dataset from a file, whatever its format.

    Parameters
    ----------
    path : str or path-like
        The file. Its format comes from its extension, after a ``.gz`` (text
        formats only): ``.arff`` (Mulan or MEKA ARFF), ``.svm`` / ``.libsvm`` /
        ``.svmlight`` (libsvm multi-label text), ``.mat`` (MATLAB), ``.csv`` /
        ``.tsv`` (through pandas).
    format : {"arff", "libsvm", "mat", "csv"}, default=None
        The format, whatever the extension says.
    xml : str or path-like, default=None
        ARFF: the Mulan XML naming the labels. When None (and no count is
        given), ``<stem>.xml`` beside the file is used if it exists, else
        ``<stem>.xml`` with a ``-train`` / ``-test`` / ``_train`` / ``_test``
        ending removed (``emotions-train.arff`` finds ``emotions.xml``).
    labels_first, labels_last : int, default=None
        ARFF or CSV: the first (or last) n attributes are the labels. They
        decide over an XML found beside the file and over ``-C``.
    label_columns : str or sequence of str, default=None
        CSV (required there): the label columns by name (``"a,b,c"``) or as a
        0-based Python slice of positions (``"5:10"``, ``"-3:"``); see
        :func:`load_csv`.

    Returns
    -------
    Dataset
        ``name`` is empty and ``split`` is ``"all"``. A ``.mat`` file holding a
        train/test split gives all its rows, training rows first (``notes`` says
        so; :func:`load_mat` gives the parts).

    Raises
    ------
    DatasetError
        The format cannot be told or the file is malformed; every message is one
        line naming the file, the line where there is one, and what was
        expected. An ARFF file with no XML and no count whose ``-C`` takes a
        column that is not binary as a label is refused (``-C`` is stale).
    ValueError, TypeError
        Options that do not apply to the format, or contradict each other.
    FileNotFoundError
        ``path`` (or ``xml``) names no file.

    Warns
    -----
    DatasetWarning
        An ARFF file's ``-C`` names other labels than its XML (the XML decides).

    Notes
    -----
    The labels of an ARFF file come from, in this order: ``labels_first`` /
    ``labels_last``; the XML (given, or found beside the file); ``-C n`` in the
    ``@relation`` (n > 0: the first n attributes; n < 0: the last -n).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "tiny.arff").write_text(
    ...     "@relation tiny\\n@attribute x numeric\\n@attribute y1 {0,1}\\n"
    ...     "@attribute y2 {0,1}\\n@data\\n0.5,1,0\\n2,1,1\\n")
    >>> data = load_file(folder / "tiny.arff", labels_last=2)
    >>> data.label_names, data.Y.tolist()
    (['y1', 'y2'], [[1, 0], [1, 1]])
    """
    path = Path(path)
    fmt = _format_of(path, format)
    _check_options(path, fmt, xml, labels_first, labels_last, label_columns)
    if fmt == "arff":
        return _arff(path, xml, labels_first, labels_last)
    if fmt == "csv":
        if label_columns is None:
            label_columns = _count_as_range(path, labels_first, labels_last)
        return load_csv(path, label_columns)
    if fmt == "libsvm":
        return load_libsvm(path)
    parts = load_mat(path)
    data = parts["all"]
    if len(parts) > 1:
        n_train = parts["train"].n_samples
        data.notes.append(
            f"the file holds a train/test split: rows 0 to {n_train - 1} are the training rows, "
            "the rest the test rows (load_mat gives the parts)"
        )
    return data


def _format_of(path: Path, format: str | None) -> str:
    if format is not None:
        if format not in FORMATS:
            raise ValueError(
                f"format must be one of {', '.join(map(repr, FORMATS))}; got {format!r}"
            )
        return format
    name = path.name.lower()
    compressed = name.endswith(".gz")
    suffix = Path(name.removesuffix(".gz")).suffix
    for fmt, suffixes in FORMATS.items():
        if suffix in suffixes:
            if compressed and fmt not in _TEXT_FORMATS:
                raise DatasetError(f"{path}: a compressed .mat file cannot be read; gunzip it first")
            return fmt
    known = ", ".join(s for suffixes in FORMATS.values() for s in suffixes)
    raise DatasetError(
        f"{path}: cannot tell the format from the extension {suffix or '(none)'!r}; expected "
        f"one of {known} (or .gz of a text one), or pass format= one of "
        f"{', '.join(map(repr, FORMATS))}"
    )


def _check_options(
    path: Path,
    fmt: str,
    xml: PathLike | None,
    labels_first: int | None,
    labels_last: int | None,
    label_columns: str | Sequence[str] | None,
) -> None:
    counts = labels_first is not None or labels_last is not None
    given = {
        "xml": (xml is not None, ("arff",)),
        "labels_first/labels_last": (counts, ("arff", "csv")),
        "label_columns": (label_columns is not None, ("csv",)),
    }
    for option, (is_given, formats) in given.items():
        if is_given and fmt not in formats:
            raise ValueError(
                f"{option} applies to {' and '.join(f.upper() for f in formats)} files; "
                f"{path} is read as {fmt}"
            )
    if labels_first is not None and labels_last is not None:
        raise ValueError("give labels_first or labels_last, not both")
    if counts and (xml is not None or label_columns is not None):
        raise ValueError("give the labels one way: labels_first/labels_last, xml or label_columns")


def _arff(
    path: Path, xml: PathLike | None, labels_first: int | None, labels_last: int | None
) -> Dataset:
    found = None
    if xml is None and labels_first is None and labels_last is None:
        found = xml = _xml_beside(path)
    data = _load_arff(path, xml, labels_first, labels_last)
    if found is not None:
        data.notes.insert(0, f"the labels are named by {found}, found beside the file")
    return data


def _xml_beside(path: Path) -> Path | None:
    stem = Path(path.name.removesuffix(".gz").removesuffix(".GZ")).stem
    stems = [stem] + [stem[: -len(s)] for s in _SPLIT_SUFFIXES if stem.lower().endswith(s)]
    for candidate in stems:
        xml = path.with_name(candidate + ".xml")
        if candidate and xml.is_file():
            return xml
    return None


def _count_as_range(path: Path, labels_first: int | None, labels_last: int | None) -> str:
    for given, count, as_range in (
        ("labels_first", labels_first, lambda n: f":{n}"),
        ("labels_last", labels_last, lambda n: f"-{n}:"),
    ):
        if count is None:
            continue
        if not isinstance(count, int) or isinstance(count, bool) or count < 1:
            raise ValueError(f"{given} must be a positive int, got {count!r}")
        return as_range(count)
    raise DatasetError(
        f"{path}: a CSV file does not say which columns are labels; give label_columns "
        "(--label-columns) by names ('a,b,c') or as a 0-based range ('5:10', '-3:'), or "
        "labels_first=N / labels_last=N"
    )
