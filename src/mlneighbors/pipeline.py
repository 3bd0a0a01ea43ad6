"""scikit-learn's Pipeline with the final model's ``predict_top_k``: what ``mlneighbors fit`` saves."""

from __future__ import annotations

from typing import Any

from sklearn.pipeline import Pipeline as _SklearnPipeline
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from ._docstrings import fill_doc

__all__ = ["Pipeline"]


def _final_has(name: str) -> Any:
    def check(self: Any) -> bool:
        final = self.steps[-1][1]
        return final != "passthrough" and final is not None and hasattr(final, name)

    return check


class Pipeline(_SklearnPipeline):
    """A scikit-learn :class:`~sklearn.pipeline.Pipeline` that also ranks labels.

    Everything is scikit-learn's; added is :meth:`predict_top_k` (the transforms, then the
    final model's own ``predict_top_k``), available when the final step has it, as every
    model of the package does.  ``mlneighbors fit`` saves one of these (the scaler and the
    model) with the training file's label names in ``label_names_``;
    :func:`mlneighbors.load` returns one for a file that holds a plain scikit-learn Pipeline
    whose model ranks labels (a file written before this class existed).

    Parameters
    ----------
    steps : list of (name, estimator) tuples
        The transforms, then the model (as for scikit-learn's Pipeline).
    transform_input : list of str, default=None
        As for scikit-learn's Pipeline (metadata routing).
    memory : str or object with the joblib.Memory interface, default=None
        As for scikit-learn's Pipeline (caching the fitted transforms).
    verbose : bool, default=False
        As for scikit-learn's Pipeline (the time each step takes).

    Attributes
    ----------
    training_ids_ : ndarray of shape (n_training_rows,)
        The identifiers of the final model's training rows (int64 or strings), which
        :meth:`partial_fit` extends and :meth:`forget` removes from.  :meth:`partial_fit`
        and :meth:`forget` change the final model only: the fitted transforms are kept.
    label_names_ : list of str
        The label names of the file the command line fitted it on (set by ``mlneighbors
        fit``; absent otherwise).
    feature_names_ : list of str
        The feature names of that file, where it names them (ARFF attributes, a CSV
        header): ``mlneighbors predict`` matches a file's columns to them by name. Set by
        ``mlneighbors fit``; absent otherwise.
    libsvm_index_base_ : {0, 1}
        Where that file was libsvm text: the index of its first feature, with which
        ``mlneighbors predict`` reads a libsvm file of new rows. Set by ``mlneighbors
        fit``; absent otherwise.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.preprocessing import MinMaxScaler
    >>> from mlneighbors import BRkNN, Pipeline
    >>> X = np.array([[0.0, 10.0], [0.1, 11.0], [1.0, 30.0], [1.1, 31.0]])
    >>> Y = np.array([[1, 0, 0], [1, 0, 1], [0, 1, 0], [0, 1, 1]])
    >>> model = Pipeline([("scale", MinMaxScaler()), ("model", BRkNN(2))]).fit(X, Y)
    >>> scores, labels = model.predict_top_k([[0.05, 10.5]], k=2)  # its 2 neighbours: rows 0 and 1
    >>> labels  # label 0 (both neighbours carry it), then label 2 (one does)
    array([[0, 2]])
    """

    @available_if(_final_has("predict_top_k"))
    @fill_doc
    def predict_top_k(self, X: Any, k: int) -> tuple[Any, Any]:
        """The ``k`` best labels of every row after the transforms: the final model's
        ``predict_top_k``.

        {top_k_sections}
            Best first.
        labels : ndarray of shape (n_queries, k)
            Label indices (into ``label_names_`` where the command line set it).

        Examples
        --------
        >>> import numpy as np
        >>> from mlneighbors import BRkNN, Pipeline
        >>> X, Y = np.array([[0.0], [0.1], [1.0], [1.1]]), np.array([[1, 0], [1, 0], [0, 1], [0, 1]])
        >>> Pipeline([("model", BRkNN(1))]).fit(X, Y).predict_top_k([[1.05]], k=1)[1]
        array([[1]])
        """
        Xt = X
        for _, _, transform in self._iter(with_final=False):
            Xt = transform.transform(Xt)
        return self.steps[-1][1].predict_top_k(Xt, k)

    @available_if(_final_has("explain"))
    def explain(self, X: Any) -> Any:
        """The final model's ``explain`` of the rows after the transforms, with the labels'
        names where the command line set them (``label_names_``).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_queries, n_features)
            The rows to explain, as given to ``predict``.

        Returns
        -------
        explanation : Explanation
            As the final model's ``explain`` (distances in the transformed space: after the
            scaler, and BLDA's projection where there is one).

        Examples
        --------
        >>> import numpy as np
        >>> from mlneighbors import BRkNN, Pipeline
        >>> X, Y = np.array([[0.0], [0.1], [1.0], [1.1]]), np.array([[1, 0], [1, 0], [0, 1], [0, 1]])
        >>> Pipeline([("model", BRkNN(1))]).fit(X, Y).explain([[1.05]]).terms["votes"]
        array([[0, 1]], dtype=int32)
        """
        Xt = X
        for _, _, transform in self._iter(with_final=False):
            Xt = transform.transform(Xt)
        return self.steps[-1][1].explain(Xt, label_names=getattr(self, "label_names_", None))

    # -- live models: rows added and removed without refitting the transforms ----------

    @property
    def training_ids_(self) -> Any:
        """The identifiers of the final model's training rows (its ``training_ids_``)."""
        return self.steps[-1][1].training_ids_

    def _transformed(self, X: Any) -> Any:
        Xt = X
        for _, _, transform in self._iter(with_final=False):
            Xt = transform.transform(Xt)
        return Xt

    @available_if(_final_has("partial_fit"))
    @fill_doc
    def partial_fit(self, X: Any, y: Any, ids: Any = None) -> Pipeline:
        """Add labelled rows to the final model: ``X`` through the fitted transforms as they
        are, then the final model's ``partial_fit``.

        The transforms are not refitted: a scaler keeps the ranges (a BLDA its projection)
        learned from the rows of ``fit``.  The result therefore differs from fitting the
        whole Pipeline on all the rows wherever a transform learns from its rows (a scaler,
        BLDA); it equals that fit when there is no such step.  Refit to take the new rows
        into the transforms too.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The new rows, with the features the Pipeline was fitted on.
        y : {array-like, sparse matrix} of shape (n_samples, n_labels)
            Their labels.
        {ids_parameter}

        Returns
        -------
        self : Pipeline

        Examples
        --------
        >>> import numpy as np
        >>> from mlneighbors import BRkNN, Pipeline
        >>> X, Y = np.array([[0.0], [0.1], [1.0], [1.1]]), np.array([[1, 0], [1, 0], [0, 1], [0, 1]])
        >>> model = Pipeline([("model", BRkNN(1))]).fit(X[:2], Y[:2])
        >>> model.partial_fit(X[2:], Y[2:]).training_ids_
        array([0, 1, 2, 3])
        """
        check_is_fitted(self)
        self.steps[-1][1].partial_fit(self._transformed(X), y, ids=ids)
        return self

    @available_if(_final_has("forget"))
    def forget(self, ids: Any) -> Pipeline:
        """Remove training rows by identifier: the final model's ``forget``.

        The fitted transforms are kept as they are: a scaler's ranges (a BLDA's projection)
        still reflect the forgotten rows, which a refit on the remaining rows would not.

        Parameters
        ----------
        ids : array-like of int or str
            Identifiers among ``training_ids_``; an unknown or repeated one is a
            ``ValueError`` naming it, and nothing is removed.

        Returns
        -------
        self : Pipeline
        """
        check_is_fitted(self)
        self.steps[-1][1].forget(ids)
        return self


def upgraded(model: Any) -> Any:
    """``model`` itself, or, for a plain scikit-learn Pipeline whose final step ranks labels
    (what ``mlneighbors fit`` saved before :class:`Pipeline` existed), the same object as a
    :class:`Pipeline` (same state, one method more).  A Pipeline ending in such a Pipeline
    (what ``mlneighbors fit blda-bknn`` saved before it wrote one flat Pipeline) is upgraded
    from the inside out, so that it ranks too."""
    if isinstance(model, _SklearnPipeline) and model.steps:
        upgraded(model.steps[-1][1])
    if type(model) is _SklearnPipeline and _final_has("predict_top_k")(model):
        model.__class__ = Pipeline
    return model
