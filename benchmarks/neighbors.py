"""The neighbour engine, side by side: our exact backend vs faiss and scikit-learn.

Usage::

    MLNEIGHBORS_DATA=../shared/datasets PYTHONPATH=src python benchmarks/neighbors.py
        [--repeats 3] [--datasets yeast bibtex ...] [--no-sklearn] [--no-approximate]
        [--approximate-on ohsumed synthetic] [--approximate-repeats 1]
        [--tables search mlknn floor approximate] [--floor-rows 100000] [--order alternate|blocks]
        [--min-seconds 1.0]

Workload per dataset (k = 10), the one ML-kNN's fit + predict needs: build an index on the
training rows, the leave-one-out k neighbours of every training row, then the k neighbours
of every test row.  Standard train/test split where the dataset ships one; otherwise a
seeded 2/3 - 1/3 split.  Plus the synthetic case of the issue: 30,993 x 120 Gaussian
training rows, 12,914 queries.

- ``ours``: ``ExactIndex()`` (float32 GEMM candidates, float64 exact re-ranking) +
  ``loo_kneighbors`` + ``query``; on CSR data it runs on the CSR matrix itself;
- ``faiss``: ``IndexFlatL2`` on float32 (train + search k + 1 on the training rows, search
  k on the test rows); sparse sets are densified before the clock starts;
- ``sklearn``: ``NearestNeighbors(algorithm="brute", n_jobs=-1)`` on the same data as ours
  (CSR stays CSR), ``kneighbors()`` (its own leave-one-out) + ``kneighbors(X_test)``.

The ``mlknn`` table is the job a user runs: ``MLkNN(n_neighbors=10)`` fit + predict with the
default exact backend (float64 input as loaded, validation included) against faiss's
``IndexFlatL2`` search (float32 rows prepared before the clock) plus ML-kNN's label side written
here vectorised from the neighbour indices (``mlknn_labels``: one sparse product for the counts,
one ``bincount`` per table); the median of ``--repeats`` interleaved runs, or of as many as make
``--min-seconds`` of each engine's time where that is more (``--order blocks``: each engine's runs
back to back, see ``mlknn_table``), and the share of
predicted cells on which the two agree (1.0 unless a near-tie of float32 distances moves a
neighbour).

In the other tables every timing is the best of ``--repeats`` runs, the three engines interleaved in every
repeat (the machine is shared and noisy: only ratios from one run mean anything).  Beside the
wall-clock seconds, ``cpu`` columns give the CPU seconds of the process over the same run (every
thread of the engine counted; the least over the repeats): on a loaded machine they move less
than the wall clock, and their ratio says which engine does less work.  The
columns ``=sk`` and ``=fa`` compare results: ``=sk`` is the largest distance difference
with scikit-learn (float64, should be ~1e-12); ``=fa`` the fraction of neighbour indices
equal to faiss's (float32 distances: near-ties may come out in another order).

Approximate backends (recall@10 and speedup over exact, same workload) run on the
largest shared dataset (ohsumed, 13,929 rows; ``--approximate-on synthetic`` adds the
synthetic case, slow: i.i.d. Gaussian rows in 120 dimensions are the hardest case for them).  Recall counts
a returned neighbour as right when it is among the exact 10; "tie-aware" also counts a
neighbour at a distance equal to the exact 10th (binary data have many ties).
pynndescent compiles numba kernels on first use: it is warmed up on a tiny set first.
"""

from __future__ import annotations

import argparse
import gc
import os
import time
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse as sp

from mlneighbors.neighbors import ExactIndex, get_index, loo_kneighbors

SPLIT = [
    "bibtex",
    "birds",
    "corel5k",
    "emotions",
    "enron",
    "genbase",
    "medical",
    "scene",
    "yeast",
    "ohsumed",
    "corel16k001",
]
NO_SPLIT = ["cal500", "slashdot", "yahoo-science"]
K = 10


