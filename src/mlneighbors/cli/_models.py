"""Models by registry name, their --param values, the neighbour backend of a run."""

from __future__ import annotations

import argparse
import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from ._common import CLIError, choice_error, key_values, note, parse_value


def route(model: Any, key: str) -> str | None:
    """The parameter name that ``key`` sets on ``model`` (a pipeline: the step that has it)."""
    params = model.get_params(deep=True)
    steps = [name for name, _ in getattr(model, "steps", [])]
    for step in steps:
        if f"{step}__{key}" in params:
            return f"{step}__{key}"
    if steps:
        return key if key in params and "__" in key else None
    return key if key in params else None


def valid_params(model: Any) -> list[str]:
    params = model.get_params(deep=True)
    steps = tuple(f"{name}__" for name, _ in getattr(model, "steps", []))
    if steps:
        return sorted(p.split("__", 1)[1] for p in params if p.startswith(steps))
    return sorted(params)


def _takes_booleans(model: Any, full: str) -> bool:
    """Whether parameter ``full`` (``step__name`` in a pipeline) may be true/false, by the
    constraints a model of the package declares (True for any other estimator's)."""
    *path, name = full.split("__")
    owner = model.get_params(deep=True)["__".join(path)] if path else model
    constraints = getattr(type(owner), "_constraints", {}).get(name)  # the package's own (_params)
    if constraints is None:  # another library's step (the scaler), or a parameter without any
        return True
    return any(alt is not None and alt.admits(True) for alt in constraints)


def _check_backends(name: str, model: Any, cmd: str) -> None:
    """The neighbour search ``--param backend=`` / ``backend_params=`` / ``metric=`` name,
    made (unbuilt) before any data is read: an unknown backend, metric, parameter or
    library as one line."""
    from ..neighbors import get_index

    params = model.get_params(deep=True)
    for key, backend in params.items():
        if not (key == "backend" or key.endswith("__backend")) or not isinstance(backend, str):
            continue
        options = params.get(key + "_params")
        if options is not None and not isinstance(options, dict):
            raise CLIError(f"mlneighbors {cmd}: --param {key}_params for {name} must be a JSON object "
                           f"('{{\"key\": value}}'), got {options!r}")
        metric = params.get(key[: -len("backend")] + "metric")  # None: the backend's own (hybrid's)
        try:
            get_index(backend, metric=metric, **(options or {}))
        except (TypeError, ValueError) as exc:
            raise CLIError(f"mlneighbors {cmd}: --param for {name}: {' '.join(str(exc).split())}") from None


def build_models(names: Sequence[str], k: int | None, params: Sequence[str], cmd: str, seed: int) -> dict[str, Any]:
    """Estimators by registry name with --k and --param applied; CLIError on any bad name or value.

    ``--param key=value`` sets ``key`` on every model that has it (an error if none has);
    ``--param model.key=value`` on that model only. A value is read as the parameter's type
    (that of its default, or true/false only where the parameter takes them), and the
    neighbour backend the parameters name is checked before anything runs.
    """
    from .. import MODELS, make_model

    if k is not None and k < 1:
        raise CLIError(f"mlneighbors {cmd}: --k must be at least 1, got {k}")
    models: dict[str, Any] = {}
    for name in names:
        if name not in MODELS:
            raise choice_error("model", name, list(MODELS), cmd)
        model = make_model(name, k)
        if "random_state" in model.get_params():
            model.set_params(random_state=seed)
        models[name] = model
    for key, text in key_values(params, "--param", cmd):
        item = f"{key}={text}"
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
            full = route(model, key)
            if full is None:
                continue
            default = model.get_params(deep=True)[full]
            try:
                value = parse_value(text, default, _takes_booleans(model, full))
            except ValueError as exc:
                raise CLIError(f"mlneighbors {cmd}: bad value {text!r} for parameter {key!r} of "
                               f"{name}: {exc}") from None
            model.set_params(**{full: value})
            hits += 1
        if hits == 0:
            valid = sorted({p for name in targets for p in valid_params(models[name])})
            raise CLIError(f"mlneighbors {cmd}: unknown parameter {key!r} for {', '.join(targets)}; valid "
                           f"parameters: {', '.join(valid)}")
    if params:
        for name, model in models.items():
            _check_backends(name, model, cmd)
    return models


