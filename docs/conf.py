"""Sphinx configuration of the mlneighbors documentation.

Build (from the repository root, in the project's virtual environment with the ``docs`` extra)::

    .venv/bin/sphinx-build -W --keep-going -n docs docs/_build/html

Nothing here reaches the network: no intersphinx inventory is fetched, no remote image is
embedded, and formulas are drawn by matplotlib's mathtext at build time (no MathJax script).
Two things are generated before the sources are read, so that nothing is listed by hand:

- ``api/generated/``: the API index, one entry per name of ``__all__`` of the package and of
  its public submodules (autosummary then writes one page per name);
- the gallery (``examples/`` -> ``auto_examples/``), run by sphinx-gallery at every build.
"""

from __future__ import annotations

import importlib
import inspect
import os
import re
import sys
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "src"))

import mlneighbors  # noqa: E402

# -- project ---------------------------------------------------------------------------------

project = "mlneighbors"
author = "the mlneighbors developers"
copyright = "the mlneighbors developers, BSD-3-Clause"
release = mlneighbors.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
    "sphinxarg.ext",
    "myst_parser",
    "matplotlib.sphinxext.mathmpl",
]

templates_path = ["_templates"]
exclude_patterns = ["_build", "_generated", "**.ipynb_checkpoints", "auto_examples/*.md5"]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
default_role = "literal"  # `x` in prose is code, never a failed cross-reference
nitpicky = True  # -n: every reference must resolve; see nitpick_ignore for types outside the site
# myst.header: CHANGELOG.md starts at level 2 under the page's own title; ref.citation: autosummary
# parses each docstring once more for its summary line, and numpydoc's citation labels then count twice
suppress_warnings = ["myst.header", "ref.citation"]

# No network at build time: intersphinx is not loaded, so numpy, scipy and scikit-learn types
# in docstrings are plain text.  These are the names numpydoc's type cross-references would
# otherwise ask for.
_OUTSIDE = [
    # other projects' names (no intersphinx: they stay plain text)
    r"(numpy|np|scipy|sp|sklearn|pandas|torch|dask|distributed|pathlib|os|collections|typing|abc)\..*",
    r"(array-like|array_like|sparse matrix|ndarray|callable|optional|object|Any|default.*)",
    r"(int|float|str|bool|dict|list|tuple|set|bytes|None|type|iterable|iterator|generator|mapping|sequence)",
    r"(Path|PathLike|Callable|Iterable|Iterator|Sequence|Mapping|Generator|ModuleType|Matrix|Literal.*)",
    r"(BaseEstimator|Pipeline|KMeans|MinMaxScaler|StandardScaler|TransformerMixin|Protocol|StratifiedKFold)",
    r".*(instance|of shape|or None|, default).*",
    r"\{.*|.*\}|'.*'|\".*\"|[0-9].*",
    # the package's private helpers that public docstrings mention by name
    r"mlneighbors\._.*|mlneighbors\.\w+\._.*",
    r"(parse_arff|dml_votes|vote_scores|ProgressFactory|CountTableModel|KNeighborsMultilabelBase)",
    r"(VersionedState|ApproximateIndex|Reference|Bounds|ModelSpec|DatasetSpec|FileSpec|Finding|Layout|Reproduction)",
]
nitpick_ignore_regex = [(r"py:.*", pattern) for pattern in _OUTSIDE]

# -- HTML ------------------------------------------------------------------------------------

html_theme = "pydata_sphinx_theme"
html_title = f"mlneighbors {release}"
html_static_path = ["_static"]
html_css_files = ["custom.css"]
html_show_sourcelink = False
html_theme_options = {
    "navbar_align": "left",
    "show_toc_level": 2,
    "navigation_with_keys": False,
    "secondary_sidebar_items": ["page-toc"],
    "footer_start": ["copyright"],
    "footer_end": [],
    # no icons fetched, no version switcher (it would read a JSON file from the web)
    "icon_links": [],
    "header_links_before_dropdown": 7,
}
html_context = {"default_mode": "light"}
# pages without sub-pages: no empty "Section Navigation" column
html_sidebars = {page: [] for page in ("index", "install", "quickstart", "cli", "changelog", "contributing")}

# -- autodoc, autosummary, numpydoc -----------------------------------------------------------

autosummary_generate = True
autosummary_imported_members = True
autodoc_default_options = {"members": True, "inherited-members": True, "show-inheritance": False}
autodoc_typehints = "none"  # numpydoc's Parameters sections say the types in words
autodoc_inherit_docstrings = True
add_module_names = False

