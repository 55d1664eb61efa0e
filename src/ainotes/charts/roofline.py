"""The roofline explorer: one log-log Vega-Lite chart built with altair.

Every number in the chart's data comes from the core (:mod:`ainotes.roofline`,
:mod:`ainotes.kernels`): each ceiling is drawn from its three exact vertices
(on log-log axes the roofline is two straight segments, so nothing is sampled),
the ridge points and the kernels' bounds are computed in Python. The only
arithmetic left to the browser is the intensity readout, which re-evaluates
the same formula,

    attainable = min(peak, bandwidth × intensity),   memory-bound iff intensity < peak ÷ bandwidth,

from the ``peak``, ``bandwidth`` and ``ridge`` fields of the data as the reader
moves the slider (the tests check it against the core).

Interaction is Vega-Lite params only, so the same spec serves the static SVG,
the page and the standalone file:

* ``sparsity`` (checkbox): draw the 2:4 structured-sparse ceilings instead of
  the dense ones; the data holds both. A preset without a supported sparse path
  has "sparse" rows equal to its dense rows, so its line stays put.
* ``preset`` (select): ``"*"`` for all presets, else one preset id.
* ``log_intensity`` (range): log10 of the readout's intensity in FLOP/byte;
  sliders have no log scale, so the slider moves over the exponent.

Size: the static render uses a fixed size (:data:`STATIC_WIDTH_PX` ×
:data:`STATIC_HEIGHT_PX`, with ``autosize: fit``, so those are the outer
dimensions). A page replaces both by ``"container"`` (see
:func:`ainotes.render.responsive`), and the same chart then fills its box.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import html
import json
import math
import re
from collections.abc import Iterable, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any, Literal

from ainotes import render, roofline, units
from ainotes.errors import InputError
from ainotes.hardware import Preset
from ainotes.kernels import Kernel
from ainotes.textcheck import bad_character, short

STATIC_WIDTH_PX = 720
STATIC_HEIGHT_PX = 540
DEFAULT_TITLE = "Roofline: FP16/BF16 tensor cores, FP32 accumulate"

# Readout slider resolution, in decades of intensity.
SLIDER_STEP_DECADES = 0.01
# Where the intensity axis starts at the latest: element-wise kernels sit near 0.1 FLOP/byte.
DEFAULT_MIN_INTENSITY_FLOP_PER_BYTE = 0.1
# The flat ceilings run on for at least this factor past the farthest (sparse) ridge point.
RIDGE_HEADROOM = 10.0
# Kernel markers keep this factor away from the axis ends.
KERNEL_MARGIN = 1.5

ALL_PRESETS = "*"  # not a valid preset id, so it cannot collide with one
READOUT_LINE_PX = 16
READOUT_GAP_PX = 10
# Below this plot width (px) the legend stacks in one column and ridge labels wait for a single preset.
NARROW_PLOT_PX = 420
# The readout starts this far left of the plot, over the y-axis labels, to give its lines room.
READOUT_INDENT_PX = 80

Theme = Literal["light", "dark"]

# Okabe & Ito's colour-blind-safe palette. Dark mode swaps in the lighter member
# of each pair (blue → sky blue, vermillion → orange, orange → yellow) so every
# line keeps at least 4:1 contrast against its background.
_THEMES: dict[str, dict[str, Any]] = {
    "light": {
        "background": "#ffffff",
        "text": "#1f2329",
        "muted": "#5c6370",
        "grid": "#e3e5e8",
        "domain": "#9aa0a8",
        "marker_stroke": "#ffffff",
        "palette": ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9"],
    },
    "dark": {
        # Material's slate scheme: --md-default-bg-color hsl(232 15% 14%), text hsl(232 75% 95% / .82).
        "background": "#1e2129",
        "text": "#e2e4e9",
        "muted": "#a3a9b7",
        "grid": "#323744",
        "domain": "#6b7180",
        "marker_stroke": "#1e2129",
        "palette": ["#56B4E9", "#E69F00", "#009E73", "#CC79A7", "#F0E442", "#D55E00"],
    },
}
# Built once per chart with these stand-ins, then coloured per theme (:func:`_themed`): the
# light and dark specs differ only in colours, and building with altair is the slow part.
# Each holds a control character, which no user text may (textcheck), so none can collide.
_STAND_INS: dict[str, Any] = {
    **{key: f"\x1bainotes:{key}" for key in _THEMES["light"] if key != "palette"},
    "palette": [f"\x1bainotes:palette-{i}" for i in range(len(_THEMES["light"]["palette"]))],
}
# The site loads no web fonts: the system's sans-serif, as Material's own stack falls back to.
_FONT = "-apple-system, 'Segoe UI', Helvetica, Arial, sans-serif"

_SI_PREFIXES = "['', 'k', 'M', 'G', 'T', 'P', 'E']"


def flops_per_s_expr(value: str) -> str:
    """A Vega expression that writes FLOP/s as :func:`ainotes.units.flops_per_s` does: four
    significant digits, trailing zeros dropped, an SI prefix (``"989.4 TFLOP/s"``).

    The prefix is the power of 1000 below the value, floor(log10(v) / 3); the tiny
    epsilon keeps exact powers (log(1e15) / log(1000) = 4.999…) on the right side.
    """
    power = f"clamp(floor(log({value}) / log(1000) + 1e-9), 0, 6)"
    return f"(format({value} / pow(1000, {power}), '.4~r') + ' ' + {_SI_PREFIXES}[{power}] + 'FLOP/s')"


def intensity_expr(value: str) -> str:
    """A Vega expression for an intensity in FLOP/byte, rounded as :func:`ainotes.units.intensity` does."""
    return f"({value} >= 100 ? format({value}, ',.0f') : format({value}, '.3~r')) + ' FLOP/B'"


def intensity_label(intensity_flop_per_byte: float) -> str:
    """``"295 FLOP/B"``: the chart's short form of :func:`ainotes.units.intensity`."""
    return units.intensity(intensity_flop_per_byte).removesuffix(" FLOP/byte") + " FLOP/B"


