"""The scikit-learn estimator contract (no expected failures) and the docstring examples."""

from __future__ import annotations

import doctest

import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from mlneighbors import BKNN, BLDA, HybridKNN
from mlneighbors import bknn, blda, hybrid
from mlneighbors.neighbors import ExactIndex


@parametrize_with_checks(
    [
        BKNN(),
        BKNN(metric="cosine", backend=ExactIndex(metric="cosine")),  # one index per label
        BLDA(),
        HybridKNN(),
        HybridKNN(exact_search=True),
    ]
)
def test_sklearn_contract(estimator, check):
    check(estimator)


@pytest.mark.parametrize("module", [bknn, blda, hybrid])
def test_docstring_examples(module):
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0
