"""Serving a transformer: the KV cache, one decode step, prefill, and how large a batch fits.

The formulas are the Scaling Book's (Austin et al., "How to Scale Your Model", chapter
"All About Transformer Inference", https://jax-ml.github.io/scaling-book/inference/),
with the symbols of ``../shared/FACTS.md`` ("Inference: prefill, decode, the KV cache"):

* L layers, h = ``d_model``, ``kv_heads`` key/value heads of d_head each (:mod:`ainotes.core.models`);
* P the parameters the model stores, P_active those one token uses (all of them, but for a
  mixture of experts), w the bytes of one stored weight, KV the KV cache's bytes per token;
* F the chip's dense peak at the compute dtype (``Preset.peak_tflops(compute_dtype)``, the
  tensor path: matrix units), W its memory bandwidth, both per chip;
* B sequences in the batch, S tokens of context each, T prompt tokens to prefill, t chips
  of tensor parallelism.

One decode step (every sequence of the batch emits one token)::

    time = B·S·KV/W  +  max(2·B·P_active/F, P·w/W)  [+ 2·L all-reduces of B·h·a bytes when t > 1]

The first term reads every sequence's KV cache; attention is memory-bound at any batch
(:func:`ainotes.core.kernels.decode_attention`: its intensity is the query-head group size per
byte of KV, whatever B) and its FLOPs are left out, as the Scaling Book leaves them out. The
max is the weight matmuls: loading the weights overlaps their arithmetic, so the longer of
the two counts, and they turn compute-bound once B passes B_crit = (F/W)·(w/2) (for a
mixture of experts, B_crit·P/P_active). Attention and the matmuls do not overlap (one runs
after the other in each layer), so the terms add, and so does the all-reduce time.

What is counted, and what is not:

* the weights loaded per step are every stored parameter, P·w: the input embedding too
  (a step reads only B of its rows; the Scaling Book counts all of P), and for a mixture of
  experts every expert (a batch of B·k routed tokens touches all E experts once B·k is
  well above E; at batch 1 only k are read, so small batches are overestimated);
* the FLOPs are 2·P_active per token (a multiply and an add per weight used);
* no activations in memory, no framework overhead, no kernel launch gaps: the step time is
  a lower bound, the tokens per second an upper bound.

Tensor parallelism over t chips (Megatron-style: attention heads and MLP columns split)
divides the weights and FLOPs by t; each chip keeps the KV of its own key/value heads, so
the KV cache divides by t while t ≤ kv_heads and stops shrinking beyond (a KV head is then
replicated; multi-query attention never shrinks). Each layer then ends its attention and its
MLP with an all-reduce of the activations, B·h·a bytes with a = 2 (BF16; the compute dtype's
bytes when wider), timed by the α–β model's ring all-reduce over a link preset
(:mod:`ainotes.core.collective_cost`). Those are not overlapped with compute.

Pure functions and frozen values; the inputs are checked once, by :class:`InferenceSetup`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from ainotes.base.errors import InputError
from ainotes.base.textcheck import short
from ainotes.core import checks
from ainotes.core import collective_cost as cc
from ainotes.core.checks import FieldError
from ainotes.core.hardware import UNIT_PRECISIONS, Preset
from ainotes.core.kernels import (
    DTYPE_BYTES,
    STORAGE_DTYPE_BYTES,
    Kernel,
    attention_kv,
    decode_attention,
    elementwise_add,
    gemm,
    layer_norm,
)
from ainotes.core.links import Link
from ainotes.core.models import ModelPreset

Bound = Literal["memory", "compute"]
Phase = Literal["decode", "prefill"]
PHASES = ("decode", "prefill")

DEFAULT_DTYPE = "bf16"
#: What weights and the KV cache may be stored in (int4: GPTQ/AWQ-style integer weights).
STORAGE_DTYPES = tuple(STORAGE_DTYPE_BYTES)
#: What the matmuls may compute in: a precision the matrix units have a rate for.
COMPUTE_DTYPES = UNIT_PRECISIONS["tensor"]
#: Activations cross the all-reduce in at least 16 bits (the partial sums of an 8-bit matmul
#: are accumulated wider; NCCL reduces 16- and 32-bit floats).
MIN_ALLREDUCE_BYTES = 2
MAX_BATCH = 1 << 20
MAX_CONTEXT = 1 << 24
MAX_TP = cc.MAX_RANKS


def _label(key: str) -> str:
    return repr(key)


# --- the figures, one function each -------------------------------------------------------


def kv_bytes_per_token(model: ModelPreset, kv_dtype: str = DEFAULT_DTYPE) -> float:
    """KV cache per token = 2 (K and V) · L · kv_heads · d_head · bytes per element.

    Grouped-query and multi-query attention enter through ``kv_heads``. Llama 3.1 70B
    in BF16: 2·80·8·128·2 = 327,680 bytes (320 KiB); LLaMA-2-13B (no GQA): 819,200 bytes,
    so an 8k-token sequence holds 6.7 GB (the Scaling Book's figure).
    """
    return 2 * model.layers * model.kv_heads * model.head_dim * STORAGE_DTYPE_BYTES[_storage(kv_dtype, "kv_dtype")]


def weights_bytes(model: ModelPreset, weights_dtype: str = DEFAULT_DTYPE) -> float:
    """P·w: every parameter the model stores (all experts of a mixture, the embeddings) at w bytes each."""
    return model.params * STORAGE_DTYPE_BYTES[_storage(weights_dtype, "weights_dtype")]


def b_crit(preset: Preset, weights_dtype: str = DEFAULT_DTYPE, compute_dtype: str = DEFAULT_DTYPE) -> float:
    """B_crit = (F/W)·(w/2): the batch above which a decode step's weight matmuls are compute-bound.

    From 2·B·P/F = P·w/W (Scaling Book, "All About Transformer Inference"). F is the
    dense peak at ``compute_dtype``, W the memory bandwidth, w the weights' bytes: 295 on
    H100 with BF16 weights and compute, about 148 with 8-bit weights and BF16 compute,
    240 on TPU v5e at BF16 (197 TFLOP/s over 8.2·10¹¹ B/s).
    """
    return peak_flops_per_s(preset, compute_dtype) / preset.memory_bandwidth_bytes_per_s * (
        STORAGE_DTYPE_BYTES[_storage(weights_dtype, "weights_dtype")] / 2)


def peak_flops_per_s(preset: Preset, compute_dtype: str, *, name: str = "'compute_dtype'") -> float:
    """F: the preset's dense tensor peak at ``compute_dtype`` in FLOP/s; one line naming the
    preset and the dtype where the chip has no such path or its file does not give it."""
    if compute_dtype not in COMPUTE_DTYPES:
        raise FieldError(f"{name} must be one of {', '.join(COMPUTE_DTYPES)}: {short(compute_dtype)}",
                         "compute_dtype")
    peak = preset.peak_tflops(compute_dtype, unit="tensor")
    if peak is None:
        raise FieldError(f"{name} {compute_dtype}: {preset.missing_peak(compute_dtype)}", "compute_dtype")
    return peak * 1e12


def compute_bound_batch(model: ModelPreset, preset: Preset, weights_dtype: str = DEFAULT_DTYPE,
                        compute_dtype: str = DEFAULT_DTYPE) -> float:
    """The batch at which this model's weight matmuls turn compute-bound: B_crit · P / P_active.

    2·B·P_active/F = P·w/W. For a dense model P_active = P and this is B_crit; a mixture
    of experts loads every expert but computes with k of them, so it needs a batch
    P/P_active times larger. Tensor parallelism divides both sides by t: no change.
    """
    return b_crit(preset, weights_dtype, compute_dtype) * model.params / model.active_params


def kv_heads_per_chip(model: ModelPreset, tp: int) -> int:
    """Key/value heads one chip holds under t-way tensor parallelism: ⌈kv_heads / t⌉ (at least one:
    beyond t = kv_heads each chip keeps a replica of the head its query heads read)."""
    return math.ceil(model.kv_heads / tp)


def check_tp(model: ModelPreset, tp: Any, *, name: str = "'tp'") -> int:
    """t must split the query heads evenly, and the key/value heads evenly or into replicas."""
    tp = checks.whole_number(tp, name, "tp", low=1, high=MAX_TP)
    if model.heads % tp:
        raise FieldError(f"{name} {tp} does not divide the {model.heads} attention heads of {model.id}: "
                         "tensor parallelism gives each chip whole heads", "tp")
    if model.kv_heads % tp and tp % model.kv_heads:
        raise FieldError(f"{name} {tp} and the {model.kv_heads} key/value heads of {model.id} must divide one "
                         "another (each chip holds whole KV heads, or a replica of one)", "tp")
    return tp


def allreduce_bytes(model: ModelPreset, tokens: int, compute_dtype: str = DEFAULT_DTYPE) -> float:
    """One tensor-parallel all-reduce's message: tokens · h · a bytes, a = max(2, compute dtype's bytes)."""
    return tokens * model.d_model * max(MIN_ALLREDUCE_BYTES, DTYPE_BYTES[compute_dtype])


def tp_allreduce_s(model: ModelPreset, tokens: int, tp: int, link: Link, compute_dtype: str = DEFAULT_DTYPE) -> float:
    """2·L ring all-reduces of :func:`allreduce_bytes` over t chips on ``link`` (α–β model:
    2(t−1)·α + 2(t−1)/t · S/B each, :func:`ainotes.core.collective_cost.algorithm_time`); 0 for t = 1."""
    if tp == 1:
        return 0.0
    one = cc.algorithm_time("all-reduce", "ring", tp, allreduce_bytes(model, tokens, compute_dtype),
                            bandwidth_bytes_per_s=link.bandwidth_bytes_per_s, latency_s=link.latency_s)
    return 2 * model.layers * one.time_s


def default_link_id(preset: Preset, link_ids: Iterable[str]) -> str:
    """The link a tensor-parallel group uses when none is named: the preset's own node link
    (``node.link`` in its file, :class:`ainotes.core.hardware.NodeTopology`), if that link preset exists.
    A preset that names no node has no default: no chip is timed over a link it does not have."""
    known = tuple(link_ids)
    choice = preset.node.link_id if preset.node is not None else None
    if choice is not None and choice in known:
        return choice
    why = (f"preset {preset.id}'s node link {choice} is not in presets/links" if choice is not None
           else f"preset {preset.id} names no node link ('node' in its file)")
    raise InputError(f"tensor parallelism needs a link preset to time its all-reduces, and {why} "
                     f"(known: {', '.join(sorted(known)) or 'none'}); name one")


# --- one setting, checked once -------------------------------------------------------------


def _storage(dtype: Any, key: str, label: Callable[[str], str] = _label) -> str:
    return checks.one_of(dtype, label(key), key, choices=STORAGE_DTYPES)


@dataclass(frozen=True)
class InferenceSetup:
    """A model served on one GPU preset (or t of them): what every figure of this module needs.

    ``prompt`` (prefill's T) defaults to ``context``. ``link`` times the all-reduces of
    tensor parallelism and is required when ``tp`` > 1. ``label`` names fields in messages
    in the caller's style (``'batch'`` in a fence, ``batch=`` inline, ``--batch`` on the
    command line); it is not compared.
    """

    model: ModelPreset
    preset: Preset
    batch: int = 1
    context: int = 1
    prompt: int | None = None
    weights_dtype: str = DEFAULT_DTYPE
    kv_dtype: str = DEFAULT_DTYPE
    compute_dtype: str = DEFAULT_DTYPE
    tp: int = 1
    link: Link | None = None
    label: Callable[[str], str] = field(default=_label, compare=False, repr=False)

    def __post_init__(self) -> None:
        label, set_ = self.label, object.__setattr__  # frozen: store the checked, typed values
        set_(self, "batch", checks.whole_number(self.batch, label("batch"), "batch", high=MAX_BATCH))
        set_(self, "context", checks.whole_number(self.context, label("context"), "context", high=MAX_CONTEXT))
        prompt = self.context if self.prompt is None else self.prompt
        set_(self, "prompt", checks.whole_number(prompt, label("prompt"), "prompt", high=MAX_CONTEXT))
        _storage(self.weights_dtype, "weights_dtype", label)
        _storage(self.kv_dtype, "kv_dtype", label)
        peak_flops_per_s(self.preset, self.compute_dtype, name=label("compute_dtype"))
        if STORAGE_DTYPE_BYTES[self.weights_dtype] > DTYPE_BYTES[self.compute_dtype]:
            raise FieldError(
                f"{label('compute_dtype')} {self.compute_dtype} is narrower than the {self.weights_dtype} weights: "
                f"the matrix units read both operands in {self.compute_dtype}, so store the weights in it too "
                f"({label('weights_dtype')} {self.compute_dtype}) or compute in {self.weights_dtype}", "compute_dtype")
        set_(self, "tp", check_tp(self.model, self.tp, name=label("tp")))
        if self.tp > 1 and self.link is None:
            raise FieldError(f"{label('tp')} {self.tp} needs a link to time its all-reduces", "link")

    # -- figures --------------------------------------------------------------------------

    @property
    def peak_flops_per_s(self) -> float:
        """F, per chip."""
        return peak_flops_per_s(self.preset, self.compute_dtype)

    @property
    def bandwidth_bytes_per_s(self) -> float:
        """W, per chip."""
        return self.preset.memory_bandwidth_bytes_per_s

    @property
    def kv_bytes_per_token(self) -> float:
        """The whole model's KV cache per token (:func:`kv_bytes_per_token`)."""
        return kv_bytes_per_token(self.model, self.kv_dtype)

    @property
    def kv_bytes_per_token_per_chip(self) -> float:
        """KV per token on one chip: KV · ⌈kv_heads/t⌉ / kv_heads."""
        return self.kv_bytes_per_token * kv_heads_per_chip(self.model, self.tp) / self.model.kv_heads

    @property
    def weights_bytes(self) -> float:
        """P·w, the whole model (:func:`weights_bytes`)."""
        return weights_bytes(self.model, self.weights_dtype)

    @property
    def weights_bytes_per_chip(self) -> float:
        return self.weights_bytes / self.tp

    def coefficients(self) -> DecodeCoefficients:
        """What a decode step's time is made of, per chip, before the batch, the context and the GPU's rates."""
        rounds, share = (0.0, 0.0) if self.tp == 1 else cc.coefficients("all-reduce", "ring", self.tp)
        return DecodeCoefficients(
            kv_bytes_per_token=self.kv_bytes_per_token_per_chip,
            weights_bytes=self.weights_bytes_per_chip,
            flops_per_sequence=2 * self.model.active_params / self.tp,
            allreduce_latencies=2 * self.model.layers * rounds,
            allreduce_bytes_per_sequence=2 * self.model.layers * share * allreduce_bytes(self.model, 1,
                                                                                         self.compute_dtype),
        )

    def decode_step(self) -> DecodeStep:
        """One decode step at this batch and context (the module docstring's formula)."""
        return self.coefficients().step(self.batch, self.context, peak_flops_per_s=self.peak_flops_per_s,
                                        bandwidth_bytes_per_s=self.bandwidth_bytes_per_s, link=self.link)

    def prefill(self) -> Prefill:
        """Prefill of B prompts of T tokens: FLOPs = 2·P_active·B·T + 4·B·L·(a·d_head)·T² (attention,
        every query against every key of its prompt: the count of PaLM's appendix B and of
        :func:`ainotes.core.kernels.attention_kv`; a causal kernel does about half of it), against
        the weights and the KV cache it writes, B·T·KV. Weight loading overlaps the arithmetic
        (max); it is compute-bound once B·T passes about B_crit. Per chip under t-way TP."""
        prompt = self.context if self.prompt is None else self.prompt  # set in __post_init__
        tokens = self.batch * prompt
        flops = (2 * self.model.active_params * tokens
                 + 4 * self.batch * self.model.layers * self.model.q_dim * prompt**2) / self.tp
        moved = self.weights_bytes_per_chip + tokens * self.kv_bytes_per_token_per_chip
        return Prefill(flops=flops, bytes_moved=moved, compute_s=flops / self.peak_flops_per_s,
                       memory_s=moved / self.bandwidth_bytes_per_s, allreduce_s=self._allreduce_s(tokens),
                       tokens=tokens)

    def _allreduce_s(self, tokens: int) -> float:
        if self.tp == 1 or self.link is None:
            return 0.0
        return tp_allreduce_s(self.model, tokens, self.tp, self.link, self.compute_dtype)

    @property
    def b_crit(self) -> float:
        return b_crit(self.preset, self.weights_dtype, self.compute_dtype)

    @property
    def compute_bound_batch(self) -> float:
        return compute_bound_batch(self.model, self.preset, self.weights_dtype, self.compute_dtype)

    @property
    def capacity_bytes(self) -> float | None:
        """Device memory per chip, or ``None`` where the preset gives none."""
        return self.preset.memory_capacity_bytes

    @property
    def max_batch(self) -> int | None:
        """The largest batch whose KV cache fits beside the weights, per chip:
        ⌊(capacity − P·w/t) ÷ (S · KV per token per chip)⌋; 0 when the weights alone do not fit,
        ``None`` without a capacity. Activations and workspace are left out."""
        capacity = self.capacity_bytes
        if capacity is None:
            return None
        room = capacity - self.weights_bytes_per_chip
        if room <= 0:
            return 0
        return math.floor(room / (self.context * self.kv_bytes_per_token_per_chip))

    def memory_bytes_per_chip(self) -> float:
        """Weights and this batch's KV cache on one chip: P·w/t + B·S·KV per chip."""
        return self.weights_bytes_per_chip + self.batch * self.context * self.kv_bytes_per_token_per_chip

    def fits(self) -> bool | None:
        """Whether the weights and this batch's KV cache fit one chip's memory; ``None`` without a capacity."""
        capacity = self.capacity_bytes
        return None if capacity is None else self.memory_bytes_per_chip() <= capacity

    def record(self) -> dict[str, Any]:
        """The ``ainotes inference --json`` object (CONTRACT.md, third round), and more."""
        step, fill = self.decode_step(), self.prefill()
        return {
            "model": self.model.id, "preset": self.preset.id,
            "batch": self.batch, "context": self.context, "prompt": self.prompt,
            "weights_dtype": self.weights_dtype, "kv_dtype": self.kv_dtype, "compute_dtype": self.compute_dtype,
            "tp": self.tp, "link": self.link.id if self.link is not None else None,
            "kv_bytes_per_token": self.kv_bytes_per_token,
            "weights_bytes": self.weights_bytes,
            "decode_step_s": step.time_s,
            "decode_bound": step.bound,
            "tokens_per_s": step.tokens_per_s,
            "b_crit": self.b_crit,
            "max_batch": self.max_batch,
            "prefill_s": fill.time_s,
            "prefill_bound": fill.bound,
            "compute_bound_batch": self.compute_bound_batch,
            "decode_terms_s": {"kv": step.kv_s, "weights": step.weights_s, "compute": step.compute_s,
                               "allreduce": step.allreduce_s},
            "kv_bytes_per_token_per_chip": self.kv_bytes_per_token_per_chip,
            "weights_bytes_per_chip": self.weights_bytes_per_chip,
            "memory_bytes_per_chip": self.memory_bytes_per_chip(),
            "capacity_bytes": self.capacity_bytes,
            "fits": self.fits(),
            "peak_flops_per_s": self.peak_flops_per_s,
            "bandwidth_bytes_per_s": self.bandwidth_bytes_per_s,
            "params": self.model.params, "active_params": self.model.active_params,
        }

    @classmethod
    def from_fields(cls, fields: Mapping[str, Any], *, models: Mapping[str, ModelPreset],
                    presets: Mapping[str, Preset], links: Callable[[], Mapping[str, Link]] | None,
                    label: Callable[[str], str] = _label) -> InferenceSetup:
        """A setup from raw values (numbers or their text) keyed as in :data:`FIELDS`: ``model`` and
        ``preset`` ids, and optionally ``link`` (an id; default :func:`default_link_id` when ``tp`` > 1)."""
        for key in fields:
            if key not in FIELDS:
                raise FieldError(f"unknown key {label(str(key))} (allowed: {', '.join(label(k) for k in FIELDS)})",
                                 str(key))
        for key in ("model", "preset"):
            if fields.get(key) is None:
                raise FieldError(f"{label(key)} is required", key)
        model = _lookup(models, fields["model"], "model", label)
        preset = _lookup(presets, fields["preset"], "preset", label)
        tp = check_tp(model, fields.get("tp", 1), name=label("tp"))
        link: Link | None = None
        if tp > 1 or fields.get("link") is not None:
            if links is None:
                raise FieldError(f"{label('tp')} needs the link presets, which are not loaded here", "link")
            known = links()
            link_id = fields.get("link")
            if link_id is None:
                try:
                    link_id = default_link_id(preset, known)
                except InputError as exc:
                    raise FieldError(f"{label('link')}: {exc}", "link") from None
            link = _lookup(known, link_id, "link", label)
        return cls(
            model=model, preset=preset, batch=fields.get("batch", 1), context=fields.get("context", 1),
            prompt=fields.get("prompt"), weights_dtype=fields.get("weights_dtype", DEFAULT_DTYPE),
            kv_dtype=fields.get("kv_dtype", DEFAULT_DTYPE), compute_dtype=fields.get("compute_dtype", DEFAULT_DTYPE),
            tp=tp, link=link, label=label,
        )