def _decade_floor(value: float) -> float:
    return 10.0 ** math.floor(math.log10(value))


def _decade_ceil(value: float) -> float:
    return 10.0 ** math.ceil(math.log10(value))


def _decades(low: float, high: float) -> list[float]:
    first, last = round(math.log10(low)), round(math.log10(high))
    return [10.0**exponent for exponent in range(first, last + 1)]


def _display_names(presets: Sequence[Preset]) -> list[str]:
    """Legend names; a name two presets share gets its preset id appended, so colours stay distinct."""
    names = [p.name for p in presets]
    return [f"{p.name} ({p.id})" if names.count(p.name) > 1 else p.name for p in presets]


def _vertex_rows(presets: Sequence[Preset], intensity_min: float, intensity_max: float) -> list[dict[str, Any]]:
    """Each preset's ceilings as drawn: three exact vertices per mode (dense, sparse), from the core.

    ``ref`` marks the dense vertices of a preset whose sparse path doubles the
    ceiling; with sparsity on, that dense line stays behind as a faint reference.
    """
    rows: list[dict[str, Any]] = []
    for preset in presets:
        doubles = roofline.ceiling(preset, True).peak_flops_per_s != roofline.ceiling(preset, False).peak_flops_per_s
        for sparse in (False, True):
            for intensity, flops in roofline.ceiling(preset, sparse).vertices(intensity_min, intensity_max):
                row: dict[str, Any] = {"preset": preset.id, "sparse": sparse, "intensity": intensity, "flops": flops}
                if doubles and not sparse:
                    row["ref"] = True
                rows.append(row)
    return rows


def _ridge_rows(presets: Sequence[Preset], names: Sequence[str]) -> list[dict[str, Any]]:
    """One row per preset and mode: the ridge point (``ridge``, ``peak``), the bandwidth the
    readout multiplies by, and the labels of the ridge marker and its tooltip."""
    rows: list[dict[str, Any]] = []
    for preset, name in zip(presets, names):
        for sparse in (False, True):
            line = roofline.ceiling(preset, sparse)
            rows.append({
                "preset": preset.id, "sparse": sparse, "name": name,
                "ridge": line.ridge_flop_per_byte, "peak": line.peak_flops_per_s,
                "bandwidth": line.memory_bandwidth_bytes_per_s,
                "ridge_label": intensity_label(line.ridge_flop_per_byte),
                "peak_label": units.flops_per_s(line.peak_flops_per_s),
                "bandwidth_label": units.bytes_per_s(line.memory_bandwidth_bytes_per_s),
            })
    return rows


