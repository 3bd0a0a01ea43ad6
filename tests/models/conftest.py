"""Small data sets with the corner cases built in, for the model tests (one generator)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp


def corner_data(rng, variant="everybody", n_train=40, n_test=24, n_features=3, n_labels=6, high=3,
                continuous=False):
    """Features and labels with every corner case a model must handle.

    Features: integers in ``0..high-1`` (exact distances, many exact ties, duplicate rows,
    zeros for CSR), or standard normal with ``continuous=True``.  Rows 3, 5 and 11 are copies
    of each other, and query 0 is a copy of them.

    Labels: label 0 nobody has; label 2 has exactly two members (rows 4 and 11: fewer than
    BKNN's b = 5); row 4 carries every label but 0.  ``variant="everybody"``: label 1 is
    carried by every row; ``variant="empty"``: rows 2 and 7 carry no label, and label sets
    are sparse.
    """
    if continuous:
        X = rng.normal(size=(n_train, n_features))
        Q = rng.normal(size=(n_test, n_features))
    else:
        X = rng.integers(0, high, size=(n_train, n_features)).astype(np.float64)
        Q = rng.integers(0, high, size=(n_test, n_features)).astype(np.float64)
    X[5] = X[3]
    X[11] = X[3]
    Q[0] = X[3]
    density = 0.5 if variant == "everybody" else 0.25
    Y = (rng.random((n_train, n_labels)) < density).astype(np.int64)
    Y[:, 0] = 0
    Y[:, 2] = 0
    Y[[4, 11], 2] = 1
    Y[4, 1:] = 1
    if variant == "everybody":
        Y[:, 1] = 1
    else:
        Y[[2, 7]] = 0
    return X, Y, Q


@pytest.fixture
def corner(rng):
    """:func:`corner_data` with continuous features (4 of them) and 15 queries."""
    return corner_data(rng, n_features=4, n_test=15, continuous=True)


@pytest.fixture(params=["dense", "csr"])
def fmt(request):
    return request.param


def to_format(X, fmt):
    return sp.csr_matrix(X) if fmt == "csr" else X
