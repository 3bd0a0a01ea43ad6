"""Who is near whom: the index protocol, exact brute force, approximate adapters, shards.

What a model asks of a neighbour search, and nothing about how it uses the answer.  Labels
appear in one place only: :class:`LabelRestrictedIndex` searches among the rows that carry
each label (class-balanced kNN), given the rows' 0/1 label matrix.

- :func:`resolve_backend` turns an estimator's ``backend=`` (a registered name or any object
  with ``build``/``query``) and ``backend_params=`` into an unbuilt index; :func:`get_index`
  makes one of a registered name (:data:`BACKENDS`);
- ``index.build(X)`` then ``index.query(Q, k) -> (dist, idx)`` (the protocol,
  :class:`NeighborIndex`): float64 true distances ascending, intp row numbers, ties broken
  by the lower row number, ``k > n`` raises, never ``-1`` padding; :class:`BaseIndex` is
  the base of the package's own indexes;
- :class:`Capabilities` is what an index declares it can do (exact, metrics, sparse input,
  prefix-safe, ...), read by :func:`get_capabilities`: code that treats backends
  differently asks this, never the class;
- :func:`check_index` tests any index against the protocol and what it declares;
- :func:`loo_kneighbors` gives the leave-one-out neighbours of the indexed rows (own row
  excluded by index, duplicates kept), in the same order; :func:`drop_self` applies that
  rule to any result;
- :class:`NeighborCache` searches once for the largest k and serves every smaller k;
- :class:`ShardedIndex` / :func:`merge_kneighbors` split the rows and merge per-shard top-k;
  :class:`DaskIndex` keeps shards of any index on the workers of a Dask cluster;
- :class:`LabelRestrictedIndex` finds the nearest rows among the members of every label,
  over any index;
- :class:`PCAWindowIndex` is the hybrid kNN's candidate search along principal components;
- :func:`check_result` and :func:`check_scale` validate a search result and the scale of
  the data.

Every model of the package gets its neighbours here and nowhere else: the estimators'
``kneighbors`` and their predictions go through the index that ``backend=`` names, so a
backend registered here reaches every model.

Registered backends (:func:`get_index`): ``"exact"`` (default, :class:`ExactIndex`),
``"auto"`` (:class:`AutoIndex`: the exact search, or an approximate index where it is
estimated faster, calibrated to a recall; :func:`crossover` says from how many rows on this
machine, whose exact costs :func:`exact_costs` measures and :func:`exact_costs_file` keeps),
``"torch"`` (:class:`TorchIndex`: the same exact search on a GPU, or the CPU, through PyTorch),
``"dask"`` (:class:`DaskIndex`: shards of any of these on the workers of a Dask cluster),
``"faiss-ivf"``, ``"faiss-hnsw"``, ``"faiss-union"`` (HNSW and IVF candidates merged: no query
left without its neighbours), ``"hnswlib"``, ``"pynndescent"``, ``"pca-window"``; the libraries behind
the optional ones (PyTorch, Dask and the approximate ones) are imported only when an index is built.

One search for the largest k
----------------------------
For the exact backend the result for k is the prefix of the result for any larger k (the tie
rule makes the order total), so a sweep over k searches once:

>>> import numpy as np
>>> from mlneighbors.neighbors import get_index, loo_kneighbors
>>> X = np.random.default_rng(0).normal(size=(50, 3))
>>> index = get_index("exact").build(X)
>>> dist, idx = loo_kneighbors(index, X, k=30)
>>> for k in range(1, 31):
...     neighbours_k = idx[:, :k]   # exactly loo_kneighbors(index, X, k)[1]
"""

from ._approximate import (
    ApproximateIndex,
    FaissHNSWIndex,
    FaissIVFIndex,
    FaissUnionIndex,
    HnswlibIndex,
    PyNNDescentIndex,
)
from ._auto import AutoIndex, Choice, crossover, exact_costs, exact_costs_file
from ._backend_registry import BACKENDS, get_index, resolve_backend
from ._cache import NeighborCache
from ._capabilities import Capabilities, get_capabilities
from ._check import check_index
from ._dask import DaskIndex
from ._distance import check_scale
from ._exact import ExactIndex
from ._labels import LabelRestrictedIndex
from ._loo import drop_self, loo_kneighbors
from ._protocol import METRICS, BaseIndex, NeighborIndex, check_result
from ._sharded import ShardedIndex, merge_kneighbors
from ._torch import TorchIndex
from ._window import PCAWindowIndex, window_starts

__all__ = [
    "BACKENDS",
    "METRICS",
    "ApproximateIndex",
    "AutoIndex",
    "BaseIndex",
    "Capabilities",
    "Choice",
    "DaskIndex",
    "ExactIndex",
    "FaissHNSWIndex",
    "FaissIVFIndex",
    "FaissUnionIndex",
    "HnswlibIndex",
    "LabelRestrictedIndex",
    "NeighborCache",
    "NeighborIndex",
    "PCAWindowIndex",
    "PyNNDescentIndex",
    "ShardedIndex",
    "TorchIndex",
    "check_index",
    "check_result",
    "check_scale",
    "crossover",
    "drop_self",
    "exact_costs",
    "exact_costs_file",
    "get_capabilities",
    "get_index",
    "loo_kneighbors",
    "merge_kneighbors",
    "resolve_backend",
    "window_starts",
]
