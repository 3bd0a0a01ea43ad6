"""Start-up cost of the command line: ``--version``, ``--help``, ``evaluate --help`` and a
``predict`` of ten rows with a saved model.

Usage::

    python benchmarks/cli_startup.py [--repeats 7] [--before-src OLD_CHECKOUT/src]

Each command runs in a fresh process (``python -m mlneighbors ...``), the commands
interleaved ``--repeats`` times (a busy machine slows all alike); the table gives the median
wall-clock seconds of each and the heavy libraries it imported (one more run under ``python
-X importtime``).  The model is fitted once, before the timing, on a 40-row CSV.

With ``--before-src``, every command also runs from that older source tree (``PYTHONPATH``),
interleaved with this one's, and the table sets the two side by side.  An old checkout's
``src`` is made without touching this one by ``git archive <commit> src | tar -x -C DIR``.
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

HERE = Path(__file__).resolve().parents[1] / "src"
#: the libraries whose import the command line puts off until a command needs them
HEAVY = ("numpy", "scipy", "pandas", "sklearn", "skops", "matplotlib", "torch")


def imported(argv: list[str], env: dict[str, str]) -> list[str]:
    """The heavy top-level packages that ``python -m mlneighbors argv`` imports."""
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "mlneighbors", *argv], capture_output=True,
                          text=True, env=env)
    seen = {line.split("|")[-1].strip().split(".")[0] for line in proc.stderr.splitlines() if "|" in line}
    return [name for name in HEAVY if name in seen]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--before-src", metavar="DIR", help="an older checkout's src folder, run beside this one")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp())
    data = tmp / "tiny.csv"
    data.write_text("x1,x2,a,b\n" + "".join(f"{i / 7:.3f},{(i * 3) % 11},{i % 2},{(i // 3) % 2}\n" for i in range(40)))
    rows = tmp / "rows.csv"
    rows.write_text("x1,x2\n" + "".join(f"{i / 5:.3f},{(i * 7) % 11}\n" for i in range(10)))
    commands = {
        "--version": ["--version"],
        "--help": ["--help"],
        "evaluate --help": ["evaluate", "--help"],
        "predict (10 rows)": ["predict", str(tmp / "m.skops"), str(rows), "--out", str(tmp / "p.csv"), "--quiet"],
    }
    trees = {"now": str(HERE)} | ({"before": args.before_src} if args.before_src else {})
    envs = {tree: {**os.environ, "PYTHONPATH": src} for tree, src in trees.items()}
    fit = ["fit", "mlknn", str(data), "--label-columns", "a,b", "--out", str(tmp / "m.skops"), "--quiet"]
    subprocess.run([sys.executable, "-m", "mlneighbors", *fit], check=True, env=envs["now"])
    times: dict[tuple[str, str], list[float]] = {}
    for _ in range(args.repeats):
        for name, argv in commands.items():
            for tree, env in envs.items():
                t0 = time.perf_counter()
                proc = subprocess.run([sys.executable, "-m", "mlneighbors", *argv], capture_output=True, text=True,
                                      env=env)
                times.setdefault((name, tree), []).append(time.perf_counter() - t0)
                if proc.returncode != 0:
                    raise SystemExit(f"{tree}: mlneighbors {' '.join(argv)} failed:\n{proc.stderr}")
    print(f"median of {args.repeats} interleaved runs, {os.cpu_count()} CPUs; load average "
          f"{os.getloadavg()[0]:.1f}; python {sys.version.split()[0]}")
    columns = [f"{tree} (s) | {tree}: heavy imports" for tree in trees]
    print(f"| command | {' | '.join(columns)} |" + (" now / before |" if args.before_src else ""))
    print("|---|" + "---:|---|" * len(trees) + ("---:|" if args.before_src else ""))
    for name, argv in commands.items():
        cells = []
        for tree, env in envs.items():
            cells += [f"{statistics.median(times[(name, tree)]):.2f}", ", ".join(imported(argv, env)) or "-"]
        ratio = ""
        if args.before_src:
            ratio = f" {statistics.median(times[(name, 'now')]) / statistics.median(times[(name, 'before')]):.2f} |"
        print(f"| {name} | {' | '.join(cells)} |{ratio}")


if __name__ == "__main__":
    main()
