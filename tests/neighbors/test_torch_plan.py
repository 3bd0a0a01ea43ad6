"""The torch index's memory plan on its own: numbers in, sizes out (no torch, no device)."""

import math

import numpy as np
import pytest
import scipy.sparse as sp

import mlneighbors
from mlneighbors.neighbors._torch_plan import (
    MAX_BLOCK_ELEMENTS,
    DevicePlan,
    MiB,
    candidates,
    choose_strategy,
    key_dtype,
    padded_width,
)

F32, F64 = np.dtype("float32"), np.dtype("float64")


def plan(n=1000, width=16, dtype=F32, device="cpu", budget=None):
    return DevicePlan(n_rows=n, width=width, dtype=dtype, device=device, memory_budget=budget)


def test_row_and_entry_bytes_follow_the_precision():
    assert (plan().row_bytes, plan().entry_bytes) == (64, 16)
    assert (plan(dtype=F64).row_bytes, plan(dtype=F64).entry_bytes) == (128, 32)  # very many features


def test_padding_keeps_rows_aligned():
    assert [padded_width(d, 1) for d in (1, 6, 7, 14)] == [8, 8, 16, 16]  # + ||x||^2 and a 1
    assert [padded_width(d, 0) for d in (1, 8, 9)] == [8, 8, 16]  # cosine: no extra columns


def test_budget_of_each_kind():
    assert plan(budget=2).budget(free=None) == 2 * MiB  # given: whatever the device
    assert plan(budget=2, device="cuda:0").budget(free=1e12, resident_rows=10) == 2 * MiB
    assert plan().budget(free=None) == math.inf  # the CPU without a budget: the index is not limited
    gpu = plan(device="cuda:0")
    assert gpu.reads_free_memory and not plan().reads_free_memory and not plan(budget=1).reads_free_memory
    # 90 % of the free memory, plus what the index already holds there (no longer free)
    assert gpu.budget(free=10_000, resident_rows=0) == 9_000
    assert gpu.budget(free=10_000, resident_rows=100) == 9_000 + 100 * 64


def test_the_index_stays_when_it_takes_half_the_budget_at_most():
    # 157 rows of 64 bytes (10 KiB): half of an 8 KiB budget holds 64 rows: shards
    assert plan(n=157, budget=8 / 1024).shard_rows(free=None) == 64
    assert plan(n=157, budget=1).shard_rows(free=None) == 157
    assert plan(n=157).shard_rows(free=None) == 157  # the CPU without a budget
    assert plan(n=157, device="cuda:0").shard_rows(free=2 * 157 * 64 / 0.9 + 1) == 157
    assert plan(n=157, device="cuda:0").shard_rows(free=2 * 100 * 64 / 0.9 + 1) == 100
    assert plan(n=157, budget=1e-9).shard_rows(free=None) == 1  # never none


def test_temporaries_are_what_the_index_leaves():
    with mlneighbors.config_context(working_memory=3):
        assert plan().temporary_bytes(None, resident_rows=1000, shard_rows=1000) == 3 * MiB
    budgeted = plan(budget=1)
    assert budgeted.temporary_bytes(None, resident_rows=0, shard_rows=100) == MiB - 100 * 64
    gpu = plan(device="cuda:0")
    assert gpu.temporary_bytes(10_000, resident_rows=50, shard_rows=50) == 9_000


def test_blocks_of_queries():
    p = plan(n=1000)
    per_row = 16 * 1000 + 2 * 64 + 32 * 26
    assert p.query_rows(10_000, 1000, 26, temporary=100 * per_row) == 100
    assert p.query_rows(7, 1000, 26, temporary=100 * per_row) == 7  # no more than there are
    assert p.query_rows(10_000, 1000, 26, temporary=1) == 1  # at least one row
    huge = plan(n=2**30)
    assert huge.query_rows(100, 2**30, 26, temporary=1e18) == MAX_BLOCK_ELEMENTS // 2**30  # 32-bit kernels
    assert p.rescan_rows(50, 1000, temporary=10 * 16 * 1000) == 10
    assert p.rescan_rows(5, 1000, temporary=1e12) == 5


def test_host_workers():
    assert plan().host_workers() == 1  # torch's own threads take the CPU
    assert 1 <= plan(device="cuda:0").host_workers() <= 4


def test_candidates_and_keys():
    assert candidates(1, 1000) == 17 and candidates(64, 1000) == 96 and candidates(5, 12) == 12
    assert key_dtype(0.0, 2**31 - 2) == "int32" and key_dtype(0.0, 2**31 - 1) == "int64"
    assert key_dtype(199.0, 2**24) == "int64" and key_dtype(99.0, 2**24) == "int32"


def test_the_strategy_for_sparse_rows():
    dense = np.ones((10, 5))
    text = sp.random(200, 20_000, density=5e-4, format="csr", random_state=0)  # 10 values a row
    small = sp.random(200, 40, density=0.5, format="csr", random_state=0)  # 20 values of 40
    assert choose_strategy(dense, "sparse", "cpu", 8) == "dense"
    assert choose_strategy(text, "densify", "cpu", 20_008) == "dense"
    assert choose_strategy(small, "sparse", "cpu", 48) == "sparse"
    assert choose_strategy(text, "auto", "cpu", 20_008) == "sparse"  # 6 + 0.3 * 11 ns < 0.04 * 20,008 ns
    assert choose_strategy(small, "auto", "cpu", 48) == "dense"  # 6 + 0.3 * 21 ns > 0.04 * 48 ns
    # measured on an H200: 3.2e-3 + 4.1e-4 * 11 ns < 4e-5 * 20,008 ns; 3.2e-3 + 4.1e-4 * 21 ns > 4e-5 * 48 ns
    assert choose_strategy(text, "auto", "cuda:0", 20_008) == "sparse"
    assert choose_strategy(small, "auto", "cuda:0", 48) == "dense"


@pytest.mark.parametrize("device", ["cpu", "cuda:0"])
def test_a_plan_is_plain_data(device):
    import pickle

    p = plan(device=device, budget=3)
    assert pickle.loads(pickle.dumps(p)) == p
