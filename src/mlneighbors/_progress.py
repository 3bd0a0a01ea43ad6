"""Progress of long computations, told to whoever listens; nobody listens by default.

A computation that can run long (a neighbour search over blocks of queries, an index
build, the folds of a cross-validation) opens a :func:`task` and advances it.  The task
goes to the listener installed by :func:`listen` in the calling context (the command line
installs one that draws tqdm bars), else nowhere: the Python API prints nothing unless a
caller asks.  A task captures its listener when it opens, so the worker threads of a
search may advance it; the listener is called under a lock.

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

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

__all__ = ["ProgressEvent", "listen", "task"]


@dataclass(frozen=True)
class ProgressEvent:
    """One step of a task: ``done`` of ``total`` units of ``stage`` (``closed`` at its end)."""

    stage: str
    done: int
    total: int
    closed: bool = False


Listener = Callable[[ProgressEvent], None]

_listener: ContextVar[Listener | None] = ContextVar("mlneighbors_progress", default=None)


@contextmanager
def listen(listener: Listener | None) -> Iterator[None]:
    """Send the events of every task opened inside the block to ``listener`` (None: to nobody)."""
    token = _listener.set(listener)
    try:
        yield
    finally:
        _listener.reset(token)


class _Task:
    def __init__(self, stage: str, total: int, listener: Listener | None) -> None:
        self.stage, self.total, self.done = stage, int(total), 0
        self._listener = listener
        self._lock = threading.Lock()

    def _tell(self, closed: bool = False) -> None:
        if self._listener is not None:
            self._listener(ProgressEvent(self.stage, self.done, self.total, closed))

    def advance(self, n: int = 1) -> None:
        """``n`` more units done (thread-safe)."""
        if self._listener is None:
            return
        with self._lock:
            self.done += int(n)
            self._tell()


@contextmanager
def task(stage: str, total: int) -> Iterator[_Task]:
    """A task of ``total`` units, reported to the current listener (if any) as it advances."""
    t = _Task(stage, total, _listener.get())
    if t._listener is not None:
        t._tell()
    try:
        yield t
    finally:
        if t._listener is not None:
            with t._lock:
                t._tell(closed=True)
