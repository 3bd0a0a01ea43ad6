"""Recall of an approximate neighbour search, measured on a sample and calibrated to a target.

An approximate index answers with true distances (re-ranked in float64 by the reference the
exact index uses, ``_distance``), so its answer can be compared with the exact one number for
number.  The recall of a row's k neighbours is **tie-aware**: a returned neighbour counts when
its distance is at most the k-th exact distance of that row, so a neighbour tied with the k-th
exact one counts even when the exact search (lower row first) chose another row of that
distance.

A mean hides how the misses fall: a search that answers most rows perfectly and a few with
every neighbour wrong (a graph search descending into the wrong cluster) has the mean recall of
one whose misses are spread.  So every measurement is kept per row (:func:`tie_aware_recalls`)
and reported twice: the mean, and the **share of rows whose recall is below one half**
(:func:`low_recall_share`, :data:`LOW_RECALL`), the rows on which a model's answer is no longer
the exact one's.

Every measurement here is of **leave-one-out** queries, the search a model's ``fit`` runs:
a seeded sample of the indexed rows, each asking for its k nearest *other* rows
(:func:`~mlneighbors.neighbors.loo_kneighbors` with ``rows=``), against the exact
leave-one-out neighbours of the same rows among all indexed rows.

Sample size and error: :data:`RECALL_SAMPLE` rows (all rows when there are fewer); the
adapters that hold rows out as new queries sample ``min(1000, n // 5)`` of their n rows, each
(every row below 100 rows: their ``recall_rows_``).  A row's
recall lies in [0, 1]; the mean of ``s`` independent rows of mean ``r`` has a standard error
of at most ``sqrt(r (1 - r) / s)`` (the Bernoulli case is the largest variance in [0, 1] with
that mean): 0.0069 at r = 0.95 and s = 1,000.  The share of rows below one half is a
proportion of the same rows: its standard error is ``sqrt(p (1 - p) / s)``, and one row of a
1,000-row sample is 0.1 %, so a sample that finds none bounds the share at
``1 - 0.05 ** (1 / s)`` (95 %; about 3 / s): about 0.3 % at s = 1,000, not 1 in 10,000; below
5,000 indexed rows the adapters' sample is smaller and the bound wider (3 % at 500 rows,
whose sample is 100).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from sklearn.utils import check_random_state

from .._config import working_memory_bytes
from .._docstrings import fill_doc
from ._capabilities import get_capabilities
from ._distance import Reference
from ._exact import ExactIndex
from ._loo import loo_kneighbors
from ._protocol import is_dask_array

__all__ = ["DEFAULT_RECALL", "LOW_RECALL", "RECALL_SAMPLE", "calibrate", "estimate_recall", "estimate_recalls",
           "exact_loo", "low_recall_share", "mean_recall", "recall_error", "sample_rows", "tie_aware_hits",
           "tie_aware_recall", "tie_aware_recalls"]

#: the recall an approximate index is calibrated to when none is asked for (``recall=None``):
#: 0.95 plus two standard errors of a 1,000-row sample at 0.95 (2 x 0.0069), so that the recall
#: reached is at least 0.95 but for a 2.5 % chance
DEFAULT_RECALL = 0.96
#: rows of the seeded sample on which recall is measured and calibrated
RECALL_SAMPLE = 1000
#: a row whose recall@k is below this has lost most of its neighbours: ``low_recall_share_``
#: counts such rows
LOW_RECALL = 0.5


def sample_rows(n: int, size: int = RECALL_SAMPLE, random_state: Any = 0) -> np.ndarray:
    """A seeded sample of ``min(size, n)`` distinct row numbers of ``0 .. n - 1``, sorted."""
    if size >= n:
        return np.arange(n)
    rng = check_random_state(random_state)
    return np.sort(rng.choice(n, size=size, replace=False))


def tie_aware_hits(dist: np.ndarray, kth: np.ndarray) -> np.ndarray:
    """Per row, how many of the returned neighbours are at most as far as the row's k-th exact
    neighbour: the numerator of its tie-aware recall (a missing neighbour, ``inf``, counts only
    where the exact k-th is missing too: a row with fewer than k other rows).

    The one formula of this module: :func:`tie_aware_recalls`, :func:`tie_aware_recall` and the
    approximate indexes' calibration all count with it.

    Parameters
    ----------
    dist : ndarray of shape (n_rows, k)
        Distances of the neighbours an index returned (float64 reference distances).
    kth : ndarray of shape (n_rows,)
        The k-th exact distance of every row.

    Returns
    -------
    hits : ndarray of shape (n_rows,), int

    Examples
    --------
    >>> import numpy as np
    >>> from mlneighbors.neighbors._recall import tie_aware_hits
    >>> tie_aware_hits(np.array([[1.0, 2.0, 2.0], [1.0, 2.5, 3.0]]), np.array([2.0, 2.0])).tolist()
    [3, 1]
    """
    return (dist <= kth[:, None]).sum(axis=1)


def mean_recall(hits: np.ndarray, k: int) -> float:
    """The mean recall of rows of ``hits`` (:func:`tie_aware_hits`) out of ``k``: 1.0 when there
    is nothing to find (no row, or ``k = 0``).  The mean of the hits divided by ``k``, in that
    order: the calibration's recall, bit for bit as it always was."""
    if hits.size == 0 or k == 0:
        return 1.0
    return float(hits.mean() / k)


