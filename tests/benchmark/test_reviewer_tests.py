"""The tests reviewers ask for beside Demšar's: the Bayesian signed-rank test (equal to baycomp's),
the effect sizes of the Wilcoxon pairs, the Wilcoxon-Holm cliques of the diagram and Nadeau and
Bengio's corrected resampled t-test per dataset, each against a library or a loop twin."""

from __future__ import annotations

import csv
import io
import json
import math
import shutil
import statistics
import subprocess
import sys
from itertools import combinations

import numpy as np
import pytest
from scipy import stats

from mlneighbors import BRkNN, MLkNN
from mlneighbors.benchmark import (
    BenchmarkData,
    WilcoxonPair,
    bayesian_signed_rank,
    build_report,
    compare,
    corrected_resampled_t,
    read_store,
    run_benchmark,
    wilcoxon_cliques,
    wilcoxon_pairs,
)
from mlneighbors.cli import main

MODELS = ["A", "B", "C"]


def table_of(rng, n=8, k=3):
    base = rng.uniform(0.4, 0.8, size=(n, 1))
    return np.round(base + rng.normal(scale=0.03, size=(n, k)) + np.array([0.02, 0.0, -0.02][:k]), 3)


# --------------------------------------------------------------------------------------
# the Bayesian signed-rank test: baycomp's numbers
# --------------------------------------------------------------------------------------


@pytest.mark.requires("baycomp")
@pytest.mark.parametrize("rope", [0.01, 0.0])
def test_bayesian_signed_rank_equals_baycomp(rng, rope):
    import baycomp

    table = table_of(rng)
    pairs = bayesian_signed_rank(table, models=MODELS, rope=rope, samples=3000, seed=7)
    assert [(p.first, p.second) for p in pairs] == list(combinations(MODELS, 2))
    for p, (a, b) in zip(pairs, combinations(range(3), 2), strict=True):
        expected = baycomp.two_on_multiple(table[:, a], table[:, b], rope, nsamples=3000, random_state=7)
        assert (p.left, p.equivalent, p.right) == tuple(float(x) for x in expected)
        assert p.left + p.equivalent + p.right == pytest.approx(1.0)
        assert (p.rope, p.samples, p.seed) == (rope, 3000, 7)


@pytest.mark.requires("baycomp")
def test_bayesian_left_is_the_first_better_also_for_a_metric_better_low(rng):
    import baycomp

    table = table_of(rng)
    (low,) = bayesian_signed_rank(table[:, :2], greater_is_better=False, samples=2000, seed=3)
    # baycomp's left is its first argument's higher scores: the negated losses
    expected = baycomp.two_on_multiple(-table[:, 0], -table[:, 1], 0.01, nsamples=2000, random_state=3)
    assert (low.left, low.equivalent, low.right) == tuple(float(x) for x in expected)
    # and negating both columns mirrors the posterior exactly
    (high,) = bayesian_signed_rank(table[:, :2], samples=2000, seed=3)
    assert (low.left, low.equivalent, low.right) == (high.right, high.equivalent, high.left)


@pytest.mark.requires("baycomp")
def test_the_report_gives_baycomps_numbers_on_its_table_of_means(rng):
    import baycomp

    rows = [(d, m, f, metric, float(v)) for metric in ("micro_f1", "hamming_loss")
            for i, d in enumerate("abcdef") for j, m in enumerate(MODELS) for f in range(3)
            for v in [0.5 + 0.02 * i - 0.03 * j + 0.01 * f + rng.normal(scale=0.01)]]
    report = build_report(rows, bayesian=True, rope=0.02, samples=1000, seed=11)
    for metric, r in report.metrics.items():
        c = r.comparison
        signed = r.mean if r.greater_is_better else -r.mean
        for p, (a, b) in zip(c.bayesian, combinations(range(3), 2), strict=True):
            expected = baycomp.two_on_multiple(signed[:, a], signed[:, b], 0.02, nsamples=1000, random_state=11)
            assert (p.left, p.equivalent, p.right) == tuple(float(x) for x in expected), metric
    again = build_report(rows, bayesian=True, rope=0.02, samples=1000, seed=11)
    assert again.to_json() == report.to_json()  # the seed makes the report reproducible
    text = report.to_markdown()
    assert "Bayesian signed-rank tests over the 6 datasets" in text and "| P(first better) |" in text
    assert "P$(equivalent)" in report.to_latex()
    data = json.loads(report.to_json())["metrics"][0]["bayesian"]
    assert data[0]["first"] == "A" and {"left", "equivalent", "right", "rope", "decision"} <= set(data[0])


