"""A user's own files through the command line: evaluate by path, fit, predict, every format.

The files are written by the tests (a few dozen rows of one small learnable problem) in
every format the readers take; the same rows in every format must give the same answer.
"""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pytest
import scipy.io

import mlneighbors
from mlneighbors.cli import main

LABELS = ["sport", "music", "news"]

# optional extras: reading CSV needs pandas, and `fit` writes (`predict` reads) skops files
needs_pandas = pytest.mark.requires("pandas")
needs_skops = pytest.mark.requires("skops")


@pytest.fixture(scope="module")
def problem():
    rng = np.random.default_rng(11)
    X = np.round(rng.normal(size=(48, 5)), 3)
    Y = (X[:, :3] + rng.normal(scale=0.6, size=(48, 3)) > 0).astype(int)
    return X, Y


def _arff(path, X, Y, *, first=False, relation="own", names=True):
    feats = [f"@attribute x{j} numeric" for j in range(X.shape[1])]
    labs = [f"@attribute {n} {{0,1}}" for n in LABELS]
    attrs = labs + feats if first else feats + labs
    rows = [np.concatenate([y, x]) if first else np.concatenate([x, y]) for x, y in zip(X, Y, strict=True)]
    body = "\n".join(",".join(f"{v:g}" for v in row) for row in rows)
    path.write_text(f"@relation '{relation}'\n" + "\n".join(attrs) + "\n@data\n" + body + "\n")
    return path


def _xml(path):
    path.write_text('<?xml version="1.0" encoding="utf-8"?>\n<labels xmlns="http://mulan.sourceforge.net/labels">\n'
                    + "".join(f'<label name="{n}"></label>\n' for n in LABELS) + "</labels>\n")
    return path


