"""Hybrid kNN: PCA candidate search + a multiple-regression label model (paper 002)."""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any

import numpy as np
import scipy.linalg
import scipy.sparse as sp
from sklearn.decomposition import PCA
from sklearn.utils._param_validation import Interval, RealNotInt, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from ._base import KNeighborsMultilabelBase
from ._counts import membership_counts

__all__ = ["HybridKNN", "label_regression", "window_starts"]

#: a float n_components never keeps more components than this (the spec's cap)
MAX_COMPONENTS = 50
#: bytes of temporaries one block of queries may use in the candidate search
_WORKING_MEMORY = 1 << 24


def label_regression(Y: np.ndarray, ridge: float = 1e-6) -> tuple[np.ndarray, np.ndarray]:
    """Ridge regression of every label on the other labels, with intercept, all at once.

    For label ``l`` it minimises ``mean_i (Y[i, l] - a_l - sum_{m != l} B[l, m] Y[i, m])^2
    + ridge * sum_{m != l} B[l, m]^2``.  With ``A = cov(Y) + ridge * I`` (population
    covariance) and ``P = inv(A)``, the block-inverse identity gives every regression from
    one inverse: ``B[l, m] = -P[l, m] / P[l, l]`` (m != l), ``a = mean(Y) - B @ mean(Y)``.
    A constant label gets ``B[l] = 0`` and ``a_l`` = its mean; ``ridge > 0`` keeps
    collinear labels (one-hot classes, duplicated columns) defined.

    Parameters
    ----------
    Y : ndarray of shape (n_samples, n_labels)
        Binary label indicator.
    ridge : float, default=1e-6
        ``> 0``, on the scale of the label covariance (entries at most 0.25).

    Returns
    -------
    intercept : ndarray of shape (n_labels,)
    coef : ndarray of shape (n_labels, n_labels)
        ``coef[l, m]``, the weight of label ``m`` in predicting label ``l``; zero diagonal.
        A neighbour with labels ``y`` predicts ``intercept + coef @ y``.
    """
    Y = np.asarray(Y, dtype=np.float64)
    n, n_labels = Y.shape
    mean = Y.mean(axis=0)
    Yc = Y - mean
    A = Yc.T @ Yc / n + ridge * np.eye(n_labels)
    P = scipy.linalg.inv(A, check_finite=False)
    coef = -P / np.diag(P)[:, None]
    np.fill_diagonal(coef, 0.0)
    return mean - coef @ mean, coef


def _normalize(Z: np.ndarray) -> np.ndarray:
    """Rows divided by their norm, zero rows kept zero (the neighbour engine's convention)."""
    norms = np.sqrt((Z * Z).sum(axis=1))
    norms[norms == 0] = 1.0
    return Z / norms[:, None]


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


