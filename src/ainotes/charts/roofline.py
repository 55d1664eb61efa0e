"""The roofline explorer: one log-log Vega-Lite chart, its grammar built once with altair.

Every number in the chart's data comes from the core (:mod:`ainotes.roofline`,
:mod:`ainotes.kernels`, :mod:`ainotes.hardware`):

* ``ceilings``: one row per preset and roof (a unit and precision, ``tensor:bf16``)
  the preset has: dense and 2:4-sparse peak, bandwidth, both ridge points. A ceiling
  is drawn from its three exact vertices, (axis start, bandwidth × start),
  (ridge, peak), (axis end, min(peak, bandwidth × end)): on log-log axes the
  roofline is two straight segments, so nothing is sampled;
* ``kernels``: one row per kernel and preset with a path for the kernel's dtype:
  where the kernel meets its own roof (its dtype's unit and precision, dense unless
  the kernel is 2:4 sparse), as the core computes it.

The browser evaluates the same formula for what the reader moves,

    attainable = min(peak, bandwidth × intensity),   memory-bound iff intensity < peak ÷ bandwidth,

from those rows (the readout's dots, the reader's own kernel, the batch GEMM); the
tests check it against the core.

Params (signals in the compiled Vega; the page's controls set them, see
``assets/vega-charts.js``): ``precision`` (the roof drawn), ``preset`` (``"*"`` or one
id), ``sparsity``, ``intensity`` (the readout, FLOP/byte), and the reader's marks
``own_*`` and ``batch_*``. Everything else a chart varies in (axis domains, ticks,
names, legend texts) is a param too, so the structure is one :class:`Grammar`
shared by every roofline, filled with data per chart.

Text never overlaps by construction: no rotated text; ridge values are folded into
the legend labels; kernels are numbered marks whose numbers are grouped when their
intensities lie close (:func:`_label_clusters`); the reader's marks are labelled in
a band of their own along the top; the readout rule stops at the lowest ceiling,
below every label. The browser suite measures it at every width and state.
"""

from __future__ import annotations

import html
import math
import re
import textwrap
from collections.abc import Iterable, Sequence
from typing import Any, Literal

from ainotes import roofline, units
from ainotes.charts.grammar import Grammar, deep_merge, whole_numbers_as_ints
from ainotes.errors import InputError
from ainotes.hardware import Preset, default_unit
from ainotes.kernels import DTYPE_BYTES, Kernel, gemm
from ainotes.textcheck import bad_character, short

STATIC_WIDTH_PX = 720
STATIC_HEIGHT_PX = 540
# The phone-sized static picture's width (its height follows its legends: narrow_static).
NARROW_STATIC_WIDTH_PX = 336
DEFAULT_TITLE = "Roofline"
# A still (the static SVG, and the PNG drawn from it) is laid out with Vega's autosize "pad" at a
# plot size that brings the whole picture to about the size above. "fit" would find the plot size
# itself, but by laying the chart out twice, every text measured again: with vl-convert's text
# measurement that is 40 % of a still's render time. What the title, subtitle, axes and legends
# take around the plot, as Vega draws them with this module's config (tests/test_roofline_chart.py
# draws charts of every shape and checks that the stills land on their size):
STILL_FRAME_WIDTH_PX = 117
STILL_FRAME_HEIGHT_PX = 131  # with one GPU in the legend and no kernels
STILL_GPU_ROW_PX = 15  # each further row of the GPUs' legend
STILL_GPU_LINE_PX = 14  # each further line of an entry (a narrow plot wraps names and keys) ...
STILL_KEY_LINE_PX = 13  # ... in the GPUs' legend and in the kernels' key
STILL_KEY_FIRST_ROW_PX = 19  # the kernels' key, its first row and each further one
STILL_KEY_ROW_PX = 16
STILL_MIN_PLOT_HEIGHT_PX = 140  # a chart with a very long legend grows taller instead
# A phone's still keeps this plot height and grows with its legend (wrapped names, one entry a
# row); the page's box on a phone takes the still's proportions (assets/charts.css).
NARROW_STILL_PLOT_HEIGHT_PX = 210
TERA = 1e12

# (unit, precision) of every roof the explorer can draw, in the select's order: BF16/FP16
# first, as the notes' pages draw them; the CUDA-core (vector) paths last.
ROOF_ORDER: tuple[tuple[str, str], ...] = (
    ("tensor", "bf16"), ("tensor", "fp16"), ("tensor", "fp8"), ("tensor", "fp4"), ("tensor", "int8"),
    ("tensor", "tf32"), ("tensor", "fp64"), ("vector", "fp32"), ("vector", "fp64"),
)
DEFAULT_ROOF = "tensor:bf16"
_PRECISION_NAMES = {"bf16": "BF16", "fp16": "FP16", "fp8": "FP8", "fp4": "FP4", "int8": "INT8",
                    "tf32": "TF32", "fp64": "FP64", "fp32": "FP32"}

# Where the intensity axis starts at the latest: element-wise kernels sit near 0.1 FLOP/byte.
DEFAULT_MIN_INTENSITY_FLOP_PER_BYTE = 0.1
# The flat ceilings run on for at least this factor past the farthest (sparse) ridge point.
RIDGE_HEADROOM = 3.0
# Kernel markers keep this factor away from the axis ends.
KERNEL_MARGIN = 1.5
# Room above the highest ceiling for kernel numbers and the band of the reader's labels.
TOP_HEADROOM = 4.0

