from pathlib import Path

import numpy as np
import pytest

from mlneighbors.datasets import data_home_source, get_data_home


def shared_data_dir() -> Path:
    """The shared benchmark data, found by the library's own rule (``get_data_home``):
    $MLNEIGHBORS_DATA, else ../shared/datasets beside this checkout."""
    return get_data_home()


@pytest.fixture(scope="session")
def shared_data() -> Path:
    path = shared_data_dir()
    if not (path / "MANIFEST.md").is_file():
        pytest.skip(f"the shared benchmark datasets are not at {path} ({data_home_source()})")
    return path


@pytest.fixture(autouse=True)
def union_at_its_model(monkeypatch):
    """``"auto"``'s estimate of the union's fit at its cost model as fitted (factor 1), not as
    probed on the machine that runs: a test's pick must not depend on this CPU's speed with
    faiss (``tests/neighbors/test_scale.py`` tests the probe itself)."""
    from mlneighbors.neighbors import _auto

    monkeypatch.setattr(_auto, "_APPROX_FACTOR", 1.0)


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(20261122)


@pytest.fixture(scope="session")
def quick_reproductions(shared_data, tmp_path_factory):
    """Every paper's quick reproduction, run once for the whole suite (with its figures, into
    one output folder, its steps counted by a progress bar): ``(out, {paper: Reproduction},
    {bar description: [(total, description), ...]})``.  The library's tests and the command
    line's read this one run.  Without matplotlib (an optional extra) it runs without figures."""
    from importlib.util import find_spec

    from mlneighbors.experiments import list_papers, reproduce

    out = tmp_path_factory.mktemp("reproductions")
    calls: dict[str, list[tuple[int, str]]] = {}

    class Bar:
        def __init__(self, total, desc):
            self.total, self.desc, self.n = total, desc, 0
            calls.setdefault(desc, []).append((total, desc))

        def update(self, n=1):
            self.n += n

        def close(self):
            assert self.n == self.total, (self.desc, self.n, self.total)

    figures = find_spec("matplotlib") is not None
    runs = {name: reproduce(name, quick=True, out=out, data_home=shared_data, figures=figures, progress=Bar)
            for name in list_papers()}
    return out, runs, calls
