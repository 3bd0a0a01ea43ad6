"""The docstring text that several metrics share, written once.

A metric's docstring names a fragment of :data:`FRAGMENTS` by a placeholder that starts a line,
``{bipartition_parameters}``; :func:`fill_doc` replaces it by the fragment, indented as the
placeholder is, and the rest of the placeholder's line follows the fragment's last line
(``{returns_higher} Two empty sets match.``): the package's filler,
:func:`mlneighbors._docstrings.fill_doc`, with these fragments.  The filled docstring is plain
numpydoc: it is what ``help()``, doctest, numpydoc's validation and the API pages read.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from .._docstrings import fill_doc as _fill_doc

_F = TypeVar("_F", bound=Callable[..., object])

_XC_REFERENCE = """
K. Bhatia, K. Dahiya, H. Jain, A. Mittal, Y. Prabhu and M. Varma, "The
extreme classification repository: multi-label datasets and code", 2016,
http://manikvarma.org/downloads/XC/XMLRepository.html
"""

_JPV_REFERENCE = """
H. Jain, Y. Prabhu and M. Varma, "Extreme multi-label loss functions for
recommendation, tagging, ranking & other missing label applications",
KDD 2016.
"""

#: name -> text; dedented, then indented as the placeholder that names it
FRAGMENTS: dict[str, str] = {
    # the bipartition metrics, metric(Y_true, Y_pred)
    "bipartition_parameters": """
        Parameters
        ----------
        Y_true : array-like or sparse matrix of shape (n_samples, n_labels)
            True binary label indicator (values 0/1 or False/True).
        Y_pred : array-like or sparse matrix of shape (n_samples, n_labels)
            Predicted binary label indicator.
        """,
    # the ranking metrics, metric(Y_true, scores)
    "ranking_parameters": """
        Parameters
        ----------
        Y_true : array-like or sparse matrix of shape (n_samples, n_labels)
            True binary label indicator.
        scores : array-like or sparse matrix of shape (n_samples, n_labels)
            Finite real scores; higher means more relevant.
        """,
    # the metrics at k, metric(Y_true, ranking, k)
    "at_k_parameters": """
        Parameters
        ----------
        Y_true : array-like or sparse matrix of shape (n_samples, n_labels)
            True binary label indicator; a sparse one is never densified.
        ranking : array-like of shape (n_samples, k'), or array-like or sparse matrix of shape (n_samples, n_labels)
            Either the label indices of each row's top k' labels, best first, as
            an integer array (the ``labels`` of a top-k prediction; k' >= k,
            no repeated label among the first k), or a real score matrix (float
            or bool; dense, or sparse with missing entries scoring 0), ranked by
            decreasing score, equal scores by increasing label index.
        k : int, default=5
            Number of top positions evaluated (>= 1). With a score matrix k may
            exceed n_labels: the positions past the last label hold no label.
        """,
    # the propensity-scored metrics at k: their two keyword arguments and what they return
    "ps_parameters": """
        propensities : array-like of shape (n_labels,), default=None
            Label propensities ``p_l > 0`` (:func:`propensities`); label l weighs ``1 / p_l``.
        Y_train : array-like or sparse matrix of shape (n_train, n_labels), default=None
            Training labels, from which the propensities are computed with the
            defaults A = 0.55, B = 1.5 (call :func:`propensities` for others).
            Exactly one of ``propensities`` and ``Y_train`` is given.
        """,
    "ps_returns": """
        Returns
        -------
        float
            In [0, 1]; higher is better; 1 for a ranking that puts each instance's
            true labels first, rarest first. NaN when no instance has a relevant label.
        """,
    "ps_normalisation": """
        The propensity-scored sums are normalised as the repository's
        ``precision_wt_k`` and ``nDCG_wt_k`` do, by the best value achievable:
        the sum over instances of the propensity-scored value is divided by the
        sum over instances of the value of the best ranking, which puts each
        instance's true labels first in decreasing order of ``1 / p_l`` (the k
        largest inverse propensities among its true labels). This is a ratio of
        means, not a mean of per-instance ratios: an instance whose true labels
        are rare weighs more. Instances without relevant labels add 0 to both
        sums, so they do not count; NaN when no instance has a relevant label
        (0/0). The KDD 2016 paper defines PSP@k and PSnDCG@k without this
        normalisation.
        """,
    # a Returns section: a float in [0, 1], and which way is better
    "returns_higher": """
        Returns
        -------
        float
            In [0, 1]; higher is better.
        """,
    "returns_lower": """
        Returns
        -------
        float
            In [0, 1]; lower is better.
        """,
    # References sections: the repository's definitions, and those with propensities
    "xc_references": "References\n----------\n" + _XC_REFERENCE.strip(),
    "ps_references": "References\n----------\n" + _JPV_REFERENCE.strip() + "\n" + _XC_REFERENCE.strip(),
}

def fill_doc(func: _F) -> _F:
    """Replace the ``{name}`` placeholders that start lines of ``func``'s docstring by
    :data:`FRAGMENTS` (an unknown name is a ``KeyError`` at import)."""
    return _fill_doc(func, FRAGMENTS)