ALL_PRESETS = "*"  # not a valid preset id, so it cannot collide with one
# Below this plot width (px) the kernels' key stacks in one column; below the second, the GPUs' legend.
NARROW_PLOT_PX = 420
WIDE_LEGEND_PLOT_PX = 760
# The narrowest plot the page draws (a 360 px phone, less margins and the y axis), and the
# width of one character of an 11 px label: kernel numbers closer than their text on that
# plot share one label.
NARROWEST_PLOT_PX = 200
LABEL_CHAR_PX = 7.0
LABEL_GAP_PX = 6.0
# The reader's own kernel and the batch GEMM are labelled in a band along the top, one row each;
# kernel numbers stand in a band of this height along the bottom.
KERNEL_BAND_PX = 18
# A legend entry's symbol and the gap after it, which its label's limit leaves room for.
LEGEND_SYMBOL_PX = 30
OWN_LABEL_Y_PX = 12
BATCH_LABEL_Y_PX = 27
# The batch GEMM: a decode step's projection from d_model to 4·d_model, weights read once.
DEFAULT_D_MODEL = 8192
BATCH_FFN_FACTOR = 4

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
# The site loads no web fonts: the system's sans-serif, as Material's own stack falls back to.
_FONT = "-apple-system, 'Segoe UI', Helvetica, Arial, sans-serif"
_SI_PREFIXES = "['', 'k', 'M', 'G', 'T', 'P', 'E']"


# -- formats shared by Python and the chart's expressions ---------------------------------------


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


def roof_id(unit: str, precision: str) -> str:
    """``"tensor:bf16"``: how the chart names a roof."""
    return f"{unit}:{precision}"


def roof_name(roof: str) -> str:
    """``"BF16 tensor cores"``, ``"FP32 CUDA cores"``: a roof as captions and tooltips name it."""
    unit, precision = roof.split(":")
    return f"{_PRECISION_NAMES.get(precision, precision.upper())} {'tensor' if unit == 'tensor' else 'CUDA'} cores"


# -- what the core says, per roof -----------------------------------------------------------------


def _roof_peaks(preset: Preset, unit: str, precision: str) -> tuple[str, float | None, float | None]:
    """(status, dense peak FLOP/s, 2:4-sparse peak FLOP/s) of one roof of ``preset``.

    status is ``"ok"``, ``"none"`` (the GPU has no such path) or ``"not given"`` (the
    preset file does not say). Sparsity doubles tensor rates only, where supported.
    """
    path = preset.path(precision, unit)
    if path is None:
        return "not given", None, None
    dense, sparse = path.peak_tflops(False), path.peak_tflops(True)
    if dense is None or sparse is None:
        return "none", None, None
    return "ok", dense * TERA, sparse * TERA


def _kernel_roof(preset: Preset, kernel: Kernel) -> tuple[str, float | None, str, str]:
    """(roof id, attainable FLOP/s or None, bound, why not) where ``kernel`` meets ``preset``'s
    roof of its own dtype (:func:`ainotes.roofline.kernel_roof`)."""
    found = roofline.kernel_roof(preset, kernel)
    return roof_id(found.unit, found.precision), found.attainable_flops_per_s, found.bound, found.reason or ""


def dtype_roofs() -> dict[str, str]:
    """The roof a GEMM of each dtype meets (the core's rule), for the reader's own GEMM."""
    return {dtype: roof_id(*roofline.kernel_ceiling(gemm(1, 1, 1, dtype))) for dtype in DTYPE_BYTES}


def _missing_text(status: str, roof: str) -> str:
    """Why a preset has no line for ``roof``, in the core's words: ``"no FP8 path"``, ``"FP8 tensor not given"``."""
    unit, precision = roof.split(":")
    label = _PRECISION_NAMES.get(precision, precision.upper())
    if status == "none":
        return f"no {label} path" if unit == "tensor" else f"no {label} vector path"
    return f"{label} {unit} not given"


# -- data -----------------------------------------------------------------------------------------


def _display_names(presets: Sequence[Preset]) -> list[str]:
    """Legend names; a name two presets share gets its preset id appended, so colours stay distinct."""
    names = [p.name for p in presets]
    return [f"{p.name} ({p.id})" if names.count(p.name) > 1 else p.name for p in presets]


def _ceiling_rows(presets: Sequence[Preset]) -> tuple[list[dict[str, Any]], dict[str, dict[str, str]]]:
    """The ``ceilings`` rows, and per roof the presets that lack it (id → "no FP8 path")."""
    rows: list[dict[str, Any]] = []
    missing: dict[str, dict[str, str]] = {}
    for unit, precision in ROOF_ORDER:
        roof = roof_id(unit, precision)
        for preset in presets:
            status, dense, sparse = _roof_peaks(preset, unit, precision)
            if dense is None or sparse is None:
                missing.setdefault(roof, {})[preset.id] = _missing_text(status, roof)
                continue
            bandwidth = preset.memory_bandwidth_bytes_per_s
            rows.append({
                "p": preset.id, "r": roof, "peak": dense, "speak": sparse, "bw": bandwidth,
                "ridge": roofline.ridge_point_flop_per_byte(dense, bandwidth),
                "sridge": roofline.ridge_point_flop_per_byte(sparse, bandwidth),
            })
    return rows, missing


def _label_clusters(intensities: Sequence[float], x_min: float, x_max: float) -> list[int]:
    """Cluster index per kernel: kernels whose numbers would touch on the narrowest plot share a label.

    Walking in order of intensity, a kernel joins the previous one's cluster when the gap
    between them, in pixels of a :data:`NARROWEST_PLOT_PX` plot, is less than half of each
    label plus a gap (labels are centred on their cluster). Cluster labels list their numbers.
    """
    px_per_decade = NARROWEST_PLOT_PX / math.log10(x_max / x_min)
    order = sorted(range(len(intensities)), key=lambda i: intensities[i])
    cluster = [0] * len(intensities)
    current, previous = -1, None
    for index in order:
        if previous is not None:
            gap_px = math.log10(intensities[index] / intensities[previous]) * px_per_decade
            need_px = LABEL_CHAR_PX * (len(str(previous + 1)) + len(str(index + 1))) / 2 + LABEL_GAP_PX
        if previous is None or gap_px >= need_px:
            current += 1
        cluster[index] = current
        previous = index
    return cluster


