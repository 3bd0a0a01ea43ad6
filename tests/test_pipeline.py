"""The package's Pipeline (what ``mlneighbors fit`` saves): predict_top_k after the transforms,
saved and loaded as a trusted type; older files holding scikit-learn's Pipeline gain it on load.
Importing skops for saving and loading does not import torch."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.pipeline import Pipeline as SklearnPipeline
from sklearn.preprocessing import MinMaxScaler, StandardScaler

import mlneighbors
from mlneighbors import BLDA, MLkNN, Pipeline
from mlneighbors.cli import main

from .registry import classifiers

sio = pytest.importorskip("skops.io")


@pytest.fixture
def data(rng):
    X = rng.normal(size=(60, 5)) * [1, 10, 100, 1, 1]
    Y = (X[:, :4] / [1, 10, 100, 1] + rng.normal(scale=0.5, size=(60, 4)) > 0).astype(np.int64)
    return X, Y, rng.normal(size=(12, 5)) * [1, 10, 100, 1, 1]


@pytest.mark.parametrize("model", classifiers())
def test_top_k_is_the_final_models_after_the_transforms(model, data):
    X, Y, Q = data
    pipe = Pipeline([("scale", StandardScaler()), ("model", clone(model))]).fit(X, Y)
    scaler = StandardScaler().fit(X)
    alone = clone(model).fit(scaler.transform(X), Y)
    got, want = pipe.predict_top_k(Q, 3), alone.predict_top_k(scaler.transform(Q), 3)
    np.testing.assert_array_equal(got[1], want[1])
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(pipe.predict(Q), alone.predict(scaler.transform(Q)))


def test_no_top_k_where_the_final_step_has_none(data):
    X, Y, _ = data
    pipe = Pipeline([("scale", MinMaxScaler()), ("blda", BLDA())]).fit(X, Y)
    assert not hasattr(pipe, "predict_top_k")


def test_what_fit_saves_ranks_labels_after_load(data, tmp_path, capsys):
    X, Y, Q = data
    path = tmp_path / "d.csv"
    names = [f"x{j}" for j in range(5)] + ["a", "b", "c", "d"]
    rows = [",".join(names)] + [",".join(f"{v:.17g}" for v in row) for row in np.column_stack([X, Y])]
    path.write_text("\n".join(rows) + "\n")
    model_file = tmp_path / "m.skops"
    assert main(["fit", "mlknn", str(path), "--label-columns", "a,b,c,d", "--out", str(model_file), "--quiet"]) == 0
    for loaded in (mlneighbors.load(model_file), sio.load(model_file, trusted=mlneighbors.TRUSTED_TYPES)):
        assert type(loaded) is Pipeline and loaded.label_names_ == ["a", "b", "c", "d"]
        scores, labels = loaded.predict_top_k(Q, 2)
        want = Pipeline([("scale", MinMaxScaler()), ("model", MLkNN())]).fit(X, Y).predict_top_k(Q, 2)
        np.testing.assert_array_equal(labels, want[1])
        np.testing.assert_allclose(scores, want[0])
    # beside scikit-learn's own types, only TRUSTED_TYPES
    assert set(sio.get_untrusted_types(file=model_file)) <= set(mlneighbors.TRUSTED_TYPES)
    assert "mlneighbors.pipeline.Pipeline" in mlneighbors.TRUSTED_TYPES


def test_an_older_file_with_sklearns_pipeline_loads_and_ranks(data, tmp_path):
    """What ``mlneighbors fit`` wrote before: scikit-learn's Pipeline, loaded as the package's."""
    X, Y, Q = data
    old = SklearnPipeline([("scale", MinMaxScaler()), ("model", MLkNN(3))]).fit(X, Y)
    old.label_names_ = ["a", "b", "c", "d"]
    path = tmp_path / "old.skops"
    sio.dump(old, path)
    loaded = mlneighbors.load(path)
    assert type(loaded) is Pipeline and loaded.label_names_ == old.label_names_
    np.testing.assert_array_equal(loaded.predict(Q), old.predict(Q))
    np.testing.assert_array_equal(loaded.predict_top_k(Q, 2)[1], old[-1].predict_top_k(old[:-1].transform(Q), 2)[1])
    other = SklearnPipeline([("scale", MinMaxScaler()), ("blda", BLDA())]).fit(X, Y)  # ranks nothing: as it was
    sio.dump(other, tmp_path / "blda.skops")
    assert type(mlneighbors.load(tmp_path / "blda.skops")) is SklearnPipeline


_PROBE = """
import json, sys
from mlneighbors.cli import main
data, out = sys.argv[1], sys.argv[2]
assert main(["fit", "mlknn", data, "--label-columns", "a", "--out", out, "--quiet"]) == 0
assert main(["predict", out, data, "--label-columns", "a", "--out", out + ".csv", "--quiet"]) == 0
import skops.io._trusted_types as t
print(json.dumps({"torch": "torch" in sys.modules, "dask": "dask" in sys.modules,
                  "types": sorted(t.SKLEARN_ESTIMATOR_TYPE_NAMES)}))
"""


def _probe(tmp_path, code):
    path = tmp_path / "d.csv"
    path.write_text("x,a\n" + "".join(f"{i / 10},{i % 2}\n" for i in range(12)))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.run([sys.executable, "-c", code, str(path), str(tmp_path / "m.skops")],
                          capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.splitlines()[-1])


def test_fit_and_predict_do_not_import_torch(tmp_path):
    """skops lists scikit-learn's estimators by walking its packages, which imports the array-API
    adapters for torch and dask: refused while skops is imported (mlneighbors._imports)."""
    pytest.importorskip("torch")
    got = _probe(tmp_path, _PROBE)
    assert got["torch"] is False and got["dask"] is False
    assert len(got["types"]) > 100


@pytest.mark.slow
def test_skops_trusts_the_same_types_without_torch(tmp_path):
    """The list of trusted scikit-learn types is the same as after a plain ``import skops.io``."""
    pytest.importorskip("torch")
    ours = _probe(tmp_path, _PROBE)
    plain = _probe(tmp_path, "import skops.io\n" + _PROBE)  # imported first, the plain way: torch comes in
    assert plain["torch"] is True
    assert ours["types"] == plain["types"]