def load(name: str) -> tuple[Any, Any]:
    from mlneighbors.datasets import load_dataset

    if name == "synthetic":
        rng = np.random.default_rng(0)
        return rng.standard_normal((30993, 120)), rng.standard_normal((12914, 120))
    if name in NO_SPLIT:
        X = load_dataset(name, split="all").X
        order = np.random.default_rng(0).permutation(X.shape[0])
        cut = (2 * X.shape[0]) // 3
        return X[np.sort(order[:cut])], X[np.sort(order[cut:])]
    return load_dataset(name, split="train").X, load_dataset(name, split="test").X


def f64(A: Any) -> Any:
    return sp.csr_matrix(A, dtype=np.float64) if sp.issparse(A) else np.ascontiguousarray(A, dtype=np.float64)


# ---------------------------------------------------------------------------- engines
def run_ours(Xtr: Any, Xte: Any, index: Any = None) -> tuple[np.ndarray, ...]:
    index = (index or ExactIndex()).build(Xtr)
    d1, i1 = loo_kneighbors(index, Xtr, K)
    d2, i2 = index.query(Xte, K)
    return d1, i1, d2, i2


def run_faiss(Xtr32: np.ndarray, Xte32: np.ndarray) -> tuple[np.ndarray, ...]:
    import faiss

    index = faiss.IndexFlatL2(Xtr32.shape[1])
    index.add(Xtr32)
    d1, i1 = index.search(Xtr32, K + 1)
    d2, i2 = index.search(Xte32, K)
    # faiss's own leave-one-out is the same post-processing as ours (drop the row itself)
    n = Xtr32.shape[0]
    drop = i1 == np.arange(n)[:, None]
    drop[~drop.any(axis=1), K] = True
    keep = ~drop
    return (np.sqrt(np.maximum(d1[keep].reshape(n, K), 0)), i1[keep].reshape(n, K), np.sqrt(np.maximum(d2, 0)), i2)


def run_sklearn(Xtr: Any, Xte: Any) -> tuple[np.ndarray, ...]:
    from sklearn.neighbors import NearestNeighbors

    nn = NearestNeighbors(n_neighbors=K, algorithm="brute", n_jobs=-1).fit(Xtr)
    d1, i1 = nn.kneighbors()
    d2, i2 = nn.kneighbors(Xte)
    return d1, i1, d2, i2


#: CPU seconds of the last best_of call, by engine (the least over its repeats)
CPU: dict[str, float] = {}


def best_of(fns: dict[str, Callable[[], Any]], repeats: int) -> tuple[dict[str, float], dict[str, Any]]:
    times: dict[str, float] = {name: np.inf for name in fns}
    CPU.clear()
    CPU.update({name: np.inf for name in fns})
    results: dict[str, Any] = {}
    for _ in range(repeats):
        for name, fn in fns.items():  # interleaved: noise hits every engine alike
            gc.collect()
            t, c = time.perf_counter(), time.process_time()
            results[name] = fn()
            times[name] = min(times[name], time.perf_counter() - t)
            CPU[name] = min(CPU[name], time.process_time() - c)
    return times, results


def max_dist_diff(a: tuple[np.ndarray, ...], b: tuple[np.ndarray, ...]) -> float:
    return float(max(np.abs(a[0] - b[0]).max(), np.abs(a[2] - b[2]).max()))


def same_idx(a: tuple[np.ndarray, ...], b: tuple[np.ndarray, ...]) -> float:
    return float(np.concatenate([(a[1] == b[1]).ravel(), (a[3] == b[3]).ravel()]).mean())


