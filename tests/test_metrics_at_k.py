"""Tests for the metrics at k of mlneighbors.metrics (the Extreme Classification Repository's).

Each metric has a loop twin written literally from the definition (one row at a time, Python
sorted()), compared on random data with ties, empty rows, rows with every label, a label
nobody has, k past the number of true labels and past the number of labels; hand-computed
cases; sparse, dense and label-index inputs agreeing; bounds and perfect rankings as
properties.
"""

from __future__ import annotations

import json
import math
import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from sklearn.model_selection import KFold
from sklearn.neighbors import KNeighborsClassifier

from mlneighbors import config_context
from mlneighbors.metrics import (
    METRICS,
    evaluate,
    ndcg_at_k,
    precision_at_k,
    propensities,
    psndcg_at_k,
    psprecision_at_k,
)

# ---------------------------------------------------------------------------
# Loop twins: literal definitions
# ---------------------------------------------------------------------------


def _dense(M) -> np.ndarray:
    return M.toarray() if sp.issparse(M) else np.asarray(M)


def _loop_top(ranking, k: int) -> list[list[int]]:
    """Each row's first k labels: label indices as given, or scores sorted (decreasing, then index)."""
    R = _dense(ranking)
    if R.dtype.kind in "iu":
        return [[int(l) for l in row[:k]] for row in R]
    return [sorted(range(len(row)), key=lambda l: (-row[l], l))[:k] for row in R.tolist()]


def _loop_sets(Y) -> list[set[int]]:
    Y = _dense(Y)
    return [{l for l in range(Y.shape[1]) if Y[i, l]} for i in range(Y.shape[0])]


def _disc(position: int) -> float:  # position from 0
    return 1 / math.log2(position + 2)


def loop_precision_at_k(Y, ranking, k):
    sets, tops = _loop_sets(Y), _loop_top(ranking, k)
    return sum(sum(l in y for l in top) / k for y, top in zip(sets, tops, strict=True)) / len(sets)


def loop_ndcg_at_k(Y, ranking, k):
    total = 0.0
    sets, tops = _loop_sets(Y), _loop_top(ranking, k)
    for y, top in zip(sets, tops, strict=True):
        if y:
            dcg = sum(_disc(r) for r, l in enumerate(top) if l in y)
            total += dcg / sum(_disc(r) for r in range(min(k, len(y))))
    return total / len(sets)


def _loop_ps(Y, ranking, k, inv, discount):
    gain = best = 0.0
    for y, top in zip(_loop_sets(Y), _loop_top(ranking, k), strict=True):
        gain += sum(inv[l] * discount(r) for r, l in enumerate(top) if l in y)
        ideal = sorted((inv[l] for l in y), reverse=True)[:k]
        best += sum(w * discount(r) for r, w in enumerate(ideal))
    return gain / best if best else math.nan


def loop_psprecision_at_k(Y, ranking, k, inv):
    return _loop_ps(Y, ranking, k, inv, lambda r: 1.0)


def loop_psndcg_at_k(Y, ranking, k, inv):
    return _loop_ps(Y, ranking, k, inv, _disc)


def loop_propensities(Y, A=0.55, B=1.5):
    Y = _dense(Y)
    n, L = Y.shape
    C = (math.log(n) - 1) * (B + 1) ** A
    return [1 / (1 + C * math.exp(-A * math.log(sum(int(Y[i, l]) for i in range(n)) + B))) for l in range(L)]


def same(a: float, b: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12)


def fast_and_slow(Y, ranking, k, p):
    """(fast, loop twin) value pairs of the four metrics."""
    inv = [1 / v for v in p]
    return {
        "precision": (precision_at_k(Y, ranking, k), loop_precision_at_k(Y, ranking, k)),
        "ndcg": (ndcg_at_k(Y, ranking, k), loop_ndcg_at_k(Y, ranking, k)),
        "psprecision": (psprecision_at_k(Y, ranking, k, propensities=p), loop_psprecision_at_k(Y, ranking, k, inv)),
        "psndcg": (psndcg_at_k(Y, ranking, k, propensities=p), loop_psndcg_at_k(Y, ranking, k, inv)),
    }


def full_ranking(S) -> np.ndarray:
    """Every label of every row, best first, by the tie rule (the twin's sort)."""
    return np.array(_loop_top(S, _dense(S).shape[1]), dtype=np.intp).reshape(_dense(S).shape)


