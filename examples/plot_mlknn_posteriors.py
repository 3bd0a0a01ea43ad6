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

plt.rcParams.update({"font.size": 13})
fig, axes = plt.subplots(3, 2, figsize=(7, 10.5), sharex=True, layout="constrained")
for row, l in enumerate(labels):
    prior = model.prior_[l]
    a = prior * model.cond_prob_true_[l]
    b = (1 - prior) * model.cond_prob_false_[l]
    posterior = a / (a + b)
    left = axes[row, 0]
    left.bar(counts - 0.2, model.cond_prob_true_[l], 0.4, label="P(count | label)")
    left.bar(counts + 0.2, model.cond_prob_false_[l], 0.4, label="P(count | no label)")
    left.set_ylabel(f"{train.label_names[l]}\n({frequency[l]:.0%} of the rows)")
    right = axes[row, 1]
    right.plot(counts, posterior, marker="o", color="C2")
    right.axhline(0.5, color="grey", lw=1, ls="--")
    right.set_ylim(0, 1)
    first = counts[posterior >= 0.5]
    right.set_title(f"predicted from {first[0]} of {model.n_neighbors_}" if len(first) else "never predicted",
                    fontsize=13)
    print(f"{train.label_names[l]:8s} prior {prior:.3f}  posterior by count: {np.round(posterior, 2).tolist()}")
axes[0, 0].set_title("likelihood of the count", fontsize=13)
axes[0, 1].set_title("posterior = predict_proba\n" + axes[0, 1].get_title(), fontsize=13)
for ax in axes[-1]:
    ax.set_xlabel("neighbours carrying the label")
    ax.set_xticks(counts[::2])
fig.legend(*axes[0, 0].get_legend_handles_labels(), loc="outside lower center", ncols=2, frameon=False)
fig.suptitle("ML-kNN on yeast (k = 10): the count tables\nand the posterior they give")
plt.show()

# %%
# The same count means different things for different labels. The most frequent label has a
# posterior of 0.5 even when no neighbour carries it, and an exact tie predicts the label; the
# label of middle frequency needs most of the ten neighbours; the rarest is never predicted:
# no training row had three or more neighbours carrying it, so its smoothed tables are flat
# there and the posterior stays below 0.5. The posterior of every (label, count) is computed
# once at fit, which is why ML-kNN ranks labels without forming the full score rows
# (``predict_top_k``).
