"""The torch backend against the exact CPU engine and the loop twin: identical results.

Everything runs on torch's CPU device here (real torch, no mock); the tests marked ``cuda``
run the same comparisons on a GPU and are skipped without one.
"""

import pickle
import sys

import numpy as np
import pytest
import scipy.sparse as sp

from mlneighbors.neighbors import ExactIndex, NeighborCache, ShardedIndex, TorchIndex, get_index, loo_kneighbors

from ._twins import tricky_data, tricky_queries, twin_kneighbors

torch = pytest.importorskip("torch")

CUDA = torch.cuda.is_available()
cuda = [pytest.mark.cuda, pytest.mark.skipif(not CUDA, reason="needs a CUDA device")]
DEVICES = ["cpu", pytest.param("cuda", marks=cuda)]


def assert_identical(got, want):
    np.testing.assert_array_equal(got[1], want[1])
    np.testing.assert_array_equal(got[0], want[0])
    assert got[0].dtype == np.float64 and got[1].dtype == np.intp


def binary_sparse(rng, n, d, nnz):
    """Bag-of-words rows: ~nnz ones per row, duplicate rows, an empty row (heavy exact ties)."""
    X = sp.random(n, d, density=nnz / d, format="csr", random_state=rng)
    X.data[:] = 1.0
    X = X.tolil()
    X[5] = X[3]
    X[7] = 0
    return X.tocsr()


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("metric", ["euclidean", "cosine"])
@pytest.mark.parametrize("integer", [False, True])
def test_dense_identical_to_exact_and_twin(rng, device, metric, integer):
    # n and the number of queries are not multiples of the block size (memory_budget)
    X = tricky_data(rng, 157, 7, integer=integer)
    Q = tricky_queries(rng, X, 41)
    index = TorchIndex(metric=metric, device=device, memory_budget=0.05).build(X)
    exact = ExactIndex(metric=metric).build(X)
    for k in (1, 6, 156, 157):
        got = index.query(Q, k)
        assert_identical(got, exact.query(Q, k))
        assert_identical(got, twin_kneighbors(X, Q, k, metric))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("metric", ["euclidean", "cosine"])
@pytest.mark.parametrize("strategy", ["densify", "sparse"])
@pytest.mark.parametrize("binary", [True, False])
def test_sparse_identical_to_exact(rng, device, metric, strategy, binary):
    X = binary_sparse(rng, 230, 60, 6)
    if not binary:
        X.data = rng.standard_normal(X.nnz)
    Q = sp.vstack([X[:30], binary_sparse(rng, 20, 60, 4)]).tocsr()
    index = TorchIndex(metric=metric, device=device, sparse_strategy=strategy).build(X)
    assert index.strategy_ == ("sparse" if strategy == "sparse" else "dense")
    exact = ExactIndex(metric=metric).build(X)
    for k in (1, 10, 229):
        assert_identical(index.query(Q, k), exact.query(Q, k))
        assert_identical(index.query(Q.toarray(), k), exact.query(Q, k))  # dense queries too


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("metric", ["euclidean", "cosine"])
def test_leave_one_out_and_k_n_minus_1(rng, device, metric):
    X = tricky_data(rng, 90, 5)
    Xs = binary_sparse(rng, 90, 40, 5)
    for data in (X, Xs):
        index = TorchIndex(metric=metric, device=device).build(data)
        exact = ExactIndex(metric=metric).build(data)
        for k in (1, 10, 89):
            assert_identical(loo_kneighbors(index, data, k), loo_kneighbors(exact, data, k))


@pytest.mark.parametrize("scale", [1e-150, 1e-30, 1e30, 1e100])
def test_extreme_scales_and_far_queries(rng, scale):
    X = tricky_data(rng, 80, 5) * scale
    Q = np.vstack([tricky_queries(rng, X, 12), X[:3] * 1e45, X[3:5]])  # beyond float32's range
    for metric in ("euclidean", "cosine"):
        index = TorchIndex(metric=metric, device="cpu").build(X)
        assert_identical(index.query(Q, 7), twin_kneighbors(X, Q, 7, metric))


def test_integer_data_beyond_the_exact_range(rng):
    # squared norms above 2**22: the proxy is not exact, the float64 re-rank decides
    X = rng.integers(-3000, 3000, size=(100, 5)).astype(np.float64)
    assert_identical(TorchIndex(device="cpu").build(X).query(X[:20], 9), twin_kneighbors(X, X[:20], 9))
    # an exact proxy, but squared distances of far queries above 2**24: no integer keys
    X = rng.integers(-1000, 1000, size=(100, 4)).astype(np.float64)
    Q = np.vstack([X[:10], rng.integers(-1500, 1500, size=(10, 4))])
    assert_identical(TorchIndex(device="cpu").build(X).query(Q, 9), twin_kneighbors(X, Q, 9))


