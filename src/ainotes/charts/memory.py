"""Memory per GPU of a training run, as a chart: one stacked bar per ZeRO stage against the GPUs' capacities.

Each bar stacks weights, gradients, optimizer states and activations of one ZeRO
stage for the configuration the selects set (model, ZeRO stage, data, tensor and
pipeline parallel degrees, micro-batch, sequence length, recomputation, attention,
sequence parallelism); the selected stage is drawn solid, the other three faded,
and a dashed line marks each GPU's memory capacity. The axis follows the state shown: it ends a
nice step over the selected stage's bar and the smallest capacity that holds it (:data:`NEED_EXPRESSION`),
taller bars stop short of its top marked ↑, and the capacities above it are counted in the readout.
The caption's sentences follow the selects too (:data:`CAPTION_EXPRESSION`).

Every number comes from :mod:`ainotes.core.memory`, factorised so the page stays small:

* ``models``: per model, Ψ, L and V;
* ``acts``: per model and tensor-parallel degree, the core's
  :class:`~ainotes.core.memory.ActivationCoefficients` (bytes a token stores in a layer);
* ``invalid``: the configurations the core refuses (a tensor-parallel degree that does
  not divide the heads, more stages than layers), with the core's own message;
* the ``bpp`` param: bytes per parameter of each model state
  (:func:`ainotes.core.memory.state_bytes_per_param`), and from which ZeRO stage each is
  sharded (:data:`ainotes.core.memory.SHARDED_FROM_STAGE`), written into the expressions.

The browser combines them with the expressions :func:`part_expression` writes from the
core's formulas (model states Ψ/(t·p) × bytes ÷ N_d where sharded; activations
s·b·⌈L/p⌉·p × :meth:`~ainotes.core.memory.ActivationCoefficients.bytes_per_token`); the tests
evaluate them in vl-convert's Vega and compare with the core at sampled states.

Themes are config only, as in :mod:`ainotes.charts.cost`. The structure is a
:class:`~ainotes.charts.grammar.Grammar` built with altair once per version of this code.
"""

from __future__ import annotations

import html
import textwrap
from collections.abc import Hashable, Mapping, Sequence
from typing import Any

from ainotes.base.errors import InputError
from ainotes.base.textcheck import bad_character, short
from ainotes.base.units import amount_text
from ainotes.charts.figure import VegaFigure
from ainotes.charts.grammar import Grammar
from ainotes.charts.theme import MEMORY_COLOURS, MEMORY_PALETTES, ChartTheme, Colours, Theme
from ainotes.core import memory
from ainotes.core.hardware import Preset
from ainotes.core.memory import TrainingMemory
from ainotes.core.models import ModelPreset

STATIC_WIDTH_PX = 720
STATIC_HEIGHT_PX = 440
NARROW_WIDTH_PX = 328  # a 360 px phone's content width in Material
NARROW_HEIGHT_PX = 360
GUTTER_PX = 108  # right of the bars: the capacity labels
LABEL_LINE_PX = 13
LABEL_GAP_PX = 2
READOUT_LINE_PX = 15
TOTAL_LINE_PX = 13  # a total's lines (11 px text)
TOTAL_GAP_PX = 5  # from a bar's top to its total's baseline
TOTAL_BACKDROP_PX = 34  # wider than any total's figure (at most "9,999", or "99k" on a narrow chart)
CLIP_FRACTION = 0.85  # bars taller than this share of the axis stop there, marked ↑ (the selected one never is)
STAGE_OPACITY_FADED = 0.35
PARTS: tuple[str, ...] = ("weights", "gradients", "optimizer", "activations")
PART_TITLES: Mapping[str, str] = {"weights": "weights", "gradients": "gradients", "optimizer": "optimizer",
                                  "activations": "activations"}
RECOMPUTE_LABELS: Mapping[str, str] = {"none": "none", "selective": "selective", "full": "full"}
ATTENTION_LABELS: Mapping[str, str] = {"standard": "standard", "fused": "fused"}
ZERO_LABELS: Mapping[int, str] = {0: "0", 1: "1", 2: "2", 3: "3"}
#: The selects, in the order the page shows them: (param, label).
CONTROLS: tuple[tuple[str, str], ...] = (
    ("model", "Model"), ("zero", "ZeRO stage"), ("dp", "Data parallel"), ("tp", "Tensor parallel"),
    ("pp", "Pipeline stages"), ("mb", "Micro-batch"), ("seq", "Sequence"), ("recompute", "Recompute"),
    ("attention", "Attention"), ("sp", "Sequence parallel"))
#: The configuration field each param sets.
PARAM_FIELDS: Mapping[str, str] = {"zero": "zero", "dp": "dp", "tp": "tp", "pp": "pp", "mb": "micro_batch",
                                   "seq": "seq_len", "recompute": "recompute", "attention": "attention",
                                   "sp": "sequence_parallel"}

