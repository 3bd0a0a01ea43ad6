"""The statistics of the benchmark report, against scipy, Demšar's paper and hand-worked cases."""

from __future__ import annotations

import math
from dataclasses import asdict

import numpy as np
import pytest
from scipy import stats

from mlneighbors.benchmark import (
    compare,
    critical_difference,
    friedman,
    holm,
    holm_control,
    iman_davenport,
    nemenyi,
    rank_table,
    wilcoxon_pairs,
)

#: Demšar (2006), Table 5(a): q_0.05 of the two-tailed Nemenyi test for k = 2..10
DEMSAR_Q05 = {2: 1.960, 3: 2.343, 4: 2.569, 5: 2.728, 6: 2.850, 7: 2.949, 8: 3.031, 9: 3.102, 10: 3.164}
#: Demšar's example (section 3.2.2): C4.5, C4.5+m, C4.5+cf, C4.5+m+cf on 14 datasets
DEMSAR_RANKS = np.array([3.143, 2.000, 2.893, 1.964])
DEMSAR_MODELS = ["C4.5", "C4.5+m", "C4.5+cf", "C4.5+m+cf"]


def demsar_chi2(average_ranks, n):
    """Friedman's statistic from average ranks, Demšar's formula (no tie correction)."""
    k = len(average_ranks)
    return 12 * n / (k * (k + 1)) * (sum(r * r for r in average_ranks) - k * (k + 1) ** 2 / 4)


def loop_ranks(row, greater_is_better=True):
    """Ranks of one row by counting, ties averaged: the slow twin of rank_table."""
    out = []
    for x in row:
        better = sum((y > x) if greater_is_better else (y < x) for y in row)
        equal = sum(y == x for y in row)
        out.append(better + (equal + 1) / 2)
    return out


def test_friedman_equals_scipy_with_ties(rng):
    table = np.round(rng.uniform(0.4, 0.6, size=(12, 5)), 2)  # rounded: ties within rows
    table[3, :3] = table[3, 0]
    assert any(len(set(row)) < 5 for row in table)
    expected = stats.friedmanchisquare(*table.T)
    result = friedman(table)
    assert result.statistic == pytest.approx(expected.statistic, rel=1e-12)
    assert result.pvalue == pytest.approx(expected.pvalue, rel=1e-12)


def test_friedman_without_ties_is_demsars_formula(rng):
    table = rng.uniform(size=(9, 4))
    ranks = np.array([loop_ranks(row) for row in table]).mean(axis=0)
    assert friedman(table).statistic == pytest.approx(demsar_chi2(ranks, 9), rel=1e-12)


def test_iman_davenport_on_demsars_example():
    chi2 = demsar_chi2(DEMSAR_RANKS, 14)
    assert round(chi2, 2) == 9.28
    f, p = iman_davenport(chi2, 14, 4)
    assert round(f, 2) == 3.69
    assert f == pytest.approx((14 - 1) * chi2 / (14 * 3 - chi2))
    # F(3, 39) at 3.69: Demšar's critical value at 0.05 is 2.85, so p < 0.05
    assert p == pytest.approx(stats.f.sf(f, 3, 39)) and p < 0.05


def test_friedman_and_iman_davenport_on_a_table():
    # a table whose ranks are Demšar's formula's input, computed by hand:
    # ranks per dataset (A, B, C): (1,2,3), (1,2,3), (2,1,3) -> R = (4/3, 5/3, 3), N = 3, k = 3
    table = [[0.9, 0.8, 0.7], [0.6, 0.5, 0.4], [0.8, 0.9, 0.1]]
    result = friedman(table)
    chi2 = demsar_chi2([4 / 3, 5 / 3, 3], 3)
    assert result.statistic == pytest.approx(chi2)  # 14/3
    assert result.f_statistic == pytest.approx(2 * chi2 / (3 * 2 - chi2))  # 7
    assert result.f_pvalue == pytest.approx(stats.f.sf(7, 2, 4))


