"""Distance-weighted votes (``weights=``) of BRkNN, its extensions and LPkNN.

- ``"uniform"`` is the count rule of before, bit for bit (digests of its outputs computed with the
  code before ``weights`` existed), and a callable returning ones equals it bit for bit too;
- ``"distance"`` and a callable agree with a loop twin (one query, one neighbour, one label at a
  time; exact fractions for the rules' comparisons);
- scikit-learn's rule at distance 0: the neighbours at distance 0 get all the weight;
- dense and sparse labels, ``predict(sparse_output=True)``, ``predict_top_k``, ``explain``.
"""

from __future__ import annotations

import hashlib
import math
import warnings
from fractions import Fraction

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.neighbors import KNeighborsClassifier

from mlneighbors import BRkNN, LPkNN
from mlneighbors._counts import distance_weights

# -- data --------------------------------------------------------------------------------------


def _data(seed, ties=False, sparse_y=False):
    """80 rows, 7 labels (the last carried by nobody), 40 queries of which 10 are training rows
    (a neighbour at distance 0); ``ties``: integer features, many equal distances and duplicates."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 3, (80, 3)).astype(float) if ties else rng.normal(size=(80, 5))
    Q = np.concatenate([X[:10], rng.normal(size=(30, X.shape[1]))])
    Y = (rng.random((80, 7)) < 0.3).astype(np.int64)
    Y[:, 6] = 0
    return X, (sp.csr_matrix(Y) if sparse_y else Y), Q


DATA = [(0, False, False), (1, True, False), (2, False, True), (3, True, True)]


def _fit(model, X, Y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the label nobody carries
        return model.fit(X, Y)


def _ones(d):
    return np.ones_like(d)


def _similarity(d):  # MULAN's similarity weight, for distances scaled into [0, 1]
    return 1.0 - d / (d.max(axis=1, keepdims=True) + 1.0)


def _brknn(ext, k=5, **kw):
    return BRkNN(k, extension=ext, **kw)


MAKERS = {"brknn": lambda **kw: _brknn(None, **kw), "brknn-a": lambda **kw: _brknn("a", **kw),
          "brknn-b": lambda **kw: _brknn("b", 4, **kw), "lpknn": lambda **kw: LPkNN(5, **kw)}


def _all_outputs(model, Q):
    return [model.predict(Q), model.predict_proba(Q), model.predict(Q, sparse_output=True).toarray(),
            *model.predict_top_k(Q, 3)]


# -- uniform: unchanged -------------------------------------------------------------------------

#: sha256 (first 16 hex digits) of predict, predict_proba, predict(sparse_output=True) and
#: predict_top_k(Q, 3) on DATA, computed with the code before ``weights`` existed (commit 72eb8e7)
BEFORE = {
    ("brknn", 0): "61a797a101191263", ("brknn", 1): "75c8fd830ba6d4e5", ("brknn", 2): "356b058b4d456031",
    ("brknn", 3): "05707dd48bd37a30", ("brknn-a", 0): "59da8e810cc44ffe", ("brknn-a", 1): "829cc1a59a1bfd19",
    ("brknn-a", 2): "5b6c55b10f7021e8", ("brknn-a", 3): "05707dd48bd37a30", ("brknn-b", 0): "6468aa2d1ace3675",
    ("brknn-b", 1): "66bf40439f474a32", ("brknn-b", 2): "dd20676138d944f4", ("brknn-b", 3): "80bf4047c1906f33",
    ("lpknn", 0): "4036fbf54375dbae", ("lpknn", 1): "120183a2ad9d027e", ("lpknn", 2): "e5577571be38133c",
    ("lpknn", 3): "b3db3566d8844bec",
}


def _digest(parts):
    h = hashlib.sha256()
    for p in parts:
        a = np.ascontiguousarray(p)
        h.update(str(a.dtype).encode() + str(a.shape).encode() + a.tobytes())
    return h.hexdigest()[:16]


@pytest.mark.parametrize("name", MAKERS)
@pytest.mark.parametrize("data", DATA, ids=lambda d: f"seed{d[0]}")
def test_uniform_is_the_rule_of_before_bit_for_bit(name, data):
    X, Y, Q = _data(*data)
    model = _fit(MAKERS[name](), X, Y)
    assert model.get_params()["weights"] == "uniform"
    assert _digest(_all_outputs(model, Q)) == BEFORE[(name, data[0])]


@pytest.mark.parametrize("name", MAKERS)
@pytest.mark.parametrize("data", DATA, ids=lambda d: f"seed{d[0]}")
def test_weights_of_one_are_uniform_bit_for_bit(name, data):
    """The weighted path with weights 1: integer sums, ``k V / k`` exact, the same tie rules."""
    X, Y, Q = _data(*data)
    uniform = _all_outputs(_fit(MAKERS[name](), X, Y), Q)
    ones = _all_outputs(_fit(MAKERS[name](weights=_ones), X, Y), Q)
    for a, b in zip(uniform, ones, strict=True):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)


# -- the loop twin -----------------------------------------------------------------------------


def _twin_neighbours(X, Q, k):
    """Each query's k nearest rows and distances, by (distance, row number)."""
    out = []
    for q in Q:
        d = sorted((math.dist(x, q), i) for i, x in enumerate(X))
        out.append(d[:k])
    return out