def _paint(c: Colours) -> dict[str, Any]:
    return {
        "view": {"stroke": None},
        "title": {"subtitleColor": c["muted"]},
        "style": {
            "capacity-rule": {"color": c["capacity"], "strokeDash": [5, 3], "strokeWidth": 1.5},
            "capacity-label": {"color": c["text"], "fontSize": 11, "lineHeight": LABEL_LINE_PX},
            "total-label": {"color": c["text"], "fontSize": 11, "lineHeight": TOTAL_LINE_PX},
            "total-backdrop": {"color": c["background"], "opacity": 1},
            "readout": {"color": c["text"], "fontSize": 12, "fontWeight": 600},
            "readout-note": {"color": c["text"], "fontSize": 12},
            "refusal": {"color": c["text"], "fontSize": 12, "lineHeight": 15},
        },
    }


#: The chart's look per scheme (:class:`ainotes.charts.theme.ChartTheme`): text at 11 px or more.
THEME = ChartTheme(
    "memory",
    layout={"axis": {"labelFontSize": 12, "titleFontSize": 12, "titleFontWeight": "normal"},
            "legend": {"labelFontSize": 12, "symbolSize": 120},
            "title": {"fontSize": 15, "fontWeight": 600, "anchor": "start", "offset": 10, "subtitleFontSize": 12}},
    palettes=MEMORY_PALETTES, colours=MEMORY_COLOURS, paint=_paint,
)


# --- the expressions, written from the core's formulas --------------------------------------------

#: Bytes a token stores in one layer without recomputation, and under the selected recomputation
#: (:meth:`ainotes.core.memory.ActivationCoefficients.bytes_per_token`).
_ALL_PER_TOKEN = "(datum.rep / (sp ? tp : 1) + datum.shard + (attention == 'fused' ? datum.stats : datum.score * seq))"
_KEPT_PER_TOKEN = ("(recompute == 'full' ? datum.input / (sp ? tp : 1) : datum.rep / (sp ? tp : 1) + datum.shard"
                   " + (recompute == 'selective' ? 0 : attention == 'fused' ? datum.stats : datum.score * seq))")
#: Bytes of activations on the first pipeline stage: s·b·⌈L/p⌉·p × the kept bytes per token of a layer
#: (:func:`ainotes.core.memory.layers_in_flight`, a step of at least p micro-batches), plus the one layer
#: the backward pass computes again (:func:`ainotes.core.memory.rematerialized_bytes`).
ACTIVATIONS_EXPRESSION = (f"mb * seq * (ceil(datum.layers / pp) * pp * {_KEPT_PER_TOKEN} + {_ALL_PER_TOKEN}"
                          f" - {_KEPT_PER_TOKEN})")
#: s·b·V·4 ÷ t (:func:`ainotes.core.memory.logits_bytes`).
LOGITS_EXPRESSION = f"mb * seq * datum.vocab * {memory.LOGITS_BYTES} / tp"


def part_expression(part: str) -> str:
    """The Vega expression of one part's bytes per GPU for the row's ``datum.stage``.

    Model states (:func:`ainotes.core.memory.model_state_bytes`): Ψ ÷ (t·p) × bytes per parameter,
    ÷ N_d from the stage that shards the part (:data:`ainotes.core.memory.SHARDED_FROM_STAGE`)."""
    if part == "activations":
        return ACTIVATIONS_EXPRESSION
    if part not in memory.SHARDED_FROM_STAGE:
        raise InputError(f"memory chart: no part {short(part)}")
    # the first stage's parameters (ainotes.core.memory.stage_params): ⌈L/p⌉ layers and the embedding
    held = "(pp == 1 ? datum.params : ceil(datum.layers / pp) * datum.lp + datum.tab)"
    return (f"{held} / tp * bpp.{part} / "
            f"(datum.stage >= {memory.SHARDED_FROM_STAGE[part]} ? dp : 1)")


def gb_text_expression(field: str) -> str:
    """GB as :func:`ainotes.inline.memory.amount_text` writes them: whole and grouped from 100, else 3 figures."""
    return f"({field} >= 100 ? format({field}, ',.0f') : format({field}, '.3~r'))"


#: How far a capacity label moves up (negative: Vega's dy) so that none overlaps the one below, on a
#: plot of any height: sorted by capacity, label i sits at max over j ≤ i of (j's line + (i − j) label
#: heights). Each row carries its own and its lower neighbours' capacities (``lc``) and steps (``ls``).
LABEL_BLOCK_PX = LABEL_LINE_PX + LABEL_GAP_PX
MAX_CAPACITY_ROWS = 16  # at most as many as a chart has GPUs (ainotes.fences.body.MAX_PRESETS_PER_CHART)
LABEL_DY_EXPRESSION = (
    "-(max(" + ", ".join(f"datum.lc[{k}] / datum.y_top * height + datum.ls[{k}] * {LABEL_BLOCK_PX}"
                             for k in range(MAX_CAPACITY_ROWS)) + ") - datum.gb / datum.y_top * height)"
)
#: Steps of a nice axis top, × 10^k.
NICE_STEPS = (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10)
#: Room over what the axis must hold (the tallest bar's label fits under it).
TOP_MARGIN = 1.2


