"""The estimators' parameter checks: a few constraint objects and :func:`validate_params`.

Every estimator class lists, in its ``_constraints`` class attribute, the values each of its
``__init__`` parameters may take: a list of alternatives, any one of which admits the value
(``None`` in the list admits None).  ``fit`` calls :func:`validate_params` first; a value no
alternative admits raises :class:`~mlneighbors.exceptions.InvalidParameterError` (a
``ValueError`` and a ``TypeError``) naming the parameter, the estimator, what it must be and what
it got.  Checks that need the data (``n_neighbors`` against the training rows) come later, in
``fit`` itself.

>>> from mlneighbors import MLkNN
>>> from mlneighbors.exceptions import InvalidParameterError
>>> try:
...     MLkNN(n_neighbors=0).fit([[0.0], [1.0]], [[1, 0], [0, 1]])
... except InvalidParameterError as exc:
...     print(exc)
The 'n_neighbors' parameter of MLkNN must be an int in the range [1, inf); got 0.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from numbers import Integral
from numbers import Real as _RealNumber
from typing import Any

import numpy as np

from .exceptions import InvalidParameterError

__all__ = ["HasMethods", "Instance", "Integer", "Options", "RandomState", "Real", "validate_params"]


def _is_number(value: Any, kind: type) -> bool:
    # a bool is an Integral to Python, never a count or a size to an estimator
    return isinstance(value, kind) and not isinstance(value, (bool, np.bool_))


def _bound(value: float | None, infinite: str) -> str:
    return infinite if value is None else f"{value:g}" if isinstance(value, float) else str(value)


class _Range:
    """A number between ``low`` and ``high`` (None: unbounded on that side)."""

    kind: type = _RealNumber
    noun: str = "a number"

    def __init__(self, low: float | None = None, high: float | None = None, *, closed: str = "both") -> None:
        if closed not in ("both", "left", "right", "neither"):
            raise ValueError(f"closed must be 'both', 'left', 'right' or 'neither', got {closed!r}")
        self.low, self.high, self.closed = low, high, closed

    def _in_range(self, value: Any) -> bool:
        low_ok = self.low is None or (value >= self.low if self.closed in ("both", "left") else value > self.low)
        high_ok = self.high is None or (value <= self.high if self.closed in ("both", "right") else value < self.high)
        return bool(low_ok and high_ok)

    def admits(self, value: Any) -> bool:
        return _is_number(value, self.kind) and self._in_range(value)

    def describe(self) -> str:
        if self.low is None and self.high is None:
            return self.noun
        left = "[" if self.closed in ("both", "left") and self.low is not None else "("
        right = "]" if self.closed in ("both", "right") and self.high is not None else ")"
        return f"{self.noun} in the range {left}{_bound(self.low, '-inf')}, {_bound(self.high, 'inf')}{right}"


class Integer(_Range):
    """An integer (not a bool) between ``low`` and ``high``, both included unless ``closed`` says not.

    >>> Integer(1).admits(3), Integer(1).admits(0), Integer(1).admits(2.0), Integer(1).describe()
    (True, False, False, 'an int in the range [1, inf)')
    """

    kind = Integral
    noun = "an int"


class Real(_Range):
    """A real number (an int included unless ``integers=False``; not a bool) in a range.

    >>> Real(0, 1, closed="neither").describe(), Real(0, 1, integers=False).admits(1)
    ('a float in the range (0, 1)', False)
    """

    noun = "a float"

    def __init__(self, low: float | None = None, high: float | None = None, *, closed: str = "both",
                 integers: bool = True) -> None:
        super().__init__(low, high, closed=closed)
        self.integers = integers
        if not integers:
            self.noun = "a float (not an int)"

    def admits(self, value: Any) -> bool:
        if not self.integers and _is_number(value, Integral):
            return False
        return super().admits(value)


class Options:
    """One of the given values (strings, compared with ``==``).

    >>> Options("a", "b").admits("a"), Options("a", "b").describe()
    (True, "one of 'a', 'b'")
    """

    def __init__(self, *values: str) -> None:
        self.values = values

    def admits(self, value: Any) -> bool:
        return isinstance(value, str) and value in self.values

    def describe(self) -> str:
        return "one of " + ", ".join(repr(v) for v in self.values)


class Instance:
    """An instance of ``cls`` (``dict``, ``str``...).

    >>> Instance(dict).admits({}), Instance(dict).describe()
    (True, 'a dict')
    """

    def __init__(self, cls: type) -> None:
        self.cls = cls

    def admits(self, value: Any) -> bool:
        return isinstance(value, self.cls)

    def describe(self) -> str:
        name = self.cls.__name__
        return f"{'an' if name[0] in 'aeiou' else 'a'} {name}"


class HasMethods:
    """Any object with these methods (an index object: ``build`` and ``query``).

    >>> HasMethods("fit", "predict").describe()
    'an object with methods fit and predict'
    """

    def __init__(self, *names: str) -> None:
        self.names = names

    def admits(self, value: Any) -> bool:
        return all(callable(getattr(value, name, None)) for name in self.names)

    def describe(self) -> str:
        return f"an object with method{'s' if len(self.names) > 1 else ''} {' and '.join(self.names)}"


class RandomState:
    """What ``sklearn.utils.check_random_state`` accepts: an int or a ``numpy.random.RandomState``
    (None is admitted by a ``None`` alternative).

    >>> RandomState().admits(0), RandomState().admits("0")
    (True, False)
    """

    def admits(self, value: Any) -> bool:
        return _is_number(value, Integral) or isinstance(value, np.random.RandomState)

    def describe(self) -> str:
        return "an int or a numpy.random.RandomState"


def _got(value: Any) -> str:
    text = repr(value)
    if len(text) > 80:
        text = text[:77] + "..."
    if isinstance(value, (bool, np.bool_, int, float, str)) or value is None:
        return text
    return f"{text} (a {type(value).__name__})"


def describe(alternatives: Sequence[Any]) -> str:
    """``alternatives`` in words: ``"an int in the range [1, inf) or None"``.

    >>> describe([Integer(1), None])
    'an int in the range [1, inf) or None'
    """
    words = [("None" if alt is None else alt.describe()) for alt in alternatives]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]


def check_param(owner: str, name: str, value: Any, alternatives: Sequence[Any]) -> None:
    """Raise :class:`~mlneighbors.exceptions.InvalidParameterError` unless one of
    ``alternatives`` admits ``value``.

    >>> try:
    ...     check_param("MLkNN", "smoothing", -1.0, [Real(0)])
    ... except InvalidParameterError as exc:
    ...     print(exc)
    The 'smoothing' parameter of MLkNN must be a float in the range [0, inf); got -1.0.
    """
    for alt in alternatives:
        if (value is None) if alt is None else alt.admits(value):
            return
    raise InvalidParameterError(
        f"The {name!r} parameter of {owner} must be {describe(alternatives)}; got {_got(value)}.")


def validate_params(estimator: Any) -> None:
    """Check every parameter of ``estimator`` against its class's ``_constraints``.

    Parameters
    ----------
    estimator : estimator of this package
        Its class maps each ``__init__`` parameter to a list of alternatives
        (:class:`Integer`, :class:`Real`, :class:`Options`, :class:`Instance`,
        :class:`HasMethods`, :class:`RandomState`, ``None``).

    Raises
    ------
    ~mlneighbors.exceptions.InvalidParameterError
        The first parameter that no alternative admits; the message names it, the
        estimator, what it must be and what it got.
    """
    constraints: Mapping[str, Sequence[Any]] = type(estimator)._constraints
    owner = type(estimator).__name__
    for name in param_names(type(estimator)):  # get_params(deep=False), without its signature inspection
        if name in constraints:
            check_param(owner, name, getattr(estimator, name), constraints[name])


@functools.cache
def param_names(cls: type) -> tuple[str, ...]:
    """The ``__init__`` parameters of a scikit-learn style class, sorted as ``get_params``
    lists them; read once per class (``get_params`` inspects the signature on every call)."""
    return tuple(cls._get_param_names())
