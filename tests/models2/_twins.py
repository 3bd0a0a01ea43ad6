"""Slow, obviously correct loop versions of the fast kernels of BKNN, BLDA and HybridKNN.

Written from docs/ALGORITHMS.md one instance / one label / one threshold at a time, with
Python lists, ``sorted`` and ``bisect``; no code shared with the package.
"""

from __future__ import annotations

import math
from bisect import bisect_left

import numpy as np


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
                    d = math.sqrt(sum((float(a) - float(c)) ** 2 for a, c in zip(X[i], x)))
                else:
                    nx = math.sqrt(sum(float(a) ** 2 for a in X[i]))
                    nq = math.sqrt(sum(float(a) ** 2 for a in x))
                    dot = sum(float(a) * float(c) for a, c in zip(X[i], x))
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
    """f_l(x) = (s_l - sbar) / sbar, each log s_l by its own log-sum-exp (the spec, in logs)."""
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
    tp = sum(1 for s, t in zip(scores, y) if s > h and t)
    n_pred = sum(1 for s in scores if s > h)
    n_pos = sum(1 for t in y if t)
    if tp == 0:
        return 0.0
    precision, recall = tp / n_pred, tp / n_pos
    return 1.0 / (alpha / precision + (1 - alpha) / recall)


def best_f_brute(scores, y, alpha):
    """The largest F_alpha over every candidate threshold: each distinct score and -inf."""
    return max(f_alpha(scores, y, h, alpha) for h in [-math.inf] + sorted(set(scores)))


# -- BLDA ---------------------------------------------------------------------------------


def blda_scatter_loop(X, Y):
    """S_b, S_w and the multi-label global mean m, literally from the spec."""
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
    return min(max(1.0 - sum(float(u) * float(v) for u, v in zip(a, b)) / (na * nb), 0.0), 2.0)


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
