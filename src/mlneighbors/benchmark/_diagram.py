"""The critical-difference diagram (Demšar 2006, Fig. 1), drawn with matplotlib.

The rank axis runs from 1 (the best) on the left to k on the right, with the critical difference
drawn as a bar above it. Each model hangs from its average rank: the better half is named on the
left, the worse half on the right, each line reaching its name without crossing another. Thick
bars under the axis join the groups of models that Nemenyi's test does not separate (average
ranks less than the critical difference apart), or, given ``groups``, any other maximal runs (those
of the Holm-corrected Wilcoxon tests, without the critical difference); only maximal groups are drawn.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from numpy.typing import ArrayLike

from .._files import atomic_path

__all__ = ["cd_diagram", "cliques"]

#: the formats by suffix
_FORMATS = {".png": "png", ".svg": "svg"}


def cliques(average_ranks: ArrayLike, cd: float) -> list[tuple[int, int]]:
    """The maximal runs of models (by rank order) that the critical difference does not separate.

    Parameters
    ----------
    average_ranks : array-like of shape (n_models,)
        The models' average ranks.
    cd : float
        The critical difference.

    Returns
    -------
    list of tuple of int
        ``(first, last)`` positions in the ascending order of ``average_ranks``, ``first < last``:
        the models at those positions and between are pairwise less than ``cd`` apart. A model
        separated from every other is in none.

    Examples
    --------
    >>> from mlneighbors.benchmark._diagram import cliques
    >>> cliques([1.0, 1.5, 2.4, 3.9], cd=1.0)
    [(0, 1), (1, 2)]
    """
    ranks = np.sort(np.asarray(average_ranks, dtype=np.float64))
    found, reach = [], 0
    for i in range(ranks.size):
        # the same rule as Nemenyi's pairs: separated at a difference of at least cd
        last = int(np.searchsorted(ranks, ranks[i] + cd * (1 - 1e-12), side="left")) - 1
        if last > i and last > reach:
            found.append((i, last))
            reach = last
    return found


def cd_diagram(
    average_ranks: ArrayLike,
    models: Sequence[str],
    cd: float | None,
    path: str | os.PathLike[str],
    *,
    title: str | None = None,
    groups: Sequence[tuple[int, int]] | None = None,
) -> Path:
    """Draw a critical-difference diagram into a PNG or SVG file.

    Parameters
    ----------
    average_ranks : array-like of shape (n_models,)
        The models' average ranks (1 the best).
    models : sequence of str
        Their names.
    cd : float or None
        Nemenyi's critical difference; None draws no critical difference (the bars then come
        from ``groups``).
    path : str or os.PathLike
        Ending in ``.png`` or ``.svg``; written whole or not at all.
    title : str, optional
        A line above the diagram.
    groups : sequence of tuple of int, optional
        The bars, as ``(first, last)`` positions in the ascending order of ``average_ranks``
        (:func:`cliques`' form; :func:`mlneighbors.benchmark.wilcoxon_cliques` gives those of
        the Holm-corrected Wilcoxon tests); by default ``cliques(average_ranks, cd)``.

    Returns
    -------
    pathlib.Path
        ``path``.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from mlneighbors.benchmark._diagram import cd_diagram
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     out = cd_diagram([1.2, 2.1, 2.7], ["A", "B", "C"], 1.1, pathlib.Path(folder) / "cd.svg")
    ...     out.stat().st_size > 0
    True
    """
    path = Path(path)
    fmt = _FORMATS.get(path.suffix.lower())
    if fmt is None:
        raise ValueError(f"a critical-difference diagram is written as PNG or SVG: {path} ends in "
                         f"{path.suffix or 'no suffix'!r}, not one of {sorted(_FORMATS)}")
    ranks = np.asarray(average_ranks, dtype=np.float64)
    names = [str(m) for m in models]
    if ranks.ndim != 1 or ranks.size != len(names) or ranks.size < 2:
        raise ValueError(f"average_ranks and models must name the same 2 or more models; got {ranks.size} ranks "
                         f"and {len(names)} names")
    try:
        from matplotlib.figure import Figure
    except ImportError as exc:
        raise ImportError("the critical-difference diagram needs matplotlib: pip install 'mlneighbors[plot]'") from exc

    if cd is None and groups is None:
        raise ValueError("cd_diagram needs the critical difference or the groups to draw")
    k = ranks.size
    order = np.argsort(ranks, kind="stable")
    groups = cliques(ranks, cd) if groups is None else [(int(i), int(last)) for i, last in groups]
    half = (k + 1) // 2
    # vertical layout in "rows" (y grows downwards): CD bar, axis, group bars, then one row per name
    step, bar_gap = 0.55, 0.3
    first_row = 0.45 + bar_gap * len(groups) + 0.25
    bottom = first_row + step * (half - 1) + 0.4
    top = -1.7 if title is None else -2.3 - 0.35 * title.count("\n")
    fig = Figure(figsize=(7.0, 0.32 * (bottom - top) + 0.2))
    ax = fig.add_axes((0.22, 0.02, 0.56, 0.96))
    ax.set_xlim(1, k)
    ax.set_ylim(bottom, top)
    ax.set_axis_off()
    line = {"color": "black", "linewidth": 0.9, "solid_capstyle": "butt", "clip_on": False}

    # the rank axis, 1 to k, with half-rank ticks
    ax.plot([1, k], [0, 0], **line)
    for tick in np.arange(1, k + 0.25, 0.5):
        ax.plot([tick, tick], [0, -0.18 if tick == int(tick) else -0.1], **line)
        if tick == int(tick):
            ax.text(tick, -0.28, f"{int(tick)}", ha="center", va="bottom", fontsize=9)

    # the critical difference, from rank 1; one wider than the axis (few datasets) is drawn to
    # its end, open, and says that it separates nothing
    if cd is not None:
        cd_y = -1.05
        end = min(1 + cd, k)
        ax.plot([1, end], [cd_y, cd_y], **line)
        for tick in (1, end) if 1 + cd <= k else (1,):
            ax.plot([tick, tick], [cd_y - 0.1, cd_y + 0.1], **line)
        label = f"CD = {cd:.3f}" if 1 + cd <= k else f"CD = {cd:.3f}, wider than the ranks: no pair can be separated"
        ax.text((1 + end) / 2, cd_y - 0.14, label, ha="center", va="bottom", fontsize=9)
    if title is not None:
        ax.text((1 + k) / 2, -1.75, title, ha="center", va="bottom", fontsize=9, parse_math=False)

    # names are shown as written (parse_math=False: a "$" in a label is not mathtext)
    # every model hangs from its rank to its name; the better half to the left, the worse to the right
    span = k - 1
    for row, j in enumerate(order[:half]):
        y = first_row + step * row
        ax.plot([ranks[j], ranks[j], 1 - 0.06 * span], [0, y, y], **line)
        ax.text(1 - 0.07 * span, y, f"{names[j]} ({ranks[j]:.2f})", ha="right", va="center", fontsize=9,
                parse_math=False)
    for row, j in enumerate(order[half:][::-1]):
        y = first_row + step * row
        ax.plot([ranks[j], ranks[j], k + 0.06 * span], [0, y, y], **line)
        ax.text(k + 0.07 * span, y, f"({ranks[j]:.2f}) {names[j]}", ha="left", va="center", fontsize=9,
                parse_math=False)

    # the groups not separated by the critical difference: thick bars, a little wider than the group
    sorted_ranks = ranks[order]
    for g, (i, last) in enumerate(groups):
        y = 0.45 + bar_gap * g
        ax.plot([sorted_ranks[i] - 0.02 * span, sorted_ranks[last] + 0.02 * span], [y, y],
                color="black", linewidth=3.0, solid_capstyle="butt", clip_on=False)

    with atomic_path(path) as tmp:
        # no creation date in the file, so that the same report draws the same bytes
        fig.savefig(tmp, format=fmt, dpi=150, bbox_inches="tight", pad_inches=0.1,
                    metadata={"Date": None} if fmt == "svg" else None)
    return path
