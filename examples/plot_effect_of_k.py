"""
The effect of k
===============

ML-kNN, BRkNN-a and LPkNN on the standard split of emotions for k = 1..30. The exact search's
result for k is the prefix of its result for any larger k, so
:class:`~mlneighbors.neighbors.NeighborCache` answers every k from one search of the largest:
the whole sweep costs two neighbour searches (the training rows' leave-one-out neighbours and
the test rows'), passed to each model as its ``backend``.
"""

import matplotlib.pyplot as plt
from sklearn.preprocessing import MinMaxScaler

from mlneighbors import BRkNN, LPkNN, MLkNN, metrics
from mlneighbors.datasets import load_dataset
from mlneighbors.neighbors import NeighborCache

train, test = load_dataset("emotions", split="train"), load_dataset("emotions", split="test")
scaler = MinMaxScaler().fit(train.X)
X_train, X_test = scaler.transform(train.X), scaler.transform(test.X)

cache = NeighborCache("exact", k_max=31)
ks = range(1, 31)
models = {"ML-kNN": lambda k: MLkNN(k, backend=cache),
          "BRkNN-a": lambda k: BRkNN(k, extension="a", backend=cache),
          "LPkNN": lambda k: LPkNN(k, backend=cache)}
curves = {name: {"hamming_loss": [], "average_precision": []} for name in models}
for name, build in models.items():
    for k in ks:
        model = build(k).fit(X_train, train.Y)
        values = metrics.evaluate(test.Y, model.predict(X_test), model.predict_proba(X_test),
                                  metrics=["hamming_loss", "average_precision"])
        for metric, value in values.items():
            curves[name][metric].append(value)
print("neighbour searches for", 3 * len(ks), "fits:", cache.searches)

fig, axes = plt.subplots(1, 2, figsize=(10, 4), layout="constrained")
for name, curve in curves.items():
    for ax, metric in zip(axes, ["hamming_loss", "average_precision"], strict=True):
        ax.plot(list(ks), curve[metric], marker="o", markersize=3, label=name)
for ax, title in zip(axes, ["Hamming loss (lower is better)", "average precision"], strict=True):
    ax.set_title(title)
    ax.set_xlabel("k")
    ax.grid(alpha=0.3)
axes[1].legend()
fig.suptitle("emotions, standard split: one neighbour search for every k")
plt.show()
