"""Inline figures per precision: {{ peak h100 fp8 }}, {{ ridge b200 fp4 }}, {{ ridges }}, kernels at their own roof."""

from __future__ import annotations

from pathlib import Path

import pytest

from ainotes.base.errors import InputError
from ainotes.inline import figures
from ainotes.presets.gpus import load_preset, load_presets
from preset_support import FIXTURE_PRESETS

PRESETS_DIR = FIXTURE_PRESETS  # the published NVIDIA figures, whatever ships in presets/
PRESETS = {p.id: p for p in load_presets(PRESETS_DIR)}


@pytest.mark.parametrize(
    ("body", "text"),
    [
        ("peak h100 fp8", "1.979 PFLOP/s"),
        ("peak h100 fp8 sparse", "3.958 PFLOP/s"),
        ("peak h100 fp32 vector", "66.9 TFLOP/s"),
        ("peak h100 fp32", "66.9 TFLOP/s"),  # fp32 alone means the CUDA-core path
        ("peak h100 vector fp64", "33.5 TFLOP/s"),
        ("peak h100 fp64", "66.9 TFLOP/s"),
        ("peak h100 tf32", "494.7 TFLOP/s"),
        ("peak a100 int8", "624 TOP/s"),
        ("peak b200 fp4", "9 PFLOP/s"),
        ("peak h100", "989.4 TFLOP/s"),  # unchanged default: FP16/BF16 tensor
        ("peak h100 sparse", "1.979 PFLOP/s"),
        ("ridge h100", "295 FLOP/byte"),
        ("ridge b200", "281 FLOP/byte"),
        ("ridge b200 fp8", "563 FLOP/byte"),  # 562.5 exactly: ties round half-up (issue 14), as the charts do
        ("ridge b200 fp4", "1,125 FLOP/byte"),
        ("ridge h100 fp32", "20 FLOP/byte"),
        ("attainable h100 gemm:8192x8192x8192:fp8", "1.979 PFLOP/s"),
        ("attainable h100 gemm:8192x8192x8192:fp32", "66.9 TFLOP/s"),
        ("attainable h100 gemm:8192x8192x8192:fp8:sparse", "3.958 PFLOP/s"),
        ("bound a100 gemm:8192x8192x8192:fp8", "unsupported (no FP8 path)"),
        ("bound h100 gemm:8192x8192x8192:fp32", "compute-bound"),
        ("bound rtx-4090 add:16777216:bf16", "memory-bound"),
    ],
)
def test_forms_per_precision(body: str, text: str) -> None:
    assert figures.evaluate(body, PRESETS) == text


def test_ridges_lists_every_preset_and_names_those_without_the_path() -> None:
    assert figures.evaluate("ridges", PRESETS) == (
        "NVIDIA B200 (HGX B200, 180 GB HBM3e) at 281 FLOP/byte, NVIDIA H100 SXM5 80 GB at 295 FLOP/byte, "
        "NVIDIA A100 80GB SXM at 153 FLOP/byte and NVIDIA GeForce RTX 4090 (24 GB) at 164 FLOP/byte")
    assert figures.evaluate("ridges fp8", PRESETS).endswith("(the NVIDIA A100 80GB SXM has no FP8 tensor path)")
    one = {"h100": PRESETS["h100"]}
    assert figures.evaluate("ridges fp4", PRESETS).startswith("NVIDIA B200 (HGX B200, 180 GB HBM3e) at 1,125")
    with pytest.raises(InputError, match=r"'ridges': no preset has a FP4 tensor ceiling"):
        figures.evaluate("ridges fp4", one)


def test_a_new_preset_joins_the_list(tmp_path: Path) -> None:
    path = tmp_path / "h200.yaml"
    path.write_text("name: NVIDIA H200\ndense_fp16_tflops: 989.4\nmemory_bandwidth_tbps: 4.8\n"
                    "sources:\n  - title: T\n    url: https://example.com/\n", encoding="utf-8")
    presets = {**PRESETS, "h200": load_preset(path)}
    assert figures.evaluate("ridges", presets).endswith("and NVIDIA H200 at 206 FLOP/byte")
    assert "the NVIDIA H200 preset does not give its FP8 tensor rate" in figures.evaluate("ridges fp8", presets)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("peak h100 fast", "'peak' does not take 'fast' (allowed: a precision"),
        ("peak h100 fp8 fp4", "'peak' takes one precision: 'fp8 fp4'"),
        ("ridge h100 sparse sparse", "'ridge' takes one sparse"),
        ("ridge h100 tf32 vector", "the vector unit has no 'tf32' rate"),
        # NVIDIA prints no matrix FP32 rate
        ("ridge h100 fp32 tensor", "preset h100 does not give its FP32 tensor rate"),
        ("peak a100 fp8", "'peak': preset a100 has no FP8 tensor path"),
        ("ridge h100 fp4", "'ridge': preset h100 has no FP4 tensor path"),
        ("peak rtx-4090 fp64 tensor", "'peak': preset rtx-4090 has no FP64 tensor path"),
        ("peak h100 precision=fp8", "'peak' takes no key=value options"),
        ("ridges h100", "'ridges' does not take 'h100'"),
        ("bound h100 gemm:8x8x8 sparse", "a 2:4 sparse kernel says so in its spec"),
        ("attainable a100 gemm:8x8x8:fp8", "'attainable': no FP8 path on a100"),
    ],
)
def test_unknown_words_and_missing_ceilings_are_errors(body: str, message: str) -> None:
    with pytest.raises(InputError) as caught:
        figures.evaluate(body, PRESETS)
    assert message in str(caught.value)


def test_not_given_is_an_error_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "old.yaml"
    path.write_text("name: Old\ndense_fp16_tflops: 100\nmemory_bandwidth_tbps: 2\n"
                    "sources:\n  - title: T\n    url: https://example.com/\n", encoding="utf-8")
    presets = {"old": load_preset(path)}
    assert figures.evaluate("peak old", presets) == "100 TFLOP/s"
    with pytest.raises(InputError,
                       match=r"'peak': preset old does not give its FP8 tensor rate in .*old\.yaml \(its peaks: FP16"):
        figures.evaluate("peak old fp8", presets)
    with pytest.raises(InputError, match=r"'bound': FP32 vector rate not given in .*old\.yaml"):
        figures.evaluate("bound old add:1024:bf16", presets)
