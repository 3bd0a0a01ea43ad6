"""IBLR-ML and IBLR-ML+ side by side with scikit-multilearn-ng's ``InstanceBasedLogisticRegression``.

Usage (scikit-multilearn-ng lives in the benchmark's own environment, never in the project's;
its 0.0.8 wheel needs nothing beyond numpy, scipy and scikit-learn, so ``src`` on the path is
enough)::

    python3 -m venv /tmp/skml && /tmp/skml/bin/pip install scikit-multilearn-ng==0.0.8
    PYTHONPATH=src MLNEIGHBORS_DATA=../shared/datasets /tmp/skml/bin/python \\
        benchmarks/iblr_side_by_side.py [--datasets emotions scene yeast] [--k 10]

Each dataset's standard train/test split, features min-max scaled with the training ranges
(MULAN's convention, for every contender alike), the same k.  Rows:

- ``IBLR-ML`` and ``IBLR-ML+``: ours, defaults (leave-one-out evidence, ridge 1e-8 on
  standardised inputs, a score of 0.5 predicts); ``IBLR-ML+, ridge=1``: a real penalty;
- ``ng``: ``InstanceBasedLogisticRegression()`` with its k-NN layer set to the same k (it
  hard-codes 10); it always appends the evidence to the features (an IBLR-ML+) and fits
  scikit-learn's default ``LogisticRegression()`` (C = 1 on the raw inputs);
- ``ng, C=5e7``: the same with ``LogisticRegression(C=5e7, max_iter=1000)``, MULAN's ridge in
  scikit-learn's units but without the standardisation, to separate the regularisation from
  the rest (the training evidence).

For each: micro-F1, Hamming loss, and the share of test (row, label) cells whose prediction
differs from our IBLR-ML+.  The training evidence of ng is each training row's k nearest
*including itself* (``KNeighborsClassifier.predict_proba`` on the training rows): the row's own
label is one k-th of its evidence, which the regressions learn to trust.  ``--leak`` adds our
IBLR-ML+ refitted on that leaky evidence (built here from the public ``kneighbors``), which
isolates that difference.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import MinMaxScaler

from mlneighbors import IBLRML
from mlneighbors.datasets import load_dataset
from mlneighbors.metrics import hamming_loss, micro_f1


def _ng(k: int, classifier: LogisticRegression | None):
    try:
        from skmultilearn.problem_transform import InstanceBasedLogisticRegression
    except ImportError:
        return None
    from sklearn.neighbors import KNeighborsClassifier

    model = InstanceBasedLogisticRegression() if classifier is None else InstanceBasedLogisticRegression(classifier)
    model.knn_classifier = KNeighborsClassifier(n_neighbors=k)  # it hard-codes 10 (and n_jobs=-1)
    return model


def _leaky_plus(Xtr, Ytr, Xte, k: int) -> np.ndarray:
    """Our IBLR-ML+'s regressions on training evidence that counts each row among its own
    neighbours (ng's recipe), evaluated as ours: the effect of leave-one-out alone."""
    base = IBLRML(k, plus=True).fit(Xtr, Ytr)
    own = base.kneighbors(None, n_neighbors=k - 1, return_distance=False)  # k - 1 others + the row itself
    C = Ytr[own].sum(axis=1) + Ytr
    Z = np.hstack([C / k, Xtr])
    from mlneighbors.iblr import _column_scale

    scale = _column_scale(Z)
    test_C = Ytr[base.kneighbors(Xte, return_distance=False)].sum(axis=1)
    Zte = np.hstack([test_C / k, Xte])
    out = np.zeros((len(Xte), Ytr.shape[1]), dtype=int)
    for label in range(Ytr.shape[1]):
        if Ytr[:, label].min() == Ytr[:, label].max():
            out[:, label] = Ytr[0, label]
            continue
        lr = LogisticRegression(C=0.5e8, tol=1e-6, max_iter=1000).fit(Z * scale, Ytr[:, label])
        out[:, label] = lr.predict_proba(Zte * scale)[:, 1] >= 0.5
    return out


def run(name: str, k: int, leak: bool) -> list[tuple[str, float, float, float, float]]:
    train, test = load_dataset(name, "train"), load_dataset(name, "test")
    scaler = MinMaxScaler().fit(train.X)
    Xtr, Xte = scaler.transform(train.X), np.clip(scaler.transform(test.X), 0.0, 1.0)
    Ytr, Yte = np.asarray(train.Y, dtype=int), np.asarray(test.Y, dtype=int)
    contenders = [("IBLR-ML", lambda: IBLRML(k)), ("IBLR-ML+", lambda: IBLRML(k, plus=True)),
                  ("IBLR-ML+, ridge=1", lambda: IBLRML(k, plus=True, ridge=1.0)),
                  ("ng", lambda: _ng(k, None)),
                  ("ng, C=5e7", lambda: _ng(k, LogisticRegression(C=5e7, max_iter=1000)))]
    found = []
    for label, make in contenders:
        model = make()
        if model is None:
            print(f"  {label}: scikit-multilearn-ng is not importable here; skipped")
            continue
        start = time.perf_counter()
        with warnings.catch_warnings():  # the solvers' iteration limits: counted in the docs, not printed
            warnings.simplefilter("ignore", ConvergenceWarning)
            model.fit(Xtr, Ytr)
            Z = model.predict(Xte)
        seconds = time.perf_counter() - start
        found.append((label, np.asarray(Z.toarray() if sp.issparse(Z) else Z, dtype=int), seconds))
    if leak:
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            Z = _leaky_plus(Xtr, Ytr, Xte, k)
        found.append(("IBLR-ML+, self in evidence", Z, time.perf_counter() - start))
    reference = dict((label, Z) for label, Z, _ in found)["IBLR-ML+"]
    return [(label, micro_f1(Yte, Z), hamming_loss(Yte, Z), float(np.mean(Z != reference)), seconds)
            for label, Z, seconds in found]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=["emotions", "scene", "yeast"])
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--leak", action="store_true", help="add our IBLR-ML+ on ng's leaky training evidence")
    args = parser.parse_args()
    print(f"k = {args.k}; min-max scaled features; standard train/test splits")
    print(f"{'dataset':<10} {'model':<28} {'micro-F1':>9} {'Hamming':>8} {'differs':>8} {'seconds':>8}")
    for name in args.datasets:
        for label, f1, hl, differ, seconds in run(name, args.k, args.leak):
            print(f"{name:<10} {label:<28} {f1:9.4f} {hl:8.4f} {differ:8.2%} {seconds:8.2f}")


if __name__ == "__main__":
    main()
