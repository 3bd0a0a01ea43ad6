"""
Your own CSV file to a saved model and its predictions
======================================================

A user's data usually arrive as a table. This example writes one (yeast's training rows, with
the label columns named ``Class1`` ... ``Class14`` at the end, as a spreadsheet export would
have them), then does what :doc:`/user_guide/own_data` describes, in Python and with the
command line's ``fit`` and ``predict``:

1. :func:`~mlneighbors.datasets.load_file` reads the CSV, the labels named by a column range;
2. ``mlneighbors fit`` saves a scaler and ML-kNN as one skops file;
3. :func:`mlneighbors.load` reads it back (trusting only the package's own types) and
   ``mlneighbors predict`` writes the predictions of new rows as a CSV;
4. in Python, ``load_file(..., like=model)`` reads new rows as the model's features, matched
   by name.
"""

import tempfile
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

import mlneighbors
from mlneighbors.cli import main
from mlneighbors.datasets import load_dataset, load_file

folder = Path(tempfile.mkdtemp())
train, test = load_dataset("yeast", split="train"), load_dataset("yeast", split="test")
table = pd.DataFrame(train.X, columns=train.feature_names)
table[train.label_names] = train.Y
table.to_csv(folder / "yeast-train.csv", index=False)
pd.DataFrame(test.X, columns=test.feature_names).to_csv(folder / "new-rows.csv", index=False)

data = load_file(folder / "yeast-train.csv", label_columns="-14:")
print(data.X.shape, data.Y.shape, data.label_names[:3])

# %%
# Fit and save with the command line (a Python call of the same ``main`` the ``mlneighbors``
# command runs), then load the file in Python.

main(["fit", "mlknn", str(folder / "yeast-train.csv"), "--label-columns=-14:",
      "--out", str(folder / "yeast.skops"), "--k", "10", "--quiet"])
model = mlneighbors.load(folder / "yeast.skops")
print(model)

# %%
# Predict the new rows: one 0/1 column per label, named as in the training file, then one
# score column per label (``--scores``).

main(["predict", str(folder / "yeast.skops"), str(folder / "new-rows.csv"),
      "--out", str(folder / "predictions.csv"), "--scores", "--quiet"])
predictions = pd.read_csv(folder / "predictions.csv")
print(predictions.iloc[:3, :6])
label_columns = [c for c in predictions.columns if c in train.label_names]
score_columns = [c for c in predictions.columns if c not in train.label_names]

# %%
# The same rows in Python, from a file whose columns come in reverse order: ``like=model``
# matches them to the model's features by name (``fit`` kept the training file's names), and
# the notes say they were reordered.

pd.read_csv(folder / "new-rows.csv").iloc[:, ::-1].to_csv(folder / "reversed.csv", index=False)
new = load_file(folder / "reversed.csv", like=model)
print(new.notes)
print("same predictions as the command line:",
      (model.predict(new.X) == predictions[label_columns].to_numpy()).all())

# %%
# The scores of the first rows, and how often each label is predicted against how often the
# test rows carry it.

fig, axes = plt.subplots(1, 2, figsize=(12, 4.2), layout="constrained", width_ratios=[1.2, 1])
im = axes[0].imshow(predictions[score_columns].to_numpy()[:40].T, aspect="auto", cmap="viridis", vmin=0, vmax=1)
axes[0].set_yticks(range(len(label_columns)), label_columns)
axes[0].set_xlabel("new row")
axes[0].set_title("predictions.csv: the scores of the first 40 rows")
fig.colorbar(im, ax=axes[0], shrink=0.8)
x = np.arange(len(label_columns))
axes[1].bar(x - 0.2, test.Y.mean(axis=0), 0.4, label="true (test labels)")
axes[1].bar(x + 0.2, predictions[label_columns].mean(axis=0), 0.4, label="predicted")
axes[1].set_xticks(x, [c.replace("Class", "") for c in label_columns])
axes[1].set_xlabel("label")
axes[1].set_title("share of rows with each label")
axes[1].legend()
plt.show()
