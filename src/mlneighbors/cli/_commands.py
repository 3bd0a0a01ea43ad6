"""The commands: datasets, fetch, evaluate, compare, fit, predict, reproduce."""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import __version__
from ._common import (
    DEFAULT_METRICS,
    CLIError,
    Outputs,
    choice_error,
    emit,
    format_rows,
    jsonable,
    note,
    progress_factory,
)
from ._data import Data, describe_scale, labels_of, load, read_file, scale_for
from ._models import apply_backend, backend, build_models, dask_client, exact_note, model_params

DEFAULT_OUT = "reproductions"

# --------------------------------------------------------------------------------------
# datasets and fetch
# --------------------------------------------------------------------------------------


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


def cmd_datasets(args: argparse.Namespace) -> int:
    from ..datasets import (
        data_home_source,
        dataset_status,
        get_data_home,
        get_dataset_spec,
        list_datasets,
    )

    home = get_data_home(args.data_home)
    rows = []
    for name in list_datasets():
        spec = get_dataset_spec(name)
        stats = spec.stats["all"]
        rows.append({
            "dataset": name,
            "domain": spec.domain.split(" (")[0],
            "splits": "/".join(spec.splits),
            "n_samples": stats.n_samples,
            "n_features": stats.n_features,
            "n_labels": stats.n_labels,
            "cardinality": stats.cardinality,
            "files": _file_state(dataset_status(name, home, verify=not args.no_verify)),
        })
    if args.format == "table":
        print(f"data directory: {home} ({data_home_source(args.data_home)})")
    print(format_rows(rows, args.format))
    return 0


def cmd_fetch(args: argparse.Namespace) -> int:
    from ..datasets import fetch_dataset, get_dataset_spec, list_datasets

    names = list_datasets() if args.names == ["all"] else args.names
    for name in names:
        get_dataset_spec(name)  # all names checked before anything is downloaded
    for name in names:
        paths = fetch_dataset(name, args.data_home, mirror=args.mirror)
        if not args.quiet:
            print(f"{name}: {len(paths)} files present and verified")
    return 0


# --------------------------------------------------------------------------------------
# evaluate and compare
# --------------------------------------------------------------------------------------


def _check_metrics(text: str | None, cmd: str) -> list[str]:
    from ..metrics import METRICS

    if text is None:
        return list(DEFAULT_METRICS)
    names = [m.strip() for m in text.split(",") if m.strip()]
    for m in names:
        if m not in METRICS:
            raise choice_error("metric", m, list(METRICS), cmd)
    if not names:
        raise CLIError(f"mlneighbors {cmd}: --metrics is empty; valid: {', '.join(METRICS)}")
    return names


def _protocol(args: argparse.Namespace, data: Data, cmd: str) -> tuple[dict[str, Any], str]:
    """The runner's arguments for the split or the folds, and their description."""
    n_train = data.train.n_samples
    if data.test is not None:
        if args.cv is not None:
            raise CLIError(f"mlneighbors {cmd}: --cv and a test part (--test, or a dataset's standard split) "
                           "exclude each other; pass --cv N alone for cross-validation")
        what = "standard split" if data.registered and not args.test else "train/test files"
        return ({"test": (data.test.X, labels_of(data.test))},
                f"{what} ({n_train} train / {data.test.n_samples} test)")
    n_folds = args.cv if args.cv is not None else 10
    if n_folds < 2:
        raise CLIError(f"mlneighbors {cmd}: --cv needs at least 2 folds, got {n_folds}")
    return ({"cv": n_folds, "random_state": args.seed},
            f"{n_folds}-fold stratified CV (seed {args.seed}, {n_train} instances)")


def _clipped_notices(caught: Sequence[warnings.WarningMessage], quiet: bool) -> None:
    """One line per distinct clipped k (the runner fits many folds)."""
    from ..exceptions import NeighborsWarning

    seen = []
    for w in caught:
        if issubclass(w.category, NeighborsWarning):
            text = str(w.message).split("; using ")
            msg = f"{text[0]}; using {text[1]}" if len(text) == 2 else str(w.message)
            if msg not in seen:
                seen.append(msg)
    for msg in seen:
        note(msg, quiet)


