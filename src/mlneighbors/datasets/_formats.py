"""Loaders from multi-label file formats to :class:`Dataset`.

* :func:`load_mulan`: Mulan ARFF, the labels named by a Mulan XML file;
* :func:`load_meka`: MEKA ARFF, the labels given by ``-C n`` in ``@relation``;
* :func:`load_mat`: MATLAB ``.mat`` files in the three layouts in use;
* :func:`load_libsvm`: libsvm / svmlight multi-label text.

Each returns features ``X`` as float64 (a dense array, or CSR for sparse
sources) and labels ``Y`` as an int8 0/1 array, with ``name=""``.
"""

from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from itertools import chain

import numpy as np
import scipy.sparse as sp

from mlneighbors.datasets._arff import ArffTable, Attribute, read_arff
from mlneighbors.datasets._dataset import Dataset, DatasetError

__all__ = ["load_libsvm", "load_mat", "load_meka", "load_mulan", "read_mulan_xml"]

PathLike = str | os.PathLike[str]

# A nominal feature with a different value on each of at least this many
# instances is an identifier (genbase's ``protein``), not a feature.
_ID_MIN_ROWS = 20

_BOOLEAN_VALUES = ({"yes": 1.0, "no": 0.0}, {"true": 1.0, "false": 0.0})
_MEKA_C_RE = re.compile(r"(?:^|[\s:'\"])-C\s+(-?\d+)")


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
        The file is not well-formed XML, its root is not ``labels``, a
        ``label`` has no name, or a name appears twice.
    """
    try:
        root = ET.parse(os.fspath(path)).getroot()
    except ET.ParseError as exc:
        raise DatasetError(f"{path}: not a readable Mulan XML file ({exc})") from None
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


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def load_mulan(arff_path: PathLike, xml_path: PathLike) -> Dataset:
    """Load a Mulan dataset: an ARFF file and the XML naming its labels.

    Parameters
    ----------
    arff_path : str or path-like
        ``.arff`` or ``.arff.gz``, dense or sparse rows.
    xml_path : str or path-like
        The Mulan XML listing the label attributes.

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
    table = read_arff(arff_path)
    names = read_mulan_xml(xml_path)
    label_index, notes = _labels_from_xml(table, names, arff_path, xml_path)
    return _to_dataset(table, label_index, str(arff_path), notes)


def load_meka(arff_path: PathLike, xml_path: PathLike | None = None) -> Dataset:
    """Load a MEKA dataset: an ARFF file whose ``@relation`` says ``-C n``.

    Parameters
    ----------
    arff_path : str or path-like
        ``.arff`` or ``.arff.gz``, dense or sparse rows.
    xml_path : str or path-like, default=None
        A Mulan XML naming the labels. When given it decides, whatever
        ``-C`` says (medical's ``@relation`` says ``-C 45`` though its labels
        are its last 45 attributes; ohsumed has its labels first and no
        ``-C``).

    Returns
    -------
    Dataset
        As :func:`load_mulan` describes.

    Raises
    ------
    DatasetError
        No XML and no usable ``-C n`` (n > 0: the first n attributes are the
        labels; n < 0: the last -n), or a label that is not binary.
    """
    table = read_arff(arff_path)
    option = _meka_label_count(table.relation)
    n_attributes = len(table.attributes)
    by_option = None
    if option is not None and 0 < abs(option) <= n_attributes:
        start, stop = (0, option) if option > 0 else (n_attributes + option, n_attributes)
        by_option = np.arange(start, stop)
    if xml_path is not None:
        label_index, notes = _labels_from_xml(table, read_mulan_xml(xml_path), arff_path, xml_path)
        if option is not None and (by_option is None or not np.array_equal(by_option, label_index)):
            notes.append(
                f"the @relation's -C {option} was ignored: the XML names the labels, "
                "and they are other attributes"
            )
        return _to_dataset(table, label_index, str(arff_path), notes)
    if option is None:
        raise DatasetError(
            f"{arff_path}: the @relation {table.relation[:80]!r} has no -C option saying how "
            "many attributes are labels; give the Mulan XML (xml_path)"
        )
    if by_option is None:
        raise DatasetError(
            f"{arff_path}: -C {option} in the @relation does not fit the {n_attributes} "
            "attributes; expected a non-zero n with |n| <= the number of attributes"
        )
    return _to_dataset(table, by_option, str(arff_path), [])


