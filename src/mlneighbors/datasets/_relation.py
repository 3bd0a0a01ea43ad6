"""What an ARFF ``@relation`` says about the labels: MEKA's ``-C n`` and the filters after it.

MEKA writes ``-C n`` into the relation name (the first n attributes are the labels; the last
-n when n < 0). Weka appends every filter it applies to the relation name, as
``-<class name><options>`` with the options' white space removed, so a file whose label
attributes were moved after the ``-C`` was written says so::

    @relation 'langlog: -C 75-weka.filters.unsupervised.attribute.Reorder-R76-last,first-75'

Here the labels went from the first 75 attributes to the last 75. :func:`c_labels` follows
the filters whose effect on the attributes the relation states exactly (Reorder and Remove
with a plain range list; the instance filters and the attribute filters that change values
only, which leave every attribute where it was) and refuses any other, naming it: reading on
would take the wrong attributes as labels.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

__all__ = ["CLabels", "Filter", "c_labels", "c_option"]

_C_RE = re.compile(r"(?:^|[\s:'\"])-C\s+(-?\d+)")
_FILTER_RE = re.compile(r"-?((?:weka|meka)\.filters(?:\.[A-Za-z_$][\w$]*)+)")
_INDEX = r"(?:first|last|\d+)"
_ITEM_RE = re.compile(rf"({_INDEX})(?:-({_INDEX}))?")
_LIST = rf"{_INDEX}(?:-{_INDEX})?(?:,{_INDEX}(?:-{_INDEX})?)*"
_REORDER_RE = re.compile(rf"-R({_LIST})")
_REMOVE_RE = re.compile(rf"(-V)?-R({_LIST})(-V)?")
#: attribute filters that transform values one attribute at a time: the attributes stay put
_IN_PLACE = frozenset({
    "Center", "Discretize", "Normalize", "NumericToNominal", "ReplaceMissingValues", "Standardize",
})
# large enough that every explicit index of a range list lies below it
_PROBE = 1 << 40


@dataclass(frozen=True)
class Filter:
    """One filter recorded in a relation name: the class and its options, as written."""

    name: str  # weka.filters.unsupervised.attribute.Reorder
    options: str  # -R76-last,first-75

    def __str__(self) -> str:
        shown = self.options.split()[0] if self.options.strip() else ""
        return self.name + (shown if len(shown) <= 60 else shown[:57] + "...")

    @property
    def on_rows(self) -> bool:
        """An instance filter (it removes, reorders or resamples rows, never attributes), or
        one that changes values in place."""
        return ".instance." in self.name or (
            self.name.rsplit(".", 1)[-1] in _IN_PLACE and ".unsupervised.attribute." in self.name
        )

    @property
    def kind(self) -> str:
        return self.name.rsplit(".", 1)[-1] if ".attribute." in self.name else ""


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
    >>> c_labels("t: -C 2-weka.filters.unsupervised.attribute.Add-Ttext-N", 5).problem
    'the filter weka.filters.unsupervised.attribute.Add-Ttext-N may have moved, removed or added attributes'
    """
    found = c_option(relation)
    if found is None:
        return None
    count, end = found
    filters = filters_in(relation[end:])
    moving = [f for f in filters if not f.on_rows]
    try:
        positions = _follow(count, moving, n_attributes)
    except _CannotFollow as exc:
        return CLabels(count, None, str(exc), tuple(moving))
    return CLabels(count, positions, None, tuple(moving))


def _follow(count: int, filters: list[Filter], n_final: int) -> np.ndarray | None:
    """Label positions after ``filters``; None when ``-C`` does not fit the attributes."""
    sizes: list[int | None] = [n_final]
    for flt in reversed(filters):  # the number of attributes before each filter
        sizes.insert(0, _size_before(flt, sizes[0]))
    n_first = sizes[0]
    if count == 0 or (n_first is not None and abs(count) > n_first):
        if not filters:
            return None
        raise _CannotFollow(
            f"-C {count} does not fit the {n_first} attributes the file had before the filter "
            f"{filters[0]}"
        )
    if count > 0:
        labels = np.arange(count)
    elif n_first is None:
        raise _CannotFollow(
            f"the number of attributes before the filter {filters[0]} cannot be told, and -C "
            f"{count} counts from the end"
        )
    else:
        labels = np.arange(n_first + count, n_first)
    for flt, size in zip(filters, sizes[:-1], strict=True):
        source = _sources(flt, size)
        hits = np.isin(source, labels)
        moved = np.sort(source[hits])
        if moved.size != labels.size or np.any(np.diff(moved) == 0):
            what = "removes" if moved.size < labels.size else "copies"
            raise _CannotFollow(f"the filter {flt} {what} label attributes")
        labels = np.flatnonzero(hits)
    if labels.size and labels[-1] >= n_final:
        raise _CannotFollow(f"the filters {', '.join(map(str, filters))} do not fit the file")
    return labels


