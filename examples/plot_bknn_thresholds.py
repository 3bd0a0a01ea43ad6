"""
BKNN's per-label thresholds
===========================

BKNN scores every label by its share of the query's similarity mass among the ``b`` nearest
members of each label, then predicts a label when the score ``f`` exceeds a threshold learnt
for that label: the one maximising F1 on the training rows' leave-one-out scores. Here on
emotions' standard split (b = 5): the thresholds, the F1 they reach on the training rows, and
the training scores of one label around its threshold.
"""

import matplotlib.pyplot as plt
import numpy as np
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

fig, axes = plt.subplots(1, 2, figsize=(12, 4.2), layout="constrained", width_ratios=[1, 1.3])
y = np.arange(len(train.label_names))
axes[0].barh(y, model.thresholds_, color="C0", label="threshold h")
axes[0].scatter(model.train_fscores_, y, color="C3", zorder=3, label="training F1 at h")
axes[0].set_yticks(y, train.label_names)
axes[0].invert_yaxis()
axes[0].axvline(0, color="grey", lw=1)
axes[0].legend(loc="lower right")
axes[0].set_title("one threshold per label")

label = 0
bins = np.linspace(f_test[:, label].min(), f_test[:, label].max(), 30)
axes[1].hist(f_test[test.Y[:, label] == 1, label], bins, alpha=0.6, label="rows with the label")
axes[1].hist(f_test[test.Y[:, label] == 0, label], bins, alpha=0.6, label="rows without it")
axes[1].axvline(model.thresholds_[label], color="k", ls="--", label="learnt threshold")
axes[1].set_xlabel("balanced score f")
axes[1].set_title(f"'{train.label_names[label]}' on the test rows")
axes[1].legend()
fig.suptitle("BKNN on emotions (b = 5)")
plt.show()
