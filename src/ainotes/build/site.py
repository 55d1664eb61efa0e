"""One build's charts and tables: the state behind :mod:`ainotes.markdown.extension` and ``hooks/notes.py``.

Knows nothing of MkDocs or of Markdown's grammar: the extension decides what is a fence, an inline
figure or math and hands the text here. A fence goes to its kind (:data:`ainotes.fences.registry.FENCE_KINDS`:
its module parses and draws it), an inline form to :mod:`ainotes.inline.figures`; this module remembers
every chart for the embed files and the manifest. One :class:`NotesSite` lives for one build, and
is the :class:`~ainotes.fences.kind.DrawSite` the drawers see.
"""

from __future__ import annotations

import functools
import re
import secrets
import shutil
from collections import Counter
from collections.abc import Callable, Mapping
from html import escape
from importlib import resources
from pathlib import Path, PurePosixPath
from typing import TypeVar

from ainotes import render
from ainotes.base.errors import InputError, PresetFileError
from ainotes.base.files import write_atomic
from ainotes.base.publish import PREVIEW_SITE_URL
from ainotes.build.kept import KeptBetweenBuilds, on_disk
from ainotes.core.hardware import Preset
from ainotes.core.links import Link
from ainotes.core.models import ModelPreset
from ainotes.fences import body as fence_body
from ainotes.fences.kind import FenceKind
from ainotes.fences.registry import FENCE_KINDS, VEGA_KINDS
from ainotes.html.page import (
    ASSET_URL,
    EMBED_DIR,
    RUNTIME_FILE,
    Chart,
    Drawn,
    Page,
    embed_json_bytes,
    figure_section,
    relative_prefix,
)
from ainotes.inline import figures
from ainotes.notes.meta import CatalogueSource
from ainotes.notes.settings import NotesSettings, presets_only
from ainotes.presets.links import default_links_dir, load_links
from ainotes.presets.models import default_models_dir, load_models

_PACKAGE_ASSETS = ("charts.css", "collectives.css", "collectives.js", "notes.css", "vega-charts.js",
                   "THIRD_PARTY_NOTICES.txt", "notes-meta.css", "memory-chart.css",
                   *(f"fonts/ainotesSans-{style}.ttf" for style in ("Regular", "Bold", "Italic", "BoldItalic")))
DEFERRED_FIGURE = re.compile(r"ainotesfigure\d{6}x[0-9a-f]{8}")  # a deferred figure's placeholder (figure_html)
_T = TypeVar("_T")