def _kernel_rows(kernels: Sequence[Kernel], presets: Sequence[Preset], x_min: float,
                 x_max: float) -> list[dict[str, Any]]:
    """One row per kernel and preset with a path for its dtype: where it meets its roof."""
    intensities = [k.intensity_flop_per_byte for k in kernels]
    clusters = _label_clusters(intensities, x_min, x_max)
    members: dict[int, list[int]] = {}
    for index, cluster in enumerate(clusters):
        members.setdefault(cluster, []).append(index)
    rows: list[dict[str, Any]] = []
    for index, kernel in enumerate(kernels):
        group = sorted(members[clusters[index]], key=lambda i: intensities[i])
        centre = math.exp(sum(math.log(intensities[i]) for i in group) / len(group))
        for preset in presets:
            roof, attainable, bound, _ = _kernel_roof(preset, kernel)
            if attainable is None:
                continue
            rows.append({
                "k": index + 1, "p": preset.id, "x": intensities[index], "y": attainable,
                "c": clusters[index], "cx": centre, "ct": ",".join(str(i + 1) for i in sorted(group)),
                "b": f"{bound}-bound, {units.flops_per_s(attainable)} ({roof_name(roof)})",
            })
    return rows


def kernel_table_rows(kernels: Sequence[Kernel], presets: Sequence[Preset]) -> list[dict[str, Any]]:
    """Per kernel: its figures and, per preset, the bound where it meets the roof of its dtype."""
    table = []
    for index, kernel in enumerate(kernels):
        bounds = {}
        for preset in presets:
            _, attainable, bound, why = _kernel_roof(preset, kernel)
            if attainable is None:
                bounds[preset.id] = {"bound": bound, "text": why}
            else:
                bounds[preset.id] = {"bound": bound, "text": f"{bound}, {units.flops_per_s(attainable)}"}
        table.append({
            "n": index + 1, "label": kernel.label, "spec": kernel.spec,
            "flops": kernel.flops, "bytes": kernel.bytes_moved, "intensity": kernel.intensity_flop_per_byte,
            "bounds": bounds,
        })
    return table


def _decade_floor(value: float) -> float:
    return 10.0 ** math.floor(math.log10(value))


def _decade_ceil(value: float) -> float:
    return 10.0 ** math.ceil(math.log10(value))


def _decades(low: float, high: float) -> list[float]:
    first, last = round(math.log10(low)), round(math.log10(high))
    return [10.0**exponent for exponent in range(first, last + 1)]


def _initial_intensity(rows: Sequence[dict[str, Any]], low: float, high: float) -> float:
    """Open the readout between the lowest and highest dense BF16 ridge points (their geometric
    mean, to three figures), where the presets disagree about what bounds a kernel."""
    ridges = [r["ridge"] for r in rows if r["r"] == DEFAULT_ROOF] or [r["ridge"] for r in rows]
    middle = math.sqrt(min(ridges) * max(ridges))
    return min(max(float(units.significant(middle, 3)), low), high)


# -- themes: Vega-Lite config only ---------------------------------------------------------------

_NEUTRAL_CONFIG: dict[str, Any] = {
    "font": _FONT,
    "axis": {"labelFontSize": 12, "titleFontSize": 13, "titleFontWeight": "normal"},
    # Both legends (GPUs, kernels) under the plot, one above the other.
    "legend": {"labelFontSize": 12, "symbolStrokeWidth": 3, "offset": 22,
               "layout": {"expr": "{bottom: {anchor: 'start', direction: 'vertical', margin: 6}}"}},
    "title": {"fontSize": 16, "fontWeight": 600, "anchor": "start", "offset": 8},
    "text": {"fontSize": 12},
}


def theme_config(theme: Theme) -> dict[str, Any]:
    """A theme's colours as Vega-Lite config: the palette in ``range.category``, the rest as
    config and named styles (``kernel-label``, ``readout``, ``marker``, ``reader-label``)."""
    colours = _THEMES[theme]
    return {
        "background": colours["background"],
        "range": {"category": list(colours["palette"])},
        "view": {"stroke": colours["grid"]},
        "axis": {"labelColor": colours["muted"], "titleColor": colours["text"], "gridColor": colours["grid"],
                 "domainColor": colours["domain"], "tickColor": colours["domain"]},
        "legend": {"labelColor": colours["text"], "symbolStrokeColor": colours["text"]},
        "title": {"color": colours["text"]},
        "text": {"color": colours["text"]},
        "style": {
            "kernel-label": {"color": colours["text"]},
            "reader-label": {"color": colours["text"]},
            "readout": {"color": colours["muted"]},
            "subtitle": {"color": colours["muted"]},
            "marker": {"stroke": colours["marker_stroke"]},
        },
    }


def config(theme: Theme) -> dict[str, Any]:
    """The whole config of a themed spec: the neutral one (fonts, sizes) with the theme's colours over it."""
    return deep_merge(_NEUTRAL_CONFIG, theme_config(theme))


def retheme(spec: dict[str, Any], theme: Theme) -> dict[str, Any]:
    """``spec`` (from :func:`roofline_spec`) in ``theme``: the same chart with the theme's config,
    as :func:`roofline_spec` with that theme builds it, without building it again. Shares
    everything but the config with ``spec``: neither may be changed in place."""
    if theme not in _THEMES:
        raise InputError(f"roofline chart: 'theme' must be 'light' or 'dark': {short(theme)}")
    return {**spec, "config": whole_numbers_as_ints(config(theme))}


