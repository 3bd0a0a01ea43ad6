"""Saving and loading fitted models with skops: files that cannot run code.

A skops file holds the objects' state as data; loading builds only the types it is told
to trust.  :data:`TRUSTED_TYPES` lists exactly the package's own types a saved model may hold:
its estimators (from the registry, ``mlneighbors._registry``), its
:class:`~mlneighbors.Pipeline` (what ``mlneighbors fit`` saves), the index classes a model may
be given as ``backend=`` objects (``mlneighbors.neighbors``), and the one type they hold that
skops does not trust by itself (scipy's CSR matrix of sparse training rows); the numpy and
scikit-learn types they hold (arrays, KMeans, a Pipeline, a scaler) skops trusts itself.
:func:`load` refuses a file holding any other type with a
:class:`~mlneighbors.exceptions.ModelFileError` naming the types: nothing is built or run.  An
index object in a file must be unbuilt (its parameters only: a model saves its ``backend``
object so), so that loading one never hands a library's own serialisation to the library.
A file that is no model file (empty, a pickle, truncated, damaged...) gets the same error,
saying what is wrong.

Fitted models hold plain arrays only (no neighbour index: it is rebuilt from the training
rows on first use; no dtype objects), so plain ``skops.io.load(path,
trusted=mlneighbors.TRUSTED_TYPES)`` works too.  Pickle and joblib keep working.  What a file
cannot hold, :func:`save` refuses before writing anything: a model fitted on a dask array (its
training rows are on the cluster) and a :class:`~mlneighbors.neighbors.NeighborCache` given as
``backend`` (a store of searches shared by the models of a tuning run).

Every estimator of the package remembers the mlneighbors version that saved it
(:class:`VersionedState`).

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
import inspect
import io
import json
import os
import sys
import warnings
import zipfile
from typing import Any

import numpy as np
import scipy.sparse as sp

import mlneighbors  # the package: its __version__ is read whenever a model is saved or loaded

from ._files import atomic_path
from ._imports import import_skops_io
from ._registry import ESTIMATORS
from .exceptions import InvalidParameterError, ModelFileError, VersionWarning
from .neighbors import BACKENDS, NeighborCache, ShardedIndex
from .neighbors._internal import MissingLibraryError, including_index, is_dask_array
from .pipeline import Pipeline, upgraded

__all__ = ["TRUSTED_TYPES", "VersionedState", "load", "save"]


class VersionedState:
    """Saved models remember the mlneighbors version that wrote them (pickle, joblib, skops).

    Loading a model written by another version warns with both versions
    (:class:`~mlneighbors.exceptions.VersionWarning`); scikit-learn does the same for its own.
    """

    def __getstate__(self) -> dict:
        # a copy: object.__getstate__ (which scikit-learn's defers to) returns the live
        # __dict__ itself, and saving a model must not change it
        state = dict(super().__getstate__())
        state["_mlneighbors_version"] = mlneighbors.__version__
        return state

    def __setstate__(self, state: dict) -> None:
        saved = state.pop("_mlneighbors_version", "unknown (before 0.1.0)")
        version = mlneighbors.__version__
        if saved != version:
            warnings.warn(
                f"this {type(self).__name__} was saved by mlneighbors {saved} and is loaded by "
                f"mlneighbors {version}: it may fail or predict differently; refit it with {version}",
                VersionWarning,
                stacklevel=2,
            )
        super().__setstate__(state)


def _qualified(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def _exported_names(cls: type) -> list[str]:
    """``cls`` by the name skops gives it, and by its name in each package above its module that
    exports it: a file written before the class's module moved inside its package (the
    approximate backends' module became a package of one module per library) names it so."""
    names = [_qualified(cls)]
    parts = cls.__module__.split(".")
    for end in range(len(parts) - 1, 1, -1):
        package = sys.modules.get(".".join(parts[:end]))
        if getattr(package, cls.__qualname__, None) is cls:
            names.append(f"{package.__name__}.{cls.__qualname__}")
    return names


#: The index classes a model may hold as its ``backend`` object, by the name skops gives them:
#: every registered backend and the sharded wrapper (a NeighborCache is refused by save).
_INDEX_TYPES: dict[str, type] = {name: cls for cls in (*BACKENDS.values(), ShardedIndex)
                                 for name in _exported_names(cls)}

#: The types a saved model may hold that skops does not trust by itself: the CSR matrix of
#: sparse training rows, the package's estimators (the registry's) and Pipeline, and the index
#: classes a model may be given as ``backend=``.  Pass them to ``skops.io.load(trusted=...)``.
TRUSTED_TYPES: list[str] = [
    _qualified(sp.csr_matrix),
    *sorted([entry.path for entry in ESTIMATORS] + [_qualified(Pipeline)]),
    *sorted(_INDEX_TYPES),
]


