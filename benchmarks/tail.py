"""The tail of an approximate neighbour search: how many queries get (nearly) none of their neighbours (issue 29).

Usage::

    PYTHONPATH=src python benchmarks/tail.py [--laws mixture clusters hard] [--n 100000] [--d 128]
        [--queries 10000] [--loo 10000] [--contenders lib:hnswlib lib:hnswlib@0.99 hnsw:ef=64 union:ef=64,nprobe=8 ...]
        [--threads 2] [--seed 0] [--study CONTENDER ...]
    PYTHONPATH=src python benchmarks/tail.py --quick          # 30,000 x 128, every law, the default contenders
    PYTHONPATH=src python benchmarks/tail.py --laws hard --describe   # the laws' shapes only, no search

What it measures.  For every law and contender: the per-query **tie-aware recall@10** (a returned neighbour counts
when its float64 distance is at most the exact 10th distance of that query) of (a) the leave-one-out queries of
``--loo`` sampled indexed rows (their own row excluded, as a model's ``fit`` asks) and (b) ``--queries`` new rows
drawn from the same law (as ``predict`` asks); of each: the mean recall, the share of queries with recall < 0.5,
with recall 0, and with recall < 1.  Beside them: the seconds to search the new queries (re-ranking included) and
their ratio to the exact search's seconds measured in the same run, the build seconds (every structure the
contender needs; the library backends' recall calibration included), and an estimate of the memory the contender
holds beyond the training rows (``MB extra``: graph links, codes, lists; a float32 copy of the rows that a
library keeps of its own is counted in it).  The exact answers come from the library's exact engine
(``get_index("exact")``, ``loo_kneighbors``).

Contenders (``--contenders``; a name, then ``:key=value,...``):

- ``lib:NAME`` and ``lib:NAME@R``: the library's backend ``get_index(NAME, recall=R)`` (hnswlib, faiss-hnsw,
  faiss-ivf; default calibration without ``@R``), built, calibrated and searched as a model does;
- ``hnsw:ef=E[,M=48,efc=40,sq=0]``: faiss ``IndexHNSWFlat`` at a fixed ``efSearch``, its k (k + 1 for
  leave-one-out) candidates re-ranked in float64 (``M``/``efc``: a graph with more links and a wider construction;
  ``sq=1``: ``IndexHNSWSQ``, the graph built and searched over 8-bit codes of the rows, a quarter of their memory);
- ``union:ef=E,nprobe=P[,M=48,efc=40,sq=0,lists=1,cand=2]``: the HNSW candidates and those of an IVF with 8-bit
  scalar-quantised codes (``IndexIVFScalarQuantizer`` SQ8, ``lists`` x sqrt(n) lists, ``cand`` x k candidates at
  ``nprobe``), merged and re-ranked in float64: two structures whose failures need not coincide (the library's
  ``"faiss-union"`` is ``M=32,efc=100,sq=1,lists=4,cand=2,nprobe=32`` with ``ef`` calibrated from 64 up for new
  queries and from 32 up for leave-one-out ones: compare ``ef=64`` on the new queries and ``ef=32`` on the
  leave-one-out ones);
- ``seeded:ef=E,probe=P[,lists=F]``: HNSW's level-0 search (``search_level_0``, all entry points enqueued) started
  from ``P`` entry points given by a coarse quantizer of ``F`` x sqrt(n) k-means centroids (entry point of a
  centroid: the indexed row nearest to it), instead of the greedy descent through the upper levels;
- ``seeded+:ef=E,probe=P``: that search's candidates and the ordinary HNSW search's, merged;
- ``cert:ef=E[,lists=F]``: an exact search with a certificate.  The rows are cut into ``F`` x sqrt(n) k-means
  lists, each with its centroid c and radius r (the largest distance of a member to c).  The HNSW answer at
  ``ef`` gives every query an upper bound t of its k-th distance; a list can hold a row nearer than t only when
  ||q - c|| - r <= t, so every other list is skipped and the lists left are scanned exhaustively: the answer is
  exact (recall 1 by construction, checked).  The columns ``lists`` and ``rows scanned`` say what it cost per
  query (mean and 99th percentile), on each law.

Laws (``--laws``):

- ``mixture``: ``benchmarks/scale.py``'s label-mixture law (imported, not copied): 200 labels, 3 a row (Zipf), a
  row the mean of its labels' prototypes plus noise; no cluster structure of low dimension;
- ``clusters``: :func:`clustered` with ``--clusters 1000 --latent-dim 16 --spread 0.2 --noise 0.1``: clusters in
  a latent space mapped to d dimensions, moderately tight;
- ``hard``: :func:`clustered` with ``--hard-clusters 5000 --hard-latent-dim 16 --hard-spread 0.1 --hard-noise
  0.05 --hard-skew 1.5``: many small, tight, well-separated clusters (median 7 rows at 10^5 rows, 61 % of them
  with fewer than 11), what makes HNSW's greedy descent end in the wrong cluster.  The hardest for faiss HNSW at
  ef 64 and 256 of the settings tried at 10^5 (latent dim 4 to 24, spread 0.05 to 0.2, noise 0.02 to 0.1, 2,000
  to 5,000 clusters, skew 1 and 1.5);
- ``custom``: :func:`clustered` with the ``--clusters/--latent-dim/--spread/--noise/--skew/--bend`` given.

``--study CONTENDER`` (default: the library's ``union:ef=64,nprobe=32,M=32,efc=100,lists=4,sq=1``) adds, for that
contender, what a fit-time sample of 1,000 rows would have said: the counts of leave-one-out queries below 0.5 and
below 1 in each of the ``--loo`` / 1,000 disjoint samples of 1,000 rows, and the one-sided 95 % upper bound of the
share (Clopper-Pearson) each gives, against the share measured on all of them; for a ``union``, how often each of
its two structures alone falls below 0.5 (against the exact answer, and against the union's own answer, which a
fit can compute on every row without the exact search), and how often both do.

Caveats: a shared 2-core machine (another CI run beside it): absolute seconds are noisy; compare only the ratios
of one run.  Runs of up to 10^5 rows only (the default contenders: 2 to 10 minutes a law at 10^5 here, as
loaded).  faiss threads: ``--threads``; the library backends use theirs.
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import os
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("OMP_WAIT_POLICY", "passive")

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402

HERE = Path(__file__).resolve().parent
# benchmarks/dask.py would shadow the dask package: this folder leaves sys.path
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]

K = 10
MB = 2**20
DEFAULT_CONTENDERS = [
    "lib:hnswlib", "lib:hnswlib@0.99", "lib:faiss-hnsw", "lib:faiss-hnsw@0.99", "lib:faiss-ivf", "lib:faiss-ivf@0.99",
    "hnsw:ef=64", "hnsw:ef=256", "hnsw:ef=64,M=64,efc=200", "hnsw:ef=128,M=64,efc=200",
    "union:ef=64,nprobe=8", "union:ef=64,nprobe=32", "union:ef=32,nprobe=16,M=64,efc=200",
    "union:ef=64,nprobe=16,M=64,efc=200", "seeded:ef=64,probe=8", "seeded+:ef=64,probe=8",
    "cert:ef=64,lists=4", "cert:ef=64,lists=16",
]
BEST = "union:ef=64,nprobe=32,M=32,efc=100,lists=4,sq=1"  # the library's "faiss-union" (new queries)
LAWS = {
    "clusters": dict(n_clusters=1000, latent_dim=16, spread=0.2, noise=0.1, skew=1.0, bend=0.3),
    "hard": dict(n_clusters=5000, latent_dim=16, spread=0.1, noise=0.05, skew=1.5, bend=0.3),
}


def _scale_benchmark() -> Any:
    """benchmarks/scale.py, for its label-mixture law (imported by path)."""
    spec = importlib.util.spec_from_file_location("scale_benchmark", HERE / "scale.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# -- data ---------------------------------------------------------------------------------------------------------


def _nearest_other(A: np.ndarray) -> np.ndarray:
    """Every row's distance to its nearest other row of ``A`` (brute force, blocks)."""
    aa = (A * A).sum(axis=1)
    out = np.empty(len(A))
    for a in range(0, len(A), 1024):
        D = aa[a:a + 1024, None] - 2 * A[a:a + 1024] @ A.T + aa[None, :]
        D[np.arange(D.shape[0]), np.arange(a, a + D.shape[0])] = np.inf
        out[a:a + 1024] = np.sqrt(np.maximum(D.min(axis=1), 0))
    return out


