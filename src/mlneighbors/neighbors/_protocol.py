"""The index protocol, the shared index base class and input validation."""

from __future__ import annotations

import copy
import importlib
import numbers
import os
from types import ModuleType
from typing import Any, ClassVar, Protocol, runtime_checkable

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, clone
from sklearn.exceptions import NotFittedError
from sklearn.utils import check_array

from .._docstrings import fill_doc
from ..exceptions import BackendError
from ._capabilities import METRICS, Capabilities, get_capabilities
from ._distance import check_scale

__all__ = ["METRICS", "BaseIndex", "NeighborIndex"]


@runtime_checkable
class NeighborIndex(Protocol):
    """What every backend provides (faiss's ``add`` / ``search``, in our words).

    ``build(X)`` indexes the rows of ``X`` and returns the index;
    ``query(Q, k)`` returns ``(dist, idx)``, both of shape ``(n_queries, k)``: float64 true
    (not squared) distances in ascending order and intp row numbers of ``X``, ties broken by
    the lower row number; ``k`` larger than the number of indexed rows raises ``ValueError``;
    never ``-1`` padding.  ``exact`` says whether the result is the exact k-nearest
    neighbours; ``metric`` names the distance.  ``build`` and ``query`` leave their input as
    it was, bit for bit (a model hands the user's training rows to ``build`` as they are), and
    an answer depends on the indexed rows and the values of the queries only (a cache keys on
    their content, never on their shape or on which array holds them: a caller may overwrite
    an array in place between two queries).  An index may declare more in a
    ``capabilities`` attribute (:class:`~mlneighbors.neighbors.Capabilities`, read by
    :func:`~mlneighbors.neighbors.get_capabilities`); :func:`~mlneighbors.neighbors.check_index`
    tests an index against all of this.

    Examples
    --------
    >>> from mlneighbors.neighbors import NeighborIndex, get_index
    >>> isinstance(get_index("exact"), NeighborIndex)
    True
    """

    exact: bool
    metric: str

    def build(self, X: Any) -> NeighborIndex: ...

    def query(self, Q: Any, k: int) -> tuple[np.ndarray, np.ndarray]: ...


class MissingLibraryError(ImportError):
    """An optional library a backend needs is not installed (an ImportError: the message names the extra).

    Its own class so that :func:`mlneighbors.load` tells an intact file whose saved index needs
    the library from a damaged one.
    """


