"""Tests of the file-format readers: ARFF (Mulan, MEKA), MATLAB .mat and libsvm."""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from mlneighbors.datasets._arff import ArffTable, Attribute, parse_arff, read_arff
from mlneighbors.datasets._dataset import ArffFormatError, DatasetError
from mlneighbors.datasets._formats import (
    load_libsvm,
    load_mat,
    load_meka,
    load_mulan,
    read_mulan_xml,
)

DATA = Path(__file__).resolve().parents[1] / "data"
nan = np.nan


def _csr_ok(matrix: sp.csr_matrix) -> bool:
    """CSR with sorted indices and no explicit zeros."""
    probe = matrix.copy()
    probe.sort_indices()
    return (
        sp.issparse(matrix)
        and matrix.format == "csr"
        and matrix.has_sorted_indices
        and np.array_equal(probe.indices, matrix.indices)
        and not (matrix.data == 0).any()
    )


# ---------------------------------------------------------------------------
# read_arff on the hand-written fixtures


def test_dense_fixture_quotes_escapes_comments_and_missing():
    table = read_arff(DATA / "fmt_tiny_dense.arff")
    assert table.relation == "tiny_dense"
    assert table.names == [
        "x1", "x two", "colour", "flag", "code", "Swainson's Thrush", "lab_b", "id", "lab_a",
    ]
    kinds = ["numeric"] * 2 + ["nominal"] * 5 + ["string", "nominal"]
    assert [a.kind for a in table.attributes] == kinds
    assert table.attributes[2] == Attribute("colour", "nominal", ("red", "green", "blue"))
    assert table.attributes[6].values == ("1", "0")
    assert not table.is_sparse
    np.testing.assert_array_equal(
        table.data,
        [
            [1.5, -2, 0, 0, 1, 1, 1, nan, 0],
            [0, 32.5, 2, 1, 0, 0, 0, nan, 1],
            [nan, 0.5, 1, 0, 2, 1, 0, nan, 0],
        ],
    )
    np.testing.assert_array_equal(table.row_lines, [15, 17, 18])


def test_sparse_fixture_gives_sorted_csr_of_value_indices():
    table = read_arff(DATA / "fmt_tiny_sparse.arff")
    assert table.relation == "tiny_sparse: -C 2"
    assert table.is_sparse and _csr_ok(table.data)
    # f_rev {1,0}: "3 1" is index 0 (dropped as an explicit zero), "3 0" is index 1
    np.testing.assert_array_equal(
        table.data.toarray(),
        [[1, 0, 0.5, 0, 1], [0, 1, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, nan, 1, 0]],
    )
    np.testing.assert_array_equal(table.row_lines, [8, 9, 10, 12])


@pytest.mark.parametrize("name", ["copy.arff.gz", "copy.arff"])
def test_gzip_is_read_transparently(tmp_path, name):
    plain = (DATA / "fmt_tiny_sparse.arff").read_bytes()
    path = tmp_path / name
    path.write_bytes(gzip.compress(plain))
    np.testing.assert_array_equal(
        read_arff(path).data.toarray(), read_arff(DATA / "fmt_tiny_sparse.arff").data.toarray()
    )


def test_bytes_and_text_sources_agree_with_the_path():
    path = DATA / "fmt_tiny_dense.arff"
    expected = read_arff(path).data
    np.testing.assert_array_equal(read_arff(path.read_bytes()).data, expected)
    np.testing.assert_array_equal(parse_arff(path.read_text()).data, expected)


HEADER = "@relation r\n@attribute a numeric\n@attribute b {x,y z,1}\n@attribute c {1,0}\n@data\n"


