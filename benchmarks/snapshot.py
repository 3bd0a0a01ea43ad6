"""Save every model's outputs on the shared datasets, or compare them with a saved snapshot.

A refactor must keep every prediction bit-identical: save the outputs before the change, then
compare after it::

    python benchmarks/snapshot.py save before.npz
    # ... the change ...
    python benchmarks/snapshot.py compare before.npz

Every model of the package (the three BRkNN variants, HybridKNN with and without its PCA
search, BLDA alone and in front of BKNN, two models with the cosine metric, BKNN through a
user-given index object) is fitted on the standard train split of emotions, yeast, enron and
scene and queried on the test split; ``predict``, ``predict_proba``, ``decision_function``
(where the model has it) and BLDA's ``transform`` are stored.  ``compare`` reports, per array,
whether it is bit-identical, else the largest absolute difference and the number of cells that
differ, and exits 1 when any array differs (``--atol`` accepts differences up to a tolerance
for arrays named with ``--tolerant``).  The data come from ``load_dataset`` (the data
directory of the package: ``$MLNEIGHBORS_DATA``, else ``../shared/datasets``).
"""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

DATASETS = ("emotions", "yeast", "enron", "scene")


def models() -> dict[str, Callable[[], Any]]:
    from sklearn.pipeline import Pipeline

    from mlneighbors import BKNN, BLDA, BRkNN, DMLkNN, HybridKNN, LAMLkNN, LPkNN, MLkNN
    from mlneighbors.neighbors import get_index

    return {
        "mlknn": lambda: MLkNN(10),
        "mlknn-cosine": lambda: MLkNN(10, metric="cosine"),
        "brknn": lambda: BRkNN(10),
        "brknn-a": lambda: BRkNN(10, extension="a"),
        "brknn-b": lambda: BRkNN(10, extension="b"),
        "lpknn": lambda: LPkNN(10),
        "dmlknn": lambda: DMLkNN(10),
        "lamlknn": lambda: LAMLkNN(10, random_state=0),
        "bknn": lambda: BKNN(),
        "bknn-cosine": lambda: BKNN(metric="cosine"),
        "bknn-index-object": lambda: BKNN(backend=get_index("exact")),
        "blda-bknn": lambda: Pipeline([("blda", BLDA()), ("bknn", BKNN())]),
        "hybrid": lambda: HybridKNN(10),
        "hybrid-exact": lambda: _hybrid_regression(HybridKNN),
    }


def _hybrid_regression(cls: Any) -> Any:
    """The paper's "Regression" model: exact cosine neighbours in the full feature space
    (``exact_search=True`` before the one neighbour path, ``backend="exact"`` after it)."""
    if "exact_search" in cls().get_params():
        return cls(10, exact_search=True)
    return cls(10, backend="exact")


def outputs(datasets: tuple[str, ...] = DATASETS) -> dict[str, np.ndarray]:
    from mlneighbors import BLDA
    from mlneighbors.datasets import load_dataset

    out: dict[str, np.ndarray] = {}
    for name in datasets:
        train, test = load_dataset(name, "train"), load_dataset(name, "test")
        Y = np.asarray(train.Y)
        out[f"{name}/blda/transform"] = BLDA().fit(train.X, Y).transform(test.X)
        for model_name, make in models().items():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model = make().fit(train.X, Y)
                key = f"{name}/{model_name}"
                out[f"{key}/predict"] = np.asarray(model.predict(test.X))
                out[f"{key}/predict_proba"] = np.asarray(model.predict_proba(test.X))
                if hasattr(model, "decision_function"):
                    out[f"{key}/decision_function"] = np.asarray(model.decision_function(test.X))
            print(f"{key}: done", file=sys.stderr)
    return out


def compare(saved: dict[str, np.ndarray], now: dict[str, np.ndarray], atol: float,
            tolerant: list[str]) -> int:
    failures = 0
    for key in sorted(set(saved) | set(now)):
        if key not in now or key not in saved:
            print(f"MISSING  {key} ({'now' if key not in now else 'saved'})")
            failures += 1
            continue
        a, b = saved[key], now[key]
        if a.shape != b.shape:
            print(f"SHAPE    {key}: {a.shape} -> {b.shape}")
            failures += 1
            continue
        same = np.array_equal(a, b, equal_nan=True)
        if same:
            print(f"same     {key}")
            continue
        diff = np.abs(a.astype(np.float64) - b.astype(np.float64))
        diff = np.where(np.isnan(diff) & (np.isnan(a) == np.isnan(b)), 0.0, diff)
        worst = float(np.nanmax(diff)) if diff.size else 0.0
        cells = int(np.count_nonzero(diff))
        ok = any(t in key for t in tolerant) and worst <= atol
        print(f"{'close   ' if ok else 'DIFFERS '} {key}: max |diff| {worst:.3g} in {cells} cells")
        failures += not ok
    print(f"{failures} array(s) differ" if failures else "every array is bit-identical (or within tolerance)")
    return 1 if failures else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("action", choices=("save", "compare"))
    parser.add_argument("path")
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS))
    parser.add_argument("--atol", type=float, default=0.0)
    parser.add_argument("--tolerant", nargs="*", default=[], help="substrings of keys allowed --atol")
    args = parser.parse_args(argv)
    now = outputs(tuple(args.datasets))
    if args.action == "save":
        np.savez_compressed(args.path, **now)
        print(f"saved {len(now)} arrays to {args.path}")
        return 0
    with np.load(args.path) as saved:
        return compare(dict(saved), now, args.atol, args.tolerant)


if __name__ == "__main__":
    sys.exit(main())
