"""The commands: datasets, fetch, crossover, evaluate, compare, fit, predict, reproduce."""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TextIO

from .. import __version__
from .._json import jsonable, model_params
from .._progress import task
from ..exceptions import InvalidParameterError
from ._common import (
    DEFAULT_METRICS,
    CLIError,
    Outputs,
    check_out_file,
    choice_error,
    emit,
    format_rows,
    header,
    note,
    prepare_folder,
    relay_warnings,
)
from ._data import Data, describe_scale, labels_of, load, read_file, scale_for
from ._live import load_with_ids
from ._models import (
    apply_backend,
    auto_note,
    backend,
    build_models,
    dask_client,
    describe_search,
    exact_note,
    search_of,
    summarize_searches,
)

if TYPE_CHECKING:  # numpy, scipy and scikit-learn are imported by the commands that compute (a fast --help)
    import numpy as np

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
# crossover
# --------------------------------------------------------------------------------------

#: the numbers of features ``mlneighbors crossover`` gives the crossover at by default
CROSSOVER_FEATURES = (32, 64, 128, 256, 768)


def _features(text: str | None) -> list[int]:
    """The numbers of features of ``--n-features D1,D2,...`` (None: :data:`CROSSOVER_FEATURES`)."""
    if text is None:
        return list(CROSSOVER_FEATURES)
    try:
        values = [int(part) for part in text.split(",")]
    except ValueError:
        values = []
    if not values or min(values) < 1:
        raise CLIError(f"mlneighbors crossover: --n-features takes numbers of features >= 1 separated by commas, "
                       f"got {text!r}")
    return values


def cmd_crossover(args: argparse.Namespace) -> int:
    """This machine's exact costs, where they are kept, and from how many dense rows
    ``--backend auto`` picks an approximate index at a few numbers of features."""
    features = _features(args.n_features)
    from ..neighbors import crossover, exact_costs, exact_costs_file
    from ..neighbors._internal import approximate_costs_file, approximate_factor

    mac, entry = exact_costs()  # measured here, or read back from the cache
    path = exact_costs_file()
    rows = [{"n_features": d, "rows": crossover(d)} for d in features]
    factor = approximate_factor()  # probed by the crossover's rule where faiss imports
    if args.format == "table":
        kept = f"kept in {path}" if path.is_file() else f"measured by this process: {path} cannot be written"
        print(f"exact search on this machine: {mac:.4g} ns a multiply-add, {entry:.4g} ns an entry (per core; {kept})")
        union = approximate_costs_file()
        print(f"faiss-union's fit on this machine: {factor:.3g} times its cost model"
              + (f" (kept in {union})" if union.is_file() else ""))
        print("--backend auto searches dense rows exactly below these numbers of rows, and from them on with an "
              "approximate index (faiss-union, where faiss is installed and imports):")
    emit(rows, args.format, ["n_features", "rows"],
         {"ns_per_multiply_add": mac, "ns_per_entry": entry, "union_factor": factor, "cache": str(path)})
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
        if args.test:
            what = "train/test files"
        else:
            what = "standard split" if data.registered else "the file's train/test split"
        return ({"test": (data.test.X, labels_of(data.test))},
                f"{what} ({n_train} train / {data.test.n_samples} test)")
    n_folds = args.cv if args.cv is not None else 10
    if n_folds < 2:
        raise CLIError(f"mlneighbors {cmd}: --cv needs at least 2 folds, got {n_folds}")
    if n_folds > n_train:  # every fold needs a row to test
        given = f"--cv {n_folds}" if args.cv is not None else "the default --cv 10 (no test part given)"
        raise CLIError(f"mlneighbors {cmd}: {data.label} has {n_train} row(s); {given} needs at least {n_folds}, "
                       "one per fold")
    return ({"cv": n_folds, "random_state": args.seed},
            f"{n_folds}-fold stratified CV (seed {args.seed}, {n_train} instances)")


