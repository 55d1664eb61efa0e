"""What pages write about serving: inline forms, the ``inference`` and ``inference-table`` fences, and
the roofline fence's layer keys (``model``, ``phase``, ``batch``, ``context``, ...).

Parsers only validate and return requests (``ainotes.build.site`` draws them); forms return plain
text. Every number comes from :mod:`ainotes.core.inference`.

==============================================================================  ===============================
``{{ kv-cache MODEL [kv=P] [tokens=N] [UNIT] [digits=N] }}``                    one sequence's KV cache at N
                                                                                tokens (default 1; windows
                                                                                applied): ``327,680 bytes``; UNIT one of
                                                                                bytes, kB, MB, GB, KiB, MiB, GiB
``{{ weight-bytes MODEL [weights=P] [tp=N] [UNIT] [digits=N] }}``               the weights (per chip with tp=)
``{{ decode-step MODEL GPU batch= context= [weights=] [kv=] [compute=]``        one decode step: ``16.6 ms``;
``[tp=] [link=] [part=P] [digits=N] }}``                                        P: time, tokens-per-second,
                                                                                bound, kv, weights, compute,
                                                                                allreduce, algorithm (the
                                                                                all-reduce's), experts (read
                                                                                per MoE layer)
``{{ b-crit GPU [weights=P] [compute=P] [model=ID] [digits=N] }}``              B_crit = (F/W)·(w/2): ``295``;
                                                                                with model=, the batch at which
                                                                                that model turns compute-bound
                                                                                (a mixture: its experts')
``{{ max-batch MODEL GPU context= [weights=] [kv=] [tp=] [link=] }}``           the largest batch that fits
``{{ prefill MODEL GPU prompt= [batch=] [weights=] [compute=] [tp=] [link=]``   prefill time (``part=bound``,
``[part=P] [digits=N] }}``                                                      ``flops``)
==============================================================================  ===============================

Dtypes (P) default to bf16; ``link=`` defaults to the GPU preset's node link
(:func:`ainotes.core.inference.tp_link`: the link the group of tp= chips crosses).
Every form is strict: an unknown option, an extra word, a misspelt key is one line naming what
is allowed; a GPU without the needed figure (no capacity, no FP8 path) says so.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ainotes.base import units
from ainotes.base.errors import InputError
from ainotes.base.textcheck import short
from ainotes.core import checks, inference
from ainotes.core.checks import FieldError
from ainotes.core.hardware import Preset
from ainotes.core.models import ModelPreset
from ainotes.inline.cost import seconds_text
from ainotes.inline.formcontext import FormContext

# --- shared -------------------------------------------------------------------------------------

# A form's option → the setup field it sets.
_OPTION_FIELDS = {"batch": "batch", "context": "context", "prompt": "prompt", "weights": "weights_dtype",
                  "kv": "kv_dtype", "compute": "compute_dtype", "tp": "tp", "link": "link"}
_FIELD_OPTIONS = {field: option for option, field in _OPTION_FIELDS.items()}
BYTE_UNITS = {"bytes": 1.0, "kB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12, "KiB": 2.0**10, "MiB": 2.0**20,
              "GiB": 2.0**30}
DEFAULT_DIGITS = 3


def _form_label(key: str) -> str:
    return f"{_FIELD_OPTIONS.get(key, key)}="


def _check_options(form: str, options: Mapping[str, str], allowed: Sequence[str]) -> None:
    unknown = sorted(set(options) - set(allowed))
    if unknown:
        raise InputError(f"'{form}' does not take {unknown[0]}= (allowed: {', '.join(f'{a}=' for a in allowed)})")


def _digits(options: Mapping[str, str]) -> int:
    return checks.whole_number(options.get("digits", DEFAULT_DIGITS), "digits=", "digits", low=1, high=6)


def number_text(value: float, digits: int = DEFAULT_DIGITS) -> str:
    """``295``, ``3,860``, ``0.0412``: ``digits`` significant figures, thousands grouped."""
    text = units.significant(value, digits)
    whole, dot, fraction = text.partition(".")
    return f"{int(whole):,}{dot}{fraction}" if whole.lstrip("-").isdigit() and abs(value) >= 1000 else text


def bytes_text(value: float, unit: str | None = None, digits: int = DEFAULT_DIGITS) -> str:
    """``327,680 bytes`` below a megabyte, else ``141 GB``; or in the ``unit`` asked for."""
    if unit is None:
        if value < 1e6:
            return f"{units.fixed(value, grouping=True)} bytes"
        return units.si(value, "B", digits)
    if unit == "bytes":
        return f"{number_text(value, max(digits, len(str(int(value)))))} bytes"
    return f"{number_text(value / BYTE_UNITS[unit], digits)} {unit}"


def _positional(form: str, args: list[str], names: Sequence[str], units_allowed: bool = False
                ) -> tuple[list[str], str | None]:
    """The form's positional ids, and a byte unit among them where the form takes one."""
    unit = None
    if units_allowed:
        given = [a for a in args if a in BYTE_UNITS]
        if len(given) > 1:
            raise InputError(f"'{form}' takes one unit: {' '.join(given)}")
        unit = given[0] if given else None
        args = [a for a in args if a not in BYTE_UNITS]
    if len(args) != len(names):
        extra = f" or a unit ({', '.join(BYTE_UNITS)})" if units_allowed else ""
        raise InputError(f"'{form}' needs {' '.join(names)}{extra}: {short(' '.join(args)) if args else 'nothing'}")
    return args, unit


