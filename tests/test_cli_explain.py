"""``mlneighbors explain MODEL ROWS``: the saved model's explanation of a file's rows, as a table per
row or as JSON, the same numbers as the library's ``explain``; bad input is one line."""

from __future__ import annotations

import json

import numpy as np
import pytest

import mlneighbors
from mlneighbors.cli import main

LABELS = ["sport", "music", "news"]

pytestmark = [pytest.mark.requires("skops"), pytest.mark.requires("pandas")]


@pytest.fixture(scope="module")
def problem():
    rng = np.random.default_rng(5)
    X = np.round(rng.normal(size=(40, 4)), 3)
    Y = (X[:, :3] + rng.normal(scale=0.5, size=(40, 3)) > 0).astype(int)
    return X, Y


def _csv(path, X, Y=None):
    header = [f"x{j}" for j in range(X.shape[1])] + (LABELS if Y is not None else [])
    rows = [",".join(f"{v:g}" for v in x) + ("," + ",".join(map(str, Y[i])) if Y is not None else "")
            for i, x in enumerate(X)]
    path.write_text(",".join(header) + "\n" + "\n".join(rows) + "\n")
    return path


@pytest.fixture
def fitted(problem, tmp_path, capsys):
    """A model file written by ``mlneighbors fit`` (scaler + ML-kNN) and a file of new rows."""
    X, Y = problem
    train = _csv(tmp_path / "train.csv", X, Y)
    model_file = tmp_path / "model.skops"
    assert main(["fit", "mlknn", str(train), "--label-columns", ",".join(LABELS), "--k", "4",
                 "--out", str(model_file), "--quiet"]) == 0
    rows = _csv(tmp_path / "rows.csv", X[10:16])  # features only, matched by name
    capsys.readouterr()
    return model_file, rows, X[10:16]


def test_json_is_the_librarys_explanation(fitted, capsys):
    model_file, rows, Q = fitted
    assert main(["explain", str(model_file), str(rows), "--format", "json"]) == 0
    got = json.loads(capsys.readouterr().out)
    want = mlneighbors.load(model_file).explain(Q).to_dict()
    assert got == want
    assert got["model"] == "MLkNN" and got["label_names"] == LABELS and len(got["rows"]) == 6
    record = got["rows"][0]
    assert [label["label"] for label in record["labels"]] == LABELS
    assert set(record["labels"][0]) >= {"count", "prior", "likelihood_true", "likelihood_false", "posterior"}
    assert len(record["neighbors"]) == 4 and all(isinstance(n["id"], int) for n in record["neighbors"])


def test_text_is_a_table_per_row_and_rows_limits(fitted, capsys):
    model_file, rows, Q = fitted
    assert main(["explain", str(model_file), str(rows), "--rows", "2"]) == 0
    captured = capsys.readouterr()
    assert captured.out.count("MLkNN predicts {") == 2 and captured.out.count("\nneighbours:") == 2
    assert "explaining the first 2 of the 6 rows" in captured.err
    model = mlneighbors.load(model_file)
    assert model.explain(Q[:2]).format() + "\n" == captured.out


def test_string_ids_and_bknn_per_label_neighbours(problem, tmp_path, capsys):
    from sklearn.preprocessing import MinMaxScaler

    from mlneighbors import BKNN, Pipeline

    X, Y = problem
    ids = [f"doc-{i}" for i in range(len(X))]
    pipe = Pipeline([("scale", MinMaxScaler()), ("model", BKNN(n_per_label=2))]).fit(X, Y, model__ids=ids)
    pipe.label_names_ = LABELS
    model_file = tmp_path / "bknn.skops"
    mlneighbors.save(pipe, model_file)
    rows = _csv(tmp_path / "rows.csv", X[:3])
    assert main(["explain", str(model_file), str(rows), "--format", "json", "--input-format", "csv",
                 "--no-header"]) == 2  # a header line read as a row: refused, one line
    assert len(capsys.readouterr().err.strip().splitlines()) == 1
    assert main(["explain", str(model_file), str(rows), "--format", "json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["neighbors_shape"] == [3, 2] and got["id_type"] == "str"
    first = got["rows"][0]
    assert {n["label"] for n in first["neighbors"]} == set(LABELS)
    assert all(n["id"] in ids and n["label"] in n["labels"] for n in first["neighbors"])  # members of their label
    assert set(first["labels"][0]) >= {"balanced_score", "threshold", "margin", "share"}
    assert main(["explain", str(model_file), str(rows)]) == 0
    assert "(per label)" in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["explain", "missing.skops", "{rows}"], "mlneighbors explain: no model file 'missing.skops'"),
        (["explain", "{model}", "nowhere.csv"], "mlneighbors explain: no such file: nowhere.csv"),
        (["explain", "{model}", "{rows}", "--rows", "0"], "--rows must be at least 1"),
        (["explain", "{model}", "{rows}", "--format", "xml"], "invalid choice: 'xml'"),
        (["explain", "{model}", "{narrow}"], "feature(s) of the model are not in the file: 'x3'"),
    ],
)
def test_bad_input_is_one_line(argv, needle, fitted, problem, tmp_path, capsys, monkeypatch):
    model_file, rows, _ = fitted
    narrow = _csv(tmp_path / "narrow.csv", problem[0][:3, :3])
    monkeypatch.chdir(tmp_path)
    argv = [a.replace("{model}", str(model_file)).replace("{rows}", str(rows)).replace("{narrow}", str(narrow))
            for a in argv]
    assert main(argv) in (1, 2)
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert len(err.splitlines()) == 1 and needle in err, err
    assert captured.out == ""
