"""What an index says it can do: the one place where backends are told apart.

Code that must treat indexes differently (share one search through a
:class:`~mlneighbors.neighbors.NeighborCache`, mask one brute-force search for the
label-restricted search of BKNN, ship a model's index to Dask workers instead of its rows,
take a ``recall``) reads :func:`get_capabilities`, never the class of the index.  An index of
this package declares a :class:`Capabilities` as its ``capabilities`` attribute (a class
attribute, or a property where it depends on the parameters or on what ``build`` chose); any
other object of the protocol gets defaults read from its ``exact`` and ``metric``.
:func:`~mlneighbors.neighbors.check_index` holds an index to what it declares.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["METRICS", "Capabilities", "get_capabilities"]

#: Every metric some backend understands.  ``euclidean`` and ``cosine`` are first class
#: (BLAS path, dense and sparse, every backend); ``manhattan`` is computed by
#: scikit-learn's pairwise distances, exactly, and by pynndescent approximately.
METRICS: tuple[str, ...] = ("euclidean", "cosine", "manhattan")


@dataclass(frozen=True)
class Capabilities:
    """What an index declares it can do (read with :func:`get_capabilities`).

    Parameters
    ----------
    exact : bool, default=False
        ``query`` returns the exact k nearest rows in the order (distance, row number): ties
        go to the lower row.  :func:`~mlneighbors.neighbors.check_index` compares such an
        index with brute force.
    metrics : tuple of str, default=("euclidean",)
        The metrics of :data:`~mlneighbors.neighbors.METRICS` it searches; the first is its
        default.
    sparse : bool, default=False
        It takes SciPy CSR rows and queries (searched as they are or densified inside).
    prefix_safe : bool or None, default=None
        The result for k is the first k columns of the result for any larger k, so a
        :class:`~mlneighbors.neighbors.NeighborCache` may answer smaller k from one search.
        None: the same as ``exact`` (the tie rule makes the exact order total).
    true_distances : bool, default=True
        The distances returned are the metric's distances between the query and the row as
        given (False: in a space of the index's own, as the PCA window's projected space).
    recall : bool, default=False
        It takes a ``recall`` parameter and calibrates its search to reach it.
    label_masking : tuple of str, default=()
        Metrics for which the label-restricted search (BKNN) may replace one copy of this
        index per label by one masked brute-force search: declared by the exact engine, whose
        neighbours that search reproduces, ties included.
    dask_arrays : bool, default=False
        It keeps its rows on a Dask cluster and takes ``dask.array.Array`` input; a model
        sent to the workers travels with its index (a handle on the shards), not its rows.
    float32_rows : tuple of str, default=()
        Metrics for which it keeps dense float32 rows as they are given (no float64 copy:
        rows held once, their distances still computed in float64); any other rows are
        validated to float64.  :meth:`~mlneighbors.neighbors.BaseIndex.keeps_float32` reads it.
    loo_queries : bool, default=False
        It has :meth:`~mlneighbors.neighbors.BaseIndex.loo_query_rows`, its own search for the
        leave-one-out neighbours of its indexed rows (every model's ``fit``), which
        :func:`~mlneighbors.neighbors.loo_kneighbors` asks first (it may decline with None).
    neighbour_sets : bool, default=False
        Its :meth:`~mlneighbors.neighbors.BaseIndex.query_rows` and ``loo_query_rows`` take
        ``sets=True``: the k neighbours of each query in an order left open, for a caller that
        needs only the sets (label counts), which it may answer faster.
    saved_state : bool, default=False
        It has :meth:`~mlneighbors.neighbors.BaseIndex.saved_state` and
        :meth:`~mlneighbors.neighbors.BaseIndex.restore_state`: a built index saved as plain
        data with a model (``mlneighbors.save(..., include_index=True)``) and restored on its
        rows without a build.
    adds_rows : bool, default=False
        It has :meth:`~mlneighbors.neighbors.BaseIndex.add_rows`: rows appended after the
        indexed ones go into the built index without a rebuild (an HNSW graph, IVF lists), its
        recall measured again; a live model's ``partial_fit`` calls it.  Any other index is
        rebuilt from the rows on its next use.

    Examples
    --------
    >>> from mlneighbors.neighbors import Capabilities, get_capabilities, get_index
    >>> get_capabilities(get_index("hnswlib"))
    Capabilities(exact=False, metrics=('euclidean', 'cosine'), sparse=True, prefix_safe=False, \
true_distances=True, recall=True, label_masking=(), dask_arrays=False, float32_rows=('euclidean', 'cosine'), \
loo_queries=True, neighbour_sets=False, saved_state=True, adds_rows=True)
    >>> Capabilities(exact=True).prefix_safe
    True
    """

    exact: bool = False
    metrics: tuple[str, ...] = ("euclidean",)
    sparse: bool = False
    prefix_safe: bool | None = None
    true_distances: bool = True
    recall: bool = False
    label_masking: tuple[str, ...] = ()
    dask_arrays: bool = False
    float32_rows: tuple[str, ...] = ()
    loo_queries: bool = False
    neighbour_sets: bool = False
    saved_state: bool = False
    adds_rows: bool = False

    def __post_init__(self) -> None:
        for field in ("metrics", "label_masking", "float32_rows"):
            value = getattr(self, field)
            if isinstance(value, str) or not all(isinstance(m, str) for m in value):
                raise TypeError(f"Capabilities.{field} must be a tuple of metric names, got {value!r}")
            unknown = [m for m in value if m not in METRICS]
            if unknown:
                raise ValueError(f"Capabilities.{field} names unknown metric(s) {unknown}; known: {list(METRICS)}")
            object.__setattr__(self, field, tuple(value))
        if not self.metrics:
            raise ValueError("Capabilities.metrics must name at least one metric")
        if self.prefix_safe is None:
            object.__setattr__(self, "prefix_safe", bool(self.exact))


def get_capabilities(index: Any) -> Capabilities:
    """The capabilities an index declares, or the defaults of an object of the protocol.

    Parameters
    ----------
    index : index object, built or not
        An index whose ``capabilities`` attribute is a :class:`Capabilities` (every index of
        this package), or any object with ``build`` and ``query``.  For the latter: ``exact``
        from its ``exact`` attribute (False when absent), ``metrics`` its ``metric`` (or
        ``"euclidean"``), prefix-safe when exact, true distances, and nothing else.

    Returns
    -------
    capabilities : Capabilities

    Raises
    ------
    TypeError
        ``index.capabilities`` exists but is not a :class:`Capabilities`.

    Examples
    --------
    >>> from mlneighbors.neighbors import get_capabilities, get_index
    >>> get_capabilities(get_index("exact")).label_masking
    ('euclidean', 'cosine')
    >>> class Mine:
    ...     exact, metric = True, "cosine"
    ...     def build(self, X): ...
    ...     def query(self, Q, k): ...
    >>> caps = get_capabilities(Mine())
    >>> caps.exact, caps.metrics, caps.prefix_safe, caps.sparse
    (True, ('cosine',), True, False)
    """
    declared = getattr(index, "capabilities", None)
    if isinstance(declared, Capabilities):
        return declared
    if declared is not None:
        raise TypeError(
            f"{type(index).__name__}.capabilities must be a mlneighbors.neighbors.Capabilities, got {declared!r}"
        )
    metric = getattr(index, "metric", None)
    return Capabilities(
        exact=bool(getattr(index, "exact", False)),
        metrics=(metric,) if isinstance(metric, str) and metric in METRICS else ("euclidean",),
    )
