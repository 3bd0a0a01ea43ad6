"""``check_index``: the conformance suite of the index protocol (what ``check_estimator`` is to
scikit-learn's estimators).

Every check builds fresh copies of the index on small data sets made for the purpose and holds
the results to the protocol (:class:`~mlneighbors.neighbors.NeighborIndex`) and to what the
index declares (:class:`~mlneighbors.neighbors.Capabilities`).  The data have many exact ties
and no near ones:

- euclidean and manhattan: rows of small integers, with duplicate rows (every squared
  distance an integer: equal distances are equal in any float64 arithmetic, unequal ones far
  apart);
- cosine: power-of-two multiples of a few integer directions (their normalised rows are equal
  bit for bit), and queries among the rows, the origin and other integer directions.

An index that declares itself exact is compared with the brute force of this module: the
first k rows by (distance, row number), distances within ``1e-9`` of the data's scale (two
distances that close count as a tie, so a last-bit difference in the order of summation does
not fail an exact index).
"""

from __future__ import annotations

import pickle
import unittest
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import scipy.sparse as sp

from ._capabilities import METRICS, get_capabilities
from ._loo import loo_kneighbors
from ._protocol import unbuilt_copy

__all__ = ["check_index"]

#: two distances of a query closer than this share of the data's scale are a tie
TIE_TOLERANCE = 1e-9


class _Failure(AssertionError):
    """A check's finding, told apart from an AssertionError of the index under test (the
    caller gets a plain AssertionError)."""


# ---------------------------------------------------------------------------- data


def check_data(metric: str) -> tuple[np.ndarray, np.ndarray]:
    """The indexed rows and the queries of the checks for ``metric``: (36, 3) and (9, 3)."""
    rng = np.random.default_rng(20240611)
    if metric == "cosine":
        bases = np.array([[1, 0, 0], [0, 1, 0], [1, 1, 0], [3, -1, 2], [-2, 5, 1], [4, 1, -3],
                          [-1, -3, 4], [2, 2, -5]], dtype=np.float64)
        X = bases[rng.integers(0, len(bases), size=36)] * 2.0 ** rng.integers(0, 3, size=(36, 1))
        others = np.array([[5, -2, 1], [-3, 1, -1], [1, 4, 2], [0, 0, 1]], dtype=np.float64)
        Q = np.vstack([X[[4, 17]], 4.0 * X[[9]], np.zeros((1, 3)), others, [[1.0, -1.0, 0.0]]])
    else:
        X = rng.integers(-2, 3, size=(36, 3)).astype(np.float64)
        X[[30, 31, 32, 33]] = X[[2, 11, 2, 20]]  # duplicates: row 2 three times
        Q = np.vstack([X[[3, 31]], np.zeros((1, 3)), rng.integers(-3, 4, size=(6, 3))]).astype(np.float64)
    return X, Q


def brute_force(X: np.ndarray, Q: np.ndarray, metric: str) -> np.ndarray:
    """All distances from the rows of ``Q`` to the rows of ``X`` (float64, the definitions of
    the package: cosine is ``1 - cos``, a zero row is at distance 1 from everything)."""
    X = np.asarray(X.toarray() if sp.issparse(X) else X, dtype=np.float64)
    Q = np.asarray(Q.toarray() if sp.issparse(Q) else Q, dtype=np.float64)
    if metric == "euclidean":
        return np.sqrt(((Q[:, None, :] - X[None, :, :]) ** 2).sum(axis=2))
    if metric == "manhattan":
        return np.abs(Q[:, None, :] - X[None, :, :]).sum(axis=2)
    if metric == "cosine":

        def unit(A: np.ndarray) -> np.ndarray:
            norms = np.sqrt((A * A).sum(axis=1))
            return A / np.where(norms == 0, 1.0, norms)[:, None]

        return np.clip(1.0 - (unit(Q)[:, None, :] * unit(X)[None, :, :]).sum(axis=2), 0.0, 2.0)
    raise ValueError(f"unknown metric {metric!r}")


def expected_order(D: np.ndarray, exclude: np.ndarray | None = None) -> np.ndarray:
    """Every row of every query in the order of the protocol: distance (ties within the
    tolerance), then the lower row; ``exclude[i]`` is left out of query i (leave-one-out)."""
    D = np.array(D, dtype=np.float64)
    if exclude is not None:
        D[np.arange(len(D)), exclude] = np.inf
    tol = TIE_TOLERANCE * max(1.0, float(np.abs(D[np.isfinite(D)]).max(initial=0.0)))
    out = np.empty(D.shape, dtype=np.intp)
    rows = np.arange(D.shape[1])
    for i, d in enumerate(D):  # a few dozen queries of a few dozen rows
        by_distance = np.argsort(d, kind="stable")
        gaps = np.diff(d[by_distance]) > tol
        cluster = np.empty(len(d), dtype=np.intp)
        cluster[by_distance] = np.concatenate([[0], np.cumsum(gaps)])
        out[i] = np.lexsort((rows, cluster))
    if exclude is not None:
        out = out[:, :-1]
    return out


def other_queries(Q: np.ndarray) -> np.ndarray:
    """Queries of the shape of ``Q`` with other values and other answers: its rows reversed and
    negated (``0.0 - x``: no negative zeros), with as many non-zeros (a CSR copy of one can be
    written over a CSR copy of the other in place)."""
    return 0.0 - Q[::-1]


