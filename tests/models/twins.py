"""Loop twins of every model: the formulas of the user guide, one instance and one label at a
time, with a brute-force neighbour search of their own.

The formulas and tie rules transcribed are those of ``docs/user_guide/``: ``index.rst`` (the
shared conventions: neighbour order, leave-one-out), ``mlknn_family.rst`` (ML-kNN, DML-kNN,
LAML-kNN), ``brknn_family.rst`` (BRkNN and its extensions, LPkNN), ``bknn_blda.rst`` (BKNN's
scores, thresholds and signal test, BLDA's scatter matrices) and ``hybrid.rst`` (the label
model and the candidate windows).

The count-based classifiers (ML-kNN, BRkNN, LPkNN, DML-kNN, LAML-kNN) come first, then the
kernels of BKNN, BLDA and the hybrid kNN, written with Python lists, ``sorted`` and
``bisect``.

Nothing here imports the package: these are transcriptions of those pages, written to be
obviously correct, not fast.  Every twin returns ``(scores, predictions)`` as nested lists
(queries x labels) of floats and 0/1 ints.

Score reporting conventions (the same pages, "Tie rule" and "What the scores mean for ranking
metrics"), which the twins follow:

- ML-kNN, DML-kNN, LAML-kNN: a predicted label (``a >= b``) whose score ``a / (a + b)``
  is exactly 0.5 is reported as the next float above 0.5; ``a + b == 0`` (only without
  smoothing) scores 0.5; a likelihood whose denominator is 0 (only without smoothing) is 0;
- BRkNN and LPkNN: the score is the smoothed vote fraction ``(C + 1) / (k + 1.5)``.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections import Counter
from fractions import Fraction

import numpy as np
import scipy.sparse as sp

ABOVE_HALF = math.nextafter(0.5, 1.0)


def as_rows(A):
    """A dense or sparse matrix as a list of lists of Python numbers."""
    A = A.toarray() if sp.issparse(A) else np.asarray(A)
    return A.tolist()


# -- neighbours ---------------------------------------------------------------------------


def squared_distance(x, y):
    return sum((a - b) * (a - b) for a, b in zip(x, y, strict=True))


def nearest(X, q, k, exclude=None):
    """The k rows of X nearest to q, by (distance, row number); row ``exclude`` left out."""
    candidates = []
    for i, x in enumerate(X):
        if i == exclude:
            continue
        candidates.append((squared_distance(x, q), i))  # same order as the distance itself
    candidates.sort()
    return [i for _, i in candidates[:k]]


def neighbours_of_queries(X, Q, k):
    X, Q = as_rows(X), as_rows(Q)
    return [nearest(X, q, k) for q in Q]


def neighbours_leave_one_out(X, k):
    X = as_rows(X)
    return [nearest(X, X[i], k, exclude=i) for i in range(len(X))]


def count_vector(Y, neighbours, l):
    """C_x(l): how many of the neighbours carry label l."""
    return sum(Y[a][l] for a in neighbours)


# -- the Bayesian decision shared by ML-kNN, DML-kNN, LAML-kNN ------------------------------


def report(a, b):
    """(score, prediction) of one cell from a = P(H1) P(E|H1), b = P(H0) P(E|H0)."""
    predicted = 1 if a >= b else 0
    score = 0.5 if a + b == 0 else a / (a + b)
    if predicted and score == 0.5:
        score = ABOVE_HALF
    return score, predicted


def likelihood(s, count, counts_of_label):
    """(s + c[j]) / (s (k + 1) + sum_j c[j]); 0 where the denominator is 0."""
    denominator = s * len(counts_of_label) + sum(counts_of_label)
    return 0.0 if denominator == 0 else (s + count) / denominator


# -- ML-kNN -------------------------------------------------------------------------------


def mlknn(X, Y, Q, k, s=1.0, loo=None, query_neighbours=None):
    """``loo`` and ``query_neighbours`` (lists of neighbour lists) may be given, e.g. from a
    faster brute force on real-valued data; by default they come from :func:`nearest`."""
    Y = [[int(v) for v in row] for row in as_rows(Y)]
    n, L = len(Y), len(Y[0])
    prior = [(s + sum(Y[i][l] for i in range(n))) / (2 * s + n) for l in range(L)]
    if loo is None:
        loo = neighbours_leave_one_out(X, k)
    if query_neighbours is None:
        query_neighbours = neighbours_of_queries(X, Q, k)
    c1 = [[0] * (k + 1) for _ in range(L)]
    c0 = [[0] * (k + 1) for _ in range(L)]
    for i in range(n):
        for l in range(L):
            j = count_vector(Y, loo[i], l)
            if Y[i][l] == 1:
                c1[l][j] += 1
            else:
                c0[l][j] += 1
    scores, predictions = [], []
    for neighbours in query_neighbours:
        row_s, row_p = [], []
        for l in range(L):
            j = count_vector(Y, neighbours, l)
            a = prior[l] * likelihood(s, c1[l][j], c1[l])
            b = (1 - prior[l]) * likelihood(s, c0[l][j], c0[l])
            score, predicted = report(a, b)
            row_s.append(score)
            row_p.append(predicted)
        scores.append(row_s)
        predictions.append(row_p)
    return scores, predictions


# -- BRkNN, BRkNN-a, BRkNN-b --------------------------------------------------------------


def round_half_up(x: Fraction) -> int:
    return math.floor(x + Fraction(1, 2))


def brknn(X, Y, Q, k, extension=None):
    Y = [[int(v) for v in row] for row in as_rows(Y)]
    L = len(Y[0])
    scores, predictions = [], []
    for neighbours in neighbours_of_queries(X, Q, k):
        votes = [count_vector(Y, neighbours, l) for l in range(L)]
        confidence = [Fraction(v, k) for v in votes]
        if extension == "b":
            mean_size = Fraction(sum(sum(Y[a]) for a in neighbours), k)
            m = round_half_up(mean_size)
            ranked = sorted(range(L), key=lambda l: (-confidence[l], l))
            chosen = set(ranked[:m])
            predicted = [1 if l in chosen else 0 for l in range(L)]
        else:
            predicted = [1 if confidence[l] >= Fraction(1, 2) else 0 for l in range(L)]
            if extension == "a" and sum(predicted) == 0 and max(confidence) > 0:
                best = max(confidence)
                first = min(l for l in range(L) if confidence[l] == best)
                predicted[first] = 1
        scores.append([(v + 1.0) / (k + 1.5) for v in votes])
        predictions.append(predicted)
    return scores, predictions


# -- LPkNN --------------------------------------------------------------------------------


def lpknn(X, Y, Q, k):
    Y = [[int(v) for v in row] for row in as_rows(Y)]
    L = len(Y[0])
    scores, predictions = [], []
    for neighbours in neighbours_of_queries(X, Q, k):
        sets = [tuple(Y[a]) for a in neighbours]  # in neighbour order
        frequency = Counter(sets)
        most = max(frequency.values())
        winner = next(label_set for label_set in sets if frequency[label_set] == most)
        votes = [count_vector(Y, neighbours, l) for l in range(L)]
        scores.append([(v + 1.0) / (k + 1.5) for v in votes])
        predictions.append(list(winner))
    return scores, predictions


# -- DML-kNN ------------------------------------------------------------------------------


def dmlknn(X, Y, Q, k, s=1.0, delta=6, everyone=False):
    """``everyone=True`` puts every training instance in A whatever delta (the invariant)."""
    Y = [[int(v) for v in row] for row in as_rows(Y)]
    n, L = len(Y), len(Y[0])
    prior = [(s + sum(Y[i][l] for i in range(n))) / (2 * s + n) for l in range(L)]
    C1 = [sum(Y[i][l] for i in range(n)) for l in range(L)]
    C0 = [n - C1[l] for l in range(L)]
    loo = neighbours_leave_one_out(X, k)
    C_train = [[count_vector(Y, loo[i], l) for l in range(L)] for i in range(n)]
    scores, predictions = [], []
    for neighbours in neighbours_of_queries(X, Q, k):
        Cx = [count_vector(Y, neighbours, l) for l in range(L)]
        A = [
            i
            for i in range(n)
            if everyone or all(abs(C_train[i][q] - Cx[q]) <= delta for q in range(L))
        ]
        row_s, row_p = [], []
        for l in range(L):
            V1 = sum(1 for i in A if C_train[i][l] == Cx[l] and Y[i][l] == 1)
            V0 = sum(1 for i in A if C_train[i][l] == Cx[l] and Y[i][l] == 0)
            den1, den0 = s * L + C1[l], s * L + C0[l]
            a = 0.0 if den1 == 0 else prior[l] * (s + V1) / den1
            b = 0.0 if den0 == 0 else (1 - prior[l]) * (s + V0) / den0
            score, predicted = report(a, b)
            row_s.append(score)
            row_p.append(predicted)
        scores.append(row_s)
        predictions.append(row_p)
    return scores, predictions


# -- LAML-kNN -----------------------------------------------------------------------------


def lamlknn(X, Y, Q, k, train_clusters, query_clusters, s=1.0):
    """LAML-kNN given the cluster of every training row and every query.

    A cluster without training members does not exist (dropped); a query assigned to one
    gets ML-kNN's statistics of the whole training set (the package's documented choice).
    """
    Y = [[int(v) for v in row] for row in as_rows(Y)]
    n, L = len(Y), len(Y[0])
    loo = neighbours_leave_one_out(X, k)
    C_train = [[count_vector(Y, loo[i], l) for l in range(L)] for i in range(n)]

    def statistics(members, weight):
        size = len(members)
        prior = [(s + sum(Y[i][l] for i in members)) / (2 * s + size) for l in range(L)]
        K1 = [[0] * (k + 1) for _ in range(L)]
        K0 = [[0] * (k + 1) for _ in range(L)]
        for i in members:
            for l in range(L):
                if Y[i][l] == 1:
                    K1[l][C_train[i][l]] += 1
                else:
                    K0[l][C_train[i][l]] += 1
        return weight, prior, K1, K0

    clusters = {}
    for w in sorted(set(train_clusters)):
        members = [i for i in range(n) if train_clusters[i] == w]
        clusters[w] = statistics(members, len(members) / n)
    everything = statistics(list(range(n)), None)

    scores, predictions = [], []
    for q, neighbours in enumerate(neighbours_of_queries(X, Q, k)):
        w = query_clusters[q]
        row_s, row_p = [], []
        for l in range(L):
            r = count_vector(Y, neighbours, l)
            if w in clusters:
                pw, prior, K1, K0 = clusters[w]
                a = pw * prior[l] * likelihood(s, K1[l][r], K1[l])
                b = pw * (1 - prior[l]) * likelihood(s, K0[l][r], K0[l])
            else:
                _, prior, K1, K0 = everything
                a = prior[l] * likelihood(s, K1[l][r], K1[l])
                b = (1 - prior[l]) * likelihood(s, K0[l][r], K0[l])
            score, predicted = report(a, b)
            row_s.append(score)
            row_p.append(predicted)
        scores.append(row_s)
        predictions.append(row_p)
    return scores, predictions


# -- BKNN ---------------------------------------------------------------------------------


def bknn_neighbour_sq_distances(X, Y, x, b, *, exclude=None, metric="euclidean"):
    """For one query: per label, the sorted squared distances to its b nearest members."""
    n, L = Y.shape
    out = []
    for label in range(L):
        d2 = []
        for i in range(n):
            if Y[i, label] and i != exclude:
                if metric == "euclidean":
                    d = math.sqrt(sum((float(a) - float(c)) ** 2 for a, c in zip(X[i], x, strict=True)))
                else:
                    nx = math.sqrt(sum(float(a) ** 2 for a in X[i]))
                    nq = math.sqrt(sum(float(a) ** 2 for a in x))
                    dot = sum(float(a) * float(c) for a, c in zip(X[i], x, strict=True))
                    cos = dot / (nx * nq) if nx > 0 and nq > 0 else 0.0
                    d = min(max(1.0 - cos, 0.0), 2.0)
                d2.append(d * d)
        out.append(sorted(d2)[:b])
    return out


def _logsumexp(values):
    if not values:
        return -math.inf
    top = max(values)
    if top == -math.inf:
        return -math.inf
    return top + math.log(sum(math.exp(v - top) for v in values))


def bknn_scores_loop(X, Y, Q, b, sigma, *, loo=False, metric="euclidean"):
    """f_l(x) = (s_l - sbar) / sbar, each log s_l by its own log-sum-exp (bknn_blda.rst, in logs)."""
    L = Y.shape[1]
    F = np.zeros((len(Q), L))
    for q, x in enumerate(Q):
        per_label = bknn_neighbour_sq_distances(
            X, Y, x, b, exclude=q if loo else None, metric=metric
        )
        log_s = [_logsumexp([-d2 / (2 * sigma) for d2 in dists]) for dists in per_label]
        log_sbar = _logsumexp(log_s) - math.log(L)
        for label in range(L):
            if log_sbar == -math.inf:
                F[q, label] = 0.0  # documented: no neighbour in any label
            else:
                F[q, label] = math.exp(log_s[label] - log_sbar) - 1.0
    return F


def bknn_scores_naive(X, Y, Q, b, sigma):
    """The literal formula, no log space (0/0 -> nan when every weight underflows)."""
    L = Y.shape[1]
    F = np.zeros((len(Q), L))
    for q, x in enumerate(Q):
        per_label = bknn_neighbour_sq_distances(X, Y, x, b)
        s = [sum(math.exp(-d2 / (2 * sigma)) for d2 in dists) for dists in per_label]
        sbar = sum(s) / L
        for label in range(L):
            F[q, label] = (s[label] - sbar) / sbar if sbar > 0 else math.nan
    return F


def f_alpha(scores, y, h, alpha):
    """F_alpha = 1 / (alpha / P + (1 - alpha) / R) of predicting ``scores > h``; 0 if TP = 0."""
    tp = sum(1 for s, t in zip(scores, y, strict=True) if s > h and t)
    n_pred = sum(1 for s in scores if s > h)
    n_pos = sum(1 for t in y if t)
    if tp == 0:
        return 0.0
    precision, recall = tp / n_pred, tp / n_pos
    return 1.0 / (alpha / precision + (1 - alpha) / recall)


def better_than_chance(scores, y, h):
    """Whether predicting ``scores > h`` selects the label more often than its frequency
    (predicting every row: only for a label at least half the rows carry)."""
    n, n_pos = len(y), sum(1 for t in y if t)
    chosen = [t for s, t in zip(scores, y, strict=True) if s > h]
    if len(chosen) == n:
        return 2 * n_pos >= n
    return len(chosen) > 0 and Fraction(sum(chosen), len(chosen)) > Fraction(n_pos, n)


def best_f_brute(scores, y, alpha):
    """The largest F_alpha over every admissible threshold (each distinct score and -inf);
    0 when none is admissible."""
    candidates = [-math.inf] + sorted(set(scores))
    return max([f_alpha(scores, y, h, alpha) for h in candidates if better_than_chance(scores, y, h)], default=0.0)


def mann_whitney_pvalue_loop(scores, y):
    """One-sided Mann-Whitney p-value that the members (``y`` true) score higher, from every
    (member, other) pair: ``U`` counts the pairs the member wins, a tie as 1/2; the variance's
    tie term from the multiplicity of each distinct score; normal approximation with the
    continuity correction.  1.0 when there is nothing to compare."""
    members = [s for s, t in zip(scores, y, strict=True) if t]
    others = [s for s, t in zip(scores, y, strict=True) if not t]
    m, n0, n = len(members), len(others), len(scores)
    u = sum(1.0 if a > b else 0.5 if a == b else 0.0 for a in members for b in others)
    ties = sum(t**3 - t for t in Counter(scores).values())
    variance = m * n0 / 12 * ((n + 1) - ties / (n * (n - 1))) if n > 1 else 0.0
    if variance <= 0:
        return 1.0
    z = (u - m * n0 / 2 - 0.5) / math.sqrt(variance)
    return 0.5 * math.erfc(z / math.sqrt(2))


def bknn_threshold_loop(scores, y, alpha, no_signal):
    """BKNN's threshold for one label as the rows it predicts on the training scores: the
    admissible cut (rows scoring at least some distinct value) of largest F_alpha, the fewest
    rows on ties; none admissible: no row.  A label without signal whose cut holds more rows
    than members, but not every row, takes instead the largest cut of at most that many rows
    (none: no row).
    Returns ``(number of rows predicted, F_alpha of that prediction)``."""
    n_pos = sum(1 for t in y if t)
    cuts = [[s >= v for s in scores] for v in sorted(set(scores), reverse=True)]  # fewest rows first

    def admissible(chosen):
        if all(chosen):
            return 2 * n_pos >= len(y)
        hits = sum(1 for c, t in zip(chosen, y, strict=True) if c and t)
        return Fraction(hits, sum(chosen)) > Fraction(n_pos, len(y))

    def f_of(chosen):
        hits = sum(1 for c, t in zip(chosen, y, strict=True) if c and t)
        return 0.0 if hits == 0 else hits / (alpha * sum(chosen) + (1 - alpha) * n_pos)

    best = None
    for chosen in cuts:
        if admissible(chosen) and (best is None or f_of(chosen) > f_of(best)):
            best = chosen
    if best is None:
        return 0, 0.0
    if no_signal and n_pos < sum(best) < len(y):  # every row: the prior of a frequent label
        small = [chosen for chosen in cuts if sum(chosen) <= n_pos]
        if not small:
            return 0, 0.0
        best = small[-1]
    return sum(best), f_of(best)


# -- BLDA ---------------------------------------------------------------------------------


def blda_scatter_loop(X, Y):
    """S_b, S_w and the multi-label global mean m, literally from bknn_blda.rst."""
    n, d = X.shape
    L = Y.shape[1]
    total = sum(Y[i, l] for i in range(n) for l in range(L))
    m = sum(Y[i, l] * X[i] for i in range(n) for l in range(L)) / total
    S_b = np.zeros((d, d))
    S_w = np.zeros((d, d))
    for label in range(L):
        members = [i for i in range(n) if Y[i, label]]
        if not members:
            continue
        m_l = sum(X[i] for i in members) / len(members)
        S_b += len(members) * np.outer(m_l - m, m_l - m)
        for i in members:
            S_w += np.outer(X[i] - m_l, X[i] - m_l)
    return S_b, S_w, m


# -- HybridKNN ----------------------------------------------------------------------------


def label_regression_loop(Y, ridge):
    """One ridge regression per label on the other labels (normal equations), with intercept."""
    Y = np.asarray(Y, dtype=float)
    n, L = Y.shape
    coef = np.zeros((L, L))
    intercept = np.zeros(L)
    for label in range(L):
        others = [m for m in range(L) if m != label]
        A = Y[:, others]
        t = Y[:, label]
        A_mean, t_mean = A.mean(axis=0), t.mean()
        Ac, tc = A - A_mean, t - t_mean
        beta = np.linalg.solve(Ac.T @ Ac / n + ridge * np.eye(L - 1), Ac.T @ tc / n)
        coef[label, others] = beta
        intercept[label] = t_mean - beta @ A_mean
    return intercept, coef


def axis_window(values_by_row, x, width):
    """The ``width`` rows nearest to x along one axis, grown outward from x's insertion
    point, the left one first on equal gaps; rows sorted by (value, row index)."""
    order = sorted(range(len(values_by_row)), key=lambda i: (values_by_row[i], i))
    vals = [values_by_row[i] for i in order]
    pos = bisect_left(vals, x)
    left, right = pos - 1, pos
    taken = []
    while len(taken) < min(width, len(vals)):
        if left < 0:
            taken.append(right)
            right += 1
        elif right >= len(vals):
            taken.append(left)
            left -= 1
        elif x - vals[left] <= vals[right] - x:
            taken.append(left)
            left -= 1
        else:
            taken.append(right)
            right += 1
    return {order[p] for p in taken}


def cosine_distance(a, b):
    na = math.sqrt(sum(float(v) ** 2 for v in a))
    nb = math.sqrt(sum(float(v) ** 2 for v in b))
    if na == 0 or nb == 0:
        return 1.0
    return min(max(1.0 - sum(float(u) * float(v) for u, v in zip(a, b, strict=True)) / (na * nb), 0.0), 2.0)


def hybrid_loop(Z, Y, Zq, k, n_candidates, intercept, coef, threshold):
    """Neighbours, candidate-set sizes, scores and decisions of HybridKNN, one query at a time.

    ``Z`` / ``Zq``: projected training rows and queries.
    """
    n, c = Z.shape
    L = Y.shape[1]
    neighbours, sizes = [], []
    scores = np.zeros((len(Zq), L))
    for q, x in enumerate(Zq):
        candidates = set()
        for j in range(c):
            candidates |= axis_window(list(Z[:, j]), x[j], n_candidates)
        sizes.append(len(candidates))
        ranked = sorted((cosine_distance(Z[i], x), i) for i in candidates)
        nbrs = [i for _, i in ranked[:k]]
        neighbours.append(nbrs)
        for label in range(L):
            preds = [
                intercept[label] + sum(coef[label, m] * Y[i, m] for m in range(L)) for i in nbrs
            ]
            scores[q, label] = min(max(sum(preds) / k, 0.0), 1.0)
    return np.array(neighbours), np.array(sizes), scores, scores >= threshold
