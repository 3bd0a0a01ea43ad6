"""The held-out trial of issue 47: each of its points on real stores, real subprocesses and a
real ``kill -9`` (no mocks). Every test here failed before the fixes (bd0ea43)."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from contextlib import redirect_stdout
from pathlib import Path

import numpy as np
import pytest

from mlneighbors import BRkNN, MLkNN
from mlneighbors.benchmark import BenchmarkData, Store, StoreError, build_report, read_rows, run_benchmark
from mlneighbors.cli import main

from ..datasets.files import write_arff
from .test_cli_benchmark import _kill_after, _stored_cells, bench, one_line
from .test_run import Fails
from .test_run import toy as toy60
from .test_store import toy

MODELS = {"mlknn:k=3": MLkNN(3), "mlknn:k=7": MLkNN(7), "brknn": BRkNN(5)}


def sha256_of(path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def tables(path) -> dict:
    """Every table of a store, read with sqlite3 itself (nothing of the library's)."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        names = [n for (n,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        return {n: db.execute(f"SELECT * FROM {n} ORDER BY 1, 2").fetchall() for n in names}
    finally:
        db.close()


def report_csv(store) -> list[dict]:
    """``mlneighbors benchmark report STORE --format csv``, parsed; asserts exit 0."""
    out = io.StringIO()
    with redirect_stdout(out):
        assert main(["benchmark", "report", str(store), "--format", "csv"]) == 0
    return list(csv.DictReader(io.StringIO(out.getvalue())))


def cli(*argv, capsys) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main([*map(str, argv)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def no_sidecars(path) -> None:
    for suffix in ("-wal", "-shm", "-journal"):
        assert not os.path.exists(f"{path}{suffix}"), f"{path}{suffix} left behind"


@pytest.fixture(scope="module")
def toy_store(tmp_path_factory):
    """A real store of three small datasets, three configurations (one failing on every fold of
    dataset a) and two metrics, 3-fold cross-validation."""
    path = tmp_path_factory.mktemp("toy") / "toy.sqlite"
    models = {"mlknn:k=3": MLkNN(3), "brknn": BRkNN(5), "fails": Fails(3)}
    run_benchmark(path, models, {"a": toy60(0), "b": toy60(1, n=45), "c": toy60(2, n=45)},
                  metrics=["hamming_loss", "micro_f1"], folds=3)
    return path


@pytest.fixture(scope="module")
def cli_store(tmp_path_factory, shared_data):
    """A real store written by the command line: emotions and yeast, 2 folds, three configurations."""
    path = tmp_path_factory.mktemp("cli") / "cli.sqlite"
    assert main(["benchmark", "run", str(path), "--models", "mlknn:k=5,10", "brknn", "--datasets", "emotions",
                 "yeast", "--cv", "2", "--metrics", "hamming_loss,one_error", "--quiet", "--data-home",
                 str(shared_data)]) == 0
    return path


# --------------------------------------------------------------------------------------
# 1. a dataset lacking folds of the protocol is incomplete, never ranked
# --------------------------------------------------------------------------------------


def test_a_dataset_every_model_lacks_folds_of_is_incomplete_and_unranked(tmp_path, capsys):
    path = tmp_path / "r.sqlite"
    datasets = {f"d{i}": toy(i) for i in range(5)}
    run_benchmark(path, MODELS, datasets, metrics=["hamming_loss"], folds=4)
    rows = read_rows(path)

    def ranks(rows):
        return build_report(rows)["hamming_loss"].comparison.average_ranks.round(4).tolist()

    # the dataset whose lost folds move the ranks: ranked on 2 of 4 folds (before) or left out (now)
    def truncated(name):
        return [r for r in rows if r[0] != name or r[2] < 2]

    name = next(d for d in datasets
                if ranks(truncated(d)) != ranks([r for r in rows if r[0] != d]))
    db = sqlite3.connect(path)
    with db:
        db.execute("DELETE FROM results WHERE dataset = ? AND fold >= ?", (name, 2))
    db.close()

    cells = report_csv(path)
    mine = [c for c in cells if c["dataset"] == name]
    assert mine and all(c["status"] == "incomplete" and c["rank"] == "" for c in mine), mine
    assert all(c["status"] == "ok" and c["rank"] != "" for c in cells if c["dataset"] != name)
    average = {c["model"]: float(c["average_rank"]) for c in cells}
    models = build_report(rows)["hamming_loss"].models
    assert [average[m] for m in models] == ranks([r for r in rows if r[0] != name])
    assert [average[m] for m in models] != ranks(truncated(name))  # what was reported before
    capsys.readouterr()
    assert main(["benchmark", "report", str(path)]) == 0
    assert "every model has 2 of the protocol's 4 folds" in capsys.readouterr().out
    # the library: the protocol's folds given, or read with the rows
    from mlneighbors.benchmark import read_store

    stored, provenance = read_store(path)
    for report in (build_report(stored, folds=4), build_report(stored, provenance=provenance)):
        assert report["hamming_loss"].dropped == {name: "every model has 2 of the protocol's 4 folds"}


def test_a_run_killed_at_a_fold_boundary_leaves_its_dataset_incomplete(tmp_path, shared_data, capsys):
    store = tmp_path / "r.sqlite"
    argv = ["benchmark", "run", str(store), "--models", "mlknn:k=3,5", "brknn", "--datasets", "emotions", "yeast",
            "--cv", "5", "--metrics", "hamming_loss", "--data-home", str(shared_data), "--quiet"]
    # emotions whole (15 cells), then yeast's first two folds: 6 more; a kill that lands inside a
    # fold is followed by another run killed once that fold is whole
    stored = _kill_after(argv, store, 21)
    for _ in range(5):
        if stored % 3 == 0:
            break
        stored = _kill_after(argv, store, 3 - stored % 3)
    assert stored % 3 == 0 and 15 < stored < 30, stored
    db = sqlite3.connect(store)
    folds = db.execute("SELECT model, count(DISTINCT fold) FROM results WHERE dataset = 'yeast' GROUP BY model")
    have = dict(folds.fetchall())
    db.close()
    assert len(have) == 3 and len(set(have.values())) == 1  # every model has the same yeast folds
    cells = report_csv(store)
    assert {c["status"] for c in cells if c["dataset"] == "yeast"} == {"incomplete"}
    assert {c["rank"] for c in cells if c["dataset"] == "yeast"} == {""}
    assert {c["status"] for c in cells if c["dataset"] == "emotions"} == {"ok"}
    capsys.readouterr()
    assert main(["benchmark", "report", str(store)]) == 0
    n = next(iter(have.values()))
    assert f"yeast: every model has {n} of the protocol's 5 folds" in capsys.readouterr().out


# --------------------------------------------------------------------------------------
# 2. the same data under two names is one dataset
# --------------------------------------------------------------------------------------


def test_two_names_of_one_data_in_a_run_are_refused_before_the_store_exists(tmp_path):
    path = tmp_path / "r.sqlite"
    data = toy(0)
    copy = BenchmarkData(data.X.copy(), data.Y.copy())
    with pytest.raises(ValueError, match=r"datasets 'a/flags\.arff' and '\.\./a/flags\.arff' hold the same data"):
        run_benchmark(path, MODELS, {"a/flags.arff": data, "../a/flags.arff": copy}, metrics=["hamming_loss"],
                      folds=3)
    assert not path.exists()


def test_a_store_refuses_a_new_name_for_data_it_holds_and_writes_nothing(tmp_path):
    path = tmp_path / "r.sqlite"
    run_benchmark(path, MODELS, {"flags": toy(0)}, metrics=["hamming_loss"], folds=3)
    before = tables(path)
    with pytest.raises(StoreError, match=r"dataset 'copy/flags' holds the same data as 'flags'") as caught:
        run_benchmark(path, MODELS, {"copy/flags": toy(0)}, metrics=["hamming_loss"], folds=3)
    assert "\n" not in str(caught.value)
    assert tables(path) == before
    no_sidecars(path)


def test_the_command_line_refuses_one_file_under_two_paths_in_one_line(tmp_path, monkeypatch, capsys):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 4))
    Y = (X[:, :3] + rng.normal(scale=0.5, size=(40, 3)) > 0).astype(int)
    (tmp_path / "a").mkdir()
    write_arff(tmp_path / "a" / "flags.arff", ["f1", "f2", "f3", "f4", "l1", "l2", "l3"], np.hstack([X, Y]),
               labels=["l1", "l2", "l3"])
    monkeypatch.chdir(tmp_path / "a")
    store = tmp_path / "r.sqlite"
    code, _, err = cli("benchmark", "run", store, "--models", "mlknn", "--datasets", "flags.arff",
                       "../a/flags.arff", "--labels-last", "3", "--cv", "2", "--metrics", "hamming_loss", "--quiet",
                       capsys=capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert err.startswith("mlneighbors benchmark run: ")
    assert "'flags.arff' and '../a/flags.arff' hold the same data" in err
    assert not store.exists()


def test_a_report_counts_two_names_of_one_sha256_once(tmp_path, capsys):
    path = tmp_path / "r.sqlite"
    run_benchmark(path, MODELS, {"a": toy(0), "b": toy(1), "c": toy(2)}, metrics=["hamming_loss"], folds=3)
    db = sqlite3.connect(path)
    with db:
        db.execute("UPDATE datasets SET sha256 = (SELECT sha256 FROM datasets WHERE dataset = 'a') "
                   "WHERE dataset = 'b'")
    db.close()
    code, out, err = cli("benchmark", "report", path, "--format", "json", capsys=capsys)
    assert code == 0, err
    (metric,) = json.loads(out)["metrics"]
    assert metric["kept"] == ["a", "c"]
    assert "the same data as a" in metric["dropped"]["b"]
    cells = report_csv(path)
    assert {c["rank"] for c in cells if c["dataset"] == "b"} == {""}


# --------------------------------------------------------------------------------------
# 3. a reader never reads what was not committed
# --------------------------------------------------------------------------------------


def test_a_killed_writers_uncommitted_values_are_never_read(tmp_path, capsys):
    path = tmp_path / "r.sqlite"
    protocol = {"kind": "cv", "folds": 5, "repeats": 1, "seed": 0}
    metrics = ["hamming_loss", "micro_f1", "macro_f1", "one_error", "coverage", "ranking_loss",
               "average_precision", "subset_accuracy"]
    names = [f"d{i:02d}" for i in range(50)]
    with Store(path, write=True) as store:  # 50 datasets x 2 models x 5 folds x 8 metrics: 4000 rows
        store.check(protocol, {name: {"sha256": f"{i:064x}", "folds_sha256": "0" * 64, "n_samples": 100,
                                      "n_features": 2, "n_labels": 2, "n_test": None, "scale": "minmax"}
                               for i, name in enumerate(names)}, {"m": {}, "n": {}})
        run = store.start_run(seed=0, protocol=protocol, models=["m", "n"], datasets=names, metrics=metrics,
                              command=None)
        rows = [(name, m, f, metric, 0.1 + 0.01 * f + 0.001 * i + (0.3 if m == "n" else 0.0), 0.5, run)
                for i, name in enumerate(names) for m in "mn" for f in range(5) for metric in metrics]
        store.db.execute("BEGIN")
        store.db.executemany("INSERT INTO results VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
        store.db.execute("COMMIT")
    original = read_rows(path)
    assert len(original) == len(rows) and not any(r[4] == -1 for r in original)
    writer = subprocess.Popen([sys.executable, "-c", (
        "import sqlite3, sys, time\n"
        f"db = sqlite3.connect({str(path)!r}, isolation_level=None)\n"
        "db.execute('PRAGMA cache_size=1')\n"
        "db.execute('BEGIN')\n"
        "db.execute('UPDATE results SET value = -1')\n"
        "print('ready', flush=True)\n"
        "time.sleep(120)\n")], stdout=subprocess.PIPE, text=True)
    try:
        assert writer.stdout.readline().strip() == "ready"
        started = time.monotonic()
        with pytest.raises(StoreError, match="locked"):
            with Store(path, timeout=0.2) as store:
                list(store.rows())
        assert time.monotonic() - started < 5
    finally:
        os.kill(writer.pid, signal.SIGKILL)
        writer.wait()
        writer.stdout.close()
    assert writer.returncode == -signal.SIGKILL
    # the test means something: the uncommitted values are in the file, its journal beside it
    assert os.path.exists(f"{path}-journal")
    raw = sqlite3.connect(f"file:{path}?immutable=1", uri=True)
    assert raw.execute("SELECT count(*) FROM results WHERE value = -1").fetchone()[0] > len(rows) // 2
    raw.close()
    after = read_rows(path)
    assert after == original
    assert not any(r[4] == -1 for r in after)
    code, out, err = cli("benchmark", "report", path, capsys=capsys)
    assert code == 0, err
    assert "-1.0000" not in out and "| d49 |" in out


# --------------------------------------------------------------------------------------
# 4. another application's SQLite database is refused before anything is written
# --------------------------------------------------------------------------------------


def _foreign(path) -> str:
    db = sqlite3.connect(path)
    with db:
        db.execute("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL)")
        db.executemany("INSERT INTO customers (name) VALUES (?)", [(f"customer {i}",) for i in range(50)])
    db.close()
    return sha256_of(path)


def test_run_benchmark_refuses_another_applications_database(tmp_path):
    path = tmp_path / "shop.sqlite"
    digest = _foreign(path)
    with pytest.raises(StoreError, match=r"not a results store: it is an SQLite database with other tables "
                                         r"\(customers\)") as caught:
        run_benchmark(path, MODELS, {"t": toy(0)}, metrics=["hamming_loss"], folds=3)
    assert "\n" not in str(caught.value)
    assert sha256_of(path) == digest
    no_sidecars(path)


def test_the_command_line_refuses_another_applications_database_in_one_line(tmp_path, shared_data, capsys):
    path = tmp_path / "shop.sqlite"
    digest = _foreign(path)
    assert bench("--models", "mlknn", "--datasets", "emotions", "--cv", "2", "--metrics", "hamming_loss",
                 "--quiet", store=path, shared_data=shared_data) == 2
    err = one_line(capsys)
    assert err.startswith(f"mlneighbors benchmark run: {path} is not a results store: it is an SQLite database "
                          "with other tables (customers)"), err
    assert sha256_of(path) == digest
    no_sidecars(path)
    assert tables(path).keys() == {"customers"}


# --------------------------------------------------------------------------------------
# 5. everything checked before the store is created; damaged stores in one line
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("spec, words", [
    ("mlknn:smoothing=-1", "The 'smoothing' parameter of MLkNN must be a float in the range [0, inf); got -1"),
    ("brknn:extension=c", "The 'extension' parameter of BRkNN must be one of 'a', 'b' or None; got 'c'"),
])
def test_a_refused_parameter_creates_no_store_and_the_corrected_command_runs(tmp_path, shared_data, capsys,
                                                                             spec, words):
    store = tmp_path / "new.sqlite"
    assert bench("--models", spec, "--datasets", "emotions", "--cv", "2", "--metrics", "hamming_loss", "--quiet",
                 store=store, shared_data=shared_data) == 2
    err = one_line(capsys)
    assert err.startswith("mlneighbors benchmark run: ") and words in err, err
    assert not store.exists()
    assert not list(tmp_path.iterdir())
    corrected = spec.split(":")[0]
    assert bench("--models", corrected, "--datasets", "emotions", "--cv", "3", "--metrics", "hamming_loss",
                 "--quiet", store=store, shared_data=shared_data) == 0
    assert {r[2] for r in read_rows(store)} == {0, 1, 2}


def test_a_store_with_a_protocol_and_no_results_takes_another_protocol(tmp_path):
    from mlneighbors.benchmark._run import protocol_of

    path = tmp_path / "r.sqlite"
    data = toy(0)
    described = {"t": {"sha256": data.sha256(), "folds_sha256": "0" * 64, "n_samples": data.n_samples,
                       "n_features": 4, "n_labels": 3, "n_test": None, "scale": data.scale}}
    store = Store(path, write=True)  # a run stopped before its first cell: the protocol, no results
    store.check(protocol_of(split=False, folds=2, repeats=1, seed=0), described, {"brknn": {}})
    store.close()
    assert tables(path)["results"] == [] and "protocol" in dict(tables(path)["meta"])
    summary = run_benchmark(path, MODELS, {"t": data}, metrics=["hamming_loss"], folds=3)
    assert summary.computed == 9
    with Store(path) as store:
        assert store.protocol == protocol_of(split=False, folds=3, repeats=1, seed=0)
        assert {row["model"] for row in store.table("models")} == set(MODELS)


def _damage(path, how: str) -> None:
    size = os.path.getsize(path)
    if how == "truncated":
        os.truncate(path, size // 2)
    else:
        with open(path, "r+b") as fh:
            fh.seek(size // 2 - 2048)
            fh.write(bytes(range(256)) * 16)


@pytest.mark.parametrize("how", ["truncated", "corrupted"])
def test_a_damaged_store_is_one_line_for_run_and_report(tmp_path, shared_data, cli_store, capsys, how):
    path = tmp_path / "damaged.sqlite"
    shutil.copyfile(cli_store, path)
    _damage(path, how)
    run = ["run", str(path), "--models", "mlknn:k=5,10", "brknn", "--datasets", "emotions", "--cv", "2",
           "--metrics", "hamming_loss,one_error", "--quiet", "--data-home", str(shared_data)]
    for command in (run, ["report", str(path)], ["export", str(path)]):
        capsys.readouterr()
        assert main(["benchmark", *command]) == 2, command[0]  # an exception would end the test here
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1, err
        assert err.startswith(f"mlneighbors benchmark {command[0]}: ") and str(path) in err, err


def test_a_protocol_that_is_not_json_is_one_line_naming_the_store(tmp_path, shared_data, toy_store, capsys):
    path = tmp_path / "r.sqlite"
    shutil.copyfile(toy_store, path)
    db = sqlite3.connect(path)
    with db:
        db.execute("UPDATE meta SET value = '{oops' WHERE key = 'protocol'")
    db.close()
    assert main(["benchmark", "report", str(path)]) == 2
    err = one_line(capsys)
    assert err.startswith(f"mlneighbors benchmark report: results store {path}") and "protocol" in err, err
    assert bench("--models", "mlknn", "--datasets", "emotions", "--cv", "3", "--metrics", "hamming_loss", "--quiet",
                 store=path, shared_data=shared_data) == 2
    err = one_line(capsys)
    assert err.startswith(f"mlneighbors benchmark run: results store {path}") and "protocol" in err, err


@pytest.mark.parametrize("kwargs, error, words", [
    ({"metrics": ["hamming_loss", "coverag"]}, ValueError, "unknown metric 'coverag'"),
    ({"repeats": 0}, ValueError, "repeats must be an integer of at least 1, got 0"),
    ({"split": True}, ValueError, "split=True tests on each dataset's test part, and dataset 't' has none"),
    ({"models": {"mlknn": "mlknn"}}, TypeError, "models['mlknn'] must be an unfitted estimator"),
])
def test_run_benchmark_says_what_is_wrong_and_creates_no_store(tmp_path, kwargs, error, words):
    path = tmp_path / "r.sqlite"
    arguments = {"models": MODELS, "metrics": ["hamming_loss"], "folds": 3} | kwargs
    with pytest.raises(Exception) as caught:
        run_benchmark(path, arguments.pop("models"), {"t": toy(0)}, **arguments)
    assert type(caught.value) is error, repr(caught.value)
    assert words in str(caught.value)
    assert not path.exists() and not list(tmp_path.iterdir())


# --------------------------------------------------------------------------------------
# 6. --jobs workers die with a run killed -9
# --------------------------------------------------------------------------------------


def _workers(pid: int) -> set[int]:
    """The processes ``pid`` started that run Python (not a passing ``uname``)."""
    found: set[int] = set()
    try:
        python = os.readlink(f"/proc/{pid}/exe")
    except OSError:
        return found
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                ppid = int(fh.read().rsplit(")", 1)[1].split()[1])
            if ppid == pid and os.readlink(f"/proc/{entry}/exe") == python:
                found.add(int(entry))
        except (OSError, ValueError, IndexError):
            pass
    return found


def _alive(pid: int) -> bool:
    """A process that has not ended (a zombie has ended: only its exit status is left)."""
    try:
        with open(f"/proc/{pid}/status") as fh:
            state = next(line for line in fh if line.startswith("State:"))
    except (OSError, StopIteration):
        return False
    return "Z" not in state.split()[1]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_jobs_workers_die_with_a_run_killed_9(tmp_path, shared_data):
    store = tmp_path / "r.sqlite"
    run = subprocess.Popen([sys.executable, "-m", "mlneighbors", "benchmark", "run", str(store), "--models",
                            "mlknn:k=5,10,15", "brknn", "dmlknn", "--datasets", "yeast", "--cv", "10", "--jobs", "2",
                            "--metrics", "hamming_loss", "--data-home", str(shared_data), "--quiet"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    workers: set[int] = set()
    try:
        deadline = time.monotonic() + 60
        while len(workers) < 2 and run.poll() is None and time.monotonic() < deadline:
            workers |= _workers(run.pid)
            time.sleep(0.01)
        assert len(workers) >= 2 and run.poll() is None, "no two workers seen while the run ran"
        os.kill(run.pid, signal.SIGKILL)  # the run only, as an out-of-memory killer would
        run.wait()
        deadline = time.monotonic() + 5
        while any(_alive(p) for p in workers) and time.monotonic() < deadline:
            time.sleep(0.05)
        left = [p for p in workers if _alive(p)]
        assert not left, f"workers {left} outlived the run"
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
        for p in workers:  # never leave one running, whatever happened
            if _alive(p):
                os.kill(p, signal.SIGKILL)
    assert _stored_cells(store) < 50  # killed mid-run


# --------------------------------------------------------------------------------------
# 7. provenance in every format; every per-fold value exported
# --------------------------------------------------------------------------------------


def test_every_report_format_states_the_provenance(cli_store, capsys):
    import mlneighbors

    stored = tables(cli_store)
    digests = {row[0]: row[1] for row in stored["datasets"]}
    params = {row[0]: json.loads(row[1]) for row in stored["models"]}
    protocol = json.loads(dict(stored["meta"])["protocol"])
    assert set(digests) == {"emotions", "yeast"} and len(params) == 3

    code, md, err = cli("benchmark", "report", cli_store, "--format", "markdown", capsys=capsys)
    assert code == 0, err
    assert "## Provenance" in md
    provenance = md[md.index("## Provenance"):]
    assert all(digest in provenance for digest in digests.values())
    assert mlneighbors.__version__ in provenance

    code, tex, err = cli("benchmark", "report", cli_store, "--format", "latex", capsys=capsys)
    assert code == 0, err
    assert all(digest in tex for digest in digests.values()) and f"mlneighbors {mlneighbors.__version__}" in tex

    code, out, err = cli("benchmark", "report", cli_store, "--format", "csv", capsys=capsys)
    assert code == 0, err
    rows = list(csv.DictReader(io.StringIO(out)))
    assert rows
    for row in rows:
        assert row["mlneighbors"] == mlneighbors.__version__
        assert json.loads(row["protocol"]) == protocol and int(row["seed"]) == protocol["seed"] == 0
        assert row["dataset_sha256"] == digests[row["dataset"]]
        assert json.loads(row["params"]) == params[row["model"]]

    code, out, err = cli("benchmark", "report", cli_store, "--format", "json", capsys=capsys)
    assert code == 0, err
    prov = json.loads(out)["provenance"]
    assert prov["protocol"] == protocol and prov["mlneighbors"] == mlneighbors.__version__
    assert {name: d["sha256"] for name, d in prov["datasets"].items()} == digests
    assert prov["models"] == params


@pytest.mark.parametrize("which", ["toy_store", "cli_store"])
def test_export_gives_every_per_fold_value_as_stored(which, request, capsys):
    store = request.getfixturevalue(which)
    expected = read_rows(store)
    failed = [r for r in expected if math.isnan(r[4])]
    assert (which == "toy_store") == bool(failed)  # fails on dataset a: NaN cells to export

    def same(got):
        assert [g[:4] for g in got] == [e[:4] for e in expected]
        for g, e in zip(got, expected, strict=True):
            assert (math.isnan(g[4]) and math.isnan(e[4])) or g[4] == e[4], (g, e)

    code, out, err = cli("benchmark", "export", store, "--format", "csv", capsys=capsys)
    assert code == 0, err
    rows = list(csv.DictReader(io.StringIO(out)))
    same([(r["dataset"], r["model"], int(r["fold"]), r["metric"], math.nan if r["value"] == "" else float(r["value"]))
          for r in rows])
    digests = {row[0]: row[1] for row in tables(store)["datasets"]}
    assert all(r["dataset_sha256"] == digests[r["dataset"]] for r in rows)

    code, out, err = cli("benchmark", "export", store, "--format", "json", capsys=capsys)
    assert code == 0, err
    document = json.loads(out)
    same([(v["dataset"], v["model"], v["fold"], v["metric"], math.nan if v["value"] is None else v["value"])
          for v in document["values"]])
    assert {name: d["sha256"] for name, d in document["provenance"]["datasets"].items()} == digests


# --------------------------------------------------------------------------------------
# 10. papercuts
# --------------------------------------------------------------------------------------


def test_the_runs_warnings_name_dataset_model_and_fold(tmp_path):
    from mlneighbors.benchmark import folds_of
    from mlneighbors.benchmark._run import protocol_of

    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 4))
    Y = (X[:, :3] > 0).astype(int)
    Y[:, 2] = 0
    Y[5, 2] = 1  # label 2's one positive example: absent from the training part of one fold
    data = BenchmarkData(X, Y)
    (fold,) = [f for f, (_, test) in enumerate(folds_of(data, protocol_of(split=False, folds=3, repeats=1, seed=0)))
               if 5 in test]
    summary = run_benchmark(tmp_path / "r.sqlite", {"mlknn": MLkNN(3)}, {"rare": data}, metrics=["hamming_loss"],
                            folds=3)
    (warning,) = summary.warnings
    where, _, message = warning.partition(": ")
    assert "no positive training example" in message, warning
    assert where.startswith("rare, ") and "mlknn" in where.split(", ") and re.search(rf"\bfold {fold}\b", where), \
        warning


def test_report_control_names_the_stored_configurations_of_a_model(cli_store, capsys):
    assert main(["benchmark", "report", str(cli_store), "--control", "mlknn"]) == 2
    err = one_line(capsys)
    assert "mlknn:k=10, mlknn:k=5" in err and "give one of them" in err, err


def test_report_of_a_metric_the_store_lacks_says_so(cli_store, capsys):
    assert main(["benchmark", "report", str(cli_store), "--metrics", "coverage"]) == 2
    err = one_line(capsys)
    assert "metric 'coverage' is not in" in err and "unknown metric" not in err, err


def test_a_missing_data_file_is_no_such_file(tmp_path, shared_data, capsys):
    gone = tmp_path / "gone.arff"
    assert bench("--models", "mlknn", "--datasets", "emotions", str(gone), "--cv", "2", store=tmp_path / "r.sqlite",
                 shared_data=shared_data) == 2
    err = one_line(capsys)
    assert err == f"mlneighbors benchmark run: no such file: {gone}", err


def test_split_on_a_data_file_names_it_and_says_drop_split(tmp_path, shared_data, capsys):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(20, 3))
    path = write_arff(tmp_path / "own.arff", ["f1", "f2", "f3", "l1", "l2"],
                      np.hstack([X, (X[:, :2] > 0).astype(int)]), labels=["l1", "l2"])
    assert bench("--models", "mlknn", "--datasets", str(path), "--labels-last", "2", "--split",
                 store=tmp_path / "r.sqlite", shared_data=shared_data) == 2
    err = one_line(capsys)
    assert str(path) in err and "drop --split" in err and "--test" not in err, err
    assert not (tmp_path / "r.sqlite").exists()


def test_a_registered_datasets_note_is_printed_by_run(tmp_path, shared_data, capsys):
    if not (shared_data / "birds").is_dir():
        pytest.skip("no birds in the shared data")
    store = tmp_path / "r.sqlite"
    assert bench("--models", "mlknn", "--datasets", "birds", "--cv", "2", "--metrics", "hamming_loss", store=store,
                 shared_data=shared_data) == 0
    err = capsys.readouterr().err
    assert any("location" in line and "birds" in line for line in err.splitlines()), err


def test_a_refused_run_leaves_the_store_in_delete_journal_mode(tmp_path, shared_data, capsys):
    store = tmp_path / "r.sqlite"
    args = ["--models", "mlknn", "--datasets", "emotions", "--metrics", "hamming_loss", "--quiet"]
    assert bench(*args, "--cv", "2", store=store, shared_data=shared_data) == 0

    def journal_mode() -> str:
        no_sidecars(store)
        db = sqlite3.connect(store)
        try:
            return db.execute("PRAGMA journal_mode").fetchone()[0]
        finally:
            db.close()

    capsys.readouterr()
    assert bench(*args, "--cv", "3", store=store, shared_data=shared_data) == 2  # another protocol
    assert "another protocol" in one_line(capsys)
    assert journal_mode() == "delete"
    db = sqlite3.connect(store)
    with db:
        db.execute("UPDATE meta SET value = '0.0.1' WHERE key = 'mlneighbors'")
    db.close()
    assert bench(*args, "--cv", "2", store=store, shared_data=shared_data) == 2  # another version
    assert "was written by mlneighbors 0.0.1" in one_line(capsys)
    assert journal_mode() == "delete"


def test_a_missing_csv_file_is_no_such_file_before_its_options(tmp_path, capsys):
    """A CSV file names its labels by an option; a missing one is said to be missing first."""
    missing = tmp_path / "absent.csv"
    assert main(["benchmark", "run", str(tmp_path / "r.sqlite"), "--models", "mlknn", "--datasets",
                 str(missing)]) == 2
    assert capsys.readouterr().err.strip() == f"mlneighbors benchmark run: no such file: {missing}"
    assert not (tmp_path / "r.sqlite").exists()
