"""Loaders from ARFF files to :class:`Dataset`, the labels found in one of three ways.

* :func:`load_mulan`: Mulan ARFF, the labels named by a Mulan XML file;
* :func:`load_meka`: MEKA ARFF, the labels given by ``-C n`` in ``@relation``;
* ``labels_first=n`` / ``labels_last=n`` (through :func:`~mlneighbors.datasets.load_file`).

The other formats have modules of their own (``_mat``, ``_libsvm``, ``_csv``). Each loader
returns features ``X`` as float64 (a dense array, or CSR for sparse sources) and labels
``Y`` as an int8 0/1 array, with ``name=""``.
"""

from __future__ import annotations

import os
import re
import warnings
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import scipy.sparse as sp

from mlneighbors.datasets._arff import ArffTable, Attribute, read_arff
from mlneighbors.datasets._dataset import Dataset, DatasetError, label_problem, shown_names
from mlneighbors.datasets._relation import CLabels, c_labels, c_option
from mlneighbors.exceptions import DatasetWarning

__all__ = ["load_meka", "load_mulan", "read_mulan_xml"]

PathLike = str | os.PathLike[str]

# A nominal feature with a different value on each of at least this many
# instances is an identifier (genbase's ``protein``), not a feature.
_ID_MIN_ROWS = 20

_BOOLEAN_VALUES = ({"yes": 1.0, "no": 0.0}, {"true": 1.0, "false": 0.0})
_ENCODING_RE = re.compile(rb"""^\s*<\?xml[^>]*encoding\s*=\s*["']([^"']*)["']""")
_LABELS_HOW = (
    "the Mulan XML naming the labels (xml=, --xml) or labels_first=N / labels_last=N "
    "(--labels-first N / --labels-last N)"
)


# ---------------------------------------------------------------------------
# Mulan XML


def read_mulan_xml(path: PathLike) -> list[str]:
    """The label names of a Mulan XML file, in document order.

    Parameters
    ----------
    path : str or path-like
        A Mulan ``labels`` XML file: ``<labels><label name="..."/>...</labels>``.
        Nested labels (a hierarchy) are all returned, parents before children.

    Returns
    -------
    list of str

    Raises
    ------
    DatasetError
        The file is empty, not well-formed XML (the message names the line),
        declares an encoding Python does not know, its root is not ``labels``,
        a ``label`` has no name, or a name appears twice.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "tiny.xml"
    >>> _ = path.write_text('<labels><label name="a"/><label name="b"/></labels>')
    >>> read_mulan_xml(path)
    ['a', 'b']
    """
    root = _xml_root(path)
    if _local(root.tag) != "labels":
        raise DatasetError(f"{path}: expected a <labels> root element, found <{_local(root.tag)}>")
    names: list[str] = []
    for element in root.iter():
        if element is root or _local(element.tag) != "label":
            continue
        name = element.get("name")
        if name is None:
            raise DatasetError(f"{path}: a <label> element has no name attribute")
        names.append(name)
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise DatasetError(f"{path}: label names appear twice: {', '.join(map(repr, repeated))}")
    return names


def _xml_root(path: PathLike) -> ET.Element:
    with open(path, "rb") as fh:
        raw = fh.read()
    if not raw.strip():
        raise DatasetError(f"{path}: the file is empty; expected a Mulan <labels> XML file")
    try:
        return ET.fromstring(raw)
    except ET.ParseError as exc:
        line, column = exc.position
        reason = str(exc).split(": line")[0]
        raise DatasetError(
            f"{path}, line {line}, column {column + 1}: the XML cannot be parsed ({reason}); "
            "expected a Mulan <labels> file in UTF-8 or the encoding its <?xml ...?> declares"
        ) from None
    except LookupError:
        declared = _ENCODING_RE.match(raw)
        name = declared.group(1).decode("ascii", "replace") if declared else "?"
        raise DatasetError(
            f"{path}, line 1: the XML declares the encoding {name!r}, which Python does not "
            "know; save the file as UTF-8 with encoding=\"utf-8\""
        ) from None
    except ValueError as exc:  # expat refuses some encodings it knows (multi-byte ones)
        raise DatasetError(f"{path}, line 1: the XML cannot be decoded ({exc})") from None


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


