"""Arithmetic intensity of common kernels: FLOPs ÷ minimum bytes moved.

Every count is the ideal one: each input is read from device memory once and
each output written once (perfect on-chip reuse), so the intensity is an upper
bound for a real kernel. Pure functions; no I/O.

Bytes. Each tensor a kernel reads or writes is stored packed and takes a whole
number of bytes: ⌈elements × bits ÷ 8⌉ (:func:`tensor_bytes`). For 8- to 64-bit
dtypes that is elements × bytes per element; a 4-bit tensor (fp4, int4) packs two
elements per byte and an odd count rounds up, so ``gemm:1x1x1:fp4`` moves three
bytes (one per operand), not 1.5. The per-block scale factors of real 4- and
8-bit formats (one byte per 16 or 32 elements in NVFP4 and MXFP4) are left out,
as the 2:4 sparse index metadata is.

Dtypes. A kernel computes in one dtype, ``Kernel.dtype``, and meets that dtype's
roof (:func:`ainotes.core.roofline.kernel_ceiling`). A GEMM's weights or an attention
kernel's cached keys and values may be stored narrower, ``Kernel.storage_dtype``
(weight-only quantization, an 8-bit KV cache): those bytes shrink, the roof does
not move, since the operands are widened on chip before the matrix units see them.

Kernel spec grammar (command line and ``roofline`` fences)::

    KIND:SHAPE[:DTYPE][:COMPUTE][:sparse]
                                       DTYPE one of fp64, fp32, tf32, fp16, bf16, fp8, fp4, int8; default bf16.
                                       With COMPUTE (gemm and the two KV-cache kinds only), DTYPE is the
                                       stored operand's (also int4) and COMPUTE the activations' and the roof's
    gemm:MxNxK                         (M×K) · (K×N) → M×N; K×N is the weight operand
    gemm:MxNxK:fp8:bf16                8-bit weights, BF16 activations and compute (the BF16 roof)
    gemm:MxNxK:fp8:sparse              2:4 structured-sparse weights (gemm only): the K×N
                                       operand's bytes halve; it meets the sparse roof
    add:N                              z = x + y over N elements
    softmax:RxC                        row-wise softmax of an R×C matrix
    layernorm:RxC                      layer norm over the C columns of each of R rows
    attention:BxHxSxD                  fused attention (scores never leave the chip)
    attention-naive:BxHxSxD            unfused attention (S×S scores written to memory)
    decode-attention:BxHxKVxSxD        one new query per sequence against S cached keys and values,
                                       H query heads sharing KV key/value heads (GQA; KV = 1: multi-query)
    attention-kv:BxHxKVxTxSxD          T queries per sequence against S keys and values (prefill: T = S)
    decode-attention:BxHxKVxSxD:fp8:bf16   an FP8 KV cache read by BF16 attention

``x`` or ``×`` separates dimensions. Each dimension is a whole number from 1 to
``MAX_DIMENSION`` (2**31, the int32 index range); larger shapes are refused as
typing mistakes rather than kernels anyone runs.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ainotes.base.errors import InputError
from ainotes.base.formula import less
from ainotes.base.textcheck import bad_character
from ainotes.core import precision as precision_table

# Bytes per element of the dtypes a kernel can compute in (tf32 is stored as fp32; fp4 is half a byte,
# packed two to a byte: a tensor rounds up to whole bytes, see tensor_bytes), and of those a stored
# operand (weights, KV cache) may have: the above and int4, which no matrix unit computes in (GPTQ/AWQ-
# style 4-bit integer weights, widened on chip). Both come from the one precision table.
DTYPE_BYTES: dict[str, float] = precision_table.DTYPE_BYTES
STORAGE_DTYPE_BYTES: dict[str, float] = precision_table.STORAGE_DTYPE_BYTES
SPARSE_WORD = "sparse"
SPARSE_KINDS = ("gemm",)  # 2:4 sparsity prunes a weight operand: only GEMM has one here
# Kinds with a stored operand that may have its own dtype: a GEMM's weights, a KV cache.
MIXED_KINDS = ("gemm", "decode-attention", "attention-kv")
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
    "decode-attention": ("B", "H", "KV", "S", "D"),
    "attention-kv": ("B", "H", "KV", "T", "S", "D"),
}

SPEC_SYNTAX = "KIND:SHAPE[:DTYPE][:COMPUTE][:sparse], e.g. gemm:4096x4096x4096:bf16"

# What one kernel launch costs before the kernel's first instruction, as an order of magnitude: a few
# microseconds. Meta's Holistic Trace Analysis documentation: "Usually, the launch time on the CPU side is
# between 5-20 microseconds. In some cases the GPU execution time is lower than the launch time itself."
# The lower end is the line drawn here: a roof time under it is not what the kernel takes.
LAUNCH_LATENCY_S = 5e-6
LAUNCH_SOURCE = ("Holistic Trace Analysis, \"CUDA Kernel Launch Statistics\": the CPU side of a launch "
                 "usually takes 5–20 µs")
LAUNCH_SOURCE_URL = ("https://github.com/facebookresearch/HolisticTraceAnalysis/blob/main/"
                     "docs/source/features/cuda_kernel_launch_stats.rst")
# What a page or the command line says beside a roof time under LAUNCH_LATENCY_S.
LAUNCH_REMARK = (f"under one kernel launch (about {LAUNCH_LATENCY_S * 1e6:g} µs): "
                 "launch latency, not the roof, bounds it")


def below_launch(time_s: Any) -> Any:
    """True where a kernel's time at its roof (:func:`ainotes.core.roofline.kernel_time_s`) is under
    one kernel launch, ``time_s < LAUNCH_LATENCY_S``: the launch, not the roof, then bounds its run time.
    Takes numbers, or :class:`~ainotes.base.formula.Expr` names for the chart's expressions."""
    return less(time_s, LAUNCH_LATENCY_S)


