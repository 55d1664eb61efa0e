"""One formula, two uses: numbers in Python, expression text for the live charts.

The core writes a formula once, as a plain function of its inputs (``min(peak,
bandwidth × intensity)``). Called with numbers it returns a number; called with
:class:`Expr` inputs (names of a chart's signals, ``Expr("own_x")``) it returns an
:class:`Expr` whose text is the same formula as a Vega expression, which a chart
evaluates as the reader moves a control. The browser then runs the core's formula,
not a second copy typed in JavaScript; the tests evaluate the text with Vega and
compare it with the numbers.

Only what the formulas need: ``+ - * /``, unary minus, :func:`minimum`,
:func:`maximum`, :func:`less`, :func:`greater` and :func:`where`. No I/O, no chart code.
"""

from __future__ import annotations

import json
import math
from typing import Any


class Expr:
    """The text of a Vega expression, built by Python arithmetic (``Expr("a") * 2`` is ``(a * 2)``)."""

    __slots__ = ("text",)

    def __init__(self, text: str):
        self.text = text

    def __repr__(self) -> str:
        return f"Expr({self.text!r})"

    def __str__(self) -> str:
        return self.text

    def _join(self, op: str, other: Any, *, reverse: bool = False) -> Expr:
        left, right = (text(other), self.text) if reverse else (self.text, text(other))
        return Expr(f"({left} {op} {right})")

    def __add__(self, other: Any) -> Expr:
        return self._join("+", other)

    def __radd__(self, other: Any) -> Expr:
        return self._join("+", other, reverse=True)

    def __sub__(self, other: Any) -> Expr:
        return self._join("-", other)

    def __rsub__(self, other: Any) -> Expr:
        return self._join("-", other, reverse=True)

    def __mul__(self, other: Any) -> Expr:
        return self._join("*", other)

    def __rmul__(self, other: Any) -> Expr:
        return self._join("*", other, reverse=True)

    def __truediv__(self, other: Any) -> Expr:
        return self._join("/", other)

    def __rtruediv__(self, other: Any) -> Expr:
        return self._join("/", other, reverse=True)

    def __neg__(self) -> Expr:
        return Expr(f"(-{self.text})")


def text(value: Any) -> str:
    """A value as expression text: an :class:`Expr`'s own text, a number written so it reads
    back exactly (``repr`` of a float), a string quoted, ``None`` as ``null``, a bool as such."""
    if isinstance(value, Expr):
        return value.text
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        if not math.isfinite(value):
            raise ValueError(f"expression constants must be finite: {value!r}")
        return repr(value) if isinstance(value, float) else str(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    raise TypeError(f"no expression text for {type(value).__name__}: {value!r}")


def _symbolic(*values: Any) -> bool:
    return any(isinstance(value, Expr) for value in values)


def minimum(a: Any, b: Any) -> Any:
    """min(a, b)."""
    return Expr(f"min({text(a)}, {text(b)})") if _symbolic(a, b) else min(a, b)


def maximum(a: Any, b: Any) -> Any:
    """max(a, b)."""
    return Expr(f"max({text(a)}, {text(b)})") if _symbolic(a, b) else max(a, b)


def ceiling(a: Any) -> Any:
    """⌈a⌉ (Vega's ``ceil``)."""
    return Expr(f"ceil({text(a)})") if _symbolic(a) else math.ceil(a)


def less(a: Any, b: Any) -> Any:
    """a < b."""
    return Expr(f"({text(a)} < {text(b)})") if _symbolic(a, b) else a < b


def greater(a: Any, b: Any) -> Any:
    """a > b."""
    return Expr(f"({text(a)} > {text(b)})") if _symbolic(a, b) else a > b


def where(condition: Any, then: Any, otherwise: Any) -> Any:
    """``then`` if ``condition`` else ``otherwise`` (the expression's ``c ? a : b``)."""
    if _symbolic(condition, then, otherwise):
        return Expr(f"({text(condition)} ? {text(then)} : {text(otherwise)})")
    return then if condition else otherwise
