"""The release metadata agree with the package: one version, a licence file, a citation."""

from pathlib import Path

import mlneighbors

ROOT = Path(__file__).resolve().parents[1]


def _cff_field(name: str) -> str:
    for line in (ROOT / "CITATION.cff").read_text(encoding="utf-8").splitlines():
        if line.startswith(f"{name}:"):
            return line.split(":", 1)[1].strip().strip("'\"")
    raise AssertionError(f"CITATION.cff has no top-level {name!r}")


def test_the_citation_names_the_package_version_and_licence():
    assert _cff_field("version") == mlneighbors.__version__
    assert _cff_field("license") == "BSD-3-Clause"


def test_the_version_is_written_once():
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert 'dynamic = ["version"]' in text
    assert 'version = { attr = "mlneighbors.__version__" }' in text


def test_the_licence_file_is_the_declared_licence():
    assert "BSD 3-Clause License" in (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert 'license = "BSD-3-Clause"' in (ROOT / "pyproject.toml").read_text(encoding="utf-8")


def test_every_docstring_example_said_to_need_an_extra_exists():
    """``conftest.DOCTEST_REQUIRES`` names docstring examples by the object that holds them; a
    name left behind when the object moves (``in_fit_order`` went from ``_base`` to
    ``_targets``) silently stops skipping it, and the oldest-dependencies step then fails."""
    import importlib

    from conftest import DOCTEST_REQUIRES

    for name in DOCTEST_REQUIRES:
        parts = name.split(".")
        for cut in range(len(parts), 0, -1):
            try:
                found = importlib.import_module(".".join(parts[:cut]))
                break
            except ImportError:
                continue
        for attribute in parts[cut:]:
            assert hasattr(found, attribute), f"DOCTEST_REQUIRES names {name}, which does not exist"
            found = getattr(found, attribute)
        # where the example's item is named: the module that defines the object, not one that
        # imports it
        where = found.__name__ if cut == len(parts) else f"{found.__module__}.{found.__qualname__}"
        assert where == name, f"DOCTEST_REQUIRES names {name}; its docstring example is {where}"


def _extras() -> dict[str, list[str]]:
    try:
        import tomllib
    except ImportError:  # Python 3.10
        import pytest

        tomllib = pytest.importorskip("tomli")
    with open(ROOT / "pyproject.toml", "rb") as f:
        return tomllib.load(f)["project"]["optional-dependencies"]


def _names(requirements: list[str]) -> set[str]:
    import re

    return {re.match(r"[A-Za-z0-9_.-]+", r).group(0).lower() for r in requirements}


def test_the_readme_install_reads_csv_files():
    """The README installs ``.[cli]`` and then runs the command line on one's own files, CSV the
    commonest of them: the ``cli`` extra carries pandas, which reads them (issue 47, item 14)."""
    extras = _extras()
    assert _names(extras["pandas"]) <= _names(extras["cli"])
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "'.[cli]'" in readme
