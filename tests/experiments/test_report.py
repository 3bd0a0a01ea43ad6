"""The reporting side of the reproductions: cells, layouts, findings, files written whole."""

from __future__ import annotations

import sys

import pytest

from mlneighbors.experiments import COLUMNS, _report


def test_cell_and_differences():
    row = _report.cell("Table 2", "scene", "BRkNN", "hamming_loss", "k=1..30", 0.1, 0.095)
    assert list(row) == list(COLUMNS)
    assert row["diff"] == pytest.approx(0.005)
    assert _report.cell("T", "d", "m", "x", ours=0.5)["diff"] is None
    assert _report.cell("T", "d", "m", "x", ours=float("nan"), paper=0.3)["ours"] is None
    rep = _report.Reproduction("p", "t", [row, _report.cell("T", "d", "m", "x", "", 0.5, 0.4)], [])
    assert [r["dataset"] for r in rep.differences()] == ["d"]


def test_pivot_marks_differences():
    rows = [
        _report.cell("T", "scene", "A", "hamming_loss", "", 0.1, 0.1),
        _report.cell("T", "scene", "B", "hamming_loss", "", 0.2, 0.1),
        _report.cell("T", "yeast", "A", "hamming_loss", "", 0.3),
    ]
    table = _report.pivot(rows, ("dataset", "metric"), ("method",))
    assert table[0] == {"dataset": "scene", "metric": "hamming_loss", "A": "0.1000 / 0.1000", "B": "0.2000 / 0.1000 *"}
    assert table[1] == {"dataset": "yeast", "metric": "hamming_loss", "A": "0.3000", "B": ""}
    md = _report.pivot(rows, ("metric",), ("dataset", "method"), text=False)
    assert md[0]["scene B"] == "0.2000 (0.1000) *"
    merged = _report.pivot(rows, ("dataset",), ("method",), aliases={"A": "A or B", "B": "A or B"})
    assert [list(r) for r in merged] == [["dataset", "A or B"]] * 2
    # rows grouped by the first index field, in order of first appearance
    mixed = [_report.cell("T", d, "A", m, "", 0.1) for m in ("x", "y") for d in ("scene", "yeast")]
    assert [(r["dataset"], r["metric"]) for r in _report.pivot(mixed, ("dataset", "metric"), ("method",))] == [
        ("scene", "x"), ("scene", "y"), ("yeast", "x"), ("yeast", "y")]


def test_finding_matches():
    f = _report.Finding("why", dataset=("scene", "yeast"), metric="hamming_loss")
    assert f.matches(_report.cell("T", "yeast", "A", "hamming_loss"))
    assert not f.matches(_report.cell("T", "emotions", "A", "hamming_loss"))
    assert not f.matches(_report.cell("T", "yeast", "A", "one_error"))


def test_require_matplotlib_message(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(ImportError, match=r"pip install 'mlneighbors\[plot\]'"):
        _report.require_matplotlib()
