"""Saving and loading fitted models with skops: files that cannot run code.

A skops file holds the objects' state as data; loading builds only the types it is told
to trust.  :data:`TRUSTED_TYPES` lists exactly the package's own estimators (and its
:class:`~mlneighbors.Pipeline`, what ``mlneighbors fit`` saves) and the one
type they hold that skops does not trust by itself (scipy's CSR matrix of sparse training
rows); the numpy and scikit-learn types they hold (arrays, KMeans, a Pipeline, a scaler)
skops trusts itself.  :func:`load` refuses a file holding any other type with a
:class:`~mlneighbors.exceptions.ModelFileError` naming the types: nothing is built or run.
A file that is no model file (empty, a pickle, truncated, damaged...) gets the same error,
saying what is wrong.

Fitted models hold plain arrays only (no neighbour index: it is rebuilt from the training
rows on first use; no dtype objects), so plain ``skops.io.load(path,
trusted=mlneighbors.TRUSTED_TYPES)`` works too.  Pickle and joblib keep working.

>>> import numpy as np, tempfile, os
>>> import mlneighbors
>>> X = np.random.default_rng(0).normal(size=(30, 3))
>>> Y = (X > 0).astype(int)
>>> model = mlneighbors.MLkNN(3).fit(X, Y)
>>> path = os.path.join(tempfile.mkdtemp(), "model.skops")
>>> mlneighbors.save(model, path)
>>> loaded = mlneighbors.load(path)
>>> bool((loaded.predict(X) == model.predict(X)).all())
True
"""

from __future__ import annotations

import functools
import io
import json
import os
import zipfile
from typing import Any

from .exceptions import ModelFileError

__all__ = ["TRUSTED_TYPES", "load", "save"]

