"""The reproductions (mlneighbors.experiments): shared machinery and every paper in quick mode."""

from __future__ import annotations

import csv
import math
import sys

import numpy as np
import pytest
import scipy.sparse as sp

from mlneighbors import BRkNN, LPkNN, MLkNN
from mlneighbors.experiments import COLUMNS, get_paper, list_papers, reproduce
from mlneighbors.experiments import _common, _papers
from mlneighbors.metrics import evaluate
from mlneighbors.neighbors import NeighborCache

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
# shared machinery
# --------------------------------------------------------------------------------------


def test_cell_and_differences():
    row = _common.cell("Table 2", "scene", "BRkNN", "hamming_loss", "k=1..30", 0.1, 0.095)
    assert list(row) == list(COLUMNS)
    assert row["diff"] == pytest.approx(0.005)
    assert _common.cell("T", "d", "m", "x", ours=0.5)["diff"] is None
    assert _common.cell("T", "d", "m", "x", ours=float("nan"), paper=0.3)["ours"] is None
    rep = _common.Reproduction("p", "t", [row, _common.cell("T", "d", "m", "x", "", 0.5, 0.4)], [])
    assert [r["dataset"] for r in rep.differences()] == ["d"]


def test_pivot_marks_differences():
    rows = [
        _common.cell("T", "scene", "A", "hamming_loss", "", 0.1, 0.1),
        _common.cell("T", "scene", "B", "hamming_loss", "", 0.2, 0.1),
        _common.cell("T", "yeast", "A", "hamming_loss", "", 0.3),
    ]
    table = _common.pivot(rows, ("dataset", "metric"), ("method",))
    assert table[0] == {"dataset": "scene", "metric": "hamming_loss", "A": "0.1000 / 0.1000", "B": "0.2000 / 0.1000 *"}
    assert table[1] == {"dataset": "yeast", "metric": "hamming_loss", "A": "0.3000", "B": ""}
    md = _common.pivot(rows, ("metric",), ("dataset", "method"), text=False)
    assert md[0]["scene B"] == "0.2000 (0.1000) *"
    merged = _common.pivot(rows, ("dataset",), ("method",), aliases={"A": "A or B", "B": "A or B"})
    assert [list(r) for r in merged] == [["dataset", "A or B"]] * 2
    # rows grouped by the first index field, in order of first appearance
    mixed = [_common.cell("T", d, "A", m, "", 0.1) for m in ("x", "y") for d in ("scene", "yeast")]
    assert [(r["dataset"], r["metric"]) for r in _common.pivot(mixed, ("dataset", "metric"), ("method",))] == [
        ("scene", "x"), ("scene", "y"), ("yeast", "x"), ("yeast", "y")]


def test_finding_matches():
    f = _common.Finding("why", dataset=("scene", "yeast"), metric="hamming_loss")
    assert f.matches(_common.cell("T", "yeast", "A", "hamming_loss"))
    assert not f.matches(_common.cell("T", "emotions", "A", "hamming_loss"))
    assert not f.matches(_common.cell("T", "yeast", "A", "one_error"))


def test_minmax_scale_uses_training_ranges(rng):
    Xtr = rng.normal(size=(20, 3)) * [1, 10, 100]
    Xte = rng.normal(size=(5, 3)) * [1, 10, 100]
    A, B = _common.minmax_scale(Xtr, Xte)
    assert A.min(axis=0) == pytest.approx(0) and A.max(axis=0) == pytest.approx(1)
    lo, hi = Xtr.min(axis=0), Xtr.max(axis=0)
    assert B == pytest.approx((Xte - lo) / (hi - lo))  # not clipped, training ranges
    S = sp.random(30, 4, density=0.3, random_state=0, format="csr") * 5
    C, _ = _common.minmax_scale(S)
    assert sp.issparse(C) and C.max() == pytest.approx(1.0)
    assert C.toarray() == pytest.approx(S.toarray() / S.toarray().max(axis=0))


def test_write_text_is_whole_or_nothing(tmp_path):
    target = tmp_path / "sub" / "table.csv"
    _common.write_text(target, "a,b\n")
    assert target.read_text() == "a,b\n"
    with pytest.raises(RuntimeError):
        with _common._atomic_path(target) as tmp:
            tmp.write_text("half")
            raise RuntimeError("interrupted")
    assert target.read_text() == "a,b\n"  # the old file untouched
    assert sorted(p.name for p in target.parent.iterdir()) == ["table.csv"]  # no temporary left


def _toy(rng, n=120, d=5, L=4):
    X = rng.normal(size=(n, d))
    Y = (X[:, :L] + rng.normal(scale=0.5, size=(n, L)) > 0).astype(np.int8)
    return X[:90], Y[:90], X[90:], Y[90:]