class NotesSite:
    """Build-wide state: the presets and every chart met so far."""

    def __init__(self, settings: NotesSettings | str | Path, *, error_type: Callable[[str], Exception] = InputError,
                 defer_figures: bool = False, render_progress: Callable[[int, int], None] | None = None,
                 warn: Callable[[str], None] | None = None, renders: render.RenderSession | None = None,
                 errors_on_page: Callable[[str], None] | None = None, kept: KeptBetweenBuilds | None = None,
                 embeds_later: bool = False):
        """``settings``: the build's (:func:`ainotes.notes.settings.notes_settings`, built once by the
        driver), or a presets folder alone for a build of loose pages (no notes catalogue).
        ``error_type``: the exception a driver wants for a user's mistake (``hooks/notes.py``: MkDocs'
        ``PluginError``). ``defer_figures``: a driver that calls :meth:`finish_page` on every page has
        chart figures drawn there, so that the renders of every page run meanwhile, in parallel
        (:func:`ainotes.render.prefetch`), instead of one page at a time. ``render_progress(done, total)``
        hears how far the renders are, every few seconds, when there are many. ``warn`` hears the notes'
        warnings (a shallow git history). ``renders``: the renderer the drawers use (default: the
        process's own, :data:`ainotes.render.SESSION`). ``errors_on_page(line)``: a driver that previews
        (``mkdocs serve``) has a fence's, form's or formula's error shown as a box where it stands on the
        page, and hears its line; without it (every build) the error stops the build. ``kept``: what earlier
        builds of this process read (:class:`~ainotes.build.kept.KeptBetweenBuilds`, owned by a driver that
        builds again, as ``mkdocs serve`` does); default: this build's own. ``embeds_later``: a driver that
        serves the pages before the embed files are written (``mkdocs serve``: :mod:`ainotes.build.deferred`)
        gets the embed files' writing back from :meth:`write_outputs` to run once the pages are served, and
        a chart drawn anew has its PNG rendered then, not with the page's stills."""
        self.settings = settings if isinstance(settings, NotesSettings) else presets_only(settings)
        self.presets_dir = self.settings.presets_dir
        self.kept = kept if kept is not None else KeptBetweenBuilds()
        loaded = self._loaded = self.kept.presets(self.presets_dir)  # every GPU, link and model file
        self.presets: tuple[Preset, ...] = loaded.presets
        self.presets_by_id = {preset.id: preset for preset in self.presets}
        self.presets_stamp = loaded.state  # the preset files' sizes and times when they were read
        self.presets_digest = loaded.digest  # and their bytes' digest
        # The notes' catalogue (dates, tags, backlinks), read when the first page asks for it.
        self.notes = (CatalogueSource(self.settings, warn, kept=self.kept.catalogue)
                      if self.settings.docs_dir is not None else None)
        self.error_report = errors_on_page
        self.errors_on_page = errors_on_page is not None
        self.told_site_assets = False  # a build without hooks was told what ainotes site-assets writes
        self._links: dict[str, Link] | None = dict(loaded.links) if loaded.links is not None else None
        self._models: dict[str, ModelPreset] | None = dict(loaded.models) if loaded.models is not None else None
        # How many charts this build drew, copied from a kept drawing, or drew again for lost files.
        self.drawing_counts: Counter[str] = Counter()
        self.charts: dict[str, Chart] = {}
        self.error_type = error_type
        self._announced: tuple[str, str, int] | None = None
        self.defer_figures = defer_figures
        self.render_progress = render_progress
        self._deferred: dict[str, Callable[[], str]] = {}
        self._nonce = secrets.token_hex(4)
        self.embeds_later = embeds_later
        self.renders = renders if renders is not None else render.SESSION
        self.renders.forget_queued()  # an earlier build in this process may have stopped half-way

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
        fence = fence_body.Fence(kind, body, line + page.line_offset)
        try:
            if fence_kind.pure:  # its HTML depends on the body and the presets alone, not on the line
                return Drawn(self.kept.for_presets(("fence", f"{kind}\n{body}"), self._loaded, lambda: on_disk(
                    "pure-fence", {"kind": kind, "body": body, "presets": self.presets_digest},
                    functools.partial(self._pure_html, fence_kind, fence, page))))
            return self._parse_and_draw(fence_kind, fence, page)
        except PresetFileError:
            raise  # it names the file and line of its key; the page that loaded it is no place for it
        except InputError as exc:
            message = str(exc)
            if not message.startswith(f"{page.src}:"):  # raised while drawing, not while parsing
                message = f"{page.where(line)}: {message}"
            raise InputError(message) from None

    def _parse_and_draw(self, kind: FenceKind, fence: fence_body.Fence, page: Page) -> Drawn:
        return kind.draw(self, kind.parse(fence, page.src, self.presets_by_id), page)

    def _pure_html(self, kind: FenceKind, fence: fence_body.Fence, page: Page) -> str:
        drawn = self._parse_and_draw(kind, fence, page)
        if drawn.chart is not None or drawn.scripts:
            raise TypeError(f"a pure fence kind ({kind.name}) drew a chart or needs scripts: it is not pure")
        return drawn.html

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
            return self.kept.for_presets(("figure", body), self._loaded, lambda: on_disk(
                "inline-figure", {"body": body, "presets": self.presets_digest},
                lambda: figures.evaluate(body, self.presets_by_id, self.links, self.models)))
        except PresetFileError:
            raise
        except InputError as exc:
            raise InputError(f"{page.where(line)}: {exc}") from None

    def math(self, latex: str, page: Page, line: int | None, *, block: bool) -> str:
        """MathML for ``$latex$`` (or a ``$$`` block)."""
        try:
            return self.kept.formula(latex, block, lambda: figures.mathml(latex, block=block))
        except InputError as exc:
            raise InputError(f"{page.where(line)}: {exc}") from None

    def error_html(self, message: str, *, inline: bool = False) -> str:
        """A user's mistake shown where it stands (``errors_on_page``), its line told to the driver."""
        if self.error_report is not None:
            self.error_report(message)
        text = escape(message)
        if inline:
            return f'<span class="ainotes-error" role="alert">⚠ <code>{text}</code></span>'
        return ('<div class="admonition failure ainotes-error" role="alert"><p class="admonition-title">Not drawn: '
                f'a build stops here (this preview shows the error in its place)</p><p><code>{text}</code></p></div>')

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

        return DEFERRED_FIGURE.sub(draw, html_text)

    def links(self) -> dict[str, Link]:
        """The interconnect presets in ``<presets>/links``, loaded when a page first needs them."""
        if self._links is None:
            try:
                self._links = {link.id: link for link in load_links(default_links_dir(self.presets_dir))}
            except InputError as exc:
                raise _file_error(exc) from None
        return self._links

    def models(self) -> dict[str, ModelPreset]:
        """The model presets in ``<presets>/models``, loaded when a page first needs them."""
        if self._models is None:
            try:
                self._models = {model.id: model for model in load_models(default_models_dir(self.presets_dir))}
            except InputError as exc:
                raise _file_error(exc) from None
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

        # The site's address is part of it: the embed snippets name the files by it (embed_urls).
        key = drawings.drawing_key(chart.kind, {"id": chart.chart_id, "title": chart.title, "url": page.url,
                                                "src": page.src, "links_from": page.links_from,
                                                "site_url": self.settings.site_url or ""}, inputs)
        kept = drawings.load_figure(key)
        make: Callable[[], str]
        self.drawing_counts["kept" if kept is not None else "drawn"] += 1
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
        return Drawn(figure_section(self.figure_html(make)), chart, scripts=scripts)

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
        """Each embed file's URL as the embed snippets write it: absolute, from the address the site
        is published at (``site_url``), so a snippet pasted into another site works as it stands;
        without one (or with the local preview's), relative to the page's own URL, as the reader's
        browser resolves it, and ``vega-charts.js`` makes it absolute. No generator rewrites it, as
        Zensical rewrites links."""
        base = self.settings.site_url
        if base and base.rstrip("/") != PREVIEW_SITE_URL.rstrip("/"):
            prefix = base.rstrip("/") + "/"
        else:
            prefix = relative_prefix(page.url)
        return {kind: f"{prefix}{EMBED_DIR}/{chart.file_name(kind)}" for kind in chart.files}

    # -- after the last page ----------------------------------------------------

    def embed_files(self, chart: Chart) -> Mapping[str, str | bytes]:
        """A chart's embed files by kind: from its kept drawing, else made now."""
        from ainotes.build import drawings

        if chart.kept_from is not None:
            kept = drawings.load_files(chart.kept_from, self.renders)
            if kept is not None:
                return kept
            if chart.redraw is not None:
                self.drawing_counts["redrawn"] += 1
                chart.redraw()  # the files entry went missing: draw the chart for its files, keep them again
                chart.kept_key = chart.kept_from
        return {kind: make() for kind, make in chart.files.items()}

    def write_outputs(self, site_dir: str | Path) -> Callable[[Callable[[], bool]], None] | None:
        """Write the assets into ``site_dir``, and every chart's embed files and the manifest (:meth:`write_embeds`),
        keeping the drawings made this build for the next (:mod:`ainotes.build.drawings`). With ``embeds_later``
        the embed files are not written here: what writes them (``write(stopped)``) is returned, for the
        driver to run after it has served the pages (:mod:`ainotes.build.deferred`)."""
        site = Path(site_dir)
        assets = site / ASSET_URL
        assets.mkdir(parents=True, exist_ok=True)
        package_assets = resources.files("ainotes") / "assets"
        for name in _PACKAGE_ASSETS:
            with resources.as_file(package_assets / name) as path:
                (assets / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, assets / name)
        if any(chart.kind in VEGA_KINDS for chart in self.charts.values()):  # the pages' live charts load it
            write_atomic(assets / RUNTIME_FILE, self.renders.runtime_js())
        if self.embeds_later:
            return functools.partial(self.write_embeds, site)
        self.write_embeds(site)
        return None

    def write_embeds(self, site_dir: str | Path, stopped: Callable[[], bool] | None = None) -> None:
        """Write every chart's embed files and ``embed/manifest.json`` into ``site_dir`` (renders still
        running are waited for first, reporting to the end). The charts drawn this build go first (their
        files are kept for the next build); ``stopped()`` true before a chart ends the writing there, the
        manifest unwritten (``mkdocs serve``: a new build is about to empty the folder)."""
        from ainotes.build import drawings

        self.renders.drain(progress=self.render_progress)
        embed_dir = Path(site_dir) / EMBED_DIR
        embed_dir.mkdir(parents=True, exist_ok=True)
        manifest = []
        for chart in sorted(self.charts.values(), key=lambda c: (c.kept_key is None, c.chart_id)):
            if stopped is not None and stopped():
                return
            files: dict[str, str] = {}
            contents = self.embed_files(chart)
            for kind, content in contents.items():
                files[kind] = chart.file_name(kind)
                write_atomic(embed_dir / files[kind], content)
            if chart.kept_key is not None:  # its figure was drawn and kept this build
                drawings.store_files(chart.kept_key, contents, self.renders)
            manifest.append(
                {"id": chart.chart_id, "kind": chart.kind, "title": chart.title, "page": chart.page_url,
                 "source": chart.page_src, **chart.about, "files": files}
            )
        manifest.sort(key=lambda entry: str(entry["id"]))
        write_atomic(embed_dir / "manifest.json", embed_json_bytes({"charts": manifest}))


def _same(value: _T) -> _T:
    return value


def _file_error(exc: InputError) -> InputError:
    """A preset file's own mistake as a :class:`PresetFileError` (it names the file and the key's line, and
    no page prefixes it); a missing folder stays a page's error (the page that needs it is the place)."""
    place = str(exc).split(": ", 1)[0]
    return PresetFileError(str(exc)) if place.split(":", 1)[0].endswith((".yaml", ".yml")) else exc
