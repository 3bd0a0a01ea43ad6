"""Estimators on dask arrays: the one place where a dask array is told apart from rows in memory.

Two entry points, one for each side of an estimator:

- :func:`training_data`, which every ``fit`` calls: rows in memory are validated with the target
  (``mlneighbors._targets``) and checked for their scale; a dask array ``X`` with
  ``backend="dask"`` is checked without computing it and kept lazy
  (:func:`validate_dask_training_data`): the shards are built from its chunks on the workers and
  the leave-one-out neighbours read their queries from the shards, so the rows never reach the
  client.  Only the labels and the (n, k) neighbour lists do.
- :func:`lazy_on_dask`, which decorates ``predict`` / ``predict_proba`` / ``decision_function``:
  for a dask array of queries the output is a lazy dask array with chunks ``(query row chunks,
  output columns)`` (:func:`dask_method`).  The fitted model enters the graph once (one key,
  which every block depends on; Dask sends it to each worker once), and each block runs the
  model's own method on a worker.  With ``backend="dask"`` the model travels with a handle on its
  shards (its index), not with its training rows, and every block's neighbour search is itself
  spread over the shards.

Besides, a Dask client in ``backend_params`` is a live connection: :func:`without_clients` and
:func:`share_clients` keep it out of a saved or shipped model and share it with a clone.

Nothing here imports dask until a dask array is met.
"""

from __future__ import annotations

import functools
import sys
import uuid
from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.utils.validation import check_is_fitted

from ._targets import validate_training_data
from .neighbors import get_capabilities
from .neighbors._internal import check_dask_matrix, is_dask_array

__all__ = [
    "dask_method",
    "is_dask_array",
    "lazy_on_dask",
    "share_clients",
    "training_data",
    "validate_dask_training_data",
    "without_clients",
]


def _is_client(value: Any) -> bool:
    distributed = sys.modules.get("distributed")  # no client exists unless distributed was imported
    return distributed is not None and isinstance(value, distributed.Client)


def without_clients(params: dict | None) -> dict | None:
    """``backend_params`` with every ``distributed.Client`` replaced by None (the current
    client): what a saved, pickled or shipped model keeps.  A client is a live connection,
    never serialised; ``params`` itself is left as it is (as is a value that is not a dict,
    for ``fit``'s parameter check to refuse)."""
    if not isinstance(params, dict) or not any(_is_client(v) for v in params.values()):
        return params
    return {key: None if _is_client(value) else value for key, value in params.items()}


def share_clients(original: dict | None, copied: dict | None) -> dict | None:
    """``copied`` (a copy of ``original`` made by :func:`without_clients`) with the clients of
    ``original`` put back: a clone shares its client, as it cannot be deep-copied."""
    if not isinstance(original, dict) or not isinstance(copied, dict):
        return copied
    return {key: original[key] if _is_client(original.get(key)) else value for key, value in copied.items()}


def _uses_dask(estimator: Any) -> bool:
    make_index = getattr(estimator, "_make_index", None)
    return callable(make_index) and get_capabilities(make_index()).dask_arrays


class _Shipped:
    """A fitted model as the workers get it.

    A model pickles without its index (it is rebuilt from ``_fit_X``).  With a
    ``DaskIndex`` the index is only a handle on shards that stay on the workers, so the model
    travels with it instead of with its training rows: ``_fit_X`` is replaced by a stand-in
    of its shape holding no data (a broadcast NaN, so any read of it would show), which is
    all that the prediction path asks of it (``check_is_fitted``).
    """

    def __init__(self, model: Any) -> None:
        self.model = model
        self._state = {"model": model, "index": None, "shape": None}
        if _uses_dask(model):
            index = model._get_index()
            state = dict(model.__getstate__())
            state.pop("_mlneighbors_version", None)  # the version stamp of a saved file, not an attribute
            shape = state.pop("_fit_X").shape
            light = object.__new__(type(model))
            light.__dict__.update(state)
            self._state = {"model": light, "index": index, "shape": shape}

    def __getstate__(self) -> dict:
        return self._state  # the same on a worker that passes the model on

    def __setstate__(self, state: dict) -> None:
        self._state = state
        self.model = state["model"]
        if state["index"] is not None:  # on a copy: the state stays light for the next worker
            self.model = object.__new__(type(state["model"]))
            self.model.__dict__.update(state["model"].__dict__, _index=state["index"],
                                       _fit_X=np.broadcast_to(np.float64(np.nan), state["shape"]))


