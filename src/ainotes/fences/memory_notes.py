"""What pages write about training memory: the ``training-memory`` and ``memory-fit-table`` fences,
and the inline forms below. Every number comes from :mod:`ainotes.core.memory`.

=================================================================  ==========================================
``{{ model-states (params=N | model=ID) [zero= dp= tp= pp=``       a run's model states per GPU, e.g.
``optimizer= fp32_grad_accum=] [part=P] [unit=U] [decimals=D] }}``  ``31.4 GB``; P: ``total`` (default),
                                                                   ``weights``, ``gradients``, ``optimizer``
``{{ memory-per-gpu MODEL [zero= dp= tp= pp= micro_batch=``        the whole estimate; P adds
``seq_len= recompute= sequence_parallel= attention= optimizer=``   ``activations``, ``model_states``,
``fp32_grad_accum= dropout= preset=] [part=P] [unit=] [decimals=]``  ``logits``, ``capacity``, ``headroom``
``}}``                                                             (``… free`` / ``… short``), ``fits``
                                                                   (``fits`` / ``does not fit``) and
                                                                   ``lowest-stage`` (``ZeRO stage 2``)
``{{ activations-per-layer MODEL seq_len= micro_batch= [tp=``      one layer's stored activations on one
``sequence_parallel= recompute= attention= dropout=] [unit=]``     rank (Korthikanti et al., Table 2,
``[decimals=] }}``                                                 generalised)
``{{ bytes-per-param [optimizer=] [fp32_grad_accum=] [part=] }}``  ``16``: bytes a parameter of model states
``{{ gpu-memory ID }}``                                            a GPU's capacity, ``80 GB`` (``16 GiB
                                                                   (17.2 GB)`` where printed in GiB)
``{{ layer-shape MODEL }}``                                        ``h = 12,288, a = 96 heads, L = 96 layers``
=================================================================  ==========================================

U is a byte unit, ``B kB MB GB TB PB`` (10^3 steps) or ``KiB MiB GiB TiB`` (2^10 steps); without it
the prefix that suits the number. Without ``decimals=``, three significant figures (whole
numbers from 100 on, grouped: ``1,120 GB``); with it, that many decimals, trailing zeros dropped
(``decimals=1``: ``1.9 GB``, ``120 GB``).
"""

from __future__ import annotations

import html
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from ainotes.base import units
from ainotes.base.errors import InputError
from ainotes.base.textcheck import short
from ainotes.core import memory
from ainotes.core.checks import FieldError
from ainotes.core.hardware import Preset
from ainotes.core.memory import TrainingMemory
from ainotes.core.models import ModelPreset
from ainotes.fences.body import Fence
from ainotes.inline.formcontext import FormContext

BYTE_UNITS: Mapping[str, float] = {"B": 1.0, "kB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12, "PB": 1e15,
                                   "KiB": 2.0**10, "MiB": 2.0**20, "GiB": 2.0**30, "TiB": 2.0**40}
MAX_DECIMALS = 6


# --- numbers as the notes write them ------------------------------------------------------------


def amount_text(value: float, decimals: int | None = None) -> str:
    """``31.4``, ``1,120``, ``1.88``: three significant figures below 100, whole numbers from 100 on,
    grouped; with ``decimals``, that many decimals with trailing zeros dropped. Ties round half-up
    (:func:`ainotes.base.units.fixed`), as the chart's d3-format does."""
    if decimals is not None:
        text = units.fixed(value, decimals, grouping=True)
        return text.rstrip("0").rstrip(".") if "." in text else text
    if abs(value) >= 100:
        return units.fixed(value, 0, grouping=True)
    return units.significant(value, 3)


def bytes_text(value_bytes: float, unit: str | None = None, decimals: int | None = None) -> str:
    """``31.4 GB``: bytes in ``unit`` (default: the decimal prefix that suits the value)."""
    if unit is None:
        unit = "B"
        for name in ("PB", "TB", "GB", "MB", "kB"):
            if abs(value_bytes) >= BYTE_UNITS[name]:
                unit = name
                break
    return f"{amount_text(value_bytes / BYTE_UNITS[unit], decimals)} {unit}"


# --- inline forms -----------------------------------------------------------------------------