@pytest.mark.parametrize(
    "rows",
    [
        "1.5,x,1\n-2e3,'y z',0\n?,1,?\n",  # quoted: regular-expression path
        "1.5,x,1\n-2e3,\"y z\",0\n?,1,?\n",
    ],
)
def test_quoted_and_unquoted_dense_rows_agree(rows):
    expected = [[1.5, 0, 0], [-2000, 1, 1], [nan, 2, nan]]
    np.testing.assert_array_equal(parse_arff(HEADER + rows).data, expected)
    unquoted = HEADER.replace("y z", "yz") + rows.replace("'y z'", "yz").replace('"y z"', "yz")
    np.testing.assert_array_equal(parse_arff(unquoted).data, expected)


def test_numeric_dense_rows_with_missing_values_and_a_reversed_nominal():
    text = "@relation r\n@attribute a numeric\n@attribute b {1,0}\n@data\n1.5,1\n?,0\n 7 , ? \n"
    np.testing.assert_array_equal(parse_arff(text).data, [[1.5, 0], [nan, 1], [7, nan]])


def test_spaces_after_commas_and_crlf_line_ends():
    text = (
        "@relation r\r\n@attribute a {YES, NO}\r\n@attribute b numeric\r\n"
        "@data\r\nNO, 2\r\nYES,\t3\r\n"
    )
    table = parse_arff(text)
    assert table.attributes[0].values == ("YES", "NO")
    np.testing.assert_array_equal(table.data, [[1, 2], [0, 3]])


def test_long_values_and_non_ascii_text():
    text = (
        "@relation r\n@attribute 'naïve name' {short,a_rather_long_value}\n@attribute n numeric\n"
        "@data\na_rather_long_value,0.12345678901234567\nshort,12345678901234567890\n"
    )
    table = parse_arff(text)
    assert table.names == ["naïve name", "n"]
    np.testing.assert_array_equal(
        table.data, [[1, 0.12345678901234567], [0, 12345678901234567890.0]]
    )


def test_sparse_rows_in_any_order_and_with_long_values():
    text = (
        "@relation r\n@attribute a numeric\n@attribute b numeric\n@attribute c {u,v}\n@data\n"
        "{2 v, 0 0.000012345678}\n{1 -1e-300}\n"
    )
    table = parse_arff(text)
    assert _csr_ok(table.data)
    np.testing.assert_array_equal(table.data.toarray(), [[0.000012345678, 0, 1], [0, -1e-300, 0]])


# A slow, obviously correct twin: random tables written as ARFF text in every
# style the reader has a path for, read back.

_POOL = ["a", "b", "0", "1", "YES", "NO", "x y", "it's", "c,d", "long_value_xyz", "ü", "%p"]


def _quote(value: str) -> str:
    if value.replace("_", "").isalnum() and value.isascii():
        return value
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


@st.composite
def _tables(draw):
    attributes = []
    for j in range(draw(st.integers(1, 5))):
        if draw(st.booleans()):
            attributes.append(Attribute(f"a{j}", "numeric"))
        else:
            values = draw(st.lists(st.sampled_from(_POOL), min_size=1, max_size=4, unique=True))
            attributes.append(Attribute(f"a{j}", "nominal", tuple(values)))
    numbers = st.one_of(
        st.integers(-1000, 1000).map(float), st.floats(allow_nan=False, allow_infinity=False)
    )
    rows = []
    for _ in range(draw(st.integers(0, 5))):
        row = []
        for attribute in attributes:
            if draw(st.integers(0, 9)) == 0:
                row.append(nan)
            elif attribute.kind == "numeric":
                row.append(draw(numbers))
            else:
                row.append(float(draw(st.integers(0, len(attribute.values) - 1))))
        rows.append(row)
    sparse = draw(st.booleans())
    separator = draw(st.sampled_from([",", ", "]))
    keep_zeros = draw(st.lists(st.booleans(), min_size=len(attributes), max_size=len(attributes)))
    return attributes, rows, sparse, separator, keep_zeros


def _text(value: float, attribute: Attribute) -> str:
    if np.isnan(value):
        return "?"
    if attribute.kind == "numeric":
        return repr(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)
    return _quote(attribute.values[int(value)])


