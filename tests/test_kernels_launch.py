"""A kernel whose time at its roof is under one kernel launch says that the launch, not the roof,
bounds it (issue 29: a 1×1×1 GEMM read 0.0000015 µs on the roofline page): in the chart's kernels'
table and tooltips, and in ``ainotes kernel``. The readout's words are held against the core in
tests/test_explorer_formulas.py (evaluated by Vega)."""

from __future__ import annotations

import json

import pytest

from ainotes.charts.roofline import data
from ainotes.cli import main
from ainotes.core import roofline
from ainotes.core.kernels import LAUNCH_LATENCY_S, LAUNCH_SOURCE_URL, below_launch, parse_kernel_spec
from ainotes.presets.gpus import load_presets
from preset_support import FIXTURE_PRESETS

LAUNCH_WORDS = "launch latency, not the roof, bounds it"


@pytest.fixture(scope="module")
def h100():
    return next(p for p in load_presets(FIXTURE_PRESETS) if p.id == "h100")


def test_the_launch_line_is_a_few_microseconds_from_its_source() -> None:
    # Holistic Trace Analysis's documentation: "the launch time on the CPU side is between 5-20 microseconds".
    assert 1e-6 <= LAUNCH_LATENCY_S <= 20e-6
    assert LAUNCH_SOURCE_URL.startswith("https://") and "launch" in LAUNCH_SOURCE_URL
    assert below_launch(LAUNCH_LATENCY_S / 2) and not below_launch(LAUNCH_LATENCY_S * 2)


def test_a_1x1x1_gemm_on_an_h100_is_bounded_by_its_launch_not_its_roof(h100) -> None:
    found = roofline.kernel_roof(h100, parse_kernel_spec("gemm:1x1x1:bf16"))
    # 2 FLOPs at 6 B ÷ 3.35 TB/s × 1/3 FLOP/B ≈ 1.1 TFLOP/s: about 1.8 ps, a millionth of a launch.
    assert found.time_s == pytest.approx(2 / (3.35e12 / 3), rel=1e-3)
    text = data.kernel_cell_text(h100, found)
    assert text.startswith("memory-bound, ") and text.endswith(LAUNCH_WORDS), text


def test_a_kernel_that_outlasts_a_launch_reads_its_roof_time_alone(h100) -> None:
    found = roofline.kernel_roof(h100, parse_kernel_spec("gemm:8192x8192x8192:bf16"))
    text = data.kernel_cell_text(h100, found)
    assert text == "compute-bound, 989.4 TFLOP/s on BF16 tensor cores, 1,111 µs"  # 2·8192³ ÷ 989.4 TFLOP/s


def test_ainotes_kernel_says_the_launch_bounds_a_tiny_gemm(capsys) -> None:
    assert main(["--presets-dir", str(FIXTURE_PRESETS), "kernel", "gemm:1x1x1", "--preset", "h100"]) == 0
    out = capsys.readouterr().out
    [line] = [line for line in out.splitlines() if "launch" in line]
    assert line.startswith("Time at its roof: h100 0.00000179 µs.") and LAUNCH_WORDS in line, line
    assert "5–20 µs" in line  # the source's own range

    assert main(["--presets-dir", str(FIXTURE_PRESETS), "kernel", "gemm:1x1x1", "--preset", "h100", "--json"]) == 0
    [row] = json.loads(capsys.readouterr().out)["presets"]
    assert row["below_launch"] is True and row["time_at_roof_s"] == pytest.approx(1.79e-12, rel=1e-2)


def test_ainotes_kernel_is_silent_about_launches_for_a_large_gemm(capsys) -> None:
    assert main(["--presets-dir", str(FIXTURE_PRESETS), "kernel", "gemm:8192x8192x8192", "--preset", "h100"]) == 0
    assert "launch" not in capsys.readouterr().out
    assert main(["--presets-dir", str(FIXTURE_PRESETS), "kernel", "gemm:8192x8192x8192", "--preset", "h100",
                 "--json"]) == 0
    [row] = json.loads(capsys.readouterr().out)["presets"]
    assert row["below_launch"] is False and row["time_at_roof_s"] == pytest.approx(2 * 8192**3 / 989.4e12)