def _run_models(args: argparse.Namespace, cmd: str, names: Sequence[str]) -> tuple[dict, dict[str, Any], str]:
    """Fit and score every model on the split or on every fold (``evaluate_models``: one
    neighbour search per fold, shared by the models).

    Returns ``({model: {metric: [value per fold]}}, metadata, header text)``.
    """
    from sklearn.utils._param_validation import InvalidParameterError

    from ..model_selection import evaluate_models

    metrics = _check_metrics(args.metrics, cmd)
    models = build_models(names, args.k, args.param or [], cmd, args.seed)
    backend_name, backend_params = backend(args, cmd)
    data = load(args, cmd)
    where, what = _protocol(args, data, cmd)
    slow = exact_note(backend_name, data.train.X, cmd, args.quiet)
    scale = scale_for(args, data.train.X)
    factory = progress_factory(args.quiet)
    n_parts = 1 if "test" in where else where["cv"]
    bar = factory(n_parts * len(models), f"{cmd} {os.path.basename(data.label)}") if factory else None
    try:
        with dask_client(args), warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            results = evaluate_models(models, data.train.X, labels_of(data.train), metrics=metrics, scale=scale,
                                      progress=bar, backend=backend_name, backend_params=backend_params, **where)
    except InvalidParameterError as exc:  # a bad --param value, found by the model
        raise CLIError(f"mlneighbors {cmd}: {exc}") from None
    finally:
        if bar is not None:
            bar.close()
    _clipped_notices(caught, args.quiet)
    out = {}
    for name, result in results.items():
        out[name] = {m: list(result.per_fold[m]) for m in metrics}
        out[name]["fit_predict_seconds"] = list(result.fit_time + result.predict_time)
    meta = {
        "dataset": data.label,
        "protocol": what,
        "seed": args.seed,
        "scale": scale,
        "backend": backend_name or "exact",
        "params": jsonable(model_params(models)),
        "mlneighbors": __version__,
    }
    return out, meta, f"{what}; {describe_scale(scale, args.scale is not None)}" + (f"; note: {slow}" if slow else "")


def cmd_evaluate(args: argparse.Namespace) -> int:
    results, meta, what = _run_models(args, "evaluate", [args.model])
    per_metric = results[args.model]
    folds = len(per_metric["fit_predict_seconds"])
    rows = [
        {"metric": metric, "value": float(np.mean(values)), "std": float(np.std(values)) if folds > 1 else None}
        for metric, values in per_metric.items()
    ]
    meta["model"] = args.model
    emit(rows, args.format, ["metric", "value", "std"], meta, header=f"{args.model} on {meta['dataset']}: {what}")
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    from .. import MODELS

    names = [n.strip() for n in args.models.split(",") if n.strip()]
    if not names:
        raise CLIError(f"mlneighbors compare: --models is empty; valid: {', '.join(MODELS)}")
    if len(set(names)) != len(names):
        raise CLIError("mlneighbors compare: --models names a model twice")
    results, meta, what = _run_models(args, "compare", names)
    metrics = list(results[names[0]])
    rows = [{"metric": m, **{n: float(np.mean(results[n][m])) for n in names}} for m in metrics]
    meta["models"] = names
    emit(rows, args.format, ["metric", *names], meta, header=f"{meta['dataset']}: {what}; mean over folds")
    return 0


# --------------------------------------------------------------------------------------
# fit and predict: a saved model for a user's own data
# --------------------------------------------------------------------------------------


