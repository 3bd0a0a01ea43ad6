"""The runner: the numbers (as evaluate_models gives them), resuming, the shared search, failed
cells, processes and a Dask cluster."""

from __future__ import annotations

import math
import os
import sqlite3

import numpy as np
import pytest

from mlneighbors import BRkNN, DMLkNN, MLkNN
from mlneighbors.benchmark import BenchmarkData, Store, folds_of, read_rows, run_benchmark
from mlneighbors.model_selection import evaluate_models

METRICS = ["hamming_loss", "micro_f1", "ranking_loss", "average_precision"]


def toy(seed: int = 0, n: int = 60, d: int = 4) -> BenchmarkData:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    return BenchmarkData(X, (X[:, :3] + rng.normal(scale=0.5, size=(n, 3)) > 0).astype(int))


def models() -> dict:
    return {f"mlknn:k={k}": MLkNN(k) for k in (3, 5, 7)} | {"brknn": BRkNN(5), "dmlknn": DMLkNN(4)}


DATASETS = {"a": toy(0), "b": toy(1, n=45)}


def values(path) -> dict:
    return {row[:4]: row[4] for row in read_rows(path)}


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """One uninterrupted in-process run: its store's numbers."""
    path = tmp_path_factory.mktemp("reference") / "r.sqlite"
    summary = run_benchmark(path, models(), DATASETS, metrics=METRICS, folds=3, seed=2)
    return path, values(path), summary


def test_the_numbers_are_evaluate_models_on_the_same_folds(reference):
    path, stored, summary = reference
    assert summary.cells == summary.computed == 2 * 5 * 3 and summary.stored == 0
    for name, data in DATASETS.items():
        separate = evaluate_models(models(), data.X, data.Y, cv=3, random_state=2, metrics=METRICS, scale="minmax",
                                   share_neighbors=False)
        for model, result in separate.items():
            for metric in METRICS:
                assert [stored[(name, model, f, metric)] for f in range(3)] == list(result.per_fold[metric])


def test_one_search_per_fold_serves_every_model_and_k(reference):
    _, _, summary = reference
    # per fold: one leave-one-out search of the training rows and one of the test rows, for
    # five models (three k of ML-kNN among them); four of them ask for both, BRkNN (no training
    # statistics) for the test rows only, and each asks once for its predictions and scores
    assert summary.searches == 2 * 3 * 2
    assert summary.searches_unshared == (4 * 2 + 1) * 3 * 2 > summary.searches


def test_a_second_run_computes_nothing_and_a_partial_run_is_completed(reference, tmp_path):
    path, stored, _ = reference
    again = run_benchmark(path, models(), DATASETS, metrics=METRICS, folds=3, seed=2)
    assert (again.computed, again.stored, again.searches) == (0, 30, 0)
    # a store holding part of the work: some models, some metrics, one dataset
    partial = tmp_path / "p.sqlite"
    some = {k: v for k, v in models().items() if k in ("mlknn:k=5", "brknn")}
    run_benchmark(partial, some, {"a": DATASETS["a"]}, metrics=METRICS[:2], folds=3, seed=2)
    summary = run_benchmark(partial, models(), DATASETS, metrics=METRICS, folds=3, seed=2)
    assert summary.stored == 0 and summary.computed == 30  # cells lacking a metric are computed again
    assert values(partial) == stored
    rows = read_rows(partial)
    assert len(rows) == len({r[:4] for r in rows}) == 30 * len(METRICS)


def test_processes_give_the_numbers_of_an_in_process_run(reference, tmp_path):
    _, stored, summary = reference
    path = tmp_path / "j.sqlite"
    jobs = run_benchmark(path, models(), DATASETS, metrics=METRICS, folds=3, seed=2, jobs=2)
    assert values(path) == stored
    assert (jobs.searches, jobs.searches_unshared) == (summary.searches, summary.searches_unshared)


@pytest.mark.slow
def test_a_local_dask_cluster_gives_the_numbers_of_an_in_process_run(reference, tmp_path):
    distributed = pytest.importorskip("distributed")
    _, stored, summary = reference
    path = tmp_path / "d.sqlite"
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        on_dask = run_benchmark(path, models(), DATASETS, metrics=METRICS, folds=3, seed=2, client=client)
    assert values(path) == stored
    assert on_dask.searches == summary.searches


def test_repeated_cross_validation_and_the_standard_split(tmp_path):
    data = toy()
    pairs = folds_of(data, {"kind": "cv", "folds": 3, "repeats": 2, "seed": 5})
    assert len(pairs) == 6
    for r in range(2):  # each repeat partitions the rows; repeat r is evaluate's folds with seed 5 + r
        tests = [test for _, test in pairs[3 * r: 3 * r + 3]]
        assert sorted(np.concatenate(tests).tolist()) == list(range(60))
        separate = evaluate_models({"m": MLkNN(3)}, data.X, data.Y, cv=3, random_state=5 + r, metrics=METRICS)
        assert all((a == b).all() for a, b in zip(tests, separate["m"].test_indices, strict=True))
    assert not all((a[1] == b[1]).all() for a, b in zip(pairs[:3], pairs[3:], strict=True))
    path = tmp_path / "r.sqlite"
    assert run_benchmark(path, {"m": MLkNN(3)}, {"t": data}, metrics=METRICS, folds=3, repeats=2).computed == 6
    assert {r[2] for r in read_rows(path)} == set(range(6))
    split = BenchmarkData(data.X[:40], data.Y[:40], data.X[40:], data.Y[40:])
    path = tmp_path / "s.sqlite"
    run_benchmark(path, {"m": MLkNN(3)}, {"t": split}, metrics=METRICS, split=True)
    expected = evaluate_models({"m": MLkNN(3)}, split.X, split.Y, test=(split.X_test, split.Y_test),
                               metrics=METRICS, scale="minmax")["m"]
    assert {r[3]: r[4] for r in read_rows(path)} == {m: expected.per_fold[m][0] for m in METRICS}
    assert {r[2] for r in read_rows(path)} == {0}


