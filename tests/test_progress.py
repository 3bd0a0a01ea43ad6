"""Progress: long computations report to a listener when one is asked for, and to nobody otherwise."""

from __future__ import annotations

import io
import threading

import numpy as np
import pytest

import mlneighbors
from mlneighbors import MLkNN, config_context
from mlneighbors._progress import TqdmBars, current_listener, listen, task
from mlneighbors.model_selection import evaluate_models
from mlneighbors.neighbors import ExactIndex


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(600, 8))
    Y = (X[:, :4] + rng.normal(scale=0.5, size=(600, 4)) > 0).astype(int)
    return X, Y


def _by_task(events, stage):
    tasks = {}
    for e in events:
        if e.stage == stage:
            tasks.setdefault(e.task_id, []).append(e)
    return list(tasks.values())


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_a_search_of_many_blocks_reports_every_block_within_one_fit(data, n_jobs):
    X, Y = data
    events = []
    # a small working memory: the leave-one-out search of fit runs in many blocks of queries
    with config_context(working_memory=0.1, progress=events.append):
        MLkNN(5, backend_params={"n_jobs": n_jobs}).fit(X, Y)
    (search,) = _by_task(events, "neighbour search")  # one search in one fit
    assert search[0].done == 0 and search[-1].closed and search[-1].done == search[-1].total == 600
    steps = [e for e in search if not e.closed and e.done > 0]
    assert len(steps) >= 5  # several events within the fit, not one at its end
    done = [e.done for e in steps]
    assert done == sorted(done) and len(set(done)) == len(done)  # told under a lock, from every worker
    assert search[-1].unit == "rows"


def test_worker_threads_advance_the_task_of_their_caller():
    seen = []
    with listen(seen.append):
        with task("work", total=40) as t:
            threads = [threading.Thread(target=lambda: [t.advance(1) for _ in range(10)]) for _ in range(4)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
    assert [e.done for e in seen[1:-1]] == list(range(1, 41)) and seen[-1].closed


def test_nobody_listens_by_default(data, capfd):
    X, Y = data
    assert current_listener() is None
    with config_context(working_memory=0.1):
        model = MLkNN(5).fit(X, Y)
        model.predict(X[:50])
    captured = capfd.readouterr()
    assert captured.out == "" and captured.err == ""
    assert mlneighbors.get_config()["progress"] is False


def test_listen_none_silences_the_setting(data):
    events = []
    with config_context(progress=events.append), listen(None):
        MLkNN(3).fit(*data)
    assert events == []


def test_the_folds_report_each_fit_with_the_searches_inside(data):
    X, Y = data
    events = []
    models = {"a": MLkNN(3), "b": MLkNN(7)}
    with config_context(progress=events.append):
        evaluate_models(models, X, Y, cv=3, metrics=["hamming_loss"], random_state=0)
    (fits,) = _by_task(events, "fit and score")
    assert [e.done for e in fits] == [0, 1, 2, 3, 4, 5, 6, 6] and fits[-1].total == 6 and fits[-1].unit == "fits"
    first, last = events.index(fits[0]), events.index(fits[-1])
    inside = [e for e in events[first:last] if e.stage == "neighbour search"]
    assert inside and all(e.task_id != fits[0].task_id for e in inside)  # nested tasks of their own


def test_parallel_folds_report_as_their_results_come_back(data):
    X, Y = data
    events = []
    with config_context(progress=events.append):
        evaluate_models({"a": MLkNN(3)}, X, Y, cv=2, metrics=["hamming_loss"], n_jobs=2, random_state=0)
    (fits,) = _by_task(events, "fit and score")
    assert [e.done for e in fits] == [0, 1, 2, 2]


def test_the_reproductions_report_their_steps():
    from mlneighbors.experiments._protocol import progress_bar

    events, bars = [], []

    class Bar:  # a caller's own bar (the Python API's progress= factory) is still advanced
        def __init__(self, total, desc):
            self.n = 0
            bars.append(self)

        def update(self, n=1):
            self.n += n

        def close(self):
            pass

    with listen(events.append):
        with progress_bar(Bar, 3, "paper") as bar:
            bar.update(2)
            bar.update(1)
    assert [(e.stage, e.done, e.closed) for e in events] == [
        ("paper", 0, False), ("paper", 2, False), ("paper", 3, False), ("paper", 3, True)]
    assert bars[0].n == 3


@pytest.mark.requires("tqdm")
def test_progress_true_draws_bars_on_stderr(data, capfd):
    X, Y = data
    out = io.StringIO()
    with listen(TqdmBars(out, delay=0)):  # the bars of progress=True, at once and into a buffer
        with config_context(working_memory=0.1):
            MLkNN(5).fit(X, Y)
    assert "neighbour search" in out.getvalue() and "/600 [" in out.getvalue()
    with config_context(progress=True):  # the default bars: on stderr, once a task lasts a second
        bars = current_listener()
        assert isinstance(bars, TqdmBars) and bars.file is None and bars.delay == 1.0
    late = io.StringIO()
    with listen(TqdmBars(late, delay=3600)):  # a task shorter than the delay draws nothing
        MLkNN(5).fit(X, Y)
    assert late.getvalue() == "" and capfd.readouterr().err == ""


@pytest.mark.requires("tqdm")
def test_bars_appear_for_tasks_that_last_even_without_events():
    """The outer task gets its bar while it waits (the drawing thread), before any step ends."""
    out = io.StringIO()
    bars = TqdmBars(out, delay=0.05, interval=0.02)
    with listen(bars):
        with task("slow step", total=2, unit="fits"):
            never = threading.Event()  # its wait() is a pause between two looks
            for _ in range(6000):  # the step lasts until its bar is drawn (a minute at most: a hang)
                if "slow step" in out.getvalue():
                    break
                never.wait(0.01)
    assert "slow step" in out.getvalue() and "0/2" in out.getvalue()


@pytest.mark.parametrize("value", ["yes", 1, object()])
def test_bad_progress_values_are_refused(value):
    with pytest.raises(ValueError, match="progress must be True, False or a callable"):
        mlneighbors.set_config(progress=value)


def test_progress_without_tqdm_is_refused_when_set(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "tqdm", None)  # import tqdm now raises ImportError
    with pytest.raises(ImportError, match=r"progress=True draws tqdm bars: pip install tqdm"):
        mlneighbors.set_config(progress=True)
    assert mlneighbors.get_config()["progress"] is not True  # the setting unchanged


def test_a_listener_changes_no_result(data):
    X, Y = data
    plain = ExactIndex().build(X).query(X[:100], 6)
    with config_context(working_memory=0.05, progress=lambda e: None):
        told = ExactIndex().build(X).query(X[:100], 6)
    np.testing.assert_array_equal(plain[1], told[1])
    np.testing.assert_array_equal(plain[0], told[0])
