"""What pages write about training memory: the ``training-memory`` and ``memory-fit-table`` fences,
and the inline forms below. Every number comes from :mod:`ainotes.core.memory`.

=================================================================  ==========================================
``{{ model-states (params=N | model=ID) [zero= dp= tp= pp=``       a run's model states per GPU, e.g.
``optimizer= fp32_grad_accum=] [part=P] [unit=U] [decimals=D] }}``  ``31.4 GB``; P: ``total`` (default),
                                                                   ``weights``, ``gradients``, ``optimizer``
``{{ memory-per-gpu MODEL [zero= dp= tp= pp= micro_batch=``        the whole estimate; P adds
``seq_len= recompute= sequence_parallel= attention= optimizer=``   ``activations``, ``model_states``,
``fp32_grad_accum= dropout= micro_batches= preset=] [part=P]``      ``logits``, ``capacity``, ``headroom``
``[unit=] [decimals=]``                                            (dropout= default: as the model was trained)
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

from collections.abc import Callable, Mapping
from typing import Any

from ainotes.base.errors import InputError
from ainotes.base.textcheck import short
from ainotes.base.units import BYTE_UNITS, bytes_text
from ainotes.core import memory
from ainotes.core.memory import TrainingMemory
from ainotes.core.models import ModelPreset
from ainotes.inline.formcontext import FormContext

MAX_DECIMALS = 6


# --- numbers as the notes write them ------------------------------------------------------------


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
        dropout=config.with_dropout)
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
        parts.append(f"d_ff = {model.d_ff:,} ({ {'gelu': 'GELU', 'swiglu': 'SwiGLU', 'geglu': 'GeGLU'}[model.mlp]})")
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
