"""Explanations of predictions: the neighbours that voted and the model's decision quantities."""

from __future__ import annotations

from typing import Any

__all__ = ["Explainable"]


class Explainable:
    """The ``explain`` method of every model (a mixin of the estimator base)."""

    def explain(self, X: Any) -> Any:  # pragma: no cover - being written
        raise NotImplementedError