def _colour_swap() -> dict[str, str]:
    """Each light theme colour (lower case) → its dark counterpart."""
    light, dark = _THEMES["light"], _THEMES["dark"]
    swap = {light[key].lower(): dark[key] for key in light if key != "palette"}
    swap.update((a.lower(), b) for a, b in zip(light["palette"], dark["palette"], strict=True))
    return swap


def dark_vega(light_vega: dict[str, Any]) -> dict[str, Any]:
    """The compiled Vega of the dark spec from the light one's, without compiling it again.

    Compiled, the themes differ only where the config's colours land: the top-level
    ``background``, the ``config`` (axis, legend, style and palette colours) and the ``value``
    of a mark's ``fill`` or ``stroke``. Only strings in those places are swapped, never data,
    signals or text. The tests check it against the compiler's dark output."""
    swap = _colour_swap()

    def recolour(value: Any, colour_place: bool) -> Any:
        if isinstance(value, dict):
            return {key: recolour(item, colour_place or key in ("fill", "stroke")) for key, item in value.items()}
        if isinstance(value, list):
            return [recolour(item, colour_place) for item in value]
        if colour_place and isinstance(value, str):
            return swap.get(value.lower(), value)
        return value

    out = dict(light_vega)
    for key in ("background", "config"):
        if key in out:
            out[key] = recolour(out[key], True)
    out["marks"] = [recolour(mark, False) for mark in light_vega.get("marks", [])]
    return out


_SVG_COLOUR = re.compile(r'\b(fill|stroke)="(#[0-9a-fA-F]{6})"')


def dark_svg(light_svg: str) -> str:
    """The dark static SVG from the light one, without a second Vega render.

    The two specs differ only in their config's colours (:func:`theme_config`), so Vega lays
    both out alike and the dark picture is the light one with each theme colour swapped, in
    ``fill`` and ``stroke`` attributes only (never in text). The tests check it against a real render.
    """
    swap = _colour_swap()

    def recolour(match: re.Match[str]) -> str:
        colour = swap.get(match.group(2).lower(), match.group(2))
        return f'{match.group(1)}="{colour}"'

    return _SVG_COLOUR.sub(recolour, light_svg)


# -- the grammar: built once with altair ---------------------------------------------------------

# Expressions over the params, shared by the layers.
_SHOWN = f"(preset == '{ALL_PRESETS}' || datum.p == preset)"
_MODE_KEY = "precision + '|' + (sparsity ? 's' : 'd')"
_PEAK = "(sparsity ? datum.speak : datum.peak)"
_RIDGE = "(sparsity ? datum.sridge : datum.ridge)"
_AT = "clamp(toNumber(intensity), x_domain[0], x_domain[1])"
_LEGEND_LABEL_LIMIT = (f"width < {NARROW_PLOT_PX} ? width - {LEGEND_SYMBOL_PX} "
                       f": width / 2 - 2 * {LEGEND_SYMBOL_PX}")
# On a narrow plot the legend gives each ridge a line of its own, so the subtitle need not point there
# (and, shorter, it is never cut).
SUBTITLE_EXPR = (f"width < {NARROW_PLOT_PX} ? roof_names[precision] + (sparsity ? ', 2:4 sparse' : ', dense') "
                 ": roof_names[precision] + (sparsity ? ', 2:4 sparse where supported' : ', dense')"
                 " + ' · ridge points in the legend'")
# A GPU's legend entry: "ridge 295 FLOP/B · NVIDIA H100 SXM5 80 GB" on one line, or on a narrow plot
# the name, wrapped, above its ridge, so that a phone reads whole names instead of "… · NVIDIA H10…"
# (and Vega need not search for where to cut them). Kernel keys wrap there too.
_GPU_RIDGE = f"legend_ridge[{_MODE_KEY}][datum.value]"
GPU_LEGEND_LABEL_EXPR = (f"width < {NARROW_PLOT_PX} ? split(narrow_names[datum.value] + '\\n' + {_GPU_RIDGE}, '\\n') "
                         f": {_GPU_RIDGE} + ' · ' + names[datum.value]")
KERNEL_KEY_LABEL_EXPR = f"width < {NARROW_PLOT_PX} ? split(narrow_keys[datum.value], '\\n') : datum.value"
# A narrow legend's line, in characters: its labels' room on the narrowest plot at 12 px.
NARROW_LINE_CHARS = 26


