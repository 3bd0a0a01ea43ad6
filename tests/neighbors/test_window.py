"""PCAWindowIndex and its window search: loop twins, the protocol, bad parameters."""

from __future__ import annotations

import numpy as np
import pytest

from mlneighbors.neighbors import ExactIndex, PCAWindowIndex, get_index, window_starts

from ..models.twins import axis_window


def test_window_starts_match_the_two_pointer_walk(rng):
    n, c = 40, 3
    coords = rng.integers(0, 8, size=(n, c)).astype(float)  # many equal coordinates
    order = np.argsort(coords, axis=0, kind="stable").T
    sorted_coords = np.take_along_axis(coords.T, order, axis=1)
    x = np.vstack([rng.integers(-2, 10, size=(30, c)) / 1.0, rng.normal(4, 3, size=(30, c))])
    for width in [1, 5, 13, 40]:
        start = window_starts(sorted_coords, x, width)
        for q in range(len(x)):
            for j in range(c):
                got = set(order[j, start[q, j] : start[q, j] + width])
                assert got == axis_window(list(coords[:, j]), x[q, j], width)


def test_all_candidates_give_the_exact_cosine_neighbours_of_the_projection(rng):
    X = rng.normal(size=(80, 6))
    Q = rng.normal(size=(10, 6))
    index = PCAWindowIndex(n_components=3, n_candidates=1000).build(X)
    Z = (X - index.mean_) @ index.components_.T
    Zq = (Q - index.mean_) @ index.components_.T
    want_d, want_i = ExactIndex(metric="cosine").build(Z).query(Zq, 5)
    dist, idx = index.query(Q, 5)
    np.testing.assert_array_equal(idx, want_i)
    np.testing.assert_allclose(dist, want_d, rtol=1e-9, atol=1e-12)
    assert index.candidate_fraction(Q) == 1.0


def test_registered_and_cosine_only():
    assert isinstance(get_index("pca-window"), PCAWindowIndex)
    with pytest.raises(ValueError, match="does not support metric='euclidean'"):
        get_index("pca-window", metric="euclidean")
    assert not PCAWindowIndex.exact


@pytest.mark.parametrize(
    "params, match",
    [({"n_candidates": 0}, "n_candidates"), ({"n_components": 1.5}, "n_components"),
     ({"n_components": 99}, "n_components=99 must be at most")],
)
def test_bad_parameters(rng, params, match):
    with pytest.raises(ValueError, match=match):
        PCAWindowIndex(**params).build(rng.normal(size=(20, 4)))


def test_k_above_the_candidates_is_refused(rng):
    index = PCAWindowIndex(n_candidates=5).build(rng.normal(size=(20, 4)))
    with pytest.raises(ValueError, match="k=6 is larger than n_candidates=5"):
        index.query(rng.normal(size=(2, 4)), 6)
