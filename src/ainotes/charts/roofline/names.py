"""The roofline chart's vocabulary: its constants (sizes, styles, roofs), the names of roofs and
precisions, and the formats it shares with its Vega expressions."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

from ainotes.charts import formats
from ainotes.core import precision as precision_table
from ainotes.core import roofline
from ainotes.core.hardware import NEUTRAL_UNIT_TERMS, Preset
from ainotes.core.kernels import DTYPE_BYTES, gemm

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
# The y ticks run this factor past the highest mark (the axis above it holds the band of labels).
TICKS_ABOVE = 1000.0

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
# Half a label's height (12 px text) and half the largest marker's (the reader's diamond), plus a gap:
# the highest mark stands this far below the lowest label row in use (grammar.Y_DOMAIN_EXPR).
LABEL_HALF_PX = 7
MARK_CLEARANCE_PX = 9
# Labels of the readout and the reader's marks stay this far inside the plot's sides.
LABEL_INSET_PX = 3
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


def missing_text(status: str, roof: str) -> str:
    """Why a preset has no line for ``roof``: ``"no FP8 path"``, ``"FP8 rate not given"``."""
    unit, precision = _split_roof(roof)
    label = precision_name(precision)
    kind = "" if unit == "tensor" else " vector"
    if status == "none":
        return f"no {label}{kind} path"
    return f"{label}{kind} rate not given"


def display_names(presets: Sequence[Preset]) -> list[str]:
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


