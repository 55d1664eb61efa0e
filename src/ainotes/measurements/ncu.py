"""Nsight Compute (``ncu --csv``) results read into one row per kernel launch.

Two layouts, both as ncu prints them (Nsight Compute CLI guide, "Console Output" and ``--page``):

* the default ``--page details`` long form: one row per metric, columns ``"ID","Process ID",
  "Process Name","Host Name","Kernel Name",…,"Section Name","Metric Name","Metric Unit",
  "Metric Value"`` (newer versions add rule columns, older ones lack some of the middle ones);
  with ``--print-summary per-kernel`` one row per kernel and metric, no ``ID``, and ``"Minimum",
  "Maximum","Average"`` for the value: the reader takes the average, one row per kernel;
* ``--page raw``: one row per launch, one column per metric, the second row the units.

``==PROF==`` (and ``==WARNING==``/``==ERROR==``) lines and the program's own output before the
header are skipped; values lose their thousands separators (``1,234.5``); units with SI prefixes
(``Kbyte``, ``Mbyte``, ``usecond``, ``msecond``) are scaled to bytes and seconds, as ncu scales
them with ``--print-units auto`` (its default; decimal prefixes, 1 Kbyte = 1,000 bytes).

Per launch:

* FLOPs from the SASS thread-instruction counters, each FMA two FLOPs (the formula ncu's own
  roofline section uses): Σ over f (FP32), d (FP64), h (FP16) of
  ``sm__sass_thread_inst_executed_op_{p}add_pred_on.sum + …{p}mul… + 2 × …{p}fma…``
  (``smsp__`` counters are summed the same way when the ``sm__`` ones are absent);
  kept apart per precision (``flops_fp32``, ``flops_fp64``, ``flops_fp16``), because each runs on its own
  vector roof (a GPU's FP64 rate is half its FP32 rate on an A100, 1/64 of it on a gaming card);
* tensor work from ``sm__inst_executed_pipe_tensor.sum`` (warp-level matrix instructions). No counter
  gives their precision or shape, so both come from the kernel's name where it names them
  (:func:`matrix_precision`: ``fp16``/``__half``, ``bf16``, ``tf32``, ``f64``, ``int8``, ``e4m3``, and a
  shape code such as ``16816`` or ``1688``), else FP16 m16n8k16 is assumed. FLOPs per instruction are
  2·m·n·k of the ``mma.sync`` shape (PTX ISA, "Matrix shapes" of ``mma``): m16n8k16 for FP16/BF16 does
  4,096, TF32's m16n8k8 2,048, FP64's m8n8k4 512, INT8's and FP8's m16n8k32 8,192; a Hopper ``wgmma``
  m64n256k16 does 524,288 per warpgroup, which no name-based rule can tell. Every launch with matrix
  instructions is marked ``tensor_flops_assumed``: its FLOP count is an estimate, not a measurement;
  On Ampere the tensor pipe's count also holds ``HFMA2.MMA``, an FP16 FMA the compiler issues on the
  MMA pipe (often as a register move): in the real A100 captures under ``tests/fixtures/measured/ncu``
  every kernel that does no matrix work has a tensor count of exactly its ``hfma`` thread count ÷ 32.
  Those FLOPs are already in the ``hfma`` term, so a launch whose tensor count is no more than
  ⌈hfma ÷ 32⌉ is taken to have no matrix instructions (``tensor_instructions`` keeps the raw count).
  Whether such an ``HFMA2.MMA`` is arithmetic or a move no counter says. In those captures they are
  moves: the split-K reduction (``splitKreduce_kernel<…, float, float, float, float, …>``) runs 4 a
  thread (196,608 over 49,152 threads), the FP32 softmax 1 a thread (12,288 over 12,288), an ``int``
  arange 3 in its 64 threads: kernels with no FP16 operand, a fixed count per thread whatever the data.
  The reader still counts them as FP16 FMAs (two FLOPs, on the vector units' FP16 rate), as ncu's own
  roofline does, since an FP16 kernel issues ``HFMA2.MMA`` for real arithmetic too; it marks the launch
  ``hfma_on_tensor_pipe`` so that a record can say what share of its FLOPs may be moves;
* DRAM bytes ``dram__bytes.sum`` (else ``dram__bytes_read.sum + dram__bytes_write.sum``);
* duration ``gpu__time_duration.sum``, else elapsed SM cycles ÷ SM cycles per second
  (``sm__cycles_elapsed.avg ÷ sm__cycles_elapsed.avg.per_second``, the time term of the roofline
  scripts that profile with counters only; ``smsp__`` the same); hence FLOP/s = FLOPs ÷ duration and
  intensity = FLOPs ÷ DRAM bytes.

The long form of ncu 2021–2023 carries ``"Rule Name","Rule Type","Rule Description"`` columns that only
the rule rows fill: a metric row stops after its value (with a trailing comma), so rows may be shorter
than the header as long as they reach ``Metric Value``.
"""