def _run_models(args: argparse.Namespace, cmd: str, names: Sequence[str],
                title: Callable[[str, str], str]) -> tuple[dict, dict[str, Any]]:
    """Fit and score every model on the split or on every fold (``evaluate_models``: one
    neighbour search per fold, shared by the models), after printing the header
    ``title(dataset, protocol and scaling)``; with a ``--backend`` other than exact, what each
    model's search was (auto's pick, the recall) after the run, above the table.

    Returns ``({model: {metric: [value per fold]}}, metadata)``.
    """
    from ..model_selection import evaluate_models

    metrics = _check_metrics(args.metrics, cmd)
    models = build_models(names, args.k, args.param or [], cmd, args.seed)
    backend_name, backend_params = backend(args, cmd)
    # the run's backend set on the models themselves (as evaluate_models would set it on their
    # copies), so that their recorded parameters are those of the estimators fitted
    apply_backend(models, backend_name, backend_params)
    with task("reading the data", total=1):  # a large file: its bar's clock runs while it is read
        data = load(args, cmd)
    where, what = _protocol(args, data, cmd)
    notes = [exact_note(backend_name, data.train.X, cmd, args.quiet),
             auto_note(backend_name, backend_params, data.train.X, models, args.quiet)]
    scale = scale_for(args, data.train.X)
    # what the run computes, said before the computing starts
    header(title(data.label, f"{what}; {describe_scale(scale, args.scale is not None)}"
                 + "".join(f"; note: {text}" for text in notes if text)), args.format, args.quiet)
    searches: dict[str, list] = {}
    tell = backend_name not in (None, "exact")  # what the search was: auto's pick, an approximate recall

    def record(fitted: Any) -> None:
        found = search_of(fitted.model)
        if found is not None:
            searches.setdefault(fitted.name, []).append(found)

    try:  # the folds and the searches report to the progress bars (main installs them)
        with dask_client(args), warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            results = evaluate_models(models, data.train.X, labels_of(data.train), metrics=metrics, scale=scale,
                                      on_fit=record if tell else None, **where)
    except InvalidParameterError as exc:  # a bad --param value, found by the model
        raise CLIError(f"mlneighbors {cmd}: {exc}") from None
    except ValueError as exc:  # the data it happened on, which scikit-learn's messages do not name
        raise ValueError(f"{' '.join(str(exc).split())} (while fitting on {data.label})") from None
    relay_warnings(caught, args.quiet, data.train.label_names if data.train.named else None)
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
    if tell and searches:
        meta["neighbours"] = summary = {name: summarize_searches(found) for name, found in searches.items()}
        said = [(f"{name}: " if len(names) > 1 else "")
                + describe_search(s["backend"], s["k"], s["recall"], s["low_recall_share"], s["fits"])
                for name, s in summary.items()]
        header("neighbours: " + "; ".join(said), args.format, args.quiet)
    return out, meta


def cmd_evaluate(args: argparse.Namespace) -> int:
    import numpy as np

    from ..model_selection._validation import STD_DEFINITION

    results, meta = _run_models(args, "evaluate", [args.model], lambda data, what: f"{args.model} on {data}: {what}")
    per_metric = results[args.model]
    folds = len(per_metric["fit_predict_seconds"])
    rows = [
        {"metric": metric, "value": float(np.mean(values)),
         "std": float(np.std(values, ddof=1)) if folds > 1 else None}
        for metric, values in per_metric.items()
    ]
    meta["model"] = args.model
    if folds > 1:
        meta["std"] = STD_DEFINITION
    emit(rows, args.format, ["metric", "value", "std"], meta)
    if folds > 1 and args.format == "table" and not args.quiet:
        print(f"std: the {STD_DEFINITION}")
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    import numpy as np

    from .. import MODELS

    names = [n.strip() for n in args.models.split(",") if n.strip()]
    if not names:
        raise CLIError(f"mlneighbors compare: --models is empty; valid: {', '.join(MODELS)}")
    if len(set(names)) != len(names):
        raise CLIError("mlneighbors compare: --models names a model twice")
    results, meta = _run_models(args, "compare", names, lambda data, what: f"{data}: {what}; mean over folds")
    metrics = list(results[names[0]])
    rows = [{"metric": m, **{n: float(np.mean(results[n][m])) for n in names}} for m in metrics]
    meta["models"] = names
    emit(rows, args.format, ["metric", *names], meta)
    return 0


