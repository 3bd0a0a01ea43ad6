"""Live models: what an update costs against a refit, measured in one run, and checked equal.

For each data set, ML-kNN (k = 10) is fitted on its rows less a reserve; then, each timed:

- ``partial_fit`` of 1 % more rows, against a refit on the rows now;
- ``forget`` of 1 % of the rows, against a refit on the rows left;
- a stream of single-row ``partial_fit`` calls (median, 95th percentile and largest time);

each update timed on three copies of the model (the median; the refit once: a few tenths of a
second are easily doubled by another process, 12 seconds less so), in one process, the CPU
named.  Peak memory (tracemalloc, which numpy reports to) is measured in another run of the
same update on a copy of the model, and of a refit once per data set;

and after each update the model is compared with the refit (``predict_proba`` on held-out rows
and the leave-one-out neighbours of every row: bit for bit, else the script exits 1).  Two ways
of choosing the rows: ``random`` (1 % anywhere) and ``one place`` (the rows added are copies,
slightly moved, of rows of one cluster, and the rows forgotten are one cluster's: every
neighbour list there changes, and the rows left there run short of neighbours).

Data: ``clustered`` 10^5 x 64 dense rows (200 Gaussian clusters of different spreads, 2 %
duplicated rows), and a sparse text set of the shared datasets (ohsumed by default: binary
word features).  Usage::

    PYTHONPATH=src python benchmarks/live.py [--rows 100000] [--text ohsumed] [--singles 100]

Prints a Markdown table; the CPU is named from /proc/cpuinfo.
"""

from __future__ import annotations

import argparse
import copy
import platform
import sys
import time
import tracemalloc
import warnings

import numpy as np
import scipy.sparse as sp


def cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def clustered(n: int, d: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rows from 200 Gaussian clusters of spreads 0.05 to 1, 2 % of them duplicates of others;
    labels from the cluster (each cluster has 3 of 20 labels) with 10 % noise."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((200, d)) * 3
    spread = np.geomspace(0.05, 1.0, 200)
    cluster = rng.integers(0, 200, n)
    X = centres[cluster] + rng.standard_normal((n, d)) * spread[cluster, None]
    dup = rng.choice(n, n // 50, replace=False)
    X[dup] = X[rng.integers(0, n, len(dup))]
    owns = np.zeros((200, 20), dtype=bool)
    owns[np.arange(200)[:, None], rng.integers(0, 20, (200, 3))] = True
    Y = owns[cluster] ^ (rng.random((n, 20)) < 0.1)
    return X, Y.astype(np.int8), cluster


def text(name: str) -> tuple[sp.csr_matrix, np.ndarray, np.ndarray]:
    from mlneighbors.datasets import load_dataset

    data = load_dataset(name)  # the whole set (train and test parts where it ships both)
    X, Y = sp.csr_matrix(data.X), sp.csr_matrix(data.Y)
    # the "cluster" of a row: its first label (the one-place case forgets the rows of one label)
    first = np.asarray(Y.argmax(axis=1)).ravel()
    return sp.csr_matrix(X, dtype=np.float64), Y.astype(np.int8), first


def timed(fn):
    t = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t


def peak(fn) -> int:
    """The peak bytes of the numpy arrays (and Python objects) that ``fn`` allocates: a second
    run, apart from the timed one (tracemalloc slows what it watches)."""
    tracemalloc.start()
    fn()
    top = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return top


def repeated(model, update, times: int = 3):
    """The median time of ``update`` on ``times`` copies of ``model``, its peak memory on one more,
    and an updated copy: the update of one model is a few tenths of a second, which another
    process on the machine can double once."""
    copies = [copy.deepcopy(model) for _ in range(times + 1)]
    seconds = [timed(lambda m=m: update(m))[1] for m in copies[:times]]
    top = peak(lambda: update(copies[times]))
    return float(np.median(seconds)), top, copies[0]


def rows_of(A, idx):
    return A[idx]


def same(live, refit, Q) -> bool:
    ok = np.array_equal(live.predict_proba(Q), refit.predict_proba(Q))
    k = refit.n_neighbors_
    ok &= np.array_equal(live._loo_idx[:, :k], refit._loo_idx[:, :k])
    ok &= np.array_equal(live._loo_dist[:, :k], refit._loo_dist[:, :k])
    return bool(ok)


def run(label: str, X, Y, groups, singles: int, make) -> list[str]:
    n_all = X.shape[0]
    rng = np.random.default_rng(1)
    n_extra = max(1, n_all // 100)
    reserve = n_extra + singles
    base = np.arange(n_all - reserve)
    Q = X[rng.choice(len(base), 200, replace=False)]
    lines = []
    m_refit = None
    for place in ("random", "one place"):
        if place == "random":
            extra = np.arange(n_all - reserve, n_all - singles)
            Xa = rows_of(X, extra)
        else:  # copies of one cluster's rows, slightly moved: all land in one place
            g = np.bincount(groups[base]).argmax()
            members = base[groups[base] == g]
            pick = rng.choice(members, n_extra, replace=len(members) < n_extra)
            Xa = rows_of(X, pick)
            if sp.issparse(Xa):
                Xa = Xa.copy()
            else:
                Xa = Xa + rng.standard_normal(Xa.shape) * 1e-3
            extra = pick
        Ya = rows_of(Y, extra)
        model = make().fit(rows_of(X, base), rows_of(Y, base))
        Xb, Yb = rows_of(X, base), rows_of(Y, base)
        t_add, m_add, model = repeated(model, lambda m: m.partial_fit(Xa, Ya))
        X_now = sp.vstack([Xb, Xa], format="csr") if sp.issparse(Xb) else np.concatenate([Xb, Xa])
        Y_now = sp.vstack([Yb, Ya], format="csr") if sp.issparse(Yb) else np.concatenate([Yb, Ya])
        refit, t_refit = timed(lambda: make().fit(X_now, Y_now, ids=model.training_ids_))
        if m_refit is None:  # once per data set: a refit's memory does not depend on the rows chosen
            m_refit = peak(lambda: make().fit(X_now, Y_now, ids=model.training_ids_))
        ok_add = same(model, refit, Q)
        ids = model.training_ids_
        if place == "random":
            gone = rng.choice(ids, n_extra, replace=False)
        else:  # one cluster's rows (the largest one; at most 1 %)
            members = np.flatnonzero(np.concatenate([groups[base], groups[extra]]) == g)
            gone = ids[members[: n_extra]]
        t_forget, m_forget, model = repeated(model, lambda m: m.forget(gone))
        keep = ~np.isin(ids, gone)
        refit2, t_refit2 = timed(lambda: make().fit(X_now[keep], rows_of(Y_now, keep), ids=ids[keep]))
        ok_forget = same(model, refit2, Q)
        lines.append(f"| {label} | {place} | add {len(extra):,} | {t_add:.3f} | {t_refit:.2f} | "
                     f"{t_refit / t_add:.0f}x | {m_add / 2**20:.0f} / {m_refit / 2**20:.0f} | {ok_add} |")
        lines.append(f"| {label} | {place} | forget {len(gone):,} | {t_forget:.3f} | {t_refit2:.2f} | "
                     f"{t_refit2 / t_forget:.0f}x | {m_forget / 2**20:.0f} / {m_refit / 2**20:.0f} | {ok_forget} |")
        if not (ok_add and ok_forget):
            print("\n".join(lines))
            sys.exit(f"{label}, {place}: the updated model differs from the refit")
    # a stream of single rows
    times = []
    for i in range(n_all - singles, n_all):
        t = time.perf_counter()
        model.partial_fit(rows_of(X, [i]), rows_of(Y, [i]))
        times.append(time.perf_counter() - t)
    ms = np.array(times) * 1000
    lines.append(f"| {label} | stream | {singles} single rows | median {np.median(ms):.1f} ms, 95 % "
                 f"{np.percentile(ms, 95):.1f} ms, max {ms.max():.1f} ms | | | | |")
    return lines


def fit_cost(label: str, X, Y, k: int, repeats: int = 3) -> str:
    """What keeping the leave-one-out lists costs a fit: ML-kNN (which keeps them, in order, with
    their distances, k + max(5, k // 2) deep) against the same model told to refit on updates
    (its fit asks the exact engine for the k neighbours' sets alone, as before live models);
    alternated, the median of each."""
    from mlneighbors import MLkNN

    class SetsOnly(MLkNN):
        update_rule = "refit"

    live, plain = [], []
    for _ in range(repeats):
        live.append(timed(lambda: MLkNN(k).fit(X, Y))[1])
        plain.append(timed(lambda: SetsOnly(k).fit(X, Y))[1])
    a, b = float(np.median(live)), float(np.median(plain))
    return f"| {label} | {a:.2f} | {b:.2f} | {a / b:.3f} |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--dim", type=int, default=64)
    parser.add_argument("--text", default="ohsumed", help="a shared sparse text dataset ('' to skip)")
    parser.add_argument("--singles", type=int, default=100)
    parser.add_argument("--k", type=int, default=10)
    args = parser.parse_args()
    from mlneighbors import MLkNN

    warnings.simplefilter("ignore")

    def make():
        return MLkNN(args.k)

    print(f"CPU: {cpu_name()}; numpy {np.__version__}; ML-kNN k = {args.k}; times in seconds")
    print()
    print("| data | rows chosen | update | update s | refit s | refit / update | peak MiB (update / refit) | equal |")
    print("|---|---|---|---|---|---|---|---|")
    X, Y, groups = clustered(args.rows, args.dim)
    for line in run(f"clustered {args.rows:,} x {args.dim}", X, Y, groups, args.singles, make):
        print(line, flush=True)
    if args.text:
        Xt, Yt, groups = text(args.text)
        for line in run(f"{args.text} {Xt.shape[0]:,} x {Xt.shape[1]:,} sparse", Xt, Yt, groups, args.singles, make):
            print(line, flush=True)
    print()
    print("What a fit pays for the lists (median of 3, alternated):")
    print()
    print("| data | fit with the lists s | fit with the sets alone s | ratio |")
    print("|---|---|---|---|")
    n = min(args.rows, 30_000)
    print(fit_cost(f"clustered {n:,} x {args.dim}", X[:n], Y[:n], args.k), flush=True)
    if args.text:
        print(fit_cost(f"{args.text} sparse", Xt, Yt, args.k), flush=True)


if __name__ == "__main__":
    main()
