"""Kernels serving needs: attention against a KV cache with KV heads, a stored operand narrower than
the compute dtype, whole packed bytes for 4-bit tensors, and a model's layer on the roofline fence."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ainotes.base.errors import InputError
from ainotes.build.site import NotesSite
from ainotes.core.kernels import attention, attention_kv, decode_attention, gemm, parse_kernel_spec, tensor_bytes
from ainotes.core.roofline import kernel_roof
from ainotes.markdown.extension import convert_page
from ainotes.presets.gpus import load_presets

FIXTURES = Path(__file__).parent / "fixtures" / "inference"
GPU = {p.id: p for p in load_presets(FIXTURES)}["lab-gpu"]


# --- packed 4-bit tensors ----------------------------------------------------------------------------


def test_a_one_element_fp4_gemm_moves_three_whole_bytes() -> None:
    kernel = parse_kernel_spec("gemm:1x1x1:fp4")
    assert kernel.bytes_moved == 3  # one byte per operand: half a byte cannot be read


@pytest.mark.parametrize(("elements", "dtype", "expected"), [
    (1, "fp4", 1), (2, "fp4", 1), (3, "fp4", 2), (4096, "fp4", 2048), (3, "int4", 2), (3, "bf16", 6), (5, "fp8", 5),
])
def test_a_tensor_takes_whole_bytes(elements: int, dtype: str, expected: int) -> None:
    assert tensor_bytes(elements, dtype) == expected


def test_even_fp4_shapes_move_half_a_byte_per_element_as_before() -> None:
    assert parse_kernel_spec("gemm:4096x4096x4096:fp4").bytes_moved == 3 * 4096 * 4096 / 2
    assert parse_kernel_spec("add:3:fp4").bytes_moved == 3 * 2  # three tensors of 1.5 bytes → 2 each


# --- mixed dtypes ------------------------------------------------------------------------------------


def test_8_bit_weights_with_bf16_activations_meet_the_bf16_roof_with_their_own_bytes() -> None:
    m, n, k = 16, 8192, 8192
    kernel = parse_kernel_spec(f"gemm:{m}x{n}x{k}:fp8:bf16")
    assert (kernel.dtype, kernel.storage_dtype, kernel.spec) == ("bf16", "fp8", f"gemm:{m}x{n}x{k}:fp8:bf16")
    assert kernel.bytes_moved == m * k * 2 + k * n * 1 + m * n * 2
    assert kernel.flops == 2 * m * n * k
    roof = kernel_roof(GPU, kernel)
    assert (roof.unit, roof.precision, roof.peak_tflops) == ("tensor", "bf16", 989.4)
    assert roof.bound == "memory"
    # The same GEMM all in fp8 would meet the (twice higher) FP8 roof.
    assert kernel_roof(GPU, parse_kernel_spec(f"gemm:{m}x{n}x{k}:fp8")).precision == "fp8"


def test_4_bit_weights_halve_the_weight_bytes_again() -> None:
    eight = parse_kernel_spec("gemm:1x8192x8192:int8:bf16")
    four = parse_kernel_spec("gemm:1x8192x8192:int4:bf16")
    fp4 = parse_kernel_spec("gemm:1x8192x8192:fp4:bf16")
    activations = (8192 + 8192) * 2
    assert four.bytes_moved - activations == (eight.bytes_moved - activations) / 2 == fp4.bytes_moved - activations
    assert kernel_roof(GPU, four).precision == "bf16"  # the roof of the compute dtype, never int4's


def test_one_dtype_means_the_same_as_before() -> None:
    assert parse_kernel_spec("gemm:8x8x8:fp8:fp8") == parse_kernel_spec("gemm:8x8x8:fp8")
    assert parse_kernel_spec("gemm:8x8x8:fp8").storage_dtype is None


def test_sparse_weights_may_be_narrower_too() -> None:
    kernel = parse_kernel_spec("gemm:8x8x8:fp8:bf16:sparse")
    assert kernel.sparse and kernel.spec == "gemm:8x8x8:fp8:bf16:sparse"
    assert kernel.bytes_moved == 8 * 8 * 2 + 8 * 8 / 2 + 8 * 8 * 2


# --- attention against a KV cache --------------------------------------------------------------------


@given(b=st.integers(1, 256), s=st.integers(1, 1 << 16), group=st.sampled_from([1, 4, 8]))
def test_decode_attention_intensity_does_not_grow_with_the_batch(b: int, s: int, group: int) -> None:
    one = decode_attention(1, 8 * group, 8, s, 128)
    many = decode_attention(b, 8 * group, 8, s, 128)
    assert many.intensity_flop_per_byte == pytest.approx(one.intensity_flop_per_byte, rel=1e-12)
    assert many.intensity_flop_per_byte < 2 * group  # about the group size, at 2 bytes per element


def test_decode_attention_reads_every_cached_key_and_value_once() -> None:
    b, h, kv, s, d = 4, 64, 8, 4096, 128
    kernel = parse_kernel_spec(f"decode-attention:{b}x{h}x{kv}x{s}x{d}")
    assert kernel.bytes_moved == (2 * b * kv * s * d + 2 * b * h * d) * 2  # K and V, then Q and O
    assert kernel.flops == 4 * b * h * s * d + 5 * b * h * s
    assert kernel_roof(GPU, kernel).bound == "memory"


def test_an_fp8_kv_cache_halves_the_cache_bytes_only() -> None:
    b, h, kv, s, d = 4, 64, 8, 4096, 128
    bf16 = parse_kernel_spec(f"decode-attention:{b}x{h}x{kv}x{s}x{d}")
    fp8 = parse_kernel_spec(f"decode-attention:{b}x{h}x{kv}x{s}x{d}:fp8:bf16")
    assert bf16.bytes_moved - fp8.bytes_moved == 2 * b * kv * s * d  # one byte saved per cached element
    assert kernel_roof(GPU, fp8).precision == "bf16"


def test_decode_attention_is_attention_kv_with_one_query() -> None:
    one, general = decode_attention(2, 32, 8, 1000, 64), attention_kv(2, 32, 8, 1, 1000, 64)
    assert (one.flops, one.bytes_moved) == (general.flops, general.bytes_moved)


@given(b=st.integers(1, 8), h=st.integers(1, 64), s=st.integers(1, 4096), d=st.sampled_from([64, 128]))
def test_attention_kv_with_every_head_its_own_kv_is_fused_attention(b: int, h: int, s: int, d: int) -> None:
    fused, general = attention(b, h, s, d), attention_kv(b, h, h, s, s, d)
    assert (general.flops, general.bytes_moved) == (fused.flops, fused.bytes_moved)


def test_grouped_query_heads_share_their_kv_bytes() -> None:
    mha = attention_kv(1, 64, 64, 2048, 2048, 128)
    gqa = attention_kv(1, 64, 8, 2048, 2048, 128)
    assert gqa.flops == mha.flops and gqa.bytes_moved < mha.bytes_moved


BAD = [
    ("gemm:4x4x4:bf16:fp8", "bf16 weights are wider than the fp8 compute dtype"),
    ("decode-attention:1x8x8x64x64:bf16:fp8", "bf16 KV cache are wider than the fp8 compute dtype"),
    ("add:4:fp8:bf16", "only gemm, decode-attention, attention-kv kernels take two dtypes"),
    ("gemm:4x4x4:int4", "int4 is a storage dtype only"),
    ("gemm:4x4x4:int4:int4", "int4 is a storage dtype only"),
    ("gemm:4x4x4:int3:bf16", "unknown storage dtype 'int3'"),
    ("decode-attention:1x6x4x8x8", "H (6) must be a multiple of KV (4)"),
    ("attention-kv:1x8x8x8x8", "attention-kv takes 6 dimensions BxHxKVxTxSxD, got 5"),
    ("decode-attention:1x8x0x8x8", "dimension KV must be >= 1: 0"),
    ("gemm:4x4x4:sparse:fp8", "':sparse' goes last"),
]


@pytest.mark.parametrize(("spec", "expected"), BAD)
def test_bad_serving_specs_are_one_line(spec: str, expected: str) -> None:
    with pytest.raises(InputError) as caught:
        parse_kernel_spec(spec)
    assert str(caught.value).startswith(f"kernel spec {spec!r}: ") and expected in str(caught.value)


def test_builders_check_their_groups_too() -> None:
    with pytest.raises(InputError, match=r"decode-attention kernel: H \(6\) must be a multiple of KV \(4\)"):
        decode_attention(1, 6, 4, 8, 8)
    with pytest.raises(InputError, match="wider than the fp8 compute dtype"):
        gemm(1, 1, 1, "fp8", weights_dtype="bf16")


# --- a model's layer in the roofline fence -------------------------------------------------------------


@pytest.fixture(scope="module")
def site() -> NotesSite:
    return NotesSite(FIXTURES)


def page(site: NotesSite, text: str, src: str = "serve.md") -> str:
    return convert_page(site, text, src, "serve/")


def test_a_roofline_fence_places_a_decode_layer(site: NotesSite) -> None:
    body = ("```roofline\npresets: [lab-gpu]\nmodel: lab-70b\nphase: decode\nbatch: 64\ncontext: 4096\n"
            "weights_dtype: fp8\nid: layer\n```\n")
    out = page(site, "# Serve\n\n" + body)
    chart = site.charts["layer"]
    assert chart.title == "Lab 70B (Llama 3.1 70B architecture), one decode layer: batch 64, context 4,096"
    text = html.unescape(re.sub(r"<[^>]+>", " ", out))
    for label in ("QKV projection", "Attention, 1 query × 4,096 cached keys", "MLP down", "Norm before MLP"):
        assert label in text


@pytest.mark.parametrize(("body", "message"), [
    ("model: lab-7b\n", "serve.md:4: unknown model 'lab-7b' (did you mean 'lab-70b'? known: lab-13b, lab-70b, lab-moe, "
     "lab-mqa)"),
    ("presets: [lab-gpu]\nmodel: lab-70b\ntp: 3\n", "serve.md:5: 'tp' 3 does not divide the 64 attention heads"),
    ("model: lab-70b\nphase: training\n", "serve.md:5: 'phase' must be one of decode, prefill: 'training'"),
    ("batch: 8\n", "serve.md:4: 'batch' goes with 'model'"),
    ("model: lab-70b\nbatch: 0\n", "serve.md:5: 'batch' must be a whole number from 1 to 1048576: 0"),
    ("model: lab-70b\nweights_dtype: fp6\n", "serve.md:5: 'weights_dtype' must be one of"),
    ("model: lab-70b\nkernels: [add:1, add:2, add:3]\n", "serve.md:4: a roofline shows at most 12 kernels: 3 listed "
                                                       "and 10 in the layer of lab-70b"),
])
def test_layer_key_errors_name_the_page_and_line(site: NotesSite, body: str, message: str) -> None:
    with pytest.raises(InputError) as caught:
        page(site, f"# Serve\n\n```roofline\n{body}```\n")
    assert str(caught.value).startswith(message.split(": ", 1)[0] + ":")
    assert message in str(caught.value)


def test_the_kernel_command_names_both_dtypes(capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from ainotes.cli import main

    assert main(["--presets-dir", str(FIXTURES), "kernel", "gemm:16x8192x8192:fp8:bf16", "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert (record["dtype"], record["storage_dtype"]) == ("bf16", "fp8")
    assert record["bytes"] == 16 * 8192 * 2 + 8192 * 8192 + 16 * 8192 * 2
    assert {(p["id"], p["precision"]) for p in record["presets"]} >= {("lab-gpu", "bf16")}
