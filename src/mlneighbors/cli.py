"""The ``mlneighbors`` command line.

Commands: ``datasets`` (the registry), ``fetch`` (downloads), ``evaluate`` (one model's
metrics), ``compare`` (models side by side) and ``reproduce`` (a paper's tables and
figures, beside the paper's numbers).

Uses only the public API. Every command that prints results takes ``--format
table|json|csv``; a bad argument prints one line naming the problem and the valid
choices, and exits with status 2. Long runs show a progress bar (tqdm, when it is
installed) on standard error when it is a terminal, unless ``--quiet``.
"""

from __future__ import annotations

import argparse
import csv
import difflib
import io
import json
import os
import sys
import warnings
from collections.abc import Callable, Sequence
from typing import Any

from . import __version__
from .exceptions import DatasetNotFoundError

FORMATS = ("table", "json", "csv")

#: metrics evaluate and compare report unless --metrics says otherwise
DEFAULT_METRICS = (
    "hamming_loss",
    "subset_accuracy",
    "example_accuracy",
    "example_f1",
    "micro_f1",
    "macro_f1",
    "one_error",
    "ranking_loss",
    "normalized_coverage",
    "average_precision",
)

#: default output folder of ``reproduce``
DEFAULT_OUT = "reproductions"


class CLIError(Exception):
    """A user error: printed as one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one clear line, not a usage dump
        raise CLIError(f"{self.prog}: {message}")


def format_rows(rows: list[dict[str, Any]], fmt: str, columns: Sequence[str] | None = None) -> str:
    """Render a list of flat records as an aligned text table, JSON or CSV."""
    columns = list(columns) if columns is not None else (list(rows[0]) if rows else [])
    if fmt == "json":
        return json.dumps([{c: r.get(c) for c in columns} for r in rows], indent=2)
    if fmt == "csv":
        buf = io.StringIO()
        writer = csv.DictWriter(buf, fieldnames=columns, extrasaction="ignore", lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
        return buf.getvalue().rstrip("\n")
    cells = [[_cell(r.get(c)) for c in columns] for r in rows]
    widths = [max([len(c)] + [len(row[i]) for row in cells]) for i, c in enumerate(columns)]
    numeric = [all(_is_number(r.get(c)) for r in rows) for c in columns]

    def line(values: Sequence[str]) -> str:
        return "  ".join(
            v.rjust(w) if num else v.ljust(w) for v, w, num in zip(values, widths, numeric)
        ).rstrip()

    out = [line(columns), line(["-" * w for w in widths])]
    out.extend(line(row) for row in cells)
    return "\n".join(out)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) or value is None


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.4f}"
    return str(value)


def _file_state(statuses: list[Any]) -> str:
    required = [s for s in statuses if s.spec.required]
    missing = sum(not s.present for s in required)
    bad = [s for s in statuses if s.present and s.verified is False]
    if bad:
        return "checksum mismatch: " + ", ".join(s.path.name for s in bad)
    if missing:
        return f"missing {missing}/{len(required)}"
    if any(s.verified is None for s in required):
        return "present (not verified)"
    return "present, verified"


def _cmd_datasets(args: argparse.Namespace) -> int:
    from .datasets import dataset_status, get_data_home, get_dataset_spec, list_datasets

    home = get_data_home(args.data_home)
    rows = []
    for name in list_datasets():
        spec = get_dataset_spec(name)
        stats = spec.stats["all"]
        rows.append(
            {
                "dataset": name,
                "domain": spec.domain.split(" (")[0],
                "splits": "/".join(spec.splits),
                "n_samples": stats.n_samples,
                "n_features": stats.n_features,
                "n_labels": stats.n_labels,
                "cardinality": stats.cardinality,
                "files": _file_state(dataset_status(name, home, verify=not args.no_verify)),
            }
        )
    if args.format == "table":
        source = "--data-home" if args.data_home else (
            "$MLNEIGHBORS_DATA" if os.environ.get("MLNEIGHBORS_DATA") else "per-user cache"
        )
        print(f"data directory: {home} ({source})")
    print(format_rows(rows, args.format))
    return 0


def _cmd_fetch(args: argparse.Namespace) -> int:
    from .datasets import fetch_dataset, get_dataset_spec, list_datasets

    names = list_datasets() if args.names == ["all"] else args.names
    for name in names:
        get_dataset_spec(name)  # all names checked before anything is downloaded
    for name in names:
        paths = fetch_dataset(name, args.data_home, mirror=args.mirror)
        if not args.quiet:
            print(f"{name}: {len(paths)} files present and verified")
    return 0


# ------------------------------------------------------------------------------------
# progress bars
# ------------------------------------------------------------------------------------


def _progress_factory(quiet: bool) -> Callable[[int, str], Any] | None:
    """tqdm bars on stderr when it is a terminal (and not --quiet); None otherwise.

    The bar appears only once a run has lasted more than a second and a half, so quick
    commands print nothing extra.  Without tqdm there is no bar (it is an optional extra).
    """
    if quiet or not sys.stderr.isatty():
        return None
    try:
        from tqdm import tqdm
    except ImportError:
        return None

    def factory(total: int, desc: str) -> Any:
        return tqdm(total=total, desc=desc, file=sys.stderr, leave=False, delay=1.5,
                    dynamic_ncols=True)

    return factory


# ------------------------------------------------------------------------------------
# models by name (the registry: mlneighbors.MODELS)
# ------------------------------------------------------------------------------------


def _choice_error(what: str, value: str, valid: Sequence[str], cmd: str) -> CLIError:
    close = difflib.get_close_matches(value, list(valid), n=2, cutoff=0.6)
    hint = f" (did you mean {', '.join(repr(c) for c in close)}?)" if close else ""
    return CLIError(f"mlneighbors {cmd}: unknown {what} {value!r}{hint}; valid: {', '.join(valid)}")


def _parse_value(text: str, default: Any) -> Any:
    """A ``--param`` value as the parameter's type (from its default), else a literal guess."""
    low = text.strip().lower()
    if isinstance(default, bool):
        if low in ("true", "yes", "1", "on"):
            return True
        if low in ("false", "no", "0", "off"):
            return False
        raise ValueError("expected true or false")
    if low in ("none", "null"):
        return None
    if low in ("true", "false"):
        return low == "true"
    if isinstance(default, int):
        try:
            return int(text)
        except ValueError:
            raise ValueError("expected an integer") from None
    if isinstance(default, float):
        try:
            return int(text) if low.lstrip("+-").isdigit() else float(text)
        except ValueError:
            raise ValueError("expected a number") from None
    if text.strip()[:1] in "{[":
        try:
            return json.loads(text)
        except json.JSONDecodeError:
            raise ValueError("expected JSON") from None
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return text


