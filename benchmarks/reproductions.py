"""Wall time of every full reproduction (or of the quick modes), one after the other.

    MLNEIGHBORS_DATA=../shared/datasets python benchmarks/reproductions.py [--quick] [--out DIR] [PAPER ...]

Prints one line per reproduction: seconds, CPU seconds (every thread of the process), the
load average when it ended, cells compared with the paper, cells more than 0.02 away, and the
neighbour searches per fold/split where the reproduction counts them.  On a shared machine the
wall time grows with the load; the CPU seconds much less (they bound a quiet 2-core machine's
wall time between CPU/2 and CPU).  The full runs take minutes each on a 2-core machine (see the
closing table of each ``report.md`` for the protocol).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

from mlneighbors.experiments import list_papers, reproduce


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("papers", nargs="*", default=list_papers())
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--out", default=None, help="keep the outputs here (default: a temporary folder)")
    args = parser.parse_args()
    out = args.out or tempfile.mkdtemp(prefix="mlneighbors-repro-")
    print(f"{'paper':16s} {'seconds':>8s} {'cpu s':>8s} {'load':>5s} {'cells':>6s} {'>0.02':>6s}  searches")
    total = total_cpu = 0.0
    for name in args.papers:
        start, cpu = time.perf_counter(), time.process_time()
        rep = reproduce(name, quick=args.quick, out=out)
        wall, cpu = time.perf_counter() - start, time.process_time() - cpu
        total, total_cpu = total + wall, total_cpu + cpu
        compared = sum(r["diff"] is not None for r in rep.rows)
        searches = {k: v for k, v in rep.stats.items() if k.startswith("searches")}
        print(f"{name:16s} {wall:8.1f} {cpu:8.1f} {os.getloadavg()[0]:5.1f} {compared:6d} "
              f"{len(rep.differences()):6d}  {searches}", flush=True)
    print(f"{'all':16s} {total:8.1f} {total_cpu:8.1f}  ({os.cpu_count()} CPUs)")
    print(f"outputs in {out}")


if __name__ == "__main__":
    main()
