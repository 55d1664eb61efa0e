"""One training step on a parallel layout: compute, every collective, the pipeline bubble, overlap,
memory per chip, step time, tokens per second and the MFU ceiling.

A layout splits N chips as dp · tp · pp · cp = N (data, tensor, pipeline and context parallel
degrees; expert parallelism ep runs inside the data-parallel ranks of a mixture of experts). Ranks are
numbered tensor fastest, then context, data and pipeline (Megatron-LM's order), so each axis's groups
have a stride (:mod:`ainotes.core.topology`): tp 1, cp tp, dp (and ep) tp·cp, pp tp·cp·dp; each group is
timed on the link it crosses. b is the micro-batch in sequences, s the sequence length, h the hidden
size, L layers, m micro-batches per step, v the interleave factor, Ψ the parameters one chip holds
(P/(tp·pp), experts further split by ep), 2 bytes an element (BF16).

Per step, on one chip (FACTS "Parallelism: what each kind sends per step"):

* compute = hardware FLOPs per token × global batch tokens ÷ (N × dense BF16 peak): 6·P_active + the
  attention term (PaLM), plus what recomputation runs again (:mod:`ainotes.core.utilization`);
* DP, ZeRO 0: one all-reduce of the 2Ψ gradient bytes; ZeRO-1/2: a reduce-scatter of the gradients
  and an all-gather of the updated weights, the same volume; ZeRO-3: all-gathers of the weights in
  the forward and the backward pass and a reduce-scatter of the gradients, per micro-batch: 3Ψ
  elements against 2Ψ (Rajbhandari et al. 2020, section 7);
* TP (Megatron, Shoeybi et al. 2019): per layer and micro-batch 2 all-reduces forward and 2 backward,
  each of b·(s/cp)·h elements (Llama 3.1 70B at b = 1, s = 4,096: 67.1 MB; 4 × 80 = 320 per pass of
  the model); full recomputation repeats the 2 forward ones; with sequence parallelism each becomes an
  all-gather + reduce-scatter pair of the same volume (Korthikanti et al. 2022);
* PP: each micro-batch sends b·(s/cp)·h elements of activations forward across each stage boundary and
  the same gradients back, v times with interleaving (Narayanan et al. 2021); the tensor-parallel ranks
  of a stage each send a 1/tp shard over their own link (Megatron's scatter/gather optimisation);
* EP: per MoE layer and micro-batch an all-to-all to dispatch tokens and one to combine them forward,
  two more backward, each of tokens·k·h elements (top-k routing);
* CP (ring attention): per layer and micro-batch the K and V blocks go round the group forward, and K, V
  and their gradients backward: an all-gather of 2·b·s·kv_heads·d_head/tp elements forward, an
  all-gather and a reduce-scatter of it backward.

The step's arithmetic is :func:`ainotes.core.parallel_step.step`; this module holds the values and
their checks. Each collective is timed with the α–β model's fastest algorithm at its size
(:func:`ainotes.core.collective_cost.best_algorithm`); a point-to-point send is α + S/B.

Bubble (1F1B or GPipe): (p−1)/(v·m) of the ideal time, i.e. (p−1)/(v·m + p−1) of the pipeline's
(Narayanan et al. 2021; the Ultra-Scale Playbook). Overlap: DP's gradient reduction hides behind the
backward pass of the last micro-batch, ZeRO-1/2's weight all-gather behind the first forward one, and
ZeRO-3's gathers behind every forward and backward pass (the Playbook's overlap conditions, in time
rather than in its element ratios); pipeline sends overlap the steady state, so only the fill and drain
chain of 2·(v·p − 1) sends is exposed; TP and EP sit on the critical path; CP hides behind the
attention it feeds. Step = (compute + exposed TP/EP/CP) × (1 + bubble ratio) + exposed DP and PP.

Left out, and said so on the page: stage imbalance (layers that do not divide evenly, the embeddings
and logits on the end stages), the optimizer step's time, kernel efficiency below peak, overlap of TP
communication with compute, hierarchical (in-node then across-node) collectives, and groups spread
over several torus axes, which have more links than the one-axis ICI preset times.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from ainotes.base.errors import InputError
from ainotes.base.textcheck import short, unknown_id
from ainotes.core import checks
from ainotes.core import collective_cost as cc
from ainotes.core.checks import FieldError
from ainotes.core.hardware import Preset
from ainotes.core.links import Link
from ainotes.core.memory import MemoryEstimate, ModelStates, TrainingMemory, model_state_bytes, stage_params
from ainotes.core.models import ModelPreset
from ainotes.core.topology import group_bandwidth_bytes_per_s, group_link
from ainotes.core.utilization import RECOMPUTE_MODES, hardware_flops_per_token, model_flops_per_token

ELEMENT_BYTES = 2  # BF16 activations, gradients and weights on the wire
MAX_GPUS = 1_000_000
DEFAULT_SEQ_LEN = 4096
#: Fields a layout takes, as ``ainotes parallel`` flags, fence keys and inline options name them.
FIELDS = ("model", "preset", "gpus", "dp", "tp", "pp", "ep", "cp", "zero", "global_batch_tokens", "micro_batch",
          "seq_len", "micro_batches", "interleave", "recompute", "sequence_parallel", "link_intra", "link_inter")
DEGREES = ("dp", "tp", "pp", "ep", "cp")
PARTS = ("compute", "dp", "tp", "pp", "ep", "cp", "bubble")  # the step's stacked parts
KIND_TITLES = {"dp": "data parallel", "tp": "tensor parallel", "pp": "pipeline parallel",
               "ep": "expert parallel", "cp": "context parallel"}


def quoted(key: str) -> str:
    return repr(key)


@dataclass(frozen=True)
class Layout:
    """The degrees and schedule of one layout (checked against a model by :class:`ParallelRun`)."""

    dp: int
    tp: int = 1
    pp: int = 1
    ep: int = 1
    cp: int = 1
    zero: int = 0
    micro_batch: int = 1
    micro_batches: int = 1
    interleave: int = 1
    seq_len: int = DEFAULT_SEQ_LEN
    recompute: str = "none"
    sequence_parallel: bool = False

    @property
    def gpus(self) -> int:
        return self.dp * self.tp * self.pp * self.cp

    @property
    def global_batch_tokens(self) -> int:
        """dp · m · b · s: the tokens one step trains on."""
        return self.dp * self.micro_batches * self.micro_batch * self.seq_len

    def record(self) -> dict[str, Any]:
        return {"dp": self.dp, "tp": self.tp, "pp": self.pp, "ep": self.ep, "cp": self.cp, "zero": self.zero,
                "micro_batches": self.micro_batches, "interleave": self.interleave}

    @property
    def label(self) -> str:
        """``dp 16 · tp 8 · pp 8`` (degrees above 1, dp always), ``ZeRO-1`` where sharded."""
        parts = [f"dp {self.dp}"] + [f"{key} {getattr(self, key)}" for key in ("tp", "pp", "cp", "ep")
                                     if getattr(self, key) > 1]
        return " · ".join(parts) + (f", ZeRO-{self.zero}" if self.zero else "")


@dataclass(frozen=True)
class Collective:
    """One kind of collective a step issues: ``bytes`` is one collective's message (S: an all-gather's
    output, a reduce-scatter's input, one rank's all-to-all buffer); ``time_s`` all ``count_per_step``
    of them; ``exposed_s`` the part no compute hides (``hidden`` when none is exposed)."""

    kind: str
    parallelism: str
    op: str
    count_per_step: int
    bytes: float
    ranks: int
    link: str
    algorithm: str
    time_s: float
    exposed_s: float

    @property
    def hidden(self) -> bool:
        return self.exposed_s <= 0.0

    @property
    def one_s(self) -> float:
        """The time of one of them."""
        return self.time_s / self.count_per_step

    def record(self) -> dict[str, Any]:
        return {"kind": self.kind, "parallelism": self.parallelism, "op": self.op,
                "count_per_step": self.count_per_step, "bytes": self.bytes, "ranks": self.ranks, "link": self.link,
                "algorithm": self.algorithm, "time_s": self.time_s, "hidden": self.hidden}


@dataclass(frozen=True)
class StepBreakdown:
    """One step of a layout, per chip: its parts, collectives, memory, and what they allow."""

    model_id: str
    preset_id: str
    layout: Layout
    compute_s: float
    bubble_s: float
    bubble_fraction: float
    exposed_s: Mapping[str, float]  # by parallelism: dp, tp, pp, ep, cp
    collectives: tuple[Collective, ...]
    memory: MemoryEstimate
    model_flops_per_token: float
    peak_flops_per_s: float

    @property
    def exposed_comm_s(self) -> float:
        return sum(self.exposed_s.values())

    @property
    def step_s(self) -> float:
        return self.compute_s + self.bubble_s + self.exposed_comm_s

    @property
    def tokens_per_s(self) -> float:
        return self.layout.global_batch_tokens / self.step_s

    @property
    def mfu_ceiling(self) -> float:
        """Model FLOPs per second over the chips' peak: the MFU this layout allows at best."""
        return self.model_flops_per_token * self.tokens_per_s / (self.layout.gpus * self.peak_flops_per_s)

    @property
    def fits(self) -> bool | None:
        return self.memory.fits

    def part_s(self, name: str) -> float:
        """One stacked part of the step (:data:`PARTS`): compute, the bubble, or a kind's exposed time."""
        if name == "compute":
            return self.compute_s
        if name == "bubble":
            return self.bubble_s
        return self.exposed_s.get(name, 0.0)

    def of(self, parallelism: str) -> tuple[Collective, ...]:
        return tuple(c for c in self.collectives if c.parallelism == parallelism)

    def record(self) -> dict[str, Any]:
        """The contract's JSON object (CONTRACT.md, fourth round)."""
        return {"layout": self.layout.record(), "step_s": self.step_s, "compute_s": self.compute_s,
                "bubble_s": self.bubble_s, "bubble_fraction": self.bubble_fraction,
                "exposed_comm_s": self.exposed_comm_s, "tokens_per_s": self.tokens_per_s,
                "mfu_ceiling": self.mfu_ceiling, "memory_bytes_per_gpu": self.memory.total_bytes,
                "capacity_bytes": self.memory.capacity_bytes, "fits": self.fits,
                "collectives": [c.record() for c in self.collectives]}


