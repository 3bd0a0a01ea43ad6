"""Saving and loading: skops files that build only trusted types, pickle and joblib too."""

from __future__ import annotations

import pickle

import joblib
import numpy as np
import pytest
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import MinMaxScaler

import mlneighbors
from mlneighbors import BKNN, BLDA, BRkNN, DMLkNN, HybridKNN, LAMLkNN, LPkNN, MLkNN
from mlneighbors.exceptions import ModelFileError, VersionWarning

sio = pytest.importorskip("skops.io")

MODELS = [
    MLkNN(3), BRkNN(3, extension="b"), LPkNN(3), DMLkNN(3, delta=1), LAMLkNN(3, n_clusters=2, random_state=0),
    BKNN(2), HybridKNN(3, n_candidates=10), HybridKNN(3, backend="exact"),
    Pipeline([("scale", MinMaxScaler()), ("blda", BLDA()), ("bknn", BKNN(2))]),
]


@pytest.fixture
def data(rng):
    X = rng.normal(size=(60, 5))
    Y = (X[:, :4] + rng.normal(scale=0.5, size=(60, 4)) > 0).astype(np.int64)
    return X, Y, rng.normal(size=(12, 5))


@pytest.mark.parametrize("model", MODELS, ids=repr)
def test_save_and_load_predict_identically(model, data, tmp_path):
    X, Y, Q = data
    model = model.fit(X, Y)
    path = tmp_path / "model.skops"
    mlneighbors.save(model, path)
    assert sio.get_untrusted_types(file=path) == sorted(
        t for t in sio.get_untrusted_types(file=path) if t in mlneighbors.TRUSTED_TYPES
    )  # every type skops does not trust by itself is one of ours
    for loaded in (mlneighbors.load(path), sio.load(path, trusted=mlneighbors.TRUSTED_TYPES)):
        np.testing.assert_array_equal(loaded.predict(Q), model.predict(Q))
        np.testing.assert_array_equal(loaded.predict_proba(Q), model.predict_proba(Q))


@pytest.mark.parametrize("model", [MLkNN(3), BKNN(2), HybridKNN(3, backend="exact")], ids=repr)
def test_a_model_of_sparse_rows_saves_too(model, data, tmp_path):
    import scipy.sparse as sp

    X, Y, Q = data
    X, Q = sp.csr_matrix(np.where(X > 0.3, X, 0)), sp.csr_matrix(np.where(Q > 0.3, Q, 0))
    model = model.fit(X, Y)
    mlneighbors.save(model, tmp_path / "m.skops")
    np.testing.assert_array_equal(mlneighbors.load(tmp_path / "m.skops").predict_proba(Q), model.predict_proba(Q))


@pytest.mark.parametrize("model", MODELS[:2] + MODELS[5:6], ids=repr)
def test_pickle_and_joblib_keep_working(model, data, tmp_path):
    X, Y, Q = data
    model = model.fit(X, Y)
    joblib.dump(model, tmp_path / "m.joblib")
    for loaded in (pickle.loads(pickle.dumps(model)), joblib.load(tmp_path / "m.joblib")):
        np.testing.assert_array_equal(loaded.predict_proba(Q), model.predict_proba(Q))


def test_saving_leaves_the_model_as_it_was(data):
    X, Y, _ = data
    model = MLkNN(3).fit(X, Y)
    index = model._get_index()
    before = dict(vars(model))
    pickle.dumps(model)
    assert vars(model).keys() == before.keys()  # no version stamp added, the built index kept
    assert model._index is index


class NotOurs:
    """A type nobody trusted."""

    def __init__(self):
        self.value = 1


def test_a_file_with_an_untrusted_type_is_refused(tmp_path):
    path = tmp_path / "evil.skops"
    sio.dump({"model": NotOurs()}, path)
    with pytest.raises(ModelFileError, match=r"holds a type outside mlneighbors.TRUSTED_TYPES .*\.NotOurs"):
        mlneighbors.load(path)


@pytest.mark.parametrize("how", ["pickle", "skops"])
def test_a_model_saved_by_another_version_says_which(how, data, monkeypatch):
    X, Y, Q = data
    dumps, loads = (pickle.dumps, pickle.loads) if how == "pickle" else (
        sio.dumps, lambda b: sio.loads(b, trusted=mlneighbors.TRUSTED_TYPES))
    blob = dumps(MLkNN(3).fit(X, Y))
    saved = mlneighbors.__version__
    monkeypatch.setattr(mlneighbors, "__version__", "9.9.9")
    with pytest.warns(VersionWarning, match=f"saved by mlneighbors {saved} and is loaded by mlneighbors 9.9.9"):
        loaded = loads(blob)
    assert loaded.predict(Q).shape == (len(Q), Y.shape[1])


def test_saving_is_whole_or_nothing(data, tmp_path):
    X, Y, _ = data
    path = tmp_path / "model.skops"
    path.write_bytes(b"an older file")
    with pytest.raises(TypeError):
        mlneighbors.save((x for x in []), path)  # a generator: skops cannot save it
    assert path.read_bytes() == b"an older file"
    assert [p.name for p in tmp_path.iterdir()] == ["model.skops"]