def nice_expression(value: str, decade: str) -> str:
    """The Vega expression of the smallest nice step (:data:`NICE_STEPS`) × ``decade`` (10^k ≤ ``value``)
    at or above ``value``."""
    steps = " : ".join(f"{value} <= {step} * {decade} ? {step} * {decade}" for step in NICE_STEPS[:-1])
    return f"({steps} : 10 * {decade})"


#: What the axis must show (GB): the selected stage's total ``datum.sel`` and the smallest capacity that
#: holds it (``fit_cap``: the line it fits under) unless that is over :data:`HOLDING_RANGE` times the
#: bar; with nothing drawn (a refused configuration), the largest capacity. ``caps``: the capacities, smallest first.
FIT_CAP_EXPRESSION = (" : ".join(f"datum.sel <= caps[{k}] ? caps[{k}]" for k in range(MAX_CAPACITY_ROWS))
                      + " : NaN")  # past the array's end caps[k] is undefined, and the comparison false
#: A capacity more than this many times the bar is left above the axis (the bar would be a sliver).
HOLDING_RANGE = 3
NEED_EXPRESSION = (f"isValid(datum.sel) && datum.sel > 0 ? (datum.fit_cap <= {HOLDING_RANGE} * datum.sel ? "
                   "datum.fit_cap : datum.sel) : peek(caps)")
#: The axis top (GB): a nice step over the bar and capacity it must show, in every state (not one
#: fixed axis for all: a small layout's bars would be slivers under the largest GPU's line).
Y_TOP_EXPRESSION = nice_expression("datum.room", "datum.decade")
NARROW_LEGEND_PX = 420  # below this plot width the legend takes two columns


def _key(*names: str) -> str:
    return " + '|' + ".join(names)


def _with_parts(chart: Any, *, stage: str | None = None) -> Any:
    """The transforms every layer shares: the configuration's rows looked up, then each part's bytes."""
    import altair as alt

    if stage is not None:
        chart = chart.transform_calculate(stage=stage)
    chart = (
        chart.transform_calculate(m="model", tk=_key("model", "tp"), bad=_key("model", "tp", "pp"))
        .transform_lookup(lookup="m", from_=alt.LookupData(alt.NamedData(name="models"), "m",
                                                           ["name", "params", "layers", "vocab", "lp", "tab"]))
        .transform_lookup(lookup="tk", from_=alt.LookupData(alt.NamedData(name="acts"), "k",
                                                            ["rep", "shard", "score", "stats", "input"]))
        .transform_lookup(lookup="bad", from_=alt.LookupData(alt.NamedData(name="invalid"), "k", ["why"]))
    )
    return chart.transform_calculate(**{part: part_expression(part) for part in PARTS}).transform_calculate(
        total=" + ".join(f"datum.{part}" for part in PARTS), logits=LOGITS_EXPRESSION)


def _with_top(chart: Any, *, joined: bool) -> Any:
    """``sel`` (the selected stage's total, GB), ``need``, ``y_top`` (:data:`Y_TOP_EXPRESSION`) and
    ``y_clip`` on every row: from the row itself where it is the selected stage's (``joined`` False:
    rows computed at ``stage = zero``), else joined from the selected stage's row."""
    if joined:
        chart = (chart.transform_calculate(sel_part="datum.stage == zero ? datum.total / 1e9 : 0")
                 .transform_joinaggregate(sel="max(sel_part)"))
    else:
        chart = chart.transform_calculate(sel="datum.total / 1e9")
    return (chart.transform_calculate(fit_cap=FIT_CAP_EXPRESSION).transform_calculate(need=NEED_EXPRESSION)
            .transform_calculate(room=f"{TOP_MARGIN} * datum.need")
            .transform_calculate(decade="pow(10, floor(log(datum.room) / LN10))")
            .transform_calculate(y_top=Y_TOP_EXPRESSION)
            .transform_calculate(y_clip=f"datum.y_top * {CLIP_FRACTION}"))


def _select(name: str, label: str, options: Sequence[Any], labels: Sequence[str]) -> Any:
    import altair as alt

    return alt.param(name=name, value=options[0] if options else "",
                     bind=alt.binding_select(options=list(options), labels=list(labels), name=label + " "))


