"""BRkNN, BRkNN-a, BRkNN-b: hand-computed toy cases and the rules' corner cases."""

from __future__ import annotations

import numpy as np
import pytest

from mlneighbors import BRkNN

X = np.array([[0.0], [1.0], [2.0], [10.0], [11.0], [12.0]])
Y = np.array([[1, 0, 0], [1, 1, 0], [0, 1, 0], [0, 0, 1], [0, 0, 0], [0, 0, 0]])
# query 1.0, k=3: rows 1 (d 0), 0 (d 1), 2 (d 1): votes (2, 2, 0), set sizes 2, 1, 1
# query 11.0, k=3: rows 4, 3, 5: votes (0, 0, 1), set sizes 0, 1, 0
Q = np.array([[1.0], [11.0]])


@pytest.mark.parametrize(
    "extension, expected",
    [
        (None, [[1, 1, 0], [0, 0, 0]]),  # 2/3 >= 1/2; 1/3 < 1/2
        ("a", [[1, 1, 0], [0, 0, 1]]),  # empty -> the label of highest confidence
        ("b", [[1, 0, 0], [0, 0, 0]]),  # m = round(4/3) = 1, tie -> label 0; m = round(1/3) = 0
    ],
)
def test_toy_by_hand(extension, expected):
    model = BRkNN(3, extension=extension).fit(X, Y)
    np.testing.assert_array_equal(model.predict(Q), expected)
    # smoothed confidences (C + 1) / (k + 1.5)
    np.testing.assert_allclose(
        model.predict_proba(Q), [[3 / 4.5, 3 / 4.5, 1 / 4.5], [1 / 4.5, 1 / 4.5, 2 / 4.5]], rtol=1e-15
    )


def test_b_rounds_half_up():
    # query 10.4, k=2: rows 3 (size 1) and 4 (size 0): mean 0.5 -> m = 1 (half to even gives 0)
    model = BRkNN(2, extension="b").fit(X, Y)
    np.testing.assert_array_equal(model.predict([[10.4]]), [[0, 0, 1]])
    # query 0.4, k=2: rows 0 (size 1), 1 (size 2): mean 1.5 -> m = 2: labels 0 (2 votes), 1 (1 vote)
    np.testing.assert_array_equal(model.predict([[0.4]]), [[1, 1, 0]])


def test_b_with_m_zero_predicts_the_empty_set(rng):
    Xr = rng.normal(size=(60, 4))
    Yr = np.zeros((60, 5), dtype=int)
    Yr[:, [0, 1, 3, 4]] = Xr[:, :4] > 3  # labels nobody has (the normal never gets there)
    Yr[:6, 2] = 1  # a tenth of the rows carry one label: mean set size below 1/2 almost everywhere
    model = BRkNN(5, extension="b").fit(Xr, Yr)
    Qr = rng.normal(size=(200, 4))
    predicted = model.predict(Qr)
    # m = 0 wherever fewer than 3 of the 5 neighbours carry the label (mean < 1/2)
    votes = np.rint(model.predict_proba(Qr)[:, 2] * 6.5 - 1).astype(int)
    np.testing.assert_array_equal(predicted[votes < 3], 0)
    assert (votes < 3).sum() > 100
    np.testing.assert_array_equal(predicted[votes >= 3].sum(axis=1), 1)


def test_a_is_never_empty_unless_every_confidence_is_zero(rng):
    Xr = rng.normal(size=(80, 3))
    Yr = (rng.random((80, 6)) < 0.3).astype(int)
    Yr[Xr[:, 0] < -0.5] = 0  # a region where no neighbour carries a label: all votes 0
    model = BRkNN(7, extension="a").fit(Xr, Yr)
    Qr = rng.normal(size=(300, 3))
    predicted = model.predict(Qr)
    votes = np.rint(model.predict_proba(Qr) * 8.5 - 1).astype(int)
    empty = predicted.sum(axis=1) == 0
    assert empty.any() and (~empty).any()
    np.testing.assert_array_equal(votes[empty], 0)
    assert (votes[~empty].max(axis=1) > 0).all()
    plain = BRkNN(7).fit(Xr, Yr).predict(Qr)
    fallback = plain.sum(axis=1) == 0
    # where plain BRkNN predicts nothing, -a adds exactly one label, the first of highest vote
    rows = fallback & ~empty
    np.testing.assert_array_equal(predicted[rows].sum(axis=1), 1)
    np.testing.assert_array_equal(predicted[rows].argmax(axis=1), votes[rows].argmax(axis=1))
    np.testing.assert_array_equal(predicted[~fallback], plain[~fallback])


def test_scores_are_above_half_exactly_where_plain_brknn_predicts(rng):
    Xr = rng.normal(size=(50, 3))
    Yr = (rng.random((50, 4)) < 0.5).astype(int)
    for k in (4, 5):  # even k: C = k/2 is a predicted tie
        model = BRkNN(k).fit(Xr, Yr)
        Qr = rng.normal(size=(100, 3))
        np.testing.assert_array_equal(model.predict_proba(Qr) > 0.5, model.predict(Qr) == 1)
