"""The estimator base of every model: scikit-learn's contract and the questions about neighbours.

:class:`KNeighborsMultilabelBase` is what every classifier of the package is, less its rule:

- **the estimator contract**: ``fit`` checks the parameters (``_constraints``,
  ``mlneighbors._params``), validates the rows and the target (``mlneighbors._targets``; a dask
  array through ``mlneighbors._dask_estimators``), sets ``n_neighbors_``, ``classes_`` and ``n_labels_``,
  builds the index and hands the model its training data; ``predict`` returns the (n,
  n_labels) indicator (for a 1-D target, the classes) and ``predict_proba`` the scores (lazily
  for a dask array of queries); ``predict_top_k`` ranks the labels; scikit-learn's tags say
  multi-label, multi-output and sparse input;
- **the neighbour questions**: :meth:`~KNeighborsMultilabelBase.kneighbors` (``X=None``: the
  leave-one-out neighbours of the training rows, each row's own index left out), the
  leave-one-out membership counts that ``fit`` learns from (``_loo_counts``), and the queries'
  neighbours, which ``predict`` scores a block of rows at a time (blocks sized from the working
  memory).

The index itself (made from ``backend=``, built, rebuilt after loading, saved or not) is
:class:`~mlneighbors._index.IndexLifecycle`'s; the version stamp of a saved model
:class:`~mlneighbors._persist.VersionedState`'s.

A model subclasses this base (or :class:`CountTableModel`), stores its parameters in
``__init__``, lists their constraints in ``_constraints`` and implements two hooks:
``_fit_labels(X, Y)``, which learns the label statistics from the training rows and their
binary labels, and ``_score_block(neighbors, X)``, which returns the scores and decisions of a
block of queries from their neighbours (a count model fills tables with ``_set_tables``
instead).  Every index comes from ``_make_index`` (the model's ``backend=`` and
``backend_params=``), so a backend registered in ``mlneighbors.neighbors`` reaches every model;
BKNN, whose neighbours are not one global top-k, overrides ``_build_index`` and queries its
label-restricted index itself.
"""

from __future__ import annotations

import warnings
from contextlib import nullcontext
from numbers import Integral
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, MultiOutputMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from ._config import check_fits
from ._counts import count_matrix, row_blocks, table_decisions, table_lookup, table_top_k
from ._dask_estimators import lazy_on_dask, training_data
from ._docstrings import fill_doc
from ._explain import Explainable
from ._ids import check_ids, default_ids
from ._index import IndexLifecycle
from ._params import HasMethods, Instance, Integer, Options, validate_params
from ._persist import VersionedState
from ._targets import in_fit_order, plain_rows_top, target_classes
from ._updates import LiveModel, list_depth
from .exceptions import LabelWarning, NeighborsWarning
from .neighbors import check_result, check_scale, loo_kneighbors
from .neighbors._internal import FLOAT_DTYPES, answers_sets, blas_single_thread, check_rows, float_rows, search

__all__ = ["CountTableModel", "KNeighborsMultilabelBase", "unseen_labels_message"]


def unseen_labels_message(positions: np.ndarray, names: Any = None) -> str:
    """The warning that labels have no positive training example: by name where ``names``
    (every label's, in the target's column order) are known, else by column.

    >>> unseen_labels_message(np.array([1, 3]))
    '2 label(s) have no positive training example (columns [1, 3]); they are never predicted'
    >>> unseen_labels_message(np.array([1, 3]), ["sport", "music", "news", "arts"])
    "2 label(s) have no positive training example: labels 'music', 'arts' (columns 1, 3); they are never predicted"
    """
    shown = [int(j) for j in positions[:10]]
    more = f" and {len(positions) - len(shown)} more" if len(positions) > len(shown) else ""
    if names is None:
        which = f" (columns {shown}{more})"
    else:
        s = "s" if len(shown) > 1 else ""
        which = (f": label{s} {', '.join(repr(str(names[j])) for j in shown)} "
                 f"(column{s} {', '.join(map(str, shown))}){more}")
    return f"{len(positions)} label(s) have no positive training example{which}; they are never predicted"


