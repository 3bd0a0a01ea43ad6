"""Many labels: ML-kNN's fit against the bare leave-one-out search, and against the XC libraries.

Usage (napkinXC and omikuji live in the benchmark's own environment, never in the project's)::

    python3 -m venv .venv-bench && .venv-bench/bin/pip install -e '.[test]' napkinxc omikuji
    MLNEIGHBORS_DATA=../shared/datasets .venv-bench/bin/python benchmarks/labels.py \\
        [--quick] [--labels 1000 10000 ...] [--xc-labels 10000 100000] [--datasets corel5k ...]
        [--no-xc] [--no-datasets] [--repeat 1] [--xc-repeat 1] [--dataset-repeat 3]
        [--profile auto|always|never] [--max-rss-gb 16] [--seed 0]

Tables go to stdout; progress and the children's logs (omikuji's progress bars) to stderr.
``--quick`` is a smoke run: n = 20,000 training rows, 2,000 queries, L = 10^3 and 10^5.

Synthetic data (issue 17), one fresh subprocess per L, generated inside it from ``--seed``:
each label is a prototype point of N(0, I_d), d = 128; a row gets 5 distinct labels drawn from a
Zipf law (P(rank r) ~ 1 / r, label ids a random permutation of the ranks, so that frequency is
not label order) and is the mean of its labels' prototypes plus N(0, 0.5^2 I_d) noise;
n = 100,000 training rows and 10,000 queries from the same law; Y is built directly as CSR
(never an (n, L) array); k = 10.  Per L:

- ``search``: the bare leave-one-out search, ``loo_kneighbors(get_index("exact").build(X), X, k)``;
- ``fit``: ``MLkNN(k).fit(X, Y)`` (it includes that same search); ``fit/search`` is their ratio
  (target <= 1.3) and ``fit-search`` the seconds of everything else (validation, the label
  counts as a sparse product, the count tables, the posteriors);
- ``peak``: the peak resident memory beyond what the process held when the step started
  (X, Y and the queries already loaded), from Linux's ``VmHWM`` reset through
  ``/proc/self/clear_refs`` before each step: it counts everything (numpy, BLAS and thread
  buffers, the index's float32 copy of X), unlike ``tracemalloc`` (target < 2 GB at L = 10^6).
  The subprocesses run with ``MALLOC_MMAP_THRESHOLD_=131072`` (unless set): every block of
  128 KiB or more is then its own mapping, returned when freed, so that a step does not reuse,
  unseen, heap pages that an earlier step freed (glibc's default raises that threshold as
  the process runs: without it the smoke run's fit and top-5 peaks came out up to 10 times
  too low; the times did not move beyond the noise);
- ``top5``: ``model.predict_top_k(Q, 5)`` on the queries (their neighbour search included),
  and precision@1/3/5 of that ranking (``mlneighbors.metrics.precision_at_k``).

The XC comparison (``--xc-labels``, default L = 10^4 and 10^5, in the same subprocess as that
L's row, right after it; and the shared sets with the most labels, one subprocess each:
corel5k, cal500, corel16k001, bibtex, standard split where one ships, else a seeded 80/20
split): train and predict seconds, peak memory and precision@1/3/5 of the top 5 of

- ML-kNN (k = 10): ``fit`` + ``predict_top_k``; ``metric="euclidean"`` (default) and, where the
  features are sparse (bibtex, corel5k), ``metric="cosine"`` too;
- napkinXC's probabilistic label trees, ``napkinxc.models.PLT`` with its defaults
  (hierarchical k-means tree, LIBLINEAR logistic nodes, all cores): ``fit(X, Y)`` +
  ``predict(Q, top_k=5)``;
- omikuji (Parabel-like partitioned label trees) with its default hyper-parameters (all
  cores): ``Model.train_on_data`` on a file in the Extreme Classification Repository format
  (header ``n_rows n_features n_labels``; per row ``l1,l2 f:v f:v``, 0-based) written
  beforehand, outside the clock (its parse of that file is inside: its Python API trains
  from a file only); prediction is its per-row ``predict(pairs, top_k=5)``, the conversion
  of each row to (feature, value) pairs included.

A contender whose library is not importable is skipped with the reason printed.  A library
that returns fewer than 5 labels for a row gets misses in the empty places (the XC
Repository's precision@k), counted in the ``short`` column.

Caveats: this is a 2-core machine, possibly shared: absolute seconds are noisy, and only
numbers taken side by side in one subprocess compare (the ratio fit/search, the contenders of
one row).  ``--repeat`` alternates search and fit and keeps the best time of each (and the
largest peak).  Each subprocess runs with ``OMP_WAIT_POLICY=passive`` (unless set), as in
``benchmarks/models.py``: spinning OpenMP workers would take the cores from the next contender.
A watchdog kills a subprocess whose resident memory passes ``--max-rss-gb`` (default 16) so
that a runaway fit cannot take the machine down; the row then says so.  With
``--profile auto`` a fit whose ratio exceeds 1.5 is run once more under cProfile and the
functions that dominate it are printed after the tables.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

K = 10
TOP = 5
D = 128
LABELS_PER_ROW = 5
NOISE = 0.5
ZIPF = 1.0
FULL = {"n": 100_000, "m": 10_000, "labels": [10**3, 10**4, 10**5, 10**6], "xc": [10**4, 10**5]}
QUICK = {"n": 20_000, "m": 2_000, "labels": [10**3, 10**5], "xc": [10**5]}
DATASETS = ["corel5k", "cal500", "corel16k001", "bibtex"]
MB = 2**20


# -- memory -------------------------------------------------------------------------------


def _status(field: str) -> int | None:
    """A ``/proc/self/status`` field in bytes (None where there is no procfs)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


