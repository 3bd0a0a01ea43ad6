"""The exact search on a GPU, side by side: our "torch" backend vs a raw PyTorch floor vs "exact".

Usage::

    PYTHONPATH=src python benchmarks/gpu.py [--device cuda] [--cases a b c] [--scale 1.0]
        [--exact-queries 10000] [--no-exact]

Three cases, k = 10, every timing from this one run (only ratios of one run mean anything):

(a) imdb-shaped text: imdb is not in the shared data, so a synthetic sparse set of its shape,
    120,919 x 1,001 binary bag-of-words rows (~19 stored values a row, Zipf-like word
    frequencies), split 80/20; leave-one-out on the training rows + the test queries (the
    neighbours ML-kNN's fit + predict need);
(b) dense 1,000,000 x 128 Gaussian rows, leave-one-out (ML-kNN's fit);
(c) ML-kNN fit + predict end to end on (a) (28 labels that depend on the words).

Columns:

- ``floor``: the least a GPU does for this, written here in raw PyTorch: the indexed rows as
  float32 on the device, blocks of queries (sparse ones densified on the device), one
  ``addmm`` (``||x||^2 - 2 q.x``) and ``torch.topk`` per block, results copied to the host;
  no tie order, no exactness;
- ``torch``: ``get_index("torch")`` built and queried through ``loo_kneighbors`` / ``query``
  (in (c), ``MLkNN(backend="torch")``), transfers and the index's upload included;
- ``exact``: ``get_index("exact")`` (all cores) on the same work; in (b) on the first
  ``--exact-queries`` rows only (it would take about a quarter of an hour), scaled to all rows
  (marked ``*``);
- ``same``: whether "torch" returned exactly what "exact" returned (indices and distances
  equal; in (b) on the rows "exact" ran), and in (c) the same predictions.

Also printed: the same (a) with the other ``sparse_strategy``, and the measured constants of
the cost model of ``_torch_plan.COST`` (nanoseconds per proxy entry).  ``--scale`` shrinks every
set (``--device cpu --scale 0.02`` runs in a minute on a laptop, to keep the script working).
"""

from __future__ import annotations

import argparse
import time
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse as sp

from mlneighbors import MLkNN
from mlneighbors.neighbors import drop_self, get_index, loo_kneighbors

K = 10


def imdb_shaped(n: int, d: int = 1001, nnz: float = 19.0, n_labels: int = 28, seed: int = 0):
    """Binary bag-of-words rows with Zipf-like column frequencies, and labels from the words."""
    rng = np.random.default_rng(seed)
    counts = np.maximum(1, rng.poisson(nnz * 1.05, size=n))  # a few repeats are merged below
    weights = 1.0 / np.arange(1, d + 1) ** 0.9
    cols = rng.choice(d, size=int(counts.sum()), p=weights / weights.sum())
    rows = np.repeat(np.arange(n), counts)
    X = sp.csr_matrix((np.ones(len(cols)), (rows, rng.permutation(d)[cols])), shape=(n, d))
    X.sum_duplicates()
    X.data[:] = 1.0
    W = sp.random(d, n_labels, density=0.05, random_state=seed)
    W = W - sp.random(d, n_labels, density=0.05, random_state=seed + 1)
    S = (X @ W).toarray() + 0.3 * rng.standard_normal((n, n_labels))
    Y = (S > np.quantile(S, 0.85, axis=0)).astype(np.int8)
    return X, Y


