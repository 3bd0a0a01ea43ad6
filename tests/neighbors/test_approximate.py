"""Approximate adapters: recall against exact, protocol normalisation, pickling, repairs."""

import pickle
import sys

import numpy as np
import pytest
import scipy.sparse as sp

from mlneighbors.neighbors import BACKENDS, ExactIndex, get_index

from ._backends import APPROXIMATE, CALIBRATED, SLOW, library, param, require
from ._twins import twin_kneighbors

# pynndescent compiles its numba kernels on first use in every process (~45 s here, once
# per metric): its tests are marked slow and kept to a minimum (_backends.SLOW)
NAMES = [param(name) for name in APPROXIMATE]


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(7)
    C = rng.standard_normal((20, 12)) * 4
    X = C[rng.integers(0, 20, 2000)] + rng.standard_normal((2000, 12))
    Q = np.vstack([X[:100] + 0.01, C[rng.integers(0, 20, 100)] + rng.standard_normal((100, 12))])
    return X, Q


def recall(idx, ref_idx):
    return np.mean([len(np.intersect1d(a, b)) / len(b) for a, b in zip(idx, ref_idx, strict=True)])


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("metric", ["euclidean", "cosine"])
def test_recall_and_protocol(data, name, metric):
    if name in SLOW and metric == "cosine":
        pytest.skip("a slow build (numba kernels compiled): one metric is enough")
    require(name)
    X, Q = data
    index = get_index(name, metric=metric).build(X)
    assert index.exact is False and index.metric == metric
    dist, idx = index.query(Q, 10)
    ref_dist, ref_idx = ExactIndex(metric=metric).build(X).query(Q, 10)
    assert recall(idx, ref_idx) >= 0.9
    assert dist.dtype == np.float64 and idx.dtype == np.intp
    assert np.all((idx >= 0) & (idx < len(X)))
    assert np.all(np.diff(dist, axis=1) >= 0)
    # the returned distances are the exact backend's float64 distances of those rows
    twin = twin_kneighbors(X, Q, len(X), metric)
    pos = np.argsort(twin[1], axis=1)
    np.testing.assert_array_equal(dist, np.take_along_axis(twin[0], np.take_along_axis(pos, idx, 1), 1))
    # pickles cleanly and answers the same
    again = pickle.loads(pickle.dumps(index))
    np.testing.assert_array_equal(again.query(Q, 10)[1], idx)


@pytest.mark.parametrize("name", NAMES)
def test_sparse_input_and_loo_shapes(data, name):
    require(name)
    X, Q = data
    Xs = sp.csr_matrix(np.where(np.abs(X) > 1.5, X, 0.0)[:300])
    # one thread: a graph built by several threads depends on their timing, and an approximate
    # search may then miss a row's own point (hnswlib did, once in about thirty runs); faiss
    # takes its threads from OpenMP
    index = get_index(name)
    if "n_jobs" in index.get_params():
        index.set_params(n_jobs=1)
        dist, idx = index.build(Xs).query(Xs[:20], 5)
    elif library(name) != "faiss":
        dist, idx = index.build(Xs).query(Xs[:20], 5)
    else:
        import faiss

        threads = faiss.omp_get_max_threads()
        faiss.omp_set_num_threads(1)
        try:
            dist, idx = index.build(Xs).query(Xs[:20], 5)
        finally:
            faiss.omp_set_num_threads(threads)
    assert idx.shape == (20, 5) and np.all(idx >= 0)
    np.testing.assert_array_equal(idx[:, 0], np.arange(20))  # each row finds itself
    np.testing.assert_array_equal(dist[:, 0], 0.0)


def test_faiss_ivf_padding_is_repaired_exactly(data):
    pytest.importorskip("faiss")
    X, Q = data
    # 51 cells, one probed: a cell holds ~40 points, so k = 300 leaves faiss padding with -1
    index = get_index("faiss-ivf", nlist=51, nprobe=1).build(X)
    dist, idx = index.query(Q[:30], 300)
    assert np.all(idx >= 0)
    ref_dist, ref_idx = twin_kneighbors(X, Q[:30], 300)
    np.testing.assert_array_equal(idx, ref_idx)  # repaired rows are exact
    np.testing.assert_array_equal(dist, ref_dist)


def test_hnswlib_ef_below_k(data):
    pytest.importorskip("hnswlib")
    X, Q = data
    dist, idx = get_index("hnswlib", ef=1, M=4).build(X[:200]).query(Q[:10], 150)
    assert np.all(idx >= 0) and all(len(set(r)) == 150 for r in idx)


