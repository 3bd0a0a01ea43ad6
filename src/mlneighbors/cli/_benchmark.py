"""``mlneighbors benchmark``: ``run`` (models x datasets x folds into a results store) and
``report`` (the tables, tests and diagram from a store, without computing)."""

from __future__ import annotations

import argparse
import itertools
import os
import shlex
import sys
from collections.abc import Sequence
from typing import Any

from ._common import DEFAULT_METRICS, CLIError, choice_error, note, warning_line

RUN = "benchmark run"
REPORT = "benchmark report"
EXPORT = "benchmark export"
REPORT_FORMATS = ("markdown", "latex", "csv", "json")

MODELS_HELP = (
    "model configurations, separated by spaces: NAME, or NAME:KEY=V1,V2,...[:KEY2=...] for a grid "
    "(every combination); KEY is k (the model's neighbour count, as --k) or a parameter (as --param), e.g. "
    "'mlknn:k=5,10,15 brknn lpknn:k=10'; models without a grid may also be separated by commas, as compare's "
    "--models"
)


def _wrap(text: str) -> str:
    import textwrap

    return textwrap.fill(text, width=100)


def add_benchmark_parser(sub: Any, models_epilog: str) -> None:
    """The ``benchmark`` command and its two subcommands."""
    from ._common import Parser
    from ._data import add_data_args, add_scale_arg

    raw = argparse.RawDescriptionHelpFormatter
    p = sub.add_parser(
        "benchmark", help="every model on many datasets into a resumable results store, and its report",
        description=_wrap("Two steps. 'benchmark run STORE --models ... --datasets ...' computes models x datasets x "
                          "folds "
                    "x metrics into STORE (an SQLite file), each cell committed as it finishes: the same command "
                    "run again (after Ctrl-C, kill -9, a lost worker) computes only what is missing. 'benchmark "
                    "report STORE' prints the tables and statistical tests from the store, without computing."),
        formatter_class=raw)
    steps = p.add_subparsers(dest="step", metavar="STEP", parser_class=Parser)
    steps.required = True

    r = steps.add_parser(
        "run", help="compute what STORE is missing", epilog=models_epilog, formatter_class=raw,
        description=_wrap("Compute every model configuration on every fold of every dataset, and every metric, "
                          "into STORE. "
                    "Within a fold one neighbour search serves every model and every k. A store holds one protocol "
                    "(folds, repeats, seed, or the standard split), one package version, one data and fold "
                    "assignment per dataset and one set of parameters per configuration: a run that differs is "
                    "refused in one line, before it computes anything (use a new store to keep it apart)."))
    r.add_argument("store", metavar="STORE", help="the results store (an SQLite file; created if absent)")
    r.add_argument("--models", nargs="+", required=True, metavar="SPEC", help=MODELS_HELP)
    r.add_argument("--datasets", nargs="+", required=True, metavar="DATA",
                   help="registered datasets (see 'mlneighbors datasets') and data files, separated by spaces")
    protocol = r.add_mutually_exclusive_group()
    protocol.add_argument("--cv", type=int, default=10, metavar="N",
                          help="N-fold stratified cross-validation (default 10)")
    protocol.add_argument("--split", action="store_true",
                          help="each dataset's standard train/test split instead (one fold)")
    r.add_argument("--repeats", type=int, default=1, metavar="R",
                   help="repeated cross-validation: R times --cv N, repeat r with seed --seed + r (default 1)")
    r.add_argument("--seed", type=int, default=0, help="seed of the folds and of k-means (default 0)")
    r.add_argument("--metrics", metavar="M1,M2", help=f"metrics (default: MULAN's, {','.join(DEFAULT_METRICS)})")
    r.add_argument("--k", type=int, metavar="K", help="neighbours of every model without k in its spec")
    r.add_argument("--param", action="append", metavar="KEY=VALUE",
                   help="a parameter of every model that has it (repeatable); 'model.key=value' for one model")
    add_scale_arg(r)
    add_data_args(r, data=False, test=False)
    where = r.add_mutually_exclusive_group()
    where.add_argument("--jobs", type=int, metavar="N",
                       help="run the tasks (one per dataset and fold) in N processes on this machine")
    where.add_argument("--scheduler", metavar="ADDRESS",
                       help="run the tasks on a running Dask cluster, e.g. tcp://10.0.0.5:8786 (only this process "
                            "writes the store)")
    where.add_argument("--workers", type=int, metavar="N",
                       help="run the tasks on a local Dask cluster of N worker processes, for this run only")
    r.add_argument("--retry-failed", action="store_true",
                   help="compute again the cells that failed before (they are stored as failed, NaN)")
    r.add_argument("--quiet", action="store_true", help="no start line, progress bar or notes")
    r.set_defaults(func=cmd_benchmark_run)

    s = steps.add_parser(
        "report", help="tables and statistical tests from STORE (nothing is computed)", formatter_class=raw,
        description=_wrap("Per metric: mean and standard deviation per dataset and model (the best marked), average "
                    "ranks, Friedman's and Iman-Davenport's tests, Nemenyi's test, Holm's test against --control, "
                    "pairwise Wilcoxon tests with their effect sizes; and a critical-difference diagram with "
                    "--diagram. On request: the Bayesian signed-rank test (--bayesian) and, per dataset, the "
                    "corrected resampled t-test against the control (--fold-test)."))
    s.add_argument("store", metavar="STORE", help="a results store written by 'benchmark run' (read only)")
    s.add_argument("--metrics", metavar="M1,M2", help="the metrics to report (default: every metric in the store)")
    s.add_argument("--control", metavar="MODEL", help="the model Holm's test compares every other model with")
    s.add_argument("--alpha", type=float, default=0.05, help="significance level (default 0.05)")
    s.add_argument("--format", choices=REPORT_FORMATS, default="markdown")
    s.add_argument("--out", metavar="FILE", help="write the report there (default: standard output)")
    s.add_argument("--diagram", metavar="FILE",
                   help="critical-difference diagram, FILE.png or FILE.svg (several metrics: FILE-<metric>.png)")
    s.add_argument("--cd", choices=("nemenyi", "wilcoxon-holm"), default="nemenyi",
                   help="what the diagram's bars join: models less than Nemenyi's critical difference apart "
                        "(default), or models that no Holm-corrected Wilcoxon signed-rank test separates "
                        "(Benavoli, Corani and Mangili 2016)")
    reviewers = s.add_argument_group("the tests reviewers ask for (not in the default report)")
    reviewers.add_argument("--bayesian", action="store_true",
                           help="the Bayesian signed-rank test of every pair over the datasets, by baycomp (the "
                                "'stats' extra): P(first better), P(equivalent), P(second better)")
    reviewers.add_argument("--rope", type=float, default=0.01, metavar="R",
                           help="its region of practical equivalence, in the metric's units (default 0.01)")
    reviewers.add_argument("--samples", type=int, default=50000, metavar="N",
                           help="its posterior samples (default 50000, about 0.4 s per pair)")
    reviewers.add_argument("--seed", type=int, default=0, help="its seed (default 0): the same report every time")
    reviewers.add_argument("--fold-test", action="store_true",
                           help="per dataset, every configuration against --control by Nadeau and Bengio's "
                                "corrected resampled t-test over the folds, marked as Weka and MEKA do: 'v' better, "
                                "'*' worse")
    s.set_defaults(func=cmd_benchmark_report)

    e = steps.add_parser(
        "export", help="every stored value (per fold) with its provenance, as CSV or JSON", formatter_class=raw,
        description=_wrap("One row per dataset, configuration, fold and metric: the value (empty where the cell "
                          "failed), its seconds and run, the dataset's sha256, the version and the protocol; JSON "
                          "adds the whole provenance (every configuration's parameters, the runs and their "
                          "machines). Nothing is computed."))
    e.add_argument("store", metavar="STORE", help="a results store written by 'benchmark run' (read only)")
    e.add_argument("--format", choices=("csv", "json"), default="csv")
    e.add_argument("--out", metavar="FILE", help="write there (default: standard output)")
    e.set_defaults(func=cmd_benchmark_export)


