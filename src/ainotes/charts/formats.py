"""How a chart writes its numbers: each format twice, as Python text and as a Vega expression.

The Python forms are :mod:`ainotes.base.units`'s (or built from them); each ``*_expr`` function
returns a Vega expression that writes the same text for the value its argument names, so
a live chart's labels and readouts read as the page's prose and tables do. The tests
evaluate every expression with Vega at sampled values and compare it with the Python text.

Rounding: d3-format's ``f`` type rounds as JavaScript's ``toFixed`` does, half-up on the
float's exact value, which is what :func:`ainotes.base.units.fixed` does.
"""

from __future__ import annotations

from ainotes.base import units

SI_PREFIXES = ("", "k", "M", "G", "T", "P", "E")
_PREFIXES_EXPR = "[" + ", ".join(f"'{p}'" for p in SI_PREFIXES) + "]"
# Added before floor(): log(1000) / log(10) is 2.9999999999999996 in floating point.
_LOG_EPSILON = "1e-9"
OP_WORDS = {"flop": "FLOP", "op": "OP"}  # INT8 rates count integer operations, not FLOPs


def significant_expr(value: str, digits: int = 4) -> str:
    """:func:`ainotes.base.units.significant` as a Vega expression: ``digits`` significant digits
    (never fewer than the units), trailing zeros dropped (d3's ``~f``)."""
    decimals = f"max(0, {digits - 1} - floor(log({value}) / log(10) + {_LOG_EPSILON}))"
    return f"format({value}, '.' + {decimals} + '~f')"


def si_text(value: float, unit: str, digits: int = 4) -> str:
    """``"989.4 TFLOP/s"`` (:func:`ainotes.base.units.si`)."""
    return units.si(value, unit, digits)


def si_expr(value: str, unit: str | None = None, digits: int = 4, *, unit_expr: str | None = None) -> str:
    """:func:`si_text` as a Vega expression; the unit is ``unit`` or the expression ``unit_expr``.

    The prefix is the power of 1000 at or below the value, floor(log10(v) / 3), clamped to the
    prefixes there are (none below 1, as :func:`ainotes.base.units.si` writes them)."""
    power = f"clamp(floor(log({value}) / log(1000) + {_LOG_EPSILON}), 0, 6)"
    unit_text = unit_expr if unit_expr is not None else repr(unit)
    return (f"({significant_expr(f'({value}) / pow(1000, {power})', digits)} + ' ' + "
            f"{_PREFIXES_EXPR}[{power}] + {unit_text})")


def rate_text(value_per_s: float, op: str = "flop") -> str:
    """A rate: ``"989.4 TFLOP/s"``, or ``"1.979 POP/s"`` for integer operations (``op="op"``)."""
    return units.si(value_per_s, f"{OP_WORDS[op]}/s")


def rate_expr(value: str, op_expr: str = "'FLOP'") -> str:
    """:func:`rate_text` as a Vega expression; ``op_expr`` is an expression for "FLOP" or "OP"."""
    return si_expr(value, unit_expr=f"{op_expr} + '/s'")


def intensity_text(value: float, op: str = "flop") -> str:
    """``"295 FLOP/byte"`` (:func:`ainotes.base.units.intensity`), ``"OP/byte"`` for integer operations."""
    return units.intensity(value).replace("FLOP/byte", f"{OP_WORDS[op]}/byte")


def _rounded_intensity_expr(value: str) -> str:
    return f"({value} >= 100 ? format({value}, ',.0f') : {significant_expr(value, 3)})"


def intensity_expr(value: str, op_expr: str = "'FLOP'") -> str:
    """:func:`intensity_text` as a Vega expression."""
    return f"({_rounded_intensity_expr(value)} + ' ' + {op_expr} + '/byte')"


def intensity_short_text(value: float) -> str:
    """``"295 FLOP/B"``: the chart's short form of :func:`intensity_text`."""
    return intensity_text(value).removesuffix(" FLOP/byte") + " FLOP/B"


def intensity_short_expr(value: str) -> str:
    """:func:`intensity_short_text` as a Vega expression."""
    return f"({_rounded_intensity_expr(value)} + ' FLOP/B')"


def time_us_text(seconds: float) -> str:
    """A kernel's time in microseconds: ``"3,524 µs"`` from 100 µs up (whole microseconds,
    grouped), ``"25.2 µs"`` and ``"0.0352 µs"`` below (three significant digits)."""
    micro = seconds * 1e6
    text = units.fixed(micro, grouping=True) if micro >= 100 else units.significant(micro, 3)
    return f"{text} µs"


def time_us_expr(seconds: str) -> str:
    """:func:`time_us_text` as a Vega expression."""
    micro = f"(({seconds}) * 1000000)"
    return f"(({micro} >= 100 ? format({micro}, ',.0f') : {significant_expr(micro, 3)}) + ' µs')"


def ratio_text(value: float) -> str:
    """``"46.1"``: a ratio to three significant digits (:func:`ainotes.base.units.significant`)."""
    return units.significant(value, 3)


def ratio_expr(value: str) -> str:
    """:func:`ratio_text` as a Vega expression."""
    return significant_expr(value, 3)
