"""DML-kNN: a hand-computed toy case, and delta >= k putting every training row in A."""

from __future__ import annotations

import numpy as np
import pytest

from mlneighbors import DMLkNN

from . import twins
from .conftest import corner_data

# the toy of test_mlknn: k = 1, leave-one-out count vectors C_i = (1,0) for rows 0-2 and
# (0,1) for rows 3-5; C1 = (3, 4), C0 = (3, 2); priors (1/2, 5/8)
X = np.array([[0.0], [1.0], [3.0], [10.0], [11.0], [13.0]])
Y = np.array([[1, 0], [1, 0], [0, 1], [0, 1], [0, 1], [1, 1]])
Q = [[0.4], [12.4]]  # C_x = (1, 0) (neighbour row 0) and (1, 1) (neighbour row 5)


def test_toy_by_hand_delta_0():
    model = DMLkNN(1, delta=0).fit(X, Y)
    # query 0.4: A = rows with C_i = (1, 0) = {0, 1, 2}
    #   label 0 (C=1): V1 = 2 (rows 0, 1), V0 = 1 (row 2): a = 1/2 * 3/(2+3) = 0.3, b = 1/2 * 2/5 = 0.2
    #   label 1 (C=0): V1 = 1 (row 2), V0 = 2: a = 5/8 * 2/(2+4) = 5/24, b = 3/8 * 3/(2+2) = 9/32
    # query 12.4: A = rows with C_i = (1, 1) = {}: V = 0
    #   label 0: a = 1/2 * 1/5 = b: an exact tie, predicted (score reported just above 1/2)
    #   label 1: a = 5/8 * 1/6 = 5/48, b = 3/8 * 1/4 = 3/32 -> 10/19
    proba = model.predict_proba(Q)
    np.testing.assert_allclose(proba, [[0.6, 20 / 47], [0.5, 10 / 19]], rtol=1e-14)
    assert proba[1, 0] == np.nextafter(0.5, 1.0)
    np.testing.assert_array_equal(model.predict(Q), [[1, 0], [1, 1]])


def test_toy_by_hand_delta_1():
    # every count is 0 or 1, so delta = 1 = k puts all six rows in A: V1 = c1[l, C_x]
    model = DMLkNN(1, delta=1).fit(X, Y)
    # query 12.4, label 0 (C=1): V1 = #{C_i(0)=1, Y=1} = 2, V0 = 1 -> 0.6 as for query 0.4
    # label 1 (C=1): V1 = #{C_i(1)=1, Y=1} = 3, V0 = 0: a = 5/8 * 4/6, b = 3/8 * 1/4 -> 40/49
    np.testing.assert_allclose(model.predict_proba(Q)[1], [0.6, 40 / 49], rtol=1e-14)


@pytest.mark.parametrize("variant", ["everybody", "empty"])
@pytest.mark.parametrize("k", [2, 5])
def test_delta_at_least_k_puts_every_training_row_in_A(variant, k):
    X2, Y2, Q2 = corner_data(np.random.default_rng(7), variant)
    expected_scores, expected_predictions = twins.dmlknn(X2, Y2, Q2, k, everyone=True)
    for delta in (k, k + 1, 100):
        model = DMLkNN(k, delta=delta).fit(X2, Y2)
        np.testing.assert_array_equal(model.predict_proba(Q2), expected_scores)
        np.testing.assert_array_equal(model.predict(Q2), expected_predictions)
