"""A ``parallelism`` fence's ``measured:`` key: a PyTorch profiler trace shipped under ``docs/``, its step
times held against the model's step for the layout the trace ran, and its NCCL kernels against the
α–β model of the same collective, size and group on the link the fence's GPU gives that group.

The trace must be of the fence's first state: its world size (``distributedInfo.world_size``) and
every NCCL group must fit the fence's chip count, and it must mark at least one step
(``ProfilerStep#N``); otherwise the fence is refused in one line at the key's line. The layout held
against it is, among the layouts that fit the first state, the one whose collectives (kind and
group size, bytes a step) are nearest the trace's (ties: the faster); the caption says so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from html import escape
from typing import Any

from ainotes.base.errors import InputError
from ainotes.charts.parallelism import MeasuredSteps, percent_text
from ainotes.core.parallelism import StepBreakdown
from ainotes.fences.body import BodyReader
from ainotes.fences.kind import DrawSite
from ainotes.fences.measured import docs_path, download_url, resolve_docs_file
from ainotes.html import tables
from ainotes.html.page import Page

#: The collectives a layout's model issues; the trace's others (a DDP start's broadcast) are not matched.
_MODELLED = frozenset({"all-reduce", "all-gather", "reduce-scatter", "all-to-all"})


@dataclass(frozen=True)
class TraceKey:
    """The ``measured`` trace and the fence line that names it."""

    file: str
    where: str


def parse_trace_key(reader: BodyReader, data: dict[str, Any]) -> TraceKey | None:
    """``measured:``, checked (a path under ``docs/``); ``None`` when the key is absent."""
    if "measured" not in data:
        return None
    file = docs_path(reader, "measured")
    line = reader.lines.get("measured")
    page_line = reader.fence.start_line if line is None else reader.fence.start_line + 1 + line
    return TraceKey(file, f"{reader.where}:{page_line}")


def read_trace(site: DrawSite, key: TraceKey) -> Any:
    """What the charts take from the trace (:class:`ainotes.measurements.steps.TraceSummary`), kept across
    processes by the file's bytes (:func:`ainotes.measurements.kept.kept_value`): a warm start neither
    imports pandas nor parses the trace again. One line at the key when it cannot be read."""
    from ainotes.measurements.kept import kept_value
    from ainotes.measurements.steps import TraceSummary

    path = resolve_docs_file(site, key.file)
    return TraceSummary.from_record(kept_value("trace", path, {"file": key.file},
                                               lambda: _summarise(path, key)))


def _summarise(path: Any, key: TraceKey) -> dict[str, Any]:
    from ainotes.measurements.kineto import KinetoTrace
    from ainotes.measurements.read import read_measured
    from ainotes.measurements.steps import TraceSummary

    try:
        found = read_measured(path, shown_as=key.file)
    except InputError as exc:
        raise InputError(f"{key.where}: {exc}") from None
    if not isinstance(found, KinetoTrace):
        raise InputError(f"{key.where}: {key.file} is not a PyTorch profiler trace (.json or .json.gz with "
                         "'traceEvents'): the parallelism chart reads step times from a trace")
    return TraceSummary.of(found, _MODELLED).record()


def trace_collectives(trace: Any, steps: int) -> dict[tuple[str, int], float]:
    """Bytes a step per (collective, group size) in the trace, the kinds a layout's model issues."""
    return {(op, g): b / max(steps, 1) for op, g, b in trace.bytes_by_kind}


def model_collectives(breakdown: StepBreakdown) -> dict[tuple[str, int], float]:
    """Bytes a step per (collective, group size) the model issues for a layout."""
    found: dict[tuple[str, int], float] = {}
    for c in breakdown.collectives:
        if c.op in _MODELLED and c.ranks >= 2:
            found[(c.op, c.ranks)] = found.get((c.op, c.ranks), 0.0) + c.bytes * c.count_per_step
    return found


def _distance(trace: dict[tuple[str, int], float], model: dict[tuple[str, int], float]) -> tuple[int, float]:
    """How far a layout's collectives are from the trace's: kinds one has and the other lacks, then the
    summed |log| of the byte ratios of the kinds both have."""
    missing = len(trace.keys() ^ model.keys())
    logs = sum(abs(math.log(trace[k] / model[k])) for k in trace.keys() & model.keys() if trace[k] > 0 and model[k] > 0)
    return missing, logs


def match_layout(trace: Any, steps: int, layouts: tuple[StepBreakdown, ...]) -> tuple[StepBreakdown, str]:
    """The layout held against the trace, and how it was chosen (for the caption)."""
    seen = trace_collectives(trace, steps)
    if not seen:
        return layouts[0], "that is fastest (the trace's NCCL kernels name no collective the model issues)"
    ranked = sorted(layouts, key=lambda b: (*_distance(seen, model_collectives(b)), b.step_s))
    best = ranked[0]
    missing, _ = _distance(seen, model_collectives(best))
    kinds = ", ".join(f"{op} over {g}" for op, g in sorted(seen))
    how = ("whose collectives are nearest the trace's" if missing == 0
           else "nearest the trace's, though not the same kinds")
    return best, f"{how} ({kinds} ranks, bytes a step)"


