"""LAML-kNN: a hand-computed toy case, equality with ML-kNN for one cluster, the clusterer."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.cluster import KMeans

from mlneighbors import LAMLkNN, MLkNN

from .conftest import corner_data, to_format

X = np.array([[0.0], [1.0], [3.0], [10.0], [11.0], [13.0]])
Y = np.array([[1, 0], [1, 0], [0, 1], [0, 1], [0, 1], [1, 1]])


class Halves:
    """Cluster 0 below 5, cluster 1 above."""

    def fit(self, X, y=None):
        return self

    def predict(self, X):
        return (np.asarray(X)[:, 0] > 5).astype(int)


def test_toy_by_hand():
    model = LAMLkNN(1, clusterer=Halves()).fit(X, Y)
    # clusters {0,1,2} and {3,4,5}, P(W) = 1/2; leave-one-out C_i = (1,0) x3, (0,1) x3
    # cluster 0: label 0 prior 3/5, K1 = [0,2] -> [1/4, 3/4], K0 = [0,1] -> [1/3, 2/3]
    #            label 1 prior 2/5, K1 = [1,0] -> [2/3, 1/3], K0 = [2,0] -> [3/4, 1/4]
    # cluster 1: label 0 prior 2/5, K1 = [1,0] -> [2/3, 1/3], K0 = [2,0] -> [3/4, 1/4]
    #            label 1 prior 4/5, K1 = [0,3] -> [1/5, 4/5], K0 = [0,0] -> [1/2, 1/2]
    np.testing.assert_allclose(model.cluster_prior_, [0.5, 0.5])
    np.testing.assert_allclose(model.prior_, [[3 / 5, 2 / 5], [2 / 5, 4 / 5]], rtol=1e-15)
    # query 0.4 (cluster 0, C = (1,0)): label 0: a = 1/2*3/5*3/4, b = 1/2*2/5*2/3 -> 27/43
    #                                   label 1: a = 1/2*2/5*2/3, b = 1/2*3/5*3/4 -> 16/43
    # query 12.4 (cluster 1, C = (1,1)): label 0: a = 1/2*2/5*1/3, b = 1/2*3/5*1/4 -> 8/17
    #                                    label 1: a = 1/2*4/5*4/5, b = 1/2*1/5*1/2 -> 32/37
    Q = [[0.4], [12.4]]
    np.testing.assert_allclose(model.predict_proba(Q), [[27 / 43, 16 / 43], [8 / 17, 32 / 37]], rtol=1e-14)
    np.testing.assert_array_equal(model.predict(Q), [[1, 0], [0, 1]])
    # ML-kNN predicts label 0 for 12.4 (score 0.6): the local statistics differ
    assert MLkNN(1).fit(X, Y).predict(Q)[1, 0] == 1


@pytest.mark.parametrize("variant", ["everybody", "empty"])
@pytest.mark.parametrize("k", [1, 6, 39])
def test_one_cluster_equals_mlknn_exactly(variant, fmt, k):
    X2, Y2, Q2 = corner_data(np.random.default_rng(11), variant)
    X2, Q2 = to_format(X2, fmt), to_format(Q2, fmt)
    reference = MLkNN(k).fit(X2, Y2)
    for model in (
        LAMLkNN(k, n_clusters=1),
        LAMLkNN(k, clusterer=KMeans(n_clusters=1, n_init=1, random_state=0)),
    ):
        model.fit(X2, Y2)
        np.testing.assert_array_equal(model.predict_proba(Q2), reference.predict_proba(Q2))
        np.testing.assert_array_equal(model.predict(Q2), reference.predict(Q2))


def test_random_state_makes_fits_repeatable(rng):
    Xr = rng.normal(size=(120, 4))
    Yr = (rng.random((120, 5)) < 0.3).astype(int)
    Qr = rng.normal(size=(40, 4))
    first = LAMLkNN(5, n_clusters=4, random_state=3).fit(Xr, Yr).predict_proba(Qr)
    again = LAMLkNN(5, n_clusters=4, random_state=3).fit(Xr, Yr).predict_proba(Qr)
    np.testing.assert_array_equal(first, again)


def test_user_clusterer_is_cloned_and_empty_clusters_dropped(rng):
    Xr = rng.normal(size=(50, 2))
    Yr = (rng.random((50, 3)) < 0.4).astype(int)
    user = KMeans(n_clusters=3, n_init=1, random_state=0)
    model = LAMLkNN(4, clusterer=user, n_clusters=40).fit(Xr, Yr)  # n_clusters is ignored
    assert not hasattr(user, "cluster_centers_")  # cloned, the user's object untouched
    assert len(model.cluster_ids_) == 3
    assert model.prior_.shape == (3, 3)
    np.testing.assert_allclose(model.cluster_prior_.sum(), 1.0)

    class Sparse:  # ids 0 and 7 only: nothing in between exists
        def fit(self, X, y=None):
            return self

        def predict(self, X):
            return np.where(np.asarray(X)[:, 0] > 0, 7, 0)

    model = LAMLkNN(4, clusterer=Sparse()).fit(Xr, Yr)
    np.testing.assert_array_equal(model.cluster_ids_, [0, 7])
    assert np.isfinite(model.predict_proba(rng.normal(size=(20, 2)))).all()
