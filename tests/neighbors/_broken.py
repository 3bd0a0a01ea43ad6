"""A library installed but failing to import, for the tests of ``"auto"`` (issue 47, item 11)."""

import sys


def break_faiss(monkeypatch, folder, error='ImportError("libfaiss.so: cannot open shared object file")'):
    """faiss installed but failing to import (a wheel built for another CPU, a missing shared
    library): a package named faiss first on the path, whose import raises ``error``; the real
    one, if imported, put back afterwards.  ``find_spec`` finds it, as it finds a broken wheel."""
    package = folder / "faiss"
    package.mkdir()
    (package / "__init__.py").write_text(f"raise {error}\n")
    for name in [name for name in sys.modules if name == "faiss" or name.startswith("faiss.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.syspath_prepend(str(folder))
