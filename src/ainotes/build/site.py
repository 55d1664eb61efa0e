"""One build's charts and tables: the state behind :mod:`ainotes.markdown.extension` and ``hooks/notes.py``.

Knows nothing of MkDocs or of Markdown's grammar: :mod:`ainotes.markdown.extension` decides what
is a fence, an inline figure or math and hands the text here; this module validates it
(:mod:`ainotes.fences.directives`, :mod:`ainotes.inline.figures`), draws it (:mod:`ainotes.html.tables`,
:mod:`ainotes.charts`) and remembers every chart for the embed files. One
:class:`NotesSite` lives for one build.

:data:`FENCE_KINDS` is the one table of fence kinds. Adding a kind is one entry there:

1. a parser ``parse(fence, where, presets_by_id) -> request`` (in ``directives.py`` or a
   module of your own) that raises :class:`~ainotes.base.errors.InputError` with ``where:line``;
2. a drawer ``draw(site, request, page) -> Drawn`` here (call :meth:`NotesSite.new_chart`
   for a chart with embed files);
3. ``FenceKind(name, parse, draw, chart=...)`` in :data:`FENCE_KINDS`.

The Markdown extension registers every kind in the table with ``pymdownx.superfences``,
so neither ``mkdocs.yml`` nor the hooks change.
"""

from __future__ import annotations

import functools
import re
import secrets
import shutil
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path, PurePosixPath
from typing import Any, Literal, TypeVar

import orjson

from ainotes.core import collectives
from ainotes.fences import cost_notes, directives, inference_notes, memory_notes, notes_pages
from ainotes.html import tables
from ainotes.inline import figures
from ainotes.build import backlinks
from ainotes.base.errors import InputError
from ainotes.base.files import write_atomic
from ainotes.core.hardware import Preset
from ainotes.presets.gpus import load_presets
from ainotes.core.links import Link
from ainotes.presets.links import default_links_dir, load_links
from ainotes.fences.model_notes import ModelsTableRequest, draw_models_table, parse_models_table
from ainotes.core.models import ModelPreset
from ainotes.presets.models import default_models_dir, load_models

ASSET_URL = "assets/ainotes"
EMBED_DIR = "embed"
_PACKAGE_ASSETS = ("charts.css", "collectives.css", "collectives.js", "notes.css", "vega-charts.js",
                   "THIRD_PARTY_NOTICES.txt", "notes-meta.css", "memory-chart.css")
_RUNTIME_FILE = "vega.min.js"
_DEFERRED_FIGURE = re.compile(r"ainotesfigure\d{6}x[0-9a-f]{8}")
_VEGA_KINDS = ("roofline", "collective-cost", "training-memory", "inference")  # charts drawn by the Vega runtime
_T = TypeVar("_T")


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


@dataclass(frozen=True)
class FenceKind:
    """One row of the fence table: name → parser → drawer, and whether it is a chart."""

    name: str
    parse: Callable[[directives.Fence, str, Mapping[str, Preset]], Any]
    draw: Callable[[NotesSite, Any, Page], Drawn]
    chart: bool


