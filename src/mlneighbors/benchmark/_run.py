"""The benchmark runner: models x datasets x folds x metrics into a results store.

A *cell* is one model configuration on one fold of one dataset: one fit, one prediction,
every metric.  A *task* is one fold of one dataset: all its missing cells, run by
:func:`~mlneighbors.model_selection.evaluate_models` on that fold, so that one
:class:`~mlneighbors.neighbors.NeighborCache` per neighbour metric serves every model and
every k (searched once at the largest k).  Tasks run here, in ``jobs`` processes or on a Dask
cluster; only this process writes the store, one transaction per finished cell
(:class:`~mlneighbors.benchmark.Store`).
"""

from __future__ import annotations

import hashlib
import os
import sys
import time
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp

from .._json import jsonable, model_params
from ..neighbors._internal import feed
from ._store import Store

__all__ = ["BenchmarkData", "RunSummary", "folds_of", "run_benchmark"]


@dataclass(frozen=True)
class BenchmarkData:
    """One dataset of a benchmark.

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n_samples, n_features)
        The rows cross-validated (the standard split: trained on).
    Y : array-like of shape (n_samples, n_labels)
        Their binary labels.
    X_test, Y_test : default=None
        The standard split's test part.
    scale : {"minmax", "standard", "none"}, default="minmax"
        The scaling, as :func:`~mlneighbors.model_selection.make_scaler` names it, fitted on
        each training part.

    Examples
    --------
    >>> import numpy as np
    >>> from mlneighbors.benchmark import BenchmarkData
    >>> data = BenchmarkData(np.zeros((4, 2)), np.eye(4, 2, dtype=int))
    >>> data.n_samples, data.scale
    (4, 'minmax')
    """

    X: Any
    Y: Any
    X_test: Any = None
    Y_test: Any = None
    scale: str = "minmax"

    @property
    def n_samples(self) -> int:
        """The number of rows of ``X``."""
        return int(self.X.shape[0])

    def sha256(self) -> str:
        """The sha256 of the data as read: features and labels (the test part's too), their
        shapes, types and values.

        Returns
        -------
        digest : str
            64 hexadecimal digits.
        """
        digest = hashlib.sha256()
        for part in (self.X, self.Y, self.X_test, self.Y_test):
            if part is None:
                digest.update(b"none")
            else:
                feed(digest, part, sort_indices=True)
        return digest.hexdigest()


def protocol_of(*, split: bool, folds: int, repeats: int, seed: int) -> dict[str, Any]:
    """The protocol as the store records it."""
    if split:
        return {"kind": "split", "seed": int(seed)}
    return {"kind": "cv", "folds": int(folds), "repeats": int(repeats), "seed": int(seed)}


def folds_of(data: BenchmarkData, protocol: dict[str, Any]) -> list[tuple[np.ndarray, np.ndarray]]:
    """The (train, test) index pairs of ``data`` under ``protocol``, numbered as the store
    numbers them: repeat ``r``'s fold ``j`` is fold ``r * folds + j``.

    Repeat ``r`` is :class:`~mlneighbors.model_selection.MultilabelStratifiedKFold` shuffled
    with seed ``seed + r`` (repeat 0: the folds of ``evaluate --cv N --seed S``).

    Parameters
    ----------
    data : BenchmarkData
    protocol : dict
        ``{"kind": "cv", "folds": N, "repeats": R, "seed": S}``, or ``{"kind": "split", ...}``.

    Returns
    -------
    pairs : list of (ndarray, ndarray)
        Training and test row numbers of each fold; the standard split: one pair (None, None).

    Examples
    --------
    >>> import numpy as np
    >>> from mlneighbors.benchmark import BenchmarkData, folds_of
    >>> Y = np.array([[1, 0], [0, 1]] * 6)
    >>> pairs = folds_of(BenchmarkData(np.zeros((12, 1)), Y), {"kind": "cv", "folds": 3, "repeats": 2, "seed": 0})
    >>> len(pairs), sorted(np.concatenate([test for _, test in pairs[:3]]).tolist()) == list(range(12))
    (6, True)
    """
    from ..model_selection import MultilabelStratifiedKFold

    if protocol["kind"] == "split":
        return [(None, None)]
    pairs = []
    for r in range(protocol["repeats"]):
        splitter = MultilabelStratifiedKFold(protocol["folds"], shuffle=True, random_state=protocol["seed"] + r)
        pairs.extend(splitter.split(data.X, np.asarray(data.Y)))
    return pairs


