"""What the checks of ``mlneighbors.load`` cost against plain ``skops.io.load``.

Usage::

    python benchmarks/model_load.py [--repeats 5] [--sizes 1000x100 20000x100 100000x200]

For each size an ML-kNN fitted on random rows (the training rows are most of the file) is
written with ``mlneighbors.save``; the file is then loaded by

- ``skops``: ``skops.io.load(path, trusted=mlneighbors.TRUSTED_TYPES)`` (what ``load`` did
  before it checked the file);
- ``mlneighbors``: ``mlneighbors.load(path)``: the head and the zip directory read, the
  schema parsed, ``skops.io.get_untrusted_types`` (which reads every member once more), then
  the same ``skops.io.load``,

interleaved, best of ``--repeats`` wall-clock times each, side by side in one run.  The file
is in the page cache after the first load, so the ratio is the cost of parsing, not of the disk.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

import numpy as np
import skops.io as sio

import mlneighbors


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--sizes", nargs="+", default=["1000x100", "20000x100", "100000x200"])
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    print("| rows x features | file (MiB) | skops (s) | mlneighbors (s) | ratio |")
    print("|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for size in args.sizes:
            n, d = (int(v) for v in size.split("x"))
            X = rng.normal(size=(n, d))
            Y = (rng.random((n, 10)) < 0.2).astype(np.int8)
            path = os.path.join(tmp, f"{size}.skops")
            mlneighbors.save(mlneighbors.MLkNN(10).fit(X, Y), path)
            loaders = {
                "skops": lambda: sio.load(path, trusted=mlneighbors.TRUSTED_TYPES),
                "mlneighbors": lambda: mlneighbors.load(path),
            }
            best = dict.fromkeys(loaders, np.inf)
            for _ in range(args.repeats):
                for name, load in loaders.items():
                    start = time.perf_counter()
                    load()
                    best[name] = min(best[name], time.perf_counter() - start)
            mib = os.path.getsize(path) / 2**20
            print(f"| {n} x {d} | {mib:.1f} | {best['skops']:.4f} | {best['mlneighbors']:.4f} | "
                  f"{best['mlneighbors'] / best['skops']:.2f} |")


if __name__ == "__main__":
    main()