def tensor_bytes(elements: float, dtype: str) -> int:
    """Bytes of one packed tensor: ⌈elements × bits per element ÷ 8⌉, a whole number.

    A 4-bit tensor of 2n + 1 elements takes n + 1 bytes; wider dtypes are exact.
    """
    bits = STORAGE_DTYPE_BYTES[dtype] * 8
    return math.ceil(elements * bits / 8 - 1e-9)


@dataclass(frozen=True)
class Kernel:
    """One kernel's ideal work and traffic; ``spec`` is its canonical spec string.

    ``dtype`` is the dtype it computes in (and the roof it meets); ``storage_dtype`` the
    stored operand's where it differs (a GEMM's K×N weights, an attention kernel's K and V),
    else ``None``.

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
    storage_dtype: str | None = None

    @property
    def intensity_flop_per_byte(self) -> float:
        """Arithmetic intensity: FLOPs ÷ bytes moved."""
        return self.flops / self.bytes_moved

    @property
    def stored_dtype(self) -> str:
        """The stored operand's dtype: ``storage_dtype``, else ``dtype``."""
        return self.storage_dtype or self.dtype


def _dims_text(dims: tuple[int, ...]) -> str:
    return "×".join(str(d) for d in dims)


# One tensor a kernel moves: (elements, whether it is the stored operand, how many passes over it).
_Tensor = tuple[float, bool, int]


def _make(kind: str, dims: tuple[int, ...], dtype: str, flops: float, tensors: Sequence[_Tensor],
          label: str | None, title: str, sparse: bool = False, storage_dtype: str | None = None) -> Kernel:
    dtype = _check_dtype(dtype, where=f"{kind} kernel")
    for name, value in zip(KERNEL_SHAPES[kind], dims, strict=True):
        _check_dimension(value, name, where=f"{kind} kernel")
    storage = _check_storage(kind, storage_dtype, dtype, where=f"{kind} kernel")
    stored = storage or dtype
    moved = sum(passes * tensor_bytes(elements, stored if is_stored else dtype)
                for elements, is_stored, passes in tensors)
    dtypes = f"{storage}:{dtype}" if storage else dtype
    spec = f"{kind}:{'x'.join(str(d) for d in dims)}:{dtypes}" + (f":{SPARSE_WORD}" if sparse else "")
    what = "weights" if kind == "gemm" else "KV"
    dtype_text = f"{storage} {what} · {dtype}" if storage else dtype
    default_label = f"{title} {_dims_text(dims)} {dtype_text}" + (" 2:4 sparse" if sparse else "")
    return Kernel(
        kind=kind,
        label=_check_label(label, spec) if label is not None else default_label,
        dtype=dtype,
        spec=spec,
        flops=float(flops),
        bytes_moved=float(moved),
        sparse=sparse,
        storage_dtype=storage,
    )


