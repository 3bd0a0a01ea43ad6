"""Tests of load_file: the format from the extension, the labels from the options, one-line errors."""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import numpy as np
import pytest
import scipy.io

from mlneighbors.datasets import (
    FORMATS,
    DatasetError,
    DatasetWarning,
    load_file,
    load_libsvm,
    load_meka,
    load_mulan,
)

DATA = Path(__file__).resolve().parents[1] / "data"


def _copy(tmp_path: Path, name: str, as_name: str, compress: bool = False) -> Path:
    target = tmp_path / as_name
    raw = (DATA / name).read_bytes()
    target.write_bytes(gzip.compress(raw) if compress else raw)
    return target


@pytest.mark.parametrize("compress", [False, True])
@pytest.mark.parametrize("suffix", FORMATS["libsvm"])
def test_libsvm_by_extension(tmp_path, suffix, compress):
    path = _copy(tmp_path, "fmt_tiny.svm", "tiny" + suffix + (".gz" if compress else ""), compress)
    np.testing.assert_array_equal(load_file(path).Y, load_libsvm(DATA / "fmt_tiny.svm").Y)


@pytest.mark.requires("pandas")
@pytest.mark.parametrize("compress", [False, True])
def test_csv_by_extension_with_label_columns_or_a_count(tmp_path, compress):
    path = _copy(tmp_path, "fmt_tiny.csv", "tiny.csv" + (".gz" if compress else ""), compress)
    by_names = load_file(path, label_columns="sport,music,news", missing="nan")  # x2 has a gap
    by_count = load_file(path, labels_last=3, missing="nan")
    assert by_names.label_names == by_count.label_names == ["sport", "music", "news"]
    np.testing.assert_array_equal(by_names.Y, by_count.Y)
    with pytest.raises(DatasetError, match=r"label 'x1' must be 0 or 1, but row 0 \(line 2\) has 0\.5"):
        load_file(path, labels_first=1)


def test_a_csv_without_label_columns_says_how_to_give_them():
    with pytest.raises(DatasetError, match=r"fmt_tiny\.csv: a CSV file does not say which columns are labels; "
                                           r"give label_columns \(--label-columns\) by names"):
        load_file(DATA / "fmt_tiny.csv")


def test_arff_with_the_xml_beside_it_of_a_split_file(tmp_path):
    arff = _copy(tmp_path, "fmt_tiny_dense.arff", "tiny-train.arff.gz", compress=True)
    shutil.copyfile(DATA / "fmt_tiny.xml", tmp_path / "tiny.xml")
    data = load_file(arff, missing="nan")  # the fixture has a '?'
    expected = load_mulan(DATA / "fmt_tiny_dense.arff", DATA / "fmt_tiny.xml")
    assert data.label_names == expected.label_names
    np.testing.assert_array_equal(data.Y, expected.Y)
    assert data.notes[0] == f"the labels are named by {tmp_path / 'tiny.xml'}, found beside the file"


def test_arff_by_the_xml_given_by_c_or_by_a_count():
    by_xml = load_file(DATA / "fmt_tiny_dense.arff", xml=DATA / "fmt_tiny.xml", missing="nan")
    assert by_xml.label_names == ["Swainson's Thrush", "lab_b", "lab_a"]
    by_c = load_file(DATA / "fmt_tiny_meka.arff")  # -C -2
    by_count = load_file(DATA / "fmt_tiny_meka.arff", labels_last=2)
    assert by_c.label_names == by_count.label_names == ["y1", "y2"]
    sparse = load_file(DATA / "fmt_tiny_sparse.arff", labels_first=2, missing="nan")  # a sparse '?'
    assert sparse.label_names == ["L1", "L2"]


def test_an_arff_file_that_says_nothing_of_its_labels(tmp_path):
    path = tmp_path / "plain.arff"
    path.write_text("@relation plain\n@attribute a numeric\n@attribute y {0,1}\n@data\n1,0\n")
    with pytest.raises(DatasetError, match=r"plain\.arff: the @relation 'plain' has no -C option .* give the "
                                           r"Mulan XML naming the labels \(xml=, --xml\) or labels_first=N"):
        load_file(path)
    with pytest.raises(DatasetError, match=r"labels_last=2, but the file declares 2 attributes; expected 1 to 1"):
        load_file(path, labels_last=2)


# a stale -C (issue 11): load_meka refuses it, load_file warns when the XML decides

STALE = DATA / "fmt_stale_c.arff"


def test_a_stale_c_against_its_xml_is_refused_by_load_meka_and_warned_by_load_file():
    with pytest.raises(DatasetError, match=r"names 3 label\(s\) \('w1', 'len', 'w2'\), but the XML"):
        load_meka(STALE, DATA / "fmt_stale_c.xml")
    with pytest.warns(DatasetWarning, match=r"-C 3 .* names 3 label\(s\).*the XML decides"):
        data = load_file(STALE)  # fmt_stale_c.xml lies beside it
    assert data.label_names == ["y1", "y2"] and data.feature_names == ["w1", "len", "w2"]
    np.testing.assert_array_equal(data.Y, [[1, 0], [0, 1], [0, 0]])
    assert data.cardinality == pytest.approx(2 / 3)


