"""``ainotes parallel``: one training step of a layout (compute, collectives, bubble, memory), or with
``--search`` every layout that fits, fastest first."""

from __future__ import annotations

import argparse
import json
from typing import Any

from ainotes.base import units
from ainotes.base.errors import InputError
from ainotes.cli import shared
from ainotes.core.parallelism import FIELDS, PARTS, ParallelRun, StepBreakdown
from ainotes.core.thresholds import ModelThresholds, preset_thresholds

SEARCH_ROWS = 20  # rows the text table shows; --json gives them all


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    """Register this module's subcommands."""
    cmd = commands.add_parser(
        "parallel", parents=[common], help="one training step on a parallel layout, or the layouts that fit",
        description="A model preset on --gpus chips of a GPU preset, split as dp·tp·pp·cp = N (ep inside dp): "
        "compute = FLOPs per token × tokens ÷ (N × peak); every collective (DP/ZeRO gradients and weights, "
        "Megatron's 4 TP all-reduces per layer, pipeline sends, expert all-to-alls, ring-attention KV) timed "
        "with the α–β model on the link its group crosses (the preset's node: inside a node or across); the "
        "bubble (p−1)/(v·m); what compute hides; memory per chip; step time, tokens/s and the MFU ceiling; "
        "and the preset's published thresholds for the model (the Scaling Book's C/W tokens per chip, the TP "
        "degree limit, the FSDP + TP floor, E/k).",
    )
    cmd.add_argument("--model", required=True, metavar="ID", help="model preset id (presets/models)")
    cmd.add_argument("--preset", required=True, metavar="ID", help="GPU preset id")
    cmd.add_argument("--gpus", required=True, type=shared.count, metavar="N", help="chips in all")
    for key, what in (("dp", "data-parallel degree (default: N ÷ (tp·pp·cp))"), ("tp", "tensor-parallel degree"),
                      ("pp", "pipeline stages"), ("ep", "expert-parallel degree, inside dp (a mixture of experts)"),
                      ("cp", "context-parallel degree (ring attention)")):
        cmd.add_argument(f"--{key}", type=shared.count, metavar="N", help=what + ("" if key == "dp" else
                                                                                  " (default 1)"))
    cmd.add_argument("--zero", type=shared.integer, metavar="0|1|2|3", help="ZeRO stage (default 0)")
    cmd.add_argument("--global-batch-tokens", type=shared.count, metavar="T",
                     help="tokens per step (sets the micro-batches: T ÷ (dp·b·s))")
    cmd.add_argument("--micro-batch", type=shared.count, metavar="B", help="sequences per micro-batch (default 1)")
    cmd.add_argument("--seq-len", type=shared.count, metavar="S", help="tokens per sequence (default 4,096)")
    cmd.add_argument("--micro-batches", type=shared.count, metavar="M",
                     help="micro-batches per step (default 1, or 4·pp with a pipeline)")
    cmd.add_argument("--interleave", type=shared.count, metavar="V", help="model chunks per pipeline stage (default 1)")
    cmd.add_argument("--recompute", metavar="MODE", help="none, selective or full (default none)")
    cmd.add_argument("--sequence-parallel", action="store_true", default=None,
                     help="split the norms' and dropouts' activations over tp (Korthikanti et al. 2022)")
    cmd.add_argument("--link-intra", metavar="ID", help="link preset inside a node (default: the preset's node link)")
    cmd.add_argument("--link-inter", metavar="ID", help="link preset between nodes (default: the preset's "
                     "inter_node_link)")
    cmd.add_argument("--train-tokens", metavar="D", help="tokens a whole training run sees: with --mfu, the chips "
                     "its global batch spreads over at the data-parallel threshold and the days it takes (the "
                     "Scaling Book's LLaMA-3 70B: 15e12 tokens, 16e6 a batch, 18,823 TPU v5p, about 17 days)")
    cmd.add_argument("--mfu", metavar="U", help="model FLOPs utilization of that run, a fraction (0.5 for 50 %%); "
                     "needs --train-tokens")
    cmd.add_argument("--search", action="store_true", help="every layout of --gpus chips that fits, fastest first, "
                     "at the global batch of the layout given (--zero fixes the stage)")
    cmd.add_argument("--json", action="store_true", help="print JSON")
    cmd.set_defaults(handler=_cmd_parallel)


