"""``mlneighbors benchmark run`` and ``report``: the grammar of the models, bad input in one
line, resuming after ``kill -9``."""

from __future__ import annotations

import math
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from mlneighbors.benchmark import read_rows
from mlneighbors.cli import main
from mlneighbors.cli._benchmark import parse_specs
from mlneighbors.cli._common import CLIError


def bench(*argv, store, shared_data):
    return main(["benchmark", "run", str(store), *argv, "--data-home", str(shared_data)])


def one_line(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    return err


def cells(path) -> set:
    return {r[:3] for r in read_rows(path)}


def test_grids_name_one_configuration_per_combination(tmp_path, shared_data, capsys):
    store = tmp_path / "r.sqlite"
    assert bench("--models", "mlknn:k=3,5", "brknn,lpknn:k=4", "--datasets", "emotions", "--cv", "2",
                 "--metrics", "hamming_loss,one_error", store=store, shared_data=shared_data) == 0
    captured = capsys.readouterr()
    assert ("benchmark: 1 dataset x 4 models x 2 folds = 8 cells (2 metrics each); 0 already in "
            f"{store}, 8 to compute") in captured.err
    assert f"{store}: 8 cells computed (0 failed)" in captured.out and "neighbour searches: 4 for" in captured.out
    assert {m for _, m, _ in cells(store)} == {"mlknn:k=3", "mlknn:k=5", "brknn", "lpknn:k=4"}
    db = sqlite3.connect(store)
    params = dict(db.execute("SELECT model, params FROM models"))
    # the run's provenance holds the command asked (here through main(), not the process's argv)
    (command,) = db.execute("SELECT command FROM runs").fetchone()
    db.close()
    assert command.startswith(f"mlneighbors benchmark run {store} --models mlknn:k=3,5 brknn,lpknn:k=4 ")
    assert '"n_neighbors": 5' in params["mlknn:k=5"] and '"n_neighbors": 4' in params["lpknn:k=4"]
    # the same command again: nothing to compute, said at the start
    assert bench("--models", "mlknn:k=3,5", "brknn,lpknn:k=4", "--datasets", "emotions", "--cv", "2",
                 "--metrics", "hamming_loss,one_error", store=store, shared_data=shared_data) == 0
    captured = capsys.readouterr()
    assert "8 already in" in captured.err and "0 to compute" in captured.err
    assert "0 cells computed" in captured.out


def test_the_grammar():
    assert parse_specs(["mlknn:k=5,10,15", "brknn", "lpknn:k=10"]) == [
        ("mlknn", [("k", ["5", "10", "15"])]), ("brknn", []), ("lpknn", [("k", ["10"])])]
    assert parse_specs(["mlknn,brknn-a"]) == [("mlknn", []), ("brknn-a", [])]
    assert parse_specs(["dmlknn:k=3:s=0.5,1"]) == [("dmlknn", [("k", ["3"]), ("s", ["0.5", "1"])])]
    # a grid of two keys of several values each (the help's NAME:KEY=V1,V2:KEY2=...)
    assert parse_specs(["mlknn:k=5,10:smoothing=0.5,1"]) == [
        ("mlknn", [("k", ["5", "10"]), ("smoothing", ["0.5", "1"])])]
    with pytest.raises(CLIError, match="'k=3' is neither a value nor a model"):
        parse_specs(["mlknn:k=5,k=3"])


@pytest.mark.parametrize("argv, words", [
    (["--models", "mlknn", "mlknm", "--datasets", "emotions"], "unknown model 'mlknm' (did you mean 'mlknn'"),
    (["--models", "mlknn,brknnn", "--datasets", "emotions"], "unknown model 'brknnn'"),
    (["--models", "mlknn", "--datasets", "emotions", "yaest"], "'yaest' is neither a registered dataset (did you "
                                                               "mean 'yeast'?) nor a file; registered: "),
    (["--models", "mlknn", "--datasets", "emotions", "missing/file.arff"], "missing/file.arff"),
    (["--models", "mlknn:k=0", "--datasets", "emotions"], "mlknn:k=0: k must be at least 1"),
    (["--models", "mlknn:kk=3", "--datasets", "emotions"], "unknown parameter 'kk' for mlknn; valid parameters"),
    (["--models", "mlknn", "--datasets", "emotions", "--metrics", "hamming_los"], "unknown metric 'hamming_los'"),
    (["--models", "mlknn", "mlknn", "--datasets", "emotions"], "names configuration 'mlknn' twice"),
    (["--models", "mlknn", "--datasets", "cal500", "--split"], "ships no standard train/test split"),
    (["--models", "mlknn", "--datasets", "emotions", "--param", "brknn.extension=a"],
     "names model 'brknn', which is not among the models run"),
])
def test_bad_input_is_one_line_and_writes_nothing(tmp_path, shared_data, capsys, argv, words):
    store = tmp_path / "r.sqlite"
    assert bench(*argv, store=store, shared_data=shared_data) == 2
    err = one_line(capsys)
    assert words in err, err
    assert err.startswith("mlneighbors benchmark run: ")
    if "unknown model" in words:
        assert "valid: mlknn, brknn," in err
    assert not store.exists()


def test_a_store_of_another_version_or_protocol_is_refused_in_one_line(tmp_path, shared_data, capsys):
    store = tmp_path / "r.sqlite"
    args = ["--models", "mlknn", "--datasets", "emotions", "--cv", "2", "--metrics", "hamming_loss"]
    assert bench(*args, store=store, shared_data=shared_data) == 0
    capsys.readouterr()
    assert bench(*args[:-4], "--cv", "3", store=store, shared_data=shared_data) == 2
    assert "holds results of another protocol (folds 2 here, 3 asked)" in one_line(capsys)
    db = sqlite3.connect(store)
    db.execute("UPDATE meta SET value = '0.0.1' WHERE key = 'mlneighbors'")
    db.commit()
    db.close()
    assert bench(*args, store=store, shared_data=shared_data) == 2
    assert "was written by mlneighbors 0.0.1" in one_line(capsys)
    assert len(read_rows(store)) == 2  # nothing lost


def test_a_locked_store_is_refused_in_one_line(tmp_path, shared_data, capsys):
    from mlneighbors.benchmark import Store

    store = tmp_path / "r.sqlite"
    with Store(store, write=True):
        assert bench("--models", "mlknn", "--datasets", "emotions", "--cv", "2", store=store,
                     shared_data=shared_data) == 2
    assert "is locked: another benchmark run is writing it" in one_line(capsys)


def test_a_read_only_store_is_refused_for_a_run_and_reported(tmp_path, shared_data, capsys):
    """As root every file is writable: the command then runs as the user nobody."""
    folder = tmp_path / "ro"
    folder.mkdir()
    store = folder / "r.sqlite"
    assert main(["benchmark", "run", str(store), "--models", "mlknn", "--datasets", "emotions", "--cv", "2",
                 "--metrics", "hamming_loss", "--quiet", "--data-home", str(shared_data)]) == 0
    store.chmod(0o444)
    folder.chmod(0o555)
    as_other: list[str] = []
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        if shutil.which("setpriv") is None:
            pytest.skip("running as root, and no setpriv to run the command as another user")
        for path in (tmp_path, *tmp_path.parents):  # nobody may go down to the store
            if (path.stat().st_mode & 0o005) != 0o005:
                path.chmod(path.stat().st_mode | 0o005)
        as_other = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    try:
        run = subprocess.run([*as_other, sys.executable, "-m", "mlneighbors", "benchmark", "run", str(store),
                              "--models", "mlknn", "brknn", "--datasets", "emotions", "--cv", "2", "--data-home",
                              str(shared_data)], capture_output=True, text=True, timeout=120)
        if as_other and run.returncode != 2 and "store" not in run.stderr:
            pytest.skip(f"the user nobody cannot run the package here: {run.stderr.strip()[-200:]}")
        assert run.returncode == 2, run.stderr
        assert run.stderr.strip() == (f"mlneighbors benchmark run: results store {store} is read-only: a run writes "
                                      "every cell as it finishes; give a writable file (a report reads a read-only "
                                      "store)")
        capsys.readouterr()
        assert main(["benchmark", "report", str(store), "--format", "csv"]) == 0  # it reads, writes nothing
        assert capsys.readouterr().out.splitlines()[1].startswith("hamming_loss,emotions,mlknn,")
    finally:
        folder.chmod(0o755)
    assert sorted(os.listdir(folder)) == ["r.sqlite"]


def test_report_reads_the_store(tmp_path, shared_data, capsys):
    pytest.importorskip("mlneighbors.benchmark._report")
    store = tmp_path / "r.sqlite"
    assert bench("--models", "mlknn", "brknn", "lpknn", "--datasets", "emotions", "birds", "--cv", "2", "--metrics",
                 "hamming_loss,one_error", "--quiet", store=store, shared_data=shared_data) == 0
    capsys.readouterr()
    assert main(["benchmark", "report", str(store), "--metrics", "hamming_loss", "--control", "mlknn"]) == 0
    out = capsys.readouterr().out
    assert "hamming_loss" in out and "| emotions |" in out and "Friedman" in out and "one_error" not in out
    assert main(["benchmark", "report", str(store), "--control", "mlknm"]) == 2
    err = one_line(capsys)
    assert "unknown control model 'mlknm' (did you mean 'mlknn', 'lpknn'?); valid: brknn, lpknn, mlknn" in err
    assert main(["benchmark", "report", str(tmp_path / "none.sqlite")]) == 2
    assert "no results store" in one_line(capsys)
    out = tmp_path / "report.tex"
    assert main(["benchmark", "report", str(store), "--format", "latex", "--out", str(out)]) == 0
    assert "\\toprule" in out.read_text() and capsys.readouterr().out == ""
    assert main(["benchmark", "report", str(store), "--diagram", str(tmp_path / "cd.pdf")]) == 2
    assert "give a .png or .svg file" in one_line(capsys)


def test_report_draws_a_diagram_per_metric(tmp_path, shared_data, capsys):
    pytest.importorskip("mlneighbors.benchmark._report")
    pytest.importorskip("matplotlib")
    store = tmp_path / "r.sqlite"
    assert bench("--models", "mlknn", "brknn", "--datasets", "emotions", "birds", "--cv", "2", "--metrics",
                 "hamming_loss,one_error", "--quiet", store=store, shared_data=shared_data) == 0
    assert main(["benchmark", "report", str(store), "--diagram", str(tmp_path / "cd.svg")]) == 0
    assert sorted(p.name for p in tmp_path.glob("cd*")) == ["cd-hamming_loss.svg", "cd-one_error.svg"]
    assert main(["benchmark", "report", str(store), "--metrics", "one_error", "--diagram",
                 str(tmp_path / "one.png")]) == 0
    assert (tmp_path / "one.png").read_bytes()[:4] == b"\x89PNG"


def test_no_diagram_where_no_test_ran_is_a_note_or_one_line(tmp_path, shared_data, capsys):
    """One dataset: no rank test runs, so no critical-difference diagram can be drawn: with several
    metrics each is a note and the report is still written; with one it is the error, in one line."""
    pytest.importorskip("mlneighbors.benchmark._report")
    pytest.importorskip("matplotlib")
    store = tmp_path / "r.sqlite"
    assert bench("--models", "mlknn", "brknn", "lpknn", "--datasets", "emotions", "--cv", "2", "--metrics",
                 "hamming_loss,one_error", "--quiet", store=store, shared_data=shared_data) == 0
    capsys.readouterr()
    assert main(["benchmark", "report", str(store), "--diagram", str(tmp_path / "cd.png")]) == 0
    captured = capsys.readouterr()
    assert "| emotions |" in captured.out
    assert "no diagram for hamming_loss" in captured.err and "no diagram for one_error" in captured.err
    assert not list(tmp_path.glob("cd*"))
    one = ["--metrics", "one_error", "--diagram", str(tmp_path / "cd.png")]
    assert main(["benchmark", "report", str(store), *one]) == 2
    assert "mlneighbors benchmark report:" in one_line(capsys)


# --------------------------------------------------------------------------------------
# kill -9 at random points, then the same command again
# --------------------------------------------------------------------------------------


def _stored_cells(store) -> int:
    try:
        db = sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=0.05)
        try:
            return db.execute("SELECT count(*) FROM (SELECT DISTINCT dataset, model, fold FROM results)").fetchone()[0]
        finally:
            db.close()
    except sqlite3.Error:  # not created yet, or busy for a moment
        return 0


