"""One neighbour path: every model gets its neighbours from the index that ``backend=`` names.

A backend added later reaches every model with no model code touched: here, the smallest
index of the protocol (numpy brute force, written in this file) counts its calls while every
model is fitted and queried through it, and gives the predictions of ``backend="exact"``.
"""

from __future__ import annotations

import pickle
from collections import Counter

import numpy as np
import pytest
from sklearn.pipeline import Pipeline

from mlneighbors import BKNN, BLDA, MLkNN
from mlneighbors.neighbors import ShardedIndex, get_index, loo_kneighbors

from ..registry import classifiers, fresh
from .conftest import corner_data

try:
    import torch
except ImportError:  # pragma: no cover - torch is in the test extra
    torch = None

pytestmark = pytest.mark.filterwarnings("ignore:.*no positive training example:UserWarning")


class CountingIndex:
    """Brute force by (distance, row), euclidean or cosine, counting builds and queries.

    Not a scikit-learn estimator: copies are deep copies, and the counter is a class
    attribute so that every copy (BKNN takes one per label) counts in one place.
    """

    calls: Counter = Counter()
    exact = True

    def __init__(self, metric: str = "euclidean") -> None:
        self.metric = metric

    def _prepare(self, A):
        A = A.toarray() if hasattr(A, "toarray") else np.asarray(A, dtype=np.float64)
        if self.metric == "cosine":
            norms = np.linalg.norm(A, axis=1, keepdims=True)
            A = A / np.where(norms == 0, 1.0, norms)
        return A

    def build(self, X):
        CountingIndex.calls["build"] += 1
        self._X = self._prepare(X)
        self.n_samples_fit_ = len(self._X)
        return self

    def query(self, Q, k):
        CountingIndex.calls["query"] += 1
        Q = self._prepare(Q)
        if self.metric == "cosine":
            D = np.clip(1.0 - Q @ self._X.T, 0.0, 2.0)
        else:
            D = np.sqrt(((Q[:, None, :] - self._X[None, :, :]) ** 2).sum(axis=2))
        rows = np.broadcast_to(np.arange(len(self._X)), D.shape)
        order = np.lexsort((rows, D), axis=1)[:, :k]
        return np.take_along_axis(D, order, axis=1), order


#: every classifier of the registry (the hybrid's PCA window too: its backend is replaced here)
MODELS = classifiers()


def _with_backend(model, backend):
    """``model`` searching with ``backend`` ("counting": a :class:`CountingIndex` of its metric)."""
    metric = model._index_metric()  # the hybrid's is cosine
    return model.set_params(backend=CountingIndex(metric) if backend == "counting" else backend)


@pytest.mark.parametrize("model", MODELS)
def test_every_model_reaches_a_custom_index(model, rng):
    X, Y, Q = corner_data(rng, "empty", n_features=4, continuous=True)
    reference = _with_backend(fresh(model), "exact").fit(X, Y)
    CountingIndex.calls.clear()
    custom = _with_backend(fresh(model), "counting").fit(X, Y)
    built, queried = CountingIndex.calls["build"], CountingIndex.calls["query"]
    assert built >= 1
    predicted = custom.predict(Q)
    assert CountingIndex.calls["query"] > queried  # predict asked the custom index
    np.testing.assert_array_equal(predicted, reference.predict(Q))
    np.testing.assert_allclose(custom.predict_proba(Q), reference.predict_proba(Q), rtol=1e-9, atol=1e-12)


TORCH_DEVICES = [
    "cpu",
    pytest.param(
        "cuda",
        marks=[
            pytest.mark.cuda,
            pytest.mark.skipif(torch is None or not torch.cuda.is_available(), reason="needs a CUDA device"),
        ],
    ),
]


