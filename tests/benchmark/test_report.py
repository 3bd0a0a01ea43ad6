"""The benchmark report: rows in, cells and tests per metric, four text formats and the diagram out."""

from __future__ import annotations

import csv
import io
import json
import math
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from scipy import stats

from mlneighbors.benchmark import build_report, rank_table
from mlneighbors.metrics import METRICS

MODELS = ["MLkNN(k=10)", "BRkNN(k=10)", "DMLkNN(k=10)"]
DATASETS = ["emotions", "scene", "yeast", "birds", "genbase"]


def make_rows(rng, *, metrics=("micro_f1", "hamming_loss"), models=MODELS, datasets=DATASETS, folds=4):
    """Rows as the store gives them: a value per dataset, model, fold and metric."""
    values = rng.uniform(0.1, 0.9, size=(len(metrics), len(datasets), len(models), folds))
    rows = [(d, m, f, metric, float(values[t, i, j, f]))
            for t, metric in enumerate(metrics) for i, d in enumerate(datasets)
            for j, m in enumerate(models) for f in range(folds)]
    return rows, values


def test_means_stds_best_and_ranks_from_the_rows(rng):
    rows, values = make_rows(rng)
    report = build_report(rows)
    assert list(report) == ["hamming_loss", "micro_f1"]  # the registry's order, not the rows'
    for t, metric in enumerate(("micro_f1", "hamming_loss")):
        r = report[metric]
        assert r.greater_is_better == METRICS[metric].greater_is_better
        np.testing.assert_allclose(r.mean, values[t].mean(axis=2))
        np.testing.assert_allclose(r.std, values[t].std(axis=2, ddof=1))
        means = values[t].mean(axis=2)
        best = means.argmax(axis=1) if r.greater_is_better else means.argmin(axis=1)
        assert r.best.sum() == len(DATASETS)
        assert r.best[np.arange(len(DATASETS)), best].all()
        np.testing.assert_allclose(r.comparison.average_ranks,
                                   rank_table(means, greater_is_better=r.greater_is_better).mean(axis=0))
        assert r.comparison.friedman.statistic == pytest.approx(stats.friedmanchisquare(*means.T).statistic)
        assert r.dropped == {} and r.absent == ()


def test_lower_is_better_comes_from_the_registry(rng):
    rows = [(d, m, 0, "hamming_loss", v) for d in DATASETS for m, v in [("low", 0.1), ("high", 0.2)]]
    r = build_report(rows)["hamming_loss"]
    assert r.best[:, 0].all() and not r.best[:, 1].any()
    assert r.comparison.average_ranks.tolist() == [1.0, 2.0]


def test_equal_best_means_are_all_marked():
    rows = [(d, m, 0, "micro_f1", 0.5 if m != "c" else 0.4) for d in DATASETS[:3] for m in "abc"]
    r = build_report(rows)["micro_f1"]
    assert r.best.tolist() == [[True, True, False]] * 3


def test_failed_cell_drops_the_dataset_and_says_so(rng):
    rows, values = make_rows(rng, metrics=("micro_f1",))
    failed = [(d, m, f, t, math.nan if (d, m, f) == ("scene", "BRkNN(k=10)", 2) else v) for d, m, f, t, v in rows]
    report = build_report(failed)
    r = report["micro_f1"]
    assert r.status[1].tolist() == ["ok", "failed", "ok"]
    assert math.isnan(r.mean[1, 1]) and not r.best[1, 1]
    assert r.dropped == {"scene": "BRkNN(k=10) failed on 1 of 4 folds"}
    assert r.kept == ("emotions", "yeast", "birds", "genbase")
    assert r.comparison.n_datasets == 4
    kept = np.delete(values[0].mean(axis=2), 1, axis=0)
    np.testing.assert_allclose(r.comparison.average_ranks, rank_table(kept).mean(axis=0))
    assert any("1 of 5 datasets dropped" in n and "scene: BRkNN(k=10) failed on 1 of 4 folds" in n for n in r.notes)
    md = report.to_markdown()
    assert "failed (1 of 4 folds)" in md and "average rank (N = 4)" in md and "scene: BRkNN(k=10) failed" in md