def add_backend_args(p: argparse.ArgumentParser, *, cluster: bool = True) -> None:
    """``--backend`` and ``--backend-param``; with ``cluster``, where ``--backend dask`` runs."""
    from .._backends import BACKEND_PATHS  # the names only: mlneighbors.neighbors imports scikit-learn

    p.add_argument("--backend", metavar="NAME",
                   help=f"the neighbour search of every model: {', '.join(sorted(BACKEND_PATHS))} (default: exact; "
                        "auto: an approximate index where it is faster, for large dense data)")
    p.add_argument("--backend-param", action="append", metavar="KEY=VALUE",
                   help="a parameter of --backend (repeatable), e.g. device=cuda")
    p.add_argument("--recall", type=float, metavar="R",
                   help="with --backend auto or an approximate backend that takes a recall: the recall@k the "
                        "approximate search is calibrated to reach (default 0.96: at least 0.95 within the "
                        "sample's error)")
    if cluster:
        where = p.add_mutually_exclusive_group()
        where.add_argument("--scheduler", metavar="ADDRESS",
                           help="with --backend dask: the scheduler of a running Dask cluster, e.g. tcp://10.0.0.5:8786")
        where.add_argument("--workers", type=int, metavar="N",
                           help="with --backend dask: a local Dask cluster of N worker processes, for this run only")


def _check_cluster_args(args: argparse.Namespace, cmd: str) -> None:
    scheduler, workers = getattr(args, "scheduler", None), getattr(args, "workers", None)
    if not hasattr(args, "workers"):  # fit: the saved model predicts in-process
        if args.backend == "dask":
            raise CLIError(f"mlneighbors {cmd}: --backend dask is for evaluate, compare and reproduce; a saved "
                           "model predicts in-process (fit it with the default backend)")
        return
    given = "--scheduler" if scheduler is not None else "--workers" if workers is not None else None
    if given is not None and args.backend != "dask":
        raise CLIError(f"mlneighbors {cmd}: {given} needs --backend dask")
    if args.backend == "dask" and given is None:
        raise CLIError(f"mlneighbors {cmd}: --backend dask needs --scheduler ADDRESS (a running cluster) "
                       "or --workers N (a local cluster for this run)")
    if workers is not None and workers < 1:
        raise CLIError(f"mlneighbors {cmd}: --workers must be at least 1, got {workers}")


@contextmanager
def dask_client(args: argparse.Namespace) -> Iterator[None]:
    """For ``--backend dask``: a Dask client for the run, the default one while it lasts,
    connected to ``--scheduler`` or to a local cluster of ``--workers`` processes that is
    closed after the run."""
    if args.backend != "dask":
        yield
        return
    with cluster_client(args, "--backend dask"):
        yield


@contextmanager
def cluster_client(args: argparse.Namespace, what: str) -> Iterator[Any]:
    """A Dask client connected to ``--scheduler`` or to a local cluster of ``--workers``
    processes (closed after the run), the default client while it lasts; ``what`` names the
    option that needs it, for the message when distributed is not installed."""
    try:
        import distributed
    except ImportError:
        raise ImportError(f"{what} needs dask[distributed]: pip install 'mlneighbors[dask]'") from None
    if args.scheduler is not None:
        try:
            client = distributed.Client(args.scheduler)
        except (OSError, ValueError) as exc:  # nothing answers there (after Dask's connect timeout), a bad address
            raise CLIError(f"mlneighbors {args.command}: --scheduler {args.scheduler}: no Dask scheduler can be "
                           f"reached there ({' '.join(str(exc).split())})") from None
        with client:
            yield client
        return
    with distributed.LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        yield client


