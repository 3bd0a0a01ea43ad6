"""The protocol side of the reproductions: their options, data, folds, warnings, progress, timing.

Fitting and scoring go through :func:`mlneighbors.model_selection.evaluate_models` (one
neighbour search per split, shared by every model and every k); what stays here is what a
reproduction needs around it.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import os
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Protocol

from ._report import Reproduction, require_matplotlib

if TYPE_CHECKING:  # imported where used: the command line's parser imports this package (list_papers)
    import numpy as np

__all__ = [
    "ProgressBar",
    "ProgressFactory",
    "RunOptions",
    "Timer",
    "collect_warnings",
    "fold_means",
    "load",
    "paper_reproduction",
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
# the options of a run
# --------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class RunOptions:
    """The keyword arguments of every paper's ``reproduce``, as
    :func:`mlneighbors.experiments.reproduce` documents them."""

    quick: bool = False
    out: str | os.PathLike[str] | None = None
    data_home: Any = None
    figures: bool = True
    progress: ProgressFactory | None = None
    random_state: int = 0
    backend: Any = None
    backend_params: dict | None = None

    @property
    def draws_figures(self) -> bool:
        """Whether the run draws the paper's figures: asked for, and written to ``out``."""
        return self.figures and self.out is not None

    @property
    def route(self) -> dict[str, Any]:
        """The neighbour backend of every exact search, as ``evaluate_models`` takes it."""
        return {"backend": self.backend, "backend_params": self.backend_params}


#: ``reproduce(*, quick=False, out=None, ...)``: the fields of :class:`RunOptions`, keyword-only
_REPRODUCE_SIGNATURE = inspect.Signature(
    [
        inspect.Parameter(field.name, inspect.Parameter.KEYWORD_ONLY, default=field.default, annotation=field.type)
        for field in dataclasses.fields(RunOptions)
    ],
    return_annotation="Reproduction",
)


def paper_reproduction(
    *, figures: bool = False
) -> Callable[[Callable[[RunOptions], Reproduction]], Callable[..., Reproduction]]:
    """Make a paper's ``reproduce(*, quick=False, out=None, ...)`` (the fields of
    :class:`RunOptions`, with its signature, name and docstring) from ``run(options)``.

    ``figures``: the paper draws figures, so a run that writes them (:attr:`RunOptions.draws_figures`)
    checks first that matplotlib is there, before anything is computed.
    """

    def decorate(run: Callable[[RunOptions], Reproduction]) -> Callable[..., Reproduction]:
        @functools.wraps(run)
        def reproduce(*args: Any, **options: Any) -> Reproduction:
            try:
                _REPRODUCE_SIGNATURE.bind(*args, **options)
            except TypeError as error:  # as the call of a plain function words it
                raise TypeError(f"reproduce() {error}") from None
            gathered = RunOptions(**options)
            if figures and gathered.draws_figures:
                require_matplotlib()
            return run(gathered)

        reproduce.__signature__ = _REPRODUCE_SIGNATURE  # type: ignore[attr-defined]
        return reproduce

    return decorate


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

