"""Tests of the ARFF readers: read_arff, Mulan (ARFF + XML) and MEKA (-C) loaders."""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from mlneighbors.datasets import (
    ArffFormatError,
    DatasetError,
    load_meka,
    load_mulan,
    read_arff,
    read_mulan_xml,
)
from mlneighbors.datasets._arff import ArffTable, Attribute, parse_arff

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
                for j, (v, a) in enumerate(zip(row, attributes, strict=True))
                if v != 0 or keep_zeros[j]
            ]
            lines.append("{" + separator.join(pairs) + "}")
        else:
            lines.append(separator.join(_text(v, a) for v, a in zip(row, attributes, strict=True)))
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
        (_SPARSE + "{0 1, 0 2}\n", 5, "sparse index 0 (attribute 'a') appears twice"),
        (_SPARSE + "{0 1}\n{1 'x', 1 'y'}\n", 6, "sparse index 1 (attribute 'b') appears twice"),
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


@pytest.mark.parametrize("value", ["'hello world'", "'he wo'", '"a much longer value with spaces"'])
def test_a_quoted_value_with_spaces_for_a_numeric_attribute_names_the_line(value):
    text = f"@relation r\n@attribute s string\n@attribute a numeric\n@data\n'x y',1\n'z',{value}\n"
    with pytest.raises(ArffFormatError, match=rf"line 6: value {value[1:-1]!r} of attribute 'a': expected a number"):
        parse_arff(text)


def test_quoted_values_with_spaces_are_read_where_the_attribute_allows_them():
    text = (
        "@relation r\n@attribute s string\n@attribute c {'hello world','a b',plain}\n"
        "@attribute n numeric\n@data\n'some free text',' a b ',1\n"
        "\"more text here\",'hello world',2.5\n'x','a b',' 3'\n"
    )
    with pytest.raises(ArffFormatError, match=r"line 6: value ' a b ' of attribute 'c'"):
        parse_arff(text)  # inside quotes the spaces are part of the value
    table = parse_arff(text.replace("' a b '", "'a b'"))
    np.testing.assert_array_equal(table.data, [[nan, 1, 1], [nan, 0, 2.5], [nan, 1, 3]])


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
    with pytest.raises(DatasetError, match=r"h\.xml, line 1, column 25: the XML cannot be parsed"):
        read_mulan_xml(nested)


def test_an_xml_in_its_declared_encoding_is_read(tmp_path):
    path = tmp_path / "latin.xml"
    path.write_bytes(b'<?xml version="1.0" encoding="ISO-8859-1"?><labels><label name="caf\xe9"/></labels>')
    assert read_mulan_xml(path) == ["café"]


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
    with pytest.raises(DatasetError, match=r"f\.arff: label 'L' must be 0 or 1, but row 1 \(line 6\) has 2$"):
        load_mulan(arff, xml)
    arff = _write(tmp_path, header + "@attribute L {0,1}\n@data\n1,?\n")
    with pytest.raises(DatasetError, match=r"label 'L' must be 0 or 1, but row 0 \(line 5\) is missing"):
        load_mulan(arff, xml)
    arff = _write(tmp_path, header + "@attribute L {no,yes,maybe}\n@data\n1,no\n")
    with pytest.raises(DatasetError, match=r"label 'L' is nominal \{no,yes,maybe\} \(line 3\); expected"):
        load_mulan(arff, xml)
    arff = _write(tmp_path, header + "@attribute L string\n@data\n1,no\n")
    with pytest.raises(DatasetError, match=r"label 'L' is a string attribute \(line 3\)"):
        load_mulan(arff, xml)


@pytest.mark.parametrize("declared", ["numeric", "{-1,1}", "{1,-1}"])
def test_a_label_coded_minus_one_plus_one_says_how_to_convert(tmp_path, declared):
    arff = _write(tmp_path, f"@relation r\n@attribute f numeric\n@attribute L {declared}\n@data\n1,-1\n2,1\n")
    xml = _write(tmp_path, '<labels><label name="L"/></labels>', "l.xml")
    match = r"label 'L' holds -1 and \+1; labels must be 0/1: .*\(Y > 0\)\.astype\(int\)"
    with pytest.raises(DatasetError, match=match):
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


