"""Bad input: clear errors, raised before any library is called."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import NotFittedError

from mlneighbors.neighbors import BACKENDS, ExactIndex, ShardedIndex, get_capabilities, get_index

from ._backends import SLOW, require

#: the library adapters and the exact engine (the PCA window index is tested in test_window.py)
# the PCA window index is tested in test_window.py; a backend on a Dask cluster in tests/test_dask.py
ALL = [name for name in BACKENDS if name != "pca-window" and not get_capabilities(get_index(name)).dask_arrays]


@pytest.mark.parametrize("name", ALL)
def test_k_out_of_range_raises_before_the_library(name, monkeypatch):
    index = get_index(name)
    if name != "exact":  # a built adapter that must not reach its library
        require(name)
        if name in SLOW:
            pytest.skip(f"building {name} is slow (pynndescent compiles numba kernels)")
    index.build(np.random.default_rng(0).standard_normal((5, 2)))
    # the backend's search (its library, its device, the index auto picked) must not be reached
    monkeypatch.setattr(index, "query_rows", lambda *a, **kw: pytest.fail("the search was called"))
    with pytest.raises(ValueError, match=r"k=6 is larger than the number of indexed points \(5\)"):
        index.query(np.zeros((1, 2)), 6)
    with pytest.raises(ValueError, match="k must be >= 1, got k=0"):
        index.query(np.zeros((1, 2)), 0)
    with pytest.raises(ValueError, match="k must be >= 1"):
        index.query(np.zeros((1, 2)), -3)
    for bad in (2.0, "3", True, None):
        with pytest.raises(TypeError, match="k must be an integer"):
            index.query(np.zeros((1, 2)), bad)
    monkeypatch.undo()
    assert index.query(np.zeros((1, 2)), np.int64(5))[1].shape == (1, 5)  # numpy integers are fine


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_nan_and_inf(bad):
    X = np.ones((4, 2))
    X[1, 1] = bad
    for data in (X, sp.csr_matrix(X)):
        with pytest.raises(ValueError, match="X contains"):
            ExactIndex().build(data)
    index = ExactIndex().build(np.ones((4, 2)))
    with pytest.raises(ValueError, match="Q contains"):
        index.query(X, 1)
    with pytest.raises(ValueError, match="Q contains"):
        index.query(sp.csr_matrix(X), 1)


def test_feature_count_mismatch():
    index = ExactIndex().build(np.ones((4, 3)))
    with pytest.raises(ValueError, match="Q has 2 features, but the index was built on X with 3 features"):
        index.query(np.ones((1, 2)), 1)
    sharded = ShardedIndex(ExactIndex(), 2).build(np.ones((4, 3)))
    with pytest.raises(ValueError, match="Q has 2 features"):
        sharded.query(np.ones((1, 2)), 1)


def test_shapes_and_emptiness():
    with pytest.raises(ValueError, match="Expected 2D array"):
        ExactIndex().build(np.ones(4))
    with pytest.raises(ValueError, match="0 sample"):
        ExactIndex().build(np.ones((0, 3)))
    with pytest.raises(ValueError, match="0 feature"):
        ExactIndex().build(np.ones((3, 0)))
    index = ExactIndex().build(np.ones((3, 2)))
    with pytest.raises(ValueError, match="0 sample"):
        index.query(np.ones((0, 2)), 1)
    with pytest.raises(ValueError):
        ExactIndex().build([["a", "b"]])


def test_query_before_build():
    with pytest.raises(NotFittedError, match="not built yet"):
        ExactIndex().query(np.ones((1, 2)), 1)
    with pytest.raises(NotFittedError, match="not built yet"):
        ShardedIndex(ExactIndex(), 2).query(np.ones((1, 2)), 1)


def test_search_of_validated_rows_is_the_query(rng):
    from mlneighbors.neighbors import NeighborCache
    from mlneighbors.neighbors._protocol import search

    X = rng.normal(size=(60, 4))
    Q = rng.normal(size=(9, 4))
    index = ExactIndex().build(X)
    want = index.query(Q, 5)
    for validated in (False, True):
        got = search(index, Q, 5, validated=validated)
        np.testing.assert_array_equal(got[0], want[0])
        np.testing.assert_array_equal(got[1], want[1])
    cache = NeighborCache().build(X)  # not a BaseIndex: always its own query
    np.testing.assert_array_equal(search(cache, Q, 5, validated=True)[1], want[1])
    with pytest.raises(ValueError, match="k=61 is larger"):
        search(index, Q, 61, validated=True)
    with pytest.raises(ValueError, match="Q has 3 features"):
        search(index, Q[:, :3], 5, validated=True)