def test_missing_and_incomplete_cells_drop_the_dataset(rng):
    rows, _ = make_rows(rng, metrics=("micro_f1",))
    rows = [r for r in rows if not (r[0] == "yeast" and r[1] == "DMLkNN(k=10)")]  # missing
    rows = [r for r in rows if not (r[0] == "birds" and r[1] == "MLkNN(k=10)" and r[2] == 3)]  # incomplete
    r = build_report(rows)["micro_f1"]
    assert r.status[2, 2] == "missing" and r.status[3, 0] == "incomplete"
    assert r.dropped == {"yeast": "DMLkNN(k=10) missing", "birds": "MLkNN(k=10) has 3 of 4 folds"}
    assert np.isnan(r.mean[3, 0])  # never a mean over fewer folds
    assert r.comparison.n_datasets == 3


def test_a_metric_a_model_cannot_give_is_absent_not_failed(rng):
    rows, _ = make_rows(rng, metrics=("micro_f1", "one_error"))
    rows = [r for r in rows if not (r[3] == "one_error" and r[1] == "BRkNN(k=10)")]  # BRkNN gives no scores
    report = build_report(rows, control="BRkNN(k=10)")
    r = report["one_error"]
    assert r.models == ("MLkNN(k=10)", "DMLkNN(k=10)") and r.absent == ("BRkNN(k=10)",)
    assert r.dropped == {} and r.comparison.n_datasets == len(DATASETS)
    assert any("absent, not failed" in n and "BRkNN(k=10)" in n for n in r.notes)
    assert any("control BRkNN(k=10) has no value" in n for n in r.notes) and r.comparison.holm == []
    assert len(report["micro_f1"].comparison.holm) == 2
    table = list(csv.DictReader(io.StringIO(report.to_csv())))
    absent = [row for row in table if row["metric"] == "one_error" and row["model"] == "BRkNN(k=10)"]
    assert len(absent) == len(DATASETS) and {row["status"] for row in absent} == {"absent"}


def test_two_models_report_the_wilcoxon_instead_of_friedman(rng):
    rows, values = make_rows(rng, metrics=("micro_f1",), models=["a", "b"])
    report = build_report(rows)
    c = report["micro_f1"].comparison
    assert c.friedman is None and len(c.wilcoxon) == 1
    means = values[0].mean(axis=2)
    assert c.wilcoxon[0].pvalue == pytest.approx(stats.wilcoxon(means[:, 0], means[:, 1]).pvalue)
    md = report.to_markdown()
    assert "Friedman:" not in md and "Wilcoxon signed-rank tests" in md and "2 models" in md


def test_ties_everywhere_report_without_nan():
    rows = [(d, m, f, "micro_f1", 0.5) for d in DATASETS for m in MODELS for f in range(3)]
    report = build_report(rows, control=MODELS[0])
    c = report["micro_f1"].comparison
    assert c.average_ranks.tolist() == [2.0, 2.0, 2.0]
    assert (c.friedman.statistic, c.friedman.pvalue) == (0.0, 1.0)
    assert report["micro_f1"].best.all()
    text = report.to_markdown() + report.to_latex() + report.to_csv() + report.to_json()
    assert not re.search(r"\bnan\b", text.lower())
    assert "ties with every other on every dataset" in report.to_markdown()


def test_fewer_than_two_datasets_skip_the_tests_with_a_reason(rng):
    rows, _ = make_rows(rng, metrics=("micro_f1",), datasets=["emotions"])
    report = build_report(rows, control=MODELS[0])
    c = report["micro_f1"].comparison
    assert c.friedman is None and c.critical_difference is None and c.wilcoxon == c.holm == []
    assert "the tests need at least 2, none run" in report.to_markdown()
    with pytest.raises(ValueError, match="no critical-difference diagram for micro_f1: .*at least 2"):
        report.cd_diagram("unused.png", "micro_f1")