def _meka_label_count(relation: str) -> int | None:
    match = _MEKA_C_RE.search(relation)
    return None if match is None else int(match.group(1))


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
    if not table.is_sparse:
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

    block = table.data[:, columns].tocsr()
    block.sort_indices()
    if not changed:
        block.eliminate_zeros()
        return block
    n_rows, n_columns = block.shape
    offsets = np.full(n_columns, -1, dtype=np.intp)
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

    # An unlisted sparse value is index 0; where that maps to a non-zero
    # number the column is that number wherever nothing is listed.
    base = np.zeros(n_columns)
    base[changed] = [numbers[i][0] for i in changed]  # type: ignore[index]
    dense_columns = np.flatnonzero(base != 0)
    if dense_columns.size:
        full = np.tile(base[dense_columns], (n_rows, 1))
        coo = block.tocoo()
        slot = np.full(n_columns, -1, dtype=np.intp)
        slot[dense_columns] = np.arange(dense_columns.size)
        in_dense = slot[coo.col] >= 0
        full[coo.row[in_dense], slot[coo.col[in_dense]]] = coo.data[in_dense]
        rows = np.concatenate(
            [coo.row[~in_dense], np.repeat(np.arange(n_rows), dense_columns.size)]
        )
        cols = np.concatenate([coo.col[~in_dense], np.tile(dense_columns, n_rows)])
        data = np.concatenate([coo.data[~in_dense], full.ravel()])
        block = sp.csr_matrix((data, (rows, cols)), shape=(n_rows, n_columns))
    block.eliminate_zeros()
    block.sort_indices()
    return block


def _to_dataset(
    table: ArffTable, label_index: np.ndarray, origin: str, notes: list[str]
) -> Dataset:
    attributes = table.attributes
    is_label = np.zeros(len(attributes), dtype=bool)
    is_label[label_index] = True

    label_numbers: list[np.ndarray | None] = []
    for j in label_index.tolist():
        attribute = attributes[j]
        if attribute.kind in ("string", "date"):
            raise DatasetError(
                f"{origin}: label {attribute.name!r} is a {attribute.kind} attribute; expected 0/1"
            )
        if attribute.kind == "numeric":
            label_numbers.append(None)
            continue
        numbers, how = _nominal_numbers(attribute)
        if how == "index":
            raise DatasetError(
                f"{origin}: label {attribute.name!r} is nominal "
                f"{{{','.join(attribute.values or ())}}}; expected the values 0 and 1"
            )
        label_numbers.append(numbers)
    Y = _decode(table, label_index, label_numbers)
    if sp.issparse(Y):
        Y = Y.toarray()
    bad = ~((Y == 0) | (Y == 1))
    if bad.any():
        row, col = (int(v) for v in np.argwhere(bad)[0])
        value = Y[row, col]
        shown = "?" if np.isnan(value) else f"{value:g}"
        name = attributes[int(label_index[col])].name
        raise DatasetError(
            f"{origin}: label {name!r} must be 0 or 1, but row {row} (line "
            f"{int(table.row_lines[row])}) has {shown}"
        )

    features: list[int] = []
    feature_numbers: list[np.ndarray | None] = []
    dropped: dict[str, list[str]] = {}
    codes: list[str] = []
    booleans: list[str] = []
    indexed: list[str] = []
    for j, attribute in enumerate(attributes):
        if is_label[j]:
            continue
        if attribute.kind in ("string", "date"):
            dropped.setdefault(attribute.kind, []).append(attribute.name)
            continue
        if attribute.kind == "numeric":
            features.append(j)
            feature_numbers.append(None)
            continue
        if _is_identifier(table, j):
            notes.append(
                f"dropped nominal attribute {attribute.name!r}: an identifier (a different "
                f"value on each of the {table.n_rows} instances), not a feature"
            )
            continue
        numbers, how = _nominal_numbers(attribute)
        if how == "number" and not set(numbers.tolist()) <= {0.0, 1.0}:
            codes.append(attribute.name)
        elif how == "boolean":
            booleans.append(attribute.name)
        elif how == "index":
            indexed.append(attribute.name)
        features.append(j)
        feature_numbers.append(numbers)
    for kind, names in dropped.items():
        notes.append(f"dropped {kind} attribute(s) {_names(names)}: not numeric features")
    for name in codes:
        values = ",".join(attributes[table.names.index(name)].values or ())
        notes.append(
            f"feature {name!r} is nominal {{{values}}}: X holds the code's numeric value, "
            "an unordered category code rather than a magnitude"
        )
    if booleans:
        notes.append(
            f"{len(booleans)} nominal YES/NO (or TRUE/FALSE) feature(s) are coded YES=1, NO=0"
        )
    if indexed:
        notes.append(
            f"nominal feature(s) {_names(indexed)} are coded by the position of the value in "
            "their declaration (0, 1, ...): unordered categories"
        )
    feature_index = np.asarray(features, dtype=np.intp)
    X = _decode(table, feature_index, feature_numbers)
    n_missing = int(np.isnan(X.data if sp.issparse(X) else X).sum())
    if n_missing:
        notes.append(f"{n_missing} missing feature value(s) ('?') are NaN in X")
    return Dataset(
        X=X,
        Y=np.ascontiguousarray(Y, dtype=np.int8),
        feature_names=[attributes[j].name for j in features],
        label_names=[attributes[j].name for j in label_index.tolist()],
        notes=notes,
    )


