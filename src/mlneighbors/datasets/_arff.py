"""A fast reader for ARFF files (Weka's Attribute-Relation File Format).

The header (``@relation``, ``@attribute``, ``@data``) is read line by line. The
data section, which holds nearly all of the bytes, is parsed in bulk, with no
Python code running per value:

* dense rows whose attributes are all numeric (or nominal with numeric
  values) go through :func:`numpy.loadtxt`'s C parser in one call;
* other unquoted rows are split into tokens by numpy operations on the raw
  bytes (a byte-class table and one ``diff`` give every token's offsets);
  each token of up to 8 bytes is packed into a uint64 read straight from the
  buffer, so that nominal values are matched by a ``searchsorted`` against
  the declared values, and numbers are parsed once per distinct string;
* sparse indices are parsed eight digits at a time (SWAR arithmetic on the
  packed uint64);
* rows with quoted values fall back to one regular expression per row.

Every path reports a malformed file as an
:class:`~mlneighbors.datasets._dataset.ArffFormatError` naming the file, the
1-based line and what was expected there.
"""

from __future__ import annotations

import gzip
import os
import re
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
import scipy.sparse as sp

from mlneighbors.datasets._dataset import ArffFormatError

__all__ = ["Attribute", "ArffTable", "parse_arff", "read_arff"]

AttributeKind = Literal["numeric", "nominal", "string", "date"]

_NUMERIC_TYPES = frozenset({"numeric", "real", "integer"})

# Byte classes of the data section. Commas count as separators, as white
# space does (Weka reads them alike); the row checks still count the commas.
_TOKEN, _SEP, _NEWLINE, _OPEN, _CLOSE = 0, 1, 2, 3, 4
_BYTE_CLASS = np.zeros(256, dtype=np.uint8)
for _c in b" \t\r\f\v,":
    _BYTE_CLASS[_c] = _SEP
_BYTE_CLASS[ord("\n")] = _NEWLINE
_BYTE_CLASS[ord("{")] = _OPEN
_BYTE_CLASS[ord("}")] = _CLOSE

# _LOW_BYTES[L] keeps the first L bytes of a little-endian uint64;
# _ZERO_FILL[L] puts ASCII '0' in the 8 - L bytes before a right-aligned number.
_LOW_BYTES = np.array([(1 << (8 * n)) - 1 for n in range(9)], dtype=np.uint64)
_ZERO_FILL = np.array(
    [int.from_bytes(b"0" * (8 - n) + b"\0" * n, "little") for n in range(9)], dtype=np.uint64
)
_KEY_MISSING = np.uint64(ord("?"))

_QUOTED = r"""'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*\""""
_FIELD = rf"""\s*({_QUOTED}|[^,'"]*?)\s*"""
_FIELDS_RE = re.compile(rf"(?:{_FIELD},)*", re.DOTALL)
_FIELD_RE = re.compile(rf"{_FIELD},", re.DOTALL)
_PAIR = rf"""\s*([^\s,'"]+)\s+({_QUOTED}|[^,'"]*?)\s*"""
_PAIRS_RE = re.compile(rf"(?:{_PAIR},)*", re.DOTALL)
_PAIR_RE = re.compile(rf"{_PAIR},", re.DOTALL)
_QUOTED_START_RE = re.compile(_QUOTED, re.DOTALL)
_BARE_NAME_RE = re.compile(r"[^\s{]+")
_ESCAPE_RE = re.compile(r"\\(.)", re.DOTALL)
_ESCAPES = {"n": "\n", "r": "\r", "t": "\t"}
# The common declarations, read without the general tokenizer.
_PLAIN_ATTRIBUTE_RE = re.compile(
    r"@attribute[ \t]+([^\s{}'\"%,]+)[ \t]+(?:(numeric|real|integer)|\{([^'\"{}]*)\})",
    re.IGNORECASE,
)
_MISSING_FIELD_RE = re.compile(r"(^|,)[ \t]*\?[ \t]*(?=,|\r?$)", re.MULTILINE)

_MISSING = "?"


@dataclass(frozen=True)
class Attribute:
    """One ``@attribute`` declaration.

    Attributes
    ----------
    name : str
        The name, with quotes removed and backslash escapes resolved
        (``'Swainson\\'s Thrush'`` becomes ``Swainson's Thrush``).
    kind : {"numeric", "nominal", "string", "date"}
        ``numeric`` also covers the ``real`` and ``integer`` types.
    values : tuple of str or None
        The declared values of a nominal attribute, in declaration order;
        ``None`` for the other kinds.
    """

    name: str
    kind: AttributeKind
    values: tuple[str, ...] | None = None


