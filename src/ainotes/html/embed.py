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

import functools
import html
import re
from collections.abc import Mapping
from importlib import resources
from typing import Any

from ainotes import render
from ainotes.base import scripts
from ainotes.charts import frame
from ainotes.charts.figure import VegaFigure

DOWNLOAD_LABELS = {
    "svg": "SVG",
    "svg-dark": "SVG (dark)",
    "svg-narrow": "SVG (narrow)",
    "png": "PNG",
    "json": "JSON",
    "html": "HTML page",
}
_ID_ATTRIBUTE = re.compile(r'\bid="([^"]+)"')
NARROW_SCREEN_PX = 600  # charts.css gives screens up to this wide the phone picture


def namespace_ids(svg_text: str, prefix: str) -> str:
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


def still_html(svg_text: str, scheme: str, chart_id: str, *, narrow: bool = False) -> tuple[str, float, float]:
    text = render.static_svg_for_page(svg_text)
    width, height = render.svg_size(text)
    size = " ainotes-chart__still--narrow" if narrow else ""
    text = namespace_ids(text, f"{chart_id}-{scheme}{'-narrow' if narrow else ''}")
    return f'<div class="ainotes-chart__still ainotes-chart__still--{scheme}{size}">{text}</div>', width, height


def spec_title(spec: Mapping[str, Any]) -> str:
    """The spec's title as text; "Chart" where it has none, or only one the live view computes
    (``{"expr": ...}``: the static page has no value for it)."""
    title = spec.get("title")
    if isinstance(title, Mapping):
        title = title.get("text")
    if isinstance(title, list):
        title = " ".join(str(part) for part in title)
    return str(title) if title and isinstance(title, str | int | float) else "Chart"


def picture_snippet(urls: Mapping[str, str], *, title: str) -> str | None:
    """The ``<img>`` (in a ``<picture>`` with the narrow still where there is one) that scales to
    its container: ``max-width:100%;height:auto``, the phone-sized still on screens up to 600 px."""
    if "svg" not in urls:
        return None
    image = (f'<img src="{html.escape(urls["svg"])}" alt="{html.escape(title)}" '
             'style="max-width:100%;height:auto">')
    if "svg-narrow" not in urls:
        return image
    return (f'<picture><source media="(max-width: {NARROW_SCREEN_PX}px)" srcset="{html.escape(urls["svg-narrow"])}">'
            f"{image}</picture>")


def frame_snippet(urls: Mapping[str, str], *, title: str, kind: str | None = None) -> str | None:
    """The ``<iframe>`` of the standalone page, full width and as tall as the page says it is
    (:mod:`ainotes.charts.frame`), and the one-line listener that makes it so."""
    if "html" not in urls:
        return None
    fallback = frame.FALLBACK_HEIGHT_PX.get(kind or "", frame.DEFAULT_FALLBACK_HEIGHT_PX)
    return (f'<iframe src="{html.escape(urls["html"])}" title="{html.escape(title)}" {frame.FRAME_ATTRIBUTE} '
            f'style="display:block;width:100%;height:{fallback}px;border:0"></iframe>\n'
            f"{frame.HOST_LISTENER_HTML}")


def downloads_html(chart_id: str, downloads: Mapping[str, str], *, title: str | None = None,
                   embed_urls: Mapping[str, str] | None = None, kind: str | None = None) -> str:
    """A row of download links (kind → URL relative to the page) and a ``<details>`` with the
    embed snippets (:func:`picture_snippet`, :func:`frame_snippet`). Everything escaped.

    ``embed_urls`` are the files' URLs relative to the page's own URL (default: ``downloads``),
    for the snippets, which no generator rewrites; ``vega-charts.js`` makes them absolute
    when it runs, which is what another site needs.
    """
    links = []
    for file_kind, url in downloads.items():
        label = DOWNLOAD_LABELS.get(file_kind, file_kind.upper())
        links.append(f'<a href="{html.escape(url)}" download>{html.escape(label)}</a>')
    parts = [f'<div class="ainotes-downloads" data-chart="{html.escape(chart_id)}">']
    if links:
        parts.append('<span class="ainotes-downloads__label">Download:</span> ' + " · ".join(links))
    urls = dict(downloads if embed_urls is None else embed_urls)
    alt_text = title or chart_id
    snippets = [
        (label, text, keys) for label, text, keys in (
            ("A picture that scales to its column (a phone gets the narrow one):",
             picture_snippet(urls, title=alt_text), ("svg", "svg-narrow")),
            ("The live chart, in a frame as tall as its page:",
             frame_snippet(urls, title=alt_text, kind=kind), ("html",)),
        ) if text is not None
    ]
    if snippets:
        parts.append('<details class="ainotes-embed"><summary>Embed this chart</summary>')
        for label, text, keys in snippets:
            used = " ".join(html.escape(urls[k]) for k in keys if k in urls)
            parts.append(f'<p class="ainotes-embed__label">{html.escape(label)}</p><pre>'
                         f'<code class="ainotes-embed__snippet" data-urls="{used}">{html.escape(text)}</code></pre>')
        parts.append("</details>")
    parts.append("</div>")
    return "".join(parts)