def gemm(m: int, n: int, k: int, dtype: str = DEFAULT_DTYPE, label: str | None = None, *,
         sparse: bool = False, weights_dtype: str | None = None) -> Kernel:
    """C (M×N) = A (M×K) · B (K×N), B being the weights.

    FLOPs = 2·M·N·K (one multiply and one add per term); bytes = A's M·K and C's
    M·N elements in ``dtype`` plus B's K·N in ``weights_dtype`` (default ``dtype``),
    each read or written once, each tensor a whole number of bytes. With ``sparse``
    (2:4 structured sparsity in B) B's K·N elements count half: the compressed
    weights keep two values in four. The small index metadata (2 bits per kept
    value) is left out. FLOPs stay dense-equivalent.
    """
    weight_elements = k * n / 2 if sparse else k * n
    return _make("gemm", (m, n, k), dtype, 2 * m * n * k,
                 ((m * k, False, 1), (weight_elements, True, 1), (m * n, False, 1)), label, "GEMM",
                 sparse=sparse, storage_dtype=weights_dtype)


def elementwise_add(n: int, dtype: str = DEFAULT_DTYPE, label: str | None = None) -> Kernel:
    """z = x + y over N elements: FLOPs = N; three tensors of N elements moved (two reads, one write)."""
    return _make("add", (n,), dtype, n, ((n, False, 3),), label, "Add")


def softmax(rows: int, cols: int, dtype: str = DEFAULT_DTYPE, label: str | None = None) -> Kernel:
    """Row-wise softmax of an R×C matrix, y = exp(x − max) ÷ Σ exp(x − max).

    FLOPs = 5·R·C, one per element for each of: the running max, the
    subtraction, the exponential, the sum, the division. Elements moved = 2·R·C
    (x read once, y written once; the row statistics stay on chip).
    """
    return _make("softmax", (rows, cols), dtype, SOFTMAX_FLOPS_PER_ELEMENT * rows * cols,
                 ((rows * cols, False, 2),), label, "Softmax")


def layer_norm(rows: int, cols: int, dtype: str = DEFAULT_DTYPE, label: str | None = None) -> Kernel:
    """Layer norm over the C columns of each of R rows, y = γ·(x − μ)/σ + β.

    FLOPs = 7·R·C, per element: sum for the mean, subtract the mean, square,
    sum of squares, multiply by 1/σ, multiply by γ, add β. The per-row scalar
    work (two divisions, adding ε, the reciprocal square root) is O(R) and left
    out. Elements moved = 2·R·C + 2·C (x read and y written once; γ and β, C
    each, read once).
    """
    return _make("layernorm", (rows, cols), dtype, LAYER_NORM_FLOPS_PER_ELEMENT * rows * cols,
                 ((rows * cols, False, 2), (cols, False, 2)), label, "LayerNorm")


def attention_flops(batch: int, heads: int, seq_len: int, head_dim: int) -> float:
    """Forward attention FLOPs, the same whether fused or not.

    4·B·H·S²·D for the two matrix products (Q·Kᵀ: 2·S·S·D per head, P·V: 2·S·S·D)
    plus 5·B·H·S² for the softmax over the S×S scores (the softmax kernel's count).
    Non-causal: every query sees all S keys.
    """
    return kv_attention_flops(batch, heads, seq_len, seq_len, head_dim)


def kv_attention_flops(batch: int, heads: int, queries: int, keys: int, head_dim: int) -> float:
    """Attention FLOPs of T queries against S keys per sequence: 4·B·H·T·S·D + 5·B·H·T·S.

    Q·Kᵀ and P·V are 2·T·S·D each per query head; the softmax over the T×S scores
    counts 5 per score. Every query sees all S keys (a causal kernel that skips the
    masked half of a square T = S block does about half). Grouped-query attention
    changes the bytes, not the FLOPs: each query head still meets every key.
    """
    return 4 * batch * heads * queries * keys * head_dim + SOFTMAX_FLOPS_PER_ELEMENT * batch * heads * queries * keys


def attention(batch: int, heads: int, seq_len: int, head_dim: int, dtype: str = DEFAULT_DTYPE,
              label: str | None = None) -> Kernel:
    """Fused attention (FlashAttention-style): O = softmax(Q·Kᵀ)·V with the scores kept on chip.

    FLOPs: :func:`attention_flops`. Elements moved = 4·B·H·S·D: Q, K and V
    read once, O written once; the S×S score matrix never reaches memory.
    """
    flops = attention_flops(batch, heads, seq_len, head_dim)
    per_tensor = batch * heads * seq_len * head_dim
    return _make("attention", (batch, heads, seq_len, head_dim), dtype, flops, ((per_tensor, False, 4),), label,
                 "Attention (fused)")


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
    per_tensor = batch * heads * seq_len * head_dim
    scores = batch * heads * seq_len**2
    return _make("attention-naive", (batch, heads, seq_len, head_dim), dtype, flops,
                 ((per_tensor, False, 4), (scores, False, 4)), label, "Attention (naive)")


