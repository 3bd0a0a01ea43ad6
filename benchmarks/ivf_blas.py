"""A direction for issue 51, measured before it is built: an IVF whose cells are searched by BLAS, a cell at a time.

Usage::

    PYTHONPATH=src python benchmarks/ivf_blas.py [--n 200000] [--d 128] [--laws mixture clusters hard spread]
        [--probes 16 32 64 128] [--cells-per-sqrt-n 1] [--sample 2000] [--seed 0]

The exact engine's leave-one-out search costs n^2 d products; faiss's IVF searches each query alone (no BLAS).
Here the rows are grouped by k-means cell (faiss's ``Kmeans``, ``--cells-per-sqrt-n`` x sqrt(n) cells), and every
cell's rows are searched together, as one float32 GEMM, among the rows of the ``P`` cells nearest to the cell's
centroid (``--probes``; the cell itself first), then the 2 k best of each row re-ranked by float64 distances:
``n P (n / nlist) d`` products instead of ``n^2 d``.  Rows near a cell's border are the risk: their neighbours may
lie in a cell not among the P nearest to their own cell's centroid.

Printed per law and P: the seconds of the k-means and of the search (leave-one-out, every row, k = 10), the
exact engine's leave-one-out search of the same rows (``ExactIndex`` through ``loo_kneighbors``) once per law, and
the quality of a seeded sample of ``--sample`` rows against the exact answers: the mean tie-aware recall@10 and
the share of rows below recall 0.5 (the issue's tail: at most one in 10^4).  One run, this machine: name it.
The laws are those of ``benchmarks/certify.py`` (``scale.py``'s three and ``spread``).
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent


def _certify():
    spec = importlib.util.spec_from_file_location("certify_benchmark", HERE / "certify.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def cell_search(X: np.ndarray, centroids: np.ndarray, assign: np.ndarray, probes: int, k: int
                ) -> tuple[np.ndarray, np.ndarray]:
    """Leave-one-out k nearest of every row among the rows of the ``probes`` cells nearest its cell's centroid:
    float32 GEMM per cell, the 2 k best by float32 re-ranked in float64 (one's own row left out)."""
    n = len(X)
    nlist = len(centroids)
    order = np.argsort(assign, kind="stable")
    starts = np.searchsorted(assign[order], np.arange(nlist + 1))
    Xs = np.ascontiguousarray(X[order])  # rows by cell: a cell is a slice
    sq = (Xs.astype(np.float64) ** 2).sum(axis=1)
    sq32 = sq.astype(np.float32)
    C = centroids
    C64 = C.astype(np.float64)
    c2 = (C64 * C64).sum(axis=1)
    between = c2[:, None] - 2 * C64 @ C64.T + c2[None, :]
    np.fill_diagonal(between, -1.0)  # a cell is its own nearest
    near = np.argsort(between, axis=1)[:, :probes]
    dist = np.full((n, k), np.inf)
    idx = np.full((n, k), -1, dtype=np.intp)
    m = 2 * k
    for c in range(nlist):
        a, b = starts[c], starts[c + 1]
        if a == b:
            continue
        cols = np.concatenate([np.arange(starts[p], starts[p + 1]) for p in near[c]])
        G = Xs[a:b] @ Xs[cols].T  # float32
        D = sq32[a:b, None] - 2 * G + sq32[None, cols]
        D[np.arange(b - a), np.arange(b - a)] = np.inf  # the cell's own rows come first, in order
        mm = min(m, D.shape[1] - 1)
        part = np.argpartition(D, mm - 1, axis=1)[:, :mm]
        cand = cols[part]
        exact = sq[a:b, None] - 2 * np.einsum("id,ijd->ij", Xs[a:b].astype(np.float64),
                                              Xs[cand].astype(np.float64)) + sq[cand]
        exact[cand == np.arange(a, b)[:, None]] = np.inf
        top = np.lexsort((cand, exact), axis=1)[:, :k]
        kk = top.shape[1]
        dist[a:b, :kk] = np.sqrt(np.maximum(np.take_along_axis(exact, top, axis=1), 0.0))
        idx[a:b, :kk] = order[np.take_along_axis(cand, top, axis=1)]
    out_d, out_i = np.empty_like(dist), np.empty_like(idx)
    out_d[order], out_i[order] = dist, idx
    return out_d, out_i


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=200_000)
    p.add_argument("--d", type=int, default=128)
    p.add_argument("--laws", nargs="+", default=["mixture", "clusters", "hard", "spread"])
    p.add_argument("--probes", type=int, nargs="+", default=[16, 32, 64, 128])
    p.add_argument("--cells-per-sqrt-n", type=float, default=1.0)
    p.add_argument("--sample", type=int, default=2000)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()

    import faiss

    from mlneighbors.neighbors import ExactIndex
    from mlneighbors.neighbors._loo import loo_kneighbors

    certify = _certify()
    k = 10
    print("| law | P | k-means s | search s | exact s | x exact | recall@10 | < 0.5 |")
    print("|---|---|---|---|---|---|---|---|")
    for law in args.laws:
        X, _ = certify.rows_of(law, args.n, args.d, 1, args.seed)
        nlist = int(round(args.cells_per_sqrt_n * math.sqrt(args.n)))
        t0 = time.perf_counter()
        exact_index = ExactIndex().build(X)
        exact_d, _ = loo_kneighbors(exact_index, X, k, validated=True)
        exact_s = time.perf_counter() - t0
        del exact_index
        rng = np.random.default_rng(args.seed)
        sample = rng.choice(args.n, min(args.sample, args.n), replace=False)
        kth = exact_d[sample, -1]
        t0 = time.perf_counter()
        km = faiss.Kmeans(args.d, nlist, niter=20, seed=args.seed, max_points_per_centroid=64, verbose=False)
        km.train(X)
        _, assign = km.index.search(X, 1)
        kmeans_s = time.perf_counter() - t0
        for probes in args.probes:
            t0 = time.perf_counter()
            dist, _ = cell_search(X, km.centroids, assign.ravel(), min(probes, nlist), k)
            search_s = time.perf_counter() - t0
            hits = (dist[sample] <= kth[:, None] * (1 + 1e-9)).sum(axis=1)
            recall = hits.mean() / k
            low = np.mean(hits < k / 2)
            total = kmeans_s + search_s
            print(f"| {law} | {probes} | {kmeans_s:.1f} | {search_s:.1f} | {exact_s:.1f} | {exact_s / total:.1f} "
                  f"| {recall:.4f} | {low:.4f} |", flush=True)


if __name__ == "__main__":
    main()