def _csv(path, X, Y, labels=True):
    header = [f"x{j}" for j in range(X.shape[1])] + (LABELS if labels else [])
    lines = [",".join(header)] + [
        ",".join([f"{v:g}" for v in x] + ([str(v) for v in y] if labels else [])) for x, y in zip(X, Y, strict=True)
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def _svm(path, X, Y):
    lines = []
    for x, y in zip(X, Y, strict=True):
        labels = ",".join(str(j) for j in np.flatnonzero(y))
        feats = " ".join(f"{j + 1}:{v:g}" for j, v in enumerate(x) if v != 0)
        lines.append(f"{labels} {feats}".strip())
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture(scope="module")
def files(problem, tmp_path_factory):
    """DATA argument -> (file options) for the same rows in every format."""
    X, Y = problem
    d = tmp_path_factory.mktemp("own")
    _xml(d / "mulan.xml")
    scipy.io.savemat(d / "data.mat", {"data": X, "target": Y.T})
    return {
        "mulan": [str(_arff(d / "mulan.arff", X, Y))],  # the XML beside it names the labels
        "meka": [str(_arff(d / "meka.arff", X, Y, first=True, relation="own: -C 3"))],
        "arff-first": [str(_arff(d / "first.arff", X, Y, first=True)), "--labels-first", "3"],
        "arff-last": [str(_arff(d / "last.arff", X, Y)), "--labels-last", "3"],
        "arff-xml": [str(_arff(d / "named.arff", X, Y)), "--xml", str(d / "mulan.xml")],
        "csv-names": [str(_csv(d / "data.csv", X, Y)), "--label-columns", "sport,music,news"],
        "csv-range": [str(d / "data.csv"), "--label-columns=-3:"],  # '=': a value starting with '-'
        "libsvm": [str(_svm(d / "data.svm", X, Y))],
        "mat": [str(d / "data.mat")],
    }


def _json(capsys):
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("fmt", ["mulan", "meka", "arff-first", "arff-last", "arff-xml",
                                 pytest.param("csv-names", marks=needs_pandas),
                                 pytest.param("csv-range", marks=needs_pandas), "libsvm", "mat"])
def test_evaluate_a_file_by_path_in_every_format(fmt, files, problem, capsys):
    from mlneighbors import MLkNN
    from mlneighbors.model_selection import evaluate_models

    X, Y = problem
    argv = ["evaluate", *files[fmt], "--model", "mlknn", "--k", "3", "--cv", "2", "--format", "json",
            "--metrics", "hamming_loss,average_precision"]
    assert main(argv) == 0
    doc = _json(capsys)
    assert doc["protocol"].startswith("2-fold stratified CV (seed 0, 48 instances)")
    assert doc["scale"] == ("none" if fmt == "libsvm" else "minmax")  # libsvm rows are sparse: not scaled
    got = {r["metric"]: r["value"] for r in doc["results"] if r["metric"] != "fit_predict_seconds"}
    want = evaluate_models({"m": MLkNN(3)}, X, Y, cv=2, random_state=0, scale=doc["scale"],
                           metrics=["hamming_loss", "average_precision"])["m"].mean
    assert got == pytest.approx(want)  # the same rows in every format: the same figures


def test_evaluate_with_a_test_file(files, problem, tmp_path, capsys):
    X, Y = problem
    test = _arff(tmp_path / "mulan-test.arff", X[:10] + 0.01, Y[:10])
    _xml(tmp_path / "mulan.xml")
    assert main(["evaluate", files["mulan"][0], "--test", str(test), "--model", "brknn-a", "--k", "3",
                 "--format", "csv", "--metrics", "hamming_loss"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert rows[0]["protocol"] == "train/test files (48 train / 10 test)"
    assert main(["evaluate", files["mulan"][0], "--test", str(test), "--cv", "3", "--model", "mlknn"]) == 2
    assert "exclude each other" in capsys.readouterr().err


@needs_skops
@needs_pandas
@pytest.mark.parametrize("scores", [False, True])
def test_fit_then_predict_gives_what_the_library_gives(files, problem, tmp_path, capsys, scores):
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import MinMaxScaler

    from mlneighbors import MLkNN

    X, Y = problem
    model_file = tmp_path / "model.skops"
    assert main(["fit", "mlknn", *files["csv-names"], "--out", str(model_file), "--k", "4"]) == 0
    assert f"wrote {model_file}: mlknn fitted on" in capsys.readouterr().out
    new = _csv(tmp_path / "new.csv", X[::-1][:12] * 1.1, Y[:12], labels=False)  # features only
    out = tmp_path / "predictions.csv"
    assert main(["predict", str(model_file), str(new), "--out", str(out)] + (["--scores"] if scores else [])) == 0
    rows = list(csv.reader(out.open()))
    want_model = Pipeline([("scale", MinMaxScaler()), ("model", MLkNN(4))]).fit(X, Y)
    Q = X[::-1][:12] * 1.1
    header = LABELS + ([f"score:{n}" for n in LABELS] if scores else [])
    assert rows[0] == header and len(rows) == 13  # the input's rows, in order
    got = np.array(rows[1:], dtype=float)
    np.testing.assert_array_equal(got[:, :3], want_model.predict(Q))
    if scores:
        np.testing.assert_allclose(got[:, 3:], want_model.predict_proba(Q), rtol=1e-5)
    # the saved file: one Pipeline, loadable by mlneighbors.load and by plain skops
    sio = pytest.importorskip("skops.io")
    for loaded in (mlneighbors.load(model_file), sio.load(model_file, trusted=mlneighbors.TRUSTED_TYPES)):
        assert loaded.label_names_ == LABELS
        np.testing.assert_array_equal(loaded.predict(Q), want_model.predict(Q))


@needs_skops
def test_predict_the_top_k_and_a_mulan_arff(files, problem, tmp_path, capsys):
    X, _ = problem
    model_file = tmp_path / "m.skops"
    assert main(["fit", "bknn", *files["mulan"], "--out", str(model_file), "--k", "3", "--quiet"]) == 0
    out = tmp_path / "top.csv"
    assert main(["predict", str(model_file), *files["mulan"], "--out", str(out), "--top-k", "2"]) == 0
    rows = list(csv.reader(out.open()))
    assert rows[0] == ["label:top1", "score:top1", "label:top2", "score:top2"] and len(rows) == 49
    assert all(r[0] in LABELS and float(r[1]) >= float(r[3]) for r in rows[1:])
    arff_out = tmp_path / "predicted.arff"
    assert main(["predict", str(model_file), *files["mulan"], "--out", str(arff_out), "--quiet"]) == 0
    back = mlneighbors.datasets.load_file(arff_out)  # Mulan form: the XML written beside it
    assert back.label_names == LABELS and back.n_samples == 48
    np.testing.assert_allclose(back.X, X)
    np.testing.assert_array_equal(back.Y, mlneighbors.load(model_file).predict(X))


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["evaluate", "nowhere/data.arff", "--model", "mlknn"], "nowhere/data.arff"),
        (["evaluate", "{csv}", "--model", "mlknn"], "label_columns"),
        pytest.param(["evaluate", "{csv}", "--label-columns", "tag9", "--model", "mlknn"],
                     "'tag9', which is not a column", marks=needs_pandas),
        (["predict", "missing.skops", "{csv}", "--out", "p.csv"], "no model file 'missing.skops'"),
        (["fit", "mlknx", "{csv}", "--label-columns=-3:", "--out", "m.skops"], "unknown model 'mlknx'"),
    ],
)
def test_bad_files_and_options_are_one_line(argv, needle, files, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    argv = [a.replace("{csv}", files["csv-names"][0]) for a in argv]
    assert main(argv) in (1, 2)
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and needle in err, err
    assert not list(tmp_path.glob("*.csv")) and not list(tmp_path.glob("*.skops"))


@needs_skops
@needs_pandas
def test_predict_refuses_rows_with_other_features(files, problem, tmp_path, capsys):
    X, Y = problem
    model_file = tmp_path / "m.skops"
    assert main(["fit", "mlknn", *files["libsvm"], "--out", str(model_file), "--quiet"]) == 0
    other = _csv(tmp_path / "other.csv", X[:, :4], Y, labels=False)
    assert main(["predict", str(model_file), str(other), "--out", str(tmp_path / "p.csv")]) == 2
    assert "has 4 features; the model was fitted on 5" in capsys.readouterr().err


@needs_skops
def test_the_readme_commands_on_a_real_mulan_dataset_given_by_path(shared_data, tmp_path, capsys):
    train, test = shared_data / "emotions" / "emotions-train.arff", shared_data / "emotions" / "emotions-test.arff"
    assert main(["evaluate", str(train), "--test", str(test), "--model", "mlknn", "--metrics",
                 "hamming_loss,average_precision"]) == 0
    out = capsys.readouterr().out
    assert "train/test files (391 train / 202 test)" in out
    model_file = tmp_path / "emotions.skops"
    assert main(["fit", "mlknn", str(train), "--out", str(model_file), "--quiet"]) == 0
    predictions = tmp_path / "predictions.csv"
    assert main(["predict", str(model_file), str(test), "--out", str(predictions), "--scores", "--quiet"]) == 0
    rows = list(csv.reader(predictions.open()))
    assert len(rows) == 203 and rows[0][:2] == ["amazed-suprised", "happy-pleased"]


# ---------------------------------------------------------------------------
# rows to predict: features only in every format, columns matched by name


@pytest.fixture(scope="module")
def fitted(files, tmp_path_factory):
    """Models written by `fit`: from an ARFF file (names) and from a libsvm file (none)."""
    d = tmp_path_factory.mktemp("models")
    assert main(["fit", "mlknn", *files["mulan"], "--out", str(d / "named.skops"), "--k", "3", "--quiet"]) == 0
    assert main(["fit", "mlknn", *files["libsvm"], "--out", str(d / "unnamed.skops"), "--k", "3", "--quiet"]) == 0
    return {"named": d / "named.skops", "unnamed": d / "unnamed.skops"}


def _features_only(kind, folder, X):
    names = [f"x{j}" for j in range(X.shape[1])]
    if kind == "arff":  # no label attributes, no -C, no XML beside it
        path = folder / "rows.arff"
        path.write_text("@relation rows\n" + "".join(f"@attribute {n} numeric\n" for n in names) + "@data\n"
                        + "".join(",".join(f"{v:g}" for v in x) + "\n" for x in X))
        return [str(path)]
    if kind == "csv":
        return [str(_csv(folder / "rows.csv", X, X[:, :0], labels=False))]
    if kind == "libsvm":  # an empty label field: the lines start with the pairs
        return [str(_svm(folder / "rows.svm", X, np.zeros((len(X), 0), dtype=int)))]
    scipy.io.savemat(folder / "rows.mat", {"data": X})
    return [str(folder / "rows.mat")]


def _predicted(path):
    rows = list(csv.reader(path.open()))
    return rows[0], np.array(rows[1:], dtype=float)


@needs_skops
@pytest.mark.parametrize("model", ["named", "unnamed"])
@pytest.mark.parametrize("kind", ["arff", pytest.param("csv", marks=needs_pandas), "libsvm", "mat"])
def test_predict_reads_a_file_of_features_only_in_every_format(kind, model, fitted, problem, tmp_path, capsys):
    X, _ = problem
    Q = np.round(X[:9] * 0.9, 3)
    out = tmp_path / "p.csv"
    assert main(["predict", str(fitted[model]), *_features_only(kind, tmp_path, Q), "--out", str(out)]) == 0
    header, got = _predicted(out)
    want = mlneighbors.load(fitted[model]).predict(Q)
    np.testing.assert_array_equal(got, want)
    assert header == (LABELS if model == "named" else ["label0", "label1", "label2"])
    assert "predictions for 9 rows" in capsys.readouterr().out


@needs_skops
@pytest.mark.parametrize("kind", [pytest.param("csv", marks=needs_pandas), "arff"])
def test_predict_reorders_named_columns_and_says_so_once(kind, fitted, problem, tmp_path, capsys):
    X, Y = problem
    order = [3, 0, 4, 2, 1]
    if kind == "csv":
        path = tmp_path / "r.csv"
        path.write_text(",".join(f"x{j}" for j in order) + "\n"
                        + "".join(",".join(f"{v:g}" for v in x[order]) + "\n" for x in X[:10]))
    else:
        path = tmp_path / "r.arff"
        path.write_text("@relation r\n" + "".join(f"@attribute x{j} numeric\n" for j in order) + "@data\n"
                        + "".join(",".join(f"{v:g}" for v in x[order]) + "\n" for x in X[:10]))
    out = tmp_path / "p.csv"
    assert main(["predict", str(fitted["named"]), str(path), "--out", str(out)]) == 0
    np.testing.assert_array_equal(_predicted(out)[1], mlneighbors.load(fitted["named"]).predict(X[:10]))
    err = capsys.readouterr().err
    assert err.count("reordered by name") == 1 and err.startswith(f"note: {path}: the file's features come")
    assert main(["predict", str(fitted["named"]), str(path), "--out", str(out), "--quiet"]) == 0
    assert capsys.readouterr().err == ""


@needs_skops
@needs_pandas
def test_predict_on_the_training_csv_drops_its_label_columns_with_a_note(files, problem, tmp_path, capsys):
    X, Y = problem
    model = tmp_path / "m.skops"
    assert main(["fit", "mlknn", *files["csv-names"], "--out", str(model), "--k", "3", "--quiet"]) == 0
    out = tmp_path / "p.csv"
    assert main(["predict", str(model), files["csv-names"][0], "--out", str(out)]) == 0  # no --label-columns
    np.testing.assert_array_equal(_predicted(out)[1], mlneighbors.load(model).predict(X))
    assert "label column(s) 'sport', 'music', 'news' are not read" in capsys.readouterr().err


@needs_skops
@needs_pandas
@pytest.mark.parametrize(
    "header, needle",
    [
        (["x0", "x1", "x2", "x3"], "1 feature(s) of the model are not in the file: 'x4'"),
        (["x0", "x1", "x2", "x3", "x4", "extra"], "1 column(s) of the file are not features of the model: 'extra'"),
    ],
)
def test_predict_names_missing_and_unknown_columns(header, needle, fitted, tmp_path, capsys):
    path = tmp_path / "bad.csv"
    path.write_text(",".join(header) + "\n" + ",".join("1" for _ in header) + "\n")
    assert main(["predict", str(fitted["named"]), str(path), "--out", str(tmp_path / "p.csv")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and needle in err and str(path) in err
    assert not (tmp_path / "p.csv").exists()


@needs_skops
@needs_pandas
def test_predict_on_a_header_less_csv_says_to_pass_no_header(fitted, problem, tmp_path, capsys):
    """Line 1, numbers read as the header, names none of the model's features: the one line says
    what to pass, and with it the rows are predicted, all of them."""
    X, _ = problem
    path = tmp_path / "bare.csv"
    path.write_text("".join(",".join(f"{v:g}" for v in x) + "\n" for x in X[:6]))
    out = tmp_path / "p.csv"
    assert main(["predict", str(fitted["named"]), str(path), "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.endswith(
        f"line 1 of {path} holds only numbers: if the file has no header line, pass header=False (--no-header)"), err
    assert main(["predict", str(fitted["named"]), str(path), "--no-header", "--out", str(out), "--quiet"]) == 0
    np.testing.assert_array_equal(_predicted(out)[1], mlneighbors.load(fitted["named"]).predict(X[:6]))


@needs_skops
@pytest.mark.parametrize("model", ["named", "unnamed"])
def test_predict_a_file_of_the_wrong_width_names_it_and_both_counts(model, fitted, problem, tmp_path, capsys):
    X, _ = problem
    scipy.io.savemat(tmp_path / "w.mat", {"data": X[:3, :4]})
    assert main(["predict", str(fitted[model]), str(tmp_path / "w.mat"), "--out", str(tmp_path / "p.csv")]) == 2
    assert f"{tmp_path / 'w.mat'}: has 4 features; the model was fitted on 5 features" in capsys.readouterr().err


# ---------------------------------------------------------------------------
# a test file: labels and features matched to the training file's by name


def test_evaluate_test_labels_in_another_order_are_matched_by_name(files, problem, tmp_path, capsys):
    X, Y = problem
    argv = ["--model", "mlknn", "--k", "3", "--format", "json", "--metrics", "hamming_loss,macro_f1"]
    same = _arff(tmp_path / "same.arff", X[:12], Y[:12], relation="t: -C -3")
    assert main(["evaluate", files["mulan"][0], "--test", str(same), *argv]) == 0
    want = _json(capsys)["results"]
    order = [2, 0, 1]  # news, sport, music
    other = tmp_path / "other.arff"
    other.write_text("@relation 't: -C -3'\n" + "".join(f"@attribute x{j} numeric\n" for j in range(5))
                     + "".join(f"@attribute {LABELS[j]} {{0,1}}\n" for j in order) + "@data\n"
                     + "".join(",".join([f"{v:g}" for v in x] + [str(v) for v in y[order]]) + "\n"
                               for x, y in zip(X[:12], Y[:12], strict=True)))
    assert main(["evaluate", files["mulan"][0], "--test", str(other), *argv]) == 0
    captured = capsys.readouterr()
    got = json.loads(captured.out)["results"]
    assert [r["value"] for r in got if r["metric"] != "fit_predict_seconds"] == pytest.approx(
        [r["value"] for r in want if r["metric"] != "fit_predict_seconds"])
    assert "labels come in another order than those of the training data" in captured.err


@pytest.mark.parametrize(
    "labels, needle",
    [
        (["sport", "music"], "1 label(s) of the training data {train} are not in the file: 'news'"),
        (["sport", "music", "news", "weather"],
         "1 label(s) of the file are not labels of the training data {train}: 'weather'"),
    ],
)
def test_evaluate_test_labels_absent_or_extra_are_named(labels, needle, files, problem, tmp_path, capsys):
    X, _ = problem
    path = tmp_path / "t.arff"  # its -C says which attributes are its labels
    path.write_text(f"@relation 't: -C -{len(labels)}'\n" + "".join(f"@attribute x{j} numeric\n" for j in range(5))
                    + "".join(f"@attribute {n} {{0,1}}\n" for n in labels) + "@data\n"
                    + "".join(",".join([f"{v:g}" for v in x] + ["1"] * len(labels)) + "\n" for x in X[:6]))
    assert main(["evaluate", files["meka"][0], "--test", str(path), "--model", "mlknn"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith(f"mlneighbors evaluate: {path}: "), err
    assert needle.format(train=files["meka"][0]) in err


def test_evaluate_a_test_file_of_the_wrong_width_names_it_and_both_counts(files, problem, tmp_path, capsys):
    X, Y = problem
    path = _svm(tmp_path / "t.svm", np.hstack([X[:5], X[:5, :2]]), Y[:5])
    assert main(["evaluate", *files["libsvm"], "--test", str(path), "--model", "mlknn"]) == 2
    assert f"{path}: has 7 features; the training data {files['libsvm'][0]} has 5 features" in capsys.readouterr().err


# ---------------------------------------------------------------------------
# missing values, empty files, flags, notes and a .mat file's own split


@pytest.mark.parametrize("kind", ["arff", pytest.param("csv-cell", marks=needs_pandas),
                                  pytest.param("csv-short", marks=needs_pandas)])
def test_a_missing_value_is_one_line_naming_the_file_line_and_column(kind, problem, tmp_path, capsys):
    X, Y = problem
    if kind == "arff":
        path = _arff(tmp_path / "m.arff", X, Y, relation="m: -C -3")
        lines = path.read_text().splitlines()
        cells = lines[12].split(",")
        cells[1] = "?"
        lines[12] = ",".join(cells)  # row 3, x1
        path.write_text("\n".join(lines) + "\n")
        argv, where = [str(path)], f"{path}, line 13: feature 'x1' is missing ('?')"
    else:
        path = _csv(tmp_path / "m.csv", X, Y)
        lines = path.read_text().splitlines()
        lines[4] = "1,,3,4,5,0,1,0" if kind == "csv-cell" else "1,2,3"
        path.write_text("\n".join(lines) + "\n")
        argv = [str(path), "--label-columns", "sport,music,news"]
        where = (f"{path}, line 5: feature 'x1' is missing (an empty cell" if kind == "csv-cell"
                 else f"{path}: label 'sport' must be 0 or 1, but row 3 (line 5) is missing")
    assert main(["evaluate", *argv, "--model", "mlknn", "--cv", "2"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "HistGradientBoosting" not in err, err
    assert where in err, err


@needs_pandas
def test_a_csv_with_a_header_and_no_rows_names_the_file(tmp_path, capsys):
    path = tmp_path / "empty.csv"
    path.write_text("x0,x1,sport\n")
    assert main(["evaluate", str(path), "--labels-last", "1", "--model", "mlknn"]) == 2
    assert capsys.readouterr().err.strip() == f"mlneighbors evaluate: {path}: has no data rows; expected at least " \
                                              "one row after the header"


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--labels-first", "1", "--labels-last", "3"], "--labels-first and --labels-last exclude each other"),
        (["--labels-last", "3", "--xml", "l.xml"], "give the labels one way: --labels-first/--labels-last, --xml or "
                                                   "--label-columns"),
        (["--no-header"], "--no-header applies to CSV files; {arff} is read as arff"),
        (["--label-columns", "a"], "--label-columns applies to CSV files; {arff} is read as arff"),
    ],
)
def test_flag_conflicts_are_said_in_flags(extra, message, files, capsys):
    arff = files["mulan"][0]
    assert main(["evaluate", arff, *extra, "--model", "mlknn"]) == 2
    assert capsys.readouterr().err.strip() == "mlneighbors evaluate: " + message.format(arff=arff)


def test_the_reader_s_notes_reach_the_user_once(files, problem, tmp_path, capsys):
    X, Y = problem
    scipy.io.savemat(tmp_path / "pm.mat", {"data": X, "target": 2 * Y.T - 1})  # -1/+1 targets
    argv = ["evaluate", str(tmp_path / "pm.mat"), "--model", "mlknn", "--cv", "2", "--metrics", "hamming_loss"]
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert err.count("note: ") == 1 and "targets coded -1/+1 in the .mat file are mapped to 0/1" in err
    assert main([*argv, "--quiet"]) == 0
    assert capsys.readouterr().err == ""


def test_evaluate_split_uses_a_mat_file_s_own_split(problem, tmp_path, capsys):
    from mlneighbors import MLkNN
    from mlneighbors.model_selection import evaluate_models

    X, Y = problem
    path = tmp_path / "s.mat"
    scipy.io.savemat(path, {"train_data": X[:36], "train_target": Y[:36].T, "test_data": X[36:],
                            "test_target": Y[36:].T})
    argv = ["evaluate", str(path), "--split", "--model", "mlknn", "--k", "3", "--format", "json",
            "--metrics", "hamming_loss"]
    assert main(argv) == 0
    doc = _json(capsys)
    assert doc["protocol"] == "the file's train/test split (36 train / 12 test)"
    want = evaluate_models({"m": MLkNN(3)}, X[:36], Y[:36], test=(X[36:], Y[36:]), scale="minmax",
                           metrics=["hamming_loss"])["m"].mean["hamming_loss"]
    assert doc["results"][0]["value"] == pytest.approx(want)
    # a file without one: said in the flags the user typed (not the reader's split='all'), naming the file
    scipy.io.savemat(tmp_path / "one.mat", {"data": X, "target": Y.T})
    assert main(["evaluate", str(tmp_path / "one.mat"), "--split", "--model", "mlknn"]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"mlneighbors evaluate: {tmp_path / 'one.mat'} has no train/test split (it holds data and target): "
        "drop --split and use --cv N, or give --test FILE"]
    (tmp_path / "bad.mat").write_bytes(b"MATLAB 5.0 MAT-file, truncated")
    assert main(["evaluate", str(tmp_path / "bad.mat"), "--split", "--model", "mlknn"]) == 2
    err = capsys.readouterr().err
    assert "bad.mat" in err and "drop --split" not in err  # a damaged file: the reader's own words


@needs_skops
@needs_pandas
def test_predict_a_csv_with_label_columns_for_a_model_without_names(files, fitted, problem, tmp_path, capsys):
    """The model (fitted on libsvm rows) names no columns: the CSV's label columns cannot be
    told from features by name, so the error says how to name them, and naming them works."""
    X, _ = problem
    out = tmp_path / "p.csv"
    assert main(["predict", str(fitted["unnamed"]), files["csv-names"][0], "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "has 8 features; the model was fitted on 5 features; if the file holds label columns too" in err
    argv = ["predict", str(fitted["unnamed"]), files["csv-names"][0], "--label-columns=-3:", "--out", str(out)]
    assert main(argv) == 0
    np.testing.assert_array_equal(_predicted(out)[1], mlneighbors.load(fitted["unnamed"]).predict(X))
# --------------------------------------------------------------------------------------
# papercuts: --top-k beyond the labels, --out a folder, warnings, score columns, folders
# --------------------------------------------------------------------------------------


@needs_skops
def test_top_k_beyond_the_labels_is_clipped_with_a_note(files, tmp_path, capsys):
    model_file = tmp_path / "m.skops"
    assert main(["fit", "mlknn", *files["mulan"], "--out", str(model_file), "--quiet"]) == 0
    out = tmp_path / "top.csv"
    assert main(["predict", str(model_file), *files["mulan"], "--out", str(out), "--top-k", "10"]) == 0
    captured = capsys.readouterr()
    assert "note: --top-k 10 is more than the model's 3 labels; writing all 3, ranked" in captured.err
    assert "the top 3 labels for 48 rows" in captured.out  # says what it wrote
    rows = list(csv.reader(out.open()))
    assert rows[0] == ["label:top1", "score:top1", "label:top2", "score:top2", "label:top3", "score:top3"]
    assert all(sorted(r[0::2]) == sorted(LABELS) for r in rows[1:])  # every label, each once
    scores = np.array([r[1::2] for r in rows[1:]], dtype=float)
    assert (np.diff(scores, axis=1) <= 0).all()  # best first
    assert main(["predict", str(model_file), *files["mulan"], "--out", str(out), "--top-k", "10", "--quiet"]) == 0
    assert capsys.readouterr().err == ""


@needs_skops
def test_score_columns_say_what_they_score(files, tmp_path, capsys):
    """``score:<label>`` with --scores, ``label:topJ`` and ``score:topJ`` with --top-k: one pattern."""
    model_file = tmp_path / "m.skops"
    assert main(["fit", "mlknn", *files["mulan"], "--out", str(model_file), "--quiet"]) == 0
    out = tmp_path / "p.csv"
    assert main(["predict", str(model_file), *files["mulan"], "--out", str(out), "--scores", "--quiet"]) == 0
    with_scores = next(csv.reader(out.open()))
    assert main(["predict", str(model_file), *files["mulan"], "--out", str(out), "--top-k", "1", "--quiet"]) == 0
    top = next(csv.reader(out.open()))
    assert with_scores == LABELS + [f"score:{n}" for n in LABELS] and top == ["label:top1", "score:top1"]
    assert all(c.split(":")[0] in ("score", "label") for c in with_scores[3:] + top)


@needs_skops
@pytest.mark.parametrize("cmd", ["fit", "predict", "predict-arff"])
def test_out_naming_a_folder_says_so_with_the_users_path(cmd, files, tmp_path, capsys):
    model_file = tmp_path / "m.skops"
    assert main(["fit", "mlknn", *files["mulan"], "--out", str(model_file), "--quiet"]) == 0
    folder = tmp_path / "results"
    folder.mkdir()
    if cmd == "fit":
        argv = ["fit", "mlknn", *files["mulan"], "--out", str(folder)]
    elif cmd == "predict":
        argv = ["predict", str(model_file), *files["mulan"], "--out", str(folder)]
    else:  # FILE.arff writes FILE.xml beside it: a folder there is refused before anything is written
        (tmp_path / "pred.xml").mkdir()
        argv = ["predict", str(model_file), *files["mulan"], "--out", str(tmp_path / "pred.arff")]
        folder = tmp_path / "pred.xml"
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.splitlines() == [err] and f"--out {folder} is a folder; give a file name" in err, err
    assert ".tmp" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["m.skops", "results"] + (
        ["pred.xml"] if cmd == "predict-arff" else []))


@needs_skops
@needs_pandas
def test_a_folder_created_for_out_is_removed_when_the_command_fails(files, tmp_path, capsys):
    bad = tmp_path / "bad.csv"
    bad.write_text("x0,x1,sport\n1,2\n")  # a short row
    out = tmp_path / "new" / "deeper" / "m.skops"
    assert main(["fit", "mlknn", str(bad), "--label-columns", "sport", "--out", str(out)]) in (1, 2)
    assert not (tmp_path / "new").exists()
    capsys.readouterr()
    assert main(["fit", "mlknn", *files["mulan"], "--out", str(out), "--quiet"]) == 0  # and when it works: kept
    assert out.is_file()


@needs_skops
@needs_pandas
def test_warnings_are_one_line_without_the_librarys_source(problem, tmp_path, capsys):
    X, Y = problem
    Y = Y.copy()
    Y[:, 1] = 0  # a label no training row carries: the model warns that it is never predicted
    data = _csv(tmp_path / "d.csv", X, Y)
    assert main(["fit", "mlknn", str(data), "--label-columns", "sport,music,news", "--out",
                 str(tmp_path / "m.skops"), "--quiet"]) == 0
    err = capsys.readouterr().err
    assert err.splitlines() == ["warning: 1 label(s) have no positive training example: label 'music' "
                                "(column 1); they are never predicted"], err
    assert main(["evaluate", str(data), "--label-columns", "sport,music,news", "--model", "mlknn", "--cv", "3",
                 "--quiet", "--metrics", "hamming_loss"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("warning: 1 label(s) have no positive training example: label "
                                               "'music' (column 1);"), err


@needs_skops
def test_a_label_nobody_has_is_named_from_a_meka_header(problem, tmp_path, capsys):
    """The labels of a MEKA file have names: the warning gives them, with their columns of Y."""
    X, Y = problem
    Y = Y.copy()
    Y[:, [0, 2]] = 0
    path = _arff(tmp_path / "meka.arff", X, Y, first=True, relation="own: -C 3")
    for argv in (["fit", "mlknn", str(path), "--out", str(tmp_path / "m.skops")],
                 ["evaluate", str(path), "--model", "mlknn", "--cv", "2", "--metrics", "hamming_loss"]):
        assert main([*argv, "--quiet"]) == 0
        err = capsys.readouterr().err.splitlines()
        assert err[0].startswith("warning: 2 label(s) have no positive training example: labels 'sport', "
                                 "'news' (columns 0, 2); they are never predicted"), err


@needs_skops
@needs_pandas
def test_a_label_nobody_has_in_a_file_without_names_is_given_by_column(problem, tmp_path, capsys):
    X, Y = problem
    Y = Y.copy()
    Y[:, 1] = 0
    path = tmp_path / "bare.csv"
    path.write_text("\n".join(",".join(f"{v:g}" for v in row) for row in np.hstack([X, Y])) + "\n")
    assert main(["fit", "mlknn", str(path), "--no-header", "--label-columns=-3:", "--out",
                 str(tmp_path / "m.skops"), "--quiet"]) == 0
    assert capsys.readouterr().err.splitlines() == [
        "warning: 1 label(s) have no positive training example (columns [1]); they are never predicted"]


def test_a_warning_outside_a_fit_is_one_line_too(problem, tmp_path, capsys):
    """The readers' warnings (a MEKA -C that the XML contradicts) print through the same hook."""
    X, Y = problem
    path = _arff(tmp_path / "meka.arff", X, Y, relation="own: -C 2")  # the XML beside it says 3 labels, last
    _xml(tmp_path / "meka.xml")
    assert main(["evaluate", str(path), "--model", "mlknn", "--cv", "3", "--quiet", "--metrics",
                 "hamming_loss"]) == 0
    err = capsys.readouterr().err.splitlines()
    warned = [line for line in err if line.startswith("warning: ")]
    assert warned and len(warned) == len(err), err
    assert not any(".py:" in line or "warnings.warn" in line for line in err)


# ---------------------------------------------------------------------------
# libsvm files at predict and --test: numbered as the training file was


def _svm_based(path, X, Y, base):
    lines = []
    for x, y in zip(X, Y, strict=True):
        pairs = " ".join(f"{j + base}:{v:g}" for j, v in enumerate(x) if v != 0)
        lines.append(f"{','.join(str(j) for j in np.flatnonzero(y))} {pairs}".strip())
    path.write_text("\n".join(lines) + "\n")
    return str(path)


@pytest.mark.parametrize("base", [0, 1])
@pytest.mark.requires("skops")
def test_fit_records_the_libsvm_base_and_predict_and_test_files_keep_it(base, problem, tmp_path, capsys):
    """New rows that never use the first feature have no index 0 in either base: they are read
    with the training file's base (recorded in the model by fit), not shifted by a guess."""
    X, Y = problem
    train = _svm_based(tmp_path / "train.svm", X, Y, base)
    model_file = tmp_path / "m.skops"
    assert main(["fit", "mlknn", train, "--out", str(model_file), "--k", "3", "--quiet"]) == 0
    assert mlneighbors.load(model_file).libsvm_index_base_ == base
    Q = X[:8].copy()
    Q[:, 0] = 0
    rows = _svm_based(tmp_path / "rows.svm", Q, np.zeros((8, 0), dtype=int), base)
    out = tmp_path / "p.csv"
    assert main(["predict", str(model_file), rows, "--out", str(out), "--quiet"]) == 0
    np.testing.assert_array_equal(_predicted(out)[1], mlneighbors.load(model_file).predict(Q))
    # --test: the same rule against the training file
    test = _svm_based(tmp_path / "test.svm", Q, Y[:8], base)
    assert main(["evaluate", train, "--test", test, "--model", "mlknn", "--k", "3", "--format", "json",
                 "--metrics", "hamming_loss"]) == 0
    from mlneighbors import MLkNN
    from mlneighbors.metrics import hamming_loss

    want = hamming_loss(Y[:8], MLkNN(3).fit(X, Y).predict(Q))
    assert _json(capsys)["results"][0]["value"] == pytest.approx(want)


@pytest.mark.parametrize("cmd", ["predict", "evaluate"])
@pytest.mark.requires("skops")
def test_index_0_against_a_1_based_training_file_is_one_line_naming_the_line(cmd, problem, tmp_path, capsys):
    X, Y = problem
    train = _svm_based(tmp_path / "train.svm", X, Y, 1)
    model_file = tmp_path / "m.skops"
    assert main(["fit", "mlknn", train, "--out", str(model_file), "--quiet"]) == 0
    new = _svm_based(tmp_path / "new.svm", X[:3], Y[:3], 0)
    argv = (["predict", str(model_file), new, "--out", str(tmp_path / "p.csv")] if cmd == "predict"
            else ["evaluate", train, "--test", new, "--model", "mlknn"])
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert f"{new}, line 1: feature index 0, but " in err and "numbers the features from 1" in err
    assert not (tmp_path / "p.csv").exists()


@pytest.mark.parametrize("cmd", ["predict", "evaluate"])
@pytest.mark.requires("skops")
def test_a_1_based_file_against_a_0_based_training_file_names_both_bases(cmd, problem, tmp_path, capsys):
    X, Y = problem
    train = _svm_based(tmp_path / "train.svm", X, Y, 0)
    model_file = tmp_path / "m.skops"
    assert main(["fit", "mlknn", train, "--out", str(model_file), "--quiet"]) == 0
    new = _svm_based(tmp_path / "new.svm", X[:3], Y[:3], 1)  # uses the last feature: one wider read from 0
    argv = (["predict", str(model_file), new, "--out", str(tmp_path / "p.csv")] if cmd == "predict"
            else ["evaluate", train, "--test", new, "--model", "mlknn"])
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and f"{new}: has 6 features; " in err, err
    whose = "the model's training file" if cmd == "predict" else f"the training data {train}"
    assert (f"the index bases seem to differ: {whose} numbers its features from 0 (it uses index 0) and this file is "
            "read the same way, but it uses no index 0 (its indices run from 1 to 5)") in err
    assert "dump_svmlight_file(..., zero_based=True) numbers from 0" in err and "label columns" not in err


@pytest.mark.parametrize(
    "extra, out, needle",
    [
        (["--scores", "--top-k", "2"], "p.csv", "--scores and --top-k exclude each other"),
        (["--top-k", "2", "--scores"], "p.csv", "--scores and --top-k exclude each other"),
        (["--scores"], "p.arff", "--scores writes CSV columns, which an ARFF output (--out {out}"),
        (["--top-k", "2"], "p.arff", "--top-k writes CSV columns, which an ARFF output (--out {out}"),
    ],
)
@pytest.mark.requires("skops")
def test_outputs_that_cannot_go_together_are_refused_not_dropped(extra, out, needle, files, tmp_path, capsys):
    """Two requests one output cannot honour both: one line, exit 2, nothing written (top-k
    used to win over --scores, and an .arff --out to get top-k CSV or lose the scores)."""
    model_file = tmp_path / "m.skops"
    assert main(["fit", "mlknn", *files["mulan"], "--out", str(model_file), "--quiet"]) == 0
    capsys.readouterr()
    out = tmp_path / "new" / out
    assert main(["predict", str(model_file), *files["mulan"], "--out", str(out), *extra]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and needle.format(out=out) in err, err
    assert not (tmp_path / "new").exists()


# ---------------------------------------------------------------------------
# what reached the user as a traceback: model files predict cannot use, sparse rows for a
# model with a dense-only step, --param values of the wrong type, too few rows


def _saved(path, model):
    mlneighbors.save(model, path)
    return str(path)


@pytest.mark.parametrize(
    "kind, needle",
    [
        ("unfitted-model", "holds an unfitted MLkNN: fit it before saving it"),
        ("unfitted-pipeline", "holds an unfitted Pipeline: fit it before saving it"),
        ("transformer", "holds a BLDA, which transforms features and predicts no labels"),
        ("pipeline-ending-in-a-transformer", "holds a BLDA, which transforms features and predicts no labels"),
        ("another-librarys-model", "holds a RidgeClassifier, not a model of mlneighbors"),
    ],
)
@pytest.mark.parametrize("extra", [[], ["--scores"], ["--top-k", "2"]])
@pytest.mark.requires("skops")
def test_a_model_file_predict_cannot_use_is_one_line_naming_it(kind, needle, extra, files, problem, tmp_path, capsys):
    from sklearn.linear_model import RidgeClassifier
    from sklearn.preprocessing import MinMaxScaler

    from mlneighbors import BLDA, MLkNN, Pipeline

    X, Y = problem
    model = {
        "unfitted-model": lambda: MLkNN(3),
        "unfitted-pipeline": lambda: Pipeline([("scale", MinMaxScaler()), ("model", MLkNN(3))]),
        "transformer": lambda: BLDA().fit(X, Y),
        "pipeline-ending-in-a-transformer": lambda: Pipeline([("scale", MinMaxScaler()), ("blda", BLDA())]).fit(X, Y),
        "another-librarys-model": lambda: RidgeClassifier().fit(X, Y),  # skops trusts scikit-learn's
    }[kind]()
    model_file = _saved(tmp_path / "m.skops", model)
    out = tmp_path / "new" / "p.csv"
    assert main(["predict", model_file, *files["mulan"], "--out", str(out), *extra]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and f"mlneighbors predict: {model_file} {needle}" in err, err
    assert not (tmp_path / "new").exists()


@pytest.mark.parametrize(
    "steps",
    [["minmax"], ["normalizer", "minmax"], ["normalizer", "standard"], ["variance", "minmax"], ["pca"]],
)
@pytest.mark.parametrize("extra", [[], ["--scores"], ["--top-k", "2"]])
@pytest.mark.requires("skops")
def test_sparse_rows_reach_a_model_with_a_dense_only_step_anywhere(steps, extra, files, problem, tmp_path):
    """libsvm rows are sparse; a Pipeline fitted on dense rows with a step that takes dense
    data only (wherever it is) gets them densified: the predictions of the same rows, dense."""
    from sklearn.decomposition import PCA
    from sklearn.feature_selection import VarianceThreshold
    from sklearn.preprocessing import MinMaxScaler, Normalizer, StandardScaler

    from mlneighbors import MLkNN, Pipeline

    X, Y = problem
    make = {"minmax": MinMaxScaler, "standard": StandardScaler, "normalizer": Normalizer,
            "variance": VarianceThreshold, "pca": lambda: PCA(3)}
    model = Pipeline([(name, make[name]()) for name in steps] + [("model", MLkNN(3))]).fit(X, Y)
    model_file = _saved(tmp_path / "m.skops", model)
    rows = _features_only("libsvm", tmp_path, X[:9])
    out = tmp_path / "p.csv"
    assert main(["predict", model_file, *rows, "--out", str(out), "--quiet", *extra]) == 0
    got = list(csv.reader(out.open()))[1:]
    if extra[:1] == ["--top-k"]:
        _, want = model.predict_top_k(X[:9], 2)
        assert [[r[0], r[2]] for r in got] == [[f"label{j}" for j in row] for row in want]
    else:
        np.testing.assert_array_equal(np.array(got, dtype=float)[:, :3], model.predict(X[:9]))


@pytest.mark.parametrize(
    "param, needle",
    [
        ("backend_params=3", "--param backend_params for mlknn must be a JSON object"),
        ("backend_params=[1, 2]", "--param backend_params for mlknn must be a JSON object"),
        ('backend_params={"nprobe": 2}', "backend 'exact' got unexpected parameter(s) ['nprobe']"),
        ("n_neighbors=true", "bad value 'true' for parameter 'n_neighbors' of mlknn: expected an integer"),
        ("smoothing=false", "bad value 'false' for parameter 'smoothing' of mlknn: expected a number"),
        ("n_jobs=true", "bad value 'true' for parameter 'n_jobs' of mlknn: the parameter takes no true/false"),
        ("metric=abc", "--param for mlknn: Unknown metric 'abc'"),
    ],
)
@pytest.mark.parametrize("cmd", ["evaluate", "fit"])
def test_a_param_of_the_wrong_type_is_one_line_before_anything_runs(cmd, param, needle, files, tmp_path, capsys):
    """These reached the user as TypeError or AttributeError tracebacks from inside the fit."""
    argv = (["evaluate", *files["mulan"], "--model", "mlknn", "--cv", "2"] if cmd == "evaluate"
            else ["fit", "mlknn", *files["mulan"], "--out", str(tmp_path / "new" / "m.skops")])
    assert main([*argv, "--param", param]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and f"mlneighbors {cmd}: " in err and needle in err, err
    assert not (tmp_path / "new").exists()


@pytest.mark.parametrize("model, param", [
    ("bknn", "n_per_label=3"),
    ("hybrid", "n_components=none"),  # a None default: any value its constraints take
    ("hybrid", "backend=exact"),
    ("mlknn", 'backend_params={"n_jobs": 1}'),
])
def test_params_of_the_right_type_still_run(model, param, files, capsys):
    assert main(["evaluate", *files["mulan"], "--model", model, "--cv", "2", "--format", "json", "--quiet",
                 "--param", param, "--metrics", "hamming_loss"]) == 0
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("rows, argv, needle", [
    (3, ["--cv", "5"], "has 3 row(s); --cv 5 needs at least 5, one per fold"),
    (6, [], "has 6 row(s); the default --cv 10 (no test part given) needs at least 10, one per fold"),
])
@pytest.mark.requires("pandas")
def test_too_few_rows_for_the_folds_names_the_file(rows, argv, needle, problem, tmp_path, capsys):
    X, Y = problem
    path = str(_csv(tmp_path / "few.csv", X[:rows], Y[:rows]))
    assert main(["evaluate", path, "--label-columns", ",".join(LABELS), "--model", "mlknn", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"mlneighbors evaluate: {path} {needle}", err


@pytest.mark.requires("pandas")
def test_what_a_model_finds_wrong_with_a_file_names_the_file(problem, tmp_path, capsys):
    X, Y = problem
    path = str(_csv(tmp_path / "one.csv", X[:1], Y[:1]))
    assert main(["fit", "mlknn", path, "--label-columns", ",".join(LABELS), "--out", str(tmp_path / "m.skops")]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("mlneighbors: error: ") and err.endswith(f"is required by MLkNN. (while fitting on {path})")


@needs_skops
@pytest.mark.parametrize("extra", [[], ["--scores"], ["--top-k", "5"]])
def test_predict_without_out_writes_the_csv_to_standard_output(extra, files, tmp_path, capsys):
    """A filter: the CSV that --out FILE.csv would hold on standard output (also with --out -),
    and the notes (a clipped --top-k here) on standard error only."""
    model_file = tmp_path / "m.skops"
    assert main(["fit", "mlknn", *files["mulan"], "--out", str(model_file), "--quiet"]) == 0
    out = tmp_path / "p.csv"
    assert main(["predict", str(model_file), *files["mulan"], "--out", str(out), "--quiet", *extra]) == 0
    capsys.readouterr()
    for to in ([], ["--out", "-"]):
        assert main(["predict", str(model_file), *files["mulan"], *to, *extra]) == 0
        captured = capsys.readouterr()
        assert captured.out == out.read_text()
        notes = captured.err.splitlines()
        assert all(line.startswith("note: ") for line in notes) and "are not read: rows to predict" in notes[0]
        assert (("note: --top-k 5 is more than the model's 3 labels; writing all 3, ranked" in notes)
                == (extra[:1] == ["--top-k"]))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.skops", "p.csv"]  # no file named '-'


@needs_skops
def test_fit_says_what_it_fits_before_the_work(files, problem, tmp_path, capsys, monkeypatch):
    """The model, the data and the scaling are said before the fit starts (as evaluate says
    them above its table); what was written, after."""
    from mlneighbors.pipeline import Pipeline

    said_before = []
    fit = Pipeline.fit

    def watched(self, *args, **kwargs):
        said_before.append(capsys.readouterr().out)
        return fit(self, *args, **kwargs)

    monkeypatch.setattr(Pipeline, "fit", watched)
    model_file = tmp_path / "m.skops"
    assert main(["fit", "mlknn", *files["mulan"], "--out", str(model_file)]) == 0
    assert said_before == [f"mlknn on {files['mulan'][0]} (48 rows, 5 features, 3 labels): fit on every row; "
                           "features min-max scaled with the training ranges (the default for dense data; --scale "
                           "to change)\n"]
    assert capsys.readouterr().out == f"wrote {model_file}: mlknn fitted on {files['mulan'][0]}\n"
    assert main(["fit", "mlknn", *files["mulan"], "--out", str(model_file), "--quiet"]) == 0
    assert said_before[1:] == [""] and capsys.readouterr().out == ""