def _build_structure(variant: Any = ()) -> dict[str, Any]:
    """The structure of every roofline; ``variant`` is ``("kernels",)`` when the chart marks
    kernels (without any, their layers and key are left out: an empty legend draws badly)."""
    import altair as alt  # here, not at the top: a build whose grammar is cached never needs it

    def param(name: str, value: Any, **options: Any) -> Any:
        return alt.param(name=name, value=value, **options)

    params = [
        param("precision", DEFAULT_ROOF,
              bind=alt.binding_select(options=[DEFAULT_ROOF], labels=["BF16"], name="Precision ")),
        param("preset", ALL_PRESETS,
              bind=alt.binding_select(options=[ALL_PRESETS], labels=["All"], name="GPUs ")),
        param("sparsity", False, bind=alt.binding_checkbox(name="2:4 structured sparsity (where supported) ")),
        param("intensity", 100.0, bind=alt.binding(input="number", name="Intensity, FLOP/byte ")),
        *(param(name, value) for name, value in (
            ("x_domain", [0.1, 1000.0]), ("y_domains", {}), ("x_ticks", [1.0]), ("y_ticks", [1e12]),
            ("ids", ["a"]), ("names", {}), ("kernel_keys", []), ("roof_names", {}), ("legend_ridge", {}),
            ("narrow_names", {}), ("narrow_keys", {}),
            ("own_on", False), ("own_x", 1.0), ("own_roof", DEFAULT_ROOF), ("own_label", ""),
            ("batch_on", False), ("batch_x", 1.0), ("batch_roof", DEFAULT_ROOF), ("batch_label", ""),
        )),
    ]

    x_scale = alt.Scale(type="log", domain=alt.ExprRef("x_domain"), nice=False)
    y_scale = alt.Scale(type="log", domain=alt.ExprRef("y_domains[precision]"), nice=False)
    x = alt.X("x:Q", scale=x_scale, title="Arithmetic intensity (FLOP/byte)",
              axis=alt.Axis(values=alt.ExprRef("x_ticks"), labelExpr="format(datum.value, ',~g')",
                            labelOverlap="greedy", labelFlush=True))
    y = alt.Y("y:Q", scale=y_scale, title="Attainable FLOP/s",
              axis=alt.Axis(values=alt.ExprRef("y_ticks"), labelExpr=flops_per_s_expr("datum.value"),
                            labelOverlap="greedy"))
    colour = alt.Color(
        "p:N", title=None, scale=alt.Scale(domain=alt.ExprRef("ids")),
        legend=alt.Legend(
            orient="bottom", direction="horizontal", symbolType="stroke",
            # One GPU a line until the plot is wide enough for two whole names with their ridges.
            columns=alt.ExprRef(f"width < {WIDE_LEGEND_PLOT_PX} ? 1 : 2"),
            labelLimit=alt.ExprRef(f"width < {WIDE_LEGEND_PLOT_PX} ? width - {LEGEND_SYMBOL_PX} "
                                   f": width / 2 - 2 * {LEGEND_SYMBOL_PX}"),
            labelExpr=GPU_LEGEND_LABEL_EXPR,
        ),
    )
    name_tip = alt.Tooltip("name:N", title="GPU")
    ceilings = alt.Chart(alt.NamedData(name="ceilings"))
    current = ceilings.transform_filter(f"datum.r == precision && {_SHOWN}").transform_calculate(
        name="names[datum.p]", peak_now=_PEAK, ridge_now=_RIDGE,
    )

    # The chosen roof's ceilings, solid; with sparsity on, the dense line of each preset whose
    # sparse path doubles it stays behind, faint and dashed. Three vertices each, in x order.
    # (strokeOpacity, not opacity: the legend would copy opacity into its symbols.)
    lines = (
        current
        .transform_calculate(modes="sparsity && datum.speak != datum.peak ? ['now', 'ref'] : ['now']")
        .transform_flatten(["modes"], as_=["mode"])
        .transform_calculate(
            top="datum.mode == 'ref' ? datum.peak : datum.peak_now",
            xs="[x_domain[0], clamp(datum.top / datum.bw, x_domain[0], x_domain[1]), x_domain[1]]",
        )
        .transform_flatten(["xs"], as_=["x"])
        .transform_calculate(y="min(datum.top, datum.bw * datum.x)")
        .mark_line()
        .encode(
            x=x, y=y, color=colour, detail=["p:N", "mode:N"], tooltip=[name_tip], order="x:Q",
            strokeDash=alt.condition("datum.mode == 'ref'", alt.value([4, 4]), alt.value([1, 0])),
            strokeOpacity=alt.condition("datum.mode == 'ref'", alt.value(0.55), alt.value(1)),
            strokeWidth=alt.condition("datum.mode == 'ref'", alt.value(1.5), alt.value(2.5)),
        )
    )
    ridges = current.transform_calculate(
        ridge_text=intensity_expr("datum.ridge_now"), peak_text=flops_per_s_expr("datum.peak_now"),
        roof_text="roof_names[precision]", bandwidth_text="format(datum.bw / 1e12, '.4~r') + ' TB/s'",
    ).mark_point(filled=True, size=70, opacity=1, strokeWidth=1.5, style="marker").encode(
        x=alt.X("ridge_now:Q"), y=alt.Y("peak_now:Q"), color="p:N",
        tooltip=[name_tip, alt.Tooltip("ridge_text:N", title="Ridge point"),
                 alt.Tooltip("roof_text:N", title="Roof"), alt.Tooltip("peak_text:N", title="Peak"),
                 alt.Tooltip("bandwidth_text:N", title="Memory bandwidth")],
    )

    # The readout: a dot on each visible ceiling at the reader's intensity, and a rule from the
    # axis up to the lowest of them, below every label.
    readout_points = current.transform_calculate(x=_AT, y=f"min(datum.peak_now, datum.bw * {_AT})")
    readout = [
        readout_points.transform_aggregate(y="min(y)", x="min(x)")
        # aria=False: a bare line; the readout under the chart says what it marks.
        .mark_rule(strokeWidth=1, strokeDash=[3, 2], style="readout", aria=False)
        .encode(x=alt.X("x:Q"), y=alt.Y("y:Q"), y2=alt.value(alt.ExprRef(f"height - {KERNEL_BAND_PX}"))),
        readout_points.mark_point(filled=True, size=45, opacity=1, strokeWidth=1, style="marker")
        .encode(x=alt.X("x:Q"), y=alt.Y("y:Q"), color="p:N", tooltip=[name_tip]),
    ]

    # Kernels: a hollow square where each meets its own roof on each visible preset, and one
    # number per cluster of close kernels in a band along the bottom of the plot, joined to the
    # highest of its squares by a faint rule. Clusters lie apart (_label_clusters), so no two
    # numbers meet; the reader's labels have a band of their own along the top.
    # Their key is a second legend ("1 GEMM 8192×8192×8192 bf16"), so a static picture names them too.
    kernel_rows = alt.Chart(alt.NamedData(name="kernels")).transform_filter(_SHOWN).transform_calculate(
        name="names[datum.p]", key="kernel_keys[datum.k - 1]")
    kernel_key = alt.Shape(
        "key:N", scale=alt.Scale(domain=alt.ExprRef("kernel_keys"), range=["square"]),
        legend=alt.Legend(orient="bottom", direction="horizontal", title=None, symbolType="square",
                          symbolFillColor="transparent", symbolStrokeWidth=2,
                          columns=alt.ExprRef(f"width < {NARROW_PLOT_PX} ? 1 : 2"),
                          labelLimit=alt.ExprRef(_LEGEND_LABEL_LIMIT), labelExpr=KERNEL_KEY_LABEL_EXPR),
    )
    clusters = kernel_rows.transform_aggregate(y="max(y)", groupby=["c", "cx", "ct"])
    kernel_marks = [
        clusters.mark_rule(strokeDash=[1, 3], strokeWidth=1, style="readout", aria=False)
        .encode(x=alt.X("cx:Q"), y=alt.Y("y:Q"), y2=alt.value(alt.ExprRef(f"height - {KERNEL_BAND_PX}"))),
        kernel_rows.mark_point(filled=False, size=60, strokeWidth=2, opacity=1)
        .encode(x=alt.X("x:Q"), y=alt.Y("y:Q"), color="p:N", shape=kernel_key,
                tooltip=[alt.Tooltip("key:N", title="Kernel"), name_tip, alt.Tooltip("b:N", title="Meets")]),
        clusters.mark_text(baseline="bottom", dy=-3, fontSize=12, fontWeight=600, style="kernel-label")
        .encode(x=alt.X("cx:Q"), y=alt.value(alt.ExprRef("height")), text="ct:N"),
    ]

    # The reader's marks (their kernel, the batch GEMM): a filled shape on each visible preset's
    # roof of the mark's precision, labelled in a band of its own along the top.
    def reader_marks(prefix: str, shape: str, label_y_px: int) -> list[Any]:
        on = f"{prefix}_on"
        rows = ceilings.transform_filter(f"{on} && datum.r == {prefix}_roof && {_SHOWN}").transform_calculate(
            name="names[datum.p]", x=f"{prefix}_x", y=f"min(datum.peak, datum.bw * {prefix}_x)")
        side = f"{prefix}_x > sqrt(x_domain[0] * x_domain[1]) ? 'right' : 'left'"
        return [
            # aria=False: the readout under the chart states these marks in words (and they start hidden).
            rows.mark_point(shape=shape, filled=True, size=110, opacity=1, strokeWidth=1.5, style="marker", aria=False)
            .encode(x=alt.X("x:Q"), y=alt.Y("y:Q"), color="p:N", tooltip=[name_tip]),
            alt.Chart(alt.NamedData(name="one_row")).transform_filter(on)
            .mark_text(baseline="middle", fontSize=12, style="reader-label", align=alt.ExprRef(side), aria=False,
                       dx=alt.ExprRef(f"({side}) == 'right' ? 6 : -6"),
                       limit=alt.ExprRef(f"({side}) == 'right' ? scale('x', {prefix}_x) - 8 "
                                         f": width - scale('x', {prefix}_x) - 8"),
                       text=alt.ExprRef(f"{prefix}_label"))
            .encode(x=alt.X(datum=alt.ExprRef(f"{prefix}_x"), type="quantitative"), y=alt.value(label_y_px)),
        ]

    # The roof shown, as a line above the plot (a title's subtitle cannot follow a param).
    subtitle = (
        alt.Chart(alt.NamedData(name="one_row"))
        .mark_text(align="left", baseline="bottom", fontSize=12, style="subtitle", text=alt.ExprRef(SUBTITLE_EXPR),
                   limit=alt.ExprRef("width"))
        .encode(x=alt.value(0), y=alt.value(-8))
    )
    chart = alt.layer(
        subtitle, lines, *readout, ridges, *(kernel_marks if "kernels" in variant else []),
        *reader_marks("own", "diamond", OWN_LABEL_Y_PX), *reader_marks("batch", "triangle-up", BATCH_LABEL_Y_PX),
    ).add_params(*params).properties(
        width=STATIC_WIDTH_PX, height=STATIC_HEIGHT_PX,
        autosize=alt.AutoSizeParams(type="fit", contains="padding"), padding=8,
    )
    # Schema validation costs as much as building the chart; the tests validate specs instead.
    spec = chart.to_dict(validate=False)
    spec.pop("config", None)  # altair's default view size; the chart sets its own
    return spec


