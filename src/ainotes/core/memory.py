"""Memory of a training run, per GPU: model states (weights, gradients, optimizer states) and activations.

Pure arithmetic on a model's architecture (:class:`ainotes.core.models.ModelPreset`) or a bare
parameter count, no I/O. Sizes are in bytes; "GB" in the notes is 10^9 bytes as vendors
print capacities, "GiB" 2^30.

**Model states** under mixed precision (EleutherAI, "Transformer Math 101", 2023; the
Ultra-Scale Playbook, "Memory usage in Transformers", 2025), bytes per parameter::

    weights (BF16 working copy)            2
    gradients (BF16)                       2      (+ 4 with FP32 gradient accumulation)
    optimizer states  Adam                 12     FP32 master weights, momentum, variance: 4 + 4 + 4
                      8-bit Adam           6      FP32 master 4, momentum and variance 1 + 1
                      SGD with momentum    8      FP32 master 4, momentum 4

So Adam costs 16 bytes a parameter, 20 with FP32 gradient accumulation: 1 B parameters
need 16 / 20 GB, 70 B need 1,120 / 1,400 GB (the Playbook's table).

**ZeRO** (Rajbhandari et al., "ZeRO: Memory Optimizations Toward Training Trillion
Parameter Models", SC 2020, Figure 1) shards the model states over the N_d data-parallel
ranks: stage 1 the optimizer states, stage 2 also the gradients, stage 3 also the
weights. With K bytes of optimizer state a parameter and Ψ parameters::

    stage 0   (2 + 2 + K)·Ψ
    stage 1   2Ψ + 2Ψ + K·Ψ/N_d
    stage 2   2Ψ + (2 + K)·Ψ/N_d
    stage 3   (2 + 2 + K)·Ψ/N_d

The paper's example, Ψ = 7.5 B, N_d = 64, K = 12: 120, 31.4, 16.6 and 1.9 GB. The FP32
gradient-accumulation buffer is a gradient here, sharded from stage 2 on with the BF16
ones. Tensor parallelism over t ranks divides every model state by t. Pipeline parallelism
over p stages gives each stage ⌈L/p⌉ layers, and the end stages what sits outside the layers:
the first the input embedding (and learned positions), the last the output head and final
norm (a tied table is kept on both, as Megatron keeps it). The estimate is the first stage's,
(⌈L/p⌉·layer + embedding)/t (:func:`stage_params`); without a model, Ψ/(t·p).

**Activations** per layer follow Korthikanti et al., "Reducing Activation Recomputation
in Large Transformer Models" (arXiv:2205.05198, 2022, Section 4 and Table 2), for
sequence length s, micro-batch b, hidden size h, a heads, 16-bit activations and 1-byte
dropout masks::

    no parallelism                              s·b·h·(34 + 5·a·s/h)
    tensor parallel over t                      s·b·h·(10 + 24/t + 5·a·s/(h·t))
    tensor + sequence parallel                  s·b·h·(34 + 5·a·s/h)/t
    tensor parallel + selective recomputation   s·b·h·(10 + 24/t)
    tensor + sequence parallel + selective      s·b·h·34/t
    full recomputation                          s·b·h·2   (the layer's input only)

:func:`activation_coefficients` derives those numbers term by term, per token of a layer,
so that the same count covers SwiGLU, grouped-query attention and fused attention
(see its docstring). Times L layers; with pipeline parallelism over p stages the first
stage holds ⌈L/p⌉ layers for min(m, p) micro-batches at once under the 1F1B schedule
(Narayanan et al. 2021), so it stores ⌈L/p⌉·p layers' worth when the m micro-batches of a step
are at least p (Korthikanti et al., Section 4.2.3), ⌈L/p⌉·m with fewer.

With recomputation the stash is not the peak: the backward pass of each layer first computes
its dropped activations again, so one layer's full set (selective: its attention core) is live
beside the stash of every other (:func:`rematerialized_bytes`; one layer of Llama 3.1 8B at 4k
tokens, with dropout masks, is 3.29 GB against a 1.07 GB stash of all 32 layers' inputs).

**Above the estimate** (the notes say so rather than promise a fit): the logits of the
last stage, s·b·V·8 bytes (the head's BF16 output, its FP32 copy for the cross-entropy and
the BF16 gradient that flows back, :func:`logits_bytes`, reported apart), the allocator's
fragmentation, communication buckets and temporary buffers, the CUDA context and libraries'
workspaces.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from ainotes.base.errors import InputError
from ainotes.base.textcheck import short, unknown_id
from ainotes.core import checks
from ainotes.core.checks import FieldError
from ainotes.core.hardware import Preset
from ainotes.core.models import ModelPreset
from ainotes.core.utilization import RECOMPUTE_MODES

Optimizer = Literal["adam", "adam-8bit", "sgd"]
Recompute = Literal["none", "selective", "full"]
Attention = Literal["standard", "fused"]

OPTIMIZERS: tuple[str, ...] = ("adam", "adam-8bit", "sgd")
#: Bytes of optimizer state per parameter, FP32 master weights included (Transformer Math 101).
OPTIMIZER_STATE_BYTES: Mapping[str, int] = {"adam": 12, "adam-8bit": 6, "sgd": 8}
OPTIMIZER_TITLES: Mapping[str, str] = {"adam": "Adam (mixed precision)", "adam-8bit": "8-bit Adam",
                                       "sgd": "SGD with momentum"}
WEIGHT_BYTES = 2  # the BF16 copy the forward and backward passes read
GRADIENT_BYTES = 2  # BF16 gradients
FP32_ACCUMULATION_BYTES = 4  # an FP32 gradient buffer beside them
ZERO_STAGES: tuple[int, ...] = (0, 1, 2, 3)
PARTS: tuple[str, ...] = ("weights", "gradients", "optimizer")
#: The ZeRO stage from which each model state is sharded over the data-parallel ranks.
SHARDED_FROM_STAGE: Mapping[str, int] = {"weights": 3, "gradients": 2, "optimizer": 1}
ZERO_TITLES: Mapping[int, str] = {0: "no sharding", 1: "optimizer states sharded",
                                  2: "optimizer states and gradients sharded",
                                  3: "optimizer states, gradients and weights sharded"}
ATTENTIONS: tuple[str, ...] = ("standard", "fused")
ACTIVATION_BYTES = 2  # 16-bit activations
DROPOUT_MASK_BYTES = 1
SOFTMAX_STATS_BYTES = 4  # a fused kernel's FP32 log-sum-exp per query row and head
#: Bytes per logit the last stage holds: the head's BF16 output, the FP32 copy the cross-entropy reads,
#: the BF16 gradient the backward pass sends back into the head.
LOGITS_PARTS_BYTES: Mapping[str, int] = {"bf16 output": 2, "fp32 copy": 4, "bf16 gradient": 2}
LOGITS_BYTES = sum(LOGITS_PARTS_BYTES.values())
# Limits of what a configuration may ask for: beyond any real run, small enough to catch a typo.
MAX_DEGREE = 1_000_000
MAX_MICRO_BATCH = 1_000_000
MAX_SEQ_LEN = 100_000_000
MAX_PARAMS = 1e15

FIELDS: tuple[str, ...] = ("model", "params", "preset", "zero", "dp", "tp", "pp", "micro_batch", "seq_len",
                           "recompute", "sequence_parallel", "attention", "optimizer", "fp32_grad_accum", "dropout",
                           "micro_batches")
ACTIVATION_FIELDS: tuple[str, ...] = ("recompute", "sequence_parallel", "attention", "dropout")


def quoted(key: str) -> str:
    """How a fence body names a key: ``'dp'``."""
    return repr(key)


# --- model states --------------------------------------------------------------------------


@dataclass(frozen=True)
class StateBytes:
    """Bytes per parameter of each model state (Transformer Math 101; Ultra-Scale Playbook)."""

    weights: int
    gradients: int
    optimizer: int

    @property
    def total(self) -> int:
        return self.weights + self.gradients + self.optimizer

    def of(self, part: str) -> int:
        return int(getattr(self, part))


def state_bytes_per_param(optimizer: str = "adam", *, fp32_grad_accum: bool = False) -> StateBytes:
    """Weights 2 (BF16), gradients 2 (+4 for an FP32 accumulation buffer), optimizer K.

    K = 12 for Adam (FP32 master weights, momentum, variance), 6 for 8-bit Adam (FP32
    master weights, 1-byte momentum and variance), 8 for SGD with momentum (FP32 master
    weights and momentum); EleutherAI, "Transformer Math 101". Adam: 16 bytes in all,
    20 with FP32 gradient accumulation (Ultra-Scale Playbook).
    """
    checks.one_of(optimizer, "'optimizer'", "optimizer", choices=OPTIMIZERS)
    gradients = GRADIENT_BYTES + (FP32_ACCUMULATION_BYTES if fp32_grad_accum else 0)
    return StateBytes(WEIGHT_BYTES, gradients, OPTIMIZER_STATE_BYTES[optimizer])


def zero_divisor(part: str, zero: int, dp: int) -> int:
    """N_d where ZeRO stage ``zero`` shards ``part`` over the data-parallel ranks, else 1
    (Rajbhandari et al. 2020: stage 1 the optimizer states, 2 the gradients, 3 the weights)."""
    return dp if zero >= SHARDED_FROM_STAGE[part] else 1


@dataclass(frozen=True)
class ModelStates:
    """Per GPU: the bytes of weights, gradients and optimizer states."""

    weights_bytes: float
    gradients_bytes: float
    optimizer_bytes: float

    @property
    def total_bytes(self) -> float:
        return self.weights_bytes + self.gradients_bytes + self.optimizer_bytes


def model_state_bytes(params: float, *, zero: int = 0, dp: int = 1, tp: int = 1, pp: int = 1,
                      optimizer: str = "adam", fp32_grad_accum: bool = False) -> ModelStates:
    """Per GPU, each model state's bytes: bytes per parameter × Ψ ÷ (t·p), ÷ N_d where ZeRO shards it.

    ZeRO (Rajbhandari et al., SC 2020): stage 1 = 2Ψ + 2Ψ + K·Ψ/N_d, stage 2 =
    2Ψ + (2 + K)·Ψ/N_d, stage 3 = (2 + 2 + K)·Ψ/N_d. Ψ = 7.5e9, N_d = 64, Adam:
    120, 31.4, 16.6, 1.9 GB for stages 0 to 3.
    """
    per_param = state_bytes_per_param(optimizer, fp32_grad_accum=fp32_grad_accum)
    shard = params / (tp * pp)
    weights, gradients, states = (shard * per_param.of(part) / zero_divisor(part, zero, dp) for part in PARTS)
    return ModelStates(weights, gradients, states)


# --- activations ---------------------------------------------------------------------------


@dataclass(frozen=True)
class ActivationCoefficients:
    """Bytes one token stores in one layer, on one of t tensor-parallel ranks, split as the
    parallelism and recomputation options treat them (see :func:`activation_coefficients`).

    * ``replicated``: layer-norm inputs, the inputs of the first attention and MLP matrices,
      dropout masks on the residual stream: kept whole on every rank under tensor
      parallelism, divided by t under sequence parallelism;
    * ``sharded``: Q, K, V, the attention output and the MLP's inner activations, already
      divided among the ranks (K and V replicated where t exceeds the key/value heads);
    * ``scores``: per token *and per token of the sequence*, the stored softmax output,
      its dropout mask and the dropout's output (a·s² terms), per rank; unfused attention only;
    * ``stats``: a fused attention kernel's FP32 log-sum-exp, per token, per rank;
    * ``layer_input``: the layer's input, all that full recomputation keeps.
    """

    replicated: float
    sharded: float
    scores: float
    stats: float
    layer_input: float

    def bytes_per_token(self, *, seq_len: int, tp: int, sequence_parallel: bool, recompute: str,
                        attention: str) -> float:
        """Bytes a token stores in one layer on one rank.

        full recomputation: layer_input ÷ (t with sequence parallelism, else 1);
        otherwise replicated ÷ (t with sequence parallelism, else 1) + sharded + the
        attention core's part: nothing under selective recomputation (the core is computed
        again in the backward pass), ``stats`` for fused attention, ``scores``·s otherwise.
        """
        split = tp if sequence_parallel else 1
        if recompute == "full":
            return self.layer_input / split
        if recompute == "selective":
            core = 0.0
        elif attention == "fused":
            core = self.stats
        else:
            core = self.scores * seq_len
        return self.replicated / split + self.sharded + core


def kv_width_per_rank(model: ModelPreset, tp: int) -> float:
    """Width of the keys (or values) one of t ranks holds: kv_heads·d_head/t, or one head's
    d_head when t exceeds the key/value heads (each rank then keeps a copy of its group's head)."""
    return model.head_dim * max(model.kv_heads / tp, 1)


def activation_coefficients(model: ModelPreset, *, tp: int = 1, dropout: bool = True) -> ActivationCoefficients:
    """Korthikanti et al.'s count of a layer's stored activations, term by term, per token.

    Their layer (Section 4.1): attention 11·s·b·h + 5·a·s²·b bytes: the QKV input 2sbh, Q
    and K 4sbh, the softmax output 2as²b, its dropout mask as²b, the dropout output 2as²b,
    V 2sbh, the output projection's input 2sbh, its dropout mask sbh; MLP 19·s·b·h: the
    first matrix's input 2sbh, the GELU's input and output 8sbh each (d_ff = 4h), the
    dropout mask sbh; two layer norms' inputs 4sbh: 34·s·b·h + 5·a·s²·b in all. Under
    tensor parallelism the norms, the masks on the residual stream and the two matrix
    inputs (10·s·b·h) stay whole on each rank, the rest divides by t.

    Generalised (every term is a tensor autograd keeps for the backward pass):

    * **attention widths**: Q and the attention output are a·d_head wide (h in GPT-3, not
      in PaLM), K and V kv_heads·d_head (grouped-query attention: 2·(kv_heads·d_head) for
      both instead of 2h); per rank, :func:`kv_width_per_rank`;
    * **MLP**: GELU keeps its input and output, 2 tensors of d_ff (16h for d_ff = 4h);
      SwiGLU keeps the gate and up projections (its inputs) and their product (the down
      matrix's input), 3 tensors of d_ff, as fused SwiGLU kernels do (eager PyTorch keeps
      SiLU(gate) as well, a fourth); a mixture of experts stores its MLP terms, the
      matrix input included, once per active expert (routing buffers not counted);
    * **fused attention** (FlashAttention): the a·s² terms vanish, the scores never reach
      memory; the kernel keeps an FP32 log-sum-exp per head and query row, 4·a bytes a token;
    * **no dropout**: the masks go, and the dropped-out softmax, which is then the softmax
      output itself: the score term falls from 5·a to 2·a bytes per token per token.

    For GPT-3 175B at t = 1 this gives 34·h per token plus 5·a per token of the sequence:
    Table 2's s·b·h·(34 + 5·a·s/h).
    """
    h, a = model.d_model, model.heads
    q_width = model.q_dim / tp
    kv_width = kv_width_per_rank(model, tp)
    experts = model.active_experts if model.active_experts is not None else 1
    mask = DROPOUT_MASK_BYTES if dropout else 0
    per_mlp_matrix = model.d_ff / tp
    mlp_tensors = 2 if model.mlp == "gelu" else 3
    replicated = (
        ACTIVATION_BYTES * h  # first layer norm's input
        + ACTIVATION_BYTES * h  # QKV projection's input
        + mask * h  # dropout mask after the attention's output projection
        + ACTIVATION_BYTES * h  # second layer norm's input
        + experts * ACTIVATION_BYTES * h  # the MLP's first matrix's input (each active expert's)
        + mask * h  # dropout mask after the MLP
    )
    sharded = (
        ACTIVATION_BYTES * q_width  # Q
        + 2 * ACTIVATION_BYTES * kv_width  # K and V
        + ACTIVATION_BYTES * q_width  # the attention output, the output projection's input
        + experts * mlp_tensors * ACTIVATION_BYTES * per_mlp_matrix  # the MLP's inner activations
    )
    heads_per_rank = a / tp
    # Softmax output (16-bit), its dropout mask (1 byte) and the dropout's output (16-bit).
    scores = heads_per_rank * (ACTIVATION_BYTES + (mask + ACTIVATION_BYTES if dropout else 0))
    stats = heads_per_rank * SOFTMAX_STATS_BYTES
    return ActivationCoefficients(replicated=replicated, sharded=sharded, scores=scores, stats=stats,
                                  layer_input=ACTIVATION_BYTES * h)


def activation_bytes_per_layer(model: ModelPreset, *, seq_len: int, micro_batch: int, tp: int = 1,
                               sequence_parallel: bool = False, recompute: str = "none",
                               attention: str = "standard", dropout: bool = True) -> float:
    """s·b × :meth:`ActivationCoefficients.bytes_per_token`: one layer's stored activations on one rank
    (Korthikanti et al. 2022, Table 2, generalised as :func:`activation_coefficients` says)."""
    coefficients = activation_coefficients(model, tp=tp, dropout=dropout)
    return seq_len * micro_batch * coefficients.bytes_per_token(
        seq_len=seq_len, tp=tp, sequence_parallel=sequence_parallel, recompute=recompute, attention=attention)


def layers_in_flight(layers: int, pp: int, micro_batches: int | None = None) -> int:
    """Layers' worth of activations the first pipeline stage holds: ⌈L/p⌉ layers for min(m, p)
    micro-batches in flight under 1F1B (Korthikanti et al. 2022, Section 4.2.3; ``None``: m ≥ p),
    L without pipelining."""
    in_flight = pp if micro_batches is None else min(pp, micro_batches)
    return math.ceil(layers / pp) * in_flight


def rematerialized_bytes(model: ModelPreset, *, seq_len: int, micro_batch: int, tp: int = 1,
                         sequence_parallel: bool = False, recompute: str = "none", attention: str = "standard",
                         dropout: bool = True) -> float:
    """What one layer's backward pass computes again and holds beside the stash: that layer's activations
    without recomputation less what the stash keeps of it (0 without recomputation). Full: everything
    but the layer's input; selective: the attention core (scores, or a fused kernel's statistics)."""
    if recompute == "none":
        return 0.0
    def one(mode: str) -> float:
        return activation_bytes_per_layer(model, seq_len=seq_len, micro_batch=micro_batch, tp=tp,
                                          sequence_parallel=sequence_parallel, recompute=mode,
                                          attention=attention, dropout=dropout)
    return one("none") - one(recompute)


def input_table_params(model: ModelPreset) -> int:
    """The input embedding and learned positions: what the first pipeline stage holds besides its layers."""
    return (model.vocab + model.learned_positions) * model.d_model


def layer_params(model: ModelPreset) -> float:
    """An average layer's parameters: all of them less the input table, a separate output head and the
    final norm, over L (dense first layers and MoE layers averaged)."""
    head = 0 if model.tied_embeddings else model.vocab * model.d_model
    return (model.params - input_table_params(model) - head - model.d_model) / model.layers


def stage_params(model: ModelPreset, pp: int) -> float:
    """Parameters the first of p pipeline stages holds: all of them without pipelining, else ⌈L/p⌉ average
    layers (:func:`layer_params`) and the input table (the head and final norm sit on the last stage)."""
    if pp == 1:
        return float(model.params)
    return math.ceil(model.layers / pp) * layer_params(model) + input_table_params(model)


def logits_bytes(model: ModelPreset, *, seq_len: int, micro_batch: int, tp: int = 1) -> float:
    """s·b·V·8 bytes of logits on the last stage (:data:`LOGITS_PARTS_BYTES`: the BF16 output, its FP32
    copy for the cross-entropy, the BF16 gradient), ÷ t where the output layer is split over the
    vocabulary (Megatron's vocabulary-parallel cross-entropy)."""
    return seq_len * micro_batch * model.vocab * LOGITS_BYTES / tp


# --- a configuration -----------------------------------------------------------------------


@dataclass(frozen=True)
class TrainingMemory:
    """One training configuration, checked once here: what ``ainotes memory``, the fences and
    the inline forms build before asking for bytes.

    Exactly one of ``model`` (activations need its architecture) and ``params`` (model
    states only). ``micro_batch`` and ``seq_len`` go together and need a model.
    ``capacity_bytes`` is the GPU's memory, where known (from ``preset``).
    ``label`` names fields in messages (``'dp'``, ``dp=``, ``--dp``; not compared).
    """

    model: ModelPreset | None = None
    params: float | None = None
    zero: int = 0
    dp: int = 1
    tp: int = 1
    pp: int = 1
    micro_batch: int | None = None
    seq_len: int | None = None
    recompute: str = "none"
    sequence_parallel: bool = False
    attention: str = "standard"
    optimizer: str = "adam"
    fp32_grad_accum: bool = False
    dropout: bool | None = None  # None: as the model was trained (its preset's ``dropout``)
    preset: Preset | None = None
    micro_batches: int | None = None  # a step's micro-batches m; None: at least p
    label: Callable[[str], str] = field(default=quoted, compare=False, repr=False)

    def __post_init__(self) -> None:
        label = self.label
        set_ = object.__setattr__  # frozen: keep the checked, typed values
        if (self.model is None) == (self.params is None):
            raise FieldError(f"needs exactly one of {label('model')} and {label('params')}", "model")
        if self.params is not None:
            params = checks.positive_number(self.params, label("params"), "params")
            if params < 1e3:
                raise FieldError(f"{label('params')} is a count of parameters, not billions: {short(self.params)} "
                                 f"(write {params:g}e9 for {params:g} B)", "params")
            if params > MAX_PARAMS:
                raise FieldError(f"{label('params')} must be at most {MAX_PARAMS:g}: {short(self.params)}", "params")
            set_(self, "params", params)
        set_(self, "zero", checks.whole_number(self.zero, label("zero"), "zero", low=0, high=3))
        for key in ("dp", "tp", "pp"):
            set_(self, key, checks.whole_number(getattr(self, key), label(key), key, high=MAX_DEGREE))
        for key in ("sequence_parallel", "fp32_grad_accum", "dropout"):
            value = getattr(self, key)
            if not isinstance(value, bool) and not (key == "dropout" and value is None):
                raise FieldError(f"{label(key)} must be true or false: {short(value)}", key)
        if self.micro_batches is not None:
            set_(self, "micro_batches", checks.whole_number(self.micro_batches, label("micro_batches"),
                                                            "micro_batches", high=MAX_MICRO_BATCH))
        checks.one_of(self.recompute, label("recompute"), "recompute", choices=RECOMPUTE_MODES)
        checks.one_of(self.attention, label("attention"), "attention", choices=ATTENTIONS)
        checks.one_of(self.optimizer, label("optimizer"), "optimizer", choices=OPTIMIZERS)
        if (self.micro_batch is None) != (self.seq_len is None):
            given, missing = ("micro_batch", "seq_len") if self.seq_len is None else ("seq_len", "micro_batch")
            raise FieldError(f"{label('micro_batch')} and {label('seq_len')} go together: {label(given)} given, "
                             f"{label(missing)} missing", missing)
        if self.micro_batch is not None:
            if self.model is None:
                raise FieldError(f"{label('micro_batch')} and {label('seq_len')} need {label('model')}: activations "
                                 f"depend on the architecture, not only on {label('params')}", "micro_batch")
            set_(self, "micro_batch", checks.whole_number(self.micro_batch, label("micro_batch"), "micro_batch",
                                                          high=MAX_MICRO_BATCH))
            set_(self, "seq_len", checks.whole_number(self.seq_len, label("seq_len"), "seq_len", high=MAX_SEQ_LEN))
        if self.model is not None:
            self._check_against(self.model)

    def _check_against(self, model: ModelPreset) -> None:
        label = self.label
        if model.heads % self.tp:
            divisors = ", ".join(str(d) for d in range(1, model.heads + 1) if model.heads % d == 0 and d <= 64)
            raise FieldError(f"{label('tp')} {self.tp} must divide {model.id}'s {model.heads} attention heads "
                             f"(each rank takes whole heads; try {divisors})", "tp")
        if model.kv_heads % self.tp and self.tp % model.kv_heads:
            raise FieldError(f"{label('tp')} {self.tp} and {model.id}'s {model.kv_heads} key/value heads must divide "
                             "one another (ranks split the key/value heads, or share copies of them)", "tp")
        if self.pp > model.layers:
            raise FieldError(f"{label('pp')} {self.pp} cannot exceed {model.id}'s {model.layers} layers "
                             "(each pipeline stage holds at least one)", "pp")

    @classmethod
    def from_fields(
        cls,
        fields: Mapping[str, Any],
        models: Mapping[str, ModelPreset],
        presets: Mapping[str, Preset],
        *,
        label: Callable[[str], str] = quoted,
    ) -> TrainingMemory:
        """A configuration from raw values (numbers, booleans or their text), keys as in :data:`FIELDS`;
        ``model`` and ``preset`` are ids looked up in ``models`` and ``presets``."""
        for key in fields:
            if key not in FIELDS:
                allowed = ", ".join(label(k) for k in FIELDS)
                raise FieldError(f"unknown key {label(str(key))} (allowed: {allowed})", str(key))
        values = dict(fields)
        if values.get("micro_batch") is None and values.get("seq_len") is None:
            stray = [key for key in ACTIVATION_FIELDS if key in values]
            if stray:
                raise FieldError(f"{label(stray[0])} is about activations: give {label('micro_batch')} and "
                                 f"{label('seq_len')} too (with {label('model')})", stray[0])
        for key in ("sequence_parallel", "fp32_grad_accum", "dropout"):
            if key in values and not (key == "dropout" and values[key] is None):  # None: as trained
                values[key] = boolean(values[key], label(key), key)
        model = values.pop("model", None)
        if model is not None:
            found = models.get(model) if isinstance(model, str) else None
            if found is None:
                raise FieldError(f"{label('model')}: {unknown_id('model', model, models)}",
                                 "model")
            values["model"] = found
        preset_id = values.pop("preset", None)
        if preset_id is not None:
            preset = presets.get(preset_id) if isinstance(preset_id, str) else None
            if preset is None:
                raise FieldError(f"{label('preset')}: {unknown_id('preset', preset_id, presets)}", "preset")
            values["preset"] = preset
        return cls(**values, label=label)  # the constructor checks the numbers

    # -- what it holds -----------------------------------------------------------------

    @property
    def param_count(self) -> float:
        """Ψ: the model's parameters (every expert of a mixture: all are stored), or ``params``."""
        if self.model is not None:
            return float(self.model.params)
        assert self.params is not None  # the constructor saw to it
        return self.params

    @property
    def with_dropout(self) -> bool:
        """Whether dropout masks are stored: ``dropout`` where given, else as the model was trained."""
        if self.dropout is not None:
            return self.dropout
        return self.model.trained_with_dropout if self.model is not None else True

    def with_zero(self, zero: int) -> TrainingMemory:
        """The same run at another ZeRO stage."""
        from dataclasses import replace

        return replace(self, zero=zero)

    def estimate(self) -> MemoryEstimate:
        """Bytes per GPU (the first pipeline stage's, which holds the most activations)."""
        # Ψ/(t·p) without a model; the first stage's layers and embedding with one (stage_params).
        held = self.param_count if self.model is None else stage_params(self.model, self.pp) * self.pp
        states = model_state_bytes(held, zero=self.zero, dp=self.dp, tp=self.tp, pp=self.pp,
                                   optimizer=self.optimizer, fp32_grad_accum=self.fp32_grad_accum)
        activations = logits = None
        rematerialized = 0.0
        if self.model is not None and self.micro_batch is not None and self.seq_len is not None:
            model, seq_len, micro_batch = self.model, self.seq_len, self.micro_batch
            per_layer = activation_bytes_per_layer(
                model, seq_len=seq_len, micro_batch=micro_batch, tp=self.tp, sequence_parallel=self.sequence_parallel,
                recompute=self.recompute, attention=self.attention, dropout=self.with_dropout)
            rematerialized = rematerialized_bytes(
                model, seq_len=seq_len, micro_batch=micro_batch, tp=self.tp, sequence_parallel=self.sequence_parallel,
                recompute=self.recompute, attention=self.attention, dropout=self.with_dropout)
            activations = per_layer * layers_in_flight(model.layers, self.pp, self.micro_batches) + rematerialized
            logits = logits_bytes(model, seq_len=seq_len, micro_batch=micro_batch, tp=self.tp)
        capacity = self.preset.memory_capacity_bytes if self.preset is not None else None
        return MemoryEstimate(states.weights_bytes, states.gradients_bytes, states.optimizer_bytes, activations,
                              logits, capacity, rematerialized)


@dataclass(frozen=True)
class MemoryEstimate:
    """Per GPU: each part's bytes, the total, and how it compares with the GPU's capacity.

    ``activations_bytes`` is ``None`` without a model and a micro-batch; ``capacity_bytes``
    ``None`` without a GPU (or one whose preset gives no capacity). ``logits_bytes`` is
    *not* in the total: it is the first item measured memory holds above the estimate.
    """

    weights_bytes: float
    gradients_bytes: float
    optimizer_bytes: float
    activations_bytes: float | None  # the stash and, with recomputation, one layer computed again
    logits_bytes: float | None
    capacity_bytes: float | None
    rematerialized_bytes: float = 0.0  # of the activations: the layer the backward pass recomputes

    @property
    def model_states_bytes(self) -> float:
        return self.weights_bytes + self.gradients_bytes + self.optimizer_bytes

    @property
    def total_bytes(self) -> float:
        return self.model_states_bytes + (self.activations_bytes or 0.0)

    @property
    def headroom_bytes(self) -> float | None:
        """Capacity − total: what is left (negative: how much is missing)."""
        return None if self.capacity_bytes is None else self.capacity_bytes - self.total_bytes

    @property
    def fits(self) -> bool | None:
        return None if self.capacity_bytes is None else self.total_bytes <= self.capacity_bytes

    def part(self, name: str) -> float | None:
        """A part by name: ``weights``, ``gradients``, ``optimizer``, ``activations``, ``logits``,
        ``model_states``, ``total``, ``capacity`` or ``headroom``."""
        return {"weights": self.weights_bytes, "gradients": self.gradients_bytes,
                "optimizer": self.optimizer_bytes, "activations": self.activations_bytes,
                "logits": self.logits_bytes, "model_states": self.model_states_bytes, "total": self.total_bytes,
                "capacity": self.capacity_bytes, "headroom": self.headroom_bytes}[name]


def lowest_fitting_stage(config: TrainingMemory) -> tuple[int, MemoryEstimate] | None:
    """The lowest ZeRO stage at which ``config`` fits its GPU, with that stage's estimate;
    ``None`` when not even stage 3 fits. Needs a GPU with a capacity."""
    if config.preset is None or config.preset.memory_capacity_bytes is None:
        raise InputError("which ZeRO stage fits needs a GPU preset that gives its memory capacity")
    for stage in ZERO_STAGES:
        estimate = config.with_zero(stage).estimate()
        if estimate.fits:
            return stage, estimate
    return None


def boolean(value: Any, name: str, field_name: str = "") -> bool:
    """``True``/``False``, or their text (``true``, ``false``, as a flag or inline option gives them)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    raise FieldError(f"{name} must be true or false: {short(value)}", field_name)


def gigabytes(value_bytes: float) -> float:
    """Bytes in GB (10^9), as vendors print capacities."""
    return value_bytes / 1e9
