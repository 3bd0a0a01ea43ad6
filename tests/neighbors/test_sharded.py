"""Sharded search: per-shard top-k merged equals the unsharded exact result, ties included."""

import pickle

import numpy as np
import pytest

from mlneighbors.neighbors import ExactIndex, ShardedIndex, merge_kneighbors

from ._twins import tricky_data, tricky_queries, twin_merge


@pytest.mark.parametrize("metric", ["euclidean", "cosine", "manhattan"])
@pytest.mark.parametrize("n_shards", [1, 2, 7, 97, 200])
def test_shard_merge_equals_unsharded(rng, metric, n_shards):
    X = tricky_data(rng, 97, 4, integer=True)  # heavy exact ties across shard boundaries
    Q = tricky_queries(rng, X, 25)
    whole = ExactIndex(metric=metric).build(X)
    sharded = ShardedIndex(ExactIndex(metric=metric), n_shards).build(X)
    assert sharded.exact and sharded.metric == metric
    for k in (1, 5, 97):
        dist, idx = sharded.query(Q, k)
        ref_dist, ref_idx = whole.query(Q, k)
        np.testing.assert_array_equal(idx, ref_idx)
        np.testing.assert_array_equal(dist, ref_dist)


def test_merge_equals_loop_twin(rng):
    dists = [np.round(rng.random((6, 4)), 1) for _ in range(3)]  # rounded: many ties
    idxs = [rng.permutation(40)[:24].reshape(6, 4) + 100 * s for s in range(3)]
    for k in (1, 5, 12):
        got = merge_kneighbors(dists, idxs, k)
        ref = twin_merge(dists, idxs, k)
        np.testing.assert_array_equal(got[1], ref[1])
        np.testing.assert_array_equal(got[0], ref[0])
    with pytest.raises(ValueError, match="larger than the number of merged candidates"):
        merge_kneighbors(dists, idxs, 13)


def test_sharded_pickles_and_clones(rng):
    X = rng.standard_normal((50, 3))
    index = ShardedIndex(ExactIndex(working_memory=1), 3).build(X)
    again = pickle.loads(pickle.dumps(index))
    np.testing.assert_array_equal(again.query(X[:5], 4)[1], index.query(X[:5], 4)[1])
    assert len(index.shards_) == 3 and index.index.get_params()["working_memory"] == 1
    assert not hasattr(index.index, "n_samples_fit_")  # the prototype stays unbuilt


def test_sharded_checks_k_before_querying_shards(rng):
    class Recorder:
        exact, metric, calls = True, "euclidean", 0

        def build(self, X):
            return self

        def query(self, Q, k):
            type(self).calls += 1
            raise AssertionError("must not be called")

    index = ShardedIndex(Recorder(), 2).build(rng.standard_normal((6, 2)))
    with pytest.raises(ValueError, match="larger than the number of indexed points"):
        index.query(np.zeros((1, 2)), 7)
    assert Recorder.calls == 0
    with pytest.raises(ValueError, match="n_shards must be >= 1"):
        ShardedIndex(ExactIndex(), 0).build(np.eye(3))