# ---------------------------------------------------------------------------- helpers


def _snapshot(A: Any) -> Any:
    """A copy of a dense array or of a sparse matrix's arrays, to compare bit for bit."""
    if sp.issparse(A):
        return {"shape": A.shape, "data": A.data.copy(), "indices": A.indices.copy(), "indptr": A.indptr.copy()}
    return np.array(A, copy=True)


def _first_change(before: Any, A: Any, name: str) -> str | None:
    """Where ``A`` differs from its snapshot ``before``, bit for bit (None: nowhere)."""
    if isinstance(before, dict):
        if A.shape != before["shape"]:
            return f"{name} changed shape from {before['shape']} to {A.shape}"
        for part in ("data", "indices", "indptr"):
            found = _first_change(before[part], getattr(A, part), f"{name}.{part}")
            if found is not None:
                return found
        return None
    A = np.asarray(A)
    if A.shape != before.shape or A.dtype != before.dtype:
        return f"{name} changed from {before.dtype} {before.shape} to {A.dtype} {A.shape}"
    width = before.dtype.itemsize
    was = np.ascontiguousarray(before).view(np.uint8).reshape(-1, width)
    now = np.ascontiguousarray(A).view(np.uint8).reshape(-1, width)
    changed = np.flatnonzero((was != now).any(axis=1))
    if not changed.size:
        return None
    where = np.unravel_index(changed[0], before.shape)
    at = ", ".join(str(int(i)) for i in where)
    return (f"{name}[{at}] was {before[where].item()!r}, is now {A[where].item()!r} "
            f"({changed.size} of {before.size} values changed)")


