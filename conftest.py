"""What needs an optional library is skipped where that library is not installed.

The core of the package needs numpy, scipy and scikit-learn only; the extras (pandas, skops,
pooch, matplotlib, tqdm, Dask, PyTorch, faiss, hnswlib, pynndescent) are imported where they
are used.  CI's oldest-dependencies step (``.ci/oldest``) runs the suite with none of them, so a
test that needs one says so: ``@pytest.mark.requires("pandas")`` (or ``pytest.importorskip``
inside it), and a docstring example that uses one through the package is listed in
``DOCTEST_REQUIRES``.  A test or an example that needs an extra without saying so fails there.
"""

from __future__ import annotations

from importlib.util import find_spec

import pytest

#: docstring examples (pytest's doctest item names) -> the optional libraries they use
DOCTEST_REQUIRES = {
    "mlneighbors._targets.in_fit_order": ("pandas",),
    "mlneighbors.benchmark._diagram.cd_diagram": ("matplotlib",),
    "mlneighbors._persist": ("skops",),
    "mlneighbors._persist.save": ("skops",),
    "mlneighbors._progress.TqdmBars": ("tqdm",),
    "mlneighbors.datasets._csv.load_csv": ("pandas",),
    "mlneighbors.datasets._files.load_file": ("pandas",),
    "mlneighbors.exceptions.ModelFileError": ("skops",),
    "mlneighbors.neighbors._dask.DaskIndex": ("distributed",),
    "mlneighbors.neighbors._torch.TorchIndex": ("torch",),
}


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "requires(*libraries): needs these optional libraries (skipped without them)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        needs = [name for mark in item.iter_markers("requires") for name in mark.args]
        needs += DOCTEST_REQUIRES.get(item.name, ())  # a doctest item is named by its object
        missing = sorted({name for name in needs if find_spec(name) is None})
        if missing:
            item.add_marker(pytest.mark.skip(reason=f"needs {', '.join(missing)} (not installed)"))
