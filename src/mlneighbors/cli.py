"""The ``mlneighbors`` command line.

Uses only the public API. Every command that prints results takes ``--format
table|json|csv``; a bad argument prints one line naming the problem and the valid
choices, and exits with status 2.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import sys
from collections.abc import Sequence
from typing import Any

from . import __version__

FORMATS = ("table", "json", "csv")


class CLIError(Exception):
    """A user error: printed as one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one clear line, not a usage dump
        raise CLIError(f"{self.prog}: {message}")


def format_rows(rows: list[dict[str, Any]], fmt: str, columns: Sequence[str] | None = None) -> str:
    """Render a list of flat records as an aligned text table, JSON or CSV."""
    columns = list(columns) if columns is not None else (list(rows[0]) if rows else [])
    if fmt == "json":
        return json.dumps([{c: r.get(c) for c in columns} for r in rows], indent=2)
    if fmt == "csv":
        buf = io.StringIO()
        writer = csv.DictWriter(buf, fieldnames=columns, extrasaction="ignore", lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
        return buf.getvalue().rstrip("\n")
    cells = [[_cell(r.get(c)) for c in columns] for r in rows]
    widths = [max([len(c)] + [len(row[i]) for row in cells]) for i, c in enumerate(columns)]
    numeric = [all(_is_number(r.get(c)) for r in rows) for c in columns]

    def line(values: Sequence[str]) -> str:
        return "  ".join(
            v.rjust(w) if num else v.ljust(w) for v, w, num in zip(values, widths, numeric)
        ).rstrip()

    out = [line(columns), line(["-" * w for w in widths])]
    out.extend(line(row) for row in cells)
    return "\n".join(out)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) or value is None


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.4f}"
    return str(value)


def _file_state(statuses: list[Any]) -> str:
    required = [s for s in statuses if s.spec.required]
    missing = sum(not s.present for s in required)
    bad = [s for s in statuses if s.present and s.verified is False]
    if bad:
        return "checksum mismatch: " + ", ".join(s.path.name for s in bad)
    if missing:
        return f"missing {missing}/{len(required)}"
    if any(s.verified is None for s in required):
        return "present (not verified)"
    return "present, verified"


def _cmd_datasets(args: argparse.Namespace) -> int:
    from .datasets import dataset_status, get_data_home, get_dataset_spec, list_datasets

    home = get_data_home(args.data_home)
    rows = []
    for name in list_datasets():
        spec = get_dataset_spec(name)
        stats = spec.stats["all"]
        rows.append(
            {
                "dataset": name,
                "domain": spec.domain.split(" (")[0],
                "splits": "/".join(spec.splits),
                "n_samples": stats.n_samples,
                "n_features": stats.n_features,
                "n_labels": stats.n_labels,
                "cardinality": stats.cardinality,
                "files": _file_state(dataset_status(name, home, verify=not args.no_verify)),
            }
        )
    if args.format == "table":
        source = "--data-home" if args.data_home else (
            "$MLNEIGHBORS_DATA" if os.environ.get("MLNEIGHBORS_DATA") else "per-user cache"
        )
        print(f"data directory: {home} ({source})")
    print(format_rows(rows, args.format))
    return 0


def _cmd_fetch(args: argparse.Namespace) -> int:
    from .datasets import fetch_dataset, get_dataset_spec, list_datasets

    names = list_datasets() if args.names == ["all"] else args.names
    for name in names:
        get_dataset_spec(name)  # all names checked before anything is downloaded
    for name in names:
        paths = fetch_dataset(name, args.data_home, mirror=args.mirror)
        if not args.quiet:
            print(f"{name}: {len(paths)} files present and verified")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="mlneighbors",
        description="Lazy (k-nearest-neighbour) multi-label classification.",
    )
    parser.add_argument("--version", action="version", version=f"mlneighbors {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True

    p = sub.add_parser("datasets", help="list the registered datasets and whether their files are present and verified")
    p.add_argument("--data-home", metavar="DIR", help="data directory (default: $MLNEIGHBORS_DATA, else a per-user cache)")
    p.add_argument("--format", choices=FORMATS, default="table")
    p.add_argument("--no-verify", action="store_true", help="do not compute checksums")
    p.set_defaults(func=_cmd_datasets)

    p = sub.add_parser("fetch", help="download datasets (verified by sha256) into the data directory")
    p.add_argument("names", nargs="+", metavar="DATASET", help="registered names, or 'all'")
    p.add_argument("--data-home", metavar="DIR")
    p.add_argument("--mirror", metavar="URL", help="base URL serving <folder>/<file> instead of the sources")
    p.add_argument("--quiet", action="store_true")
    p.set_defaults(func=_cmd_fetch)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        return int(args.func(args))
    except CLIError as exc:
        print(str(exc), file=sys.stderr)
        return 2
    except (ValueError, OSError, ImportError) as exc:
        print(f"mlneighbors: error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