class _Subject:
    """Fresh unbuilt copies of the index under test (or a factory's products)."""

    def __init__(self, index: Any) -> None:
        self.source = index
        protocol = callable(getattr(index, "build", None)) and callable(getattr(index, "query", None))
        factory = isinstance(index, type) or (callable(index) and not protocol)
        self.factory: Callable[[], Any] | None = index if factory else None
        self.label = getattr(index, "__name__", type(index).__name__) if factory else type(index).__name__

    def fresh(self, metric: str | None = None) -> Any:
        index = self.factory() if self.factory is not None else unbuilt_copy(self.source)
        if metric is not None and getattr(index, "metric", None) != metric:
            if not _metric_settable(index):
                raise unittest.SkipTest(f"{self.label} has no metric parameter to search with metric={metric!r}")
            index.set_params(metric=metric)
        return index

    def metrics(self) -> tuple[str, ...]:
        """The declared metrics, or the index's own one when it has no metric parameter."""
        index = self.fresh()
        declared = get_capabilities(index).metrics
        if _metric_settable(index):
            return declared
        own = getattr(index, "metric", None)
        return (own,) if own in declared else declared[:1]

    def fail(self, check: str, what: str) -> _Failure:
        return _Failure(f"check_index({self.label}): {check}: {what}")

    def call(self, check: str, what: str, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(*args)``; an exception becomes this check's failure, naming the call."""
        try:
            return fn(*args)
        except (unittest.SkipTest, _Failure):
            raise
        except Exception as exc:
            raise self.fail(check, f"{what} raised {type(exc).__name__}: {exc}") from exc

    def build(self, check: str, X: Any, metric: str | None = None) -> Any:
        index = self.fresh(metric)
        built = self.call(check, f"build(X) with metric={getattr(index, 'metric', metric)!r}", index.build, X)
        if not (callable(getattr(built, "query", None))):
            raise self.fail(check, f"build(X) returned {type(built).__name__}, not the built index")
        return built

    def query(self, check: str, index: Any, Q: Any, k: int, n: int) -> tuple[np.ndarray, np.ndarray]:
        found = self.call(check, f"query(Q, k={k})", index.query, Q, k)
        return self.valid(check, found, Q.shape[0], k, n, f"query(Q, k={k})")

    def valid(self, check: str, found: Any, n_queries: int, k: int, n: int, what: str
              ) -> tuple[np.ndarray, np.ndarray]:
        """A result of the protocol: two arrays (n_queries, k), float64 finite ascending,
        intp row numbers of 0 .. n - 1, no row twice in a query's list."""
        if not (isinstance(found, tuple) and len(found) == 2):
            raise self.fail(check, f"{what} returned {type(found).__name__}, not a (dist, idx) pair")
        dist, idx = found
        for name, a, dtype in (("dist", dist, np.float64), ("idx", idx, np.intp)):
            if not isinstance(a, np.ndarray):
                raise self.fail(check, f"{what} returned {name} of type {type(a).__name__}, not a NumPy array")
            if a.shape != (n_queries, k):
                raise self.fail(check, f"{what} returned {name} of shape {a.shape}; expected {(n_queries, k)}")
            if a.dtype != dtype:
                raise self.fail(check, f"{what} returned {name} of dtype {a.dtype}; expected {np.dtype(dtype)}")
        if not np.isfinite(dist).all():
            raise self.fail(check, f"{what} returned non-finite distances: {dist[~np.isfinite(dist)][:5].tolist()}")
        bad = np.argwhere(np.diff(dist, axis=1) < 0)
        if len(bad):
            i, j = bad[0]
            raise self.fail(check, f"{what}: query {i}'s distances are not ascending: {dist[i].tolist()} "
                                   f"({float(dist[i, j])} before {float(dist[i, j + 1])})")
        if idx.size and (idx.min() < 0 or idx.max() >= n):
            wrong = int(idx.min()) if idx.min() < 0 else int(idx.max())
            raise self.fail(check, f"{what} returned row number {wrong}; the {n} indexed rows are 0 .. {n - 1} "
                                   "(no -1 padding)")
        ordered = np.sort(idx, axis=1)
        twice = np.argwhere(ordered[:, 1:] == ordered[:, :-1])
        if len(twice):
            i, j = twice[0]
            raise self.fail(check, f"{what}: query {i} lists row {int(ordered[i, j])} twice: {idx[i].tolist()}")
        return dist, idx

    def tie_rule(self, check: str, dist: np.ndarray, idx: np.ndarray, what: str) -> None:
        """Rows at the same distance go lower row first."""
        bad = np.argwhere((dist[:, 1:] == dist[:, :-1]) & (idx[:, 1:] < idx[:, :-1]))
        if len(bad):
            i, j = bad[0]
            raise self.fail(check, f"{what}: query {i} returned row {int(idx[i, j])} before row {int(idx[i, j + 1])} "
                                   f"at the same distance {float(dist[i, j])}; ties go to the lower row first "
                                   f"(rows {idx[i].tolist()}, distances {dist[i].tolist()})")

    def true_distances(self, check: str, D: np.ndarray, dist: np.ndarray, idx: np.ndarray, what: str) -> None:
        """The returned distances are the metric's distances of the returned rows."""
        want = np.take_along_axis(D, idx, axis=1)
        tol = TIE_TOLERANCE * max(1.0, float(np.abs(D).max(initial=0.0)))
        bad = np.argwhere(np.abs(dist - want) > tol)
        if len(bad):
            i, j = bad[0]
            raise self.fail(check, f"{what}: query {i} returned row {int(idx[i, j])} at distance "
                                   f"{float(dist[i, j])!r}, but it is at {float(want[i, j])!r} (float64 true "
                                   "distances, not squared or approximated)")

    def equals_brute_force(self, check: str, D: np.ndarray, dist: np.ndarray, idx: np.ndarray, what: str,
                           exclude: np.ndarray | None = None) -> None:
        """An exact result: the brute-force rows in the protocol's order, and their distances."""
        k = idx.shape[1]
        want = expected_order(D, exclude)[:, :k]
        bad = np.flatnonzero((idx != want).any(axis=1))
        if len(bad):
            i = bad[0]
            raise self.fail(
                check,
                f"{what}: the index declares itself exact, but query {i} got rows {idx[i].tolist()} at distances "
                f"{dist[i].tolist()}; brute force gives rows {want[i].tolist()} at distances "
                f"{D[i, want[i]].tolist()} (distance, then the lower row)",
            )
        self.true_distances(check, D, dist, idx, what)


def _metric_settable(index: Any) -> bool:
    """Whether ``set_params(metric=...)`` changes the index's metric (scikit-learn style)."""
    get_params = getattr(index, "get_params", None)
    return callable(get_params) and callable(getattr(index, "set_params", None)) and "metric" in get_params()


def _ks(n: int) -> tuple[int, ...]:
    return (1, 5, n - 1, n)


# ---------------------------------------------------------------------------- the checks


def check_capabilities(subject: _Subject) -> None:
    """The declared capabilities: a ``Capabilities``, the index's metric among its metrics,
    ``exact`` the same as declared; a metric it does not declare is refused at build."""
    name = "capabilities"
    index = subject.fresh()
    caps = subject.call(name, "get_capabilities(index)", get_capabilities, index)
    metric = getattr(index, "metric", None)
    if metric is not None and metric not in caps.metrics:
        raise subject.fail(name, f"metric={metric!r} is not among the declared metrics {list(caps.metrics)}")
    if hasattr(index, "exact") and bool(index.exact) != caps.exact:
        raise subject.fail(name, f"exact={index.exact!r} but the capabilities say exact={caps.exact}")
    # an optional part declared is one implemented: it is called on the word of the declaration
    for declared, hooks in (("loo_queries", ("loo_query_rows",)), ("saved_state", ("saved_state", "restore_state")),
                            ("adds_rows", ("add_rows",))):
        missing = [hook for hook in hooks if getattr(caps, declared) and not callable(getattr(index, hook, None))]
        if missing:
            raise subject.fail(name, f"declares {declared}=True but has no {' or '.join(missing)}")
    if not _metric_settable(index):
        return
    X, _ = check_data("euclidean")
    for other in METRICS:
        if other in caps.metrics:
            continue
        unsupported = subject.fresh()
        unsupported.set_params(metric=other)
        try:
            unsupported.build(X)
        except ValueError:
            continue
        except Exception as exc:
            raise subject.fail(name, f"build with the undeclared metric={other!r} raised {type(exc).__name__}, "
                                     f"not ValueError: {exc}") from exc
        raise subject.fail(name, f"build with metric={other!r}, which it does not declare "
                                 f"({list(caps.metrics)}), did not raise ValueError")


def check_query_before_build(subject: _Subject) -> None:
    """A query before ``build`` raises (ValueError, scikit-learn's NotFittedError included)."""
    name = "query_before_build"
    _, Q = check_data(subject.metrics()[0])
    try:
        subject.fresh().query(Q, 1)
    except (ValueError, AttributeError):
        return
    except Exception as exc:
        raise subject.fail(name, f"raised {type(exc).__name__} ({exc}); expected ValueError or "
                                 "NotFittedError") from exc
    raise subject.fail(name, "query(Q, 1) on an unbuilt index returned a result")


def _queries(subject: _Subject, name: str) -> Iterator[tuple[str, np.ndarray, np.ndarray, np.ndarray, np.ndarray, str]]:
    """For every declared metric, an index built on the check data and queried at every k of
    :func:`_ks` (each result checked by ``subject.query``): ``(metric, X, Q, dist, idx, what)``."""
    for metric in subject.metrics():
        X, Q = check_data(metric)
        n = X.shape[0]
        index = subject.build(name, X, metric)
        for k in _ks(n):
            dist, idx = subject.query(name, index, Q, k, n)
            yield metric, X, Q, dist, idx, f"query(Q, k={k}) with metric={metric!r}"


def check_build_and_query(subject: _Subject) -> None:
    """For every declared metric: shapes, float64 ascending finite distances, intp rows of
    0 .. n - 1, no row twice; k = n lists every row once."""
    for _ in _queries(subject, "build_and_query"):
        pass


def check_ties(subject: _Subject) -> None:
    """Rows at equal distances come lower row first (the data have many exact ties)."""
    for _, _, _, dist, idx, what in _queries(subject, "ties"):
        subject.tie_rule("ties", dist, idx, what)


def check_true_distances(subject: _Subject) -> None:
    """The distances are the metric's float64 distances of the rows returned (when the index
    declares ``true_distances``)."""
    name = "true_distances"
    if not get_capabilities(subject.fresh()).true_distances:
        raise unittest.SkipTest(f"{subject.label} declares distances of its own space (true_distances=False)")
    exact: dict[str, np.ndarray] = {}
    for metric, X, Q, dist, idx, what in _queries(subject, name):
        if metric not in exact:
            exact[metric] = brute_force(X, Q, metric)
        subject.true_distances(name, exact[metric], dist, idx, what)


def check_k_edges(subject: _Subject) -> None:
    """k = 1 and k = n answer; k = n + 1 and k = 0 raise ValueError; a k that is not an
    integer raises TypeError or ValueError."""
    name = "k_edges"
    X, Q = check_data(subject.metrics()[0])
    n = X.shape[0]
    index = subject.build(name, X)
    _, idx = subject.query(name, index, Q, n, n)
    if not (np.sort(idx, axis=1) == np.arange(n)).all():
        raise subject.fail(name, "query(Q, k=n) does not list every indexed row once")
    subject.query(name, index, Q, 1, n)
    for k, errors in ((n + 1, (ValueError,)), (0, (ValueError,)), (2.5, (TypeError, ValueError)),
                      ("3", (TypeError, ValueError))):
        try:
            index.query(Q, k)
        except errors:
            continue
        except Exception as exc:
            raise subject.fail(name, f"query(Q, k={k!r}) raised {type(exc).__name__} ({exc}); expected "
                                     f"{' or '.join(e.__name__ for e in errors)}") from exc
        raise subject.fail(name, f"query(Q, k={k!r}) with {n} indexed rows did not raise")


def check_one_row(subject: _Subject) -> None:
    """A query of one row answers at k = 1, 5 and n, as the protocol says (every other check
    queries nine rows or more: a backend that crashed on one row passed them, issue 48); an
    exact index gives that row's answer to the whole block."""
    name = "one_row"
    X, Q = check_data(subject.metrics()[0])
    n = X.shape[0]
    index = subject.build(name, X)
    exact = get_capabilities(index).exact
    for row in (0, Q.shape[0] - 1):
        for k in (1, min(5, n), n):
            dist, idx = subject.query(name, index, Q[row : row + 1], k, n)
            if not exact:
                continue
            all_dist, all_idx = subject.query(name, index, Q, k, n)
            if not np.array_equal(idx[0], all_idx[row]):
                raise subject.fail(name, f"query(Q[{row}:{row + 1}], k={k}) returned rows {idx[0].tolist()}, but "
                                         f"the same row among all the queries gets {all_idx[row].tolist()}")


def check_add_rows(subject: _Subject) -> None:
    """With ``adds_rows`` declared: an index built on the first rows, then given the rest by
    ``add_rows``, holds every row (``n_samples_fit_``), answers valid results over all of them,
    and finds each added row at distance 0 (itself or a duplicate) as its nearest neighbour;
    an exact index gives brute force's answer."""
    name = "add_rows"
    X, Q = check_data(subject.metrics()[0])
    n = X.shape[0]
    index = subject.build(name, X[: n - 9])
    if not get_capabilities(index).adds_rows:
        raise unittest.SkipTest(f"{subject.label} does not declare that it adds rows")
    subject.call(name, "add_rows(X)", index.add_rows, X)
    if getattr(index, "n_samples_fit_", n) != n:
        raise subject.fail(name, f"after add_rows of {n} rows, n_samples_fit_ = {index.n_samples_fit_}")
    dist, idx = subject.query(name, index, X[n - 9 :], 1, n)
    if (dist[:, 0] != 0).any():
        i = int(np.flatnonzero(dist[:, 0] != 0)[0])
        raise subject.fail(name, f"added row {n - 9 + i} is not its own nearest neighbour: row {idx[i, 0]} at "
                                 f"distance {dist[i, 0]}")
    if get_capabilities(index).exact:
        D = brute_force(X, Q, subject.metrics()[0])
        subject.equals_brute_force(name, D, *subject.query(name, index, Q, 5, n), "query(Q, k=5) after add_rows")


def check_empty_query(subject: _Subject) -> None:
    """A query of 0 rows returns two (0, k) arrays of the protocol's dtypes, or raises
    ValueError (as scikit-learn does); nothing else."""
    name = "empty_query"
    X, _ = check_data(subject.metrics()[0])
    index = subject.build(name, X)
    try:
        found = index.query(np.empty((0, X.shape[1])), 3)
    except ValueError:
        return
    except Exception as exc:
        raise subject.fail(name, f"query of 0 rows raised {type(exc).__name__} ({exc}); expected (0, k) "
                                 "arrays or ValueError") from exc
    subject.valid(name, found, 0, 3, X.shape[0], "query of 0 rows")


def check_bad_input(subject: _Subject) -> None:
    """ValueError for queries of the wrong width, NaN or infinity in the queries or in the
    indexed rows."""
    name = "bad_input"
    X, Q = check_data(subject.metrics()[0])
    index = subject.build(name, X)
    nan_q = Q.copy()
    nan_q[1, 0] = np.nan
    inf_q = Q.copy()
    inf_q[0, 2] = np.inf
    cases = [("a query of the wrong width", lambda: index.query(Q[:, :-1], 2)),
             ("a query with NaN", lambda: index.query(nan_q, 2)),
             ("a query with infinity", lambda: index.query(inf_q, 2))]
    nan_x = X.copy()
    nan_x[5, 1] = np.nan
    cases.append(("indexed rows with NaN", lambda: subject.fresh().build(nan_x)))
    for what, run in cases:
        try:
            run()
        except ValueError:
            continue
        except Exception as exc:
            raise subject.fail(name, f"{what} raised {type(exc).__name__} ({exc}); expected ValueError") from exc
        raise subject.fail(name, f"{what} did not raise ValueError")


def check_leave_one_out(subject: _Subject) -> None:
    """``loo_kneighbors`` never lists a row among its own neighbours (its duplicates are other
    rows: an exact index keeps them), in the protocol's order; exact: brute force without the
    row itself."""
    name = "leave_one_out"
    for metric in subject.metrics():
        X, _ = check_data(metric)
        n = X.shape[0]
        D = brute_force(X, X, metric)
        index = subject.build(name, X, metric)
        exact = get_capabilities(index).exact
        for k in (1, 4, n - 1):
            what = f"loo_kneighbors(index, X, k={k}) with metric={metric!r}"
            found = subject.call(name, what, loo_kneighbors, index, X, k)
            dist, idx = subject.valid(name, found, n, k, n, what)
            own = np.argwhere(idx == np.arange(n)[:, None])
            if len(own):
                i = own[0, 0]
                raise subject.fail(name, f"{what}: row {i} is among its own neighbours {idx[i].tolist()}")
            subject.tie_rule(name, dist, idx, what)
            if exact:
                subject.equals_brute_force(name, D, dist, idx, what, exclude=np.arange(n))


def check_pickle(subject: _Subject) -> None:
    """An unbuilt index pickles and builds; a built one pickles and its copy answers the same,
    bit for bit (an exact index also after building the unpickled unbuilt copy)."""
    name = "pickle"
    X, Q = check_data(subject.metrics()[0])
    n = X.shape[0]
    unbuilt = subject.call(name, "pickling the unbuilt index", lambda: pickle.loads(pickle.dumps(subject.fresh())))
    again = subject.call(name, "build(X) of the unpickled unbuilt index", unbuilt.build, X)
    index = subject.build(name, X)
    want = subject.query(name, index, Q, 5, n)
    got = subject.query(name, again, Q, 5, n)
    if get_capabilities(index).exact and not (np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])):
        raise subject.fail(name, f"the unpickled unbuilt copy, built, answers rows {got[1][0].tolist()} for query 0; "
                                 f"the original {want[1][0].tolist()}")
    copy_ = subject.call(name, "pickling the built index", lambda: pickle.loads(pickle.dumps(index)))
    got = subject.query(name, copy_, Q, 5, n)
    if not (np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])):
        i = int(np.flatnonzero((got[1] != want[1]).any(axis=1) | (got[0] != want[0]).any(axis=1))[0])
        raise subject.fail(name, f"after pickling, query {i} gets rows {got[1][i].tolist()} at {got[0][i].tolist()}; "
                                 f"before, rows {want[1][i].tolist()} at {want[0][i].tolist()}")


