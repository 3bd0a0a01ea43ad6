"""The registry of the package's estimators (``mlneighbors._registry``): complete, consistent, and
the one source of the public names, the command line's models, the trusted types and the tests'
lists of models."""

from __future__ import annotations

import importlib
import inspect
import json
import pkgutil
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from sklearn.base import BaseEstimator
from sklearn.pipeline import Pipeline

import mlneighbors
from mlneighbors import MODELS, TRUSTED_TYPES, list_models, make_model
from mlneighbors._params import validate_params
from mlneighbors._registry import ESTIMATORS, examples

#: public estimator classes of the package that are not models, and why
NOT_MODELS = {
    "mlneighbors.pipeline.Pipeline": "scikit-learn's Pipeline with predict_top_k: it holds models (a trusted type)",
}


def public_estimator_classes(package) -> dict[str, type]:
    """Every public class defined in a public module of ``package`` that is a scikit-learn
    estimator with ``fit`` (a model or a transformer; the neighbour indexes build, not fit)."""
    found = {}
    for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
        if any(part.startswith("_") for part in info.name.split(".")):
            continue
        module = importlib.import_module(info.name)
        for name, cls in vars(module).items():
            if (inspect.isclass(cls) and cls.__module__ == module.__name__ and not name.startswith("_")
                    and issubclass(cls, BaseEstimator) and callable(getattr(cls, "fit", None))):
                found[f"{cls.__module__}.{cls.__qualname__}"] = cls
    return found


def test_every_estimator_class_is_registered():
    registered = {entry.path for entry in ESTIMATORS}
    missing = sorted(set(public_estimator_classes(mlneighbors)) - registered - set(NOT_MODELS))
    assert not missing, f"estimator classes without an entry in mlneighbors/_registry.py: {missing}"
    assert registered <= set(public_estimator_classes(mlneighbors))  # and no entry without its class


def test_a_model_module_without_an_entry_is_found(tmp_path, monkeypatch):
    """The check above can fail: a package with a model module that nobody registered."""
    package = tmp_path / "someones_models"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "newknn.py").write_text(textwrap.dedent("""
        from mlneighbors._base import KNeighborsMultilabelBase

        class NewKNN(KNeighborsMultilabelBase):
            def __init__(self, n_neighbors=10):
                self.n_neighbors = n_neighbors
        """))
    monkeypatch.syspath_prepend(str(tmp_path))
    found = public_estimator_classes(importlib.import_module("someones_models"))
    assert list(found) == ["someones_models.newknn.NewKNN"]


@pytest.mark.parametrize("entry", ESTIMATORS, ids=lambda entry: entry.name)
def test_an_entry_names_its_class_everywhere(entry):
    cls = entry.load()
    assert cls.__name__ == entry.name and cls.__module__ == entry.module
    assert getattr(mlneighbors, entry.name) is cls and entry.name in mlneighbors.__all__
    assert entry.path in TRUSTED_TYPES
    params = set(cls().get_params(deep=False))
    assert set(cls._constraints) == params, "every parameter is checked by fit (_constraints), and only those"
    assert entry.k_param is None or entry.k_param in params
    assert entry.examples, "an entry declares at least one small instance for the tests"


def test_the_command_line_models_are_the_entries_models():
    assert list_models() == [model.name for entry in ESTIMATORS for model in entry.models]
    for entry in ESTIMATORS:
        for model in entry.models:
            built, spec = make_model(model.name), MODELS[model.name]
            final = built.steps[-1][1] if isinstance(built, Pipeline) else built
            assert type(final) is entry.load()
            assert {k: v for k, v in final.get_params(deep=False).items() if k in (model.params or {})} == (
                model.params or {})
            if model.after:
                assert [type(step).__name__ for _, step in built.steps[:-1]] == list(model.after)
            assert spec.k_param in built.get_params()
            assert make_model(model.name, k=3).get_params()[spec.k_param] == 3


def test_the_examples_are_small_valid_instances_with_unique_names():
    built = examples()
    names = [name for name, _ in built]
    assert len(names) == len(set(names))
    for _, model in built:
        validate_params(model)  # raises if an example's parameters are not the class's
    assert {type(model).__name__ for _, model in built} == {entry.name for entry in ESTIMATORS}
    first, second = examples(), examples()
    assert all(a is not b for (_, a), (_, b) in zip(first, second, strict=True))  # fresh on each call


def test_importing_the_package_reads_the_registry_and_nothing_else():
    code = "import sys, json, mlneighbors; print(json.dumps(sorted(m for m in sys.modules if 'mlneighbors' in m " \
           "or m in ('numpy', 'scipy', 'sklearn', 'dataclasses'))))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert json.loads(out.stdout) == ["mlneighbors", "mlneighbors._registry"]


# -- the lists people write by hand, checked against the registry --------------------------------

ROOT = Path(__file__).resolve().parents[1]
_COUNT = re.compile(r"\b(\d+|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen"
                    r"|fifteen)(th)?\s+(methods|models|model names|names|estimators|classes)\b", re.IGNORECASE)


def _paragraph(text: str, start: str) -> str:
    """The paragraph of ``text`` that begins with ``start`` (up to the next blank line)."""
    begin = text.index(start)
    end = text.find("\n\n", begin)
    return text[begin:] if end < 0 else text[begin:end]


def test_the_readme_models_line_names_every_estimator():
    """README's "Models:" line is prose (GitHub renders it; nothing generates it): every entry's
    class must be on it, so a model added by CONTRIBUTING's recipe cannot be left out."""
    line = _paragraph((ROOT / "README.md").read_text(encoding="utf-8"), "Models: ")
    named = set(re.findall(r"`([A-Z]\w*)`", line))
    missing = [entry.name for entry in ESTIMATORS if entry.name not in named]
    assert not missing, f"README.md's 'Models:' line does not name {missing}: add them there"


def test_the_choosing_page_has_a_row_for_every_estimator_and_counts_none():
    page = (ROOT / "docs" / "user_guide" / "choosing.rst").read_text(encoding="utf-8")
    table = page[page.index(".. list-table::"):]
    table = table[: table.find("\n\n", table.index("* - method"))]
    missing = [entry.name for entry in ESTIMATORS if entry.name not in table]
    assert not missing, f"docs/user_guide/choosing.rst's table has no row for {missing}"
    index = (ROOT / "docs" / "index.rst").read_text(encoding="utf-8")  # which links to it
    for where, text in (("docs/user_guide/choosing.rst", page[: page.index(".. list-table::")]),
                        ("docs/index.rst", index)):
        counts = [m.group(0) for m in _COUNT.finditer(text)]
        assert not counts, f"{where} counts the models by hand ({counts}): say 'every model' (list_models())"


@pytest.mark.parametrize("text, found", [
    ("the command line knows eleven names, the eleventh", ["eleven names"]),
    ("The eight methods of the table", ["eight methods"]),
    ("The figures below show 10 models", ["10 models"]),
    ("every model the command line knows (list_models())", []),
])
def test_the_count_pattern_finds_a_count_of_models(text, found):
    """The check above can fail: it finds the counts the page held."""
    assert [m.group(0) for m in _COUNT.finditer(text)] == found