def _kill_after(argv: list[str], store, more: int, timeout: float = 120) -> int:
    """Start the command, kill -9 it (and any process it started) once ``more`` cells are
    stored beyond those stored already; the cells stored then."""
    start = _stored_cells(store)
    proc = subprocess.Popen([sys.executable, "-m", "mlneighbors", *argv], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + timeout
    try:
        while _stored_cells(store) < start + more and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.002)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)  # the run's whole process group: its workers too
        proc.wait()
    assert proc.returncode == -signal.SIGKILL, "the run ended before it could be killed"
    return _stored_cells(store)


def _same_numbers(a, b) -> None:
    ra, rb = read_rows(a), read_rows(b)
    assert [r[:4] for r in ra] == [r[:4] for r in rb]
    assert len(ra) == len({r[:4] for r in ra})
    assert all((math.isnan(x[4]) and math.isnan(y[4])) or x[4] == y[4] for x, y in zip(ra, rb, strict=True))


FAST = ["--models", "mlknn:k=3,5,7,9", "dmlknn", "lamlknn", "--datasets", "emotions", "--cv", "5", "--metrics",
        "hamming_loss,micro_f1,ranking_loss,average_precision"]


def test_a_run_killed_after_its_first_cell_resumes_to_the_numbers_of_an_uninterrupted_run(tmp_path, shared_data,
                                                                                          capsys):
    store, reference = tmp_path / "killed.sqlite", tmp_path / "whole.sqlite"
    argv = ["benchmark", "run", str(store), *FAST, "--data-home", str(shared_data), "--quiet"]
    stored = _kill_after(argv, store, 1)
    assert 1 <= stored < 30
    capsys.readouterr()
    assert main(argv) == 0
    assert f": {30 - stored} cells computed (0 failed), {stored} were stored, 30 in all" in capsys.readouterr().out
    assert main(["benchmark", "run", str(reference), *FAST, "--data-home", str(shared_data), "--quiet"]) == 0
    _same_numbers(store, reference)
    db = sqlite3.connect(store)
    (ended,) = db.execute("SELECT count(ended) FROM runs").fetchone()
    db.close()
    assert ended == 1  # the killed run has no end time; the one that finished has