def attention_kv(batch: int, heads: int, kv_heads: int, queries: int, keys: int, head_dim: int,
                 dtype: str = DEFAULT_DTYPE, label: str | None = None, *, kv_dtype: str | None = None) -> Kernel:
    """Fused attention of T queries against S cached keys and values, H query heads sharing KV heads.

    O = softmax(Q·Kᵀ)·V per sequence, the scores kept on chip (FlashAttention /
    FlashDecoding style). FLOPs: :func:`kv_attention_flops`. Bytes: Q read and O
    written, B·H·T·D elements each, in ``dtype``; K and V read once, B·KV·S·D elements
    each, in ``kv_dtype`` (default ``dtype``). Each group of H/KV query heads reads its
    key/value head once (grouped-query attention; KV = H is multi-head, KV = 1
    multi-query). Decode is T = 1: the intensity is then about 4·H·S·D ÷ (2·KV·S·D·bytes)
    = (H/KV) ÷ bytes per element FLOP/byte, whatever the batch, since every sequence
    reads its own cache.
    """
    _check_dimension(kv_heads, "KV", where="attention-kv kernel")
    _check_groups(_check_dimension(heads, "H", where="attention-kv kernel"), kv_heads, where="attention-kv kernel")
    flops = kv_attention_flops(batch, heads, queries, keys, head_dim)
    q_or_o = batch * heads * queries * head_dim
    k_or_v = batch * kv_heads * keys * head_dim
    return _make("attention-kv", (batch, heads, kv_heads, queries, keys, head_dim), dtype, flops,
                 ((q_or_o, False, 2), (k_or_v, True, 2)), label, "Attention with KV cache",
                 storage_dtype=kv_dtype)


def decode_attention(batch: int, heads: int, kv_heads: int, context: int, head_dim: int,
                     dtype: str = DEFAULT_DTYPE, label: str | None = None, *, kv_dtype: str | None = None) -> Kernel:
    """One decode step's attention: each of B sequences has one new query, against S cached keys.

    :func:`attention_kv` with T = 1; its canonical spec is ``decode-attention:BxHxKVxSxD``.
    """
    _check_dimension(kv_heads, "KV", where="decode-attention kernel")
    _check_groups(_check_dimension(heads, "H", where="decode-attention kernel"), kv_heads,
                  where="decode-attention kernel")
    flops = kv_attention_flops(batch, heads, 1, context, head_dim)
    q_or_o = batch * heads * head_dim
    k_or_v = batch * kv_heads * context * head_dim
    return _make("decode-attention", (batch, heads, kv_heads, context, head_dim), dtype, flops,
                 ((q_or_o, False, 2), (k_or_v, True, 2)), label, "Decode attention", storage_dtype=kv_dtype)


_BUILDERS: dict[str, Callable[..., Kernel]] = {
    "gemm": gemm,
    "add": elementwise_add,
    "softmax": softmax,
    "layernorm": layer_norm,
    "attention": attention,
    "attention-naive": attention_naive,
    "decode-attention": decode_attention,
    "attention-kv": attention_kv,
}
# The keyword each mixed kind takes its stored operand's dtype by.
_STORAGE_KEYWORDS = {"gemm": "weights_dtype", "decode-attention": "kv_dtype", "attention-kv": "kv_dtype"}

_DIMENSION_TEXT = re.compile(r"[0-9]+")


def parse_kernel_spec(spec: str, label: str | None = None) -> Kernel:
    """Parse ``KIND:SHAPE[:DTYPE][:COMPUTE][:sparse]`` (see the module docstring) into a :class:`Kernel`.

    Raises :class:`InputError` naming the spec and what is wrong with it.
    """
    if not isinstance(spec, str):
        raise InputError(f"kernel spec must be text ({SPEC_SYNTAX}): {spec!r}")
    where = f"kernel spec {spec!r}"
    parts = [part.strip() for part in spec.strip().split(":")]
    sparse = len(parts) > 2 and parts[-1].lower() == SPARSE_WORD
    if sparse:
        parts = parts[:-1]
    if SPARSE_WORD in (p.lower() for p in parts[2:]):
        raise InputError(f"{where}: ':sparse' goes last: gemm:MxNxK:DTYPE[:COMPUTE]:sparse")
    if len(parts) not in (2, 3, 4) or not all(parts):
        raise InputError(f"{where}: expected {SPEC_SYNTAX}")
    kind = parts[0].lower()
    if kind not in KERNEL_SHAPES:
        raise InputError(f"{where}: unknown kernel kind {parts[0]!r}; known kinds: {', '.join(KERNEL_SHAPES)}")
    if sparse and kind not in SPARSE_KINDS:
        raise InputError(f"{where}: only {', '.join(SPARSE_KINDS)} kernels can be 2:4 sparse "
                         "(the pruned operand is a GEMM's K×N weights)")
    storage, dtype = _spec_dtypes(kind, parts[2:], where)
    dims = _spec_dims(kind, parts[1], where)
    if kind in ("decode-attention", "attention-kv"):
        _check_groups(dims[1], dims[2], where=where)
    storage = _check_storage(kind, storage, dtype, where=where)
    if label is not None:
        label = _check_label(label, spec)
    extra = {_STORAGE_KEYWORDS[kind]: storage} if storage else {}
    if sparse:
        m, n, k = dims
        return gemm(m, n, k, dtype=dtype, label=label, sparse=True, **extra)
    return _BUILDERS[kind](*dims, dtype=dtype, label=label, **extra)


