"""Text that goes inside an inline ``<script>`` or ``<template>``: JSON and JavaScript that no
``</script>`` or ``<!--`` in them can end or bend."""

from __future__ import annotations

import json
import re
from typing import Any


def script_json(value: Any) -> str:
    """JSON safe inside ``<script>``: ``<``, ``>`` and ``&`` become ``\\u003c`` ``\\u003e`` ``\\u0026``
    (so no ``</script>`` or ``<!--`` can end or bend the element), as do U+2028/U+2029."""
    return script_safe(json.dumps(value, separators=(",", ":"), ensure_ascii=False, sort_keys=True))


def script_safe(text: str) -> str:
    for char, escape in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"),
                         ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(char, escape)
    return text


def inline_script(code: str) -> str:
    """JavaScript for an inline ``<script>``; a literal ``</script`` would end the element early."""
    return re.sub(r"</(script)", r"<\\/\1", code, flags=re.IGNORECASE)
