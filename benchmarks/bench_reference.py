"""The reference benchmark: every command-line model on every shared dataset, 10-fold CV, MULAN's metrics.

Usage::

    PYTHONPATH=src python benchmarks/bench_reference.py                  # the full reference (hours on 2 cores)
    PYTHONPATH=src python benchmarks/bench_reference.py --datasets emotions yeast --folds 2 \\
        --store /tmp/ref.sqlite --out /tmp/ref.csv                         # a smoke run, in seconds
    PYTHONPATH=src python benchmarks/bench_reference.py --report-only [--report-dir DIR]   # from the CSV alone

What it does, in order:

1. ``mlneighbors benchmark run STORE --models <every model> --datasets <every dataset> --cv FOLDS`` (in this
   process, timed): the store is resumed if it exists, so an interrupted reference goes on where it stopped
   (``--fresh`` deletes the store first: the time of the whole work).
2. The store exported to ``--out`` (default ``docs/user_guide/benchmark_reference.csv``), sorted, one row per
   (dataset, model, metric): the number of folds, the mean, the standard deviation (``ddof=1``) and every
   fold's value, at 6 significant digits: small and text-diffable, committed in place of the SQLite file.
3. Unless ``--no-evaluate``: the same work done the way it was done before ``benchmark``, one
   ``mlneighbors evaluate --model M DATASET --cv FOLDS`` per model and dataset (in this process, timed; the same
   folds: the same seed), and the ratio of the two times.  The means ``evaluate`` prints are checked against the
   store's (they must agree to the printed digits).  The two times go into
   ``docs/user_guide/benchmark_reference/timing.json``, which the page's sentence on them reads (a later run
   that computes some cells again, or ``--report-only``, keeps it).
4. With ``--report-dir DIR``: the report (Markdown, LaTeX, CSV, JSON) and the critical-difference diagrams of
   the export, written there (``mlneighbors.benchmark._report``; its diagrams need matplotlib).

``--report-only`` does step 4 alone, from the CSV export: the committed reference makes its tables and
diagrams again without the store or any computing.

Times are wall-clock seconds on the machine that runs it (say which, and how many cores, when quoting them);
``--jobs N`` runs the benchmark's tasks in N processes (``evaluate`` has no such option: the ratio is then
not like for like, and the script says so).
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import io
import json
import math
import os
import sys
import time
from collections import defaultdict

import numpy as np

from mlneighbors import list_models
from mlneighbors.benchmark import read_rows
from mlneighbors.cli import main
from mlneighbors.cli._common import DEFAULT_METRICS
from mlneighbors.datasets import list_datasets

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DEFAULT_OUT = os.path.join(ROOT, "docs", "user_guide", "benchmark_reference.csv")
DEFAULT_STORE = os.path.join(ROOT, "out", "benchmark_reference.sqlite")  # out/ is ignored by git


def _quiet_main(argv: list[str]) -> tuple[int, str]:
    """``mlneighbors`` in this process, its standard output captured."""
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        code = main(argv)
    return code, buffer.getvalue()


def export(store: str, out: str) -> int:
    """The store's results, one sorted row per (dataset, model, metric), into ``out``."""
    cells: dict[tuple[str, str, str], list[tuple[int, float]]] = defaultdict(list)
    for dataset, model, fold, metric, value in read_rows(store):
        cells[(dataset, model, metric)].append((fold, value))
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with open(out, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow(["dataset", "model", "metric", "folds", "mean", "std", "values"])
        for (dataset, model, metric), folds in sorted(cells.items()):
            values = np.array([v for _, v in sorted(folds)])
            std = float(np.std(values, ddof=1)) if len(values) > 1 else math.nan
            writer.writerow([dataset, model, metric, len(values), f"{np.mean(values):.6g}", f"{std:.6g}",
                             " ".join(f"{v:.6g}" for v in values)])
    return len(cells)


def rows_of_export(path: str) -> list[tuple[str, str, int, str, float]]:
    """The ``(dataset, model, fold, metric, value)`` rows of an export (6 significant digits)."""
    rows = []
    with open(path, newline="", encoding="utf-8") as fh:
        for record in csv.DictReader(fh):
            for fold, text in enumerate(record["values"].split()):
                rows.append((record["dataset"], record["model"], fold, record["metric"], float(text)))
    return rows


def write_report(rows: list, folder: str) -> None:
    from mlneighbors.benchmark._report import build_report

    os.makedirs(folder, exist_ok=True)
    report = build_report(rows)
    for suffix, text in (("md", report.to_markdown()), ("tex", report.to_latex()), ("csv", report.to_csv()),
                         ("json", report.to_json())):
        with open(os.path.join(folder, f"benchmark_reference.{suffix}"), "w", encoding="utf-8") as fh:
            fh.write(text if text.endswith("\n") else text + "\n")
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print("no diagrams: they need matplotlib", file=sys.stderr)
        return
    for metric in report:
        report.cd_diagram(os.path.join(folder, f"benchmark_reference-{metric}.svg"), metric)
    print(f"wrote the report and {len(report)} diagrams to {folder}")


#: the metrics whose critical-difference diagrams the documentation shows
DOCS_DIAGRAMS = ("hamming_loss", "micro_f1", "average_precision")
DOCS_DIR = os.path.join(ROOT, "docs", "user_guide")
#: the times of the last run that timed both the benchmark and the evaluate loop
TIMING = os.path.join(DOCS_DIR, "benchmark_reference", "timing.json")


def timing_sentence(t: dict) -> str:
    """The page's sentence on a run whose benchmark and ``evaluate`` loop were both timed."""
    where = f" in {t['jobs']} processes" if t["jobs"] > 1 else ""
    return (f" In the run that first computed every cell, the same work as one ``mlneighbors evaluate`` per model and "
            f"dataset (one process, the same folds) took {t['evaluate_seconds']:.0f} s against the benchmark's "
            f"{t['benchmark_seconds']:.0f} s{where}: {t['evaluate_seconds'] / t['benchmark_seconds']:.2f}x (their "
            f"means agree to {t['worst']:.0e}).")


def write_docs(rows: list, store: str | None, folder: str = DOCS_DIR, timing: str = "") -> None:
    """The benchmarking page's reference section (``benchmark_reference.inc``): the average
    ranks of every model on every metric with Friedman's p-value and the critical difference,
    three critical-difference diagrams (SVG) and the whole report in Markdown, for download
    (``benchmark_reference/``); the run's time and machine from the store when given, and
    ``timing`` (the same work timed as ``evaluate`` calls, in the same run) after it, else the
    sentence of the last run that timed both (``benchmark_reference/timing.json``)."""
    if not timing and os.path.exists(TIMING):
        with open(TIMING, encoding="utf-8") as fh:
            timing = timing_sentence(json.load(fh))
    from mlneighbors.benchmark import build_report

    report = build_report(rows)
    sub = os.path.join(folder, "benchmark_reference")
    os.makedirs(sub, exist_ok=True)
    with open(os.path.join(sub, "report.md"), "w", encoding="utf-8") as fh:
        fh.write(report.to_markdown().rstrip("\n") + "\n")
    for metric in DOCS_DIAGRAMS:
        report.cd_diagram(os.path.join(sub, f"cd-{metric}.svg"), metric)
    metrics = list(report)
    models = list(report[metrics[0]].models)
    datasets = report[metrics[0]].datasets
    when = ""
    if store is not None:
        import sqlite3

        db = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
        runs = db.execute("SELECT started, ended, machine, searches, searches_unshared FROM runs "
                          "ORDER BY run").fetchall()
        db.close()
        from datetime import datetime

        seconds = sum((datetime.fromisoformat(e) - datetime.fromisoformat(b)).total_seconds()
                      for b, e, *_ in runs if e)
        machine = json.loads(runs[-1][2])
        searches = sum(r[3] or 0 for r in runs), sum(r[4] or 0 for r in runs)
        when = (f" The run took {seconds / 60:.0f} minutes on {machine['cpus']} cores"
                + (f" ({len(runs)} runs of the command, each resuming the last)" if len(runs) > 1 else "")
                + (f"; one search per fold served every model that could share it: {searches[0]:,} neighbour "
                   f"searches for {searches[1]:,} asked." if searches[1] else ".")) + timing
    # short column heads, so that eleven columns fit the page's text
    short = {m: "".join(word[0].upper() for word in m.split("_")) for m in metrics}
    short.update({"micro_f1": "miF1", "macro_f1": "maF1", "example_f1": "exF1"})
    title = f"The reference: every command-line model on the {len(datasets)} shared datasets"
    lines = [
        title,
        "-" * len(title),
        "",
        f"Every model of the command line ({len(models)}, at its defaults) on the {len(datasets)} shared datasets "
        "under stratified 10-fold cross-validation (seed 0, dense features min-max scaled on each training part), "
        f"MULAN's {len(metrics)} metrics; remade by ``PYTHONPATH=src python benchmarks/bench_reference.py "
        "--no-evaluate --docs`` (from the committed export alone: ``--report-only --docs``)." + when,
        "The export of the store, one row per dataset, model and metric with every fold's value, is "
        ":download:`benchmark_reference.csv`; the whole report (per metric the table of means and standard "
        "deviations, the ranks and every test) is :download:`benchmark_reference/report.md`.",
        "",
        "Average ranks (1 the best; over the datasets ranked for that metric), then Friedman's p-value and "
        "Nemenyi's critical difference (CD, alpha = 0.05) per metric; the columns: "
        + ", ".join(f"{short[m]} {m.replace('_', ' ')}" for m in metrics) + ".",
        "",
        ".. list-table::",
        "   :header-rows: 1",
        "",
        "   * - model",
    ]
    lines += [f"     - {short[m]}" for m in metrics]
    for model in models:
        lines.append(f"   * - {model}")
        for m in metrics:
            r = report[m]
            k = list(r.comparison.models).index(model) if model in r.comparison.models else None
            lines.append(f"     - {r.comparison.average_ranks[k]:.1f}" if k is not None else "     - n/a")
    # the tests in a sentence under the table (a row of p-values would widen it past the text)
    tests = []
    for m in metrics:
        c = report[m].comparison
        p_value = f"p = {c.friedman.pvalue:.2g}" if c.friedman is not None else "no test"
        cd = f", CD {c.critical_difference:.2f} over {c.n_datasets}" if c.critical_difference else ""
        tests.append(f"{short[m]} {p_value}{cd}")
    lines += ["", "Friedman's test per metric: " + "; ".join(tests) + "."]
    notes = [f"{m}: {note}" for m in metrics for note in report[m].notes if "dropped" in note or "absent" in note]
    if notes:
        lines += ["", "What was left out of the ranks, and why:", ""] + [f"- {n}" for n in notes]
    lines += ["", "The critical-difference diagrams of three metrics (a bar joins models that Nemenyi's test does "
              "not separate):", ""]
    for metric in DOCS_DIAGRAMS:
        lines += [f".. image:: benchmark_reference/cd-{metric}.svg", f"   :alt: critical-difference diagram, {metric}",
                  "   :width: 100%", ""]
    with open(os.path.join(folder, "benchmark_reference.inc"), "w", encoding="utf-8") as fh:
        fh.write("\n".join(lines).rstrip("\n") + "\n")
    print(f"wrote {os.path.join(folder, 'benchmark_reference.inc')} and {sub}")


def time_evaluate(models: list[str], datasets: list[str], folds: int, seed: int, data_home: str | None,
                  store: str) -> tuple[dict, float]:
    """Seconds of ``evaluate`` per (dataset, model), and the largest difference between its
    means and the store's."""
    means: dict[tuple[str, str, str], list[float]] = defaultdict(list)
    for dataset, model, _, metric, value in read_rows(store):
        means[(dataset, model, metric)].append(value)
    seconds, worst = {}, 0.0
    for dataset in datasets:
        for model in models:
            argv = ["evaluate", "--model", model, dataset, "--cv", str(folds), "--seed", str(seed), "--quiet",
                    "--format", "json", *(["--data-home", data_home] if data_home else [])]
            t0 = time.perf_counter()
            code, out = _quiet_main(argv)
            seconds[(dataset, model)] = time.perf_counter() - t0
            if code != 0:
                print(f"evaluate {model} on {dataset} failed (exit {code})", file=sys.stderr)
                continue
            for row in json.loads(out)["results"]:
                stored = means.get((dataset, model, row["metric"]))
                if stored and row["value"] is not None:
                    worst = max(worst, abs(float(np.mean(stored)) - row["value"]))
            print(f"  evaluate {model:10s} {dataset:14s} {seconds[(dataset, model)]:8.1f} s", flush=True)
    return seconds, worst


def main_(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--datasets", nargs="+", default=list_datasets(), help="default: every registered dataset")
    p.add_argument("--models", nargs="+", default=list_models(), help="default: every command-line model")
    p.add_argument("--folds", type=int, default=10)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--jobs", type=int, help="the benchmark's tasks in N processes")
    p.add_argument("--data-home", help="where the datasets are (default: the library's rule)")
    p.add_argument("--store", default=DEFAULT_STORE, help=f"the results store (default {DEFAULT_STORE})")
    p.add_argument("--fresh", action="store_true", help="delete the store first (to time the whole work)")
    p.add_argument("--out", default=DEFAULT_OUT, help=f"the CSV export (default {DEFAULT_OUT})")
    p.add_argument("--no-evaluate", action="store_true", help="skip timing the same work as evaluate")
    p.add_argument("--report-dir", help="also write the report and its diagrams there")
    p.add_argument("--report-only", action="store_true", help="only the report, from the CSV export (--out)")
    p.add_argument("--docs", action="store_true", help="also write the benchmarking page's reference section "
                   "(docs/user_guide/benchmark_reference.inc and benchmark_reference/)")
    args = p.parse_args(argv)

    if args.report_only:
        rows = rows_of_export(args.out)
        if args.docs:
            write_docs(rows, args.store if os.path.exists(args.store) else None)
        write_report(rows, args.report_dir or os.path.join(ROOT, "out", "benchmark_reference"))
        return 0
    if args.fresh:
        for suffix in ("", "-wal", "-shm"):
            with contextlib.suppress(FileNotFoundError):
                os.remove(args.store + suffix)
    os.makedirs(os.path.dirname(os.path.abspath(args.store)), exist_ok=True)
    command = ["benchmark", "run", args.store, "--models", ",".join(args.models), "--datasets", *args.datasets,
               "--cv", str(args.folds), "--seed", str(args.seed), "--metrics", ",".join(DEFAULT_METRICS),
               *(["--jobs", str(args.jobs)] if args.jobs else []),
               *(["--data-home", args.data_home] if args.data_home else [])]
    print("mlneighbors " + " ".join(command), flush=True)
    t0 = time.perf_counter()
    code, out = _quiet_main(command)
    bench_seconds = time.perf_counter() - t0
    print(out.strip())
    if code != 0:
        return code
    written = export(args.store, args.out)
    timing = ""
    print(f"wrote {args.out}: {written} rows (dataset, model, metric)")
    if not args.no_evaluate:
        if " 0 were stored" not in out:
            print("note: the store held results before this run, so its time is not that of the whole work; "
                  "--fresh times it all", file=sys.stderr)
        seconds, worst = time_evaluate(args.models, args.datasets, args.folds, args.seed, args.data_home, args.store)
        total = sum(seconds.values())
        print(f"benchmark: {bench_seconds:.1f} s{f' ({args.jobs} processes)' if args.jobs else ''}; evaluate per "
              f"model and dataset: {total:.1f} s; ratio {total / bench_seconds:.2f}x; the means agree to "
              f"{worst:.1e}")
        timing = timing_sentence({"benchmark_seconds": bench_seconds, "evaluate_seconds": total, "worst": worst,
                                  "jobs": args.jobs or 1})
        with open(TIMING, "w", encoding="utf-8") as fh:  # for later pages made from the store (--report-only)
            json.dump({"benchmark_seconds": round(bench_seconds, 1), "evaluate_seconds": round(total, 1),
                       "worst": worst, "jobs": args.jobs or 1}, fh)
        if args.jobs and args.jobs > 1:
            print("note: evaluate ran in one process and the benchmark in several: the ratio is not like for like",
                  file=sys.stderr)
    if args.docs:
        write_docs(rows_of_export(args.out), args.store, timing=timing)
    if args.report_dir:
        write_report(read_rows(args.store), args.report_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main_())