def _names(names: list[str]) -> str:
    shown = ", ".join(map(repr, names[:8]))
    return shown + (f" and {len(names) - 8} more" if len(names) > 8 else "")


# ---------------------------------------------------------------------------
# MATLAB


def load_mat(path: PathLike) -> dict[str, Dataset]:
    """Load a multi-label MATLAB ``.mat`` file (format 5, as scipy reads it).

    Parameters
    ----------
    path : str or path-like
        One of three layouts:

        A. ``data`` (n x d) and ``target`` (L x n);
        B. ``train_data`` / ``train_target`` and ``test_data`` /
           ``test_target`` (Zhang's ML-kNN files), shaped as in A;
        C. cells (or two-field structs) ``train`` and ``test``, where
           ``train{1}`` is X stored d x n and ``train{2}`` is Y stored L x n.

        Targets coded -1/+1 become 0/1 (0/1 is accepted as it is). A target
        stored n x L is accepted when the shapes leave no doubt.

    Returns
    -------
    dict of str to Dataset
        ``{"all": ...}`` for layout A; ``{"train", "test", "all"}`` for B and C,
        where ``"all"`` is the training rows followed by the test rows. Each
        Dataset's ``split`` is its key; features are named ``f0, f1, ...`` and
        labels ``label0, label1, ...``. X is float64, CSR when the file stores
        a sparse matrix.

    Raises
    ------
    DatasetError
        An unknown layout, shapes that do not agree, or targets other than
        -1/+1 or 0/1.
    """
    from scipy.io import loadmat

    try:
        contents = loadmat(os.fspath(path))
    except NotImplementedError as exc:
        raise DatasetError(f"{path}: MATLAB v7.3 (HDF5) files are not supported ({exc})") from None
    except (ValueError, TypeError) as exc:
        raise DatasetError(f"{path}: not a readable MATLAB file ({exc})") from None
    keys = {key for key in contents if not key.startswith("__")}
    if {"data", "target"} <= keys:
        X, Y, notes = _mat_pair(contents["data"], contents["target"], False, path, "data/target")
        return {"all": _mat_dataset(X, Y, notes, "all")}
    if {"train_data", "train_target", "test_data", "test_target"} <= keys:
        parts = {
            split: _mat_pair(
                contents[f"{split}_data"], contents[f"{split}_target"], False, path, split
            )
            for split in ("train", "test")
        }
    elif {"train", "test"} <= keys:
        parts = {
            split: _mat_pair(*_mat_cell(contents[split], path, split), True, path, split)
            for split in ("train", "test")
        }
    else:
        raise DatasetError(
            f"{path}: unknown .mat layout with variables {sorted(keys)}; expected data/target, "
            "train_data/train_target/test_data/test_target, or cells train/test"
        )
    (X_train, Y_train, notes_train), (X_test, Y_test, notes_test) = parts["train"], parts["test"]
    if X_train.shape[1] != X_test.shape[1] or Y_train.shape[1] != Y_test.shape[1]:
        raise DatasetError(
            f"{path}: train has {X_train.shape[1]} features and {Y_train.shape[1]} labels, "
            f"test has {X_test.shape[1]} and {Y_test.shape[1]}"
        )
    if sp.issparse(X_train) or sp.issparse(X_test):
        X_all = sp.vstack([sp.csr_matrix(X_train), sp.csr_matrix(X_test)], format="csr")
    else:
        X_all = np.vstack([X_train, X_test])
    notes = list(dict.fromkeys(notes_train + notes_test))
    return {
        "train": _mat_dataset(X_train, Y_train, notes_train, "train"),
        "test": _mat_dataset(X_test, Y_test, notes_test, "test"),
        "all": _mat_dataset(X_all, np.vstack([Y_train, Y_test]), notes, "all"),
    }


def _mat_cell(value: np.ndarray, path: PathLike, name: str) -> tuple[object, object]:
    if isinstance(value, np.ndarray) and value.dtype.names:
        if value.size != 1 or len(value.dtype.names) != 2:
            raise DatasetError(f"{path}: struct {name!r} must hold exactly two fields (X, Y)")
        record = value.ravel()[0]
        return record[value.dtype.names[0]], record[value.dtype.names[1]]
    if isinstance(value, np.ndarray) and value.dtype == object and value.size == 2:
        first, second = value.ravel()
        return first, second
    raise DatasetError(f"{path}: {name!r} must be a cell {{X, Y}} of two matrices")