class FigureRenders:
    """A :class:`~ainotes.charts.figure.VegaFigure`'s rendered pieces, each made once when first
    asked for: the stills (recoloured from the light ones where the figure says so) and the live
    view's compiled specs as a page's ``<template>`` holds them."""

    def __init__(self, figure: VegaFigure, session: render.RenderSession = render.SESSION) -> None:
        self.figure = figure
        self.session = session

    @functools.cached_property
    def svg_light(self) -> str:
        return self.session.svg(self.figure.light)

    @functools.cached_property
    def svg_dark(self) -> str:
        figure = self.figure
        if figure.dark is None:
            return self.svg_light
        return figure.recolour.svg(self.svg_light) if figure.recolour is not None else self.session.svg(figure.dark)

    @functools.cached_property
    def narrow_svgs(self) -> tuple[str, str] | None:
        """The phone stills, light and dark, or ``None`` for a chart without one."""
        figure = self.figure
        if not figure.narrow:
            return None
        light = self.session.svg(figure.narrow[0])
        if figure.dark is None:
            return light, light
        if len(figure.narrow) > 1:
            return light, self.session.svg(figure.narrow[1])
        if figure.recolour is None:
            raise ValueError("a figure with one phone spec recolours its dark still (give Recolour)")
        return light, figure.recolour.svg(light)

    def vega_json(self, scheme: str) -> str:
        """The compiled live view of ``scheme`` as JSON safe inside a ``<template>``."""
        figure = self.figure
        if scheme == "light" or figure.dark is None:
            return self.session.vega_script_json(render.responsive(figure.light))
        if figure.recolour is not None:
            return scripts.script_json(figure.recolour.vega(self.session.vega(render.responsive(figure.light))))
        return self.session.vega_script_json(render.responsive(figure.dark))


def _renders(figure: VegaFigure | FigureRenders) -> FigureRenders:
    return figure if isinstance(figure, FigureRenders) else FigureRenders(figure)