@settings(max_examples=300, deadline=None)
@given(_tables())
def test_reader_matches_a_loop_twin_on_random_tables(case):
    attributes, rows, sparse, separator, keep_zeros = case
    lines = ["% generated", "@relation 'random table'"]
    for attribute in attributes:
        kind = "numeric" if attribute.kind == "numeric" else (
            "{" + ",".join(_quote(v) for v in attribute.values) + "}"
        )
        lines.append(f"@attribute {attribute.name} {kind}")
    lines.append("@data")
    for row in rows:
        if sparse:
            pairs = [
                f"{j} {_text(v, a)}"
                for j, (v, a) in enumerate(zip(row, attributes))
                if v != 0 or keep_zeros[j]
            ]
            lines.append("{" + separator.join(pairs) + "}")
        else:
            lines.append(separator.join(_text(v, a) for v, a in zip(row, attributes)))
    table = parse_arff("\n".join(lines) + "\n")
    expected = np.array(rows, dtype=float).reshape(len(rows), len(attributes))
    assert table.attributes == attributes
    assert table.is_sparse == (sparse and bool(rows))  # no row: nothing says sparse
    data = table.data.toarray() if table.is_sparse else table.data
    np.testing.assert_array_equal(data, expected)
    if table.is_sparse:
        assert _csr_ok(table.data)


# ---------------------------------------------------------------------------
# malformed ARFF: the line and what was expected

_TWO = "@relation r\n@attribute a numeric\n@attribute b numeric\n@data\n"
_NOM = "@relation r\n@attribute a {x,y}\n@attribute b numeric\n@data\n"
_SPARSE = "@relation r\n@attribute a numeric\n@attribute b {x,y}\n@data\n"


@pytest.mark.parametrize(
    "text, line, fragment",
    [
        (_TWO + "1,2\n3\n", 6, "expected 2 comma-separated values, found 1"),
        (_TWO + "1,2\n3,4,5\n", 6, "expected 2 comma-separated values, found 3"),
        (_NOM + "x,1\n\ny\n", 7, "expected 2 comma-separated values, found 1"),
        (_NOM + "x,1\n'y',2,3\n", 6, "expected 2 comma-separated values, found 3"),
        (_NOM + "x,1\nz,2\n", 6, "value 'z' of attribute 'a': expected one of {x, y}"),
        (_NOM + "x,1\n'z',2\n", 6, "value 'z' of attribute 'a': expected one of {x, y}"),
        (_NOM + "x,1\ny,abc\n", 6, "value 'abc' of attribute 'b': expected a number"),
        (_TWO + "1,2\n3,abc\n", 6, "value 'abc' of attribute 'b': expected a number"),
        ("@relation r\n@attribute a {0,1}\n@data\n0\n2\n", 5, "value '2' of attribute 'a'"),
        ("@relation r\n@attribute a text\n@data\n", 2, "unknown type 'text' of attribute 'a'"),
        ("@relation r\n@attribute a relational\n", 2, "not supported"),
        ("@relation r\n@attribute a numeric\n@attribute a numeric\n", 3, "declared twice"),
        ("@attribute a numeric\n@data\n", 1, "expected @relation"),
        ("@relation r\n@attribute a numeric\n\n1,2\n", 4, "expected @relation, @attribute"),
        ("@relation r\n@attribute a numeric\n% no data section\n", 4, "expected @data"),
        ("@relation r\n@attribute a {x,,y}\n@data\n", 2, "empty value"),
        (_SPARSE + "{0 1}\n{1 x, 5 1}\n", 6, "sparse index 5 is out of range"),
        (_SPARSE + "{0 1}\n{1 'x', 5 1}\n", 6, "sparse index 5 is out of range"),
        (_SPARSE + "{0 1}\n{1 z}\n", 6, "value 'z' of attribute 'b'"),
        (_SPARSE + "{0 1, 0 2}\n", 5, "sparse index 0 appears twice"),
        (_SPARSE + "{0 1}\n{a 1}\n", 6, "expected a sparse index"),
        (_SPARSE + "{0 1}\n{0}\n", 6, "expected 'index value' pairs"),
        (_SPARSE + "{0 1}\n{0 1 1 x}\n", 6, "expected 'index value' pairs"),
        (_SPARSE + "{0 1}\n1,x\n", 6, "outside braces"),
        (_SPARSE + "{0 1} 3\n", 5, "outside braces"),
        (_SPARSE + "{0 1}\n{1 x\n", 6, "expected one sparse row"),
        (_TWO + "1,2\n{0 1}\n", 6, "cannot be mixed"),
    ],
)
def test_malformed_arff_names_the_line_and_the_expectation(text, line, fragment):
    with pytest.raises(ArffFormatError) as caught:
        parse_arff(text)
    message = str(caught.value)
    assert f"line {line}:" in message
    assert fragment in message


