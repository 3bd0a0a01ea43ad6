"""Tests for mlneighbors.metrics.

Every fast metric has a loop twin here, written literally from the definition
(one instance / one label at a time, Python sets and sorted()), and compared on
random data with the corner cases built in.
"""

from __future__ import annotations

import dataclasses
import doctest
import math
import warnings
from collections.abc import Callable

import numpy as np
import pytest
import scipy.sparse as sp
import sklearn.metrics as skm
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from mlneighbors import metrics as M
from mlneighbors.metrics import (
    METRICS,
    Metric,
    average_precision,
    coverage,
    evaluate,
    example_accuracy,
    example_f1,
    example_precision,
    example_recall,
    hamming_loss,
    label_map,
    macro_f1,
    macro_precision,
    macro_recall,
    micro_f1,
    micro_precision,
    micro_recall,
    one_error,
    ranking_loss,
    subset_accuracy,
)

BIPARTITION_NAMES = [
    "hamming_loss",
    "subset_accuracy",
    "example_accuracy",
    "example_precision",
    "example_recall",
    "example_f1",
    "micro_precision",
    "micro_recall",
    "micro_f1",
    "macro_precision",
    "macro_recall",
    "macro_f1",
]
RANKING_NAMES = [
    "one_error",
    "coverage",
    "normalized_coverage",
    "ranking_loss",
    "average_precision",
    "label_map",
]
# the at-k metrics (tests/test_metrics_at_k.py); ranking metrics, computed only when named
AT_K_NAMES = [f"{kind}_at_{k}" for kind in ("precision", "ndcg", "psprecision", "psndcg") for k in (1, 3, 5)]
PS_NAMES = [name for name in AT_K_NAMES if name.startswith("ps")]


# ---------------------------------------------------------------------------
# Loop twins: literal definitions
# ---------------------------------------------------------------------------


def _sets(Y: np.ndarray) -> list[set[int]]:
    return [{l for l in range(Y.shape[1]) if Y[i, l]} for i in range(Y.shape[0])]


def loop_hamming_loss(Y, Z):
    n, L = Y.shape
    return sum(len(y ^ z) / L for y, z in zip(_sets(Y), _sets(Z), strict=True)) / n


def loop_subset_accuracy(Y, Z):
    return sum(y == z for y, z in zip(_sets(Y), _sets(Z), strict=True)) / Y.shape[0]


def loop_example_accuracy(Y, Z):
    total = 0.0
    for y, z in zip(_sets(Y), _sets(Z), strict=True):
        total += 1.0 if not (y | z) else len(y & z) / len(y | z)
    return total / Y.shape[0]


def loop_example_precision(Y, Z):
    total = 0.0
    for y, z in zip(_sets(Y), _sets(Z), strict=True):
        if not z:
            total += 1.0 if not y else 0.0
        else:
            total += len(y & z) / len(z)
    return total / Y.shape[0]


def loop_example_recall(Y, Z):
    total = 0.0
    for y, z in zip(_sets(Y), _sets(Z), strict=True):
        if not y:
            total += 1.0 if not z else 0.0
        else:
            total += len(y & z) / len(y)
    return total / Y.shape[0]


def loop_example_f1(Y, Z):
    total = 0.0
    for y, z in zip(_sets(Y), _sets(Z), strict=True):
        total += 1.0 if not y and not z else 2 * len(y & z) / (len(y) + len(z))
    return total / Y.shape[0]


def _loop_label_counts(Y, Z, l):
    tp = fp = fn = 0
    for i in range(Y.shape[0]):
        if Y[i, l] and Z[i, l]:
            tp += 1
        elif Z[i, l]:
            fp += 1
        elif Y[i, l]:
            fn += 1
    return tp, fp, fn


def _loop_prf(tp, fp, fn):
    if tp + fp + fn == 0:
        return 1.0, 1.0, 1.0
    p = 0.0 if tp + fp == 0 else tp / (tp + fp)
    r = 0.0 if tp + fn == 0 else tp / (tp + fn)
    f = 2 * tp / (2 * tp + fp + fn)
    return p, r, f


def _loop_micro(Y, Z, which):
    TP = FP = FN = 0
    for l in range(Y.shape[1]):
        tp, fp, fn = _loop_label_counts(Y, Z, l)
        TP, FP, FN = TP + tp, FP + fp, FN + fn
    return _loop_prf(TP, FP, FN)[which]


def _loop_macro(Y, Z, which):
    L = Y.shape[1]
    return sum(_loop_prf(*_loop_label_counts(Y, Z, l))[which] for l in range(L)) / L


