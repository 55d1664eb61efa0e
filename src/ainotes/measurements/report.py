"""What ``ainotes measured`` prints and a page shows for one file: one record, JSON-ready.

The keys are CONTRACT.md's (fourth round): for nccl-tests ``format, op, dtype, ranks, rows,
avg_busbw_gbps, fit, model``; for ncu ``format, kernels``; for Kineto ``format, collectives,
kernels``; each with ``path`` and ``notes`` beside them. NaN becomes ``None`` (JSON ``null``). The
command line and the fences both read this record, so a page and the command print the same numbers.
"""

from __future__ import annotations

import math
from typing import Any

from ainotes.core.hardware import Preset
from ainotes.core.links import Link
from ainotes.measurements import fit
from ainotes.measurements.kineto import KinetoTrace
from ainotes.measurements.nccl_tests import BLOCKS, NcclTestsRun
from ainotes.measurements.ncu import NcuRun
from ainotes.measurements.steps import step_times
from ainotes.measurements.words import duration, figure, nccl_table, percent, preset_link_id, step_time_text

__all__ = ["ABOVE_ROOF_TOLERANCE", "clean", "duration", "figure", "kineto_record", "nccl_record", "nccl_table",
           "ncu_record", "percent", "preset_link_id", "roof_flops_per_s", "step_time_text"]

#: A kernel whose FLOP/s passes its roof by more than this fraction is flagged (rounding and clocks aside).
ABOVE_ROOF_TOLERANCE = 0.02


def clean(value: Any) -> Any:
    """JSON-ready: NaN and infinities to ``None``, numpy and pandas scalars to Python ones."""
    if hasattr(value, "item") and not isinstance(value, (list, dict, str)):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _block(row: Any, block: str) -> dict | None:
    if f"{block}_time_us" not in row.index:
        return None
    return {"time_us": clean(row[f"{block}_time_us"]), "algbw_gbps": clean(row.get(f"{block}_algbw_gbps")),
            "busbw_gbps": clean(row.get(f"{block}_busbw_gbps")), "wrong": clean(row.get(f"{block}_wrong"))}


def nccl_record(run: NcclTestsRun, link: Link | None) -> dict:
    """The nccl-tests record: rows as read, the footer and the recomputed mean, the fit, the model."""
    rows = []
    for _, row in run.table.iterrows():
        record: dict = {"bytes": int(row["bytes"]), "count": int(row["count"]), "dtype": row["dtype"]}
        for block in BLOCKS:
            record[block] = _block(row, block)
        rows.append(record)
    block, points = fit.measured_times(run)
    notes = list(run.notes)
    fitted = fit.fit_alpha_beta(points, run.op, run.ranks) if run.op and run.ranks else None
    result: dict = {
        "format": "nccl-tests", "path": run.path, "op": run.op, "dtype": run.dtype, "ranks": run.ranks,
        "ranks_from": run.ranks_from or None, "devices": list(run.devices), "nccl_algo": run.nccl_algo, "rows": rows,
        "avg_busbw_gbps": clean(run.avg_busbw_gbps), "footer_avg_busbw_gbps": clean(run.footer_avg_busbw_gbps),
        "fit": None if fitted is None else {
            "alpha_s": fitted.alpha_s, "beta_s_per_byte": fitted.beta_s_per_byte,
            "bandwidth_gbps": clean(fitted.bandwidth_gbps),
            "algorithm": fitted.algorithm, "times": block, "points": fitted.points,
            "intercept_s": fitted.intercept_s, "slope_s_per_byte": fitted.slope_s_per_byte,
            "intercept_fixed_at_zero": fitted.intercept_fixed},
    }
    if fitted and fitted.intercept_fixed:
        notes.append("the fit's intercept came out negative and was fixed at 0")
    if link is not None and run.op and run.ranks:
        modelled = fit.model_rows(points, run.op, run.ranks, link)
        if modelled:
            result["model"] = {
                "link": link.id, "link_name": link.name, "alpha_s": link.latency_s,
                # B of the run's group: the link's, or less on a full mesh (Link.group_bandwidth_bytes_per_s).
                "beta_s_per_byte": 1 / link.group_bandwidth_bytes_per_s(run.ranks),
                "bandwidth_gbps": (link.bandwidth_gbps if link.mesh_links is None
                                   else link.group_bandwidth_bytes_per_s(run.ranks) / 1e9),
                "times": block,
                "rows": [{"bytes": m.message_bytes, "time_s": m.time_s, "measured_s": m.measured_s, "error": m.error,
                          "algorithm": m.algorithm} for m in modelled]}
            if run.op == "all-reduce" and link.id.startswith("nvlink") and not run.nccl_algo:
                notes.append("on an NVSwitch node NCCL runs an all-reduce with NVLink SHARP (NVLS) when it can, "
                             "which reduces inside the switch: the α–β model has no such algorithm, and such a run's "
                             "busbw can pass the link's wire rate")
        else:
            notes.append(f"the α–β model has no {run.op} on {run.ranks} ranks")
    result["notes"] = notes
    return result


