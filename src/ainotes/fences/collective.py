"""``collective``: a stepper of one collective primitive over a number of ranks, as SVG frames.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from ainotes.base.textcheck import short
from ainotes.charts import collective as collective_chart
from ainotes.core import collectives
from ainotes.core.collectives import MAX_RANKS, MIN_RANKS, RING_OPS, check_op
from ainotes.core.hardware import Preset
from ainotes.fences.body import BodyReader, Fence, load_body
from ainotes.fences.kind import DrawSite, FenceKind
from ainotes.html import embed
from ainotes.html.page import Drawn, Page, embed_json_bytes


@dataclass(frozen=True)
class CollectiveRequest:
    op: str
    ranks: int
    root: int
    title: str | None
    chart_id: str | None
    schedule: str = "logical"  # "ring": the ring algorithm step by step (all-reduce, reduce-scatter, all-gather)


def parse_collective(fence: Fence, where: str, presets: Mapping[str, Preset]) -> CollectiveRequest:
    """``collective`` fence: op, ranks (default 4), root (default 0), schedule (logical or ring), title, id."""
    data, lines = load_body(fence, where)
    reader = BodyReader(fence, where, data, ("op", "ranks", "root", "schedule", "title", "id"), lines)
    op = data.get("op")
    op = reader.checked(check_op, "op", op)
    ranks = reader.integer("ranks", 4, MIN_RANKS, MAX_RANKS)
    root = reader.integer("root", 0, 0, ranks - 1)
    schedule = data.get("schedule", "logical")
    if schedule not in ("logical", "ring"):
        reader.fail("schedule", f"'schedule' must be logical or ring: {short(schedule)}")
    if schedule == "ring" and op not in RING_OPS:
        reader.fail("schedule", f"'schedule: ring' is drawn for {', '.join(RING_OPS)} only, not {op}")
    return CollectiveRequest(op=op, ranks=ranks, root=root, title=reader.text("title"), chart_id=reader.chart_id(),
                             schedule=schedule)


def _draw_collective(site: DrawSite, request: CollectiveRequest, page: Page) -> Drawn:
    run = collectives.simulate(request.op, request.ranks, request.root, schedule=request.schedule)
    title = request.title or run.title
    chart = site.new_chart(page, "collective", request.op, request.chart_id, title)
    chart.about = {"op": request.op, "ranks": request.ranks, "root": run.root, "schedule": run.schedule}

    def draw() -> Callable[[], str]:

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


KIND = FenceKind("collective", parse_collective, _draw_collective, chart=True)
