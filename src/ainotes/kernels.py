"""Arithmetic intensity of common kernels: FLOPs ÷ minimum bytes moved.

Every count is the ideal one: each input is read from device memory once and
each output written once (perfect on-chip reuse), so the intensity is an upper
bound for a real kernel. Bytes = elements × ``DTYPE_BYTES[dtype]``; every
operand of a kernel uses the same dtype (fp4 is half a byte per element).
Pure functions; no I/O.

Kernel spec grammar (command line and ``roofline`` fences)::

    KIND:SHAPE[:DTYPE][:sparse]        DTYPE one of fp64, fp32, tf32, fp16, bf16, fp8, fp4, int8; default bf16
    gemm:MxNxK                         (M×K) · (K×N) → M×N
    gemm:MxNxK:fp8:sparse              2:4 structured-sparse weights (gemm only): the K×N
                                       operand's bytes halve; it meets the sparse roof
    add:N                              z = x + y over N elements
    softmax:RxC                        row-wise softmax of an R×C matrix
    layernorm:RxC                      layer norm over the C columns of each of R rows
    attention:BxHxSxD                  fused attention (scores never leave the chip)
    attention-naive:BxHxSxD            unfused attention (S×S scores written to memory)

``x`` or ``×`` separates dimensions. Each dimension is a whole number from 1 to
``MAX_DIMENSION`` (2**31, the int32 index range); larger shapes are refused as
typing mistakes rather than kernels anyone runs.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from ainotes.errors import InputError
from ainotes.textcheck import bad_character

# Bytes per element. tf32 is stored as fp32; fp4 packs two elements per byte.
DTYPE_BYTES: dict[str, float] = {
    "fp64": 8, "fp32": 4, "tf32": 4, "fp16": 2, "bf16": 2, "fp8": 1, "fp4": 0.5, "int8": 1,
}
SPARSE_WORD = "sparse"
SPARSE_KINDS = ("gemm",)  # 2:4 sparsity prunes a weight operand: only GEMM has one here
DEFAULT_DTYPE = "bf16"
MAX_DIMENSION = 2**31
MAX_LABEL_CHARS = 120

# FLOPs per element of the element-wise kernels (see each function's docstring).
SOFTMAX_FLOPS_PER_ELEMENT = 5
LAYER_NORM_FLOPS_PER_ELEMENT = 7

# kind -> dimension names, in the order the spec gives them
KERNEL_SHAPES: dict[str, tuple[str, ...]] = {
    "gemm": ("M", "N", "K"),
    "add": ("N",),
    "softmax": ("R", "C"),
    "layernorm": ("R", "C"),
    "attention": ("B", "H", "S", "D"),
    "attention-naive": ("B", "H", "S", "D"),
}

SPEC_SYNTAX = "KIND:SHAPE[:DTYPE][:sparse], e.g. gemm:4096x4096x4096:bf16"


@dataclass(frozen=True)
class Kernel:
    """One kernel's ideal work and traffic; ``spec`` is its canonical spec string.

    ``sparse``: a 2:4 structured-sparse GEMM (weights pruned to two non-zeros in
    every four). Its FLOPs are counted dense-equivalent, 2·M·N·K, as vendors count
    sparse TFLOP/s, so it meets a roof twice as high rather than doing half the work.
    """

    kind: str
    label: str
    dtype: str
    spec: str
    flops: float
    bytes_moved: float
    sparse: bool = False

    @property
    def intensity_flop_per_byte(self) -> float:
        """Arithmetic intensity: FLOPs ÷ bytes moved."""
        return self.flops / self.bytes_moved


def _dims_text(dims: tuple[int, ...]) -> str:
    return "×".join(str(d) for d in dims)


def _make(kind: str, dims: tuple[int, ...], dtype: str, flops: float, elements_moved: float,
          label: str | None, title: str, sparse: bool = False) -> Kernel:
    dtype = _check_dtype(dtype, where=f"{kind} kernel")
    for name, value in zip(KERNEL_SHAPES[kind], dims, strict=True):
        _check_dimension(value, name, where=f"{kind} kernel")
    spec = f"{kind}:{'x'.join(str(d) for d in dims)}:{dtype}" + (f":{SPARSE_WORD}" if sparse else "")
    default_label = f"{title} {_dims_text(dims)} {dtype}" + (" 2:4 sparse" if sparse else "")
    return Kernel(
        kind=kind,
        label=_check_label(label, spec) if label is not None else default_label,
        dtype=dtype,
        spec=spec,
        flops=float(flops),
        bytes_moved=float(elements_moved) * DTYPE_BYTES[dtype],
        sparse=sparse,
    )


def gemm(m: int, n: int, k: int, dtype: str = DEFAULT_DTYPE, label: str | None = None, *,
         sparse: bool = False) -> Kernel:
    """C (M×N) = A (M×K) · B (K×N).

    FLOPs = 2·M·N·K (one multiply and one add per term); elements moved =
    M·K + K·N + M·N (A and B read once, C written once). With ``sparse`` (2:4
    structured sparsity in the weight operand B) B's K·N elements count half:
    the compressed weights keep two values in four. The small index metadata
    (2 bits per kept value) is left out. FLOPs stay dense-equivalent.
    """
    weight_elements = k * n / 2 if sparse else k * n
    return _make("gemm", (m, n, k), dtype, 2 * m * n * k, m * k + weight_elements + m * n, label, "GEMM",
                 sparse=sparse)


def elementwise_add(n: int, dtype: str = DEFAULT_DTYPE, label: str | None = None) -> Kernel:
    """z = x + y over N elements: FLOPs = N; elements moved = 3·N (two reads, one write)."""
    return _make("add", (n,), dtype, n, 3 * n, label, "Add")


def softmax(rows: int, cols: int, dtype: str = DEFAULT_DTYPE, label: str | None = None) -> Kernel:
    """Row-wise softmax of an R×C matrix, y = exp(x − max) ÷ Σ exp(x − max).

    FLOPs = 5·R·C, one per element for each of: the running max, the
    subtraction, the exponential, the sum, the division. Elements moved = 2·R·C
    (x read once, y written once; the row statistics stay on chip).
    """
    return _make("softmax", (rows, cols), dtype, SOFTMAX_FLOPS_PER_ELEMENT * rows * cols,
                 2 * rows * cols, label, "Softmax")


def layer_norm(rows: int, cols: int, dtype: str = DEFAULT_DTYPE, label: str | None = None) -> Kernel:
    """Layer norm over the C columns of each of R rows, y = γ·(x − μ)/σ + β.

    FLOPs = 7·R·C, per element: sum for the mean, subtract the mean, square,
    sum of squares, multiply by 1/σ, multiply by γ, add β. The per-row scalar
    work (two divisions, adding ε, the reciprocal square root) is O(R) and left
    out. Elements moved = 2·R·C + 2·C (x read and y written once; γ and β, C
    each, read once).
    """
    return _make("layernorm", (rows, cols), dtype, LAYER_NORM_FLOPS_PER_ELEMENT * rows * cols,
                 2 * rows * cols + 2 * cols, label, "LayerNorm")


def attention_flops(batch: int, heads: int, seq_len: int, head_dim: int) -> float:
    """Forward attention FLOPs, the same whether fused or not.

    4·B·H·S²·D for the two matrix products (Q·Kᵀ: 2·S·S·D per head, P·V: 2·S·S·D)
    plus 5·B·H·S² for the softmax over the S×S scores (the softmax kernel's count).
    Non-causal: every query sees all S keys.
    """
    return 4 * batch * heads * seq_len**2 * head_dim + SOFTMAX_FLOPS_PER_ELEMENT * batch * heads * seq_len**2


def attention(batch: int, heads: int, seq_len: int, head_dim: int, dtype: str = DEFAULT_DTYPE,
              label: str | None = None) -> Kernel:
    """Fused attention (FlashAttention-style): O = softmax(Q·Kᵀ)·V with the scores kept on chip.

    FLOPs: :func:`attention_flops`. Elements moved = 4·B·H·S·D: Q, K and V
    read once, O written once; the S×S score matrix never reaches memory.
    """
    flops = attention_flops(batch, heads, seq_len, head_dim)
    moved = 4 * batch * heads * seq_len * head_dim
    return _make("attention", (batch, heads, seq_len, head_dim), dtype, flops, moved, label, "Attention (fused)")


def attention_naive(batch: int, heads: int, seq_len: int, head_dim: int, dtype: str = DEFAULT_DTYPE,
                    label: str | None = None) -> Kernel:
    """Unfused attention: three kernels, each reading its inputs from memory and writing its output.

    1. S = Q·Kᵀ: read Q, K (B·H·S·D each), write S (B·H·S²);
    2. P = softmax(S): read S, write P (B·H·S² each);
    3. O = P·V: read P (B·H·S²) and V (B·H·S·D), write O (B·H·S·D).

    Elements moved = 4·B·H·S·D + 4·B·H·S², the scores in the same dtype as the
    operands. FLOPs are the fused kernel's (:func:`attention_flops`): fusing
    changes the traffic, not the arithmetic.
    """
    flops = attention_flops(batch, heads, seq_len, head_dim)
    moved = 4 * batch * heads * seq_len * head_dim + 4 * batch * heads * seq_len**2
    return _make("attention-naive", (batch, heads, seq_len, head_dim), dtype, flops, moved, label,
                 "Attention (naive)")


_BUILDERS: dict[str, Callable[..., Kernel]] = {
    "gemm": gemm,
    "add": elementwise_add,
    "softmax": softmax,
    "layernorm": layer_norm,
    "attention": attention,
    "attention-naive": attention_naive,
}

_DIMENSION_TEXT = re.compile(r"[0-9]+")


def parse_kernel_spec(spec: str, label: str | None = None) -> Kernel:
    """Parse ``KIND:SHAPE[:DTYPE]`` (see the module docstring) into a :class:`Kernel`.

    Raises :class:`InputError` naming the spec and what is wrong with it.
    """
    if not isinstance(spec, str):
        raise InputError(f"kernel spec must be text ({SPEC_SYNTAX}): {spec!r}")
    where = f"kernel spec {spec!r}"
    parts = [part.strip() for part in spec.strip().split(":")]
    sparse = len(parts) > 2 and parts[-1].lower() == SPARSE_WORD
    if sparse:
        parts = parts[:-1]
    if len(parts) not in (2, 3) or not all(parts):
        raise InputError(f"{where}: expected {SPEC_SYNTAX}")
    kind = parts[0].lower()
    if kind not in KERNEL_SHAPES:
        raise InputError(f"{where}: unknown kernel kind {parts[0]!r}; known kinds: {', '.join(KERNEL_SHAPES)}")
    if sparse and kind not in SPARSE_KINDS:
        raise InputError(f"{where}: only {', '.join(SPARSE_KINDS)} kernels can be 2:4 sparse "
                         "(the pruned operand is a GEMM's K×N weights)")
    dtype = _check_dtype(parts[2] if len(parts) == 3 else DEFAULT_DTYPE, where=where)
    names = KERNEL_SHAPES[kind]
    texts = [t.strip() for t in re.split(r"[x×X]", parts[1])]
    if len(texts) != len(names):
        raise InputError(
            f"{where}: {kind} takes {len(names)} dimension{'s' if len(names) > 1 else ''} "
            f"{'x'.join(names)}, got {len(texts)}: {parts[1]!r}"
        )
    dims = []
    for name, text in zip(names, texts, strict=True):
        if not _DIMENSION_TEXT.fullmatch(text):
            raise InputError(f"{where}: dimension {name} must be a whole number: {text!r}")
        dims.append(_check_dimension(int(text), name, where=where))
    if label is not None:
        label = _check_label(label, spec)
    if sparse:
        m, n, k = dims
        return gemm(m, n, k, dtype=dtype, label=label, sparse=True)
    return _BUILDERS[kind](*dims, dtype=dtype, label=label)


def _check_dtype(dtype: str, *, where: str) -> str:
    normalised = dtype.strip().lower() if isinstance(dtype, str) else dtype
    if normalised not in DTYPE_BYTES:
        raise InputError(f"{where}: unknown dtype {dtype!r}; known dtypes: {', '.join(DTYPE_BYTES)}")
    return normalised


def _check_dimension(value: int, name: str, *, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError(f"{where}: dimension {name} must be a whole number: {value!r}")
    if value < 1:
        raise InputError(f"{where}: dimension {name} must be >= 1: {value}")
    if value > MAX_DIMENSION:
        raise InputError(f"{where}: dimension {name} must be <= 2**31 ({MAX_DIMENSION}): {value}")
    return value


def _check_label(label: str, spec: str) -> str:
    if not isinstance(label, str) or not label.strip():
        raise InputError(f"kernel {spec!r}: the label must be non-empty text: {label!r}")
    text = label.strip()
    if "\n" in text or "\r" in text:
        raise InputError(f"kernel {spec!r}: the label must be one line: {label!r}")
    if len(text) > MAX_LABEL_CHARS:
        raise InputError(f"kernel {spec!r}: the label must be at most {MAX_LABEL_CHARS} characters: {len(text)}")
    bad = bad_character(text)
    if bad is not None:
        raise InputError(f"kernel {spec!r}: the label holds a control character ({bad}), which no chart can show")
    return text
