"""Comparing models over many datasets: average ranks, Friedman, Iman-Davenport, Nemenyi, Holm, Wilcoxon.

Everything here works on one complete table of shape ``(n_datasets, n_models)`` (one value per
dataset and model, usually a metric's mean over folds); which datasets and models make that table
is decided by the report (:func:`mlneighbors.benchmark.build_report`). The procedure is Demšar's
(2006): rank the models on each dataset (rank 1 the best, ties given their average rank), test
the null hypothesis that all models are equivalent with Friedman's test and its Iman-Davenport
correction, then compare every pair with Nemenyi's test (the critical difference) and every model
with a control with Holm's step-down procedure on the ranks' z statistics; beside them, every
pair with the Wilcoxon signed-rank test over datasets, Holm-corrected.

Which library computes what
---------------------------
Four libraries were compared. **scipy.stats** has the tests and distributions themselves:
``friedmanchisquare`` (tie-corrected), ``wilcoxon``, ``studentized_range`` (Nemenyi's
``q_alpha``, at infinite degrees of freedom), ``norm`` and ``f``; it has no Holm correction
(``false_discovery_control`` does Benjamini-Hochberg/Yekutieli only). **scikit-posthocs** has
``posthoc_nemenyi_friedman`` (the same ``studentized_range.sf`` call on the same ranks) and
``posthoc_wilcoxon(p_adjust="holm")`` (``scipy.stats.wilcoxon`` per pair, then statsmodels'
``multipletests``), but no Holm test against a control, no Iman-Davenport and no critical
difference; it needs pandas, seaborn and statsmodels. **autorank** runs a whole pipeline that
chooses its test from normality and variance checks (Demšar's protocol must not change with the
data), needs at least five datasets, computes the critical difference through statsmodels'
``qsturng`` and has no Holm test against a control nor pairwise Wilcoxon; it needs pandas,
statsmodels, baycomp and jinja2. **baycomp** answers another question (Bayesian signed-rank and
hierarchical tests with a region of practical equivalence) than Demšar's; it computes the
Bayesian signed-rank test here, when asked (:func:`bayesian_signed_rank`).

The choice: every test statistic and p-value is one call to scipy.stats, a core dependency, so
the statistics need no extra. Written here are only the closed forms that no library exposes in
this shape: Iman-Davenport's ``F_F`` from Friedman's statistic, the critical difference
``CD = q_alpha sqrt(k (k+1) / (6 N))`` and the z statistic of a rank difference (Demšar's
formulas), and Holm's step-down adjustment (four lines of numpy, rather than statsmodels and
pandas for ``multipletests``). The tests check those against scikit-posthocs, autorank and
statsmodels where they are installed, and against Demšar's worked example.

Decisions, in one place
-----------------------
* Rank 1 is the best model on a dataset (the highest value when greater is better, the lowest
  otherwise); tied values share their average rank (``scipy.stats.rankdata``).
* Friedman's statistic is scipy's, corrected for ties; without ties it equals Demšar's
  ``12 N / (k (k+1)) (sum_j R_j^2 - k (k+1)^2 / 4)``. When every model ties with every other on
  every dataset the correction is 0/0: the statistic is reported as 0 with p-value 1 (the
  uncorrected statistic is 0, and there is no difference to find), and a note says so.
* Friedman's and Iman-Davenport's tests need three models (scipy refuses two): with two, they
  are skipped with a note, and the Wilcoxon signed-rank test over datasets is the test
  (Demšar's section 3.1.3). Every test needs two datasets; with fewer all are skipped.
* When every dataset ranks the models the same way, ``chi2_F = N (k - 1)`` and Iman-Davenport's
  ``F_F`` is infinite: it is reported as infinity with p-value 0, and a note says so.
* Nemenyi: two models differ when their average ranks differ by at least the critical
  difference (its p-value is then at most alpha). Holm and Wilcoxon: a hypothesis is rejected
  when its Holm-adjusted p-value is at most alpha.
* Demšar reads the post-hoc tests only after Friedman's test rejects; they are always computed
  here, and a note says when Friedman's test did not reject.
* A Wilcoxon pair whose values are equal on every dataset has no signed rank to test: statistic
  0, p-value 1 (scipy's answer differs between versions: an error, or a warning and 1).

References
----------
.. [1] J. Demšar, "Statistical Comparisons of Classifiers over Multiple Data Sets", Journal of
   Machine Learning Research 7 (2006) 1-30.
.. [2] S. Holm, "A Simple Sequentially Rejective Multiple Test Procedure", Scandinavian Journal
   of Statistics 6 (1979) 65-70.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import stats

from .._docstrings import fill_doc

__all__ = [
    "BayesianPair",
    "Comparison",
    "CorrectedTTest",
    "Friedman",
    "HolmRow",
    "NemenyiPair",
    "WilcoxonPair",
    "bayesian_signed_rank",
    "compare",
    "corrected_resampled_t",
    "critical_difference",
    "friedman",
    "holm",
    "holm_control",
    "iman_davenport",
    "nemenyi",
    "rank_table",
    "wilcoxon_cliques",
    "wilcoxon_pairs",
]


def _table(values: ArrayLike, name: str = "values") -> NDArray[np.float64]:
    table = np.asarray(values, dtype=np.float64)
    if table.ndim != 2:
        raise ValueError(f"{name} must be a table of shape (n_datasets, n_models); got shape {table.shape}")
    if not np.isfinite(table).all():
        raise ValueError(f"{name} must hold a finite value for every dataset and model; drop the datasets "
                         "where a model failed or is missing first")
    return table


def _check_alpha(alpha: float) -> float:
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1); got {alpha!r}")
    return float(alpha)


def rank_table(values: ArrayLike, *, greater_is_better: bool = True) -> NDArray[np.float64]:
    """Rank the models on each dataset: 1 is the best, ties share their average rank.

    Parameters
    ----------
    values : array-like of shape (n_datasets, n_models)
        One finite value per dataset (row) and model (column).
    greater_is_better : bool, default=True
        Whether the highest value is the best (False for losses, one-error, coverage).

    Returns
    -------
    ranks : ndarray of shape (n_datasets, n_models)
        Each row holds the ranks 1..n_models, tied values their average.

    Examples
    --------
    >>> from mlneighbors.benchmark import rank_table
    >>> rank_table([[0.9, 0.8, 0.8], [0.5, 0.7, 0.6]])
    array([[1. , 2.5, 2.5],
           [3. , 1. , 2. ]])
    >>> rank_table([[0.1, 0.2]], greater_is_better=False)
    array([[1., 2.]])
    """
    table = _table(values)
    # rankdata ranks ascending: negate when the highest value is the best
    return stats.rankdata(-table if greater_is_better else table, method="average", axis=1)


@dataclass(frozen=True)
class Friedman:
    """Friedman's test and Iman-Davenport's correction of it.

    Parameters
    ----------
    statistic : float
        Friedman's ``chi2_F`` (tie-corrected), with ``k - 1`` degrees of freedom.
    pvalue : float
        Its p-value from the chi-square distribution.
    f_statistic : float
        Iman-Davenport's ``F_F = (N - 1) chi2_F / (N (k - 1) - chi2_F)``; infinity when every
        dataset ranks the models the same way.
    f_pvalue : float
        Its p-value from the F distribution with ``k - 1`` and ``(k - 1)(N - 1)`` degrees of freedom.
    n_datasets, n_models : int
        ``N`` and ``k``.

    Examples
    --------
    >>> from mlneighbors.benchmark import friedman
    >>> result = friedman([[0.9, 0.8, 0.7], [0.6, 0.5, 0.4], [0.8, 0.9, 0.1]])
    >>> result.n_datasets, result.n_models
    (3, 3)
    """

    statistic: float
    pvalue: float
    f_statistic: float
    f_pvalue: float
    n_datasets: int
    n_models: int


def iman_davenport(chi2: float, n_datasets: int, n_models: int) -> tuple[float, float]:
    """Iman-Davenport's ``F_F`` from Friedman's ``chi2_F``, and its p-value.

    Parameters
    ----------
    chi2 : float
        Friedman's statistic.
    n_datasets, n_models : int
        ``N >= 2`` datasets and ``k >= 2`` models.

    Returns
    -------
    f_statistic : float
        ``(N - 1) chi2 / (N (k - 1) - chi2)``; infinity when ``chi2`` reaches its maximum
        ``N (k - 1)`` (every dataset ranks the models the same way).
    pvalue : float
        ``P(F > f_statistic)`` for ``F`` with ``k - 1`` and ``(k - 1)(N - 1)`` degrees of freedom.

    Examples
    --------
    Demšar's example (section 3.2.2): four algorithms on fourteen datasets.

    >>> from mlneighbors.benchmark import iman_davenport
    >>> f, p = iman_davenport(9.28, 14, 4)
    >>> round(f, 2), round(p, 4)
    (3.69, 0.0198)
    """
    if n_datasets < 2 or n_models < 2:
        raise ValueError(f"Iman-Davenport's test needs N >= 2 datasets and k >= 2 models; got N={n_datasets}, "
                         f"k={n_models}")
    top = n_datasets * (n_models - 1)
    if np.isclose(chi2, top, rtol=1e-12, atol=0):
        return float("inf"), 0.0
    f_statistic = (n_datasets - 1) * chi2 / (top - chi2)
    pvalue = stats.f.sf(f_statistic, n_models - 1, (n_models - 1) * (n_datasets - 1))
    return float(f_statistic), float(pvalue)


def friedman(values: ArrayLike) -> Friedman:
    """Friedman's test that all models are equivalent, with Iman-Davenport's correction.

    Parameters
    ----------
    values : array-like of shape (n_datasets, n_models)
        At least 2 datasets and 3 models (scipy's ``friedmanchisquare`` refuses 2 models: compare
        two with :func:`wilcoxon_pairs`).

    Returns
    -------
    Friedman
        ``chi2_F`` is ``scipy.stats.friedmanchisquare``'s (tie-corrected); when every model ties
        with every other on every dataset it is 0 with p-value 1.

    Examples
    --------
    >>> from mlneighbors.benchmark import friedman
    >>> result = friedman([[0.9, 0.8, 0.7], [0.6, 0.5, 0.4], [0.8, 0.9, 0.1]])
    >>> round(result.statistic, 4), round(result.pvalue, 4), round(result.f_statistic, 4)
    (4.6667, 0.097, 7.0)
    """
    table = _table(values)
    n, k = table.shape
    if k < 3 or n < 2:
        raise ValueError(f"Friedman's test needs at least 2 datasets and 3 models; got {n} and {k}")
    if (table == table[:, :1]).all():
        # scipy's tie correction is 0/0 here; Demšar's uncorrected statistic is 0
        chi2, p = 0.0, 1.0
    else:
        chi2, p = (float(x) for x in stats.friedmanchisquare(*table.T))
    f_statistic, f_pvalue = iman_davenport(chi2, n, k)
    return Friedman(chi2, p, f_statistic, f_pvalue, n, k)


def critical_difference(n_models: int, n_datasets: int, alpha: float = 0.05) -> float:
    """Nemenyi's critical difference of average ranks (Demšar 2006, section 3.2.2).

    ``CD = q_alpha sqrt(k (k+1) / (6 N))`` with ``q_alpha`` the ``1 - alpha`` quantile of the
    studentized range of ``k`` means at infinite degrees of freedom, divided by ``sqrt(2)``.

    Parameters
    ----------
    n_models : int
        ``k >= 2``.
    n_datasets : int
        ``N >= 1``.
    alpha : float, default=0.05
        The significance level.

    Returns
    -------
    float
        Two models whose average ranks differ by at least this much differ significantly.

    Examples
    --------
    Demšar's example: k = 4, N = 14 (``q_0.05 = 2.569``).

    >>> from mlneighbors.benchmark import critical_difference
    >>> round(critical_difference(4, 14), 3)
    1.254
    """
    if n_models < 2 or n_datasets < 1:
        raise ValueError(f"the critical difference needs k >= 2 models and N >= 1 dataset; got k={n_models}, "
                         f"N={n_datasets}")
    q_alpha = stats.studentized_range.ppf(1 - _check_alpha(alpha), n_models, np.inf) / np.sqrt(2)
    return float(q_alpha * np.sqrt(n_models * (n_models + 1) / (6 * n_datasets)))


@dataclass(frozen=True)
class NemenyiPair:
    """Nemenyi's comparison of two models.

    Parameters
    ----------
    first, second : str
        The models, ``first`` the better ranked (ties: the first in the table's order).
    rank_difference : float
        ``R_second - R_first >= 0``.
    pvalue : float
        ``P(range > rank_difference / sqrt(k (k+1) / (12 N)))`` for the studentized range of ``k``
        means at infinite degrees of freedom.
    separated : bool
        ``rank_difference`` is at least the critical difference.

    Examples
    --------
    >>> from mlneighbors.benchmark import nemenyi
    >>> cd, (pair,) = nemenyi([1.1, 2.9], 10, models=["A", "B"])
    >>> pair.first, pair.second, round(pair.rank_difference, 2), pair.separated
    ('A', 'B', 1.8, True)
    """

    first: str
    second: str
    rank_difference: float
    pvalue: float
    separated: bool


def _labels(models: Sequence[str] | None, k: int) -> list[str]:
    if models is None:
        return [f"model {j}" for j in range(k)]
    labels = [str(m) for m in models]
    if len(labels) != k:
        raise ValueError(f"models names {k} models (the table's columns); got {len(labels)} names")
    if len(set(labels)) != k:
        raise ValueError(f"models must be distinct; got {labels}")
    return labels


@fill_doc
def nemenyi(
    average_ranks: ArrayLike, n_datasets: int, *, models: Sequence[str] | None = None, alpha: float = 0.05
) -> tuple[float, list[NemenyiPair]]:
    """Nemenyi's test of every pair of models from their average ranks.

    {average_ranks_parameters}
    models : sequence of str, optional
        The models' names, in the order of ``average_ranks``.
    alpha : float, default=0.05
        The significance level.

    Returns
    -------
    cd : float
        The critical difference (:func:`critical_difference`).
    pairs : list of NemenyiPair
        Every pair, in the order of ``itertools.combinations``.

    Examples
    --------
    >>> from mlneighbors.benchmark import nemenyi
    >>> cd, pairs = nemenyi([3.143, 2.000, 2.893, 1.964], 14, models=["A", "B", "C", "D"])
    >>> round(cd, 3)
    1.254
    >>> [(p.first, p.second) for p in pairs if p.separated]
    []
    """
    ranks = np.asarray(average_ranks, dtype=np.float64)
    k = ranks.size
    labels = _labels(models, k)
    cd = critical_difference(k, n_datasets, alpha)
    i, j = np.triu_indices(k, 1)  # every pair, in the order of itertools.combinations
    diff = np.abs(ranks[i] - ranks[j])
    # the studentized range statistic: Demšar's CD divided by q_alpha, times sqrt(2)
    pvalues = stats.studentized_range.sf(diff / np.sqrt(k * (k + 1) / (12 * n_datasets)), k, np.inf)
    # Demšar: "differ by at least the critical difference"; a relative slack absorbs rounding in the ranks
    separated = diff >= cd * (1 - 1e-12)
    pairs = []
    for a, b, d, p, s in zip(i, j, diff, pvalues, separated, strict=True):
        first, second = (a, b) if ranks[a] <= ranks[b] else (b, a)
        pairs.append(NemenyiPair(labels[first], labels[second], float(d), float(min(p, 1.0)), bool(s)))
    return cd, pairs


def holm(pvalues: ArrayLike, alpha: float = 0.05) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
    """Holm's step-down adjustment of a family of p-values.

    Sorted ascending, ``p_(i)`` is multiplied by ``m - i + 1`` (``i = 1..m``), the products made
    non-decreasing and capped at 1; a hypothesis is rejected when its adjusted p-value is at most
    ``alpha`` (the same as testing ``p_(i) <= alpha / (m - i + 1)`` until the first acceptance).

    Parameters
    ----------
    pvalues : array-like of shape (m,)
        The p-values of the family.
    alpha : float, default=0.05
        The family-wise significance level.

    Returns
    -------
    adjusted : ndarray of shape (m,)
        Holm's adjusted p-values, in the input order.
    reject : ndarray of bool of shape (m,)
        Which hypotheses are rejected.

    Examples
    --------
    >>> from mlneighbors.benchmark import holm
    >>> adjusted, reject = holm([0.01, 0.04, 0.03, 0.005])
    >>> adjusted.round(3), reject
    (array([0.03, 0.06, 0.06, 0.02]), array([ True, False, False,  True]))
    """
    alpha = _check_alpha(alpha)
    p = np.asarray(pvalues, dtype=np.float64).reshape(-1)
    if np.isnan(p).any() or (p < 0).any() or (p > 1).any():
        raise ValueError(f"p-values must be in [0, 1]; got {p}")
    m = p.size
    order = np.argsort(p, kind="stable")
    stepped = np.minimum(np.maximum.accumulate(p[order] * np.arange(m, 0, -1)), 1.0)
    adjusted = np.empty(m)
    adjusted[order] = stepped
    return adjusted, adjusted <= alpha


@dataclass(frozen=True)
class HolmRow:
    """One model against the control, in Holm's procedure.

    Parameters
    ----------
    model : str
        The model compared with the control.
    z : float
        ``(R_model - R_control) / sqrt(k (k+1) / (6 N))``: positive when the model ranks worse.
    pvalue : float
        Two-sided, from the standard normal distribution.
    adjusted : float
        Holm's adjusted p-value over the ``k - 1`` comparisons.
    reject : bool
        The model and the control differ at ``alpha``.

    Examples
    --------
    >>> from mlneighbors.benchmark import holm_control
    >>> (row,) = holm_control([1.1, 1.9], 10, 0, models=["A", "B"])
    >>> row.model, round(row.z, 2), row.reject
    ('B', 2.53, True)
    """

    model: str
    z: float
    pvalue: float
    adjusted: float
    reject: bool


@fill_doc
def holm_control(
    average_ranks: ArrayLike,
    n_datasets: int,
    control: int,
    *,
    models: Sequence[str] | None = None,
    alpha: float = 0.05,
) -> list[HolmRow]:
    """Holm's step-down test of every model against a control (Demšar 2006, section 3.2.2).

    {average_ranks_parameters}
    control : int
        The control's position in ``average_ranks``.
    models : sequence of str, optional
        The models' names, in the order of ``average_ranks``.
    alpha : float, default=0.05
        The family-wise significance level.

    Returns
    -------
    list of HolmRow
        One row per other model, smallest p-value first (Holm's order).

    Examples
    --------
    Demšar's example, C4.5 (rank 3.143) as the control:

    >>> from mlneighbors.benchmark import holm_control
    >>> rows = holm_control([3.143, 2.000, 2.893, 1.964], 14, 0, models=["C4.5", "+m", "+cf", "+m+cf"])
    >>> [(r.model, round(r.z, 2), round(r.pvalue, 3), r.reject) for r in rows]
    [('+m+cf', -2.42, 0.016, True), ('+m', -2.34, 0.019, True), ('+cf', -0.51, 0.608, False)]
    """
    ranks = np.asarray(average_ranks, dtype=np.float64)
    k = ranks.size
    labels = _labels(models, k)
    if not 0 <= control < k:
        raise ValueError(f"control must be a position in 0..{k - 1}; got {control}")
    if k < 2 or n_datasets < 1:
        raise ValueError(f"Holm's test against a control needs k >= 2 models and N >= 1 dataset; got k={k}, "
                         f"N={n_datasets}")
    others = np.array([j for j in range(k) if j != control], dtype=np.intp)
    z = (ranks[others] - ranks[control]) / np.sqrt(k * (k + 1) / (6 * n_datasets))
    pvalues = 2 * stats.norm.sf(np.abs(z))
    adjusted, reject = holm(pvalues, alpha)
    order = np.argsort(pvalues, kind="stable")
    return [HolmRow(labels[others[o]], float(z[o]), float(pvalues[o]), float(adjusted[o]), bool(reject[o]))
            for o in order]


@dataclass(frozen=True)
class WilcoxonPair:
    """The Wilcoxon signed-rank test of two models over the datasets.

    Parameters
    ----------
    first, second : str
        The models, in the table's order.
    statistic : float
        scipy's statistic (the smaller of the signed-rank sums).
    pvalue : float
        Two-sided.
    adjusted : float
        Holm's adjusted p-value over all pairs.
    reject : bool
        The two differ at ``alpha``.
    wins, ties, losses : int
        Datasets on which ``first`` is better than, equal to, worse than ``second``.
    mean_difference : float
        The effect in the metric's units: the mean over datasets of ``first - second``
        (``second - first`` for a metric better low), positive when ``first`` is better.
    rank_biserial : float
        The effect size of the signed-rank test: the matched-pairs rank-biserial correlation
        ``r = (R+ - R-) / (R+ + R-)`` (Kerby 2014), the signed ranks of the non-zero differences
        (``scipy.stats.rankdata`` of their absolute values, ties averaged) summed where ``first``
        is better (``R+``) and where it is worse (``R-``); in [-1, 1], positive when ``first``
        is better, 0 when every difference is 0.

    Examples
    --------
    >>> from mlneighbors.benchmark import wilcoxon_pairs
    >>> (pair,) = wilcoxon_pairs([[0.9, 0.8], [0.7, 0.7], [0.5, 0.6]], models=["A", "B"])
    >>> pair.wins, pair.ties, pair.losses
    (1, 1, 1)
    >>> round(pair.mean_difference, 4), pair.rank_biserial
    (0.0, 0.0)
    """

    first: str
    second: str
    statistic: float
    pvalue: float
    adjusted: float
    reject: bool
    wins: int
    ties: int
    losses: int
    mean_difference: float
    rank_biserial: float


def _rank_biserial(better: NDArray[np.float64]) -> float:
    """Kerby's matched-pairs rank-biserial correlation of the differences ``better``."""
    nonzero = better[better != 0]
    if not nonzero.size:
        return 0.0
    ranks = stats.rankdata(np.abs(nonzero))
    return float((ranks[nonzero > 0].sum() - ranks[nonzero < 0].sum()) / ranks.sum())


def wilcoxon_pairs(
    values: ArrayLike,
    *,
    models: Sequence[str] | None = None,
    greater_is_better: bool = True,
    alpha: float = 0.05,
) -> list[WilcoxonPair]:
    """The Wilcoxon signed-rank test of every pair of models over datasets, Holm-corrected.

    Parameters
    ----------
    values : array-like of shape (n_datasets, n_models)
        One finite value per dataset and model; at least 2 datasets.
    models : sequence of str, optional
        The models' names, in the order of the columns.
    greater_is_better : bool, default=True
        Only for the wins and losses.
    alpha : float, default=0.05
        The family-wise significance level of Holm's correction.

    Returns
    -------
    list of WilcoxonPair
        Every pair, in the order of ``itertools.combinations``.

    Examples
    --------
    >>> from mlneighbors.benchmark import wilcoxon_pairs
    >>> table = [[0.9, 0.8], [0.7, 0.6], [0.5, 0.45], [0.8, 0.7], [0.6, 0.5], [0.9, 0.85]]
    >>> pair, = wilcoxon_pairs(table, models=["A", "B"])
    >>> pair.statistic, round(pair.pvalue, 4), pair.wins, pair.losses
    (0.0, 0.0312, 6, 0)
    """
    table = _table(values)
    n, k = table.shape
    labels = _labels(models, k)
    if n < 2 or k < 2:
        raise ValueError(f"the Wilcoxon tests need at least 2 datasets and 2 models; got {n} and {k}")
    pairs = list(combinations(range(k), 2))
    statistic, pvalues = np.zeros(len(pairs)), np.ones(len(pairs))
    for t, (a, b) in enumerate(pairs):
        if (table[:, a] != table[:, b]).any():  # equal everywhere: nothing to test (see the module's notes)
            result = stats.wilcoxon(table[:, a], table[:, b])
            statistic[t], pvalues[t] = result.statistic, result.pvalue
    adjusted, reject = holm(pvalues, alpha)
    sign = 1 if greater_is_better else -1
    out = []
    for t, (a, b) in enumerate(pairs):
        better = sign * (table[:, a] - table[:, b])
        out.append(WilcoxonPair(labels[a], labels[b], float(statistic[t]), float(pvalues[t]), float(adjusted[t]),
                                bool(reject[t]), int((better > 0).sum()), int((better == 0).sum()),
                                int((better < 0).sum()), float(better.mean()), _rank_biserial(better)))
    return out


def wilcoxon_cliques(models: Sequence[str], average_ranks: ArrayLike,
                     pairs: Sequence[WilcoxonPair]) -> list[tuple[int, int]]:
    """The maximal runs of models (by rank order) that Holm-corrected Wilcoxon tests do not separate.

    Benavoli, Corani and Mangili (2016) advise against Nemenyi's test on mean ranks: whether two
    models differ then depends on the other models compared. This draws the diagram's bars from
    the pairwise Wilcoxon signed-rank tests, Holm-corrected (:func:`wilcoxon_pairs`): a bar joins
    the models at rank positions ``first`` to ``last`` when no pair among them is rejected.

    Parameters
    ----------
    models : sequence of str
        The models, in the order of ``average_ranks``.
    average_ranks : array-like of shape (n_models,)
        Their average ranks.
    pairs : sequence of WilcoxonPair
        Every pair of ``models`` (as :func:`wilcoxon_pairs` gives them).

    Returns
    -------
    list of tuple of int
        ``(first, last)`` positions in the ascending order of ``average_ranks`` (stable),
        ``first < last``, the form of the critical difference's groups in the diagram. A model
        that differs from both neighbours is in none.

    Examples
    --------
    >>> from mlneighbors.benchmark import WilcoxonPair, wilcoxon_cliques
    >>> def pair(a, b, reject):
    ...     return WilcoxonPair(a, b, 0.0, 0.5, 0.5, reject, 0, 0, 0, 0.0, 0.0)
    >>> pairs = [pair("A", "B", False), pair("A", "C", True), pair("B", "C", False)]
    >>> wilcoxon_cliques(["A", "B", "C"], [1.2, 2.0, 2.8], pairs)
    [(0, 1), (1, 2)]
    """
    labels = [str(m) for m in models]
    ranks = np.asarray(average_ranks, dtype=np.float64)
    if ranks.shape != (len(labels),):
        raise ValueError(f"average_ranks must hold one rank per model ({len(labels)}); got shape {ranks.shape}")
    position = {name: p for p, name in enumerate(labels)}
    differ = np.zeros((len(labels), len(labels)), dtype=bool)
    for p in pairs:
        if p.first not in position or p.second not in position:
            raise ValueError(f"the pair {p.first} / {p.second} names a model not in {labels}")
        differ[position[p.first], position[p.second]] = differ[position[p.second], position[p.first]] = p.reject
    order = np.argsort(ranks, kind="stable")
    differ = differ[np.ix_(order, order)]
    found, reach = [], 0
    for i in range(len(labels)):
        last = i
        while last + 1 < len(labels) and not differ[i:last + 2, i:last + 2].any():
            last += 1
        if last > i and last > reach:
            found.append((i, last))
            reach = last
    return found


@dataclass(frozen=True)
class BayesianPair:
    """The Bayesian signed-rank test of two models over the datasets, with a ROPE.

    The probabilities are baycomp's (``baycomp.two_on_multiple`` on the two columns): the share
    of the posterior's samples in which ``first`` is better by more than ``rope`` (``left``),
    the two are practically equivalent (``equivalent``), ``second`` is better by more than
    ``rope`` (``right``). They need no correction for multiple comparisons; Benavoli et al.
    (2017) read a probability above 0.95 as a decision.

    Parameters
    ----------
    first, second : str
        The models, in the table's order.
    rope : float
        The half-width of the region of practical equivalence, in the metric's units.
    left, equivalent, right : float
        ``P(first better)``, ``P(equivalent)``, ``P(second better)``; they sum to 1.
    samples : int
        The posterior's samples.
    seed : int
        baycomp's ``random_state``: the same seed gives the same probabilities.

    Examples
    --------
    >>> from mlneighbors.benchmark import BayesianPair
    >>> pair = BayesianPair("A", "B", 0.01, 0.01, 0.97, 0.02, 50000, 0)
    >>> pair.decision
    'equivalent'
    """

    first: str
    second: str
    rope: float
    left: float
    equivalent: float
    right: float
    samples: int
    seed: int

    @property
    def decision(self) -> str:
        """``first``'s name, ``second``'s, ``"equivalent"`` when a probability exceeds 0.95, else ``""``."""
        for p, name in ((self.left, self.first), (self.equivalent, "equivalent"), (self.right, self.second)):
            if p > 0.95:
                return name
        return ""


def _baycomp() -> Any:
    try:
        import baycomp
    except ImportError as exc:
        raise ImportError("the Bayesian signed-rank test needs baycomp: pip install 'mlneighbors[stats]'") from exc
    return baycomp


def bayesian_signed_rank(
    values: ArrayLike,
    *,
    models: Sequence[str] | None = None,
    greater_is_better: bool = True,
    rope: float = 0.01,
    samples: int = 50000,
    seed: int = 0,
) -> list[BayesianPair]:
    """The Bayesian signed-rank test (Benavoli et al. 2014, 2017) of every pair of models, by baycomp.

    Parameters
    ----------
    values : array-like of shape (n_datasets, n_models)
        One finite value per dataset and model (a metric's mean over folds); at least 2 datasets.
    models : sequence of str, optional
        The models' names, in the order of the columns.
    greater_is_better : bool, default=True
        For a metric better low the columns are negated first, so that ``left`` is always
        ``first`` better (baycomp's left is the first argument's higher scores).
    rope : float, default=0.01
        The region of practical equivalence: differences within ``rope`` (in the metric's
        units: 0.01 is one point of a score in [0, 1]) are no difference. 0 gives no ROPE.
    samples : int, default=50000
        The posterior's samples (baycomp's ``nsamples``; about 0.4 s per pair on 14 datasets).
    seed : int, default=0
        baycomp's ``random_state``, the same for every pair: the report is reproducible.

    Returns
    -------
    list of BayesianPair
        Every pair, in the order of ``itertools.combinations``.

    Raises
    ------
    ImportError
        Without baycomp (the ``stats`` extra).

    References
    ----------
    .. [1] A. Benavoli, G. Corani, F. Mangili, M. Zaffalon, F. Ruggeri, "A Bayesian Wilcoxon
       signed-rank test based on the Dirichlet process", ICML 2014.
    .. [2] A. Benavoli, G. Corani, J. Demšar, M. Zaffalon, "Time for a change: a tutorial for
       comparing multiple classifiers through Bayesian analysis", JMLR 18 (2017) 1-36.

    Examples
    --------
    >>> from mlneighbors.benchmark import bayesian_signed_rank
    >>> table = [[0.90, 0.80], [0.70, 0.60], [0.50, 0.45], [0.80, 0.70], [0.60, 0.50]]
    >>> (pair,) = bayesian_signed_rank(table, models=["A", "B"], samples=1000)  # doctest: +SKIP
    >>> pair.left > 0.9  # doctest: +SKIP
    True
    """
    table = _table(values)
    n, k = table.shape
    labels = _labels(models, k)
    if n < 2 or k < 2:
        raise ValueError(f"the Bayesian signed-rank test needs at least 2 datasets and 2 models; got {n} and {k}")
    if not (np.isfinite(rope) and rope >= 0):
        raise ValueError(f"rope must be a finite number >= 0; got {rope!r}")
    if isinstance(samples, bool) or not isinstance(samples, (int, np.integer)) or samples < 1:
        raise ValueError(f"samples must be a positive integer; got {samples!r}")
    baycomp = _baycomp()
    signed = table if greater_is_better else -table
    out = []
    for a, b in combinations(range(k), 2):
        left, equivalent, right = baycomp.two_on_multiple(signed[:, a], signed[:, b], float(rope),
                                                          nsamples=int(samples), random_state=int(seed))
        out.append(BayesianPair(labels[a], labels[b], float(rope), float(left), float(equivalent), float(right),
                                int(samples), int(seed)))
    return out


@dataclass(frozen=True)
class CorrectedTTest:
    """Nadeau and Bengio's corrected resampled t-test of two models on one dataset's folds.

    Parameters
    ----------
    statistic : float
        ``t = mean(d) / sqrt((1/J + n_test/n_train) s^2)``, ``d`` the per-fold differences,
        ``s^2`` their sample variance; infinite when every fold differs by the same non-zero
        amount, 0 when every fold ties.
    pvalue : float
        Two-sided, from Student's t with ``J - 1`` degrees of freedom.
    mean_difference : float
        ``mean(d)``, first minus second.
    folds : int
        ``J``, the folds (all repeats of cross-validation).
    test_train_ratio : float
        ``n_test / n_train`` of a fold.

    Examples
    --------
    >>> from mlneighbors.benchmark import corrected_resampled_t
    >>> result = corrected_resampled_t([0.8, 0.7, 0.9], [0.8, 0.7, 0.9], test_train_ratio=0.5)
    >>> result.statistic, result.pvalue
    (0.0, 1.0)
    """

    statistic: float
    pvalue: float
    mean_difference: float
    folds: int
    test_train_ratio: float


def corrected_resampled_t(first: ArrayLike, second: ArrayLike, *, test_train_ratio: float) -> CorrectedTTest:
    """Nadeau and Bengio's corrected resampled t-test over the folds of one dataset.

    The folds of cross-validation share training rows, so the per-fold differences are
    correlated and the plain paired t-test is far too liberal; Nadeau and Bengio (2003) inflate
    the variance by the test/train ratio: ``t = mean(d) / sqrt((1/J + n2/n1) s^2)`` with ``J``
    the folds (``k r`` for ``r`` repeats of ``k``-fold cross-validation, Bouckaert and Frank
    2004), ``n2/n1`` the test/train ratio of a fold (``1/(k - 1)`` for ``k``-fold), ``s^2`` the
    sample variance (ddof = 1) of the differences ``d``, and ``J - 1`` degrees of freedom. This
    is Weka's ``PairedCorrectedTTester`` and MEKA's, which mark a significant win ``v`` and a
    loss ``*``. No library exposes it; the p-value is ``scipy.stats.t``'s.

    Parameters
    ----------
    first, second : array-like of shape (n_folds,)
        The two models' values on the same folds; at least 2 folds.
    test_train_ratio : float
        ``n_test / n_train`` of a fold, > 0.

    Returns
    -------
    CorrectedTTest

    References
    ----------
    .. [1] C. Nadeau, Y. Bengio, "Inference for the Generalization Error", Machine Learning 52
       (2003) 239-281.
    .. [2] R. Bouckaert, E. Frank, "Evaluating the Replicability of Significance Tests for
       Comparing Learning Algorithms", PAKDD 2004, 3-12.

    Examples
    --------
    >>> from mlneighbors.benchmark import corrected_resampled_t
    >>> result = corrected_resampled_t([0.81, 0.79, 0.84, 0.80], [0.78, 0.77, 0.80, 0.79],
    ...                                test_train_ratio=1 / 3)
    >>> round(result.statistic, 3), round(result.pvalue, 4)
    (2.535, 0.085)
    """
    a = np.asarray(first, dtype=np.float64).reshape(-1)
    b = np.asarray(second, dtype=np.float64).reshape(-1)
    if a.shape != b.shape or a.size < 2:
        raise ValueError(f"the corrected resampled t-test needs the same >= 2 folds of both models; got {a.size} "
                         f"and {b.size}")
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        raise ValueError("the corrected resampled t-test needs a finite value on every fold")
    if not (np.isfinite(test_train_ratio) and test_train_ratio > 0):
        raise ValueError(f"test_train_ratio must be > 0; got {test_train_ratio!r}")
    d = a - b
    folds = d.size
    mean = float(d.mean())
    if np.ptp(d) == 0:
        # no variance: every fold ties (p = 1) or every fold differs by the same amount (Weka: p = 0)
        return CorrectedTTest(0.0 if mean == 0 else math.copysign(math.inf, mean), 1.0 if mean == 0 else 0.0,
                              mean, folds, float(test_train_ratio))
    t = mean / math.sqrt((1 / folds + test_train_ratio) * float(d.var(ddof=1)))
    return CorrectedTTest(float(t), float(2 * stats.t.sf(abs(t), folds - 1)), mean, folds, float(test_train_ratio))


@dataclass(frozen=True)
class Comparison:
    """Everything :func:`compare` found on one table.

    Parameters
    ----------
    models : tuple of str
        The models, in the table's column order.
    n_datasets : int
        ``N``, the number of datasets (rows) compared.
    alpha : float
        The significance level of every test.
    ranks : ndarray of shape (n_datasets, n_models)
        Each dataset's ranks (1 the best, ties averaged).
    average_ranks : ndarray of shape (n_models,)
        The column means of ``ranks``.
    friedman : Friedman or None
        None when skipped (fewer than 3 models or 2 datasets; ``notes`` says which).
    critical_difference : float or None
        Nemenyi's, None when skipped (fewer than 2 models or 2 datasets).
    nemenyi : list of NemenyiPair
        Every pair (empty when skipped).
    control : str or None
        The control of Holm's test.
    holm : list of HolmRow
        Every other model against ``control`` (empty without a control or when skipped).
    wilcoxon : list of WilcoxonPair
        Every pair (empty when skipped).
    notes : tuple of str
        Every decision taken on this table that a reader needs: skipped tests and why, ties,
        an infinite ``F_F``, post-hoc results without a Friedman rejection.
    bayesian : list of BayesianPair
        Every pair by the Bayesian signed-rank test (empty unless asked, or when skipped).

    Examples
    --------
    >>> from mlneighbors.benchmark import compare
    >>> result = compare([[0.9, 0.8], [0.7, 0.6]], models=["A", "B"])
    >>> result.average_ranks, result.friedman is None
    (array([1., 2.]), True)
    """

    models: tuple[str, ...]
    n_datasets: int
    alpha: float
    ranks: NDArray[np.float64]
    average_ranks: NDArray[np.float64]
    friedman: Friedman | None
    critical_difference: float | None
    nemenyi: list[NemenyiPair]
    control: str | None
    holm: list[HolmRow]
    wilcoxon: list[WilcoxonPair]
    notes: tuple[str, ...]
    bayesian: list[BayesianPair] = field(default_factory=list)


def compare(
    values: ArrayLike,
    *,
    models: Sequence[str] | None = None,
    greater_is_better: bool = True,
    control: str | None = None,
    alpha: float = 0.05,
    bayesian: bool = False,
    rope: float = 0.01,
    samples: int = 50000,
    seed: int = 0,
) -> Comparison:
    """Rank the models on every dataset and run every test that the table allows.

    Parameters
    ----------
    values : array-like of shape (n_datasets, n_models)
        One finite value per dataset and model.
    models : sequence of str, optional
        The models' names, in the order of the columns.
    greater_is_better : bool, default=True
        Whether the highest value is the best.
    control : str, optional
        A model of ``models`` to test every other against (Holm); none by default.
    alpha : float, default=0.05
        The significance level of every test.
    bayesian : bool, default=False
        Also the Bayesian signed-rank test of every pair (:func:`bayesian_signed_rank`, by
        baycomp: the ``stats`` extra).
    rope : float, default=0.01
        Its region of practical equivalence, in the metric's units.
    samples : int, default=50000
        Its posterior samples.
    seed : int, default=0
        Its seed.

    Returns
    -------
    Comparison

    Examples
    --------
    >>> from mlneighbors.benchmark import compare
    >>> table = [[0.9, 0.8, 0.7], [0.6, 0.5, 0.4], [0.8, 0.9, 0.1], [0.7, 0.6, 0.5]]
    >>> result = compare(table, models=["A", "B", "C"], control="A")
    >>> result.average_ranks
    array([1.25, 1.75, 3.  ])
    >>> round(result.friedman.statistic, 2), round(result.friedman.pvalue, 4)
    (6.5, 0.0388)
    >>> [(r.model, r.reject) for r in result.holm]
    [('C', True), ('B', False)]
    """
    alpha = _check_alpha(alpha)
    table = _table(values)
    n, k = table.shape
    labels = _labels(models, k)
    if control is not None and control not in labels:
        raise ValueError(f"control {control!r} is not one of the models {labels}")
    ranks = rank_table(table, greater_is_better=greater_is_better)
    average = ranks.mean(axis=0) if n else np.full(k, np.nan)
    notes: list[str] = []
    found = {"friedman": None, "cd": None, "nemenyi": [], "holm": [], "wilcoxon": []}
    if k < 2:
        notes.append(f"{k} model: nothing to compare, no test run")
    elif n < 2:
        notes.append(f"{n} dataset(s) with a value for every model: the tests need at least 2, none run")
    else:
        if (table == table[:, :1]).all():
            notes.append("every model ties with every other on every dataset: all average ranks are equal, "
                         "Friedman's statistic is 0 (p = 1) and no test finds a difference")
        if k == 2:
            notes.append("2 models: Friedman's and Iman-Davenport's tests need at least 3 (scipy refuses 2); "
                         "the Wilcoxon signed-rank test over datasets is the test of these two (Demšar 2006, "
                         "section 3.1.3)")
        else:
            result = friedman(table)
            found["friedman"] = result
            if np.isinf(result.f_statistic):
                notes.append("every dataset ranks the models the same way: Friedman's statistic is at its "
                             f"maximum N(k-1) = {n * (k - 1)}, Iman-Davenport's F is infinite (p = 0)")
            if n <= 10 or k <= 5:
                # Demšar's rule of thumb for the chi-square approximation of Friedman's statistic
                notes.append(f"with N = {n} datasets and k = {k} models Friedman's chi-square approximation is "
                             "rough (Demšar's rule of thumb: N > 10 and k > 5); Iman-Davenport's F is the better "
                             "guide")
            if result.f_pvalue > alpha:
                notes.append(f"Iman-Davenport's test does not reject equivalence at alpha = {alpha}: Demšar "
                             "reads the post-hoc tests below only after a rejection")
        found["cd"], found["nemenyi"] = nemenyi(average, n, models=labels, alpha=alpha)
        if control is not None:
            found["holm"] = holm_control(average, n, labels.index(control), models=labels, alpha=alpha)
        found["wilcoxon"] = wilcoxon_pairs(table, models=labels, greater_is_better=greater_is_better, alpha=alpha)
        if found["cd"] is not None and found["cd"] > k - 1:
            notes.append(f"Nemenyi's critical difference ({found['cd']:.3f}) exceeds the widest possible gap of "
                         f"average ranks (k - 1 = {k - 1}): with N = {n} datasets it cannot separate any pair")
        pairs = len(found["wilcoxon"])
        floor = 2.0 / 2.0**n  # the exact two-sided test's smallest p: every dataset on one side
        if pairs and min(1.0, pairs * floor) > alpha:
            needed = next(m for m in range(n, 64) if pairs * 2.0 / 2.0**m <= alpha)
            notes.append(f"with N = {n} datasets the Wilcoxon signed-rank test's smallest possible p is 2/2^{n} = "
                         f"{floor:.4g}, and Holm's correction over {pairs} pair(s) multiplies the smallest p by "
                         f"{pairs} (to {min(1.0, pairs * floor):.4g}): no pair can differ at alpha = {alpha}, "
                         f"whatever the results; that needs at least {needed} datasets")
        identical = [f"{p.first} = {p.second}" for p in found["wilcoxon"] if p.ties == n]
        if identical and len(identical) < len(found["wilcoxon"]):
            notes.append("equal on every dataset, so Wilcoxon p = 1: " + ", ".join(identical))
        if bayesian:
            found["bayesian"] = bayesian_signed_rank(table, models=labels, greater_is_better=greater_is_better,
                                                     rope=rope, samples=samples, seed=seed)
    return Comparison(tuple(labels), n, alpha, ranks, average, found["friedman"], found["cd"], found["nemenyi"],
                      control, found["holm"], found["wilcoxon"], tuple(notes), found.get("bayesian", []))
