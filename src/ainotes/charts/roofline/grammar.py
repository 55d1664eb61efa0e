"""The roofline chart's structure, built once with altair (:class:`~ainotes.charts.grammar.Grammar`):
its params, scales, legends and layers, all fed by named datasets and params."""

from __future__ import annotations

from typing import Any

from ainotes.base.formula import Expr
from ainotes.charts import formats
from ainotes.charts.grammar import Grammar
from ainotes.charts.roofline import expressions, names
from ainotes.charts.roofline.expressions import MARK_EXPRS, ROW_TEXTS, op_expr
from ainotes.charts.roofline.names import (
    ALL_PRESETS,
    BATCH_LABEL_Y_PX,
    DEFAULT_D_MODEL,
    DEFAULT_ROOF,
    DENSE_STYLE,
    KERNEL_BAND_PX,
    KERNEL_MODE_LABELS,
    KERNEL_MODES,
    LABEL_HALF_PX,
    LABEL_INSET_PX,
    LEGEND_SYMBOL_PX,
    MARK_CLEARANCE_PX,
    NARROW_PLOT_PX,
    OWN_LABEL_Y_PX,
    READOUT_LABEL_Y_PX,
    SHOWN_STYLE,
    STATIC_HEIGHT_PX,
    STATIC_WIDTH_PX,
    STYLE_DASHES,
    STYLE_DOMAIN,
    WIDE_LEGEND_PLOT_PX,
)
from ainotes.core.kernels import LAUNCH_REMARK, below_launch

# -- the grammar: built once with altair ---------------------------------------------------------

# Expressions over the params, shared by the layers.
_VISIBLE = f"(preset == '{ALL_PRESETS}' || datum.p == preset)"
_HAS_SHOWN = "indexof(has_roof[precision], datum.p) >= 0"  # the GPU draws the roof shown
_SHOWN = f"({_VISIBLE} && {_HAS_SHOWN})"
_MODE_KEY = "precision + '|' + (sparsity ? 's' : 'd')"
_KERNEL_MODE = "(kmode == 'own' ? 'own' : precision)"


def _y_domain_expr() -> str:
    """The y scale's domain: from ``y_domains[precision]``'s floor to where its highest mark (that
    roof's, or the reader's marks' own roofs where they are on) stands below the band of labels
    along the top, in pixels at the plot's height, whatever that height.

    On a log axis of pixel height H over [lo, hi], a value v stands H·log(hi/v)/log(hi/lo) px below
    the top; for the highest mark t to stand ``band`` px down, log(hi/lo) = log(t/lo)·H/(H − band):
    hi = lo·exp(log(t/lo)·H/(H − band)). The band is the lowest label row in use, half a label and a
    marker's clearance (names.LABEL_HALF_PX, MARK_CLEARANCE_PX)."""
    lo = "y_domains[precision][0]"
    tops = ["y_domains[precision][1]", *(
        f"({prefix}_on && isValid(y_domains[{prefix}_roof]) ? y_domains[{prefix}_roof][1] : 0)"
        for prefix in ("own", "batch"))]
    row = (f"(batch_on ? {BATCH_LABEL_Y_PX} + {LABEL_HALF_PX} : own_on ? {OWN_LABEL_Y_PX} + {LABEL_HALF_PX} "
           f": readout_on ? {READOUT_LABEL_Y_PX} + {LABEL_HALF_PX} : 0)")
    band = f"({row} + {MARK_CLEARANCE_PX})"
    top = f"max({', '.join(tops)})"
    return f"[{lo}, {lo} * exp(log({top} / {lo}) * height / max(height - {band}, 1))]"


Y_DOMAIN_EXPR = _y_domain_expr()


def _label_dx(x_px: str, side: str) -> str:
    """A label's offset from the x it marks: 6 px to the side of its text, but never past the plot's
    edge (an intensity at the axis's end wrote "at 0.01 FLOP/B" across the y axis)."""
    return (f"({side}) == 'right' ? min(6, width - {LABEL_INSET_PX} - {x_px}) "
            f": max(-6, {LABEL_INSET_PX} - {x_px})")
_LINE_STATE = "kmode + '|' + precision + '|' + (sparsity ? 's' : 'd')"
_PEAK = "(sparsity ? datum.speak : datum.peak)"
_RIDGE = "(sparsity ? datum.sridge : datum.ridge)"
_AT = "clamp(toNumber(intensity), x_domain[0], x_domain[1])"
# The readout is drawn once a reader moves it: the page's script turns it on, and a page that binds
# the intensity to an input of Vega's own (the standalone embed) shows it as soon as the value moves.
# A still draws the chart as it opens, without it.
_READOUT_SHOWN = "(readout_on || toNumber(intensity) != intensity_opening)"
_OP = op_expr("precision")
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
    derived = [alt.param(name=name, expr=expr) for name, expr in MARK_EXPRS]
    return inputs + derived