def _spec_dtypes(kind: str, words: list[str], where: str) -> tuple[str | None, str]:
    """(stored operand's dtype or None, compute dtype) from the spec's words after the shape."""
    if len(words) == 2:
        if kind not in MIXED_KINDS:
            raise InputError(f"{where}: only {', '.join(MIXED_KINDS)} kernels take two dtypes (a stored "
                             f"operand's, then the compute dtype); {kind} moves every tensor in one dtype")
        return _check_storage_word(words[0], where=where), _check_dtype(words[1], where=where)
    return None, _check_dtype(words[0] if words else DEFAULT_DTYPE, where=where)


def _spec_dims(kind: str, shape: str, where: str) -> list[int]:
    names = KERNEL_SHAPES[kind]
    texts = [t.strip() for t in re.split(r"[x×X]", shape)]
    if len(texts) != len(names):
        raise InputError(
            f"{where}: {kind} takes {len(names)} dimension{'s' if len(names) > 1 else ''} "
            f"{'x'.join(names)}, got {len(texts)}: {shape!r}"
        )
    dims = []
    for name, text in zip(names, texts, strict=True):
        if not _DIMENSION_TEXT.fullmatch(text):
            raise InputError(f"{where}: dimension {name} must be a whole number: {text!r}")
        dims.append(_check_dimension(int(text), name, where=where))
    return dims


def _check_dtype(dtype: str, *, where: str) -> str:
    normalised = dtype.strip().lower() if isinstance(dtype, str) else dtype
    if normalised in STORAGE_DTYPE_BYTES and normalised not in DTYPE_BYTES:
        raise InputError(f"{where}: {normalised} is a storage dtype only (no matrix unit computes in it): "
                         f"give the compute dtype after it, as in gemm:MxNxK:{normalised}:bf16")
    if normalised not in DTYPE_BYTES:
        raise InputError(f"{where}: unknown dtype {dtype!r}; known dtypes: {', '.join(DTYPE_BYTES)}")
    return normalised


def _check_storage_word(dtype: str, *, where: str) -> str:
    normalised = dtype.strip().lower()
    if normalised not in STORAGE_DTYPE_BYTES:
        raise InputError(f"{where}: unknown storage dtype {dtype!r}; known: {', '.join(STORAGE_DTYPE_BYTES)}")
    return normalised


def _check_storage(kind: str, storage: str | None, dtype: str, *, where: str) -> str | None:
    """The stored operand's dtype, or ``None`` when it is the compute dtype (the canonical form).

    Only the kinds in :data:`MIXED_KINDS` have a stored operand, and it may not be wider than
    the compute dtype: narrower weights or KV are widened on chip, wider ones would be
    narrowed to the compute dtype before any matrix unit saw them.
    """
    if storage is None:
        return None
    if kind not in MIXED_KINDS:
        raise InputError(f"{where}: only {', '.join(MIXED_KINDS)} kernels have a stored operand of its own dtype")
    if not isinstance(storage, str) or storage not in STORAGE_DTYPE_BYTES:
        raise InputError(f"{where}: unknown storage dtype {storage!r}; known: {', '.join(STORAGE_DTYPE_BYTES)}")
    if storage == dtype:
        return None
    if STORAGE_DTYPE_BYTES[storage] > DTYPE_BYTES[dtype]:
        what = "weights" if kind == "gemm" else "KV cache"
        raise InputError(f"{where}: {storage} {what} are wider than the {dtype} compute dtype; a stored operand "
                         f"is as narrow as the compute dtype or narrower (e.g. {kind}:...:{dtype}:{storage})")
    return storage


def _check_groups(heads: int, kv_heads: int, *, where: str) -> None:
    if heads % kv_heads:
        raise InputError(f"{where}: H ({heads}) must be a multiple of KV ({kv_heads}): "
                         "each key/value head serves a whole group of query heads")


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
