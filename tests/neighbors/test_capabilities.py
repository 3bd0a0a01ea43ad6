"""What backends declare (Capabilities), and the code that reads it instead of the class."""

from __future__ import annotations

import numpy as np
import pytest

from mlneighbors import BKNN, MLkNN
from mlneighbors.model_selection import evaluate_models
from mlneighbors.neighbors import (
    BACKENDS,
    BaseIndex,
    Capabilities,
    ExactIndex,
    LabelRestrictedIndex,
    NeighborCache,
    ShardedIndex,
    get_capabilities,
    get_index,
)


def _overrides(cls, hook):
    return getattr(cls, hook) is not getattr(BaseIndex, hook)


@pytest.mark.parametrize("name", sorted(BACKENDS))
def test_every_registered_backend_declares_what_it_does(name):
    # derived from the registry and each class's own attributes: a new backend is held to its
    # declaration without a line here
    import inspect

    index = get_index(name)
    caps = get_capabilities(index)
    assert isinstance(caps, Capabilities)
    assert index.exact == caps.exact
    assert index.metric == caps.metrics[0]  # the first declared metric is the default
    assert caps.recall == ("recall" in index.get_params()) or name == "dask"  # dask: its inner's recall
    cls = type(index)
    # an optional hook is declared where it is implemented, and implemented where declared
    if caps.loo_queries:
        assert _overrides(cls, "loo_query_rows"), name
    if caps.saved_state:
        assert _overrides(cls, "saved_state") and _overrides(cls, "restore_state"), name
    if caps.neighbour_sets:
        assert "sets" in inspect.signature(cls.query_rows).parameters, name
        assert "sets" in inspect.signature(cls.loo_query_rows).parameters or not caps.loo_queries, name


def test_the_declarations_of_the_exact_engine():
    assert get_capabilities(get_index("exact")) == Capabilities(
        exact=True, metrics=("euclidean", "cosine", "manhattan"), sparse=True, label_masking=("euclidean", "cosine"),
        float32_rows=("euclidean", "cosine"), loo_queries=True, neighbour_sets=True)
    assert not get_index("exact", metric="manhattan").keeps_float32()


def test_declarations_that_follow_the_parameters_or_the_build():
    # dask: its inner index's
    assert get_capabilities(get_index("dask", inner="hnswlib")) == Capabilities(
        metrics=("euclidean", "cosine"), sparse=True, dask_arrays=True)
    assert get_capabilities(get_index("dask", inner=ShardedIndex(ExactIndex(), 2))).exact
    with pytest.raises(ValueError, match="backend 'dask' does not support metric='manhattan'"):
        get_index("dask", metric="manhattan", inner="hnswlib")
    # auto: not exact until it has picked, then the pick's
    auto = get_index("auto")
    assert not auto.exact and not get_capabilities(auto).prefix_safe
    auto.build(np.random.default_rng(0).normal(size=(60, 3)))
    assert auto.backend_ == "exact" and auto.exact and get_capabilities(auto).prefix_safe
    # wrappers: the wrapped index's
    assert get_capabilities(ShardedIndex(get_index("hnswlib"), 2)).recall is False
    assert get_capabilities(ShardedIndex(get_index("hnswlib"), 2)).exact is False
    cache = NeighborCache("exact", metric="cosine")
    assert get_capabilities(cache) == Capabilities(exact=True, metrics=("cosine",), sparse=True)
    assert isinstance(cache.wrapped, ExactIndex)
    assert cache.wrapped.get_params() == ExactIndex(metric="cosine").get_params()


def test_defaults_for_an_object_of_the_protocol():
    class Mine:
        exact = True
        metric = "manhattan"

        def build(self, X):
            return self

        def query(self, Q, k):
            raise NotImplementedError

    assert get_capabilities(Mine()) == Capabilities(exact=True, metrics=("manhattan",), prefix_safe=True)
    plain = Mine()
    plain.exact, plain.metric = "no", None  # truthy, and no metric: euclidean
    assert get_capabilities(plain) == Capabilities(exact=True, metrics=("euclidean",))
    bare = object()
    assert get_capabilities(bare) == Capabilities()
    plain.capabilities = {"exact": True}
    with pytest.raises(TypeError, match=r"Mine.capabilities must be a mlneighbors.neighbors.Capabilities"):
        get_capabilities(plain)