# ---------------------------------------------------------------------------- exact table
def exact_table(names: list[str], repeats: int, with_sklearn: bool) -> None:
    head = (
        f"{'dataset':13s} {'n_train x d':>13s} {'fmt':>6s} {'nnz/row':>7s} {'path':>6s} "
        f"{'ours s':>7s} {'faiss s':>7s} {'ours/fa':>7s} {'sk s':>7s} {'ours/sk':>7s} {'=sk':>8s} {'=fa':>6s} "
        f"{'ours cpu':>8s} {'fa cpu':>7s} {'sk cpu':>7s} {'cpu o/sk':>8s}"
    )
    print(head)
    print("-" * len(head))
    ratios: dict[str, list[float]] = {"dense": [], "sparse": []}
    for name in names:
        Xtr, Xte = load(name)
        Xtr, Xte = f64(Xtr), f64(Xte)
        sparse = sp.issparse(Xtr)
        Xtr32 = np.ascontiguousarray(Xtr.toarray() if sparse else Xtr, dtype=np.float32)
        Xte32 = np.ascontiguousarray(Xte.toarray() if sparse else Xte, dtype=np.float32)
        fns = {
            "ours": lambda Xtr=Xtr, Xte=Xte: run_ours(Xtr, Xte),
            "faiss": lambda Xtr32=Xtr32, Xte32=Xte32: run_faiss(Xtr32, Xte32),
        }
        if with_sklearn:
            fns["sklearn"] = lambda Xtr=Xtr, Xte=Xte: run_sklearn(Xtr, Xte)
        times, res = best_of(fns, repeats)
        path = ExactIndex().build(Xtr).strategy_
        r_fa = times["ours"] / times["faiss"]
        ratios["sparse" if sparse else "dense"].append(r_fa)
        nnz = Xtr.nnz / Xtr.shape[0] if sparse else np.count_nonzero(Xtr) / Xtr.shape[0]
        sk_t = times.get("sklearn", np.nan)
        sk_diff = max_dist_diff(res["ours"], res["sklearn"]) if "sklearn" in res else np.nan
        print(
            f"{name:13s} {f'{Xtr.shape[0]}x{Xtr.shape[1]}':>13s} {'csr' if sparse else 'dense':>6s} "
            f"{nnz:7.1f} {path:>6s} {times['ours']:7.3f} {times['faiss']:7.3f} {r_fa:7.2f} "
            f"{sk_t:7.3f} {times['ours'] / sk_t:7.2f} {sk_diff:8.1e} {same_idx(res['ours'], res['faiss']):6.3f} "
            f"{CPU['ours']:8.3f} {CPU['faiss']:7.3f} {CPU.get('sklearn', np.nan):7.3f} "
            f"{CPU['ours'] / CPU.get('sklearn', np.nan):8.2f}",
            flush=True,
        )
    for kind, r in ratios.items():
        if r:
            print(
                f"{kind}: ours/faiss geometric mean {np.exp(np.mean(np.log(r))):.2f}, max {max(r):.2f} (target <= 1.25)"
            )


# ---------------------------------------------------------------------------- ML-kNN end to end
def load_labelled(name: str) -> tuple[Any, Any, Any, Any]:
    """Training rows, test rows and their label matrices, split as :func:`load` splits them."""
    from mlneighbors.datasets import load_dataset

    if name in NO_SPLIT:
        data = load_dataset(name, split="all")
        order = np.random.default_rng(0).permutation(data.X.shape[0])
        cut = (2 * data.X.shape[0]) // 3
        tr, te = np.sort(order[:cut]), np.sort(order[cut:])
        return data.X[tr], data.X[te], data.Y[tr], data.Y[te]
    train, test = load_dataset(name, split="train"), load_dataset(name, split="test")
    return train.X, test.X, train.Y, test.Y


def mlknn_labels(i_loo: np.ndarray, i_test: np.ndarray, Y: Any, s: float = 1.0) -> np.ndarray:
    """ML-kNN's label side from neighbour indices alone, vectorised (the reference's half).

    Counts of each label among the neighbours by one sparse product, the two (label, count)
    tables by one ``bincount`` each, then the MAP decision per (label, count) looked up at the
    test rows' counts.  Ties of the two posteriors go to "relevant" here; the counts and the
    decision rule are ML-kNN's (Zhang and Zhou 2007, smoothing ``s``).
    """
    Y = sp.csr_matrix(Y, dtype=np.float64)
    n, L = Y.shape
    k = i_loo.shape[1]

    def counts(idx: np.ndarray) -> np.ndarray:
        m = idx.shape[0]
        A = sp.csr_matrix((np.ones(idx.size), idx.ravel(), np.arange(0, idx.size + 1, k)), shape=(m, n))
        return np.asarray((A @ Y).toarray(), dtype=np.int64)

    C = counts(i_loo)
    has = Y.toarray().astype(bool)
    cells = C + (k + 1) * np.arange(L)
    c1 = np.bincount(cells[has], minlength=(k + 1) * L).reshape(L, k + 1)
    c0 = np.bincount(cells[~has], minlength=(k + 1) * L).reshape(L, k + 1)
    prior = (s + has.sum(axis=0)) / (2 * s + n)
    p1 = (s + c1) / (s * (k + 1) + c1.sum(axis=1, keepdims=True))
    p0 = (s + c0) / (s * (k + 1) + c0.sum(axis=1, keepdims=True))
    table = prior[:, None] * p1 >= (1 - prior)[:, None] * p0  # (L, k + 1)
    Ct = counts(i_test)
    return table[np.arange(L), Ct]