def _folds_sha256(pairs: Sequence[tuple[Any, Any]], data: BenchmarkData) -> str:
    """The sha256 of the fold assignment: each fold's test rows, in fold order."""
    digest = hashlib.sha256()
    if pairs[0][0] is None:
        digest.update(f"split {data.n_samples} {data.X_test.shape[0]}".encode())
        return digest.hexdigest()
    for _, test in pairs:
        digest.update(np.asarray(test, dtype=np.int64).tobytes())
        digest.update(b"|")
    return digest.hexdigest()


@dataclass
class RunSummary:
    """What a run of :func:`run_benchmark` did.

    Parameters
    ----------
    cells : int
        Cells the run asks for (datasets x models x folds).
    stored : int
        Of them, those the store already held at the start.
    computed : int
        Cells computed and committed by this run.
    failed : int
        Of them, those that ran and failed (stored as NaN, the reason in ``failures``).
    searches : int
        Neighbour searches the shared caches ran.
    searches_unshared : int
        Searches the same fits ask for: what they would have run without sharing.
    seconds : float
        Wall time of the run.
    warnings : list of str
        The distinct warnings of the fits, each naming its dataset, folds and models
        (``"genbase, folds 2, 7, mlknn:k=10, brknn: ..."``).

    Examples
    --------
    >>> from mlneighbors.benchmark import RunSummary
    >>> summary = RunSummary(cells=30, stored=10, computed=20, searches=8, searches_unshared=40)
    >>> summary.searches_unshared - summary.searches  # the searches the shared cache saved
    32
    """

    cells: int = 0
    stored: int = 0
    computed: int = 0
    failed: int = 0
    searches: int = 0
    searches_unshared: int = 0
    seconds: float = 0.0
    warnings: list[str] = field(default_factory=list)


@dataclass
class _Cell:
    model: str
    values: dict[str, float] | None
    seconds: float
    error: str | None = None


@dataclass
class _TaskResult:
    cells: list[_Cell]
    searches: int
    requests: int
    warnings: list[tuple[str, str]]  # (model, message)


def _caches(model: Any) -> list[Any]:
    from ..neighbors import NeighborCache

    return [v for v in model.get_params(deep=True).values() if isinstance(v, NeighborCache)]


def _take(A: Any, idx: np.ndarray | None) -> Any:
    if idx is None:
        return A
    return A[idx] if sp.issparse(A) else np.ascontiguousarray(np.asarray(A)[idx])


def run_task(models: Mapping[str, Any], metrics: Sequence[str], scale: str, X: Any, Y: Any,
             train: np.ndarray | None, test: np.ndarray | None, X_test: Any = None, Y_test: Any = None,
             sink: Callable[[_Cell], None] | None = None) -> _TaskResult:
    """Every model of ``models`` on one fold (rows ``train`` and ``test`` of ``X``, ``Y``; or
    ``X``, ``Y`` to train and ``X_test``, ``Y_test`` to test): one ``evaluate_models`` call,
    its neighbour searches shared.  A model whose fit fails is one failed cell (its error
    kept), and the models after it run on; a bad parameter stops the run.  ``sink`` receives
    each cell as it finishes (in-process runs commit it at once)."""
    from ..exceptions import InvalidParameterError
    from ..model_selection import evaluate_models

    if train is not None:
        X_test, Y_test = _take(X, test), _take(Y, test)
        X, Y = _take(X, train), _take(Y, train)
    cells: list[_Cell] = []
    stores: dict[int, Any] = {}
    pending = list(models)
    clock = [time.perf_counter()]

    def finish(cell: _Cell) -> None:
        cells.append(cell)
        if sink is not None:
            sink(cell)

    said: list[tuple[str, str]] = []
    caught: list[Any] = []

    def blame(model: str) -> None:
        # the models are fitted one after another: what was warned since the last cell is this one's
        said.extend((model, " ".join(str(w.message).split())) for w in caught)
        caught.clear()

    def on_fit(fitted: Any) -> None:
        now = time.perf_counter()
        for cache in _caches(fitted.model):
            stores[id(cache._store)] = cache._store
        pending.remove(fitted.name)
        seconds, clock[0] = now - clock[0], now
        blame(fitted.name)
        finish(_Cell(fitted.name, {m: float(fitted.values[m]) for m in metrics}, seconds))

    with warnings.catch_warnings(record=True) as log:
        warnings.simplefilter("always")
        caught = log
        while pending:
            try:
                evaluate_models({name: models[name] for name in pending}, X, Y, test=(X_test, Y_test),
                                metrics=list(metrics), scale=scale, on_fit=on_fit)
            except InvalidParameterError:
                raise
            except Exception as exc:  # the model being fitted failed: one failed cell, the others run on
                now = time.perf_counter()
                seconds, clock[0] = now - clock[0], now
                blame(pending[0])
                finish(_Cell(pending.pop(0), None, seconds, f"{type(exc).__name__}: {' '.join(str(exc).split())}"))
    return _TaskResult(cells if sink is None else [], sum(s.searches for s in stores.values()),
                       sum(s.requests for s in stores.values()), list(dict.fromkeys(said)))


