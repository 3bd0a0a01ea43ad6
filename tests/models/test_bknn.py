"""BKNN: hand-computed case, loop twins, log space, thresholds, contract and bad input."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import NotFittedError

from mlneighbors import BKNN
from mlneighbors.bknn import balanced_scores, learn_thresholds
from mlneighbors.exceptions import LabelWarning
from mlneighbors.neighbors import ExactIndex, ShardedIndex

from .twins import (
    best_f_brute,
    bknn_neighbour_sq_distances,
    bknn_scores_loop,
    bknn_scores_naive,
    f_alpha,
)


def fit_quiet(model, X, Y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LabelWarning)
        return model.fit(X, Y)


def scores_f(model, Q):
    """The balanced scores f: predict_proba is (f + 1) / n_labels."""
    return model.predict_proba(Q) * model.n_labels_ - 1.0


def test_hand_computed_case():
    X = np.array([[0.0], [1.0], [3.0]])
    Y = np.array([[1, 0], [1, 1], [0, 1]])
    model = BKNN(n_per_label=1, sigma=1.0).fit(X, Y)
    # query 0: label 0 -> row 0 at d = 0 (W = 1); label 1 -> row 1 at d = 1 (W = e^-1/2)
    w = math.exp(-0.5)
    sbar = (1 + w) / 2
    expected = [(1 - sbar) / sbar, (w - sbar) / sbar]
    np.testing.assert_allclose(scores_f(model, [[0.0]])[0], expected, rtol=1e-12)
    # leave-one-out training scores of row 0: label 0 -> row 1 (d = 1), label 1 -> row 1
    # (d = 1): f = 0 for both; row 2: label 0 -> row 1 (d = 2), label 1 -> row 1 (d = 2)
    loo = bknn_scores_loop(X, Y, X, 1, 1.0, loo=True)
    np.testing.assert_allclose(loo[0], [0.0, 0.0], atol=1e-15)


def test_scores_match_loop_twin(corner):
    X, Y, Q = corner
    model = fit_quiet(BKNN(n_per_label=5, sigma=2.0), X, Y)
    expected = bknn_scores_loop(X, Y, Q, 5, 2.0)
    np.testing.assert_allclose(scores_f(model, Q), expected, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("metric", ["euclidean", "cosine"])
def test_leave_one_out_thresholds_reach_the_brute_force_maximum(corner, metric):
    X, Y, _ = corner
    model = fit_quiet(BKNN(n_per_label=3, metric=metric, alpha=0.4), X, Y)
    loo = bknn_scores_loop(X, Y, X, 3, model.sigma_, loo=True, metric=metric)
    for label in range(Y.shape[1]):
        best = best_f_brute(list(loo[:, label]), list(Y[:, label]), 0.4)
        reached = f_alpha(list(loo[:, label]), list(Y[:, label]), model.thresholds_[label], 0.4)
        assert reached == pytest.approx(best, abs=1e-12)
        assert model.train_fscores_[label] == pytest.approx(best, abs=1e-12)


def test_auto_sigma_is_the_mean_squared_distance_to_the_bth_member(corner):
    X, Y, _ = corner
    b = 4
    model = fit_quiet(BKNN(n_per_label=b), X, Y)
    values = []
    for i in range(len(X)):
        per_label = bknn_neighbour_sq_distances(X, Y, X[i], b, exclude=i)
        values += [d2[-1] for label, d2 in enumerate(per_label) if Y[i, label] and d2]
    assert model.sigma_ == pytest.approx(np.mean(values), rel=1e-12)


@pytest.mark.parametrize("metric", ["euclidean", "cosine"])
def test_masked_search_equals_one_index_per_label(corner, metric):
    X, Y, Q = corner
    fast = fit_quiet(BKNN(n_per_label=3, metric=metric), X, Y)
    # an exact index that is not the exact engine: one copy of it per label
    other = ShardedIndex(ExactIndex(metric=metric), n_shards=2)
    per_label = fit_quiet(BKNN(n_per_label=3, metric=metric, backend=other), X, Y)
    assert fast.sigma_ == pytest.approx(per_label.sigma_, rel=1e-12)
    np.testing.assert_allclose(fast.thresholds_, per_label.thresholds_, rtol=1e-9)
    np.testing.assert_allclose(fast.predict_proba(Q), per_label.predict_proba(Q), rtol=1e-9)
    np.testing.assert_array_equal(fast.predict(Q), per_label.predict(Q))


def test_dense_and_sparse_input_agree(corner):
    X, Y, Q = corner
    X = np.where(np.abs(X) < 0.7, 0.0, X)
    dense = fit_quiet(BKNN(n_per_label=3), X, Y)
    sparse = fit_quiet(BKNN(n_per_label=3), sp.csr_matrix(X), sp.csr_matrix(Y))
    np.testing.assert_allclose(dense.thresholds_, sparse.thresholds_, rtol=1e-9)
    np.testing.assert_allclose(dense.predict_proba(Q), sparse.predict_proba(sp.csr_matrix(Q)), rtol=1e-9)
    np.testing.assert_array_equal(dense.predict(Q), sparse.predict(Q))


def test_log_space_equals_the_naive_formula_where_it_does_not_underflow(rng):
    X = rng.normal(size=(30, 3))
    Y = (rng.random((30, 4)) < 0.5).astype(int)
    Y[0] = 1
    Q = rng.normal(size=(10, 3))
    model = BKNN(n_per_label=3, sigma=1.5).fit(X, Y)
    naive = bknn_scores_naive(X, Y, Q, 3, 1.5)
    assert np.isfinite(naive).all()
    np.testing.assert_allclose(scores_f(model, Q), naive, rtol=1e-11, atol=1e-13)


def test_high_dimensional_scores_stay_finite_where_the_naive_ratio_is_nan(rng):
    # d = 1000: every squared distance is about 2000, so exp(-d2 / 2) underflows to 0
    X = rng.normal(size=(40, 1000))
    Y = (rng.random((40, 3)) < 0.5).astype(int)
    Y[0] = 1
    Q = rng.normal(size=(5, 1000))
    model = BKNN(n_per_label=3, sigma=1.0).fit(X, Y)
    assert np.isnan(bknn_scores_naive(X, Y, Q[:2], 3, 1.0)).all()
    f = scores_f(model, Q)
    assert np.isfinite(f).all() and np.isfinite(model.thresholds_).all()
    np.testing.assert_allclose(f, bknn_scores_loop(X, Y, Q, 3, 1.0), rtol=1e-9, atol=1e-12)


def test_enron_scores_are_finite(shared_data):
    from mlneighbors import load_dataset

    train = load_dataset("enron", "train")
    test = load_dataset("enron", "test")
    X, Y = train.X[:400], train.Y[:400]
    model = fit_quiet(BKNN(sigma=0.05), X, Y)  # W = exp(-10 * d2): all underflow naively
    f = model.decision_function(test.X[:100])
    present = np.isfinite(model.thresholds_)
    assert np.isfinite(f[:, present]).all()
    assert np.isfinite(model.predict_proba(test.X[:100])).all()


# -- the threshold kernel ------------------------------------------------------------------


@pytest.mark.parametrize("alpha", [0.2, 0.5, 0.9])
def test_learn_thresholds_matches_brute_force(rng, alpha):
    n, L = 60, 8
    scores = np.round(rng.normal(size=(n, L)) * 2) / 4  # many ties
    Y = rng.random((n, L)) < rng.random(L)
    Y[:, 0] = True  # predicting everything is best
    Y[:, 1] = False  # no positive row
    h, best = learn_thresholds(scores, Y, alpha)
    for label in range(L):
        col, y = list(scores[:, label]), list(Y[:, label])
        expected = best_f_brute(col, y, alpha)
        assert best[label] == pytest.approx(expected, abs=1e-12)
        assert f_alpha(col, y, h[label], alpha) == pytest.approx(expected, abs=1e-12)
    assert h[0] == min(-2.0, scores[:, 0].min() - 1) and h[1] == np.inf and best[1] == 0.0


def test_thresholds_are_midpoints_and_prefer_fewer_predictions():
    scores = np.array([[3.0], [2.0], [1.0], [0.0]])
    Y = np.array([[1], [0], [1], [0]])
    # predicting {3} gives F1 = 2/3, predicting {3, 2, 1} gives 2/(0.5*3 + 0.5*2) = 0.8
    h, best = learn_thresholds(scores, Y)
    assert h[0] == 0.5 and best[0] == pytest.approx(0.8)
    # equal F: {top} (F1 = 1/(0.5 + 0.5 * 2) = 2/3) vs all four (2/(0.5*4 + 1) = 2/3)
    h, best = learn_thresholds(np.array([[4.0], [3.0], [2.0], [1.0]]), np.array([[1], [0], [0], [1]]))
    assert best[0] == pytest.approx(2 / 3) and h[0] == 3.5


def test_balanced_scores_without_any_neighbour():
    sq = np.full((2, 3, 2), np.inf)
    sq[1, 0, 0] = 4.0
    f = balanced_scores(sq, 1.0)
    np.testing.assert_array_equal(f[0], [0.0, 0.0, 0.0])
    np.testing.assert_allclose(f[1], [2.0, -1.0, -1.0])


# -- outputs and the contract --------------------------------------------------------------


def test_predict_proba_is_the_share_of_similarity_mass(corner):
    X, Y, Q = corner
    model = fit_quiet(BKNN(n_per_label=3), X, Y)
    margin = model.decision_function(Q)
    proba = model.predict_proba(Q)
    pred = model.predict(Q)
    assert ((proba >= 0) & (proba <= 1)).all()
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)  # shares of the similarity mass
    np.testing.assert_array_equal(pred, (margin > 0).astype(int))
    # one map for every label: the scores rank labels as f does, the margins shifted back
    finite = np.isfinite(model.thresholds_)
    f = margin[:, finite] + model.thresholds_[finite]
    np.testing.assert_allclose(proba[:, finite], (f + 1) / Y.shape[1], rtol=1e-12, atol=1e-15)


def test_labels_with_few_or_no_members(corner):
    X, Y, Q = corner
    with pytest.warns(LabelWarning):
        model = BKNN(n_per_label=5).fit(X, Y)
    assert model.thresholds_[0] == np.inf and model.train_fscores_[0] == 0.0
    assert (model.predict(Q)[:, 0] == 0).all() and (model.predict_proba(Q)[:, 0] == 0).all()
    np.testing.assert_allclose(scores_f(model, Q)[:, 0], -1.0)
    # label 2 has 2 members (< b): its score uses both, and is finite
    assert (scores_f(model, Q)[:, 2] > -1).all()
    # label 1 is carried by every row: always predicted
    assert model.thresholds_[1] == -2.0 and (model.predict(Q)[:, 1] == 1).all()


def test_a_label_with_one_member_is_not_predicted_on_every_row(rng):
    # the member's leave-one-out score is -1 (no other member): "predict every row" is the
    # only threshold with a true positive, and it is no better than chance
    X = rng.normal(size=(60, 3))
    Y = (X[:, :2] > 0).astype(int)
    Y = np.column_stack([Y, np.zeros(60, dtype=int)])
    Y[17, 2] = 1
    model = BKNN(n_per_label=5).fit(X, Y)
    Q = rng.normal(size=(30, 3))
    assert model.thresholds_[2] == np.inf
    assert model.predict(Q)[:, 2].sum() == 0
    assert model.predict(X[17:18])[0, 2] == 0  # not even on the member itself
    assert model.predict(Q)[:, :2].sum() > 0


def test_permuting_labels_permutes_outputs(corner):
    X, Y, Q = corner
    perm = np.array([4, 0, 5, 1, 3, 2])
    a = fit_quiet(BKNN(n_per_label=3, sigma=1.0), X, Y)
    b = fit_quiet(BKNN(n_per_label=3, sigma=1.0), X, Y[:, perm])
    np.testing.assert_allclose(a.predict_proba(Q)[:, perm], b.predict_proba(Q), rtol=1e-12)
    np.testing.assert_array_equal(a.predict(Q)[:, perm], b.predict(Q))


def test_shuffling_training_rows_changes_nothing(rng):
    X = rng.normal(size=(50, 3))
    Y = (rng.random((50, 4)) < 0.4).astype(int)
    Q = rng.normal(size=(10, 3))
    perm = rng.permutation(50)
    a = BKNN(n_per_label=3).fit(X, Y)
    b = BKNN(n_per_label=3).fit(X[perm], Y[perm])
    assert a.sigma_ == pytest.approx(b.sigma_, rel=1e-12)
    np.testing.assert_allclose(a.predict_proba(Q), b.predict_proba(Q), rtol=1e-10)


def test_one_dimensional_target_predicts_the_largest_score(rng):
    X = np.vstack([rng.normal(0, 1, (15, 2)), rng.normal(4, 1, (15, 2)), rng.normal(-4, 1, (15, 2))])
    y = np.repeat(["a", "b", "c"], 15)
    model = BKNN(n_per_label=3).fit(X, y)
    Q = np.array([[0.0, 0.0], [4.0, 4.0], [-4.0, -4.0]])
    np.testing.assert_array_equal(model.predict(Q), ["a", "b", "c"])
    proba = model.predict_proba(Q)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_array_equal(np.argmax(model.decision_function(Q), axis=1), [0, 1, 2])


# -- bad input -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "params, match",
    [
        ({"sigma": 0.0}, "sigma"),
        ({"sigma": -1.0}, "sigma"),
        ({"sigma": np.inf}, "sigma"),
        ({"sigma": "median"}, "sigma"),
        ({"alpha": 0.0}, "alpha"),
        ({"alpha": 1.0}, "alpha"),
        ({"alpha": 1.5}, "alpha"),
        ({"n_per_label": 0}, "n_per_label"),
        ({"metric": "manhattan"}, "metric"),
        ({"backend": "no-such-backend"}, "backend"),
    ],
)
def test_bad_parameters(corner, params, match):
    X, Y, _ = corner
    with pytest.raises(ValueError, match=match):
        fit_quiet(BKNN(**params), X, Y)


def test_bad_data(corner):
    X, Y, Q = corner
    with pytest.raises(NotFittedError):
        BKNN().predict(Q)
    bad = X.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        BKNN().fit(bad, Y)
    with pytest.raises(ValueError):
        BKNN().fit(X, Y[:-1])
    with pytest.raises(ValueError, match="y must be a binary label indicator|Unknown label type"):
        BKNN().fit(X, Y * 2.5)
    model = fit_quiet(BKNN(), X, Y)
    with pytest.raises(ValueError, match="features"):
        model.predict(Q[:, :3])
    bad_q = Q.copy()
    bad_q[1, 1] = np.inf
    with pytest.raises(ValueError, match="infinity|inf"):
        model.predict(bad_q)


#: the shared sets where BKNN's scores ranked above the labels' training frequencies before
#: the scores became shares of f (and medical, where they ranked far below)
RANKS_ABOVE_PREVALENCE = ["bibtex", "emotions", "genbase", "scene", "yeast", "ohsumed", "medical"]


@pytest.mark.parametrize("name", RANKS_ABOVE_PREVALENCE)
def test_ranking_beats_the_prevalence_ranking_on_shared_data(shared_data, name):
    from mlneighbors.datasets import load_dataset
    from mlneighbors.metrics import average_precision

    train, test = load_dataset(name, "train"), load_dataset(name, "test")
    Y, Yt = np.asarray(train.Y), np.asarray(test.Y)
    model = fit_quiet(BKNN(), train.X, Y)
    prevalence = np.broadcast_to(Y.mean(axis=0), Yt.shape)
    assert average_precision(Yt, model.predict_proba(test.X)) > average_precision(Yt, prevalence)
