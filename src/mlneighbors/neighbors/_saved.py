"""A built index saved with its model, as data: ``mlneighbors.save(model, path, include_index=True)``.

A model drops its index when it is saved (the index is rebuilt from the training rows on
first use).  Inside :func:`including_index` (what ``save(include_index=True)`` opens) a model
saves instead what :func:`export_index` makes of its index: a dict of numbers, strings and
NumPy arrays (the library's own serialisation: faiss's ``write_index`` bytes, hnswlib's
arrays), which skops stores and loads without running code or trusting a new type.  What the
model's training rows already hold is not saved twice: a faiss HNSW index is written without
its float32 copy of the rows, which :func:`restore_index` makes again from them (the graph of
``"faiss-union"``, over 8-bit codes of the rows, is written with its codes: a quarter of the
rows' float32 size, and not the rows).

:func:`restore_index` makes the unbuilt index of the loaded model's own ``backend`` and
``backend_params`` the saved one, on the model's training rows, without building it.  It first
checks a BLAKE2 digest of the saved data (a file damaged on disk or in transit fails here) and
then the library's structure (sizes, offsets, row numbers in range), so that a damaged or
forged index is a ``ValueError`` naming the problem, never a crash inside the library.

Which indexes are saved: the approximate backends with a library index (faiss IVF and HNSW,
hnswlib) and ``"auto"`` when it picked one of them.  The others are rebuilt on first use, as
without ``include_index``: the exact search (its build is a float32 copy of the rows), the
torch and Dask backends (device memory, cluster futures), pynndescent (its index holds numba
functions), a label-restricted search (BKNN) and an index object of the user's.
"""

from __future__ import annotations

import hashlib
import numbers
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import numpy as np

from ._capabilities import get_capabilities

__all__ = ["export_index", "including_index", "pack_rows", "restore_index", "unpack_rows"]

#: version of the saved layout written (a newer layout is refused with a clear error).  2: a
#: faiss HNSW index is saved without its float32 copy of the rows (rebuilt from the model's
#: training rows at load); 1: with it
FORMAT = 2
#: the layouts read
READ_FORMATS = (1, 2)

_including: ContextVar[bool] = ContextVar("mlneighbors_include_index", default=False)


@contextmanager
def including_index(include: bool = True) -> Iterator[None]:
    """Models saved inside this block save their built index too (see :func:`export_index`)."""
    token = _including.set(bool(include))
    try:
        yield
    finally:
        _including.reset(token)


def is_including() -> bool:
    """Whether a model being saved now should save its index."""
    return _including.get()


def _digest(value: Any, h: Any) -> None:
    """Feed a saved value (nested dicts of numbers, strings, None and arrays) to a hash."""
    if isinstance(value, dict):
        h.update(b"{")
        for key in sorted(value):
            h.update(repr(key).encode())
            _digest(value[key], h)
        h.update(b"}")
    elif isinstance(value, bytes):
        h.update(f"bytes{len(value)}".encode())
        h.update(value)
    elif isinstance(value, np.ndarray):
        a = np.ascontiguousarray(value)
        h.update(f"array{a.dtype.str}{a.shape}".encode())
        h.update(a.view(np.uint8).reshape(-1) if a.size else b"")
    elif value is None or isinstance(value, (bool, numbers.Number, str)):
        h.update(f"{type(value).__name__}:{value!r};".encode())
    else:
        raise TypeError(f"a saved index holds only numbers, strings, bytes and arrays, not {type(value).__name__}")


def digest(value: Any) -> str:
    """The BLAKE2b digest (hex) of a saved index's data."""
    h = hashlib.blake2b(digest_size=20)
    _digest(value, h)
    return h.hexdigest()


def pack_rows(X: Any) -> Any:
    """A model's dense training rows saved beside its index: as raw bytes, which a skops file
    gives back without a copy (its arrays are read in small pieces and copied twice: at 10^6
    rows that was a third of loading).  Sparse rows are returned as they are.

    >>> import numpy as np
    >>> packed = pack_rows(np.eye(2))
    >>> sorted(packed), unpack_rows(packed).tolist()
    (['rows_bytes', 'rows_dtype', 'rows_shape'], [[1.0, 0.0], [0.0, 1.0]])
    """
    if not isinstance(X, np.ndarray) or X.dtype.kind != "f" or X.ndim != 2:
        return X
    return {"rows_dtype": X.dtype.str, "rows_shape": [int(s) for s in X.shape],
            "rows_bytes": np.ascontiguousarray(X).tobytes()}


