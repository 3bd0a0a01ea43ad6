"""Recall of an approximate neighbour search, measured on a sample and calibrated to a target.

An approximate index answers with true distances (re-ranked in float64 by the reference the
exact index uses, ``_distance``), so its answer can be compared with the exact one number for
number.  The recall of a row's k neighbours is **tie-aware**: a returned neighbour counts when
its distance is at most the k-th exact distance of that row, so a neighbour tied with the k-th
exact one counts even when the exact search (lower row first) chose another row of that
distance.

Every measurement here is of **leave-one-out** queries, the search a model's ``fit`` runs:
a seeded sample of the indexed rows, each asking for its k nearest *other* rows
(:func:`~mlneighbors.neighbors.loo_kneighbors` with ``rows=``), against the exact
leave-one-out neighbours of the same rows among all indexed rows.

Sample size and error: :data:`RECALL_SAMPLE` rows (all rows when there are fewer).  A row's
recall lies in [0, 1]; the mean of ``s`` independent rows of mean ``r`` has a standard error
of at most ``sqrt(r (1 - r) / s)`` (the Bernoulli case is the largest variance in [0, 1] with
that mean): 0.0069 at r = 0.95 and s = 1,000.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from sklearn.utils import check_random_state

from .._config import working_memory_bytes
from ._base import is_dask_array
from ._capabilities import get_capabilities
from ._distance import Reference
from ._exact import ExactIndex
from ._loo import loo_kneighbors

__all__ = ["DEFAULT_RECALL", "RECALL_SAMPLE", "calibrate", "estimate_recall", "exact_loo", "recall_error",
           "sample_rows", "tie_aware_recall"]

#: the recall an approximate index is calibrated to when none is asked for (``recall=None``):
#: 0.95 plus two standard errors of a 1,000-row sample at 0.95 (2 x 0.0069), so that the recall
#: reached is at least 0.95 but for a 2.5 % chance
DEFAULT_RECALL = 0.96
#: rows of the seeded sample on which recall is measured and calibrated
RECALL_SAMPLE = 1000


def sample_rows(n: int, size: int = RECALL_SAMPLE, random_state: Any = 0) -> np.ndarray:
    """A seeded sample of ``min(size, n)`` distinct row numbers of ``0 .. n - 1``, sorted."""
    if size >= n:
        return np.arange(n)
    rng = check_random_state(random_state)
    return np.sort(rng.choice(n, size=size, replace=False))


def tie_aware_recall(dist: np.ndarray, exact_dist: np.ndarray) -> float:
    """Mean over rows of the share of the k returned neighbours that are at most as far as
    the k-th exact neighbour (``inf`` entries, from rows with too few neighbours, never count).

    Parameters
    ----------
    dist : ndarray of shape (n_rows, k)
        Distances of the neighbours an index returned (float64 reference distances).
    exact_dist : ndarray of shape (n_rows, k)
        The exact k nearest distances of the same rows, ascending.

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
    dist = np.asarray(dist, dtype=np.float64)
    exact_dist = np.asarray(exact_dist, dtype=np.float64)
    if dist.shape != exact_dist.shape:
        raise ValueError(f"dist has shape {dist.shape} and exact_dist {exact_dist.shape}; they must be equal")
    if dist.size == 0:
        return 1.0
    hits = (dist <= exact_dist[:, -1:]).sum(axis=1)
    return float(hits.mean() / dist.shape[1])


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
    n = X.shape[0]
    k = min(int(k), n - 1)
    if k < 1:
        return 1.0
    if is_dask_array(X):
        return float("nan")
    rows = sample_rows(n, RECALL_SAMPLE, 0)
    exact_dist, _ = exact_loo(X, metric, rows, k)
    dist, idx = loo_kneighbors(index, X, k, rows=rows, validated=True)
    if not get_capabilities(index).true_distances:
        # its distances are its own (HybridKNN's window: in the PCA space): measure the
        # neighbours it found in the space the exact ones were found in
        reference = Reference(X, metric)
        dist = reference.grid_distances(reference.prepare(X[rows]), idx, working_memory_bytes(0.5))
    return tie_aware_recall(dist, exact_dist)
