import numpy as np
import pytest


@pytest.fixture
def corner_data(rng):
    """Small multi-label data with the corner cases built in.

    40 rows, 4 features, 6 labels: label 0 frequent, label 1 with 2 members (fewer than
    b = 5), label 2 nobody has, label 3 carried by every row, labels 4-5 random;
    rows 5 and 6 are duplicates of row 3; row 7 has only label 3 (no other label).
    """
    n = 40
    X = rng.normal(size=(n, 4))
    X[5] = X[3]
    X[6] = X[3]
    Y = np.zeros((n, 6), dtype=np.int64)
    Y[:, 0] = rng.random(n) < 0.6
    Y[[4, 11], 1] = 1
    Y[:, 3] = 1
    Y[:, 4:] = rng.random((n, 2)) < 0.35
    Y[7] = 0
    Y[7, 3] = 1
    Q = rng.normal(size=(15, 4))
    Q[0] = X[3]
    return X, Y, Q
