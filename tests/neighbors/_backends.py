"""The tests' lists of backends, derived from the registry and the classes' own attributes.

A backend registered in ``mlneighbors._backends`` is covered by every test that reads these
lists, without a line in a test file; one whose library is absent is skipped, never failed.
"""

from __future__ import annotations

import importlib.util

import pytest

from mlneighbors.neighbors import BACKENDS, ApproximateIndex

#: builds that are slow in every process (pynndescent compiles its numba kernels on first use):
#: a speed mark, not a list of what is covered (a backend absent here is tested all the same)
SLOW = {"pynndescent"}

#: the approximate libraries' adapters, in the registry's order
APPROXIMATE = [name for name, cls in BACKENDS.items() if issubclass(cls, ApproximateIndex)]
#: those with a search breadth calibrated to a recall (hnswlib's ef, faiss's nprobe, ...)
CALIBRATED = [name for name in APPROXIMATE if BACKENDS[name].breadth]


def library(name: str) -> str:
    """The optional library a registered backend imports when built ("" for none)."""
    return BACKENDS[name].module


def installed(name: str) -> bool:
    """Whether the library of a registered backend is installed (always, for one without)."""
    module = library(name)
    return not module or importlib.util.find_spec(module) is not None


def require(name: str) -> None:
    """Skip the calling test unless the library of backend ``name`` is installed."""
    if library(name):
        pytest.importorskip(library(name))


def param(name: str, *, skip_absent: bool = False) -> object:
    """``pytest.param(name)`` marked slow where its build is, and skipped where its library is
    absent (``skip_absent``; else the test calls :func:`require` itself)."""
    marks = [pytest.mark.slow] if name in SLOW else []
    if skip_absent and not installed(name):
        marks.append(pytest.mark.skip(reason=f"{library(name)} is not installed"))
    return pytest.param(name, marks=marks, id=name)
