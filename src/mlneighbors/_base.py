"""The shared estimator base: validation, binarised targets, the index, neighbours, counts.

Every model of the package is a thin subclass.  The base validates the data, builds the
index that ``backend=`` names (``mlneighbors.neighbors``) and answers every question about
neighbours: :meth:`~KNeighborsMultilabelBase.kneighbors` (``X=None``: the leave-one-out
neighbours of the training rows, as scikit-learn's ``kneighbors``), which the models use to
learn their label statistics (``_fit_labels``) and to score a block of queries
(``_score_block``).  Every index comes from ``_make_index`` (the ``backend=`` and
``backend_params=`` of the model), so a backend registered in ``mlneighbors.neighbors`` reaches
every model.  A model whose neighbours are not one global top-k overrides ``_build_index``:
BKNN wraps that index in a :class:`~mlneighbors.neighbors.LabelRestrictedIndex` and queries it
itself for the nearest members of every label.
"""

from __future__ import annotations

import warnings
from numbers import Integral
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, MultiOutputMixin
from sklearn.preprocessing import LabelBinarizer
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import check_is_fitted, validate_data

from ._counts import count_matrix, row_blocks
from ._dask import is_dask_array, lazy_on_dask, share_clients, validate_dask_training_data, without_clients
from .exceptions import LabelWarning, NeighborsWarning

__all__ = [
    "CountTableModel",
    "KNeighborsMultilabelBase",
    "VersionedState",
    "in_fit_order",
    "target_classes",
    "validate_training_data",
]


class VersionedState:
    """Saved models remember the mlneighbors version that wrote them (pickle, joblib, skops).

    Loading a model written by another version warns with both versions
    (:class:`~mlneighbors.exceptions.VersionWarning`); scikit-learn does the same for its own.
    """

    def __getstate__(self) -> dict:
        from . import __version__

        # a copy: object.__getstate__ (which scikit-learn's defers to) returns the live
        # __dict__ itself, and saving a model must not change it
        state = dict(super().__getstate__())
        state["_mlneighbors_version"] = __version__
        return state

    def __setstate__(self, state: dict) -> None:
        from . import __version__
        from .exceptions import VersionWarning

        saved = state.pop("_mlneighbors_version", "unknown (before 0.1.0)")
        if saved != __version__:
            warnings.warn(
                f"this {type(self).__name__} was saved by mlneighbors {saved} and is loaded by "
                f"mlneighbors {__version__}: it may fail or predict differently; refit it with {__version__}",
                VersionWarning,
                stacklevel=2,
            )
        super().__setstate__(state)