_STATE_KEYS = ("params", "model", "zero", "dp", "tp", "pp", "optimizer", "fp32_grad_accum")
_FORMAT_KEYS = ("part", "unit", "decimals")
_STATE_PARTS = ("total", "weights", "gradients", "optimizer")
_ESTIMATE_PARTS = ("total", "weights", "gradients", "optimizer", "activations", "model_states", "logits",
                   "capacity", "headroom", "fits", "lowest-stage")


def _inline_label(key: str) -> str:
    return f"{key}="


def _check_options(form: str, options: Mapping[str, str], allowed: tuple[str, ...]) -> None:
    for key in options:
        if key not in allowed:
            raise InputError(f"'{form}' does not take {key}= (allowed: {', '.join(k + '=' for k in allowed)})")


def _format_options(form: str, options: Mapping[str, str]) -> tuple[str | None, int | None]:
    unit = options.get("unit")
    if unit is not None and unit not in BYTE_UNITS:
        raise InputError(f"'{form}': unit= must be one of {', '.join(BYTE_UNITS)}: {short(unit)}")
    decimals = None
    if "decimals" in options:
        text = options["decimals"]
        if not text.isdigit() or int(text) > MAX_DECIMALS:
            raise InputError(f"'{form}': decimals= must be a whole number from 0 to {MAX_DECIMALS}: {short(text)}")
        decimals = int(text)
    return unit, decimals


def _part(form: str, options: Mapping[str, str], parts: tuple[str, ...]) -> str:
    part = options.get("part", "total")
    if part not in parts:
        raise InputError(f"'{form}': part= must be one of {', '.join(parts)}: {short(part)}")
    return part


def _config(form: str, fields: Mapping[str, Any], context: FormContext, *, needs_models: bool) -> TrainingMemory:
    models: Mapping[str, ModelPreset] = context.models() if needs_models else {}
    try:
        return TrainingMemory.from_fields(fields, models, context.presets, label=_inline_label)
    except InputError as exc:
        raise InputError(f"'{form}': {exc}") from None


def model_states(args: list[str], options: dict[str, str], context: FormContext) -> str:
    """``{{ model-states params=7.5e9 zero=1 dp=64 }}`` → ``31.4 GB``."""
    form = "model-states"
    _check_options(form, options, (*_STATE_KEYS, *_FORMAT_KEYS))
    if args:
        raise InputError(f"'{form}' takes key=value options only: {short(' '.join(args))} "
                         "(write model=ID for a model preset)")
    part = _part(form, options, _STATE_PARTS)
    unit, decimals = _format_options(form, options)
    fields = {key: value for key, value in options.items() if key in _STATE_KEYS}
    estimate = _config(form, fields, context, needs_models="model" in fields).estimate()
    value = estimate.model_states_bytes if part == "total" else estimate.part(part)
    assert value is not None
    return bytes_text(value, unit, decimals)


def _model_arg(form: str, args: list[str], usage: str) -> str:
    if len(args) != 1:
        given = " ".join(args) or "nothing"
        raise InputError(f"'{form}' needs one model id: {usage} (given: {short(given)})")
    return args[0]


def memory_per_gpu(args: list[str], options: dict[str, str], context: FormContext) -> str:
    """``{{ memory-per-gpu llama-3.1-70b zero=3 dp=64 ... }}`` → ``24.9 GB`` (or ``fits``, ``12.3 GB free``)."""
    form = "memory-per-gpu"
    _check_options(form, options, (*(k for k in memory.FIELDS if k not in ("model", "params")), *_FORMAT_KEYS))
    model_id = _model_arg(form, args, "{{ memory-per-gpu MODEL [key=value ...] }}")
    part = _part(form, options, _ESTIMATE_PARTS)
    unit, decimals = _format_options(form, options)
    fields = {"model": model_id, **{k: v for k, v in options.items() if k not in _FORMAT_KEYS}}
    config = _config(form, fields, context, needs_models=True)
    if part in ("fits", "capacity", "headroom", "lowest-stage") and (
            config.preset is None or config.preset.memory_capacity_bytes is None):
        raise InputError(f"'{form}': part={part} needs preset= naming a GPU whose preset gives its memory capacity")
    if part == "lowest-stage":
        found = memory.lowest_fitting_stage(config)
        return "no ZeRO stage" if found is None else f"ZeRO stage {found[0]}"
    estimate = config.estimate()
    if part == "fits":
        return "fits" if estimate.fits else "does not fit"
    value = estimate.part(part)
    if value is None:
        raise InputError(f"'{form}': part={part} needs micro_batch= and seq_len= (activations)")
    if part == "headroom":
        return f"{bytes_text(abs(value), unit, decimals)} {'free' if value >= 0 else 'short'}"
    return bytes_text(value, unit, decimals)