def _twin_weights(dists, weights):
    if weights == "distance":
        if any(d == 0 for d in dists):
            return [1.0 if d == 0 else 0.0 for d in dists]
        return [1.0 / d for d in dists]
    return [float(w) for w in weights(np.array([dists]))[0]]


def twin(X, Y, Q, k, weights, rule):
    """(scores, predictions) of BRkNN (rule None, "a", "b") or LPkNN (rule "lp"), one query and
    one label at a time: shares as exact fractions of the float weights."""
    X = X.tolist()
    Y = (Y.toarray() if sp.issparse(Y) else np.asarray(Y)).tolist()
    L = len(Y[0])
    scores, preds = [], []
    for found in _twin_neighbours(X, Q.tolist(), k):
        rows = [i for _, i in found]
        w = _twin_weights([d for d, _ in found], weights)
        W = sum(Fraction(x) for x in w)
        V = [sum((Fraction(w[j]) for j, i in enumerate(rows) if Y[i][l]), Fraction(0)) for l in range(L)]
        share = [v / W if W else Fraction(0) for v in V]
        score = [(k * float(s) + 1) / (k + 1.5) for s in share]
        if rule == "lp":
            sets = [tuple(Y[i]) for i in rows]
            vote = [sum((Fraction(w[j]) for j in range(k) if sets[j] == sets[p]), Fraction(0)) for p in range(k)]
            best = max(vote)
            pred = list(sets[vote.index(best)])  # the first (nearest) of the sets of most weight
        else:
            pred = [int(s >= Fraction(1, 2)) for s in share]
            score = [sc if p else min(sc, math.nextafter(0.5, 0)) for sc, p in zip(score, pred, strict=True)]
            if rule == "a" and not any(pred) and max(V) > 0:
                pred[V.index(max(V))] = 1
            elif rule == "b":
                mean = sum((Fraction(w[j]) * sum(Y[i]) for j, i in enumerate(rows)), Fraction(0)) / W if W else 0
                m = math.floor(mean + Fraction(1, 2))
                order = sorted(range(L), key=lambda l: (-V[l], l))
                pred = [int(l in order[:m]) for l in range(L)]
        scores.append(score)
        preds.append(pred)
    return np.array(scores), np.array(preds)


def _model(rule, k, weights):
    return LPkNN(k, weights=weights) if rule == "lp" else BRkNN(k, extension=rule, weights=weights)


