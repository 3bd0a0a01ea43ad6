"""The API reference, generated from the packages' ``__all__`` (read by ``docs/conf.py``).

Nothing here lists a name by hand: every public name of every module of :data:`API_MODULES` is
found in that module's ``__all__``, and adding a name there adds it to the site.  The layout is
scikit-learn's:

- ``api/index.rst``, the landing page: one table per module, one line per name (the link and
  the first sentence of its docstring), never a docstring in full;
- ``api/<module>.rst``, one page per module: its docstring, then the same names by kind, whose
  autosummary tables (``:toctree: generated/``) make autosummary write one page per name from
  ``_templates/autosummary/<kind>.rst`` (class, function, exception, data).  The landing page's
  toctree holds the module pages and each module page's tables hold its names, so the sidebar
  is grouped by module;
- every object has one page, under its *home*: the first module of :data:`HOME_ORDER` that
  exports it (``mlneighbors.load_dataset`` is documented as ``mlneighbors.datasets.load_dataset``,
  the errors that ``mlneighbors.datasets`` re-exports under ``mlneighbors.exceptions``).  Its other
  public paths are its *aliases*: the module pages and the landing page list them too, linked to
  the one page, and the page says where else the name can be imported from;
- each page lists the gallery examples that use the object (sphinx-gallery's backreferences)
  under any of its public paths: sphinx-gallery records a name used in an example by its
  shortest import path (``mlneighbors.load_dataset``), not by the page's.
"""

from __future__ import annotations

import importlib
import inspect
from dataclasses import dataclass, field
from pathlib import Path

#: The documented modules, in the order of the landing page, with the title of their section.
API_MODULES = {
    "mlneighbors": "Estimators and top-level functions",
    "mlneighbors.neighbors": "Neighbour search",
    "mlneighbors.metrics": "Metrics",
    "mlneighbors.datasets": "Datasets",
    "mlneighbors.model_selection": "Model selection",
    "mlneighbors.benchmark": "Benchmarks: many models on many datasets",
    "mlneighbors.exceptions": "Warnings and errors",
    "mlneighbors.bknn": "BKNN's kernels",
    "mlneighbors.hybrid": "The hybrid kNN's label model",
}

#: Where an object exported by several modules gets its page: the first of these that exports
#: it.  Errors and warnings live in ``mlneighbors.exceptions``; a subpackage's names under the
#: subpackage; the estimators at the top level (not under their kernel modules).
HOME_ORDER = (
    "mlneighbors.exceptions",
    "mlneighbors.neighbors",
    "mlneighbors.metrics",
    "mlneighbors.datasets",
    "mlneighbors.model_selection",
    "mlneighbors.benchmark",
    "mlneighbors",
    "mlneighbors.bknn",
    "mlneighbors.hybrid",
)

#: The sections of a module page, in order: (kind, heading).
KINDS = (
    ("class", "Classes"),
    ("function", "Functions"),
    ("exception", "Warnings and errors"),
    ("data", "Constants"),
)

GENERATED_NOTE = ".. This file is written by docs/api_reference.py from the packages' __all__: do not edit."


@dataclass
class Entry:
    """One public object: its page's module and name, its kind and every public path to it."""

    module: str
    name: str
    kind: str
    paths: list[str] = field(default_factory=list)

    @property
    def fullname(self) -> str:
        return f"{self.module}.{self.name}"

    @property
    def aliases(self) -> list[str]:
        return [p for p in self.paths if p != self.fullname]


def kind_of(obj: object) -> str:
    """``"exception"``, ``"class"``, ``"function"`` or ``"data"``."""
    if inspect.isclass(obj) and issubclass(obj, BaseException):
        return "exception"
    if inspect.isclass(obj):
        return "class"
    if callable(obj):
        return "function"
    return "data"


def module_names(module: str) -> list[str]:
    """The public names of one module: its ``__all__`` (``__version__`` aside)."""
    return [name for name in importlib.import_module(module).__all__ if name != "__version__"]


