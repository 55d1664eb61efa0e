"""The roofline explorer: one log-log Vega-Lite chart, its grammar built once with altair.

Every number the chart draws or writes comes from the core (:mod:`ainotes.core.roofline`,
:mod:`ainotes.core.kernels`, :mod:`ainotes.core.hardware`), in one of two ways:

* computed here at build time for every state the selects allow (precision × GPUs ×
  sparsity × how kernels are typed): the ``ceilings`` rows (one per preset and roof: dense and
  2:4-sparse peak, bandwidth, ridges), the ``kernels`` rows (where each kernel meets its roof,
  its bound and time, for each way of typing it), the ``extra_roofs`` rows (a kernel's own roof
  where its mark would not lie on a line drawn), the legends' texts and the kernels' table;
* for what the reader types or slides (an intensity, a GEMM's M, N, K, a batch size), Vega
  expressions that the core's own formula functions write (:mod:`ainotes.base.formula`: called
  with :class:`~ainotes.base.formula.Expr` names they return expression text), evaluated by the
  chart, and written out by the formats of :mod:`ainotes.charts.formats`. The page's script
  only sets the inputs and shows the texts the chart computed; the tests evaluate the
  expressions with Vega and compare them with the core.

What the chart promises (tests/test_explorer_truth.py checks it in a browser at every state):

* a GPU without the roof shown draws nothing (no line, no kernel, no reader's mark); its legend
  entry says why ("not drawn: no FP8 path", "FP8 rate not given");
* no mark lies above a line of its GPU without its own roof drawn beside, dashed, and named in
  the line key; a kernel meets the roof of its own data type, or, when the reader asks for
  kernels "re-typed to the precision shown", the roof of the same kernel in that type (its bytes
  change with the type);
* the GPU select filters lines, kernels, legends and readouts together;
* stills (SVG, PNG, the picture without a script) hold no unlabelled mark.

Params (signals in the compiled Vega; the page's controls set them, see
``assets/vega-charts.js``): ``precision`` (the roof shown), ``preset`` (``"*"`` or one id),
``sparsity``, ``kmode`` (``"own"`` or ``"shown"``), ``intensity`` and ``readout_on`` (the
readout), and the reader's marks ``own_*`` and ``batch_*``. Everything else a chart varies in
(axis domains, ticks, names, legend texts) is a param too, so the structure is one
:class:`Grammar` shared by every roofline, filled with data per chart.

Text never overlaps by construction: no rotated text but the y axis title; ridge values are
folded into the legend labels; kernels are numbered marks whose numbers are grouped when their
intensities lie close (:func:`label_clusters`); the readout and the reader's marks are
labelled in a band of their own along the top; the readout rule stops at the lowest ceiling,
below every label. The browser suite measures it at every width and state.
"""

from __future__ import annotations

import html
import itertools
import math
import re
import textwrap
from collections.abc import Iterable, Sequence
from typing import Any

from ainotes.base import formula, units
from ainotes.base.errors import InputError
from ainotes.base.formula import Expr
from ainotes.base.textcheck import bad_character, short
from ainotes.charts import formats
from ainotes.charts.grammar import Grammar, whole_numbers_as_ints
from ainotes.charts.theme import GPU_PALETTES, ChartTheme, Colours, Theme, gpu_colour_domain, gpu_colour_slots
from ainotes.core import precision as precision_table
from ainotes.core import roofline
from ainotes.core.hardware import NEUTRAL_UNIT_TERMS, Preset, default_unit
from ainotes.core.kernels import DTYPE_BYTES, Kernel, gemm, parse_kernel_spec

STATIC_WIDTH_PX = 720
STATIC_HEIGHT_PX = 585  # 16:13: a plot of about 300 px above the legends of six GPUs and six kernels
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
STILL_FRAME_HEIGHT_PX = 150  # with one GPU in the legend, one entry in the line key, no kernels
STILL_GPU_ROW_PX = 15  # each further row of the GPUs' legend
STILL_GPU_LINE_PX = 14  # each further line of an entry (a narrow plot wraps names and keys) ...
STILL_KEY_LINE_PX = 13.5  # ... and in the kernels' key (Vega rounds each entry's height down)
STILL_KEY_FIRST_ROW_PX = 19  # the kernels' key, its first row and each further one
STILL_KEY_ROW_PX = 16
STILL_STYLE_ROW_PX = 15  # each further row of the line key
STILL_STYLE_LINE_PX = 14  # each further line of a line key's entry on a narrow plot
STILL_MIN_PLOT_HEIGHT_PX = 140  # a chart with a very long legend grows taller instead
# A phone's still keeps this plot height and grows with its legend (wrapped names, one entry a
# row); the page's box on a phone takes the still's proportions (assets/charts.css).
NARROW_STILL_PLOT_HEIGHT_PX = 210
TERA = 1e12

# (unit, precision) of every roof the explorer can draw, in the select's order: BF16/FP16
# first, as the notes' pages draw them; the vector-unit paths last.
ROOF_ORDER: tuple[tuple[str, str], ...] = precision_table.ROOF_ORDER  # from roof_rank in the precision table
DEFAULT_ROOF = "tensor:bf16"
INT8_ROOF = "tensor:int8"  # integer operations: OP/s and OP/byte, not FLOP/s
_PRECISION_NAMES = precision_table.PRECISION_LABELS

# How the kernels are typed: as each is written ("own"), or re-typed to the precision shown.
KERNEL_MODES = ("own", "shown")
KERNEL_MODE_LABELS = {"own": "in their own data types", "shown": "re-typed to the precision shown"}

# The line key: the roof shown (solid), the dense roof behind a 2:4 sparse one, and each roof
# drawn beside for the marks that meet it (a roof's own dash; its 2:4 sparse form shares it).
SHOWN_STYLE, DENSE_STYLE = "shown", "dense"
ALL_ROOFS = tuple(f"{u}:{p}" for u, p in ROOF_ORDER)
STYLE_DOMAIN = (SHOWN_STYLE, DENSE_STYLE, *ALL_ROOFS, *(f"{r}|s" for r in ALL_ROOFS))
_ROOF_DASHES = ([2, 2], [7, 3], [1, 3], [8, 3, 2, 3], [4, 2, 1, 2], [10, 4], [3, 5], [12, 3, 2, 3], [6, 2])
STYLE_DASHES = ([1, 0], [5, 4], *_ROOF_DASHES, *_ROOF_DASHES)
# A mark lies on a drawn line when its rate is that line's at its intensity, to this relative tolerance.
ON_LINE_TOLERANCE = 1e-9

# Where the intensity axis starts at the latest: element-wise kernels sit near 0.1 FLOP/byte.
DEFAULT_MIN_INTENSITY_FLOP_PER_BYTE = 0.1
# The flat ceilings run on for at least this factor past the farthest (sparse) ridge point.
RIDGE_HEADROOM = 3.0
# Kernel markers keep this factor away from the axis ends.
KERNEL_MARGIN = 1.5
# Room above the highest ceiling for the band of the readout's and the reader's labels.
TOP_HEADROOM = 6.0

ALL_PRESETS = "*"  # not a valid preset id, so it cannot collide with one
# Below this plot width (px) legend labels wrap (the kernels' key and the line key always have one
# column); below the second, the GPUs' legend has one column too.
NARROW_PLOT_PX = 420
WIDE_LEGEND_PLOT_PX = 760
# The narrowest plot the page draws (a 360 px phone, less margins and the y axis), and the
# width of one character of an 11 px label: kernel numbers closer than their text on that
# plot share one label.
NARROWEST_PLOT_PX = 200
LABEL_CHAR_PX = 7.0
LABEL_GAP_PX = 6.0
# The readout and the reader's marks are labelled in a band along the top, one row each;
# kernel numbers stand in a band of this height along the bottom.
KERNEL_BAND_PX = 18
# A legend entry's symbol and the gap after it, which its label's limit leaves room for.
LEGEND_SYMBOL_PX = 30
READOUT_LABEL_Y_PX = 12
OWN_LABEL_Y_PX = 27
BATCH_LABEL_Y_PX = 42
# The batch GEMM: a decode step's projection from d_model to 4·d_model, weights read once.
DEFAULT_D_MODEL = 8192
BATCH_FFN_FACTOR = 4

# -- formats shared by Python and the chart's expressions ---------------------------------------


def flops_per_s_expr(value: str) -> str:
    """A Vega expression that writes FLOP/s as :func:`ainotes.base.units.flops_per_s` does
    (``"989.4 TFLOP/s"``; :func:`ainotes.charts.formats.si_expr`)."""
    return formats.si_expr(value, "FLOP/s")


def intensity_expr(value: str) -> str:
    """A Vega expression for an intensity in FLOP/B, rounded as :func:`ainotes.base.units.intensity` does."""
    return formats.intensity_short_expr(value)


def intensity_label(intensity_flop_per_byte: float) -> str:
    """``"295 FLOP/B"``: the chart's short form of :func:`ainotes.base.units.intensity`."""
    return formats.intensity_short_text(intensity_flop_per_byte)


# -- names --------------------------------------------------------------------------------------


def roof_id(unit: str, precision: str) -> str:
    """``"tensor:bf16"``: how the chart names a roof."""
    return f"{unit}:{precision}"


def _split_roof(roof: str) -> tuple[str, str]:
    unit, precision = roof.split(":")
    return unit, precision