# ---------------------------------------------------------------------------
# public loaders


def load_mulan(arff_path: PathLike, xml_path: PathLike) -> Dataset:
    """Load a Mulan dataset: an ARFF file and the XML naming its labels.

    Parameters
    ----------
    arff_path : str or path-like
        ``.arff`` or ``.arff.gz``, dense or sparse rows.
    xml_path : str or path-like
        The Mulan XML listing the label attributes. It decides which attributes
        are labels; a ``-C n`` in the ``@relation`` that says otherwise
        (medical's ``-C 45``, though its labels are its last 45 attributes) is
        ignored, and ``Dataset.notes`` says so.

    Returns
    -------
    Dataset
        ``Y``'s columns follow the order of the label attributes in the ARFF
        file (which may differ from the XML's order); ``label_names`` names
        them. Every other attribute is a feature, converted as described in
        the Notes.

    Raises
    ------
    DatasetError
        An XML label is not an attribute of the ARFF file, or a label holds a
        value other than 0 and 1.

    Examples
    --------
    >>> import os, tempfile
    >>> from mlneighbors.datasets import load_mulan
    >>> folder = tempfile.mkdtemp()
    >>> with open(os.path.join(folder, "tiny.arff"), "w") as fh:
    ...     _ = fh.write("@relation tiny\\n@attribute x numeric\\n@attribute sport {0,1}\\n"
    ...                  "@attribute music {0,1}\\n@data\\n0.5,1,0\\n1.5,0,1\\n")
    >>> with open(os.path.join(folder, "tiny.xml"), "w") as fh:
    ...     _ = fh.write('<labels xmlns="http://mulan.sourceforge.net/labels">'
    ...                  '<label name="sport"></label><label name="music"></label></labels>')
    >>> data = load_mulan(os.path.join(folder, "tiny.arff"), os.path.join(folder, "tiny.xml"))
    >>> data.label_names, data.Y.tolist()
    (['sport', 'music'], [[1, 0], [0, 1]])

    ArffFormatError
        The ARFF file is malformed.

    Notes
    -----
    Features are float64:

    * numeric attributes as written; missing values (``?``) are NaN;
    * nominal attributes whose values are all numbers take the number
      (``{0,1}`` and ``{1,0}`` both give 0/1); when those numbers are not just
      0 and 1 (birds' ``location``) it is an unordered code, said in
      ``Dataset.notes``;
    * nominal ``{YES,NO}`` (genbase) gives YES=1, NO=0, and likewise
      ``{TRUE,FALSE}``, in any order and case;
    * any other nominal gives the position of the value in the declaration;
    * string and date attributes, and identifiers (a nominal attribute with a
      different value on each of at least 20 instances, such as genbase's
      ``protein``) are dropped.

    Every conversion and drop is recorded in ``Dataset.notes``. In a sparse
    file an unlisted nominal value is the first declared value (ARFF's rule),
    so a feature declared ``{1,0}`` is 1 where it is not listed.
    """
    return _by_xml(read_arff(arff_path), arff_path, xml_path, on_conflict="note")


