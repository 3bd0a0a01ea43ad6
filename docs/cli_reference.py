"""The command line's parser as ``docs/cli.rst`` renders it (through sphinx-argparse).

sphinx-argparse parses every help text, description and epilog as reStructuredText, and Sphinx
then "smartens" plain text: ``--cv 10`` became "–cv 10" (an en dash, which a shell refuses), a
``tcp://`` address became a link, and an epilog laid out in columns for a terminal ran into one
paragraph.  :func:`build_parser` returns the command line's own parser
(``mlneighbors.cli.build_parser``, so the page lists exactly the options the installed version
takes) with its texts rewritten as reStructuredText:

- an option (``--label-columns=-3:``), a quoted value (``'a,b,c'``), an address
  (``tcp://10.0.0.5:8786``), an environment variable (``$MLNEIGHBORS_DATA``), a setting
  (``device=cuda``) and a default list (``default: hamming_loss,micro_f1``) become literals:
  typed text, copied as it is shown;
- a table of an epilog written for ``RawDescriptionHelpFormatter`` (``"models:\\n  mlknn  ML-kNN"``)
  becomes a bulleted list.

The parser itself is untouched: the terminal's ``--help`` stays as written.
"""

from __future__ import annotations

import argparse
import re

_OPTION = re.compile(r"(?<![\w`-])(--?[A-Za-z][\w-]*(?:=[^\s,;)]+)?)")
_QUOTED = re.compile(r"(?<![\w'`])'([^'\n]+?)'(?![\w'])")
_ADDRESS = re.compile(r"(?<![\w`])([a-z][a-z0-9+.-]*://[^\s,;)]+)")
_VARIABLE = re.compile(r"(?<![\w`])(\$[A-Z][A-Z0-9_]*)")
_DEFAULT = re.compile(r"(\bdefault: )([^\s`),]+,[^\s`)]+)")  # a list: "default: a,b,c"
_SETTING = re.compile(r"(?<![\w`=-])([a-z_][\w.]*=[^\s,;)]+)")  # "device=cuda"
_ROW = re.compile(r"^\s+(\S+)\s+(\S.*)$")


def _outside_literals(text: str, pattern: re.Pattern[str]) -> str:
    """``pattern``'s first group made a literal, except inside the literals already there."""
    parts = re.split(r"(``.*?``)", text)
    return "".join(part if part.startswith("``") else pattern.sub(lambda m: f"``{m.group(1)}``", part)
                   for part in parts)


def inline(text: str) -> str:
    """One help text with its typed parts (options, values, addresses) as literals.

    An option starts with one or two dashes, then a letter, after no word character: ``-h``,
    ``--k``, ``--label-columns=-3:``, never ``0-based``, ``k-means`` or ``-1``.
    """
    text = _DEFAULT.sub(lambda m: f"{m.group(1)}``{m.group(2)}``", text)
    for pattern in (_QUOTED, _ADDRESS, _VARIABLE, _SETTING, _OPTION):
        text = _outside_literals(text, pattern)
    return text


def raw_block(text: str) -> str:
    """A text laid out for a terminal: paragraphs stay, indented ``name  text`` rows become a
    bulleted list."""
    out: list[str] = []
    in_list = False
    for line in text.splitlines():
        row = _ROW.match(line)
        if row:
            if not in_list:
                out.append("")
            out.append(f"- ``{row.group(1)}``: {inline(row.group(2))}")
            in_list = True
        elif line.strip():
            if in_list:
                out.append("")
            out.append(inline(line.strip()))
            in_list = False
        else:
            out.append("")
            in_list = False
    return "\n".join(out)


def _rewrite(parser: argparse.ArgumentParser, seen: set[int]) -> None:
    if id(parser) in seen:  # a subcommand's aliases share its parser
        return
    seen.add(id(parser))
    raw = issubclass(parser.formatter_class, argparse.RawDescriptionHelpFormatter)
    if parser.description:
        parser.description = raw_block(parser.description) if raw else inline(parser.description)
    if parser.epilog:
        parser.epilog = raw_block(parser.epilog) if raw else inline(parser.epilog)
    for action in parser._actions:
        if action.help and action.help is not argparse.SUPPRESS:
            action.help = inline(action.help)
        if isinstance(action, argparse._SubParsersAction):
            for choice in action._choices_actions:
                if choice.help:
                    choice.help = inline(choice.help)
            for sub in action.choices.values():
                _rewrite(sub, seen)


def build_parser() -> argparse.ArgumentParser:
    """``mlneighbors.cli.build_parser()`` with its texts as reStructuredText (see the module)."""
    from mlneighbors.cli import build_parser as cli_parser

    parser = cli_parser()
    _rewrite(parser, set())
    return parser
