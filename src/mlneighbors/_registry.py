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
  has no entry;
- the contract tests (``tests/models/test_contracts.py``): scores in [0, 1], ``predict`` as
  each example's :attr:`Example.predicts` says it follows from them, and every parameter
  changing some output unless the entry declares it :attr:`Estimator.inert`, with its reason.

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
        The public dotted name of a class: of the package (``mlneighbors.neighbors.ExactIndex``),
        or of a library it depends on (``sklearn.cluster.KMeans``, a clusterer to try).
    params : dict
        Its parameters; a value that is an :class:`Obj` is built first.
    """

    path: str
    params: dict


class Example(NamedTuple):
    """A small instance of an estimator for the tests: a name, its parameters, and what the
    contract tests (``tests/models/test_contracts.py``) hold it to.

    Attributes
    ----------
    id : str
        The test id (unique over the registry).
    params : dict
        Parameters of the class (an :class:`Obj` value is built into an object).
    predicts : str or None
        How ``predict`` follows from the scores, checked on every row and label:

        - ``"proba > 0.5"``, ``"proba >= threshold"``, ``"decision > 0"``: a label is predicted
          exactly where its ``predict_proba`` score (``proba``) or ``decision_function`` margin
          (``decision``) compares so with the number, or with the parameter named (its value);
        - ``"top of proba"``: each row's predicted labels are a top of its ``predict_proba``
          ranking (none scores below a label left out), as a top-m or a fallback rule gives;
        - ``"own rule: <why>"``: ``predict`` is not read from the scores (say why in one line);
        - None for a transformer (no ``predict``).
    inert : dict
        Parameters of this example that change none of its outputs, each with its one-line
        reason, beyond its entry's :attr:`Estimator.inert` (HybridKNN's PCA parameters with an
        exact search).
    """

    id: str
    params: dict
    predicts: str | None = None
    inert: dict = {}


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
    inert : dict
        Parameters that change no output of any example by design (``n_jobs``: threads),
        each with its one-line reason.  Every other parameter must change some output of
        every example (``predict``, ``predict_proba``, ``decision_function``, ``transform``)
        on the contract tests' data, for some other value its ``_constraints`` admit; a
        parameter declared inert must change none.
    tries : dict
        Values to try for parameters whose ``_constraints`` name no value to try (an index
        name, an object), as tuples; an :class:`Obj` is built.
    """

    name: str
    module: str
    k_param: str | None
    models: tuple[Model, ...] = ()
    examples: tuple[Example, ...] = ()
    inert: dict = {}
    tries: dict = {}

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
#: the neighbour search's parameters, which change how the neighbours are found, not which
_SEARCH = {
    "backend": "which index finds the neighbours: every exact one finds the same (tests/models/test_backends.py)",
    "backend_params": "the options of that index, none of which changes an exact search's neighbours",
    "n_jobs": "threads of the search: the same neighbours, sooner",
}

