"""What an ARFF ``@relation`` says about the labels: MEKA's ``-C n`` and the filters after it.

MEKA writes ``-C n`` into the relation name (the first n attributes are the labels; the last
-n when n < 0). Weka appends every filter it applies to the relation name, as
``-<class name><options>`` with each option trimmed and nothing between them, so a file whose
label attributes were moved after the ``-C`` was written says so::

    @relation 'langlog: -C 75-weka.filters.unsupervised.attribute.Reorder-R76-last,first-75'

Here the labels went from the first 75 attributes to the last 75. :func:`c_labels` follows a
filter only where the filter and its options prove where every attribute went, and refuses
any other, naming it and its options: reading on would take the wrong attributes as labels.
What is followed (each read from Weka's source, not guessed from the name):

* ``unsupervised.attribute.Reorder -R list``: the attributes in the list's order (a descending
  range runs backwards, an attribute may be listed twice);
* ``unsupervised.attribute.Remove [-V] [-R list]``: without ``-V`` the listed attributes go and
  the rest keep their order; with ``-V`` the listed ones stay, in the list's order, except that
  where they number as many as the file had, newer Weka keeps the file's order and older Weka the
  list's, so a ``-V`` list that is not ascending is followed only where that cannot happen;
* filters that leave every attribute where it was, one attribute out for each attribute in:
  ``Center``, ``Standardize``, ``ReplaceMissingValues``, ``Normalize``, ``NumericToNominal`` and
  ``Discretize`` without ``-D`` (unsupervised, attribute) - with ``-D`` Discretize replaces an
  attribute by one binary attribute per cut point it found, a number no header records;
* the instance filters of Weka itself (``Randomize``, ``Resample``, ``RemovePercentage``, ...),
  which choose, order or weight rows and never touch an attribute, whatever their options.

The options of the attribute filters are read by each filter's own option names and value forms
(as Weka writes them, or with spaces between them); an option the reader does not know, a repeated
one, or any text left over refuses the filter. A ``_`` after a filter is Weka's join of two merged
relations' names: what the merge did to the attributes is not recorded, so it is refused too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

__all__ = ["CLabels", "Filter", "c_labels", "c_option"]

_C_RE = re.compile(r"(?:^|[\s:'\"])-C\s+(-?\d+)")
# Weka writes "-" and the class's full name: lower-case packages and a capitalised class. Any
# such name starts a filter, known or not, so an unknown one is refused by name instead of
# being read as options of the filter before it.
_FILTER_RE = re.compile(r"-((?:[a-z_$][\w$]*\.)+[A-Z][\w$]*)")
_INDEX = r"(?:first|last|\d+)"
_ITEM_RE = re.compile(rf"({_INDEX})(?:-({_INDEX}))?")
# the value forms of the options read here; a value ends where the text does, at white space or
# at the next option (a "-" and a letter), so "-M-1.0" is -M with the value -1.0
_VALUE = {
    "flag": "",
    "int": r"\s*(-?\d+)",
    "real": r"\s*(-?(?:\d+(?:\.\d*)?(?:E-?\d+)?|Infinity)|NaN)",
    "range": rf"\s*({_INDEX}(?:-{_INDEX})?(?:,{_INDEX}(?:-{_INDEX})?)*)",
}
_END = r"(?=\s|-[A-Za-z]|$)"

# options every Weka filter takes (Filter) and those of PotentialClassIgnorer's subclasses
_FILTER_FLAGS = {"output-debug-info": "flag", "do-not-check-capabilities": "flag"}
_IGNORER = {"unset-class-temporarily": "flag", **_FILTER_FLAGS}
_ATTRIBUTE = "weka.filters.unsupervised.attribute."
#: attribute filters that move or remove attributes, as the options say
_MOVING = {
    _ATTRIBUTE + "Reorder": {"R": "range", **_FILTER_FLAGS},
    _ATTRIBUTE + "Remove": {"V": "flag", "R": "range", **_FILTER_FLAGS},
}
#: attribute filters whose output has one attribute for each input attribute, in its place,
#: for every option listed (Discretize only without -D, checked apart)
_IN_PLACE = {
    _ATTRIBUTE + "Center": _IGNORER,
    _ATTRIBUTE + "Standardize": _IGNORER,
    _ATTRIBUTE + "ReplaceMissingValues": _IGNORER,
    _ATTRIBUTE + "Normalize": {"S": "real", "T": "real", **_IGNORER},
    _ATTRIBUTE + "NumericToNominal": {"R": "range", "V": "flag", **_FILTER_FLAGS},
    _ATTRIBUTE + "Discretize": {
        "D": "flag", "Y": "flag", "F": "flag", "O": "flag", "V": "flag", "B": "int", "M": "real",
        "R": "range", "precision": "int", "spread-attribute-weight": "flag", **_IGNORER,
    },
}
#: Weka's own instance filters: each passes the attributes through as they came (its output
#: format is its input format, whatever its options; only nominal values may be dropped)
_ON_ROWS = frozenset(
    [f"weka.filters.unsupervised.instance.{name}" for name in (
        "NonSparseToSparse", "Randomize", "RemoveDuplicates", "RemoveFolds", "RemoveFrequentValues",
        "RemoveMisclassified", "RemovePercentage", "RemoveRange", "RemoveWithValues", "Resample",
        "ReservoirSample", "SparseToNonSparse", "SubsetByExpression",
    )]
    + [f"weka.filters.supervised.instance.{name}" for name in (
        "ClassBalancer", "Resample", "SpreadSubsample", "StratifiedRemoveFolds",
    )]
)
# large enough that every explicit index of a range list lies below it
_PROBE = 1 << 40


@dataclass(frozen=True)
class Filter:
    """One filter recorded in a relation name: the class and its options, as written."""

    name: str  # weka.filters.unsupervised.attribute.Reorder
    options: str  # -R76-last,first-75

    def __str__(self) -> str:
        shown = self.name + re.sub(r"\s+", " ", self.options).rstrip()
        return shown if len(shown) <= 160 else shown[:157] + "..."


@dataclass(frozen=True)
class _Move:
    """A Reorder or Remove, its options read: the range items and whether -V keeps them."""

    filter: Filter
    items: tuple[tuple[str, str | None], ...]
    keep: bool  # Remove -V: the listed attributes stay (Reorder: always)

    @property
    def reorder(self) -> bool:
        return self.filter.name.endswith(".Reorder")


class _CannotFollow(Exception):
    """The filter's effect on the attributes cannot be told from the relation."""


