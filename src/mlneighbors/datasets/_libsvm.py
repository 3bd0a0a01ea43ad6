"""libsvm / svmlight multi-label text: ``l1,l2 i:v i:v ...`` per line."""

from __future__ import annotations

import bz2
import gzip
import os
from collections.abc import Iterator
from contextlib import contextmanager
from itertools import chain
from typing import IO

import numpy as np
import scipy.sparse as sp

from mlneighbors.datasets._dataset import Dataset, DatasetError

__all__ = ["base_advice", "load_libsvm", "read_libsvm"]

PathLike = str | os.PathLike[str]


def load_libsvm(
    path: PathLike,
    *,
    n_features: int | None = None,
    n_labels: int | None = None,
    index_base: int | None = None,
) -> Dataset:
    """Load libsvm / svmlight multi-label text (``l1,l2 i:v i:v ...`` per line).

    Parameters
    ----------
    path : str or path-like
        Plain text, or gzip / bzip2 compressed (recognised by their magic bytes).
        ``#`` starts a comment; a line with no label before its pairs is a row
        with no label.
    n_features : int, default=None
        The number of features; inferred from the largest index when None.
    n_labels : int, default=None
        The number of labels; when None, the largest label seen plus one.
        Labels are 0-based integers.
    index_base : {0, 1}, default=None
        The index of the first feature: 1 (libsvm's own convention) or 0. When
        None it is told from the file, as scikit-learn's ``zero_based="auto"``
        does: 0 if some line uses index 0, else 1. A file of rows to predict or
        of test rows must be read with its training file's base (which
        :func:`load_file` does when given ``like``): a file that happens not to
        use feature 0 would otherwise have every column shifted.

    Returns
    -------
    Dataset
        X as CSR float64, Y as int8 0/1; features named ``f0, ...`` and labels
        ``label0, ...``; ``index_base`` the base the file was read with.

    Raises
    ------
    DatasetError
        An empty file, a malformed line (the message names it), a label that is
        not a non-negative integer (-1/+1 targets are binary classification,
        not multi-label), a label not below ``n_labels``, a feature index not
        below ``n_features`` (after the base), or index 0 in a file read with
        ``index_base=1`` (the message names the line).
    FileNotFoundError
        ``path`` names no file.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "tiny.svm"
    >>> _ = path.write_text("0,2 1:0.5 3:1\\n1 2:2\\n")
    >>> data = load_libsvm(path)
    >>> data.Y.tolist(), data.X.toarray().tolist()
    ([[1, 0, 1], [0, 1, 0]], [[0.5, 0.0, 1.0], [0.0, 2.0, 0.0]])

    No index 0 in this file: it is read as 1-based, unless told otherwise.

    >>> data.index_base, load_libsvm(path, index_base=0).X.toarray().tolist()
    (1, [[0.0, 0.5, 0.0, 1.0], [0.0, 0.0, 2.0, 0.0]])
    """
    return read_libsvm(path, n_features=n_features, n_labels=n_labels, index_base=index_base)


def read_libsvm(
    path: PathLike,
    *,
    n_features: int | None = None,
    n_labels: int | None = None,
    index_base: int | None = None,
    base_from: str = "",
) -> Dataset:
    """:func:`load_libsvm`; ``base_from`` says where a given ``index_base`` comes from, for the
    message about an index 0 that contradicts it ("the model's training file")."""
    if index_base not in (None, 0, 1):
        raise ValueError(f"index_base must be 0, 1 or None, got {index_base!r}")
    X, y = _parse(path)
    X, index_base = _rebase(path, X, index_base, base_from or f"index_base={index_base}")
    if n_features is not None:
        if X.shape[1] > n_features:
            raise DatasetError(f"{path}: holds feature index {X.shape[1] - 1 + index_base}, but "
                               f"n_features={n_features} (indices from {index_base})")
        X = sp.csr_matrix((X.data, X.indices, X.indptr), shape=(X.shape[0], n_features))
    counts = np.fromiter(map(len, y), dtype=np.intp, count=len(y))
    labels = np.fromiter(chain.from_iterable(y), dtype=np.float64, count=int(counts.sum()))
    wrong = (labels < 0) | (labels != np.round(labels))
    if wrong.any():
        k = int(np.flatnonzero(wrong)[0])
        row = int(np.searchsorted(np.cumsum(counts), k, side="right"))
        binary = " (-1/+1 targets are binary classification, not multi-label)" if labels[k] == -1 else ""
        raise DatasetError(
            f"{path}, line {row_lines(path)[row]}: label {labels[k]:g} is not a label index "
            f"(a non-negative integer){binary}"
        )
    seen = int(labels.max()) + 1 if labels.size else 0
    if n_labels is None:
        n_labels = seen
    elif seen > n_labels:
        raise DatasetError(f"{path}: label {seen - 1} is not below n_labels={n_labels}")
    Y = np.zeros((X.shape[0], n_labels), dtype=np.int8)
    Y[np.repeat(np.arange(X.shape[0]), counts), labels.astype(np.intp)] = 1
    X = sp.csr_matrix(X, dtype=np.float64)
    X.eliminate_zeros()
    X.sort_indices()
    return Dataset(
        X=X,
        Y=Y,
        feature_names=[f"f{j}" for j in range(X.shape[1])],
        label_names=[f"label{j}" for j in range(n_labels)],
        source=str(path),
        named=False,
        index_base=index_base,
    )


