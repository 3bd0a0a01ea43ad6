"""The command line's estimate of an exact fit against the fit it estimates, at several sizes.

Usage::

    PYTHONPATH=src python benchmarks/exact_estimate.py [--sizes 25000x128 50000x128 100000x128 120000x64]

For each size: seeded dense rows (Gaussian clusters, 10 labels owned by the clusters), the two
estimates of an exact fit the command line has, then ``MLkNN(10).fit`` on the exact backend,
timed (wall clock and this process's CPU seconds), and the ratios fit / estimate:

- "model": ``exact_seconds(n, n, d)``, the cost model of ``auto``'s rule (constants fitted on
  one machine), which screens;
- "measured": ``measured_exact_seconds(X)``, the exact search of a seeded 10,000-row sample
  timed here and scaled by (n / 10,000)^2, which ``mlneighbors fit`` and ``evaluate`` use for
  their "an exact fit ... is estimated at" note when the model says more than 20 s.

Each is meant to be within 2x of the fit on a quiet machine; the load average at the start of
each fit is printed beside it.  Name the CPU beside the table (``lscpu``).
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np


def rows(n: int, d: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Clustered dense rows and labels owned by the clusters."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((200, d)).astype(np.float32) * 2.0
    which = rng.integers(0, 200, n)
    X = centres[which] + rng.standard_normal((n, d), dtype=np.float32)
    Y = (rng.random((200, 10)) < 0.2)[which].astype(np.int8)
    return X, Y


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="+", default=["25000x128", "50000x128", "100000x128", "120000x64"])
    args = parser.parse_args()

    from mlneighbors import MLkNN
    from mlneighbors.neighbors._auto import exact_seconds, measured_exact_seconds
    from mlneighbors.neighbors._protocol import resolve_n_jobs

    print(f"threads: {resolve_n_jobs(None)}")
    print("| n x d | model s | measured s | fit s | CPU s | fit / model | fit / measured | load average |")
    print("|---|---|---|---|---|---|---|---|")
    for size in args.sizes:
        n, d = (int(part) for part in size.split("x"))
        X, Y = rows(n, d)
        model = exact_seconds(n, n, d, X=X)
        measured = measured_exact_seconds(X)
        load = os.getloadavg()[0]
        cpu, wall = time.process_time(), time.perf_counter()
        MLkNN(10).fit(X, Y)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        print(f"| {n:,} x {d} | {model:.1f} | {measured:.1f} | {wall:.1f} | {cpu:.1f} | {wall / model:.2f} "
              f"| {wall / measured:.2f} | {load:.2f} |", flush=True)


if __name__ == "__main__":
    main()