class NotesSite:
    """Build-wide state: the presets and every chart met so far."""

    def __init__(self, presets_dir: str | Path):
        self.presets: tuple[Preset, ...] = load_presets(presets_dir)
        self.presets_by_id = {preset.id: preset for preset in self.presets}
        self.presets_dir = Path(presets_dir)
        self._links: dict[str, Link] | None = None
        self._models: dict[str, ModelPreset] | None = None
        self.charts: dict[str, Chart] = {}
        # The exception a driver wants for a user's mistake (hooks/notes.py: MkDocs' PluginError).
        self.error_type: Callable[[str], Exception] = InputError
        self._announced: tuple[str, str, int] | None = None
        # A driver that calls finish_page on every page sets defer_figures: chart figures are
        # then drawn there, so that the renders of every page run meanwhile, in parallel
        # (ainotes.render.prefetch), instead of one page at a time. render_progress hears
        # how far the renders are, every few seconds, when there are many.
        self.defer_figures = False
        self.render_progress: Callable[[int, int], None] | None = None
        self._deferred: dict[str, Callable[[], str]] = {}
        self._nonce = secrets.token_hex(4)
        if "ainotes.render" in sys.modules:  # an earlier build in this process may have stopped half-way
            sys.modules["ainotes.render"].forget_queued()

    def announce_page(self, src: str, url: str, line_offset: int = 0) -> None:
        """Name the page the next Markdown conversion is of (a driver calls this before it)."""
        self._announced = (src, url, line_offset)

    def take_announced_page(self) -> tuple[str, str, int] | None:
        announced, self._announced = self._announced, None
        return announced

    def begin_page(self, src: str, url: str, line_offset: int = 0, *, links_from: str | None = None) -> Page:
        """A fresh :class:`Page`; charts left from an earlier build of it (``mkdocs serve``) go."""
        for chart in [c for c in self.charts.values() if c.page_src == src]:
            del self.charts[chart.chart_id]
        return Page(src=src, url=url, line_offset=line_offset, links_from=url if links_from is None else links_from)

    # -- what the Markdown extension calls ------------------------------------

    def draw_fence(self, kind: str, body: str, page: Page, line: int) -> Drawn:
        """A fence of ``kind`` opened at ``line`` (1-based, in Markdown's text) → its HTML.

        Every :class:`InputError` leaves here naming the page and a line.
        """
        fence_kind = FENCE_KINDS[kind]
        fence = directives.Fence(kind, body, line + page.line_offset)
        try:
            request = fence_kind.parse(fence, page.src, self.presets_by_id)
            return fence_kind.draw(self, request, page)
        except InputError as exc:
            message = str(exc)
            if not message.startswith(f"{page.src}:"):  # raised while drawing, not while parsing
                message = f"{page.where(line)}: {message}"
            raise InputError(message) from None

    def register(self, chart: Chart, page: Page, line: int) -> None:
        """Keep ``chart`` for the embed files and the manifest; its id must be new."""
        other = self.charts.get(chart.chart_id)
        if other is not None:
            raise InputError(
                f"{page.where(line)}: chart id {chart.chart_id!r} is already used "
                f"on {other.page_src}; give this fence its own 'id'"
            )
        self.charts[chart.chart_id] = chart

    def figure(self, body: str, page: Page, line: int | None) -> str:
        """The plain text of an inline figure ``{{ body }}``."""
        try:
            return figures.evaluate(body, self.presets_by_id, self.links, self.models)
        except InputError as exc:
            raise InputError(f"{page.where(line)}: {exc}") from None

    def math(self, latex: str, page: Page, line: int | None, *, block: bool) -> str:
        """MathML for ``$latex$`` (or a ``$$`` block)."""
        try:
            return figures.mathml(latex, block=block)
        except InputError as exc:
            raise InputError(f"{page.where(line)}: {exc}") from None

    def scripts_html(self, page: Page) -> str:
        """The ``<script>`` tags the page's charts need, or ``""``."""
        prefix = relative_prefix(page.links_from)
        return "".join(f'<script src="{prefix}{ASSET_URL}/{name}"></script>' for name in page.scripts)

    def finish_page(self, html_text: str) -> str:
        """A page's finished HTML with its deferred chart figures drawn in (see ``defer_figures``)."""
        if not self._deferred:
            return html_text

        def draw(match: re.Match[str]) -> str:
            make = self._deferred.get(match.group(0))
            return make() if make is not None else match.group(0)

        return _DEFERRED_FIGURE.sub(draw, html_text)

    def links(self) -> dict[str, Link]:
        """The interconnect presets in ``<presets>/links``, loaded when a page first needs them."""
        if self._links is None:
            self._links = {link.id: link for link in load_links(default_links_dir(self.presets_dir))}
        return self._links

    def models(self) -> dict[str, ModelPreset]:
        """The model presets in ``<presets>/models``, loaded when a page first needs them."""
        if self._models is None:
            self._models = {model.id: model for model in load_models(default_models_dir(self.presets_dir))}
        return self._models

    # -- helpers for drawers ---------------------------------------------------

    def figure_html(self, make: Callable[[], str]) -> str:
        """``make()``, the HTML of a chart figure; with ``defer_figures``, a placeholder that
        :meth:`finish_page` replaces by it (letters and digits: Markdown leaves them alone)."""
        if not self.defer_figures:
            return make()
        token = f"ainotesfigure{len(self._deferred):06d}x{self._nonce}"
        self._deferred[token] = make
        return token

    def chart_figure(self, chart: Chart, page: Page, inputs: object, draw: Callable[[], Callable[[], str]],
                     scripts: tuple[str, ...] = ()) -> Drawn:
        """The figure of ``chart``: kept from an earlier build when nothing it depends on changed
        (:mod:`ainotes.build.drawings`), else drawn.

        ``inputs`` holds everything the drawing depends on beyond the chart's id, title, kind
        and page (the request; the presets or links shown). ``draw()`` sets ``chart.files``
        and returns what makes the figure's HTML; it runs only when no drawing was kept."""
        from ainotes.build import drawings

        key = drawings.drawing_key(chart.kind, {"id": chart.chart_id, "title": chart.title, "url": page.url,
                                                "src": page.src, "links_from": page.links_from}, inputs)
        kept = drawings.load_figure(key)
        make: Callable[[], str]
        drawings.counts["kept" if kept is not None else "drawn"] += 1
        if kept is not None:
            chart.kept_from, chart.redraw = key, draw
            make = functools.partial(_same, kept)
        else:
            made = draw()

            def make() -> str:
                figure = made()
                drawings.store_figure(key, figure)
                chart.kept_key = key
                return figure
        return Drawn(_figure_section(self.figure_html(make)), chart, scripts=scripts)

    def new_chart(self, page: Page, kind: str, stem: str, chart_id: str | None, title: str) -> Chart:
        """A chart with ``chart_id`` or a page-derived default id not taken yet."""
        if chart_id is None:
            page_stem = PurePosixPath(page.src).with_suffix("").as_posix().replace("/", "-").lower()
            base = re.sub(r"[^a-z0-9]+", "-", f"{page_stem}-{stem}").strip("-")
            chart_id, n = base, 2
            while chart_id in self.charts or chart_id in page.claimed_ids:
                chart_id, n = f"{base}-{n}", n + 1
        page.claimed_ids.add(chart_id)
        return Chart(chart_id, kind, title, page.url, page.src)

    def downloads(self, chart: Chart, page: Page) -> dict[str, str]:
        """Each embed file's link, relative to what the page's links are relative to."""
        prefix = relative_prefix(page.links_from)
        return {kind: f"{prefix}{EMBED_DIR}/{chart.file_name(kind)}" for kind in chart.files}

    def embed_urls(self, chart: Chart, page: Page) -> dict[str, str]:
        """Each embed file's URL relative to the page's own URL, as the reader's browser resolves
        it (the snippet's text; no generator rewrites it, as Zensical rewrites links)."""
        prefix = relative_prefix(page.url)
        return {kind: f"{prefix}{EMBED_DIR}/{chart.file_name(kind)}" for kind in chart.files}

    # -- after the last page ----------------------------------------------------

    @staticmethod
    def _embed_files(chart: Chart) -> Mapping[str, str | bytes]:
        """A chart's embed files by kind: from its kept drawing, else made now."""
        from ainotes.build import drawings

        if chart.kept_from is not None:
            kept = drawings.load_files(chart.kept_from)
            if kept is not None:
                return kept
            if chart.redraw is not None:
                drawings.counts["redrawn"] += 1
                chart.redraw()  # the files entry went missing: draw the chart for its files, keep them again
                chart.kept_key = chart.kept_from
        return {kind: make() for kind, make in chart.files.items()}

    def write_outputs(self, site_dir: str | Path) -> None:
        """Write assets, every chart's embed files and the manifest into ``site_dir``, and keep
        the drawings made this build for the next (:mod:`ainotes.build.drawings`)."""
        from ainotes import render
        from ainotes.build import drawings

        site = Path(site_dir)
        assets = site / ASSET_URL
        assets.mkdir(parents=True, exist_ok=True)
        package_assets = resources.files("ainotes") / "assets"
        for name in _PACKAGE_ASSETS:
            with resources.as_file(package_assets / name) as path:
                shutil.copyfile(path, assets / name)
        render.drain(progress=self.render_progress)  # renders still running: wait, reporting to the end
        if any(chart.kind in _VEGA_KINDS for chart in self.charts.values()):
            write_atomic(assets / _RUNTIME_FILE, render.runtime_js())
        embed_dir = site / EMBED_DIR
        embed_dir.mkdir(parents=True, exist_ok=True)
        manifest = []
        for chart in sorted(self.charts.values(), key=lambda c: c.chart_id):
            files: dict[str, str] = {}
            contents = self._embed_files(chart)
            for kind, content in contents.items():
                files[kind] = chart.file_name(kind)
                write_atomic(embed_dir / files[kind], content)
            if chart.kept_key is not None:  # its figure was drawn and kept this build
                drawings.store_files(chart.kept_key, contents)
            manifest.append(
                {"id": chart.chart_id, "kind": chart.kind, "title": chart.title, "page": chart.page_url,
                 "source": chart.page_src, **chart.about, "files": files}
            )
        write_atomic(embed_dir / "manifest.json", embed_json_bytes({"charts": manifest}))


