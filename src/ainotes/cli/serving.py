"""``ainotes inference``: KV cache, decode step, tokens/s, B_crit and the largest batch."""

from __future__ import annotations

import argparse
import json
from typing import Any

from ainotes.base import units
from ainotes.cli import shared


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    """Register this module's subcommands."""
    from ainotes.core import inference

    serve = commands.add_parser(
        "inference", parents=[common], help="KV cache, decode step, tokens/s, B_crit and the largest batch",
        description="Serve a model preset on a GPU preset (Scaling Book, 'All About Transformer Inference'): "
        "KV cache per token = 2·L·kv_heads·d_head·bytes (the latent and RoPE key with latent attention, capped at "
        "the window on windowed layers); one decode step = B·KV(S)/W + max(dense weights/W, 2·B·P_dense/F) + "
        "max(experts touched·expert/W, 2·B·k·P_expert/F) (+ two all-reduces per layer with --tp, the fastest "
        "algorithm for the message); tokens/s = B ÷ step; B_crit = (F/W)·(w/2), B_crit·E/k for the experts; the "
        "largest batch = (capacity − weights) ÷ KV(S). F is the dense tensor peak at --compute-dtype, W the memory "
        "bandwidth.",
    )
    serve.add_argument("--model", required=True, metavar="ID", help="model preset id (presets/models)")
    serve.add_argument("--preset", required=True, metavar="ID", help="GPU preset id")
    serve.add_argument("--batch", type=shared.count, default=1, metavar="B",
                       help="sequences per decode step (default 1)")
    serve.add_argument("--context", type=shared.count, default=1, metavar="S", help="tokens of context per sequence "
                       "(default 1)")
    serve.add_argument("--prompt", type=shared.count, metavar="T", help="prompt tokens to prefill (default: --context)")
    for flag, what in (("--weights-dtype", "weights"), ("--kv-dtype", "KV cache")):
        serve.add_argument(flag, default="bf16", metavar="P",
                           help=f"{what} stored in P: {', '.join(inference.STORAGE_DTYPES)} (default bf16)")
    serve.add_argument("--compute-dtype", default="bf16", metavar="P",
                       help=f"matmuls at this precision's roof: {', '.join(inference.COMPUTE_DTYPES)} (default bf16)")
    serve.add_argument("--tp", type=shared.count, default=1, metavar="N", help="tensor-parallel chips (default 1)")
    serve.add_argument("--link", metavar="ID", help="link preset timing the TP all-reduces (default: the link the "
                       "group of --tp chips crosses on the GPU preset's node)")
    serve.add_argument("--json", action="store_true", help="print JSON")
    serve.set_defaults(handler=_cmd_inference)


def _cmd_inference(args: argparse.Namespace) -> int:
    from ainotes.core.inference import InferenceSetup

    known = shared.RunPresets(args)
    fields = {key: getattr(args, key) for key in ("model", "preset", "batch", "context", "prompt", "weights_dtype",
                                                  "kv_dtype", "compute_dtype", "tp", "link")}
    setup = InferenceSetup.from_fields(
        {k: v for k, v in fields.items() if v is not None},
        models=known.models, presets=known.presets, links=known.links, label=shared.flag)
    record = setup.record()
    if args.json:
        print(json.dumps(record, indent=2, ensure_ascii=False))
        return 0
    terms = record["decode_terms_s"]
    print(f"{setup.model.name} on {setup.tp} × {setup.preset.name}: batch {setup.batch}, context {setup.context:,}, "
          f"weights {setup.weights_dtype}, KV {setup.kv_dtype}, compute {setup.compute_dtype}")
    print(f"KV cache per token: {record['kv_bytes_per_token']:,.0f} bytes "
          f"({units.significant(record['kv_bytes_per_token'] / 1024, 4)} KiB); "
          f"weights {units.si(record['weights_bytes'], 'B')}")
    print(f"decode step: {shared.seconds(record['decode_step_s'])} ({record['decode_bound']}-bound matmuls; "
          f"KV reads {shared.seconds(terms['kv'])}, weights {shared.seconds(terms['weights'])}, "
          f"compute {shared.seconds(terms['compute'])}"
          + (f", all-reduces {shared.seconds(terms['allreduce'])} over {record['link']}, "
             f"{record['allreduce_algorithm']}" if setup.tp > 1 else "") + ")")
    if setup.model.is_moe:
        print(f"experts read per MoE layer: {units.significant(record['experts_touched'], 3)} of "
              f"{setup.model.experts} (uniform routing, batch {setup.batch})")
    print(f"tokens per second: {units.significant(record['tokens_per_s'], 4)}")
    print(f"B_crit: {units.significant(record['b_crit'], 4)}"
          + (f" (attention and the dense matmuls; each expert, seeing B·k/E of the tokens: "
             f"{units.significant(record['compute_bound_batch'], 4)})" if setup.model.is_moe else ""))
    if record["max_batch"] is None:
        print(f"largest batch: unknown ({setup.preset.file or setup.preset.id} gives no memory capacity)")
    elif record["max_batch"] == 0:
        print(f"largest batch: none; the weights alone take {units.si(setup.weights_bytes_per_chip, 'B')} of "
              f"{setup.preset.memory_capacity_label} per chip (try a larger --tp)")
    else:
        print(f"largest batch that fits at context {setup.context:,}: {record['max_batch']:,} "
              f"({setup.preset.memory_capacity_label} per chip)")
    print(f"prefill of {setup.prompt:,} tokens × {setup.batch}: {shared.seconds(record['prefill_s'])} "
          f"({record['prefill_bound']}-bound)")
    return 0
