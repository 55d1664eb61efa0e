"""PyTorch profiler (Kineto) traces read into a table of NCCL collectives and one of compute kernels.

A trace is Chrome trace-event JSON, ``{"traceEvents": [...]}``, often gzipped
(``*.pt.trace.json.gz``). Complete events have ``ph: "X"``, ``ts`` and ``dur`` in µs and a ``cat``:
``kernel`` for GPU kernels, ``cpu_op``, ``gpu_memcpy``, ``user_annotation`` (``ProfilerStep#N``
marks a step). Since PyTorch 2.2 the NCCL kernels (``ncclKernel_*``, ``ncclDevKernel_*``) carry the
collective's record in ``args``: ``Collective name``, ``In msg nelems``, ``Out msg nelems``,
``Group size``, ``dtype`` (PyTorch's ``ParamCommsUtils``; pytorch/pytorch#111639 added
``Group size``). A message's bytes are its element count times the dtype's size.

For the α–β model the size S of a collective is that of :mod:`ainotes.core.collective_cost`: the
whole tensor, so an all-gather's output (``Out msg nelems``), a reduce-scatter's input (``In msg
nelems``), and the buffer itself for an all-reduce, broadcast or reduce. busbw follows nccl-tests
(S ÷ t × the collective's bus factor).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field

import pandas as pd

from ainotes.measurements.nccl_tests import expected_factor
from ainotes.measurements.source import MeasuredFileError

#: PyTorch's dtype names in the trace → bytes per element.
DTYPE_BYTES = {
    "float": 4, "float32": 4, "double": 8, "float64": 8, "half": 2, "float16": 2, "bfloat16": 2,
    "int": 4, "int32": 4, "long": 8, "int64": 8, "short": 2, "int16": 2, "char": 1, "int8": 1, "byte": 1,
    "uint8": 1, "bool": 1, "float8_e4m3fn": 1, "float8_e5m2": 1, "float8_e4m3fnuz": 1, "float8_e5m2fnuz": 1,
}

#: ``Collective name`` in the trace → the collective in the notes.
COLLECTIVES = {
    "allreduce": "all-reduce", "all_reduce": "all-reduce", "allreduce_coalesced": "all-reduce",
    "allgather": "all-gather", "all_gather": "all-gather", "_allgather_base": "all-gather",
    "allgather_into_tensor_coalesced": "all-gather", "all_gather_into_tensor": "all-gather",
    "reduce_scatter": "reduce-scatter", "_reduce_scatter_base": "reduce-scatter",
    "reduce_scatter_tensor_coalesced": "reduce-scatter", "reduce_scatter_tensor": "reduce-scatter",
    "broadcast": "broadcast", "reduce": "reduce", "all_to_all": "all-to-all", "alltoall": "all-to-all",
    "alltoall_base": "all-to-all", "all_to_allv": "all-to-all", "scatter": "scatter", "gather": "gather",
    "send": "send", "recv": "recv",
}
_NCCL_PREFIXES = ("ncclKernel", "ncclDevKernel")


@dataclass(frozen=True)
class KinetoTrace:
    """``collectives``: one row per NCCL kernel; ``kernels``: compute kernels by name; ``steps``: the CPU's
    ProfilerStep#N events, ``gpu_steps`` the GPU's (``gpu_user_annotation``); ``devices``: the GPUs'
    names from ``deviceProperties``."""

    path: str
    collectives: pd.DataFrame
    kernels: pd.DataFrame
    steps: pd.DataFrame
    world_size: int | None
    gpu_steps: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=["step", "duration_s"]))
    devices: tuple[str, ...] = ()


def load_trace(text: str, path: str) -> dict:
    """The trace's JSON object; a cut-short or broken file is one line with its line and column."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise MeasuredFileError(f"{path}:{exc.lineno}: not valid JSON at column {exc.colno} ({exc.msg}): "
                                "the trace is cut short or damaged") from None
    if not isinstance(data, dict) or not isinstance(data.get("traceEvents"), list):
        raise MeasuredFileError(f"{path}: a JSON file without a 'traceEvents' list: not a PyTorch profiler trace")
    return data