def _apply(block: Any, shipped: _Shipped, method: str) -> np.ndarray:
    return getattr(shipped.model, method)(block)


def dask_method(model: Any, method: str, X: Any) -> Any:
    """``model.<method>(X)`` for a dask array ``X``, as a lazy dask array.

    Parameters
    ----------
    model : fitted estimator of this package
    method : {"predict", "predict_proba", "decision_function"}
    X : dask.array.Array of shape (n_queries, n_features)
        Dense, or with CSR chunks.

    Returns
    -------
    out : dask.array.Array
        Chunks ``(X.chunks[0], (n_outputs,))`` (``(X.chunks[0],)`` for a 1-D output); the
        dtype and output width are those of the method on one row.
    """
    import dask

    check_is_fitted(model, "_fit_X")
    X = check_dask_matrix(X, name="X", n_features=model.n_features_in_)
    if len(X.chunks[1]) > 1:
        X = X.rechunk({1: -1})  # the model needs whole rows
    probe = np.asarray(getattr(model, method)(np.zeros((1, X.shape[1]))))  # output dtype and width
    shipped = dask.delayed(_Shipped(model), name=f"mlneighbors-model-{uuid.uuid4().hex}", traverse=False)
    chunks = (X.chunks[0],) + tuple((n,) for n in probe.shape[1:])
    return X.map_blocks(
        _apply, shipped, method, chunks=chunks, dtype=probe.dtype, meta=probe[:0],
        drop_axis=[1] if probe.ndim == 1 else [],
    )


def lazy_on_dask(method: Callable) -> Callable:
    """Decorate an estimator's output method (``predict``, ``predict_proba``,
    ``decision_function``): for a dask array ``X`` it returns :func:`dask_method`'s lazy
    array; any other ``X`` goes to the method unchanged.  Options of the method (such as
    ``sparse_output=True``) are for in-memory queries and are refused with a dask array."""

    @functools.wraps(method)
    def wrapper(self: Any, X: Any, *args: Any, **kwargs: Any) -> Any:
        if not is_dask_array(X):
            return method(self, X, *args, **kwargs)
        if args or any(kwargs.values()):
            options = ", ".join([repr(a) for a in args] + [f"{k}={v!r}" for k, v in kwargs.items()])
            raise ValueError(
                f"{method.__name__}(X, {options}) takes in-memory queries (an array or a CSR matrix); "
                f"for a dask array X, {method.__name__}(X) is a lazy dask array computed block by block"
            )
        return dask_method(self, method.__name__, X)

    return wrapper


def training_data(estimator: Any, X: Any, y: Any) -> tuple[Any, np.ndarray, np.ndarray | None, np.dtype | None]:
    """The training rows and target of ``fit``, validated: ``(X, Y, classes, y_dtype)``.

    Rows in memory (an array, a sparse matrix, a DataFrame...) go to
    :func:`~mlneighbors._targets.validate_training_data` with the target, then to
    :func:`~mlneighbors.neighbors.check_scale` (values whose squares overflow or underflow, for
    every model's search); a dask array to :func:`validate_dask_training_data`, lazily.
    """
    if is_dask_array(X):
        return validate_dask_training_data(estimator, X, y)
    return validate_training_data(estimator, X, y, scale=True)


def validate_dask_training_data(
    estimator: Any, X: Any, y: Any
) -> tuple[Any, np.ndarray, np.ndarray | None, np.dtype | None]:
    """:func:`~mlneighbors._targets.validate_training_data` for a dask array ``X``, which stays lazy.

    The target is validated as usual against a stand-in of ``X``'s shape that holds no values;
    ``X`` itself is checked for its shape and dtype here and for its values (and their scale) on
    the workers, when the shards are built.  Only an estimator fitted with ``backend="dask"``
    takes a dask array.
    """
    if not callable(getattr(estimator, "_make_index", None)):
        raise ValueError(
            f"{type(estimator).__name__} takes rows in memory (an array or a sparse matrix), not a dask "
            "array: pass X.compute()"
        )
    if not _uses_dask(estimator):
        raise ValueError(
            f"{type(estimator).__name__} was given a dask array X: fit it with backend='dask' "
            "(the rows stay on the cluster), or pass X.compute()"
        )
    X = check_dask_matrix(X, name="X")
    _, Y, classes, y_dtype = validate_training_data(estimator, sp.csr_matrix(X.shape), y)
    return X, Y, classes, y_dtype