# --------------------------------------------------------------------------------------
# the models' grammar
# --------------------------------------------------------------------------------------


def parse_specs(specs: Sequence[str], cmd: str = RUN) -> list[tuple[str, list[tuple[str, list[str]]]]]:
    """``--models`` as ``[(model, [(key, [values])])]``.

    Within one argument a comma separates values of the last key, or models: a piece whose
    name (before any ``:``) is a registered model starts a new one.

    >>> parse_specs(["mlknn:k=5,10,brknn", "lpknn:k=3:s=0.5,1"])
    [('mlknn', [('k', ['5', '10'])]), ('brknn', []), ('lpknn', [('k', ['3']), ('s', ['0.5', '1'])])]
    >>> parse_specs(["mlknn:k=5,10:smoothing=0.5,1"])
    [('mlknn', [('k', ['5', '10']), ('smoothing', ['0.5', '1'])])]
    """
    from .. import MODELS

    out: list[tuple[str, list[tuple[str, list[str]]]]] = []
    for spec in specs:
        for position, piece in enumerate(p.strip() for p in spec.split(",")):
            if not piece:
                raise CLIError(f"mlneighbors {cmd}: --models {spec!r} has an empty item")
            head, *keys = piece.split(":")
            if position == 0 or head in MODELS or not out or not out[-1][1]:
                if head not in MODELS:
                    raise choice_error("model", head, list(MODELS), cmd)
                out.append((head, []))
            else:  # another value of the last key, perhaps followed by more keys (5,10:s=0.5,1)
                if "=" in head:
                    raise CLIError(f"mlneighbors {cmd}: --models {spec!r}: {piece!r} is neither a value nor a model")
                out[-1][1][-1][1].append(head)
            for item in keys:
                key, sep, value = item.partition("=")
                if not sep or not key.strip():
                    raise CLIError(f"mlneighbors {cmd}: --models {spec!r}: expected KEY=VALUE after ':', got {item!r}")
                out[-1][1].append((key.strip(), [value.strip()]))
    return out