def load_meka(arff_path: PathLike, xml_path: PathLike | None = None) -> Dataset:
    """Load a MEKA dataset: an ARFF file whose ``@relation`` says ``-C n``.

    Parameters
    ----------
    arff_path : str or path-like
        ``.arff`` or ``.arff.gz``, dense or sparse rows. ``-C n`` in the
        ``@relation``: n > 0, the first n attributes are the labels; n < 0, the
        last -n.
    xml_path : str or path-like, default=None
        A Mulan XML naming the labels, for files with no ``-C`` (ohsumed has its
        labels first and no ``-C``). When the file has a ``-C`` too, both must
        name the same attributes.

    Returns
    -------
    Dataset
        As :func:`load_mulan` describes.

    Raises
    ------
    DatasetError
        No XML and no ``-C``; a ``-C`` that does not fit the attributes; a
        ``-C`` that takes an attribute which is not binary as a label (the
        first such one is named: ``-C`` is stale); a ``-C`` naming other
        attributes than the XML (both are named; :func:`load_mulan` reads a
        Mulan file whose ``-C`` is stale); or a label that is not binary.

    Notes
    -----
    A stale ``-C`` that happens to take binary features as labels (medical's
    ``-C 45`` takes its first 45 word features) cannot be told from a right
    one without the XML.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "tiny.arff"
    >>> _ = path.write_text("@relation 'tiny: -C 1'\\n@attribute y {0,1}\\n"
    ...                     "@attribute x numeric\\n@data\\n1,0.5\\n0,2\\n")
    >>> data = load_meka(path)
    >>> data.label_names, data.Y.ravel().tolist(), data.X.ravel().tolist()
    (['y'], [1, 0], [0.5, 2.0])
    """
    table = read_arff(arff_path)
    if xml_path is None:
        return _by_c(table, arff_path)
    return _by_xml(table, arff_path, xml_path, on_conflict="refuse")


def _load_arff(
    path: PathLike,
    xml: PathLike | None = None,
    labels_first: int | None = None,
    labels_last: int | None = None,
    features_only: bool = False,
) -> Dataset:
    """An ARFF file's labels from a count, else the XML, else ``-C`` (``load_file``'s rule);
    ``features_only``: none, every attribute a feature.

    A ``-C`` that disagrees with the XML is warned about (:class:`DatasetWarning`);
    one that disagrees with a count is noted.
    """
    table = read_arff(path)
    if features_only:
        return _to_dataset(table, np.empty(0, dtype=np.intp), str(path), [], _Source("none"))
    if labels_first is not None or labels_last is not None:
        label_index, source = _labels_by_count(table, str(path), labels_first, labels_last)
        notes = []
        said, _ = _c_against(table, label_index, None)
        if said:
            count = c_option(table.relation)[0]  # type: ignore[index]
            notes.append(f"the @relation's -C {count} was ignored: {source.given} decides")
        return _to_dataset(table, label_index, str(path), notes, source)
    if xml is None:
        return _by_c(table, path)
    return _by_xml(table, path, xml, on_conflict="warn")


def _by_c(table: ArffTable, path: PathLike) -> Dataset:
    label_index, source, notes = _labels_by_c(table, str(path))
    return _to_dataset(table, label_index, str(path), notes, source)


def _by_xml(
    table: ArffTable,
    path: PathLike,
    xml_path: PathLike,
    on_conflict: Literal["note", "warn", "refuse"],
) -> Dataset:
    """The labels the XML names; a ``-C`` saying otherwise is noted, warned about or refused."""
    origin = str(path)
    label_index, notes = _labels_from_xml(table, read_mulan_xml(xml_path), path, xml_path)
    said, conflict = _c_against(table, label_index, xml_path)
    if conflict and on_conflict == "refuse":
        raise DatasetError(
            f"{origin}: {said}. load_meka trusts neither: for a Mulan file (the XML "
            "decides) use load_mulan, else correct the -C or the XML"
        )
    if conflict and on_conflict == "warn":
        message = f"{origin}: {said}; the XML decides"
        warnings.warn(message, DatasetWarning, stacklevel=5)  # load_file's caller
    if said:
        notes.append(f"{said}: the XML decides")
    return _to_dataset(table, label_index, origin, notes, _Source.xml(xml_path))


# ---------------------------------------------------------------------------
# which attributes are labels


@dataclass(frozen=True)
class _Source:
    """How the labels were chosen, for the messages about a label that is not binary."""

    given: str  # "-C 3 in the @relation (line 1)", "labels_last=2", "the XML l.xml"
    lead: str = ""  # said before the attribute
    advice: str = ""  # said after the problem

    @classmethod
    def xml(cls, path: PathLike) -> _Source:
        return cls(f"the XML {os.fspath(path)}")


