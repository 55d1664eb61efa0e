"""Turn notes pages into pages with charts: the pipeline behind ``hooks/notes.py``.

Knows nothing of MkDocs: it takes page text and paths and returns page text,
so another generator could drive it. One :class:`NotesSite` lives for one build.

Page flow:

1. :meth:`NotesSite.page_markdown` replaces each chart fence, table fence and
   math span with a slot token (plain letters and digits, which Markdown leaves
   alone) and each inline figure ``{{ ... }}`` with its text.
2. :meth:`NotesSite.page_content` swaps the tokens in the page's HTML for the
   rendered figures and adds the chart scripts to pages that have charts.
3. :meth:`NotesSite.write_outputs` writes the shared assets, ``embed/`` files
   and ``embed/manifest.json`` into the built site.
"""

from __future__ import annotations

import html
import json
import re
import shutil
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path, PurePosixPath

from ainotes import collectives, directives, figures, tables
from ainotes.errors import InputError
from ainotes.files import write_atomic
from ainotes.hardware import Preset, load_presets

ASSET_URL = "assets/ainotes"
EMBED_DIR = "embed"
_PACKAGE_ASSETS = ("charts.css", "collectives.css", "collectives.js", "notes.css", "vega-charts.js")
_RUNTIME_FILE = "vega.min.js"
CHART_FENCES = ("roofline", "collective")


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

    def file_name(self, kind: str) -> str:
        return f"{self.chart_id}{'-dark.svg' if kind == 'svg-dark' else '.' + kind}"


@dataclass
class _PageState:
    src: str
    url: str
    slots: dict[str, str] = field(default_factory=dict)  # filled in by page_content
    charts: dict[str, str] = field(default_factory=dict)  # filled in by page_output
    has_roofline: bool = False
    has_collective: bool = False