def test_mixed_formats_and_a_single_row(rng):
    X = tricky_data(rng, 50, 6, integer=True)
    Q = sp.csr_matrix(tricky_queries(rng, X, 9))
    assert_identical(TorchIndex(device="cpu").build(X).query(Q, 4), twin_kneighbors(X, Q, 4))
    dist, idx = TorchIndex(device="cpu").build([[2.0]]).query([[5.0], [2.0]], 1)
    np.testing.assert_array_equal(idx, [[0], [0]])
    np.testing.assert_array_equal(dist, [[3.0], [0.0]])


def test_very_many_features_take_a_float64_product(rng):
    # beyond ~262,000 features the float32 bound is useless: the proxy is float64, as in "exact"
    X = sp.random(20, 262_200, density=2e-4, format="csr", random_state=rng)
    X.data = rng.standard_normal(X.nnz)
    for metric in ("euclidean", "cosine"):
        index = TorchIndex(metric=metric, device="cpu").build(X)
        assert_identical(index.query(X[:6], 5), ExactIndex(metric=metric).build(X).query(X[:6], 5))


def test_tiny_memory_budget_means_many_shards_and_blocks(rng):
    X = tricky_data(rng, 157, 7)
    Q = tricky_queries(rng, X, 41)
    # 157 rows of 16 float32 columns (7 padded) take 10 KiB; half of an 8 KiB budget: shards
    # of 64 rows
    index = TorchIndex(device="cpu", memory_budget=8 / 1024).build(X)
    assert index.n_shards_ == 3
    for k in (1, 7, 100, 157):
        assert_identical(index.query(Q, k), ExactIndex().build(X).query(Q, k))


@pytest.mark.parametrize("metric", ["euclidean", "cosine"])
def test_near_ties_are_searched_again_on_the_device(rng, metric, monkeypatch):
    # 300 points at (almost) the same distance: the rounding band around the k-th proxy holds
    # far more rows than topk took, so those queries are rescanned on the device
    import mlneighbors.neighbors._torch_plan as torch_plan

    d = 5
    q = rng.standard_normal(d)
    u = rng.standard_normal((300, d))
    u /= np.linalg.norm(u, axis=1)[:, None]
    X = np.vstack([q + 3.0 * (1 + 1e-11 * rng.standard_normal(300))[:, None] * u, q + 10 * u[:50]])
    if metric == "cosine":
        X = np.vstack([q * (1 + 1e-12 * rng.standard_normal((300, 1))) + 1e-9 * u, u[:50]])
    rescans = []
    original = TorchIndex._rescan
    monkeypatch.setattr(TorchIndex, "_rescan", lambda self, *a: rescans.append(1) or original(self, *a))
    monkeypatch.setattr(torch_plan, "EXTRA_CANDIDATES", 1)
    index = TorchIndex(metric=metric, device="cpu").build(X)
    for k in (1, 10, 299):
        assert_identical(index.query(q[None, :], k), twin_kneighbors(X, q[None, :], k, metric))
    assert rescans


def test_out_of_memory_on_the_first_block_is_retried_with_half(rng, monkeypatch):
    import mlneighbors.neighbors._torch as torch_module

    X = tricky_data(rng, 120, 6)
    Q = tricky_queries(rng, X, 50)
    rows = []
    original = torch_module._device_select

    def first_block_fails(torch, qa, *args):
        rows.append(qa.shape[0])
        if len(rows) == 1:
            raise torch.OutOfMemoryError("CUDA out of memory (injected)")
        return original(torch, qa, *args)

    monkeypatch.setattr(torch_module, "_device_select", first_block_fails)
    got = TorchIndex(device="cpu").build(X).query(Q, 9)
    assert rows[:3] == [50, 25, 25]
    assert_identical(got, ExactIndex().build(X).query(Q, 9))


def test_out_of_memory_with_one_row_is_a_clear_error(rng, monkeypatch):
    import mlneighbors.neighbors._torch as torch_module

    def always_fails(torch, *args):
        raise torch.OutOfMemoryError("CUDA out of memory (injected)")

    monkeypatch.setattr(torch_module, "_device_select", always_fails)
    index = TorchIndex(device="cpu").build(rng.standard_normal((20, 3)))
    with pytest.raises(MemoryError, match="ran out of memory with a single query row.*memory_budget"):
        index.query(rng.standard_normal((4, 3)), 2)