def _rebase(
    path: PathLike, X: sp.csr_matrix, index_base: int | None, base_from: str
) -> tuple[sp.csr_matrix, int]:
    """X read with its indices as written (0-based) and the base: X with column 0 the first
    feature. The base, when not given, is scikit-learn's ``zero_based="auto"`` rule."""
    X = sp.csr_matrix(X)
    has_zero = bool(X.indices.size) and int(X.indices.min()) == 0
    if index_base is None:
        index_base = 0 if has_zero or not X.indices.size else 1
    if index_base == 0:
        return X, 0
    if has_zero:
        line = next(n for n, tokens in _data_lines(path) if any(_is_index_zero(t) for t in tokens))
        raise DatasetError(
            f"{path}, line {line}: feature index 0, but {base_from} numbers the features from 1 "
            "(libsvm's convention): index 0 is no feature there, and this file numbers its features "
            f"from 0; {base_advice(0)}"
        )
    n_features = max(X.shape[1] - 1, 0)
    return sp.csr_matrix((X.data, X.indices - 1, X.indptr), shape=(X.shape[0], n_features)), 1


def base_advice(file_base: int) -> str:
    """How to make a libsvm file numbered from ``file_base`` agree with a training file (or a
    model's) numbered from the other base.

    >>> base_advice(1).rsplit("), ", 1)[1]
    'or read this one alone with load_libsvm(path, index_base=1)'
    """
    return (
        "make the two agree: write one file again numbered as the other (scikit-learn's "
        "dump_svmlight_file(..., zero_based=True) numbers from 0, zero_based=False from 1), or read "
        f"this one alone with load_libsvm(path, index_base={file_base})"
    )


def _parse(path: PathLike) -> tuple[sp.csr_matrix, list[tuple]]:
    """The file's rows with their indices as written (``zero_based=True``: the base is
    decided by :func:`_rebase`)."""
    from sklearn.datasets import load_svmlight_file

    with _open(path) as fh:
        try:
            X, y = load_svmlight_file(fh, multilabel=True, zero_based=True, dtype=np.float64)
        except (ValueError, TypeError, IndexError, OverflowError, EOFError, OSError) as exc:
            # scikit-learn's parser names neither the file nor the line: find the line
            problem = _first_problem(path) or f": {exc}"
            raise DatasetError(f"{path}{problem}; expected libsvm multi-label text") from None
    if X.shape[0] == 0:
        raise DatasetError(f"{path}: the file holds no rows; expected libsvm lines 'l1,l2 i:v ...'")
    return X, y


@contextmanager
def _open(path: PathLike) -> Iterator[IO[bytes]]:
    """The file's bytes, gzip or bzip2 decompressed when its magic bytes say so."""
    with open(path, "rb") as raw:
        magic = raw.read(3)
        raw.seek(0)
        if magic[:2] == b"\x1f\x8b":
            with gzip.GzipFile(fileobj=raw) as fh:
                yield fh
        elif magic == b"BZh":
            with bz2.BZ2File(raw) as fh:
                yield fh
        else:
            yield raw


def _data_lines(path: PathLike) -> Iterator[tuple[int, list[bytes]]]:
    """(line number, tokens) of every line holding data; slow, for error messages only."""
    with _open(path) as fh:
        for number, line in enumerate(fh, start=1):
            tokens = line.split(b"#", 1)[0].split()
            if tokens:
                yield number, tokens


def row_lines(path: PathLike) -> list[int]:
    return [number for number, _ in _data_lines(path)]


def _first_problem(path: PathLike) -> str | None:
    """", line N: why" for the first line scikit-learn's parser would refuse (its rules, in
    Python), ": why" for a damaged compressed file, None when no line is found wrong."""
    try:
        for number, tokens in _data_lines(path):
            problem = _line_problem(tokens)
            if problem:
                return f", line {number}: {problem}"
    except (OSError, EOFError) as exc:
        return f": the compressed stream is damaged ({exc})"
    return None


def _line_problem(tokens: list[bytes]) -> str | None:
    pairs = tokens if b":" in tokens[0] else tokens[1:]
    if pairs is not tokens:
        for label in tokens[0].split(b","):
            if not _is_float(label):
                return f"label {_text(label)!r} is not a number"
    previous = -1
    for token in pairs:
        index, colon, value = token.partition(b":")
        if index == b"qid":
            continue
        if not colon or not index.isdigit() or not _is_float(value):
            return f"expected 'index:value' pairs, found {_text(token)!r}"
        if int(index) <= previous:
            return f"feature index {int(index)} does not increase along the line"
        previous = int(index)
    return None


def _is_index_zero(token: bytes) -> bool:
    index, colon, _ = token.partition(b":")
    return bool(colon) and index.isdigit() and int(index) == 0


def _is_float(text: bytes) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _text(token: bytes) -> str:
    return token.decode("utf-8", "backslashreplace")
