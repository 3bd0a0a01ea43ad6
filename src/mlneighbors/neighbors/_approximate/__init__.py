"""Approximate backends, a module per library: faiss (IVF-Flat, HNSW, their union), hnswlib, pynndescent.

:class:`~mlneighbors.neighbors.ApproximateIndex` (``_shared``) holds what they share: the
lazy import of the library, the re-ranking of its candidates in float64 with the tie rule of
the exact search, the brute-force repair of a row the library could not fill (never ``-1``
padding), the recall measured and calibrated at build, and saving the library's index as data.
A library's module holds its adapter only (what to build, add, search, export and import).
"""

from ._faiss import FaissHNSWIndex, FaissIVFIndex, FaissUnionIndex
from ._hnswlib import HnswlibIndex
from ._pynndescent import PyNNDescentIndex
from ._shared import ApproximateIndex

__all__ = ["ApproximateIndex", "FaissHNSWIndex", "FaissIVFIndex", "FaissUnionIndex", "HnswlibIndex", "PyNNDescentIndex"]