def _loop_ranks(s) -> dict[int, int]:
    """Strict ranks (1 = top): decreasing score, ties by increasing label index."""
    order = sorted(range(len(s)), key=lambda l: (-s[l], l))
    return {l: pos + 1 for pos, l in enumerate(order)}


def loop_one_error(Y, S):
    errors = 0
    for i, y in enumerate(_sets(Y)):
        rank = _loop_ranks(S[i])
        top = next(l for l, r in rank.items() if r == 1)
        errors += top not in y
    return errors / Y.shape[0]


def loop_coverage(Y, S, normalize=False):
    total = 0
    for i, y in enumerate(_sets(Y)):
        rank = _loop_ranks(S[i])
        total += max(rank[l] for l in y) - 1 if y else 0
    value = total / Y.shape[0]
    return value / Y.shape[1] if normalize else value


def loop_ranking_loss(Y, S):
    L = Y.shape[1]
    total = 0.0
    for i, y in enumerate(_sets(Y)):
        rank = _loop_ranks(S[i])
        irrelevant = set(range(L)) - y
        if not y or not irrelevant:
            continue
        wrong = sum(1 for r in y for s in irrelevant if rank[s] < rank[r])
        total += wrong / (len(y) * len(irrelevant))
    return total / Y.shape[0]


def loop_average_precision(Y, S):
    values = []
    for i, y in enumerate(_sets(Y)):
        if not y:
            continue
        rank = _loop_ranks(S[i])
        values.append(sum(sum(1 for q in y if rank[q] <= rank[r]) / rank[r] for r in y) / len(y))
    return sum(values) / len(values) if values else math.nan


def loop_label_map(Y, S):
    n, L = Y.shape
    aps = []
    for l in range(L):
        order = sorted(range(n), key=lambda i: (-S[i, l], i))
        positives = [pos + 1 for pos, i in enumerate(order) if Y[i, l]]
        if not positives:
            continue
        aps.append(sum((k + 1) / p for k, p in enumerate(positives)) / len(positives))
    return sum(aps) / len(aps) if aps else math.nan


LOOP_TWINS: dict[str, Callable] = {
    "hamming_loss": loop_hamming_loss,
    "subset_accuracy": loop_subset_accuracy,
    "example_accuracy": loop_example_accuracy,
    "example_precision": loop_example_precision,
    "example_recall": loop_example_recall,
    "example_f1": loop_example_f1,
    "micro_precision": lambda Y, Z: _loop_micro(Y, Z, 0),
    "micro_recall": lambda Y, Z: _loop_micro(Y, Z, 1),
    "micro_f1": lambda Y, Z: _loop_micro(Y, Z, 2),
    "macro_precision": lambda Y, Z: _loop_macro(Y, Z, 0),
    "macro_recall": lambda Y, Z: _loop_macro(Y, Z, 1),
    "macro_f1": lambda Y, Z: _loop_macro(Y, Z, 2),
    "one_error": loop_one_error,
    "coverage": loop_coverage,
    "normalized_coverage": lambda Y, S: loop_coverage(Y, S, normalize=True),
    "ranking_loss": loop_ranking_loss,
    "average_precision": loop_average_precision,
    "label_map": loop_label_map,
}


def same(a: float, b: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12)


# ---------------------------------------------------------------------------
# Data
# ---------------------------------------------------------------------------


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(20240607)


def make_case(rng: np.random.Generator, n: int, L: int, *, levels: int | None = 4):
    """Random (Y, Z, S) with the corner cases built in.

    Row 0: no relevant label; row 1: every label relevant; row 2: empty
    predicted set; row 3: both sets empty; the last label: nobody has it and
    nobody predicts it. ``levels`` quantises the scores so that ties occur
    (None: continuous scores, ties improbable).
    """
    Y = rng.random((n, L)) < 0.4
    Z = np.where(rng.random((n, L)) < 0.3, ~Y, Y)  # Y with some flips
    if n > 0:
        Y[0] = False
    if n > 1:
        Y[1] = True
    if n > 2:
        Z[2] = False
    if n > 3:
        Y[3] = False
        Z[3] = False
    if L > 2:
        Y[:, -1] = False
        Z[:, -1] = False
    S = rng.random((n, L))
    if levels is not None:
        S = np.round(S * levels) / levels
    if n > 4:
        S[4] = 0.5  # a fully tied row
    return Y, Z, S


SHAPES = [(1, 1), (1, 5), (6, 1), (5, 2), (10, 4), (25, 7), (40, 12)]


