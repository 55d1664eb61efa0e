"""A measured nccl-tests run over the α–β model: time and bus bandwidth against message size, the run's
sizes as points over one line per algorithm of the model on a link preset, and the line fitted to the run.

The numbers are the measured record's (:func:`ainotes.measurements.report.nccl_record`, the one
``ainotes measured --json`` prints): the points are the block the fit and the model read (out-of-place,
else in-place), each size's ``time_us`` and ``busbw_gbps`` as nccl-tests printed them; the model's error
per size is the record's ``model.rows``. The model's lines are the core's
(:func:`ainotes.core.collective_cost.collective_times` on the link's α and B, bus bandwidth as nccl-tests
defines it, :attr:`~ainotes.core.collective_cost.AlgorithmTime.busbw_bytes_per_s`), on a grid of sizes
across the run's; the fitted line is t = intercept + slope · S of the record's fit. The chart is static:
its stills say everything.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping
from html import escape
from typing import Any

from ainotes.charts.figure import VegaFigure
from ainotes.charts.grammar import Grammar
from ainotes.charts.measured_roofline import wrapped_title
from ainotes.charts.theme import COST_PALETTES, ChartTheme, Colours, Theme
from ainotes.core import collective_cost as cc
from ainotes.core.links import Link

STATIC_WIDTH_PX = 680
PANEL_HEIGHT_PX = 480  # the whole chart: title, plot, axis and legends (autosize fit)
NARROW_WIDTH_PX = 300  # a 360 px phone's column
NARROW_PANEL_HEIGHT_PX = 480
GRID_PER_DECADE = 8
FITTED = "fitted to the run"
MEASURED = "measured"


def _paint(c: Colours) -> dict[str, Any]:
    return {
        "title": {"subtitleColor": c["muted"]},
        "style": {"measured-point": {"color": c["text"], "stroke": c["marker_stroke"], "strokeWidth": 1},
                  "fitted-line": {"color": c["muted"], "strokeDash": [6, 4], "strokeWidth": 2}},
    }


THEME = ChartTheme(
    "measured-cost",
    layout={"axis": {"labelFontSize": 12, "titleFontSize": 13, "titleFontWeight": "normal"},
            # The three legends (model lines, fitted line, measured dots) stack in one column: side by side,
            # the last ones ran past a 360 px phone's edge ("fitted to the run" was cut off).
            "legend": {"labelFontSize": 12, "symbolStrokeWidth": 3, "labelLimit": 0,
                       "layout": {"bottom": {"direction": "vertical", "anchor": "start", "margin": 2}}},
            "title": {"fontSize": 16, "fontWeight": 600, "anchor": "start", "offset": 10, "subtitleFontSize": 12}},
    palettes=COST_PALETTES, paint=_paint,
)


def _sizes(low: float, high: float) -> list[float]:
    first, last = math.floor(math.log10(low) * GRID_PER_DECADE), math.ceil(math.log10(high) * GRID_PER_DECADE)
    return [10 ** (step / GRID_PER_DECADE) for step in range(first, last + 1)]


def measured_points(record: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The sizes the model is held to, in the block it reads: bytes, time (s) and busbw (GB/s) as printed."""
    block = record["model"]["times"]
    by_size = {row["bytes"]: row[block] for row in record["rows"] if row.get(block)}
    return [{"bytes": row["bytes"], "time_s": row["measured_s"], "busbw_gbps": by_size[row["bytes"]]["busbw_gbps"],
             "what": MEASURED} for row in record["model"]["rows"]]


def chart_rows(record: Mapping[str, Any], link: Link) -> dict[str, Any]:
    """The chart's data: ``points``, ``lines`` (each algorithm of the model, and the fit) over the run's sizes."""
    op, ranks = record["op"], record["ranks"]
    points = measured_points(record)
    sizes = _sizes(min(p["bytes"] for p in points), max(p["bytes"] for p in points))
    lines = []
    for size in sizes:
        for found in cc.collective_times(op, ranks, size, bandwidth_bytes_per_s=link.group_bandwidth_bytes_per_s(ranks),
                                         latency_s=link.latency_s):
            lines.append({"bytes": size, "time_s": found.time_s, "busbw_gbps": found.busbw_bytes_per_s / 1e9,
                          "what": f"model: {cc.short_title(op, found.algorithm)}"})
    if fitted := record.get("fit"):
        for size in sizes:
            time_s = fitted["intercept_s"] + fitted["slope_s_per_byte"] * size
            lines.append({"bytes": size, "time_s": time_s, "what": FITTED,
                          "busbw_gbps": size / time_s * cc.bus_factor(op, ranks) / 1e9})
    names = list(dict.fromkeys(line["what"] for line in lines if line["what"] != FITTED))
    return {"points": points, "lines": lines, "algorithms": names}


