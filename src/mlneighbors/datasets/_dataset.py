"""The in-memory form of a multi-label dataset."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from ..exceptions import ArffFormatError, ChecksumError, DatasetError, DatasetNotFoundError

__all__ = ["ArffFormatError", "ChecksumError", "Dataset", "DatasetError", "DatasetNotFoundError"]


@dataclass
class Dataset:
    """A multi-label dataset: features, binary label indicator and names.

    Attributes
    ----------
    X : ndarray of shape (n_samples, n_features) or scipy.sparse.csr_matrix
        Features as float64: a dense array for dense sources, CSR for sparse
        ARFF (``{index value, ...}`` rows).
    Y : ndarray of shape (n_samples, n_labels), dtype int8
        ``Y[i, l] == 1`` when instance ``i`` carries label ``l``. Columns follow
        the order of the attributes in the file.
    feature_names : list of str
    label_names : list of str
        ``label_names[l]`` names column ``l`` of ``Y``.
    name : str
        Registry name (empty for a file loaded directly).
    split : {"all", "train", "test"}
    notes : list of str
        What the loader did that a user should know (dropped attributes,
        nominal encodings).
    """

    X: np.ndarray | sp.csr_matrix
    Y: np.ndarray
    feature_names: list[str]
    label_names: list[str]
    name: str = ""
    split: str = "all"
    notes: list[str] = field(default_factory=list)

    @property
    def n_samples(self) -> int:
        return int(self.X.shape[0])

    @property
    def n_features(self) -> int:
        return int(self.X.shape[1])

    @property
    def n_labels(self) -> int:
        return int(self.Y.shape[1])

    @property
    def cardinality(self) -> float:
        """Mean number of labels per instance."""
        if self.Y.shape[0] == 0:
            return 0.0
        return float(self.Y.sum(dtype=np.int64) / self.Y.shape[0])

    @property
    def is_sparse(self) -> bool:
        return sp.issparse(self.X)

    def __repr__(self) -> str:
        kind = "sparse" if self.is_sparse else "dense"
        title = self.name or "<file>"
        return (
            f"Dataset({title!r}, split={self.split!r}, n_samples={self.n_samples}, "
            f"n_features={self.n_features} ({kind}), n_labels={self.n_labels}, "
            f"cardinality={self.cardinality:.4f})"
        )
