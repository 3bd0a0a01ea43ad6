"""Multi-label evaluation measures: MULAN's, and the Extreme Classification Repository's at k.

Two families following MULAN (Tsoumakas et al.), whose definitions, zero
denominators and differences from scikit-learn the user guide states
(:doc:`/user_guide/metrics`, ``docs/user_guide/metrics.rst``), and a third from
extreme classification:

* **Bipartition metrics** ``metric(Y_true, Y_pred)`` compare the predicted
  label sets ``Z_i`` with the true sets ``Y_i``: Hamming loss, subset
  accuracy, the example-based accuracy / precision / recall / F1 and the
  label-based micro and macro precision / recall / F1.
* **Ranking metrics** ``metric(Y_true, scores)`` use a real-valued score per
  (instance, label): one-error, coverage, ranking loss, (example-based,
  ranking) average precision and the label-based mean average precision
  ``label_map``.
* **Metrics at k** ``metric(Y_true, ranking, k=...)`` score the k labels
  ranked first, with the definitions of the Extreme Classification
  Repository (Bhatia, Dahiya, Jain, Mittal, Prabhu & Varma): precision and
  nDCG at k, and their propensity-scored forms (Jain, Prabhu & Varma, KDD
  2016), which weight label l by ``1 / p_l`` (:func:`propensities`) and are
  normalised by the best value achievable. ``ranking`` is a score matrix or
  the label indices of a top-k prediction, best first. A sparse ``Y_true`` or
  sparse scores are never densified: the work goes in blocks of rows.

Every function returns a Python ``float``. :data:`METRICS` describes every
metric (:class:`Metric`) and :func:`evaluate` computes several of them from
one validation of the inputs.

Conventions shared by every function
------------------------------------
* ``Y_true`` and ``Y_pred`` are binary indicator matrices of shape
  ``(n_samples, n_labels)``: dense array-likes (bool, int or float holding
  only 0 and 1) or scipy sparse matrices / arrays in any format. Anything else
  raises ``ValueError`` naming the offending values.
* ``scores`` is a real ``(n_samples, n_labels)`` matrix (dense, or sparse,
  which is densified except by the metrics at k); NaN and +-inf are rejected
  with ``ValueError``.
* **Strict ranks and the tie rule.** In each row the labels are ranked by
  decreasing score; equal scores are ranked by increasing label index (for
  equal scores label 0 is ranked above label 3). Rank 1 is the top. Note that
  MULAN's ``MultiLabelOutput.ranksFromValues`` breaks ties the other way
  round (higher index first); this package fixes the lower-index rule.
* **Zero denominators** follow MULAN's ``InformationRetrievalMeasures`` and
  are stated in each docstring.
* **Sparse scores**: a missing entry is a score of 0, ranked among the other
  zeros by the tie rule. (The repository's MATLAB tools differ: their
  ``sort_sparse_mat`` ranks only the stored entries, so a missing entry never
  reaches the top k; the two agree when every row stores k positive scores.)

Edge-case decisions, in one place
---------------------------------
* Example-based: both sets empty -> 1 (accuracy, precision, recall, F1);
  ``|Z| = 0`` with ``Y`` non-empty -> precision 0; ``|Y| = 0`` with ``Z``
  non-empty -> recall 0 (and accuracy, F1 0 by their formulas).
* Label-based, per label and for the pooled micro counts alike:
  ``tp + fp + fn = 0`` -> P = R = F1 = 1; else ``tp + fp = 0`` -> P = 0 and
  ``tp + fn = 0`` -> R = 0. Macro F1 is the mean of per-label F1s.
* One-error: an instance without relevant labels is an error (MULAN).
* Coverage and ranking loss: an instance without relevant labels (and, for
  ranking loss, one with every label relevant) contributes 0 and counts.
* Average precision: instances without relevant labels are skipped; NaN if
  every instance is skipped (MULAN's 0/0).
* ``label_map``: instances with equal scores are ranked by increasing
  instance index; labels without positive instances are skipped; NaN if every
  label is skipped (MULAN's ``MeanAveragePrecision``).
* At k (the repository's conventions): an instance without relevant labels
  scores 0 in P@k and nDCG@k and counts in the mean; PSP@k and PSnDCG@k are
  ratios of sums over instances (to which such an instance adds 0), NaN when
  no instance has a relevant label.

Evaluating 100 000 x 1000 matrices is fine: everything is vectorised and the
ranking metrics work on blocks of rows (labels for ``label_map``) of about a
million entries, so the extra memory stays bounded.
"""

# One module a family of metrics: _example_based (Hamming loss, subset accuracy, the
# example-based P / R / F1), _label_based (micro and macro), _ranking, _at_k and _propensity (the
# Extreme Classification Repository's); over them _registry (METRICS) and _evaluate; under them
# _bipartition (the counts the bipartition metrics share), _validation (the input checks) and
# _docstrings (the docstring text several metrics share).
from ._at_k import ndcg_at_k, precision_at_k, psndcg_at_k, psprecision_at_k
from ._evaluate import evaluate
from ._example_based import (
    example_accuracy,
    example_f1,
    example_precision,
    example_recall,
    hamming_loss,
    subset_accuracy,
)
from ._label_based import macro_f1, macro_precision, macro_recall, micro_f1, micro_precision, micro_recall
from ._propensity import propensities
from ._ranking import average_precision, coverage, label_map, one_error, ranking_loss
from ._registry import METRICS, Metric
from ._validation import MatrixLike  # noqa: F401  (the inputs' type, importable from here as before)

__all__ = [
    "METRICS",
    "Metric",
    "average_precision",
    "coverage",
    "evaluate",
    "example_accuracy",
    "example_f1",
    "example_precision",
    "example_recall",
    "hamming_loss",
    "label_map",
    "macro_f1",
    "macro_precision",
    "macro_recall",
    "micro_f1",
    "micro_precision",
    "micro_recall",
    "ndcg_at_k",
    "one_error",
    "precision_at_k",
    "propensities",
    "psndcg_at_k",
    "psprecision_at_k",
    "ranking_loss",
    "subset_accuracy",
]

# doctest.testmod(mlneighbors.metrics) looks only at what a module defines itself: the examples
# of the public names, which the family modules define, are listed here for it
__test__ = {name: globals()[name] for name in __all__ if name != "METRICS"}