# --------------------------------------------------------------------------
# Drawers: request → HTML (+ chart). Charts sit in a section the search index skips.


def _figure_section(html_text: str) -> str:
    return f'<section class="ainotes-figure" data-search-exclude>{html_text}</section>'


def _prefetch_renders(
    site: NotesSite, light: dict, dark: dict, *, dark_svg: bool, narrow: dict | None = None, dark_vega: bool = True
) -> None:
    """Queue everything vl-convert will be asked for a Vega-Lite chart: it renders (once, in
    parallel with other charts) while the build goes on, and each use waits for its own.
    ``narrow`` is the phone-sized spec whose still a page shows on narrow screens. The chart's
    renders are one job, so one worker compiles each theme's spec once for all of them."""
    from ainotes import render

    chart = [render.svg_request(light, png_scales=(render.PNG_SCALE,)), render.vega_request(render.responsive(light))]
    if narrow is not None:
        chart.append(render.svg_request(narrow))
    if dark_vega:  # a chart whose dark live view is compiled, not recoloured
        chart.append(render.vega_request(render.responsive(dark)))
    if dark_svg:  # a chart whose dark still is rendered, not recoloured
        chart.append(render.svg_request(dark))
    render.prefetch([render.group_request(chart), render.RUNTIME_REQUEST], progress=site.render_progress)