def precision_name(precision: str) -> str:
    """``"BF16"``."""
    return _PRECISION_NAMES.get(precision, precision.upper())


def roof_name(roof: str) -> str:
    """``"BF16 matrix units"``, ``"FP32 vector units"``: a roof in the notes' neutral words."""
    unit, precision = _split_roof(roof)
    return f"{precision_name(precision)} {NEUTRAL_UNIT_TERMS[unit]}"


def roof_term(roof: str, preset: Preset) -> str:
    """``"BF16 tensor cores"``, ``"BF16 MXUs"``: a roof in the words of the preset's vendor
    (:meth:`ainotes.core.hardware.Preset.unit_term`), neutral where the preset names none."""
    unit, precision = _split_roof(roof)
    return f"{precision_name(precision)} {preset.unit_term(unit)}"


def roof_option_label(roof: str, presets: Sequence[Preset]) -> str:
    """The select's words for a roof: neutral, with the vendors' own terms beside
    (``"BF16 matrix units (tensor cores, MXUs)"``)."""
    unit, _ = _split_roof(roof)
    neutral = NEUTRAL_UNIT_TERMS[unit]
    terms = list(dict.fromkeys(p.unit_term(unit) for p in presets if p.unit_term(unit) != neutral))
    return roof_name(roof) + (f" ({', '.join(terms)})" if terms else "")


def roof_dtype(roof: str) -> str:
    """The data type a kernel re-typed to ``roof`` takes: its precision (``"vector:fp32"`` → fp32)."""
    return _split_roof(roof)[1]


def op_word(roof: str) -> str:
    """``"OP"`` for the INT8 roof (integer operations), ``"FLOP"`` for every other."""
    return "op" if roof == INT8_ROOF else "flop"


def dtype_roofs() -> dict[str, str]:
    """The roof a GEMM of each dtype meets (the core's rule), for the reader's own GEMM."""
    return {dtype: roof_id(*roofline.kernel_ceiling(gemm(1, 1, 1, dtype))) for dtype in DTYPE_BYTES}


def _missing_text(status: str, roof: str) -> str:
    """Why a preset has no line for ``roof``: ``"no FP8 path"``, ``"FP8 rate not given"``."""
    unit, precision = _split_roof(roof)
    label = precision_name(precision)
    kind = "" if unit == "tensor" else " vector"
    if status == "none":
        return f"no {label}{kind} path"
    return f"{label}{kind} rate not given"


def _display_names(presets: Sequence[Preset]) -> list[str]:
    """Legend names; a name two presets share gets its preset id appended, so colours stay distinct."""
    names = [p.name for p in presets]
    return [f"{p.name} ({p.id})" if names.count(p.name) > 1 else p.name for p in presets]


def narrow_lines(text: str) -> str:
    """``text`` wrapped at spaces into lines of :data:`NARROW_LINE_CHARS` (a longer word stays
    whole, for Vega to cut), joined by newlines: a label on a narrow plot."""
    return "\n".join(textwrap.wrap(text, NARROW_LINE_CHARS, break_long_words=False, break_on_hyphens=False)
                     or [text])


# A narrow legend's line, in characters: its labels' room on the narrowest plot at 12 px.
NARROW_LINE_CHARS = 26


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


def label_clusters(intensities: Sequence[float], x_min: float, x_max: float) -> list[int]:
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


# -- kernels, in each way of typing them ----------------------------------------------------------


def retyped(kernel: Kernel, dtype: str) -> tuple[Kernel, str]:
    """The same kernel in ``dtype`` ("this GEMM in FP8": its bytes change with the type, its
    FLOPs do not), and how its key names it: the kernel's own label when it is already of that
    type, the default label of the re-typed spec, or an author's label with "as fp8" after it."""
    if kernel.dtype == dtype:
        return kernel, kernel.label
    parts = kernel.spec.split(":")
    parts[2] = dtype
    other = parse_kernel_spec(":".join(parts))
    default = parse_kernel_spec(kernel.spec).label
    return other, (other.label if kernel.label == default else f"{kernel.label}, as {dtype}")


def _mode_kernels(kernels: Sequence[Kernel], roofs: Sequence[str]) -> dict[str, list[tuple[Kernel, str]]]:
    """Per mode key (``"own"``, or a roof for kernels re-typed to it): the kernels and their names."""
    modes = {"own": [(k, k.label) for k in kernels]}
    for roof in roofs:
        modes[roof] = [retyped(k, roof_dtype(roof)) for k in kernels]
    return modes


def _why_not(preset: Preset, found: roofline.KernelRoof) -> str:
    """Why a kernel has no roof on a preset, in the chart's words (never a file's path)."""
    roof = roof_id(found.unit, found.precision)
    if found.bound == "unknown":
        return _missing_text("not given", roof)
    path = preset.path(found.precision, found.unit)
    if path is not None and path.dense_tflops is not None:  # the path is there, its 2:4 mode is not
        return f"no 2:4 sparse {precision_name(found.precision)} path"
    return _missing_text("none", roof)


def kernel_cell_text(preset: Preset, found: roofline.KernelRoof) -> str:
    """A kernel on one preset, as the kernels' table and tooltips say it:
    ``"compute-bound, 989.4 TFLOP/s on BF16 tensor cores, 1,111 µs"``."""
    roof = roof_id(found.unit, found.precision)
    if found.attainable_flops_per_s is None or found.time_s is None:
        return f"not placed: {_why_not(preset, found)}"
    rate = formats.rate_text(found.attainable_flops_per_s, op_word(roof))
    sparse = ", 2:4 sparse" if found.sparse else ""
    return (f"{found.bound}-bound, {rate} on {roof_term(roof, preset)}{sparse}, "
            f"{formats.time_us_text(found.time_s)}")


class _KernelData:
    """Every kernel mark of a chart, in every mode, from the core (:func:`roofline.kernel_roof`).

    ``rows`` are the ``kernels`` dataset: one per kernel, preset and place, with the mode keys
    (``"own"``, or the roof it was re-typed to) that draw it in ``m`` and the kernels' table's
    text in ``tx``; ``why`` says, per mode key, kernel number and preset, why a kernel has no
    mark there."""

    def __init__(self, kernels: Sequence[Kernel], presets: Sequence[Preset], roofs: Sequence[str],
                 x_min: float, x_max: float):
        self.modes = _mode_kernels(kernels, roofs) if kernels else {}
        self.marks: dict[str, dict[str, list[dict[str, Any]]]] = {}  # mode key → preset → marks
        self.why: dict[str, dict[str, dict[str, str]]] = {}  # mode key → kernel number → preset → why not
        self.keys: dict[str, dict[str, str]] = {}  # mode key → kernel number → key text
        merged: dict[tuple[Any, ...], dict[str, Any]] = {}
        for mode, typed in self.modes.items():
            intensities = [k.intensity_flop_per_byte for k, _ in typed]
            clusters = label_clusters(intensities, x_min, x_max)
            members: dict[int, list[int]] = {}
            for index, cluster in enumerate(clusters):
                members.setdefault(cluster, []).append(index)
            self.keys[mode] = {str(i + 1): f"{i + 1} {name}" for i, (_, name) in enumerate(typed)}
            per_preset: dict[str, list[dict[str, Any]]] = {p.id: [] for p in presets}
            for index, (kernel, _) in enumerate(typed):
                group = sorted(members[clusters[index]], key=lambda i: intensities[i])
                centre = math.exp(sum(math.log(intensities[i]) for i in group) / len(group))
                for preset in presets:
                    found = roofline.kernel_roof(preset, kernel)
                    if found.attainable_flops_per_s is None:
                        self.why.setdefault(mode, {}).setdefault(str(index + 1), {})[preset.id] = (
                            kernel_cell_text(preset, found))
                        continue
                    row = {
                        "k": index + 1, "p": preset.id, "x": intensities[index], "y": found.attainable_flops_per_s,
                        "r": roof_id(found.unit, found.precision), "sp": int(found.sparse),
                        "b": found.bound, "t": found.time_s, "c": clusters[index], "cx": centre,
                        "ct": ",".join(str(i + 1) for i in sorted(group)), "tx": kernel_cell_text(preset, found),
                    }
                    per_preset[preset.id].append(row)
                    identity = tuple(sorted(row.items()))
                    merged.setdefault(identity, {**row, "m": " "})["m"] += f"{mode} "
            self.marks[mode] = per_preset
        self.rows = list(merged.values())


def _mode_key(kmode: str, roof: str) -> str:
    return "own" if kmode == "own" else roof


def _on_line(mark: dict[str, Any], lines: Sequence[tuple[float, float]]) -> bool:
    """Whether a mark lies on one of ``lines`` ((flat top, bandwidth) pairs) at its intensity."""
    return any(abs(mark["y"] - min(top, bw * mark["x"])) <= ON_LINE_TOLERANCE * mark["y"] for top, bw in lines)


def _drawn_lines(ceiling: dict[str, Any], sparsity: bool) -> list[tuple[float, float]]:
    """The lines a preset draws at its roof shown: the roof (sparse where asked and supported)
    and, behind a doubled one, the dense roof."""
    lines = [(ceiling["speak"] if sparsity else ceiling["peak"], ceiling["bw"])]
    if sparsity and ceiling["speak"] != ceiling["peak"]:
        lines.append((ceiling["peak"], ceiling["bw"]))
    return lines


