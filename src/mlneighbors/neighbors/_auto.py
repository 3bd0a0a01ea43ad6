"""``backend="auto"``: the exact search where it is cheaper, an approximate index beyond.

A model's ``fit`` is a leave-one-out search over its n training rows.  The exact engine does
n^2 d work; an HNSW graph is built and searched in about n log n d (somewhat more at a fixed
recall: the calibrated search breadth grows with n).  ``choose_backend``
compares the two by cost models: the approximate ones fitted by this package's benchmark
(``benchmarks/scale.py --tune crossover``; the measurements and the machine are in the
neighbour-search guide), the exact one with its two costs measured on the machine that runs
(``exact_costs``, cached), and picks:

- ``"exact"`` for a metric the approximate libraries do not search (manhattan), for sparse
  rows (CSR with less than ``SPARSE_DENSITY`` of its cells stored: text, where the exact
  engine's sparse and integer paths win and the libraries would densify), and wherever its
  estimated time is lower;
- else the installed backend of ``APPROXIMATE`` with the lowest estimate, calibrated to
  ``recall``: ``"faiss-union"``, the one search measured without a tail (no query losing
  most of its neighbours) on clustered embeddings as on the label mixture; faiss HNSW alone
  and hnswlib are faster but lose some of the queries there (see the neighbour-search guide),
  so ``"auto"`` does not pick them (issue 29; their cost models stay for comparison).  A library that is installed but
  fails to import (a wheel built for another CPU, a missing shared library) counts as absent:
  the exact search, with the import's error in the reason.

The union's model was fitted on one machine; where the exact search is not faster at half of
it, its fit is timed once on this machine (``approximate_factor``: a probe of 8,192 rows,
cached) and the model scaled by what was measured: the union's speed against the exact
engine's differs between CPUs by several times.

The estimate of the exact search (``exact_seconds``) also tells the command line when an
exact fit will take long.  Since the exact costs are this machine's, so is the crossover:
:func:`crossover` (and ``mlneighbors crossover``) says where it lies here, :func:`exact_costs`
and :func:`exact_costs_file` what it is computed from.
"""

from __future__ import annotations

import importlib.util
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp

from ._backend_registry import BACKENDS, get_index
from ._capabilities import METRICS, Capabilities, get_capabilities
from ._exact import sparse_product_ns
from ._loo import loo_kneighbors
from ._protocol import BaseIndex, _search, answers_sets, check_positive_int, check_recall, resolve_n_jobs
from ._proxy import column_nonzeros
from ._select import (
    group_minima,
    group_survivors,
    kth_upper_bound,
    round_up,
    sort_entries,
    survivor_limit,
    survivors,
)
from ._threads import blas_single_thread

__all__ = ["APPROXIMATE", "AutoIndex", "Choice", "choose_backend", "crossover", "exact_costs", "exact_costs_file",
           "exact_seconds", "approximate_seconds", "approximate_factor", "approximate_costs_file"]

#: the approximate backends "auto" may pick, with the module each needs: only those whose
#: tail is bounded (no query that loses most of its neighbours on clustered embeddings, where
#: faiss-hnsw, hnswlib and faiss-ivf lose 1-4 % of them: benchmarks/tail.py, issue 29)
APPROXIMATE: tuple[tuple[str, str], ...] = (("faiss-union", "faiss"),)
#: CSR rows storing less than this share of their cells are sparse text: searched exactly
SPARSE_DENSITY = 0.1
#: metrics the approximate backends of ``APPROXIMATE`` search
APPROXIMATE_METRICS = ("euclidean", "cosine")

# cost model of the exact leave-one-out search (nanoseconds per core): per multiply-add of the
# float32 proxy GEMM, and per proxy entry (selection and masking passes over the block).  None:
# measured on the machine that runs (``exact_costs``); a number overrides the measurement
# (benchmarks/scale.py --tune crossover fits both to whole searches; the tests force a choice)
_NS_EXACT_MAC: float | None = None
_NS_EXACT_ENTRY: float | None = None
#: the two as fitted by benchmarks/scale.py --tune crossover on the machine where faiss-union's
#: model was fitted: the docs' crossover is computed with them (the machine and the fits of
#: others: the neighbour-search guide)
FITTED_EXACT_COSTS = (0.01727, 1.32)
#: the shape of the measurement: one block of the engine (queries x indexed rows x features)
_PROBE_BLOCK = (1024, 8192, 128)
#: part of the cache's key: a new engine (2: the selection by group minima) measures afresh
_PROBE_VERSION = 2
_exact_costs: tuple[float, float] | None = None
#: dense rows read to estimate their column counts (the sparse product's cost), at most
_COUNT_SAMPLE = 4096
# cost models of an approximate fit with the backend's default build parameters (build,
# recall calibration, leave-one-out search of every row at recall 0.95): seconds =
# n^power (per_feature d + per_row) / threads * 1e-9; fitted to the same measurements
_NS_APPROX: dict[str, tuple[float, float, float]] = {
    "faiss-union": (1.30, 32.29, 4242.0),
    "faiss-hnsw": (1.09, 191.7, 86290.0),
    "hnswlib": (1.30, 32.58, 7751.0),
}
# how many times its cost model "faiss-union"'s fit takes on this machine (``approximate_factor``):
# None: measured here (a probe, cached); a number overrides it (the tests pin the model's own, 1)
_APPROX_FACTOR: float | None = None
_approx_factor: float | None = None
_probe_failed = False  # this process's probe failed: the model as fitted, not probed again here
#: the probe of the union's cost: a fit's build and leave-one-out search on these many rows of
#: that many features (a label mixture: rows that are noisy means of 3 of 64 prototypes)
_UNION_PROBE = (8192, 32)
#: the least factor the rule assumes before it measures: where the exact search is faster than
#: the union's model times this, it is picked without probing the union
_FACTOR_FLOOR = 0.5