def activations_per_layer(args: list[str], options: dict[str, str], context: FormContext) -> str:
    """``{{ activations-per-layer gpt-3-175b seq_len=2048 micro_batch=1 tp=8 }}`` → ``579 MB``."""
    form = "activations-per-layer"
    keys = ("seq_len", "micro_batch", "tp", "sequence_parallel", "recompute", "attention", "dropout")
    _check_options(form, options, (*keys, "unit", "decimals"))
    model_id = _model_arg(form, args, "{{ activations-per-layer MODEL seq_len=S micro_batch=B [key=value ...] }}")
    unit, decimals = _format_options(form, options)
    for key in ("seq_len", "micro_batch"):
        if key not in options:
            raise InputError(f"'{form}' needs {key}=")
    config = _config(form, {"model": model_id, **{k: v for k, v in options.items() if k in keys}}, context,
                     needs_models=True)
    assert config.model is not None and config.seq_len is not None and config.micro_batch is not None
    value = memory.activation_bytes_per_layer(
        config.model, seq_len=config.seq_len, micro_batch=config.micro_batch, tp=config.tp,
        sequence_parallel=config.sequence_parallel, recompute=config.recompute, attention=config.attention,
        dropout=config.dropout)
    return bytes_text(value, unit, decimals)


def bytes_per_param(args: list[str], options: dict[str, str], context: FormContext) -> str:
    """``{{ bytes-per-param }}`` → ``16``; ``fp32_grad_accum=true`` → ``20``; ``part=optimizer`` → ``12``."""
    form = "bytes-per-param"
    _check_options(form, options, ("optimizer", "fp32_grad_accum", "part"))
    if args:
        raise InputError(f"'{form}' takes key=value options only: {short(' '.join(args))}")
    part = _part(form, options, _STATE_PARTS)
    config = _config(form, {"params": 1e9, **{k: v for k, v in options.items() if k != "part"}}, context,
                     needs_models=False)
    per_param = memory.state_bytes_per_param(config.optimizer, fp32_grad_accum=config.fp32_grad_accum)
    return str(per_param.total if part == "total" else per_param.of(part))


def gpu_memory(args: list[str], options: dict[str, str], context: FormContext) -> str:
    """``{{ gpu-memory h100 }}`` → ``80 GB``; a capacity printed in GiB reads ``16 GiB (17.2 GB)``."""
    form = "gpu-memory"
    _check_options(form, options, ())
    if len(args) != 1:
        raise InputError(f"'{form}' needs one preset id: {{{{ gpu-memory ID }}}} (given: {short(' '.join(args))})")
    label = context.preset(args[0]).memory_capacity_label
    if label is None:
        raise InputError(f"'{form}': preset {args[0]} gives no memory capacity")
    return label


def layer_shape(args: list[str], options: dict[str, str], context: FormContext) -> str:
    """``{{ layer-shape gpt-3-175b }}`` → ``h = 12,288, a = 96 heads, L = 96 layers``: what the activation
    count reads from a model, with ``d_ff`` and the key/value heads where they differ from GPT's."""
    form = "layer-shape"
    _check_options(form, options, ())
    model = context.model(_model_arg(form, args, "{{ layer-shape MODEL }}"))
    parts = [f"h = {model.d_model:,}", f"a = {model.heads:,} heads"]
    if model.kv_heads != model.heads:
        parts.append(f"{model.kv_heads:,} key/value heads")
    if model.q_dim != model.d_model:
        parts.append(f"d_head = {model.head_dim:,}")
    if model.d_ff != 4 * model.d_model or model.mlp != "gelu":
        parts.append(f"d_ff = {model.d_ff:,} ({model.mlp.upper() if model.mlp == 'gelu' else 'SwiGLU'})")
    parts.append(f"L = {model.layers:,} layers")
    return ", ".join(parts)


FORMS: dict[str, Callable[[list[str], dict[str, str], FormContext], str]] = {
    "gpu-memory": gpu_memory,
    "layer-shape": layer_shape,
    "model-states": model_states,
    "memory-per-gpu": memory_per_gpu,
    "activations-per-layer": activations_per_layer,
    "bytes-per-param": bytes_per_param,
}


