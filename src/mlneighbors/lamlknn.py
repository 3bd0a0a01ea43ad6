"""LAML-kNN: locally adaptive ML-kNN, ML-kNN's statistics counted per cluster (PAKDD 2018)."""

from __future__ import annotations

from contextlib import nullcontext
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.cluster import KMeans
from sklearn.utils import check_random_state

from ._base import CountTableModel
from ._counts import count_tables, decide, label_likelihoods
from ._docstrings import fill_doc
from ._params import HasMethods, Integer, RandomState, Real

_OPENMP_ONE = None

__all__ = ["LAMLkNN"]


@fill_doc
class LAMLkNN(CountTableModel):
    """LAML-kNN: ML-kNN whose prior and likelihoods are those of the query's cluster.

    Fit clusters the training features into ``m`` clusters ``S_j`` (k-means by
    default); neighbours stay global (leave-one-out over the whole training set, as
    in ML-kNN). Per cluster: ``P(W_j) = |S_j| / n``,
    ``P(H1_l | W_j) = (s + sum_{i in S_j} Y[i, l]) / (2s + |S_j|)`` and count tables of
    the members of ``S_j`` only, giving ``P(E_r | H_l, W_j)`` as ML-kNN's.
    A query goes to its cluster ``w`` (the clusterer's ``predict``: the nearest
    centroid for k-means); ``a = P(W_w) P(H1_l | W_w) P(E_C | H1_l, W_w)``, ``b`` likewise,
    score ``a / (a + b)``, predicted when ``a >= b``.

    With ``n_clusters=1`` this is ML-kNN exactly (same scores, same predictions).

    Parameters
    ----------
    {n_neighbors_loo_parameter}
    n_clusters : int, default=5
        ``m``; at most the number of training rows.
    clusterer : object, default=None
        Any object with ``fit(X)`` and ``predict(X)`` returning integer cluster ids;
        it is cloned before fitting when it is a scikit-learn estimator, and
        ``n_clusters`` is then ignored. None means
        ``KMeans(n_clusters, init="k-means++", n_init=1, random_state=random_state)``,
        run on one OpenMP thread (see Notes).
    smoothing : float, default=1.0
    random_state : int, RandomState instance or None, default=None
        Seeds the default k-means.
    {metric_parameter}
    {backend_parameters_named}

    Attributes
    ----------
    clusterer_ : object
        The fitted clusterer.
    cluster_ids_ : ndarray of shape (n_clusters_kept,)
        The clusterer's ids of the clusters that have training members (an empty
        cluster is dropped).
    cluster_prior_ : ndarray of shape (n_clusters_kept,)
        ``P(W_j)``.
    prior_ : ndarray of shape (n_clusters_kept, n_labels)
        ``P(H1_l | W_j)``.
    cond_prob_true_, cond_prob_false_ : ndarray of shape (n_clusters_kept, n_labels, n_neighbors + 1)
        ``P(E_r | H1_l, W_j)`` and ``P(E_r | H0_l, W_j)``.
    {neighbors_attributes}

    Notes
    -----
    A query that the clusterer assigns to a cluster without training members (only
    possible with a user clusterer) is scored with the statistics of the whole
    training set, i.e. as ML-kNN.

    The default k-means makes one k-means++ run (``n_init=1``, scikit-learn's "auto" for
    this init; the paper names k-means and no restarts), and it runs on one OpenMP thread:
    with OpenMP's default busy-waiting, the worker threads of k-means compete with the
    BLAS threads and the Python main thread between iterations, which made it 10 to 50
    times slower on a 2-core machine (yeast: 1.0 s instead of 0.02 s per run); for the
    few clusters LAML-kNN uses, one thread is as fast.  Pass
    ``clusterer=KMeans(...)`` to choose otherwise.

    References
    ----------
    D. Wang, J. Wang, F. Hu, L. Li, X. Zhang. A locally adaptive multi-label
    k-nearest neighbor algorithm. PAKDD 2018, LNCS 10937, pp. 81-93.

    Examples
    --------
    >>> import numpy as np
    >>> from mlneighbors import LAMLkNN
    >>> X = np.array([[0.0], [0.1], [0.2], [0.3], [1.0], [1.1], [1.2], [1.3]])
    >>> Y = np.array([[1, 0], [1, 0], [1, 1], [1, 0], [0, 1], [0, 1], [1, 1], [0, 1]])
    >>> LAMLkNN(n_neighbors=3, n_clusters=2, random_state=0).fit(X, Y).predict([[0.05], [1.05]])
    array([[1, 0],
           [0, 1]])
    """

    _constraints: dict = {
        **CountTableModel._constraints,
        "n_clusters": [Integer(1)],
        "clusterer": [HasMethods("fit", "predict"), None],
        "smoothing": [Real(0)],
        "random_state": [RandomState(), None],
    }

    def __init__(
        self,
        n_neighbors: int = 10,
        *,
        n_clusters: int = 5,
        clusterer: Any = None,
        smoothing: float = 1.0,
        random_state: Any = None,
        metric: str = "euclidean",
        backend: Any = "exact",
        backend_params: dict | None = None,
        n_jobs: int | None = None,
    ) -> None:
        self.n_neighbors = n_neighbors
        self.n_clusters = n_clusters
        self.clusterer = clusterer
        self.smoothing = smoothing
        self.random_state = random_state
        self.metric = metric
        self.backend = backend
        self.backend_params = backend_params
        self.n_jobs = n_jobs

    #: partial_fit and forget refit on the rows now: its clusters are learnt from all rows at once
    update_rule = "refit"

    def _check_params(self, n_samples: int) -> None:
        if self.clusterer is None and self.n_clusters > n_samples:
            raise ValueError(
                f"n_clusters={self.n_clusters} must be at most the number of training rows "
                f"({n_samples})"
            )

    def _make_clusterer(self) -> Any:
        if self.clusterer is None:
            return KMeans(
                n_clusters=self.n_clusters,
                init="k-means++",
                n_init=1,
                random_state=check_random_state(self.random_state),
            )
        try:
            return clone(self.clusterer)
        except TypeError:  # not a scikit-learn estimator: used as given
            return self.clusterer

    def _threads(self) -> Any:
        """One OpenMP thread for the default k-means (see Notes); nothing for a user's clusterer."""
        if self.clusterer is not None:
            return nullcontext()
        global _OPENMP_ONE
        if _OPENMP_ONE is None:
            from threadpoolctl import ThreadpoolController

            _OPENMP_ONE = ThreadpoolController()  # scanning the loaded libraries: once
        return _OPENMP_ONE.limit(limits=1, user_api="openmp")

    def _fit_labels(self, X: Any, Y: Any) -> None:
        s = float(self.smoothing)
        n, L = Y.shape
        k = self.n_neighbors_
        if self.clusterer is None and self.n_clusters == 1:
            self.clusterer_ = None  # one cluster: k-means has nothing to do
            assigned = np.zeros(n, dtype=np.intp)
        else:
            rows = X.astype(np.float64, copy=False)  # the clusterer sees float64 rows (float32 given too)
            with self._threads():
                self.clusterer_ = self._make_clusterer().fit(rows)
                assigned = np.asarray(self.clusterer_.predict(rows)).ravel()
            del rows
        self.cluster_ids_, member = np.unique(assigned, return_inverse=True)
        member = member.ravel()
        m = len(self.cluster_ids_)
        sizes = np.bincount(member, minlength=m)
        self.cluster_prior_ = sizes / n
        # (cluster x row) membership matrix times Y: positives per cluster and label
        onehot = sp.csr_matrix(
            (np.ones(n, dtype=np.int64), member, np.arange(n + 1)), shape=(n, m)
        )
        positives = onehot.T @ Y.astype(np.int64)
        positives = positives.toarray() if sp.issparse(positives) else np.asarray(positives, dtype=np.int64)
        self.prior_ = (s + positives) / (2 * s + sizes[:, None])
        _, C = self._loo_counts()
        c1, c0 = count_tables(C, Y, k, groups=member, n_groups=m)
        self.cond_prob_true_ = label_likelihoods(c1, s)
        self.cond_prob_false_ = label_likelihoods(c0, s)
        # the whole training set's statistics, for queries in a cluster with no members
        glob1, glob0 = c1.sum(axis=0), c0.sum(axis=0)
        g1 = (s + np.asarray(Y.sum(axis=0, dtype=np.int64)).ravel()) / (2 * s + n)
        glike1, glike0 = label_likelihoods(glob1, s), label_likelihoods(glob0, s)
        self._global = (g1, glike1, glike0)
        # one table per cluster and one for the whole set (the last group)
        pw = self.cluster_prior_[:, None]
        a = np.concatenate([((pw * self.prior_)[:, :, None] * self.cond_prob_true_), (g1[:, None] * glike1)[None]])
        b = np.concatenate([((pw * (1.0 - self.prior_))[:, :, None] * self.cond_prob_false_),
                            ((1.0 - g1)[:, None] * glike0)[None]])
        self._set_tables(*decide(a, b))

    def _groups(self, X: Any) -> np.ndarray | None:
        """The query's cluster (the clusterer's ``predict``); the whole set's group for a
        cluster without training members."""
        if self.clusterer_ is None:
            return None
        with self._threads():
            ids = np.asarray(self.clusterer_.predict(X.astype(np.float64, copy=False))).ravel()
        pos = np.searchsorted(self.cluster_ids_, ids).clip(max=len(self.cluster_ids_) - 1)
        known = self.cluster_ids_[pos] == ids
        return np.where(known, pos, len(self.cluster_ids_))