def minor_faults() -> int:
    """Page faults this process has taken (minor: the page was mapped afresh, not read from
    disk); 0 where ``resource`` does not exist (Windows).  Memory freed at the end of a run and
    given back to the system is faulted in again by the next run, page by page: a cost that
    differs from run to run with the state of the heap (see the neighbour search guide)."""
    try:
        import resource
    except ImportError:
        return 0
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def mlknn_table(names: list[str], repeats: int, order: str = "alternate", min_seconds: float = 0.0) -> None:
    """ML-kNN fit + predict with the default exact backend vs faiss's flat search + labels.

    One untimed run of each engine first; then at least ``repeats`` timed runs of each, and
    more where that many would take less than ``min_seconds`` of either engine's time (as
    the untimed runs say; at most 401): a job of a few milliseconds moves by 10-20 % from
    run to run on a shared machine, so a median of 5 of them moves its ratio by as much.
    ``order="alternate"``: ours, faiss, ours, ... (each run follows the other engine's);
    ``"blocks"``: the runs of ours back to back, then those of faiss.
    Both BLAS libraries (numpy's and faiss's own OpenBLAS, and faiss's OpenMP threads) keep
    their threads spinning for a while after a call: on 2 cores a run that follows the other
    engine's competes with those threads for the first milliseconds, which on the small sets
    is most of the run; the blocks give each engine the machine as a user's consecutive runs
    of one library find it.  The last column: the median page faults of a run of each."""
    from mlneighbors import MLkNN
    from mlneighbors.exceptions import LabelWarning

    head = (
        f"{'dataset':13s} {'n_train x d':>13s} {'ours s':>8s} {'faiss+labels s':>14s} {'ratio':>6s} "
        f"{'runs':>5s} {'same predictions':>16s} {'page faults (ours, faiss)':>25s}"
    )
    how = "interleaved" if order == "alternate" else "each engine back to back"
    at_least = f", each engine's runs {min_seconds:g} s or more" if min_seconds > 0 else ""
    print(f"ML-kNN (k = 10) fit + predict, median of {repeats} runs or more{at_least}, {how}")
    print(head)
    print("-" * len(head))
    for name in names:
        Xtr, Xte, Ytr, _ = load_labelled(name)
        dense = lambda A: np.ascontiguousarray(A.toarray() if sp.issparse(A) else A, dtype=np.float32)  # noqa: E731
        Xtr32, Xte32 = dense(Xtr), dense(Xte)

        def ours(Xtr=Xtr, Xte=Xte, Ytr=Ytr) -> np.ndarray:
            with warnings.catch_warnings():  # labels without a positive training row (bibtex, enron)
                warnings.simplefilter("ignore", LabelWarning)
                P = MLkNN(n_neighbors=K).fit(Xtr, Ytr).predict(Xte)
            return P.toarray() if sp.issparse(P) else np.asarray(P)

        def reference(Xtr32=Xtr32, Xte32=Xte32, Ytr=Ytr) -> np.ndarray:
            _, i1, _, i2 = run_faiss(Xtr32, Xte32)
            return mlknn_labels(i1, i2, Ytr)

        times: dict[str, list[float]] = {"ours": [], "ref": []}
        faults: dict[str, list[int]] = {"ours": [], "ref": []}
        out: dict[str, np.ndarray] = {}
        engines = (("ours", ours), ("ref", reference))
        first = {}
        for key, fn in engines:  # untimed: warms each engine up, and says how long a run takes
            t = time.perf_counter()
            out[key] = fn()
            first[key] = time.perf_counter() - t
        runs_each = max(repeats, min(401, int(np.ceil(min_seconds / max(min(first.values()), 1e-6)))))
        if order == "alternate":
            runs = [engine for _ in range(runs_each) for engine in engines]
        else:
            runs = [engine for engine in engines for _ in range(runs_each)]
        for key, fn in runs:
            gc.collect()
            f = minor_faults()
            t = time.perf_counter()
            out[key] = fn()
            times[key].append(time.perf_counter() - t)
            faults[key].append(minor_faults() - f)
        t_o, t_r = float(np.median(times["ours"])), float(np.median(times["ref"]))
        same = float((out["ours"].astype(bool) == out["ref"]).mean())
        pf = f"{int(np.median(faults['ours']))}, {int(np.median(faults['ref']))}"
        print(
            f"{name:13s} {f'{Xtr.shape[0]}x{Xtr.shape[1]}':>13s} {t_o:8.3f} {t_r:14.3f} {t_o / t_r:6.2f} "
            f"{runs_each:5d} {same:16.4f} {pf:>25s}",
            flush=True,
        )


