"""Live models through the command line: ``fit --id-column``, ``update`` and ``forget``, and a
model file replaced in place whole or not at all."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import mlneighbors
from mlneighbors.cli import main

pytestmark = pytest.mark.requires("skops", "pandas")  # models are skops files; the fixtures CSV

FEATURES = ["x0", "x1", "x2"]
LABELS = ["sport", "music"]


@pytest.fixture(scope="module")
def problem():
    rng = np.random.default_rng(5)
    X = np.round(rng.normal(size=(40, 3)), 3)
    Y = (X[:, :2] + rng.normal(scale=0.5, size=(40, 2)) > 0).astype(int)
    Y[0] = 0  # an all-zero label row
    return X, Y


def _csv(path, X, Y, ids=None, *, columns=None):
    """A CSV file with an ``id`` column first (when ``ids``), the features, then the labels;
    ``columns``: the header's order (the same cells, moved)."""
    header = (["id"] if ids is not None else []) + FEATURES + LABELS
    rows = [([str(ids[i])] if ids is not None else []) + [f"{v:g}" for v in X[i]] + [str(v) for v in Y[i]]
            for i in range(len(X))]
    order = [header.index(c) for c in (columns or header)]
    lines = [",".join(header[j] for j in order)] + [",".join(row[j] for j in order) for row in rows]
    path.write_text("\n".join(lines) + "\n")
    return path


def _query(path, X):
    path.write_text(",".join(FEATURES) + "\n" + "".join(",".join(f"{v:g}" for v in x) + "\n" for x in X))
    return path


def _predictions(model_file, query, tmp_path, capsys):
    out = tmp_path / "predictions.csv"
    assert main(["predict", str(model_file), str(query), "--out", str(out), "--scores", "--quiet"]) == 0
    capsys.readouterr()
    return np.loadtxt(out, delimiter=",", skiprows=1)


def _fit(tmp_path, data, out="model.skops", *extra):
    model_file = tmp_path / out
    code = main(["fit", "mlknn", str(data), "--label-columns", ",".join(LABELS), "--out", str(model_file),
                 "--k", "3", *extra])
    return code, model_file


def _error(capsys):
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Traceback" not in err, err
    return err


# --------------------------------------------------------------------------------------
# fit --id-column
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["str", "int"])
def test_fit_takes_the_identifiers_from_the_column(kind, problem, tmp_path, capsys):
    X, Y = problem
    ids = [f"user-{i}" for i in range(40)] if kind == "str" else [1000 + 7 * i for i in range(40)]
    data = _csv(tmp_path / "train.csv", X, Y, ids)
    code, model_file = _fit(tmp_path, data, "model.skops", "--id-column", "id")
    assert code == 0, capsys.readouterr().err
    assert "(40 rows, 3 features, 2 labels)" in capsys.readouterr().out  # the column is no feature
    model = mlneighbors.load(model_file)
    assert model.feature_names_ == FEATURES and model.label_names_ == LABELS
    assert model.training_ids_.tolist() == ids
    assert model.training_ids_.dtype.kind == ("U" if kind == "str" else "i")
    # the same predictions as the file without its identifiers
    code, plain = _fit(tmp_path, _csv(tmp_path / "plain.csv", X, Y), "plain.skops")
    query = _query(tmp_path / "query.csv", X[::3] * 0.9)
    np.testing.assert_array_equal(_predictions(model_file, query, tmp_path, capsys),
                                  _predictions(plain, query, tmp_path, capsys))


def test_fit_reads_an_identifier_attribute_of_an_arff_file(problem, tmp_path, capsys):
    X, Y = problem
    attrs = ["@attribute id numeric"] + [f"@attribute {f} numeric" for f in FEATURES] + \
        [f"@attribute {n} {{0,1}}" for n in LABELS]
    rows = [",".join([str(10 * i)] + [f"{v:g}" for v in X[i]] + [str(v) for v in Y[i]]) for i in range(40)]
    data = tmp_path / "train.arff"
    data.write_text("@relation r\n" + "\n".join(attrs) + "\n@data\n" + "\n".join(rows) + "\n")
    model_file = tmp_path / "model.skops"
    assert main(["fit", "brknn", str(data), "--labels-last", "2", "--id-column", "id", "--out", str(model_file),
                 "--quiet"]) == 0
    model = mlneighbors.load(model_file)
    assert model.training_ids_.tolist() == list(range(0, 400, 10)) and model.feature_names_ == FEATURES


