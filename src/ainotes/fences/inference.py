"""``inference``: the live chart of decode time per token (or tokens per second) against batch, for
the fence's models, GPUs, contexts and precisions.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ainotes.base.errors import InputError
from ainotes.base.textcheck import closest, short, unknown_id
from ainotes.charts import inference as inference_chart
from ainotes.core import checks, inference
from ainotes.core.hardware import Preset
from ainotes.core.kernels import DTYPE_BYTES, STORAGE_DTYPE_BYTES
from ainotes.core.models import ModelPreset
from ainotes.fences.body import BodyReader, Fence, load_body
from ainotes.fences.kind import DrawSite, FenceKind
from ainotes.fences.measured_trace import TraceKey, decode_sentence, decode_steps, parse_trace_key
from ainotes.html.figure import draw_vega_figure
from ainotes.html.page import Drawn, Page

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
    model_id: str | None = None  # the model first drawn (default: the first of the models)
    first_preset_id: str | None = None  # the GPU first drawn (default: the first of the presets)

    def implied_uses(self, site: DrawSite) -> set[tuple[str, str]]:
        """Every model where the fence names none, and the link each of its TP degrees crosses."""
        uses = {("model", m) for m in site.models()} if self.model_ids is None else set()
        if self.link_id is None:
            links = site.links()
            uses |= {("link", inference.tp_link_id(site.presets_by_id[p], tp, links))
                     for p in self.preset_ids for tp in self.tps if tp > 1}
        return uses
    link_where: str = ""  # page:line of its 'link' key, or of the fence
    tp_where: str | None = None  # page:line of a 'tp' the body gives: every model shown must take it
    measured: TraceKey | None = None  # a decode trace of the first state (measured_trace)
    measured_batch: int | None = None


_CHART_KEYS = ("models", "model", "presets", "preset", "context", "contexts", "precision", "precisions",
               "compute_dtype", "tp", "tps", "link", "metric", "title", "id", "measured", "measured_batch")


def parse_inference_chart(fence: Fence, where: str, presets: Mapping[str, Preset]) -> InferenceChartRequest:
    """``inference`` fence: models (ids; default every model preset), model (the one first drawn), presets
    (GPU ids; default every preset with a rate at ``compute_dtype``), preset (the one first drawn), context
    and contexts (the context select), precision and precisions (``WEIGHTS/KV`` pairs), compute_dtype
    (default bf16), tp and tps (the TP select), link (default the link each TP group crosses), metric
    (``time`` or ``tokens-per-second``), title, id."""

    data, lines = load_body(fence, where)
    reader = BodyReader(fence, where, data, _CHART_KEYS, lines)
    compute = reader.checked(checks.one_of, "compute_dtype", data.get("compute_dtype", inference.DEFAULT_DTYPE),
                             choices=inference.COMPUTE_DTYPES)
    model_ids = read_model_ids(reader, data)
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
    preset_ids = presets_with_rate(reader, data, presets, compute, needs_link=max(tps) > 1 and link_id is None)
    metric = data.get("metric", "time")
    if metric not in METRICS:
        reader.fail("metric", f"'metric' must be one of {', '.join(METRICS)}: {short(metric)}")
    trace = parse_trace_key(reader, data)
    if trace is not None and "measured_batch" not in data:
        reader.fail("measured", "a measured decode trace needs 'measured_batch': the batch its steps ran at")
    measured_batch = reader.integer("measured_batch", 1, 1, 1 << 20) if "measured_batch" in data else None
    return InferenceChartRequest(
        model_ids=model_ids, preset_ids=preset_ids, context=context, contexts=contexts, precision=precision,
        precisions=precisions, compute_dtype=compute, tp=tp, tps=tps, link_id=link_id, metric=metric,
        title=reader.text("title"), chart_id=reader.chart_id(), where=key_where(fence, where, lines, data, "models"),
        link_where=key_where(fence, where, lines, data, "link"),
        model_id=_initial_model(reader, data, model_ids),
        first_preset_id=_initial_preset(reader, data, preset_ids),
        tp_where=key_where(fence, where, lines, data, "tp") if "tp" in data else None,
        measured=trace, measured_batch=measured_batch,
    )


def _initial_preset(reader: BodyReader, data: Mapping[str, Any], preset_ids: tuple[str, ...]) -> str | None:
    """The ``preset`` key: one of the chart's GPU presets."""
    if "preset" not in data:
        return None
    value = data["preset"]
    if not isinstance(value, str) or value not in preset_ids:
        near = closest(value, preset_ids)
        hint = f" (did you mean {near!r}?)" if near is not None else ""
        reader.fail("preset", f"'preset' must be one of the chart's GPU presets ({', '.join(preset_ids)}): "
                              f"{short(value)}{hint}")
    return str(value)


