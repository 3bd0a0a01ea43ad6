"""A real approximate backend whose library search is made exact, except for chosen queries
answered with their farthest rows: a search with a known tail of queries at recall 0."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.spatial.distance import cdist


def _dense(A):
    return np.asarray(A.toarray() if sp.issparse(A) else A, dtype=np.float64)


def answer_wrong(monkeypatch, cls, is_bad):
    """Replace ``cls.search_library`` (the library's proposal of k candidates a query) by a
    brute-force search of the rows the library holds at the time (during the build's held-out
    calibration, not the held-out rows), which answers the queries that ``is_bad(index, Q,
    breadth)`` marks with their k *farthest* rows instead.  Everything after the library's
    proposal (re-ranking, leave-one-out, calibration, the measured shares) runs unchanged."""

    def search(self, Q, Qp, k, breadth):
        held = getattr(self, "_added", None)
        held = self._index.ntotal if held is None else held  # faiss
        Qd = _dense(Q)
        order = np.argsort(cdist(Qd, _dense(self._ref.X[self._order[:held]])), axis=1, kind="stable")
        ids = order[:, :k].copy()
        bad = np.asarray(is_bad(self, Qd, breadth), dtype=bool)
        ids[bad] = order[bad][:, ::-1][:, :k]
        return ids

    monkeypatch.setattr(cls, "search_library", search)
