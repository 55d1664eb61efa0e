"""What pages write about serving: inline forms, the ``inference`` and ``inference-table`` fences, and
the roofline fence's layer keys (``model``, ``phase``, ``batch``, ``context``, ...).

Parsers only validate and return requests (``ainotes.build.site`` draws them); forms return plain
text. Every number comes from :mod:`ainotes.core.inference`.

==============================================================================  ===============================
``{{ kv-cache MODEL [kv=P] [tokens=N] [UNIT] [digits=N] }}``                    KV cache of N tokens (default 1):
                                                                                ``327,680 bytes``; UNIT one of
                                                                                bytes, kB, MB, GB, KiB, MiB, GiB
``{{ weight-bytes MODEL [weights=P] [tp=N] [UNIT] [digits=N] }}``               the weights (per chip with tp=)
``{{ decode-step MODEL GPU batch= context= [weights=] [kv=] [compute=]``        one decode step: ``16.6 ms``;
``[tp=] [link=] [part=P] [digits=N] }}``                                        P: time, tokens-per-second,
                                                                                bound, kv, weights, compute,
                                                                                allreduce
``{{ b-crit GPU [weights=P] [compute=P] [model=ID] [digits=N] }}``              B_crit = (F/W)·(w/2): ``295``;
                                                                                with model=, the batch at which
                                                                                that model turns compute-bound
``{{ max-batch MODEL GPU context= [weights=] [kv=] [tp=] [link=] }}``           the largest batch that fits
``{{ prefill MODEL GPU prompt= [batch=] [weights=] [compute=] [tp=] [link=]``   prefill time (``part=bound``,
``[part=P] [digits=N] }}``                                                      ``flops``)
==============================================================================  ===============================

Dtypes (P) default to bf16; ``link=`` defaults to the GPU's NVLink (:func:`ainotes.core.inference.default_link_id`).
Every form is strict: an unknown option, an extra word, a misspelt key is one line naming what
is allowed; a GPU without the needed figure (no capacity, no FP8 path) says so.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ainotes.base import units
from ainotes.base.errors import InputError
from ainotes.base.textcheck import short
from ainotes.core import checks, inference
from ainotes.core.checks import FieldError
from ainotes.core.hardware import Preset
from ainotes.core.kernels import Kernel
from ainotes.core.models import ModelPreset
from ainotes.fences.body import Fence
from ainotes.fences.cost_notes import seconds_text
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
    return bytes_text(inference.kv_bytes_per_token(model, kv) * tokens, unit, _digits(options))


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


_STEP_PARTS = ("time", "tokens-per-second", "bound", "kv", "weights", "compute", "allreduce")


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


# --- the roofline fence's layer keys --------------------------------------------------------------

LAYER_KEYS = ("model", "phase", "batch", "context", "weights_dtype", "kv_dtype", "compute_dtype", "tp")


@dataclass(frozen=True)
class LayerRequest:
    """A roofline fence's ``model:`` and its settings: one layer's kernels (:func:`inference.layer_kernels`).

    ``where`` is the page and line of the ``model`` key, for an error found when the chart is
    drawn (an unknown model, a TP degree the model's heads do not allow)."""

    model_id: str
    phase: str = "decode"
    batch: int = 1
    context: int = 1
    weights_dtype: str = inference.DEFAULT_DTYPE
    kv_dtype: str = inference.DEFAULT_DTYPE
    compute_dtype: str = inference.DEFAULT_DTYPE
    tp: int = 1
    where: str = ""


def parse_layer(reader: Any, data: Mapping[str, Any]) -> LayerRequest | None:
    """The layer keys of a roofline fence body, checked (``reader``: :class:`ainotes.fences.directives.BodyReader`);
    ``None`` when the body names no model. The other keys need ``model``."""
    if "model" not in data:
        for key in LAYER_KEYS:
            if key in data:
                reader.fail(key, f"{short(key)} goes with 'model' (the model preset whose layer to place)")
        return None
    model_id = data["model"]
    if not isinstance(model_id, str) or not model_id:
        reader.fail("model", f"'model' must be a model preset id such as llama-3.1-70b: {short(model_id)}")
    phase = data.get("phase", "decode")
    if phase not in inference.PHASES:
        reader.fail("phase", f"'phase' must be one of {', '.join(inference.PHASES)}: {short(phase)}")
    dtypes = {}
    for key, choices in (("weights_dtype", inference.STORAGE_DTYPES), ("kv_dtype", inference.STORAGE_DTYPES),
                         ("compute_dtype", inference.COMPUTE_DTYPES)):
        dtypes[key] = reader.checked(checks.one_of, key, data.get(key, inference.DEFAULT_DTYPE), choices=choices)
    line = reader.lines.get("model")
    page_line = reader.fence.start_line if line is None else reader.fence.start_line + 1 + line
    return LayerRequest(
        model_id=model_id, phase=phase,
        batch=reader.integer("batch", 1, 1, inference.MAX_BATCH),
        context=reader.integer("context", 1, 1, inference.MAX_CONTEXT),
        tp=reader.integer("tp", 1, 1, inference.MAX_TP), where=f"{reader.where}:{page_line}", **dtypes,
    )


def layer_request_kernels(request: LayerRequest, models: Mapping[str, ModelPreset],
                          kernels: Sequence[Kernel] = (), limit: int | None = None) -> tuple[Kernel, ...]:
    """The fence's own ``kernels`` followed by the layer's; errors name the ``model`` key's line."""
    try:
        if request.model_id not in models:
            raise InputError(f"unknown model {short(request.model_id)} (known: {', '.join(sorted(models))})")
        layer = inference.layer_kernels(
            models[request.model_id], request.phase, batch=request.batch, context=request.context,
            weights_dtype=request.weights_dtype, kv_dtype=request.kv_dtype, compute_dtype=request.compute_dtype,
            tp=request.tp)
    except InputError as exc:
        raise InputError(f"{request.where}: {exc}") from None
    combined = (*kernels, *layer)
    if limit is not None and len(combined) > limit:
        raise InputError(f"{request.where}: a roofline shows at most {limit} kernels: {len(kernels)} listed and "
                         f"{len(layer)} in the layer of {request.model_id}")
    return combined


def layer_title(request: LayerRequest, models: Mapping[str, ModelPreset]) -> str:
    """``Llama 3.1 70B, one decode layer: batch 64, context 4,096, TP 8``."""
    model = models[request.model_id]
    what = (f"batch {request.batch:,}, context {request.context:,}" if request.phase == "decode"
            else f"{request.batch:,} × {request.context:,}-token prompts")
    tp = f", TP {request.tp}" if request.tp > 1 else ""
    return f"{model.name}, one {request.phase} layer: {what}{tp}"


# --- the inference fence (a chart) ----------------------------------------------------------------

#: The chart's weight/KV choices, as ``WEIGHTS/KV``.
PRECISION_CHOICES = ("bf16/bf16", "fp8/bf16", "fp8/fp8", "int4/fp8")
CONTEXT_CHOICES = (1024, 4096, 8192, 32768, 131072)
TP_CHOICES = (1, 2, 4, 8, 16)
METRICS = ("time", "tokens-per-second")
MAX_MODELS_PER_CHART = 8
MAX_CHOICES = 8


@dataclass(frozen=True)
class InferenceChartRequest:
    model_ids: tuple[str, ...] | None  # None: every model preset
    preset_ids: tuple[str, ...]
    context: int
    contexts: tuple[int, ...]
    precision: str
    precisions: tuple[str, ...]
    compute_dtype: str
    tp: int
    tps: tuple[int, ...]
    link_id: str | None
    metric: str
    title: str | None
    chart_id: str | None
    where: str  # page:line of the fence, or of its 'models' key
    link_where: str = ""  # page:line of its 'link' key, or of the fence


_CHART_KEYS = ("models", "presets", "context", "contexts", "precision", "precisions", "compute_dtype", "tp",
               "tps", "link", "metric", "title", "id")


def parse_inference_chart(fence: Fence, where: str, presets: Mapping[str, Preset]) -> InferenceChartRequest:
    """``inference`` fence: models (ids; default every model preset), presets (GPU ids; default every
    preset with a rate at ``compute_dtype``), context and contexts (the context select), precision and
    precisions (``WEIGHTS/KV`` pairs), compute_dtype (default bf16), tp and tps (the TP select), link
    (default each GPU's NVLink), metric (``time`` or ``tokens-per-second``), title, id."""
    from ainotes.fences.body import BodyReader, load_body

    data, lines = load_body(fence, where)
    reader = BodyReader(fence, where, data, _CHART_KEYS, lines)
    compute = reader.checked(checks.one_of, "compute_dtype", data.get("compute_dtype", inference.DEFAULT_DTYPE),
                             choices=inference.COMPUTE_DTYPES)
    preset_ids = _presets_with_rate(reader, data, presets, compute)
    model_ids = _model_ids(reader, data)
    contexts = _choices(reader, data, "contexts", CONTEXT_CHOICES,
                        lambda v: reader.checked(checks.whole_number, "contexts", v, high=inference.MAX_CONTEXT))
    context = reader.integer("context", contexts[0] if 4096 not in contexts else 4096, 1, inference.MAX_CONTEXT)
    if context not in contexts:
        contexts = tuple(sorted({*contexts, context}))
    precisions = _choices(reader, data, "precisions", PRECISION_CHOICES, lambda v: _precision(reader, "precisions", v))
    precisions = tuple(p for p in precisions if _fits_compute(p, compute))
    if not precisions:
        reader.fail("precisions", f"no weights/KV choice is as narrow as the {compute} compute dtype")
    precision = _precision(reader, "precision", data.get("precision", precisions[0]))
    if not _fits_compute(precision, compute):
        reader.fail("precision", f"'precision' {precision}: the weights are wider than the {compute} compute dtype")
    if precision not in precisions:
        precisions = (precision, *precisions)
    tps = _choices(reader, data, "tps", TP_CHOICES,
                   lambda v: reader.checked(checks.whole_number, "tps", v, high=inference.MAX_TP))
    tp = reader.integer("tp", tps[0], 1, inference.MAX_TP)
    if tp not in tps:
        tps = tuple(sorted({*tps, tp}))
    link_id = data.get("link")
    if link_id is not None and (not isinstance(link_id, str) or not link_id):
        reader.fail("link", f"'link' must be a link preset id such as nvlink-4: {short(link_id)}")
    metric = data.get("metric", "time")
    if metric not in METRICS:
        reader.fail("metric", f"'metric' must be one of {', '.join(METRICS)}: {short(metric)}")
    return InferenceChartRequest(
        model_ids=model_ids, preset_ids=preset_ids, context=context, contexts=contexts, precision=precision,
        precisions=precisions, compute_dtype=compute, tp=tp, tps=tps, link_id=link_id, metric=metric,
        title=reader.text("title"), chart_id=reader.chart_id(), where=_key_where(fence, where, lines, data, "models"),
        link_where=_key_where(fence, where, lines, data, "link"),
    )


def _key_where(fence: Fence, where: str, lines: Mapping[int, Mapping[object, int]], data: Mapping[str, Any],
               key: str) -> str:
    """``page:line`` of ``key`` in the fence body, or of the fence where the body lacks it."""
    line = lines.get(id(data), {}).get(key)
    return f"{where}:{fence.start_line if line is None else fence.start_line + 1 + line}"


def _presets_with_rate(reader: Any, data: Mapping[str, Any], presets: Mapping[str, Preset], compute: str
                       ) -> tuple[str, ...]:
    """The fence's ``presets`` (each with a rate at the compute dtype), else every preset with one."""
    with_rate = tuple(i for i, p in presets.items() if p.peak_tflops(compute, unit="tensor") is not None)
    if "presets" not in data:
        if not with_rate:
            reader.fail("compute_dtype", f"no preset gives a {compute} tensor rate")
        return with_rate
    preset_ids: tuple[str, ...] = reader.preset_ids(tuple(presets))
    for preset_id in preset_ids:
        try:
            inference.peak_flops_per_s(presets[preset_id], compute, name="'compute_dtype'")
        except InputError as exc:
            reader.fail("presets", str(exc))
    return preset_ids


def _model_ids(reader: Any, data: Mapping[str, Any]) -> tuple[str, ...] | None:
    """The fence's ``models`` ids (checked against the model presets when drawn), or ``None``: every model."""
    if "models" not in data:
        return None
    raw = data["models"]
    raw = [raw] if isinstance(raw, str) else raw
    if not isinstance(raw, list) or not raw or not all(isinstance(m, str) and m for m in raw):
        reader.fail("models", f"'models' must be a list of model preset ids: {short(data['models'])}")
    if len(raw) > MAX_MODELS_PER_CHART:
        reader.fail("models", f"'models' may name at most {MAX_MODELS_PER_CHART}: {len(raw)}")
    return tuple(dict.fromkeys(raw))


def chart_links(request: InferenceChartRequest, presets: Sequence[Preset], links: Mapping[str, Any]
                ) -> dict[str, Any]:
    """Each GPU's link for its all-reduces: the fence's ``link``, else :func:`inference.default_link_id`."""
    chosen = {}
    for preset in presets:
        link_id = request.link_id
        try:
            if link_id is None:
                link_id = inference.default_link_id(preset, links)
            if link_id not in links:
                raise InputError(f"unknown link {short(link_id)} (known: {', '.join(sorted(links)) or 'none'})")
        except InputError as exc:
            raise InputError(f"{request.link_where or request.where}: {exc}") from None
        chosen[preset.id] = links[link_id]
    return chosen


def chart_caption(request: InferenceChartRequest, model: ModelPreset, preset: Preset, links: Mapping[str, Any]
                  ) -> str:
    """The chart's caption, with the figures of its initial view (:func:`ainotes.charts.inference.caption_html`)."""
    from ainotes.charts import inference as inference_chart

    weights, kv = request.precision.split("/")
    tp = request.tp if _tp_allowed(model, request.tp) else 1
    one = inference.InferenceSetup(model, preset, batch=1, context=request.context, weights_dtype=weights,
                                   kv_dtype=kv, compute_dtype=request.compute_dtype, tp=tp,
                                   link=links[preset.id])
    return inference_chart.caption_html(model, preset, one, links[preset.id] if max(request.tps) > 1 else None)


def _choices(reader: Any, data: Mapping[str, Any], key: str, default: tuple, check: Callable[[Any], Any]) -> tuple:
    if key not in data:
        return default
    raw = data[key]
    if not isinstance(raw, list) or not raw:
        reader.fail(key, f"{short(key)} must be a non-empty list: {short(raw)}")
    if len(raw) > MAX_CHOICES:
        reader.fail(key, f"{short(key)} may list at most {MAX_CHOICES}: {len(raw)}")
    return tuple(dict.fromkeys(check(v) for v in raw))


def _precision(reader: Any, key: str, value: Any) -> str:
    if isinstance(value, str) and value.count("/") == 1:
        weights, kv = value.split("/")
        if weights in inference.STORAGE_DTYPES and kv in inference.STORAGE_DTYPES:
            return value
    reader.fail(key, f"{short(key)} must be WEIGHTS/KV dtypes such as fp8/bf16 "
                     f"(each one of {', '.join(inference.STORAGE_DTYPES)}): {short(value)}")
    raise AssertionError("unreachable")


def _fits_compute(precision: str, compute: str) -> bool:
    from ainotes.core.kernels import DTYPE_BYTES, STORAGE_DTYPE_BYTES

    return STORAGE_DTYPE_BYTES[precision.split("/", maxsplit=1)[0]] <= DTYPE_BYTES[compute]


def precision_label(precision: str) -> str:
    """``8-bit weights, BF16 KV cache``."""
    weights, kv = precision.split("/")

    def word(dtype: str) -> str:
        return {"fp8": "8-bit", "int8": "8-bit", "int4": "4-bit", "fp4": "4-bit"}.get(dtype, dtype.upper())

    return f"{word(weights)} weights, {word(kv)} KV cache"


# --- the inference-table fence ----------------------------------------------------------------------

AUTO_TP = "auto"
AUTO_TP_CHOICES = (1, 2, 4, 8, 16, 32, 64)


@dataclass(frozen=True)
class InferenceTableRequest:
    model_ids: tuple[str, ...] | None
    preset_ids: tuple[str, ...]
    context: int
    weights_dtype: str
    kv_dtype: str
    compute_dtype: str
    tp: int | str
    link_id: str | None
    where: str


def parse_inference_table(fence: Fence, where: str, presets: Mapping[str, Preset]) -> InferenceTableRequest:
    """``inference-table`` fence: models (default every model preset), presets (default every preset with a
    rate at ``compute_dtype``), context (default 4096), weights_dtype, kv_dtype, compute_dtype (default bf16),
    tp (a number, or ``auto``, the default: the fewest chips, a power of two up to 64, that hold the weights
    and one sequence), link."""
    from ainotes.fences.body import BodyReader, load_body

    data, lines = load_body(fence, where)
    reader = BodyReader(fence, where, data, ("models", "presets", "context", "weights_dtype", "kv_dtype",
                                          "compute_dtype", "tp", "link"), lines)
    dtypes = {}
    for key, choices in (("weights_dtype", inference.STORAGE_DTYPES), ("kv_dtype", inference.STORAGE_DTYPES),
                         ("compute_dtype", inference.COMPUTE_DTYPES)):
        dtypes[key] = reader.checked(checks.one_of, key, data.get(key, inference.DEFAULT_DTYPE), choices=choices)
    preset_ids = _presets_with_rate(reader, data, presets, dtypes["compute_dtype"])
    model_ids = _model_ids(reader, data)
    tp: int | str = data.get("tp", AUTO_TP)
    if tp != AUTO_TP:
        tp = reader.integer("tp", 1, 1, inference.MAX_TP)
    link_id = data.get("link")
    if link_id is not None and (not isinstance(link_id, str) or not link_id):
        reader.fail("link", f"'link' must be a link preset id such as nvlink-4: {short(link_id)}")
    return InferenceTableRequest(
        model_ids=model_ids, preset_ids=preset_ids,
        context=reader.integer("context", 4096, 1, inference.MAX_CONTEXT), tp=tp, link_id=link_id,
        where=_key_where(fence, where, lines, data, "models"), **dtypes,
    )


def resolve_models(model_ids: tuple[str, ...] | None, models: Mapping[str, ModelPreset], where: str
                   ) -> tuple[ModelPreset, ...]:
    """The fence's models (every model preset when it names none); an unknown id is one line at ``where``."""
    if model_ids is None:
        return tuple(models.values())
    for model_id in model_ids:
        if model_id not in models:
            raise InputError(f"{where}: unknown model {short(model_id)} (known: {', '.join(sorted(models))})")
    return tuple(models[m] for m in model_ids)


@dataclass(frozen=True)
class TableRow:
    """One model on one GPU: how many chips, where it turns compute-bound, how large a batch fits."""

    model: ModelPreset
    preset: Preset
    setup: inference.InferenceSetup | None  # None: no TP degree tried holds it
    tried_up_to: int = 0

    @property
    def limit(self) -> str:
        """``memory`` when the KV cache fills the chip before the batch turns compute-bound, ``compute``
        when it does not, ``unknown`` without a capacity, ``weights`` when nothing fits."""
        if self.setup is None:
            return "weights"
        largest = self.setup.max_batch
        if largest is None:
            return "unknown"
        return "memory" if largest < self.setup.compute_bound_batch else "compute"


def table_rows(request: InferenceTableRequest, models: Sequence[ModelPreset], presets: Mapping[str, Preset],
               links: Callable[[], Mapping[str, Any]]) -> list[TableRow]:
    """Per model and GPU, the setup the table reports: ``tp`` chips, or with ``auto`` the fewest that fit."""
    rows = []
    for model in models:
        for preset_id in request.preset_ids:
            preset = presets[preset_id]
            tried = [request.tp] if isinstance(request.tp, int) else [
                t for t in AUTO_TP_CHOICES if _tp_allowed(model, t)]
            chosen = None
            for tp in tried:
                fields = {"model": model.id, "preset": preset.id, "context": request.context, "tp": tp,
                          "weights_dtype": request.weights_dtype, "kv_dtype": request.kv_dtype,
                          "compute_dtype": request.compute_dtype, "link": request.link_id}
                try:
                    one = inference.InferenceSetup.from_fields(
                        {k: v for k, v in fields.items() if v is not None}, models={model.id: model},
                        presets=presets, links=links)
                except InputError as exc:
                    raise InputError(f"{request.where}: {model.id} on {preset.id}: {exc}") from None
                chosen = one
                if one.max_batch is None or one.max_batch >= 1 or isinstance(request.tp, int):
                    break
                chosen = None
            rows.append(TableRow(model, preset, chosen, tried[-1] if tried else 0))
    return rows


def _tp_allowed(model: ModelPreset, tp: int) -> bool:
    try:
        inference.check_tp(model, tp)
    except InputError:
        return False
    return True


def inference_table_html(rows: Sequence[TableRow], request: InferenceTableRequest) -> str:
    """One row per model and GPU (so a new preset adds rows, never a column that widens the table past
    the page); each cell the largest batch whose KV cache fits at the context and the batch past which
    the matmuls turn compute-bound, the one that limits first in bold (and the chips, when the fence
    lets each cell take the fewest that hold the model). Names escaped."""
    from ainotes.html.tables import _table

    body = []
    previous = None
    for row in rows:
        model = row.model
        # The model's name once, at its first row; its other rows leave the cell empty.
        name = (f"{html.escape(model.name)}<br><code>{html.escape(model.id)}</code>"
                if model.id != previous else "")
        previous = model.id
        preset = f'{html.escape(row.preset.name)}<br><code>{html.escape(row.preset.id)}</code>'
        body.append([name, preset, _table_cell(row, request)])
    head = ["model", "GPU", "largest batch that fits; compute-bound past"]
    return _table(head, body, "ainotes-inference", numeric_from=2)


def _table_cell(row: TableRow, request: InferenceTableRequest) -> str:
    one = row.setup
    if one is None or one.max_batch == 0:
        chips = row.tried_up_to if one is None else one.tp
        return f'<span class="ainotes-bound">weights do not fit {chips} chip{"s" if chips > 1 else ""}</span>'
    star = html.escape(number_text(one.compute_bound_batch))
    largest = one.max_batch
    fits = "capacity not given" if largest is None else f"fits {largest:,}"
    compute = f"compute past {star}"
    if row.limit == "memory":
        fits = f"<strong>{fits}</strong>"
    elif row.limit == "compute":
        compute = f"<strong>{compute}</strong>"
    on = f"<br><small>{one.tp} chip{'s' if one.tp > 1 else ''}</small>" if request.tp == AUTO_TP else ""
    return f"{fits}<br>{compute}{on}"
