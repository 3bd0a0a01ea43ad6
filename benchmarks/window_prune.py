"""HybridKNN's PCA-window search: candidates ruled out by one product first, against every
candidate's own dot product (the search before), in one run, with the answers compared.

Usage::

    MLNEIGHBORS_DATA=../shared/datasets PYTHONPATH=src python benchmarks/window_prune.py
        [--datasets scene yeast enron medical emotions corel5k] [--repeats 3]

For each dataset (standard train/test split, min-max scaled as the command line does),
HybridKNN with its defaults is fitted, then ``predict_proba`` and ``predict`` of the test rows
are timed (best of ``--repeats``, the two ways interleaved): ``checked first`` is the search as
it is, ``every candidate`` the same search with the check switched off (each candidate's dot
product computed, as before it).  ``equal`` says whether both give bit-identical scores.
Prints a Markdown table and the CPU.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--datasets", nargs="+", default=["scene", "yeast", "enron", "medical", "emotions",
                                                          "corel5k"])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    from live import cpu_name  # benchmarks/live.py, beside this script
    from sklearn.preprocessing import MinMaxScaler

    import mlneighbors.neighbors._window as window
    from mlneighbors import HybridKNN
    from mlneighbors.datasets import load_dataset

    warnings.simplefilter("ignore")
    checked = window._open_candidates
    print(f"CPU: {cpu_name()}; numpy {np.__version__}")
    print()
    print("| dataset | checked first s | every candidate s | speed-up | equal |")
    print("|---|---|---|---|---|")
    for name in args.datasets:
        train, test = load_dataset(name, split="train"), load_dataset(name, split="test")
        scaler = MinMaxScaler().fit(train.X.toarray() if hasattr(train.X, "toarray") else train.X)
        X = scaler.transform(train.X.toarray() if hasattr(train.X, "toarray") else train.X)
        Q = scaler.transform(test.X.toarray() if hasattr(test.X, "toarray") else test.X)
        model = HybridKNN().fit(X, train.Y)
        times = {"checked": [], "every": []}
        scores = {}
        for _ in range(args.repeats):
            for way in ("checked", "every"):
                window._open_candidates = checked if way == "checked" else (lambda seen, Qn, Zn, k: seen)
                t = time.perf_counter()
                scores[way] = model.predict_proba(Q)
                model.predict(Q)
                times[way].append(time.perf_counter() - t)
        window._open_candidates = checked
        a, b = min(times["checked"]), min(times["every"])
        print(f"| {name} | {a:.3f} | {b:.3f} | {b / a:.2f}x | {np.array_equal(scores['checked'], scores['every'])} |",
              flush=True)


if __name__ == "__main__":
    main()
