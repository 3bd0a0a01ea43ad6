"""cross_validate and evaluate_models: hand loops, shared neighbour searches, scaling, bad input."""

from __future__ import annotations

import time

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.linear_model import LogisticRegression, RidgeClassifier
from sklearn.model_selection import KFold, ShuffleSplit
from sklearn.multioutput import MultiOutputClassifier
from sklearn.neighbors import KNeighborsClassifier

from mlneighbors.metrics import evaluate
from mlneighbors.model_selection import (
    CVResult,
    MultilabelStratifiedKFold,
    cross_validate,
    evaluate_models,
    make_scaler,
)
from tests.registry import classifiers, fresh

# ---------------------------------------------------------------------------
# cross_validate
# ---------------------------------------------------------------------------


class CountingKNN(KNeighborsClassifier):
    """KNN that counts calls, to see what cross_validate asks for."""

    calls: list[str] = []

    def fit(self, X, y):
        CountingKNN.calls.append("fit")
        return super().fit(X, y)

    def predict(self, X):
        CountingKNN.calls.append("predict")
        return super().predict(X)

    def predict_proba(self, X):
        CountingKNN.calls.append("predict_proba")
        return super().predict_proba(X)


class PredictOnly(ClassifierMixin, BaseEstimator):
    """Predicts the training label frequencies rounded; no scores at all."""

    def fit(self, X, Y):
        self.prior_ = np.asarray(Y).mean(axis=0)
        return self

    def predict(self, X):
        return np.tile(self.prior_ >= 0.5, (len(X), 1)).astype(int)


def hand_loop(estimator, X, Y, splits, metrics, score_fn):
    values = []
    for train, test in splits:
        est = clone(estimator).fit(X[train], Y[train])
        pred = est.predict(X[test])
        scores = score_fn(est, X[test])
        values.append(evaluate(Y[test], pred, scores, metrics=metrics))
    return {name: np.array([v[name] for v in values]) for name in values[0]}


def stacked_proba(est, X):
    return np.column_stack([p[:, 1] for p in est.predict_proba(X)])


@pytest.mark.parametrize(
    "estimator",
    [KNeighborsClassifier(5), MultiOutputClassifier(LogisticRegression())],
    ids=["knn", "multioutput-logreg"],
)
def test_matches_hand_loop_with_custom_splitter(data, estimator):
    X, Y = data
    splitter = KFold(4, shuffle=True, random_state=1)
    metrics = ["hamming_loss", "example_f1", "micro_f1", "ranking_loss", "average_precision", "one_error"]
    res = cross_validate(estimator, X, Y, cv=splitter, metrics=metrics)
    expected = hand_loop(estimator, X, Y, list(splitter.split(X, Y)), metrics, stacked_proba)
    assert list(res.per_fold) == metrics
    for name in metrics:
        np.testing.assert_allclose(res.per_fold[name], expected[name], rtol=1e-12)
        assert res.mean[name] == pytest.approx(expected[name].mean())
        assert res.std[name] == pytest.approx(expected[name].std(ddof=1))
    assert res.n_folds == 4 and res.fit_time.shape == (4,) and res.predict_time.shape == (4,)


class StampingKNN(KNeighborsClassifier):
    """KNN that notes the clock (``time.perf_counter``, cross_validate's) as each of its
    methods starts and ends."""

    stamps: list[tuple[str, float]] = []

    def _stamped(self, name, method, *args):
        StampingKNN.stamps.append((name, time.perf_counter()))
        try:
            return method(*args)
        finally:
            StampingKNN.stamps.append((name, time.perf_counter()))

    def fit(self, X, y):
        return self._stamped("fit", super().fit, X, y)

    def predict(self, X):
        return self._stamped("predict", super().predict, X)

    def predict_proba(self, X):
        return self._stamped("predict_proba", super().predict_proba, X)


def test_fit_and_predict_times_enclose_the_fit_and_the_predictions(data):
    """fit_time of a fold spans the fit and nothing of the predictions; predict_time spans
    predict and predict_proba and nothing of the next fit: orderings of one clock's
    readings, whatever the machine's speed."""
    X, Y = data
    StampingKNN.stamps = [("start", time.perf_counter())]
    res = cross_validate(StampingKNN(3), X, Y, cv=3, metrics=["hamming_loss", "ranking_loss"], random_state=0)
    StampingKNN.stamps.append(("end", time.perf_counter()))
    names = [name for name, _ in StampingKNN.stamps]
    fold = ["fit", "fit", "predict", "predict", "predict_proba", "predict_proba"]
    assert names == ["start", *fold * 3, "end"]
    t = [stamp for _, stamp in StampingKNN.stamps]
    for j in range(3):
        before, fit_start, fit_end, pred_start, _, _, proba_end, after = t[6 * j : 6 * j + 8]
        assert fit_end - fit_start <= res.fit_time[j] <= pred_start - before
        assert proba_end - pred_start <= res.predict_time[j] <= after - fit_end


