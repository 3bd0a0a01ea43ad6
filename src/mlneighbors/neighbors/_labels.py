"""Label-restricted search: the ``b`` nearest rows *among the members of each label*.

Class-balanced kNN (BKNN) needs, for every query and every label, the ``b`` nearest training
rows carrying that label.  :class:`LabelRestrictedIndex` answers that question over any index
of the package's protocol, choosing one of two designs (they give the same neighbours):

- **global search with masking** (an index that declares the metric in its
  ``Capabilities.label_masking``: the exact engine, :class:`ExactIndex`): one distance block
  per block of queries (one float64 GEMM), then, for every label at once, the ``b`` smallest
  entries among the label's member columns.  Labels are grouped by their number of members
  into a few size classes (four per octave: at most 25 % padding); each class is one
  ``np.take`` of the member columns and one ``np.partition`` of the padded rows.  A loop runs
  over those size classes (about 4 log2(n) of them, each handling many labels), never over
  labels or instances.  The product covers as many queries as a cache budget of distance rows
  holds; the member columns are gathered in smaller chunks of those rows (a product of 20 rows,
  sized for the gathered columns, ran at half the speed of one of 150: 1.6x on BKNN's fit on
  corel16k001).
- **one index per label** (any other index, through the protocol: approximate backends, a
  user's object, later backends): label ``l``'s members go into their own copy of the index,
  queried for ``b`` neighbours (``b + 1`` with leave-one-out, the row itself then dropped by
  :func:`~mlneighbors.neighbors.drop_self`).  This is a loop over labels; an approximate index
  answers top-k queries only, so masking one global search is impossible there.

Measured (``benchmarks/bknn.py``: train leave-one-out + test queries, b = 5, 2-core machine)::

    dataset   n_train     d    L   masked   per-label (ExactIndex)   ratio
    emotions      391    72    6   0.008 s  0.074 s                   9.7
    yeast        1500   103   14   0.331 s  0.515 s                   1.6
    enron        1123  1001   53   0.103 s  0.906 s                   8.8
    corel5k      4500   499  374   0.820 s  6.860 s                   8.4

Distances of the masked search come from ``||q||^2 - 2 q.x + ||x||^2`` on data centred at the
training mean (dense; centring removes the cancellation for data far from the origin and
changes no distance) in float64; the per-label search returns its index's distances.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from .._config import block_rows
from ._capabilities import get_capabilities
from ._distance import normalize_rows
from ._loo import drop_self
from ._protocol import check_result, unbuilt_copy

__all__ = ["LabelRestrictedIndex"]


def _size_classes(Y: np.ndarray, b: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Labels grouped by padded member count, with their padded member-row matrices.

    A label with ``n_l <= b`` members is padded to ``b``; a larger one to the next value
    ``m * 2**e`` with ``m`` in 4..7 (four sizes per octave, at most 25 % padding).  The
    padding entry is ``n`` (a column of ``inf`` distances appended to every block).
    """
    n, n_labels = Y.shape
    counts = np.asarray(Y.sum(axis=0)).ravel().astype(np.int64)
    step = 2 ** np.maximum(np.floor(np.log2(np.maximum(counts, 1))).astype(np.int64) - 2, 0)
    padded = np.where(counts <= b, b, -(-counts // step) * step)
    Yc = sp.csc_matrix(Y)  # column l's member rows: indices[indptr[l]:indptr[l + 1]]
    classes = []
    for size in np.unique(padded):  # a few dozen sizes at most, not one per label
        labels = np.flatnonzero(padded == size)
        lens = counts[labels]
        members = np.full((len(labels), size), n, dtype=np.intp)
        filled = np.arange(size) < lens[:, None]  # row-major: label by label, in order
        offsets = np.repeat(Yc.indptr[labels] - (np.cumsum(lens) - lens), lens)
        members[filled] = Yc.indices[offsets + np.arange(lens.sum())]
        classes.append((labels, members))
    return classes


def _steps(n: int, step: int) -> list[slice]:
    """``0 .. n`` in slices of ``step`` rows (the last shorter)."""
    return [slice(a, min(a + step, n)) for a in range(0, n, step)]


class _MaskedSearch:
    """Squared distances to the b nearest members of every label, from one global
    distance block per query block (the exact engine's label-restricted search)."""

    exact = True

    def __init__(self, X: Any, Y: np.ndarray, b: int, metric: str) -> None:
        self.n, self.n_labels = Y.shape
        self.b = b
        self.metric = metric
        self.sparse = sp.issparse(X)
        if not self.sparse:
            X = np.asarray(X, dtype=np.float64)  # float32 rows too: this search computes in float64
        if metric == "cosine":
            X = normalize_rows(X)
            self.mean = None
        elif self.sparse:
            self.mean = None
        else:
            self.mean = X.mean(axis=0)
            X = X - self.mean
        self.X = sp.csr_matrix(X) if self.sparse else np.ascontiguousarray(X)
        self.sq_norms = None
        if metric == "euclidean":
            if self.sparse:
                self.sq_norms = np.asarray(self.X.multiply(self.X).sum(axis=1)).ravel()
            else:
                self.sq_norms = (self.X * self.X).sum(axis=1)
        self.classes = _size_classes(Y, b)
        gathered = sum(m.size for _, m in self.classes)
        # a block of queries: its distance row and its output; the member columns are gathered
        # and partitioned in smaller chunks of its rows (:meth:`_chunks`), so the product stays
        # one GEMM of many rows (a GEMM of 20 rows ran at half the speed of one of 150)
        self.row_bytes = 8 * (self.n + 1 + 2 * self.n_labels * b) + 64
        self.chunk_bytes = 16 * gathered + 64

    def block_size(self) -> int:
        return block_rows(self.row_bytes, cap="label_block")

    def _chunks(self, q: int) -> list[slice]:
        """Chunks of a block's rows whose gathered member columns (and their partition) stay
        within the cache budget."""
        return _steps(q, block_rows(self.chunk_bytes, cap="label_block"))

    def _distance_block(self, Q: Any, exclude: np.ndarray | None) -> np.ndarray:
        """(q, n + 1) squared distances; the last column and excluded rows are ``inf``."""
        q = Q.shape[0]
        Qd = Q.toarray() if sp.issparse(Q) else np.asarray(Q, dtype=np.float64)
        if self.metric == "cosine":
            Qd = normalize_rows(Qd)
        elif self.mean is not None:
            Qd = Qd - self.mean
        D = np.empty((q, self.n + 1), dtype=np.float64)
        G = D[:, : self.n]
        if self.sparse:
            G[...] = (self.X @ Qd.T).T
        else:
            np.matmul(Qd, self.X.T, out=G)
        if self.metric == "cosine":
            np.subtract(1.0, G, out=G)
            np.clip(G, 0.0, 2.0, out=G)
            G *= G
        else:
            G *= -2.0
            G += self.sq_norms
            G += (Qd * Qd).sum(axis=1)[:, None]
            np.maximum(G, 0.0, out=G)
        D[:, self.n] = np.inf
        if exclude is not None:  # leave-one-out: the row itself, by index, before selecting
            D[np.arange(q), exclude] = np.inf
        return D

    def sq_distances(self, Q: Any, exclude: np.ndarray | None) -> np.ndarray:
        D_all = self._distance_block(Q, exclude)
        b = self.b
        out_all = np.empty((Q.shape[0], self.n_labels, b), dtype=np.float64)
        for rows in self._chunks(Q.shape[0]):
            D, out = D_all[rows], out_all[rows]
            q = D.shape[0]
            for labels, members in self.classes:
                picked = np.take(D, members, axis=1)  # (q, n_class_labels, size)
                size = members.shape[1]
                if size > b:
                    flat = picked.reshape(-1, size)  # a fresh array: partition it in place
                    flat.partition(b - 1, axis=1)
                    picked = flat[:, :b].reshape(q, len(labels), b)
                out[:, labels, :] = picked
        return out_all

    def kneighbors(self, Q: Any, exclude: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        D_all = self._distance_block(Q, exclude)
        b = self.b
        sq_all = np.empty((Q.shape[0], self.n_labels, b), dtype=np.float64)
        idx_all = np.empty((Q.shape[0], self.n_labels, b), dtype=np.intp)
        for rows in self._chunks(Q.shape[0]):
            D, sq, idx = D_all[rows], sq_all[rows], idx_all[rows]
            for labels, members in self.classes:
                cols = np.broadcast_to(members, (D.shape[0],) + members.shape)  # (q, n_class_labels, size)
                picked = np.take(D, members, axis=1)
                order = np.lexsort((cols, picked), axis=-1)[..., :b]  # (distance, row) order
                sq[:, labels, :] = np.take_along_axis(picked, order, axis=-1)
                idx[:, labels, :] = np.take_along_axis(cols, order, axis=-1)
        idx_all[np.isinf(sq_all)] = -1
        return np.sqrt(sq_all), idx_all


class _PerLabelSearch:
    """One copy of an index per label, built on the label's members."""

    def __init__(self, index: Any, X: Any, Y: np.ndarray, b: int) -> None:
        self.n, self.n_labels = Y.shape
        self.b = b
        self.exact = get_capabilities(index).exact
        Yc = sp.csc_matrix(Y)
        self.members = np.split(Yc.indices.astype(np.intp), Yc.indptr[1:-1])
        # an approximate index answers top-k queries only, so labels cannot be masked out
        # of one global search: this loop over labels is the price of such a backend
        self.indexes = [unbuilt_copy(index).build(X[m]) if len(m) else None for m in self.members]

    def block_size(self) -> int:
        return block_rows(8 * self.n_labels * (2 * self.b + 2) + 64, share=0.5)

    def _per_label(self, Q: Any, exclude: np.ndarray | None):
        """(label, members, dist, idx) per label with members: idx local to the members."""
        b = self.b
        for label, (members, index) in enumerate(zip(self.members, self.indexes, strict=True)):
            if index is None:
                continue
            extra = 1 if exclude is not None else 0
            k = min(b + extra, len(members))
            dist, idx = check_result(*index.query(Q, k), Q.shape[0], k, len(members), index)
            if exclude is not None:
                dist, idx = drop_self(dist, idx, exclude, b, rows=members)
            yield label, members, np.asarray(dist, dtype=np.float64), np.asarray(idx, dtype=np.intp)

    def sq_distances(self, Q: Any, exclude: np.ndarray | None) -> np.ndarray:
        b = self.b
        out = np.full((Q.shape[0], self.n_labels, b), np.inf)
        for label, _, dist, _ in self._per_label(Q, exclude):
            d2 = dist * dist
            d2.sort(axis=1)  # padding (inf) goes last
            m = min(b, d2.shape[1])
            out[:, label, :m] = d2[:, :m]
        return out

    def kneighbors(self, Q: Any, exclude: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        q, b = Q.shape[0], self.b
        out = np.full((q, self.n_labels, b), np.inf)
        rows = np.full((q, self.n_labels, b), -1, dtype=np.intp)
        for label, members, dist, idx in self._per_label(Q, exclude):
            m = min(b, dist.shape[1])
            out[:, label, :m] = dist[:, :m]
            rows[:, label, :m] = np.where(idx[:, :m] >= 0, members[np.maximum(idx[:, :m], 0)], -1)
        return out, rows


class LabelRestrictedIndex:
    """The ``n_per_label`` nearest rows among the members of every label, over any index.

    Parameters
    ----------
    index : unbuilt index object
        An index whose capabilities allow masking for its metric
        (``label_masking``: :class:`ExactIndex`) gets the masked global search; any other
        index of the protocol (``build``/``query``) is copied once per label (see the module
        docstring).  A :class:`NeighborCache` (an object with a ``wrapped`` index) stands for
        the index it wraps.
    n_per_label : int
        ``b``, neighbours per label; a label with fewer members gives all of them.

    Examples
    --------
    >>> import numpy as np
    >>> from mlneighbors.neighbors import LabelRestrictedIndex, get_index
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]])
    >>> Y = np.array([[1, 0], [0, 1], [1, 0], [0, 1]])
    >>> index = LabelRestrictedIndex(get_index("exact"), n_per_label=1).build(X, Y)
    >>> dist, idx = index.kneighbors([[1.2]])
    >>> idx[0].tolist(), dist[0].round(2).tolist()
    ([[2], [1]], [[0.8], [0.2]])
    """

    def __init__(self, index: Any, n_per_label: int) -> None:
        self.index = index
        self.n_per_label = n_per_label

    @property
    def metric(self) -> str:
        return getattr(self.index, "metric", "euclidean")

    @property
    def exact(self) -> bool:
        return self._search.exact if hasattr(self, "_search") else get_capabilities(self.index).exact

    @property
    def name(self) -> str:
        """The name of the index searched per label (a model's ``backend_``): once built, the
        backend ``"auto"`` picked."""
        index = self.__dict__.get("_picked", self.index)
        return str(getattr(index, "backend_", None) or getattr(index, "name", None) or type(index).__name__)

    @property
    def recall_(self) -> float | None:
        """1.0 when exact; else the mean of the per-label indexes' ``recall_`` weighted by
        their members (None when one of them does not report a recall)."""
        return self._weighted("recall_", 1.0)

    @property
    def low_recall_share_(self) -> float | None:
        """0.0 when exact; else the mean of the per-label indexes' ``low_recall_share_`` (the
        share of their sampled queries whose recall is below one half) weighted by their
        members, as :attr:`recall_` (None when one of them does not report one)."""
        return self._weighted("low_recall_share_", 0.0)

    def _weighted(self, attribute: str, exact: float) -> float | None:
        """The per-label indexes' ``attribute`` averaged with their members as weights."""
        if self.exact:
            return exact
        search = self.__dict__.get("_search")
        indexes = getattr(search, "indexes", None)
        if indexes is None:
            return None
        pairs = [(len(m), getattr(ix, attribute, None)) for ix, m in zip(indexes, search.members, strict=True)
                 if ix is not None]
        if not pairs or any(r is None for _, r in pairs):
            return None
        return float(sum(w * r for w, r in pairs) / sum(w for w, _ in pairs))

    def build(self, X: Any, Y: np.ndarray) -> LabelRestrictedIndex:
        """Index the rows of ``X`` by the labels of ``Y``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        Y : {ndarray, sparse matrix} of shape (n_samples, n_labels)
            0/1 label indicator.

        Returns
        -------
        self : LabelRestrictedIndex
        """
        Y = Y if sp.issparse(Y) else np.asarray(Y)
        # a neighbour cache (shared by the models of a split) serves global top-k queries
        # only: the label-restricted search uses the index it wraps
        index = getattr(self.index, "wrapped", self.index)
        if callable(getattr(index, "pick", None)):
            # "auto" picks once, for the whole training set: its pick for n rows is the pick for
            # fewer (a label's members), and an exact pick gets the masked global search
            index = index.pick(X)
        self._picked = index
        if getattr(index, "metric", None) in get_capabilities(index).label_masking:
            self._search: Any = _MaskedSearch(X, Y, self.n_per_label, index.metric)
        else:
            self._search = _PerLabelSearch(index, X, Y, self.n_per_label)
        self.n_samples_fit_, self.n_labels_ = Y.shape
        return self

    @property
    def masked(self) -> bool:
        """Whether the search is the exact engine's masked one (pure NumPy on the indexed rows:
        its blocks may run on several threads at once)."""
        return isinstance(self._search, _MaskedSearch)

    def row_blocks(self, n_queries: int) -> list[slice]:
        """Blocks of query rows whose temporaries fit the working memory.

        Parameters
        ----------
        n_queries : int

        Returns
        -------
        blocks : list of slice
        """
        return _steps(n_queries, self._search.block_size())

    def sq_distances(self, Q: Any, exclude: np.ndarray | None = None) -> np.ndarray:
        """Squared distances from every row of ``Q`` (one block, see :meth:`row_blocks`) to
        the ``b`` nearest members of every label: shape (n_queries, n_labels, b), in no
        particular order within a label, ``inf`` where a label has fewer members.
        ``exclude`` (one row number per query, or None) is left out (leave-one-out).

        Parameters
        ----------
        Q : {array-like, sparse matrix} of shape (n_queries, n_features)
        exclude : ndarray of shape (n_queries,), default=None

        Returns
        -------
        sq_dist : ndarray of shape (n_queries, n_labels, b)
        """
        return self._search.sq_distances(Q, None if exclude is None else np.asarray(exclude))

    def kneighbors(self, Q: Any, exclude: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """True distances and row numbers of the ``b`` nearest members of every label,
        ascending by (distance, row), each of shape (n_queries, n_labels, b); ``inf`` and
        ``-1`` where a label has fewer members.  Blocked by :meth:`row_blocks`.

        Parameters
        ----------
        Q : {array-like, sparse matrix} of shape (n_queries, n_features)
        exclude : ndarray of shape (n_queries,), default=None
            One row number per query left out (leave-one-out), or None.

        Returns
        -------
        dist : ndarray of shape (n_queries, n_labels, b)
        idx : ndarray of shape (n_queries, n_labels, b)
        """

        Q = Q if sp.issparse(Q) else np.asarray(Q, dtype=np.float64)
        n = Q.shape[0]
        shape = (n, self.n_labels_, self.n_per_label)
        dist, idx = np.empty(shape), np.empty(shape, dtype=np.intp)
        for rows in self.row_blocks(n):
            excl = None if exclude is None else np.asarray(exclude)[rows]
            dist[rows], idx[rows] = self._search.kneighbors(Q[rows], excl)
        return dist, idx