def backend(args: argparse.Namespace, cmd: str) -> tuple[str | None, dict[str, Any] | None]:
    """``--backend`` and its ``--backend-param`` values, checked before anything runs."""
    from ..neighbors import BACKENDS, get_capabilities, get_index

    _check_cluster_args(args, cmd)
    if args.backend is None:
        if args.backend_param:
            raise CLIError(f"mlneighbors {cmd}: --backend-param needs --backend")
        if getattr(args, "recall", None) is not None:
            raise CLIError(f"mlneighbors {cmd}: --recall needs --backend auto (or {_recall_backends('auto')})")
        return None, None
    if args.backend not in BACKENDS:
        raise choice_error("backend", args.backend, sorted(BACKENDS), cmd)
    params: dict[str, Any] = {}
    default = get_index(args.backend)
    defaults = default.get_params()
    for key, text in key_values(args.backend_param, "--backend-param", cmd):
        if key not in defaults or key == "metric":
            valid = ", ".join(sorted(k for k in defaults if k != "metric"))
            raise CLIError(f"mlneighbors {cmd}: backend {args.backend!r} has no parameter {key!r}; valid: {valid}")
        try:
            params[key] = parse_value(text, defaults[key])
        except ValueError as exc:
            raise CLIError(f"mlneighbors {cmd}: bad value {text!r} for --backend-param {key}: {exc}") from None
    recall = getattr(args, "recall", None)
    if recall is not None:
        if not get_capabilities(default).recall:
            raise CLIError(f"mlneighbors {cmd}: --recall is for an approximate search (--backend auto, "
                           f"{_recall_backends('auto')}); backend {args.backend!r} has no recall to choose")
        if not 0.0 < recall <= 1.0:
            raise CLIError(f"mlneighbors {cmd}: --recall must be in (0, 1], got {recall:g}")
        params["recall"] = recall
    try:
        get_index(args.backend, **params).check_params()  # a bad value, before any computing
    except (TypeError, ValueError) as exc:
        raise CLIError(f"mlneighbors {cmd}: {exc}") from None
    return args.backend, params or None


def _recall_backends(*leave_out: str) -> str:
    """The registered backends that take a ``recall`` (their capabilities say so), as a list
    for a message: a backend registered later is named without an edit here."""
    from ..neighbors import BACKENDS, get_capabilities, get_index

    return ", ".join(name for name in BACKENDS if name not in leave_out and get_capabilities(get_index(name)).recall)


def exact_note(name: str | None, X: Any, cmd: str, quiet: bool) -> str:
    """When an exact leave-one-out fit on ``X`` is estimated to take more than a minute: a note
    now (standard error) and the text for the output's header; else "".

    The estimate is the auto index's (:meth:`~mlneighbors.neighbors.AutoIndex.exact_seconds`:
    the cost model, checked by a timed sample where it says a long fit).
    """
    if name not in (None, "exact") or not hasattr(X, "shape"):
        return ""
    from ..neighbors import get_index

    n, d = X.shape
    seconds = get_index("auto").exact_seconds(X)
    if seconds < 60:
        return ""
    text = (f"an exact fit on {n} x {d} rows is estimated at {_duration(seconds)} here; "
            "--backend auto uses an approximate index where it is faster")
    note(text, quiet)
    return text


def auto_note(name: str | None, params: dict[str, Any] | None, X: Any, models: dict[str, Any], quiet: bool) -> str:
    """With ``--backend auto``: when it will run the exact search on ``X`` only because no
    approximate library can be used (with one, it would pick an approximate index), a note
    now (standard error) saying so and how to install one, and the text for the output's
    header; else "".  The pick and its reason are the library's
    (:meth:`~mlneighbors.neighbors.AutoIndex.choose`, what its ``reason_`` says after a
    build), for the metric of every model whose search auto runs.
    """
    if name != "auto" or not hasattr(X, "shape"):
        return ""
    from ..neighbors import get_index

    for metric in _searched_metrics(models):
        choice = get_index("auto", metric=metric, **(params or {})).choose(X)
        if choice.approximate_unavailable:
            text = f"--backend auto runs the exact search: {choice.reason}"
            note(text, quiet)
            return text
    return ""


