"""
BKNN's per-label thresholds
===========================

BKNN scores every label by its share of the query's similarity mass among the ``b`` nearest
members of each label, then predicts a label when the score ``f`` exceeds a threshold learnt
for that label: the one maximising F1 on the training rows' leave-one-out scores. Here on
emotions' standard split (b = 5): the thresholds, the F1 they reach on the training rows, and
the scores of the test rows for one label around its threshold, and the F1 the learnt
thresholds reach on the test rows against a threshold of 0 for every label.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.metrics import f1_score
from sklearn.preprocessing import MinMaxScaler

from mlneighbors import BKNN
from mlneighbors.datasets import load_dataset

train, test = load_dataset("emotions", split="train"), load_dataset("emotions", split="test")
scaler = MinMaxScaler().fit(train.X)
model = BKNN(n_per_label=5).fit(scaler.transform(train.X), train.Y)
print("sigma_ =", round(model.sigma_, 4))
for name, h, f1 in zip(train.label_names, model.thresholds_, model.train_fscores_, strict=True):
    print(f"{name:18s} threshold {h:+.3f}  training F1 {f1:.3f}")

# decision_function is the margin f - h: add the thresholds back for the scores themselves
f_test = model.decision_function(scaler.transform(test.X)) + model.thresholds_

f1_at = {"learnt": [], "zero": []}
for j in range(len(train.label_names)):
    f1_at["learnt"].append(f1_score(test.Y[:, j], f_test[:, j] > model.thresholds_[j]))
    f1_at["zero"].append(f1_score(test.Y[:, j], f_test[:, j] > 0))
print("test F1 per label at the learnt thresholds:", np.round(f1_at["learnt"], 3))
print("test F1 per label at a threshold of 0:     ", np.round(f1_at["zero"], 3))
print(f"macro F1 on the test rows: learnt {np.mean(f1_at['learnt']):.3f}, "
      f"0 for every label {np.mean(f1_at['zero']):.3f}")

# %%
# The thresholds, and one label's scores
# --------------------------------------
# Top: each label's learnt threshold h (left) and the F1 it reaches, on the training rows where
# it was chosen and on the test rows (right). Bottom: the balanced scores of the test rows for
# "amazed-suprised" (the dataset's spelling), split by whether the row carries the label.

plt.rcParams.update({"font.size": 14})
fig = plt.figure(figsize=(7, 9.5), layout="constrained")
top, bottom = fig.subfigures(2, 1, height_ratios=[1, 1])
left, right = top.subplots(1, 2, sharey=True)
y = np.arange(len(train.label_names))
left.barh(y, model.thresholds_, color="C0")
left.axvline(0, color="grey", lw=1)
left.set_yticks(y, train.label_names)
left.invert_yaxis()
left.set_xlabel("threshold h")
left.tick_params(axis="x", labelsize=12)
right.plot(model.train_fscores_, y, "o", color="C3", markersize=8, label="training rows")
right.plot(f1_at["learnt"], y, "D", color="C2", markersize=8, markerfacecolor="none", markeredgewidth=2,
           label="test rows")
right.set_xlim(0, 1)
right.set_xlabel("F1 at h")
right.grid(axis="x", alpha=0.3)
top.legend(*right.get_legend_handles_labels(), loc="outside lower center", ncols=2, frameon=False)
top.suptitle("BKNN on emotions (b = 5): one threshold per label")

ax = bottom.subplots()
label = 0
bins = np.linspace(f_test[:, label].min(), f_test[:, label].max(), 30)
ax.hist(f_test[test.Y[:, label] == 1, label], bins, alpha=0.6, label="rows with the label")
ax.hist(f_test[test.Y[:, label] == 0, label], bins, alpha=0.6, label="rows without it")
ax.axvline(model.thresholds_[label], color="k", ls="--", label=f"learnt threshold ({model.thresholds_[label]:+.3f})")
ax.set_xlabel("balanced score f")
ax.set_ylabel("test rows")
ax.set_title(f"{train.label_names[label]!r}, test rows")
bottom.legend(*ax.get_legend_handles_labels(), loc="outside lower center", ncols=2, frameon=False)
plt.show()

# %%
# What the figure shows
# ---------------------
# The learnt thresholds are small, from -0.006 to +0.045, on scores that spread from about -0.3 to
# +0.5: each moves its label's decision only a little from 0. For "amazed-suprised" most test rows
# with the label score above the threshold and most rows without it below; the two groups overlap
# just above it (up to about 0.15), where a threshold cannot avoid errors either way. The F1
# reached on the training rows predicts the test F1 only roughly: within 0.07 for four labels,
# 0.08 too high for "relaxing-calm" and 0.13 too low for "sad-lonely". Against a threshold of 0
# for every label, the learnt ones raise the test macro F1 from 0.679 to 0.696, not for every
# label ("relaxing-calm" drops from 0.767 to 0.689): the thresholds are chosen on 391 training
# rows and judged on 202 test rows, and both are small samples.
