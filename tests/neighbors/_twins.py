"""Slow, obviously correct loop twins of the neighbour kernels (one query at a time)."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp


def _dense(A):
    return np.asarray(A.toarray() if sp.issparse(A) else A, dtype=np.float64)


def _normalise(A):
    norms = np.sqrt((A * A).sum(axis=1))
    norms[norms == 0] = 1.0
    return A / norms[:, None]


def distances_to(X, q, metric):
    """Distances from one query to every row of X (the definitions of ``_distance``)."""
    if metric == "euclidean":
        return np.sqrt(((X - q) ** 2).sum(axis=1))
    if metric == "cosine":
        return np.clip(1.0 - (X * q).sum(axis=1), 0.0, 2.0)
    if metric == "manhattan":
        return np.abs(X - q).sum(axis=1)
    raise ValueError(metric)


def twin_kneighbors(X, Q, k, metric="euclidean", exclude=None):
    """k nearest rows of X for every row of Q: ascending distance, then ascending index.

    ``exclude[i]`` (optional) is a row of X left out for query i (leave-one-out).
    """
    X, Q = _dense(X), _dense(Q)
    if metric == "cosine":
        X, Q = _normalise(X), _normalise(Q)
    dist = np.empty((len(Q), k))
    idx = np.empty((len(Q), k), dtype=np.intp)
    for i, q in enumerate(Q):
        d = distances_to(X, q, metric)
        order = np.lexsort((np.arange(len(X)), d))
        if exclude is not None:
            order = order[order != exclude[i]]
        dist[i] = d[order[:k]]
        idx[i] = order[:k]
    return dist, idx


def twin_merge(dists, idxs, k):
    """Merge per-shard lists one query at a time with Python's sort on (distance, index)."""
    out_d = np.empty((len(dists[0]), k))
    out_i = np.empty((len(dists[0]), k), dtype=np.intp)
    for r in range(len(dists[0])):
        pairs = sorted(
            (float(d), int(i)) for D, Ix in zip(dists, idxs, strict=True) for d, i in zip(D[r], Ix[r], strict=True)
        )
        out_d[r] = [p[0] for p in pairs[:k]]
        out_i[r] = [p[1] for p in pairs[:k]]
    return out_d, out_i


def tricky_data(rng, n, d, *, integer=False, scale=1.0):
    """Random rows with duplicate rows and exact distance ties built in.

    - a quarter of the rows are copies of other rows (exact ties, any metric);
    - integer-valued data make many distances exactly equal;
    - sign-flipped copies (continuous data) tie exactly for queries with zeros there;
    - power-of-two multiples tie exactly in cosine distance.
    """
    if integer:
        X = rng.integers(-2, 3, size=(n, d)).astype(np.float64)
    else:
        X = rng.standard_normal((n, d)) * scale
        flip = rng.choice(n, size=max(1, n // 8), replace=False)
        X[flip[1:]] = X[flip[:-1]] * np.where(rng.random(d) < 0.5, -1.0, 1.0)
        mult = rng.choice(n, size=max(1, n // 8), replace=False)
        X[mult[1:]] = X[mult[:-1]] * 4.0
    dst = rng.choice(n, size=n // 4, replace=False)
    X[dst] = X[rng.choice(n, size=n // 4)]
    return X


def tricky_queries(rng, X, nq):
    """Queries: copies of training rows, the origin, and fresh random rows."""
    n, d = X.shape
    fresh = rng.standard_normal((nq - nq // 3 - 1, d))
    if np.all(X == np.rint(X)):
        fresh = np.rint(fresh * 2)
    return np.vstack([X[rng.choice(n, size=nq // 3)], np.zeros((1, d)), fresh])


def twin_label_neighbours(X, Y, Q, b, metric="euclidean", exclude=None):
    """For every query and label, the b nearest members of the label by (distance, row).

    Returns ``(dist, idx)`` of shape (n_queries, n_labels, b), ``inf`` / ``-1`` where a label
    has fewer members; ``exclude[i]`` (optional) is left out for query i.
    """
    X, Q, Y = _dense(X), _dense(Q), np.asarray(Y)
    if metric == "cosine":
        X, Q = _normalise(X), _normalise(Q)
    n_labels = Y.shape[1]
    dist = np.full((len(Q), n_labels, b), np.inf)
    idx = np.full((len(Q), n_labels, b), -1, dtype=np.intp)
    for i, q in enumerate(Q):
        d = distances_to(X, q, metric)
        for label in range(n_labels):
            members = [r for r in range(len(X)) if Y[r, label] and (exclude is None or r != exclude[i])]
            members.sort(key=lambda r: (d[r], r))
            for j, r in enumerate(members[:b]):
                dist[i, label, j] = d[r]
                idx[i, label, j] = r
    return dist, idx