# --------------------------------------------------------------------------------------
# fit and predict: a saved model for a user's own data
# --------------------------------------------------------------------------------------


def cmd_fit(args: argparse.Namespace) -> int:
    """Fit a model on all of DATA (scaler, the model's own transformers and the model: one flat
    Pipeline) and save it."""
    from .. import save
    from ..model_selection import make_scaler
    from ..pipeline import Pipeline

    models = build_models([args.model], args.k, args.param or [], "fit", args.seed)
    backend_name, backend_params = backend(args, "fit")
    apply_backend(models, backend_name, backend_params)
    check_out_file(args.out, "fit")
    args.outputs = Outputs(args.out)
    prepare_folder(os.path.dirname(os.path.abspath(args.out)), args.outputs)
    data, ids = load_with_ids(args, "fit")  # ids: None without --id-column
    exact_note(backend_name, data.train.X, "fit", args.quiet)
    auto_note(backend_name, backend_params, data.train.X, models, args.quiet)
    scale = scale_for(args, data.train.X)
    d = data.train
    if not args.quiet:  # what the run computes, said before the computing starts (the notes: on stderr)
        print(f"{args.model} on {data.label} ({d.n_samples} rows, {d.n_features} features, {d.n_labels} labels): "
              f"fit on every row; {describe_scale(scale, args.scale is not None)}", flush=True)
    scaler = make_scaler(scale, sparse=hasattr(data.train.X, "tocsr"))
    # one flat Pipeline (scale, the model's own transformers, the model), whatever make_model
    # built: predict and mlneighbors.load's predict_top_k read its last step as the model
    built = models[args.model]
    inner = built.steps[:-1] + [("model", built.steps[-1][1])] if hasattr(built, "steps") else [("model", built)]
    steps = ([("scale", scaler)] if scaler is not None else []) + inner
    pipeline = Pipeline(steps)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            pipeline.fit(data.train.X, labels_of(data.train), **({"model__ids": ids} if ids is not None else {}))
        except InvalidParameterError as exc:
            raise CLIError(f"mlneighbors fit: {exc}") from None
        except ValueError as exc:  # the data it happened on, which scikit-learn's messages do not name
            raise ValueError(f"{' '.join(str(exc).split())} (while fitting on {data.label})") from None
    relay_warnings(caught, args.quiet, data.train.label_names if data.train.named else None)
    pipeline.label_names_ = [str(n) for n in data.train.label_names]
    if data.train.named:  # predict matches a file's columns to these by name
        pipeline.feature_names_ = [str(n) for n in data.train.feature_names]
    if data.train.index_base is not None:  # predict numbers a libsvm file's features as these were
        pipeline.libsvm_index_base_ = int(data.train.index_base)
    save(pipeline, args.out, include_index=args.include_index)
    if not args.quiet:
        found = search_of(pipeline)  # the model, after any transformers of its own (blda-bknn's BLDA)
        search = f"; neighbours: {describe_search(*found)}" if found is not None and found[0] != "exact" else ""
        print(f"wrote {args.out}: {args.model} fitted on {data.label}{search}")
    return 0


def _load_model(path: str) -> Any:
    from .. import load as load_model
    from ..exceptions import ModelFileError

    if not os.path.isfile(path):
        raise CLIError(f"mlneighbors predict: no model file {path!r} (write one with 'mlneighbors fit')")
    try:
        model = load_model(path)
    except ModelFileError as exc:  # empty, truncated, a pickle, an untrusted type...: one line
        raise CLIError(f"mlneighbors predict: {exc}") from None
    _check_predictor(model, path)
    return model