def synchronize(torch: Any, device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def timed(fn: Callable[[], Any], torch: Any = None, device: str = "cpu") -> tuple[float, Any]:
    if torch is not None:
        synchronize(torch, device)
    start = time.perf_counter()
    out = fn()
    if torch is not None:
        synchronize(torch, device)
    return time.perf_counter() - start, out


def floor(torch: Any, device: str, X: Any, work: list[tuple[Any, int]]) -> list[tuple[np.ndarray, np.ndarray]]:
    """Raw blocked GEMM + topk: the indexed rows once on the device, blocks of queries."""

    def on_device(A: Any) -> Any:
        if sp.issparse(A):
            A = A.astype(np.float32)
            return torch.sparse_csr_tensor(
                torch.from_numpy(A.indptr.astype(np.int64)), torch.from_numpy(A.indices.astype(np.int64)),
                torch.from_numpy(A.data), size=A.shape, check_invariants=False,
            ).to(device).to_dense()
        return torch.from_numpy(np.ascontiguousarray(A, dtype=np.float32)).to(device)

    n = X.shape[0]
    Xd = torch.cat([on_device(X[a : a + 65536]) for a in range(0, n, 65536)])
    xsq = (Xd * Xd).sum(dim=1)
    out = []
    for Q, k in work:
        rows = max(1, min(Q.shape[0], (2**31 - 1) // n, 16384))
        dist = np.empty((Q.shape[0], k), dtype=np.float32)
        idx = np.empty((Q.shape[0], k), dtype=np.int64)
        for a in range(0, Q.shape[0], rows):
            qb = on_device(Q[a : a + rows])
            d2 = torch.addmm(xsq[None, :], qb, Xd.T, beta=1.0, alpha=-2.0)
            vals, cols = torch.topk(d2, k, dim=1, largest=False, sorted=True)
            vals = torch.sqrt(torch.clamp(vals + (qb * qb).sum(dim=1, keepdim=True), min=0.0))
            dist[a : a + rows] = vals.cpu().numpy()
            idx[a : a + rows] = cols.cpu().numpy()
        out.append((dist, idx))
    return out


def ours(name: str, X: Any, Q: Any | None, **params: Any) -> tuple[tuple[np.ndarray, np.ndarray], ...]:
    """Build, leave-one-out on the indexed rows, then the test queries (when given); the
    index last."""
    index = get_index(name, **params).build(X)
    loo = loo_kneighbors(index, X, K)
    return (loo, index) if Q is None else (loo, index.query(Q, K), index)


def same(a: tuple, b: tuple) -> bool:
    """Equal (dist, idx) results (an index at the end of a tuple is left out)."""
    pairs = [(pa, pb) for pa, pb in zip(a, b, strict=True) if isinstance(pa, tuple)]
    return all(np.array_equal(x, y) for pa, pb in pairs for x, y in zip(pa, pb, strict=True))


def agreement(floor_idx: np.ndarray, idx: np.ndarray) -> float:
    return float(np.mean(floor_idx == idx))


def calibrate(torch: Any, device: str, n: int, d: int = 1001) -> dict[str, float]:
    """ns per proxy entry: the dense GEMM per inner column, torch's CSR product per entry and
    per stored query value (two densities), as ``_torch_plan.COST`` uses them."""
    width = -(-(d + 1) // 8) * 8
    rng = np.random.default_rng(1)
    Xt = torch.from_numpy((rng.random((width, n)) < 0.02).astype(np.float32)).to(device)
    rows = min(4096, (2**31 - 1) // n)
    times = {}
    for values in (19, 76):
        Q = sp.random(rows, width, density=values / width, format="csr", random_state=2, dtype=np.float32)
        Qs = torch.sparse_csr_tensor(
            torch.from_numpy(Q.indptr.astype(np.int64)), torch.from_numpy(Q.indices.astype(np.int64)),
            torch.from_numpy(Q.data), size=Q.shape, check_invariants=False,
        ).to(device)
        torch.sparse.mm(Qs, Xt)
        times[values] = min(timed(lambda Qs=Qs: torch.sparse.mm(Qs, Xt), torch, device)[0] for _ in range(3))
        if values == 19:
            Qd = Qs.to_dense()
            Qd @ Xt
            times["dense"] = min(timed(lambda Qd=Qd: Qd @ Xt, torch, device)[0] for _ in range(3))
    entries = rows * n * 1e-9
    per_value = (times[76] - times[19]) / (76 - 19) / entries
    return {
        "gemm": times["dense"] / entries / width,
        "sparse_entry": max(0.0, times[19] / entries - per_value * 19),
        "sparse_value": per_value,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--device", default=None, help="cuda, cuda:N or cpu (default: the GPU if any)")
    parser.add_argument("--cases", nargs="+", default=["a", "b", "c"], choices=["a", "b", "c"])
    parser.add_argument("--scale", type=float, default=1.0, help="shrink every set by this factor")
    parser.add_argument("--exact-queries", type=int, default=10000, help="rows of (b) that exact runs")
    parser.add_argument("--no-exact", action="store_true", help="skip the exact CPU backend")
    args = parser.parse_args()
    warnings.filterwarnings("ignore", message="Sparse CSR tensor support is in beta")
    warnings.filterwarnings("ignore", message="Sparse invariant checks are implicitly disabled")  # torch 2.11

    import torch

    from mlneighbors.neighbors._torch import resolve_device

    device = resolve_device(torch, args.device)
    name = torch.cuda.get_device_name(device) if device.startswith("cuda") else "CPU"
    print(f"device: {device} ({name}); torch {torch.__version__}; {torch.get_num_threads()} CPU threads")
    params = {"device": device}
    rows_out = []

    # warm-up: CUDA context, cuBLAS handles, topk and the CSR product kernels
    Xw, _ = imdb_shaped(3000, seed=9)
    floor(torch, device, Xw, [(Xw, K + 1)])
    for strategy in ("densify", "sparse"):
        ours("torch", Xw, Xw[:100], sparse_strategy=strategy, **params)
    ours("torch", np.random.default_rng(0).standard_normal((3000, 128)), None, **params)

    if "a" in args.cases or "c" in args.cases:
        n = int(round(120919 * args.scale))
        X, Y = imdb_shaped(n)
        cut = int(round(0.8 * n))
        Xtr, Xte, Ytr = X[:cut], X[cut:], Y[:cut]
        print(f"(a) imdb-shaped: {Xtr.shape[0]} training rows, {Xte.shape[0]} queries, {X.shape[1]} features, "
              f"{X.nnz / X.shape[0]:.1f} stored values a row")
    if "a" in args.cases:
        t_floor, fl = timed(lambda: floor(torch, device, Xtr, [(Xtr, K + 1), (Xte, K)]), torch, device)
        t_ours, got = timed(lambda: ours("torch", Xtr, Xte, **params), torch, device)
        strategy = got[-1].strategy_  # what "auto" picked
        t_exact, want = (np.nan, None) if args.no_exact else timed(lambda: ours("exact", Xtr, Xte))
        other = "sparse" if strategy == "dense" else "densify"
        t_other, got_other = timed(lambda: ours("torch", Xtr, Xte, sparse_strategy=other, **params), torch, device)
        ident = "n/a" if want is None else ("yes" if same(got, want) and same(got_other, want) else "NO")
        rows_out.append(("(a) imdb-shaped, LOO + test", t_floor, t_ours, t_exact, ident))
        rows_out.append((f"(a) same, sparse_strategy={other}", t_floor, t_other, t_exact, ident))
        loo_floor = drop_self(fl[0][0], fl[0][1], np.arange(Xtr.shape[0]), K)[1]
        print(f"    auto picked {strategy!r}; floor's indices equal to ours: "
              f"{agreement(loo_floor, got[0][1]):.3f} (train), {agreement(fl[1][1], got[1][1]):.3f} (test)")
        del fl, got, got_other, want
    if "b" in args.cases:
        n = int(round(1_000_000 * args.scale))
        Xb = np.random.default_rng(3).standard_normal((n, 128))
        print(f"(b) dense: {n} x 128, leave-one-out")
        t_floor, _ = timed(lambda: floor(torch, device, Xb, [(Xb, K + 1)]), torch, device)
        t_ours, got = timed(lambda: ours("torch", Xb, None, **params), torch, device)
        m = min(n, args.exact_queries)
        ident, t_exact = "n/a", np.nan
        if not args.no_exact:
            t_sub, (dist, idx) = timed(lambda: get_index("exact").build(Xb).query(Xb[:m], K + 1))
            want = drop_self(dist, idx, np.arange(m), K)
            t_exact = t_sub * n / m
            ident = "yes" if same(((got[0][0][:m], got[0][1][:m]),), (want,)) else "NO"
            ident += f" ({m} rows)"
        rows_out.append((f"(b) dense {n} x 128, LOO" + (" *" if m < n else ""), t_floor, t_ours, t_exact, ident))
        del got, Xb
    if "c" in args.cases:
        print("(c) MLkNN(10) fit + predict on (a)")

        def run(**model_params: Any) -> np.ndarray:
            return MLkNN(K, **model_params).fit(Xtr, Ytr).predict(Xte)

        t_ours, got = timed(lambda: run(backend="torch", backend_params=params), torch, device)
        t_exact, want = (np.nan, None) if args.no_exact else timed(lambda: run())
        ident = "n/a" if want is None else ("yes" if np.array_equal(got, want) else "NO")
        rows_out.append(("(c) MLkNN fit + predict on (a)", np.nan, t_ours, t_exact, ident))

    print()
    print(f"{'case':<44}{'floor s':>9}{'torch s':>9}{'exact s':>10}{'torch/floor':>13}{'exact/torch':>13}"
          "  same as exact")
    for case, t_floor, t_ours, t_exact, ident in rows_out:
        print(f"{case:<44}{t_floor:>9.2f}{t_ours:>9.2f}{t_exact:>10.1f}{t_ours / t_floor:>13.2f}"
              f"{t_exact / t_ours:>13.1f}  {ident}")
    if "a" in args.cases:
        cost = calibrate(torch, device, min(50000, int(round(96735 * args.scale))))
        print("cost model (ns per proxy entry): " + ", ".join(f"{k}={v:.4g}" for k, v in cost.items()))
    print("* exact on the first --exact-queries rows, scaled to all rows")


if __name__ == "__main__":
    main()
