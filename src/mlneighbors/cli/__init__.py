"""The ``mlneighbors`` command line.

Commands: ``datasets`` (the registry), ``fetch`` (downloads), ``evaluate`` (one model's
metrics), ``compare`` (models side by side), ``fit`` and ``predict`` (a saved model for a
user's own files), ``reproduce`` (a paper's tables and figures, beside the paper's
numbers) and ``crossover`` (this machine's costs of the exact search, and from how many rows
``--backend auto`` uses an approximate index).

Uses only the public API.  Every command that prints results takes ``--format
table|json|csv`` (JSON and CSV carry the dataset, protocol, seed, model parameters and the
library's version); a bad argument prints one line naming the problem and the valid
choices, and exits with status 2; Ctrl-C prints one line and exits with 130, leaving no
half-written output (a second Ctrl-C while it winds down is ignored).  A run prints what it
computes (model, data, protocol, scaling) before it starts, then progress bars that move
within each fold (the blocks of every neighbour search; tqdm, when it is installed) on
standard error when it is a terminal, unless ``--quiet``.  Warnings are printed as one line,
``warning: ...``.
"""

from ._common import CLIError, format_rows
from ._main import build_parser, main, run

__all__ = ["CLIError", "build_parser", "format_rows", "main", "run"]
