"""``roofline``: the roofline explorer for the fence's presets, with its kernels (or a model's layer,
``model:`` and ``phase:``) placed at their arithmetic intensity.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ainotes.base.errors import InputError
from ainotes.base.textcheck import bad_character, short, unknown_id
from ainotes.charts import explorer
from ainotes.charts.roofline import spec as roofline_chart
from ainotes.core import checks, inference
from ainotes.core.hardware import PRECISIONS, Preset
from ainotes.core.kernels import Kernel, parse_kernel_spec
from ainotes.core.models import ModelPreset
from ainotes.fences.body import MAX_TITLE_CHARS, BodyReader, Fence, load_body
from ainotes.fences.kind import DrawSite, FenceKind
from ainotes.fences.measured_roofline import draw_measured_roofline, parse_measured_key
from ainotes.html.figure import draw_vega_figure
from ainotes.html.page import Drawn, Page

# What one fence may ask for; documented in the README ("Limits").
MAX_KERNELS_PER_CHART = 12


@dataclass(frozen=True)
class RooflineRequest:
    preset_ids: tuple[str, ...]
    sparsity: bool
    kernels: tuple[Kernel, ...]
    title: str | None
    chart_id: str | None
    precision: str = "bf16"
    layer: Any = None  # ainotes.inline.inference.LayerRequest: a model's layer as kernels (drawn with the models)
    measured: Any = None  # ainotes.fences.measured_roofline.MeasuredKernels: an ncu CSV's kernels as points


def parse_roofline(fence: Fence, where: str, presets: Mapping[str, Preset]) -> RooflineRequest:
    """``roofline`` fence: presets (ids, default all), sparsity, kernels, title, id, precision (default bf16),
    and a model's layer as kernels: model, phase, batch, context, weights_dtype, kv_dtype, compute_dtype, tp
    (:func:`parse_layer`; precision then defaults to compute_dtype); or ``measured``, an ncu CSV under docs/
    whose kernels are drawn against the roofs of the one GPU in ``presets`` (:mod:`.measured_roofline`)."""

    data, lines = load_body(fence, where)
    reader = BodyReader(fence, where, data, ("presets", "sparsity", "kernels", "title", "id", "precision", "measured",
                                                  *LAYER_KEYS), lines)
    kernels = read_kernels(reader, data.get("kernels"))
    layer = parse_layer(reader, data)
    precision = data.get("precision", layer.compute_dtype if layer is not None else "bf16")
    if precision not in PRECISIONS:
        reader.fail("precision", f"'precision' must be one of {', '.join(PRECISIONS)}: {short(precision)}")
    preset_ids = reader.preset_ids(tuple(presets))
    measured = parse_measured_key(reader, data, preset_ids)
    unit = "vector" if precision == "fp32" else "tensor"
    if not any(presets[i].peak_tflops(precision, unit=unit) for i in preset_ids):
        reader.fail("precision", f"no preset of this chart gives a {precision} {unit} rate: {', '.join(preset_ids)}")
    return RooflineRequest(
        precision=precision,
        preset_ids=preset_ids,
        sparsity=reader.boolean("sparsity", False),
        kernels=kernels,
        title=reader.text("title"),
        chart_id=reader.chart_id(),
        layer=layer,
        measured=measured,
    )


def read_kernels(reader: BodyReader, raw_kernels: Any) -> tuple[Kernel, ...]:
    """A fence's ``kernels`` list: specs, or mappings of ``spec`` and ``label``."""
    raw_kernels = raw_kernels or []
    if not isinstance(raw_kernels, list):
        reader.fail("kernels", f"'kernels' must be a list of kernel specs: {short(raw_kernels)}")
    if len(raw_kernels) > MAX_KERNELS_PER_CHART:
        reader.fail("kernels", f"'kernels' may list at most {MAX_KERNELS_PER_CHART}: {len(raw_kernels)}")
    kernels: list[Kernel] = []
    for index, item in enumerate(raw_kernels):
        spec, label = item, None
        if isinstance(item, dict):
            unknown = set(item) - {"spec", "label"}
            if unknown or "spec" not in item:
                reader.fail("kernels", f"a kernel must be a spec or a mapping of 'spec' and 'label': {short(item)}",
                            item=index)
            spec, label = item["spec"], item.get("label")
            if label is not None and (not isinstance(label, str) or len(label) > MAX_TITLE_CHARS):
                reader.fail(
                    "kernels", f"a kernel 'label' must be text of at most {MAX_TITLE_CHARS} characters: {short(label)}",
                    item=index,
                )
            if label is not None and bad_character(label):
                reader.fail("kernels", f"a kernel 'label' holds a control character ({bad_character(label)})",
                            item=index)
        if not isinstance(spec, str):
            reader.fail("kernels", f"a kernel spec must be text like 'gemm:8192x8192x8192:bf16': {short(spec)}",
                        item=index)
        try:
            kernels.append(parse_kernel_spec(spec, label))
        except InputError as exc:
            reader.fail("kernels", str(exc), item=index)
    return tuple(kernels)


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


def parse_layer(reader: BodyReader, data: Mapping[str, Any]) -> LayerRequest | None:
    """The layer keys of a roofline fence body, checked (``reader``: :class:`ainotes.fences.body.BodyReader`);
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
            raise InputError(f"{unknown_id('model', request.model_id, models)}")
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


def _draw_roofline(site: DrawSite, request: RooflineRequest, page: Page) -> Drawn:
    if request.measured is not None:  # an ncu CSV's kernels against one GPU's roofs
        return draw_measured_roofline(site, request, page)
    presets = [site.presets_by_id[i] for i in request.preset_ids]
    palette_ids = tuple(site.presets_by_id)
    kernels, title = request.kernels, request.title
    if request.layer is not None:  # a model's layer as its operators (ainotes.inline.inference)
        kernels = layer_request_kernels(request.layer, site.models(), kernels, limit=MAX_KERNELS_PER_CHART)
        title = title or layer_title(request.layer, site.models())
    title = title or "Roofline: " + ", ".join(p.name for p in presets)
    chart = site.new_chart(page, "roofline", "roofline", request.chart_id, title)
    chart.about = {"presets": [p.id for p in presets], "sparsity": request.sparsity}
    spec_title = title if request.layer else request.title
    return draw_vega_figure(site, chart, page, (request, presets, kernels, palette_ids), lambda: explorer.figure(
        roofline_chart.roofline_spec(presets, kernels=kernels, sparsity=request.sparsity, title=spec_title,
                                     theme="light", precision=request.precision,
                                     palette_ids=palette_ids),  # one colour per GPU across the site
        caption_html=roofline_chart.caption_html(presets, request.sparsity)))


KIND = FenceKind("roofline", parse_roofline, _draw_roofline, chart=True, vega=True)