class HybridKNN(KNeighborsMultilabelBase):
    """Hybrid kNN: neighbours from a PCA candidate search, labels from a regression model.

    Fit: a label model (each label regressed on the other labels) and a PCA of the
    features, with the training rows sorted along every kept component.  Predict: on
    each component the ``n_candidates`` training rows nearest to the query along that
    axis are candidates; among their union the ``n_neighbors`` of highest cosine
    similarity to the query in the projected space are the neighbours; each neighbour
    predicts every label from its *other* labels with the label model; the average over
    the neighbours, clipped to [0, 1], is the score; a label is predicted when the score
    is ``>= threshold``.

    Parameters
    ----------
    n_neighbors : int, default=10
        ``k``, at most the number of training rows and at most ``n_candidates``.
    n_components : int, float or None, default=0.95
        Kept principal components.  A float in (0, 1): the fewest components explaining
        more than that fraction of the variance (scikit-learn's rule), at most 50; an int:
        that many (at most ``min(n_samples, n_features)``); None: all.
    n_candidates : int, default=80
        Candidates per component (the paper's ``L``, 80 in its experiments); values above
        the number of training rows mean all of them.  Must be ``>= n_neighbors`` (not
        used with ``exact_search=True``).
    label_model : {"regression", "vote"}, default="regression"
        "regression": a neighbour with labels ``y`` predicts ``label_intercept_ +
        label_coef_ @ y`` (see :func:`label_regression`).  "vote": it predicts its own
        labels (``label_coef_`` is the identity), so the score is the neighbours' mean.
    threshold : float, default=0.5
        In [0, 1]; a label is predicted when its score is ``>= threshold``.
    exact_search : bool, default=False
        True: the neighbours are the exact ``k`` nearest by cosine similarity in the full
        feature space (no PCA, no candidates) -- the paper's "Regression" column.
    ridge : float, default=1e-6
        Ridge of the label regressions, ``> 0`` (see :func:`label_regression`).

    Attributes
    ----------
    label_intercept_ : ndarray of shape (n_labels,)
    label_coef_ : ndarray of shape (n_labels, n_labels)
    components_ : ndarray of shape (n_components_, n_features)
        Principal axes (absent with ``exact_search=True``, as the next three).
    mean_ : ndarray of shape (n_features,)
        The training mean the projection subtracts.
    explained_variance_ratio_ : ndarray of shape (n_components_,)
    n_components_ : int
    n_labels_ : int
    classes_ : ndarray or None
        The classes of a 1-D target; None for a label indicator.
    n_features_in_ : int

    Notes
    -----
    *Candidate windows.*  Along one component the ``n_candidates`` nearest training rows
    are the window grown outward from the query's coordinate, the left one first on equal
    gaps; rows are sorted by (coordinate, training index); see :func:`window_starts`.
    The candidate set of a query is the union over components, so it has between
    ``n_candidates`` and ``n_components_ * n_candidates`` rows: :meth:`candidate_fraction`
    reports its mean size relative to the training set, the quantity this method exists
    to make small.

    *Cosine in the projected space.*  The PCA coordinates are centred, so the similarity
    is that of the centred data (a row at the mean has similarity 0 to everything, the
    neighbour engine's convention).  Among the candidates the neighbours are ordered by
    cosine distance ``1 - cos`` (clipped to [0, 2]), ties by lower training index, as the
    exact backend orders them: with ``n_candidates >= n_samples`` the neighbours are those
    of ``ExactIndex(metric="cosine")`` on the projected data (distances equal up to the
    rounding of the dot products).

    *Label model.*  The spec's regression of each label on the other labels is linear,
    so averaging the k neighbours' predictions equals predicting from the mean of their
    label vectors: ``score = clip(label_intercept_ + label_coef_ @ mean_y, 0, 1)``.  The
    decision compares the clipped score, so ``threshold=0`` predicts every label.  The
    work per query: ``searchsorted`` and a binary search per component, removing the
    duplicates among the ``n_components_ * n_candidates`` candidates (a membership mask,
    or a sort when the training set is much larger), one dot product per distinct
    candidate.  A loop runs over components only for ``np.searchsorted`` (one call per
    component for all the queries of a ``predict``); none over instances or labels.

    *Speed* (``benchmarks/hybrid.py``, k = 10, L = 80, test split, 2-core machine):
    on emotions (raw features, 3 components) the candidate set is 48 % of the training
    set, the neighbours are 96 % of the exact ones in the projected space, and the
    search takes 1.7x the time of exact brute force there; on yeast (50 components) the
    candidates are 93 % of the training set (recall 99 %) and the search is about 20x
    slower than brute force, whose cost per point is one fused GEMM entry while each
    candidate costs a gather.  The candidate search pays only when the training set is
    much larger than ``n_components_ * n_candidates``.

    *Scores.*  ``predict_proba`` is the clipped average itself, so it can be exactly 0 or
    1, and with ``label_model="vote"`` and an even ``k`` a score of exactly 0.5 is
    predicted (the spec's ``>=``).  scikit-learn's multilabel checks want probabilities
    strictly inside (0, 1) that round to the prediction: the defaults pass them, the
    "vote" model in general does not; the spec's scores are kept.

    For a 1-D target (classes), ``predict`` returns the class of highest score (ties: the
    first) and ``predict_proba`` the scores normalised to sum 1 (uniform where all are 0).

    References
    ----------
    P. Nedungadi, H. Haripriya. Feature and search space reduction for label-dependent
    multi-label classification.

    Examples
    --------
    >>> import numpy as np
    >>> from mlneighbors import HybridKNN
    >>> rng = np.random.default_rng(0)
    >>> X = np.vstack([rng.normal(0, 1, (20, 4)) + 3, rng.normal(0, 1, (20, 4)) - 3])
    >>> Y = np.repeat([[1, 0], [0, 1]], 20, axis=0)
    >>> model = HybridKNN(n_neighbors=3, n_candidates=5).fit(X, Y)
    >>> model.predict([[3.0, 3.0, 3.0, 3.0], [-3.0, -3.0, -3.0, -3.0]])
    array([[1, 0],
           [0, 1]])
    """

    _parameter_constraints: dict = {
        "n_neighbors": [Interval(Integral, 1, None, closed="left")],
        "n_components": [
            Interval(Integral, 1, None, closed="left"),
            Interval(RealNotInt, 0, 1, closed="neither"),
            None,
        ],
        "n_candidates": [Interval(Integral, 1, None, closed="left")],
        "label_model": [StrOptions({"regression", "vote"})],
        "threshold": [Interval(Real, 0, 1, closed="both")],
        "exact_search": ["boolean"],
        "ridge": [Interval(Real, 0, None, closed="neither")],
    }
    _needs_loo = False

    def __init__(
        self,
        n_neighbors: int = 10,
        *,
        n_components: int | float | None = 0.95,
        n_candidates: int = 80,
        label_model: str = "regression",
        threshold: float = 0.5,
        exact_search: bool = False,
        ridge: float = 1e-6,
    ) -> None:
        self.n_neighbors = n_neighbors
        self.n_components = n_components
        self.n_candidates = n_candidates
        self.label_model = label_model
        self.threshold = threshold
        self.exact_search = exact_search
        self.ridge = ridge

    # -- fit ---------------------------------------------------------------------------

    def fit(self, X: Any, y: Any) -> HybridKNN:
        """Fit the label model and the PCA candidate index.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : {array-like, sparse matrix} of shape (n_samples, n_labels) or (n_samples,)
            A binary label indicator, or 1-D class labels.

        Returns
        -------
        self : object
        """
        self._validate_params()
        if not np.isfinite(self.ridge):
            raise ValueError(f"ridge must be a finite number > 0, got {self.ridge!r}")
        X, Y = self._validate_training_data(X, y)
        n, d = X.shape
        k = self.n_neighbors
        if k > n:
            raise ValueError(
                f"n_neighbors={k} must be at most the number of training rows ({n})"
            )
        if self.n_candidates < k and not self.exact_search:
            raise ValueError(
                f"n_candidates={self.n_candidates} must be >= n_neighbors={k}: the "
                "neighbours are chosen among the candidates"
            )
        if self.label_model == "regression":
            self.label_intercept_, self.label_coef_ = label_regression(Y, self.ridge)
        else:
            self.label_intercept_ = np.zeros(Y.shape[1])
            self.label_coef_ = np.eye(Y.shape[1])
        self._Y = Y
        self._n_train = n
        if self.exact_search:
            from .neighbors import resolve_backend

            self._index = resolve_backend("exact", "cosine").build(X)
            return self
        if isinstance(self.n_components, Integral) and self.n_components > min(n, d):
            raise ValueError(
                f"n_components={self.n_components} must be at most min(n_samples, "
                f"n_features) = {min(n, d)}"
            )
        solver = "covariance_eigh" if sp.issparse(X) else "full"
        pca = PCA(n_components=None, svd_solver=solver).fit(X)
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
        self._Zn = np.vstack([_normalize(Z), np.zeros((1, c))])  # row n: the padding
        order = np.argsort(Z, axis=0, kind="stable").T  # ties: lower training index first
        self._order = np.ascontiguousarray(order)
        self._sorted = np.take_along_axis(Z.T, order, axis=1)
        return self

    def _project(self, X: Any) -> np.ndarray:
        W = self.components_.T
        if sp.issparse(X):
            return np.asarray(X @ W) - self.mean_ @ W
        return (X - self.mean_) @ W

    # -- neighbours --------------------------------------------------------------------

    def _block_size(self) -> int:
        c = self.n_components_
        width = min(self.n_candidates, self._n_train)
        distinct = min(self._n_train, c * width)
        per_query = 8 * (4 * c * width + distinct * (c + 6)) + 2 * self._n_train + 64
        return max(1, _WORKING_MEMORY // per_query)

    def _search_block(
        self, Zq: np.ndarray, start: np.ndarray | None, k: int
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(dist, idx, candidate-set sizes) of a block of projected queries, given their
        window starts (None: every training row is a candidate)."""
        n = self._n_train
        q = Zq.shape[0]
        Qn = _normalize(Zq)
        if start is None:  # every training row is a candidate: one GEMM
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
                rows, cols = np.nonzero(seen)  # by row, then by training index
            else:
                cand = np.sort(cand, axis=1)
                new = np.ones(cand.shape, dtype=bool)
                new[:, 1:] = cand[:, 1:] != cand[:, :-1]
                rows, pos = np.nonzero(new)
                cols = cand[rows, pos]
            sizes = np.bincount(rows, minlength=q)
            # the distinct candidates of each row, left-aligned, padded with row n (zero)
            first = np.cumsum(sizes) - sizes
            cand = np.full((q, int(sizes.max())), n, dtype=np.intp)
            cand[rows, np.arange(len(rows)) - first[rows]] = cols
            sim = np.einsum("qmc,qc->qm", self._Zn[cand], Qn)  # one dot product each
        dist = np.clip(1.0 - sim, 0.0, 2.0)
        dist[cand == n] = np.inf
        # the k smallest (distance, index): every entry within the k-th distance, sorted
        kth = np.partition(dist, k - 1, axis=1)[:, k - 1 : k]
        rows, pos = np.nonzero(dist <= kth)
        d, i = dist[rows, pos], cand[rows, pos]
        order = np.lexsort((i, d, rows))
        starts = np.searchsorted(rows, np.arange(q))
        pick = order[starts[:, None] + np.arange(k)]
        return d[pick], i[pick], sizes

    def _kneighbors(self, X: Any, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Validated ``X`` -> (dist, idx, candidate-set sizes)."""
        n_q = X.shape[0]
        if self.exact_search:
            dist, idx = self._index.query(X, k)
            return dist, idx, np.full(n_q, self._n_train)
        dist = np.empty((n_q, k))
        idx = np.empty((n_q, k), dtype=np.intp)
        sizes = np.empty(n_q, dtype=np.intp)
        Zq = self._project(X)  # (n_queries, n_components): small
        width = min(self.n_candidates, self._n_train)
        # the windows of all queries at once: one np.searchsorted call per component
        start = window_starts(self._sorted, Zq, width) if width < self._n_train else None
        step = self._block_size()
        for a in range(0, n_q, step):
            b = min(a + step, n_q)
            block = None if start is None else start[a:b]
            dist[a:b], idx[a:b], sizes[a:b] = self._search_block(Zq[a:b], block, k)
        return dist, idx, sizes

    def _checked(self, X: Any) -> Any:
        check_is_fitted(self, "label_coef_")
        return validate_data(self, X, accept_sparse="csr", dtype=np.float64, reset=False)

    def kneighbors(
        self, X: Any, n_neighbors: int | None = None, return_distance: bool = True
    ) -> Any:
        """The neighbours the model uses: cosine distances ``1 - cos`` and training rows.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_queries, n_features)
        n_neighbors : int, default=None
            At most ``n_candidates`` and the number of training rows; None: ``n_neighbors``.
        return_distance : bool, default=True

        Returns
        -------
        dist : ndarray of shape (n_queries, n_neighbors)
            Ascending; in the projected space (in the feature space with ``exact_search``).
        idx : ndarray of shape (n_queries, n_neighbors)
        """
        X = self._checked(X)
        k = self.n_neighbors if n_neighbors is None else n_neighbors
        limit = self._n_train if self.exact_search else min(self.n_candidates, self._n_train)
        if isinstance(k, (bool, np.bool_)) or not isinstance(k, Integral) or not 1 <= k <= limit:
            raise ValueError(f"n_neighbors must be an integer in [1, {limit}], got {k!r}")
        dist, idx, _ = self._kneighbors(X, int(k))
        return (dist, idx) if return_distance else idx

    def candidate_fraction(self, X: Any) -> float:
        """Mean size of the candidate set of the queries ``X``, as a fraction of the
        training set (1.0 with ``exact_search``): the share of brute-force work done."""
        X = self._checked(X)
        _, _, sizes = self._kneighbors(X, self.n_neighbors)
        return float(sizes.mean() / self._n_train) if len(sizes) else 0.0

    # -- predict -----------------------------------------------------------------------

    def _scores_and_decisions(self, X: Any) -> tuple[np.ndarray, np.ndarray]:
        X = self._checked(X)
        k = self.n_neighbors
        _, idx, _ = self._kneighbors(X, k)
        mean_y = membership_counts(idx, self._Y) / k
        scores = self.label_intercept_ + mean_y @ self.label_coef_.T
        np.clip(scores, 0.0, 1.0, out=scores)
        return scores, scores >= self.threshold

    def predict_proba(self, X: Any) -> np.ndarray:
        """Scores of shape (n_samples, n_labels) in [0, 1]; for a 1-D target, class
        probabilities (n_samples, n_classes) summing to 1 (uniform where every score is 0)."""
        scores, _ = self._scores_and_decisions(X)
        if self._multilabel:
            return scores
        total = scores.sum(axis=1, keepdims=True)
        out = np.full_like(scores, 1.0 / scores.shape[1])
        np.divide(scores, total, out=out, where=total > 0)
        return out
