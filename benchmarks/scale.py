"""A million rows on one machine: the exact search against the approximate backends, end to end.

Usage::

    PYTHONPATH=src python benchmarks/scale.py [--sizes 100000x128 300000x128 1000000x128 300000x384]
        [--laws mixture clusters hard]
        [--queries 10000] [--recall-queries 2000] [--contenders exact auto hnswlib faiss-hnsw faiss-ivf]
        [--pynndescent-at 100000] [--exact-sample-above 500000] [--exact-sample 10000]
        [--exact-quality whole|skip] [--saved-at 1000000] [--workers 2] [--out table.md] [--seed 0]
    PYTHONPATH=src python benchmarks/scale.py --sizes 1000000x128 --contenders auto --quality-rows 100000
    PYTHONPATH=src python benchmarks/scale.py --laws mixture clusters hard --sizes 100000x128 300000x128
    PYTHONPATH=src python benchmarks/scale.py --laws hard --sizes 1000000x128 --contenders auto --quality-rows 100000
    PYTHONPATH=src python benchmarks/scale.py --sizes 300000x128 --contenders hnswlib dask-hnswlib
    PYTHONPATH=src python benchmarks/scale.py --sizes 1000000x128 --contenders auto --dtype float32  # peak
        # memory beyond float32 rows, as a user's embeddings come
    PYTHONPATH=src python benchmarks/scale.py --sizes 10000000x128 --contenders auto exact --dtype float32 \
        --exact-quality skip --exact-sample 2000 --loo-sample 2000 --saved-at 0 --max-rss-gb 22 --pynndescent-at \
        --progress  # 10^7 rows on one 24 GB machine; where the run is, a line a minute on standard error
    PYTHONPATH=src python benchmarks/scale.py --laws hard --contenders faiss-union:ef_construction=200,nprobe=16
        # a contender NAME:key=value,... is that backend with those parameters
    PYTHONPATH=src python benchmarks/scale.py --quick        # a smoke run: 20,000 x 32 and 40,000 x 32
    PYTHONPATH=src python benchmarks/scale.py --quick --laws mixture hard --contenders exact faiss-hnsw
    PYTHONPATH=src python benchmarks/scale.py --from-log a.log b.log [--out table.inc]   # the tables of
        # earlier runs (their stdout), runs nothing; a later row of a law, size and contender replaces an earlier
        # one; [--saved-from c.log]: the saved-model rows of that log only; [--laws hard]: that law's rows only
    PYTHONPATH=src python benchmarks/scale.py --tune build [--n 100000] [--d 128]
    PYTHONPATH=src python benchmarks/scale.py --tune crossover
    PYTHONPATH=src python benchmarks/scale.py --tune graph [--n 100000] [--d 128]

Data: the laws of ``--laws`` (``--law``; default ``mixture``; several: each law a section of the output, a
heading that states the law and a table of its own whose rows name it in a first column ``law``):

- ``mixture`` (issue 22): the label-mixture law of ``benchmarks/labels.py`` with 200 labels and 3 a row: every
  label is a prototype point of N(0, I_d); a row draws 3 distinct labels from a Zipf law (P(rank r) ~ 1 / r,
  label ids a random permutation of the ranks) and is the mean of their prototypes plus N(0, 0.5^2 I_d) noise
  (:func:`synthetic`).  No cluster structure of low dimension (the law ``auto`` was first tuned on);
- ``clusters`` (issue 29): ``clustered`` of ``benchmarks/tail.py`` (imported, not copied) with its setting
  ``tail.LAWS["clusters"]``: 1,000 clusters in a latent space of 16 dimensions mapped to d, moderately tight;
  labels owned by clusters (500 labels);
- ``hard`` (issue 29): the same generator with ``tail.LAWS["hard"]``: 5,000 small, tight, well-separated clusters
  of skewed sizes (2,500 labels), the setting of those tried that is hardest for HNSW's greedy descent (whole
  queries answered from the wrong cluster: the ``< 0.5`` columns).  Some of its labels have no training row at a
  few 10^4 rows (the model warns; exact and the approximate contenders see the same labels).

The n training rows and the ``--queries`` test rows of a law are drawn together from ``--seed`` (the last rows
are the queries: the same law, other draws than the training rows), so every contender sees the same numbers;
the labels of every law are CSR 0/1 (:func:`dataset`).  A run of the label mixture alone prints what it printed
before the laws (the same seeds, the same numbers, the same table), and a row of a log without a law is a row
of the label mixture.  The ``--tune`` modes measure the label mixture only.  k = 10; the model is ``MLkNN(10)``.

Per law, size and contender, in a fresh subprocess (its peak memory is its own):

- ``build``: the index build (``_build_index``: the library's build and, for the approximate
  backends, the recall calibration on 1,000 sampled rows);
- ``fit``: the rest of ``MLkNN.fit``: the leave-one-out search of every training row and the
  label tables;
- ``predict``: ``predict`` of the ``--queries`` rows; ``end to end`` is the sum of the three,
  ``x exact`` its ratio to exact's (above 1: faster than exact); ``CPU s`` the process's CPU
  seconds over the same three steps (every thread; a Dask contender's workers not counted) and
  its ratio: on a machine shared with other jobs, wall seconds depend on what else runs, CPU
  seconds much less;
- ``recall@10``: the tie-aware recall (a neighbour at the distance of the k-th exact one counts)
  of ``kneighbors`` of ``--recall-queries`` sampled test rows against their exact neighbours,
  and ``< 0.5``: the share of those rows whose own recall@10 is below one half (a mean of 0.96
  can be a few queries with every neighbour wrong);
- ``P@1``, ``P@5`` (``predict_top_k``) and ``micro-F1`` (``predict``) of the model on those same
  rows; ``peak``: peak resident memory beyond the data (Linux ``VmHWM``, reset before the run),
  and in the log ``rss``: the process's peak over the timed steps, the rows included;
- with ``--loo-sample N`` (an approximate contender): ``loo_recall`` and ``loo_low_recall``, the
  tie-aware recall@10 of the fit's own leave-one-out lists of N seeded training rows against
  the exact search's, and the share of them below one half (what the fit counted, where a
  whole exact fit is out of reach);
- ``recall_`` and ``low_recall_share_``: the model's own estimates (its calibration sample of
  leave-one-out rows), ``backend_`` what it used.  Logs written before the shares were
  measured print ``-`` for them.

Exact above ``--exact-sample-above`` rows: its leave-one-out search is timed on a seeded sample
of ``--exact-sample`` rows against the full index and extrapolated linearly in the number of
rows (marked in the table); its quality columns (and a measured whole fit, reported beside the
extrapolation) come from the whole fit when ``--exact-quality whole`` (default).  At
``--saved-at`` rows the fastest approximate model is saved with and without its index
(``mlneighbors.save(..., include_index=...)``) and a fresh process loads it and predicts the
queries, timed.

``--quality-rows N`` measures quality only, where exact's whole fit is too long to run (about
2.4 hours at 10^6 x 128 here): exact and each contender are fitted with their count tables (and
prior) taken from the leave-one-out neighbours of the same seeded sample of N training rows,
each searched among all the training rows, and their P@1, P@5 and micro-F1 compared on the
``--recall-queries`` test rows (the neighbours of the test rows are searched whole).  The
sample's leave-one-out recall@10 against exact is reported too, with the share of its rows
below one half.  Where the whole exact fit was
run, this measured the same quality (see the neighbour-search page).

A contender ``dask-NAME`` is ``backend="dask"`` with ``inner="NAME"`` (shards of that index,
one per worker thread, each calibrated on its rows) on a ``LocalCluster`` of ``--workers``
processes of one thread, started before the clock.

``--tune build`` chooses the build parameters: for every backend a grid of (M,
ef_construction) or nlist, each built, calibrated to recall 0.95 and run through a whole
leave-one-out search, timed.  ``--tune crossover`` measures the exact leave-one-out search and
the approximate fit (the backend "auto" picks) at several n and d and fits the cost models of
``mlneighbors/neighbors/_auto.py``.  ``--tune graph`` measures whether the graph built for an
index already gives the leave-one-out neighbours (hnswlib's level-0 links, one and two hops;
pynndescent's k-NN graph) against searching every row.

Caveats: a shared 2-core machine; absolute seconds are noisy, ratios of one run compare.  Each
subprocess runs with ``OMP_WAIT_POLICY=passive`` (spinning OpenMP threads would take the cores
of the next step) and under a memory watchdog (``--max-rss-gb``).
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

HERE = Path(__file__).resolve().parent
# benchmarks/dask.py would shadow the dask package: this folder leaves sys.path
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]


def _labels_benchmark() -> Any:
    """benchmarks/labels.py, for its memory measurement (imported by path)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("labels_benchmark", HERE / "labels.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_labels = _labels_benchmark()
_tail = None


def _tail_benchmark() -> Any:
    """benchmarks/tail.py, for its clustered laws (imported by path when a law asks for it: tail.py imports this
    script for the label-mixture law, so neither imports the other at its top)."""
    global _tail
    if _tail is None:
        import importlib.util

        spec = importlib.util.spec_from_file_location("tail_benchmark", HERE / "tail.py")
        _tail = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(_tail)
    return _tail
Peak, watchdog = _labels.Peak, _labels.watchdog  # the same memory measurement as the labels benchmark

K = 10
N_LABELS = 200
LABELS_PER_ROW = 3
NOISE = 0.5
BLOCK = 100_000
FULL = ["100000x128", "300000x128", "1000000x128", "300000x384"]
QUICK = ["20000x32", "40000x32"]
CONTENDERS = ["exact", "auto", "hnswlib", "faiss-hnsw", "faiss-ivf"]
LAWS = ["mixture", "clusters", "hard"]  # "clusters" and "hard": the settings of tail.LAWS
MB = 2**20


# -- data ---------------------------------------------------------------------------------


def synthetic(n_rows: int, d: int, seed: int, dtype: Any = np.float64) -> tuple[np.ndarray, sp.csr_matrix]:
    """Rows that are noisy means of their labels' prototypes (200 labels, 3 a row, Zipf).  ``dtype``
    float32: the same numbers as float64 rows rounded to float32 (each block is summed in float64
    and rounded as it is stored), without a float64 copy of the rows (10 GB at 10^7 x 128)."""
    rng = np.random.default_rng([seed, N_LABELS, d])
    prototypes = rng.standard_normal((N_LABELS, d), dtype=np.float32)
    cdf = np.cumsum(1.0 / np.arange(1, N_LABELS + 1))
    cdf /= cdf[-1]
    ids = rng.permutation(N_LABELS)
    X = np.empty((n_rows, d), dtype=dtype)
    parts = []
    draws = 12  # enough that nearly every row finds 3 distinct labels among them
    earlier = np.tril(np.ones((draws, draws), dtype=bool), -1)
    for a in range(0, n_rows, BLOCK):
        b = min(a + BLOCK, n_rows)
        rank = np.minimum(np.searchsorted(cdf, rng.random((b - a, draws)), side="right"), N_LABELS - 1)
        cand = ids[rank]
        dup = ((cand[:, :, None] == cand[:, None, :]) & earlier).any(axis=2)
        keep = ~dup & (np.cumsum(~dup, axis=1) <= LABELS_PER_ROW)
        counts = keep.sum(axis=1)
        indptr = np.concatenate([[0], np.cumsum(counts)])
        Yb = sp.csr_matrix((np.ones(indptr[-1], dtype=np.int8), cand[keep], indptr), shape=(b - a, N_LABELS))
        Yb.sort_indices()
        mean = sp.csr_matrix((np.repeat(1.0 / counts, counts).astype(np.float32), Yb.indices, Yb.indptr),
                             shape=Yb.shape)
        X[a:b] = mean @ prototypes
        X[a:b] += NOISE * rng.standard_normal((b - a, d))
        parts.append(Yb)
    return X, sp.vstack(parts, format="csr")


def law_params(law: str) -> dict | None:
    """The parameters of ``tail.clustered`` for a clustered law (``tail.LAWS``); None for the label mixture."""
    if law == "mixture":
        return None
    return dict(_tail_benchmark().LAWS[law])


def clustered(n_rows: int, d: int, seed: int, law: str) -> tuple[np.ndarray, sp.csr_matrix]:
    """The rows of a clustered law of ``benchmarks/tail.py`` and their labels as :func:`synthetic` gives them
    (CSR, int8 0/1, sorted indices; the labels a cluster owns, a label column per label of the law whether or
    not a row carries it)."""
    X, Y, _ = _tail_benchmark().clustered(n_rows, d, seed, **law_params(law))
    Y = sp.csr_matrix(Y != 0, dtype=np.int8)
    Y.sort_indices()
    return X, Y


def dataset(n: int, d: int, m: int, seed: int, law: str = "mixture", dtype: str = "float64"
            ) -> tuple[np.ndarray, sp.csr_matrix, np.ndarray, sp.csr_matrix]:
    """The n training rows and the m test queries of a law with their labels, X, Y, Q, YQ: drawn together from
    ``seed`` (the queries are the last m rows: the same law, other draws than the training rows), in ``dtype``."""
    if law == "mixture":
        X, Y = synthetic(n + m, d, seed, np.dtype(dtype))
    else:
        X, Y = clustered(n + m, d, seed, law)
        X = X.astype(dtype, copy=False)
    return X[:n], Y[:n], X[n:], Y[n:]


def parse_size(text: str) -> tuple[int, int]:
    n, d = text.lower().split("x")
    return int(float(n)), int(d)


# -- measurements -------------------------------------------------------------------------


def tie_aware(dist: np.ndarray, exact_dist: np.ndarray) -> tuple[float, float]:
    """The mean tie-aware recall of the rows, and the share of rows whose recall is below one half."""
    from mlneighbors.neighbors._recall import low_recall_share, tie_aware_recall, tie_aware_recalls

    return tie_aware_recall(dist, exact_dist), low_recall_share(tie_aware_recalls(dist, exact_dist))


def quality(model: Any, Q: np.ndarray, YQ: sp.csr_matrix) -> dict:
    from sklearn.metrics import f1_score

    from mlneighbors.metrics import precision_at_k

    _, top = model.predict_top_k(Q, 5)
    pred = model.predict(Q)
    truth = YQ.toarray()
    return {
        "p1": precision_at_k(truth, top, 1),
        "p5": precision_at_k(truth, top, 5),
        "micro_f1": float(f1_score(truth, pred, average="micro", zero_division=0)),
    }


def backend_params(name: str) -> tuple[str, dict | None]:
    """A contender's backend and its parameters: ``NAME`` or ``NAME:key=value,...`` (:func:`parse_config`)."""
    backend, params = parse_config(name)
    return backend, params or None


class TimedBuild:
    """Times ``_build_index`` inside ``fit`` (the build, calibration included)."""

    def __init__(self, model: Any) -> None:
        self.seconds = 0.0
        self.cpu = 0.0
        inner = model._build_index

        def timed(X: Any, Y: Any) -> Any:
            t, c = time.perf_counter(), time.process_time()
            out = inner(X, Y)
            self.seconds += time.perf_counter() - t
            self.cpu += time.process_time() - c
            return out

        model._build_index = timed


def log_progress(every: float = 60.0) -> None:
    """The library's progress events on standard error, a line per task at most every ``every``
    seconds and when it ends, with the clock: where a run of hours is, and a record of its steps
    if it is stopped."""
    import mlneighbors

    opened: dict[int, float] = {}
    last: dict[int, float] = {}
    start = time.perf_counter()

    def listener(event: Any) -> None:
        now = time.perf_counter()
        began = opened.setdefault(event.task_id, now)
        if event.closed:
            del opened[event.task_id]
            last.pop(event.task_id, None)
            if now - began < every / 12:  # the many short searches (calibration, blocks) say nothing
                return
            state = f"done in {now - began:.0f} s"
        elif now - last.get(event.task_id, began) >= every:
            last[event.task_id] = now
            state = f"{event.done:,} of {event.total:,} {event.unit}".rstrip()
        else:
            return
        print(f"progress {time.strftime('%H:%M:%S')} +{now - start:.0f} s: {event.stage}: {state}",
              file=sys.stderr, flush=True)

    mlneighbors.set_config(progress=listener)


def child_contender(spec: dict) -> dict:
    """One contender at one size (in its own process)."""
    from mlneighbors import MLkNN, save
    from mlneighbors.neighbors import ExactIndex, loo_kneighbors

    if spec.get("progress"):
        log_progress()

    n, d, m, seed, name = spec["n"], spec["d"], spec["m"], spec["seed"], spec["contender"]
    # the rows as the model gets them (float32: as a user's embeddings come)
    X, Y, Q, YQ = dataset(n, d, m, seed, spec.get("law", "mixture"), spec.get("dtype", "float64"))
    sample = np.sort(np.random.default_rng([seed, 1]).choice(m, size=min(spec["recall_queries"], m), replace=False))
    out: dict[str, Any] = {"n": n, "d": d, "contender": name}
    cluster = None
    gc.collect()
    if name == "exact" and n > spec["exact_sample_above"]:
        # the leave-one-out search of a seeded sample of rows, extrapolated in the number of rows
        rows = np.sort(np.random.default_rng([seed, 2]).choice(n, size=spec["exact_sample"], replace=False))
        with Peak() as peak:
            t0, c0 = time.perf_counter(), time.process_time()
            index = ExactIndex().build(X)
            t1, c1 = time.perf_counter(), time.process_time()
            loo_kneighbors(index, X, K, rows=rows, validated=True)
            t2, c2 = time.perf_counter(), time.process_time()
        out.update(build=t1 - t0, fit=(t2 - t1) * n / len(rows), extrapolated=True, sampled=len(rows), peak=peak.bytes,
                   build_cpu=c1 - c0, fit_cpu=(c2 - c1) * n / len(rows))
        if spec["exact_quality"] == "whole":
            full = MLkNN(K)
            t3 = time.perf_counter()
            full.fit(X, Y)
            out["fit_whole"] = time.perf_counter() - t3
            model = full
        else:
            model = None
        t4, c4 = time.perf_counter(), time.process_time()
        if model is not None:
            model.predict(Q)
        else:
            index.query(Q, K)
        out["predict"], out["predict_cpu"] = time.perf_counter() - t4, time.process_time() - c4
    else:
        if name.startswith("dask-"):  # shards of the inner index on a local cluster (its start untimed)
            from distributed import Client, LocalCluster

            cluster = LocalCluster(n_workers=spec["workers"], threads_per_worker=1, processes=True,
                                   dashboard_address=None)
            client = Client(cluster)
            model = MLkNN(K, backend="dask", backend_params={"client": client, "inner": name[len("dask-"):]})
        else:
            backend, params = backend_params(name)
            model = MLkNN(K, backend=backend, backend_params=params)
        timer = TimedBuild(model)
        with Peak() as peak:
            t0, c0 = time.perf_counter(), time.process_time()
            model.fit(X, Y)
            t1, c1 = time.perf_counter(), time.process_time()
            model.predict(Q)
            t2, c2 = time.perf_counter(), time.process_time()
        out.update(build=timer.seconds, fit=t1 - t0 - timer.seconds, predict=t2 - t1, extrapolated=False,
                   peak=peak.bytes, build_cpu=timer.cpu, fit_cpu=c1 - c0 - timer.cpu, predict_cpu=c2 - c1)
        del model._build_index  # the timing wrapper: not part of the model
    out["end_to_end"] = out["build"] + out["fit"] + out["predict"]
    out["rss"] = _labels._status("VmHWM")  # the process's peak since the timed steps began, the rows included
    out["end_to_end_cpu"] = out["build_cpu"] + out["fit_cpu"] + out["predict_cpu"]
    if model is not None:
        out["backend_"] = model.backend_
        out["recall_"] = float(model.recall_)
        out["low_recall_share_"] = float(model.low_recall_share_)
        out.update(quality(model, Q[sample], YQ[sample]))
        exact_index = ExactIndex().build(X)
        exact_dist, _ = exact_index.query(Q[sample], K)
        dist, _ = model.kneighbors(Q[sample], K)
        out["recall"], out["low_recall"] = tie_aware(dist, exact_dist)
        if spec.get("loo_sample") and name != "exact":
            # the fit's own leave-one-out lists of a seeded sample of training rows against the exact
            # search's (where a whole exact fit is out of reach: the quality of what the fit counted)
            rows = np.sort(np.random.default_rng([seed, 4]).choice(n, size=min(spec["loo_sample"], n), replace=False))
            exact_loo, _ = loo_kneighbors(exact_index, X, K, rows=rows, validated=True)
            out["loo_recall"], out["loo_low_recall"] = tie_aware(model._loo_dist[rows, :K], exact_loo)
            out["loo_sampled"] = len(rows)
        del exact_index
        if cluster is not None:
            out["workers"] = spec["workers"]
        if spec.get("save_dir") and name != "exact" and cluster is None:
            for include in (True, False):
                path = os.path.join(spec["save_dir"], f"{name}-{'with' if include else 'without'}.skops")
                t = time.perf_counter()
                save(model, path, include_index=include)
                out[f"save_{'with' if include else 'without'}"] = time.perf_counter() - t
                out[f"path_{'with' if include else 'without'}"] = path
                out[f"bytes_{'with' if include else 'without'}"] = os.path.getsize(path)
    return out


def child_load(spec: dict) -> dict:
    """Load a saved model and predict the queries, timed (in a fresh process)."""
    import mlneighbors
    from mlneighbors.neighbors import _approximate

    n, d, m, seed = spec["n"], spec["d"], spec["m"], spec["seed"]
    _, _, Q, _ = dataset(n, d, m, seed, spec.get("law", "mixture"))
    builds = []
    original = _approximate.ApproximateIndex.build_rows

    def counted(self: Any, X: Any) -> None:
        builds.append(type(self).__name__)
        original(self, X)

    _approximate.ApproximateIndex.build_rows = counted
    gc.collect()
    t0, c0 = time.perf_counter(), time.process_time()
    model = mlneighbors.load(spec["path"])
    t1, c1 = time.perf_counter(), time.process_time()
    model.predict(Q)
    t2, c2 = time.perf_counter(), time.process_time()
    return {"load": t1 - t0, "predict": t2 - t1, "builds": len(builds), "load_cpu": c1 - c0, "predict_cpu": c2 - c1}


def counts_from_rows(backend: str, rows: np.ndarray) -> Any:
    """``MLkNN(10, backend=backend)`` whose count tables (and prior) come from the leave-one-out
    neighbours of the training ``rows`` only, each searched among all the training rows (a
    whole exact fit at 10^6 rows takes hours here)."""
    from mlneighbors import MLkNN
    from mlneighbors._counts import count_matrix
    from mlneighbors.neighbors import loo_kneighbors

    class CountsFromRows(MLkNN):
        def _loo_counts(self) -> tuple[np.ndarray, Any]:
            self.loo_dist_, nb = loo_kneighbors(self._get_index(), self._fit_X, self.n_neighbors_, rows=rows,
                                                validated=True)
            return nb, count_matrix(nb, self._Y)

        def _fit_labels(self, X: Any, Y: Any) -> None:
            super()._fit_labels(X, Y[rows])

    name, params = backend_params(backend)
    return CountsFromRows(K, backend=name, backend_params=params)


def child_sampled(spec: dict) -> dict:
    """Quality of exact and of each contender with the count tables of the same sampled rows."""
    n, d, m, seed = spec["n"], spec["d"], spec["m"], spec["seed"]
    X, Y, Q, YQ = dataset(n, d, m, seed, spec.get("law", "mixture"))
    sample = np.sort(np.random.default_rng([seed, 1]).choice(m, size=min(spec["recall_queries"], m), replace=False))
    rows = np.sort(np.random.default_rng([seed, 3]).choice(n, size=spec["quality_rows"], replace=False))
    out: dict[str, Any] = {"n": n, "d": d, "rows": len(rows), "quality": {}}
    exact_dist = None
    for name in ["exact", *spec["contenders"]]:
        model = counts_from_rows(name, rows)
        t = time.perf_counter()
        model.fit(X, Y)
        r = {"fit": time.perf_counter() - t, "backend_": model.backend_, **quality(model, Q[sample], YQ[sample])}
        if exact_dist is None:
            exact_dist = model.loo_dist_
        else:
            r["loo_recall"], r["loo_low_recall"] = tie_aware(model.loo_dist_, exact_dist)
        out["quality"][name] = r
        print(f"  {name}: {json.dumps(r)}", file=sys.stderr, flush=True)
        del model
        gc.collect()
    return out


def sampled_table(results: list[dict], law: str | None = None) -> str:
    """The table of ``--quality-rows``; with ``law``, a first column names it."""
    first = f"| {law} " if law else ""
    lines = [("| law " if law else "")
             + "| n x d | rows counted | contender | backend_ | leave-one-out recall@10 | < 0.5 | P@1 | P@5 | micro-F1 "
             "| P@1 - exact | P@5 - exact | micro-F1 - exact |",
             ("|---" if law else "") + "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        ex = r["quality"]["exact"]
        for name, q in r["quality"].items():
            diff = [fmt(q[key] - ex[key], 4) for key in ("p1", "p5", "micro_f1")]
            low = q.get("loo_low_recall", 0.0 if name == "exact" else None)  # exact is the reference
            lines.append(f"{first}| {r['n']:,} x {r['d']} | {r['rows']:,} | {name} | {q['backend_']} "
                         f"| {fmt(q.get('loo_recall', 1.0))} | {share(low)} "
                         f"| {fmt(q['p1'], 4)} | {fmt(q['p5'], 4)} "
                         f"| {fmt(q['micro_f1'], 4)} | {' | '.join(diff)} |")
    return "\n".join(lines)


# -- tuning -------------------------------------------------------------------------------


def parse_config(text: str) -> tuple[str, dict]:
    """``hnswlib:M=16,ef_construction=40`` -> ("hnswlib", {"M": 16, "ef_construction": 40})."""
    name, _, rest = text.partition(":")
    return name, {k: int(v) for k, v in (item.split("=") for item in rest.split(",") if item)}


def tune_build(n: int, d: int, seed: int, configs: list[str] | None = None) -> list[dict]:
    from mlneighbors.neighbors import get_index, loo_kneighbors

    X, _, _, _ = dataset(n, d, 0, seed)
    grid = (
        [("hnswlib", {"M": M, "ef_construction": efc}) for M, efc in ((16, 40), (16, 100), (24, 100), (32, 100),
                                                                      (48, 100))]
        + [("faiss-hnsw", {"M": M, "ef_construction": efc}) for M, efc in ((32, 40), (48, 40), (64, 40), (48, 80))]
        + [("faiss-ivf", {"nlist": int(round(f * math.sqrt(n)))}) for f in (1, 2, 4)]
    )
    if configs:
        grid = [parse_config(c) for c in configs]
    grid = [(name, params) for name, params in grid if name != "exact"]
    rows = []
    if configs and "exact" in configs:
        gc.collect()
        t0 = time.perf_counter()
        loo_kneighbors(get_index("exact").build(X), X, K, validated=True)
        rows.append({"backend": "exact", "breadth": "-", "loo_breadth": "-", "query_recall_": 1.0, "recall_": 1.0,
                     "build": 0.0, "loo": time.perf_counter() - t0, "total": time.perf_counter() - t0})
        print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    for name, params in grid:
        gc.collect()
        index = get_index(name, recall=0.95, **params)
        t0 = time.perf_counter()
        index.build(X)
        t1 = time.perf_counter()
        loo_kneighbors(index, X, K, validated=True)
        t2 = time.perf_counter()
        row = {"backend": name, **params, "breadth": getattr(index, index.breadth + "_"),
               "loo_breadth": getattr(index, "loo_" + index.breadth + "_"), "query_recall_": index.query_recall_,
               "recall_": index.recall_, "build": t1 - t0, "loo": t2 - t1, "total": t2 - t0}
        print(json.dumps(row), file=sys.stderr, flush=True)
        rows.append(row)
        del index
    return rows


def tune_crossover(seed: int, backends: list[str] | None = None) -> list[dict]:
    """Whole leave-one-out fits of the label mixture at 3 d x 4 n: the exact search (to 10^5 x 128)
    and ``backends`` (None: exact and every backend ``auto`` may pick)."""
    from mlneighbors.neighbors import get_index, loo_kneighbors
    from mlneighbors.neighbors._auto import APPROXIMATE

    rows = []
    names = backends or ["exact"] + [name for name, _ in APPROXIMATE]
    for d in (32, 128, 384):
        for n in (20_000, 50_000, 100_000, 300_000):
            X, _, _, _ = dataset(n, d, 0, seed)
            for name in names:
                if name == "exact" and n * n * d > 100_000**2 * 128:
                    continue  # beyond this the exact search takes many minutes: its model extrapolates
                gc.collect()
                t0 = time.perf_counter()
                index = get_index(name).build(X)
                loo_kneighbors(index, X, K, validated=True)
                seconds = time.perf_counter() - t0
                row = {"n": n, "d": d, "backend": name, "seconds": seconds}
                print(json.dumps(row), file=sys.stderr, flush=True)
                rows.append(row)
                del index
            del X
    return rows


def fit_crossover(rows: list[dict], threads: int) -> dict:
    """Least-squares constants of the cost models (ns per core) from the crossover rows, each
    row weighted by its own time (relative errors)."""
    from mlneighbors.neighbors._auto import APPROXIMATE

    ex = [r for r in rows if r["backend"] == "exact"]
    A = np.array([[r["n"] ** 2 * (r["d"] + 1), r["n"] ** 2] for r in ex], dtype=float) / threads * 1e-9
    t = np.array([r["seconds"] for r in ex])
    mac, entry = np.linalg.lstsq(A / t[:, None], np.ones(len(t)), rcond=None)[0]
    out = {"exact": (mac, entry)}
    for name, _ in APPROXIMATE:
        ap = [r for r in rows if r["backend"] == name]
        if not ap:
            continue
        u = np.array([r["seconds"] for r in ap])
        best = None
        for power in np.arange(1.0, 1.605, 0.01):  # t = n^power (a d + b) / threads
            B = np.array([[r["n"] ** power * r["d"], r["n"] ** power] for r in ap], dtype=float) / threads * 1e-9
            coef, *_ = np.linalg.lstsq(B / u[:, None], np.ones(len(u)), rcond=None)
            err = float((((B @ coef) - u) / u) ** 2 @ np.ones(len(u)))
            if best is None or err < best[0]:
                best = (err, float(power), float(coef[0]), float(coef[1]))
        out[name] = best[1:]
    return out


def predicted(rows: list[dict], consts: dict) -> str:
    """Measured against the fitted models, and where the rule switches for every d."""
    from mlneighbors.neighbors import _auto

    threads = len(os.sched_getaffinity(0))
    _auto._NS_EXACT_MAC, _auto._NS_EXACT_ENTRY = consts["exact"]
    for name, value in consts.items():
        if name != "exact":
            _auto._NS_APPROX[name] = value
    names = list(dict.fromkeys(r["backend"] for r in rows))
    text = ("| d | n | " + " | ".join(f"{name} s (model)" for name in names) + " | rule |\n"
            + "|---" * (len(names) + 3) + "|\n")
    cells: dict[tuple[int, int], dict[str, str]] = {}
    for r in rows:
        model = (_auto.exact_seconds(r["n"], r["n"], r["d"], n_threads=threads) if r["backend"] == "exact"
                 else _auto.approximate_seconds(r["n"], r["d"], backend=r["backend"], n_threads=threads))
        cells.setdefault((r["d"], r["n"]), {})[r["backend"]] = f"{r['seconds']:.1f} ({model:.1f})"
    for (d, n), got in cells.items():
        if "exact" not in got:
            got["exact"] = f"- ({_auto.exact_seconds(n, n, d, n_threads=threads):.0f})"
        rule = _auto.choose_backend(n, d, n_threads=threads).backend
        text += f"| {d} | {n:,} | " + " | ".join(got.get(name, "-") for name in names) + f" | {rule} |\n"
    text += "\ncrossover (the smallest n the rule sends to an approximate index): "
    parts = [f"d = {d}: {_auto.crossover(d, n_threads=threads):,}" for d in (32, 64, 128, 256, 384, 768)]
    return text + "; ".join(parts) + "\n"


def tune_graph(n: int, d: int, seed: int) -> list[dict]:
    """Leave-one-out neighbours from the graph an index built, against searching every row."""
    from mlneighbors.neighbors import get_index, loo_kneighbors
    from mlneighbors.neighbors._recall import exact_loo, sample_rows, tie_aware_recall

    X, _, _, _ = dataset(n, d, 0, seed)
    rows_s = sample_rows(n, 1000, 0)
    exact_dist, _ = exact_loo(X, "euclidean", rows_s, K)
    out = []
    index = get_index("hnswlib", recall=0.95).build(X)
    t0 = time.perf_counter()
    dist, _ = loo_kneighbors(index, X, K, validated=True)
    out.append({"index": "hnswlib", "how": f"search every row (ef={index.loo_ef_})",
                "seconds": time.perf_counter() - t0, "recall": tie_aware_recall(dist[rows_s], exact_dist),
                "candidates": K + 1})
    (state,) = index._index.__getstate__()
    size = state["size_data_per_element"]
    width = state["max_M0"]
    raw = state["data_level0"].view(np.uint8).reshape(-1, size)
    counts = np.ascontiguousarray(raw[:, :4]).view(np.uint32).ravel() & 0xFFFF
    links = np.ascontiguousarray(raw[:, 4 : 4 + 4 * width]).view(np.uint32).astype(np.intp)
    labels = np.ascontiguousarray(raw[:, state["label_offset"] : state["label_offset"] + 8]).view(np.uint64).ravel()
    rows_of = index._order[labels.astype(np.intp)]  # hnswlib's internal id -> row (its labels are library ids)
    internal = np.empty(n, dtype=np.intp)
    internal[rows_of] = np.arange(n)
    ext = np.where(np.arange(width)[None, :] < counts[:, None], rows_of[links], -1)
    one = ext[internal]  # row -> its level-0 links, as row numbers (-1: unused slot)
    del ext, links
    queried = one[rows_s]
    for hops in (1, 2):
        t0 = time.perf_counter()
        cand = queried
        if hops == 2:  # the links of the links (-1 where a first hop is an unused slot)
            second = np.where((queried >= 0)[:, :, None], one[np.maximum(queried, 0)], -1)
            cand = np.concatenate([queried, second.reshape(len(rows_s), -1)], axis=1)
        cand = np.where(cand == rows_s[:, None], -1, cand)  # leave-one-out: never the row itself

        def nothing(Qp: Any, short: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
            return np.full((len(short), k), np.inf), np.zeros((len(short), k), dtype=np.intp)

        dist, _ = index._rank(index._ref.X[rows_s], cand, K, nothing)
        out.append({"index": "hnswlib", "how": f"level-0 links, {hops} hop{'s' if hops > 1 else ''} "
                    f"(time extrapolated from {len(rows_s)} rows)",
                    "seconds": (time.perf_counter() - t0) * n / len(rows_s),
                    "recall": tie_aware_recall(dist, exact_dist), "candidates": float((cand >= 0).sum(axis=1).mean())})
    del index, state, raw
    try:
        import pynndescent  # noqa: F401
    except ImportError:
        return out
    for use in (True, False):
        index = get_index("pynndescent", loo_graph=use).build(X)
        t0 = time.perf_counter()
        dist, _ = loo_kneighbors(index, X, K, validated=True)
        out.append({"index": "pynndescent", "how": "its k-NN graph (30 a row)" if use else "search every row",
                    "seconds": time.perf_counter() - t0, "recall": tie_aware_recall(dist[rows_s], exact_dist),
                    "candidates": 30 if use else K + 1})
    return out


# -- driver -------------------------------------------------------------------------------


def run_child(spec: dict, log: Any) -> dict:
    env = dict(os.environ)
    env.setdefault("OMP_WAIT_POLICY", "passive")
    env.setdefault("MALLOC_MMAP_THRESHOLD_", "131072")
    # the child's standard error goes to the log as it comes (``--progress`` of a run of hours);
    # its standard output, one JSON line at the end, is read after it
    with subprocess.Popen([sys.executable, __file__, "--child", json.dumps(spec)], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, env=env) as proc:
        last = "?"
        for line in proc.stderr:
            log.write(line)
            log.flush()
            last = line.strip() or last
        out = proc.stdout.read()
    if proc.returncode != 0:
        return {"error": f"exit {proc.returncode}: {last}"}
    return json.loads(out.strip().splitlines()[-1])


def fmt(x: Any, digits: int = 3) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    if isinstance(x, float):
        return f"{x:.{digits}f}" if abs(x) < 100 else f"{x:.0f}"
    return str(x)


def share(x: Any) -> str:
    """A share of queries as a percentage ("-" where it was not measured: a log of an earlier run)."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    return f"{100 * x:.2f}%" if 0 < 100 * x < 0.1 else f"{100 * x:.1f}%"


def main_table(results: list[dict], args: argparse.Namespace, law: str | None = None) -> str:
    """The table of the timed runs; with ``law``, a first column names it."""
    first = f"| {law} " if law else ""
    lines = [
        ("| law " if law else "")
        + "| n x d | contender | backend_ | build s | fit s | predict s | end to end s | x exact | CPU s "
        "| x exact (CPU) | recall@10 | < 0.5 | recall_ | low_recall_share_ | P@1 | P@5 | micro-F1 | peak MB |",
        ("|---" if law else "") + "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    by_size: dict[tuple, dict] = {}
    for r in results:
        by_size.setdefault((r["n"], r["d"]), {})[r["contender"]] = r
    for (n, d), rows in by_size.items():
        exact = rows.get("exact", {})
        for name, r in rows.items():
            if "error" in r:
                lines.append(f"{first}| {n:,} x {d} | {name} | failed: {r['error']} |" + " |" * 15)
                continue
            ratio = exact.get("end_to_end", float("nan")) / r["end_to_end"] if exact.get("end_to_end") else None
            ratio_cpu = (exact["end_to_end_cpu"] / r["end_to_end_cpu"]
                         if exact.get("end_to_end_cpu") and r.get("end_to_end_cpu") else None)
            star = " *" if r.get("extrapolated") else ""
            lines.append(
                f"{first}| {n:,} x {d} | {name} | {r.get('backend_', '-')} | {fmt(r['build'], 1)} "
                f"| {fmt(r['fit'], 1)}{star} | {fmt(r['predict'], 1)} | {fmt(r['end_to_end'], 1)}{star} "
                f"| {fmt(ratio, 2)} "
                f"| {fmt(r.get('end_to_end_cpu'), 1)}{star} | {fmt(ratio_cpu, 2)} "
                f"| {fmt(r.get('recall'))} | {share(r.get('low_recall'))} | {fmt(r.get('recall_'))} "
                f"| {share(r.get('low_recall_share_'))} | {fmt(r.get('p1'), 4)} | {fmt(r.get('p5'), 4)} "
                f"| {fmt(r.get('micro_f1'), 4)} "
                f"| {fmt((r.get('peak') or 0) / MB, 0)} |"
            )
    notes = []
    for r in results:
        if r.get("extrapolated"):
            if "fit_whole" in r:
                whole = f"; the whole fit, run for the quality columns, took {r['fit_whole']:.0f} s"
            else:
                whole = ("; its predict is the exact search of the queries, and its quality columns were not "
                         "measured (``--exact-quality skip``: the whole fit would take the extrapolated time)")
            of_law = f" (law ``{law}``)" if law else ""
            sampled = r.get("sampled", args.exact_sample)  # a log of a run before the rows sampled were recorded
            notes.append(f"\\* exact at {r['n']:,} x {r['d']}{of_law}: leave-one-out search timed on {sampled:,} "
                         f"sampled rows against the full index and extrapolated linearly to {r['n']:,} rows{whole}.")
    return "\n".join(lines + [""] + notes)


def saved_table(rows: list[dict]) -> str:
    lines = ["| model | index in the file | file MB | load s | predict s | load + predict s | CPU s | builds |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        cpu = (r.get("load_cpu") or 0) + (r.get("predict_cpu") or 0)
        size = r["bytes"] / MB if r.get("bytes") is not None else None
        lines.append(f"| {r['label']} | {r['include']} | {fmt(size, 0)} | {fmt(r.get('load'), 1)} "
                     f"| {fmt(r.get('predict'), 1)} | {fmt((r.get('load') or 0) + (r.get('predict') or 0), 1)} "
                     f"| {fmt(cpu, 1)} | {r.get('builds', '-')} |")
    return "\n".join(lines)


def to_rst(markdown: str) -> str:
    """The Markdown tables and paragraphs of this script's output as reStructuredText
    (``list-table`` directives), for the documentation's pages."""
    out: list[str] = []
    table: list[list[str]] = []

    def cell(text: str) -> str:
        # a star the Markdown already escaped (compact_table's " \\*") is escaped once, not twice
        text = re.sub(r"\\?\*", r"\\*", text.strip()).replace("|", "/")
        if re.fullmatch(r"[A-Za-z]\w*_", text):  # an attribute (recall_): a literal, not a reference
            return f"``{text}``"
        if text in ("", "-"):
            return "–"
        # a cell must not open a list: "- (85)" (not run, the model's estimate) rendered as a bullet
        # holding "85." (issue 47); a leading dash is the en dash of the cells not run, any other
        # bullet or enumerator is escaped
        if text.startswith("- "):
            return "–" + text[1:]
        if re.match(r"([-+*•‣⁃]|\(?(\d+|#|[A-Za-z]|[IVXLCDMivxlcdm]+)[.)])(\s|$)", text):
            return "\\" + text
        return text

    def flush() -> None:
        if not table:
            return
        out.extend([".. list-table::", "   :header-rows: 1", ""])
        for row in table:
            out.append(f"   * - {row[0]}")
            out.extend(f"     - {c}" for c in row[1:])
        out.append("")
        table.clear()

    for line in markdown.splitlines():
        if line.startswith("|"):
            cells = line.strip().strip("|").split("|")
            if not all(set(c.strip()) <= {"-", ":"} for c in cells):
                table.append([cell(c) for c in cells])
            continue
        flush()
        if line.startswith("<!--"):
            line = ".. " + line[4:].rstrip("-> ")
        out.append(line.replace("\\*", "\\*").replace("^", "\\ :sup:`", 0))
    flush()
    return "\n".join(out) + "\n"


def law_of(row: dict) -> str:
    """The law of a result row (a row of a log written before the laws were: the label mixture)."""
    return row.get("law", "mixture")


def describe_law(law: str, params: dict | None = None) -> str:
    """A law in words (``params``: the clustered law's parameters a run recorded; default: tail.LAWS now)."""
    if law == "mixture":
        return (f"the label mixture of this script ({N_LABELS} labels, {LABELS_PER_ROW} a row (Zipf), a row the mean "
                f"of its labels' prototypes plus noise {NOISE})")
    p = params or law_params(law)
    return ("``clustered`` of benchmarks/tail.py, labels owned by clusters: "
            f"{p['n_clusters']:,} clusters, latent dimension {p['latent_dim']}, spread {p['spread']}, "
            f"noise {p['noise']}, skew {p['skew']}, bend {p['bend']}")


def by_law(results: list[dict], table: Any) -> str:
    """``table(rows, law)`` of every law's rows, each under a heading, its rows labelled by the law; the rows of
    the label mixture alone (its runs and every log written before the laws were) make one table as before."""
    laws = list(dict.fromkeys(law_of(r) for r in results))
    if laws in ([], ["mixture"]):
        return table(results, None)
    sections = []
    for law in laws:
        rows = [r for r in results if law_of(r) == law]
        params = next((r["law_params"] for r in rows if r.get("law_params")), None)
        sections.append(f"Law ``{law}``: {describe_law(law, params)}.\n\n" + table(rows, law))
    return "\n\n".join(sections)


def where(law: str) -> str:
    """A progress line's prefix: the law, but for the label mixture (whose lines read as before the laws)."""
    return "" if law == "mixture" else f"{law} "


def law_record(law: str) -> dict:
    """What a result row records of a clustered law's parameters (the heading of its table, read from a log)."""
    params = law_params(law)
    return {"law_params": params} if params else {}


def tables(results: list[dict], saved: list[dict], args: argparse.Namespace) -> str:
    text = by_law(results, lambda rows, law: main_table(rows, args, law))
    if saved:
        text += "\n\nA saved model, loaded in a fresh process, predicting the queries:\n\n" + saved_table(saved)
        text += "\n\n(build of that model: " + ", ".join(f"{r['label']}: {r['build']:.1f} s" for r in saved[::2]) + ")"
    return text


def compact_table(results: list[dict]) -> str:
    """The quality a user sees, one table of nine columns per law and size: end to end seconds
    and the ratio to exact's (``*``: exact's extrapolated from a sample), the recall@10 of the
    test rows and their share below one half, the share below one half of the model's own
    leave-one-out sample (``recall_``'s), the model's P@1, P@5 and micro-F1, and the peak
    memory beyond the data."""
    exact = {(law_of(r), r["n"], r["d"]): r for r in results if r["contender"] == "exact"}
    text = ""

    def pct(x: Any) -> str:
        return f"{100 * x:.2f} %" if x is not None else "-"

    for key in dict.fromkeys((law_of(r), r["n"], r["d"]) for r in results):
        law, n, d = key
        base = exact.get(key)
        text += (f"\nLaw ``{law}``, {n:,} x {d}:\n\n"
                 "| contender | s (x exact) | recall@10 | below 0.5 | LOO below 0.5 | P@1 | P@5 | micro-F1 "
                 "| peak MB |\n"
                 + "|---" * 9 + "|\n")
        for r in (r for r in results if (law_of(r), r["n"], r["d"]) == key):
            ratio = f" ({base['end_to_end'] / r['end_to_end']:.2f})" if base else ""
            star = " \\*" if r.get("extrapolated") else ""
            name = r["contender"] + (f" ({r['backend_']})" if r["contender"] == "auto" else "")
            loo = 0.0 if r["contender"] == "exact" else r.get("low_recall_share_")
            peak = f"{r['peak'] / MB:.0f}" if r.get("peak") is not None else "-"
            text += (f"| {name} | {r['end_to_end']:.1f}{star}{ratio} | {fmt(r.get('recall'))} "
                     f"| {pct(r.get('low_recall'))} | {pct(loo)} "
                     f"| {fmt(r.get('p1'), 4)} | {fmt(r.get('p5'), 4)} | {fmt(r.get('micro_f1'), 4)} | {peak} |\n")
    return text.lstrip("\n")


def read_logs(paths: list[str]) -> tuple[list[dict], list[dict]]:
    """The contender rows and the saved-model rows that earlier runs printed (their stdout), in
    order; a later row of the same law, size and contender replaces an earlier one (a row without a law:
    the label mixture)."""
    rows: dict[tuple, dict] = {}
    saved: dict[tuple, dict] = {}
    for path in paths:
        for line in Path(path).read_text().splitlines():
            head, brace, tail = line.partition(" {")
            if not brace:
                continue
            r = json.loads("{" + tail)
            if head.strip().startswith("saved "):
                include = head.split()[1]
                if "label" not in r:  # a log written before the saved rows were printed whole
                    at = [x for x in rows.values() if "save_with" in x]
                    best = min(at, key=lambda x: x["end_to_end"])
                    r = {"label": f"{best['contender']} ({best['backend_']}) at {best['n']:,} x {best['d']}",
                         "include": include, "bytes": best.get(f"bytes_{include}"), "build": best["build"], **r}
                saved[(r["label"], include)] = r
            elif "contender" in r:
                rows[(law_of(r), r["n"], r["d"], r["contender"])] = r
    return list(rows.values()), list(saved.values())


def write_out(path: str, text: str) -> None:
    """``path``: Markdown, or reStructuredText when it ends in .rst or .inc."""
    Path(path).write_text(to_rst(text) if path.endswith((".rst", ".inc")) else text)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", nargs="+", help=f"n x d, e.g. 100000x128 (default {' '.join(FULL)})")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--recall-queries", type=int, default=2_000)
    parser.add_argument("--contenders", nargs="+", default=CONTENDERS)
    parser.add_argument("--laws", "--law", nargs="+", choices=LAWS,
                        help="the data laws, each a section of the output (default mixture); with --from-log: "
                        "the rows of these laws only")
    parser.add_argument("--pynndescent-at", type=int, nargs="*", default=[100_000])
    parser.add_argument("--workers", type=int, default=2, help="worker processes of the dask-* contenders")
    parser.add_argument("--exact-sample-above", type=int, default=500_000)
    parser.add_argument("--exact-sample", type=int, default=10_000)
    parser.add_argument("--exact-quality", choices=["whole", "skip"], default="whole")
    parser.add_argument("--saved-at", type=int, default=1_000_000)
    parser.add_argument("--quality-rows", type=int,
                        help="instead of the timings: the quality of exact and of the contenders, every model's "
                        "count tables from the same seeded sample of this many training rows")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--dtype", choices=["float64", "float32"], default="float64",
                        help="the rows' dtype as the models get them (peak memory is measured beyond them)")
    parser.add_argument("--max-rss-gb", type=float, default=12.0)
    parser.add_argument("--progress", action="store_true",
                        help="the library's progress on standard error, a line a minute per step (long runs)")
    parser.add_argument("--loo-sample", type=int, default=0,
                        help="the approximate fit's leave-one-out lists of this many seeded training rows against "
                        "the exact search's (recall@10 and its share below one half: loo_recall, loo_low_recall)")
    parser.add_argument("--out", help="write the Markdown tables here too")
    parser.add_argument("--tune", choices=["build", "crossover", "graph"])
    parser.add_argument("--tune-backends", nargs="+", help="--tune crossover: these backends only (default: exact "
                        "and those auto may pick); the models of the others are fitted only when their rows are given")
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--d", type=int, default=128)
    parser.add_argument("--configs", nargs="+", help="--tune build: these configurations only, e.g. "
                        "hnswlib:M=16,ef_construction=40 faiss-ivf:nlist=600 exact")
    parser.add_argument("--from-log", nargs="+",
                        help="the tables of earlier runs' logs (their stdout), run nothing; with --tune crossover: "
                        "fit the models to the rows of an earlier run's log")
    parser.add_argument("--compact", action="store_true",
                        help="with --from-log: one table of eight columns (time, recall, its tail, the model's "
                        "quality) instead of the full ones")
    parser.add_argument("--saved-from", help="with --from-log: the saved-model rows of this log only (a later "
                        "measurement of loading, beside the contender rows of the other logs)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.child:
        spec = json.loads(args.child)
        watchdog(int(spec["max_rss_gb"] * 2**30))
        kind = spec.get("kind")
        result = (child_load(spec) if kind == "load" else child_sampled(spec) if kind == "sampled"
                  else child_contender(spec))
        print(json.dumps(result))
        return

    threads = len(os.sched_getaffinity(0))
    header = f"{threads} CPUs, mlneighbors from {Path(__file__).resolve().parent.parent}, seed {args.seed}"
    if args.tune and args.laws and args.laws != ["mixture"]:
        parser.error(f"--tune {args.tune} measures the label-mixture law only, not --laws {' '.join(args.laws)}")
    if args.tune:
        watchdog(int(args.max_rss_gb * 2**30))
        print(f"# scale.py --tune {args.tune}: {header}", flush=True)
        if args.tune == "build":
            rows = tune_build(args.n, args.d, args.seed, args.configs)
            text = ("| backend | params | query breadth | query_recall_ | leave-one-out breadth | recall_ | build s "
                    "| leave-one-out s | total s |\n|---|---|---|---|---|---|---|---|---|\n")
            for r in rows:
                params = ", ".join(f"{k}={v}" for k, v in r.items() if k in ("M", "ef_construction", "nlist"))
                text += (f"| {r['backend']} | {params or '-'} | {r['breadth']} | {r['query_recall_']:.3f} "
                         f"| {r['loo_breadth']} "
                         f"| {r['recall_']:.3f} | {r['build']:.1f} | {r['loo']:.1f} | {r['total']:.1f} |\n")
        elif args.tune == "crossover":
            rows = ([json.loads(line) for path in args.from_log for line in Path(path).read_text().splitlines()
                     if line.startswith("{")] if args.from_log else tune_crossover(args.seed, args.tune_backends))
            consts = fit_crossover(rows, threads)
            consts_all = dict(consts)
            text = "| n | d | backend | seconds |\n|---|---|---|---|\n"
            text += "".join(f"| {r['n']:,} | {r['d']} | {r['backend']} | {r['seconds']:.1f} |\n" for r in rows)
            text += ("\nfitted (ns per core): exact {0[0]:.4g} per multiply-add + {0[1]:.4g} per pair; ".format(
                consts.pop("exact")) + "; ".join(f"{k} n^{p:.2f} ({a:.4g} d + {b:.4g})"
                                               for k, (p, a, b) in consts.items()) + "\n")
            model = predicted(rows, consts_all)
            text += "\n" + model
        else:
            rows = tune_graph(args.n, args.d, args.seed)
            text = ("| index | leave-one-out neighbours from | candidates a row | seconds | recall@10 |\n"
                    "|---|---|---|---|---|\n")
            text += "".join(f"| {r['index']} | {r['how']} | {r['candidates']:.0f} | {r['seconds']:.1f} "
                            f"| {r['recall']:.3f} |\n" for r in rows)
        print(text, flush=True)
        if args.out:
            write_out(args.out, f"<!-- {header} -->\n\n" + text)
        return

    if args.from_log:
        results, saved = read_logs(args.from_log)
        if args.saved_from:
            saved = read_logs([args.saved_from])[1]
        if args.laws:
            results = [r for law in args.laws for r in results if law_of(r) == law]
            saved = [r for r in saved if law_of(r) in args.laws]
        text = compact_table(results) if args.compact else tables(results, saved, args)
        print(text)
        if args.out:
            made = " ".join(Path(p).name for p in args.from_log)
            made += f" --saved-from {Path(args.saved_from).name}" if args.saved_from else ""
            write_out(args.out, f"<!-- scale.py --from-log {made} -->\n\n"
                      + text + "\n")
        return
    sizes = [parse_size(s) for s in (args.sizes or (QUICK if args.quick else FULL))]
    if args.quick:
        args.queries, args.recall_queries, args.exact_sample_above, args.exact_sample = 2000, 500, 30_000, 2000
        args.saved_at = sizes[-1][0]
        args.pynndescent_at = []
    laws = args.laws or ["mixture"]
    if laws != ["mixture"]:  # a run of the label mixture alone prints what it printed before the laws
        header += f"; laws {' '.join(laws)}"
    print(f"# scale.py: {header}; sizes {sizes}; {args.queries} queries; k={K}", flush=True)
    if args.quality_rows:
        found = []
        for law in laws:
            for n, d in sizes:
                spec = {"kind": "sampled", "law": law, "n": n, "d": d, "m": args.queries, "seed": args.seed,
                        "recall_queries": args.recall_queries, "quality_rows": args.quality_rows,
                        "contenders": [c for c in args.contenders if c != "exact"], "max_rss_gb": args.max_rss_gb}
                found.append({"law": law, **law_record(law), **run_child(spec, log=sys.stderr)})
                print(f"  {where(law)}{n} x {d}: {json.dumps(found[-1])}", flush=True)
        text = by_law([r for r in found if "error" not in r], sampled_table)
        print("\n" + text)
        if args.out:
            write_out(args.out, f"<!-- scale.py: {header}; quality rows {args.quality_rows} -->\n\n" + text + "\n")
        return
    results: list[dict] = []
    saved: list[dict] = []
    save_dir = tempfile.mkdtemp(prefix="mlneighbors-scale-")
    log = sys.stderr
    for law in laws:
        for n, d in sizes:
            names = list(args.contenders) + (["pynndescent"] if n in args.pynndescent_at else [])
            for name in names:
                spec = {"law": law, "n": n, "d": d, "m": args.queries, "seed": args.seed, "contender": name,
                        "recall_queries": args.recall_queries, "exact_sample_above": args.exact_sample_above,
                        "exact_sample": args.exact_sample, "exact_quality": args.exact_quality,
                        "workers": args.workers, "max_rss_gb": args.max_rss_gb, "dtype": args.dtype,
                        "loo_sample": args.loo_sample, "progress": args.progress,
                        "save_dir": save_dir if n == args.saved_at and name not in ("exact", "pynndescent") else None}
                t = time.perf_counter()
                r = {"n": n, "d": d, "contender": name, "law": law, "dtype": args.dtype, **law_record(law),
                     **run_child(spec, log)}
                print(f"  {where(law)}{n} x {d} {name}: {time.perf_counter() - t:.0f} s "
                      + json.dumps({k: v for k, v in r.items() if not k.startswith("path")}), flush=True)
                results.append(r)
            at = [r for r in results if law_of(r) == law and r["n"] == n and r["d"] == d and "path_with" in r]
            if at:
                best = min(at, key=lambda r: r["end_to_end"])
                label = f"{best['contender']} ({best['backend_']}) at {n:,} x {d}" + (
                    f", law {law}" if law != "mixture" else "")
                for include in ("with", "without"):
                    spec = {"kind": "load", "law": law, "n": n, "d": d, "m": args.queries, "seed": args.seed,
                            "path": best[f"path_{include}"], "max_rss_gb": args.max_rss_gb}
                    r = run_child(spec, log)
                    saved.append({"label": label, "include": include, "law": law,
                                  "bytes": best[f"bytes_{include}"], "build": best["build"], **r})
                    print(f"  saved {include} index: {json.dumps(saved[-1])}", flush=True)
    for path in Path(save_dir).glob("*.skops"):
        path.unlink()
    os.rmdir(save_dir)
    text = tables(results, saved, args)
    print("\n" + text)
    if args.out:
        write_out(args.out, f"<!-- scale.py: {header}; {args.queries} queries -->\n\n" + text + "\n")


if __name__ == "__main__":
    main()
