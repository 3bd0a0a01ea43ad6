"""Writers of tiny data files in every format the readers take, for the tests of reading.

Each writes the given rows as they are: the tests choose names, orders and gaps (NaN is
written as the format's missing value: ``?`` in ARFF, an empty cell in CSV, ``nan`` in
libsvm and a NaN in ``.mat``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import scipy.io


def _text(value: float) -> str:
    return "?" if np.isnan(value) else f"{value:g}"


def write_arff(
    path: Path,
    names: Sequence[str],
    rows: np.ndarray,
    *,
    labels: Sequence[str] = (),
    relation: str = "own",
    sparse: bool = False,
) -> Path:
    """``names`` in file order; those in ``labels`` are declared {0,1}, the others numeric."""
    lines = [f"@relation '{relation}'"]
    lines += [f"@attribute {name} {'{0,1}' if name in labels else 'numeric'}" for name in names]
    lines.append("@data")
    for row in np.asarray(rows, dtype=float):
        if sparse:
            lines.append("{" + ",".join(f"{j} {_text(v)}" for j, v in enumerate(row) if v != 0) + "}")
        else:
            lines.append(",".join(_text(v) for v in row))
    path.write_text("\n".join(lines) + "\n")
    return path


def write_xml(path: Path, labels: Sequence[str]) -> Path:
    path.write_text('<labels xmlns="http://mulan.sourceforge.net/labels">'
                    + "".join(f'<label name="{name}"/>' for name in labels) + "</labels>\n")
    return path


def write_csv(path: Path, names: Sequence[str] | None, rows: np.ndarray) -> Path:
    """``names``: the header (None: a file without one)."""
    lines = [] if names is None else [",".join(names)]
    lines += [",".join("" if np.isnan(v) else f"{v:g}" for v in row) for row in np.asarray(rows, dtype=float)]
    path.write_text("\n".join(lines) + "\n")
    return path


def write_svm(path: Path, X: np.ndarray, Y: np.ndarray | None = None, *, base: int = 1) -> Path:
    """Feature indices from ``base`` (libsvm's own: 1); rows with no label (Y None or a zero
    row) start with the pairs."""
    lines = []
    for i, x in enumerate(np.asarray(X, dtype=float)):
        labels = "" if Y is None else ",".join(str(j) for j in np.flatnonzero(Y[i]))
        pairs = " ".join(f"{j + base}:{v:g}" for j, v in enumerate(x) if v != 0 or np.isnan(v))
        lines.append(f"{labels} {pairs}".strip())
    path.write_text("\n".join(lines) + "\n")
    return path


def write_mat(path: Path, **arrays: np.ndarray) -> Path:
    scipy.io.savemat(path, arrays)
    return path