from __future__ import annotations

import csv
import io
import math
import re
from dataclasses import dataclass

import pandas as pd

from ainotes.measurements.source import MeasuredFileError, parse_number, where

#: FLOPs per warp-level tensor instruction, assuming ``mma.sync.m16n8k16`` (2·m·n·k); see the module docstring.
FLOPS_PER_TENSOR_INSTRUCTION = 2 * 16 * 8 * 16
#: The ``mma.sync`` shape (m, n, k) per matrix precision (PTX ISA, "Matrix shapes" of ``mma``).
MMA_SHAPES = {"fp16": (16, 8, 16), "bf16": (16, 8, 16), "tf32": (16, 8, 8), "fp64": (8, 8, 4),
              "int8": (16, 8, 32), "fp8": (16, 8, 32)}
#: Shape codes in cuBLAS and CUTLASS kernel names (``s16816gemm``, ``s1688gemm``, ``d884gemm``, ``i16832gemm``).
_SHAPE_CODES = {"16816": (16, 8, 16), "1688": (16, 8, 8), "884": (8, 8, 4), "16832": (16, 8, 32),
                "8816": (8, 8, 16)}
_SHAPE_CODE = re.compile(r"(?<=[a-z])(16816|16832|1688|8816|884)(?=gemm|_|$)")
#: Name fragments that give a matrix kernel's precision, tried in order (bf16 before the f16 inside it).
_MATRIX_NAME_PRECISIONS = (("fp8", re.compile(r"e4m3|e5m2|fp8")), ("bf16", re.compile(r"bf16|bfloat16")),
                           ("tf32", re.compile(r"tf32")), ("fp64", re.compile(r"fp64|f64|d884|dmma")),
                           ("int8", re.compile(r"int8|imma|i8816|i16832|s8s8|u8u8")),
                           ("fp16", re.compile(r"fp16|f16|h16816|h1688|hmma|half")))
#: The vector precisions the SASS counters name, by the letter in their names.
VECTOR_PRECISIONS = {"f": "fp32", "d": "fp64", "h": "fp16"}

_PRECISIONS = ("f", "d", "h")
_FLOP_OPS = (("add", 1), ("mul", 1), ("fma", 2))
TENSOR_METRIC = "sm__inst_executed_pipe_tensor.sum"
DURATION_METRIC = "gpu__time_duration.sum"
DRAM_METRIC = "dram__bytes.sum"
DRAM_PARTS = ("dram__bytes_read.sum", "dram__bytes_write.sum")
#: (elapsed cycles, cycles per second) pairs that give a duration when ``gpu__time_duration.sum`` is absent.
CYCLE_METRICS = tuple((f"{unit}__cycles_elapsed.avg", f"{unit}__cycles_elapsed.avg.per_second")
                      for unit in ("sm", "smsp"))
HFMA_METRICS = tuple(f"{unit}__sass_thread_inst_executed_op_hfma_pred_on.sum" for unit in ("sm", "smsp"))
THREADS_PER_WARP = 32
_TOOL_LINE = re.compile(r"^==(PROF|WARNING|ERROR|INFO)==")
_SECOND_PREFIX = {"n": 1e-9, "u": 1e-6, "µ": 1e-6, "m": 1e-3, "": 1.0}
_SI_PREFIX = {"": 1.0, "K": 1e3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15}


@dataclass(frozen=True)
class NcuRun:
    """One ncu CSV: ``kernels`` has ``id``, ``name``, ``flops``, ``tensor_instructions``,
    ``tensor_flops_assumed``, ``hfma_on_tensor_pipe``, the FLOPs per precision (``flops_fp32``,
    ``flops_fp64``, ``flops_fp16`` on the vector units, ``matrix_flops`` on the matrix units at
    ``matrix_precision``, ``matrix_precision_named`` where the kernel's name gave it,
    ``flops_per_matrix_instruction``), ``dram_bytes``, ``duration_s``, ``flops_per_s`` and ``intensity``."""

    path: str
    layout: str
    kernels: pd.DataFrame
    devices: tuple[str, ...] = ()


