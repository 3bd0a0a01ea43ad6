"""MATLAB ``.mat`` files in the three multi-label layouts in use."""

from __future__ import annotations

import os

import numpy as np
import scipy.sparse as sp

from mlneighbors.datasets._dataset import Dataset, DatasetError

__all__ = ["load_mat", "load_mat_features"]

PathLike = str | os.PathLike[str]


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
        An empty, truncated or damaged file (whatever scipy raised is wrapped,
        with the file's name), a MATLAB v7.3 (HDF5) file, an unknown layout,
        shapes that do not agree, or targets other than -1/+1 or 0/1.
    FileNotFoundError
        ``path`` names no file (the name is used as given: no ``.mat`` is
        appended).

    Examples
    --------
    >>> import tempfile, pathlib, numpy as np, scipy.io
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "tiny.mat"
    >>> scipy.io.savemat(path, {"data": np.eye(3), "target": [[1, -1, 1]]})
    >>> data = load_mat(path)["all"]
    >>> data.X.shape, data.Y.ravel().tolist()
    ((3, 3), [1, 0, 1])
    """
    contents = _read_mat(path)
    keys = {key for key in contents if not key.startswith("__")}
    if not keys:
        raise DatasetError(f"{path}: the .mat file holds no variables (truncated or empty?)")
    if {"data", "target"} <= keys:
        X, Y, notes = _mat_pair(contents["data"], contents["target"], False, path, "data/target")
        return {"all": _mat_dataset(X, Y, notes, "all", str(path))}
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
        "train": _mat_dataset(X_train, Y_train, notes_train, "train", str(path)),
        "test": _mat_dataset(X_test, Y_test, notes_test, "test", str(path)),
        "all": _mat_dataset(X_all, np.vstack([Y_train, Y_test]), notes, "all", str(path)),
    }


def load_mat_features(path: PathLike) -> Dataset:
    """The rows of a ``.mat`` file with no targets: ``data`` (layout A without ``target``),
    else the file's only numeric matrix, n x d. A file with targets gives its rows
    (all of them, as ``load_file`` does) and Y is dropped, ``notes`` saying so."""
    contents = _read_mat(path)
    keys = sorted(key for key in contents if not key.startswith("__"))
    if any("target" in key for key in keys) or {"train", "test"} <= set(keys):
        data = load_mat(path)["all"]
        note = f"the file's {data.n_labels} target(s) are not read: rows to predict"
        return _mat_dataset(data.X, data.Y[:, :0], data.notes + [note], "all", str(path))
    matrices = [key for key in keys if _is_matrix(contents[key])]
    if "data" in keys:
        name = "data"
    elif len(matrices) == 1:
        name = matrices[0]
    else:
        raise DatasetError(
            f"{path}: expected a matrix 'data' (n x d), or a single numeric matrix, of rows to "
            f"predict; the file holds {keys or 'no variables'}"
        )
    X = _mat_matrix(contents[name], path, name)
    X = sp.csr_matrix(X, dtype=np.float64) if sp.issparse(X) else np.ascontiguousarray(X, dtype=np.float64)
    notes = [] if name == "data" else [f"the rows are the matrix {name!r}"]
    return _mat_dataset(X, np.zeros((X.shape[0], 0), dtype=np.int8), notes, "all", str(path))


def _is_real(dtype: np.dtype) -> bool:
    """Numbers a feature can be: not text, not objects, and not complex (whose imaginary part
    a cast to float64 drops without a word)."""
    return dtype.kind == "b" or (np.issubdtype(dtype, np.number) and not np.issubdtype(dtype, np.complexfloating))


def _is_matrix(value: object) -> bool:
    if sp.issparse(value):
        return not np.issubdtype(value.dtype, np.complexfloating)  # type: ignore[attr-defined]
    return isinstance(value, np.ndarray) and value.ndim == 2 and value.dtype != object and _is_real(value.dtype)


def _read_mat(path: PathLike) -> dict[str, object]:
    """The variables of a .mat file; any failure of scipy's reader becomes a DatasetError."""
    from scipy.io import loadmat

    with open(path, "rb") as fh:  # a missing file: FileNotFoundError naming it
        if os.fstat(fh.fileno()).st_size == 0:
            raise DatasetError(f"{path}: the file is empty; expected a MATLAB .mat file")
        try:
            return loadmat(fh)
        except NotImplementedError as exc:
            raise DatasetError(
                f"{path}: MATLAB v7.3 (HDF5) files are not supported ({exc}); save it with "
                "MATLAB's -v7 option"
            ) from None
        except MemoryError:
            raise
        except Exception as exc:
            # scipy fails in many ways on a damaged file (MatReadError, IndexError,
            # OSError, ValueError, ...), none of them naming it
            raise DatasetError(
                f"{path}: not a readable MATLAB .mat file; truncated or damaged? "
                f"({type(exc).__name__}: {exc})"
            ) from exc


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
    array = value if sp.issparse(value) else np.asarray(value)
    if not sp.issparse(array) and (array.ndim != 2 or array.dtype == object):
        raise DatasetError(
            f"{path}: {name}: expected a numeric matrix, found {array.dtype} {array.shape}"
        )
    if not _is_real(array.dtype):
        what = "complex numbers" if np.issubdtype(array.dtype, np.complexfloating) else str(array.dtype)
        raise DatasetError(
            f"{path}: {name}: expected a matrix of real numbers, found {what} {array.shape}"
        )
    return array


def _mat_dataset(
    X: np.ndarray | sp.csr_matrix, Y: np.ndarray, notes: list[str], split: str, source: str
) -> Dataset:
    return Dataset(
        X=X,
        Y=Y,
        feature_names=[f"f{j}" for j in range(X.shape[1])],
        label_names=[f"label{j}" for j in range(Y.shape[1])],
        split=split,
        notes=list(notes),
        source=source,
        named=False,
    )
