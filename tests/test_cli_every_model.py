"""Every command-line model through the own-data flow: ``fit`` a file, ``predict`` new rows.

The models are the registry's (``mlneighbors.list_models()``), so a model added there is
covered here without anyone remembering: its saved file must predict what the same Pipeline
fitted in Python predicts, and :func:`mlneighbors.load` must give it back ranking labels.
"""

from __future__ import annotations

import csv

import numpy as np
import pytest

import mlneighbors
from mlneighbors import list_models, make_model
from mlneighbors.cli import main

LABELS = ["sport", "music", "news"]
K = 3

pytestmark = [pytest.mark.requires("skops", "pandas"),  # fit writes skops files; predict reads rows.csv
              pytest.mark.filterwarnings("ignore::UserWarning")]  # a small training set's own notes


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """A MEKA ARFF of 40 training rows, a CSV of 9 new rows (features only, by name) and both arrays."""
    rng = np.random.default_rng(28)
    X = np.round(rng.normal(size=(40, 4)), 3)
    Y = (X[:, :3] + rng.normal(scale=0.6, size=(40, 3)) > 0).astype(int)
    Q = np.round(X[::-4] * 1.1 + 0.05, 3)  # near the training rows, none on one
    d = tmp_path_factory.mktemp("every-model")
    attributes = [f"@attribute {n} {{0,1}}" for n in LABELS] + [f"@attribute x{j} numeric" for j in range(4)]
    rows = [",".join(f"{v:g}" for v in np.concatenate([y, x])) for x, y in zip(X, Y, strict=True)]
    (d / "train.arff").write_text("@relation 'own: -C 3'\n" + "\n".join(attributes) + "\n@data\n"
                                  + "\n".join(rows) + "\n")
    (d / "rows.csv").write_text(",".join(f"x{j}" for j in range(4)) + "\n"
                                + "".join(",".join(f"{v:g}" for v in q) + "\n" for q in Q))
    return d, X, Y, Q


def _in_python(name, X, Y):
    """What ``mlneighbors fit NAME --k 3`` fits, built in Python: the default min-max scaler in
    front of ``make_model(name, k)``, seeded as the command line seeds (``--seed 0``)."""
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import MinMaxScaler

    model = make_model(name, K)
    seeds = {key: 0 for key in model.get_params() if key.endswith("random_state")}
    return make_pipeline(MinMaxScaler(), model.set_params(**seeds)).fit(X, Y)


@pytest.mark.parametrize("name", list_models())
def test_fit_then_predict_gives_what_python_gives(name, files, tmp_path, capsys):
    d, X, Y, Q = files
    model_file, out = tmp_path / "m.skops", tmp_path / "p.csv"
    assert main(["fit", name, str(d / "train.arff"), "--k", str(K), "--out", str(model_file), "--quiet"]) == 0
    assert main(["predict", str(model_file), str(d / "rows.csv"), "--out", str(out), "--scores", "--quiet"]) == 0, (
        capsys.readouterr().err)
    rows = list(csv.reader(out.open()))
    assert rows[0] == LABELS + [f"score:{n}" for n in LABELS] and len(rows) == 1 + len(Q)
    got = np.array(rows[1:], dtype=float)
    want = _in_python(name, X, Y)
    np.testing.assert_array_equal(got[:, :3], want.predict(Q))
    np.testing.assert_allclose(got[:, 3:], want.predict_proba(Q), rtol=1e-5, atol=1e-6)  # written with 6 digits

    loaded = mlneighbors.load(model_file)
    assert isinstance(loaded, mlneighbors.Pipeline) and loaded.label_names_ == LABELS
    np.testing.assert_array_equal(loaded.predict(Q), want.predict(Q))
    scores, labels = loaded.predict_top_k(Q, 3)
    proba = want.predict_proba(Q)
    order = np.argsort(-proba, axis=1, kind="stable")  # the documented ranking: equal scores, lower label first
    np.testing.assert_array_equal(labels, order)
    np.testing.assert_allclose(scores, np.take_along_axis(proba, order, axis=1), rtol=1e-12)


@pytest.mark.parametrize("extra", [["--scores"], ["--top-k", "2"]])
def test_a_pipeline_inside_a_pipeline_still_predicts(extra, files, tmp_path, capsys):
    """What ``fit blda-bknn`` wrote before it wrote one flat Pipeline: the scaler, then
    scikit-learn's Pipeline of BLDA and BKNN.  predict finds the model inside, and
    ``mlneighbors.load`` gives it ``predict_top_k``."""
    from sklearn.pipeline import Pipeline as SklearnPipeline
    from sklearn.preprocessing import MinMaxScaler

    from mlneighbors import BKNN, BLDA, Pipeline

    d, X, Y, Q = files
    model = Pipeline([("scale", MinMaxScaler()),
                      ("model", SklearnPipeline([("blda", BLDA()), ("bknn", BKNN(K))]))]).fit(X, Y)
    model.label_names_ = LABELS
    mlneighbors.save(model, tmp_path / "nested.skops")
    loaded = mlneighbors.load(tmp_path / "nested.skops")
    np.testing.assert_array_equal(loaded.predict_top_k(Q, 2)[1], np.argsort(-model.predict_proba(Q), axis=1,
                                                                            kind="stable")[:, :2])
    out = tmp_path / "p.csv"
    assert main(["predict", str(tmp_path / "nested.skops"), str(d / "rows.csv"), "--out", str(out), "--quiet",
                 *extra]) == 0, capsys.readouterr().err
    rows = list(csv.reader(out.open()))[1:]
    if extra[0] == "--scores":
        np.testing.assert_array_equal(np.array(rows, dtype=float)[:, :3], model.predict(Q))
    else:
        _, want = loaded.predict_top_k(Q, 2)
        assert [[r[0], r[2]] for r in rows] == [[LABELS[j] for j in row] for row in want]


@pytest.mark.requires("hnswlib")
@pytest.mark.parametrize("name", list_models())
def test_fit_with_an_approximate_backend_says_what_it_searched_with(name, files, tmp_path, capsys):
    """``--backend`` replaces every exact search of the model; the line ``fit`` writes names it and
    its recall at the model's k (BKNN's is b per label; it has no n_neighbors_)."""
    d, *_ = files
    searches = [value for key, value in make_model(name).get_params(deep=True).items()
                if key == "backend" or key.endswith("__backend")]
    assert main(["fit", name, str(d / "train.arff"), "--k", str(K), "--backend", "hnswlib",
                 "--out", str(tmp_path / "m.skops")]) == 0, capsys.readouterr().err
    if "exact" in searches:  # the hybrid's own PCA-window search is not replaced
        assert f"neighbours: hnswlib, recall@{K} " in capsys.readouterr().out