@pytest.mark.parametrize("rule", [None, "a", "b", "lp"])
@pytest.mark.parametrize("weights", ["distance", _similarity], ids=["distance", "callable"])
@pytest.mark.parametrize("data", DATA, ids=lambda d: f"seed{d[0]}")
def test_weighted_votes_agree_with_the_loop_twin(rule, weights, data):
    X, Y, Q = _data(*data)
    k = 4 if rule == "b" else 5
    model = _fit(_model(rule, k, weights), X, Y)
    scores, preds = twin(X, Y, Q, k, weights, rule)
    np.testing.assert_allclose(model.predict_proba(Q), scores, rtol=1e-12, atol=0)
    np.testing.assert_array_equal(model.predict(Q), preds)
    np.testing.assert_array_equal(model.predict(Q, sparse_output=True).toarray(), preds)
    if rule != "lp":
        # scores above 0.5 exactly where plain BRkNN predicts, whatever the extension
        plain = twin(X, Y, Q, k, weights, None)[1]
        np.testing.assert_array_equal(model.predict_proba(Q) > 0.5, plain == 1)


@pytest.mark.parametrize("rule", [None, "b", "lp"])
def test_dense_and_sparse_labels_agree(rule):
    X, Y, Q = _data(5)
    dense = _fit(_model(rule, 5, "distance"), X, Y)
    sparse = _fit(_model(rule, 5, "distance"), X, sp.csr_matrix(Y))
    for a, b in zip(_all_outputs(dense, Q), _all_outputs(sparse, Q), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-14, atol=0)


# -- distance 0 ------------------------------------------------------------------------------


def test_distance_zero_gets_all_the_weight_as_scikit_learn():
    dist = np.array([[0.0, 0.0, 1.0], [0.5, 1.0, 2.0], [0.0, 3.0, 4.0]])
    expected = np.array([[1.0, 1.0, 0.0], [2.0, 1.0, 0.5], [1.0, 0.0, 0.0]])
    np.testing.assert_array_equal(distance_weights(dist.copy(), "distance"), expected)
    from sklearn.neighbors._base import _get_weights  # the rule followed (private: only to compare)

    np.testing.assert_array_equal(distance_weights(dist.copy(), "distance"), _get_weights(dist.copy(), "distance"))


def test_a_query_on_a_training_row_takes_its_labels():
    # query 1.0 is row 1 (distance 0): its labels alone, whatever the other neighbours carry
    X = np.array([[0.0], [1.0], [2.0], [1.5]])
    Y = np.array([[1, 0, 1], [0, 1, 0], [1, 0, 1], [1, 0, 1]])
    for model in (BRkNN(3, weights="distance"), BRkNN(3, extension="b", weights="distance"),
                  LPkNN(3, weights="distance")):
        np.testing.assert_array_equal(model.fit(X, Y).predict([[1.0]]), [[0, 1, 0]])
    proba = BRkNN(3, weights="distance").fit(X, Y).predict_proba([[1.0]])
    np.testing.assert_array_equal(proba, [[1 / 4.5, 4 / 4.5, 1 / 4.5]])  # share 1 and 0 on k = 3 votes
    # uniform: 2 of 3 neighbours carry labels 0 and 2
    np.testing.assert_array_equal(BRkNN(3).fit(X, Y).predict([[1.0]]), [[1, 0, 1]])


def test_single_label_distance_votes_match_scikit_learn():
    """One label column: BRkNN's weighted share of label 1 is KNeighborsClassifier's probability
    of class 1 (no tie at exactly 1/2 on these continuous distances)."""
    X, Y, Q = _data(7)
    y = np.asarray(Y)[:, 0]
    ours = _fit(BRkNN(6, weights="distance"), X, y[:, None]).predict(Q)[:, 0]
    theirs = KNeighborsClassifier(6, weights="distance").fit(X, y)
    np.testing.assert_array_equal(ours, theirs.predict(Q))


# -- hand-computed, callables, bad callables ---------------------------------------------------


