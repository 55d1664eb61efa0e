"""``measured``: a measured file shipped beside a note, read and held against the model, as a table.

Body keys: ``file`` (required: a path under ``docs/``, e.g. ``docs/measured/allreduce.log``; the file
is shipped with the site and the table links to it), ``format`` (``nccl-tests``, ``ncu`` or
``kineto``; default: told from the file), ``link`` (a link preset: the α–β model per size for an
nccl-tests file), ``preset`` (a GPU preset: each ncu kernel against its roofs), ``ranks`` and
``op`` (what an nccl-tests file does not say), ``title``. The numbers are those ``ainotes measured``
prints for the same file (:mod:`ainotes.measurements.report` builds both).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from html import escape
from pathlib import Path, PurePosixPath

from ainotes.base.errors import InputError
from ainotes.base.textcheck import short, unknown_id
from ainotes.core.collectives import OPS
from ainotes.core.hardware import Preset
from ainotes.fences.body import BodyReader, Fence, load_body
from ainotes.fences.kind import DrawSite, FenceKind
from ainotes.html import tables
from ainotes.html.page import Drawn, Page, relative_prefix
from ainotes.measurements.source import FORMATS

DOCS = "docs"
_KEYS = ("file", "format", "link", "preset", "ranks", "op", "title")


@dataclass(frozen=True)
class MeasuredRequest:
    """A measured file (its path under ``docs/``) and what to hold it against; ``line`` for messages."""

    file: str
    format_name: str | None
    link_id: str | None
    preset_ids: tuple[str, ...]
    ranks: int | None
    op: str | None
    title: str | None
    where: str


def docs_path(reader: BodyReader, key: str) -> str:
    """``key``'s value as a POSIX path under ``docs/`` (``docs/`` written first); anything else is refused."""
    value = reader.data.get(key)
    if not isinstance(value, str) or not value.strip():
        reader.fail(key, f"{short(key)} must be a path under docs/, e.g. docs/measured/allreduce.log: {short(value)}")
    path = PurePosixPath(value.strip())
    parts = path.parts
    if path.is_absolute() or "\\" in value or not parts or parts[0] != DOCS or len(parts) < 2 or ".." in parts:
        reader.fail(key, f"{short(key)} must be a path under docs/ (no '..', no absolute path), so the site ships "
                    f"the file beside the note: {short(value)}")
    return str(path)


def resolve_docs_file(site: DrawSite, relative: str) -> Path:
    """The file on disk: ``docs/…`` beside the presets folder (the project root holds both)."""
    root = Path(getattr(site, "presets_dir", Path("presets"))).parent
    return root / relative


def download_url(relative: str, page: Page) -> str:
    """The shipped file's URL from the page: the site root holds what ``docs/`` holds."""
    return relative_prefix(page.links_from) + relative.split("/", 1)[1]


def parse_measured(fence: Fence, where: str, presets: Mapping[str, Preset]) -> MeasuredRequest:
    data, lines = load_body(fence, where)
    reader = BodyReader(fence, where, data, _KEYS, lines)
    file = docs_path(reader, "file")
    format_name = reader.text("format")
    if format_name is not None and format_name not in FORMATS:
        reader.fail("format", f"'format' must be one of {', '.join(FORMATS)}: {short(format_name)}")
    preset = reader.text("preset")
    if preset is not None and preset not in presets:
        reader.fail("preset", unknown_id("preset", preset, presets))
    op = reader.text("op")
    if op is not None and op not in (*OPS, "sendrecv", "gather"):
        reader.fail("op", f"'op' must be one of {', '.join(OPS)}: {short(op)}")
    ranks = reader.integer("ranks", 0, 0, 1024) or None if "ranks" in data else None
    line = fence.start_line + 1 + lines.get(id(data), {}).get("file", 0)
    return MeasuredRequest(file, format_name, reader.text("link"), (preset,) if preset else (), ranks, op,
                           reader.text("title"), f"{where}:{line}")


def links_seen(site: DrawSite) -> str:
    """The link presets as a kept record's key names them: their ``repr``, or the error that loading them
    gives (raised only where a record needs a link, as a fresh read raises it)."""
    try:
        return repr(site.links())
    except InputError as exc:
        return f"error: {exc}"


def read_request(site: DrawSite, request: MeasuredRequest) -> dict:
    """The report record for the request's file; a missing or broken file is the page's one line.

    Kept across processes (:func:`ainotes.measurements.kept.kept_value`) by the file's bytes, the request
    and the GPU preset and links it can be held against, so that a warm start neither imports pandas
    nor parses the file again."""
    from ainotes.measurements.kept import kept_value

    path = resolve_docs_file(site, request.file)
    preset = site.presets_by_id[request.preset_ids[0]] if request.preset_ids else None
    inputs = {"file": request.file, "format": request.format_name, "op": request.op, "ranks": request.ranks,
              "link": request.link_id, "preset": repr(preset),
              "links": links_seen(site) if request.link_id is not None or preset is not None else None}
    return kept_value("record", path, inputs, lambda: _read_record(site, request, path))