def _bound_text(kernel: Kernel, line: roofline.Ceiling) -> str:
    intensity = kernel.intensity_flop_per_byte
    bound = roofline.bound_at(intensity, line.peak_flops_per_s, line.memory_bandwidth_bytes_per_s)
    attainable = roofline.attainable_flops_per_s(intensity, line.peak_flops_per_s, line.memory_bandwidth_bytes_per_s)
    return f"{bound}-bound, at most {units.flops_per_s(attainable)}"


def _kernel_rows(kernels: Sequence[Kernel], presets: Sequence[Preset], label_at_top_below: float) -> list[dict[str, Any]]:
    """One row per kernel and mode; ``bound_<i>`` states, for preset i, the bound and the ceiling there."""
    rows: list[dict[str, Any]] = []
    for kernel in kernels:
        intensity = kernel.intensity_flop_per_byte
        for sparse in (False, True):
            row: dict[str, Any] = {
                "kernel": kernel.label, "spec": kernel.spec, "sparse": sparse, "intensity": intensity,
                "intensity_label": intensity_label(intensity),
                "flops_label": units.si(kernel.flops, "FLOP"),
                "bytes_label": units.si(kernel.bytes_moved, "B"),
                "top": intensity < label_at_top_below,
            }
            for index, preset in enumerate(presets):
                row[f"bound_{index}"] = _bound_text(kernel, roofline.ceiling(preset, sparse))
            rows.append(row)
    return rows


def _initial_log_intensity(presets: Sequence[Preset], low: float, high: float) -> float:
    """Open the readout between the lowest and highest dense ridge points (their geometric mean),
    where the presets disagree about what bounds a kernel."""
    ridges = [roofline.ceiling(p, False).ridge_flop_per_byte for p in presets]
    middle = math.sqrt(min(ridges) * max(ridges))
    exponent = round(math.log10(middle), 2)
    return min(max(exponent, math.log10(low)), math.log10(high))


_SVG_COLOUR = re.compile(r'\b(fill|stroke)="(#[0-9a-fA-F]{6})"')


def dark_svg(light_svg: str) -> str:
    """The dark static SVG from the light one, without a second Vega render.

    The two specs differ only in colours (:func:`_with_theme`), so Vega lays both out alike
    and the dark picture is the light one with each theme colour swapped, in ``fill`` and
    ``stroke`` attributes only (never in text). The tests check it against a real render.
    """
    light, dark = _THEMES["light"], _THEMES["dark"]
    swap = {light[key].lower(): dark[key] for key in light if key != "palette"}
    swap.update((a.lower(), b) for a, b in zip(light["palette"], dark["palette"]))

    def recolour(match: re.Match[str]) -> str:
        colour = swap.get(match.group(2).lower(), match.group(2))
        return f'{match.group(1)}="{colour}"'

    return _SVG_COLOUR.sub(recolour, light_svg)


def _whole_numbers_as_ints(value: Any) -> Any:
    """``2.25e15`` is written ``2250000000000000``, not ``2250000000000000.0``: the same number in
    JSON, two bytes shorter, which over every vertex and tick keeps the spec small."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    if isinstance(value, list):
        return [_whole_numbers_as_ints(item) for item in value]
    if isinstance(value, dict):
        return {key: _whole_numbers_as_ints(item) for key, item in value.items()}
    return value


def _themed(value: Any, theme: Theme) -> Any:
    """``value`` with every colour stand-in replaced by the theme's colour."""
    colours = _THEMES[theme]
    lookup = {stand_in: colours[key] for key, stand_in in _STAND_INS.items() if key != "palette"}
    lookup.update(zip(_STAND_INS["palette"], colours["palette"]))

    def walk(item: Any) -> Any:
        if isinstance(item, str):
            return lookup.get(item, item)
        if isinstance(item, list):
            return [walk(x) for x in item]
        if isinstance(item, dict):
            return {k: walk(v) for k, v in item.items()}
        return item

    return walk(value)


def _config() -> dict[str, Any]:
    colours = _STAND_INS
    axis = {
        "labelColor": colours["muted"], "titleColor": colours["text"], "gridColor": colours["grid"],
        "domainColor": colours["domain"], "tickColor": colours["domain"],
        "labelFontSize": 12, "titleFontSize": 13, "titleFontWeight": "normal",
    }
    return {
        "background": colours["background"],
        "font": _FONT,
        "view": {"stroke": colours["grid"]},
        "axis": axis,
        "legend": {
            "labelColor": colours["text"], "labelFontSize": 12, "symbolStrokeWidth": 3,
        },
        "title": {"color": colours["text"], "fontSize": 16, "fontWeight": 600,
                  "anchor": "start", "offset": 12},
        "text": {"color": colours["text"], "fontSize": 12},
    }