GRAMMAR = Grammar("roofline", _build_structure, __file__)


# -- one chart ------------------------------------------------------------------------------------


def _check_inputs(presets: Sequence[Preset], kernels: Sequence[Kernel], title: str | None, theme: str) -> None:
    if theme not in _THEMES:
        raise InputError(f"roofline chart: 'theme' must be 'light' or 'dark': {short(theme)}")
    if not presets:
        raise InputError("roofline chart: at least one preset is needed")
    texts = [("title", title or ""), *(("preset name", p.name) for p in presets),
             *(("kernel label", k.label) for k in kernels)]
    for what, text in texts:
        bad = bad_character(text)
        if bad is not None:
            raise InputError(f"roofline chart: the {what} {short(text)} holds a control character ({bad})")


def _opening_roof(precision: str, roofs: Sequence[str]) -> str:
    """The roof id a chart opens on: ``"fp8"`` → ``"tensor:fp8"``, ``"fp32"`` → ``"vector:fp32"``."""
    text = str(precision)
    opening = text if ":" in text else roof_id(default_unit(text), text)
    if opening not in roofs:
        known = ", ".join(r.removeprefix("tensor:") for r in roofs)
        raise InputError(f"roofline chart: 'precision' must be one the presets have ({known}): {short(precision)}")
    return opening