# ---------------------------------------------------------------------------
# Data
# ---------------------------------------------------------------------------


def make_case(rng: np.random.Generator, n: int, L: int):
    """Random (Y, S, p) with the corner cases built in.

    Row 0: no true label; row 1: every label; the last label: nobody has it. Scores are
    quantised to a few levels around 0 (ties, zeros and negative scores in every row), row 2
    is fully tied. ``p`` are propensities in (0, 1].
    """
    Y = rng.random((n, L)) < 0.35
    if n > 0:
        Y[0] = False
    if n > 1:
        Y[1] = True
    if L > 2:
        Y[:, -1] = False
    S = np.round(rng.random((n, L)) * 4 - 1.5) / 2  # -0.5 .. 1.0 in steps of 0.5, many zeros
    if n > 2:
        S[2] = 0.5
    p = rng.uniform(0.05, 1.0, size=L)
    return Y, S, p


SHAPES = [(1, 1), (3, 2), (6, 5), (12, 9), (30, 20)]


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("k", [1, 2, 3, 5, 8])
def test_loop_twins(seed, shape, k):
    Y, S, p = make_case(np.random.default_rng(seed), *shape)
    inputs = [(Y, S), (sp.csr_matrix(Y), S), (Y, sp.csr_matrix(S)), (sp.csr_matrix(Y), sp.csr_array(S))]
    if k <= shape[1]:  # a labels array holds at most L labels
        labels = full_ranking(S)
        inputs += [(Y, labels), (sp.csr_matrix(Y), labels[:, :k].astype(np.int32))]
    for Yx, R in inputs:
        for name, (fast, slow) in fast_and_slow(Yx, R, k, p).items():
            assert type(fast) is float
            assert same(fast, slow), (name, type(Yx), type(R), fast, slow)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_loop_twins_hypothesis(data):
    n = data.draw(st.integers(1, 7))
    L = data.draw(st.integers(1, 7))
    k = data.draw(st.integers(1, 9))
    Y = data.draw(arrays(np.bool_, (n, L)))
    S = data.draw(arrays(np.float64, (n, L), elements=st.sampled_from([0.0, -0.0, 0.25, 0.5, 1.0, -3.0])))
    p = data.draw(arrays(np.float64, L, elements=st.floats(0.01, 1.0)))
    for R in [S, sp.csr_matrix(S)] + ([full_ranking(S)[:, : data.draw(st.integers(k, L))]] if k <= L else []):
        for name, (fast, slow) in fast_and_slow(Y, R, k, p).items():
            assert same(fast, slow), (name, fast, slow)


# ---------------------------------------------------------------------------
# Hand-computed cases
# ---------------------------------------------------------------------------

TOY_Y = np.array([[1, 0, 1, 0], [0, 1, 0, 0], [0, 0, 0, 0]])
# row 0 ranks 0, 1, 3 (tied at 0.5, lower index first), then 2; row 1 ranks 1, 2 (tied), 0, 3
TOY_S = np.array([[0.5, 0.5, 0.2, 0.5], [0.1, 0.9, 0.9, 0.0], [1.0, 0.0, 0.0, 0.0]])
TOY_P = np.array([0.5, 0.25, 1.0, 0.5])  # weights 1/p = 2, 4, 1, 2
LOG3, LOG5 = math.log2(3), math.log2(5)


