"""The documentation's checks that need no docs build.

- Every gallery example ends with text saying what its last figure shows (read from the
  sources as sphinx-gallery splits them into text and code cells).
- ``docs/check_build.py``, which ``.ci/run`` runs on the built site, fails on a broken page: an
  API landing page that renders docstrings, an option with a typographic dash, a page that
  loads a script from the network.
"""

from __future__ import annotations

import ast
import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "examples").glob("plot_*.py"))

#: The examples whose last figure is not yet followed by text saying what it shows (issue 24,
#: item 7): the one place to take a name out of when its example gains that text.  The test
#: fails both ways: a listed example that has its conclusion, an unlisted one that lacks it.
KNOWN_WITHOUT_CONCLUSION: set[str] = set()

#: A conclusion says something: at least this many words of prose after the last figure.
MIN_WORDS = 12

# sphinx-gallery's cell separators: "# %%" or a line of 20 or more "#"
_SEPARATOR = re.compile(r"^# ?%%|^#{20,}\s*$")
# pyplot calls that make or show a figure (sphinx-gallery's scraper then captures it)
_FIGURE_CALLS = {"figure", "subplots", "subplot", "subplot_mosaic", "plot", "imshow", "scatter", "bar",
                 "barh", "hist", "show"}


def cells(source: str) -> list[tuple[str, str]]:
    """``(kind, text)`` cells, "text" or "code", in order: the module docstring, then the code
    and the comment blocks that follow each separator."""
    tree = ast.parse(source)
    docstring = ast.get_docstring(tree)
    lines = source.splitlines()[tree.body[0].end_lineno if docstring else 0:]
    out = [("text", docstring)] if docstring else []
    code: list[str] = []
    i = 0
    while i < len(lines):
        if _SEPARATOR.match(lines[i]):
            if "".join(code).strip():
                out.append(("code", "\n".join(code)))
            code = []
            i += 1
            text = []
            while i < len(lines) and lines[i].startswith("#"):
                text.append(lines[i][1:].strip())
                i += 1
            out.append(("text", "\n".join(text)))
        else:
            code.append(lines[i])
            i += 1
    if "".join(code).strip():
        out.append(("code", "\n".join(code)))
    return out


def _pyplot_names(source: str) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names |= {a.asname or a.name for a in node.names if a.name == "matplotlib.pyplot"}
        elif isinstance(node, ast.ImportFrom) and node.module == "matplotlib":
            names |= {a.asname or a.name for a in node.names if a.name == "pyplot"}
    return names


def makes_figure(code: str, pyplot: set[str]) -> bool:
    """Whether a code cell makes or shows a figure through pyplot."""
    return any(isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
               and isinstance(node.func.value, ast.Name) and node.func.value.id in pyplot
               and node.func.attr in _FIGURE_CALLS
               for node in ast.walk(ast.parse(code)))


def words_after_last_figure(source: str) -> int | None:
    """Words of prose after the last figure (None: the example makes no figure)."""
    pyplot = _pyplot_names(source)
    found = cells(source)
    last = max((i for i, (kind, text) in enumerate(found) if kind == "code" and makes_figure(text, pyplot)),
               default=None)
    if last is None:
        return None
    prose = [line for kind, text in found[last + 1:] if kind == "text" for line in text.splitlines()
             if not re.fullmatch(r"[-=~^*#]+", line.strip())]  # headings' underlines are no words
    return len(re.findall(r"[A-Za-z][\w'-]*", " ".join(prose)))


_GOOD = '''"""
Title
=====

What it shows.
"""
import matplotlib.pyplot as plt

fig, ax = plt.subplots()
ax.plot([1, 2])
plt.show()

# %%
# The line rises from 1 to 2: the second value is twice the first, as the data say, and nothing
# else is drawn.
'''


def test_a_figure_followed_by_a_conclusion_passes():
    assert words_after_last_figure(_GOOD) >= MIN_WORDS


def test_a_figure_without_text_after_it_fails():
    broken = _GOOD.split("# %%")[0]
    assert words_after_last_figure(broken) == 0


def test_a_heading_alone_after_the_figure_is_no_conclusion():
    heading_only = _GOOD.split("# %%")[0] + "# %%\n# Conclusion\n# ----------\n"
    assert words_after_last_figure(heading_only) < MIN_WORDS