class _Encodings:
    """The scales, legends and encodings the layers share."""

    def __init__(self, alt: Any):
        x_scale = alt.Scale(type="log", domain=alt.ExprRef("x_domain"), nice=False)
        y_scale = alt.Scale(type="log", domain=alt.ExprRef(Y_DOMAIN_EXPR), nice=False)
        x = alt.X("x:Q", scale=x_scale, title="Arithmetic intensity (FLOP/byte)",
                  axis=alt.Axis(values=alt.ExprRef("x_ticks"), labelExpr="format(datum.value, ',~g')",
                                labelOverlap="greedy", labelFlush=True))
        y = alt.Y("y:Q", scale=y_scale, title="Attainable rate",
                  axis=alt.Axis(values=alt.ExprRef("y_ticks"), labelExpr=formats.rate_expr("datum.value", _OP),
                                labelOverlap="greedy"))
        colour = alt.Color(
            "p:N", title=None, scale=alt.Scale(domain=alt.ExprRef("colour_domain")),
            legend=alt.Legend(
                orient="bottom", direction="horizontal", symbolType="stroke",
                values=alt.ExprRef(GPU_LEGEND_VALUES_EXPR),
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
        self.name_tip = alt.Tooltip("name:N", title="GPU")
        # The lines after the first take their legends from it (altair's encodings without legends).
        self.quiet = {
            "color": alt.Color("p:N", title=None, legend=None, scale=alt.Scale(domain=alt.ExprRef("colour_domain"))),
            "strokeDash": alt.StrokeDash("style:N", legend=None,
                                         scale=alt.Scale(domain=list(STYLE_DOMAIN),
                                                         range=[list(d) for d in STYLE_DASHES]))}
        self.line = {
            "x": x, "y": y, "color": colour, "strokeDash": dash, "detail": ["p:N", "style:N"],
            "tooltip": [self.name_tip], "order": "x:Q",
            # (strokeOpacity, not opacity: the legend would copy opacity into its symbols.)
            "strokeOpacity": alt.condition(f"datum.style == '{SHOWN_STYLE}'", alt.value(1),
                                           alt.value(0.85)),
            "strokeWidth": alt.condition(f"datum.style == '{SHOWN_STYLE}'", alt.value(2.5), alt.value(1.6)),
        }
        self.quiet_line = {**self.line, **self.quiet}


def _vertices(chart: Any) -> Any:
    """Three vertices per line, in x order: exact on log-log axes (``top``, ``bw`` per row)."""
    return (chart.transform_calculate(
        xs="[x_domain[0], clamp(datum.top / datum.bw, x_domain[0], x_domain[1]), x_domain[1]]")
        .transform_flatten(["xs"], as_=["x"])
        .transform_calculate(y="min(datum.top, datum.bw * datum.x)", name="names[datum.p]"))


def _line_layers(alt: Any, enc: _Encodings, ceilings: Any, current: Any) -> list[Any]:
    """The roof shown, solid (with sparsity on, the dense line of each preset whose sparse path
    doubles it stays behind, dashed); beside it, each roof a mark meets where that mark would not
    lie on a line drawn, and the roofs of the reader's marks."""
    lines = _vertices(
        current
        .transform_calculate(modes="sparsity && datum.speak != datum.peak ? ['now', 'ref'] : ['now']")
        .transform_flatten(["modes"], as_=["mode"])
        .transform_calculate(top="datum.mode == 'ref' ? datum.peak : datum.peak_now",
                             style=f"datum.mode == 'ref' ? '{DENSE_STYLE}' : '{SHOWN_STYLE}'")
    ).mark_line().encode(**enc.line)
    extras = _vertices(
        alt.Chart(alt.NamedData(name="extra_roofs"))
        .transform_filter(f"indexof(datum.s, ' ' + {_LINE_STATE} + ' ') >= 0 && {_SHOWN}")
        .transform_calculate(style="datum.r + (datum.sp ? '|s' : '')")
    ).mark_line().encode(**enc.quiet_line)

    def reader_roof(prefix: str) -> Any:
        """The roof of the reader's mark where it is not the roof shown."""
        return _vertices(
            ceilings.transform_filter(f"{prefix}_extra_on && datum.r == {prefix}_roof && {_SHOWN}")
            .transform_calculate(top="datum.peak", style=f"{prefix}_roof")
        ).mark_line().encode(**enc.quiet_line)

    return [lines, extras, reader_roof("own"), reader_roof("batch")]


def _ridge_layer(alt: Any, enc: _Encodings, current: Any) -> Any:
    """Each GPU's ridge point, a dot where its two lines meet."""
    return current.transform_filter(_HAS_SHOWN).transform_calculate(
        ridge_text=formats.intensity_expr("datum.ridge_now", _OP), peak_text=formats.rate_expr("datum.peak_now", _OP),
        roof_text="roof_terms[datum.p][precision]",
        bandwidth_text=formats.si_expr("datum.bw", "B/s"),
    ).mark_point(filled=True, size=70, opacity=1, strokeWidth=1.5, style="marker").encode(
        x=alt.X("ridge_now:Q"), y=alt.Y("peak_now:Q"), color="p:N",
        tooltip=[enc.name_tip, alt.Tooltip("ridge_text:N", title="Ridge point"),
                 alt.Tooltip("roof_text:N", title="Roof"), alt.Tooltip("peak_text:N", title="Peak"),
                 alt.Tooltip("bandwidth_text:N", title="Memory bandwidth")],
    )


def _readout_layers(alt: Any, enc: _Encodings, current: Any, one_row: Any) -> list[Any]:
    """The readout, once the reader moves it: a dot on each visible ceiling at the reader's
    intensity, a rule from the axis up to the lowest of them, and its value in the top band."""
    readout_points = current.transform_filter(f"{_READOUT_SHOWN} && {_HAS_SHOWN}").transform_calculate(
        x=_AT, y=f"min(datum.peak_now, datum.bw * {_AT})").transform_calculate(readout_text=ROW_TEXTS["readout_text"])
    side = f"{_AT} > sqrt(x_domain[0] * x_domain[1]) ? 'right' : 'left'"
    return [
        readout_points.transform_aggregate(y="min(y)", x="min(x)")
        # aria=False: a bare line; the readout under the chart says what it marks.
        .mark_rule(strokeWidth=1, strokeDash=[3, 2], style="readout", aria=False)
        .encode(x=alt.X("x:Q"), y=alt.Y("y:Q"), y2=alt.value(alt.ExprRef(f"height - {KERNEL_BAND_PX}"))),
        # aria=False: empty until the reader moves the readout, and then the readout states it in words.
        readout_points.mark_point(filled=True, size=45, opacity=1, strokeWidth=1, style="marker", aria=False)
        .encode(x=alt.X("x:Q"), y=alt.Y("y:Q"), color="p:N", tooltip=[enc.name_tip]),
        one_row.transform_filter(_READOUT_SHOWN)
        .mark_text(baseline="middle", fontSize=12, style="reader-label", align=alt.ExprRef(side), aria=False,
                   dx=alt.ExprRef(_label_dx(f"scale('x', {_AT})", side)), text=alt.ExprRef("'at ' + readout_label"))
        .encode(x=alt.X(datum=alt.ExprRef(_AT), type="quantitative"), y=alt.value(READOUT_LABEL_Y_PX)),
        # A tick under the label, left out while the reader's label takes the row below it.
        one_row.transform_filter(_READOUT_SHOWN)
        .mark_rule(strokeWidth=1, strokeDash=[3, 2], style="readout", aria=False, opacity=alt.ExprRef("own_on ? 0 : 1"))
        .encode(x=alt.X(datum=alt.ExprRef(_AT), type="quantitative"), y=alt.value(READOUT_LABEL_Y_PX + 7),
                y2=alt.value(READOUT_LABEL_Y_PX + 14)),
    ]


def _kernel_layers(alt: Any, enc: _Encodings) -> list[Any]:
    """Kernels: a hollow square where each meets its roof on each GPU shown, and one number per
    cluster of close kernels in a band along the bottom of the plot, joined to the highest of
    its squares by a faint rule. Clusters lie apart (label_clusters), so no two numbers meet.
    Their key is a second legend ("1 GEMM 8192×8192×8192 bf16"), so a still names them too."""
    kernel_rows = alt.Chart(alt.NamedData(name="kernels")).transform_filter(
        f"indexof(datum.m, ' ' + {_KERNEL_MODE} + ' ') >= 0 && {_SHOWN}"
    ).transform_calculate(
        name="names[datum.p]", kk="'' + datum.k", key=f"kernel_keys[{_KERNEL_MODE}]['' + datum.k]",
        meets=(f"(datum.b == 'memory' ? 'memory' : 'compute') + '-bound, ' "
               f"+ {formats.rate_expr('datum.y', op_expr('datum.r'))} + ' on ' + roof_terms[datum.p][datum.r] "
               "+ (datum.sp ? ', 2:4 sparse' : '')"),
        # Under one kernel launch, the launch bounds the time, not the roof (kernels.below_launch).
        time=f"{formats.time_us_expr('datum.t')} + ({below_launch(Expr('datum.t'))} ? ', {LAUNCH_REMARK}' : '')",
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
    return [
        clusters.mark_rule(strokeDash=[1, 3], strokeWidth=1, style="readout", aria=False)
        .encode(x=alt.X("cx:Q"), y=alt.Y("y:Q"), y2=alt.value(alt.ExprRef(f"height - {KERNEL_BAND_PX}"))),
        kernel_rows.mark_point(filled=False, size=60, strokeWidth=2, opacity=1)
        .encode(x=alt.X("x:Q"), y=alt.Y("y:Q"), color="p:N", shape=kernel_key,
                tooltip=[alt.Tooltip("key:N", title="Kernel"), enc.name_tip, alt.Tooltip("meets:N", title="Meets"),
                         alt.Tooltip("time:N", title="Time at that rate")]),
        clusters.mark_text(baseline="bottom", dy=-3, fontSize=12, fontWeight=600, style="kernel-label")
        .encode(x=alt.X("cx:Q"), y=alt.value(alt.ExprRef("height")), text="ct:N"),
    ]


def _reader_marks(alt: Any, enc: _Encodings, ceilings: Any, one_row: Any, prefix: str, shape: str,
                  label_y_px: int) -> list[Any]:
    """A reader's mark (their kernel, the batch GEMM): a filled shape on each GPU shown, at the
    mark's roof, labelled in a band of its own along the top."""
    on = f"{prefix}_on"
    rows = ceilings.transform_filter(f"{on} && datum.r == {prefix}_roof && {_SHOWN}").transform_calculate(
        name="names[datum.p]", x=f"{prefix}_x", y=f"min(datum.peak, datum.bw * {prefix}_x)",
    ).transform_calculate(**{f"{prefix}_text": ROW_TEXTS[f"{prefix}_text"],
                             **({"cross_text": ROW_TEXTS["cross_text"]} if prefix == "batch" else {})})
    mark_side = f"{prefix}_x > sqrt(x_domain[0] * x_domain[1]) ? 'right' : 'left'"
    return [
        # aria=False: the readout under the chart states these marks in words (and they start hidden).
        rows.mark_point(shape=shape, filled=True, size=110, opacity=1, strokeWidth=1.5, style="marker", aria=False)
        .encode(x=alt.X("x:Q"), y=alt.Y("y:Q"), color="p:N", tooltip=[enc.name_tip]),
        one_row.transform_filter(on)
        .mark_text(baseline="middle", fontSize=12, style="reader-label", align=alt.ExprRef(mark_side), aria=False,
                   dx=alt.ExprRef(_label_dx(f"scale('x', {prefix}_x)", mark_side)),
                   limit=alt.ExprRef(f"({mark_side}) == 'right' ? scale('x', {prefix}_x) - 8 "
                                     f": width - scale('x', {prefix}_x) - 8"),
                   text=alt.ExprRef(f"{prefix}_label"))
        .encode(x=alt.X(datum=alt.ExprRef(f"{prefix}_x"), type="quantitative"), y=alt.value(label_y_px)),
    ]


def _build_structure(variant: Any = ()) -> dict[str, Any]:
    """The structure of every roofline; ``variant`` is ``("kernels",)`` when the chart marks
    kernels (without any, their layers and key are left out: an empty legend draws badly)."""
    import altair as alt  # here, not at the top: a build whose grammar is cached never needs it

    enc = _Encodings(alt)
    ceilings = alt.Chart(alt.NamedData(name="ceilings"))
    current = ceilings.transform_filter(f"datum.r == precision && {_VISIBLE}").transform_calculate(
        name="names[datum.p]", peak_now=_PEAK, ridge_now=_RIDGE,
    )
    one_row = alt.Chart(alt.NamedData(name="one_row"))
    # The roof shown, as a line above the plot (a title's subtitle cannot follow a param).
    subtitle = (
        one_row
        .mark_text(align="left", baseline="bottom", fontSize=12, style="subtitle", text=alt.ExprRef(SUBTITLE_EXPR),
                   limit=alt.ExprRef("width"))
        .encode(x=alt.value(0), y=alt.value(-8))
    )
    chart = alt.layer(
        subtitle, *_line_layers(alt, enc, ceilings, current), *_readout_layers(alt, enc, current, one_row),
        _ridge_layer(alt, enc, current), *(_kernel_layers(alt, enc) if "kernels" in variant else []),
        *_reader_marks(alt, enc, ceilings, one_row, "own", "diamond", OWN_LABEL_Y_PX),
        *_reader_marks(alt, enc, ceilings, one_row, "batch", "triangle-up", BATCH_LABEL_Y_PX),
    ).add_params(*_params_structure(alt)).properties(
        width=STATIC_WIDTH_PX, height=STATIC_HEIGHT_PX,
        autosize=alt.AutoSizeParams(type="fit", contains="padding"), padding=8,
    )
    # Schema validation costs as much as building the chart; the tests validate specs instead.
    spec = chart.to_dict(validate=False)
    spec.pop("config", None)  # altair's default view size; the chart sets its own
    return spec


GRAMMAR = Grammar("roofline", _build_structure, __file__, names.__file__, expressions.__file__)


