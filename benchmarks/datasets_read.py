"""Save what every shared dataset reads as, or compare it with a saved record.

A change to the readers must leave every shared dataset as it was: record the data before the
change, then compare after it::

    python benchmarks/datasets_read.py save before.json
    # ... the change ...
    python benchmarks/datasets_read.py compare before.json

Every registered dataset is read through the registry (each split it ships), and every ARFF
and ``.mat`` file of the data directory through ``load_file`` as a user would give it. Each
read is recorded as a hash of X (values and sparsity structure), Y and the feature and label
names, with its notes, or the one-line error it gives.  ``compare`` prints each read whose
data, notes or error changed and exits 1 when any data changed (changed notes alone are shown
but accepted: they are what a reader says, not what it reads).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp


def _digest(data: Any) -> str:
    h = hashlib.sha256()
    X = data.X
    if sp.issparse(X):
        X = sp.csr_matrix(X)
        X.sort_indices()
        parts = (X.indptr, X.indices, X.data)
    else:
        parts = (X,)
    for part in (*parts, data.Y):
        h.update(np.ascontiguousarray(part).tobytes())
    h.update(json.dumps([list(X.shape), list(data.Y.shape), data.feature_names, data.label_names]).encode())
    return h.hexdigest()[:16]


def record() -> dict[str, dict[str, Any]]:
    from mlneighbors.datasets import get_data_home, get_dataset_spec, list_datasets, load_dataset, load_file

    reads: dict[str, dict[str, Any]] = {}
    warnings.simplefilter("ignore")
    for name in list_datasets():
        for split in get_dataset_spec(name).splits:
            data = load_dataset(name, split)
            reads[f"registry {name} {split}"] = {"data": _digest(data), "notes": data.notes}
    home = get_data_home()
    for path in sorted(home.glob("*/*")):
        if not path.name.endswith((".arff", ".arff.gz", ".mat")):
            continue
        key = f"load_file {path.relative_to(home)}"
        try:
            data = load_file(path)
        except ValueError as exc:
            reads[key] = {"error": str(exc).replace(str(home), "<data>")}
            continue
        reads[key] = {"data": _digest(data), "notes": [n.replace(str(home), "<data>") for n in data.notes]}
    return reads


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=("save", "compare"))
    parser.add_argument("path", type=Path)
    args = parser.parse_args(argv)
    now = record()
    if args.action == "save":
        args.path.write_text(json.dumps(now, indent=1))
        print(f"recorded {len(now)} reads in {args.path}")
        return 0
    before = json.loads(args.path.read_text())
    changed_data = 0
    for key in sorted(set(before) | set(now)):
        old, new = before.get(key), now.get(key)
        if old == new:
            continue
        if old is None or new is None or old.get("data") != new.get("data"):
            changed_data += 1
            print(f"DATA  {key}: {old} -> {new}")
        else:
            print(f"notes {key}:\n  before: {old.get('notes', old.get('error'))}\n  after:  "
                  f"{new.get('notes', new.get('error'))}")
    same = len([k for k in now if before.get(k, {}).get("data") == now[k].get("data")])
    print(f"{same} of {len(now)} reads give the same data" + ("" if changed_data else "; no data changed"))
    return 1 if changed_data else 0


if __name__ == "__main__":
    sys.exit(main())