# ---------------------------------------------------------------------------- the GEMM floor
def floor_table(n: int, d: int = 128) -> None:
    """The exact leave-one-out search of ``n`` random float32 rows against the float32 GEMM's
    own time for the same n^2 d work (numpy, blocks of 1,024 x 8,192 rows): the floor."""
    X = np.random.default_rng(0).standard_normal((n, d)).astype(np.float32)
    start = time.perf_counter()
    for a in range(0, n, 1024):
        for b in range(0, n, 8192):
            X[a : a + 1024] @ X[b : b + 8192].T
    gemm = time.perf_counter() - start
    start = time.perf_counter()
    index = ExactIndex().build(X)
    ordered = loo_kneighbors(index, X, K)[1]
    ours = time.perf_counter() - start
    print(f"leave-one-out search of {n:,} x {d} rows: {ours:.1f} s; the float32 GEMM of the same work "
          f"{gemm:.1f} s; ratio {ours / gemm:.2f}")
    # the neighbour sets alone (what ML-kNN's fit asks: no distance unless the bounds leave one open)
    start = time.perf_counter()
    sets = loo_kneighbors(index, X, K, validated=True, order=False)
    only = time.perf_counter() - start
    same = bool((np.sort(sets, axis=1) == np.sort(ordered, axis=1)).all())
    print(f"  its neighbour sets alone (order=False): {only:.1f} s; ratio {only / gemm:.2f}; the same sets: {same}")


# ---------------------------------------------------------------------------- approximate
APPROX = [
    ("faiss-ivf", {}),
    ("faiss-ivf", {"nprobe": 32}),
    ("faiss-hnsw", {}),
    ("faiss-hnsw", {"ef_search": 256}),
    ("hnswlib", {}),
    ("hnswlib", {"ef": 200}),
    ("pynndescent", {}),
    ("pynndescent", {"epsilon": 0.3}),
]


def recalls(exact: tuple[np.ndarray, ...], got: tuple[np.ndarray, ...]) -> tuple[float, float]:
    ed = np.vstack([exact[0], exact[2]])
    ei = np.vstack([exact[1], exact[3]])
    gd = np.vstack([got[0], got[2]])
    gi = np.vstack([got[1], got[3]])
    hit = (gi[:, :, None] == ei[:, None, :]).any(axis=2)
    tie = gd <= ed[:, -1:] * (1 + 1e-12)
    return float(hit.mean()), float((hit | tie).mean())