@pytest.mark.parametrize("n", [5, 14, 30])
def test_critical_difference_is_demsars_formula_with_his_table(n):
    for k, q in DEMSAR_Q05.items():
        expected = q * math.sqrt(k * (k + 1) / (6 * n))
        assert abs(critical_difference(k, n) - expected) < 1e-3, (k, n)
        assert round(critical_difference(k, n) / math.sqrt(k * (k + 1) / (6 * n)), 3) == pytest.approx(q, abs=1e-3)


def test_nemenyi_on_demsars_example():
    cd, pairs = nemenyi(DEMSAR_RANKS, 14, models=DEMSAR_MODELS)
    assert round(cd, 2) == 1.25  # Demšar: CD = 2.569 sqrt(4*5 / (6*14)) = 1.25
    assert not any(p.separated for p in pairs)
    # at alpha = 0.10 (q = 2.291, CD = 1.12) both C4.5+m and C4.5+m+cf are better than C4.5
    cd, pairs = nemenyi(DEMSAR_RANKS, 14, models=DEMSAR_MODELS, alpha=0.10)
    assert round(cd, 2) == 1.12
    assert {(p.first, p.second) for p in pairs if p.separated} == {("C4.5+m", "C4.5"), ("C4.5+m+cf", "C4.5")}
    for p in pairs:  # the p-value and the CD say the same
        assert (p.pvalue <= 0.10) == p.separated
        assert p.rank_difference >= 0


def test_holm_against_control_on_demsars_example():
    rows = holm_control(DEMSAR_RANKS, 14, 0, models=DEMSAR_MODELS)
    se = math.sqrt(4 * 5 / (6 * 14))
    z = {m: (r - 3.143) / se for m, r in zip(DEMSAR_MODELS[1:], DEMSAR_RANKS[1:], strict=True)}
    assert [r.model for r in rows] == ["C4.5+m+cf", "C4.5+m", "C4.5+cf"]  # Holm's order: smallest p first
    for r in rows:
        assert r.z == pytest.approx(z[r.model])
        assert r.pvalue == pytest.approx(2 * (1 - stats.norm.cdf(abs(z[r.model]))))
    # by hand: 0.016 < 0.05/3, 0.019 < 0.05/2, 0.607 > 0.05/1
    assert [round(r.pvalue, 3) for r in rows] == [0.016, 0.019, 0.608]
    assert [r.reject for r in rows] == [True, True, False]


def test_holm_hand_worked():
    # sorted: 0.005*4 = 0.02, 0.01*3 = 0.03, 0.03*2 = 0.06, 0.04*1 = 0.04 -> max so far 0.06
    adjusted, reject = holm([0.01, 0.04, 0.03, 0.005])
    np.testing.assert_allclose(adjusted, [0.03, 0.06, 0.06, 0.02])
    assert reject.tolist() == [True, False, False, True]
    # 0.02*2 = 0.04, then 0.03*1 = 0.03 is raised to 0.04 (never below an earlier step): both rejected ...
    adjusted, reject = holm([0.02, 0.03], alpha=0.05)
    np.testing.assert_allclose(adjusted, [0.04, 0.04])
    assert reject.tolist() == [True, True]
    # ... while 0.03*2 = 0.06 > 0.05 stops the steps: 0.04 < 0.05 is kept too
    adjusted, reject = holm([0.03, 0.04], alpha=0.05)
    np.testing.assert_allclose(adjusted, [0.06, 0.06])
    assert reject.tolist() == [False, False]
    np.testing.assert_allclose(holm([0.5, 0.9, 0.01])[0], [1.0, 1.0, 0.03])  # capped at 1


@pytest.mark.requires("statsmodels")
def test_holm_equals_statsmodels(rng):
    from statsmodels.stats.multitest import multipletests

    p = rng.uniform(0, 0.1, size=15)
    reject, adjusted, _, _ = multipletests(p, alpha=0.05, method="holm")
    ours_adjusted, ours_reject = holm(p)
    np.testing.assert_allclose(ours_adjusted, adjusted)
    assert ours_reject.tolist() == reject.tolist()