def _check_predictor(model: Any, path: str) -> None:
    """What predict needs of the model in a file it loaded: a fitted model of the package
    (what ``fit`` writes, or ``mlneighbors.save`` of one, alone or ending a Pipeline). Any
    other loadable object is one line naming the file and what it holds."""
    from sklearn.exceptions import NotFittedError
    from sklearn.utils.validation import check_is_fitted

    final = model
    while getattr(final, "steps", None):  # a Pipeline's model, also inside a nested Pipeline
        final = final.steps[-1][1]
    what = type(final).__name__
    if not hasattr(model, "predict"):
        raise CLIError(f"mlneighbors predict: {path} holds a {what}, which transforms features and predicts no "
                       "labels; give a model (what 'mlneighbors fit' writes, or a Pipeline ending in a model)")
    if type(final).__module__.split(".")[0] != "mlneighbors":
        raise CLIError(f"mlneighbors predict: {path} holds a {what}, not a model of mlneighbors; give what "
                       "'mlneighbors fit' writes, or mlneighbors.save of one of the package's models (alone or "
                       "ending a Pipeline)")
    try:
        check_is_fitted(model)
    except NotFittedError:
        raise CLIError(f"mlneighbors predict: {path} holds an unfitted {type(model).__name__}: fit it before "
                       "saving it, or write one with 'mlneighbors fit'") from None


def _storage_for(model: Any, X: Any) -> Any:
    """Sparse rows (a libsvm file) densified for a model with a step that takes dense data only
    (a MinMaxScaler, a centring StandardScaler, wherever in a Pipeline): by scikit-learn's
    tags, which a Pipeline takes from all its steps. Such a model was fitted on dense rows
    of the same width."""
    import scipy.sparse as sp
    from sklearn.utils import get_tags

    return X.toarray() if sp.issparse(X) and not get_tags(model).input_tags.sparse else X


def cmd_predict(args: argparse.Namespace) -> int:
    """Predictions (and scores, or the top k labels) of a saved model for the rows of DATA:
    into ``--out``, or without it as CSV on standard output (a filter: notes and warnings go
    to standard error)."""
    import numpy as np

    from .._files import atomic_path

    if args.top_k is not None and args.top_k < 1:
        raise CLIError(f"mlneighbors predict: --top-k must be at least 1, got {args.top_k}")
    # options that one output could not honour both: refused, not one silently dropped
    if args.scores and args.top_k is not None:
        raise CLIError("mlneighbors predict: --scores and --top-k exclude each other: --top-k writes the score of "
                       "each label it ranks (score:top1, ...); --scores one score column per label "
                       "(score:<label>) beside the 0/1 predictions")
    out = None if args.out in (None, "-") else args.out  # None: standard output
    arff = out is not None and out.endswith(".arff")
    if arff and (args.scores or args.top_k is not None):
        flag = "--scores" if args.scores else "--top-k"
        raise CLIError(f"mlneighbors predict: {flag} writes CSV columns, which an ARFF output (--out {out}: the "
                       f"rows and their predicted labels) has no place for; give --out FILE.csv")
    if out is not None:
        for target in [out] + ([out[: -len(".arff")] + ".xml"] if arff else []):
            check_out_file(target, "predict")
        args.outputs = Outputs(out)
        prepare_folder(os.path.dirname(os.path.abspath(out)), args.outputs)
    model = _load_model(args.model_file)
    data = read_file(args.data, args, "predict", like=model)  # exactly the model's features, in its order
    X = _storage_for(model, data.X)
    names = list(getattr(model, "label_names_", [f"label{j}" for j in range(len(getattr(model, 'classes_', [])))]))
    scores = np.asarray(model.predict_proba(X)) if args.scores else None
    top_k = args.top_k
    if top_k is not None and not hasattr(model, "predict_top_k"):
        raise CLIError(f"mlneighbors predict: the model in {args.model_file} ({type(model).__name__}) cannot rank "
                       "labels (no predict_top_k); drop --top-k")
    if top_k is not None and top_k > len(names):  # every label, ranked: the request's best reading
        note(f"--top-k {top_k} is more than the model's {len(names)} labels; writing all {len(names)}, ranked",
             args.quiet)
        top_k = len(names)
    # computed in full before a line is written: a failure leaves no partial output
    if top_k is not None:
        top, labels = model.predict_top_k(X, top_k)  # without forming the full score rows
    else:
        predictions = np.asarray(model.predict(X))

    def write_csv(fh: TextIO) -> None:
        if top_k is not None:
            _write_top_k(fh, labels, top, names)
        else:
            _write_predictions(fh, predictions, scores, names)

    if out is None:
        write_csv(sys.stdout)
        return 0
    with atomic_path(out) as tmp:
        if arff:
            _write_mulan(tmp, data, predictions, names)
        else:
            with open(tmp, "w", newline="", encoding="utf-8") as fh:
                write_csv(fh)
    if arff:
        _write_mulan_xml(out[: -len(".arff")] + ".xml", names)
    if not args.quiet:
        what = f"the top {top_k} labels" if top_k else "predictions" + (" and scores" if args.scores else "")
        print(f"wrote {out}: {what} for {X.shape[0]} rows of {args.data}")
    return 0


