"""``ainotes roofline``, ``kernel`` and ``collective``: rooflines, a kernel against each roof, a collective's frames."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from typing import Any

from ainotes.base import units
from ainotes.base.errors import InputError
from ainotes.cli import shared
from ainotes.core.hardware import PRECISIONS
from ainotes.html import embed

COLLECTIVE_SUFFIXES = (".svg", ".json", ".html")
ROOFLINE_SUFFIXES = (".svg", ".png", ".json", ".html")

KERNEL_HELP = """\
kernel SPEC syntax (--kernel, repeatable):
  [LABEL=]KIND:SHAPE[:DTYPE][:COMPUTE][:sparse]
                                  DTYPE: fp64, fp32, tf32, fp16, bf16 (default), fp8, fp4, int8
  gemm:MxNxK                      (M×K)·(K×N) matrix product, K×N the weights
  gemm:MxNxK:fp8:bf16             8-bit weights (also int8, fp4, int4), BF16 activations and roof
  gemm:MxNxK:fp8:sparse           2:4 structured-sparse weights: K×N bytes halve, sparse roof
  add:N                           element-wise add of N elements
  softmax:RxC                     row-wise softmax of an R×C matrix
  layernorm:RxC                   layer norm over C columns of R rows
  attention:BxHxSxD               fused attention (scores stay on chip)
  attention-naive:BxHxSxD         unfused attention (S×S scores written to memory)
  decode-attention:BxHxKVxSxD     one query per sequence against S cached keys, KV key/value heads
  attention-kv:BxHxKVxTxSxD       T queries per sequence against S cached keys (prefill: T = S)
                                  (a second dtype is the KV cache's: decode-attention:...:fp8:bf16)
Dimensions are whole numbers from 1 to 2**31; 'x' or '×' separates them.
Each kernel is plotted at its ideal intensity: every operand read once and
every output written once, each tensor a whole number of bytes (4-bit packed).
Matrix kernels meet the tensor roof of their compute dtype (fp32: the
CUDA-core FP32 roof); add, softmax and layernorm meet the vector
FP32 roof (FP64 for fp64 data).

examples:
  ainotes roofline -o roofline.svg
  ainotes roofline --preset h100 a100 --sparsity -o r.html
  ainotes roofline --kernel gemm:8192x8192x8192 'QKV=gemm:4096x12288x4096:fp16' -o r.png
"""


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    """Register this module's subcommands."""
    kernel = commands.add_parser(
        "kernel", parents=[common], help="a kernel's FLOPs, bytes and intensity, and the roof it meets per preset",
        description="Place one kernel on each preset's roofline at the ceiling of its own dtype: matrix kernels on "
        "the tensor rate of their dtype (fp32 on the CUDA-core FP32 rate), element-wise and reduction kernels on "
        "the vector FP32 rate (FP64 for fp64). A preset without that path says 'unsupported'.",
        epilog=KERNEL_HELP, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    kernel.add_argument("spec", metavar="SPEC", help="kernel spec, e.g. gemm:8192x8192x8192:fp8 (syntax below)")
    kernel.add_argument("--preset", nargs="+", action="extend", default=[], metavar="ID",
                        help="presets to place it on (default: all)")
    kernel.add_argument("--sparsity", action="store_true",
                        help="also show each preset's 2:4 sparse roof at that precision, where a sparse kernel "
                        "would sit (a dense kernel still meets the dense roof; declare a sparse one as "
                        "gemm:...:sparse)")
    kernel.add_argument("--json", action="store_true", help="print JSON")
    kernel.set_defaults(handler=_cmd_kernel)

    roofline = commands.add_parser(
        "roofline", parents=[common], help="draw a roofline chart to a file",
        description="Draw rooflines (attainable FLOP/s against arithmetic intensity) for GPU presets, with "
        "kernels placed at their intensity. The format follows the -o suffix: .svg, .png, .json (Vega-Lite) "
        "or .html (one self-contained page).",
        epilog=KERNEL_HELP, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    roofline.add_argument("--preset", nargs="+", action="extend", default=[], metavar="ID",
                          help="presets to draw (default: all)")
    roofline.add_argument("--sparsity", action="store_true",
                          help="use the 2:4 structured-sparse rate where the GPU supports it")
    roofline.add_argument("--kernel", nargs="+", action="extend", default=[], metavar="SPEC",
                          help="kernels to place on the chart (syntax below)")
    roofline.add_argument("--precision", choices=PRECISIONS, metavar="P",
                          help=f"draw every preset's ceiling at this precision ({', '.join(PRECISIONS)}; fp32 is "
                          "the CUDA-core rate, the others tensor rates); default: FP16/BF16")
    roofline.add_argument("--title", type=shared.one_line, help="chart title")
    roofline.add_argument("-o", "--output", required=True, metavar="FILE",
                          help="output file: .svg, .png, .json or .html")
    roofline.set_defaults(handler=_cmd_roofline)

    collective = commands.add_parser(
        "collective", parents=[common], help="a collective operation's states and frames",
        description="Simulate a collective on a few ranks: print its states and frames as JSON, or write an "
        "animated .svg, a .json of the frames or a self-contained .html stepper.",
    )
    collective.add_argument("op", metavar="OP", help="all-reduce, reduce, reduce-scatter, all-gather, "
                            "broadcast, scatter or all-to-all")
    collective.add_argument("--ranks", type=shared.integer, default=4, metavar="N", help="number of ranks (default 4)")
    collective.add_argument("--root", type=shared.integer, metavar="R", help="root rank for reduce, broadcast, scatter")
    collective.add_argument("--schedule", choices=("logical", "ring"), default="logical",
                            help="logical: one exchange per step (default); ring: the ring algorithm chunk by chunk, "
                            "for all-reduce, reduce-scatter and all-gather")
    output = collective.add_mutually_exclusive_group(required=True)
    output.add_argument("--json", action="store_true", help="print the states and frames as JSON")
    output.add_argument("-o", "--output", metavar="FILE", help="output file: .svg, .json or .html")
    collective.set_defaults(handler=_cmd_collective)


def _parse_kernel_flag(text: str) -> Any:
    from ainotes.core.kernels import parse_kernel_spec

    label, separator, spec = text.rpartition("=")
    try:
        return parse_kernel_spec(spec, label=label if separator else None)
    except InputError as exc:
        raise InputError(f"--kernel: {exc}") from None


def _cmd_roofline(args: argparse.Namespace) -> int:
    output = shared.check_output(args.output, ROOFLINE_SUFFIXES)
    presets = shared.chosen_presets(args)
    kernels = tuple(_parse_kernel_flag(text) for text in args.kernel)

    import inspect

    from ainotes.charts.roofline.spec import roofline_spec

    options: dict[str, Any] = {}
    if args.precision is not None:
        # The per-precision chart is the explorer's; until its roofline_spec takes the keyword, say so.
        if "precision" not in inspect.signature(roofline_spec).parameters:
            raise InputError("--precision: this build's roofline chart draws FP16/BF16 only")
        options["precision"] = args.precision
    options["palette_ids"] = [p.id for p in shared.load_gpu_presets(args)]  # each GPU in its site colour
    spec = roofline_spec(presets, kernels=kernels, sparsity=args.sparsity, title=args.title, **options)
    suffix = output.suffix.lower()
    content: str | bytes
    if suffix == ".json":
        content = json.dumps(spec, indent=2, ensure_ascii=False) + "\n"
    else:
        from ainotes import render  # vl-convert: loaded only for rendered formats

        if suffix == ".svg":
            content = render.svg(spec)
        elif suffix == ".png":
            content = render.png(spec)
        else:
            from ainotes.charts import explorer

            content = embed.standalone_html(explorer.figure(spec), title=args.title or "Roofline")
    shared.write_output(output, content)
    print(f"wrote {output}")
    return 0


def _cmd_kernel(args: argparse.Namespace) -> int:
    from ainotes.charts import formats
    from ainotes.core.kernels import LAUNCH_REMARK, LAUNCH_SOURCE, below_launch, parse_kernel_spec
    from ainotes.core.roofline import ceiling_at, kernel_roof

    try:
        kernel = parse_kernel_spec(args.spec)
    except InputError as exc:
        raise InputError(f"SPEC: {exc}") from None
    presets = shared.chosen_presets(args)
    rows = []
    for preset in presets:
        roof = kernel_roof(preset, kernel, sparsity=args.sparsity)
        record: dict[str, Any] = {
            "id": preset.id,
            "unit": roof.unit,
            "precision": roof.precision,
            "sparse": roof.sparse,
            "peak_tflops": roof.peak_tflops,
            "attainable_tflops": roof.attainable_tflops,
            "ridge_flop_per_byte": roof.ridge_flop_per_byte,
            "bound": roof.bound,
            "reason": roof.reason,
            # The kernel's FLOPs at that rate, and whether that is under one kernel launch (which then bounds it).
            "time_at_roof_s": roof.time_s,
            "below_launch": None if roof.time_s is None else below_launch(roof.time_s),
        }
        if args.sparsity:
            line = ceiling_at(preset, roof.precision, unit=roof.unit, sparsity=True)
            record["sparse_roof_tflops"] = line.peak_flops_per_s / 1e12 if line is not None and line.sparse else None
        rows.append(record)
    if args.json:
        print(json.dumps({
            "spec": kernel.spec, "kind": kernel.kind, "dtype": kernel.dtype, "storage_dtype": kernel.storage_dtype,
            "sparse": kernel.sparse,
            "label": kernel.label, "flops": kernel.flops, "bytes": kernel.bytes_moved,
            "intensity_flop_per_byte": kernel.intensity_flop_per_byte, "presets": rows,
        }, indent=2, ensure_ascii=False))
        return 0
    print(f"{kernel.spec}: {kernel.label}")
    print(f"FLOPs {kernel.flops:.6g}, bytes {kernel.bytes_moved:.6g}, "
          f"intensity {kernel.intensity_flop_per_byte:.6g} FLOP/byte")
    header = ["id", "ceiling", "peak TFLOP/s", "attainable TFLOP/s", "ridge FLOP/B", "bound"]
    if args.sparsity:
        header.insert(3, "sparse roof TFLOP/s")
    table = []
    for record in rows:
        ceiling_name = f"{record['precision'].upper()} {record['unit']}" + (" 2:4 sparse" if record["sparse"] else "")
        cells = [
            record["id"], ceiling_name,
            "-" if record["peak_tflops"] is None else f"{record['peak_tflops']:.6g}",
            "-" if record["attainable_tflops"] is None else f"{record['attainable_tflops']:.6g}",
            "-" if record["ridge_flop_per_byte"] is None else units.fixed(record["ridge_flop_per_byte"], 1),
            record["bound"] + (f" ({record['reason']})" if record["reason"] else ""),
        ]
        if args.sparsity:
            sparse_roof = record["sparse_roof_tflops"]
            cells.insert(3, "-" if sparse_roof is None else f"{sparse_roof:.6g}")
        table.append(cells)
    print(shared.table(header, table, right={2, 3, 4, 5} if args.sparsity else {2, 3, 4}))
    launch_bound = [f"{r['id']} {formats.time_us_text(r['time_at_roof_s'])}" for r in rows if r["below_launch"]]
    if launch_bound:
        print(f"Time at its roof: {', '.join(launch_bound)}. Each is {LAUNCH_REMARK} ({LAUNCH_SOURCE}).")
    return 0


def _cmd_collective(args: argparse.Namespace) -> int:
    from ainotes.core import collectives

    output = shared.check_output(args.output, COLLECTIVE_SUFFIXES) if args.output else None
    run = collectives.simulate(args.op, args.ranks, args.root if args.root is not None else 0,
                               schedule=args.schedule)
    if args.root is not None and run.root is None:
        raise InputError(f"--root does not apply to {args.op}, which has no root rank")
    if output is None:
        print(json.dumps(collectives.run_to_json(run), ensure_ascii=False))
        return 0

    from ainotes.charts import collective as collective_charts

    writers: dict[str, Callable[[Any], Any]] = {
        ".svg": collective_charts.animated_svg,
        ".json": lambda r: json.dumps(collectives.run_to_json(r), indent=2, ensure_ascii=False) + "\n",
        ".html": collective_charts.standalone_html,
    }
    shared.write_output(output, writers[output.suffix.lower()](run))
    print(f"wrote {output}")
    return 0
