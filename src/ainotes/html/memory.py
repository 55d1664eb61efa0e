"""The training-memory chart's in-page figure: its stills (desk and phone, light and dark), the live
chart's specs and the selects' grid, around :mod:`ainotes.charts.memory`'s specs."""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any

from ainotes import render
from ainotes.charts.memory import narrow_spec
from ainotes.html import embed


def figure_html(chart_id: str, light: dict[str, Any], dark: dict[str, Any], *, caption_html: str,
                downloads: Mapping[str, str], stylesheet: str, embed_urls: Mapping[str, str] | None = None,
                kind: str | None = None) -> str:
    """The in-page figure: ``vega-charts.js``'s markup (:func:`ainotes.html.embed.interactive_figure_html`)
    with a phone picture beside the desk one, and the selects in a grid (``assets/memory-chart.css``,
    linked from the figure at ``stylesheet``, a URL relative to the page)."""

    narrow_light, narrow_dark = render.svg(narrow_spec(light)), render.svg(narrow_spec(dark))
    light_still, width, height = embed.still_html(render.svg(light), "light", chart_id)
    dark_still, _, _ = embed.still_html(render.svg(dark), "dark", chart_id)
    narrow = "".join(embed.still_html(text, scheme, chart_id, narrow=True)[0]
                     for scheme, text in (("light", narrow_light), ("dark", narrow_dark)))
    narrow_width, narrow_height = render.svg_size(narrow_light)
    box_style = (f"--ainotes-aspect: {width:g} / {height:g}; "
                 f"--ainotes-aspect-narrow: {narrow_width:g} / {narrow_height:g}")
    specs = "".join(
        f'<template class="ainotes-chart__spec" data-scheme="{scheme}">'
        f"{render.vega_script_json(render.responsive(spec))}</template>"
        for scheme, spec in (("light", light), ("dark", dark))
    )
    cid = html.escape(chart_id)
    controls = '<div class="ainotes-chart__controls"></div>'
    return (
        f'<figure class="ainotes-chart ainotes-memory" id="{cid}">'
        f'<link rel="stylesheet" href="{html.escape(stylesheet)}">'
        f'<div class="ainotes-chart__box ainotes-chart__box--narrow" style="{box_style}">'
        f'{light_still}{dark_still}{narrow}<div class="ainotes-chart__view"></div></div>'
        f"{controls}{specs}<figcaption>{caption_html}</figcaption>"
        f"{embed.downloads_html(chart_id, downloads, title=embed.spec_title(light), embed_urls=embed_urls, kind=kind)}"
        "</figure>"
    )