FIELDS = ("model", "preset", "batch", "context", "prompt", "weights_dtype", "kv_dtype", "compute_dtype", "tp",
          "link")


def _lookup(items: Mapping[str, Any], item_id: Any, what: str, label: Callable[[str], str]) -> Any:
    if not isinstance(item_id, str) or item_id not in items:
        known = ", ".join(sorted(items)) or "none"
        raise FieldError(f"{label(what)}: unknown {what} {short(item_id)} (known: {known})", what)
    return items[item_id]


@dataclass(frozen=True)
class DecodeCoefficients:
    """One chip's share of a decode step, independent of batch, context and the GPU's rates.

    time(B, S) = B·S·kv/W + max(weights/W, B·flops/F) + latencies·α + B·allreduce_bytes/B_link,
    the last two the 2·L ring all-reduces of t chips (2(t−1)·α + 2(t−1)/t · B·h·a / B_link
    each, :func:`ainotes.core.collective_cost.coefficients`), zero for t = 1.
    """

    kv_bytes_per_token: float  # per sequence, per token of context
    weights_bytes: float
    flops_per_sequence: float  # 2·P_active/t
    allreduce_latencies: float  # 2·L·2(t−1): how many α a step waits
    allreduce_bytes_per_sequence: float  # 2·L·2(t−1)/t·h·a: bytes each sequence adds to the link's share

    def step(self, batch: int, context: int, *, peak_flops_per_s: float, bandwidth_bytes_per_s: float,
             link: Link | None) -> DecodeStep:
        allreduce_s = 0.0
        if self.allreduce_latencies and link is not None:
            allreduce_s = (self.allreduce_latencies * link.latency_s
                           + batch * self.allreduce_bytes_per_sequence / link.bandwidth_bytes_per_s)
        return DecodeStep(
            kv_s=batch * context * self.kv_bytes_per_token / bandwidth_bytes_per_s,
            weights_s=self.weights_bytes / bandwidth_bytes_per_s,
            compute_s=batch * self.flops_per_sequence / peak_flops_per_s,
            allreduce_s=allreduce_s, batch=batch,
        )


