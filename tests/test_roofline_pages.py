"""What the roofline and arithmetic-intensity pages claim, held against the core with the shipped
presets the pages name (each claim's figures come from inline forms; these tests check the words
around them stay true)."""

from __future__ import annotations

import pytest

from ainotes.core import roofline
from ainotes.core.kernels import gemm, parse_kernel_spec
from ainotes.presets.gpus import load_presets
from sitebuild import REPO

PRESETS = {p.id: p for p in load_presets(REPO / "presets")}
PAGES = {name: (REPO / "docs" / name).read_text(encoding="utf-8")
         for name in ("roofline.md", "arithmetic-intensity.md")}


def _ridges(preset):
    return [preset.ridge_flop_per_byte(precision=p, unit=u) for u, p, path in preset.all_paths()
            if path is not None and path.dense_tflops is not None]


def test_narrower_formats_move_the_b200_right_of_the_h100_only_at_fp4():
    b200, h100 = PRESETS["b200"], PRESETS["h100"]
    assert b200.ridge_flop_per_byte() < h100.ridge_flop_per_byte()  # FP16/BF16: 281 < 295
    assert h100.ridge_flop_per_byte() < b200.ridge_flop_per_byte(precision="fp8")  # each moves right ...
    assert b200.ridge_flop_per_byte(precision="fp8") < h100.ridge_flop_per_byte(precision="fp8")  # 562.5 < 590.7
    assert b200.ridge_flop_per_byte(precision="fp4") > max(_ridges(h100))  # ... and FP4 passes them all
    assert h100.status("fp4") == "no path"
    assert "still sits left of the\nH100's" in PAGES["roofline.md"]


def test_decode_batches_cross_the_ridge_as_the_page_says():
    h100 = PRESETS["h100"]
    d = 8192
    bf16 = roofline.weight_gemm_crossing_tokens(h100.ridge_flop_per_byte(), 4 * d, d, 2)
    fp8 = roofline.weight_gemm_crossing_tokens(h100.ridge_flop_per_byte(precision="fp8"), 4 * d, d, 1)
    weight_only = roofline.weight_gemm_crossing_tokens(h100.ridge_flop_per_byte(), 4 * d, d, 1)
    assert bf16 == pytest.approx(h100.ridge_flop_per_byte(), rel=0.1)  # "near a batch equal to its ridge"
    assert fp8 == pytest.approx(bf16, rel=0.01)  # FP8 weights and arithmetic: "barely moves"
    assert weight_only == pytest.approx(bf16 / 2, rel=0.05)  # 8-bit weights, BF16 arithmetic: "roughly halves"
    # 16 sequences: near 16 FLOP/byte, far left of the H100's ridge.
    assert gemm(16, 4 * d, d).intensity_flop_per_byte == pytest.approx(16, rel=0.01)


def test_decode_attention_stays_memory_bound_at_any_batch():
    one_query = parse_kernel_spec("gemm:1x8192x128:bf16")  # one query row against 8192 cached keys
    assert "gemm:1x8192x128:bf16" in PAGES["roofline.md"]
    for preset in PRESETS.values():
        found = roofline.kernel_roof(preset, one_query)
        assert found.bound == "memory", preset.id
    # A batch of sequences, each against its own cache: the bytes grow with the FLOPs.
    for batch in (1, 8, 256):
        flops, bytes_moved = batch * one_query.flops, batch * one_query.bytes_moved
        assert flops / bytes_moved == pytest.approx(one_query.intensity_flop_per_byte)


def test_an_add_lies_left_of_every_ridge_the_presets_give():
    add = parse_kernel_spec("add:16777216:bf16")
    assert all(add.intensity_flop_per_byte < ridge for p in PRESETS.values() for ridge in _ridges(p))
    rtx = PRESETS["rtx-4090"]
    assert min(_ridges(rtx)) == rtx.ridge_flop_per_byte(precision="fp64", unit="vector")


def test_the_sparse_charts_dense_gemm_sits_on_the_dense_roof():
    kernel = parse_kernel_spec("gemm:8192x8192x8192:bf16")
    for preset_id in ("h100", "a100"):
        found = roofline.kernel_roof(PRESETS[preset_id], kernel, sparsity=True)
        assert found.attainable_flops_per_s == PRESETS[preset_id].peak_flops_per_s(sparsity=False)


@pytest.mark.parametrize("name", list(PAGES))
def test_the_pages_use_neutral_unit_words(name):
    text = PAGES[name]
    # Vendors' terms appear beside the neutral ones, never alone for the general case.
    assert "matrix units" in text and "vector units" in text
    assert "on the ordinary CUDA cores" not in text and "the CUDA cores (the" not in text