def _route(model: Any, key: str) -> str | None:
    """The parameter name that ``key`` sets on ``model`` (a pipeline: the step that has it)."""
    params = model.get_params(deep=True)
    steps = [name for name, _ in getattr(model, "steps", [])]
    for step in steps:
        if f"{step}__{key}" in params:
            return f"{step}__{key}"
    if steps:
        return key if key in params and "__" in key else None
    return key if key in params else None


def _valid_params(model: Any) -> list[str]:
    params = model.get_params(deep=True)
    steps = tuple(f"{name}__" for name, _ in getattr(model, "steps", []))
    if steps:
        return sorted(p.split("__", 1)[1] for p in params if p.startswith(steps))
    return sorted(params)


def _build_models(names: Sequence[str], k: int | None, params: Sequence[str], cmd: str,
                  seed: int) -> dict[str, Any]:
    """Estimators by CLI name with --k and --param applied; CLIError on any bad name or value.

    ``--param key=value`` sets ``key`` on every model that has it (an error if none has);
    ``--param model.key=value`` on that model only.
    """
    from . import MODELS, make_model

    models: dict[str, Any] = {}
    for name in names:
        if name not in MODELS:
            raise _choice_error("model", name, list(MODELS), cmd)
        model = make_model(name, k)
        if "random_state" in model.get_params():
            model.set_params(random_state=seed)
        models[name] = model
    for item in params:
        if "=" not in item:
            raise CLIError(f"mlneighbors {cmd}: --param expects key=value, got {item!r}")
        key, text = (part.strip() for part in item.split("=", 1))
        targets = list(models)
        if "." in key and key.split(".", 1)[0] in MODELS:
            target, key = key.split(".", 1)
            if target not in models:
                raise CLIError(f"mlneighbors {cmd}: --param {item!r} names model {target!r}, which is "
                               f"not among the models run ({', '.join(models)})")
            targets = [target]
        hits = 0
        for name in targets:
            model = models[name]
            full = _route(model, key)
            if full is None:
                continue
            default = model.get_params(deep=True)[full]
            try:
                value = _parse_value(text, default)
            except ValueError as exc:
                raise CLIError(f"mlneighbors {cmd}: bad value {text!r} for parameter {key!r} of "
                               f"{name}: {exc}") from None
            model.set_params(**{full: value})
            hits += 1
        if hits == 0:
            valid = sorted({p for name in targets for p in _valid_params(models[name])})
            names_run = ", ".join(targets)
            raise CLIError(f"mlneighbors {cmd}: unknown parameter {key!r} for {names_run}; valid "
                           f"parameters: {', '.join(valid)}")
    return models


