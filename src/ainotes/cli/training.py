"""``ainotes mfu``, ``train-time`` and ``memory``: utilization, time to train and memory per GPU."""

from __future__ import annotations

import argparse
import json
from typing import Any

from ainotes.base import units
from ainotes.cli import shared
from ainotes.core.jobs import JOB_FIELDS, TRAIN_TIME_FIELDS, TrainingJob, TrainingRun
from ainotes.core.jobs import PRECISIONS as JOB_PRECISIONS


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    """Register this module's subcommands."""
    _register_mfu(commands, common)
    _register_train_time(commands, common)
    _register_memory(commands, common)


def _register_mfu(commands: Any, common: argparse.ArgumentParser) -> None:
    mfu = commands.add_parser(
        "mfu", parents=[common], help="model and hardware FLOPs utilization of a training job",
        description="MFU = model FLOPs per token × tokens/s ÷ (GPUs × peak FLOP/s per GPU); model FLOPs per "
        "token = 6N, plus 12·L·H·Q·S with the four attention flags (PaLM, Appendix B), or with --model and "
        "--seq-len. HFU also counts recomputed FLOPs (--recompute).",
    )
    # Values go to TrainingJob as typed, which checks them all (as for the fence and inline forms).
    mfu.add_argument("--params", metavar="N", help="parameter count, e.g. 540e9 (or --model)")
    shared.add_model_flags(mfu)
    mfu.add_argument("--tokens-per-second", required=True, metavar="T",
                     help="the whole job's training throughput in tokens/s")
    mfu.add_argument("--gpus", required=True, metavar="G", help="how many devices share it")
    peak = mfu.add_mutually_exclusive_group(required=True)
    peak.add_argument("--preset", metavar="ID", help="take the peak from this preset's dense tensor rate")
    peak.add_argument("--peak-tflops", metavar="P", help="peak per device in 10^12 FLOP/s")
    mfu.add_argument("--precision", default="bf16", metavar="P",
                     help=f"precision of the preset's tensor peak: {', '.join(JOB_PRECISIONS)} (default: bf16)")
    mfu.add_argument("--layers", metavar="L", help="transformer layers (attention term)")
    mfu.add_argument("--heads", metavar="H", help="attention heads (attention term)")
    mfu.add_argument("--head-dim", metavar="Q", help="head dimension (attention term)")
    mfu.add_argument("--seq-len", metavar="S", help="sequence length (attention term)")
    mfu.add_argument("--recompute", default="none", metavar="MODE",
                     help="activation recomputation, counted by HFU: none, selective or full (default: none)")
    mfu.add_argument("--json", action="store_true", help="print JSON")
    mfu.set_defaults(handler=_cmd_mfu)


def _register_train_time(commands: Any, common: argparse.ArgumentParser) -> None:
    train = commands.add_parser(
        "train-time", parents=[common], help="days and GPU-hours to train at a given MFU",
        description="Training compute C = model FLOPs per token × tokens (6N, plus 12·L·H·Q·S with the four "
        "attention flags); time = C ÷ (MFU × GPUs × peak FLOP/s per GPU).",
    )
    # Values go to ainotes.core.jobs.TrainingRun as typed, which checks them all (as for the inline form).
    train.add_argument("--params", metavar="N", help="parameter count (or --model)")
    shared.add_model_flags(train)
    train.add_argument("--tokens", required=True, metavar="D", help="training tokens")
    train.add_argument("--gpus", required=True, metavar="G", help="number of devices")
    train.add_argument("--mfu", required=True, metavar="U", help="model FLOPs utilization as a fraction, e.g. 0.4")
    peak = train.add_mutually_exclusive_group(required=True)
    peak.add_argument("--preset", metavar="ID", help="GPU preset whose peak to use")
    peak.add_argument("--peak-tflops", metavar="P", help="peak TFLOP/s per device")
    train.add_argument("--precision", choices=JOB_PRECISIONS, metavar="P",
                       help=f"the precision the job trains in, for --preset ({', '.join(JOB_PRECISIONS)}; "
                       "default bf16)")
    train.add_argument("--layers", metavar="L", help="layers (attention term)")
    train.add_argument("--heads", metavar="H", help="attention heads (attention term)")
    train.add_argument("--head-dim", metavar="Q", help="head dimension (attention term)")
    train.add_argument("--seq-len", metavar="S", help="sequence length (attention term)")
    train.add_argument("--json", action="store_true", help="print JSON")
    train.set_defaults(handler=_cmd_train_time)