def _themed_chart_files(chart: Chart, light: dict, dark: dict, *, title: str,
                        caption_html: str) -> dict[str, Callable[[], str | bytes]]:
    """The embed files of a Vega chart whose dark still is rendered from its own dark spec (the cost,
    memory and inference charts): both stills, the PNG, the Vega-Lite JSON and the standalone page."""
    from ainotes import render
    from ainotes.html import embed

    return {
        "svg": lambda: render.svg(light),
        "svg-dark": lambda: render.svg(dark),
        "png": lambda: render.png(light),
        "json": lambda: embed_json_bytes(light),
        "html": lambda: embed.standalone_html(light, title=title, spec_dark=dark, caption_html=caption_html,
                                              chart_id=chart.chart_id),
    }


def _draw_roofline(site: NotesSite, request: directives.RooflineRequest, page: Page) -> Drawn:
    presets = [site.presets_by_id[i] for i in request.preset_ids]
    palette_ids = tuple(site.presets_by_id)
    kernels, title = request.kernels, request.title
    if request.layer is not None:  # a model's layer as its operators (ainotes.fences.inference_notes)
        from ainotes.fences import inference_notes

        kernels = inference_notes.layer_request_kernels(request.layer, site.models(), kernels,
                                                        limit=directives.MAX_KERNELS_PER_CHART)
        title = title or inference_notes.layer_title(request.layer, site.models())
    title = title or "Roofline: " + ", ".join(p.name for p in presets)
    chart = site.new_chart(page, "roofline", "roofline", request.chart_id, title)
    chart.about = {"presets": [p.id for p in presets], "sparsity": request.sparsity}

    def draw() -> Callable[[], str]:
        from ainotes import render
        from ainotes.html import embed
        from ainotes.charts import roofline as roofline_chart

        light = roofline_chart.roofline_spec(
            presets, kernels=kernels, sparsity=request.sparsity, title=title if request.layer else request.title,
            theme="light", precision=request.precision,
            palette_ids=palette_ids,  # one colour per GPU across the site
        )
        dark = roofline_chart.retheme(light, "dark")
        narrow = roofline_chart.narrow_static(light)
        _prefetch_renders(site, light, dark, dark_svg=False, dark_vega=False, narrow=narrow)

        @functools.cache
        def svg_dark() -> str:
            return roofline_chart.dark_svg(render.svg(light))  # no second Vega render

        def vega_dark() -> dict:
            return roofline_chart.dark_vega(render.vega(render.responsive(light)))  # no second compile

        caption = roofline_chart.caption_html(presets, request.sparsity)
        chart.files = {
            "svg": lambda: render.svg(light),
            "svg-dark": svg_dark,
            "svg-narrow": lambda: render.svg(narrow),  # the phone still, for small hosts
            "png": lambda: render.png(light),
            "json": lambda: embed_json_bytes(light),
            "html": lambda: embed.standalone_html(light, title=title, spec_dark=dark, svg_dark=svg_dark(),
                                                  vega_dark=vega_dark(), caption_html=caption,
                                                  chart_id=chart.chart_id),
        }
        downloads, urls = site.downloads(chart, page), site.embed_urls(chart, page)
        return lambda: embed.interactive_figure_html(
            chart.chart_id, light, dark, caption_html=caption, downloads=downloads, svg_dark=svg_dark(),
            vega_dark=vega_dark(), embed_urls=urls, kind=chart.kind,
        )

    return site.chart_figure(chart, page, (request, presets, kernels, palette_ids), draw,
                             scripts=(_RUNTIME_FILE, "vega-charts.js"))