@dataclass(frozen=True)
class DecodeStep:
    """One decode step's terms, in seconds, per chip: time = kv + max(weights, compute) + allreduce."""

    kv_s: float
    weights_s: float
    compute_s: float
    allreduce_s: float
    batch: int

    @property
    def time_s(self) -> float:
        return self.kv_s + max(self.weights_s, self.compute_s) + self.allreduce_s

    @property
    def bound(self) -> Bound:
        """What bounds the weight matmuls: ``compute`` once 2·B·P_active/F exceeds P·w/W (past
        B_crit), else ``memory``. The KV term is memory-bound at any batch."""
        return "compute" if self.compute_s > self.weights_s else "memory"

    @property
    def tokens_per_s(self) -> float:
        """B ÷ one step: the tokens the whole batch emits per second."""
        return self.batch / self.time_s


@dataclass(frozen=True)
class Prefill:
    """Prefill of B·T prompt tokens, per chip: time = max(compute, memory) + allreduce."""

    flops: float
    bytes_moved: float
    compute_s: float
    memory_s: float
    allreduce_s: float
    tokens: int

    @property
    def time_s(self) -> float:
        return max(self.compute_s, self.memory_s) + self.allreduce_s

    @property
    def bound(self) -> Bound:
        return "compute" if self.compute_s > self.memory_s else "memory"


