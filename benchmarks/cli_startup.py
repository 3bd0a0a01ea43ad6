"""Start-up cost of ``mlneighbors fit`` and ``predict`` on a tiny file, with and without torch.

Usage::

    python benchmarks/cli_startup.py [--repeats 5] [--before-src OLD_CHECKOUT/src]

Runs, in fresh processes, interleaved ``--repeats`` times (a busy machine slows all alike):

- ``fit`` and ``predict`` of the command line (``python -m mlneighbors ...``) on a 40-row CSV,
  as they run now: skops is imported without its torch and dask detour (``mlneighbors._imports``);
- the same two commands after a plain ``import skops.io`` (how they ran before: importing
  skops imported torch and dask through scikit-learn's array-API adapters);

and prints the median wall-clock time of each, the ratio, and whether torch was imported.
With ``--before-src``, "before" is instead the exact command a user types,
``python -m mlneighbors fit ...``, run from that older source tree (``PYTHONPATH``), and
"now" the same command from this one.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PLAIN = "import skops.io; "  # what every run did before


def command(argv: list[str], plain: bool, exact: bool) -> list[str]:
    if exact:
        return [sys.executable, "-X", "importtime", "-m", "mlneighbors", *argv]
    code = (PLAIN if plain else "") + (
        "import sys; from mlneighbors.cli import main; rc = main(sys.argv[1:]); "
        "sys.stderr.write('torch imported: %s\\n' % ('torch' in sys.modules)); sys.exit(rc)"
    )
    return [sys.executable, "-c", code, *argv]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--before-src", metavar="DIR", help="an older checkout's src folder, for 'before'")
    args = parser.parse_args()
    exact = args.before_src is not None
    tmp = Path(tempfile.mkdtemp())
    data = tmp / "tiny.csv"
    data.write_text("x1,x2,a,b\n" + "".join(f"{i / 7:.3f},{(i * 3) % 11},{i % 2},{(i // 3) % 2}\n" for i in range(40)))
    model = tmp / "m.skops"
    runs = {
        "fit": ["fit", "mlknn", str(data), "--label-columns", "a,b", "--out", str(model), "--quiet"],
        "predict": ["predict", str(model), str(data), "--label-columns", "a,b", "--out", str(tmp / "p.csv"),
                    "--quiet"],
    }
    here = os.pathsep.join(p for p in sys.path if p)
    envs = {False: {**os.environ, "PYTHONPATH": here},
            True: {**os.environ, "PYTHONPATH": args.before_src if exact else here}}
    times: dict[tuple[str, bool], list[float]] = {}
    torch: dict[tuple[str, bool], bool] = {}
    for _ in range(args.repeats):
        for plain in (True, False):
            for kind, argv in runs.items():
                t0 = time.perf_counter()
                proc = subprocess.run(command(argv, plain, exact), capture_output=True, text=True,
                                      env=envs[plain])
                times.setdefault((kind, plain), []).append(time.perf_counter() - t0)
                if proc.returncode != 0:
                    raise SystemExit(proc.stderr)
                # -X importtime lists every module imported; the -c form says it itself
                torch[(kind, plain)] = ("torch imported: True" in proc.stderr
                                        or any(line.split("|")[-1].strip().split(".")[0] == "torch"
                                               for line in proc.stderr.splitlines()))
    print(f"median of {args.repeats} interleaved runs, {os.cpu_count()} CPUs; load average "
          f"{os.getloadavg()[0]:.1f}")
    before = f"before: {args.before_src}" if exact else "before: plain import skops.io"
    print(f"| command | {before} (s) | torch imported | now (s) | torch imported | now / before |")
    print("|---|---:|---|---:|---|---:|")
    for kind in runs:
        before, now = (statistics.median(times[(kind, p)]) for p in (True, False))
        print(f"| {kind} | {before:.2f} | {torch[(kind, True)]} | {now:.2f} | {torch[(kind, False)]} "
              f"| {now / before:.2f} |")


if __name__ == "__main__":
    main()