def _register_memory(commands: Any, common: argparse.ArgumentParser) -> None:
    memory = commands.add_parser(
        "memory", parents=[common], help="memory per GPU of a training run: model states and activations",
        description="Per GPU: weights, gradients and optimizer states under mixed precision (Adam: 16 bytes a "
        "parameter, 20 with FP32 gradient accumulation), sharded by ZeRO over --dp and divided by --tp × --pp; "
        "activations per Korthikanti et al. 2022 (needs --model and --micro-batch with --seq-len); the total "
        "against --preset's capacity. The logits and allocator overheads are reported apart, not in the total.",
    )
    # Values go to ainotes.core.memory.TrainingMemory as typed, which checks them all (as for the fences and forms).
    source = memory.add_mutually_exclusive_group(required=True)
    source.add_argument("--model", metavar="ID", help="a model preset (presets/models/ID.yaml)")
    source.add_argument("--params", metavar="N", help="a parameter count (model states only), e.g. 7.5e9")
    memory.add_argument("--preset", metavar="ID", help="the GPU whose capacity to compare with")
    for flag, meta, text in (("--zero", "0|1|2|3", "ZeRO stage (default 0)"),
                             ("--dp", "N", "data-parallel ranks (default 1)"),
                             ("--tp", "N", "tensor-parallel ranks (default 1)"),
                             ("--pp", "N", "pipeline stages (default 1)"),
                             ("--micro-batch", "B", "sequences per micro-batch (with --seq-len)"),
                             ("--seq-len", "S", "tokens per sequence (with --micro-batch)"),
                             ("--recompute", "none|selective|full", "activation recomputation (default none)"),
                             ("--attention", "standard|fused", "fused: FlashAttention-style, no s² scores stored "
                              "(default standard)"),
                             ("--optimizer", "adam|adam-8bit|sgd", "optimizer (default adam)")):
        memory.add_argument(flag, metavar=meta, help=text)
    memory.add_argument("--sequence-parallel", action="store_true", default=None,
                        help="split along the sequence what tensor parallelism replicates")
    memory.add_argument("--fp32-grad-accum", action="store_true", default=None,
                        help="keep an FP32 gradient buffer (4 more bytes a parameter)")
    memory.add_argument("--no-dropout", dest="dropout", action="store_false", default=None,
                        help="store no dropout masks (default: as the model preset says it was trained; Korthikanti "
                        "et al.'s masks where it says nothing)")
    memory.add_argument("--dropout", dest="dropout", action="store_true", default=None,
                        help="store the dropout masks whatever the model preset says")
    memory.add_argument("--json", action="store_true", help="print JSON")
    memory.set_defaults(handler=_cmd_memory)


