"""The explorer's live numbers are the core's: every expression the chart evaluates as the reader
types, held against the core's Python at sampled states, evaluated by Vega itself (vl-convert's
engine, no browser). And the chart's data, state by state: no mark above a line of its GPU
without its own roof drawn."""

from __future__ import annotations

import itertools
import math

import pytest

from ainotes.base import formula, units
from ainotes.base.errors import InputError
from ainotes.base.formula import Expr
from ainotes.charts import formats
from ainotes.charts.roofline.expressions import ROW_TEXTS
from ainotes.charts.roofline.names import (
    ALL_PRESETS,
    KERNEL_MODES,
    dtype_roofs,
    flops_per_s_expr,
    intensity_label,
    roof_name,
    roof_term,
)
from ainotes.charts.roofline.spec import roofline_spec
from ainotes.charts.roofline.stills import spec_meta
from ainotes.core import roofline
from ainotes.core.hardware import PeakPath, Preset, Source
from ainotes.core.kernels import DTYPE_BYTES, LAUNCH_LATENCY_S, LAUNCH_REMARK, gemm, parse_kernel_spec
from vega_eval import evaluate

# Values across every scale the chart writes: sub-unit intensities, ties (562.5 reads "563"),
# the edges of each SI prefix and of each rounding rule.
SAMPLES = [3.52e-8, 0.000129, 0.03521, 0.1, 0.5, 1, 1.25, 9.999, 9.9996, 99.95, 100, 295.343, 562.5, 999.5,
           999.96, 1000, 1234.5, 2730.6666666666665, 65536, 3.13e6, 1.3e12, 989.4e12, 1978.9e12, 2.25e15, 9e15]


def _preset(preset_id: str, name: str, tflops: float, tbps: float, sparse: bool, peaks=(), unit_names=None) -> Preset:
    return Preset(id=preset_id, name=name, dense_fp16_tflops=tflops, memory_bandwidth_tbps=tbps,
                  structured_sparsity=sparse, sources=(Source("vendor table", "https://example.com/spec"),),
                  path=f"presets/{preset_id}.yaml", peaks=peaks, unit_names=unit_names)


# Fixture GPUs (made-up figures, chosen to cover the cases): one with every path and 2:4 sparsity,
# one without FP8 or FP64 paths and no sparsity, one whose file gives only FP16/BF16.
FULL = _preset("full", "Full GPU", 1000.0, 4.0, True, peaks=(
    PeakPath("tensor", "fp8", 2000.0, True), PeakPath("tensor", "fp4", 4000.0, True),
    PeakPath("tensor", "int8", 2000.0, True), PeakPath("tensor", "tf32", 500.0, True),
    PeakPath("tensor", "fp64", 60.0), PeakPath("vector", "fp32", 60.0), PeakPath("vector", "fp64", 30.0),
), unit_names={"tensor": "tensor cores", "vector": "CUDA cores"})
PART = _preset("part", "Part GPU", 300.0, 2.0, False, peaks=(
    PeakPath("tensor", "fp8", None), PeakPath("tensor", "fp64", None), PeakPath("vector", "fp32", 20.0),
    PeakPath("tensor", "int8", 600.0),
), unit_names={"tensor": "MXUs", "vector": "VPUs"})
BARE = _preset("bare", "Bare GPU", 200.0, 0.8, False)
GPUS = (FULL, PART, BARE)
KERNELS = ("gemm:8192x8192x8192:bf16", "gemm:16x8192x8192:bf16", "add:16777216:bf16", "softmax:8192x8192:bf16",
           "attention:1x32x4096x128:bf16", "attention-naive:1x32x4096x128:bf16", "gemm:4096x4096x4096:fp8",
           "gemm:2048x2048x2048:fp8:sparse", "layernorm:4096x4096:fp64")