def _cmd_parallel(args: argparse.Namespace) -> int:
    from ainotes.core.parallel_step import search, step
    from ainotes.core.parallelism import ParallelRun
    fields = {key: getattr(args, key) for key in FIELDS if getattr(args, key, None) is not None}
    known = shared.RunPresets(args)
    models, presets, links = known.models, known.presets, known.links()

    def checked(given: dict[str, Any]) -> ParallelRun:
        return ParallelRun.from_fields(given, models=models, presets=presets, links=links, label=shared.flag)

    if args.mfu is not None and args.train_tokens is None:
        raise InputError("--mfu needs --train-tokens (the tokens of the whole training run, e.g. 15e12)")
    if args.search:
        # The batch is --global-batch-tokens, else the layout given's; each split of --gpus then shares it.
        tokens = fields.get("global_batch_tokens") or checked(fields).layout.global_batch_tokens
        base = {k: v for k, v in fields.items() if k not in ("dp", "tp", "pp", "ep", "cp", "micro_batches", "zero")}
        run = checked({**base, "gpus": 1, "global_batch_tokens": tokens})
        found_thresholds = _thresholds(run, args, tokens)
        found = search(run, zero=args.zero, gpus=args.gpus)
        if args.json:
            record = {"layouts": [b.record() for b in found], "thresholds": found_thresholds.record()}
            print(json.dumps(record, indent=2, ensure_ascii=False))
            return 0
        _print_search(run.model.name, run.preset.name, args.gpus, found)
        _print_thresholds(found_thresholds)
        return 0
    run = checked(fields)
    found_thresholds = _thresholds(run, args, run.layout.global_batch_tokens)
    breakdown = step(run)
    if args.json:
        print(json.dumps({**breakdown.record(), "thresholds": found_thresholds.record()}, indent=2,
                         ensure_ascii=False))
        return 0
    _print_step(run.model.name, run.preset.name, breakdown)
    _print_thresholds(found_thresholds)
    return 0


def _thresholds(run: ParallelRun, args: argparse.Namespace, batch_tokens: int) -> ModelThresholds:
    """The preset's thresholds for the run's model over the links the run is timed on, with the training
    run at the threshold where --train-tokens asks for it (--mfu then required)."""
    found = ModelThresholds(preset_thresholds(run.preset, run.links, link_intra=run.link_intra,
                                              link_inter=run.link_inter), run.model)
    if args.train_tokens is None:
        return found
    if args.mfu is None:
        raise InputError("--train-tokens needs --mfu (the fraction of peak the run reaches, e.g. 0.5)")
    return found.training_at(batch_tokens, args.train_tokens, args.mfu, label=shared.flag)


def _print_step(model: str, preset: str, b: StepBreakdown) -> None:
    lay = b.layout
    print(f"{model} on {lay.gpus:,} × {preset}: {lay.label}; micro-batch {lay.micro_batch} × "
          f"{lay.micro_batches} per step, sequence {lay.seq_len:,}, {lay.global_batch_tokens:,} tokens")
    rows = [[c.kind, c.parallelism, c.op, f"{c.count_per_step:,}", units.si(c.bytes, "B"), str(c.ranks), c.link,
             c.algorithm, shared.seconds(c.time_s), "yes" if c.hidden else shared.seconds(c.exposed_s)]
            for c in b.collectives]
    if rows:
        print(shared.table(["collective", "axis", "op", "per step", "bytes each", "ranks", "link", "algorithm",
                            "time", "exposed"], rows, right={3, 4, 5, 8, 9}))
    parts = ", ".join(f"{_part_title(name)} {shared.seconds(b.part_s(name))}" for name in PARTS if b.part_s(name))
    print(f"step: {shared.seconds(b.step_s)} ({parts}); bubble {b.bubble_fraction:.1%} of the pipeline")
    print(f"tokens per second: {units.significant(b.tokens_per_s, 4)}; MFU ceiling {b.mfu_ceiling:.1%}")
    capacity = "" if b.memory.capacity_bytes is None else (
        f" of {units.si(b.memory.capacity_bytes, 'B')}: " + ("fits" if b.fits else "does not fit"))
    print(f"memory per chip: {units.si(b.memory.total_bytes, 'B')}{capacity}")


