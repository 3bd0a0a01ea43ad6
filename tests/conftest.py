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


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(20261122)