def collect() -> tuple[dict[str, Entry], dict[str, list[Entry]]]:
    """Every public object once, and every module's names as entries.

    Returns ``(entries, by_module)``: ``entries`` maps each object's page name (its home's
    full name) to its entry; ``by_module`` lists, per module of :data:`API_MODULES`, the entry
    of every name of its ``__all__`` (an alias points to the entry of its home).
    """
    exported: dict[tuple[str, int], list[str]] = {}  # (name, id) -> modules that export it
    objects = {}
    for module in API_MODULES:
        mod = importlib.import_module(module)
        for name in module_names(module):
            obj = getattr(mod, name)
            key = (name, id(obj))
            objects[key] = obj
            exported.setdefault(key, []).append(module)
    entries: dict[str, Entry] = {}
    by_key = {}
    for key, modules in exported.items():
        name = key[0]
        home = next((m for m in HOME_ORDER if m in modules), modules[0])  # a module not ranked: its own
        entry = Entry(home, name, kind_of(objects[key]), [f"{m}.{name}" for m in API_MODULES if m in modules])
        entries[entry.fullname] = entry
        by_key[key] = entry
    by_module = {module: [] for module in API_MODULES}
    for key, modules in exported.items():
        for module in modules:
            by_module[module].append(by_key[key])
    order = {kind: i for i, (kind, _) in enumerate(KINDS)}
    for module, listed in by_module.items():
        position = {name: i for i, name in enumerate(module_names(module))}
        listed.sort(key=lambda e, p=position: (order[e.kind], p[e.name]))
    return entries, by_module


def members(entry: Entry) -> dict[str, list[str]]:
    """The public methods and properties a class page documents: those mlneighbors defines, with
    a docstring (scikit-learn's ``get_params``, ``set_params``, ``score``, ... are scikit-learn's)."""
    if entry.kind != "class":
        return {"methods": [], "properties": []}
    cls = getattr(importlib.import_module(entry.module), entry.name)
    methods, properties = [], []
    for name in dir(cls):
        if name.startswith("_"):
            continue
        static = inspect.getattr_static(cls, name)
        if isinstance(static, property):
            target, bucket = static.fget, properties
        elif isinstance(static, (staticmethod, classmethod)):
            target, bucket = static.__func__, methods
        elif inspect.isfunction(static):
            target, bucket = static, methods
        else:
            continue
        # autodoc documents a member with a docstring (its own or inherited), never one without
        if getattr(target, "__module__", "").startswith("mlneighbors") and inspect.getdoc(getattr(cls, name)):
            bucket.append(name)
    return {"methods": methods, "properties": properties}


def data_docstring(name: str, obj: object) -> list[str]:
    """The ``#:`` comment above a constant where the package defines it.

    A constant has no docstring of its own (``MODELS.__doc__`` is ``dict``'s), and the module
    that exports it is seldom the one that assigns it (``mlneighbors.TRUSTED_TYPES`` is assigned
    in ``mlneighbors._persist``): the comment is looked up in every loaded module of the package
    that holds the same object under the same name.
    """
    import sys

    from sphinx.errors import PycodeError
    from sphinx.pycode import ModuleAnalyzer

    for modname in sorted(m for m in sys.modules if m == "mlneighbors" or m.startswith("mlneighbors.")):
        if getattr(sys.modules[modname], name, None) is not obj:
            continue
        try:
            docs = ModuleAnalyzer.for_module(modname).find_attr_docs()
        except PycodeError:
            continue
        if ("", name) in docs:
            return [line for line in docs[("", name)] if line is not None]
    return []


def first_paragraph(module: str) -> str:
    """A module docstring's first paragraph (its summary), on one line."""
    doc = inspect.getdoc(importlib.import_module(module)) or ""
    return " ".join(doc.split("\n\n")[0].split())


