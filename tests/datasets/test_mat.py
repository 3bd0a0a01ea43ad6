"""Tests of the MATLAB .mat reader: the three layouts, and damaged files wrapped in DatasetError."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

from mlneighbors.datasets import DatasetError, load_mat


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


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("features_only", [False, True])
def test_complex_features_are_refused_not_cast(sparse, features_only, tmp_path):
    """A cast to float64 would drop the imaginary part without a word."""
    from mlneighbors.datasets import load_file

    data = np.array([[1 + 2j, 0], [0, 3 - 1j]])
    path = tmp_path / "c.mat"
    arrays = {"data": sp.csc_matrix(data) if sparse else data}
    if not features_only:
        arrays["target"] = np.array([[1, 0]])
    scipy.io.savemat(path, arrays)
    with pytest.raises(DatasetError, match=r"c\.mat: data.*: expected a matrix of real numbers, found complex numbers"):
        load_file(path, features_only=features_only)


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


def _saved(tmp_path, rng):
    path = tmp_path / "good.mat"
    scipy.io.savemat(path, {"data": rng.random((5, 3)), "target": np.ones((2, 5))})
    return path.read_bytes()


def test_an_empty_mat_file_says_so(tmp_path):
    path = tmp_path / "empty.mat"
    path.write_bytes(b"")
    with pytest.raises(DatasetError, match=r"empty\.mat: the file is empty; expected a MATLAB \.mat file"):
        load_mat(path)


@pytest.mark.parametrize("keep", [10, 100, 128, 150, 200, -10])
def test_a_truncated_mat_file_is_a_dataset_error_naming_it(tmp_path, rng, keep):
    # scipy raises MatReadError, IndexError or OSError("could not read bytes") by where the cut is
    raw = _saved(tmp_path, rng)
    path = tmp_path / "cut.mat"
    path.write_bytes(raw[:keep])
    with pytest.raises(DatasetError, match=r"cut\.mat: (not a readable MATLAB \.mat file; truncated or "
                                           r"damaged\?|the \.mat file holds no variables)"):
        load_mat(path)


def test_a_file_that_is_not_mat_is_a_dataset_error(tmp_path):
    path = tmp_path / "text.mat"
    path.write_bytes(b"this is not a MATLAB file at all " * 8)
    with pytest.raises(DatasetError, match=r"text\.mat: not a readable MATLAB \.mat file"):
        load_mat(path)


def test_a_missing_mat_file_is_file_not_found_and_no_suffix_is_guessed(tmp_path, rng):
    (tmp_path / "data.mat").write_bytes(_saved(tmp_path, rng))
    with pytest.raises(FileNotFoundError, match="data'"):  # scipy would have appended .mat
        load_mat(tmp_path / "data")