class NotesSite:
    """Build-wide state: the presets, the charts met so far, the pages' slots."""

    def __init__(self, presets_dir: str | Path):
        self.presets: tuple[Preset, ...] = load_presets(presets_dir)
        self.presets_by_id = {preset.id: preset for preset in self.presets}
        self.charts: dict[str, Chart] = {}
        self._pages: dict[str, _PageState] = {}

    # -- step 1 ------------------------------------------------------------

    def page_markdown(self, markdown: str, page_src: str, page_url: str) -> str:
        """Replace fences, inline figures and math in one page's Markdown."""
        state = _PageState(src=page_src, url=page_url)
        self._pages[page_src] = state
        for chart in [c for c in self.charts.values() if c.page_src == page_src]:
            del self.charts[chart.chart_id]  # page rebuilt by `mkdocs serve`
        out = []
        for part in directives.split_fences(markdown):
            if isinstance(part, directives.Fence):
                try:
                    html_text = self._fence_html(part, state)
                except InputError as exc:  # every message names the page and the fence's line
                    message = str(exc)
                    if not message.startswith(f"{page_src}:"):
                        message = f"{page_src}:{part.start_line}: {message}"
                    raise InputError(message) from None
                token = self._slot(state, html_text, chart=part.kind in CHART_FENCES)
                out.append(f"\n{part.indent}{token}\n\n")
            else:
                out.append(self._inline(part, state))
        return "".join(out)

    def _inline(self, segment: directives.Segment, state: _PageState) -> str:
        pieces, cursor = [], 0
        for item in directives.find_inline(segment, state.src):
            pieces.append(segment.text[cursor : item.start])
            where = f"{state.src}:{item.line}"
            try:
                if item.kind == "figure":
                    pieces.append(figures.markdown_text(figures.evaluate(item.body, self.presets_by_id)))
                else:
                    pieces.append(self._slot(state, figures.mathml(item.body, block=item.kind == "block-math")))
            except InputError as exc:
                raise InputError(f"{where}: {exc}") from None
            cursor = item.end
        pieces.append(segment.text[cursor:])
        return "".join(pieces)

    def _fence_html(self, fence: directives.Fence, state: _PageState) -> str:
        where = state.src
        known = tuple(self.presets_by_id)
        if fence.kind == "roofline":
            return self._roofline_html(directives.parse_roofline(fence, where, known), fence, state)
        if fence.kind == "collective":
            return self._collective_html(directives.parse_collective(fence, where), fence, state)
        if fence.kind == "presets-table":
            request = directives.parse_presets_table(fence, where, known)
            return tables.presets_table_html([self.presets_by_id[i] for i in request.preset_ids])
        if fence.kind == "mfu-table":
            request = directives.parse_mfu_table(fence, where, known)
            return tables.mfu_table_html(request.jobs, self.presets_by_id)
        if fence.kind == "kernels-table":
            request = directives.parse_kernels_table(fence, where, known)
            return tables.kernels_table_html(request.kernels, [self.presets_by_id[i] for i in request.preset_ids])
        if fence.kind == "preset-check":
            return tables.preset_check_html(directives.check_preset_example(fence, where))
        raise InputError(f"{where}:{fence.start_line}: unknown fence kind {fence.kind!r}")

    def _register(self, chart: Chart, fence: directives.Fence) -> Chart:
        other = self.charts.get(chart.chart_id)
        if other is not None:
            raise InputError(
                f"{chart.page_src}:{fence.start_line}: chart id {chart.chart_id!r} is already used "
                f"on {other.page_src}; give this fence its own 'id'"
            )
        self.charts[chart.chart_id] = chart
        return chart

    def _default_id(self, state: _PageState, stem: str) -> str:
        page = PurePosixPath(state.src).with_suffix("").as_posix().replace("/", "-").lower()
        base = re.sub(r"[^a-z0-9]+", "-", f"{page}-{stem}").strip("-")
        candidate, n = base, 2
        while candidate in self.charts:
            candidate, n = f"{base}-{n}", n + 1
        return candidate

    def _downloads(self, chart: Chart, state: _PageState) -> dict[str, str]:
        prefix = relative_prefix(state.url)
        return {kind: f"{prefix}{EMBED_DIR}/{chart.file_name(kind)}" for kind in chart.files}

    def _roofline_html(self, request: directives.RooflineRequest, fence: directives.Fence, state: _PageState) -> str:
        from ainotes import render
        from ainotes.charts import embed
        from ainotes.charts import roofline as roofline_chart

        presets = [self.presets_by_id[i] for i in request.preset_ids]

        def spec(theme: str) -> dict:
            return roofline_chart.roofline_spec(
                presets, kernels=request.kernels, sparsity=request.sparsity, title=request.title, theme=theme
            )

        light, dark = spec("light"), spec("dark")
        svg_dark = roofline_chart.dark_svg(render.svg(light))  # no second Vega render
        title = request.title or "Roofline: " + ", ".join(p.name for p in presets)
        chart = self._register(
            Chart(request.chart_id or self._default_id(state, "roofline"), "roofline", title, state.url, state.src),
            fence,
        )
        chart.about = {"presets": [p.id for p in presets], "sparsity": request.sparsity}
        chart.files = {
            "svg": lambda: render.svg(light),
            "svg-dark": lambda: svg_dark,
            "png": lambda: render.png(light),
            "json": lambda: _json_text(light),
            "html": lambda: render.standalone_html(light, title=title),
        }
        state.has_roofline = True
        return embed.interactive_figure_html(
            chart.chart_id,
            light,
            dark,
            caption_html=roofline_chart.caption_html(presets, request.sparsity),
            downloads=self._downloads(chart, state),
            svg_dark=svg_dark,
        )

    def _collective_html(self, request: directives.CollectiveRequest, fence: directives.Fence, state: _PageState) -> str:
        from ainotes.charts import collective as collective_chart
        from ainotes.charts import embed

        run = collectives.simulate(request.op, request.ranks, request.root)
        title = request.title or run.title
        chart = self._register(
            Chart(request.chart_id or self._default_id(state, request.op), "collective", title, state.url, state.src),
            fence,
        )
        chart.about = {"op": request.op, "ranks": request.ranks, "root": run.root}
        chart.files = {
            "svg": lambda: collective_chart.animated_svg(run, title=title),
            "json": lambda: _json_text(collectives.run_to_json(run)),
            "html": lambda: collective_chart.standalone_html(run, title=title),
        }
        state.has_collective = True
        return (
            '<div class="ainotes-collective">'
            f"{collective_chart.stepper_html(run, chart.chart_id, title=title)}"
            f"{collective_chart.table_html(run, title=title)}"
            f"{embed.downloads_html(chart.chart_id, self._downloads(chart, state), title=title)}"
            "</div>"
        )

    def _slot(self, state: _PageState, html_text: str, *, chart: bool = False) -> str:
        number = len(state.slots) + len(state.charts)
        token = f"ainotesslot{number:04d}x{zlib.crc32(state.src.encode()):08x}"
        (state.charts if chart else state.slots)[token] = html_text
        return token

    # -- step 2 ------------------------------------------------------------

    def page_content(self, html_text: str, page_src: str) -> str:
        """Put tables and math in place of their slot tokens, mark where charts go, add chart scripts.

        Charts stay tokens until :meth:`page_output`, inside an element that the search
        index skips: the index never holds SVG text or tick labels, and Material's search
        parser never walks the charts' markup.
        """
        state = self._pages.get(page_src)
        if state is None or not (state.slots or state.charts):
            return html_text
        for token, fragment in state.slots.items():
            html_text = _replace_token(html_text, token, fragment)
        for token in state.charts:
            html_text = _replace_token(
                html_text, token, f'<section class="ainotes-figure" data-search-exclude>{token}</section>'
            )
        prefix = relative_prefix(state.url)
        scripts = []
        if state.has_roofline:
            scripts += [_RUNTIME_FILE, "vega-charts.js"]
        if state.has_collective:
            scripts.append("collectives.js")
        tags = "".join(f'<script src="{prefix}{ASSET_URL}/{name}"></script>' for name in scripts)
        return html_text + tags

    def page_output(self, page_html: str, page_src: str) -> str:
        """The whole rendered page with its charts in place."""
        state = self._pages.get(page_src)
        if state is None:
            return page_html
        for token, fragment in state.charts.items():
            page_html = page_html.replace(token, fragment)
        return page_html

    # -- step 3 ------------------------------------------------------------

    def write_outputs(self, site_dir: str | Path) -> None:
        """Write assets, every chart's embed files and the manifest into ``site_dir``."""
        from ainotes import render

        site = Path(site_dir)
        assets = site / ASSET_URL
        assets.mkdir(parents=True, exist_ok=True)
        package_assets = resources.files("ainotes") / "assets"
        for name in _PACKAGE_ASSETS:
            with resources.as_file(package_assets / name) as path:
                shutil.copyfile(path, assets / name)
        if any(chart.kind == "roofline" for chart in self.charts.values()):
            write_atomic(assets / _RUNTIME_FILE, render.runtime_js())
        embed_dir = site / EMBED_DIR
        embed_dir.mkdir(parents=True, exist_ok=True)
        manifest = []
        for chart in sorted(self.charts.values(), key=lambda c: c.chart_id):
            files = {}
            for kind, make in chart.files.items():
                name = chart.file_name(kind)
                write_atomic(embed_dir / name, make())
                files[kind] = name
            manifest.append(
                {"id": chart.chart_id, "kind": chart.kind, "title": chart.title, "page": chart.page_url,
                 "source": chart.page_src, **chart.about, "files": files}
            )
        write_atomic(embed_dir / "manifest.json", _json_text({"charts": manifest}))


def relative_prefix(page_url: str) -> str:
    """The way back to the site root from a page URL: ``"roofline/"`` → ``"../"``."""
    depth = page_url.strip("/").count("/") + 1 if page_url.strip("/") else 0
    if page_url and not page_url.endswith("/"):
        depth -= 1  # "page.html" sits in its folder
    return "../" * depth


def _replace_token(html_text: str, token: str, fragment: str) -> str:
    """``fragment`` in place of ``token``, or of the paragraph Markdown wrapped around it."""
    block = f"<p>{token}</p>"
    return html_text.replace(block, fragment) if block in html_text else html_text.replace(token, fragment)


def _json_text(data: object) -> str:
    return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
