"""A model's neighbour index, from ``backend=`` to the saved file: made, built, rebuilt, saved.

:class:`IndexLifecycle` is the part of every model that owns its index:

- **made** by :meth:`~IndexLifecycle._make_index` from ``backend=`` (a registered name or an
  index object, copied unbuilt) and ``backend_params=``, with the model's ``n_jobs`` and its
  ``k`` as the recall's ``recall_k`` where the index takes them (``mlneighbors.neighbors``,
  :func:`~mlneighbors.neighbors.resolve_backend`);
- **built** by ``fit`` (:meth:`~IndexLifecycle._fit_index`) on the training rows, then
  described: ``backend_`` (what was built; ``"auto"`` says what it picked), ``recall_`` (1.0
  for an exact index, else the index's own measurement, else measured on first access) and
  ``low_recall_share_`` (0.0 for an exact index, else as ``recall_``);
- **rebuilt** from the training rows on first use after a model was loaded
  (:meth:`~IndexLifecycle._get_index`);
- **saved** as nothing: a pickled or saved model holds its training rows, not its index
  (library handles, device tensors, a float32 copy), unless ``mlneighbors.save(...,
  include_index=True)`` asks for an approximate index as data (``neighbors._saved``); no Dask
  client either (a live connection), and an index object given as ``backend`` unbuilt.
"""

from __future__ import annotations

from typing import Any

from sklearn.base import clone
from sklearn.utils.validation import check_is_fitted

from ._dask_estimators import share_clients, without_clients
from ._params import param_names
from .neighbors import resolve_backend
from .neighbors._internal import (
    build_index,
    estimate_recalls,
    export_index,
    is_including,
    pack_rows,
    restore_index,
    unpack_rows,
)

__all__ = ["IndexLifecycle"]


class IndexLifecycle:
    """What a model does with its neighbour index (a mixin of the estimator base).

    It reads the model's ``backend``, ``backend_params``, ``n_jobs``, ``n_neighbors_`` (when
    set), ``_fit_X`` and ``_Y``, and sets ``_index``, ``backend_``, ``recall_`` and
    ``low_recall_share_``.  A model
    overrides :meth:`_index_metric` when its distance is not its ``metric`` parameter
    (HybridKNN: cosine), :meth:`_make_index` to set parameters of its own index (HybridKNN's
    window), and :meth:`_build_index` when its neighbours are not one global top-k (BKNN: the
    nearest members of every label).
    """

    def _index_metric(self) -> str:
        """The distance the index is asked for (the ``metric`` parameter)."""
        return self.metric

    def _make_index(self) -> Any:
        """The unbuilt index that ``backend=`` and ``backend_params=`` name."""
        index = resolve_backend(self.backend, self._index_metric(), self.backend_params)
        accepted = _param_names(index)
        if self.n_jobs is not None and "n_jobs" in accepted:
            index.set_params(n_jobs=self.n_jobs)
        k = getattr(self, "n_neighbors_", None)
        if k is not None and "recall_k" in accepted and "recall_k" not in (self.backend_params or {}):
            index.set_params(recall_k=int(k))  # the recall an approximate index reports is at this k
        return index

    def _build_index(self, X: Any, Y: Any) -> Any:
        """The built index of the training rows (the labels are for label-restricted searches)."""
        return build_index(self._make_index(), X, validated=True)

    def _fit_index(self, X: Any, Y: Any) -> None:
        """Build the index of the training rows ``X`` (labels ``Y``) and describe it."""
        self.__dict__.pop("_recall", None)
        self.__dict__.pop("_low_recall_share", None)
        self._index = index = self._build_index(X, Y)
        self.backend_ = str(getattr(index, "backend_", None) or getattr(index, "name", None) or type(index).__name__)
        if getattr(index, "exact", False):
            self._recall, self._low_recall_share = 1.0, 0.0
        else:
            if getattr(index, "recall_", None) is not None:
                self._recall = float(index.recall_)
            if getattr(index, "low_recall_share_", None) is not None:
                self._low_recall_share = float(index.low_recall_share_)

    def _get_index(self) -> Any:
        """The built index; rebuilt from the training rows after a model was loaded."""
        index = self.__dict__.get("_index")
        if index is None:
            index = self._index = self._build_index(self._fit_X, self._Y)
        return index

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
            self._measure_recalls()
        return self._recall

    @property
    def low_recall_share_(self) -> float:
        """The share of those leave-one-out queries whose recall@k is below one half (0.0 when
        exact).

        A mean recall of 0.96 may be small misses spread over every row or whole rows with
        every neighbour wrong (a graph search that descended into the wrong cluster); a model
        answers the latter rows like a model without neighbours.  Measured where ``recall_``
        is, on the same rows, from each row's recall@k; one row of 1,000 is 0.1 %, its
        standard error ``sqrt(s (1 - s) / 1000)``.  NaN for a model whose index was saved with
        it (``include_index``) by a version that did not measure it, and for rows in a dask
        array where the index measured no recall of its own.
        """
        check_is_fitted(self, "_fit_X")
        if "_low_recall_share" not in self.__dict__:
            self._measure_recalls()
        return self._low_recall_share

    def _measure_recalls(self) -> None:
        """``_recall`` and ``_low_recall_share``, those not known yet (the index did not report
        them, or a model saved by an earlier version did not hold them): both from one
        measurement where the index reports neither."""
        recall, share = estimate_recalls(self._get_index(), self._fit_X, self.n_neighbors_, self._index_metric())
        self.__dict__.setdefault("_recall", recall)
        self.__dict__.setdefault("_low_recall_share", share)

    def __getstate__(self) -> dict:
        state = super().__getstate__()
        index = state.pop("_index", None)
        if index is not None and is_including():
            saved = export_index(index)
            if saved is not None:
                state["_saved_index"] = saved
                state["_fit_X"] = pack_rows(state["_fit_X"])  # loaded without a copy
        if "backend_params" in state:
            state["backend_params"] = without_clients(state["backend_params"])
        backend = state.get("backend")
        if not isinstance(backend, str) and callable(getattr(backend, "get_params", None)):
            state["backend"] = clone(backend)  # an index object as its parameters, never built
        return state

    def __setstate__(self, state: dict) -> None:
        state = dict(state)
        saved = state.pop("_saved_index", None)
        if saved is not None and "_fit_X" in state:
            state["_fit_X"] = unpack_rows(state["_fit_X"])
        super().__setstate__(state)
        if saved is not None:  # saved with include_index=True: the index as it was, no build
            self._index = restore_index(self._make_index(), saved, self._fit_X)

    def __sklearn_clone__(self) -> Any:
        # a Dask client in backend_params cannot be deep-copied: the clone shares it
        params = getattr(self, "backend_params", None)
        light = without_clients(params)
        if light is params:
            return super().__sklearn_clone__()
        stand_in = object.__new__(type(self))
        stand_in.__dict__.update(self.__dict__, backend_params=light)
        clone_ = super(IndexLifecycle, stand_in).__sklearn_clone__()
        clone_.backend_params = share_clients(params, clone_.backend_params)
        return clone_


def _param_names(index: Any) -> Any:
    """The parameter names of an unbuilt index (``get_params``'s keys); for the package's own
    classes read once per class (``get_params`` inspects the signature on every call)."""
    cls = type(index)
    if cls.__module__.startswith("mlneighbors.") and hasattr(cls, "_get_param_names"):
        return param_names(cls)
    return getattr(index, "get_params", dict)()