numpydoc_show_class_members = False  # the class template lists the methods once
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
numpydoc_attributes_as_param_list = True

# numpydoc's own validation, for every docstring autodoc renders (classes, functions and their
# methods): a docstring missing (GL08), a parameter not documented (PR01) or documented but not
# in the signature (PR02), a function without Returns (RT01) or a generator without Yields
# (YD01) is a warning, so an error of the -W build.  EX01 (an Examples section) is checked for
# every *public name* of the API index by _check_examples below: methods inherit their
# class's example.
numpydoc_validation_checks = {"GL08", "PR01", "PR02", "RT01", "YD01"}
numpydoc_validation_exclude = {
    # scikit-learn's inherited methods are scikit-learn's to document
    r"\.(get_params|set_params|score|get_metadata_routing|set_output|fit_transform|"
    r"get_feature_names_out|set_\w+_request)$",
    # typing.Protocol's and dataclasses' machinery; a Protocol is never instantiated, so its
    # (*args, **kwargs) are no parameters to document
    r"\.__init__$",
    r"\.NeighborIndex$",
}

# -- the API index, generated from __all__ ------------------------------------------------------

API_MODULES = {
    "mlneighbors": "Estimators and top-level functions",
    "mlneighbors.neighbors": "Neighbour search",
    "mlneighbors.metrics": "Metrics",
    "mlneighbors.datasets": "Datasets",
    "mlneighbors.model_selection": "Model selection",
    "mlneighbors.exceptions": "Warnings and errors",
    "mlneighbors.bknn": "BKNN's kernels",
    "mlneighbors.hybrid": "The hybrid kNN's label model",
}


_PACKAGES = ("neighbors", "metrics", "datasets", "model_selection", "exceptions")


def api_names() -> dict[str, list[str]]:
    """Every public name, by module (``__version__`` aside)."""
    out = {}
    for module in API_MODULES:
        mod = importlib.import_module(module)
        # the kernel modules: their functions only (the estimator is a top-level name)
        out[module] = [name for name in mod.__all__ if name != "__version__" and
                       (module.count(".") == 1 and module.split(".")[1] in _PACKAGES or module == "mlneighbors"
                        or not inspect.isclass(getattr(mod, name)))]
    return out


def _kind(module: str, name: str) -> str:
    obj = getattr(importlib.import_module(module), name)
    if inspect.isclass(obj) and issubclass(obj, BaseException):
        return "exception"
    if inspect.isclass(obj):
        return "class"
    if callable(obj):
        return "function"
    return "data"


def write_api_index() -> None:
    """``api/generated/index.rst``: one autosummary table per module, one page per name.

    A top-level name that a submodule also exports (``mlneighbors.load_dataset`` is
    ``mlneighbors.datasets.load_dataset``) gets its page under the submodule, linked from the
    top-level section: one page per object.
    """
    lines = [".. This file is written by docs/conf.py from the packages' __all__: do not edit.", "",
             "API reference", "=============", "",
             "Every public name of the package, one page each, generated from its docstring. The "
             "estimators follow scikit-learn's API (``get_params``, ``set_params``, ``score`` and "
             "metadata routing are scikit-learn's and are not repeated here).", ""]
    names_by_module = api_names()
    elsewhere = {name: module for module, names in names_by_module.items() if module != "mlneighbors"
                 for name in names}
    for module, names in names_by_module.items():
        shared = [n for n in names if module == "mlneighbors" and n in elsewhere]
        names = [n for n in names if n not in shared]
        title = f"``{module}``: {API_MODULES[module]}"
        lines += [title, "-" * len(title), "", f".. automodule:: {module}", "   :no-members:",
                  "   :no-index:", "", f".. currentmodule:: {module}", ""]
        for kind, template, header in (
            ("class", "class.rst", "Classes"),
            ("exception", "exception.rst", "Warnings and errors"),
            ("function", "function.rst", "Functions"),
            ("data", "data.rst", "Constants"),
        ):
            chosen = [n for n in names if _kind(module, n) == kind]
            if not chosen:
                continue
            lines += [f".. rubric:: {header}", "", ".. autosummary::", "   :toctree: generated",
                      f"   :template: {template}", "", *(f"   {n}" for n in chosen), ""]
        if shared:
            lines += [".. rubric:: Also importable from ``mlneighbors``", "",
                      *(f"- :obj:`mlneighbors.{n} <{elsewhere[n]}.{n}>`" for n in shared), ""]
    target = HERE / "api"
    (target / "generated").mkdir(parents=True, exist_ok=True)
    documented = {f"{m}.{n}.rst" for m, names in names_by_module.items() for n in names}
    for stale in (target / "generated").glob("*.rst"):  # a name that left __all__
        if stale.name not in documented:
            stale.unlink()
    text = "\n".join(lines) + "\n"
    path = target / "index.rst"
    if not path.exists() or path.read_text() != text:  # unchanged: no rebuild of every page
        path.write_text(text)