def label_weights(Y) -> np.ndarray:
    """Propensities in (1/2, 1) that follow the label columns (permuting labels permutes them)."""
    counts = np.asarray(sp.csr_matrix(np.asarray(Y, dtype=float) if not sp.issparse(Y) else Y).sum(axis=0)).ravel()
    return (1 + counts) / (2 + counts)


def all_values(Y, Z, S) -> dict[str, float]:
    def value(m: Metric) -> float:
        if m.kind == "bipartition":
            return m.func(Y, Z)
        if m.needs_propensities:
            return m.func(Y, S, propensities=label_weights(Y))
        return m.func(Y, S)

    return {name: value(m) for name, m in METRICS.items()}


# ---------------------------------------------------------------------------
# Loop twins vs fast versions
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("levels", [4, None])
def test_loop_twins(seed, shape, levels):
    Y, Z, S = make_case(np.random.default_rng(seed), *shape, levels=levels)
    fast = all_values(Y, Z, S)
    for name, twin in LOOP_TWINS.items():
        slow = twin(Y, Z) if METRICS[name].kind == "bipartition" else twin(Y, S)
        assert same(fast[name], slow), (name, fast[name], slow)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_loop_twins_hypothesis(data):
    n = data.draw(st.integers(1, 7))
    L = data.draw(st.integers(1, 6))
    Y = data.draw(arrays(np.bool_, (n, L)))
    Z = data.draw(arrays(np.bool_, (n, L)))
    S = data.draw(arrays(np.float64, (n, L), elements=st.sampled_from([0.0, 0.25, 0.5, 1.0, -3.0])))
    fast = all_values(Y, Z, S)
    for name, twin in LOOP_TWINS.items():
        slow = twin(Y, Z) if METRICS[name].kind == "bipartition" else twin(Y, S)
        assert same(fast[name], slow), (name, fast[name], slow)


def test_block_seams_match_chunked_evaluation(rng):
    # 2100 x 1000 spans several of the internal blocks (~2**20 entries each, by rows for
    # the row metrics, by labels for label_map); chunks of 300 rows / 150 labels fit in
    # one block each, so agreement checks the seams.
    n, L = 2100, 1000
    Y = rng.random((n, L)) < 0.05
    Y[:, 7] = False
    Z = np.where(rng.random((n, L)) < 0.05, ~Y, Y)
    S = np.round(rng.random((n, L)) * 50) / 50
    got = evaluate(Y, Z, S)
    row_chunks = [slice(a, a + 300) for a in range(0, n, 300)]
    for name in ["hamming_loss", "subset_accuracy", "example_f1", "one_error", "coverage", "ranking_loss"]:
        f = METRICS[name]
        parts = [f(Y[c], Z[c] if f.kind == "bipartition" else S[c]) for c in row_chunks]
        assert got[name] == pytest.approx(np.mean(parts), rel=1e-10), name
    # average precision skips rows without relevant labels: weight by their count
    weights = [int(Y[c].any(axis=1).sum()) for c in row_chunks]
    parts = [average_precision(Y[c], S[c]) for c in row_chunks]
    assert got["average_precision"] == pytest.approx(np.average(parts, weights=weights), rel=1e-10)
    # micro / macro from per-label counts: macro over label chunks
    col_chunks = [slice(a, a + 150) for a in range(0, L, 150)]
    sizes = [len(range(L)[c]) for c in col_chunks]
    parts = [macro_f1(Y[:, c], Z[:, c]) for c in col_chunks]
    assert got["macro_f1"] == pytest.approx(np.average(parts, weights=sizes), rel=1e-10)
    weights = [int(Y[:, c].any(axis=0).sum()) for c in col_chunks]
    parts = [label_map(Y[:, c], S[:, c]) for c in col_chunks]
    assert got["label_map"] == pytest.approx(np.average(parts, weights=weights), rel=1e-10)


# ---------------------------------------------------------------------------
# Hand-computed toy cases
# ---------------------------------------------------------------------------

Y_TOY = np.array([[1, 0, 1, 0], [0, 1, 0, 0]])
Z_TOY = np.array([[1, 1, 0, 0], [0, 1, 0, 0]])