def test_a_missing_baycomp_is_one_error_naming_the_extra(monkeypatch, rng):
    monkeypatch.setitem(sys.modules, "baycomp", None)  # import baycomp now raises ImportError
    with pytest.raises(ImportError, match=r"pip install 'mlneighbors\[stats\]'"):
        bayesian_signed_rank(table_of(rng))
    assert compare(table_of(rng)).bayesian == []  # not asked: nothing imported


def test_bayesian_bad_values_are_one_clear_error(rng):
    with pytest.raises(ValueError, match="rope"):
        bayesian_signed_rank(table_of(rng), rope=-0.1)
    with pytest.raises(ValueError, match="samples"):
        bayesian_signed_rank(table_of(rng), samples=0)
    with pytest.raises(ValueError, match="2 datasets"):
        bayesian_signed_rank(table_of(rng)[:1])


# --------------------------------------------------------------------------------------
# effect sizes of the Wilcoxon pairs
# --------------------------------------------------------------------------------------


def loop_rank_biserial(x, y, greater_is_better=True):
    """Kerby's r by counting: the signed ranks of |d| (ties averaged, zeros dropped)."""
    d = [(a - b) if greater_is_better else (b - a) for a, b in zip(x, y, strict=True)]
    d = [v for v in d if v != 0]
    if not d:
        return 0.0
    plus = minus = 0.0
    for v in d:
        smaller = sum(abs(w) < abs(v) for w in d)
        equal = sum(abs(w) == abs(v) for w in d)
        rank = smaller + (equal + 1) / 2
        plus, minus = (plus + rank, minus) if v > 0 else (plus, minus + rank)
    return (plus - minus) / (plus + minus)


@pytest.mark.parametrize("greater_is_better", [True, False])
def test_effect_sizes_equal_their_loop_twins(rng, greater_is_better):
    table = table_of(rng, n=10)
    table[2, 1] = table[2, 0]  # a zero difference
    table[5, 1], table[6, 1] = table[5, 0] - 0.01, table[6, 0] + 0.01  # tied |d|
    for p, (a, b) in zip(wilcoxon_pairs(table, models=MODELS, greater_is_better=greater_is_better),
                         combinations(range(3), 2), strict=True):
        sign = 1 if greater_is_better else -1
        assert p.mean_difference == pytest.approx(sign * statistics.fmean(table[:, a] - table[:, b]), abs=1e-15)
        assert p.rank_biserial == pytest.approx(loop_rank_biserial(table[:, a], table[:, b], greater_is_better))
        assert -1 <= p.rank_biserial <= 1


def test_rank_biserial_is_scipys_signed_rank_sum():
    x = np.array([0.9, 0.7, 0.5, 0.8, 0.6, 0.9, 0.4])
    y = np.array([0.8, 0.75, 0.45, 0.7, 0.6, 0.85, 0.5])
    (p,) = wilcoxon_pairs(np.c_[x, y])
    n = int((x != y).sum())
    r_plus = stats.wilcoxon(x, y, alternative="greater").statistic  # R+ over the non-zero differences
    assert p.rank_biserial == pytest.approx(2 * r_plus / (n * (n + 1) / 2) - 1)


# --------------------------------------------------------------------------------------
# Wilcoxon-Holm cliques
# --------------------------------------------------------------------------------------


def brute_cliques(ranks, differ):
    """Every maximal run of the rank order with no pair rejected, by trying every run."""
    order = np.argsort(ranks, kind="stable")
    k = len(ranks)
    runs = [(i, j) for i in range(k) for j in range(i + 1, k)
            if not any(differ[order[a], order[b]] for a in range(i, j + 1) for b in range(i, j + 1))]
    return sorted(r for r in runs if not any(o != r and o[0] <= r[0] and r[1] <= o[1] for o in runs))


def test_wilcoxon_cliques_equal_the_brute_force_twin(rng):
    for _ in range(30):
        k = int(rng.integers(2, 7))
        names = [f"m{j}" for j in range(k)]
        ranks = rng.permutation(np.arange(1, k + 1)).astype(float)
        differ = np.zeros((k, k), dtype=bool)
        pairs = []
        for a, b in combinations(range(k), 2):
            reject = bool(rng.random() < 0.4)
            differ[a, b] = differ[b, a] = reject
            pairs.append(WilcoxonPair(names[a], names[b], 0.0, 0.5, 0.5, reject, 0, 0, 0, 0.0, 0.0))
        assert wilcoxon_cliques(names, ranks, pairs) == brute_cliques(ranks, differ)