@pytest.mark.parametrize(
    "func, k, expected",
    [
        (precision_at_k, 1, 2 / 3),  # row 0: label 0 relevant; row 1: label 1; empty row 2: 0
        (precision_at_k, 3, (1 / 3 + 1 / 3 + 0) / 3),  # label 2 (tied 0.9, higher index) is out of row 1's top 1
        (precision_at_k, 5, (2 / 5 + 1 / 5 + 0) / 3),  # k > L: positions 5.. hold no label
        (ndcg_at_k, 1, (1 + 1 + 0) / 3),
        (ndcg_at_k, 3, (1 / (1 + 1 / LOG3) + 1 + 0) / 3),  # row 0: relevant at 1 (and 4), ideal 2 at the top
        (ndcg_at_k, 5, ((1 + 1 / LOG5) / (1 + 1 / LOG3) + 1 + 0) / 3),
    ],
)
def test_toy(func, k, expected):
    assert func(TOY_Y, TOY_S, k=k) == pytest.approx(expected, rel=1e-12)
    assert func(sp.csr_matrix(TOY_Y), sp.csr_matrix(TOY_S), k=k) == pytest.approx(expected, rel=1e-12)
    if k <= 4:
        assert func(TOY_Y, [[0, 1, 3, 2], [1, 2, 0, 3], [0, 1, 2, 3]], k=k) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize(
    "func, k, expected",
    [
        # gains: row 0 label 0 (2), row 1 label 1 (4); best: 2 and 4 at k = 1, 2 + 1 and 4 at k >= 2
        (psprecision_at_k, 1, (2 + 4) / (2 + 4)),
        (psprecision_at_k, 3, (2 + 4) / (3 + 4)),
        (psprecision_at_k, 5, (2 + 1 + 4) / (3 + 4)),  # row 0's label 2 at position 4
        (psndcg_at_k, 1, 1.0),
        (psndcg_at_k, 3, (2 + 4) / (2 + 1 / LOG3 + 4)),
        (psndcg_at_k, 5, (2 + 1 / LOG5 + 4) / (2 + 1 / LOG3 + 4)),
    ],
)
def test_toy_propensity_scored(func, k, expected):
    assert func(TOY_Y, TOY_S, k=k, propensities=TOY_P) == pytest.approx(expected, rel=1e-12)
    assert func(sp.csr_matrix(TOY_Y), sp.coo_matrix(TOY_S), k=k, propensities=list(TOY_P)) == pytest.approx(
        expected, rel=1e-12
    )


def test_ps_normalisation_is_a_ratio_of_sums_not_a_mean_of_ratios():
    # row 0: a rare label (weight 4) ranked first; row 1: a common one (weight 1) missed
    Y = np.array([[1, 0, 0], [0, 0, 1]])
    S = np.array([[1.0, 0.0, 0.0], [1.0, 0.5, 0.0]])
    p = np.array([0.25, 1.0, 1.0])
    assert psprecision_at_k(Y, S, k=1, propensities=p) == pytest.approx(4 / (4 + 1))  # per-row mean: 0.5
    assert psndcg_at_k(Y, S, k=1, propensities=p) == pytest.approx(4 / (4 + 1))


def test_k_larger_than_the_true_labels():
    Y = np.array([[0, 1, 0, 0, 0, 0]])
    S = np.array([[0.0, 0.9, 0.1, 0.2, 0.3, 0.4]])
    assert precision_at_k(Y, S, k=5) == pytest.approx(1 / 5)  # denominator k, not |Y|
    assert ndcg_at_k(Y, S, k=5) == 1.0  # ideal DCG of min(k, |Y|) = 1 label
    assert psprecision_at_k(Y, S, k=5, propensities=np.full(6, 0.5)) == 1.0
    assert ndcg_at_k(Y, [[2, 1, 0]], k=3) == pytest.approx(1 / LOG3)


def test_rows_without_labels():
    Y = np.zeros((3, 4), dtype=int)
    S = np.arange(12.0).reshape(3, 4)
    assert precision_at_k(Y, S, k=2) == 0.0
    assert ndcg_at_k(Y, S, k=2) == 0.0
    assert math.isnan(psprecision_at_k(Y, S, k=2, propensities=np.ones(4)))
    assert math.isnan(psndcg_at_k(sp.csr_matrix(Y), S, k=2, propensities=np.ones(4)))
    # an empty row counts in the mean of P@k and nDCG@k, not in the PS sums
    Y[0, 3] = 1
    assert precision_at_k(Y, S, k=1) == pytest.approx(1 / 3)
    assert ndcg_at_k(Y, S, k=1) == pytest.approx(1 / 3)
    assert psprecision_at_k(Y, S, k=1, propensities=np.ones(4)) == 1.0


def test_sparse_scores_missing_entries_score_zero():
    # stored: label 1 at -1, label 3 at 2; missing labels 0 and 2 score 0 and rank by index
    S = sp.csr_matrix(([-1.0, 2.0], ([0, 0], [1, 3])), shape=(1, 4))
    assert full_ranking(S).tolist() == [[3, 0, 2, 1]]
    Y = np.array([[0, 0, 1, 0]])
    assert precision_at_k(Y, S, k=2) == 0.0
    assert precision_at_k(Y, S, k=3) == pytest.approx(1 / 3)
    assert precision_at_k([[0, 1, 0, 0]], S, k=3) == 0.0  # a negative score ranks below the missing zeros
    S_stored_zero = sp.csr_matrix((np.array([0.0, -1.0, 2.0]), ([0, 0, 0], [2, 1, 3])), shape=(1, 4))
    assert precision_at_k(Y, S_stored_zero, k=2) == 0.0  # a stored zero is a missing entry
    duplicates = sp.coo_matrix(([1.0, 1.0], ([0, 0], [2, 2])), shape=(1, 4))  # summed to 2
    assert precision_at_k(Y, duplicates, k=1) == 1.0