def _x_domain(rows: Sequence[dict[str, Any]], kernels: Sequence[Kernel]) -> tuple[float, float]:
    """Whole decades that hold every ridge of every roof (dense and sparse, so switching never
    rescales the x axis), every kernel, and element-wise intensities at the low end."""
    intensities = [k.intensity_flop_per_byte for k in kernels]
    low = min([DEFAULT_MIN_INTENSITY_FLOP_PER_BYTE, *(r["ridge"] for r in rows)]
              + [i / KERNEL_MARGIN for i in intensities])
    high = max([RIDGE_HEADROOM * r["sridge"] for r in rows] + [i * KERNEL_MARGIN for i in intensities])
    return _decade_floor(low), _decade_ceil(high)


def _y_domains(rows: Sequence[dict[str, Any]], kernel_rows: Sequence[dict[str, Any]], roofs: Sequence[str],
               x_min: float) -> dict[str, list[float]]:
    """Per roof: from the slowest sloped line at the axis start (and below the lowest kernel
    mark, clear of the band of numbers) to room above its highest sparse peak and every kernel
    mark. A switch of precision may rescale the y axis; the sparsity toggle never does."""
    y_min = _decade_floor(min([r["bw"] * x_min for r in rows] + [r["y"] / 2 for r in kernel_rows]))
    kernel_top = max((r["y"] for r in kernel_rows), default=0.0)
    return {roof: [y_min, max([r["speak"] for r in rows if r["r"] == roof] + [kernel_top]) * TOP_HEADROOM]
            for roof in roofs}


def _readout_at(given: float | None, rows: Sequence[dict[str, Any]], x_min: float, x_max: float) -> float:
    if given is None:
        return _initial_intensity(rows, x_min, x_max)
    if not (isinstance(given, (int, float)) and math.isfinite(given) and x_min <= given <= x_max):
        raise InputError(
            f"roofline chart: the readout intensity must lie on the axis, {x_min:g} to {x_max:g} FLOP/byte: {given!r}"
        )
    return float(given)


def _legend_ridges(rows: Sequence[dict[str, Any]], missing: dict[str, dict[str, str]],
                   roofs: Sequence[str]) -> dict[str, dict[str, str]]:
    """Per roof and mode (``"tensor:fp8|s"``), each preset's legend prefix: its ridge, or why it has none."""
    legend: dict[str, dict[str, str]] = {}
    for roof in roofs:
        for mode, field in (("d", "ridge"), ("s", "sridge")):
            texts = {r["p"]: f"ridge {intensity_label(r[field])}" for r in rows if r["r"] == roof}
            texts.update(missing.get(roof, {}))
            legend[f"{roof}|{mode}"] = texts
    return legend


def roofline_spec(
    presets: Iterable[Preset],
    *,
    kernels: Iterable[Kernel] = (),
    sparsity: bool = False,
    precision: str = "bf16",
    title: str | None = None,
    theme: Theme = "light",
    readout_intensity_flop_per_byte: float | None = None,
    cached: bool = True,
) -> dict[str, Any]:
    """The roofline explorer as a Vega-Lite dict: :data:`GRAMMAR` with these presets' data.

    ``presets`` are drawn in the order given. ``precision`` picks the roof the chart opens
    on (a precision name, ``bf16`` by default, or a roof id such as ``vector:fp32``);
    ``sparsity`` is the toggle's initial state. ``kernels`` become numbered marks where each
    meets the roof of its own dtype. ``readout_intensity_flop_per_byte`` sets where the
    readout opens (default: between the presets' ridge points). ``theme`` is ``"light"``
    (Material's default scheme) or ``"dark"`` (its slate scheme): only the config differs.
    ``cached=False`` builds the grammar with altair afresh.
    """
    presets, kernels = tuple(presets), tuple(kernels)
    _check_inputs(presets, kernels, title, theme)
    rows, missing = _ceiling_rows(presets)
    roofs = [roof_id(u, p) for u, p in ROOF_ORDER if any(r["r"] == roof_id(u, p) for r in rows)]
    opening = _opening_roof(precision, roofs)
    x_min, x_max = _x_domain(rows, kernels)
    kernel_rows = _kernel_rows(kernels, presets, x_min, x_max) if kernels else []
    y_domains = _y_domains(rows, kernel_rows, roofs, x_min)
    names = dict(zip((p.id for p in presets), _display_names(presets), strict=True))
    keys = [f"{index} {kernel.label}" for index, kernel in enumerate(kernels, start=1)]
    params = {
        "precision": opening, "preset": ALL_PRESETS, "sparsity": bool(sparsity),
        "intensity": _readout_at(readout_intensity_flop_per_byte, rows, x_min, x_max),
        "x_domain": [x_min, x_max], "y_domains": y_domains, "x_ticks": _decades(x_min, x_max),
        "y_ticks": _decades(min(low for low, _ in y_domains.values()), max(top for _, top in y_domains.values())),
        "ids": [p.id for p in presets], "names": names, "kernel_keys": keys,
        "narrow_names": {i: narrow_lines(name) for i, name in names.items()},
        "narrow_keys": {key: narrow_lines(key) for key in keys},
        "roof_names": {roof: roof_name(roof) for roof in roofs}, "legend_ridge": _legend_ridges(rows, missing, roofs),
    }
    datasets: dict[str, list[dict[str, Any]]] = {"ceilings": rows, "one_row": [{}]}
    if kernels:
        datasets["kernels"] = kernel_rows
    spec = GRAMMAR.spec(
        datasets=datasets,
        params=params,
        variant=("kernels",) if kernels else (),
        config=config(theme),
        top={
            "title": {"text": title if title is not None else DEFAULT_TITLE, "limit": {"expr": "width + 60"}},
            # The chart's accessible name and short text alternative (Vega puts it in the SVG's aria-label).
            "description": ("Roofline chart on log-log axes: attainable FLOP/s against arithmetic intensity for "
                            f"{', '.join(names.values())}."),
            # What the page around the chart needs (charts/explorer.py), passed through to Vega untouched.
            "usermeta": {"ainotes": {
                "still": still_plot_size(STATIC_WIDTH_PX, STATIC_HEIGHT_PX, params),
                "kind": "roofline", "roofs": roofs, "missing": missing, "kernels": kernel_table_rows(kernels, presets),
                "dtypes": {d: {"bytes": DTYPE_BYTES[d], "roof": r} for d, r in dtype_roofs().items()},
            }},
        },
        cached=cached,
    )
    # The standalone page's own inputs list this chart's roofs and presets.
    for signal in spec["params"]:
        if signal["name"] == "precision":
            signal["bind"].update(options=roofs, labels=[roof_name(r) for r in roofs])
        elif signal["name"] == "preset":
            signal["bind"].update(options=[ALL_PRESETS, *names], labels=["All", *names.values()])
    return spec