def flop_metrics(prefix: str = "sm", precisions: tuple[str, ...] = _PRECISIONS) -> dict[str, int]:
    """The SASS counter names that make up the FLOP count, each with its FLOPs per instruction."""
    return {f"{prefix}__sass_thread_inst_executed_op_{p}{op}_pred_on.sum": weight
            for p in precisions for op, weight in _FLOP_OPS}


def matrix_precision(name: str) -> tuple[str, int, bool]:
    """``(precision, FLOPs per instruction, named)`` of a kernel's matrix instructions, from its name: the
    first precision fragment found (``_MATRIX_NAME_PRECISIONS``) and a shape code where the name has one,
    else that precision's ``mma`` shape; ``named`` is False where the name gives no precision (FP16 assumed).

    ``ampere_fp16_s16816gemm_fp16_64x64…`` is FP16 at 4,096 FLOPs, ``cutlass_80_tensorop_d884gemm…`` FP64
    at 2·8·8·4 = 512."""
    lowered = name.lower()
    precision, named = "fp16", False
    for candidate, pattern in _MATRIX_NAME_PRECISIONS:
        if pattern.search(lowered):
            precision, named = candidate, True
            break
    code = _SHAPE_CODE.search(lowered)
    m, n, k = _SHAPE_CODES[code.group(1)] if code else MMA_SHAPES[precision]
    return precision, 2 * m * n * k, named


def scale(unit: str, where_text: str, metric: str) -> float:
    """The factor that turns a value in ``unit`` into bytes, seconds or a plain count, or a rate of one per
    second (``cycle/second``, ``cycle/nsecond``, ``Gbyte/second``: the numerator's factor ÷ the denominator's)."""
    unit = unit.strip()
    if unit.count("/") == 1 and unit.split("/")[1].endswith("second"):
        count, per = unit.split("/")
        return scale(count, where_text, metric) / scale(per, where_text, metric)
    if unit.endswith("second") and "/" not in unit:
        prefix = unit[: -len("second")]
        if prefix in _SECOND_PREFIX:
            return _SECOND_PREFIX[prefix]
    for base in ("byte", "inst", "cycle", ""):
        if unit.endswith(base) and unit[: len(unit) - len(base)] in _SI_PREFIX and "/" not in unit:
            return _SI_PREFIX[unit[: len(unit) - len(base)]]
    if unit in ("ns", "us", "ms", "s"):
        return _SECOND_PREFIX[unit[:-1]]
    raise MeasuredFileError(f"{where_text}: {metric} is in '{unit}', a unit this reader does not scale "
                            "(expected byte, second or a count, with an SI prefix)")


def _data_lines(text: str, path: str) -> tuple[list[str], int]:
    """The CSV part of the file (tool lines dropped) and the line number of its header."""
    lines = text.splitlines()
    for index, line in enumerate(lines):
        if line.startswith('"ID"') or ('"Kernel Name"' in line and line.startswith('"')):
            kept = [row for row in lines[index:] if not _TOOL_LINE.match(row) and row.strip()]
            return kept, index + 1
    raise MeasuredFileError(f"{path}: no ncu CSV header (a line starting '\"ID\",…,\"Kernel Name\"'): was it "
                            "profiled with --csv, and did ncu profile any kernel?")


def read_ncu_text(text: str, path: str) -> NcuRun:
    """Read ``ncu --csv`` output in either layout into one row per launch."""
    lines, header_line = _data_lines(text, path)
    try:
        rows = list(csv.reader(io.StringIO("\n".join(lines))))
    except csv.Error as exc:
        raise MeasuredFileError(f"{where(path, header_line)}: not a readable CSV ({exc})") from None
    header = rows[0]
    width = len(header)
    value_name = next((name for name in ("Metric Value", "Average") if name in header), None)
    long_form = "Metric Name" in header and value_name is not None
    # A long-form metric row may stop after its value when rule columns follow (see the module docstring).
    shortest = header.index(value_name) + 1 if long_form and value_name else width
    for offset, row in enumerate(rows[1:], start=1):
        if not shortest <= len(row) <= width:
            raise MeasuredFileError(f"{where(path, header_line + offset)}: a CSV row with {len(row)} cells where the "
                                    f"header has {width}: the file is cut short or two outputs are mixed")
    if long_form:
        metrics, devices = _long_form(header, rows[1:], path, header_line)
        layout = "details" if value_name == "Metric Value" else "summary"
    else:
        metrics, devices = _raw_form(header, rows[1:], path, header_line)
        layout = "raw"
    return NcuRun(path, layout, _kernels(metrics, path), devices)


