"""Kernel FLOPs, minimum bytes and arithmetic intensity, and the spec parser's errors."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ainotes.base.errors import InputError
from ainotes.core.kernels import (
    DTYPE_BYTES,
    KERNEL_SHAPES,
    MAX_DIMENSION,
    attention,
    attention_naive,
    elementwise_add,
    gemm,
    layer_norm,
    parse_kernel_spec,
    softmax,
)


def test_square_gemm_matches_the_textbook_count() -> None:
    kernel = parse_kernel_spec("gemm:8192x8192x8192")
    assert kernel.flops == 2 * 8192**3
    assert kernel.bytes_moved == 3 * 8192**2 * 2  # three 8192² bf16 matrices, each moved once
    assert kernel.intensity_flop_per_byte == pytest.approx(8192 / 3)
    assert kernel.label == "GEMM 8192×8192×8192 bf16"
    assert (kernel.kind, kernel.dtype, kernel.spec) == ("gemm", "bf16", "gemm:8192x8192x8192:bf16")


def test_rectangular_gemm() -> None:
    kernel = gemm(16, 4096, 4096, dtype="fp8")
    assert kernel.flops == 2 * 16 * 4096 * 4096
    assert kernel.bytes_moved == (16 * 4096 + 4096 * 4096 + 16 * 4096) * 1


@pytest.mark.parametrize(("dtype", "intensity"), [("fp32", 1 / 12), ("bf16", 1 / 6), ("fp8", 1 / 3)])
def test_elementwise_add_intensity(dtype: str, intensity: float) -> None:
    kernel = parse_kernel_spec(f"add:1048576:{dtype}")
    assert kernel.flops == 1048576
    assert kernel.intensity_flop_per_byte == pytest.approx(intensity)
    assert kernel.label == f"Add 1048576 {dtype}"


def test_softmax_counts_five_flops_per_element_and_one_read_one_write() -> None:
    kernel = softmax(1024, 4096)
    assert kernel.flops == 5 * 1024 * 4096
    assert kernel.bytes_moved == 2 * 1024 * 4096 * 2
    assert kernel.intensity_flop_per_byte == pytest.approx(1.25)


def test_layer_norm_reads_x_gamma_beta_and_writes_y() -> None:
    kernel = layer_norm(8, 1024, dtype="fp32")
    assert kernel.flops == 7 * 8 * 1024
    assert kernel.bytes_moved == (2 * 8 * 1024 + 2 * 1024) * 4
    assert kernel.label == "LayerNorm 8×1024 fp32"


def test_fused_attention_moves_only_q_k_v_and_o() -> None:
    b, h, s, d = 2, 16, 4096, 128
    kernel = parse_kernel_spec(f"attention:{b}x{h}x{s}x{d}")
    assert kernel.flops == 4 * b * h * s * s * d + 5 * b * h * s * s
    assert kernel.bytes_moved == 4 * b * h * s * d * 2
    assert kernel.label == "Attention (fused) 2×16×4096×128 bf16"


def test_naive_attention_also_writes_and_reads_the_score_matrix() -> None:
    b, h, s, d = 2, 16, 4096, 128
    fused = attention(b, h, s, d)
    naive = attention_naive(b, h, s, d)
    assert naive.flops == fused.flops  # fusion changes traffic, not arithmetic
    # S written, read by softmax, P written, read by P·V: four passes over B·H·S² scores.
    assert naive.bytes_moved == fused.bytes_moved + 4 * b * h * s * s * 2
    assert naive.intensity_flop_per_byte < fused.intensity_flop_per_byte / 10
    assert naive.label == "Attention (naive) 2×16×4096×128 bf16"


def test_label_and_dtype_options() -> None:
    kernel = parse_kernel_spec(" GEMM:4096×4096×4096:FP16 ", label="  QKV projection ")
    assert (kernel.label, kernel.dtype, kernel.spec) == ("QKV projection", "fp16", "gemm:4096x4096x4096:fp16")


@given(
    kind=st.sampled_from(sorted(KERNEL_SHAPES)),
    dims=st.lists(st.integers(1, 4096), min_size=6, max_size=6),
    dtype=st.sampled_from(sorted(DTYPE_BYTES)),
)
def test_canonical_spec_round_trips(kind: str, dims: list[int], dtype: str) -> None:
    dims = dims[: len(KERNEL_SHAPES[kind])]
    if "KV" in KERNEL_SHAPES[kind]:  # query heads come in whole groups per key/value head
        dims[1] *= dims[2]
    shape = "x".join(str(d) for d in dims)
    kernel = parse_kernel_spec(f"{kind}:{shape}:{dtype}")
    assert parse_kernel_spec(kernel.spec) == kernel
    assert kernel.flops > 0 and kernel.bytes_moved > 0


@given(m=st.integers(1, 2**16), n=st.integers(1, 2**16), k=st.integers(1, 2**16))
def test_gemm_intensity_grows_linearly_with_scale(m: int, n: int, k: int) -> None:
    # Doubling every dimension multiplies FLOPs by 8 and bytes by 4.
    assert gemm(2 * m, 2 * n, 2 * k).intensity_flop_per_byte == pytest.approx(
        2 * gemm(m, n, k).intensity_flop_per_byte
    )


BAD_SPECS = [
    ("gemm", "expected KIND:SHAPE[:DTYPE][:COMPUTE][:sparse]"),
    ("", "expected KIND:SHAPE[:DTYPE][:COMPUTE][:sparse]"),
    ("gemm:1x2x3:bf16:extra", "unknown dtype 'extra'; known dtypes: fp64"),
    ("gemm:1x2x3:fp8:bf16:fp8", "expected KIND:SHAPE[:DTYPE][:COMPUTE][:sparse]"),
    ("conv:3x3", "unknown kernel kind 'conv'; known kinds: gemm, add, softmax"),
    ("gemm:1x2", "gemm takes 3 dimensions MxNxK, got 2: '1x2'"),
    ("add:4x4", "add takes 1 dimension N, got 2: '4x4'"),
    ("gemm:0x4x4", "dimension M must be >= 1: 0"),
    ("gemm:4x-4x4", "dimension N must be a whole number: '-4'"),
    ("softmax:4xfive", "dimension C must be a whole number: 'five'"),
    ("gemm:4x4x4.5", "dimension K must be a whole number: '4.5'"),
    ("gemm:4x4x4:int5", "unknown dtype 'int5'; known dtypes: fp64, fp32, tf32, fp16, bf16, fp8, fp4, int8"),
    ("gemm:4x4x4:int4", "int4 is a storage dtype only (no matrix unit computes in it): give the compute dtype "
                        "after it, as in gemm:MxNxK:int4:bf16"),
    ("add:4:fp8:sparse", "only gemm kernels can be 2:4 sparse"),
    ("gemm:4x4x4:sparse:fp8", "':sparse' goes last: gemm:MxNxK:DTYPE[:COMPUTE]:sparse"),
    (f"attention:1x1x{MAX_DIMENSION + 1}x64", f"dimension S must be <= 2**31 ({MAX_DIMENSION}): {MAX_DIMENSION + 1}"),
]


@pytest.mark.parametrize(("spec", "expected"), BAD_SPECS)
def test_bad_spec_names_the_spec_and_the_problem(spec: str, expected: str) -> None:
    with pytest.raises(InputError) as caught:
        parse_kernel_spec(spec)
    message = str(caught.value)
    assert message.startswith(f"kernel spec {spec!r}: ")
    assert expected in message


def test_largest_dimension_is_accepted() -> None:
    assert elementwise_add(MAX_DIMENSION).flops == MAX_DIMENSION


@pytest.mark.parametrize("label", ["", "two\nlines", "x" * 121])
def test_bad_labels(label: str) -> None:
    with pytest.raises(InputError, match=r"kernel 'add:4': the label must"):
        parse_kernel_spec("add:4", label=label)