def test_load_meka_refuses_a_c_that_names_other_labels_than_the_xml(tmp_path):
    xml = _write(tmp_path, '<labels><label name="y1"/><label name="y2"/></labels>', "l.xml")
    arff = _write(tmp_path, (DATA / "fmt_tiny_meka.arff").read_text().replace("-C -2", "-C 2"))
    with pytest.raises(
        DatasetError,
        match=r"-C 2 in the @relation \(line 1\) names 2 label\(s\) \('a', 'b'\), but the XML "
        r".*l\.xml names 2 \('y1', 'y2'\)\. load_meka trusts neither: .* use load_mulan",
    ):
        load_meka(arff, xml)
    data = load_mulan(arff, xml)  # a Mulan file: the XML decides, and the notes say so
    assert data.label_names == ["y1", "y2"]
    assert any("-C 2 in the @relation (line 1) names 2" in note and "the XML decides" in note
               for note in data.notes)


def test_load_meka_with_an_xml_that_agrees_with_c():
    data = load_meka(DATA / "fmt_tiny_meka.arff", DATA / "fmt_stale_c.xml")  # -C -2: y1, y2
    assert data.label_names == ["y1", "y2"] and not data.notes


# a stale -C (issue 11: langlog.arff.gz's -C 75 took 75 wrong columns)

STALE = DATA / "fmt_stale_c.arff"


def test_a_stale_c_taking_a_column_that_is_not_binary_is_refused():
    with pytest.raises(
        DatasetError,
        match=r"fmt_stale_c\.arff: -C 3 in the @relation \(line 3\) takes the first 3 attributes as "
        r"labels; attribute 'len' must be 0 or 1, but row 0 \(line 10\) has 7; the -C may be "
        r"stale: give the Mulan XML naming the labels \(xml=, --xml\) or labels_first=N",
    ):
        load_meka(STALE)


@pytest.mark.parametrize(
    "declaration, problem",
    [
        ("{a,b}", r"attribute 'w' is nominal \{a,b\} \(line 2\); expected the values 0 and 1"),
        ("string", r"attribute 'w' is a string attribute \(line 2\)"),
    ],
)
def test_a_stale_c_taking_a_declared_non_binary_attribute_names_it(tmp_path, declaration, problem):
    arff = _write(tmp_path, f"@relation 'r: -C 2'\n@attribute w {declaration}\n@attribute y {{0,1}}\n"
                            "@attribute x numeric\n@data\na,1,2\n")
    with pytest.raises(DatasetError, match=r"-C 2 in the @relation \(line 1\) takes the first 2 "
                                           r"attributes as labels; " + problem):
        load_meka(arff)


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
        for attribute, (_, kind) in zip(table.attributes, reference["attributes"], strict=True):
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


def test_medical_c_is_followed_by_a_remove_filter_so_only_its_xml_tells_the_labels(shared_data):
    # medical's relation: 'MEDC: -C 45 -I 0-weka.filters.unsupervised.attribute.Remove-R1-45_MEDC:
    # -C 45 ...': the attributes -C 45 named were removed after it was written (and the file is
    # a merge of two relations), so the -C says nothing about the file as it is
    arff, xml = shared_data / "medical/medical.arff", shared_data / "medical/medical.xml"
    with pytest.raises(DatasetError, match=r"medical\.arff: -C 45 in the @relation \(line 1\) is followed by "
                                           r"filters Weka recorded after it, and the filter "
                                           r"weka\.filters\.unsupervised\.attribute\.Remove-R1-45"):
        load_meka(arff)
    by_meka, by_mulan = load_meka(arff, xml), load_mulan(arff, xml)  # the XML decides, a note says why
    assert by_meka.label_names == by_mulan.label_names == read_mulan_xml(xml)
    np.testing.assert_array_equal(by_meka.Y, by_mulan.Y)
    assert any("-C 45" in note and "written before filters" in note for note in by_mulan.notes)


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


def test_arff_table_is_what_read_arff_returns():
    assert isinstance(read_arff(DATA / "fmt_tiny_meka.arff"), ArffTable)
