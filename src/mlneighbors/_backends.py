"""The registered neighbour backends by name: data, importing nothing.

:data:`mlneighbors.neighbors.BACKENDS` (name -> index class, each class imported on first
look-up) is made from this table, and the command line lists the names from it: building
the parser (``mlneighbors --help``) must not import scikit-learn, which importing
:mod:`mlneighbors.neighbors` does.

>>> from mlneighbors._backends import BACKEND_PATHS
>>> list(BACKEND_PATHS)[:2], BACKEND_PATHS["exact"]
(['exact', 'auto'], 'mlneighbors.neighbors._exact:ExactIndex')
"""

from __future__ import annotations

__all__ = ["BACKEND_PATHS"]

#: registered backend name -> ``"module:Class"`` of its index ("exact" is the default everywhere)
BACKEND_PATHS: dict[str, str] = {
    "exact": "mlneighbors.neighbors._exact:ExactIndex",
    "auto": "mlneighbors.neighbors._auto:AutoIndex",
    "torch": "mlneighbors.neighbors._torch:TorchIndex",
    "faiss-ivf": "mlneighbors.neighbors._approximate._faiss:FaissIVFIndex",
    "faiss-hnsw": "mlneighbors.neighbors._approximate._faiss:FaissHNSWIndex",
    "faiss-union": "mlneighbors.neighbors._approximate._faiss:FaissUnionIndex",
    "hnswlib": "mlneighbors.neighbors._approximate._hnswlib:HnswlibIndex",
    "pynndescent": "mlneighbors.neighbors._approximate._pynndescent:PyNNDescentIndex",
    "pca-window": "mlneighbors.neighbors._window:PCAWindowIndex",
    "dask": "mlneighbors.neighbors._dask:DaskIndex",
}
