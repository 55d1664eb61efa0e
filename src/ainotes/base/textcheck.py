"""Checks shared by every place user text enters: which characters may pass, and how a
value reads inside a one-line error message."""

from __future__ import annotations

import re
import reprlib
from typing import Any

# Characters XML 1.0 cannot hold (C0 controls but tab, newline and carriage return; lone
# surrogates; U+FFFE, U+FFFF): SVG would not parse, and vl-convert aborts on them.
_NOT_IN_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")

_repr = reprlib.Repr()
_repr.maxstring = 80
_repr.maxother = 80
_repr.maxlist = _repr.maxtuple = _repr.maxdict = _repr.maxset = 4
_repr.maxlevel = 2
MAX_SHORT_CHARS = 120


def bad_character(text: str) -> str | None:
    """The first character of ``text`` that XML cannot hold, as ``U+0001``, or ``None``."""
    match = _NOT_IN_XML.search(text)
    return None if match is None else f"U+{ord(match.group()):04X}"


def short(value: Any) -> str:
    """``repr(value)`` cut to a readable length, however large or deeply nested the value
    (a YAML alias can make a short file stand for millions of items)."""
    text = _repr.repr(value)
    return text if len(text) <= MAX_SHORT_CHARS else text[: MAX_SHORT_CHARS - 1] + "…"