# ------------------------------------------------------------------------------------
# evaluate and compare
# ------------------------------------------------------------------------------------


def _check_dataset(name: str, cmd: str) -> Any:
    from .datasets import get_dataset_spec

    try:
        return get_dataset_spec(name)
    except ValueError as exc:
        raise CLIError(f"mlneighbors {cmd}: {exc}") from None


def _check_metrics(text: str | None, cmd: str) -> list[str]:
    from .metrics import METRICS

    if text is None:
        return list(DEFAULT_METRICS)
    names = [m.strip() for m in text.split(",") if m.strip()]
    for m in names:
        if m not in METRICS:
            raise _choice_error("metric", m, list(METRICS), cmd)
    if not names:
        raise CLIError(f"mlneighbors {cmd}: --metrics is empty; valid: {', '.join(METRICS)}")
    return names


def _protocol(args: argparse.Namespace, spec: Any, cmd: str) -> tuple[str, int | None]:
    """("split", None) or ("cv", n_folds), checked against what the dataset ships."""
    if args.split:
        if "train" not in spec.splits:
            raise CLIError(f"mlneighbors {cmd}: dataset {spec.name!r} ships no standard train/test "
                           "split; use --cv N")
        return "split", None
    if args.cv is not None:
        if args.cv < 2:
            raise CLIError(f"mlneighbors {cmd}: --cv needs at least 2 folds, got {args.cv}")
        return "cv", args.cv
    return ("split", None) if "train" in spec.splits else ("cv", 10)


def _run_models(args: argparse.Namespace, cmd: str, names: Sequence[str]) -> tuple[dict, str]:
    """Fit and score every model on the split or on every fold (``evaluate_models``: one
    neighbour search per fold, shared by the models).

    Returns ``({model: {metric: [value per fold]}}, description of the protocol)``.
    """
    import numpy as np
    from sklearn.utils._param_validation import InvalidParameterError

    from .datasets import load_dataset
    from .model_selection import evaluate_models

    spec = _check_dataset(args.dataset, cmd)
    metrics = _check_metrics(args.metrics, cmd)
    protocol, n_folds = _protocol(args, spec, cmd)
    if args.k is not None and args.k < 1:
        raise CLIError(f"mlneighbors {cmd}: --k must be at least 1, got {args.k}")
    models = _build_models(names, args.k, args.param or [], cmd, args.seed)
    backend, backend_params = _backend(args, cmd)
    if protocol == "split":
        data = load_dataset(spec.name, "train", args.data_home)
        test = load_dataset(spec.name, "test", args.data_home)
        where = {"test": (test.X, np.asarray(test.Y))}
        what = f"standard split ({data.n_samples} train / {test.n_samples} test)"
    else:
        data = load_dataset(spec.name, "all", args.data_home)
        where = {"cv": n_folds, "random_state": args.seed}
        what = f"{n_folds}-fold stratified CV (seed {args.seed}, {data.n_samples} instances)"
    if args.minmax:
        what += ", min-max scaled with training ranges"
    factory = _progress_factory(args.quiet)
    n_parts = 1 if protocol == "split" else n_folds
    bar = factory(n_parts * len(models), f"{cmd} {spec.name}") if factory else None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            results = evaluate_models(models, data.X, np.asarray(data.Y), metrics=metrics,
                                      scale="minmax" if args.minmax else None, progress=bar,
                                      backend=backend, backend_params=backend_params, **where)
    except InvalidParameterError as exc:  # a bad --param value, found by the model
        raise CLIError(f"mlneighbors {cmd}: {exc}") from None
    finally:
        if bar is not None:
            bar.close()
    out = {}
    for name, result in results.items():
        out[name] = {m: list(result.per_fold[m]) for m in metrics}
        out[name]["fit_predict_seconds"] = list(result.fit_time + result.predict_time)
    return out, what


def _backend_args(p: argparse.ArgumentParser) -> None:
    from .neighbors import BACKENDS

    p.add_argument("--backend", metavar="NAME",
                   help=f"the neighbour search of every model: {', '.join(sorted(BACKENDS))} (default: exact)")
    p.add_argument("--backend-param", action="append", metavar="KEY=VALUE",
                   help="a parameter of --backend (repeatable), e.g. device=cuda")


