"""Measured kernels on a GPU's roofline: each launch an Nsight Compute CSV lists, as a point at its
achieved intensity (FLOP per DRAM byte) and FLOP/s, against the roofs it is held to.

The numbers are the measured record's (:func:`ainotes.measurements.report.ncu_record`, the one
``ainotes measured --json`` prints): a kernel's ``intensity``, ``flops_per_s``, ``roof`` (the precision
and unit most of its FLOPs ran in: the matrix units at the precision its name gives, FP32, FP64 or FP16
on the vector units), ``held_to`` (that, or its mix of precisions), ``roof_flops_per_s`` = min(peak,
bandwidth × intensity) with peak = ΣF ÷ Σ(F_p ÷ peak_p) over its precisions, and ``fraction_of_roof``
(:func:`ainotes.measurements.report.kernel_roof`). The roofs drawn are the preset's ceilings for those
precisions (:func:`ainotes.core.roofline.ceiling_at`), each a line min(peak, bandwidth × intensity) on
log-log axes, exact at its three vertices; a kernel of mixed precisions whose own roof is not on its
colour's line at its intensity gets a dash there. A point above its
roof is drawn hollow and named in the chart and the caption as a units or FLOP-count error: no kernel
beats its roof. The chart is static (no params): its stills say everything.
"""

from __future__ import annotations

import json
import math
from collections.abc import Hashable, Mapping, Sequence
from html import escape
from typing import Any

from ainotes.charts import textsize
from ainotes.charts.figure import VegaFigure
from ainotes.charts.grammar import Grammar
from ainotes.charts.theme import COST_PALETTES, ChartTheme, Colours, Theme
from ainotes.core import roofline
from ainotes.core.hardware import Preset, precision_label
from ainotes.measurements.words import roof_percent

# Below this chart width (px) the title wraps, each line within NARROW_TITLE_LINE_PX: a 360 px phone
# leaves the chart about 320 px.
NARROW_TITLE_PX = 560
NARROW_TITLE_LINE_PX = 300
TITLE_SIZE_PX = 16  # bold, as the theme below sets it

STATIC_WIDTH_PX = 680
STATIC_HEIGHT_PX = 460
NARROW_WIDTH_PX = 300  # a 360 px phone's column
NARROW_HEIGHT_PX = 420
# Room around the points and ridges on the axes (factors: a third of a decade or so).
MARGIN = 3.0
ABOVE_ROOF_WORDS = "above its roof: a units or FLOP-count error"


def _paint(c: Colours) -> dict[str, Any]:
    return {
        "title": {"subtitleColor": c["muted"]},
        "style": {"point-label": {"color": c["text"], "fontSize": 12, "fontWeight": 600},
                  "flag-label": {"color": c["text"], "fontSize": 12, "fontStyle": "italic"}},
    }


THEME = ChartTheme(
    "measured-roofline",
    layout={"axis": {"labelFontSize": 12, "titleFontSize": 13, "titleFontWeight": "normal"},
            "legend": {"labelFontSize": 12, "symbolStrokeWidth": 3, "labelLimit": 0},
            "title": {"fontSize": TITLE_SIZE_PX, "fontWeight": 600, "anchor": "start", "offset": 10,
                      "subtitleFontSize": 12}},
    palettes=COST_PALETTES, paint=_paint,
)


def wrapped_title(text: str) -> dict[str, str]:
    """The title as an expression: one line, or on a narrow chart as many lines as keep each within
    :data:`NARROW_TITLE_LINE_PX` at the title's size and weight, measured in the shipped font (two
    halves were still wider than a phone's chart for a long title)."""
    lines: list[str] = []
    for word in text.split(" "):
        joined = f"{lines[-1]} {word}" if lines else word
        if lines and textsize.width_px(joined, TITLE_SIZE_PX, "Bold") <= NARROW_TITLE_LINE_PX:
            lines[-1] = joined
        else:
            lines.append(word)
    if len(lines) < 2:
        return {"expr": json.dumps(text, ensure_ascii=False)}
    return {"expr": f"width < {NARROW_TITLE_PX} ? {json.dumps(lines, ensure_ascii=False)} : "
                    f"{json.dumps(text, ensure_ascii=False)}"}


