"""scikit-learn's estimator checks over every estimator of the package, in one place.

The estimators are the examples of the package's registry (``tests/registry.py``): every rule of
every model, with no list here to keep.  Each expected failure carries its one-line reason in
``EXPECTED_FAILURES``; pytest's ``xfail_strict`` setting (``pyproject.toml``) makes a check that
starts passing fail the run, so the table cannot go stale.  (scikit-learn 1.8's
``parametrize_with_checks(xfail_strict=...)`` does not exist in 1.6, the oldest version the
package supports; without it the marks follow that setting.)

An expected failure hides every other fault its check would find (``check_classifier_multioutput``
is also scikit-learn's only range check of ``predict_proba``), so what no model may fail is
checked again in ``test_contracts.py``, which has no such table.
"""

from __future__ import annotations

from sklearn.utils.estimator_checks import parametrize_with_checks

from mlneighbors import BKNN, BRkNN, LPkNN

from ..registry import models

ESTIMATORS = [param.values[0] for param in models()]

# check_classifier_multioutput asserts predict_proba(X).round() == predict(X).  The scores
# of these rules are the per-label vote fractions, which their predictions do not
# threshold (BRkNN-a passes: its fallback happens not to fire on the check's data).
_NOT_A_THRESHOLD = (
    "predict is not a 0.5 threshold of the scores: {rule}, while predict_proba reports the "
    "per-label vote fractions used for ranking (docs/user_guide/brknn_family.rst, 'What the "
    "scores mean for ranking metrics')"
)

#: (estimator class, parameters that must match) -> {check name: reason}
EXPECTED_FAILURES = [
    # with weights="distance" the check's data happen to give LPkNN's set, and -b's top m below,
    # exactly the labels above 0.5
    (LPkNN, {"weights": "uniform"}, {"check_classifier_multioutput": _NOT_A_THRESHOLD.format(
        rule="LPkNN predicts the most frequent label set")}),
    (BRkNN, {"extension": "b", "weights": "uniform"}, {"check_classifier_multioutput": _NOT_A_THRESHOLD.format(
        rule="BRkNN-b predicts the m labels with most votes")}),
    (BKNN, {}, {"check_classifier_multioutput": (
        "classes_ is scikit-learn's multi-output list (one [0, 1] per label, which its scorers read "
        "to recognise a multi-label classifier); this check indexes classes_ with the signs of "
        "decision_function as if it were one array")}),
]


def expected_failed_checks(estimator):
    for cls, params, failures in EXPECTED_FAILURES:
        mine = estimator.get_params()
        if isinstance(estimator, cls) and all(mine.get(k) == v for k, v in params.items()):
            return failures
    return {}


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=expected_failed_checks)
def test_sklearn_contract(estimator, check):
    check(estimator)
