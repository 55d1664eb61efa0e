"""The ``ainotes`` command: presets, validation, MFU, rooflines and collectives, to the terminal or to files.

A thin adapter over the core (``hardware``, ``kernels``, ``utilization``,
``collectives``) and the chart pipeline (``charts``, ``render``). Every user
mistake ends as one line on stderr, ``ainotes <command>: <what and where>``,
exit status 2, no traceback; output files are written atomically (temporary
file, then ``os.replace``) and only once everything has succeeded.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

from ainotes.base import cache, units
from ainotes.base.errors import InputError
from ainotes.base.files import write_atomic
from ainotes.core import checks
from ainotes.core.hardware import PRECISIONS, UNITS, Preset, preset_by_id
from ainotes.core.jobs import JOB_FIELDS, TRAIN_TIME_FIELDS, TrainingJob, TrainingRun
from ainotes.core.jobs import PRECISIONS as JOB_PRECISIONS
from ainotes.html import embed
from ainotes.presets.gpus import default_presets_dir, load_presets, validate_paths

EXIT_USER_ERROR = 2

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


class _Parser(argparse.ArgumentParser):
    """argparse with one-line usage errors: ``ainotes mfu: argument --gpus: ...``, exit 2."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # argparse takes "-5e9" for an option; read it as a (negative) number so the
        # value check can say what is wrong with it.
        self._negative_number_matcher = re.compile(r"^-(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$")

    def error(self, message: str) -> NoReturn:
        message = " ".join(message.split())
        self.exit(EXIT_USER_ERROR, f"{self.prog}: {message} (see '{self.prog} --help')\n")


# --- argument types: each refuses bad values with the rule and the value -------------