def roof_name(roof: str) -> str:
    """``"fp16 tensor"`` (the record's form) → ``"FP16 tensor roof"``."""
    precision, unit = roof.split(" ")
    return f"{precision_label(precision, unit)} roof"


def _drawable(kernel: Mapping[str, Any]) -> bool:
    values = (kernel.get("intensity"), kernel.get("flops_per_s"), kernel.get("roof_flops_per_s"))
    return all(isinstance(v, (int, float)) and math.isfinite(v) and v > 0 for v in values)


def _decade_floor(value: float) -> float:
    return 10.0 ** math.floor(math.log10(value))


def _decade_ceil(value: float) -> float:
    return 10.0 ** math.ceil(math.log10(value))


def _decades(low: float, high: float) -> list[float]:
    return [10.0**e for e in range(math.ceil(math.log10(low) - 1e-9), math.floor(math.log10(high) + 1e-9) + 1)]


def roof_words(kernel: Mapping[str, Any]) -> str:
    """``FP64 vector roof``, or ``mixed roof`` for a kernel whose FLOPs ran in more than one precision."""
    return "mixed roof" if kernel.get("mixed") else roof_name(kernel["roof"])


def point_label(number: int, kernel: Mapping[str, Any]) -> str:
    """``1: 75 % of FP32 vector roof``, or ``3: above its roof (140 %)``: the readout beside each point."""
    percent = roof_percent(kernel["fraction_of_roof"], 0)
    if kernel.get("above_roof"):
        return f"{number}: above its {roof_words(kernel)} ({percent})"
    return f"{number}: {percent} of {roof_words(kernel)}"


def _own_roof(kernel: Mapping[str, Any], ceiling: Any) -> float | None:
    """A mixed kernel's own roof where it is off its colour's line at its intensity by more than 1 %, else None."""
    on_line = roofline.attainable(kernel["intensity"], ceiling.peak_flops_per_s, ceiling.memory_bandwidth_bytes_per_s)
    own = kernel["roof_flops_per_s"]
    return own if abs(own / on_line - 1) > 0.01 else None


# The phone's plot area (px) less the axes, and a label's line height: where labels and points are checked to meet.
_PLOT_PX = (NARROW_WIDTH_PX - 50, NARROW_HEIGHT_PX - 130)
_LABEL_LINE_PX = 15


def short_label(number: int, kernel: Mapping[str, Any]) -> str:
    """``1: 75 %`` or ``3: above roof (140 %)``: the phone's readout where the whole one fits on neither side."""
    percent = roof_percent(kernel["fraction_of_roof"], 0)
    return f"{number}: above roof ({percent})" if kernel.get("above_roof") else f"{number}: {percent}"


def _place_labels(points: list[dict[str, Any]], x_domain: tuple[float, float], y_domain: tuple[float, float]
                  ) -> None:
    """Where each label goes, checked on a phone's chart (the desk's is wider, its labels as wide):

    * ``right`` (the label left of its point): past the middle of the axis, unless the label only fits on the
      other side; ``narrow_label`` the whole label where it fits on either side, else :func:`short_label`;
    * ``up``: above its point, as a point over its roof has it, or where the label below would cover another
      point (two kernels close together) or run past the plot's bottom edge, and above would not."""
    def at(point: Mapping[str, Any]) -> tuple[float, float]:
        return (math.log(point["x"] / x_domain[0]) / math.log(x_domain[1] / x_domain[0]) * _PLOT_PX[0],
                (1 - math.log(point["y"] / y_domain[0]) / math.log(y_domain[1] / y_domain[0])) * _PLOT_PX[1])

    def width(text: str) -> float:
        return textsize.width_px(text, 12, "Bold") + 7

    for point in points:
        x = at(point)[0]
        fits = {True: width(point["label"]) <= x, False: width(point["label"]) <= _PLOT_PX[0] - x}
        if not fits[point["right"]] and fits[not point["right"]]:
            point["right"] = not point["right"]
        point["narrow_label"] = point["label"] if any(fits.values()) else point["short_label"]
        if point["narrow_label"] != point["label"] and width(point["narrow_label"]) > (
                x if point["right"] else _PLOT_PX[0] - x):
            point["right"] = not point["right"]

    def covers(point: Mapping[str, Any], up: bool) -> bool:
        x, y = at(point)
        wide = width(point["narrow_label"])
        left, right = (x - wide - 6, x + 6) if point["right"] else (x - 6, x + wide + 6)
        top, bottom = (y - 7 - _LABEL_LINE_PX - 6, y - 4) if up else (y + 4, y + 7 + _LABEL_LINE_PX + 6)
        return any(left <= ox <= right and top <= oy <= bottom
                   for ox, oy in (at(other) for other in points if other is not point))

    def past_bottom(point: Mapping[str, Any]) -> bool:  # a label below would run into the x axis's labels
        return at(point)[1] + 7 + _LABEL_LINE_PX + 6 > _PLOT_PX[1]

    for point in points:
        point["up"] = point["above"] or ((covers(point, up=False) or past_bottom(point))
                                         and not covers(point, up=True))