def _long_form(header: list[str], rows: list[list[str]], path: str, header_line: int
               ) -> tuple[dict[str, dict], tuple[str, ...]]:
    """``{launch id: {"name": …, metric: value in base units}}`` from the one-metric-per-row layout."""
    column = {name: i for i, name in enumerate(header)}
    if "Kernel Name" not in column:
        raise MeasuredFileError(f"{where(path, header_line)}: an ncu CSV without a 'Kernel Name' column")
    value_at = column["Metric Value"] if "Metric Value" in column else column["Average"]
    # Without an ID column (--print-summary per-kernel) a kernel is its name and launch columns.
    identity = [i for name, i in column.items() if name not in _PER_ROW_COLUMNS]
    ids: dict[tuple, str] = {}
    launches: dict[str, dict] = {}
    for offset, row in enumerate(rows, start=1):
        here = where(path, header_line + offset)
        key = tuple(row[i] for i in identity)
        launch_id = row[column["ID"]] if "ID" in column else ids.setdefault(key, str(len(ids)))
        record = launches.setdefault(launch_id, {"name": row[column["Kernel Name"]], "line": header_line + offset})
        metric, unit, text = row[column["Metric Name"]], row[column.get("Metric Unit", -1)], row[value_at]
        if metric in _WANTED and text.strip().lower() not in ("", "n/a"):  # n/a: not collected on this GPU
            record[metric] = _metric_value(text, unit if "Metric Unit" in column else "", here, metric)
        elif metric in _SECTION_NAMES:  # ncu's default sections print display names, not counters
            record["sections_only"] = True
    devices = tuple(dict.fromkeys(row[column["Device"]] for row in rows)) if "Device" in column else ()
    return launches, devices


def _raw_form(header: list[str], rows: list[list[str]], path: str, header_line: int
              ) -> tuple[dict[str, dict], tuple[str, ...]]:
    """The same from ``--page raw``: one column per metric, the first row after the header their units."""
    if "Kernel Name" not in header:
        raise MeasuredFileError(f"{where(path, header_line)}: an ncu CSV without a 'Kernel Name' column")
    if not rows:
        raise MeasuredFileError(f"{where(path, header_line)}: an ncu --page raw CSV with no units row and no launches")
    units, launches_rows = rows[0], rows[1:]
    name_at = header.index("Kernel Name")
    launches: dict[str, dict] = {}
    for offset, row in enumerate(launches_rows, start=2):
        here = where(path, header_line + offset)
        launch_id = row[header.index("ID")] if "ID" in header else str(offset - 2)
        record = {"name": row[name_at], "line": header_line + offset}
        for index, metric in enumerate(header):
            if metric in _WANTED and row[index].strip() not in ("", "n/a", "N/A"):
                record[metric] = _metric_value(row[index], units[index], here, metric)
        launches[launch_id] = record
    devices = tuple(dict.fromkeys(row[header.index("Device")] for row in launches_rows)) if "Device" in header else ()
    return launches, devices


#: Long-form columns that change from row to row of one launch (the rest name the launch).
_PER_ROW_COLUMNS = frozenset({"Section Name", "Metric Name", "Metric Unit", "Metric Value", "Minimum", "Maximum",
                              "Average", "Rule Name", "Rule Type", "Rule Description", "Estimated Speedup Type",
                              "Estimated Speedup"})
#: Display names of the default sections' rows (``Duration``, ``SOL FB``…): a file of these holds no counters.
_SECTION_NAMES = frozenset({"Duration", "Elapsed Cycles", "SOL FB", "DRAM Throughput", "Memory [%]",
                            "Compute (SM) [%]", "SM [%]"})
_WANTED = frozenset({*flop_metrics("sm"), *flop_metrics("smsp"), TENSOR_METRIC, DURATION_METRIC, DRAM_METRIC,
                     *DRAM_PARTS, *(name for pair in CYCLE_METRICS for name in pair)})


def _metric_value(text: str, unit: str, here: str, metric: str) -> float:
    try:
        value = parse_number(text)
    except ValueError:
        hint = " (a decimal comma? this reader takes ',' only as a thousands separator)" if "," in text else ""
        raise MeasuredFileError(f"{here}: {metric} must be a number, not {text!r}{hint}") from None
    return value * scale(unit, here, metric)