def _unchanged(subject: _Subject, name: str, what: str, inputs: tuple[tuple[str, Any, Any], ...]) -> None:
    """Fail unless every ``(name, array, snapshot)`` of ``inputs`` is as its snapshot, bit for bit."""
    for arg, A, was in inputs:
        change = _first_change(was, A, arg)
        if change is not None:
            raise subject.fail(name, f"{what} changed the caller's {arg} in place: {change}; an index must leave its "
                                     "input as it was (it copies what it rescales or reorders)")


def check_inputs_unchanged(subject: _Subject) -> None:
    """``build``, ``query`` and ``loo_kneighbors`` leave the caller's arrays as they were, bit
    for bit, in every layout the checks feed (dense; with ``sparse`` declared, CSR ``data``,
    ``indices`` and ``indptr`` too): a model hands the user's training rows to ``build`` as
    they are.  What a call raises is left to the other checks."""
    name = "inputs_unchanged"
    sparse = get_capabilities(subject.fresh()).sparse
    for metric in subject.metrics():
        X, Q = check_data(metric)
        layouts = [("dense", X, Q)] + ([("CSR", sp.csr_matrix(X), sp.csr_matrix(Q))] if sparse else [])
        for rows, Xin, _ in layouts:
            X_was = ("X", Xin, _snapshot(Xin))
            try:
                built = subject.fresh(metric).build(Xin)
            except Exception:
                built = None
            _unchanged(subject, name, f"build(X) with metric={metric!r} ({rows} rows)", (X_was,))
            if built is None or not callable(getattr(built, "query", None)):
                continue
            calls = [(f"query(Q, k=5) with metric={metric!r} ({rows} rows, {queries} queries)", built.query,
                      (Qin, 5), (X_was, ("Q", Qin, _snapshot(Qin)))) for queries, _, Qin in layouts]
            calls.append((f"loo_kneighbors(index, X, k=4) with metric={metric!r} ({rows} rows)", loo_kneighbors,
                          (built, Xin, 4), (X_was,)))
            for what, call, args, inputs in calls:
                try:
                    call(*args)
                except Exception:
                    pass
                _unchanged(subject, name, what, inputs)