class KNeighborsMultilabelBase(VersionedState, MultiOutputMixin, ClassifierMixin, BaseEstimator):
    """Base class of the lazy multi-label classifiers.

    Targets
        A 2-D binary indicator ``Y`` of shape (n_samples, n_labels), dense or sparse,
        is a multi-label problem: ``predict`` returns an (n, n_labels) array of Y's
        dtype and ``predict_proba`` an (n, n_labels) array of scores; ``classes_`` is a
        list of ``n_labels`` arrays ``[0, 1]`` (scikit-learn's multi-output convention).
        A 1-D ``y`` (binary or multiclass), or a column vector that is not a 0/1
        indicator, is binarised one column per class as scikit-learn's one-vs-rest
        does (``classes_`` is set); ``predict`` returns the class of highest score
        (ties: the first class) and ``predict_proba`` the scores normalised to sum
        to 1 over the classes.

    Neighbours
        ``n_neighbors_`` (the ``k`` actually used) is ``n_neighbors``, clipped with a
        :class:`~mlneighbors.exceptions.NeighborsWarning` to ``n_samples - 1``
        (leave-one-out models) or ``n_samples`` (the others) when the training set is
        smaller, as scikit-learn's ``LocalOutlierFactor`` does.  The index is built by
        ``fit`` and is not saved with the model (pickle, joblib, skops): it is rebuilt from
        the training rows on first use, so a saved model holds plain arrays only.

    Subclasses set ``_needs_loo`` (whether fit needs the leave-one-out counts of the
    training set) and implement ``_fit_labels(Y, X)`` and ``_score_block(neighbors, X)``;
    they read ``k`` from ``self.n_neighbors_``.  A model whose neighbours are not one
    global top-k (BKNN) overrides ``_build_index``.
    """

    _parameter_constraints: dict = {
        "n_neighbors": [Interval(Integral, 1, None, closed="left")],
        "metric": [StrOptions({"euclidean", "cosine"})],
        "backend": [str, HasMethods(["build", "query"])],
        "backend_params": [dict, None],
        "n_jobs": [Integral, None],
    }

    #: whether ``fit`` needs the leave-one-out membership counts of the training rows
    _needs_loo: bool = True

    # -- fit ---------------------------------------------------------------------------

    def fit(self, X: Any, y: Any) -> KNeighborsMultilabelBase:
        """Fit the model on features ``X`` and targets ``y``.

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
        X, Y = self._validate_training_data(X, y)
        n = X.shape[0]
        self._set_n_neighbors(n)
        self._check_params(n)
        self._fit_X = X
        self._Y = Y
        self.__dict__.pop("_recall", None)
        self._index = self._build_index(X, Y)
        self._describe_index(self._index)
        self._fit_labels(Y, X)
        return self

    def _describe_index(self, index: Any) -> None:
        """``backend_`` and, where the index knows it, the recall of its search."""
        self.backend_ = str(getattr(index, "backend_", None) or getattr(index, "name", None) or type(index).__name__)
        if getattr(index, "exact", False):
            self._recall = 1.0
        elif getattr(index, "recall_", None) is not None:
            self._recall = float(index.recall_)

    @property
    def recall_(self) -> float:
        """Estimated recall@k of the neighbour search on the training rows (1.0 when exact).

        The tie-aware recall of the leave-one-out neighbours of a seeded sample of 1,000
        training rows (all when fewer) against their exact neighbours: measured when the index
        is built by the approximate backends (``hnswlib``, ``faiss-hnsw``, ``faiss-ivf``,
        ``pynndescent``, ``"auto"`` when it picks one of them; see their ``recall_``), and
        on first access for any other approximate index (a user's object, HybridKNN's
        ``"pca-window"``).  Its standard error is at most ``sqrt(r (1 - r) / 1000)``.
        """
        check_is_fitted(self, "_fit_X")
        if "_recall" not in self.__dict__:
            from .neighbors._recall import estimate_recall

            self._recall = estimate_recall(self._get_index(), self._fit_X, self.n_neighbors_, self._index_metric())
        return self._recall

    def _set_n_neighbors(self, n: int) -> None:
        k = self.n_neighbors
        limit = n - 1 if self._needs_loo else n
        if k > limit:
            warnings.warn(
                f"n_neighbors={k} is more than the {limit} neighbours that {n} training rows "
                + ("leave (leave-one-out excludes the row itself)" if self._needs_loo else "have")
                + f"; using n_neighbors_={limit}",
                NeighborsWarning,
                stacklevel=3,
            )
        self.n_neighbors_ = min(k, limit)

    def _validate_training_data(self, X: Any, y: Any) -> tuple[Any, np.ndarray]:
        from .neighbors import check_scale

        X, Y, classes, y_dtype = validate_training_data(self, X, y)
        if not is_dask_array(X):  # a dask array's blocks are checked on the workers (check_data)
            check_scale(X, "X")  # every model's search, whatever the backend
        self._multilabel = classes is None
        if self._multilabel:
            self._y_dtype = np.dtype(y_dtype).str  # a string: saved models hold no dtype objects
        self.classes_ = target_classes(classes, y_dtype, Y.shape[1])
        self.n_labels_ = Y.shape[1]
        empty = np.asarray(Y.sum(axis=0)).ravel() == 0
        if empty.any():
            warnings.warn(
                f"{int(empty.sum())} label(s) have no positive training example "
                f"(columns {np.flatnonzero(empty)[:10].tolist()}); they are never predicted",
                LabelWarning,
                stacklevel=3,
            )
        return X, Y

    def _index_metric(self) -> str:
        """The distance the index is asked for (the ``metric`` parameter)."""
        return self.metric

    def _make_index(self) -> Any:
        """The unbuilt index that ``backend=`` and ``backend_params=`` name."""
        from .neighbors import resolve_backend

        index = resolve_backend(self.backend, self._index_metric(), self.backend_params)
        accepted = getattr(index, "get_params", dict)()
        if self.n_jobs is not None and "n_jobs" in accepted:
            index.set_params(n_jobs=self.n_jobs)
        k = getattr(self, "n_neighbors_", None)
        if k is not None and "recall_k" in accepted and "recall_k" not in (self.backend_params or {}):
            index.set_params(recall_k=int(k))  # the recall an approximate index reports is at this k
        return index

    def _build_index(self, X: Any, Y: np.ndarray) -> Any:
        """The built index of the training rows (the labels are for label-restricted searches)."""
        return self._make_index().build(X)

    def _get_index(self) -> Any:
        """The built index; rebuilt from the training rows after a model was loaded."""
        index = self.__dict__.get("_index")
        if index is None:
            index = self._index = self._build_index(self._fit_X, self._Y)
        return index

    def __getstate__(self) -> dict:
        # a saved model holds plain arrays: no index (library handles, device tensors, a
        # float32 copy of X); it is rebuilt from _fit_X on first use.  Saved with
        # include_index=True, an approximate index is kept as data (neighbors._saved).  No Dask
        # client either (a live connection): a copy uses the current client, or the one it is given
        from .neighbors._saved import export_index, is_including

        state = super().__getstate__()
        index = state.pop("_index", None)
        if index is not None and is_including():
            saved = export_index(index)
            if saved is not None:
                state["_saved_index"] = saved
        if "backend_params" in state:
            state["backend_params"] = without_clients(state["backend_params"])
        return state

    def __setstate__(self, state: dict) -> None:
        state = dict(state)
        saved = state.pop("_saved_index", None)
        super().__setstate__(state)
        if saved is not None:  # saved with include_index=True: the index as it was, no build
            from .neighbors._saved import restore_index

            self._index = restore_index(self._make_index(), saved, self._fit_X)

    def __sklearn_clone__(self) -> Any:
        # a Dask client in backend_params cannot be deep-copied: the clone shares it
        params = getattr(self, "backend_params", None)
        light = without_clients(params)
        if light is params:
            return super().__sklearn_clone__()
        stand_in = object.__new__(type(self))
        stand_in.__dict__.update(self.__dict__, backend_params=light)
        clone = super(KNeighborsMultilabelBase, stand_in).__sklearn_clone__()
        clone.backend_params = share_clients(params, clone.backend_params)
        return clone

    def _check_params(self, n_samples: int) -> None:
        """Checks of the subclass parameters that need the data (after n_neighbors)."""

    def _fit_labels(self, Y: np.ndarray, X: Any) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    # -- neighbours ----------------------------------------------------------------------

    def _validate_queries(self, X: Any) -> Any:
        from .neighbors import check_scale

        check_is_fitted(self, "_fit_X")
        X = validate_data(self, in_fit_order(self, X), accept_sparse="csr", dtype=np.float64, reset=False)
        check_scale(X, "X")
        return X

    def _check_k(self, n_neighbors: Any, loo: bool) -> int:
        if n_neighbors is None:
            return self.n_neighbors_
        n = self._fit_X.shape[0]
        limit = n - 1 if loo else n
        if isinstance(n_neighbors, (bool, np.bool_)) or not isinstance(n_neighbors, Integral) or not (
            1 <= n_neighbors <= limit
        ):
            raise ValueError(
                f"n_neighbors must be an integer in [1, {limit}] "
                f"({'leave-one-out neighbours of ' if loo else ''}{n} training rows), got {n_neighbors!r}"
            )
        return int(n_neighbors)

    def _query(self, X: Any, k: int) -> tuple[np.ndarray, np.ndarray]:
        """(dist, idx) of validated queries ``X`` (None: leave-one-out on the training rows)."""
        from .neighbors import check_result, loo_kneighbors
        from .neighbors._base import search

        index = self._get_index()
        if X is None:
            return loo_kneighbors(index, self._fit_X, k, validated=True)
        dist, idx = search(index, X, k, validated=True)
        return check_result(dist, idx, X.shape[0], k, self._fit_X.shape[0], self.backend)

    def kneighbors(self, X: Any = None, n_neighbors: int | None = None, return_distance: bool = True) -> Any:
        """The neighbours the model uses, as scikit-learn's ``kneighbors``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_queries, n_features), default=None
            Queries.  None: the leave-one-out neighbours of the training rows (each row's
            own index left out, its duplicates kept), which is what ``fit`` learns from.
        n_neighbors : int, default=None
            Number of neighbours; None: ``n_neighbors_``.
        return_distance : bool, default=True

        Returns
        -------
        dist : ndarray of shape (n_queries, n_neighbors)
            Distances of the backend's metric, ascending (only with ``return_distance``).
        idx : ndarray of shape (n_queries, n_neighbors)
            Training row numbers; at equal distance the lower row first.
        """
        check_is_fitted(self, "_fit_X")
        k = self._check_k(n_neighbors, loo=X is None)
        dist, idx = self._query(None if X is None else self._validate_queries(X), k)
        return (dist, idx) if return_distance else idx

    def _loo_counts(self) -> tuple[np.ndarray, Any]:
        """Leave-one-out neighbours of the training rows and their membership counts.

        Returns ``(neighbors, C)``: ``neighbors`` (n, k) row numbers, ``C`` (n, L) int32,
        CSR when the labels are sparse.
        """
        _, neighbors = self._query(None, self.n_neighbors_)
        return neighbors, count_matrix(neighbors, self._Y)

    def _dense_labels(self, what: str, cells: int, itemsize: int = 8) -> np.ndarray:
        """The labels as a dense (n, L) array for a model whose rule needs one, after checking
        that its largest array (``cells`` entries of ``itemsize`` bytes) fits in memory."""
        from ._config import check_fits

        check_fits(cells * itemsize, f"{type(self).__name__}'s {what}")
        return self._Y.toarray() if sp.issparse(self._Y) else self._Y

    # -- predict -----------------------------------------------------------------------

    def _score_block(self, neighbors: np.ndarray, X: Any) -> tuple[np.ndarray, np.ndarray]:
        """Scores in (0, 1) and decisions for one block of queries."""
        raise NotImplementedError  # pragma: no cover - abstract

    def _scores_and_decisions(self, X: Any) -> tuple[np.ndarray, np.ndarray]:
        X = self._validate_queries(X)
        k = self.n_neighbors_
        _, neighbors = self._query(X, k)
        n = X.shape[0]
        scores = np.empty((n, self.n_labels_), dtype=np.float64)
        decisions = np.empty((n, self.n_labels_), dtype=bool)
        for rows in row_blocks(n, self.n_labels_ * k):
            scores[rows], decisions[rows] = self._score_block(neighbors[rows], X[rows])
        return scores, decisions

    @lazy_on_dask
    def predict(self, X: Any) -> np.ndarray:
        """Predicted label indicator (n, n_labels), or classes (n,) for a 1-D target.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_queries, n_features)

        Returns
        -------
        Y_pred : ndarray of shape (n_queries, n_labels) or (n_queries,)
            A lazy ``dask.array.Array`` for a dask array ``X`` (see the Dask backend).
        """
        scores, decisions = self._scores_and_decisions(X)
        if self._multilabel:
            return decisions.astype(self._y_dtype)
        return self.classes_[np.argmax(scores, axis=1)]

    @lazy_on_dask
    def predict_proba(self, X: Any) -> np.ndarray:
        """Scores of shape (n, n_labels), strictly inside (0, 1); for a 1-D target,
        class probabilities (n, n_classes) that sum to 1.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_queries, n_features)

        Returns
        -------
        scores : ndarray of shape (n_queries, n_labels)
            A lazy ``dask.array.Array`` for a dask array ``X`` (see the Dask backend).
        """
        scores, _ = self._scores_and_decisions(X)
        if self._multilabel:
            return scores
        total = scores.sum(axis=1, keepdims=True)
        # all-zero scores (possible only with smoothing=0): uniform over the classes
        uniform = np.full_like(scores, 1.0 / scores.shape[1])
        return np.divide(scores, total, out=uniform, where=total > 0)

    def predict_top_k(self, X: Any, k: int) -> tuple[np.ndarray, np.ndarray]:
        """The ``k`` labels of highest ``predict_proba`` score of every query, best first.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_queries, n_features)
        k : int
            ``1 <= k <= n_labels``.

        Returns
        -------
        scores : ndarray of shape (n_queries, k)
        labels : ndarray of shape (n_queries, k)
            Label indices; equal scores ranked by the lower label index (the order of
            sorting each ``predict_proba`` row that way).

        Notes
        -----
        This model's scores depend on every label of a query, so they are computed a block
        of queries at a time (the block sized from the working memory) and only the top
        ``k`` are kept; the count models (ML-kNN, LAML-kNN, BRkNN, LPkNN) rank without the
        score rows at all.
        """
        check_is_fitted(self, "_fit_X")
        if isinstance(k, (bool, np.bool_)) or not isinstance(k, Integral) or not 1 <= k <= self.n_labels_:
            raise ValueError(f"k must be an integer in [1, {self.n_labels_}] (the number of labels), got {k!r}")
        X = self._validate_queries(X)
        n = X.shape[0]
        scores = np.empty((n, k))
        labels = np.empty((n, k), dtype=np.intp)
        for rows in row_blocks(n, self.n_labels_ * 4):
            block = self.predict_proba(X[rows])
            order = np.argsort(-block, axis=1, kind="stable")[:, :k]
            labels[rows] = order
            scores[rows] = np.take_along_axis(block, order, axis=1)
        return scores, labels

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.target_tags.multi_output = True
        tags.classifier_tags.multi_label = True
        return tags


class CountTableModel(KNeighborsMultilabelBase):
    """A model whose score and decision for a (query, label) depend only on how many of the
    query's neighbours carry the label (and on the query's group: LAML-kNN's cluster).

    ``_fit_labels`` sets the tables with :meth:`_set_tables` (shape (n_groups, n_labels,
    k + 1)); a query's cell is then a look-up at its count.  The counts of a block of
    queries are a sparse product when Y is sparse, so the label side costs O(n k c + L k)
    (c: labels per row) and never forms an (n, n_labels) array unless the output asks for
    one (``predict_proba``).  :meth:`predict_top_k` ranks without the full score rows, and
    ``predict(X, sparse_output=True)`` returns CSR.  Rules over a whole row (BRkNN-a's
    fallback, BRkNN-b's top m, LPkNN's label set) override :meth:`_row_rule`.
    """

    def _set_tables(self, scores: np.ndarray, decisions: np.ndarray) -> None:
        self._score_table = scores
        self._decision_table = decisions
        self._zero_order = None

    def _groups(self, X: Any) -> np.ndarray | None:
        """The table group of each query (None: group 0 for all)."""
        return None

    def _row_rule(self, C: Any, decisions: Any, neighbors: np.ndarray, sparse_output: bool) -> Any:
        """Decisions of rules over a whole row; the tables' decisions by default."""
        return decisions

    def _score_block(self, neighbors: np.ndarray, X: Any) -> tuple[np.ndarray, np.ndarray]:
        from ._counts import table_lookup

        C = count_matrix(neighbors, self._Y)
        scores, decisions = table_lookup(self._score_table, self._decision_table, C, self._groups(X))
        return scores, self._row_rule(C, decisions, neighbors, False)

    def _count_blocks(self, X: Any, k_extra: int = 0):
        """Validated queries in blocks sized for their sparse counts: (rows, neighbours, C)."""
        X = self._validate_queries(X)
        k = self.n_neighbors_
        _, neighbors = self._query(X, k)
        n = X.shape[0]
        per_label = float(np.asarray(self._Y.sum()).item()) / max(1, self._Y.shape[0])
        row_cells = k * (per_label + 1) + k_extra
        for rows in row_blocks(n, int(row_cells) + 1):
            yield rows, X, neighbors[rows], count_matrix(neighbors[rows], self._Y)

    @lazy_on_dask
    def predict(self, X: Any, *, sparse_output: bool = False) -> Any:
        """Predicted label indicator (n, n_labels); a CSR matrix with ``sparse_output=True``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_queries, n_features)
        sparse_output : bool, default=False
            Return a CSR 0/1 matrix, computed from the sparse counts without forming the
            (n_queries, n_labels) array (for many labels and a sparse Y).

        Returns
        -------
        Y_pred : ndarray or CSR matrix of shape (n_queries, n_labels)
        """

        if not sparse_output:
            return super().predict(X)
        if not self._multilabel:
            raise ValueError("sparse_output=True needs a multi-label target (a 2-D indicator)")
        import scipy.sparse as sp

        from ._counts import table_decisions

        parts = []
        for rows, Xv, neighbors, C in self._count_blocks(X):
            C = C if sp.issparse(C) else sp.csr_matrix(C)
            decisions = table_decisions(self._decision_table, C, self._groups(Xv[rows]))
            parts.append(self._row_rule(C, decisions, neighbors, True))
        out = sp.vstack(parts, format="csr") if parts else sp.csr_matrix((0, self.n_labels_), dtype=np.int8)
        return out.astype(self._y_dtype)

    def predict_top_k(self, X: Any, k: int) -> tuple[np.ndarray, np.ndarray]:
        """The ``k`` labels of highest score of every query, without the full score rows.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_queries, n_features)
        k : int
            ``1 <= k <= n_labels``.

        Returns
        -------
        scores : ndarray of shape (n_queries, k)
            The labels' ``predict_proba`` scores, best first (the order of the index
            protocol's ``(dist, idx)``).
        labels : ndarray of shape (n_queries, k)
            Label indices; equal scores ranked by the lower label index.  The same as
            sorting each row of ``predict_proba`` that way.

        Notes
        -----
        A label that none of a query's neighbours carries has a score fixed at fit (its
        count-0 score), so the top ``k`` merge the labels the neighbours carry with a
        precomputed order of the others: O(n (k c + k) log(k c + k)) for ``c`` labels per
        row, whatever the number of labels.
        """
        from ._counts import table_top_k

        check_is_fitted(self, "_score_table")
        if isinstance(k, (bool, np.bool_)) or not isinstance(k, Integral) or not 1 <= k <= self.n_labels_:
            raise ValueError(f"k must be an integer in [1, {self.n_labels_}] (the number of labels), got {k!r}")
        if self._zero_order is None:
            self._zero_order = np.argsort(-self._score_table[:, :, 0], axis=1, kind="stable")
        scores, labels = [], []
        for rows, Xv, _, C in self._count_blocks(X, k_extra=2 * k):
            s, lab = table_top_k(self._score_table, C, self._groups(Xv[rows]), int(k), self._zero_order)
            scores.append(s)
            labels.append(lab)
        if not scores:
            return np.empty((0, k)), np.empty((0, k), dtype=np.intp)
        return np.concatenate(scores), np.concatenate(labels)


