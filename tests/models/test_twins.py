"""Fast models against their loop twins: exact agreement of scores and predictions.

Integer-valued features make every distance exact, so the data are full of duplicate
points and exact distance ties, where the tie rule (distance, then training index) and the
leave-one-out by index decide the neighbours.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from mlneighbors import BRkNN, DMLkNN, LAMLkNN, LPkNN, MLkNN

from . import twins
from .conftest import corner_data, to_format

pytestmark = pytest.mark.filterwarnings("ignore:.*no positive training example:UserWarning")

VARIANTS = ["everybody", "empty"]
K_LOO = [1, 4, 10, 39]  # 39 = n_train - 1
K_PLAIN = [1, 4, 10, 40]  # no leave-one-out: k = n_train is allowed


def data(variant, fmt, seed=0, **kwargs):
    X, Y, Q = corner_data(np.random.default_rng(seed), variant, **kwargs)
    Y_in = sp.csr_matrix(Y) if fmt == "csr" else Y  # a sparse indicator with sparse X
    return to_format(X, fmt), Y_in, to_format(Q, fmt), X, Y, Q


def assert_same(model, X, Q, twin_result):
    scores, predictions = twin_result
    np.testing.assert_array_equal(model.predict_proba(Q), np.array(scores, dtype=np.float64))
    np.testing.assert_array_equal(model.predict(Q), np.array(predictions))


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("k", K_LOO)
@pytest.mark.parametrize("smoothing", [1.0, 0.5, 0.0])
def test_mlknn_equals_twin(variant, fmt, k, smoothing):
    Xf, Yf, Qf, X, Y, Q = data(variant, fmt)
    model = MLkNN(k, smoothing=smoothing).fit(Xf, Yf)
    assert_same(model, Xf, Qf, twins.mlknn(X, Y, Q, k, smoothing))


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("k", K_PLAIN)
@pytest.mark.parametrize("extension", [None, "a", "b"])
def test_brknn_equals_twin(variant, fmt, k, extension):
    Xf, Yf, Qf, X, Y, Q = data(variant, fmt)
    model = BRkNN(k, extension=extension).fit(Xf, Yf)
    assert_same(model, Xf, Qf, twins.brknn(X, Y, Q, k, extension))


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("k", K_PLAIN)
def test_lpknn_equals_twin(variant, fmt, k):
    Xf, Yf, Qf, X, Y, Q = data(variant, fmt)
    model = LPkNN(k).fit(Xf, Yf)
    assert_same(model, Xf, Qf, twins.lpknn(X, Y, Q, k))


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("k", K_LOO)
@pytest.mark.parametrize("delta", [0, 1, 3, 6])
def test_dmlknn_equals_twin(variant, fmt, k, delta):
    Xf, Yf, Qf, X, Y, Q = data(variant, fmt)
    model = DMLkNN(k, delta=delta).fit(Xf, Yf)
    assert_same(model, Xf, Qf, twins.dmlknn(X, Y, Q, k, delta=delta))


@pytest.mark.parametrize("smoothing", [0.5, 0.0])
def test_dmlknn_smoothing_equals_twin(fmt, smoothing):
    Xf, Yf, Qf, X, Y, Q = data("everybody", fmt)  # label 0 / label 1: a zero denominator at s=0
    model = DMLkNN(5, delta=2, smoothing=smoothing).fit(Xf, Yf)
    assert_same(model, Xf, Qf, twins.dmlknn(X, Y, Q, 5, s=smoothing, delta=2))


def test_dmlknn_many_labels_equals_twin():
    X, Y, Q = corner_data(np.random.default_rng(3), "empty", n_train=60, n_test=50, n_labels=25)
    model = DMLkNN(8, delta=2).fit(X, Y)
    assert_same(model, X, Q, twins.dmlknn(X, Y, Q, 8, delta=2))


class FirstFeature:
    """A user clusterer: the cluster of a row is its first feature (no scikit-learn base)."""

    def fit(self, X, y=None):
        return self

    def predict(self, X):
        X = X.toarray() if sp.issparse(X) else np.asarray(X)
        return X[:, 0].astype(int)


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("k", K_LOO)
@pytest.mark.parametrize("n_clusters", [1, 3])
def test_lamlknn_kmeans_equals_twin(variant, fmt, k, n_clusters):
    Xf, Yf, Qf, X, Y, Q = data(variant, fmt)
    model = LAMLkNN(k, n_clusters=n_clusters, random_state=0).fit(Xf, Yf)
    if n_clusters == 1:
        train_clusters, query_clusters = [0] * len(X), [0] * len(Q)
    else:
        train_clusters = model.clusterer_.predict(Xf).tolist()
        query_clusters = model.clusterer_.predict(Qf).tolist()
    assert_same(model, Xf, Qf, twins.lamlknn(X, Y, Q, k, train_clusters, query_clusters))


@pytest.mark.parametrize("k", [3, 39])
@pytest.mark.parametrize("smoothing", [1.0, 0.0])
def test_lamlknn_user_clusterer_equals_twin(fmt, k, smoothing):
    _, _, _, X, Y, Q = data("empty", "dense")
    Q = Q.copy()
    Q[[1, 2], 0] = 7.0  # a cluster with no training member: whole-training-set statistics
    Xf, Qf = to_format(X, fmt), to_format(Q, fmt)
    model = LAMLkNN(k, clusterer=FirstFeature(), smoothing=smoothing).fit(Xf, Y)
    assert_same(
        model,
        Xf,
        Qf,
        twins.lamlknn(X, Y, Q, k, X[:, 0].astype(int).tolist(), Q[:, 0].astype(int).tolist(), smoothing),
    )


@pytest.mark.parametrize("seed", range(4))
def test_all_models_equal_twins_on_more_seeds(seed):
    X, Y, Q = corner_data(np.random.default_rng(100 + seed), VARIANTS[seed % 2], n_features=4, high=2)
    k = 5
    assert_same(MLkNN(k).fit(X, Y), X, Q, twins.mlknn(X, Y, Q, k))
    for extension in (None, "a", "b"):
        assert_same(BRkNN(k, extension=extension).fit(X, Y), X, Q, twins.brknn(X, Y, Q, k, extension))
    assert_same(LPkNN(k).fit(X, Y), X, Q, twins.lpknn(X, Y, Q, k))
    assert_same(DMLkNN(k, delta=1).fit(X, Y), X, Q, twins.dmlknn(X, Y, Q, k, delta=1))
