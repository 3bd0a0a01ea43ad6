"""The reproductions (mlneighbors.experiments): the papers' numbers and every paper in quick mode."""

from __future__ import annotations

import csv
import math
import sys

import numpy as np
import pytest

from mlneighbors.experiments import COLUMNS, _papers, get_paper, list_papers, reproduce

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


# --------------------------------------------------------------------------------------
# the registry and the papers' numbers
# --------------------------------------------------------------------------------------


def test_list_and_get_papers():
    assert list_papers() == ["spyromitros2008", "laml2018", "wang2010", "nedungadi"]
    for name in list_papers():
        module = get_paper(name)
        assert module.PAPER == name and callable(module.reproduce)
    with pytest.raises(ValueError, match="unknown paper 'laml'.*laml2018.*Valid papers"):
        get_paper("laml")


def test_spyromitros_table3_repeats_table2():
    # the paper's Table 3 BRkNN column is Table 2's column of the chosen version: a check
    # of the transcription
    for metric, by_dataset in _papers.SPYROMITROS_TABLE3.items():
        for name, values in by_dataset.items():
            j = "-ab".index(_papers.SPYROMITROS_TABLE3_BEST_BR[name])
            assert values[0] == _papers.SPYROMITROS_TABLE2[metric][name][j]


def test_paper_numbers_are_complete():
    for table in (_papers.LAML_TABLE3, _papers.LAML_TABLE4):
        assert len({frozenset(v) for v in table.values()}) == 1  # same datasets for every metric
        for by_dataset in table.values():
            assert all(len(v) == len(_papers.LAML_METHODS) for v in by_dataset.values())
    assert np.array(_papers.LAML_TABLE1_C).shape == (5, 6)
    assert np.array(_papers.LAML_TABLE1_CSTAR).shape == (5, 6)
    assert max(max(r) for r in _papers.LAML_TABLE1_C) < 10  # the OCR's "10.926" read as 0.926
    for t in (_papers.NEDUNGADI_TABLE1, _papers.NEDUNGADI_TABLE2):
        assert all(len(v) == len(t["k"]) for v in t.values())


# --------------------------------------------------------------------------------------
# every reproduction in quick mode: one run each for the whole suite (the session fixture
# quick_reproductions of tests/conftest.py, which the command line's tests read too)
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("paper", ["spyromitros2008", "laml2018", "wang2010", "nedungadi"])
def test_quick_reproduction_files(quick_reproductions, paper):
    out, runs, calls = quick_reproductions
    rep = runs[paper]
    assert rep.quick and rep.paper == paper and rep.rows
    assert paper in calls  # a progress bar ran to its total
    folder = out / paper
    names = {p.name for p in folder.iterdir()}
    assert {"table.csv", "table.md", "report.md"} <= names
    assert not [n for n in names if n.endswith(".tmp")]
    assert sorted(p.name for p in rep.files) == sorted(names)
    with open(folder / "table.csv", newline="") as fh:
        reader = csv.DictReader(fh)
        assert tuple(reader.fieldnames) == COLUMNS
        rows = list(reader)
    assert len(rows) == len(rep.rows)
    for r in rows:
        if r["ours"] and r["paper"]:
            assert float(r["diff"]) == pytest.approx(float(r["ours"]) - float(r["paper"]), abs=2e-6)
        else:
            assert r["diff"] == ""
    assert any(r["paper"] for r in rows)  # the paper's numbers are there
    report = (folder / "report.md").read_text()
    assert "QUICK MODE" in report and "## Protocol" in report
    for r in rep.differences():  # every differing cell is named in the report
        assert f"| {r['table']} | {r['dataset']} | {r['method']} | {r['metric']} |" in report
    md = (folder / "table.md").read_text()
    for layout in rep.layouts:
        assert layout.title in md