def low_recall_share(recalls: np.ndarray) -> float:
    """The share of rows whose recall is below :data:`LOW_RECALL` (0.0 for no row).

    Examples
    --------
    >>> import numpy as np
    >>> from mlneighbors.neighbors._recall import low_recall_share
    >>> low_recall_share(np.array([1.0, 0.9, 0.5, 0.4]))  # 0.5 is not below one half
    0.25
    """
    recalls = np.asarray(recalls, dtype=np.float64)
    return float((recalls < LOW_RECALL).mean()) if recalls.size else 0.0


def _checked(dist: np.ndarray, exact_dist: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    dist = np.asarray(dist, dtype=np.float64)
    exact_dist = np.asarray(exact_dist, dtype=np.float64)
    if dist.ndim != 2 or dist.shape != exact_dist.shape:
        raise ValueError(f"dist has shape {dist.shape} and exact_dist {exact_dist.shape}; they must be equal "
                         "(n_rows, k)")
    return dist, exact_dist


@fill_doc
def tie_aware_recalls(dist: np.ndarray, exact_dist: np.ndarray) -> np.ndarray:
    """Per row, the share of the k returned neighbours that are at most as far as the k-th
    exact neighbour (a missing neighbour, ``inf``, counts only where the exact k-th is missing
    too); 1.0 for every row when ``k = 0``.

    {recall_parameters}

    Returns
    -------
    recalls : ndarray of shape (n_rows,), values in [0, 1]

    Examples
    --------
    >>> import numpy as np
    >>> from mlneighbors.neighbors._recall import tie_aware_recalls
    >>> exact = np.array([[1.0, 2.0, 2.0], [1.0, 2.0, 2.0]])
    >>> tie_aware_recalls(np.array([[1.0, 2.0, 2.0], [1.0, 3.0, np.inf]]), exact).tolist()
    [1.0, 0.3333333333333333]
    """
    dist, exact_dist = _checked(dist, exact_dist)
    k = dist.shape[1]
    if k == 0:
        return np.ones(dist.shape[0])
    return tie_aware_hits(dist, exact_dist[:, -1]) / k


@fill_doc
def tie_aware_recall(dist: np.ndarray, exact_dist: np.ndarray) -> float:
    """Mean over rows of :func:`tie_aware_recalls` (1.0 for no row).

    {recall_parameters}

    Returns
    -------
    recall : float in [0, 1]

    Examples
    --------
    >>> import numpy as np
    >>> from mlneighbors.neighbors._recall import tie_aware_recall
    >>> exact = np.array([[1.0, 2.0, 2.0]])
    >>> tie_aware_recall(np.array([[1.0, 2.0, 2.0]]), exact)  # another row tied at 2.0 counts
    1.0
    >>> tie_aware_recall(np.array([[1.0, 2.0, 3.0]]), exact)
    0.6666666666666666
    """
    dist, exact_dist = _checked(dist, exact_dist)
    if dist.size == 0:
        return 1.0
    # the mean of the per-row hits over k (not of the per-row recalls): as it always was, bit for bit
    return mean_recall(tie_aware_hits(dist, exact_dist[:, -1]), dist.shape[1])


def recall_error(recall: float, n_rows: int) -> float:
    """An upper bound of the standard error of a recall measured on ``n_rows`` rows."""
    return math.sqrt(max(recall * (1.0 - recall), 0.0) / max(n_rows, 1))


def exact_loo(X: Any, metric: str, rows: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The exact leave-one-out k nearest neighbours of ``X[rows]`` among all rows of ``X``."""
    return loo_kneighbors(ExactIndex(metric=metric).build(X), X, k, rows=rows, validated=True)


def calibrate(measure: Callable[[int], float], lo: int, hi: int, target: float) -> tuple[int, float]:
    """The smallest integer ``p`` in ``[lo, hi]`` whose ``measure(p)`` reaches ``target``.

    ``measure`` is a recall that grows with ``p`` (a search breadth: HNSW's ``ef``, IVF's
    ``nprobe``).  ``p`` doubles from ``lo`` until the target is reached, then a bisection finds
    the smallest value that reaches it; when even ``hi`` does not, ``hi`` is returned.  About
    ``2 log2(p / lo)`` measurements.

    Returns
    -------
    p : int
    recall : float
        ``measure(p)``.

    Examples
    --------
    >>> from mlneighbors.neighbors._recall import calibrate
    >>> calibrate(lambda p: min(1.0, p / 100), lo=1, hi=1000, target=0.95)
    (95, 0.95)
    """
    seen: dict[int, float] = {}

    def at(p: int) -> float:
        if p not in seen:
            seen[p] = float(measure(p))
        return seen[p]

    lo, hi = int(lo), max(int(lo), int(hi))
    failed, p = lo - 1, lo
    while at(p) < target:
        if p >= hi:
            return hi, at(hi)
        failed, p = p, min(hi, 2 * p)
    while p - failed > 1:  # at(failed) < target <= at(p)
        mid = (failed + p) // 2
        if at(mid) >= target:
            p = mid
        else:
            failed = mid
    return p, at(p)


def estimate_recall(index: Any, X: Any, k: int, metric: str) -> float:
    """The recall@k of any built index's leave-one-out search on its rows ``X``.

    1.0 for an exact index, the index's own ``recall_`` when it measured one, else measured
    here on a seeded sample of :data:`RECALL_SAMPLE` rows (NaN for rows that are not in this
    process: a dask array).
    """
    if get_capabilities(index).exact:
        return 1.0
    own = getattr(index, "recall_", None)
    if own is not None:
        return float(own)
    measured = _sampled_recalls(index, X, k, metric)
    return float("nan") if measured is None else mean_recall(*measured)


def estimate_recalls(index: Any, X: Any, k: int, metric: str) -> tuple[float, float]:
    """:func:`estimate_recall`, and the share of the same queries whose recall@k is below one
    half.

    ``(1.0, 0.0)`` for an exact index; each the index's own (``recall_``,
    ``low_recall_share_``) where it measured one; else measured here, both on one seeded sample
    of :data:`RECALL_SAMPLE` rows (NaN for rows that are not in this process: a dask array).

    Returns
    -------
    recall : float
    low_recall_share : float
    """
    if get_capabilities(index).exact:
        return 1.0, 0.0
    recall, share = getattr(index, "recall_", None), getattr(index, "low_recall_share_", None)
    if recall is None or share is None:  # one sample measures both
        measured = _sampled_recalls(index, X, k, metric)
        if recall is None:
            recall = float("nan") if measured is None else mean_recall(*measured)
        if share is None:
            share = float("nan") if measured is None else low_recall_share(measured[0] / max(measured[1], 1))
    return float(recall), float(share)


def _sampled_recalls(index: Any, X: Any, k: int, metric: str) -> tuple[np.ndarray, int] | None:
    """``(hits, k)`` (:func:`tie_aware_hits`) of the leave-one-out queries of a seeded sample of
    :data:`RECALL_SAMPLE` rows of ``X``; None for a dask array."""
    n = X.shape[0]
    k = min(int(k), n - 1)
    if k < 1:
        return np.zeros(0, dtype=np.intp), 0
    if is_dask_array(X):
        return None
    rows = sample_rows(n, RECALL_SAMPLE, 0)
    exact_dist, _ = exact_loo(X, metric, rows, k)
    dist, idx = loo_kneighbors(index, X, k, rows=rows, validated=True)
    if not get_capabilities(index).true_distances:
        # its distances are its own (HybridKNN's window: in the PCA space): measure the
        # neighbours it found in the space the exact ones were found in
        reference = Reference(X, metric)
        dist = reference.grid_distances(reference.prepare(X[rows]), idx, working_memory_bytes(0.5))
    dist, exact_dist = _checked(dist, exact_dist)
    return tie_aware_hits(dist, exact_dist[:, -1]), k
