"""The PCA window search of the hybrid kNN (Nedungadi & Haripriya) as an index.

``build(X)`` projects the rows on their principal components and sorts them along each kept
component.  ``query(Q, k)`` takes, on every component, the ``n_candidates`` indexed rows
nearest to the query along that axis; among the union of those candidates, the ``k`` of
smallest cosine distance ``1 - cos`` in the projected space are the neighbours (ties: the
lower row).  It is an approximate index of the cosine distance in the full space: the
candidate set is what the method exists to make small, and :meth:`PCAWindowIndex.candidate_fraction`
reports its size.
"""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp
from sklearn.decomposition import PCA

from .._config import block_rows
from ._capabilities import Capabilities
from ._distance import Matrix, normalize_rows
from ._protocol import BaseIndex, check_positive_int
from ._select import mask_entries

__all__ = ["MAX_COMPONENTS", "PCAWindowIndex", "window_starts"]

#: a float n_components never keeps more components than this (the user guide's cap: docs/user_guide/hybrid.rst)
MAX_COMPONENTS = 50


def _open_candidates(seen: np.ndarray, Qn: np.ndarray, Zn: np.ndarray, k: int) -> np.ndarray:
    """The candidates (``seen``) that may be among a query's k nearest: those whose similarity,
    estimated by one product of the queries with every indexed row, is within twice its
    rounding bound of the k-th best estimate.  The candidate's own dot product (``einsum``, one
    per candidate, as before) then decides, on these only: the same neighbours, for the
    fraction of the work (a query's candidates are most of the rows on data this small).

    Unit rows of ``c`` components: each estimate is within ``gamma_c`` of the exact product
    and so is each candidate's own dot product; a margin of eight times it covers both."""
    q, n = seen.shape
    k = min(k, n)
    est = 1.0 - Qn @ Zn.T
    est[~seen] = np.inf
    kth = np.partition(est, k - 1, axis=1)[:, k - 1 : k]
    margin = 8.0 * (Qn.shape[1] + 2) * 2.0**-53
    return seen & (est <= kth + 2.0 * margin)


def window_starts(sorted_coords: np.ndarray, x: np.ndarray, width: int) -> np.ndarray:
    """Start of the ``width`` positions nearest to ``x`` in each sorted coordinate row.

    The window is the one grown outward from ``x``'s insertion point
    (``np.searchsorted(..., side="left")``), taking at each step the nearer of the two
    neighbouring positions, the left one when both are equally near.  It is found by a
    vectorised binary search over the start (the classic "k closest elements" search:
    move right while ``x - s[a] > s[a + width] - x``), in ``log2(width)`` steps for the
    whole block.

    Parameters
    ----------
    sorted_coords : ndarray of shape (n_components, n_samples)
        Each row sorted ascending.
    x : ndarray of shape (n_queries, n_components)
    width : int
        ``1 <= width <= n_samples``.

    Returns
    -------
    start : ndarray of shape (n_queries, n_components), intp
        The window of query ``q`` on component ``j`` is positions
        ``start[q, j] .. start[q, j] + width - 1`` of row ``j``.

    Examples
    --------
    >>> import numpy as np
    >>> window_starts(np.array([[0.0, 1.0, 2.0, 10.0]]), np.array([[1.8]]), 2).tolist()
    [[1]]
    """
    c, n = sorted_coords.shape
    pos = np.empty(x.shape, dtype=np.intp)
    for j in range(c):  # np.searchsorted is 1-D: one call per component, each over the block
        pos[:, j] = np.searchsorted(sorted_coords[j], x[:, j], side="left")
    lo = np.maximum(pos - width, 0)
    hi = np.minimum(pos, n - width)
    comp = np.arange(c)
    while True:
        active = lo < hi
        if not active.any():
            return lo
        mid = (lo + hi) // 2
        right = np.minimum(mid + width, n - 1)  # only read where active (mid + width <= n - 1)
        move = (x - sorted_coords[comp, mid]) > (sorted_coords[comp, right] - x)
        lo = np.where(active & move, mid + 1, lo)
        hi = np.where(active & ~move, mid, hi)


