"""The warnings and errors of mlneighbors, in one public place (as ``sklearn.exceptions``).

>>> import warnings
>>> import numpy as np
>>> from mlneighbors import MLkNN
>>> from mlneighbors.exceptions import NeighborsWarning
>>> with warnings.catch_warnings(record=True) as caught:
...     warnings.simplefilter("always")
...     model = MLkNN(n_neighbors=50).fit(np.eye(4), np.eye(4, dtype=int))
>>> model.n_neighbors_, caught[0].category is NeighborsWarning
(3, True)
"""

from __future__ import annotations

__all__ = [
    "ArffFormatError",
    "BackendError",
    "ChecksumError",
    "DataScaleWarning",
    "DatasetError",
    "DatasetNotFoundError",
    "LabelWarning",
    "NeighborsWarning",
    "VersionWarning",
]


class LabelWarning(UserWarning):
    """A recoverable condition of the training labels (a label nobody has, ...)."""


class NeighborsWarning(UserWarning):
    """``n_neighbors`` was clipped to the neighbours the training set has."""


class VersionWarning(UserWarning):
    """A model saved by one mlneighbors version was loaded by another."""


class DataScaleWarning(UserWarning):
    """The features are so small that squared distances underflow: neighbours tie at 0."""


class BackendError(ValueError):
    """A neighbour backend returned something the index protocol does not allow
    (row numbers outside the indexed rows, -1 padding, NaN or unordered distances, a
    wrong shape); the message names the backend."""


class DatasetError(ValueError):
    """A dataset file cannot be read as a multi-label dataset."""


class ArffFormatError(DatasetError):
    """An ARFF file is malformed; the message names the line and what was expected."""


class DatasetNotFoundError(FileNotFoundError):
    """A dataset file is absent and downloading was not allowed."""


class ChecksumError(OSError):
    """A dataset file does not have the sha256 the registry records."""