def test_decision_function_scores(data):
    X, Y = data
    splits = list(KFold(3).split(X))
    metrics = ["ranking_loss", "coverage", "macro_f1"]
    res = cross_validate(RidgeClassifier(), X, Y, cv=splits, metrics=metrics)
    expected = hand_loop(RidgeClassifier(), X, Y, splits, metrics, lambda est, Xt: est.decision_function(Xt))
    for name in metrics:
        np.testing.assert_allclose(res.per_fold[name], expected[name])


def test_int_cv_uses_seeded_stratified_folds(data):
    X, Y = data
    res = cross_validate(KNeighborsClassifier(3), X, Y, cv=3, metrics="hamming_loss", random_state=4)
    expected = [test for _, test in MultilabelStratifiedKFold(3, shuffle=True, random_state=4).split(X, Y)]
    assert len(res.test_indices) == 3
    for got, want in zip(res.test_indices, expected, strict=True):
        np.testing.assert_array_equal(got, want)
    again = cross_validate(KNeighborsClassifier(3), X, Y, cv=3, metrics="hamming_loss", random_state=4)
    np.testing.assert_array_equal(res.per_fold["hamming_loss"], again.per_fold["hamming_loss"])


def test_iterable_cv_with_boolean_masks(data):
    X, Y = data
    masks = [(np.arange(90) % 3 != j, np.arange(90) % 3 == j) for j in range(3)]
    res = cross_validate(KNeighborsClassifier(3), X, Y, cv=iter(masks), metrics=["subset_accuracy"])
    assert res.per_fold["subset_accuracy"].shape == (3,)
    np.testing.assert_array_equal(res.test_indices[1], np.arange(1, 90, 3))


def test_default_metrics_include_ranking_only_with_scores(data):
    X, Y = data
    with_scores = cross_validate(KNeighborsClassifier(3), X, Y, cv=3, random_state=0)
    assert {"hamming_loss", "ranking_loss", "average_precision"} <= set(with_scores.per_fold)
    without = cross_validate(PredictOnly(), X, Y, cv=3, random_state=0)
    assert "hamming_loss" in without.per_fold and "ranking_loss" not in without.per_fold


def test_scores_and_predictions_only_when_needed(data):
    X, Y = data
    CountingKNN.calls = []
    cross_validate(CountingKNN(3), X, Y, cv=3, metrics=["hamming_loss"], random_state=0)
    assert "predict_proba" not in CountingKNN.calls and CountingKNN.calls.count("predict") == 3
    CountingKNN.calls = []
    cross_validate(CountingKNN(3), X, Y, cv=3, metrics=["ranking_loss"], random_state=0)
    assert "predict" not in CountingKNN.calls and CountingKNN.calls.count("predict_proba") == 3


def test_return_predictions(data):
    X, Y = data
    splitter = KFold(3, shuffle=True, random_state=0)
    res = cross_validate(
        KNeighborsClassifier(3), X, Y, cv=splitter, metrics=["hamming_loss", "one_error"], return_predictions=True
    )
    for train, test in splitter.split(X):
        est = KNeighborsClassifier(3).fit(X[train], Y[train])
        np.testing.assert_array_equal(res.predictions[test], est.predict(X[test]))
        np.testing.assert_allclose(res.scores[test], stacked_proba(est, X[test]))
    plain = cross_validate(KNeighborsClassifier(3), X, Y, cv=splitter, metrics=["hamming_loss"])
    assert plain.predictions is None and plain.scores is None


def test_return_predictions_needs_a_partition(data):
    X, Y = data
    with pytest.raises(ValueError, match="partition"):
        cross_validate(
            KNeighborsClassifier(3), X, Y, cv=ShuffleSplit(3, test_size=0.2, random_state=0),
            metrics=["hamming_loss"], return_predictions=True,
        )


def test_label_constant_in_training_fold(data):
    # Label 1 is positive only in the first fold's test rows: KNN's
    # predict_proba has a single column for it in that fold.
    X, Y = data
    Y = Y.copy()
    Y[:, 1] = 0
    Y[:5, 1] = 1
    splits = [(np.arange(30, 90), np.arange(30)), (np.arange(30), np.arange(30, 90))]
    res = cross_validate(KNeighborsClassifier(3), X, Y, cv=splits, metrics=["ranking_loss"])
    assert np.all(np.isfinite(res.per_fold["ranking_loss"]))


def test_sparse_features(data):
    X, Y = data
    res_sparse = cross_validate(KNeighborsClassifier(3), sp.csr_matrix(X), Y, cv=3, metrics=["micro_f1"],
                                random_state=0)
    res_dense = cross_validate(KNeighborsClassifier(3), X, Y, cv=3, metrics=["micro_f1"], random_state=0)
    np.testing.assert_allclose(res_sparse.per_fold["micro_f1"], res_dense.per_fold["micro_f1"])