# --- fences -----------------------------------------------------------------------------------

#: What the chart's selects offer (an initial value must be one of them).
ZERO_CHOICES: tuple[int, ...] = memory.ZERO_STAGES
DP_CHOICES: tuple[int, ...] = tuple(2**i for i in range(11))  # 1 … 1024
TP_CHOICES: tuple[int, ...] = (1, 2, 4, 8, 16)
PP_CHOICES: tuple[int, ...] = (1, 2, 4, 8, 16)
MICRO_BATCH_CHOICES: tuple[int, ...] = (1, 2, 4, 8, 16, 32)
SEQ_LEN_CHOICES: tuple[int, ...] = tuple(2**i for i in range(9, 18))  # 512 … 131,072
CHOICES: Mapping[str, tuple[int, ...]] = {"zero": ZERO_CHOICES, "dp": DP_CHOICES, "tp": TP_CHOICES,
                                          "pp": PP_CHOICES, "micro_batch": MICRO_BATCH_CHOICES,
                                          "seq_len": SEQ_LEN_CHOICES}
_CONFIG_KEYS = ("zero", "dp", "tp", "pp", "micro_batch", "seq_len", "recompute", "sequence_parallel", "attention",
                "optimizer", "fp32_grad_accum", "dropout")
CHART_DEFAULTS: Mapping[str, Any] = {"zero": 0, "dp": 8, "tp": 1, "pp": 1, "micro_batch": 1, "seq_len": 2048,
                                     "recompute": "none", "sequence_parallel": False, "attention": "standard",
                                     "optimizer": "adam", "fp32_grad_accum": False, "dropout": True}


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


def _reader(fence: Fence, where: str, allowed: tuple[str, ...]) -> tuple[Any, dict[str, Any], dict[str, int]]:
    from ainotes.fences.body import BodyReader, load_body

    data, lines = load_body(fence, where)
    reader = BodyReader(fence, where, data, allowed, lines)
    key_lines = {str(k): fence.start_line + 1 + v for k, v in reader.lines.items() if k is not None}
    key_lines[""] = fence.start_line
    return reader, data, key_lines


def _id_list(reader: Any, data: Mapping[str, Any], key: str) -> tuple[str, ...] | None:
    value = data.get(key)
    if value is None or value == "all":
        return None
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value or not all(isinstance(v, str) and v for v in value):
        reader.fail(key, f"{short(key)} must be a list of ids or 'all': {short(value)}")
    return tuple(dict.fromkeys(value))


def _capacity_presets(reader: Any, data: Mapping[str, Any], presets: Mapping[str, Preset]) -> tuple[str, ...]:
    """The GPUs named (default: every preset that gives a capacity); each must give its capacity."""
    ids = _id_list(reader, data, "presets")
    if ids is None:
        ids = tuple(p.id for p in presets.values() if p.memory_capacity_bytes is not None)
        if not ids:
            reader.fail("presets", "no preset gives its memory capacity (memory_capacity_gb), so there is "
                                   "nothing to compare with")
        return ids
    for preset_id in ids:
        if preset_id not in presets:
            reader.fail("presets", f"unknown preset {short(preset_id)} (known: {', '.join(presets)})")
        if presets[preset_id].memory_capacity_bytes is None:
            reader.fail("presets", f"preset {preset_id} gives no memory capacity (add memory_capacity_gb to "
                                   "its file)")
    return ids


def _config_fields(reader: Any, data: Mapping[str, Any], *, choices: bool) -> dict[str, Any]:
    """The configuration keys as written, with booleans checked; with ``choices``, each number must be
    one the chart's select offers."""
    fields: dict[str, Any] = {}
    for key in _CONFIG_KEYS:
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
    allowed = ("models", "model", "presets", *_CONFIG_KEYS, "title", "id")
    reader, data, lines = _reader(fence, where, allowed)
    model_ids = _id_list(reader, data, "models")
    model_id = data.get("model")
    if model_id is not None and (not isinstance(model_id, str) or not model_id):
        reader.fail("model", f"'model' must be a model id: {short(model_id)}")
    if model_id is not None and model_ids is not None and model_id not in model_ids:
        reader.fail("model", f"'model' {short(model_id)} must be one of 'models': {', '.join(model_ids)}")
    fields = {**CHART_DEFAULTS, **_config_fields(reader, data, choices=True)}
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
                                 preset_ids=_capacity_presets(reader, data, presets), fields=fields,
                                 title=reader.text("title"), chart_id=reader.chart_id(), where=where, lines=lines)