@dataclass
class ArffTable:
    """The content of an ARFF file, with every value as a float.

    Attributes
    ----------
    relation : str
        The ``@relation`` name (unquoted).
    attributes : list of Attribute
        The attributes in file order.
    data : ndarray of shape (n_rows, n_attributes) or scipy.sparse.csr_matrix
        float64. A dense array for dense rows; a CSR matrix (sorted indices,
        no explicit zeros) for sparse ``{index value, ...}`` rows, where an
        unlisted value is 0 as ARFF defines it. Numeric values are as
        written; a nominal value is the index of the value in
        ``Attribute.values`` (so an unlisted sparse nominal value stands for
        the first declared value); string and date values and missing values
        (``?``) are NaN.
    row_lines : ndarray of shape (n_rows,), dtype int64
        The 1-based line number of each row in the file.
    relation_line : int
        The line of the ``@relation`` declaration (0 when unknown).
    attribute_lines : tuple of int
        The line of each ``@attribute`` declaration (empty when unknown).
    """

    relation: str
    attributes: list[Attribute]
    data: np.ndarray | sp.csr_matrix
    row_lines: np.ndarray
    relation_line: int = 0
    attribute_lines: tuple[int, ...] = ()

    @property
    def is_sparse(self) -> bool:
        return sp.issparse(self.data)

    @property
    def n_rows(self) -> int:
        return int(self.data.shape[0])

    @property
    def names(self) -> list[str]:
        """The attribute names in file order."""
        return [attribute.name for attribute in self.attributes]


def read_arff(source: str | os.PathLike[str] | bytes) -> ArffTable:
    """Read an ARFF file, plain or gzip-compressed.

    Parameters
    ----------
    source : str, path-like or bytes
        The path of a ``.arff`` or ``.arff.gz`` file (gzip is recognised by
        its magic bytes, whatever the name), or the raw bytes of such a file.
        Use :func:`parse_arff` for ARFF text held in a string.

    Returns
    -------
    ArffTable

    Raises
    ------
    ArffFormatError
        The file is not valid ARFF; the message names the line and what was
        expected there.
    FileNotFoundError
        ``source`` names no file.

    Notes
    -----
    Supported: the numeric (``real``, ``integer``), nominal, string and date
    types, dense and sparse rows, quoted names and values with backslash
    escapes, ``%`` comment lines and missing values ``?``. Not supported:
    relational attributes and instance weights (``{w}`` after a row); dense
    and sparse rows cannot be mixed in one file. Sparse indices may come in
    any order within a row, but not twice.

    Examples
    --------
    >>> table = parse_arff("@relation r\\n@attribute x numeric\\n"
    ...                    "@attribute y {a,b}\\n@data\\n1.5,b\\n")
    >>> table.data
    array([[1.5, 1. ]])
    """
    if isinstance(source, (bytes, bytearray, memoryview)):
        return _parse(bytes(source), "<bytes>")
    path = Path(source)
    return _parse(path.read_bytes(), str(path))


def parse_arff(text: str) -> ArffTable:
    """Parse ARFF text held in a string; see :func:`read_arff`.

    Parameters
    ----------
    text : str
        The whole content of an ARFF file.

    Returns
    -------
    ArffTable
    """
    return _parse(text.encode("utf-8"), "<string>")


# ---------------------------------------------------------------------------
# header


def _error(origin: str, line: int, message: str) -> ArffFormatError:
    return ArffFormatError(f"{origin}, line {line}: {message}")


def _unescape(text: str) -> str:
    if "\\" not in text:
        return text
    return _ESCAPE_RE.sub(lambda m: _ESCAPES.get(m.group(1), m.group(1)), text)


def _unquote(token: str) -> str:
    if token[:1] in ("'", '"'):
        return _unescape(token[1:-1])
    return token


def _parse(raw: bytes, origin: str) -> ArffTable:
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError, zlib.error) as exc:
            raise ArffFormatError(f"{origin}: not a readable gzip file ({exc})") from None
    if raw[:3] == b"\xef\xbb\xbf":
        raw = raw[3:]
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _error(origin, *utf8_problem(raw, exc)) from None
    head = _parse_header(text, origin)
    header = text[: head.data_at]
    data = raw[len(header) if header.isascii() else len(header.encode("utf-8")) :]
    matrix, row_lines = _parse_data(
        data, text[head.data_at :], head.first_line, head.attributes, origin
    )
    return ArffTable(
        head.relation, head.attributes, matrix, row_lines, head.relation_line, head.attribute_lines
    )


def utf8_problem(raw: bytes, exc: UnicodeDecodeError) -> tuple[int, str]:
    """The line of the first byte that is not UTF-8, and what to do about it."""
    line_start = raw.rfind(b"\n", 0, exc.start) + 1
    column = exc.start - line_start + 1
    byte = raw[exc.start : exc.start + 1].hex()
    return 1 + raw.count(b"\n", 0, exc.start), (
        f"byte 0x{byte} at column {column} is not UTF-8, the encoding the file is read in: "
        "convert the file (e.g. iconv -f latin1 -t utf-8)"
    )


@dataclass(frozen=True)
class _Header:
    relation: str
    attributes: list[Attribute]
    data_at: int  # offset of the data section in the text
    first_line: int  # line number of the data section's first line
    relation_line: int
    attribute_lines: tuple[int, ...]