def clustered(n_rows: int, d: int, seed: int, *, n_clusters: int, latent_dim: int, spread: float, noise: float,
              skew: float = 1.0, bend: float = 0.3, labels_per_cluster: int = 3
              ) -> tuple[np.ndarray, sp.csr_matrix, np.ndarray]:
    """Clusters of low intrinsic dimension in d dimensions, labels owned by clusters.

    ``n_clusters`` centres are drawn from N(0, I_q) in a latent space of ``latent_dim`` = q dimensions; a row picks a
    cluster with probability proportional to a log-normal weight (sigma ``skew``: sizes from a skewed law, many
    small clusters and a few large ones), then a latent point N(centre, s^2 I_q), s = ``spread`` x (median distance
    of a centre to its nearest other centre) / sqrt(q), so that a cluster's RMS radius is ``spread`` times the
    typical gap between clusters.  The latent point z is mapped to d dimensions by a random linear map plus a mild
    nonlinearity, ``z A + bend * sin(z B)`` (A, B Gaussian q x d with variance 1/q); isotropic noise of RMS norm
    ``noise`` x (the median nearest-centre distance in d dimensions) is added, and the rows are scaled so that this
    median distance is 1.  Labels: ``n_clusters // 2`` labels of Zipf popularity; a cluster owns 1 to
    ``labels_per_cluster`` of them; a row carries each of its cluster's labels with probability 0.9 (at least one)
    and, with probability 0.05, one label drawn from all.  Returns X (float64), Y (CSR 0/1) and each row's cluster.
    """
    rng = np.random.default_rng([seed, n_clusters, latent_dim, d, 29])
    q = latent_dim
    centres = rng.standard_normal((n_clusters, q))
    A = rng.standard_normal((q, d)) / math.sqrt(q)
    B = rng.standard_normal((q, d)) / math.sqrt(q)

    def embed(z: np.ndarray) -> np.ndarray:
        return z @ A + bend * np.sin(z @ B)

    latent_gap = float(np.median(_nearest_other(centres)))
    ambient_gap = float(np.median(_nearest_other(embed(centres))))
    weights = rng.lognormal(0.0, skew, n_clusters)
    cluster = rng.choice(n_clusters, size=n_rows, p=weights / weights.sum())
    X = np.empty((n_rows, d))
    for a in range(0, n_rows, 100_000):
        b = min(a + 100_000, n_rows)
        z = centres[cluster[a:b]] + rng.standard_normal((b - a, q)) * (spread * latent_gap / math.sqrt(q))
        X[a:b] = embed(z) + rng.standard_normal((b - a, d)) * (noise * ambient_gap / math.sqrt(d))
    X /= ambient_gap
    n_labels = max(2, n_clusters // 2)
    popularity = 1.0 / np.arange(1, n_labels + 1)
    owned = [rng.choice(n_labels, size=rng.integers(1, labels_per_cluster + 1), replace=False,
                        p=popularity / popularity.sum()) for _ in range(n_clusters)]
    rows, cols = [], []
    for i, c in enumerate(cluster):  # a Python loop over rows: the data law only, 10^5 rows in a second
        mine = owned[c]
        keep = mine[rng.random(len(mine)) < 0.9]
        keep = keep if len(keep) else mine[:1]
        if rng.random() < 0.05:
            keep = np.union1d(keep, rng.integers(n_labels, size=1))
        rows.extend([i] * len(keep))
        cols.extend(keep.tolist())
    Y = sp.csr_matrix((np.ones(len(rows), dtype=np.int8), (rows, cols)), shape=(n_rows, n_labels))
    Y.sum_duplicates()
    return X, Y, cluster


def law_params(name: str, args: argparse.Namespace) -> dict:
    if name == "hard":
        return dict(n_clusters=args.hard_clusters, latent_dim=args.hard_latent_dim, spread=args.hard_spread,
                    noise=args.hard_noise, skew=args.hard_skew, bend=args.bend)
    if name == "custom":
        return dict(n_clusters=args.clusters, latent_dim=args.latent_dim, spread=args.spread, noise=args.noise,
                    skew=args.skew, bend=args.bend)
    return dict(LAWS["clusters"], bend=args.bend)


def law_data(name: str, n: int, d: int, m: int, seed: int, args: argparse.Namespace
             ) -> tuple[np.ndarray, np.ndarray, str]:
    """The n training rows and m new queries of a law (drawn together, the queries last) and its description."""
    if name == "mixture":
        X = _scale_benchmark().synthetic(n + m, d, seed)[0]
        return X[:n], X[n:], "label mixture of benchmarks/scale.py (200 labels, 3 a row, noise 0.5)"
    p = law_params(name, args)
    X, _, cluster = clustered(n + m, d, seed, **p)
    sizes = np.bincount(cluster[:n], minlength=p["n_clusters"])
    text = (f"{p['n_clusters']} clusters, latent dim {p['latent_dim']}, spread {p['spread']}, noise {p['noise']}, "
            f"skew {p['skew']}, bend {p['bend']}; cluster sizes: median {np.median(sizes):.0f}, "
            f"max {sizes.max()}, share of clusters < 11 rows {np.mean(sizes < 11):.2f}, "
            f"empty {np.mean(sizes == 0):.2f}")
    return X[:n], X[n:], text


# -- measurement --------------------------------------------------------------------------------------------------


def per_query_recall(dist: np.ndarray, exact: np.ndarray) -> np.ndarray:
    """Tie-aware recall@k of every query (a neighbour at the exact k-th distance counts; 1e-9 relative slack
    for distances computed by two different formulas)."""
    kth = exact[:, -1:]
    return (dist <= kth * (1 + 1e-9) + 1e-12).sum(axis=1) / exact.shape[1]


def tail(r: np.ndarray) -> dict:
    return {"mean": float(r.mean()), "lt05": float(np.mean(r < 0.5)), "zero": float(np.mean(r == 0)),
            "lt1": float(np.mean(r < 1)), "count05": int(np.sum(r < 0.5))}


def rerank(X: np.ndarray, Q: np.ndarray, cand: np.ndarray, k: int, self_ids: np.ndarray | None = None
           ) -> tuple[np.ndarray, np.ndarray]:
    """The k nearest of every query's candidates by float64 distance (direct differences); ``-1`` and repeated
    candidates are dropped, a query's own row (``self_ids``) too; a query with fewer than k candidates is padded
    with inf (counted as misses)."""
    nq, m = cand.shape
    out_d = np.full((nq, k), np.inf)
    out_i = np.full((nq, k), -1, dtype=np.int64)
    step = max(1, (64 * MB) // (8 * max(m, 1) * X.shape[1]))
    for a in range(0, nq, step):
        c = np.sort(cand[a:a + step], axis=1)
        bad = c < 0
        bad[:, 1:] |= c[:, 1:] == c[:, :-1]
        if self_ids is not None:
            bad |= c == self_ids[a:a + step, None]
        c0 = np.where(bad, 0, c)
        diff = X[c0] - Q[a:a + step, None, :]
        dist = np.einsum("ijk,ijk->ij", diff, diff)
        dist[bad] = np.inf
        order = np.argsort(dist, axis=1, kind="stable")[:, :k]
        w = order.shape[1]
        out_d[a:a + step, :w] = np.sqrt(np.take_along_axis(dist, order, axis=1))
        out_i[a:a + step, :w] = np.take_along_axis(c0, order, axis=1)
    out_i[~np.isfinite(out_d)] = -1
    return out_d, out_i


class Structures:
    """The faiss structures of the prototypes, built once a run, each timed (``seconds[key]``)."""

    def __init__(self, X: np.ndarray, seed: int) -> None:
        import faiss

        self.faiss = faiss
        self.X = X
        self.X32 = np.ascontiguousarray(X, dtype=np.float32)
        self.n, self.d = X.shape
        self.seed = seed
        self.cache: dict[Any, Any] = {}
        self.seconds: dict[Any, float] = {}
        self.bytes: dict[Any, float] = {}

    def _timed(self, key: Any, make: Any) -> Any:
        if key not in self.cache:
            t = time.perf_counter()
            self.cache[key] = make()
            self.seconds[key] = time.perf_counter() - t
        return self.cache[key]

    def hnsw(self, M: int, efc: int, sq: int = 0) -> Any:
        """faiss's HNSW graph of the rows: over their float32 vectors, or (``sq``) over 8-bit codes of them."""
        def make() -> Any:
            if sq:
                index = self.faiss.IndexHNSWSQ(self.d, self.faiss.ScalarQuantizer.QT_8bit, M)
                index.train(self.X32[np.random.default_rng(self.seed).choice(self.n, min(self.n, 65536), False)])
            else:
                index = self.faiss.IndexHNSWFlat(self.d, M)
            index.hnsw.efConstruction = efc
            index.add(self.X32)
            return index

        # links (level 0 and up), vectors or codes
        self.bytes[self.hnsw_key(M, efc, sq)] = self.n * (2 * M * 4 * 1.05 + (1 if sq else 4) * self.d + 8)
        return self._timed(self.hnsw_key(M, efc, sq), make)

    @staticmethod
    def hnsw_key(M: int, efc: int, sq: int = 0) -> tuple:
        return ("hnsw", M, efc) + (("sq",) if sq else ())

    def kmeans(self, nlist: int) -> np.ndarray:
        def make() -> np.ndarray:
            km = self.faiss.Kmeans(self.d, nlist, niter=10, seed=self.seed, max_points_per_centroid=64)
            km.cp.min_points_per_centroid = 1
            km.train(self.X32)
            return km.centroids.copy()

        return self._timed(("kmeans", nlist), make)

    def sq8(self, nlist: int) -> Any:
        def make() -> Any:
            quantizer = self.faiss.IndexFlatL2(self.d)
            quantizer.add(self.kmeans(nlist))
            index = self.faiss.IndexIVFScalarQuantizer(quantizer, self.d, nlist, self.faiss.ScalarQuantizer.QT_8bit)
            index.train(self.X32[np.random.default_rng(self.seed).choice(self.n, min(self.n, 64 * nlist), False)])
            index.add(self.X32)
            self.cache[("quantizer", nlist)] = quantizer  # the IVF index refers to it
            return index

        self.bytes[("sq8", nlist)] = self.n * (self.d + 8) + nlist * self.d * 4
        return self._timed(("sq8", nlist), make)

    def seeds(self, nlist: int) -> tuple[Any, np.ndarray]:
        """A flat index of the coarse centroids and, for each, the indexed row nearest to it."""
        def make() -> tuple[Any, np.ndarray]:
            cent = self.kmeans(nlist)
            flat = self.faiss.IndexFlatL2(self.d)
            flat.add(self.X32)
            _, I = flat.search(cent, 1)
            coarse = self.faiss.IndexFlatL2(self.d)
            coarse.add(cent)
            return coarse, I[:, 0].astype(np.int32)

        self.bytes[("seeds", nlist)] = nlist * (self.d * 4 + 4)
        return self._timed(("seeds", nlist), make)

    def lists(self, nlist: int) -> dict:
        """Exhaustive lists: centroids, radii, rows grouped by list (float64), their row numbers."""
        def make() -> dict:
            cent = self.kmeans(nlist).astype(np.float64)
            flat = self.faiss.IndexFlatL2(self.d)
            flat.add(cent.astype(np.float32))
            _, assign = flat.search(self.X32, 1)
            assign = assign[:, 0]
            perm = np.argsort(assign, kind="stable")
            sizes = np.bincount(assign, minlength=nlist)
            starts = np.concatenate([[0], np.cumsum(sizes)])
            Xs = self.X[perm]
            # a list's centroid is the mean of its members (the radius is then taken around it)
            sums = np.add.reduceat(Xs, starts[:-1][sizes > 0], axis=0)
            cent[sizes > 0] = sums / sizes[sizes > 0, None]
            radius = np.zeros(nlist)
            owner = np.repeat(np.arange(nlist), sizes)
            r = np.sqrt(((Xs - cent[owner]) ** 2).sum(axis=1))
            np.maximum.at(radius, owner, r)
            return {"cent": cent, "cc": (cent * cent).sum(axis=1), "radius": radius, "perm": perm,
                    "starts": starts, "sizes": sizes, "Xs": Xs, "xx": (Xs * Xs).sum(axis=1)}

        self.bytes[("lists", nlist)] = self.n * 8 + nlist * (self.d * 8 + 8)  # row numbers, centroids, radii
        return self._timed(("lists", nlist), make)


def parse_contender(text: str) -> tuple[str, dict]:
    name, _, rest = text.partition(":")
    if name == "lib":
        return name, {"backend": rest}
    return name, {key: int(value) for key, value in (item.split("=") for item in rest.split(",") if item)}


def hnsw_candidates(S: Structures, Q32: np.ndarray, m: int, ef: int, M: int = 48, efc: int = 40, sq: int = 0
                    ) -> np.ndarray:
    index = S.hnsw(M, efc, sq)
    params = S.faiss.SearchParametersHNSW()
    params.efSearch = max(ef, m)
    return index.search(Q32, m, params=params)[1]


def union_nlist(S: Structures, p: dict) -> int:
    """The IVF lists of a union: ``lists`` (default 1) x sqrt(n)."""
    return int(round(p.get("lists", 1) * math.sqrt(S.n)))


def ivf_candidates(S: Structures, Q32: np.ndarray, m: int, nprobe: int, nlist: int | None = None) -> np.ndarray:
    index = S.sq8(nlist if nlist is not None else int(round(math.sqrt(S.n))))
    params = S.faiss.SearchParametersIVF()
    params.nprobe = nprobe
    return index.search(Q32, m, params=params)[1]


def seeded_candidates(S: Structures, Q32: np.ndarray, m: int, ef: int, probe: int, lists: int = 4) -> np.ndarray:
    """HNSW level-0 search from the entry rows of the ``probe`` nearest coarse centroids."""
    faiss = S.faiss
    index = S.hnsw(48, 40)
    coarse, entry = S.seeds(int(round(lists * math.sqrt(S.n))))
    _, C = coarse.search(Q32, probe)
    nearest = np.ascontiguousarray(entry[C], dtype=np.int32)
    diff = S.X32[nearest] - Q32[:, None, :]
    nearest_d = np.ascontiguousarray(np.einsum("ijk,ijk->ij", diff, diff), dtype=np.float32)
    nq = len(Q32)
    D = np.empty((nq, m), dtype=np.float32)
    I = np.empty((nq, m), dtype=np.int64)
    params = faiss.SearchParametersHNSW()
    params.efSearch = max(ef, m)
    Qc = np.ascontiguousarray(Q32)
    index.search_level_0(nq, faiss.swig_ptr(Qc), m, faiss.swig_ptr(nearest), faiss.swig_ptr(nearest_d),
                         faiss.swig_ptr(D), faiss.swig_ptr(I), probe, 2, params)
    return I


def certified(S: Structures, Q: np.ndarray, tau: np.ndarray, k: int, nlist: int, self_ids: np.ndarray | None
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The exact k nearest rows of every query, scanning only the lists that may hold a row nearer than ``tau``
    (an upper bound of the query's k-th distance).  Returns (dist, idx, lists scanned, rows scanned)."""
    L = S.lists(nlist)
    nq = len(Q)
    qq = (Q * Q).sum(axis=1)
    dq = np.sqrt(np.maximum(qq[:, None] - 2 * Q @ L["cent"].T + L["cc"][None, :], 0))
    need = (dq - L["radius"][None, :]) <= tau[:, None] * (1 + 1e-9) + 1e-12
    need &= L["sizes"][None, :] > 0
    lists_scanned = need.sum(axis=1)
    rows_scanned = need.astype(np.float64) @ L["sizes"]
    if rows_scanned.mean() > 0.5 * S.n:  # the bound prunes nothing: not worth the scan (a brute force would do)
        raise RuntimeError(f"no use on this law: the bound leaves {rows_scanned.mean() / S.n:.1%} of the rows to scan "
                           f"({lists_scanned.mean():.0f} of {nlist} lists) per query")
    best_d = np.full((nq, k), np.inf)
    best_i = np.full((nq, k), -1, dtype=np.int64)
    for j in np.flatnonzero(need.any(axis=0)):  # a loop over lists (a prototype), every query that needs it at once
        qs = np.flatnonzero(need[:, j])
        a, b = L["starts"][j], L["starts"][j + 1]
        D = qq[qs, None] - 2 * Q[qs] @ L["Xs"][a:b].T + L["xx"][None, a:b]
        ids = L["perm"][a:b]
        if self_ids is not None:
            D[ids[None, :] == self_ids[qs, None]] = np.inf
        cat_d = np.hstack([best_d[qs], D])
        cat_i = np.hstack([best_i[qs], np.broadcast_to(ids, D.shape)])
        sel = np.argpartition(cat_d, k - 1, axis=1)[:, :k]
        best_d[qs] = np.take_along_axis(cat_d, sel, axis=1)
        best_i[qs] = np.take_along_axis(cat_i, sel, axis=1)
    dist, idx = rerank(S.X, Q, best_i, k, self_ids)
    return dist, idx, lists_scanned, rows_scanned


def run_prototype(S: Structures, name: str, p: dict, X: np.ndarray, Q: np.ndarray, loo_rows: np.ndarray
                  ) -> dict:
    """One prototype: its leave-one-out answers, its new-query answers (timed), its build seconds and memory."""
    Q32 = np.ascontiguousarray(Q, dtype=np.float32)
    L32 = np.ascontiguousarray(X[loo_rows], dtype=np.float32)
    keys: list[Any] = []
    info: dict[str, Any] = {}

    def candidates(Qv: np.ndarray, m: int) -> np.ndarray:
        ef = p.get("ef", 64)
        M, efc, sq = p.get("M", 48), p.get("efc", 40), p.get("sq", 0)
        if name == "hnsw":
            keys[:] = [S.hnsw_key(M, efc, sq)]
            return hnsw_candidates(S, Qv, m, ef, M, efc, sq)
        if name == "union":
            nlist = union_nlist(S, p)
            keys[:] = [S.hnsw_key(M, efc, sq), ("kmeans", nlist), ("sq8", nlist)]
            return np.hstack([hnsw_candidates(S, Qv, m, ef, M, efc, sq),
                              ivf_candidates(S, Qv, p.get("cand", 2) * m, p["nprobe"], nlist)])
        if name in ("seeded", "seeded+"):
            nlist = int(round(p.get("lists", 4) * math.sqrt(S.n)))
            keys[:] = [("hnsw", 48, 40), ("kmeans", nlist), ("seeds", nlist)]
            seeded = seeded_candidates(S, Qv, m, ef, p["probe"], p.get("lists", 4))
            if name == "seeded":
                return seeded
            return np.hstack([seeded, hnsw_candidates(S, Qv, m, ef)])
        raise ValueError(f"unknown contender {name!r}")

    def answer(Qv: np.ndarray, Qd: np.ndarray, self_ids: np.ndarray | None) -> tuple[np.ndarray, dict]:
        m = K + (self_ids is not None)
        if name == "cert":
            nlist = int(round(p.get("lists", 4) * math.sqrt(S.n)))
            keys[:] = [("hnsw", 48, 40), ("kmeans", nlist), ("lists", nlist)]
            d0, _ = rerank(S.X, Qd, hnsw_candidates(S, Qv, m, p.get("ef", 64)), K, self_ids)
            dist, _, lists, rows = certified(S, Qd, d0[:, -1], K, nlist, self_ids)
            return dist, {"lists": float(lists.mean()), "lists99": float(np.percentile(lists, 99)),
                          "rows": float(rows.mean() / S.n), "rows99": float(np.percentile(rows, 99) / S.n),
                          "nlist": nlist}
        return rerank(S.X, Qd, candidates(Qv, m), K, self_ids)[0], {}

    # the structures are built (and timed) by the first call: the leave-one-out queries
    loo_dist, loo_info = answer(L32, X[loo_rows], loo_rows)
    t = time.perf_counter()
    new_dist, new_info = answer(Q32, Q, None)
    search = time.perf_counter() - t
    if name == "cert":
        info = {"loo_" + key: v for key, v in loo_info.items()} | {"new_" + key: v for key, v in new_info.items()}
    build = sum(S.seconds[key] for key in keys)
    extra = sum(S.bytes.get(key, 0.0) for key in keys)
    return {"loo_dist": loo_dist, "new_dist": new_dist, "search": search, "build": build, "mb": extra / MB, **info}


def run_library(spec: str, X: np.ndarray, Q: np.ndarray, loo_rows: np.ndarray) -> dict:
    from mlneighbors.neighbors import get_index, loo_kneighbors

    backend, _, target = spec.partition("@")
    index = get_index(backend, recall=float(target) if target else None)
    t = time.perf_counter()
    index.build(X)
    build = time.perf_counter() - t
    loo_dist, _ = loo_kneighbors(index, X, K, rows=loo_rows, validated=True)
    t = time.perf_counter()
    new_dist, _ = index.query(Q, K)
    search = time.perf_counter() - t
    n, d = X.shape
    mb = {"hnswlib": n * (2 * 16 * 4 + 4 * d + 16) * 1.05, "faiss-hnsw": n * (2 * 48 * 4 * 1.05 + 4 * d + 8),
          "faiss-ivf": n * (4 * d + 8)}.get(backend, float("nan")) / MB
    breadth = {key: int(v) for key, v in vars(index).items()
               if key.endswith("_") and key.split("_")[-2] in ("ef", "search", "nprobe")}
    return {"loo_dist": loo_dist, "new_dist": new_dist, "search": search, "build": build, "mb": mb,
            "recall_": float(index.recall_), "breadth": breadth}


def union_components(S: Structures, p: dict, X: np.ndarray, loo_rows: np.ndarray, exact_loo: np.ndarray,
                     union_loo: np.ndarray) -> str:
    """Whether the two structures of a union fail on the same queries, and what a fit can see without the exact
    search: each structure's answer compared with the union's (a query where one of them has under half of the
    union's neighbours is a query it would have failed alone, as far as the union knows)."""
    L32 = np.ascontiguousarray(X[loo_rows], dtype=np.float32)
    m = K + 1
    ef, M, efc = p.get("ef", 64), p.get("M", 48), p.get("efc", 40)
    h = rerank(S.X, X[loo_rows], hnsw_candidates(S, L32, m, ef, M, efc, p.get("sq", 0)), K, loo_rows)[0]
    v = rerank(S.X, X[loo_rows], ivf_candidates(S, L32, p.get("cand", 2) * m, p["nprobe"], union_nlist(S, p)), K,
               loo_rows)[0]
    hr, vr = per_query_recall(h, exact_loo), per_query_recall(v, exact_loo)
    ur = per_query_recall(union_loo, exact_loo)
    hu, vu = per_query_recall(h, union_loo), per_query_recall(v, union_loo)
    n = len(loo_rows)
    lines = ["Its two structures, alone, on the same leave-one-out rows (count of rows of " + f"{n:,}):", "",
             "| HNSW < 0.5 | IVF-SQ8 < 0.5 | both < 0.5 | expected both if independent | union < 0.5 "
             "| HNSW < 0.5 of the union's answer | IVF < 0.5 of the union's answer |", "|---|---|---|---|---|---|---|",
             f"| {np.sum(hr < 0.5)} | {np.sum(vr < 0.5)} | {np.sum((hr < 0.5) & (vr < 0.5))} "
             f"| {np.sum(hr < 0.5) * np.sum(vr < 0.5) / n:.2f} | {np.sum(ur < 0.5)} | {np.sum(hu < 0.5)} "
             f"| {np.sum(vu < 0.5)} |"]
    return "\n".join(lines)


def clopper_pearson_upper(count: int, n: int, alpha: float = 0.05) -> float:
    """One-sided (1 - alpha) upper bound of a binomial share from ``count`` of ``n``."""
    from scipy.stats import beta

    return 1.0 if count >= n else float(beta.ppf(1 - alpha, count + 1, n - count))


# -- tables -------------------------------------------------------------------------------------------------------


def fmt(x: Any, digits: int = 4) -> str:
    """A table cell: scale.py's, with four digits."""
    return _scale_benchmark().fmt(x, digits)


def share(x: float) -> str:
    return "0" if x == 0 else f"{100 * x:.2f} %"


HEADER = ("| contender | LOO mean | LOO < 0.5 | LOO = 0 | LOO < 1 | new mean | new < 0.5 | new = 0 | new < 1 "
          "| search s / 10^4 | x exact | build s | MB extra | note |\n|" + "---|" * 14)


def row(name: str, r: dict, exact_seconds: float, per10k: float) -> str:
    lo, nw = r["loo"], r["new"]
    note = r.get("note", "")
    return (f"| {name} | {fmt(lo['mean'])} | {share(lo['lt05'])} | {share(lo['zero'])} | {share(lo['lt1'])} "
            f"| {fmt(nw['mean'])} | {share(nw['lt05'])} | {share(nw['zero'])} | {share(nw['lt1'])} "
            f"| {fmt(r['search'] * per10k, 2)} | {fmt(exact_seconds / r['search'], 1)} | {fmt(r['build'], 1)} "
            f"| {fmt(r['mb'], 0)} | {note} |")


def study(name: str, loo_recall: np.ndarray, sample: int = 1000) -> str:
    lines = [f"Fit-time estimate of the tail of `{name}` from disjoint samples of {sample} leave-one-out rows "
             f"(all {len(loo_recall)}: < 0.5 {share(float(np.mean(loo_recall < 0.5)))}, < 1 "
             f"{share(float(np.mean(loo_recall < 1)))})", "",
             "| sample | count < 0.5 | 95 % upper bound of share < 0.5 | count < 1 | 95 % upper bound of share < 1 |",
             "|---|---|---|---|---|"]
    for s in range(len(loo_recall) // sample):
        part = loo_recall[s * sample:(s + 1) * sample]
        c05, c1 = int(np.sum(part < 0.5)), int(np.sum(part < 1))
        lines.append(f"| {s} | {c05} | {share(clopper_pearson_upper(c05, sample))} | {c1} "
                     f"| {share(clopper_pearson_upper(c1, sample))} |")
    return "\n".join(lines)


def run_law(law: str, args: argparse.Namespace) -> None:
    import faiss

    from mlneighbors.neighbors import get_index, loo_kneighbors

    faiss.omp_set_num_threads(args.threads)
    n, d, m = args.n, args.d, args.queries
    t = time.perf_counter()
    X, Q, text = law_data(law, n, d, m, args.seed, args)
    print(f"\n## law `{law}`: {n:,} x {d}, {m:,} new queries, {min(args.loo, n):,} leave-one-out rows\n\n{text} "
          f"(drawn in {time.perf_counter() - t:.1f} s)\n", flush=True)
    if args.describe:
        return
    loo_rows = np.sort(np.random.default_rng([args.seed, 7]).choice(n, size=min(args.loo, n), replace=False))
    exact = get_index("exact").build(X)
    t = time.perf_counter()
    exact_loo = loo_kneighbors(exact, X, K, rows=loo_rows, validated=True)[0]
    t_loo = time.perf_counter() - t
    t = time.perf_counter()
    exact_new = exact.query(Q, K)[0]
    exact_seconds = time.perf_counter() - t
    per10k = 10_000 / m
    del exact
    print(f"exact: {exact_seconds * per10k:.2f} s per 10^4 new queries, leave-one-out of {len(loo_rows):,} rows "
          f"{t_loo:.2f} s\n", flush=True)
    print(HEADER, flush=True)
    S = Structures(X, args.seed)
    results: dict[str, dict] = {}
    for spec in args.contenders:
        name, p = parse_contender(spec)
        t = time.perf_counter()
        try:
            r = run_library(p["backend"], X, Q, loo_rows) if name == "lib" else run_prototype(S, name, p, X, Q,
                                                                                              loo_rows)
        except Exception as exc:  # a prototype that fails is reported, the others still run
            print(f"| {spec} | failed: {type(exc).__name__}: {exc} |", flush=True)
            continue
        r["loo_r"] = per_query_recall(r["loo_dist"], exact_loo)
        r["new_r"] = per_query_recall(r["new_dist"], exact_new)
        r["loo"], r["new"] = tail(r["loo_r"]), tail(r["new_r"])
        if name == "lib":
            r["note"] = f"recall_ {r['recall_']:.3f}, " + ", ".join(f"{k} {v}" for k, v in r["breadth"].items())
        elif name == "cert":
            r["note"] = (f"{r['loo_nlist']} lists; lists scanned LOO {r['loo_lists']:.1f} (p99 {r['loo_lists99']:.0f}),"
                         f" new {r['new_lists']:.1f} (p99 {r['new_lists99']:.0f}); rows scanned / n LOO "
                         f"{r['loo_rows']:.3f} (p99 {r['loo_rows99']:.3f}), new {r['new_rows']:.3f} "
                         f"(p99 {r['new_rows99']:.3f})")
        r["note"] = r.get("note", "") + f" [{time.perf_counter() - t:.0f} s]"
        results[spec] = r
        print(row(spec, r, exact_seconds, per10k), flush=True)
    for spec in args.study:
        if spec in results:
            print("\n" + study(spec, results[spec]["loo_r"]), flush=True)
            name, p = parse_contender(spec)
            if name == "union":
                print("\n" + union_components(S, p, X, loo_rows, exact_loo, results[spec]["loo_dist"]), flush=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--laws", nargs="+", default=["mixture", "clusters", "hard"],
                        choices=["mixture", "clusters", "hard", "custom"])
    parser.add_argument("--n", type=int, default=100_000, help="training rows (at most 10^5 on this machine)")
    parser.add_argument("--d", type=int, default=128)
    parser.add_argument("--queries", type=int, default=10_000, help="new queries")
    parser.add_argument("--loo", type=int, default=10_000, help="leave-one-out rows sampled")
    parser.add_argument("--contenders", nargs="+", default=DEFAULT_CONTENDERS)
    parser.add_argument("--study", nargs="*", default=[BEST], help="contenders whose fit-time tail estimate is studied")
    parser.add_argument("--threads", type=int, default=2, help="faiss threads of the prototypes")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="30,000 rows")
    parser.add_argument("--describe", action="store_true", help="the laws only, no search")
    parser.add_argument("--clusters", type=int, default=2000)
    parser.add_argument("--latent-dim", type=int, default=8)
    parser.add_argument("--spread", type=float, default=0.1)
    parser.add_argument("--noise", type=float, default=0.05)
    parser.add_argument("--skew", type=float, default=1.0, help="sigma of the log-normal cluster weights")
    parser.add_argument("--bend", type=float, default=0.3, help="weight of the nonlinear part of the map")
    parser.add_argument("--hard-clusters", type=int, default=LAWS["hard"]["n_clusters"])
    parser.add_argument("--hard-latent-dim", type=int, default=LAWS["hard"]["latent_dim"])
    parser.add_argument("--hard-spread", type=float, default=LAWS["hard"]["spread"])
    parser.add_argument("--hard-noise", type=float, default=LAWS["hard"]["noise"])
    parser.add_argument("--hard-skew", type=float, default=LAWS["hard"]["skew"])
    args = parser.parse_args(argv)
    if args.quick:
        args.n = 30_000
    print(f"# tail of the approximate searches: k = {K}, n = {args.n:,}, d = {args.d}, seed {args.seed}, "
          f"faiss threads {args.threads}")
    for law in args.laws:
        run_law(law, args)


if __name__ == "__main__":
    main()