def _cmd_mfu(args: argparse.Namespace) -> int:
    fields = {key: getattr(args, key, None) for key in JOB_FIELDS if getattr(args, key, None) is not None}
    presets = {p.id: p for p in shared.load_gpu_presets(args)} if args.preset is not None else {}
    job = TrainingJob.from_fields(fields, presets, label=shared.flag, models=shared.models_loader(args))
    result = job.utilization()
    if job.preset_id is not None:
        peak_source = f"--preset {job.preset_id}: {presets[job.preset_id].name}, dense {job.precision} tensor"
    else:
        peak_source = f"--peak-tflops, {job.precision}"
    if args.json:
        record = {
            "params": result.params,
            "tokens_per_second": result.tokens_per_second,
            "gpus": result.gpus,
            "peak_flops_per_s_per_gpu": result.peak_flops_per_s_per_gpu,
            "precision": job.precision,
            "peak_source": peak_source,
            "attention": job.attention,
            "model": job.model.id if job.model is not None else None,
            "embeddings": job.embeddings,
            "params_convention": job.params_convention,
            "attention_convention": job.attention_convention,
            "recompute": result.recompute,
            "model_flops_per_token": result.model_flops_per_token,
            "hardware_flops_per_token": result.hardware_flops_per_token,
            "mfu": result.mfu,
            "hfu": result.hfu,
            "counts": result.counts,
        }
        print(json.dumps(record, indent=2, ensure_ascii=False))
    else:
        print(f"MFU: {units.percent(result.mfu)}")
        print(f"HFU: {units.percent(result.hfu)}  (recompute: {result.recompute})")
        print(f"model FLOPs per token:    {result.model_flops_per_token:.4e}")
        print(f"hardware FLOPs per token: {result.hardware_flops_per_token:.4e}")
        devices = "device" if result.gpus == 1 else "devices"
        print(f"throughput: {result.tokens_per_second:g} tokens/s over {result.gpus} {devices} "
              f"of {result.peak_flops_per_s_per_gpu / 1e12:g} TFLOP/s peak ({peak_source})")
        print(result.counts)
        print(f"N = {result.params:.6g} ({job.params_convention}); {job.attention_convention}")
    return 0


def _cmd_train_time(args: argparse.Namespace) -> int:
    fields = {key: getattr(args, key) for key in TRAIN_TIME_FIELDS if getattr(args, key, None) is not None}
    presets = {p.id: p for p in shared.load_gpu_presets(args)} if args.preset is not None else {}
    run = TrainingRun.from_fields(fields, presets, label=shared.flag, models=shared.models_loader(args))
    result = run.time()
    count, peak_tflops = run.count, run.peak_tflops
    if run.preset_id is not None:
        source = f"--preset {run.preset_id}: {presets[run.preset_id].name}, dense {run.precision}"
    else:
        source = "--peak-tflops"
    if args.json:
        record = {"flops": result.flops, "seconds": result.seconds, "days": result.days,
                  "gpu_hours": result.gpu_hours, "peak_tflops": peak_tflops, "precision": run.precision}
        print(json.dumps(record, indent=2, ensure_ascii=False))
        return 0
    print(f"time to train: {result.days:.1f} days ({result.seconds:.4g} s)")
    print(f"GPU-hours: {result.gpu_hours:.4g}")
    print(f"training compute: {result.flops:.4g} FLOPs = {result.flops_per_token:.4g} FLOPs/token "
          f"× {result.tokens:.4g} tokens")
    print(f"at {result.mfu * 100:g} % MFU on {result.gpus} devices of {peak_tflops:g} TFLOP/s ({source})")
    print(f"N = {count.params:.6g} ({count.params_convention}); {count.attention_convention}")
    return 0


def _cmd_memory(args: argparse.Namespace) -> int:
    from ainotes.core import memory
    from ainotes.presets.models import default_models_dir, load_models

    fields = {key: getattr(args, key) for key in memory.FIELDS if getattr(args, key, None) is not None}
    models = ({m.id: m for m in load_models(default_models_dir(shared.presets_dir(args)))}
              if args.model is not None else {})
    presets = {p.id: p for p in shared.load_gpu_presets(args)} if args.preset is not None else {}
    config = memory.TrainingMemory.from_fields(fields, models, presets, label=shared.flag)
    estimate = config.estimate()
    if args.json:
        print(json.dumps(_memory_record(config, estimate), indent=2, ensure_ascii=False))
        return 0
    for line in _memory_lines(config, estimate):
        print(line)
    return 0