def _parse_header(text: str, origin: str) -> _Header:
    relation: str | None = None
    relation_line = 0
    attributes: list[Attribute] = []
    attribute_lines: list[int] = []
    seen: set[str] = set()
    pos, lineno, size = 0, 0, len(text)
    while pos < size:
        newline = text.find("\n", pos)
        end = size if newline < 0 else newline
        line = text[pos:end].strip()
        lineno += 1
        pos = end + 1
        if not line or line[0] == "%":
            continue
        keyword, _, rest = line.replace("\t", " ").partition(" ")
        keyword = keyword.lower()
        if keyword == "@attribute":
            if relation is None:
                raise _error(origin, lineno, "expected @relation before the first @attribute")
            attribute = _parse_attribute(line, rest.strip(), origin, lineno)
            if attribute.name in seen:
                raise _error(origin, lineno, f"attribute {attribute.name!r} is declared twice")
            seen.add(attribute.name)
            attributes.append(attribute)
            attribute_lines.append(lineno)
        elif keyword == "@relation":
            if relation is not None:
                raise _error(origin, lineno, "a second @relation")
            relation = _parse_relation(rest.strip(), origin, lineno)
            relation_line = lineno
        elif keyword == "@data":
            if rest.strip():
                found = rest.strip()
                raise _error(origin, lineno, f"expected nothing after @data, found {found!r}")
            if relation is None:
                raise _error(origin, lineno, "expected @relation before @data")
            if not attributes:
                raise _error(origin, lineno, "expected at least one @attribute before @data")
            return _Header(
                relation, attributes, min(pos, size), lineno + 1, relation_line,
                tuple(attribute_lines),
            )
        else:
            raise _error(
                origin, lineno, f"expected @relation, @attribute or @data, found {line[:40]!r}"
            )
    if not text.strip():
        raise ArffFormatError(f"{origin}: the file is empty; expected an ARFF header (@relation)")
    raise _error(origin, lineno + 1, "expected @data, found the end of the file")


def _parse_relation(rest: str, origin: str, lineno: int) -> str:
    if not rest:
        raise _error(origin, lineno, "expected a name after @relation")
    if rest[0] in "'\"":
        match = _QUOTED_START_RE.match(rest)
        if match is None or rest[match.end() :].strip():
            raise _error(origin, lineno, "expected one quoted relation name")
        return _unquote(match.group())
    return rest


def _parse_attribute(line: str, rest: str, origin: str, lineno: int) -> Attribute:
    plain = _PLAIN_ATTRIBUTE_RE.fullmatch(line)
    if plain is not None:
        name, numeric, listed = plain.groups()
        if numeric is not None:
            return Attribute(name, "numeric")
        values = tuple(value.strip() for value in listed.split(","))
        if all(values) and len(set(values)) == len(values):
            return Attribute(name, "nominal", values)
        # an empty or repeated value: the general path below says which
    if not rest:
        raise _error(origin, lineno, "expected a name and a type after @attribute")
    if rest[0] in "'\"":
        match = _QUOTED_START_RE.match(rest)
        if match is None:
            raise _error(origin, lineno, "unterminated quoted attribute name")
    else:
        match = _BARE_NAME_RE.match(rest)
        if match is None:
            raise _error(origin, lineno, "expected an attribute name")
    name = _unquote(match.group())
    spec = rest[match.end() :].strip()
    if not spec:
        raise _error(origin, lineno, f"expected a type after the attribute name {name!r}")
    if spec[0] == "{":
        if spec[-1] != "}":
            raise _error(origin, lineno, f"expected '}}' closing the values of {name!r}")
        return Attribute(name, "nominal", _parse_nominal_values(spec[1:-1], name, origin, lineno))
    type_name, _, type_rest = spec.replace("\t", " ").partition(" ")
    type_name = type_name.lower()
    if type_name in _NUMERIC_TYPES or type_name == "string":
        if type_rest.strip():
            raise _error(
                origin, lineno, f"expected nothing after the type {type_name!r} of {name!r}"
            )
        return Attribute(name, "string" if type_name == "string" else "numeric")
    if type_name == "date":
        return Attribute(name, "date")
    if type_name == "relational":
        raise _error(origin, lineno, f"relational attribute {name!r} is not supported")
    raise _error(
        origin,
        lineno,
        f"unknown type {spec[:40]!r} of attribute {name!r}; expected numeric, real, "
        "integer, string, date or {value, ...}",
    )


def _parse_nominal_values(inner: str, name: str, origin: str, lineno: int) -> tuple[str, ...]:
    if not inner.strip():
        return ()
    text = inner + ","
    if _FIELDS_RE.fullmatch(text) is None:
        raise _error(origin, lineno, f"malformed list of values of {name!r}")
    raw_values = _FIELD_RE.findall(text)
    if any(value == "" for value in raw_values):
        raise _error(origin, lineno, f"an empty value in the list of values of {name!r}")
    values = tuple(_unquote(value) for value in raw_values)
    if len(set(values)) != len(values):
        raise _error(origin, lineno, f"a value is declared twice in the values of {name!r}")
    return values


