"""Backend names, ``get_index`` and ``resolve_backend`` (what every estimator calls).

The registry names each backend's class as ``"module:Class"`` (the table is
``mlneighbors._backends``) and imports it on first use, so the wrappers that take a backend by
name (Dask's shards, ``"auto"``, the neighbour cache) can use the registry while it names
them: no module of this package imports another that imports it back.
"""

from __future__ import annotations

import functools
import importlib
import inspect
from collections.abc import Iterator, Mapping
from typing import Any

from .._backends import BACKEND_PATHS
from ._capabilities import METRICS, get_capabilities
from ._protocol import BaseIndex, check_metric, unbuilt_copy

__all__ = ["BACKENDS", "get_index", "resolve_backend"]


class _Registry(Mapping[str, type[BaseIndex]]):
    """Backend name -> index class, each class imported when it is first looked up."""

    def __init__(self, paths: dict[str, str]) -> None:
        self._paths = paths
        self._classes: dict[str, type[BaseIndex]] = {}

    def __getitem__(self, name: str) -> type[BaseIndex]:
        if name not in self._classes:
            module, _, attr = self._paths[name].partition(":")
            self._classes[name] = getattr(importlib.import_module(module, __package__), attr)
        return self._classes[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._paths)

    def __len__(self) -> int:
        return len(self._paths)

    def __repr__(self) -> str:
        return "{" + ", ".join(f"{name!r}: {path!r}" for name, path in self._paths.items()) + "}"


#: registered backend name -> index class ("exact" is the default everywhere); a read-only
#: mapping whose classes are imported on first look-up (the names and class paths:
#: ``mlneighbors._backends``, which the command line reads without importing this package)
BACKENDS: Mapping[str, type[BaseIndex]] = _Registry(BACKEND_PATHS)


def get_index(name: str = "exact", *, metric: str | None = None, **params: Any) -> BaseIndex:
    """An unbuilt index of a registered backend.

    Parameters
    ----------
    name : str, default="exact"
        A key of :data:`BACKENDS`: among them "exact", "auto" (the exact search, or an
        approximate index where it is estimated faster: :class:`AutoIndex`), "torch" (the
        exact search on a GPU through PyTorch, same results), "faiss-union" (HNSW and IVF
        candidates merged: no query left without its neighbours; what "auto" picks),
        "pca-window" (the hybrid kNN's candidate search; cosine only), "dask" (shards of any
        of these on the workers of a Dask cluster).
    metric : str, default=None
        Checked against the metrics the backend supports; None: the backend's first
        (``"euclidean"``, or ``"cosine"`` for "pca-window").
    **params
        The backend's own parameters (e.g. ``device`` for "torch", ``nprobe`` for "faiss-ivf",
        ``ef`` for "hnswlib").

    Returns
    -------
    index : unbuilt index; call ``build(X)`` then ``query(Q, k)``.

    Raises
    ------
    ValueError
        Unknown name or metric, or a metric the backend does not support.
    TypeError
        A parameter the backend does not take.

    Examples
    --------
    >>> from mlneighbors.neighbors import get_index
    >>> get_index("exact", metric="cosine")
    ExactIndex(metric='cosine')
    """
    if not isinstance(name, str) or name not in BACKENDS:
        raise ValueError(f"Unknown backend {name!r}; valid backends are {sorted(BACKENDS)}")
    cls = BACKENDS[name]
    valid = _init_params(cls)
    unknown = sorted(set(params) - set(valid))
    if unknown:
        raise TypeError(f"backend {name!r} got unexpected parameter(s) {unknown}; valid parameters are {valid}")
    index = cls(**params)
    metrics = get_capabilities(index).metrics
    metric = metrics[0] if metric is None else metric
    check_metric(metric, metrics, name)
    if type(index).set_params is BaseIndex.set_params:
        index.metric = metric  # what set_params does, without its signature inspection
    else:
        index.set_params(metric=metric)
    return index


# every registered name in the docstring of ``name`` (issue 47: it lacked "faiss-union"), from
# the registry itself: a backend registered later is listed without an edit here
if get_index.__doc__ is not None:  # (None under python -OO)
    get_index.__doc__ = get_index.__doc__.replace(
        "A key of :data:`BACKENDS`:", "A key of :data:`BACKENDS` (" + ", ".join(f'"{n}"' for n in BACKEND_PATHS) + "):",
        1)


@functools.cache
def _init_params(cls: type) -> list[str]:
    """A backend class's parameters other than ``metric``, in their order (read once)."""
    return [p for p in inspect.signature(cls.__init__).parameters if p not in ("self", "metric")]


def resolve_backend(
    backend: Any = "exact", metric: str | None = "euclidean", params: Mapping[str, Any] | None = None
) -> Any:
    """The unbuilt index an estimator should use for ``backend=`` and ``backend_params=``.

    Parameters
    ----------
    backend : str, index object or None
        A registered name (None means "exact"), or any object with ``build(X)`` and
        ``query(Q, k)`` (it is copied unbuilt, never modified).
    metric : str or None, default="euclidean"
        The estimator's metric.  With a name it is passed to :func:`get_index`; with an object
        it must equal the object's ``metric`` when it has one (None accepts the object's).
    params : mapping or None
        Backend parameters.  With a name they go to :func:`get_index`; with an object they
        are applied with ``set_params`` on the copy (an object without ``set_params`` takes
        none).

    Returns
    -------
    index : an unbuilt index, ready for ``build(X)``.

    Examples
    --------
    >>> from mlneighbors.neighbors import get_index, resolve_backend
    >>> resolve_backend("exact", "cosine")
    ExactIndex(metric='cosine')
    >>> resolve_backend(get_index("hnswlib"), "euclidean", {"ef": 80})
    HnswlibIndex(ef=80)
    """
    params = dict(params or {})

    if backend is None or isinstance(backend, str):
        return get_index(backend or "exact", metric=metric or "euclidean", **params)
    if not (callable(getattr(backend, "build", None)) and callable(getattr(backend, "query", None))):
        raise TypeError(
            f"backend must be one of {sorted(BACKENDS)} or an object with build(X) and "
            f"query(Q, k) methods, got {backend!r}"
        )
    own_metric = getattr(backend, "metric", None)
    if metric is not None and own_metric != metric:
        if own_metric is None and metric not in METRICS:
            raise ValueError(f"Unknown metric {metric!r}; valid metrics are {list(METRICS)}")
        if own_metric is not None:
            raise ValueError(f"the backend object has metric={own_metric!r} but metric={metric!r} was requested")
    index = unbuilt_copy(backend)
    if params:
        if not callable(getattr(index, "set_params", None)):
            raise ValueError(
                f"backend_params {sorted(params)} given, but the backend object {type(backend).__name__} "
                "has no set_params; configure the object itself"
            )
        index.set_params(**params)
    return index
