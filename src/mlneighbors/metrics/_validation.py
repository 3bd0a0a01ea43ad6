"""Input validation shared by every metric, and the size of the blocks of the blocked kernels.

Binary indicator matrices (``_check_binary``), dense and sparse score matrices, the ``k`` of
the metrics at k and the parameters of the propensity model; every error is a ``ValueError``
(``TypeError`` for a wrong type) naming the argument, what was expected and what came.
"""

from __future__ import annotations

import numbers
from typing import Union

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

from .._config import working_memory_bytes

#: A dense array-like or a scipy sparse matrix / array.
MatrixLike = Union[ArrayLike, "sp.spmatrix", "sp.sparray"]


# Bytes of temporaries per entry of a block of the blocked kernels: the ranking metrics hold
# about 30 int64/float64 arrays of the block's shape (ranks, sorted scores, masks, cumulative
# counts, ...) at once; 1,048,576 entries a block at the default 256 MiB.
_ENTRY_BYTES = 256


def _block_elements() -> int:
    return max(1, working_memory_bytes() // _ENTRY_BYTES)


_BoolMatrix = Union[NDArray[np.bool_], "sp.csr_matrix"]

_F64 = NDArray[np.float64]


def _shape_2d(X: object, name: str) -> tuple[int, int]:
    ndim = getattr(X, "ndim", None)
    shape = getattr(X, "shape", None)
    if ndim != 2:
        raise ValueError(
            f"{name} must be a 2-D (n_samples, n_labels) array; got a {ndim}-D input "
            f"of shape {shape}"
        )
    n, L = (int(s) for s in X.shape)  # type: ignore[attr-defined]
    if n == 0 or L == 0:
        raise ValueError(
            f"{name} must have at least one sample and one label; got shape {(n, L)}"
        )
    return n, L


def _non_binary_error(name: str, bad: np.ndarray) -> ValueError:
    values = np.unique(bad)
    shown = ", ".join(repr(v.item()) for v in values[:5])
    more = f" and {values.size - 5} other value(s)" if values.size > 5 else ""
    return ValueError(
        f"{name} must be a binary indicator matrix holding only 0 and 1 "
        f"(or False/True); found the value(s) {shown}{more}"
    )


def _check_binary(Y: MatrixLike, name: str) -> _BoolMatrix:
    """Validate a binary indicator matrix; return a bool ndarray or a bool CSR matrix."""
    if sp.issparse(Y):
        _shape_2d(Y, name)
        Yc = sp.csr_matrix(Y, copy=True)
        Yc.sum_duplicates()
        data = Yc.data
        if data.dtype != np.bool_:
            if not (np.issubdtype(data.dtype, np.number)):
                raise ValueError(f"{name} must be numeric or boolean; got dtype {data.dtype}")
            ok = (data == 0) | (data == 1)
            if not ok.all():
                raise _non_binary_error(name, data[~ok])
        Yc.eliminate_zeros()
        Yc = Yc.astype(np.bool_)
        return Yc

    A = np.asarray(Y)
    n, L = _shape_2d(A, name)
    if A.dtype == np.bool_:
        return np.ascontiguousarray(A)
    if not np.issubdtype(A.dtype, np.number) or np.issubdtype(A.dtype, np.complexfloating):
        raise ValueError(f"{name} must be numeric or boolean; got dtype {A.dtype}")
    out = np.empty((n, L), dtype=np.bool_)
    step = max(1, _block_elements() // L)
    for a in range(0, n, step):
        blk = A[a : a + step]
        is_one = blk == 1
        ok = is_one | (blk == 0)
        if not ok.all():
            raise _non_binary_error(name, blk[~ok])
        out[a : a + step] = is_one
    return out


def _check_scores(S: MatrixLike, name: str = "scores") -> NDArray[np.floating]:
    """Validate a real score matrix; return a C-contiguous float ndarray (float32 kept)."""
    if sp.issparse(S):
        _shape_2d(S, name)
        A = S.toarray()  # type: ignore[union-attr]
    else:
        A = np.asarray(S)
    n, L = _shape_2d(A, name)
    if A.dtype == np.bool_ or (
        np.issubdtype(A.dtype, np.number) and not np.issubdtype(A.dtype, np.complexfloating)
    ):
        if not np.issubdtype(A.dtype, np.floating):
            # ints (unsigned ones too) would overflow when negated for the sort
            A = A.astype(np.float64)
    else:
        raise ValueError(f"{name} must be a real-valued matrix; got dtype {A.dtype}")
    A = np.ascontiguousarray(A)
    step = max(1, _block_elements() // L)
    for a in range(0, n, step):
        blk = A[a : a + step]
        finite = np.isfinite(blk)
        if not finite.all():
            raise _non_finite_error(name, blk[~finite], a, a + blk.shape[0] - 1)
    return A


def _non_finite_error(name: str, bad: np.ndarray, first_row: int, last_row: int) -> ValueError:
    kinds = sorted({"NaN" if np.isnan(v) else ("inf" if v > 0 else "-inf") for v in bad[:1000]})
    return ValueError(
        f"{name} must be finite; found {', '.join(kinds)} "
        f"({int(bad.size)} non-finite value(s) in rows {first_row}..{last_row})"
    )


def _check_same_shape(shape_true: tuple[int, ...], other: tuple[int, ...], other_name: str) -> None:
    if tuple(shape_true) != tuple(other):
        raise ValueError(
            f"Y_true and {other_name} must have the same shape; "
            f"got Y_true {tuple(shape_true)} and {other_name} {tuple(other)}"
        )


def _dense(Y: _BoolMatrix) -> NDArray[np.bool_]:
    return Y.toarray() if sp.issparse(Y) else Y  # type: ignore[union-attr,return-value]


def _check_k(k: object) -> int:
    if isinstance(k, (bool, np.bool_)) or not isinstance(k, numbers.Integral):
        raise TypeError(f"k must be an integer; got {k!r} of type {type(k).__name__}")
    if k < 1:
        raise ValueError(f"k must be at least 1; got k={k}")
    return int(k)


def _check_positive(value: object, name: str) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number; got {value!r} of type {type(value).__name__}")
    if not (np.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be positive and finite; got {name}={value!r}")
    return float(value)


def _check_sparse_scores(S: MatrixLike, name: str) -> sp.csr_matrix:
    """Validate sparse scores; return a float CSR copy, canonical and without stored zeros."""
    _shape_2d(S, name)
    C = sp.csr_matrix(S, copy=True)
    dt = C.dtype
    if not (dt == np.bool_ or (np.issubdtype(dt, np.number) and not np.issubdtype(dt, np.complexfloating))):
        raise ValueError(f"{name} must be a real-valued matrix; got dtype {dt}")
    if not np.issubdtype(dt, np.floating):
        C = C.astype(np.float64)
    C.sum_duplicates()
    finite = np.isfinite(C.data)
    if not finite.all():
        rows = np.repeat(np.arange(C.shape[0]), np.diff(C.indptr))[~finite]
        raise _non_finite_error(name, C.data[~finite], int(rows[0]), int(rows[-1]))
    # a stored zero is a missing entry: both rank as score 0 by the tie rule
    C.eliminate_zeros()
    return C
