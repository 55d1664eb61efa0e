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

    time = B·KV(S)/W  +  max(D/W + B·r/W, 2·B·P_D/F)  +  max(n(B)·X/W, 2·B·k·P_X/F)  [+ 2·L all-reduces]

KV(S) is one sequence's KV cache at context S (:func:`kv_cache_bytes`: 2·kv_heads·d_head
elements per token and layer, the latent and RoPE key with latent attention, each windowed layer
capped at its window). D is the weights every step reads (attention, dense MLPs, shared experts,
routers, norms, the output head) and P_D the parameters behind them; r one sequence's rows of
the lookup tables (the input embedding when the head is separate: a step reads B of its rows,
not all V); X one routed expert's bytes over the MoE layers and P_X its parameters, of which each
token uses k, and n(B) = E·(1 − (1 − k/E)^B) the experts a batch of B touches per layer with
uniform routing (about 2 of Mixtral's 8 at B = 1, all 8 by B = 32). Each max is a group of
matmuls whose weight loads overlap their arithmetic: the dense ones turn compute-bound past
B_crit = (F/W)·(w/2), each routed expert, which sees B·k/E tokens, past B_crit·E/k (Mixtral:
295 and 1,181 on H100). Attention reads every sequence's cache and is memory-bound at any batch
(:func:`ainotes.core.kernels.decode_attention`: its intensity is 2·g FLOPs per byte of KV
element, g the query heads per KV head, whatever B); its FLOPs are left out, as the Scaling Book
leaves them out. The terms add because the parts run one after another in each layer.

What is counted, and what is not: every byte read and every matmul FLOP above, at the chip's
peak rates; not activations, framework overhead, kernel launch gaps or imperfect overlap, which
make a real step slower; and the routing is taken as uniform (skewed routing touches fewer
experts at small batches). A decode step's FLOPs are its matmuls', 2 per weight used (the lookup
rows do no arithmetic); prefill keeps the 2·P_active per token of the MFU convention (PaLM's
appendix B), embedding included.

Tensor parallelism over t chips (Megatron-style: attention heads and MLP columns split)
divides the weights and FLOPs by t; each chip keeps the KV of its own key/value heads, so
the KV cache divides by t while t ≤ kv_heads and stops shrinking beyond (a KV head is then
replicated; multi-query attention never shrinks, nor does latent attention's latent, which every
head reads). Each layer then ends its attention and its MLP with an all-reduce of the activations,
B·h·a bytes with a = 2 (BF16; the compute dtype's bytes when wider), timed by the α–β model's
fastest algorithm for that message size (:func:`ainotes.core.collective_cost.best_algorithm`:
a double binary tree or Rabenseifner's for the small messages of decode, the ring for large ones)
over the link the group crosses (:func:`tp_link_id`). Those are not overlapped with compute.

Pure functions and frozen values; the inputs are checked once, by :class:`InferenceSetup`.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from ainotes.base.errors import InputError
from ainotes.base.textcheck import short, unknown_id
from ainotes.core import checks, topology
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
from ainotes.core.models import GATED_MLPS, ModelPreset

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
    """KV cache per token, below any attention window = L · (K and V elements per token and layer) · bytes.

    2·L·kv_heads·d_head elements; with latent attention L·(d_c + d_rope) (DeepSeek-V3:
    61·576 = 35,136 elements, 70,272 bytes in BF16). Grouped-query and multi-query attention
    enter through ``kv_heads``. Llama 3.1 70B in BF16: 2·80·8·128·2 = 327,680 bytes (320 KiB);
    LLaMA-2-13B (no GQA): 819,200 bytes, so an 8k-token sequence holds 6.7 GB (the Scaling Book).
    """
    return model.layers * model.kv_elements_per_token_per_layer * STORAGE_DTYPE_BYTES[_storage(kv_dtype, "kv_dtype")]


def kv_cache_bytes(model: ModelPreset, context: int, kv_dtype: str = DEFAULT_DTYPE) -> float:
    """One sequence's KV cache at ``context`` tokens: each layer holds min(S, window) tokens
    (:meth:`ainotes.core.models.ModelPreset.kv_tokens_held`); S·:func:`kv_bytes_per_token` without a window."""
    per_layer_token = model.kv_elements_per_token_per_layer * STORAGE_DTYPE_BYTES[_storage(kv_dtype, "kv_dtype")]
    return model.kv_tokens_held(context) * per_layer_token


def weights_bytes(model: ModelPreset, weights_dtype: str = DEFAULT_DTYPE) -> float:
    """P·w: every parameter the model stores (all experts of a mixture, the embeddings) at w bytes each."""
    return model.params * STORAGE_DTYPE_BYTES[_storage(weights_dtype, "weights_dtype")]


def experts_touched(model: ModelPreset, batch: float) -> float:
    """n(B) = E·(1 − (1 − k/E)^B): the routed experts a batch of B tokens reaches in one layer when each
    token picks k of E uniformly (the chance an expert is missed by all B is (1 − k/E)^B); 0 for a
    dense model. Mixtral (E = 8, k = 2): 2 at B = 1, 7.2 at B = 8."""
    if model.experts is None or model.active_experts is None:
        return 0.0
    return model.experts * (1.0 - (1.0 - model.active_experts / model.experts) ** batch)


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
    """The batch past which every weight matmul of a decode step is compute-bound.

    A dense model: B_crit. A mixture of experts: its attention and other dense matmuls turn at
    B_crit, but each routed expert sees only B·k/E of the batch's tokens once all are touched,
    so the experts turn at B·k/E = B_crit, B = B_crit·E/k (Mixtral on H100: 295 and 1,181; the
    blend B_crit·P/P_active, 1,071, is neither). Tensor parallelism divides both sides by t: no change.
    """
    dense = b_crit(preset, weights_dtype, compute_dtype)
    if model.experts is None or model.active_experts is None:
        return dense
    return dense * model.experts / model.active_experts


def kv_heads_per_chip(model: ModelPreset, tp: int) -> int:
    """Key/value heads one chip holds under t-way tensor parallelism: ⌈kv_heads / t⌉ (at least one:
    beyond t = kv_heads each chip keeps a replica of the head its query heads read)."""
    return math.ceil(model.kv_heads / tp)


def kv_share_per_chip(model: ModelPreset, tp: int) -> float:
    """The fraction of the KV cache one of t chips holds: ⌈kv_heads/t⌉/kv_heads; 1 with latent attention,
    whose latent every head reads, so each chip keeps all of it."""
    if model.mla is not None:
        return 1.0
    return kv_heads_per_chip(model, tp) / model.kv_heads


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


def tp_allreduce(model: ModelPreset, tokens: int, tp: int, link: Link,
                 compute_dtype: str = DEFAULT_DTYPE) -> cc.AlgorithmTime:
    """One tensor-parallel all-reduce of :func:`allreduce_bytes` over t chips on ``link``: the α–β model's
    fastest algorithm at that size (:func:`ainotes.core.collective_cost.best_algorithm`)."""
    return cc.best_algorithm("all-reduce", tp, allreduce_bytes(model, tokens, compute_dtype),
                             bandwidth_bytes_per_s=link.bandwidth_bytes_per_s, latency_s=link.latency_s)


def tp_allreduce_s(model: ModelPreset, tokens: int, tp: int, link: Link, compute_dtype: str = DEFAULT_DTYPE) -> float:
    """2·L all-reduces of :func:`tp_allreduce` (two a layer); 0 for t = 1."""
    if tp == 1:
        return 0.0
    return 2 * model.layers * tp_allreduce(model, tokens, tp, link, compute_dtype).time_s


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


def tp_link_id(preset: Preset, tp: int, link_ids: Iterable[str]) -> str:
    """The link a group of ``tp`` tensor-parallel chips of ``preset`` crosses when none is named: the node's
    own link while the group fits in one node, the link between nodes once it does not (16-way TP on an
    8-GPU HGX board crosses InfiniBand; :func:`ainotes.core.topology.group_link`, stride 1)."""
    known = tuple(link_ids)
    if preset.node is None or tp == 1:
        return default_link_id(preset, known)
    link_id = topology.group_link(preset, tp).link_id
    if link_id not in known:
        raise InputError(f"tensor parallelism over {tp} chips of preset {preset.id} crosses link {link_id}, which "
                         f"is not in presets/links (known: {', '.join(sorted(known)) or 'none'}); name one")
    return link_id


def tp_link(preset: Preset, tp: int, links: Mapping[str, Link]) -> Link:
    """The :class:`Link` of :func:`tp_link_id`, as the collective cost model times a group on it: across
    nodes, g members per node run g rings side by side, one per port, so the group moves
    min(B_node, g·B_port) per chip (:func:`ainotes.core.topology.group_bandwidth_bytes_per_s`) at the
    crossed link's α; inside a node on a full mesh (``mesh_links``) t chips use only the t − 1 links
    between them, B·(t − 1)/m."""
    link = links[tp_link_id(preset, tp, links)]
    if preset.node is None or tp == 1:
        return link
    placement = topology.group_link(preset, tp)
    bandwidth = topology.group_bandwidth_bytes_per_s(placement, links.get(placement.intra_link_id), link)
    if bandwidth == link.bandwidth_bytes_per_s:
        return link
    # Inside a node this differs only on a full mesh (MI300X's Infinity Fabric): t chips reach t − 1 links.
    what = f"{placement.members_per_node} ports a node" if placement.crosses_nodes else f"{tp} of its chips"
    return dataclasses.replace(link, bandwidth_gbps=bandwidth / 1e9, name=f"{link.name}, {what}")


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
        """KV per token on one chip, below any window: KV · :func:`kv_share_per_chip`."""
        return self.kv_bytes_per_token * kv_share_per_chip(self.model, self.tp)

    def kv_cache_bytes_per_chip(self, context: int | None = None) -> float:
        """One sequence's KV cache on one chip at ``context`` (default this setup's), windows applied."""
        tokens = self.context if context is None else context
        return kv_cache_bytes(self.model, tokens, self.kv_dtype) * kv_share_per_chip(self.model, self.tp)

    @property
    def weights_bytes(self) -> float:
        """P·w, the whole model (:func:`weights_bytes`)."""
        return weights_bytes(self.model, self.weights_dtype)

    @property
    def weights_bytes_per_chip(self) -> float:
        return self.weights_bytes / self.tp

    def coefficients(self) -> DecodeCoefficients:
        """What a decode step's time is made of, per chip, before the batch, the context and the GPU's rates."""
        model, w, t = self.model, STORAGE_DTYPE_BYTES[self.weights_dtype], self.tp
        routed = model.routed_expert_params
        dense_params = model.params - routed - model.lookup_only_params
        per_expert = model.moe_layers * model.expert_params
        kv_layer_token = model.kv_elements_per_token_per_layer * STORAGE_DTYPE_BYTES[self.kv_dtype] * \
            kv_share_per_chip(model, t)
        window = model.sliding_window
        rounds: tuple[float, ...] = ()
        shares: tuple[float, ...] = ()
        algorithms: tuple[str, ...] = ()
        if t > 1:
            algorithms = cc.ALGORITHMS["all-reduce"]
            pairs = [cc.coefficients("all-reduce", name, t) for name in algorithms]
            rounds = tuple(2 * model.layers * a for a, _ in pairs)
            shares = tuple(2 * model.layers * b * allreduce_bytes(model, 1, self.compute_dtype) for _, b in pairs)
        return DecodeCoefficients(
            kv_bytes_per_token=kv_layer_token * (model.layers - model.windowed_layers),
            kv_window_bytes_per_token=kv_layer_token * model.windowed_layers,
            window=window.window if window is not None else 0,
            dense_weights_bytes=dense_params * w / t,
            row_bytes_per_sequence=model.lookup_only_params / model.vocab * w / t if model.lookup_only_params else 0.0,
            vocab=model.vocab,
            dense_flops_per_sequence=2 * dense_params / t,  # matmul FLOPs: a lookup does no arithmetic
            expert_bytes=per_expert * w / t,
            expert_flops_per_token=2 * per_expert / t,
            experts=model.experts or 1, active_experts=model.active_experts or 1,
            resident_bytes=self.weights_bytes_per_chip,
            allreduce_algorithms=algorithms, allreduce_latencies=rounds, allreduce_bytes_per_sequence=shares,
        )

    def decode_step(self) -> DecodeStep:
        """One decode step at this batch and context (the module docstring's formula)."""
        return self.coefficients().step(self.batch, self.context, peak_flops_per_s=self.peak_flops_per_s,
                                        bandwidth_bytes_per_s=self.bandwidth_bytes_per_s, link=self.link)

    def prefill(self) -> Prefill:
        """Prefill of B prompts of T tokens, per chip under t-way TP.

        FLOPs = 2·P_active·B·T in the matmuls plus causal attention: each of the T queries scores
        only the keys at or before it, T(T+1)/2 pairs a layer (Σ min(i, w) over a window), each
        2·a·d_qk for the scores and 2·a·d_head for the values: about 2·B·L·(a·d_head)·T², half of the
        4·B·L·(a·d_head)·T² a non-causal count gives (PaLM's appendix B counts that square; a causal
        kernel skips the masked half). Against it, the bytes read and written: the weights (the
        experts the B·T tokens touch, the lookup rows they read) and the KV cache written. Weight
        loading overlaps the arithmetic (max); it is compute-bound once B·T passes about B_crit.
        """
        prompt = self.context if self.prompt is None else self.prompt  # set in __post_init__
        model, tokens = self.model, self.batch * prompt
        attention = self.batch * model.attention_pairs(prompt) * 2 * (model.score_dim + model.q_dim)
        flops = (2 * model.active_params * tokens + attention) / self.tp
        c = self.coefficients()
        read = c.dense_weights_bytes + experts_touched(model, tokens) * c.expert_bytes + \
            min(tokens, model.vocab) * c.row_bytes_per_sequence
        moved = read + self.batch * self.kv_cache_bytes_per_chip(prompt)
        return Prefill(flops=flops, bytes_moved=moved, compute_s=flops / self.peak_flops_per_s,
                       memory_s=moved / self.bandwidth_bytes_per_s, allreduce_s=self._allreduce_s(tokens),
                       tokens=tokens)

    def _allreduce_s(self, tokens: int) -> float:
        if self.tp == 1 or self.link is None:
            return 0.0
        return tp_allreduce_s(self.model, tokens, self.tp, self.link, self.compute_dtype)

    def allreduce_algorithm(self, tokens: int | None = None) -> str | None:
        """The algorithm that times one all-reduce of ``tokens`` (default: a decode step's B); ``None`` for t = 1."""
        if self.tp == 1 or self.link is None:
            return None
        return tp_allreduce(self.model, self.batch if tokens is None else tokens, self.tp, self.link,
                            self.compute_dtype).algorithm

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
        ⌊(capacity − P·w/t) ÷ (one sequence's KV cache per chip at S)⌋; 0 when the weights alone do
        not fit, ``None`` without a capacity. Activations and workspace are left out."""
        capacity = self.capacity_bytes
        if capacity is None:
            return None
        room = capacity - self.weights_bytes_per_chip
        if room <= 0:
            return 0
        return math.floor(room / self.kv_cache_bytes_per_chip())

    def memory_bytes_per_chip(self) -> float:
        """Weights and this batch's KV cache on one chip: P·w/t + B·KV(S) per chip."""
        return self.weights_bytes_per_chip + self.batch * self.kv_cache_bytes_per_chip()

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
            "dense_compute_bound_batch": self.b_crit,
            "decode_terms_s": {"kv": step.kv_s, "weights": step.weights_s, "compute": step.compute_s,
                               "allreduce": step.allreduce_s},
            "allreduce_algorithm": step.allreduce_algorithm,
            "experts_touched": step.experts_touched if self.model.is_moe else None,
            "kv_cache_bytes_per_sequence": kv_cache_bytes(self.model, self.context, self.kv_dtype),
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
        ``preset`` ids, and optionally ``link`` (an id; default :func:`tp_link_id` when ``tp`` > 1)."""
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
                    link = tp_link(preset, tp, known)
                except InputError as exc:
                    raise FieldError(f"{label('link')}: {exc}", "link") from None
            else:
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
        raise FieldError(f"{label(what)}: {unknown_id(what, item_id, items)}", what)
    return items[item_id]


@dataclass(frozen=True)
class DecodeCoefficients:
    """One chip's share of a decode step, independent of batch, context and the GPU's rates.

    time(B, S) = B·(S·kv + min(S, window)·kv_window)/W
               + max((dense + min(B, V)·rows)/W, B·dense_flops/F)
               + max(n(B)·expert/W, B·k·expert_flops/F)
               + minᵢ(latenciesᵢ·α + B·allreduce_bytesᵢ/B_link),

    n(B) = E·(1 − (1 − k/E)^B) (:func:`experts_touched`); the last term the 2·L all-reduces of t
    chips with the fastest algorithm at B (:func:`ainotes.core.collective_cost.coefficients` gives
    each algorithm's a·α + b·S/B), zero for t = 1. A dense model has no expert term (E = k = 1,
    expert = 0).
    """

    kv_bytes_per_token: float  # per sequence and token of context, over the layers without a window
    kv_window_bytes_per_token: float  # the same over the windowed layers, which hold at most `window` tokens
    window: int
    dense_weights_bytes: float  # read every step: attention, dense MLPs, shared experts, routers, norms, head
    row_bytes_per_sequence: float  # the lookup tables' row one token reads (input embedding, positions)
    vocab: int
    dense_flops_per_sequence: float  # 2·P_D/t, the dense matmuls' parameters (no lookup tables)
    expert_bytes: float  # one routed expert over every MoE layer
    expert_flops_per_token: float  # 2·P_X/t: one token through one expert of every MoE layer
    experts: int
    active_experts: int
    resident_bytes: float  # P·w/t: what the chip holds, whatever it reads
    allreduce_algorithms: tuple[str, ...] = ()
    allreduce_latencies: tuple[float, ...] = ()  # per algorithm: how many α a step waits (2·L·a)
    allreduce_bytes_per_sequence: tuple[float, ...] = ()  # per algorithm: 2·L·b·h·a bytes each sequence adds

    def kv_bytes(self, batch: int, context: int) -> float:
        return batch * (context * self.kv_bytes_per_token + min(context, self.window) * self.kv_window_bytes_per_token)

    def step(self, batch: int, context: int, *, peak_flops_per_s: float, bandwidth_bytes_per_s: float,
             link: Link | None) -> DecodeStep:
        allreduce_s, algorithm = 0.0, None
        if self.allreduce_algorithms and link is not None:
            times = [rounds * link.latency_s + batch * share / link.bandwidth_bytes_per_s
                     for rounds, share in zip(self.allreduce_latencies, self.allreduce_bytes_per_sequence, strict=True)]
            least = min(times)
            best = next(i for i, t in enumerate(times) if t <= least * (1 + cc.TIE_RELATIVE))
            allreduce_s, algorithm = times[best], self.allreduce_algorithms[best]
        touched = self.experts * (1.0 - (1.0 - self.active_experts / self.experts) ** batch)
        return DecodeStep(
            kv_s=self.kv_bytes(batch, context) / bandwidth_bytes_per_s,
            dense_weights_s=(self.dense_weights_bytes + min(batch, self.vocab) * self.row_bytes_per_sequence)
            / bandwidth_bytes_per_s,
            dense_compute_s=batch * self.dense_flops_per_sequence / peak_flops_per_s,
            expert_weights_s=touched * self.expert_bytes / bandwidth_bytes_per_s,
            expert_compute_s=batch * self.active_experts * self.expert_flops_per_token / peak_flops_per_s,
            allreduce_s=allreduce_s, batch=batch, allreduce_algorithm=algorithm,
            experts_touched=touched,
        )


@dataclass(frozen=True)
class DecodeStep:
    """One decode step's terms, in seconds, per chip:
    time = kv + max(dense weights, dense compute) + max(expert weights, expert compute) + allreduce."""

    kv_s: float
    dense_weights_s: float
    dense_compute_s: float
    expert_weights_s: float
    expert_compute_s: float
    allreduce_s: float
    batch: int
    allreduce_algorithm: str | None = None
    experts_touched: float = 0.0

    @property
    def weights_s(self) -> float:
        """Every weight byte the step reads, over W."""
        return self.dense_weights_s + self.expert_weights_s

    @property
    def compute_s(self) -> float:
        """Every matmul FLOP, over F."""
        return self.dense_compute_s + self.expert_compute_s

    @property
    def time_s(self) -> float:
        return (self.kv_s + max(self.dense_weights_s, self.dense_compute_s)
                + max(self.expert_weights_s, self.expert_compute_s) + self.allreduce_s)

    @property
    def bound(self) -> Bound:
        """What bounds the weight matmuls: ``compute`` once every group of them does more arithmetic
        than its loads take (past B_crit, and for the experts past B_crit·E/k), else ``memory``.
        The KV term is memory-bound at any batch."""
        dense = self.dense_compute_s > self.dense_weights_s
        experts = self.expert_compute_s >= self.expert_weights_s
        return "compute" if dense and experts else "memory"

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


def _attention_kernels(model: ModelPreset, phase: str, batch: int, context: int, heads: int, kv_heads: int,
                       matmul: Callable[..., Kernel], attention_dtype: str, kv_store: str | None
                       ) -> tuple[list[Kernel], Kernel]:
    """A layer's attention projections and its attention kernel, on one chip (:func:`layer_kernels`).

    Latent attention attends over the cached latent and RoPE key, one "head" of d_c + d_rope that every
    query head reads (the up-projections absorbed into the query and output, as DeepSeek serves it); its
    projections are the down-projections to the latents, then the query's and the keys' and values'
    up-projections."""
    h, d, mla = model.d_model, model.head_dim, model.mla
    cached_heads, cached_dim = (1, mla.kv_latent + mla.rope_head_dim) if mla is not None else (kv_heads, d)
    if phase == "decode":
        attention = decode_attention(batch, heads, cached_heads, context, cached_dim, attention_dtype,
                                     f"Attention, 1 query × {context:,} cached keys", kv_dtype=kv_store)
    else:
        attention = attention_kv(batch, heads, cached_heads, context, context, cached_dim, attention_dtype,
                                 f"Attention, {context:,} queries × {context:,} keys", kv_dtype=kv_store)
    if mla is None:
        return [matmul((heads + 2 * kv_heads) * d, h, "QKV projection")], attention
    return [matmul((mla.q_latent or 0) + mla.kv_latent + mla.rope_head_dim, h, "Q and KV down-projections"),
            matmul(heads * (d + mla.rope_head_dim), mla.q_latent or h, "Q up-projection"),
            matmul(heads * 2 * d, mla.kv_latent, "K and V up-projections")], attention


def _checked_layer(model: ModelPreset, phase: str, batch: int, context: int, tp: int, weights_dtype: str,
                   kv_dtype: str, compute_dtype: str) -> tuple[int, int, int, str, str, str]:
    """:func:`layer_kernels`' settings, checked: batch, context, TP degree and the three dtypes."""
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
    return batch, context, tp, weights, kv, compute


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
    the n(B) experts they touch (:func:`experts_touched`, rounded to a whole number). With latent
    attention the projections are the down-projections to the latents and the up-projections from
    them, and attention reads the cached latent and RoPE key (one head of d_c + d_rope for all).
    """
    batch, context, tp, weights, kv, compute = _checked_layer(model, phase, batch, context, tp, weights_dtype,
                                                              kv_dtype, compute_dtype)
    tokens = batch if phase == "decode" else batch * context
    h, d = model.d_model, model.head_dim
    heads, kv_heads = model.heads // tp, kv_heads_per_chip(model, tp)
    attention_dtype = kv if kv in DTYPE_BYTES and DTYPE_BYTES[kv] > DTYPE_BYTES[compute] else compute
    kv_store = kv if kv != attention_dtype else None
    weight_store = weights if weights != compute else None
    d_ff = math.ceil(model.d_ff / tp)

    def matmul(n: int, k: int, label: str, rows: int = tokens) -> Kernel:
        return gemm(rows, n, k, compute, label, weights_dtype=weight_store)

    projections, attention = _attention_kernels(model, phase, batch, context, heads, kv_heads, matmul,
                                                attention_dtype, kv_store)
    kernels = [
        layer_norm(tokens, h, compute, "Norm before attention"),
        *projections,
        attention,
        matmul(h, heads * d, "Output projection"),
        elementwise_add(tokens * h, compute, "Residual add (attention)"),
        layer_norm(tokens, h, compute, "Norm before MLP"),
    ]
    expert_rows, expert_text = tokens, ""
    if model.experts is not None and model.active_experts is not None:
        routed = tokens * model.active_experts
        touched = max(1, round(experts_touched(model, tokens)))
        expert_rows = max(1, round(routed / touched))
        expert_text = f", one of {touched} experts"
        kernels.append(gemm(tokens, model.experts, h, compute, "Router"))
    if model.mlp in GATED_MLPS:
        kernels += [
            matmul(2 * d_ff, h, f"MLP gate and up{expert_text}", expert_rows),
            elementwise_add(expert_rows * d_ff, compute, f"{'SwiGLU' if model.mlp == 'swiglu' else 'GeGLU'} gating"),
            matmul(h, d_ff, f"MLP down{expert_text}", expert_rows),
        ]
    else:
        kernels += [
            matmul(d_ff, h, f"MLP up{expert_text}", expert_rows),
            matmul(h, d_ff, f"MLP down{expert_text}", expert_rows),
        ]
    kernels.append(elementwise_add(tokens * h, compute, "Residual add (MLP)"))
    return tuple(kernels)