def _check_scores(models: Mapping[str, Any], metrics: Sequence[str]) -> None:
    """A ranking metric asked of a model without scores: refused before anything runs (the
    rule of ``evaluate_models``: ``predict_proba`` or ``decision_function``)."""
    from ..metrics import METRICS
    from ..model_selection._validation import _has_scores

    ranking = [m for m in metrics if METRICS[m].kind == "ranking"]
    for name, model in models.items():
        if ranking and not _has_scores(model):
            raise ValueError(f"metric {ranking[0]!r} ranks labels by score, which model {name!r} "
                             f"({type(model).__name__}) does not give (no predict_proba or decision_function); "
                             "drop the metric or the model")


def _check_named(mapping: Any, what: str, kind: str, is_kind: Callable[[Any], bool]) -> None:
    """A non-empty mapping of non-empty names to ``kind``s, or a TypeError naming the entry."""
    if not isinstance(mapping, Mapping) or not mapping:
        raise TypeError(f"{what} must be a non-empty mapping of name to {kind}, got {type(mapping).__name__}")
    for name, item in mapping.items():
        if not isinstance(name, str) or not name:
            raise TypeError(f"{what}: every name must be a non-empty string, got {name!r}")
        if not is_kind(item):
            raise TypeError(f"{what}[{name!r}] must be {kind}, got {type(item).__name__} {item!r:.60}")


def _check_arguments(models: Any, datasets: Any, metrics: Any, *, folds: Any, repeats: Any, split: bool,
                     jobs: Any) -> list[str]:
    """Every argument of :func:`run_benchmark` checked before the store is opened: a refused
    run leaves no trace in it.  Returns the metrics as a list."""
    from ..metrics import METRICS

    _check_named(models, "models", "an unfitted estimator (with fit and get_params)",
                 lambda m: hasattr(m, "fit") and hasattr(m, "get_params"))
    _check_named(datasets, "datasets", "a BenchmarkData", lambda d: isinstance(d, BenchmarkData))
    for name, data in datasets.items():
        if split and (data.X_test is None or data.Y_test is None):
            raise ValueError(f"split=True tests on each dataset's test part, and dataset {name!r} has none "
                             "(BenchmarkData's X_test and Y_test); cross-validate it (split=False)")
    if isinstance(metrics, str):
        metrics = [metrics]
    metrics = list(dict.fromkeys(metrics))
    if not metrics:
        raise ValueError(f"metrics is empty; valid names are {', '.join(METRICS)}")
    unknown = [m for m in metrics if m not in METRICS]
    if unknown:
        raise ValueError(f"unknown metric {unknown[0]!r}; valid names are {', '.join(METRICS)}")
    for label, value, least in (("folds", folds, 2), ("repeats", repeats, 1)):
        if not split and (not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < least):
            raise ValueError(f"{label} must be an integer of at least {least}, got {value!r}")
    if split and repeats != 1:
        raise ValueError(f"repeats repeats cross-validation; the standard split (split=True) is one fold, got "
                         f"repeats={repeats!r}")
    if jobs is not None and (not isinstance(jobs, (int, np.integer)) or isinstance(jobs, bool) or jobs < 1):
        raise ValueError(f"jobs must be None or an integer of at least 1, got {jobs!r}")
    if not split:
        for name, data in datasets.items():
            if data.n_samples < folds:
                raise ValueError(f"dataset {name!r} has {data.n_samples} row(s); {folds} folds need at least "
                                 f"{folds}, one per fold")
    return metrics


