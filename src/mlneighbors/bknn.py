"""BKNN: class-balanced k-nearest neighbours with learned per-label thresholds (paper 000).

Two kernels are public because they are the method's two formulas and the tests hold
loop twins against them: :func:`balanced_scores` (the decision score ``f`` from the
per-label neighbour distances, in log space) and :func:`learn_thresholds` (the
adaptive decision boundary: one F-alpha-optimal threshold per label, O(n log n)).

How the per-label neighbours are searched (measured, ``benchmarks/bknn.py``)
----------------------------------------------------------------------------
BKNN needs, for every query and every label, the ``b`` nearest training rows *among
the members of that label*.  Two designs give the same distances:

- **global search with masking** (used with ``backend="exact"``): one distance block
  per block of queries (one GEMM), then, for every label at once, the ``b`` smallest
  entries among the label's member columns.  Labels are grouped by their number of
  members into a few size classes (four per octave: at most 25 % padding); each
  class is one ``np.take`` of the member columns and one ``np.partition`` of the
  padded rows.  A loop runs over those size classes (about 4 log2(n) of them, each
  handling many labels), never over labels or instances.
- **one index per label** (used with any other ``backend``): label ``l``'s members go
  into their own index, queried for ``b`` neighbours (``b + 1`` during fit, to drop
  the row itself).  This is a loop over labels; it is kept because an approximate
  index answers top-k queries only, so masking a global search is impossible there.

Train (leave-one-out) + test queries, b = 5, standard splits, 2-core shared machine,
best of 7 interleaved repeats in one run::

    dataset   n_train     d    L   masked   per-label (ExactIndex)   ratio
    emotions      391    72    6   0.008 s  0.074 s                   9.7
    yeast        1500   103   14   0.331 s  0.515 s                   1.6
    enron        1123  1001   53   0.103 s  0.906 s                   8.8
    corel5k      4500   499  374   0.820 s  6.860 s                   8.4

Over several runs on the (busy) machine the ratios moved (yeast 1.1 to 5.3, whose 14
labels are large and fall in 11 size classes) but the masked search was never the
slower, so it is the default (``backend="exact"``).
"""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any, Callable

import numpy as np
import scipy.sparse as sp
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from ._base import KNeighborsMultilabelBase

__all__ = ["BKNN", "balanced_scores", "learn_thresholds"]

#: bytes of temporaries one block of queries may use in the masked search (16 MiB: the
#: distance block and its gathered columns stay near the cache; measured best of 4..128 MiB)
_WORKING_MEMORY = 1 << 24
#: bytes of the output block of the per-label search (each index blocks its own queries)
_PER_LABEL_MEMORY = 1 << 27

#: the threshold given to a label whose F-alpha is best when every training row is
#: predicted: below BKNN's lowest possible score (f >= -1), so the label is always predicted
_PREDICT_ALL = -2.0


def balanced_scores(sq_dist: np.ndarray, sigma: float) -> np.ndarray:
    """BKNN decision scores ``f`` from the squared distances to each label's neighbours.

    ``W = exp(-d^2 / (2 sigma))``, ``s_l = sum of W over the label's b neighbours``,
    ``sbar = mean over labels of s_l``, ``f_l = (s_l - sbar) / sbar``.

    Computed in log space: every exponent of a query is shifted by the query's
    largest one (its nearest neighbour over all labels), which multiplies every
    ``s_l`` and ``sbar`` of that query by the same factor and leaves ``f`` unchanged.
    The shifted nearest term is ``exp(0) = 1``, so ``sbar >= 1 / n_labels`` and the
    ratio is never 0/0, however large the distances (with d ~ 1000 every unshifted
    ``W`` underflows to 0 in float64).  A term whose weight is below 1e-308 of the
    nearest one underflows to 0, which changes ``f`` by less than that relative amount.

    Parameters
    ----------
    sq_dist : ndarray of shape (n_queries, n_labels, b)
        Squared distances; ``inf`` where a label has fewer than ``b`` members.
    sigma : float
        Bandwidth, ``> 0``.

    Returns
    -------
    f : ndarray of shape (n_queries, n_labels)
        In ``[-1, n_labels - 1]``.  A label with no neighbour at all has ``s_l = 0`` and
        ``f_l = -1``.  A query with no neighbour in any label (possible only during
        leave-one-out fitting, or when no label has a member) gets ``f = 0`` for every
        label: all labels are equally (un)supported.
    """
    q, n_labels, _ = sq_dist.shape
    f = np.zeros((q, n_labels), dtype=np.float64)
    if q == 0 or n_labels == 0:
        return f
    nearest = sq_dist.reshape(q, -1).min(axis=1)
    ok = np.isfinite(nearest)
    if not ok.any():
        return f
    d2 = sq_dist[ok]
    weights = np.exp((nearest[ok, None, None] - d2) * (0.5 / sigma))  # exp(-inf) = 0
    s = weights.sum(axis=2)
    sbar = s.mean(axis=1, keepdims=True)
    f[ok] = s / sbar - 1.0
    return f