def test_a_file_error_names_the_file(tmp_path):
    path = tmp_path / "bad.arff"
    path.write_text(_TWO + "1\n")
    with pytest.raises(ArffFormatError, match=r"bad\.arff, line 5: expected 2"):
        read_arff(path)


def test_a_broken_gzip_file_is_a_format_error(tmp_path):
    path = tmp_path / "broken.arff.gz"
    path.write_bytes(gzip.compress(b"@relation r\n" * 50)[:30])
    with pytest.raises(ArffFormatError, match="gzip"):
        read_arff(path)


# ---------------------------------------------------------------------------
# loaders on the fixtures


def test_load_mulan_converts_features_and_finds_labels_by_name():
    data = load_mulan(DATA / "fmt_tiny_dense.arff", DATA / "fmt_tiny.xml")
    assert data.name == "" and data.split == "all"
    assert data.feature_names == ["x1", "x two", "colour", "flag", "code"]
    assert data.label_names == ["Swainson's Thrush", "lab_b", "lab_a"]  # ARFF order
    assert data.X.dtype == np.float64 and isinstance(data.X, np.ndarray)
    np.testing.assert_array_equal(
        data.X, [[1.5, -2, 0, 1, 10], [0, 32.5, 2, 0, 2], [nan, 0.5, 1, 1, 1]]
    )
    assert data.Y.dtype == np.int8
    np.testing.assert_array_equal(data.Y, [[1, 0, 0], [0, 1, 1], [1, 1, 0]])
    notes = " | ".join(data.notes)
    assert "another order" in notes
    assert "dropped string attribute(s) 'id'" in notes
    assert "'code' is nominal {2,10,1}" in notes and "unordered" in notes
    assert "YES=1, NO=0" in notes
    assert "'colour'" in notes and "position" in notes
    assert "1 missing feature value(s)" in notes


def test_read_mulan_xml_keeps_document_order_and_unescapes(tmp_path):
    assert read_mulan_xml(DATA / "fmt_tiny.xml") == ["lab_a", "Swainson's Thrush", "lab_b"]
    nested = tmp_path / "h.xml"
    nested.write_text(
        '<labels xmlns="http://mulan.sourceforge.net/labels"><label name="A &amp; B">'
        '<label name="child"/></label><label name="c"/></labels>'
    )
    assert read_mulan_xml(nested) == ["A & B", "child", "c"]
    nested.write_text("<labels><label/></labels>")
    with pytest.raises(DatasetError, match="no name"):
        read_mulan_xml(nested)
    nested.write_text("<labels><label name='x'>")
    with pytest.raises(DatasetError, match="not a readable Mulan XML"):
        read_mulan_xml(nested)


def test_an_xml_label_absent_from_the_arff_is_named(tmp_path):
    xml = tmp_path / "labels.xml"
    xml.write_text('<labels><label name="lab_a"/><label name="nope"/><label name="gone"/></labels>')
    with pytest.raises(DatasetError, match=r"2 label\(s\).*'nope', 'gone'"):
        load_mulan(DATA / "fmt_tiny_dense.arff", xml)