def _params(alt: Any) -> list[Any]:
    """The bound params of :data:`CONTROLS`, and ``bpp`` and ``caps`` (the capacities in GB, smallest first)."""
    labels = dict(CONTROLS)
    return [
        _select("model", labels["model"], [], []),
        _select("zero", labels["zero"], ZERO_CHOICES, [ZERO_LABELS[z] for z in ZERO_CHOICES]),
        _select("dp", labels["dp"], DP_CHOICES, [f"{d:,}" for d in DP_CHOICES]),
        _select("tp", labels["tp"], TP_CHOICES, [str(t) for t in TP_CHOICES]),
        _select("pp", labels["pp"], PP_CHOICES, [str(p) for p in PP_CHOICES]),
        _select("mb", labels["mb"], MICRO_BATCH_CHOICES, [str(b) for b in MICRO_BATCH_CHOICES]),
        _select("seq", labels["seq"], SEQ_LEN_CHOICES, [f"{s:,}" for s in SEQ_LEN_CHOICES]),
        _select("recompute", labels["recompute"], memory.RECOMPUTE_MODES,
                [RECOMPUTE_LABELS[r] for r in memory.RECOMPUTE_MODES]),
        _select("attention", labels["attention"], memory.ATTENTIONS, [ATTENTION_LABELS[a] for a in memory.ATTENTIONS]),
        alt.param(name="sp", value=False, bind=alt.binding_checkbox(name=labels["sp"] + " ")),
        alt.param(name="bpp", value={"weights": 2, "gradients": 2, "optimizer": 12}),
        alt.param(name="caps", value=[80]),
    ]


def _bar_layers(alt: Any, x: Any, y_scale: Any, valid: str) -> list[Any]:
    """The stacked bars of each ZeRO stage's parts, and each stage's total above its bar."""
    stages = alt.Chart(alt.NamedData(name="stages"))
    gb_axis = alt.Axis(title="GB per GPU", grid=True, tickCount=6, labelExpr=gb_text_expression("datum.value"))
    bars = (
        _with_top(_with_parts(stages).transform_filter(valid), joined=True)
        .transform_fold(list(PARTS), as_=["part", "bytes"])
        .transform_calculate(order=f"indexof({list(PARTS)!r}, datum.part)", gb="datum.bytes / 1e9")
        .transform_window(top="sum(gb)", groupby=["stage"], sort=[alt.SortField("order")], frame=[None, 0])
        .transform_calculate(y_top_part="min(datum.top, datum.y_clip)",
                             y_bottom="min(datum.top - datum.gb, datum.y_clip)",
                             part_title="datum.part", gb_text=gb_text_expression("datum.gb") + " + ' GB'")
        .mark_bar()
        .encode(
            x=x, y=alt.Y("y_bottom:Q", scale=y_scale, axis=gb_axis), y2="y_top_part:Q",
            color=alt.Color("part:N", title=None, scale=alt.Scale(domain=list(PARTS)),
                            legend=alt.Legend(orient="bottom", direction="horizontal",
                                              columns=alt.ExprRef(f"width < {NARROW_LEGEND_PX} ? 2 : {len(PARTS)}"),
                                              symbolType="square", labelLimit=160, columnPadding=10,
                                              labelExpr="datum.label")),
            opacity=alt.condition("datum.stage == zero", alt.value(1.0), alt.value(STAGE_OPACITY_FADED)),
            tooltip=[alt.Tooltip("label:N", title="ZeRO"), alt.Tooltip("part_title:N", title="Part"),
                     alt.Tooltip("gb_text:N", title="Per GPU")],
        )
    )
    # A clipped bar's total goes on two lines, the arrow over the figure: on a phone's narrow bars
    # "1,234 ↑" on one line met its neighbours' labels.
    totals = (
        _with_top(_with_parts(stages).transform_filter(valid), joined=True)
        .transform_calculate(gb="datum.total / 1e9")
        # On a narrow chart a total from 1,000 GB on reads "6.5k": four figures and a comma are wider
        # than a bar's step there, and neighbours met.
        .transform_calculate(short=f"width < {NARROW_LEGEND_PX} && datum.gb >= 1000 ? "
                                   "format(datum.gb / 1000, '.2~r') + 'k' : " + gb_text_expression("datum.gb"))
        .transform_calculate(text="datum.gb > datum.y_clip ? ['↑', datum.short] : [datum.short]",
                             y_at="min(datum.gb, datum.y_clip)",
                             lines="datum.gb > datum.y_clip ? 2 : 1")
        # The first line's baseline, in GB: Vega sets a multi-line text's next lines below it.
        .transform_calculate(y_text=f"datum.y_at + (datum.lines * {TOTAL_LINE_PX} - {TOTAL_LINE_PX - TOTAL_GAP_PX})"
                                    " / max(1, height) * datum.y_top")
    )
    opacity = alt.condition("datum.stage == zero", alt.value(1.0), alt.value(0.75))
    # Behind each total, a block of the background a little wider than the figure: a capacity line stops
    # short of it instead of striking through it.
    backdrop = (
        totals.transform_calculate(y_label_top=f"min(datum.y_top, datum.y_at + (datum.lines * {TOTAL_LINE_PX} + "
                                               f"{TOTAL_GAP_PX}) / max(1, height) * datum.y_top)")
        .mark_bar(style="total-backdrop", aria=False, width=TOTAL_BACKDROP_PX)
        .encode(x=x, y=alt.Y("y_at:Q", scale=y_scale), y2="y_label_top:Q")
    )
    labels = (totals.mark_text(style="total-label", baseline="alphabetic")
              .encode(x=x, y=alt.Y("y_text:Q", scale=y_scale), text="text:N", opacity=opacity))
    return [bars, backdrop, labels]


