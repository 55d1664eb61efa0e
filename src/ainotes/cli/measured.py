"""``ainotes measured``: what a measured file holds, the α and β fitted to it, and the model's error."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from ainotes.base.errors import InputError
from ainotes.cli import shared


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    """Register this module's subcommand."""
    measured = commands.add_parser(
        "measured", parents=[common], help="read an nccl-tests log, an ncu CSV or a profiler trace",
        description="Read a measured file (nccl-tests text or -J JSON, Nsight Compute --csv, a PyTorch profiler "
        "trace .json or .json.gz) into a table; for nccl-tests also α and β fitted to the times and, with --link, "
        "the α–β model's time and error (model ÷ measured − 1) per size; for ncu with --preset each kernel's roof.")
    measured.add_argument("file", metavar="FILE", help="the measured file")
    measured.add_argument("--format", choices=("nccl-tests", "ncu", "kineto"), help="the file's format "
                          "(default: told from the file)")
    measured.add_argument("--preset", metavar="ID",
                          help="GPU preset: an ncu file's roofs; for nccl-tests without --link, the link its "
                          "node uses for that many ranks (see 'ainotes presets')")
    measured.add_argument("--link", metavar="ID", help="link preset for an nccl-tests file's α–β model "
                          "(see 'ainotes links')")
    measured.add_argument("--ranks", type=shared.count, metavar="N", help="rank count, when the file does not list "
                          "its devices")
    measured.add_argument("--op", metavar="OP", help="the collective, when the file does not name it "
                          "(all-reduce, all-gather, reduce-scatter, broadcast, reduce, all-to-all, ...)")
    measured.add_argument("--json", action="store_true", help="print JSON")
    measured.set_defaults(handler=_cmd_measured)


def _cmd_measured(args: argparse.Namespace) -> int:
    from ainotes.core.links import link_by_id
    from ainotes.measurements import report
    from ainotes.measurements.kineto import KinetoTrace
    from ainotes.measurements.nccl_tests import NcclTestsRun
    from ainotes.measurements.read import read_measured

    run = read_measured(Path(args.file), format_name=args.format, op=args.op, ranks=args.ranks)
    if isinstance(run, NcclTestsRun):
        link = None
        link_id = args.link
        if link_id is None and args.preset:  # the GPU's node: its NVLink inside a node, its NIC across nodes
            gpu = shared.preset_flag(shared.load_gpu_presets(args), args.preset)
            link_id = report.preset_link_id(gpu, run.ranks)
        if link_id:
            try:
                link = link_by_id(shared.load_link_presets(args), link_id)
            except InputError as exc:
                raise InputError(f"--link: {exc}") from None
        record = report.nccl_record(run, link)
        text = nccl_text(record)
    elif isinstance(run, KinetoTrace):
        record = report.kineto_record(run)
        text = kineto_text(record)
    else:
        preset = shared.preset_flag(shared.load_gpu_presets(args), args.preset) if args.preset else None
        record = report.ncu_record(run, preset)
        text = ncu_text(record)
    print(json.dumps(record, indent=2, ensure_ascii=False) if args.json else text)
    return 0


def _num(value: float | None, digits: int = 4) -> str:
    from ainotes.measurements.report import figure  # pandas loads only for this command

    return figure(value, digits)


def _duration(value_s: float) -> str:
    from ainotes.measurements.report import duration

    return duration(value_s)


def _percent(value: float | None) -> str:
    from ainotes.measurements.report import percent

    return percent(value)


def nccl_text(record: dict) -> str:
    """The human table for an nccl-tests record: as read, then the model per size, the fit and the notes."""
    ranks_from = f" ({record['ranks_from']})" if record["ranks_from"] else ""
    lines = [f"{record['path']}: nccl-tests, {record['op'] or 'collective not named'} of {record['dtype']} on "
             f"{record['ranks'] or '?'} ranks{ranks_from}" + (f", {', '.join(record['devices'])}" if record["devices"]
                                                              else "")]
    from ainotes.measurements.report import nccl_table

    header, rows, right = nccl_table(record)  # the page's table, cell for cell
    lines += ["", shared.table(header, rows, right=right), ""]
    footer = record["footer_avg_busbw_gbps"]
    lines.append(f"average busbw {_num(record['avg_busbw_gbps'], 6)} GB/s over both blocks"
                 + (f" (the file's footer: {footer:g})" if footer is not None else ""))
    if fitted := record["fit"]:
        lines.append(f"fit ({fitted['algorithm']}, relative least squares on the {fitted['times'].replace('_', '-')} "
                     f"times): α = {_duration(fitted['alpha_s'])}, "
                     f"B = 1/β = {_num(fitted['bandwidth_gbps'])} GB/s")
    if model_record := record.get("model"):
        lines.append(f"link {model_record['link']} ({model_record['link_name']}): α = "
                     f"{_duration(model_record['alpha_s'])}, B = {model_record['bandwidth_gbps']:g} GB/s; "
                     "error = model ÷ measured − 1")
    if record["nccl_algo"]:
        lines.append(f"the run set NCCL_ALGO={record['nccl_algo']}")
    lines += [f"note: {note}" for note in record["notes"]]
    return "\n".join(lines)