def test_labels_array_equals_score_matrix(rng):
    Y, S, p = make_case(rng, 50, 12)
    labels = full_ranking(S)
    for k in (1, 3, 5, 12):
        for kp in {k, min(12, k + 2)}:
            R = labels[:, :kp]
            assert precision_at_k(Y, R, k) == precision_at_k(Y, S, k)
            assert ndcg_at_k(Y, R, k) == ndcg_at_k(Y, S, k)
            assert psprecision_at_k(Y, R, k, propensities=p) == psprecision_at_k(Y, S, k, propensities=p)
            assert psndcg_at_k(Y, R, k, propensities=p) == psndcg_at_k(Y, S, k, propensities=p)


@pytest.mark.parametrize("fmt", [sp.csr_matrix, sp.csc_matrix, sp.coo_matrix, sp.lil_matrix, sp.csr_array])
def test_sparse_equals_dense(rng, fmt):
    Y, S, p = make_case(rng, 40, 10)
    Yu = sp.csr_matrix(Y.astype(float))
    Yu.indices = Yu.indices.copy()
    Yu.has_sorted_indices = False
    for func in (precision_at_k, ndcg_at_k):
        want = func(Y, S, 4)
        assert func(fmt(Y.astype(np.int8)), S, 4) == want
        assert func(Y, fmt(S), 4) == want
        assert func(fmt(Y), fmt(S), 4) == want
    for func in (psprecision_at_k, psndcg_at_k):
        want = func(Y, S, 4, propensities=p)
        assert func(fmt(Y), fmt(S), 4, propensities=p) == want
        assert func(fmt(Y), S.astype(np.float32), 4, propensities=p) == func(Y, S.astype(np.float32), 4, propensities=p)


def test_bool_scores_and_integer_label_dtypes(rng):
    Y, S, _ = make_case(rng, 20, 6)
    B = S > 0
    assert same(precision_at_k(Y, B, 3), loop_precision_at_k(Y, B.astype(float), 3))
    labels = full_ranking(S)
    for dtype in (np.int8, np.uint16, np.int64):
        assert ndcg_at_k(Y, labels.astype(dtype), 3) == ndcg_at_k(Y, S, 3)
    assert ndcg_at_k(Y.tolist(), labels.tolist(), 3) == ndcg_at_k(Y, S, 3)


def test_block_seams(rng):
    # tiny blocks (a few rows each) must give the one-block values
    Y, S, p = make_case(rng, 300, 40)
    labels = full_ranking(S)[:, :7]
    Ys = sp.csr_matrix(Y)
    want = {(f.__name__, k): f(Y, S, k, **kw) for f, kw in [
        (precision_at_k, {}), (ndcg_at_k, {}), (psprecision_at_k, {"propensities": p}),
        (psndcg_at_k, {"propensities": p})] for k in (1, 5)}
    with config_context(working_memory=0.02):
        for (name, k), value in want.items():
            f = globals()[name]
            kw = {"propensities": p} if name.startswith("ps") else {}
            for Yx, R in [(Y, S), (Ys, sp.csr_matrix(S)), (Ys, labels)]:
                assert f(Yx, R, k, **kw) == pytest.approx(value, rel=1e-12), (name, k)


# ---------------------------------------------------------------------------
# Propensities
# ---------------------------------------------------------------------------


def test_propensities_formula_and_twin(rng):
    Y = rng.random((40, 7)) < 0.3
    Y[:, 0] = False  # a label nobody has: the smallest propensity
    Y[:, 1] = True
    for A, B in [(0.55, 1.5), (0.5, 0.4), (0.6, 2.6)]:
        got = propensities(Y, A, B)
        assert got.shape == (7,) and got.dtype == np.float64
        np.testing.assert_allclose(got, loop_propensities(Y, A, B), rtol=1e-13)
        np.testing.assert_array_equal(got, propensities(sp.csr_matrix(Y), A=A, B=B))
        assert np.all((got > 0) & (got < 1))
        assert got[0] == got.min() and got[1] == got.max()
    # N = 10, N_l = 2, A = 0.5, B = 1: p = 1 / (1 + (ln 10 - 1) sqrt(2) / sqrt(3))
    Y = np.zeros((10, 1), dtype=int)
    Y[:2] = 1
    assert propensities(Y, A=0.5, B=1)[0] == pytest.approx(1 / (1 + (math.log(10) - 1) * math.sqrt(2 / 3)))


