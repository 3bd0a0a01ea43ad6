"""Neighbour sets without distances (``order=False``): what a model that counts labels asks.

The exact engine answers a row from the proxy's error bounds alone where they decide the set,
computes reference distances only for the candidates they leave open, and falls back to the
full answer where its candidates stop short.  Every set must equal the loop twin's.
"""

import numpy as np
import pytest

from mlneighbors.neighbors import ExactIndex, loo_kneighbors
from mlneighbors.neighbors._protocol import search

from ._twins import tricky_data, tricky_queries, twin_kneighbors

METRICS = ["euclidean", "cosine", "manhattan"]


def assert_same_sets(idx, ref_idx):
    np.testing.assert_array_equal(np.sort(idx, axis=1), np.sort(ref_idx, axis=1))


@pytest.mark.parametrize("metric", METRICS)
@pytest.mark.parametrize("precision", ["float32", "float64"])
@pytest.mark.parametrize("integer", [False, True])
def test_sets_equal_the_loop_twin(rng, metric, precision, integer):
    X = tricky_data(rng, 300, 9, integer=integer)
    Q = tricky_queries(rng, X, 60)
    index = ExactIndex(metric=metric, precision=precision).build(X)
    for k in (1, 7, 40):
        assert_same_sets(search(index, Q, k, validated=True, order=False), twin_kneighbors(X, Q, k, metric)[1])
        ref = twin_kneighbors(X, X, k, metric, exclude=np.arange(len(X)))[1]
        assert_same_sets(loo_kneighbors(index, X, k, validated=True, order=False), ref)


def test_ties_at_the_kth_place_are_decided_by_distance_and_row(rng):
    # copies of rows straddle the k-th place: the bounds cannot separate them, their reference
    # distances (equal) and row numbers decide, as in the ordered answer
    base = rng.standard_normal((60, 5))
    X = np.vstack([base, base[:30], base[:30] + 1e-7])
    Q = np.vstack([base[:30] + 0.01, rng.standard_normal((20, 5))])
    index = ExactIndex().build(X)
    ref_dist, ref_idx = twin_kneighbors(X, Q, 9)
    dist, idx = index.query_rows(Q, 9, sets=True)
    assert_same_sets(idx, ref_idx)
    # these rows were answered without the full re-ranking (NaN distances) although their
    # k-th and (k+1)-th candidates are within the proxy's error of each other
    close = twin_kneighbors(X, Q, 10)[0]
    tight = (close[:, 9] - close[:, 8]) < 1e-6
    assert (np.isnan(dist[:, 0]) & tight).any()


def test_rows_the_candidates_stop_short_for_get_the_full_answer(rng, monkeypatch):
    # no first-pass slack: the threshold from the bounds exceeds what the candidates cover for
    # some rows, which then take the ordered path (distances present); the rest are answered
    import mlneighbors.neighbors._exact as exact

    monkeypatch.setattr(exact, "_FIRST_PASS_SLACK", 0.0)
    X = rng.standard_normal((400, 6)) * 100
    X[::37] *= 1000
    Q = np.vstack([X[:30] + 0.5, rng.standard_normal((30, 6)) * 100])
    dist, idx = ExactIndex(precision="float64").build(X).query_rows(Q, 8, sets=True)
    ref_dist, ref_idx = twin_kneighbors(X, Q, 8)
    assert_same_sets(idx, ref_idx)
    full = ~np.isnan(dist[:, 0])
    assert full.any() and not full.all()
    np.testing.assert_array_equal(dist[full], ref_dist[full])
    np.testing.assert_array_equal(idx[full], ref_idx[full])


@pytest.mark.parametrize("metric", ["euclidean", "cosine"])
def test_symmetric_loo_and_tiles_answer_sets(rng, monkeypatch, metric):
    import mlneighbors.neighbors._exact as exact

    monkeypatch.setattr(exact, "_LOO_MIN_BLOCK", 16)
    monkeypatch.setattr(exact, "_LOO_BLOCKS", 16)
    X = tricky_data(rng, 203, 6)
    index = ExactIndex(metric=metric).build(X)
    assert index.loo_query_rows(X, None, 3, sets=True) is not None  # the symmetric path answers
    for k in (1, 9):
        ref = twin_kneighbors(X, X, k, metric, exclude=np.arange(len(X)))[1]
        assert_same_sets(loo_kneighbors(index, X, k, validated=True, order=False), ref)
    monkeypatch.setattr(exact, "_TILE_ROWS", 16)  # the tiled search: 13 tiles
    monkeypatch.setattr(exact, "_STREAM_QUERIES", 7)
    Q = tricky_queries(rng, X, 41)
    for k in (1, 9):
        assert_same_sets(search(index, Q, k, validated=True, order=False), twin_kneighbors(X, Q, k, metric)[1])