def _write(tmp_path: Path, text: str, name: str = "f.arff") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_a_label_that_is_not_binary_is_named_with_its_value(tmp_path):
    header = "@relation r\n@attribute f numeric\n"
    arff = _write(tmp_path, header + "@attribute L numeric\n@data\n1,0\n2,2\n")
    xml = _write(tmp_path, '<labels><label name="L"/></labels>', "l.xml")
    with pytest.raises(DatasetError, match=r"label 'L' must be 0 or 1.*line 6\) has 2"):
        load_mulan(arff, xml)
    arff = _write(tmp_path, header + "@attribute L {0,1}\n@data\n1,?\n")
    with pytest.raises(DatasetError, match=r"label 'L' must be 0 or 1.*has \?"):
        load_mulan(arff, xml)
    arff = _write(tmp_path, header + "@attribute L {no,yes,maybe}\n@data\n1,no\n")
    with pytest.raises(DatasetError, match=r"label 'L' is nominal \{no,yes,maybe\}"):
        load_mulan(arff, xml)


def test_load_meka_with_labels_first_and_a_reversed_sparse_nominal():
    data = load_meka(DATA / "fmt_tiny_sparse.arff")
    assert data.label_names == ["L1", "L2"]
    assert data.feature_names == ["f_num", "f_rev", "f_bin"]
    np.testing.assert_array_equal(data.Y, [[1, 0], [0, 1], [0, 0], [0, 0]])
    assert _csr_ok(data.X) and data.X.dtype == np.float64
    # f_rev is declared {1,0}: where a row does not list it, it is '1'
    np.testing.assert_array_equal(
        data.X.toarray(), [[0.5, 1, 1], [0, 1, 0], [0, 1, 0], [nan, 0, 0]]
    )


def test_a_sparse_label_declared_one_zero_is_one_where_unlisted(tmp_path):
    arff = _write(
        tmp_path,
        "@relation 'r: -C 1'\n@attribute L {1,0}\n@attribute f numeric\n"
        "@data\n{1 2}\n{0 0, 1 3}\n{0 1}\n",
    )
    data = load_meka(arff)
    np.testing.assert_array_equal(data.Y, [[1], [0], [1]])
    np.testing.assert_array_equal(data.X.toarray(), [[2], [3], [0]])


def test_load_meka_with_labels_last():
    data = load_meka(DATA / "fmt_tiny_meka.arff")
    assert data.label_names == ["y1", "y2"] and data.feature_names == ["a", "b"]
    np.testing.assert_array_equal(data.X, [[1, 2], [3, 4.5]])
    np.testing.assert_array_equal(data.Y, [[0, 1], [1, 1]])


def test_load_meka_prefers_the_xml_over_c(tmp_path):
    xml = _write(tmp_path, '<labels><label name="y1"/><label name="y2"/></labels>', "l.xml")
    arff = _write(tmp_path, (DATA / "fmt_tiny_meka.arff").read_text().replace("-C -2", "-C 2"))
    data = load_meka(arff, xml)
    assert data.label_names == ["y1", "y2"]
    assert any("-C 2 was ignored" in note for note in data.notes)


def test_load_meka_needs_c_or_an_xml(tmp_path):
    body = "@attribute a numeric\n@attribute y {0,1}\n@data\n1,0\n"
    arff = _write(tmp_path, "@relation plain\n" + body)
    with pytest.raises(DatasetError, match="no -C option"):
        load_meka(arff)
    arff = _write(tmp_path, "@relation 'r: -C 5'\n" + body)
    with pytest.raises(DatasetError, match="does not fit"):
        load_meka(arff)


def test_an_identifier_attribute_is_dropped(tmp_path):
    rows = "".join(f"id{i},{i % 2},{(i // 2) % 2}\n" for i in range(25))
    values = ",".join(f"id{i}" for i in range(30))
    arff = _write(
        tmp_path,
        f"@relation r\n@attribute key {{{values}}}\n@attribute f {{0,1}}\n"
        f"@attribute y {{0,1}}\n@data\n{rows}",
    )
    xml = _write(tmp_path, '<labels><label name="y"/></labels>', "l.xml")
    data = load_mulan(arff, xml)
    assert data.feature_names == ["f"]
    assert any("dropped nominal attribute 'key'" in note for note in data.notes)