def import_optional(module: str, *, backend: str, extra: str, package: str | None = None) -> ModuleType:
    """Import an optional dependency at the point of use, or say which extra installs it."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingLibraryError(f"backend={backend!r} needs {package or module}: pip install 'mlneighbors[{extra}]'",
                                  name=module) from exc


#: the dtypes rows are kept in when they may stay float32 (anything else becomes float64)
FLOAT_DTYPES = (np.float64, np.float32)


def float_rows(X: Any) -> Any:
    """Rows validated with ``dtype=FLOAT_DTYPES`` as they are kept: dense float32 as given,
    sparse float32 as float64 (only dense rows stay float32)."""
    return X.astype(np.float64) if sp.issparse(X) and X.dtype != np.float64 else X


def check_data(X: Any, *, name: str, keep_float32: bool = False) -> np.ndarray | sp.csr_matrix:
    """Validate a data matrix: 2-D, finite, float64, dense ndarray or canonical CSR.

    ``keep_float32``: a dense float32 array stays float32 (no float64 copy: rows held once, in
    the precision given; its distances are still computed in float64, see ``_distance``)."""
    X = check_array(X, accept_sparse="csr", dtype=FLOAT_DTYPES if keep_float32 else np.float64,
                    ensure_all_finite=True, input_name=name)
    X = float_rows(X)
    if sp.issparse(X):
        if not isinstance(X, sp.csr_matrix):  # csr_array -> csr_matrix, one type downstream
            X = sp.csr_matrix(X)
        if not X.has_canonical_format:
            X = X.copy()
            X.sum_duplicates()
    check_scale(X, name)
    return X


def check_result(
    dist: Any, idx: Any, n_queries: int, k: int, n_indexed: int, backend: Any
) -> tuple[np.ndarray, np.ndarray]:
    """Check a search result against the index protocol before anything uses it.

    ``(dist, idx)`` must have shape ``(n_queries, k)``, integer row numbers in
    ``0 .. n_indexed - 1`` (no ``-1`` padding), finite distances in ascending order along
    each row.  Returns them as float64 and intp; raises
    :class:`~mlneighbors.exceptions.BackendError` naming ``backend`` otherwise (a bad row
    number would make the label counts read memory outside the labels).

    Parameters
    ----------
    dist, idx : array-like of shape (n_queries, k)
        What a backend's ``query`` returned.
    n_queries, k, n_indexed : int
        The shape asked for, and the number of indexed rows.
    backend : str or object
        The backend, named in the error.

    Returns
    -------
    dist : ndarray of shape (n_queries, k), float64
    idx : ndarray of shape (n_queries, k), intp

    Examples
    --------
    >>> from mlneighbors.neighbors import check_result
    >>> check_result([[0.0, 1.0]], [[2, 0]], n_queries=1, k=2, n_indexed=3, backend="mine")
    (array([[0., 1.]]), array([[2, 0]]))
    >>> check_result([[0.0, 1.0]], [[2, -1]], 1, 2, 3, "mine")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    mlneighbors.exceptions.BackendError: backend mine returned row number -1, outside the 3 indexed rows ...
    """
    label = backend if isinstance(backend, str) else type(backend).__name__
    dist = np.asarray(dist)
    if dist.shape != (n_queries, k) or np.shape(idx) != (n_queries, k):
        raise BackendError(
            f"backend {label} returned distances of shape {dist.shape} and row numbers of shape {np.shape(idx)} "
            f"for {n_queries} queries and k={k}; expected {(n_queries, k)} for both"
        )
    idx = check_rows(idx, n_queries, k, n_indexed, backend)
    dist = dist.astype(np.float64, copy=False)
    if not np.isfinite(dist).all():
        raise BackendError(f"backend {label} returned non-finite distances (NaN or infinity)")
    if k > 1 and (dist[:, 1:] < dist[:, :-1]).any():
        raise BackendError(f"backend {label} returned distances that are not in ascending order")
    return dist, idx


def check_rows(idx: Any, n_queries: int, k: int, n_indexed: int, backend: Any) -> np.ndarray:
    """The row numbers of a search result checked as :func:`check_result` checks them
    (shape, integers in ``0 .. n_indexed - 1``), as intp: for a caller that uses no distance."""
    label = backend if isinstance(backend, str) else type(backend).__name__
    idx = np.asarray(idx)
    if idx.shape != (n_queries, k):
        raise BackendError(
            f"backend {label} returned row numbers of shape {idx.shape} for {n_queries} queries and k={k}; "
            f"expected {(n_queries, k)}"
        )
    if idx.dtype.kind not in "iu":
        raise BackendError(f"backend {label} returned row numbers of dtype {idx.dtype}; expected integers")
    if idx.size and (idx.min() < 0 or idx.max() >= n_indexed):
        bad = int(idx.min()) if idx.min() < 0 else int(idx.max())
        raise BackendError(
            f"backend {label} returned row number {bad}, outside the {n_indexed} indexed rows "
            "(-1 padding or a wrong offset); the protocol allows 0 .. n - 1 only"
        )
    return idx.astype(np.intp, copy=False)


def search(index: Any, Q: Any, k: int, *, validated: bool = False, order: bool = True) -> Any:
    """``index.query(Q, k)``; with ``validated`` (rows the caller has validated: float64,
    finite, scale checked, as the estimators' are), the package's own indexes skip
    validating the rows a second time (a pass over the rows, a few percent of a small
    search).

    ``order=False``: the caller needs only the set of each query's k neighbours (label
    counts): the row numbers alone are returned (unchecked: :func:`check_rows`), in an order
    within a row that is left open; an index that answers sets (the exact engine) then skips
    the reference distances that its error bounds prove unneeded."""
    found = _search(index, Q, k, validated, sets=not order)
    return found if order else found[1]


def answers_sets(index: Any) -> bool:
    """Whether ``index`` answers a search for neighbour sets only (``query_rows(..., sets=True)``):
    its capabilities say so (:attr:`Capabilities.neighbour_sets`)."""
    return get_capabilities(index).neighbour_sets


def canonical_rows(index: BaseIndex, A: Any) -> bool:
    """Whether validated rows ``A`` are as ``index``'s own validation would leave them."""
    floats = FLOAT_DTYPES if index.keeps_float32() else (np.float64,)
    return (isinstance(A, np.ndarray) and A.dtype in floats and A.ndim == 2) or (
        isinstance(A, sp.csr_matrix) and A.dtype == np.float64 and A.has_canonical_format
    )


