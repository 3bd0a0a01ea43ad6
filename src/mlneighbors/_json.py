"""Values as JSON holds them, shared by the command line's outputs and the benchmark's store and report."""

from __future__ import annotations

import math
from typing import Any


def finite(value: Any) -> Any:
    """``value`` with every NaN or infinite float, at any depth of dicts, lists and tuples,
    replaced by None: JSON has no NaN, and the outputs say in words what a missing number means.

    >>> finite({"recall": float("nan"), "ranks": [1.5, float("inf")], "k": 10})
    {'recall': None, 'ranks': [1.5, None], 'k': 10}
    """
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(v) for v in value]
    return value


def jsonable(value: Any) -> Any:
    """A parameter value as JSON can hold it (objects by their repr).

    >>> jsonable({"k": 10, "metric": ("euclidean",), "index": object}) == {
    ...     "k": 10, "metric": ["euclidean"], "index": repr(object)}
    True
    """
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    return repr(value)


def model_params(models: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Each model's parameters as it was fitted, defaults included (``--k`` left out still
    records the k used), for the outputs' metadata: the estimator's ``get_params``, a
    Pipeline's as its steps' (``blda__reg``), without scikit-learn's Pipeline settings
    (``memory``, ``verbose``) or the steps themselves."""
    out = {}
    for name, model in models.items():
        params = model.get_params(deep=True)
        steps = getattr(model, "steps", None)
        out[name] = {k: v for k, v in params.items()
                     if not hasattr(v, "get_params") and (not steps or "__" in k)}
    return out