def _title(text: str, char: str) -> list[str]:
    return [text, char * len(text), ""]


def _table(names: list[str], toctree: bool) -> list[str]:
    options = ["   :toctree: generated/"] if toctree else []
    return [".. autosummary::", *options, "   :nosignatures:", "", *(f"   {n}" for n in names), ""]


def landing_page(by_module: dict[str, list[Entry]]) -> str:
    lines = [GENERATED_NOTE, "", *_title("API reference", "="),
             "Every public name of the package, one line each: follow a name to its page (its "
             "parameters, methods and the gallery examples that use it), or a module to its "
             "page. The estimators follow scikit-learn's API: ``get_params``, ``set_params``, "
             "``score`` and metadata routing are scikit-learn's and are not repeated here.", "",
             ".. toctree::", "   :hidden:", "", *(f"   {module}" for module in API_MODULES), ""]
    for module, listed in by_module.items():
        lines += _title(f":mod:`{module}`: {API_MODULES[module]}", "-")
        lines += _table([f"~{e.fullname}" for e in listed], toctree=False)
    return "\n".join(lines)


def module_page(module: str, listed: list[Entry]) -> str:
    lines = [GENERATED_NOTE, "", *_title(f"``{module}``: {API_MODULES[module]}", "="),
             f".. automodule:: {module}", "", f".. currentmodule:: {module}", ""]
    own = [e for e in listed if e.module == module]
    for kind, heading in KINDS:
        chosen = [e.name for e in own if e.kind == kind]
        if chosen:
            lines += _title(heading, "-") + _table(chosen, toctree=True)
    elsewhere = [e for e in listed if e.module != module]
    if elsewhere:
        lines += _title("Documented with another module", "-")
        lines += [f"Importable from ``{module}`` as well; each has its page under the module "
                  "named in its link.", ""]
        # relative to this module where it is a prefix (autosummary refuses the current module's
        # own name in an entry): "datasets.load_dataset" on the page of mlneighbors
        lines += _table([e.fullname.removeprefix(f"{module}.") for e in elsewhere], toctree=False)
    return "\n".join(lines)


def _write(path: Path, text: str) -> None:
    text = text.rstrip("\n") + "\n"
    if not path.exists() or path.read_text() != text:  # unchanged: no rebuild of every page
        path.write_text(text)


def write(docs: Path) -> dict[str, object]:
    """Write ``docs/api/`` and return the templates' context (``autosummary_context``).

    The context gives each page name its aliases and the names of the gallery examples'
    backreferences to look up (``api_gallery``), each class its members (``api_methods``,
    ``api_properties``), and names the constants whose value the page shows.
    """
    entries, by_module = collect()
    target = docs / "api"
    (target / "generated").mkdir(parents=True, exist_ok=True)
    pages = {f"{name}.rst" for name in entries}
    for stale in (target / "generated").glob("*.rst"):  # a name that left __all__, or moved home
        if stale.name not in pages:
            stale.unlink()
    for stale in target.glob("*.rst"):
        if stale.stem not in API_MODULES and stale.name != "index.rst":
            stale.unlink()
    _write(target / "index.rst", landing_page(by_module))
    for module, listed in by_module.items():
        _write(target / f"{module}.rst", module_page(module, listed))
    found = {name: members(entry) for name, entry in entries.items()}
    values = {name: repr(getattr(importlib.import_module(e.module), e.name)) for name, e in entries.items()
              if e.kind == "data"}
    return {
        "api_aliases": {name: entry.aliases for name, entry in entries.items()},
        "api_gallery": {name: " ".join(entry.paths) for name, entry in entries.items()},
        "api_methods": {name: m["methods"] for name, m in found.items()},
        "api_properties": {name: m["properties"] for name, m in found.items()},
        # a constant's value is shown where it is short (an environment variable's name), not a
        # registry of several hundred characters
        "api_show_value": [name for name, value in values.items() if len(value) <= 60],
    }
