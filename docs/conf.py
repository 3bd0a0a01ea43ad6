"""Sphinx configuration of the mlneighbors documentation.

Build (from the repository root, in the project's virtual environment with the ``docs`` extra)::

    .venv/bin/sphinx-build -W --keep-going -n docs docs/_build/html

Nothing here reaches the network: no intersphinx inventory is fetched, no remote image is
embedded, and formulas are drawn by matplotlib's mathtext at build time (no MathJax script).
Two things are generated before the sources are read, so that nothing is listed by hand:

- ``api/``: the API reference, a landing page of one table per module and one page per module,
  from ``__all__`` of the package and of its public submodules (``docs/api_reference.py``;
  autosummary then writes one page per name from ``_templates/autosummary/``);
- the gallery (``examples/`` -> ``auto_examples/``), run by sphinx-gallery at every build.
"""

from __future__ import annotations

import importlib
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
exclude_patterns = ["_build", "_generated", "**.ipynb_checkpoints", "auto_examples/*.md5",
                    # the benchmark reference's whole report: a download, not a page
                    "user_guide/benchmark_reference/*.md"]
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
# no default options: a module page shows its docstring only, and each template says what its
# page documents (a class its members, an exception its public bases too)
autodoc_default_options: dict[str, object] = {}
autodoc_typehints = "none"  # numpydoc's Parameters sections say the types in words
autodoc_inherit_docstrings = True
add_module_names = True  # a page's signature says where the name is imported from

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


def _undocumented_overrides() -> list[str]:
    """A backend's overrides of the protocol's methods that have no docstring of their own: the
    protocol is documented once, on ``BaseIndex`` and ``ApproximateIndex`` (and checked there),
    and such an override shows theirs (``autodoc_inherit_docstrings``)."""
    import mlneighbors.neighbors as neighbors
    from mlneighbors.neighbors import ApproximateIndex, BaseIndex

    protocol = {name for base in (BaseIndex, ApproximateIndex) for name in vars(base) if not name.startswith("_")}
    found = []
    for class_name in neighbors.__all__:
        cls = getattr(neighbors, class_name)
        if not (isinstance(cls, type) and issubclass(cls, BaseIndex)) or cls in (BaseIndex, ApproximateIndex):
            continue
        for klass in cls.__mro__:  # an override may sit on an intermediate class
            if klass in (BaseIndex, ApproximateIndex, object):
                continue
            found += [rf"\.{class_name}\.{name}$" for name, value in vars(klass).items()
                      if name in protocol and callable(value) and not getattr(value, "__doc__", None)]
    return sorted(set(found))


numpydoc_validation_exclude.update(_undocumented_overrides())

# -- the API reference, generated from __all__ (docs/api_reference.py) ----------------------------

sys.path.insert(0, str(HERE))
import api_reference  # noqa: E402

# the landing page, one page per module; autosummary then writes one page per name from
# _templates/autosummary/<kind>.rst (chosen by the object's kind: no :template: option), and the
# templates read their aliases, members and backreference names from this context
autosummary_context = api_reference.write(HERE)


def api_names() -> dict[str, list[str]]:
    """Every public object's page name, by the module it is documented under."""
    out: dict[str, list[str]] = {module: [] for module in api_reference.API_MODULES}
    for entry in api_reference.collect()[0].values():
        out[entry.module].append(entry.name)
    return out


def _kind(module: str, name: str) -> str:
    return api_reference.kind_of(getattr(importlib.import_module(module), name))


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
    # no "computation times" pages: sphinx-gallery's load jQuery and DataTables from CDNs (blank
    # offline); each example's page states its own running time
    "write_computation_times": False,
}
for _stale in (HERE / "sg_execution_times.rst", HERE / "auto_examples" / "sg_execution_times.rst"):
    _stale.unlink(missing_ok=True)  # left by a build before this setting

# every example's figures are made in a clean matplotlib state, headless
os.environ.setdefault("MPLBACKEND", "Agg")
warnings.filterwarnings("ignore", message="Matplotlib is currently using agg")

# -- formulas: matplotlib's mathtext, drawn at build time ----------------------------------------

mathmpl_fontsize = 14.0
mathmpl_srcset = ["2x"]
# Sphinx's own :math: role and math directive (the numpydoc convention in docstrings) are drawn
# by the same mathtext, as images with the formula as their alt text: no MathJax script from a
# CDN.  A formula mathtext cannot parse is a warning, so an error of the -W build.
html_math_renderer = "mathtext"


def _mathtext_image(self, latex: str, block: bool) -> str:
    import hashlib
    import html

    from matplotlib import mathtext, rc_context
    from sphinx.util import logging

    name = "math-" + hashlib.sha256(f"{latex}{mathmpl_fontsize}".encode()).hexdigest()[-12:]
    folder = Path(self.builder.outdir, "_images", "mathtext")
    folder.mkdir(parents=True, exist_ok=True)
    try:
        with rc_context({"mathtext.fontset": "cm", "font.size": mathmpl_fontsize}):
            # the depth below the baseline, in pixels of the 1x image, aligns an inline formula
            depth = mathtext.math_to_image(f"${latex}$", folder / f"{name}.png", dpi=100, format="png")
            mathtext.math_to_image(f"${latex}$", folder / f"{name}-2x.png", dpi=200, format="png")
    except ValueError as exc:
        logging.getLogger("mlneighbors.docs").warning("mathtext cannot draw %r: %s", latex, exc, type="math")
        return f"<code>{html.escape(latex)}</code>"
    src = f"{self.builder.imgpath}/mathtext/{name}"
    alt = html.escape(latex, quote=True)
    style = "" if block else f' style="vertical-align: -{depth + 1}px"'
    img = f'<img class="math" src="{src}.png" srcset="{src}-2x.png 2x" alt="{alt}"{style}/>'
    return f'<div class="math">{img}</div>' if block else img


def _visit_math(self, node):
    from docutils import nodes

    self.body.append(_mathtext_image(self, node.astext(), block=False))
    raise nodes.SkipNode


def _visit_math_block(self, node):
    from docutils import nodes

    self.body.append(_mathtext_image(self, " ".join(node.astext().split()), block=True))
    raise nodes.SkipNode


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


def _constant_docstring(app, what, name, obj, options, lines):
    """A constant's page and summary line say what its ``#:`` comment says, where the package
    assigns it, not what its type's docstring says ("Built-in mutable sequence.")."""
    if what == "data" and name.startswith("mlneighbors."):
        found = api_reference.data_docstring(name.rsplit(".", 1)[1], obj)
        if found:
            lines[:] = found


def _public_bases(app, name, obj, options, bases):
    """An exception page names its public bases only (``OSError``, not the private mix-in
    that adds the remedy to the message)."""
    bases[:] = [base for base in bases
                if not any(part.startswith("_") for part in f"{base.__module__}.{base.__qualname__}".split("."))]


def setup(app):
    app.add_html_math_renderer("mathtext", (_visit_math, None), (_visit_math_block, None))
    app.connect("autodoc-process-bases", _public_bases)
    app.connect("autodoc-process-docstring", _constant_docstring, priority=300)
    app.connect("autodoc-process-docstring", _escape_fitted_names, priority=400)
    app.connect("env-check-consistency", _check_examples)
    app.connect("autodoc-skip-member", _skip_foreign_members)
    app.connect("missing-reference", _resolve_short_names)
