"""Bad input: each a clear error (or, for too large a k, a clear warning)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.exceptions import NotFittedError

from mlneighbors import BKNN, BLDA, BRkNN, DMLkNN, LAMLkNN, MLkNN
from mlneighbors.exceptions import BackendError, DataScaleWarning, InvalidParameterError

from ..registry import classifiers, k_param, models

#: every classifier of the registry
MODELS = classifiers()


def _with_k(model, k):
    """A fresh copy of ``model`` with its ``k`` (``n_neighbors``, BKNN's ``n_per_label``) set."""
    return clone(model).set_params(**{k_param(model): k})


@pytest.fixture
def data(rng):
    X = rng.normal(size=(12, 3))
    Y = (rng.random((12, 4)) < 0.5).astype(int)
    return X, Y


@pytest.mark.parametrize("model", MODELS)
def test_y_not_binary(model, data):
    X, Y = data
    bad = Y.copy()
    bad[0, 0] = 2
    with pytest.raises(ValueError, match="Unknown label type.*only 0 and 1"):
        clone(model).fit(X, bad)
    with pytest.raises(ValueError, match="Unknown label type"):
        clone(model).fit(X, X[:, 0])  # continuous 1-D
    with pytest.raises(ValueError, match="Unknown label type"):
        clone(model).fit(X, sp.csr_matrix(bad))


@pytest.mark.parametrize("model", MODELS)
def test_x_and_y_of_different_lengths(model, data):
    X, Y = data
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        clone(model).fit(X, Y[:-1])


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("k", [0, -1])
def test_k_below_one(model, k, data):
    name = k_param(model)
    expected = f"'{name}' parameter of {type(model).__name__} must be an int in the range \\[1, inf\\); got {k}"
    with pytest.raises(InvalidParameterError, match=expected):
        _with_k(model, k).fit(*data)
    with pytest.raises(TypeError, match=f"'{name}' parameter"):  # an InvalidParameterError is a TypeError too
        _with_k(model, 2.5).fit(*data)


@pytest.mark.parametrize("model", classifiers(lambda m: "n_neighbors" in m.get_params()))
def test_n_neighbors_larger_than_the_training_set_is_clipped_with_a_warning(model, data):
    X, Y = data  # 12 rows: leave-one-out models have 11 neighbours per row, the others 12
    limit = 11 if model._needs_loo else 12
    if "n_candidates" in model.get_params():
        model = clone(model).set_params(n_candidates=50)  # the hybrid's window holds the neighbours
    for k in (limit, limit + 1, 50):
        if k == limit:
            fitted = _with_k(model, k).fit(X, Y)  # the largest k that fits: no warning
        else:
            with pytest.warns(UserWarning, match=f"n_neighbors={k} is more than the {limit} neighbours"):
                fitted = _with_k(model, k).fit(X, Y)
        assert fitted.n_neighbors_ == limit and fitted.n_neighbors == k
        assert fitted.predict(X).shape == Y.shape


def test_n_clusters_larger_than_the_training_set(data):
    with pytest.raises(ValueError, match="n_clusters=13 must be at most the number of training rows \\(12\\)"):
        LAMLkNN(3, n_clusters=13).fit(*data)
    with pytest.raises(ValueError, match="'n_clusters' parameter"):
        LAMLkNN(3, n_clusters=0).fit(*data)


def test_negative_delta(data):
    with pytest.raises(ValueError, match="'delta' parameter.*range \\[0, inf\\)"):
        DMLkNN(3, delta=-1).fit(*data)


@pytest.mark.parametrize("extension", ["c", "A", "", 1])
def test_unknown_extension(extension, data):
    with pytest.raises(ValueError, match="'extension' parameter"):
        BRkNN(3, extension=extension).fit(*data)


@pytest.mark.parametrize("make", [MLkNN, DMLkNN, LAMLkNN])
def test_negative_smoothing(make, data):
    with pytest.raises(ValueError, match="'smoothing' parameter"):
        make(3, smoothing=-0.1).fit(*data)


def test_unknown_metric_and_backend(data):
    with pytest.raises(ValueError, match="'metric' parameter"):
        MLkNN(3, metric="chebyshev").fit(*data)
    with pytest.raises(ValueError, match="Unknown backend"):
        MLkNN(3, backend="nope").fit(*data)


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("params", [-1, 1.5, "exact", [("a", 1)], True])
def test_backend_params_that_are_not_a_dict_are_refused_by_fit_after_a_clone(model, params, data):
    """clone and pickle copy the parameter as it is (the check of a Dask client in it must not
    choke on it); fit's parameter check names it."""
    import pickle

    model = clone(model).set_params(backend_params=params)
    for copy in (clone(model), pickle.loads(pickle.dumps(model))):
        assert copy.backend_params == params
        with pytest.raises(ValueError, match="'backend_params' parameter of .* must be a dict or None"):
            copy.fit(*data)


def test_clusterer_without_predict(data):
    class FitOnly:
        def fit(self, X):
            return self

    with pytest.raises(ValueError, match="'clusterer' parameter"):
        LAMLkNN(3, clusterer=FitOnly()).fit(*data)


@pytest.mark.parametrize("model", MODELS)
def test_predict_before_fit(model, data):
    X, _ = data
    for method in ("predict", "predict_proba"):
        with pytest.raises(NotFittedError):
            getattr(clone(model), method)(X)


@pytest.mark.parametrize("model", MODELS)
def test_different_number_of_features_at_predict(model, data):
    X, Y = data
    model = clone(model).fit(X, Y)
    with pytest.raises(ValueError, match="X has 2 features, but .* is expecting 3 features"):
        model.predict(X[:, :2])
    with pytest.raises(ValueError, match="X has 4 features"):
        model.predict_proba(np.hstack([X, X[:, :1]]))


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_nan_or_inf_in_x(model, bad, data):
    X, Y = data
    Xbad = X.copy()
    Xbad[3, 1] = bad
    match = "NaN" if np.isnan(bad) else "infinity"
    with pytest.raises(ValueError, match=match):
        clone(model).fit(Xbad, Y)
    with pytest.raises(ValueError, match=match):
        clone(model).fit(sp.csr_matrix(Xbad), Y)
    fitted = clone(model).fit(X, Y)
    with pytest.raises(ValueError, match=match):
        fitted.predict(Xbad)


@pytest.mark.parametrize("model", MODELS)
def test_too_few_rows_and_empty_input(model, data):
    X, Y = data
    with pytest.raises(ValueError, match="minimum of 2 is required"):
        _with_k(model, 1).fit(X[:1], Y[:1])
    with pytest.raises(ValueError, match="0 sample"):
        _with_k(model, 1).fit(X[:0], Y[:0])


def test_a_label_nobody_has_warns(data):
    X, Y = data
    Y = Y.copy()
    Y[:, 2] = 0
    with pytest.warns(UserWarning, match="1 label\\(s\\) have no positive training example \\(columns \\[2\\]\\)"):
        MLkNN(3).fit(X, Y)


def test_a_label_nobody_has_is_named_by_a_dataframe_target(data):
    pd = pytest.importorskip("pandas")
    X, Y = data
    Y = pd.DataFrame(Y, columns=[f"tag{j}" for j in range(Y.shape[1])])
    Y["tag2"] = 0
    with pytest.warns(UserWarning, match=r"have no positive training example: label 'tag2' \(column 2\);"):
        MLkNN(3).fit(X, Y)


# -- one validation for every model's search (issue: sound on data nobody tuned) ----------




def _small(rng):
    X = rng.normal(size=(40, 4))
    Y = (rng.random((40, 3)) < 0.5).astype(int)
    return X, Y, rng.normal(size=(6, 4))


@pytest.mark.parametrize("model", MODELS)
def test_values_whose_squares_overflow_are_refused(model, rng):
    X, Y, Q = _small(rng)
    with pytest.raises(ValueError, match=r"magnitude above 2\*\*500"):
        clone(model).fit(X * 1e200, Y)
    with pytest.raises(ValueError, match=r"magnitude above 2\*\*500"):  # through scikit-learn's validation
        clone(model).fit((X * 1e200).tolist(), Y)
    fitted = clone(model).fit(X, Y)
    with pytest.raises(ValueError, match=r"magnitude above 2\*\*500"):
        fitted.predict(Q * 1e200)


@pytest.mark.parametrize("model", MODELS)
def test_values_whose_squares_underflow_are_warned_about(model, rng):
    X, Y, _ = _small(rng)
    with pytest.warns(DataScaleWarning, match="underflow.*rescale"):
        clone(model).fit(X * 1e-170, Y)


class _Broken:
    """An index returning what the protocol forbids: ``bad`` says what."""

    exact = True
    metric = "euclidean"

    def __init__(self, bad):
        self.bad = bad

    def build(self, X):
        self.n = X.shape[0]
        return self

    def query(self, Q, k):
        n_q = Q.shape[0]
        idx = np.tile(np.arange(k), (n_q, 1))
        dist = np.tile(np.arange(k, dtype=float), (n_q, 1))
        if self.bad == "minus one":
            idx[:, -1] = -1
        elif self.bad == "n":
            idx[:, -1] = self.n
        elif self.bad == "columns":
            idx, dist = idx[:, :-1], dist[:, :-1]
        elif self.bad == "nan":
            dist[:, 0] = np.nan
        elif self.bad == "order":
            dist = dist[:, ::-1].copy()
        return dist, idx


@pytest.mark.parametrize("bad, match", [("minus one", "row number -1"),
                                        ("n", r"row number \d+, outside the \d+ indexed rows"),
                                        ("columns", "shape"), ("nan", "non-finite"), ("order", "ascending")])
@pytest.mark.parametrize("make", [lambda b: MLkNN(3, backend=b), lambda b: BRkNN(3, backend=b),
                                  lambda b: BKNN(3, backend=b)],
                         ids=["mlknn (leave-one-out)", "brknn (queries)", "bknn (per label)"])
def test_a_backend_breaking_the_protocol_is_named(make, bad, match, rng):
    X, Y, Q = _small(rng)
    with pytest.raises(BackendError, match=f"backend _Broken .*{match}"):
        make(_Broken(bad)).fit(X, Y).predict(Q)


def test_blda_refuses_labels_that_all_have_the_same_members(rng):
    X = rng.normal(size=(20, 3))
    with pytest.raises(ValueError, match="same rows .*S_b = 0"):
        BLDA().fit(X, np.ones((20, 3), dtype=int))


@pytest.mark.parametrize("model", models())
def test_a_target_coded_minus_one_plus_one_says_how_to_convert(model, rng):
    X, Y, _ = _small(rng)
    with pytest.raises(ValueError, match=r"coded -1/\+1.*\(y > 0\)\.astype\(int\)") as info:
        clone(model).fit(X, 2 * Y - 1)
    assert "Unknown label type" not in str(info.value)


@pytest.mark.parametrize("model", models())
def test_a_list_of_label_lists_points_to_the_binarizer(model, rng):
    X = rng.normal(size=(4, 3))
    with pytest.raises(ValueError, match="list of label lists.*MultiLabelBinarizer"):
        clone(model).fit(X, [[0, 2], [1], [], [0, 1, 2]])