class Peak:
    """Peak resident memory of a step beyond the resident memory at its start (Linux)."""

    def __enter__(self) -> Peak:
        gc.collect()
        try:
            with open("/proc/self/clear_refs", "w") as f:
                f.write("5")  # resets VmHWM to the current VmRSS
            self.start = _status("VmRSS")
        except OSError:
            self.start = None
        self.bytes: int | None = None
        return self

    def __exit__(self, *exc: Any) -> None:
        hwm = _status("VmHWM")
        if self.start is not None and hwm is not None:
            self.bytes = max(0, hwm - self.start)


def watchdog(limit_bytes: int) -> None:
    """Exit the process (status 3) as soon as its resident memory passes ``limit_bytes``."""

    def run() -> None:
        while True:
            rss = _status("VmRSS")
            if rss is not None and rss > limit_bytes:
                sys.stderr.write(f"watchdog: resident memory {rss / 2**30:.1f} GB > limit, exiting\n")
                sys.stderr.flush()
                os._exit(3)
            time.sleep(0.1)

    threading.Thread(target=run, daemon=True).start()


def timed(fn: Callable[[], Any]) -> tuple[float, int | None, Any]:
    with Peak() as peak:
        t = time.perf_counter()
        out = fn()
        seconds = time.perf_counter() - t
    return seconds, peak.bytes, out


# -- data ---------------------------------------------------------------------------------


def synthetic(n_rows: int, n_labels: int, seed: int) -> tuple[np.ndarray, sp.csr_matrix]:
    """Rows that are noisy means of their labels' prototypes; Y as CSR, never dense."""
    rng = np.random.default_rng([seed, n_labels])
    prototypes = rng.standard_normal((n_labels, D), dtype=np.float32)
    cdf = np.cumsum(1.0 / np.arange(1, n_labels + 1) ** ZIPF)
    cdf /= cdf[-1]
    ids = rng.permutation(n_labels)
    draws = 16  # enough that nearly every row finds 5 distinct labels among them
    rank = np.minimum(np.searchsorted(cdf, rng.random((n_rows, draws)), side="right"), n_labels - 1)
    cand = ids[rank]
    earlier = np.tril(np.ones((draws, draws), dtype=bool), -1)
    dup = ((cand[:, :, None] == cand[:, None, :]) & earlier).any(axis=2)
    keep = ~dup & (np.cumsum(~dup, axis=1) <= LABELS_PER_ROW)
    counts = keep.sum(axis=1)
    indptr = np.concatenate([[0], np.cumsum(counts)])
    Y = sp.csr_matrix((np.ones(indptr[-1], dtype=np.int8), cand[keep], indptr), shape=(n_rows, n_labels))
    Y.sort_indices()
    mean = sp.csr_matrix((np.repeat(1.0 / counts, counts).astype(np.float32), Y.indices, Y.indptr), shape=Y.shape)
    X = np.asarray(mean @ prototypes, dtype=np.float64)
    del prototypes, mean
    X += NOISE * rng.standard_normal(X.shape)
    return X, Y


