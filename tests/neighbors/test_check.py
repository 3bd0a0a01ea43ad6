"""check_index: every registered backend passes it; broken indexes fail it, each named.

The broken toy indexes are small brute forces of the protocol with one fault each; every
test checks that exactly the checks concerned fail, with a message that says what.
"""

from __future__ import annotations

import functools
import importlib.util
import unittest

import numpy as np
import pytest
from sklearn.utils import check_array

from mlneighbors.neighbors import (
    BACKENDS,
    BaseIndex,
    Capabilities,
    ExactIndex,
    NeighborCache,
    ShardedIndex,
    check_index,
    get_index,
)
from mlneighbors.neighbors._check import CHECKS, brute_force, check_data, expected_order

from ._twins import twin_kneighbors

#: the libraries behind the registered backends ("dask": tests/test_dask.py, with a cluster)
LIBRARY = {"torch": "torch", "faiss-ivf": "faiss", "faiss-hnsw": "faiss", "hnswlib": "hnswlib",
           "pynndescent": "pynndescent"}
SLOW = {"pynndescent"}  # the first build compiles numba kernels


def _backends():
    for name in BACKENDS:
        if name == "dask":
            continue
        marks = [pytest.mark.slow] if name in SLOW else []
        module = LIBRARY.get(name)
        if module is not None and importlib.util.find_spec(module) is None:
            marks.append(pytest.mark.skip(reason=f"{module} is not installed"))
        yield pytest.param(name, marks=marks, id=name)


@pytest.mark.parametrize("name", list(_backends()))
def test_every_registered_backend_passes(name):
    results = check_index(get_index(name))
    assert set(results) == {run.__name__.removeprefix("check_") for run in CHECKS}
    caps = get_index(name).capabilities
    # a check is skipped only where the backend declares it does not apply
    skipped = {check for check, outcome in results.items() if outcome != "passed"}
    expected = set()
    if not caps.true_distances:
        expected.add("true_distances")
    if name != "auto" and not caps.exact:  # auto picks the exact search on data this small
        expected |= {"exact", "prefix"}
    assert skipped == expected, results


@pytest.mark.parametrize("index, check", list(check_index(ExactIndex(metric="cosine"), generate_only=True)),
                         ids=lambda value: str(value) if not isinstance(value, BaseIndex) else "exact-cosine")
def test_checks_one_at_a_time(index, check):
    check(index)  # the form for parametrised tests: a skip is unittest.SkipTest, which pytest reports


def test_wrappers_and_a_factory_pass():
    for index in (ShardedIndex(ExactIndex(), n_shards=3), NeighborCache("exact", metric="cosine"),
                  functools.partial(ExactIndex, metric="manhattan"), ExactIndex):
        results = check_index(index)
        assert all(outcome == "passed" for outcome in results.values()), results


def test_the_check_data_tie_exactly_and_nowhere_near():
    """Ties are exact in float64 and every other pair of distances is far apart, so brute force
    decides the order without a rounding question (what lets the check be strict)."""
    for metric in ("euclidean", "cosine", "manhattan"):
        X, Q = check_data(metric)
        for A in (X, Q):
            D = brute_force(X, A, metric)
            ties = 0
            for d in D:
                values = np.unique(d)
                ties += len(d) - len(values)
                if len(values) > 1:
                    assert np.diff(values).min() > 1e-3, metric
            assert ties > 3 * len(D), metric  # many exact ties: the tie rule is exercised
        # the brute force of the check against the loop twin of the tests
        want = twin_kneighbors(X, Q, X.shape[0], metric)
        order = expected_order(brute_force(X, Q, metric))
        np.testing.assert_array_equal(order, want[1])
        loo = expected_order(brute_force(X, X, metric), exclude=np.arange(len(X)))
        np.testing.assert_array_equal(loo, twin_kneighbors(X, X, len(X) - 1, metric, exclude=np.arange(len(X)))[1])


# ---------------------------------------------------------------------------- broken indexes