@pytest.mark.parametrize(
    "func, expected",
    [
        (hamming_loss, 2 / 8),
        (subset_accuracy, 1 / 2),
        (example_accuracy, (1 / 3 + 1) / 2),
        (example_precision, (1 / 2 + 1) / 2),
        (example_recall, (1 / 2 + 1) / 2),
        (example_f1, (2 / 4 + 1) / 2),
        (micro_precision, 2 / 3),  # tp=2 fp=1 fn=1
        (micro_recall, 2 / 3),
        (micro_f1, 2 / 3),
        # labels: (tp,fp,fn) = (1,0,0) (1,1,0) (0,0,1) (0,0,0)
        (macro_precision, (1 + 1 / 2 + 0 + 1) / 4),
        (macro_recall, (1 + 1 + 0 + 1) / 4),
        (macro_f1, (1 + 2 / 3 + 0 + 1) / 4),
    ],
)
def test_toy_bipartition(func, expected):
    value = func(Y_TOY, Z_TOY)
    assert type(value) is float
    assert value == pytest.approx(expected, abs=1e-15)


Y_RANK = np.array([[1, 0, 1, 0], [0, 1, 0, 0], [0, 0, 0, 0]])
S_RANK = np.array([[0.9, 0.8, 0.1, 0.2], [0.5, 0.4, 0.3, 0.2], [0.1, 0.2, 0.3, 0.3]])


@pytest.mark.parametrize(
    "func, expected",
    [
        # row 0 ranks l0 l1 l3 l2; row 1 ranks l0 l1 l2 l3; row 2 has no relevant label
        (one_error, 2 / 3),  # row 1 top is l0 (irrelevant); row 2 counts as an error
        (coverage, (3 + 1 + 0) / 3),
        (lambda Y, S: coverage(Y, S, normalize=True), (3 + 1 + 0) / 12),
        (ranking_loss, (2 / 4 + 1 / 3 + 0) / 3),
        (average_precision, ((1 + 2 / 4) / 2 + 1 / 2) / 2),  # row 2 skipped
        # label 2: instances 1 and 2 tie at 0.3 -> instance 1 first; the positive (0) is third.
        # label 3: no positive instance -> left out.
        (label_map, (1 + 1 / 2 + 1 / 3) / 3),
    ],
)
def test_toy_ranking(func, expected):
    value = func(Y_RANK, S_RANK)
    assert type(value) is float
    assert value == pytest.approx(expected, abs=1e-15)


def test_tie_rule_lower_label_index_ranks_first():
    # all scores equal: the ranking is label 0, 1, 2, 3
    Y = np.array([[0, 0, 1, 0]])
    S = np.full((1, 4), 0.7)
    assert one_error(Y, S) == 1.0
    assert coverage(Y, S) == 2.0
    assert ranking_loss(Y, S) == pytest.approx(2 / 3)  # labels 0 and 1 above label 2
    assert average_precision(Y, S) == pytest.approx(1 / 3)
    # label 0 relevant and tied with everyone: it is on top
    Y0 = np.array([[1, 0, 0, 0]])
    assert one_error(Y0, S) == 0.0
    assert ranking_loss(Y0, S) == 0.0
    assert average_precision(Y0, S) == 1.0


def test_label_map_instance_ties_lower_index_first():
    Y = np.array([[0], [1]])
    S = np.array([[0.5], [0.5]])
    assert label_map(Y, S) == 0.5  # instance 0 ranked first, the positive is second
    assert label_map(Y[::-1], S) == 1.0


def test_one_error_counts_rows_without_relevant_labels_as_errors():
    Y = np.zeros((3, 2), dtype=int)
    assert one_error(Y, np.random.default_rng(0).random((3, 2))) == 1.0


def test_undefined_means_are_nan():
    Y = np.zeros((3, 2), dtype=int)
    S = np.random.default_rng(0).random((3, 2))
    assert math.isnan(average_precision(Y, S))
    assert math.isnan(label_map(Y, S))
    # ...while the other ranking metrics are defined
    assert coverage(Y, S) == 0.0
    assert ranking_loss(Y, S) == 0.0


def test_all_empty_bipartitions_are_perfect():
    Y = np.zeros((4, 3), dtype=int)
    for name in BIPARTITION_NAMES:
        expected = 0.0 if name == "hamming_loss" else 1.0
        assert METRICS[name](Y, Y) == expected, name