def test_sweep_k_searches_once_per_set(rng):
    Xtr, Ytr, Xte, Yte = _toy(rng)
    factories = {
        "ML-kNN": lambda k, b: MLkNN(k, backend=b),
        "BRkNN": lambda k, b: BRkNN(k, extension="a", backend=b),
        "LPkNN": lambda k, b: LPkNN(k, backend=b),
    }
    ks = list(range(1, 31))
    metrics = ["hamming_loss", "example_f1", "average_precision"]
    cache = NeighborCache(k_max=31)
    res, searches = _common.sweep_k(factories, ks, Xtr, Ytr, Xte, Yte, metrics, cache=cache)
    assert searches == 2 and cache.searches == 2  # training set (leave-one-out) + test set
    assert len(res) == 3 * 30
    for k in (1, 7, 30):  # the prefixes give what a fresh exact search gives
        for name, make in factories.items():
            model = make(k, "exact").fit(Xtr, Ytr)
            want = evaluate(Yte, model.predict(Xte), model.predict_proba(Xte), metrics=metrics)
            assert res[(name, k)] == pytest.approx(want)


def test_require_matplotlib_message(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(ImportError, match=r"pip install 'mlneighbors\[plot\]'"):
        _common.require_matplotlib()


# --------------------------------------------------------------------------------------
# every reproduction in quick mode (one run each, shared by the tests below)
# --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def quick_runs(shared_data, tmp_path_factory):
    out = tmp_path_factory.mktemp("reproductions")
    calls: dict[str, list[tuple[int, str]]] = {}

    class Bar:
        def __init__(self, total, desc):
            self.total, self.desc, self.n = total, desc, 0
            calls.setdefault(desc, []).append((total, desc))

        def update(self, n=1):
            self.n += n

        def close(self):
            assert self.n == self.total, (self.desc, self.n, self.total)

    runs = {
        name: reproduce(name, quick=True, out=out, data_home=shared_data, progress=Bar)
        for name in list_papers()
    }
    return out, runs, calls


@pytest.mark.parametrize("paper", ["spyromitros2008", "laml2018", "wang2010", "nedungadi"])
def test_quick_reproduction_files(quick_runs, paper):
    out, runs, calls = quick_runs
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


def test_quick_figures_are_valid_pngs(quick_runs):
    import matplotlib.image

    out, _, _ = quick_runs
    pngs = sorted(out.glob("*/*.png"))
    assert [p.relative_to(out).as_posix() for p in pngs] == ["laml2018/fig1.png", "spyromitros2008/fig1.png"]
    for path in pngs:
        assert path.read_bytes()[:8] == PNG_SIGNATURE
        image = matplotlib.image.imread(path)
        assert image.ndim == 3 and image.shape[0] > 100 and image.shape[1] > 100


def test_quick_spyromitros(quick_runs):
    rep = quick_runs[1]["spyromitros2008"]
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


def test_quick_laml(quick_runs):
    rep = quick_runs[1]["laml2018"]
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


def test_quick_wang(quick_runs):
    rep = quick_runs[1]["wang2010"]
    main = [r for r in rep.rows if r["table"] == "Table 1" and r["method"] == "BKNN (b = 5)" and r["ours"] is not None]
    assert {r["metric"] for r in main} == {"macro_precision", "label_map", "average_precision"}
    assert all(r["paper"] == pytest.approx(0.362) for r in main)  # Music, 36.2 %
    only = [r for r in rep.rows if r["method"] in ("SMSE", "MLLS", "MCGF")]
    assert len(only) == 9 and all(r["ours"] is None and r["diff"] is None for r in only)


def test_quick_nedungadi(quick_runs):
    rep = quick_runs[1]["nedungadi"]
    t2 = [r for r in rep.rows if r["table"] == "Table 2"]
    assert {(r["method"], r["setting"]) for r in t2} == {
        (m, f"k={k}") for m in ("ML-kNN", "Regression", "Combined") for k in (5, 6)
    }
    search = {r["metric"] for r in rep.rows if r["table"] == "Search"}
    assert search == {"candidate_fraction", "neighbour_recall"}
    for r in rep.rows:
        if r["table"] == "Search":
            assert 0 < r["ours"] <= 1


def test_no_output_folder_writes_nothing(shared_data, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rep = reproduce("spyromitros2008", quick=True, data_home=shared_data)
    assert rep.files == [] and rep.rows and not any(tmp_path.iterdir())


def test_no_figures(shared_data, tmp_path):
    rep = reproduce("spyromitros2008", quick=True, out=tmp_path, data_home=shared_data, figures=False)
    assert sorted(p.name for p in rep.files) == ["report.md", "table.csv", "table.md"]


def test_figures_need_matplotlib_before_running(shared_data, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(ImportError, match="matplotlib"):
        reproduce("spyromitros2008", quick=True, out=tmp_path, data_home=shared_data)
    assert not any(tmp_path.iterdir())


def test_seeded_runs_are_reproducible(shared_data):
    a = reproduce("spyromitros2008", quick=True, data_home=shared_data, random_state=3)
    b = reproduce("spyromitros2008", quick=True, data_home=shared_data, random_state=3)
    assert [r["ours"] for r in a.rows] == [r["ours"] for r in b.rows]
    assert not all(math.isclose(r["ours"] or 0, 0) for r in a.rows)
