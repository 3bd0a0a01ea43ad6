"""How much of the rows a certified search must read: the Voronoi bound of an IVF's cells (issue 51).

Usage::

    PYTHONPATH=src python benchmarks/certify.py [--n 200000] [--d 128] [--laws mixture clusters hard spread]
        [--queries 2000] [--cells-per-sqrt-n 4] [--bisectors 8] [--seed 0]

"Certify instead of widen" (issue 51): an IVF's cells are the Voronoi cells of its centroids (each row in the
cell of its nearest centroid), so for a query ``q`` whose nearest centroid is ``a``, no row of cell ``c`` is
nearer to ``q`` than the distance from ``q`` to the bisecting hyperplane of ``a`` and ``c``:

    LB_c(q) = (||q - m_c||^2 - ||q - m_a||^2) / (2 ||m_c - m_a||)

(the largest such bound over the ``--bisectors`` nearest centroids ``a`` is a bound too).  Once a search holds
``k`` candidates whose k-th distance is ``r``, every cell with ``LB_c(q) > r`` is proven to hold no better row:
the answer is exact after reading only the cells with ``LB_c(q) <= r``.  This script measures, per law, with the
true k-th distance ``r`` of every sampled query (leave-one-out training rows and new queries, k = 10):

- ``cells``: how many cells a query must read (median, 99th percentile, largest), of ``nlist``;
- ``rows read``: the share of the training rows in those cells (mean, 99th percentile): what a certified exact
  search pays for its distance products, against 1 for the exact engine;
- ``certified at p``: the share of queries whose answer is already proven after reading their ``p`` nearest
  cells (p = 8, 32, 64): the union's IVF reads 32.

Nothing here is the library's search: it is the measurement that decides whether building one pays.  The laws are
``benchmarks/scale.py``'s (``mixture``, ``clusters``, ``hard``) and ``spread``: the clustered generator with wide,
overlapping clusters (spread 1.0, 200 clusters), where Voronoi cells cut through the data's mass, the law hardest
for the bound among those tried.
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent


def _module(name: str):
    spec = importlib.util.spec_from_file_location(f"{name}_benchmark", HERE / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def rows_of(law: str, n: int, d: int, m: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``n`` training rows and ``m`` new queries of a law (float32)."""
    if law == "spread":
        tail = _module("tail")
        X = tail.clustered(n + m, d, seed, n_clusters=200, latent_dim=16, spread=1.0, noise=0.1)[0]
    else:
        X = _module("scale").dataset(n, d, m, seed, law)[0:3:2]
        X = np.vstack(X)
    X = np.asarray(X, dtype=np.float32)
    return X[:n], X[n:]