def _check_model_params(models: Mapping[str, Any]) -> None:
    """Every parameter of every model (and of the estimators inside it) checked against its
    constraints before the store is touched: a refused value is refused before it is recorded."""
    from .._params import validate_params
    from ..exceptions import InvalidParameterError

    for name, model in models.items():
        inner = [model, *(v for v in model.get_params(deep=True).values() if hasattr(v, "_constraints"))]
        for estimator in inner:
            if hasattr(type(estimator), "_constraints"):
                try:
                    validate_params(estimator)
                except InvalidParameterError as exc:
                    raise InvalidParameterError(f"model {name!r}: {exc}") from None


def _check_distinct(described: Mapping[str, Mapping[str, Any]]) -> None:
    """Two names of one run holding the same data (one file under two paths, or a copy): a
    dataset is identified by what it holds, and counted once."""
    seen: dict[str, str] = {}
    for name, row in described.items():
        first = seen.setdefault(row["sha256"], name)
        if first != name:
            raise ValueError(f"datasets {first!r} and {name!r} hold the same data (sha256 {row['sha256'][:12]}...): "
                             "a dataset is counted once in the ranks and tests; give it once")


def _params(models: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    return {name: jsonable(params) for name, params in model_params(dict(models)).items()}


def run_benchmark(
    store: str | Store,
    models: Mapping[str, Any],
    datasets: Mapping[str, BenchmarkData],
    *,
    metrics: Sequence[str],
    folds: int = 10,
    repeats: int = 1,
    split: bool = False,
    seed: int = 0,
    jobs: int | None = None,
    client: Any = None,
    retry_failed: bool = False,
    command: str | None = None,
    on_plan: Callable[[int, int], None] | None = None,
) -> RunSummary:
    """Run every model on every fold of every dataset into a results store; resume a run.

    Parameters
    ----------
    store : str or Store
        The SQLite file (created if absent), or a :class:`Store` opened for writing.
    models : mapping of str to estimator
        Unfitted models by configuration name (``"mlknn:k=5"``); the name is the store's key.
    datasets : mapping of str to BenchmarkData
    metrics : sequence of str
        Names from :data:`mlneighbors.metrics.METRICS`.
    folds, repeats : int, default=10, 1
        ``repeats`` times ``folds``-fold stratified cross-validation (fold ``r * folds + j``).
    split : bool, default=False
        The standard split instead: train on ``X``, test on ``X_test`` (fold 0).
    seed : int, default=0
        Seed of the folds (repeat ``r``: ``seed + r``).
    jobs : int, default=None
        Tasks (dataset x fold) in that many processes on this machine (None or 1: here).
    client : distributed.Client, default=None
        Tasks on this Dask cluster instead (each dataset is scattered once).
    retry_failed : bool, default=False
        Compute again the cells that failed before (else they stay failed: NaN).
    command : str, default=None
        The command line, for the store's ``runs`` table.
    on_plan : callable, default=None
        Called with (cells, stored) before the first cell is computed.

    Returns
    -------
    summary : RunSummary

    Examples
    --------
    >>> import os, tempfile
    >>> import numpy as np
    >>> from mlneighbors import BRkNN, MLkNN
    >>> from mlneighbors.benchmark import BenchmarkData, read_rows, run_benchmark
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(60, 4))
    >>> Y = (X[:, :3] > 0).astype(int)
    >>> path = os.path.join(tempfile.mkdtemp(), "results.sqlite")
    >>> models = {"mlknn:k=3": MLkNN(3), "mlknn:k=5": MLkNN(5), "brknn": BRkNN(5)}
    >>> summary = run_benchmark(path, models, {"toy": BenchmarkData(X, Y)}, metrics=["hamming_loss"], folds=3)
    >>> summary.computed, summary.searches, summary.searches_unshared
    (9, 6, 15)
    >>> run_benchmark(path, models, {"toy": BenchmarkData(X, Y)}, metrics=["hamming_loss"], folds=3).computed
    0
    >>> len(read_rows(path))
    9
    """
    started = time.perf_counter()
    metrics = _check_arguments(models, datasets, metrics, folds=folds, repeats=repeats, split=split, jobs=jobs)
    protocol = protocol_of(split=split, folds=folds, repeats=repeats, seed=seed)
    _check_scores(models, metrics)
    _check_model_params(models)
    pairs = {name: folds_of(data, protocol) for name, data in datasets.items()}
    described = {
        name: {"sha256": data.sha256(), "folds_sha256": _folds_sha256(pairs[name], data),
               "n_samples": data.n_samples, "n_features": int(data.X.shape[1]),
               "n_labels": int(np.asarray(data.Y).shape[1]) if not sp.issparse(data.Y) else int(data.Y.shape[1]),
               "n_test": None if data.X_test is None else int(data.X_test.shape[0]), "scale": data.scale}
        for name, data in datasets.items()
    }
    _check_distinct(described)
    params = _params(models)
    own = not isinstance(store, Store)
    db = Store(store, write=True) if own else store
    try:
        db.check(protocol, described, params)
        if retry_failed:
            db.forget_failures()
        done = db.done(metrics)
        tasks = []  # (dataset, fold, missing models)
        for name in datasets:
            for fold in range(len(pairs[name])):
                missing = [m for m in models if (name, m, fold) not in done]
                if missing:
                    tasks.append((name, fold, missing))
        summary = RunSummary(cells=sum(len(p) for p in pairs.values()) * len(models))
        summary.stored = summary.cells - sum(len(t[2]) for t in tasks)
        if on_plan is not None:
            on_plan(summary.cells, summary.stored)
        run = db.start_run(seed=seed, protocol=protocol, models=list(models), datasets=list(datasets),
                           metrics=metrics, command=command)
        _compute(db, run, tasks, models, metrics, datasets, pairs, summary, jobs, client)
        db.end_run(run, searches=summary.searches, searches_unshared=summary.searches_unshared)
    finally:
        if own:
            db.close()
    summary.seconds = time.perf_counter() - started
    return summary


def _compute(db: Store, run: int, tasks: list[tuple[str, int, list[str]]], models: Mapping[str, Any],
             metrics: list[str], datasets: Mapping[str, BenchmarkData], pairs: dict[str, list],
             summary: RunSummary, jobs: int | None, client: Any) -> None:
    from .._progress import task

    with task("benchmark", total=sum(len(t[2]) for t in tasks), unit="cells") as bar:
        def commit(dataset: str, fold: int, cell: _Cell) -> None:
            db.add_cell(run, dataset, cell.model, fold, cell.values, metrics, cell.seconds, cell.error)
            summary.computed += 1
            summary.failed += cell.error is not None
            bar.advance(1)

        warned: dict[tuple[str, str], dict[str, list[int]]] = {}

        def absorb(result: _TaskResult, dataset: str, fold: int) -> None:
            summary.searches += result.searches
            summary.searches_unshared += result.requests
            for model, message in result.warnings:
                warned.setdefault((dataset, message), {}).setdefault(model, []).append(fold)
            summary.warnings = _warning_lines(warned, len(models))

        if client is not None:
            for (dataset, fold), result in _on_dask(client, tasks, models, metrics, datasets, pairs):
                for cell in result.cells:
                    commit(dataset, fold, cell)
                absorb(result, dataset, fold)
        elif jobs not in (None, 1):
            for (dataset, fold), result in _in_processes(jobs, tasks, models, metrics, datasets, pairs):
                for cell in result.cells:
                    commit(dataset, fold, cell)
                absorb(result, dataset, fold)
        else:
            for dataset, fold, names in tasks:
                data = datasets[dataset]
                train, test = pairs[dataset][fold]
                absorb(run_task({n: models[n] for n in names}, metrics, data.scale, data.X, data.Y, train, test,
                                data.X_test, data.Y_test,
                                sink=lambda cell, d=dataset, f=fold: commit(d, f, cell)), dataset, fold)


def _warning_lines(warned: Mapping[tuple[str, str], Mapping[str, list[int]]], n_models: int) -> list[str]:
    """One line per dataset, message and set of folds, naming the models it came from."""
    lines = []
    for (dataset, message), by_model in warned.items():
        groups: dict[tuple[int, ...], list[str]] = {}
        for model, folds in by_model.items():
            groups.setdefault(tuple(sorted(set(folds))), []).append(model)
        for folds, names in groups.items():
            who = f"every model ({len(names)})" if len(names) == n_models > 1 else ", ".join(names)
            where = ("fold " if len(folds) == 1 else "folds ") + ", ".join(map(str, folds))
            lines.append(f"{dataset}, {where}, {who}: {message}")
    return lines


def _arguments(tasks_entry: tuple[str, int, list[str]], models: Mapping[str, Any], metrics: list[str],
               datasets: Mapping[str, BenchmarkData], pairs: dict[str, list]) -> tuple:
    """A task's arguments for another process: its fold's rows cut here (a worker receives
    only them)."""
    dataset, fold, names = tasks_entry
    data = datasets[dataset]
    train, test = pairs[dataset][fold]
    if train is None:
        parts = (data.X, data.Y, None, None, data.X_test, data.Y_test)
    else:
        parts = (_take(data.X, train), _take(data.Y, train), None, None, _take(data.X, test), _take(data.Y, test))
    return ({n: models[n] for n in names}, metrics, data.scale, *parts)


def _in_processes(jobs: int, tasks: list, models: Mapping[str, Any], metrics: list[str],
                  datasets: Mapping[str, BenchmarkData], pairs: dict[str, list]) -> Iterator[tuple[tuple, Any]]:
    """The tasks' results as they finish, from ``jobs`` processes; at most two tasks per process
    are waiting at any time (their rows are copies)."""
    import multiprocessing
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

    queue = list(tasks)
    counter = multiprocessing.Value("i", 0)
    start = {"initializer": _worker_start, "initargs": (os.getpid(), jobs, counter)}
    with ProcessPoolExecutor(max_workers=jobs, **start) as pool:
        running: dict[Any, tuple[str, int]] = {}
        try:
            while queue or running:
                while queue and len(running) < 2 * jobs:
                    entry = queue.pop(0)
                    running[pool.submit(run_task, *_arguments(entry, models, metrics, datasets, pairs))] = entry[:2]
                finished, _ = wait(running, return_when=FIRST_COMPLETED)
                for future in finished:
                    yield running.pop(future), future.result()
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)
            raise