def test_zero_denominator_rules():
    # one instance: truth non-empty, prediction empty
    assert example_precision([[1, 0]], [[0, 0]]) == 0.0
    assert example_recall([[1, 0]], [[0, 0]]) == 0.0
    # truth empty, prediction non-empty
    assert example_recall([[0, 0]], [[0, 1]]) == 0.0
    assert example_precision([[0, 0]], [[0, 1]]) == 0.0
    assert example_f1([[0, 0]], [[0, 1]]) == 0.0
    assert example_accuracy([[0, 0]], [[0, 1]]) == 0.0
    # pooled counts follow the per-label rule
    assert micro_precision([[1, 0]], [[0, 0]]) == 0.0  # tp+fp = 0, fn > 0
    assert micro_recall([[0, 0]], [[0, 1]]) == 0.0  # tp+fn = 0, fp > 0
    assert micro_f1([[0, 0]], [[0, 0]]) == 1.0  # tp+fp+fn = 0
    # per label: label 0 never predicted, label 1 never true
    assert macro_precision([[1, 0]], [[0, 1]]) == 0.0
    assert macro_recall([[1, 0]], [[0, 1]]) == 0.0


# ---------------------------------------------------------------------------
# scikit-learn: documented differences and agreement
# ---------------------------------------------------------------------------


def test_sklearn_coverage_error_is_ours_plus_one_on_rows_with_labels(rng):
    Y, _, S = make_case(rng, 60, 8, levels=None)  # continuous scores: no ties
    S[4] = rng.random(8)
    has = Y.any(axis=1)
    assert not has.all()
    assert skm.coverage_error(Y[has], S[has]) == pytest.approx(coverage(Y[has], S[has]) + 1)
    # rows without relevant labels score 0 in both
    assert skm.coverage_error(Y, S) == pytest.approx(coverage(Y, S) + has.mean())


def test_sklearn_macro_f1_scores_absent_labels_zero(rng):
    Y, Z, _ = make_case(rng, 50, 6)
    absent = ((Y | Z).sum(axis=0) == 0).sum()
    assert absent >= 1  # the last label
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sk_default = skm.f1_score(Y, Z, average="macro")
    assert macro_f1(Y, Z) == pytest.approx(sk_default + absent / Y.shape[1])
    assert macro_f1(Y, Z) == pytest.approx(skm.f1_score(Y, Z, average="macro", zero_division=1.0))


def test_sklearn_samples_jaccard_scores_empty_rows_zero(rng):
    Y, Z, _ = make_case(rng, 50, 6)
    empty_empty = (~Y.any(axis=1) & ~Z.any(axis=1)).sum()
    assert empty_empty >= 1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sk = skm.jaccard_score(Y, Z, average="samples")
    assert example_accuracy(Y, Z) == pytest.approx(sk + empty_empty / Y.shape[0])


def test_sklearn_lrap_counts_rows_without_labels_as_one(rng):
    Y, _, S = make_case(rng, 60, 8, levels=None)
    S[4] = rng.random(8)
    has = Y.any(axis=1)
    n_rel, n_empty = int(has.sum()), int((~has).sum())
    assert n_empty >= 1
    sk = skm.label_ranking_average_precision_score(Y, S)
    assert sk * len(Y) == pytest.approx(average_precision(Y, S) * n_rel + n_empty)
    assert skm.label_ranking_average_precision_score(Y[has], S[has]) == pytest.approx(
        average_precision(Y[has], S[has])
    )


def test_sklearn_agreement_where_definitions_coincide(rng):
    Y = rng.random((80, 7)) < 0.4
    Z = np.where(rng.random((80, 7)) < 0.25, ~Y, Y)
    Y[np.arange(7), np.arange(7)] = True  # every label occurs
    Z[np.arange(7) + 7, np.arange(7)] = True  # every label is predicted
    S = rng.random((80, 7))  # no ties
    assert hamming_loss(Y, Z) == pytest.approx(skm.hamming_loss(Y, Z))
    assert subset_accuracy(Y, Z) == pytest.approx(skm.accuracy_score(Y, Z))
    assert micro_f1(Y, Z) == pytest.approx(skm.f1_score(Y, Z, average="micro"))
    assert micro_precision(Y, Z) == pytest.approx(skm.precision_score(Y, Z, average="micro"))
    assert micro_recall(Y, Z) == pytest.approx(skm.recall_score(Y, Z, average="micro"))
    assert macro_f1(Y, Z) == pytest.approx(skm.f1_score(Y, Z, average="macro"))
    assert macro_precision(Y, Z) == pytest.approx(skm.precision_score(Y, Z, average="macro"))
    assert macro_recall(Y, Z) == pytest.approx(skm.recall_score(Y, Z, average="macro"))
    assert ranking_loss(Y, S) == pytest.approx(skm.label_ranking_loss(Y, S))
    assert label_map(Y, S) == pytest.approx(skm.average_precision_score(Y, S, average="macro"))
    rows = Y.any(axis=1) & Z.any(axis=1)
    for ours, theirs in [
        (example_f1, skm.f1_score),
        (example_precision, skm.precision_score),
        (example_recall, skm.recall_score),
        (example_accuracy, skm.jaccard_score),
    ]:
        assert ours(Y[rows], Z[rows]) == pytest.approx(theirs(Y[rows], Z[rows], average="samples"))