def _initial_model(reader: BodyReader, data: Mapping[str, Any], model_ids: tuple[str, ...] | None) -> str | None:
    """The ``model`` key: one model preset id, among ``models`` where the fence names them (whether the id
    exists is checked when the chart is drawn, against the loaded models)."""
    if "model" not in data:
        return None
    value = data["model"]
    if not isinstance(value, str) or not value:
        reader.fail("model", f"'model' must be a model preset id: {short(value)}")
    if model_ids is not None and value not in model_ids:
        reader.fail("model", f"'model' {short(value)} is not among the fence's models ({', '.join(model_ids)})")
    return str(value)


def key_where(fence: Fence, where: str, lines: Mapping[int, Mapping[object, int]], data: Mapping[str, Any],
               key: str) -> str:
    """``page:line`` of ``key`` in the fence body, or of the fence where the body lacks it."""
    line = lines.get(id(data), {}).get(key)
    return f"{where}:{fence.start_line if line is None else fence.start_line + 1 + line}"


def presets_with_rate(reader: BodyReader, data: Mapping[str, Any], presets: Mapping[str, Preset], compute: str,
                      *, needs_link: bool = False) -> tuple[str, ...]:
    """The fence's ``presets`` (each with a rate at the compute dtype), else every preset with one, and,
    where ``needs_link`` (tensor parallelism and no ``link`` named), with a node link to time it over: a
    preset whose file names no ``node`` is left out of the default list, as one without the rate is."""
    with_rate = tuple(i for i, p in presets.items() if p.peak_tflops(compute, unit="tensor") is not None
                      and (p.node is not None or not needs_link))
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


def read_model_ids(reader: BodyReader, data: Mapping[str, Any]) -> tuple[str, ...] | None:
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
                ) -> dict[tuple[str, int], Any]:
    """Each GPU's link at each TP degree above 1: the fence's ``link``, else the link that group crosses
    (:func:`inference.tp_link_id`)."""
    chosen = {}
    for preset in presets:
        for tp in request.tps:
            if tp == 1:
                continue
            link_id = request.link_id
            try:
                if link_id is None:
                    chosen[(preset.id, tp)] = inference.tp_link(preset, tp, links)
                    continue
                if link_id not in links:
                    raise InputError(unknown_id("link", link_id, links))
            except InputError as exc:
                raise InputError(f"{request.link_where or request.where}: {exc}") from None
            chosen[(preset.id, tp)] = links[link_id]
    return chosen


def chart_caption(request: InferenceChartRequest, model: ModelPreset, preset: Preset,
                  links: Mapping[tuple[str, int], Any]) -> str:
    """The chart's caption, with the figures of its initial view (:func:`ainotes.charts.inference.caption_html`)."""

    weights, kv = request.precision.split("/")
    tp = request.tp if tp_allowed(model, request.tp) else 1
    link = links.get((preset.id, tp))
    one = inference.InferenceSetup(model, preset, batch=1, context=request.context, weights_dtype=weights,
                                   kv_dtype=kv, compute_dtype=request.compute_dtype, tp=tp, link=link)
    return inference_chart.caption_html(model, preset, one, link, tp=request.tp)


def _choices(reader: BodyReader, data: Mapping[str, Any], key: str, default: tuple,
             check: Callable[[Any], Any]) -> tuple:
    if key not in data:
        return default
    raw = data[key]
    if not isinstance(raw, list) or not raw:
        reader.fail(key, f"{short(key)} must be a non-empty list: {short(raw)}")
    if len(raw) > MAX_CHOICES:
        reader.fail(key, f"{short(key)} may list at most {MAX_CHOICES}: {len(raw)}")
    return tuple(dict.fromkeys(check(v) for v in raw))


def _precision(reader: BodyReader, key: str, value: Any) -> str:
    if isinstance(value, str) and value.count("/") == 1:
        weights, kv = value.split("/")
        if weights in inference.STORAGE_DTYPES and kv in inference.STORAGE_DTYPES:
            return value
    reader.fail(key, f"{short(key)} must be WEIGHTS/KV dtypes such as fp8/bf16 "
                     f"(each one of {', '.join(inference.STORAGE_DTYPES)}): {short(value)}")
    raise AssertionError("unreachable")


def _fits_compute(precision: str, compute: str) -> bool:

    return STORAGE_DTYPE_BYTES[precision.split("/", maxsplit=1)[0]] <= DTYPE_BYTES[compute]


