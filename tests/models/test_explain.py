"""``explain``: for every model of the registry, the explanation's terms reproduce ``predict`` and
``predict_proba`` exactly; the neighbours are named by the identifiers given at fit; the frame and
the JSON hold the same numbers."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.preprocessing import MinMaxScaler

from mlneighbors import BKNN, BLDA, MLkNN, Pipeline
from mlneighbors._explain import Explanation

from ..registry import classifiers
from .conftest import corner_data, to_format

pd = pytest.importorskip("pandas")


def _follows(e: Explanation, model) -> np.ndarray:
    """The predictions as the model's rule gives them from the terms alone (per model)."""
    t = e.terms
    name = type(model).__name__
    if name in ("MLkNN", "LAMLkNN", "DMLkNN"):
        return t["a"] >= t["b"]
    if name == "BRkNN":
        if model.extension == "b":
            return t["rank"] <= e.row_terms["m"][:, None]
        plain = t["share"] >= t["threshold"]
        return plain | t["fallback"] if model.extension == "a" else plain
    if name == "LPkNN":  # the label row of the neighbour holding the winning set
        return e.neighbor_labels[np.arange(len(e)), e.row_terms["winning_rank"] - 1].astype(bool)
    if name == "BKNN":
        return t["balanced_score"] > t["threshold"]
    if name in ("HybridKNN", "IBLRML"):
        return t["score"] >= t["threshold"]
    raise AssertionError(f"no rule known for {name}: add it here")


def _score_term(e: Explanation, model) -> np.ndarray:
    name = type(model).__name__
    key = {"MLkNN": "posterior", "LAMLkNN": "posterior", "DMLkNN": "posterior", "BKNN": "share"}.get(name, "score")
    return e.terms[key]


def _data(rng, n_test=15):
    """The corner data (a label nobody has, one with two members, empty rows, duplicate rows and
    a query on them), with features that follow the labels, so that every rule predicts some
    labels and leaves others out."""
    X, Y, Q = corner_data(rng, variant="empty", n_features=4, n_test=n_test, continuous=True)
    centres = rng.normal(scale=2.0, size=(Y.shape[1], X.shape[1]))
    X = Y @ centres + 0.3 * X
    X[5] = X[11] = X[3]
    Yq = (rng.random((len(Q), Y.shape[1])) < 0.3).astype(int)
    Q = Yq @ centres + 0.3 * Q
    Q[0] = X[3]
    return X, Y, Q