def interactive_figure_html(
    chart_id: str,
    figure: VegaFigure | FigureRenders,
    *,
    downloads: Mapping[str, str],
    embed_urls: Mapping[str, str] | None = None,
    kind: str | None = None,
    stylesheet_href: str | None = None,
    standalone: bool = False,
) -> str:
    """The in-page figure for one chart (see the module docstring).

    ``downloads`` maps a kind (``svg``, ``png``, ``json``, ``html``, ...) to a URL relative to the
    page; ``embed_urls`` and ``kind`` go to :func:`downloads_html`. ``stylesheet_href``: where the
    page finds the figure's own stylesheet (:attr:`VegaFigure.stylesheet`). ``standalone``: the
    figure of the chart's standalone page, which shows the phone still only when it is one of the
    chart's files (:attr:`VegaFigure.narrow_file`) and links no stylesheet.
    """
    renders = _renders(figure)
    spec = renders.figure
    light, width, height = still_html(renders.svg_light, "light", chart_id)
    box_style = f"--ainotes-aspect: {width:g} / {height:g}"
    dark, _, _ = still_html(renders.svg_dark, "dark", chart_id)
    # <template>, not <script type="application/json">: Material's instant navigation re-runs
    # every <script> in the new page as JavaScript, dropping its type. A template's content
    # is inert, and script_json leaves no "<" or "&" in it for the HTML parser to read.
    specs = "".join(f'<template class="ainotes-chart__spec" data-scheme="{scheme}">{renders.vega_json(scheme)}'
                    "</template>" for scheme in ("light", "dark"))
    cid = html.escape(chart_id)
    summary = tables = narrow = box_role = ""
    narrow_svgs = renders.narrow_svgs if (spec.narrow_file or not standalone) else None
    if narrow_svgs is not None:
        # Phones get a picture drawn at their size, so its text stays at least 11 px without a script.
        narrow = "".join(still_html(text, scheme, chart_id, narrow=True)[0]
                         for scheme, text in zip(("light", "dark"), narrow_svgs, strict=True))
        # A phone's box takes the phone picture's proportions (its legends make it taller).
        narrow_width, narrow_height = render.svg_size(narrow_svgs[0])
        box_style += f"; --ainotes-aspect-narrow: {narrow_width:g} / {narrow_height:g}"
    own_stylesheet = spec.stylesheet is not None and not standalone
    if spec.explorer is not None:
        # A text alternative for the picture, the explorer's controls, and its data as tables.
        summary = f'<p class="ainotes-sr-only" id="{cid}-summary">{html.escape(spec.explorer.summary_text)}</p>'
        box_role = f' role="img" aria-labelledby="{cid}-summary"'
        controls = spec.explorer.controls_html(chart_id)
        tables = spec.explorer.tables_html(chart_id)
    elif own_stylesheet:  # its stylesheet lays the controls out
        controls = '<div class="ainotes-chart__controls"></div>'
    else:
        # Vega draws one row per bound param; the room is reserved (charts.css) so nothing below moves.
        rows = sum(1 for param in spec.light.get("params", []) if "bind" in param)
        controls = f'<div class="ainotes-chart__controls" style="--ainotes-bind-rows: {rows}"></div>'
    figure_class = f"ainotes-chart {spec.css_class}" if spec.css_class and own_stylesheet else "ainotes-chart"
    link = (f'<link rel="stylesheet" href="{html.escape(stylesheet_href)}">'
            if own_stylesheet and stylesheet_href is not None else "")
    title = spec.snippet_title or spec_title(spec.light)
    return (
        f'<figure class="{html.escape(figure_class)}" id="{cid}">{link}{summary}'
        f'<div class="ainotes-chart__box{" ainotes-chart__box--narrow" if narrow else ""}"{box_role} '
        f'style="{box_style}">'
        f'{light}{dark}{narrow}<div class="ainotes-chart__view"></div></div>'
        f"{controls}{tables}"
        f"{specs}"
        f"<figcaption>{spec.caption_html}</figcaption>"
        f"{downloads_html(chart_id, downloads, title=title, embed_urls=embed_urls, kind=kind)}"
        "</figure>"
    )


# --------------------------------------------------------------------------
# The standalone page: the in-page figure, its stylesheet and script, and the runtime, inline.

_STANDALONE_CSS = """
html{font-size:125%}
body{margin:0;padding:.6rem;font:.8rem/1.6 system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;
  background:LIGHT_BG;color:LIGHT_FG;color-scheme:light;overflow-wrap:anywhere;--md-default-bg-color:LIGHT_BG}
body[data-md-color-scheme="slate"]{background:DARK_BG;color:DARK_FG;color-scheme:dark;--md-default-bg-color:DARK_BG}
.ainotes-standalone{max-width:1200px;margin:0 auto}
.ainotes-standalone .ainotes-explorer-stage>.ainotes-explorer{position:static;max-height:none;overflow:visible;
  box-shadow:none}
.ainotes-standalone .ainotes-chart{margin:0}
/* Words in a table with a scroller of its own (.ainotes-table-wrap) never break mid-word: it scrolls. */
.ainotes-standalone table{border-collapse:collapse}
.ainotes-standalone .ainotes-table-wrap table{overflow-wrap:normal}
.ainotes-standalone th,.ainotes-standalone td{padding:.25em .6em;text-align:left;vertical-align:top;
  border-bottom:1px solid rgba(128,128,128,.35)}
.ainotes-standalone caption{padding:.3em 0}
"""

