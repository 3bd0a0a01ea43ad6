"""
Approximate backends: recall against speed
==========================================

The approximate backends trade a few wrong neighbours for speed. Each is asked for the k = 10
neighbours of 5,000 queries among 30,000 generated rows (32 dimensions, 200 Gaussian clusters:
structured data, as embeddings are). Each index is built once, then its search-breadth
parameter is swept (it is read at query time); recall is the share of the exact 10 neighbours
returned, time the search alone, both measured in this build. The build times are in the
legend. ``"pynndescent"`` is left out here only because its first use compiles numba
kernels for minutes; ``benchmarks/neighbors.py`` covers it.
"""

import time

import matplotlib.pyplot as plt
import numpy as np

from mlneighbors.neighbors import get_index

rng = np.random.default_rng(0)
centres = rng.normal(scale=3.0, size=(200, 32))
X = centres[rng.integers(0, 200, 30_000)] + rng.normal(size=(30_000, 32))
Q = centres[rng.integers(0, 200, 5_000)] + rng.normal(size=(5_000, 32))
k = 10


def timed(f, *args):
    start = time.perf_counter()
    out = f(*args)
    return out, time.perf_counter() - start


index, exact_build = timed(get_index("exact").build, X)
(_, exact), exact_seconds = timed(index.query, Q, k)
print(f"exact: build {exact_build:.2f} s, search {exact_seconds:.2f} s")
sweeps = {
    "faiss-ivf": ("nprobe", [1, 2, 4, 8]),
    "faiss-hnsw": ("ef_search", [10, 20, 40, 80]),
    "hnswlib": ("ef", [10, 20, 40, 80]),
}
points, builds = {}, {}
for name, (param, values) in sweeps.items():
    index, builds[name] = timed(get_index(name).build, X)
    points[name] = []
    for value in values:
        (_, idx), seconds = timed(index.set_params(**{param: value}).query, Q, k)
        recall = np.mean([len(np.intersect1d(a, b)) / k for a, b in zip(idx, exact, strict=True)])
        points[name].append((seconds, recall, value))
        print(f"{name:10s} build {builds[name]:.2f} s  {param}={value:<3d} recall {recall:.3f}  search {seconds:.2f} s")

fig, ax = plt.subplots(figsize=(8, 4.5), layout="constrained")
for name, pts in points.items():
    seconds, recall, values = zip(*pts, strict=True)
    ax.plot(seconds, recall, marker="o", label=f"{name} ({sweeps[name][0]}; build {builds[name]:.1f} s)")
    for s, r, v in pts:
        ax.annotate(str(v), (s, r), textcoords="offset points", xytext=(4, -10), fontsize=8)
ax.scatter([exact_seconds], [1.0], marker="*", s=200, color="k", zorder=3,
           label=f"exact (build {exact_build:.2f} s)")
ax.set_xscale("log")
ax.set_xlabel("seconds: search of 5,000 queries (log scale)")
ax.set_ylabel(f"recall of the exact {k} neighbours")
ax.grid(alpha=0.3)
ax.legend(loc="lower right")
ax.set_title("30,000 x 32 clustered rows, k = 10")
plt.show()
