"""The parser and ``main``."""

from __future__ import annotations

import argparse
import os
import signal
import sys
import warnings
from collections.abc import Sequence

from .. import __version__
from .._progress import listen
from ..exceptions import ChecksumError, DatasetNotFoundError
from ._benchmark import add_benchmark_parser
from ._commands import (
    DEFAULT_OUT,
    cmd_compare,
    cmd_crossover,
    cmd_datasets,
    cmd_evaluate,
    cmd_fetch,
    cmd_fit,
    cmd_predict,
    cmd_reproduce,
)
from ._common import DEFAULT_METRICS, FORMATS, CLIError, Parser, progress_listener, show_warning
from ._data import add_data_args, add_scale_arg
from ._explain import add_explain_parser
from ._live import add_id_column_arg, add_live_parsers
from ._models import add_backend_args


def _model_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--k", type=int, metavar="K", help="neighbours (b for bknn / blda-bknn); default: the model's")
    p.add_argument("--param", action="append", metavar="KEY=VALUE",
                   help="a model parameter (repeatable); 'model.key=value' for one model of compare")
    p.add_argument("--seed", type=int, default=0, help="seed of the folds and of k-means (default 0)")


def _evaluate_args(p: argparse.ArgumentParser) -> None:
    add_data_args(p)
    _model_args(p)
    group = p.add_mutually_exclusive_group()
    group.add_argument("--cv", type=int, metavar="N", help="N-fold stratified cross-validation")
    group.add_argument("--split", action="store_true",
                       help="the dataset's standard train/test split (the default where it ships one; "
                            "else --cv 10)")
    add_scale_arg(p)
    p.add_argument("--metrics", metavar="M1,M2", help=f"metrics to report (default: {','.join(DEFAULT_METRICS)})")
    add_backend_args(p)
    p.add_argument("--format", choices=FORMATS, default="table")
    p.add_argument("--quiet", action="store_true",
                   help="no progress bars, no notes (and with --format json|csv no header on stderr)")