def test_load_file_without_an_xml_refuses_a_stale_c_too(tmp_path):
    copy = tmp_path / "stale.arff.gz"
    copy.write_bytes(gzip.compress(STALE.read_bytes()))
    with pytest.raises(DatasetError, match=r"stale\.arff\.gz: -C 3 .* attribute 'len' must be 0 or 1"):
        load_file(copy)
    data = load_file(copy, labels_last=2)  # the count decides over -C, and the notes say so
    assert data.label_names == ["y1", "y2"]
    assert any("-C 3 was ignored: labels_last=2 decides" in note for note in data.notes)


def test_a_mat_file_with_a_split_gives_all_rows_and_says_so(tmp_path, rng):
    path = tmp_path / "split.mat"
    scipy.io.savemat(path, {"train_data": rng.random((3, 2)), "train_target": [[1, -1, 1]],
                            "test_data": rng.random((2, 2)), "test_target": [[-1, 1]]})
    data = load_file(path)
    assert data.n_samples == 5 and data.split == "all"
    assert "rows 0 to 2 are the training rows" in data.notes[-1]


def test_format_overrides_the_extension(tmp_path):
    path = _copy(tmp_path, "fmt_tiny.svm", "tiny.txt")
    with pytest.raises(DatasetError, match=r"tiny\.txt: cannot tell the format from the extension '\.txt'; "
                                           r"expected one of \.arff, .*pass format="):
        load_file(path)
    assert load_file(path, format="libsvm").n_samples == 3
    with pytest.raises(ValueError, match=r"format must be one of 'arff', 'libsvm', 'mat', 'csv'; got 'svm'"):
        load_file(path, format="svm")


def test_a_compressed_mat_file_is_refused(tmp_path):
    (tmp_path / "x.mat.gz").write_bytes(b"\x1f\x8b")
    with pytest.raises(DatasetError, match=r"a compressed \.mat file cannot be read; gunzip it first"):
        load_file(tmp_path / "x.mat.gz")


@pytest.mark.parametrize(
    "name, options, fragment",
    [
        ("fmt_tiny.csv", {"xml": "x.xml"}, r"xml applies to ARFF files; .*fmt_tiny\.csv is read as csv"),
        ("fmt_tiny.svm", {"labels_last": 2}, r"labels_first/labels_last applies to ARFF and CSV files"),
        ("fmt_tiny_meka.arff", {"label_columns": "y1"}, r"label_columns applies to CSV files"),
        ("fmt_tiny_meka.arff", {"labels_first": 1, "labels_last": 1},
         r"labels_first and labels_last exclude each other"),
        ("fmt_tiny_meka.arff", {"labels_last": 1, "xml": "x.xml"}, r"give the labels one way"),
        ("fmt_tiny.csv", {"labels_last": 0}, r"labels_last must be a positive int, got 0"),
    ],
)
def test_options_that_do_not_apply_or_contradict(name, options, fragment):
    with pytest.raises(ValueError, match=fragment):
        load_file(DATA / name, **options)


def test_a_missing_file_is_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope.arff"):
        load_file(tmp_path / "nope.arff")


@pytest.mark.parametrize(
    "name, xml",
    [
        ("tiny.arff", "tiny.xml"),
        ("tiny-train.arff", "tiny.xml"),
        ("tiny_test.arff.gz", "tiny.xml"),
        ("tiny-sparse.arff", "tiny.xml"),
        ("tiny-train-sparse.arff", "tiny.xml"),  # Mulan's Corel5k-train-sparse.arff
        ("tiny_test_sparse.arff", "tiny.xml"),
        ("tiny-TEST-Sparse.arff", "tiny.xml"),
        ("tiny-train-sparse.arff", "tiny-train.xml"),  # the nearest name wins
        ("tiny-sparse.arff", "tiny-sparse.xml"),
    ],
)
def test_the_xml_beside_a_split_or_sparse_file(name, xml, tmp_path):
    arff = _copy(tmp_path, "fmt_tiny_dense.arff", name, compress=name.endswith(".gz"))
    shutil.copyfile(DATA / "fmt_tiny.xml", tmp_path / xml)
    if xml != "tiny.xml":  # a farther name beside it is not taken
        (tmp_path / "tiny.xml").write_text("<labels/>")
    data = load_file(arff, missing="nan")
    assert data.label_names == load_mulan(DATA / "fmt_tiny_dense.arff", DATA / "fmt_tiny.xml").label_names
    assert data.notes[0] == f"the labels are named by {tmp_path / xml}, found beside the file"


@pytest.mark.parametrize(
    "name",
    [
        "tiny-sparse-train.arff",  # the endings in the other order: not Mulan's
        "tiny-valid.arff",
        "tiny-train-train.arff",
        "tinysparse.arff",
        "tiny-sparse-sparse.arff",
    ],
)
def test_no_other_name_variant_finds_an_xml(name, tmp_path):
    arff = _copy(tmp_path, "fmt_tiny_dense.arff", name)
    shutil.copyfile(DATA / "fmt_tiny.xml", tmp_path / "tiny.xml")
    with pytest.raises(DatasetError, match="has no -C option saying which attributes are labels"):
        load_file(arff, missing="nan")
