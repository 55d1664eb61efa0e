"""Rooflines per precision: per-precision peaks in presets, the ceiling each kernel meets, sparse kernels."""

from __future__ import annotations

import re
from pathlib import Path

import jsonschema
import pytest
import yaml
from hypothesis import assume, given
from hypothesis import strategies as st

from ainotes.base.errors import InputError
from ainotes.core.hardware import (
    FILE_PRECISIONS,
    PRECISIONS,
    UNIT_PRECISIONS,
    UNITS,
    PeakPath,
    Preset,
    Source,
    preset_by_id,
)
from ainotes.core.kernels import DTYPE_BYTES, KERNEL_SHAPES, gemm, parse_kernel_spec
from ainotes.core.roofline import bound_at, ceiling, ceiling_at, kernel_ceiling, kernel_roof
from ainotes.presets.gpus import SPARSE_RIDGE_FLOP_PER_BYTE, load_preset, load_presets, preset_schema
from preset_support import FIXTURE_PRESETS, SHIPPED_PRESETS, names_the_file

PRESETS_DIR = FIXTURE_PRESETS  # FACTS.md's figures, in copies of the four NVIDIA files
SOURCES = "sources:\n  - title: Vendor table\n    url: https://example.com/spec\n"
ORIGINAL = "name: Test GPU\ndense_fp16_tflops: 100\nmemory_bandwidth_tbps: 2\nstructured_sparsity: true\n" + SOURCES

# FACTS.md, "Peak rates per precision": dense TFLOP/s (TOPS for int8) per GPU; None = no such path.
FACTS: dict[str, dict[tuple[str, str], float | None]] = {
    "h100": {("vector", "fp64"): 33.5, ("tensor", "fp64"): 66.9, ("vector", "fp32"): 66.9, ("tensor", "tf32"): 494.7,
             ("tensor", "fp16"): 989.4, ("tensor", "bf16"): 989.4, ("tensor", "fp8"): 1978.9,
             ("tensor", "fp4"): None, ("tensor", "int8"): 1978.9},
    "a100": {("vector", "fp64"): 9.7, ("tensor", "fp64"): 19.5, ("vector", "fp32"): 19.5, ("tensor", "tf32"): 156,
             ("tensor", "fp16"): 312, ("tensor", "bf16"): 312, ("tensor", "fp8"): None,
             ("tensor", "fp4"): None, ("tensor", "int8"): 624},
    "b200": {("vector", "fp64"): 37, ("tensor", "fp64"): 37, ("vector", "fp32"): 75, ("tensor", "tf32"): 1125,
             ("tensor", "fp16"): 2250, ("tensor", "bf16"): 2250, ("tensor", "fp8"): 4500,
             ("tensor", "fp4"): 9000, ("tensor", "int8"): 4500},
    "rtx-4090": {("vector", "fp64"): 1.3, ("tensor", "fp64"): None, ("vector", "fp32"): 82.6,
                 ("tensor", "tf32"): 82.6, ("tensor", "fp16"): 165.2, ("tensor", "bf16"): 165.2,
                 ("tensor", "fp8"): 330.3, ("tensor", "fp4"): None, ("tensor", "int8"): 660.6},
}
FACT_CASES = [(pid, unit, precision, value)
              for pid, table in FACTS.items() for (unit, precision), value in table.items()]


def presets() -> dict[str, Preset]:
    return {p.id: p for p in load_presets(PRESETS_DIR)}


