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

#: A kernel whose FLOP/s passes its roof by more than this fraction is flagged (rounding and clocks aside).
ABOVE_ROOF_TOLERANCE = 0.02


def figure(value: float | None, digits: int = 4) -> str:
    """A measured or modelled figure as the command and the page both print it: ``digits`` significant."""
    if value is None:
        return "—"
    if 10**digits <= abs(value) < 1e15:  # whole numbers past the digits: no exponent (19090, not 1.909e+04)
        return f"{value:.0f}"
    return f"{value:.{digits}g}"


def percent(value: float | None) -> str:
    """An error or a fraction as a signed percentage with one decimal: ``-32.7 %``."""
    return "—" if value is None else f"{value * 100:+.1f} %"


def duration(value_s: float) -> str:
    """A time with the unit that keeps it readable: ``4.265 µs``, ``1.515 ms``."""
    for scale, unit in ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs")):
        if value_s >= scale:
            return f"{value_s / scale:.4g} {unit}"
    return "0 s" if value_s <= 0 else f"{value_s / 1e-9:.4g} ns"


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
                "beta_s_per_byte": 1 / link.bandwidth_bytes_per_s, "bandwidth_gbps": link.bandwidth_gbps,
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


def nccl_table(record: dict) -> tuple[list[str], list[list[str]], set[int]]:
    """The nccl-tests table as the command and the page both print it: its head, its rows of cells
    (plain text) and the columns set right. With a model, its three columns take the in-place block's
    place, so the table fits a desk's column and a terminal; ``--json`` and the raw file keep both blocks."""
    model = {row["bytes"]: row for row in (record.get("model") or {}).get("rows", [])}
    head = ["bytes", "time µs", "algbw GB/s", "busbw GB/s"]
    head += ["model µs", "model's algorithm", "error"] if model else ["in-place µs", "in-place busbw GB/s"]
    rows = []
    for row in record["rows"]:
        out, inside = row["out_of_place"] or {}, row["in_place"] or {}
        cells = [f"{row['bytes']:,}", figure(out.get("time_us"), 6), figure(out.get("algbw_gbps")),
                 figure(out.get("busbw_gbps"))]
        if not model:
            cells += [figure(inside.get("time_us"), 6), figure(inside.get("busbw_gbps"))]
        else:
            hit = model.get(row["bytes"])
            cells += [figure(hit["time_s"] * 1e6) if hit else "—", hit["algorithm"] if hit else "—",
                      percent(hit["error"]) if hit else "—"]
        rows.append(cells)
    return head, rows, {0, 1, 2, 3, 4, 6} if model else {0, 1, 2, 3, 4, 5}


def preset_link_id(preset: Preset, ranks: int | None) -> str | None:
    """The link a run of ``ranks`` ranks on ``preset``'s nodes talks over (:func:`ainotes.core.topology.group_link`):
    the node's own link while the ranks fit in one node, the link between nodes past it; ``None`` without
    a node in the preset or a rank count."""
    from ainotes.core.topology import group_link

    if preset.node is None or not ranks:
        return None
    return group_link(preset, ranks).link_id


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


def step_time_text(found: dict) -> str:
    """A trace's ``step_times`` in words, as the command and the page both print them."""
    warmup = f", {found['steps'][0]['step']} left out as warm-up" if found["warmup_steps"] else ""
    return (f"median {duration(found['median_s'])} over {found['counted']} step{'s' if found['counted'] != 1 else ''} "
            f"(least {duration(found['min_s'])}, greatest {duration(found['max_s'])}){warmup}; "
            f"from {found['source']}")


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