def _draw_collective(site: NotesSite, request: directives.CollectiveRequest, page: Page) -> Drawn:
    run = collectives.simulate(request.op, request.ranks, request.root, schedule=request.schedule)
    title = request.title or run.title
    chart = site.new_chart(page, "collective", request.op, request.chart_id, title)
    chart.about = {"op": request.op, "ranks": request.ranks, "root": run.root, "schedule": run.schedule}

    def draw() -> Callable[[], str]:
        from ainotes.charts import collective as collective_chart
        from ainotes.html import embed

        chart.files = {
            "svg": lambda: collective_chart.animated_svg(run, title=title),
            "json": lambda: embed_json_bytes(collectives.run_to_json(run)),
            "html": lambda: collective_chart.standalone_html(run, title=request.title),
        }
        downloads, urls = site.downloads(chart, page), site.embed_urls(chart, page)
        return lambda: (
            '<div class="ainotes-collective">'
            # The author's title only: without one, each rank count the reader picks names itself.
            f"{collective_chart.stepper_html(run, chart.chart_id, title=request.title)}"
            f"{collective_chart.table_html(run, title=title)}"
            f"{embed.downloads_html(chart.chart_id, downloads, title=title, embed_urls=urls, kind=chart.kind)}"
            "</div>"
        )

    return site.chart_figure(chart, page, request, draw, scripts=("collectives.js",))


def _draw_collective_cost(site: NotesSite, request: cost_notes.CollectiveCostRequest, page: Page) -> Drawn:
    from ainotes.charts import cost as cost_chart

    links = tuple(site.links().values())
    link = cost_notes.link_for(site.links(), request.link_id)
    title = request.title or cost_chart.default_title(request.op)
    chart = site.new_chart(page, "collective-cost", f"{request.op}-cost", request.chart_id, title)
    chart.about = {"op": request.op, "ranks": request.ranks, "link": link.id}

    def draw() -> Callable[[], str]:
        from ainotes import render
        from ainotes.html import embed

        def spec(theme: Literal["light", "dark"]) -> dict:
            return cost_chart.cost_spec(links, op=request.op, ranks=request.ranks, link_id=link.id,
                                        title=request.title, theme=theme)

        light, dark = spec("light"), spec("dark")
        narrow = (cost_chart.narrow_static(light), cost_chart.narrow_static(dark))
        _prefetch_renders(site, light, dark, dark_svg=True, narrow=narrow[0])
        caption = cost_chart.caption_html(request.op, request.ranks, link, links)
        chart.files = _themed_chart_files(chart, light, dark, title=title, caption_html=caption)
        downloads, urls = site.downloads(chart, page), site.embed_urls(chart, page)
        return lambda: embed.interactive_figure_html(
            chart.chart_id, light, dark, caption_html=caption, downloads=downloads, embed_urls=urls, kind=chart.kind,
            narrow_svgs=(render.svg(narrow[0]), render.svg(narrow[1])),
        )

    return site.chart_figure(chart, page, (request, links), draw, scripts=(_RUNTIME_FILE, "vega-charts.js"))


