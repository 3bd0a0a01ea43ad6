"""The command line for large data: --backend auto, --recall, --include-index, the slow-fit note."""

import csv
import io
import json
import re
import sys

import numpy as np
import pytest

import mlneighbors
from mlneighbors.cli import main
from mlneighbors.cli._models import auto_note, describe_search, exact_note


def _error(capsys, argv, code, *needles):
    assert main(argv) == code
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    for needle in needles:
        assert needle in err, err


def test_fit_with_a_recall_and_the_index_then_predict(shared_data, tmp_path, capsys, monkeypatch):
    pytest.importorskip("hnswlib")
    from mlneighbors.neighbors import ApproximateIndex

    out = tmp_path / "m.skops"
    argv = ["fit", "mlknn", "yeast", "--data-home", str(shared_data), "--out", str(out), "--backend", "hnswlib",
            "--recall", "0.9", "--include-index"]
    assert main(argv) == 0
    said = capsys.readouterr().out
    assert "neighbours: hnswlib, recall@10 0.9" in said or "neighbours: hnswlib, recall@10 1.0" in said
    builds = []
    original = ApproximateIndex.build_rows
    monkeypatch.setattr(ApproximateIndex, "build_rows", lambda self, X: builds.append(1) or original(self, X))
    model = mlneighbors.load(out)
    fitted = model.steps[-1][1]
    assert fitted.backend_ == "hnswlib" and fitted.recall_ >= 0.9 and fitted._index.recall == 0.9
    from mlneighbors.datasets import load_dataset

    X = load_dataset("yeast", "test", shared_data).X
    assert model.predict(X).shape == (len(X), 14)
    assert builds == []  # the saved index answered