@functools.cache
def _code_fingerprint() -> str:
    """What a cached spec was built by: every module of the package, and altair's version."""
    digest = hashlib.sha256(metadata.version("altair").encode())
    package = Path(__file__).resolve().parents[1]
    for source in sorted(package.rglob("*.py")):
        digest.update(source.relative_to(package).as_posix().encode())
        digest.update(source.read_bytes())
    return digest.hexdigest()


def roofline_spec(
    presets: Iterable[Preset],
    *,
    kernels: Iterable[Kernel] = (),
    sparsity: bool = False,
    title: str | None = None,
    theme: Theme = "light",
    readout_intensity_flop_per_byte: float | None = None,
    cached: bool = True,
) -> dict[str, Any]:
    """The roofline explorer as a Vega-Lite dict.

    ``presets`` are drawn in the order given, coloured by name. ``sparsity`` is
    the checkbox's initial state. ``kernels`` become labelled vertical markers
    whose tooltip states, per preset, memory- or compute-bound and the ceiling
    there. ``readout_intensity_flop_per_byte`` sets where the readout opens
    (default: between the presets' ridge points). ``theme`` is ``"light"``
    (Material's default scheme) or ``"dark"`` (its slate scheme).

    Building the chart with altair costs more than rendering it, so the theme-neutral
    spec is kept in the render cache, keyed by every input and by the package's code
    (:func:`_code_fingerprint`); ``cached=False`` builds it afresh.
    """
    presets, kernels = tuple(presets), tuple(kernels)
    if theme not in _THEMES:
        raise InputError(f"roofline chart: 'theme' must be 'light' or 'dark': {short(theme)}")
    texts = [("title", title or ""), *(("preset name", p.name) for p in presets),
             *(("kernel label", k.label) for k in kernels)]
    for what, text in texts:
        bad = bad_character(text)
        if bad is not None:
            raise InputError(f"roofline chart: the {what} {short(text)} holds a control character ({bad})")

    def build() -> dict[str, Any]:
        return _build_neutral_spec(presets, kernels=kernels, sparsity=sparsity, title=title,
                                   readout_intensity_flop_per_byte=readout_intensity_flop_per_byte)

    if not cached:
        return _with_theme(build(), theme)
    payload = {
        "presets": [dataclasses.asdict(p) for p in presets],
        "kernels": [dataclasses.asdict(k) for k in kernels],
        "sparsity": sparsity, "title": title,
        "readout": readout_intensity_flop_per_byte,
        "code": _code_fingerprint(),
    }
    try:
        neutral = render.memo_json("roofline-spec", payload, build)
    except (TypeError, ValueError) as exc:
        if isinstance(exc, InputError):
            raise
        neutral = build()  # an input that is not plain data (or NaN) cannot be a key
    return _with_theme(neutral, theme)


def _with_theme(neutral: dict[str, Any], theme: Theme) -> dict[str, Any]:
    themed = _themed(neutral, theme)
    assert "\x1b" not in json.dumps(themed), "a colour stand-in was left in the spec"
    return themed