def test_metrics_and_control_choices(rng):
    rows, _ = make_rows(rng)
    assert list(build_report(rows, metrics="micro_f1")) == ["micro_f1"]
    assert list(build_report(rows, metrics=["micro_f1", "hamming_loss"])) == ["micro_f1", "hamming_loss"]
    report = build_report(rows, control="BRkNN(k=10)", alpha=0.1)
    c = report["micro_f1"].comparison
    assert c.alpha == 0.1 and {h.model for h in c.holm} == {"MLkNN(k=10)", "DMLkNN(k=10)"}
    assert build_report(rows)["micro_f1"].comparison.holm == []


def test_bad_rows_are_one_clear_error(rng):
    rows, _ = make_rows(rng)
    with pytest.raises(ValueError, match="no rows"):
        build_report([])
    with pytest.raises(ValueError, match="row 1 is not"):
        build_report([rows[0], ("emotions", "a", 0, "micro_f1")])
    with pytest.raises(ValueError, match="row 0 is not"):
        build_report([("emotions", "a", "first", "micro_f1", 0.3)])
    with pytest.raises(ValueError, match="two rows for dataset 'emotions', model 'MLkNN.k=10.', fold 0"):
        build_report([*rows, rows[0]])
    with pytest.raises(ValueError, match="does not know"):
        build_report([("emotions", "a", 0, "accuracy_of_sorts", 0.3)])
    with pytest.raises(ValueError, match=r"unknown metric\(s\) \['f1'\]"):
        build_report(rows, metrics="f1")
    with pytest.raises(ValueError, match=r"no rows for metric\(s\) \['one_error'\]"):
        build_report(rows, metrics="one_error")
    with pytest.raises(ValueError, match="control 'kNN' is not a model"):
        build_report(rows, control="kNN")
    with pytest.raises(ValueError, match="alpha"):
        build_report(rows, alpha=0)


# -- the formats ------------------------------------------------------------------------------


@pytest.fixture
def report(rng):
    rows, _ = make_rows(rng, metrics=("micro_f1", "one_error"), models=[*MODELS, "odd | name_&%"])
    rows = [r for r in rows if not (r[3] == "one_error" and r[1] == "BRkNN(k=10)")]
    rows = [(*r[:4], math.nan) if (r[0], r[1], r[3]) == ("yeast", "MLkNN(k=10)", "micro_f1") else r for r in rows]
    return build_report(rows, control="MLkNN(k=10)")


def test_csv_parses(report):
    table = list(csv.DictReader(io.StringIO(report.to_csv())))
    assert tuple(table[0]) == report.CSV_COLUMNS
    assert len(table) == 2 * len(DATASETS) * 4  # every model of the rows, absent ones included
    best = [row for row in table if row["best"] == "1"]
    assert len(best) == 2 * len(DATASETS)
    cell = next(row for row in table if (row["dataset"], row["model"], row["metric"])
                == ("yeast", "MLkNN(k=10)", "micro_f1"))
    assert (cell["status"], cell["mean"], cell["rank"], cell["failed_folds"]) == ("failed", "", "", "4")
    ok = next(row for row in table if row["status"] == "ok")
    assert 0.1 <= float(ok["mean"]) <= 0.9 and 1 <= float(ok["rank"]) <= 4


def test_json_parses_and_holds_the_tests(report):
    data = json.loads(report.to_json())
    assert data["alpha"] == 0.05 and data["control"] == "MLkNN(k=10)"
    micro = data["metrics"][0]
    assert micro["metric"] == "micro_f1" and micro["dropped"] == {"yeast": "MLkNN(k=10) failed on 4 of 4 folds"}
    assert set(micro["friedman"]) == {"statistic", "pvalue", "f_statistic", "f_pvalue", "n_datasets", "n_models"}
    assert len(micro["nemenyi"]) == len(micro["wilcoxon"]) == 6 and len(micro["holm"]) == 3
    assert sum(cell["best"] for cell in micro["cells"]) == len(DATASETS)
    assert data["metrics"][1]["absent"] == ["BRkNN(k=10)"]


