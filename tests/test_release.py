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