write_api_index()

# -- the gallery -------------------------------------------------------------------------------

sphinx_gallery_conf = {
    "examples_dirs": str(ROOT / "examples"),
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "ignore_pattern": r"__init__\.py",
    "within_subsection_order": "FileNameSortKey",
    "download_all_examples": False,
    "remove_config_comments": True,
    "plot_gallery": "True",
    "matplotlib_animations": False,
    "image_scrapers": ("matplotlib",),
    "reference_url": {},  # no links to other sites' documentation
    "show_memory": False,
    "min_reported_time": 1,
    "abort_on_example_error": False,
    "only_warn_on_example_error": False,
    "capture_repr": ("_repr_html_", "__repr__"),
    # each API page lists the examples that use its name
    "doc_module": ("mlneighbors",),
    "backreferences_dir": "api/generated/backreferences",
    "inspect_global_variables": False,
}

# every example's figures are made in a clean matplotlib state, headless
os.environ.setdefault("MPLBACKEND", "Agg")
warnings.filterwarnings("ignore", message="Matplotlib is currently using agg")

# -- formulas: matplotlib's mathtext, drawn at build time ----------------------------------------

mathmpl_fontsize = 14.0
mathmpl_srcset = ["2x"]


# -- EX01 for every public name -------------------------------------------------------------------


def _check_examples(app, env) -> None:
    """A public name of the API index whose docstring has no Examples section is a warning.

    Exceptions and warning classes are raised by the package, not called by users: they are
    held to the other checks only.
    """
    from numpydoc.validate import validate
    from sphinx.util import logging

    logger = logging.getLogger("mlneighbors.docs")
    for module, names in api_names().items():
        for name in names:
            if _kind(module, name) in ("data", "exception"):
                continue
            errors = dict(validate(f"{module}.{name}")["errors"])
            if "EX01" in errors:
                logger.warning("%s.%s: EX01 %s", module, name, errors["EX01"], type="numpydoc", subtype="EX01")


def _skip_foreign_members(app, what, name, obj, skip, options):
    """Inherited members of scikit-learn's and Python's bases are theirs to document: a class
    page shows what mlneighbors defines (and says that the estimator API is scikit-learn's)."""
    module = getattr(obj, "__module__", None) or ""
    owner = getattr(obj, "__objclass__", None)
    if module.startswith(("sklearn", "builtins", "typing")) or (owner and owner.__module__ == "builtins"):
        return True
    return None


def _resolve_short_names(app, env, node, contnode):
    """``:func:`get_data_home``` written in a docstring of another module: the one documented
    object of the package whose dotted name ends with the target (the shortest public path)."""
    from sphinx.util.nodes import make_refnode

    if node.get("refdomain") != "py":
        return None
    target = node["reftarget"].lstrip(".~")
    objects = env.get_domain("py").objects
    matches = [name for name in objects if name.startswith("mlneighbors") and
               (name == target or name.endswith("." + target))]
    if not matches:
        return None
    name = min(matches, key=lambda n: (n.count("."), n))
    entry = objects[name]
    return make_refnode(app.builder, node["refdoc"], entry.docname, entry.node_id, contnode, name)


_TRAILING_UNDERSCORE = re.compile(r"(?<![`\\\w])([A-Za-z]\w*?)_(?=[,)\s]|$)")


def _escape_fitted_names(app, what, name, obj, options, lines):
    """``(n_components_, n_features)`` in a type is reStructuredText for a link to a target
    ``n_components``; escape the underscore of such names on the ``name : type`` lines
    (before numpydoc reads them), so that docstrings stay plain in an editor."""
    for i, line in enumerate(lines):
        head, sep, rest = line.partition(" : ")
        if sep and "``" not in rest:
            lines[i] = head + sep + _TRAILING_UNDERSCORE.sub(r"\1\\_", rest)


def setup(app):
    app.connect("autodoc-process-docstring", _escape_fitted_names, priority=400)
    app.connect("env-check-consistency", _check_examples)
    app.connect("autodoc-skip-member", _skip_foreign_members)
    app.connect("missing-reference", _resolve_short_names)