def write(tmp_path: Path, text: str, name: str = "gpu.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# --- the shipped figures ------------------------------------------------------------------


@pytest.mark.parametrize(("preset_id", "unit", "precision", "dense"), FACT_CASES,
                         ids=[f"{p}-{u}-{q}" for p, u, q, _ in FACT_CASES])
def test_every_facts_figure_is_in_the_presets(preset_id: str, unit: str, precision: str, dense: float | None) -> None:
    preset = presets()[preset_id]
    path = preset.path(precision, unit)
    assert path is not None, "every FACTS figure is given, as a rate or as 'none'"
    assert path.dense_tflops == (pytest.approx(dense, rel=1e-12) if dense is not None else None)
    assert preset.status(precision, unit) == ("given" if dense is not None else "no path")
    assert preset.peak_tflops(precision, unit=unit) == path.dense_tflops


def test_the_nvidia_files_state_every_ceiling() -> None:
    for preset in presets().values():
        assert all(path is not None for _, _, path in preset.all_paths()), preset.id


def test_two_to_four_sparsity_doubles_tensor_rates_but_never_fp64_or_vector() -> None:
    for preset in presets().values():
        for unit, precision, path in preset.all_paths():
            assert path is not None
            if path.dense_tflops is None:
                continue
            doubles = unit == "tensor" and precision != "fp64"
            assert path.sparse_supported is doubles, (preset.id, unit, precision)
            assert path.peak_tflops(sparsity=True) == pytest.approx(path.dense_tflops * (2 if doubles else 1))


def test_every_shipped_preset_doubles_only_where_it_has_a_sparse_path() -> None:
    for preset in load_presets(SHIPPED_PRESETS):
        for unit, precision, path in preset.all_paths():
            if path is None or path.dense_tflops is None:
                continue
            assert not path.sparse_supported or unit == "tensor", (preset.id, unit, precision)
            factor = 2 if path.sparse_supported else 1
            assert path.peak_tflops(sparsity=True) == pytest.approx(path.dense_tflops * factor)
            if path.printed_sparse_tflops is not None:
                assert path.printed_sparse_tflops == pytest.approx(2 * path.dense_tflops, rel=1e-3)


def test_printed_sparse_figures_are_recorded() -> None:
    h100 = presets()["h100"]
    fp8 = h100.path("fp8")
    assert fp8 is not None and fp8.printed_sparse_tflops == 3957.8
    assert h100.peak_tflops("fp8", sparsity=True) == pytest.approx(3957.8)
    # The whitepaper prints 1,978.9 for FP16 sparse: within rounding of 2 × 989.4.
    fp16 = h100.path("fp16")
    assert fp16 is not None and fp16.printed_sparse_tflops == 1978.9


def test_each_figure_names_its_source() -> None:
    for preset in presets().values():
        for _, _, path in preset.all_paths():
            assert path is not None
            if path.dense_tflops is not None:
                assert path.source in preset.sources
    for preset in load_presets(SHIPPED_PRESETS):  # every per-precision figure a shipped file states
        for path in preset.peaks:
            if path.dense_tflops is not None:
                assert path.source in preset.sources, (preset.id, path.label)


def test_b200_figures_are_eight_gpu_totals_divided() -> None:
    b200 = presets()["b200"]
    fp4 = b200.path("fp4")
    assert fp4 is not None and fp4.dense_tflops == 9000 and fp4.printed_sparse_tflops == 18000
    assert fp4.derivation == "NVIDIA HGX B200 totals ÷ 8 GPUs: 72 PFLOP/s → 9 PFLOP/s"
    vector = b200.path("fp32", "vector")
    assert vector is not None and vector.derivation == "NVIDIA HGX B200 totals ÷ 8 GPUs: 600 TFLOP/s → 75 TFLOP/s"


def test_ridge_points_per_precision() -> None:
    p = presets()
    # At FP16 the B200's ridge sits left of the H100's; at FP8 and FP4 it moves right.
    assert p["b200"].ridge_flop_per_byte() == pytest.approx(281.25)
    assert p["h100"].ridge_flop_per_byte() == pytest.approx(295.34, abs=0.01)
    assert p["b200"].ridge_flop_per_byte() < p["h100"].ridge_flop_per_byte()
    assert p["b200"].ridge_flop_per_byte(precision="fp8") == pytest.approx(562.5)
    assert p["b200"].ridge_flop_per_byte(precision="fp4") == pytest.approx(1125)
    assert p["h100"].ridge_flop_per_byte(precision="fp4") is None
    assert p["h100"].ridge_flop_per_byte(precision="fp32", unit="vector") == pytest.approx(66.9 / 3.35)
    assert p["b200"].ridge_flop_per_byte(True, precision="fp8") == pytest.approx(1125)


def test_unknown_and_impossible_precision_names_are_errors() -> None:
    h100 = presets()["h100"]
    with pytest.raises(InputError, match=r"unknown precision 'fp6'; known precisions: fp64, fp32"):
        h100.path("fp6")
    # FP32 matrix work on NVIDIA parts is TF32: no matrix FP32 rate, and none listed (it is optional, for vendors
    # that print one); a bare "fp32" on the CLI and in forms still means the vector rate.
    assert h100.path("fp32") is None and h100.status("fp32") == "not given"
    assert ("tensor", "fp32") not in [(u, p) for u, p, _ in h100.all_paths()]
    with pytest.raises(InputError, match=r"unknown unit 'simd'"):
        h100.path("fp32", "simd")
    with pytest.raises(InputError, match=r"the vector unit has no 'fp8' rate"):
        h100.peak_tflops("fp8", unit="vector")


# --- which ceiling a kernel meets -------------------------------------------------------------


MATRIX = ("gemm", "attention", "attention-naive", "decode-attention", "attention-kv")
ELEMENTWISE = ("add", "softmax", "layernorm")


def _spec(kind: str, dtype: str) -> str:
    return f"{kind}:{'x'.join('64' for _ in KERNEL_SHAPES[kind])}:{dtype}"


@pytest.mark.parametrize("kind", sorted(KERNEL_SHAPES))
@pytest.mark.parametrize("dtype", sorted(DTYPE_BYTES))
def test_each_kind_and_dtype_meets_its_ceiling(kind: str, dtype: str) -> None:
    unit, precision = kernel_ceiling(parse_kernel_spec(_spec(kind, dtype)))
    if kind in MATRIX:
        expected = ("vector", "fp32") if dtype == "fp32" else ("tensor", dtype)
    else:
        assert kind in ELEMENTWISE
        expected = ("vector", "fp64") if dtype == "fp64" else ("vector", "fp32")
    assert (unit, precision) == expected
    assert precision in UNIT_PRECISIONS[unit]


def test_done_means_fp8_gemm_on_h100_and_a100() -> None:
    p = presets()
    kernel = parse_kernel_spec("gemm:8192x8192x8192:fp8")
    h100 = kernel_roof(p["h100"], kernel)
    assert (h100.unit, h100.precision, h100.bound, h100.peak_tflops, h100.attainable_tflops) == (
        "tensor", "fp8", "compute", 1978.9, 1978.9)
    a100 = kernel_roof(p["a100"], kernel)
    assert (a100.bound, a100.peak_flops_per_s, a100.attainable_flops_per_s, a100.reason) == (
        "unsupported", None, None, "no FP8 path")


def test_fp32_gemm_meets_the_cuda_core_roof_not_the_fp16_one() -> None:
    roof = kernel_roof(presets()["h100"], parse_kernel_spec("gemm:8192x8192x8192:fp32"))
    assert (roof.unit, roof.precision, roof.bound, roof.peak_tflops) == ("vector", "fp32", "compute", 66.9)
    assert roof.ridge_flop_per_byte == pytest.approx(66.9 / 3.35)


@pytest.mark.parametrize(
    ("preset_id", "spec", "reason"),
    [
        ("a100", "gemm:4096x4096x4096:fp8", "no FP8 path"),
        ("h100", "gemm:4096x4096x4096:fp4", "no FP4 path"),
        ("rtx-4090", "gemm:4096x4096x4096:fp64", "no FP64 path"),
        ("h100", "gemm:4096x4096x4096:fp64:sparse", "no 2:4 sparse FP64 tensor path"),
        ("a100", "gemm:4096x4096x4096:fp8:sparse", "no FP8 path"),
    ],
)
def test_unsupported_paths_never_fall_back(preset_id: str, spec: str, reason: str) -> None:
    roof = kernel_roof(presets()[preset_id], parse_kernel_spec(spec))
    assert roof.bound == "unsupported"
    assert (roof.peak_flops_per_s, roof.attainable_flops_per_s, roof.ridge_flop_per_byte, roof.peak_tflops) == (
        None, None, None, None)
    assert roof.reason == reason


def test_elementwise_fp64_meets_the_fp64_vector_roof_even_without_an_fp64_tensor_path() -> None:
    roof = kernel_roof(presets()["rtx-4090"], parse_kernel_spec("add:1048576:fp64"))
    assert (roof.unit, roof.precision, roof.bound, roof.peak_tflops) == ("vector", "fp64", "memory", 1.3)
    assert roof.attainable_flops_per_s == pytest.approx(1.008e12 / 24)  # 1 FLOP per 24 bytes


def test_a_kernel_exactly_at_the_ridge_is_compute_bound() -> None:
    # fp8 square GEMM n=375: 2n³ FLOPs over 3n² bytes = 250 FLOP/byte = 1000 TFLOP/s ÷ 4 TB/s.
    preset = Preset(id="gpu", name="GPU", dense_fp16_tflops=500, memory_bandwidth_tbps=4, structured_sparsity=True,
                    sources=(Source("t", "https://example.com"),), file="gpu.yaml",
                    peaks=(PeakPath("tensor", "fp8", 1000.0, True),))
    kernel = gemm(375, 375, 375, dtype="fp8")
    assert kernel.intensity_flop_per_byte == 250.0
    roof = kernel_roof(preset, kernel)
    assert roof.ridge_flop_per_byte == 250.0
    assert roof.bound == "compute"
    assert roof.attainable_flops_per_s == roof.peak_flops_per_s == 1e15
    just_below = gemm(374, 375, 375, dtype="fp8")
    assert kernel_roof(preset, just_below).bound == "memory"


# --- sparse kernels --------------------------------------------------------------------------


def test_sparse_gemm_halves_only_the_weight_bytes() -> None:
    dense = parse_kernel_spec("gemm:1024x4096x2048:fp8")
    sparse = parse_kernel_spec("gemm:1024x4096x2048:fp8:sparse")
    assert sparse.sparse and not dense.sparse
    assert sparse.flops == dense.flops == 2 * 1024 * 4096 * 2048  # dense-equivalent, as vendors count
    assert dense.bytes_moved - sparse.bytes_moved == 2048 * 4096 / 2  # K×N weights, 1 byte each, half kept
    assert sparse.spec == "gemm:1024x4096x2048:fp8:sparse"
    assert sparse.label == "GEMM 1024×4096×2048 fp8 2:4 sparse"
    assert parse_kernel_spec(sparse.spec) == sparse
    assert parse_kernel_spec("gemm:8x8x8:sparse").dtype == "bf16"


def test_sparse_kernel_meets_the_sparse_roof_and_dense_kernels_never_do() -> None:
    h100 = presets()["h100"]
    sparse = parse_kernel_spec("gemm:8192x8192x8192:fp8:sparse")
    dense = parse_kernel_spec("gemm:8192x8192x8192:fp8")
    for toggle in (False, True):
        sparse_roof = kernel_roof(h100, sparse, sparsity=toggle)
        dense_roof = kernel_roof(h100, dense, sparsity=toggle)
        assert (sparse_roof.sparse, sparse_roof.peak_tflops) == (True, pytest.approx(3957.8))
        assert (dense_roof.sparse, dense_roof.peak_tflops) == (False, 1978.9)
        assert sparse_roof.label == "FP8 tensor 2:4 sparse"


def test_sparse_kernel_on_a_preset_without_sparsity_is_unsupported(tmp_path: Path) -> None:
    preset = load_preset(write(tmp_path, ORIGINAL.replace("structured_sparsity: true", "structured_sparsity: false")))
    roof = kernel_roof(preset, parse_kernel_spec("gemm:64x64x64:bf16:sparse"))
    assert (roof.bound, roof.reason) == ("unsupported", "no 2:4 sparse BF16 tensor path")


def test_ceiling_at_per_precision() -> None:
    p = presets()
    line = ceiling_at(p["b200"], "fp4", sparsity=True)
    assert line is not None and (line.unit, line.precision, line.sparse) == ("tensor", "fp4", True)
    assert line.peak_flops_per_s == pytest.approx(18e15)
    assert ceiling_at(p["h100"], "fp4") is None
    vector = ceiling_at(p["h100"], "fp32", unit="vector", sparsity=True)
    assert vector is not None and not vector.sparse and vector.peak_flops_per_s == pytest.approx(66.9e12)
    default = ceiling_at(p["h100"], "bf16")
    assert default is not None and default.peak_flops_per_s == ceiling(p["h100"]).peak_flops_per_s


# --- properties -----------------------------------------------------------------------------


rates = st.floats(min_value=1e-3, max_value=1e6, allow_nan=False, allow_infinity=False)
paths = st.sampled_from([(u, p) for u in UNITS for p in UNIT_PRECISIONS[u]])
def _shape(kind: str, dims: list[int]) -> str:
    dims = dims[: len(KERNEL_SHAPES[kind])]
    if "KV" in KERNEL_SHAPES[kind]:  # H = a whole number of groups of KV heads
        dims[1] *= dims[2]
    return "x".join(str(d) for d in dims)


specs = st.builds(
    lambda kind, dims, dtype: f"{kind}:{_shape(kind, dims)}:{dtype}"
    + (":sparse" if kind == "gemm" and dims[0] % 2 else ""),
    st.sampled_from(sorted(KERNEL_SHAPES)), st.lists(st.integers(1, 1 << 14), min_size=6, max_size=6),
    st.sampled_from(sorted(DTYPE_BYTES)),
)


def _preset_with(rate: float, bandwidth: float, supported: bool, given_paths: list[tuple[str, str]]) -> Preset:
    peaks = tuple(PeakPath(u, p, rate * (i + 1), supported and u == "tensor" and p != "fp64")
                  for i, (u, p) in enumerate(given_paths) if (u, p) not in (("tensor", "fp16"), ("tensor", "bf16")))
    return Preset(id="gpu", name="GPU", dense_fp16_tflops=rate, memory_bandwidth_tbps=bandwidth,
                  structured_sparsity=supported, sources=(), file="gpu.yaml", peaks=peaks)


@given(rate=rates, bandwidth=rates, supported=st.booleans(), chosen=st.lists(paths, unique=True), spec=specs,
       toggle=st.booleans())
def test_attainable_never_exceeds_the_roof_of_its_own_precision(
    rate: float, bandwidth: float, supported: bool, chosen: list[tuple[str, str]], spec: str, toggle: bool
) -> None:
    preset = _preset_with(rate, bandwidth, supported, chosen)
    kernel = parse_kernel_spec(spec)
    roof = kernel_roof(preset, kernel, sparsity=toggle)
    unit, precision = kernel_ceiling(kernel)
    assert (roof.unit, roof.precision) == (unit, precision)
    path = preset.path(precision, unit)
    own = path.peak_tflops(sparsity=kernel.sparse) if path is not None else None
    if own is None or (kernel.sparse and path is not None and not path.sparse_supported):
        assert roof.bound in ("unsupported", "unknown") and roof.attainable_flops_per_s is None
        assert roof.bound == ("unknown" if preset.status(precision, unit) == "not given" else "unsupported")
    else:
        assert roof.attainable_flops_per_s is not None and roof.peak_flops_per_s is not None
        assert roof.peak_flops_per_s == pytest.approx(own * 1e12)
        assert roof.attainable_flops_per_s <= roof.peak_flops_per_s
        slope = preset.memory_bandwidth_bytes_per_s * kernel.intensity_flop_per_byte
        assert roof.attainable_flops_per_s <= slope * (1 + 1e-12)
    # The chart's toggle never moves a kernel.
    assert kernel_roof(preset, kernel, sparsity=not toggle) == roof


@given(rate=rates, bandwidth=rates, supported=st.booleans(), chosen=st.lists(paths, unique=True), path=paths)
def test_sparsity_changes_only_tensor_ceilings(
    rate: float, bandwidth: float, supported: bool, chosen: list[tuple[str, str]], path: tuple[str, str]
) -> None:
    preset = _preset_with(rate, bandwidth, supported, chosen)
    unit, precision = path
    dense = ceiling_at(preset, precision, unit=unit)
    sparse = ceiling_at(preset, precision, unit=unit, sparsity=True)
    if dense is None:
        assert sparse is None
        return
    assert sparse is not None
    assert sparse.memory_bandwidth_bytes_per_s == dense.memory_bandwidth_bytes_per_s
    factor = sparse.peak_flops_per_s / dense.peak_flops_per_s
    if unit == "vector":
        assert factor == 1.0 and not sparse.sparse
    else:
        assert factor == (2.0 if sparse.sparse else 1.0)


# What a preset file may state (hardware.PLAUSIBLE_*): bandwidth 0.05-100 TB/s, a ridge of 1-10,000 FLOP/byte.
plausible_bandwidths = st.floats(min_value=0.05, max_value=100, allow_nan=False)
plausible_ridges = st.floats(min_value=1, max_value=1000, allow_nan=False)


@given(bandwidth=plausible_bandwidths, ridge=plausible_ridges, supported=st.booleans(), intensity=rates)
def test_a_file_with_only_the_original_keys_behaves_as_before(
    bandwidth: float, ridge: float, supported: bool, intensity: float
) -> None:
    import tempfile

    assume(not supported or ridge <= SPARSE_RIDGE_FLOP_PER_BYTE)  # past it, a part with 2:4 sparsity is refused
    rate = ridge * bandwidth

    text = (f"name: Old GPU\ndense_fp16_tflops: {rate!r}\nmemory_bandwidth_tbps: {bandwidth!r}\n"
            f"structured_sparsity: {str(supported).lower()}\n" + SOURCES)
    with tempfile.TemporaryDirectory() as folder:
        preset = load_preset(write(Path(folder), text))
    # Today's figures, computed as the code before per-precision peaks did.
    for sparse in (False, True):
        old_peak = rate * 1e12 * (2.0 if sparse and supported else 1.0)
        assert preset.peak_flops_per_s(sparse) == old_peak
        assert preset.ridge_flop_per_byte(sparse) == old_peak / (bandwidth * 1e12)
        line = ceiling(preset, sparse)
        assert (line.peak_flops_per_s, line.sparse) == (old_peak, sparse and supported)
    assert preset.peaks == ()
    for unit, precision, path in preset.all_paths():
        if unit == "tensor" and precision in ("fp16", "bf16"):
            assert path is not None and path.dense_tflops == rate and path.sparse_supported is supported
        else:
            assert path is None and preset.status(precision, unit) == "not given"
    # A bf16 or fp16 matrix kernel meets the same roof as before.
    kernel = gemm(64, 64, 64, dtype="fp16")
    roof = kernel_roof(preset, kernel)
    old_bound = bound_at(kernel.intensity_flop_per_byte, preset.peak_flops_per_s(), preset.memory_bandwidth_bytes_per_s)
    assert roof.bound == old_bound
    assert roof.peak_flops_per_s == preset.peak_flops_per_s()


def test_not_given_is_not_no_path(tmp_path: Path) -> None:
    preset = load_preset(write(tmp_path, ORIGINAL + "peaks:\n  tensor:\n    fp8: none\n"))
    assert preset.status("fp8") == "no path"
    assert preset.status("fp4") == "not given"
    assert preset.peak_tflops("fp8") is None and preset.peak_tflops("fp4") is None
    assert kernel_roof(preset, parse_kernel_spec("gemm:64x64x64:fp8")).bound == "unsupported"
    roof = kernel_roof(preset, parse_kernel_spec("gemm:64x64x64:fp4"))
    # The file's folder and name only: a published page never shows the build machine's folders.
    assert (roof.bound, roof.reason) == ("unknown", f"FP4 tensor rate not given in {tmp_path.name}/gpu.yaml")


# --- preset files with per-precision keys ----------------------------------------------------------


def test_peak_forms_load(tmp_path: Path) -> None:
    text = ORIGINAL + (
        "peaks:\n  tensor:\n    fp8: {dense_tflops: 200, sparse_tflops: 400, source: 1, note: from the table}\n"
        "    fp4: ~\n    fp64: {dense_tflops: 10, structured_sparsity: false}\n    int8: 200\n"
        "    bf16: 100\n  vector:\n    fp32: 5\n    fp64: none\n"
    )
    preset = load_preset(write(tmp_path, text))
    fp8 = preset.path("fp8")
    assert fp8 == PeakPath("tensor", "fp8", 200.0, True, 400.0, Source("Vendor table", "https://example.com/spec"),
                           "from the table")
    assert preset.status("fp4") == "no path" and preset.status("fp64", "vector") == "no path"
    assert preset.path("fp64") == PeakPath("tensor", "fp64", 10.0, False)
    assert preset.peak_tflops("int8", sparsity=True) == 400  # follows the file's structured_sparsity
    assert preset.peak_tflops("fp32", unit="vector", sparsity=True) == 5


def test_system_totals_divide_every_figure(tmp_path: Path) -> None:
    text = ("name: Box\nsystem: Box 4\ngpu_count: 4\nsystem_dense_fp16_tflops: 1000\nsystem_memory_bandwidth_tbps: 10\n"
            "system_peaks:\n  tensor:\n    fp8: {dense_tflops: 2000, sparse_tflops: 4000}\n  vector:\n    fp32: 100\n"
            + SOURCES)
    preset = load_preset(write(tmp_path, text))
    fp8 = preset.path("fp8")
    assert fp8 is not None and (fp8.dense_tflops, fp8.printed_sparse_tflops) == (500.0, 1000.0)
    assert fp8.derivation == "Box 4 totals ÷ 4 GPUs: 2 PFLOP/s → 500 TFLOP/s"
    assert preset.peak_tflops("fp32", unit="vector") == 25.0
    assert preset.ridge_flop_per_byte(precision="fp8") == pytest.approx(200.0)


BAD_PEAKS = [
    ("sparse typed as dense", "peaks:\n  tensor:\n    fp8: {dense_tflops: 3957.8, sparse_tflops: 3957.8}\n",
     "'peaks.tensor.fp8.sparse_tflops' must be 2 × 'peaks.tensor.fp8.dense_tflops' (2:4 sparsity doubles the "
     "dense rate): sparse 3957.8, dense 3957.8; is a sparse figure typed as dense, or a dense one as sparse?"),
    ("dense typed as sparse", "peaks:\n  tensor:\n    tf32: {dense_tflops: 100, sparse_tflops: 100}\n",
     "sparse 100, dense 100"),
    ("fp16 disagrees", "peaks:\n  tensor:\n    bf16: 200\n",
     "'peaks.tensor.bf16' must equal 'dense_fp16_tflops' (100), the FP16/BF16 tensor rate: 200"),
    ("fp16 none", "peaks:\n  tensor:\n    fp16: none\n", "'peaks.tensor.fp16' cannot be none"),
    ("fp16 sparsity disagrees", "peaks:\n  tensor:\n    fp16: {dense_tflops: 100, structured_sparsity: false}\n",
     "'peaks.tensor.fp16' says 2:4 sparsity is not supported but 'structured_sparsity' is true"),
    ("vector tf32", "peaks:\n  vector:\n    tf32: 10\n",
     "unknown precision 'peaks.vector.tf32' (tensor units have it: write it under peaks.tensor); vector precisions: "
     "fp64, fp32"),
    ("unknown unit", "peaks:\n  cuda:\n    fp32: 10\n", "unknown unit 'peaks.cuda'; units: tensor, vector"),
    ("vector sparse", "peaks:\n  vector:\n    fp32: {dense_tflops: 10, sparse_tflops: 20}\n",
     "'peaks.vector.fp32': vector (CUDA-core) rates have no 2:4 sparse path"),
    ("negative", "peaks:\n  tensor:\n    fp8: -5\n", "'peaks.tensor.fp8' must be a finite number > 0: -5"),
    ("string", "peaks:\n  tensor:\n    fp8: fast\n",
     "'peaks.tensor.fp8' must be a number (dense TFLOP/s), none (no such path) or a mapping with 'dense_tflops', "
     "not a string: 'fast'"),
    ("no dense", "peaks:\n  tensor:\n    fp8: {sparse_tflops: 20}\n",
     "missing required key 'peaks.tensor.fp8.dense_tflops'"),
    ("unknown entry key", "peaks:\n  tensor:\n    fp8: {dense_tflops: 10, colour: red}\n",
     "unknown key 'peaks.tensor.fp8.colour'"),
    ("source out of range", "peaks:\n  tensor:\n    fp8: {dense_tflops: 10, source: 2}\n",
     "'peaks.tensor.fp8.source' must be a source number from 1 to 1 (its place in 'sources'): 2"),
    ("sparse but unsupported",
     "peaks:\n  tensor:\n    fp8: {dense_tflops: 10, sparse_tflops: 20, structured_sparsity: false}\n",
     "'peaks.tensor.fp8' gives 'sparse_tflops' but says structured_sparsity: false"),
    ("not a mapping", "peaks: [fp8]\n",
     "'peaks' must be a mapping of units (tensor, vector) to precisions, not a list"),
    ("system peaks beside per-GPU figures", "system_peaks:\n  tensor:\n    fp8: 10\n",
     "'dense_fp16_tflops' cannot be combined with system totals"),
]


@pytest.mark.parametrize(("case", "extra", "expected"), BAD_PEAKS, ids=[c for c, _, _ in BAD_PEAKS])
def test_bad_peaks_are_one_line_naming_file_key_and_values(
    tmp_path: Path, case: str, extra: str, expected: str
) -> None:
    path = write(tmp_path, ORIGINAL + extra)
    with pytest.raises(InputError) as caught:
        load_presets(tmp_path)
    message = str(caught.value)
    assert names_the_file(message, path) and "\n" not in message
    assert expected in message


def test_peaks_beside_system_totals_are_refused(tmp_path: Path) -> None:
    text = ("name: Box\ngpu_count: 4\nsystem_dense_fp16_tflops: 1000\nsystem_memory_bandwidth_tbps: 10\n"
            "peaks:\n  tensor:\n    fp8: 10\n" + SOURCES)
    with pytest.raises(InputError, match=r"'peaks' cannot be combined with system totals"):
        load_preset(write(tmp_path, text))


def test_the_schema_describes_the_new_keys(tmp_path: Path) -> None:
    schema = preset_schema()
    for path in sorted([*SHIPPED_PRESETS.glob("*.yaml"), *PRESETS_DIR.glob("*.yaml")]):
        jsonschema.validate(yaml.safe_load(path.read_text(encoding="utf-8")), schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(yaml.safe_load(ORIGINAL + "peaks:\n  vector:\n    tf32: 10\n"), schema)
    jsonschema.validate(yaml.safe_load(ORIGINAL + "peaks:\n  tensor:\n    fp32: 10\n"), schema)  # AMD's FP32 matrix
    tensor = schema["$defs"]["peaks"]["properties"]["tensor"]["properties"]
    assert tuple(tensor) == FILE_PRECISIONS["tensor"] == (*UNIT_PRECISIONS["tensor"], "fp32")
    assert tuple(schema["$defs"]["peaks"]["properties"]["vector"]["properties"]) == FILE_PRECISIONS["vector"]
    # FP16 and BF16 off the matrix units: optional, as NVIDIA prints them for some parts only (A100: 78 and 39).
    assert FILE_PRECISIONS["vector"] == (*UNIT_PRECISIONS["vector"], "fp16", "bf16")
    jsonschema.validate(yaml.safe_load(ORIGINAL + "peaks:\n  vector:\n    fp16: 78\n    bf16: 39\n"), schema)
    assert set(PRECISIONS) == set(UNIT_PRECISIONS["tensor"]) | set(UNIT_PRECISIONS["vector"])


def test_preset_file_path_is_kept_as_file() -> None:
    h100 = preset_by_id(load_presets(PRESETS_DIR), "h100")
    assert h100.file.endswith("h100.yaml")
    legacy = Preset(id="x", name="X", dense_fp16_tflops=1, memory_bandwidth_tbps=1, structured_sparsity=False,
                    sources=(), path="x.yaml")
    assert legacy.file == "x.yaml"


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"unit": "vector", "precision": "tf32", "dense_tflops": 1.0}, "the vector unit has no 'tf32' rate"),
        ({"unit": "vector", "precision": "fp32", "dense_tflops": -1.0}, "'dense_tflops' must be a finite number > 0"),
        ({"unit": "vector", "precision": "fp32", "dense_tflops": 1.0, "sparse_supported": True}, "2:4 sparse mode"),
        ({"unit": "tensor", "precision": "fp8", "dense_tflops": None, "sparse_supported": True}, "2:4 sparse mode"),
    ],
)
def test_peak_paths_refuse_impossible_values(fields: dict, message: str) -> None:
    with pytest.raises(InputError, match=re.escape(message)):
        PeakPath(**fields)