@pytest.fixture(autouse=True)
def _private_cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("AINOTES_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "render-cache"))


# -- ainotes.base.formula --------------------------------------------------------------------------------


def test_a_formula_gives_numbers_for_numbers_and_text_for_expressions():
    assert roofline.attainable(10.0, 989.4e12, 3.35e12) == min(989.4e12, 3.35e13)
    assert str(roofline.attainable(Expr("x"), Expr("p"), Expr("b"))) == "min(p, (b * x))"
    assert str(roofline.ridge(Expr("p"), 2.0)) == "(p / 2.0)"
    assert roofline.weight_gemm_crossing_tokens(1e9, 4, 2, 2) is None  # never reaches that ridge
    assert formula.text(0.1) == "0.1" and formula.text(None) == "null" and formula.text("a'b") == '"a\'b"'
    with pytest.raises(ValueError, match="finite"):
        formula.text(float("nan"))


def test_the_cores_formulas_evaluate_in_vega_to_the_cores_numbers():
    rows = [{"x": x, "p": p, "b": b} for x, p, b in itertools.product((0.07, 1.3, 295.3, 5461.3), (19.5e12, 989.4e12),
                                                                       (0.819e12, 3.35e12))]
    x, p, b = Expr("datum.x"), Expr("datum.p"), Expr("datum.b")
    got = evaluate([str(roofline.attainable(x, p, b)), str(roofline.ridge(p, b)),
                    str(roofline.memory_bound(x, roofline.ridge(p, b))),
                    str(roofline.time_at(Expr("1e12"), roofline.attainable(x, p, b)))], rows=rows)
    for row, (rate, ridge, below, time) in zip(rows, got, strict=True):
        assert float(rate) == roofline.attainable_flops_per_s(row["x"], row["p"], row["b"])
        assert float(ridge) == roofline.ridge_point_flop_per_byte(row["p"], row["b"])
        assert (below == "true") == (roofline.bound_at(row["x"], row["p"], row["b"]) == "memory")
        assert float(time) == pytest.approx(roofline.kernel_time_s(1e12, float(rate)), rel=1e-15)


@pytest.mark.parametrize("dtype", ["bf16", "fp8", "fp4", "fp32"])
def test_the_crossing_batch_is_where_a_weight_gemm_reaches_the_ridge(dtype):
    s = DTYPE_BYTES[dtype]
    for ridge, d in ((295.3, 8192), (153.0, 4096), (9.56, 512)):
        tokens = roofline.weight_gemm_crossing_tokens(ridge, 4 * d, d, s)
        # The core's GEMM at that batch has the ridge's intensity (a continuous batch, so exact).
        m = tokens
        intensity = 2 * m * 4 * d * d / ((m * d + 4 * d * d + m * 4 * d) * s)
        assert intensity == pytest.approx(ridge, rel=1e-12)
        below, above = gemm(max(1, math.floor(tokens)), 4 * d, d, dtype), gemm(math.ceil(tokens) + 1, 4 * d, d, dtype)
        assert below.intensity_flop_per_byte <= ridge < above.intensity_flop_per_byte
        expr = roofline.weight_gemm_crossing_tokens(Expr("datum.r"), Expr("datum.n"), Expr("datum.k"), Expr("datum.s"))
        [[text]] = evaluate([str(expr)], rows=[{"r": ridge, "n": 4 * d, "k": d, "s": s}])
        assert float(text) == pytest.approx(tokens, rel=1e-15)
    never = roofline.weight_gemm_crossing_tokens(Expr("datum.r"), Expr("datum.n"), Expr("datum.k"), Expr("datum.s"))
    assert evaluate([str(never)], rows=[{"r": 1e9, "n": 8, "k": 2, "s": s}]) == [["null"]]


# -- ainotes.charts.formats ---------------------------------------------------------------------------


def test_every_format_reads_in_vega_as_in_python():
    pairs = [
        (formats.si_expr("datum.v", "FLOP/s"), lambda v: formats.si_text(v, "FLOP/s")),
        (formats.si_expr("datum.v", "B"), lambda v: formats.si_text(v, "B")),
        (formats.rate_expr("datum.v"), formats.rate_text),
        (formats.rate_expr("datum.v", "'OP'"), lambda v: formats.rate_text(v, "op")),
        (formats.intensity_expr("datum.v"), formats.intensity_text),
        (formats.intensity_expr("datum.v", "'OP'"), lambda v: formats.intensity_text(v, "op")),
        (formats.intensity_short_expr("datum.v"), formats.intensity_short_text),
        (formats.time_us_expr("datum.v / 1e6"), lambda v: formats.time_us_text(v / 1e6)),
        (formats.ratio_expr("datum.v"), formats.ratio_text),
        (flops_per_s_expr("datum.v"), units.flops_per_s),
    ]
    got = evaluate([expr for expr, _ in pairs], rows=[{"v": v} for v in SAMPLES])
    for value, texts in zip(SAMPLES, got, strict=True):
        assert texts == [python(value) for _, python in pairs], value
    # The page's own figures: H100's ridge, B200's sparse ridge (a tie, half-up), an 8K GEMM's time.
    assert formats.intensity_text(989.4e12 / 3.35e12) == "295 FLOP/byte"
    assert formats.intensity_text(562.5) == "563 FLOP/byte"
    assert formats.rate_text(1978.9e12, "op") == "1.979 POP/s"
    assert formats.time_us_text(1.0995e12 / 312e12) == "3,524 µs"


# -- the chart's expressions: the reader's marks and the readouts --------------------------------------

GEMM_SHAPES = [(1, 1, 1), (16, 8192, 8192), (4096, 4096, 4096), (3, 7, 11), (1, 2**31, 1), (2**31, 2**31, 2**31),
               (128, 50257, 768), (12345, 678, 91011)]


def _derived(spec: dict) -> list[tuple[str, str]]:
    return [(p["name"], p["expr"]) for p in spec["params"] if "expr" in p]


def _values(spec: dict) -> dict:
    return {p["name"]: p["value"] for p in spec["params"] if "value" in p}


def test_the_readers_gemm_and_batch_gemm_are_the_cores_kernels():
    spec = roofline_spec(GPUS)
    signals = _values(spec)
    for dtype, (m, n, k) in itertools.product(("bf16", "fp8", "fp4", "fp64"), GEMM_SHAPES):
        kernel = gemm(m, n, k, dtype)
        state = {**signals, "own_on": True, "own_kind": "gemm", "own_m": m, "own_n": n, "own_k": k,
                 "own_s": DTYPE_BYTES[dtype], "own_dtype": dtype, "own_roof": "tensor:" + dtype,
                 "batch_on": True, "batch_tokens": m, "batch_d": k, "batch_s": DTYPE_BYTES[dtype],
                 "batch_dtype": dtype, "batch_roof": "tensor:" + dtype}
        [[flops, moved, x, batch_x, label]] = evaluate(["own_flops", "own_bytes", "own_x", "batch_x", "own_label"],
                                                       signals=state, updates=_derived(spec))
        assert float(flops) == kernel.flops and float(moved) == kernel.bytes_moved
        assert float(x) == pytest.approx(kernel.intensity_flop_per_byte, rel=1e-15)
        weight = gemm(m, 4 * k, k, dtype) if 4 * k <= 2**31 else None  # the decode projection, d → 4·d
        if weight is not None:
            assert float(batch_x) == pytest.approx(weight.intensity_flop_per_byte, rel=1e-15)
        assert label == f"◆ GEMM {m}×{n}×{k} {dtype}"


def _expected_readout(preset: Preset, roof: str, x: float, sparsity: bool) -> str:
    unit, precision = roof.split(":")
    path = preset.path(precision, unit)
    peak = path.peak_tflops(sparsity) * 1e12
    bandwidth = preset.memory_bandwidth_bytes_per_s
    rate = roofline.attainable_flops_per_s(x, peak, bandwidth)
    ridge = roofline.ridge_point_flop_per_byte(peak, bandwidth)
    bound = roofline.bound_at(x, peak, bandwidth)
    op = "op" if precision == "int8" else "flop"
    ratio = (f"{formats.ratio_text(ridge / x)}× below the ridge" if bound == "memory"
             else f"{formats.ratio_text(x / ridge)}× the ridge")
    sparse = " (2:4 sparse)" if sparsity and path.sparse_supported else ""
    return (f"{preset.name}: {formats.rate_text(rate, op)}{sparse}, {bound}-bound, {ratio} "
            f"({formats.intensity_text(ridge, op)})")


def _rows_for(spec: dict, roof: str, sparsity: bool, x: float) -> list[dict]:
    rows = []
    for row in spec["datasets"]["ceilings"]:
        if row["r"] == roof:
            rows.append({**row, "x": x, "peak_now": row["speak"] if sparsity else row["peak"]})
    return rows


@pytest.mark.parametrize("roof", ["tensor:bf16", "tensor:fp8", "tensor:int8", "vector:fp32", "tensor:fp4"])
@pytest.mark.parametrize("sparsity", [False, True])
def test_each_readout_line_is_the_cores_figure_in_the_pages_words(roof, sparsity):
    spec = roofline_spec(GPUS)
    by_id = {p.id: p for p in GPUS}
    for x in (0.1, 7.3, 213.0, 600.0, 2730.67):
        rows = _rows_for(spec, roof, sparsity, x)
        signals = {**_values(spec), "precision": roof, "sparsity": sparsity, "intensity": x}
        got = evaluate([ROW_TEXTS["readout_text"]], signals=signals, rows=rows, updates=_derived(spec))
        for row, [text] in zip(rows, got, strict=True):
            assert text == _expected_readout(by_id[row["p"]], roof, x, sparsity)
        [[heading]] = evaluate(["readout_heading"], signals=signals, updates=_derived(spec))
        op = "OP" if roof == "tensor:int8" else "FLOP"
        assert heading.startswith(f"At {formats.intensity_text(x, op.lower())}, {roof_name(roof)}, ")
        if roof.startswith("vector"):
            assert "sparse" not in heading  # never "sparse" for a vector-unit row
            assert heading.endswith(", dense (vector units have no 2:4 mode):" if sparsity else ", dense:")


@pytest.mark.parametrize("spec_text", ["gemm:4096x4096x4096:fp8", "gemm:16x8192x8192:bf16", "gemm:512x512x512:int8",
                                       "gemm:8192x8192x8192:fp32", "gemm:64x64x64:fp4", "gemm:1x1x1:bf16"])
def test_the_readers_gemm_reads_its_bound_rate_and_time_from_the_core(spec_text):
    kernel = parse_kernel_spec(spec_text)
    m, n, k = (int(d) for d in spec_text.split(":")[1].split("x"))
    spec = roofline_spec(GPUS)
    roof = dtype_roofs()[kernel.dtype]
    signals = {**_values(spec), "own_on": True, "own_kind": "gemm", "own_m": m, "own_n": n, "own_k": k,
               "own_s": DTYPE_BYTES[kernel.dtype], "own_dtype": kernel.dtype, "own_roof": roof}
    rows = [{**row, "x": kernel.intensity_flop_per_byte} for row in spec["datasets"]["ceilings"] if row["r"] == roof]
    got = evaluate([ROW_TEXTS["own_text"]], signals=signals, rows=rows, updates=_derived(spec))
    by_id = {p.id: p for p in GPUS}
    assert rows or roof == "tensor:fp4"
    for row, [text] in zip(rows, got, strict=True):
        core = roofline.kernel_roof(by_id[row["p"]], kernel)
        op = "op" if kernel.dtype == "int8" else "flop"
        # A time under one kernel launch says that the launch bounds it (issue 29: a 1×1×1 GEMM read
        # 0.0000015 µs as if the roof held).
        launch = f", {LAUNCH_REMARK}" if core.time_s < LAUNCH_LATENCY_S else ""
        assert text == (f"{by_id[row['p']].name}: {core.bound}-bound, at most "
                        f"{formats.rate_text(core.attainable_flops_per_s, op)} "
                        f"({roof_term(roof, by_id[row['p']])}), {formats.time_us_text(core.time_s)}{launch}")
        if spec_text == "gemm:1x1x1:bf16":
            assert text.endswith("launch latency, not the roof, bounds it"), text
        if spec_text == "gemm:4096x4096x4096:fp8":
            assert "launch" not in text, text
    [[heading]] = evaluate(["own_heading"], signals=signals, updates=_derived(spec))
    op = "op" if kernel.dtype == "int8" else "flop"
    assert heading == (f"Your GEMM {m}×{n}×{k} {kernel.dtype}: {units.si(kernel.flops, op.upper())}, "
                       f"{units.si(kernel.bytes_moved, 'B')} moved at least, "
                       f"{formats.intensity_text(kernel.intensity_flop_per_byte, op)}.")


def test_the_batch_readout_gives_each_gpus_crossing_from_the_core():
    spec = roofline_spec(GPUS)
    for tokens, d in ((1, 8192), (64, 8192), (16384, 1024), (300, 12288)):
        signals = {**_values(spec), "batch_on": True, "batch_tokens": tokens, "batch_d": d, "batch_s": 2,
                   "batch_dtype": "bf16", "batch_roof": "tensor:bf16"}
        kernel = gemm(tokens, 4 * d, d, "bf16")
        rows = [{**row, "x": kernel.intensity_flop_per_byte} for row in spec["datasets"]["ceilings"]
                if row["r"] == "tensor:bf16"]
        got = evaluate([ROW_TEXTS["batch_text"], ROW_TEXTS["cross_text"]], signals=signals, rows=rows,
                       updates=_derived(spec))
        for row, (line, cross) in zip(rows, got, strict=True):
            preset = next(p for p in GPUS if p.id == row["p"])
            core = roofline.kernel_roof(preset, kernel)
            assert line.startswith(f"{preset.name}: {core.bound}")
            assert line.endswith(f"{formats.time_us_text(core.time_s)}")
            crossing = roofline.weight_gemm_crossing_tokens(preset.ridge_flop_per_byte(), 4 * d, d, 2)
            ridge = formats.intensity_text(preset.ridge_flop_per_byte())
            assert cross == f"{preset.name}: crosses its ridge ({ridge}) at about {formats.ratio_text(crossing)} tokens"
            if d >= 8192:  # while the batch is small next to d, the intensity is about its tokens (BF16)
                assert crossing == pytest.approx(preset.ridge_flop_per_byte(), rel=0.15)


# -- the chart's data, state by state ----------------------------------------------------------------


def _states(spec: dict):
    values = _values(spec)
    for kmode, roof, sparsity in itertools.product(KERNEL_MODES, spec_meta(spec)["roofs"], (False, True)):
        for choice in (ALL_PRESETS, *values["gpu_ids"]):
            yield kmode, roof, sparsity, choice


@pytest.mark.parametrize("presets", [GPUS, (PART, BARE)], ids=["three", "two"])
def test_no_mark_lies_above_a_drawn_line_of_its_gpu_without_its_own_roof(presets):
    """What the chart's filters draw in every state (a mirror of its transforms, checked for
    real in a browser by tests/test_explorer_truth.py), against the rule."""
    kernels = [parse_kernel_spec(k) for k in KERNELS]
    spec = roofline_spec(presets, kernels=kernels)
    values = _values(spec)
    ceilings = {(r["p"], r["r"]): r for r in spec["datasets"]["ceilings"]}
    checked = 0
    for kmode, roof, sparsity, choice in _states(spec):
        state = f"{kmode}|{roof}|{'s' if sparsity else 'd'}"
        mode = "own" if kmode == "own" else roof
        visible = [i for i in values["gpu_ids"] if choice in (ALL_PRESETS, i) and (i, roof) in ceilings]
        lines = {i: [(ceilings[(i, roof)]["speak" if sparsity else "peak"], ceilings[(i, roof)]["bw"])]
                 for i in visible}
        for i in visible:
            if sparsity and ceilings[(i, roof)]["speak"] != ceilings[(i, roof)]["peak"]:
                lines[i].append((ceilings[(i, roof)]["peak"], ceilings[(i, roof)]["bw"]))
        for extra in spec["datasets"]["extra_roofs"]:
            if f" {state} " in extra["s"] and extra["p"] in visible:
                lines[extra["p"]].append((extra["top"], extra["bw"]))
        marks = [r for r in spec["datasets"]["kernels"] if f" {mode} " in r["m"] and r["p"] in visible]
        for mark in marks:
            on = [top for top, bw in lines[mark["p"]]
                  if math.isclose(mark["y"], min(top, bw * mark["x"]), rel_tol=1e-9)]
            assert on, (state, choice, mark["k"], mark["p"])
            checked += 1
        # A GPU without the roof shown draws no mark at all.
        hidden = [r for r in spec["datasets"]["kernels"] if f" {mode} " in r["m"] and (r["p"], roof) not in ceilings]
        assert all(r["p"] not in visible for r in hidden)
    assert checked > 100


def test_kernels_re_typed_to_the_roof_shown_are_the_same_kernel_in_that_type():
    kernels = [parse_kernel_spec(k) for k in KERNELS]
    spec = roofline_spec(GPUS, kernels=kernels)
    rows = spec["datasets"]["kernels"]
    for roof in spec_meta(spec)["roofs"]:
        dtype = roof.split(":")[1]
        for number, kernel in enumerate(kernels, start=1):
            other = parse_kernel_spec(kernel.spec.replace(f":{kernel.dtype}", f":{dtype}", 1))
            for preset in GPUS:
                core = roofline.kernel_roof(preset, other)
                found = [r for r in rows if r["k"] == number and r["p"] == preset.id and f" {roof} " in r["m"]]
                if core.attainable_flops_per_s is None:
                    assert not found
                    continue
                [row] = found
                assert row["x"] == other.intensity_flop_per_byte and row["y"] == core.attainable_flops_per_s
    # "This GEMM in FP8": half the bytes of the BF16 one, the same FLOPs.
    big = [r for r in rows if r["k"] == 1 and r["p"] == "full"]
    by_mode = {m: r for r in big for m in r["m"].split()}
    assert by_mode["tensor:fp8"]["x"] == pytest.approx(2 * by_mode["own"]["x"], rel=1e-3)


def test_a_gpu_without_the_roof_shown_says_why_in_the_legend():
    spec = roofline_spec(GPUS, kernels=[parse_kernel_spec(KERNELS[0])])
    legend = _values(spec)["legend_ridge"]
    assert legend["tensor:fp8|d"]["part"] == "not drawn: no FP8 path"
    assert legend["tensor:fp8|d"]["bare"] == "not drawn: FP8 rate not given"
    assert legend["vector:fp64|s"]["part"] == "not drawn: FP64 vector rate not given"
    assert legend["tensor:fp8|d"]["full"] == f"ridge {intensity_label(2000e12 / 4e12)}"


def test_unit_words_are_neutral_with_each_vendors_term_beside():
    spec = roofline_spec(GPUS)
    terms = _values(spec)["roof_terms"]
    assert roof_name("tensor:bf16") == "BF16 matrix units"
    assert roof_name("vector:fp32") == "FP32 vector units"
    assert terms["full"]["tensor:fp8"] == "FP8 tensor cores" and terms["part"]["vector:fp32"] == "FP32 VPUs"
    assert terms["bare"]["tensor:bf16"] == "BF16 matrix units"  # a preset that names no term
    assert spec_meta(spec)["roof_labels"]["tensor:bf16"] == "BF16 matrix units (tensor cores, MXUs)"


def test_a_precision_no_preset_has_is_refused():
    with pytest.raises(InputError, match="precision"):
        roofline_spec((BARE,), precision="fp8")