def exact_kth(X: np.ndarray, Q: np.ndarray, k: int, exclude: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """The k-th smallest Euclidean distance of every query among the rows (one's own row left out), and the
    rows of its k nearest."""
    out = np.empty(len(Q))
    nearest = np.empty((len(Q), k), dtype=np.int64)
    x2 = (X.astype(np.float64) ** 2).sum(axis=1)
    for a in range(0, len(Q), 256):
        q = Q[a : a + 256].astype(np.float64)
        D = (q * q).sum(axis=1)[:, None] - 2 * q @ X.T.astype(np.float64) + x2[None, :]
        if exclude is not None:
            D[np.arange(len(q)), exclude[a : a + 256]] = np.inf
        part = np.argpartition(D, k - 1, axis=1)[:, :k]
        nearest[a : a + 256] = part
        out[a : a + 256] = np.sqrt(np.maximum(np.take_along_axis(D, part, axis=1).max(axis=1), 0.0))
    return out, nearest


def bounds(Q: np.ndarray, centroids: np.ndarray, bisectors: int) -> tuple[np.ndarray, np.ndarray]:
    """Every query's lower bound for every cell (the largest over its ``bisectors`` nearest centroids) and its
    cells in order of centroid distance."""
    q = Q.astype(np.float64)
    C = centroids.astype(np.float64)
    D2 = (q * q).sum(axis=1)[:, None] - 2 * q @ C.T + (C * C).sum(axis=1)[None, :]
    order = np.argsort(D2, axis=1)
    lb = np.zeros_like(D2)
    rows = np.arange(len(q))
    G = C @ C.T
    g = np.diag(G)
    for j in range(bisectors):
        a = order[:, j]
        gap = np.sqrt(np.maximum(g[None, :] + g[a][:, None] - 2 * G[a], 1e-300))  # ||m_c - m_a||
        lb = np.maximum(lb, (D2 - D2[rows, a][:, None]) / (2 * gap))
    return np.maximum(lb, 0.0), order


def measure(law: str, n: int, d: int, m: int, cells_per_sqrt_n: float, bisectors: int, seed: int, k: int = 10
            ) -> list[dict]:
    import faiss

    X, Qnew = rows_of(law, n, d, m, seed)
    nlist = int(round(cells_per_sqrt_n * math.sqrt(n)))
    t0 = time.perf_counter()
    km = faiss.Kmeans(d, nlist, niter=20, seed=seed, max_points_per_centroid=64, verbose=False)
    km.train(X)
    _, assign = km.index.search(X, 1)
    sizes = np.bincount(assign.ravel(), minlength=nlist)
    rng = np.random.default_rng(seed)
    loo = rng.choice(n, m, replace=False)
    out = []
    for kind, Q, exclude in (("leave-one-out", X[loo], loo), ("new", Qnew, None)):
        r, nearest = exact_kth(X, Q, k, exclude)
        lb, order = bounds(Q, km.centroids, bisectors)
        need = lb <= r[:, None] * (1 + 1e-6)  # cells that may hold a row within r
        # the bound holds: every true neighbour lies in a cell it keeps (a check of this script, not a claim)
        missed = ~need[np.arange(len(Q))[:, None], assign.ravel()[nearest]]
        if missed.any():
            raise AssertionError(f"{law} {kind}: {int(missed.sum())} true neighbours in cells the bound ruled out")
        cells = need.sum(axis=1)
        share = (need * sizes[None, :]).sum(axis=1) / n
        certified = {}
        for p in (8, 32, 64):
            read = np.zeros_like(need)
            read[np.arange(len(Q))[:, None], order[:, :p]] = True
            certified[p] = float(np.mean(~(need & ~read).any(axis=1)))
        out.append({"law": law, "kind": kind, "nlist": nlist, "cells_med": float(np.median(cells)),
                    "cells_p99": float(np.percentile(cells, 99)), "cells_max": int(cells.max()),
                    "share_mean": float(share.mean()), "share_p99": float(np.percentile(share, 99)),
                    **{f"cert_{p}": v for p, v in certified.items()}, "seconds": time.perf_counter() - t0})
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=200_000)
    p.add_argument("--d", type=int, default=128)
    p.add_argument("--laws", nargs="+", default=["mixture", "clusters", "hard", "spread"])
    p.add_argument("--queries", type=int, default=2000)
    p.add_argument("--cells-per-sqrt-n", type=float, default=4.0)
    p.add_argument("--bisectors", type=int, default=8)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    print("| law | queries | nlist | cells read: median | p99 | max | rows read: mean | p99 | certified at 8 | 32 "
          "| 64 |\n|---|---|---|---|---|---|---|---|---|---|---|")
    for law in args.laws:
        for row in measure(law, args.n, args.d, args.queries, args.cells_per_sqrt_n, args.bisectors, args.seed):
            print(f"| {row['law']} | {row['kind']} | {row['nlist']} | {row['cells_med']:.0f} | {row['cells_p99']:.0f} "
                  f"| {row['cells_max']} | {row['share_mean']:.3f} | {row['share_p99']:.3f} | {row['cert_8']:.3f} "
                  f"| {row['cert_32']:.3f} | {row['cert_64']:.3f} |", flush=True)


if __name__ == "__main__":
    main()
