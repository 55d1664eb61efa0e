"""``parallelism``: for a model, a GPU preset and a chip count (three selects), every layout that fits,
fastest first, its step time in stacked parts beside its memory per chip against the capacity
(:mod:`ainotes.charts.parallelism`, every number from :func:`ainotes.core.parallel_step.search`).

Body keys: ``model`` (the first drawn) and ``models`` (the select's; default ``[model]``), ``preset`` and
``presets`` (GPUs; each needs a memory capacity and a node), ``gpus`` and ``gpu_counts`` (the chip counts
offered; default ``[gpus]``), the batch that holds for every state (``global_batch_tokens``, default
1,024 sequences; ``micro_batch``, ``seq_len``), ``recompute``, ``sequence_parallel``, ``title``, ``id``, and
``measured`` (a PyTorch profiler trace under ``docs/`` of the first state's run: its median step time, the
first step left out as warm-up, beside the model's step for the trace's layout, with the error;
:mod:`ainotes.fences.measured_trace`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from ainotes.base.errors import InputError
from ainotes.base.textcheck import short, unknown_id
from ainotes.charts import parallelism as parallel_chart
from ainotes.charts.figure import VegaFigure
from ainotes.core import checks
from ainotes.core.checks import FieldError
from ainotes.core.hardware import Preset
from ainotes.core.parallelism import DEFAULT_SEQ_LEN, ParallelRun
from ainotes.fences.body import BodyReader, Fence, load_body
from ainotes.fences.kind import DrawSite, FenceKind
from ainotes.fences.measured import links_seen
from ainotes.fences.measured_trace import TraceKey, below_figure, measured_steps, parse_trace_key, read_trace
from ainotes.html.figure import draw_vega_figure
from ainotes.html.page import Drawn, Page

KEYS = ("model", "models", "preset", "presets", "gpus", "gpu_counts", "global_batch_tokens", "micro_batch", "seq_len",
        "recompute", "sequence_parallel", "title", "id", "measured")
MAX_STATES = 48  # models × presets × chip counts one chart searches
MAX_CHOICES = 8
DEFAULT_SEQUENCES = 1024  # the default global batch, in sequences


@dataclass(frozen=True)
class ParallelismRequest:
    """A ``parallelism`` fence, checked where it needs no model: ids, counts and the fixed settings."""

    model_ids: tuple[str, ...]
    preset_ids: tuple[str, ...]
    gpu_counts: tuple[int, ...]
    initial: tuple[str, str, int]
    fields: Mapping[str, Any]
    title: str | None
    chart_id: str | None
    where: str
    lines: Mapping[str, int]
    measured: TraceKey | None = None

    def fail(self, key: str, message: str) -> InputError:
        return InputError(f"{self.where}:{self.lines.get(key, self.lines.get('', 0))}: {message}")


def _ids(reader: BodyReader, data: Mapping[str, Any], key: str, first: str) -> tuple[str, ...]:
    value = data.get(key, [first])
    value = [value] if isinstance(value, str) else value
    if not isinstance(value, list) or not value or not all(isinstance(v, str) and v for v in value):
        reader.fail(key, f"{short(key)} must be a list of ids: {short(value)}")
    if len(value) > MAX_CHOICES:
        reader.fail(key, f"{short(key)} may offer at most {MAX_CHOICES}: {len(value)}")
    ids = tuple(dict.fromkeys(value))
    if first not in ids:
        ids = (first, *ids)
    return ids


def _counts(reader: BodyReader, data: Mapping[str, Any], gpus: int) -> tuple[int, ...]:
    value = data.get("gpu_counts", [gpus])
    if not isinstance(value, list) or not value:
        reader.fail("gpu_counts", f"'gpu_counts' must be a list of chip counts: {short(value)}")
    if len(value) > MAX_CHOICES:
        reader.fail("gpu_counts", f"'gpu_counts' may offer at most {MAX_CHOICES}: {len(value)}")
    counts = [_count(reader, v) for v in value]
    return tuple(sorted({*counts, gpus}))


def _count(reader: BodyReader, value: Any) -> int:
    return reader.checked(checks.whole_number, "gpu_counts", value, low=1, high=1_000_000)


def parse_parallelism(fence: Fence, where: str, presets: Mapping[str, Preset]) -> ParallelismRequest:
    """The fence body (keys in the module docstring); models are checked when drawn, presets now."""
    data, lines = load_body(fence, where)
    reader = BodyReader(fence, where, data, KEYS, lines)
    for key in ("model", "preset", "gpus"):
        if key not in data:
            reader.fail(key, f"the parallelism chart needs {key!r}")
    model, preset = data["model"], data["preset"]
    for key, value in (("model", model), ("preset", preset)):
        if not isinstance(value, str) or not value:
            reader.fail(key, f"{key!r} must be an id: {short(value)}")
    gpus = reader.integer("gpus", 1, 1, 1_000_000)
    model_ids, preset_ids = _ids(reader, data, "models", model), _ids(reader, data, "presets", preset)
    counts = _counts(reader, data, gpus)
    if len(model_ids) * len(preset_ids) * len(counts) > MAX_STATES:
        reader.fail("gpu_counts", f"models × presets × gpu_counts may make at most {MAX_STATES} states: "
                                  f"{len(model_ids)} × {len(preset_ids)} × {len(counts)}")
    for preset_id in preset_ids:
        found = presets.get(preset_id)
        where_key = "presets" if "presets" in data and preset_id != preset else "preset"
        if found is None:
            reader.fail(where_key, unknown_id("preset", preset_id, presets))
        if found.memory_capacity_bytes is None or found.node is None:
            reader.fail(where_key, f"preset {preset_id} needs a memory capacity and a node ('node' in its file) "
                                   "for the layouts that fit it")
    fields: dict[str, Any] = {key: data[key] for key in ("global_batch_tokens", "micro_batch", "seq_len", "recompute",
                                         "sequence_parallel") if key in data}
    key_lines = {str(k): fence.start_line + 1 + v for k, v in reader.lines.items() if k is not None}
    key_lines[""] = fence.start_line
    return ParallelismRequest(model_ids, preset_ids, counts, (model, preset, gpus), fields, reader.text("title"),
                              reader.chart_id(), where, key_lines, parse_trace_key(reader, data))


def base_run(request: ParallelismRequest, site: DrawSite) -> ParallelRun:
    """The settings every state shares, as one checked run of the first model on one chip: the global
    batch becomes that many micro-batches of one data-parallel rank."""
    models = site.models()
    for model_id in request.model_ids:
        if model_id not in models:
            raise request.fail("models" if model_id != request.initial[0] else "model",
                               unknown_id("model", model_id, models))
    fields = dict(request.fields)
    micro_batch, seq_len = fields.get("micro_batch", 1), fields.get("seq_len", DEFAULT_SEQ_LEN)
    tokens = fields.pop("global_batch_tokens", None)
    try:
        if tokens is None:
            tokens = DEFAULT_SEQUENCES * int(micro_batch) * int(seq_len)
        run = ParallelRun.from_fields({"model": request.initial[0], "preset": request.initial[1], "gpus": 1,
                                       "global_batch_tokens": tokens, **fields},
                                      models=models, presets=site.presets_by_id, links=site.links())
    except FieldError as exc:
        raise request.fail(exc.field, f"parallelism chart: {exc}") from None
    for gpus in request.gpu_counts:
        if run.layout.global_batch_tokens % (run.layout.micro_batch * run.layout.seq_len):
            raise request.fail("gpu_counts", f"{gpus} chips cannot share the batch in whole sequences")
    return run


def _draw(site: DrawSite, request: ParallelismRequest, page: Page) -> Drawn:
    base = base_run(request, site)
    models = [site.models()[i] for i in request.model_ids]
    presets = [site.presets_by_id[i] for i in request.preset_ids]
    model_id, preset_id, gpus = request.initial
    title = request.title or parallel_chart.title_text(site.models()[model_id].name,
                                                       site.presets_by_id[preset_id].name, gpus)
    chart = site.new_chart(page, "parallelism", "parallelism", request.chart_id, title)
    chart.about = {"models": list(request.model_ids), "presets": list(request.preset_ids),
                   "gpu_counts": list(request.gpu_counts), **request.fields}
    if request.measured is None:
        def figure() -> VegaFigure:
            # The search runs only when the build has no kept drawing of this chart.
            found = parallel_chart.build_chart(base, models, presets, request.gpu_counts, request.initial)
            return parallel_chart.parallelism_figure(found, title=request.title)

        return draw_vega_figure(site, chart, page, (request, tuple(models), tuple(presets)), figure)
    # With a trace the search runs only without a kept drawing too: the overlay is a function of the
    # trace's summary, the request and the presets (the links with them), all in the drawing's key.
    key = request.measured
    trace = read_trace(site, key)
    chart.about["measured"] = key.file

    def measured_figure() -> VegaFigure:
        found = parallel_chart.build_chart(base, models, presets, request.gpu_counts, request.initial)
        overlay, _ = measured_steps(site, key, found.initial_key, gpus, found.found[found.initial_key])
        return parallel_chart.parallelism_figure(replace(found, measured=overlay), title=request.title)

    drawn = draw_vega_figure(site, chart, page, (request, tuple(models), tuple(presets), trace, links_seen(site)),
                             measured_figure)
    below = below_figure(site, key, trace, site.presets_by_id[preset_id], page)
    return Drawn(drawn.html + below, drawn.chart, drawn.scripts)


KIND = FenceKind("parallelism", parse_parallelism, _draw, chart=True, vega=True)
