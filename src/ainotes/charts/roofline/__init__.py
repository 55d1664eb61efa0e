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

from ainotes.charts.roofline.colours import (
    THEME,
    dark_svg,
    dark_vega,
    retheme,
)
from ainotes.charts.roofline.data import (
    KernelData,
    ceiling_rows,
    extra_roofs,
    kernel_cell_text,
    label_clusters,
    mode_kernels,
    retyped,
)
from ainotes.charts.roofline.expressions import (
    MARK_EXPRS,
    ROW_TEXTS,
    gemm_bytes,
    gemm_flops,
    op_expr,
)
from ainotes.charts.roofline.grammar import (
    GPU_LEGEND_LABEL_EXPR,
    GPU_LEGEND_VALUES_EXPR,
    GRAMMAR,
    KERNEL_KEY_LABEL_EXPR,
    KEY_VALUES_EXPR,
    STYLE_LABEL_EXPR,
    STYLE_VALUES_EXPR,
    SUBTITLE_EXPR,
)
from ainotes.charts.roofline.names import (
    ALL_PRESETS,
    ALL_ROOFS,
    BATCH_FFN_FACTOR,
    BATCH_LABEL_Y_PX,
    DEFAULT_D_MODEL,
    DEFAULT_MIN_INTENSITY_FLOP_PER_BYTE,
    DEFAULT_ROOF,
    DEFAULT_TITLE,
    DENSE_STYLE,
    INT8_ROOF,
    KERNEL_BAND_PX,
    KERNEL_MARGIN,
    KERNEL_MODE_LABELS,
    KERNEL_MODES,
    LABEL_CHAR_PX,
    LABEL_GAP_PX,
    LEGEND_SYMBOL_PX,
    NARROW_LINE_CHARS,
    NARROW_PLOT_PX,
    NARROW_STATIC_WIDTH_PX,
    NARROW_STILL_PLOT_HEIGHT_PX,
    NARROWEST_PLOT_PX,
    ON_LINE_TOLERANCE,
    OWN_LABEL_Y_PX,
    READOUT_LABEL_Y_PX,
    RIDGE_HEADROOM,
    ROOF_ORDER,
    SHOWN_STYLE,
    STATIC_HEIGHT_PX,
    STATIC_WIDTH_PX,
    STILL_FRAME_HEIGHT_PX,
    STILL_FRAME_WIDTH_PX,
    STILL_GPU_LINE_PX,
    STILL_GPU_ROW_PX,
    STILL_KEY_FIRST_ROW_PX,
    STILL_KEY_LINE_PX,
    STILL_KEY_ROW_PX,
    STILL_MIN_PLOT_HEIGHT_PX,
    STILL_STYLE_LINE_PX,
    STILL_STYLE_ROW_PX,
    STYLE_DASHES,
    STYLE_DOMAIN,
    TERA,
    TICKS_ABOVE,
    WIDE_LEGEND_PLOT_PX,
    display_names,
    dtype_roofs,
    flops_per_s_expr,
    intensity_expr,
    intensity_label,
    missing_text,
    narrow_lines,
    op_word,
    precision_name,
    roof_dtype,
    roof_id,
    roof_name,
    roof_option_label,
    roof_term,
)
from ainotes.charts.roofline.spec import (
    NOT_DRAWN_KEY,
    caption_html,
    kernel_table_rows,
    roofline_spec,
)
from ainotes.charts.roofline.stills import (
    narrow_static,
    spec_meta,
    still_plot_size,
)

__all__ = [
    "ALL_PRESETS",
    "ALL_ROOFS",
    "BATCH_FFN_FACTOR",
    "BATCH_LABEL_Y_PX",
    "DEFAULT_D_MODEL",
    "DEFAULT_MIN_INTENSITY_FLOP_PER_BYTE",
    "DEFAULT_ROOF",
    "DEFAULT_TITLE",
    "DENSE_STYLE",
    "GPU_LEGEND_LABEL_EXPR",
    "GPU_LEGEND_VALUES_EXPR",
    "GRAMMAR",
    "INT8_ROOF",
    "KERNEL_BAND_PX",
    "KERNEL_KEY_LABEL_EXPR",
    "KERNEL_MARGIN",
    "KERNEL_MODES",
    "KERNEL_MODE_LABELS",
    "KEY_VALUES_EXPR",
    "LABEL_CHAR_PX",
    "LABEL_GAP_PX",
    "LEGEND_SYMBOL_PX",
    "MARK_EXPRS",
    "NARROWEST_PLOT_PX",
    "NARROW_LINE_CHARS",
    "NARROW_PLOT_PX",
    "NARROW_STATIC_WIDTH_PX",
    "NARROW_STILL_PLOT_HEIGHT_PX",
    "NOT_DRAWN_KEY",
    "ON_LINE_TOLERANCE",
    "OWN_LABEL_Y_PX",
    "READOUT_LABEL_Y_PX",
    "RIDGE_HEADROOM",
    "ROOF_ORDER",
    "ROW_TEXTS",
    "SHOWN_STYLE",
    "STATIC_HEIGHT_PX",
    "STATIC_WIDTH_PX",
    "STILL_FRAME_HEIGHT_PX",
    "STILL_FRAME_WIDTH_PX",
    "STILL_GPU_LINE_PX",
    "STILL_GPU_ROW_PX",
    "STILL_KEY_FIRST_ROW_PX",
    "STILL_KEY_LINE_PX",
    "STILL_KEY_ROW_PX",
    "STILL_MIN_PLOT_HEIGHT_PX",
    "STILL_STYLE_LINE_PX",
    "STILL_STYLE_ROW_PX",
    "STYLE_DASHES",
    "STYLE_DOMAIN",
    "STYLE_LABEL_EXPR",
    "STYLE_VALUES_EXPR",
    "SUBTITLE_EXPR",
    "TERA",
    "THEME",
    "TICKS_ABOVE",
    "WIDE_LEGEND_PLOT_PX",
    "KernelData",
    "caption_html",
    "ceiling_rows",
    "dark_svg",
    "dark_vega",
    "display_names",
    "dtype_roofs",
    "extra_roofs",
    "flops_per_s_expr",
    "gemm_bytes",
    "gemm_flops",
    "intensity_expr",
    "intensity_label",
    "kernel_cell_text",
    "kernel_table_rows",
    "label_clusters",
    "missing_text",
    "mode_kernels",
    "narrow_lines",
    "narrow_static",
    "op_expr",
    "op_word",
    "precision_name",
    "retheme",
    "retyped",
    "roof_dtype",
    "roof_id",
    "roof_name",
    "roof_option_label",
    "roof_term",
    "roofline_spec",
    "spec_meta",
    "still_plot_size",
]
