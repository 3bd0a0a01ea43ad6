"""The command line, through main([...])."""

import csv
import io
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from mlneighbors.cli import main
from mlneighbors.datasets import list_datasets


def test_datasets_table(shared_data, capsys):
    assert main(["datasets", "--data-home", str(shared_data)]) == 0
    out = capsys.readouterr().out
    assert f"data directory: {shared_data}" in out
    for name in list_datasets():
        assert name in out
    assert out.count("present, verified") == len(list_datasets())


def test_datasets_json_and_csv(shared_data, capsys):
    assert main(["datasets", "--data-home", str(shared_data), "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    by_name = {r["dataset"]: r for r in rows}
    assert by_name["yeast"]["n_labels"] == 14 and by_name["yeast"]["splits"] == "all/train/test"
    assert by_name["cal500"]["splits"] == "all"
    assert main(["datasets", "--data-home", str(shared_data), "--format", "csv", "--no-verify"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert len(rows) == len(list_datasets())
    assert {r["files"] for r in rows} == {"present (not verified)"}


def test_crossover_says_this_machines_costs_and_where_auto_switches(tmp_path, capsys, monkeypatch):
    """Issue 47, item 12: the exact costs are measured per machine, so is auto's crossover;
    ``mlneighbors crossover`` says both, and where the costs are kept (the public functions')."""
    from mlneighbors.neighbors import _auto, crossover

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(_auto, "_exact_costs", None)  # as in a new process: read from the cache, or measured
    monkeypatch.setattr(_auto, "measure_exact_costs", lambda: (0.02, 1.5))
    cache = tmp_path / "mlneighbors" / "exact_costs.json"
    assert main(["crossover"]) == 0
    costs, union, rule, *table = capsys.readouterr().out.splitlines()
    assert costs == f"exact search on this machine: 0.02 ns a multiply-add, 1.5 ns an entry (per core; kept in {cache})"
    assert union.startswith("faiss-union's fit on this machine: 1 times its cost model")  # the tests' factor
    assert rule.startswith("--backend auto searches dense rows exactly below these numbers of rows")
    assert table[0].split() == ["n_features", "rows"]
    assert {int(d): int(n) for d, n in (line.split() for line in table[2:])} == {
        d: crossover(d) for d in (32, 64, 128, 256, 768)}
    assert cache.is_file()
    assert main(["crossover", "--n-features", "100,10", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc == {"ns_per_multiply_add": 0.02, "ns_per_entry": 1.5, "union_factor": 1.0, "cache": str(cache),
                   "results": [{"n_features": 100, "rows": crossover(100)}, {"n_features": 10, "rows": crossover(10)}]}
    assert main(["crossover", "--n-features", "64", "--format", "csv"]) == 0
    assert list(csv.DictReader(io.StringIO(capsys.readouterr().out))) == [
        {"n_features": "64", "rows": str(crossover(64)), "ns_per_multiply_add": "0.02", "ns_per_entry": "1.5",
         "union_factor": "1.0", "cache": str(cache)}]
    # a cache that cannot be written (its folder's name taken by a file): measured here, and said so
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    monkeypatch.setattr(_auto, "_exact_costs", None)
    assert main(["crossover", "--n-features", "64"]) == 0
    assert capsys.readouterr().out.splitlines()[0].endswith(
        f"(per core; measured by this process: {cache / 'mlneighbors' / 'exact_costs.json'} cannot be written)")
    for bad in ("0", "a,64", "", "64,,128"):
        assert main(["crossover", "--n-features", bad]) == 2
        err = capsys.readouterr().err.strip()
        assert err == ("mlneighbors crossover: --n-features takes numbers of features >= 1 separated by commas, "
                       f"got {bad!r}"), err


def test_datasets_in_an_empty_directory(tmp_path, capsys):
    assert main(["datasets", "--data-home", str(tmp_path), "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert all(r["files"].startswith("missing") for r in rows)


def test_bad_format_is_one_clear_line(capsys):
    assert main(["datasets", "--format", "yaml"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "invalid choice: 'yaml'" in err and "table" in err and "json" in err


def test_unknown_command(capsys):
    assert main(["frobnicate"]) == 2
    assert "frobnicate" in capsys.readouterr().err


def test_fetch_unknown_dataset_downloads_nothing(tmp_path, capsys):
    assert main(["fetch", "yeast", "yaest", "--data-home", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "unknown dataset 'yaest'" in err and "'yeast'" in err
    assert not any(tmp_path.iterdir())


def test_fetch_already_present(shared_data, capsys):
    assert main(["fetch", "emotions", "--data-home", str(shared_data)]) == 0
    assert "emotions: 4 files present and verified" in capsys.readouterr().out


# --------------------------------------------------------------------------------------
# evaluate, compare, reproduce
# --------------------------------------------------------------------------------------


def _one_line_error(capsys, argv, code=2, *needles):
    assert main(argv) == code
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert len(err.splitlines()) == 1, err
    for needle in needles:
        assert needle in err, err
    return err


def test_evaluate_table_json_csv(shared_data, capsys):
    base = ["evaluate", "emotions", "--model", "mlknn", "--data-home", str(shared_data),
            "--metrics", "hamming_loss,average_precision"]
    assert main(base) == 0
    out = capsys.readouterr().out
    assert out.startswith("mlknn on emotions: standard split (391 train / 202 test)")
    assert "hamming_loss" in out and "average_precision" in out and "fit_predict_seconds" in out
    assert "features min-max scaled with the training ranges (the default for dense data" in out
    assert main(base + ["--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["dataset"] == "emotions" and doc["protocol"].startswith("standard split") and doc["seed"] == 0
    assert doc["model"] == "mlknn" and doc["scale"] == "minmax" and doc["mlneighbors"]
    by_metric = {r["metric"]: r for r in doc["results"]}
    assert 0 < by_metric["hamming_loss"]["value"] < 0.5 and by_metric["hamming_loss"]["std"] is None
    # the parameters the model was fitted with, defaults included: no --k is still a k
    assert doc["params"] == {"mlknn": {"n_neighbors": 10, "smoothing": 1.0, "metric": "euclidean",
                                       "backend": "exact", "backend_params": None, "n_jobs": None}}
    assert main(base + ["--format", "csv", "--cv", "3", "--minmax", "--k", "5"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [r["metric"] for r in rows] == ["hamming_loss", "average_precision", "fit_predict_seconds"]
    assert all(r["std"] != "" for r in rows)
    assert {r["dataset"] for r in rows} == {"emotions"}
    assert json.loads(rows[0]["params"])["mlknn"] | {"n_neighbors": 5} == doc["params"]["mlknn"] | {"n_neighbors": 5}
    assert json.loads(rows[0]["params"])["mlknn"]["n_neighbors"] == 5
    assert rows[0]["protocol"].startswith("3-fold stratified CV") and rows[0]["seed"] == "0"


def test_evaluate_matches_the_library(shared_data, capsys):
    from mlneighbors import BRkNN
    from mlneighbors.datasets import load_dataset
    from mlneighbors.metrics import evaluate

    argv = ["evaluate", "emotions", "--model", "brknn-b", "--k", "7", "--split", "--format", "json",
            "--metrics", "example_f1,ranking_loss", "--scale", "none", "--data-home", str(shared_data)]
    assert main(argv) == 0
    got = {r["metric"]: r["value"] for r in json.loads(capsys.readouterr().out)["results"]}
    tr, te = (load_dataset("emotions", s, shared_data) for s in ("train", "test"))
    model = BRkNN(7, extension="b").fit(tr.X, tr.Y)
    want = evaluate(te.Y, model.predict(te.X), model.predict_proba(te.X), metrics=["example_f1", "ranking_loss"])
    assert got["example_f1"] == pytest.approx(want["example_f1"])
    assert got["ranking_loss"] == pytest.approx(want["ranking_loss"])


def test_backend_torch_gives_the_exact_results(shared_data, capsys):
    pytest.importorskip("torch")
    argv = ["evaluate", "emotions", "--model", "mlknn", "--split", "--format", "json",
            "--metrics", "hamming_loss,ranking_loss", "--data-home", str(shared_data)]
    assert main(argv) == 0
    want = {r["metric"]: r["value"] for r in json.loads(capsys.readouterr().out)["results"]}
    assert main(argv + ["--backend", "torch", "--backend-param", "device=cpu"]) == 0
    got = {r["metric"]: r["value"] for r in json.loads(capsys.readouterr().out)["results"]}
    assert got["hamming_loss"] == want["hamming_loss"] and got["ranking_loss"] == want["ranking_loss"]
    _one_line_error(capsys, argv + ["--backend", "torch", "--backend-param", "devise=cpu"], 2,
                    "backend 'torch' has no parameter 'devise'", "device, memory_budget, sparse_strategy")
    # found when the search starts (after the header, which JSON output prints on stderr: --quiet here)
    _one_line_error(capsys, argv + ["--quiet", "--backend", "torch", "--backend-param", "device=tpu"], 1,
                    "device must be None, 'cpu', 'cuda' or 'cuda:N', got device='tpu'")


def test_compare_side_by_side(shared_data, capsys):
    argv = ["compare", "emotions", "--models", "mlknn,brknn-a,lamlknn,bknn", "--cv", "2", "--minmax",
            "--metrics", "hamming_loss,micro_f1", "--param", "lamlknn.n_clusters=2",
            "--param", "smoothing=0.5", "--data-home", str(shared_data), "--format", "json"]
    assert main(argv) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["models"] == ["mlknn", "brknn-a", "lamlknn", "bknn"]
    assert doc["params"]["lamlknn"].items() >= {"n_clusters": 2, "smoothing": 0.5, "random_state": 0,
                                                "n_neighbors": 10}.items()
    assert doc["params"]["bknn"]["n_per_label"] == 5 and doc["params"]["mlknn"]["n_neighbors"] == 10  # defaults
    rows = doc["results"]
    assert [r["metric"] for r in rows] == ["hamming_loss", "micro_f1", "fit_predict_seconds"]
    assert set(rows[0]) == {"metric", "mlknn", "brknn-a", "lamlknn", "bknn"}
    assert main(argv[:-2] + ["--format", "table"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].startswith("emotions: 2-fold stratified CV")
    assert "brknn-a" in out.splitlines()[1]


def test_compare_blda_bknn_and_hybrid(shared_data, capsys):
    argv = ["compare", "emotions", "--models", "blda-bknn,hybrid", "--k", "3", "--param", "reg=0.01",
            "--param", "hybrid.backend=exact", "--metrics", "hamming_loss",
            "--data-home", str(shared_data), "--format", "csv"]
    assert main(argv) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert rows[0]["metric"] == "hamming_loss" and 0 < float(rows[0]["blda-bknn"]) < 1
    params = json.loads(rows[0]["params"])
    # a Pipeline's parameters are its steps' (scikit-learn's own settings, memory and verbose, left out)
    assert params["blda-bknn"]["blda__reg"] == 0.01 and params["blda-bknn"]["bknn__n_per_label"] == 3
    assert "memory" not in params["blda-bknn"] and "blda__n_components" in params["blda-bknn"]
    assert params["hybrid"]["backend"] == "exact" and params["hybrid"]["n_neighbors"] == 3


@pytest.mark.parametrize(
    "argv, needles",
    [
        (["evaluate", "emotionz", "--model", "mlknn"],
         ["'emotionz' is neither a registered dataset", "'emotions'", "yeast"]),
        (["evaluate", "emotions", "--model", "mlknx"], ["unknown model 'mlknx'", "mlknn", "blda-bknn"]),
        (["compare", "emotions", "--models", "mlknn,foo"], ["unknown model 'foo'", "brknn-a"]),
        (["compare", "emotions", "--models", "mlknn,mlknn"], ["twice"]),
        (["evaluate", "emotions", "--model", "mlknn", "--param", "foo=1"],
         ["unknown parameter 'foo'", "smoothing", "n_neighbors"]),
        (["evaluate", "emotions", "--model", "mlknn", "--param", "smoothing"], ["key=value"]),
        (["evaluate", "emotions", "--model", "mlknn", "--param", "smoothing=abc"],
         ["bad value 'abc'", "'smoothing'", "number"]),
        (["evaluate", "emotions", "--model", "lamlknn", "--param", "n_clusters=2.5"],
         ["bad value '2.5'", "integer"]),
        (["evaluate", "emotions", "--model", "hybrid", "--param", "n_candidates=maybe"],
         ["bad value 'maybe'", "integer"]),
        (["compare", "emotions", "--models", "mlknn", "--param", "brknn.extension=a"], ["not among the models"]),
        (["evaluate", "emotions", "--model", "brknn", "--param", "extension=c"],
         ["'extension' parameter", "'a'", "'b'"]),
        (["evaluate", "emotions", "--model", "mlknn", "--metrics", "accuracy"],
         ["unknown metric 'accuracy'", "example_accuracy", "hamming_loss"]),
        (["evaluate", "slashdot", "--model", "mlknn", "--split"], ["no standard train/test split", "--cv"]),
        (["evaluate", "emotions", "--model", "mlknn", "--cv", "1"], ["at least 2 folds"]),
        (["evaluate", "emotions", "--model", "mlknn", "--k", "0"], ["--k must be at least 1"]),
        (["evaluate", "emotions", "--model", "mlknn", "--cv", "3", "--split"], ["not allowed with"]),
        (["evaluate", "emotions"], ["--model"]),
        (["reproduce", "laml"], ["unknown paper 'laml'", "laml2018", "all"]),
        (["reproduce"], ["PAPER"]),
        (["reproduce", "all", "--format", "xml"], ["invalid choice: 'xml'"]),
    ],
)
def test_bad_arguments_are_one_clear_line(shared_data, capsys, argv, needles):
    _one_line_error(capsys, argv + ["--data-home", str(shared_data)], 2, *needles)


def test_missing_dataset_files_are_one_line(tmp_path, capsys):
    _one_line_error(capsys, ["evaluate", "emotions", "--model", "mlknn", "--data-home", str(tmp_path)], 1,
                    "mlneighbors: error:", "is missing", "mlneighbors fetch emotions")


def _reproduce_args(*argv):
    from mlneighbors.cli._main import build_parser

    return build_parser().parse_args(["reproduce", "all", "--quick", *argv])


def test_reproduce_prints_each_paper_s_tables_and_a_summary(quick_reproductions, capsys):
    """What the command adds to a reproduction (the suite's one run of each paper): the tables
    beside the paper's numbers on stdout, a summary line on stderr, nothing there with --quiet."""
    from mlneighbors.cli._commands import show_reproduction

    out, runs, _ = quick_reproductions
    rep = runs["spyromitros2008"]
    show_reproduction(rep, _reproduce_args("--out", str(out)))
    captured = capsys.readouterr()
    assert "Table 2: BRkNN and its extensions" in captured.out and "(ours / paper;" in captured.out
    assert "0.1976" in captured.out  # the paper's Hamming loss of BRkNN on emotions, beside ours
    summary = captured.err.strip().splitlines()
    assert len(summary) == 1 and summary[0].startswith("spyromitros2008: ")
    assert f"(see {out / 'spyromitros2008' / 'report.md'})" in summary[0]
    assert f"wrote {len(rep.files)} files to {out / 'spyromitros2008'}" in summary[0]
    show_reproduction(rep, _reproduce_args("--out", str(out), "--format", "json", "--quiet"))
    assert capsys.readouterr() == ("", "")  # json: the rows come at the end, all papers at once


def test_reproduce_json_and_csv_hold_every_cell(quick_reproductions):
    from mlneighbors.cli._commands import tidy_reproductions
    from mlneighbors.experiments import COLUMNS, list_papers

    _, runs, _ = quick_reproductions
    reports = [runs[name] for name in list_papers()]
    rows = json.loads(tidy_reproductions(reports, "json"))
    assert list(rows[0]) == ["reproduction", *COLUMNS]
    assert list_papers() == list(dict.fromkeys(r["reproduction"] for r in rows))
    assert len(rows) == sum(len(rep.rows) for rep in reports)
    first = runs["spyromitros2008"].rows[0]
    assert {k: rows[0][k] for k in COLUMNS} == pytest.approx({k: first[k] for k in COLUMNS})
    rows = list(csv.DictReader(io.StringIO(tidy_reproductions([runs["wang2010"]], "csv"))))
    assert rows and {r["reproduction"] for r in rows} == {"wang2010"}
    assert list(rows[0]) == ["reproduction", *COLUMNS]


@pytest.mark.slow
def test_reproduce_all_quick_end_to_end(shared_data, quick_reproductions, tmp_path, capsys, monkeypatch):
    """The whole command once more, as a user runs it (slow: it repeats the suite's quick run):
    without matplotlib, --no-figures, --quiet, JSON; the same numbers as the library's run."""
    from mlneighbors.experiments import list_papers

    monkeypatch.setitem(sys.modules, "matplotlib", None)
    argv = ["reproduce", "all", "--quick", "--no-figures", "--quiet", "--format", "json",
            "--out", str(tmp_path), "--data-home", str(shared_data)]
    assert main(argv) == 0
    captured = capsys.readouterr()
    assert captured.err == ""  # --quiet: no summary lines, no bar
    rows = json.loads(captured.out)
    assert list_papers() == list(dict.fromkeys(r["reproduction"] for r in rows))
    assert not list(tmp_path.glob("*/*.png"))
    assert sorted(p.name for p in (tmp_path / "wang2010").iterdir()) == ["report.md", "table.csv", "table.md"]
    runs = quick_reproductions[1]
    for name in list_papers():
        assert [r["ours"] for r in rows if r["reproduction"] == name] == [r["ours"] for r in runs[name].rows]


def test_reproduce_without_matplotlib(shared_data, tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    _one_line_error(capsys, ["reproduce", "spyromitros2008", "--quick", "--out", str(tmp_path),
                             "--data-home", str(shared_data)], 1, "matplotlib", "mlneighbors[plot]", "--no-figures")
    assert not any(tmp_path.iterdir())  # checked before anything ran


class _Terminal(io.StringIO):
    """A standard error that says it is a terminal (and keeps what is written)."""

    def isatty(self):
        return True


@pytest.mark.requires("tqdm")
def test_progress_bars_only_on_a_terminal(monkeypatch):
    from mlneighbors._progress import TqdmBars
    from mlneighbors.cli._common import progress_listener

    assert progress_listener(quiet=False) is None  # pytest's stderr is not a terminal
    monkeypatch.setattr(sys, "stderr", _Terminal())
    assert progress_listener(quiet=True) is None
    assert isinstance(progress_listener(quiet=False), TqdmBars)
    monkeypatch.setitem(sys.modules, "tqdm", None)
    assert progress_listener(quiet=False) is None  # without tqdm: no bar, no error


@pytest.mark.requires("tqdm")
@pytest.mark.parametrize("quiet", [True, False])
def test_no_bar_with_quiet_or_without_a_terminal(shared_data, monkeypatch, capsys, quiet):
    """Bars drawn at once (no delay): none with --quiet on a terminal, none without --quiet on a
    standard error that is not one; on a terminal without --quiet, the folds' and the searches'."""
    from mlneighbors.cli import _common

    monkeypatch.setattr(_common, "BAR_DELAY", 0.0)
    terminal = _Terminal()
    if quiet:
        monkeypatch.setattr(sys, "stderr", terminal)
    argv = ["compare", "emotions", "--models", "mlknn,brknn", "--cv", "3", "--data-home", str(shared_data),
            "--metrics", "hamming_loss", "--format", "json"]
    assert main(argv + (["--quiet"] if quiet else [])) == 0
    assert terminal.getvalue() == ""
    assert "fit and score" not in capsys.readouterr().err
    monkeypatch.setattr(sys, "stderr", terminal)  # the same run on a terminal, without --quiet
    assert main(argv) == 0
    drawn = terminal.getvalue()
    assert "fit and score" in drawn and "6/6" not in capsys.readouterr().out
    assert "neighbour search" in drawn and " rows" in drawn  # the bar within a fold


def test_the_header_comes_first_and_json_stays_json(shared_data, capsys):
    base = ["evaluate", "emotions", "--model", "mlknn", "--cv", "3", "--data-home", str(shared_data),
            "--metrics", "hamming_loss"]
    header = "mlknn on emotions: 3-fold stratified CV (seed 0, 593 instances); features min-max scaled"
    assert main(base) == 0
    out = capsys.readouterr().out
    assert out.startswith(header)
    for fmt in ("json", "csv"):
        assert main(base + ["--format", fmt]) == 0
        captured = capsys.readouterr()
        assert captured.err.startswith(header) and len(captured.err.splitlines()) == 1
        assert header not in captured.out
        if fmt == "json":
            assert json.loads(captured.out)["model"] == "mlknn"
        else:
            assert next(csv.reader(io.StringIO(captured.out)))[0] == "metric"
        assert main(base + ["--format", fmt, "--quiet"]) == 0
        assert capsys.readouterr().err == ""


def test_reproduce_into_a_folder_that_cannot_be_written_fails_before_computing(tmp_path, capsys):
    """The folder is checked before any data is read: with no dataset in the data directory,
    a run that read data first would fail on the missing dataset instead."""
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    empty = tmp_path / "no-data"
    empty.mkdir()
    assert main(["reproduce", "all", "--no-figures", "--out", str(blocker / "out"), "--data-home", str(empty)]) == 1
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and f"cannot write to {blocker / 'out'}" in err
    assert not any(empty.iterdir())


def _interrupt(shared_data, out, signals):
    """``reproduce all`` in a real process, sent SIGINT ``signals`` times, 50 ms apart, once the
    run has said it started (its header, printed before any computing; the four papers take
    minutes, so the signals land in the computing); returns (status, stderr)."""
    env = {**os.environ, "MLNEIGHBORS_DATA": str(shared_data), "PYTHONUNBUFFERED": "1"}
    # a shell that starts the tests in the background makes them ignore SIGINT, and its children
    # too (Python then installs no handler): the run starts with the default disposition
    proc = subprocess.Popen(
        [sys.executable, "-m", "mlneighbors", "reproduce", "all", "--out", str(out), "--no-figures"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        first = proc.stdout.readline()  # returns while the process runs: the header comes first
        assert first.startswith("== spyromitros2008: "), first
        for i in range(signals):
            if i:
                time.sleep(0.05)
            proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    return proc.returncode, err


# the second signal is meant to land while the run winds down, 50 ms after the first: where it
# lands is a race with that sleep, so that case runs with the slow tests (.ci/run's -m slow)
@pytest.mark.parametrize("signals", [1, pytest.param(2, marks=pytest.mark.slow)])
def test_ctrl_c_ends_with_one_line_and_leaves_nothing(shared_data, tmp_path, signals):
    """Interrupted in its first paper: one line, status 130, and no folder left (reproduce
    created it); a second Ctrl-C while the run winds down changes nothing (no traceback from
    the threads of the search that finish their block)."""
    out = tmp_path / "new" / "out"
    status, err = _interrupt(shared_data, out, signals)
    assert status == 130, err
    assert err.strip().splitlines() == [f"mlneighbors: interrupted; nothing written to {out}"], err
    assert not (tmp_path / "new").exists()  # the folders reproduce created are gone


def test_an_interruption_keeps_complete_runs_and_an_existing_folder(shared_data, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "mine.txt").write_text("the user's")
    status, err = _interrupt(shared_data, out, 1)
    assert status == 130 and "Traceback" not in err, err
    assert sorted(p.name for p in out.iterdir()) == ["mine.txt"]  # nothing half-written, nothing removed


def test_a_damaged_file_says_how_to_fetch_it_again(shared_data, tmp_path, capsys):
    import shutil

    from mlneighbors.datasets import load_dataset
    from mlneighbors.exceptions import ChecksumError

    home = tmp_path / "data"
    shutil.copytree(shared_data / "emotions", home / "emotions")
    damaged = home / "emotions" / "emotions-train.arff"
    damaged.write_bytes(damaged.read_bytes()[:-10])
    with pytest.raises(ChecksumError, match="damaged or another version. Delete it and load again with download=True"):
        load_dataset("emotions", "train", data_home=home)
    _one_line_error(capsys, ["evaluate", "emotions", "--model", "mlknn", "--data-home", str(home)], 1,
                    "does not match its registered sha256", "Delete it and run 'mlneighbors fetch emotions'")


# ---------------------------------------------------------------------------
# a closed standard output (| head): a quiet end, status 141


_PIPE_COMMANDS = {
    "datasets": ["datasets", "--no-verify"],
    "help": ["evaluate", "--help"],
    "evaluate-table": ["evaluate", "emotions", "--model", "mlknn", "--metrics", "hamming_loss"],
    "evaluate-csv": ["evaluate", "emotions", "--model", "mlknn", "--format", "csv", "--quiet"],
}


def _run_into(stdout, argv, shared_data, buffered):
    env = {**os.environ, "MLNEIGHBORS_DATA": str(shared_data)}
    env.pop("PYTHONUNBUFFERED", None)
    if not buffered:  # every print reaches the pipe at once, rather than at the final flush
        env["PYTHONUNBUFFERED"] = "1"
    return subprocess.run([sys.executable, "-m", "mlneighbors", *argv], stdout=stdout, stderr=subprocess.PIPE,
                          env=env, timeout=300)


@pytest.mark.parametrize(
    "command, buffered",
    [
        ("datasets", True),  # met by the last flush, after main returned
        ("datasets", False),  # met by a print inside the command
        ("help", True),  # argparse's help, then its SystemExit
        ("help", False),  # argparse would pass the failed write over in silence
        ("evaluate-table", False),  # the header, flushed before any computing
        ("evaluate-csv", True),  # the results, after the computing
    ],
)
def test_a_closed_standard_output_ends_quietly_with_status_141(command, buffered, shared_data):
    """A real process writing into a real pipe whose reader has gone before the first byte: a
    write fails with EPIPE wherever it happens (a print, the flush on the way out); the command
    ends without a word, with the status a shell gives a program ended by SIGPIPE."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        proc = _run_into(write_end, _PIPE_COMMANDS[command], shared_data, buffered)
    finally:
        os.close(write_end)
    assert proc.returncode == 141, proc.stderr
    assert proc.stderr == b""


def test_head_takes_its_lines_and_the_command_says_nothing(shared_data):
    """``mlneighbors datasets | head -n 2`` as a shell runs it: head may leave before or after
    the command has written everything (0 or 141, by timing); either way, no message."""
    env = {**os.environ, "MLNEIGHBORS_DATA": str(shared_data)}
    proc = subprocess.run(
        ["bash", "-c", f"'{sys.executable}' -m mlneighbors datasets --no-verify | head -n 2; "
                       "exit ${PIPESTATUS[0]}"],
        capture_output=True, env=env, timeout=300,
    )
    assert proc.returncode in (0, 141), proc.stderr
    assert proc.stderr == b""
    assert proc.stdout.decode().splitlines()[1].startswith("dataset ")


def test_json_output_is_valid_json_with_a_nan(capsys):
    """A value not measured (NaN: a recall on a dask array, a metric undefined on a fold) is
    written null: NaN is no JSON, and a strict reader refuses it."""
    import json
    import math

    from mlneighbors.cli._common import emit

    def strict(text):
        return json.loads(text, parse_constant=lambda name: pytest.fail(f"{name} in JSON output"))

    emit([{"metric": "recall", "value": math.nan}], "json", ["metric", "value"],
         {"neighbours": [{"recall": math.nan, "low_recall_share": math.inf}]})
    doc = strict(capsys.readouterr().out)
    assert doc["results"][0]["value"] is None and doc["neighbours"][0] == {"recall": None, "low_recall_share": None}
    emit([{"metric": "recall", "value": 0.5}], "csv", ["metric", "value"], {"neighbours": [{"recall": math.nan}]})
    assert '{""recall"": null}' in capsys.readouterr().out
