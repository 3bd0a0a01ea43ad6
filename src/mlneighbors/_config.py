"""The package's settings: the working memory of an operation's temporaries, and progress.

Every kernel of the package that works in blocks (the neighbour search, the pair distances,
the label counts, the per-label searches, the metrics) sizes its blocks from
``working_memory``, the MiB that the temporaries of one operation may hold, as
scikit-learn's ``working_memory`` does.  Some kernels also cap their blocks at a size measured
to keep the temporaries near the processor's cache (:data:`CACHE_BYTES`): a smaller budget is
always respected, a larger one does not make those blocks larger.

>>> import mlneighbors
>>> mlneighbors.get_config()["working_memory"]
256
>>> with mlneighbors.config_context(working_memory=64):
...     mlneighbors.get_config()["working_memory"]
64

``progress`` asks the long computations (neighbour searches, cross-validation folds) to
report their progress: ``True`` draws tqdm bars on standard error, a callable receives every
:class:`~mlneighbors.ProgressEvent`, ``False`` (the default) reports nothing.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = [
    "CACHE_BYTES",
    "available_memory",
    "block_rows",
    "check_fits",
    "config_context",
    "get_config",
    "set_config",
    "working_memory_bytes",
]

_DEFAULTS: dict[str, Any] = {"working_memory": 256, "progress": False}
_global: dict[str, Any] = dict(_DEFAULTS)
_local = threading.local()

#: Upper bounds (bytes) of the blocks of kernels whose temporaries should stay near the cache,
#: each measured on a 2-core AMD EPYC (AVX2); see the kernel named.
CACHE_BYTES: dict[str, int] = {
    # ExactIndex: one proxy block (32 MiB of float32 values) stays in the last-level cache for
    # the passes of the selection
    "proxy_block": 1 << 25,
    # Reference.pair_distances: small chunks are recycled by the allocator instead of being
    # page-faulted in afresh
    "pair_chunk": 1 << 20,
    # the label-restricted masked search and the PCA window search (best of 4..128 MiB)
    "label_block": 1 << 24,
    "window_block": 1 << 24,
    # live updates: one tile of products of old rows by new rows, compared in the cache
    "live_tile": 1 << 24,
}


def _config() -> dict[str, Any]:
    if not hasattr(_local, "config"):
        _local.config = dict(_global)
    return _local.config


def get_config() -> dict[str, Any]:
    """The current settings (a copy): ``{"working_memory": MiB, "progress": ...}``.

    Returns
    -------
    config : dict

    Examples
    --------
    >>> import mlneighbors
    >>> with mlneighbors.config_context(working_memory=64):
    ...     mlneighbors.get_config()
    {'working_memory': 64, 'progress': False}
    """
    return dict(_config())


def _check_working_memory(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0 or value != value:
        raise ValueError(f"working_memory must be a positive number of MiB, got {value!r}")
    if value == float("inf"):
        raise ValueError("working_memory must be finite")
    return value


#: what ``progress=True`` says when tqdm is not installed
TQDM_MISSING = "progress=True draws tqdm bars: pip install tqdm (or pass a callable)"


def _check_progress(value: Any) -> Any:
    if isinstance(value, bool) or callable(value):
        if value is True:
            try:  # tqdm missing: say so now, not in the middle of a computation
                import tqdm  # noqa: F401  (optional: the bars are drawn by _progress)
            except ImportError:
                raise ImportError(TQDM_MISSING) from None
        return value
    raise ValueError(f"progress must be True, False or a callable taking a ProgressEvent, got {value!r}")


def set_config(working_memory: float | None = None, progress: Any = None) -> None:
    """Change the settings for this thread and for threads started afterwards.

    Parameters
    ----------
    working_memory : float, default=None
        MiB that the temporaries of one operation may hold (default 256).  None keeps the
        current value.
    progress : bool or callable, default=None
        Progress of the long computations (the neighbour searches of ``fit`` and
        ``predict``, the folds of :func:`~mlneighbors.model_selection.evaluate_models`, the
        reproductions): ``True`` draws tqdm bars on standard error for every step that lasts
        more than a second (needs tqdm); a callable receives every
        :class:`~mlneighbors.ProgressEvent` (from the thread that made the progress);
        ``False`` (the default) reports nothing.  None keeps the current value.

    Returns
    -------
    None

    Examples
    --------
    >>> import mlneighbors
    >>> old = mlneighbors.get_config()["working_memory"]
    >>> mlneighbors.set_config(working_memory=128)
    >>> mlneighbors.get_config()
    {'working_memory': 128, 'progress': False}
    >>> mlneighbors.set_config(working_memory=old)
    """
    if working_memory is not None:
        value = _check_working_memory(working_memory)
        _config()["working_memory"] = value
        _global["working_memory"] = value
    if progress is not None:
        progress = _check_progress(progress)
        _config()["progress"] = progress
        _global["progress"] = progress


@contextmanager
def config_context(*, working_memory: float | None = None, progress: Any = None) -> Iterator[None]:
    """Settings for the duration of a ``with`` block (this thread only), then the old ones.

    Parameters
    ----------
    working_memory : float, default=None
        As in :func:`set_config`; None keeps the current value.
    progress : bool or callable, default=None
        As in :func:`set_config`: ``True`` for progress bars, a callable for the events;
        None keeps the current value.

    Yields
    ------
    None

    Examples
    --------
    >>> import mlneighbors
    >>> with mlneighbors.config_context(working_memory=32):
    ...     pass  # every block of every model is sized for 32 MiB here
    >>> events = []
    >>> import numpy as np
    >>> X = np.random.default_rng(0).normal(size=(100, 3))
    >>> with mlneighbors.config_context(progress=events.append):  # or progress=True: bars
    ...     _ = mlneighbors.MLkNN(3).fit(X, X > 0)
    >>> sorted({event.stage for event in events})
    ['neighbour search']
    """
    config = _config()
    old = dict(config)
    if working_memory is not None:
        config["working_memory"] = _check_working_memory(working_memory)
    if progress is not None:
        config["progress"] = _check_progress(progress)
    try:
        yield
    finally:
        config.clear()
        config.update(old)


def working_memory_bytes(share: float = 1.0, working_memory: float | None = None) -> int:
    """Bytes of the budget: ``share`` of ``working_memory`` (the setting when None)."""
    mib = _config()["working_memory"] if working_memory is None else working_memory
    return max(1, int(mib * 2**20 * share))


def block_rows(row_bytes: float, *, share: float = 1.0, cap: str | None = None,
               working_memory: float | None = None) -> int:
    """Rows of a block whose temporaries take ``row_bytes`` each: at least 1, within the budget
    (and within ``CACHE_BYTES[cap]`` when a cap is named)."""
    budget = working_memory_bytes(share, working_memory)
    if cap is not None:
        budget = min(budget, CACHE_BYTES[cap])
    return max(1, int(budget // max(row_bytes, 1)))


def available_memory() -> int | None:
    """Bytes of memory this machine has available now (Linux: /proc/meminfo), else None."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def check_fits(n_bytes: float, what: str) -> None:
    """Fail early, naming the estimate, when ``what`` would need more memory than is available."""
    available = available_memory()
    if available is not None and n_bytes > available:
        raise MemoryError(
            f"{what} needs about {n_bytes / 2**30:.1f} GiB and this machine has "
            f"{available / 2**30:.1f} GiB available; use fewer labels or rows, or a model whose "
            "label side is sparse (ML-kNN, LAML-kNN, BRkNN, LPkNN)"
        )