class Fails(MLkNN):
    """ML-kNN that cannot fit data with more than 35 rows (a model that fails on some folds)."""

    def fit(self, X, Y):
        if X.shape[0] > 35:
            raise RuntimeError("too many rows for this model")
        return super().fit(X, Y)


def test_a_model_that_fails_is_a_nan_cell_and_the_others_run_on(tmp_path):
    path = tmp_path / "r.sqlite"
    ms = {"mlknn": MLkNN(3), "fails": Fails(3), "brknn": BRkNN(3)}
    summary = run_benchmark(path, ms, {"a": toy(0), "b": toy(1, n=45)}, metrics=METRICS, folds=3)
    assert summary.computed == 18 and summary.failed == 3  # "fails" on the folds of a (40 training rows; 30 on b)
    stored = values(path)
    assert all(math.isnan(stored[("a", "fails", f, m)]) for f in range(3) for m in METRICS)
    assert all(not math.isnan(v) for (d, model, _, _), v in stored.items() if (d, model) != ("a", "fails"))
    with Store(path) as store:
        failures = store.table("failures")
    assert {(r["dataset"], r["model"]) for r in failures} == {("a", "fails")}
    assert failures[0]["error"] == "RuntimeError: too many rows for this model"
    assert run_benchmark(path, ms, {"a": toy(0), "b": toy(1, n=45)}, metrics=METRICS, folds=3).computed == 0
    retried = run_benchmark(path, ms, {"a": toy(0), "b": toy(1, n=45)}, metrics=METRICS, folds=3, retry_failed=True)
    assert retried.computed == retried.failed == 3


class NoScores(MLkNN):
    """A model that predicts label sets and gives no scores."""

    predict_proba = property()  # hasattr(...) is False: no scores to rank labels by


def test_a_ranking_metric_for_a_model_without_scores_is_refused_before_anything_runs(tmp_path):
    path = tmp_path / "r.sqlite"
    with pytest.raises(ValueError, match="metric 'ranking_loss' ranks labels by score, which model 'plain'"):
        run_benchmark(path, {"mlknn": MLkNN(3), "plain": NoScores(3)}, {"a": toy()}, metrics=METRICS, folds=3)
    assert not path.exists() or read_rows(path) == []
    run_benchmark(path, {"plain": NoScores(3)}, {"a": toy()}, metrics=["hamming_loss"], folds=3)
    assert len(read_rows(path)) == 3


def test_every_cell_is_committed_as_it_finishes(tmp_path):
    """Between two cells of an in-process run, the finished ones are already in the file (what
    a kill -9 leaves behind): read by another connection from inside the run."""
    path = tmp_path / "r.sqlite"
    seen = []

    class Watch(MLkNN):
        def fit(self, X, Y):
            db = sqlite3.connect(path)
            seen.append(db.execute("SELECT count(DISTINCT dataset || model || fold) FROM results").fetchone()[0])
            db.close()
            return super().fit(X, Y)

    run_benchmark(path, {"a": MLkNN(3), "watch": Watch(3)}, {"t": toy()}, metrics=METRICS, folds=3)
    assert seen == [1, 3, 5]


def test_the_progress_is_one_task_over_the_cells_left(reference, tmp_path):
    from mlneighbors._progress import listen

    path = tmp_path / "r.sqlite"
    some = {k: v for k, v in models().items() if k in ("mlknn:k=5", "brknn")}
    run_benchmark(path, some, {"a": DATASETS["a"]}, metrics=METRICS, folds=3, seed=2)  # 6 of the 30 cells
    events = []
    plans = []
    with listen(events.append):
        run_benchmark(path, models(), DATASETS, metrics=METRICS, folds=3, seed=2,
                      on_plan=lambda cells, stored: plans.append((cells, stored)))
    assert plans == [(30, 6)]
    bar = [e for e in events if e.stage == "benchmark"]
    assert bar[0].total == 24 and bar[0].unit == "cells"
    assert [e.done for e in bar if not e.closed] == list(range(25)) and bar[-1].closed


def _worker_share() -> tuple[int, int]:
    from threadpoolctl import threadpool_info

    blas = [lib["num_threads"] for lib in threadpool_info() if lib.get("user_api") == "blas"]
    return len(os.sched_getaffinity(0)), max(blas, default=0)


@pytest.mark.skipif(not hasattr(os, "sched_getaffinity"), reason="CPU affinity is Linux's")
def test_each_worker_computes_on_its_share_of_the_cores():
    """--jobs N: each worker process gets n_cpu // N cores of its own and as many BLAS threads
    (the numbers do not depend on the threads, and all of them in every worker was slower)."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from mlneighbors.benchmark._run import _worker_start

    cpus = len(os.sched_getaffinity(0))
    jobs = 2
    share = max(1, cpus // jobs)
    counter = multiprocessing.Value("i", 0)
    with ProcessPoolExecutor(jobs, initializer=_worker_start, initargs=(os.getpid(), jobs, counter)) as pool:
        seen = [pool.submit(_worker_share).result() for _ in range(4)]
    for cores, blas in seen:
        assert cores == (share if jobs <= cpus else cpus)
        assert blas in (0, share)  # 0: a BLAS threadpoolctl cannot see
