"""The one drawer of every Vega figure: a chart module's :class:`~ainotes.charts.figure.VegaFigure`
in, the page's figure, the chart's embed files and its downloads out.

:func:`draw_vega_figure` is all a fence kind's drawer calls for a Vega chart. When the build has
no kept drawing of the chart (:mod:`ainotes.build.drawings`), it makes the figure and

1. queues every render the figure will need (:func:`prefetch_figure`: one job, so one worker
   compiles each spec once for its still, phone still and live view);
2. names the chart's embed files (:func:`chart_files`): the stills, the PNG, the Vega-Lite JSON
   and the standalone page, each made when written;
3. returns what writes the in-page figure (:func:`ainotes.html.embed.interactive_figure_html`),
   with its downloads and the URLs its embed snippets show.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from ainotes import render
from ainotes.charts.figure import VegaFigure
from ainotes.html import embed
from ainotes.html.page import ASSET_URL, RUNTIME_FILE, Chart, Drawn, Page, embed_json_bytes, relative_prefix

#: The page scripts a live Vega figure needs, under ``assets/ainotes/``.
VEGA_SCRIPTS = (RUNTIME_FILE, "vega-charts.js")


class FigureSite(Protocol):
    """What the drawer asks of the build (:class:`ainotes.fences.kind.DrawSite` has all of it)."""

    render_progress: Callable[[int, int], None] | None
    renders: render.RenderSession
    embeds_later: bool  # the embed files are written after the page is served: the PNG is not rendered with it

    def chart_figure(self, chart: Chart, page: Page, inputs: object, draw: Callable[[], Callable[[], str]],
                     scripts: tuple[str, ...] = ()) -> Drawn: ...

    def downloads(self, chart: Chart, page: Page) -> dict[str, str]: ...

    def embed_urls(self, chart: Chart, page: Page) -> dict[str, str]: ...


def prefetch_figure(session: render.RenderSession, figure: VegaFigure,
                    progress: Callable[[int, int], None] | None = None, *, png: bool = True) -> None:
    """Queue everything vl-convert will be asked for ``figure``: it renders (once, in parallel with
    other charts) while the build goes on, and each use waits for its own. The light still (and
    its PNG, unless ``png`` is false: then it is rendered when its file is written), the light live
    view, the phone stills, and the dark still and live view unless the figure recolours them from
    the light ones: one job."""
    dark = figure.dark if figure.recolour is None else None
    requests = [render.svg_request(figure.light, png_scales=(render.PNG_SCALE,) if png else ()),
                render.vega_request(render.responsive(figure.light))]
    requests.extend(render.svg_request(spec) for spec in figure.narrow)
    if dark is not None:
        requests.append(render.vega_request(render.responsive(dark)))
        requests.append(render.svg_request(dark))
    session.prefetch([render.group_request(requests), render.RUNTIME_REQUEST], progress=progress)


def chart_files(chart: Chart, renders: embed.FigureRenders) -> dict[str, Callable[[], str | bytes]]:
    """A Vega chart's embed files by kind, each made when written: both stills, the phone still
    where it is one of the chart's files, the PNG, the Vega-Lite JSON and the standalone page."""
    figure = renders.figure
    files: dict[str, Callable[[], str | bytes]] = {"svg": lambda: renders.svg_light,
                                                   "svg-dark": lambda: renders.svg_dark}
    if figure.narrow_file and figure.narrow:
        files["svg-narrow"] = lambda: renders.session.svg(figure.narrow[0])  # the phone still, for small hosts
    files["png"] = lambda: renders.session.png(figure.light)
    files["json"] = lambda: embed_json_bytes(figure.light)
    files["html"] = lambda: embed.standalone_html(renders, title=chart.title, chart_id=chart.chart_id,
                                                     fonts_url=embed.STANDALONE_FONTS_URL)
    return files


def draw_vega_figure(site: FigureSite, chart: Chart, page: Page, inputs: object,
                     make: Callable[[], VegaFigure]) -> Drawn:
    """``chart`` on ``page`` as a live Vega figure made by ``make()`` (called only when the build
    has no kept drawing of it). ``inputs``: everything the drawing depends on beyond the chart's
    id, title, kind and page (the request; the presets, models or links shown)."""

    def draw() -> Callable[[], str]:
        figure = make()
        prefetch_figure(site.renders, figure, site.render_progress, png=not site.embeds_later)
        renders = embed.FigureRenders(figure, site.renders)
        chart.files = chart_files(chart, renders)
        downloads, urls = site.downloads(chart, page), site.embed_urls(chart, page)
        stylesheet = (f"{relative_prefix(page.links_from)}{ASSET_URL}/{figure.stylesheet}"
                      if figure.stylesheet is not None else None)
        return lambda: embed.interactive_figure_html(chart.chart_id, renders, downloads=downloads, embed_urls=urls,
                                                     kind=chart.kind, stylesheet_href=stylesheet)

    return site.chart_figure(chart, page, inputs, draw, scripts=VEGA_SCRIPTS)