def _draw_training_memory(site: NotesSite, request: memory_notes.TrainingMemoryRequest, page: Page) -> Drawn:
    models, initial = memory_notes.resolve_models(request, site.models())
    config = memory_notes.initial_config(request, initial)
    presets = tuple(site.presets_by_id[i] for i in request.preset_ids)
    title = request.title or "Memory per GPU of a training run"
    chart = site.new_chart(page, "training-memory", "training-memory", request.chart_id, title)
    chart.about = {"models": [m.id for m in models], "presets": [p.id for p in presets], **request.fields}

    def draw() -> Callable[[], str]:
        from ainotes.charts import memory as memory_chart

        light, dark = (memory_chart.memory_spec(models, presets, config, title=request.title, theme=theme)
                       for theme in ("light", "dark"))
        memory_chart.prefetch(light, dark, progress=site.render_progress)
        caption = memory_chart.caption_html(config, presets)
        chart.files = _themed_chart_files(chart, light, dark, title=title, caption_html=caption)
        downloads, urls = site.downloads(chart, page), site.embed_urls(chart, page)
        stylesheet = f"{relative_prefix(page.links_from)}{ASSET_URL}/memory-chart.css"
        return lambda: memory_chart.figure_html(chart.chart_id, light, dark, caption_html=caption,
                                                downloads=downloads, stylesheet=stylesheet, embed_urls=urls,
                                                kind=chart.kind)

    return site.chart_figure(chart, page, (request, models, presets), draw,
                             scripts=(_RUNTIME_FILE, "vega-charts.js"))


def _draw_memory_fit_table(site: NotesSite, request: memory_notes.MemoryFitTableRequest, page: Page) -> Drawn:
    return Drawn(memory_notes.memory_fit_table_html(request, site.models(), site.presets_by_id))


def _draw_inference(site: NotesSite, request: inference_notes.InferenceChartRequest, page: Page) -> Drawn:
    from ainotes.charts import inference as inference_chart

    models = inference_notes.resolve_models(request.model_ids, site.models(), request.where)
    presets = [site.presets_by_id[i] for i in request.preset_ids]
    links = inference_notes.chart_links(request, presets, site.links())
    title = request.title or inference_chart.default_title(request.compute_dtype)
    chart = site.new_chart(page, "inference", "inference", request.chart_id, title)
    chart.about = {"models": [m.id for m in models], "presets": [p.id for p in presets],
                   "compute_dtype": request.compute_dtype}

    def draw() -> Callable[[], str]:
        from ainotes import render
        from ainotes.html import embed

        def spec(theme: Literal["light", "dark"]) -> dict:
            return inference_chart.inference_spec(
                models, presets, links, model_id=models[0].id, preset_id=presets[0].id, context=request.context,
                contexts=request.contexts, precision=request.precision, precisions=request.precisions,
                compute_dtype=request.compute_dtype, tp=request.tp, tps=request.tps, metric=request.metric,
                title=request.title, theme=theme)

        light, dark = spec("light"), spec("dark")
        caption = inference_notes.chart_caption(request, models[0], presets[0], links)
        narrow = (inference_chart.narrow_static(light), inference_chart.narrow_static(dark))
        _prefetch_renders(site, light, dark, dark_svg=True, narrow=narrow[0])
        chart.files = _themed_chart_files(chart, light, dark, title=title, caption_html=caption)
        downloads, urls = site.downloads(chart, page), site.embed_urls(chart, page)
        return lambda: embed.interactive_figure_html(
            chart.chart_id, light, dark, caption_html=caption, downloads=downloads, embed_urls=urls, kind=chart.kind,
            narrow_svgs=(render.svg(narrow[0]), render.svg(narrow[1])))

    return site.chart_figure(chart, page, (request, models, presets, links), draw,
                             scripts=(_RUNTIME_FILE, "vega-charts.js"))


