"""Property tests: on any small integer data set, every exact path equals the loop twin."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from mlneighbors.neighbors import ExactIndex, ShardedIndex, loo_kneighbors

from ._twins import twin_kneighbors


@st.composite
def problems(draw):
    n = draw(st.integers(2, 30))
    d = draw(st.integers(1, 5))
    values = st.integers(-2, 2).map(float)  # few values: many exact ties and duplicates
    X = draw(arrays(np.float64, (n, d), elements=values))
    Q = draw(arrays(np.float64, (draw(st.integers(1, 8)), d), elements=values))
    k = draw(st.integers(1, n))
    metric = draw(st.sampled_from(["euclidean", "cosine", "manhattan"]))
    # sparse cosine sums in another order than the dense twin: ulp-level, not tie-exact
    sparse = draw(st.booleans()) and metric != "cosine"
    shards = draw(st.integers(1, 4))
    return X, Q, k, metric, sparse, shards


@settings(max_examples=50, deadline=None)
@given(problems())
def test_every_exact_path_equals_the_twin(problem):
    X, Q, k, metric, sparse, shards = problem
    Xin = sp.csr_matrix(X) if sparse else X
    index = ShardedIndex(ExactIndex(metric=metric, working_memory=0.001, n_jobs=2), shards).build(Xin)
    assert_twin_answers(index, Xin, X, Q, k, metric)


def assert_twin_answers(index, Xin, X, Q, k, metric):
    """The queries' and (k < n) the leave-one-out's neighbours of ``index`` (built on ``Xin``,
    the rows ``X``) equal the loop twin's, bit for bit."""
    dist, idx = index.query(Q, k)
    ref_dist, ref_idx = twin_kneighbors(X, Q, k, metric)
    np.testing.assert_array_equal(idx, ref_idx)
    np.testing.assert_array_equal(dist, ref_dist)
    if k < len(X):
        dist, idx = loo_kneighbors(index, Xin, k)
        ref_dist, ref_idx = twin_kneighbors(X, X, k, metric, exclude=np.arange(len(X)))
        np.testing.assert_array_equal(idx, ref_idx)
        np.testing.assert_array_equal(dist, ref_dist)


@st.composite
def mostly_zeros(draw):
    """Dense rows with many zeros, integer or continuous values: the sparse product's path."""
    n = draw(st.integers(2, 40))
    d = draw(st.integers(1, 12))
    nonzero = draw(st.sampled_from([st.sampled_from([1.0, -1.0, 2.0]),
                                    st.floats(-4, 4, allow_nan=False, allow_infinity=False, allow_subnormal=False)]))
    values = st.one_of(st.just(0.0), st.just(0.0), nonzero)
    X = draw(arrays(np.float64, (n, d), elements=values))
    Q = draw(arrays(np.float64, (draw(st.integers(1, 8)), d), elements=values))
    k = draw(st.integers(1, n))
    metric = draw(st.sampled_from(["euclidean", "cosine"]))
    return X, Q, k, metric, draw(st.sampled_from([1, 2]))


@pytest.mark.filterwarnings("ignore::mlneighbors.exceptions.DataScaleWarning")  # tiny values are drawn too
@settings(max_examples=60, deadline=None)
@given(mostly_zeros())
def test_dense_rows_by_the_sparse_product_equal_the_twin(problem):
    # the distances from the dense rows, the proxy from their stored values: bit for bit
    X, Q, k, metric, n_jobs = problem
    index = ExactIndex(metric=metric, sparse_strategy="sparse", working_memory=0.001, n_jobs=n_jobs).build(X)
    assert index.strategy_ == "sparse" or index._model.center is not None
    assert_twin_answers(index, X, X, Q, k, metric)
