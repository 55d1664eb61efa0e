"""Serving a model, as a chart: one decode step's time (or the tokens per second) against the batch size.

Log-log axes, batch 1 to 16,384. For the model, GPU, context, weight/KV dtypes and TP degree the
reader picks (Vega-Lite params bound to selects), the chart draws the step time and its terms
(weights, KV reads, compute, all-reduces), shades where the weight matmuls are memory- and
compute-bound, marks the batch where they turn compute-bound (B_crit, or B_crit·P/P_active for a
mixture of experts) and the batch beyond which the KV cache no longer fits beside the weights
(drawn dashed past it).

Every number comes from the core (:mod:`ainotes.core.inference`): per model, weights/KV choice and TP
degree, :meth:`ainotes.core.inference.InferenceSetup.coefficients` (KV bytes per token, weight bytes,
FLOPs per sequence, all-reduce latencies and bytes per chip); per GPU its bandwidth, its peak at
the compute dtype, its capacity and its link's α and bandwidth. The browser only evaluates the
core's formula on a grid of batches, :data:`EXPRESSIONS`,

    time(B) = B·S·kv/W + max(weights/W, B·flops/F) + latencies·α + B·bytes/B_link,

which :meth:`ainotes.core.inference.DecodeCoefficients.step` states; the tests evaluate these expressions
and compare them with the core at sampled states, in Python and in the browser.

The structure is one :class:`~ainotes.charts.grammar.Grammar` built with altair once; a chart puts
in its datasets, the selects' choices and initial values, its title and its theme's config.
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any, Literal

from ainotes.base import units
from ainotes.base.errors import InputError
from ainotes.base.textcheck import bad_character, short
from ainotes.charts.figure import VegaFigure
from ainotes.charts.grammar import Grammar
from ainotes.charts.theme import INFERENCE_COLOURS, INFERENCE_PALETTES, ChartTheme, Colours, Theme
from ainotes.core import inference
from ainotes.core.hardware import Preset
from ainotes.core.links import Link
from ainotes.core.models import ModelPreset

STATIC_WIDTH_PX = 720
STATIC_HEIGHT_PX = 460
MIN_BATCH = 1
MAX_BATCH = 16384
# Batches the browser evaluates: four points per doubling, 1 to 16,384.
GRID_STEPS_PER_DOUBLING = 4
# Room a rule's label needs beside it (px, "compute-bound past B = 1,071" at 12 px; the short form on phones).
LABEL_ROOM_PX = 190
NARROW_LABEL_ROOM_PX = 100
SHADED = "shaded: where the matmuls are compute-bound"
SUBTITLE_LINE_PX = 15
NARROW_WIDTH_PX = 336  # the phone picture (static, before the live view)
NARROW_HEIGHT_PX = 370
NARROW_PLOT_PX = 420  # below this plot width the rule labels take their short form

#: The browser's arithmetic, the core's formula (DecodeCoefficients.step, InferenceSetup.max_batch,
#: inference.compute_bound_batch) written as Vega expressions over one setup row, its GPU's row and
#: the ``context`` param; evaluated in this order.
EXPRESSIONS: dict[str, str] = {
    "kv_s": "datum.batch * (context * datum.kvc + min(context, datum.win) * datum.kvw) / datum.bw",
    "dense_weights_s": "(datum.dwc + min(datum.batch, datum.vocab) * datum.rows) / datum.bw",
    "dense_compute_s": "datum.batch * datum.dfl / datum.peak",
    "touched": "datum.ne * (1 - pow(1 - datum.ka / datum.ne, datum.batch))",
    "expert_weights_s": "datum.touched * datum.ewc / datum.bw",
    "expert_compute_s": "datum.batch * datum.ka * datum.efl / datum.peak",
    "weights_s": "datum.dense_weights_s + datum.expert_weights_s",
    "compute_s": "datum.dense_compute_s + datum.expert_compute_s",
    "allreduce_s": "min(" + ", ".join(f"datum.ara[{i}] * datum.alpha + datum.batch * datum.arb[{i}] / datum.lbw"
                                      for i in range(len(inference.cc.ALGORITHMS["all-reduce"]))) + ")",
    "step_s": ("datum.kv_s + max(datum.dense_weights_s, datum.dense_compute_s) "
               "+ max(datum.expert_weights_s, datum.expert_compute_s) + datum.allreduce_s"),
    "tokens_per_s": "datum.batch / datum.step_s",
}
#: Per setup and GPU (no batch): where the matmuls turn compute-bound (the experts' B_crit·E/k for a
#: mixture: ``ebc`` is (w/2)·E/k, 0 without experts), and the largest batch that fits.
MARK_EXPRESSIONS: dict[str, str] = {
    "bstar": "max(datum.dwc * datum.peak / (datum.bw * datum.dfl), datum.ebc * datum.peak / datum.bw)",
    "bmax": "max(0, floor((datum.cap - datum.wres) / (context * datum.kvc + min(context, datum.win) * datum.kvw)))",
}
OVERFLOW_TITLE = "step (KV does not fit)"
ALLREDUCE_TITLES = tuple(inference.cc.algorithm_title("all-reduce", a) for a in inference.cc.ALGORITHMS["all-reduce"])


def _seconds_expression(value: str) -> str:
    """A time in s, ms, µs or ns, three figures, as :func:`_seconds` writes it."""
    text = f"format({value} * 1e9, '.3~r') + ' ns'"
    for scale, unit in ((1e-6, "µs"), (1e-3, "ms"), (1.0, "s")):
        text = f"{value} >= {scale:g} ? format({value} / {scale:g}, '.3~r') + ' {unit}' : ({text})"
    return text


def _fastest_allreduce_expression() -> str:
    """The index of the all-reduce algorithm :data:`EXPRESSIONS` takes at batch 1 (the first of equals)."""
    terms = [f"(datum.ara[{i}] * datum.alpha + datum.arb[{i}] / datum.lbw)" for i in range(len(ALLREDUCE_TITLES))]
    best = "0"
    for i in range(1, len(terms)):
        best = f"({terms[i]} < min({', '.join(terms[:i])}) ? {i} : {best})"
    return best


_FIT = ("(!isValid(datum.cap) ? 'its file gives no memory capacity, so no batch is marked as the last that fits' "
        ": datum.bmax < 1 ? 'the weights alone do not fit one chip' "
        ": 'the KV cache of ' + format(datum.bmax, ',') + ' sequences fills the rest of its ' + datum.capacity)")
#: The caption's sentences for the state the selects show, on the grid's first row (batch 1): the
#: words :func:`caption_sentences` writes for the first view, which ``vega-charts.js`` puts under the
#: chart as the reader changes a select.
CAPTION_EXPRESSION = (
    "datum.log_batch != 0 ? null : datum.mn + ' on ' + datum.name + ' at a context of ' + format(context, ',') "
    "+ ' tokens, ' + datum.ql + ', ' + datum.cdt + ' compute' "
    "+ (tp > 1 ? ', tensor parallel over ' + tp + ' chips' : '') + ': ' "
    "+ (isValid(datum.text) ? datum.text + '.' "
    f": 'one step at batch 1 takes ' + ({_seconds_expression('datum.step_s')}) "
    f"+ ', the matmuls turn compute-bound past B = ' + format(datum.bstar, ',.0f') + ', and ' + {_FIT} + '.' "
    "+ (datum.ne > 1 ? ' Its attention turns compute-bound past B = ' "
    "+ format(datum.dwc * datum.peak / (datum.bw * datum.dfl), ',.0f') + ', each expert, which sees B·k/E of the "
    "tokens, past B = ' + format(datum.bstar, ',.0f') + '; a step reads only the experts its batch touches, "
    "E·(1 − (1 − k/E)^B) a layer.' : '') "
    "+ (tp > 1 && datum.ln ? ' Tensor parallelism over ' + tp + ' chips divides weights, KV cache and FLOPs by ' "
    "+ tp + ' and adds two all-reduces per layer, timed with the fastest algorithm of the α–β model (' "
    f"+ {json.dumps(list(ALLREDUCE_TITLES))}[{_fastest_allreduce_expression()}] + ' at batch 1) on ' + datum.ln "
    "+ '.' : ''))"
)
SERIES = (("step_s", "decode step"), ("weights_s", "weights read ÷ W"), ("kv_s", "KV cache reads"),
          ("compute_s", "matmul FLOPs ÷ F"), ("allreduce_s", "all-reduces"))

def _paint(c: Colours) -> dict[str, Any]:
    return {
        "title": {"subtitleColor": c["muted"]},
        "style": {
            "band-memory": {"color": c["memory"]},
            "band-compute": {"color": c["compute"]},
            "band-label": {"color": c["muted"], "fontSize": 11, "fontStyle": "italic"},
            "mark-rule": {"color": c["muted"], "strokeDash": [4, 3]},
            "mark-label": {"color": c["text"], "fontSize": 12},
            "note": {"color": c["text"], "fontSize": 12},
            "subtitle": {"color": c["muted"], "fontSize": 12},
            "measured-point": {"color": c["text"], "fill": c["text"], "stroke": c["background"], "strokeWidth": 1},
            "measured-range": {"color": c["text"], "strokeWidth": 2},
        },
    }


#: The chart's look per scheme (:class:`ainotes.charts.theme.ChartTheme`).
THEME = ChartTheme(
    "inference",
    layout={"axis": {"labelFontSize": 12, "titleFontSize": 13, "titleFontWeight": "normal"},
            "legend": {"labelFontSize": 12, "symbolStrokeWidth": 3},
            "title": {"fontSize": 16, "fontWeight": 600, "anchor": "start", "offset": 12 + 2 * SUBTITLE_LINE_PX}},
    palettes=INFERENCE_PALETTES, colours=INFERENCE_COLOURS, paint=_paint,
)


# --- data from the core ---------------------------------------------------------------------------


def _round(value: float) -> float:
    """Nine significant digits: exact enough for any test, shorter than a float's seventeen."""
    return float(f"{value:.9g}")


