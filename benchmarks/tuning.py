"""Tuning k by GridSearchCV: a NeighborCache backend against the plain grid, same results.

Usage::

    PYTHONPATH=src python benchmarks/tuning.py
        [--datasets bibtex yeast scene] [--model mlknn] [--k 30] [--folds 5]
        [--scoring f1_micro] [--metric euclidean] [--without-k-max] [--n-jobs N]
        [--repeats 1]

The search of the user guide's "Tuning and pitfalls" page, on the standard *training*
split of each dataset (the test split is never read)::

    GridSearchCV(Pipeline([scaler, MLkNN(backend=...)]), {"n_neighbors": range(1, K + 1)},
                 cv=MultilabelStratifiedKFold(5, shuffle=True, random_state=0), scoring=...)

with the command line's scaling (min-max with the training fold's ranges for dense
features, none for sparse ones) and ``refit=True`` (the chosen k is fitted once more on
the whole training split). Every fit of the grid runs two neighbour searches: the
leave-one-out neighbours of the fold's training rows (fit asks for k + 1 and drops the row
itself) and the neighbours of its held-out rows (predict). The variants, in one run:

- ``plain``: ``backend="exact"``: 2 searches per fit, 2 K folds + 1 in all (not counted:
  a counting wrapper would cost the exact index its validated fast path);
- ``cache K``: ``backend=NeighborCache(k_max=K)``, the issue's setting: the first fit of a
  fold searches K neighbours, enough for every predict but not for the leave-one-out
  search of the largest k (K + 1), which searches once more;
- ``cache K+1``: ``NeighborCache(k_max=K + 1)``: one leave-one-out and one held-out search
  per fold (2 folds + 1 in all), whatever K;
- with ``--without-k-max``: ``NeighborCache()``: GridSearchCV runs every fold of k = 1,
  then every fold of k = 2, ...: each k asks for more neighbours than the fold's cached
  result holds, so every fit searches again (the cache saves nothing);
- with ``--n-jobs N``: ``cache K+1`` under ``GridSearchCV(n_jobs=N)``, twice: with joblib's
  default backend, whose worker processes each get their own copy of the cache (the
  estimator is pickled for every task), so nothing is shared and the parent's count shows
  only the refit's search; and in threads (``joblib.parallel_backend("threading")``), which
  share the cache.

Columns: seconds of ``GridSearchCV.fit`` (best of ``--repeats``, the variants interleaved);
``fits``: K folds + 1 (the refit); ``searches``: the searches that reached the exact index
(``NeighborCache.searches``);
``speed-up``: plain seconds over ``cache K+1`` seconds; ``best k`` of every variant;
``identical``: whether every variant's ``cv_results_`` scores (each fold's score, the
means, standard deviations and ranks) equal the plain grid's bit for bit. A difference is
printed in full and makes the script exit with status 1.

``--scoring`` takes a scikit-learn scorer name that works on a label indicator
(``f1_micro``, ``f1_macro``, ``f1_samples``, ``jaccard_samples``, ...) or the name of a
metric of :data:`mlneighbors.metrics.METRICS` (``average_precision``, ``hamming_loss``,
...), made a scorer with :func:`sklearn.metrics.make_scorer` (ranking metrics read
``predict_proba``, losses are negated); a name in both is the package's metric.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from contextlib import nullcontext
from typing import Any

import numpy as np
import scipy.sparse as sp
from joblib import parallel_backend
from sklearn.metrics import get_scorer, make_scorer
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import Pipeline

from mlneighbors import BRkNN, DMLkNN, LAMLkNN, LPkNN, MLkNN, load_dataset
from mlneighbors.metrics import METRICS
from mlneighbors.model_selection import MultilabelStratifiedKFold, make_scaler
from mlneighbors.neighbors import NeighborCache

MODELS = {
    "mlknn": lambda **kw: MLkNN(**kw),
    "brknn": lambda **kw: BRkNN(**kw),
    "brknn-a": lambda **kw: BRkNN(extension="a", **kw),
    "lpknn": lambda **kw: LPkNN(**kw),
    "dmlknn": lambda **kw: DMLkNN(**kw),
    "lamlknn": lambda **kw: LAMLkNN(random_state=0, **kw),
}

SCORE_KEYS = ("split", "mean_test", "std_test", "rank_test")


def scorer(name: str) -> Any:
    """A scorer for ``name``: the package's metric of that name, else scikit-learn's scorer."""
    if name in METRICS:
        metric = METRICS[name]
        if metric.needs_propensities:
            raise SystemExit(f"--scoring {name}: a propensity-scored metric needs Y_train; choose another")
        return make_scorer(metric.func, greater_is_better=metric.greater_is_better,
                           response_method="predict_proba" if metric.kind == "ranking" else "predict")
    try:
        return get_scorer(name)
    except ValueError:
        raise SystemExit(f"--scoring {name}: not a metric of mlneighbors.metrics nor a scikit-learn scorer") from None


def search(model: str, backend: Any, metric: str, k: int, sparse: bool, cv: Any, scoring: Any,
           n_jobs: int | None) -> GridSearchCV:
    scaler = make_scaler("none" if sparse else "minmax", sparse=sparse)
    steps = ([("scale", scaler)] if scaler is not None else []) + [
        ("model", MODELS[model](metric=metric, backend=backend))]
    return GridSearchCV(Pipeline(steps), {"model__n_neighbors": range(1, k + 1)}, cv=cv, scoring=scoring,
                        n_jobs=n_jobs)


def differences(plain: dict, other: dict) -> list[str]:
    """The ``cv_results_`` score entries that are not bit-identical, with the largest difference."""
    out = []
    for key in plain:
        if not key.startswith(SCORE_KEYS):
            continue
        a, b = np.asarray(plain[key]), np.asarray(other[key])
        if not np.array_equal(a, b, equal_nan=True):
            out.append(f"{key}: max |difference| {np.nanmax(np.abs(a.astype(float) - b.astype(float))):.3g}")
    return out


def run_dataset(name: str, args: argparse.Namespace) -> tuple[list[str], bool]:
    data = load_dataset(name, "train")
    X, Y = data.X, np.asarray(data.Y.toarray() if sp.issparse(data.Y) else data.Y)
    sparse = sp.issparse(X)
    cv = MultilabelStratifiedKFold(args.folds, shuffle=True, random_state=0)
    scoring = scorer(args.scoring)
    K = args.k
    variants: dict[str, Any] = {
        f"cache {K + 1}": (lambda: NeighborCache(metric=args.metric, k_max=K + 1), None),
        f"cache {K}": (lambda: NeighborCache(metric=args.metric, k_max=K), None),
        "plain": (lambda: "exact", None),
    }
    if args.without_k_max:
        variants["cache, no k_max"] = (lambda: NeighborCache(metric=args.metric), None)
    if args.n_jobs:
        for how in ("processes", "threads"):
            variants[f"cache {K + 1}, n_jobs={args.n_jobs} {how}"] = (
                lambda: NeighborCache(metric=args.metric, k_max=K + 1), args.n_jobs)
    best = dict.fromkeys(variants, np.inf)
    outcome: dict[str, tuple[int | None, int, dict]] = {}
    for _ in range(args.repeats):
        for label, (make_backend, n_jobs) in variants.items():
            backend = make_backend()
            grid = search(args.model, backend, args.metric, K, sparse, cv, scoring, n_jobs)
            # joblib's default backend runs GridSearchCV(n_jobs=N) in worker processes
            parallel = parallel_backend("threading") if label.endswith("threads") else nullcontext()
            with warnings.catch_warnings(), parallel:
                warnings.simplefilter("ignore")  # labels absent from a fold: LabelWarning at every fit
                t0 = time.perf_counter()
                grid.fit(X, Y)
                seconds = time.perf_counter() - t0
            best[label] = min(best[label], seconds)
            outcome[label] = (getattr(backend, "searches", None), grid.best_params_["model__n_neighbors"],
                              grid.cv_results_)
            print(f"  {name:8s} {label:22s} {seconds:8.2f} s", file=sys.stderr, flush=True)
    plain = outcome["plain"][2]
    ok = True
    identical = []
    for label, (_, _, results) in outcome.items():
        diff = differences(plain, results)
        if diff:
            ok = False
            print(f"{name}, {label}: cv_results_ differ from the plain grid's:\n  " + "\n  ".join(diff),
                  file=sys.stderr)
        identical.append(not diff)
    ks = sorted({k for _, k, _ in outcome.values()})
    searches = {label: s for label, (s, _, _) in outcome.items()}
    n_fits = args.folds * K + 1
    row = [f"{name} ({X.shape[0]} x {X.shape[1]}{', sparse' if sparse else ''})", str(n_fits)]
    row += [f"{best[label]:.1f}" + (f" ({searches[label]})" if searches[label] is not None else "")
            for label in variants]
    row += [f"{best['plain'] / best[f'cache {K + 1}']:.1f}x", ", ".join(map(str, ks)),
            "yes" if all(identical) else "NO"]
    return row, ok


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=["bibtex", "yeast", "scene"])
    parser.add_argument("--model", choices=sorted(MODELS), default="mlknn")
    parser.add_argument("--k", type=int, default=30, help="the grid is k = 1..K (default 30)")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--scoring", default="f1_micro")
    parser.add_argument("--metric", choices=["euclidean", "cosine"], default="euclidean")
    parser.add_argument("--n-jobs", type=int, default=None, metavar="N",
                        help="also time the cached search with GridSearchCV(n_jobs=N)")
    parser.add_argument("--without-k-max", action="store_true",
                        help="also time NeighborCache() without k_max (the grid runs k upwards)")
    parser.add_argument("--repeats", type=int, default=1)
    args = parser.parse_args()

    K = args.k
    labels = [f"cache k_max={K + 1}", f"cache k_max={K}", "plain"]
    if args.without_k_max:
        labels.append("cache, no k_max")
    if args.n_jobs:
        labels += [f"cache k_max={K + 1}, n_jobs={args.n_jobs} {how}" for how in ("processes", "threads")]
    seconds = [f"{lab} s" + ("" if lab == "plain" else " (searches)") for lab in labels]
    header = ["dataset (training split)", "fits", *seconds, f"speed-up (plain / k_max={K + 1})", "best k", "identical"]
    rows, ok = [], True
    for name in args.datasets:
        row, same = run_dataset(name, args)
        rows.append(row)
        ok &= same
    print(f"\n{args.model}, k = 1..{K}, {args.folds}-fold MultilabelStratifiedKFold, scoring={args.scoring}, "
          f"metric={args.metric}; seconds of GridSearchCV.fit, best of {args.repeats}\n")
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join("---" for _ in header) + "|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