@dataclass(frozen=True)
class ParallelRun:
    """A model on ``gpus`` chips of a preset in one layout, checked once (every mistake is a
    :class:`FieldError` naming its field through ``label``)."""

    model: ModelPreset
    preset: Preset
    layout: Layout
    links: Mapping[str, Link]
    link_intra: str | None = None
    link_inter: str | None = None
    label: Callable[[str], str] = field(default=quoted, compare=False, repr=False)

    def __post_init__(self) -> None:
        check_layout(self.model, self.layout, self.label)
        if self.preset.node is None and (self.link_intra is None or self.link_inter is None):
            where = f" ({self.preset.file_label})" if self.preset.file else ""
            raise FieldError(f"{self.label('link_intra')} and {self.label('link_inter')} are needed: preset "
                             f"{self.preset.id}{where} names no node (add node: {{chips: N, link: ID, "
                             "inter_node_link: ID} to its file), so it has no links of its own", "link_intra")
        for key in ("link_intra", "link_inter"):
            link_id = getattr(self, key)
            if link_id is not None and link_id not in self.links:
                raise FieldError(f"{self.label(key)}: unknown link {short(link_id)} "
                                 f"(known: {', '.join(sorted(self.links))})", key)

    @classmethod
    def from_fields(cls, fields: Mapping[str, Any], *, models: Mapping[str, ModelPreset],
                    presets: Mapping[str, Preset], links: Mapping[str, Link],
                    label: Callable[[str], str] = quoted) -> ParallelRun:
        """A run from raw values (numbers or their text), keys as in :data:`FIELDS`. ``model``,
        ``preset`` and ``gpus`` are required; ``dp`` defaults to gpus ÷ (tp·pp·cp); ``micro_batches``
        comes from ``global_batch_tokens`` when that is given (else 1, or 4·pp with a pipeline)."""
        return run_from_fields(cls, fields, models=models, presets=presets, links=links, label=label)

    def with_layout(self, layout: Layout) -> ParallelRun:
        return replace(self, layout=layout)

    def link(self, ranks: int, stride: int) -> tuple[Link, float]:
        """The link preset a group of ``ranks`` chips ``stride`` apart is timed over, and the bytes per
        second per chip it moves there (:func:`ainotes.core.topology.group_bandwidth_bytes_per_s`)."""
        placement = group_link(self.preset, ranks, stride=stride, intra_link_id=self.link_intra,
                               inter_link_id=self.link_inter)
        found = self.links.get(placement.link_id)
        if found is None:
            where = "link_inter" if placement.crosses_nodes else "link_intra"
            raise FieldError(f"{self.label(where)}: preset {self.preset.id}'s node names link "
                             f"{short(placement.link_id)}, which is not a link preset (known: "
                             f"{', '.join(sorted(self.links))})", where)
        intra = self.links.get(placement.intra_link_id)
        return found, group_bandwidth_bytes_per_s(placement, intra, found)

    def memory(self) -> MemoryEstimate:
        """Bytes per chip from :class:`ainotes.core.memory.TrainingMemory` (first pipeline stage); context
        parallelism splits the sequence, so the activations are those of s/cp tokens; expert parallelism
        splits the routed experts' states (:func:`expert_split_states`)."""
        lay = self.layout
        estimate = TrainingMemory(model=self.model, zero=lay.zero, dp=lay.dp, tp=lay.tp, pp=lay.pp,
                                  micro_batch=lay.micro_batch, seq_len=lay.seq_len // lay.cp,
                                  recompute=lay.recompute, sequence_parallel=lay.sequence_parallel,
                                  attention="fused", preset=self.preset, label=self.label).estimate()
        if lay.ep == 1 or not self.model.is_moe:
            return estimate
        states = expert_split_states(self.model, lay)
        return replace(estimate, weights_bytes=states.weights_bytes, gradients_bytes=states.gradients_bytes,
                       optimizer_bytes=states.optimizer_bytes)


