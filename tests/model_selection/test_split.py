"""Iterative stratification and MultilabelStratifiedKFold: loop twin, properties, the splitter protocol."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from sklearn.model_selection import GridSearchCV, KFold
from sklearn.model_selection import cross_validate as sk_cross_validate
from sklearn.neighbors import KNeighborsClassifier

from mlneighbors.model_selection import MultilabelStratifiedKFold, iterative_stratification

# ---------------------------------------------------------------------------
# Helpers and fixtures
# ---------------------------------------------------------------------------


def loop_iterative_stratification(Y, n_splits, *, shuffle=False, random_state=None):
    """Slow twin: Algorithm 1 of Sechidis et al., one example at a time.

    Uses the paper's fractional desired counts (``c_j = n r_j``,
    ``c_j^i = |D^i| r_j``) and draws random numbers exactly as the fast
    version documents: the shuffle permutation, then per label a tie-break
    index among equally rare labels and a (n_splits, n_examples) matrix of
    uniforms, one per (fold, slot); the empty rows last, likewise.
    """
    rng = np.random.RandomState(random_state)
    Y = np.asarray(Y).astype(bool)
    n, n_labels = Y.shape
    k = n_splits
    order = rng.permutation(n) if shuffle else np.arange(n)
    Y = Y[order]
    want_total = np.full(k, n / k)
    want_label = np.tile(Y.sum(axis=0) / k, (k, 1))
    remaining = Y.sum(axis=0)
    folds = np.full(n, -1)

    while (remaining > 0).any():
        fewest = remaining[remaining > 0].min()
        candidates = np.flatnonzero(remaining == fewest)
        label = candidates[rng.randint(candidates.size)] if candidates.size > 1 else candidates[0]
        rows = [i for i in range(n) if Y[i, label] and folds[i] < 0]
        tie = rng.random_sample((k, len(rows)))
        taken = np.zeros(k, dtype=int)
        for i in rows:
            fold = max(range(k), key=lambda j: (want_label[j, label], want_total[j], tie[j, taken[j]]))
            folds[i] = fold
            taken[fold] += 1
            want_label[fold, Y[i]] -= 1
            want_total[fold] -= 1
            remaining[Y[i]] -= 1

    rest = [i for i in range(n) if folds[i] < 0]
    tie = rng.random_sample((k, len(rest)))
    taken = np.zeros(k, dtype=int)
    for i in rest:
        fold = max(range(k), key=lambda j: (want_total[j], tie[j, taken[j]]))
        folds[i] = fold
        taken[fold] += 1
        want_total[fold] -= 1

    result = np.empty(n, dtype=int)
    result[order] = folds
    return result


def skewed_labels(rng, n=400, n_labels=12, *, empty_rows=True):
    """Label frequencies from 1% to 40%; optionally drop the all-zero rows."""
    Y = (rng.random((n, n_labels)) < np.geomspace(0.01, 0.4, n_labels)).astype(np.int8)
    return Y if empty_rows else Y[Y.sum(axis=1) > 0]


def folds_from(splitter, Y):
    folds = np.full(Y.shape[0], -1)
    for j, (_, test) in enumerate(splitter.split(np.zeros((Y.shape[0], 1)), Y)):
        folds[test] = j
    return folds


def label_deviation(Y, folds, k):
    """Mean absolute deviation of the per-fold label proportions from the overall ones."""
    Y = np.asarray(Y, dtype=float)
    per_fold = np.array([Y[folds == j].mean(axis=0) for j in range(k)])
    return float(np.mean(np.abs(per_fold - Y.mean(axis=0))))


@pytest.fixture
def toy():
    """Corner cases built in: empty rows, an all-one row, a label nobody has, a rare label."""
    Y = np.array(
        [
            [1, 0, 0, 0, 1],
            [1, 1, 0, 0, 0],
            [0, 1, 0, 0, 0],
            [1, 1, 1, 0, 1],
            [0, 0, 0, 0, 0],
            [1, 0, 0, 0, 1],
            [0, 1, 0, 0, 1],
            [1, 1, 1, 1, 1],
            [0, 0, 0, 0, 0],
            [1, 0, 0, 0, 0],
            [0, 1, 0, 0, 1],
            [1, 0, 1, 0, 0],
        ]
    )
    return Y


@pytest.mark.parametrize("shuffle", [False, True])
@pytest.mark.parametrize("seed", [0, 1, 7])
def test_matches_loop_twin(toy, rng, shuffle, seed):
    for Y, k in [(toy, 3), (toy, 4), (skewed_labels(rng, 150, 8), 5)]:
        fast = iterative_stratification(Y, k, shuffle=shuffle, random_state=seed)
        slow = loop_iterative_stratification(Y, k, shuffle=shuffle, random_state=seed)
        np.testing.assert_array_equal(fast, slow)


@settings(max_examples=40, deadline=None)
@given(
    Y=arrays(np.int8, st.tuples(st.integers(4, 30), st.integers(1, 6)), elements=st.integers(0, 1)),
    k=st.integers(2, 4),
    shuffle=st.booleans(),
    seed=st.integers(0, 2**31 - 1),
)
def test_matches_loop_twin_property(Y, k, shuffle, seed):
    fast = iterative_stratification(Y, k, shuffle=shuffle, random_state=seed)
    slow = loop_iterative_stratification(Y, k, shuffle=shuffle, random_state=seed)
    np.testing.assert_array_equal(fast, slow)


@pytest.mark.parametrize("k", [2, 3, 5])
def test_split_partitions_samples(toy, k):
    cv = MultilabelStratifiedKFold(n_splits=k, shuffle=True, random_state=0)
    assert cv.get_n_splits() == k
    splits = list(cv.split(np.zeros((len(toy), 2)), toy))
    assert len(splits) == k
    tests = np.concatenate([test for _, test in splits])
    np.testing.assert_array_equal(np.sort(tests), np.arange(len(toy)))
    for train, test in splits:
        assert train.dtype.kind == "i" and test.dtype.kind == "i"
        np.testing.assert_array_equal(np.sort(np.concatenate([train, test])), np.arange(len(toy)))
        assert np.all(np.diff(test) > 0) and np.all(np.diff(train) > 0)


def test_fold_sizes_even_with_empty_rows(rng):
    Y = skewed_labels(rng)  # about 15% rows without a label fill the gaps
    for seed in range(5):
        sizes = np.bincount(iterative_stratification(Y, 5, shuffle=True, random_state=seed))
        assert sizes.max() - sizes.min() <= 1


def test_fold_sizes_close_without_empty_rows(rng):
    Y = skewed_labels(rng, empty_rows=False)
    k = 5
    for seed in range(5):
        sizes = np.bincount(iterative_stratification(Y, k, shuffle=True, random_state=seed), minlength=k)
        assert sizes.max() - sizes.min() <= 0.25 * len(Y) / k


def test_rarest_label_spread_over_distinct_folds():
    # Label 0 (3 examples) is the rarest, so it is placed first: one per fold.
    Y = np.zeros((30, 2), dtype=int)
    Y[[2, 11, 20], 0] = 1
    Y[::2, 1] = 1
    for seed in range(5):
        folds = iterative_stratification(Y, 5, random_state=seed)
        assert len(set(folds[[2, 11, 20]])) == 3


def test_label_balance_better_than_kfold(rng):
    Y = skewed_labels(rng)
    k = 5
    ours = np.mean(
        [label_deviation(Y, iterative_stratification(Y, k, shuffle=True, random_state=s), k) for s in range(5)]
    )
    kfold = np.mean(
        [label_deviation(Y, folds_from(KFold(k, shuffle=True, random_state=s), Y), k) for s in range(5)]
    )
    assert ours < 0.5 * kfold


def test_label_balance_comparable_with_reference(rng):
    ml_stratifiers = pytest.importorskip("iterstrat.ml_stratifiers")
    k = 5
    for Y in (skewed_labels(rng), skewed_labels(rng, empty_rows=False)):
        seeds = range(5)
        ours = [iterative_stratification(Y, k, shuffle=True, random_state=s) for s in seeds]
        ref = [
            folds_from(ml_stratifiers.MultilabelStratifiedKFold(n_splits=k, shuffle=True, random_state=s), Y)
            for s in seeds
        ]
        dev_ours = np.mean([label_deviation(Y, f, k) for f in ours])
        dev_ref = np.mean([label_deviation(Y, f, k) for f in ref])
        assert dev_ours <= 1.5 * dev_ref + 1e-12
        spread_ours = np.mean([np.ptp(np.bincount(f, minlength=k)) for f in ours])
        spread_ref = np.mean([np.ptp(np.bincount(f, minlength=k)) for f in ref])
        assert spread_ours <= 2 * spread_ref + 2


def test_seeded_determinism(rng):
    Y = skewed_labels(rng)
    for shuffle in (False, True):
        a = folds_from(MultilabelStratifiedKFold(4, shuffle=shuffle, random_state=3), Y)
        b = folds_from(MultilabelStratifiedKFold(4, shuffle=shuffle, random_state=3), Y)
        np.testing.assert_array_equal(a, b)
    c = folds_from(MultilabelStratifiedKFold(4, shuffle=True, random_state=4), Y)
    assert not np.array_equal(a, c)
    # A RandomState instance advances: two split calls differ, but the same
    # seed reproduces the same sequence.
    cv1 = MultilabelStratifiedKFold(4, shuffle=True, random_state=np.random.RandomState(5))
    cv2 = MultilabelStratifiedKFold(4, shuffle=True, random_state=np.random.RandomState(5))
    np.testing.assert_array_equal(folds_from(cv1, Y), folds_from(cv2, Y))


def test_sparse_and_bool_inputs_give_same_folds(rng):
    Y = skewed_labels(rng, 200, 6)
    dense = iterative_stratification(Y, 4, shuffle=True, random_state=0)
    for other in (sp.csr_matrix(Y), sp.csc_matrix(Y), sp.coo_matrix(Y), Y.astype(bool), Y.tolist()):
        np.testing.assert_array_equal(iterative_stratification(other, 4, shuffle=True, random_state=0), dense)


def test_all_rows_empty_and_labels_without_positives():
    folds = iterative_stratification(np.zeros((10, 3)), 3, random_state=0)
    assert sorted(np.bincount(folds).tolist()) == [3, 3, 4]


@pytest.mark.parametrize(
    ("n_splits", "error", "match"),
    [(1, ValueError, "n_splits must be at least 2"), (2.5, TypeError, "n_splits must be an int"),
     (True, TypeError, "n_splits must be an int"), (13, ValueError, "greater than the number of samples")],
)
def test_invalid_n_splits(toy, n_splits, error, match):
    with pytest.raises(error, match=match):
        list(MultilabelStratifiedKFold(n_splits).split(None, toy))


@pytest.mark.parametrize(
    ("Y", "match"),
    [
        (np.array([0, 1, 1, 0]), "2-D"),
        (np.array([[0, 2], [1, 0], [1, 1]]), r"values in \{0, 1\}"),
        (np.array([[-1, 1], [1, -1], [1, 1]]), r"values in \{0, 1\}"),
        (np.array([[0.0, np.nan], [1, 0], [1, 1]]), r"values in \{0, 1\}"),
        (sp.csr_matrix(np.array([[0, 3], [1, 0], [1, 1]])), r"values in \{0, 1\}"),
        (None, "needs y"),
    ],
)
def test_invalid_label_matrix(Y, match):
    with pytest.raises(ValueError, match=match):
        list(MultilabelStratifiedKFold(2).split(None, Y))


def test_split_checks_x_length(toy):
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        list(MultilabelStratifiedKFold(2).split(np.zeros((5, 2)), toy))


def test_repr():
    cv = MultilabelStratifiedKFold(4, shuffle=True, random_state=2)
    assert repr(cv) == "MultilabelStratifiedKFold(n_splits=4, random_state=2, shuffle=True)"


def test_usable_in_scikit_learn(data):
    X, Y = data
    cv = MultilabelStratifiedKFold(3, shuffle=True, random_state=0)
    res = sk_cross_validate(KNeighborsClassifier(5), X, Y, cv=cv)
    assert res["test_score"].shape == (3,)
    search = GridSearchCV(KNeighborsClassifier(), {"n_neighbors": [1, 5]}, cv=cv).fit(X, Y)
    assert search.best_params_["n_neighbors"] in (1, 5)
    assert search.n_splits_ == 3