# Before the chart script runs: the reader's colour scheme, as Material would set it.
_SCHEME_JS = """(function () {
  var query = window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)");
  function apply() { document.body.setAttribute("data-md-color-scheme", query && query.matches ? "slate" : "default"); }
  apply();
  if (query && query.addEventListener) query.addEventListener("change", apply);
})();
"""


def _asset_text(name: str) -> str:
    return (resources.files("ainotes") / "assets" / name).read_text(encoding="utf-8")


# Where a standalone page (in embed/) finds the fonts charts.css names (in assets/ainotes/fonts/).
STANDALONE_FONTS_URL = "../assets/ainotes/fonts/"


_FONT_FACE = re.compile(r"@font-face\s*\{[^}]*\}\s*")


def standalone_charts_css(fonts_url: str | None = STANDALONE_FONTS_URL) -> str:
    """``charts.css`` as a standalone page inlines it: its fonts found at ``fonts_url`` (the site's
    embed/ pages: :data:`STANDALONE_FONTS_URL`), or, with ``None``, no ``@font-face`` at all, for a
    page written anywhere (``ainotes roofline -o r.html``), which then loads nothing and shows the
    text in a font of Arial's metrics, the shipped font's."""
    css = _asset_text("charts.css")
    if fonts_url is None:
        return _FONT_FACE.sub("", css)
    return css.replace('url("fonts/', f'url("{fonts_url}')


def _colours(spec: Mapping[str, Any]) -> tuple[str, str]:
    config = spec.get("config", {})
    return (_css_colour(str(config.get("background", "#ffffff")), "#ffffff"),
            _css_colour(str(config.get("title", {}).get("color", "#1f2329")), "#1f2329"))


def _css_colour(value: str, fallback: str) -> str:
    """A colour from the spec for the page's CSS; anything but a plain hex colour or name falls back."""
    return value if re.fullmatch(r"#[0-9a-fA-F]{3,8}|[a-zA-Z]+", value) else fallback


def standalone_html(figure: VegaFigure | FigureRenders, *, title: str, chart_id: str = "chart",
                    fonts_url: str | None = None) -> str:
    """One self-contained page of a Vega chart, as the notes' page shows it: both stills (and the
    phone still, where it is one of the chart's files) at once, then the live view, an explorer's
    form and tables (a roofline's: the readout at an intensity, the reader's own kernel, the
    batch-size GEMM), wired by the site's own ``vega-charts.js``; ``charts.css``, that script,
    the runtime and the compiled specs all inline, nothing loaded from outside. Dark where the
    reader's system is, when the figure has a dark spec. In a frame it tells its host its height
    (:mod:`ainotes.charts.frame`). ``title`` is escaped; the caption is trusted HTML. ``fonts_url``:
    where the page finds the shipped font (:func:`standalone_charts_css`; ``None``: it links none)."""
    renders = _renders(figure)
    spec_light, spec_dark = renders.figure.light, renders.figure.dark
    figure_html = interactive_figure_html(chart_id, renders, downloads={}, standalone=True)
    light_bg, light_fg = _colours(spec_light)
    dark_bg, dark_fg = _colours(spec_dark) if spec_dark is not None else (light_bg, light_fg)
    css = (_STANDALONE_CSS.replace("LIGHT_BG", light_bg).replace("LIGHT_FG", light_fg)
           .replace("DARK_BG", dark_bg).replace("DARK_FG", dark_fg)) + standalone_charts_css(fonts_url)
    scheme = f"<script>{_SCHEME_JS}</script>\n" if spec_dark is not None else ""
    return (
        "<!doctype html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{html.escape(title)}</title>\n"
        f"<style>{css}</style>\n"
        '</head>\n<body data-md-color-scheme="default">\n'
        f"{scheme}"
        f'<main class="ainotes-standalone">\n{figure_html}\n'
        "<noscript><p>The interactive view needs JavaScript; "
        "the picture above is the chart as it opens.</p></noscript>\n"
        "</main>\n"
        f"<script>{renders.session.inline_runtime()}</script>\n"
        f"<script>{scripts.inline_script(_asset_text('vega-charts.js'))}</script>\n"
        f"<script>{frame.HEIGHT_POSTER_JS}</script>\n"
        "</body>\n</html>\n"
    )
