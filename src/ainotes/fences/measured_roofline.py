"""A ``roofline`` fence's ``measured:`` key: an Nsight Compute CSV shipped under ``docs/``, each kernel drawn
at its achieved intensity and FLOP/s against the roofs of the fence's one GPU preset, with a table of the
fraction of its roof each kernel reached and a link to the raw file.

The figures are those of ``ainotes measured FILE --preset G --json`` for the same file
(:func:`ainotes.fences.measured.read_request` reads it with the same record builder).
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape
from typing import Any

from ainotes.base.errors import InputError
from ainotes.charts import measured_roofline
from ainotes.fences.body import BodyReader
from ainotes.fences.kind import DrawSite
from ainotes.fences.measured import (
    MeasuredRequest,
    docs_path,
    download_url,
    read_request,
    resolve_docs_file,
    summary_lines,
)
from ainotes.html import tables
from ainotes.html.figure import draw_vega_figure
from ainotes.html.page import Drawn, Page


@dataclass(frozen=True)
class MeasuredKernels:
    """The ``measured`` file (a path under ``docs/``) and the page and line of the key, for messages."""

    file: str
    where: str


def parse_measured_key(reader: BodyReader, data: dict[str, Any], preset_ids: tuple[str, ...]
                       ) -> MeasuredKernels | None:
    """``measured:``, checked: a path under ``docs/``, with one GPU named in ``presets`` and no modelled
    kernels beside (their roofs differ from the measured ones'); ``None`` when the key is absent."""
    if "measured" not in data:
        return None
    file = docs_path(reader, "measured")
    if "presets" not in data or len(preset_ids) != 1:
        given = ", ".join(preset_ids) if "presets" in data else "none"
        reader.fail("measured" if "presets" not in data else "presets",
                    "a roofline with 'measured' holds the kernels against one GPU's roofs: name it in "
                    f"'presets', e.g. presets: [h100] (given: {given})")
    for key in ("kernels", "model"):
        if key in data:
            reader.fail(key, f"'measured' and '{key}' do not go together: a measured roofline draws the file's "
                        "kernels only (draw the modelled ones in a roofline of their own)")
    line = reader.lines.get("measured")
    page_line = reader.fence.start_line if line is None else reader.fence.start_line + 1 + line
    return MeasuredKernels(file, f"{reader.where}:{page_line}")


def read_shipped(site: DrawSite, request: MeasuredRequest) -> dict[str, Any]:
    """The record of a measured file under ``docs/``; a missing one is named as the page names it."""
    if not resolve_docs_file(site, request.file).is_file():
        raise InputError(f"{request.where}: {request.file}: no such file (a measured file ships under docs/, "
                         "beside the note)")
    return read_request(site, request)


def _unbroken(part: str) -> str:
    """One precision of a mix as HTML that breaks only between its name and its share: ``FP64 vector`` and
    ``69 %`` each stay whole, so a narrow column reads ``FP64 vector / 69 % +`` and not ``69 / %``."""
    words = part.split(" ")
    if len(words) > 2 and words[-1] == "%":
        return f"{_unbroken(' '.join(words[:-2]))} {escape(words[-2])}&nbsp;%"
    return "&nbsp;".join(escape(word) for word in words)


def fraction_table(record: dict[str, Any]) -> str:
    """One row per kernel, numbered as the chart's points: its rate, intensity, roof and the fraction reached."""
    from ainotes.measurements import words as report

    rows = []
    for number, kernel in enumerate(record["kernels"], start=1):
        fraction = kernel.get("fraction_of_roof")
        reached = "—" if fraction is None else report.roof_percent(fraction)
        if kernel.get("above_roof"):
            reached += f" ({measured_roofline.ABOVE_ROOF_WORDS})"
        cells = [str(number), kernel["name"], kernel["held_to"],
                 report.figure(kernel["flops_per_s"] and kernel["flops_per_s"] / 1e12),
                 report.figure(kernel["intensity"]),
                 report.figure(kernel.get("roof_flops_per_s") and kernel["roof_flops_per_s"] / 1e12), reached]
        held_to = "&nbsp;+ ".join(_unbroken(part) for part in cells[2].split(" + "))
        rows.append([escape(cells[0]), tables.breakable_html(cells[1]), held_to, *(escape(cell) for cell in cells[3:])])
    head = ["#", "kernel", "held to", "TFLOP/s", "FLOP/byte", "roof TFLOP/s", "of roof"]
    return tables.notes_table(head, rows, "ainotes-measured", numeric_from=3)


def draw_measured_roofline(site: DrawSite, request: Any, page: Page) -> Drawn:
    """The measured roofline of a ``roofline`` fence (``request``: its :class:`RooflineRequest`)."""
    measured: MeasuredKernels = request.measured
    preset = site.presets_by_id[request.preset_ids[0]]
    record = read_shipped(site, MeasuredRequest(measured.file, "ncu", None, (preset.id,), None, None, None,
                                                measured.where))
    if not record["kernels"]:
        raise InputError(f"{measured.where}: {measured.file} lists no kernel launch")
    file_name = measured.file.split("/", 1)[1]
    title = request.title or f"Measured kernels on the {preset.name}'s roofline"
    chart = site.new_chart(page, "roofline", "measured-roofline", request.chart_id, title)
    chart.about = {"presets": [preset.id], "measured": measured.file}
    drawn = draw_vega_figure(site, chart, page, (request, preset, record), lambda: (
        measured_roofline.measured_roofline_figure(record, preset, title=title, file_name=file_name)))
    link = (f'<a href="{escape(download_url(measured.file, page), quote=True)}" download>'
            f'{escape(file_name)}</a>')
    notes = "".join(f"<li>{escape(line)}</li>" for line in summary_lines(record))  # e.g. a roof the preset lacks
    below = (f'<div class="ainotes-measured">{fraction_table(record)}<ul class="ainotes-measured__summary">'
             f'{notes}<li>The raw file: {link}.</li></ul></div>')
    return Drawn(drawn.html + below, drawn.chart, drawn.scripts)
