"""Descriptions of registered datasets: their files, checksums and statistics."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

#: Roles a file can play in a dataset folder.
FILE_ROLES = ("all", "train", "test", "xml", "mat", "doc")


@dataclass(frozen=True)
class FileSpec:
    """One file of a dataset folder.

    ``path`` is relative to the data directory (``<folder>/<file>``). A ``.gz`` file
    may also be held uncompressed (the name without ``.gz``), which is the form its
    source repository serves: ``sha256`` verifies the first form, ``raw_sha256`` the
    second (they are equal for files that are not compressed).
    """

    path: str
    role: str
    size: int
    sha256: str
    raw_sha256: str
    url: str

    @property
    def compressed(self) -> bool:
        return self.path.endswith(".gz")

    @property
    def raw_path(self) -> str:
        """The name of the uncompressed form (the one a download writes)."""
        return self.path[: -len(".gz")] if self.compressed else self.path

    @property
    def required(self) -> bool:
        """Documentation files are listed and verified but not needed to load."""
        return self.role != "doc"


@dataclass(frozen=True)
class SplitStats:
    """Shape and label cardinality of one split, as the manifest records them."""

    n_samples: int
    n_features: int
    n_labels: int
    cardinality: float | None


@dataclass(frozen=True)
class DatasetSpec:
    """A registered dataset."""

    name: str
    folder: str
    format: str
    domain: str
    citation: str
    files: tuple[FileSpec, ...]
    stats: Mapping[str, SplitStats]
    notes: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        object.__setattr__(self, "stats", MappingProxyType(dict(self.stats)))

    @property
    def splits(self) -> tuple[str, ...]:
        """The splits that can be loaded: always "all", plus "train"/"test" where a standard split ships."""
        return tuple(s for s in ("all", "train", "test") if s in self.stats)

    def file(self, role: str) -> FileSpec | None:
        for f in self.files:
            if f.role == role:
                return f
        return None
