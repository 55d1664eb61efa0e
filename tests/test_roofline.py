"""The roofline: attainable = min(peak, bandwidth × intensity); ridge = peak ÷ bandwidth."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ainotes.base.errors import InputError
from ainotes.core.hardware import Preset, Source, preset_by_id
from ainotes.core.roofline import Ceiling, attainable_flops_per_s, bound_at, ceiling, ridge_point_flop_per_byte
from ainotes.presets.gpus import load_presets
from preset_support import FIXTURE_PRESETS

PRESETS_DIR = FIXTURE_PRESETS  # the published NVIDIA figures, whatever ships in presets/

intensities = st.floats(min_value=1e-4, max_value=1e6, allow_nan=False, allow_infinity=False)
peaks = st.floats(min_value=1e9, max_value=1e17, allow_nan=False, allow_infinity=False)
bandwidths = st.floats(min_value=1e9, max_value=1e14, allow_nan=False, allow_infinity=False)


def make_preset(dense_tflops: float, bandwidth_tbps: float, sparsity: bool) -> Preset:
    return Preset(
        id="gpu", name="GPU", dense_fp16_tflops=dense_tflops, memory_bandwidth_tbps=bandwidth_tbps,
        structured_sparsity=sparsity, sources=(Source("t", "https://example.com"),), path="gpu.yaml",
    )


def test_h100_ridge_and_bounds() -> None:
    h100 = preset_by_id(load_presets(PRESETS_DIR), "h100")
    line = ceiling(h100)
    assert line.ridge_flop_per_byte == pytest.approx(989.4 / 3.35)
    # A bf16 element-wise add (1/6 FLOP/byte) is memory-bound: 3.35 TB/s × 1/6.
    attainable = attainable_flops_per_s(1 / 6, line.peak_flops_per_s, line.memory_bandwidth_bytes_per_s)
    assert attainable == pytest.approx(3.35e12 / 6)
    assert bound_at(1 / 6, line.peak_flops_per_s, line.memory_bandwidth_bytes_per_s) == "memory"
    # A large GEMM (8192/3 FLOP/byte in bf16) reaches the flat ceiling.
    assert attainable_flops_per_s(8192 / 3, line.peak_flops_per_s, line.memory_bandwidth_bytes_per_s) == 989.4e12
    assert bound_at(8192 / 3, line.peak_flops_per_s, line.memory_bandwidth_bytes_per_s) == "compute"


def test_b200_ridge() -> None:
    b200 = preset_by_id(load_presets(PRESETS_DIR), "b200")
    assert ceiling(b200).ridge_flop_per_byte == pytest.approx(281.25)
    assert ceiling(b200, sparsity=True).ridge_flop_per_byte == pytest.approx(562.5)


def test_sparsity_doubles_only_a_supported_flat_ceiling() -> None:
    supported = ceiling(make_preset(100, 1, True), sparsity=True)
    unsupported = ceiling(make_preset(100, 1, False), sparsity=True)
    assert (supported.sparse, supported.peak_flops_per_s) == (True, 200e12)
    assert (unsupported.sparse, unsupported.peak_flops_per_s) == (False, 100e12)
    assert supported.memory_bandwidth_bytes_per_s == unsupported.memory_bandwidth_bytes_per_s == 1e12


@given(intensity=intensities, peak=peaks, bandwidth=bandwidths)
def test_attainable_is_under_both_ceilings_and_on_one_of_them(intensity: float, peak: float, bandwidth: float) -> None:
    attainable = attainable_flops_per_s(intensity, peak, bandwidth)
    assert attainable <= peak
    assert attainable <= bandwidth * intensity
    assert attainable in (peak, bandwidth * intensity)


@given(intensity=intensities, peak=peaks, bandwidth=bandwidths)
def test_bound_matches_which_ceiling_binds(intensity: float, peak: float, bandwidth: float) -> None:
    ridge = ridge_point_flop_per_byte(peak, bandwidth)
    expected = "memory" if intensity < ridge else "compute"
    assert bound_at(intensity, peak, bandwidth) == expected


@given(peak=peaks, bandwidth=bandwidths, low=st.floats(1e-3, 1e2), span=st.floats(1.01, 1e6))
def test_vertices_lie_on_the_ceiling(peak: float, bandwidth: float, low: float, span: float) -> None:
    line = Ceiling("gpu", "GPU", False, peak, bandwidth, ridge_point_flop_per_byte(peak, bandwidth))
    high = low * span
    points = line.vertices(low, high)
    assert len(points) == 3
    assert points[0][0] == low and points[-1][0] == high
    xs = [x for x, _ in points]
    assert xs == sorted(xs)
    for x, y in points:
        assert y == pytest.approx(min(peak, bandwidth * x), rel=1e-12)
    assert points[1][0] == min(max(line.ridge_flop_per_byte, low), high)


def test_vertices_put_the_corner_at_the_ridge() -> None:
    line = ceiling(make_preset(1000, 4, False))  # ridge 250 FLOP/byte
    assert line.vertices(0.1, 1e4) == ((0.1, 0.1 * 4e12), (250.0, 1e15), (1e4, 1e15))


@pytest.mark.parametrize(
    ("arguments", "name"),
    [
        ((0.0, 1e12, 1e12), "intensity_flop_per_byte"),
        ((-1.0, 1e12, 1e12), "intensity_flop_per_byte"),
        ((1.0, math.nan, 1e12), "peak_flops_per_s"),
        ((1.0, 1e12, math.inf), "memory_bandwidth_bytes_per_s"),
    ],
)
def test_impossible_arguments_are_named(arguments: tuple[float, float, float], name: str) -> None:
    with pytest.raises(InputError, match=f"'{name}' must be a finite number > 0"):
        attainable_flops_per_s(*arguments)


def test_vertices_need_an_increasing_range() -> None:
    line = ceiling(make_preset(1000, 4, False))
    with pytest.raises(InputError, match=r"'intensity_min' must be < 'intensity_max': 10\.0 >= 1\.0"):
        line.vertices(10.0, 1.0)
