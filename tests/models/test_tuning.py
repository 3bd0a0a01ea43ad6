"""Tuning k with GridSearchCV and a NeighborCache: the same results as the plain grid, fewer searches.

What the user guide's "Tuning and pitfalls" page promises, on a tiny fixture with duplicated
rows (ties at every k): every fold's score, mean, deviation and rank of ``cv_results_`` equal
the plain grid's bit for bit, and the cache searches as often as the page says.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.metrics import make_scorer
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import MinMaxScaler

from mlneighbors import MLkNN, metrics
from mlneighbors.model_selection import MultilabelStratifiedKFold
from mlneighbors.neighbors import NeighborCache

from ..registry import classifiers

K, FOLDS = 8, 3
SCORING = {
    "average_precision": make_scorer(metrics.average_precision, response_method="predict_proba"),
    "hamming_loss": make_scorer(metrics.hamming_loss, greater_is_better=False),
}
#: (model, whether its fit searches leave-one-out neighbours): the registry's classifiers whose k
#: is ``n_neighbors`` and whose search is the exact one (a cache serves only an exact index)
MODELS = [pytest.param(param.values[0], param.values[0]._needs_loo, id=param.id)
          for param in classifiers(lambda m: "n_neighbors" in m.get_params() and m.backend == "exact")]


@pytest.fixture
def data(rng):
    X = rng.integers(0, 3, size=(45, 4)).astype(float) * [1.0, 10.0, 100.0, 0.1]
    X[30:] = X[:15]  # duplicated rows: ties at every k, broken by the lower row
    Y = (rng.random((45, 4)) < 0.35).astype(int)
    Y[:, 0] = X[:, 0] > 0
    return X, Y


def grid_search(model, backend, data, **grid):
    pipe = Pipeline([("scale", MinMaxScaler()), ("model", clone(model).set_params(backend=backend))])
    search = GridSearchCV(pipe, {"model__n_neighbors": range(1, K + 1), **grid}, scoring=SCORING,
                          refit="average_precision",
                          cv=MultilabelStratifiedKFold(FOLDS, shuffle=True, random_state=0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a label absent from a fold
        return search.fit(*data)


def assert_same_scores(a, b):
    keys = [key for key in a.cv_results_ if key.startswith(("split", "mean_test", "std_test", "rank_test"))]
    assert len(keys) == 2 * (FOLDS + 3)
    for key in keys:
        np.testing.assert_array_equal(a.cv_results_[key], b.cv_results_[key], err_msg=key)
    assert a.best_params_["model__n_neighbors"] == b.best_params_["model__n_neighbors"]


@pytest.mark.parametrize(("model", "loo"), MODELS)
def test_cached_grid_equals_plain_grid(model, loo, data):
    plain = grid_search(model, "exact", data)
    cache = NeighborCache(metric=model._index_metric(), k_max=K + 1)
    cached = grid_search(model, cache, data)
    assert_same_scores(plain, cached)
    # per fold one held-out search, plus one leave-one-out search per fold and for the refit
    assert cache.searches == (2 * FOLDS + 1 if loo else FOLDS)
    np.testing.assert_array_equal(plain.predict_proba(data[0]), cached.predict_proba(data[0]))


def test_k_max_settings(data):
    """k_max = K asks once more per fold (fit's leave-one-out search wants K + 1); without
    k_max every fit searches again, as many searches as the plain grid."""
    plain = grid_search(MLkNN(), "exact", data)
    for k_max, searches in ((K, 3 * FOLDS + 1), (None, 2 * K * FOLDS + 1)):
        cache = NeighborCache(k_max=k_max)
        assert_same_scores(plain, grid_search(MLkNN(), cache, data))
        assert cache.searches == searches


def test_one_cache_per_metric(data):
    """The page's list of grids: each metric with its own cache, the same results as the plain grid."""
    caches = {metric: NeighborCache(metric=metric, k_max=K + 1) for metric in ("euclidean", "cosine")}
    pipe = Pipeline([("scale", MinMaxScaler()), ("model", MLkNN())])
    cv = MultilabelStratifiedKFold(FOLDS, shuffle=True, random_state=0)
    ks = range(1, K + 1)
    grids = [{"model__metric": [m], "model__backend": [c], "model__n_neighbors": ks} for m, c in caches.items()]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cached = GridSearchCV(pipe, grids, scoring=SCORING, refit="average_precision", cv=cv).fit(*data)
        plain = GridSearchCV(pipe, {"model__metric": list(caches), "model__n_neighbors": ks}, scoring=SCORING,
                             refit="average_precision", cv=cv).fit(*data)
    assert_same_scores(plain, cached)  # both grids list metric first, then k
    # two searches per fold in each cache, and the refit's in the chosen metric's
    assert sorted(cache.searches for cache in caches.values()) == [2 * FOLDS, 2 * FOLDS + 1]
    with pytest.raises(ValueError, match="metric='euclidean' but metric='cosine'"):
        MLkNN(metric="cosine", backend=NeighborCache()).fit(*data)


def _page_recipes():
    """The tuning page's Python recipes: each ``.. code-block:: python`` that runs a grid search."""
    import pathlib
    import re

    page = (pathlib.Path(__file__).parents[2] / "docs" / "user_guide" / "tuning.rst").read_text()
    blocks = re.findall(r"\.\. code-block:: python\n\n((?:(?:   .*)?\n)+)", page)
    recipes = ["\n".join(line[3:] for line in block.splitlines()) for block in blocks]
    return [recipe for recipe in recipes if "GridSearchCV(" in recipe]


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
def test_the_tuning_pages_recipes_run_as_written(sparse, rng, monkeypatch):
    """The page's recipe for its kind of data runs whole (the dense one on dense rows, the sparse
    one on a bag of words: the dense recipe's MinMaxScaler refuses sparse rows), on tiny data
    standing in for the page's datasets."""
    import scipy.sparse as sp

    import mlneighbors.datasets
    from mlneighbors.datasets import Dataset

    recipes = _page_recipes()
    assert len(recipes) == 2
    recipe = next(r for r in recipes if ("MinMaxScaler" not in r) == sparse)
    X = rng.poisson(0.3, size=(90, 12)).astype(float) + (0 if sparse else rng.normal(size=(90, 12)))
    Y = (rng.random((90, 3)) < 0.4).astype(np.int64)
    Y[:, 0] |= X[:, 0] > 0
    X = sp.csr_matrix(X) if sparse else X

    def tiny(name, split="all", **_):
        rows = slice(0, 60) if split == "train" else slice(60, 90)
        return Dataset(name=name, X=X[rows], Y=Y[rows], feature_names=[f"f{j}" for j in range(12)],
                       label_names=["a", "b", "c"])

    monkeypatch.setattr(mlneighbors.datasets, "load_dataset", tiny)
    scope = {}
    exec(compile(recipe, "tuning.rst", "exec"), scope)
    assert 1 <= scope["search"].best_params_[next(iter(scope["search"].best_params_))] <= 30
    assert sp.issparse(scope["train"].X) == sparse