def _backend(args: argparse.Namespace, cmd: str) -> tuple[str | None, dict[str, Any] | None]:
    """``--backend`` and its ``--backend-param`` values, checked before anything runs."""
    from .neighbors import BACKENDS, get_index

    if args.backend is None:
        if args.backend_param:
            raise CLIError(f"mlneighbors {cmd}: --backend-param needs --backend")
        return None, None
    if args.backend not in BACKENDS:
        raise _choice_error("backend", args.backend, sorted(BACKENDS), cmd)
    params: dict[str, Any] = {}
    defaults = BACKENDS[args.backend]().get_params()
    for item in args.backend_param or []:
        if "=" not in item:
            raise CLIError(f"mlneighbors {cmd}: --backend-param expects key=value, got {item!r}")
        key, text = (part.strip() for part in item.split("=", 1))
        if key not in defaults or key == "metric":
            valid = ", ".join(sorted(k for k in defaults if k != "metric"))
            raise CLIError(f"mlneighbors {cmd}: backend {args.backend!r} has no parameter {key!r}; valid: {valid}")
        try:
            params[key] = _parse_value(text, defaults[key])
        except ValueError as exc:
            raise CLIError(f"mlneighbors {cmd}: bad value {text!r} for --backend-param {key}: {exc}") from None
    get_index(args.backend, **params)  # a missing library or a bad value, before any computing
    return args.backend, params or None


def _evaluate_common_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("dataset", metavar="DATASET", help="a registered dataset (see 'mlneighbors datasets')")
    p.add_argument("--k", type=int, metavar="K", help="neighbours (b for bknn / blda-bknn); default: the model's")
    p.add_argument("--param", action="append", metavar="KEY=VALUE",
                   help="a model parameter (repeatable); 'model.key=value' for one model of compare")
    group = p.add_mutually_exclusive_group()
    group.add_argument("--cv", type=int, metavar="N", help="N-fold stratified cross-validation")
    group.add_argument("--split", action="store_true",
                       help="the dataset's standard train/test split (the default where it ships one; "
                            "else --cv 10)")
    p.add_argument("--minmax", action="store_true",
                   help="min-max scale the features with the training ranges (as MULAN does); off by default")
    p.add_argument("--metrics", metavar="M1,M2", help=f"metrics to report (default: {','.join(DEFAULT_METRICS)})")
    p.add_argument("--seed", type=int, default=0, help="seed of the folds and of k-means (default 0)")
    p.add_argument("--data-home", metavar="DIR")
    _backend_args(p)
    p.add_argument("--format", choices=FORMATS, default="table")
    p.add_argument("--quiet", action="store_true", help="no progress bar")


def _cmd_evaluate(args: argparse.Namespace) -> int:
    import numpy as np

    results, what = _run_models(args, "evaluate", [args.model])
    per_metric = results[args.model]
    folds = len(per_metric["fit_predict_seconds"])
    rows = []
    for metric, values in per_metric.items():
        rows.append({
            "metric": metric,
            "value": float(np.mean(values)),
            "std": float(np.std(values)) if folds > 1 else None,
        })
    if args.format == "table":
        print(f"{args.model} on {args.dataset}: {what}")
    print(format_rows(rows, args.format))
    return 0


def _cmd_compare(args: argparse.Namespace) -> int:
    import numpy as np

    names = [n.strip() for n in args.models.split(",") if n.strip()]
    if not names:
        from . import MODELS

        raise CLIError(f"mlneighbors compare: --models is empty; valid: {', '.join(MODELS)}")
    if len(set(names)) != len(names):
        raise CLIError("mlneighbors compare: --models names a model twice")
    results, what = _run_models(args, "compare", names)
    metrics = list(results[names[0]])
    rows = [{"metric": m, **{n: float(np.mean(results[n][m])) for n in names}} for m in metrics]
    if args.format == "table":
        print(f"{args.dataset}: {what}; mean over folds")
    print(format_rows(rows, args.format, ["metric", *names]))
    return 0


# ------------------------------------------------------------------------------------
# reproduce
# ------------------------------------------------------------------------------------