def test_parallel_equals_serial(data):
    joblib = pytest.importorskip("joblib")
    X, Y = data
    serial = cross_validate(KNeighborsClassifier(3), X, Y, cv=3, metrics=["example_f1"], random_state=0)
    with joblib.parallel_backend("threading"):  # parallel_config is joblib >= 1.3; 1.2 is allowed
        parallel = cross_validate(
            KNeighborsClassifier(3), X, Y, cv=3, metrics=["example_f1"], random_state=0, n_jobs=2
        )
    np.testing.assert_array_equal(serial.per_fold["example_f1"], parallel.per_fold["example_f1"])


def test_to_rows(data):
    X, Y = data
    res = cross_validate(KNeighborsClassifier(3), X, Y, cv=3, metrics=["hamming_loss", "micro_f1"], random_state=0)
    assert isinstance(res, CVResult)
    rows = res.to_rows()
    assert [r["metric"] for r in rows] == ["hamming_loss", "micro_f1", "fit_time", "predict_time"]
    assert rows[0]["mean"] == pytest.approx(res.mean["hamming_loss"])
    fold_rows = res.to_rows(per_fold=True)
    assert [r["fold"] for r in fold_rows] == [0, 1, 2]
    assert fold_rows[2]["micro_f1"] == res.per_fold["micro_f1"][2]


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"cv": 1}, ValueError, "cv must be at least 2"),
        ({"cv": True}, TypeError, "cv must be"),
        ({"cv": 3.0}, TypeError, "cv must be"),
        ({"cv": [(np.arange(10), np.arange(10, 20))]}, ValueError, "at least 2 splits"),
        ({"metrics": ["hamming_loss", "no_such_metric"]}, ValueError, "unknown metric name"),
        ({"metrics": []}, ValueError, "at least one metric"),
        ({"cv": [(np.arange(10), np.arange(10, 20)), (np.arange(5), np.array([95]))]}, ValueError, "outside"),
    ],
)
def test_invalid_arguments_fail_before_fitting(data, kwargs, error, match):
    X, Y = data
    CountingKNN.calls = []
    with pytest.raises(error, match=match):
        cross_validate(CountingKNN(3), X, Y, **kwargs)
    assert CountingKNN.calls == []


def test_invalid_shapes(data):
    X, Y = data
    with pytest.raises(ValueError, match="X and Y have different numbers of samples"):
        cross_validate(KNeighborsClassifier(3), X[:-1], Y, cv=3)
    with pytest.raises(ValueError, match="2-D"):
        cross_validate(KNeighborsClassifier(3), X, Y[:, 0], cv=3)


def test_ranking_metric_without_scores(data):
    X, Y = data
    with pytest.raises(ValueError, match="neither predict_proba nor decision_function"):
        cross_validate(PredictOnly(), X, Y, cv=3, metrics=["ranking_loss"])


# ---------------------------------------------------------------------------
# evaluate_models: many models per split, one neighbour search, scaling
# ---------------------------------------------------------------------------


def _toy(rng, n=120, d=5, L=4):
    X = rng.normal(size=(n, d))
    Y = (X[:, :L] + rng.normal(scale=0.5, size=(n, L)) > 0).astype(np.int8)
    return X, Y


def test_many_models_and_k_share_one_search_per_set(rng):
    from mlneighbors import BRkNN, LPkNN, MLkNN

    X, Y = _toy(rng)
    makers = {"ML-kNN": MLkNN, "BRkNN-a": lambda k: BRkNN(k, extension="a"), "LPkNN": LPkNN}
    models = {(name, k): make(k) for k in range(1, 31) for name, make in makers.items()}
    metrics = ["hamming_loss", "example_f1", "average_precision"]
    split = [(np.arange(90), np.arange(90, 120))]
    searches = []

    def on_fit(run):
        searches.append(run.model.backend.searches)

    res = evaluate_models(models, X, Y, cv=split + split, metrics=metrics, on_fit=on_fit)
    # per split: the training set (leave-one-out) and the test set, searched once each
    assert max(searches) == 2 and len(searches) == 2 * len(models)
    for k in (1, 7, 30):  # the prefixes give what a fresh exact search gives
        for name, make in makers.items():
            model = make(k).fit(X[:90], Y[:90])
            want = evaluate(Y[90:], model.predict(X[90:]), model.predict_proba(X[90:]), metrics=metrics)
            assert {m: v[0] for m, v in res[(name, k)].per_fold.items()} == pytest.approx(want)