def _labels_from_xml(
    table: ArffTable, names: Sequence[str], arff_path: PathLike, xml_path: PathLike
) -> tuple[np.ndarray, list[str]]:
    position = {name: j for j, name in enumerate(table.names)}
    missing = [name for name in names if name not in position]
    if missing:
        shown = ", ".join(map(repr, missing[:10])) + (", ..." if len(missing) > 10 else "")
        raise DatasetError(
            f"{xml_path}: {len(missing)} label(s) of the XML are not attributes of "
            f"{arff_path}: {shown}"
        )
    in_xml_order = np.array([position[name] for name in names], dtype=np.intp)
    label_index = np.sort(in_xml_order)
    notes = []
    if not np.array_equal(in_xml_order, label_index):
        notes.append(
            "the XML lists the labels in another order than the ARFF file; Y's columns "
            "follow the ARFF order (label_names names them)"
        )
    return label_index, notes


def _c_said(table: ArffTable, count: int) -> str:
    line = f" (line {table.relation_line})" if table.relation_line else ""
    return f"-C {count} in the @relation{line}"


def _edge(n_attributes: int, count: int) -> np.ndarray | None:
    """The first ``count`` attributes (count > 0) or the last ``-count``; None if they do not fit."""
    if count == 0 or abs(count) > n_attributes:
        return None
    return np.arange(count) if count > 0 else np.arange(n_attributes + count, n_attributes)


def _which(positions: np.ndarray, n_attributes: int, names: list[str]) -> str:
    """'the first 3 attributes', 'the last 3 attributes' or the attributes by name."""
    n = positions.size
    if np.array_equal(positions, np.arange(n)):
        return f"the first {n} attributes"
    if np.array_equal(positions, np.arange(n_attributes - n, n_attributes)):
        return f"the last {n} attributes"
    return f"the attributes {shown_names([names[j] for j in positions.tolist()])}"


def _labels_by_c(table: ArffTable, origin: str) -> tuple[np.ndarray, _Source, list[str]]:
    n_attributes = len(table.attributes)
    found = c_labels(table.relation, n_attributes)
    if found is None:
        raise DatasetError(
            f"{origin}: the @relation {table.relation[:80]!r} has no -C option saying which "
            f"attributes are labels; give {_LABELS_HOW}"
        )
    said = _c_said(table, found.count)
    if found.problem is not None:
        raise DatasetError(
            f"{origin}: {said} is followed by filters Weka recorded after it, and "
            f"{found.problem}: which attributes are the labels cannot be told from the header; "
            f"give {_LABELS_HOW}"
        )
    if found.positions is None:
        raise DatasetError(
            f"{origin}: {said} does not fit the {n_attributes} attributes; expected a non-zero "
            f"n with |n| <= {n_attributes}, or give {_LABELS_HOW}"
        )
    label_index = found.positions
    which = _which(label_index, n_attributes, table.names)
    notes = []
    if found.followed:
        filters = ", ".join(map(str, found.followed))
        notes.append(
            f"the labels of the @relation's -C {found.count} were moved by the filter(s) it "
            f"records after it ({filters}): they are {which}"
        )
        said = f"{said}, followed through {filters},"
    return label_index, _Source(
        said,
        lead=f"{said} takes {which} as labels; ",
        advice=f"; the -C may be stale: give {_LABELS_HOW}",
    ), notes


def _labels_by_count(
    table: ArffTable, origin: str, labels_first: int | None, labels_last: int | None
) -> tuple[np.ndarray, _Source]:
    if labels_first is not None and labels_last is not None:
        raise ValueError("labels_first and labels_last exclude each other")
    given, count = (
        ("labels_first", labels_first) if labels_first is not None else ("labels_last", labels_last)
    )
    if not isinstance(count, (int, np.integer)) or isinstance(count, bool):
        raise TypeError(f"{given} must be an int, got {type(count).__name__}")
    n_attributes = len(table.attributes)
    if not 1 <= count < n_attributes:
        raise DatasetError(
            f"{origin}: {given}={count}, but the file declares {n_attributes} attributes; "
            f"expected 1 to {n_attributes - 1} (at least one attribute must be a feature)"
        )
    label_index = _edge(n_attributes, int(count) if given == "labels_first" else -int(count))
    return label_index, _Source(f"{given}={count}")  # type: ignore[return-value]