def build_configurations(args: argparse.Namespace, cmd: str = RUN) -> dict[str, Any]:
    """``--models`` (with ``--k`` and ``--param``) as estimators by configuration name
    (``mlknn:k=5``): every combination of every grid, checked before anything runs."""
    from .. import MODELS, make_model
    from ._common import key_values, parse_value
    from ._models import build_models, route, valid_params

    specs = parse_specs(args.models, cmd)
    # --param: 'model.key=value' for the configurations of that model, 'key=value' for every
    # model that has the parameter (an error where none has)
    given = {name for name, _ in specs}
    shared: dict[str, list[str]] = {name: [] for name in given}
    for key, text in key_values(args.param, "--param", cmd):
        target, _, rest = key.partition(".")
        if rest and target in MODELS:
            if target not in given:
                raise CLIError(f"mlneighbors {cmd}: --param {key}={text} names model {target!r}, which is not "
                               f"among the models run ({', '.join(sorted(given))})")
            shared[target].append(f"{key}={text}")
            continue
        takers = [name for name in given if route(make_model(name), key) is not None]
        if not takers:
            valid = sorted({p for name in given for p in valid_params(make_model(name))})
            raise CLIError(f"mlneighbors {cmd}: unknown parameter {key!r} for {', '.join(sorted(given))}; valid "
                           f"parameters: {', '.join(valid)}")
        for name in takers:
            shared[name].append(f"{name}.{key}={text}")
    configurations: dict[str, Any] = {}
    for name, grid in specs:
        keys = [key for key, _ in grid]
        if len(set(keys)) != len(keys):
            raise CLIError(f"mlneighbors {cmd}: --models gives {name} a parameter twice ({', '.join(keys)})")
        for combo in itertools.product(*[values for _, values in grid]):
            label = name + "".join(f":{key}={value}" for key, value in zip(keys, combo, strict=True))
            if label in configurations:
                raise CLIError(f"mlneighbors {cmd}: --models names configuration {label!r} twice")
            k = args.k
            params = list(shared[name])
            for key, value in zip(keys, combo, strict=True):
                if key == "k":
                    try:
                        k = parse_value(value, 0)
                    except ValueError:
                        raise CLIError(f"mlneighbors {cmd}: --models {label}: k must be an integer, got "
                                       f"{value!r}") from None
                else:
                    params.append(f"{name}.{key}={value}")
            if k is not None and k < 1:
                raise CLIError(f"mlneighbors {cmd}: --models {label}: k must be at least 1, got {k}")
            configurations[label] = build_models([name], k, params, cmd, args.seed)[name]
    return configurations


