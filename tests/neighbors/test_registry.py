"""Backend names, parameters and metrics: get_index and resolve_backend."""

import numpy as np
import pytest

from mlneighbors.neighbors import (
    BACKENDS,
    ExactIndex,
    HnswlibIndex,
    NeighborIndex,
    ShardedIndex,
    get_index,
    resolve_backend,
)


def test_registered_names():
    assert sorted(BACKENDS) == [
        "auto", "dask", "exact", "faiss-hnsw", "faiss-ivf", "hnswlib", "pca-window", "pynndescent", "torch"
    ]
    for name, cls in BACKENDS.items():
        index = get_index(name)
        assert isinstance(index, cls) and isinstance(index, NeighborIndex)
        assert index.metric == ("cosine" if name == "pca-window" else "euclidean")
        # dask: exact with its default inner index; auto: not exact until it has picked
        assert index.exact == (name in ("exact", "torch", "dask"))
        assert not hasattr(index, "n_samples_fit_")  # unbuilt


def test_get_index_passes_parameters():
    index = get_index("hnswlib", metric="cosine", ef=77)
    assert isinstance(index, HnswlibIndex) and index.ef == 77 and index.metric == "cosine"
    assert get_index().get_params()["precision"] == "float32"


def test_unknown_backend_lists_the_valid_ones():
    with pytest.raises(ValueError, match=r"Unknown backend 'annoy'; valid backends are \['auto', 'dask', 'exact', 'fa"):
        get_index("annoy")
    with pytest.raises(ValueError, match="Unknown backend"):
        resolve_backend("annoy")


def test_unknown_metric_and_unsupported_metric():
    valid = r"valid metrics are \['euclidean', 'cosine', 'manhattan'\]"
    with pytest.raises(ValueError, match=r"Unknown metric 'minkowski'; " + valid):
        get_index("exact", metric="minkowski")
    supports = r"it supports \['euclidean', 'cosine'\]"
    with pytest.raises(ValueError, match=r"backend 'hnswlib' does not support metric='manhattan'; " + supports):
        get_index("hnswlib", metric="manhattan")
    with pytest.raises(ValueError, match="does not support metric='manhattan'"):
        get_index("faiss-ivf", metric="manhattan")
    get_index("pynndescent", metric="manhattan")  # supported there
    # set after construction: checked at build, before any library is imported
    index = HnswlibIndex(metric="manhattan")
    with pytest.raises(ValueError, match="does not support metric='manhattan'"):
        index.build(np.eye(2))


def test_unknown_parameter():
    with pytest.raises(TypeError, match=r"backend 'exact' got unexpected parameter\(s\) \['ef'\]"):
        get_index("exact", ef=10)


def test_bad_parameter_values_fail_at_build():
    for index, match in [
        (ExactIndex(precision="float16"), "precision"),
        (ExactIndex(sparse_strategy="magic"), "sparse_strategy"),
        (ExactIndex(working_memory=0), "working_memory"),
        (ExactIndex(n_jobs=0), "n_jobs"),
        (get_index("faiss-ivf", nprobe=0), "nprobe"),
        (get_index("hnswlib", ef=0), "ef"),
        (get_index("faiss-hnsw", M=1), "M"),
        (get_index("pynndescent", epsilon=-1.0), "epsilon"),
    ]:
        with pytest.raises(ValueError, match=match):
            index.build(np.eye(3))


def test_resolve_backend_names_and_none():
    assert isinstance(resolve_backend(None), ExactIndex)
    index = resolve_backend("exact", "cosine", {"working_memory": 8})
    assert index.metric == "cosine" and index.working_memory == 8


def test_resolve_backend_copies_objects_and_applies_params():
    proto = ExactIndex(metric="cosine")
    index = resolve_backend(proto, "cosine", {"n_jobs": 1})
    assert index is not proto and index.n_jobs == 1 and proto.n_jobs is None
    assert resolve_backend(proto, None).metric == "cosine"  # None accepts the object's metric
    sharded = resolve_backend(ShardedIndex(ExactIndex(), 3), "euclidean")
    assert isinstance(sharded, ShardedIndex)
    with pytest.raises(ValueError, match="has metric='cosine' but metric='euclidean' was requested"):
        resolve_backend(proto, "euclidean")


class Plain:
    """A user backend without scikit-learn's get_params / set_params."""

    metric = "euclidean"
    exact = True

    def build(self, X):
        return self

    def query(self, Q, k):
        raise NotImplementedError


def test_resolve_backend_plain_objects():
    plain = Plain()
    assert isinstance(resolve_backend(plain), Plain) and resolve_backend(plain) is not plain
    with pytest.raises(ValueError, match="has no set_params"):
        resolve_backend(plain, "euclidean", {"x": 1})
    with pytest.raises(TypeError, match="object with build"):
        resolve_backend(object())
    with pytest.raises(TypeError, match="object with build"):
        resolve_backend(3)
