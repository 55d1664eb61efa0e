"""A ``collective-cost`` fence's ``measured:`` key: an nccl-tests log shipped under ``docs/``, its sizes drawn
over the α–β model of the fence's link, with the model's error per size in a table and the α and β fitted
to the run beside the preset's.

The run decides the collective and the rank count: a fence whose ``op`` or ``ranks`` differs from the log's
is refused (it would hold the model of one collective against a run of another); ``op`` and ``ranks`` fill
in what a log does not say. The figures are those of ``ainotes measured FILE --link L --json``.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from html import escape
from typing import Any

from ainotes.base.errors import InputError
from ainotes.charts import measured_cost
from ainotes.fences.body import BodyReader
from ainotes.fences.kind import DrawSite
from ainotes.fences.measured import MeasuredRequest, docs_path, download_url
from ainotes.fences.measured_roofline import read_shipped
from ainotes.html import tables
from ainotes.html.figure import draw_vega_figure
from ainotes.html.page import Drawn, Page
from ainotes.inline.cost import link_for


@dataclass(frozen=True)
class MeasuredRun:
    """The ``measured`` log, what the fence says of it (``None``: not said), and the key's page and line."""

    file: str
    op: str | None
    ranks: int | None
    where: str


def parse_measured_run(reader: BodyReader, data: dict[str, Any], op: str | None, ranks: int | None
                       ) -> MeasuredRun | None:
    """``measured:``, checked (a path under ``docs/``); ``None`` when the key is absent."""
    if "measured" not in data:
        return None
    file = docs_path(reader, "measured")
    line = reader.lines.get("measured")
    page_line = reader.fence.start_line if line is None else reader.fence.start_line + 1 + line
    return MeasuredRun(file, op, ranks, f"{reader.where}:{page_line}")


def read_run(site: DrawSite, run: MeasuredRun, link_id: str) -> dict[str, Any]:
    """The record of the log against the link, refused where the fence and the log disagree."""
    def read(ranks: int | None, op: str | None) -> dict[str, Any]:
        return read_shipped(site, MeasuredRequest(run.file, "nccl-tests", link_id, (), ranks, op, None, run.where))

    try:  # the log's own op and ranks first, so that a fence that says otherwise is told so below
        record = read(None, None)
    except InputError:
        if run.op is None and run.ranks is None:
            raise
        record = read(run.ranks, run.op)  # the fence fills in what the log does not say
    for key, said in (("op", run.op), ("ranks", run.ranks)):
        if said is not None and record[key] is not None and record[key] != said:
            raise InputError(f"{run.where}: {run.file} is a {record['ranks']}-rank {record['op']}, but the fence says "
                             f"{key}: {said}: the chart would hold the model of another collective against this run; "
                             f"drop '{key}' (the chart takes the log's) or set it to {record[key]}")
    if record["ranks"] is None or record["op"] is None:
        missing = "ranks" if record["ranks"] is None else "op"
        raise InputError(f"{run.where}: {run.file} does not say its {missing} (no command line or device lines): "
                         f"give '{missing}' in the fence")
    if not record.get("model"):
        notes = "; ".join(record["notes"]) or "no size the model takes"
        raise InputError(f"{run.where}: {run.file}: the α–β model cannot be held against this run ({notes})")
    return record


def error_table(record: dict[str, Any]) -> str:
    """One row per size: measured time and busbw, the model's time, its algorithm and its error."""
    from ainotes.measurements import words as report

    busbw = {p["bytes"]: p["busbw_gbps"] for p in measured_cost.measured_points(record)}
    rows = [[escape(cell) for cell in (
        f"{row['bytes']:,}", report.figure(row["measured_s"] * 1e6, 6), report.figure(busbw.get(row["bytes"])),
        report.figure(row["time_s"] * 1e6), row["algorithm"], report.percent(row["error"]))]
        for row in record["model"]["rows"]]
    head = ["bytes", "measured µs", "busbw GB/s", "model µs", "model's algorithm", "error"]
    return tables.notes_table(head, rows, "ainotes-measured")


def draw_measured_cost(site: DrawSite, request: Any, page: Page) -> Drawn:
    """The measured cost chart of a ``collective-cost`` fence (``request``: its request)."""
    run: MeasuredRun = request.measured
    try:
        link = link_for(site.links(), request.link_id)
    except InputError as exc:
        raise InputError(f"{request.link_where or run.where}: {exc}") from None
    record = read_run(site, run, link.id)
    file_name = run.file.split("/", 1)[1]
    title = request.title or f"Measured {record['op']} against the α–β model"
    # Both figures come from one build of the specs, made only when a chart has no kept drawing.
    figures = functools.cache(lambda: measured_cost.measured_cost_figures(record, link, title=title,
                                                                          file_name=file_name))
    drawn = []
    for index, suffix in enumerate(("", "-busbw")):
        chart_id = request.chart_id + suffix if request.chart_id else None
        heading = title if index == 0 else f"{title}: bus bandwidth"
        chart = site.new_chart(page, "collective-cost", f"measured-{record['op']}-cost{suffix}", chart_id, heading)
        chart.about = {"op": record["op"], "ranks": record["ranks"], "link": link.id, "measured": run.file}
        drawn.append(draw_vega_figure(site, chart, page, (request, link, record, index),
                                      functools.partial(lambda i: figures()[i], index)))
    download = (f'<a href="{escape(download_url(run.file, page), quote=True)}" download>'
                f'{escape(file_name)}</a>')
    below = (f'<div class="ainotes-measured">{error_table(record)}<ul class="ainotes-measured__summary">'
             f'<li>The raw file: {download}.</li></ul></div>')
    if drawn[1].chart is not None:  # the page registers the chart a fence returns; the second one here
        site.register(drawn[1].chart, page, int(run.where.rsplit(":", 1)[1]))
    return Drawn(drawn[0].html + drawn[1].html + below, drawn[0].chart, drawn[0].scripts)