_Drawn = dict[str, dict[str, list[str]]]  # "own|tensor:fp8" → kernel number → the presets that draw it


def _extra_roofs(data: _KernelData, presets: Sequence[Preset], ceilings: dict[tuple[str, str], dict[str, Any]],
                 roofs: Sequence[str]) -> tuple[list[dict[str, Any]], dict[str, list[str]], _Drawn]:
    """What each state draws beside the roof shown, from the kernel marks.

    Returns the ``extra_roofs`` rows (a preset's roof, dense or 2:4 sparse, with the states
    that draw it: "own|tensor:fp64|d", kernel mode, roof shown, sparsity), the line key's
    entries per state and GPU choice (those that are more than the roof shown alone), and per
    kernel mode and roof the presets that draw each kernel (for its key)."""
    states: dict[tuple[str, str, int], list[str]] = {}
    line_keys: dict[str, list[str]] = {}
    drawn: dict[str, dict[str, list[str]]] = {}
    ids = [p.id for p in presets]
    for kmode in KERNEL_MODES:
        for roof in roofs:
            mode = _mode_key(kmode, roof)
            marks = data.marks.get(mode, {})
            shown = [i for i in ids if (i, roof) in ceilings]
            numbers = {str(n) for n in range(1, len(data.keys.get(mode, {})) + 1)}
            drawn[f"{kmode}|{roof}"] = {n: [i for i in shown if any(str(m["k"]) == n for m in marks.get(i, []))]
                                        for n in sorted(numbers, key=int)}
            for sparsity in (False, True):
                state = f"{kmode}|{roof}|{'s' if sparsity else 'd'}"
                extras: dict[str, set[str]] = {}
                for preset_id in shown:
                    lines = _drawn_lines(ceilings[(preset_id, roof)], sparsity)
                    for mark in marks.get(preset_id, []):
                        if _on_line(mark, lines):
                            continue
                        where = states.setdefault((preset_id, mark["r"], mark["sp"]), [])
                        if state not in where:
                            where.append(state)
                        extras.setdefault(preset_id, set()).add(mark["r"] + ("|s" if mark["sp"] else ""))
                for choice in (ALL_PRESETS, *ids):
                    visible = shown if choice == ALL_PRESETS else [i for i in shown if i == choice]
                    styles = [SHOWN_STYLE]
                    if sparsity and any(ceilings[(i, roof)]["speak"] != ceilings[(i, roof)]["peak"] for i in visible):
                        styles.append(DENSE_STYLE)
                    present = set().union(*(extras.get(i, set()) for i in visible)) if visible else set()
                    styles += [s for s in STYLE_DOMAIN if s in present]
                    if styles != [SHOWN_STYLE]:
                        line_keys[f"{state}|{choice}"] = styles
    rows = []
    for (preset_id, roof, sparse), where in states.items():
        ceiling = ceilings[(preset_id, roof)]
        rows.append({"p": preset_id, "r": roof, "sp": sparse, "top": ceiling["speak"] if sparse else ceiling["peak"],
                     "bw": ceiling["bw"], "s": " " + " ".join(where) + " "})
    return rows, line_keys, drawn


# -- what the reader types: the core's formulas as Vega expressions -------------------------------


def gemm_flops(m: Any, n: Any, k: Any) -> Any:
    """A GEMM's FLOPs, 2·M·N·K, as :func:`ainotes.core.kernels.gemm` counts them (numbers or
    :class:`~ainotes.base.formula.Expr`; the tests hold the two equal)."""
    return 2 * m * n * k


def gemm_bytes(m: Any, n: Any, k: Any, bytes_per_element: Any) -> Any:
    """A GEMM's bytes moved, as :func:`ainotes.core.kernels.gemm` counts a dense one: A (M·K), B (K·N) and
    C (M·N) each a whole number of packed bytes, ⌈elements × bytes per element⌉ (a 4-bit tensor of
    one element still takes a byte; :func:`ainotes.core.kernels.tensor_bytes`)."""
    return sum(formula.ceiling(elements * bytes_per_element - 1e-9) for elements in (m * k, k * n, m * n))


def _op_expr(roof_expr: str) -> str:
    return f"({roof_expr} == '{INT8_ROOF}' ? 'OP' : 'FLOP')"


def _bound_expr(memory_bound: Any) -> str:
    return f"({memory_bound} ? 'memory' : 'compute')"


# Expressions of the reader's marks, the same for every chart (in the grammar).
_OWN_FLOPS = gemm_flops(Expr("own_m"), Expr("own_n"), Expr("own_k"))
_OWN_BYTES = gemm_bytes(Expr("own_m"), Expr("own_n"), Expr("own_k"), Expr("own_s"))
_OWN_SHAPE = "own_m + '×' + own_n + '×' + own_k + ' ' + own_dtype"
_BATCH_FLOPS = gemm_flops(Expr("batch_tokens"), Expr("batch_n"), Expr("batch_k"))
_BATCH_BYTES = gemm_bytes(Expr("batch_tokens"), Expr("batch_n"), Expr("batch_k"), Expr("batch_s"))
_MARK_EXPRS: tuple[tuple[str, str], ...] = (
    ("own_flops", _OWN_FLOPS.text),
    ("own_bytes", _OWN_BYTES.text),
    ("own_x", f"own_kind == 'gemm' ? {_OWN_FLOPS.text} / {_OWN_BYTES.text} : own_typed_x"),
    ("own_off_axis", "own_x < x_domain[0] || own_x > x_domain[1]"),
    ("own_x_text", formats.intensity_expr("own_x", _op_expr("own_roof"))),
    ("own_label", f"own_kind == 'gemm' ? '◆ GEMM ' + {_OWN_SHAPE} "
                  f": '◆ ' + {formats.intensity_expr('own_typed_x', _op_expr('precision'))}"),
    ("own_heading",
     f"own_kind == 'gemm' ? 'Your GEMM ' + {_OWN_SHAPE} + ': ' "
     f"+ {formats.si_expr('own_flops', unit_expr=_op_expr('own_roof'))} + ', ' "
     f"+ {formats.si_expr('own_bytes', 'B')} + ' moved at least, ' "
     f"+ {formats.intensity_expr('own_x', _op_expr('own_roof'))} + '.' "
     f": 'Your kernel at ' + {formats.intensity_expr('own_x', _op_expr('own_roof'))} "
     "+ ', on the roof shown (' + roof_names[own_roof] + '):'"),
    ("batch_n", f"{BATCH_FFN_FACTOR} * batch_d"),
    ("batch_k", "batch_d"),
    ("batch_flops", _BATCH_FLOPS.text),
    ("batch_bytes", _BATCH_BYTES.text),
    ("batch_x", f"{_BATCH_FLOPS.text} / {_BATCH_BYTES.text}"),
    ("batch_off_axis", "batch_x < x_domain[0] || batch_x > x_domain[1]"),
    ("batch_x_text", formats.intensity_expr("batch_x", _op_expr("batch_roof"))),
    ("batch_label", "'▲ ' + batch_tokens + ' tokens, ' + upper(batch_dtype)"),
    ("batch_heading", "'Decode projection, ' + batch_tokens + ' tokens × ' + batch_k + ' → ' + batch_n "
                      f"+ ' (' + batch_dtype + '): ' + {formats.intensity_expr('batch_x', _op_expr('batch_roof'))} "
                      "+ '.'"),
    ("readout_heading", f"'At ' + {formats.intensity_expr('intensity', _op_expr('precision'))} + ', ' "
                        "+ roof_names[precision] + mode_words[precision][sparsity ? 1 : 0] + ':'"),
    ("readout_label", formats.intensity_short_expr("intensity")),
    # What the intensity field shows as the slider moves (units.significant, three figures).
    ("intensity_field", formats.significant_expr("intensity", 3)),
    *((f"{prefix}_extra_on",
       f"{prefix}_on && {prefix}_roof != precision && (preset == '{ALL_PRESETS}' "
       f"? length(both_roofs[precision][{prefix}_roof]) > 0 "
       f": indexof(both_roofs[precision][{prefix}_roof], preset) >= 0)")
      for prefix in ("own", "batch")),
)