# ---------------------------------------------------------------------------
# MATLAB


def _targets(rng, n, n_labels, coding):
    Y = (rng.random((n, n_labels)) < 0.4).astype(np.int16)
    return Y, (2 * Y - 1 if coding == "pm1" else Y).T  # stored L x n


@pytest.mark.parametrize("coding", ["pm1", "01"])
@pytest.mark.parametrize("sparse_x", [False, True])
def test_mat_layout_a(tmp_path, rng, coding, sparse_x):
    X = rng.random((7, 4))
    Y, stored = _targets(rng, 7, 3, coding)
    path = tmp_path / "a.mat"
    scipy.io.savemat(path, {"data": sp.csr_matrix(X) if sparse_x else X, "target": stored})
    result = load_mat(path)
    assert set(result) == {"all"}
    data = result["all"]
    assert data.is_sparse == sparse_x
    np.testing.assert_allclose(data.X.toarray() if sparse_x else data.X, X)
    np.testing.assert_array_equal(data.Y, Y)
    assert data.Y.dtype == np.int8
    assert data.feature_names == ["f0", "f1", "f2", "f3"]
    assert data.label_names == ["label0", "label1", "label2"]


def test_mat_layout_b(tmp_path, rng):
    X_train, X_test = rng.random((5, 3)), rng.random((4, 3))
    Y_train, T_train = _targets(rng, 5, 2, "pm1")
    Y_test, T_test = _targets(rng, 4, 2, "pm1")
    path = tmp_path / "b.mat"
    scipy.io.savemat(
        path,
        {
            "train_data": X_train,
            "train_target": T_train,
            "test_data": X_test,
            "test_target": T_test,
        },
    )
    result = load_mat(path)
    assert set(result) == {"train", "test", "all"}
    np.testing.assert_allclose(result["train"].X, X_train)
    np.testing.assert_array_equal(result["test"].Y, Y_test)
    np.testing.assert_allclose(result["all"].X, np.vstack([X_train, X_test]))
    np.testing.assert_array_equal(result["all"].Y, np.vstack([Y_train, Y_test]))
    assert result["train"].split == "train" and result["all"].split == "all"


@pytest.mark.parametrize("container", ["cell", "struct"])
def test_mat_layout_c(tmp_path, rng, container):
    X_train, X_test = rng.random((6, 3)), rng.random((2, 3))
    Y_train, T_train = _targets(rng, 6, 4, "pm1")
    Y_test, T_test = _targets(rng, 2, 4, "pm1")

    def pack(X, T):
        if container == "struct":
            return {"x": X.T, "y": T}
        cell = np.empty((1, 2), dtype=object)
        cell[0, 0], cell[0, 1] = X.T, T  # X stored d x n
        return cell

    path = tmp_path / "c.mat"
    scipy.io.savemat(path, {"train": pack(X_train, T_train), "test": pack(X_test, T_test)})
    result = load_mat(path)
    np.testing.assert_allclose(result["train"].X, X_train)
    np.testing.assert_array_equal(result["train"].Y, Y_train)
    np.testing.assert_allclose(result["all"].X, np.vstack([X_train, X_test]))
    np.testing.assert_array_equal(result["all"].Y, np.vstack([Y_train, Y_test]))


def test_mat_errors(tmp_path):
    path = tmp_path / "x.mat"
    scipy.io.savemat(path, {"features": np.ones((2, 2))})
    with pytest.raises(DatasetError, match="unknown .mat layout"):
        load_mat(path)
    scipy.io.savemat(path, {"data": np.ones((2, 2)), "target": np.array([[0, 2]])})
    with pytest.raises(DatasetError, match="expected -1/\\+1 or 0/1"):
        load_mat(path)
    scipy.io.savemat(path, {"data": np.ones((2, 2)), "target": np.ones((3, 3))})
    with pytest.raises(DatasetError, match="2 instances but targets of shape"):
        load_mat(path)


