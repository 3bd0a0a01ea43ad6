"""MLkNN fit + predict on a 2-worker Dask cluster against the in-process exact backend.

Usage::

    .venv/bin/python benchmarks/dask.py [--n 200000] [--queries 20000] [--sets dense sparse]
        [--workers 2] [--json out.json]

Two synthetic sets (the largest shared set, ohsumed, has 13,929 rows: too small to say anything
about a cluster): ``dense``, n x 128 standard normal; ``sparse``, n x 1,000 binary "text" rows
(30 words a row on average, word frequencies Zipf-like); 20 labels from a fixed random linear map
of the features (labels do not change the cost; they make the predictions worth comparing).
Rows and labels are generated block by block from per-block seeds, so every contender sees the
same numbers, whichever scheduler makes them.

Contenders, each in its own process (so that the peak memory is its own), k = 10:

- ``in-process``: ``MLkNN(10)`` (the exact backend, every core of the machine) on NumPy / CSR X;
- ``dask, X in memory``: ``MLkNN(10, backend="dask")`` on the same NumPy / CSR X, a
  ``LocalCluster`` of ``--workers`` processes of one thread (the scheduler runs in this process,
  so it holds the shards' recipes: a copy of X);
- ``dask, X dask array``: the same model on a dask array generated on the workers; only the
  labels and the (n, k) neighbours reach the client, and predict returns a lazy array.

Reported: fit and predict seconds (the cluster's start and the workers' imports excluded), the
ratio to in-process, the client's peak resident memory (``ru_maxrss``) and its growth over the
process before the data, the size of X, whether the predictions equal in-process's, and, for
the dask runs, the cluster's task stream summed by kind (compute seconds of the shard builds,
the (block, shard) searches, the merges, the lazy predict blocks; seconds of worker-to-worker
transfers).  ``docs/dask-scaling.md`` projects a 16-worker run from these numbers.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
# this file is named dask.py: its folder on sys.path would shadow the dask package
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402

K = 10
N_LABELS = 20
BLOCK = 10_000  # rows per generated block
DIMS = {"dense": 128, "sparse": 1_000}
WORDS_PER_ROW = 30
CONTENDERS = ["in-process", "dask, X in memory", "dask, X dask array"]


def _rows(kind: str, seed: int, start: int, stop: int) -> np.ndarray | sp.csr_matrix:
    rng = np.random.default_rng([seed, start])
    n, d = stop - start, DIMS[kind]
    if kind == "dense":
        return rng.standard_normal((n, d))
    p = 1.0 / (np.arange(d) + 10.0)
    counts = rng.poisson(WORDS_PER_ROW, size=n).clip(1, d)
    cols = rng.choice(d, size=int(counts.sum()), p=p / p.sum())
    rows = np.repeat(np.arange(n), counts)
    X = sp.csr_matrix((np.ones(len(cols)), (rows, cols)), shape=(n, d))
    X.data[:] = 1.0  # repeated words: binary
    return X


def _block_labels(X: np.ndarray | sp.csr_matrix, kind: str) -> np.ndarray:
    """20 labels: a fixed random linear map of a row, scaled to unit variance, above 1 (about
    16 % of the cells); row by row, so the same labels however X is cut into blocks."""
    W = np.random.default_rng(7).standard_normal((DIMS[kind], N_LABELS))
    scale = np.sqrt(np.maximum(X.getnnz(axis=1), 1))[:, None] if sp.issparse(X) else np.sqrt(DIMS[kind])
    return (np.asarray(X @ W) / scale > 1.0).astype(np.int8)


def dask_data(kind: str, n: int, seed: int):
    """X as a dask array whose blocks are generated on the workers."""
    import dask
    import dask.array as da

    meta = sp.csr_matrix((0, DIMS[kind])) if kind == "sparse" else np.empty((0, DIMS[kind]))
    blocks = [da.from_delayed(dask.delayed(_rows)(kind, seed, a, min(a + BLOCK, n)),
                              shape=(min(BLOCK, n - a), DIMS[kind]), dtype=np.float64, meta=meta)
              for a in range(0, n, BLOCK)]
    return da.concatenate(blocks, axis=0)


def local_data(kind: str, n: int, seed: int):
    parts = [_rows(kind, seed, a, min(a + BLOCK, n)) for a in range(0, n, BLOCK)]
    return sp.vstack(parts, format="csr") if kind == "sparse" else np.concatenate(parts)


def _digest(a: np.ndarray) -> str:
    return hashlib.blake2b(np.ascontiguousarray(a).tobytes(), digest_size=8).hexdigest()


def _maxrss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _task_costs(records: list[dict]) -> dict[str, float]:
    """Compute seconds (and counts) by kind of task, transfer seconds, and the busiest
    worker's compute seconds, from a Dask task stream."""
    out: dict[str, float] = {}
    busy: dict[str, float] = {}
    for rec in records:
        key = str(rec["key"])
        kind = next((w for w in ("shard", "knn", "merge", "rows", "stack", "query") if f"mlneighbors-{w}" in key),
                    "predict-block" if "_apply" in key else "data")
        for ss in rec["startstops"]:
            name = kind if ss["action"] == "compute" else ss["action"]
            out[name] = out.get(name, 0.0) + ss["stop"] - ss["start"]
            if ss["action"] == "compute":
                out[f"n_{kind}"] = out.get(f"n_{kind}", 0) + 1
                busy[rec["worker"]] = busy.get(rec["worker"], 0.0) + ss["stop"] - ss["start"]
    out["busiest_worker"] = max(busy.values(), default=0.0)
    return {k: round(v, 3) for k, v in sorted(out.items())}