def _integer(text: str) -> int:
    try:
        return int(text.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number: {text!r}") from None


def _positive_number(text: str) -> float:
    """A flag's value as a finite number > 0 (``ainotes.core.checks``; argparse names the flag)."""
    try:
        return checks.positive_number(text, "")
    except InputError as exc:
        raise argparse.ArgumentTypeError(str(exc).strip()) from None


def _count(text: str) -> int:
    """A flag's value as a whole number >= 1 (``ainotes.core.checks``; argparse names the flag)."""
    try:
        return checks.whole_number(text, "")
    except InputError as exc:
        raise argparse.ArgumentTypeError(str(exc).strip()) from None


def _one_line(text: str) -> str:
    if not text.strip() or "\n" in text or "\r" in text:
        raise argparse.ArgumentTypeError(f"must be one non-empty line: {text!r}")
    return text.strip()


# --- parser --------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    """The ``ainotes`` argument parser with its subcommands."""
    common = _Parser(add_help=False)
    common.add_argument(
        "--presets-dir", metavar="DIR", default=argparse.SUPPRESS,
        help="folder of preset YAML files (default: $AINOTES_PRESETS_DIR, else ./presets)",
    )

    parser = _Parser(
        prog="ainotes",
        description="Figures and charts for AI-systems notes: GPU presets, MFU, rooflines, collectives.",
        parents=[common],
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True, parser_class=_Parser)

    presets = commands.add_parser("presets", parents=[common], help="list the GPU presets and their figures",
                                  description="List the GPU presets: per-GPU dense and sparse FP16/BF16 tensor "
                                  "rates, memory bandwidth and ridge points, then every precision's dense peak "
                                  "('no path' where the GPU has none, 'not given' where the file is silent).")
    presets.add_argument("--json", action="store_true", help="print JSON instead of a table")
    presets.set_defaults(handler=_cmd_presets)

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

    validate = commands.add_parser("validate", parents=[common], help="check preset files",
                                   description="Check preset files and folders (default: the presets folder), "
                                   "interconnect presets included (a folder's links/ subfolder, or a file in "
                                   "a links/ folder). Prints one OK line per valid preset and one line per "
                                   "error; exit status 2 if any file has an error.")
    validate.add_argument("paths", nargs="*", metavar="PATH", help="preset files or folders")
    validate.set_defaults(handler=_cmd_validate)

    _add_mfu(commands, common)
    _add_models(commands, common)

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
    roofline.add_argument("--title", type=_one_line, help="chart title")
    roofline.add_argument("-o", "--output", required=True, metavar="FILE",
                          help="output file: .svg, .png, .json or .html")
    roofline.set_defaults(handler=_cmd_roofline)


    _add_cost_commands(commands, common)
    _add_memory(commands, common)
    _add_inference(commands, common)

    _add_site_assets(commands, common)

    cache = commands.add_parser("cache", parents=[common], help="the chart render cache",
                                description="Show or clear the content-hash cache of rendered charts.")
    cache.add_argument("action", choices=("info", "clear"), metavar="ACTION", help="info or clear")
    cache.set_defaults(handler=_cmd_cache)
    return parser


def _add_mfu(commands: Any, common: argparse.ArgumentParser) -> None:
    mfu = commands.add_parser(
        "mfu", parents=[common], help="model and hardware FLOPs utilization of a training job",
        description="MFU = model FLOPs per token × tokens/s ÷ (GPUs × peak FLOP/s per GPU); model FLOPs per "
        "token = 6N, plus 12·L·H·Q·S with the four attention flags (PaLM, Appendix B), or with --model and "
        "--seq-len. HFU also counts recomputed FLOPs (--recompute).",
    )
    # Values go to TrainingJob as typed, which checks them all (as for the fence and inline forms).
    mfu.add_argument("--params", metavar="N", help="parameter count, e.g. 540e9 (or --model)")
    _add_model_flags(mfu)
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


def _add_site_assets(commands: Any, common: argparse.ArgumentParser) -> None:
    assets = commands.add_parser(
        "site-assets", parents=[common], help="write the charts' shared files into a site built without hooks",
        description="For builders that run no MkDocs hooks (Zensical): convert the pages as mkdocs.yml says and "
        "write the shared assets, every chart's embed files and embed/manifest.json into SITE_DIR, as "
        "hooks/notes.py does after a MkDocs build.",
    )
    assets.add_argument("site_dir", metavar="SITE_DIR", help="the built site folder")
    assets.add_argument("--config", default="mkdocs.yml", metavar="FILE", help="the project's mkdocs.yml")
    assets.set_defaults(handler=_cmd_site_assets)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (0, or 2 for a user mistake)."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, or a usage error already printed as one line
        return exc.code if isinstance(exc.code, int) else EXIT_USER_ERROR
    try:
        return args.handler(args)
    except InputError as exc:
        message = _flagged(" ".join(str(exc).splitlines()), parser, args.command)
        print(f"ainotes {args.command}: {message}", file=sys.stderr)
        return EXIT_USER_ERROR
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader went away (`ainotes presets | head`): stop quietly, as other tools do.
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return 1


# --- commands --------------------------------------------------------------------------


def _presets_dir(args: argparse.Namespace) -> Path:
    given = getattr(args, "presets_dir", None)
    return Path(given) if given is not None else default_presets_dir()


def _load(args: argparse.Namespace) -> tuple[Preset, ...]:
    return load_presets(_presets_dir(args))


def _preset_record(preset: Preset) -> dict[str, Any]:
    sparse = preset.structured_sparsity
    return {
        "id": preset.id,
        "name": preset.name,
        "variant": preset.variant,
        "dense_fp16_tflops": preset.dense_fp16_tflops,
        "sparse_fp16_tflops": preset.peak_flops_per_s(True) / 1e12 if sparse else None,
        "memory_bandwidth_tbps": preset.memory_bandwidth_tbps,
        "dense_ridge_flop_per_byte": preset.ridge_flop_per_byte(False),
        "sparse_ridge_flop_per_byte": preset.ridge_flop_per_byte(True) if sparse else None,
        "structured_sparsity": sparse,
        "derivation": preset.derivation,
        "sources": [{"title": s.title, "url": s.url} for s in preset.sources],
        "path": preset.file,
        "memory_capacity_gb": preset.memory_capacity_gb,
        "unit_names": {unit: preset.unit_term(unit) for unit in UNITS},
        "peaks": _peaks_by_unit(preset),
        "precisions": [_precision_record(preset, unit, precision) for unit, precision, _ in preset.all_paths()],
    }


NOT_GIVEN = "not given"


def _peaks_by_unit(preset: Preset) -> dict[str, dict[str, float | str | None]]:
    """Every precision's dense peak per unit: a number, null (no such path) or "not given"."""
    peaks: dict[str, dict[str, float | str | None]] = {unit: {} for unit in UNITS}
    for unit, precision, path in preset.all_paths():
        peaks[unit][precision] = NOT_GIVEN if path is None else path.dense_tflops
    return peaks


def _precision_record(preset: Preset, unit: str, precision: str) -> dict[str, Any]:
    path = preset.path(precision, unit)
    exists = path is not None and path.dense_tflops is not None
    sparse = path is not None and exists and path.sparse_supported
    return {
        "unit": unit,
        "precision": precision,
        "status": preset.status(precision, unit),
        "dense_tflops": path.dense_tflops if path is not None else None,
        "sparse_tflops": path.peak_tflops(True) if path is not None and sparse else None,
        "printed_sparse_tflops": path.printed_sparse_tflops if path is not None else None,
        "ridge_flop_per_byte": preset.ridge_flop_per_byte(precision=precision, unit=unit),
        "sparse_ridge_flop_per_byte": (
            preset.ridge_flop_per_byte(True, precision=precision, unit=unit) if sparse else None
        ),
        "source": ({"title": path.source.title, "url": path.source.url}
                   if path is not None and path.source is not None else None),
        "note": path.note if path is not None else None,
        "derivation": path.derivation if path is not None else None,
    }


def _peak_cell(preset: Preset, unit: str, precision: str) -> str:
    path = preset.path(precision, unit)
    if path is None:
        return NOT_GIVEN
    return "no path" if path.dense_tflops is None else f"{path.dense_tflops:.6g}"


def _table(header: Sequence[str], rows: Sequence[Sequence[str]], right: set[int]) -> str:
    widths = [max(len(row[i]) for row in (header, *rows)) for i in range(len(header))]

    def line(cells: Sequence[str]) -> str:
        padded = (c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=True)))
        return "  ".join(padded).rstrip()

    return "\n".join([line(header), line(["-" * w for w in widths]), *(line(r) for r in rows)])