#: Every estimator class of the package, in the order the command line lists their models.
ESTIMATORS: tuple[Estimator, ...] = (
    Estimator("MLkNN", "mlneighbors.mlknn", _N,
              models=(Model("mlknn", "ML-kNN", "ML-kNN (Zhang & Zhou 2007)"),),
              examples=(Example("mlknn", {_N: 4}, "proba > 0.5"),),
              inert=_SEARCH),
    Estimator("BRkNN", "mlneighbors.brknn", _N,
              models=(Model("brknn", "BRkNN", "BRkNN"),
                      Model("brknn-a", "BRkNN-a", "BRkNN-a", {"extension": "a"}),
                      Model("brknn-b", "BRkNN-b", "BRkNN-b", {"extension": "b"})),
              # -a adds the best label to an empty set, -b takes the m best: tops of the ranking
              examples=(Example("brknn", {_N: 4}, "proba > 0.5"),
                        Example("brknn-a", {_N: 4, "extension": "a"}, "top of proba"),
                        Example("brknn-b", {_N: 4, "extension": "b"}, "top of proba"),
                        # weighted votes (1 / d): another path, the search's distances and a weighted product
                        Example("brknn-distance", {_N: 4, "weights": "distance"}, "proba > 0.5"),
                        Example("brknn-b-distance", {_N: 4, "extension": "b", "weights": "distance"},
                                "top of proba")),
              inert=_SEARCH),
    Estimator("LPkNN", "mlneighbors.lpknn", _N,
              models=(Model("lpknn", "LPkNN", "LPkNN"),),
              examples=(Example("lpknn", {_N: 4}, "own rule: the label set most neighbours share, whatever the "
                                                      "vote fraction of each label"),
                        Example("lpknn-distance", {_N: 4, "weights": "distance"},
                                "own rule: the label set of most neighbour weight, whatever the weighted "
                                "share of each label")),
              inert=_SEARCH),
    Estimator("DMLkNN", "mlneighbors.dmlknn", _N,
              models=(Model("dmlknn", "DML-kNN", "DML-kNN"),),
              examples=(Example("dmlknn", {_N: 4, "delta": 2}, "proba > 0.5"),),
              inert=_SEARCH),
    Estimator("LAMLkNN", "mlneighbors.lamlknn", _N,
              models=(Model("lamlknn", "LAML-kNN", "LAML-kNN"),),
              examples=(Example("lamlknn", {_N: 4, "n_clusters": 2, "random_state": 0}, "proba > 0.5"),),
              inert=_SEARCH,
              tries={"clusterer": (Obj("sklearn.cluster.KMeans", {"n_clusters": 3, "n_init": 1, "random_state": 0}),)}),
    Estimator("BKNN", "mlneighbors.bknn", "n_per_label",
              models=(Model("bknn", "BKNN", "class-balanced kNN (--k sets b)"),
                      Model("blda-bknn", "BLDA + BKNN", "BLDA projection, then BKNN (--k sets b)",
                            after=("BLDA",))),
              # the exact engine's masked search, and an exact index that is not the engine:
              # one copy of it per label
              examples=(Example("bknn", {"n_per_label": 3}, "decision > 0"),
                        Example("bknn-cosine-per-label", {"n_per_label": 3, "metric": "cosine",
                                                          "backend": _SHARDED_COSINE}, "decision > 0",
                                inert={"metric": "the index object's own ('cosine'): another is refused at fit"})),
              inert=_SEARCH),
    Estimator("BLDA", "mlneighbors.blda", None, examples=(Example("blda", {}),)),
    Estimator("HybridKNN", "mlneighbors.hybrid", _N,
              models=(Model("hybrid", "Combined", "PCA hybrid kNN with the regression label model"),
                      Model("regression", "Regression",
                            "the hybrid kNN's label model over the exact cosine neighbours (no PCA)",
                            {"backend": "exact"})),
              # the PCA candidate search, and exact cosine neighbours in the feature space
              examples=(Example("hybrid", {_N: 4, "n_candidates": 20}, "proba >= threshold"),
                        Example("hybrid-exact", {_N: 4, "backend": "exact"}, "proba >= threshold",
                                inert={"n_components": "configures the PCA-window search, which 'exact' replaces",
                                       "n_candidates": "configures the PCA-window search, which 'exact' replaces"})),
              # the backend is the rule here ("pca-window" or not): it is tried, not declared inert
              inert={key: why for key, why in _SEARCH.items() if key != "backend"},
              tries={"backend": ("exact", "pca-window")}),
    Estimator("IBLRML", "mlneighbors.iblr", _N,
              models=(Model("iblr-ml", "IBLR-ML", "IBLR-ML (Cheng & Huellermeier 2009)"),
                      Model("iblr-ml-plus", "IBLR-ML+", "IBLR-ML+: the regressions also read the features",
                            {"plus": True})),
              # ridge 0.1: the contract data are small and separable (no iteration limit reached)
              examples=(Example("iblr-ml", {_N: 4, "ridge": 0.1}, "proba > 0.5"),
                        Example("iblr-ml-plus", {_N: 4, "plus": True, "ridge": 0.1}, "proba > 0.5")),
              inert=_SEARCH,
              tries={"plus": (True, False)}),
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