def test_wilcoxon_cliques_of_a_comparison(rng):
    table = table_of(rng, n=12, k=3)
    table[:, 0] += 0.2  # A far ahead of the other two on every dataset
    c = compare(table, models=MODELS)
    rejected = {(p.first, p.second) for p in c.wilcoxon if p.reject}
    assert rejected >= {("A", "B"), ("A", "C")}
    groups = wilcoxon_cliques(c.models, c.average_ranks, c.wilcoxon)
    assert groups == ([] if ("B", "C") in rejected else [(1, 2)])


@pytest.mark.requires("matplotlib")
def test_the_diagram_draws_the_wilcoxon_holm_cliques(rng, tmp_path, monkeypatch):
    from mlneighbors.benchmark import _diagram

    drawn = {}
    real = _diagram.cd_diagram

    def spy(ranks, models, cd, path, **kwargs):
        drawn.update(cd=cd, groups=kwargs.get("groups"))
        return real(ranks, models, cd, path, **kwargs)

    monkeypatch.setattr(_diagram, "cd_diagram", spy)
    rows = [(d, m, 0, "micro_f1", float(v)) for i, d in enumerate("abcdefghij")
            for m, v in zip(MODELS, table_of(rng, n=10)[i] + [0.2, 0, 0], strict=True)]
    report = build_report(rows)
    report.cd_diagram(tmp_path / "w.svg", cliques="wilcoxon-holm")
    c = report["micro_f1"].comparison
    assert drawn["cd"] is None and drawn["groups"] == wilcoxon_cliques(c.models, c.average_ranks, c.wilcoxon)
    assert (tmp_path / "w.svg").stat().st_size > 0
    report.cd_diagram(tmp_path / "n.svg")
    assert drawn == {"cd": c.critical_difference, "groups": None}
    with pytest.raises(ValueError, match="wilcoxon-holm"):
        report.cd_diagram(tmp_path / "x.svg", cliques="holm")


# --------------------------------------------------------------------------------------
# Nadeau and Bengio's corrected resampled t-test
# --------------------------------------------------------------------------------------


def loop_corrected_t(x, y, ratio):
    """The formula, by hand: t = mean(d) / sqrt((1/J + n2/n1) s^2), J - 1 degrees of freedom."""
    d = [a - b for a, b in zip(x, y, strict=True)]
    J = len(d)
    mean = sum(d) / J
    s2 = sum((v - mean) ** 2 for v in d) / (J - 1)
    t = mean / math.sqrt((1 / J + ratio) * s2)
    return t, 2 * stats.t.sf(abs(t), J - 1)


@pytest.mark.parametrize("folds, ratio", [(10, 1 / 9), (5, 1 / 4), (30, 1 / 9)])
def test_corrected_t_equals_its_loop_twin(rng, folds, ratio):
    x = rng.uniform(0.5, 0.7, folds)
    y = x - 0.01 + rng.normal(scale=0.02, size=folds)
    result = corrected_resampled_t(x, y, test_train_ratio=ratio)
    t, p = loop_corrected_t(x, y, ratio)
    assert result.statistic == pytest.approx(t, rel=1e-12) and result.pvalue == pytest.approx(p, rel=1e-10)
    assert (result.folds, result.test_train_ratio) == (folds, ratio)
    # without the correction's term it is the plain paired t-test
    plain = corrected_resampled_t(x, y, test_train_ratio=1e-300)
    assert plain.statistic == pytest.approx(stats.ttest_rel(x, y).statistic, rel=1e-12)
    assert abs(result.statistic) < abs(plain.statistic)  # the correction is conservative


def test_corrected_t_without_variance_and_bad_input():
    assert corrected_resampled_t([0.5, 0.6], [0.5, 0.6], test_train_ratio=1).pvalue == 1.0
    same = corrected_resampled_t([0.75, 0.5, 0.25], [0.5, 0.25, 0.0], test_train_ratio=0.5)  # exact binary
    assert same.statistic > 0 and math.isinf(same.statistic) and same.pvalue == 0.0
    with pytest.raises(ValueError, match="2 folds"):
        corrected_resampled_t([0.5], [0.4], test_train_ratio=0.5)
    with pytest.raises(ValueError, match="test_train_ratio"):
        corrected_resampled_t([0.5, 0.6], [0.4, 0.3], test_train_ratio=0)


