"""Every reference in the repository resolves inside it.

A tracked text file may cite a page of the documentation, a module or a paper by author,
title and year, but not a file outside the checkout (a spec, a folder of papers, a
machine's absolute path) that a reader of the repository cannot open.  The one path outside
it that is documented behaviour is the data directory ``../shared/datasets`` beside a source
checkout (``mlneighbors.datasets.get_data_home``).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path, PurePosixPath

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: the data directory rule: documented, so allowed
ALLOWED_OUTSIDE = ("../shared/datasets",)

# written in pieces, so that this file does not match its own patterns
_PAPER_NUMBER = re.compile(r"\bpapers?\s+0" + r"0\d\b", re.IGNORECASE)
_SPEC_FILE = re.compile(r"\bALGORITHMS" + r"\.md\b")
_SHARED_FOLDERS = re.compile(r"\bshared/(?:" + "papers|docs" + r")\b")
_ABSOLUTE = re.compile(r"(?<![\w.:/~-])/(?:" + "work|root|home|Users|opt|mnt|srv" + r")/[\w.-]")
_RELATIVE = re.compile(r"(?<![\w./-])((?:\.\./)+[\w.-]+(?:/[\w.-]+)*)")


def outside_references(text: str, where: PurePosixPath) -> list[str]:
    """What ``text`` (the content of the tracked file ``where``, relative to the repository
    root) cites outside the repository, one description per finding."""
    found = [f"{m.group(0)!r} (a paper by its number in a folder outside the repository)"
             for m in _PAPER_NUMBER.finditer(text)]
    found += [f"{m.group(0)!r} (a file outside the repository)" for m in _SPEC_FILE.finditer(text)]
    found += [f"{m.group(0)!r} (a folder outside the repository)" for m in _SHARED_FOLDERS.finditer(text)]
    found += [f"{m.group(0)!r} (a machine's absolute path)" for m in _ABSOLUTE.finditer(text)]
    for m in _RELATIVE.finditer(text):
        path = m.group(1)
        if path.startswith(ALLOWED_OUTSIDE):
            continue
        # a relative path counts as inside when it stays inside from the file's folder (an
        # include in docs/) or from the root (a command run from the checkout)
        if not any(_inside(base / path) for base in (where.parent, PurePosixPath("."))):
            found.append(f"{path!r} (a relative path that leaves the repository)")
    return found


def _inside(path: PurePosixPath) -> bool:
    depth = 0
    for part in path.parts:
        depth += -1 if part == ".." else 0 if part == "." else 1
        if depth < 0:
            return False
    return True


def _tracked_text_files() -> list[PurePosixPath]:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: the tracked files are unknown")
    out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    return [PurePosixPath(name) for name in out.decode().split("\0") if name]


def test_no_tracked_file_cites_a_path_outside_the_repository():
    problems = []
    files = _tracked_text_files()
    for name in files:
        path = ROOT / name
        if not path.is_file():  # deleted in the working tree, not yet committed
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue  # not a text file
        problems += [f"{name}: {finding}" for finding in outside_references(text, name)]
    assert len(files) > 100  # the checkout's files, not an empty list
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize(
    "text, where, expected",
    [
        ("formulas in docs/ALGORI" + "THMS.md, section Metrics", "src/m.py", "a file outside"),
        ("see paper " + "003, Table 2", "src/m.py", "by its number"),
        ("the texts in shared/" + "papers/", "src/m.py", "a folder outside"),
        ("MLNEIGHBORS_DATA=/" + "work/shared/datasets python x.py", "benchmarks/x.py", "absolute path"),
        ("python3 -m venv /" + "home/me/venv", "benchmarks/x.py", "absolute path"),
        ("read ../notes/" + "formulas.txt", "README.md", "leaves the repository"),
        ("include:: ../" + "../CHANGELOG.md", "docs/index.rst", "leaves the repository"),
    ],
)
def test_each_kind_of_outside_reference_is_caught(text, where, expected):
    found = outside_references(text, PurePosixPath(where))
    assert len(found) == 1 and expected in found[0], found


@pytest.mark.parametrize(
    "text, where",
    [
        ("the data in ../shared/datasets beside the checkout", "README.md"),
        (".. include:: ../CHANGELOG.md", "docs/changelog.rst"),
        (":doc:`../contributing` has the recipe", "docs/user_guide/neighbors.rst"),
        ("paper 0.578 against ours 0.62; papers 2008 and 2010", "src/mlneighbors/experiments/x.py"),
        ("https://example.org/work/data and docs/user_guide/metrics.rst", "src/m.py"),
        ("sphinx-build docs /tmp/html", "README.md"),
    ],
)
def test_references_inside_the_repository_pass(text, where):
    assert outside_references(text, PurePosixPath(where)) == []
