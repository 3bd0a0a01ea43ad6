import os
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[1]


def shared_data_dir() -> Path:
    """The shared benchmark data: $MLNEIGHBORS_DATA, else ../shared/datasets beside the repo."""
    env = os.environ.get("MLNEIGHBORS_DATA")
    return Path(env) if env else REPO.parent / "shared" / "datasets"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    path = shared_data_dir()
    if not (path / "MANIFEST.md").is_file():
        pytest.skip(f"the shared benchmark datasets are not at {path}")
    return path


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(20261122)
