"""
The "dask" backend on a LocalCluster
====================================

The Dask backend splits the training rows into shards, searches each shard exactly on a Dask
worker and merges the per-shard top-k by (distance, row): the exact result, computed where the
data live. Here a :class:`~distributed.LocalCluster` of two single-threaded workers on this
machine stands in for a cluster, through the two ways of naming the backend:
``get_index("dask", client=...)`` and ``backend="dask"`` on a model.
"""

import matplotlib.pyplot as plt
import numpy as np
from dask.distributed import Client, LocalCluster

from mlneighbors import MLkNN
from mlneighbors.neighbors import get_index

rng = np.random.default_rng(0)
X = rng.normal(size=(20_000, 32))
Y = (X[:, :4] + 0.5 * rng.normal(size=(20_000, 4)) > 0.8).astype(int)
Q = rng.normal(size=(1_000, 32))

with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
        Client(cluster) as client:
    index = get_index("dask", client=client).build(X)
    dist, idx = index.query(Q, 10)
    exact_dist, exact_idx = get_index("exact").build(X).query(Q, 10)
    print("same neighbours as 'exact':", np.array_equal(idx, exact_idx))

    on_dask = MLkNN(10, backend="dask", backend_params={"client": client}).fit(X, Y)
    scores = on_dask.predict_proba(Q)
    same = np.array_equal(scores, MLkNN(10).fit(X, Y).predict_proba(Q))
    print("same ML-kNN scores as with 'exact':", same)

fig, ax = plt.subplots(figsize=(7, 3.5), layout="constrained")
ax.hist(dist[:, 0], bins=40, alpha=0.7, label="1st neighbour")
ax.hist(dist[:, -1], bins=40, alpha=0.7, label="10th neighbour")
ax.set_xlabel("distance")
ax.set_title("Neighbour distances found by the 'dask' backend (2 workers)")
ax.legend()
plt.show()
