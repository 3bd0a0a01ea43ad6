"""Live models: after any interleaving of ``partial_fit`` and ``forget`` a model equals a refit on
the rows now (``clone(model).fit(rows_now, labels_now, ids=training_ids_)``), bit for bit:
predictions, scores, neighbours and every fitted table.  Every classifier of the registry."""

from __future__ import annotations

import importlib.util
import pickle
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import mlneighbors
import mlneighbors._updates
import mlneighbors.neighbors
from mlneighbors import MLkNN
from mlneighbors.neighbors import get_capabilities
from tests.neighbors._backends import APPROXIMATE, param
from tests.registry import classifiers, fresh

#: the state that may differ from a refit's: the index (rebuilt on use), measured recalls, lazily
#: made caches (the rows' norms of updates), and the neighbour lists' margin (compared on their
#: first k entries below)
_NOT_COMPARED = {"_index", "_recall", "_low_recall_share", "_zero_order", "_loo_idx", "_loo_dist", "_live_sq",
                 "_buffers"}


def _make(kind, n, rng, L=4):
    if kind == "ties":  # duplicated rows and ties at the k-th place everywhere
        X = rng.integers(0, 3, (n, 3)).astype(np.float64)
    elif kind == "float32":
        X = rng.standard_normal((n, 6)).astype(np.float32)
    elif kind == "csr":
        X = sp.random(n, 30, density=0.2, format="csr", random_state=rng, data_rvs=lambda m: rng.integers(1, 3, m))
        X = X.astype(np.float64)
    else:
        X = rng.standard_normal((n, 6))
    Y = (rng.random((n, L)) < 0.3).astype(np.int64)
    Y[:, -1] = 0  # a label nobody carries at first: it appears with the added rows, then vanishes
    return X, Y


def _vstack(A, B):
    return sp.vstack([A, B], format="csr") if sp.issparse(A) else np.concatenate([A, B])


def _assert_same_state(live, refit, Q):
    assert np.array_equal(live.training_ids_, refit.training_ids_)
    for method in ("predict", "predict_proba", "decision_function"):
        if hasattr(refit, method):
            np.testing.assert_array_equal(getattr(live, method)(Q), getattr(refit, method)(Q), err_msg=method)
    for a, b in zip(live.kneighbors(Q), refit.kneighbors(Q), strict=True):
        np.testing.assert_array_equal(a, b)
    if "_loo_idx" in refit.__dict__:
        k = refit.n_neighbors_
        np.testing.assert_array_equal(live._loo_idx[:, :k], refit._loo_idx[:, :k])
        np.testing.assert_array_equal(live._loo_dist[:, :k], refit._loo_dist[:, :k])
    assert set(live.__dict__) - _NOT_COMPARED == set(refit.__dict__) - _NOT_COMPARED
    for name, value in refit.__dict__.items():
        if name in _NOT_COMPARED:
            continue
        mine = live.__dict__[name]
        if sp.issparse(value):
            assert sp.issparse(mine) and (mine != value).nnz == 0 and mine.dtype == value.dtype, name
        elif isinstance(value, np.ndarray):
            assert isinstance(mine, np.ndarray) and mine.dtype == value.dtype, name
            np.testing.assert_array_equal(mine, value, err_msg=name)
        elif isinstance(value, tuple) and value and isinstance(value[0], np.ndarray):
            for p, q in zip(mine, value, strict=True):
                np.testing.assert_array_equal(p, q, err_msg=name)
        elif isinstance(value, list) and value and isinstance(value[0], np.ndarray):
            for p, q in zip(mine, value, strict=True):
                np.testing.assert_array_equal(p, q, err_msg=name)
        elif not hasattr(value, "__dict__"):
            assert mine == value, name


@pytest.mark.parametrize("kind", ["dense", "ties", "csr", "float32"])
@pytest.mark.parametrize("model", classifiers())
def test_adds_and_forgets_equal_a_refit(model, kind):
    rng = np.random.default_rng(abs(hash((kind, type(model).__name__))) % 2**32)
    X, Y = _make(kind, 40, rng)
    ids = np.arange(100, 140)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        live = fresh(model).fit(X, Y, ids=ids)
        for step in range(6):
            if step % 2 == 0:  # add 1 to 9 rows (one row too: scikit-learn's validation wants two)
                m = int(rng.integers(1, 10))
                Xa, Ya = _make(kind, m, rng)
                if step == 2:
                    Ya[:, -1] = 1  # the empty label appears
                if kind == "ties":
                    Xa[0] = X[int(rng.integers(len(ids)))]  # a duplicate of a training row
                new_ids = np.arange(ids.max() + 1, ids.max() + 1 + m)
                live.partial_fit(Xa, Ya, ids=new_ids)
                X, Y, ids = _vstack(X, Xa), np.concatenate([Y, Ya]), np.concatenate([ids, new_ids])
            else:  # forget a few, at random (the rows that carry the new label at step 3)
                gone = ids[Y[:, -1] == 1] if step == 3 else rng.choice(ids, int(rng.integers(1, 6)), replace=False)
                live.forget(gone)
                keep = ~np.isin(ids, gone)
                X, Y, ids = X[keep], Y[keep], ids[keep]
            refit = fresh(model).fit(X, Y, ids=ids)
            Q, _ = _make(kind, 15, rng)
            _assert_same_state(live, refit, _vstack(Q, X[:5]))