def test_order_false_returns_rows_only_for_any_index(rng):
    from mlneighbors.neighbors import ShardedIndex

    X = rng.standard_normal((50, 4))
    index = ShardedIndex(index=ExactIndex(), n_shards=2).build(X)  # answers no sets
    idx = search(index, X[:5], 3, order=False)
    np.testing.assert_array_equal(idx, index.query(X[:5], 3)[1])
    np.testing.assert_array_equal(loo_kneighbors(index, X, 3, order=False), loo_kneighbors(index, X, 3)[1])


@pytest.mark.parametrize("model, params", [
    ("MLkNN", {}), ("DMLkNN", {}), ("LAMLkNN", {"random_state": 0, "n_clusters": 3}), ("BRkNN", {}),
    ("BRkNN", {"extension": "a"}), ("BRkNN", {"extension": "b"}), ("LPkNN", {}),
])
def test_models_that_count_predict_the_same_from_sets(rng, monkeypatch, model, params):
    import mlneighbors
    from mlneighbors._base import KNeighborsMultilabelBase

    X = tricky_data(rng, 240, 6)
    Q = tricky_queries(rng, X, 50)
    Y = (X[:, :4] + 0.3 * rng.standard_normal((240, 4)) > 0.2).astype(int)
    cls = getattr(mlneighbors, model)
    asked = []
    query = ExactIndex.query_rows

    def recorded(self, Q, k, sets=False):
        asked.append(sets)
        return query(self, Q, k, sets)

    monkeypatch.setattr(ExactIndex, "query_rows", recorded)
    fitted = cls(n_neighbors=7, **params).fit(X, Y)
    got = fitted.predict(Q), fitted.predict_proba(Q)
    # the leave-one-out counts and the queries of the counting rules come from sets (BRkNN's
    # extensions sum the neighbours' set sizes); LPkNN's vote among label sets reads the order;
    # a live model's fit keeps its leave-one-out lists in order, with their distances
    kept = cls.update_rule == "exact" and cls._needs_loo
    assert len(asked) >= 2 and asked == [False] * kept + [model != "LPkNN"] * (len(asked) - kept)
    monkeypatch.setattr(KNeighborsMultilabelBase, "_neighbour_sets", lambda self, X, k: self._query(X, k)[1])
    ordered = cls(n_neighbors=7, **params).fit(X, Y)
    for a, b in zip(got, (ordered.predict(Q), ordered.predict_proba(Q)), strict=True):
        np.testing.assert_array_equal(a, b)


def test_auto_forwards_sets_to_the_exact_search_it_picked(rng):
    from mlneighbors.neighbors import get_index
    from mlneighbors.neighbors._protocol import answers_sets

    X = tricky_data(rng, 200, 5)
    index = get_index("auto").build(X)
    assert index.backend_ == "exact" and answers_sets(index)
    dist, idx = index.query_rows(X[:40], 6, sets=True)
    assert np.isnan(dist[:, 0]).any()  # rows answered from the bounds (no distance computed)
    assert_same_sets(idx, twin_kneighbors(X, X[:40], 6)[1])
    ref = twin_kneighbors(X, X, 6, exclude=np.arange(len(X)))[1]
    assert_same_sets(loo_kneighbors(index, X, 6, validated=True, order=False), ref)


def test_sets_of_rows_the_caller_did_not_validate(rng, monkeypatch):
    # search(..., order=False) on a user's rows (a list here) validates them as query does,
    # then asks for sets all the same; so does the leave-one-out
    X = tricky_data(rng, 200, 5)
    Q = tricky_queries(rng, X, 30)
    index = ExactIndex().build(X)
    asked = []
    real = ExactIndex.query_rows
    monkeypatch.setattr(ExactIndex, "query_rows",
                        lambda self, Q, k, sets=False: asked.append(sets) or real(self, Q, k, sets))
    assert_same_sets(search(index, Q.tolist(), 7, order=False), twin_kneighbors(X, Q, 7)[1])
    assert_same_sets(loo_kneighbors(index, X, 7, order=False),
                     twin_kneighbors(X, X, 7, exclude=np.arange(len(X)))[1])
    assert asked == [True, True]
    with pytest.raises(ValueError, match="features"):
        search(index, Q[:, :3], 7, order=False)