def _searched_metrics(models: dict[str, Any]) -> list[str]:
    """The metrics of the neighbour searches that a run's ``--backend`` replaces (those set to
    "exact", or already to the run's backend): each model's, a pipeline step's too."""
    metrics: list[str] = []
    for model in models.values():
        params = model.get_params(deep=True)
        for key, value in params.items():
            if (key == "backend" or key.endswith("__backend")) and value in ("exact", "auto"):
                metric = params.get(key[: -len("backend")] + "metric")
                metric = metric if isinstance(metric, str) else "euclidean"
                if metric not in metrics:
                    metrics.append(metric)
    return metrics


def search_of(model: Any) -> tuple[str, Any, float, float] | None:
    """What the neighbour search of a fitted model was: ``(backend_, k, recall_,
    low_recall_share_)`` (a Pipeline: its model, the last step); None for a model without a
    neighbour search.  ``k`` is the k of the recall: ``n_neighbors_``, or BKNN's ``b``
    (neighbours per label)."""
    final = model
    while getattr(final, "steps", None):  # a Pipeline, also one inside a Pipeline
        final = final.steps[-1][1]
    backend = getattr(final, "backend_", None)
    if backend is None:
        return None
    k = getattr(final, "n_neighbors_", getattr(final, "n_per_label", "k"))
    return str(backend), k, float(final.recall_), float(getattr(final, "low_recall_share_", float("nan")))


def _percent(share: float) -> str:
    """A share of queries as a percentage that does not round a few of them away."""
    percent = 100 * share
    return f"{percent:.2f}%" if 0 < percent < 0.1 else f"{percent:.1f}%"


def describe_search(backend: str, k: Any, recall: float, low: float | None = None, fits: int = 1) -> str:
    """``search_of``'s answer in words, as fit, evaluate and compare print it after
    ``neighbours:``: the recall and the share of the queries whose recall is below one half
    (``low``; left out where it was not measured, None or NaN, and where every query was
    answered exactly, recall 1); ``fits``: the number of fits (folds) whose values are averaged.

    >>> describe_search("faiss-hnsw", 10, 0.9617, 0.003, fits=10)
    'faiss-hnsw, recall@10 0.962 (0.3% of queries below 0.5; mean of 10 fits)'
    >>> describe_search("exact", 10, 1.0, 0.0)
    'exact, recall@10 1.000'
    """
    notes = []
    if low is not None and not math.isnan(low) and not (recall == 1.0 and low == 0.0):
        notes.append(f"{_percent(low)} of queries below 0.5")
    if fits > 1:
        notes.append(f"mean of {fits} fits")
    return f"{backend}, recall@{k} {recall:.3f}" + (f" ({'; '.join(notes)})" if notes else "")


def summarize_searches(found: list[tuple[str, Any, float, float]]) -> dict[str, Any]:
    """The searches of one model's fits (``search_of`` of each fold) as the outputs carry them:
    ``{"backend", "k", "recall", "low_recall_share", "fits"}``, the recall and the share of
    queries below one half the means over the fits (the share None where a fit did not
    measure it), the backend each distinct pick (``"faiss-hnsw/exact"`` where the folds
    differed)."""
    backends = list(dict.fromkeys(b for b, _, _, _ in found))
    low = sum(s for _, _, _, s in found) / len(found)
    return {"backend": "/".join(backends), "k": found[0][1], "recall": sum(r for _, _, r, _ in found) / len(found),
            "low_recall_share": None if math.isnan(low) else low, "fits": len(found)}


def _duration(seconds: float) -> str:
    return f"{seconds / 60:.0f} min" if seconds < 5400 else f"{seconds / 3600:.1f} h"


def apply_backend(models: dict[str, Any], name: str | None, params: dict[str, Any] | None) -> None:
    """Set a run's backend on every exact neighbour search of ``models`` (fit uses this)."""
    if name is None:
        return
    for model in models.values():
        for key, value in model.get_params(deep=True).items():
            if (key == "backend" or key.endswith("__backend")) and value == "exact":
                prefix = key[: -len("backend")]
                model.set_params(**{key: name, prefix + "backend_params": params})
