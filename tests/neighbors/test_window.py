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


def _text_like(rng, n=300, d=3000, nnz=25):
    rows = np.repeat(np.arange(n), nnz)
    cols = rng.integers(0, d, size=n * nnz)
    import scipy.sparse as sp

    return sp.csr_matrix((np.ones(n * nnz), (rows, cols)), shape=(n, d))


@pytest.mark.parametrize("solver", ["covariance_eigh", "arpack"])
def test_few_components_of_many_are_computed_alone_and_agree_with_the_full_decomposition(rng, monkeypatch, solver):
    """Dense rows of at most COVARIANCE_MAX_FEATURES features get the few components from the
    covariance matrix, wider ones from ARPACK: both agree with the full decomposition."""
    from sklearn.decomposition import PCA

    from mlneighbors.neighbors import _window

    if solver == "arpack":
        monkeypatch.setattr(_window, "COVARIANCE_MAX_FEATURES", 100)
    X = rng.normal(size=(400, 120)) @ rng.normal(size=(120, 260))  # 4 * 50 < min(n, d)
    assert _window._fit_pca(X, 0.9).svd_solver == solver
    index = PCAWindowIndex(n_components=0.9).build(X)
    full = PCA(n_components=None, svd_solver="full").fit(X)
    c = index.n_components_
    assert c == min(50, np.searchsorted(np.cumsum(full.explained_variance_ratio_), 0.9, side="right") + 1)
    np.testing.assert_allclose(index.explained_variance_ratio_, full.explained_variance_ratio_[:c], rtol=1e-6)
    np.testing.assert_allclose(np.abs(index.components_), np.abs(full.components_[:c]), atol=1e-6)


def test_sparse_high_dimensional_fit_costs_about_one_arpack_pca(rng):
    """The decomposition is decided before it runs: the fit allocates what PCA(50,
    svd_solver="arpack") allocates, never a dense copy of X nor a (d x d) covariance (memory
    counted by tracemalloc, which sees every numpy array; no clock)."""
    import tracemalloc

    from sklearn.decomposition import PCA

    X = _text_like(rng)
    n, d = X.shape

    def peak(fit):
        tracemalloc.start()
        try:
            fit()
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    arpack = peak(lambda: PCA(50, svd_solver="arpack", random_state=0).fit(X))
    index = peak(lambda: PCAWindowIndex().build(X))
    full = peak(lambda: PCA(None, svd_solver="full").fit(X.toarray()))  # what the rule avoids
    assert index < 8 * n * d < 8 * d * d  # less than one dense copy of X, so no covariance either
    assert index < 1.5 * arpack < full, (index, arpack, full)


@pytest.mark.parametrize("kind", ["grid", "normal"])
def test_candidates_ruled_out_by_one_product_change_no_answer(rng, monkeypatch, kind):
    """On small data a query's candidates are checked first by one product with every row; the
    answers equal those of every candidate's own dot product (bit for bit, ties included)."""
    import mlneighbors.neighbors._window as window

    X = rng.integers(0, 3, (300, 12)).astype(float) if kind == "grid" else rng.standard_normal((300, 12))
    Q = np.vstack([X[:20], rng.standard_normal((20, 12))])
    index = PCAWindowIndex(n_components=4, n_candidates=60).build(X)
    assert index._n_train <= 16 * index.n_components_ * 60  # the branch that checks first
    fast = index.query(Q, 7)
    monkeypatch.setattr(window, "_open_candidates", lambda seen, Qn, Zn, k: seen)
    slow = index.query(Q, 7)
    np.testing.assert_array_equal(fast[1], slow[1])
    np.testing.assert_array_equal(fast[0], slow[0])