def roof_flops_per_s(preset: Preset, intensity: float, precision: str, unit: str) -> float | None:
    """The roof at ``intensity``: min(peak, memory bandwidth × intensity); ``None`` without that peak."""
    peak = preset.peak_tflops(precision, unit=unit)
    if peak is None or not math.isfinite(intensity):
        return None
    return min(peak * 1e12, preset.memory_bandwidth_bytes_per_s * intensity)


def ncu_record(run: NcuRun, preset: Preset | None) -> dict:
    """The ncu record, each kernel with its roof and the fraction of it reached when a GPU is given."""
    kernels = []
    for _, row in run.kernels.iterrows():
        kernel = {key: clean(row[key]) for key in ("name", "flops", "dram_bytes", "duration_s", "flops_per_s",
                                                   "intensity", "tensor_flops_assumed")}
        kernel["id"] = str(row["id"])
        if preset is not None:
            precision, unit = ("fp16", "tensor") if row["tensor_flops_assumed"] else ("fp32", "vector")
            roof = roof_flops_per_s(preset, float(row["intensity"]), precision, unit)
            fraction = kernel["flops_per_s"] / roof if roof and kernel["flops_per_s"] is not None else None
            kernel.update(roof_flops_per_s=roof, roof=f"{precision} {unit}", fraction_of_roof=fraction,
                          above_roof=bool(fraction is not None and fraction > 1 + ABOVE_ROOF_TOLERANCE))
        kernels.append(kernel)
    notes = []
    if any(k["tensor_flops_assumed"] for k in kernels):
        notes.append("tensor FLOPs assume 4,096 FLOPs per matrix instruction (mma m16n8k16): an estimate")
    if any(k.get("above_roof") for k in kernels):
        notes.append("a kernel above its roof means a units or FLOP-count error, not a fast kernel")
    return {"format": "ncu", "path": run.path, "layout": run.layout, "gpu": preset.id if preset else None,
            "devices": list(run.devices), "kernels": kernels, "notes": notes}


def kineto_record(trace: KinetoTrace) -> dict:
    """The Kineto record: one entry per NCCL kernel, compute kernels by name, and the step times."""
    collectives = [{key: clean(row[key]) for key in ("kernel", "collective", "op", "dtype", "bytes", "in_bytes",
                                                      "out_bytes", "group_size", "duration_s", "busbw_gbps")}
                   for _, row in trace.collectives.iterrows()]
    kernels = [{"name": row["name"], "count": int(row["count"]), "total_s": clean(row["total_s"]),
                "mean_s": clean(row["mean_s"])} for _, row in trace.kernels.iterrows()]
    steps = [{"step": row["step"], "duration_s": clean(row["duration_s"])} for _, row in trace.steps.iterrows()]
    notes = [] if collectives else ["no NCCL kernels in the trace"]
    if collectives and all(c["op"] is None for c in collectives):
        notes.append("the NCCL kernels carry no collective record (PyTorch before 2.2?)")
    found = step_times(trace)
    if found is None:
        notes.append("the trace marks no step (no ProfilerStep#N event)")
    # step_times: additive to CONTRACT.md's keys (median, least, greatest over the steps after warm-up)
    return {"format": "kineto", "path": trace.path, "world_size": trace.world_size, "collectives": collectives,
            "kernels": kernels, "steps": steps, "step_times": None if found is None else found.record(),
            "devices": list(trace.devices), "notes": notes}
