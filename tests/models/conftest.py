"""Small data sets with the corner cases built in, for the model tests."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp


def tie_data(rng, variant="everybody", n_train=40, n_test=24, n_features=3, n_labels=6, high=3):
    """Integer-valued features (exact distances, many exact ties) and labels with corner cases.

    - features in 0..high-1: many duplicate rows and equal distances; zeros for CSR;
    - rows 3, 5 and 11 are copies of each other, and query 0 is a copy of them;
    - label 0: nobody has it; row 4 has every other label;
    - ``variant="everybody"``: label 1 is carried by every row;
      ``variant="empty"``: rows 2 and 7 carry no label, and label sets are sparse.
    """
    X = rng.integers(0, high, size=(n_train, n_features)).astype(np.float64)
    Q = rng.integers(0, high, size=(n_test, n_features)).astype(np.float64)
    X[5] = X[3]
    X[11] = X[3]
    Q[0] = X[3]
    density = 0.5 if variant == "everybody" else 0.25
    Y = (rng.random((n_train, n_labels)) < density).astype(np.int64)
    Y[:, 0] = 0
    Y[4, 1:] = 1
    if variant == "everybody":
        Y[:, 1] = 1
    else:
        Y[[2, 7]] = 0
    return X, Y, Q


@pytest.fixture(params=["dense", "csr"])
def fmt(request):
    return request.param


def to_format(X, fmt):
    return sp.csr_matrix(X) if fmt == "csr" else X
