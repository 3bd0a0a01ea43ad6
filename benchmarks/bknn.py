"""BKNN's per-label neighbour search (masking vs one index per label), and BKNN's figures.

Usage::

    python benchmarks/bknn.py [--repeats 3] [--datasets emotions yeast enron corel5k]
    python benchmarks/bknn.py --figures [DATASET ...]    # every shared dataset by default
    python benchmarks/bknn.py --figures [DATASET ...] --before OLD/src

``--figures`` prints, for BKNN with its defaults on the standard split of every shared
dataset (10-fold CV where none ships), Hamming loss, macro F1, the ranking average
precision of ``predict_proba`` and, beside it, that of the prevalence ranking (every row
ranks labels by their training frequency), the mean predicted and true set sizes, and
"over half": the labels predicted on more than half of the test rows although fewer than
half of the training rows carry them (summed over the folds).  It uses only the public API,
so the same command run on an older checkout (``PYTHONPATH=<old>/src``) gives the figures
before a change; ``--before OLD/src`` does both in one run (the old code in a subprocess
with that ``PYTHONPATH``, the figures of the code imported here after it) and prints a
Markdown table "before -> after" with the change in macro F1, marking the sets that lose
more than 0.01 of it.

For each dataset (standard train/test split, b = 5) both designs compute the
leave-one-out per-label squared distances of the training rows and the per-label
squared distances of the test rows, side by side in one run; the best of
``--repeats`` interleaved wall-clock times is printed, with the largest difference between the
two results (they must agree up to rounding).  ``--quality`` adds the report's
figures: Hamming loss, macro precision and label-based MAP on the test split of
BLDA+BKNN (the paper's method) and BKNN alone.

- ``masked``: ``LabelRestrictedIndex(ExactIndex())`` (one GEMM per query block, the
  members of every label taken out of it by size class, ``np.partition``);
- ``per-label``: ``LabelRestrictedIndex(ShardedIndex(ExactIndex(), 1))`` (an exact index
  that is not the exact engine: one copy per label, queried for b + 1 neighbours during fit).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from mlneighbors import load_dataset


def run(index, X_train, X_test) -> tuple[np.ndarray, np.ndarray]:
    n = X_train.shape[0]
    train = np.concatenate(
        [index.sq_distances(X_train[rows], exclude=np.arange(n)[rows]) for rows in index.row_blocks(n)]
    )
    test = np.concatenate([index.sq_distances(X_test[rows]) for rows in index.row_blocks(X_test.shape[0])])
    return train, test


def interleaved(fns, repeats: int) -> tuple[list[float], list[object]]:
    """Best wall-clock time of each function, the repeats interleaved (a busy machine
    slows all of them alike), and each function's last result."""
    best, outs = [np.inf] * len(fns), [None] * len(fns)
    for _ in range(repeats):
        for i, fn in enumerate(fns):
            t0 = time.perf_counter()
            outs[i] = fn()
            best[i] = min(best[i], time.perf_counter() - t0)
    return best, outs


def max_diff(a: np.ndarray, b: np.ndarray) -> float:
    a, b = np.sort(a, axis=2), np.sort(b, axis=2)
    if not np.array_equal(np.isinf(a), np.isinf(b)):
        return np.inf
    fin = np.isfinite(a)
    return float(np.max(np.abs(a[fin] - b[fin]) / np.maximum(1.0, np.abs(b[fin])), initial=0.0))


def quality(datasets: list[str]) -> None:
    """The paper's method (BLDA to L - 1 dims, then BKNN b = 5) and BKNN alone, standard
    splits, raw and min-max scaled features (scaler fitted on the training split)."""
    import warnings

    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import MinMaxScaler

    from mlneighbors import BKNN, BLDA
    from mlneighbors.metrics import hamming_loss, label_map, macro_precision

    print(
        f"\n{'dataset':9s} {'features':8s} {'model':10s} {'hamming':>8s} {'macro-P':>8s}"
        f" {'MAP':>7s} {'|Z|/row':>8s} {'|Y|/row':>8s}"
    )
    for name in datasets:
        tr, te = load_dataset(name, "train"), load_dataset(name, "test")
        for scaled in (False, True):
            models = {"BKNN": BKNN(), "BLDA+BKNN": Pipeline([("blda", BLDA()), ("bknn", BKNN())])}
            for label, model in models.items():
                if scaled:
                    model = Pipeline([("scale", MinMaxScaler()), ("model", model)])
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    model.fit(tr.X, tr.Y)
                Z, S = model.predict(te.X), model.predict_proba(te.X)
                print(
                    f"{name:9s} {'min-max' if scaled else 'raw':8s} {label:10s} {hamming_loss(te.Y, Z):8.4f}"
                    f" {macro_precision(te.Y, Z):8.4f} {label_map(te.Y, S):7.4f}"
                    f" {Z.sum(axis=1).mean():8.2f} {np.asarray(te.Y).sum(axis=1).mean():8.2f}"
                )


FIGURES = ("hamming", "macro_f1", "ap", "ap_prevalence", "set_size", "true_size", "over_half")