@pytest.mark.slow
@pytest.mark.parametrize("jobs", [None, 2])
def test_a_run_killed_at_several_random_points_resumes_to_the_numbers_of_an_uninterrupted_run(
        tmp_path, shared_data, jobs):
    store, reference = tmp_path / "killed.sqlite", tmp_path / "whole.sqlite"
    work = ["--models", "mlknn:k=5,10,15", "brknn", "dmlknn", "lamlknn", "regression", "--datasets", "emotions",
            "yeast", "--cv", "10", "--data-home", str(shared_data), "--quiet",
            *(["--jobs", str(jobs)] if jobs else [])]
    total = 2 * 7 * 10
    argv = ["benchmark", "run", str(store), *work]
    rng = random.Random(jobs or 0)
    for more in (1, 3, rng.randint(5, 40)):
        before = _stored_cells(store)
        after = _kill_after(argv, store, more)
        assert before + more <= after < total
    assert main(argv) == 0
    assert main(["benchmark", "run", str(reference), *work]) == 0
    _same_numbers(store, reference)
    assert len(cells(store)) == total


@pytest.mark.slow
def test_workers_and_jobs_give_the_numbers_of_an_in_process_run(tmp_path, shared_data):
    pytest.importorskip("distributed")
    work = ["--models", "mlknn:k=5,10", "brknn", "--datasets", "emotions", "yeast", "--cv", "3", "--quiet"]
    stores = {how: tmp_path / f"{how}.sqlite" for how in ("here", "jobs", "workers")}
    assert bench(*work, store=stores["here"], shared_data=shared_data) == 0
    assert bench(*work, "--jobs", "2", store=stores["jobs"], shared_data=shared_data) == 0
    assert bench(*work, "--workers", "2", store=stores["workers"], shared_data=shared_data) == 0
    _same_numbers(stores["jobs"], stores["here"])
    _same_numbers(stores["workers"], stores["here"])


def test_evaluate_and_the_report_give_one_standard_deviation(tmp_path, shared_data, capsys):
    """The same folds (evaluate --cv N --seed S is repeat 0 of the benchmark), the same mean and
    the same spread: the sample standard deviation (ddof = 1), stated by both."""
    import json

    store = tmp_path / "r.sqlite"
    assert bench("--models", "mlknn", "--datasets", "emotions", "--cv", "3", "--metrics", "micro_f1", "--quiet",
                 store=store, shared_data=shared_data) == 0
    capsys.readouterr()
    assert main(["benchmark", "report", str(store), "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    (cell,) = report["metrics"][0]["cells"]
    assert "ddof = 1" in report["std"]
    assert main(["evaluate", "emotions", "--model", "mlknn", "--cv", "3", "--metrics", "micro_f1", "--format",
                 "json", "--quiet", "--data-home", str(shared_data)]) == 0
    evaluated = json.loads(capsys.readouterr().out)
    (row,) = [r for r in evaluated["results"] if r["metric"] == "micro_f1"]
    assert "ddof = 1" in evaluated["std"]
    assert row["value"] == pytest.approx(cell["mean"], rel=1e-12)
    assert row["std"] == pytest.approx(cell["std"], rel=1e-12)
