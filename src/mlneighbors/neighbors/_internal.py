"""What the rest of the package uses of the neighbour engine beyond its public names.

The wall around :mod:`mlneighbors.neighbors`: code outside it imports the public names of
``mlneighbors.neighbors`` or this module, never the engine's other private modules (a test
scans the source's imports).  So the engine's modules can be split, renamed or merged
without touching the estimators, the command line or the benchmarks; what they need is
named here, once.
"""

from __future__ import annotations

from ._auto import approximate_costs_file, approximate_factor
from ._cache import feed
from ._dask import check_dask_matrix
from ._distance import check_scale, finite_top, row_norms_sq
from ._live import entering_pairs, exact_lists, merge_lists
from ._protocol import (
    FLOAT_DTYPES,
    MissingLibraryError,
    answers_sets,
    build_index,
    check_rows,
    float_rows,
    is_dask_array,
    resolve_n_jobs,
    search,
)
from ._recall import estimate_recalls
from ._saved import export_index, including_index, is_including, pack_rows, restore_index, unpack_rows
from ._threads import blas_single_thread, each_block

__all__ = [
    "FLOAT_DTYPES",
    "approximate_costs_file",
    "approximate_factor",
    "MissingLibraryError",
    "answers_sets",
    "blas_single_thread",
    "build_index",
    "check_dask_matrix",
    "check_rows",
    "check_scale",
    "each_block",
    "entering_pairs",
    "exact_lists",
    "estimate_recalls",
    "export_index",
    "feed",
    "finite_top",
    "float_rows",
    "including_index",
    "is_dask_array",
    "is_including",
    "merge_lists",
    "pack_rows",
    "resolve_n_jobs",
    "restore_index",
    "row_norms_sq",
    "search",
    "unpack_rows",
]
