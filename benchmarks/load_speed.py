"""Time mlneighbors' ARFF reader against liac-arff on every shared ARFF file.

Usage::

    python benchmarks/load_speed.py [DATA_DIR] [--repeat N]

DATA_DIR defaults to $MLNEIGHBORS_DATA, else ``../shared/datasets`` beside the
repository. Each reader is given the same job: the file's bytes (gunzipped
where needed) to a matrix with nominal values as indices. Both timings
include reading and decompressing the file; the best of ``--repeat`` runs is
kept. liac-arff is asked for COO first and DENSE where the file is dense, as
the test oracle does.
"""

from __future__ import annotations

import argparse
import gzip
import os
import time
from collections.abc import Callable
from pathlib import Path

import arff

from mlneighbors.datasets._arff import read_arff


def _liac(path: Path) -> object:
    raw = path.read_bytes()
    text = (gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw).decode("utf-8")
    try:
        return arff.loads(text, encode_nominal=True, return_type=arff.COO)
    except arff.BadLayout:
        return arff.loads(text, encode_nominal=True, return_type=arff.DENSE)


def _best(run: Callable[[], object], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    beside = Path(__file__).resolve().parents[2] / "shared" / "datasets"
    default = os.environ.get("MLNEIGHBORS_DATA") or beside
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data_dir", nargs="?", type=Path, default=Path(default))
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    files = sorted(p for p in args.data_dir.rglob("*") if p.name.endswith((".arff", ".arff.gz")))
    if not files:
        raise SystemExit(f"no ARFF files under {args.data_dir}")

    print("| file | rows x attributes | kind | liac-arff (s) | mlneighbors (s) | speed-up |")
    print("|---|---|---|---:|---:|---:|")
    total_liac = total_ours = 0.0
    for path in files:
        table = read_arff(path)
        ours = _best(lambda: read_arff(path), args.repeat)
        liac = _best(lambda: _liac(path), args.repeat)
        total_liac, total_ours = total_liac + liac, total_ours + ours
        rows, columns = table.data.shape
        kind = "sparse" if table.is_sparse else "dense"
        name = path.relative_to(args.data_dir)
        print(
            f"| {name} | {rows} x {columns} | {kind} | {liac:.3f} | {ours:.3f} "
            f"| {liac / ours:.1f}x |"
        )
    print(
        f"| **all {len(files)} files** | | | {total_liac:.3f} | {total_ours:.3f} "
        f"| {total_liac / total_ours:.1f}x |"
    )


if __name__ == "__main__":
    main()
