"""Progress of long computations, told to whoever listens; nobody listens by default.

A computation that can run long (a neighbour search over blocks of queries, an index
build, the folds of a cross-validation) opens a :func:`task` and advances it.  The task
goes to the current listener, else nowhere: the Python API prints nothing unless a caller
asks.  A task captures its listener when it opens, so the worker threads of a search may
advance it; the listener is called under the task's lock.

**Asking for progress in Python** (the one public switch is the package's setting
``progress``):

- ``mlneighbors.config_context(progress=True)`` (for a ``with`` block) or
  ``mlneighbors.set_config(progress=True)`` (from now on): tqdm bars on standard error for
  every task that lasts more than a second, nested tasks below the task they run in (the
  folds of :func:`~mlneighbors.model_selection.evaluate_models`, under them the blocks of
  each neighbour search).  Needs tqdm.
- ``progress=callable``: the callable receives every :class:`ProgressEvent` instead (from
  the thread that advanced the task), e.g. to log them or to feed another progress display.
- ``progress=False`` (the default): nothing.

The command line installs the same bars (:class:`TqdmBars`) with :func:`listen` when standard
error is a terminal and ``--quiet`` is not given.  :func:`listen` (a listener for the calling
context, used before the setting) is the internal form; code that computes long only calls
:func:`task`.

>>> from mlneighbors._progress import listen, task
>>> seen = []
>>> with listen(lambda event: seen.append((event.stage, event.done, event.total, event.closed))):
...     with task("search", total=3) as t:
...         t.advance(2)
...         t.advance(1)
>>> seen
[('search', 0, 3, False), ('search', 2, 3, False), ('search', 3, 3, False), ('search', 3, 3, True)]
>>> with task("nobody listens", total=5) as t:   # no listener: nothing happens
...     t.advance(5)
"""

from __future__ import annotations

import itertools
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, TextIO

from ._config import TQDM_MISSING, _config

__all__ = ["ProgressEvent", "TqdmBars", "listen", "task"]


@dataclass(frozen=True)
class ProgressEvent:
    """One step of a task: ``done`` of ``total`` units of ``stage`` (``closed`` at its end).

    A task sends one event when it opens (``done=0``), one each time it advances and one
    when it closes (``closed=True``, also when it ends by an exception).

    Parameters
    ----------
    stage : str
        What the task computes, e.g. ``"neighbour search"`` or ``"fit and score"``.
    done : int
        Units done so far.
    total : int
        Units of the whole task.
    closed : bool, default=False
        The task has ended (this is its last event).
    task_id : int, default=0
        A number that tells concurrent or nested tasks apart (unique within the process).
    unit : str, default=""
        What a unit is (``"rows"``, ``"fits"``), for display.

    Examples
    --------
    >>> import mlneighbors
    >>> import numpy as np
    >>> events = []
    >>> X = np.random.default_rng(0).normal(size=(200, 4))
    >>> with mlneighbors.config_context(progress=events.append):
    ...     _ = mlneighbors.MLkNN(3).fit(X, X > 0)
    >>> events[0].stage, events[-1].closed, events[-1].done == events[-1].total
    ('neighbour search', True, True)
    """

    stage: str
    done: int
    total: int
    closed: bool = False
    task_id: int = 0
    unit: str = ""


Listener = Callable[[ProgressEvent], None]

_UNSET: Any = object()
_listener: ContextVar[Any] = ContextVar("mlneighbors_progress", default=_UNSET)
_ids = itertools.count(1)


@contextmanager
def listen(listener: Listener | None) -> Iterator[None]:
    """Send the events of every task opened inside the block to ``listener`` (None: to nobody,
    whatever the ``progress`` setting says)."""
    token = _listener.set(listener)
    try:
        yield
    finally:
        _listener.reset(token)


def current_listener() -> Listener | None:
    """The listener a task opened now reports to: :func:`listen`'s, else the ``progress``
    setting's (:func:`mlneighbors.set_config`)."""
    listener = _listener.get()
    if listener is not _UNSET:
        return listener
    setting = _config().get("progress", False)
    if setting is True:
        return default_bars()
    return setting or None


class _Task:
    def __init__(self, stage: str, total: int, listener: Listener | None, unit: str = "") -> None:
        self.stage, self.total, self.done, self.unit = stage, int(total), 0, unit
        self.task_id = next(_ids)
        self._listener = listener
        self._lock = threading.Lock()

    def _tell(self, closed: bool = False) -> None:
        if self._listener is not None:
            self._listener(ProgressEvent(self.stage, self.done, self.total, closed, self.task_id, self.unit))

    def advance(self, n: int = 1) -> None:
        """``n`` more units done (thread-safe)."""
        if self._listener is None:
            return
        with self._lock:
            self.done += int(n)
            self._tell()

    update = advance  # what tqdm-like progress parameters call


