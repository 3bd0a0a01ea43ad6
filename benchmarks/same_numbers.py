"""The same numbers wherever the benchmark runs: one process, N processes, a local Dask cluster (issue 50).

Usage::

    PYTHONPATH=src python benchmarks/same_numbers.py [--datasets emotions yeast ...] [--models mlknn bknn ...]
        [--folds 10] [--jobs 2] [--workers 2] [--reference out/benchmark_reference.sqlite] [--dir out/same]

Runs ``mlneighbors benchmark run`` on the same models, datasets and folds three ways: in one process (or reads
the cells from ``--reference``, a store of an earlier one-process run such as the reference benchmark's, where
it holds them), in ``--jobs`` processes, and on a local Dask cluster of ``--workers`` worker processes
(``--workers``: a ``distributed.LocalCluster``, started and closed by the command).  Every stored value (each
dataset, model, fold and metric, at full float64 precision as SQLite keeps it) is compared between the three:
printed are the number of values compared, those that differ and the largest difference, per pair of runs, and
the wall seconds of each run.  Exits 1 when any value differs.  Default: every command-line model on the eight
smaller shared datasets (the four larger take most of the reference's hour).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import shutil
import sys
import time
from pathlib import Path

# benchmarks/dask.py would shadow the dask package that the Dask run imports: this folder leaves sys.path
HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]

from mlneighbors import list_models  # noqa: E402
from mlneighbors.benchmark import read_rows  # noqa: E402
from mlneighbors.cli import main as cli_main  # noqa: E402

SMALL = ["cal500", "birds", "emotions", "enron", "genbase", "medical", "scene", "yeast"]


def run(store: str, models: list[str], datasets: list[str], folds: int, where: list[str]) -> float:
    """``benchmark run`` into a fresh ``store``; its wall seconds."""
    for suffix in ("", "-wal", "-shm"):
        with contextlib.suppress(FileNotFoundError):
            os.remove(store + suffix)
    argv = ["benchmark", "run", store, "--models", ",".join(models), "--datasets", *datasets, "--cv", str(folds),
            "--seed", "0", "--quiet", *where]
    t0 = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        code = cli_main(argv)
    if code != 0:
        raise SystemExit(f"benchmark run {' '.join(where) or '(one process)'} failed with exit code {code}")
    return time.perf_counter() - t0


def values(store: str, models: list[str], datasets: list[str]) -> dict:
    return {row[:4]: row[4] for row in read_rows(store) if row[1] in models and row[0] in datasets}


def compare(a: dict, b: dict) -> tuple[int, int, float]:
    keys = sorted(set(a) | set(b))
    missing = [key for key in keys if key not in a or key not in b]
    if missing:
        raise SystemExit(f"the runs hold different cells, e.g. {missing[0]}")
    differ = [abs(a[key] - b[key]) for key in keys
              if not (a[key] == b[key] or (a[key] != a[key] and b[key] != b[key]))]  # NaN equals NaN here
    return len(keys), len(differ), max(differ, default=0.0)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--datasets", nargs="+", default=SMALL)
    p.add_argument("--models", nargs="+", default=list_models())
    p.add_argument("--folds", type=int, default=10)
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--reference", help="a one-process store holding these cells (else they are computed here)")
    p.add_argument("--dir", default=os.path.join("out", "same_numbers"))
    args = p.parse_args()
    os.makedirs(args.dir, exist_ok=True)
    seconds = {}
    if args.reference:
        one = os.path.join(args.dir, "one.sqlite")
        shutil.copyfile(args.reference, one)
        seconds["one process"] = float("nan")
    else:
        one = os.path.join(args.dir, "one.sqlite")
        seconds["one process"] = run(one, args.models, args.datasets, args.folds, [])
    stores = {"one process": one}
    for label, where in ((f"{args.jobs} processes", ["--jobs", str(args.jobs)]),
                         (f"Dask, {args.workers} workers", ["--workers", str(args.workers)])):
        stores[label] = os.path.join(args.dir, f"{where[0].strip('-')}.sqlite")
        seconds[label] = run(stores[label], args.models, args.datasets, args.folds, where)
    got = {label: values(store, args.models, args.datasets) for label, store in stores.items()}
    print(f"{len(args.models)} models x {len(args.datasets)} datasets x {args.folds} folds")
    for label, s in seconds.items():
        print(f"  {label:22s} {'(from ' + args.reference + ')' if s != s else f'{s:.1f} s'}")
    bad = 0
    labels = list(got)
    for i, first in enumerate(labels):
        for second in labels[i + 1:]:
            n, differ, worst = compare(got[first], got[second])
            bad += differ
            print(f"  {first} vs {second}: {n} values, {differ} differ (largest difference {worst:.1e})")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
