"""Pure array kernels of the label side: membership counts, count tables, posteriors.

No estimator objects here; every function is vectorised over instances and labels
(the loop twins live in the tests).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from ._config import working_memory_bytes

__all__ = [
    "block_cells",
    "count_matrix",
    "count_tables",
    "decide",
    "distance_weights",
    "distinct_rows",
    "dml_votes",
    "label_likelihoods",
    "membership_counts",
    "posterior",
    "row_blocks",
    "table_decisions",
    "table_lookup",
    "table_top_k",
    "top_m",
    "vote_scores",
    "weighted_vote_scores",
    "weighted_votes",
]

#: bytes of temporaries per (row x label) cell of a label-side block: the int32 counts, their
#: int64 flat positions and the gathered likelihoods, with room for numpy's intermediates
CELL_BYTES = 64


def block_cells() -> int:
    """(row x label) cells a label-side block may hold: the working memory's share
    (4,194,304 cells at the default 256 MiB)."""
    return max(1, working_memory_bytes() // CELL_BYTES)


def row_blocks(n_rows: int, n_cols: int, cells: int | None = None) -> list[slice]:
    """Slices of rows such that each block holds about ``cells`` (row x column) entries
    (default :func:`block_cells`)."""
    step = max(1, (block_cells() if cells is None else cells) // max(1, n_cols))
    return [slice(start, min(start + step, n_rows)) for start in range(0, n_rows, step)]


#: (query, neighbour, label) cells up to which the counts are a gather and a sum (a 1 MiB
#: temporary of int8 labels at most)
_GATHER_CELLS = 1 << 20


def membership_counts(neighbors: np.ndarray, Y: np.ndarray | sp.csr_matrix) -> np.ndarray:
    """``C[q, l]``: how many of the neighbours of query ``q`` carry label ``l``.

    Parameters
    ----------
    neighbors : ndarray of shape (n_queries, k)
        Row numbers of ``Y``; the rows of one query are distinct.
    Y : ndarray or CSR of shape (n_samples, n_labels)
        Binary label indicator.

    Returns
    -------
    C : ndarray of shape (n_queries, n_labels), int32
    """
    n_queries, k = neighbors.shape
    if not sp.issparse(Y) and n_queries * k * Y.shape[1] <= _GATHER_CELLS:
        # few cells: the neighbours' label rows gathered and summed (the sparse product's
        # construction costs tens of microseconds, most of a small job's label side)
        return Y[neighbors].sum(axis=1, dtype=np.int32)
    # one sparse (query x training row) selection matrix times Y: O(n_queries * k * L)
    # work with no (n_queries, k, L) temporary; in int8 when the counts fit (3x faster)
    small = k < 128 and not sp.issparse(Y) and Y.dtype == np.int8
    select = sp.csr_matrix(
        (
            np.ones(n_queries * k, dtype=np.int8 if small else np.int32),
            neighbors.ravel(),
            np.arange(0, n_queries * k + 1, k),
        ),
        shape=(n_queries, Y.shape[0]),
    )
    C = select @ (Y.astype(np.int32) if sp.issparse(Y) else Y)
    if sp.issparse(C):
        C = C.toarray()
    return np.asarray(C, dtype=np.int32)


def count_matrix(neighbors: np.ndarray, Y: np.ndarray | sp.csr_matrix) -> np.ndarray | sp.csr_matrix:
    """The membership counts ``C`` as Y holds labels: dense for dense Y
    (:func:`membership_counts`), CSR int32 for sparse Y, with ``n_queries * k * c``
    stored entries at most (c: labels per row) and no (n_queries, n_labels) array.
    """
    if not sp.issparse(Y):
        return membership_counts(neighbors, Y)
    n_queries, k = neighbors.shape
    select = sp.csr_matrix(
        (np.ones(n_queries * k, dtype=np.int32), neighbors.ravel(), np.arange(0, n_queries * k + 1, k)),
        shape=(n_queries, Y.shape[0]),
    )
    C = (select @ Y).tocsr()
    C.sort_indices()
    return C.astype(np.int32, copy=False)


def vote_scores(C: np.ndarray, k: int) -> np.ndarray:
    """The smoothed vote fraction ``(C + 1) / (k + 1.5)`` (BRkNN's and LPkNN's scores).

    Strictly inside (0, 1) and in the same order as the raw fraction ``C / k``.  The
    pseudo-counts (one vote for, half a vote against) are asymmetric so that the score is
    above 0.5 exactly when BRkNN predicts (``2 C >= k``): at ``C = k / 2`` the symmetric
    ``(C + 1) / (k + 2)`` would be exactly 0.5, which rounds to 0.
    """
    return (C + 1.0) / (k + 1.5)


def distance_weights(dist: np.ndarray, weights: Any) -> np.ndarray:
    """The vote weight of every neighbour from its distance, by scikit-learn's rule.

    ``weights="distance"``: ``1 / d``; a row with a neighbour at distance 0 (``1 / d``
    infinite) gives its neighbours at distance 0 weight 1 and the others weight 0, as
    ``sklearn.neighbors.KNeighborsClassifier`` does (``sklearn.neighbors._base._get_weights``).
    A callable is given the (n, k) distances and must return (n, k) finite weights >= 0.

    >>> distance_weights(np.array([[0.5, 2.0], [0.0, 1.0]]), "distance")
    array([[2. , 0.5],
           [1. , 0. ]])
    """
    if isinstance(weights, str) and weights == "distance":
        with np.errstate(divide="ignore"):
            w = 1.0 / dist
        infinite = np.isinf(w)
        rows = infinite.any(axis=1)
        w[rows] = infinite[rows]
        return w
    w = np.asarray(weights(dist), dtype=np.float64)
    if w.shape != dist.shape:
        raise ValueError(f"weights: the callable returned shape {w.shape} for distances of shape {dist.shape}; "
                         "it must return one weight per neighbour")
    if not np.isfinite(w).all() or (w < 0).any():
        raise ValueError("weights: the callable must return finite weights >= 0, got "
                         f"{w[~(np.isfinite(w) & (w >= 0))][:5].tolist()}")
    return w


def weighted_votes(
    neighbors: np.ndarray, w: np.ndarray, Y: np.ndarray | sp.csr_matrix
) -> tuple[np.ndarray | sp.csr_matrix, np.ndarray]:
    """``V[q, l]``: the summed weights of the neighbours of query ``q`` carrying label ``l``,
    and ``W[q]``: the summed weights of all its neighbours.

    One weighted sparse (query x training row) selection matrix times Y: dense V for dense Y,
    CSR for sparse Y.  Every sum runs in neighbour order (``W`` too), so a label that every
    neighbour carries has ``V == W`` exactly, and integer weights give exact integer sums
    (weights of 1: the membership counts and ``W = k``).

    Returns
    -------
    V : ndarray or CSR of shape (n_queries, n_labels), float64
    W : ndarray of shape (n_queries,), float64
    """
    n_queries, k = neighbors.shape
    select = sp.csr_matrix(
        (np.asarray(w, dtype=np.float64).ravel(), neighbors.ravel(), np.arange(0, n_queries * k + 1, k)),
        shape=(n_queries, Y.shape[0]),
    )
    W = np.asarray(select @ np.ones(Y.shape[0]), dtype=np.float64).ravel()
    V = select @ Y
    if sp.issparse(V):
        V = sp.csr_matrix(V, dtype=np.float64)
        V.sort_indices()
        return V, W
    return np.asarray(V, dtype=np.float64), W


def weighted_vote_scores(V: np.ndarray, W: np.ndarray, k: int) -> np.ndarray:
    """:func:`vote_scores` of weighted votes: ``(k V / W + 1) / (k + 1.5)``, the smoothed share
    on the scale of ``k`` votes (a row of total weight 0 scores as no vote).

    Weights of 1 (``V`` the counts, ``W = k``) give :func:`vote_scores` bit for bit: ``k V``
    and ``k V / k`` are exact in integers.
    """
    W = np.asarray(W, dtype=np.float64)[:, None]
    share_k = np.divide(k * V, W, out=np.zeros(np.shape(V)), where=W > 0)
    return (share_k + 1.0) / (k + 1.5)


def top_m(C: np.ndarray, m: np.ndarray) -> np.ndarray:
    """The ``m[q]`` labels of highest ``C[q]`` per row, ties broken by the lower label index."""
    order = np.argsort(-C, axis=1, kind="stable")  # stable: equal counts keep label order
    rank = np.empty_like(order)
    np.put_along_axis(rank, order, np.arange(C.shape[1])[None, :], axis=1)
    return rank < m[:, None]


def distinct_rows(Y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of a 0/1 matrix, in ascending lexicographic order, and each row's id
    (for a CSR matrix: the distinct rows as CSR, ordered by their sorted label lists).

    Same result as ``np.unique(Y != 0, axis=0, return_inverse=True)``, much faster: the rows
    are packed into big-endian 64-bit words (whose numeric order is the lexicographic order
    of the bits) and sorted with one ``lexsort`` over a few integer keys.

    Returns
    -------
    sets : ndarray of shape (n_sets, n_cols), same dtype as ``Y``
    ids : ndarray of shape (n_rows,), intp
        ``Y[i] == sets[ids[i]]``.
    """
    if sp.issparse(Y):
        return _distinct_rows_sparse(sp.csr_matrix(Y))
    n, L = Y.shape
    if n == 0:
        return Y[:0], np.zeros(0, dtype=np.intp)
    packed = np.packbits(np.asarray(Y) != 0, axis=1)  # first column = highest bit
    width = -(-packed.shape[1] // 8) * 8
    words = np.zeros((n, max(width, 8)), dtype=np.uint8)
    words[:, : packed.shape[1]] = packed
    keys = words.view(">u8")  # (n, n_words): numeric order = lexicographic bit order
    order = np.lexsort(keys.T[::-1])
    sorted_keys = keys[order]
    new = np.ones(n, dtype=bool)
    new[1:] = (sorted_keys[1:] != sorted_keys[:-1]).any(axis=1)
    group = np.cumsum(new) - 1
    ids = np.empty(n, dtype=np.intp)
    ids[order] = group
    return np.asarray(Y)[order[new]], ids


def _distinct_rows_sparse(Y: sp.csr_matrix) -> tuple[sp.csr_matrix, np.ndarray]:
    """:func:`distinct_rows` of a CSR matrix, in the order of their sorted label lists:
    rows padded with -1 to the longest and sorted with one ``lexsort`` (O(n c log n))."""
    Y = Y.copy()
    Y.sort_indices()
    n = Y.shape[0]
    lengths = np.diff(Y.indptr)
    width = int(lengths.max(initial=0))
    padded = np.full((n, width + 1), -1, dtype=np.int64)
    padded[:, width] = lengths
    rows = np.repeat(np.arange(n), lengths)
    padded[rows, np.arange(len(rows)) - np.repeat(Y.indptr[:-1], lengths)] = Y.indices
    if n == 0:
        return Y[:0], np.zeros(0, dtype=np.intp)
    order = np.lexsort(padded.T[::-1])
    keys = padded[order]
    new = np.ones(n, dtype=bool)
    new[1:] = (keys[1:] != keys[:-1]).any(axis=1)
    ids = np.empty(n, dtype=np.intp)
    ids[order] = np.cumsum(new) - 1
    return Y[order[new]], ids


def count_tables(
    C: np.ndarray,
    Y: np.ndarray,
    k: int,
    groups: np.ndarray | None = None,
    n_groups: int = 1,
) -> tuple[np.ndarray, np.ndarray]:
    """ML-kNN's count tables, optionally one per group of rows (LAML-kNN's clusters).

    ``c1[l, j] = #{i : Y[i, l] = 1 and C[i, l] = j}`` and ``c0`` likewise with
    ``Y[i, l] = 0``, for ``j`` in ``0..k``.  With ``groups`` (the group ``0..n_groups-1`` of
    every row), ``c1[g, l, j]`` counts the rows of group ``g`` only.

    Returns
    -------
    c1, c0 : ndarray of shape (n_labels, k + 1), or (n_groups, n_labels, k + 1), int64
    """
    if sp.issparse(C):
        return _count_tables_sparse(C, Y, k, groups, n_groups)
    n, L = C.shape
    G = 1 if groups is None else n_groups
    size = G * L * (k + 1)
    total = np.zeros(size, dtype=np.int64)
    c1 = np.zeros(size, dtype=np.int64)
    offsets = (k + 1) * np.arange(L, dtype=np.int64)
    for rows in row_blocks(n, L):
        flat = C[rows].astype(np.int64) + offsets
        if groups is not None:
            flat += (L * (k + 1)) * np.asarray(groups[rows], dtype=np.int64)[:, None]
        total += np.bincount(flat.ravel(), minlength=size)
        c1 += np.bincount(flat[np.asarray(Y[rows], dtype=bool)], minlength=size)
    shape = (L, k + 1) if groups is None else (G, L, k + 1)
    c1 = c1.reshape(shape)
    return c1, total.reshape(shape) - c1


def _count_tables_sparse(
    C: sp.csr_matrix, Y: sp.csr_matrix, k: int, groups: np.ndarray | None, n_groups: int
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`count_tables` from the stored counts of a CSR ``C``: O(nnz(C) + nnz(Y) + G L k).

    The cells with a count ``j >= 1`` are counted from ``C``'s entries (those where Y holds
    the label from ``C * Y``); the count-0 cells are what remains of each label's rows
    (its positives, and the group's rows, minus the counted cells).
    """
    n, L = C.shape
    G = 1 if groups is None else n_groups
    g = np.zeros(n, dtype=np.int64) if groups is None else np.asarray(groups, dtype=np.int64)
    size = G * L * (k + 1)

    def cells(M: sp.csr_matrix) -> np.ndarray:
        rows = np.repeat(np.arange(n), np.diff(M.indptr))
        return np.bincount((g[rows] * L + M.indices) * (k + 1) + M.data, minlength=size)

    Yc = sp.csr_matrix(Y)
    total = cells(C)
    c1 = cells(C.multiply(Yc).tocsr().astype(np.int64))  # cells holding the label, count >= 1
    total, c1 = total.reshape(G, L, k + 1), c1.reshape(G, L, k + 1)
    onehot = sp.csr_matrix((np.ones(n, dtype=np.int64), g, np.arange(n + 1)), shape=(n, G))
    positives = np.asarray((onehot.T @ Yc.astype(np.int64)).todense())  # (G, L)
    rows_in_group = np.bincount(g, minlength=G)
    c1[:, :, 0] = positives - c1[:, :, 1:].sum(axis=2)
    total[:, :, 0] = rows_in_group[:, None] - total[:, :, 1:].sum(axis=2)
    c0 = total - c1
    if groups is None:
        return c1[0], c0[0]
    return c1, c0


def table_lookup(
    scores: np.ndarray, decisions: np.ndarray, C: np.ndarray | sp.csr_matrix, groups: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray]:
    """Scores and decisions of count vectors ``C`` from per-(group, label, count) tables.

    ``scores`` and ``decisions`` have shape (n_groups, n_labels, k + 1); ``groups`` gives
    each query's group (None: group 0).  Each cell is the table's value at its count, the
    same number the model's formula gives for that count.  For a CSR ``C`` every cell
    starts at its label's count-0 value and the stored counts are written over it.
    """
    m, L = C.shape
    g = np.zeros(m, dtype=np.intp) if groups is None else np.asarray(groups, dtype=np.intp)
    if not sp.issparse(C):
        cols = np.arange(L)
        if groups is None:
            return scores[0][cols, C], decisions[0][cols, C]
        return scores[g[:, None], cols, C], decisions[g[:, None], cols, C]
    out_s = scores[g, :, 0].copy()
    out_d = decisions[g, :, 0].copy()
    rows = np.repeat(np.arange(m), np.diff(C.indptr))
    out_s[rows, C.indices] = scores[g[rows], C.indices, C.data]
    out_d[rows, C.indices] = decisions[g[rows], C.indices, C.data]
    return out_s, out_d


def table_decisions(decisions: np.ndarray, C: sp.csr_matrix, groups: np.ndarray | None) -> sp.csr_matrix:
    """The decisions of :func:`table_lookup` as a CSR 0/1 matrix, never dense.

    A label decided at count 0 (only a label most rows carry) is set for every query of
    that group whose count is 0.
    """
    m, L = C.shape
    g = np.zeros(m, dtype=np.intp) if groups is None else np.asarray(groups, dtype=np.intp)
    rows = np.repeat(np.arange(m), np.diff(C.indptr))
    keep = decisions[g[rows], C.indices, C.data]
    r, c = rows[keep], C.indices[keep]
    zero_on = decisions[:, :, 0]  # (G, L): labels set at count 0
    if zero_on.any():
        qg, ql = np.nonzero(zero_on[g])
        counted = sp.csr_matrix((np.ones(len(rows), dtype=bool), (rows, C.indices)), shape=(m, L))
        free = ~np.asarray(counted[qg, ql]).ravel()
        r, c = np.concatenate([r, qg[free]]), np.concatenate([c, ql[free]])
    out = sp.csr_matrix((np.ones(len(r), dtype=np.int8), (r, c)), shape=(m, L))
    out.sort_indices()
    return out


def table_top_k(
    scores: np.ndarray, C: np.ndarray | sp.csr_matrix, groups: np.ndarray | None, k: int,
    zero_order: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` labels of highest score of every query, best first, ties by the lower label.

    Equal to sorting each query's full score row (``table_lookup``) but without it: the
    labels with a stored count are ranked with the best ``k + r`` labels of the count-0
    order of the query's group (``zero_order[g]``: labels by decreasing count-0 score, ties
    by label; ``r`` its number of stored counts), the ones among those that have a count
    taken out.  O(m (r + k) log(r + k)) instead of O(m L log L).

    Returns
    -------
    top_scores : ndarray of shape (n_queries, k), float64
    labels : ndarray of shape (n_queries, k), intp
    """
    C = sp.csr_matrix(C) if not sp.issparse(C) else C
    m, L = C.shape
    if not 1 <= k <= L:
        raise ValueError(f"k must be in [1, {L}] (the number of labels), got {k}")
    g = np.zeros(m, dtype=np.intp) if groups is None else np.asarray(groups, dtype=np.intp)
    if zero_order is None:
        zero_order = np.argsort(-scores[:, :, 0], axis=1, kind="stable")
    nnz = np.diff(C.indptr)
    r_max = int(nnz.max(initial=0))
    rows = np.repeat(np.arange(m), nnz)
    # the labels with a count: left-aligned, padded with -inf
    slot = np.arange(len(rows)) - np.repeat(C.indptr[:-1], nnz)
    lab_nz = np.zeros((m, r_max), dtype=np.intp)
    sc_nz = np.full((m, r_max), -np.inf)
    lab_nz[rows, slot] = C.indices
    sc_nz[rows, slot] = scores[g[rows], C.indices, C.data]
    # the best count-0 labels, those with a count taken out (their score is the stored one)
    width = min(L, k + r_max)
    lab_z = zero_order[g, :width]
    sc_z = scores[g[:, None], lab_z, 0]
    keys = rows * L + C.indices  # sorted: CSR rows in order, indices sorted within a row
    probe = (np.arange(m)[:, None] * L + lab_z).ravel()
    pos = np.minimum(np.searchsorted(keys, probe), max(len(keys) - 1, 0))
    counted = (keys[pos] == probe).reshape(m, width) if len(keys) else np.zeros((m, width), dtype=bool)
    sc_z = np.where(counted, -np.inf, sc_z)
    labels = np.concatenate([lab_nz, lab_z], axis=1)
    cand = np.concatenate([sc_nz, sc_z], axis=1)
    order = np.lexsort((labels, -cand), axis=1)[:, :k]
    return np.take_along_axis(cand, order, axis=1), np.take_along_axis(labels, order, axis=1)


def label_likelihoods(c: np.ndarray, smoothing: float) -> np.ndarray:
    """``P(E_j | H) = (s + c[..., j]) / (s (k + 1) + sum_j c[..., j])`` for count tables ``c``.

    ``c`` has shape (..., k + 1). Where the denominator is 0 (no smoothing and no
    instance of that hypothesis), the likelihood is defined as 0: the prior of that
    hypothesis is then 0 too, so the posterior does not depend on it.
    """
    k1 = c.shape[-1]
    denominator = smoothing * k1 + c.sum(axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = (smoothing + c) / denominator
    out[np.broadcast_to(denominator == 0, out.shape)] = 0.0
    return out


def posterior(
    C: np.ndarray,
    prior1: np.ndarray,
    like1: np.ndarray,
    like0: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Posterior score and decision of ML-kNN for count vectors ``C``.

    ``a = P(H1_l) P(E_C | H1_l)``, ``b = P(H0_l) P(E_C | H0_l)`` with
    ``P(H0_l) = 1 - P(H1_l)``; see :func:`decide`.

    Parameters
    ----------
    C : ndarray of shape (n_queries, n_labels)
    prior1 : ndarray of shape (n_labels,)
    like1, like0 : ndarray of shape (n_labels, k + 1)
    """
    cols = np.arange(C.shape[1])
    return decide(prior1 * like1[cols, C], (1.0 - prior1) * like0[cols, C])


def decide(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Score ``a / (a + b)`` and decision ``a >= b`` (an exact tie predicts the label).

    ``a + b == 0`` happens only without smoothing; its score is 0.5.  A predicted label
    always scores at least 0.5; where it scores exactly 0.5 (an exact tie) the score is
    reported as the next float above 0.5, so that the score exceeds 0.5 exactly where the
    label is predicted (scikit-learn rounds 0.5 down to 0).  This moves no score past any
    other, so every ranking is unchanged.
    """
    total = a + b
    with np.errstate(invalid="ignore", divide="ignore"):
        scores = a / total
    scores[total == 0] = 0.5
    decisions = a >= b
    scores[decisions & (scores <= 0.5)] = _ABOVE_HALF
    return scores, decisions


_ABOVE_HALF = float(np.nextafter(0.5, 1.0))


def dml_votes(
    Cq: np.ndarray,
    Ct: np.ndarray,
    positive: np.ndarray,
    c1: np.ndarray,
    c0: np.ndarray,
    delta: int,
    cells: int | None = None,
    method: str = "auto",
) -> tuple[np.ndarray, np.ndarray]:
    """DML-kNN's votes ``V1``, ``V0`` of queries with count vectors ``Cq``.

    ``A_q = {i : |Ct[i, l] - Cq[q, l]| <= delta for every label l}``;
    ``V1[q, l] = #{i in A_q : Ct[i, l] = Cq[q, l], Y[i, l] = 1}`` and ``V0`` likewise with
    ``Y[i, l] = 0``.

    Parameters
    ----------
    Cq : ndarray of shape (n_queries, n_labels), integer in 0..k
    Ct : ndarray of shape (n_samples, n_labels), integer in 0..k
        The training count vectors.
    positive : ndarray of shape (n_samples, n_labels), bool
        ``Y == 1``.
    c1, c0 : ndarray of shape (n_labels, k + 1)
        The count tables of ``Ct`` and ``Y`` (:func:`count_tables`).
    delta : int
    cells : int, default=None
        Memory budget: (rows x columns) entries of the largest temporary (default
        :func:`block_cells`).
    method : {"auto", "dense", "sparse"}
        How the correction product is computed (see Notes); "auto" picks by a cost model.

    Returns
    -------
    V1, V0 : ndarray of shape (n_queries, n_labels), float64 (integer valued)

    Notes
    -----
    Everything is counted over the complement of ``A``: ``V1 = c1[l, Cq] - #{i not in A_q : ...}``.
    The training rows outside ``A_q`` (the *far* rows) are found with one matrix product per
    block of queries: with ``H[q, (u, l)] = [Cq[q, l] = u]`` and
    ``D[i, (u, l)] = [|Ct[i, l] - u| > delta]``, ``(H @ D.T)[q, i]`` counts the labels on which
    ``i`` is too far from ``q``.  Only the pairs ``(u, l)`` that occur in the block and where
    some training row can be too far enter the product.  The correction is a second product of
    the far indicator ``F`` with the indicators ``[Ct[i, l] = u, Y[i, l] = b]`` of the pairs
    that occur in the block: a dense float32 product (exact: every sum is an integer below
    2**24) restricted to the queries and training rows that have a far partner, or, when ``F``
    is sparse (text-like label sets, corel), a sparse product in which the one dense indicator,
    ``[Ct[i, l] = 0, Y[i, l] = 0]``, is replaced by its complement.
    """
    m, L = Cq.shape
    n = Ct.shape[0]
    k = c1.shape[1] - 1
    cells = block_cells() if cells is None else cells
    cols = np.arange(L)
    V1 = c1[cols, Cq].astype(np.float64)
    V0 = c0[cols, Cq].astype(np.float64)
    values = np.arange(k + 1)
    # violation[u, l]: some training row has |Ct[i, l] - u| > delta
    seen = (c1 + c0) > 0
    vmax = np.where(seen, values, -1).max(axis=1)
    vmin = np.where(seen, values, k + 1).min(axis=1)
    violation = (vmax[None, :] > values[:, None] + delta) | (vmin[None, :] < values[:, None] - delta)
    if m == 0 or not violation.any():
        return V1, V0
    dtype = np.float32 if n < 2**24 else np.float64
    cells_i, cells_l = np.nonzero((Ct > 0) | positive)  # the cells other than (C = 0, Y = 0)
    cells_u = Ct[cells_i, cells_l].astype(np.intp)
    cells_pos = positive[cells_i, cells_l]
    step = max(1, cells // max(1, n))
    for start in range(0, m, step):
        Cb = Cq[start : start + step]
        b = len(Cb)
        present = np.zeros((k + 1, L), dtype=bool)
        present[Cb, cols] = True
        uu, ll = np.nonzero(present & violation)
        if len(uu) == 0:
            continue
        far_count = np.zeros((b, n), dtype=dtype)
        for p in _pair_chunks(len(uu), n + b, cells):  # label chunks bound the temporaries
            H = (Cb[:, ll[p]] == uu[p]).astype(dtype)
            D = (np.abs(Ct[:, ll[p]].astype(np.int32) - uu[p]) > delta).astype(dtype)
            far_count += H @ D.T
        far = far_count > 0
        rows = np.flatnonzero(far.any(axis=1))
        if len(rows) == 0:
            continue
        Cr = Cb[rows]
        present = np.zeros((k + 1, L), dtype=bool)
        present[Cr, cols] = True
        jj, ll2 = np.nonzero(present)
        column = np.full((k + 1, L), -1, dtype=np.intp)
        column[jj, ll2] = np.arange(len(jj))
        F = far[rows]
        n_far = int(np.count_nonzero(F))
        use_sparse = method == "sparse"
        if method == "auto":
            # seconds, measured on a 2-core AMD EPYC: the dense product's multiply-adds and
            # indicator matrices against the sparse product's (far pair x cell of a training
            # row) operations, its cell matrix and the conversion of the far indicator
            train = int(np.count_nonzero(F.any(axis=0)))
            dense_cost = 1.2e-10 * len(rows) * train * 2 * len(jj) + 6e-9 * train * len(jj)
            sparse_cost = (
                1.5e-8 * n_far * (len(cells_i) / max(1, n) + 1)
                + 3e-7 * len(cells_i)
                + 5e-9 * len(rows) * n
            )
            use_sparse = sparse_cost < dense_cost
        if use_sparse:
            R1, R0 = _correction_sparse(F, column, cells_i, cells_l, cells_u, cells_pos, L, Cr, dtype)
        else:
            R1, R0 = _correction_dense(F, Ct, positive, jj, ll2, column, Cr, cells, dtype)
        target = start + rows
        V1[target] -= R1
        V0[target] -= R0
    return V1, V0


def _correction_dense(F, Ct, positive, jj, ll, column, Cr, cells, dtype):
    """``R1[q, l] = #{far i : Ct[i, l] = Cr[q, l], Y = 1}`` (and R0) by dense products."""
    cols = np.arange(Ct.shape[1])
    train = np.flatnonzero(F.any(axis=0))
    G = F[:, train].astype(dtype)
    Ctr = Ct[train]
    pos = positive[train]
    R1 = np.empty((len(F), len(jj)), dtype=dtype)
    R0 = np.empty((len(F), len(jj)), dtype=dtype)
    for p in _pair_chunks(len(jj), 2 * len(train) + len(F), cells):
        hit = Ctr[:, ll[p]] == jj[p]
        pos_p = pos[:, ll[p]]
        R1[:, p] = G @ (hit & pos_p).astype(dtype)
        R0[:, p] = G @ (hit & ~pos_p).astype(dtype)
    where = column[Cr, cols]
    return np.take_along_axis(R1, where, axis=1), np.take_along_axis(R0, where, axis=1)


def _correction_sparse(F, column, cells_i, cells_l, cells_u, cells_pos, L, Cr, dtype):
    """As :func:`_correction_dense`, with a sparse far indicator and sparse cell indicators.

    Columns: ``[Ct = u, Y = 1]`` per pair, ``[Ct = u, Y = 0]`` per pair with ``u > 0``, and
    ``[(Ct, Y) != (0, 0)]`` per label, from which ``[Ct = 0, Y = 0]`` is the complement.
    """
    n_pairs = int(column.max()) + 1
    n = F.shape[1]
    col = column[cells_u, cells_l]
    keep = col >= 0
    pos_cols = np.where(cells_pos, col, -1)
    neg_cols = np.where(~cells_pos & (cells_u > 0) & keep, n_pairs + col, -1)
    rows_all = np.concatenate([cells_i[pos_cols >= 0], cells_i[neg_cols >= 0], cells_i])
    cols_all = np.concatenate(
        [pos_cols[pos_cols >= 0], neg_cols[neg_cols >= 0], 2 * n_pairs + cells_l]
    )
    T = sp.csr_matrix(
        (np.ones(len(rows_all), dtype=dtype), (rows_all, cols_all)), shape=(n, 2 * n_pairs + L)
    )
    R = (sp.csr_matrix(F, dtype=dtype) @ T).toarray()
    where = column[Cr, np.arange(L)]
    R1 = np.take_along_axis(R, where, axis=1)
    zero = Cr == 0
    R0 = np.take_along_axis(R, n_pairs + where, axis=1)
    n_far = F.sum(axis=1, dtype=np.int64)[:, None]
    R0[zero] = (n_far - R[:, 2 * n_pairs :])[zero]
    return R1, R0


def _pair_chunks(n_pairs: int, rows: int, cells: int) -> list[slice]:
    """Slices of ``n_pairs`` columns such that ``rows`` x chunk stays within ``cells``."""
    step = max(1, cells // max(1, rows))
    return [slice(a, min(a + step, n_pairs)) for a in range(0, n_pairs, step)]