def _overwrite(A: Any, B: Any) -> None:
    """Write the values of ``B`` into ``A`` in place (CSR: as many non-zeros)."""
    if sp.issparse(A):
        for part in ("data", "indices", "indptr"):
            getattr(A, part)[...] = getattr(B, part)
    else:
        A[...] = B


def _first_difference(a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray]) -> int | None:
    """The first query whose rows or distances differ between two results, bit for bit."""
    differ = np.flatnonzero((a[0] != b[0]).any(axis=1) | (a[1] != b[1]).any(axis=1))
    return int(differ[0]) if differ.size else None


def _own_answer(subject: _Subject, name: str, found: tuple[np.ndarray, np.ndarray], what: str, *,
                exact: bool, true_distances: bool, D: np.ndarray, untouched: tuple[np.ndarray, np.ndarray] | None,
                earlier: tuple[np.ndarray, np.ndarray]) -> None:
    """``found`` is the answer of its own queries (of distances ``D``): brute force's for an exact
    index, at the true distances where declared, else ``untouched``'s (a copy of the built index
    asked nothing before); failing that, say so, and whether it is the ``earlier`` answer."""
    dist, idx = found
    try:
        if exact:
            subject.equals_brute_force(name, D, dist, idx, what)
        elif true_distances:
            subject.true_distances(name, D, dist, idx, what)
        elif untouched is not None and (i := _first_difference(found, untouched)) is not None:
            raise subject.fail(name, f"{what}: query {i} got rows {idx[i].tolist()} at {dist[i].tolist()}; a pickled "
                                     f"copy of the built index, asked nothing before, answers rows "
                                     f"{untouched[1][i].tolist()} at {untouched[0][i].tolist()}")
    except _Failure as failure:
        if _first_difference(found, earlier) is not None:
            raise
        seen = str(failure).split(f": {name}: ", 1)[-1]
        stale = (f"{seen}; that is the answer to the earlier queries, bit for bit (an answer must follow the values "
                 "of the queries, not their shape or the array that holds them)")
        raise subject.fail(name, stale) from None


