"""One entry point for a dataset given by path, in any of the formats the readers know."""

from __future__ import annotations

import errno
import os
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from mlneighbors.datasets._columns import Reference, align, refuse_missing
from mlneighbors.datasets._csv import NO_HEADER_HINT, header_looks_like_data, load_csv
from mlneighbors.datasets._dataset import Dataset, DatasetError, shown_names
from mlneighbors.datasets._formats import _load_arff
from mlneighbors.datasets._libsvm import read_libsvm, row_lines
from mlneighbors.datasets._mat import load_mat, load_mat_features

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
_SPARSE_SUFFIXES = ("-sparse", "_sparse")  # Mulan's sparse copies: Corel5k-train-sparse.arff


def load_file(
    path: PathLike,
    *,
    format: str | None = None,
    xml: PathLike | None = None,
    labels_first: int | None = None,
    labels_last: int | None = None,
    label_columns: str | Sequence[str] | None = None,
    header: bool = True,
    features_only: bool = False,
    like: Any = None,
    missing: str = "error",
    split: str = "all",
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
        given), ``<stem>.xml`` beside the file is used if it exists, else the
        first that exists of ``<stem>.xml`` with a ``-sparse`` / ``_sparse``
        ending removed, then a ``-train`` / ``-test`` / ``_train`` / ``_test``
        ending (Mulan's names: ``emotions-train.arff`` finds ``emotions.xml``,
        ``Corel5k-train-sparse.arff`` finds ``Corel5k.xml``). No other
        variant of the name is tried.
    labels_first, labels_last : int, default=None
        ARFF or CSV: the first (or last) n attributes are the labels. They
        decide over an XML found beside the file and over ``-C``.
    label_columns : str or sequence of str, default=None
        CSV (required there, unless ``features_only`` or ``like``): the label
        columns by name (``"a,b,c"``) or as a 0-based Python slice of positions
        (``"5:10"``, ``"-3:"``); see :func:`load_csv`.
    header : bool, default=True
        CSV: whether line 1 names the columns (see :func:`load_csv`).
    features_only : bool, default=False
        The file holds rows to predict: no labels are looked for, and every
        attribute or column is a feature (an ARFF file with only the feature
        attributes, a CSV file without label columns, libsvm lines with no
        label before the pairs, a ``.mat`` file holding ``data`` alone or a
        single matrix). ``Y`` has no columns. It excludes the label options.
    like : Dataset or fitted estimator, default=None
        Match the file's columns to these: the features of a fitted model or
        Pipeline (the file holds rows to predict; label columns it still has
        are dropped, ``notes`` saying so), or the features and labels of a
        training :class:`Dataset` (the file is its test part). Where both
        sides name their columns (ARFF attributes, a CSV header; a model's
        ``feature_names_`` or ``feature_names_in_``), they are matched by name:
        reordered where the order differs, a name missing or unknown refused;
        else by position, the counts checked. A libsvm file is numbered as
        the reference's libsvm training file was (its ``index_base``; a model
        written by ``mlneighbors fit`` records it in ``libsvm_index_base_``),
        not guessed from its own indices: a file without index 0 is not read
        as 1-based when the training file was 0-based, and index 0 where the
        training file was 1-based is refused, naming the line; a file that
        uses no index 0 and is one feature wider than a 0-based training
        file is refused saying that the bases seem to differ (and how to
        make them agree). See Notes.
    missing : {"error", "nan"}, default="error"
        What a missing feature value (an ARFF ``?``, an empty CSV cell, a CSV
        line with fewer fields than the header, a NaN in a libsvm or ``.mat``
        file) does: raise, naming the file, the line and the feature, or stay
        NaN in ``X`` for an imputer (the estimators do not impute). An
        infinite value is refused the same way with "error", and kept with
        "nan".
    split : {"all", "train", "test"}, default="all"
        ``.mat`` files holding a train/test split (see :func:`load_mat`): the
        part to read. "all" is every row, training rows first.

    Returns
    -------
    Dataset
        ``name`` is empty, ``split`` is ``"all"`` and ``source`` is ``path``. A
        ``.mat`` file holding a train/test split gives all its rows, training
        rows first (``notes`` says so; :func:`load_mat` gives the parts). With
        ``like``, ``X`` holds exactly the reference's features, in its order
        (and ``Y`` its labels, for a training set).

    Raises
    ------
    DatasetError
        The format cannot be told, the file is malformed, holds no rows, no
        feature, or a missing or infinite value, or its columns do not match
        ``like``; every message is
        one line naming the file, the line where there is one, and what was
        expected. An ARFF file with no XML and no count whose ``-C`` takes a
        column that is not binary as a label is refused (``-C`` is stale), and
        so is one whose ``@relation`` records a filter after ``-C`` that moves
        attributes in a way the header does not state exactly.
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
    ``@relation`` (n > 0: the first n attributes; n < 0: the last -n). Weka
    records every filter applied after ``-C`` in the relation; a filter is
    followed only where it and its options prove where the labels went
    (Reorder, Remove, filters that change values in place such as Discretize
    without ``-D``, Weka's instance filters), and any other filter or option
    (Discretize ``-D``, NominalToBinary, an unknown one) is refused, naming it.

    What ``like`` matches by name and what by position:

    ========================= ============================= =====================
    file                      reference with names          reference without
    ========================= ============================= =====================
    ARFF, CSV with a header   by name                       by position
    libsvm, .mat, no header   by position                   by position
    ========================= ============================= =====================

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

    Rows to predict, their columns in another order than the training file's:

    >>> _ = (folder / "new.csv").write_text("z,x\\n1,0.25\\n")
    >>> _ = (folder / "train.csv").write_text("x,z,y\\n0.5,1,1\\n2,0,0\\n")
    >>> train = load_file(folder / "train.csv", labels_last=1)
    >>> new = load_file(folder / "new.csv", like=train, features_only=True)
    >>> new.feature_names, new.X.tolist()
    (['x', 'z'], [[0.25, 1.0]])
    """
    path = Path(path)
    if not path.exists():  # before the options: a CSV file's missing label columns are not the problem
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), str(path))
    fmt = _format_of(path, format)
    _check_options(path, fmt, xml, labels_first, labels_last, label_columns, header, features_only)
    if missing not in ("error", "nan"):
        raise ValueError(f"missing must be 'error' or 'nan', got {missing!r}")
    if split not in ("all", "train", "test"):
        raise ValueError(f"split must be 'all', 'train' or 'test', got {split!r}")
    if split != "all" and fmt != "mat":
        raise ValueError(f"split={split!r} applies to .mat files holding a train/test split; "
                         f"{path} is read as {fmt}")
    options = _Options(xml, labels_first, labels_last, label_columns, header, split)
    if like is None:
        data = _read(path, fmt, options, features_only)
    else:
        reference = Reference.of(like)
        if reference.predict or features_only:
            reference = replace(reference, predict=True)
            data = _read_rows(path, fmt, options, reference, features_only)
        else:
            data = _read(path, fmt, options, False, reference)
            data = _align(_widen_libsvm(data, reference) if fmt == "libsvm" else data, reference, fmt, options)
    if data.n_samples == 0:
        raise DatasetError(f"{path}: has no data rows; expected at least one row after the header")
    if data.n_features == 0:
        told = f" ({'; '.join(data.notes)})" if data.notes else ""
        raise DatasetError(f"{path}: has no feature to use{told}; expected at least one numeric or nominal "
                           "feature besides the labels")
    if missing == "error":
        # libsvm rows hold no line numbers: the file is read again for them, on a missing value only
        refuse_missing(data, fmt, (lambda: row_lines(path)) if fmt == "libsvm" else None)
    return data


@dataclass(frozen=True)
class _Options:
    xml: PathLike | None
    labels_first: int | None
    labels_last: int | None
    label_columns: str | Sequence[str] | None
    header: bool
    split: str = "all"

    @property
    def name_labels(self) -> bool:
        return any(
            v is not None for v in (self.xml, self.labels_first, self.labels_last, self.label_columns)
        )


def _read(
    path: Path, fmt: str, options: _Options, features_only: bool, reference: Reference | None = None
) -> Dataset:
    """The file as a dataset, its labels found as the options say (none if ``features_only``);
    a libsvm file numbered from ``reference``'s base, where it has one."""
    if fmt == "arff":
        if features_only:
            return _load_arff(path, features_only=True)
        return _arff(path, options.xml, options.labels_first, options.labels_last)
    if fmt == "csv":
        label_columns = options.label_columns
        if features_only:
            label_columns = []
        elif label_columns is None:
            label_columns = _count_as_range(path, options.labels_first, options.labels_last)
        return load_csv(path, label_columns, header=options.header)
    if fmt == "libsvm":
        if reference is None:
            data = read_libsvm(path)
        else:
            data = read_libsvm(path, index_base=reference.index_base, base_from=reference.base_from)
        if features_only:
            if data.Y.any():
                data.notes.append("the labels that start the lines are not read: rows to predict")
            data = replace(data, Y=data.Y[:, :0], label_names=[])
        return data
    if features_only and options.split == "all":
        return load_mat_features(path)
    parts = load_mat(path)
    if options.split != "all":
        if options.split not in parts:
            raise DatasetError(f"{path}: the file holds no train/test split (variables data and "
                               "target); split='all' reads its rows")
        data = parts[options.split]
        return replace(data, Y=data.Y[:, :0], label_names=[]) if features_only else data
    data = parts["all"]
    if len(parts) > 1:
        n_train = parts["train"].n_samples
        data.notes.append(
            f"the file holds a train/test split: rows 0 to {n_train - 1} are the training rows, "
            "the rest the test rows (load_mat gives the parts)"
        )
    return data


def _read_rows(
    path: Path, fmt: str, options: _Options, reference: Reference, features_only: bool
) -> Dataset:
    """Rows to predict with ``reference``'s features: read whole and matched by name where
    both sides have names; else by position, a file that declares labels read without them."""
    if options.name_labels:  # the user says where the labels are: they are dropped
        data = _read(path, fmt, options, False, reference)
        dropped = data.label_names
        data = _align(replace(data, Y=data.Y[:, :0], label_names=[]), reference, fmt, options)
        if dropped:
            data.notes.append(f"the file's labels {shown_names(dropped)} are not read: rows to predict")
        return data
    data = _read(path, fmt, options, True, reference)
    if reference.features is not None and data.named:
        declared: list[str] = []
        if fmt == "arff" and not features_only:
            declared = _declared_labels(path, options, data, reference)
        return _align(data, reference, fmt, options, ignore_labels=declared)
    if fmt == "libsvm":
        data = _widen_libsvm(data, reference)
    if data.n_features != reference.n_features and fmt in ("arff", "mat") and not features_only:
        try:
            labelled = _read(path, fmt, options, False)
        except DatasetError:
            labelled = None
        if labelled is not None and labelled.n_features == reference.n_features and labelled.n_labels:
            labelled.notes.append(
                f"the file's labels {shown_names(labelled.label_names)} are not read: rows to predict"
            )
            data = replace(labelled, Y=labelled.Y[:, :0], label_names=[])
    return _align(data, reference, fmt, options)


def _align(
    data: Dataset, reference: Reference, fmt: str, options: _Options, ignore_labels: Sequence[str] = ()
) -> Dataset:
    """:func:`align`; where the names of a CSV file's header do not match the reference's and
    they are all numbers, the header is probably a row of data: the error says so."""
    try:
        return align(data, reference, ignore_labels)
    except DatasetError as exc:
        by_name = reference.features is not None or reference.labels is not None
        if fmt == "csv" and options.header and by_name and header_looks_like_data(
            [*data.feature_names, *data.label_names]
        ):
            raise DatasetError(f"{exc}; line 1 of {data.source} holds only numbers: {NO_HEADER_HINT}") from None
        raise


def _widen_libsvm(data: Dataset, reference: Reference) -> Dataset:
    """libsvm's widths are its largest feature index and label: the features and labels past
    them are 0 in these rows, not absent."""
    n_features = max(data.n_features, reference.n_features)
    n_labels = data.n_labels if reference.predict or reference.n_labels is None else max(
        data.n_labels, reference.n_labels
    )
    if (n_features, n_labels) == (data.n_features, data.n_labels):
        return data
    Y = np.zeros((data.n_samples, n_labels), dtype=data.Y.dtype)
    Y[:, : data.n_labels] = data.Y
    return replace(
        data,
        X=sp.csr_matrix((data.X.data, data.X.indices, data.X.indptr), shape=(data.n_samples, n_features)),
        Y=Y,
        feature_names=[f"f{j}" for j in range(n_features)],
        label_names=[f"label{j}" for j in range(n_labels)],
    )


def _declared_labels(path: Path, options: _Options, data: Dataset, reference: Reference) -> list[str]:
    """The labels an ARFF file declares (its XML beside it, its -C), where it has columns
    the reference does not know; [] when it declares none."""
    known = set(reference.features or ()) | set(reference.labels or ())
    if all(name in known for name in data.feature_names):
        return []
    try:
        return _read(path, "arff", options, False).label_names
    except DatasetError:
        return []


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
    header: bool = True,
    features_only: bool = False,
) -> None:
    counts = labels_first is not None or labels_last is not None
    given = {
        "xml": (xml is not None, ("arff",)),
        "labels_first/labels_last": (counts, ("arff", "csv")),
        "label_columns": (label_columns is not None, ("csv",)),
        "header=False": (not header, ("csv",)),
    }
    for option, (is_given, formats) in given.items():
        if is_given and fmt not in formats:
            raise ValueError(
                f"{option} applies to {' and '.join(f.upper() for f in formats)} files; "
                f"{path} is read as {fmt}"
            )
    if labels_first is not None and labels_last is not None:
        raise ValueError("labels_first and labels_last exclude each other")
    if counts and (xml is not None or label_columns is not None):
        raise ValueError("give the labels one way: labels_first/labels_last, xml or label_columns")
    if features_only and (counts or xml is not None or label_columns is not None):
        raise ValueError("features_only reads no labels: give no xml, labels_first, labels_last "
                         "or label_columns with it")


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
    """The Mulan XML beside an ARFF file: for ``<name>[-train|-test][-sparse].arff``,
    ``<stem>.xml``, then each ending removed in turn (the sparse one first)."""
    stem = Path(path.name.removesuffix(".gz").removesuffix(".GZ")).stem
    stems = [stem]
    for suffixes in (_SPARSE_SUFFIXES, _SPLIT_SUFFIXES):
        last = stems[-1]
        stems += [last[: -len(s)] for s in suffixes if last.lower().endswith(s)]
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