# ---------------------------------------------------------------------------
# Properties
# ---------------------------------------------------------------------------


@st.composite
def label_problems(draw, *, ties: bool = True):
    n = draw(st.integers(1, 8))
    L = draw(st.integers(1, 6))
    Y = draw(arrays(np.bool_, (n, L)))
    Z = draw(arrays(np.bool_, (n, L)))
    if ties:
        S = draw(
            arrays(np.float64, (n, L), elements=st.floats(-5, 5, allow_nan=False, allow_infinity=False, width=16))
        )
    else:  # distinct scores in every row
        S = np.array([draw(st.permutations(range(L))) for _ in range(n)], dtype=np.float64)
    return Y, Z, S


@settings(max_examples=60, deadline=None)
@given(problem=label_problems())
def test_bounds(problem):
    Y, Z, S = problem
    L = Y.shape[1]
    upper = {"coverage": L - 1.0, "normalized_coverage": (L - 1) / L}
    for name, v in all_values(Y, Z, S).items():
        assert type(v) is float
        if math.isnan(v):  # only the means that skip, and only when all is skipped
            assert name in ["average_precision", "label_map", *PS_NAMES], name
            assert not Y.any()
            continue
        assert -1e-12 <= v <= upper.get(name, 1.0) + 1e-12, (name, v)


@settings(max_examples=60, deadline=None)
@given(problem=label_problems(), noise=st.floats(0, 0.49))
def test_perfect_prediction_scores_perfectly(problem, noise):
    Y, _, _ = problem
    S = Y + noise * np.random.default_rng(0).random(Y.shape)  # relevant labels score above irrelevant ones
    values = all_values(Y, Y, S)
    assert values["hamming_loss"] == 0.0
    for name in BIPARTITION_NAMES[1:]:
        assert values[name] == 1.0, name
    assert values["ranking_loss"] == 0.0
    has = Y.any(axis=1)
    assert values["one_error"] == pytest.approx(1 - has.mean())  # 0 when every row has a label
    assert values["coverage"] == pytest.approx(np.maximum(Y.sum(axis=1) - 1, 0).mean())
    if has.any():
        assert values["average_precision"] == pytest.approx(1.0)
        assert values["label_map"] == pytest.approx(1.0)


@settings(max_examples=60, deadline=None)
@given(problem=label_problems(ties=False), data=st.data())
def test_label_permutation_invariance(problem, data):
    Y, Z, S = problem
    perm = np.array(data.draw(st.permutations(range(Y.shape[1]))))
    before = all_values(Y, Z, S)
    after = all_values(Y[:, perm], Z[:, perm], S[:, perm])
    for name in before:
        assert same(before[name], after[name]) or before[name] == pytest.approx(after[name]), name


@settings(max_examples=40, deadline=None)
@given(problem=label_problems())
def test_label_permutation_invariance_with_ties_for_bipartition_and_map(problem):
    # ties in scores make ranking metrics depend on label order, but not label_map
    # (which ranks instances within one label) nor the bipartition metrics
    Y, Z, S = problem
    perm = np.arange(Y.shape[1])[::-1]
    before = all_values(Y, Z, S)
    after = all_values(Y[:, perm], Z[:, perm], S[:, perm])
    for name in BIPARTITION_NAMES + ["label_map"]:
        assert same(before[name], after[name]) or before[name] == pytest.approx(after[name]), name


# ---------------------------------------------------------------------------
# Input types
# ---------------------------------------------------------------------------

SPARSE_FORMATS = [sp.csr_matrix, sp.csc_matrix, sp.coo_matrix, sp.lil_matrix, sp.csr_array, sp.coo_array]


@pytest.mark.parametrize("fmt", SPARSE_FORMATS, ids=lambda f: f.__name__)
def test_sparse_equals_dense(rng, fmt):
    Y, Z, S = make_case(rng, 30, 6)
    dense = all_values(Y, Z, S)
    for Ys, Zs, Ss in [
        (fmt(Y.astype(np.int8)), fmt(Z.astype(np.float64)), S),  # sparse labels
        (fmt(Y), Z, fmt(S)),  # mixed + sparse scores
        (Y, fmt(Z), S),
    ]:
        got = all_values(Ys, Zs, Ss)
        for name in dense:
            assert same(dense[name], got[name]), (name, fmt)