def test_latex_is_booktabs_with_bold_best_and_escapes(report):
    tex = report.to_latex()
    for rule in (r"\toprule", r"\midrule", r"\bottomrule"):
        assert tex.count(rule) >= 2
    assert tex.count(r"\begin{tabular}") == tex.count(r"\end{tabular}")
    assert r"\textbf{" in tex and r"odd \textbar{} name\_\&\%" in tex and "name_&%" not in tex
    assert tex.count("{") - tex.count(r"\{") == tex.count("}") - tex.count(r"\}")
    # a data row has as many cells as the header
    header = next(line for line in tex.splitlines() if line.startswith("Dataset &"))
    row = next(line for line in tex.splitlines() if line.startswith("emotions &"))
    assert len(re.split(r"(?<!\\)&", header)) == len(re.split(r"(?<!\\)&", row)) == 5


def test_markdown_tables_are_well_formed(report):
    md = report.to_markdown()
    blocks = re.findall(r"((?:^\|.*\|\n)+)", md, flags=re.M)
    assert len(blocks) == 2 * 3  # per metric: the means, Holm's against the control, the Wilcoxon's
    for block in blocks:
        lines = block.splitlines()
        assert re.fullmatch(r"\|(---:?\|)+", lines[1])
        widths = {len(re.split(r"(?<!\\)\|", line)) for line in lines}
        assert len(widths) == 1, block
    assert "**" in md and r"odd \| name_&%" in md
    assert md.startswith("## micro_f1 (higher is better)") and "## one_error (lower is better)" in md


@pytest.mark.requires("matplotlib")
def test_cd_diagram_png_and_svg(report, tmp_path):
    png, svg = tmp_path / "cd.png", tmp_path / "out" / "cd.svg"
    report.cd_diagram(png, "micro_f1")
    report.cd_diagram(svg, "micro_f1")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 1000
    assert ET.parse(svg).getroot().tag == "{http://www.w3.org/2000/svg}svg" and svg.stat().st_size > 1000
    with pytest.raises(ValueError, match="PNG or SVG"):
        report.cd_diagram(tmp_path / "cd.pdf", "micro_f1")
    with pytest.raises(ValueError, match="name the metric"):
        report.cd_diagram(png)
    with pytest.raises(KeyError, match="no metric 'coverage'"):
        report.cd_diagram(png, "coverage")
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["cd.png", "cd.svg", "out"]  # no temporary left


@pytest.mark.requires("matplotlib")
def test_cd_diagram_shows_friedman_and_a_critical_difference_wider_than_the_ranks(rng, tmp_path):
    """Two datasets, six models: CD = 5.33 ranks on an axis of 5; the diagram says it separates
    nothing instead of drawing the bar past the axis, and gives Friedman's p."""
    models = ["A", "B", "C", "D", "E", "F"]
    rows = [(d, m, 0, "micro_f1", rng.random()) for d in ("emotions", "scene") for m in models]
    report = build_report(rows)
    c = report["micro_f1"].comparison
    assert c.critical_difference > len(models) - 1
    assert any("cannot separate any pair" in note for note in report["micro_f1"].notes)
    svg = tmp_path / "cd.svg"
    report.cd_diagram(svg)
    text = svg.read_text()  # matplotlib keeps each text as a comment beside its glyphs
    assert f"Friedman p = {c.friedman.pvalue:.4f}" in text
    assert "wider than the ranks: no pair can be separated" in text


@pytest.mark.requires("matplotlib")
def test_cd_diagram_groups():
    from mlneighbors.benchmark._diagram import cliques

    # Demšar's example: CD = 1.254 joins all four; at 1.12 (alpha = 0.10) C4.5 leaves the best two
    ranks = [3.143, 2.000, 2.893, 1.964]
    assert cliques(ranks, 1.254) == [(0, 3)]
    assert cliques(ranks, 1.12) == [(0, 2), (2, 3)]
    assert cliques([1.0, 2.0, 3.0], 0.5) == []


