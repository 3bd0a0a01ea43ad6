"""HybridKNN: label model, candidate windows, loop twin, exact limits, contract, bad input."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import NotFittedError

from mlneighbors import HybridKNN
from mlneighbors.hybrid import label_regression
from mlneighbors.neighbors import ExactIndex

from .twins import hybrid_loop, label_regression_loop


def data(rng, n=60, d=6, L=4, n_queries=12):
    X = rng.normal(size=(n, d))
    Y = (rng.random((n, L)) < 0.4).astype(int)
    X += Y @ rng.normal(scale=1.5, size=(L, d))
    X[7] = X[3]  # a duplicate row
    Q = rng.normal(size=(n_queries, d))
    Q[0] = X[3]
    return X, Y, Q


def project(model, X):
    return (X - model.mean_) @ model.components_.T


def label_model_twin(model, Y, neighbours, k):
    mean_y = Y[neighbours].mean(axis=1)
    scores = np.clip(model.label_intercept_ + mean_y @ model.label_coef_.T, 0.0, 1.0)
    return scores, scores >= model.threshold


def test_label_regression_matches_per_label_ridge(rng):
    Y = (rng.random((80, 5)) < 0.4).astype(int)
    Y[:, 4] = Y[:, 0]  # collinear labels stay defined
    Y[:, 3] = 1  # a constant label
    intercept, coef = label_regression(Y, ridge=1e-3)
    e_intercept, e_coef = label_regression_loop(Y, 1e-3)
    np.testing.assert_allclose(coef, e_coef, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(intercept, e_intercept, rtol=1e-8, atol=1e-10)
    assert np.all(np.diag(coef) == 0)
    np.testing.assert_allclose(coef[3], 0.0, atol=1e-12)
    assert intercept[3] == pytest.approx(1.0)


@pytest.mark.parametrize("label_model", ["regression", "vote"])
def test_predictions_match_the_loop_twin(rng, label_model):
    X, Y, Q = data(rng)
    model = HybridKNN(n_neighbors=5, n_components=3, n_candidates=7, label_model=label_model).fit(X, Y)
    nbrs, sizes, scores, decisions = hybrid_loop(
        project(model, X), Y, project(model, Q), 5, 7,
        model.label_intercept_, model.label_coef_, model.threshold,
    )
    _, idx = model.kneighbors(Q)
    np.testing.assert_array_equal(idx, nbrs)
    assert model.candidate_fraction(Q) == pytest.approx(sizes.mean() / len(X))
    np.testing.assert_allclose(model.predict_proba(Q), scores, rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(model.predict(Q), decisions.astype(int))


def test_vote_is_the_mean_of_the_neighbours_labels(rng):
    X, Y, Q = data(rng)
    model = HybridKNN(n_neighbors=4, n_candidates=10, label_model="vote").fit(X, Y)
    _, idx = model.kneighbors(Q)
    np.testing.assert_allclose(model.predict_proba(Q), Y[idx].mean(axis=1))


def test_all_candidates_equal_exact_cosine_knn_in_the_projected_space(rng):
    X, Y, Q = data(rng, n=50)
    model = HybridKNN(n_neighbors=6, n_components=4, n_candidates=50).fit(X, Y)
    dist, idx = ExactIndex(metric="cosine").build(project(model, X)).query(project(model, Q), 6)
    got_dist, got_idx = model.kneighbors(Q)
    np.testing.assert_array_equal(got_idx, idx)
    np.testing.assert_allclose(got_dist, dist, atol=1e-12)
    assert model.candidate_fraction(Q) == 1.0
    scores, decisions = label_model_twin(model, Y, idx, 6)
    np.testing.assert_allclose(model.predict_proba(Q), scores, rtol=1e-12)
    np.testing.assert_array_equal(model.predict(Q), decisions.astype(int))


def test_exact_search_is_exact_cosine_knn_in_the_feature_space(rng):
    X, Y, Q = data(rng)
    model = HybridKNN(n_neighbors=5, backend="exact").fit(X, Y)
    dist, idx = ExactIndex(metric="cosine").build(X).query(Q, 5)
    got_dist, got_idx = model.kneighbors(Q)
    np.testing.assert_array_equal(got_idx, idx)
    np.testing.assert_array_equal(got_dist, dist)
    assert model.candidate_fraction(Q) == 1.0
    scores, decisions = label_model_twin(model, Y, idx, 5)
    np.testing.assert_allclose(model.predict_proba(Q), scores, rtol=1e-12)
    np.testing.assert_array_equal(model.predict(Q), decisions.astype(int))


def test_candidate_fraction_bounds(rng):
    X, Y, Q = data(rng, n=200)
    model = HybridKNN(n_neighbors=5, n_components=3, n_candidates=10).fit(X, Y)
    fraction = model.candidate_fraction(Q)
    assert 10 / 200 <= fraction <= 30 / 200


def test_n_components_rules(rng):
    X, Y, _ = data(rng)
    X = np.hstack([X, 0.3 * rng.normal(size=(60, 70))])
    full = HybridKNN(n_components=None).fit(X, Y)
    assert full.n_components_ == 60
    cumulative = np.cumsum(full.explained_variance_ratio_)
    model = HybridKNN(n_components=0.9).fit(X, Y)
    assert model.n_components_ == np.searchsorted(cumulative, 0.9, side="right") + 1
    assert HybridKNN(n_components=0.999999).fit(X, Y).n_components_ == 50  # the cap
    assert HybridKNN(n_components=4).fit(X, Y).n_components_ == 4


def test_dense_and_sparse_input_agree(rng):
    X, Y, Q = data(rng)
    X[np.abs(X) < 0.8] = 0.0
    dense = HybridKNN(n_neighbors=5, n_components=4, n_candidates=8).fit(X, Y)
    sparse = HybridKNN(n_neighbors=5, n_components=4, n_candidates=8).fit(sp.csr_matrix(X), Y)
    np.testing.assert_allclose(np.abs(sparse.components_), np.abs(dense.components_), atol=1e-8)
    np.testing.assert_allclose(sparse.predict_proba(sp.csr_matrix(Q)), dense.predict_proba(Q), atol=1e-8)
    exact_dense = HybridKNN(n_neighbors=5, backend="exact").fit(X, Y)
    exact_sparse = HybridKNN(n_neighbors=5, backend="exact").fit(sp.csr_matrix(X), Y)
    np.testing.assert_array_equal(exact_sparse.predict(sp.csr_matrix(Q)), exact_dense.predict(Q))


def test_threshold_and_one_dimensional_target(rng):
    X, Y, Q = data(rng)
    assert HybridKNN(n_neighbors=5, threshold=0.0).fit(X, Y).predict(Q).all()
    y = np.array(["u", "v", "w"])[rng.integers(0, 3, 60)]
    model = HybridKNN(n_neighbors=5).fit(X, y)
    proba = model.predict_proba(Q)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_array_equal(model.predict(Q), model.classes_[np.argmax(proba, axis=1)])


@pytest.mark.parametrize(
    "params, match",
    [
        ({"n_neighbors": 10, "n_candidates": 5}, "n_candidates"),
        ({"threshold": 1.5}, "threshold"),
        ({"threshold": -0.1}, "threshold"),
        ({"n_components": 61}, "n_components"),
        ({"n_components": 1.5}, "n_components"),
        ({"ridge": 0.0}, "ridge"),
        ({"label_model": "logistic"}, "label_model"),
    ],
)
def test_bad_parameters(rng, params, match):
    X, Y, _ = data(rng)
    with pytest.raises(ValueError, match=match):
        HybridKNN(**params).fit(X, Y)


def test_n_neighbors_above_the_training_rows_is_clipped(rng):
    from mlneighbors.exceptions import NeighborsWarning

    X, Y, Q = data(rng)
    with pytest.warns(NeighborsWarning, match="n_neighbors_=60"):
        model = HybridKNN(n_neighbors=61).fit(X, Y)
    assert model.n_neighbors_ == 60 and model.predict(Q).shape == (len(Q), Y.shape[1])


def test_bad_data(rng):
    X, Y, Q = data(rng)
    with pytest.raises(NotFittedError):
        HybridKNN().predict(Q)
    bad = X.copy()
    bad[1, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        HybridKNN().fit(bad, Y)
    with pytest.raises(ValueError):
        HybridKNN().fit(X, Y[:-2])
    model = HybridKNN(n_neighbors=5, n_candidates=20).fit(X, Y)
    with pytest.raises(ValueError, match="features"):
        model.predict(Q[:, :4])
    with pytest.raises(ValueError, match="k=21 is larger than n_candidates=20"):
        model.kneighbors(Q, n_neighbors=21)
    with pytest.raises(ValueError, match=r"n_neighbors must be an integer in \[1, 60\]"):
        model.kneighbors(Q, n_neighbors=61)
