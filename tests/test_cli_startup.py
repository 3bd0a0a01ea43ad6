"""The command line starts fast: the parser, ``--version`` and every ``--help`` import no heavy
library (scikit-learn alone took two seconds to import); the commands import what they use.

What is asserted is which modules a fresh interpreter holds, never seconds (a loaded machine
would make a time limit flaky); ``benchmarks/cli_startup.py`` measures the seconds.
"""

import json
import subprocess
import sys

import pytest

HEAVY = ("sklearn", "scipy", "numpy", "matplotlib", "pandas", "skops", "torch")

# every command's --help, then the program's, then --version: each ends in SystemExit(0)
_PROBE = """
import json, sys
from mlneighbors.cli import build_parser, main
parser = build_parser()
commands = sorted(parser._subparsers._group_actions[0].choices)
heavy = sys.argv[1:]
for argv in [[c, "--help"] for c in commands] + [["--help"], ["--version"]]:
    try:
        main(argv)
    except SystemExit as exc:
        assert exc.code == 0, (argv, exc.code)
print(json.dumps({"commands": commands, "heavy": [m for m in heavy if m in sys.modules]}), file=sys.stderr)
"""


def _probe() -> dict:
    proc = subprocess.run([sys.executable, "-c", _PROBE, *HEAVY], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stderr.strip().splitlines()[-1]) | {"out": proc.stdout}


def test_the_parser_version_and_every_help_import_nothing_heavy():
    found = _probe()
    assert found["heavy"] == []
    assert {"evaluate", "compare", "fit", "predict", "reproduce"} <= set(found["commands"])
    assert "mlneighbors 0.1" in found["out"]  # --version ran


def test_the_help_still_lists_every_model_backend_and_paper(capsys):
    """What the parser lists comes from the registries, read without importing the models."""
    from mlneighbors import MODELS
    from mlneighbors.cli import main
    from mlneighbors.experiments import list_papers
    from mlneighbors.neighbors import BACKENDS

    with pytest.raises(SystemExit):
        main(["evaluate", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    for name, spec in MODELS.items():
        assert f"{name} {spec.description}" in out
    assert ", ".join(sorted(BACKENDS)) in out
    with pytest.raises(SystemExit):
        main(["reproduce", "--help"])
    assert ", ".join(list_papers()) in " ".join(capsys.readouterr().out.split())