def ncu_text(record: dict) -> str:
    """The human table for an ncu record: each kernel with the precision its FLOPs ran in and, when a GPU preset
    was given, the roof that holds it; a kernel whose FLOPs mix precisions gets a line of its mix below."""
    from ainotes.measurements.words import roof_percent

    with_roof = record["gpu"] is not None
    header = ["id", "kernel", "precision", "GFLOP", "DRAM MB", "time µs", "TFLOP/s", "FLOP/byte"]
    header += ["roof TFLOP/s", "of roof"] if with_roof else []
    rows, mixes = [], []
    for kernel in record["kernels"]:
        precision = "—" if not kernel["work"] else (
            "mixed" if kernel["mixed"] else kernel["held_to"].removesuffix(" (precision assumed)"))
        cells = [kernel["id"], kernel["name"][:56], precision, _num(kernel["flops"] and kernel["flops"] / 1e9),
                 _num(kernel["dram_bytes"] and kernel["dram_bytes"] / 1e6), _num(kernel["duration_s"] * 1e6),
                 _num(kernel["flops_per_s"] and kernel["flops_per_s"] / 1e12), _num(kernel["intensity"])]
        if with_roof:
            fraction = kernel["fraction_of_roof"]
            flag = " ABOVE ROOF" if kernel["above_roof"] else ""
            cells += [_num(kernel["roof_flops_per_s"] and kernel["roof_flops_per_s"] / 1e12),
                      ("—" if fraction is None else roof_percent(fraction)) + flag]
        rows.append(cells)
        if kernel["mixed"]:
            peak = kernel.get("peak_flops_per_s")
            mixes.append(f"kernel {kernel['id']} mixes precisions: {kernel['held_to']} of its FLOPs"
                         + (f"; compute roof ΣF ÷ Σ(F_p ÷ peak_p) = {_num(peak / 1e12)} TFLOP/s" if peak else ""))
    # A --print-summary CSV has one row per kernel, its figures the average over the kernel's launches.
    counted = (f"{len(rows)} kernel{'s' if len(rows) != 1 else ''}, each averaged over its launches"
               if record["layout"] == "summary" else f"{len(rows)} launch{'es' if len(rows) != 1 else ''}")
    lines = [f"{record['path']}: Nsight Compute ({record['layout']} page), {counted}"
             + (f", roofs of {record['gpu']}" if with_roof else ""), "",
             shared.table(header, rows, right={3, 4, 5, 6, 7, 8, 9})]
    lines += mixes
    lines += [f"note: {note}" for note in record["notes"]]
    return "\n".join(lines)


def kineto_text(record: dict) -> str:
    """The human summary of a trace: NCCL collectives grouped by kind and size, the top kernels, the steps."""
    groups: dict[tuple, list[float]] = {}
    for item in record["collectives"]:
        groups.setdefault((item["op"] or item["kernel"][:40], item["bytes"], item["group_size"]), []).append(
            item["duration_s"])
    rows = [[str(op), "—" if size is None else f"{size:,}", str(group or "—"), str(len(times)),
             _num(sum(times) / len(times) * 1e6)] for (op, size, group), times in groups.items()]
    lines = [f"{record['path']}: PyTorch profiler trace, {len(record['collectives'])} NCCL kernels, world size "
             f"{record['world_size'] or '?'}", "",
             shared.table(["collective", "bytes", "ranks", "calls", "mean µs"], rows, right={1, 2, 3, 4})]
    top = [[k["name"][:70], str(k["count"]), _num(k["total_s"] * 1e3)] for k in record["kernels"][:10]]
    lines += ["", shared.table(["compute kernel", "calls", "total ms"], top, right={1, 2})]
    if record["steps"]:
        lines += ["", "steps: " + ", ".join(f"{s['step']} {_num(s['duration_s'] * 1e3)} ms" for s in record["steps"])]
    if found := record.get("step_times"):
        from ainotes.measurements.report import step_time_text

        lines.append(f"step time: {step_time_text(found)}")
    lines += [f"note: {note}" for note in record["notes"]]
    return "\n".join(lines)