def figures(datasets: list[str], *, quiet: bool = False) -> dict[str, dict[str, float]]:
    """BKNN's test figures against the prevalence ranking (public API only), by dataset."""
    import warnings

    from mlneighbors import BKNN
    from mlneighbors.datasets import get_dataset_spec, list_datasets
    from mlneighbors.metrics import average_precision, hamming_loss, macro_f1
    from mlneighbors.model_selection import MultilabelStratifiedKFold

    if not quiet:
        print(f"{'dataset':14s} {'hamming':>8s} {'macro-F1':>8s} {'AP':>7s} {'AP prev.':>8s} "
              f"{'|Z|/row':>8s} {'|Y|/row':>8s} {'over half':>9s}")
    out = {}
    for name in datasets or list_datasets():
        if "train" in get_dataset_spec(name).splits:
            tr, te = load_dataset(name, "train"), load_dataset(name, "test")
            parts = [(tr.X, np.asarray(tr.Y), te.X, np.asarray(te.Y))]
        else:
            data = load_dataset(name, "all")
            Y = np.asarray(data.Y)
            cv = MultilabelStratifiedKFold(10, shuffle=True, random_state=0)
            parts = [(data.X[a], Y[a], data.X[b], Y[b]) for a, b in cv.split(None, Y)]
        rows = []
        for Xtr, Ytr, Xte, Yte in parts:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model = BKNN().fit(Xtr, Ytr)
            Z, S = model.predict(Xte), model.predict_proba(Xte)
            prevalence = np.broadcast_to(Ytr.mean(axis=0), Yte.shape)
            over_half = np.sum((np.asarray(Z).mean(axis=0) > 0.5) & (Ytr.mean(axis=0) < 0.5))
            rows.append([hamming_loss(Yte, Z), macro_f1(Yte, Z), average_precision(Yte, S),
                         average_precision(Yte, prevalence), Z.sum(axis=1).mean(), Yte.sum(axis=1).mean(),
                         over_half * len(parts)])  # averaged below: the sum over the folds
        values = dict(zip(FIGURES, np.mean(rows, axis=0).tolist(), strict=True))
        out[name] = values
        if not quiet:
            h, f, ap, prev, z, y, over = values.values()
            print(f"{name:14s} {h:8.4f} {f:8.4f} {ap:7.4f} {prev:8.4f} {z:8.2f} {y:8.2f} {over:9.0f}", flush=True)
    return out


def compare(datasets: list[str], before_src: str) -> None:
    """The figures of the code at ``before_src`` (a subprocess) and of this one, as Markdown."""
    import json
    import os
    import subprocess
    import sys

    import mlneighbors
    from mlneighbors.datasets import get_data_home

    # the same data for both: the old checkout may not lie beside this one's data directory
    env = dict(os.environ, PYTHONPATH=os.path.abspath(before_src), MLNEIGHBORS_DATA=str(get_data_home()))
    done = subprocess.run([sys.executable, __file__, "--figures", *datasets, "--json"], env=env,
                          capture_output=True, text=True, check=True)
    before = json.loads(done.stdout)
    print(f"before: mlneighbors from {os.path.abspath(before_src)}; after: from "
          f"{os.path.dirname(os.path.dirname(mlneighbors.__file__))}", flush=True)
    after = figures(list(before), quiet=True)
    print("\n| dataset | Hamming loss | macro F1 | change in macro F1 | average precision | "
          "labels predicted on over half the test rows |")
    print("|---|---|---|---|---|---|")
    for name, old in before.items():
        new = after[name]
        change = new["macro_f1"] - old["macro_f1"]
        mark = " **(loses > 0.01)**" if change < -0.01 else ""
        print(f"| {name} | {old['hamming']:.3f} → {new['hamming']:.3f} | {old['macro_f1']:.3f} → "
              f"{new['macro_f1']:.3f} | {change:+.4f}{mark} | {old['ap']:.3f} → {new['ap']:.3f} | "
              f"{old['over_half']:.0f} → {new['over_half']:.0f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--b", type=int, default=5)
    parser.add_argument("--datasets", nargs="+", default=["emotions", "yeast", "enron", "corel5k"])
    parser.add_argument("--quality", nargs="*", metavar="DATASET",
                        help="also print BKNN's and BLDA+BKNN's test metrics (default: emotions yeast)")
    parser.add_argument("--figures", nargs="*", metavar="DATASET",
                        help="only BKNN's figures against the prevalence ranking (default: every shared dataset)")
    parser.add_argument("--before", metavar="SRC",
                        help="with --figures: also the figures of the package in SRC (an older checkout's src), "
                             "as a Markdown table before -> after")
    parser.add_argument("--json", action="store_true", help="with --figures: print the figures as JSON only")
    args = parser.parse_args()
    if args.figures is not None:
        if args.before:
            compare(args.figures, args.before)
        elif args.json:
            import json

            print(json.dumps(figures(args.figures, quiet=True)))
        else:
            figures(args.figures)
        return
    print(
        f"{'dataset':10s} {'n_train':>7s} {'d':>5s} {'L':>4s} {'masked':>9s} {'per-label':>10s}"
        f" {'ratio':>6s}  max rel diff"
    )
    for name in args.datasets:
        tr, te = load_dataset(name, "train"), load_dataset(name, "test")
        Y = np.asarray(tr.Y, dtype=np.int8)
        b = args.b

        from mlneighbors.neighbors import ExactIndex, LabelRestrictedIndex, ShardedIndex

        def masked():
            return run(LabelRestrictedIndex(ExactIndex(), b).build(tr.X, Y), tr.X, te.X)

        def per_label():
            return run(LabelRestrictedIndex(ShardedIndex(ExactIndex(), 1), b).build(tr.X, Y), tr.X, te.X)

        (t_m, t_p), ((a_train, a_test), (b_train, b_test)) = interleaved([masked, per_label], args.repeats)
        diff = max(max_diff(a_train, b_train), max_diff(a_test, b_test))
        print(
            f"{name:10s} {tr.X.shape[0]:7d} {tr.X.shape[1]:5d} {Y.shape[1]:4d} "
            f"{t_m:8.3f}s {t_p:9.3f}s {t_p / t_m:6.2f}  {diff:.1e}"
        )
    if args.quality is not None:
        quality(args.quality or ["emotions", "yeast"])


if __name__ == "__main__":
    main()