class KNeighborsMultilabelBase(
    LiveModel, Explainable, IndexLifecycle, VersionedState, MultiOutputMixin, ClassifierMixin, BaseEstimator
):
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
        ``fit`` and is not saved with the model (pickle, joblib, skops) unless
        ``mlneighbors.save(..., include_index=True)`` keeps an approximate one: it is rebuilt
        from the training rows on first use (:class:`~mlneighbors._index.IndexLifecycle`).

    Subclass hooks
        ``_fit_labels(X, Y)`` (required): learn the label statistics; ``X`` is the validated
        training rows, ``Y`` the (n, n_labels) int8 0/1 labels (CSR when the target was
        sparse); ``k`` is ``self.n_neighbors_``, and ``self._loo_counts()`` gives the
        leave-one-out neighbours and their label counts.  ``_score_block(neighbors, X)``
        (required unless the model is a :class:`CountTableModel`): the scores in [0, 1] and
        the boolean decisions, both (m, n_labels), of ``m`` queries whose (m, k) neighbour rows
        are ``neighbors``.  Optional: ``_needs_loo = False`` when ``fit`` needs no
        leave-one-out search (``k`` may then reach ``n_samples``); ``_check_params(n_samples)``
        for checks that need the data; ``_index_metric``, ``_make_index`` and
        ``_build_index`` for the index (:class:`~mlneighbors._index.IndexLifecycle`).
    """

    _constraints: dict = {
        "n_neighbors": [Integer(1)],
        "metric": [Options("euclidean", "cosine")],
        "backend": [Instance(str), HasMethods("build", "query")],
        "backend_params": [Instance(dict), None],
        "n_jobs": [Integer(), None],
    }

    #: whether ``fit`` needs the leave-one-out membership counts of the training rows
    _needs_loo: bool = True
    #: whether the model's own products run on one BLAS thread in ``fit`` and ``predict`` (a
    #: model whose numbers would otherwise depend on the machine's thread settings: a BLAS
    #: splits a product differently on 1 and 2 threads, which rounds differently)
    _one_blas_thread: bool = False

    # -- fit ---------------------------------------------------------------------------

    @fill_doc
    def fit(self, X: Any, y: Any, ids: Any = None) -> KNeighborsMultilabelBase:
        """Fit the model on features ``X`` and targets ``y``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : {array-like, sparse matrix} of shape (n_samples, n_labels) or (n_samples,)
            A binary label indicator, or 1-D class labels.
        {ids_parameter}

        Returns
        -------
        self : object
        """
        validate_params(self)
        with blas_single_thread() if self._one_blas_thread else nullcontext():
            return self._fit(X, y, ids)

    def _fit(self, X: Any, y: Any, ids: Any) -> KNeighborsMultilabelBase:
        X, Y = self._validate_training_data(X, y)
        n = X.shape[0]
        self.training_ids_ = default_ids(0, n) if ids is None else check_ids(ids, n)
        self._set_n_neighbors(n)
        self._check_params(n)
        self._fit_X = X
        self._Y = Y
        self.__dict__.pop("_loo_idx", None)  # a previous fit's leave-one-out lists
        self.__dict__.pop("_loo_dist", None)
        self._fit_index(X, Y)
        self._fit_labels(X, Y)
        return self

    def _set_n_neighbors(self, n: int) -> None:
        k = self.n_neighbors
        limit = n - 1 if self._needs_loo else n
        if k > limit:
            warnings.warn(
                f"n_neighbors={k} is more than the {limit} neighbours that {n} training rows "
                + ("leave (leave-one-out excludes the row itself)" if self._needs_loo else "have")
                + f"; using n_neighbors_={limit}",
                NeighborsWarning,
                stacklevel=4,
            )
        self.n_neighbors_ = min(k, limit)

    def _validate_training_data(self, X: Any, y: Any) -> tuple[Any, np.ndarray]:
        X, Y, classes, y_dtype = training_data(self, X, y)
        self._multilabel = classes is None
        if self._multilabel:
            self._y_dtype = np.dtype(y_dtype).str  # a string: saved models hold no dtype objects
        self.classes_ = target_classes(classes, y_dtype, Y.shape[1])
        self.n_labels_ = Y.shape[1]
        empty = np.flatnonzero(np.asarray(Y.sum(axis=0)).ravel() == 0)
        if empty.size:
            # a DataFrame target names its labels (classes_ holds 0/1 per label, no names)
            columns = getattr(y, "columns", None) if self._multilabel else None
            names = [str(c) for c in columns] if columns is not None and len(columns) == Y.shape[1] else None
            warning = LabelWarning(unseen_labels_message(empty, names))
            warning.label_positions = empty  # the command line names them from the file's header
            warnings.warn(warning, stacklevel=4)
        return X, Y

    def _check_params(self, n_samples: int) -> None:
        """Checks of the subclass's parameters that need the data (``n_neighbors_`` is set)."""

    def _fit_labels(self, X: Any, Y: Any) -> None:  # pragma: no cover - abstract
        """Learn the label statistics from the training rows ``X`` and their labels ``Y``."""
        raise NotImplementedError

    # -- neighbours ----------------------------------------------------------------------

    def _validate_queries(self, X: Any) -> Any:
        check_is_fitted(self, "_fit_X")
        top = None if "feature_names_in_" in self.__dict__ else plain_rows_top(X)
        if top is not None and X.shape[1] == self.n_features_in_:  # only the scale left to check
            check_scale(X, "X", top=top)
            return X
        X = float_rows(validate_data(self, in_fit_order(self, X), accept_sparse="csr", dtype=FLOAT_DTYPES,
                                     reset=False))
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
        index = self._get_index()
        if X is None:
            return loo_kneighbors(index, self._fit_X, k, validated=True)
        dist, idx = search(index, X, k, validated=True)
        return check_result(dist, idx, X.shape[0], k, self._fit_X.shape[0], self.backend)

    def _neighbour_sets(self, X: Any, k: int) -> np.ndarray:
        """The rows (n, k) of every validated query's k nearest (None: leave-one-out), for a
        rule that counts them: the order within a row is left open, and the exact engine
        skips the distances its error bounds prove unneeded (the same sets as :meth:`_query`)."""
        index = self._get_index()
        if not answers_sets(index):  # another backend's answer is checked whole (distances too)
            return self._query(X, k)[1]
        if X is None:
            return loo_kneighbors(index, self._fit_X, k, validated=True, order=False)
        idx = search(index, X, k, validated=True, order=False)
        return check_rows(idx, X.shape[0], k, self._fit_X.shape[0], self.backend)

    def _neighbours_for_rule(self, X: Any, k: int) -> np.ndarray:
        """The neighbour rows that ``_score_block`` is given: only their sets where the
        model's rule counts them (``_counts_only``), else in order."""
        return self._neighbour_sets(X, k) if self._counts_only() else self._query(X, k)[1]

    def _counts_only(self) -> bool:
        """Whether the model's predictions depend on each query's neighbours only through
        their label counts (not their order or distances)."""
        return False

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
        CSR when the labels are sparse.  A model with ``update_rule = "exact"`` keeps each
        row's ``list_depth`` nearest, with their distances (``_loo_idx``, ``_loo_dist``), from
        which ``partial_fit`` and ``forget`` update it; they serve the next call.
        """
        k = self.n_neighbors_
        lists = self.__dict__.get("_loo_idx")
        if lists is None:
            if self.update_rule != "exact":
                neighbors = self._neighbour_sets(None, k)
                return neighbors, count_matrix(neighbors, self._Y)
            depth = list_depth(k, self._fit_X.shape[0])
            held = getattr(self._get_index(), "k_max", None)  # a NeighborCache: no deeper than it holds
            if held:
                depth = max(k, min(depth, int(held) - 1))
            self._loo_dist, lists = self._query(None, depth)
            self._loo_idx = lists = lists.astype(np.intp, copy=False)
        neighbors = lists[:, :k]
        return neighbors, count_matrix(neighbors, self._Y)

    def _dense_labels(self, what: str, cells: int, itemsize: int = 8) -> np.ndarray:
        """The labels as a dense (n, L) array for a model whose rule needs one, after checking
        that its largest array (``cells`` entries of ``itemsize`` bytes) fits in memory."""
        check_fits(cells * itemsize, f"{type(self).__name__}'s {what}")
        return self._Y.toarray() if sp.issparse(self._Y) else self._Y

    # -- predict -----------------------------------------------------------------------

    def _score_block(self, neighbors: np.ndarray, X: Any) -> tuple[np.ndarray, np.ndarray]:
        """The scores in [0, 1] (float64) and the decisions (bool), both (m, n_labels), of a
        block of ``m`` validated queries ``X`` whose (m, k) neighbour rows are ``neighbors``."""
        raise NotImplementedError  # pragma: no cover - abstract

    def _scores_and_decisions(self, X: Any) -> tuple[np.ndarray, np.ndarray]:
        with blas_single_thread() if self._one_blas_thread else nullcontext():
            return self._block_scores(X)

    def _block_scores(self, X: Any) -> tuple[np.ndarray, np.ndarray]:
        X = self._validate_queries(X)
        k = self.n_neighbors_
        neighbors = self._neighbours_for_rule(X, k)
        n = X.shape[0]
        scores = np.empty((n, self.n_labels_), dtype=np.float64)
        decisions = np.empty((n, self.n_labels_), dtype=bool)
        for rows in row_blocks(n, self.n_labels_ * k):
            scores[rows], decisions[rows] = self._score_block(neighbors[rows], X[rows])
        return scores, decisions

    @lazy_on_dask
    @fill_doc
    def predict(self, X: Any) -> np.ndarray:
        """Predicted label indicator (n, n_labels), or classes (n,) for a 1-D target.

        {x_queries_sections}
        Y_pred : ndarray of shape (n_queries, n_labels) or (n_queries,)
            A lazy ``dask.array.Array`` for a dask array ``X`` (see the Dask backend).
        """
        scores, decisions = self._scores_and_decisions(X)
        if self._multilabel:
            return decisions.astype(self._y_dtype)
        return self.classes_[np.argmax(scores, axis=1)]

    @lazy_on_dask
    @fill_doc
    def predict_proba(self, X: Any) -> np.ndarray:
        """Scores of shape (n, n_labels), strictly inside (0, 1); for a 1-D target,
        class probabilities (n, n_classes) that sum to 1.

        {x_queries_sections}
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

    @fill_doc
    def predict_top_k(self, X: Any, k: int) -> tuple[np.ndarray, np.ndarray]:
        """The ``k`` labels of highest ``predict_proba`` score of every query, best first.

        {top_k_sections}
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

    def _counts_only(self) -> bool:
        # the tables look up counts; a rule over a whole row may read the neighbours' order
        return type(self)._row_rule is CountTableModel._row_rule

    def _score_block(self, neighbors: np.ndarray, X: Any) -> tuple[np.ndarray, np.ndarray]:
        C = count_matrix(neighbors, self._Y)
        scores, decisions = table_lookup(self._score_table, self._decision_table, C, self._groups(X))
        return scores, self._row_rule(C, decisions, neighbors, False)

    def _count_blocks(self, X: Any, k_extra: int = 0):
        """Validated queries in blocks sized for their sparse counts: (rows, neighbours, C)."""
        X = self._validate_queries(X)
        k = self.n_neighbors_
        neighbors = self._neighbours_for_rule(X, k)
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
        parts = []
        for rows, Xv, neighbors, C in self._count_blocks(X):
            C = C if sp.issparse(C) else sp.csr_matrix(C)
            decisions = table_decisions(self._decision_table, C, self._groups(Xv[rows]))
            parts.append(self._row_rule(C, decisions, neighbors, True))
        out = sp.vstack(parts, format="csr") if parts else sp.csr_matrix((0, self.n_labels_), dtype=np.int8)
        return out.astype(self._y_dtype)

    @fill_doc
    def predict_top_k(self, X: Any, k: int) -> tuple[np.ndarray, np.ndarray]:
        """The ``k`` labels of highest score of every query, without the full score rows.

        {top_k_sections}
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