def learn_thresholds(
    scores: np.ndarray, Y: np.ndarray, alpha: float = 0.5
) -> tuple[np.ndarray, np.ndarray]:
    """Per-label thresholds maximising F-alpha on training scores (BKNN's adaptive boundary).

    For label ``l`` and threshold ``h`` the rows with ``scores[:, l] > h`` are predicted;
    ``F_alpha = 1 / (alpha / P + (1 - alpha) / R) = TP / (alpha (TP + FP) + (1 - alpha) n_pos)``
    (0 when TP = 0).  Only the cuts between distinct score values change the prediction,
    so every column is sorted once (O(n log n)) and F is evaluated at each distinct value.

    Parameters
    ----------
    scores : ndarray of shape (n_samples, n_labels)
    Y : ndarray of shape (n_samples, n_labels)
        Binary label indicator.
    alpha : float, default=0.5
        Weight of precision, in (0, 1); 0.5 gives F1.

    Returns
    -------
    thresholds : ndarray of shape (n_labels,)
        The midpoint between the lowest predicted score and the highest unpredicted one
        (the widest margin on both sides; when the two are adjacent floats, the lower).
        Ties in F: the highest threshold (fewest predicted rows).  When predicting every
        row is best, ``min(-2, lowest score - 1)``: below every training score and, for
        BKNN's scores (``f >= -1``), below every possible score, so the label is always
        predicted.  A label with no positive row gets ``+inf`` (never predicted).
    fscores : ndarray of shape (n_labels,)
        The maximal F-alpha on the training scores (0 for a label with no positive row).

    Examples
    --------
    >>> import numpy as np
    >>> scores = np.array([[0.9], [0.8], [0.3], [0.1]])
    >>> Y = np.array([[1], [1], [0], [0]])
    >>> h, best = learn_thresholds(scores, Y)
    >>> h, best
    (array([0.55]), array([1.]))
    """
    scores = np.asarray(scores, dtype=np.float64)
    Y = np.asarray(Y).astype(bool)
    n, n_labels = scores.shape
    cols = np.arange(n_labels)
    order = np.argsort(-scores, axis=0, kind="stable")
    s = np.take_along_axis(scores, order, axis=0)  # descending
    tp = np.cumsum(np.take_along_axis(Y, order, axis=0), axis=0, dtype=np.int64)
    n_pos = Y.sum(axis=0)
    n_pred = np.arange(1, n + 1, dtype=np.float64)[:, None]
    with np.errstate(invalid="ignore", divide="ignore"):
        F = tp / (alpha * n_pred + (1.0 - alpha) * n_pos)
    # a cut is possible only after the last row of a run of equal scores
    last_of_run = np.ones((n, n_labels), dtype=bool)
    last_of_run[:-1] = s[1:] != s[:-1]
    F = np.where(last_of_run, F, -np.inf)
    j = np.argmax(F, axis=0)  # the first maximum: the highest threshold
    best = F[j, cols]
    above = s[j, cols]
    below = s[np.minimum(j + 1, n - 1), cols]
    h = below + (above - below) / 2
    h = np.where((h > below) & (h < above), h, below)
    everything = j == n - 1
    h[everything] = np.minimum(_PREDICT_ALL, s[n - 1, everything] - 1.0)
    empty = n_pos == 0
    h[empty] = np.inf
    best[empty] = 0.0
    return h, best