def dataset_split(name: str, seed: int) -> tuple[Any, Any, Any, Any, str]:
    from sklearn.model_selection import train_test_split

    from mlneighbors.datasets import get_dataset_spec, load_dataset

    if "train" in get_dataset_spec(name).splits:
        tr, te = load_dataset(name, "train"), load_dataset(name, "test")
        return tr.X, sp.csr_matrix(tr.Y), te.X, sp.csr_matrix(te.Y), "standard"
    data = load_dataset(name)
    Xtr, Xte, Ytr, Yte = train_test_split(data.X, data.Y, test_size=0.2, random_state=seed)
    return Xtr, sp.csr_matrix(Ytr), Xte, sp.csr_matrix(Yte), f"80/20 seed {seed}"


# -- the contenders -----------------------------------------------------------------------


def precisions(Y_true: sp.csr_matrix, labels: np.ndarray) -> list[float]:
    from mlneighbors.metrics import precision_at_k

    return [precision_at_k(Y_true, labels, k=k) for k in (1, 3, 5)]


def label_array(rows: list[list[int]], Y_true: sp.csr_matrix) -> tuple[np.ndarray, int]:
    """Top-5 lists as an (m, 5) array; a short list is filled with labels the row does not
    hold (a miss per empty place, as the XC Repository's precision@k counts it)."""
    out = np.empty((len(rows), TOP), dtype=np.intp)
    short = 0
    for i, row in enumerate(rows):
        row = list(row)[:TOP]
        if len(row) < TOP:
            short += 1
            taken = set(row) | set(Y_true.indices[Y_true.indptr[i] : Y_true.indptr[i + 1]].tolist())
            row += [lab for lab in range(Y_true.shape[1] + TOP + len(taken)) if lab not in taken][: TOP - len(row)]
        out[i] = row
    return out, short


def outcome(train_s: float, predict_s: float, peak: int | None, p: list[float], short: int) -> dict:
    return {"train_s": train_s, "predict_s": predict_s, "peak": peak, "p": p, "short": short}


def run_mlknn(X, Y, Q, Yq, metric: str) -> dict:
    from mlneighbors import MLkNN

    fit_s, fit_peak, model = timed(lambda: MLkNN(K, metric=metric).fit(X, Y))
    pred_s, pred_peak, (_, labels) = timed(lambda: model.predict_top_k(Q, TOP))
    return outcome(fit_s, pred_s, max_peak(fit_peak, pred_peak), precisions(Yq, labels), 0)


def run_plt(X, Y, Q, Yq) -> dict:
    from napkinxc.models import PLT

    Yf = sp.csr_matrix(Y, dtype=np.float64)
    with tempfile.TemporaryDirectory() as tmp:
        model = PLT(os.path.join(tmp, "plt"), verbose=0)
        train_s, train_peak, _ = timed(lambda: model.fit(X, Yf))
        pred_s, pred_peak, rows = timed(lambda: model.predict(Q, top_k=TOP))
    labels, short = label_array(rows, Yq)
    return outcome(train_s, pred_s, max_peak(train_peak, pred_peak), precisions(Yq, labels), short)


def write_xc_file(path: str, X, Y: sp.csr_matrix) -> None:
    """The Extreme Classification Repository format that omikuji's trainer reads."""
    with open(path, "w") as f:
        f.write(f"{X.shape[0]} {X.shape[1]} {Y.shape[1]}\n")
        for i in range(X.shape[0]):
            labels = ",".join(map(str, Y.indices[Y.indptr[i] : Y.indptr[i + 1]].tolist()))
            cols, vals = _row_pairs(X, i)
            f.write(" ".join([labels] + [f"{c}:{v:.7g}" for c, v in zip(cols, vals, strict=True)]) + "\n")


def _row_pairs(X, i: int) -> tuple[list[int], list[float]]:
    if sp.issparse(X):
        lo, hi = X.indptr[i], X.indptr[i + 1]
        cols, vals = X.indices[lo:hi], X.data[lo:hi]
    else:
        cols = np.flatnonzero(X[i])
        vals = X[i, cols]
    keep = vals != 0
    return cols[keep].tolist(), vals[keep].tolist()