# 10 µs, 1 ms, 1 s: each decade in the unit that keeps it short.
_TIME_LABEL = ("datum.value >= 1 ? format(datum.value, '~g') + ' s' : datum.value >= 1e-3 ? "
               "format(datum.value * 1e3, '~g') + ' ms' : format(datum.value * 1e6, '~g') + ' µs'")


def _decades(low: float, high: float) -> list[float]:
    return [10.0**e for e in range(math.floor(math.log10(low)), math.ceil(math.log10(high)) + 1)]


PANELS = {"time": ("time_s", "Time (log)"), "busbw": ("busbw_gbps", "Bus bandwidth (GB/s)")}


def _build(variant: Hashable) -> dict[str, Any]:
    """One panel, ``variant`` ``"time"`` (log-log) or ``"busbw"`` (log x, linear y)."""
    import altair as alt  # only when the structure is built, not when it is read back

    field, title = PANELS[str(variant)]
    log_y = variant == "time"
    x = alt.X("bytes:Q", title="Message size (bytes)",
              scale=alt.Scale(type="log", domain=alt.ExprRef("x_domain"), nice=False),
              axis=alt.Axis(values=alt.ExprRef("x_ticks"), labelExpr="format(datum.value, '.0~s') + 'B'",
                            labelOverlap="greedy"))
    y = alt.Y(f"{field}:Q", title=title,
              scale=alt.Scale(type="log", domain=alt.ExprRef("time_domain"), nice=False) if log_y
              else alt.Scale(zero=True),
              axis=alt.Axis(labelOverlap="greedy", values=alt.ExprRef("time_ticks") if log_y else alt.Undefined,
                            labelExpr=_TIME_LABEL if log_y else "format(datum.value, ',~g')"))
    colour = alt.Color("what:N", title=None, scale=alt.Scale(domain=alt.ExprRef("algorithms")),
                       legend=alt.Legend(orient="bottom", direction="vertical", symbolType="stroke"))
    lines = alt.Chart(alt.NamedData("lines"))
    model = lines.transform_filter(f"datum.what != '{FITTED}'").mark_line(strokeWidth=2.5).encode(
        x=x, y=y, color=colour, detail="what:N", order="bytes:Q")
    fitted = lines.transform_filter(f"datum.what == '{FITTED}'").mark_line(style="fitted-line").encode(
        x="bytes:Q", y=f"{field}:Q", detail="what:N", order="bytes:Q",
        strokeDash=alt.StrokeDash("what:N", title=None, legend=alt.Legend(orient="bottom", symbolType="stroke"),
                                  scale=alt.Scale(domain=[FITTED], range=[[6, 4]])))
    tips = [alt.Tooltip("bytes:Q", title="Bytes", format=","), alt.Tooltip("time_s:Q", title="Time (s)", format=".4~g"),
            alt.Tooltip("busbw_gbps:Q", title="busbw (GB/s)", format=".4~g")]
    points = alt.Chart(alt.NamedData("points")).mark_point(filled=True, size=45, opacity=1, style="measured-point"
                                                           ).encode(
        x="bytes:Q", y=f"{field}:Q", tooltip=tips,
        shape=alt.Shape("what:N", title=None, scale=alt.Scale(domain=[MEASURED], range=["circle"]),
                        legend=alt.Legend(orient="bottom", symbolFillColor="currentColor")))
    chart = alt.layer(model, fitted, points).properties(
        width=STATIC_WIDTH_PX, height=PANEL_HEIGHT_PX, padding=8,
        autosize=alt.AutoSizeParams(type="fit", contains="padding")).add_params(
        *(alt.param(name=name, value=value) for name, value in (
            ("x_domain", [1.0, 10.0]), ("algorithms", ["a"]), ("x_ticks", [1.0]), ("time_domain", [1.0, 10.0]),
            ("time_ticks", [1.0]))))
    spec = chart.to_dict(validate=False)
    spec.pop("config", None)
    return spec


GRAMMAR = Grammar("measured-cost", _build, __file__)