# --------------------------------------------------------------------------------------
# run
# --------------------------------------------------------------------------------------


def _check_metrics(text: str | None, cmd: str) -> list[str]:
    from ..metrics import METRICS

    if text is None:
        return list(DEFAULT_METRICS)
    names = [m.strip() for m in text.split(",") if m.strip()]
    if not names:
        raise CLIError(f"mlneighbors {cmd}: --metrics is empty; valid: {', '.join(METRICS)}")
    for m in names:
        if m not in METRICS:
            raise choice_error("metric", m, list(METRICS), cmd)
    return list(dict.fromkeys(names))


def _load_datasets(args: argparse.Namespace) -> dict[str, Any]:
    """Every ``--datasets`` entry read as ``evaluate`` reads its DATA (the command line's
    loader: registered names, files and their options), all checked before anything runs."""
    from .._progress import task
    from ..benchmark import BenchmarkData
    from ._data import labels_of, load, scale_for

    if len(set(args.datasets)) != len(args.datasets):
        raise CLIError(f"mlneighbors {RUN}: --datasets names a dataset twice")
    out = {}
    with task("reading the data", total=len(args.datasets), unit="datasets") as bar:
        for name in args.datasets:
            one = argparse.Namespace(**vars(args))
            one.data, one.test = name, None
            one.cv = None if args.split else args.cv
            data = load(one, RUN, whole=not args.split)
            if args.split and data.test is None:
                raise CLIError(f"mlneighbors {RUN}: {name} has no standard train/test split; drop --split to "
                               "cross-validate it (--cv N)")
            n = data.train.n_samples
            if not args.split and args.cv > n:
                raise CLIError(f"mlneighbors {RUN}: {name} has {n} row(s); --cv {args.cv} needs at least "
                               f"{args.cv}, one per fold")
            test = data.test
            out[name] = BenchmarkData(data.train.X, labels_of(data.train),
                                      None if test is None else test.X, None if test is None else labels_of(test),
                                      scale=scale_for(args, data.train.X))
            bar.advance(1)
    return out


class _Resumable:
    """A run's output for ``main``: nothing to discard on failure (every cell committed stays);
    on Ctrl-C, how to go on."""

    def __init__(self, store: str) -> None:
        self.store = store

    def interrupted(self) -> str:
        return f"interrupted; every finished cell is in {self.store}: the same command computes the rest"

    def discard_empty(self) -> None:
        pass


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def cmd_benchmark_run(args: argparse.Namespace) -> int:
    import sqlite3
    from contextlib import nullcontext

    from ..benchmark import StoreError, run_benchmark
    from ..exceptions import InvalidParameterError
    from ._models import cluster_client

    if args.cv < 2:
        raise CLIError(f"mlneighbors {RUN}: --cv needs at least 2 folds, got {args.cv}")
    if args.repeats < 1:
        raise CLIError(f"mlneighbors {RUN}: --repeats must be at least 1, got {args.repeats}")
    if args.split and args.repeats != 1:
        raise CLIError(f"mlneighbors {RUN}: --repeats repeats cross-validation; the standard split (--split) is "
                       "one fold")
    for flag, value in (("--jobs", args.jobs), ("--workers", args.workers)):
        if value is not None and value < 1:
            raise CLIError(f"mlneighbors {RUN}: {flag} must be at least 1, got {value}")
    metrics = _check_metrics(args.metrics, RUN)
    models = build_configurations(args)
    datasets = _load_datasets(args)
    folds = 1 if args.split else args.cv * args.repeats

    def plan(cells: int, stored: int) -> None:
        if not args.quiet:
            print(f"benchmark: {_plural(len(datasets), 'dataset')} x {_plural(len(models), 'model')} x "
                  f"{_plural(folds, 'fold')} = {_plural(cells, 'cell')} ({_plural(len(metrics), 'metric')} each); "
                  f"{stored} already in {args.store}, {cells - stored} to compute", file=sys.stderr, flush=True)

    cluster = args.scheduler is not None or args.workers is not None
    args.outputs = _Resumable(args.store)  # what main says on Ctrl-C
    try:
        with cluster_client(args, "--scheduler/--workers") if cluster else nullcontext() as client:
            summary = run_benchmark(
                args.store, models, datasets, metrics=metrics, folds=args.cv, repeats=args.repeats, split=args.split,
                seed=args.seed, jobs=args.jobs, client=client, retry_failed=args.retry_failed,
                command=shlex.join(["mlneighbors", *args.argv]), on_plan=plan)
    except StoreError as exc:
        raise CLIError(f"mlneighbors {RUN}: {exc}") from None
    except sqlite3.DatabaseError as exc:  # a store damaged where the opening checks could not see
        raise CLIError(f"mlneighbors {RUN}: results store {args.store}: {' '.join(str(exc).split())}") from None
    except (InvalidParameterError, ValueError) as exc:
        # a bad parameter value, duplicated data, a ranking metric for a model without scores:
        # all refused before the store is touched (a model failing on a fold is a failed cell)
        raise CLIError(f"mlneighbors {RUN}: {' '.join(str(exc).split())}") from None
    if not args.quiet:
        for message in summary.warnings[:10]:
            warning_line(message)
        if len(summary.warnings) > 10:
            note(f"{len(summary.warnings) - 10} more warning(s) not shown (run_benchmark's RunSummary.warnings "
                 "has them all)")
        if summary.failed:
            note(f"{_plural(summary.failed, 'cell')} failed (NaN in the store; why: its 'failures' table; "
                 "--retry-failed computes them again)")
    saved = summary.searches_unshared - summary.searches
    share = f" ({100 * saved / summary.searches_unshared:.0f}% saved)" if summary.searches_unshared else ""
    print(f"{args.store}: {summary.computed} cells computed ({summary.failed} failed), {summary.stored} were stored, "
          f"{summary.cells} in all; {summary.seconds:.1f} s; neighbour searches: {summary.searches} for "
          f"{summary.searches_unshared} asked{share}")
    return 0