@pytest.mark.parametrize("device", TORCH_DEVICES)
@pytest.mark.parametrize("continuous", [True, False], ids=["continuous", "integer"])
@pytest.mark.parametrize("model", MODELS)
def test_every_model_on_the_torch_backend_predicts_as_with_exact(model, continuous, device, rng):
    if torch is None:
        pytest.skip("needs torch")
    # integer features take the backend's exact-key path, continuous ones the float64 re-rank
    X, Y, Q = corner_data(rng, "empty", n_features=4, continuous=continuous)
    reference = _with_backend(fresh(model), "exact").fit(X, Y)
    on_torch = fresh(model).set_params(backend="torch", backend_params={"device": device})
    on_torch.fit(X, Y)
    np.testing.assert_array_equal(on_torch.predict(Q), reference.predict(Q))
    if isinstance(model, BKNN):
        # BKNN with "exact" takes the engine's masked label search (its own distances, from
        # ||q||^2 - 2 q.x + ||x||^2); any other index one search per label, as "torch" does
        np.testing.assert_allclose(on_torch.predict_proba(Q), reference.predict_proba(Q), rtol=1e-12)
        per_label = ShardedIndex(get_index("exact", metric=model.metric), n_shards=1)
        reference = fresh(model).set_params(backend=per_label).fit(X, Y)
    np.testing.assert_array_equal(on_torch.predict_proba(Q), reference.predict_proba(Q))
    for queries in (None, Q):
        for got, want in zip(on_torch.kneighbors(queries), reference.kneighbors(queries), strict=True):
            np.testing.assert_array_equal(got, want)
    loaded = pickle.loads(pickle.dumps(on_torch))  # no index, no device tensor: rebuilt on use
    np.testing.assert_array_equal(loaded.predict_proba(Q), reference.predict_proba(Q))


def test_a_pipeline_reaches_a_custom_index(rng):
    X, Y, Q = corner_data(rng, "empty", n_features=4, continuous=True)
    CountingIndex.calls.clear()
    pipe = Pipeline([("blda", BLDA()), ("mlknn", MLkNN(4, backend=CountingIndex()))]).fit(X, Y)
    want = Pipeline([("blda", BLDA()), ("mlknn", MLkNN(4))]).fit(X, Y).predict(Q)
    np.testing.assert_array_equal(pipe.predict(Q), want)
    assert CountingIndex.calls["build"] == 1 and CountingIndex.calls["query"] == 2


@pytest.mark.parametrize("model", classifiers(lambda m: not isinstance(m, BKNN)))  # BKNN's are per label
def test_kneighbors_none_is_leave_one_out(model, rng):
    X, Y, _ = corner_data(rng, "empty", n_features=4, continuous=True)
    model = fresh(model).fit(X, Y)
    k = model.n_neighbors_ - 1
    dist, idx = model.kneighbors(n_neighbors=k)
    assert idx.shape == (len(X), k)
    assert not (idx == np.arange(len(X))[:, None]).any()  # the row itself is left out
    if model.backend_ == "exact":  # not the hybrid's PCA window: the exact neighbours
        want = loo_kneighbors(get_index("exact", metric=model._index_metric()).build(X), X, k)
        np.testing.assert_array_equal(idx, want[1])
        np.testing.assert_array_equal(dist, want[0])
    with pytest.raises(ValueError, match="n_neighbors must be an integer"):
        model.kneighbors(n_neighbors=len(X))


def test_bknn_kneighbors_are_per_label(rng):
    X, Y, Q = corner_data(rng, n_features=4, continuous=True)
    model = BKNN(3).fit(X, Y)
    dist, idx = model.kneighbors(Q)
    assert dist.shape == idx.shape == (len(Q), Y.shape[1], 3)
    member = idx >= 0
    rows = np.broadcast_to(np.arange(Y.shape[1])[None, :, None], idx.shape)
    assert Y[idx[member], rows[member]].all()  # every neighbour carries its label
    assert (idx[:, 0] == -1).all() and np.isinf(dist[:, 0]).all()  # label 0: nobody
    finite = np.where(np.isfinite(dist), dist, np.finfo(float).max)
    assert (np.diff(finite, axis=2) >= 0).all()  # ascending within a label, padding last
    _, loo = model.kneighbors()
    assert not (loo == np.arange(len(X))[:, None, None]).any()


@pytest.mark.parametrize("model", MODELS)
def test_a_saved_model_holds_no_index_and_rebuilds_it(model, rng):
    X, Y, Q = corner_data(rng, "empty", n_features=4, continuous=True)
    fitted = fresh(model).fit(X, Y)
    blob = pickle.dumps(fitted)
    assert b"_MaskedSearch" not in blob and b"PCAWindowIndex" not in blob and b"LabelRestrictedIndex" not in blob
    if "ExactIndex" not in repr(model):  # an index object given as backend is saved, unbuilt
        assert b"ExactIndex" not in blob
    loaded = pickle.loads(blob)
    assert "_index" not in vars(loaded)
    np.testing.assert_array_equal(loaded.predict_proba(Q), fitted.predict_proba(Q))
    np.testing.assert_array_equal(loaded.predict(Q), fitted.predict(Q))