def test_toy_by_hand():
    X = np.array([[0.0], [1.0], [3.0]])
    Y = np.array([[1, 0], [0, 1], [0, 1]])
    model = BRkNN(3, weights="distance").fit(X, Y)
    # query 0.5: distances 0.5, 0.5, 2.5 -> weights 2, 2, 0.4: label 0 share 2 / 4.4 < 1/2 (uniform: 1/3)
    # label 1 share 2.4 / 4.4 >= 1/2
    np.testing.assert_array_equal(model.predict([[0.5]]), [[0, 1]])
    # scores (k share + 1) / (k + 1.5); label 0's, (3 * 2 / 4.4 + 1) / 4.5 = 0.525, is above 0.5 but the label
    # is not predicted: it is reported just below 0.5
    np.testing.assert_allclose(model.predict_proba([[0.5]]), [[np.nextafter(0.5, 0), (3 * 2.4 / 4.4 + 1) / 4.5]],
                               rtol=1e-15)
    # query 0.2: weights 5, 1.25, 1/2.8: label 0 predicted (5 / 6.607...), label 1 not
    np.testing.assert_array_equal(model.predict([[0.2]]), [[1, 0]])
    np.testing.assert_array_equal(BRkNN(3).fit(X, Y).predict([[0.2]]), [[0, 1]])  # uniform: 2 of 3 votes


def test_b_uses_the_weighted_mean_set_size():
    X = np.array([[0.0], [1.0], [10.0]])
    Y = np.array([[1, 1, 0], [0, 0, 1], [1, 1, 1]])
    # query 0.1, k = 2: sizes 2 (weight 10) and 1 (weight 1/0.9): weighted mean 1.9 -> m = 2
    # (uniform: mean 1.5 -> 2 as well); query 0.9: weights 1/0.9 and 10: mean 1.1 -> m = 1
    model = BRkNN(2, extension="b", weights="distance").fit(X, Y)
    np.testing.assert_array_equal(model.predict([[0.1], [0.9]]), [[1, 1, 0], [0, 0, 1]])
    np.testing.assert_array_equal(BRkNN(2, extension="b").fit(X, Y).predict([[0.9]]), [[1, 1, 0]])


def test_zero_weights_vote_for_nothing():
    X, Y, Q = _data(4)
    zero = _fit(BRkNN(5, extension="b", weights=lambda d: np.zeros_like(d)), X, Y)
    np.testing.assert_array_equal(zero.predict(Q), 0)
    np.testing.assert_array_equal(zero.predict_proba(Q), 1 / 6.5)
    a = _fit(BRkNN(5, extension="a", weights=lambda d: np.zeros_like(d)), X, Y)
    np.testing.assert_array_equal(a.predict(Q), 0)


@pytest.mark.parametrize("bad, match", [
    (lambda d: d[:, :1], "returned shape"),
    (lambda d: -d, "finite weights >= 0"),
    (lambda d: np.full_like(d, np.nan), "finite weights >= 0"),
])
def test_a_bad_callable_is_refused_at_predict(bad, match):
    X, Y, Q = _data(4)
    model = _fit(BRkNN(5, weights=bad), X, Y)
    with pytest.raises(ValueError, match=match):
        model.predict(Q)


@pytest.mark.parametrize("cls", [BRkNN, LPkNN])
def test_weights_must_be_a_name_or_a_callable(cls):
    from mlneighbors.exceptions import InvalidParameterError

    with pytest.raises(InvalidParameterError, match="'weights' parameter of .*'uniform', 'distance' or an object"):
        cls(3, weights="inverse").fit([[0.0], [1.0], [2.0], [3.0]], [[1, 0], [0, 1], [1, 1], [0, 0]])


def test_explain_reads_the_weighted_votes():
    X, Y, Q = _data(6)
    for model in (BRkNN(5, weights="distance"), BRkNN(4, extension="b", weights="distance"),
                  LPkNN(5, weights="distance")):
        model = _fit(model, X, Y)
        e = model.explain(Q[:8])
        np.testing.assert_array_equal(e.scores, model.predict_proba(Q[:8]))
        np.testing.assert_array_equal(e.predictions, model.predict(Q[:8]).astype(bool))
        # the neighbours' weights are 1 / d (1 at distance 0, Q[:8] holds training rows) and sum to the total
        w = e.neighbor_terms["weight"]
        np.testing.assert_allclose(w, np.where((e.distances == 0).any(axis=1, keepdims=True),
                                               e.distances == 0, 1 / np.maximum(e.distances, 1e-300)))
        np.testing.assert_allclose(e.row_terms["total_weight"], w.sum(axis=1), rtol=1e-14)
        assert (e.terms["votes"] <= e.row_terms["total_weight"][:, None]).all()
