"""The roofline chart's theme, and its dark pictures made from the light ones (the two differ in
colours alone, so no second Vega run is needed)."""

from __future__ import annotations

import re
from typing import Any

from ainotes.charts.grammar import whole_numbers_as_ints
from ainotes.charts.theme import GPU_PALETTES, ChartTheme, Colours, Theme

# -- themes: Vega-Lite config only ---------------------------------------------------------------

def _paint(c: Colours) -> dict[str, Any]:
    return {
        "legend": {"symbolStrokeColor": c["text"]},
        "text": {"color": c["text"]},
        "style": {
            "kernel-label": {"color": c["text"]},
            "reader-label": {"color": c["text"]},
            "readout": {"color": c["muted"]},
            "subtitle": {"color": c["muted"]},
            "marker": {"stroke": c["marker_stroke"]},
        },
    }


#: The chart's look per scheme (:class:`ainotes.charts.theme.ChartTheme`): the GPUs in their site
#: colours (:data:`ainotes.charts.theme.GPU_PALETTES`, keyed by preset id), the named styles
#: ``kernel-label``, ``readout``, ``marker``, ``reader-label``, both legends under the plot.
THEME = ChartTheme(
    "roofline",
    layout={"axis": {"labelFontSize": 12, "titleFontSize": 13, "titleFontWeight": "normal"},
            "legend": {"labelFontSize": 12, "symbolStrokeWidth": 3, "offset": 22,
                       "layout": {"expr": "{bottom: {anchor: 'start', direction: 'vertical', margin: 6}}"}},
            "title": {"fontSize": 16, "fontWeight": 600, "anchor": "start", "offset": 8},
            "text": {"fontSize": 12}},
    palettes=GPU_PALETTES, paint=_paint,
)


def retheme(spec: dict[str, Any], theme: Theme) -> dict[str, Any]:
    """``spec`` (from :func:`roofline_spec`) in ``theme``: the same chart with the theme's config,
    as :func:`roofline_spec` with that theme builds it, without building it again. Shares
    everything but the config with ``spec``: neither may be changed in place."""
    return {**spec, "config": whole_numbers_as_ints(THEME.config(theme))}


def dark_vega(light_vega: dict[str, Any]) -> dict[str, Any]:
    """The compiled Vega of the dark spec from the light one's, without compiling it again.

    Compiled, the themes differ only where the config's colours land: the top-level
    ``background``, the ``config`` (axis, legend, style and palette colours) and the ``value``
    of a mark's ``fill`` or ``stroke``. Only strings in those places are swapped, never data,
    signals or text. The tests check it against the compiler's dark output."""
    swap = THEME.colour_swap()

    def recolour(value: Any, colour_place: bool) -> Any:
        if isinstance(value, dict):
            return {key: recolour(item, colour_place or key in ("fill", "stroke")) for key, item in value.items()}
        if isinstance(value, list):
            return [recolour(item, colour_place) for item in value]
        if colour_place and isinstance(value, str):
            return swap.get(value.lower(), value)
        return value

    out = dict(light_vega)
    for key in ("background", "config"):
        if key in out:
            out[key] = recolour(out[key], True)
    out["marks"] = [recolour(mark, False) for mark in light_vega.get("marks", [])]
    return out


_SVG_COLOUR = re.compile(r'\b(fill|stroke)="(#[0-9a-fA-F]{6})"')


def dark_svg(light_svg: str) -> str:
    """The dark static SVG from the light one, without a second Vega render.

    The two specs differ only in their config's colours (:data:`THEME`), so Vega lays
    both out alike and the dark picture is the light one with each theme colour swapped, in
    ``fill`` and ``stroke`` attributes only (never in text). The tests check it against a real render.
    """
    swap = THEME.colour_swap()

    def recolour(match: re.Match[str]) -> str:
        colour = swap.get(match.group(2).lower(), match.group(2))
        return f'{match.group(1)}="{colour}"'

    return _SVG_COLOUR.sub(recolour, light_svg)



