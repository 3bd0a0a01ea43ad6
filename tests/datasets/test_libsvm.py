"""Tests of the libsvm multi-label reader, and of its errors naming the line."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest

from mlneighbors.datasets import DatasetError, load_libsvm

from .files import write_svm

DATA = Path(__file__).resolve().parents[1] / "data"


def _csr_ok(matrix) -> bool:
    return matrix.format == "csr" and matrix.has_sorted_indices and not (matrix.data == 0).any()


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


def test_gzip_and_comments(tmp_path):
    path = tmp_path / "tiny.svm.gz"
    path.write_bytes(gzip.compress(b"# a comment line\n" + (DATA / "fmt_tiny.svm").read_bytes()))
    data = load_libsvm(path)
    np.testing.assert_array_equal(data.Y, [[1, 0, 1], [0, 0, 0], [0, 1, 0]])


# ---------------------------------------------------------------------------
# the index base: told from the file (scikit-learn's zero_based="auto"), or given


@pytest.mark.parametrize("base", [0, 1])
@pytest.mark.parametrize("uses_first", [True, False])
def test_the_base_is_told_from_the_file_and_recorded(base, uses_first, tmp_path):
    X = np.array([[1.5, 0, 2], [0, 3, 0]]) if uses_first else np.array([[0, 1.5, 2], [0, 3, 0]])
    data = load_libsvm(write_svm(tmp_path / "x.svm", X, base=base))
    # without index 0 a file is read as 1-based: a 0-based file that never uses feature 0 reads shifted
    told = 0 if base == 0 and uses_first else 1
    assert data.index_base == told
    want = X if told == base else X[:, 1:]
    np.testing.assert_array_equal(data.X.toarray(), want)


@pytest.mark.parametrize("base", [0, 1])
@pytest.mark.parametrize("uses_first", [True, False])
def test_a_given_base_reads_every_file_of_that_base_as_written(base, uses_first, tmp_path):
    X = np.array([[1.5, 0, 2], [0, 3, 0]]) if uses_first else np.array([[0, 1.5, 2], [0, 3, 0]])
    data = load_libsvm(write_svm(tmp_path / "x.svm", X, base=base), index_base=base, n_features=3)
    assert data.index_base == base
    np.testing.assert_array_equal(data.X.toarray(), X)


def test_index_0_in_a_file_read_as_1_based_names_the_line(tmp_path):
    path = tmp_path / "x.svm"
    path.write_text("# rows\n1 1:0.5 2:1\n\n0,1 3:2 4:1\n0 00:1 5:2\n")
    with pytest.raises(DatasetError, match=r"x\.svm, line 5: feature index 0, but index_base=1 numbers the "
                                           r"features from 1"):
        load_libsvm(path, index_base=1)
    assert load_libsvm(path).index_base == 0


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        ({"index_base": 2}, ValueError, r"index_base must be 0, 1 or None, got 2"),
        ({"index_base": 1, "n_features": 3}, DatasetError,
         r"holds feature index 4, but n_features=3 \(indices from 1\)"),
        ({"index_base": 0, "n_features": 4}, DatasetError,
         r"holds feature index 4, but n_features=4 \(indices from 0\)"),
    ],
)
def test_bad_bases_and_widths_are_named(kwargs, error, message, tmp_path):
    path = tmp_path / "x.svm"
    path.write_text("1 1:0.5 4:1\n")
    with pytest.raises(error, match=message):
        load_libsvm(path, **kwargs)
