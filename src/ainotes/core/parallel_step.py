"""The arithmetic of one training step on a layout (the formulas are :mod:`ainotes.core.parallelism`'s
docstring), and the search over layouts that fit, fastest first."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace

from ainotes.base.errors import InputError
from ainotes.core.parallelism import (
    ELEMENT_BYTES,
    Collective,
    Layout,
    ParallelRun,
    StepBreakdown,
    bubble_fraction,
    bubble_ratio,
    check_layout,
    divisors,
    expert_params,
    flops_per_token,
    point_to_point_s,
    timed,
)

MAX_SEARCHED = 20_000  # layouts one search may time: enough for every divisor split of 100,000 chips


@dataclass(frozen=True)
class _Windows:
    """Compute time one chip spends per micro-batch forward and backward (recomputation included in
    the backward), and the attention share that context parallelism hides behind."""

    forward_s: float
    backward_s: float
    attention_s: float


def _collective(run: ParallelRun, kind: str, parallelism: str, op: str, count: int, message_bytes: float,
                ranks: int, stride: int, window_s: float) -> Collective:
    """``count`` collectives of ``message_bytes`` over a group; what ``window_s`` of compute cannot hide
    is exposed."""
    link, bandwidth = run.link(ranks, stride)
    one = timed(op, ranks, message_bytes, link, bandwidth)
    total = one.time_s * count
    return Collective(kind, parallelism, op, count, message_bytes, ranks, link.id, one.algorithm, total,
                      max(0.0, total - window_s))


def _dp(run: ParallelRun, win: _Windows) -> list[Collective]:
    """Gradient reduction over dp ranks (stride tp·cp): 2Ψ bytes, Ψ the parameters one chip holds. With
    expert parallelism the dense part goes over the dp ranks and the routed experts' Ψ_e/ep over the
    dp/ep ranks that hold the same experts (stride tp·cp·ep; none where ep = dp); the two share the
    compute that hides them in proportion to their bytes."""
    lay, model = run.layout, run.model
    if lay.dp == 1:
        return []
    if lay.ep == 1:
        return _dp_group(run, win, "", model.params / (lay.tp * lay.pp), lay.dp, lay.tp * lay.cp)
    experts = expert_params(model) / lay.ep if lay.dp > lay.ep else 0.0
    dense = model.params - expert_params(model)
    share = dense / (dense + experts)
    found = _dp_group(run, _scaled(win, share), "", dense / (lay.tp * lay.pp), lay.dp, lay.tp * lay.cp)
    if experts:
        found += _dp_group(run, _scaled(win, 1 - share), "expert ", experts / (lay.tp * lay.pp), lay.dp // lay.ep,
                           lay.tp * lay.cp * lay.ep)
    return found


def _scaled(win: _Windows, share: float) -> _Windows:
    return _Windows(win.forward_s * share, win.backward_s * share, win.attention_s * share)


def _dp_group(run: ParallelRun, win: _Windows, what: str, held: float, ranks: int, stride: int) -> list[Collective]:
    """One group's data-parallel collectives for ``held`` parameters a chip: DP's all-reduce, ZeRO-1/2's
    reduce-scatter and all-gather, ZeRO-3's gathers (forward, backward) and scatter per micro-batch."""
    size, m, zero = held * ELEMENT_BYTES, run.layout.micro_batches, run.layout.zero
    if zero == 0:
        return [_collective(run, f"{what}gradient all-reduce", "dp", "all-reduce", 1, size, ranks, stride,
                            win.backward_s)]
    if zero in (1, 2):
        return [_collective(run, f"{what}gradient reduce-scatter", "dp", "reduce-scatter", 1, size, ranks, stride,
                            win.backward_s),
                _collective(run, f"{what}weight all-gather", "dp", "all-gather", 1, size, ranks, stride,
                            win.forward_s)]
    return [_collective(run, f"{what}weight all-gather (forward)", "dp", "all-gather", m, size, ranks, stride,
                        win.forward_s * m),
            _collective(run, f"{what}weight all-gather (backward)", "dp", "all-gather", m, size, ranks, stride,
                        win.backward_s * m / 2),
            _collective(run, f"{what}gradient reduce-scatter", "dp", "reduce-scatter", m, size, ranks, stride,
                        win.backward_s * m / 2)]