def _draw_inference_table(site: NotesSite, request: inference_notes.InferenceTableRequest, page: Page) -> Drawn:
    models = inference_notes.resolve_models(request.model_ids, site.models(), request.where)
    rows = inference_notes.table_rows(request, models, site.presets_by_id, site.links)
    return Drawn(inference_notes.inference_table_html(rows, request))


def _draw_links_table(site: NotesSite, request: None, page: Page) -> Drawn:
    used_in = backlinks.used_in_html(site, "link", site.links(), relative_prefix(page.links_from))
    return Drawn(tables.links_table_html(tuple(site.links().values())) + used_in)


def _draw_models_table(site: NotesSite, request: ModelsTableRequest, page: Page) -> Drawn:
    drawn = draw_models_table(site, request, page)
    ids = list(site.models()) if request.model_ids is None else request.model_ids
    drawn.html += backlinks.used_in_html(site, "model", ids, relative_prefix(page.links_from))
    return drawn


def _draw_presets_table(site: NotesSite, request: directives.PresetsTableRequest, page: Page) -> Drawn:
    used_in = backlinks.used_in_html(site, "gpu", request.preset_ids, relative_prefix(page.links_from))
    return Drawn(tables.presets_table_html([site.presets_by_id[i] for i in request.preset_ids]) + used_in)


def _draw_mfu_table(site: NotesSite, request: directives.MfuTableRequest, page: Page) -> Drawn:
    return Drawn(tables.mfu_table_html(request.resolve(site.models), site.presets_by_id))


def _draw_kernels_table(site: NotesSite, request: directives.KernelsTableRequest, page: Page) -> Drawn:
    return Drawn(tables.kernels_table_html(request.kernels, [site.presets_by_id[i] for i in request.preset_ids]))


def _draw_preset_check(site: NotesSite, request: str, page: Page) -> Drawn:
    return Drawn(tables.preset_check_html(request))


FENCE_KINDS: Mapping[str, FenceKind] = {
    kind.name: kind
    for kind in (
        FenceKind("roofline", directives.parse_roofline, _draw_roofline, chart=True),
        FenceKind("collective", directives.parse_collective, _draw_collective, chart=True),
        FenceKind("presets-table", directives.parse_presets_table, _draw_presets_table, chart=False),
        FenceKind("mfu-table", directives.parse_mfu_table, _draw_mfu_table, chart=False),
        FenceKind("kernels-table", directives.parse_kernels_table, _draw_kernels_table, chart=False),
        FenceKind("preset-check", directives.check_preset_example, _draw_preset_check, chart=False),
        FenceKind("collective-cost", cost_notes.parse_collective_cost, _draw_collective_cost, chart=True),
        FenceKind("links-table", cost_notes.parse_links_table, _draw_links_table, chart=False),
        FenceKind("models-table", parse_models_table, _draw_models_table, chart=False),
        FenceKind("whats-new", notes_pages.parse_whats_new, notes_pages.draw_whats_new, chart=False),
        FenceKind("tags-index", notes_pages.parse_tags_index, notes_pages.draw_tags_index, chart=False),
        FenceKind("training-memory", memory_notes.parse_training_memory, _draw_training_memory, chart=True),
        FenceKind("memory-fit-table", memory_notes.parse_memory_fit_table, _draw_memory_fit_table, chart=False),
        FenceKind("inference", inference_notes.parse_inference_chart, _draw_inference, chart=True),
        FenceKind("inference-table", inference_notes.parse_inference_table, _draw_inference_table, chart=False),
    )
}
CHART_KINDS: tuple[str, ...] = tuple(name for name, kind in FENCE_KINDS.items() if kind.chart)


def _same(value: _T) -> _T:
    return value


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