def test_fit_refuses_a_missing_identifier_column(problem, tmp_path, capsys):
    X, Y = problem
    data = _csv(tmp_path / "train.csv", X, Y, list(range(40)))
    code, model_file = _fit(tmp_path, data, "model.skops", "--id-column", "key")
    assert code == 2 and not model_file.exists()
    err = _error(capsys)
    assert str(data) in err and "'key'" in err and "'id'" in err  # the file, the column, the columns there


def test_fit_refuses_a_repeated_identifier_naming_it(problem, tmp_path, capsys):
    X, Y = problem
    ids = [f"u{i}" for i in range(40)]
    ids[17] = "u3"
    data = _csv(tmp_path / "train.csv", X, Y, ids)
    code, model_file = _fit(tmp_path, data, "model.skops", "--id-column", "id")
    assert code == 2 and not model_file.exists()
    err = _error(capsys)
    assert str(data) in err and "'id'" in err and "'u3'" in err and "lines 5 and 19" in err


def test_fit_refuses_an_empty_identifier(problem, tmp_path, capsys):
    X, Y = problem
    ids = [str(i) for i in range(40)]
    ids[2] = ""
    code, _ = _fit(tmp_path, _csv(tmp_path / "train.csv", X, Y, ids), "model.skops", "--id-column", "id")
    assert code == 2 and "line 4" in _error(capsys)


def test_id_column_needs_a_file_with_named_columns(tmp_path, capsys):
    data = tmp_path / "train.svm"
    data.write_text("0 1:0.5 2:1\n1 1:2 2:0\n0,1 1:1 2:1\n")
    assert main(["fit", "brknn", str(data), "--id-column", "id", "--out", str(tmp_path / "m.skops")]) == 2
    assert "names no columns" in _error(capsys)


# --------------------------------------------------------------------------------------
# update
# --------------------------------------------------------------------------------------


def test_update_predicts_as_a_fit_on_the_combined_file(problem, tmp_path, capsys):
    """Without a scaler (--scale none), adding rows equals fitting on all of them."""
    X, Y = problem
    ids = [f"r{i}" for i in range(40)]
    first = _csv(tmp_path / "first.csv", X[:25], Y[:25], ids[:25])
    # the new rows' columns in another order: matched by name, as predict matches them
    new = _csv(tmp_path / "new.csv", X[25:], Y[25:], ids[25:], columns=["music", "x2", "id", "x0", "sport", "x1"])
    both = _csv(tmp_path / "both.csv", X, Y, ids)
    code, model_file = _fit(tmp_path, first, "model.skops", "--id-column", "id", "--scale", "none")
    assert code == 0
    capsys.readouterr()
    assert main(["update", str(model_file), str(new), "--id-column", "id"]) == 0
    out = capsys.readouterr()
    assert f"wrote {model_file}: 15 training rows of {new} added; 40 training rows in all" in out.out
    assert "note:" not in out.err  # no transform kept: nothing to say
    code, whole = _fit(tmp_path, both, "whole.skops", "--id-column", "id", "--scale", "none")
    assert code == 0
    assert mlneighbors.load(model_file).training_ids_.tolist() == ids
    query = _query(tmp_path / "query.csv", np.vstack([X[::4] * 1.1, X[1::5] - 0.2]))
    np.testing.assert_allclose(_predictions(model_file, query, tmp_path, capsys),
                               _predictions(whole, query, tmp_path, capsys), rtol=1e-6)