@pytest.mark.parametrize("name, breadth", [(name, BACKENDS[name].breadth) for name in CALIBRATED])
def test_the_breadth_of_a_built_index_is_not_changed_in_silence(data, name, breadth):
    """The breadth is fixed at build (the recall is measured at it): set_params on a built
    index is refused, naming it, instead of being ignored by the queries; unbuilt it is set."""
    require(name)
    X, Q = data
    index = get_index(name, **{breadth: 4}).build(X[:300])
    before = index.query(Q[:20], 5)
    with pytest.raises(ValueError, match=f"{breadth} is fixed when the index is built.*build again"):
        index.set_params(**{breadth: 64})
    np.testing.assert_array_equal(index.query(Q[:20], 5)[1], before[1])
    index.set_params(**{breadth: 4})  # the same value: nothing changes, nothing refused
    fresh = get_index(name).set_params(**{breadth: 64})
    assert getattr(fresh, breadth) == 64


@pytest.mark.parametrize("name", APPROXIMATE)
def test_missing_package_names_the_extra(monkeypatch, name):
    monkeypatch.setitem(sys.modules, library(name), None)  # import now raises ImportError
    index = get_index(name)  # creating is fine: nothing is imported before build
    extra = BACKENDS[name].extra
    with pytest.raises(ImportError, match=rf"backend='{name}' needs .*pip install 'mlneighbors\[{extra}\]'"):
        index.build(np.eye(3))


def test_importing_the_package_imports_no_optional_library():
    import subprocess

    optional = sorted({cls.module for cls in BACKENDS.values() if cls.module} | {"numba", "dask"})
    code = (
        f"import sys, mlneighbors.neighbors as m; [m.get_index(n) for n in {sorted(BACKENDS)!r}]; "
        f"print(sorted(x for x in {optional!r} if sys.modules.get(x) is not None))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("metric", ["euclidean", "cosine"])
def test_the_recall_of_an_index_with_distances_of_its_own_is_measured_in_the_data_space(metric):
    """An index whose distances are not the metric's (HybridKNN's window: PCA space) is judged by
    the neighbours it finds, their distances recomputed: here the exact neighbours, given with
    distances scaled, have recall 1 (compared as they were, recall 0)."""
    from mlneighbors.neighbors import BaseIndex, Capabilities
    from mlneighbors.neighbors._recall import estimate_recall

    class OwnDistances(BaseIndex):
        name = "own-distances"
        capabilities = Capabilities(metrics=("euclidean", "cosine"), true_distances=False)

        def __init__(self, *, metric="euclidean"):
            self.metric = metric

        def build_rows(self, X):
            self._exact = get_index("exact", metric=self.metric).build(X)

        def query_rows(self, Q, k):
            dist, idx = self._exact.query(Q, k)
            return 1000.0 * dist + 1.0, idx

    X = np.random.default_rng(0).normal(size=(300, 6))
    assert estimate_recall(OwnDistances(metric=metric).build(X), X, 5, metric) == 1.0


def test_the_union_answers_queries_its_graph_fails(data):
    """The point of "faiss-union": where its HNSW graph returns none of a query's neighbours,
    its IVF's candidates still give them (the union is re-ranked exactly)."""
    pytest.importorskip("faiss")
    X, Q = data
    index = get_index("faiss-union").build(X)
    want = ExactIndex().build(X).query(Q, 10)[1]

    class LostGraph:  # the graph answers every other query with the rows farthest from it
        def __init__(self, graph):
            self.graph = graph

        def search(self, vectors, k, params=None):
            dist, idx = self.graph.search(vectors, k, params=params)
            far = np.argsort(-((vectors[:, None, :] - X[None, :, :].astype(np.float32)) ** 2).sum(-1), axis=1)[:, :k]
            idx[::2] = far[::2]
            return dist, idx

    index._index = LostGraph(index._index)
    got = index.query(Q, 10)[1]
    per_query = np.array([len(np.intersect1d(a, b)) / 10 for a, b in zip(got, want, strict=True)])
    assert (per_query[::2] >= 0.5).all() and recall(got, want) >= 0.95


def test_the_union_graph_over_8_bit_codes_finds_what_the_float32_graph_finds(data):
    """``storage="sq8"`` (the default): the graph holds a byte a feature a row, not four, and
    its answers, ranked exactly, are as good as those of the graph over float32 rows."""
    faiss = pytest.importorskip("faiss")
    X, Q = data
    want = ExactIndex().build(X).query(Q, 10)[1]
    codes = get_index("faiss-union").build(X)
    rows = get_index("faiss-union", storage="float32").build(X)
    assert isinstance(codes._index, faiss.IndexHNSWSQ) and isinstance(rows._index, faiss.IndexHNSWFlat)
    sizes = [faiss.downcast_index(i._index.storage).codes.size() for i in (codes, rows)]
    assert sizes == [X.shape[0] * X.shape[1], 4 * X.shape[0] * X.shape[1]]
    assert recall(codes.query(Q, 10)[1], want) >= recall(rows.query(Q, 10)[1], want) - 0.01 >= 0.94


def test_the_union_storage_is_checked():
    with pytest.raises(ValueError, match="storage must be one of 'sq8', 'float32'; got 'pq'"):
        get_index("faiss-union", storage="pq").build(np.zeros((50, 3)))