class Brute:
    """A correct brute force of the protocol, outside the package (the toys' base)."""

    metric = "euclidean"
    exact = True

    def build(self, X):
        self.X_ = check_array(X, dtype=np.float64)
        return self

    def _distances(self, Q):
        Q = check_array(Q, dtype=np.float64)
        if Q.shape[1] != self.X_.shape[1]:
            raise ValueError(f"Q has {Q.shape[1]} features, the index {self.X_.shape[1]}")
        return np.sqrt(((Q[:, None, :] - self.X_[None, :, :]) ** 2).sum(axis=2))

    def _check_k(self, k):
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
            raise TypeError(f"k must be an integer, got {k!r}")
        if not 1 <= k <= len(self.X_):
            raise ValueError(f"k={k} must be in 1 .. {len(self.X_)}")

    def query(self, Q, k):
        self._check_k(k)
        D = self._distances(Q)
        rows = np.broadcast_to(np.arange(len(self.X_)), D.shape)
        order = np.lexsort((rows, D), axis=1)[:, :k]
        return np.take_along_axis(D, order, axis=1), order.astype(np.intp)


class HigherRowFirst(Brute):
    """Wrong order: ties go to the higher row."""

    def query(self, Q, k):
        self._check_k(k)
        D = self._distances(Q)
        rows = np.broadcast_to(np.arange(len(self.X_)), D.shape)
        order = np.lexsort((-rows, D), axis=1)[:, :k]
        return np.take_along_axis(D, order, axis=1), order.astype(np.intp)


class SelfTwice(Brute):
    """Self in leave-one-out: queried with the rows it holds, it puts each row first as its own
    match (a shortcut) on top of the search, which finds the row too."""

    def query(self, Q, k):
        if Q is not self.X_:
            return super().query(Q, k)
        dist, idx = super().query(Q, k - 1) if k > 1 else (np.empty((len(Q), 0)), np.empty((len(Q), 0), np.intp))
        own = np.arange(len(Q))[:, None]
        return np.hstack([np.zeros((len(Q), 1)), dist]), np.hstack([own, idx]).astype(np.intp)


class ExactFlagOnApproximate(Brute):
    """Declares itself exact, but picks its k candidates by the first coordinate alone (then
    sorts them by their true distances): an approximate search."""

    def query(self, Q, k):
        self._check_k(k)
        D = self._distances(Q)
        Qa = check_array(Q, dtype=np.float64)
        rows = np.broadcast_to(np.arange(len(self.X_)), D.shape)
        along = np.abs(Qa[:, :1] - self.X_[None, :, 0])
        picked = np.lexsort((rows, along), axis=1)[:, :k]
        picked_d = np.take_along_axis(D, picked, axis=1)
        order = np.lexsort((picked, picked_d), axis=1)
        return np.take_along_axis(picked_d, order, axis=1), np.take_along_axis(picked, order, axis=1).astype(np.intp)


class Descending(Brute):
    """Wrong order: the k nearest, farthest first."""

    def query(self, Q, k):
        dist, idx = super().query(Q, k)
        return dist[:, ::-1].copy(), idx[:, ::-1].copy()


class Squared(Brute):
    """Squared distances (the true ones' order, not their values)."""

    def query(self, Q, k):
        dist, idx = super().query(Q, k)
        return dist * dist, idx


def _failing(index):
    """Check name -> message of every check that fails."""
    failures = {}
    for _, check in check_index(index, generate_only=True):
        try:
            check(index)
        except unittest.SkipTest:
            pass
        except AssertionError as exc:
            failures[str(check)] = str(exc)
    return failures


def test_a_correct_foreign_index_passes():
    assert _failing(Brute()) == {}
    results = check_index(Brute())
    assert results.pop("sparse") == "skipped: Brute does not declare sparse input"  # the default of a foreign index
    assert set(results.values()) == {"passed"}