def _build_neutral_spec(
    presets: Iterable[Preset],
    *,
    kernels: Iterable[Kernel],
    sparsity: bool,
    title: str | None,
    readout_intensity_flop_per_byte: float | None,
) -> dict[str, Any]:
    import altair as alt  # here, not at the top: a build whose specs are cached never needs it

    presets = tuple(presets)
    kernels = tuple(kernels)
    if not presets:
        raise InputError("roofline chart: at least one preset is needed")
    colours = _STAND_INS
    names = _display_names(presets)

    # Axis ranges: whole decades that hold every ridge (dense and sparse, so toggling
    # never rescales), every kernel, and element-wise intensities at the low end.
    sparse_lines = [roofline.ceiling(p, True) for p in presets]
    dense_lines = [roofline.ceiling(p, False) for p in presets]
    kernel_intensities = [k.intensity_flop_per_byte for k in kernels]
    x_min = _decade_floor(min([DEFAULT_MIN_INTENSITY_FLOP_PER_BYTE, min(c.ridge_flop_per_byte for c in dense_lines)]
                              + [i / KERNEL_MARGIN for i in kernel_intensities]))
    x_max = _decade_ceil(max([RIDGE_HEADROOM * c.ridge_flop_per_byte for c in sparse_lines]
                             + [i * KERNEL_MARGIN for i in kernel_intensities]))
    y_min = _decade_floor(min(c.memory_bandwidth_bytes_per_s for c in dense_lines) * x_min)
    y_max = _decade_ceil(max(c.peak_flops_per_s for c in sparse_lines) * KERNEL_MARGIN)

    if readout_intensity_flop_per_byte is None:
        initial_log_intensity = _initial_log_intensity(presets, x_min, x_max)
    else:
        given = readout_intensity_flop_per_byte
        inside = isinstance(given, (int, float)) and math.isfinite(given) and x_min <= given <= x_max
        if not inside:
            raise InputError(
                f"roofline chart: the readout intensity must lie on the axis, {x_min:g} to {x_max:g} FLOP/byte: "
                f"{readout_intensity_flop_per_byte!r}"
            )
        initial_log_intensity = math.log10(given)

    sparsity_param = alt.param(
        name="sparsity", value=bool(sparsity),
        bind=alt.binding_checkbox(name="2:4 structured sparsity (where supported) "),
    )
    preset_param = alt.param(
        name="preset", value=ALL_PRESETS,
        bind=alt.binding_select(options=[ALL_PRESETS, *(p.id for p in presets)], labels=["All", *names],
                                name="Preset "),
    )
    intensity_param = alt.param(
        name="log_intensity", value=initial_log_intensity,
        bind=alt.binding_range(min=math.log10(x_min), max=math.log10(x_max), step=SLIDER_STEP_DECADES,
                               name="Intensity, log10 FLOP/byte "),
    )
    shown = f"({preset_param.name} == '{ALL_PRESETS}' || datum.preset == {preset_param.name})"
    this_mode = f"datum.sparse == {sparsity_param.name}"
    at = f"pow(10, {intensity_param.name})"

    x_scale = alt.Scale(type="log", domain=[x_min, x_max], nice=False)
    y_scale = alt.Scale(type="log", domain=[y_min, y_max], nice=False)
    x = alt.X("intensity:Q", scale=x_scale, title="Arithmetic intensity (FLOP/byte)",
              axis=alt.Axis(values=_decades(x_min, x_max), labelExpr="format(datum.value, ',~g')"))
    y = alt.Y("flops:Q", scale=y_scale, title="Attainable FLOP/s",
              axis=alt.Axis(values=_decades(y_min, y_max), labelExpr=flops_per_s_expr("datum.value")))
    colour = alt.Color(
        "name:N", title=None,
        scale=alt.Scale(domain=names, range=colours["palette"][: len(names)]),
        legend=alt.Legend(orient="bottom", direction="horizontal", columns=alt.ExprRef(f"width < {NARROW_PLOT_PX} ? 1 : 2"),
                          labelLimit=alt.ExprRef(f"width < {NARROW_PLOT_PX} ? width : width / 2 - 24"),
                          symbolType="stroke"),
    )
    name_tip = alt.Tooltip("name:N", title="GPU")

    datasets: dict[str, list[dict[str, Any]]] = {
        "vertices": _vertex_rows(presets, x_min, x_max),
        "ridges": _ridge_rows(presets, names),
        "one_row": [{}],
    }
    ridge_filter = f"{this_mode} && {shown}"

    # The chosen mode's ceilings, solid; with sparsity on, the dense line of each preset whose
    # sparse path doubles the ceiling stays behind, faint and dashed, for comparison.
    # (strokeOpacity, not opacity: the legend would copy opacity into its symbols.)
    reference = f"{sparsity_param.name} && datum.ref"
    layers: list[alt.Chart | alt.LayerChart] = [
        # Lines join their vertices in x order, which is the vertices' order.
        alt.Chart(alt.NamedData(name="vertices"))
        .transform_filter(f"({this_mode} || {reference}) && {shown}")
        .transform_lookup(lookup="preset", from_=alt.LookupData(alt.NamedData(name="ridges"), "preset", ["name"]))
        .mark_line()
        .encode(
            x=x, y=y, color=colour, detail=["preset:N", "sparse:N"], tooltip=[name_tip],
            strokeDash=alt.condition(reference, alt.value([4, 4]), alt.value([1, 0])),
            strokeOpacity=alt.condition(reference, alt.value(0.55), alt.value(1)),
            strokeWidth=alt.condition(reference, alt.value(1.5), alt.value(2.5)),
        ),
    ]

    if kernels:
        # Labels hang from the top edge left of the last ridge point (above the sloped lines)
        # and stand on the bottom edge right of it (below the flat lines).
        label_at_top_below = max(line.ridge_flop_per_byte for line in dense_lines)
        datasets["kernels"] = _kernel_rows(kernels, presets, label_at_top_below)
        kernel_base = alt.Chart(alt.NamedData(name="kernels")).transform_filter(this_mode)
        kernel_tips = [
            alt.Tooltip("kernel:N", title="Kernel"), alt.Tooltip("spec:N", title="Spec"),
            alt.Tooltip("intensity_label:N", title="Intensity"), alt.Tooltip("flops_label:N", title="Work"),
            alt.Tooltip("bytes_label:N", title="Minimum traffic"),
            *(alt.Tooltip(f"bound_{i}:N", title=name) for i, name in enumerate(names)),
        ]
        kernel_x = alt.X("intensity:Q")
        layers += [
            kernel_base.mark_rule(strokeDash=[2, 3], strokeWidth=1.5, color=colours["muted"])
            .encode(x=kernel_x, tooltip=kernel_tips),
            kernel_base.transform_filter("datum.top")
            .mark_text(angle=270, align="right", baseline="bottom", dx=-4, dy=-3, fontSize=11,
                       color=colours["muted"])
            .encode(x=kernel_x, y=alt.datum(y_max, type="quantitative"), text="kernel:N",
                    tooltip=kernel_tips),
            kernel_base.transform_filter("!datum.top")
            .mark_text(angle=270, align="left", baseline="bottom", dx=4, dy=-3, fontSize=11,
                       color=colours["muted"])
            .encode(x=kernel_x, y=alt.datum(y_min, type="quantitative"), text="kernel:N",
                    tooltip=kernel_tips),
        ]

    ridge_tips = [
        name_tip,
        alt.Tooltip("ridge_label:N", title="Ridge point"),
        alt.Tooltip("peak_label:N", title="Peak (FP16/BF16 tensor)"),
        alt.Tooltip("bandwidth_label:N", title="Memory bandwidth"),
    ]
    mark = alt.Chart()  # a child of a nested layer: data and transforms come from the parent
    layers.append(
        alt.layer(
            mark.mark_point(filled=True, size=70, opacity=1, stroke=colours["marker_stroke"], strokeWidth=1.5)
            .encode(color="name:N"),
            # Above the flat line, right of the ridge: nothing else is drawn there unless a
            # faster GPU's sloped line passes, and that lies higher up.
            # On a narrow plot the labels of neighbouring ridges collide; there they appear
            # once a single preset is selected (the tooltip always has them).
            mark.mark_text(align="left", baseline="bottom", dx=4, dy=-5, color=colours["text"],
                           opacity=alt.ExprRef(f"width >= {NARROW_PLOT_PX} || {preset_param.name} != '{ALL_PRESETS}' ? 1 : 0"))
            .encode(text="ridge_label:N"),
            data=alt.NamedData(name="ridges"),
        )
        .transform_filter(ridge_filter)
        .encode(x="ridge:Q", y="peak:Q", tooltip=ridge_tips)
    )

    # The readout: a rule at the slider's intensity, a dot on each visible ceiling there, and
    # above the plot one line per visible preset (attainable FLOP/s, memory- or compute-bound).
    readout_top_px = -(len(presets) + 1) * READOUT_LINE_PX - READOUT_GAP_PX
    readout_line_y = alt.Y("line_y:Q", scale=None, axis=None)
    one_row = alt.Chart(alt.NamedData(name="one_row"))
    layers += [
        # aria=False: a bare line; the readout text beside it says what it marks.
        one_row.mark_rule(color=colours["muted"], strokeWidth=1, aria=False).encode(
            x=alt.X(datum=alt.ExprRef(at), type="quantitative")
        ),
        one_row.mark_text(align="left", baseline="middle", fontWeight=600, color=colours["text"],
                          text=alt.ExprRef(f"'At the vertical line, ' + {intensity_expr(at)} + ':'"))
        .encode(x=alt.value(-READOUT_INDENT_PX), y=alt.value(readout_top_px)),
        alt.layer(
            mark.mark_point(filled=True, size=45, opacity=1, stroke=colours["marker_stroke"], strokeWidth=1)
            .encode(x="at_intensity:Q", y="attainable:Q"),
            mark.mark_point(shape="square", filled=True, size=60, opacity=1)
            .encode(x=alt.value(6 - READOUT_INDENT_PX), y=readout_line_y),
            mark.mark_text(align="left", baseline="middle", color=colours["text"],
                           limit=alt.ExprRef(f"width + {READOUT_INDENT_PX - 16}"))
            .encode(x=alt.value(16 - READOUT_INDENT_PX), y=readout_line_y, text="readout:N", color=alt.value(colours["text"])),
            data=alt.NamedData(name="ridges"),
        )
        .transform_filter(ridge_filter)
        .transform_calculate(
            at_intensity=at,
            attainable=f"min(datum.peak, datum.bandwidth * {at})",
            bound=f"{at} < datum.ridge ? 'memory-bound' : 'compute-bound'",
        )
        # Figures first, name last: on a narrow screen the line is cut at the end.
        .transform_calculate(readout=f"{flops_per_s_expr('datum.attainable')} + ', ' + datum.bound + ' · ' + datum.name")
        # Rows keep the presets' order, so row_number() numbers the readout lines in legend order.
        .transform_window(line="row_number()")
        .transform_calculate(line_y=f"{readout_top_px} + datum.line * {READOUT_LINE_PX}")
        .encode(color="name:N", tooltip=[name_tip, alt.Tooltip("readout:N", title="At the vertical line")]),
    ]

    chart = (
        alt.layer(*layers)
        .add_params(sparsity_param, preset_param, intensity_param)
        .properties(
            title=alt.Title(title if title is not None else DEFAULT_TITLE),
            # The chart's accessible name and short text alternative (Vega puts it in the SVG's aria-label).
            description=("Roofline chart on log-log axes: attainable FLOP/s against arithmetic intensity for "
                         f"{', '.join(names)}."),
            width=STATIC_WIDTH_PX,
            height=STATIC_HEIGHT_PX,
            autosize=alt.AutoSizeParams(type="fit", contains="padding"),
            padding=8,
        )
        .configure(**_config())
    )
    # Schema validation costs as much as building the chart; the tests validate every
    # variant's spec once instead (test_spec_is_valid_vega_lite).
    spec = chart.to_dict(validate=False)
    # The rows go in after altair is done: it deep-copies whatever the chart holds at each step.
    spec["datasets"] = datasets
    # altair's default view size; the chart sets its own width and height.
    for key in ("continuousWidth", "continuousHeight"):
        spec["config"].get("view", {}).pop(key, None)
    return _whole_numbers_as_ints(spec)


