"""Docstring text that several objects share, written once, and the filler that puts it in.

A docstring names a fragment by a placeholder that starts a line, ``{n_jobs_parameter}``;
:func:`fill_doc` replaces it by the fragment, indented as the placeholder is, and the rest of
the placeholder's line follows the fragment's last line.  The filled docstring is plain
numpydoc: it is what ``help()``, doctest, numpydoc's validation and the API pages read.
:data:`FRAGMENTS` holds the estimators' shared parameters and attributes, and the texts that
other parts of the package repeat (indexes, recall, splitting, rank tests); the metrics keep
theirs in :mod:`mlneighbors.metrics._docstrings`.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Mapping
from typing import TypeVar

_T = TypeVar("_T")

_PLACEHOLDER = re.compile(r"^(?P<indent>[ \t]*)\{(?P<name>\w+)\}(?P<rest>.*)$", re.MULTILINE)

_NEIGHBORS_ATTRIBUTE = """
    n_neighbors_ : int
        The ``k`` used: ``n_neighbors``, clipped to what the training set allows."""

_TARGET_ATTRIBUTES = """
    n_labels_ : int
    classes_ : ndarray or list of ndarray
        The classes of a 1-D target; for a label indicator, one array ``[0, 1]`` per label.
    n_features_in_ : int
    """

#: name -> text; dedented, then indented as the placeholder that names it
FRAGMENTS: dict[str, str] = {
    # the backend protocol's leave-one-out hook (BaseIndex.loo_query_rows and its overrides)
    "loo_rows_parameters": """
        X : ndarray or CSR matrix of shape (n_samples_fit_, n_features)
            The indexed rows, validated.
        rows : ndarray of int or None
            The indexed rows to answer (None: all).
        m : int
            Neighbours of each, the row itself among them.
        """,
    # the rows an index's build_rows hook is given
    "build_rows_parameter": """
        X : ndarray or CSR matrix of shape (n_samples, n_features)
            The validated rows to index.
        """,
    # n_neighbors of a model whose fit counts leave-one-out neighbours, and of one that does not
    "n_neighbors_loo_parameter": """
        n_neighbors : int, default=10
            ``k``, at least 1; clipped to ``n_samples - 1`` with a ``NeighborsWarning`` when
            the training set is smaller (leave-one-out leaves ``n - 1`` neighbours).
        """,
    "n_neighbors_parameter": """
        n_neighbors : int, default=10
            ``k``, at least 1; clipped to ``n_samples`` with a ``NeighborsWarning`` when the
            training set is smaller.
        """,
    "metric_parameter": """
        metric : {"euclidean", "cosine"}, default="euclidean"
            Prefer "cosine" for sparse text (bag of words, tf-idf): Euclidean distances between
            word-count rows mostly measure document length (ML-kNN's average precision on
            bibtex: 0.345 Euclidean, 0.510 cosine).  Features are never rescaled.
        """,
    # the search's parameters, named only (ML-kNN's docstring describes them)
    "backend_parameters_named": """
        backend : str or index object, default="exact"
        backend_params : dict, default=None
        n_jobs : int, default=None
        """,
    "backend_parameter": """
        backend : str or index object, default="exact"
            A registered neighbour backend (``mlneighbors.neighbors``) or any object with
            ``build(X)`` and ``query(Q, k)``.
        """,
    "backend_params_parameter": """
        backend_params : dict, default=None
            Keyword arguments of the backend.
        """,
    "n_jobs_parameter": """
        n_jobs : int, default=None
            Threads of the neighbour search, where the backend supports it.
        """,
    # the fitted attributes every kNN model has; those of any model with a target
    "neighbors_attributes": _NEIGHBORS_ATTRIBUTE + _TARGET_ATTRIBUTES,
    "target_attributes": _TARGET_ATTRIBUTES,
    # the methods' shared sections
    "fit_parameters": """
        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : {array-like, sparse matrix} of shape (n_samples, n_labels) or (n_samples,)
            A binary label indicator, or 1-D class labels.

        Returns
        -------
        self : object
        """,
    # the identifiers of training rows (a model's fit and partial_fit)
    "ids_parameter": """
        ids : array-like of shape (n_samples,), default=None
            Unique integer or string identifiers of the rows (``training_ids_``), by which
            ``forget`` removes rows and ``explain`` names neighbours; None: ``0 .. n-1`` at
            ``fit``, the numbers after the largest integer identifier at ``partial_fit``.
        """,
    # a method of the queries X alone: its Parameters and the heading of its Returns
    "x_samples_sections": """
        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        """,
    "x_queries_sections": """
        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_queries, n_features)

        Returns
        -------
        """,
    # predict_top_k's Parameters and the first line of its Returns
    "top_k_sections": """
        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_queries, n_features)
        k : int
            ``1 <= k <= n_labels``.

        Returns
        -------
        scores : ndarray of shape (n_queries, k)
        """,
    # the BKNN and BLDA paper
    "wang2010_references": """
        References
        ----------
        H. Wang, C. Ding, H. Huang. Multi-label classification: inconsistency and class
        balanced k-nearest neighbor. AAAI 2010.
        """,
    # the neighbour indexes' fitted attributes
    "index_attributes": """
        n_samples_fit_ : int
            Number of indexed rows.
        n_features_in_ : int
            Number of features.
        """,
    # the recall measures of neighbors._recall, f(dist, exact_dist)
    "recall_parameters": """
        Parameters
        ----------
        dist : ndarray of shape (n_rows, k)
            Distances of the neighbours an index returned (float64 reference distances).
        exact_dist : ndarray of shape (n_rows, k)
            The exact k nearest distances of the same rows, ascending.
        """,
    # iterative stratification (model_selection._split)
    "sechidis_references": """
        References
        ----------
        .. [1] K. Sechidis, G. Tsoumakas and I. Vlahavas, "On the Stratification
           of Multi-Label Data", ECML PKDD 2011, LNCS 6913, pp. 145-158.
        """,
    # the post-hoc tests on average ranks (benchmark._stats)
    "average_ranks_parameters": """
        Parameters
        ----------
        average_ranks : array-like of shape (n_models,)
            Each model's mean rank over the datasets (rank 1 the best).
        n_datasets : int
            ``N``, the number of datasets ranked.
        """,
}


def fill_doc(obj: _T, fragments: Mapping[str, str] = FRAGMENTS) -> _T:
    """Replace the ``{name}`` placeholders that start lines of ``obj``'s docstring by
    ``fragments`` (an unknown name is a ``KeyError`` at import); ``obj`` is returned, so
    that this decorates a class or a function."""

    def fragment(match: re.Match[str]) -> str:
        text = textwrap.dedent(fragments[match["name"]]).strip("\n")
        return textwrap.indent(text, match["indent"]) + match["rest"]

    if obj.__doc__:  # None under python -OO
        obj.__doc__ = _PLACEHOLDER.sub(fragment, obj.__doc__)
    return obj
