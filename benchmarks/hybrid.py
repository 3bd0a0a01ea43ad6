"""HybridKNN: candidate fraction, recall of the exact neighbours, search time, Hamming loss.

Usage::

    MLNEIGHBORS_DATA=../shared/datasets PYTHONPATH=src python benchmarks/hybrid.py
        [--datasets emotions yeast] [--repeats 3] [--k 10]

On the standard train/test split of each dataset, for the raw features and for
min-max scaled ones (MULAN's preprocessing, fitted on the training split), with the
paper's L = 80 candidates per component and the default PCA (95 % of the variance,
at most 50 components):

- ``comps``: principal components kept; ``cand``: mean candidate-set size of the test
  queries as a fraction of the training set;
- ``recall``: mean fraction of the exact k nearest neighbours (cosine, same projected
  space, ``ExactIndex``) that the candidate search returns; ``overlap``: the same
  against the exact neighbours in the full feature space (``backend="exact"``, the
  paper's "Regression" column);
- times (best of ``--repeats``, interleaved, test queries, in one run): the candidate
  search (``kneighbors``), exact cosine search in the projected space (``ExactIndex``),
  and exact cosine search in the feature space (``backend="exact"``).

``--fit DATASET ...`` prints only HybridKNN's fit time and the peak memory its fit allocates
(``tracemalloc``) on each dataset's training split; run it on an older checkout
(``PYTHONPATH=<old>/src``) for the figures before a change.

A second table gives the Hamming loss at the paper's k values (Tables 1-2): ML-kNN,
"Regression" (``backend="exact"``) and "Combined" (``HybridKNN``); the paper used an
unstated protocol (KEEL data), here the standard split.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import scipy.sparse as sp
from sklearn.preprocessing import MinMaxScaler

from mlneighbors import HybridKNN, MLkNN, load_dataset
from mlneighbors.metrics import hamming_loss
from mlneighbors.neighbors import ExactIndex

PAPER_K = {"emotions": [5, 6, 7, 8, 9, 10], "yeast": [5, 6, 14, 15, 40, 45]}


def interleaved(fns, repeats):
    """Best wall-clock time of each function, the repeats interleaved (a busy machine
    slows all of them alike), and each function's last result."""
    best, outs = [np.inf] * len(fns), [None] * len(fns)
    for _ in range(repeats):
        for i, fn in enumerate(fns):
            t0 = time.perf_counter()
            outs[i] = fn()
            best[i] = min(best[i], time.perf_counter() - t0)
    return best, outs


def recall(found, exact):
    return float(np.mean([len(set(a) & set(b)) / len(b) for a, b in zip(found, exact, strict=True)]))


def splits(name, scaled):
    tr, te = load_dataset(name, "train"), load_dataset(name, "test")
    X, Q = tr.X, te.X
    if sp.issparse(X):
        X, Q = X.toarray(), Q.toarray()
    if scaled:
        scaler = MinMaxScaler().fit(X)
        X, Q = scaler.transform(X), np.clip(scaler.transform(Q), 0, 1)
    return X, np.asarray(tr.Y), Q, np.asarray(te.Y)


def search_table(datasets, k, repeats):
    print(f"k = {k}, L = 80 candidates per component")
    print(
        f"{'dataset':10s} {'features':8s} {'comps':>5s} {'cand':>6s} {'recall':>7s} {'overlap':>8s}"
        f" {'hybrid':>9s} {'exact-proj':>10s} {'exact-full':>10s}"
    )
    for name in datasets:
        for scaled in (False, True):
            X, Y, Q, _ = splits(name, scaled)
            model = HybridKNN(n_neighbors=k).fit(X, Y)
            full = HybridKNN(n_neighbors=k, backend="exact").fit(X, Y)
            W = model.components_.T
            Z, Zq = (X - model.mean_) @ W, (Q - model.mean_) @ W
            index = ExactIndex(metric="cosine").build(Z)
            (t_h, t_p, t_f), outs = interleaved(
                [lambda: model.kneighbors(Q), lambda: index.query(Zq, k), lambda: full.kneighbors(Q)],
                repeats,
            )
            idx_h, idx_p, idx_f = (out[1] for out in outs)
            print(
                f"{name:10s} {'min-max' if scaled else 'raw':8s} {model.n_components_:5d}"
                f" {model.candidate_fraction(Q):6.3f} {recall(idx_h, idx_p):7.3f}"
                f" {recall(idx_h, idx_f):8.3f} {t_h * 1e3:7.1f}ms {t_p * 1e3:8.1f}ms {t_f * 1e3:8.1f}ms"
            )


def hamming_table(datasets):
    print("\nHamming loss at the paper's k (standard split)")
    for name in datasets:
        for scaled in (False, True):
            X, Y, Q, Yq = splits(name, scaled)
            rows = {"ML-kNN": [], "Regression": [], "Combined": []}
            for k in PAPER_K.get(name, [10]):
                rows["ML-kNN"].append(hamming_loss(Yq, MLkNN(n_neighbors=k).fit(X, Y).predict(Q)))
                rows["Regression"].append(
                    hamming_loss(Yq, HybridKNN(n_neighbors=k, backend="exact").fit(X, Y).predict(Q))
                )
                rows["Combined"].append(hamming_loss(Yq, HybridKNN(n_neighbors=k).fit(X, Y).predict(Q)))
            ks = " ".join(f"{'k=' + str(k):>7s}" for k in PAPER_K.get(name, [10]))
            print(f"{name} ({'min-max' if scaled else 'raw'})  {ks}")
            for method, values in rows.items():
                print(f"  {method:12s}" + " ".join(f"{v:7.4f}" for v in values))


def fit_cost(datasets) -> None:
    import tracemalloc
    import warnings

    for name in datasets:
        tr = load_dataset(name, "train")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tracemalloc.start()
            t0 = time.perf_counter()
            model = HybridKNN().fit(tr.X, tr.Y)
            seconds = time.perf_counter() - t0
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
        print(f"{name:10s} {tr.X.shape[0]:6d} x {tr.X.shape[1]:6d} {'sparse' if sp.issparse(tr.X) else 'dense':6s} "
              f"fit {seconds:7.2f} s  peak {peak / 2**20:7.1f} MiB  components {model.n_components_}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fit", nargs="+", metavar="DATASET", help="only the fit cost on these datasets")
    parser.add_argument("--datasets", nargs="+", default=["emotions", "yeast"])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--no-hamming", action="store_true")
    args = parser.parse_args()
    if args.fit:
        fit_cost(args.fit)
        return
    search_table(args.datasets, args.k, args.repeats)
    if not args.no_hamming:
        hamming_table(args.datasets)


if __name__ == "__main__":
    main()