def _cmd_presets(args: argparse.Namespace) -> int:
    presets = _load(args)
    if args.json:
        print(json.dumps({"presets": [_preset_record(p) for p in presets]}, indent=2, ensure_ascii=False))
        return 0
    header = ["id", "name", "dense TFLOP/s", "sparse TFLOP/s", "TB/s", "ridge FLOP/B", "sparse ridge FLOP/B"]
    rows = []
    for p in presets:
        record = _preset_record(p)
        rows.append([
            p.id,
            p.name,
            f"{p.dense_fp16_tflops:.6g}",
            f"{record['sparse_fp16_tflops']:.6g}" if p.structured_sparsity else "-",
            f"{p.memory_bandwidth_tbps:.6g}",
            # units.fixed: ties half-up, the rule pages and charts follow (281.25 → 281.3).
            units.fixed(record["dense_ridge_flop_per_byte"], 1),
            units.fixed(record["sparse_ridge_flop_per_byte"], 1) if p.structured_sparsity else "-",
        ])
    print(_table(header, rows, right={2, 3, 4, 5, 6}))
    columns = [(unit, precision) for unit, precision, _ in presets[0].all_paths()] if presets else []
    print()
    print("dense peak per precision, TFLOP/s (TOPS for int8); 'no path': the GPU has none; "
          "'not given': the preset file is silent")
    print(_table(["id", *(f"{unit} {precision}" for unit, precision in columns)],
                 [[p.id, *(_peak_cell(p, unit, precision) for unit, precision in columns)] for p in presets],
                 right=set(range(1, len(columns) + 1))))
    notes = [f"{p.id}: {p.derivation}" for p in presets if p.derivation]
    if notes:
        print()
        print("per-GPU figures derived from system totals:")
        for note in notes:
            print(f"  {note}")
    return 0


def _cmd_validate(args: argparse.Namespace) -> int:
    """GPU presets, and interconnect presets where they live: a ``links/`` folder beside the
    GPU files, or a file inside one. Each file gets an OK line or one error line."""
    from ainotes.presets import links

    outcomes: list[tuple[str, str | None]] = []  # (OK text, None) or ("", error)
    for given in args.paths or [_presets_dir(args)]:
        path = Path(given)
        link_files: list[Path] = []
        if _model_outcomes(path, outcomes, whole=True):
            continue
        if path.is_file() and links.is_link_path(path):
            link_files = [path]
        else:
            for check in validate_paths([path]):
                outcomes.append((f"{check.path}: {check.preset.id} ({check.preset.name})", None)
                                if check.preset is not None else ("", check.error))
            if path.is_dir() and (path / links.LINKS_SUBDIR).is_dir():
                try:
                    link_files = list(links.link_files(path / links.LINKS_SUBDIR))
                except InputError as exc:
                    outcomes.append(("", str(exc)))
        for link_check in links.validate_link_files(link_files):
            outcomes.append((f"{link_check.path}: link {link_check.link.id} ({link_check.link.name})", None)
                            if link_check.link is not None else ("", link_check.error))
        _model_outcomes(path, outcomes, whole=False)
    for ok, error in outcomes:
        if error is None:
            print(f"OK {ok}")
        else:
            print(f"ainotes validate: {error}", file=sys.stderr)
    failed = sum(1 for _, error in outcomes if error is not None)
    print(f"{len(outcomes) - failed} OK, {failed} with errors")
    return EXIT_USER_ERROR if failed else 0


