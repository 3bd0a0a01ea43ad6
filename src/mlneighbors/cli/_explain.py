"""The ``explain`` command: why a saved model predicts what it does for a few rows of a file."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ._common import CLIError, note
from ._data import add_data_args, read_file

#: rows explained unless --rows says otherwise: an explanation is a table per row
DEFAULT_ROWS = 10


def add_explain_parser(sub: Any) -> None:
    """The ``explain`` sub-command's parser."""
    p = sub.add_parser("explain", help="why a saved model predicts what it does for the rows of a file: each "
                                       "row's neighbours and the model's decision terms per label",
                       description="For each row of ROWS (the first --rows of them): the model's prediction, "
                                   "its decision quantities per label (ML-kNN's count, prior, likelihoods and "
                                   "posterior; BRkNN's vote share and threshold; BKNN's balanced score and "
                                   "learned threshold; ...) and the neighbours that gave them (training "
                                   "identifiers, distances, labels). A table per row, or JSON.")
    p.add_argument("model_file", metavar="MODEL_FILE", help="a model written by 'mlneighbors fit'")
    add_data_args(p, test=False, data_help="rows to explain: a file with the training file's features (ARFF, "
                  "libsvm, .mat or CSV), matched by name where both files name them, else by position; "
                  "label columns, if present, are not read")
    p.add_argument("--format", choices=("text", "json"), default="text",
                   help="text: a table per row (default); json: one record per row (Explanation.to_json)")
    p.add_argument("--rows", type=int, metavar="N", default=DEFAULT_ROWS,
                   help=f"explain the first N rows of the file (default {DEFAULT_ROWS})")
    p.add_argument("--max-labels", type=int, metavar="N", default=20,
                   help="text: labels shown per row, the predicted and best scored first (default 20)")
    p.add_argument("--quiet", action="store_true", help="no notes on standard error")
    p.set_defaults(func=cmd_explain)


def _as_explain(exc: CLIError) -> CLIError:
    """predict's loading errors, in explain's name."""
    return CLIError(str(exc).replace("mlneighbors predict:", "mlneighbors explain:", 1))


def cmd_explain(args: argparse.Namespace) -> int:
    """Explanations of a saved model's predictions for the first ``--rows`` rows of DATA, on
    standard output (notes on standard error)."""
    from ._commands import _load_model, _storage_for

    if args.rows < 1:
        raise CLIError(f"mlneighbors explain: --rows must be at least 1, got {args.rows}")
    if args.max_labels < 1:
        raise CLIError(f"mlneighbors explain: --max-labels must be at least 1, got {args.max_labels}")
    try:
        model = _load_model(args.model_file)
    except CLIError as exc:
        raise _as_explain(exc) from None
    if not hasattr(model, "explain"):
        raise CLIError(f"mlneighbors explain: the model in {args.model_file} ({type(model).__name__}) cannot explain "
                       "its predictions (no explain); refit it with 'mlneighbors fit'")
    data = read_file(args.data, args, "explain", like=model)  # exactly the model's features, in its order
    X = _storage_for(model, data.X)
    n = X.shape[0]
    if n == 0:
        raise CLIError(f"mlneighbors explain: {args.data} holds no rows")
    if n > args.rows:
        note(f"explaining the first {args.rows} of the {n} rows of {args.data} (--rows N for more)", args.quiet)
    try:
        explanation = model.explain(X[: args.rows])
    except MemoryError as exc:  # the neighbours' label rows of too many rows: the estimate, in one line
        raise CLIError(f"mlneighbors explain: {' '.join(str(exc).split())} (--rows)") from None
    if args.format == "json":
        sys.stdout.write(explanation.to_json(indent=2) + "\n")
    else:
        sys.stdout.write(explanation.format(max_labels=args.max_labels) + "\n")
    return 0
