"""The tests' lists of models, all from the package's registry (``mlneighbors._registry``).

Every example an entry of the registry declares (a small instance per rule: BRkNN's three
extensions, BKNN's masked search and its per-label copies of another exact index, the hybrid's
PCA window and its exact search) is in every list below that fits it, so a model registered
there is in scikit-learn's estimator checks, the backend tests, saving and loading, the
invariants... without a line in those tests.  ``tests/test_registry.py`` fails for a public
estimator class of the package that has no entry.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from sklearn.base import clone, is_classifier

from mlneighbors._registry import ESTIMATORS, examples

__all__ = ["classifiers", "fresh", "k_param", "models"]


def models(where: Callable[[Any], bool] | None = None) -> list[Any]:
    """``pytest.param`` of every example of the registry (a fresh unfitted instance; the id is
    the example's), those for which ``where(model)`` is true when given."""
    return [pytest.param(model, id=name) for name, model in examples() if where is None or where(model)]


def classifiers(where: Callable[[Any], bool] | None = None) -> list[Any]:
    """:func:`models` that are classifiers (every model but the BLDA projection)."""
    return models(lambda m: is_classifier(m) and (where is None or where(m)))


def k_param(model: Any) -> str | None:
    """The parameter that sets the model's ``k`` (``n_neighbors``, BKNN's ``n_per_label``)."""
    return {entry.name: entry.k_param for entry in ESTIMATORS}[type(model).__name__]


def fresh(model: Any) -> Any:
    """An unfitted copy of a parametrised model (the parametrised instance stays untouched)."""
    return clone(model)