def in_fit_order(estimator: Any, X: Any) -> Any:
    """A DataFrame holding the columns seen at fit in another order, reordered to fit's order.

    scikit-learn records a DataFrame's column names at fit (``feature_names_in_``) and refuses
    the same names in another order; the estimators of this package match them by name
    instead.  Names missing or unknown are left to scikit-learn's check, which lists them.

    >>> import pandas as pd
    >>> from mlneighbors import MLkNN
    >>> model = MLkNN(1).fit(pd.DataFrame({"a": [0.0, 1.0], "b": [0.0, 1.0]}), [[1, 0], [0, 1]])
    >>> list(in_fit_order(model, pd.DataFrame({"b": [1.0], "a": [0.9]})).columns)
    ['a', 'b']
    """
    names = getattr(estimator, "feature_names_in_", None)
    columns = getattr(X, "columns", None)
    if names is None or columns is None or isinstance(X, np.ndarray):
        return X
    columns = list(columns)
    fitted = list(names)
    if columns != fitted and len(columns) == len(fitted) and set(columns) == set(fitted):
        return X[fitted]
    return X


def target_classes(classes: np.ndarray | None, y_dtype: Any, n_labels: int) -> Any:
    """``classes_`` of every estimator of the package: the classes of a 1-D target, else
    scikit-learn's multi-output convention (``KNeighborsClassifier``): one array ``[0, 1]``
    per label, which scorers read to recognise a multi-label classifier."""
    if classes is not None:
        return classes
    # one shared (read-only) array: with 10^6 labels, a million small arrays took 117 MB and
    # most of the fit's time outside the neighbour search (benchmarks/labels.py)
    values = np.array([0, 1], dtype=y_dtype)
    values.flags.writeable = False
    return [values] * n_labels