# --------------------------------------------------------------------------------------
# report
# --------------------------------------------------------------------------------------


def cmd_benchmark_report(args: argparse.Namespace) -> int:
    suffix = os.path.splitext(args.diagram or "")[1].lower()
    if args.diagram is not None and suffix not in (".png", ".svg"):
        raise CLIError(f"mlneighbors {REPORT}: --diagram {args.diagram}: give a .png or .svg file")
    rows, provenance = _read(args.store, REPORT, lambda store: (list(store.rows()), store.provenance()))
    stored_metrics = list(dict.fromkeys(r[3] for r in rows))
    metrics = None
    if args.metrics is not None:
        from ..metrics import METRICS

        metrics = [m.strip() for m in args.metrics.split(",") if m.strip()]
        for m in metrics:
            if m in METRICS and m not in stored_metrics:
                raise CLIError(f"mlneighbors {REPORT}: metric {m!r} is not in {args.store}: its runs computed "
                               f"{', '.join(stored_metrics)} (a run with --metrics {m} adds it)")
            if m not in stored_metrics:
                raise choice_error("metric", m, stored_metrics, REPORT)
    models = sorted({r[1] for r in rows})
    if args.control is not None and args.control not in models:
        configurations = [m for m in models if m.split(":")[0] == args.control]
        if configurations:  # a model name, where the store holds its configurations
            raise CLIError(f"mlneighbors {REPORT}: --control {args.control} names a model, and the store holds "
                           f"its configurations {', '.join(configurations)}: give one of them, e.g. --control "
                           f"{configurations[0]}")
        raise choice_error("control model", args.control, models, REPORT)
    if not 0 < args.alpha < 1:
        raise CLIError(f"mlneighbors {REPORT}: --alpha must be in (0, 1), got {args.alpha:g}")
    if args.cd != "nemenyi" and args.diagram is None:
        raise CLIError(f"mlneighbors {REPORT}: --cd {args.cd} chooses the diagram's bars: give --diagram FILE too")
    if args.fold_test and args.control is None:
        raise CLIError(f"mlneighbors {REPORT}: --fold-test tests every configuration against the control: give "
                       "--control MODEL")
    if not args.rope >= 0 or args.rope == float("inf"):
        raise CLIError(f"mlneighbors {REPORT}: --rope must be a number >= 0, got {args.rope:g}")
    if args.samples < 1:
        raise CLIError(f"mlneighbors {REPORT}: --samples must be at least 1, got {args.samples}")
    if args.bayesian:
        from importlib.util import find_spec

        if find_spec("baycomp") is None:  # said before the store is read
            raise CLIError(f"mlneighbors {REPORT}: --bayesian needs baycomp: pip install 'mlneighbors[stats]'")
    try:
        from ..benchmark import build_report
    except ImportError as exc:
        raise ImportError(f"the report needs its statistics module: {exc}") from None
    try:
        report = build_report(rows, metrics=metrics, control=args.control, alpha=args.alpha, provenance=provenance,
                              bayesian=args.bayesian, rope=args.rope, samples=args.samples, seed=args.seed,
                              fold_test=args.fold_test)
    except ValueError as exc:
        raise CLIError(f"mlneighbors {REPORT}: {' '.join(str(exc).split())}") from None
    text = {"markdown": report.to_markdown, "latex": report.to_latex, "csv": report.to_csv,
            "json": report.to_json}[args.format]()
    if args.diagram is not None:
        drawn = metrics or stored_metrics
        for metric in drawn:
            path = args.diagram if len(drawn) == 1 else f"{args.diagram[: -len(suffix)]}-{metric}{suffix}"
            try:
                report.cd_diagram(path, metric, cliques=args.cd)
            except ValueError as exc:  # no test ran for this metric (one model, < 2 complete datasets)
                if len(drawn) == 1:
                    raise CLIError(f"mlneighbors {REPORT}: {' '.join(str(exc).split())}") from None
                note(f"no diagram for {metric}: {' '.join(str(exc).split())}", False)
    _write(text, args.out)
    return 0


