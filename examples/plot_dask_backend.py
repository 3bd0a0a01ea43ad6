"""
The "dask" backend on a LocalCluster
====================================

The Dask backend splits the training rows into shards, searches each shard exactly on a Dask
worker and merges the per-shard top-k by (distance, row): the exact result, computed where the
data live. Here a :class:`~distributed.LocalCluster` of two single-threaded worker processes on
the machine that builds this page stands in for a cluster. ML-kNN is fitted and used once in
this process (the "exact" backend) and then on the cluster with 1, 2, 4 and 8 shards
(``backend="dask"``, ``backend_params={"client": client, "n_shards": ...}``): do the predictions
change, and what does each shard count cost?
"""

import time

import matplotlib.pyplot as plt
import numpy as np
from dask.distributed import Client, LocalCluster

from mlneighbors import MLkNN
from mlneighbors.neighbors import get_index

rng = np.random.default_rng(0)
X = rng.normal(size=(20_000, 32))
Y = (X[:, :4] + 0.5 * rng.normal(size=(20_000, 4)) > 0.8).astype(int)
Q = rng.normal(size=(2_000, 32))
SHARDS = [1, 2, 4, 8]


def fit_predict(model):
    """Seconds for fit (a leave-one-out search of every training row) + predict_proba(Q)."""
    start = time.perf_counter()
    scores = model.fit(X, Y).predict_proba(Q)
    return scores, time.perf_counter() - start


# %%
# In this process, then on the cluster
# ------------------------------------
# Dask starts its worker processes by importing this file again (Python's "spawn"), so a script
# that starts a cluster does it under ``if __name__ == "__main__":``; run as a gallery page the
# guard is true. The cluster's start is not timed, nor is the first search on it (a plain
# ``get_index("dask", client=client)``, which also pays the workers' imports).

if __name__ == "__main__":
    in_process, in_process_seconds = fit_predict(MLkNN(10))
    in_process_seconds = min(in_process_seconds, fit_predict(MLkNN(10))[1])  # the faster of two runs
    print(f"in-process 'exact': {in_process_seconds:.2f} s")
    seconds, same = {}, {}
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        index = get_index("dask", client=client).build(X)
        same_neighbours = np.array_equal(index.query(Q, 10)[1], get_index("exact").build(X).query(Q, 10)[1])
        print("get_index('dask', client=client): same neighbours as 'exact':", same_neighbours)
        for n_shards in SHARDS:
            params = {"client": client, "n_shards": n_shards}
            scores, seconds[n_shards] = fit_predict(MLkNN(10, backend="dask", backend_params=params))
            same[n_shards] = np.array_equal(scores, in_process)
            print(f"dask, {n_shards} shard(s): {seconds[n_shards]:.2f} s  "
                  f"same ML-kNN scores as in-process: {same[n_shards]}")

# %%
# What each shard count costs
# ---------------------------

if __name__ == "__main__":
    plt.rcParams.update({"font.size": 14})
    fig, ax = plt.subplots(figsize=(7, 5), layout="constrained")
    names = ["in-process"] + [f"{s} shard{'s' if s > 1 else ''}" for s in SHARDS]
    times = [in_process_seconds] + [seconds[s] for s in SHARDS]
    bars = ax.bar(range(len(names)), times, color=["C1"] + ["C0"] * len(SHARDS))
    ax.bar_label(bars, [f"{in_process_seconds:.2f} s"]
                 + [f"{seconds[s]:.2f} s\n{'same' if same[s] else 'DIFFERENT'}" for s in SHARDS], fontsize=13)
    ax.set_xticks(range(len(names)), names)
    ax.set_xlabel("'exact' in this process; backend='dask', 2 workers")
    ax.set_ylabel("seconds, fit + predict")
    ax.set_ylim(0, 1.3 * max(times))
    ax.set_title("ML-kNN (k = 10), 20,000 x 32 rows, 2,000 queries:\ntime, and scores the same as in-process?")
    plt.show()

# %%
# What the figure shows
# ---------------------
# Every shard count gives exactly the scores of the in-process model ("same" on every blue bar,
# checked with ``np.array_equal``): the shards' top-k lists merge into the exact result, ties
# included. The time does not fall with more shards. Every (query block, shard) pair is a task and
# every block's lists are merged, so more shards mean more tasks and merges for the same
# distances, and two single-threaded workers run no more than two tasks at a time: 8 shards cost
# two to four times what 1 or 2 cost (two runs when this page was written: 5.1 s against 1.3 and
# 2.0 s, and 3.9 s against 1.4 and 1.8 s), and no shard count was clearly faster than the
# in-process search (the orange bar; 1.4 s and 0.9 s in those runs), which runs the same exact
# engine on both cores without a scheduler. On one machine the Dask backend buys no speed; it is
# for data that do not fit one process, or rows that already live on a cluster. Use about one
# shard per worker thread (the default, ``n_shards=None``), more only when a shard must be smaller
# to fit a worker's memory. :doc:`/user_guide/dask_scaling` measures 200,000 rows on two workers
# and estimates sixteen.
