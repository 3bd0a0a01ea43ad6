"""Where the approximate path's time goes: ``MLkNN(10, backend="auto")`` fit and predict, by part (issue 51).

Usage::

    PYTHONPATH=src python benchmarks/profile_auto.py [--n 200000] [--d 128] [--queries 10000]
        [--law mixture|clusters|hard] [--backend auto] [--seed 0]

One fit and one ``predict`` of ``--queries`` new rows under ``cProfile``, on a law of ``benchmarks/scale.py``;
printed: wall seconds of the fit and the prediction, then the cumulative seconds of the parts (a part's time
includes the parts it calls; the library calls of faiss and hnswlib are C functions, timed whole):

- the build (``build_rows``: the library's index, the exact answers of the calibration samples and their
  searches), of which the graph's and the IVF's ``add`` and the IVF's k-means;
- the fit's leave-one-out search after the build (``loo_query_rows``) and ``predict``'s (``query_rows``);
- across all of them, the library's searches (``search_library``, of which the graph's) and the exact
  re-ranking of their candidates (``_rank``);
- the model's fit after the build (``MLkNN._fit_labels``: its leave-one-out search and count tables).

Then the library's C calls that took more than 5 % each.  The shares say which direction pays (issue 51's
list); the timings are one run on this machine: name it.
"""

from __future__ import annotations

import argparse
import cProfile
import importlib.util
import pstats
import time
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent

#: (label, the function's name, the end of its file's path): the approximate base's own methods, not the
#: wrappers of the same name around them (``"auto"``'s), which would count their time twice
_SHARED = "_approximate/_shared.py"
_FAISS = "_approximate/_faiss.py"
PARTS = [
    ("build (whole: the library, the calibration's exact answers and searches)", "build_rows", _SHARED),
    ("  graph and IVF: add", "add_library", _FAISS),
    ("  k-means of the IVF", "_trained_ivf", _FAISS),
    ("leave-one-out search of the fit (after the build)", "loo_query_rows", _SHARED),
    ("new queries (predict)", "query_rows", _SHARED),
    ("every search of the library (calibration, fit, predict)", "search_library", _FAISS),
    ("  of which the graph's", "_search_graph", _FAISS),
    ("every exact re-ranking of candidates", "_rank", _SHARED),
    ("the model's fit after the build (its leave-one-out search included)", "_fit_labels", "mlknn.py"),
]


def scale_module():
    spec = importlib.util.spec_from_file_location("scale_benchmark", HERE / "scale.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=200_000)
    p.add_argument("--d", type=int, default=128)
    p.add_argument("--queries", type=int, default=10_000)
    p.add_argument("--law", default="mixture")
    p.add_argument("--backend", default="auto")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()

    from mlneighbors import MLkNN

    X, Y, Q, _ = scale_module().dataset(args.n, args.d, args.queries, args.seed, args.law)
    model = MLkNN(10, backend=args.backend)
    profile = cProfile.Profile()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.perf_counter()
        profile.enable()
        model.fit(X, Y)
        t1 = time.perf_counter()
        model.predict(Q)
        profile.disable()
        t2 = time.perf_counter()
    stats = pstats.Stats(profile).stats
    print(f"{args.law} {args.n} x {args.d}, backend {args.backend} -> {getattr(model, 'backend_', '?')}: "
          f"fit {t1 - t0:.1f} s, predict of {args.queries} rows {t2 - t1:.1f} s (under cProfile)")
    total = t2 - t0
    for label, function, where in PARTS:
        seconds = sum(entry[3] for (file, _, name), entry in stats.items()
                      if name == function and file.replace("\\", "/").endswith(where))
        print(f"  {label:72s} {seconds:8.1f} s  {seconds / total:6.1%}")
    library = sorted(((entry[3], name) for (file, _, name), entry in stats.items()
                      if file == "~" and entry[3] > 0.05 * total), reverse=True)
    for seconds, name in library[:8]:
        print(f"  C call {name[:60]:60s} {seconds:8.1f} s  {seconds / total:6.1%}")


if __name__ == "__main__":
    main()