# ---------------------------------------------------------------------------
# data section: dispatch


def _parse_data(
    data: bytes, text: str, first_line: int, attributes: list[Attribute], origin: str
) -> tuple[np.ndarray | sp.csr_matrix, np.ndarray]:
    if "\0" in text:
        line = first_line + text.count("\n", 0, text.index("\0"))
        raise _error(origin, line, "a NUL character in the data")
    if "%" in text:
        # Blank the comment lines rather than dropping them: line numbers stay.
        lines = text.split("\n")
        text = "\n".join("" if line.lstrip().startswith("%") else line for line in lines)
        data = text.encode("utf-8")
    first = re.search(r"\S", text)
    sparse = first is not None and text[first.start()] == "{"
    if "'" in text or '"' in text:
        return _parse_quoted_rows(text, sparse, first_line, attributes, origin)
    if sparse:
        return _parse_sparse(data, first_line, attributes, origin)
    numbers = _declared_numbers(attributes)
    if all(a.kind == "numeric" or n is not None for a, n in zip(attributes, numbers, strict=True)):
        parsed = _parse_dense_numeric(text, first_line, numbers)
        if parsed is not None:
            return parsed
    return _parse_dense(data, first_line, attributes, origin)


def _declared_numbers(attributes: list[Attribute]) -> list[np.ndarray | None]:
    """For each nominal attribute whose values are distinct numbers, those numbers."""
    cache: dict[tuple[str, ...], np.ndarray | None] = {}
    numbers: list[np.ndarray | None] = []
    for attribute in attributes:
        values = attribute.values
        if attribute.kind != "nominal" or not values:
            numbers.append(None)
            continue
        if values not in cache:
            try:
                parsed = np.array([float(v) for v in values])
                distinct = np.unique(parsed).size == parsed.size and np.isfinite(parsed).all()
                cache[values] = parsed if distinct else None
            except ValueError:
                cache[values] = None
        numbers.append(cache[values])
    return numbers