def fold_rows(rng, metric="micro_f1", folds=5):
    """Per-fold rows where B beats A on 'a', loses on 'b', and C is A plus noise."""
    base = {"a": 0.6, "b": 0.5, "c": 0.7}
    shift = {("a", "B"): 0.05, ("b", "B"): -0.05}
    rows, values = [], {}
    for d, v in base.items():
        folds_of_a = v + rng.normal(scale=0.01, size=folds)
        for m in MODELS:
            noise = rng.normal(scale=0.01 if m == "C" else 0.004, size=folds)
            vals = folds_of_a + shift.get((d, m), 0.0) + (0 if m == "A" else noise)
            values[d, m] = vals
            rows += [(d, m, f, metric, float(x)) for f, x in enumerate(vals)]
    return rows, values


@pytest.mark.parametrize("metric", ["micro_f1", "hamming_loss"])
def test_fold_marks_equal_the_loop_twin_as_weka_marks_them(rng, metric):
    rows, values = fold_rows(rng, metric)
    greater = metric == "micro_f1"
    report = build_report(rows, control="A", fold_test=True, test_train_ratio=1 / 4)
    tests = report[metric].fold_tests
    assert tests.control == "A" and tests.test_train_ratio == 0.25
    for i, d in enumerate("abc"):
        assert tests.mark[i, 0] == "" and math.isnan(tests.pvalue[i, 0])  # the control
        for j, m in enumerate(MODELS[1:], 1):
            t, p = loop_corrected_t(values[d, m], values[d, "A"], 1 / 4)
            assert tests.statistic[i, j] == pytest.approx(t, rel=1e-10)
            assert tests.pvalue[i, j] == pytest.approx(p, rel=1e-8)
            expected = "" if p > 0.05 else "v" if (t > 0) == greater else "*"
            assert tests.mark[i, j] == expected
    # B is better on a and worse on b for micro_f1; the other way round for a loss
    assert tests.mark[:2, 1].tolist() == (["v", "*"] if greater else ["*", "v"])
    wins, ties, losses = tests.wins_ties_losses("B")
    assert (wins, ties, losses) == (1, 1, 1)


def test_fold_marks_in_every_format(rng):
    rows, _ = fold_rows(rng)
    report = build_report(rows, control="A", fold_test=True, test_train_ratio=1 / 4)
    md = report.to_markdown()
    assert "| (v/ /\\*) against the control | control | (1/1/1) |" in md
    assert "corrected resampled t-test" in md and " v |" in md and " \\* |" in md
    tex = report.to_latex()
    assert r"\,$\circ$" in tex and r"\,$\bullet$" in tex and r"($\circ$/ /$\bullet$)" in tex
    table = list(csv.DictReader(io.StringIO(report.to_csv())))
    assert tuple(table[0]) == report.CSV_COLUMNS + report.FOLD_CSV_COLUMNS
    marks = {(row["dataset"], row["model"]): row["fold_mark"] for row in table}
    assert marks["a", "B"] == "v" and marks["b", "B"] == "*" and marks["a", "A"] == ""
    data = json.loads(report.to_json())["metrics"][0]["fold_tests"]
    assert data["control"] == "A" and data["wins_ties_losses"]["B"] == [1, 1, 1]
    assert {(c["dataset"], c["model"]): c["mark"] for c in data["cells"]}["a", "B"] == "v"


def test_fold_test_needs_a_control_and_a_ratio(rng):
    rows, _ = fold_rows(rng)
    with pytest.raises(ValueError, match="give control"):
        build_report(rows, fold_test=True, test_train_ratio=0.25)
    with pytest.raises(ValueError, match="test_train_ratio"):
        build_report(rows, control="A", fold_test=True)
    with pytest.raises(ValueError, match="one fold"):
        build_report([r for r in rows if r[2] == 0], control="A", fold_test=True,
                     provenance={"protocol": {"kind": "split", "seed": 0}})