# ---------------------------------------------------------------------------
# libsvm


def test_load_libsvm():
    data = load_libsvm(DATA / "fmt_tiny.svm")
    assert _csr_ok(data.X)
    np.testing.assert_array_equal(data.X.toarray(), [[0.5, 0, 1], [0, 2, 0], [1, 0, 0]])
    np.testing.assert_array_equal(data.Y, [[1, 0, 1], [0, 0, 0], [0, 1, 0]])
    assert data.Y.dtype == np.int8 and data.label_names == ["label0", "label1", "label2"]
    wide = load_libsvm(DATA / "fmt_tiny.svm", n_features=5, n_labels=4)
    assert wide.X.shape == (3, 5) and wide.Y.shape == (3, 4)
    with pytest.raises(DatasetError, match="not below n_labels=2"):
        load_libsvm(DATA / "fmt_tiny.svm", n_labels=2)


def test_liac_arff_is_not_a_runtime_dependency():
    code = (
        "import sys, mlneighbors.datasets._formats as f, mlneighbors.datasets._arff as a; "
        "sys.exit('arff' in sys.modules)"
    )
    src = Path(__file__).resolve().parents[2] / "src"
    env = {**os.environ, "PYTHONPATH": str(src)}
    assert subprocess.run([sys.executable, "-c", code], env=env).returncode == 0


# ---------------------------------------------------------------------------
# the real benchmark files


def _arff_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.name.endswith((".arff", ".arff.gz")))


def _liac(path: Path):
    arff = pytest.importorskip("arff")
    raw = path.read_bytes()
    text = (gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw).decode("utf-8")
    try:
        return arff.loads(text, encode_nominal=True, return_type=arff.COO), True
    except arff.BadLayout:
        return arff.loads(text, encode_nominal=True, return_type=arff.DENSE), False


def test_every_shared_arff_file_matches_liac_arff(shared_data):
    files = _arff_files(shared_data)
    assert files
    for path in files:
        table = read_arff(path)
        reference, coo = _liac(path)
        assert table.relation == reference["relation"], path
        # liac-arff keeps the backslash of an escaped quote in a name
        names = [name.replace("\\'", "'") for name, _ in reference["attributes"]]
        assert table.names == names, path
        for attribute, (_, kind) in zip(table.attributes, reference["attributes"]):
            if isinstance(kind, list):
                assert attribute.kind == "nominal" and list(attribute.values) == kind, path
            else:
                numeric = kind.upper() in ("REAL", "NUMERIC", "INTEGER")
                assert attribute.kind == ("numeric" if numeric else kind.lower()), path
        assert table.is_sparse == coo, path
        if coo:
            values, rows, cols = reference["data"]
            expected = sp.csr_matrix(
                (np.asarray(values, dtype=float), (rows, cols)), shape=table.data.shape
            )
            assert (expected != table.data).nnz == 0, path
            assert _csr_ok(table.data), path
        else:
            expected = np.array(reference["data"], dtype=float)
            np.testing.assert_array_equal(table.data, expected, err_msg=str(path))