def _fit_pca(X: Matrix, n_components: int | float | None) -> PCA:
    """A PCA holding at least the components the index keeps, the number decided before the
    decomposition.

    At most ``wanted`` components are kept (``n_components`` when an int, the cap of 50 for
    a variance fraction, all of them for None).  When that is a small part of the problem
    (``wanted < min(n, d) / 4``), ARPACK computes just those (scikit-learn's ``arpack``
    solver: sparse data are centred implicitly, never densified; its
    ``explained_variance_ratio_`` is relative to the total variance, so the fraction rule
    reads the same numbers); dense rows of at most :data:`COVARIANCE_MAX_FEATURES` features
    get them from their covariance matrix instead, which is faster.  A small problem gets the
    full decomposition as before (dense: an SVD; sparse: the covariance when ``d <= n``, else the
    few dense rows).
    """
    n, d = X.shape
    m = min(n, d)
    if n_components is None:
        wanted = m
    elif isinstance(n_components, Integral):
        wanted = int(n_components)
    else:
        wanted = min(MAX_COMPONENTS, m)
    if 4 * wanted < m:
        if _covariance_pays(X):  # the same components, from the d x d covariance matrix
            return PCA(n_components=wanted, svd_solver="covariance_eigh").fit(X)
        return PCA(n_components=wanted, svd_solver="arpack", random_state=0).fit(X)
    if not sp.issparse(X):
        return PCA(n_components=None, svd_solver="full").fit(X)
    if d <= n:
        return PCA(n_components=None, svd_solver="covariance_eigh").fit(X)
    return PCA(n_components=None, svd_solver="full").fit(X.toarray())  # n = m <= 4 * wanted rows


#: the widest dense rows whose covariance matrix (one product of n d^2, an eigen-decomposition
#: of d^3) is cheaper than ARPACK's few components: on a 2-core AMD EPYC, corel16k001 (d = 500)
#: 1.75 -> 0.80 s per fold of HybridKNN, yahoo-science (d = 743) and slashdot (d = 1,079) slower
COVARIANCE_MAX_FEATURES = 512


def _covariance_pays(X: Matrix) -> bool:
    n, d = X.shape
    return not sp.issparse(X) and d <= min(n, COVARIANCE_MAX_FEATURES)