def test_a_declaration_is_checked():
    assert Capabilities().prefix_safe is False and Capabilities(exact=True).prefix_safe is True
    assert Capabilities(exact=True, prefix_safe=False).prefix_safe is False
    assert Capabilities(metrics=["cosine"]).metrics == ("cosine",)
    with pytest.raises(ValueError, match=r"Capabilities.metrics names unknown metric\(s\) \['minkowski'\]"):
        Capabilities(metrics=("euclidean", "minkowski"))
    with pytest.raises(TypeError, match="Capabilities.metrics must be a tuple of metric names"):
        Capabilities(metrics="cosine")
    with pytest.raises(ValueError, match="at least one metric"):
        Capabilities(metrics=())
    with pytest.raises(ValueError, match="label_masking names unknown"):
        Capabilities(label_masking=("hamming",))


def test_an_index_declares_in_one_place():
    with pytest.raises(TypeError, match=r"Old sets 'exact': an index declares what it can do in one place"):
        class Old(BaseIndex):
            exact = False
    with pytest.raises(TypeError, match="sets 'supported_metrics'"):
        class Older(BaseIndex):
            supported_metrics = ("cosine",)
    assert ExactIndex.exact is True and get_index("pca-window").exact is False
    with pytest.raises(AttributeError, match="DaskIndex.exact depends on its parameters"):
        getattr(BACKENDS["dask"], "exact")  # noqa: B009 - the class attribute is what is tested


# ---------------------------------------------------------------------------- the readers


class DeclaresMasking(ExactIndex):
    """The exact engine under another class: the capability, not the class, picks the design."""


class ExactButNotMasking(ExactIndex):
    capabilities = Capabilities(exact=True, metrics=("euclidean", "cosine", "manhattan"), sparse=True)


def test_the_label_restricted_search_follows_the_declaration(rng):
    X = rng.normal(size=(30, 3))
    Y = (rng.random((30, 4)) < 0.4).astype(int)
    designs = {
        "masked": LabelRestrictedIndex(DeclaresMasking(), 2).build(X, Y),
        "per-label": LabelRestrictedIndex(ExactButNotMasking(), 2).build(X, Y),
        "cached": LabelRestrictedIndex(NeighborCache(ExactButNotMasking()), 2).build(X, Y),
        "manhattan": LabelRestrictedIndex(ExactIndex(metric="manhattan"), 2).build(X, Y),  # not declared
    }
    kinds = {name: type(index._search).__name__ for name, index in designs.items()}
    assert kinds == {"masked": "_MaskedSearch", "per-label": "_PerLabelSearch", "cached": "_PerLabelSearch",
                     "manhattan": "_PerLabelSearch"}
    Q = rng.normal(size=(5, 3))
    np.testing.assert_array_equal(designs["masked"].kneighbors(Q)[1], designs["per-label"].kneighbors(Q)[1])


def test_the_cache_takes_what_is_prefix_safe_only():
    with pytest.raises(ValueError, match=r"only a prefix-safe \(exact\) index allows; got HnswlibIndex "
                                         r"\(exact=False, prefix_safe=False\)"):
        NeighborCache("hnswlib")
    with pytest.raises(ValueError, match="prefix-safe"):
        NeighborCache("auto")  # it may pick an approximate index
    NeighborCache(ShardedIndex(ExactIndex(), 3))


def test_evaluation_shares_a_search_only_where_it_is_prefix_safe(rng):
    X = rng.normal(size=(60, 4))
    Y = (rng.random((60, 3)) < 0.4).astype(int)
    seen = {}

    def record(fitted):
        seen[(fitted.name, fitted.split)] = fitted.model.backend

    models = {"exact": MLkNN(5), "window": MLkNN(5, backend="pca-window", metric="cosine"),
              "bknn": BKNN(metric="cosine")}
    evaluate_models(models, X, Y, cv=2, metrics=["hamming_loss"], on_fit=record)
    assert isinstance(seen[("exact", 0)], NeighborCache)  # "exact" declares prefix_safe
    assert seen[("window", 0)] == "pca-window"  # approximate: not shared
    assert isinstance(seen[("bknn", 0)], NeighborCache)
