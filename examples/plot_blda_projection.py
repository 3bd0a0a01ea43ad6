"""
BLDA's projection
=================

BLDA (class-balanced multi-label LDA) projects the features onto at most ``L - 1`` directions
that separate the labels, every row contributing once per label it carries. Here emotions (72
audio features, 6 labels) projected to its first two BLDA directions, beside the first two
principal components (PCA) for comparison; each point is a test row, coloured by whether it
carries the label "happy-pleased".
"""

import matplotlib.pyplot as plt
from sklearn.decomposition import PCA
from sklearn.preprocessing import MinMaxScaler

from mlneighbors import BLDA
from mlneighbors.datasets import load_dataset

train, test = load_dataset("emotions", split="train"), load_dataset("emotions", split="test")
scaler = MinMaxScaler().fit(train.X)
X_train, X_test = scaler.transform(train.X), scaler.transform(test.X)

blda = BLDA().fit(X_train, train.Y)
pca = PCA(n_components=2).fit(X_train)
print("BLDA components:", blda.n_components_, " eigenvalues:", blda.eigenvalues_.round(3))

label = train.label_names.index("happy-pleased")
has = test.Y[:, label] == 1
fig, axes = plt.subplots(1, 2, figsize=(11, 4.5), layout="constrained")
for ax, (title, Z) in zip(axes, [("PCA", pca.transform(X_test)), ("BLDA", blda.transform(X_test)[:, :2])], strict=True):
    ax.scatter(Z[~has, 0], Z[~has, 1], s=12, alpha=0.6, label="without happy-pleased")
    ax.scatter(Z[has, 0], Z[has, 1], s=12, alpha=0.8, label="with happy-pleased")
    ax.set_title(f"{title}: first two directions")
    ax.set_xlabel("1st")
    ax.set_ylabel("2nd")
axes[0].legend()
fig.suptitle("emotions test rows, projected with directions learnt on the training rows")
plt.show()