def chart_rows(record: Mapping[str, Any], preset: Preset) -> dict[str, Any]:
    """The chart's data: ``points`` (one per drawable kernel, numbered as in the table), ``roofs`` (three
    vertices per roof line), the axes' domains, and the kernels left out (no FLOP count or DRAM bytes)."""
    kernels = list(record["kernels"])
    drawn = [(n, k) for n, k in enumerate(kernels, start=1) if _drawable(k)]
    roofs = list(dict.fromkeys(k["roof"] for _, k in drawn))
    ceilings = {}
    for roof in roofs:
        precision, unit = roof.split(" ")
        found = roofline.ceiling_at(preset, precision, unit=unit)
        if found is not None:
            ceilings[roof] = found
    xs = [k["intensity"] for _, k in drawn] + [c.ridge_flop_per_byte for c in ceilings.values()]
    x_min = _decade_floor(min(xs, default=1.0) / MARGIN)
    x_max = _decade_ceil(max(xs, default=100.0) * MARGIN)
    ys = [k["flops_per_s"] for _, k in drawn]
    y_min = _decade_floor(min(ys + [c.memory_bandwidth_bytes_per_s * x_min for c in ceilings.values()],
                              default=1e12))
    y_max = max(ys + [c.peak_flops_per_s for c in ceilings.values()], default=1e15) * MARGIN
    roof_rows = []
    for roof, found in ceilings.items():
        for x in (x_min, found.ridge_flop_per_byte, x_max):
            roof_rows.append({"roof": roof_name(roof), "x": x, "y": roofline.attainable(
                x, found.peak_flops_per_s, found.memory_bandwidth_bytes_per_s)})
    points = [{"n": n, "label": point_label(n, k), "short_label": short_label(n, k), "held_to": k["held_to"],
               "own_roof": _own_roof(k, ceilings[k["roof"]]) if k["roof"] in ceilings else None,
               "name": k["name"], "roof": roof_name(k["roof"]), "x": k["intensity"], "y": k["flops_per_s"],
               "fraction": k["fraction_of_roof"], "above": bool(k.get("above_roof")),
               # its label goes left of it past the middle of the axis
               "right": math.log(k["intensity"] / x_min) > math.log(x_max / x_min) / 2,
               "of_roof": f"{roof_percent(k['fraction_of_roof'])} of its roof"} for n, k in drawn]
    for point in points:  # a mixed kernel's own roof widens the axis like any point
        if point["own_roof"]:
            y_max = max(y_max, point["own_roof"] * MARGIN)
    _place_labels(points, (x_min, x_max), (y_min, y_max))
    return {"points": points, "roofs": roof_rows, "x_domain": [x_min, x_max], "y_domain": [y_min, y_max],
            "left_out": [n for n, k in enumerate(kernels, start=1) if not _drawable(k)],
            "roof_names": [roof_name(r) for r in ceilings]}


