"""A change's speed and numbers on the benchmark's own work: an older checkout against this one, in one run.

Usage::

    git worktree add /tmp/old <commit>
    PYTHONPATH=src python benchmarks/before_after.py --before /tmp/old/src [--models bknn blda-bknn hybrid]
        [--datasets ...] [--folds 3] [--rounds 1] [--dir out/before_after]

For every dataset (every shared one by default), ``mlneighbors benchmark run`` of ``--models`` on ``--folds``
folds (seed 0) runs twice, each in a fresh subprocess: with ``PYTHONPATH=<--before>`` (the old code) and with this
checkout's ``src``, the two alternating dataset by dataset (a busy machine slows both alike), ``--rounds`` times.
The stores keep each cell's seconds (its model's fit and prediction on that fold); printed per model: the seconds
summed over datasets and folds, old and new (the best of the rounds per dataset), their ratio, and whether every
stored value (every fold and metric, full precision) is the same in both; per dataset, the same for the
models together.  One run, this machine: name it beside the figures.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def run(src: str, store: str, models: list[str], dataset: str, folds: int) -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(store + suffix).unlink(missing_ok=True)
    argv = ["benchmark", "run", store, "--models", ",".join(models), "--datasets", dataset, "--cv", str(folds),
            "--seed", "0", "--quiet"]
    env = {**os.environ, "PYTHONPATH": src}
    code = f"import sys; from mlneighbors.cli import main; sys.exit(main({argv!r}))"
    done = subprocess.run([sys.executable, "-W", "ignore", "-c", code], env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"benchmark run with {src} on {dataset} failed:\n{done.stderr[-2000:]}")


def cells(store: str) -> tuple[dict, dict]:
    """(model -> seconds summed over folds), ((model, fold, metric) -> value)."""
    db = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    rows = db.execute("SELECT model, fold, metric, value, seconds FROM results").fetchall()
    db.close()
    seconds: dict[str, float] = defaultdict(float)
    seen = set()
    values = {}
    for model, fold, metric, value, s in rows:
        values[(model, fold, metric)] = value
        if (model, fold) not in seen:  # a cell's seconds stand on each of its metrics' rows
            seen.add((model, fold))
            seconds[model] += s
    return seconds, values


def main() -> None:
    from mlneighbors.datasets import list_datasets

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--before", required=True, help="the old checkout's src folder")
    p.add_argument("--models", nargs="+", default=["bknn", "blda-bknn", "hybrid"])
    p.add_argument("--datasets", nargs="+", default=list_datasets())
    p.add_argument("--folds", type=int, default=3)
    p.add_argument("--rounds", type=int, default=1)
    p.add_argument("--dir", default=str(ROOT / "out" / "before_after"))
    args = p.parse_args()
    os.makedirs(args.dir, exist_ok=True)
    sources = {"old": os.path.abspath(args.before), "new": str(ROOT / "src")}
    totals = {side: defaultdict(float) for side in sources}
    same_model: dict[str, bool] = defaultdict(lambda: True)
    print("| dataset | old s | new s | ratio | values the same |\n|---|---|---|---|---|")
    for dataset in args.datasets:
        best = {side: None for side in sources}
        values = {}
        for _ in range(args.rounds):
            for side, src in sources.items():
                store = os.path.join(args.dir, f"{side}-{dataset}.sqlite")
                run(src, store, args.models, dataset, args.folds)
                seconds, values[side] = cells(store)
                if best[side] is None:
                    best[side] = seconds
                else:
                    best[side] = {m: min(best[side][m], seconds[m]) for m in seconds}
        for side in sources:
            for model, s in best[side].items():
                totals[side][model] += s
        same = values["old"] == values["new"]
        for model in args.models:
            keys = [key for key in values["new"] if key[0] == model]
            same_model[model] &= all(values["old"].get(key) == values["new"][key] for key in keys)
        old_s, new_s = sum(best["old"].values()), sum(best["new"].values())
        print(f"| {dataset} | {old_s:.2f} | {new_s:.2f} | {old_s / new_s:.2f} | {'yes' if same else 'no'} |",
              flush=True)
    print("\n| model | old s | new s | ratio | values the same |\n|---|---|---|---|---|")
    for model in args.models:
        old_s, new_s = totals["old"][model], totals["new"][model]
        print(f"| {model} | {old_s:.2f} | {new_s:.2f} | {old_s / new_s:.2f} | {'yes' if same_model[model] else 'no'} |")


if __name__ == "__main__":
    main()
