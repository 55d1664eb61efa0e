"""``training-memory``: the live chart of memory per GPU for a model's training run (weights, gradients,
optimizer states, activations) against the GPUs' capacities, with a select per setting.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ainotes.base.errors import InputError
from ainotes.base.textcheck import short, unknown_id
from ainotes.charts import memory as memory_chart
from ainotes.charts.memory import CHOICES
from ainotes.core import memory
from ainotes.core.checks import FieldError, one_of, whole_number
from ainotes.core.hardware import Preset
from ainotes.core.memory import TrainingMemory
from ainotes.core.models import ModelPreset
from ainotes.fences.body import BodyReader, Fence, load_body
from ainotes.fences.kind import DrawSite, FenceKind
from ainotes.html.figure import draw_vega_figure
from ainotes.html.page import Drawn, Page

CONFIG_KEYS = ("zero", "dp", "tp", "pp", "micro_batch", "seq_len", "recompute", "sequence_parallel", "attention",
                "optimizer", "fp32_grad_accum", "dropout")


CHART_DEFAULTS: Mapping[str, Any] = {"zero": 0, "dp": 8, "tp": 1, "pp": 1, "micro_batch": 1, "seq_len": 2048,
                                     "recompute": "none", "sequence_parallel": False, "attention": "standard",
                                     "optimizer": "adam", "fp32_grad_accum": False,
                                     "dropout": None}  # None: each model as it was trained


@dataclass(frozen=True)
class TrainingMemoryRequest:
    """A ``training-memory`` fence: the models offered, the initial model, the GPUs drawn, the
    initial configuration (``fields``, checked against the core when drawn), title and id.
    ``where`` and ``lines`` place an error found when the chart is drawn (an unknown model)."""

    model_ids: tuple[str, ...] | None
    model_id: str | None
    preset_ids: tuple[str, ...]
    fields: Mapping[str, Any]
    title: str | None
    chart_id: str | None
    where: str = ""
    lines: Mapping[str, int] | None = None

    def fail(self, key: str, message: str) -> InputError:
        line = (self.lines or {}).get(key, (self.lines or {}).get("", 0))
        return InputError(f"{self.where}:{line}: {message}")


def read_memory_body(fence: Fence, where: str, allowed: tuple[str, ...]) -> tuple[Any, dict[str, Any], dict[str, int]]:

    data, lines = load_body(fence, where)
    reader = BodyReader(fence, where, data, allowed, lines)
    key_lines = {str(k): fence.start_line + 1 + v for k, v in reader.lines.items() if k is not None}
    key_lines[""] = fence.start_line
    return reader, data, key_lines


def read_id_list(reader: BodyReader, data: Mapping[str, Any], key: str) -> tuple[str, ...] | None:
    value = data.get(key)
    if value is None or value == "all":
        return None
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value or not all(isinstance(v, str) and v for v in value):
        reader.fail(key, f"{short(key)} must be a list of ids or 'all': {short(value)}")
    return tuple(dict.fromkeys(value))


def read_capacity_presets(reader: BodyReader, data: Mapping[str, Any],
                          presets: Mapping[str, Preset]) -> tuple[str, ...]:
    """The GPUs named (default: every preset that gives a capacity); each must give its capacity."""
    ids = read_id_list(reader, data, "presets")
    if ids is None:
        ids = tuple(p.id for p in presets.values() if p.memory_capacity_bytes is not None)
        if not ids:
            reader.fail("presets", "no preset gives its memory capacity (memory_capacity_gb), so there is "
                                   "nothing to compare with")
        return ids
    for preset_id in ids:
        if preset_id not in presets:
            reader.fail("presets", f"{unknown_id('preset', preset_id, presets)}")
        if presets[preset_id].memory_capacity_bytes is None:
            reader.fail("presets", f"preset {preset_id} gives no memory capacity (add memory_capacity_gb to "
                                   "its file)")
    return ids


def read_config_fields(reader: BodyReader, data: Mapping[str, Any], *, choices: bool) -> dict[str, Any]:
    """The configuration keys as written, with booleans checked; with ``choices``, each number must be
    one the chart's select offers."""
    fields: dict[str, Any] = {}
    for key in CONFIG_KEYS:
        if key not in data:
            continue
        value = data[key]
        if key in ("sequence_parallel", "fp32_grad_accum", "dropout") and not isinstance(value, bool):
            reader.fail(key, f"{short(key)} must be true or false: {short(value)}")
        if choices and key in CHOICES and value not in CHOICES[key]:
            offered = ", ".join(f"{c:,}" for c in CHOICES[key])
            reader.fail(key, f"{short(key)} must be one of the chart's choices ({offered}): {short(value)}")
        fields[key] = value
    return fields


