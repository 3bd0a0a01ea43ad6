"""Live models: ``partial_fit`` adds labelled training rows, ``forget`` removes rows by identifier.

Every model of the package has both (:class:`LiveModel`, a mixin of the estimator base), and
after any sequence of them a model with ``update_rule = "exact"`` equals
``clone(model).fit(rows_now, labels_now, ids=training_ids_)`` on an exact backend: the same
neighbours, fitted tables, scores and predictions, bit for bit.  The rows now are the rows the
model was fitted on, less the forgotten ones, in their order, followed by the added rows in
the order they were given (row numbers break ties at equal distance, so the order is part of
the model).

How an update costs the update, not a refit (``update_rule = "exact"``)
----------------------------------------------------------------------
A model whose ``fit`` counts leave-one-out neighbours (ML-kNN, DML-kNN) keeps each training
row's ``depth`` nearest other rows (``k + max(5, k // 2)``, with their distances) from its
fit.  Adding ``m`` rows asks the exact kernel of ``neighbors._live`` for the new rows' lists and
for the old rows that a new row enters (its distance strictly below the old row's last entry:
a new row is numbered after every old row, so at an equal distance it stays out): O(n m d)
products, not O(n^2 d).  Forgetting rows removes them from the lists that hold them (every row
keeps the exact first entries of its list, as removals only shorten it), and a row left with
fewer than ``k`` entries is searched again.  The label statistics are then updated from the rows
whose first ``k`` neighbours changed (ML-kNN's and DML-kNN's count tables are integer
histograms: what leaves is subtracted, what comes is added), or recomputed from the kept lists
(the others: no search).  The index is rebuilt from the rows now on its next use.

Models whose fit learns from all rows at once (BKNN's thresholds and bandwidth, LAML-kNN's
clusters, HybridKNN's projection) have ``update_rule = "refit"``: ``partial_fit`` and
``forget`` refit them on the rows now, which is what a refit gives, at a refit's cost.
"""

from __future__ import annotations

import sys
import warnings
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.preprocessing import label_binarize
from sklearn.utils.validation import check_is_fitted

from ._counts import count_matrix
from ._docstrings import fill_doc
from ._ids import check_ids, default_ids, id_kind, positions_of
from ._targets import validate_training_data
from .exceptions import LabelWarning
from .neighbors import ExactIndex, get_capabilities, loo_kneighbors
from .neighbors._internal import entering_pairs, exact_lists, is_dask_array, merge_lists, row_norms_sq

__all__ = ["LiveModel", "UpdateDelta", "list_depth"]

#: up to this many rows added at once, their lists come from the kernel's tiles (no index built)
_KERNEL_ROWS = 32


