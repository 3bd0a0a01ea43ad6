"""The cost of progress reporting: one exact search with and without a listener, in one run.

Usage::

    python benchmarks/progress_overhead.py [--rows 20000] [--features 32] [--k 10] [--repeats 7]
                                           [--working-memory 256 16]

For each working memory (a smaller one: more, smaller blocks, so more events), the
leave-one-out search of ``fit`` (``MLkNN``, the exact backend) runs with

- ``none``: nobody listens (the default of the Python API);
- ``callable``: ``config_context(progress=f)`` with a function that only counts the events;
- ``bars``: the command line's tqdm bars (:class:`mlneighbors._progress.TqdmBars`, shown at
  once, drawn into ``os.devnull``),

interleaved, ``--repeats`` times; printed are the best time of each, the ratio to ``none`` and
the number of events of one search.  The neighbours are the same in all three (checked).
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

import mlneighbors
from mlneighbors import MLkNN
from mlneighbors._progress import TqdmBars, listen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--features", type=int, default=32)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--working-memory", type=float, nargs="+", default=[256, 16])
    args = parser.parse_args()

    rng = np.random.default_rng(0)
    X = rng.normal(size=(args.rows, args.features))
    Y = (X[:, :5] > 0).astype(int)
    devnull = open(os.devnull, "w")  # noqa: SIM115  (open for the whole run)
    counted = [0]

    def count(event: object) -> None:
        counted[0] += 1

    def fit(mode: str) -> np.ndarray:
        if mode == "none":
            return MLkNN(args.k).fit(X, Y).kneighbors(return_distance=False)
        if mode == "callable":
            with mlneighbors.config_context(progress=count):
                return MLkNN(args.k).fit(X, Y).kneighbors(return_distance=False)
        with listen(TqdmBars(devnull, delay=0.0)):
            return MLkNN(args.k).fit(X, Y).kneighbors(return_distance=False)

    modes = ["none", "callable", "bars"]
    print(f"exact leave-one-out search of fit: {args.rows} rows x {args.features} features, k={args.k}, "
          f"{os.cpu_count()} CPUs, best of {args.repeats} interleaved")
    print("| working memory (MiB) | events per search | none (s) | callable (s) | bars (s) | callable / none "
          "| bars / none |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for wm in args.working_memory:
        best = dict.fromkeys(modes, np.inf)
        results = {}
        with mlneighbors.config_context(working_memory=wm):
            for r in range(args.repeats):
                for mode in modes[r % 3:] + modes[: r % 3]:  # rotate the order
                    counted[0] = 0
                    t0 = time.perf_counter()
                    results[mode] = fit(mode)
                    best[mode] = min(best[mode], time.perf_counter() - t0)
                    if mode == "callable":
                        events = counted[0]
        assert all(np.array_equal(results["none"], results[m]) for m in modes)
        # fit searches once; kneighbors() reads the stored leave-one-out neighbours
        print(f"| {wm:g} | {events} | {best['none']:.3f} | {best['callable']:.3f} | {best['bars']:.3f} "
              f"| {best['callable'] / best['none']:.3f} | {best['bars'] / best['none']:.3f} |")


if __name__ == "__main__":
    main()
