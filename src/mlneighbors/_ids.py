"""Training-row identifiers: what ``fit(..., ids=)``, ``partial_fit`` and ``forget`` accept.

A fitted model knows each of its training rows by an identifier (``training_ids_``): given at
``fit`` (unique integers or unique strings) or ``0 .. n-1`` by default.  They are kept as a
plain numpy array (int64, or a unicode string array: both save with pickle and skops as data)
and follow the rows through ``partial_fit`` (appended) and ``forget`` (removed).
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["check_ids", "default_ids", "positions_of"]


def default_ids(start: int, n: int) -> np.ndarray:
    """``start .. start + n - 1`` as int64: the identifiers of rows given without any."""
    return np.arange(start, start + n, dtype=np.int64)


def _as_id_array(ids: Any, name: str) -> np.ndarray:
    values = getattr(ids, "to_numpy", None)
    arr = np.asarray(values() if callable(values) else ids)
    if arr.ndim == 0:
        arr = arr.reshape(1)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array of integers or strings, got an array of shape {arr.shape}")
    if arr.dtype.kind == "b":
        raise ValueError(f"{name} must be integers or strings, got booleans")
    if arr.dtype.kind in "iu":
        return arr.astype(np.int64)
    if arr.dtype.kind == "f":
        if arr.size and not (np.isfinite(arr).all() and (arr == np.round(arr)).all()):
            bad = arr[~(np.isfinite(arr) & (arr == np.round(arr)))][0]
            raise ValueError(f"{name} must be integers or strings, got the value {bad!r}")
        return arr.astype(np.int64)
    if arr.dtype.kind == "U":
        return arr
    if arr.dtype.kind in "OS":
        items = arr.tolist()
        if all(isinstance(v, str) for v in items):
            return np.array(items, dtype=str) if items else np.array([], dtype="<U1")
        if all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in items):
            return np.array(items, dtype=np.int64)
        bad = next(v for v in items if not isinstance(v, str))
        raise ValueError(f"{name} must be all integers or all strings, got {bad!r} ({type(bad).__name__})")
    raise ValueError(f"{name} must be integers or strings, got dtype {arr.dtype}")


def _first_repeat(arr: np.ndarray) -> Any:
    order = np.argsort(arr, kind="stable")
    s = arr[order]
    same = np.flatnonzero(s[1:] == s[:-1])
    return None if same.size == 0 else s[same[0]]


def check_ids(ids: Any, n: int, *, name: str = "ids", kind: str | None = None) -> np.ndarray:
    """``ids`` validated as ``n`` unique identifiers (int64 or unicode), their kind matching
    ``kind`` (``"int"`` or ``"str"``: the model's identifiers) when given.

    >>> check_ids(["a", "b"], 2)
    array(['a', 'b'], dtype='<U1')
    >>> check_ids([3, 3], 2)
    Traceback (most recent call last):
    ...
    ValueError: ids must be unique: 3 appears more than once
    """
    arr = _as_id_array(ids, name)
    if len(arr) != n:
        raise ValueError(f"{name} has {len(arr)} identifiers for {n} rows")
    repeat = _first_repeat(arr)
    if repeat is not None:
        raise ValueError(f"{name} must be unique: {repeat.item()!r} appears more than once")
    if kind is not None and id_kind(arr) != kind and len(arr):
        have = "integers" if kind == "int" else "strings"
        raise ValueError(f"{name} must be {have}, as the model's training_ids_ are; got {arr[0].item()!r}")
    return arr


def id_kind(arr: np.ndarray) -> str:
    """``"str"`` for string identifiers, else ``"int"``."""
    return "str" if arr.dtype.kind == "U" else "int"


def positions_of(training_ids: np.ndarray, ids: Any, *, name: str = "ids") -> np.ndarray:
    """The row positions of ``ids`` among ``training_ids``; an unknown or repeated identifier
    is a ValueError naming it.

    >>> positions_of(np.array([10, 20, 30]), [30, 10])
    array([2, 0])
    """
    arr = _as_id_array(ids, name)
    repeat = _first_repeat(arr)
    if repeat is not None:
        raise ValueError(f"{name}: {repeat.item()!r} is given more than once")
    if len(arr) and len(training_ids) and id_kind(arr) != id_kind(training_ids):
        raise ValueError(f"{name}: {arr[0].item()!r} is not a training identifier (the model's are "
                         f"{'strings' if id_kind(training_ids) == 'str' else 'integers'})")
    order = np.argsort(training_ids, kind="stable")
    where = np.searchsorted(training_ids[order], arr)
    where = np.minimum(where, max(0, len(order) - 1))
    found = (training_ids[order][where] == arr) if len(order) else np.zeros(len(arr), dtype=bool)
    if not found.all():
        missing = arr[~found]
        more = f" and {len(missing) - 1} more" if len(missing) > 1 else ""
        raise ValueError(f"{name}: {missing[0].item()!r}{more} is not among the model's training_ids_")
    return order[where].astype(np.intp)