def _setup(form: str, model_id: str, preset_id: str, options: Mapping[str, str], context: FormContext,
           ) -> inference.InferenceSetup:
    fields: dict[str, Any] = {"model": model_id, "preset": preset_id}
    fields.update({_OPTION_FIELDS[k]: v for k, v in options.items() if k in _OPTION_FIELDS})
    try:
        return inference.InferenceSetup.from_fields(
            fields, models=context.models(), presets=context.presets, links=context.links, label=_form_label)
    except InputError as exc:
        raise InputError(f"'{form}': {exc}") from None


def _model(form: str, model_id: str, context: FormContext) -> ModelPreset:
    try:
        return context.model(model_id)
    except InputError as exc:
        raise InputError(f"'{form}': {exc}") from None


def _preset(form: str, preset_id: str, context: FormContext) -> Preset:
    try:
        return context.preset(preset_id)
    except InputError as exc:
        raise InputError(f"'{form}': {exc}") from None


def _dtype(form: str, options: Mapping[str, str], key: str, choices: Sequence[str]) -> str:
    value = options.get(key, inference.DEFAULT_DTYPE)
    if value not in choices:
        raise InputError(f"'{form}': {key}= must be one of {', '.join(choices)}: {short(value)}")
    return value


# --- forms --------------------------------------------------------------------------------------


def kv_cache(args: list[str], options: dict[str, str], context: FormContext) -> str:
    form = "kv-cache"
    _check_options(form, options, ("kv", "tokens", "digits"))
    (model_id,), unit = _positional(form, args, ("MODEL",), units_allowed=True)
    model = _model(form, model_id, context)
    kv = _dtype(form, options, "kv", inference.STORAGE_DTYPES)
    tokens = checks.whole_number(options.get("tokens", 1), "tokens=", "tokens", high=inference.MAX_CONTEXT)
    # One sequence's cache at that many tokens: each windowed layer holds at most its window.
    return bytes_text(inference.kv_cache_bytes(model, tokens, kv), unit, _digits(options))


def weight_bytes(args: list[str], options: dict[str, str], context: FormContext) -> str:
    form = "weight-bytes"
    _check_options(form, options, ("weights", "tp", "digits"))
    (model_id,), unit = _positional(form, args, ("MODEL",), units_allowed=True)
    model = _model(form, model_id, context)
    weights = _dtype(form, options, "weights", inference.STORAGE_DTYPES)
    try:
        tp = inference.check_tp(model, options.get("tp", 1), name="tp=")
    except InputError as exc:
        raise InputError(f"'{form}': {exc}") from None
    return bytes_text(inference.weights_bytes(model, weights) / tp, unit, _digits(options))


_STEP_PARTS = ("time", "tokens-per-second", "bound", "kv", "weights", "compute", "allreduce", "algorithm", "experts")