def _model_outcomes(path: Path, outcomes: list[tuple[str, str | None]], *, whole: bool) -> bool:
    """Model presets for ``ainotes validate``: with ``whole``, ``path`` itself if it is a model
    file or a ``models/`` folder (then True: nothing else to check there); else the
    ``models/`` subfolder of a presets folder, when it has one."""
    from ainotes.presets import models

    if whole:
        if path.is_file() and models.is_model_path(path):
            files: list[Path] = [path]
        elif path.is_dir() and path.name == models.MODELS_SUBDIR:
            folder = path
        else:
            return False
    elif path.is_dir() and (path / models.MODELS_SUBDIR).is_dir():
        folder = path / models.MODELS_SUBDIR
    else:
        return False
    if not (whole and path.is_file()):
        try:
            files = list(models.model_files(folder))
        except InputError as exc:
            outcomes.append(("", str(exc)))
            return True
    for check in models.validate_model_files(files):
        model = check.model
        outcomes.append((f"{check.path}: model {model.id} ({model.name}, {model.params / 1e9:.2f} B parameters)", None)
                        if model is not None else ("", check.error))
    return True


def _add_models(commands: Any, common: argparse.ArgumentParser) -> None:
    models = commands.add_parser(
        "models", parents=[common], help="list the model presets and their parameter counts",
        description="List the model presets in <presets dir>/models: parameters counted from each architecture "
        "(all experts, and the active ones a token uses), the published count and how far apart they are "
        "(the loader refuses more than 1 %).",
    )
    models.add_argument("--json", action="store_true", help="print JSON instead of a table")
    models.set_defaults(handler=_cmd_models)


def _cmd_models(args: argparse.Namespace) -> int:
    from ainotes.presets.models import default_models_dir, load_models

    models = load_models(default_models_dir(_presets_dir(args)))
    if args.json:
        print(json.dumps({"models": [m.record() for m in models]}, indent=2, ensure_ascii=False))
        return 0
    header = ["id", "name", "params", "active params", "published", "difference"]
    rows = [[m.id, m.name, f"{m.params / 1e9:.2f} B", f"{m.active_params / 1e9:.2f} B",
             f"{m.published_params / 1e9:g} B", f"{m.params_difference * 100:+.2f} %"] for m in models]
    print(_table(header, rows, right={2, 3, 4, 5}))
    print()
    print("params: counted from the architecture (embeddings included; all experts of a mixture); active: what one")
    print("token uses; difference: counted against published, within ±1 % or the file does not load.")
    return 0


def _flag(key: str) -> str:
    """How a core field is named on the command line: ``tokens_per_second`` → ``--tokens-per-second``.
    The one mapping: builders take it as their ``label``, and :func:`_flagged` applies it to the core's
    own messages."""
    return "--no-embeddings" if key == "embeddings" else "--" + key.replace("_", "-")


_QUOTED_FIELD = re.compile(r"^'([a-z][a-z_]*)'")