def test_y_train_gives_the_default_propensities(rng):
    Y, S, _ = make_case(rng, 30, 8)
    Y_train = rng.random((50, 8)) < 0.2
    p = propensities(Y_train)
    for func in (psprecision_at_k, psndcg_at_k):
        assert func(Y, S, 3, Y_train=Y_train) == func(Y, S, 3, propensities=p)
        assert func(Y, S, 3, Y_train=sp.csr_matrix(Y_train)) == func(Y, S, 3, propensities=p)


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"Y_train": [[1, 0], [0, 1]]}, ValueError, r"at least 3 rows.*got N = 2"),
        ({"Y_train": np.eye(3), "A": 0}, ValueError, r"A must be positive and finite; got A=0"),
        ({"Y_train": np.eye(3), "B": -1.0}, ValueError, r"B must be positive"),
        ({"Y_train": np.eye(3), "B": float("nan")}, ValueError, r"B must be positive"),
        ({"Y_train": np.eye(3), "A": "0.5"}, TypeError, r"A must be a real number"),
        ({"Y_train": [[0, 2], [1, 0], [1, 1]]}, ValueError, r"Y_train must be a binary"),
    ],
)
def test_propensities_errors(kwargs, error, match):
    with pytest.raises(error, match=match):
        propensities(**kwargs)


# ---------------------------------------------------------------------------
# Properties
# ---------------------------------------------------------------------------


@st.composite
def problems(draw):
    n = draw(st.integers(1, 8))
    L = draw(st.integers(1, 7))
    Y = draw(arrays(np.bool_, (n, L)))
    S = draw(arrays(np.float64, (n, L), elements=st.floats(-5, 5, allow_nan=False, width=16)))
    p = draw(arrays(np.float64, L, elements=st.floats(0.01, 1.0)))
    k = draw(st.integers(1, 8))
    return Y, S, p, k


@settings(max_examples=80, deadline=None)
@given(problem=problems())
def test_bounds(problem):
    Y, S, p, k = problem
    for func, kw in [(precision_at_k, {}), (ndcg_at_k, {}), (psprecision_at_k, {"propensities": p}),
                     (psndcg_at_k, {"propensities": p})]:
        v = func(Y, S, k, **kw)
        if math.isnan(v):
            assert func in (psprecision_at_k, psndcg_at_k) and not Y.any()
        else:
            assert -1e-12 <= v <= 1 + 1e-12, (func.__name__, v)


@settings(max_examples=80, deadline=None)
@given(problem=problems())
def test_perfect_ranking(problem):
    Y, _, p, k = problem
    # relevant labels above the others, rarest (largest 1/p) first: perfect for all four
    S = Y * (1 + 1 / p)
    sizes = Y.sum(axis=1)
    assert precision_at_k(Y, S, k) == pytest.approx(np.mean(np.minimum(k, sizes) / k))
    assert ndcg_at_k(Y, S, k) == pytest.approx(np.mean(sizes > 0))
    if Y.any():
        assert ndcg_at_k(Y[sizes > 0], S[sizes > 0], k) == pytest.approx(1.0)
        assert psprecision_at_k(Y, S, k, propensities=p) == pytest.approx(1.0)
        assert psndcg_at_k(Y, S, k, propensities=p) == pytest.approx(1.0)


# ---------------------------------------------------------------------------
# Bad input
# ---------------------------------------------------------------------------

Y3 = np.array([[1, 0, 0], [0, 1, 1]])
S3 = np.array([[0.2, 0.1, 0.0], [0.3, 0.1, 0.2]])


