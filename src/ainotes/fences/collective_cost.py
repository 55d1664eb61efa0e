"""``collective-cost``: the live chart of a collective's time against message size for each algorithm
under the α–β model, with selects for the operation, the ranks and the link.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ainotes.base.errors import InputError
from ainotes.base.textcheck import short
from ainotes.charts import cost as cost_chart
from ainotes.core import collective_cost as cc
from ainotes.core.collectives import check_op
from ainotes.core.hardware import Preset
from ainotes.fences.body import BodyReader, Fence, load_body
from ainotes.fences.kind import DrawSite, FenceKind
from ainotes.fences.measured_cost import draw_measured_cost, parse_measured_run
from ainotes.html.figure import draw_vega_figure
from ainotes.html.page import Drawn, Page
from ainotes.inline.cost import link_for


@dataclass(frozen=True)
class CollectiveCostRequest:
    op: str
    ranks: int
    link_id: str
    title: str | None
    chart_id: str | None
    link_where: str = ""  # page:line of the 'link' key (the link id is checked when drawn)
    measured: Any = None  # ainotes.fences.measured_cost.MeasuredRun: an nccl-tests log over the model


def parse_collective_cost(
    fence: Fence, where: str, presets: Mapping[str, Preset] | None = None
) -> CollectiveCostRequest:
    """``collective-cost`` fence: op (required), ranks (2 to 1024, under the model's one rule,
    :func:`ainotes.core.collective_cost.check_ranks`; default 8),
    link (a link id; default nvlink-4), title, id. The link id is checked when the chart is drawn. Or
    ``measured``, an nccl-tests log under docs/ over the model of the link; op and ranks then come from
    the log (given, they must match it)."""

    data, lines = load_body(fence, where)
    reader = BodyReader(fence, where, data, ("op", "ranks", "link", "title", "id", "measured"), lines)
    given = "measured" in data  # a measured run: the log says the op and ranks (:mod:`.measured_cost`)
    op = reader.checked(check_op, "op", data.get("op")) if "op" in data or not given else None
    ranks = reader.checked(cc.check_ranks, "ranks", data.get("ranks", 8))
    measured = parse_measured_run(reader, data, op, ranks if "ranks" in data else None)
    link_id = data.get("link", "nvlink-4")
    if not isinstance(link_id, str) or not link_id:
        reader.fail("link", f"'link' must be a link id such as nvlink-4: {short(link_id)}")
    return CollectiveCostRequest(op=str(op or ""), ranks=ranks, link_id=link_id, title=reader.text("title"),
                                 chart_id=reader.chart_id(), link_where=reader.place("link"), measured=measured)


def _draw_collective_cost(site: DrawSite, request: CollectiveCostRequest, page: Page) -> Drawn:
    if request.measured is not None:  # an nccl-tests log's sizes over the model of the link
        return draw_measured_cost(site, request, page)
    links = tuple(site.links().values())
    try:
        link = link_for(site.links(), request.link_id)
    except InputError as exc:
        raise InputError(f"{request.link_where}: {exc}" if request.link_where else str(exc)) from None
    title = request.title or cost_chart.default_title(request.op)
    chart = site.new_chart(page, "collective-cost", f"{request.op}-cost", request.chart_id, title)
    chart.about = {"op": request.op, "ranks": request.ranks, "link": link.id}

    return draw_vega_figure(site, chart, page, (request, links), lambda: cost_chart.cost_figure(
        links, op=request.op, ranks=request.ranks, link=link, title=request.title, chart_title=title))


KIND = FenceKind("collective-cost", parse_collective_cost, _draw_collective_cost, chart=True, vega=True)