def test_share_neighbors_false_keeps_the_backends(rng):
    from mlneighbors import MLkNN

    X, Y = _toy(rng)
    seen = []
    evaluate_models({"m": MLkNN(3)}, X, Y, cv=3, random_state=0, metrics=["hamming_loss"],
                    share_neighbors=False, on_fit=lambda run: seen.append(run.model.backend))
    assert seen == ["exact"] * 3


def test_a_pipeline_step_shares_the_search_and_bknn_keeps_its_own(rng):
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import StandardScaler

    from mlneighbors import BKNN, MLkNN

    X, Y = _toy(rng)
    models = {"pipe": Pipeline([("s", StandardScaler()), ("m", MLkNN(4))]), "bknn": BKNN(3), "plain": MLkNN(4)}
    res = evaluate_models(models, X, Y, cv=3, random_state=0, metrics=["hamming_loss", "ranking_loss"])
    for name in ("bknn", "plain"):
        want = cross_validate(models[name], X, Y, cv=3, random_state=0, metrics=["hamming_loss", "ranking_loss"])
        np.testing.assert_array_equal(res[name].per_fold["hamming_loss"], want.per_fold["hamming_loss"])
        np.testing.assert_array_equal(res[name].per_fold["ranking_loss"], want.per_fold["ranking_loss"])


def test_held_out_test_part(rng):
    from mlneighbors import MLkNN

    X, Y = _toy(rng)
    res = evaluate_models({"m": MLkNN(5)}, X[:90], Y[:90], test=(X[90:], Y[90:]), metrics=["hamming_loss"],
                          return_predictions=True)
    model = MLkNN(5).fit(X[:90], Y[:90])
    assert res["m"].n_folds == 1
    np.testing.assert_array_equal(res["m"].predictions, model.predict(X[90:]))
    direct = evaluate(Y[90:], model.predict(X[90:]), metrics=["hamming_loss"])["hamming_loss"]
    assert res["m"].per_fold["hamming_loss"][0] == direct


def test_minmax_scaling_uses_each_training_part(rng):
    X, Y = _toy(rng)
    X = X * [1, 10, 100, 1000, 1]
    split = [(np.arange(90), np.arange(90, 120)), (np.arange(30, 120), np.arange(30))]
    seen = []
    evaluate_models({"knn": KNeighborsClassifier(3)}, X, Y, cv=split, scale="minmax", metrics=["hamming_loss"],
                    on_fit=lambda run: seen.append(run.X_test))
    for (train, test), got in zip(split, seen, strict=True):
        lo, hi = X[train].min(axis=0), X[train].max(axis=0)
        np.testing.assert_allclose(got, (X[test] - lo) / (hi - lo))  # training ranges, not clipped


def test_make_scaler_keeps_sparse_data_sparse():
    S = sp.random(30, 4, density=0.3, random_state=0, format="csr") * 5
    scaler = make_scaler("minmax", sparse=True).fit(S)
    C = scaler.transform(S)
    assert sp.issparse(C) and C.max() == pytest.approx(1.0)
    np.testing.assert_allclose(C.toarray(), S.toarray() / S.toarray().max(axis=0))
    assert make_scaler("none", sparse=False) is None
    assert make_scaler("standard", sparse=True).with_mean is False
    with pytest.raises(ValueError, match="unknown scaling 'max'.*minmax, standard, none"):
        make_scaler("max", sparse=False)


def test_hooks_need_one_process(data):
    X, Y = data
    with pytest.raises(ValueError, match="n_jobs"):
        evaluate_models({"m": KNeighborsClassifier(3)}, X, Y, cv=3, n_jobs=2, on_fit=print)
    with pytest.raises(ValueError, match="at least one"):
        evaluate_models({}, X, Y)


@pytest.mark.parametrize("in_pipeline", [False, True])
@pytest.mark.parametrize("model", classifiers())
def test_one_search_gives_predict_and_predict_proba(model, in_pipeline):
    """The evaluation loops take a model's predictions and scores from one search: the same
    arrays as ``predict`` and ``predict_proba`` called apart, alone or last in a Pipeline."""
    import warnings

    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import MinMaxScaler

    from mlneighbors.model_selection._validation import _label_scores, _predictions

    rng = np.random.default_rng(3)
    X = rng.random((80, 6))
    Y = (X[:, :4] + 0.3 * rng.random((80, 4)) > 0.7).astype(int)
    estimator = make_pipeline(MinMaxScaler(), fresh(model)) if in_pipeline else fresh(model)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        estimator.fit(X[:60], Y[:60])
        pred, scores = _predictions(estimator, X[60:], True, True)
        want_pred, want_scores = estimator.predict(X[60:]), _label_scores(estimator, X[60:])
    np.testing.assert_array_equal(pred, want_pred)
    assert pred.dtype == want_pred.dtype
    np.testing.assert_array_equal(scores, want_scores)