def caption_html(presets: Iterable[Preset], sparsity: bool) -> str:
    """A short HTML caption: what the chart assumes, and what the sparsity toggle does and does not mean."""
    presets = tuple(presets)
    without_sparse_path = [p.name for p in presets if roofline.ceiling(p, True).peak_flops_per_s
                           == roofline.ceiling(p, False).peak_flops_per_s]
    parts = [
        "Each line is one GPU's ceiling at the chosen precision, min(peak, bandwidth × intensity), on log-log axes. "
        "Peak is the dense tensor-core rate of that precision (FP32 accumulation for FP16 and BF16), or the CUDA-core "
        "rate for the FP32 and FP64 vector paths; bandwidth is the peak device-memory figure; the dot where the two "
        "lines meet is the ridge point, peak ÷ bandwidth, given in the legend. A GPU without a path at that "
        "precision is left out, and its legend entry says so.",
        "Numbered squares are the kernels listed below the chart, each where it meets the roof of its own data type "
        "(a dense kernel meets the dense roof even with the sparse ceilings shown).",
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
        "A simplification for intuition, not a benchmark: real kernels, and work off the tensor cores, "
        "land below the lines."
    )
    return " ".join(parts)


def narrow_lines(text: str) -> str:
    """``text`` wrapped at spaces into lines of :data:`NARROW_LINE_CHARS` (a longer word stays
    whole, for Vega to cut), joined by newlines: a label on a narrow plot."""
    return "\n".join(textwrap.wrap(text, NARROW_LINE_CHARS, break_long_words=False, break_on_hyphens=False)
                     or [text])


def _still_frame_height(plot_width: int, params: dict[str, Any]) -> int:
    """What the title, subtitle, x axis and legends take above and below a still's plot (px) at
    ``plot_width``, for the chart whose param values are ``params``: the legends' columns and
    lines follow the plot width as the grammar's expressions do."""
    narrow = plot_width < NARROW_PLOT_PX
    gpus, keys = params["ids"], params["kernel_keys"]
    gpu_columns = 1 if plot_width < WIDE_LEGEND_PLOT_PX else 2
    key_columns = 1 if narrow else 2
    frame = STILL_FRAME_HEIGHT_PX + STILL_GPU_ROW_PX * (math.ceil(len(gpus) / gpu_columns) - 1)
    if narrow:  # one entry a row: each adds its wrapped lines (a GPU's ridge is one more)
        frame += STILL_GPU_LINE_PX * sum(params["narrow_names"][g].count("\n") + 1 for g in gpus)
        frame += STILL_KEY_LINE_PX * sum(params["narrow_keys"][k].count("\n") for k in keys)
    if keys:
        frame += STILL_KEY_FIRST_ROW_PX + STILL_KEY_ROW_PX * (math.ceil(len(keys) / key_columns) - 1)
    return frame


def still_plot_size(width_px: int, height_px: int, params: dict[str, Any]) -> dict[str, int]:
    """The plot size (``{"width", "height"}``) at which a still of the chart whose param values
    are ``params`` comes to ``width_px`` × ``height_px`` in all, its frame
    (:data:`STILL_FRAME_WIDTH_PX`, :func:`_still_frame_height`) around it."""
    plot_width = width_px - STILL_FRAME_WIDTH_PX
    frame = _still_frame_height(plot_width, params)
    return {"width": plot_width, "height": max(STILL_MIN_PLOT_HEIGHT_PX, height_px - frame)}


def narrow_static(spec: dict[str, Any]) -> dict[str, Any]:
    """The spec drawn at a phone's width (:data:`NARROW_STATIC_WIDTH_PX`), for the static picture
    a phone shows before (or without) the script: a plot :data:`NARROW_STILL_PLOT_HEIGHT_PX`
    tall and its legends below it, as tall as they need."""
    params = {param["name"]: param.get("value") for param in spec.get("params", [])}
    meta = spec["usermeta"]["ainotes"]
    still = {"width": NARROW_STATIC_WIDTH_PX - STILL_FRAME_WIDTH_PX, "height": NARROW_STILL_PLOT_HEIGHT_PX}
    height = NARROW_STILL_PLOT_HEIGHT_PX + _still_frame_height(still["width"], params)
    return {**spec, "width": NARROW_STATIC_WIDTH_PX, "height": height,
            "usermeta": {**spec["usermeta"], "ainotes": {**meta, "still": still}}}


def spec_meta(spec: dict[str, Any]) -> dict[str, Any] | None:
    """What the page needs beyond the picture (roofs, kernels' bounds, dtypes), or None if not a roofline."""
    meta = spec.get("usermeta", {}).get("ainotes")
    return meta if isinstance(meta, dict) and meta.get("kind") == "roofline" else None