def _part_title(name: str) -> str:
    return {"compute": "compute", "bubble": "bubble"}.get(name, f"exposed {name.upper()}")


def _print_search(model: str, preset: str, gpus: int, found: tuple[StepBreakdown, ...]) -> None:
    if not found:
        print(f"no layout of {model} on {gpus:,} × {preset} fits its memory")
        return
    print(f"{len(found)} layouts of {model} on {gpus:,} × {preset} fit, fastest first:")
    rows = [[b.layout.label, shared.seconds(b.step_s), f"{b.mfu_ceiling:.1%}", f"{b.bubble_fraction:.1%}",
             shared.seconds(b.exposed_comm_s), units.si(b.memory.total_bytes, "B")] for b in found[:SEARCH_ROWS]]
    print(shared.table(["layout", "step", "MFU ceiling", "bubble", "exposed comm", "memory"], rows,
                       right={1, 2, 3, 4, 5}))
    if len(found) > SEARCH_ROWS:
        print(f"(and {len(found) - SEARCH_ROWS} more; --json lists them all)")


def _tokens(value: float) -> str:
    """Tokens per chip as the Scaling Book prints them: whole where the value is (2,550), else to a tenth
    (433.5)."""
    return units.fixed(value, 0 if abs(value - round(value)) < 0.05 else 1, grouping=True)


def _print_thresholds(found: ModelThresholds) -> None:
    """The preset's thresholds for the model (Austin et al., the Scaling Book), and the training run at
    the threshold where asked."""
    record = found.record()
    axes = record["dp_tokens_per_chip_all_torus_axes"]
    over_axes = "" if axes is None else f", {_tokens(axes)} over all {record['torus_axes']} torus axes"
    print(f"thresholds at {units.flops_per_s(record['peak_flops_per_s'])} (dense BF16), "
          f"{record['link_in_node']} inside a node, {record['link_across_nodes']} across nodes:")
    print(f"  data parallel / FSDP stays compute-bound above {_tokens(record['dp_tokens_per_chip_in_node'])} "
          f"tokens per chip inside a node, {_tokens(record['dp_tokens_per_chip_across_nodes'])} across "
          f"nodes{over_axes}")
    print(f"  tensor parallel turns communication-bound past {units.significant(record['tp_degree_limit'], 3)} "
          f"ways (F = {record['model_d_ff']:,}); FSDP + TP stays compute-bound above "
          f"{_tokens(record['fsdp_tp_tokens_per_chip_floor'])} tokens per chip")
    if record["moe_experts_over_active"] != 1:
        print(f"  mixture of experts: E/k = {units.significant(record['moe_experts_over_active'], 4)}, so data "
              f"parallel needs {_tokens(record['moe_dp_tokens_per_chip_in_node'])} tokens per chip inside a node")
    if found.training is not None:
        run = found.training
        print(f"training at the threshold: 6·P·D = {run.flops:.3g} FLOPs; a batch of {run.batch_tokens:,.0f} "
              f"tokens ÷ {_tokens(run.tokens_per_chip)} per chip = {run.estimate.chips:,} chips at "
              f"{units.percent(run.mfu)} MFU: {units.significant(run.estimate.days, 3)} days")