def build_parser() -> argparse.ArgumentParser:
    from .. import MODELS
    from ..experiments import list_papers

    parser = Parser(prog="mlneighbors", description="Lazy (k-nearest-neighbour) multi-label classification.")
    parser.add_argument("--version", action="version", version=f"mlneighbors {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    sub.required = True

    p = sub.add_parser("datasets", help="list the registered datasets and whether their files are present and verified")
    p.add_argument("--data-home", metavar="DIR", help="data directory (default: $MLNEIGHBORS_DATA, else "
                   "../shared/datasets beside a source checkout, else a per-user cache)")
    p.add_argument("--format", choices=FORMATS, default="table")
    p.add_argument("--no-verify", action="store_true", help="do not compute checksums")
    p.set_defaults(func=cmd_datasets)

    p = sub.add_parser("fetch", help="download datasets (verified by sha256) into the data directory")
    p.add_argument("names", nargs="+", metavar="DATASET", help="registered names, or 'all'")
    p.add_argument("--data-home", metavar="DIR")
    p.add_argument("--mirror", metavar="URL", help="base URL serving <folder>/<file> instead of the sources")
    p.add_argument("--quiet", action="store_true")
    p.set_defaults(func=cmd_fetch)

    p = sub.add_parser("crossover", help="this machine's costs of the exact search, and from how many rows "
                       "--backend auto uses an approximate index instead",
                       description="The exact search's two costs as measured on this machine (the first runs "
                       "measure them, about 0.2 s, and keep them in a per-user cache file) and the crossover they "
                       "give: the number of dense training rows from which --backend auto fits with an "
                       "approximate index (faiss-union) rather than the exact search, at a few numbers of "
                       "features. It differs between machines as their exact costs do.")
    p.add_argument("--n-features", metavar="D1,D2", help="numbers of features to give the crossover at "
                   "(default: 32,64,128,256,768)")
    p.add_argument("--format", choices=FORMATS, default="table")
    p.set_defaults(func=cmd_crossover)

    names = ", ".join(MODELS)
    models_epilog = "models:\n" + "\n".join(f"  {n:10s} {spec.description}" for n, spec in MODELS.items())
    raw = argparse.RawDescriptionHelpFormatter

    p = sub.add_parser("evaluate", help="one model's metrics on a dataset or a file (test part or CV)",
                       epilog=models_epilog, formatter_class=raw)
    p.add_argument("--model", required=True, metavar="NAME", help=f"one of: {names}")
    _evaluate_args(p)
    p.set_defaults(func=cmd_evaluate)

    p = sub.add_parser("compare", help="several models side by side on one dataset or file",
                       epilog=models_epilog, formatter_class=raw)
    p.add_argument("--models", required=True, metavar="A,B,C", help=f"comma-separated: {names}")
    _evaluate_args(p)
    p.set_defaults(func=cmd_compare)

    add_benchmark_parser(sub, models_epilog)

    p = sub.add_parser("fit", help="fit a model on all of a dataset or file and save it (a skops file)",
                       epilog=models_epilog, formatter_class=raw)
    p.add_argument("model", metavar="MODEL", help=f"one of: {names}")
    add_data_args(p, test=False)
    p.add_argument("--out", required=True, metavar="FILE", help="the model file to write (e.g. model.skops)")
    _model_args(p)
    add_scale_arg(p)
    add_backend_args(p, cluster=False)
    p.add_argument("--include-index", action="store_true",
                   help="save the built approximate index in the model file: predict then builds nothing "
                        "(a larger file; the exact search is always rebuilt, in a fraction of a second)")
    add_id_column_arg(p)
    p.add_argument("--quiet", action="store_true")
    p.set_defaults(func=cmd_fit)

    p = sub.add_parser("predict", help="predictions of a saved model for the rows of a file")
    p.add_argument("model_file", metavar="MODEL_FILE", help="a model written by 'mlneighbors fit'")
    add_data_args(p, test=False, data_help="rows to predict: a file with the training file's features (ARFF, "
                  "libsvm, .mat or CSV), matched by name where both files name them, else by position; "
                  "label columns, if present, are not read")
    p.add_argument("--out", metavar="FILE",
                   help="predictions.csv (0/1 per label, the labels' names as header, the input's row order), "
                        "or FILE.arff for a Mulan ARFF (the rows' features and predicted labels) + FILE.xml; "
                        "without it (or '-'): the CSV on standard output, notes and warnings on standard error")
    p.add_argument("--scores", action="store_true", help="add one score column per label, score:<label> (CSV)")
    p.add_argument("--top-k", type=int, metavar="N",
                   help="write per row the N best labels and their scores instead, best first: columns "
                        "label:top1,score:top1,label:top2,... (N above the number of labels: all of them; "
                        "CSV; not with --scores)")
    p.add_argument("--quiet", action="store_true")
    p.set_defaults(func=cmd_predict)

    add_explain_parser(sub)

    add_live_parsers(sub)

    p = sub.add_parser("reproduce", help="recompute a paper's tables and figures beside the paper's numbers")
    p.add_argument("paper", metavar="PAPER", help=f"{', '.join(list_papers())}, or 'all'")
    p.add_argument("--quick", action="store_true", help="a smoke run: few folds, k values and datasets")
    p.add_argument("--out", default=DEFAULT_OUT, metavar="DIR",
                   help=f"write DIR/<paper>/ (table.csv, table.md, report.md, figures); default ./{DEFAULT_OUT}")
    p.add_argument("--no-figures", action="store_true", help="skip the PNG figures (they need matplotlib)")
    p.add_argument("--seed", type=int, default=0, help="seed of the folds and of k-means (default 0)")
    p.add_argument("--data-home", metavar="DIR")
    add_backend_args(p)
    p.add_argument("--format", choices=FORMATS, default="table")
    p.add_argument("--quiet", action="store_true",
                   help="no progress bars, no summary line (and with --format json|csv no header on stderr)")
    p.set_defaults(func=cmd_reproduce)
    return parser


#: the exit status of a command whose standard output was closed before it finished writing
#: (``mlneighbors datasets | head -5``): 128 + SIGPIPE, what the shell reports for a program
#: that a closed pipe ends, so that ``set -o pipefail`` still sees the output cut short
EXIT_PIPE_CLOSED = 128 + signal.SIGPIPE if hasattr(signal, "SIGPIPE") else 1


def _pipe_closed() -> int:
    """Standard output's reader is gone: end quietly (Python's recipe for SIGPIPE). Standard
    output is pointed at the null device, so that the interpreter's last flush of what is
    still buffered cannot fail again on the way out."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # no file descriptor (stdout replaced in-process)
        pass
    return EXIT_PIPE_CLOSED


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    parsed: list[argparse.Namespace] = []
    code = 1
    try:
        code = _main(argv, parsed)
        return code
    finally:  # failed or interrupted: no empty folder left behind
        outputs = getattr(parsed[0], "outputs", None) if parsed else None
        if code != 0 and outputs is not None:
            outputs.discard_empty()


def _main(argv: Sequence[str] | None, parsed: list[argparse.Namespace]) -> int:
    args = None
    try:
        args = build_parser().parse_args(argv)
        args.argv = list(sys.argv[1:] if argv is None else argv)  # what was asked, for a store's provenance
        parsed.append(args)
        # progress bars for every long computation (when stderr is a terminal and not --quiet),
        # and warnings as one line each, without the library's source line
        with listen(progress_listener(getattr(args, "quiet", False))), warnings.catch_warnings():
            warnings.showwarning = show_warning
            return int(args.func(args))
    except KeyboardInterrupt:
        outputs = getattr(args, "outputs", None)
        print(f"mlneighbors: {outputs.interrupted() if outputs else 'interrupted'}", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader of standard output went away (| head): nothing to say
        return _pipe_closed()
    except CLIError as exc:
        print(str(exc), file=sys.stderr)
        return 2
    except (ValueError, OSError, ImportError) as exc:
        if isinstance(exc, DatasetNotFoundError) and exc.dataset:  # the command line's remedy
            exc = exc.with_hint(
                "Put the file there, point $MLNEIGHBORS_DATA or --data-home at a folder holding "
                f"it, or run 'mlneighbors fetch {exc.dataset}' to download it."
            )
        elif isinstance(exc, ChecksumError) and exc.dataset:
            exc = exc.with_hint(f"Delete it and run 'mlneighbors fetch {exc.dataset}' to get the registered file.")
        message = " ".join(str(exc).split())  # one line, whatever the exception's layout
        print(f"mlneighbors: error: {message}", file=sys.stderr)
        return 1


def run() -> None:
    """The program ``mlneighbors`` (and ``python -m mlneighbors``): :func:`main`, with Ctrl-C
    handled once.

    The first SIGINT interrupts the run (one line, exit status 130); any later one is
    ignored, so that a second Ctrl-C pressed while the run winds down (its worker threads
    finish their current block before the interpreter exits) cannot print a traceback.
    A standard output closed by its reader (``mlneighbors datasets | head -5``) ends the
    command without a word, exit status 141 (128 + SIGPIPE, what the shell reports for a
    program a closed pipe ends), whether a print or the last flush finds it closed.
    """
    interrupted = []

    def on_sigint(signum: int, frame: object) -> None:
        if interrupted:  # a second signal that arrived before the first was handled
            return
        interrupted.append(signum)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        raise KeyboardInterrupt

    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:  # not if the caller chose otherwise
        signal.signal(signal.SIGINT, on_sigint)
    try:
        code: int | str | None = main()
    except SystemExit as exc:  # --help, --version: argparse has printed, and exits
        code = exc.code
    try:  # what is still buffered, written now rather than by the interpreter on its way out
        sys.stdout.flush()
    except BrokenPipeError:
        code = _pipe_closed()
    sys.exit(code)
