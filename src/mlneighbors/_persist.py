"""Saving and loading fitted models with skops: files that cannot run code.

A skops file holds the objects' state as data; loading builds only the types it is told
to trust.  :data:`TRUSTED_TYPES` lists exactly the package's own estimators and the one
type they hold that skops does not trust by itself (scipy's CSR matrix of sparse training
rows); the numpy and scikit-learn types they hold (arrays, KMeans, a Pipeline, a scaler)
skops trusts itself.  A file holding any other type fails with skops'
``UntrustedTypesFoundException``, which names the types: nothing is built or run.

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

import os
from typing import Any

__all__ = ["TRUSTED_TYPES", "load", "save"]

def _qualified(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def _held_types() -> list[str]:
    """The library types a fitted model holds that skops does not trust by itself: the
    training rows of sparse data (a CSR matrix)."""
    import scipy.sparse as sp

    return [_qualified(sp.csr_matrix)]


#: The types a saved model may hold that skops does not trust by itself: the package's own
#: estimators and the CSR matrix of sparse training rows.  Pass them to
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
]


def _skops_io() -> Any:
    try:
        import skops.io
    except ImportError as exc:
        raise ImportError("saving and loading models needs skops: pip install 'mlneighbors[persist]'") from exc
    return skops.io


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
    default (numpy, scipy, scikit-learn) are built; any other type raises skops'
    ``UntrustedTypesFoundException`` naming it.  A model written by another mlneighbors
    version loads with a :class:`~mlneighbors.exceptions.VersionWarning` naming both.

    Parameters
    ----------
    path : str or path-like

    Returns
    -------
    model : estimator
        The fitted model (its neighbour index is rebuilt on first use).

    Examples
    --------
    >>> import mlneighbors
    >>> model = mlneighbors.load("yeast.skops")  # doctest: +SKIP

    See :func:`save` for a round trip.
    """

    sio = _skops_io()
    return sio.load(path, trusted=TRUSTED_TYPES)
