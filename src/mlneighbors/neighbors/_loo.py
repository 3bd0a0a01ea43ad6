"""Leave-one-out neighbours: the one place where a point's own row is excluded.

Two entry points, one rule ("the query's own row is left out by its index; its duplicates
are other rows and stay"):

- :func:`loo_kneighbors`: the k nearest other rows of every indexed row, from any index;
- :func:`drop_self`: the same rule applied to any result that carries row numbers, used by
  the label-restricted searches (``_labels``), where a row is not always among the rows
  searched (a row is queried against the members of labels it does not carry too).

The exact engine's masked label search applies the rule before selecting (the row's own
column is set to infinity), which brute force allows and which gives the same neighbours.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._capabilities import get_capabilities
from ._protocol import _search, answers_sets, check_k, check_result, check_rows

__all__ = ["drop_self", "loo_kneighbors"]

# entries of a result handled at once by ``drop_self``
_DROP_BLOCK = 1 << 20


def loo_kneighbors(
    index: Any, X: Any, k: int, *, validated: bool = False, rows: Any = None, order: bool = True
) -> Any:
    """The k nearest neighbours of every indexed row, its own row excluded.

    Asks the index for ``k + 1`` neighbours of the rows it was built on and removes each
    row's own index (scikit-learn's ``kneighbors(X=None)`` does the same).  Duplicates of a
    row are other rows and stay.  The order is the index's own (distance, then lower index),
    so the result for k is the prefix of the result for any larger k.  When the row itself
    is not among the ``k + 1`` returned (more than k duplicates with lower indices, or an
    approximate backend that missed it), the last of the ``k + 1`` is dropped instead: the
    row itself is never among its neighbours, whatever the backend.

    An index with its own way to answer the leave-one-out queries of its rows offers it as a
    ``loo_query_rows(X, rows, m)`` method (``rows`` None: all), declared by
    ``capabilities.loo_queries`` and used instead of ``query``: the
    approximate backends search them at the breadth calibrated for them (a row of a graph
    finds itself and its links first: a narrower search reaches the recall), pynndescent
    reads the k-NN graph its build made.  The same rule is applied to what it returns.

    Every model calls this once per ``fit``, and the approximate indexes call it on a sample
    of rows to measure their recall; no backend and no model re-implements it.

    Parameters
    ----------
    index : built index (see :class:`~mlneighbors.neighbors.NeighborIndex`)
    X : array-like or CSR of shape (n_samples, n_features)
        The matrix the index was built on (its rows are the queries).
    k : int
        Number of neighbours, ``1 <= k <= n_samples - 1``.
    validated : bool, default=False
        ``X`` was validated by the caller (an estimator's training rows): the package's own
        indexes do not validate it again.
    rows : array-like of int, default=None
        Only these indexed rows are queried (their neighbours are still sought among all
        rows); None: every row.
    order : bool, default=True
        False: only the set of each row's k neighbours is needed (label counts); ``idx``
        alone is returned, in an order within a row that is left open (the exact engine then
        skips the distances its error bounds prove unneeded).

    Returns
    -------
    dist : ndarray of shape (n_samples, k), float64
        (``(len(rows), k)`` with ``rows``.)  Not returned with ``order=False``.
    idx : ndarray of shape (n_samples, k), intp

    Examples
    --------
    >>> import numpy as np
    >>> from mlneighbors.neighbors import ExactIndex, loo_kneighbors
    >>> X = np.array([[0.0], [0.0], [1.0], [3.0]])
    >>> dist, idx = loo_kneighbors(ExactIndex().build(X), X, k=2)
    >>> idx
    array([[1, 2],
           [0, 2],
           [0, 1],
           [2, 0]])
    >>> loo_kneighbors(ExactIndex().build(X), X, k=2, rows=[3])[1]
    array([[2, 0]])
    """
    n = X.shape[0]
    n_fit = getattr(index, "n_samples_fit_", n)
    if n_fit != n:
        raise ValueError(f"X has {n} rows, but the index was built on {n_fit} rows")
    k = check_k(k, n)
    if k > n - 1:
        raise ValueError(f"leave-one-out needs k <= n_samples - 1 = {n - 1}, got k={k}")
    if rows is None:
        queried = np.arange(n)
    else:
        queried = np.asarray(rows)
        if queried.ndim != 1 or queried.dtype.kind not in "iu" or (
            queried.size and (queried.min() < 0 or queried.max() >= n)
        ):
            raise ValueError(f"rows must be a 1-D array of row numbers in 0 .. {n - 1}")
        queried = queried.astype(np.intp)
    sets = not order and answers_sets(index)
    found = None
    if get_capabilities(index).loo_queries:
        found = index.loo_query_rows(X, None if rows is None else queried, k + 1, **({"sets": True} if sets else {}))
    if found is None:
        Q = X if rows is None else X[queried]  # X itself: an index may recognise its own rows
        found = _search(index, Q, k + 1, validated, sets)
    if sets:  # the engine's own answer, its distances NaN where it needed none
        dist, idx = found[0], check_rows(found[1], len(queried), k + 1, n, index)
    else:
        dist, idx = check_result(*found, len(queried), k + 1, n, index)
    own = idx == queried[:, None]
    times = own.sum(axis=1)
    if times.max(initial=0) > 1:
        i = int(np.flatnonzero(times > 1)[0])
        raise ValueError(
            f"the index returned row {queried[i]} more than once among its own neighbours "
            f"{idx[i].tolist()}; a row may appear once (leave-one-out removes it)"
        )
    if times.min(initial=1) == 1:  # every row among its own k + 1 (the rule): the others, in order
        keep = ~own
        dist, idx = dist[keep].reshape(-1, k), idx[keep].reshape(-1, k)
    else:
        dist, idx = drop_self(dist, idx, queried, k)
    return (dist, idx) if order else idx


def drop_self(
    dist: np.ndarray, idx: np.ndarray, self_rows: np.ndarray, k: int, *, rows: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """The first ``k`` entries of every row of a result other than the query's own row.

    Parameters
    ----------
    dist, idx : ndarray of shape (n_queries, m)
        A search result in its order; ``idx`` holds row numbers of the searched rows.
    self_rows : ndarray of shape (n_queries,)
        The row number of every query among all rows (its own row, to leave out).
    k : int
        Entries to keep per query.
    rows : ndarray, default=None
        The row numbers of the searched rows (``idx`` indexes into it) when they are a subset
        of all rows; None means ``idx`` are already row numbers of all rows.

    Returns
    -------
    dist : ndarray of shape (n_queries, k), float64
        ``inf`` where fewer than ``k`` entries remain.
    idx : ndarray of shape (n_queries, k), intp
        Row numbers as given in ``idx``; ``-1`` where fewer than ``k`` entries remain.

    Examples
    --------
    >>> import numpy as np
    >>> from mlneighbors.neighbors import drop_self
    >>> dist, idx = drop_self(np.array([[0.0, 0.0, 1.0]]), np.array([[4, 2, 7]]),
    ...                       self_rows=np.array([2]), k=2)
    >>> idx
    array([[4, 7]])
    """

    dist = np.asarray(dist, dtype=np.float64)
    idx = np.asarray(idx, dtype=np.intp)
    self_rows = np.asarray(self_rows)
    out_dist = np.full((len(dist), k), np.inf)
    out_idx = np.full((len(dist), k), -1, dtype=np.intp)
    # in blocks of rows: the masks and gathers of a 10^6-row leave-one-out result would
    # otherwise hold several times its size at once
    step = max(1, _DROP_BLOCK // max(1, idx.shape[1]))
    for a in range(0, len(dist), step):
        ib = idx[a : a + step]
        global_idx = ib if rows is None else np.asarray(rows)[ib]
        keep = global_idx != self_rows[a : a + step, None]
        keep &= np.cumsum(keep, axis=1) <= k
        slots = np.arange(k) < keep.sum(axis=1)[:, None]  # the kept entries, left-aligned, in their order
        out_dist[a : a + step][slots] = dist[a : a + step][keep]
        out_idx[a : a + step][slots] = ib[keep]
    return out_dist, out_idx
