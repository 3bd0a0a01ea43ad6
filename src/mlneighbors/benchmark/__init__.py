"""Benchmarks a paper can cite: every model on many datasets, resumable, into a results store.

:func:`run_benchmark` runs models x datasets x folds x metrics into a SQLite results store
(:class:`Store`), one transaction per finished cell, sharing each fold's neighbour search
between the models; run again, it computes only what is missing.  :func:`read_rows` reads the
results back as ``(dataset, model, fold, metric, value)`` rows.  The command line:
``mlneighbors benchmark run`` and ``mlneighbors benchmark report``.
"""

from . import _stats
from ._report import FoldTests, MetricReport, Report, build_report
from ._run import BenchmarkData, RunSummary, folds_of, run_benchmark
from ._stats import *  # noqa: F403 (its __all__: the statistics, listed once, there)
from ._store import Store, StoreError, read_rows, read_store

__all__ = ["BenchmarkData", "RunSummary", "Store", "StoreError", "folds_of", "read_rows", "read_store", "run_benchmark"]
# the report of a store's rows, and the statistics (Demšar 2006) on one table of values
__all__ += ["FoldTests", "MetricReport", "Report", "build_report", *_stats.__all__]
