"""JSON without NaN: the one conversion the command line's and the benchmark report's JSON share."""

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
