"""What a fence kind is: a name, a parser and a drawer (:class:`FenceKind`), and what a drawer may ask
of the build (:class:`DrawSite`).

A parser ``parse(fence, where, presets_by_id) -> request`` reads the body
(:mod:`ainotes.fences.body`) and raises :class:`~ainotes.base.errors.InputError` as
``where:line: ...``; it draws nothing, so the build can parse a page's fences to learn what they
use (:mod:`ainotes.html.backlinks`). A drawer ``draw(site, request, page) -> Drawn`` turns the
request into HTML, asking ``site`` only for what :class:`DrawSite` lists.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from ainotes.core.hardware import Preset
from ainotes.core.links import Link
from ainotes.core.models import ModelPreset
from ainotes.fences.body import Fence
from ainotes.html.page import Chart, Drawn, Page
from ainotes.render import RenderSession


class DrawSite(Protocol):
    """The build, as a drawer sees it (:class:`ainotes.build.site.NotesSite` is one)."""

    presets_by_id: dict[str, Preset]
    render_progress: Callable[[int, int], None] | None
    renders: RenderSession  # the build's renderer: its cache, queue and worker pool
    embeds_later: bool  # the embed files are written after the pages are served (mkdocs serve)

    def links(self) -> dict[str, Link]: ...

    def models(self) -> dict[str, ModelPreset]: ...

    def new_chart(self, page: Page, kind: str, stem: str, chart_id: str | None, title: str) -> Chart: ...

    def register(self, chart: Chart, page: Page, line: int) -> None: ...

    def chart_figure(self, chart: Chart, page: Page, inputs: object, draw: Callable[[], Callable[[], str]],
                     scripts: tuple[str, ...] = ()) -> Drawn: ...

    def figure_html(self, make: Callable[[], str]) -> str: ...

    def downloads(self, chart: Chart, page: Page) -> dict[str, str]: ...

    def embed_urls(self, chart: Chart, page: Page) -> dict[str, str]: ...


@dataclass(frozen=True)
class FenceKind:
    """One fence kind: its name in Markdown (```` ```roofline ````), its parser and its drawer.

    ``chart``: it draws a chart with embed files (listed in the manifest); ``vega``: the chart is
    drawn live by the Vega runtime, so the site ships ``assets/ainotes/vega.min.js``; ``pure``: its
    HTML is a function of its body and the presets alone (no page, chart, notes or other file), so a
    rebuild whose presets are unchanged takes the HTML it drew before (``mkdocs serve``)."""

    name: str
    parse: Callable[[Fence, str, Mapping[str, Preset]], Any]
    draw: Callable[[DrawSite, Any, Page], Drawn]
    chart: bool = False
    vega: bool = False
    pure: bool = False