def _read(store: str, cmd: str, read: Any) -> Any:
    """``read(Store)`` on the store opened read-only, in one snapshot; one line on any problem,
    and for a store without results."""
    import sqlite3

    from ..benchmark import Store, StoreError

    try:
        with Store(store) as opened, opened.snapshot():
            if not opened.has_results():
                raise CLIError(f"mlneighbors {cmd}: {store} holds no results yet (run 'mlneighbors benchmark run')")
            return read(opened)
    except StoreError as exc:
        raise CLIError(f"mlneighbors {cmd}: {exc}") from None
    except sqlite3.DatabaseError as exc:
        raise CLIError(f"mlneighbors {cmd}: results store {store} cannot be read: {' '.join(str(exc).split())}") \
            from None


def _write(text: str, out: str | None) -> None:
    if out is None:
        print(text.rstrip("\n"))
        return
    from .._files import atomic_path

    with atomic_path(out) as tmp, open(tmp, "w", encoding="utf-8") as fh:
        fh.write(text if text.endswith("\n") else text + "\n")


def cmd_benchmark_export(args: argparse.Namespace) -> int:
    """Every stored value, one row per dataset, configuration, fold and metric, with its
    provenance: what a reader recomputes the report from."""
    import csv
    import io
    import json

    from .._json import finite

    records, provenance = _read(args.store, EXPORT, lambda store: (store.table("results"), store.provenance()))
    described = provenance["datasets"]
    protocol = provenance["protocol"]
    columns = ["dataset", "model", "fold", "metric", "value", "seconds", "run", "dataset_sha256", "mlneighbors",
               "protocol", "seed"]
    rows = [[r["dataset"], r["model"], r["fold"], r["metric"], r["value"], r["seconds"], r["run"],
             (described.get(r["dataset"]) or {}).get("sha256"), provenance["mlneighbors"],
             json.dumps(protocol, sort_keys=True), (protocol or {}).get("seed")]
            for r in sorted(records, key=lambda r: (r["dataset"], r["model"], r["fold"], r["metric"]))]
    if args.format == "json":
        text = json.dumps(finite({"provenance": provenance,
                                  "values": [dict(zip(columns[:7], row[:7], strict=True)) for row in rows]}),
                          indent=2, ensure_ascii=False, allow_nan=False)
    else:
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(columns)
        writer.writerows([["" if v is None else repr(v) if isinstance(v, float) else v for v in row]
                          for row in rows])
        text = buf.getvalue()
    _write(text, args.out)
    return 0
