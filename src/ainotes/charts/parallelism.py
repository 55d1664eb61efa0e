"""The parallelism chart: for a model, a GPU preset and a chip count (the three selects), every layout
that fits, fastest first, its step time stacked as compute, exposed DP, TP, PP and EP/CP communication
and the pipeline bubble, beside its memory per chip against the chip's capacity.

Every number is :func:`ainotes.core.parallel_step.search`'s, computed here for every state the selects
offer and filtered in the browser by the state's key (``model|preset|gpus``): the same numbers
``ainotes parallel --search --json`` prints (a test compares them at sampled states). The title and the
caption follow the selects (the caption's sentences are written here per state; ``vega-charts.js``
swaps them). Themes are config only, as in :mod:`ainotes.charts.memory`.
"""

from __future__ import annotations

import html
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ainotes.base import scripts
from ainotes.base.errors import InputError
from ainotes.base.textcheck import bad_character, short
from ainotes.base.units import amount_text, bytes_text, percent
from ainotes.charts.figure import VegaFigure
from ainotes.charts.grammar import Grammar
from ainotes.charts.theme import ChartTheme, Colours
from ainotes.core import parallel_step, parallelism
from ainotes.core.parallelism import ParallelRun, StepBreakdown

Theme = Literal["light", "dark"]

MAX_LAYOUTS = 8  # rows a state shows: the fastest that fit
WIDE_WIDTH_PX, HEIGHT_PX = 720, 380
NARROW_WIDTH_PX, NARROW_HEIGHT_PX = 328, 420  # a 360 px phone's content width in Material
TIME_SHARE = 0.58  # the share of the width the step's bars take (their labels follow them)
MEMORY_START = 0.76  # where the memory bars start
BAR_OFFSET_PX = 7  # each bar sits below its label line
#: The stacked parts, in drawing order, with their legend titles.
PARTS: tuple[tuple[str, str], ...] = (("compute", "compute"), ("dp", "exposed DP"), ("tp", "exposed TP"),
                                      ("pp", "exposed PP"), ("epcp", "exposed EP/CP"), ("bubble", "bubble"),
                                      ("measured", "measured (trace)"))
PALETTES = {"light": ["#0072B2", "#E69F00", "#D55E00", "#009E73", "#CC79A7", "#9aa0a8", "#3b3f45"],
            "dark": ["#3d8fd1", "#E69F00", "#ff8a4c", "#2fbf8f", "#e39ac6", "#7d8491", "#e8eaed"]}
_FONT = "-apple-system, 'Segoe UI', Helvetica, Arial, sans-serif"


def _paint(c: Colours) -> dict[str, Any]:
    return {"style": {"capacity-rule": {"color": c["text"], "strokeDash": [5, 3], "strokeWidth": 1.5},
                      "value-label": {"color": c["text"], "fontSize": 11},
                      "row-label": {"color": c["text"], "fontSize": 11},
                      "empty": {"color": c["text"], "fontSize": 12},
                      "memory-bar": {"color": c["memory"]},
                      "measured-range": {"color": c["text"], "strokeWidth": 2},
                      "model-mark": {"color": c["text"], "fill": c["background"], "strokeWidth": 2, "size": 70}},
            "title": {"subtitleColor": c["muted"]}}


#: The chart's look per scheme (:class:`ainotes.charts.theme.ChartTheme`): text at 11 px or more.
THEME = ChartTheme(
    "parallelism",
    layout={"view": {"stroke": None},
            "axis": {"labelFontSize": 11, "titleFontSize": 12, "titleFontWeight": "normal", "labelLimit": 170},
            "legend": {"labelFontSize": 11, "symbolSize": 110},
            "title": {"fontSize": 14, "fontWeight": 600, "anchor": "start", "offset": 10, "subtitleFontSize": 11}},
    palettes={scheme: tuple(colours) for scheme, colours in PALETTES.items()},
    colours={scheme: {"memory": colours[0]} for scheme, colours in PALETTES.items()},
    paint=_paint,
)


def theme_config(theme: Theme) -> dict[str, Any]:
    """The Vega-Lite ``config`` of a theme (:data:`THEME`)."""
    return THEME.config(theme)


def _key_expression() -> str:
    return "model + '|' + preset + '|' + gpus"


