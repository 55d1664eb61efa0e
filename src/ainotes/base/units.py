"""Readable numbers with units, for prose, tables and captions.

One place decides how a figure reads, so a ridge point says the same thing in a
sentence, a table and a chart caption.

Rounding is half-up on the float's exact value (:func:`fixed`), as JavaScript's
``toFixed`` and ``toPrecision`` (and so d3-format in the live charts) round: the B200's
sparse ridge, 562.5 FLOP/byte exactly, reads "563" on a page and in a chart alike.
Python's own formatting rounds exact ties to even ("562"), which is why it is not used.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from decimal import ROUND_HALF_UP, Decimal

_SI_PREFIXES = ((1e18, "E"), (1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"), (1.0, ""))


def fixed(value: float, decimals: int = 0, *, grouping: bool = False) -> str:
    """``value`` with exactly ``decimals`` decimals, ties rounded away from zero.

    >>> fixed(562.5), fixed(281.25, 1), fixed(0.125, 2), fixed(1125.0, grouping=True)
    ('563', '281.3', '0.13', '1,125')
    """
    if not math.isfinite(value):
        return str(value)
    # Decimal(value) is the float's exact binary value, so only true ties round up.
    rounded = Decimal(value).quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP)
    text = f"{rounded:,f}" if grouping else f"{rounded:f}"
    return "0" + text[2:] if text.startswith("-0") and rounded == 0 else text


def significant(value: float, digits: int = 4) -> str:
    """``value`` with at most ``digits`` significant digits, trailing zeros dropped.

    >>> significant(989.4), significant(2.25), significant(295.343), significant(1500.0)
    ('989.4', '2.25', '295.3', '1500')
    """
    if value == 0 or not math.isfinite(value):
        return str(value)
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(value))))
    text = fixed(value, decimals)
    return text.rstrip("0").rstrip(".") if "." in text else text


def si(value: float, unit: str, digits: int = 4) -> str:
    """``value`` in ``unit`` with an SI prefix: ``si(2.25e15, "FLOP/s") == "2.25 PFLOP/s"``."""
    for scale, prefix in _SI_PREFIXES:
        if abs(value) >= scale:
            return f"{significant(value / scale, digits)} {prefix}{unit}"
    return f"{significant(value, digits)} {unit}"


def flops_per_s(value_flops_per_s: float) -> str:
    """FLOP/s with a prefix: ``"989.4 TFLOP/s"``."""
    return si(value_flops_per_s, "FLOP/s")


def bytes_per_s(value_bytes_per_s: float) -> str:
    """Bytes per second with a prefix: ``"3.35 TB/s"``."""
    return si(value_bytes_per_s, "B/s")


def intensity(value_flop_per_byte: float) -> str:
    """Arithmetic intensity rounded for reading: ``"295 FLOP/byte"`` (three figures, at least units;
    ties half-up, so 562.5 reads ``"563 FLOP/byte"``)."""
    if value_flop_per_byte >= 100:
        text = fixed(value_flop_per_byte, grouping=True)
    else:
        text = significant(value_flop_per_byte, 3)
    return f"{text} FLOP/byte"


def percent(fraction: float, decimals: int = 1) -> str:
    """A fraction as a percentage: ``percent(0.4620) == "46.2 %"``."""
    return f"{fixed(fraction * 100, decimals)} %"


def count(value: float) -> str:
    """A large count in words a reader scans: ``count(540e9) == "540 billion"``."""
    for scale, word in ((1e12, "trillion"), (1e9, "billion"), (1e6, "million"), (1e3, "thousand")):
        if abs(value) >= scale:
            return f"{significant(value / scale, 4)} {word}"
    return significant(value, 4)


BYTE_UNITS: Mapping[str, float] = {"B": 1.0, "kB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12, "PB": 1e15,
                                   "KiB": 2.0**10, "MiB": 2.0**20, "GiB": 2.0**30, "TiB": 2.0**40}


def amount_text(value: float, decimals: int | None = None) -> str:
    """``31.4``, ``1,120``, ``1.88``: three significant figures below 100, whole numbers from 100 on,
    grouped; with ``decimals``, that many decimals with trailing zeros dropped. Ties round half-up
    (:func:`ainotes.base.fixed`), as the chart's d3-format does."""
    if decimals is not None:
        text = fixed(value, decimals, grouping=True)
        return text.rstrip("0").rstrip(".") if "." in text else text
    if abs(value) >= 100:
        return fixed(value, 0, grouping=True)
    return significant(value, 3)


def bytes_text(value_bytes: float, unit: str | None = None, decimals: int | None = None) -> str:
    """``31.4 GB``: bytes in ``unit`` (default: the decimal prefix that suits the value)."""
    if unit is None:
        unit = "B"
        for name in ("PB", "TB", "GB", "MB", "kB"):
            if abs(value_bytes) >= BYTE_UNITS[name]:
                unit = name
                break
    return f"{amount_text(value_bytes / BYTE_UNITS[unit], decimals)} {unit}"
