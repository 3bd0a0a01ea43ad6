"""Leave-one-out neighbours: own row excluded by index, duplicates kept."""

import numpy as np
import pytest
import scipy.sparse as sp

from mlneighbors.neighbors import ExactIndex, ShardedIndex, loo_kneighbors

from ._twins import tricky_data, twin_kneighbors


@pytest.mark.parametrize("metric", ["euclidean", "cosine", "manhattan"])
@pytest.mark.parametrize("integer", [False, True])
def test_loo_equals_twin_with_duplicates(rng, metric, integer):
    X = tricky_data(rng, 131, 5, integer=integer)
    index = ExactIndex(metric=metric, working_memory=0.01).build(X)
    for k in (1, 9, 130):  # k = n - 1 included
        dist, idx = loo_kneighbors(index, X, k)
        ref_dist, ref_idx = twin_kneighbors(X, X, k, metric, exclude=np.arange(len(X)))
        np.testing.assert_array_equal(idx, ref_idx)
        np.testing.assert_array_equal(dist, ref_dist)
        assert not np.any(idx == np.arange(len(X))[:, None])


def test_duplicates_of_a_row_stay_and_come_first():
    # rows 0-3 are identical: row 3's nearest are 0, 1, 2 (lower indices first), itself not
    X = np.array([[1.0, 1.0]] * 4 + [[1.0, 2.0], [5.0, 5.0]])
    dist, idx = loo_kneighbors(ExactIndex().build(X), X, 3)
    np.testing.assert_array_equal(idx[3], [0, 1, 2])
    np.testing.assert_array_equal(dist[3], [0.0, 0.0, 0.0])
    np.testing.assert_array_equal(idx[0], [1, 2, 3])
    # k = 1: row 3 is not among its own 2 nearest (0 and 1 come first): the last is dropped
    dist, idx = loo_kneighbors(ExactIndex().build(X), X, 1)
    np.testing.assert_array_equal(idx[:, 0], [1, 0, 0, 0, 0, 4])


def test_loo_prefix_property(rng):
    X = tricky_data(rng, 90, 3, integer=True)
    index = ExactIndex().build(X)
    dist30, idx30 = loo_kneighbors(index, X, 30)
    for k in (1, 2, 10, 29):
        dist, idx = loo_kneighbors(index, X, k)
        np.testing.assert_array_equal(idx, idx30[:, :k])
        np.testing.assert_array_equal(dist, dist30[:, :k])


def test_loo_sparse_and_sharded(rng):
    X = tricky_data(rng, 70, 6, integer=True)
    X[X < 1] = 0
    ref = twin_kneighbors(X, X, 8, exclude=np.arange(70))
    for index, data in [(ExactIndex(), sp.csr_matrix(X)), (ShardedIndex(ExactIndex(), 4), X)]:
        dist, idx = loo_kneighbors(index.build(data), data, 8)
        np.testing.assert_array_equal(idx, ref[1])
        np.testing.assert_array_equal(dist, ref[0])


class BruteForce:
    """A minimal user backend: only build and query (no n_samples_fit_)."""

    exact = True
    metric = "euclidean"

    def build(self, X):
        self.X = np.asarray(X, float)
        return self

    def query(self, Q, k):
        return twin_kneighbors(self.X, Q, k)


def test_loo_with_a_user_backend(rng):
    X = tricky_data(rng, 40, 3, integer=True)
    dist, idx = loo_kneighbors(BruteForce().build(X), X, 5)
    np.testing.assert_array_equal(idx, twin_kneighbors(X, X, 5, exclude=np.arange(40))[1])


def test_loo_errors(rng):
    X = rng.standard_normal((10, 2))
    index = ExactIndex().build(X)
    with pytest.raises(ValueError, match="k <= n_samples - 1"):
        loo_kneighbors(index, X, 10)
    with pytest.raises(ValueError, match="k must be >= 1"):
        loo_kneighbors(index, X, 0)
    with pytest.raises(ValueError, match="built on 10 rows"):
        loo_kneighbors(index, X[:5], 2)

    class Broken(BruteForce):
        def query(self, Q, k):
            d, i = super().query(Q, k)
            i[:, 1] = np.arange(len(Q))
            i[:, 0] = np.arange(len(Q))
            return d, i

    with pytest.raises(ValueError, match="more than once"):
        loo_kneighbors(Broken().build(X), X, 3)