def _parse(flt: Filter) -> tuple[list[tuple[str, str | None]], bool]:
    """The range items of a Reorder or Remove filter, and whether Remove's -V inverts them."""
    pattern = {"Reorder": _REORDER_RE, "Remove": _REMOVE_RE}.get(flt.kind)
    match = None if pattern is None else pattern.fullmatch(flt.options)
    if match is None:
        raise _CannotFollow(f"the filter {flt} may have moved, removed or added attributes")
    spec = match.group(1) if flt.kind == "Reorder" else match.group(2)
    invert = flt.kind == "Remove" and bool(match.group(1) or match.group(3))
    return [(m.group(1), m.group(2)) for m in _ITEM_RE.finditer(spec)], invert


def _intervals(
    items: list[tuple[str, str | None]], n: int, flt: Filter, *, ordered: bool
) -> list[tuple[int, int]]:
    """Weka's 1-based range list as 0-based ``(start, stop)`` pairs (both included) among
    ``n`` attributes, in list order; ``start > stop`` runs backwards (Reorder only)."""

    def index(token: str) -> int:
        value = {"first": 1, "last": n}.get(token)
        value = int(token) if value is None else value
        if not 1 <= value <= n:
            raise _CannotFollow(f"the filter {flt} names attribute {token}, outside 1 to {n}")
        return value - 1

    pairs = []
    for start, stop in items:
        a = index(start)
        b = a if stop is None else index(stop)
        if a > b and not ordered:
            raise _CannotFollow(f"the filter {flt} has a descending range")
        pairs.append((a, b))
    return pairs


def _size(flt: Filter, n: int) -> int:
    """How many attributes ``flt`` leaves of ``n``, counted without listing them."""
    items, invert = _parse(flt)
    pairs = _intervals(items, n, flt, ordered=flt.kind == "Reorder")
    if flt.kind == "Reorder":
        return sum(abs(b - a) + 1 for a, b in pairs)
    chosen, reach = 0, -1  # the union of the intervals, swept in order of their starts
    for a, b in sorted(pairs):
        if b > reach:
            chosen += b - max(a, reach + 1) + 1
            reach = b
    return chosen if invert else n - chosen


def _size_before(flt: Filter, n_after: int | None) -> int | None:
    """How many attributes the file had before ``flt``; None when any number gives the same
    positions (only explicit indices, and the filter keeps a fixed number)."""
    items, _ = _parse(flt)
    uses_last = any("last" in (a, b) for a, b in items)
    low, high = _size(flt, _PROBE), _size(flt, _PROBE + 1)
    slope = high - low  # the size grows by `slope` per attribute beyond every explicit index
    if slope == 0:
        if uses_last:
            raise _CannotFollow(f"the number of attributes before the filter {flt} cannot be told")
        if n_after is not None and low != n_after:
            raise _CannotFollow(f"the filter {flt} does not fit the file's {n_after} attributes")
        return None
    if n_after is None:
        raise _CannotFollow(f"the number of attributes before the filter {flt} cannot be told")
    n = _PROBE + (n_after - low) // slope if (n_after - low) % slope == 0 else -1
    try:
        fits = n >= 1 and _size(flt, n) == n_after
    except _CannotFollow:
        fits = False
    if not fits:
        raise _CannotFollow(f"the filter {flt} does not fit the file's {n_after} attributes")
    return n


def _sources(flt: Filter, n: int | None) -> np.ndarray:
    """For each attribute after ``flt``, the position it had before."""
    items, invert = _parse(flt)
    if n is None:  # explicit indices only: any n that holds them gives the same positions
        n = max(1 if t == "first" else int(t) for item in items for t in item if t is not None)
    pairs = _intervals(items, n, flt, ordered=flt.kind == "Reorder")
    runs = [np.arange(a, b + 1) if a <= b else np.arange(a, b - 1, -1) for a, b in pairs]
    listed = np.concatenate(runs)
    if flt.kind == "Reorder":
        return listed
    chosen = np.unique(listed)
    return chosen if invert else np.setdiff1d(np.arange(n), chosen)