# (arff file, xml, loader, n_samples, n_features, n_labels, cardinality) from MANIFEST.md
REAL = [
    ("emotions/emotions.arff", "emotions/emotions.xml", load_mulan, 593, 72, 6, 1.8685, False),
    ("yeast/yeast.arff.gz", "yeast/yeast.xml", load_mulan, 2417, 103, 14, 4.2371, False),
    ("ohsumed/ohsumed.arff.gz", "ohsumed/ohsumed.xml", load_meka, 13929, 1002, 23, 1.6631, True),
    ("medical/medical.arff", "medical/medical.xml", load_meka, 978, 1449, 45, 1.2454, True),
    ("medical/medical.arff", "medical/medical.xml", load_mulan, 978, 1449, 45, 1.2454, True),
    # genbase: the manifest counts 1186 features including the identifier 'protein', dropped here
    ("genbase/genbase.arff.gz", "genbase/genbase.xml", load_mulan, 662, 1185, 27, 1.2523, False),
    ("birds/birds-train.arff", "birds/birds.xml", load_mulan, 322, 260, 19, 1.059, False),
    ("birds/birds-test.arff", "birds/birds.xml", load_mulan, 323, 260, 19, 0.969, False),
    ("bibtex/bibtex.arff.gz", "bibtex/bibtex.xml", load_mulan, 7395, 1836, 159, 2.4019, True),
]


@pytest.mark.parametrize("arff, xml, loader, n, d, n_labels, card, sparse", REAL, ids=str)
def test_real_datasets_have_the_manifest_shape(
    shared_data, arff, xml, loader, n, d, n_labels, card, sparse
):
    data = loader(shared_data / arff, shared_data / xml)
    assert (data.n_samples, data.n_features, data.n_labels) == (n, d, n_labels)
    assert data.cardinality == pytest.approx(card, abs=5e-4)
    assert data.is_sparse == sparse
    assert data.Y.dtype == np.int8 and set(np.unique(data.Y)) <= {0, 1}
    assert data.X.dtype == np.float64
    if sparse:
        assert _csr_ok(data.X)


def test_yeast_labels_follow_the_arff_order(shared_data):
    data = load_mulan(shared_data / "yeast/yeast.arff.gz", shared_data / "yeast/yeast.xml")
    xml = read_mulan_xml(shared_data / "yeast/yeast.xml")
    assert xml[3] == "Class6" and data.label_names == [f"Class{i}" for i in range(1, 15)]
    table = read_arff(shared_data / "yeast/yeast.arff.gz")
    np.testing.assert_array_equal(data.Y[:, 5], table.data[:, table.names.index("Class6")])


def test_birds_escaped_label_and_location_code(shared_data):
    data = load_mulan(shared_data / "birds/birds-train.arff", shared_data / "birds/birds.xml")
    assert "Swainson's Thrush" in data.label_names
    location = data.X[:, data.feature_names.index("location")]
    assert set(np.unique(location)) <= {2, 10, 1, 7, 5, 4, 17, 15, 16, 8, 13, 11}
    assert any("'location'" in note and "unordered" in note for note in data.notes)


def test_genbase_drops_protein_and_codes_yes_as_one(shared_data):
    data = load_mulan(shared_data / "genbase/genbase.arff.gz", shared_data / "genbase/genbase.xml")
    assert "protein" not in data.feature_names
    table = read_arff(shared_data / "genbase/genbase.arff.gz")
    j = table.names.index("PS00010")  # declared {YES, NO}: index 0 is YES
    feature = data.X[:, data.feature_names.index("PS00010")]
    np.testing.assert_array_equal(feature, 1 - table.data[:, j])
    assert any("protein" in note for note in data.notes)


@pytest.mark.parametrize(
    "mat, n, d, n_labels, card",
    [
        ("slashdot/slashdot.mat", 3782, 1079, 22, 1.1766),
        ("yahoo-science/science.mat", 5000, 743, 40, 1.4506),
        ("corel16k001/Corel16k001.mat", 13766, 500, 153, 2.8587),
    ],
)
def test_real_mat_files(shared_data, mat, n, d, n_labels, card):
    result = load_mat(shared_data / mat)
    assert set(result) == {"all"}
    data = result["all"]
    assert (data.n_samples, data.n_features, data.n_labels) == (n, d, n_labels)
    assert data.cardinality == pytest.approx(card, abs=5e-4)


def test_arff_table_is_what_read_arff_returns():
    assert isinstance(read_arff(DATA / "fmt_tiny_meka.arff"), ArffTable)