def _capacity_and_readout(alt: Any, y_scale: Any, valid: str) -> tuple[list[Any], list[Any], Any]:
    """The capacities' rules and labels, the readout above the plot, and the refusal in its place."""
    stages = alt.Chart(alt.NamedData(name="stages"))
    # The capacities: a dashed line each, and in the gutter its size and the GPUs.
    plain = _with_parts(alt.Chart(alt.NamedData(name="gpus")), stage="zero")
    gpus = _with_top(plain, joined=False)
    # Only the capacities under the axis top; the readout counts the others (which all hold the bar).
    shown = gpus.transform_filter("datum.gb <= datum.y_top")
    capacity = [
        # Sets the axis: its top is y_top in every state (every other mark lies under it).
        gpus.mark_rule(opacity=0, aria=False).encode(y=alt.Y("y_top:Q", scale=y_scale), x=alt.value(0),
                                                      x2=alt.value(1)),
        shown.mark_rule(style="capacity-rule").encode(
            y=alt.Y("gb:Q", scale=y_scale), x=alt.value(0), x2=alt.value(alt.ExprRef(f"width - {GUTTER_PX} + 4"))),
        shown.transform_calculate(line="datum.cap + ' ' + datum.ids")
        .mark_text(style="capacity-label", align="left", baseline="middle", dx=0,
                   x=alt.ExprRef(f"width - {GUTTER_PX} + 8"), dy=alt.ExprRef(LABEL_DY_EXPRESSION))
        .encode(y=alt.Y("gb:Q", scale=y_scale), text="line:N",
                tooltip=[alt.Tooltip("names:N", title="GPUs"), alt.Tooltip("cap:N", title="Memory")]),
    ]
    # Above the plot: the selected stage's total, the GPUs it fits, and the logits the bars leave out.
    selected = _with_parts(stages).transform_filter(f"datum.stage == zero && {valid}")
    readout = [
        selected.transform_calculate(line="'ZeRO ' + zero + ': ' + " + gb_text_expression("datum.total / 1e9")
                                     + " + ' GB per GPU'")
        .mark_text(style="readout", align="left", baseline="bottom", x=0, y=-14 - 2 * READOUT_LINE_PX)
        .encode(text="line:N"),
        selected.transform_calculate(line="'+ logits ' + " + gb_text_expression("datum.logits / 1e9")
                                     + " + ' GB (FP32, not drawn)'")
        .mark_text(style="readout-note", align="left", baseline="bottom", x=0, y=-14)
        .encode(text="line:N"),
        # Rows come smallest capacity first, and a run that fits one capacity fits every larger one:
        # the n that fit are the last n.
        gpus.transform_filter(valid)
        .transform_calculate(fit="datum.total <= datum.bytes ? 1 : 0", above="datum.gb > datum.y_top ? 1 : 0",
                             gpus="length(split(datum.ids, ' · '))")
        .transform_calculate(gpus_fit="datum.fit * datum.gpus")
        .transform_aggregate(n="sum(fit)", up="sum(above)", count="sum(gpus)", fit_count="sum(gpus_fit)",
                             rows="values(ids)")
        .transform_calculate(ids="pluck(datum.rows, 'ids')")
        # On a narrow chart a count: the ids would run past its edge (the caption names every GPU).
        .transform_calculate(line="(datum.n == 0 ? 'fits none of these GPUs' : "
                                  f"width < {NARROW_LEGEND_PX} ? 'fits ' + datum.fit_count + ' of ' + datum.count "
                                  "+ ' GPUs' : 'fits ' + join(slice(datum.ids, length(datum.ids) - datum.n), ', '))"
                                  " + (datum.up > 0 ? ' (' + datum.up + ' above the axis)' : '')")
        .mark_text(style="readout-note", align="left", baseline="bottom", x=0, y=-14 - READOUT_LINE_PX,
                   limit=alt.ExprRef("width"))
        .encode(text="line:N"),
    ]
    refusal = (
        _with_parts(stages).transform_filter(f"datum.stage == 0 && !({valid})")
        .transform_calculate(lines="isValid(datum.why) ? split(datum.why, '\\n') : ['Not drawn.']")
        .mark_text(style="refusal", align="left", baseline="top", x=8, y=24, lineBreak="\n")
        .encode(text="lines:N")
    )
    # The caption's sentences for the state shown (vega-charts.js puts them under the chart): no mark drawn.
    caption = (
        plain.transform_calculate(fit=f"{valid} && datum.total <= datum.bytes ? 1 : 0")
        .transform_aggregate(n="sum(fit)", rows="values(names)")
        .transform_calculate(caption_text=CAPTION_EXPRESSION)
        .mark_text(text="", aria=False)
    )
    return capacity, [*readout, caption], refusal


