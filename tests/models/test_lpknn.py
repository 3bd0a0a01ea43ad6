"""LPkNN: hand-computed toy cases, including the tie rule between label sets."""

from __future__ import annotations

import numpy as np

from mlneighbors import LPkNN

X = np.array([[0.0], [1.0], [2.0], [3.0], [10.0], [11.0]])
Y = np.array([[1, 1], [1, 0], [1, 1], [1, 0], [0, 1], [0, 1]])


def test_toy_by_hand():
    model = LPkNN(4).fit(X, Y)
    # 1.4: order 1, 2, 0, 3 -> sets (1,0) (1,1) (1,1) (1,0): 2 - 2 tie, (1,0) occurs first
    # 1.6: order 2, 1, 3, 0 -> (1,1) (1,0) (1,0) (1,1): tie, (1,1) occurs first
    np.testing.assert_array_equal(model.predict([[1.4], [1.6]]), [[1, 0], [1, 1]])
    # scores: the smoothed per-label votes (C + 1) / (k + 1.5): votes (4, 2) for both
    np.testing.assert_allclose(model.predict_proba([[1.4]]), [[5 / 5.5, 3 / 5.5]], rtol=1e-15)
    np.testing.assert_array_equal(model.label_sets_, [[0, 1], [1, 0], [1, 1]])


def test_majority_set():
    model = LPkNN(3).fit(X, Y)
    # 10.2: rows 4, 5, 3 -> (0,1) twice, (1,0) once
    np.testing.assert_array_equal(model.predict([[10.2]]), [[0, 1]])


def test_predicts_only_sets_seen_in_training(rng):
    Xr = rng.normal(size=(70, 3))
    Yr = (rng.random((70, 5)) < 0.3).astype(int)
    predicted = LPkNN(6).fit(Xr, Yr).predict(rng.normal(size=(150, 3)))
    seen = {tuple(row) for row in Yr}
    assert {tuple(row) for row in predicted} <= seen