def parse_training_memory(fence: Fence, where: str, presets: Mapping[str, Preset]) -> TrainingMemoryRequest:
    """``training-memory`` fence: ``models`` (ids offered by the model select; default all),
    ``model`` (the initial one; default the first), ``presets`` (GPUs whose capacity is drawn;
    default every preset that gives one), the initial ``zero dp tp pp micro_batch seq_len recompute
    sequence_parallel attention`` (each one of the select's choices), ``optimizer``,
    ``fp32_grad_accum`` and ``dropout`` (fixed for the chart), ``title``, ``id``. Model ids are
    checked when the chart is drawn, with the models loaded."""
    allowed = ("models", "model", "presets", *CONFIG_KEYS, "title", "id")
    reader, data, lines = read_memory_body(fence, where, allowed)
    model_ids = read_id_list(reader, data, "models")
    model_id = data.get("model")
    if model_id is not None and (not isinstance(model_id, str) or not model_id):
        reader.fail("model", f"'model' must be a model id: {short(model_id)}")
    if model_id is not None and model_ids is not None and model_id not in model_ids:
        reader.fail("model", f"'model' {short(model_id)} must be one of 'models': {', '.join(model_ids)}")
    fields = {**CHART_DEFAULTS, **read_config_fields(reader, data, choices=True)}
    # The whole configuration is checked against the core now where it needs no model.
    try:
        TrainingMemory.from_fields({"params": 1e9, **{k: fields[k] for k in (
            "zero", "dp", "tp", "pp", "optimizer", "fp32_grad_accum")}}, {}, presets)
    except FieldError as exc:
        reader.fail(exc.field, str(exc))
    for key, values in (("recompute", memory.RECOMPUTE_MODES), ("attention", memory.ATTENTIONS)):
        if fields[key] not in values:
            reader.fail(key, f"{short(key)} must be one of {', '.join(values)}: {short(fields[key])}")
    return TrainingMemoryRequest(model_ids=model_ids, model_id=model_id,
                                 preset_ids=read_capacity_presets(reader, data, presets), fields=fields,
                                 title=reader.text("title"), chart_id=reader.chart_id(), where=where, lines=lines)


def resolve_models(request: TrainingMemoryRequest, models: Mapping[str, ModelPreset]) -> tuple[
        tuple[ModelPreset, ...], ModelPreset]:
    """The models a chart offers and its initial one; unknown ids are an error at their line."""
    ids = request.model_ids if request.model_ids is not None else tuple(models)
    for model_id in ids:
        if model_id not in models:
            raise request.fail("models", f"{unknown_id('model', model_id, models)}")
    if not ids:
        raise request.fail("models", "no model presets to offer (presets/models/ is empty)")
    initial = request.model_id if request.model_id is not None else ids[0]
    if initial not in models:
        raise request.fail("model", f"{unknown_id('model', initial, models)}")
    return tuple(models[i] for i in ids), models[initial]


def initial_config(request: TrainingMemoryRequest, model: ModelPreset) -> TrainingMemory:
    """The chart's first view as a checked configuration; a field the model refuses is an error at its line."""
    try:
        return TrainingMemory.from_fields({"model": model.id, **request.fields}, {model.id: model}, {})
    except FieldError as exc:
        raise request.fail(exc.field, f"with model {model.id}: {exc}") from None


def check_activation_fields(fields: Mapping[str, Any]) -> None:
    """micro_batch and seq_len together, and the activation keys' values, on a stand-in model."""
    if ("micro_batch" in fields) != ("seq_len" in fields):
        missing = "seq_len" if "micro_batch" in fields else "micro_batch"
        given = "micro_batch" if missing == "seq_len" else "seq_len"
        raise FieldError(f"'micro_batch' and 'seq_len' go together: {given!r} given, {missing!r} missing", missing)
    if "micro_batch" not in fields:
        stray = next(k for k in memory.ACTIVATION_FIELDS if k in fields)
        raise FieldError(f"{stray!r} is about activations: give 'micro_batch' and 'seq_len' too", stray)

    whole_number(fields["micro_batch"], "'micro_batch'", "micro_batch", high=memory.MAX_MICRO_BATCH)
    whole_number(fields["seq_len"], "'seq_len'", "seq_len", high=memory.MAX_SEQ_LEN)
    one_of(fields.get("recompute", "none"), "'recompute'", "recompute", choices=memory.RECOMPUTE_MODES)
    one_of(fields.get("attention", "standard"), "'attention'", "attention", choices=memory.ATTENTIONS)


def _draw_training_memory(site: DrawSite, request: TrainingMemoryRequest, page: Page) -> Drawn:
    models, initial = resolve_models(request, site.models())
    config = initial_config(request, initial)
    presets = tuple(site.presets_by_id[i] for i in request.preset_ids)
    title = request.title or "Memory per GPU of a training run"
    chart = site.new_chart(page, "training-memory", "training-memory", request.chart_id, title)
    chart.about = {"models": [m.id for m in models], "presets": [p.id for p in presets], **request.fields}

    return draw_vega_figure(site, chart, page, (request, models, presets),
                            lambda: memory_chart.memory_figure(models, presets, config, title=request.title))


KIND = FenceKind("training-memory", parse_training_memory, _draw_training_memory, chart=True, vega=True)
