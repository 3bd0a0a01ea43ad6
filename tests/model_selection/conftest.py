"""Fixtures of the model-selection tests."""

from __future__ import annotations

import numpy as np
import pytest


@pytest.fixture
def data(rng):
    """A small learnable multi-label problem."""
    X = rng.normal(size=(90, 4))
    Y = np.column_stack([X[:, 0] > 0, X[:, 1] > 0.5, X[:, 0] + X[:, 2] > 0.3]).astype(int)
    return X, Y


# ---------------------------------------------------------------------------
# iterative_stratification / MultilabelStratifiedKFold
# ---------------------------------------------------------------------------
