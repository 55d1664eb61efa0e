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
from collections.abc import Mapping, Sequence
from typing import Any

from ainotes.base.errors import InputError
from ainotes.base.textcheck import bad_character, short


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


def whole_number(value: Any, name: str, field: str = "", *, low: int = 1, high: int | None = None) -> int:
    """A whole number from ``low`` to ``high`` (``high=None``: no upper bound). ``8``, ``8.0``
    and ``"8"`` pass; ``2.5``, ``"two"`` and ``True`` do not."""
    rule = f">= {low}" if high is None else f"from {low} to {high}"
    if isinstance(value, int) and not isinstance(value, bool):
        result = value
    else:
        as_float = _as_float(value)
        if as_float is None or not math.isfinite(as_float) or as_float != int(as_float):
            raise FieldError(f"{name} must be a whole number {rule}: {short(value)}", field)
        result = int(as_float)
    if result < low or (high is not None and result > high):
        raise FieldError(f"{name} must be a whole number {rule}: {short(value)}", field)
    return result


def one_of(value: Any, name: str, field: str = "", *, choices: Sequence[str]) -> str:
    """One of ``choices``, spelt exactly."""
    if not isinstance(value, str) or value not in choices:
        raise FieldError(f"{name} must be one of {', '.join(choices)}: {short(value)}", field)
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