def check_fresh_answers(subject: _Subject) -> None:
    """An answer depends on the indexed rows and on the values of the queries, nothing else:
    new queries of the same shape, and the first array overwritten in place with their values,
    get their own answers (for an exact index brute force's, else the true distances of the
    rows returned, or without true distances the answer of a pickled copy of the built index
    asked nothing before); the first queries asked again get the first answer, bit for bit."""
    name = "fresh_answers"
    sparse = get_capabilities(subject.fresh()).sparse
    k = 5
    for metric in subject.metrics():
        X, Q = check_data(metric)
        Q2 = other_queries(Q)
        n = X.shape[0]
        D2 = brute_force(X, Q2, metric)
        layouts: list[tuple[str, Any, Callable[[np.ndarray], Any]]] = [("dense", X, np.array)]
        if sparse:
            layouts.append(("CSR", sp.csr_matrix(X), sp.csr_matrix))
        for layout, Xin, make in layouts:
            where = f"with metric={metric!r} ({layout})"
            index = subject.build(name, Xin, metric)
            caps = get_capabilities(index)
            untouched = None
            if not (caps.exact or caps.true_distances):
                copy_ = subject.call(name, "pickling the built index (a copy asked nothing yet: the reference)",
                                     pickle.loads, pickle.dumps(index))
                untouched = subject.query(name, copy_, make(Q2), k, n)
            asked = make(Q)
            first = subject.query(name, index, asked, k, n)
            held = {"exact": caps.exact, "true_distances": caps.true_distances, "D": D2, "untouched": untouched,
                    "earlier": first}
            _own_answer(subject, name, subject.query(name, index, make(Q2), k, n),
                        f"query(Q2, k={k}) of new queries of the same shape, after query(Q, k={k}) {where}", **held)
            _overwrite(asked, make(Q2))
            _own_answer(subject, name, subject.query(name, index, asked, k, n),
                        f"query(Q, k={k}) of the first array, overwritten in place with Q2's values, {where}", **held)
            again = subject.query(name, index, make(Q), k, n)
            i = _first_difference(again, first)
            if i is not None:
                raise subject.fail(name, f"the first queries asked again (a new array of their values) {where}: query "
                                         f"{i} got rows {again[1][i].tolist()} at {again[0][i].tolist()}; the first "
                                         f"time, rows {first[1][i].tolist()} at {first[0][i].tolist()} (an answer "
                                         "must depend on the indexed rows and the queries only)")


