"""Nedungadi & Haripriya, Feature and search space reduction for label-dependent multi-label
classification (paper 002), Tables 1-2.

Hamming loss of ML-kNN, "Regression" (the label model over the exact k nearest neighbours
by cosine similarity in the full feature space) and "Combined" (the hybrid kNN: PCA, the
80 training rows nearest to the query along each kept component as candidates, the k most
cosine-similar candidates, the label model) on yeast (k = 5, 6, 14, 15, 40, 45) and
emotions (k = 5..10).  The paper does not state its protocol: 10-fold cross-validation here.
The candidate set's size and its recall of the exact neighbours are reported too, since
the method exists to search fewer points.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from ._common import (
    Finding,
    Layout,
    ProgressFactory,
    Reproduction,
    Timer,
    cell,
    collect_warnings,
    finish,
    fit_and_score,
    load,
    minmax_scale,
    progress_bar,
    stratified_folds,
    take,
)
from ._papers import NEDUNGADI_TABLE1, NEDUNGADI_TABLE2

__all__ = ["PAPER", "TITLE", "reproduce"]

PAPER = "nedungadi"
TITLE = (
    "P. Nedungadi, H. Haripriya. Feature and search space reduction for label-dependent "
    "multi-label classification (Tables 1-2)"
)

TABLES = {"Table 1": ("yeast", NEDUNGADI_TABLE1), "Table 2": ("emotions", NEDUNGADI_TABLE2)}
METHODS = ("ML-kNN", "Regression", "Combined")
SCALED = "ML-kNN, min-max scaled"
N_FOLDS = 10
N_CANDIDATES = 80

QUICK_TABLES = ("Table 2",)
QUICK_K = (5, 6)
QUICK_FOLDS = 3

LAYOUTS = [
    Layout("Table 1", "Table 1: Hamming loss on yeast", index=("method",), columns=("setting",),
           text_index=("setting",), text_columns=("method",)),
    Layout("Table 2", "Table 2: Hamming loss on emotions", index=("method",), columns=("setting",),
           text_index=("setting",), text_columns=("method",)),
    Layout("Protocol check", "Diagnostic: the same models on the standard train/test split",
           index=("dataset", "method"), columns=("setting",),
           text_index=("dataset", "setting"), text_columns=("method",)),
    Layout("Scaling check", "Diagnostic: ML-kNN with min-max scaled features, against the paper's ML-kNN",
           index=("dataset", "method"), columns=("setting",),
           text_index=("dataset", "setting"), text_columns=("method",)),
    Layout("Search", "The hybrid search: candidates as a fraction of the training set, and the share "
           "of the exact cosine neighbours it finds", index=("dataset", "metric"), columns=("setting",),
           text_index=("dataset", "setting"), text_columns=("metric",), digits=3),
]

NOTES = [
    "Datasets: yeast (2417 x 103, 14 labels) and emotions (593 x 72, 6 labels), split 'all'. The "
    "paper took them from the KEEL repository, which redistributes the same Mulan sets.",
    "Protocol: the paper does not state it; 10-fold cross-validation with seeded, shuffled "
    "iterative stratification (random_state={seed}); Hamming loss averaged over the folds.",
    "No feature scaling: the paper names none (it is not MULAN-based) and computes cosine "
    "similarities on the features as they are. The 'Scaling check' table shows ML-kNN with "
    "min-max scaling for comparison (not used in the tables).",
    "ML-kNN: Euclidean, smoothing 1; one NeighborCache per fold serves every k (two searches).",
    "Regression: HybridKNN(exact_search=True): the exact k nearest training rows by cosine "
    "similarity in the full feature space, each predicting every label from its other labels "
    "with the per-label least-squares model (ridge 1e-6); the average is thresholded at 0.5.",
    "Combined: HybridKNN(n_candidates=80, n_components=0.95): PCA keeping 95 % of the variance "
    "(at most 50 components), the 80 rows nearest along each component as candidates, the k most "
    "cosine-similar among them. The paper's L = 80; its number of components is not given.",
    "HybridKNN has no neighbour-backend parameter, so its k sweep refits per k (6 values; the PCA "
    "and the candidate search are cheap at this size).",
    "Protocol check (not a table of the paper): the same three models trained on the standard "
    "train part and tested on the test part (emotions 391/202, yeast 1500/917).",
    "Search: 'candidate_fraction' is the mean candidate-set size over the training-set size; "
    "'neighbour_recall' the share of the Regression model's k exact cosine neighbours (full "
    "feature space) that the Combined model's k neighbours contain; both from one neighbour "
    "list per fold at the largest k (smaller k are its prefixes).",
]

FINDINGS: list[Finding] = [
    Finding(
        "emotions: under 10-fold CV our Hamming losses are 0.02 to 0.05 below the paper's for ML-kNN "
        "and Regression (Combined is within 0.02). The paper's protocol is unstated; the 'Protocol "
        "check' table evaluates the same models on the standard train/test split (391/202) that "
        "Mulan and KEEL ship: there every emotions cell is within 0.02 of the paper (ML-kNN 0.28 to "
        "0.30 against 0.28 to 0.31), so the paper most likely reports that single split, whose "
        "202-instance test part gives noisier and higher losses than a CV average. The 'Scaling "
        "check' table confirms that the paper did not scale: with min-max scaling ML-kNN's loss on "
        "emotions drops to about 0.20, 0.08 to 0.11 below every number of the paper, while the "
        "unscaled features (whose ranges differ by orders of magnitude) give the paper's level.",
        dataset="emotions",
    ),
    Finding(
        "yeast: every cell is within 0.02 of the paper, ours being lower by 0.006 to 0.018; on the "
        "standard split (Protocol check) the Regression and Combined columns come within 0.007 of "
        "the paper, while ML-kNN stays about 0.01 lower under both protocols (tie rule: the "
        "paper's ML-kNN implementation and its tie handling are not given).",
        dataset="yeast",
    ),
    Finding(
        "The hybrid search saves little here. On yeast, 95 % of the variance needs more than the "
        "cap of 50 components (they keep 87 %), and the union of 80 candidates along each of 50 "
        "axes is 85 % of the training set; on unscaled emotions three components hold 99 % of the "
        "variance (a few features with large ranges dominate), the candidates are 37 % of the "
        "training set, and the k neighbours found share only 17 to 23 % with the exact cosine "
        "neighbours of the full feature space. The Combined column still matches the paper, "
        "whose method it is; its accuracy does not come from finding the exact neighbours.",
        table="Search",
    ),
]


def reproduce(
    *,
    quick: bool = False,
    out: str | os.PathLike[str] | None = None,
    data_home: Any = None,
    figures: bool = True,
    progress: ProgressFactory | None = None,
    random_state: int = 0,
) -> Reproduction:
    """Recompute Tables 1-2 of Nedungadi & Haripriya.

    Parameters
    ----------
    quick : bool, default=False
        A smoke run of the same code: emotions only, 3 folds, k in {5, 6}.
    out, data_home, figures, progress, random_state
        As in :func:`mlneighbors.experiments.reproduce` (the paper has no figure).

    Returns
    -------
    Reproduction
    """
    from .. import HybridKNN, MLkNN
    from ..neighbors import NeighborCache

    timer = Timer()
    tables = QUICK_TABLES if quick else tuple(TABLES)
    n_folds = QUICK_FOLDS if quick else N_FOLDS
    warned: dict[str, int] = {}
    rows: list[dict[str, Any]] = []
    searches: list[int] = []
    total = sum(len(QUICK_K if quick else TABLES[t][1]["k"]) for t in tables) * n_folds
    with progress_bar(progress, total, PAPER) as bar:
        for table in tables:
            name, paper = TABLES[table]
            ks = QUICK_K if quick else paper["k"]
            data = load(name, "all", data_home)
            Y = np.asarray(data.Y)
            per_fold = []
            for train, test in stratified_folds(Y, n_folds, random_state):
                Xtr, Xte = take(data.X, train), take(data.X, test)
                Str, Ste = minmax_scale(Xtr, Xte)
                cache = NeighborCache(k_max=max(ks) + 1)
                scaled_cache = NeighborCache(k_max=max(ks) + 1)
                result: dict[tuple[str, int], dict[str, float]] = {}
                with collect_warnings(warned):
                    for k in sorted(ks, reverse=True):
                        hl = ["hamming_loss"]
                        result[("ML-kNN", k)] = fit_and_score(MLkNN(k, backend=cache), Xtr, Y[train], Xte, Y[test], hl)
                        result[(SCALED, k)] = fit_and_score(MLkNN(k, backend=scaled_cache), Str, Y[train], Ste, Y[test], hl)
                        exact = HybridKNN(k, exact_search=True)
                        result[("Regression", k)] = fit_and_score(exact, Xtr, Y[train], Xte, Y[test], hl)
                        hybrid = HybridKNN(k, n_candidates=N_CANDIDATES)
                        result[("Combined", k)] = fit_and_score(hybrid, Xtr, Y[train], Xte, Y[test], hl)
                        if k == max(ks):
                            # both neighbour lists are sorted by distance: smaller k are prefixes
                            ours = hybrid.kneighbors(Xte, return_distance=False)
                            truth = exact.kneighbors(Xte, return_distance=False)
                            fraction = hybrid.candidate_fraction(Xte)
                        found = (ours[:, :k, None] == truth[:, None, :k]).sum(axis=(1, 2)) / k
                        result[("search", k)] = {
                            "candidate_fraction": fraction,
                            "neighbour_recall": float(found.mean()),
                        }
                        bar.update(1)
                per_fold.append(result)
                searches.append(cache.searches)
            mean = {
                key: {m: float(np.mean([f[key][m] for f in per_fold])) for m in per_fold[0][key]}
                for key in per_fold[0]
            }
            for method in METHODS:
                for k in ks:
                    j = paper["k"].index(k)
                    rows.append(cell(table, name, method, "hamming_loss", f"k={k}",
                                     mean[(method, k)]["hamming_loss"], paper[method][j]))
            # protocol check: the standard train/test split that Mulan and KEEL ship
            train_part, test_part = load(name, "train", data_home), load(name, "test", data_home)
            Ytr, Yte = np.asarray(train_part.Y), np.asarray(test_part.Y)
            split_cache = NeighborCache(k_max=max(ks) + 1)
            split_rows = []
            with collect_warnings(warned):
                for k in sorted(ks, reverse=True):  # the largest k first: one search per set
                    for method, model in (("ML-kNN", MLkNN(k, backend=split_cache)),
                                          ("Regression", HybridKNN(k, exact_search=True)),
                                          ("Combined", HybridKNN(k, n_candidates=N_CANDIDATES))):
                        value = fit_and_score(model, train_part.X, Ytr, test_part.X, Yte, ["hamming_loss"])
                        split_rows.append(cell("Protocol check", name, method, "hamming_loss", f"k={k}",
                                               value["hamming_loss"], paper[method][paper["k"].index(k)]))
            rows += sorted(split_rows, key=lambda r: (METHODS.index(r["method"]), int(r["setting"][2:])))
            for k in ks:
                j = paper["k"].index(k)
                rows.append(cell("Scaling check", name, SCALED, "hamming_loss", f"k={k}",
                                 mean[(SCALED, k)]["hamming_loss"], paper["ML-kNN"][j]))
                for metric in ("candidate_fraction", "neighbour_recall"):
                    rows.append(cell("Search", name, "Combined", metric, f"k={k}", mean[("search", k)][metric]))
    notes = [n.format(seed=random_state) for n in NOTES]
    if quick:
        notes.insert(0, f"QUICK MODE: emotions only, {n_folds} folds, k in {QUICK_K}.")
    stats: dict[str, Any] = {"searches_per_fold (ML-kNN)": max(searches), "folds": len(searches)}
    if warned:
        stats["warnings"] = "; ".join(f"{k} (x{v})" for k, v in warned.items())
    layouts = [lay for lay in LAYOUTS if any(r["table"] == lay.table for r in rows)]
    rep = Reproduction(PAPER, TITLE, rows, layouts, notes, FINDINGS, quick, timer.seconds, stats=stats)
    return finish(rep, out)