@pytest.mark.parametrize("model", classifiers())
def test_partial_fit_default_ids_and_an_unfitted_model(model):
    rng = np.random.default_rng(0)
    X, Y = _make("dense", 30, rng)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        live = fresh(model).partial_fit(X[:20], Y[:20])  # unfitted: a fit
        live.partial_fit(X[20:], Y[20:])
        refit = fresh(model).fit(X, Y)
    assert live.training_ids_.tolist() == list(range(30))
    _assert_same_state(live, refit, X[:7])


@pytest.mark.parametrize("model", classifiers(lambda m: type(m).update_rule == "refit"))
def test_models_that_refit_say_so(model):
    """BKNN, LAML-kNN and HybridKNN learn from all rows at once: their update_rule says that
    partial_fit and forget refit, and the docstring of the class names the reason."""
    assert type(model).update_rule == "refit"
    source = type(model).__dict__
    assert "update_rule" in source  # declared by the class itself, not inherited by accident


def test_the_exact_models_declare_it():
    exact = {type(p.values[0]).__name__ for p in classifiers(lambda m: type(m).update_rule == "exact")}
    assert exact == {"MLkNN", "BRkNN", "LPkNN", "DMLkNN"}


def test_unknown_or_repeated_ids_change_nothing():
    rng = np.random.default_rng(1)
    X, Y = _make("dense", 30, rng)
    model = MLkNN(4).fit(X, Y, ids=[f"row-{i}" for i in range(30)])
    before = pickle.dumps(model)
    with pytest.raises(ValueError, match="'row-99' is not among the model's training_ids_"):
        model.forget(["row-1", "row-99"])
    with pytest.raises(ValueError, match="'row-2' is given more than once"):
        model.forget(["row-2", "row-2"])
    with pytest.raises(ValueError, match="'row-3' is already a training identifier"):
        model.partial_fit(X[:2], Y[:2], ids=["new", "row-3"])
    with pytest.raises(ValueError, match="give ids= for the new rows"):
        model.partial_fit(X[:2], Y[:2])
    with pytest.raises(ValueError, match="must be strings"):
        model.partial_fit(X[:2], Y[:2], ids=[7, 8])
    with pytest.raises(ValueError, match="3 labels, the model 4"):
        model.partial_fit(X[:2], Y[:2, :3], ids=["a", "b"])
    with pytest.raises(ValueError, match="features"):
        model.partial_fit(X[:2, :3], Y[:2], ids=["a", "b"])
    assert pickle.dumps(model) == before


def test_class_targets_follow_their_classes():
    """A 1-D target: a class that appears or vanishes changes classes_, as a refit's."""
    rng = np.random.default_rng(2)
    X = rng.standard_normal((40, 3))
    y = np.array(["a", "b"] * 20)
    live = MLkNN(3).fit(X, y)
    Xa = rng.standard_normal((3, 3))
    live.partial_fit(Xa, ["c", "a", "c"])
    X2, y2 = np.vstack([X, Xa]), np.concatenate([y, ["c", "a", "c"]])
    refit = MLkNN(3).fit(X2, y2)
    assert live.classes_.tolist() == ["a", "b", "c"]
    _assert_same_state(live, refit, X[:5])
    live.forget([40, 42])
    refit = MLkNN(3).fit(X2[[i for i in range(43) if i not in (40, 42)]], np.delete(y2, [40, 42]),
                         ids=[i for i in range(43) if i not in (40, 42)])
    assert live.classes_.tolist() == ["a", "b"]
    _assert_same_state(live, refit, X[:5])


