"""The model registry: every model of the package by name, as the command line, the papers'
reproductions and the benchmarks build them.

>>> from mlneighbors import list_models, make_model
>>> list_models()[:3]
['mlknn', 'brknn', 'brknn-a']
>>> make_model("brknn-a", k=7)
BRkNN(extension='a', n_neighbors=7)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["MODELS", "ModelSpec", "list_models", "make_model"]


@dataclass(frozen=True)
class ModelSpec:
    """A registered model.

    Attributes
    ----------
    name : str
        The registry (and command-line) name.
    label : str
        The name the papers' tables use.
    description : str
    build : callable
        Returns the unfitted estimator with its default parameters.
    k_param : str
        The parameter that ``k`` sets (``n_neighbors``; ``b`` for the BKNN family).
    """

    name: str
    label: str
    description: str
    build: Callable[[], Any]
    k_param: str


def _lazy(cls: str, **params: Any) -> Callable[[], Any]:
    def build() -> Any:
        import mlneighbors

        return getattr(mlneighbors, cls)(**params)

    return build


def _blda_bknn() -> Any:
    from sklearn.pipeline import Pipeline

    import mlneighbors

    return Pipeline([("blda", mlneighbors.BLDA()), ("bknn", mlneighbors.BKNN())])


#: name -> :class:`ModelSpec`, in the order the command line lists them
MODELS: dict[str, ModelSpec] = {
    spec.name: spec
    for spec in (
        ModelSpec("mlknn", "ML-kNN", "ML-kNN (Zhang & Zhou 2007)", _lazy("MLkNN"), "n_neighbors"),
        ModelSpec("brknn", "BRkNN", "BRkNN", _lazy("BRkNN"), "n_neighbors"),
        ModelSpec("brknn-a", "BRkNN-a", "BRkNN-a", _lazy("BRkNN", extension="a"), "n_neighbors"),
        ModelSpec("brknn-b", "BRkNN-b", "BRkNN-b", _lazy("BRkNN", extension="b"), "n_neighbors"),
        ModelSpec("lpknn", "LPkNN", "LPkNN", _lazy("LPkNN"), "n_neighbors"),
        ModelSpec("dmlknn", "DML-kNN", "DML-kNN", _lazy("DMLkNN"), "n_neighbors"),
        ModelSpec("lamlknn", "LAML-kNN", "LAML-kNN", _lazy("LAMLkNN"), "n_neighbors"),
        ModelSpec("bknn", "BKNN", "class-balanced kNN (--k sets b)", _lazy("BKNN"), "n_per_label"),
        ModelSpec("blda-bknn", "BLDA + BKNN", "BLDA projection, then BKNN (--k sets b)", _blda_bknn,
                  "bknn__n_per_label"),
        ModelSpec("hybrid", "Combined", "PCA hybrid kNN with the regression label model", _lazy("HybridKNN"),
                  "n_neighbors"),
        ModelSpec("regression", "Regression",
                  "the hybrid kNN's label model over the exact cosine neighbours (no PCA)",
                  _lazy("HybridKNN", backend="exact"), "n_neighbors"),
    )
}


def list_models() -> list[str]:
    """The registered model names.

    Returns
    -------
    names : list of str
        The keys of :data:`MODELS`, in the order the command line lists them.

    Examples
    --------
    >>> from mlneighbors import list_models
    >>> list_models()
    ['mlknn', 'brknn', 'brknn-a', 'brknn-b', 'lpknn', 'dmlknn', 'lamlknn', 'bknn', 'blda-bknn', 'hybrid', 'regression']
    """
    return list(MODELS)


def make_model(name: str, k: int | None = None, **params: Any) -> Any:
    """An unfitted model by registry name, with ``k`` (its ``k_param``) and ``params`` set.

    Parameters
    ----------
    name : str
        A key of :data:`MODELS`.
    k : int, default=None
        The neighbour count (``n_neighbors``, or ``b`` of BKNN); None keeps the default.
    **params
        Parameters passed to ``set_params`` (``step__param`` for a pipeline's step).

    Returns
    -------
    model : estimator
        Unfitted.

    Examples
    --------
    >>> from mlneighbors import make_model
    >>> make_model("blda-bknn", k=3)
    Pipeline(steps=[('blda', BLDA()), ('bknn', BKNN(n_per_label=3))])
    """

    if name not in MODELS:
        raise ValueError(f"unknown model {name!r}; valid models: {', '.join(MODELS)}")
    spec = MODELS[name]
    model = spec.build()
    if k is not None:
        params = {spec.k_param: k, **params}
    if params:
        model.set_params(**params)
    return model