def _select(name: str, label: str) -> Any:
    import altair as alt

    return alt.param(name=name, value="", bind=alt.binding_select(options=[""], labels=[""], name=label + " "))


def _time_at(field: str, domain: list[Any]) -> Any:
    """An x channel on the step-time scale (no axis: the stacked bars draw it)."""
    import altair as alt

    scale = alt.Scale(range=[0, alt.ExprRef(f"width * {TIME_SHARE}")], domain=domain, nice=True)
    return alt.X(f"{field}:Q", scale=scale, axis=None)


def _measured_layers(rows: Any, y: Any, domain: list[Any]) -> tuple[Any, Any]:
    """The trace's row: a rule from its least to its greatest step, and a diamond at the model's step."""
    import altair as alt

    measured = rows.transform_filter("isValid(datum.lo_s)")
    # aria=False: the row's label and the caption say the measured step in words, and without a trace
    # the layers are empty, which a screen reader would meet as unnamed graphics (axe: svg-img-alt).
    spread = (measured.mark_rule(style="measured-range", yOffset=BAR_OFFSET_PX, aria=False)
              .encode(x=_time_at("lo_s", domain), x2="hi_s:Q", y=y,
                      tooltip=[alt.Tooltip("spread:N", title="Measured steps")]))
    model_mark = (measured.mark_point(style="model-mark", shape="diamond", filled=True, yOffset=BAR_OFFSET_PX,
                                     aria=False)
                  .encode(x=_time_at("mark_s", domain), y=y, tooltip=[alt.Tooltip("mark:N", title="Model")]))
    return spread, model_mark


