"""BLDA: agreement with classical LDA, separation, the user guide's scatter matrices, high dimensions."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg
import scipy.sparse as sp
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.exceptions import NotFittedError
from sklearn.pipeline import Pipeline

from mlneighbors import BKNN, BLDA

from .twins import blda_scatter_loop


def max_angle(A, B):
    """Largest principal angle (degrees) between the column spans of A and B."""
    return np.rad2deg(scipy.linalg.subspace_angles(A, B)).max()


def multilabel_data(rng, n=60, d=6, L=4):
    X = rng.normal(size=(n, d))
    Y = (rng.random((n, L)) < [0.6, 0.3, 0.2, 0.45]).astype(int)
    Y[Y.sum(axis=1) == 0, 0] = 1
    X += Y @ rng.normal(scale=2.0, size=(L, d))
    return X, Y


def test_single_label_spans_the_lda_subspace(rng):
    X = rng.normal(size=(150, 7))
    y = rng.integers(0, 4, size=150)
    X += rng.normal(scale=2.0, size=(4, 7))[y]
    blda = BLDA(reg=0.0).fit(X, y)
    lda = LinearDiscriminantAnalysis(solver="eigen").fit(X, y)
    assert blda.n_components_ == 3
    assert max_angle(blda.components_.T, lda.scalings_[:, :3]) < 1e-6
    # the default ridge moves the subspace only a little
    assert max_angle(BLDA().fit(X, y).components_.T, lda.scalings_[:, :3]) < 1.0


def test_projection_separates_linearly_separable_classes(rng):
    centres = np.array([[0, 0, 0, 0, 0], [6, 0, 0, 0, 0], [0, 6, 0, 0, 0]], dtype=float)
    y = np.repeat([0, 1, 2], 30)
    X = centres[y] + rng.uniform(-1, 1, size=(90, 5))
    X[:, 2:] += rng.normal(scale=10.0, size=(90, 3))  # large irrelevant variance
    Z = BLDA().fit(X, y).transform(X)
    means = np.array([Z[y == c].mean(axis=0) for c in range(3)])
    nearest = np.argmin(((Z[:, None, :] - means[None]) ** 2).sum(axis=2), axis=1)
    np.testing.assert_array_equal(nearest, y)


def test_scatter_matrices_and_global_mean_are_the_spec(rng):
    X, Y = multilabel_data(rng)
    model = BLDA(reg=1e-2).fit(X, Y)
    S_b, S_w, m = blda_scatter_loop(X, Y)
    np.testing.assert_allclose(model.mean_, m, rtol=1e-12)
    assert np.abs(model.mean_ - X.mean(axis=0)).max() > 1e-3  # not the plain mean
    rho = 1e-2 * np.trace(S_w) / X.shape[1]
    assert model.regularization_ == pytest.approx(rho, rel=1e-12)
    A, B = S_b, S_w + rho * np.eye(X.shape[1])
    U = model.components_.T
    np.testing.assert_allclose(A @ U, B @ U * model.eigenvalues_, rtol=1e-8, atol=1e-8)
    np.testing.assert_allclose(U.T @ B @ U, np.eye(U.shape[1]), atol=1e-9)
    # the top eigenvalues of the pencil, in decreasing order
    top = scipy.linalg.eigh(A, B, eigvals_only=True)[::-1][: model.n_components_]
    np.testing.assert_allclose(model.eigenvalues_, top, rtol=1e-9)
    assert (np.diff(model.eigenvalues_) <= 0).all()


def test_wide_data_solved_in_the_span_equals_the_full_problem(rng):
    n, d, L = 25, 80, 5
    X = rng.normal(size=(n, d))
    Y = (rng.random((n, L)) < 0.4).astype(int)
    Y[:L, :] = np.eye(L, dtype=int)
    model = BLDA(n_components=3, reg=1e-2).fit(X, Y)
    S_b, S_w, _ = blda_scatter_loop(X, Y)
    rho = 1e-2 * np.trace(S_w) / d
    _, vecs = scipy.linalg.eigh(S_b, S_w + rho * np.eye(d))
    assert max_angle(model.components_.T, vecs[:, ::-1][:, :3]) < 1e-6
    assert model.rank_ == n - 1
    sparse = BLDA(n_components=3, reg=1e-2).fit(sp.csr_matrix(X), Y)
    np.testing.assert_allclose(sparse.components_, model.components_, atol=1e-9)
    np.testing.assert_allclose(sparse.transform(sp.csr_matrix(X)), model.transform(X), atol=1e-9)


def test_sparse_input_agrees_with_dense(rng):
    X, Y = multilabel_data(rng)
    X[np.abs(X) < 1.0] = 0.0
    dense = BLDA().fit(X, Y)
    sparse = BLDA().fit(sp.csr_matrix(X), sp.csr_matrix(Y))
    np.testing.assert_allclose(sparse.components_, dense.components_, atol=1e-9)
    np.testing.assert_allclose(sparse.transform(sp.csr_matrix(X)), dense.transform(X), atol=1e-9)


def test_transform_shape_and_default_dimension(rng):
    X, Y = multilabel_data(rng)
    model = BLDA().fit(X, Y)
    assert model.transform(X).shape == (60, 3)
    np.testing.assert_allclose(model.transform(X), (X - model.mean_) @ model.components_.T)
    assert list(model.get_feature_names_out()) == ["blda0", "blda1", "blda2"]
    # the rank caps the default: 3 labels in a 1-D space give one component
    X1 = rng.normal(size=(30, 1))
    Y1 = np.eye(3, dtype=int)[rng.integers(0, 3, 30)]
    assert BLDA().fit(X1, Y1).n_components_ == 1


def test_pipeline_with_bknn(rng):
    X, Y = multilabel_data(rng, n=80)
    pipe = Pipeline([("blda", BLDA()), ("bknn", BKNN())]).fit(X, Y)
    assert pipe.predict(X).shape == Y.shape
    proba = pipe.predict_proba(X)
    assert ((proba >= 0) & (proba <= 1)).all()


def test_labels_without_members_are_left_out(rng):
    X, Y = multilabel_data(rng)
    Y0 = np.hstack([Y, np.zeros((60, 1), dtype=int)])
    a, b = BLDA().fit(X, Y), BLDA().fit(X, Y0)
    np.testing.assert_allclose(a.components_, b.components_, atol=1e-12)


@pytest.mark.parametrize(
    "params, match",
    [
        ({"n_components": 4}, "n_labels - 1"),
        ({"n_components": 0}, "n_components"),
        ({"reg": -1.0}, "reg"),
        ({"reg": np.inf}, "reg"),
    ],
)
def test_bad_parameters(rng, params, match):
    X, Y = multilabel_data(rng)
    with pytest.raises(ValueError, match=match):
        BLDA(**params).fit(X, Y)


def test_bad_data(rng):
    X, Y = multilabel_data(rng)
    with pytest.raises(ValueError, match="rank"):
        BLDA(n_components=2).fit(X[:, :1], Y)  # n_components > rank (1)
    with pytest.raises(ValueError, match="two labels"):
        BLDA().fit(X, Y[:, :1])
    with pytest.raises(ValueError, match="constant"):
        BLDA().fit(np.ones((10, 3)), np.eye(2, dtype=int)[np.arange(10) % 2])
    with pytest.raises(ValueError, match="positive definite"):
        BLDA(reg=0.0).fit(rng.normal(size=(10, 20)), np.eye(2, dtype=int)[np.arange(10) % 2])
    with pytest.raises(ValueError, match="positive definite"):
        BLDA(reg=0.0).fit(np.hstack([X, X[:, :1]]), Y)  # a repeated column
    with pytest.raises(NotFittedError):
        BLDA().transform(X)
    bad = X.copy()
    bad[2, 2] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        BLDA().fit(bad, Y)
    with pytest.raises(ValueError, match="requires y"):
        BLDA().fit(X, None)
    with pytest.raises(ValueError, match="features"):
        BLDA().fit(X, Y).transform(X[:, :3])
