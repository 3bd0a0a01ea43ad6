"""ML-kNN: a hand-computed toy case."""

from __future__ import annotations

import numpy as np

from mlneighbors import MLkNN

# x on a line; k = 1.  Leave-one-out nearest: 0->1, 1->0 (tie with nothing: d=1 vs 2),
# 2->1, 3->4, 4->3, 5->4.
X = np.array([[0.0], [1.0], [3.0], [10.0], [11.0], [13.0]])
Y = np.array([[1, 0], [1, 0], [0, 1], [0, 1], [0, 1], [1, 1]])


def test_toy_by_hand():
    model = MLkNN(1, smoothing=1.0).fit(X, Y)
    # label 0: counts C_i = 1,1,1,0,0,0; positives 0,1,5 -> c1 = [1, 2]; negatives 2,3,4 -> c0 = [2, 1]
    # label 1: counts C_i = 0,0,0,1,1,1; positives 2..5 -> c1 = [1, 3]; negatives 0,1 -> c0 = [2, 0]
    np.testing.assert_allclose(model.prior_, [4 / 8, 5 / 8], rtol=1e-15)
    np.testing.assert_allclose(model.cond_prob_true_, [[2 / 5, 3 / 5], [2 / 6, 4 / 6]], rtol=1e-15)
    np.testing.assert_allclose(model.cond_prob_false_, [[3 / 5, 2 / 5], [3 / 4, 1 / 4]], rtol=1e-15)
    # query 0.4: neighbour row 0, C = (1, 0); query 12.4: neighbour row 5, C = (1, 1)
    # label 0, C=1: a = 1/2 * 3/5, b = 1/2 * 2/5 -> 0.6
    # label 1, C=0: a = 5/8 * 1/3 = 5/24, b = 3/8 * 3/4 = 9/32 -> 20/47
    # label 1, C=1: a = 5/8 * 2/3 = 5/12, b = 3/8 * 1/4 = 3/32 -> 40/49
    Q = [[0.4], [12.4]]
    np.testing.assert_allclose(model.predict_proba(Q), [[0.6, 20 / 47], [0.6, 40 / 49]], rtol=1e-14)
    np.testing.assert_array_equal(model.predict(Q), [[1, 0], [1, 1]])
    assert model.n_neighbors_ == 1 and model.n_labels_ == 2 and model.n_features_in_ == 1


def test_exact_tie_is_predicted_and_scores_just_above_half():
    X2 = np.array([[0.0], [1.0], [10.0], [11.0]])
    Y2 = np.array([[1], [0], [1], [0]])
    # k = 2, leave-one-out: 0 -> {1, 2}: C=1; 1 -> {0, 2}: C=2; 2 -> {3, 1}: C=0; 3 -> {2, 1}: C=1
    # c1 (rows 0, 2) = [1, 1, 0], c0 (rows 1, 3) = [0, 1, 1]; prior 3/6 = 1/2
    # query 0.4 -> {0, 1}: C = 1: a = 1/2 * 2/5 = b exactly
    model = MLkNN(2).fit(X2, Y2)
    assert model.prior_[0] == 0.5
    assert model.cond_prob_true_[0, 1] == model.cond_prob_false_[0, 1] == 2 / 5
    assert model.predict([[0.4]])[0, 0] == 1
    score = model.predict_proba([[0.4]])[0, 0]
    assert score == np.nextafter(0.5, 1.0)


def test_no_smoothing_can_score_0_and_1():
    X2 = np.array([[0.0], [1.0], [10.0], [11.0]])
    Y2 = np.array([[1], [0], [1], [0]])
    # leave-one-out, k = 1: 0->1 (C=0, Y=1), 1->0 (C=1, Y=0), 2->3 (C=0, Y=1), 3->2 (C=1, Y=0)
    # c1 = [2, 0], c0 = [0, 2]: with s = 0 the likelihoods are 0/1
    model = MLkNN(1, smoothing=0.0).fit(X2, Y2)
    np.testing.assert_array_equal(model.cond_prob_true_, [[1.0, 0.0]])
    np.testing.assert_array_equal(model.cond_prob_false_, [[0.0, 1.0]])
    np.testing.assert_array_equal(model.predict_proba([[0.2], [0.9]]), [[0.0], [1.0]])
    np.testing.assert_array_equal(model.predict([[0.2], [0.9]]), [[0], [1]])