def test_text_before_a_later_figure_does_not_count():
    later_figure = _GOOD + "\nfig2, ax2 = plt.subplots()\n"
    assert words_after_last_figure(later_figure) == 0


def test_pyplot_imported_under_another_name_is_followed():
    renamed = _GOOD.replace("import matplotlib.pyplot as plt", "from matplotlib import pyplot as mp")
    renamed = renamed.replace("plt.", "mp.")
    assert words_after_last_figure(renamed) >= MIN_WORDS
    assert words_after_last_figure(renamed.split("# %%")[0]) == 0


def test_the_known_offenders_are_examples():
    assert KNOWN_WITHOUT_CONCLUSION <= {path.name for path in EXAMPLES}


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_example_ends_with_what_its_figure_shows(path):
    words = words_after_last_figure(path.read_text(encoding="utf-8"))
    assert words is not None, f"{path.name}: no figure found: a plot_ example makes one"
    if path.name in KNOWN_WITHOUT_CONCLUSION:
        assert words < MIN_WORDS, (f"{path.name} now ends with text after its last figure: take it out of "
                                   "KNOWN_WITHOUT_CONCLUSION in tests/test_docs_checks.py")
    else:
        assert words >= MIN_WORDS, (f"{path.name}: {words} words after its last figure: end the example "
                                    "with a text cell saying what the figure shows")