def _tp(run: ParallelRun) -> list[Collective]:
    """Megatron's activation all-reduces: 2 forward, 2 backward per layer and micro-batch (2 more
    forward under full recomputation), each of b·(s/cp)·h elements; with sequence parallelism an
    all-gather and a reduce-scatter in place of each."""
    lay, model = run.layout, run.model
    if lay.tp == 1:
        return []
    size = lay.micro_batch * (lay.seq_len // lay.cp) * model.d_model * ELEMENT_BYTES
    per_layer = 6 if lay.recompute == "full" else 4
    count = per_layer * _layers_per_chip(run) * lay.micro_batches
    if not lay.sequence_parallel:
        return [_collective(run, "activation all-reduce", "tp", "all-reduce", count, size, lay.tp, 1, 0.0)]
    return [_collective(run, "activation all-gather", "tp", "all-gather", count, size, lay.tp, 1, 0.0),
            _collective(run, "activation reduce-scatter", "tp", "reduce-scatter", count, size, lay.tp, 1, 0.0)]


def _layers_per_chip(run: ParallelRun) -> int:
    """⌈L/p⌉: the layers the fullest pipeline stage holds."""
    return -(-run.model.layers // run.layout.pp)


def _pp(run: ParallelRun) -> list[Collective]:
    """Activations forward and gradients back across each stage boundary, per micro-batch and chunk;
    each tensor-parallel rank sends a 1/tp shard. The steady state overlaps them; the fill and drain
    chain of 2·(v·p − 1) sends is exposed."""
    lay, model = run.layout, run.model
    if lay.pp == 1:
        return []
    size = lay.micro_batch * (lay.seq_len // lay.cp) * model.d_model * ELEMENT_BYTES
    link, _ = run.link(lay.pp, lay.tp * lay.cp * lay.dp)
    one = point_to_point_s(size / lay.tp, link)
    count = 2 * lay.micro_batches * lay.interleave
    exposed = min(count, 2 * (lay.interleave * lay.pp - 1)) * one
    return [Collective("activation send/receive", "pp", "send-recv", count, size, lay.pp, link.id, "point-to-point",
                       one * count, exposed)]


def _ep(run: ParallelRun) -> list[Collective]:
    """Token dispatch and combine: 2 all-to-alls forward and 2 backward per MoE layer and micro-batch,
    each of tokens·k·h elements (tokens = b·s/cp on this chip)."""
    lay, model = run.layout, run.model
    if lay.ep == 1 or model.active_experts is None:
        return []
    size = lay.micro_batch * (lay.seq_len // lay.cp) * model.active_experts * model.d_model * ELEMENT_BYTES
    count = 4 * _layers_per_chip(run) * lay.micro_batches
    return [_collective(run, "token dispatch and combine", "ep", "all-to-all", count, size, lay.ep,
                        lay.tp * lay.cp, 0.0)]


def _cp(run: ParallelRun, win: _Windows) -> list[Collective]:
    """Ring attention: K and V (2·b·s·kv_heads·d_head/tp elements, the whole sequence's) gathered round
    the group forward, gathered again and their gradients reduce-scattered backward, per layer and
    micro-batch; hidden behind the attention compute."""
    lay, model = run.layout, run.model
    if lay.cp == 1:
        return []
    kv_heads_per_rank = max(1, model.kv_heads // lay.tp)
    size = 2 * lay.micro_batch * lay.seq_len * kv_heads_per_rank * model.head_dim * ELEMENT_BYTES
    count = _layers_per_chip(run) * lay.micro_batches
    window = win.attention_s * lay.micro_batches
    return [_collective(run, "KV all-gather", "cp", "all-gather", 2 * count, size, lay.cp, lay.tp, window * 2 / 3),
            _collective(run, "KV gradient reduce-scatter", "cp", "reduce-scatter", count, size, lay.cp, lay.tp,
                        window / 3)]


def step(run: ParallelRun) -> StepBreakdown:
    """One step of ``run``: compute, bubble, each collective and its exposed part, memory per chip."""
    lay, model = run.layout, run.model
    model_flops, hardware_flops = flops_per_token(model, lay.seq_len, lay.recompute)
    peak = run.preset.peak_flops_per_s()
    compute_s = hardware_flops * lay.global_batch_tokens / (lay.gpus * peak)
    forward_share = model_flops / 3 / hardware_flops
    attention_share = 12.0 * model.layers * model.heads * model.head_dim * lay.seq_len / hardware_flops
    m = lay.micro_batches
    win = _Windows(compute_s * forward_share / m, compute_s * (1 - forward_share) / m,
                   compute_s * attention_share / m)
    collectives = (*_tp(run), *_cp(run, win), *_ep(run), *_pp(run), *_dp(run, win))
    exposed = {kind: sum(c.exposed_s for c in collectives if c.parallelism == kind)
               for kind in ("dp", "tp", "pp", "ep", "cp")}
    ratio = bubble_ratio(lay.pp, m, lay.interleave)
    # The bubble idles the pipeline's whole per-micro-batch time: compute and what TP, EP and CP expose.
    bubble_s = ratio * (compute_s + exposed["tp"] + exposed["ep"] + exposed["cp"])
    return StepBreakdown(model.id, run.preset.id, lay, compute_s, bubble_s, bubble_fraction(lay.pp, m, lay.interleave),
                         exposed, collectives, run.memory(), model_flops, peak)


def _candidates(run: ParallelRun, zero_stages: tuple[int, ...], gpus: int, tokens: int) -> Iterator[Layout]:
    """Every split of ``gpus`` chips into tp·pp·cp·dp (ep over the experts' divisors inside dp) that the
    model takes, at the run's micro-batch and sequence and ``tokens`` a step, for each ZeRO stage given."""
    base = run.layout
    for tp in divisors(gpus):
        for pp in divisors(gpus // tp):
            for cp in divisors(gpus // (tp * pp)):
                if cp > 1 and base.cp == 1:
                    continue  # context parallelism only where the run asks for it
                dp = gpus // (tp * pp * cp)
                per_micro_batch = dp * base.micro_batch * base.seq_len
                if tokens % per_micro_batch:
                    continue
                m = tokens // per_micro_batch
                experts = run.model.experts or 1
                for ep in (d for d in divisors(dp) if experts % d == 0):
                    for zero in zero_stages:
                        yield replace(base, dp=dp, tp=tp, pp=pp, cp=cp, ep=ep, zero=zero, micro_batches=m)


def search(run: ParallelRun, *, zero: int | None = None, gpus: int | None = None,
           global_batch_tokens: int | None = None) -> tuple[StepBreakdown, ...]:
    """Every layout of ``run``'s chips (or ``gpus``) that fits the chips' memory, fastest first (ties by
    layout).

    The micro-batch, sequence length, global batch (or ``global_batch_tokens``), recomputation,
    sequence parallelism and interleave stay the run's; each (tp, pp, cp, dp, ep) split is tried at
    ``zero`` (default: every stage, keeping the fastest that fits). A preset without a memory capacity
    fits nothing: an :class:`InputError`."""
    if run.preset.memory_capacity_bytes is None:
        raise InputError(f"searching layouts needs preset {run.preset.id}'s memory capacity, which its file "
                         "does not give")
    best: dict[tuple[int, ...], StepBreakdown] = {}
    stages = (zero,) if zero is not None else (0, 1, 2, 3)
    chips = gpus if gpus is not None else run.layout.gpus
    tokens = global_batch_tokens if global_batch_tokens is not None else run.layout.global_batch_tokens
    for count, layout in enumerate(_candidates(run, stages, chips, tokens)):
        if count >= MAX_SEARCHED:
            break
        try:
            check_layout(run.model, layout)
            breakdown = step(run.with_layout(layout))
        except InputError:
            continue  # a split the model cannot take, or a group beyond the collective model
        if not breakdown.fits:
            continue
        key = (layout.dp, layout.tp, layout.pp, layout.cp, layout.ep)
        if key not in best or breakdown.step_s < best[key].step_s:
            best[key] = breakdown
    return tuple(sorted(best.values(), key=lambda b: (b.step_s, b.layout.tp, b.layout.pp, b.layout.zero)))