def _size_classes(Y: np.ndarray, b: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Labels grouped by padded member count, with their padded member-row matrices.

    A label with ``n_l <= b`` members is padded to ``b``; a larger one to the next value
    ``m * 2**e`` with ``m`` in 4..7 (four sizes per octave, at most 25 % padding).  The
    padding entry is ``n`` (a column of ``inf`` distances appended to every block).
    """
    n, n_labels = Y.shape
    counts = Y.sum(axis=0).astype(np.int64)
    step = 2 ** np.maximum(np.floor(np.log2(np.maximum(counts, 1))).astype(np.int64) - 2, 0)
    padded = np.where(counts <= b, b, -(-counts // step) * step)
    Yc = sp.csc_matrix(Y)  # column l's member rows: indices[indptr[l]:indptr[l + 1]]
    classes = []
    for size in np.unique(padded):  # a few dozen sizes at most, not one per label
        labels = np.flatnonzero(padded == size)
        lens = counts[labels]
        members = np.full((len(labels), size), n, dtype=np.intp)
        filled = np.arange(size) < lens[:, None]  # row-major: label by label, in order
        offsets = np.repeat(Yc.indptr[labels] - (np.cumsum(lens) - lens), lens)
        members[filled] = Yc.indices[offsets + np.arange(lens.sum())]
        classes.append((labels, members))
    return classes


def _normalize(X: Any) -> Any:
    """Rows divided by their L2 norm; zero rows stay zero (the engine's cosine convention)."""
    if sp.issparse(X):
        norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
        norms[norms == 0] = 1.0
        return sp.csr_matrix(sp.diags(1.0 / norms) @ X)
    norms = np.sqrt((X * X).sum(axis=1))
    norms[norms == 0] = 1.0
    return X / norms[:, None]


class _MaskedSearch:
    """Squared distances to the b nearest members of every label, from one global
    distance block per query block (see the module docstring)."""

    def __init__(self, X: Any, Y: np.ndarray, b: int, metric: str) -> None:
        self.n, self.n_labels = Y.shape
        self.b = b
        self.metric = metric
        self.sparse = sp.issparse(X)
        if metric == "cosine":
            X = _normalize(X)
            self.mean = None
        elif self.sparse:
            self.mean = None
        else:
            # centring removes the cancellation of ||q||^2 - 2 q.x + ||x||^2 for data
            # far from the origin; it changes no distance
            self.mean = X.mean(axis=0)
            X = X - self.mean
        self.X = sp.csr_matrix(X) if self.sparse else np.ascontiguousarray(X)
        self.sq_norms = None
        if metric == "euclidean":
            if self.sparse:
                self.sq_norms = np.asarray(self.X.multiply(self.X).sum(axis=1)).ravel()
            else:
                self.sq_norms = (self.X * self.X).sum(axis=1)
        self.classes = _size_classes(Y, b)
        gathered = sum(m.size for _, m in self.classes)
        # distance row + gathered member columns and their partition + output
        self.row_bytes = 8 * (self.n + 1 + 2 * gathered + 2 * self.n_labels * b) + 64

    def block_size(self) -> int:
        return max(1, _WORKING_MEMORY // self.row_bytes)

    def sq_distances(self, Q: Any, self_rows: np.ndarray | None = None) -> np.ndarray:
        """(q, n_labels, b) squared distances, ``inf`` padded; ``self_rows`` (training row
        of each query) are excluded by index (leave-one-out)."""
        q = Q.shape[0]
        Qd = Q.toarray() if sp.issparse(Q) else np.asarray(Q)
        if self.metric == "cosine":
            Qd = _normalize(Qd)
        elif self.mean is not None:
            Qd = Qd - self.mean
        D = np.empty((q, self.n + 1), dtype=np.float64)
        G = D[:, : self.n]
        if self.sparse:
            G[...] = (self.X @ Qd.T).T
        else:
            np.matmul(Qd, self.X.T, out=G)
        if self.metric == "cosine":
            np.subtract(1.0, G, out=G)
            np.clip(G, 0.0, 2.0, out=G)
            G *= G
        else:
            G *= -2.0
            G += self.sq_norms
            G += (Qd * Qd).sum(axis=1)[:, None]
            np.maximum(G, 0.0, out=G)
        D[:, self.n] = np.inf
        if self_rows is not None:
            D[np.arange(q), self_rows] = np.inf
        b = self.b
        out = np.empty((q, self.n_labels, b), dtype=np.float64)
        for labels, members in self.classes:
            picked = np.take(D, members, axis=1)  # (q, n_class_labels, size)
            size = members.shape[1]
            if size > b:
                flat = picked.reshape(-1, size)  # a fresh array: partition it in place
                flat.partition(b - 1, axis=1)
                picked = flat[:, :b].reshape(q, len(labels), b)
            out[:, labels, :] = picked
        return out


class _PerLabelSearch:
    """One index per label (for approximate or user-given backends)."""

    def __init__(self, make_index: Callable[[], Any], X: Any, Y: np.ndarray, b: int) -> None:
        self.n, self.n_labels = Y.shape
        self.b = b
        Yc = sp.csc_matrix(Y)
        self.members = np.split(Yc.indices.astype(np.intp), Yc.indptr[1:-1])
        # an approximate index answers top-k queries only, so labels cannot be masked
        # out of one global search: this loop over labels is the price of such a backend
        self.indexes = [make_index().build(X[m]) if len(m) else None for m in self.members]

    def block_size(self) -> int:
        return max(1, _PER_LABEL_MEMORY // (8 * self.n_labels * (2 * self.b + 2) + 64))

    def sq_distances(self, Q: Any, self_rows: np.ndarray | None = None) -> np.ndarray:
        q = Q.shape[0]
        b = self.b
        out = np.full((q, self.n_labels, b), np.inf)
        for label, (members, index) in enumerate(zip(self.members, self.indexes)):
            if index is None:
                continue
            extra = 1 if self_rows is not None else 0
            k = min(b + extra, len(members))
            dist, idx = index.query(Q, k)
            dist = np.asarray(dist, dtype=np.float64)
            keep = np.ones_like(dist, dtype=bool)
            if self_rows is not None:
                keep = np.asarray(members)[idx] != self_rows[:, None]
                keep &= np.cumsum(keep, axis=1) <= b
            d2 = np.where(keep, dist * dist, np.inf)
            d2.sort(axis=1)  # the dropped entries (inf) go last
            m = min(b, k)
            out[:, label, :m] = d2[:, :m]
        return out


class BKNN(KNeighborsMultilabelBase):
    """Class-balanced k-nearest neighbours (BKNN) with learned per-label thresholds.

    For a query ``x`` and every label ``l``, the ``b`` nearest training instances among
    those carrying ``l`` give ``s_l(x) = sum exp(-||x - z||^2 / (2 sigma))``; with
    ``sbar`` the mean of ``s_l`` over labels, the decision score is
    ``f_l = (s_l - sbar) / sbar``.  Label ``l`` is predicted when ``f_l > h_l``, the
    threshold ``h_l`` maximising F-alpha on the leave-one-out scores of the training set.

    Parameters
    ----------
    n_per_label : int, default=5
        ``b``, neighbours taken in every label (the paper's setting).  A label with fewer
        members uses all of them (leave-one-out: all but the row itself).
    sigma : "auto" or float, default="auto"
        Bandwidth of ``W = exp(-d^2 / (2 sigma))`` (the paper divides by ``2 sigma``, not
        ``2 sigma^2``).  "auto": the mean, over the (row, label) pairs with the row
        carrying the label, of the squared distance from the row to its ``b``-th nearest
        other member of that label (its farthest, when fewer), so that ``W`` is about
        ``exp(-1/2)`` at the typical ``b``-th neighbour: neither all 0 nor all 1.
    alpha : float, default=0.5
        Weight of precision in ``F_alpha = 1 / (alpha / P + (1 - alpha) / R)``, in (0, 1);
        0.5 gives F1 (the paper's setting).
    metric : {"euclidean", "cosine"}, default="euclidean"
        ``d`` in ``W``; for "cosine" ``d = 1 - cos(x, z)`` (a zero row is at distance 1).
    backend : str or index object, default="exact"
        "exact": the vectorised global search with masking (the faster by measurement,
        see Notes).  Any other registered backend name (``mlneighbors.neighbors``) or an
        object with ``build(X)`` and ``query(Q, k)``: one such index per label.

    Attributes
    ----------
    sigma_ : float
        The bandwidth used.
    thresholds_ : ndarray of shape (n_labels,)
        ``h_l``; ``-2`` for a label best predicted always, ``+inf`` for a label without
        training members (never predicted).  See :func:`learn_thresholds`.
    train_fscores_ : ndarray of shape (n_labels,)
        The F-alpha each threshold reaches on the leave-one-out training scores.
    n_labels_ : int
    classes_ : ndarray
        The classes of a 1-D target; ``array([0, 1])`` (the values of every label) for a
        label indicator.
    n_features_in_ : int

    Notes
    -----
    *Log space.*  Scores are computed with the exponents shifted by each query's largest
    (see :func:`balanced_scores`): finite for any distances, where the literal formula
    gives 0/0 as soon as every ``W`` underflows (high-dimensional data, small sigma).

    *Search.*  With ``backend="exact"`` one distance block per block of queries is
    masked per label (vectorised over labels through a handful of label size classes);
    this measured 1.6x (yeast) to 9.7x (emotions) faster than one exact index per label
    (8.4x on corel5k, 374 labels), so it is the default; see the ``mlneighbors.bknn``
    module docstring and ``benchmarks/bknn.py``.  Distances
    come from ``||q||^2 - 2 q.x + ||x||^2`` on data centred at the training mean (dense)
    in float64; ties at the ``b``-th neighbour do not matter (equal distances, equal
    weights).  Leave-one-out excludes the row itself by index; its duplicates stay.

    *Choices the paper leaves open.*  ``sbar`` averages over all labels, a label without
    members included (its ``s_l = 0``, ``f_l = -1``).  A query with no neighbour in any
    label gets ``f = 0``.  Thresholds are midpoints between consecutive distinct training
    scores; ties in F go to the higher threshold; see :func:`learn_thresholds`.

    *Scores.*  ``decision_function`` returns the margin ``f - h`` (scikit-learn's
    multilabel contract: positive exactly where predicted; ``f`` is the margin plus
    ``thresholds_``).  ``predict_proba`` maps the margin ``m`` to
    ``0.5 + 0.5 m / (1 + |m|)``: strictly increasing (no saturation: a logistic rounds
    every margin above 37 to 1.0, which ties the top of a ranking when there are many
    labels), above 0.5 exactly when the label is predicted, 0 for a label without
    members.  For a 1-D target (classes) the classes are labels, ``predict`` returns the
    class of largest ``f`` (largest similarity mass, the balanced vote; ties: the first
    class) and ``predict_proba`` ``s_l / sum s``; the thresholds are then not used.

    References
    ----------
    H. Wang, C. Ding, H. Huang. Multi-label classification: inconsistency and class
    balanced k-nearest neighbor. AAAI 2010.

    Examples
    --------
    >>> import numpy as np
    >>> from mlneighbors import BKNN
    >>> X = np.array([[0.0], [0.1], [0.2], [1.0], [1.1], [1.2]])
    >>> Y = np.array([[1, 0], [1, 0], [1, 0], [0, 1], [0, 1], [0, 1]])
    >>> BKNN(n_per_label=2).fit(X, Y).predict([[0.05], [1.15]])
    array([[1, 0],
           [0, 1]])
    """

    _parameter_constraints: dict = {
        "n_per_label": [Interval(Integral, 1, None, closed="left")],
        "sigma": [StrOptions({"auto"}), Interval(Real, 0, None, closed="neither")],
        "alpha": [Interval(Real, 0, 1, closed="neither")],
        "metric": [StrOptions({"euclidean", "cosine"})],
        "backend": [str, HasMethods(["build", "query"])],
    }

    def __init__(
        self,
        n_per_label: int = 5,
        *,
        sigma: Any = "auto",
        alpha: float = 0.5,
        metric: str = "euclidean",
        backend: Any = "exact",
    ) -> None:
        self.n_per_label = n_per_label
        self.sigma = sigma
        self.alpha = alpha
        self.metric = metric
        self.backend = backend

    def fit(self, X: Any, y: Any) -> BKNN:
        """Fit on features ``X`` and targets ``y`` (a binary label indicator or 1-D classes).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : {array-like, sparse matrix} of shape (n_samples, n_labels) or (n_samples,)

        Returns
        -------
        self : object
        """
        self._validate_params()
        if not isinstance(self.sigma, str) and not np.isfinite(self.sigma):
            raise ValueError(f"sigma must be 'auto' or a finite number > 0, got {self.sigma!r}")
        X, Y = self._validate_training_data(X, y)
        if self._multilabel:
            # the values every label takes, as scikit-learn's multilabel classifiers expose
            # them (its checks map decision_function > 0 through classes_)
            self.classes_ = np.array([0, 1])
        self._search = self._make_search(X, Y)
        n = X.shape[0]
        sq = np.empty((n, self.n_labels_, self.n_per_label), dtype=np.float64)
        for rows in _blocks(n, self._search.block_size()):
            sq[rows] = self._search.sq_distances(X[rows], self_rows=np.arange(n)[rows])
        self.sigma_ = _auto_sigma(sq, Y) if isinstance(self.sigma, str) else float(self.sigma)
        scores = balanced_scores(sq, self.sigma_)
        self.thresholds_, self.train_fscores_ = learn_thresholds(scores, Y, self.alpha)
        return self

    def _make_search(self, X: Any, Y: np.ndarray) -> Any:
        if isinstance(self.backend, str) and self.backend == "exact":
            return _MaskedSearch(X, Y, self.n_per_label, self.metric)
        from .neighbors import resolve_backend

        resolve_backend(self.backend, self.metric)  # fail now on a bad name or metric
        return _PerLabelSearch(
            lambda: resolve_backend(self.backend, self.metric), X, Y, self.n_per_label
        )

    def _decision_scores(self, X: Any) -> np.ndarray:
        check_is_fitted(self, "thresholds_")
        X = validate_data(self, X, accept_sparse="csr", dtype=np.float64, reset=False)
        n = X.shape[0]
        f = np.empty((n, self.n_labels_), dtype=np.float64)
        for rows in _blocks(n, self._search.block_size()):
            f[rows] = balanced_scores(self._search.sq_distances(X[rows]), self.sigma_)
        return f

    def decision_function(self, X: Any) -> np.ndarray:
        """The margins ``f - thresholds_`` of shape (n_samples, n_labels): positive exactly
        where a label is predicted (scikit-learn's multilabel contract).

        The balanced scores themselves are ``decision_function(X) + thresholds_`` (for a
        label without training members the margin is ``-inf``).  For a 1-D target the
        scores ``f`` of the classes, shape (n_samples, n_classes); for two classes
        ``f[:, 1] - f[:, 0]`` of shape (n_samples,), positive when the second is predicted.
        """
        f = self._decision_scores(X)
        if not self._multilabel:
            return f[:, -1] - f[:, 0] if f.shape[1] <= 2 else f
        return f - self.thresholds_

    def _scores_and_decisions(self, X: Any) -> tuple[np.ndarray, np.ndarray]:
        f = self._decision_scores(X)
        if not self._multilabel:
            return (f + 1.0) / f.shape[1], np.zeros(f.shape, dtype=bool)
        margin = f - self.thresholds_
        never = np.isposinf(self.thresholds_)
        margin[:, never] = 0.0
        proba = 0.5 + 0.5 * margin / (1.0 + np.abs(margin))
        proba[:, never] = 0.0
        return proba, margin > 0

    def predict(self, X: Any) -> np.ndarray:
        """Predicted label indicator (n_samples, n_labels): ``f > thresholds_``; for a 1-D
        target the class of largest ``f``."""
        return super().predict(X)

    def predict_proba(self, X: Any) -> np.ndarray:
        """Scores in [0, 1] of shape (n_samples, n_labels), increasing in ``f``:
        ``0.5 + 0.5 m / (1 + |m|)`` with ``m = f - thresholds_`` (above 0.5 exactly when the
        label is predicted; 0 for a label without training members).  For a 1-D target,
        ``s_l / sum s`` of shape (n_samples, n_classes)."""
        return super().predict_proba(X)


def _blocks(n: int, size: int) -> list[slice]:
    return [slice(a, min(a + size, n)) for a in range(0, n, size)]


def _auto_sigma(sq: np.ndarray, Y: np.ndarray) -> float:
    """Mean squared distance from each row to its b-th nearest other member of each of
    its labels (the farthest available when fewer); 1.0 when that is undefined or 0."""
    finite = np.where(np.isfinite(sq), sq, -np.inf).max(axis=2)  # (n, L); -inf: none
    pairs = Y.astype(bool) & np.isfinite(finite)
    if not pairs.any():  # no label has two members: fall back to every label's b-th
        pairs = np.isfinite(finite)
    value = float(finite[pairs].mean()) if pairs.any() else 0.0
    return value if value > 0 and np.isfinite(value) else 1.0
