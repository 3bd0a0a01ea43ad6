"""Checks of the built site that a warning-free Sphinx build does not make (run by ``.ci/run``).

Usage, after ``sphinx-build ... docs docs/_build/html``::

    python docs/check_build.py docs/_build/html

Exits 1, naming the page and what is wrong, when

- the API landing page is not an index: it holds an object's full documentation (a signature
  block or a Parameters list), or more text than :data:`LANDING_FIXED_CHARS` plus
  :data:`LANDING_CHARS_PER_NAME` per name it lists;
- a page shows a command-line option with a typographic dash ("–cv 10" for ``--cv 10``: Sphinx
  "smartens" ``--`` in plain text, and a shell refuses the result);
- a page loads a script, a stylesheet or an image from the network (the site must work offline).

The standard library only, so that it runs wherever the build ran.
"""

from __future__ import annotations

import re
import sys
from html.parser import HTMLParser
from pathlib import Path

#: Text allowed on the API landing page, on average, for each name its tables list: one line,
#: the name and the first sentence of its docstring.  Today's lines average 84 characters (the
#: longest 234, 117 names, 10,600 characters in all); a name's full documentation averages about
#: 1,900 (the landing page that rendered every docstring held 214,947 characters for 113 names).
#: The bound leaves three times today's average and sits eight times below a page that renders
#: docstrings, so it fails on the second and not on longer summaries.
LANDING_CHARS_PER_NAME = 250
#: The landing page's text besides its tables: its title, introduction and module headings.
LANDING_FIXED_CHARS = 3000

# an option whose dashes were made typographic: an en or em dash right before a letter, at the
# start of a word ("–cv", "—backend", "–label-columns=-3:"; not "pages 81–93", not "a – b")
_SMART_OPTION = re.compile(r"(?<![\w–—-])[–—]-?[A-Za-z][\w-]*")


class _Page(HTMLParser):
    """The text of a page's main article (scripts and styles left out), the tags met inside
    it, and every resource the page loads."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.depth = 0  # > 0 inside <article class="bd-article">
        self.skip = 0  # > 0 inside <script> or <style>
        self.text: list[str] = []
        self.tags: list[tuple[str, str]] = []  # (tag, class) inside the article
        self.resources: list[str] = []  # src/href of what the browser loads

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "script" and attrs.get("src"):
            self.resources.append(attrs["src"])
        if tag == "img" and attrs.get("src"):
            self.resources.append(attrs["src"])
        if tag == "link" and attrs.get("href") and attrs.get("rel") in ("stylesheet", "preload", "modulepreload"):
            self.resources.append(attrs["href"])
        if tag in ("script", "style"):
            self.skip += 1
        if self.depth:
            self.depth += tag not in _VOID
            self.tags.append((tag, attrs.get("class") or ""))
        elif tag == "article" and "bd-article" in (attrs.get("class") or ""):
            self.depth = 1

    def handle_endtag(self, tag):
        if tag in ("script", "style") and self.skip:
            self.skip -= 1
        if self.depth and tag not in _VOID:
            self.depth -= 1

    def handle_data(self, data):
        if self.depth and not self.skip:
            self.text.append(data)

    @property
    def article(self) -> str:
        return " ".join(" ".join(self.text).split())


_VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


def read(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(encoding="utf-8"))
    return page


def check_api_landing(html: Path) -> list[str]:
    """The API landing page is an index: summary tables, no object's documentation, and a text
    length bounded by the number of names it lists."""
    path = html / "api" / "index.html"
    if not path.exists():
        return [f"{path}: missing (the API landing page)"]
    page = read(path)
    rows = sum(tag == "tr" and "row-" in cls for tag, cls in page.tags)
    if rows == 0:
        return [f"{path}: no summary table rows: the landing page must list every name, one line each"]
    errors = []
    described = sorted({cls for tag, cls in page.tags if tag == "dl" and cls.split()[:1] == ["py"]})
    if described:
        errors.append(f"{path}: holds full object documentation ({', '.join(described)}): the landing "
                      "page lists names with their summary line; their documentation belongs on their pages")
    if any(tag == "dl" and "field-list" in cls for tag, cls in page.tags):
        errors.append(f"{path}: holds a Parameters/Returns field list: a docstring rendered in full")
    bound = LANDING_FIXED_CHARS + LANDING_CHARS_PER_NAME * rows
    if len(page.article) > bound:
        errors.append(f"{path}: {len(page.article):,} characters of text for {rows} names, more than the "
                      f"bound of {bound:,} ({LANDING_FIXED_CHARS:,} + {LANDING_CHARS_PER_NAME} a name): "
                      "the landing page renders more than one summary line per name")
    return errors


def check_option_dashes(html: Path) -> list[str]:
    """No page shows a command-line option whose dashes became typographic."""
    errors = []
    for path in sorted(html.rglob("*.html")):
        text = read(path).article
        for match in _SMART_OPTION.finditer(text):
            start = max(match.start() - 40, 0)
            errors.append(f"{path.relative_to(html)}: option with a typographic dash {match.group()!r} "
                          f"in '...{text[start:match.end() + 20]}...': write it as a literal "
                          "(``--option``) or keep it out of smartquotes")
    return errors


def check_offline(html: Path) -> list[str]:
    """No page loads a script, stylesheet or image from the network."""
    errors = []
    for path in sorted(html.rglob("*.html")):
        for url in read(path).resources:
            if re.match(r"(https?:)?//", url):
                errors.append(f"{path.relative_to(html)}: loads {url} from the network (blank offline)")
    return errors


CHECKS = (check_api_landing, check_option_dashes, check_offline)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python docs/check_build.py BUILT_HTML_DIR", file=sys.stderr)
        return 2
    html = Path(args[0])
    if not (html / "index.html").exists():
        print(f"check_build: {html} holds no built site (no index.html)", file=sys.stderr)
        return 2
    errors = [error for check in CHECKS for error in check(html)]
    for error in errors:
        print(f"check_build: {error}", file=sys.stderr)
    if errors:
        print(f"check_build: {len(errors)} problem(s) in {html}", file=sys.stderr)
        return 1
    print(f"check_build: {html}: the API landing page is an index, no option has a typographic dash, "
          "no page loads anything from the network")
    return 0


if __name__ == "__main__":
    sys.exit(main())
