"""The one working-memory setting: set, scoped, validated, and never changing a result."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import mlneighbors
from mlneighbors import BKNN, DMLkNN, MLkNN, config_context, get_config, set_config
from mlneighbors._config import block_rows, working_memory_bytes


def test_default_scoped_and_restored():
    assert get_config() == {"working_memory": 256, "progress": False}
    with config_context(working_memory=8):
        assert get_config()["working_memory"] == 8 and working_memory_bytes() == 8 * 2**20
        with config_context(working_memory=2):
            assert working_memory_bytes(share=0.5) == 2**20
        assert get_config()["working_memory"] == 8
    assert get_config()["working_memory"] == 256


def test_set_config_reaches_new_threads():
    try:
        set_config(working_memory=32)
        seen = []
        thread = threading.Thread(target=lambda: seen.append(get_config()["working_memory"]))
        thread.start()
        thread.join()
        assert seen == [32]
    finally:
        set_config(working_memory=256)


@pytest.mark.parametrize("value", [0, -1, float("nan"), float("inf"), "big", True])
def test_bad_values_are_refused(value):
    with pytest.raises(ValueError, match="working_memory"):
        set_config(working_memory=value)
    with pytest.raises(ValueError, match="working_memory"):
        with config_context(working_memory=value):
            pass


def test_block_rows_respects_the_budget_and_the_cache_caps():
    with config_context(working_memory=1):
        assert block_rows(1024) == 1024
        assert block_rows(10**9) == 1  # never fewer than one row
    assert block_rows(1, cap="pair_chunk") == mlneighbors._config.CACHE_BYTES["pair_chunk"]


@pytest.mark.parametrize("make", [lambda: MLkNN(5), lambda: DMLkNN(5, delta=1), lambda: BKNN(3)],
                         ids=["mlknn", "dmlknn", "bknn"])
def test_a_tiny_budget_gives_the_same_predictions(make, rng):
    X = rng.normal(size=(120, 6))
    Y = (X[:, :4] + rng.normal(scale=0.7, size=(120, 4)) > 0).astype(int)
    Q = rng.normal(size=(40, 6))
    want = make().fit(X, Y)
    with config_context(working_memory=0.01):  # blocks of a row or a few
        got = make().fit(X, Y)
        np.testing.assert_array_equal(got.predict(Q), want.predict(Q))
        np.testing.assert_allclose(got.predict_proba(Q), want.predict_proba(Q), rtol=1e-12)