def _skops_io() -> Any:
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
        index is plain data (bytes and arrays) checked by a digest at load: a damaged one is a
        ``ValueError``.  Beside it the training rows are stored once, as raw bytes that loading
        reads without a copy (a faiss HNSW index is saved without its own float32 copy of
        them, made again at load; ``"faiss-union"``'s graph with its 8-bit codes of them).

    Returns
    -------
    None

    Raises
    ------
    ValueError
        The model cannot be held by a file (nothing is written): it was fitted on a dask array
        (its training rows are on the cluster), or a parameter is a
        :class:`~mlneighbors.neighbors.NeighborCache`.

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
    if not isinstance(include_index, (bool, np.bool_)):
        raise InvalidParameterError("The 'include_index' parameter of save must be True or False; "
                                    f"got {include_index!r}.")
    sio = _skops_io()
    _check_savable(model)
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
    schema = _check_skops_file(path)
    try:
        untrusted = sorted(set(sio.get_untrusted_types(file=path)) - set(TRUSTED_TYPES))
    except (MemoryError, Warning):
        raise
    except Exception as exc:  # whatever a damaged schema provokes (KeyError, TypeError, ...)
        raise _damaged(path, exc) from exc
    if untrusted:
        raise _untrusted(path, untrusted)
    _check_index_objects(path, schema)
    try:
        model = sio.load(path, trusted=TRUSTED_TYPES)
    except UntrustedTypesFoundException as exc:  # the file changed since its types were listed
        found = exc.args[0] if exc.args and isinstance(exc.args[0], set) else {str(exc)}
        raise _untrusted(path, sorted(found)) from exc
    except (MemoryError, Warning):  # a VersionWarning made an error by a warnings filter stays itself
        raise
    except MissingLibraryError as exc:  # the file is intact: its saved index needs a library not installed here
        raise MissingLibraryError(f"{path} holds a saved index that needs a library not installed here: {exc} "
                                  "(or save the model without include_index)", name=exc.name) from exc
    except Exception as exc:
        raise _damaged(path, exc, building=True) from exc
    if not callable(getattr(model, "fit", None)):
        raise ModelFileError(f"{path} is not a model file: it is a skops file of a {type(model).__name__}, "
                             "not of a fitted model", path=path)
    return upgraded(model)  # an older file's scikit-learn Pipeline gains predict_top_k


# -- what a file cannot hold --------------------------------------------------------------------


def _parts(model: Any) -> list[tuple[str, Any]]:
    """``model`` and every object among its parameters (a Pipeline's steps and theirs), by the
    name ``set_params`` knows them (``""``: the model itself)."""
    get_params = getattr(model, "get_params", None)
    params = get_params(deep=True) if callable(get_params) else {}
    return [("", model), *((key, value) for key, value in params.items() if not isinstance(value, str))]


def _check_savable(model: Any) -> None:
    """Refuse, before anything is written, a model that a skops file cannot hold."""
    for key, part in _parts(model):
        if isinstance(part, NeighborCache):
            raise ValueError(
                f"cannot save this {type(model).__name__}: its parameter {key!r} is a NeighborCache, a store of "
                "neighbour searches shared by the models of a tuning run, which a model file does not hold; set "
                f"{key!r} to the exact index the cache wraps (set_params({key}={part.name!r})) and save again: "
                "the predictions are the same")
        if is_dask_array(getattr(part, "_fit_X", None)):
            what = type(part).__name__ + (f" (parameter {key!r})" if key else "")
            raise ValueError(
                f"cannot save {what}: it was fitted on a dask array, whose rows stay on the cluster, and a "
                "model file holds the training rows; fit it on rows in memory (X.compute()) to save it")


def _check_index_objects(path: str, schema: Any) -> None:
    """Refuse a file holding an index object with more than its parameters (a built index);
    ``schema`` is the file's, as :func:`_check_skops_file` read it."""
    for node in _nodes(schema):
        cls = _INDEX_TYPES.get(f"{node.get('__module__')}.{node.get('__class__')}")
        if cls is None:
            continue
        content = node.get("content")
        state = content.get("content") if isinstance(content, dict) else None
        params = set(inspect.signature(cls.__init__).parameters) - {"self"}
        extra = sorted(set(state) - params) if isinstance(state, dict) else ["(not a dict of parameters)"]
        if extra:
            raise ModelFileError(
                f"{path} holds a {cls.__name__} with more than its parameters ({', '.join(map(str, extra[:5]))}): "
                "an index object in a model file is saved unbuilt, and nothing of this file was built",
                path=path)


def _nodes(value: Any) -> Any:
    """Every dict of a skops schema, depth first."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            yield item
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


# -- what a file that is not a loadable skops file is -------------------------------------------


def _check_skops_file(path: str) -> Any:
    """Refuse, naming the file and what it is, a file that is no skops file at all (before
    skops reads it): not a zip archive, a truncated one, a zip without ``schema.json``, a
    schema that is not JSON or that names a newer skops file protocol; the parsed schema
    otherwise."""
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
    return schema


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
