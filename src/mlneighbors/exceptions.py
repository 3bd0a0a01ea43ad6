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

from typing import Any

__all__ = [
    "ArffFormatError",
    "BackendError",
    "ChecksumError",
    "DataScaleWarning",
    "DatasetError",
    "DatasetNotFoundError",
    "DatasetWarning",
    "InvalidParameterError",
    "LabelWarning",
    "ModelFileError",
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


class InvalidParameterError(ValueError, TypeError):
    """An estimator's parameter has a value or a type it does not take.

    Raised by ``fit`` before it reads the data; the message names the parameter, the
    estimator, what the parameter must be and what it got.  A ``ValueError`` and a
    ``TypeError`` both, so that either ``except`` catches it (as scikit-learn's own error
    for its estimators).

    Examples
    --------
    >>> from mlneighbors import BRkNN
    >>> from mlneighbors.exceptions import InvalidParameterError
    >>> try:
    ...     BRkNN(extension="c").fit([[0.0], [1.0]], [[1, 0], [0, 1]])
    ... except InvalidParameterError as exc:
    ...     print(exc)
    The 'extension' parameter of BRkNN must be one of 'a', 'b' or None; got 'c'.
    """


class BackendError(ValueError):
    """A neighbour backend returned something the index protocol does not allow
    (row numbers outside the indexed rows, -1 padding, NaN or unordered distances, a
    wrong shape); the message names the backend."""


class DatasetError(ValueError):
    """A dataset file cannot be read as a multi-label dataset."""


class ArffFormatError(DatasetError):
    """An ARFF file is malformed; the message names the line and what was expected."""


class ModelFileError(ValueError):
    """A file given to :func:`mlneighbors.load` is not a model it can load.

    The message names the file and what is wrong with it: not a model file (empty, a pickle,
    some other zip archive, text...), truncated, damaged, written by a newer skops file
    protocol, or holding a type outside :data:`mlneighbors.TRUSTED_TYPES` (named; nothing of
    the file was built).  A missing file is a ``FileNotFoundError`` instead.

    Parameters
    ----------
    message : str
        What is wrong, naming the file.
    path : str, default=""
        The file.

    Examples
    --------
    >>> import os, tempfile
    >>> import mlneighbors
    >>> from mlneighbors.exceptions import ModelFileError
    >>> path = os.path.join(tempfile.mkdtemp(), "model.skops")
    >>> open(path, "wb").close()
    >>> try:
    ...     mlneighbors.load(path)
    ... except ModelFileError as exc:
    ...     print(str(exc).replace(path, "model.skops"))
    model.skops is not a model file: it is empty (0 bytes)
    """

    def __init__(self, message: str, *, path: str = "") -> None:
        super().__init__(message)
        self.path = path

    def __reduce__(self):  # the keyword-only path survives pickling
        return type(self), (str(self),), {"path": self.path}


class DatasetWarning(UserWarning):
    """A dataset file was read, but its header contradicts itself (a stale ``-C`` in an ARFF file)."""


class _Remedied:
    """An error whose message is ``reason`` followed by ``hint``, the remedy; the default
    hint speaks to Python callers and a front end swaps in its own with :meth:`with_hint`."""

    def __init__(self, reason: str, *, dataset: str = "", path: str = "", hint: str = "") -> None:
        super().__init__(" ".join(part for part in (reason, hint) if part))
        self.reason, self.dataset, self.path, self.hint = reason, dataset, path, hint

    def with_hint(self, hint: str) -> Any:
        """The same error with another remedy.

        Parameters
        ----------
        hint : str
            What to do about it, in the words of the front end.

        Returns
        -------
        error : same type as self
        """
        return type(self)(self.reason, dataset=self.dataset, path=self.path, hint=hint)

    def __reduce__(self):  # keyword-only fields survive pickling
        return _rebuild, (type(self), self.reason, self.dataset, self.path, self.hint)


class DatasetNotFoundError(_Remedied, FileNotFoundError):
    """A dataset file is absent and downloading was not allowed.

    The message is ``reason`` followed by ``hint``, the remedy. The default hint speaks to
    Python callers (``download=True``); a front end swaps in its own with :meth:`with_hint`.

    Parameters
    ----------
    reason : str
        What is missing and where.
    dataset : str, default=""
        The registry name of the dataset whose file is missing.
    path : str, default=""
        The file that was looked for.
    hint : str, default=""
        What to do about it.

    Examples
    --------
    >>> exc = DatasetNotFoundError("x.arff is missing.", dataset="yeast", hint="Pass download=True.")
    >>> str(exc)
    'x.arff is missing. Pass download=True.'
    >>> str(exc.with_hint(f"Run 'mlneighbors fetch {exc.dataset}'."))
    "x.arff is missing. Run 'mlneighbors fetch yeast'."
    """



class ChecksumError(_Remedied, OSError):
    """A dataset file does not have the sha256 the registry records.

    The message is ``reason`` followed by ``hint``, the remedy, as
    :class:`DatasetNotFoundError`'s.

    Parameters
    ----------
    reason : str
        Which file, and what it should have been.
    dataset : str, default=""
        The registry name of the dataset the file belongs to.
    path : str, default=""
        The file.
    hint : str, default=""
        What to do about it.

    Examples
    --------
    >>> exc = ChecksumError("x.arff is damaged.", dataset="yeast", hint="Pass download=True.")
    >>> str(exc.with_hint("Run 'mlneighbors fetch yeast'."))
    "x.arff is damaged. Run 'mlneighbors fetch yeast'."
    """


def _rebuild(cls: type, reason: str, dataset: str, path: str, hint: str) -> Any:
    return cls(reason, dataset=dataset, path=path, hint=hint)
