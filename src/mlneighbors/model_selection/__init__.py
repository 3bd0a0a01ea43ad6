"""Splitting multi-label data and evaluating models on the splits.

Splitting (``_split``)
    :class:`MultilabelStratifiedKFold` and :func:`iterative_stratification`: folds whose
    label proportions are as equal as iterative stratification (Sechidis, Tsoumakas &
    Vlahavas 2011) achieves; scikit-learn's splitter protocol.
Validation (``_validation``)
    :func:`evaluate_models`, the one evaluation loop of the package (each split: scale,
    fit, predict, score every model, one shared neighbour search), and its one-model form
    :func:`cross_validate`; :func:`make_scaler` (the scalings of the loop and of the
    command line).
"""

from ._split import MultilabelStratifiedKFold, iterative_stratification
from ._validation import CVResult, FittedSplit, cross_validate, evaluate_models, make_scaler

__all__ = [
    "CVResult",
    "FittedSplit",
    "MultilabelStratifiedKFold",
    "cross_validate",
    "evaluate_models",
    "iterative_stratification",
    "make_scaler",
]
