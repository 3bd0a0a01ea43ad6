"""The results store: its key, its provenance checks, a locked, read-only or foreign file."""

from __future__ import annotations

import math
import sqlite3

import numpy as np
import pytest

import mlneighbors
from mlneighbors import BRkNN, MLkNN
from mlneighbors.benchmark import BenchmarkData, Store, StoreError, read_rows, run_benchmark


def toy(seed: int = 0, n: int = 48) -> BenchmarkData:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    return BenchmarkData(X, (X[:, :3] + rng.normal(scale=0.5, size=(n, 3)) > 0).astype(int))


MODELS = {"mlknn:k=3": MLkNN(3), "brknn": BRkNN(5)}
METRICS = ["hamming_loss", "ranking_loss"]


def run(path, models=MODELS, datasets=None, **kwargs):
    return run_benchmark(path, models, datasets or {"toy": toy()}, metrics=METRICS, folds=3, **kwargs)


def test_primary_key_makes_a_second_row_of_a_cell_impossible(tmp_path):
    path = tmp_path / "r.sqlite"
    run(path)
    db = sqlite3.connect(path)
    d, m, f, metric, value, seconds, run_id = db.execute("SELECT * FROM results LIMIT 1").fetchone()
    with pytest.raises(sqlite3.IntegrityError, match="UNIQUE"):
        db.execute("INSERT INTO results VALUES (?, ?, ?, ?, ?, ?, ?)", (d, m, f, metric, 0.5, 1.0, run_id))
    db.close()
    # the store's own writer, given a cell it holds, adds nothing
    with Store(path, write=True) as store:
        store.add_cell(run_id, d, m, f, {metric: 0.5, "ranking_loss": 0.5}, METRICS, 1.0)
    rows = read_rows(path)
    assert len(rows) == len({r[:4] for r in rows}) == 2 * 3 * len(METRICS)
    assert dict(((r[0], r[1], r[2], r[3]), r[4]) for r in rows)[(d, m, f, metric)] == value


def test_provenance_is_recorded(tmp_path):
    path = tmp_path / "r.sqlite"
    data = toy()
    run(path, datasets={"toy": data}, seed=4)
    with Store(path) as store:
        (ds,) = store.table("datasets")
        (r,) = store.table("runs")
        models = {row["model"]: row["params"] for row in store.table("models")}
    assert ds["sha256"] == data.sha256() and len(ds["folds_sha256"]) == 64
    assert (ds["n_samples"], ds["n_features"], ds["n_labels"], ds["scale"]) == (48, 4, 3, "minmax")
    assert r["version"] == mlneighbors.__version__ and r["seed"] == 4 and r["ended"] >= r["started"]
    assert r["cells"] == 6 and r["searches"] < r["searches_unshared"]
    assert '"n_neighbors": 3' in models["mlknn:k=3"]


@pytest.mark.parametrize("change, words", [
    ({"datasets": {"toy": toy(seed=1)}}, "dataset 'toy' is not the data its results were made on"),
    ({"folds": 4}, "another protocol (folds 3 here, 4 asked)"),
    ({"seed": 1}, "another protocol (seed 0 here, 1 asked)"),
    ({"models": {"mlknn:k=3": MLkNN(5), "brknn": BRkNN(5)}}, "model 'mlknn:k=3' was run with other parameters"),
])
def test_a_run_made_under_other_data_folds_or_parameters_is_refused(tmp_path, change, words):
    path = tmp_path / "r.sqlite"
    run(path)
    before = read_rows(path)
    kwargs = dict(change)
    folds = kwargs.pop("folds", 3)
    with pytest.raises(StoreError) as caught:
        run_benchmark(path, kwargs.pop("models", MODELS), kwargs.pop("datasets", {"toy": toy()}),
                      metrics=METRICS, folds=folds, **kwargs)
    message = str(caught.value)
    assert words in message and "\n" not in message
    assert read_rows(path) == before  # nothing lost, nothing added


def test_a_changed_fold_assignment_is_refused(tmp_path):
    path = tmp_path / "r.sqlite"
    run(path)
    db = sqlite3.connect(path)
    db.execute("UPDATE datasets SET folds_sha256 = 'f00d' || substr(folds_sha256, 5)")
    db.commit()
    db.close()
    with pytest.raises(StoreError, match="the folds of dataset 'toy' differ"):
        run(path)


def test_a_store_of_another_version_is_refused_for_a_run_and_read_by_a_report(tmp_path):
    path = tmp_path / "r.sqlite"
    run(path)
    db = sqlite3.connect(path)
    db.execute("UPDATE meta SET value = '0.0.1' WHERE key = 'mlneighbors'")
    db.commit()
    db.close()
    with pytest.raises(StoreError, match=r"written by mlneighbors 0\.0\.1, this is .*not mixed"):
        run(path)
    assert len(read_rows(path)) == 2 * 3 * len(METRICS)


def test_a_store_of_another_layout_or_no_store_at_all(tmp_path):
    path = tmp_path / "r.sqlite"
    Store(path, write=True).close()
    db = sqlite3.connect(path)
    db.execute("UPDATE meta SET value = '99' WHERE key = 'schema'")
    db.commit()
    db.close()
    with pytest.raises(StoreError, match="has layout 99"):
        read_rows(path)
    text = tmp_path / "notes.txt"
    text.write_text("hello\n")
    with pytest.raises(StoreError, match="not a results store"):
        Store(text, write=True)
    with pytest.raises(StoreError, match="no results store"):
        read_rows(tmp_path / "absent.sqlite")


def test_a_store_another_run_writes_is_refused(tmp_path):
    path = tmp_path / "r.sqlite"
    with Store(path, write=True):  # a run in progress holds it
        with pytest.raises(StoreError, match="is locked: another benchmark run is writing it"):
            run(path)
        assert read_rows(path) == []  # a report reads it meanwhile
    run(path)  # its lock is gone with it


def test_a_store_sqlite_keeps_locked_is_refused(tmp_path):
    path = tmp_path / "r.sqlite"
    run(path)
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(StoreError, match="is locked by another process"):
            Store(path, write=True, timeout=0.1)
    finally:
        other.execute("ROLLBACK")
        other.close()


def test_a_failed_cell_is_nan_with_its_reason_and_stays_failed_until_asked(tmp_path):
    path = tmp_path / "r.sqlite"
    with Store(path, write=True) as store:
        store.check({"kind": "split", "seed": 0},
                    {"d": {"sha256": "a", "folds_sha256": "b", "n_samples": 1, "n_features": 1, "n_labels": 1,
                           "n_test": 1, "scale": "none"}}, {"m": {}})
        run_id = store.start_run(seed=0, protocol={"kind": "split", "seed": 0}, models=["m"], datasets=["d"],
                                 metrics=METRICS, command=None)
        store.add_cell(run_id, "d", "m", 0, None, METRICS, 0.1, "ValueError: boom")
        assert store.done(METRICS) == {("d", "m", 0)}
        assert store.table("failures")[0]["error"] == "ValueError: boom"
        assert store.forget_failures() == 1
        assert store.done(METRICS) == set()
        store.add_cell(run_id, "d", "m", 0, None, METRICS, 0.1, "ValueError: boom")
    rows = read_rows(path)
    assert [r[:4] for r in rows] == [("d", "m", 0, "hamming_loss"), ("d", "m", 0, "ranking_loss")]
    assert all(math.isnan(r[4]) for r in rows)