def _fit(model, X, Y, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # labels without members, k clipped: the corner data's purpose
        return clone(model).fit(X, Y, **kw)


@pytest.mark.parametrize("model", classifiers())
def test_terms_reproduce_predict_and_predict_proba(model, rng, fmt):
    X, Y, Q = _data(rng)
    fitted = _fit(model, to_format(X, fmt), Y)
    Qf = to_format(Q, fmt)
    e = fitted.explain(Qf)
    proba, pred = fitted.predict_proba(Qf), fitted.predict(Qf)
    assert e.scores.dtype == np.float64 and np.array_equal(e.scores, proba)  # bit for bit
    assert np.array_equal(_score_term(e, fitted), proba)
    assert np.array_equal(e.predictions, pred.astype(bool))
    assert np.array_equal(_follows(e, fitted), pred.astype(bool))
    # the rule must decide something in both directions here, or the check above says little
    assert pred.any() and not pred.all()
    for name, v in e.terms.items():
        assert v.shape == proba.shape, name


@pytest.mark.parametrize("model", classifiers())
def test_neighbours_are_the_models_named_by_training_ids(model, rng):
    X, Y, Q = _data(rng)
    ids = np.array([f"doc-{i:03d}" for i in range(len(X))])
    fitted = _fit(model, X, Y, ids=ids)
    e = fitted.explain(Q[:5])
    dist, idx = fitted.kneighbors(Q[:5])
    assert np.array_equal(e.rows, idx) and np.array_equal(e.distances, dist)
    found = idx >= 0
    assert e.ids.dtype.kind == "U" and np.array_equal(e.ids[found], ids[idx[found]])
    assert np.array_equal(e.neighbor_labels[found], Y[idx[found]])
    assert not e.neighbor_labels[~found].any()
    # integer identifiers stay integers
    int_ids = np.arange(len(X)) * 7 + 1000
    e = _fit(model, X, Y, ids=int_ids).explain(Q[:5])
    assert e.ids.dtype == np.int64 and np.array_equal(e.ids[found], int_ids[idx[found]])


@pytest.mark.parametrize("model", classifiers())
def test_json_and_frame_hold_the_same_numbers(model, rng):
    X, Y, Q = _data(rng)
    fitted = _fit(model, X, Y, ids=[f"r{i}" for i in range(len(X))])
    e = fitted.explain(Q[:4], label_names=[f"topic {j}" for j in range(Y.shape[1])])
    back = Explanation.from_dict(json.loads(e.to_json()))
    for name in ("ids", "rows", "distances", "neighbor_labels", "scores", "predictions"):
        assert np.array_equal(getattr(back, name), getattr(e, name)), name
    for group in ("terms", "row_terms", "neighbor_terms"):
        mine, theirs = getattr(e, group), getattr(back, group)
        assert list(mine) == list(theirs)
        for name in mine:
            assert np.array_equal(np.asarray(theirs[name], dtype=float), np.asarray(mine[name], dtype=float)), name
    assert (back.model, back.rule, back.label_names) == (e.model, e.rule, e.label_names)

    frame = e.to_frame()
    n, L = e.scores.shape
    assert len(frame) == n * L and list(frame.columns[:4]) == ["row", "label", "predicted", "score"]
    assert np.array_equal(frame["score"].to_numpy(), e.scores.ravel())
    assert np.array_equal(frame["predicted"].to_numpy(), e.predictions.ravel())
    for name, v in e.terms.items():
        assert np.array_equal(frame[name].to_numpy(), v.ravel()), name
    neighbours = e.to_frame("neighbors")
    assert len(neighbours) == int((e.rows >= 0).sum())
    assert np.array_equal(neighbours["distance"].to_numpy(), e.distances[e.rows >= 0])
    assert list(neighbours["id"]) == list(e.ids[e.rows >= 0])
    with pytest.raises(ValueError, match="what must be"):
        e.to_frame("everything")


def test_mlknn_terms_by_hand(rng):
    X, Y, Q = _data(rng)
    model = _fit(MLkNN(n_neighbors=4), X, Y)
    e = model.explain(Q[:3])
    _, idx = model.kneighbors(Q[:3])
    count = Y[idx].sum(axis=1)  # the loop-free twin: the neighbours' labels summed
    assert np.array_equal(e.terms["count"], count)
    cols = np.arange(Y.shape[1])
    assert np.array_equal(e.terms["likelihood_true"], model.cond_prob_true_[cols, count])
    a, b = e.terms["a"], e.terms["b"]
    assert np.allclose(e.terms["posterior"], a / (a + b))
    assert np.array_equal(e.terms["prior"], np.broadcast_to(model.prior_, a.shape))


def test_one_row_text_and_indexing(rng):
    X, Y, Q = _data(rng)
    e = _fit(MLkNN(n_neighbors=3), X, Y, ids=[f"id{i}" for i in range(len(X))]).explain(Q[:3])
    one = e[-1]
    assert len(one) == 1 and np.array_equal(one.scores, e.scores[2:]) and np.array_equal(one.ids, e.ids[2:])
    assert len(e[[0, 2]]) == 2
    with pytest.raises(IndexError):
        e[3]
    text = e.format(0)
    assert text.startswith("row 0: MLkNN predicts {") and "posterior" in text and e.ids[0, 0] in text
    assert str(e).count("\nneighbours:") == 3
    assert e.row(1)["neighbors"][0]["id"] == e.ids[1, 0]
    assert "3 row(s)" in repr(e)


def test_many_labels_text_shows_the_predicted_first(rng):
    X = rng.normal(size=(50, 3))
    Y = (rng.random((50, 30)) < 0.3).astype(int)
    e = _fit(MLkNN(n_neighbors=5), X, Y).explain(X[:1])
    text = e.format(max_labels=5)
    assert "... 25 more labels" in text
    shown = [line.split()[0] for line in text.splitlines()[5:10]]
    best = np.lexsort((np.arange(30), -e.scores[0], ~e.predictions[0]))[:5]
    assert shown == [e.label_names[j] for j in best]


@pytest.mark.parametrize("model", classifiers())
def test_class_targets_are_explained_as_their_columns(model, rng):
    X = rng.normal(size=(40, 3))
    y = np.array(["cat", "dog", "eel", "fox"])[rng.integers(0, 4, size=40)]
    fitted = _fit(model, X, y)
    Q = rng.normal(size=(6, 3))
    e = fitted.explain(Q)
    assert e.label_names == ["cat", "dog", "eel", "fox"]
    assert np.array_equal(e.scores, fitted.predict_proba(Q))
    assert np.array_equal(np.asarray(e.label_names)[e.predictions.argmax(axis=1)], fitted.predict(Q))
    assert (e.predictions.sum(axis=1) == 1).all()


def test_pipeline_explains_after_the_transforms(rng):
    X, Y, Q = _data(rng)
    X, Q = X * [1, 10, 100, 1000], Q * [1, 10, 100, 1000]
    pipe = Pipeline([("scale", MinMaxScaler()), ("blda", BLDA()), ("model", BKNN(n_per_label=3))])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pipe.fit(X, Y)
    pipe.label_names_ = [f"L{j}" for j in range(Y.shape[1])]
    e = pipe.explain(Q)
    assert e.label_names == pipe.label_names_
    assert np.array_equal(e.scores, pipe.predict_proba(Q))
    assert np.array_equal(e.predictions, pipe.predict(Q).astype(bool))
    Qt = pipe[:-1].transform(Q)
    assert np.array_equal(e.distances, pipe[-1].kneighbors(Qt)[0])


def test_label_names_must_match(rng):
    X, Y, Q = _data(rng)
    with pytest.raises(ValueError, match="label_names has 2 names"):
        _fit(MLkNN(n_neighbors=3), X, Y).explain(Q, label_names=["a", "b"])


def test_sparse_labels(rng):
    X, Y, Q = _data(rng)
    model = _fit(MLkNN(n_neighbors=4), X, sp.csr_matrix(Y))
    e = model.explain(Q)
    assert np.array_equal(e.scores, model.predict_proba(Q))
    assert np.array_equal(e.neighbor_labels, Y[e.rows])


@pytest.mark.parametrize("model", classifiers(lambda m: hasattr(m, "partial_fit")))
def test_a_live_model_explains_with_the_rows_it_has_now(model, rng):
    X, Y, Q = _data(rng)
    fitted = _fit(model, X[:30], Y[:30], ids=[f"old{i}" for i in range(30)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fitted.partial_fit(X[30:], Y[30:], ids=[f"new{i}" for i in range(30, len(X))])
        fitted.forget(["old0", "old1", "old2"])
    e = fitted.explain(Q)
    assert np.array_equal(e.scores, fitted.predict_proba(Q))
    assert np.array_equal(e.predictions, fitted.predict(Q).astype(bool))
    found = e.rows >= 0
    assert np.array_equal(e.ids[found], fitted.training_ids_[e.rows[found]])
    assert not np.isin(["old0", "old1", "old2"], e.ids).any() and np.char.startswith(e.ids[found], "new").any()


def test_rows_whose_neighbour_labels_do_not_fit_are_refused_naming_the_estimate(rng, monkeypatch):
    import mlneighbors._config

    X, Y, Q = _data(rng)
    model = _fit(MLkNN(n_neighbors=4), X, Y)
    monkeypatch.setattr(mlneighbors._config, "available_memory", lambda: len(Q) * 4 * Y.shape[1] - 1)
    with pytest.raises(MemoryError, match="explain's neighbour label rows .* explain fewer rows than 15"):
        model.explain(Q)
    assert len(model.explain(Q[:14])) == 14  # what fits is explained