def run_omikuji(X, Y, Q, Yq) -> dict:
    import omikuji

    X = sp.csr_matrix(X) if sp.issparse(X) else np.asarray(X)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "train.txt")
        write_xc_file(path, X, Y)
        train_s, train_peak, model = timed(lambda: omikuji.Model.train_on_data(path))

    def predict() -> list[list[int]]:
        out = []
        for i in range(Q.shape[0]):
            cols, vals = _row_pairs(Q, i)
            out.append([lab for lab, _ in model.predict(list(zip(cols, vals, strict=True)), top_k=TOP)])
        return out

    pred_s, pred_peak, rows = timed(predict)
    labels, short = label_array(rows, Yq)
    return outcome(train_s, pred_s, max_peak(train_peak, pred_peak), precisions(Yq, labels), short)


def max_peak(*peaks: int | None) -> int | None:
    known = [p for p in peaks if p is not None]
    return max(known) if known else None


def contenders(sparse_features: bool) -> list[tuple[str, Callable[..., dict] | None, str]]:
    """(name, runner or None, why it is skipped)."""
    out: list[tuple[str, Callable[..., dict] | None, str]] = [
        ("ML-kNN euclidean", lambda *a: run_mlknn(*a, "euclidean"), "")
    ]
    if sparse_features:
        out.append(("ML-kNN cosine", lambda *a: run_mlknn(*a, "cosine"), ""))
    for name, module, runner in (("napkinXC PLT", "napkinxc", run_plt), ("omikuji", "omikuji", run_omikuji)):
        try:
            __import__(module)
            out.append((name, runner, ""))
        except ImportError as exc:
            out.append((name, None, f"skipped: {module} not importable ({exc}); pip install {module}"))
    return out


def compare(X, Y, Q, Yq, repeat: int) -> list[dict]:
    """Every contender on one split, interleaved ``repeat`` times: best times, largest peak."""
    rows: dict[str, dict] = {}
    plan = contenders(sp.issparse(X))
    for _ in range(repeat):
        for name, runner, why in plan:
            if runner is None:
                rows[name] = {"model": name, "skipped": why}
                continue
            try:
                r = runner(X, Y, Q, Yq)
            except Exception as exc:  # a contender that fails is reported, not fatal
                rows[name] = {"model": name, "skipped": f"failed: {type(exc).__name__}: {exc}"}
                continue
            best = rows.get(name)
            if best is None or "skipped" in best:
                rows[name] = {"model": name, **r}
            else:
                best["train_s"] = min(best["train_s"], r["train_s"])
                best["predict_s"] = min(best["predict_s"], r["predict_s"])
                best["peak"] = max_peak(best["peak"], r["peak"])
    return list(rows.values())


# -- the children -------------------------------------------------------------------------


def child_synthetic(spec: dict) -> dict:
    from mlneighbors import MLkNN
    from mlneighbors.neighbors import get_index, loo_kneighbors

    L, n, m = spec["labels"], spec["n"], spec["m"]
    t = time.perf_counter()
    X_all, Y_all = synthetic(n + m, L, spec["seed"])
    X, Q = X_all[:n], X_all[n:]
    Y, Yq = Y_all[:n], Y_all[n:]
    del X_all, Y_all
    out: dict[str, Any] = {
        "labels": L, "n": n, "m": m, "gen_s": time.perf_counter() - t,
        "per_row": Y.nnz / n, "labels_used": int(np.count_nonzero(np.diff(Y.tocsc().indptr))),
    }
    search_s = fit_s = float("inf")
    search_peak = fit_peak = None
    model = None
    for _ in range(spec["repeat"]):
        s, p, result = timed(lambda: loo_kneighbors(get_index("exact").build(X), X, K))
        del result
        search_s, search_peak = min(search_s, s), max_peak(search_peak, p)
        model = None
        gc.collect()
        s, p, model = timed(lambda: MLkNN(K).fit(X, Y))
        fit_s, fit_peak = min(fit_s, s), max_peak(fit_peak, p)
    top_s, top_peak, (_, labels) = timed(lambda: model.predict_top_k(Q, TOP))
    out.update(search_s=search_s, fit_s=fit_s, search_peak=search_peak, fit_peak=fit_peak,
               top_s=top_s, top_peak=top_peak, p=precisions(Yq, labels))
    model = None
    gc.collect()
    if spec["profile"] == "always" or (spec["profile"] == "auto" and fit_s / search_s > 1.5):
        out["profile"] = profile_fit(X, Y)
    if spec["xc"]:
        out["xc"] = compare(X, Y, Q, Yq, spec["xc_repeat"])
    return out