def test_the_default_report_runs_none_of_the_asked_for_tests(rng):
    rows, _ = fold_rows(rng)
    report = build_report(rows, control="A")
    assert report["micro_f1"].fold_tests is None and report["micro_f1"].comparison.bayesian == []
    assert "(v/ /" not in report.to_markdown() and "Bayesian" not in report.to_markdown()
    assert report.to_csv().splitlines()[0] == ",".join(report.CSV_COLUMNS)
    assert "fold_tests" not in report.to_json() and '"bayesian"' not in report.to_json()
    assert "rank-biserial" in report.to_markdown()  # the effect sizes are cheap: always there


# --------------------------------------------------------------------------------------
# the store and the command line
# --------------------------------------------------------------------------------------


def toy(seed: int, n: int = 45) -> BenchmarkData:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    return BenchmarkData(X, (X[:, :3] + rng.normal(scale=0.5, size=(n, 3)) > 0).astype(int))


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    path = tmp_path_factory.mktemp("reviewers") / "r.sqlite"
    run_benchmark(path, {"mlknn:k=3": MLkNN(3), "mlknn:k=7": MLkNN(7), "brknn": BRkNN(5)},
                  {f"toy{s}": toy(s) for s in range(4)}, metrics=["hamming_loss", "micro_f1"], folds=3)
    return path


def test_the_ratio_comes_from_the_stores_protocol(store):
    rows, provenance = read_store(store)
    report = build_report(rows, control="brknn", fold_test=True, provenance=provenance)
    tests = report["micro_f1"].fold_tests
    assert tests.test_train_ratio == 0.5  # 3-fold cross-validation: 1/(k - 1)
    control = report["micro_f1"].models.index("brknn")
    others = [j for j in range(3) if j != control]
    assert np.isfinite(tests.pvalue[:, others]).all() and np.isnan(tests.pvalue[:, control]).all()


@pytest.mark.requires("baycomp")
def test_the_report_command_runs_the_asked_for_tests(store, capsys):
    assert main(["benchmark", "report", str(store), "--control", "brknn", "--fold-test", "--bayesian",
                 "--samples", "500", "--rope", "0.02", "--seed", "3", "--metrics", "micro_f1"]) == 0
    out = capsys.readouterr().out
    assert "| (v/ /\\*) against the control |" in out and "n_test/n_train = 0.5" in out
    assert "500 posterior samples, seed 3), region of practical equivalence +/- 0.02" in out
    assert main(["benchmark", "report", str(store), "--bayesian", "--samples", "500", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert all(len(m["bayesian"]) == 3 for m in data["metrics"])


@pytest.mark.requires("matplotlib")
def test_the_report_command_draws_wilcoxon_holm_cliques(store, tmp_path, capsys):
    path = tmp_path / "cd.svg"
    assert main(["benchmark", "report", str(store), "--metrics", "micro_f1", "--diagram", str(path),
                 "--cd", "wilcoxon-holm"]) == 0
    assert path.stat().st_size > 0


@pytest.mark.parametrize("argv, words", [
    (["--fold-test"], "--fold-test tests every configuration against the control"),
    (["--cd", "wilcoxon-holm"], "give --diagram FILE too"),
    (["--rope", "-1", "--bayesian"], "--rope must be a number >= 0"),
    (["--samples", "0", "--bayesian"], "--samples must be at least 1"),
])
def test_the_report_command_refuses_bad_options_in_one_line(store, capsys, argv, words):
    assert main(["benchmark", "report", str(store), *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and words in err


def test_the_report_command_names_the_extra_without_baycomp(store, capsys, monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "baycomp" else real(name, *a))
    assert main(["benchmark", "report", str(store), "--bayesian"]) == 2
    assert "pip install 'mlneighbors[stats]'" in capsys.readouterr().err


@pytest.mark.requires("baycomp")
@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="needs pdflatex (TeX Live)")
def test_the_latex_of_the_asked_for_tests_compiles_within_the_text_width(rng, tmp_path):
    rows, _ = fold_rows(rng)
    report = build_report(rows, control="A", fold_test=True, test_train_ratio=1 / 4, bayesian=True, samples=500)
    (tmp_path / "report.tex").write_text(report.to_latex(), encoding="utf-8")
    (tmp_path / "paper.tex").write_text("\n".join([
        r"\documentclass{article}", r"\usepackage{booktabs}", r"\usepackage{graphicx}", r"\begin{document}",
        r"\input{report}", r"\end{document}", ""]), encoding="utf-8")
    run = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "paper.tex"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=120)
    log = (tmp_path / "paper.log").read_text(encoding="latin-1")
    assert run.returncode == 0, log[-2000:]
    assert "Overfull \\hbox" not in log