class PCAWindowIndex(BaseIndex):
    """Candidates along principal components, then the cosine top-k among them.

    Parameters
    ----------
    metric : {"cosine"}, default="cosine"
        The distance among the candidates: ``1 - cos`` in the projected space.
    n_components : int, float or None, default=0.95
        Kept principal components.  A float in (0, 1): the fewest components explaining
        more than that fraction of the variance (scikit-learn's rule), at most 50; an int:
        that many (at most ``min(n_samples, n_features)``); None: all.  Only the components
        that can be kept are computed (ARPACK when they are few; see Notes).
    n_candidates : int, default=80
        Candidates per component (the paper's ``L``); values above the number of indexed
        rows mean all of them.  ``query`` takes ``k <= n_candidates``.

    Attributes
    ----------
    components_ : ndarray of shape (n_components_, n_features)
    mean_ : ndarray of shape (n_features,)
    explained_variance_ratio_ : ndarray of shape (n_components_,)
    n_components_ : int
    n_samples_fit_, n_features_in_ : int

    Notes
    -----
    Along one component the ``n_candidates`` nearest rows are the window grown outward from
    the query's coordinate, the left one first on equal gaps; rows are sorted by
    (coordinate, row number); see :func:`window_starts`.  The candidate set of a query is
    the union over components: between ``n_candidates`` and ``n_components_ * n_candidates``
    rows.  The PCA coordinates are centred, so the similarity is that of the centred data (a
    row at the mean has similarity 0 to everything, the exact engine's convention).  With
    ``n_candidates >= n_samples`` the neighbours are those of ``ExactIndex(metric="cosine")``
    on the projected data (distances equal up to the rounding of the dot products).

    *The decomposition.*  At most 50 components (or the int asked for) are ever kept, so
    only those are computed when they are few against ``min(n, d)``: scikit-learn's ARPACK
    solver, on sparse data without densifying it or forming the covariance (a 12,689-feature
    text set took 324 s and 6.5 GB with the full covariance, 2.7 s this way).  The
    components agree with the full decomposition's to rounding (``1e-6`` is tested).

    The work per query: ``searchsorted`` and a binary search per component, removing the
    duplicates among the candidates (a membership mask, or a sort when the indexed set is
    much larger), one dot product per distinct candidate.  A loop runs over components
    only for ``np.searchsorted``; none over queries.

    Examples
    --------
    >>> import numpy as np
    >>> from mlneighbors.neighbors import PCAWindowIndex
    >>> X = np.random.default_rng(0).normal(size=(100, 5))
    >>> index = PCAWindowIndex(n_components=2, n_candidates=10).build(X)
    >>> dist, idx = index.query(X[:3], k=4)
    >>> idx.shape, bool((np.diff(dist, axis=1) >= 0).all())
    ((3, 4), True)
    """

    name: ClassVar[str] = "pca-window"
    # distances in the projected, centred space: not the cosine distances of the rows given
    capabilities: ClassVar[Capabilities] = Capabilities(metrics=("cosine",), sparse=True, true_distances=False)

    def __init__(self, *, metric: str = "cosine", n_components: int | float | None = 0.95,
                 n_candidates: int = 80) -> None:
        self.metric = metric
        self.n_components = n_components
        self.n_candidates = n_candidates

    def check_params(self) -> None:
        check_positive_int(self.n_candidates, "n_candidates")
        c = self.n_components
        if c is None or (isinstance(c, Integral) and not isinstance(c, bool)):
            if c is not None:
                check_positive_int(c, "n_components")
            return
        if not isinstance(c, Real) or isinstance(c, bool) or not 0 < c < 1:
            raise ValueError(f"n_components must be an int >= 1, a float in (0, 1) or None, got {c!r}")

    def build_rows(self, X: Matrix) -> None:
        n, d = X.shape
        if isinstance(self.n_components, Integral) and self.n_components > min(n, d):
            raise ValueError(
                f"n_components={self.n_components} must be at most min(n_samples, "
                f"n_features) = {min(n, d)}"
            )
        pca = _fit_pca(X, self.n_components)
        ratio = pca.explained_variance_ratio_
        if self.n_components is None:
            c = len(ratio)
        elif isinstance(self.n_components, Integral):
            c = int(self.n_components)
        else:
            with np.errstate(invalid="ignore"):
                c = int(np.searchsorted(np.cumsum(ratio), self.n_components, side="right")) + 1
            c = max(1, min(c, MAX_COMPONENTS, len(ratio)))
        self.components_ = pca.components_[:c].copy()
        self.mean_ = pca.mean_.copy()
        self.explained_variance_ratio_ = ratio[:c].copy()
        self.n_components_ = c
        Z = self._project(X)
        self._n_train = n
        self._Zn = np.vstack([normalize_rows(Z), np.zeros((1, c))])  # row n: the padding
        order = np.argsort(Z, axis=0, kind="stable").T  # ties: lower row first
        self._order = np.ascontiguousarray(order)
        self._sorted = np.take_along_axis(Z.T, order, axis=1)

    def _project(self, X: Matrix) -> np.ndarray:
        W = self.components_.T
        if sp.issparse(X):
            return np.asarray(X @ W) - self.mean_ @ W
        return (X - self.mean_) @ W

    def _block_size(self) -> int:
        c = self.n_components_
        width = min(self.n_candidates, self._n_train)
        distinct = min(self._n_train, c * width)
        per_query = 8 * (4 * c * width + distinct * (c + 6)) + 2 * self._n_train + 64
        return block_rows(per_query, cap="window_block")

    def _search_block(
        self, Zq: np.ndarray, start: np.ndarray | None, k: int
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(dist, idx, candidate-set sizes) of a block of projected queries, given their
        window starts (None: every indexed row is a candidate)."""
        n = self._n_train
        q = Zq.shape[0]
        Qn = normalize_rows(Zq)
        if start is None:  # every indexed row is a candidate: one GEMM
            cand = np.broadcast_to(np.arange(n), (q, n))
            sizes = np.full(q, n)
            sim = Qn @ self._Zn[:n].T
        else:
            c = self.n_components_
            width = min(self.n_candidates, n)
            # flat positions in the (component, rank) order table: component j's window
            # is positions j * n + start .. j * n + start + width - 1
            flat = (start + np.arange(c) * n)[:, :, None] + np.arange(width)
            cand = np.take(self._order, flat.reshape(q, c * width))
            if n <= 16 * c * width:  # a (q, n) membership mask costs less than a sort
                seen = np.zeros((q, n), dtype=bool)
                seen[np.arange(q)[:, None], cand] = True
                sizes = seen.sum(axis=1)
                rows, cols = mask_entries(_open_candidates(seen, Qn, self._Zn[:n], k))  # by row, row number
            else:
                cand = np.sort(cand, axis=1)
                new = np.ones(cand.shape, dtype=bool)
                new[:, 1:] = cand[:, 1:] != cand[:, :-1]
                rows, pos = mask_entries(new)
                cols = cand[rows, pos]
                sizes = None
            kept = np.bincount(rows, minlength=q)
            if sizes is None:
                sizes = kept
            # the distinct candidates of each row, left-aligned, padded with row n (zero)
            first = np.cumsum(kept) - kept
            cand = np.full((q, int(kept.max(initial=1))), n, dtype=np.intp)
            cand[rows, np.arange(len(rows)) - first[rows]] = cols
            sim = np.einsum("qmc,qc->qm", self._Zn[cand], Qn)  # one dot product each
        dist = np.clip(1.0 - sim, 0.0, 2.0)
        dist[cand == n] = np.inf
        # the k smallest (distance, index): every entry within the k-th distance, sorted
        kth = np.partition(dist, k - 1, axis=1)[:, k - 1 : k]
        rows, pos = mask_entries(dist <= kth)
        d, i = dist[rows, pos], cand[rows, pos]
        order = np.lexsort((i, d, rows))
        starts = np.searchsorted(rows, np.arange(q))
        pick = order[starts[:, None] + np.arange(k)]
        return d[pick], i[pick], sizes

    def _search(self, Q: Matrix, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        n_q = Q.shape[0]
        dist = np.empty((n_q, k))
        idx = np.empty((n_q, k), dtype=np.intp)
        sizes = np.empty(n_q, dtype=np.intp)
        Zq = self._project(Q)  # (n_queries, n_components): small
        width = min(self.n_candidates, self._n_train)
        # the windows of all queries at once: one np.searchsorted call per component
        start = window_starts(self._sorted, Zq, width) if width < self._n_train else None
        step = self._block_size()
        for a in range(0, n_q, step):
            b = min(a + step, n_q)
            block = None if start is None else start[a:b]
            dist[a:b], idx[a:b], sizes[a:b] = self._search_block(Zq[a:b], block, k)
        return dist, idx, sizes

    def query_rows(self, Q: Matrix, k: int) -> tuple[np.ndarray, np.ndarray]:
        limit = min(self.n_candidates, self._n_train)
        if k > limit:
            raise ValueError(
                f"k={k} is larger than n_candidates={self.n_candidates}: the neighbours are "
                "chosen among the candidates of each component"
            )
        dist, idx, _ = self._search(Q, k)
        return dist, idx

    def candidate_fraction(self, Q: Any) -> float:
        """Mean size of the candidate set of the queries ``Q``, as a fraction of the indexed
        rows: the share of brute-force work done.

        Parameters
        ----------
        Q : array-like of shape (n_queries, n_features)

        Returns
        -------
        fraction : float
        """

        Q, _ = self._checked_query(Q)
        _, _, sizes = self._search(Q, 1)
        return float(sizes.mean() / self._n_train) if len(sizes) else 0.0
