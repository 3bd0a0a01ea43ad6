"""The wall around the neighbour engine: outside ``mlneighbors/neighbors/`` the package imports
``mlneighbors.neighbors`` (its public names) or ``mlneighbors.neighbors._internal``, never the
engine's other private modules.  Read from the source (ast), not run: an import inside a
function counts too."""

from __future__ import annotations

import ast
from pathlib import Path

import mlneighbors

ROOT = Path(mlneighbors.__file__).parent
ALLOWED = {"mlneighbors.neighbors", "mlneighbors.neighbors._internal"}


def _module_name(path: Path) -> list[str]:
    parts = ["mlneighbors", *path.relative_to(ROOT).with_suffix("").parts]
    return parts[:-1] if parts[-1] == "__init__" else parts


def _imported(path: Path, source: str) -> list[tuple[int, str]]:
    """(line, dotted module) of every module the file imports, relative imports resolved; for
    ``from package import name``, ``package.name`` too (it may be a module)."""
    here = _module_name(path)
    package = here if path.name == "__init__.py" else here[:-1]
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join([*base, *(node.module.split(".") if node.module else [])])
            found.append((node.lineno, module))
            found += [(node.lineno, f"{module}.{alias.name}") for alias in node.names]
    return found


def _breaches(path: Path, source: str | None = None) -> list[str]:
    """The imports of ``path`` (its text, or ``source`` as if it were its text) through the wall."""
    out = []
    source = path.read_text(encoding="utf-8") if source is None else source
    for line, module in _imported(path, source):
        parts = module.split(".")
        if parts[:2] != ["mlneighbors", "neighbors"] or len(parts) < 3:
            continue
        inner = ".".join(parts[:3])
        if parts[2].startswith("_") and inner not in ALLOWED:
            out.append(f"{path.relative_to(ROOT.parent)}:{line} imports {module}")
    return out


def test_nothing_outside_the_engine_imports_its_private_modules():
    breaches = [b for path in sorted(ROOT.rglob("*.py")) if "neighbors" != path.relative_to(ROOT).parts[0]
                for b in _breaches(path)]
    assert breaches == [], "use mlneighbors.neighbors or mlneighbors.neighbors._internal:\n" + "\n".join(breaches)


def test_the_wall_sees_a_breach():
    # the scan itself: every form of import of a private module is caught, the allowed ones pass
    source = "\n".join([
        "from ..neighbors._auto import PROBE_ROWS",
        "from ..neighbors import _exact",
        "import mlneighbors.neighbors._saved",
        "from mlneighbors.neighbors._approximate._faiss import FaissIVFIndex",
        "from ..neighbors import BACKENDS",
        "from ..neighbors._internal import search",
        "from . import _common",
    ])
    got = [b.rsplit(" imports ", 1)[1] for b in _breaches(ROOT / "cli" / "_probe.py", source)]
    assert got == ["mlneighbors.neighbors._auto", "mlneighbors.neighbors._auto.PROBE_ROWS",
                   "mlneighbors.neighbors._exact", "mlneighbors.neighbors._saved",
                   "mlneighbors.neighbors._approximate._faiss",
                   "mlneighbors.neighbors._approximate._faiss.FaissIVFIndex"]
