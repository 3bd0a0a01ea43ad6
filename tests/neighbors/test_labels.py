"""LabelRestrictedIndex: the masked search of the exact engine and one index per label, against a twin."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from mlneighbors.neighbors import ExactIndex, LabelRestrictedIndex, NeighborCache, ShardedIndex

from ._twins import twin_label_neighbours


def _data(rng, n=40, d=4, L=5):
    X = rng.normal(size=(n, d))
    X[7] = X[3]  # a duplicate: another row, kept by leave-one-out
    Y = (rng.random((n, L)) < 0.35).astype(int)
    Y[:, 0] = 0  # nobody
    Y[:, 1] = 0
    Y[[3, 9], 1] = 1  # two members, fewer than b
    Y[:, 2] = 1  # everybody
    Q = rng.normal(size=(12, d))
    return X, Y, Q


def _indexes(metric):
    return {
        "masked": ExactIndex(metric=metric),
        "per-label": ShardedIndex(ExactIndex(metric=metric), n_shards=3),  # not the exact engine
    }


@pytest.mark.parametrize("metric", ["euclidean", "cosine"])
@pytest.mark.parametrize("design", ["masked", "per-label"])
@pytest.mark.parametrize("loo", [False, True])
def test_neighbours_equal_the_twin(rng, metric, design, loo):
    X, Y, Q = _data(rng)
    queries = X if loo else Q
    exclude = np.arange(len(X)) if loo else None
    index = LabelRestrictedIndex(_indexes(metric)[design], n_per_label=3).build(X, Y)
    dist, idx = index.kneighbors(queries, exclude=exclude)
    want_d, want_i = twin_label_neighbours(X, Y, queries, 3, metric, exclude=exclude)
    np.testing.assert_array_equal(idx, want_i)
    np.testing.assert_allclose(dist, want_d, rtol=1e-9, atol=1e-9)
    sq = np.concatenate([index.sq_distances(queries[r], None if exclude is None else exclude[r])
                         for r in index.row_blocks(len(queries))])
    np.testing.assert_allclose(np.sort(sq, axis=2), want_d**2, rtol=1e-9, atol=1e-9)


def test_the_design_follows_the_index(rng):
    X, Y, _ = _data(rng)
    masked = LabelRestrictedIndex(ExactIndex(), 2).build(X, Y)
    per_label = LabelRestrictedIndex(ShardedIndex(ExactIndex(), 2), 2).build(X, Y)
    cached = LabelRestrictedIndex(NeighborCache(), 2).build(X, Y)  # the wrapped exact engine
    assert type(masked._search).__name__ == "_MaskedSearch" == type(cached._search).__name__
    assert type(per_label._search).__name__ == "_PerLabelSearch" and per_label.exact


def test_sparse_rows_give_the_dense_result(rng):
    X, Y, Q = _data(rng)
    X = np.where(np.abs(X) < 0.6, 0.0, X)
    dense = LabelRestrictedIndex(ExactIndex(), 3).build(X, Y).kneighbors(Q)
    sparse = LabelRestrictedIndex(ExactIndex(), 3).build(sp.csr_matrix(X), Y).kneighbors(sp.csr_matrix(Q))
    np.testing.assert_array_equal(sparse[1], dense[1])
    np.testing.assert_allclose(sparse[0], dense[0], rtol=1e-9)


def test_tiny_working_memory_gives_the_same_result(rng):
    import mlneighbors

    X, Y, Q = _data(rng)
    index = LabelRestrictedIndex(ExactIndex(), 3).build(X, Y)
    want = index.kneighbors(Q)
    with mlneighbors.config_context(working_memory=0.001):
        assert len(index.row_blocks(len(Q))) == len(Q)  # one query a block
        got = index.kneighbors(Q)
    np.testing.assert_array_equal(got[1], want[1])
    # the masked search's GEMM rounds a row's products differently in blocks of other sizes
    np.testing.assert_allclose(got[0], want[0], rtol=1e-14)


@pytest.mark.parametrize("loo", [False, True])
def test_a_block_gathered_in_chunks_equals_the_twin(rng, loo):
    """The masked search's product covers a whole block of queries and its member columns are
    gathered in smaller chunks of the block's rows: every chunk ends up in its own rows."""
    import mlneighbors

    X, Y, Q = _data(rng, n=200, L=20)
    Y[:, 3:] = rng.random((200, 17)) < 0.6  # many members: the gathered columns outweigh a distance row
    queries, exclude = (X, np.arange(len(X))) if loo else (Q, None)
    index = LabelRestrictedIndex(ExactIndex(), n_per_label=3).build(X, Y)
    with mlneighbors.config_context(working_memory=0.2):
        blocks = index.row_blocks(len(queries))
        chunks = index._search._chunks(blocks[0].stop - blocks[0].start)
        assert len(chunks) > 1  # a block holds several chunks
        dist, idx = index.kneighbors(queries, exclude=exclude)
        sq = np.concatenate([index.sq_distances(queries[r], None if exclude is None else exclude[r])
                             for r in blocks])
    want_d, want_i = twin_label_neighbours(X, Y, queries, 3, "euclidean", exclude=exclude)
    np.testing.assert_array_equal(idx, want_i)
    np.testing.assert_allclose(dist, want_d, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(np.sort(sq, axis=2), want_d**2, rtol=1e-9, atol=1e-9)