def profile_fit(X, Y) -> str:
    import cProfile
    import io
    import pstats

    from mlneighbors import MLkNN

    prof = cProfile.Profile()
    prof.enable()
    MLkNN(K).fit(X, Y)
    prof.disable()
    text = io.StringIO()
    pstats.Stats(prof, stream=text).sort_stats("cumulative").print_stats(18)
    return text.getvalue()


def child_dataset(spec: dict) -> dict:
    Xtr, Ytr, Xte, Yte, split = dataset_split(spec["name"], spec["seed"])
    out = {"name": spec["name"], "split": split, "n": Xtr.shape[0], "m": Xte.shape[0], "labels": Ytr.shape[1],
           "sparse": sp.issparse(Xtr)}
    out["xc"] = compare(Xtr, Ytr, Xte, Yte, spec["repeat"])
    return out


def run_child(spec: dict, log) -> dict:
    """One measurement in a fresh interpreter; its stdout and stderr go to ``log``."""
    env = dict(os.environ)
    env.setdefault("OMP_WAIT_POLICY", "passive")
    # a fixed threshold (no glibc dynamic adjustment): every block of 128 KiB or more is its
    # own mapping, returned to the system when freed, so the resident memory follows what is
    # live and a step's peak is not hidden by heap pages an earlier step freed but kept
    env.setdefault("MALLOC_MMAP_THRESHOLD_", str(128 * 1024))
    with tempfile.TemporaryDirectory() as tmp:
        result = Path(tmp) / "result.json"
        spec = {**spec, "result": str(result)}
        proc = subprocess.run([sys.executable, __file__, "--child", json.dumps(spec)], env=env,
                              stdout=log, stderr=log)
        if proc.returncode != 0 or not result.exists():
            why = {3: "killed by the watchdog (memory limit)", -9: "killed (SIGKILL: out of memory?)"}
            return {"failed": why.get(proc.returncode, f"exit status {proc.returncode}; see the log on stderr")}
        return json.loads(result.read_text())


# -- the tables ---------------------------------------------------------------------------


def mb(x: int | None) -> str:
    return "n/a" if x is None else f"{x / MB:.0f}"


def sweep_table(rows: list[dict]) -> str:
    head = (f"{'L':>9} {'used':>8} {'c':>4} {'search s':>9} {'fit s':>8} {'fit/search':>10} {'fit-search s':>12} "
            f"{'search MB':>9} {'fit MB':>7} {'top5 s':>7} {'top5 MB':>7} {'P@1':>6} {'P@3':>6} {'P@5':>6}")
    lines = [head, "-" * len(head)]
    for r in rows:
        if "failed" in r:
            lines.append(f"{r['labels']:>9} {'':>8} {'':>4} failed: {r['failed']}")
            continue
        p = r["p"]
        lines.append(
            f"{r['labels']:>9} {r['labels_used']:>8} {r['per_row']:>4.2f} {r['search_s']:>9.1f} {r['fit_s']:>8.1f} "
            f"{r['fit_s'] / r['search_s']:>10.3f} {r['fit_s'] - r['search_s']:>12.2f} {mb(r['search_peak']):>9} "
            f"{mb(r['fit_peak']):>7} {r['top_s']:>7.2f} {mb(r['top_peak']):>7} {p[0]:>6.3f} {p[1]:>6.3f} {p[2]:>6.3f}"
        )
    return "\n".join(lines)