def _mat_pair(
    features: object, targets: object, features_transposed: bool, path: PathLike, name: str
) -> tuple[np.ndarray | sp.csr_matrix, np.ndarray, list[str]]:
    """X (n x d) and Y (n x L) from a stored pair; targets are stored L x n."""
    X = _mat_matrix(features, path, name)
    T = _mat_matrix(targets, path, name)
    T = T.toarray() if sp.issparse(T) else T
    if features_transposed:
        if X.shape[1] == T.shape[1]:
            X = X.T
        elif X.shape[0] != T.shape[1]:
            raise DatasetError(f"{path}: {name}: X {X.shape} and Y {T.shape} do not agree")
    n_samples = X.shape[0]
    if T.shape[1] == n_samples:
        Y = T.T
    elif T.shape[0] == n_samples:
        Y = T
    else:
        raise DatasetError(
            f"{path}: {name}: {n_samples} instances but targets of shape {T.shape}"
        )
    values = np.unique(Y)
    notes: list[str] = []
    if set(values.tolist()) <= {0, 1}:
        Y = Y != 0
    elif set(values.tolist()) <= {-1, 1}:
        Y = Y > 0
        notes.append("targets coded -1/+1 in the .mat file are mapped to 0/1")
    else:
        raise DatasetError(
            f"{path}: {name}: targets hold {values[:6].tolist()}; expected -1/+1 or 0/1"
        )
    if sp.issparse(X):
        X = sp.csr_matrix(X, dtype=np.float64)
        X.sum_duplicates()
        X.eliminate_zeros()
        X.sort_indices()
    else:
        X = np.ascontiguousarray(X, dtype=np.float64)
    return X, np.ascontiguousarray(Y, dtype=np.int8), notes


def _mat_matrix(value: object, path: PathLike, name: str) -> np.ndarray | sp.spmatrix:
    if sp.issparse(value):
        return value  # type: ignore[return-value]
    array = np.asarray(value)
    if array.ndim != 2 or array.dtype == object or not (
        np.issubdtype(array.dtype, np.number) or array.dtype == bool
    ):
        raise DatasetError(
            f"{path}: {name}: expected a numeric matrix, found {array.dtype} {array.shape}"
        )
    return array


def _mat_dataset(
    X: np.ndarray | sp.csr_matrix, Y: np.ndarray, notes: list[str], split: str
) -> Dataset:
    return Dataset(
        X=X,
        Y=Y,
        feature_names=[f"f{j}" for j in range(X.shape[1])],
        label_names=[f"label{j}" for j in range(Y.shape[1])],
        split=split,
        notes=list(notes),
    )


# ---------------------------------------------------------------------------
# libsvm


def load_libsvm(
    path: PathLike, *, n_features: int | None = None, n_labels: int | None = None
) -> Dataset:
    """Load libsvm / svmlight multi-label text (``l1,l2 i:v i:v ...`` per line).

    Parameters
    ----------
    path : str or path-like
    n_features : int, default=None
        The number of features; inferred from the largest index when None.
        Feature indices may be 0- or 1-based (scikit-learn's
        ``zero_based="auto"``).
    n_labels : int, default=None
        The number of labels; when None, the largest label seen plus one.
        Labels are 0-based integers.

    Returns
    -------
    Dataset
        X as CSR float64, Y as int8 0/1; features named ``f0, ...`` and labels
        ``label0, ...``.

    Raises
    ------
    DatasetError
        A malformed file, a label that is not a non-negative integer, or a
        label not below ``n_labels``.
    """
    from sklearn.datasets import load_svmlight_file

    try:
        X, y = load_svmlight_file(
            os.fspath(path), n_features=n_features, multilabel=True, dtype=np.float64
        )
    except ValueError as exc:
        raise DatasetError(f"{path}: not readable as libsvm multi-label text ({exc})") from None
    counts = np.fromiter(map(len, y), dtype=np.intp, count=len(y))
    labels = np.fromiter(chain.from_iterable(y), dtype=np.float64, count=int(counts.sum()))
    if labels.size and ((labels < 0).any() or (labels != np.round(labels)).any()):
        bad = labels[(labels < 0) | (labels != np.round(labels))][0]
        raise DatasetError(f"{path}: label {bad:g} is not a non-negative integer")
    seen = int(labels.max()) + 1 if labels.size else 0
    if n_labels is None:
        n_labels = seen
    elif seen > n_labels:
        raise DatasetError(f"{path}: label {seen - 1} is not below n_labels={n_labels}")
    Y = np.zeros((X.shape[0], n_labels), dtype=np.int8)
    Y[np.repeat(np.arange(X.shape[0]), counts), labels.astype(np.intp)] = 1
    X = sp.csr_matrix(X, dtype=np.float64)
    X.eliminate_zeros()
    X.sort_indices()
    return Dataset(
        X=X,
        Y=Y,
        feature_names=[f"f{j}" for j in range(X.shape[1])],
        label_names=[f"label{j}" for j in range(n_labels)],
    )