def _build_structure(variant: Hashable) -> dict[str, Any]:
    """The chart without data: the ``layouts`` and ``states`` datasets filtered by the selects' key.
    One view that fills any width: a label line above each layout's row; the step's stacked parts on
    the left (:data:`TIME_SHARE` of the width, seconds axis below), its memory per chip against the
    capacity rule on the right (GB axis above). One form: ``variant`` is ``()``."""
    import altair as alt

    del variant
    key = _key_expression()
    rows = alt.Chart(alt.NamedData(name="layouts")).transform_filter(f"datum.k == {key}")
    y = alt.Y("row:N", title=None, sort="ascending", axis=None,
              scale=alt.Scale(paddingInner=0.25, paddingOuter=0.1))
    band = {"band": 0.5}
    # Every time layer shares one domain (the state's longest step or measured time): the layers' scales are
    # independent (the memory bars have their own), so each names it.
    time_domain: list[Any] = [0, alt.ExprRef(f"t_max[{key}] || 1")]
    time_x = alt.X("seconds:Q", stack="zero", title="seconds per step",
                   scale=alt.Scale(range=[0, alt.ExprRef(f"width * {TIME_SHARE}")], domain=time_domain, nice=True),
                   axis=alt.Axis(format="~s", tickCount=4, grid=True, orient="bottom"))
    part_names: list[Any] = [name for name, _ in PARTS]
    bars = (
        rows.transform_fold(part_names, as_=["part", "seconds"])
        .transform_calculate(order=f"indexof({part_names!r}, datum.part)",
                             title=f"{dict(PARTS)!r}[datum.part]",
                             text="format(datum.seconds, '.3~s') + 's'")
        .mark_bar(height=band, yOffset=BAR_OFFSET_PX)
        .encode(x=time_x, y=y, order=alt.Order("order:Q"),
                color=alt.Color("part:N", title=None, scale=alt.Scale(domain=alt.ExprRef("parts")),
                                legend=alt.Legend(orient="bottom", direction="horizontal", columns=3,
                                                  labelExpr=f"{dict(PARTS)!r}[datum.label]", symbolType="square")),
                opacity=alt.condition("datum.rank <= 1", alt.value(1.0), alt.value(0.62)),
                tooltip=[alt.Tooltip("label:N", title="Layout"), alt.Tooltip("title:N", title="Part"),
                         alt.Tooltip("text:N", title="Time")])
    )
    step_x = _time_at("step_s", time_domain)
    step_labels = (rows.transform_calculate(text="datum.step_s < 1 ? format(datum.step_s * 1e3, '.3~r') + ' ms' : "
                                                 "format(datum.step_s, '.3~s') + ' s'")
                   .mark_text(style="value-label", align="left", dx=4, dy=BAR_OFFSET_PX)
                   .encode(x=step_x, y=y, text="text:N"))
    row_labels = (rows.transform_calculate(text="isValid(datum.note) ? datum.note : datum.row + ' · MFU ceiling ' + "
                                                "format(datum.mfu, '.0%') + (datum.tag ? ' · ' + datum.tag : '')")
                  .mark_text(style="row-label", align="left", baseline="bottom", x=0, dy=BAR_OFFSET_PX - 7)
                  .encode(y=y, text="text:N"))
    memory_scale = alt.Scale(range=[alt.ExprRef(f"width * {MEMORY_START}"), alt.ExprRef("width")], nice=False,
                             domain=[0, alt.ExprRef("cap_max")])
    memory_x = alt.X("mem_gb:Q", title="GB per chip", scale=memory_scale,
                     axis=alt.Axis(tickCount=3, grid=False, orient="top"))
    spread, model_mark = _measured_layers(rows, y, time_domain)
    memory_text = "format(datum.mem_gb, '.3~r') + ' GB of ' + format(datum.cap_gb, '.3~r') + ' GB'"
    memory_bars = (rows.transform_filter("isValid(datum.mem_gb)").transform_calculate(text=memory_text)
                   .mark_bar(height=band, yOffset=BAR_OFFSET_PX, style="memory-bar")
                   .encode(x=memory_x, y=y, opacity=alt.condition("datum.rank == 1", alt.value(1.0), alt.value(0.62)),
                           tooltip=[alt.Tooltip("label:N", title="Layout"), alt.Tooltip("text:N", title="Memory")]))
    capacity = (rows.transform_filter("datum.rank == 1").mark_rule(style="capacity-rule")
                .encode(x=alt.X("cap_gb:Q", scale=memory_scale, axis=None)))
    capacity_label = (rows.transform_filter("datum.rank == 1")
                      .transform_calculate(text="'capacity ' + format(datum.cap_gb, '.3~r') + ' GB'")
                      .mark_text(style="value-label", align="right", baseline="top", y=alt.ExprRef("height + 6"))
                      .encode(x=alt.X("cap_gb:Q", scale=memory_scale, axis=None), text="text:N"))
    empty = (alt.Chart(alt.NamedData(name="states")).transform_filter(f"datum.k == {key} && datum.n == 0")
             .mark_text(style="empty", align="left", baseline="top", x=4, y=8, lineBreak="\n")
             .encode(text="message:N"))
    params = [_select("model", "Model"), _select("preset", "GPU"), _select("gpus", "Chips"),
              alt.param(name="names", value={"models": {}, "presets": {}}), alt.param(name="cap_max", value=100),
              alt.param(name="t_max", value={}), alt.param(name="parts", value=part_names)]
    chart = (alt.layer(bars, spread, model_mark, step_labels, row_labels, memory_bars, capacity, capacity_label, empty)
             .resolve_scale(x="independent")
             .add_params(*params)
             .properties(width=WIDE_WIDTH_PX, height=HEIGHT_PX, padding=8,
                         autosize=alt.AutoSizeParams(type="fit", contains="padding")))
    spec = chart.to_dict(validate=False)
    spec.pop("config", None)
    return spec


GRAMMAR = Grammar("parallelism", _build_structure, __file__, parallelism.__file__, parallel_step.__file__)


@dataclass(frozen=True)
class MeasuredSteps:
    """A trace's step times held against one state's model (``key``): the median of the steps after
    warm-up, their least and greatest, the layout of the state the trace ran (``layout``, its label) and
    that layout's modelled step. ``how`` says how the median was taken; ``file_name`` is the shipped file."""

    key: str
    file_name: str
    median_s: float
    min_s: float
    max_s: float
    counted: int
    how: str
    layout: str
    model_s: float
    matched_by: str

    @property
    def error(self) -> float:
        """model ÷ measured − 1."""
        return self.model_s / self.median_s - 1