def caption_html(presets: Iterable[Preset], sparsity: bool) -> str:
    """A short HTML caption: what the chart assumes, and what the sparsity toggle does and does not mean."""
    presets = tuple(presets)
    without_sparse_path = [p.name for p in presets if roofline.ceiling(p, True).peak_flops_per_s
                           == roofline.ceiling(p, False).peak_flops_per_s]
    parts = [
        "Each line is one GPU's ceiling, min(peak, bandwidth × intensity), on log-log axes. "
        "Peak is the dense FP16/BF16 tensor-core rate with FP32 accumulation; bandwidth is the "
        "peak device-memory figure; the dot where the two lines meet is the ridge point, peak ÷ bandwidth.",
        "The sparsity box switches to the vendor's 2:4 structured-sparse rate: the flat ceiling doubles and the "
        "ridge moves to twice the intensity, while bandwidth and the sloped line stay as they are. It applies only "
        "to weights pruned to that pattern on a path that supports it, not to any model with many zeros.",
    ]
    if without_sparse_path:
        listed = ", ".join(html.escape(name) for name in without_sparse_path)
        parts.append(f"No supported sparse path in the preset, so the line does not move: {listed}.")
    if sparsity:
        parts.append("The chart opens with the sparse rate switched on.")
    parts.append(
        "A simplification for intuition, not a benchmark: real kernels, and work off the tensor cores, land below the lines."
    )
    return " ".join(parts)