@contextmanager
def task(stage: str, total: int, unit: str = "") -> Iterator[_Task]:
    """A task of ``total`` units, reported to the current listener (if any) as it advances."""
    t = _Task(stage, total, current_listener(), unit)
    if t._listener is not None:
        t._tell()
    try:
        yield t
    finally:
        if t._listener is not None:
            with t._lock:
                t._tell(closed=True)


class TqdmBars:
    """A listener that draws one tqdm bar per task that lasts, nested tasks below.

    A task gets a bar once it has been open for ``delay`` seconds (quick tasks, and the
    many small searches of a short run, print nothing); the bars of the tasks open around it
    appear with it, outermost first.  A thread redraws the open bars every ``interval``
    seconds, so their elapsed time runs even while a long step gives no event.  The bars
    are cleared when their tasks close.

    Parameters
    ----------
    file : text stream, default=None
        Where to draw (None: ``sys.stderr`` at the time of drawing).
    delay : float, default=1.0
        Seconds a task runs before its bar appears.
    interval : float, default=0.5
        Seconds between redraws.

    Examples
    --------
    >>> import io
    >>> from mlneighbors._progress import TqdmBars, listen, task
    >>> out = io.StringIO()
    >>> with listen(TqdmBars(out, delay=0)):
    ...     with task("fit and score", total=2, unit="fits") as t:
    ...         t.advance(2)
    >>> "fit and score" in out.getvalue()
    True
    """

    def __init__(self, file: TextIO | None = None, *, delay: float = 1.0, interval: float = 0.5) -> None:
        from tqdm import tqdm  # noqa: F401  (fail here, not in the middle of a computation)

        self.file, self.delay, self.interval = file, float(delay), float(interval)
        self._lock = threading.RLock()
        self._open: dict[int, list[Any]] = {}  # task_id -> [opened, event, bar or None]
        self._ticker: threading.Thread | None = None
        self._wake = threading.Event()

    def __call__(self, event: ProgressEvent) -> None:
        with self._lock:
            now = time.monotonic()
            if event.closed:
                record = self._open.pop(event.task_id, None)
                if record is not None and record[2] is not None:
                    record[2].n = event.done
                    record[2].close()
                return
            record = self._open.get(event.task_id)
            if record is None:
                self._open[event.task_id] = [now, event, None]
                self._start_ticker()
                return
            record[1] = event
            if record[2] is None:
                if now - record[0] < self.delay:
                    return
                self._show(now)
            bar = record[2]
            bar.update(event.done - bar.n)

    def _show(self, now: float) -> None:
        """Bars for every open task older than ``delay`` (and the older tasks around them)."""
        from tqdm import tqdm

        due = [r for r in self._open.values() if r[2] is None and now - r[0] >= self.delay]
        if not due:
            return
        newest = max(r[0] for r in due)
        for record in sorted(self._open.values(), key=lambda r: r[0]):  # outermost first
            if record[2] is None and record[0] <= newest:
                event = record[1]
                bar = tqdm(total=event.total, initial=event.done, desc=event.stage,
                           unit=f" {event.unit}" if event.unit else "it", leave=False, delay=1e-9,
                           dynamic_ncols=True, file=self.file if self.file is not None else sys.stderr)
                bar.start_t = bar.last_print_t = bar._time() - (now - record[0])  # the task's own start
                bar.refresh()
                record[2] = bar

    def _start_ticker(self) -> None:
        if self._ticker is not None and self._ticker.is_alive():
            self._wake.set()
            return
        self._ticker = threading.Thread(target=self._tick, name="mlneighbors-progress", daemon=True)
        self._ticker.start()

    def _tick(self) -> None:
        idle_since = None
        while True:
            self._wake.wait(self.interval)
            self._wake.clear()
            with self._lock:
                now = time.monotonic()
                if not self._open:  # linger a little: a run of many small tasks starts one thread
                    idle_since = idle_since or now
                    if now - idle_since > 2 * self.interval:
                        self._ticker = None
                        return
                    continue
                idle_since = None
                self._show(now)
                for record in self._open.values():
                    if record[2] is not None:
                        record[2].refresh()


_default: TqdmBars | None = None


def default_bars() -> TqdmBars:
    """The bars of ``progress=True`` (one set per process, on standard error)."""
    global _default
    if _default is None:
        try:
            _default = TqdmBars()
        except ImportError:
            raise ImportError(TQDM_MISSING) from None
    return _default