@pytest.mark.parametrize(
    "ranking, k, error, match",
    [
        (S3, 0, ValueError, r"k must be at least 1; got k=0"),
        (S3, -2, ValueError, r"k must be at least 1"),
        (S3, 1.5, TypeError, r"k must be an integer; got 1.5"),
        (S3, True, TypeError, r"k must be an integer"),
        (np.array([[0, 1], [2, 0]]), 3, ValueError, r"ranking holds k'=2 labels a row, fewer than k=3"),
        (np.array([[0, 1]]), 1, ValueError, r"ranking \(label indices\) must have shape \(n_samples, k'\) = \(2, k'\)"),
        (np.array([0, 1]), 1, ValueError, r"must have shape \(n_samples, k'\)"),
        (np.array([[0, 3], [1, 0]]), 2, ValueError, r"label indices outside \[0, 3\): found 3"),
        (np.array([[0, -1], [1, 0]]), 2, ValueError, r"outside \[0, 3\): found -1"),
        (np.array([[0, 0], [1, 0]]), 2, ValueError, r"repeats a label.*row 0.*read as label indices"),
        (S3[:, :2], 1, ValueError, r"Y_true \(2, 3\) and ranking \(2, 2\)"),
        (sp.csr_matrix(S3[:1]), 1, ValueError, r"Y_true \(2, 3\) and ranking \(1, 3\)"),
        (np.array([[np.nan, 0, 0], [0, 0, 0]]), 1, ValueError, r"ranking must be finite; found NaN"),
        (sp.csr_matrix(np.array([[0, 0, 0], [0, np.inf, 0]])), 1, ValueError,
         r"ranking must be finite; found inf.*rows 1\.\.1"),
        (np.array([["a", "b", "c"]] * 2), 1, ValueError, r"ranking must be a real-valued matrix"),
        (sp.csr_matrix(np.array([[1j, 0, 0], [0, 0, 0]])), 1, ValueError, r"ranking must be a real-valued matrix"),
    ],
)
def test_bad_ranking_and_k(ranking, k, error, match):
    for func, kw in [(precision_at_k, {}), (psndcg_at_k, {"propensities": np.ones(3)})]:
        with pytest.raises(error, match=match):
            func(Y3, ranking, k, **kw)


def test_labels_beyond_k_are_not_checked():
    # only the first k columns are read: a repeat or a bad index after them does not matter
    assert precision_at_k(Y3, np.array([[0, 0, 9], [1, 1, -1]]), k=1) == 1.0


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({}, r"need the label propensities: pass Y_train .* or propensities"),
        ({"propensities": np.ones(3), "Y_train": np.eye(3)}, r"either Y_train or propensities, not both"),
        ({"propensities": np.ones(2)}, r"propensities must have shape \(n_labels,\) = \(3,\); got shape \(2,\)"),
        ({"propensities": np.ones((1, 3))}, r"got shape \(1, 3\)"),
        ({"propensities": [1.0, 0.0, 0.5]}, r"positive and finite; found \[0.0\] at label\(s\) \[1\]"),
        ({"propensities": [1.0, -1, np.nan]}, r"positive and finite; found \[-1.0, nan\]"),
        ({"propensities": ["a", "b", "c"]}, r"propensities must be real numbers"),
        ({"Y_train": np.eye(4)}, r"Y_train must have the 3 label columns of Y_true; got 4"),
    ],
)
def test_bad_propensities(kwargs, match):
    for func in (psprecision_at_k, psndcg_at_k):
        with pytest.raises(ValueError, match=match):
            func(Y3, S3, 1, **kwargs)


# ---------------------------------------------------------------------------
# Memory: a sparse Y_true (and sparse scores) with many labels are never densified
# ---------------------------------------------------------------------------


def test_many_labels_stay_sparse(rng):
    n, L, c = 2_000, 1_000_000, 5
    rows = np.repeat(np.arange(n), c)
    Y = sp.csr_matrix((np.ones(n * c), (rows, rng.integers(0, L, n * c))), shape=(n, L))
    Y.data[:] = 1  # a label drawn twice in a row was summed
    S = sp.csr_matrix((rng.random(n * 20), (np.repeat(np.arange(n), 20), rng.integers(0, L, n * 20))), shape=(n, L))
    labels = rng.permuted(np.tile(np.arange(50), (n, 1)), axis=1)
    p = np.full(L, 0.5)
    tracemalloc.start()
    try:
        values = [precision_at_k(Y, S, 5), ndcg_at_k(Y, labels, 5), psprecision_at_k(Y, S, 5, propensities=p)]
        result = evaluate(Y, scores=S, metrics=["precision_at_5", "psndcg_at_3"], propensities=p)
        values.append(result["precision_at_5"])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # one dense (n, L) bool array would be 2 GB; the inverse propensities take 8 MB
    assert peak < 64 * 2**20, peak / 2**20
    assert values[0] == values[3]
    assert all(0 <= v <= 1 for v in values)