def _flagged(message: str, parser: argparse.ArgumentParser, command: str) -> str:
    """A core message that opens with a quoted field (``'ranks' must be ...``), with the field named as
    the command names it: its flag (``--ranks``), or its positional argument (``OP``)."""
    match = _QUOTED_FIELD.match(message)
    if match is None:
        return message
    sub = next((a.choices[command] for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)
    if not isinstance(sub, argparse.ArgumentParser):
        return message
    key = match.group(1)
    for action in sub._actions:
        if _flag(key) in action.option_strings or (not action.option_strings and action.dest == key):
            name = _flag(key) if action.option_strings else str(action.metavar or key.upper())
            return name + message[match.end():]
    return message


def _add_model_flags(parser: argparse.ArgumentParser) -> None:
    """--model and --no-embeddings, for mfu and train-time (ainotes.core.jobs.model_count)."""
    parser.add_argument("--model", metavar="ID", help="a model preset (see 'ainotes models') instead of --params "
                        "and --layers/--heads/--head-dim: N is the parameters a token uses (a mixture's active "
                        "experts), embeddings included; give --seq-len for the attention term")
    parser.add_argument("--no-embeddings", dest="embeddings", action="store_const", const=False,
                        help="with --model: leave the embedding matrices out of N")


def _models_loader(args: argparse.Namespace) -> Callable[[], dict[str, Any]]:
    def load() -> dict[str, Any]:
        from ainotes.presets.models import default_models_dir, load_models

        return {m.id: m for m in load_models(default_models_dir(_presets_dir(args)))}

    return load


def _cmd_mfu(args: argparse.Namespace) -> int:
    fields = {key: getattr(args, key, None) for key in JOB_FIELDS if getattr(args, key, None) is not None}
    presets = {p.id: p for p in _load(args)} if args.preset is not None else {}
    job = TrainingJob.from_fields(fields, presets, label=_flag, models=_models_loader(args))
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
    if result.hfu > 1:
        print("ainotes mfu: warning: utilization above 100 % cannot happen; check the units of "
              "--params, --tokens-per-second and the peak", file=sys.stderr)
    return 0


def _preset_flag(presets: Sequence[Preset], preset_id: str) -> Preset:
    try:
        return preset_by_id(presets, preset_id)
    except InputError as exc:
        raise InputError(f"--preset: {exc}") from None


def _check_output(path_text: str, suffixes: tuple[str, ...]) -> Path:
    path = Path(path_text)
    if path.is_dir():
        raise InputError(f"-o {path_text}: is a folder, not a file")
    suffix = path.suffix.lower()
    if suffix not in suffixes:
        choices = f"{', '.join(suffixes[:-1])} or {suffixes[-1]}"
        raise InputError(f"-o {path_text}: the file name must end in {choices}; got {suffix or 'no suffix'!r}")
    parent = path.parent
    if not parent.is_dir():
        raise InputError(f"-o {path_text}: folder {str(parent)!r} does not exist")
    return path


def _write_atomic(path: Path, content: str | bytes) -> None:
    """Write the output file atomically; a failure is the user's one-line error."""
    try:
        write_atomic(path, content)
    except OSError as exc:
        raise InputError(f"-o {path}: cannot write the file: {exc.strerror or exc}") from None


def _parse_kernel_flag(text: str) -> Any:
    from ainotes.core.kernels import parse_kernel_spec

    label, separator, spec = text.rpartition("=")
    try:
        return parse_kernel_spec(spec, label=label if separator else None)
    except InputError as exc:
        raise InputError(f"--kernel: {exc}") from None


def _cmd_roofline(args: argparse.Namespace) -> int:
    output = _check_output(args.output, ROOFLINE_SUFFIXES)
    presets = _chosen_presets(args)
    kernels = tuple(_parse_kernel_flag(text) for text in args.kernel)

    import inspect

    from ainotes.charts.roofline import roofline_spec

    options: dict[str, Any] = {}
    if args.precision is not None:
        # The per-precision chart is the explorer's; until its roofline_spec takes the keyword, say so.
        if "precision" not in inspect.signature(roofline_spec).parameters:
            raise InputError("--precision: this build's roofline chart draws FP16/BF16 only")
        options["precision"] = args.precision
    options["palette_ids"] = [p.id for p in _load(args)]  # each GPU in its site colour
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
    _write_atomic(output, content)
    print(f"wrote {output}")
    return 0


def _chosen_presets(args: argparse.Namespace) -> tuple[Preset, ...]:
    """The presets named by --preset, in the order given, without repeats; all of them without it."""
    presets = _load(args)
    if not args.preset:
        return presets
    chosen: list[Preset] = []
    for preset_id in args.preset:
        preset = _preset_flag(presets, preset_id)
        if preset not in chosen:
            chosen.append(preset)
    return tuple(chosen)


def _cmd_kernel(args: argparse.Namespace) -> int:
    from ainotes.core.kernels import parse_kernel_spec
    from ainotes.core.roofline import ceiling_at, kernel_roof

    try:
        kernel = parse_kernel_spec(args.spec)
    except InputError as exc:
        raise InputError(f"SPEC: {exc}") from None
    presets = _chosen_presets(args)
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
    print(_table(header, table, right={2, 3, 4, 5} if args.sparsity else {2, 3, 4}))
    return 0


def _cmd_collective(args: argparse.Namespace) -> int:
    from ainotes.core import collectives

    output = _check_output(args.output, COLLECTIVE_SUFFIXES) if args.output else None
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
    _write_atomic(output, writers[output.suffix.lower()](run))
    print(f"wrote {output}")
    return 0


def _cmd_site_assets(args: argparse.Namespace) -> int:
    from ainotes import render
    from ainotes.project import write_site_assets

    site = write_site_assets(args.config, args.site_dir, progress=render.stderr_progress)
    print(f"wrote {len(site.charts)} charts' files and embed/manifest.json into {args.site_dir}")
    return 0


def _cmd_cache(args: argparse.Namespace) -> int:

    folder = Path(cache.cache_dir())
    if args.action == "clear":
        removed = cache.clear_cache()
        detail = f": {removed} files removed" if isinstance(removed, int) else ""
        print(f"cleared the render cache at {folder}{detail}")
        return 0
    files = [p for p in folder.rglob("*") if p.is_file()] if folder.is_dir() else []
    size_bytes = sum(p.stat().st_size for p in files)
    print(f"render cache: {folder}")
    print(f"{len(files)} files, {size_bytes / 1e6:.1f} MB")
    return 0


# --- how long it takes: links, collective cost, time to train ---------------------------

def _number(text: str) -> float:
    """A flag's text as a float, unchecked: the core's rule (and message) decides what it may be."""
    try:
        return float(text.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number: {text!r}") from None


def _add_cost_commands(commands: Any, common: argparse.ArgumentParser) -> None:
    """The communication and cost commands: collective, links, collective-cost, train-time."""
    collective = commands.add_parser(
        "collective", parents=[common], help="a collective operation's states and frames",
        description="Simulate a collective on a few ranks: print its states and frames as JSON, or write an "
        "animated .svg, a .json of the frames or a self-contained .html stepper.",
    )
    collective.add_argument("op", metavar="OP", help="all-reduce, reduce, reduce-scatter, all-gather, "
                            "broadcast, scatter or all-to-all")
    collective.add_argument("--ranks", type=_integer, default=4, metavar="N", help="number of ranks (default 4)")
    collective.add_argument("--root", type=_integer, metavar="R", help="root rank for reduce, broadcast, scatter")
    collective.add_argument("--schedule", choices=("logical", "ring"), default="logical",
                            help="logical: one exchange per step (default); ring: the ring algorithm chunk by chunk, "
                            "for all-reduce, reduce-scatter and all-gather")
    output = collective.add_mutually_exclusive_group(required=True)
    output.add_argument("--json", action="store_true", help="print the states and frames as JSON")
    output.add_argument("-o", "--output", metavar="FILE", help="output file: .svg, .json or .html")
    collective.set_defaults(handler=_cmd_collective)

    links = commands.add_parser("links", parents=[common], help="list the interconnect presets",
                                description="List the interconnect presets in <presets dir>/links: bandwidth "
                                "per direction per GPU (GB/s) and the per-message latency α (µs, an assumption).")
    links.add_argument("--json", action="store_true", help="print JSON instead of a table")
    links.set_defaults(handler=_cmd_links)

    cost = commands.add_parser(
        "collective-cost", parents=[common], help="a collective's time under the α–β model",
        description="Estimate a collective's time on p ranks for a tensor of S bytes over a link, with the "
        "latency–bandwidth (α–β) model: one line per algorithm, split into latency and bandwidth terms, with "
        "nccl-tests' algbw = S/t and busbw = algbw × bus factor. No contention, no topology, no overlap.",
    )
    cost.add_argument("op", metavar="OP", help="all-reduce, reduce, reduce-scatter, all-gather, broadcast, "
                      "scatter or all-to-all")
    cost.add_argument("--ranks", type=_integer, required=True, metavar="N",
                      help="number of ranks, 2 to 1024")
    cost.add_argument("--bytes", type=_number, required=True, metavar="S",
                      help="tensor size in bytes, e.g. 1e9 (an all-gather's output, one rank's all-to-all buffer)")
    cost.add_argument("--link", required=True, metavar="ID", help="interconnect preset id (see 'ainotes links')")
    cost.add_argument("--json", action="store_true", help="print JSON")
    cost.set_defaults(handler=_cmd_collective_cost)

    train = commands.add_parser(
        "train-time", parents=[common], help="days and GPU-hours to train at a given MFU",
        description="Training compute C = model FLOPs per token × tokens (6N, plus 12·L·H·Q·S with the four "
        "attention flags); time = C ÷ (MFU × GPUs × peak FLOP/s per GPU).",
    )
    # Values go to ainotes.core.jobs.TrainingRun as typed, which checks them all (as for the inline form).
    train.add_argument("--params", metavar="N", help="parameter count (or --model)")
    _add_model_flags(train)
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


def _load_links(args: argparse.Namespace) -> Any:
    from ainotes.presets.links import default_links_dir, load_links

    return load_links(default_links_dir(_presets_dir(args)))


def _cmd_links(args: argparse.Namespace) -> int:
    links = _load_links(args)
    if args.json:
        records = [
            {"id": link.id, "name": link.name, "bandwidth_gbps": link.bandwidth_gbps, "latency_us": link.latency_us,
             "sources": [{"title": s.title, "url": s.url} for s in link.sources], "path": link.path}
            for link in links
        ]
        print(json.dumps({"links": records}, indent=2, ensure_ascii=False))
        return 0
    header = ["id", "name", "GB/s per direction", "latency µs"]
    rows = [[link.id, link.name, f"{link.bandwidth_gbps:g}", f"{link.latency_us:g}"] for link in links]
    print(_table(header, rows, right={2, 3}))
    print()
    print("Bandwidth is per direction, per GPU (vendors print NVLink as both directions together). Latency is an")
    print("assumption for the α–β model, from NCCL's tuning model (src/graph/tuning.cc); edit it in the link's file.")
    return 0


def _cmd_collective_cost(args: argparse.Namespace) -> int:
    from ainotes.core import collective_cost
    from ainotes.core.links import link_by_id

    try:
        link = link_by_id(_load_links(args), args.link)
    except InputError as exc:
        raise InputError(f"--link: {exc}") from None
    figures = {"bandwidth_bytes_per_s": link.bandwidth_bytes_per_s, "latency_s": link.latency_s}
    times = collective_cost.collective_times(args.op, args.ranks, args.bytes, **figures)
    changes = collective_cost.best_algorithm_changes(args.op, args.ranks, **figures)
    if args.json:
        record = {
            "op": args.op,
            "ranks": args.ranks,
            "bytes": args.bytes,
            "link": {"id": link.id, "bandwidth_gbps": link.bandwidth_gbps, "latency_us": link.latency_us},
            "algorithms": [
                {"name": t.algorithm, "time_s": t.time_s, "latency_s": t.latency_s, "bandwidth_s": t.bandwidth_s,
                 "algbw_gbps": t.algbw_bytes_per_s / 1e9, "busbw_gbps": t.busbw_bytes_per_s / 1e9}
                for t in times
            ],
            "best_changes": [
                {"bytes": c.message_bytes, "faster_below": c.faster_below, "faster_above": c.faster_above}
                for c in changes
            ],
        }
        print(json.dumps(record, indent=2, ensure_ascii=False))
        return 0
    from ainotes.base import units

    print(f"{args.op} of {units.si(args.bytes, 'B')} on {args.ranks} ranks over {link.name} "
          f"(B = {link.bandwidth_gbps:g} GB/s per direction, α = {link.latency_us:g} µs)")
    header = ["algorithm", "time", "latency term", "bandwidth term", "algbw GB/s", "busbw GB/s"]
    rows = [
        [t.algorithm + (f" (k={t.chunks})" if t.chunks else ""), _seconds(t.time_s), _seconds(t.latency_s),
         _seconds(t.bandwidth_s), f"{t.algbw_bytes_per_s / 1e9:.4g}", f"{t.busbw_bytes_per_s / 1e9:.4g}"]
        for t in times
    ]
    print(_table(header, rows, right={1, 2, 3, 4, 5}))
    for change in changes:
        print(f"fastest changes at {units.si(change.message_bytes, 'B')}: {change.faster_below} below, "
              f"{change.faster_above} above")
    if not changes:
        print("the fastest algorithm is the same from 1 kB to 10 GB")
    return 0


def _seconds(value_s: float) -> str:
    for scale, unit in ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs")):
        if value_s >= scale:
            return f"{value_s / scale:.4g} {unit}"
    return f"{value_s / 1e-9:.4g} ns"


def _cmd_train_time(args: argparse.Namespace) -> int:
    fields = {key: getattr(args, key) for key in TRAIN_TIME_FIELDS if getattr(args, key, None) is not None}
    presets = {p.id: p for p in _load(args)} if args.preset is not None else {}
    run = TrainingRun.from_fields(fields, presets, label=_flag, models=_models_loader(args))
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


def _add_memory(commands: Any, common: argparse.ArgumentParser) -> None:
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
                        help="a model trained without dropout (no masks stored)")
    memory.add_argument("--json", action="store_true", help="print JSON")
    memory.set_defaults(handler=_cmd_memory)


def _cmd_memory(args: argparse.Namespace) -> int:
    from ainotes.core import memory
    from ainotes.presets.models import default_models_dir, load_models

    fields = {key: getattr(args, key) for key in memory.FIELDS if getattr(args, key, None) is not None}
    models = ({m.id: m for m in load_models(default_models_dir(_presets_dir(args)))}
              if args.model is not None else {})
    presets = {p.id: p for p in _load(args)} if args.preset is not None else {}
    config = memory.TrainingMemory.from_fields(fields, models, presets, label=_flag)
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
        "optimizer", "fp32_grad_accum", "dropout")}
    record["not_in_total"] = ("logits_bytes (FP32 logits for the cross-entropy, last pipeline stage), allocator "
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
    lines.append(_table(["part", "bytes per GPU"], [[name, units.si(value, "B")] for name, value in rows], right={1}))
    if estimate.activations_bytes is not None:
        lines.append(f"activations: micro-batch {config.micro_batch} × {config.seq_len} tokens, recompute "
                     f"{config.recompute}, {config.attention} attention"
                     f"{', sequence parallel' if config.sequence_parallel else ''}, first pipeline stage")
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
        above = f"the logits ({units.si(estimate.logits_bytes, 'B')} in FP32, last stage), " + above
    lines.append(f"not in the total (measured memory sits above it): {above}")
    return lines




# --- serving: the KV cache, decode and prefill -------------------------------------------


def _add_inference(commands: Any, common: argparse.ArgumentParser) -> None:
    from ainotes.core import inference

    serve = commands.add_parser(
        "inference", parents=[common], help="KV cache, decode step, tokens/s, B_crit and the largest batch",
        description="Serve a model preset on a GPU preset (Scaling Book, 'All About Transformer Inference'): "
        "KV cache per token = 2·L·kv_heads·d_head·bytes; one decode step = B·S·KV/W + max(2·B·P_active/F, P·w/W) "
        "(+ two all-reduces per layer with --tp); tokens/s = B ÷ step; B_crit = (F/W)·(w/2); the largest batch "
        "= (capacity − weights) ÷ (S·KV). F is the dense tensor peak at --compute-dtype, W the memory bandwidth.",
    )
    serve.add_argument("--model", required=True, metavar="ID", help="model preset id (presets/models)")
    serve.add_argument("--preset", required=True, metavar="ID", help="GPU preset id")
    serve.add_argument("--batch", type=_count, default=1, metavar="B", help="sequences per decode step (default 1)")
    serve.add_argument("--context", type=_count, default=1, metavar="S", help="tokens of context per sequence "
                       "(default 1)")
    serve.add_argument("--prompt", type=_count, metavar="T", help="prompt tokens to prefill (default: --context)")
    for flag, what in (("--weights-dtype", "weights"), ("--kv-dtype", "KV cache")):
        serve.add_argument(flag, default="bf16", metavar="P",
                           help=f"{what} stored in P: {', '.join(inference.STORAGE_DTYPES)} (default bf16)")
    serve.add_argument("--compute-dtype", default="bf16", metavar="P",
                       help=f"matmuls at this precision's roof: {', '.join(inference.COMPUTE_DTYPES)} (default bf16)")
    serve.add_argument("--tp", type=_count, default=1, metavar="N", help="tensor-parallel chips (default 1)")
    serve.add_argument("--link", metavar="ID", help="link preset timing the TP all-reduces (default: the GPU's "
                       "NVLink, else nvlink-4)")
    serve.add_argument("--json", action="store_true", help="print JSON")
    serve.set_defaults(handler=_cmd_inference)


def _cmd_inference(args: argparse.Namespace) -> int:
    from ainotes.core.inference import InferenceSetup
    from ainotes.presets.models import default_models_dir, load_models

    presets_dir = _presets_dir(args)
    fields = {key: getattr(args, key) for key in ("model", "preset", "batch", "context", "prompt", "weights_dtype",
                                                  "kv_dtype", "compute_dtype", "tp", "link")}
    setup = InferenceSetup.from_fields(
        {k: v for k, v in fields.items() if v is not None},
        models={m.id: m for m in load_models(default_models_dir(presets_dir))},
        presets={p.id: p for p in load_presets(presets_dir)}, links=lambda: {
            link.id: link for link in _load_links(args)}, label=_flag)
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
    print(f"decode step: {_seconds(record['decode_step_s'])} ({record['decode_bound']}-bound matmuls; "
          f"KV reads {_seconds(terms['kv'])}, weights {_seconds(terms['weights'])}, "
          f"compute {_seconds(terms['compute'])}"
          + (f", all-reduces {_seconds(terms['allreduce'])} over {record['link']}" if setup.tp > 1 else "") + ")")
    print(f"tokens per second: {units.significant(record['tokens_per_s'], 4)}")
    print(f"B_crit: {units.significant(record['b_crit'], 4)}"
          + (f" (this mixture of experts: {units.significant(record['compute_bound_batch'], 4)})"
             if setup.model.is_moe else ""))
    if record["max_batch"] is None:
        print(f"largest batch: unknown ({setup.preset.file or setup.preset.id} gives no memory capacity)")
    elif record["max_batch"] == 0:
        print(f"largest batch: none; the weights alone take {units.si(setup.weights_bytes_per_chip, 'B')} of "
              f"{setup.preset.memory_capacity_label} per chip (try a larger --tp)")
    else:
        print(f"largest batch that fits at context {setup.context:,}: {record['max_batch']:,} "
              f"({setup.preset.memory_capacity_label} per chip)")
    print(f"prefill of {setup.prompt:,} tokens × {setup.batch}: {_seconds(record['prefill_s'])} "
          f"({record['prefill_bound']}-bound)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
