"""Scalar checks shared by every place a value enters: fence bodies, inline forms, flags.

Each check takes the raw value (a YAML scalar, or the text of an inline option or a
flag) and the name to show, already in the caller's style (``'params'`` in a fence,
``params=`` inline, ``--params`` on the command line), and returns the typed value or
raises :class:`FieldError`: one line that states the rule and the value, e.g.
``--gpus must be a whole number >= 1: '2.5'``. ``field`` tells a caller which key
failed, so a fence can point at its line.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from ainotes.base.errors import InputError
from ainotes.base.textcheck import bad_character, closest, short


class FieldError(InputError):
    """A value that breaks its rule; ``field`` is the key it came from (``""`` if none)."""

    def __init__(self, message: str, field: str = "") -> None:
        super().__init__(message)
        self.field = field


# First match wins: bool before int, since YAML `true` is an int subclass in Python.
_KINDS: tuple[tuple[type | tuple[type, ...], str], ...] = (
    (type(None), "empty"), (bool, "a boolean"), ((int, float), "a number"), (str, "a string"),
    (list, "a list"), (Mapping, "a mapping"),
)


def kind(value: Any) -> str:
    """How a message names a value's type: ``a string``, ``a boolean``, ``a mapping``, ``empty``."""
    return next((name for types, name in _KINDS if isinstance(value, types)), type(value).__name__)


def _as_float(value: Any) -> float | None:
    """``value`` as a float if it is a number (not a bool) or the text of one, else ``None``."""
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        return float(value)
    except OverflowError:  # an int beyond any float
        return math.inf


def number(value: Any, name: str, field: str = "") -> float:
    """A finite number: an int or float (not a bool), or text such as ``"540e9"``."""
    result = _as_float(value)
    if result is None or not math.isfinite(result):
        raise FieldError(f"{name} must be a finite number: {short(value)}", field)
    return result


def positive_number(value: Any, name: str, field: str = "", *, text: bool = True,
                    low: float | None = None, high: float | None = None) -> float:
    """A finite number > 0: the one positive-number rule of every constructor, loader, fence, form and flag.

    ``text=False`` takes a number only, not its text (a YAML file's figure, a Python argument): a
    string or a bool is refused by its kind (``must be a number, not a string``), so an author who
    quoted a figure learns why. ``low`` and ``high`` bound it (inclusive), for figures whose products
    must stay finite.
    """
    if not text and (isinstance(value, bool) or not isinstance(value, (int, float))):
        raise FieldError(f"{name} must be a number, not {kind(value)}: {short(value)}", field)
    result = _as_float(value)
    if result is None or not math.isfinite(result) or result <= 0:
        raise FieldError(f"{name} must be a finite number > 0: {short(value)}", field)
    if (low is not None and result < low) or (high is not None and result > high):
        raise FieldError(f"{name} must be between {low if low is not None else 0:g} and "
                         f"{high if high is not None else math.inf:g}: {short(value)}", field)
    return result


def fraction(value: Any, name: str, field: str = "", *, text: bool = True) -> float:
    """A fraction in (0, 1], such as a utilization: :func:`positive_number`, at most 1."""
    result = positive_number(value, name, field, text=text)
    if result > 1:
        raise FieldError(f"{name} must be a fraction from 0 to 1 (40 % is 0.4): {short(value)}", field)
    return result


class QuotedText(str):
    """Text a YAML file wrote in quotes that reads as a number (``context: "8192"``): a fence body's loader
    marks it, so that a whole-number key can say the quotes are the mistake rather than take it."""

    __slots__ = ()


_DIGITS = re.compile(r"[+-]?[0-9]+")


def _whole_hint(value: Any) -> str:
    """``" (write 8)"`` for a whole value written as a fraction or with an exponent (``8.0``, ``"1e3"``)."""
    as_float = _as_float(value)
    if as_float is None or not math.isfinite(as_float) or not as_float.is_integer() or abs(as_float) > 1e18:
        return ""
    return f" (write {int(as_float)})"


def whole_number(value: Any, name: str, field: str = "", *, low: int = 1, high: int | None = None) -> int:
    """A whole number from ``low`` to ``high`` (``high=None``: no upper bound): the one whole-number rule
    of every flag, fence, inline form and file.

    An int passes, and so does the text of one written with digits only (a flag, an inline option:
    ``"8"``). A fraction does not, even a whole one (``8.0``, ``"8.0"``, ``"1e3"``: the message says
    ``write 8``), since ``7.9999999999999999`` reads as 8.0 and ``1e-400`` as 0.0; nor do a bool, quoted
    YAML (:class:`QuotedText`), or a value out of range.
    """
    rule = f">= {low}" if high is None else f"from {low} to {high}"
    if isinstance(value, int) and not isinstance(value, bool):
        result = value
    elif isinstance(value, QuotedText):
        raise FieldError(f"{name} must be a whole number, not quoted text (write {value.strip()} without the "
                         f"quotes): {short(str(value))}", field)
    elif isinstance(value, str) and _DIGITS.fullmatch(value.strip()) and len(value.strip()) <= 40:
        result = int(value.strip())
    else:
        raise FieldError(f"{name} must be a whole number {rule}{_whole_hint(value)}: {short(value)}", field)
    if result < low or (high is not None and result > high):
        raise FieldError(f"{name} must be a whole number {rule}: {short(value)}", field)
    return result


def power_of_two(value: int, name: str, field: str = "") -> int:
    """``value`` if it is a power of two (1, 2, 4, 8, ...): the rank counts of the collectives' algorithms
    (recursive halving and doubling) and of the chart's rings; else one line naming the nearest ones."""
    if value < 1 or value & (value - 1):
        below = 1 << (value.bit_length() - 1) if value > 0 else 1
        raise FieldError(f"{name} must be a power of two (1, 2, 4, 8, ...): {value} (did you mean {below} or "
                         f"{below * 2}?)", field)
    return value


def one_of(value: Any, name: str, field: str = "", *, choices: Sequence[str]) -> str:
    """One of ``choices``, spelt exactly; else one line ending with the nearest choice where one is near
    (``allreduce``: did you mean 'all-reduce'?)."""
    if not isinstance(value, str) or value not in choices:
        near = closest(value, choices)
        hint = f": did you mean {near!r}?" if near is not None else ""
        raise FieldError(f"{name} must be one of {', '.join(choices)}: {short(value)}{hint}", field)
    return value


def one_line_text(value: Any, name: str, field: str = "", *, max_chars: int) -> str:
    """Text on one line, at most ``max_chars`` long, with no character XML cannot hold; stripped."""
    if not isinstance(value, str):
        raise FieldError(f"{name} must be text: {short(value)}", field)
    if len(value) > max_chars:
        raise FieldError(f"{name} must be at most {max_chars} characters: {len(value)}", field)
    if "\n" in value.strip() or "\r" in value.strip():
        raise FieldError(f"{name} must be one line", field)
    bad = bad_character(value)
    if bad is not None:
        raise FieldError(f"{name} holds a control character ({bad}), which no page or SVG can show", field)
    return value.strip()