def _write_predictions(fh: TextIO, predictions: np.ndarray, scores: np.ndarray | None, names: list[str]) -> None:
    """The 0/1 predictions, one column per label (and ``score:<label>`` columns), as CSV into
    the open text file ``fh``."""
    import csv

    writer = csv.writer(fh, lineterminator="\n")
    writer.writerow(names + ([f"score:{n}" for n in names] if scores is not None else []))
    for i in range(len(predictions)):  # a text file is written row by row
        row = [int(v) for v in predictions[i]]
        writer.writerow(row + ([f"{v:.6g}" for v in scores[i]] if scores is not None else []))


def _write_top_k(fh: TextIO, labels: np.ndarray, scores: np.ndarray, names: list[str]) -> None:
    """Per row the k best labels, best first: ``label:top1,score:top1,label:top2,...`` (the
    names' pattern of ``--scores``: ``score:<what it is the score of>``), as CSV into ``fh``."""
    import csv

    k = labels.shape[1]
    writer = csv.writer(fh, lineterminator="\n")
    writer.writerow([c for j in range(1, k + 1) for c in (f"label:top{j}", f"score:top{j}")])
    for i in range(len(labels)):
        writer.writerow([c for j in range(k) for c in (names[labels[i, j]], f"{scores[i, j]:.6g}")])


def _arff_name(name: str) -> str:
    return "'" + name.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _write_mulan(path: Any, data: Any, predictions: np.ndarray, names: list[str]) -> None:
    """The rows' features and predicted labels as a Mulan ARFF (labels last, {0,1})."""
    import numpy as np
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
    from ..experiments import get_paper, list_papers, reproduce

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
    args.outputs = Outputs(args.out)
    prepare_folder(args.out, args.outputs)  # before any computing
    reports = []
    with dask_client(args):  # one cluster for every paper of the run
        for name in wanted:
            header(f"== {name}: {get_paper(name).TITLE}" + (" (quick)" if args.quick else ""), args.format, args.quiet)
            with warnings.catch_warnings():  # the steps report to the progress bars (main installs them)
                warnings.simplefilter("ignore")
                rep = reproduce(name, quick=args.quick, out=args.out, data_home=args.data_home,
                                figures=not args.no_figures, random_state=args.seed,
                                backend=backend_name, backend_params=backend_params)
            args.outputs.done.append(rep.paper)
            show_reproduction(rep, args)
            reports.append(rep)
    if args.format != "table":
        print(tidy_reproductions(reports, args.format))
    return 0


def show_reproduction(rep: Any, args: argparse.Namespace) -> None:
    """What ``reproduce`` prints once a paper is done: its tables on standard output (``--format
    table``), then, unless ``--quiet``, one summary line on standard error."""
    if args.format == "table":
        for title, rows in rep.tables():
            compared = any(" / " in str(v) for r in rows for v in r.values())
            extra = "  (ours / paper; * differs by more than 0.02)" if compared else ""
            print(f"\n{title}{extra}")
            print(format_rows(rows, "table"))
        print()
    if not args.quiet:
        where = os.path.join(args.out, rep.paper)
        print(f"{rep.paper}: {rep.seconds:.1f} s; {len(rep.differences())} cell(s) differ from the paper by "
              f"more than 0.02 (see {os.path.join(where, 'report.md')}); wrote {len(rep.files)} files "
              f"to {where}", file=sys.stderr)


def tidy_reproductions(reports: Sequence[Any], fmt: str) -> str:
    """Every cell of the reproductions, one row each, as ``--format json`` or ``csv`` prints it."""
    from ..experiments import COLUMNS

    rows = [{"reproduction": rep.paper, **r} for rep in reports for r in rep.rows]
    return format_rows(rows, fmt, ["reproduction", *COLUMNS])