@pytest.mark.parametrize(
    "broken, fails, first, message",
    [
        (HigherRowFirst(), {"ties", "exact", "leave_one_out"}, "ties",
         r"check_index\(HigherRowFirst\): ties: query\(Q, k=5\) with metric='euclidean': query 0 returned row 35 "
         r"before row 25 at the same distance 1\.0; ties go to the lower row first"),
        (SelfTwice(), {"leave_one_out"}, "leave_one_out",
         r"check_index\(SelfTwice\): leave_one_out: loo_kneighbors\(index, X, k=1\) with metric='euclidean' "
         r"raised ValueError: the index returned row 0 more than once among its own neighbours \[0, 0\]"),
        (ExactFlagOnApproximate(), {"exact", "prefix", "leave_one_out"}, "exact",
         r"check_index\(ExactFlagOnApproximate\): exact: query\(Q, k=1\) with metric='euclidean': the index declares "
         r"itself exact, but query 1 got rows \[0\] at distances \[3\.605551275463989\]; brute force gives rows "
         r"\[11\] at distances \[0\.0\] \(distance, then the lower row\)"),
        (Descending(), {"build_and_query", "k_edges", "ties", "true_distances", "exact", "prefix", "leave_one_out",
                        "pickle"},
         "build_and_query", r"query\(Q, k=5\): query 0's distances are not ascending"),
        (Squared(), {"true_distances", "exact", "leave_one_out"}, "true_distances",
         r"true_distances: query\(Q, k=1\) with metric='euclidean': query 3 returned row 13 at distance "
         r"2\.0000000000000004, but it is at 1\.4142135623730951 \(float64 true distances"),
    ],
    ids=lambda value: type(value).__name__ if not isinstance(value, (set, str)) else "",
)
def test_broken_indexes_are_caught_and_named(broken, fails, first, message):
    failures = _failing(broken)
    assert set(failures) == fails, failures
    with pytest.raises(AssertionError, match=message) as caught:
        check_index(broken)
    assert f": {first}: " in str(caught.value)


def test_an_exception_of_the_index_is_the_check_failing_with_its_cause():
    class Crashes(Brute):
        def query(self, Q, k):
            if k == 5:
                raise IndexError("index 36 is out of bounds")
            return super().query(Q, k)

    with pytest.raises(AssertionError, match=r"build_and_query: query\(Q, k=5\) raised IndexError: index 36") as caught:
        check_index(Crashes())
    assert isinstance(caught.value.__cause__, IndexError)


def test_minus_one_padding_and_float_rows_are_named():
    class Padded(Brute):
        def query(self, Q, k):
            dist, idx = super().query(Q, k)
            if k > 30:
                idx[:, -1] = -1
            return dist, idx

    class FloatRows(Brute):
        def query(self, Q, k):
            dist, idx = super().query(Q, k)
            return dist, idx.astype(np.float64)

    with pytest.raises(AssertionError, match=r"returned row number -1; the 36 indexed rows are 0 \.\. 35"):
        check_index(Padded())
    with pytest.raises(AssertionError, match="returned idx of dtype float64; expected int64"):
        check_index(FloatRows())


def test_a_metric_it_does_not_declare_must_be_refused():
    class Lenient(BaseIndex):  # declares euclidean only, searches anything as euclidean
        name = "lenient"
        capabilities = Capabilities(exact=True, metrics=("euclidean",))

        def __init__(self, metric="euclidean"):
            self.metric = metric

        def build(self, X):  # skips the metric check of BaseIndex.build
            X = check_array(X, dtype=np.float64)
            self._build(X)
            self.n_samples_fit_, self.n_features_in_ = X.shape
            return self

        def _build(self, X):
            self._brute = Brute().build(X)

        def _query(self, Q, k):
            return self._brute.query(Q, k)

    with pytest.raises(AssertionError, match=r"capabilities: build with metric='cosine', which it does not declare "
                                             r"\(\['euclidean'\]\), did not raise ValueError"):
        check_index(Lenient())


def test_a_cached_result_is_not_sliced_with_a_bad_k():
    # found by check_index: a NeighborCache answered k=0 (and k=-3) from a cached result
    X, Q = check_data("euclidean")
    cache = NeighborCache().build(X)
    cache.query(Q, 10)
    for k, error in ((0, ValueError), (-3, ValueError), (2.5, TypeError)):
        with pytest.raises(error, match="k must be"):
            cache.query(Q, k)
    assert cache.searches == 1