def _memory_record(config: Any, estimate: Any) -> dict[str, Any]:
    record = {key: estimate.part(key.removesuffix("_bytes")) for key in (
        "weights_bytes", "gradients_bytes", "optimizer_bytes", "activations_bytes", "total_bytes", "capacity_bytes")}
    record.update(fits=estimate.fits, headroom_bytes=estimate.headroom_bytes,
                  model_states_bytes=estimate.model_states_bytes, logits_bytes=estimate.logits_bytes,
                  params=config.param_count, model=config.model.id if config.model else None,
                  preset=config.preset.id if config.preset else None)
    record["config"] = {key: getattr(config, key) for key in (
        "zero", "dp", "tp", "pp", "micro_batch", "seq_len", "recompute", "sequence_parallel", "attention",
        "optimizer", "fp32_grad_accum")}
    record["config"]["dropout"] = config.with_dropout if config.model is not None else config.dropout
    record["rematerialized_bytes"] = estimate.rematerialized_bytes
    record["not_in_total"] = ("logits_bytes (the logits' BF16 output, FP32 copy and BF16 gradient, last pipeline "
                              "stage), allocator "
                              "fragmentation, communication buffers, temporary workspaces, the CUDA context")
    return record


def _memory_lines(config: Any, estimate: Any) -> list[str]:
    from ainotes.core import memory

    what = (f"{config.model.name} ({units.count(config.param_count)} parameters)" if config.model
            else f"{units.count(config.param_count)} parameters")
    lines = [f"memory per GPU: {what}, ZeRO stage {config.zero} ({memory.ZERO_TITLES[config.zero]}) over "
             f"{config.dp} data-parallel ranks, tp {config.tp}, pp {config.pp}, "
             f"{memory.OPTIMIZER_TITLES[config.optimizer]}"
             f"{', FP32 gradient accumulation' if config.fp32_grad_accum else ''}"]
    rows = [["weights", estimate.weights_bytes], ["gradients", estimate.gradients_bytes],
            ["optimizer states", estimate.optimizer_bytes]]
    if estimate.activations_bytes is not None:
        rows.append(["activations", estimate.activations_bytes])
    rows.append(["total", estimate.total_bytes])
    parts = [[name, units.si(value, "B")] for name, value in rows]
    lines.append(shared.table(["part", "bytes per GPU"], parts, right={1}))
    if estimate.activations_bytes is not None:
        lines.append(f"activations: micro-batch {config.micro_batch} × {config.seq_len} tokens, recompute "
                     f"{config.recompute}, {config.attention} attention"
                     f"{', sequence parallel' if config.sequence_parallel else ''}"
                     f"{'' if config.with_dropout else ', no dropout masks'}, first pipeline stage"
                     + (f"; {units.si(estimate.rematerialized_bytes, 'B')} of it the layer the backward pass "
                        "computes again" if estimate.rematerialized_bytes else ""))
    else:
        lines.append("activations: not counted (they need --model, --micro-batch and --seq-len)")
    if config.preset is not None:
        label = config.preset.memory_capacity_label
        if label is None:
            lines.append(f"{config.preset.name}: its preset gives no memory capacity")
        else:
            verdict = (f"fits, {units.si(estimate.headroom_bytes, 'B')} left" if estimate.fits
                       else f"does not fit, {units.si(-estimate.headroom_bytes, 'B')} short")
            lines.append(f"{config.preset.name}, {label}: {verdict}")
    above = "allocator fragmentation, communication buffers, temporary workspaces, the CUDA context"
    if estimate.logits_bytes is not None:
        above = (f"the logits ({units.si(estimate.logits_bytes, 'B')}: BF16 output, FP32 copy and BF16 gradient, "
                 "last stage), " + above)
    lines.append(f"not in the total (measured memory sits above it): {above}")
    return lines