def _paper_report(rng):
    """Eight configurations on eight datasets, two of them files under long paths, with the
    provenance a store gives: the size of a paper's table."""
    models = ["mlknn:k=5", "mlknn:k=10", "brknn", "brknn:extension=a", "brknn:extension=b", "lpknn", "dmlknn",
              "lamlknn"]
    datasets = ["emotions", "yeast", "scene", "genbase", "medical", "birds",
                "projects/multi-label/data/flags-train.arff", "../a/my_data set #2.arff"]
    rows = [(d, m, f, metric, rng.uniform(0.1, 0.9)) for d in datasets for m in models for f in range(10)
            for metric in ("micro_f1", "hamming_loss")]
    provenance = {
        "store": "/tmp/results.sqlite", "mlneighbors": "0.1.0",
        "protocol": {"kind": "cv", "folds": 10, "repeats": 1, "seed": 0},
        "datasets": {d: {"sha256": f"{i:x}" * 64, "folds_sha256": "ab" * 32, "n_samples": 593, "n_features": 72,
                         "n_labels": 6, "n_test": None, "scale": "minmax"} for i, d in enumerate(datasets)},
        "models": {m: {"n_neighbors": 10, "smoothing": 1.0, "backend": "exact", "metric": "euclidean",
                       "backend_params": None, "n_jobs": None} for m in models},
        "runs": [{"run": 1, "version": "0.1.0", "started": "2026-12-02T05:00:00+00:00", "ended": None,
                  "machine": {"platform": "Linux-x86_64"}, "command": "mlneighbors benchmark run ..."}],
    }
    return build_report(rows, control="mlknn:k=10", provenance=provenance)


def test_latex_states_its_provenance_and_escapes_what_ot1_misprints(rng):
    tex = _paper_report(rng).to_latex()
    assert "0" * 64 in tex and "7" * 64 in tex  # every dataset's sha256
    assert "mlneighbors 0.1.0" in tex and "10-fold stratified cross-validation" in tex and "seed 0" in tex
    assert r"n\_neighbors=10" in tex  # the configurations' parameters
    # pdflatex's default encoding prints > as an inverted question mark: never a bare < or > in text
    text = re.sub(r"\$[^$]*\$", "", tex)  # math mode may hold them
    assert not re.search(r"(?<!\\)[<>]", text.replace(r"\ifdim\width>\linewidth", ""))
    # the tests of a metric are in its table's float and name the metric
    block = tex[tex.index(r"\caption{micro\_f1"):]
    block = block[:block.index(r"\end{table}")]
    assert r"\textit{Tests on micro\_f1}" in block and "Friedman" in block and "Note 1." in block
    # files are named by their stem in the tables, their paths given once under the provenance
    assert "\nflags-train & " in tex and "my\\_data set \\#2 & " in tex
    assert r"multi-label/\allowbreak{}data" in tex


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="needs pdflatex (TeX Live)")
def test_latex_compiles_into_a_paper_within_its_text_width(rng, tmp_path):
    (tmp_path / "report.tex").write_text(_paper_report(rng).to_latex(), encoding="utf-8")
    (tmp_path / "paper.tex").write_text("\n".join([
        r"\documentclass{article}", r"\usepackage{booktabs}", r"\usepackage{graphicx}", r"\begin{document}",
        "A paragraph of the paper.", r"\input{report}", r"\end{document}", ""]), encoding="utf-8")
    run = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "paper.tex"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=120)
    log = (tmp_path / "paper.log").read_text(encoding="latin-1")
    assert run.returncode == 0, log[-2000:]
    assert "Overfull \\hbox" not in log  # no table, caption or note wider than the text
    if shutil.which("pdftotext") is not None:
        text = subprocess.run(["pdftotext", "paper.pdf", "-"], cwd=tmp_path, capture_output=True, text=True,
                              timeout=60).stdout
        assert "¿" not in text and "¡" not in text and "N > 10" in text
        assert "Tests on micro" in text.replace("\n", " ")
