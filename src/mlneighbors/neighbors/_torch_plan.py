"""The torch index's plan: how much of a device's memory it takes, and how it cuts the work.

The search itself (``_torch``) asks this module, and nothing else, how wide a row of the GEMM
is, whether the index stays on the device or streams through it in shards, how many rows a
block of queries has, how many candidates ``topk`` takes, which integer keys hold the exact
squared distances, and whether sparse queries are densified.  Everything here is arithmetic on
numbers (sizes, the budget, the free memory the search read from the device), without torch,
so it is tested on its own.

Memory
------
The budget is ``memory_budget`` MiB when it is given; else, on a GPU, 90 % of the free device
memory (``torch.cuda.mem_get_info`` plus what torch's cache holds) plus what the index already
occupies there; on the CPU, unlimited for the index and the package's ``working_memory`` for
the temporaries of a query.  The index is stored once on the device when it takes at most half
of the budget, else it is cut into shards of that size.  A block of queries is as many rows as
the temporaries that are left hold (the proxy block and its keys, ``ENTRY_BYTES`` per entry of
the GEMM's precision, the query rows, the candidates), and fewer than 2**31 entries (kernels
index with 32-bit integers).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from .._config import working_memory_bytes
from ._protocol import resolve_n_jobs

__all__ = ["DevicePlan", "candidates", "choose_strategy", "key_dtype", "padded_width"]

MiB = 2**20
#: the GEMM's inner dimension is padded to a multiple of this many columns (aligned rows)
PAD = 8
#: at most this many entries in one proxy block (kernels indexed with 32-bit integers)
MAX_BLOCK_ELEMENTS = 2**31 - 1
#: the index may take this share of the device budget; the blocks of queries the rest
INDEX_SHARE = 0.5
#: share of the free device memory taken when no memory_budget is given
FREE_SHARE = 0.9
#: bytes of device temporaries per float32 proxy entry (the block, the keys, topk's work)
ENTRY_BYTES = 16
#: host threads that finish blocks while the device computes the next ones
HOST_WORKERS = 4
#: candidates beyond k taken by topk (at least): room for near-ties at the k-th distance
EXTRA_CANDIDATES = 16
#: cost model for sparse data (nanoseconds per proxy entry): the GEMM on densified rows per
#: column of the padded inner dimension; torch's sparse CSR product per entry and per stored
#: query value; measured with benchmarks/gpu.py on a CPU ("cpu") and a GPU ("cuda"): the
#: machines and the timings are in the neighbour-search guide
COST: dict[str, dict[str, float] | None] = {
    "cuda": {"gemm": 4.0e-5, "sparse_entry": 3.2e-3, "sparse_value": 4.1e-4},
    "cpu": {"gemm": 0.04, "sparse_entry": 6.0, "sparse_value": 0.3},
}


def padded_width(n_features: int, extra: int) -> int:
    """Columns of a row of the GEMM: the features, ``2 * extra`` more (euclidean: the squared
    norm and a 1), padded to a multiple of :data:`PAD` (exact zeros change no sum).

    Examples
    --------
    >>> from mlneighbors.neighbors._torch_plan import padded_width
    >>> padded_width(7, 1), padded_width(8, 0)
    (16, 8)
    """
    return -(-(n_features + 2 * extra) // PAD) * PAD


def candidates(k: int, n: int) -> int:
    """The candidates ``topk`` takes for k neighbours among ``n`` rows: ``k`` and at least
    :data:`EXTRA_CANDIDATES` more (half of k for a large k), at most ``n``.

    Examples
    --------
    >>> from mlneighbors.neighbors._torch_plan import candidates
    >>> candidates(10, 1000), candidates(100, 1000), candidates(10, 20)
    (26, 150, 20)
    """
    return min(n, k + max(EXTRA_CANDIDATES, k // 2))


def key_dtype(top: float, n: int) -> str:
    """The integer type of the keys ``dist2 * n + row`` (squared distances at most ``top``):
    ``"int32"`` while the largest key fits, else ``"int64"``.

    Examples
    --------
    >>> from mlneighbors.neighbors._torch_plan import key_dtype
    >>> key_dtype(100.0, 1000), key_dtype(5e6, 1000)
    ('int32', 'int64')
    """
    return "int32" if (top + 1) * n < 2**31 - 1 else "int64"


def choose_strategy(X: Any, sparse_strategy: str, device: str, width: int) -> str:
    """``"dense"`` (queries densified for the GEMM) or ``"sparse"`` (torch's CSR product).

    Dense rows are dense; ``"densify"`` and ``"sparse"`` are obeyed; ``"auto"`` compares the
    cost model of the device kind (:data:`COST`, stored values per row of ``X`` as the
    estimate of a query's) and densifies where the model is not measured (None).

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> from mlneighbors.neighbors._torch_plan import choose_strategy
    >>> X = sp.random(100, 5000, density=0.001, format="csr", random_state=0)
    >>> choose_strategy(X, "auto", "cpu", 5008), choose_strategy(X, "auto", "cuda:0", 5008)
    ('sparse', 'sparse')
    """
    if not sp.issparse(X) or sparse_strategy == "densify":
        return "dense"
    if sparse_strategy == "sparse":
        return "sparse"
    cost = COST["cuda" if device.startswith("cuda") else "cpu"]
    if cost is None:
        return "dense"
    values = X.nnz / X.shape[0] + 1  # stored values per query row (estimated from X), + norm
    t_sparse = cost["sparse_entry"] + cost["sparse_value"] * values
    return "sparse" if t_sparse < cost["gemm"] * width else "dense"


@dataclass(frozen=True)
class DevicePlan:
    """The memory plan of one index on one device.

    Parameters
    ----------
    n_rows : int
        Indexed rows.
    width : int
        Columns of a row of the GEMM (:func:`padded_width`).
    dtype : numpy dtype
        The GEMM's precision (float32, or float64 where the proxy model needs it).
    device : str
        ``"cpu"`` or ``"cuda:N"``.
    memory_budget : float or None
        MiB for the index and the temporaries together; None: the free memory of a GPU, the
        working memory on the CPU.

    Examples
    --------
    >>> import numpy as np
    >>> from mlneighbors.neighbors._torch_plan import DevicePlan
    >>> plan = DevicePlan(n_rows=157, width=16, dtype=np.dtype("float32"), device="cpu",
    ...                   memory_budget=8 / 1024)
    >>> plan.row_bytes, plan.shard_rows(free=None)  # half of 8 KiB holds 64 rows of 64 bytes
    (64, 64)
    """

    n_rows: int
    width: int
    dtype: np.dtype
    device: str
    memory_budget: float | None

    @property
    def row_bytes(self) -> int:
        """Bytes of one indexed row on the device."""
        return self.width * self.dtype.itemsize

    @property
    def entry_bytes(self) -> int:
        """Bytes of device temporaries per entry of a proxy block."""
        return ENTRY_BYTES * self.dtype.itemsize // 4

    @property
    def on_gpu(self) -> bool:
        return self.device != "cpu"

    @property
    def reads_free_memory(self) -> bool:
        """Whether the budget is the device's free memory (a GPU, no ``memory_budget``)."""
        return self.memory_budget is None and self.on_gpu

    def free_memory(self, torch: Any) -> float | None:
        """The device's free bytes, torch's cache included (``torch.cuda.mem_get_info``), or
        None where the budget does not depend on them (:attr:`reads_free_memory`)."""
        if not self.reads_free_memory:
            return None
        free, _ = torch.cuda.mem_get_info(self.device)
        return free + torch.cuda.memory_reserved(self.device) - torch.cuda.memory_allocated(self.device)

    def budget(self, free: float | None, resident_rows: int = 0) -> float:
        """Bytes for the index (when stored on the device) and the temporaries.

        ``free``: the device's free bytes, torch's cache included (read only when
        :attr:`reads_free_memory`); ``resident_rows``: indexed rows already on the device,
        which the free memory no longer counts.
        """
        if self.memory_budget is not None:
            return self.memory_budget * MiB
        if not self.on_gpu:
            return math.inf
        return FREE_SHARE * free + self.row_bytes * resident_rows

    def shard_rows(self, free: float | None) -> int:
        """Rows of the index on the device at once: all of them when they take at most
        :data:`INDEX_SHARE` of the budget (stored once), else shards of that size."""
        budget = self.budget(free)
        fits = self.n_rows if budget == math.inf else int(INDEX_SHARE * budget // self.row_bytes)
        return min(self.n_rows, max(1, fits))

    def temporary_bytes(self, free: float | None, resident_rows: int, shard_rows: int) -> float:
        """Bytes left for the temporaries of a query while ``shard_rows`` rows are on the
        device (``resident_rows`` of them stored there for good)."""
        if self.memory_budget is None and not self.on_gpu:
            return working_memory_bytes()
        budget = self.budget(free, resident_rows)
        if self.memory_budget is None:  # the free memory: a streamed shard is already out of it
            return budget - self.row_bytes * resident_rows
        return budget - self.row_bytes * shard_rows

    def query_rows(self, n_queries: int, shard_rows: int, take: int, temporary: float) -> int:
        """Rows of a block of queries against a shard of ``shard_rows`` rows, ``take``
        candidates each: the proxy block, two query rows and the candidates per row."""
        per_row = self.entry_bytes * shard_rows + 2 * self.row_bytes + 32 * take
        return int(max(1, min(n_queries, temporary // per_row, MAX_BLOCK_ELEMENTS // shard_rows)))

    def rescan_rows(self, n_rows: int, shard_rows: int, temporary: float) -> int:
        """Rows of a block of queries searched again (a whole proxy row each)."""
        return int(max(1, min(n_rows, MAX_BLOCK_ELEMENTS // shard_rows, temporary // (self.entry_bytes * shard_rows))))

    def host_workers(self) -> int:
        """Host threads finishing blocks: one on the CPU (torch's threads take the cores)."""
        return min(HOST_WORKERS, resolve_n_jobs(None)) if self.on_gpu else 1

    @staticmethod
    def upload_rows(n_features: int) -> int:
        """Indexed rows converted on the host per copy to the device (16 bytes a value)."""
        return max(1, working_memory_bytes() // (16 * max(n_features, 1)))