def _c_against(
    table: ArffTable, label_index: np.ndarray, xml_path: PathLike | None
) -> tuple[str | None, bool]:
    """What a ``-C`` in the @relation says against the chosen labels (None if it agrees or
    there is none), and whether it contradicts them: a ``-C`` whose later filters cannot be
    followed says nothing about the file as it is, so it is only noted."""
    found: CLabels | None = c_labels(table.relation, len(table.attributes))
    if found is None or (found.positions is not None and np.array_equal(found.positions, label_index)):
        return None, False
    said = _c_said(table, found.count)
    if found.problem is not None:
        return f"{said} was written before filters the @relation records after it ({found.problem})", False
    names = table.names
    chosen = shown_names([names[j] for j in label_index.tolist()])
    what = "the XML " + os.fspath(xml_path) if xml_path is not None else "the given count"
    if found.positions is None:
        said = f"{said} does not fit the {len(names)} attributes"
    else:
        by_c = found.positions
        said = f"{said} names {by_c.size} label(s) ({shown_names([names[j] for j in by_c])})"
    return f"{said}, but {what} names {label_index.size} ({chosen})", True


# ---------------------------------------------------------------------------
# ARFF table to Dataset


def _to_dataset(
    table: ArffTable, label_index: np.ndarray, origin: str, notes: list[str], source: _Source
) -> Dataset:
    Y = _label_matrix(table, label_index, origin, source)
    is_label = np.zeros(len(table.attributes), dtype=bool)
    is_label[label_index] = True
    X, features = _feature_matrix(table, is_label, notes)
    return Dataset(
        X=X,
        Y=Y,
        feature_names=[table.attributes[j].name for j in features],
        label_names=[table.attributes[j].name for j in label_index.tolist()],
        notes=notes,
        source=origin,
        lines=table.row_lines,
    )


def _declared_problem(attribute: Attribute, line: int) -> tuple[str | None, np.ndarray | None]:
    """Why the declaration of ``attribute`` cannot be a label, else the number of each value."""
    where = f" (line {line})" if line else ""
    if attribute.kind in ("string", "date"):
        return f"is a {attribute.kind} attribute{where}; expected 0/1", None
    if attribute.kind == "numeric":
        return None, None
    numbers, how = _nominal_numbers(attribute)
    if how == "index" or not set(numbers.tolist()) <= {-1.0, 0.0, 1.0}:
        # declared values other than 0 and 1 (and -1, which the rows' check explains):
        # a category, even where the rows hold only 0 and 1
        values = ",".join(attribute.values or ())
        return f"is nominal {{{values}}}{where}; expected the values 0 and 1", None
    return None, numbers


def _label_matrix(
    table: ArffTable, label_index: np.ndarray, origin: str, source: _Source
) -> np.ndarray:
    """The label attributes as an int8 0/1 matrix; the first one that is not binary is refused."""
    problems: dict[int, str] = {}
    decodable: list[int] = []
    luts: list[np.ndarray | None] = []
    lines = table.attribute_lines
    for i, j in enumerate(label_index.tolist()):
        problem, lut = _declared_problem(table.attributes[j], lines[j] if lines else 0)
        if problem is None:
            decodable.append(i)
            luts.append(lut)
        else:
            problems[i] = problem
    block = _decode(table, label_index[decodable], luts)
    Y = block.toarray() if sp.issparse(block) else block
    if problems:  # the refused columns as zeros, so that positions stay those of label_index
        Y = np.insert(Y, [i - k for k, i in enumerate(sorted(problems))], 0.0, axis=1)
    binary = (Y == 0) | (Y == 1)
    missing_only = set()
    if not binary.all():
        first = int(np.flatnonzero(~binary.all(axis=0))[0])
        problems[first] = label_problem(Y[:, first], table.row_lines)  # type: ignore[assignment]
        if np.isnan(Y[:, first][~binary[:, first]]).all():
            missing_only.add(first)  # a '?' says nothing about which attributes are labels
    if problems:
        i = min(problems)
        word = "attribute" if source.lead else "label"
        name = table.attributes[int(label_index[i])].name
        advice = "" if i in missing_only else source.advice
        raise DatasetError(f"{origin}: {source.lead}{word} {name!r} {problems[i]}{advice}")
    return Y.astype(np.int8)


