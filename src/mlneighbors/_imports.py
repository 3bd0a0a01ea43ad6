"""Importing skops without the array libraries it does not need (torch, dask, cupy).

``import skops.io`` lists scikit-learn's estimators (``sklearn.utils.all_estimators``), which
walks scikit-learn's packages with :func:`pkgutil.walk_packages`; the walk imports every
package it meets, the vendored array-API adapters ``sklearn.externals.array_api_compat.torch``,
``.dask`` and ``.cupy`` included (``all_estimators`` skips ``externals`` only after the walk
has imported them), and those import torch and dask when they are installed: about 3 s of
a 4.5 s ``mlneighbors predict`` on a small file.  No estimator lives there, so while skops
is imported those three adapters are refused (the walk passes over a package that fails to
import); they are imported as usual afterwards if an array of theirs ever reaches
scikit-learn.
"""

from __future__ import annotations

import importlib
import importlib.abc
import sys
import threading
from typing import Any

__all__ = ["import_skops_io"]

#: the adapters that import a heavy array library and hold no estimator
_ADAPTERS = tuple(f"sklearn.externals.array_api_compat.{name}" for name in ("torch", "dask", "cupy"))

_lock = threading.Lock()


class _Refuse(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> None:
        if fullname in _ADAPTERS:
            raise ModuleNotFoundError(f"{fullname} is not imported while skops lists the estimators", name=fullname)
        return None


def import_skops_io() -> Any:
    """``skops.io``, imported without torch, dask or cupy (see the module's text)."""
    if "skops.io" in sys.modules:
        return sys.modules["skops.io"]
    with _lock:
        finder = _Refuse()
        sys.meta_path.insert(0, finder)
        try:
            return importlib.import_module("skops.io")
        finally:
            sys.meta_path.remove(finder)