@dataclass(frozen=True)
class CLabels:
    """The label attributes a ``-C`` names, once the filters after it are followed.

    ``positions`` are 0-based attribute positions in the file as it is, increasing; None
    when they cannot be told, and then ``problem`` says why (naming the filter).
    ``followed`` are the filters that moved attributes.
    """

    count: int
    positions: np.ndarray | None
    problem: str | None = None
    followed: tuple[Filter, ...] = ()


def c_option(relation: str) -> tuple[int, int] | None:
    """``(n, end)`` of the first ``-C n`` in a relation name (``end``: where it stops), or None.

    >>> c_option("music: -C 6 -I 0")
    (6, 11)
    >>> c_option("plain") is None
    True
    """
    match = _C_RE.search(relation)
    return None if match is None else (int(match.group(1)), match.end())


def filters_in(text: str) -> list[Filter]:
    """The filters recorded in (part of) a relation name, in the order they were applied.

    >>> [str(f) for f in filters_in(" -I 0-weka.filters.unsupervised.attribute.Reorder-R2-last,1")]
    ['weka.filters.unsupervised.attribute.Reorder-R2-last,1']
    """
    matches = list(_FILTER_RE.finditer(text))
    filters = []
    for i, match in enumerate(matches):
        end = matches[i + 1].start() if i + 1 < len(matches) else len(text)
        filters.append(Filter(match.group(1), text[match.end() : end]))
    return filters


def c_labels(relation: str, n_attributes: int) -> CLabels | None:
    """The label positions that ``-C`` gives in a file of ``n_attributes``, or None without ``-C``.

    >>> r = c_labels("t: -C 2-weka.filters.unsupervised.attribute.Reorder-R3-last,first-2", 5)
    >>> r.positions.tolist()
    [3, 4]
    >>> print(c_labels("t: -C 2-weka.filters.unsupervised.attribute.Discretize-D-B3", 5).problem)
    ... # doctest: +ELLIPSIS
    the filter weka.filters.unsupervised.attribute.Discretize-D-B3 has -D: it replaces each ...
    """
    found = c_option(relation)
    if found is None:
        return None
    count, end = found
    try:
        moves = [move for move in map(_read, filters_in(relation[end:])) if move is not None]
        positions = _follow(count, moves, n_attributes)
    except _CannotFollow as exc:
        return CLabels(count, None, str(exc))
    return CLabels(count, positions, None, tuple(move.filter for move in moves))


