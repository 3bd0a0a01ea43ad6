"""
The models compared on three datasets
=====================================

The package's models on the standard train/test splits of emotions, yeast and scene, with
k = 10 (b = 5 for BKNN) and the other parameters at their defaults: every name the command line
takes (:func:`~mlneighbors.list_models`; BRkNN's extensions a and b are rows of their own) but
"regression", the hybrid model's label regression over exact neighbours, which the reproduction
of Nedungadi & Harikumar compares, named as in the table of :doc:`/user_guide/choosing`. Dense
features are min-max scaled with the training ranges, as MULAN (and the command line) do.
:func:`~mlneighbors.model_selection.evaluate_models` fits and scores them on one split, with one
neighbour search shared by every model that searches the same way.

The figures are those of :doc:`/user_guide/choosing`.
"""

import matplotlib.pyplot as plt
import numpy as np

from mlneighbors import MODELS, list_models, make_model
from mlneighbors.datasets import load_dataset
from mlneighbors.model_selection import evaluate_models

# the registry's models, so a new one is drawn without a line here
NAMES = [name for name in list_models() if name != "regression"]
DATASETS = ["emotions", "yeast", "scene"]
METRICS = ["hamming_loss", "macro_f1", "average_precision"]
# the registry's labels are the papers' names; the hybrid model's ("Combined") is its class name here
labels = ["HybridKNN" if name == "hybrid" else MODELS[name].label for name in NAMES]

results = {}
for dataset in DATASETS:
    train, test = load_dataset(dataset, split="train"), load_dataset(dataset, split="test")
    # k = 10 neighbours; where k sets BKNN's b (neighbours per label), b = 5
    models = {name: make_model(name, k=5 if MODELS[name].k_param.endswith("n_per_label") else 10)
              for name in NAMES}
    for model in models.values():  # a model with randomness (LAML-kNN's k-means) is seeded
        model.set_params(**{key: 0 for key in model.get_params() if key.endswith("random_state")})
    results[dataset] = evaluate_models(models, train.X, train.Y, test=(test.X, test.Y),
                                       metrics=METRICS, scale="minmax")

print(f"{'dataset':9s} {'model':12s} " + " ".join(f"{m:>17s}" for m in METRICS) + "   seconds")
for dataset, by_model in results.items():
    for name, result in by_model.items():
        seconds = float(result.fit_time.sum() + result.predict_time.sum())
        values = " ".join(f"{result.mean[m]:17.3f}" for m in METRICS)
        print(f"{dataset:9s} {labels[NAMES.index(name)]:12s} {values} {seconds:9.3f}")

# %%
# Quality
# -------
# Hamming loss (lower is better) and macro F1 judge the predicted label sets; average precision
# judges the ranking of each row's labels by ``predict_proba``.

y = np.arange(len(NAMES))
markers = {"emotions": "o", "yeast": "s", "scene": "D"}
plt.rcParams.update({"font.size": 13})
fig, axes = plt.subplots(1, len(METRICS), figsize=(7, 7), sharey=True, layout="constrained")
for ax, metric in zip(axes, METRICS, strict=True):
    for j, dataset in enumerate(DATASETS):
        values = [results[dataset][name].mean[metric] for name in NAMES]
        ax.plot(values, y, markers[dataset], color=f"C{j}", markersize=7, label=dataset)
    better = "lower is\nbetter" if metric == "hamming_loss" else "higher is\nbetter"
    ax.set_title(f"{metric.replace('_', ' ')}\n({better})", fontsize=13)
    ax.tick_params(axis="x", labelsize=11, labelrotation=45)
    ax.grid(alpha=0.3)
axes[0].set_yticks(y, labels)
axes[0].invert_yaxis()
fig.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center", ncols=3, frameon=False)
_ = fig.suptitle("The models on the standard test splits (k = 10, b = 5)")

# %%
# Time
# ----
# Seconds for fit + predict, measured in this run (shared neighbour searches count once, for the
# first model that needs them). Compare models within a dataset.

fig, ax = plt.subplots(figsize=(7, 6.5), layout="constrained")
for j, dataset in enumerate(DATASETS):
    seconds = [float(results[dataset][n].fit_time.sum() + results[dataset][n].predict_time.sum()) for n in NAMES]
    ax.plot(seconds, y, markers[dataset], color=f"C{j}", markersize=8, label=dataset)
ax.set_yticks(y, labels)
ax.invert_yaxis()
ax.set_xscale("log")
ax.set_xlabel("seconds, fit + predict (log scale)")
ax.grid(alpha=0.3)
fig.legend(*ax.get_legend_handles_labels(), loc="outside lower center", ncols=3, frameon=False)
ax.set_title("Cost on the build machine")
plt.show()

# %%
# What the figures show
# ---------------------
# Quality: no model wins everywhere. The ML-kNN family has the lowest Hamming loss on yeast and
# scene, plain BRkNN on emotions; BKNN, with or without BLDA, has the highest Hamming loss on
# every set and buys with it the best macro F1 on yeast; in average precision HybridKNN and the
# ML-kNN family lead on scene, and BLDA + BKNN has the lowest on yeast and scene. Time: the vote
# models (BRkNN, its extensions, LPkNN) are the cheapest, as they need no leave-one-out search at
# fit; BKNN, BLDA + BKNN and HybridKNN are the costliest on yeast and scene, five times the vote
# models or more. Times are from one run on a shared 2-core machine (the table above has this
# build's numbers): read them within one dataset, and as orders of magnitude.
# :doc:`/user_guide/choosing` turns these figures into advice.