def test_quick_figures_are_valid_pngs(quick_reproductions):
    matplotlib_image = pytest.importorskip("matplotlib.image")

    out, _, _ = quick_reproductions
    pngs = sorted(out.glob("*/*.png"))
    assert [p.relative_to(out).as_posix() for p in pngs] == ["laml2018/fig1.png", "spyromitros2008/fig1.png"]
    for path in pngs:
        assert path.read_bytes()[:8] == PNG_SIGNATURE
        image = matplotlib_image.imread(path)
        assert image.ndim == 3 and image.shape[0] > 100 and image.shape[1] > 100


def test_quick_spyromitros(quick_reproductions):
    rep = quick_reproductions[1]["spyromitros2008"]
    assert rep.stats["searches_per_fold"] == 2  # a k sweep of 5 methods costs two searches
    tables = {r["table"] for r in rep.rows}
    assert tables == {"Table 2", "Table 3", "Fig. 1", "F-measure 2008", "BRkNN 2008 rule"}
    t2 = [r for r in rep.rows if r["table"] == "Table 2"]
    assert len(t2) == 6 * 3  # emotions: 6 metrics x 3 BRkNN versions
    assert all(r["setting"] == "k=1,5,10" for r in t2)
    for r in t2:
        assert 0 <= r["ours"] <= 1 and r["paper"] is not None
    # BRkNN-a never predicts fewer labels than BRkNN: its accuracy cannot be lower on emotions
    acc = {r["method"]: r["ours"] for r in t2 if r["metric"] == "example_accuracy"}
    assert acc["BRkNN-a"] >= acc["BRkNN"]
    fig = [r for r in rep.rows if r["table"] == "Fig. 1" and r["method"] == "BRkNN"]
    assert [r["setting"] for r in fig] == ["k=1", "k=5", "k=10"]
    assert fig[0]["ours"] == 0.0  # one neighbour always has a label set: never empty


def test_quick_laml(quick_reproductions):
    rep = quick_reproductions[1]["laml2018"]
    assert rep.stats["searches_per_split"] == 2
    t1 = [r for r in rep.rows if r["table"] == "Table 1" and r["method"] != "cluster size"]
    assert len(t1) == 2 * 5 * 6 and all(r["paper"] is not None for r in t1)
    sizes = [r["ours"] for r in rep.rows if r["method"] == "cluster size"]
    assert sum(sizes) == 2407  # every scene instance in one of the 5 clusters
    t3 = [r for r in rep.rows if r["table"] == "Table 3"]
    assert {r["method"] for r in t3} == {"LAML-kNN", "ML-kNN", "BRkNN", "DML-kNN"}
    assert all(r["setting"] == "k=9, m=5" for r in t3)  # emotions: the k of the paper's Fig. 1
    curve = {r["setting"]: r["ours"] for r in rep.rows if r["table"] == "Fig. 1" and r["method"] == "LAML-kNN"}
    ml = [r["ours"] for r in t3 if r["method"] == "ML-kNN" and r["metric"] == "average_precision"][0]
    assert curve["m=1"] == pytest.approx(ml)  # one cluster is ML-kNN


def test_quick_wang(quick_reproductions):
    rep = quick_reproductions[1]["wang2010"]
    main = [r for r in rep.rows if r["table"] == "Table 1" and r["method"] == "BKNN (b = 5)" and r["ours"] is not None]
    assert {r["metric"] for r in main} == {"macro_precision", "label_map", "average_precision"}
    assert all(r["paper"] == pytest.approx(0.362) for r in main)  # Music, 36.2 %
    only = [r for r in rep.rows if r["method"] in ("SMSE", "MLLS", "MCGF")]
    assert len(only) == 9 and all(r["ours"] is None and r["diff"] is None for r in only)


def test_quick_nedungadi(quick_reproductions):
    rep = quick_reproductions[1]["nedungadi"]
    t2 = [r for r in rep.rows if r["table"] == "Table 2"]
    assert {(r["method"], r["setting"]) for r in t2} == {
        (m, f"k={k}") for m in ("ML-kNN", "Regression", "Combined") for k in (5, 6)
    }
    search = {r["metric"] for r in rep.rows if r["table"] == "Search"}
    assert search == {"candidate_fraction", "neighbour_recall"}
    for r in rep.rows:
        if r["table"] == "Search":
            assert 0 < r["ours"] <= 1


