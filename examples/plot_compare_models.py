"""
The models compared on three datasets
=====================================

Every model of the package on the standard train/test splits of emotions, yeast and scene,
with k = 10 (b = 5 for BKNN) and the other parameters at their defaults. Dense features are
min-max scaled with the training ranges, as MULAN (and the command line) do.
:func:`~mlneighbors.model_selection.evaluate_models` fits and scores them on one split, with one
neighbour search shared by every model that searches the same way.

The figures are those of :doc:`/user_guide/choosing`.
"""

import matplotlib.pyplot as plt
import numpy as np

from mlneighbors import MODELS, make_model
from mlneighbors.datasets import load_dataset
from mlneighbors.model_selection import evaluate_models

NAMES = ["mlknn", "lamlknn", "dmlknn", "brknn", "brknn-a", "brknn-b", "lpknn", "bknn", "blda-bknn", "hybrid"]
DATASETS = ["emotions", "yeast", "scene"]
METRICS = ["hamming_loss", "macro_f1", "average_precision"]

results = {}
for dataset in DATASETS:
    train, test = load_dataset(dataset, split="train"), load_dataset(dataset, split="test")
    models = {name: make_model(name, k=5 if "bknn" in name else 10) for name in NAMES}
    models["lamlknn"].set_params(random_state=0)
    results[dataset] = evaluate_models(models, train.X, train.Y, test=(test.X, test.Y),
                                       metrics=METRICS, scale="minmax")

print(f"{'dataset':9s} {'model':12s} " + " ".join(f"{m:>17s}" for m in METRICS) + "   seconds")
for dataset, by_model in results.items():
    for name, result in by_model.items():
        seconds = float(result.fit_time.sum() + result.predict_time.sum())
        values = " ".join(f"{result.mean[m]:17.3f}" for m in METRICS)
        print(f"{dataset:9s} {MODELS[name].label:12s} {values} {seconds:9.3f}")

# %%
# Quality
# -------
# Hamming loss (lower is better) and macro F1 judge the predicted label sets; average precision
# judges the ranking of each row's labels by ``predict_proba``.

labels = [MODELS[name].label for name in NAMES]
y = np.arange(len(NAMES))
markers = {"emotions": "o", "yeast": "s", "scene": "D"}
fig, axes = plt.subplots(1, len(METRICS), figsize=(11, 5.2), sharey=True, layout="constrained")
for ax, metric in zip(axes, METRICS, strict=True):
    for j, dataset in enumerate(DATASETS):
        values = [results[dataset][name].mean[metric] for name in NAMES]
        ax.plot(values, y, markers[dataset], color=f"C{j}", markersize=7, label=dataset)
    better = "lower is better" if metric == "hamming_loss" else "higher is better"
    ax.set_title(f"{metric.replace('_', ' ')}\n({better})")
    ax.grid(alpha=0.3)
axes[0].set_yticks(y, labels)
axes[0].invert_yaxis()
fig.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center", ncols=3)
fig.suptitle("Every model on the standard test splits (k = 10, b = 5)")

# %%
# Time
# ----
# Seconds for fit + predict, measured in this run (shared neighbour searches count once, for the
# first model that needs them). Compare models within a dataset.

fig, ax = plt.subplots(figsize=(8, 4.6), layout="constrained")
for j, dataset in enumerate(DATASETS):
    seconds = [float(results[dataset][n].fit_time.sum() + results[dataset][n].predict_time.sum()) for n in NAMES]
    ax.plot(seconds, y, markers[dataset], color=f"C{j}", markersize=7, label=dataset)
ax.set_yticks(y, labels)
ax.invert_yaxis()
ax.set_xscale("log")
ax.set_xlabel("seconds, fit + predict (log scale)")
ax.grid(alpha=0.3)
ax.legend(loc="lower right")
ax.set_title("Cost on the build machine")
plt.show()
