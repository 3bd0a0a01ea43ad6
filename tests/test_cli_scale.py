"""The command line for large data: --backend auto, --recall, --include-index, the slow-fit note."""

import json

import numpy as np
import pytest

import mlneighbors
from mlneighbors.cli import main
from mlneighbors.cli._models import exact_note


def _error(capsys, argv, code, *needles):
    assert main(argv) == code
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    for needle in needles:
        assert needle in err, err


def test_fit_with_a_recall_and_the_index_then_predict(shared_data, tmp_path, capsys, monkeypatch):
    pytest.importorskip("hnswlib")
    from mlneighbors.neighbors import _approximate

    out = tmp_path / "m.skops"
    argv = ["fit", "mlknn", "yeast", "--data-home", str(shared_data), "--out", str(out), "--backend", "hnswlib",
            "--recall", "0.9", "--include-index"]
    assert main(argv) == 0
    said = capsys.readouterr().out
    assert "neighbours: hnswlib, recall@10 0.9" in said or "neighbours: hnswlib, recall@10 1.0" in said
    builds = []
    original = _approximate.ApproximateIndex._build
    monkeypatch.setattr(_approximate.ApproximateIndex, "_build", lambda self, X: builds.append(1) or original(self, X))
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