def _build(variant: Hashable) -> dict[str, Any]:
    """The chart without data; ``variant`` names the datasets with rows (``"roofs"``, ``"points"``)."""
    import altair as alt  # only when the structure is built, not when it is read back

    x_scale = alt.Scale(type="log", domain=alt.ExprRef("x_domain"), nice=False)
    y_scale = alt.Scale(type="log", domain=alt.ExprRef("y_domain"), nice=False)
    x = alt.X("x:Q", scale=x_scale, title="Achieved intensity (FLOP per DRAM byte)",
              axis=alt.Axis(values=alt.ExprRef("x_ticks"), labelExpr="format(datum.value, ',~g')",
                            labelOverlap="greedy"))
    y = alt.Y("y:Q", scale=y_scale, title="FLOP/s",
              axis=alt.Axis(values=alt.ExprRef("y_ticks"), labelExpr="format(datum.value, '.2~s')",
                            labelOverlap="greedy"))
    roof_scale = alt.Scale(domain=alt.ExprRef("roof_names"))
    colour = alt.Color("roof:N", title=None, scale=roof_scale,
                       legend=alt.Legend(orient="bottom", direction="vertical", symbolType="stroke"))
    lines = alt.Chart(alt.NamedData("roofs")).mark_line(strokeWidth=2.5).encode(
        x=x, y=y, color=colour, detail="roof:N", order="x:Q",
        tooltip=[alt.Tooltip("roof:N", title="Roof")])
    points = alt.Chart(alt.NamedData("points"))
    tips = [alt.Tooltip("n:N", title="Kernel"), alt.Tooltip("name:N", title="Name"),
            alt.Tooltip("held_to:N", title="Held to"), alt.Tooltip("of_roof:N", title="Reached")]
    # A mixed kernel's own roof, ΣF ÷ Σ(F_p ÷ peak_p), where its colour's line does not pass through it.
    # aria=False: the caption and the table state each kernel's roof in words, and the layer is empty for
    # most files (no mixed kernel), where it would be an unnamed graphics-symbol group.
    own = points.transform_filter("datum.own_roof != null").mark_point(
        shape="stroke", size=260, strokeWidth=3, opacity=1, aria=False).encode(
        x="x:Q", y=alt.Y("own_roof:Q", scale=y_scale), color=alt.Color("roof:N", legend=None, scale=roof_scale),
        tooltip=[alt.Tooltip("n:N", title="Own roof of kernel"), alt.Tooltip("held_to:N", title="Held to")])
    marks = points.mark_point(size=90, strokeWidth=2, opacity=1).encode(
        x="x:Q", y="y:Q", color=alt.Color("roof:N", legend=None, scale=roof_scale),
        fill=alt.condition("datum.above", alt.value("transparent"), alt.Color("roof:N", legend=None, scale=roof_scale)),
        shape=alt.condition("datum.above", alt.value("diamond"), alt.value("circle")), tooltip=tips)
    # Below a point under its roof (clear of the roof line), above one over it; on the side with more room.
    # A label that would cover another point goes above its own, and a phone's chart may shorten it
    # (``up``, ``narrow_label``: :func:`_place_labels`).
    labels = [points.transform_calculate(shown=f"width < {NARROW_TITLE_PX} ? datum.narrow_label : datum.label")
              .transform_filter(f"{'' if up else '!'}datum.up && {'' if right else '!'}datum.right && "
                                      f"{'' if flag else '!'}datum.above")
              .mark_text(align="right" if right else "left", baseline="bottom" if up else "top",
                         dx=-7 if right else 7, dy=-7 if up else 7, style="flag-label" if flag else "point-label")
              .encode(x="x:Q", y="y:Q", text="shown:N")
              for up in (False, True) for right in (False, True) for flag in (False, True)]
    # A layer over an empty dataset is left out (``variant`` names the ones with rows): Vega would draw it
    # as an unnamed, empty graphics-symbol group, which screen readers announce and axe-core flags.
    present = set(variant) if isinstance(variant, tuple) else set()
    layers = [*([lines] if "roofs" in present else []), *([own, marks, *labels] if "points" in present else [])]
    chart = alt.layer(*(layers or [lines.mark_line(opacity=0, aria=False)])).properties(
        width=STATIC_WIDTH_PX, height=STATIC_HEIGHT_PX,
        autosize=alt.AutoSizeParams(type="fit", contains="padding"), padding=8,
    ).add_params(*(alt.param(name=name, value=value) for name, value in (
        ("x_domain", [1.0, 10.0]), ("y_domain", [1.0, 10.0]), ("x_ticks", [1.0]), ("y_ticks", [1.0]),
        ("roof_names", ["a"]))))
    spec = chart.to_dict(validate=False)
    spec.pop("config", None)
    return spec


GRAMMAR = Grammar("measured-roofline", _build, __file__)