def validate_training_data(
    estimator: Any, X: Any, y: Any
) -> tuple[Any, np.ndarray, np.ndarray | None, np.dtype | None]:
    """Validate ``X`` and a target; return ``(X, Y, classes, y_dtype)``.

    ``Y`` is an int8 (n, n_labels) 0/1 matrix, CSR when the target is sparse (the count
    models then never form an (n, n_labels) array). A 2-D 0/1 target is a label indicator:
    ``classes`` is None and ``y_dtype`` its dtype. A 1-D target (or a column vector that
    is not 0/1) is binarised one column per class as one-vs-rest does (two classes give
    two columns, one class a single column of ones): ``classes`` are the classes and
    ``y_dtype`` None. Anything else raises ``ValueError("Unknown label type: ...")``.
    """
    if y is None:
        raise ValueError(
            f"{type(estimator).__name__} requires y to be passed, but the target y is None"
        )
    _refuse_label_lists(y)
    if is_dask_array(X):  # checked lazily: the rows stay on the cluster
        return validate_dask_training_data(estimator, X, y)
    X, y = validate_data(
        estimator,
        X,
        y,
        accept_sparse="csr",
        dtype=np.float64,
        multi_output=True,
        y_numeric=False,
        ensure_min_samples=2,
    )
    if sp.issparse(y):
        y = sp.csr_matrix(y)
    if _is_indicator(y):
        if sp.issparse(y):  # kept sparse: the label side costs what Y holds
            Y = y.astype(np.int8)
            Y.eliminate_zeros()
            Y.sort_indices()
            return X, Y, None, y.dtype
        Y = np.asarray(y)
        return X, Y.astype(np.int8), None, Y.dtype
    if np.ndim(y) == 2:
        values = np.unique(y.data if sp.issparse(y) else np.asarray(y))
        if values.dtype.kind in "iuf" and set(values.tolist()) <= {-1, 0, 1} and -1 in values:
            raise ValueError(
                "y is a label matrix coded -1/+1; a label indicator holds 0 and 1: convert it "
                "with (y > 0).astype(int)"
            )
    target = type_of_target(y)
    if target not in ("binary", "multiclass"):
        raise ValueError(
            f"Unknown label type: {target!r}. y must be a binary label indicator of "
            "shape (n_samples, n_labels) or 1-D class labels"
            + (" (a 2-D y must hold only 0 and 1)" if np.ndim(y) == 2 else "")
        )
    y = np.ravel(y.toarray() if sp.issparse(y) else y)
    binarizer = LabelBinarizer().fit(y)
    Y = binarizer.transform(y).astype(np.int8)
    if len(binarizer.classes_) == 1:  # every row has the one class
        Y = np.ones((len(y), 1), dtype=np.int8)
    elif Y.shape[1] == 1:  # two classes: one column each, as one-vs-rest scores them
        Y = np.hstack([1 - Y, Y])
    return X, Y, binarizer.classes_, None


def _refuse_label_lists(y: Any) -> None:
    """A list of label lists (``[[0, 3], [2], []]``) is not an indicator: say how to make one."""
    if isinstance(y, (list, tuple)) and len(y) > 0:
        rows = [r for r in y if isinstance(r, (list, tuple, set, frozenset))]
        if len(rows) == len(y) and (any(isinstance(r, (set, frozenset)) for r in rows)
                                    or len({len(r) for r in rows}) > 1):
            raise ValueError(
                "y is a list of label lists, one per row; a label indicator matrix of shape "
                "(n_samples, n_labels) is needed: make one with "
                "sklearn.preprocessing.MultiLabelBinarizer().fit_transform(y)"
            )


def _is_indicator(y: Any) -> bool:
    """A 2-D target of 0/1 values (one column included) is a multi-label indicator."""
    if y.ndim != 2:
        return False
    values = y.data if sp.issparse(y) else np.asarray(y)
    if values.dtype.kind not in "biuf":
        return False
    # one pass, no sort (np.unique sorted every label value: a tenth of a fit on corel5k)
    return values.dtype.kind == "b" or bool(((values == 0) | (values == 1)).all())