def _worker_start(parent: int, jobs: int, counter: Any) -> None:
    """A worker process: it ends with the run, and computes on its share of the cores."""
    _die_with_parent(parent)
    _share_cores(jobs, counter)


#: the worker's BLAS thread limit, kept for the worker's life
_LIMITS: Any = None


def _share_cores(jobs: int, counter: Any) -> None:
    """Give this worker (the ``counter``-th started) its share of the cores: ``n_cpu // jobs`` of
    them, its own (the CPU affinity, which the exact engine's ``n_jobs=None`` reads) where there
    are as many cores as workers, and as many BLAS threads.  Every model's numbers are the same
    on any number of threads (the exact engine's reference distances; BKNN, BLDA and the hybrid
    compute their products on one BLAS thread), so a worker needs no more than its share: all
    the machine's threads in every worker made ``--jobs 2`` slower than one process (611 s
    against 410 for the reference run)."""
    global _LIMITS
    try:
        cpus = sorted(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        cpus = list(range(os.cpu_count() or 1))
    with counter.get_lock():
        slot = counter.value % jobs
        counter.value += 1
    share = max(1, len(cpus) // jobs)
    if jobs <= len(cpus) and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, cpus[slot * share : (slot + 1) * share])
    from threadpoolctl import threadpool_limits

    _LIMITS = threadpool_limits(share)


def _die_with_parent(parent: int) -> None:
    """A worker process ends with the run however the run ends (``kill -9`` included: no
    exit handler runs then, and an orphaned worker would compute on for nobody).  Linux
    delivers SIGKILL the moment the parent dies; elsewhere a thread watches for the parent
    to be gone."""
    import signal
    import threading

    if sys.platform.startswith("linux"):
        import ctypes

        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent:  # the parent died before the signal was asked for
        os._exit(1)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, name="mlneighbors-parent-watch", daemon=True).start()


def _on_dask(client: Any, tasks: list, models: Mapping[str, Any], metrics: list[str],
             datasets: Mapping[str, BenchmarkData], pairs: dict[str, list]) -> Iterator[tuple[tuple, Any]]:
    """The tasks' results as they finish on a Dask cluster: each dataset is scattered once,
    each worker cuts its fold's rows."""
    from distributed import as_completed

    scattered: dict[str, tuple] = {}
    futures = {}
    for dataset, fold, names in tasks:
        data = datasets[dataset]
        if dataset not in scattered:
            scattered[dataset] = tuple(client.scatter(part) if part is not None else None
                                       for part in (data.X, data.Y, data.X_test, data.Y_test))
        X, Y, X_test, Y_test = scattered[dataset]
        train, test = pairs[dataset][fold]
        future = client.submit(run_task, {n: models[n] for n in names}, metrics, data.scale, X, Y, train, test,
                               X_test, Y_test, pure=False)
        futures[future] = (dataset, fold)
    try:
        for future in as_completed(list(futures)):
            yield futures[future], future.result()
    except BaseException:
        client.cancel(list(futures))
        raise
