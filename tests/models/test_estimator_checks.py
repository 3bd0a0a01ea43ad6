"""scikit-learn's estimator checks over every model, with its default parameters."""

from __future__ import annotations

import pytest
from sklearn.utils.estimator_checks import check_estimator, parametrize_with_checks

from mlneighbors import BRkNN, DMLkNN, LAMLkNN, LPkNN, MLkNN

ESTIMATORS = [
    MLkNN(),
    BRkNN(),
    BRkNN(extension="a"),
    BRkNN(extension="b"),
    LPkNN(),
    DMLkNN(),
    LAMLkNN(random_state=0),
]

# check_classifier_multioutput asserts predict_proba(X).round() == predict(X).  The spec's
# scores for these two rules are the per-label vote fractions, which their predictions do
# not threshold (BRkNN-a passes: its fallback happens not to fire on the check's data).
_NOT_A_THRESHOLD = {
    "check_classifier_multioutput": (
        "predict is not a 0.5 threshold of the scores: {rule}, while predict_proba reports "
        "the per-label vote fractions used for ranking (ALGORITHMS.md)"
    )
}


def expected_failed_checks(estimator):
    if isinstance(estimator, LPkNN):
        rule = "LPkNN predicts the most frequent label set"
    elif isinstance(estimator, BRkNN) and estimator.extension == "b":
        rule = "BRkNN-b predicts the m labels with most votes"
    else:
        return {}
    return {name: reason.format(rule=rule) for name, reason in _NOT_A_THRESHOLD.items()}


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=expected_failed_checks, xfail_strict=True)
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)


@pytest.mark.parametrize("estimator", [MLkNN(), BRkNN(), LPkNN(), DMLkNN(), LAMLkNN()], ids=repr)
def test_check_estimator_passes(estimator):
    results = check_estimator(
        estimator,
        expected_failed_checks=expected_failed_checks(estimator),
        on_fail=None,
        on_skip=None,
    )
    failed = [(r["check_name"], r["exception"]) for r in results if r["status"] == "failed"]
    assert failed == []
    assert sum(r["status"] == "passed" for r in results) > 40