def setup_rows(models: Sequence[ModelPreset], preset: Preset, precisions: Sequence[str], tps: Sequence[int],
               compute_dtype: str, link: Link | None) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Per model, weights/KV choice and TP degree, the core's per-chip coefficients; and per model and
    TP degree the core's reason where that degree is not allowed. ``preset`` only completes a setup
    (coefficients do not depend on the GPU)."""
    rows: list[dict[str, Any]] = []
    notes: list[dict[str, Any]] = []
    for model in models:
        for tp in tps:
            text = tp_refusal(model, tp)
            if text is not None:
                # Zero all-reduce coefficients: the expressions index them, and an absent array stops Vega's
                # whole dataflow (the chart went blank instead of saying why); the other terms stay NaN.
                zeros = [0] * len(inference.cc.ALGORITHMS["all-reduce"])
                notes.extend({"m": model.id, "q": precision, "t": tp, "text": text, "ara": zeros, "arb": zeros}
                             for precision in precisions)
                continue
            for precision in precisions:
                weights, kv = precision.split("/")
                one = inference.InferenceSetup(model, preset, weights_dtype=weights, kv_dtype=kv,
                                               compute_dtype=compute_dtype, tp=tp, link=link)
                rows.append({"m": model.id, "q": precision, "t": tp, **coefficient_row(one.coefficients())})
    return rows, notes


def tp_refusal(model: ModelPreset, tp: int) -> str | None:
    """Why ``model`` cannot be split over ``tp`` chips (the core's rule, said short enough for a phone's
    plot), or ``None``."""
    try:
        inference.check_tp(model, tp, name="TP")
    except InputError:
        return (f"TP {tp} does not divide its {model.heads} heads" if model.heads % tp
                else f"TP {tp} and its {model.kv_heads} KV heads do not divide")
    return None


def coefficient_row(c: inference.DecodeCoefficients) -> dict[str, Any]:
    """The core's per-chip coefficients under the short names :data:`EXPRESSIONS` reads."""
    algorithms = len(inference.cc.ALGORITHMS["all-reduce"])
    return {
        "kvc": _round(c.kv_bytes_per_token), "kvw": _round(c.kv_window_bytes_per_token), "win": c.window,
        "dwc": _round(c.dense_weights_bytes), "rows": _round(c.row_bytes_per_sequence), "vocab": c.vocab,
        "dfl": _round(c.dense_flops_per_sequence), "ewc": _round(c.expert_bytes),
        "efl": _round(c.expert_flops_per_token), "ne": c.experts, "ka": c.active_experts,
        "ebc": _round(c.expert_bytes / c.expert_flops_per_token * c.experts / c.active_experts)
        if c.expert_flops_per_token else 0.0,
        "wres": _round(c.resident_bytes),
        "ara": [_round(v) for v in c.allreduce_latencies] or [0.0] * algorithms,
        "arb": [_round(v) for v in c.allreduce_bytes_per_sequence] or [0.0] * algorithms,
    }