def test_ranks_average_ties(rng):
    assert rank_table([[0.5, 0.7, 0.7, 0.1]]).tolist() == [[3.0, 1.5, 1.5, 4.0]]
    assert rank_table([[0.5, 0.7, 0.7, 0.1]], greater_is_better=False).tolist() == [[2.0, 3.5, 3.5, 1.0]]
    assert rank_table([[0.2, 0.2, 0.2]]).tolist() == [[2.0, 2.0, 2.0]]
    table = rng.integers(0, 3, size=(20, 6)).astype(float)  # many ties
    for greater in (True, False):
        np.testing.assert_array_equal(rank_table(table, greater_is_better=greater),
                                      [loop_ranks(row, greater) for row in table])


def test_wilcoxon_pairs_equal_scipy_and_holm(rng):
    table = rng.uniform(size=(10, 3))
    table[:, 2] += 0.3
    pairs = wilcoxon_pairs(table, models=["a", "b", "c"])
    assert [(p.first, p.second) for p in pairs] == [("a", "b"), ("a", "c"), ("b", "c")]
    raw = [stats.wilcoxon(table[:, i], table[:, j]).pvalue for i, j in [(0, 1), (0, 2), (1, 2)]]
    np.testing.assert_allclose([p.pvalue for p in pairs], raw)
    np.testing.assert_allclose([p.adjusted for p in pairs], holm(raw)[0])
    ac = pairs[1]
    assert (ac.wins, ac.ties, ac.losses) == (int((table[:, 0] > table[:, 2]).sum()), 0,
                                             int((table[:, 0] < table[:, 2]).sum()))


@pytest.mark.requires("scikit_posthocs")
def test_nemenyi_and_wilcoxon_equal_scikit_posthocs(rng):
    import scikit_posthocs as sp

    table = np.round(rng.uniform(size=(12, 5)), 1)
    # scikit-posthocs ranks ascending; the two-sided p-values do not care which end is best
    _, pairs = nemenyi(rank_table(table).mean(axis=0), 12, models=list("abcde"))
    theirs = sp.posthoc_nemenyi_friedman(table).to_numpy()
    idx = {m: i for i, m in enumerate("abcde")}
    for p in pairs:
        assert p.pvalue == pytest.approx(theirs[idx[p.first], idx[p.second]], abs=1e-12)
    table = rng.uniform(size=(12, 4))
    ours = wilcoxon_pairs(table, models=list("abcd"))
    theirs = sp.posthoc_wilcoxon(table.T.tolist(), p_adjust="holm").to_numpy()
    for p in ours:
        assert p.adjusted == pytest.approx(theirs[idx[p.first], idx[p.second]], rel=1e-12)


@pytest.mark.requires("autorank")
def test_critical_difference_and_ranks_equal_autorank(rng):
    import pandas as pd
    from autorank import autorank

    table = rng.uniform(size=(14, 6))
    result = autorank(pd.DataFrame(table, columns=list("abcdef")), alpha=0.05, verbose=False,
                      force_mode="nonparametric")
    ours = compare(table, models=list("abcdef"))
    # autorank's q_alpha is statsmodels' qsturng, an interpolation of tables: agreement to 1e-4
    assert ours.critical_difference == pytest.approx(result.cd, rel=1e-4)
    theirs = result.rankdf["meanrank"]
    for m, r in zip(ours.models, ours.average_ranks, strict=True):
        assert r == pytest.approx(theirs[m])


# -- the edge cases ---------------------------------------------------------------------------


def _all_finite(comparison):
    """No NaN anywhere in what a report prints."""
    values = [comparison.critical_difference, *comparison.average_ranks]
    values += [v for part in (comparison.nemenyi, comparison.holm, comparison.wilcoxon)
               for item in part for v in asdict(item).values() if isinstance(v, float)]
    if comparison.friedman is not None:
        values += [v for v in asdict(comparison.friedman).values() if isinstance(v, float)]
    return all(v is not None and not math.isnan(v) for v in values)


def test_two_models_skip_friedman_and_test_with_wilcoxon(rng):
    table = rng.uniform(size=(8, 2))
    table[:, 0] += 1.0
    result = compare(table, models=["A", "B"], control="A")
    assert result.friedman is None
    assert any("2 models" in n and "Wilcoxon" in n for n in result.notes)
    (pair,) = result.wilcoxon
    assert pair.pvalue == pytest.approx(stats.wilcoxon(table[:, 0], table[:, 1]).pvalue)
    assert (pair.wins, pair.losses) == (8, 0) and pair.reject
    assert result.critical_difference == pytest.approx(1.960 * math.sqrt(2 * 3 / (6 * 8)), abs=1e-3)
    assert [h.model for h in result.holm] == ["B"]
    with pytest.raises(ValueError, match="3 models"):
        friedman(table)