def resolve_models(request: TrainingMemoryRequest, models: Mapping[str, ModelPreset]) -> tuple[
        tuple[ModelPreset, ...], ModelPreset]:
    """The models a chart offers and its initial one; unknown ids are an error at their line."""
    ids = request.model_ids if request.model_ids is not None else tuple(models)
    for model_id in ids:
        if model_id not in models:
            raise request.fail("models", f"unknown model {short(model_id)} (known: {', '.join(models)})")
    if not ids:
        raise request.fail("models", "no model presets to offer (presets/models/ is empty)")
    initial = request.model_id if request.model_id is not None else ids[0]
    if initial not in models:
        raise request.fail("model", f"unknown model {short(initial)} (known: {', '.join(models)})")
    return tuple(models[i] for i in ids), models[initial]


def initial_config(request: TrainingMemoryRequest, model: ModelPreset) -> TrainingMemory:
    """The chart's first view as a checked configuration; a field the model refuses is an error at its line."""
    try:
        return TrainingMemory.from_fields({"model": model.id, **request.fields}, {model.id: model}, {})
    except FieldError as exc:
        raise request.fail(exc.field, f"with model {model.id}: {exc}") from None


@dataclass(frozen=True)
class MemoryFitTableRequest:
    """A ``memory-fit-table`` fence: models (rows), GPUs (columns) and the configuration's fields."""

    model_ids: tuple[str, ...] | None
    preset_ids: tuple[str, ...]
    fields: Mapping[str, Any]
    where: str = ""
    lines: Mapping[str, int] | None = None

    def fail(self, key: str, message: str) -> InputError:
        line = (self.lines or {}).get(key, (self.lines or {}).get("", 0))
        return InputError(f"{self.where}:{line}: {message}")


FIT_TABLE_DEFAULTS: Mapping[str, Any] = {"dp": 8}


def parse_memory_fit_table(fence: Fence, where: str, presets: Mapping[str, Preset]) -> MemoryFitTableRequest:
    """``memory-fit-table`` fence: ``models`` (rows; default all), ``presets`` (columns; default every
    preset that gives a capacity), and the run: ``dp`` (default 8), ``tp``, ``pp``, ``micro_batch``
    with ``seq_len`` (activations; without them, model states only), ``recompute``,
    ``sequence_parallel``, ``attention``, ``optimizer``, ``fp32_grad_accum``, ``dropout``. Each cell:
    the lowest ZeRO stage at which the model fits that GPU, and its memory per GPU there."""
    allowed = ("models", "presets", *(k for k in _CONFIG_KEYS if k != "zero"))
    reader, data, lines = _reader(fence, where, allowed)
    model_ids = _id_list(reader, data, "models")
    fields = {**FIT_TABLE_DEFAULTS, **_config_fields(reader, data, choices=False)}
    try:  # everything but what needs the model, checked now
        TrainingMemory.from_fields({"params": 1e9, **{k: v for k, v in fields.items() if k in (
            "dp", "tp", "pp", "optimizer", "fp32_grad_accum")}}, {}, presets)
        if any(k in fields for k in ("micro_batch", "seq_len", *memory.ACTIVATION_FIELDS)):
            _check_activation_fields(fields)
    except FieldError as exc:
        reader.fail(exc.field, str(exc))
    return MemoryFitTableRequest(model_ids, _capacity_presets(reader, data, presets), fields, where, lines)