VALID_EXPRESSION = "!isValid(datum.why) && isValid(datum.rep) && isValid(datum.params)"
_GB = gb_text_expression
_NAMES = "pluck(datum.rows, 'names')"
#: The caption's sentences for the state the selects show, on the capacities' aggregate row (``n``: how
#: many fit, the last ``n`` of ``rows``, smallest capacity first): the words :func:`caption_sentences` writes.
CAPTION_EXPRESSION = (
    "datum.rows[0].name + (" + VALID_EXPRESSION.replace("datum.", "datum.rows[0].") + " ? ' ('"
    f" + {_GB('datum.rows[0].params / 1e9')} + ' B parameters), ZeRO stage ' + zero + ' over ' + format(dp, ',')"
    " + ' data-parallel ranks, tensor parallel ' + tp + ', ' + pp + ' pipeline stage' + (pp > 1 ? 's' : '')"
    " + ', micro-batch ' + mb + ' × ' + format(seq, ',') + ' tokens, recompute ' + recompute + ', ' + attention"
    " + ' attention' + (sp ? ', sequence parallel' : '') + ': ' "
    f"+ {_GB('datum.rows[0].total / 1e9')} + ' GB per GPU, '"
    f" + (datum.n == 0 ? 'more than any GPU drawn holds (' + join({_NAMES}, '; ') + ')'"
    f" : datum.n == length(datum.rows) ? 'which every GPU drawn holds (' + join({_NAMES}, '; ') + ')'"
    f" : 'which fits ' + join(slice({_NAMES}, length(datum.rows) - datum.n), '; ') + ' but not '"
    f" + join(slice({_NAMES}, 0, length(datum.rows) - datum.n), '; '))"
    f" + '; the logits add ' + {_GB('datum.rows[0].logits / 1e9')} + ' GB in FP32.'"
    " : ', tensor parallel ' + tp + ', ' + pp + ' pipeline stage' + (pp > 1 ? 's' : '') + ': not drawn. '"
    " + (isValid(datum.rows[0].why) ? replace(datum.rows[0].why, /\\n/g, ' ') : ''))"
)


def _build_structure(variant: Hashable) -> dict[str, Any]:
    """The chart without data: layers reading the named datasets ``stages``, ``models``, ``acts``,
    ``invalid`` and ``gpus``, the bound params of :data:`CONTROLS` and the params ``bpp`` and
    ``caps`` (placeholder values; :func:`memory_spec` puts in each chart's).
    One form: ``variant`` is ``()``."""
    import altair as alt

    params = _params(alt)
    # The domain is the marks' own: from 0 to y_top, which an unseen rule marks (every other mark lies under it).
    y_scale = alt.Scale(nice=False, zero=True)
    # The bars take the plot but a gutter on the right, where the capacity labels go.
    x_scale = alt.Scale(range=[0, alt.ExprRef(f"max(40, width - {GUTTER_PX})")], paddingInner=0.3, paddingOuter=0.2)
    x = alt.X("label:N", scale=x_scale, sort=alt.EncodingSortField("stage"), title="ZeRO stage",
              axis=alt.Axis(labelAngle=0, ticks=False, domain=True, labelPadding=6))
    valid = VALID_EXPRESSION
    bars, *totals = _bar_layers(alt, x, y_scale, valid)  # the totals' backdrops, then their figures
    capacity, readout, refusal = _capacity_and_readout(alt, y_scale, valid)
    chart = (
        alt.layer(bars, *capacity, *totals, *readout, refusal)
        .add_params(*params)
        .properties(width=STATIC_WIDTH_PX, height=STATIC_HEIGHT_PX,
                    autosize=alt.AutoSizeParams(type="fit", contains="padding"), padding=8)
    )
    spec = chart.to_dict(validate=False)
    spec.pop("config", None)
    return spec


GRAMMAR = Grammar("memory", _build_structure, __file__, memory.__file__)


# --- the data -------------------------------------------------------------------------------------


def gpu_rows(presets: Sequence[Preset]) -> list[dict[str, Any]]:
    """One row per distinct capacity (equal ones share a line), smallest first: bytes, GB, the
    capacity as its preset states it (GB or GiB), the ids, the names, and what
    :data:`LABEL_DY_EXPRESSION` needs: the GB of this and every smaller capacity (``lc``) and how
    many labels lie between (``ls``), padded to :data:`MAX_CAPACITY_ROWS` with terms that never win."""
    groups: dict[float, list[Preset]] = {}
    for preset in presets:
        if preset.memory_capacity_bytes is None:
            raise InputError(f"memory chart: preset {preset.id} gives no memory capacity")
        groups.setdefault(preset.memory_capacity_bytes, []).append(preset)
    if len(groups) > MAX_CAPACITY_ROWS:
        raise InputError(f"memory chart: at most {MAX_CAPACITY_ROWS} distinct capacities: {len(groups)}")
    capacities = sorted(groups)
    rows = []
    for i, capacity in enumerate(capacities):
        group = groups[capacity]
        label = group[0].memory_capacity_label or ""
        below = [c / 1e9 for c in capacities[: i + 1]]
        pad = MAX_CAPACITY_ROWS - len(below)
        rows.append({"bytes": capacity, "gb": capacity / 1e9, "cap": label.split(" (")[0],
                     "ids": " · ".join(p.id for p in group), "names": ", ".join(p.name for p in group),
                     "lc": below + [0] * pad, "ls": [i - j for j in range(i + 1)] + [-MAX_CAPACITY_ROWS] * pad})
    return rows