def check_sparse(subject: _Subject) -> None:
    """With ``sparse`` declared: CSR indexed rows and CSR or dense queries (and CSR queries of
    dense rows) give valid results, equal to brute force for an exact index."""
    name = "sparse"
    if not get_capabilities(subject.fresh()).sparse:
        raise unittest.SkipTest(f"{subject.label} does not declare sparse input")
    for metric in subject.metrics():
        X, Q = check_data(metric)
        n = X.shape[0]
        D = brute_force(X, Q, metric)
        for Xin, Qin, what in ((sp.csr_matrix(X), sp.csr_matrix(Q), "CSR rows, CSR queries"),
                               (sp.csr_matrix(X), Q, "CSR rows, dense queries"),
                               (X, sp.csr_matrix(Q), "dense rows, CSR queries")):
            index = subject.build(name, Xin, metric)
            caps = get_capabilities(index)
            for k in (1, 5, n):
                label = f"{what}, query(Q, k={k}) with metric={metric!r}"
                dist, idx = subject.query(name, index, Qin, k, n)
                subject.tie_rule(name, dist, idx, label)
                if caps.exact:
                    subject.equals_brute_force(name, D, dist, idx, label)
                elif caps.true_distances:
                    subject.true_distances(name, D, dist, idx, label)


def check_prefix(subject: _Subject) -> None:
    """With ``prefix_safe`` declared: the result for k is the first k columns of the result
    for n, bit for bit (what lets a neighbour cache answer a sweep over k from one search)."""
    name = "prefix"
    X, Q = check_data(subject.metrics()[0])
    n = X.shape[0]
    index = subject.build(name, X)
    if not get_capabilities(index).prefix_safe:
        raise unittest.SkipTest(f"{subject.label} does not declare itself prefix-safe")
    full = subject.query(name, index, Q, n, n)
    for k in (1, 2, 7, n - 1):
        dist, idx = subject.query(name, index, Q, k, n)
        if not (np.array_equal(idx, full[1][:, :k]) and np.array_equal(dist, full[0][:, :k])):
            i = int(np.flatnonzero((idx != full[1][:, :k]).any(axis=1) | (dist != full[0][:, :k]).any(axis=1))[0])
            raise subject.fail(name, f"query(Q, k={k}) gives rows {idx[i].tolist()} for query {i}, but the first {k} "
                                     f"of query(Q, k={n}) are {full[1][i, :k].tolist()}")


def check_exact(subject: _Subject) -> None:
    """With ``exact`` declared (before or after build): for every declared metric and k, the
    brute-force rows in the order (distance, lower row) and their distances."""
    name = "exact"
    for metric in subject.metrics():
        X, Q = check_data(metric)
        n = X.shape[0]
        D = brute_force(X, Q, metric)
        index = subject.build(name, X, metric)
        if not get_capabilities(index).exact:
            raise unittest.SkipTest(f"{subject.label} does not declare itself exact")
        for k in _ks(n):
            dist, idx = subject.query(name, index, Q, k, n)
            subject.equals_brute_force(name, D, dist, idx, f"query(Q, k={k}) with metric={metric!r}")


#: the checks, in the order they run
CHECKS: tuple[Callable[[_Subject], None], ...] = (
    check_capabilities,
    check_query_before_build,
    check_build_and_query,
    check_inputs_unchanged,
    check_ties,
    check_true_distances,
    check_k_edges,
    check_empty_query,
    check_bad_input,
    check_exact,
    check_prefix,
    check_leave_one_out,
    check_fresh_answers,
    check_one_row,
    check_add_rows,
    check_pickle,
    check_sparse,
)


class IndexCheck:
    """One check of :func:`check_index`, bound to nothing: ``check(index)`` runs it on a fresh
    copy of ``index`` (or on what a factory makes); ``str(check)`` is its name."""

    def __init__(self, run: Callable[[_Subject], None]) -> None:
        self._run = run
        self.name = run.__name__.removeprefix("check_")
        self.__doc__ = run.__doc__

    def __call__(self, index: Any) -> None:
        try:
            self._run(_Subject(index))
        except _Failure as failure:  # a plain AssertionError for the caller, its cause kept
            raise AssertionError(str(failure)) from failure.__cause__

    def __repr__(self) -> str:
        return self.name