def _row_texts() -> dict[str, str]:
    """The readouts' lines, one per GPU: expressions over a layer's row (``datum.p``, its
    ``peak`` or ``peak_now``, ``bw``, and ``x``, the intensity read), from the core's formulas
    (:func:`ainotes.core.roofline.attainable`, :func:`~ainotes.core.roofline.ridge`,
    :func:`~ainotes.core.roofline.memory_bound`, :func:`~ainotes.core.roofline.time_at`,
    :func:`~ainotes.core.roofline.weight_gemm_crossing_tokens`) and the formats of
    :mod:`ainotes.charts.formats`. The page's script reads the rows (each text under its
    ``as`` name below) and shows the lines."""
    name = "names[datum.p]"
    x, bandwidth = Expr("datum.x"), Expr("datum.bw")

    # The readout: the roof shown (sparse where the box is ticked and the path has it).
    peak = Expr("datum.peak_now")
    rate, ridge = roofline.attainable(x, peak, bandwidth), roofline.ridge(peak, bandwidth)
    below = roofline.memory_bound(x, ridge)
    op = _op_expr("precision")
    readout = (f"{name} + ': ' + {formats.rate_expr(str(rate), op)}"
               " + (sparsity && datum.speak != datum.peak ? ' (2:4 sparse)' : '')"
               f" + ', ' + {_bound_expr(below)} + '-bound, '"
               f" + ({below} ? {formats.ratio_expr(str(ridge / x))} + '× below the ridge ('"
               f" : {formats.ratio_expr(str(x / ridge))} + '× the ridge (')"
               f" + {formats.intensity_expr(str(ridge), op)} + ')'")

    # The reader's kernel and the batch GEMM: dense, at their own roofs, with their time.
    def mark(prefix: str) -> str:
        dense = Expr("datum.peak")
        rate = roofline.attainable(x, dense, bandwidth)
        below = roofline.memory_bound(x, roofline.ridge(dense, bandwidth))
        time = roofline.time_at(Expr(f"{prefix}_flops"), rate)
        timed = "own_kind == 'gemm'" if prefix == "own" else "true"
        return (f"{name} + ': ' + {_bound_expr(below)} + '-bound, at most ' "
                f"+ {formats.rate_expr(str(rate), _op_expr(f'{prefix}_roof'))} "
                f"+ ' (' + roof_terms[datum.p][{prefix}_roof] + ')' "
                f"+ ({timed} ? ', ' + {formats.time_us_expr(str(time))} : '')")

    batch_ridge = roofline.ridge(Expr("datum.peak"), bandwidth)
    crossing = roofline.weight_gemm_crossing_tokens(batch_ridge, Expr("batch_n"), Expr("batch_k"), Expr("batch_s"))
    cross = (f"{name} + ': crosses its ridge (' "
             f"+ {formats.intensity_expr(str(batch_ridge), _op_expr('batch_roof'))} + ') at ' "
             f"+ (isValid({crossing}) ? 'about ' + {formats.ratio_expr(str(crossing))} + ' tokens' "
             ": 'no batch size')")
    return {"readout_text": readout, "own_text": mark("own"), "batch_text": mark("batch"), "cross_text": cross}


ROW_TEXTS = _row_texts()

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

def _paint(c: Colours) -> dict[str, Any]:
    return {
        "legend": {"symbolStrokeColor": c["text"]},
        "text": {"color": c["text"]},
        "style": {
            "kernel-label": {"color": c["text"]},
            "reader-label": {"color": c["text"]},
            "readout": {"color": c["muted"]},
            "subtitle": {"color": c["muted"]},
            "marker": {"stroke": c["marker_stroke"]},
        },
    }


#: The chart's look per scheme (:class:`ainotes.charts.theme.ChartTheme`): the GPUs in their site
#: colours (:data:`ainotes.charts.theme.GPU_PALETTES`, keyed by preset id), the named styles
#: ``kernel-label``, ``readout``, ``marker``, ``reader-label``, both legends under the plot.
THEME = ChartTheme(
    "roofline",
    layout={"axis": {"labelFontSize": 12, "titleFontSize": 13, "titleFontWeight": "normal"},
            "legend": {"labelFontSize": 12, "symbolStrokeWidth": 3, "offset": 22,
                       "layout": {"expr": "{bottom: {anchor: 'start', direction: 'vertical', margin: 6}}"}},
            "title": {"fontSize": 16, "fontWeight": 600, "anchor": "start", "offset": 8},
            "text": {"fontSize": 12}},
    palettes=GPU_PALETTES, paint=_paint,
)


def retheme(spec: dict[str, Any], theme: Theme) -> dict[str, Any]:
    """``spec`` (from :func:`roofline_spec`) in ``theme``: the same chart with the theme's config,
    as :func:`roofline_spec` with that theme builds it, without building it again. Shares
    everything but the config with ``spec``: neither may be changed in place."""
    return {**spec, "config": whole_numbers_as_ints(THEME.config(theme))}