def _wrap(message: str, width: int = 44) -> str:
    return "\n".join(textwrap.wrap(message, width))


def chart_rows(models: Sequence[ModelPreset], *, dropout: bool | None) -> dict[str, list[dict[str, Any]]]:
    """The datasets ``models``, ``acts`` and ``invalid`` for these models (see the module docstring);
    ``dropout`` ``None``: each model as it was trained (its preset's ``dropout``)."""
    model_rows, acts, invalid = [], [], []
    for model in models:
        model_rows.append({"m": model.id, "name": model.name, "params": model.params, "layers": model.layers,
                           "vocab": model.vocab, "lp": _round(memory.layer_params(model)),
                           "tab": memory.input_table_params(model)})
        for tp in TP_CHOICES:
            for pp in PP_CHOICES:
                try:
                    TrainingMemory(model=model, tp=tp, pp=pp, label=_control_label)
                except InputError as exc:
                    invalid.append({"k": f"{model.id}|{tp}|{pp}", "why": _wrap(str(exc))})
            try:
                TrainingMemory(model=model, tp=tp, label=_control_label)
            except InputError:
                continue
            c = memory.activation_coefficients(
                model, tp=tp, dropout=model.trained_with_dropout if dropout is None else dropout)
            acts.append({"k": f"{model.id}|{tp}", "rep": c.replicated, "shard": c.sharded, "score": c.scores,
                         "stats": c.stats, "input": c.layer_input})
    return {"models": model_rows, "acts": acts, "invalid": invalid}


_CONTROL_LABELS = {"tp": "Tensor parallel", "pp": "Pipeline stages"}


def _control_label(key: str) -> str:
    """How a refusal in the chart names a field: as its select does."""
    return _CONTROL_LABELS.get(key, repr(key))


def _round(value: float) -> float:
    """Coefficients are whole or simple fractions of bytes; 12 figures keep them exact to the core's tests."""
    return float(f"{value:.12g}")


def memory_spec(
    models: Sequence[ModelPreset],
    presets: Sequence[Preset],
    config: TrainingMemory,
    *,
    title: str | None = None,
    theme: Theme = "light",
    cached: bool = True,
) -> dict[str, Any]:
    """The training-memory chart as a Vega-Lite dict: :data:`GRAMMAR` with these models' and GPUs' data.

    ``config`` (a model among ``models``, its micro-batch and sequence length set) is the
    selects' first state and what the static pictures show; its optimizer, FP32 accumulation and
    dropout hold for the whole chart."""
    models, presets = tuple(models), tuple(presets)
    if not models or not presets:
        raise InputError("memory chart: needs at least one model and one GPU with a capacity")
    if config.model is None or config.model.id not in {m.id for m in models}:
        raise InputError("memory chart: the first configuration's model must be one of the chart's models")
    if config.micro_batch is None or config.seq_len is None:
        raise InputError("memory chart: the first configuration needs a micro-batch and a sequence length")
    for what, text in (("title", title or ""), *(("model name", m.name) for m in models)):
        bad = bad_character(text)
        if bad is not None:
            raise InputError(f"memory chart: the {what} {short(text)} holds a control character ({bad})")
    check_initial(config)
    gpus = gpu_rows(presets)  # refuses a GPU without a capacity
    rows = chart_rows(models, dropout=config.dropout)
    rows["acts"] = [{k: (_round(v) if isinstance(v, float) else v) for k, v in r.items()} for r in rows["acts"]]
    per_param = memory.state_bytes_per_param(config.optimizer, fp32_grad_accum=config.fp32_grad_accum)
    initial = {param: getattr(config, field) for param, field in PARAM_FIELDS.items()}
    spec = GRAMMAR.spec(
        datasets={"stages": [{"stage": z, "label": str(z)} for z in ZERO_CHOICES], **rows,
                  "gpus": gpus},
        params={"model": config.model.id, **initial,
                "bpp": {part: per_param.of(part) for part in memory.PARTS},
                "caps": [row["gb"] for row in gpus]},
        config=THEME.config(theme),
        top={"title": {"text": title if title is not None else default_title(),
                       # on lines that fit a phone's chart (a subtitle cannot follow the width)
                       "subtitle": textwrap.wrap(subtitle(config), 44)},
             "description": description(config, presets)},
        cached=cached,
    )
    for signal in spec["params"]:
        if signal["name"] == "model":
            signal["bind"].update(options=[m.id for m in models], labels=[m.name for m in models])
    return spec