def _check_activation_fields(fields: Mapping[str, Any]) -> None:
    """micro_batch and seq_len together, and the activation keys' values, on a stand-in model."""
    if ("micro_batch" in fields) != ("seq_len" in fields):
        missing = "seq_len" if "micro_batch" in fields else "micro_batch"
        given = "micro_batch" if missing == "seq_len" else "seq_len"
        raise FieldError(f"'micro_batch' and 'seq_len' go together: {given!r} given, {missing!r} missing", missing)
    if "micro_batch" not in fields:
        stray = next(k for k in memory.ACTIVATION_FIELDS if k in fields)
        raise FieldError(f"{stray!r} is about activations: give 'micro_batch' and 'seq_len' too", stray)
    from ainotes.core.checks import one_of, whole_number

    whole_number(fields["micro_batch"], "'micro_batch'", "micro_batch", high=memory.MAX_MICRO_BATCH)
    whole_number(fields["seq_len"], "'seq_len'", "seq_len", high=memory.MAX_SEQ_LEN)
    one_of(fields.get("recompute", "none"), "'recompute'", "recompute", choices=memory.RECOMPUTE_MODES)
    one_of(fields.get("attention", "standard"), "'attention'", "attention", choices=memory.ATTENTIONS)


def memory_fit_table_html(request: MemoryFitTableRequest, models: Mapping[str, ModelPreset],
                          presets: Mapping[str, Preset]) -> str:
    """Models down, GPUs across; each cell the lowest ZeRO stage that fits and the memory per GPU there
    (every number from :mod:`ainotes.core.memory`), or why not. User strings escaped."""
    ids = request.model_ids if request.model_ids is not None else tuple(models)
    for model_id in ids:
        if model_id not in models:
            raise request.fail("models", f"unknown model {short(model_id)} (known: {', '.join(models)})")
    chosen = [presets[i] for i in request.preset_ids]
    # Short headers (the id and the capacity as printed), the full name on hover: six GPUs fit a page.
    head = "".join(
        f'<th scope="col"><abbr title="{html.escape(p.name, quote=True)}">{html.escape(p.id)}</abbr><br>'
        f"<small>{html.escape(p.memory_capacity_label or '')}</small></th>" for p in chosen)
    rows = []
    for model_id in ids:
        model = models[model_id]
        cells = []
        try:
            base = TrainingMemory.from_fields({"model": model.id, **request.fields}, {model.id: model}, {})
        except FieldError as exc:
            cells.append(f'<td colspan="{len(chosen)}"><small>{html.escape(str(exc))}</small></td>')
        else:
            for preset in chosen:
                found = memory.lowest_fitting_stage(replace(base, preset=preset))
                if found is None:
                    need = replace(base, zero=3).estimate().total_bytes
                    cells.append(f'<td><span class="ainotes-fit--no">no</span><br><small>stage 3 needs '
                                 f"{html.escape(bytes_text(need))}</small></td>")
                else:
                    stage, estimate = found
                    cells.append(f'<td><span class="ainotes-fit--yes">ZeRO {stage}</span><br>'
                                 f"<small>{html.escape(bytes_text(estimate.total_bytes))}</small></td>")
        rows.append(f'<tr><th scope="row">{html.escape(model.name)}<br>'
                    f"<small>{html.escape(units.count(model.params))} parameters</small></th>{''.join(cells)}</tr>")
    caption = html.escape(fit_table_caption(request.fields))
    return (f'<div class="ainotes-table ainotes-memory-fit"><table><thead><tr><th scope="col">model</th>{head}'
            f"</tr></thead><tbody>{''.join(rows)}</tbody></table></div>"
            f'<p class="ainotes-table-key">{caption}</p>')


def fit_table_caption(fields: Mapping[str, Any]) -> str:
    """What a fit table assumes, in words."""
    config = {**CHART_DEFAULTS, **FIT_TABLE_DEFAULTS, **fields}
    parts = [f"{config['dp']} data-parallel ranks", f"tensor parallel {config['tp']}",
             f"pipeline {config['pp']}", memory.OPTIMIZER_TITLES[config["optimizer"]]]
    if config["fp32_grad_accum"]:
        parts.append("FP32 gradient accumulation")
    if "micro_batch" in fields:
        parts.append(f"micro-batch {config['micro_batch']} × {int(config['seq_len']):,} tokens, recompute "
                     f"{config['recompute']}, {config['attention']} attention"
                     f"{', sequence parallel' if config['sequence_parallel'] else ''}"
                     f"{'' if config['dropout'] else ', no dropout'}")
        activations = "activations of the first pipeline stage included"
    else:
        activations = "model states only (no micro-batch given, so no activations)"
    return ("Each cell: the lowest ZeRO stage at which the run fits the GPU's memory, and its memory per GPU "
            f"there (GB = 10⁹ bytes). Assumed: {', '.join(parts)}; {activations}. Logits, fragmentation "
            "and buffers come on top.")
