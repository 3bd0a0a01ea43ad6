"""BKNN: hand-computed case, loop twins, log space, thresholds, contract and bad input."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import NotFittedError

from mlneighbors import BKNN
from mlneighbors.bknn import balanced_scores, learn_thresholds, signal_pvalues
from mlneighbors.exceptions import LabelWarning
from mlneighbors.neighbors import ExactIndex, ShardedIndex

from .twins import (
    best_f_brute,
    bknn_neighbour_sq_distances,
    bknn_scores_loop,
    bknn_scores_naive,
    bknn_threshold_loop,
    f_alpha,
    mann_whitney_pvalue_loop,
)


def fit_quiet(model, X, Y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LabelWarning)
        return model.fit(X, Y)


def scores_f(model, Q):
    """The balanced scores f: predict_proba is (f + 1) / n_labels."""
    return model.predict_proba(Q) * model.n_labels_ - 1.0


def test_hand_computed_case():
    X = np.array([[0.0], [1.0], [3.0]])
    Y = np.array([[1, 0], [1, 1], [0, 1]])
    model = BKNN(n_per_label=1, sigma=1.0).fit(X, Y)
    # query 0: label 0 -> row 0 at d = 0 (W = 1); label 1 -> row 1 at d = 1 (W = e^-1/2)
    w = math.exp(-0.5)
    sbar = (1 + w) / 2
    expected = [(1 - sbar) / sbar, (w - sbar) / sbar]
    np.testing.assert_allclose(scores_f(model, [[0.0]])[0], expected, rtol=1e-12)
    # leave-one-out training scores of row 0: label 0 -> row 1 (d = 1), label 1 -> row 1
    # (d = 1): f = 0 for both; row 2: label 0 -> row 1 (d = 2), label 1 -> row 1 (d = 2)
    loo = bknn_scores_loop(X, Y, X, 1, 1.0, loo=True)
    np.testing.assert_allclose(loo[0], [0.0, 0.0], atol=1e-15)


def test_scores_match_loop_twin(corner):
    X, Y, Q = corner
    model = fit_quiet(BKNN(n_per_label=5, sigma=2.0), X, Y)
    expected = bknn_scores_loop(X, Y, Q, 5, 2.0)
    np.testing.assert_allclose(scores_f(model, Q), expected, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("metric", ["euclidean", "cosine"])
def test_leave_one_out_thresholds_reach_the_brute_force_maximum(corner, metric):
    X, Y, _ = corner
    model = fit_quiet(BKNN(n_per_label=3, metric=metric, alpha=0.4, signal_level=None), X, Y)
    loo = bknn_scores_loop(X, Y, X, 3, model.sigma_, loo=True, metric=metric)
    for label in range(Y.shape[1]):
        best = best_f_brute(list(loo[:, label]), list(Y[:, label]), 0.4)
        reached = f_alpha(list(loo[:, label]), list(Y[:, label]), model.thresholds_[label], 0.4)
        assert reached == pytest.approx(best, abs=1e-12)
        assert model.train_fscores_[label] == pytest.approx(best, abs=1e-12)


@pytest.mark.parametrize("metric", ["euclidean", "cosine"])
@pytest.mark.parametrize("level", [0.01, 0.5])
def test_fitted_thresholds_and_signal_tests_match_the_loop_twins(corner, rng, metric, level):
    X, Y, _ = corner
    # and labels held by a few random rows (no signal: their thresholds get capped)
    extra = np.zeros((len(X), 4), dtype=Y.dtype)
    for column, m in enumerate([2, 3, 5, 8]):
        extra[rng.choice(len(X), m, replace=False), column] = 1
    Y = np.hstack([Y, extra])
    model = fit_quiet(BKNN(n_per_label=3, metric=metric, alpha=0.4, signal_level=level), X, Y)
    loo = bknn_scores_loop(X, Y, X, 3, model.sigma_, loo=True, metric=metric)
    capped = 0
    for label in range(Y.shape[1]):
        col, y = list(loo[:, label]), list(Y[:, label])
        p = mann_whitney_pvalue_loop(col, y)
        assert model.signal_pvalues_[label] == pytest.approx(p, rel=1e-9, abs=1e-12)
        rows, f = bknn_threshold_loop(col, y, 0.4, no_signal=p > level)
        assert (loo[:, label] > model.thresholds_[label]).sum() == rows
        assert model.train_fscores_[label] == pytest.approx(f, abs=1e-12)
        capped += p > level and rows < bknn_threshold_loop(col, y, 0.4, no_signal=False)[0]
    if level == 0.5:
        assert capped > 0  # the twin comparison covered the cap itself


def test_auto_sigma_is_the_mean_squared_distance_to_the_bth_member(corner):
    X, Y, _ = corner
    b = 4
    model = fit_quiet(BKNN(n_per_label=b), X, Y)
    values = []
    for i in range(len(X)):
        per_label = bknn_neighbour_sq_distances(X, Y, X[i], b, exclude=i)
        values += [d2[-1] for label, d2 in enumerate(per_label) if Y[i, label] and d2]
    assert model.sigma_ == pytest.approx(np.mean(values), rel=1e-12)


@pytest.mark.parametrize("metric", ["euclidean", "cosine"])
def test_masked_search_equals_one_index_per_label(corner, metric):
    X, Y, Q = corner
    fast = fit_quiet(BKNN(n_per_label=3, metric=metric), X, Y)
    # an exact index that is not the exact engine: one copy of it per label
    other = ShardedIndex(ExactIndex(metric=metric), n_shards=2)
    per_label = fit_quiet(BKNN(n_per_label=3, metric=metric, backend=other), X, Y)
    assert fast.sigma_ == pytest.approx(per_label.sigma_, rel=1e-12)
    np.testing.assert_allclose(fast.thresholds_, per_label.thresholds_, rtol=1e-9)
    np.testing.assert_allclose(fast.predict_proba(Q), per_label.predict_proba(Q), rtol=1e-9)
    np.testing.assert_array_equal(fast.predict(Q), per_label.predict(Q))


def test_dense_and_sparse_input_agree(corner):
    X, Y, Q = corner
    X = np.where(np.abs(X) < 0.7, 0.0, X)
    dense = fit_quiet(BKNN(n_per_label=3), X, Y)
    sparse = fit_quiet(BKNN(n_per_label=3), sp.csr_matrix(X), sp.csr_matrix(Y))
    np.testing.assert_allclose(dense.thresholds_, sparse.thresholds_, rtol=1e-9)
    np.testing.assert_allclose(dense.predict_proba(Q), sparse.predict_proba(sp.csr_matrix(Q)), rtol=1e-9)
    np.testing.assert_array_equal(dense.predict(Q), sparse.predict(Q))


def test_log_space_equals_the_naive_formula_where_it_does_not_underflow(rng):
    X = rng.normal(size=(30, 3))
    Y = (rng.random((30, 4)) < 0.5).astype(int)
    Y[0] = 1
    Q = rng.normal(size=(10, 3))
    model = BKNN(n_per_label=3, sigma=1.5).fit(X, Y)
    naive = bknn_scores_naive(X, Y, Q, 3, 1.5)
    assert np.isfinite(naive).all()
    np.testing.assert_allclose(scores_f(model, Q), naive, rtol=1e-11, atol=1e-13)


def test_high_dimensional_scores_stay_finite_where_the_naive_ratio_is_nan(rng):
    # d = 1000: every squared distance is about 2000, so exp(-d2 / 2) underflows to 0
    X = rng.normal(size=(40, 1000))
    Y = (rng.random((40, 3)) < 0.5).astype(int)
    Y[0] = 1
    Q = rng.normal(size=(5, 1000))
    model = BKNN(n_per_label=3, sigma=1.0).fit(X, Y)
    assert np.isnan(bknn_scores_naive(X, Y, Q[:2], 3, 1.0)).all()
    f = scores_f(model, Q)
    assert np.isfinite(f).all() and np.isfinite(model.thresholds_).all()
    np.testing.assert_allclose(f, bknn_scores_loop(X, Y, Q, 3, 1.0), rtol=1e-9, atol=1e-12)


def test_enron_scores_are_finite(shared_data):
    from mlneighbors import load_dataset

    train = load_dataset("enron", "train")
    test = load_dataset("enron", "test")
    X, Y = train.X[:400], train.Y[:400]
    model = fit_quiet(BKNN(sigma=0.05), X, Y)  # W = exp(-10 * d2): all underflow naively
    f = model.decision_function(test.X[:100])
    present = np.isfinite(model.thresholds_)
    assert np.isfinite(f[:, present]).all()
    assert np.isfinite(model.predict_proba(test.X[:100])).all()


# -- the threshold kernel ------------------------------------------------------------------


@pytest.mark.parametrize("alpha", [0.2, 0.5, 0.9])
def test_learn_thresholds_matches_brute_force(rng, alpha):
    n, L = 60, 8
    scores = np.round(rng.normal(size=(n, L)) * 2) / 4  # many ties
    Y = rng.random((n, L)) < rng.random(L)
    Y[:, 0] = True  # predicting everything is best
    Y[:, 1] = False  # no positive row
    h, best = learn_thresholds(scores, Y, alpha)
    for label in range(L):
        col, y = list(scores[:, label]), list(Y[:, label])
        expected = best_f_brute(col, y, alpha)
        assert best[label] == pytest.approx(expected, abs=1e-12)
        assert f_alpha(col, y, h[label], alpha) == pytest.approx(expected, abs=1e-12)
    assert h[0] == min(-2.0, scores[:, 0].min() - 1) and h[1] == np.inf and best[1] == 0.0


def test_signal_pvalues_match_scipy_and_the_pair_loop(rng):
    from scipy.stats import mannwhitneyu

    n, L = 50, 9
    scores = np.round(rng.normal(size=(n, L)) * 3) / 3  # many ties
    scores[:, 3] = 0.7  # one run of ties: nothing to compare
    Y = rng.random((n, L)) < rng.uniform(0.05, 0.6, L)
    Y[:, 0] = False  # no member
    Y[:, 1] = True  # every row
    Y[:, 2] = False
    Y[7, 2] = True  # one member
    Y[:, 4] = scores[:, 4] > np.median(scores[:, 4])  # strong signal
    p = signal_pvalues(scores, Y)
    for label in range(L):
        col, y = scores[:, label], Y[:, label]
        assert p[label] == pytest.approx(mann_whitney_pvalue_loop(list(col), list(y)), rel=1e-10, abs=1e-15)
        if 0 < y.sum() < n and label != 3:
            expected = mannwhitneyu(col[y], col[~y], alternative="greater", method="asymptotic").pvalue
            assert p[label] == pytest.approx(expected, rel=1e-10, abs=1e-15)
    assert (p[[0, 1, 3]] == 1.0).all() and p[4] < 1e-6
    assert (signal_pvalues(scores[:1], Y[:1]) == 1.0).all()  # one row: nothing to compare


@pytest.mark.parametrize("alpha", [0.3, 0.5])
def test_capped_thresholds_match_the_loop(rng, alpha):
    n, L = 40, 12
    scores = np.round(rng.normal(size=(n, L)) * 2) / 4  # many ties
    Y = rng.random((n, L)) < rng.uniform(0.02, 0.7, L)
    Y[:, 0] = True  # predicting everything is best
    Y[:, 1] = False  # no positive row
    scores[:, 2] = 1.0  # one run: no cut of at most n_pos rows, and most rows carry it
    Y[:, 2] = np.arange(n) < 24
    scores[:, 3] = 1.0  # the same with few members: never predicted
    Y[:, 3] = np.arange(n) < 5
    no_signal = rng.random(L) < 0.7
    no_signal[:4] = True
    h, best = learn_thresholds(scores, Y, alpha, no_signal=no_signal)
    for label in range(L):
        col, y = list(scores[:, label]), list(Y[:, label])
        rows, f = bknn_threshold_loop(col, y, alpha, no_signal[label])
        assert (scores[:, label] > h[label]).sum() == rows
        assert best[label] == pytest.approx(f, abs=1e-12)
    assert h[0] == min(-2.0, scores[:, 0].min() - 1) and h[1] == np.inf and h[3] == np.inf
    # a label without signal is never predicted on more training rows than carry it, unless
    # on every row as the prior of a label at least half the rows carry (label 2 here)
    rows, n_pos = (scores > h).sum(axis=0), Y.sum(axis=0)
    prior = (rows == n) & (2 * n_pos >= n)
    assert ((rows <= n_pos) | prior)[no_signal].all() and prior[2]
    with pytest.raises(ValueError, match="no_signal must have shape"):
        learn_thresholds(scores, Y, alpha, no_signal=no_signal[:-1])


def test_threshold_kernels_work_in_blocks_of_labels(rng):
    import mlneighbors

    n, L = 300, 40
    scores = np.round(rng.normal(size=(n, L)) * 3) / 3
    Y = rng.random((n, L)) < rng.uniform(0.01, 0.6, L)
    no_signal = rng.random(L) < 0.5
    whole = signal_pvalues(scores, Y), *learn_thresholds(scores, Y, 0.5, no_signal=no_signal)
    with mlneighbors.config_context(working_memory=0.05):  # 52 kB: 2 labels of 300 rows a block
        blocks = signal_pvalues(scores, Y), *learn_thresholds(scores, Y, 0.5, no_signal=no_signal)
    for a, b in zip(whole, blocks, strict=True):
        np.testing.assert_array_equal(a, b)


def test_thresholds_are_midpoints_and_prefer_fewer_predictions():
    scores = np.array([[3.0], [2.0], [1.0], [0.0]])
    Y = np.array([[1], [0], [1], [0]])
    # predicting {3} gives F1 = 2/3, predicting {3, 2, 1} gives 2/(0.5*3 + 0.5*2) = 0.8
    h, best = learn_thresholds(scores, Y)
    assert h[0] == 0.5 and best[0] == pytest.approx(0.8)
    # equal F: {top} (F1 = 1/(0.5 + 0.5 * 2) = 2/3) vs all four (2/(0.5*4 + 1) = 2/3)
    h, best = learn_thresholds(np.array([[4.0], [3.0], [2.0], [1.0]]), np.array([[1], [0], [0], [1]]))
    assert best[0] == pytest.approx(2 / 3) and h[0] == 3.5


def test_balanced_scores_without_any_neighbour():
    sq = np.full((2, 3, 2), np.inf)
    sq[1, 0, 0] = 4.0
    f = balanced_scores(sq, 1.0)
    np.testing.assert_array_equal(f[0], [0.0, 0.0, 0.0])
    np.testing.assert_allclose(f[1], [2.0, -1.0, -1.0])


def test_balanced_scores_do_not_depend_on_the_order_of_a_labels_distances(rng):
    """The same distances in another order within a label give the same scores bit for bit, and
    two labels holding the same distances tie exactly (a search leaves its b in any order)."""
    sq = rng.random((50, 6, 5)) * 3.0
    sq[:, 3] = sq[:, 1][:, ::-1]  # label 3: label 1's distances, reversed
    sq[:, 4, 2:] = np.inf  # fewer members
    shuffled = np.take_along_axis(sq, np.argsort(rng.random(sq.shape), axis=2), axis=2)
    f = balanced_scores(sq, 0.7)
    np.testing.assert_array_equal(balanced_scores(shuffled, 0.7), f)
    np.testing.assert_array_equal(f[:, 3], f[:, 1])


# -- outputs and the contract --------------------------------------------------------------


def test_predict_proba_is_the_share_of_similarity_mass(corner):
    X, Y, Q = corner
    model = fit_quiet(BKNN(n_per_label=3), X, Y)
    margin = model.decision_function(Q)
    proba = model.predict_proba(Q)
    pred = model.predict(Q)
    assert ((proba >= 0) & (proba <= 1)).all()
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)  # shares of the similarity mass
    np.testing.assert_array_equal(pred, (margin > 0).astype(int))
    # one map for every label: the scores rank labels as f does, the margins shifted back
    finite = np.isfinite(model.thresholds_)
    f = margin[:, finite] + model.thresholds_[finite]
    np.testing.assert_allclose(proba[:, finite], (f + 1) / Y.shape[1], rtol=1e-12, atol=1e-15)


def test_labels_with_few_or_no_members(corner):
    X, Y, Q = corner
    with pytest.warns(LabelWarning):
        model = BKNN(n_per_label=5).fit(X, Y)
    assert model.thresholds_[0] == np.inf and model.train_fscores_[0] == 0.0
    assert (model.predict(Q)[:, 0] == 0).all() and (model.predict_proba(Q)[:, 0] == 0).all()
    np.testing.assert_allclose(scores_f(model, Q)[:, 0], -1.0)
    # label 2 has 2 members (< b): its score uses both, and is finite
    assert (scores_f(model, Q)[:, 2] > -1).all()
    # label 1 is carried by every row: always predicted
    assert model.thresholds_[1] == -2.0 and (model.predict(Q)[:, 1] == 1).all()


def test_a_label_with_one_member_is_not_predicted_on_every_row(rng):
    # the member's leave-one-out score is -1 (no other member): "predict every row" is the
    # only threshold with a true positive, and it is no better than chance
    X = rng.normal(size=(60, 3))
    Y = (X[:, :2] > 0).astype(int)
    Y = np.column_stack([Y, np.zeros(60, dtype=int)])
    Y[17, 2] = 1
    model = BKNN(n_per_label=5).fit(X, Y)
    Q = rng.normal(size=(30, 3))
    assert model.thresholds_[2] == np.inf
    assert model.predict(Q)[:, 2].sum() == 0
    assert model.predict(X[17:18])[0, 2] == 0  # not even on the member itself
    assert model.predict(Q)[:, :2].sum() > 0


# -- labels without signal -------------------------------------------------------------------

#: the issue's setting: 60 training rows, BKNN(n_per_label=3), 3 normal features, two labels
#: with signal (the signs of two features) and label 2 held by m random rows
N_ROWS, N_QUERIES, B, SEEDS = 60, 200, 3, range(12)


def signal_free(seed, m):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(N_ROWS, 3))
    Y = np.column_stack([X[:, :2] > 0, np.zeros(N_ROWS, dtype=bool)]).astype(int)
    Y[rng.choice(N_ROWS, m, replace=False), 2] = 1
    return X, Y, rng.normal(size=(N_QUERIES, 3))


def rate_bounds(m, n_fits, risk):
    """Upper bounds on the queries predicted for a label of m members without signal.

    A capped threshold predicts at most m training rows, so it lies at or above the (m + 1)-th
    highest leave-one-out score, hence at or above the (m + 1)-th highest of the n - m
    non-members' scores.  A query's score for the label is distributed as a non-member's
    leave-one-out score (both sum the weights of the same m members; taken as exchangeable,
    and if anything the leave-one-out scores run higher: leaving a row out lowers its own
    labels' similarity mass, so the mean it is divided by).  The chance that it exceeds the
    (m + 1)-th highest of n - m such scores is then Beta(m + 1, n - 2m) (an order statistic's
    coverage), and the number of the Q queries predicted is beta-binomial(Q, m + 1, n - 2m):
    mean Q (m + 1) / (n - m + 1), against the prevalence's Q m / n.  Returns its 1 - risk
    quantile for one fit, and the 1 - risk quantile of the total over n_fits independent fits
    (their pmfs convolved), both as a number of queries.
    """
    from scipy.stats import betabinom

    one = betabinom(N_QUERIES, m + 1, N_ROWS - 2 * m)
    pmf = one.pmf(np.arange(N_QUERIES + 1))
    total = np.ones(1)
    for _ in range(n_fits):
        total = np.convolve(total, pmf)
    return one.ppf(1 - risk), int(np.searchsorted(np.cumsum(total), 1 - risk))


def test_a_label_without_signal_is_predicted_about_as_often_as_it_occurs():
    """A label held by m = 1..10 random rows of 60 (prevalence 1.7 % to 17 %), 12 seeds each:
    predicted on about its prevalence of 200 new rows, not on most of them (the paper's
    F-optimal thresholds: 50-60 % on average, measured below).

    Margins (see :func:`rate_bounds`): each fit within the 1 - 1e-4 quantile of its
    beta-binomial (p + 0.21 to p + 0.37: a threshold learnt from 60 rows is itself very
    variable), and the 12 fits of each m together within the 1 - 1e-4 quantile of their sum
    (a mean rate of p + 0.07 to p + 0.14).  A label that passes the signal test by chance
    (p-value <= 0.01, so probability about 0.01 per fit) keeps the F-optimal threshold: those
    fits are left out of the bounds and counted, at most the 1 - 1e-4 quantile of
    Binomial(120, 0.01), 5.
    """
    from scipy.stats import binom

    passed, old_over = 0, 0
    for m in range(1, 11):
        per_fit, total_bound = rate_bounds(m, len(SEEDS), 1e-4)
        counts, old_counts = [], []
        for seed in SEEDS:
            X, Y, Q = signal_free(seed, m)
            model = BKNN(n_per_label=B).fit(X, Y)
            if model.signal_pvalues_[2] <= model.signal_level:
                passed += 1
                continue
            counts.append(model.predict(Q)[:, 2].sum())
            assert counts[-1] <= per_fit, (m, seed, counts[-1], per_fit)
            old_counts.append(BKNN(n_per_label=B, signal_level=None).fit(X, Y).predict(Q)[:, 2].sum())
        # the kept fits' total, against the bound for that many fits (fewer fits: a lower bound)
        assert sum(counts) <= rate_bounds(m, len(counts), 1e-4)[1], (m, counts)
        old_over += sum(old_counts) > rate_bounds(m, len(old_counts), 1e-4)[1]
        if m == 1:
            assert sum(counts) == 0  # one member: its leave-one-out score is -1, never predicted
    assert passed <= binom.ppf(1 - 1e-4, 10 * len(SEEDS), 0.01)
    # the check has teeth: the paper's thresholds break the bound for every m but 1
    assert old_over == 9


@pytest.mark.parametrize("m", [2, 3, 6, 10])
def test_a_label_with_signal_is_still_predicted_where_it_belongs(m):
    """Label 2's m members form a tight cluster (sd 0.3 around a centre 2.5 sd away from the
    other rows' mean): predicted on new rows drawn from the cluster, and not on rows farther
    than 1.5 from its centre (5 sd; the members' own distances to it are about 0.5)."""
    centre = np.array([2.5, 2.5, 0.0])
    for seed in range(5):
        rng = np.random.default_rng(seed)
        X = rng.normal(size=(N_ROWS, 3))
        members = rng.choice(N_ROWS, m, replace=False)
        X[members] = centre + 0.3 * rng.normal(size=(m, 3))
        Y = np.column_stack([X[:, :2] > 0, np.isin(np.arange(N_ROWS), members)]).astype(int)
        model = BKNN(n_per_label=B).fit(X, Y)
        inside = centre + 0.3 * rng.normal(size=(50, 3))
        outside = rng.normal(size=(N_QUERIES, 3))
        outside = outside[np.linalg.norm(outside - centre, axis=1) > 1.5]
        assert model.predict(inside)[:, 2].mean() >= 0.9, (m, seed)
        assert model.predict(outside)[:, 2].mean() <= 0.1, (m, seed)
        if m >= 3:  # (two members: one other member each in leave-one-out, and b = 3)
            assert model.signal_pvalues_[2] <= model.signal_level, (m, seed)


def test_signal_level_none_gives_the_papers_thresholds():
    capped = 0
    for seed in range(5):
        X, Y, Q = signal_free(seed, 4)
        plain = BKNN(n_per_label=B, signal_level=None).fit(X, Y)
        tested = BKNN(n_per_label=B).fit(X, Y)
        loo = balanced_scores(plain._get_index().sq_distances(X, exclude=np.arange(N_ROWS)), plain.sigma_)
        np.testing.assert_array_equal(plain.thresholds_, learn_thresholds(loo, Y)[0])
        np.testing.assert_array_equal(plain.signal_pvalues_, tested.signal_pvalues_)
        # the test changes only the thresholds of labels without signal predicted on more
        # training rows than carry them (not on all)
        rows = (loo > plain.thresholds_).sum(axis=0)
        change = (tested.signal_pvalues_ > 0.01) & (rows > Y.sum(axis=0)) & (rows < N_ROWS)
        np.testing.assert_array_equal(tested.thresholds_ != plain.thresholds_, change)
        assert ((loo > tested.thresholds_).sum(axis=0)[change] <= Y.sum(axis=0)[change]).all()
        capped += change.sum()
        np.testing.assert_array_equal(plain.predict_proba(Q), tested.predict_proba(Q))  # same scores
        margin = tested.decision_function(Q)
        np.testing.assert_array_equal(tested.predict(Q), (margin > 0).astype(int))  # the contract
    assert capped > 0


def test_permuting_labels_permutes_outputs(corner):
    X, Y, Q = corner
    perm = np.array([4, 0, 5, 1, 3, 2])
    a = fit_quiet(BKNN(n_per_label=3, sigma=1.0), X, Y)
    b = fit_quiet(BKNN(n_per_label=3, sigma=1.0), X, Y[:, perm])
    np.testing.assert_allclose(a.predict_proba(Q)[:, perm], b.predict_proba(Q), rtol=1e-12)
    np.testing.assert_array_equal(a.predict(Q)[:, perm], b.predict(Q))


def test_shuffling_training_rows_changes_nothing(rng):
    X = rng.normal(size=(50, 3))
    Y = (rng.random((50, 4)) < 0.4).astype(int)
    Q = rng.normal(size=(10, 3))
    perm = rng.permutation(50)
    a = BKNN(n_per_label=3).fit(X, Y)
    b = BKNN(n_per_label=3).fit(X[perm], Y[perm])
    assert a.sigma_ == pytest.approx(b.sigma_, rel=1e-12)
    np.testing.assert_allclose(a.predict_proba(Q), b.predict_proba(Q), rtol=1e-10)


def test_one_dimensional_target_predicts_the_largest_score(rng):
    X = np.vstack([rng.normal(0, 1, (15, 2)), rng.normal(4, 1, (15, 2)), rng.normal(-4, 1, (15, 2))])
    y = np.repeat(["a", "b", "c"], 15)
    model = BKNN(n_per_label=3).fit(X, y)
    Q = np.array([[0.0, 0.0], [4.0, 4.0], [-4.0, -4.0]])
    np.testing.assert_array_equal(model.predict(Q), ["a", "b", "c"])
    proba = model.predict_proba(Q)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_array_equal(np.argmax(model.decision_function(Q), axis=1), [0, 1, 2])


# -- bad input -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "params, match",
    [
        ({"sigma": 0.0}, "sigma"),
        ({"sigma": -1.0}, "sigma"),
        ({"sigma": np.inf}, "sigma"),
        ({"sigma": "median"}, "sigma"),
        ({"alpha": 0.0}, "alpha"),
        ({"alpha": 1.0}, "alpha"),
        ({"alpha": 1.5}, "alpha"),
        ({"signal_level": 0.0}, "signal_level"),
        ({"signal_level": 1.0}, "signal_level"),
        ({"signal_level": "0.01"}, "signal_level"),
        ({"n_per_label": 0}, "n_per_label"),
        ({"metric": "manhattan"}, "metric"),
        ({"backend": "no-such-backend"}, "backend"),
    ],
)
def test_bad_parameters(corner, params, match):
    X, Y, _ = corner
    with pytest.raises(ValueError, match=match):
        fit_quiet(BKNN(**params), X, Y)


def test_bad_data(corner):
    X, Y, Q = corner
    with pytest.raises(NotFittedError):
        BKNN().predict(Q)
    bad = X.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        BKNN().fit(bad, Y)
    with pytest.raises(ValueError):
        BKNN().fit(X, Y[:-1])
    with pytest.raises(ValueError, match="y must be a binary label indicator|Unknown label type"):
        BKNN().fit(X, Y * 2.5)
    model = fit_quiet(BKNN(), X, Y)
    with pytest.raises(ValueError, match="features"):
        model.predict(Q[:, :3])
    bad_q = Q.copy()
    bad_q[1, 1] = np.inf
    with pytest.raises(ValueError, match="infinity|inf"):
        model.predict(bad_q)


#: the shared sets where BKNN's scores ranked above the labels' training frequencies before
#: the scores became shares of f (and medical, where they ranked far below)
RANKS_ABOVE_PREVALENCE = ["bibtex", "emotions", "genbase", "scene", "yeast", "ohsumed", "medical"]


@pytest.mark.parametrize("name", RANKS_ABOVE_PREVALENCE)
def test_ranking_beats_the_prevalence_ranking_on_shared_data(shared_data, name):
    from mlneighbors.datasets import load_dataset
    from mlneighbors.metrics import average_precision

    train, test = load_dataset(name, "train"), load_dataset(name, "test")
    Y, Yt = np.asarray(train.Y), np.asarray(test.Y)
    model = fit_quiet(BKNN(), train.X, Y)
    prevalence = np.broadcast_to(Y.mean(axis=0), Yt.shape)
    assert average_precision(Yt, model.predict_proba(test.X)) > average_precision(Yt, prevalence)
