"""The protocol side of the reproductions: data, folds, warnings, progress, timing.

Fitting and scoring go through :func:`mlneighbors.model_selection.evaluate_models` (one
neighbour search per split, shared by every model and every k); what stays here is what a
reproduction needs around it.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:  # imported where used: the command line's parser imports this package (list_papers)
    import numpy as np

__all__ = [
    "ProgressBar",
    "ProgressFactory",
    "Timer",
    "collect_warnings",
    "fold_means",
    "load",
    "progress_bar",
    "stratified_folds",
]


# --------------------------------------------------------------------------------------
# progress
# --------------------------------------------------------------------------------------


class ProgressBar(Protocol):
    """What a reproduction calls on a progress bar (tqdm's ``update`` and ``close``)."""

    def update(self, n: int = 1) -> Any: ...

    def close(self) -> Any: ...


#: ``factory(total, description)`` -> a progress bar; the command line passes tqdm's.
ProgressFactory = Callable[[int, str], ProgressBar]


class _Progress:
    """The reproduction's task (told to the package's progress listener, if any) and the
    caller's bar (if any), advanced together."""

    def __init__(self, task: Any, bar: ProgressBar | None) -> None:
        self.task, self.bar = task, bar

    def update(self, n: int = 1) -> None:
        self.task.advance(n)
        if self.bar is not None:
            self.bar.update(n)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


@contextmanager
def progress_bar(factory: ProgressFactory | None, total: int, desc: str) -> Iterator[ProgressBar]:
    from .._progress import task

    with task(desc, total=total, unit="fits") as t:
        progress = _Progress(t, factory(total, desc) if factory is not None else None)
        try:
            yield progress
        finally:
            progress.close()


# --------------------------------------------------------------------------------------
# data and folds
# --------------------------------------------------------------------------------------


def load(name: str, split: str = "all", data_home: Any = None) -> Any:
    from ..datasets import load_dataset

    return load_dataset(name, split, data_home)


def stratified_folds(Y: Any, n_splits: int, random_state: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Seeded, shuffled multi-label stratified K-fold splits (iterative stratification)."""
    from ..model_selection import MultilabelStratifiedKFold

    cv = MultilabelStratifiedKFold(n_splits=n_splits, shuffle=True, random_state=random_state)
    return list(cv.split(None, Y))


@contextmanager
def collect_warnings(bucket: dict[str, int]) -> Iterator[None]:
    """Record warnings (category and the start of the message) instead of printing them."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield
    for w in caught:
        key = f"{w.category.__name__}: {str(w.message).split(';')[0][:90]}"
        bucket[key] = bucket.get(key, 0) + 1


def fold_means(result: Any) -> dict[str, float]:
    """Mean over the folds of every metric of a :class:`~mlneighbors.model_selection.CVResult`."""
    import numpy as np

    return {name: float(np.mean(values)) for name, values in result.per_fold.items()}


class Timer:
    def __init__(self) -> None:
        self.start = time.perf_counter()

    @property
    def seconds(self) -> float:
        return time.perf_counter() - self.start