def _cmd_reproduce(args: argparse.Namespace) -> int:
    from .experiments import COLUMNS, list_papers, reproduce

    papers = list_papers()
    wanted = papers if args.paper == "all" else [args.paper]
    for name in wanted:
        if name not in papers:
            raise _choice_error("paper", name, papers + ["all"], "reproduce")
    if not args.no_figures:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            raise ImportError("the figures need matplotlib: pip install 'mlneighbors[plot]' "
                              "(or pass --no-figures)") from None
    backend, backend_params = _backend(args, "reproduce")
    factory = _progress_factory(args.quiet)
    tidy: list[dict[str, Any]] = []
    for name in wanted:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            rep = reproduce(name, quick=args.quick, out=args.out, data_home=args.data_home,
                            figures=not args.no_figures, progress=factory, random_state=args.seed,
                            backend=backend, backend_params=backend_params)
        if args.format == "table":
            print(f"== {rep.paper}: {rep.title}")
            for title, rows in rep.tables():
                compared = any(" / " in str(v) for r in rows for v in r.values())
                note = "  (ours / paper; * differs by more than 0.02)" if compared else ""
                print(f"\n{title}{note}")
                print(format_rows(rows, "table"))
            print()
        tidy += [{"reproduction": rep.paper, **r} for r in rep.rows]
        if not args.quiet:
            where = os.path.join(args.out, rep.paper)
            n_diff = len(rep.differences())
            print(f"{rep.paper}: {rep.seconds:.1f} s; {n_diff} cell(s) differ from the paper by more "
                  f"than 0.02 (see {os.path.join(where, 'report.md')}); wrote {len(rep.files)} files "
                  f"to {where}", file=sys.stderr)
    if args.format != "table":
        print(format_rows(tidy, args.format, ["reproduction", *COLUMNS]))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="mlneighbors",
        description="Lazy (k-nearest-neighbour) multi-label classification.",
    )
    parser.add_argument("--version", action="version", version=f"mlneighbors {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True

    p = sub.add_parser("datasets", help="list the registered datasets and whether their files are present and verified")
    p.add_argument("--data-home", metavar="DIR", help="data directory (default: $MLNEIGHBORS_DATA, else a per-user cache)")
    p.add_argument("--format", choices=FORMATS, default="table")
    p.add_argument("--no-verify", action="store_true", help="do not compute checksums")
    p.set_defaults(func=_cmd_datasets)

    p = sub.add_parser("fetch", help="download datasets (verified by sha256) into the data directory")
    p.add_argument("names", nargs="+", metavar="DATASET", help="registered names, or 'all'")
    p.add_argument("--data-home", metavar="DIR")
    p.add_argument("--mirror", metavar="URL", help="base URL serving <folder>/<file> instead of the sources")
    p.add_argument("--quiet", action="store_true")
    p.set_defaults(func=_cmd_fetch)

    from . import MODELS

    names = ", ".join(MODELS)
    models_epilog = "models:\n" + "\n".join(f"  {n:10s} {spec.description}" for n, spec in MODELS.items())
    p = sub.add_parser("evaluate", help="one model's metrics on a dataset (standard split or CV)",
                       epilog=models_epilog, formatter_class=argparse.RawDescriptionHelpFormatter)
    _evaluate_common_args(p)
    p.add_argument("--model", required=True, metavar="NAME", help=f"one of: {names}")
    p.set_defaults(func=_cmd_evaluate)

    p = sub.add_parser("compare", help="several models side by side on one dataset",
                       epilog=models_epilog, formatter_class=argparse.RawDescriptionHelpFormatter)
    _evaluate_common_args(p)
    p.add_argument("--models", required=True, metavar="A,B,C", help=f"comma-separated: {names}")
    p.set_defaults(func=_cmd_compare)

    p = sub.add_parser("reproduce", help="recompute a paper's tables and figures beside the paper's numbers")
    p.add_argument("paper", metavar="PAPER", help="spyromitros2008, laml2018, wang2010, nedungadi, or 'all'")
    p.add_argument("--quick", action="store_true", help="a smoke run: few folds, k values and datasets")
    p.add_argument("--out", default=DEFAULT_OUT, metavar="DIR",
                   help=f"write DIR/<paper>/ (table.csv, table.md, report.md, figures); default ./{DEFAULT_OUT}")
    p.add_argument("--no-figures", action="store_true", help="skip the PNG figures (they need matplotlib)")
    p.add_argument("--seed", type=int, default=0, help="seed of the folds and of k-means (default 0)")
    p.add_argument("--data-home", metavar="DIR")
    _backend_args(p)
    p.add_argument("--format", choices=FORMATS, default="table")
    p.add_argument("--quiet", action="store_true", help="no progress bar, no summary line")
    p.set_defaults(func=_cmd_reproduce)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        return int(args.func(args))
    except CLIError as exc:
        print(str(exc), file=sys.stderr)
        return 2
    except (ValueError, OSError, ImportError) as exc:
        if isinstance(exc, DatasetNotFoundError) and exc.dataset:  # the command line's remedy
            exc = exc.with_hint(
                "Put the file there, point $MLNEIGHBORS_DATA or --data-home at a folder holding "
                f"it, or run 'mlneighbors fetch {exc.dataset}' to download it."
            )
        message = " ".join(str(exc).split())  # one line, whatever the exception's layout
        print(f"mlneighbors: error: {message}", file=sys.stderr)
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
