"""IBLR-ML and IBLR-ML+: a toy case by hand, the loop twin, and what the regularisation means.

The twin below transcribes ``docs/user_guide/iblr.rst`` one row and one label at a time (its
neighbours from the loop search of ``twins.py``); only the regression itself is scikit-learn's
``LogisticRegression``, fitted on inputs the twin builds and standardises with Python loops.  An
iterative solver on inputs equal up to rounding stops at iterates equal up to its tolerance, so
scores are compared with ``rtol=1e-6`` and predictions exactly.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression

from mlneighbors import IBLRML

from . import twins
from .conftest import corner_data, to_format

pytestmark = pytest.mark.filterwarnings("ignore:.*no positive training example:UserWarning")


# -- the loop twin ---------------------------------------------------------------------------


def iblr_loop(X, Y, Q, k, ridge, plus=False):
    """(scores, predictions) of IBLR-ML(+) as the user guide states it, by loops."""
    Xr, Qr = twins.as_rows(X), twins.as_rows(Q)
    Y = [[int(v) for v in row] for row in twins.as_rows(Y)]
    n, L = len(Y), len(Y[0])

    def inputs(neighbours, x):
        evidence = [sum(Y[a][j] for a in neighbours) / k for j in range(L)]
        return evidence + (list(x) if plus else [])

    Z = [inputs(twins.nearest(Xr, Xr[i], k, exclude=i), Xr[i]) for i in range(n)]
    p = len(Z[0])
    factor = []
    for c in range(p):  # Weka's standardisation: sample standard deviation; a constant column drops out
        column = [row[c] for row in Z]
        mean = sum(column) / n
        sd = math.sqrt(sum((v - mean) ** 2 for v in column) / (n - 1))
        factor.append(0.0 if sd <= 1e-12 * max(1.0, max(abs(v) for v in column)) else 1.0 / sd)
    Zs = np.array([[row[c] * factor[c] for c in range(p)] for row in Z])
    coef, intercept = [], []
    for label in range(L):
        y = [Y[i][label] for i in range(n)]
        if sum(y) in (0, n):  # nothing to regress: the label is never (or always) there
            coef.append([0.0] * p)
            intercept.append(math.inf if sum(y) == n else -math.inf)
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            model = LogisticRegression(C=1 / (2 * ridge), tol=1e-6, max_iter=1000).fit(Zs, y)
        coef.append([w * f for w, f in zip(model.coef_[0].tolist(), factor, strict=True)])
        intercept.append(float(model.intercept_[0]))
    scores, predictions = [], []
    for q in Qr:
        z = inputs(twins.nearest(Xr, q, k), q)
        row_s, row_p = [], []
        for label in range(L):
            margin = intercept[label] + sum(w * v for w, v in zip(coef[label], z, strict=True))
            score = 1.0 / (1.0 + math.exp(-margin)) if margin > -700 else 0.0
            row_p.append(1 if score >= 0.5 else 0)
            row_s.append(twins.ABOVE_HALF if score == 0.5 else score)
        scores.append(row_s)
        predictions.append(row_p)
    return scores, predictions


def assert_close(model, Q, twin_result):
    scores, predictions = twin_result
    got = model.predict_proba(Q)
    np.testing.assert_allclose(got, np.array(scores), rtol=1e-6, atol=1e-9)
    clear = np.abs(np.array(scores) - 0.5) > 1e-6  # a score at the threshold up to the solver's tolerance
    np.testing.assert_array_equal(model.predict(Q)[clear], np.array(predictions)[clear])


@pytest.mark.parametrize("variant", ["everybody", "empty"])
@pytest.mark.parametrize("k", [1, 4, 10])
@pytest.mark.parametrize("plus", [False, True])
@pytest.mark.parametrize("ridge", [0.01, 1.0])
def test_equals_loop_twin(variant, fmt, k, plus, ridge):
    X, Y, Q = corner_data(np.random.default_rng(7), variant, n_features=3)
    model = IBLRML(k, plus=plus, ridge=ridge).fit(to_format(X, fmt), sp.csr_matrix(Y) if fmt == "csr" else Y)
    assert_close(model, to_format(Q, fmt), iblr_loop(X, Y, Q, k, ridge, plus))


@pytest.mark.parametrize("plus", [False, True])
def test_equals_loop_twin_on_continuous_data_with_the_default_ridge(plus):
    rng = np.random.default_rng(3)
    X, _, Q = corner_data(rng, continuous=True, n_train=80, n_features=4)
    Y = (X[:, :3] + rng.normal(scale=1.5, size=(80, 3)) > 0).astype(int)  # noisy labels: not separable
    model = IBLRML(5, plus=plus).fit(X, Y)
    assert_close(model, Q, iblr_loop(X, Y, Q, 5, 1e-8, plus))


@pytest.mark.parametrize("plus", [False, True])
def test_sparse_evidence_of_many_labels_equals_the_loop_twin_on_any_number_of_threads(plus):
    """Many rare labels make the evidence mostly zeros: the regressions then read it (and, for
    IBLR-ML+, mostly-zero features) as a sparse matrix, fitted on one thread or two."""
    from mlneighbors import iblr

    rng = np.random.default_rng(5)
    X = np.where(rng.random((90, 6)) < 0.8, 0.0, rng.normal(size=(90, 6)))
    Y = np.zeros((90, 30), dtype=int)
    Y[np.arange(90), rng.integers(0, 30, size=90)] = 1  # one label a row, among 30
    Y[:, 0] |= (X[:, 0] + rng.normal(scale=1.0, size=90) > 0.5).astype(int)  # a noisy, learnable label
    Q = rng.normal(size=(15, 6))
    model = IBLRML(3, plus=plus, ridge=0.1, n_jobs=1).fit(X, Y)
    _, C = model._loo_counts()
    inputs = model._inputs(C, X)
    assert iblr._sparse_pays(inputs * iblr._column_scale(inputs))  # the sparse path is taken
    assert_close(model, Q, iblr_loop(X, Y, Q, 3, 0.1, plus))
    threads = IBLRML(3, plus=plus, ridge=0.1, n_jobs=2).fit(X, Y)
    np.testing.assert_array_equal(threads.coef_, model.coef_)
    np.testing.assert_array_equal(threads.intercept_, model.intercept_)


# -- a toy case by hand ------------------------------------------------------------------------

# x on a line, k = 1.  Leave-one-out nearest: 0->1, 1->0, 2->1, 3->4, 4->3, 5->4.
X = np.array([[0.0], [1.0], [3.0], [10.0], [11.0], [13.0]])
Y = np.array([[1, 0], [1, 0], [0, 1], [0, 1], [0, 1], [1, 1]])


def test_toy_evidence_and_regressions_by_hand():
    model = IBLRML(1, ridge=0.5).fit(X, Y)
    # the evidence of the training rows: their one neighbour's labels
    E = np.array([[1, 0], [1, 0], [1, 0], [0, 1], [0, 1], [0, 1]], dtype=float)
    np.testing.assert_array_equal(model._margin_terms(E.astype(int), None)["evidence"], E)
    # each label's regression on the standardised evidence, C = 1 / (2 ridge) = 1
    factor = 1 / E.std(axis=0, ddof=1)
    for label in range(2):
        ref = LogisticRegression(C=1.0, tol=1e-6, max_iter=1000).fit(E * factor, Y[:, label])
        np.testing.assert_allclose(model.coef_[label], ref.coef_[0] * factor, rtol=1e-6)
        np.testing.assert_allclose(model.intercept_[label], ref.intercept_[0], rtol=1e-6)
    # a query at 12.4: its neighbour is row 5 (labels 1, 1), evidence (1, 1)
    margin = model.intercept_ + model.coef_ @ np.array([1.0, 1.0])
    np.testing.assert_allclose(model.predict_proba([[12.4]])[0], 1 / (1 + np.exp(-margin)), rtol=1e-12)
    e = model.explain([[12.4]])
    np.testing.assert_array_equal(e.terms["evidence"], [[1.0, 1.0]])
    np.testing.assert_allclose(e.terms["margin"][0], margin, rtol=1e-12)
    assert "feature_part" not in e.terms


def test_plus_reads_the_features():
    model = IBLRML(1, plus=True, ridge=0.5).fit(X, Y)
    assert model.coef_.shape == (2, 3)
    assert np.all(model.coef_[:, 2] != 0)
    e = model.explain([[12.4]])
    np.testing.assert_allclose(e.terms["feature_part"][0], model.coef_[:, 2] * 12.4, rtol=1e-12)


def test_a_label_nobody_has_scores_0_and_one_everybody_has_scores_1():
    Y3 = np.column_stack([Y, np.zeros(6, int), np.ones(6, int)])
    model = IBLRML(2, ridge=0.5).fit(X, Y3)
    proba = model.predict_proba([[0.5], [12.0]])
    np.testing.assert_array_equal(proba[:, 2:], [[0.0, 1.0], [0.0, 1.0]])
    np.testing.assert_array_equal(model.predict([[0.5]])[0, 2:], [0, 1])
    assert model.n_iter_[2] == model.n_iter_[3] == 0
    assert np.all(model.coef_[2:] == 0)


# -- the regularisation ----------------------------------------------------------------------


def test_a_large_ridge_leaves_the_label_frequency():
    rng = np.random.default_rng(0)
    X2 = rng.normal(size=(60, 3))
    Y2 = (rng.random((60, 4)) < [0.2, 0.5, 0.7, 0.9]).astype(int)
    proba = IBLRML(5, ridge=1e8).fit(X2, Y2).predict_proba(rng.normal(size=(5, 3)))
    np.testing.assert_allclose(proba, np.broadcast_to(Y2.mean(axis=0), proba.shape), atol=1e-5)


def test_the_ridge_penalises_standardised_inputs_so_the_features_scale_changes_nothing():
    rng = np.random.default_rng(1)
    X2 = rng.normal(size=(80, 3))
    Y2 = (X2[:, :2] + rng.normal(size=(80, 2)) > 0).astype(int)
    Q2 = rng.normal(size=(10, 3))
    a = IBLRML(5, plus=True, ridge=1.0).fit(X2, Y2).predict_proba(Q2)
    b = IBLRML(5, plus=True, ridge=1.0).fit(100 * X2, Y2).predict_proba(100 * Q2)
    np.testing.assert_allclose(a, b, rtol=1e-5)


def test_separable_data_with_the_default_ridge_give_near_certain_scores():
    Xs = np.arange(20.0)[:, None]
    Ys = (Xs[:, 0] >= 10).astype(int)[:, None]
    model = IBLRML(3, plus=True).fit(Xs, Ys)
    proba = model.predict_proba([[2.0], [17.0]])
    assert proba[0, 0] < 1e-3 and proba[1, 0] > 1 - 1e-3
    assert 0 < model.n_iter_[0] < 1000


def test_a_solver_stopped_at_its_limit_warns(monkeypatch):
    import mlneighbors.iblr

    monkeypatch.setattr(mlneighbors.iblr, "_MAX_ITER", 2)
    with pytest.warns(ConvergenceWarning, match=r"labels \[0, 1\] stopped at 2 iterations"):
        IBLRML(1, plus=True).fit(X, Y)


def test_bad_ridge():
    with pytest.raises(ValueError, match="ridge"):
        IBLRML(ridge=0.0).fit(X, Y)
    with pytest.raises(ValueError, match="ridge"):
        IBLRML(ridge=np.inf).fit(X, Y)


def test_updates_refit():
    assert IBLRML.update_rule == "refit"
    live = IBLRML(2, ridge=0.5).fit(X[:4], Y[:4]).partial_fit(X[4:], Y[4:])
    np.testing.assert_array_equal(live.predict_proba(X), IBLRML(2, ridge=0.5).fit(X, Y).predict_proba(X))
