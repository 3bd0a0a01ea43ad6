"""Time and quality of multi-label stratified K-fold: ours vs iterative-stratification.

Usage::

    PYTHONPATH=src python benchmarks/stratification.py [--folds 10] [--seeds 3] [--no-synthetic]

Datasets are read directly (no dependency on ``mlneighbors.datasets``) from
``$MLNEIGHBORS_DATA`` (default ``../shared/datasets`` relative to the repository
root): corel16k001 from its ``.mat`` file, yeast and emotions from their Mulan
ARFF files, plus a 100,000 x 100 synthetic label matrix with skewed label
frequencies and a share of empty rows.

Quality measures (Sechidis et al., 2011, section 4.1), lower is better:

* LD, label distribution: mean over labels and folds of
  ``|S_j^i / (|S_j| - S_j^i) - D^i / (|D| - D^i)|`` (positive/negative ratio
  of a fold vs the whole set);
* ED, examples distribution: mean over folds of ``| |S_j| - |D| / k |``;
* FLZ: fold-label pairs with no positive example (labels that have at least
  k examples only, as the others cannot avoid it).

The reference package (``pip install iterative-stratification``) is optional;
without it only our rows are printed.
"""

from __future__ import annotations

import argparse
import gzip
import os
import re
import time
from pathlib import Path

import numpy as np
import scipy.io
from sklearn.model_selection import KFold

from mlneighbors.model_selection import MultilabelStratifiedKFold

ROOT = Path(__file__).resolve().parents[1]


def data_dir() -> Path:
    return Path(os.environ.get("MLNEIGHBORS_DATA", ROOT.parent / "shared" / "datasets"))


def load_corel16k001() -> np.ndarray:
    mat = scipy.io.loadmat(data_dir() / "corel16k001" / "Corel16k001.mat")
    return np.asarray(mat["target"].T > 0, dtype=np.int8)


def load_mulan_labels(name: str, arff: str) -> np.ndarray:
    """Label columns (the last L attributes, L from the Mulan XML) of a dense ARFF file."""
    folder = data_dir() / name
    n_labels = len(re.findall(r"<label\b", (folder / f"{name}.xml").read_text()))
    path = folder / arff
    opener = gzip.open if path.suffix == ".gz" else open
    rows = []
    in_data = False
    with opener(path, "rt") as fh:
        for line in fh:
            line = line.strip()
            if not line or line.startswith("%"):
                continue
            if in_data:
                rows.append([int(float(v)) for v in line.split(",")[-n_labels:]])
            elif line.lower().startswith("@data"):
                in_data = True
    return np.array(rows, dtype=np.int8)


def synthetic(n: int = 100_000, n_labels: int = 100, seed: int = 0) -> np.ndarray:
    rng = np.random.RandomState(seed)
    freq = np.geomspace(2e-4, 0.3, n_labels)
    return (rng.rand(n, n_labels) < freq).astype(np.int8)


def measures(Y: np.ndarray, folds: np.ndarray, k: int) -> tuple[float, float, int]:
    n = Y.shape[0]
    size = np.bincount(folds, minlength=k).astype(float)
    pos = np.zeros((k, Y.shape[1]))
    np.add.at(pos, folds, Y)
    total = Y.sum(axis=0).astype(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        fold_ratio = pos / (size[:, None] - pos)
        all_ratio = total / (n - total)
    dev = np.abs(fold_ratio - all_ratio)
    ld = float(np.nanmean(np.where(np.isfinite(dev), dev, np.nan)))
    ed = float(np.mean(np.abs(size - n / k)))
    flz = int(((pos == 0) & (total >= k)[None, :]).sum())
    return ld, ed, flz


def folds_of(splitter, Y: np.ndarray) -> np.ndarray:
    folds = np.empty(Y.shape[0], dtype=np.intp)
    for j, (_, test) in enumerate(splitter.split(np.zeros((Y.shape[0], 1)), Y)):
        folds[test] = j
    return folds


def run(name: str, Y: np.ndarray, k: int, seeds: int, reference) -> list[dict]:
    methods = {"mlneighbors": lambda s: MultilabelStratifiedKFold(k, shuffle=True, random_state=s)}
    if reference is not None:
        methods["iterstrat"] = lambda s: reference(n_splits=k, shuffle=True, random_state=s)
    methods["KFold(shuffle)"] = lambda s: KFold(k, shuffle=True, random_state=s)
    rows = []
    for method, make in methods.items():
        times, stats = [], []
        for seed in range(seeds):
            t0 = time.perf_counter()
            folds = folds_of(make(seed), Y)
            times.append(time.perf_counter() - t0)
            stats.append(measures(Y, folds, k))
        ld, ed, flz = np.mean(stats, axis=0)
        rows.append(dict(dataset=name, method=method, seconds=float(np.median(times)), LD=ld, ED=ed, FLZ=flz))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folds", type=int, default=10)
    parser.add_argument("--seeds", type=int, default=3, help="repetitions (median time, mean measures)")
    parser.add_argument("--no-synthetic", action="store_true", help="skip the 100k x 100 synthetic matrix")
    args = parser.parse_args()

    try:
        from iterstrat.ml_stratifiers import MultilabelStratifiedKFold as reference
    except ImportError:
        reference = None
        print("iterative-stratification not installed: reference rows skipped")

    datasets = [
        ("emotions", lambda: load_mulan_labels("emotions", "emotions.arff")),
        ("yeast", lambda: load_mulan_labels("yeast", "yeast.arff.gz")),
        ("corel16k001", load_corel16k001),
    ]
    if not args.no_synthetic:
        datasets.append(("synthetic-100k", synthetic))

    header = (f"{'dataset':<15} {'shape':>12} {'method':<15} {'seconds':>9} {'vs ours':>8} "
              f"{'LD':>9} {'ED':>7} {'FLZ':>6}")
    print(f"{args.folds} folds, shuffle=True, {args.seeds} seeds (median time, mean LD/ED/FLZ)")
    print(header)
    print("-" * len(header))
    for name, load in datasets:
        try:
            Y = load()
        except (OSError, FileNotFoundError) as exc:
            print(f"{name:<15} skipped: {exc}")
            continue
        shape = f"{Y.shape[0]}x{Y.shape[1]}"
        rows = run(name, Y, args.folds, args.seeds, reference)
        ours = rows[0]["seconds"]
        for row in rows:
            ratio = row["seconds"] / ours
            print(
                f"{name:<15} {shape:>12} {row['method']:<15} {row['seconds']:>9.3f} {ratio:>7.1f}x "
                f"{row['LD']:>9.5f} {row['ED']:>7.2f} {row['FLZ']:>6.1f}"
            )


if __name__ == "__main__":
    main()