def expert_params(model: ModelPreset) -> float:
    """The routed experts of every MoE layer (E · MoE layers · one expert's MLP); 0 for a dense model."""
    return float(model.routed_expert_params)


def expert_split_states(model: ModelPreset, lay: Layout) -> ModelStates:
    """Model states per chip with ep-way expert parallelism (first pipeline stage, Adam in mixed precision).

    Each rank keeps the dense part (attention, norms, embeddings, shared experts) whole, divided by tp·pp
    and sharded by ZeRO over the dp ranks, and 1/ep of the routed experts, which ZeRO shards over the
    dp/ep ranks that hold the same experts (DeepSpeed-MoE's expert data-parallel group; Rajbhandari et
    al. 2022): Ψ_dense/(t·p) + Ψ_experts/(t·p·ep) weights and gradients without ZeRO. A stage of ⌈L/p⌉
    layers holds that share of the experts (layers averaged, as :func:`ainotes.core.memory.stage_params`).
    """
    held = stage_params(model, lay.pp) * lay.pp  # Ψ as the memory core takes it, before ÷ t·p
    stage_share = 1.0 if lay.pp == 1 else math.ceil(model.layers / lay.pp) * lay.pp / model.layers
    experts = expert_params(model) * stage_share
    dense = model_state_bytes(held - experts, zero=lay.zero, dp=lay.dp, tp=lay.tp, pp=lay.pp)
    routed = model_state_bytes(experts / lay.ep, zero=lay.zero, dp=lay.dp // lay.ep, tp=lay.tp, pp=lay.pp)
    return ModelStates(dense.weights_bytes + routed.weights_bytes, dense.gradients_bytes + routed.gradients_bytes,
                       dense.optimizer_bytes + routed.optimizer_bytes)


def check_layout(model: ModelPreset, lay: Layout, label: Callable[[str], str] = quoted) -> None:
    """Every rule a layout must keep against a model; the first broken one as a :class:`FieldError`."""
    if model.heads % lay.tp:
        raise FieldError(f"{label('tp')} {lay.tp} does not divide the {model.heads} attention heads of {model.id} "
                         "(each tensor-parallel rank takes whole heads)", "tp")
    if model.kv_heads % lay.tp and lay.tp % model.kv_heads:
        raise FieldError(f"{label('tp')} {lay.tp} and the {model.kv_heads} key/value heads of {model.id} must "
                         "divide one another (ranks split the KV heads, or share copies of them)", "tp")
    if lay.pp * lay.interleave > model.layers:
        raise FieldError(f"{label('pp')} {lay.pp} × {label('interleave')} {lay.interleave} exceeds the "
                         f"{model.layers} layers of {model.id} (each chunk holds at least one layer)", "pp")
    if lay.seq_len % lay.cp:
        raise FieldError(f"{label('cp')} {lay.cp} does not divide {label('seq_len')} {lay.seq_len} "
                         "(each context-parallel rank takes an equal share of the sequence)", "cp")
    if lay.ep > 1:
        if model.experts is None:
            raise FieldError(f"{label('ep')} {lay.ep} needs a mixture of experts; {model.id} is dense", "ep")
        if model.experts % lay.ep:
            raise FieldError(f"{label('ep')} {lay.ep} does not divide the {model.experts} experts of {model.id}",
                             "ep")
        if lay.dp % lay.ep:
            raise FieldError(f"{label('ep')} {lay.ep} must divide {label('dp')} {lay.dp} (expert parallelism "
                             "runs inside the data-parallel ranks)", "ep")
    if lay.interleave > 1:
        if lay.pp == 1:
            raise FieldError(f"{label('interleave')} {lay.interleave} needs a pipeline ({label('pp')} > 1)",
                             "interleave")
        if lay.micro_batches % lay.pp:
            raise FieldError(f"{label('micro_batches')} {lay.micro_batches} must be a multiple of {label('pp')} "
                             f"{lay.pp} with {label('interleave')} > 1 (Megatron's interleaved schedule)",
                             "micro_batches")
    if lay.zero > 0 and lay.dp == 1:
        raise FieldError(f"{label('zero')} {lay.zero} shards over the data-parallel ranks, and "
                         f"{label('dp')} is 1", "zero")


def _degree(values: Mapping[str, Any], key: str, label: Callable[[str], str], high: int = MAX_GPUS) -> int | None:
    value = values.get(key)
    return None if value is None else checks.whole_number(value, label(key), key, low=1, high=high)


def run_from_fields(cls: type[ParallelRun], fields: Mapping[str, Any], *, models: Mapping[str, ModelPreset],
                    presets: Mapping[str, Preset], links: Mapping[str, Link],
                    label: Callable[[str], str] = quoted) -> ParallelRun:
    """:meth:`ParallelRun.from_fields`: look up, check and derive every field, in the order a reader
    would fix them (unknown keys, the ids, the degrees against ``gpus``, the batch)."""
    for key in fields:
        if key not in FIELDS:
            raise FieldError(f"unknown key {label(str(key))} (allowed: {', '.join(label(k) for k in FIELDS)})",
                             str(key))
    for key in ("model", "preset", "gpus"):
        if fields.get(key) is None:
            raise FieldError(f"{label(key)} is required", key)
    model = _lookup(fields["model"], models, "model", label)
    preset = _lookup(fields["preset"], presets, "preset", label)
    gpus = checks.whole_number(fields["gpus"], label("gpus"), "gpus", high=MAX_GPUS)
    tp, pp, cp = (_degree(fields, key, label) or 1 for key in ("tp", "pp", "cp"))
    inner = tp * pp * cp
    dp = _degree(fields, "dp", label)
    if dp is None:
        if gpus % inner:
            raise FieldError(f"{label('tp')} {tp} × {label('pp')} {pp} × {label('cp')} {cp} = {inner} does not "
                             f"divide {label('gpus')} {gpus}", "gpus")
        dp = gpus // inner
    elif dp * inner != gpus:
        raise FieldError(f"{label('dp')} {dp} × {label('tp')} {tp} × {label('pp')} {pp} × {label('cp')} {cp} = "
                         f"{dp * inner} chips, not {label('gpus')} {gpus}", "dp")
    micro_batch = _degree(fields, "micro_batch", label) or 1
    seq_len = _degree(fields, "seq_len", label, high=100_000_000) or DEFAULT_SEQ_LEN
    micro_batches = _micro_batches(fields, dp=dp, pp=pp, micro_batch=micro_batch, seq_len=seq_len, label=label)
    recompute = checks.one_of(fields.get("recompute", "none"), label("recompute"), "recompute",
                              choices=RECOMPUTE_MODES)
    sequence_parallel = _boolean(fields.get("sequence_parallel", False), label("sequence_parallel"))
    layout = Layout(dp=dp, tp=tp, pp=pp, ep=_degree(fields, "ep", label) or 1, cp=cp,
                    zero=checks.whole_number(fields.get("zero", 0), label("zero"), "zero", low=0, high=3),
                    micro_batch=micro_batch, micro_batches=micro_batches,
                    interleave=_degree(fields, "interleave", label, high=1024) or 1, seq_len=seq_len,
                    recompute=recompute, sequence_parallel=sequence_parallel)
    links_named = {key: fields.get(key) for key in ("link_intra", "link_inter")}
    return cls(model, preset, layout, links, label=label, **links_named)


def _micro_batches(fields: Mapping[str, Any], *, dp: int, pp: int, micro_batch: int, seq_len: int,
                   label: Callable[[str], str]) -> int:
    """m from ``global_batch_tokens`` = dp·m·b·s when given (it must divide; a stated m must match, and
    may not exceed what the batch allows); else ``micro_batches``, default 1 (4·pp with a pipeline)."""
    given = _degree(fields, "micro_batches", label)
    total = _degree(fields, "global_batch_tokens", label, high=10**15)
    if total is None:
        return given or (4 * pp if pp > 1 else 1)
    per_micro_batch = dp * micro_batch * seq_len
    allowed, rest = divmod(total, per_micro_batch)
    if given is not None and given > allowed:
        raise FieldError(f"{label('micro_batches')} {given} is more than the batch allows: "
                         f"{label('global_batch_tokens')} {total:,} over {label('dp')} {dp} × {label('micro_batch')} "
                         f"{micro_batch} × {label('seq_len')} {seq_len:,} gives {allowed}", "micro_batches")
    if allowed == 0 or rest:
        raise FieldError(f"{label('global_batch_tokens')} {total:,} is not a whole number of micro-batches of "
                         f"{label('dp')} {dp} × {label('micro_batch')} {micro_batch} × {label('seq_len')} "
                         f"{seq_len:,} = {per_micro_batch:,} tokens", "global_batch_tokens")
    if given is not None and given != allowed:
        raise FieldError(f"{label('micro_batches')} {given} disagrees with {label('global_batch_tokens')} "
                         f"{total:,}, which gives {allowed}; give one of them", "micro_batches")
    return allowed


def _lookup(value: Any, known: Mapping[str, Any], key: str, label: Callable[[str], str]) -> Any:
    found = known.get(value) if isinstance(value, str) else None
    if found is None:
        raise FieldError(f"{label(key)}: {unknown_id(key, value, known)}", key)
    return found


def _boolean(value: Any, name: str) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    raise FieldError(f"{name} must be true or false: {short(value)}", "sequence_parallel")


def flops_per_token(model: ModelPreset, seq_len: int, recompute: str = "none") -> tuple[float, float]:
    """(model FLOPs, hardware FLOPs) per token: 6·P_active + 12·L·a·d_head·s, and that plus what
    ``recompute`` runs again (:func:`ainotes.core.utilization.hardware_flops_per_token`)."""
    attention = {"layers": model.layers, "heads": model.heads, "head_dim": model.head_dim, "seq_len": seq_len}
    return (model_flops_per_token(model.active_params, **attention),
            hardware_flops_per_token(model.active_params, **attention, recompute=recompute))  # type: ignore[arg-type]


def timed(op: str, ranks: int, message_bytes: float, link: Link, bandwidth_bytes_per_s: float) -> cc.AlgorithmTime:
    """One collective on ``link`` (its α) at B = ``bandwidth_bytes_per_s``: the α–β model's fastest
    algorithm at this size and rank count."""
    if ranks > cc.MAX_RANKS:
        raise InputError(f"a group of {ranks:,} ranks ({op}) is beyond the collective model's {cc.MAX_RANKS:,}: "
                         "choose a layout with smaller groups")
    return cc.best_algorithm(op, ranks, message_bytes, bandwidth_bytes_per_s=bandwidth_bytes_per_s,
                             latency_s=link.latency_s)


def point_to_point_s(message_bytes: float, link: Link) -> float:
    """One send between neighbouring stages: α + S/B (Hockney's model), B being what two chips move
    between them (on a full-mesh link, the one link that joins them)."""
    return link.latency_s + message_bytes / link.group_bandwidth_bytes_per_s(2)


def bubble_ratio(pp: int, micro_batches: int, interleave: int = 1) -> float:
    """Idle pipeline time over ideal time: (p−1)/(v·m) (Narayanan et al. 2021, 1F1B and interleaved)."""
    return (pp - 1) / (interleave * micro_batches)


def bubble_fraction(pp: int, micro_batches: int, interleave: int = 1) -> float:
    """Idle share of the pipeline's time: (p−1)/(v·m + p−1); 7/39 = 17.9 % at p = 8, m = 32."""
    return (pp - 1) / (interleave * micro_batches + pp - 1)


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def divisors(n: int) -> tuple[int, ...]:
    """The divisors of ``n``, smallest first."""
    small = [d for d in range(1, math.isqrt(n) + 1) if n % d == 0]
    return tuple(sorted({*small, *(n // d for d in small)}))