def _draw_inference(site: DrawSite, request: InferenceChartRequest, page: Page) -> Drawn:
    models = resolve_models(request.model_ids, site.models(), request.where)
    # The model the fence names first: a tp it cannot take is told of that model, not of another in the select.
    checked = sorted(models, key=lambda model: model.id != request.model_id)
    for model in checked if request.tp_where is not None else ():
        try:  # the command line's rule (inference.check_tp): a tp the author wrote fits every model shown
            inference.check_tp(model, request.tp)
        except InputError as exc:
            raise InputError(f"{request.tp_where}: {exc}") from None
    first = models[0]
    if request.model_id is not None:
        first = resolve_models((request.model_id,), site.models(), request.where)[0]
    presets = [site.presets_by_id[i] for i in request.preset_ids]
    if request.first_preset_id is not None:  # the one first drawn leads the select
        presets.sort(key=lambda p: p.id != request.first_preset_id)
    links = chart_links(request, presets, site.links())
    title = request.title or inference_chart.default_title(request.compute_dtype)
    chart = site.new_chart(page, "inference", "inference", request.chart_id, title)
    chart.about = {"models": [m.id for m in models], "presets": [p.id for p in presets],
                   "compute_dtype": request.compute_dtype}

    measured, below = _measured_decode(site, request, first, presets[0], links, page)
    inputs = (request, models, presets, links, tuple(sorted((measured or {}).items())))
    drawn = draw_vega_figure(site, chart, page, inputs, lambda: inference_chart.inference_figure(
        models, presets, links, caption_html=chart_caption(request, first, presets[0], links),
        model_id=first.id, preset_id=presets[0].id, context=request.context, contexts=request.contexts,
        precision=request.precision, precisions=request.precisions, compute_dtype=request.compute_dtype,
        tp=request.tp, tps=request.tps, metric=request.metric, title=request.title, measured=measured))
    return Drawn(drawn.html + below, drawn.chart, drawn.scripts) if below else drawn


def _measured_decode(site: DrawSite, request: InferenceChartRequest, model: ModelPreset, preset: Preset,
                     links: Mapping[tuple[str, int], Any], page: Page) -> tuple[dict[str, Any] | None, str]:
    """The ``measured`` decode trace against the first state's model step at ``measured_batch``: the
    chart's point and the sentence under the chart (with the raw file's link); ``(None, "")`` without one."""
    from html import escape

    from ainotes.fences.measured import download_url

    key, batch = request.measured, request.measured_batch
    if key is None or batch is None:
        return None, ""
    steps = decode_steps(site, key, request.tp)
    weights, kv = request.precision.split("/")
    link = links.get((preset.id, request.tp))
    try:
        setup = inference.InferenceSetup(model, preset, batch=batch, context=request.context, weights_dtype=weights,
                                         kv_dtype=kv, compute_dtype=request.compute_dtype, tp=request.tp, link=link)
        model_s = setup.decode_step().time_s
    except InputError as exc:
        raise InputError(f"{key.where}: {exc}") from None
    state = (f"{model.name} on {preset.name}{f' × {request.tp}' if request.tp > 1 else ''} at a context of "
             f"{request.context:,} tokens, {request.precision}")
    sentence = decode_sentence(key.file, steps, batch, model_s, state)
    measured = {"model": model.id, "precision": request.precision, "tp": request.tp, "gpu": preset.id,
                "context": request.context, "batch": batch, "median_s": steps.median_s, "min_s": steps.min_s,
                "max_s": steps.max_s, "text": sentence}
    link_html = (f'<a href="{escape(download_url(key.file, page), quote=True)}" download>'
                 f'{escape(key.file.split("/", 1)[1])}</a>')
    return measured, (f'<div class="ainotes-measured"><ul class="ainotes-measured__summary"><li>{escape(sentence)}</li>'
                      f"<li>The raw trace: {link_html}.</li></ul></div>")


KIND = FenceKind("inference", parse_inference_chart, _draw_inference, chart=True, vega=True)


def resolve_models(model_ids: tuple[str, ...] | None, models: Mapping[str, ModelPreset], where: str
                   ) -> tuple[ModelPreset, ...]:
    """The fence's models (every model preset when it names none); an unknown id is one line at ``where``."""
    if model_ids is None:
        return tuple(models.values())
    for model_id in model_ids:
        if model_id not in models:
            raise InputError(f"{where}: {unknown_id('model', model_id, models)}")
    return tuple(models[m] for m in model_ids)


def tp_allowed(model: ModelPreset, tp: int) -> bool:
    try:
        inference.check_tp(model, tp)
    except InputError:
        return False
    return True