# --- a layer as its operators (LLM-Viewer style) ----------------------------------------------


def layer_kernels(model: ModelPreset, phase: str = "decode", *, batch: int = 1, context: int = 1,
                  weights_dtype: str = DEFAULT_DTYPE, kv_dtype: str = DEFAULT_DTYPE,
                  compute_dtype: str = DEFAULT_DTYPE, tp: int = 1) -> tuple[Kernel, ...]:
    """One transformer layer of ``model`` as the kernels it runs, on one of t chips.

    ``decode``: B tokens (one per sequence), attention of one query per sequence against
    S = ``context`` cached keys (:func:`ainotes.core.kernels.decode_attention`). ``prefill``: B·S
    tokens (prompts of S tokens), attention of S queries against S keys
    (:func:`ainotes.core.kernels.attention_kv`). In order: the attention norm, the fused QKV
    projection (h → (a + 2·kv)·d_head/t), attention, the output projection, the residual
    add, the MLP norm, the router (mixture of experts), the MLP's matrices (SwiGLU: gate and
    up fused, then the gating x·σ(x)·y as an element-wise kernel, then down; GELU: up, then
    down), the residual add. Weights are stored in ``weights_dtype``, the KV cache in
    ``kv_dtype``; activations move in ``compute_dtype`` and the matmuls meet its roof (an
    attention kernel computes in the KV dtype instead where that is wider). Norms are
    counted as layer norms (an RMSNorm does a little less). For a mixture of experts the
    MLP kernels are one expert's, with the batch's B·k routed tokens spread evenly over
    min(E, B·k) experts (rounded to a whole number of tokens).
    """
    if phase not in PHASES:
        raise FieldError(f"'phase' must be one of {', '.join(PHASES)}: {short(phase)}", "phase")
    batch = checks.whole_number(batch, "'batch'", "batch", high=MAX_BATCH)
    context = checks.whole_number(context, "'context'", "context", high=MAX_CONTEXT)
    tp = check_tp(model, tp)
    weights = _storage(weights_dtype, "weights_dtype")
    kv = _storage(kv_dtype, "kv_dtype")
    compute = checks.one_of(compute_dtype, "'compute_dtype'", "compute_dtype", choices=tuple(DTYPE_BYTES))
    if STORAGE_DTYPE_BYTES[weights] > DTYPE_BYTES[compute]:
        raise FieldError(f"'compute_dtype' {compute} is narrower than the {weights} weights", "compute_dtype")
    tokens = batch if phase == "decode" else batch * context
    h, d = model.d_model, model.head_dim
    heads, kv_heads = model.heads // tp, kv_heads_per_chip(model, tp)
    attention_dtype = kv if kv in DTYPE_BYTES and DTYPE_BYTES[kv] > DTYPE_BYTES[compute] else compute
    kv_store = kv if kv != attention_dtype else None
    weight_store = weights if weights != compute else None
    d_ff = math.ceil(model.d_ff / tp)

    def matmul(n: int, k: int, label: str, rows: int = tokens) -> Kernel:
        return gemm(rows, n, k, compute, label, weights_dtype=weight_store)

    if phase == "decode":
        attention = decode_attention(batch, heads, kv_heads, context, d, attention_dtype,
                                     f"Attention, 1 query × {context:,} cached keys", kv_dtype=kv_store)
    else:
        attention = attention_kv(batch, heads, kv_heads, context, context, d, attention_dtype,
                                 f"Attention, {context:,} queries × {context:,} keys", kv_dtype=kv_store)
    kernels = [
        layer_norm(tokens, h, compute, "Norm before attention"),
        matmul((heads + 2 * kv_heads) * d, h, "QKV projection"),
        attention,
        matmul(h, heads * d, "Output projection"),
        elementwise_add(tokens * h, compute, "Residual add (attention)"),
        layer_norm(tokens, h, compute, "Norm before MLP"),
    ]
    expert_rows, expert_text = tokens, ""
    if model.experts is not None and model.active_experts is not None:
        routed = tokens * model.active_experts
        touched = min(model.experts, routed)
        expert_rows = max(1, round(routed / touched))
        expert_text = f", one of {touched} experts"
        kernels.append(gemm(tokens, model.experts, h, compute, "Router"))
    if model.mlp == "swiglu":
        kernels += [
            matmul(2 * d_ff, h, f"MLP gate and up{expert_text}", expert_rows),
            elementwise_add(expert_rows * d_ff, compute, "SwiGLU gating"),
            matmul(h, d_ff, f"MLP down{expert_text}", expert_rows),
        ]
    else:
        kernels += [
            matmul(d_ff, h, f"MLP up{expert_text}", expert_rows),
            matmul(h, d_ff, f"MLP down{expert_text}", expert_rows),
        ]
    kernels.append(elementwise_add(tokens * h, compute, "Residual add (MLP)"))
    return tuple(kernels)