def approx_table(names: list[str], repeats: int) -> None:
    try:
        import pynndescent  # noqa: F401

        w = np.random.default_rng(1).standard_normal((200, 8))
        get_index("pynndescent").build(w).query(w, 3)  # compile the numba kernels first
        get_index("pynndescent").build(sp.csr_matrix(np.where(w > 1, w, 0))).query(sp.csr_matrix(w[:5]), 3)
    except ImportError:
        pass
    for name in names:
        Xtr, Xte = load(name)
        Xtr, Xte = f64(Xtr), f64(Xte)
        t_exact, res = best_of({"exact": lambda Xtr=Xtr, Xte=Xte: run_ours(Xtr, Xte)}, repeats)
        exact = res["exact"]
        print(
            f"\n{name}: {Xtr.shape[0]} x {Xtr.shape[1]} {'csr' if sp.issparse(Xtr) else 'dense'}, "
            f"{Xte.shape[0]} queries; exact {t_exact['exact']:.3f} s (build + leave-one-out + queries)"
        )
        head = f"{'backend':34s} {'time s':>8s} {'speedup':>8s} {'recall@10':>10s} {'tie-aware':>10s}"
        print(head)
        print("-" * len(head))
        for backend, params in APPROX:
            label = backend + (" " + ",".join(f"{k}={v}" for k, v in params.items()) if params else "")
            try:
                run = lambda Xtr=Xtr, Xte=Xte, b=backend, p=params: run_ours(Xtr, Xte, get_index(b, **p))  # noqa: E731
                times, got = best_of({"a": run}, repeats)
            except ImportError as exc:
                print(f"{label:34s} skipped: {exc}")
                continue
            r_id, r_tie = recalls(exact, got["a"])
            print(
                f"{label:34s} {times['a']:8.3f} {t_exact['exact'] / times['a']:8.2f} {r_id:10.4f} {r_tie:10.4f}",
                flush=True,
            )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--datasets", nargs="*", default=["synthetic"] + SPLIT + NO_SPLIT)
    parser.add_argument("--approximate-on", nargs="*", default=["ohsumed"])
    parser.add_argument("--approximate-repeats", type=int, default=1)
    parser.add_argument("--no-sklearn", action="store_true")
    parser.add_argument("--no-approximate", action="store_true")
    parser.add_argument(
        "--tables", nargs="+", default=["search", "mlknn", "approximate"],
        choices=["search", "mlknn", "floor", "approximate"],
        help="which tables: the neighbour search alone, ML-kNN end to end vs faiss + labels, the leave-one-out "
             "search against the GEMM floor (--floor-rows), the approximate backends",
    )
    parser.add_argument("--floor-rows", type=int, default=100_000, help="rows of the floor's random data (d = 128)")
    parser.add_argument("--order", choices=["alternate", "blocks"], default="alternate",
                        help="mlknn table: the two engines' runs alternating, or each engine's runs back to back")
    parser.add_argument("--min-seconds", type=float, default=1.0,
                        help="mlknn table: more runs than --repeats where that many would take less than this "
                             "many seconds of either engine (the small sets' jobs take milliseconds)")
    args = parser.parse_args(argv)
    import threadpoolctl

    # the kernels each BLAS picked (OpenBLAS: by CPU model, or as OPENBLAS_CORETYPE says; an
    # old OpenBLAS that does not know the CPU falls back to slow generic ones): faiss's own too
    try:
        import faiss  # noqa: F401
    except ImportError:
        pass
    blas = [
        f"{i['internal_api']} {i.get('version')} ({i.get('architecture') or 'kernels not said'}) "
        f"{i['num_threads']} threads, {os.path.basename(i['filepath'])}"
        for i in threadpoolctl.threadpool_info()
        if i["user_api"] == "blas"
    ]
    print(f"k = {K}; best of {args.repeats}; BLAS: {'; '.join(blas)}\n")
    if "search" in args.tables:
        exact_table(args.datasets, args.repeats, not args.no_sklearn)
    if "mlknn" in args.tables:
        print()
        mlknn_table([name for name in args.datasets if name != "synthetic"], args.repeats, args.order,
                    args.min_seconds)
    if "floor" in args.tables:
        print()
        floor_table(args.floor_rows)
    if "approximate" in args.tables and not args.no_approximate:
        approx_table(args.approximate_on, args.approximate_repeats)


if __name__ == "__main__":
    main()