def _qualified(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def _held_types() -> list[str]:
    """The library types a fitted model holds that skops does not trust by itself: the
    training rows of sparse data (a CSR matrix)."""
    import scipy.sparse as sp

    return [_qualified(sp.csr_matrix)]


#: The types a saved model may hold that skops does not trust by itself: the package's own
#: estimators and Pipeline, and the CSR matrix of sparse training rows.  Pass them to
#: ``skops.io.load(trusted=...)``.
TRUSTED_TYPES: list[str] = _held_types() + [
    "mlneighbors.bknn.BKNN",
    "mlneighbors.blda.BLDA",
    "mlneighbors.brknn.BRkNN",
    "mlneighbors.dmlknn.DMLkNN",
    "mlneighbors.hybrid.HybridKNN",
    "mlneighbors.lamlknn.LAMLkNN",
    "mlneighbors.lpknn.LPkNN",
    "mlneighbors.mlknn.MLkNN",
    "mlneighbors.pipeline.Pipeline",
]


def _skops_io() -> Any:
    from ._imports import import_skops_io

    try:
        return import_skops_io()
    except ImportError as exc:
        raise ImportError("saving and loading models needs skops: pip install 'mlneighbors[persist]'") from exc


def save(model: Any, path: str | os.PathLike[str], *, include_index: bool = False) -> None:
    """Write a fitted model (or a Pipeline of them) to ``path`` as a skops file, whole or not at all.

    Parameters
    ----------
    model : estimator
    path : str or path-like
        Conventionally ending in ``.skops``.
    include_index : bool, default=False
        Also save the model's built approximate index (faiss IVF or HNSW, hnswlib, or the one
        ``"auto"`` picked) as data in the file, so that :func:`load` then ``predict`` build
        nothing (at 10^6 rows a build takes minutes).  Without it, or for the other indexes
        (the exact search, whose build is a float32 copy of the rows; torch, Dask,
        pynndescent, BKNN's per-label search), the index is rebuilt on first use.  The saved
        index is plain arrays checked by a digest at load: a damaged one is a ``ValueError``.

    Returns
    -------
    None

    Examples
    --------
    >>> import os, tempfile
    >>> import numpy as np
    >>> import mlneighbors
    >>> X, Y = np.array([[0.0], [0.1], [1.0], [1.1]]), np.array([[1, 0], [1, 0], [0, 1], [0, 1]])
    >>> model = mlneighbors.MLkNN(1).fit(X, Y)
    >>> path = os.path.join(tempfile.mkdtemp(), "model.skops")
    >>> mlneighbors.save(model, path)
    >>> mlneighbors.load(path).predict([[0.05]])
    array([[1, 0]])
    >>> fast = mlneighbors.MLkNN(1, backend="hnswlib").fit(X, Y)
    >>> mlneighbors.save(fast, path, include_index=True)  # load + predict build nothing
    """
    from ._files import atomic_path
    from .neighbors._saved import including_index

    sio = _skops_io()
    with atomic_path(path) as tmp, including_index(include_index):
        sio.dump(model, tmp)


def load(path: str | os.PathLike[str]) -> Any:
    """Read a model written by :func:`save` (or by ``skops.io.dump``).

    Only the package's own types (:data:`TRUSTED_TYPES`) and the types skops trusts by
    default (numpy, scipy, scikit-learn) are built: the file's types are listed with
    ``skops.io.get_untrusted_types`` first, and a file holding any other type is refused
    before anything of it is built.  A model written by another mlneighbors version loads
    with a :class:`~mlneighbors.exceptions.VersionWarning` naming both.

    Parameters
    ----------
    path : str or path-like

    Returns
    -------
    model : estimator
        The fitted model (its neighbour index is rebuilt on first use).  A scikit-learn
        Pipeline ending in a model of the package comes back as
        :class:`mlneighbors.Pipeline` (which has ``predict_top_k``), whichever version wrote it.

    Raises
    ------
    FileNotFoundError
        No file at ``path``.
    ~mlneighbors.exceptions.ModelFileError
        The file is not a model this can load; the message names the file and says why:
        not a model file (and what it looks like: empty, a pickle, another zip archive,
        text...), truncated, damaged, written with a newer skops file protocol, holding a
        type outside :data:`TRUSTED_TYPES` (named), or holding something that is not an
        estimator.

    Examples
    --------
    >>> import mlneighbors
    >>> model = mlneighbors.load("yeast.skops")  # doctest: +SKIP

    See :func:`save` for a round trip.
    """
    sio = _skops_io()
    from skops.io.exceptions import UntrustedTypesFoundException

    path = os.fspath(path)
    _check_skops_file(path)
    try:
        untrusted = sorted(set(sio.get_untrusted_types(file=path)) - set(TRUSTED_TYPES))
    except (MemoryError, Warning):
        raise
    except Exception as exc:  # whatever a damaged schema provokes (KeyError, TypeError, ...)
        raise _damaged(path, exc) from exc
    if untrusted:
        raise _untrusted(path, untrusted)
    try:
        model = sio.load(path, trusted=TRUSTED_TYPES)
    except UntrustedTypesFoundException as exc:  # the file changed since its types were listed
        found = exc.args[0] if exc.args and isinstance(exc.args[0], set) else {str(exc)}
        raise _untrusted(path, sorted(found)) from exc
    except (MemoryError, Warning):  # a VersionWarning made an error by a warnings filter stays itself
        raise
    except Exception as exc:
        raise _damaged(path, exc, building=True) from exc
    if not callable(getattr(model, "fit", None)):
        raise ModelFileError(f"{path} is not a model file: it is a skops file of a {type(model).__name__}, "
                             "not of a fitted model", path=path)
    from .pipeline import upgraded

    return upgraded(model)  # an older file's scikit-learn Pipeline gains predict_top_k


# -- what a file that is not a loadable skops file is -------------------------------------------


def _check_skops_file(path: str) -> None:
    """Refuse, naming the file and what it is, a file that is no skops file at all (before
    skops reads it): not a zip archive, a truncated one, a zip without ``schema.json``, a
    schema that is not JSON or that names a newer skops file protocol."""
    with open(path, "rb") as fh:  # a missing file: FileNotFoundError, naming it
        head = fh.read(_HEAD_BYTES)
        size = fh.seek(0, os.SEEK_END)
    if not zipfile.is_zipfile(path):
        if head and (head.startswith(_ZIP_MAGIC) or _ZIP_MAGIC.startswith(head)):  # cut in the first bytes too
            raise ModelFileError(
                f"{path} is truncated: it begins as a skops file (a zip archive) but its end is missing "
                f"({size} bytes); was the copy or the download cut short? Save the model again", path=path)
        raise ModelFileError(f"{path} is not a model file: {_looks_like(head, size)}", path=path)
    try:
        with zipfile.ZipFile(path) as archive:
            names = archive.namelist()
            if not names:
                raise ModelFileError(f"{path} is not a model file: it is an empty zip archive", path=path)
            if "schema.json" not in names:
                shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
                raise ModelFileError(
                    f"{path} is not a model file: it is a zip archive without the schema.json of a skops file "
                    f"(it holds {shown})", path=path)
            raw = archive.read("schema.json")
    except zipfile.BadZipFile as exc:
        raise _damaged(path, exc) from exc
    try:
        schema = json.loads(raw)
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError
        raise ModelFileError(f"{path} is damaged: its schema.json is not valid JSON ({exc})", path=path) from exc
    protocol = schema.get("protocol") if isinstance(schema, dict) else None
    if isinstance(protocol, bool) or not isinstance(protocol, int) or protocol < 0:
        raise ModelFileError(f"{path} is damaged: its schema.json gives no valid skops file protocol "
                             f"(protocol={protocol!r})", path=path)
    readable = _skops_protocol()
    if protocol > readable:
        import skops

        raise ModelFileError(
            f"{path} was written with skops file protocol {protocol}, and the installed skops "
            f"{skops.__version__} reads protocols up to {readable}: upgrade skops (pip install -U skops)",
            path=path)


#: bytes read from the head of a file to say what it is
_HEAD_BYTES = 512
_ZIP_MAGIC = b"PK\x03\x04"
#: the first bytes of formats a model file is mistaken for, and what to call them
_MAGIC = [
    (b"\x1f\x8b", "a gzip-compressed file (a compressed joblib dump?)"),
    (b"BZh", "a bzip2-compressed file (a compressed joblib dump?)"),
    (b"\xfd7zXZ\x00", "an xz-compressed file (a compressed joblib dump?)"),
    (b"\x04\x22\x4d\x18", "an lz4-compressed file (a compressed joblib dump?)"),
    (b"\x93NUMPY", "a NumPy .npy array"),
    (b"\x89HDF", "an HDF5 file"),
]


def _looks_like(head: bytes, size: int) -> str:
    """What a file that is not a zip archive looks like, from its first bytes."""
    if size == 0:
        return "it is empty (0 bytes)"
    if head[:1] == b"\x80" and head[1:2] and 2 <= head[1] <= 5:
        return ("it is a pickle (written by pickle or joblib), not a skops file; load it with pickle or "
                "joblib only if you trust where it came from, then write it with mlneighbors.save")
    for magic, name in _MAGIC:
        if head.startswith(magic):
            return f"it is {name}, not a skops file"
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError as exc:  # a character cut at the end of the head is still text
        text = head[: exc.start].decode("utf-8") if 0 < exc.start >= len(head) - 3 else ""
    if text.strip() and "\x00" not in text:
        first = next(line for line in text.splitlines() if line.strip())
        return f"it is a text file beginning {first.strip()[:40]!r}, not a skops file"
    return f"it is binary data beginning {head[:8].hex(' ')} ({size} bytes), not a skops file"


@functools.cache
def _skops_protocol() -> int:
    """The newest skops file protocol the installed skops reads: the one it writes."""
    with zipfile.ZipFile(io.BytesIO(_skops_io().dumps(0))) as archive:
        return int(json.loads(archive.read("schema.json"))["protocol"])


def _damaged(path: str, exc: BaseException, *, building: bool = False) -> ModelFileError:
    what = "it could not be rebuilt" if building else "skops cannot read it"
    detail = " ".join(str(exc).split()) or type(exc).__name__
    return ModelFileError(f"{path} is damaged: {what} ({type(exc).__name__}: {detail})", path=path)


def _untrusted(path: str, types: list[str]) -> ModelFileError:
    return ModelFileError(
        f"{path} holds {'a type' if len(types) == 1 else 'types'} outside mlneighbors.TRUSTED_TYPES and "
        f"skops' defaults: {', '.join(types)}; nothing of it was built (a file written by mlneighbors.save "
        "holds none). Only if you trust where it came from: skops.io.load(path, trusted=[...])", path=path)