def run_one(contender: str, kind: str, n: int, nq: int, workers: int, shards: int | None = None) -> dict:
    """One contender in this process: fit + predict, seconds, memory, predictions' digest."""
    import distributed

    from mlneighbors import MLkNN

    result: dict = {"contender": contender, "set": kind, "n": n, "queries": nq, "shards": shards}
    client = cluster = None
    if contender != "in-process":
        cluster = distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                           dashboard_address=None, silence_logs=40)
        client = distributed.Client(cluster)
        client.run(lambda: __import__("mlneighbors.neighbors") and None)  # workers' imports, not timed
    base = _maxrss_mib()
    if contender == "dask, X dask array":
        X, Q = dask_data(kind, n, 1), dask_data(kind, nq, 2)
        Y = X.map_blocks(_block_labels, kind, chunks=(X.chunks[0], (N_LABELS,)), dtype=np.int8,
                         meta=np.empty((0, N_LABELS), np.int8)).compute()
        x_bytes = n * DIMS[kind] * 8 if kind == "dense" else None
    else:
        X, Q = local_data(kind, n, 1), local_data(kind, nq, 2)
        Y = _block_labels(X, kind)
        x_bytes = X.nbytes if kind == "dense" else X.data.nbytes + X.indices.nbytes + X.indptr.nbytes
    result["X_MiB"] = None if x_bytes is None else round(x_bytes / 2**20, 1)
    model = MLkNN(K) if contender == "in-process" else MLkNN(K, backend="dask", backend_params={"n_shards": shards})
    def stream():
        return contextlib.nullcontext() if client is None else distributed.get_task_stream(client)

    with stream() as fit_stream:
        t0 = time.perf_counter()
        model.fit(X, Y)
        t1 = time.perf_counter()
    with stream() as predict_stream:
        pred = model.predict(Q)
        if hasattr(pred, "compute"):  # a dask array of queries: a lazy prediction
            pred = pred.compute()
        t2 = time.perf_counter()
    if client is not None:
        result["tasks_fit"] = _task_costs(fit_stream.data)
        result["tasks_predict"] = _task_costs(predict_stream.data)
    result.update(fit_s=round(t1 - t0, 2), predict_s=round(t2 - t1, 2), total_s=round(t2 - t0, 2),
                  peak_rss_MiB=round(_maxrss_mib(), 0), rss_growth_MiB=round(_maxrss_mib() - base, 0),
                  predictions=_digest(pred), label_rate=round(float(Y.mean()), 3))
    if client is not None:
        client.close()
        cluster.close()
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=200_000)
    parser.add_argument("--queries", type=int, default=20_000)
    parser.add_argument("--sets", nargs="+", default=["dense", "sparse"], choices=sorted(DIMS))
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--dims", type=int, default=DIMS["dense"], help="features of the dense set")
    parser.add_argument("--shards", type=int, help="shards of the dask runs (default: one per worker); "
                        "16 shards on 2 workers measure the per-shard costs of a 16-worker run")
    parser.add_argument("--contenders", nargs="+", default=CONTENDERS, choices=CONTENDERS)
    parser.add_argument("--json", metavar="FILE")
    parser.add_argument("--run", nargs=2, metavar=("CONTENDER", "SET"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    DIMS["dense"] = args.dims  # read by the block generator, wherever it runs
    if args.run:
        print(json.dumps(run_one(args.run[0], args.run[1], args.n, args.queries, args.workers, args.shards)))
        return
    rows = []
    for kind in args.sets:
        for contender in args.contenders:
            cmd = [sys.executable, __file__, "--run", contender, kind, "--n", str(args.n),
                   "--queries", str(args.queries), "--workers", str(args.workers), "--dims", str(args.dims)]
            cmd += ["--shards", str(args.shards)] if args.shards else []
            out = subprocess.run(cmd, capture_output=True, text=True, check=True, cwd=HERE.parent)
            rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
            print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    print(f"\nMLkNN(k={K}) fit + predict, n={args.n:,} training rows ({args.dims} dense features), "
          f"{args.queries:,} queries, "
          f"{args.workers} workers x 1 thread vs in-process on {os.cpu_count()} cores\n")
    print("| set | contender | fit s | predict s | total s | ratio | client peak MiB (growth) | X MiB "
          "| same predictions |")
    print("|---|---|---|---|---|---|---|---|---|")
    for kind in args.sets:
        ref = next((r for r in rows if r["set"] == kind and r["contender"] == "in-process"), rows[0])
        for r in (r for r in rows if r["set"] == kind):
            print(f"| {kind} | {r['contender']} | {r['fit_s']} | {r['predict_s']} | {r['total_s']} | "
                  f"{r['total_s'] / ref['total_s']:.2f} | {r['peak_rss_MiB']:.0f} ({r['rss_growth_MiB']:.0f}) | "
                  f"{r['X_MiB'] if r['X_MiB'] is not None else ref['X_MiB']} | "
                  f"{'yes' if r['predictions'] == ref['predictions'] else 'NO'} |")
    for r in rows:
        for step in ("fit", "predict"):
            if f"tasks_{step}" in r:
                print(f"\n{r['set']}, {r['contender']}, {step}: task stream {json.dumps(r[f'tasks_{step}'])}")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
