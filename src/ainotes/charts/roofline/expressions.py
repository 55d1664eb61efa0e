"""What the reader types (a GEMM's M, N, K, a batch size, an intensity), as Vega expressions the
core's own formula functions write (:mod:`ainotes.base.formula`), and the texts the chart computes from them."""

from __future__ import annotations

from typing import Any

from ainotes.base import formula
from ainotes.base.formula import Expr
from ainotes.charts import formats
from ainotes.charts.roofline.names import ALL_PRESETS, BATCH_FFN_FACTOR, INT8_ROOF
from ainotes.core import roofline
from ainotes.core.kernels import LAUNCH_REMARK, below_launch

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


def op_expr(roof_expr: str) -> str:
    return f"({roof_expr} == '{INT8_ROOF}' ? 'OP' : 'FLOP')"


def _bound_expr(memory_bound: Any) -> str:
    return f"({memory_bound} ? 'memory' : 'compute')"


# Expressions of the reader's marks, the same for every chart (in the grammar).
_OWN_FLOPS = gemm_flops(Expr("own_m"), Expr("own_n"), Expr("own_k"))
_OWN_BYTES = gemm_bytes(Expr("own_m"), Expr("own_n"), Expr("own_k"), Expr("own_s"))
_OWN_SHAPE = "own_m + '×' + own_n + '×' + own_k + ' ' + own_dtype"
_BATCH_FLOPS = gemm_flops(Expr("batch_tokens"), Expr("batch_n"), Expr("batch_k"))
_BATCH_BYTES = gemm_bytes(Expr("batch_tokens"), Expr("batch_n"), Expr("batch_k"), Expr("batch_s"))
MARK_EXPRS: tuple[tuple[str, str], ...] = (
    ("own_flops", _OWN_FLOPS.text),
    ("own_bytes", _OWN_BYTES.text),
    ("own_x", f"own_kind == 'gemm' ? {_OWN_FLOPS.text} / {_OWN_BYTES.text} : own_typed_x"),
    ("own_off_axis", "own_x < x_domain[0] || own_x > x_domain[1]"),
    ("own_x_text", formats.intensity_expr("own_x", op_expr("own_roof"))),
    ("own_label", f"own_kind == 'gemm' ? '◆ GEMM ' + {_OWN_SHAPE} "
                  f": '◆ ' + {formats.intensity_expr('own_typed_x', op_expr('precision'))}"),
    ("own_heading",
     f"own_kind == 'gemm' ? 'Your GEMM ' + {_OWN_SHAPE} + ': ' "
     f"+ {formats.si_expr('own_flops', unit_expr=op_expr('own_roof'))} + ', ' "
     f"+ {formats.si_expr('own_bytes', 'B')} + ' moved at least, ' "
     f"+ {formats.intensity_expr('own_x', op_expr('own_roof'))} + '.' "
     f": 'Your kernel at ' + {formats.intensity_expr('own_x', op_expr('own_roof'))} "
     "+ ', on the roof shown (' + roof_names[own_roof] + '):'"),
    ("batch_n", f"{BATCH_FFN_FACTOR} * batch_d"),
    ("batch_k", "batch_d"),
    ("batch_flops", _BATCH_FLOPS.text),
    ("batch_bytes", _BATCH_BYTES.text),
    ("batch_x", f"{_BATCH_FLOPS.text} / {_BATCH_BYTES.text}"),
    ("batch_off_axis", "batch_x < x_domain[0] || batch_x > x_domain[1]"),
    ("batch_x_text", formats.intensity_expr("batch_x", op_expr("batch_roof"))),
    ("batch_label", "'▲ ' + batch_tokens + ' tokens, ' + upper(batch_dtype)"),
    ("batch_heading", "'Decode projection, ' + batch_tokens + ' tokens × ' + batch_k + ' → ' + batch_n "
                      f"+ ' (' + batch_dtype + '): ' + {formats.intensity_expr('batch_x', op_expr('batch_roof'))} "
                      "+ '.'"),
    ("readout_heading", f"'At ' + {formats.intensity_expr('intensity', op_expr('precision'))} + ', ' "
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
    op = op_expr("precision")
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
        # A time under one kernel launch is not what the kernel takes (kernels.below_launch).
        launch = f"({below_launch(time)} ? ', {LAUNCH_REMARK}' : '')"
        return (f"{name} + ': ' + {_bound_expr(below)} + '-bound, at most ' "
                f"+ {formats.rate_expr(str(rate), op_expr(f'{prefix}_roof'))} "
                f"+ ' (' + roof_terms[datum.p][{prefix}_roof] + ')' "
                f"+ ({timed} ? ', ' + {formats.time_us_expr(str(time))} + {launch} : '')")

    batch_ridge = roofline.ridge(Expr("datum.peak"), bandwidth)
    crossing = roofline.weight_gemm_crossing_tokens(batch_ridge, Expr("batch_n"), Expr("batch_k"), Expr("batch_s"))
    cross = (f"{name} + ': crosses its ridge (' "
             f"+ {formats.intensity_expr(str(batch_ridge), op_expr('batch_roof'))} + ') at ' "
             f"+ (isValid({crossing}) ? 'about ' + {formats.ratio_expr(str(crossing))} + ' tokens' "
             ": 'no batch size')")
    return {"readout_text": readout, "own_text": mark("own"), "batch_text": mark("batch"), "cross_text": cross}


ROW_TEXTS = _row_texts()