def list_depth(k: int, n: int) -> int:
    """The entries a live model keeps per training row: ``k`` and a margin that absorbs
    removals (``max(5, k // 2)``), at most the ``n - 1`` other rows."""
    return min(k + max(5, k // 2), n - 1)


class UpdateDelta:
    """What an update changed in the leave-one-out neighbours of the training rows.

    ``gone`` and ``come`` are lists of ``(C, Y)`` pairs: the membership counts (int32, dense or
    CSR) and labels of rows whose contribution to the statistics leaves (forgotten rows, and the
    rows whose neighbours changed, as they were) and comes (the same rows as they are now, and
    added rows).  ``removed_labels`` and ``added_labels`` are the labels of the rows forgotten and
    added (the prior's counts).  ``kept`` (a boolean mask of the old rows, after a removal) and
    ``changed`` (rows now, whose counts changed) let a model with per-row statistics update them.
    """

    def __init__(self) -> None:
        self.gone: list[tuple[Any, Any]] = []
        self.come: list[tuple[Any, Any]] = []
        self.removed_labels: Any = None
        self.added_labels: Any = None
        self.kept: np.ndarray | None = None
        self.changed = np.zeros(0, dtype=np.intp)
        #: (array, rows, values): rows of the model's arrays written in place, and what they held
        self.overwritten: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []


def _caller_level() -> int:
    """The ``stacklevel`` of the first frame outside the package, seen from the caller."""
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_globals.get("__name__", "").startswith("mlneighbors."):
        frame, level = frame.f_back, level + 1
    return level


def _lists_of(X: Any, rows: np.ndarray, depth: int, metric: str) -> tuple[np.ndarray, np.ndarray]:
    """The exact leave-one-out lists of ``rows`` among all rows of ``X``: from the kernel's tiles
    for a few rows (no index to build), else from the exact engine (an index costs a pass over
    the rows; its search is the faster)."""
    if len(rows) <= _KERNEL_ROWS:
        return exact_lists(X, rows, depth, metric)
    return loo_kneighbors(ExactIndex(metric=metric).build(X), X, depth, rows=rows, validated=True)


class _Scratch(BaseEstimator):
    """A stand-in estimator that scikit-learn's validation may write attributes to."""


def _stack(A: Any, B: Any) -> Any:
    if sp.issparse(A) or sp.issparse(B):
        return sp.vstack([sp.csr_matrix(A), sp.csr_matrix(B)], format="csr")
    return np.concatenate([A, B])


def _rows(A: Any, rows: Any) -> Any:
    return A[rows]


class LiveModel:
    """``partial_fit``, ``forget`` and the state that makes them exact (a mixin of the base)."""

    #: ``"exact"``: an update gives what a refit on the rows now gives, at the update's cost;
    #: ``"refit"``: an update refits on the rows now (the same model, at a refit's cost)
    update_rule: ClassVar[str] = "exact"

    # -- the public methods --------------------------------------------------------------

    @fill_doc
    def partial_fit(self, X: Any, y: Any, ids: Any = None, classes: Any = None) -> Any:
        """Add labelled training rows to a fitted model (an unfitted one is fitted on them).

        The model then equals one fitted on its rows now (its rows before, then these, in
        order) with ``training_ids_`` as ids, bit for bit on the exact backends (exact, torch,
        dask); see ``update_rule``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : {array-like, sparse matrix} of shape (n_samples, n_labels) or (n_samples,)
            Labels of the new rows, as at ``fit``.
        {ids_parameter}
        classes : array-like, default=None
            scikit-learn's argument of a classifier's first ``partial_fit``: the classes a 1-D
            target may hold.  Checked only (every value of ``y`` must be among them); the
            classes are those of the rows now, as a refit has them.

        Returns
        -------
        self : object
        """
        if classes is not None and np.ndim(y) == 1:
            outside = ~np.isin(np.asarray(y), np.asarray(classes))
            if outside.any():
                raise ValueError(f"y holds {np.asarray(y)[outside][0]!r}, which is not among classes")
        if "_fit_X" not in self.__dict__:
            return self.fit(X, y, ids=ids)
        self._check_live()
        Xn, Yn = self._new_rows(X, y)
        m = Xn.shape[0]
        if ids is None:
            if id_kind(self.training_ids_) == "str":
                raise ValueError("this model's training_ids_ are strings: give ids= for the new rows")
            start = int(self.training_ids_.max()) + 1 if len(self.training_ids_) else 0
            new_ids = default_ids(start, m)
        else:
            new_ids = check_ids(ids, m, kind=id_kind(self.training_ids_))
            clash = np.isin(new_ids, self.training_ids_)
            if clash.any():
                raise ValueError(f"ids: {new_ids[clash][0].item()!r} is already a training identifier")
        if Yn is None:  # a 1-D target with a class the model has not seen: the classes change
            self._refit_rows(_stack(self._fit_X, Xn), self._class_targets(y),
                             np.concatenate([self.training_ids_, new_ids]))
            return self
        self._apply(add=(Xn, Yn, new_ids))
        return self

    def forget(self, ids: Any) -> Any:
        """Remove training rows by identifier, as if the model had never seen them.

        Nothing the model holds (rows, labels, neighbour lists, counts, the index) keeps a
        forgotten row or anything computed from it: the model equals one fitted on the rows
        left (see ``update_rule``).  An unknown or repeated identifier is a ``ValueError``
        naming it, and nothing is changed.

        Parameters
        ----------
        ids : array-like of int or str
            Identifiers among ``training_ids_``.

        Returns
        -------
        self : object
        """
        check_is_fitted(self, "_fit_X")
        self._check_live()
        positions = positions_of(self.training_ids_, ids)
        n = self._fit_X.shape[0]
        if n - len(positions) < 2:
            raise ValueError(f"forgetting {len(positions)} of the {n} training rows would leave fewer than the "
                             "2 a model needs")
        if len(positions) == 0:
            return self
        if not self._multilabel:
            keep = np.ones(n, dtype=bool)
            keep[positions] = False
            y = self._class_targets(None)[keep]
            if len(np.unique(y)) != len(self.classes_):  # a class vanishes: the classes change
                self._refit_rows(self._fit_X[keep], y, self.training_ids_[keep])
                return self
        self._apply(remove=positions)
        return self

    # -- checks ----------------------------------------------------------------------------

    def _check_live(self) -> None:
        if is_dask_array(self._fit_X) or not hasattr(self._fit_X, "shape") or getattr(self, "_shipped", False):
            raise ValueError(f"{type(self).__name__} was fitted on a dask array: its rows live on the cluster; "
                             "fit it again on the rows now (partial_fit and forget take a model fitted on rows "
                             "in memory)")

    def _new_rows(self, X: Any, y: Any) -> tuple[Any, Any]:
        """The new rows validated as the training rows were, and their labels as ``_Y``'s (None
        for a 1-D target with a class outside ``classes_``)."""
        Xn = self._validate_queries(X)
        scratch = _Scratch()
        _, Yn, classes, _ = validate_training_data(scratch, Xn, y) if Xn.shape[0] >= 2 else self._one_row(Xn, y)
        if (classes is None) != self._multilabel:
            raise ValueError("y must be the same kind of target as at fit: "
                             + ("a label indicator (n_samples, n_labels)" if self._multilabel else "1-D class labels"))
        if self._multilabel:
            if Yn.shape[1] != self.n_labels_:
                raise ValueError(f"y has {Yn.shape[1]} labels, the model {self.n_labels_}")
        else:
            values = np.asarray(y).ravel()
            if not np.isin(values, self.classes_).all():
                return Xn, None
            Yn = self._binarized(values)
        if sp.issparse(self._Y) != sp.issparse(Yn):
            Yn = sp.csr_matrix(Yn, dtype=np.int8) if sp.issparse(self._Y) else Yn.toarray().astype(np.int8)
        return Xn, Yn

    def _one_row(self, Xn: Any, y: Any) -> tuple[Any, Any, Any, Any]:
        """A single new row's labels (scikit-learn's validation wants two rows)."""
        if self._multilabel:
            Y = sp.csr_matrix(y) if sp.issparse(y) else np.asarray(y)
            if Y.ndim == 1:
                Y = Y.reshape(1, -1)
            values = Y.data if sp.issparse(Y) else Y
            if Y.shape[0] != Xn.shape[0] or not np.isin(values, (0, 1)).all():
                raise ValueError(f"y must be a (1, {self.n_labels_}) label indicator of 0 and 1 for one row")
            return Xn, (sp.csr_matrix(Y, dtype=np.int8) if sp.issparse(Y) else Y.astype(np.int8)), None, None
        values = np.asarray(y).ravel()
        if len(values) != Xn.shape[0]:
            raise ValueError(f"y has {len(values)} labels for {Xn.shape[0]} rows")
        return Xn, None, self.classes_, None

    def _binarized(self, values: np.ndarray) -> np.ndarray:
        if len(self.classes_) == 1:
            return np.ones((len(values), 1), dtype=np.int8)
        Y = label_binarize(values, classes=self.classes_).astype(np.int8)
        return np.hstack([1 - Y, Y]) if Y.shape[1] == 1 else Y

    def _class_targets(self, y_new: Any) -> np.ndarray:
        """The 1-D targets of the training rows (and of ``y_new`` after them)."""
        Y = self._Y.toarray() if sp.issparse(self._Y) else self._Y
        y = np.asarray(self.classes_)[np.argmax(Y, axis=1)]
        return y if y_new is None else np.concatenate([y, np.asarray(y_new).ravel()])

    # -- the update ------------------------------------------------------------------------

    def _refit_rows(self, X: Any, y: Any, ids: np.ndarray) -> None:
        """A refit on the rows now (``update_rule = "refit"``, a change of the classes or of ``k``)."""
        params = self.get_params(deep=False)
        fresh = type(self)(**params)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            fresh.fit(X, y, ids=ids)
        self.__dict__.clear()
        self.__dict__.update(fresh.__dict__)
        for warning in caught:  # the fit's warnings, at the caller's line (not this module's)
            warnings.warn(warning.message, warning.category, stacklevel=_caller_level())

    def _apply(self, *, add: Any = None, remove: Any = None) -> None:
        n_now = self._fit_X.shape[0] + (add[0].shape[0] if add is not None else 0) - (
            len(remove) if remove is not None else 0)
        limit = n_now - 1 if self._needs_loo else n_now
        if self.update_rule != "exact" or min(self.n_neighbors, limit) != self.n_neighbors_:
            if add is not None:
                X, Y, ids = _stack(self._fit_X, add[0]), _stack(self._Y, add[1]), np.concatenate(
                    [self.training_ids_, add[2]])
            else:
                keep = np.ones(self._fit_X.shape[0], dtype=bool)
                keep[remove] = False
                X, Y, ids = self._fit_X[keep], _rows(self._Y, keep), self.training_ids_[keep]
            y = Y.astype(np.dtype(self._y_dtype)) if self._multilabel else np.asarray(self.classes_)[
                np.argmax(Y.toarray() if sp.issparse(Y) else Y, axis=1)]
            self._refit_rows(X, y, ids)
            return
        delta = UpdateDelta()
        before = dict(self.__dict__)
        try:
            if remove is not None:
                self._remove_rows(remove, delta)
            else:
                self._add_rows(*add, delta)
            self._after_update(delta)
        except BaseException:  # (memory, an interrupt): the model as it was
            for array, rows, values in delta.overwritten:
                array[rows] = values
            self.__dict__.clear()
            self.__dict__.update(before)
            raise

    def _remove_rows(self, positions: np.ndarray, delta: UpdateDelta) -> None:
        self.__dict__.pop("_buffers", None)  # the arrays are made anew, without the rows
        n = self._fit_X.shape[0]
        keep = np.ones(n, dtype=bool)
        keep[positions] = False
        Y_old = self._Y
        delta.removed_labels = _rows(Y_old, positions)
        delta.kept = keep
        lists = self.__dict__.get("_loo_idx")
        X = self._fit_X[keep]
        Y = _rows(Y_old, keep)
        if lists is not None:
            k = self.n_neighbors_
            dist = self._loo_dist
            hit = np.isin(lists, positions)
            touched = np.flatnonzero(hit.any(axis=1) & keep)
            delta.gone.append((count_matrix(lists[positions, :k], Y_old), delta.removed_labels))
            delta.gone.append((count_matrix(lists[touched, :k], Y_old), _rows(Y_old, touched)))
            # renumber: the kept entries keep their order, moved to the front
            new_pos = np.cumsum(keep) - 1
            new_pos[~keep] = -1
            lists = np.where(lists >= 0, new_pos[np.maximum(lists, 0)], -1)
            lists = lists[keep]
            dist = dist[keep]
            valid = lists >= 0
            order = np.argsort(~valid, axis=1, kind="stable")
            lists = np.take_along_axis(lists, order, axis=1)
            dist = np.where(np.take_along_axis(valid, order, axis=1), np.take_along_axis(dist, order, axis=1), np.inf)
            touched_now = new_pos[touched]
            short = touched_now[(lists[touched_now] >= 0).sum(axis=1) < k]
            if len(short):
                depth = list_depth(k, X.shape[0])
                d_s, i_s = _lists_of(X, short, depth, self._index_metric())
                width = lists.shape[1]
                lists[short] = -1
                dist[short] = np.inf
                lists[short, :depth] = i_s[:, :width]
                dist[short, :depth] = d_s[:, :width]
            self._loo_idx, self._loo_dist = lists, dist
            delta.come.append((count_matrix(lists[touched_now, :k], Y), _rows(Y, touched_now)))
            delta.changed = touched_now
        sq = self.__dict__.pop("_live_sq", None)
        if sq is not None and len(sq) == n:
            self._live_sq = sq[keep]
        self._fit_X, self._Y, self.training_ids_ = X, Y, self.training_ids_[keep]

    def _add_rows(self, Xn: Any, Yn: Any, ids: np.ndarray, delta: UpdateDelta) -> None:
        # everything is computed first and the model changed at the end: an error on the way
        # (memory) leaves it as it was
        n, m = self._fit_X.shape[0], Xn.shape[0]
        X = self._grown("_fit_X", Xn)
        Y = self._grown("_Y", Yn)
        delta.added_labels = Yn
        lists = self.__dict__.get("_loo_idx")
        sq = None
        if lists is not None:
            k = self.n_neighbors_
            dist = self._loo_dist
            metric = self._index_metric()
            lengths = (lists >= 0).sum(axis=1)
            radii = np.where(lengths > 0, dist[np.arange(n), np.maximum(lengths - 1, 0)], np.inf)
            sq = self._live_norms()
            width = lists.shape[1]
            d_new, i_new = self._new_lists(Xn, X, min(list_depth(k, n + m), width), metric)
            # the old rows a new row enters: among its own nearest (known), or of a larger radius
            # than its list's last distance (the kernel's staircase)
            # (for a few rows a pass over the old rows in their order costs less than the sort)
            if m > _KERNEL_ROWS:
                seen = i_new >= 0
                floors = d_new[np.arange(m), np.maximum(seen.sum(axis=1) - 1, 0)]
                jj, pos = np.nonzero(seen & (i_new < n))
                ii, dd = i_new[jj, pos], d_new[jj, pos]
                known = (radii[ii] <= floors[jj]) & (dd < radii[ii])
                r, c, d = entering_pairs(self._fit_X, radii, Xn, metric, sq_old=sq, floors=floors)
                r, c, d = (np.concatenate([ii[known], r]), np.concatenate([jj[known], c]),
                           np.concatenate([dd[known], d]))
            else:
                r, c, d = entering_pairs(self._fit_X, radii, Xn, metric, sq_old=sq)
            changed = np.unique(r)
            delta.gone.append((count_matrix(lists[changed, :k], self._Y), _rows(self._Y, changed)))
            local = np.searchsorted(changed, r)
            d_c, i_c = merge_lists(dist[changed], lists[changed], lengths[changed], local, c + n, d)
            pad = width - d_new.shape[1]
            if pad:
                d_new = np.hstack([d_new, np.full((m, pad), np.inf)])
                i_new = np.hstack([i_new, np.full((m, pad), -1, dtype=np.intp)])
            new_dist, new_idx = self._grown("_loo_dist", d_new), self._grown("_loo_idx", i_new)
            new_sq = self._grown("_live_sq", row_norms_sq(Xn)) if sq is not None else None
            # the changed rows are written where the model's lists are (a stream of single rows
            # copies nothing): what they held is kept until the update is through
            delta.overwritten += [(new_dist, changed, new_dist[changed]), (new_idx, changed, new_idx[changed])]
            new_dist[changed], new_idx[changed] = d_c, i_c
            self._loo_dist, self._loo_idx = new_dist, new_idx
            delta.come.append((count_matrix(new_idx[changed, :k], Y), _rows(Y, changed)))
            delta.come.append((count_matrix(i_new[:, :k], Y), Yn))
            delta.changed = np.concatenate([changed, np.arange(n, n + m)])
            if new_sq is not None:
                self._live_sq = new_sq
        self._fit_X, self._Y = X, Y
        self.training_ids_ = self._grown("training_ids_", ids)

    def _grown(self, name: str, rows: Any) -> Any:
        """The model's array ``name`` with ``rows`` appended, not yet set: a view of a buffer with
        room to spare (a quarter more), so that a stream of single rows copies the training rows
        now and then, not at every row.  The model's current array is never written; sparse
        arrays are stacked."""
        current = self.__dict__[name]
        if sp.issparse(current) or sp.issparse(rows):
            return _stack(current, rows)
        rows = np.asarray(rows)
        n, m = current.shape[0], rows.shape[0]
        dtype = np.result_type(current, rows)
        buffers = self.__dict__.setdefault("_buffers", {})
        buffer = buffers.get(name)
        if not (buffer is not None and buffer.dtype == dtype and buffer.shape[1:] == current.shape[1:]
                and buffer.shape[0] >= n + m and np.shares_memory(buffer, current)
                and current.__array_interface__["data"][0] == buffer.__array_interface__["data"][0]):
            buffer = np.empty((n + m + max(m, n // 4),) + current.shape[1:], dtype=dtype)
            buffer[:n] = current
            buffers[name] = buffer
        buffer[n : n + m] = rows
        return buffer[: n + m]

    def _new_lists(self, Xn: Any, X: Any, depth: int, metric: str) -> tuple[np.ndarray, np.ndarray]:
        """The leave-one-out lists of the new rows (the last ``m`` of ``X``) among all rows: by the
        kernel for a few rows, else by the exact engine among the old rows (its index costs a
        pass over them) merged with the new rows' lists among themselves."""
        n, m = X.shape[0] - Xn.shape[0], Xn.shape[0]
        if m <= _KERNEL_ROWS:
            return _lists_of(X, np.arange(n, n + m), depth, metric)
        index = self.__dict__.get("_index")  # the model's own, where it is exact and built on these rows
        if not (getattr(index, "exact", False) and getattr(index, "n_samples_fit_", None) == n):
            index = ExactIndex(metric=metric).build(self._fit_X)
        dist, idx = index.query(Xn, min(depth, n))
        pad = depth - dist.shape[1]
        if pad:
            dist = np.hstack([dist, np.full((m, pad), np.inf)])
            idx = np.hstack([idx, np.full((m, pad), -1, dtype=np.intp)])
        own_d, own_i = exact_lists(Xn, np.arange(m), min(depth, m - 1), metric)
        rows = np.repeat(np.arange(m), own_i.shape[1])
        return merge_lists(dist, idx, np.full(m, depth), rows, own_i.ravel() + n, own_d.ravel())

    def _live_norms(self) -> np.ndarray | None:
        """The training rows' squared norms (euclidean), kept between updates (not saved)."""
        if self._index_metric() != "euclidean":
            return None
        sq = self.__dict__.get("_live_sq")
        if sq is None or len(sq) != self._fit_X.shape[0]:
            sq = self._live_sq = row_norms_sq(self._fit_X)
        return sq

    def __getstate__(self) -> dict:
        state = super().__getstate__()
        state.pop("_live_sq", None)  # derived from the rows: computed again on the next update
        state.pop("_buffers", None)  # the arrays' spare room (the arrays themselves are saved)
        return state

    def _after_update(self, delta: UpdateDelta) -> None:
        """The label statistics and the index after the rows changed."""
        empty = np.flatnonzero(np.asarray(self._Y.sum(axis=0)).ravel() == 0)
        if empty.size:
            from ._base import unseen_labels_message

            warnings.warn(LabelWarning(unseen_labels_message(empty)), stacklevel=4)
        index = self.__dict__.get("_index")
        exact = getattr(index, "exact", False)
        if delta.added_labels is not None and index is not None and not exact and get_capabilities(index).adds_rows:
            index.add_rows(self._fit_X)  # into the graph or the lists, its recall measured again
            self._recall = float(index.recall_)
            self._low_recall_share = float(index.low_recall_share_)
        else:  # rebuilt from the rows now on its next use: a forgotten row leaves nothing in it
            self.__dict__.pop("_index", None)
            if not exact:
                self.__dict__.pop("_recall", None)
                self.__dict__.pop("_low_recall_share", None)
        self._update_labels(delta)

    def _update_labels(self, delta: UpdateDelta) -> None:
        """Update the label statistics; by default learnt again from the kept lists (no search)."""
        self._fit_labels(self._fit_X, self._Y)