def cmd_fit(args: argparse.Namespace) -> int:
    """Fit a model on all of DATA (scaler and model in one Pipeline) and save it."""
    from sklearn.pipeline import Pipeline
    from sklearn.utils._param_validation import InvalidParameterError

    from .. import save
    from .._files import check_writable
    from ..model_selection import make_scaler

    models = build_models([args.model], args.k, args.param or [], "fit", args.seed)
    backend_name, backend_params = backend(args, "fit")
    apply_backend(models, backend_name, backend_params)
    check_writable(os.path.dirname(os.path.abspath(args.out)))
    args.outputs = Outputs(args.out)
    data = load(args, "fit", whole=True)
    exact_note(backend_name, data.train.X, "fit", args.quiet)
    scale = scale_for(args, data.train.X)
    scaler = make_scaler(scale, sparse=hasattr(data.train.X, "tocsr"))
    steps = ([("scale", scaler)] if scaler is not None else []) + [("model", models[args.model])]
    pipeline = Pipeline(steps)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            pipeline.fit(data.train.X, labels_of(data.train))
        except InvalidParameterError as exc:
            raise CLIError(f"mlneighbors fit: {exc}") from None
    _clipped_notices(caught, args.quiet)
    pipeline.label_names_ = [str(n) for n in data.train.label_names]
    save(pipeline, args.out, include_index=args.include_index)
    if not args.quiet:
        d = data.train
        fitted = models[args.model]
        search = getattr(fitted, "backend_", None)
        if search is not None and search != "exact":
            search = f"; neighbours: {search}, recall@{fitted.n_neighbors_} {fitted.recall_:.3f}"
        else:
            search = ""
        print(f"wrote {args.out}: {args.model} fitted on {data.label} ({d.n_samples} rows, {d.n_features} features, "
              f"{d.n_labels} labels); {describe_scale(scale, args.scale is not None)}{search}")
    return 0


def _load_model(path: str) -> Any:
    from .. import load as load_model

    if not os.path.isfile(path):
        raise CLIError(f"mlneighbors predict: no model file {path!r} (write one with 'mlneighbors fit')")
    return load_model(path)


