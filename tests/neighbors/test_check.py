"""check_index: every registered backend passes it; broken indexes fail it, each named.

The broken toy indexes are small brute forces of the protocol with one fault each; every
test checks that exactly the checks concerned fail, with a message that says what.
"""

from __future__ import annotations

import functools
import re
import unittest

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.utils import check_array

from mlneighbors.neighbors import (
    BACKENDS,
    BaseIndex,
    Capabilities,
    ExactIndex,
    NeighborCache,
    ShardedIndex,
    check_index,
    get_capabilities,
    get_index,
)
from mlneighbors.neighbors._check import CHECKS, brute_force, check_data, expected_order, other_queries

from ._backends import param
from ._twins import twin_kneighbors


def _backends():
    # every registered backend, its library from its class ("dask": tests/test_dask.py, with a
    # cluster), skipped where the library is absent
    for name in BACKENDS:
        if not get_capabilities(get_index(name)).dask_arrays:
            yield param(name, skip_absent=True)


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
    if name == "auto" or not caps.adds_rows:  # auto's exact pick rebuilds instead
        expected.add("add_rows")
    assert skipped == expected, results


@pytest.mark.parametrize("index, check", list(check_index(ExactIndex(metric="cosine"), generate_only=True)),
                         ids=lambda value: str(value) if not isinstance(value, BaseIndex) else "exact-cosine")
def test_checks_one_at_a_time(index, check):
    check(index)  # the form for parametrised tests: a skip is unittest.SkipTest, which pytest reports


def test_wrappers_and_a_factory_pass():
    for index in (ShardedIndex(ExactIndex(), n_shards=3), NeighborCache("exact", metric="cosine"),
                  functools.partial(ExactIndex, metric="manhattan"), ExactIndex):
        results = check_index(index)
        assert results.pop("add_rows").startswith("skipped:")  # none declares it: rebuilt instead
        assert all(outcome == "passed" for outcome in results.values()), results


def test_the_check_data_tie_exactly_and_nowhere_near():
    """Ties are exact in float64 and every other pair of distances is far apart, so brute force
    decides the order without a rounding question (what lets the check be strict)."""
    for metric in ("euclidean", "cosine", "manhattan"):
        X, Q = check_data(metric)
        for A in (X, Q, other_queries(Q)):
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


def test_the_other_queries_differ_in_their_answers_and_fit_in_place():
    """fresh_answers asks Q, then other_queries(Q): a stale answer shows where the two differ
    (all queries but two), and the CSR copy of one is written over the other's arrays in place."""
    for metric in ("euclidean", "cosine", "manhattan"):
        X, Q = check_data(metric)
        Q2 = other_queries(Q)
        assert Q2.shape == Q.shape and not np.signbit(Q2[Q2 == 0]).any()  # no negative zeros
        first = expected_order(brute_force(X, Q, metric))[:, :5]
        assert (first != expected_order(brute_force(X, Q2, metric))[:, :5]).any(axis=1).sum() >= len(Q) - 2, metric
        a, b = sp.csr_matrix(Q), sp.csr_matrix(Q2)
        assert a.nnz == b.nnz and b.has_canonical_format


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
    assert results.pop("add_rows") == "skipped: Brute does not declare that it adds rows"
    assert set(results.values()) == {"passed"}


