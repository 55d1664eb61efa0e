"""The page being converted and what a fence becomes on it: :class:`Page`, :class:`Drawn`, :class:`Chart`
(with the embed files it gets), and the small helpers every chart drawer shares."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import orjson

from ainotes import render
from ainotes.html import embed


@dataclass
class Chart:
    """One chart on one page, and the embed files it gets."""

    chart_id: str
    kind: str
    title: str
    page_url: str
    page_src: str
    files: dict[str, Callable[[], str | bytes]] = field(default_factory=dict)
    about: dict[str, object] = field(default_factory=dict)  # extra manifest fields, e.g. presets shown
    # Kept drawings (ainotes.build.drawings): the key this chart's drawing is kept under once its figure is
    # drawn (write_outputs then keeps its files), or the key its figure came from (its files come from
    # there too), and what draws the chart should the kept files be lost.
    kept_key: str | None = None
    kept_from: str | None = None
    redraw: Callable[[], object] | None = None

    def file_name(self, kind: str) -> str:
        """``svg`` → ``ID.svg``; ``svg-dark`` → ``ID-dark.svg``, ``svg-narrow`` → ``ID-narrow.svg``."""
        variant = kind.removeprefix("svg-") if kind.startswith("svg-") else None
        return f"{self.chart_id}-{variant}.svg" if variant else f"{self.chart_id}.{kind}"


@dataclass
class Page:
    """The page being converted: its source path (for messages), URL (for links) and what it holds.

    ``line_offset`` counts the lines a generator removed before Markdown saw the text
    (front matter), so messages give the line in the file.
    """

    src: str
    url: str
    line_offset: int = 0
    links_from: str = ""  # what the page's relative links are relative to (default: its URL)
    scripts: list[str] = field(default_factory=list)  # runtime files this page's charts need
    claimed_ids: set[str] = field(default_factory=set)  # chart ids given out on this page

    def where(self, line: int | None) -> str:
        return self.src if line is None else f"{self.src}:{line + self.line_offset}"

    def need_script(self, *names: str) -> None:
        for name in names:
            if name not in self.scripts:
                self.scripts.append(name)


@dataclass
class Drawn:
    """What a fence became: its HTML, and the chart to register if the fence stays in the page."""

    html: str
    chart: Chart | None = None
    scripts: tuple[str, ...] = ()  # runtime files the page then needs, under assets/ainotes/


def figure_section(html_text: str) -> str:
    return f'<section class="ainotes-figure" data-search-exclude>{html_text}</section>'


def prefetch_renders(
    progress: Callable[[int, int], None] | None, light: dict, dark: dict, *, dark_svg: bool,
    narrow: Sequence[dict] = (), dark_vega: bool = True,
) -> None:
    """Queue everything vl-convert will be asked for a Vega-Lite chart: it renders (once, in
    parallel with other charts) while the build goes on, and each use waits for its own.
    ``narrow`` are the phone-sized specs whose stills a page shows on narrow screens (light, and
    dark where the dark one is rendered, not recoloured). The chart's
    renders are one job, so one worker compiles each theme's spec once for all of them."""

    chart = [render.svg_request(light, png_scales=(render.PNG_SCALE,)), render.vega_request(render.responsive(light))]
    chart.extend(render.svg_request(spec) for spec in narrow)
    if dark_vega:  # a chart whose dark live view is compiled, not recoloured
        chart.append(render.vega_request(render.responsive(dark)))
    if dark_svg:  # a chart whose dark still is rendered, not recoloured
        chart.append(render.svg_request(dark))
    render.prefetch([render.group_request(chart), render.RUNTIME_REQUEST], progress=progress)


def themed_chart_files(chart: Chart, light: dict, dark: dict, *, title: str,
                        caption_html: str) -> dict[str, Callable[[], str | bytes]]:
    """The embed files of a Vega chart whose dark still is rendered from its own dark spec (the cost,
    memory and inference charts): both stills, the PNG, the Vega-Lite JSON and the standalone page."""

    return {
        "svg": lambda: render.svg(light),
        "svg-dark": lambda: render.svg(dark),
        "png": lambda: render.png(light),
        "json": lambda: embed_json_bytes(light),
        "html": lambda: embed.standalone_html(light, title=title, spec_dark=dark, caption_html=caption_html,
                                              chart_id=chart.chart_id),
    }


def relative_prefix(page_url: str) -> str:
    """The way back to the site root from a page URL: ``"roofline/"`` → ``"../"``."""
    depth = page_url.strip("/").count("/") + 1 if page_url.strip("/") else 0
    if page_url and not page_url.endswith("/"):
        depth -= 1  # "page.html" sits in its folder
    return "../" * depth


def embed_json_bytes(data: object) -> bytes:
    """An embed file's JSON: keys sorted, indented two spaces, UTF-8 (orjson: the standard
    library's indenting encoder is pure Python, a few milliseconds a spec)."""
    return orjson.dumps(data, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n"


ASSET_URL = "assets/ainotes"


EMBED_DIR = "embed"


RUNTIME_FILE = "vega.min.js"
