"""Evaluate Vega expressions with Vega itself (vl-convert's engine, no browser): the tests'
way to hold a chart's expression text against the core's Python numbers."""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping, Sequence
from html import unescape
from typing import Any

_TEXT = re.compile(r"<text[^>]*>(.*?)</text>", re.S)


def evaluate(expressions: Sequence[str], signals: Mapping[str, Any] | None = None,
             rows: Sequence[Mapping[str, Any]] = ({},),
             updates: Sequence[tuple[str, str]] = ()) -> list[list[str]]:
    """For each row (``datum``), each expression's value as text (``'' + value``), evaluated by
    Vega with ``signals`` (name → value) defined and then ``updates`` (name, expression: signals
    computed in that order, as a chart's derived params are). Returns rows × expressions."""
    import vl_convert as vlc

    marker = "\u241e"  # between values: no expression writes it
    joined = f" + '{marker}' + ".join(f"('' + ({e}))" for e in expressions)
    spec = {
        "$schema": "https://vega.github.io/schema/vega/v5.json",
        "width": 10, "height": 10,
        "signals": [*({"name": name, "value": value} for name, value in (signals or {}).items()),
                    *({"name": name, "update": expr} for name, expr in updates)],
        "data": [{"name": "rows", "values": [{"i": i, **row} for i, row in enumerate(rows)]}],
        "marks": [{"type": "text", "from": {"data": "rows"},
                   "encode": {"update": {"text": {"signal": f"datum.i + '{marker}' + {joined}"},
                                         "x": {"value": 0}, "y": {"value": 0}}}}],
    }
    svg = vlc.vega_to_svg(json.loads(json.dumps(spec)))
    found = {}
    for text in _TEXT.findall(svg):
        parts = unescape(text).split(marker)
        found[int(parts[0])] = parts[1:]
    return [found[i] for i in range(len(rows))]


@functools.cache
def _vega_lite_validator() -> Any:
    import altair as alt
    import jsonschema

    schema = alt.load_schema()  # the Vega-Lite schema altair ships: the version vl-convert compiles
    return jsonschema.validators.validator_for(schema)(schema)


def vega_lite_errors(spec: Mapping[str, Any]) -> list[str]:
    """Every way ``spec`` breaks the Vega-Lite schema, as messages; ``[]`` when it is valid.

    The same check as altair's ``from_dict(spec, validate=True)``, with one validator compiled per
    process instead of an object tree built for each spec."""
    return [error.message for error in _vega_lite_validator().iter_errors(spec)]