def check_index(index: Any, *, generate_only: bool = False) -> dict[str, str] | Iterator[tuple[Any, IndexCheck]]:
    """Check that an index follows the protocol and does what it declares.

    The conformance suite of :class:`~mlneighbors.neighbors.NeighborIndex`, as scikit-learn's
    ``check_estimator`` is for estimators.  Every check builds fresh copies of ``index`` on
    small data with many exact ties (see the module ``mlneighbors.neighbors._check``):

    ``capabilities``
        :func:`~mlneighbors.neighbors.get_capabilities` reads a valid declaration, the index's
        ``metric`` is among its metrics and ``exact`` agrees; a metric it does not declare is
        refused at build with ``ValueError``; a declared optional part (``loo_queries``,
        ``saved_state``, ``adds_rows``) has its methods.
    ``query_before_build``
        ``query`` of an unbuilt index raises ``ValueError`` (``NotFittedError``).
    ``build_and_query``
        For every declared metric and k in (1, 5, n - 1, n): two arrays of shape
        (n_queries, k), float64 finite distances ascending, intp row numbers of the indexed
        rows (no ``-1``), no row twice.
    ``inputs_unchanged``
        ``build``, ``query`` and ``loo_kneighbors`` leave the caller's arrays as they were,
        bit for bit: dense, and with ``sparse`` declared CSR ``data``, ``indices`` and
        ``indptr`` (dense and CSR rows, each queried dense and CSR).
    ``ties``
        Rows at the same distance come lower row first.
    ``true_distances``
        The distances are the metric's float64 distances of the returned rows (unless
        ``true_distances=False`` is declared).
    ``k_edges``
        k = 1 and k = n answer (k = n lists every row); k = n + 1 and k = 0 raise
        ``ValueError``; k = 2.5 or "3" raise ``TypeError`` or ``ValueError``.
    ``empty_query``
        A query of 0 rows gives (0, k) arrays or raises ``ValueError``, nothing else.
    ``bad_input``
        ``ValueError`` for queries of the wrong width, NaN or infinity in the queries, NaN in
        the indexed rows.
    ``exact``
        With ``exact`` declared (by the built index: ``"auto"`` may pick the exact search):
        the brute-force rows in the order (distance, lower row), and their distances.
    ``prefix``
        With ``prefix_safe`` declared: the result for k is the first k columns of the result
        for n.
    ``leave_one_out``
        :func:`~mlneighbors.neighbors.loo_kneighbors` never lists a row among its own
        neighbours, keeps the protocol's order, and for an exact index equals brute force
        without the row itself (its duplicates are other rows and stay).
    ``fresh_answers``
        An answer follows the indexed rows and the values of the queries only: after a query,
        new queries of the same shape, and the first array overwritten in place with their
        values, get their own answers (brute force's for an exact index, else the true
        distances of the rows returned, else the answer of a pickled copy of the built index
        asked nothing before); the first queries asked again get the first answer, bit for bit.
    ``one_row``
        A query of a single row answers at k = 1, 5 and n (every other check queries nine rows
        or more), for an exact index the answer that row gets among all the queries.
    ``add_rows``
        With ``adds_rows`` declared: rows given by ``add_rows`` after a build are indexed (each
        added row its own nearest, at distance 0), brute force's answers for an exact index.
    ``pickle``
        Unbuilt and built indexes pickle; the built copy answers bit for bit the same (an
        exact index's unbuilt copy too, once built).
    ``sparse``
        With ``sparse`` declared: CSR rows and CSR or dense queries give valid results, equal
        to brute force for an exact index.

    Parameters
    ----------
    index : index object or callable
        An unbuilt index of the protocol (it is copied, never built itself), or a callable
        without arguments that returns one (a class, a ``functools.partial``).
    generate_only : bool, default=False
        Return the checks instead of running them: an iterator of ``(index, check)`` pairs,
        ``check(index)`` runs one (raising ``unittest.SkipTest`` where it does not apply,
        which pytest reports as a skip); ``str(check)`` is its name.  For a test
        parametrised over the checks.

    Returns
    -------
    results : dict or iterator
        Check name -> ``"passed"`` or ``"skipped: <why>"``; with ``generate_only``, the
        ``(index, check)`` pairs.

    Raises
    ------
    AssertionError
        The first check that fails, its message naming the index, the check and what was seen
        (an exception the index raised where the protocol wants a result is reported the same
        way, chained).

    Examples
    --------
    >>> from mlneighbors.neighbors import check_index, get_index
    >>> results = check_index(get_index("exact"))
    >>> results["exact"], results["ties"]
    ('passed', 'passed')
    >>> check_index(get_index("pca-window"))["true_distances"]
    'skipped: PCAWindowIndex declares distances of its own space (true_distances=False)'

    An index that breaks the protocol is named with what was seen:

    >>> import numpy as np
    >>> class Backwards:  # brute force, but ties go to the higher row
    ...     exact, metric = True, "euclidean"
    ...     def build(self, X):
    ...         self.X = np.asarray(X, dtype=float)
    ...         return self
    ...     def query(self, Q, k):
    ...         D = np.sqrt(((np.asarray(Q)[:, None] - self.X[None]) ** 2).sum(axis=2))
    ...         order = np.lexsort((-np.arange(len(self.X)) + np.zeros_like(D), D), axis=1)[:, :k]
    ...         return np.take_along_axis(D, order, axis=1), order
    >>> check_index(Backwards())  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    AssertionError: check_index(Backwards): ties: query(Q, k=5) with metric='euclidean': query 0 returned row ...
    """
    checks = [IndexCheck(run) for run in CHECKS]
    if generate_only:
        return iter([(index, check) for check in checks])
    results: dict[str, str] = {}
    for check in checks:
        try:
            check(index)
        except unittest.SkipTest as why:
            results[check.name] = f"skipped: {why}"
        else:
            results[check.name] = "passed"
    return results