@dataclass(frozen=True)
class ParallelismChart:
    """What a ``parallelism`` fence draws: the offered models, presets and chip counts, the first
    state, the fixed fields (global batch, micro-batch, sequence, recompute, ...) and the results."""

    runs: Mapping[str, ParallelRun]  # by state key: the model and preset's run (its chips are the key's)
    found: Mapping[str, tuple[StepBreakdown, ...]]
    model_names: Mapping[str, str]
    preset_names: Mapping[str, str]
    gpu_counts: tuple[int, ...]
    initial: tuple[str, str, int]
    measured: MeasuredSteps | None = None

    @property
    def initial_key(self) -> str:
        return state_key(*self.initial)


def state_key(model_id: str, preset_id: str, gpus: int) -> str:
    return f"{model_id}|{preset_id}|{gpus}"


def layout_rows(found: Mapping[str, tuple[StepBreakdown, ...]],
                measured: MeasuredSteps | None = None) -> list[dict[str, Any]]:
    """One row per layout shown: its state key, rank, label and the core's figures; with ``measured``,
    a row for the trace (rank 0, above the layouts) and the trace's layout tagged."""
    rows = []
    for key, layouts in found.items():
        for rank, b in enumerate(layouts[:MAX_LAYOUTS], start=1):
            tagged = measured is not None and measured.key == key and measured.layout == b.layout.label
            rows.append({"k": key, "rank": rank, "label": b.layout.label, "row": f"{rank}. {b.layout.label}",
                         "step_s": b.step_s,
                         "compute": b.compute_s, "dp": b.part_s("dp"), "tp": b.part_s("tp"), "pp": b.part_s("pp"),
                         "epcp": b.part_s("ep") + b.part_s("cp"), "bubble": b.bubble_s, "measured": 0.0,
                         "mfu": b.mfu_ceiling, "mem_gb": b.memory.total_bytes / 1e9,
                         "cap_gb": (b.memory.capacity_bytes or 0) / 1e9,
                         "tag": "the trace's layout" if tagged else ""})
    if measured is not None:
        rows.insert(0, measured_row(measured))
    return rows


def measured_row(m: MeasuredSteps) -> dict[str, Any]:
    """The trace's row: its median step as a bar, least to greatest as a rule, the model's step as a diamond."""
    return {"k": m.key, "rank": 0, "label": f"measured: {m.file_name}", "row": "0. measured",
            "step_s": m.median_s, **{name: 0.0 for name, _ in PARTS}, "measured": m.median_s,
            "lo_s": m.min_s, "hi_s": m.max_s, "mark_s": m.model_s,
            "note": f"0. measured, median of {m.counted} step{'s' if m.counted != 1 else ''} · "
                    f"model {percent_text(m.error)}",
            "spread": f"{amount_text(m.min_s)} s to {amount_text(m.max_s)} s over {m.counted} steps",
            "mark": f"{m.layout}: {amount_text(m.model_s)} s a step ({percent_text(m.error)} of the measured median)"}


def percent_text(error: float) -> str:
    """A signed error in whole percent: ``+12 %``, ``−8 %``."""
    return f"{error * 100:+,.0f} %".replace("-", "−")


def time_maxima(chart: ParallelismChart) -> dict[str, float]:
    """Each state's longest time on the step axis: its slowest layout shown, or the trace's greatest step."""
    maxima = {key: max((b.step_s for b in layouts[:MAX_LAYOUTS]), default=1.0) for key, layouts in chart.found.items()}
    if (m := chart.measured) is not None:
        maxima[m.key] = max(maxima.get(m.key, 0.0), m.max_s, m.median_s)
    return maxima


def _figures(value: Any) -> Any:
    return float(f"{value:.10g}") if isinstance(value, float) else value