def _token_bounds(classes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Start and end (exclusive) offsets of the runs of token bytes."""
    inside = np.zeros(classes.size + 2, dtype=np.int8)
    inside[1:-1] = classes == _TOKEN
    step = np.diff(inside)
    return np.flatnonzero(step == 1), np.flatnonzero(step == -1)


def _word_view(data: bytes) -> np.ndarray:
    """An unaligned uint64 view starting at every byte offset of ``data``.

    ``view[i]`` is bytes ``i .. i + 7`` read as little-endian, zero-padded past
    the end, so the keys of all tokens come from one gather.
    """
    padded = np.frombuffer(data + bytes(8), dtype=np.uint8)
    return np.ndarray(shape=(len(data) + 1,), dtype="<u8", buffer=padded, strides=(1,))


class _Tokens:
    """Tokens as byte ranges of one buffer.

    ``keys[k]`` is the first 8 bytes of token ``k`` as a little-endian uint64,
    zero-padded: for a token of at most 8 bytes (``short[k]``) it identifies
    the token exactly, as the text holds no NUL.
    """

    def __init__(
        self, data: bytes, starts: np.ndarray, ends: np.ndarray, words: np.ndarray | None = None
    ) -> None:
        if words is None:
            words = _word_view(data)
        self.data = data
        self.starts = starts
        self.lengths = ends - starts
        self.short = self.lengths <= 8
        self.keys = words[starts] & _LOW_BYTES[np.minimum(self.lengths, 8)]

    @classmethod
    def from_strings(cls, strings: list[str]) -> _Tokens:
        encoded = [s.encode("utf-8") for s in strings]
        lengths = np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded))
        starts = np.zeros(len(encoded), dtype=np.int64)
        np.cumsum(lengths[:-1] + 1, out=starts[1:])
        return cls(b"\0".join(encoded), starts, starts + lengths)

    def text(self, k: int) -> str:
        start = int(self.starts[k])
        return self.data[start : start + int(self.lengths[k])].decode("utf-8")

    def joined(self, index: np.ndarray) -> bytes:
        """The chosen tokens, each followed by a space, gathered by numpy."""
        lengths = self.lengths[index]
        slots = lengths + 1
        out_starts = np.cumsum(slots) - slots
        out = np.full(int(slots.sum()), ord(" "), dtype=np.uint8)
        is_token = np.ones(out.size, dtype=bool)
        is_token[out_starts + lengths] = False
        destination = np.flatnonzero(is_token)
        source = destination + np.repeat(self.starts[index] - out_starts, lengths)
        out[destination] = np.frombuffer(self.data, dtype=np.uint8)[source]
        return out.tobytes()

    def texts(self, index: np.ndarray) -> list[str]:
        data = self.data
        return [
            data[s : s + n].decode("utf-8")
            for s, n in zip(self.starts[index].tolist(), self.lengths[index].tolist(), strict=True)
        ]


# ---------------------------------------------------------------------------
# dense rows


def _parse_dense_numeric(
    text: str, first_line: int, numbers: list[np.ndarray | None]
) -> tuple[np.ndarray, np.ndarray] | None:
    """All-numeric dense rows through numpy's C parser; None when it cannot.

    A nominal attribute with numeric values is matched by number here; any
    surprise (a wrong field count, a value that is not a number or not
    declared) returns None, and the general path, which matches strings,
    reports it with its line.
    """
    if "?" in text:
        if re.search("nan", text, re.IGNORECASE):
            return None
        text = _MISSING_FIELD_RE.sub(r"\1nan", text)
    lines = text.split("\n")
    row_index = [i for i, line in enumerate(lines) if line.strip()]
    row_lines = first_line + np.asarray(row_index, dtype=np.int64)
    if not row_index:
        return np.empty((0, len(numbers)), dtype=np.float64), row_lines
    rows = [lines[i] for i in row_index]
    values = None
    if not any(c in text for c in ".eEnN"):
        try:
            values = np.loadtxt(rows, delimiter=",", comments=None, dtype=np.int64, ndmin=2)
            values = values.astype(np.float64)
        except (ValueError, OverflowError):
            values = None
    if values is None:
        try:
            values = np.loadtxt(rows, delimiter=",", comments=None, dtype=np.float64, ndmin=2)
        except ValueError:
            return None
    if values.shape[1] != len(numbers):
        return None
    groups: dict[bytes, list[int]] = {}
    for j, declared in enumerate(numbers):
        if declared is not None:
            groups.setdefault(declared.tobytes(), []).append(j)
    for columns in groups.values():
        declared = numbers[columns[0]]
        order = np.argsort(declared)  # type: ignore[arg-type]
        ordered = declared[order]  # type: ignore[index]
        block = values[:, columns]
        present = ~np.isnan(block)
        at = np.minimum(np.searchsorted(ordered, block), ordered.size - 1)
        if not (present <= (ordered[at] == block)).all():
            return None
        values[:, columns] = np.where(present, order[at], np.nan)
    return values, row_lines


def _classified_bytes(data: bytes) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The data section as bytes (uint8), each byte's class (``_BYTE_CLASS``) and the
    positions of the newlines: where both parsers start."""
    buf = np.frombuffer(data, dtype=np.uint8)
    classes = _BYTE_CLASS[buf]
    return buf, classes, np.flatnonzero(classes == _NEWLINE)


def _parse_dense(
    data: bytes, first_line: int, attributes: list[Attribute], origin: str
) -> tuple[np.ndarray, np.ndarray]:
    n_attributes = len(attributes)
    buf, classes, newlines = _classified_bytes(data)
    braces = np.flatnonzero(classes >= _OPEN)
    if braces.size:
        line = first_line + int(np.searchsorted(newlines, braces[0]))
        raise _error(origin, line, "expected a dense row; sparse {...} rows cannot be mixed in")
    starts, ends = _token_bounds(classes)
    commas = np.flatnonzero(buf == ord(","))
    line_starts = np.concatenate([[0], newlines + 1])
    per_line = np.diff(np.append(np.searchsorted(starts, line_starts), starts.size))
    commas_per_line = np.diff(np.append(np.searchsorted(commas, line_starts), commas.size))
    wrong = (per_line != n_attributes) | (commas_per_line != n_attributes - 1)
    bad = ((per_line > 0) & wrong) | ((per_line == 0) & (commas_per_line > 0))
    if bad.any():
        at = int(np.flatnonzero(bad)[0])
        found = int(commas_per_line[at]) + 1
        if found != n_attributes:
            message = f"expected {n_attributes} comma-separated values, found {found}"
        else:
            message = f"expected {n_attributes} values; found an empty value or one with spaces"
        raise _error(origin, first_line + at, message)
    row_lines = (first_line + np.flatnonzero(per_line)).astype(np.int64)
    n_rows = row_lines.size
    tokens = _Tokens(data, starts, ends)
    columns = np.tile(np.arange(n_attributes), n_rows)

    def line_of(k: int) -> int:
        return first_line + int(np.searchsorted(newlines, starts[k]))

    values = _encode(tokens, columns, attributes, line_of, origin)
    return values.reshape(n_rows, n_attributes), row_lines


# ---------------------------------------------------------------------------
# sparse rows


def _parse_sparse(
    data: bytes, first_line: int, attributes: list[Attribute], origin: str
) -> tuple[sp.csr_matrix, np.ndarray]:
    n_attributes = len(attributes)
    buf, classes, newlines = _classified_bytes(data)
    n_lines = newlines.size + 1
    opens = np.flatnonzero(classes == _OPEN)
    closes = np.flatnonzero(classes == _CLOSE)
    open_line = np.searchsorted(newlines, opens)
    close_line = np.searchsorted(newlines, closes)
    n_open = np.bincount(open_line, minlength=n_lines)
    n_close = np.bincount(close_line, minlength=n_lines)
    bad = (n_open != n_close) | (n_open > 1)
    if bad.any():
        line = first_line + int(np.flatnonzero(bad)[0])
        raise _error(origin, line, "expected one sparse row {index value, ...} on the line")
    reversed_braces = np.flatnonzero(opens > closes)
    if reversed_braces.size:
        line = first_line + int(open_line[reversed_braces[0]])
        raise _error(origin, line, "expected '{' before '}'")
    row_lines = (first_line + open_line).astype(np.int64)
    n_rows = opens.size

    starts, ends = _token_bounds(classes)
    commas = np.flatnonzero(buf == ord(","))
    # Tokens (and commas) of row r are those between its braces; none may be
    # outside every row.
    first_token, after_token = np.searchsorted(starts, opens), np.searchsorted(starts, closes)
    first_comma, after_comma = np.searchsorted(commas, opens), np.searchsorted(commas, closes)
    for positions, first_in, after_in in (
        (starts, first_token, after_token),
        (commas, first_comma, after_comma),
    ):
        stray = _outside_rows(positions.size, first_in, after_in)
        if stray is not None:
            line = first_line + int(np.searchsorted(newlines, positions[stray]))
            raise _error(
                origin, line, "expected a sparse row {index value, ...}; found text outside braces"
            )
    per_row = after_token - first_token
    commas_per_row = after_comma - first_comma
    good = (per_row == 2 * (commas_per_row + 1)) | ((per_row == 0) & (commas_per_row == 0))
    if not good.all():
        raise _error(
            origin,
            int(row_lines[np.flatnonzero(~good)[0]]),
            "expected 'index value' pairs separated by commas",
        )
    indptr = np.zeros(n_rows + 1, dtype=np.int64)
    np.cumsum(per_row // 2, out=indptr[1:])

    def line_of(k: int) -> int:
        return int(row_lines[np.searchsorted(indptr, k, side="right") - 1])

    words = _word_view(data)
    indices = _Tokens(data, starts[0::2], ends[0::2], words)
    columns = _sparse_indices(indices, n_attributes, line_of, origin)
    value_tokens = _Tokens(data, starts[1::2], ends[1::2], words)
    values = _encode(value_tokens, columns, attributes, line_of, origin)
    return _build_csr(values, columns, indptr, attributes, line_of, origin), row_lines


def _outside_rows(n_items: int, first_in: np.ndarray, after_in: np.ndarray) -> int | None:
    """The first item (token or comma) lying outside every row's braces, if any."""
    if first_in.size == 0:
        return 0 if n_items else None
    previous_end = np.concatenate([[0], after_in[:-1]])
    gaps = np.flatnonzero(first_in > previous_end)
    candidates = [int(previous_end[gaps[0]])] if gaps.size else []
    if after_in[-1] < n_items:
        candidates.append(int(after_in[-1]))
    return min(candidates) if candidates else None


def _digits(tokens: _Tokens) -> tuple[np.ndarray, np.ndarray]:
    """Tokens of 1 to 8 ASCII digits as integers, and which tokens were such.

    SWAR: right-align the digits in the packed uint64 with '0' padding, check
    that every byte is in '0'..'9' (high nibble 3, and adding 6 keeps it 3; no
    byte of valid UTF-8 is large enough to carry into its neighbour), then
    fold neighbouring digits, pairs and quadruples with three multiplications.
    """
    lengths = np.minimum(tokens.lengths, 8)
    shift = ((8 - lengths) * 8).astype(np.uint64)
    aligned = (tokens.keys << shift) | _ZERO_FILL[lengths]
    high = np.uint64(0xF0F0F0F0F0F0F0F0)
    plus_six = aligned + np.uint64(0x0606060606060606)
    nibbles = (aligned & high) | ((plus_six & high) >> np.uint64(4))
    ok = (nibbles == np.uint64(0x3333333333333333)) & tokens.short
    value = aligned - np.uint64(0x3030303030303030)
    value = ((value & np.uint64(0x0F0F0F0F0F0F0F0F)) * np.uint64(2561)) >> np.uint64(8)
    value = ((value & np.uint64(0x00FF00FF00FF00FF)) * np.uint64(6553601)) >> np.uint64(16)
    value = ((value & np.uint64(0x0000FFFF0000FFFF)) * np.uint64(42949672960001)) >> np.uint64(32)
    return value.astype(np.int64), ok


def _sparse_indices(
    tokens: _Tokens, n_attributes: int, line_of: Callable[[int], int], origin: str
) -> np.ndarray:
    columns, ok = _digits(tokens)
    bad = ~ok | (columns >= n_attributes)
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        token = tokens.text(k)
        if token.isascii() and token.isdigit():
            message = (
                f"sparse index {token} is out of range: the file declares {n_attributes} "
                f"attributes (indices 0 to {n_attributes - 1})"
            )
        else:
            message = f"expected a sparse index (a non-negative integer), found {token!r}"
        raise _error(origin, line_of(k), message)
    return columns


def _build_csr(
    values: np.ndarray,
    columns: np.ndarray,
    indptr: np.ndarray,
    attributes: list[Attribute],
    line_of: Callable[[int], int],
    origin: str,
) -> sp.csr_matrix:
    n_rows, n_attributes = indptr.size - 1, len(attributes)
    descending = np.flatnonzero(np.diff(columns) <= 0)
    if descending.size:
        row_start = np.zeros(columns.size + 1, dtype=bool)
        row_start[indptr[:-1]] = True
        descending = descending[~row_start[descending + 1]]
    if descending.size:
        # ARFF asks for increasing indices; accept any order, but no repeats.
        rows = np.repeat(np.arange(n_rows), np.diff(indptr))
        order = np.lexsort((columns, rows))
        repeated = np.flatnonzero(
            (np.diff(columns[order]) == 0) & (np.diff(rows[order]) == 0)
        )
        if repeated.size:
            k = int(order[repeated[0] + 1])
            j = int(columns[k])
            message = f"sparse index {j} (attribute {attributes[j].name!r}) appears twice in the row"
            raise _error(origin, line_of(k), message)
        values, columns = values[order], columns[order]
    matrix = sp.csr_matrix((values, columns, indptr), shape=(n_rows, n_attributes))
    matrix.has_sorted_indices = True
    matrix.eliminate_zeros()
    return matrix


# ---------------------------------------------------------------------------
# values


def _encode(
    tokens: _Tokens,
    columns: np.ndarray,
    attributes: list[Attribute],
    line_of: Callable[[int], int],
    origin: str,
) -> np.ndarray:
    """Value tokens to floats by their attribute (``columns``).

    Numeric: the number; nominal: the index of the value; string and date:
    NaN; ``?`` is NaN for every kind. Attributes that convert alike (all the
    numeric ones; each distinct tuple of nominal values) are converted
    together.
    """
    group_of: dict[object, int] = {}
    attribute_group = np.empty(len(attributes), dtype=np.intp)
    for j, attribute in enumerate(attributes):
        if attribute.kind == "nominal":
            key: object = attribute.values
        else:
            key = "numeric" if attribute.kind == "numeric" else "string"
        attribute_group[j] = group_of.setdefault(key, len(group_of))
    group_keys = list(group_of)
    token_group = attribute_group[columns]
    present = np.flatnonzero(np.bincount(token_group, minlength=len(group_keys)))

    out = np.empty(columns.size, dtype=np.float64)
    first_bad: list[int] = []
    if present.size == 1:
        selections: list[tuple[int, np.ndarray | None]] = [(int(present[0]), None)]
    elif present.size <= 8:
        selections = [(int(g), np.flatnonzero(token_group == g)) for g in present]
    else:
        order = np.argsort(token_group, kind="stable")
        bounds = np.searchsorted(token_group[order], present)
        pieces = np.split(order, bounds[1:])
        selections = [(int(g), piece) for g, piece in zip(present, pieces, strict=True)]
    for group, selected in selections:
        key = group_keys[group]
        if key == "string":
            out[slice(None) if selected is None else selected] = np.nan
            continue
        if key == "numeric":
            values, ok = _numbers(tokens, selected)
        else:
            values, ok = _value_indices(tokens, selected, key)  # type: ignore[arg-type]
        out[slice(None) if selected is None else selected] = values
        if not ok.all():
            k = int(np.flatnonzero(~ok)[0])
            first_bad.append(k if selected is None else int(selected[k]))
    if first_bad:
        k = min(first_bad)
        attribute = attributes[int(columns[k])]
        if attribute.kind == "numeric":
            expected = "a number or ?"
        else:
            values_ = attribute.values or ()
            shown = ", ".join(values_[:12]) + (", ..." if len(values_) > 12 else "")
            expected = f"one of {{{shown}}} or ?"
        raise _error(
            origin,
            line_of(k),
            f"value {tokens.text(k)!r} of attribute {attribute.name!r}: expected {expected}",
        )
    return out


def _pick(array: np.ndarray, selected: np.ndarray | None) -> np.ndarray:
    return array if selected is None else array[selected]


def _numbers(tokens: _Tokens, selected: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """Numeric tokens as floats (``?`` is NaN), parsed once per distinct string."""
    keys, short = _pick(tokens.keys, selected), _pick(tokens.short, selected)
    values = np.empty(keys.size, dtype=np.float64)
    ok = np.ones(keys.size, dtype=bool)
    if short.any():
        all_short = bool(short.all())
        short_keys = keys if all_short else keys[short]
        if short_keys.max() < 256:
            # one-byte tokens ("0", "1", ...): factorise by counting
            codes = short_keys.astype(np.intp)
            unique_keys = np.flatnonzero(np.bincount(codes, minlength=256)).astype(np.uint64)
            lookup = np.zeros(256, dtype=np.intp)
            lookup[unique_keys.astype(np.intp)] = np.arange(unique_keys.size)
            inverse = lookup[codes]
        else:
            unique_keys, inverse = np.unique(short_keys, return_inverse=True)
        table, valid = _to_floats(unique_keys.view("S8"))
        if all_short:
            values, ok = table[inverse], valid[inverse]
        else:
            values[short], ok[short] = table[inverse], valid[inverse]
    if not short.all():
        at = np.flatnonzero(~short)
        index = at if selected is None else selected[at]
        parts = tokens.joined(index).split()
        if len(parts) != at.size:  # a quoted value holding white space: not a number
            parts = [text.encode("utf-8") for text in tokens.texts(index)]
        values[at], ok[at] = _to_floats(np.array(parts))
    return values, ok


def _to_floats(strings: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Parse a bytes array of number strings; ``?`` is NaN. Values and validity."""
    try:
        return strings.astype(np.float64), np.ones(strings.size, dtype=bool)
    except ValueError:
        pass
    values = np.full(strings.size, np.nan)
    valid = np.ones(strings.size, dtype=bool)
    for i, s in enumerate(strings.tolist()):
        if s == b"?":
            continue
        try:
            values[i] = float(s)
        except ValueError:
            valid[i] = False
    return values, valid


def _value_indices(
    tokens: _Tokens, selected: np.ndarray | None, declared: tuple[str, ...]
) -> tuple[np.ndarray, np.ndarray]:
    """Nominal tokens as the index of their value (``?`` is NaN), and validity."""
    encoded = [value.encode("utf-8") for value in declared]
    if any(len(value) > 8 for value in encoded):
        index_of = {value: float(i) for i, value in enumerate(declared)}
        index_of[_MISSING] = np.nan
        everything = np.arange(tokens.keys.size) if selected is None else selected
        found = [index_of.get(s) for s in tokens.texts(everything)]
        ok = np.array([f is not None for f in found], dtype=bool)
        return np.array([np.nan if f is None else f for f in found]), ok
    keys, short = _pick(tokens.keys, selected), _pick(tokens.short, selected)
    missing = short & (keys == _KEY_MISSING)
    if not encoded:
        return np.full(keys.size, np.nan), missing
    value_keys = np.array([int.from_bytes(value, "little") for value in encoded], dtype=np.uint64)
    order = np.argsort(value_keys)
    sorted_keys = value_keys[order]
    at = np.minimum(np.searchsorted(sorted_keys, keys), sorted_keys.size - 1)
    hit = short & (sorted_keys[at] == keys) & ~missing
    values = order[at].astype(np.float64)
    values[~hit] = np.nan
    return values, hit | missing


# ---------------------------------------------------------------------------
# rows with quoted values: a regular expression per row


def _parse_quoted_rows(
    text: str, sparse: bool, first_line: int, attributes: list[Attribute], origin: str
) -> tuple[np.ndarray | sp.csr_matrix, np.ndarray]:
    n_attributes = len(attributes)
    values: list[str] = []
    index_tokens: list[str] = []
    token_lines: list[int] = []
    row_lines: list[int] = []
    pair_counts: list[int] = []
    for offset, raw_line in enumerate(text.split("\n")):
        line = raw_line.strip()
        if not line:
            continue
        lineno = first_line + offset
        if sparse:
            if line[0] != "{" or line[-1] != "}":
                raise _error(origin, lineno, "expected a sparse row {index value, ...}")
            inner = line[1:-1]
            pairs: list[tuple[str, str]] = []
            if inner.strip():
                inner += ","
                if _PAIRS_RE.fullmatch(inner) is None:
                    raise _error(origin, lineno, "expected 'index value' pairs separated by commas")
                pairs = _PAIR_RE.findall(inner)
            index_tokens.extend(index for index, _ in pairs)
            values.extend(_unquote(value) for _, value in pairs)
            token_lines.extend([lineno] * len(pairs))
            pair_counts.append(len(pairs))
        else:
            if line[0] == "{":
                raise _error(
                    origin, lineno, "expected a dense row; sparse {...} rows cannot be mixed in"
                )
            fields = line + ","
            if _FIELDS_RE.fullmatch(fields) is None:
                raise _error(origin, lineno, "malformed quoted value")
            row = _FIELD_RE.findall(fields)
            if len(row) != n_attributes:
                raise _error(
                    origin,
                    lineno,
                    f"expected {n_attributes} comma-separated values, found {len(row)}",
                )
            values.extend(map(_unquote, row))
            token_lines.extend([lineno] * n_attributes)
        row_lines.append(lineno)

    lines = np.asarray(token_lines, dtype=np.int64)
    rows_at = np.asarray(row_lines, dtype=np.int64)

    def line_of(k: int) -> int:
        return int(lines[k])

    tokens = _Tokens.from_strings(values)
    if not sparse:
        columns = np.tile(np.arange(n_attributes), rows_at.size)
        decoded = _encode(tokens, columns, attributes, line_of, origin)
        return decoded.reshape(rows_at.size, n_attributes), rows_at
    columns = _sparse_indices(_Tokens.from_strings(index_tokens), n_attributes, line_of, origin)
    decoded = _encode(tokens, columns, attributes, line_of, origin)
    indptr = np.zeros(rows_at.size + 1, dtype=np.int64)
    np.cumsum(pair_counts, out=indptr[1:])
    return _build_csr(decoded, columns, indptr, attributes, line_of, origin), rows_at