def build_index(index: Any, X: Any, *, validated: bool = False) -> Any:
    """``index.build(X)``; with ``validated`` (rows the caller has validated, as the
    estimators' training rows are), the package's own indexes skip validating them again."""
    plain = isinstance(index, BaseIndex) and type(index).build is BaseIndex.build
    if validated and plain and type(index)._check_data is BaseIndex._check_data and canonical_rows(index, X):
        index._check_ready()
        return index._build_checked(X)
    return index.build(X)


def _search(index: Any, Q: Any, k: int, validated: bool, sets: bool) -> tuple[np.ndarray, np.ndarray]:
    if not (isinstance(index, BaseIndex) and type(index).query is BaseIndex.query):
        return index.query(Q, k)
    Q, k = index._checked_query(Q, k, rows_checked=validated and canonical_rows(index, Q))
    return index.query_rows(Q, k, sets=True) if sets and answers_sets(index) else index.query_rows(Q, k)


def is_dask_array(X: Any) -> bool:
    """Whether ``X`` is a ``dask.array.Array`` (checked without importing dask)."""
    cls = type(X)
    return cls.__name__ == "Array" and cls.__module__.startswith("dask.array")


def check_k(k: Any, n_indexed: int, *, name: str = "k") -> int:
    """Validate a neighbour count against the number of indexed points."""
    if isinstance(k, (bool, np.bool_)) or not isinstance(k, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {k!r} of type {type(k).__name__}")
    k = int(k)
    if k < 1:
        raise ValueError(f"{name} must be >= 1, got {name}={k}")
    if k > n_indexed:
        raise ValueError(f"{name}={k} is larger than the number of indexed points ({n_indexed})")
    return k


def check_metric(metric: Any, supported: tuple[str, ...], backend: str) -> str:
    """Validate a metric name: known at all, then supported by this backend."""
    if not isinstance(metric, str) or metric not in METRICS:
        raise ValueError(f"Unknown metric {metric!r}; valid metrics are {list(METRICS)}")
    if metric not in supported:
        raise ValueError(f"backend {backend!r} does not support metric={metric!r}; it supports {list(supported)}")
    return metric


class _DeclaredExact:
    """``exact`` of an index: ``capabilities.exact``, read on an instance, or on the class when
    the class declares its capabilities as a constant."""

    def __get__(self, obj: Any, owner: Any = None) -> bool:
        declared = (owner if obj is None else obj).capabilities
        if not isinstance(declared, Capabilities):
            raise AttributeError(f"{owner.__name__}.exact depends on its parameters: read it on an instance")
        return declared.exact


class BaseIndex(BaseEstimator):
    """The backend contract: the base of every index of this package, and of a new backend.

    ``build(X)`` and ``query(Q, k)`` (the protocol, :class:`NeighborIndex`) validate their
    input and call the hooks a subclass implements, documented below:

    - required: :meth:`build_rows` and :meth:`query_rows`, on validated rows;
    - :meth:`check_params`: the constructor's parameters, checked before any data are read;
    - optional, each declared in ``capabilities`` (never probed by name):
      :meth:`loo_query_rows` (``loo_queries``: its own leave-one-out search of the indexed
      rows), ``sets=True`` of the two queries (``neighbour_sets``), :meth:`saved_state` and
      :meth:`restore_state` (``saved_state``: the built index saved as data with a model),
      dense float32 rows kept as given (``float32_rows``, read by :meth:`keeps_float32`).

    A subclass sets ``name`` and ``capabilities`` (a
    :class:`~mlneighbors.neighbors.Capabilities`: exact or not, the metrics, sparse input,
    ...; the default: exact, euclidean and cosine, dense only).  ``exact`` reads it.  An
    approximate library's adapter subclasses :class:`~mlneighbors.neighbors.ApproximateIndex`
    instead, which implements these hooks over its own, smaller ones.

    Parameters are stored by ``__init__`` and checked by ``build`` (scikit-learn's
    convention), so ``clone`` and ``get_params`` work and an unbuilt index is a cheap
    description of one; an index is pickled whole (a model sent to a process, or saved
    without ``include_index``, drops its built index and builds it again).
    :func:`~mlneighbors.neighbors.check_index` tests a subclass against the protocol and what
    it declares.

    The validated ``X`` and ``Q`` that ``build_rows`` and ``query_rows`` receive are the
    caller's own arrays where they are float64 already (validation does not copy them): write to a copy,
    never to them (normalising rows in place would change the user's training data).  The
    answer to ``Q`` depends on the built index and the values in ``Q`` only: a cache of
    answers keys on the content of the queries (as
    :class:`~mlneighbors.neighbors.NeighborCache` does), never on their shape or on the array
    object, which the caller may overwrite in place and Python reuses.

    Attributes set by ``build``: ``n_samples_fit_`` (number of indexed rows) and
    ``n_features_in_``.

    Examples
    --------
    A backend of one's own: brute force in a few lines, and every model can use it.

    >>> import numpy as np
    >>> from mlneighbors import MLkNN
    >>> from mlneighbors.neighbors import BaseIndex
    >>> class Brute(BaseIndex):
    ...     name = "brute"
    ...     def __init__(self, metric="euclidean"):
    ...         self.metric = metric
    ...     def build_rows(self, X):
    ...         self._X = X
    ...     def query_rows(self, Q, k):
    ...         D = np.sqrt(((Q[:, None, :] - self._X[None, :, :]) ** 2).sum(axis=2))
    ...         order = np.lexsort((np.broadcast_to(np.arange(len(self._X)), D.shape), D), axis=1)[:, :k]
    ...         return np.take_along_axis(D, order, axis=1), order
    >>> X = np.array([[0.0], [0.1], [0.2], [1.0], [1.1], [1.2]])
    >>> Y = np.array([[1, 0], [1, 0], [1, 0], [0, 1], [0, 1], [0, 1]])
    >>> MLkNN(2, backend=Brute()).fit(X, Y).predict([[0.05]])
    array([[1, 0]])
    """

    name: ClassVar[str] = "base"
    #: the optional library the backend imports when an index is built ("" for none), what
    #: ``pip`` installs for it ("": the module's name) and the ``mlneighbors[...]`` extra that does
    module: ClassVar[str] = ""
    package: ClassVar[str] = ""
    extra: ClassVar[str] = ""
    capabilities: ClassVar[Capabilities] = Capabilities(exact=True, metrics=("euclidean", "cosine"))

    metric: str

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for old in ("exact", "supported_metrics"):
            if old in vars(cls):
                raise TypeError(
                    f"{cls.__name__} sets {old!r}: an index declares what it can do in one place, "
                    "capabilities = mlneighbors.neighbors.Capabilities(exact=..., metrics=(...), ...)"
                )

    exact = _DeclaredExact()

    def build(self, X: Any) -> BaseIndex:
        """Index the rows of ``X``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        self : object
            The built index.
        """
        self._check_ready()
        return self._build_checked(self._check_data(X, name="X"))

    def _check_ready(self) -> None:
        """The checks of ``build`` before the data: the metric and the parameters."""
        check_metric(self.metric, self.capabilities.metrics, self.name)
        self.check_params()

    def _build_checked(self, X: np.ndarray | sp.csr_matrix) -> BaseIndex:
        """``build`` of validated rows."""
        self.build_rows(X)
        self.n_samples_fit_ = X.shape[0]
        self.n_features_in_ = X.shape[1]
        return self

    def query(self, Q: Any, k: int) -> tuple[np.ndarray, np.ndarray]:
        """The ``k`` nearest indexed rows of every row of ``Q``.

        Parameters
        ----------
        Q : {array-like, sparse matrix} of shape (n_queries, n_features)
        k : int
            At most the number of indexed rows.

        Returns
        -------
        dist : ndarray of shape (n_queries, k), float64
            True distances (not squared), ascending along each row.
        idx : ndarray of shape (n_queries, k), intp
            Row numbers in the indexed ``X``; at equal distance the lower row number first.
        """
        Q, k = self._checked_query(Q, k)
        return self.query_rows(Q, k)

    def _checked_query(
        self, Q: Any, k: int = 1, *, rows_checked: bool = False
    ) -> tuple[np.ndarray | sp.csr_matrix, int]:
        """Validated queries and neighbour count (the checks of :meth:`query`); ``rows_checked``:
        the rows are as validation leaves them already (``search(..., validated=True)``)."""
        if not hasattr(self, "n_samples_fit_"):
            raise NotFittedError(f"This {type(self).__name__} is not built yet; call build(X) before query(Q, k).")
        k = check_k(k, self.n_samples_fit_)
        if not rows_checked:
            Q = self._check_data(Q, name="Q")
        if Q.shape[1] != self.n_features_in_:
            raise ValueError(
                f"Q has {Q.shape[1]} features, but the index was built on X with {self.n_features_in_} features"
            )
        return Q, k

    # ------------------------------------------------------------------ the hooks of a backend
    def check_params(self) -> None:
        """Validate the constructor parameters other than ``metric`` (hook; default: none).

        Called by ``build`` before the data are read, and by the command line before any
        computing, so that a bad value fails at once.  Raises ``TypeError`` / ``ValueError``
        naming the parameter.
        """

    def keeps_float32(self) -> bool:
        """Whether this index takes dense float32 rows as they are, without a float64 copy:
        its ``metric`` is in ``capabilities.float32_rows`` (an index whose every distance is
        computed in float64 from the rows as given can declare it).

        Returns
        -------
        keeps : bool
        """
        return self.metric in get_capabilities(self).float32_rows

    def _check_data(self, X: Any, *, name: str) -> Any:
        """Validate the indexed rows or the queries (:func:`check_data`; an index that takes
        other kinds of data, such as dask arrays, widens this)."""
        return check_data(X, name=name, keep_float32=self.keeps_float32())

    def build_rows(self, X: np.ndarray | sp.csr_matrix) -> None:  # pragma: no cover - abstract
        """Index validated rows (hook, required; ``build`` calls it, then sets
        ``n_samples_fit_`` and ``n_features_in_``).

        Parameters
        ----------
        X : ndarray or CSR matrix of shape (n_samples, n_features)
            Finite rows, float64 (dense float32 where :meth:`keeps_float32`), CSR only where
            ``capabilities.sparse``; the caller's own array where no copy was needed: never
            write to it.
        """
        raise NotImplementedError

    def query_rows(self, Q: np.ndarray | sp.csr_matrix, k: int) -> tuple[np.ndarray, np.ndarray]:  # pragma: no cover
        """The ``k`` nearest indexed rows of validated queries (hook, required; ``query``
        calls it).

        Parameters
        ----------
        Q : ndarray or CSR matrix of shape (n_queries, n_features)
            Validated as :meth:`build_rows`'s rows, with the indexed rows' number of features.
        k : int
            Checked: 1 <= k <= ``n_samples_fit_``.

        Returns
        -------
        dist : ndarray of shape (n_queries, k)
            True distances, ascending; ties broken by the lower row number.
        idx : ndarray of shape (n_queries, k)
            Row numbers of the indexed rows, never ``-1``.

        Notes
        -----
        An index that declares ``capabilities.neighbour_sets`` also takes ``sets=True``
        here and in :meth:`loo_query_rows`: the caller needs the set of each query's k
        neighbours only (their order within a row is left open, distances may be NaN).
        """
        raise NotImplementedError

    @fill_doc
    def loo_query_rows(self, X: Any, rows: np.ndarray | None, m: int) -> tuple[np.ndarray, np.ndarray] | None:
        """Its own search of the ``m`` nearest indexed rows of indexed ``rows`` of ``X`` (hook,
        optional: declared by ``capabilities.loo_queries``; default: None).

        :func:`~mlneighbors.neighbors.loo_kneighbors` (every model's ``fit``) asks it first,
        with ``m = k + 1`` (the row itself among them), and removes each row from its own
        answer; an index that can do better than ``query_rows(X[rows], m)`` (the exact
        engine's symmetric products, a graph's own neighbour lists) answers here.

        Parameters
        ----------
        {loo_rows_parameters}

        Returns
        -------
        (dist, idx) or None
            As :meth:`query_rows` returns them; None declines (the plain search then answers).
        """
        return None

    def saved_state(self) -> dict[str, Any] | None:
        """The built index as plain data, to be saved with a model (hook, optional: declared
        by ``capabilities.saved_state``; default: None, rebuilt on load).

        Returns
        -------
        state : dict or None
            Numbers, strings, bytes and NumPy arrays only (what skops stores without running
            code), everything besides the parameters and the indexed rows (the model saves
            those); None: nothing to save, the index is rebuilt from the rows on load.
        """
        return None

    def restore_state(self, state: dict[str, Any], X: Any) -> None:  # pragma: no cover - optional hook
        """Make this unbuilt index the saved one, on its indexed rows ``X``, without a build
        (hook, optional: declared by ``capabilities.saved_state``).

        ``state`` comes from a file: check every size, offset and dtype before the library
        reads it, and raise ``ValueError`` naming the index for anything wrong (a library's
        reader may trust what it is given and read or write outside its buffers).

        Parameters
        ----------
        state : dict
            What :meth:`saved_state` returned, as loaded.
        X : ndarray or CSR matrix of shape (n_samples, n_features)
            The rows the index was built on (the model's training rows).
        """
        raise NotImplementedError(f"{type(self).__name__} does not restore a saved state")

    def add_rows(self, X: Any) -> None:  # pragma: no cover - optional hook
        """Add the rows of ``X`` after the ``n_samples_fit_`` indexed ones to the built index,
        without a rebuild (hook, optional: declared by ``capabilities.adds_rows``).

        Parameters
        ----------
        X : ndarray or CSR matrix of shape (n_samples, n_features)
            Every row now, validated: the indexed rows first, as they were, then the new ones.
        """
        raise NotImplementedError(f"{type(self).__name__} does not add rows to a built index")


def unbuilt_copy(index: Any) -> Any:
    """A fresh, unbuilt copy of an index: ``sklearn.base.clone`` for estimator-style indexes,
    a deep copy for any other object with ``build``/``query``."""
    try:
        return clone(index)
    except TypeError:
        return copy.deepcopy(index)


def check_positive_int(value: Any, name: str, *, allow_none: bool = False, minimum: int = 1) -> None:
    """Raise TypeError / ValueError unless ``value`` is an integer >= ``minimum`` (or None when allowed)."""
    if value is None and allow_none:
        return
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {name}={value}")


def check_recall(value: Any) -> None:
    """Raise ValueError unless ``value`` (a ``recall`` parameter) is a real number in (0, 1] or None:
    any real number, numpy's float32 included, as every backend takes it."""
    if value is not None and (isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real)
                              or not 0.0 < value <= 1.0):
        raise ValueError(f"recall must be a number in (0, 1] or None, got recall={value!r}")


def resolve_n_jobs(n_jobs: int | None) -> int:
    """Number of worker threads: None or -1 means every CPU this process may use."""
    try:
        n_cpu = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        n_cpu = os.cpu_count() or 1
    if n_jobs is None or n_jobs == -1:
        return max(1, n_cpu)
    if n_jobs < -1:
        return max(1, n_cpu + 1 + n_jobs)
    return int(n_jobs)