@pytest.mark.parametrize("device", DEVICES)
def test_pickles_without_tensors_and_rebuilds_lazily(rng, device):
    X = tricky_data(rng, 60, 5, integer=True)
    for data in (X, sp.csr_matrix(X)):
        index = TorchIndex(metric="euclidean", device=device).build(data)
        blob = pickle.dumps(index)
        assert b"torch._utils" not in blob and b"torch.storage" not in blob
        again = pickle.loads(blob)
        assert_identical(again.query(X[:9], 6), index.query(X[:9], 6))
        assert again.get_params() == index.get_params()


def test_shared_machinery_takes_it_unchanged(rng):
    X = tricky_data(rng, 100, 4)
    Q = tricky_queries(rng, X, 20)
    want = ExactIndex().build(X).query(Q, 8)
    cache = NeighborCache("torch", device="cpu").build(X)
    assert_identical(cache.query(Q, 8), want)
    assert_identical(ShardedIndex(get_index("torch", device="cpu"), 3).build(X).query(Q, 8), want)


def test_tf32_setting_is_ignored_and_kept(rng):
    X = tricky_data(rng, 80, 6)
    Q = tricky_queries(rng, X, 10)
    matmul = torch.backends.cuda.matmul
    if not hasattr(torch.backends, "fp32_precision"):
        pytest.skip("torch < 2.9: the precision is set through the legacy API")
    previous = matmul.fp32_precision
    matmul.fp32_precision = "tf32"
    try:
        got = TorchIndex(device=None if CUDA else "cpu").build(X).query(Q, 5)
        assert matmul.fp32_precision == "tf32"  # the user's setting is back
    finally:
        matmul.fp32_precision = previous
    assert_identical(got, ExactIndex().build(X).query(Q, 5))


def test_device_none_is_the_gpu_when_there_is_one():
    index = TorchIndex().build(np.eye(3))
    assert index.device_ == ("cuda:0" if CUDA else "cpu")


@pytest.mark.parametrize(
    "params, error, match",
    [
        ({"device": "tpu"}, ValueError, "device must be None, 'cpu', 'cuda' or 'cuda:N', got device='tpu'"),
        ({"device": "banana"}, ValueError, "device must be None"),
        ({"device": "cuda:99"}, ValueError, "device='cuda:99' is not available"),
        ({"device": 3}, TypeError, "device must be None or a string"),
        ({"memory_budget": 0}, ValueError, "memory_budget must be a positive number of MiB"),
        ({"memory_budget": "1G"}, ValueError, "memory_budget must be"),
        ({"sparse_strategy": "csr"}, ValueError, "sparse_strategy must be 'auto', 'densify' or 'sparse'"),
    ],
)
def test_bad_parameters_are_named(params, error, match):
    with pytest.raises(error, match=match):
        get_index("torch", **params).build(np.eye(3))


@pytest.mark.skipif(CUDA, reason="this machine has a CUDA device")
def test_cuda_on_a_machine_without_one():
    with pytest.raises(ValueError, match=r"device='cuda' is not available: this torch .* sees no CUDA device"):
        get_index("torch", device="cuda").build(np.eye(3))


def test_k_larger_than_n():
    index = get_index("torch", device="cpu").build(np.eye(3))
    with pytest.raises(ValueError, match=r"k=4 is larger than the number of indexed points \(3\)"):
        index.query(np.eye(3), 4)


def test_missing_torch_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # import now raises ImportError
    index = get_index("torch")  # creating is fine: nothing is imported before build
    with pytest.raises(ImportError, match=r"backend='torch' needs torch: pip install 'mlneighbors\[gpu\]'"):
        index.build(np.eye(3))


@pytest.mark.cuda
@pytest.mark.skipif(not CUDA, reason="needs a CUDA device")
def test_gpu_larger_sets_identical(rng):
    X = rng.standard_normal((6000, 40))
    X[100:200] = X[:100]
    Xb = binary_sparse(rng, 6000, 500, 12)
    for data, metric in ((X, "euclidean"), (X, "cosine"), (Xb, "euclidean"), (Xb, "cosine")):
        index = TorchIndex(metric=metric, device="cuda").build(data)
        exact = ExactIndex(metric=metric).build(data)
        assert_identical(loo_kneighbors(index, data, 10), loo_kneighbors(exact, data, 10))
        assert_identical(index.query(data[:500], 30), exact.query(data[:500], 30))
    small = TorchIndex(device="cuda", memory_budget=1).build(X)  # 6000 x 48 float32 = 1.1 MiB: 3 shards
    assert small.n_shards_ > 1
    assert_identical(small.query(X[:300], 10), ExactIndex().build(X).query(X[:300], 10))
