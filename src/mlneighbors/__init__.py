"""Lazy (k-nearest-neighbour) multi-label classification.

The public names are imported lazily so that ``import mlneighbors`` stays cheap
and never pulls in an optional dependency.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from ._registry import ESTIMATORS as _ESTIMATORS

__version__ = "0.1.0"

# public name -> module that defines it: the estimators of the registry, then the rest
_LAZY: dict[str, str] = {entry.name: entry.module for entry in _ESTIMATORS}
_LAZY |= {
    "load_dataset": "mlneighbors.datasets",
    "list_datasets": "mlneighbors.datasets",
    "Dataset": "mlneighbors.datasets",
    "MultilabelStratifiedKFold": "mlneighbors.model_selection",
    "cross_validate": "mlneighbors.model_selection",
    "MODELS": "mlneighbors._models",
    "TRUSTED_TYPES": "mlneighbors._persist",
    "load": "mlneighbors._persist",
    "save": "mlneighbors._persist",
    "list_models": "mlneighbors._models",
    "make_model": "mlneighbors._models",
    "config_context": "mlneighbors._config",
    "get_config": "mlneighbors._config",
    "set_config": "mlneighbors._config",
    "ProgressEvent": "mlneighbors._progress",
    "Pipeline": "mlneighbors.pipeline",
    "Explanation": "mlneighbors._explain",
}

# submodules reachable as attributes (``mlneighbors.metrics``) without an explicit import
_SUBMODULES = ("datasets", "exceptions", "metrics", "model_selection", "neighbors")

__all__ = sorted(_LAZY) + ["__version__"]


def __getattr__(name: str) -> Any:
    if name in _SUBMODULES:
        return import_module(f"mlneighbors.{name}")
    try:
        module = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'mlneighbors' has no attribute {name!r}") from None
    return getattr(import_module(module), name)


def __dir__() -> list[str]:
    return __all__