def test_update_without_identifiers_numbers_on_and_notes_the_kept_scaler(problem, tmp_path, capsys):
    X, Y = problem
    code, model_file = _fit(tmp_path, _csv(tmp_path / "first.csv", X[:30], Y[:30]))
    assert code == 0
    out = tmp_path / "elsewhere" / "updated.skops"
    before = model_file.read_bytes()
    assert main(["update", str(model_file), str(_csv(tmp_path / "new.csv", X[30:], Y[30:])), "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert "note: the scaler (MinMaxScaler) fitted on the original rows is kept" in err and "rescale" in err
    assert model_file.read_bytes() == before  # --out: the model file untouched
    assert mlneighbors.load(out).training_ids_.tolist() == list(range(40))


def test_update_refuses_rows_with_other_columns_and_writes_nothing(problem, tmp_path, capsys):
    X, Y = problem
    code, model_file = _fit(tmp_path, _csv(tmp_path / "first.csv", X[:30], Y[:30], list(range(30))),
                            "model.skops", "--id-column", "id")
    before = model_file.read_bytes()
    bad = tmp_path / "new.csv"
    bad.write_text("id,x0,x1,y9,sport,music\n31,1,2,3,0,1\n")
    capsys.readouterr()
    assert main(["update", str(model_file), str(bad), "--id-column", "id"]) == 2
    err = _error(capsys)
    assert str(bad) in err and "'x2'" in err and "'y9'" in err
    # an identifier the model has already
    again = _csv(tmp_path / "again.csv", X[30:32], Y[30:32], [29, 30])
    assert main(["update", str(model_file), str(again), "--id-column", "id"]) == 2
    assert "29" in _error(capsys)
    assert model_file.read_bytes() == before


# --------------------------------------------------------------------------------------
# forget
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("given", ["list", "file"])
def test_forget_predicts_as_a_fit_on_the_remaining_rows(given, problem, tmp_path, capsys):
    X, Y = problem
    ids = [f"r{i}" for i in range(40)]
    code, model_file = _fit(tmp_path, _csv(tmp_path / "all.csv", X, Y, ids), "model.skops",
                            "--id-column", "id", "--scale", "none")
    assert code == 0
    gone = [3, 17, 18, 39]
    if given == "list":
        spec = ",".join(ids[i] for i in gone)
    else:
        spec = str(tmp_path / "gone.txt")
        (tmp_path / "gone.txt").write_text("\n".join(ids[i] for i in gone) + "\n\n")
    capsys.readouterr()
    assert main(["forget", str(model_file), "--ids", spec]) == 0
    assert f"wrote {model_file}: 4 training rows forgotten; 36 training rows left" in capsys.readouterr().out
    keep = [i for i in range(40) if i not in gone]
    code, rest = _fit(tmp_path, _csv(tmp_path / "rest.csv", X[keep], Y[keep], [ids[i] for i in keep]),
                      "rest.skops", "--id-column", "id", "--scale", "none")
    assert mlneighbors.load(model_file).training_ids_.tolist() == [ids[i] for i in keep]
    query = _query(tmp_path / "query.csv", X[::3] * 1.05)
    np.testing.assert_allclose(_predictions(model_file, query, tmp_path, capsys),
                               _predictions(rest, query, tmp_path, capsys), rtol=1e-6)


def test_forget_types_the_identifiers_as_the_models(problem, tmp_path, capsys):
    X, Y = problem
    code, model_file = _fit(tmp_path, _csv(tmp_path / "all.csv", X, Y))  # identifiers 0 .. 39
    capsys.readouterr()
    assert main(["forget", str(model_file), "--ids", "5, 7", "--out", str(tmp_path / "less.skops")]) == 0
    assert "the scaler (MinMaxScaler) fitted with the forgotten rows" in capsys.readouterr().err
    assert 5 not in mlneighbors.load(tmp_path / "less.skops").training_ids_.tolist()
    assert main(["forget", str(model_file), "--ids", "5,seven"]) == 2
    err = _error(capsys)
    assert "'seven'" in err and "integer" in err


@pytest.mark.parametrize("spec, needle", [("r1,nobody", "'nobody'"), ("r1,r2,r1", "'r1'"), (",", "no identifier")])
def test_forget_refuses_unknown_or_repeated_identifiers_and_writes_nothing(spec, needle, problem, tmp_path, capsys):
    X, Y = problem
    code, model_file = _fit(tmp_path, _csv(tmp_path / "all.csv", X, Y, [f"r{i}" for i in range(40)]),
                            "model.skops", "--id-column", "id")
    before = model_file.read_bytes()
    capsys.readouterr()
    assert main(["forget", str(model_file), "--ids", spec]) == 2
    err = _error(capsys)
    assert needle in err
    assert model_file.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["all.csv", "model.skops"]  # no temporary left


def test_forget_names_a_missing_model_file(tmp_path, capsys):
    assert main(["forget", str(tmp_path / "none.skops"), "--ids", "1"]) == 2
    assert "none.skops" in _error(capsys)


# --------------------------------------------------------------------------------------
# in place: whole or not at all
# --------------------------------------------------------------------------------------


def test_a_save_that_fails_midway_leaves_the_old_file_whole(problem, tmp_path, capsys, monkeypatch):
    from mlneighbors._imports import import_skops_io

    X, Y = problem
    code, model_file = _fit(tmp_path, _csv(tmp_path / "all.csv", X, Y))
    before = model_file.read_bytes()

    def half_a_dump(model, path):  # a disk that fills up after the first bytes
        with open(path, "wb") as fh:
            fh.write(before[: len(before) // 2])
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(import_skops_io(), "dump", half_a_dump)
    capsys.readouterr()
    assert main(["forget", str(model_file), "--ids", "1,2"]) == 2
    err = _error(capsys)
    assert str(model_file) in err and "No space left on device" in err
    monkeypatch.undo()
    assert model_file.read_bytes() == before
    assert len(mlneighbors.load(model_file).training_ids_) == 40
    assert sorted(os.listdir(tmp_path)) == ["all.csv", "model.skops"]


def test_a_process_killed_while_saving_leaves_the_old_file_whole(problem, tmp_path, capsys):
    X, Y = problem
    code, model_file = _fit(tmp_path, _csv(tmp_path / "all.csv", X, Y))
    before = model_file.read_bytes()
    script = textwrap.dedent(f"""
        import time
        from mlneighbors._imports import import_skops_io
        from mlneighbors.cli import main
        sio = import_skops_io()

        def slow_dump(model, path):
            with open(path, "wb") as fh:
                fh.write(b"PK\\x03\\x04 half of a model")
                fh.flush()
            time.sleep(60)  # killed here

        sio.dump = slow_dump
        main(["forget", {str(model_file)!r}, "--ids", "1,2"])
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while not any(name.endswith(".tmp") and os.path.getsize(tmp_path / name) for name in os.listdir(tmp_path)):
            assert proc.poll() is None, proc.stderr.read().decode()
            assert time.monotonic() < deadline, "the save never started"
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)  # a crash: no handler, no clean-up
    finally:
        proc.wait()
    assert proc.returncode == -signal.SIGKILL
    assert model_file.read_bytes() == before
    assert len(mlneighbors.load(model_file).training_ids_) == 40


def test_an_index_saved_with_the_model_is_saved_again(problem, tmp_path, capsys):
    pytest.importorskip("hnswlib")
    from mlneighbors.cli._live import _had_index

    X, Y = problem
    code, model_file = _fit(tmp_path, _csv(tmp_path / "first.csv", X[:30], Y[:30]), "model.skops",
                            "--backend", "hnswlib", "--include-index")
    assert code == 0 and _had_index(model_file)
    assert main(["update", str(model_file), str(_csv(tmp_path / "new.csv", X[30:], Y[30:])), "--quiet"]) == 0
    assert _had_index(model_file)
    assert main(["forget", str(model_file), "--ids", "3", "--out", str(tmp_path / "less.skops"), "--quiet"]) == 0
    assert _had_index(tmp_path / "less.skops")
    code, plain = _fit(tmp_path, _csv(tmp_path / "plain.csv", X, Y), "plain.skops")
    assert main(["forget", str(plain), "--ids", "3", "--quiet"]) == 0 and not _had_index(plain)


def test_update_of_a_model_with_string_identifiers_needs_the_new_ones(problem, tmp_path, capsys):
    X, Y = problem
    code, model_file = _fit(tmp_path, _csv(tmp_path / "first.csv", X[:30], Y[:30], [f"r{i}" for i in range(30)]),
                            "model.skops", "--id-column", "id")
    capsys.readouterr()
    assert main(["update", str(model_file), str(_csv(tmp_path / "new.csv", X[30:], Y[30:]))]) == 2
    assert "--id-column" in _error(capsys)


def test_blda_bknn_says_its_projection_is_kept(problem, tmp_path, capsys):
    X, Y = problem
    model_file = tmp_path / "model.skops"
    assert main(["fit", "blda-bknn", str(_csv(tmp_path / "first.csv", X[:30], Y[:30])), "--label-columns",
                 ",".join(LABELS), "--scale", "none", "--out", str(model_file), "--quiet"]) == 0
    assert main(["update", str(model_file), str(_csv(tmp_path / "new.csv", X[30:], Y[30:]))]) == 0
    err = capsys.readouterr().err
    assert "the transform (BLDA) fitted on the original rows is kept" in err and "re-project" in err
    assert len(mlneighbors.load(model_file).training_ids_) == 40


# --------------------------------------------------------------------------------------
# Pipeline.partial_fit and Pipeline.forget: the final model's, after the kept transforms
# --------------------------------------------------------------------------------------


def test_pipeline_updates_its_model_through_the_fitted_transforms(problem):
    from sklearn.base import clone
    from sklearn.preprocessing import MinMaxScaler

    from mlneighbors import MLkNN, Pipeline

    X, Y = problem
    pipe = Pipeline([("scale", MinMaxScaler()), ("model", MLkNN(3))]).fit(X[:30], Y[:30], model__ids=range(30))
    scaler = clone(pipe.steps[0][1]).fit(X[:30])  # the ranges of the first rows: kept
    alone = MLkNN(3).fit(scaler.transform(X[:30]), Y[:30])
    assert pipe.partial_fit(X[30:], Y[30:]) is pipe
    alone.partial_fit(scaler.transform(X[30:]), Y[30:])
    np.testing.assert_array_equal(pipe.steps[0][1].data_max_, X[:30].max(axis=0))
    np.testing.assert_allclose(pipe.predict_proba(X), alone.predict_proba(scaler.transform(X)))
    assert pipe.training_ids_.tolist() == list(range(40))
    assert pipe.forget([0, 39]) is pipe and pipe.training_ids_.tolist() == list(range(1, 39))
    with pytest.raises(ValueError, match="77"):
        pipe.forget([77])
    assert len(pipe.training_ids_) == 38


def test_pipeline_offers_the_methods_its_final_step_has():
    from sklearn.linear_model import LinearRegression
    from sklearn.preprocessing import MinMaxScaler

    from mlneighbors import BRkNN, Pipeline

    other = Pipeline([("scale", MinMaxScaler()), ("model", LinearRegression())])
    assert not hasattr(other, "partial_fit") and not hasattr(other, "forget")
    unfitted = Pipeline([("model", BRkNN(1))])
    assert hasattr(unfitted, "partial_fit") and not hasattr(unfitted, "training_ids_")


def test_out_must_name_a_file(problem, tmp_path, capsys):
    X, Y = problem
    code, model_file = _fit(tmp_path, _csv(tmp_path / "all.csv", X, Y))
    before = model_file.read_bytes()
    (tmp_path / "folder").mkdir()
    capsys.readouterr()
    assert main(["forget", str(model_file), "--ids", "1", "--out", str(tmp_path / "folder")]) == 2
    assert "is a folder" in _error(capsys) and model_file.read_bytes() == before