def gpu_rows(presets: Sequence[Preset], compute_dtype: str) -> list[dict[str, Any]]:
    """Per GPU: W, F at the compute dtype, capacity (absent where the file gives none)."""
    rows = []
    for preset in presets:
        row: dict[str, Any] = {
            "g": preset.id, "name": preset.name, "bw": preset.memory_bandwidth_bytes_per_s,
            "peak": inference.peak_flops_per_s(preset, compute_dtype), "cdt": compute_dtype.upper(),
            "capacity": preset.memory_capacity_label or "not given",
        }
        if preset.memory_capacity_bytes is not None:
            row["cap"] = preset.memory_capacity_bytes
        rows.append(row)
    return rows


def link_rows(presets: Sequence[Preset], links: Mapping[tuple[str, int], Link], tps: Sequence[int]
              ) -> list[dict[str, Any]]:
    """Per GPU and TP degree (key ``gt``, ``h100/8``): the α and B of the link that degree's group crosses
    (none for one chip: α 0, and no all-reduce to time)."""
    rows = []
    for preset in presets:
        for tp in tps:
            link = links.get((preset.id, tp))
            rows.append({"gt": f"{preset.id}/{tp}", "alpha": _round(link.latency_s) if link is not None else 0.0,
                         "lbw": link.bandwidth_bytes_per_s if link is not None else 1.0,
                         "ln": link.name if link is not None else ""})
    return rows


