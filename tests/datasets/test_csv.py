"""Tests of the CSV reader (pandas): label columns by name or range, and one-line errors."""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from mlneighbors.datasets import DatasetError, load_csv

pytest.importorskip("pandas")

DATA = Path(__file__).resolve().parents[1] / "data"
TINY = DATA / "fmt_tiny.csv"
nan = np.nan


@pytest.mark.parametrize(
    "spec", ["sport,music,news", " sport , music,news ", ["sport", "music", "news"], "3:", "-3:", "3:6", "-3:99"]
)
def test_label_columns_by_name_or_by_range(spec):
    data = load_csv(TINY, spec)
    assert data.feature_names == ["x1", "x2", "colour_code"]
    assert data.label_names == ["sport", "music", "news"]
    np.testing.assert_array_equal(data.X, [[0.5, 1, 3], [2, 0, 1], [-1.5, nan, 2]])
    np.testing.assert_array_equal(data.Y, [[1, 0, 0], [0, 1, 1], [0, 0, 0]])
    assert data.X.dtype == np.float64 and data.Y.dtype == np.int8
    assert data.notes == ["1 empty feature value(s) are NaN in X"]


def test_labels_follow_the_order_they_are_named_in():
    data = load_csv(TINY, "news,sport")
    assert data.label_names == ["news", "sport"]  # in the order named
    assert data.feature_names == ["x1", "x2", "colour_code", "music"]
    np.testing.assert_array_equal(data.Y, [[0, 1], [1, 0], [0, 0]])


def test_tsv_gzip_and_true_false_labels(tmp_path):
    path = tmp_path / "t.tsv.gz"
    path.write_bytes(gzip.compress(b"a\tb\ttag\n1\t2\tTrue\n3\t4\tFalse\n"))
    data = load_csv(path, "tag")
    np.testing.assert_array_equal(data.Y, [[1], [0]])
    np.testing.assert_array_equal(data.X, [[1, 2], [3, 4]])


def test_a_written_index_is_dropped_and_empty_lines_skipped(tmp_path):
    path = tmp_path / "w.csv"
    path.write_text(",x,y\n0,1.5,1\n\n1,2.5,0\n2,3.5,1\n")
    data = load_csv(path, "y")
    assert data.feature_names == ["x"]
    np.testing.assert_array_equal(data.X, [[1.5], [2.5], [3.5]])
    assert any("to_csv" in note for note in data.notes)
    assert any("skipped 1 empty line" in note for note in data.notes)


def _csv(tmp_path, text: str | bytes) -> Path:
    path = tmp_path / "labels.csv"
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path


@pytest.mark.parametrize(
    "text, spec, fragment",
    [
        ("a,b,c\n1,2,0\n", "tag9", r"labels\.csv: label_columns \(--label-columns\) names 'tag9', which is not a "
                                   r"column; columns are: 'a', 'b', 'c'$"),
        ("a,b,c\n1,2,0\n", "5:9", r"label_columns \(--label-columns\) '5:9' selects none of the 3 columns"),
        ("a,b,c\n1,2,0\n", ":", r"takes all 3 columns as labels; at least one must be a feature"),
        ("a,b,c\n1,2,0\n", "c,c", r"names 'c' twice"),
        ("a,b,c\n1,2,0\n", "a,,c", r"names '', which is not a column"),
        ("a,b,a\n1,2,0\n", "b", r"labels\.csv, line 1: column names appear twice: 'a'"),
        ("a,b,c\n1,2,0\n3,4,5,6\n", "c", r"labels\.csv, line 3: expected 3 fields, as the header has, found 4"),
        ("a,b,c\n1,2,0\n1,red,1\n", "c", r"labels\.csv: feature column 'b' holds 'red' at line 3; expected numbers"),
        ("a,b,c\n1,2,0\n\n1,2,yes\n", "c", r"labels\.csv: label 'c' holds 'yes' at line 4; expected 0 or 1"),
        ("a,b,c\n1,2,0\n1,2,\n", "c", r"labels\.csv: label 'c' must be 0 or 1, but row 1 \(line 3\) is missing"),
        ("a,b,c\n1,2,0\n\n1,2,3\n", "c", r"label 'c' must be 0 or 1, but row 1 \(line 4\) has 3"),
        ("a,b,c\n1,2,-1\n1,2,1\n", "c", r"label 'c' holds -1 and \+1; labels must be 0/1: .*\(Y > 0\)\.astype\(int\)"),
        ("", "c", r"labels\.csv: the file is empty; expected a header line"),
        (b"a,b,c\n1,2,0\n1,\xe9,1\n", "c", r"labels\.csv, line 3: byte 0xe9 at column 3 is not UTF-8"),
    ],
    ids=["unknown-name", "empty-range", "all-columns", "repeated-name", "empty-name", "duplicate-header",
         "ragged", "text-feature", "text-label", "missing-label", "label-3", "plus-minus-one", "empty",
         "not-utf8"],
)
def test_problems_are_one_line_naming_the_file(tmp_path, text, spec, fragment):
    with pytest.raises(DatasetError, match=fragment):
        load_csv(_csv(tmp_path, text), spec)


@pytest.mark.parametrize(
    "text",
    ["0.5,1.25,1,0\n0.7,2.5,0,1\n0.1,0.2,1,1\n",  # every cell a number
     "0.5,,1,0\n0.7,2.5,0,1\n0.1,0.2,1,1\n",  # and an empty one (pandas: 'Unnamed: 1')
     "-1e-3,7,1,0\n0.7,2.5,0,1\n0.1,0.2,1,1\n"],
    ids=["numbers", "an-empty-cell", "exponent"],
)
def test_a_line_1_of_numbers_read_as_the_header_gets_the_no_header_hint(tmp_path, text):
    path = _csv(tmp_path, text)
    notes = load_csv(path, "-2:").notes
    assert any("line 1 holds only numbers" in n and "pass header=False (--no-header)" in n for n in notes), notes
    # a label named by the user is not in a header of numbers: the error says why
    with pytest.raises(DatasetError, match=r"names 'sport', which is not a column; .*\(line 1 holds only numbers: "
                                           r"if the file has no header line, pass header=False \(--no-header\)\)$"):
        load_csv(path, "sport")


@pytest.mark.parametrize(
    "header",
    ["x1,x2,sport,music", "0,1,2,3", "1,2,3,4", "x1,2,sport,4", ",x1,sport,music"],
    ids=["names", "numbered-from-0", "numbered-from-1", "some-numbers", "an-empty-name"],
)
def test_a_header_of_names_gets_no_hint(tmp_path, header):
    """Column names, also the numbers 0, 1, ... that pandas' to_csv writes for unnamed columns."""
    path = _csv(tmp_path, header + "\n0.5,1.25,1,0\n0.7,2.5,0,1\n")
    assert not any("header" in n for n in load_csv(path, "-2:").notes)
    with pytest.raises(DatasetError, match=r"names 'tag9', which is not a column; columns are: [^(]*$"):
        load_csv(path, "tag9")


def test_without_pandas_the_error_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError, match=r"pip install 'mlneighbors\[pandas\]'"):
        load_csv(TINY, "sport")


def test_pandas_is_imported_only_to_read_a_csv_file():
    code = "import sys, mlneighbors.datasets; sys.exit('pandas' in sys.modules)"
    src = Path(__file__).resolve().parents[2] / "src"
    assert subprocess.run([sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": str(src)}).returncode == 0
