"""Float32 rows are kept once, as given (issue 29), and give the numbers of their float64 copy.

Before, every model and index converted its rows to float64: at 10^6 x 128 a float32 array
was held a second time, as 1 GB of float64, beside the index's own copy.  Now the searches
that can (the exact engine for euclidean and cosine, the approximate adapters, ``"auto"``)
keep the float32 array and compute every distance from its float64 values; every other search
(and BLDA's projection) makes its float64 copy as before.  Either way the predictions,
neighbours and distances must be those of the same rows given as float64, bit for bit.
"""

from __future__ import annotations

import numpy as np
import pytest

from mlneighbors import MLkNN
from mlneighbors.neighbors import _auto, get_index, loo_kneighbors

from ..registry import fresh, models

pytestmark = pytest.mark.filterwarnings("ignore:.*no positive training example:UserWarning")


def _data(rng, n=300, d=6, n_labels=4):
    # float32 values (what a float32 array can hold), clustered, with duplicate rows
    X = (rng.normal(size=(n, d)) + 3 * rng.integers(0, 4, size=(n, 1))).astype(np.float32)
    X[10:13] = X[5]
    Y = (rng.random((n, n_labels)) < 0.3).astype(int)
    Y[:, 0] |= X[:, 0] > 3
    Q = rng.normal(size=(40, d)).astype(np.float32) * 2
    return X, Y, Q


def _outputs(model, X, Y, Q):
    model = fresh(model).fit(X, Y)
    out = {}
    if hasattr(model, "predict"):
        out["predict"] = model.predict(Q)
    if hasattr(model, "predict_proba"):
        out["proba"] = model.predict_proba(Q)
    if hasattr(model, "transform"):
        out["transform"] = model.transform(Q)
    if hasattr(model, "kneighbors"):
        for name, value in zip(("dist", "idx"), model.kneighbors(Q), strict=True):
            out[name] = value
    return model, out


def _as_arrays(out):
    return {key: value.toarray() if hasattr(value, "toarray") else np.asarray(value) for key, value in out.items()}


@pytest.mark.parametrize("model", models())
def test_every_model_gives_float32_rows_the_numbers_of_their_float64_copy(rng, model):
    X, Y, Q = _data(rng)
    _, got = _outputs(model, X, Y, Q)
    _, want = _outputs(model, X.astype(np.float64), Y, Q.astype(np.float64))
    got, want = _as_arrays(got), _as_arrays(want)
    assert got.keys() == want.keys() and got
    for key in want:
        np.testing.assert_array_equal(got[key], want[key], err_msg=key)


BACKENDS = [
    pytest.param("exact", None, id="exact"),
    pytest.param("exact", {"metric": "cosine"}, id="exact-cosine"),
    pytest.param("faiss-union", None, id="faiss-union", marks=pytest.mark.requires("faiss")),
    pytest.param("faiss-hnsw", {"metric": "cosine"}, id="faiss-hnsw-cosine", marks=pytest.mark.requires("faiss")),
    pytest.param("hnswlib", {"n_jobs": 1}, id="hnswlib", marks=pytest.mark.requires("hnswlib")),
]


@pytest.fixture
def one_thread():
    """faiss builds its graphs on every core, in an order that can vary between builds (and
    hnswlib with n_jobs > 1): on one thread two builds of the same rows are the same."""
    try:
        import faiss
    except ImportError:
        yield
        return
    before = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(1)
    yield
    faiss.omp_set_num_threads(before)


@pytest.mark.parametrize(("name", "params"), BACKENDS)
def test_the_index_keeps_float32_rows_once_and_searches_them_as_float64(rng, one_thread, name, params):
    X, _, Q = _data(rng, n=600, d=8)
    index = get_index(name, **(params or {})).build(X)
    twin = get_index(name, **(params or {})).build(X.astype(np.float64))
    if (params or {}).get("metric", "euclidean") == "euclidean":
        assert index._ref.X is X  # no copy: the rows the caller gave
    for got, want in ((index.query(Q, 7), twin.query(Q.astype(np.float64), 7)),
                      (loo_kneighbors(index, X, 5, validated=True), loo_kneighbors(twin, X.astype(np.float64), 5))):
        np.testing.assert_array_equal(got[0], want[0])
        np.testing.assert_array_equal(got[1], want[1])


def test_auto_hands_float32_rows_to_its_pick_uncopied(rng, one_thread, monkeypatch):
    pytest.importorskip("faiss")
    monkeypatch.setattr(_auto, "_NS_EXACT_ENTRY", 1e9)  # the exact search looks expensive: auto picks faiss-union
    X, Y, Q = _data(rng, n=800, d=8)
    model = MLkNN(5, backend="auto").fit(X, Y)
    assert model.backend_ == "faiss-union"
    assert model._fit_X is X and model._index.index_._ref.X is X
    twin = MLkNN(5, backend="auto").fit(X.astype(np.float64), Y)
    np.testing.assert_array_equal(model.predict_proba(Q), twin.predict_proba(Q.astype(np.float64)))


def test_sparse_and_other_dtypes_still_become_float64(rng):
    import scipy.sparse as sp

    X, Y, _ = _data(rng)
    for given in (sp.csr_matrix(X), X.astype(np.float16), np.rint(X).astype(np.int64)):
        model = MLkNN(3).fit(given, Y)
        assert model._fit_X.dtype == np.float64