def decode_step(args: list[str], options: dict[str, str], context: FormContext) -> str:
    form = "decode-step"
    _check_options(form, options, ("batch", "context", "weights", "kv", "compute", "tp", "link", "part", "digits"))
    (model_id, preset_id), _ = _positional(form, args, ("MODEL", "GPU"))
    for key in ("batch", "context"):
        if key not in options:
            raise InputError(f"'{form}' needs {key}=")
    part = options.get("part", "time")
    if part not in _STEP_PARTS:
        raise InputError(f"'{form}': part= must be one of {', '.join(_STEP_PARTS)}: {short(part)}")
    step = _setup(form, model_id, preset_id, options, context).decode_step()
    digits = _digits(options)
    if part == "bound":
        return f"{step.bound}-bound"
    if part == "tokens-per-second":
        return f"{number_text(step.tokens_per_s, digits)} tokens/s"
    if part == "algorithm":  # the all-reduce algorithm the α–β model finds fastest at this batch
        return inference.cc.short_title("all-reduce", step.allreduce_algorithm) if step.allreduce_algorithm \
            else "none (one chip)"
    if part == "experts":  # routed experts the batch reaches per MoE layer
        return number_text(step.experts_touched, digits)
    seconds = {"time": step.time_s, "kv": step.kv_s, "weights": step.weights_s, "compute": step.compute_s,
               "allreduce": step.allreduce_s}[part]
    return _seconds(seconds, digits)


def _seconds(seconds: float, digits: int) -> str:
    if digits == DEFAULT_DIGITS:
        return seconds_text(seconds)
    for scale, unit in ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns")):
        if seconds >= scale or unit == "ns":
            return f"{units.significant(seconds / scale, digits)} {unit}"
    raise AssertionError("unreachable")


def b_crit(args: list[str], options: dict[str, str], context: FormContext) -> str:
    form = "b-crit"
    _check_options(form, options, ("weights", "compute", "model", "digits"))
    (preset_id,), _ = _positional(form, args, ("GPU",))
    preset = _preset(form, preset_id, context)
    weights = _dtype(form, options, "weights", inference.STORAGE_DTYPES)
    compute = _dtype(form, options, "compute", inference.COMPUTE_DTYPES)
    try:
        if "model" in options:
            value = inference.compute_bound_batch(_model(form, options["model"], context), preset, weights, compute)
        else:
            value = inference.b_crit(preset, weights, compute)
    except FieldError as exc:
        raise InputError(f"'{form}': {str(exc).replace(repr('compute_dtype'), 'compute=')}") from None
    return number_text(value, _digits(options))


def max_batch(args: list[str], options: dict[str, str], context: FormContext) -> str:
    form = "max-batch"
    _check_options(form, options, ("context", "weights", "kv", "compute", "tp", "link"))
    (model_id, preset_id), _ = _positional(form, args, ("MODEL", "GPU"))
    if "context" not in options:
        raise InputError(f"'{form}' needs context=")
    one = _setup(form, model_id, preset_id, options, context)
    largest = one.max_batch
    if largest is None:
        raise InputError(f"'{form}': preset {preset_id} gives no memory capacity (memory_capacity_gb), so no batch "
                         "can be said to fit")
    return f"{largest:,}"


_PREFILL_PARTS = ("time", "bound", "flops")


def prefill(args: list[str], options: dict[str, str], context: FormContext) -> str:
    form = "prefill"
    _check_options(form, options, ("prompt", "batch", "weights", "kv", "compute", "tp", "link", "part", "digits"))
    (model_id, preset_id), _ = _positional(form, args, ("MODEL", "GPU"))
    if "prompt" not in options:
        raise InputError(f"'{form}' needs prompt=")
    part = options.get("part", "time")
    if part not in _PREFILL_PARTS:
        raise InputError(f"'{form}': part= must be one of {', '.join(_PREFILL_PARTS)}: {short(part)}")
    fields = dict(options)
    fields.setdefault("context", options["prompt"])
    fill = _setup(form, model_id, preset_id, fields, context).prefill()
    if part == "bound":
        return f"{fill.bound}-bound"
    if part == "flops":
        return units.si(fill.flops, "FLOP", _digits(options))
    return _seconds(fill.time_s, _digits(options))


FORMS: dict[str, Callable[[list[str], dict[str, str], FormContext], str]] = {
    "kv-cache": kv_cache,
    "weight-bytes": weight_bytes,
    "decode-step": decode_step,
    "b-crit": b_crit,
    "max-batch": max_batch,
    "prefill": prefill,
}
