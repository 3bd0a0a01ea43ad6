"""The registry of the package's estimators: one entry per class, and every list derived from it.

Adding a model is one module and one :class:`Estimator` entry in :data:`ESTIMATORS`.  From the
entries come:

- the public names: ``mlneighbors.<name>`` (imported on first use, ``mlneighbors/__init__.py``);
- the command line's models, ``mlneighbors.MODELS``, ``list_models`` and ``make_model``
  (``_models.py``), from each entry's :attr:`Estimator.models`;
- the types :func:`mlneighbors.load` trusts, ``mlneighbors.TRUSTED_TYPES`` (``_persist.py``);
- the tests' parametrisations (scikit-learn's estimator checks, every backend, saving and
  loading, the invariants, many labels, bad input...), from each entry's
  :attr:`Estimator.examples`: small instances, one per rule (several where a parameter changes
  the rule, as BRkNN's ``extension``).  A test fails if a public estimator class of the package
  has no entry.

The registry is data: module paths, class names and parameters.  Importing it imports nothing
beyond :mod:`typing` (``import mlneighbors`` reads it); a class is imported when it is first
used.

>>> from mlneighbors._registry import ESTIMATORS, examples
>>> [entry.name for entry in ESTIMATORS][:3]
['MLkNN', 'BRkNN', 'LPkNN']
>>> [name for name, _ in examples()][1:4]
['brknn', 'brknn-a', 'brknn-b']
"""

from __future__ import annotations

from importlib import import_module
from typing import Any, NamedTuple

__all__ = ["ESTIMATORS", "Estimator", "Example", "Model", "Obj", "build", "examples"]


class Obj(NamedTuple):
    """An object among an example's parameters, built when the example is (an index object).

    Attributes
    ----------
    path : str
        The public dotted name of a class of the package (``mlneighbors.neighbors.ExactIndex``).
    params : dict
        Its parameters; a value that is an :class:`Obj` is built first.
    """

    path: str
    params: dict


class Example(NamedTuple):
    """A small instance of an estimator for the tests: a name and its parameters.

    Attributes
    ----------
    id : str
        The test id (unique over the registry).
    params : dict
        Parameters of the class (an :class:`Obj` value is built into an object).
    """

    id: str
    params: dict


class Model(NamedTuple):
    """A model the command line, the papers' reproductions and ``make_model`` know by name.

    Attributes
    ----------
    name : str
        The command-line name.
    label : str
        The name the papers' tables use.
    description : str
        One line for ``mlneighbors --help``.
    params : dict or None
        Parameters of the estimator (None: its defaults).
    after : tuple of str
        Class names of registered transformers fitted in front of the estimator, in a
        scikit-learn Pipeline whose steps are named by the lower-cased class names.
    """

    name: str
    label: str
    description: str
    params: dict | None = None
    after: tuple[str, ...] = ()


class Estimator(NamedTuple):
    """One estimator class of the package.

    Attributes
    ----------
    name : str
        The class name, public as ``mlneighbors.<name>``.
    module : str
        The module that defines it.
    k_param : str or None
        The parameter that a model's ``k`` sets (``make_model(name, k)``, ``--k``), None for a
        class without one.
    models : tuple of Model
        Its models on the command line.
    examples : tuple of Example
        Its small test instances.
    """

    name: str
    module: str
    k_param: str | None
    models: tuple[Model, ...] = ()
    examples: tuple[Example, ...] = ()

    @property
    def path(self) -> str:
        """``module.name``, as skops names the type."""
        return f"{self.module}.{self.name}"

    def load(self) -> type:
        """The class (importing its module)."""
        return getattr(import_module(self.module), self.name)


_N = "n_neighbors"
_SHARDED_COSINE = Obj("mlneighbors.neighbors.ShardedIndex", {
    "index": Obj("mlneighbors.neighbors.ExactIndex", {"metric": "cosine"}), "n_shards": 2})

#: Every estimator class of the package, in the order the command line lists their models.
ESTIMATORS: tuple[Estimator, ...] = (
    Estimator("MLkNN", "mlneighbors.mlknn", _N,
              models=(Model("mlknn", "ML-kNN", "ML-kNN (Zhang & Zhou 2007)"),),
              examples=(Example("mlknn", {_N: 4}),)),
    Estimator("BRkNN", "mlneighbors.brknn", _N,
              models=(Model("brknn", "BRkNN", "BRkNN"),
                      Model("brknn-a", "BRkNN-a", "BRkNN-a", {"extension": "a"}),
                      Model("brknn-b", "BRkNN-b", "BRkNN-b", {"extension": "b"})),
              examples=(Example("brknn", {_N: 4}),
                        Example("brknn-a", {_N: 4, "extension": "a"}),
                        Example("brknn-b", {_N: 4, "extension": "b"}))),
    Estimator("LPkNN", "mlneighbors.lpknn", _N,
              models=(Model("lpknn", "LPkNN", "LPkNN"),),
              examples=(Example("lpknn", {_N: 4}),)),
    Estimator("DMLkNN", "mlneighbors.dmlknn", _N,
              models=(Model("dmlknn", "DML-kNN", "DML-kNN"),),
              examples=(Example("dmlknn", {_N: 4, "delta": 2}),)),
    Estimator("LAMLkNN", "mlneighbors.lamlknn", _N,
              models=(Model("lamlknn", "LAML-kNN", "LAML-kNN"),),
              examples=(Example("lamlknn", {_N: 4, "n_clusters": 2, "random_state": 0}),)),
    Estimator("BKNN", "mlneighbors.bknn", "n_per_label",
              models=(Model("bknn", "BKNN", "class-balanced kNN (--k sets b)"),
                      Model("blda-bknn", "BLDA + BKNN", "BLDA projection, then BKNN (--k sets b)",
                            after=("BLDA",))),
              # the exact engine's masked search, and an exact index that is not the engine:
              # one copy of it per label
              examples=(Example("bknn", {"n_per_label": 3}),
                        Example("bknn-cosine-per-label", {"n_per_label": 3, "metric": "cosine",
                                                          "backend": _SHARDED_COSINE}))),
    Estimator("BLDA", "mlneighbors.blda", None, examples=(Example("blda", {}),)),
    Estimator("HybridKNN", "mlneighbors.hybrid", _N,
              models=(Model("hybrid", "Combined", "PCA hybrid kNN with the regression label model"),
                      Model("regression", "Regression",
                            "the hybrid kNN's label model over the exact cosine neighbours (no PCA)",
                            {"backend": "exact"})),
              # the PCA candidate search, and exact cosine neighbours in the feature space
              examples=(Example("hybrid", {_N: 4, "n_candidates": 20}),
                        Example("hybrid-exact", {_N: 4, "backend": "exact"}))),
)


def build(value: Any) -> Any:
    """``value`` with every :class:`Obj` in it built (recursively); anything else as it is.

    >>> build(Obj("mlneighbors.neighbors.ExactIndex", {"metric": "cosine"}))
    ExactIndex(metric='cosine')
    """
    if isinstance(value, Obj):
        module, _, name = value.path.rpartition(".")
        return getattr(import_module(module), name)(**{k: build(v) for k, v in value.params.items()})
    return value


def examples() -> list[tuple[str, Any]]:
    """``(id, unfitted estimator)`` of every example of the registry, built fresh on each call.

    Returns
    -------
    examples : list of (str, estimator)
        In registry order.
    """
    return [(example.id, entry.load()(**{k: build(v) for k, v in example.params.items()}))
            for entry in ESTIMATORS for example in entry.examples]