def test_ties_everywhere_report_no_difference_without_nan():
    table = np.full((6, 4), 0.5)
    table[3] = 0.7  # equal within every dataset, not across them
    result = compare(table, models=list("abcd"), control="a")
    assert result.average_ranks.tolist() == [2.5] * 4
    assert (result.friedman.statistic, result.friedman.pvalue) == (0.0, 1.0)
    assert (result.friedman.f_statistic, result.friedman.f_pvalue) == (0.0, 1.0)
    assert not any(p.separated for p in result.nemenyi)
    assert all(h.pvalue == 1.0 and not h.reject for h in result.holm)
    assert all(w.pvalue == 1.0 and w.ties == 6 and not w.reject for w in result.wilcoxon)
    assert any("ties with every other on every dataset" in n for n in result.notes)
    assert _all_finite(result)


def test_same_order_on_every_dataset_gives_infinite_f():
    table = np.array([[0.9, 0.8, 0.7]] * 2)
    result = compare(table)
    assert result.friedman.statistic == pytest.approx(4.0)  # its maximum N (k - 1)
    assert result.friedman.f_statistic == math.inf and result.friedman.f_pvalue == 0.0
    assert any("infinite" in n for n in result.notes)


@pytest.mark.parametrize("n", [0, 1])
def test_fewer_than_two_datasets_skip_every_test(n):
    result = compare(np.arange(3 * n, dtype=float).reshape(n, 3), models=list("abc"), control="a")
    assert result.friedman is None and result.critical_difference is None
    assert result.nemenyi == result.holm == result.wilcoxon == []
    assert any("at least 2" in note and "none run" in note for note in result.notes)


def test_one_model_has_nothing_to_compare():
    result = compare([[0.3], [0.4]], models=["a"])
    assert result.friedman is None and result.wilcoxon == []
    assert result.notes == ("1 model: nothing to compare, no test run",)


def test_friedman_not_rejecting_says_the_post_hoc_is_not_read(rng):
    result = compare(rng.uniform(size=(12, 6)))
    assert result.friedman.f_pvalue > 0.05  # random: no real difference (seeded)
    assert any("does not reject" in n for n in result.notes)


def test_bad_input_is_one_clear_error():
    with pytest.raises(ValueError, match="finite value for every dataset and model"):
        compare([[0.1, np.nan], [0.2, 0.3]])
    with pytest.raises(ValueError, match="shape"):
        compare([0.1, 0.2])
    with pytest.raises(ValueError, match="alpha"):
        compare([[0.1, 0.2]], alpha=1.5)
    with pytest.raises(ValueError, match="control 'z'"):
        compare([[0.1, 0.2]], models=["a", "b"], control="z")
    with pytest.raises(ValueError, match="distinct"):
        compare([[0.1, 0.2]], models=["a", "a"])
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        holm([0.5, 1.5])


def test_the_report_says_when_holm_corrected_wilcoxon_cannot_reject():
    """8 datasets, 8 models (28 pairs): the exact test's smallest p is 2/2^8, times 28 by Holm:
    0.219 > 0.05, whatever the values; said, and true of the p-values themselves."""
    table = np.tile(np.arange(8.0), (8, 1))  # the same order on every dataset: the strongest evidence there is
    result = compare(table, alpha=0.05)
    assert min(w.adjusted for w in result.wilcoxon) == pytest.approx(28 * 2 / 2**8)
    (note,) = [n for n in result.notes if "Wilcoxon" in n]
    assert "2/2^8 = 0.007812" in note and "by 28 (to 0.2188)" in note and "at least 11 datasets" in note
    # with 11 datasets the same evidence can reject: no such note
    assert not [n for n in compare(np.tile(np.arange(8.0), (11, 1))).notes if "smallest possible p" in n]