# -- docs/check_build.py -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def check_build():
    spec = importlib.util.spec_from_file_location("check_build", ROOT / "docs" / "check_build.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _page(body: str, head: str = "") -> str:
    return (f"<!DOCTYPE html><html><head>{head}</head><body><nav>Sidebar – menu</nav>"
            f'<article class="bd-article" role="main">{body}</article></body></html>')


def _row(name: str, summary: str) -> str:
    return f'<tr class="row-odd"><td><p><a href="x.html"><code>{name}</code></a></p></td><td><p>{summary}</p></td></tr>'


def _site(tmp_path: Path, landing: str, cli: str = "<p>ok</p>", head: str = "") -> Path:
    (tmp_path / "api").mkdir()
    (tmp_path / "index.html").write_text(_page("<h1>Home</h1>", head))
    (tmp_path / "api" / "index.html").write_text(_page(landing))
    (tmp_path / "cli.html").write_text(_page(cli))
    return tmp_path


_ROWS = "".join(_row(f"name{i}", "One summary line.") for i in range(20))
_INDEX = f"<h1>API reference</h1><table>{_ROWS}</table>"


def test_check_build_passes_a_good_site(check_build, tmp_path):
    site = _site(tmp_path, _INDEX, cli="<p>with <code>--backend</code> dask; pages 81–93; a – b</p>",
                 head='<script src="../_static/x.js"></script><link rel="stylesheet" href="_static/a.css">'
                      '<a href="https://example.org">a link is not loaded</a>')
    assert [error for check in check_build.CHECKS for error in check(site)] == []
    assert check_build.main([str(site)]) == 0


def test_check_build_fails_a_landing_page_that_renders_docstrings(check_build, tmp_path):
    docs = ('<dl class="py class"><dt>class MLkNN</dt><dd><dl class="field-list"><dt>Parameters</dt>'
            f'<dd>{"text " * 2000}</dd></dl></dd></dl>')
    site = _site(tmp_path, _INDEX + docs)
    errors = check_build.check_api_landing(site)
    assert any("full object documentation (py class)" in e for e in errors)
    assert any("field list" in e for e in errors)
    assert any("characters of text for 20 names" in e for e in errors)
    assert check_build.main([str(site)]) == 1


def test_check_build_bounds_the_landing_page_text_alone(check_build, tmp_path):
    limit = check_build.LANDING_FIXED_CHARS + check_build.LANDING_CHARS_PER_NAME * 20
    site = _site(tmp_path, _INDEX + f"<p>{'x' * limit}</p>")
    assert [e for e in check_build.check_api_landing(site) if "bound" in e]


def test_check_build_fails_a_landing_page_without_tables(check_build, tmp_path):
    site = _site(tmp_path, "<h1>API reference</h1><p>nothing</p>")
    assert "no summary table rows" in check_build.check_api_landing(site)[0]


@pytest.mark.parametrize("text", ["write –label-columns=-3: for the last three", "else –cv 10",
                                  "(—backend dask)", "–k sets b"])
def test_check_build_fails_an_option_with_a_typographic_dash(check_build, tmp_path, text):
    site = _site(tmp_path, _INDEX, cli=f"<p>{text}</p>")
    errors = check_build.check_option_dashes(site)
    assert len(errors) == 1 and errors[0].startswith("cli.html: option with a typographic dash")
    assert check_build.main([str(site)]) == 1


def test_check_build_fails_a_page_that_loads_from_the_network(check_build, tmp_path):
    site = _site(tmp_path, _INDEX, head='<script src="https://code.jquery.com/jquery-3.7.0.js"></script>'
                                        '<link href="//cdn.example.org/a.css" rel="stylesheet">')
    errors = check_build.check_offline(site)
    assert len(errors) == 2 and "https://code.jquery.com/jquery-3.7.0.js" in errors[0]


def test_check_build_needs_a_built_site(check_build, tmp_path):
    assert check_build.main([str(tmp_path)]) == 2


# -- the torch example without PyTorch ---------------------------------------------------------------

#: Run before the example: every import of torch fails as if it were not installed (a None in
#: sys.modules would break scipy, which looks torch up there).
_NO_TORCH = """
import importlib.abc, runpy, sys

class NoTorch(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "torch" or name.startswith("torch."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)

sys.meta_path.insert(0, NoTorch())
sys.modules.pop("torch", None)
runpy.run_path(sys.argv[1], run_name="__main__")
"""


@pytest.mark.requires("matplotlib")
def test_the_torch_example_runs_without_torch_and_claims_nothing_it_did_not_compute(tmp_path):
    """The ``docs`` extra has no PyTorch and the README's docs build runs every example under
    ``-W`` (issue 47, item 16): without torch the example runs, says so, and prints no
    comparison it did not make."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "MPLBACKEND": "Agg"}
    proc = subprocess.run([sys.executable, "-c", _NO_TORCH, str(ROOT / "examples" / "plot_torch_backend.py")],
                          capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "PyTorch is not installed" in proc.stdout
    for claim in ("identical distances", "same ML-kNN scores", "torch  leave-one-out"):
        assert claim not in proc.stdout, proc.stdout


def test_ci_builds_the_docs_as_the_readme_says_before_it_installs_torch():
    """CI once installed PyTorch before the docs build, which hid the failure a reader of the
    README met (issue 47, item 16): the README's docs command, in the README's environment,
    comes before any other install in .ci/run."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    command = re.search(r"## Documentation.*?```bash\n(.*?)\n```", readme, re.S).group(1).strip()
    steps = [step.strip() for step in command.split("&&")]
    assert steps[0].startswith(".venv/bin/pip install") and steps[-1].startswith(".venv/bin/sphinx-build")
    ci = [line.strip() for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
          if line.strip() and not line.lstrip().startswith("#")]
    where = [ci.index(step) for step in steps]  # ValueError: a step of the README's command is not in CI
    assert where == sorted(where)
    installs = [i for i, line in enumerate(ci) if "pip install" in line and line != steps[0]]
    test_install = next(i for i in installs if "'.[test]'" in ci[i])
    torch = next(i for i, line in enumerate(ci) if re.search(r"pip install.*\btorch\b", line))
    assert [i for i in installs if test_install < i < where[-1]] == [], "an install before the docs build"
    assert where[-1] < torch


# -- the tables benchmarks/scale.py writes into the user guide ---------------------------------------

#: What opens a reST list at the start of a cell: a bullet, or an enumerator ("85.", "(85)", "a)").
_LIST_OPENER = re.compile(r"([-+*•‣⁃]|\(?(\d+|#|[A-Za-z]|[IVXLCDMivxlcdm]+)[.)])(\s|$)")
_CELL = re.compile(r"^(?:   \* |     )- (.*)$")


def _scale_module():
    spec = importlib.util.spec_from_file_location("scale_for_docs", ROOT / "benchmarks" / "scale.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _cells_that_render_as_something_else(rst: str) -> list[str]:
    """The list-table cells that would render as a list, or show a literal backslash before a star."""
    return [line for line in rst.splitlines() if (m := _CELL.match(line))
            and (_LIST_OPENER.match(m.group(1)) or "\\\\*" in m.group(1))]


_MARKDOWN = """| d | n | exact s (model) | faiss-union s (model) | rule |
|---|---|---|---|---|
| 32 | 300,000 | - (85) | 35.2 (34.8) | faiss-union |
| 128 | 100,000 | (40) | - | exact |

| contender | s (x exact) |
|---|---|
| exact | 3219.6 \\* (1.00) |
| auto | 1.0 * (2.00) |
"""


def test_the_scale_tables_cells_render_as_written():
    """Issue 47, item 17: the crossover table's "- (85)" (exact not run, the model's estimate)
    rendered as a bullet holding "85.", and the laws' table showed "\\*" where a star was
    meant. The generator's output opens no list and escapes every star once."""
    rst = _scale_module().to_rst(_MARKDOWN)
    assert _cells_that_render_as_something_else(rst) == []
    assert "     - – (85)" in rst and "     - 3219.6 \\* (1.00)" in rst and "     - 1.0 \\* (2.00)" in rst


def test_the_scale_tables_cells_render_as_written_through_docutils():
    """The same, rendered (docutils comes with the ``docs`` extra)."""
    docutils_core = pytest.importorskip("docutils.core")
    rst = _scale_module().to_rst(_MARKDOWN)
    html = docutils_core.publish_parts(rst, writer="html5",
                                       settings_overrides={"report_level": 5})["html_body"]
    assert "<ul" not in html and "<ol" not in html
    assert "– (85)" in html and "(40)" in html and "3219.6 * (1.00)" in html and "\\" not in html


@pytest.mark.parametrize("path", sorted((ROOT / "docs" / "user_guide").glob("*.inc")), ids=lambda p: p.name)
def test_the_user_guides_tables_open_no_list_in_a_cell(path):
    assert _cells_that_render_as_something_else(path.read_text(encoding="utf-8")) == []


# -- the citation on the site ----------------------------------------------------------------------


def _cff() -> dict:
    """CITATION.cff's title, version, authors and its references' titles (read without a YAML
    library: the file's own layout, two-space indents)."""
    text = (ROOT / "CITATION.cff").read_text(encoding="utf-8")

    def top(name: str) -> str:
        return re.search(rf"^{name}:\s*(.*)$", text, re.M).group(1).strip().strip("'\"")

    authors_block = re.search(r"^authors:\n((?:  .*\n)+)", text, re.M).group(1)
    references = text[text.index("\nreferences:\n"):]
    return {"title": top("title"), "version": top("version"), "license": top("license"),
            "authors": re.findall(r"^  - name:\s*\"?(.*?)\"?$", authors_block, re.M),
            "papers": re.findall(r"^    title:\s*\"(.*)\"$", references, re.M)}


def _bibtex_fields(rst: str) -> dict[str, str]:
    block = re.search(r"\.\. code-block:: bibtex\n\n((?:   .*\n|\n)+)", rst).group(1)
    assert block.strip().startswith("@software{mlneighbors,"), block
    return {key: value for key, value in re.findall(r"^\s+(\w+)\s*=\s*\{(.*)\},?$", block, re.M)}


def test_the_sites_citation_is_citation_cff():
    """Issue 47, item 18: the landing page and the benchmarking page cite mlneighbors with
    CITATION.cff's entry and name the paper of every reference it lists, so that a new version
    or title cannot leave the site behind."""
    cff = _cff()
    citing = (ROOT / "docs" / "citing.inc").read_text(encoding="utf-8")
    fields = _bibtex_fields(citing)
    assert fields["title"] == cff["title"]
    assert fields["version"] == cff["version"]
    assert fields["license"] == cff["license"]
    assert fields["author"] == "{" + " and ".join(cff["authors"]) + "}"
    prose = " ".join(citing.split())  # the table's cells wrap
    assert len(cff["papers"]) >= 6
    for title in cff["papers"]:
        assert title.lower() in prose.lower(), f"the paper {title!r} of CITATION.cff is not on the site"
    for page, include in [("index.rst", ".. include:: citing.inc"),
                          ("user_guide/benchmarking.rst", ".. include:: ../citing.inc")]:
        assert include in (ROOT / "docs" / page).read_text(encoding="utf-8"), f"docs/{page} gives no citation"


def test_every_model_has_its_paper_on_the_site():
    import mlneighbors

    citing = (ROOT / "docs" / "citing.inc").read_text(encoding="utf-8")
    for name in ["MLkNN", "DMLkNN", "LAMLkNN", "BRkNN", "LPkNN", "BKNN", "BLDA", "HybridKNN"]:
        assert hasattr(mlneighbors, name)
        assert f":class:`~mlneighbors.{name}`" in citing, f"{name}: which paper to cite is not said"