def measured_roofline_spec(record: Mapping[str, Any], preset: Preset, *, title: str,
                           theme: Theme = "light") -> dict[str, Any]:
    """The chart as Vega-Lite: the record's kernels against ``preset``'s roofs."""
    rows = chart_rows(record, preset)
    subtitle = ["Measured kernels, numbered as in the table", f"below, against the roofs of the {preset.name}"]
    return GRAMMAR.spec(
        variant=tuple(name for name in ("roofs", "points") if rows[name]),
        datasets={"roofs": rows["roofs"], "points": rows["points"]},
        params={"x_domain": rows["x_domain"], "y_domain": rows["y_domain"],
                "x_ticks": _decades(*rows["x_domain"]), "y_ticks": _decades(*rows["y_domain"]),
                "roof_names": rows["roof_names"] or ["no roof"]},
        config=THEME.config(theme),
        top={"title": {"text": wrapped_title(title), "subtitle": subtitle},
             "description": f"Roofline of the {preset.name} with {len(rows['points'])} measured kernels."})


def fraction_range(fractions: Sequence[float]) -> str:
    """``41–78 %`` (or ``41 %`` for one), whole percent."""
    low, high = roof_percent(min(fractions), 0), roof_percent(max(fractions), 0)
    return low if low == high else f"{low.removesuffix(' %')}–{high}"


def caption_text(record: Mapping[str, Any], preset: Preset, file_name: str) -> str:
    """``2 measured kernels from x.csv, 45–75 % of their roof on the A100 …``: what the chart shows."""
    rows = chart_rows(record, preset)
    points = rows["points"]
    count = len(points)
    parts = []
    if points:
        noun = "kernel" if count == 1 else "kernels"
        parts.append(f"{count} measured {noun} from {file_name}, "
                     f"{fraction_range([p['fraction'] for p in points])} of {'its' if count == 1 else 'their'} "
                     f"roof on the {preset.name}.")
    else:
        parts.append(f"No kernel of {file_name} has the FLOP count and DRAM bytes a roofline point needs.")
    parts.append("Each point sits at the kernel's FLOPs ÷ DRAM bytes and FLOPs ÷ duration, as Nsight Compute "
                 "counted them; its roof is min(peak, memory bandwidth × intensity) of the units and precision "
                 "its FLOPs ran in: the matrix units (tensor cores on NVIDIA) at the precision its name gives, "
                 "the vector units (CUDA cores) at FP32, FP64 or FP16 as its FFMA, DFMA or HFMA counts say.")
    if points:
        parts.append("Held to: " + "; ".join(f"{p['n']} {p['held_to']}" for p in points) + ".")
    if any(k.get("mixed") for k in record["kernels"]):
        parts.append("A kernel whose FLOPs F_p ran in several precisions is held to ΣF ÷ Σ(F_p ÷ peak_p), the "
                     "rate if each precision ran at its peak in turn, drawn in the colour of its largest share"
                     + (" (a dash marks it where that colour's line does not pass)."
                        if any(p["own_roof"] for p in points) else "."))
    above = [p["n"] for p in points if p["above"]]
    if above:
        listed = ", ".join(str(n) for n in above)
        parts.append(f"Kernel{'s' if len(above) > 1 else ''} {listed}: {ABOVE_ROOF_WORDS}, not a fast kernel "
                     "(hollow diamonds).")
    if rows["left_out"]:
        listed = ", ".join(str(n) for n in rows["left_out"])
        parts.append(f"Not drawn (no FLOP count, DRAM bytes or roof): {listed}.")
    if any(k.get("tensor_flops_assumed") for k in record["kernels"]):
        parts.append("Matrix-unit FLOPs assume the mma shape of the kernel's precision (4,096 FLOPs per "
                     "instruction for FP16's m16n8k16): an estimate.")
    return " ".join(parts)


def measured_roofline_figure(record: Mapping[str, Any], preset: Preset, *, title: str,
                             file_name: str) -> VegaFigure:
    """Both schemes, their phone stills and the caption (every string escaped)."""
    light, dark = (measured_roofline_spec(record, preset, title=title, theme=theme) for theme in ("light", "dark"))
    narrow = tuple({**spec, "width": NARROW_WIDTH_PX, "height": NARROW_HEIGHT_PX} for spec in (light, dark))
    return VegaFigure(light=light, dark=dark, caption_html=escape(caption_text(record, preset, file_name)),
                      narrow=narrow, snippet_title=title)