def test_sparse_explicit_zeros_and_dense_dtypes(rng):
    Y, Z, S = make_case(rng, 20, 5)
    Ys = sp.csr_matrix(Y.astype(float))
    Ys.data[:3] = 0.0  # stored zeros are not labels
    Yd = Ys.toarray()
    assert all_values(Ys, Z, S) == pytest.approx(all_values(Yd, Z, S), nan_ok=True)
    ref = all_values(Y, Z, S)
    for Yc, Zc, Sc in [
        (Y.astype(int), Z.astype(np.uint8), S.astype(np.float32).astype(np.float64)),
        (Y.tolist(), Z.astype(float).tolist(), S.tolist()),
    ]:
        got = all_values(Yc, Zc, Sc)
        for name in ref:
            assert same(ref[name], got[name]), name


def test_integer_and_float32_scores(rng):
    Y, _, _ = make_case(rng, 20, 5)
    S_int = rng.integers(0, 4, size=Y.shape).astype(np.uint8)  # unsigned: must not wrap when negated
    for name in RANKING_NAMES:
        assert same(METRICS[name](Y, S_int), LOOP_TWINS[name](Y, S_int.astype(float))), name
    S32 = rng.random(Y.shape).astype(np.float32)
    for name in RANKING_NAMES:
        assert same(METRICS[name](Y, S32), LOOP_TWINS[name](Y, S32.astype(float))), name


# ---------------------------------------------------------------------------
# Registry and evaluate
# ---------------------------------------------------------------------------


def test_metrics_registry():
    assert set(METRICS) == set(BIPARTITION_NAMES + RANKING_NAMES + AT_K_NAMES)
    assert list(METRICS) == BIPARTITION_NAMES + [
        "one_error",
        "coverage",
        "normalized_coverage",
        "ranking_loss",
        "average_precision",
        "label_map",
    ] + AT_K_NAMES
    for name, m in METRICS.items():
        assert isinstance(m, Metric)
        assert m.name == name
        assert m.kind == ("bipartition" if name in BIPARTITION_NAMES else "ranking")
        assert m.needs_propensities == (name in PS_NAMES)
        if name in AT_K_NAMES:
            kind, k = name.rsplit("_at_", 1)
            assert m.func.func is getattr(M, f"{kind}_at_k") and m.func.keywords == {"k": int(k)}
        elif name not in ("normalized_coverage",):
            assert m.func is getattr(M, name)
    lower = {"hamming_loss", "one_error", "coverage", "normalized_coverage", "ranking_loss"}
    assert {n for n, m in METRICS.items() if not m.greater_is_better} == lower
    with pytest.raises(dataclasses.FrozenInstanceError):
        METRICS["micro_f1"].name = "x"  # type: ignore[misc]
    Y, _, S = make_case(np.random.default_rng(1), 10, 4)
    assert METRICS["normalized_coverage"](Y, S) == coverage(Y, S, normalize=True)


def test_evaluate_matches_individual_functions(rng):
    Y, Z, S = make_case(rng, 40, 9)
    result = evaluate(Y, Z, S)
    assert list(result) == BIPARTITION_NAMES + RANKING_NAMES
    expected = all_values(Y, Z, S)
    for name in result:
        assert type(result[name]) is float
        assert same(result[name], expected[name]), name
    named = evaluate(Y, Z, S, metrics=list(METRICS), propensities=label_weights(Y))
    assert list(named) == list(METRICS)
    for name in METRICS:
        assert type(named[name]) is float
        assert same(named[name], expected[name]), name


def test_evaluate_selects_by_given_inputs(rng):
    Y, Z, S = make_case(rng, 10, 3)
    assert list(evaluate(Y, Z)) == BIPARTITION_NAMES
    assert list(evaluate(Y, scores=S)) == RANKING_NAMES
    assert list(evaluate(Y, Z, S, metrics=["label_map", "hamming_loss", "label_map"])) == [
        "label_map",
        "hamming_loss",
    ]
    assert evaluate(Y, Z, metrics="micro_f1") == {"micro_f1": micro_f1(Y, Z)}
    assert evaluate(Y, scores=S, metrics=iter(["coverage"])) == {"coverage": coverage(Y, S)}