@pytest.mark.parametrize(
    "broken, fails, first, message",
    [
        (HigherRowFirst(), {"ties", "exact", "leave_one_out", "fresh_answers"}, "ties",
         r"check_index\(HigherRowFirst\): ties: query\(Q, k=5\) with metric='euclidean': query 0 returned row 35 "
         r"before row 25 at the same distance 1\.0; ties go to the lower row first"),
        (SelfTwice(), {"leave_one_out"}, "leave_one_out",
         r"check_index\(SelfTwice\): leave_one_out: loo_kneighbors\(index, X, k=1\) with metric='euclidean' "
         r"raised ValueError: the index returned row 0 more than once among its own neighbours \[0, 0\]"),
        (ExactFlagOnApproximate(), {"exact", "prefix", "leave_one_out", "fresh_answers"}, "exact",
         r"check_index\(ExactFlagOnApproximate\): exact: query\(Q, k=1\) with metric='euclidean': the index declares "
         r"itself exact, but query 1 got rows \[0\] at distances \[3\.605551275463989\]; brute force gives rows "
         r"\[11\] at distances \[0\.0\] \(distance, then the lower row\)"),
        (Descending(), {"build_and_query", "k_edges", "one_row", "ties", "true_distances", "exact", "prefix",
                        "leave_one_out",
                        "fresh_answers", "pickle"},
         "build_and_query", r"query\(Q, k=5\): query 0's distances are not ascending"),
        (Squared(), {"true_distances", "exact", "leave_one_out", "fresh_answers"}, "true_distances",
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
            self.build_rows(X)
            self.n_samples_fit_, self.n_features_in_ = X.shape
            return self

        def build_rows(self, X):
            self._brute = Brute().build(X)

        def query_rows(self, Q, k):
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


# ---------------------------------------------------------------------------- toy subclasses of BaseIndex
#
# One correct brute force of BaseIndex and one subclass per fault: every check of check_index
# has at least one toy it must fail, and check_index must name that check first.


def _dense(A):
    return A.toarray() if sp.issparse(A) else A


def _unit(A):
    norms = np.sqrt((A * A).sum(axis=1))
    return A / np.where(norms == 0, 1.0, norms)[:, None]


def _normalise_in_place(A):
    """The rows of ``A`` divided by their norms, written into ``A`` itself."""
    if sp.issparse(A):
        norms = np.sqrt(np.bincount(np.repeat(np.arange(A.shape[0]), np.diff(A.indptr)), weights=A.data * A.data,
                                    minlength=A.shape[0]))
        A.data /= np.repeat(np.where(norms == 0, 1.0, norms), np.diff(A.indptr))
    else:
        norms = np.sqrt((A * A).sum(axis=1))
        A /= np.where(norms == 0, 1.0, norms)[:, None]
    return A


class Toy(BaseIndex):
    """A correct brute force (euclidean and cosine, dense and CSR), the toys' scaffolding.

    The distances are computed pair by pair (no GEMM), so rows equal bit for bit are at equal
    distances bit for bit, as the tie rule wants."""

    name = "toy"
    capabilities = Capabilities(exact=True, metrics=("euclidean", "cosine"), sparse=True, adds_rows=True)
    check = None  # the check a broken toy must fail first

    def __init__(self, metric="euclidean"):
        self.metric = metric

    def build_rows(self, X):
        self._X = _dense(X)

    def add_rows(self, X):
        self._X = _dense(X)
        self.n_samples_fit_ = X.shape[0]

    def _distances(self, Q):
        Q, X = _dense(Q), self._X
        if self.metric == "cosine":
            return np.clip(1.0 - (_unit(Q)[:, None, :] * _unit(X)[None, :, :]).sum(axis=2), 0.0, 2.0)
        return np.sqrt(((Q[:, None, :] - X[None, :, :]) ** 2).sum(axis=2))

    @staticmethod
    def _first_k(D, k):
        order = np.lexsort((np.broadcast_to(np.arange(D.shape[1]), D.shape), D), axis=1)[:, :k]
        return np.take_along_axis(D, order, axis=1), order

    def query_rows(self, Q, k):
        return self._first_k(self._distances(Q), k)

    def _pool_by_first_coordinate(self, Q, k, size):
        """The k nearest of the ``size`` rows nearest in the first coordinate alone."""
        D = self._distances(Q)
        along = np.abs(_dense(Q)[:, :1] - self._X[None, :, 0])
        pool = np.lexsort((np.broadcast_to(np.arange(D.shape[1]), D.shape), along), axis=1)[:, :size]
        D_pool = np.full(D.shape, np.inf)
        np.put_along_axis(D_pool, pool, np.take_along_axis(D, pool, axis=1), axis=1)
        return self._first_k(D_pool, k)


class FallsBackToEuclidean(Toy):
    """Declares euclidean only, and searches any other metric as euclidean without a word."""

    check = "capabilities"
    capabilities = Capabilities(exact=True, metrics=("euclidean",), sparse=True)

    def build(self, X):
        if self.metric not in self.capabilities.metrics:
            self.metric = "euclidean"
        return super().build(X)


class RuntimeErrorBeforeBuild(Toy):
    """Queried before build: RuntimeError, not ValueError / NotFittedError."""

    check = "query_before_build"

    def query(self, Q, k):
        if not hasattr(self, "_X"):
            raise RuntimeError("build the index first")
        return super().query(Q, k)


class OneTooMany(Toy):
    """Wrong k: k + 1 columns (up to n)."""

    check = "build_and_query"

    def query_rows(self, Q, k):
        return super().query_rows(Q, min(k + 1, self._X.shape[0]))


class Float32Distances(Toy):
    """float32 distances."""

    check = "build_and_query"

    def query_rows(self, Q, k):
        dist, idx = super().query_rows(Q, k)
        return dist.astype(np.float32), idx


class MinusOnePadding(Toy):
    """Pads with -1 where it did not reach a row (the last one at k = n), as faiss does."""

    check = "build_and_query"

    def query_rows(self, Q, k):
        dist, idx = super().query_rows(Q, k)
        if k == self._X.shape[0]:
            idx[:, -1] = -1
        return dist, idx


class InRowOrder(Toy):
    """The k nearest rows in the order of their row numbers: distances not ascending."""

    check = "build_and_query"

    def query_rows(self, Q, k):
        dist, idx = super().query_rows(Q, k)
        order = np.argsort(idx, axis=1)
        return np.take_along_axis(dist, order, axis=1), np.take_along_axis(idx, order, axis=1)


class HigherRowFirstToy(Toy):
    """Wrong tie order: at equal distances the higher row first."""

    check = "ties"

    def query_rows(self, Q, k):
        D = self._distances(Q)
        order = np.lexsort((-np.broadcast_to(np.arange(D.shape[1]), D.shape), D), axis=1)[:, :k]
        return np.take_along_axis(D, order, axis=1), order


class SquaredDistances(Toy):
    """The right rows, at their squared distances."""

    check = "true_distances"

    def query_rows(self, Q, k):
        dist, idx = super().query_rows(Q, k)
        return dist * dist, idx


class ClampsK(Toy):
    """k larger than the number of rows is clamped to it, not refused."""

    check = "k_edges"

    def query(self, Q, k):
        if isinstance(k, int) and hasattr(self, "n_samples_fit_"):
            k = min(k, self.n_samples_fit_)
        return super().query(Q, k)


class CrashesOnOneRow(Toy):
    """Answers blocks of queries, but a single row loses its query axis and the search fails
    on it (a squeeze before the distances): every other check queries nine rows or more."""

    check = "one_row"

    def query_rows(self, Q, k):
        return super().query_rows(np.squeeze(Q) if Q.shape[0] == 1 else Q, k)


class AddsNothing(Toy):
    """Declares that it adds rows, but ``add_rows`` only counts them: the added rows are not
    searched."""

    check = "add_rows"

    def add_rows(self, X):
        self.n_samples_fit_ = X.shape[0]


class FlatEmptyAnswer(Toy):
    """A query of no rows: two arrays of shape (0,), not (0, k) (a shortcut before validation)."""

    check = "empty_query"

    def query(self, Q, k):
        if np.shape(Q)[0] == 0:
            return np.empty(0), np.empty(0, dtype=np.intp)
        return super().query(Q, k)


class TakesNaN(Toy):
    """Does not refuse NaN or infinity (its validation lets them through)."""

    check = "bad_input"

    def _check_data(self, X, *, name):
        return check_array(X, accept_sparse="csr", dtype=np.float64, ensure_all_finite=False, input_name=name)


class NormalisesXInPlace(Toy):
    """Cosine: normalises the indexed rows at build, in the caller's array."""

    check = "inputs_unchanged"
    capabilities = Capabilities(exact=True, metrics=("cosine",), sparse=True)

    def __init__(self, metric="cosine"):
        self.metric = metric

    def build_rows(self, X):
        super().build_rows(_normalise_in_place(X))


class NormalisesQInPlace(NormalisesXInPlace):
    """Cosine: normalises the queries, in the caller's array (the indexed rows it copies)."""

    def build_rows(self, X):
        Toy.build_rows(self, _unit(_dense(X)))

    def query_rows(self, Q, k):
        return super().query_rows(_normalise_in_place(Q), k)


class NormalisesCSRInPlace(NormalisesXInPlace):
    """Cosine: normalises CSR rows in the caller's ``data`` (dense rows it copies)."""

    def build_rows(self, X):
        Toy.build_rows(self, _normalise_in_place(X) if sp.issparse(X) else _unit(X))


class NormalisesInLeaveOneOut(NormalisesXInPlace):
    """Cosine: its leave-one-out normalises the indexed rows it is given, in the caller's array,
    before the usual search."""

    capabilities = Capabilities(exact=True, metrics=("cosine",), sparse=True, loo_queries=True)

    def build_rows(self, X):
        Toy.build_rows(self, _unit(_dense(X)))

    def loo_query_rows(self, X, rows, m):
        _normalise_in_place(X)


class ClaimsExact(Toy):
    """Declares itself exact, but picks its candidates by the first coordinate alone."""

    check = "exact"

    def query_rows(self, Q, k):
        return self._pool_by_first_coordinate(Q, k, k)


class ClaimsPrefixSafe(Toy):
    """Approximate (2k candidates by the first coordinate) but declares itself prefix-safe."""

    check = "prefix"
    capabilities = Capabilities(exact=False, metrics=("euclidean", "cosine"), sparse=True, prefix_safe=True)

    def query_rows(self, Q, k):
        return self._pool_by_first_coordinate(Q, k, 2 * k)


class LeavesOutDuplicates(Toy):
    """Its own leave-one-out leaves out every row at distance 0 from a row (its duplicates
    too), not only the row itself."""

    check = "leave_one_out"
    capabilities = Capabilities(exact=True, metrics=("euclidean", "cosine"), sparse=True, loo_queries=True)

    def loo_query_rows(self, X, rows, m):
        queried = np.arange(X.shape[0]) if rows is None else rows
        D = self._distances(X[queried])
        D[D == 0] = np.inf
        D[np.arange(len(queried)), queried] = 0.0  # itself first, as a search finds it
        return self._first_k(D, m)


class StaleByShape(Toy):
    """Keeps its last answer by the queries' shape and k: new queries of the same shape get it."""

    check = "fresh_answers"

    def query_rows(self, Q, k):
        key = (Q.shape, k)
        if getattr(self, "_last", (None,))[0] != key:
            self._last = (key, super().query_rows(Q, k))
        return self._last[1]


class StaleByIdentity(Toy):
    """Keeps its answers by the identity of the query array and k: the same array, overwritten
    in place, gets the answer to its old values."""

    check = "fresh_answers"

    def query(self, Q, k):
        answers = self.__dict__.setdefault("_answers", {})
        if (id(Q), k) not in answers:
            answers[id(Q), k] = super().query(Q, k)
        return answers[id(Q), k]


class RandomCandidates(Toy):
    """Approximate and not deterministic: searches 2k rows drawn anew at every query."""

    check = "fresh_answers"
    capabilities = Capabilities(exact=False, metrics=("euclidean", "cosine"), sparse=True)

    def query_rows(self, Q, k):
        self._draws = getattr(self, "_draws", 0) + 1
        D = self._distances(Q)
        keys = np.random.default_rng(self._draws).random(D.shape)
        drawn = np.argsort(keys, axis=1)[:, 2 * k:]
        np.put_along_axis(D, drawn, np.inf, axis=1)
        return self._first_k(D, k)


class StaleInItsOwnSpace(StaleByShape):
    """A stale answer, from an index of distances of its own (neither exact nor true distances:
    held to a pickled copy asked nothing before)."""

    capabilities = Capabilities(exact=False, metrics=("euclidean", "cosine"), sparse=True, true_distances=False)


class ForgetsRowsWhenPickled(Toy):
    """Leaves its rows out of a pickle (a built copy cannot answer)."""

    check = "pickle"

    def __getstate__(self):
        state = super().__getstate__()
        state.pop("_X", None)
        return state


class SquaredForCSRQueriesOfDenseRows(Toy):
    """A path of its own for CSR queries of dense rows, which forgets the square root."""

    check = "sparse"

    def build_rows(self, X):
        super().build_rows(X)
        self._dense_rows = not sp.issparse(X)

    def query_rows(self, Q, k):
        dist, idx = super().query_rows(Q, k)
        return (dist * dist if sp.issparse(Q) and self._dense_rows else dist), idx


TOYS = [FallsBackToEuclidean, RuntimeErrorBeforeBuild, OneTooMany, Float32Distances, MinusOnePadding, InRowOrder,
        HigherRowFirstToy, SquaredDistances, ClampsK, CrashesOnOneRow, FlatEmptyAnswer, TakesNaN, NormalisesXInPlace,
        NormalisesQInPlace, NormalisesCSRInPlace, NormalisesInLeaveOneOut, ClaimsExact, ClaimsPrefixSafe,
        LeavesOutDuplicates, StaleByShape, StaleByIdentity, StaleInItsOwnSpace, RandomCandidates,
        ForgetsRowsWhenPickled, SquaredForCSRQueriesOfDenseRows, AddsNothing]

#: what each toy's message must say, beyond the name of its check
SEEN = {
    FallsBackToEuclidean: r"build with metric='cosine', which it does not declare \(\['euclidean'\]\), did not raise",
    RuntimeErrorBeforeBuild: r"raised RuntimeError \(build the index first\); expected ValueError or NotFittedError",
    OneTooMany: r"query\(Q, k=1\) returned dist of shape \(9, 2\); expected \(9, 1\)",
    Float32Distances: r"returned dist of dtype float32; expected float64",
    MinusOnePadding: r"returned row number -1; the 36 indexed rows are 0 \.\. 35 \(no -1 padding\)",
    InRowOrder: r"query\(Q, k=5\): query 0's distances are not ascending: \[0\.0, 1\.4142135623730951, 1\.0",
    HigherRowFirstToy: r"ties go to the lower row first",
    SquaredDistances: r"query 3 returned row 13 at distance 2\.0000000000000004, but it is at 1\.4142135623730951",
    ClampsK: r"query\(Q, k=37\) with 36 indexed rows did not raise",
    CrashesOnOneRow: r"query\(Q, k=1\) raised",
    AddsNothing: r"added row 27 is not its own nearest neighbour",
    FlatEmptyAnswer: r"query of 0 rows returned dist of shape \(0,\); expected \(0, 3\)",
    TakesNaN: r"a query with NaN did not raise ValueError",
    NormalisesXInPlace: r"build\(X\) with metric='cosine' \(dense rows\) changed the caller's X "
                        r"in place: X\[0, 0\] was 6\.0, is now 0\.8017837257372732 \(82 of 108 values changed\)",
    NormalisesQInPlace: r"query\(Q, k=5\) with metric='cosine' \(dense rows, dense queries\) changed the caller's Q "
                        r"in place: Q\[0, 0\] was 1\.0, is now 0\.7071067811865475",
    NormalisesCSRInPlace: r"build\(X\) with metric='cosine' \(CSR rows\) changed the caller's X in "
                          r"place: X\.data\[0\] was 6\.0, is now 0\.8017837257372732",
    NormalisesInLeaveOneOut: r"loo_kneighbors\(index, X, k=4\) with metric='cosine' \(dense rows\) "
                             r"changed the caller's X in place",
    ClaimsExact: r"the index declares itself exact, but query 1 got rows",
    ClaimsPrefixSafe: r"query\(Q, k=1\) gives rows .* but the first 1 of query\(Q, k=36\) are",
    LeavesOutDuplicates: r"loo_kneighbors\(index, X, k=1\) with metric='euclidean': the index declares itself exact, "
                         r"but query 2 got rows \[4\] at distances \[1\.7320508075688772\]; brute force gives "
                         r"rows \[24\]",
    StaleByShape: r"query\(Q2, k=5\) of new queries of the same shape, after query\(Q, k=5\) with "
                  r"metric='euclidean' \(dense\): .*; that is the answer to the earlier queries, bit for bit",
    StaleByIdentity: r"query\(Q, k=5\) of the first array, overwritten in place with Q2's values, with "
                     r"metric='euclidean' \(dense\): .*; that is the answer to the earlier queries, bit for bit",
    StaleInItsOwnSpace: r"query\(Q2, k=5\) of new queries .*: query 0 got rows .*; a pickled copy of the built "
                        r"index, asked nothing before, answers rows .*; that is the answer to the earlier queries",
    RandomCandidates: r"the first queries asked again .* got rows .*; the first time, rows",
    ForgetsRowsWhenPickled: r"query\(Q, k=5\) raised AttributeError",
    SquaredForCSRQueriesOfDenseRows: r"dense rows, CSR queries, query\(Q, k=1\) with metric='euclidean': query 3 "
                                     r"returned row 13 at distance 2\.0000000000000004",
}


def test_the_correct_toy_passes():
    results = check_index(Toy())
    assert set(results.values()) == {"passed"}, results
    assert set(results) == {run.__name__.removeprefix("check_") for run in CHECKS}


def test_every_check_has_a_toy_that_fails_it():
    assert {toy.check for toy in TOYS} == {run.__name__.removeprefix("check_") for run in CHECKS}
    assert set(SEEN) == set(TOYS)


@pytest.mark.parametrize("toy", TOYS, ids=lambda toy: toy.__name__)
def test_every_broken_toy_fails_its_check_by_name(toy):
    with pytest.raises(AssertionError) as caught:
        check_index(toy())
    message = str(caught.value)
    assert message.startswith(f"check_index({toy.__name__}): {toy.check}: "), message
    assert re.search(SEEN[toy], message), message


def test_writing_into_a_cached_answer_leaves_later_answers_alone(rng):
    from mlneighbors.neighbors import NeighborCache

    X, Q = rng.normal(size=(40, 3)), rng.normal(size=(7, 3))
    cache = NeighborCache(k_max=6).build(X)
    want = [a.copy() for a in cache.query(Q, 6)]
    dist, idx = cache.query(Q, 4)
    dist[:] = -1.0
    idx[:] = 0
    again = cache.query(Q, 6)
    np.testing.assert_array_equal(again[0], want[0])
    np.testing.assert_array_equal(again[1], want[1])