def measured_cost_spec(record: Mapping[str, Any], link: Link, *, title: str, panel: str = "time",
                       theme: Theme = "light") -> dict[str, Any]:
    """One panel of the chart as Vega-Lite (``panel``: ``"time"`` or ``"busbw"``): the run over the model."""
    rows = chart_rows(record, link)
    sizes = [line["bytes"] for line in rows["lines"]]
    times = [row["time_s"] for row in (*rows["lines"], *rows["points"])]
    what = "times" if panel == "time" else "bus bandwidths"
    return GRAMMAR.spec(
        datasets={"lines": rows["lines"], "points": rows["points"]}, variant=panel,
        params={"x_domain": [min(sizes), max(sizes)], "algorithms": rows["algorithms"], "x_ticks": [
            t for t in _decades(min(sizes), max(sizes)) if min(sizes) <= t <= max(sizes)],
            "time_domain": [10.0 ** math.floor(math.log10(min(times))), 10.0 ** math.ceil(math.log10(max(times)))],
            "time_ticks": _decades(min(times), max(times))},
        config=THEME.config(theme),
        top={"title": {"text": wrapped_title(title), "subtitle": [
            f"{record['ranks']}-rank {record['op']}: measured {what} (dots)",
            f"over the α–β model of {link.name},", "one line per algorithm; dashed: fitted to the run"]},
            "description": f"Measured {record['op']} {what} against the α–β model of {link.name}."})


def error_range(record: Mapping[str, Any]) -> str:
    """``−76 % to +1,255 %``: the model's least and greatest error over the run's sizes, whole percent."""
    errors = [row["error"] * 100 for row in record["model"]["rows"]]
    return f"{min(errors):+,.0f} % to {max(errors):+,.0f} %"


def _duration(seconds: float) -> str:
    return f"{seconds * 1e6:.3g} µs"


def _group_gbps(link: Link, ranks: int) -> float:
    """The B the model takes for ``ranks`` chips: the link's, or less on a full mesh
    (:meth:`~ainotes.core.links.Link.group_bandwidth_bytes_per_s`)."""
    return link.bandwidth_gbps if link.mesh_links is None else link.group_bandwidth_bytes_per_s(ranks) / 1e9


def caption_text(record: Mapping[str, Any], link: Link, file_name: str) -> str:
    """What the chart shows: the run, the model's error range, the fit beside the preset."""
    model = record["model"]
    bandwidth_gbps = _group_gbps(link, record["ranks"])
    block = "out-of-place" if model["times"] == "out_of_place" else "in-place"
    parts = [f"{len(model['rows'])} sizes of a {record['ranks']}-rank {record['op']} from {file_name} "
             f"({block} times) against the α–β model of {link.name} (α = {_duration(link.latency_s)}, "
             f"B = {bandwidth_gbps:g} GB/s): the model's fastest algorithm is off by {error_range(record)} "
             "(model ÷ measured − 1), size by size in the table below."]
    if fitted := record.get("fit"):
        parts.append(f"Fitted to the run through the {fitted['algorithm']}'s coefficients (relative least squares): "
                     f"α = {_duration(fitted['alpha_s'])}, B = {fitted['bandwidth_gbps']:.4g} GB/s, beside the "
                     f"preset's {_duration(link.latency_s)} and {bandwidth_gbps:g} GB/s.")
    if record.get("nccl_algo"):
        parts.append(f"The run set NCCL_ALGO={record['nccl_algo']}.")
    parts.append("Bus bandwidth is nccl-tests' busbw: size ÷ time × the collective's bus factor.")
    parts += [f"Note: {note}." for note in record["notes"]]
    return " ".join(parts)


def measured_cost_figures(record: Mapping[str, Any], link: Link, *, title: str, file_name: str
                          ) -> tuple[VegaFigure, VegaFigure]:
    """The time panel (with the caption) and the bus-bandwidth panel: both schemes and phone stills each."""
    figures = []
    for panel, heading in (("time", title), ("busbw", f"{title}: bus bandwidth")):
        light, dark = (measured_cost_spec(record, link, title=heading, panel=panel, theme=theme)
                       for theme in ("light", "dark"))
        narrow = tuple({**spec, "width": NARROW_WIDTH_PX, "height": NARROW_PANEL_HEIGHT_PX} for spec in (light, dark))
        caption = (caption_text(record, link, file_name) if panel == "time" else
                   "The same run's bus bandwidth: nccl-tests' busbw (size ÷ time × the collective's bus factor) "
                   "over the model's and the fitted line's.")
        figures.append(VegaFigure(light=light, dark=dark, caption_html=escape(caption), narrow=narrow,
                                  snippet_title=heading))
    return figures[0], figures[1]