# ---------------------------------------------------------------------------
# METRICS, evaluate, cross-validation and the command line
# ---------------------------------------------------------------------------

AT_K_NAMES = [f"{kind}_at_{k}" for kind in ("precision", "ndcg", "psprecision", "psndcg") for k in (1, 3, 5)]


def test_evaluate_matches_the_functions(rng):
    Y, S, _ = make_case(rng, 40, 9)
    Y_train = rng.random((60, 9)) < 0.3
    got = evaluate(Y, scores=S, metrics=AT_K_NAMES, Y_train=Y_train)
    assert list(got) == AT_K_NAMES
    for name, value in got.items():
        kind, k = name.rsplit("_at_", 1)
        kw = {"Y_train": Y_train} if kind.startswith("ps") else {}
        assert value == METRICS[name](Y, S, **kw) == globals()[f"{kind}_at_k"](Y, S, int(k), **kw), name
    # sparse scores, alone (kept sparse) and beside a metric that densifies them
    assert evaluate(Y, scores=sp.csr_matrix(S), metrics=AT_K_NAMES, Y_train=Y_train) == got
    both = evaluate(Y, scores=sp.csr_matrix(S), metrics=["ndcg_at_3", "one_error"], propensities=propensities(Y_train))
    assert both["ndcg_at_3"] == got["ndcg_at_3"]


def test_evaluate_needs_y_train_for_the_ps_metrics(rng):
    Y, S, _ = make_case(rng, 10, 4)
    with pytest.raises(ValueError, match=r"metric 'psndcg_at_3' is propensity-scored and needs Y_train"):
        evaluate(Y, scores=S, metrics=["precision_at_1", "psndcg_at_3"])
    with pytest.raises(ValueError, match=r"ranking metric and needs scores"):
        evaluate(Y, Y, metrics=["precision_at_1"])
    assert evaluate(Y, scores=S, metrics=["precision_at_1"]) == {"precision_at_1": precision_at_k(Y, S, 1)}
    assert not set(evaluate(Y, Y, S)) & set(AT_K_NAMES)  # computed only when named


def test_cross_validate_passes_each_split_its_training_labels(rng):
    from mlneighbors.model_selection import cross_validate

    X = rng.normal(size=(90, 4))
    Y = np.column_stack([X[:, 0] > 0, X[:, 1] > 0.5, X[:, 0] + X[:, 2] > 0.3, X[:, 3] > 1]).astype(int)
    splits = list(KFold(3, shuffle=True, random_state=0).split(X))
    names = ["precision_at_1", "ndcg_at_3", "psprecision_at_3", "psndcg_at_1"]
    res = cross_validate(KNeighborsClassifier(5), X, Y, cv=splits, metrics=names)
    for fold, (train, test) in enumerate(splits):
        model = KNeighborsClassifier(5).fit(X[train], Y[train])
        S = np.column_stack([p[:, 1] for p in model.predict_proba(X[test])])
        want = evaluate(Y[test], scores=S, metrics=names, Y_train=Y[train])
        for name in names:
            assert res.per_fold[name][fold] == pytest.approx(want[name], rel=1e-12), name


def test_command_line_accepts_the_new_names(shared_data, capsys):
    from mlneighbors import MLkNN
    from mlneighbors.cli import main
    from mlneighbors.datasets import load_dataset

    argv = ["evaluate", "emotions", "--model", "mlknn", "--split", "--format", "json",
            "--metrics", "precision_at_1,ndcg_at_3,psprecision_at_3,psndcg_at_5", "--scale", "none",
            "--data-home", str(shared_data)]
    assert main(argv) == 0
    got = {r["metric"]: r["value"] for r in json.loads(capsys.readouterr().out)["results"]}
    tr, te = (load_dataset("emotions", s, shared_data) for s in ("train", "test"))
    scores = MLkNN().fit(tr.X, tr.Y).predict_proba(te.X)
    want = evaluate(te.Y, scores=scores, metrics=["precision_at_1", "ndcg_at_3", "psprecision_at_3", "psndcg_at_5"],
                    Y_train=tr.Y)
    for name, value in want.items():
        assert got[name] == pytest.approx(value), name
