"""Nedungadi & Haripriya, Feature and search space reduction for label-dependent multi-label
classification, Tables 1-2.

Hamming loss of ML-kNN, "Regression" (the label model over the exact k nearest neighbours
by cosine similarity in the full feature space) and "Combined" (the hybrid kNN: PCA, the
80 training rows nearest to the query along each kept component as candidates, the k most
cosine-similar candidates, the label model) on yeast (k = 5, 6, 14, 15, 40, 45) and
emotions (k = 5..10).  The paper does not state its protocol: 10-fold cross-validation here.
The candidate set's size and its recall of the exact neighbours are reported too, since
the method exists to search fewer points.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import make_model
from ..model_selection import FittedSplit, evaluate_models
from ._papers import NEDUNGADI_TABLE1, NEDUNGADI_TABLE2
from ._protocol import RunOptions, Timer, collect_warnings, fold_means, load, paper_reproduction, progress_bar
from ._report import Finding, Layout, Reproduction, cell, finish

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
    "Regression: HybridKNN(backend='exact'): the exact k nearest training rows by cosine "
    "similarity in the full feature space, each predicting every label from its other labels "
    "with the per-label least-squares model (ridge 1e-6); the average is thresholded at 0.5.",
    "Combined: HybridKNN(n_candidates=80, n_components=0.95): PCA keeping 95 % of the variance "
    "(at most 50 components), the 80 rows nearest along each component as candidates, the k most "
    "cosine-similar among them. The paper's L = 80; its number of components is not given.",
    "HybridKNN fixes its own metric (cosine), so the shared neighbour search of the ML-kNN sweep "
    "does not serve it: its k sweep refits per k (6 values; the PCA and the candidate search are "
    "cheap at this size).",
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


def _models(ks: tuple[int, ...]) -> dict[tuple[str, int], Any]:
    """The three columns of the tables at every k, the largest k first."""
    models: dict[tuple[str, int], Any] = {}
    for k in sorted(ks, reverse=True):
        models[("ML-kNN", k)] = make_model("mlknn", k)
        models[("Regression", k)] = make_model("regression", k)
        models[("Combined", k)] = make_model("hybrid", k, n_candidates=N_CANDIDATES)
    return models


@paper_reproduction()
def reproduce(options: RunOptions) -> Reproduction:
    """Recompute Tables 1-2 of Nedungadi & Haripriya.

    Parameters
    ----------
    quick : bool, default=False
        A smoke run of the same code: emotions only, 3 folds, k in {5, 6}.
    out, data_home, figures, progress, random_state, backend, backend_params
        As in :func:`mlneighbors.experiments.reproduce` (the paper has no figure).

    Returns
    -------
    Reproduction
    """
    timer = Timer()
    route = options.route
    tables = QUICK_TABLES if options.quick else tuple(TABLES)
    n_folds = QUICK_FOLDS if options.quick else N_FOLDS
    warned: dict[str, int] = {}
    rows: list[dict[str, Any]] = []
    searches: list[int] = []
    total = sum(len(QUICK_K if options.quick else TABLES[t][1]["k"]) for t in tables) * (n_folds * 4 + len(METHODS))
    with progress_bar(options.progress, total, PAPER) as bar:
        for table in tables:
            name, paper = TABLES[table]
            ks = QUICK_K if options.quick else paper["k"]
            data = load(name, "all", options.data_home)
            Y = np.asarray(data.Y)
            models = _models(ks)
            found: dict[tuple[int, str], np.ndarray] = {}
            fraction: dict[int, float] = {}
            fold_searches: dict[int, int] = {}

            def on_fit(run: FittedSplit) -> None:
                method, k = run.name
                if method == "ML-kNN":
                    fold_searches[run.split] = run.model.backend.searches
                if method in ("Regression", "Combined") and k == max(ks):
                    # both neighbour lists are sorted by distance: smaller k are prefixes
                    found[(run.split, method)] = run.model.kneighbors(run.X_test, return_distance=False)
                    if method == "Combined":
                        fraction[run.split] = run.model.candidate_fraction(run.X_test)

            with collect_warnings(warned):
                results = evaluate_models(models, data.X, Y, cv=n_folds, random_state=options.random_state,
                                          metrics=["hamming_loss"], on_fit=on_fit, progress=bar, **route)
                scaled = evaluate_models({(SCALED, k): make_model("mlknn", k) for k in ks}, data.X, Y,
                                         cv=n_folds, random_state=options.random_state, scale="minmax",
                                         metrics=["hamming_loss"], progress=bar, **route)
            searches += list(fold_searches.values())
            mean = {key: fold_means(result) for key, result in {**results, **scaled}.items()}
            for k in ks:
                recall = [
                    float(((found[(j, "Combined")][:, :k, None] == found[(j, "Regression")][:, None, :k])
                           .sum(axis=(1, 2)) / k).mean())
                    for j in range(n_folds)
                ]
                mean[("search", k)] = {
                    "candidate_fraction": float(np.mean([fraction[j] for j in range(n_folds)])),
                    "neighbour_recall": float(np.mean(recall)),
                }
            for method in METHODS:
                for k in ks:
                    j = paper["k"].index(k)
                    rows.append(cell(table, name, method, "hamming_loss", f"k={k}",
                                     mean[(method, k)]["hamming_loss"], paper[method][j]))
            # protocol check: the standard train/test split that Mulan and KEEL ship
            train_part, test_part = load(name, "train", options.data_home), load(name, "test", options.data_home)
            with collect_warnings(warned):
                split = evaluate_models(models, train_part.X, np.asarray(train_part.Y),
                                        test=(test_part.X, np.asarray(test_part.Y)),
                                        metrics=["hamming_loss"], progress=bar, **route)
            for method in METHODS:
                for k in ks:
                    rows.append(cell("Protocol check", name, method, "hamming_loss", f"k={k}",
                                     fold_means(split[(method, k)])["hamming_loss"],
                                     paper[method][paper["k"].index(k)]))
            for k in ks:
                j = paper["k"].index(k)
                rows.append(cell("Scaling check", name, SCALED, "hamming_loss", f"k={k}",
                                 mean[(SCALED, k)]["hamming_loss"], paper["ML-kNN"][j]))
                for metric in ("candidate_fraction", "neighbour_recall"):
                    rows.append(cell("Search", name, "Combined", metric, f"k={k}", mean[("search", k)][metric]))
    notes = [n.format(seed=options.random_state) for n in NOTES]
    if options.quick:
        notes.insert(0, f"QUICK MODE: emotions only, {n_folds} folds, k in {QUICK_K}.")
    stats: dict[str, Any] = {"searches_per_fold (ML-kNN)": max(searches), "folds": len(searches)}
    if warned:
        stats["warnings"] = "; ".join(f"{k} (x{v})" for k, v in warned.items())
    layouts = [lay for lay in LAYOUTS if any(r["table"] == lay.table for r in rows)]
    rep = Reproduction(PAPER, TITLE, rows, layouts, notes, FINDINGS, options.quick, timer.seconds, stats=stats)
    return finish(rep, options.out)