@pytest.mark.parametrize("model", classifiers())
def test_forgotten_means_gone(model, tmp_path):
    """After forget, neither the model nor its saved file holds the forgotten rows: their
    feature values (unique random numbers), their identifiers, or their neighbour lists."""
    rng = np.random.default_rng(5)
    X, Y = _make("dense", 40, rng)
    ids = np.array([f"person-{i:03d}" for i in range(40)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        live = fresh(model).fit(X, Y, ids=ids)
        live.predict(X[:3])  # the index built and used before the forget
        gone = ids[[3, 17, 29]]
        live.forget(gone)
    secrets = [X[i].tobytes() for i in (3, 17, 29)] + [X[i, 2:4].tobytes() for i in (3, 17, 29)]
    secrets += [g.encode() for g in gone] + [g.encode("utf-32-le") for g in gone]
    blobs = [pickle.dumps(live)]
    loaded = pickle.loads(blobs[0])
    if importlib.util.find_spec("skops") is not None:  # the persist extra: the file too
        path = tmp_path / "model.skops"
        mlneighbors.save(live, path)
        blobs.append(path.read_bytes())
        loaded = mlneighbors.load(path)
    for blob in blobs:
        for secret in secrets:
            assert secret not in blob
    values = set(np.asarray(loaded._fit_X).ravel().tolist())
    assert not values & set(X[[3, 17, 29]].ravel().tolist())
    assert not set(gone) & set(loaded.training_ids_.tolist())
    if "_loo_idx" in loaded.__dict__:
        assert loaded._loo_idx.max() < 37


def _interleave(make_model, kind="ties", seed=7, steps=4):
    """A model driven through adds and forgets, and the refits it must equal at each step."""
    rng = np.random.default_rng(seed)
    X, Y = _make(kind, 50, rng)
    ids = np.arange(50)
    live = make_model().fit(X, Y)
    for step in range(steps):
        if step % 2 == 0:
            Xa, Ya = _make(kind, 6, rng)
            Xa[0] = X[3] if not sp.issparse(X) else Xa[0]
            live.partial_fit(Xa, Ya)
            X, Y, ids = _vstack(X, Xa), np.concatenate([Y, Ya]), np.concatenate([ids, ids.max() + 1 + np.arange(6)])
        else:
            gone = rng.choice(ids, 4, replace=False)
            live.forget(gone)
            keep = ~np.isin(ids, gone)
            X, Y, ids = X[keep], Y[keep], ids[keep]
        yield live, make_model().fit(X, Y, ids=ids), X


EXACT_BACKENDS = [
    pytest.param(lambda: "exact", id="exact"),
    pytest.param(lambda: mlneighbors.neighbors.ShardedIndex(mlneighbors.neighbors.ExactIndex(), n_shards=3),
                 id="sharded-exact"),
    pytest.param(lambda: pytest.importorskip("torch") and "torch", id="torch"),
]


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("backend", EXACT_BACKENDS)
@pytest.mark.parametrize("cls", [MLkNN, mlneighbors.DMLkNN, mlneighbors.BRkNN, mlneighbors.LPkNN])
def test_every_exact_backend_equals_its_refit(cls, backend):
    chosen = backend()
    for live, refit, X in _interleave(lambda: cls(n_neighbors=4, backend=chosen)):
        _assert_same_state(live, refit, X[:12])
        # and the same numbers as the default engine's refit
        engine = cls(n_neighbors=4).fit(X, refit._Y)
        np.testing.assert_array_equal(live.predict_proba(X[:12]), engine.predict_proba(X[:12]))
        np.testing.assert_array_equal(live.kneighbors(X[:12])[1], engine.kneighbors(X[:12])[1])


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("metric", ["euclidean", "cosine"])
@pytest.mark.parametrize("kind", ["dense", "ties", "csr", "float32"])
def test_a_large_batch_equals_a_refit(kind, metric, monkeypatch):
    """More rows at once than the kernel answers alone (their lists then come from the exact
    engine among the old rows, merged with their lists among themselves), and a forget that
    empties whole lists (the rows of one place), searched again."""
    rng = np.random.default_rng(11)
    X, Y = _make(kind, 120, rng)
    make = lambda: MLkNN(5, metric=metric)  # noqa: E731
    live = make().fit(X, Y)
    Xa, Ya = _make(kind, 70, rng)
    live.partial_fit(Xa, Ya)
    X, Y = _vstack(X, Xa), np.concatenate([Y, Ya])
    _assert_same_state(live, make().fit(X, Y), X[:20])
    # forget a row and its 60 nearest: the lists of rows around them lose more than their margin
    near = MLkNN(60, metric=metric).fit(X, Y).kneighbors(X[7:8])[1][0]
    gone = np.union1d(near, [7])
    searched = []
    lists_of = mlneighbors._updates._lists_of
    monkeypatch.setattr(mlneighbors._updates, "_lists_of", lambda X, q, *a, **kw: searched.append(len(q))
                        or lists_of(X, q, *a, **kw))
    live.forget(gone)
    if kind != "ties":  # (on the grid every row keeps duplicates enough)
        assert sum(searched) > 0  # rows whose lists ran short were searched again
    keep = ~np.isin(np.arange(X.shape[0]), gone)
    _assert_same_state(live, make().fit(X[keep], Y[keep], ids=np.flatnonzero(keep)), X[:20])


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("name", [param(name, skip_absent=True) for name in APPROXIMATE])
def test_approximate_backends_add_into_their_index_and_forget_by_a_rebuild(name, tmp_path):
    """Adds go into the library's index where it declares ``adds_rows`` (HNSW graphs, IVF
    lists), its recall measured again; the new rows' lists are exact.  A forget rebuilds the
    index from the rows left on its next use, so what is saved holds no forgotten vector."""
    rng = np.random.default_rng(3)
    X = rng.standard_normal((700, 8))
    Y = (X[:, :4] > 0).astype(int)
    model = MLkNN(5, backend=name).fit(X[:600], Y[:600])
    index = model._index
    model.partial_fit(X[600:], Y[600:])
    if get_capabilities(index).adds_rows:
        assert model._index is index and index.n_samples_fit_ == 700
        assert model.recall_ == index.recall_ and 0.5 < model.recall_ <= 1.0
    else:
        assert "_index" not in model.__dict__
    exact = MLkNN(5).fit(X, Y)
    np.testing.assert_array_equal(model._loo_idx[600:, :5], exact._loo_idx[600:, :5])
    np.testing.assert_array_equal(model._loo_dist[600:, :5], exact._loo_dist[600:, :5])
    model.forget(np.arange(40))
    assert "_index" not in model.__dict__
    model.predict(X[:3])  # built again, on the 660 rows left
    path = tmp_path / "model.skops"
    mlneighbors.save(model, path, include_index=True)
    loaded = mlneighbors.load(path)
    assert loaded._get_index().n_samples_fit_ == 660
    np.testing.assert_array_equal(loaded.predict(X[:50]), model.predict(X[:50]))


@pytest.mark.parametrize("method", ["partial_fit", "forget"])
@pytest.mark.parametrize("cls", [MLkNN, mlneighbors.BRkNN, mlneighbors.DMLkNN])
def test_an_update_that_fails_leaves_the_model_as_it_was(cls, method, monkeypatch):
    """An error at the last step of an update (memory, an interrupt) leaves every array of the
    model as it was, bit for bit, even after a stream of single rows (written in place)."""
    rng = np.random.default_rng(4)
    X, Y = _make("dense", 60, rng)
    model = cls(n_neighbors=4).fit(X[:50], Y[:50])
    for i in range(50, 58):  # the arrays now have room to spare: rows are written in place
        model.partial_fit(X[i : i + 1], Y[i : i + 1])
    before = pickle.dumps(model)

    def fail(self, delta):
        raise MemoryError("no room")

    monkeypatch.setattr(cls, "_update_labels", fail)
    with pytest.raises(MemoryError):
        if method == "partial_fit":
            model.partial_fit(X[58:], Y[58:])
        else:
            model.forget([3, 51])
    assert pickle.dumps(model) == before


@pytest.mark.parametrize("metric", ["euclidean", "cosine"])
def test_lists_from_the_engine_equal_the_kernels(metric):
    """Many rows' lists come from the exact engine, a few from the kernel: the same lists."""
    from mlneighbors.neighbors._internal import exact_lists

    X = np.random.default_rng(0).integers(0, 3, (300, 4)).astype(float)  # ties everywhere
    rows = np.arange(0, 300, 5)
    assert len(rows) > mlneighbors._updates._KERNEL_ROWS
    for got, want in zip(mlneighbors._updates._lists_of(X, rows, 12, metric), exact_lists(X, rows, 12, metric),
                         strict=True):
        np.testing.assert_array_equal(got, want)


def test_the_callers_arrays_are_never_written():
    """A model fitted on the caller's array holds it without a copy; updates (rows written in
    place into buffers) never write into it."""
    rng = np.random.default_rng(9)
    X, Y = _make("dense", 50, rng)
    X0, Y0 = X.copy(), Y.copy()
    model = MLkNN(4).fit(X, Y)
    for _ in range(5):
        Xa, Ya = _make("dense", 1, rng)
        model.partial_fit(Xa, Ya)
    model.forget([0, 1, 51])
    model.partial_fit(*_make("dense", 3, rng))
    np.testing.assert_array_equal(X, X0)
    np.testing.assert_array_equal(Y, Y0)