def _number(event: dict, key: str, index: int, path: str) -> float:
    value = event.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise MeasuredFileError(f"{path}: traceEvents[{index}] ({str(event.get('name'))[:60]}) has no numeric '{key}'")
    return float(value)


def _collective_row(event: dict, args: dict, index: int, path: str) -> dict:
    name = str(args.get("Collective name", "")).lower()
    op = COLLECTIVES.get(name)
    dtype = str(args.get("dtype", "")).lower()
    size = DTYPE_BYTES.get(dtype)
    nelems_in, nelems_out = args.get("In msg nelems"), args.get("Out msg nelems")
    group = args.get("Group size")
    duration_s = _number(event, "dur", index, path) * 1e-6
    in_bytes = nelems_in * size if isinstance(nelems_in, int) and size else None
    out_bytes = nelems_out * size if isinstance(nelems_out, int) and size else None
    message = out_bytes if op == "all-gather" else in_bytes
    ranks = group if isinstance(group, int) and not isinstance(group, bool) else None
    factor = expected_factor(op, ranks) if op and ranks and ranks >= 2 else None
    busbw = message / duration_s * factor / 1e9 if message and factor and duration_s > 0 else math.nan
    return {"index": index, "kernel": event.get("name"), "collective": name or None, "op": op, "dtype": dtype or None,
            "in_bytes": in_bytes, "out_bytes": out_bytes, "bytes": message, "group_size": ranks,
            "ts_us": event.get("ts"), "duration_s": duration_s, "busbw_gbps": busbw}


def read_kineto_text(text: str, path: str) -> KinetoTrace:
    """Read a Kineto trace's text (already gunzipped) into its tables."""
    data = load_trace(text, path)
    collectives, kernels, steps, gpu_steps = [], [], [], []
    for index, event in enumerate(data["traceEvents"]):
        if not isinstance(event, dict) or event.get("ph") != "X":
            continue
        category, name = str(event.get("cat", "")).lower(), str(event.get("name", ""))
        if category == "kernel":
            args: dict = event["args"] if isinstance(event.get("args"), dict) else {}
            if name.startswith(_NCCL_PREFIXES):
                collectives.append(_collective_row(event, args, index, path))
            else:
                kernels.append({"name": name, "duration_s": _number(event, "dur", index, path) * 1e-6})
        elif name.startswith("ProfilerStep#") and category in ("user_annotation", "cpu_op", "python_function"):
            steps.append({"step": name, "duration_s": _number(event, "dur", index, path) * 1e-6})
        elif name.startswith("ProfilerStep#") and category == "gpu_user_annotation":
            gpu_steps.append({"step": name, "duration_s": _number(event, "dur", index, path) * 1e-6})
    if not collectives and not kernels:
        raise MeasuredFileError(f"{path}: a trace without GPU kernel events (cat 'kernel'): was it recorded with "
                                "ProfilerActivity.CUDA?")
    info: dict = data["distributedInfo"] if isinstance(data.get("distributedInfo"), dict) else {}
    world = info.get("world_size")
    kernel_table = pd.DataFrame(kernels, columns=["name", "duration_s"])
    by_name = (kernel_table.groupby("name", sort=False)["duration_s"].agg(["count", "sum", "mean"])
               .rename(columns={"sum": "total_s", "mean": "mean_s"}).reset_index()
               .sort_values("total_s", ascending=False, kind="stable").reset_index(drop=True))
    properties = data.get("deviceProperties")
    devices = tuple(dict.fromkeys(str(d["name"]) for d in properties if isinstance(d, dict) and d.get("name"))
                    ) if isinstance(properties, list) else ()
    columns = ["step", "duration_s"]
    return KinetoTrace(path, pd.DataFrame(collectives), by_name, pd.DataFrame(steps, columns=columns),
                       world if isinstance(world, int) and not isinstance(world, bool) else None,
                       pd.DataFrame(gpu_steps, columns=columns), devices)
