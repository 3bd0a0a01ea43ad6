"""The figure of ``docs/user_guide/live.rst``: one ML-kNN prediction explained.

Usage::

    python benchmarks/explain_figure.py [--out docs/user_guide/figures/explain_mlknn.png]

A small two-feature problem with three labels (drawn from a fixed seed, so the figure is the same
on every run): ``MLkNN(n_neighbors=5)`` is fitted with string identifiers and ``explain`` is asked
about one query.  Left: the training rows in feature space, the query and its five neighbours
(named by their identifiers, linked to the query).  Right: for each label the numbers the
prediction follows from, read off the explanation and nothing else: the neighbours' count, the
two weighted likelihoods ``a`` and ``b`` (the label is predicted where ``a >= b``) and the
posterior ``a / (a + b)``, which is ``predict_proba``.  Run it again after a change to ML-kNN's
explanation, and commit the PNG.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
LABELS = ["sport", "music", "news"]


def problem(seed: int = 3) -> tuple[np.ndarray, np.ndarray, list[str], np.ndarray]:
    """Rows around three centres, each centre making one label likely; 60 rows, 2 features."""
    rng = np.random.default_rng(seed)
    centres = np.array([[0.0, 0.0], [2.0, 0.4], [1.0, 1.8]])
    X = np.vstack([c + rng.normal(scale=0.55, size=(20, 2)) for c in centres])
    near = np.exp(-((X[:, None, :] - centres[None]) ** 2).sum(axis=2))  # (60, 3) closeness to each centre
    Y = (rng.random((60, 3)) < 0.15 + 0.8 * near).astype(int)
    ids = [f"doc-{i:02d}" for i in range(len(X))]
    return X, Y, ids, np.array([[1.05, 0.55]])


def draw(out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from mlneighbors import MLkNN

    X, Y, ids, query = problem()
    model = MLkNN(n_neighbors=5).fit(X, Y, ids=ids)
    e = model.explain(query, label_names=LABELS)
    colours = ["tab:blue", "tab:orange", "tab:green"]

    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.6), gridspec_kw={"width_ratios": [1.0, 1.15]})
    # left: the rows, one small dot per label they carry, side by side (grey: no label)
    offsets = np.array([-0.045, 0.0, 0.045])
    for j, name in enumerate(LABELS):
        rows_j = np.flatnonzero(Y[:, j])
        left.scatter(X[rows_j, 0] + offsets[j], X[rows_j, 1], s=14, color=colours[j], label=name, zorder=2)
    bare = ~Y.any(axis=1)
    left.scatter(X[bare, 0], X[bare, 1], s=14, color="lightgrey", edgecolor="grey", linewidth=0.5, zorder=2,
                 label="no label")
    rows = e.rows[0]
    lines = ["rank  id      distance  labels"]
    for rank, (r, d) in enumerate(zip(rows, e.distances[0], strict=True)):
        left.plot([query[0, 0], X[r, 0]], [query[0, 1], X[r, 1]], color="black", linewidth=0.7, zorder=1)
        left.scatter(*X[r], s=170, facecolor="none", edgecolor="black", linewidth=1.0, zorder=3)
        left.annotate(str(rank + 1), X[r], xytext=(6, 5), textcoords="offset points", fontsize=8, fontweight="bold")
        carried = ", ".join(LABELS[j] for j in np.flatnonzero(e.neighbor_labels[0, rank])) or "none"
        lines.append(f"{rank + 1:<5} {e.ids[0, rank]:<7} {d:<9.2f} {carried}")
    left.scatter(*query[0], s=240, marker="*", color="crimson", edgecolor="black", zorder=4, label="query")
    left.text(0.99, 0.02, "\n".join(lines), transform=left.transAxes, ha="right", va="bottom",
              multialignment="left", family="monospace", fontsize=7.5,
              bbox={"facecolor": "white", "edgecolor": "grey", "alpha": 0.9})
    left.legend(loc="upper left", fontsize=8, frameon=False)
    low, high = left.get_ylim()
    left.set_ylim(low - 0.45 * (high - low), high)  # room below the rows for the neighbours' table
    left.set_title("the query's 5 nearest training rows (by identifier)", fontsize=10)
    left.set_xlabel("feature 1")
    left.set_ylabel("feature 2")

    # right: a and b per label (the prediction is a >= b), the posterior and the count above them
    t = e.terms
    pos = np.arange(len(LABELS))
    width = 0.36
    right.bar(pos - width / 2, t["a"][0], width, color=[colours[j] for j in pos], label="a = P(H1) P(E_count | H1)")
    right.bar(pos + width / 2, t["b"][0], width, color="lightgrey", edgecolor="grey",
              label="b = P(H0) P(E_count | H0)")
    top = max(t["a"][0].max(), t["b"][0].max())
    for j in pos:
        verdict = "predicted" if e.predictions[0, j] else "not predicted"
        right.text(j, top * 1.08, f"count {t['count'][0, j]} of 5\nposterior {t['posterior'][0, j]:.3f}\n{verdict}",
                   ha="center", va="bottom", fontsize=8.5, fontweight="bold" if e.predictions[0, j] else "normal")
    right.set_xticks(pos, LABELS)
    right.set_ylim(0, top * 1.45)
    right.set_ylabel("weighted likelihood")
    right.legend(loc="upper center", fontsize=8, frameon=False, bbox_to_anchor=(0.5, -0.08), ncol=2)
    right.set_title("ML-kNN's terms per label: predicted where a >= b", fontsize=10)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)
    print(f"wrote {out}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "user_guide" / "figures" / "explain_mlknn.png")
    draw(parser.parse_args().out)


if __name__ == "__main__":
    main()