def exact_seconds(n_queries: int, n_indexed: int, n_features: int, *, n_threads: int | None = None,
                  X: Any = None) -> float:
    """Estimated seconds of an exact search of ``n_queries`` rows among ``n_indexed`` rows.

    The exact engine computes one proxy value per (query, indexed row) pair: a float32 GEMM of
    ``n_features + 1`` multiply-adds per value on dense rows, then passes over the values to
    select the candidates.  Where ``X`` is given, the engine's own choice between the GEMM and
    scipy's sparse product (CSR rows, or dense rows that are mostly zeros) is estimated with
    its cost model (``ExactIndex``; dense rows: the column counts of at most 4,096 of them).

    Parameters
    ----------
    n_queries, n_indexed, n_features : int
    n_threads : int, default=None
        Threads of the search (None: every CPU).
    X : array-like or CSR, default=None
        The indexed rows, when known: sparse rows (CSR, or dense rows mostly zeros) use the
        sparse cost model.

    Returns
    -------
    seconds : float

    Examples
    --------
    >>> from mlneighbors.neighbors._auto import exact_seconds
    >>> exact_seconds(10**6, 10**6, 128, n_threads=2) > 600  # a leave-one-out fit at 10^6 rows
    True
    """
    threads = resolve_n_jobs(n_threads)
    ns_mac, ns_entry = exact_costs()
    per_entry = ns_mac * (n_features + 1) / threads
    sparse_ns = None
    if sp.issparse(X):
        sparse_ns = sparse_product_ns(column_nonzeros(X, 1), X.shape[0])
    elif isinstance(X, np.ndarray) and X.ndim == 2 and len(X):
        # dense rows that are mostly zeros take the sparse product too: the counts of a sample
        sample = X[:: max(1, len(X) // _COUNT_SAMPLE)]
        step = max(1, (1 << 19) // max(1, X.shape[1]))  # masks of 512 KiB, whatever the width
        sparse_ns = sparse_product_ns(column_nonzeros(sample, step), len(X), len(X) / len(sample))
    if sparse_ns is not None:  # the engine's workers run their products at once (scipy releases the GIL)
        per_entry = min(per_entry, sparse_ns / threads)
    per_entry += ns_entry / threads
    return float(n_queries) * float(n_indexed) * per_entry * 1e-9


def exact_costs() -> tuple[float, float]:
    """The exact engine's two costs on this machine, in nanoseconds per core: a multiply-add of
    the float32 proxy GEMM, and a proxy entry's selection passes.

    ``backend="auto"`` estimates an exact leave-one-out search of n rows of d features at
    ``n^2 (mac (d + 1) + entry) / threads`` nanoseconds with them (dense rows), and compares
    that with an approximate index's cost model: they place its :func:`crossover`.

    Measured (about 0.1 s, ``measure_exact_costs``) and kept for the process and in the
    per-user cache (:func:`exact_costs_file`), keyed by the CPU, the
    number of CPUs, NumPy and its BLAS: the GEMM's speed differs by 2x between CPUs (AVX2,
    AVX-512) and the selection's by as much, so constants fitted on one machine misplace the
    crossover on another.  The first ``COST_MEASUREMENTS`` (3) processes each measure and add
    theirs; the fastest of those kept counts (a measurement taken while the machine is busy
    reads the GEMM slower than it is).  A number set in
    ``_NS_EXACT_MAC`` or ``_NS_EXACT_ENTRY`` overrides the measurement.

    Returns
    -------
    mac : float
        Nanoseconds per core of one multiply-add of the float32 GEMM.
    entry : float
        Nanoseconds per core of the selection passes over one (query, row) entry.

    See Also
    --------
    crossover : where these costs place the switch of ``backend="auto"``.
    exact_costs_file : the cache they are kept in.

    Examples
    --------
    >>> from mlneighbors.neighbors import exact_costs
    >>> mac, entry = exact_costs()
    >>> 0 < mac < 1 and 0 < entry < 100
    True
    """
    global _exact_costs
    if _exact_costs is None:
        _exact_costs = _cached_costs()
    mac, entry = _exact_costs
    return (mac if _NS_EXACT_MAC is None else _NS_EXACT_MAC, entry if _NS_EXACT_ENTRY is None else _NS_EXACT_ENTRY)


def measure_exact_costs(*, repeats: int = 3) -> tuple[float, float]:
    """Measure :func:`exact_costs` here: one block of the engine (1,024 queries x 8,192 rows x
    129 columns, float32, the BLAS on one thread as in the engine's workers), the GEMM and then
    the selection passes over its output (the group minima, the k-th bound, the survivors), the fastest
    of ``repeats``.  At 10^5 x 128 on 2 cores the model with these costs said 18.0 s for a
    leave-one-out search that took 18.3 s.

    Examples
    --------
    >>> from mlneighbors.neighbors._auto import measure_exact_costs
    >>> mac, entry = measure_exact_costs(repeats=1)
    >>> mac > 0 and entry > 0
    True
    """
    rows, n, d = _PROBE_BLOCK
    rng = np.random.default_rng(0)
    Q = rng.standard_normal((rows, d + 1), dtype=np.float32)
    X = rng.standard_normal((n, d + 1), dtype=np.float32)
    P = np.empty((rows, n), dtype=np.float32)
    mask = np.empty((rows, n), dtype=bool)
    gemm, select = np.inf, np.inf
    with blas_single_thread():
        for _ in range(repeats):
            start = time.perf_counter()
            np.matmul(Q, X.T, out=P)
            middle = time.perf_counter()
            mins = group_minima(P, 11)
            thr = round_up(kth_upper_bound(P, 11, mins), P.dtype)
            found = group_survivors(P, 11, mins, thr, limit=survivor_limit(P))
            if found is None:  # as the engine: the mask
                survivors(np.less_equal(P, thr[:, None], out=mask), P)
            else:
                sort_entries(*found, n)
            gemm = min(gemm, middle - start)
            select = min(select, time.perf_counter() - middle)
    return gemm / (rows * n * (d + 1)) * 1e9, select / (rows * n) * 1e9


def _machine_key() -> str:
    """What the costs depend on: the CPU, how many, NumPy and its BLAS."""
    import os
    import platform

    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            lines = fh.read().splitlines()
        names = [line.split(":", 1)[1].strip() for line in lines if line.startswith("model name")]
        flags = next((line for line in lines if line.startswith("flags")), "")
        cpu = names[0] if names else cpu
        cpu += " avx512" if "avx512f" in flags else ""
    except OSError:
        pass
    blas = ""
    try:
        from numpy import __config__ as config

        info = config.CONFIG.get("Build Dependencies", {}).get("blas", {})
        blas = f"{info.get('name', '')} {info.get('version', '')}"
    except AttributeError:  # numpy < 1.26 has no CONFIG
        pass
    # the kernels the BLAS picked at run time (OpenBLAS: "Haswell" AVX2, "SkylakeX" AVX-512...;
    # it picks by CPU model, or as OPENBLAS_CORETYPE says): on one CPU they differ by 1.6x.
    # NumPy's own BLAS where its file is known (a wheel's numpy.libs): the GEMM is NumPy's, and
    # the key must not change as other libraries load theirs (faiss's OpenBLAS: "Haswell/Zen")
    try:
        from threadpoolctl import threadpool_info

        libs = [lib for lib in threadpool_info() if lib.get("user_api") == "blas"]
        home = os.path.dirname(np.__file__)  # .../numpy, a prefix of .../numpy.libs too
        own = [lib for lib in libs if str(lib.get("filepath") or "").startswith(home)]
        kernels = sorted({str(lib.get("architecture")) for lib in own or libs})
        blas += f" {'/'.join(kernels)}" if kernels else ""
    except Exception:  # the key only loses a detail
        pass
    return f"{cpu} | {os.cpu_count()} cpus | numpy {np.__version__} | {blas} | probe {_PROBE_VERSION}"


#: processes that measure the exact costs (each once) before the cache's fastest is taken as it is
COST_MEASUREMENTS = 3


def _stored_costs(entry: Any) -> list[tuple[float, float]]:
    """The plausible measurements of one cache entry: a list of ``[mac, entry]`` pairs (or one
    pair, as files before the list held); anything else in it is passed over."""
    pairs = [entry] if isinstance(entry, list) and len(entry) == 2 and not isinstance(entry[0], list) else entry
    kept = []
    for pair in pairs if isinstance(pairs, list) else []:
        try:
            mac, per_entry = (float(x) for x in pair)
        except (TypeError, ValueError):
            continue
        if 0 < mac < 1 and 0 < per_entry < 100:
            kept.append((mac, per_entry))
    return kept


def exact_costs_file() -> Path:
    """The per-user cache of :func:`exact_costs`: ``$XDG_CACHE_HOME/mlneighbors/exact_costs.json``,
    ``~/.cache/mlneighbors/exact_costs.json`` without ``XDG_CACHE_HOME``.

    A JSON object: for each machine (its CPU, number of CPUs, NumPy version and BLAS kernels),
    the list of its measurements ``[mac, entry]``, of which :func:`exact_costs` takes the
    fastest.  Deleting the file makes the next processes measure afresh (after a BLAS or CPU
    change the key changes anyway).

    Returns
    -------
    path : pathlib.Path
        It does not exist before the first measurement, nor where it cannot be written (the
        costs are then measured in every process).

    Examples
    --------
    >>> from mlneighbors.neighbors import exact_costs_file
    >>> exact_costs_file().name
    'exact_costs.json'
    """
    import os

    home = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(home) / "mlneighbors" / "exact_costs.json"


def _cached_measurements(path: Path, key: str, measure: Any, valid: Any) -> list:
    """The measurements of ``key`` kept in the JSON cache ``path`` (those ``valid`` keeps), with
    one more taken by ``measure()`` and added there while fewer than :data:`COST_MEASUREMENTS`
    are kept (a cache that cannot be read or written is measured around, never an error)."""
    import json
    import os

    try:
        stored = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        stored = {}
    stored = stored if isinstance(stored, dict) else {}
    measured = valid(stored.get(key))
    if len(measured) < COST_MEASUREMENTS:
        measured.append(measure())
        try:  # another environment's measurements (other NumPy, other BLAS) stay beside these
            stored[key] = [list(m) if isinstance(m, tuple) else m for m in measured]
            path.parent.mkdir(parents=True, exist_ok=True)
            part = path.with_name(f"{path.name}.{os.getpid()}.part")
            part.write_text(json.dumps(stored, indent=1), encoding="utf-8")
            os.replace(part, path)  # whole or not at all, also with processes measuring at once
        except OSError:
            pass
    return measured


def _cached_costs() -> tuple[float, float]:
    """The costs from the per-user cache when it holds :data:`COST_MEASUREMENTS` of this
    machine's, else measured and added there; the fastest of them."""
    measured = _cached_measurements(exact_costs_file(), _machine_key(), measure_exact_costs, _stored_costs)
    return min(mac for mac, _ in measured), min(entry for _, entry in measured)


#: rows of the sample an exact fit's time is measured on (``measured_exact_seconds``): about
#: 0.2 s at d = 128 on 2 cores, large enough that the per-block overheads of a small search do
#: not dominate (at 4,000 rows the extrapolation was 1.3-5x too high, at 10,000 within 0.8-1.0x)
PROBE_ROWS = 10_000
#: an estimate of the exact fit above this many seconds is checked by a timed sample
#: (:meth:`AutoIndex.exact_seconds`): below it a misestimate costs little
_MEASURE_FROM_SECONDS = 20


def measured_exact_seconds(X: Any, *, k: int = 10, n_threads: int | None = None, sample: int = PROBE_ROWS,
                           random_state: int = 0) -> float:
    """Seconds of an exact leave-one-out search of every row of ``X``, measured on this machine
    as it is now: the search of a seeded sample of ``sample`` rows among themselves, timed
    twice (the faster counts: the first pays for warming up), scaled by ``(n / sample)^2``.

    Unlike :func:`exact_seconds`, whose constants were fitted on one machine, this follows the
    CPU it runs on and the load beside it, for about two searches of ``sample`` rows.

    Parameters
    ----------
    X : array-like or CSR of shape (n_samples, n_features)
    k : int, default=10
    n_threads : int, default=None
        Threads of the search (None: every CPU).
    sample : int, default=PROBE_ROWS
    random_state : int, default=0

    Returns
    -------
    seconds : float

    Examples
    --------
    >>> import numpy as np
    >>> from mlneighbors.neighbors._auto import measured_exact_seconds
    >>> X = np.random.default_rng(0).normal(size=(2_000, 16))
    >>> measured_exact_seconds(X, sample=500) > 0
    True
    """
    n = X.shape[0]
    rows = np.sort(np.random.default_rng(random_state).choice(n, size=min(sample, n), replace=False))
    part = X[rows] if sp.issparse(X) else np.asarray(X[rows], dtype=np.float64)
    m = part.shape[0]
    if m < 2:
        return 0.0
    index = get_index("exact", n_jobs=n_threads)
    times = []
    for _ in range(2):
        start = time.perf_counter()
        # every row named: the plain search, as at the size estimated (the symmetric
        # leave-one-out, half the products, needs them kept in memory: small n only)
        loo_kneighbors(index.build(part), part, min(k, m - 1), rows=np.arange(m))
        times.append(time.perf_counter() - start)
    return min(times) * (n / m) ** 2


def approximate_seconds(n_samples: int, n_features: int, *, backend: str = APPROXIMATE[0][0],
                        n_threads: int | None = None, factor: float | None = None) -> float:
    """Estimated seconds of an approximate fit with ``backend``'s default build parameters:
    its build, the calibration to recall 0.95 and the leave-one-out search of every row.

    The cost model was fitted on one machine; ``"faiss-union"``'s is multiplied by this
    machine's :func:`approximate_factor` (``factor``, where given, instead: the rule asks first
    with the least factor it assumes, and measures only where that would pick the union).

    Examples
    --------
    >>> from mlneighbors.neighbors._auto import approximate_seconds, exact_seconds
    >>> approximate_seconds(10**6, 128, n_threads=2) < exact_seconds(10**6, 10**6, 128, n_threads=2)
    True
    """
    if factor is None:
        factor = approximate_factor() if backend == "faiss-union" else 1.0
    return _model_seconds(n_samples, n_features, backend, n_threads) * factor


def _model_seconds(n_samples: int, n_features: int, backend: str, n_threads: int | None) -> float:
    """``backend``'s cost model as fitted (``_NS_APPROX``), in seconds on ``n_threads``."""
    threads = resolve_n_jobs(n_threads)
    power, per_feature, per_row = _NS_APPROX[backend]
    return float(n_samples) ** power * (per_feature * n_features + per_row) / threads * 1e-9


def approximate_costs_file() -> Path:
    """The per-user cache of :func:`approximate_factor`, beside :func:`exact_costs_file`:
    ``approximate_costs.json``, for each machine (its key, with faiss's version) the factors
    measured, of which the least counts.

    Examples
    --------
    >>> from mlneighbors.neighbors._auto import approximate_costs_file
    >>> approximate_costs_file().name
    'approximate_costs.json'
    """
    return exact_costs_file().with_name("approximate_costs.json")


def approximate_factor() -> float:
    """How many times the cost model of ``"faiss-union"``'s fit (fitted on the benchmark's
    machine) its fit takes on this machine: measured by :func:`measure_approximate_factor`
    (about 1-2 s), kept for the process and in :func:`approximate_costs_file` as the exact costs
    are (the first three processes measure, the least counts).  1.0 where faiss does not
    import (the rule then runs the exact search anyway) or the probe fails.

    The union's speed against the exact engine's differs between CPUs: on a 2-core AMD EPYC of
    the Zen 3 generation (AVX2) its fit took 3.7-4.1 times the model at 2 x 10^5 and 10^6 x 128
    rows while the exact search ran at the model's speed, so that ``"auto"`` picked the union
    from 30,000 rows where it was slower than exact up to about 2 x 10^5.

    Returns
    -------
    factor : float

    Examples
    --------
    >>> from mlneighbors.neighbors._auto import approximate_factor
    >>> approximate_factor() > 0
    True
    """
    global _approx_factor, _probe_failed
    if _APPROX_FACTOR is not None:
        return _APPROX_FACTOR
    if _approx_factor is None:
        if _probe_failed or _import_error("faiss") is not None:
            return 1.0
        import faiss

        key = f"{_machine_key()} | faiss {faiss.__version__} | union probe {_UNION_PROBE}"
        try:
            _approx_factor = min(_cached_measurements(approximate_costs_file(), key, measure_approximate_factor,
                                                      _stored_factors))
        except Exception:  # whatever a probe that fails raises: the model as fitted, measured again next process
            _probe_failed = True
            return 1.0
    return _approx_factor


def _stored_factors(entry: Any) -> list[float]:
    """The plausible factors of one cache entry of :func:`approximate_costs_file` (a list of
    numbers); anything else in it is passed over."""
    if not isinstance(entry, list):
        return []
    return [float(x) for x in entry if isinstance(x, (int, float)) and 0 < x < 1e3]


def measure_approximate_factor() -> float:
    """Measure :func:`approximate_factor` here: ``"faiss-union"`` built on 8,192 seeded rows of
    32 features (a label mixture: each row the mean of 3 of 64 Gaussian prototypes plus noise of
    scale 0.5) and searched leave-one-out for 15 neighbours (a live ML-kNN's fit), timed, over
    its cost model's seconds for that fit on this machine's threads.  On the Zen 3 machine of
    :func:`approximate_factor` this probe read 3.65 where fits of 2 x 10^5 and 10^6 rows of 128
    features took 4.1 and 3.7 times the model.

    Examples
    --------
    >>> from mlneighbors.neighbors._auto import measure_approximate_factor
    >>> measure_approximate_factor() > 0  # doctest: +SKIP
    True
    """
    n, d = _UNION_PROBE
    rng = np.random.default_rng(0)
    prototypes = rng.standard_normal((64, d))
    X = prototypes[rng.integers(0, 64, size=(n, 3))].mean(axis=1) + 0.5 * rng.standard_normal((n, d))
    X = X.astype(np.float32)
    start = time.perf_counter()
    index = get_index("faiss-union", recall_k=10).build(X)
    loo_kneighbors(index, X, 15)
    return (time.perf_counter() - start) / _model_seconds(n, d, "faiss-union", None)


def crossover(n_features: int, *, n_threads: int | None = None) -> int:
    """The number of dense rows from which ``backend="auto"`` picks an approximate index, on
    this machine.

    ``"auto"`` compares an estimate of the exact leave-one-out search, n^2 work whose two
    costs are measured on the machine that runs (:func:`exact_costs`), with the cost model of
    ``"faiss-union"``'s fit (n^1.3, fitted on the benchmark's machine, scaled by this machine's
    ``approximate_factor`` where faiss imports): below the crossover it
    runs the exact search, from it on the approximate index (with faiss installed; without
    it, the exact search, and the command line says what to install).  The crossover differs
    between machines as their exact costs and the union's factor do (the measured ones: see
    the neighbour-search guide).

    Parameters
    ----------
    n_features : int
        Features of the rows (dense: sparse rows with less than 10 % of their cells stored are
        always searched exactly).
    n_threads : int, default=None
        Threads of the search (None: every CPU).  Both estimates are divided by it alike: the
        crossover does not depend on it.

    Returns
    -------
    n_samples : int
        The smallest number of training rows that ``"auto"`` sends to the approximate index;
        every smaller one it searches exactly.  Found by bisection on the rule itself: its
        estimates grow with n, the exact search's (n^2) faster than the approximate one's,
        so it switches once.

    See Also
    --------
    exact_costs : this machine's costs of the exact search, which place the crossover.
    AutoIndex : the index of ``backend="auto"``.

    Notes
    -----
    ``mlneighbors crossover`` prints the costs, their cache file and the crossover at a few
    numbers of features.

    Examples
    --------
    >>> from mlneighbors.neighbors import crossover
    >>> n = crossover(128)  # this machine's: tens of thousands of rows on a recent x86 CPU
    >>> 1_000 < n < 10_000_000
    True
    """
    check_positive_int(n_features, "n_features")

    def exact(n: int) -> bool:
        return choose_backend(n, n_features, n_threads=n_threads, installed=lambda module: True).backend == "exact"

    low, high = 1, 2
    while exact(high):
        low, high = high, high * 2
    while high - low > 1:  # exact(low), not exact(high)
        middle = (low + high) // 2
        low, high = (middle, high) if exact(middle) else (low, middle)
    return high


@dataclass(frozen=True)
class Choice:
    """What ``"auto"`` picks for some rows, and why (:meth:`AutoIndex.choose`).

    Parameters
    ----------
    backend : str
        The registered backend picked.
    reason : str
        Why, in one line for the user (what ``AutoIndex.reason_`` says after a build).
    exact_seconds : float or None, default=None
        The estimated seconds of the exact leave-one-out search of a fit on these rows, on
        this machine; None where the rule did not need it (a metric or sparse rows that only
        the exact search takes).
    approximate_unavailable : bool, default=False
        The exact search is picked although an approximate index is estimated faster,
        because no approximate library can be used here (not installed, or failing to
        import): what the command line tells the user, with what to install.

    Examples
    --------
    >>> import numpy as np
    >>> from mlneighbors.neighbors import AutoIndex
    >>> choice = AutoIndex().choose(np.zeros((100, 8)))
    >>> choice.backend, choice.approximate_unavailable
    ('exact', False)
    """

    backend: str
    reason: str
    exact_seconds: float | None = None
    approximate_unavailable: bool = False


def _installed(module: str) -> bool:
    """Whether ``module`` is found (not imported: the rule asks this of every library, on every fit)."""
    return importlib.util.find_spec(module) is not None


def _import_error(module: str) -> str | None:
    """None where ``module`` imports; else the error its import raised, as ``"Type: message"``.

    A library that is found may still fail to import (a wheel built for a CPU it does not
    support, a missing shared library), and a broken wheel raises what it raises (ImportError,
    OSError, RuntimeError...): ``"auto"`` imports the library it is about to pick, so that it
    runs the exact search and says why instead of failing at build.
    """
    try:
        importlib.import_module(module)
    except Exception as exc:  # whatever a broken library raises: the exact search answers instead
        return f"{type(exc).__name__}: {' '.join(str(exc).split())}"
    return None


def choose_backend(
    n_samples: int,
    n_features: int,
    *,
    density: float = 1.0,
    metric: str = "euclidean",
    n_threads: int | None = None,
    X: Any = None,
    installed: Any = None,
) -> Choice:
    """The backend ``"auto"`` uses for a leave-one-out fit of ``n_samples`` rows.

    Parameters
    ----------
    n_samples, n_features : int
        The training rows' shape.
    density : float, default=1.0
        Share of stored cells (1.0 for a dense array; ``X.nnz / (n * d)`` for CSR).
    metric : str, default="euclidean"
    n_threads : int, default=None
        Threads (None: every CPU).  Both estimates scale alike; it matters little.
    X : array-like or CSR, default=None
        The rows themselves, when known (sparse rows, CSR or dense mostly zeros: the exact
        engine's sparse cost).
    installed : callable, default=None
        ``installed(module) -> bool``; None: whether the module is found, and, for the one
        about to be picked, whether it imports (a library installed but failing to import is
        passed over: the exact search, with the import's error in ``choice.reason``).

    Returns
    -------
    choice : Choice
        ``choice.backend`` (a registered name) and ``choice.reason``.

    Examples
    --------
    >>> from mlneighbors.neighbors._auto import choose_backend
    >>> choose_backend(5_000, 128).backend
    'exact'
    >>> choose_backend(10**6, 128, n_threads=2, installed=lambda m: True).backend
    'faiss-union'
    >>> choose_backend(10**6, 30_000, density=0.001).reason
    'sparse rows (0.1% of cells stored): the exact search'
    """
    imports = installed is None  # the libraries' own answer: found, and importing when picked
    installed = _installed if installed is None else installed
    if metric not in APPROXIMATE_METRICS:
        return Choice("exact", f"metric={metric!r}: the exact search")
    if density < SPARSE_DENSITY:
        return Choice("exact", f"sparse rows ({density:.1%} of cells stored): the exact search")
    t_exact = exact_seconds(n_samples, n_samples, n_features, n_threads=n_threads, X=X)
    modules = dict(APPROXIMATE)
    names = [name for name, module in APPROXIMATE if installed(module)]
    # the least factor first: where even that leaves the exact search faster, the union is not probed
    estimates = {name: approximate_seconds(n_samples, n_features, backend=name, n_threads=n_threads,
                                           factor=_FACTOR_FLOOR) for name in names}
    if any(seconds < t_exact for seconds in estimates.values()):
        estimates = {name: approximate_seconds(n_samples, n_features, backend=name, n_threads=n_threads)
                     for name in names}
    failed = []
    # the fastest that imports; imported only here, past the crossover, where its build imports it anyway
    for best in sorted((name for name in estimates if estimates[name] < t_exact), key=estimates.get):
        error = _import_error(modules[best]) if imports else None
        if error is None:
            return Choice(best, f"{n_samples} x {n_features}: {best} is estimated faster than the exact search "
                                f"({estimates[best]:.3g} s against {t_exact:.3g} s)", t_exact)
        failed.append(f"{modules[best]} is installed and fails to import ({error})")
    if failed:
        return Choice("exact", f"{n_samples} x {n_features}: an approximate index would be faster, but "
                               + "; ".join(failed), t_exact, approximate_unavailable=True)
    best = min(estimates, key=estimates.get, default=None)
    if best is None and approximate_seconds(n_samples, n_features, n_threads=n_threads) < t_exact:
        modules = " nor ".join(m for _, m in APPROXIMATE)
        return Choice("exact", f"{n_samples} x {n_features}: an approximate index would be faster, but "
                               f"{modules} is not installed (pip install 'mlneighbors[faiss]')", t_exact,
                      approximate_unavailable=True)
    return Choice("exact", f"{n_samples} x {n_features}: the exact search is estimated faster"
                  + (f" ({t_exact:.3g} s against {estimates[best]:.3g} s with {best})" if best else ""), t_exact)


class AutoIndex(BaseIndex):
    """The exact search, or an approximate index where it is estimated faster (``"auto"``).

    At ``build`` it picks a backend for the rows by ``choose_backend`` (rows, features,
    density, metric; the measured crossover is in the docs' neighbour-search page, this
    machine's is :func:`crossover`'s), builds it and answers every query through it.

    Parameters
    ----------
    metric : {"euclidean", "cosine", "manhattan"}, default="euclidean"
    recall : float in (0, 1] or None, default=None
        The recall an approximate pick is calibrated to (None: 0.96, see
        ``mlneighbors.neighbors._recall.DEFAULT_RECALL``); ignored when the exact
        search is picked (its recall is 1).
    recall_k : int, default=10
        The k of that recall (the estimators set it to their ``n_neighbors``).
    random_state : int, RandomState or None, default=0
        Seed of an approximate pick (its calibration sample, its levels or k-means).
    n_jobs : int or None, default=None
        Threads, where the picked backend takes them.

    Attributes
    ----------
    backend_ : str
        The backend picked (a registered name).
    reason_ : str
        Why, in one line.
    index_ : index
        The built index of ``backend_``.
    recall_ : float
        ``index_.recall_`` for an approximate pick (see its class), 1.0 for the exact one.
    low_recall_share_ : float
        ``index_.low_recall_share_`` for an approximate pick (the share of its leave-one-out
        calibration queries whose recall@``recall_k`` is below one half), 0.0 for the exact one.
    query_recall_, query_low_recall_share_ : float
        The same for new queries (``index_``'s, NaN where it held none out), 1.0 and 0.0 for
        the exact one.

    Examples
    --------
    >>> import numpy as np
    >>> from mlneighbors.neighbors import get_index
    >>> X = np.random.default_rng(0).normal(size=(500, 8))
    >>> index = get_index("auto").build(X)
    >>> index.backend_, index.recall_, index.low_recall_share_, index.exact
    ('exact', 1.0, 0.0, True)
    """

    name: ClassVar[str] = "auto"

    def __init__(
        self,
        *,
        metric: str = "euclidean",
        recall: float | None = None,
        recall_k: int = 10,
        random_state: Any = 0,
        n_jobs: int | None = None,
    ) -> None:
        self.metric = metric
        self.recall = recall
        self.recall_k = recall_k
        self.random_state = random_state
        self.n_jobs = n_jobs

    @property
    def capabilities(self) -> Capabilities:  # type: ignore[override]
        """Exact, prefix-safe and answering neighbour sets once built on a pick that is
        (before: it may pick an approximate index); every metric, sparse rows, a ``recall``,
        float32 rows as given (they go to the picked index as they are: it keeps them or makes
        its copy), the pick's leave-one-out search and saved state (None where the pick has
        none: rebuilt on load)."""
        picked = get_capabilities(self.index_) if "index_" in self.__dict__ else Capabilities()
        return Capabilities(exact=picked.exact, metrics=METRICS, sparse=True, prefix_safe=picked.prefix_safe,
                            recall=True, float32_rows=METRICS, loo_queries=True,
                            neighbour_sets=picked.neighbour_sets, saved_state=True, adds_rows=picked.adds_rows)

    def add_rows(self, X: Any) -> None:
        """Add the rows after the indexed ones to the picked index (where it adds rows: see
        ``capabilities.adds_rows``), whose recall it measures again.

        Parameters
        ----------
        X : ndarray or CSR matrix of shape (n_samples, n_features)
            Every row now, validated: the indexed rows first, as they were, then the new ones.
        """
        self.index_.add_rows(X)
        self.n_samples_fit_ = X.shape[0]
        for name in ("recall_", "low_recall_share_"):
            if hasattr(self.index_, name):
                setattr(self, name, getattr(self.index_, name))

    def check_params(self) -> None:
        check_positive_int(self.recall_k, "recall_k")
        check_recall(self.recall)

    def choose(self, X: Any, *, installed: Any = None) -> Choice:
        """The backend that ``build(X)`` would pick, without building it.

        Parameters
        ----------
        X : array-like or CSR of shape (n_samples, n_features)
        installed : callable, default=None
            ``installed(module) -> bool``, as for ``choose_backend`` (None: whether the module
            can be imported); ``lambda module: True`` asks what it would pick with every
            approximate library installed.

        Returns
        -------
        choice : Choice
        """
        n, d = X.shape
        density = X.nnz / max(1, n * d) if sp.issparse(X) else 1.0
        return choose_backend(n, d, density=density, metric=self.metric, n_threads=self.n_jobs,
                              X=X if sp.issparse(X) else None, installed=installed)

    def exact_seconds(self, X: Any) -> float:
        """The estimated seconds of an exact leave-one-out fit on ``X`` on this machine, as it
        is now: the exact engine's cost model, and where that says more than 20 s for more than
        ``PROBE_ROWS`` rows, the search of a seeded sample of them timed here and scaled to
        ``X`` (about half a second: the model alone may be 2-3x off on another CPU or a loaded
        machine).  What the command line says before an exact fit that will take long.

        Parameters
        ----------
        X : array-like or CSR of shape (n_samples, n_features)
            The training rows of the fit (a sample of them is searched where timed).

        Returns
        -------
        seconds : float
            Wall-clock seconds with this index's ``n_jobs`` threads.

        Examples
        --------
        >>> import numpy as np
        >>> from mlneighbors.neighbors import get_index
        >>> get_index("auto").exact_seconds(np.zeros((1000, 8))) < 1  # a blink: no sample timed
        True
        """
        n, d = X.shape
        seconds = exact_seconds(n, n, d, n_threads=self.n_jobs, X=X)
        if seconds >= _MEASURE_FROM_SECONDS and n > PROBE_ROWS and hasattr(X, "__getitem__"):
            seconds = measured_exact_seconds(X, n_threads=self.n_jobs)
        return seconds

    def _inner(self, backend: str) -> BaseIndex:
        """The unbuilt index of ``backend`` with this index's settings."""
        index = get_index(backend, metric=self.metric)
        accepted = index.get_params()
        given = {"recall": self.recall, "recall_k": self.recall_k, "random_state": self.random_state,
                 "n_jobs": self.n_jobs}
        index.set_params(**{key: value for key, value in given.items() if key in accepted})
        return index

    def pick(self, X: Any) -> BaseIndex:
        """The unbuilt index that ``build(X)`` would build (with this index's settings): what
        a search that builds its own copies (BKNN's per-label indexes) uses instead of ``"auto"``.

        Parameters
        ----------
        X : array-like or CSR of shape (n_samples, n_features)

        Returns
        -------
        index : BaseIndex

        Examples
        --------
        >>> import numpy as np
        >>> from mlneighbors.neighbors import AutoIndex
        >>> AutoIndex().pick(np.zeros((100, 4))).name
        'exact'
        """
        return self._inner(self.choose(X).backend)

    def build_rows(self, X: Any) -> None:
        choice = self.choose(X)
        self.index_ = self._inner(choice.backend).build(X)
        self.backend_ = choice.backend
        self.reason_ = choice.reason
        self._describe(self.index_)

    def _describe(self, index: BaseIndex) -> None:
        """The recall attributes of the picked index (an exact pick: recall 1, no low share)."""
        self.recall_ = float(getattr(index, "recall_", 1.0))
        self.low_recall_share_ = float(getattr(index, "low_recall_share_", 0.0))
        self.query_recall_ = float(getattr(index, "query_recall_", 1.0))
        self.query_low_recall_share_ = float(getattr(index, "query_low_recall_share_", 0.0))

    def query_rows(self, Q: Any, k: int, sets: bool = False) -> tuple[np.ndarray, np.ndarray]:
        return _search(self.index_, Q, k, True, sets)

    def loo_query_rows(
        self, X: Any, rows: np.ndarray | None, m: int, sets: bool = False
    ) -> tuple[np.ndarray, np.ndarray] | None:
        if not get_capabilities(self.index_).loo_queries:
            return None
        if sets and answers_sets(self.index_):
            return self.index_.loo_query_rows(X, rows, m, sets=True)
        return self.index_.loo_query_rows(X, rows, m)

    def saved_state(self) -> dict[str, Any] | None:
        if not get_capabilities(self.index_).saved_state:
            return None  # the exact search: rebuilt on load (a float32 copy of the rows)
        return {"backend": self.backend_, "reason": self.reason_, "inner": self.index_.saved_state()}

    def restore_state(self, state: dict[str, Any], X: Any) -> None:
        backend = state.get("backend")
        if backend not in BACKENDS or backend == self.name:
            raise ValueError(f"the saved auto index is damaged: unknown backend {backend!r}")
        self.check_params()
        index = self._inner(backend)
        index.restore_state(state["inner"], X)
        self.index_ = index
        self.backend_ = backend
        self.reason_ = str(state.get("reason", ""))
        self._describe(index)
        self.n_samples_fit_, self.n_features_in_ = X.shape