def test_a_second_run_without_output_or_figures_repeats_the_first(shared_data, quick_reproductions, tmp_path,
                                                                 monkeypatch):
    """Seeded runs are reproducible (the same rows as the suite's run, seed 0 both), out=None
    writes nothing, figures=False needs no matplotlib: one more run of the quickest paper."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # any import of it fails
    again = reproduce("spyromitros2008", quick=True, data_home=shared_data, figures=False, random_state=0)
    assert again.files == [] and not any(tmp_path.iterdir())
    first = quick_reproductions[1]["spyromitros2008"]
    assert [r["ours"] for r in again.rows] == [r["ours"] for r in first.rows]
    assert not all(math.isclose(r["ours"] or 0, 0) for r in again.rows)


def test_figures_need_matplotlib_before_running(shared_data, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(ImportError, match="matplotlib"):
        reproduce("spyromitros2008", quick=True, out=tmp_path, data_home=shared_data)
    assert not any(tmp_path.iterdir())


class _Stop(Exception):
    pass


def _stopping_bar(exc_type, after):
    """A progress factory whose bar raises ``exc_type`` at its ``after``-th update: the run is
    interrupted at a known point of its computing, the same way on every machine."""

    class Bar:
        def __init__(self, total, desc):
            self.n = 0

        def update(self, n=1):
            self.n += 1
            if self.n >= after:
                raise exc_type("stopped by the progress callback")

        def close(self):
            pass

    return Bar


@pytest.mark.parametrize("exc_type", [_Stop, KeyboardInterrupt])
@pytest.mark.parametrize("paper", ["spyromitros2008", "laml2018", "wang2010", "nedungadi"])
def test_an_interrupted_run_leaves_no_folder_it_created(paper, exc_type, shared_data, tmp_path):
    out = tmp_path / "new" / "deeper" / "out"
    with pytest.raises(exc_type, match="stopped by the progress callback"):
        reproduce(paper, quick=True, out=out, data_home=shared_data, figures=False,
                  progress=_stopping_bar(exc_type, 2))
    assert not any(tmp_path.iterdir())


def test_an_interrupted_run_keeps_the_folders_it_found(shared_data, tmp_path):
    out = tmp_path / "out"
    reproduce("wang2010", quick=True, out=out, data_home=shared_data)
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    with pytest.raises(_Stop):
        reproduce("wang2010", quick=True, out=out, data_home=shared_data, progress=_stopping_bar(_Stop, 1))
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before  # the old run whole
    with pytest.raises(_Stop):
        reproduce("nedungadi", quick=True, out=out, data_home=shared_data, progress=_stopping_bar(_Stop, 1))
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before


def test_an_output_folder_that_cannot_be_written_fails_before_computing(shared_data, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(OSError, match=f"cannot write to {blocker / 'out'}"):
        reproduce("spyromitros2008", quick=True, out=blocker / "out", data_home=shared_data,
                  progress=_stopping_bar(AssertionError, 1))  # the first fit would fail the test
    assert [p.name for p in tmp_path.iterdir()] == ["file"]


@pytest.mark.parametrize("n_sets", [1, 2, 4, 5])
def test_laml_figure_takes_any_number_of_datasets(n_sets):
    # a grid of 3 columns: 4 or 5 datasets leave spare axes, which the figure hides
    pytest.importorskip("matplotlib")
    from mlneighbors.experiments.laml2018 import _figure

    curve = {"LAML-kNN": {1: 0.5, 2: 0.6}, "ML-kNN": {1: 0.55, 2: 0.55}}
    names = ["emotions", "yeast", "scene", "enron", "medical"][:n_sets]
    fig = _figure({name: curve for name in names}, "fig")
    assert sum(ax.get_visible() for ax in fig.axes) == n_sets