def unpack_rows(saved: Any) -> Any:
    """The training rows from :func:`pack_rows`: a read-only array over the file's bytes."""
    if not isinstance(saved, dict):
        return saved
    what = "the saved training rows of this model are damaged"
    dtype, shape, data = saved.get("rows_dtype"), saved.get("rows_shape"), saved.get("rows_bytes")
    if not (isinstance(dtype, str) and dtype in ("<f4", "<f8", ">f4", ">f8") and isinstance(data, bytes)
            and isinstance(shape, list) and len(shape) == 2
            and all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in shape)):
        raise ValueError(f"{what}: their type, shape or bytes are missing")
    if shape[0] * shape[1] * np.dtype(dtype).itemsize != len(data):
        raise ValueError(f"{what}: {len(data)} bytes do not hold {shape[0]} x {shape[1]} {np.dtype(dtype).name}")
    return np.frombuffer(data, dtype=dtype).reshape(shape)


def export_index(index: Any) -> dict[str, Any] | None:
    """A built index as data, or None when this kind of index is not saved (rebuilt on load).

    Parameters
    ----------
    index : built index

    Returns
    -------
    saved : dict or None
        ``{"format", "backend", "state", "digest"}``: numbers, strings and arrays only.

    Examples
    --------
    >>> import numpy as np
    >>> from mlneighbors.neighbors import get_index
    >>> from mlneighbors.neighbors._saved import export_index
    >>> export_index(get_index("exact").build(np.eye(3))) is None  # rebuilt on load
    True
    """
    if not get_capabilities(index).saved_state:
        return None
    state = index.saved_state()
    if state is None:
        return None
    saved = {"format": FORMAT, "backend": str(index.name), "state": state}
    saved["digest"] = digest(saved)
    return saved


def restore_index(index: Any, saved: Any, X: Any) -> Any:
    """Make the unbuilt ``index`` the saved one, on its indexed rows ``X`` (nothing is built).

    Parameters
    ----------
    index : unbuilt index
        Of the backend and parameters the index was saved with (a model's ``_make_index()``).
    saved : dict
        What :func:`export_index` returned, as loaded.
    X : array-like or CSR
        The rows the index was built on (a model's training rows).

    Returns
    -------
    index : the built index

    Raises
    ------
    ValueError
        The saved data are damaged (digest, structure), of another layout, or of another backend.
    """
    what = f"the saved neighbour index of this model ({getattr(index, 'name', type(index).__name__)})"
    if not isinstance(saved, dict) or not {"format", "backend", "state", "digest"} <= set(saved):
        raise ValueError(f"{what} is damaged: its fields are missing; refit the model, or save it without "
                         "include_index")
    if saved["format"] not in READ_FORMATS or isinstance(saved["format"], bool):
        raise ValueError(f"{what} has layout {saved['format']!r}, which this mlneighbors does not read "
                         f"(it reads {' and '.join(map(str, READ_FORMATS))}); refit the model")
    body = {key: value for key, value in saved.items() if key != "digest"}
    try:
        ok = digest(body) == saved["digest"]
    except TypeError:
        ok = False
    if not ok:
        raise ValueError(f"{what} is damaged (its checksum does not match its data); refit the model, or "
                         "save it without include_index")
    if saved["backend"] != getattr(index, "name", None) or not get_capabilities(index).saved_state:
        raise ValueError(f"{what} was saved from backend {saved['backend']!r}, but the model's backend is "
                         f"{getattr(index, 'name', index)!r}")
    try:
        index.restore_state(saved["state"], X)
    except (KeyError, TypeError, AttributeError) as exc:
        raise ValueError(f"{what} is damaged: {type(exc).__name__}: {exc}") from None
    return index