def _vector_flops(record: dict) -> dict[str, float] | None:
    """Per vector precision (``fp32``, ``fp64``, ``fp16``), FMA counted twice; ``sm__`` counters first, else
    ``smsp__``; ``None`` where the launch has neither."""
    for prefix in ("sm", "smsp"):
        if any(name in record for name in flop_metrics(prefix)):
            return {precision: sum(record.get(name, 0.0) * weight
                                   for name, weight in flop_metrics(prefix, (letter,)).items())
                    for letter, precision in VECTOR_PRECISIONS.items()}
    return None


def _duration_s(record: dict) -> float | None:
    """``gpu__time_duration.sum``, else elapsed cycles ÷ cycles per second (both already in base units)."""
    if DURATION_METRIC in record:
        return record[DURATION_METRIC]
    for cycles, rate in CYCLE_METRICS:
        if record.get(rate):
            return record[cycles] / record[rate] if cycles in record else None
    return None


def _hfma_threads(record: dict) -> float:
    """The ``hfma`` thread-instruction count (``sm__`` first, else ``smsp__``); 0 where neither is given."""
    return next((record[name] for name in HFMA_METRICS if name in record), 0.0)


def _matrix_instructions(record: dict) -> float:
    """Tensor-pipe instructions less those that the ``hfma`` thread count explains (``HFMA2.MMA``, see above)."""
    tensor = record.get(TENSOR_METRIC) or 0.0
    hfma_warp_instructions = math.ceil(_hfma_threads(record) / THREADS_PER_WARP)
    return 0.0 if tensor <= hfma_warp_instructions else tensor


def _no_duration(record: dict, launch_id: str, here: str) -> MeasuredFileError:
    """The one line for a launch with no time: default sections only, or counters without a timer."""
    wanted = (f"--metrics {DURATION_METRIC},{DRAM_METRIC},sm__sass_thread_inst_executed_op_ffma_pred_on.sum,… "
              "(see the notes' measured page)")
    if record.get("sections_only"):
        return MeasuredFileError(f"{here}: launch {launch_id} ({record['name']}) has only ncu's default sections "
                                 "(display names such as 'Duration'), not the counters a roofline needs: profile "
                                 f"with {wanted}")
    return MeasuredFileError(f"{here}: launch {launch_id} ({record['name']}) has no {DURATION_METRIC} (nor "
                             f"sm__cycles_elapsed.avg with its .per_second): profile with {wanted}")


def _kernels(launches: dict[str, dict], path: str) -> pd.DataFrame:
    if not launches:
        raise MeasuredFileError(f"{path}: an ncu CSV with a header but no kernel launches")
    rows = []
    for launch_id, record in launches.items():
        here = where(path, record["line"])
        duration = _duration_s(record)
        if duration is None:
            raise _no_duration(record, launch_id, here)
        vector = _vector_flops(record)
        tensor = record.get(TENSOR_METRIC)
        matrix = _matrix_instructions(record)
        precision, per_instruction, named = matrix_precision(record["name"])
        tensor_flops = matrix * per_instruction
        flops = None if vector is None and tensor is None else sum((vector or {}).values()) + tensor_flops
        dram = record.get(DRAM_METRIC)
        if dram is None and all(part in record for part in DRAM_PARTS):
            dram = sum(record[part] for part in DRAM_PARTS)
        rows.append({
            "id": launch_id, "name": record["name"], "line": record["line"], "flops": flops,
            "tensor_instructions": tensor, "tensor_flops_assumed": bool(matrix),
            # Every HFMA issued on the tensor pipe (HFMA2.MMA): FP16 FMAs or register moves, see the docstring.
            "hfma_on_tensor_pipe": bool(tensor and not matrix and _hfma_threads(record)),
            **{f"flops_{p}": (math.nan if vector is None else vector[p]) for p in VECTOR_PRECISIONS.values()},
            "matrix_flops": tensor_flops if tensor is not None else math.nan,
            "matrix_precision": precision if matrix else None, "matrix_precision_named": bool(matrix and named),
            "flops_per_matrix_instruction": per_instruction if matrix else None,
            "dram_bytes": dram, "duration_s": duration,
            "flops_per_s": flops / duration if flops is not None and duration > 0 else math.nan,
            "intensity": flops / dram if flops is not None and dram else math.nan,
        })
    return pd.DataFrame(rows)
