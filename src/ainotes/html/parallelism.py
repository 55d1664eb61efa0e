"""The parallelism chart's in-page figure: stills (desk and phone, light and dark), the live chart's specs,
its three selects, and a caption that follows them (``vega-charts.js`` reads the state captions)."""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any

from ainotes import render
from ainotes.base import scripts
from ainotes.html import embed


def figure_html(chart_id: str, light: dict[str, Any], dark: dict[str, Any], narrow: tuple[dict, dict], *,
                caption_html: str, captions: Mapping[str, Any], downloads: Mapping[str, str], stylesheet: str,
                embed_urls: Mapping[str, str] | None = None, kind: str | None = None, title: str = "") -> str:
    """The figure (the markup of :func:`ainotes.html.memory.figure_html`, whose selects' stylesheet it
    shares) with ``captions`` (``{"signals": [...], "captions": {state key: text}}``) in a template, so
    that the caption follows the selects; every text is escaped or script-safe."""
    narrow_light, narrow_dark = (render.svg(spec) for spec in narrow)
    light_still, width, height = embed.still_html(render.svg(light), "light", chart_id)
    dark_still, _, _ = embed.still_html(render.svg(dark), "dark", chart_id)
    phone = "".join(embed.still_html(text, scheme, chart_id, narrow=True)[0]
                    for scheme, text in (("light", narrow_light), ("dark", narrow_dark)))
    narrow_width, narrow_height = render.svg_size(narrow_light)
    box_style = (f"--ainotes-aspect: {width:g} / {height:g}; "
                 f"--ainotes-aspect-narrow: {narrow_width:g} / {narrow_height:g}")
    specs = "".join(f'<template class="ainotes-chart__spec" data-scheme="{scheme}">'
                    f"{render.vega_script_json(render.responsive(spec))}</template>"
                    for scheme, spec in (("light", light), ("dark", dark)))
    states = f'<template class="ainotes-state-captions">{scripts.script_json(dict(captions))}</template>'
    cid = html.escape(chart_id)
    downloads_html = embed.downloads_html(chart_id, downloads, title=title or embed.spec_title(light),
                                          embed_urls=embed_urls, kind=kind)
    return (
        f'<figure class="ainotes-chart ainotes-memory ainotes-parallelism" id="{cid}">'
        f'<link rel="stylesheet" href="{html.escape(stylesheet)}">'
        f'<div class="ainotes-chart__box ainotes-chart__box--narrow" style="{box_style}">'
        f'{light_still}{dark_still}{phone}<div class="ainotes-chart__view"></div></div>'
        f'<div class="ainotes-chart__controls"></div>{specs}{states}'
        f"<figcaption data-state-caption>{caption_html}</figcaption>"
        f"{downloads_html}"
        "</figure>"
    )