def check_initial(config: TrainingMemory) -> None:
    """The first state must be one the selects offer."""
    choices = {"zero": ZERO_CHOICES, "dp": DP_CHOICES, "tp": TP_CHOICES, "pp": PP_CHOICES,
               "micro_batch": MICRO_BATCH_CHOICES, "seq_len": SEQ_LEN_CHOICES}
    for field, offered in choices.items():
        if getattr(config, field) not in offered:
            raise InputError(f"memory chart: {field!r} must be one of {', '.join(map(str, offered))}: "
                             f"{short(getattr(config, field))}")


def default_title() -> str:
    return "Memory per GPU of a training run"


def subtitle(config: TrainingMemory) -> str:
    extra = ", FP32 gradient accumulation" if config.fp32_grad_accum else ""
    dropout = {None: ", dropout as each model was trained", True: "", False: ", no dropout"}[config.dropout]
    return f"{memory.OPTIMIZER_TITLES[config.optimizer]}{extra}{dropout}; first pipeline stage"


def description(config: TrainingMemory, presets: Sequence[Preset]) -> str:
    assert config.model is not None
    return (f"Stacked bar chart: memory per GPU of training {config.model.name} at ZeRO stages 0 to 3 (weights, "
            f"gradients, optimizer states, activations), against the memory of "
            f"{', '.join(p.name for p in presets)}.")


def caption_sentences(config: TrainingMemory, presets: Sequence[Preset]) -> str:
    """The caption's sentences for one state, in plain text: the words of :data:`CAPTION_EXPRESSION`,
    which the page's script puts in place as the reader moves a select."""
    assert config.model is not None
    sp = ", sequence parallel" if config.sequence_parallel else ""
    estimate = config.estimate()
    groups = gpu_rows(presets)
    fitting = [row for row in groups if estimate.total_bytes <= row["bytes"]]
    names = [row["names"] for row in groups]
    if not fitting:
        fits = f"more than any GPU drawn holds ({'; '.join(names)})"
    elif len(fitting) == len(groups):
        fits = f"which every GPU drawn holds ({'; '.join(names)})"
    else:
        fits = (f"which fits {'; '.join(names[len(groups) - len(fitting):])} but not "
                f"{'; '.join(names[:len(groups) - len(fitting)])}")
    return (f"{config.model.name} ({amount_text(config.model.params / 1e9)} B parameters), ZeRO stage {config.zero} "
            f"over {config.dp:,} data-parallel ranks, tensor parallel {config.tp}, {config.pp} pipeline "
            f"stage{'s' if config.pp > 1 else ''}, micro-batch {config.micro_batch} × {config.seq_len:,} tokens, "
            f"recompute {config.recompute}, {config.attention} attention{sp}: "
            f"{amount_text(estimate.total_bytes / 1e9)} GB per GPU, {fits}; the logits add "
            f"{amount_text((estimate.logits_bytes or 0.0) / 1e9)} GB in FP32.")


#: What the chart assumes in every state, after the state's sentences.
CAPTION_ASSUMPTIONS = (
    "Model states per Rajbhandari et al. (ZeRO, 2020), activations per Korthikanti et al. (2022), for the first "
    "pipeline stage, which holds the most. Not in the bars, so measured memory sits above them: the logits, "
    "allocator fragmentation, communication buffers, temporary workspaces. GB = 10⁹ bytes; a capacity printed in "
    "GiB is drawn at its size in GB. The axis ends a little above the selected stage's bar and the smallest "
    "capacity that holds it; taller bars stop at its top, marked ↑."
)


def caption_html(config: TrainingMemory, presets: Sequence[Preset]) -> str:
    """The caption: the first view's sentences (:func:`caption_sentences`), which the page's script
    rewrites as the selects change, then what every state assumes; names escaped."""
    return (f'<span class="ainotes-live-caption" data-live-caption aria-live="polite">'
            f"{html.escape(caption_sentences(config, presets))}</span> {html.escape(CAPTION_ASSUMPTIONS)}")


def _with_preset(config: TrainingMemory, preset: Preset) -> TrainingMemory:
    from dataclasses import replace

    return replace(config, preset=preset)


# --- the figure -----------------------------------------------------------------------------------


def narrow_spec(spec: dict[str, Any]) -> dict[str, Any]:
    """The phone's picture: the same chart drawn at a 360 px phone's width, so its text stays 11 px or more."""
    return {**spec, "width": NARROW_WIDTH_PX, "height": NARROW_HEIGHT_PX}


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


def memory_figure(models: Sequence[ModelPreset], presets: Sequence[Preset], config: TrainingMemory, *,
                  title: str | None = None) -> VegaFigure:
    """The chart (:func:`memory_spec`) as a page shows it: both schemes, their phone stills
    (:func:`narrow_spec`), the caption, and ``assets/memory-chart.css``, which lays its selects out in a grid."""
    light, dark = (memory_spec(models, presets, config, title=title, theme=theme) for theme in ("light", "dark"))
    return VegaFigure(light=light, dark=dark, caption_html=caption_html(config, presets),
                      narrow=(narrow_spec(light), narrow_spec(dark)), stylesheet="memory-chart.css",
                      css_class="ainotes-memory")
