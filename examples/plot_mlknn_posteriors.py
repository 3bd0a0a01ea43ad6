"""
ML-kNN's posteriors from its count tables
=========================================

ML-kNN learns, for every label, how often each neighbour count ``j`` (0..k) occurs among the
training rows that carry the label and among those that do not (leave-one-out neighbours), and
turns the two likelihoods and the label's prior into a posterior. A query's score for a label is
a look-up of that posterior at its count. Here on yeast's standard split, k = 10, for three
labels of different frequencies.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.preprocessing import MinMaxScaler

from mlneighbors import MLkNN
from mlneighbors.datasets import load_dataset

train = load_dataset("yeast", split="train")
X = MinMaxScaler().fit_transform(train.X)
model = MLkNN(n_neighbors=10).fit(X, train.Y)

frequency = train.Y.mean(axis=0)
labels = [int(np.argmax(frequency)), int(np.argsort(frequency)[len(frequency) // 2]), int(np.argmin(frequency))]
counts = np.arange(model.n_neighbors_ + 1)

fig, axes = plt.subplots(2, 3, figsize=(12, 6.5), sharex=True, layout="constrained")
for col, l in enumerate(labels):
    prior = model.prior_[l]
    a = prior * model.cond_prob_true_[l]
    b = (1 - prior) * model.cond_prob_false_[l]
    posterior = a / (a + b)
    top = axes[0, col]
    top.bar(counts - 0.2, model.cond_prob_true_[l], 0.4, label="P(count | label)")
    top.bar(counts + 0.2, model.cond_prob_false_[l], 0.4, label="P(count | no label)")
    top.set_title(f"{train.label_names[l]}: {frequency[l]:.0%} of the rows")
    bottom = axes[1, col]
    bottom.plot(counts, posterior, marker="o", color="C2")
    bottom.axhline(0.5, color="grey", lw=1, ls="--")
    first = counts[posterior >= 0.5]
    if len(first):
        bottom.annotate(f"predicted from {first[0]} of {model.n_neighbors_}", (first[0], posterior[first[0]]),
                        xytext=(0.5, 0.15), textcoords="axes fraction", arrowprops={"arrowstyle": "->"})
    bottom.set_xlabel("neighbours carrying the label")
    bottom.set_ylim(0, 1)
    print(f"{train.label_names[l]:8s} prior {prior:.3f}  posterior by count: {np.round(posterior, 2).tolist()}")
axes[0, 0].set_ylabel("likelihood")
axes[1, 0].set_ylabel("posterior = predict_proba")
axes[0, 0].legend()
fig.suptitle("ML-kNN on yeast (k = 10): the count tables and the posterior they give")
plt.show()

# %%
# The same count means different things for different labels. The most frequent label has a
# posterior of 0.5 even when no neighbour carries it, and an exact tie predicts the label; the
# label of middle frequency needs most of the ten neighbours; the rarest is never predicted:
# no training row had three or more neighbours carrying it, so its smoothed tables are flat
# there and the posterior stays below 0.5. The posterior of every (label, count) is computed
# once at fit, which is why ML-kNN ranks labels without forming the full score rows
# (``predict_top_k``).