def dark_vega(light_vega: dict[str, Any]) -> dict[str, Any]:
    """The compiled Vega of the dark spec from the light one's, without compiling it again.

    Compiled, the themes differ only where the config's colours land: the top-level
    ``background``, the ``config`` (axis, legend, style and palette colours) and the ``value``
    of a mark's ``fill`` or ``stroke``. Only strings in those places are swapped, never data,
    signals or text. The tests check it against the compiler's dark output."""
    swap = THEME.colour_swap()

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

    The two specs differ only in their config's colours (:data:`THEME`), so Vega lays
    both out alike and the dark picture is the light one with each theme colour swapped, in
    ``fill`` and ``stroke`` attributes only (never in text). The tests check it against a real render.
    """
    swap = THEME.colour_swap()

    def recolour(match: re.Match[str]) -> str:
        colour = swap.get(match.group(2).lower(), match.group(2))
        return f'{match.group(1)}="{colour}"'

    return _SVG_COLOUR.sub(recolour, light_svg)



# -- the grammar: built once with altair ---------------------------------------------------------

# Expressions over the params, shared by the layers.
_VISIBLE = f"(preset == '{ALL_PRESETS}' || datum.p == preset)"
_HAS_SHOWN = "indexof(has_roof[precision], datum.p) >= 0"  # the GPU draws the roof shown
_SHOWN = f"({_VISIBLE} && {_HAS_SHOWN})"
_MODE_KEY = "precision + '|' + (sparsity ? 's' : 'd')"
_KERNEL_MODE = "(kmode == 'own' ? 'own' : precision)"
_LINE_STATE = "kmode + '|' + precision + '|' + (sparsity ? 's' : 'd')"
_PEAK = "(sparsity ? datum.speak : datum.peak)"
_RIDGE = "(sparsity ? datum.sridge : datum.ridge)"
_AT = "clamp(toNumber(intensity), x_domain[0], x_domain[1])"
# The readout is drawn once a reader moves it: the page's script turns it on, and a page that binds
# the intensity to an input of Vega's own (the standalone embed) shows it as soon as the value moves.
# A still draws the chart as it opens, without it.
_READOUT_SHOWN = "(readout_on || toNumber(intensity) != intensity_opening)"
_OP = _op_expr("precision")
_LEGEND_LABEL_LIMIT = (f"width < {NARROW_PLOT_PX} ? width - {LEGEND_SYMBOL_PX} "
                       f": width / 2 - 2 * {LEGEND_SYMBOL_PX}")
_NARROW = f"width < {NARROW_PLOT_PX}"
SUBTITLE_EXPR = f"subtitles[{_MODE_KEY}][{_NARROW} ? 1 : 0]"
# A GPU's legend entry: "ridge 295 FLOP/B · NVIDIA H100 SXM5 80 GB" (or "not drawn: no FP8 path · …")
# on one line, or on a narrow plot the name, wrapped, above its ridge, so that a phone reads whole
# names instead of "… · NVIDIA H10…" (and Vega need not search for where to cut them).
_GPU_RIDGE = f"legend_ridge[{_MODE_KEY}][datum.value]"
_GPU_RIDGE_NARROW = f"legend_ridge_narrow[{_MODE_KEY}][datum.value]"
GPU_LEGEND_VALUES_EXPR = f"preset == '{ALL_PRESETS}' ? gpu_ids : [preset]"
GPU_LEGEND_LABEL_EXPR = (f"{_NARROW} ? split(narrow_names[datum.value] + '\\n' + {_GPU_RIDGE_NARROW}, '\\n') "
                         f": {_GPU_RIDGE} + ' · ' + names[datum.value]")
# The kernels' key: each kernel's number and name as typed in this mode; one that no GPU shown
# draws says so.
# Each entry's value names its kernel and whether a GPU shown draws it ("3|x"). Vega does not lay
# a legend's entries out again when a label grows a line, so each kernel's narrow label takes as
# many lines in every state, drawn or not, in every mode (_narrow_keys pads them).
_KEY_NUMBER = "split(datum.value, '|')[0]"
_KEY_MISSING = "split(datum.value, '|')[1] == 'x'"
KEY_VALUES_EXPR = "key_values[kmode + '|' + precision + '|' + preset]"
KERNEL_KEY_LABEL_EXPR = (f"{_NARROW} ? split(narrow_keys[{_KERNEL_MODE}][{_KEY_NUMBER}][{_KEY_MISSING} ? 1 : 0], "
                         "'\\n') "
                         f": kernel_keys[{_KERNEL_MODE}][{_KEY_NUMBER}] + ({_KEY_MISSING} ? ' (not drawn: no roof "
                         "for it on the GPUs shown)' : '')")
# The line key: the roof shown, first, and whatever else this state draws.
_STYLE_BASE = f"(line_keys[{_LINE_STATE} + '|' + preset] || ['{SHOWN_STYLE}'])"
STYLE_VALUES_EXPR = (
    f"split(join({_STYLE_BASE}, ',')"
    f" + (own_extra_on && indexof({_STYLE_BASE}, own_roof) < 0 ? ',' + own_roof : '')"
    f" + (batch_extra_on && indexof({_STYLE_BASE}, batch_roof) < 0"
    " && !(own_extra_on && own_roof == batch_roof) ? ',' + batch_roof : ''), ',')"
)
# (Each value's label keeps its shape in every state: see the kernels' key above.)
STYLE_LABEL_EXPR = f"{_NARROW} ? split(style_names[datum.value][1], '\\n') : style_names[datum.value][0]"


def _params_structure(alt: Any) -> list[Any]:
    def param(name: str, value: Any, **options: Any) -> Any:
        return alt.param(name=name, value=value, **options)

    inputs = [
        param("precision", DEFAULT_ROOF,
              bind=alt.binding_select(options=[DEFAULT_ROOF], labels=["BF16"], name="Precision ")),
        param("preset", ALL_PRESETS,
              bind=alt.binding_select(options=[ALL_PRESETS], labels=["All"], name="GPUs ")),
        param("sparsity", False, bind=alt.binding_checkbox(name="2:4 structured sparsity (where supported) ")),
        param("kmode", "own", bind=alt.binding_select(options=list(KERNEL_MODES),
                                                     labels=[KERNEL_MODE_LABELS[m] for m in KERNEL_MODES],
                                                     name="Kernels ")),
        param("intensity", 100.0, bind=alt.binding(input="number", name="Intensity, FLOP/byte ")),
        *(param(name, value) for name, value in (
            ("readout_on", False), ("intensity_opening", 100.0),
            ("x_domain", [0.1, 1000.0]), ("y_domains", {}), ("x_ticks", [1.0]), ("y_ticks", [1e12]),
            ("colour_domain", ["a"]), ("gpu_ids", ["a"]), ("names", {}), ("narrow_names", {}),
            ("kernel_nums", ["1"]), ("kernel_keys", {}), ("narrow_keys", {}), ("key_values", {}),
            ("roof_names", {}), ("roof_terms", {}), ("mode_words", {}), ("subtitles", {}),
            ("legend_ridge", {}), ("legend_ridge_narrow", {}), ("has_roof", {}), ("missing", {}), ("ceil", {}),
            ("line_keys", {}), ("style_names", {}), ("both_roofs", {}),
            ("own_on", False), ("own_kind", "gemm"), ("own_m", 1), ("own_n", 1), ("own_k", 1), ("own_s", 2),
            ("own_dtype", "bf16"), ("own_typed_x", 1.0), ("own_roof", DEFAULT_ROOF),
            ("batch_on", False), ("batch_tokens", 64), ("batch_d", DEFAULT_D_MODEL), ("batch_s", 2),
            ("batch_dtype", "bf16"), ("batch_roof", DEFAULT_ROOF),
        )),
    ]
    derived = [alt.param(name=name, expr=expr) for name, expr in _MARK_EXPRS]
    return inputs + derived


def _build_structure(variant: Any = ()) -> dict[str, Any]:
    """The structure of every roofline; ``variant`` is ``("kernels",)`` when the chart marks
    kernels (without any, their layers and key are left out: an empty legend draws badly)."""
    import altair as alt  # here, not at the top: a build whose grammar is cached never needs it

    x_scale = alt.Scale(type="log", domain=alt.ExprRef("x_domain"), nice=False)
    y_scale = alt.Scale(type="log", domain=alt.ExprRef("y_domains[precision]"), nice=False)
    x = alt.X("x:Q", scale=x_scale, title="Arithmetic intensity (FLOP/byte)",
              axis=alt.Axis(values=alt.ExprRef("x_ticks"), labelExpr="format(datum.value, ',~g')",
                            labelOverlap="greedy", labelFlush=True))
    y = alt.Y("y:Q", scale=y_scale, title="Attainable rate",
              axis=alt.Axis(values=alt.ExprRef("y_ticks"), labelExpr=formats.rate_expr("datum.value", _OP),
                            labelOverlap="greedy"))
    colour = alt.Color(
        "p:N", title=None, scale=alt.Scale(domain=alt.ExprRef("colour_domain")),
        legend=alt.Legend(
            orient="bottom", direction="horizontal", symbolType="stroke", values=alt.ExprRef(GPU_LEGEND_VALUES_EXPR),
            # One GPU a line until the plot is wide enough for two whole names with their ridges.
            columns=alt.ExprRef(f"width < {WIDE_LEGEND_PLOT_PX} ? 1 : 2"),
            labelLimit=alt.ExprRef(f"width < {WIDE_LEGEND_PLOT_PX} ? width - {LEGEND_SYMBOL_PX} "
                                   f": width / 2 - 2 * {LEGEND_SYMBOL_PX}"),
            labelExpr=GPU_LEGEND_LABEL_EXPR,
        ),
    )
    dash = alt.StrokeDash(
        "style:N", scale=alt.Scale(domain=list(STYLE_DOMAIN), range=[list(d) for d in STYLE_DASHES]),
        legend=alt.Legend(orient="bottom", direction="horizontal", title=None, symbolType="stroke",
                          values=alt.ExprRef(STYLE_VALUES_EXPR), columns=1,
                          labelLimit=alt.ExprRef(f"width - {LEGEND_SYMBOL_PX}"), labelExpr=STYLE_LABEL_EXPR),
    )
    name_tip = alt.Tooltip("name:N", title="GPU")
    # The lines after the first take their legends from it (altair's encodings without legends).
    quiet = {"color": alt.Color("p:N", title=None, legend=None, scale=alt.Scale(domain=alt.ExprRef("colour_domain"))),
             "strokeDash": alt.StrokeDash("style:N", legend=None,
                                          scale=alt.Scale(domain=list(STYLE_DOMAIN),
                                                          range=[list(d) for d in STYLE_DASHES]))}
    line_encoding = {
        "x": x, "y": y, "color": colour, "strokeDash": dash, "detail": ["p:N", "style:N"], "tooltip": [name_tip],
        "order": "x:Q",
        # (strokeOpacity, not opacity: the legend would copy opacity into its symbols.)
        "strokeOpacity": alt.condition(f"datum.style == '{SHOWN_STYLE}'", alt.value(1),
                                       alt.value(0.85)),
        "strokeWidth": alt.condition(f"datum.style == '{SHOWN_STYLE}'", alt.value(2.5), alt.value(1.6)),
    }

    def vertices(chart: Any) -> Any:
        """Three vertices per line, in x order: exact on log-log axes (``top``, ``bw`` per row)."""
        return (chart.transform_calculate(
            xs="[x_domain[0], clamp(datum.top / datum.bw, x_domain[0], x_domain[1]), x_domain[1]]")
            .transform_flatten(["xs"], as_=["x"])
            .transform_calculate(y="min(datum.top, datum.bw * datum.x)", name="names[datum.p]"))

    ceilings = alt.Chart(alt.NamedData(name="ceilings"))
    current = ceilings.transform_filter(f"datum.r == precision && {_VISIBLE}").transform_calculate(
        name="names[datum.p]", peak_now=_PEAK, ridge_now=_RIDGE,
    )
    # The roof shown, solid; with sparsity on, the dense line of each preset whose sparse path
    # doubles it stays behind, dashed.
    lines = vertices(
        current
        .transform_calculate(modes="sparsity && datum.speak != datum.peak ? ['now', 'ref'] : ['now']")
        .transform_flatten(["modes"], as_=["mode"])
        .transform_calculate(top="datum.mode == 'ref' ? datum.peak : datum.peak_now",
                             style=f"datum.mode == 'ref' ? '{DENSE_STYLE}' : '{SHOWN_STYLE}'")
    ).mark_line().encode(**line_encoding)
    # Beside it, each roof a mark meets where that mark would not lie on a line drawn.
    extras = vertices(
        alt.Chart(alt.NamedData(name="extra_roofs"))
        .transform_filter(f"indexof(datum.s, ' ' + {_LINE_STATE} + ' ') >= 0 && {_SHOWN}")
        .transform_calculate(style="datum.r + (datum.sp ? '|s' : '')")
    ).mark_line().encode(**{**line_encoding, **quiet})

    def reader_roof(prefix: str) -> Any:
        """The roof of the reader's mark where it is not the roof shown."""
        return vertices(
            ceilings.transform_filter(f"{prefix}_extra_on && datum.r == {prefix}_roof && {_SHOWN}")
            .transform_calculate(top="datum.peak", style=f"{prefix}_roof")
        ).mark_line().encode(**{**line_encoding, **quiet})

    ridges = current.transform_filter(_HAS_SHOWN).transform_calculate(
        ridge_text=formats.intensity_expr("datum.ridge_now", _OP), peak_text=formats.rate_expr("datum.peak_now", _OP),
        roof_text="roof_terms[datum.p][precision]",
        bandwidth_text=formats.si_expr("datum.bw", "B/s"),
    ).mark_point(filled=True, size=70, opacity=1, strokeWidth=1.5, style="marker").encode(
        x=alt.X("ridge_now:Q"), y=alt.Y("peak_now:Q"), color="p:N",
        tooltip=[name_tip, alt.Tooltip("ridge_text:N", title="Ridge point"),
                 alt.Tooltip("roof_text:N", title="Roof"), alt.Tooltip("peak_text:N", title="Peak"),
                 alt.Tooltip("bandwidth_text:N", title="Memory bandwidth")],
    )

    # The readout, once the reader moves it: a dot on each visible ceiling at the reader's
    # intensity, a rule from the axis up to the lowest of them, and its value in the top band.
    readout_points = current.transform_filter(f"{_READOUT_SHOWN} && {_HAS_SHOWN}").transform_calculate(
        x=_AT, y=f"min(datum.peak_now, datum.bw * {_AT})").transform_calculate(readout_text=ROW_TEXTS["readout_text"])
    one_row = alt.Chart(alt.NamedData(name="one_row"))
    side = f"{_AT} > sqrt(x_domain[0] * x_domain[1]) ? 'right' : 'left'"
    readout = [
        readout_points.transform_aggregate(y="min(y)", x="min(x)")
        # aria=False: a bare line; the readout under the chart says what it marks.
        .mark_rule(strokeWidth=1, strokeDash=[3, 2], style="readout", aria=False)
        .encode(x=alt.X("x:Q"), y=alt.Y("y:Q"), y2=alt.value(alt.ExprRef(f"height - {KERNEL_BAND_PX}"))),
        # aria=False: empty until the reader moves the readout, and then the readout states it in words.
        readout_points.mark_point(filled=True, size=45, opacity=1, strokeWidth=1, style="marker", aria=False)
        .encode(x=alt.X("x:Q"), y=alt.Y("y:Q"), color="p:N", tooltip=[name_tip]),
        one_row.transform_filter(_READOUT_SHOWN)
        .mark_text(baseline="middle", fontSize=12, style="reader-label", align=alt.ExprRef(side), aria=False,
                   dx=alt.ExprRef(f"({side}) == 'right' ? 6 : -6"), text=alt.ExprRef("'at ' + readout_label"))
        .encode(x=alt.X(datum=alt.ExprRef(_AT), type="quantitative"), y=alt.value(READOUT_LABEL_Y_PX)),
        one_row.transform_filter(_READOUT_SHOWN)
        .mark_rule(strokeWidth=1, strokeDash=[3, 2], style="readout", aria=False)
        .encode(x=alt.X(datum=alt.ExprRef(_AT), type="quantitative"), y=alt.value(READOUT_LABEL_Y_PX + 7),
                y2=alt.value(READOUT_LABEL_Y_PX + 14)),
    ]

    # Kernels: a hollow square where each meets its roof on each GPU shown, and one number per
    # cluster of close kernels in a band along the bottom of the plot, joined to the highest of
    # its squares by a faint rule. Clusters lie apart (label_clusters), so no two numbers meet.
    # Their key is a second legend ("1 GEMM 8192×8192×8192 bf16"), so a still names them too.
    kernel_rows = alt.Chart(alt.NamedData(name="kernels")).transform_filter(
        f"indexof(datum.m, ' ' + {_KERNEL_MODE} + ' ') >= 0 && {_SHOWN}"
    ).transform_calculate(
        name="names[datum.p]", kk="'' + datum.k", key=f"kernel_keys[{_KERNEL_MODE}]['' + datum.k]",
        meets=(f"(datum.b == 'memory' ? 'memory' : 'compute') + '-bound, ' "
               f"+ {formats.rate_expr('datum.y', _op_expr('datum.r'))} + ' on ' + roof_terms[datum.p][datum.r] "
               "+ (datum.sp ? ', 2:4 sparse' : '')"),
        time=formats.time_us_expr("datum.t"),
    )
    kernel_key = alt.Shape(
        "kk:N", scale=alt.Scale(domain=alt.ExprRef("kernel_nums"), range=["square"]),
        legend=alt.Legend(orient="bottom", direction="horizontal", title=None, symbolType="square",
                          symbolFillColor="transparent", symbolStrokeWidth=2,
                          # One column: an entry whose label grows (" (not drawn …)") keeps its place.
                          columns=1, values=alt.ExprRef(KEY_VALUES_EXPR),
                          labelLimit=alt.ExprRef(f"width - {LEGEND_SYMBOL_PX}"), labelExpr=KERNEL_KEY_LABEL_EXPR),
    )
    clusters = kernel_rows.transform_aggregate(y="max(y)", groupby=["c", "cx", "ct"])
    kernel_marks = [
        clusters.mark_rule(strokeDash=[1, 3], strokeWidth=1, style="readout", aria=False)
        .encode(x=alt.X("cx:Q"), y=alt.Y("y:Q"), y2=alt.value(alt.ExprRef(f"height - {KERNEL_BAND_PX}"))),
        kernel_rows.mark_point(filled=False, size=60, strokeWidth=2, opacity=1)
        .encode(x=alt.X("x:Q"), y=alt.Y("y:Q"), color="p:N", shape=kernel_key,
                tooltip=[alt.Tooltip("key:N", title="Kernel"), name_tip, alt.Tooltip("meets:N", title="Meets"),
                         alt.Tooltip("time:N", title="Time at that rate")]),
        clusters.mark_text(baseline="bottom", dy=-3, fontSize=12, fontWeight=600, style="kernel-label")
        .encode(x=alt.X("cx:Q"), y=alt.value(alt.ExprRef("height")), text="ct:N"),
    ]

    # The reader's marks (their kernel, the batch GEMM): a filled shape on each GPU shown, at the
    # mark's roof, labelled in a band of its own along the top.
    def reader_marks(prefix: str, shape: str, label_y_px: int) -> list[Any]:
        on = f"{prefix}_on"
        rows = ceilings.transform_filter(f"{on} && datum.r == {prefix}_roof && {_SHOWN}").transform_calculate(
            name="names[datum.p]", x=f"{prefix}_x", y=f"min(datum.peak, datum.bw * {prefix}_x)",
        ).transform_calculate(**{f"{prefix}_text": ROW_TEXTS[f"{prefix}_text"],
                                 **({"cross_text": ROW_TEXTS["cross_text"]} if prefix == "batch" else {})})
        mark_side = f"{prefix}_x > sqrt(x_domain[0] * x_domain[1]) ? 'right' : 'left'"
        return [
            # aria=False: the readout under the chart states these marks in words (and they start hidden).
            rows.mark_point(shape=shape, filled=True, size=110, opacity=1, strokeWidth=1.5, style="marker", aria=False)
            .encode(x=alt.X("x:Q"), y=alt.Y("y:Q"), color="p:N", tooltip=[name_tip]),
            one_row.transform_filter(on)
            .mark_text(baseline="middle", fontSize=12, style="reader-label", align=alt.ExprRef(mark_side), aria=False,
                       dx=alt.ExprRef(f"({mark_side}) == 'right' ? 6 : -6"),
                       limit=alt.ExprRef(f"({mark_side}) == 'right' ? scale('x', {prefix}_x) - 8 "
                                         f": width - scale('x', {prefix}_x) - 8"),
                       text=alt.ExprRef(f"{prefix}_label"))
            .encode(x=alt.X(datum=alt.ExprRef(f"{prefix}_x"), type="quantitative"), y=alt.value(label_y_px)),
        ]

    # The roof shown, as a line above the plot (a title's subtitle cannot follow a param).
    subtitle = (
        one_row
        .mark_text(align="left", baseline="bottom", fontSize=12, style="subtitle", text=alt.ExprRef(SUBTITLE_EXPR),
                   limit=alt.ExprRef("width"))
        .encode(x=alt.value(0), y=alt.value(-8))
    )
    chart = alt.layer(
        subtitle, lines, extras, reader_roof("own"), reader_roof("batch"), *readout, ridges,
        *(kernel_marks if "kernels" in variant else []),
        *reader_marks("own", "diamond", OWN_LABEL_Y_PX), *reader_marks("batch", "triangle-up", BATCH_LABEL_Y_PX),
    ).add_params(*_params_structure(alt)).properties(
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
    THEME.colours_of(theme)  # a bad theme is refused here
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


def _x_domain(rows: Sequence[dict[str, Any]], intensities: Sequence[float]) -> tuple[float, float]:
    """Whole decades that hold every ridge of every roof (dense and sparse, so switching never
    rescales the x axis), every kernel in every mode, and element-wise intensities at the low end."""
    low = min([DEFAULT_MIN_INTENSITY_FLOP_PER_BYTE, *(r["ridge"] for r in rows)]
              + [i / KERNEL_MARGIN for i in intensities])
    high = max([RIDGE_HEADROOM * r["sridge"] for r in rows] + [i * KERNEL_MARGIN for i in intensities])
    return _decade_floor(low), _decade_ceil(high)


def _y_domains(rows: Sequence[dict[str, Any]], kernel_rows: Sequence[dict[str, Any]], roofs: Sequence[str],
               x_min: float) -> dict[str, list[float]]:
    """Per roof: from the slowest sloped line at the axis start (and below the lowest kernel
    mark, clear of the band of numbers) to room above its highest sparse peak and every kernel
    mark and roof drawn beside it. A switch of precision may rescale the y axis; the sparsity
    toggle and the kernels' mode never do."""
    y_min = _decade_floor(min([r["bw"] * x_min for r in rows] + [r["y"] / 2 for r in kernel_rows]))
    kernel_top = max((r["y"] for r in kernel_rows), default=0.0)
    roof_tops = {r["r"]: 0.0 for r in rows}
    for r in rows:
        roof_tops[r["r"]] = max(roof_tops[r["r"]], r["speak"])
    return {roof: [y_min, max(roof_tops[roof], kernel_top) * TOP_HEADROOM] for roof in roofs}


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
    """Per roof and mode (``"tensor:fp8|s"``), each preset's legend prefix: its ridge, or why it
    draws nothing."""
    legend: dict[str, dict[str, str]] = {}
    for roof in roofs:
        for mode, field in (("d", "ridge"), ("s", "sridge")):
            texts = {r["p"]: f"ridge {intensity_label(r[field])}" for r in rows if r["r"] == roof}
            texts.update({i: f"not drawn: {text}" for i, text in missing.get(roof, {}).items()})
            legend[f"{roof}|{mode}"] = texts
    return legend


def _has_sparse(rows: Sequence[dict[str, Any]], roof: str) -> bool:
    return any(r["r"] == roof and r["speak"] != r["peak"] for r in rows)


def _mode_words(rows: Sequence[dict[str, Any]], roofs: Sequence[str]) -> dict[str, list[str]]:
    """Per roof, what its dense and its sparse state are called: a vector roof, or one no GPU
    has a 2:4 path for, stays dense with the box ticked, and says so (never "sparse")."""
    words = {}
    for roof in roofs:
        if _has_sparse(rows, roof):
            sparse = ", 2:4 sparse where supported"
        elif roof.startswith("vector:"):
            sparse = ", dense (vector units have no 2:4 mode)"
        else:
            sparse = ", dense (no 2:4 path on these GPUs)"
        words[roof] = [", dense", sparse]
    return words


def _subtitles(rows: Sequence[dict[str, Any]], roofs: Sequence[str]) -> dict[str, list[str]]:
    """Per roof and mode, the line above the plot, wide and narrow: the roof shown."""
    subtitles = {}
    words = _mode_words(rows, roofs)
    for roof in roofs:
        for index, mode in enumerate(("d", "s")):
            word = words[roof][index]
            integer = " · integer OP/s, OP/byte" if roof == INT8_ROOF else ""
            short_word = word.split(" (")[0].replace(" where supported", "")
            subtitles[f"{roof}|{mode}"] = [roof_name(roof) + word + integer + " · ridge points in the legend",
                                           roof_name(roof) + short_word + integer]
    return subtitles


def _padded(texts: dict[str, str]) -> dict[str, str]:
    """Narrow labels, each padded with blank lines to as many lines as the longest: an entry of a
    legend whose values change keeps its height whichever value it shows (Vega reuses an entry's
    place by its index and does not measure it again when its label grows a line)."""
    lines = max((text.count("\n") + 1 for text in texts.values()), default=1)
    return {key: text + "\n " * (lines - text.count("\n") - 1) for key, text in texts.items()}


def _style_names() -> dict[str, list[str]]:
    """The line key's labels, wide and wrapped for a narrow plot, one per style (the same in
    every state: the subtitle names the roof shown)."""
    wide = {SHOWN_STYLE: "the roof shown", DENSE_STYLE: "dense roof behind its 2:4 sparse one"}
    for roof in ALL_ROOFS:
        wide[roof] = f"{roof_name(roof)}: roof of marks on it"
        wide[f"{roof}|s"] = f"{roof_name(roof)} 2:4: roof of marks on it"
    narrow = _padded({style: narrow_lines(text) for style, text in wide.items()})
    return {style: [text, narrow[style]] for style, text in wide.items()}


NOT_DRAWN_KEY = " (not drawn here)"


def _narrow_keys(keys: dict[str, dict[str, str]], flagged: set[str]) -> dict[str, dict[str, list[str]]]:
    """Per mode and kernel, its key wrapped for a narrow plot, drawn and not drawn, each padded
    with blank lines to as many lines as the longest of its forms in any mode takes (only the
    kernels some state leaves undrawn, ``flagged``, have a longer "not drawn" form)."""
    wrapped = {mode: {n: (narrow_lines(text).split("\n"),
                          narrow_lines(text + (NOT_DRAWN_KEY if n in flagged else "")).split("\n"))
                      for n, text in by_number.items()} for mode, by_number in keys.items()}
    longest: dict[str, int] = {}
    for by_number in wrapped.values():
        for n, forms in by_number.items():
            longest[n] = max(longest.get(n, 0), *(len(form) for form in forms))
    return {mode: {n: ["\n".join(form + [" "] * (longest[n] - len(form))) for form in forms]
                   for n, forms in by_number.items()} for mode, by_number in wrapped.items()}


def _key_values(data: _KernelData, drawn: dict[str, dict[str, list[str]]], roofs: Sequence[str],
                ids: Sequence[str], has_roof: dict[str, list[str]]) -> dict[str, list[str]]:
    """The kernels' key entries per state ("own|tensor:fp8|h100"): each kernel as
    ``"number|x"``, ``x`` where no GPU shown draws it."""
    values: dict[str, list[str]] = {}
    numbers = list(data.keys.get("own", {}))
    for kmode, roof, choice in itertools.product(KERNEL_MODES, roofs, (ALL_PRESETS, *ids)):
        shown = has_roof[roof] if choice == ALL_PRESETS else [i for i in has_roof[roof] if i == choice]
        entries = []
        for n in numbers:
            where = drawn[f"{kmode}|{roof}"][n]
            # Where no GPU shown has the roof at all, the legend says so; the key does not repeat it.
            missing = bool(shown) and (not where if choice == ALL_PRESETS else choice not in where)
            entries.append(f"{n}|{'x' if missing else ''}")
        values[f"{kmode}|{roof}|{choice}"] = entries
    return values


def _short_missing(text: str) -> str:
    """A narrow legend's form of "not drawn: no FP8 path": the path's name is in the subtitle."""
    return "not drawn: no path" if text.startswith("not drawn: no ") else "not drawn: not given"


def roofline_spec(
    presets: Iterable[Preset],
    *,
    kernels: Iterable[Kernel] = (),
    sparsity: bool = False,
    precision: str = "bf16",
    title: str | None = None,
    theme: Theme = "light",
    readout_intensity_flop_per_byte: float | None = None,
    palette_ids: Iterable[str] | None = None,
    cached: bool = True,
) -> dict[str, Any]:
    """The roofline explorer as a Vega-Lite dict: :data:`GRAMMAR` with these presets' data.

    ``presets`` are drawn in the order given. ``precision`` picks the roof the chart opens
    on (a precision name, ``bf16`` by default, or a roof id such as ``vector:fp32``);
    ``sparsity`` is the toggle's initial state. ``kernels`` become numbered marks where each
    meets its roof (module docstring). ``readout_intensity_flop_per_byte`` sets where the
    readout opens (default: between the presets' ridge points; it is drawn once the reader
    moves it). ``palette_ids`` are the ids of every preset of the site, which the GPUs'
    colours are assigned over (:func:`ainotes.charts.grammar.gpu_colour_slots`; default: these
    presets). ``theme`` is ``"light"`` (Material's default scheme) or ``"dark"`` (its slate
    scheme): only the config differs. ``cached=False`` builds the grammar with altair afresh.
    """
    presets, kernels = tuple(presets), tuple(kernels)
    _check_inputs(presets, kernels, title, theme)
    rows, missing = _ceiling_rows(presets)
    roofs = [roof_id(u, p) for u, p in ROOF_ORDER if any(r["r"] == roof_id(u, p) for r in rows)]
    opening = _opening_roof(precision, roofs)
    typed = _mode_kernels(kernels, roofs) if kernels else {}
    x_min, x_max = _x_domain(rows, [k.intensity_flop_per_byte for ks in typed.values() for k, _ in ks])
    data = _KernelData(kernels, presets, roofs, x_min, x_max)
    by_key = {(r["p"], r["r"]): r for r in rows}
    extra_rows, line_keys, drawn = _extra_roofs(data, presets, by_key, roofs)
    y_domains = _y_domains(rows, data.rows, roofs, x_min)
    names = dict(zip((p.id for p in presets), _display_names(presets), strict=True))
    slots = gpu_colour_slots([*(palette_ids or ()), *names])
    has_roof = {roof: [r["p"] for r in rows if r["r"] == roof] for roof in ALL_ROOFS}
    key_values = _key_values(data, drawn, roofs, [p.id for p in presets], has_roof) if kernels else {}
    narrow_keys = _narrow_keys(data.keys, {v.split("|")[0] for vs in key_values.values() for v in vs
                                           if v.endswith("|x")})
    legend_ridge = _legend_ridges(rows, missing, roofs)
    params = {
        "precision": opening, "preset": ALL_PRESETS, "sparsity": bool(sparsity), "kmode": "own",
        "intensity": _readout_at(readout_intensity_flop_per_byte, rows, x_min, x_max),
        "intensity_opening": _readout_at(readout_intensity_flop_per_byte, rows, x_min, x_max),
        "x_domain": [x_min, x_max], "y_domains": y_domains, "x_ticks": _decades(x_min, x_max),
        "y_ticks": _decades(min(low for low, _ in y_domains.values()), max(top for _, top in y_domains.values())),
        "colour_domain": gpu_colour_domain({i: slots[i] for i in names}), "gpu_ids": list(names),
        "names": names, "narrow_names": _padded({i: narrow_lines(name) for i, name in names.items()}),
        # The key's scale: the kernels' numbers (the marks') and every entry value (the key's).
        "kernel_nums": [*data.keys.get("own", {}), *sorted({v for vs in key_values.values() for v in vs})] or ["1"],
        "kernel_keys": data.keys, "narrow_keys": narrow_keys, "key_values": key_values,
        "roof_names": {roof: roof_name(roof) for roof in ALL_ROOFS},
        "roof_terms": {p.id: {roof: roof_term(roof, p) for roof in ALL_ROOFS} for p in presets},
        "mode_words": _mode_words(rows, ALL_ROOFS), "subtitles": _subtitles(rows, roofs),
        "legend_ridge": legend_ridge,
        "legend_ridge_narrow": {mode: {i: text if text.startswith("ridge ") else _short_missing(text)
                                       for i, text in texts.items()} for mode, texts in legend_ridge.items()},
        "has_roof": has_roof,
        "missing": {roof: {p.id: missing.get(roof, {}).get(p.id, "") for p in presets} for roof in ALL_ROOFS},
        "ceil": {p.id: {r["r"]: [r["peak"], r["speak"], r["bw"]] for r in rows if r["p"] == p.id} for p in presets},
        "line_keys": line_keys, "style_names": _style_names(),
        # Per roof shown and roof of a reader's mark: the GPUs that draw both (the mark's roof beside).
        "both_roofs": {shown: {other: [i for i in names if (i, shown) in by_key and (i, other) in by_key]
                               for other in ALL_ROOFS} for shown in roofs},
    }
    datasets: dict[str, list[dict[str, Any]]] = {"ceilings": rows, "one_row": [{}], "extra_roofs": extra_rows}
    if kernels:
        datasets["kernels"] = data.rows
    spec = GRAMMAR.spec(
        datasets=datasets,
        params=params,
        variant=("kernels",) if kernels else (),
        config=THEME.config(theme),
        top={
            "title": {"text": title if title is not None else DEFAULT_TITLE, "limit": {"expr": "width + 60"}},
            # The chart's accessible name and short text alternative (Vega puts it in the SVG's aria-label).
            "description": ("Roofline chart on log-log axes: attainable FLOP/s against arithmetic intensity for "
                            f"{', '.join(names.values())}."),
            # What the page around the chart needs (charts/explorer.py), passed through to Vega untouched.
            "usermeta": {"ainotes": {
                "still": still_plot_size(STATIC_WIDTH_PX, STATIC_HEIGHT_PX, params),
                "kind": "roofline", "roofs": roofs, "missing": missing,
                "roof_labels": {roof: roof_option_label(roof, presets) for roof in roofs},
                "kernels": kernel_table_rows(kernels, data),
                "dtypes": {d: {"bytes": DTYPE_BYTES[d], "roof": r} for d, r in dtype_roofs().items()},
            }},
        },
        cached=cached,
    )
    # The standalone page's own inputs list this chart's roofs and presets.
    for signal in spec["params"]:
        if signal["name"] == "precision":
            signal["bind"].update(options=roofs, labels=[roof_option_label(r, presets) for r in roofs])
        elif signal["name"] == "preset":
            signal["bind"].update(options=[ALL_PRESETS, *names], labels=["All", *names.values()])
        elif signal["name"] == "kmode" and not kernels:
            del signal["bind"]  # nothing to type without kernels
    return spec


def kernel_table_rows(kernels: Sequence[Kernel], data: _KernelData) -> list[dict[str, Any]]:
    """Per kernel: its figures, and per mode key its name and intensity in that mode and why it
    has no roof on a preset (the table's other cells are the ``kernels`` rows' ``tx``)."""
    return [{
        "n": index + 1, "label": kernel.label, "spec": kernel.spec,
        "flops": kernel.flops, "bytes": kernel.bytes_moved, "intensity": kernel.intensity_flop_per_byte,
        "modes": {mode: {"label": typed[index][1], "intensity": typed[index][0].intensity_flop_per_byte,
                         "intensity_text": formats.intensity_text(typed[index][0].intensity_flop_per_byte),
                         "why": data.why.get(mode, {}).get(str(index + 1), {})}
                  for mode, typed in data.modes.items()},
    } for index, kernel in enumerate(kernels)]


def caption_html(presets: Iterable[Preset], sparsity: bool) -> str:
    """A short HTML caption: what the chart assumes, what its dashed lines are, and what the
    sparsity toggle does and does not mean."""
    presets = tuple(presets)
    without_sparse_path = [p.name for p in presets if roofline.ceiling(p, True).peak_flops_per_s
                           == roofline.ceiling(p, False).peak_flops_per_s]
    parts = [
        "Each solid line is one GPU's ceiling at the chosen precision, min(peak, bandwidth × intensity), on "
        "log-log axes. Peak is the dense matrix-unit rate of that precision (tensor cores, MXUs; FP32 "
        "accumulation for FP16 and BF16), or the vector-unit rate for the FP32 and FP64 vector paths; "
        "bandwidth is the peak device-memory figure; the dot where the two lines meet is the ridge point, "
        "peak ÷ bandwidth, given in the legend. A GPU without a path at that precision, or whose preset "
        "does not give one, draws nothing, and its legend entry says which.",
        "Numbered squares are the kernels listed below the chart, each where it meets the roof of its own data "
        "type, or, with \"Kernels re-typed to the precision shown\", the same kernel in that type (its bytes "
        "change with the type). Where a mark's roof is not the one shown and the mark would not lie on a line "
        "drawn, that roof is drawn beside it, thinner and dashed, and the line key names it.",
        "The sparsity box switches to the vendor's 2:4 structured-sparse rate: the flat ceiling doubles and the "
        "ridge moves to twice the intensity, while bandwidth and the sloped line stay as they are; the dense roof "
        "stays behind, dashed. It applies only to weights pruned to that pattern on a path that supports it, "
        "not to any model with many zeros, and a dense kernel still meets the dense roof.",
    ]
    if without_sparse_path:
        listed = ", ".join(html.escape(name) for name in without_sparse_path)
        parts.append(f"No supported sparse path in the preset, so the line does not move: {listed}.")
    if sparsity:
        parts.append("The chart opens with the sparse rate switched on.")
    parts.append(
        "INT8 rates count integer operations (OP/s). A simplification for intuition, not a benchmark: real "
        "kernels, and work off the matrix units, land below the lines."
    )
    return " ".join(parts)


# -- stills ---------------------------------------------------------------------------------------


def _opening_styles(params: dict[str, Any]) -> list[tuple[str, str]]:
    """The line key's entries as a chart opens (style, label wrapped for a narrow plot)."""
    mode = f"{params['precision']}|{'s' if params['sparsity'] else 'd'}"
    styles = params["line_keys"].get(f"{params['kmode']}|{mode}|{ALL_PRESETS}", [SHOWN_STYLE])
    return [(s, params["style_names"][s][1]) for s in styles]


def _still_frame_height(plot_width: int, params: dict[str, Any]) -> int:
    """What the title, subtitle, x axis and legends take above and below a still's plot (px) at
    ``plot_width``, for the chart whose param values are ``params``: the legends' columns and
    lines follow the plot width as the grammar's expressions do."""
    narrow = plot_width < NARROW_PLOT_PX
    gpus = params["gpu_ids"]
    keys = list(params["kernel_keys"].get("own", {}).values())
    narrow_keys = [forms[0] for forms in params["narrow_keys"].get("own", {}).values()]  # every form as tall
    styles = _opening_styles(params)
    gpu_columns = 1 if plot_width < WIDE_LEGEND_PLOT_PX else 2
    frame = STILL_FRAME_HEIGHT_PX + STILL_GPU_ROW_PX * (math.ceil(len(gpus) / gpu_columns) - 1)
    frame += STILL_STYLE_ROW_PX * (len(styles) - 1)  # the line key: one entry a row
    if narrow:  # one entry a row: each adds its wrapped lines (a GPU's ridge is one more)
        frame += STILL_GPU_LINE_PX * sum(params["narrow_names"][g].count("\n") + 1 for g in gpus)
        frame += sum(math.floor(STILL_KEY_LINE_PX * key.count("\n")) for key in narrow_keys)
        frame += STILL_STYLE_LINE_PX * sum(label.count("\n") for _, label in styles)
    if keys:
        frame += STILL_KEY_FIRST_ROW_PX + STILL_KEY_ROW_PX * (len(keys) - 1)  # one kernel a row
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
    a phone shows before (or without) the script: a plot at least :data:`NARROW_STILL_PLOT_HEIGHT_PX`
    tall and its legends below it, as tall as they need."""
    params = {param["name"]: param.get("value") for param in spec.get("params", [])}
    meta = spec["usermeta"]["ainotes"]
    # The page's box on a phone takes this picture's proportions, and the live view fills the box:
    # the plot gets the room the line key may take in other states, so it never shrinks below
    # NARROW_STILL_PLOT_HEIGHT_PX as the reader moves the selects.
    opening = len(_opening_styles(params))
    most = max([len(styles) for styles in params["line_keys"].values()] + [opening]) + 2  # + the reader's two
    lines = max(text.count("\n") for _, text in params["style_names"].values()) if params["style_names"] else 0
    slack = (most - opening) * (STILL_STYLE_ROW_PX + STILL_STYLE_LINE_PX * lines)
    plot = NARROW_STILL_PLOT_HEIGHT_PX + slack
    still = {"width": NARROW_STATIC_WIDTH_PX - STILL_FRAME_WIDTH_PX, "height": plot}
    height = plot + _still_frame_height(still["width"], params)
    return {**spec, "width": NARROW_STATIC_WIDTH_PX, "height": height,
            "usermeta": {**spec["usermeta"], "ainotes": {**meta, "still": still}}}


def spec_meta(spec: dict[str, Any]) -> dict[str, Any] | None:
    """What the page needs beyond the picture (roofs, kernels' cells, dtypes), or None if not a roofline."""
    meta = spec.get("usermeta", {}).get("ainotes")
    return meta if isinstance(meta, dict) and meta.get("kind") == "roofline" else None