def _read(flt: Filter) -> _Move | None:
    """What ``flt`` does to the attributes: a move, or None where every attribute stays put."""
    known = _MOVING.get(flt.name) or _IN_PLACE.get(flt.name)
    if known is None and flt.name not in _ON_ROWS:
        raise _CannotFollow(
            f"the filter {flt} may have moved, removed or added attributes: it is not one the reader follows"
        )
    merged = flt.options.find("_")  # no option of these filters holds a "_"
    if merged >= 0:
        raise _CannotFollow(
            f"the filter {Filter(flt.name, flt.options[:merged])} is followed by "
            f"{flt.options[merged:merged + 40]!r}, the name of a relation merged into it (Weka joins "
            "merged relations' names with '_'): what the merge did to the attributes is not recorded"
        )
    if known is None:  # an instance filter: its options choose rows only
        return None
    options = _options(flt, known)
    if flt.name in _IN_PLACE:
        if "D" in options:  # Discretize -D
            raise _CannotFollow(
                f"the filter {flt} has -D: it replaces each attribute it discretizes by one binary "
                "attribute per cut point it found, a number the header does not record, so the "
                "attributes after it moved"
            )
        return None
    spec = options.get("R") or ""
    items = tuple((m.group(1), m.group(2)) for m in _ITEM_RE.finditer(spec))
    if flt.name.endswith(".Reorder"):
        if not items:  # Weka's Reorder then writes no attribute at all
            raise _CannotFollow(f"the filter {flt} has no -R list")
        return _Move(flt, items, keep=True)
    return _Move(flt, items, keep="V" in options)


def _options(flt: Filter, known: dict[str, str]) -> dict[str, str | None]:
    """The options of ``flt``, read by the option names and value forms in ``known``."""
    names = sorted(known, key=len, reverse=True)  # "-precision6" is not "-p" "recision6"
    pattern = re.compile(
        r"\s*-(?:" + "|".join(f"({re.escape(name)}){_VALUE[known[name]]}{_END}" for name in names) + ")"
    )
    found: dict[str, str | None] = {}
    text, at = flt.options, 0
    while text[at:].strip():
        match = pattern.match(text, at)
        if match is None:
            raise _CannotFollow(
                f"the filter {flt} has options the reader does not know ({text[at:].strip()[:40]!r}), "
                "so its effect on the attributes cannot be told"
            )
        group = next(i for i in range(1, len(match.groups()) + 1) if match.group(i) is not None)
        name = match.group(group)
        if name in found:
            raise _CannotFollow(f"the filter {flt} has the option -{name} twice")
        found[name] = match.group(group + 1) if known[name] != "flag" else None
        at = match.end()
    return found


def _follow(count: int, filters: list[_Move], n_final: int) -> np.ndarray | None:
    """Label positions after ``filters``; None when ``-C`` does not fit the attributes."""
    sizes: list[int | None] = [n_final]
    for move in reversed(filters):  # the number of attributes before each filter
        sizes.insert(0, _size_before(move, sizes[0]))
    n_first = sizes[0]
    if count == 0 or (n_first is not None and abs(count) > n_first):
        if not filters:
            return None
        raise _CannotFollow(
            f"-C {count} does not fit the {n_first} attributes the file had before the filter "
            f"{filters[0].filter}"
        )
    if count > 0:
        labels = np.arange(count)
    elif n_first is None:
        raise _CannotFollow(
            f"the number of attributes before the filter {filters[0].filter} cannot be told, and -C "
            f"{count} counts from the end"
        )
    else:
        labels = np.arange(n_first + count, n_first)
    for move, size in zip(filters, sizes[:-1], strict=True):
        source = _sources(move, size)
        hits = np.isin(source, labels)
        moved = np.sort(source[hits])
        if moved.size != labels.size or np.any(np.diff(moved) == 0):
            what = "removes" if moved.size < labels.size else "copies"
            raise _CannotFollow(f"the filter {move.filter} {what} label attributes")
        labels = np.flatnonzero(hits)
    if labels.size and labels[-1] >= n_final:
        raise _CannotFollow(f"the filters {', '.join(str(m.filter) for m in filters)} do not fit the file")
    return labels