def inference_spec(
    models: Sequence[ModelPreset],
    presets: Sequence[Preset],
    links: Mapping[tuple[str, int], Link],
    *,
    model_id: str,
    preset_id: str,
    context: int,
    contexts: Sequence[int],
    precision: str,
    precisions: Sequence[str],
    compute_dtype: str,
    tp: int,
    tps: Sequence[int],
    metric: str = "time",
    title: str | None = None,
    theme: Theme = "light",
    cached: bool = True,
    measured: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The chart as a Vega-Lite dict: :data:`GRAMMAR` with these models' and GPUs' data.

    ``links`` maps each (preset id, TP degree above 1) to the link its tensor-parallel all-reduces cross. The keyword
    arguments ending in ``_id`` and the initial ``context``, ``precision``, ``tp`` and ``metric``
    are the selects' initial values, which the static render shows.
    """
    models, presets = tuple(models), tuple(presets)
    _check_request(models, presets, links, model_id, preset_id, context, contexts, precision, precisions, tp, tps,
                   metric, title)
    first_link = next((links[(presets[0].id, t)] for t in tps if (presets[0].id, t) in links), None)
    rows, notes = setup_rows(models, presets[0], precisions, tps, compute_dtype, first_link)
    if measured is not None:  # the trace's step on the row of its setup (model, precision, TP)
        for row in rows:
            if (row["m"], row["q"], row["t"]) == (measured["model"], measured["precision"], measured["tp"]):
                row.update(mt=measured["median_s"], mlo=measured["min_s"], mhi=measured["max_s"],
                           mb=measured["batch"], mg=measured["gpu"], mc=measured["context"], mtext=measured["text"])
    model_names = {m.id: m.name for m in models}
    spec = GRAMMAR.spec(
        datasets={"setups": rows + notes, "gpus": gpu_rows(presets, compute_dtype),
                  "links": link_rows(presets, links, tps), "labels": label_rows(models, precisions)},
        params={"model": model_id, "gpu": preset_id, "context": context, "precision": precision, "tp": tp,
                "metric": metric},
        config=THEME.config(theme),
        top={
            "title": {"text": {"expr": title_expression(compute_dtype, title, {
                "model": model_id, "gpu": preset_id, "context": context, "precision": precision, "tp": tp,
                "metric": metric})}},
            "description": (f"Line chart on log-log axes: time of one decode step of {model_names[model_id]} "
                            f"against batch size, with its terms, B_crit and the largest batch that fits marked."),
        },
        cached=cached,
    )
    choices: dict[str, tuple[list[Any], list[str]]] = {
        "model": ([m.id for m in models], [m.name for m in models]),
        "gpu": ([p.id for p in presets], [p.name for p in presets]),
        "context": (list(contexts), [f"{c:,} tokens" for c in contexts]),
        "precision": (list(precisions), [precision_text(p) for p in precisions]),
        "tp": (list(tps), [f"{t} chip{'s' if t > 1 else ''}" for t in tps]),
    }
    for signal in spec["params"]:
        if signal["name"] in choices:
            options, labels = choices[signal["name"]]
            signal["bind"].update(options=options, labels=labels)
    return spec


def narrow_static(spec: dict[str, Any]) -> dict[str, Any]:
    """The phone picture: the same chart laid out at :data:`NARROW_WIDTH_PX` (labels in their short form)."""
    return {**spec, "width": NARROW_WIDTH_PX, "height": NARROW_HEIGHT_PX}


def precision_text(precision: str) -> str:
    from ainotes.charts.inference import precision_label

    return precision_label(precision)


def default_title(compute_dtype: str, metric: str = "time") -> str:
    shown = "time per step" if metric == "time" else "tokens per second"
    return f"Decode: {shown} against batch size ({compute_dtype.upper()} compute)"


def title_expression(compute_dtype: str, title: str | None, opening: Mapping[str, Any]) -> str:
    """The title as a Vega expression over the selects: an author's ``title`` names the state the
    fence opens on; any other state takes the default title of what it shows (time or tokens per
    second, two lines on a phone), so the title never describes a chart no longer shown."""

    def lines(metric: str) -> str:
        head, tail = default_title(compute_dtype, metric).split(" against ")
        return (f"width < {NARROW_PLOT_PX} ? {json.dumps([head, 'against ' + tail])} : "
                f"{json.dumps(default_title(compute_dtype, metric))}")

    default = f"metric == 'time' ? ({lines('time')}) : ({lines('tokens-per-second')})"
    if title is None:
        return default
    state = " && ".join(f"{name} == {json.dumps(value)}" for name, value in opening.items())
    return f"({state}) ? {json.dumps(title, ensure_ascii=False)} : ({default})"


#: The subtitle's first line: whose step or tokens per second the line is (one chip, or the
#: tensor-parallel group of t chips that serves the batch together). A Vega-Lite subtitle cannot be an
#: expression, so the subtitle is two text marks over the plot.
SUBTITLE_EXPRESSION = (
    "metric == 'time' ? (tp > 1 ? 'one step of ' + tp + ' chips together (tensor parallel)' : 'one chip') "
    ": (tp > 1 ? 'tokens/s of ' + tp + ' chips together (÷ ' + tp + ' per chip)' : 'tokens/s of one chip')"
)


def label_rows(models: Sequence[ModelPreset], precisions: Sequence[str]) -> list[dict[str, str]]:
    """The names the caption gives a setup, by key: each model's name (by id), each weights/KV choice's
    words (by ``WEIGHTS/KV``)."""
    return [*({"k": m.id, "label": m.name} for m in models),
            *({"k": p, "label": precision_label(p)} for p in precisions)]


def _check_request(models: Sequence[ModelPreset], presets: Sequence[Preset], links: Mapping[tuple[str, int], Link],
                   model_id: str, preset_id: str, context: int, contexts: Sequence[int], precision: str,
                   precisions: Sequence[str], tp: int, tps: Sequence[int], metric: str, title: str | None) -> None:
    if not models or not presets:
        raise InputError("inference chart: at least one model and one GPU preset are needed")
    checks = (("model", model_id, [m.id for m in models]), ("preset", preset_id, [p.id for p in presets]),
              ("context", context, list(contexts)), ("precision", precision, list(precisions)),
              ("tp", tp, list(tps)), ("metric", metric, ["time", "tokens-per-second"]))
    for what, value, known in checks:
        if value not in known:
            raise InputError(f"inference chart: the initial {what} {short(value)} is not among its choices "
                             f"({', '.join(str(k) for k in known)})")
    missing = [f"{p.id} at TP {t}" for p in presets for t in tps if t > 1 and (p.id, t) not in links]
    if missing:
        raise InputError(f"inference chart: no link for {', '.join(missing)}")
    for what, text in (("title", title or ""), *(("model name", m.name) for m in models),
                       *(("preset name", p.name) for p in presets)):
        bad = bad_character(text)
        if bad is not None:
            raise InputError(f"inference chart: the {what} {short(text)} holds a control character ({bad})")


# --- the structure -------------------------------------------------------------------------------


_DOUBLINGS = round(math.log2(MAX_BATCH / MIN_BATCH))  # of the batch axis


def _select_params(alt: Any) -> list[Any]:
    """The selects: model, gpu, context, precision, tp (placeholder values and choices) and metric."""

    def select(name: str, label: str, value: Any) -> Any:
        return alt.param(name=name, value=value, bind=alt.binding_select(options=[value], labels=[str(value)],
                                                                         name=label))

    model = select("model", "Model ", "")
    gpu = select("gpu", "GPU ", "")
    context = select("context", "Context ", 1)
    precision = select("precision", "Weights / KV ", "bf16/bf16")
    tp = select("tp", "Tensor parallel ", 1)
    metric = alt.param(name="metric", value="time", bind=alt.binding_select(
        options=["time", "tokens-per-second"], labels=["time per step", "tokens per second"], name="Show "))

    return [model, gpu, context, precision, tp, metric]


def _rule_layers(alt: Any, x_scale: Any, metric: Any) -> list[Any]:
    """One row per setup: the memory- and compute-bound bands, B_crit and the largest batch that fits
    as rules with their labels, and the notes when the weights do not fit."""
    def px(field: str) -> str:
        return f"log(datum.{field} / {MIN_BATCH}) / log({MAX_BATCH / MIN_BATCH}) * width"

    label_room = f"(width < {NARROW_PLOT_PX} ? {NARROW_LABEL_ROOM_PX} : {LABEL_ROOM_PX})"

    # A rule's label goes on the side away from the other rule, where it has the room.
    right_of = {
        "bstar_x": (f"{px('bstar_x')} + {label_room} < width && (!datum.has_cap || datum.bstar >= datum.bmax "
                    f"|| {px('bstar_x')} < {label_room})"),
        "bmax": (f"{px('bmax')} + {label_room} < width && (datum.bmax > datum.bstar "
                 f"|| {px('bmax')} < {label_room})"),
    }

    def room(field: str) -> str:
        return right_of[field]

    one = alt.Chart().transform_filter("datum.log_batch == 0")  # one row per setup: its marks
    marks = one.transform_filter("isValid(datum.wres)")
    sides: tuple[tuple[Literal["left", "right"], str], ...] = (("left", "true"), ("right", "false"))

    def at(field: str) -> Any:
        return alt.X(f"{field}:Q", scale=x_scale)

    in_range = f"datum.bstar <= {MAX_BATCH}"
    fits_shown = f"datum.has_cap && datum.bmax >= 1 && datum.bmax <= {MAX_BATCH}"
    # Time falls to the right and tokens per second rise there: the rule labels go where the line is
    # not, at the top for time and above the band labels at the bottom for tokens per second; on a
    # phone's plot that line rises too steeply for a label beside its rule, and both go to the
    # compute-bound corner, bottom right, which it leaves empty.
    label_y = {"bstar": alt.ExprRef(f"{metric.name} == 'time' ? 6 : height - 40"),
               "bmax": alt.ExprRef(f"{metric.name} == 'time' ? 24 : height - 58")}
    cornered = f"({metric.name} != 'time' && width < {NARROW_PLOT_PX})"
    return [
        *(one.mark_text(style="subtitle", align="left", baseline="bottom", x=0, y=-6 - line * SUBTITLE_LINE_PX,
                        text=text) for line, text in ((1, alt.ExprRef(SUBTITLE_EXPRESSION)), (0, SHADED))),
        # Left of B_crit the weight matmuls wait on memory; right of it, on the matrix units. Each regime's
        # label goes where no line runs. In time every line is lowest at B = 1 and rises to the right, so
        # "memory-bound" sits under the top labels on the left (at the bottom the lines of the smallest
        # batches ran through it); in tokens per second the curve climbs from the bottom left corner to
        # the top, so it sits bottom right of its band, left of the B_crit rule (or of the KV cache's).
        # "compute-bound": bottom right.
        # aria=False: labels say what bands and rules mark; an empty layer would be an unnamed graphics-symbol.
        marks.mark_rect(style="band-memory", aria=False).encode(x=at("start"), x2="bstar_x:Q"),
        marks.mark_rect(style="band-compute", aria=False).encode(x=at("bstar_x"), x2="end:Q"),
        marks.transform_filter(f"datum.bstar > {MIN_BATCH * 2} && {metric.name} == 'time'").mark_text(
            style="band-label", align="left", dx=6, baseline="bottom", y=50, text="memory-bound")
        .encode(x=at("start")),
        marks.transform_filter(f"datum.bstar > {MIN_BATCH * 2} && {metric.name} != 'time'")
        .transform_calculate(band_label_x=f"{fits_shown} && datum.bmax < datum.bstar_x ? datum.bmax : datum.bstar_x")
        .mark_text(style="band-label", align="right", dx=-6, baseline="bottom", y=alt.ExprRef("height - 6"),
                   text="memory-bound").encode(x=at("band_label_x")),
        marks.transform_filter(f"datum.bstar < {MAX_BATCH / 2}").mark_text(
            style="band-label", align="right", dx=-6, baseline="bottom", y=alt.ExprRef("height - 6"),
            text="compute-bound").encode(x=at("end")),
        marks.transform_filter(in_range).mark_rule(style="mark-rule", aria=False).encode(x=at("bstar")),
        *(marks.transform_filter(f"{in_range} && !{cornered} && ({room('bstar_x')}) == {flag}")
          .mark_text(style="mark-label", align=side, dx=5 if side == "left" else -5, baseline="top",
                     y=label_y["bstar"])
          .encode(x=at("bstar_x"), text="bstar_text:N")
          for side, flag in sides),
        # The largest batch whose KV cache fits beside the weights.
        marks.transform_filter(fits_shown).mark_rule(style="mark-rule", strokeDash=[1, 2], strokeWidth=2, aria=False)
        .encode(x=at("bmax")),
        *(marks.transform_filter(f"{fits_shown} && !{cornered} && ({room('bmax')}) == {flag}")
          .mark_text(style="mark-label", baseline="top", y=label_y["bmax"], align=side,
                     dx=5 if side == "left" else -5)
          .encode(x=at("bmax"), text="bmax_text:N")
          for side, flag in sides),
        *(marks.transform_filter(f"{shown} && {cornered}").mark_text(
            style="mark-label", baseline="top", y=label_y[key], align="right", x=alt.ExprRef("width - 5"))
          .encode(text=f"{key}_text:N") for key, shown in (("bstar", in_range), ("bmax", fits_shown))),
        marks.transform_filter("datum.has_cap && datum.bmax < 1").mark_text(
            style="note", baseline="top", y=24, x=6, align="left").encode(text="note:N"),
        one.transform_filter("isValid(datum.text)").mark_text(
            style="note", baseline="middle", x=alt.ExprRef("width / 2"), y=alt.ExprRef("height / 2"),
            align="center").encode(text="text:N"),
    ]


def _series_layers(alt: Any, x_scale: Any, metric: Any) -> list[Any]:
    """The terms (dashed) and the step (solid while its batch fits, dotted past it), per batch."""
    x_ticks = [2**e for e in range(0, _DOUBLINGS + 1, 2)]
    series_titles = [title for _, title in SERIES] + [OVERFLOW_TITLE]
    series_keys = [key for key, _ in SERIES] + ["over_s"]
    folded = (
        alt.Chart().transform_calculate(
            over_s="isValid(datum.cap) && datum.batch >= datum.last_fit ? datum.step_s : -1",
            step_fit_s="datum.fits ? datum.step_s : -1")
        .transform_fold(["step_fit_s", *series_keys[1:]], as_=["series_key", "seconds"])
        .transform_filter(f"({metric.name} == 'time' || datum.series_key == 'step_fit_s' || "
                          "datum.series_key == 'over_s') && datum.seconds > 0")
        .transform_calculate(
            series="{" + ", ".join(f"'{k}': '{t}'" for k, t in (("step_fit_s", SERIES[0][1]), *SERIES[1:],
                                                                ("over_s", OVERFLOW_TITLE))) + "}[datum.series_key]",
            value=f"{metric.name} == 'time' ? datum.seconds : datum.batch / datum.seconds")
    )
    seconds_label = ("datum.value >= 1 ? format(datum.value, '~g') + ' s' : datum.value >= 1e-3 ? "
                     "format(datum.value * 1e3, '~g') + ' ms' : format(datum.value * 1e6, '~g') + ' µs'")
    # An axis title cannot follow a param, so the labels carry the unit: "10 ms", "3k tokens/s".
    y = alt.Y("value:Q", scale=alt.Scale(type="log", nice=True), title=None,
              axis=alt.Axis(labelExpr=(f"{metric.name} == 'time' ? ({seconds_label}) : "
                                       "format(datum.value, '~s') + ' tok/s'"), tickCount=6))
    x = alt.X("batch:Q", scale=x_scale, title="Batch size B (sequences, log)",
              axis=alt.Axis(values=x_ticks, labelExpr="format(datum.value, ',')", labelOverlap="greedy"))
    # The legend lists the lines the state draws: tokens per second the step alone, one chip no all-reduces.
    terms = [title for key, title in SERIES[1:] if key != "allreduce_s"]
    every, one_chip = ([SERIES[0][1], *terms, *extra, OVERFLOW_TITLE] for extra in ([SERIES[4][1]], []))
    shown = (f"{metric.name} == 'time' ? (tp > 1 ? {json.dumps(every)} : {json.dumps(one_chip)}) "
             f": {json.dumps([SERIES[0][1], OVERFLOW_TITLE])}")
    legend = alt.Legend(orient="bottom", direction="horizontal", columns=2, symbolType="stroke", labelLimit=300,
                        values=alt.ExprRef(shown))
    color = alt.Color("series:N", title=None, scale=alt.Scale(domain=series_titles), legend=legend)
    dash = alt.StrokeDash("series:N", title=None, legend=legend, scale=alt.Scale(
        domain=series_titles, range=[[1, 0], [5, 3], [5, 3], [5, 3], [5, 3], [2, 3]]))
    width = alt.StrokeWidth("series:N", legend=None, scale=alt.Scale(
        domain=series_titles, range=[3, 1.5, 1.5, 1.5, 1.5, 2]))
    tips = [alt.Tooltip("batch:Q", title="batch", format=","),
            alt.Tooltip("step_s:Q", title="step (s)", format=".3~s"),
            alt.Tooltip("tokens_per_s:Q", title="tokens/s", format=",.0f"), alt.Tooltip("bound:N", title="matmuls")]
    return [
        # The terms (dashed) and the step (solid while its batch fits, dotted past it).
        folded.mark_line().encode(x=x, y=y, color=color, strokeDash=dash, strokeWidth=width, order="batch:Q",
                                  detail="series_key:N"),
        folded.transform_filter("datum.series_key == 'step_fit_s' || datum.series_key == 'over_s'")
        .mark_point(size=60, opacity=0, filled=True).encode(x=x, y=y, tooltip=tips),
    ]


def _measured_layers(alt: Any, x_scale: Any, metric: Any, gpu: Any, context: Any) -> list[Any]:
    """A profiler trace's decode step (``measured:``), on its setup's row while the selects show its GPU and
    context: the median as a diamond at its batch, least to greatest as a rule (nothing for other setups)."""
    shown = (f"isValid(datum.mt) && datum.log_batch == 0 && {gpu.name} == datum.mg && "
             f"{context.name} == datum.mc")
    value = f"{metric.name} == 'time' ? datum.{{0}} : datum.mb / datum.{{0}}"
    one = alt.Chart().transform_filter(shown).transform_calculate(
        value=value.format("mt"), value_lo=value.format("mlo"), value_hi=value.format("mhi"))
    x = alt.X("mb:Q", scale=x_scale, title="Batch size B (sequences, log)")
    tips = [alt.Tooltip("mtext:N", title="Measured")]
    # aria=False: the sentence under the chart gives the measured step in words, and on other setups (or
    # with no trace) the layers are empty, which a screen reader would meet as unnamed graphics.
    return [one.mark_rule(style="measured-range", aria=False).encode(x=x, y=alt.Y("value_lo:Q", title=None),
                                                                       y2="value_hi:Q"),
            one.mark_point(style="measured-point", shape="diamond", filled=True, size=90, opacity=1, aria=False)
            .encode(x=x, y=alt.Y("value:Q", title=None), tooltip=tips)]


def _build_structure(variant: Hashable) -> dict[str, Any]:
    """The chart without data: layers over the dataset ``setups`` (looked up in ``gpus``) and the params
    model, gpu, context, precision, tp and metric (placeholder values and choices).

    The layer's own transforms pick the setup row, look up its GPU, lay the grid of batches and
    evaluate :data:`EXPRESSIONS` once for every layer; the marks that need one row per setup
    (bands, rules, labels) keep the grid's first batch."""
    import altair as alt  # here: a build whose grammar is cached never loads it

    model, gpu, context, precision, tp, metric = _select_params(alt)
    x_scale = alt.Scale(type="log", domain=[MIN_BATCH, MAX_BATCH], nice=False)
    doublings = _DOUBLINGS
    layers = [*_rule_layers(alt, x_scale, metric), *_series_layers(alt, x_scale, metric),
              *_measured_layers(alt, x_scale, metric, gpu, context)]
    setup_filter = f"datum.m == {model.name} && datum.q == {precision.name} && datum.t == {tp.name}"
    chart = (
        alt.layer(*layers, data=alt.NamedData(name="setups"))
        .transform_filter(setup_filter)
        .transform_calculate(g=gpu.name)
        .transform_lookup(lookup="g", from_=alt.LookupData(
            alt.NamedData(name="gpus"), "g", ["name", "bw", "peak", "cdt", "cap", "capacity"]))
        .transform_calculate(gt="datum.g + '/' + datum.t")
        .transform_lookup(lookup="gt", from_=alt.LookupData(alt.NamedData(name="links"), "gt",
                                                           ["alpha", "lbw", "ln"]))
        .transform_lookup(lookup="m", from_=alt.LookupData(alt.NamedData(name="labels"), "k", ["label"]), as_="mn")
        .transform_lookup(lookup="q", from_=alt.LookupData(alt.NamedData(name="labels"), "k", ["label"]), as_="ql")
        .transform_calculate(**MARK_EXPRESSIONS)
        .transform_calculate(
            log_batch=f"sequence(0, {doublings} + {0.5 / GRID_STEPS_PER_DOUBLING}, {1 / GRID_STEPS_PER_DOUBLING})",
            bstar_x=f"clamp(datum.bstar, {MIN_BATCH}, {MAX_BATCH})", has_cap="isValid(datum.cap)",
            bstar_text=(f"(width < {NARROW_PLOT_PX} ? 'compute past ' : 'compute-bound past B = ') "
                        "+ format(datum.bstar, ',.0f')"),
            start=f"{MIN_BATCH}", end=f"{MAX_BATCH}",
            # the last grid batch that fits: the dotted part starts there, so the line does not break
            last_fit=(f"isValid(datum.cap) && datum.bmax >= 1 ? round(pow(2, floor(log(datum.bmax) / LN2 * "
                      f"{GRID_STEPS_PER_DOUBLING}) / {GRID_STEPS_PER_DOUBLING})) : 0"))
        .transform_calculate(
            bmax_text=(f"datum.has_cap ? (width < {NARROW_PLOT_PX} ? 'KV full past ' : 'KV cache full past B = ') "
                       "+ format(datum.bmax, ',') : ''"),
            note=(f"(width < {NARROW_PLOT_PX} ? 'Weights ' : 'The weights alone (') + format(datum.wres / 1e9, "
                  f"'.3~r') + (width < {NARROW_PLOT_PX} ? ' GB > ' : ' GB a chip) do not fit in ') + datum.capacity"))
        .transform_flatten(["log_batch"])
        .transform_calculate(batch=f"round(pow(2, datum.log_batch) * {MIN_BATCH})")
    )
    for name, expression in EXPRESSIONS.items():
        chart = chart.transform_calculate(**{name: expression})
    chart = (
        chart.transform_calculate(caption_text=CAPTION_EXPRESSION).transform_calculate(
            fits="!isValid(datum.cap) || datum.batch <= datum.bmax",
            bound=("datum.dense_compute_s > datum.dense_weights_s && datum.expert_compute_s >= datum.expert_weights_s"
                   " ? 'compute-bound' : 'memory-bound'"))
        .add_params(model, gpu, context, precision, tp, metric)
        .properties(width=STATIC_WIDTH_PX, height=STATIC_HEIGHT_PX, padding=8,
                    autosize=alt.AutoSizeParams(type="fit", contains="padding"))
    )
    spec = chart.to_dict(validate=False)
    spec.pop("config", None)
    return spec


GRAMMAR = Grammar("inference", _build_structure, __file__)


# --- what the caption says -------------------------------------------------------------------------


def caption_sentences(model: ModelPreset, preset: Preset, setup: inference.InferenceSetup, link: Link | None,
                      *, refusal: str | None = None, tp: int | None = None) -> str:
    """The caption's sentences for one state (``setup`` at batch 1), in plain text: the words of
    :data:`CAPTION_EXPRESSION`; ``refusal``: why its TP degree ``tp`` draws nothing."""
    tp = setup.tp if tp is None else tp
    head = (f"{model.name} on {preset.name} at a context of {setup.context:,} tokens, "
            f"{precision_text(setup.weights_dtype + '/' + setup.kv_dtype)}, {setup.compute_dtype.upper()} compute"
            f"{f', tensor parallel over {tp} chips' if tp > 1 else ''}: ")
    if refusal is not None:
        return f"{head}{refusal}."
    largest = setup.max_batch
    fit = ("its file gives no memory capacity, so no batch is marked as the last that fits" if largest is None
           else "the weights alone do not fit one chip" if largest == 0
           else f"the KV cache of {largest:,} sequences fills the rest of its {preset.memory_capacity_label}")
    text = (f"{head}one step at batch 1 takes {_seconds(setup.decode_step().time_s)}, the matmuls turn compute-bound "
            f"past B = {setup.compute_bound_batch:,.0f}, and {fit}.")
    if model.is_moe:
        text += (f" Its attention turns compute-bound past B = {setup.b_crit:,.0f}, each expert, which sees B·k/E of "
                 f"the tokens, past B = {setup.compute_bound_batch:,.0f}; a step reads only the experts its batch "
                 "touches, E·(1 − (1 − k/E)^B) a layer.")
    if link is not None and tp > 1:
        algorithm = inference.cc.algorithm_title("all-reduce", str(setup.allreduce_algorithm()))
        text += (f" Tensor parallelism over {tp} chips divides weights, KV cache and FLOPs by {tp} and adds two "
                 f"all-reduces per layer, timed with the fastest algorithm of the α–β model ({algorithm} at batch 1) "
                 f"on {link.name}.")
    return text


#: What the chart assumes in every state, after the state's sentences.
CAPTION_ASSUMPTIONS = (
    "Each step reads the weights it uses (W is the bandwidth; B rows of the input embedding, not the table) and "
    "each sequence's KV cache, and does 2 FLOPs per weight used per sequence at the compute dtype's peak (F); each "
    "group of matmuls takes the longer of its weight loading and its compute. With tensor parallelism the group of "
    "t chips serves the batch together: its tokens per second are the group's. Peak rates, no activations, no "
    "launch gaps or framework overhead: a real step takes longer."
)


def caption_html(model: ModelPreset, preset: Preset, setup: inference.InferenceSetup, link: Link | None,
                 *, tp: int | None = None) -> str:
    """The caption: the first view's sentences (:func:`caption_sentences`; at a TP degree ``tp`` the
    model cannot take, why), which the page's script rewrites as the selects change, then what every
    state assumes; names escaped."""
    refusal = tp_refusal(model, tp) if tp is not None else None
    sentences = caption_sentences(model, preset, setup, link, refusal=refusal, tp=tp)
    return (f'<span class="ainotes-live-caption" data-live-caption aria-live="polite">{html.escape(sentences)}'
            f"</span> {html.escape(CAPTION_ASSUMPTIONS)}")


def _seconds(value: float) -> str:
    for scale, unit in ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs")):
        if value >= scale:
            return f"{units.significant(value / scale, 3)} {unit}"
    return f"{units.significant(value / 1e-9, 3)} ns"


def evaluate_expressions(row: Mapping[str, Any], gpu: Mapping[str, Any], *, batch: int, context: int
                         ) -> dict[str, float]:
    """:data:`EXPRESSIONS` and :data:`MARK_EXPRESSIONS` evaluated in Python on one setup row and GPU row,
    as the browser evaluates them (the tests compare the result with the core)."""
    import re

    values: dict[str, Any] = {**row, **gpu, "batch": batch}
    names: dict[str, Callable[..., float] | int] = {"max": max, "min": min, "pow": pow, "floor": math.floor,
                                                    "context": context}
    for name, expression in {**EXPRESSIONS, **MARK_EXPRESSIONS}.items():
        if name == "bmax" and "cap" not in values:
            continue
        python = re.sub(r"datum\.(\w+)", r"values['\1']", expression)  # our own expressions; no builtins
        values[name] = eval(python, {"__builtins__": {}}, {**names, "values": values})
    return values


def precision_label(precision: str) -> str:
    """``8-bit weights, BF16 KV cache``."""
    weights, kv = precision.split("/")

    def word(dtype: str) -> str:
        return {"fp8": "8-bit", "int8": "8-bit", "int4": "4-bit", "fp4": "4-bit"}.get(dtype, dtype.upper())

    return f"{word(weights)} weights, {word(kv)} KV cache"


def inference_figure(models: Sequence[ModelPreset], presets: Sequence[Preset], links: Mapping[tuple[str, int], Link], *,
                     caption_html: str, **view: Any) -> VegaFigure:  # view may hold measured (inference_spec)
    """The chart (:func:`inference_spec`, with ``view``: its selects' choices and initial values,
    ``metric`` and ``title``) as a page shows it: both schemes, their phone stills
    (:func:`narrow_static`) and ``caption_html`` (:func:`caption_html` of its first view)."""
    light, dark = (inference_spec(models, presets, links, theme=theme, **view) for theme in ("light", "dark"))
    return VegaFigure(light=light, dark=dark, caption_html=caption_html,
                      narrow=(narrow_static(light), narrow_static(dark)))