@dataclass
class _FeaturePlan:
    """Which attributes become features and how; what the notes will say."""

    columns: list[int] = field(default_factory=list)
    luts: list[np.ndarray | None] = field(default_factory=list)
    dropped: dict[str, list[str]] = field(default_factory=dict)
    identifiers: list[str] = field(default_factory=list)
    codes: list[Attribute] = field(default_factory=list)
    booleans: list[str] = field(default_factory=list)
    indexed: list[str] = field(default_factory=list)

    def notes(self, n_rows: int) -> list[str]:
        notes = [
            f"dropped nominal attribute {name!r}: an identifier (a different value on each "
            f"of the {n_rows} instances), not a feature"
            for name in self.identifiers
        ]
        for kind, names in self.dropped.items():
            notes.append(f"dropped {kind} attribute(s) {shown_names(names)}: not numeric features")
        for attribute in self.codes:
            notes.append(
                f"feature {attribute.name!r} is nominal {{{','.join(attribute.values or ())}}}: "
                "X holds the code's numeric value, an unordered category code rather than a "
                "magnitude"
            )
        if self.booleans:
            notes.append(
                f"{len(self.booleans)} nominal YES/NO (or TRUE/FALSE) feature(s) are coded "
                "YES=1, NO=0"
            )
        if self.indexed:
            notes.append(
                f"nominal feature(s) {shown_names(self.indexed)} are coded by the position of "
                "the value in their declaration (0, 1, ...): unordered categories"
            )
        return notes


def _plan_features(table: ArffTable, is_label: np.ndarray) -> _FeaturePlan:
    plan = _FeaturePlan()
    for j, attribute in enumerate(table.attributes):
        if is_label[j]:
            continue
        if attribute.kind in ("string", "date"):
            plan.dropped.setdefault(attribute.kind, []).append(attribute.name)
            continue
        if attribute.kind == "numeric":
            plan.columns.append(j)
            plan.luts.append(None)
            continue
        if _is_identifier(table, j):
            plan.identifiers.append(attribute.name)
            continue
        numbers, how = _nominal_numbers(attribute)
        if how == "number" and not set(numbers.tolist()) <= {0.0, 1.0}:
            plan.codes.append(attribute)
        elif how == "boolean":
            plan.booleans.append(attribute.name)
        elif how == "index":
            plan.indexed.append(attribute.name)
        plan.columns.append(j)
        plan.luts.append(numbers)
    return plan


def _feature_matrix(
    table: ArffTable, is_label: np.ndarray, notes: list[str]
) -> tuple[np.ndarray | sp.csr_matrix, list[int]]:
    plan = _plan_features(table, is_label)
    notes.extend(plan.notes(table.n_rows))
    X = _decode(table, np.asarray(plan.columns, dtype=np.intp), plan.luts)
    n_missing = int(np.isnan(X.data if sp.issparse(X) else X).sum())
    if n_missing:
        notes.append(f"{n_missing} missing feature value(s) ('?') are NaN in X")
    return X, plan.columns


def _nominal_numbers(attribute: Attribute) -> tuple[np.ndarray, str]:
    """The number each declared value stands for, and how it was chosen.

    Returns ``(numbers, how)`` with ``how`` one of ``"number"`` (the values
    are numbers), ``"boolean"`` (YES/NO or TRUE/FALSE) or ``"index"``.
    """
    values = attribute.values or ()
    try:
        numbers = np.array([float(v) for v in values], dtype=np.float64)
        if np.isfinite(numbers).all() and np.unique(numbers).size == numbers.size:
            return numbers, "number"
    except ValueError:
        pass
    lowered = [v.lower() for v in values]
    for mapping in _BOOLEAN_VALUES:
        if len(values) == 2 and set(lowered) == set(mapping):
            return np.array([mapping[v] for v in lowered]), "boolean"
    return np.arange(len(values), dtype=np.float64), "index"