def _intervals(move: _Move, n: int) -> list[tuple[int, int]]:
    """Weka's 1-based range list as 0-based ``(start, stop)`` pairs (both included) among
    ``n`` attributes, in list order. Reorder runs ``start > stop`` backwards; Remove's ranges
    (weka.core.Range) take the lower and upper of the two ends, in that order. An index outside
    1 to n is an error in Weka, so no file was written with one."""

    def index(token: str) -> int:
        value = {"first": 1, "last": n}.get(token)
        value = int(token) if value is None else value
        if not 1 <= value <= n:
            raise _CannotFollow(f"the filter {move.filter} names attribute {token}, outside 1 to {n}")
        return value - 1

    pairs = []
    for start, stop in move.items:
        a = index(start)
        b = a if stop is None else index(stop)
        pairs.append((a, b) if move.reorder else (min(a, b), max(a, b)))
    return pairs


def _size(move: _Move, n: int) -> int:
    """How many attributes ``move`` leaves of ``n``, counted without listing them."""
    pairs = _intervals(move, n)
    if move.keep:  # Reorder, Remove -V: every listed attribute once per listing
        return sum(abs(b - a) + 1 for a, b in pairs)
    chosen, reach = 0, -1  # the union of the intervals, swept in order of their starts
    for a, b in sorted(pairs):
        if b > reach:
            chosen += b - max(a, reach + 1) + 1
            reach = b
    return n - chosen


def _size_before(move: _Move, n_after: int | None) -> int | None:
    """How many attributes the file had before ``move``; None when any number gives the same
    positions (only explicit indices, and the filter keeps a fixed number)."""
    uses_last = any("last" in (a, b) for a, b in move.items)
    low, high = _size(move, _PROBE), _size(move, _PROBE + 1)
    slope = high - low  # the size grows by `slope` per attribute beyond every explicit index
    if slope == 0:
        if uses_last:
            raise _CannotFollow(f"the number of attributes before the filter {move.filter} cannot be told")
        if n_after is not None and low != n_after:
            raise _CannotFollow(f"the filter {move.filter} does not fit the file's {n_after} attributes")
        return None
    if n_after is None:
        raise _CannotFollow(f"the number of attributes before the filter {move.filter} cannot be told")
    n = _PROBE + (n_after - low) // slope if (n_after - low) % slope == 0 else -1
    if n < 1 or _sized(move, n) != n_after:
        raise _CannotFollow(f"the filter {move.filter} does not fit the file's {n_after} attributes")
    # The size is affine beyond the explicit indices, but Remove's "last" may also name an
    # attribute listed by number, and then one attribute fewer leaves as many: refuse the doubt.
    if _sized(move, n - 1) == n_after:
        raise _CannotFollow(
            f"the number of attributes before the filter {move.filter} cannot be told ({n - 1} or {n})"
        )
    return n


def _sized(move: _Move, n: int) -> int | None:
    """``_size``, or None where Weka would refuse ``n`` attributes."""
    try:
        return _size(move, n) if n >= 1 else None
    except _CannotFollow:
        return None


def _sources(move: _Move, n: int | None) -> np.ndarray:
    """For each attribute after ``move``, the position it had before."""
    exact = n is not None
    if n is None:  # explicit indices only: any n that holds them gives the same positions
        n = max((1 if t == "first" else int(t) for item in move.items for t in item if t is not None), default=0)
    pairs = _intervals(move, n)
    if not move.keep:
        # the gaps between the removed intervals, listed without listing what was removed (a
        # range may name far more attributes than the file has left)
        kept, start = [], 0
        for a, b in sorted(pairs):
            if a > start:
                kept.append(np.arange(start, a))
            start = max(start, b + 1)
        kept.append(np.arange(start, n))
        return np.concatenate(kept)
    runs = [np.arange(a, b + 1) if a <= b else np.arange(a, b - 1, -1) for a, b in pairs]
    listed = np.concatenate(runs) if runs else np.zeros(0, dtype=np.intp)
    if not move.reorder and np.any(np.diff(listed) <= 0) and (not exact or listed.size == n):
        # weka.core.Range lists them in the list's order, but Remove keeps the file as it was
        # where as many are listed as there are (Weka since 2018): which one wrote this file?
        raise _CannotFollow(
            f"the filter {move.filter} keeps (-V) attributes listed out of the file's order, which "
            "Weka versions write differently"
        )
    return listed
