"""The examples in the models' docstrings run and print what they show."""

from __future__ import annotations

import doctest
import importlib

import pytest


@pytest.mark.parametrize("module", ["mlknn", "brknn", "lpknn", "dmlknn", "lamlknn"])
def test_docstring_examples(module):
    mod = importlib.import_module(f"mlneighbors.{module}")
    result = doctest.testmod(mod, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0
    assert result.failed == 0
