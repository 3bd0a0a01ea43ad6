"""Tests of the libsvm multi-label reader, and of its errors naming the line."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest

from mlneighbors.datasets import DatasetError, load_libsvm

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