def parallelism_spec(chart: ParallelismChart, *, title: str | None = None, theme: Theme = "light",
                     cached: bool = True) -> dict[str, Any]:
    """The chart as a Vega-Lite dict: :data:`GRAMMAR` with every state's layouts; the selects offer
    the chart's models, presets and chip counts, starting at ``chart.initial``."""
    for what, text in (("title", title or ""), *(("name", n) for n in (*chart.model_names.values(),
                                                                        *chart.preset_names.values()))):
        bad = bad_character(text)
        if bad is not None:
            raise InputError(f"parallelism chart: the {what} {short(text)} holds a control character ({bad})")
    rows = [{k: _figures(v) for k, v in row.items()} for row in layout_rows(chart.found, chart.measured)]
    parts = [name for name, _ in PARTS if name != "measured" or chart.measured is not None]
    empty = ("No layout of these chips fits their memory\nat this batch: try more chips, recomputation or\n"
             "sequence parallelism.")
    states = [{"k": key, "n": len(layouts), "message": empty} for key, layouts in chart.found.items()]
    model, preset, gpus = chart.initial
    spec = GRAMMAR.spec(
        datasets={"layouts": rows, "states": states},
        params={"model": model, "preset": preset, "gpus": str(gpus), "cap_max": cap_max(chart), "parts": parts,
                "t_max": {key: _figures(value) for key, value in time_maxima(chart).items()},
                "names": {"models": dict(chart.model_names), "presets": dict(chart.preset_names)}},
        config=theme_config(theme), cached=cached,
        # The live view on a phone is as narrow as its still: the title steps down a size there.
        top={"title": {"text": title or {"expr": title_expression()}, "subtitle": subtitle(chart, lines=2),
                       "fontSize": {"expr": f"width < {NARROW_WIDTH_PX + 80} ? 12 : 14"}},
             "description": description(chart)},
    )
    options = {"model": (list(chart.model_names), list(chart.model_names.values())),
               "preset": (list(chart.preset_names), list(chart.preset_names.values())),
               "gpus": ([str(g) for g in chart.gpu_counts], [f"{g:,}" for g in chart.gpu_counts])}
    for signal in spec["params"]:
        if signal["name"] in options:
            values, labels = options[signal["name"]]
            signal["bind"].update(options=values, labels=labels)
    return spec


def narrow_spec(spec: dict[str, Any]) -> dict[str, Any]:
    """The phone's picture: the same chart at a 360 px phone's width, its text 11 px or more."""
    return {**spec, "width": NARROW_WIDTH_PX, "height": NARROW_HEIGHT_PX}


def cap_max(chart: ParallelismChart) -> float:
    """The memory axis's top: the largest capacity among the chart's GPUs, in GB."""
    return max((p.memory_capacity_bytes or 0) / 1e9 for p in (run.preset for run in chart.runs.values())) or 1.0


def title_expression() -> str:
    """The live title: the selected model, chip count and GPU."""
    return "names.models[model] + ' on ' + format(toNumber(gpus), ',') + ' × ' + names.presets[preset]"


def title_text(model_name: str, preset_name: str, gpus: int) -> str:
    """What :func:`title_expression` reads for one state (the static pictures' title)."""
    return f"{model_name} on {gpus:,} × {preset_name}"


def subtitle(chart: ParallelismChart, lines: int = 1) -> str | list[str]:
    """What holds for every state: the batch and the settings (two lines on a phone)."""
    lay = next(iter(chart.runs.values())).layout
    extra = ", sequence parallel" if lay.sequence_parallel else ""
    first = f"Layouts that fit, fastest first: {lay.global_batch_tokens:,}-token batch"
    second = f"micro-batch {lay.micro_batch} × {lay.seq_len:,}, recompute {lay.recompute}{extra}"
    return f"{first}, {second}" if lines == 1 else [first + ",", second]


def description(chart: ParallelismChart) -> str:
    model, preset, gpus = chart.initial
    return (f"Bar charts: for {chart.model_names[model]} on {gpus:,} × {chart.preset_names[preset]}, each layout "
            "that fits, fastest first, its step time stacked as compute, exposed communication and the "
            "pipeline bubble, and its memory per chip against the chip's capacity.")


