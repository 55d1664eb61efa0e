"""``collective-cost``: the live chart of a collective's time against message size for each algorithm
under the α–β model, with selects for the operation, the ranks and the link.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Literal

from ainotes import render
from ainotes.base.textcheck import short
from ainotes.charts import cost as cost_chart
from ainotes.charts.cost import RANK_CHOICES
from ainotes.core import collective_cost as cc
from ainotes.core.collectives import check_op
from ainotes.core.hardware import Preset
from ainotes.fences.body import BodyReader, Fence, load_body
from ainotes.fences.kind import DrawSite, FenceKind
from ainotes.html import embed
from ainotes.html.page import RUNTIME_FILE, Drawn, Page, prefetch_renders, themed_chart_files
from ainotes.inline.cost import link_for


@dataclass(frozen=True)
class CollectiveCostRequest:
    op: str
    ranks: int
    link_id: str
    title: str | None
    chart_id: str | None


def parse_collective_cost(
    fence: Fence, where: str, presets: Mapping[str, Preset] | None = None
) -> CollectiveCostRequest:
    """``collective-cost`` fence: op (required), ranks (a power of two, 2 to 1024; default 8),
    link (a link id; default nvlink-4), title, id. The link id is checked when the chart is drawn."""

    data, lines = load_body(fence, where)
    reader = BodyReader(fence, where, data, ("op", "ranks", "link", "title", "id"), lines)
    op = reader.checked(check_op, "op", data.get("op"))
    ranks = reader.integer("ranks", 8, cc.MIN_RANKS, cc.MAX_RANKS)
    if ranks not in RANK_CHOICES:
        reader.fail("ranks", f"'ranks' must be a power of two from 2 to 1024 (the chart's choices): {ranks}")
    link_id = data.get("link", "nvlink-4")
    if not isinstance(link_id, str) or not link_id:
        reader.fail("link", f"'link' must be a link id such as nvlink-4: {short(link_id)}")
    return CollectiveCostRequest(op=str(op), ranks=ranks, link_id=link_id, title=reader.text("title"),
                                 chart_id=reader.chart_id())


def _draw_collective_cost(site: DrawSite, request: CollectiveCostRequest, page: Page) -> Drawn:

    links = tuple(site.links().values())
    link = link_for(site.links(), request.link_id)
    title = request.title or cost_chart.default_title(request.op)
    chart = site.new_chart(page, "collective-cost", f"{request.op}-cost", request.chart_id, title)
    chart.about = {"op": request.op, "ranks": request.ranks, "link": link.id}

    def draw() -> Callable[[], str]:

        def spec(theme: Literal["light", "dark"]) -> dict:
            return cost_chart.cost_spec(links, op=request.op, ranks=request.ranks, link_id=link.id,
                                        title=request.title, theme=theme)

        light, dark = spec("light"), spec("dark")
        narrow = (cost_chart.narrow_static(light), cost_chart.narrow_static(dark))
        prefetch_renders(site.render_progress, light, dark, dark_svg=True, narrow=narrow)
        caption = cost_chart.caption_html(request.op, request.ranks, link, links)
        chart.files = themed_chart_files(chart, light, dark, title=title, caption_html=caption)
        downloads, urls = site.downloads(chart, page), site.embed_urls(chart, page)
        return lambda: embed.interactive_figure_html(
            chart.chart_id, light, dark, caption_html=caption, downloads=downloads, embed_urls=urls, kind=chart.kind,
            narrow_svgs=(render.svg(narrow[0]), render.svg(narrow[1])), title=title,
        )

    return site.chart_figure(chart, page, (request, links), draw, scripts=(RUNTIME_FILE, "vega-charts.js"))


KIND = FenceKind("collective-cost", parse_collective_cost, _draw_collective_cost, chart=True, vega=True)