def _column(table: ArffTable, j: int) -> np.ndarray:
    if table.is_sparse:
        return table.data[:, [j]].toarray().ravel()
    return table.data[:, j]


def _is_identifier(table: ArffTable, j: int) -> bool:
    attribute = table.attributes[j]
    n_rows = table.n_rows
    if attribute.kind != "nominal" or n_rows < _ID_MIN_ROWS:
        return False
    if len(attribute.values or ()) < n_rows:
        return False
    column = _column(table, j)
    return not np.isnan(column).any() and np.unique(column).size == n_rows


def _decode(
    table: ArffTable, columns: np.ndarray, numbers: list[np.ndarray | None]
) -> np.ndarray | sp.csr_matrix:
    """The chosen attributes as numbers: nominal indices mapped through ``numbers``.

    ``numbers[i]`` maps the value indices of ``columns[i]``; None leaves the
    column as it is (numeric attributes).
    """
    changed = [
        i
        for i, lut in enumerate(numbers)
        if lut is not None and not np.array_equal(lut, np.arange(lut.size))
    ]
    if table.is_sparse:
        return _decode_sparse(table.data[:, columns].tocsr(), changed, numbers)
    block = np.ascontiguousarray(table.data[:, columns], dtype=np.float64)
    groups: dict[bytes, list[int]] = {}
    for i in changed:
        groups.setdefault(numbers[i].tobytes(), []).append(i)  # type: ignore[union-attr]
    for local in groups.values():
        lut = numbers[local[0]]
        part = block[:, local]
        missing = np.isnan(part)
        mapped = lut[np.where(missing, 0, part).astype(np.intp)]  # type: ignore[index]
        mapped[missing] = np.nan
        block[:, local] = mapped
    return block


def _decode_sparse(
    block: sp.csr_matrix, changed: list[int], numbers: list[np.ndarray | None]
) -> sp.csr_matrix:
    block.sort_indices()
    if not changed:
        block.eliminate_zeros()
        return block
    offsets = np.full(block.shape[1], -1, dtype=np.intp)
    tables, start = [], 0
    for i in changed:
        offsets[i] = start
        tables.append(numbers[i])
        start += numbers[i].size  # type: ignore[union-attr]
    flat = np.concatenate(tables)
    at = offsets[block.indices] >= 0
    stored = block.data[at]
    missing = np.isnan(stored)
    codes = np.where(missing, 0, stored).astype(np.intp)
    mapped = flat[offsets[block.indices[at]] + codes]
    mapped[missing] = np.nan
    block.data[at] = mapped
    base = np.zeros(block.shape[1])
    base[changed] = [numbers[i][0] for i in changed]  # type: ignore[index]
    block = _fill_unlisted(block, base)
    block.eliminate_zeros()
    block.sort_indices()
    return block


def _fill_unlisted(block: sp.csr_matrix, base: np.ndarray) -> sp.csr_matrix:
    """An unlisted sparse value is index 0; where that maps to a non-zero number
    (``base``) the column is that number wherever nothing is listed."""
    dense_columns = np.flatnonzero(base != 0)
    if not dense_columns.size:
        return block
    n_rows, n_columns = block.shape
    full = np.tile(base[dense_columns], (n_rows, 1))
    coo = block.tocoo()
    slot = np.full(n_columns, -1, dtype=np.intp)
    slot[dense_columns] = np.arange(dense_columns.size)
    in_dense = slot[coo.col] >= 0
    full[coo.row[in_dense], slot[coo.col[in_dense]]] = coo.data[in_dense]
    rows = np.concatenate([coo.row[~in_dense], np.repeat(np.arange(n_rows), dense_columns.size)])
    cols = np.concatenate([coo.col[~in_dense], np.tile(dense_columns, n_rows)])
    data = np.concatenate([coo.data[~in_dense], full.ravel()])
    return sp.csr_matrix((data, (rows, cols)), shape=(n_rows, n_columns))