def caption_text(chart: ParallelismChart, key: str) -> str:
    """The caption of one state, plain text: the fastest layout and its figures, from the core."""
    run, layouts = chart.runs[key], chart.found[key]
    gpus = int(key.rsplit("|", 1)[1])
    head = (f"{chart.model_names[run.model.id]} on {gpus:,} × {chart.preset_names[run.preset.id]}, a "
            f"{run.layout.global_batch_tokens:,}-token batch: ")
    if not layouts:
        return head + "no layout fits the chips' memory."
    best = layouts[0]
    tp_links = {c.link for c in best.of("tp")}
    head = measured_sentence(chart, key) + head
    return (head + f"{len(layouts)} layouts fit; the fastest, {best.layout.label}, takes "
            f"{amount_text(best.step_s)} s a step ({amount_text(best.compute_s)} s of compute, "
            f"{amount_text(best.exposed_comm_s)} s of exposed communication, {amount_text(best.bubble_s)} s of "
            f"bubble), an MFU ceiling of {percent(best.mfu_ceiling)}, with {bytes_text(best.memory.total_bytes)} "
            f"per chip" + (f"; its tensor-parallel all-reduces run over {', '.join(sorted(tp_links))}" if tp_links
                           else "") + ". Each collective is timed with the α–β model on the link its group "
            "crosses; the model leaves out kernel efficiency below peak, stage imbalance and overlap of "
            "tensor-parallel communication.")


def measured_sentence(chart: ParallelismChart, key: str) -> str:
    """The trace's figures, for the state it ran (empty elsewhere): measured against modelled, the error."""
    m = chart.measured
    if m is None or m.key != key:
        return ""
    return (f"Measured ({m.file_name}): {amount_text(m.median_s)} s a step, {m.how} "
            f"(least {amount_text(m.min_s)} s, "
            f"greatest {amount_text(m.max_s)} s); the model gives {amount_text(m.model_s)} s for {m.layout}, the "
            f"layout {m.matched_by}: an error of {percent_text(m.error)} (model ÷ measured − 1), drawn as the "
            "diamond on the measured row. ")


def caption_html(chart: ParallelismChart) -> str:
    """The first state's caption, and every state's in a template ``vega-charts.js`` reads to follow the
    selects (:func:`caption_states`; script-safe JSON, the visible text escaped)."""
    text = html.escape(caption_text(chart, chart.initial_key))
    return (f'<span class="ainotes-state-caption" data-state-caption aria-live="polite">{text}</span>'
            f'<template class="ainotes-state-captions">{scripts.script_json(caption_states(chart))}</template>')


def parallelism_figure(chart: ParallelismChart, *, title: str | None = None) -> VegaFigure:
    """The chart as a page shows it: both schemes, their phone stills, the caption that follows the
    selects, and ``assets/memory-chart.css``, which lays the selects out in a grid."""
    light, dark = (parallelism_spec(chart, title=title, theme=theme) for theme in ("light", "dark"))
    return VegaFigure(light=light, dark=dark, caption_html=caption_html(chart),
                      narrow=(narrow_spec(light), narrow_spec(dark)), snippet_title=title or static_title(chart),
                      stylesheet="memory-chart.css", css_class="ainotes-memory")


def caption_states(chart: ParallelismChart) -> dict[str, Any]:
    """What ``vega-charts.js`` needs to follow the selects: the signals and each state's caption."""
    return {"signals": ["model", "preset", "gpus"], "captions": {key: caption_text(chart, key) for key in chart.runs}}


def static_title(chart: ParallelismChart) -> str:
    model, preset, gpus = chart.initial
    return title_text(chart.model_names[model], chart.preset_names[preset], gpus)


def state_runs(base: ParallelRun, models: Sequence[Any], presets: Sequence[Any]) -> dict[tuple[str, str], ParallelRun]:
    """One run per model and preset, at ``base``'s batch and settings (each is searched per chip count)."""
    from dataclasses import replace

    return {(model.id, preset.id): replace(base, model=model, preset=preset) for model in models for preset in presets}


def build_chart(base: ParallelRun, models: Sequence[Any], presets: Sequence[Any], gpu_counts: Sequence[int],
                initial: tuple[str, str, int]) -> ParallelismChart:
    """Search every state (model × preset × chip count) at ``base``'s global batch and settings."""
    runs, found = {}, {}
    tokens = base.layout.global_batch_tokens
    for (model_id, preset_id), run in state_runs(base, models, presets).items():
        for gpus in gpu_counts:
            key = state_key(model_id, preset_id, gpus)
            found[key] = parallel_step.search(run, gpus=gpus, global_batch_tokens=tokens)
            runs[key] = run
    return ParallelismChart(runs, found, {m.id: m.name for m in models}, {p.id: p.name for p in presets},
                            tuple(gpu_counts), initial)