def _top_k(model: Any, X: Any, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The k best labels per row, best first, ties by the lower label index: the model's own
    predict_top_k (after the pipeline's scaler), without forming the full score rows."""
    steps = getattr(model, "steps", None)
    if steps:
        X = model[:-1].transform(X) if len(steps) > 1 else X
        model = steps[-1][1]
    scores, labels = model.predict_top_k(X, k)
    return labels, scores


def cmd_predict(args: argparse.Namespace) -> int:
    """Predictions (and scores, or the top k labels) of a saved model for the rows of DATA."""
    from .._files import atomic_path

    if args.top_k is not None and args.top_k < 1:
        raise CLIError(f"mlneighbors predict: --top-k must be at least 1, got {args.top_k}")
    check_out = os.path.dirname(os.path.abspath(args.out))
    from .._files import check_writable

    check_writable(check_out)
    args.outputs = Outputs(args.out)
    model = _load_model(args.model_file)
    data = read_file(args.data, args, "predict", features_only=True)
    X = data.X
    n_features = getattr(model, "n_features_in_", X.shape[1])
    if X.shape[1] != n_features:
        raise CLIError(f"mlneighbors predict: {args.data} has {X.shape[1]} features; the model was fitted on "
                       f"{n_features} features")
    names = list(getattr(model, "label_names_", [f"label{j}" for j in range(len(getattr(model, 'classes_', [])))]))
    scores = np.asarray(model.predict_proba(X)) if args.scores and not args.top_k else None
    kind = "arff" if args.out.endswith(".arff") else "csv"
    with atomic_path(args.out) as tmp:
        if args.top_k is not None:
            labels, top = _top_k(model, X, min(args.top_k, len(names)))
            _write_top_k(tmp, labels, top, names)
        elif kind == "arff":
            _write_mulan(tmp, data, np.asarray(model.predict(X)), names)
        else:
            _write_predictions(tmp, np.asarray(model.predict(X)), scores, names)
    if kind == "arff" and args.top_k is None:
        _write_mulan_xml(args.out[: -len(".arff")] + ".xml", names)
    if not args.quiet:
        what = f"the top {args.top_k} labels" if args.top_k else "predictions" + (" and scores" if args.scores else "")
        print(f"wrote {args.out}: {what} for {X.shape[0]} rows of {args.data}")
    return 0


def _write_predictions(path: Any, predictions: np.ndarray, scores: np.ndarray | None, names: list[str]) -> None:
    import csv

    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow(names + ([f"score:{n}" for n in names] if scores is not None else []))
        for i in range(len(predictions)):  # a text file is written row by row
            row = [int(v) for v in predictions[i]]
            writer.writerow(row + ([f"{v:.6g}" for v in scores[i]] if scores is not None else []))


def _write_top_k(path: Any, labels: np.ndarray, scores: np.ndarray, names: list[str]) -> None:
    import csv

    k = labels.shape[1]
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow([c for j in range(1, k + 1) for c in (f"label_{j}", f"score_{j}")])
        for i in range(len(labels)):
            writer.writerow([c for j in range(k) for c in (names[labels[i, j]], f"{scores[i, j]:.6g}")])


def _arff_name(name: str) -> str:
    return "'" + name.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _write_mulan(path: Any, data: Any, predictions: np.ndarray, names: list[str]) -> None:
    """The rows' features and predicted labels as a Mulan ARFF (labels last, {0,1})."""
    import scipy.sparse as sp

    X = data.X
    d = X.shape[1]
    features = list(getattr(data, "feature_names", [])) or [f"f{j}" for j in range(d)]
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("@relation predictions\n\n")
        for name in features:
            fh.write(f"@attribute {_arff_name(name)} numeric\n")
        for name in names:
            fh.write(f"@attribute {_arff_name(name)} {{0,1}}\n")
        fh.write("\n@data\n")
        if sp.issparse(X):
            X = sp.csr_matrix(X)
            for i in range(X.shape[0]):
                lo, hi = X.indptr[i], X.indptr[i + 1]
                cells = [f"{j} {v:.17g}" for j, v in zip(X.indices[lo:hi], X.data[lo:hi], strict=True)]
                cells += [f"{d + j} 1" for j in np.flatnonzero(predictions[i])]
                fh.write("{" + ",".join(cells) + "}\n")
        else:
            for i in range(X.shape[0]):
                fh.write(",".join([f"{v:.17g}" for v in X[i]] + [str(int(v)) for v in predictions[i]]) + "\n")


def _write_mulan_xml(path: str, names: list[str]) -> None:
    from xml.sax.saxutils import quoteattr

    from .._files import atomic_path

    with atomic_path(path) as tmp:
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write('<?xml version="1.0" encoding="utf-8"?>\n<labels xmlns="http://mulan.sourceforge.net/labels">\n')
            for name in names:
                fh.write(f"<label name={quoteattr(name)}></label>\n")
            fh.write("</labels>\n")


# --------------------------------------------------------------------------------------
# reproduce
# --------------------------------------------------------------------------------------


def cmd_reproduce(args: argparse.Namespace) -> int:
    from .._files import check_writable
    from ..experiments import COLUMNS, list_papers, reproduce

    papers = list_papers()
    wanted = papers if args.paper == "all" else [args.paper]
    for name in wanted:
        if name not in papers:
            raise choice_error("paper", name, papers + ["all"], "reproduce")
    if not args.no_figures:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            raise ImportError("the figures need matplotlib: pip install 'mlneighbors[plot]' "
                              "(or pass --no-figures)") from None
    backend_name, backend_params = backend(args, "reproduce")
    check_writable(args.out)  # before any computing
    args.outputs = Outputs(args.out)
    factory = progress_factory(args.quiet)
    tidy: list[dict[str, Any]] = []
    with dask_client(args):  # one cluster for every paper of the run
        for name in wanted:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                rep = reproduce(name, quick=args.quick, out=args.out, data_home=args.data_home,
                                figures=not args.no_figures, progress=factory, random_state=args.seed,
                                backend=backend_name, backend_params=backend_params)
            args.outputs.done.append(rep.paper)
            if args.format == "table":
                print(f"== {rep.paper}: {rep.title}")
                for title, rows in rep.tables():
                    compared = any(" / " in str(v) for r in rows for v in r.values())
                    extra = "  (ours / paper; * differs by more than 0.02)" if compared else ""
                    print(f"\n{title}{extra}")
                    print(format_rows(rows, "table"))
                print()
            tidy += [{"reproduction": rep.paper, **r} for r in rep.rows]
            if not args.quiet:
                where = os.path.join(args.out, rep.paper)
                print(f"{rep.paper}: {rep.seconds:.1f} s; {len(rep.differences())} cell(s) differ from the paper by "
                      f"more than 0.02 (see {os.path.join(where, 'report.md')}); wrote {len(rep.files)} files "
                      f"to {where}", file=sys.stderr)
    if args.format != "table":
        print(format_rows(tidy, args.format, ["reproduction", *COLUMNS]))
    return 0