def test_evaluate_errors(rng):
    Y, Z, S = make_case(rng, 10, 3)
    with pytest.raises(ValueError, match=r"unknown metric.*'f2'.*valid names.*hamming_loss"):
        evaluate(Y, Z, metrics=["micro_f1", "f2"])
    with pytest.raises(ValueError, match="ranking metric and needs scores"):
        evaluate(Y, Z, metrics=["micro_f1", "one_error"])
    with pytest.raises(ValueError, match="bipartition metric and needs Y_pred"):
        evaluate(Y, scores=S, metrics=["micro_f1"])
    with pytest.raises(ValueError, match="needs Y_pred .*and/or scores"):
        evaluate(Y)
    with pytest.raises(ValueError, match="same shape"):
        evaluate(Y, Z, S[:, :2])


# ---------------------------------------------------------------------------
# Bad input
# ---------------------------------------------------------------------------


def test_shape_mismatch_names_both_shapes():
    with pytest.raises(ValueError, match=r"Y_true \(3, 2\) and Y_pred \(3, 4\)"):
        hamming_loss(np.zeros((3, 2)), np.zeros((3, 4)))
    with pytest.raises(ValueError, match=r"Y_true \(3, 2\) and scores \(2, 2\)"):
        one_error(np.zeros((3, 2)), np.zeros((2, 2)))
    with pytest.raises(ValueError, match=r"Y_true \(3, 2\) and Y_pred \(2, 3\)"):
        micro_f1(sp.csr_matrix(np.zeros((3, 2))), sp.csr_matrix(np.zeros((2, 3))))


@pytest.mark.parametrize(
    "bad, shown",
    [
        (np.array([[0, 2], [1, 0]]), "2"),
        (np.array([[0.5, 1.0]]), "0.5"),
        (np.array([[-1, 1]]), "-1"),
        (np.array([[np.nan, 1.0]]), "nan"),
        (sp.csr_matrix(np.array([[0, 3], [1, 0]])), "3"),
    ],
)
def test_non_binary_labels_are_named(bad, shown):
    good = np.zeros(bad.shape)
    with pytest.raises(ValueError, match=rf"Y_pred must be a binary.*{shown}"):
        micro_f1(good, bad)
    with pytest.raises(ValueError, match=rf"Y_true must be a binary.*{shown}"):
        ranking_loss(bad, np.zeros(bad.shape))


def test_non_numeric_labels():
    with pytest.raises(ValueError, match="Y_true must be numeric"):
        hamming_loss(np.array([["a", "b"]]), np.zeros((1, 2)))


@pytest.mark.parametrize("value, word", [(np.nan, "NaN"), (np.inf, "inf"), (-np.inf, "-inf")])
def test_non_finite_scores(value, word):
    S = np.zeros((3, 2))
    S[1, 1] = value
    for func in [one_error, coverage, ranking_loss, average_precision, label_map]:
        with pytest.raises(ValueError, match=rf"scores must be finite; found {word}"):
            func(np.zeros((3, 2)), S)


def test_one_dimensional_inputs():
    with pytest.raises(ValueError, match=r"Y_true must be a 2-D.*1-D"):
        hamming_loss([0, 1, 1], [[0, 1, 1]])
    with pytest.raises(ValueError, match=r"Y_pred must be a 2-D.*1-D"):
        hamming_loss([[0, 1, 1]], [0, 1, 1])
    with pytest.raises(ValueError, match=r"scores must be a 2-D.*1-D"):
        coverage([[0, 1, 1]], [0.1, 0.2, 0.3])
    with pytest.raises(ValueError, match=r"2-D"):
        evaluate(np.zeros((2, 2, 2)), np.zeros((2, 2, 2)))


def test_one_dimensional_sparse_inputs():
    one_d = sp.coo_array(np.array([0, 1, 1]))
    if one_d.ndim == 2:  # an older scipy (1.10 here) has no 1-D sparse array: the input is one row
        assert one_d.shape == (1, 3) and micro_f1(one_d, [[0, 1, 1]]) == 1.0
        return
    with pytest.raises(ValueError, match=r"Y_true must be a 2-D.*1-D"):
        micro_f1(one_d, [[0, 1, 1]])


def test_empty_inputs():
    with pytest.raises(ValueError, match="at least one sample and one label"):
        hamming_loss(np.zeros((0, 3)), np.zeros((0, 3)))
    with pytest.raises(ValueError, match="at least one sample and one label"):
        one_error(np.zeros((2, 0)), np.zeros((2, 0)))


def test_complex_scores_rejected():
    with pytest.raises(ValueError, match="real-valued"):
        coverage([[0, 1]], np.array([[1j, 0]]))


def test_docstring_examples():
    failures, tried = doctest.testmod(M, verbose=False)
    assert tried > 15
    assert failures == 0