def _read_record(site: DrawSite, request: MeasuredRequest, path: Path) -> dict:
    from ainotes.measurements import report  # pandas loads only for a file no process has read yet
    from ainotes.measurements.kineto import KinetoTrace
    from ainotes.measurements.nccl_tests import NcclTestsRun
    from ainotes.measurements.read import read_measured

    try:
        run = read_measured(path, format_name=request.format_name, op=request.op, ranks=request.ranks,
                            shown_as=request.file)
    except InputError as exc:
        raise InputError(f"{request.where}: {exc}") from None
    if isinstance(run, NcclTestsRun):
        link_id = request.link_id
        if link_id is None and request.preset_ids:  # the GPU's node link for that many ranks
            link_id = report.preset_link_id(site.presets_by_id[request.preset_ids[0]], run.ranks)
        link = None
        if link_id is not None:
            links = site.links()
            if link_id not in links:
                raise InputError(f"{request.where}: {unknown_id('link', link_id, links)}")
            link = links[link_id]
        return report.nccl_record(run, link)
    if isinstance(run, KinetoTrace):
        return report.kineto_record(run)
    preset = site.presets_by_id[request.preset_ids[0]] if request.preset_ids else None
    return report.ncu_record(run, preset)


def _nccl_table(record: dict) -> str:
    from ainotes.measurements import words as report

    head, rows, _ = report.nccl_table(record)  # the command's table, cell for cell
    return tables.notes_table(head, [[escape(cell) for cell in cells] for cells in rows], "ainotes-measured")


def _ncu_table(record: dict) -> str:
    from ainotes.measurements import words as report

    head = ["kernel", "precision", "GFLOP", "DRAM MB", "time µs", "TFLOP/s", "FLOP/byte"]
    with_roof = record["gpu"] is not None
    head += ["roof TFLOP/s", "of roof"] if with_roof else []
    rows = []
    for kernel in record["kernels"]:
        cells = [kernel["name"], kernel["held_to"], report.figure(kernel["flops"] and kernel["flops"] / 1e9),
                 report.figure(kernel["dram_bytes"] and kernel["dram_bytes"] / 1e6),
                 report.figure(kernel["duration_s"] * 1e6),
                 report.figure(kernel["flops_per_s"] and kernel["flops_per_s"] / 1e12),
                 report.figure(kernel["intensity"])]
        if with_roof:
            fraction = kernel["fraction_of_roof"]
            cells += [report.figure(kernel["roof_flops_per_s"] and kernel["roof_flops_per_s"] / 1e12),
                      ("—" if fraction is None else report.roof_percent(fraction))
                      + (" (above its roof: a units or FLOP-count error)" if kernel["above_roof"] else "")]
        rows.append([tables.breakable_html(cells[0]), *(escape(cell) for cell in cells[1:])])
    return tables.notes_table(head, rows, "ainotes-measured")


def _kineto_table(record: dict) -> str:
    from ainotes.measurements import words as report

    groups: dict[tuple, list[float]] = {}
    for item in record["collectives"]:
        key = (item["op"] or item["kernel"], item["bytes"], item["group_size"])
        groups.setdefault(key, []).append(item["duration_s"])
    rows = [[escape(str(op)), "—" if size is None else f"{size:,}", escape(str(group or "—")), str(len(times)),
             report.figure(sum(times) / len(times) * 1e6)] for (op, size, group), times in groups.items()]
    return tables.notes_table(["collective", "bytes", "ranks", "calls", "mean µs"], rows, "ainotes-measured")


def summary_lines(record: dict) -> list[str]:
    """The sentences under the table, the same figures as the command's summary lines (plain text)."""
    from ainotes.measurements import words as report

    lines = []
    if record["format"] == "nccl-tests":
        footer = record["footer_avg_busbw_gbps"]
        lines.append(f"Average busbw {report.figure(record['avg_busbw_gbps'], 6)} GB/s over both blocks"
                     + (f" (the file's footer: {footer:g})." if footer is not None else "."))
        if fitted := record["fit"]:
            lines.append(f"Fitted ({fitted['algorithm']}, relative least squares): α = "
                         f"{report.duration(fitted['alpha_s'])}, "
                         f"B = 1/β = {report.figure(fitted['bandwidth_gbps'])} GB/s.")
        if model := record.get("model"):
            lines.append(f"Link preset {model['link']}: α = {report.duration(model['alpha_s'])}, "
                         f"B = {model['bandwidth_gbps']:g} GB/s; error = model ÷ measured − 1.")
        if record["nccl_algo"]:
            lines.append(f"The run set NCCL_ALGO={record['nccl_algo']}.")
    if record["format"] == "kineto" and (found := record.get("step_times")):
        lines.append(f"Step time: {report.step_time_text(found)}.")
    lines += [f"Note: {note}." for note in record["notes"]]
    return lines


def _draw_measured(site: DrawSite, request: MeasuredRequest, page: Page) -> Drawn:
    record = read_request(site, request)
    table = {"nccl-tests": _nccl_table, "ncu": _ncu_table, "kineto": _kineto_table}[record["format"]](record)
    title = f'<p class="ainotes-measured__title">{escape(request.title)}</p>' if request.title else ""
    link = (f'<a href="{escape(download_url(request.file, page), quote=True)}" download>'
            f'{escape(request.file.split("/", 1)[1])}</a>')
    summary = "".join(f"<li>{escape(line)}</li>" for line in summary_lines(record))
    return Drawn(f'<div class="ainotes-measured">{title}{table}<ul class="ainotes-measured__summary">{summary}'
                 f'<li>The raw file: {link}.</li></ul></div>')


KIND = FenceKind("measured", parse_measured, _draw_measured, chart=False)