@pytest.mark.requires("skops")
def test_fit_and_evaluate_with_backend_auto(shared_data, tmp_path, capsys):
    assert main(["fit", "mlknn", "emotions", "--data-home", str(shared_data), "--out", str(tmp_path / "a.skops"),
                 "--backend", "auto"]) == 0
    said = capsys.readouterr().out
    assert "neighbours:" not in said  # 593 rows: auto searches exactly
    assert mlneighbors.load(tmp_path / "a.skops").steps[-1][1].backend_ == "exact"
    argv = ["evaluate", "emotions", "--model", "mlknn", "--split", "--format", "json", "--data-home",
            str(shared_data), "--metrics", "hamming_loss"]
    assert main(argv) == 0
    exact = json.loads(capsys.readouterr().out)["results"]
    assert main(argv + ["--backend", "auto", "--recall", "0.99"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["results"][0] == exact[0] and doc["backend"] == "auto"  # [1]: the seconds


def test_bad_recall_options_are_one_line(shared_data, tmp_path, capsys):
    base = ["fit", "mlknn", "emotions", "--data-home", str(shared_data), "--out", str(tmp_path / "x.skops")]
    _error(capsys, base + ["--recall", "0.9"], 2, "--recall needs --backend auto")
    _error(capsys, base + ["--backend", "exact", "--recall", "0.9"], 2, "backend 'exact' has no recall to choose")
    _error(capsys, base + ["--backend", "auto", "--recall", "1.5"], 2, "--recall must be in (0, 1], got 1.5")
    _error(capsys, base + ["--backend", "hnswlib", "--recall", "0.9", "--backend-param", "ef=20"], 2,
           "give recall", "or ef (fixed), not both")
    assert not (tmp_path / "x.skops").exists()


class Shape:
    def __init__(self, n, d):
        self.shape = (n, d)


def test_a_long_exact_fit_is_announced_with_the_way_out(capsys):
    text = exact_note(None, Shape(10**6, 128), "fit", quiet=False)
    assert "an exact fit on 1000000 x 128 rows is estimated at" in text and "--backend auto" in text
    assert capsys.readouterr().err.strip() == f"note: {text}"
    assert exact_note("exact", Shape(10**6, 128), "fit", quiet=True) == text  # quiet: not printed, still the header's
    assert capsys.readouterr().err == ""
    assert exact_note(None, Shape(5_000, 128), "fit", quiet=False) == ""  # a second or so: nothing said
    assert exact_note("auto", Shape(10**6, 128), "fit", quiet=False) == ""
    assert np.isfinite(len(text))


@pytest.fixture
def approximate_wins(monkeypatch):
    """auto's rule as on large data: an approximate index estimated faster than the exact search
    (emotions' 593 rows stand in for 10^6)."""
    from mlneighbors.neighbors import _auto

    monkeypatch.setattr(_auto, "approximate_seconds", lambda *args, **kwargs: 0.0)


def _no_approximate_library(monkeypatch):
    for module in ("faiss", "hnswlib"):
        monkeypatch.setitem(sys.modules, module, None)  # import fails, find_spec finds nothing


WHY = ("--backend auto runs the exact search: 391 x 72: an approximate index would be faster, but faiss "
       "is not installed (pip install 'mlneighbors[faiss]')")


@pytest.mark.requires("skops")  # its last part writes a model file
def test_auto_without_an_approximate_library_says_why_it_runs_exact(approximate_wins, shared_data, tmp_path,
                                                                    capsys, monkeypatch):
    _no_approximate_library(monkeypatch)
    argv = ["evaluate", "emotions", "--model", "mlknn", "--split", "--data-home", str(shared_data),
            "--metrics", "hamming_loss", "--backend", "auto"]
    assert main(argv) == 0
    captured = capsys.readouterr()
    assert captured.err.splitlines() == [f"note: {WHY}"]  # once, on standard error
    header, search = captured.out.splitlines()[:2]
    assert header.endswith(f"; note: {WHY}") and search == "neighbours: exact, recall@10 1.000"
    assert main([*argv, "--quiet"]) == 0
    assert capsys.readouterr().err == ""
    # fit: the same note, and what it fitted said first (the 593 rows of train and test: its own shape)
    assert main(["fit", "mlknn", "emotions", "--data-home", str(shared_data), "--out", str(tmp_path / "m.skops"),
                 "--backend", "auto"]) == 0
    assert capsys.readouterr().err.splitlines() == [f"note: {WHY.replace('391 x 72', '593 x 72')}"]


@pytest.mark.requires("skops")  # it writes a model file
def test_auto_with_a_library_that_fails_to_import_fits_exactly_and_says_why(approximate_wins, shared_data,
                                                                             tmp_path, capsys, monkeypatch):
    """Issue 47, item 11: faiss installed but failing to import (a wheel for another CPU, a
    missing shared library) is no error naming it as missing: the exact search, one note
    quoting the import's error."""
    from .neighbors._broken import break_faiss

    break_faiss(monkeypatch, tmp_path)
    assert main(["fit", "mlknn", "emotions", "--data-home", str(shared_data), "--out", str(tmp_path / "m.skops"),
                 "--backend", "auto"]) == 0
    assert capsys.readouterr().err.splitlines() == [
        "note: --backend auto runs the exact search: 593 x 72: an approximate index would be faster, but faiss "
        "is installed and fails to import (ImportError: libfaiss.so: cannot open shared object file)"]
    assert mlneighbors.load(tmp_path / "m.skops").steps[-1][1].backend_ == "exact"


def test_auto_says_nothing_where_it_would_search_exactly_anyway(shared_data, capsys, monkeypatch):
    _no_approximate_library(monkeypatch)
    assert main(["evaluate", "emotions", "--model", "mlknn", "--split", "--data-home", str(shared_data),
                 "--metrics", "hamming_loss", "--backend", "auto"]) == 0
    assert capsys.readouterr().err == ""  # 391 rows: exact is faster, whatever is installed


def test_evaluate_and_compare_say_what_auto_picked_and_its_recall(approximate_wins, shared_data, capsys):
    pytest.importorskip("faiss")
    base = ["--data-home", str(shared_data), "--metrics", "hamming_loss", "--backend", "auto", "--cv", "2"]
    assert main(["evaluate", "emotions", "--model", "mlknn", *base]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert re.fullmatch(r"neighbours: faiss-union, recall@10 (0\.9\d\d \(\d+\.\d+% of queries below 0\.5; |1\.000 \()"
                        r"mean of 2 fits\)", lines[1]), lines
    assert main(["evaluate", "emotions", "--model", "mlknn", *base, "--format", "json"]) == 0
    captured = capsys.readouterr()
    doc = json.loads(captured.out)
    assert doc["backend"] == "auto" and doc["params"]["mlknn"]["backend"] == "auto"
    search = doc["neighbours"]["mlknn"]
    assert search["backend"] == "faiss-union" and search["k"] == 10 and search["fits"] == 2
    assert 0.9 <= search["recall"] <= 1.0 and 0.0 <= search["low_recall_share"] <= 0.1
    said = describe_search("faiss-union", 10, search["recall"], search["low_recall_share"], 2)
    assert f"neighbours: {said}" in captured.err  # the header
    assert main(["compare", "emotions", "--models", "mlknn,bknn", *base, "--format", "csv"]) == 0
    captured = capsys.readouterr()
    rows = list(csv.DictReader(io.StringIO(captured.out)))
    searches = json.loads(rows[0]["neighbours"])
    assert searches["mlknn"]["backend"] == "faiss-union" and searches["bknn"]["backend"] == "faiss-union"
    assert searches["bknn"]["k"] == 5 and 0 < searches["bknn"]["recall"] <= 1  # BKNN: recall at b per label
    assert all(0 <= searches[m]["low_recall_share"] <= 0.1 for m in ("mlknn", "bknn"))
    assert "neighbours: mlknn: faiss-union, recall@10 " in captured.err
    assert "; bknn: faiss-union, recall@5 " in captured.err


def test_the_auto_note_at_a_million_rows(capsys, monkeypatch):
    """The rule itself (no estimate patched): 10^6 x 128 dense rows go to an approximate index,
    so without a library auto's exact search is a fallback, said once; not for a metric the
    libraries do not search (manhattan: exact anyway), nor for another backend."""
    from mlneighbors import make_model

    _no_approximate_library(monkeypatch)
    rows = Shape(10**6, 128)
    text = auto_note("auto", None, rows, {"mlknn": make_model("mlknn")}, quiet=False)
    assert text.startswith("--backend auto runs the exact search: 1000000 x 128: an approximate index would be "
                           "faster, but faiss is not installed (pip install")
    assert capsys.readouterr().err == f"note: {text}\n"
    assert auto_note("auto", None, rows, {"mlknn": make_model("mlknn")}, quiet=True) == text
    assert auto_note("auto", None, rows, {"m": make_model("mlknn", metric="manhattan")}, quiet=False) == ""
    assert auto_note("exact", None, rows, {"mlknn": make_model("mlknn")}, quiet=False) == ""
    assert capsys.readouterr().err == ""


def test_a_long_exact_fit_is_measured_on_a_sample_before_it_is_announced(monkeypatch, capsys):
    """Where the cost model (fitted on one machine) says more than 20 s, the note goes by the
    search of a 10,000-row sample timed here: a model made to say hours on rows whose search
    takes a second says nothing."""
    from mlneighbors.neighbors import _auto

    X = np.random.default_rng(0).normal(size=(12_000, 4))
    monkeypatch.setattr(_auto, "_NS_EXACT_ENTRY", 1e6)
    assert _auto.exact_seconds(12_000, 12_000, 4) > 3600
    assert exact_note(None, X, "fit", quiet=False) == ""
    assert capsys.readouterr().err == ""
    assert exact_note(None, Shape(12_000, 4), "fit", quiet=True) != ""  # no rows to time: the model's word


@pytest.fixture
def wrong_tail(monkeypatch):
    """hnswlib's search made exact, except for the queries whose first feature is in the top
    5 % of the indexed rows': those get their farthest rows (recall 0).  A known tail, whatever
    the scaling (it keeps the order of a feature)."""
    pytest.importorskip("hnswlib")
    from mlneighbors.neighbors import HnswlibIndex

    from .neighbors._wrong import answer_wrong

    answer_wrong(monkeypatch, HnswlibIndex,
                 lambda index, Q, breadth: Q[:, 0] > np.quantile(index._ref.X[:, 0], 0.95))


def test_the_neighbours_line_says_the_share_of_queries_below_one_half(wrong_tail, shared_data, tmp_path, capsys):
    out = tmp_path / "m.skops"
    assert main(["fit", "mlknn", "yeast", "--data-home", str(shared_data), "--out", str(out), "--backend", "hnswlib",
                 "--recall", "0.9"]) == 0
    said = capsys.readouterr().out.splitlines()[-1]
    fitted = mlneighbors.load(out).steps[-1][1]
    assert 0.02 < fitted.low_recall_share_ < 0.1
    assert said.endswith(f"neighbours: hnswlib, recall@10 {fitted.recall_:.3f} "
                         f"({100 * fitted.low_recall_share_:.1f}% of queries below 0.5)")
    assert main(["evaluate", "yeast", "--model", "mlknn", "--data-home", str(shared_data), "--metrics",
                 "hamming_loss", "--backend", "hnswlib", "--split", "--format", "json"]) == 0
    captured = capsys.readouterr()
    search = json.loads(captured.out)["neighbours"]["mlknn"]
    assert 0.02 < search["low_recall_share"] < 0.1 and search["fits"] == 1
    assert captured.err.strip().endswith(f"neighbours: hnswlib, recall@10 {search['recall']:.3f} "
                                         f"({100 * search['low_recall_share']:.1f}% of queries below 0.5)")


def test_the_share_is_said_as_a_percentage_that_keeps_a_few_queries():
    assert describe_search("hnswlib", 10, 0.99, 0.003) == "hnswlib, recall@10 0.990 (0.3% of queries below 0.5)"
    assert describe_search("hnswlib", 10, 0.99, 0.0005) == "hnswlib, recall@10 0.990 (0.05% of queries below 0.5)"
    assert describe_search("hnswlib", 10, 0.99, 0.0) == "hnswlib, recall@10 0.990 (0.0% of queries below 0.5)"
    assert describe_search("hnswlib", 10, 0.99, float("nan")) == "hnswlib, recall@10 0.990"  # not measured
    assert describe_search("exact", 10, 1.0, 0.0, fits=3) == "exact, recall@10 1.000 (mean of 3 fits)"