def xc_table(blocks: list[tuple[str, dict]]) -> str:
    head = (f"{'data':<24} {'n train':>8} {'n test':>7} {'L':>7} {'model':<17} {'train s':>8} {'predict s':>9} "
            f"{'peak MB':>8} {'P@1':>6} {'P@3':>6} {'P@5':>6} {'short':>5}")
    lines = [head, "-" * len(head)]
    for title, r in blocks:
        if "failed" in r:
            lines.append(f"{title:<24} failed: {r['failed']}")
            continue
        for row in r["xc"]:
            lead = f"{title:<24} {r['n']:>8} {r['m']:>7} {r['labels']:>7} {row['model']:<17}"
            if "skipped" in row:
                lines.append(f"{lead} {row['skipped']}")
                continue
            p = row["p"]
            lines.append(f"{lead} {row['train_s']:>8.2f} {row['predict_s']:>9.2f} {mb(row['peak']):>8} "
                         f"{p[0]:>6.3f} {p[1]:>6.3f} {p[2]:>6.3f} {row['short']:>5}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="smoke run: n=20,000, 2,000 queries, L=10^3, 10^5")
    parser.add_argument("--labels", type=int, nargs="+", help="the L of the sweep")
    parser.add_argument("--xc-labels", type=int, nargs="+", help="the L at which the XC libraries run too")
    parser.add_argument("--n", type=int, help="training rows")
    parser.add_argument("--m", type=int, help="queries")
    parser.add_argument("--datasets", nargs="+", default=DATASETS)
    parser.add_argument("--no-xc", action="store_true", help="no XC libraries on the synthetic data")
    parser.add_argument("--no-datasets", action="store_true")
    parser.add_argument("--repeat", type=int, default=1, help="rounds of the synthetic rows (best time)")
    parser.add_argument("--xc-repeat", type=int, default=1, help="rounds of the XC libraries on the synthetic data")
    parser.add_argument("--dataset-repeat", type=int, default=3, help="rounds on the shared sets (best time)")
    parser.add_argument("--profile", choices=["auto", "always", "never"], default="auto")
    parser.add_argument("--max-rss-gb", type=float, default=16.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.child:
        spec = json.loads(args.child)
        watchdog(int(spec["max_rss_gb"] * 2**30))
        out = child_synthetic(spec) if spec["kind"] == "synthetic" else child_dataset(spec)
        Path(spec["result"]).write_text(json.dumps(out))
        return

    size = QUICK if args.quick else FULL
    n, m = args.n or size["n"], args.m or size["m"]
    sweep = args.labels or size["labels"]
    xc = [] if args.no_xc else (args.xc_labels or size["xc"])
    common = {"seed": args.seed, "max_rss_gb": args.max_rss_gb}
    log = sys.stderr
    print(f"# benchmarks/labels.py: n={n:,} training rows, {m:,} queries, d={D}, k={K}, "
          f"{LABELS_PER_ROW} labels a row (Zipf {ZIPF}), noise {NOISE}; {os.cpu_count()} CPUs", flush=True)

    synthetic_rows = []
    for L in sorted(set(sweep) | set(xc)):
        print(f"[labels] L={L:,} ...", file=log, flush=True)
        r = run_child({"kind": "synthetic", "labels": L, "n": n, "m": m, "repeat": args.repeat,
                       "xc_repeat": args.xc_repeat, "profile": args.profile, "xc": L in xc, **common}, log)
        r.setdefault("labels", L)
        synthetic_rows.append(r)
        print(f"[labels] L={L:,}: {json.dumps({k: v for k, v in r.items() if k != 'profile'})}", file=log, flush=True)
    dataset_rows = []
    if not args.no_datasets:
        for name in args.datasets:
            print(f"[labels] {name} ...", file=log, flush=True)
            r = run_child({"kind": "dataset", "name": name, "repeat": args.dataset_repeat, **common}, log)
            dataset_rows.append((name, r))

    print("\nML-kNN fit vs the bare leave-one-out search (seconds; MB: peak RSS beyond the step's start)")
    print(sweep_table([r for r in synthetic_rows if r["labels"] in sweep]))
    blocks = [(f"synthetic L={r['labels']:,}", r) for r in synthetic_rows if r["labels"] in xc]
    blocks += [(f"{name} ({r.get('split', '')})", r) for name, r in dataset_rows]
    if blocks:
        print("\nTop-5 precision and train + predict time next to the XC libraries")
        print(xc_table(blocks))
    for r in synthetic_rows:
        if r.get("profile"):
            print(f"\ncProfile of MLkNN.fit at L={r['labels']:,} (ratio above 1.5):\n{r['profile']}")


if __name__ == "__main__":
    main()