def check_ranks(trace: Any, gpus: int, key: TraceKey, name: str = "gpus") -> None:
    """The trace's world size and NCCL groups against the fence's chip count (its key ``name``): one line
    where they differ."""
    if trace.world_size is not None and trace.world_size != gpus:
        raise InputError(f"{key.where}: {key.file} is a trace of {trace.world_size} ranks "
                         "(distributedInfo.world_size), "
                         f"but the fence's first state has {name}: {gpus}: set {name} to {trace.world_size} or ship "
                         f"a trace of {gpus} ranks")
    if trace.largest_group is not None and trace.largest_group > gpus:
        raise InputError(f"{key.where}: {key.file} has NCCL groups of {trace.largest_group} ranks, more than the "
                         f"fence's {name}: {gpus}")


def _steps(trace: Any, key: TraceKey) -> Any:
    from ainotes.measurements.steps import no_steps

    if trace.steps is None:
        raise InputError(str(no_steps(trace.path, key.where)))
    return trace.steps


def measured_steps(site: DrawSite, key: TraceKey, state_key: str, gpus: int,
                   layouts: tuple[StepBreakdown, ...]) -> tuple[MeasuredSteps, Any]:
    """The chart's measured overlay for the first state, and the trace (for the collectives' table)."""
    trace = read_trace(site, key)
    check_ranks(trace, gpus, key)
    steps = _steps(trace, key)
    if not layouts:
        raise InputError(f"{key.where}: no layout of the fence's first state fits its chips' memory, so there is no "
                         f"model step to hold {key.file} against")
    best, how = match_layout(trace, len(steps.counted_s), layouts)
    overlay = MeasuredSteps(state_key, key.file.split("/", 1)[1], steps.median_s, steps.min_s, steps.max_s,
                            len(steps.counted_s), steps.warmup_text(), best.layout.label, best.step_s, how)
    return overlay, trace


def decode_steps(site: DrawSite, key: TraceKey, tp: int) -> Any:
    """A decode trace's step times for an ``inference`` fence (each ProfilerStep one decode step), refused
    where the trace's ranks contradict the fence's ``tp`` or it marks no step."""
    trace = read_trace(site, key)
    check_ranks(trace, tp, key, "tp")
    return _steps(trace, key)


def decode_sentence(file: str, steps: Any, batch: int, model_s: float, state: str) -> str:
    """The measured decode step beside the model's, in words: the caption's addition and the tooltip."""
    from ainotes.base.units import amount_text

    error = model_s / steps.median_s - 1
    return (f"Measured ({file.split('/', 1)[1]}): a decode step at batch {batch:,} takes "
            f"{amount_text(steps.median_s * 1e3)} ms, {steps.warmup_text()} (least {amount_text(steps.min_s * 1e3)} "
            f"ms, greatest {amount_text(steps.max_s * 1e3)} ms); the model gives {amount_text(model_s * 1e3)} ms for "
            f"{state}: an error of {percent_text(error)} (model ÷ measured − 1), the diamond on the chart.")


def collectives_table(site: DrawSite, trace: Any, preset: Any) -> str:
    """The trace's NCCL kernels by (collective, bytes, group) beside the α–β model on the GPU's link for
    that group (:func:`ainotes.measurements.steps.matches_of`); empty without NCCL kernels."""
    from ainotes.measurements import words as report
    from ainotes.measurements.steps import matches_of

    links = site.links()

    def link_for(ranks: int) -> Any:
        link_id = report.preset_link_id(preset, ranks)
        return links.get(link_id) if link_id else None

    matches = matches_of(trace.groups, link_for)
    if not matches:
        return ""
    rows = [[escape(cell) for cell in (
        m.op, f"{m.message_bytes:,}", str(m.ranks), str(m.calls), report.figure(m.measured_s * 1e6),
        report.figure(m.model_s * 1e6) if m.model_s is not None else "—",
        f"{m.algorithm} on {m.link}" if m.algorithm else "—",
        percent_text(m.error) if m.error is not None else "—")] for m in matches]
    head = ["collective", "bytes", "ranks", "calls", "measured µs", "model µs", "model's algorithm", "error"]
    return tables.notes_table(head, rows, "ainotes-measured")


def below_figure(site: DrawSite, key: TraceKey, trace: Any, preset: Any, page: Page) -> str:
    """The collectives' table and the download link, under the chart."""
    link = (f'<a href="{escape(download_url(key.file, page), quote=True)}" download>'
            f'{escape(key.file.split("/", 1)[1])}</a>')
    table = collectives_table(site, trace, preset)
    lead = ("<li>The trace's NCCL kernels (mean of each kind's calls) beside the α–β model of the same collective, "
            "size and group on the link that group crosses; error = model ÷ measured − 1.</li>" if table else "")
    return (f'<div class="ainotes-measured">{table}<ul class="ainotes-measured__summary">{lead}'
            f'<li>The raw trace: {link}.</li></ul></div>')
