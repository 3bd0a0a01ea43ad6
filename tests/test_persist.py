"""Saving and loading: skops files that build only trusted types, pickle and joblib too."""

from __future__ import annotations

import json
import pickle
import zipfile

import joblib
import numpy as np
import pytest
from sklearn.base import clone
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import MinMaxScaler

import mlneighbors
from mlneighbors import BKNN, BLDA, MLkNN
from mlneighbors.exceptions import ModelFileError, VersionWarning
from mlneighbors.neighbors import BACKENDS, ExactIndex, NeighborCache, ShardedIndex, get_capabilities, get_index

from .neighbors._backends import param, require
from .registry import models

sio = pytest.importorskip("skops.io")

#: every model of the registry, and a Pipeline of a scaler, the BLDA projection and BKNN
MODELS = models() + [pytest.param(Pipeline([("scale", MinMaxScaler()), ("blda", BLDA()), ("bknn", BKNN(2))]),
                                  id="scale-blda-bknn")]


def _outputs(model, Q):
    """What a fitted model answers: its predictions and scores, or its projection."""
    if hasattr(model, "predict"):
        return [model.predict(Q), model.predict_proba(Q)]
    return [model.transform(Q)]


@pytest.fixture
def data(rng):
    X = rng.normal(size=(60, 5))
    Y = (X[:, :4] + rng.normal(scale=0.5, size=(60, 4)) > 0).astype(np.int64)
    return X, Y, rng.normal(size=(12, 5))


@pytest.mark.parametrize("model", MODELS)
def test_save_and_load_predict_identically(model, data, tmp_path):
    X, Y, Q = data
    model = clone(model).fit(X, Y)
    path = tmp_path / "model.skops"
    mlneighbors.save(model, path)
    assert sio.get_untrusted_types(file=path) == sorted(
        t for t in sio.get_untrusted_types(file=path) if t in mlneighbors.TRUSTED_TYPES
    )  # every type skops does not trust by itself is one of ours
    for loaded in (mlneighbors.load(path), sio.load(path, trusted=mlneighbors.TRUSTED_TYPES)):
        for got, want in zip(_outputs(loaded, Q), _outputs(model, Q), strict=True):
            np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("model", models())
def test_a_model_of_sparse_rows_saves_too(model, data, tmp_path):
    import scipy.sparse as sp

    X, Y, Q = data
    X, Q = sp.csr_matrix(np.where(X > 0.3, X, 0)), sp.csr_matrix(np.where(Q > 0.3, Q, 0))
    model = clone(model).fit(X, Y)
    mlneighbors.save(model, tmp_path / "m.skops")
    for got, want in zip(_outputs(mlneighbors.load(tmp_path / "m.skops"), Q), _outputs(model, Q), strict=True):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("model", MODELS)
def test_pickle_and_joblib_keep_working(model, data, tmp_path):
    X, Y, Q = data
    model = clone(model).fit(X, Y)
    joblib.dump(model, tmp_path / "m.joblib")
    for loaded in (pickle.loads(pickle.dumps(model)), joblib.load(tmp_path / "m.joblib")):
        for got, want in zip(_outputs(loaded, Q), _outputs(model, Q), strict=True):
            np.testing.assert_array_equal(got, want)


def _index_objects():
    """The name of every registered backend whose index a model takes as an object (one on a
    Dask cluster needs a cluster: tests/test_dask.py; the PCA window is HybridKNN's), and the
    sharded wrapper around the exact one: from the registry, each skipped where its library
    (its class's ``module``) is absent."""
    out = [param(name) for name in BACKENDS
           if name != "pca-window" and not get_capabilities(get_index(name)).dask_arrays]
    return out + [pytest.param("sharded", id="sharded")]


@pytest.mark.parametrize("name", _index_objects())
def test_a_model_given_an_index_object_saves_and_loads(name, data, tmp_path):
    """An index object as ``backend=`` is one of the trusted types: the file loads, and the
    object in it is unbuilt (its parameters), whatever state the object the model was given had."""
    X, Y, Q = data
    if name == "sharded":
        index = ShardedIndex(ExactIndex(), n_shards=2)
    else:
        require(name)
        index = get_index(name)
    built = clone(index).build(X)  # a built object given as backend is saved unbuilt
    for backend in (index, built):
        model = MLkNN(3, backend=backend).fit(X, Y)
        path = tmp_path / "model.skops"
        mlneighbors.save(model, path)
        loaded = mlneighbors.load(path)
        np.testing.assert_array_equal(loaded.predict(Q), model.predict(Q))
        assert type(loaded.backend) is type(index) and repr(loaded.backend) == repr(index)
        assert not hasattr(loaded.backend, "n_samples_fit_")


def test_a_file_with_a_built_index_object_is_refused(data, tmp_path):
    """A file whose index object holds more than its parameters (a built index, as no file
    written by save holds) is refused before anything of it is built."""
    X, Y, _ = data
    path = tmp_path / "model.skops"
    mlneighbors.save(MLkNN(3, backend=ExactIndex()).fit(X, Y), path)
    with zipfile.ZipFile(path) as archive:
        files = {name: archive.read(name) for name in archive.namelist()}
    schema = json.loads(files["schema.json"])
    backend = schema["content"]["content"]["backend"]
    assert backend["__class__"] == "ExactIndex"
    params = backend["content"]["content"]
    params["_X"] = params["metric"]  # any state beside the parameters
    files["schema.json"] = json.dumps(schema).encode()
    forged = tmp_path / "forged.skops"
    with zipfile.ZipFile(forged, "w") as archive:
        for name, content in files.items():
            archive.writestr(name, content)
    with pytest.raises(ModelFileError, match=r"forged.skops holds a ExactIndex with more than its parameters \(_X\)"):
        mlneighbors.load(forged)


def test_a_model_with_a_neighbor_cache_is_refused_at_save(data, tmp_path):
    X, Y, Q = data
    path = tmp_path / "model.skops"
    path.write_bytes(b"an older file")
    cache = NeighborCache(k_max=5)
    pipe = Pipeline([("scale", MinMaxScaler()), ("model", MLkNN(3, backend=cache))]).fit(X, Y)
    for model, key in ((pipe["model"], "backend"), (pipe, "model__backend")):
        with pytest.raises(ValueError, match=f"parameter '{key}' is a NeighborCache.*set_params\\({key}='exact'\\)"):
            mlneighbors.save(model, path)
        assert path.read_bytes() == b"an older file"  # nothing written
    pipe.set_params(model__backend="exact")  # what the message says to do
    mlneighbors.save(pipe, path)
    np.testing.assert_array_equal(mlneighbors.load(path).predict(Q), pipe.predict(Q))


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


def test_a_file_naming_an_index_class_by_its_former_module_is_trusted():
    # the approximate backends lived in one module, mlneighbors.neighbors._approximate, before
    # it became a package of one module per library: files written then name them so
    from mlneighbors.neighbors import _approximate

    moved = [getattr(_approximate, name) for name in _approximate.__all__ if name != "ApproximateIndex"]
    assert len(moved) == 5  # the classes of the old module, which its package still exports
    for cls in moved:
        assert f"mlneighbors.neighbors._approximate.{cls.__name__}" in mlneighbors.TRUSTED_TYPES
        assert f"mlneighbors.neighbors.{cls.__name__}" in mlneighbors.TRUSTED_TYPES
