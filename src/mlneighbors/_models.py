"""The models by name, as the command line, the papers' reproductions and the benchmarks build
them: the :attr:`~mlneighbors._registry.Estimator.models` of the registry's entries
(``mlneighbors._registry``), each with the function that builds it.

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

from ._registry import ESTIMATORS, Estimator, Model

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


def _builder(entry: Estimator, model: Model) -> Callable[[], Any]:
    def build() -> Any:
        estimator = entry.load()(**(model.params or {}))
        if not model.after:
            return estimator
        from .pipeline import Pipeline  # scikit-learn's, with the model's predict_top_k

        steps = [(name.lower(), _ENTRIES[name].load()()) for name in model.after]
        return Pipeline([*steps, (entry.name.lower(), estimator)])

    return build


def _spec(entry: Estimator, model: Model) -> ModelSpec:
    if entry.k_param is None:
        raise ValueError(f"{model.name!r}: {entry.name} has no k parameter (k_param) to set")
    k_param = f"{entry.name.lower()}__{entry.k_param}" if model.after else entry.k_param
    return ModelSpec(model.name, model.label, model.description, _builder(entry, model), k_param)


_ENTRIES = {entry.name: entry for entry in ESTIMATORS}

#: name -> :class:`ModelSpec`, in the order the command line lists them: the models of the
#: registry's entries (``mlneighbors._registry``)
MODELS: dict[str, ModelSpec] = {
    model.name: _spec(entry, model) for entry in ESTIMATORS for model in entry.models
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
    >>> list_models()[:4]  # in the registry's order: a new entry's models come with it
    ['mlknn', 'brknn', 'brknn-a', 'brknn-b']
    >>> "blda-bknn" in list_models()
    True
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
        Unfitted: the model's estimator, or for a model with transformers of its own in front
        (``blda-bknn``) a :class:`~mlneighbors.Pipeline` of them, which ranks labels as its
        last step does (``predict_top_k``).

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
