"""The in-memory form of a multi-label dataset."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from ..exceptions import ArffFormatError, ChecksumError, DatasetError, DatasetNotFoundError

__all__ = ["ArffFormatError", "ChecksumError", "Dataset", "DatasetError", "DatasetNotFoundError"]

#: How a label coded -1/+1 is made 0/1, said wherever one is refused.
PLUS_MINUS_HINT = "labels must be 0/1: recode them (for an array Y coded -1/+1: (Y > 0).astype(int))"


@dataclass
class Dataset:
    """A multi-label dataset: features, binary label indicator and names.

    Parameters
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
    source : str
        The file the rows were read from (empty when not read from one file).
    named : bool
        Whether ``feature_names`` and ``label_names`` come from the file (ARFF
        attributes, a CSV header) and can match columns by name; False where
        the loader made them up (``f0, f1, ...`` and ``label0, ...`` of libsvm,
        ``.mat`` and header-less CSV files), so that only positions count.
    lines : ndarray of shape (n_samples,) or None
        The 1-based line of each row in its text file, for messages about a
        row; None where rows have no line (``.mat`` files, joined parts).
    index_base : {0, 1} or None
        libsvm files: the index of their first feature (0 when the file uses
        index 0, else 1; a file read ``like`` a training set or a model takes
        theirs). None for the other formats.

    Examples
    --------
    >>> import numpy as np
    >>> from mlneighbors.datasets import Dataset
    >>> data = Dataset(np.eye(3), np.array([[1, 0], [0, 1], [1, 1]], dtype=np.int8),
    ...                ["a", "b", "c"], ["sport", "music"])
    >>> data.n_samples, data.n_labels, data.cardinality
    (3, 2, 1.3333333333333333)
    """

    X: np.ndarray | sp.csr_matrix
    Y: np.ndarray
    feature_names: list[str]
    label_names: list[str]
    name: str = ""
    split: str = "all"
    notes: list[str] = field(default_factory=list)
    source: str = ""
    named: bool = True
    lines: np.ndarray | None = field(default=None, repr=False, compare=False)
    index_base: int | None = None

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


def label_problem(column: np.ndarray, lines: np.ndarray) -> str | None:
    """Why a label column (floats, NaN for missing) is not 0/1, or None when it is.

    ``lines[i]`` is the line of row ``i`` in its file. The answer completes a sentence
    whose subject is the label: "label 'x' <problem>".

    >>> label_problem(np.array([0.0, 1.0]), np.array([5, 6])) is None
    True
    >>> label_problem(np.array([0.0, 2.0]), np.array([5, 6]))
    'must be 0 or 1, but row 1 (line 6) has 2'
    """
    bad = ~((column == 0) | (column == 1))
    if not bad.any():
        return None
    present = column[~np.isnan(column)]
    if np.isin(present, (-1.0, 0.0, 1.0)).all() and (present == -1).any():
        return f"holds -1 and +1; {PLUS_MINUS_HINT}"
    row = int(np.flatnonzero(bad)[0])
    value = column[row]
    found = "is missing" if np.isnan(value) else f"has {value:g}"
    return f"must be 0 or 1, but row {row} (line {int(lines[row])}) {found}"


def shown_names(names: list[str], limit: int = 8) -> str:
    """The first ``limit`` names quoted, and how many more.

    >>> shown_names(["a", "b", "c"], limit=2)
    "'a', 'b' and 1 more"
    """
    shown = ", ".join(map(repr, names[:limit]))
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")
