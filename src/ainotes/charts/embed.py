"""Charts in a page: static SVGs at first paint, the interactive Vega view on top once it renders.

:func:`interactive_figure_html` writes the fragment that ``assets/vega-charts.js``
enhances:

* both static SVGs inline, the light one shown under Material's default scheme
  and the dark one under slate (CSS in ``assets/charts.css`` keyed on
  ``[data-md-color-scheme="slate"]``), so the chart is there with no script;
* a box whose size comes from CSS alone (``aspect-ratio`` of the static SVG,
  taller on narrow screens), holding the static SVG and, later, the live view
  sized to fill it (``width``/``height`` ``"container"``,
  :func:`ainotes.render.responsive`), so nothing moves when one replaces the other;
* the two compiled Vega specs, each in a ``<template class="ainotes-chart__spec">``;
* the caption, a row of download links and a copy-paste embed snippet.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping
from typing import Any

from ainotes import render
from ainotes.charts import explorer, roofline

DOWNLOAD_LABELS = {
    "svg": "SVG",
    "svg-dark": "SVG (dark)",
    "png": "PNG",
    "json": "JSON",
    "html": "HTML page",
}
_ID_ATTRIBUTE = re.compile(r'\bid="([^"]+)"')


def _namespace_ids(svg_text: str, prefix: str) -> str:
    """Prefix every ``id`` (and the ``url(#…)`` / ``href="#…"`` pointing at it) so that several
    inline SVGs in one page cannot take each other's clip paths or gradients."""
    ids = set(_ID_ATTRIBUTE.findall(svg_text))
    if not ids:
        return svg_text

    def rename(match: re.Match[str]) -> str:
        name = match.group(2)
        return f"{match.group(1)}{prefix}-{name}{match.group(3)}" if name in ids else match.group(0)

    text = re.sub(r'(\bid=")([^"]+)(")', rename, svg_text)
    text = re.sub(r"(url\(#)([^)]+)(\))", rename, text)
    return re.sub(r'(href="#)([^"]+)(")', rename, text)


def _still(svg_text: str, scheme: str, chart_id: str, *, narrow: bool = False) -> tuple[str, float, float]:
    text = render.static_svg_for_page(svg_text)
    width, height = render.svg_size(text)
    size = " ainotes-chart__still--narrow" if narrow else ""
    text = _namespace_ids(text, f"{chart_id}-{scheme}{'-narrow' if narrow else ''}")
    return f'<div class="ainotes-chart__still ainotes-chart__still--{scheme}{size}">{text}</div>', width, height


def _spec_title(spec: Mapping[str, Any]) -> str:
    title = spec.get("title")
    if isinstance(title, Mapping):
        title = title.get("text")
    if isinstance(title, list):
        title = " ".join(str(part) for part in title)
    return str(title) if title else "Chart"


def downloads_html(chart_id: str, downloads: Mapping[str, str], *, title: str | None = None) -> str:
    """A row of download links (kind → URL relative to the page) and a ``<details>`` with an
    embed snippet (``<img>`` of the SVG, ``<iframe>`` of the standalone page). Everything escaped.

    The snippet's URLs start out relative to this page; ``vega-charts.js`` rewrites them to
    absolute addresses when it runs, which is what another site needs.
    """
    links = []
    for kind, url in downloads.items():
        label = DOWNLOAD_LABELS.get(kind, kind.upper())
        links.append(f'<a href="{html.escape(url)}" download>{html.escape(label)}</a>')
    parts = [f'<div class="ainotes-downloads" data-chart="{html.escape(chart_id)}">']
    if links:
        parts.append('<span class="ainotes-downloads__label">Download:</span> ' + " · ".join(links))
    snippet_lines = []
    alt_text = title or chart_id
    if "svg" in downloads:
        snippet_lines.append(f'<img src="{html.escape(downloads["svg"])}" alt="{html.escape(alt_text)}">')
    if "html" in downloads:
        snippet_lines.append(
            f'<iframe src="{html.escape(downloads["html"])}" title="{html.escape(alt_text)}" '
            'width="760" height="720" style="border:0;max-width:100%"></iframe>'
        )
    if snippet_lines:
        snippet = "\n".join(snippet_lines)
        urls = " ".join(html.escape(downloads[k]) for k in ("svg", "html") if k in downloads)
        parts.append(
            '<details class="ainotes-embed"><summary>Embed this chart</summary>'
            f'<pre><code class="ainotes-embed__snippet" data-urls="{urls}">{html.escape(snippet)}</code></pre>'
            "</details>"
        )
    parts.append("</div>")
    return "".join(parts)


def interactive_figure_html(
    chart_id: str,
    spec_light: dict[str, Any],
    spec_dark: dict[str, Any],
    *,
    caption_html: str,
    downloads: Mapping[str, str],
    svg_dark: str | None = None,
    vega_dark: dict[str, Any] | None = None,
    narrow_svgs: tuple[str, str] | None = None,
) -> str:
    """The in-page figure for one chart (see the module docstring).

    ``caption_html`` is trusted HTML (the chart modules escape what they put in it);
    ``downloads`` maps a kind (``svg``, ``png``, ``json``, ``html``, ...) to a URL
    relative to the page. ``svg_dark`` and ``vega_dark`` are the dark static SVG and the dark
    live view's compiled Vega when the caller has them already (made from ``spec_dark``
    otherwise). ``narrow_svgs`` (light, dark) are stills drawn at a phone's width, shown there
    instead of the desk ones (a roofline makes its own).
    """
    light, width, height = _still(render.svg(spec_light), "light", chart_id)
    box_style = f"--ainotes-aspect: {width:g} / {height:g}"
    dark, _, _ = _still(svg_dark if svg_dark is not None else render.svg(spec_dark), "dark", chart_id)
    title = _spec_title(spec_light)
    # <template>, not <script type="application/json">: Material's instant navigation re-runs
    # every <script> in the new page as JavaScript, dropping its type. A template's content
    # is inert, and script_json leaves no "<" or "&" in it for the HTML parser to read.
    dark_json = (render.script_json(vega_dark) if vega_dark is not None
                 else render.vega_script_json(render.responsive(spec_dark)))
    specs = "".join(
        f'<template class="ainotes-chart__spec" data-scheme="{scheme}">{text}</template>'
        for scheme, text in (("light", render.vega_script_json(render.responsive(spec_light))), ("dark", dark_json))
    )
    cid = html.escape(chart_id)
    summary = controls = tables = narrow = ""
    box_role = ""
    if roofline.spec_meta(spec_light) is not None:
        # Phones get a picture drawn at their size, so its text stays at least 11 px without a script.
        narrow_light = render.svg(roofline.narrow_static(spec_light))
        narrow = "".join(
            _still(text, scheme, chart_id, narrow=True)[0]
            for scheme, text in (("light", narrow_light), ("dark", roofline.dark_svg(narrow_light)))
        )
        # A phone's box takes the phone picture's proportions (its legends make it taller).
        narrow_width, narrow_height = render.svg_size(narrow_light)
        box_style += f"; --ainotes-aspect-narrow: {narrow_width:g} / {narrow_height:g}"
        # A text alternative for the picture, the explorer's controls, and its data as tables.
        summary = f'<p class="ainotes-sr-only" id="{cid}-summary">{html.escape(explorer.summary_text(spec_light))}</p>'
        box_role = f' role="img" aria-labelledby="{cid}-summary"'
        controls = explorer.controls_html(chart_id, spec_light)
        tables = explorer.tables_html(chart_id, spec_light)
    else:
        # Vega draws one row per bound param; the room is reserved (charts.css) so nothing below moves.
        rows = sum(1 for param in spec_light.get("params", []) if "bind" in param)
        controls = f'<div class="ainotes-chart__controls" style="--ainotes-bind-rows: {rows}"></div>'
        if narrow_svgs is not None:
            narrow = "".join(_still(text, scheme, chart_id, narrow=True)[0]
                             for scheme, text in zip(("light", "dark"), narrow_svgs, strict=True))
            narrow_width, narrow_height = render.svg_size(narrow_svgs[0])
            box_style += f"; --ainotes-aspect-narrow: {narrow_width:g} / {narrow_height:g}"
    return (
        f'<figure class="ainotes-chart" id="{cid}">{summary}'
        f'<div class="ainotes-chart__box{" ainotes-chart__box--narrow" if narrow else ""}"{box_role} '
        f'style="{box_style}">'
        f'{light}{dark}{narrow}<div class="ainotes-chart__view"></div></div>'
        f"{controls}{tables}"
        f"{specs}"
        f"<figcaption>{caption_html}</figcaption>"
        f"{downloads_html(chart_id, downloads, title=title)}"
        "</figure>"
    )
