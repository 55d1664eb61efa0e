"""What ``ainotes measured`` prints and a page shows for one file: one record, JSON-ready.

The keys are CONTRACT.md's (fourth round): for nccl-tests ``format, op, dtype, ranks, rows,
avg_busbw_gbps, fit, model``; for ncu ``format, kernels``; for Kineto ``format, collectives,
kernels``; each with ``path`` and ``notes`` beside them. NaN becomes ``None`` (JSON ``null``). The
command line and the fences both read this record, so a page and the command print the same numbers.
"""

from __future__ import annotations

import math
from typing import Any

from ainotes.core.hardware import FILE_PRECISIONS, Preset, precision_label
from ainotes.core.links import Link
from ainotes.measurements import fit
from ainotes.measurements.kineto import KinetoTrace
from ainotes.measurements.nccl_tests import BLOCKS, NcclTestsRun
from ainotes.measurements.ncu import VECTOR_PRECISIONS, NcuRun
from ainotes.measurements.steps import step_times
from ainotes.measurements.words import duration, figure, nccl_table, percent, preset_link_id, step_time_text

__all__ = [
    "ABOVE_ROOF_TOLERANCE",
    "clean",
    "duration",
    "figure",
    "held_to_words",
    "kernel_roof",
    "kineto_record",
    "nccl_record",
    "nccl_table",
    "ncu_record",
    "percent",
    "preset_link_id",
    "roof_flops_per_s",
    "step_time_text",
    "unit_peak_flops_per_s",
    "work_mix",
]

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
    peak = unit_peak_flops_per_s(preset, precision, unit)
    if peak is None or not math.isfinite(intensity):
        return None
    return min(peak, preset.memory_bandwidth_bytes_per_s * intensity)


def unit_peak_flops_per_s(preset: Preset, precision: str, unit: str) -> float | None:
    """The preset's dense rate for ``precision`` on ``unit`` in FLOP/s; ``None`` where it gives none (FP16 on the
    vector units is an optional rate, stated only where the vendor prints one: the A100's 78 TFLOP/s;
    :data:`ainotes.core.precision.FILE_PRECISIONS`)."""
    if precision not in FILE_PRECISIONS[unit]:
        return None
    peak = preset.peak_tflops(precision, unit=unit)
    return None if peak is None else peak * 1e12


def work_mix(row: Any) -> list[dict]:
    """A kernel's FLOPs per precision and unit, most first: the matrix FLOPs at their precision, then FP32,
    FP64 and FP16 on the vector units (the SASS counters' f, d and h); precisions it did no work in left out."""
    work = []
    matrix = clean(row["matrix_flops"])
    if matrix and row["matrix_precision"]:
        work.append({"precision": row["matrix_precision"], "unit": "tensor", "flops": matrix})
    for precision in VECTOR_PRECISIONS.values():
        flops = clean(row[f"flops_{precision}"])
        if flops:
            work.append({"precision": precision, "unit": "vector", "flops": flops})
    total = sum(item["flops"] for item in work)
    for item in work:
        item["share_of_flops"] = item["flops"] / total
    return sorted(work, key=lambda item: -item["flops"])


def _share(fraction: float) -> str:
    """A share of a kernel's FLOPs: whole percent, with more digits near 0 and 100 % (``0.26 %``, ``99.7 %``)."""
    value = fraction * 100
    if value < 1:
        return f"{value:.2g} %"
    return f"{value:.3g} %" if 99.5 <= value < 100 else f"{value:.0f} %"


def held_to_words(work: list[dict], named: bool = True) -> str:
    """``FP64 vector``, or for a mix ``FP64 vector 69 % + FP32 vector 31 %`` (shares of the FLOPs)."""
    if not work:
        return "—"
    assumed = "" if named or not any(item["unit"] == "tensor" for item in work) else " (precision assumed)"
    if len(work) == 1:
        return precision_label(work[0]["precision"], work[0]["unit"]) + assumed
    return " + ".join(f"{precision_label(item['precision'], item['unit'])} {_share(item['share_of_flops'])}"
                      for item in work) + assumed


def _short_name(kernel: dict) -> str:
    """A kernel's name for a one-line note: at most 60 characters, cut with an ellipsis."""
    return kernel["name"] if len(kernel["name"]) <= 60 else kernel["name"][:59] + "…"


def _hfma_mma_note(kernel: dict) -> str | None:
    """The line for a kernel whose HFMA all issued on the tensor pipe (``HFMA2.MMA``): FP16 FMAs or register moves,
    which no counter tells apart (:mod:`ainotes.measurements.ncu`); ``None`` where it has no FP16 vector work."""
    fp16 = next((item for item in kernel["work"] if (item["precision"], item["unit"]) == ("fp16", "vector")), None)
    if fp16 is None:
        return None
    return (f"kernel {kernel['id']} ({_short_name(kernel)}): its HFMA ran on the tensor pipe as HFMA2.MMA, which the "
            f"compiler also uses to move registers; counted as FP16 vector work ({_share(fp16['share_of_flops'])} of "
            "its FLOPs), as ncu's roofline counts it")


def _missing_roof(preset: Preset, kernel: dict, item: dict) -> str:
    """The one line for a kernel whose work needs a roof the preset lacks: the kernel, the precision, the preset."""
    label = precision_label(item["precision"], item["unit"])
    name = _short_name(kernel)
    why = (preset.missing_peak(item["precision"], item["unit"]) if item["precision"] in FILE_PRECISIONS[item["unit"]]
           else f"preset {preset.id} has no {label} roof (the preset format has no such rate)")
    return (f"kernel {kernel['id']} ({name}) did {_share(item['share_of_flops'])} of its FLOPs as {label} work and "
            f"{why}: it has no roof")


def kernel_roof(preset: Preset, kernel: dict) -> tuple[dict, str | None]:
    """The roof a kernel is held to, as record keys, and the line naming a roof the preset lacks.

    Each precision runs at its own peak P_p, so the kernel's FLOPs F_p cannot take less than Σ F_p ÷ P_p: its
    compute roof is ΣF ÷ Σ(F_p ÷ P_p), the peak of its one precision when it has one, between the peaks of a
    mix otherwise (a time-weighted, harmonic mean: the bound if the units take turns; units that overlap
    could beat it by up to the largest share's time). The roof at its intensity I is min(that, B × I)."""
    work = kernel["work"]
    keys: dict[str, Any] = {"roof": None, "peak_flops_per_s": None, "roof_flops_per_s": None,
                            "fraction_of_roof": None, "above_roof": False}
    if not work or kernel["intensity"] is None:
        return keys, None
    for item in work:
        item["peak_flops_per_s"] = unit_peak_flops_per_s(preset, item["precision"], item["unit"])
    if lacking := next((item for item in work if item["peak_flops_per_s"] is None), None):
        return keys, _missing_roof(preset, kernel, lacking)
    seconds = sum(item["flops"] / item["peak_flops_per_s"] for item in work)
    peak = sum(item["flops"] for item in work) / seconds
    roof = min(peak, preset.memory_bandwidth_bytes_per_s * kernel["intensity"])
    fraction = kernel["flops_per_s"] / roof if kernel["flops_per_s"] is not None else None
    keys.update(roof=f"{work[0]['precision']} {work[0]['unit']}", peak_flops_per_s=peak, roof_flops_per_s=roof,
                fraction_of_roof=fraction,
                above_roof=bool(fraction is not None and fraction > 1 + ABOVE_ROOF_TOLERANCE))
    return keys, None


def ncu_record(run: NcuRun, preset: Preset | None) -> dict:
    """The ncu record, each kernel with the precisions its FLOPs ran in and, when a GPU is given, the roof they
    hold it to (:func:`kernel_roof`) and the fraction of it reached."""
    kernels = []
    notes = []
    for _, row in run.kernels.iterrows():
        kernel = {key: clean(row[key]) for key in ("name", "flops", "dram_bytes", "duration_s", "flops_per_s",
                                                   "intensity", "tensor_flops_assumed")}
        kernel["id"] = str(row["id"])
        work = work_mix(row)
        named = bool(row["matrix_precision_named"])
        # Additive to CONTRACT.md's keys: what the FLOPs ran in, and (with a preset) the roof they give.
        kernel.update(work=work, mixed=len(work) > 1, precision=work[0]["precision"] if work else None,
                      unit=work[0]["unit"] if work else None, matrix_precision_named=named,
                      flops_per_matrix_instruction=clean(row["flops_per_matrix_instruction"]),
                      held_to=held_to_words(work, named))
        if preset is not None:
            keys, missing = kernel_roof(preset, kernel)
            kernel.update(keys)
            if missing:
                notes.append(missing)
        if row.get("hfma_on_tensor_pipe") and (moves := _hfma_mma_note(kernel)):
            notes.append(moves)
        kernels.append(kernel)
    if any(k["tensor_flops_assumed"] for k in kernels):
        shapes = sorted({(next(item["precision"] for item in k["work"] if item["unit"] == "tensor"),
                          k["flops_per_matrix_instruction"]) for k in kernels if k["tensor_flops_assumed"]})
        listed = ", ".join(f"{precision_label(p, 'tensor')} {int(n):,}" for p, n in shapes)
        notes.append(f"matrix FLOPs assume the mma shape of each kernel's precision ({listed} FLOPs per "
                     "instruction): an estimate")
    if unnamed := [k["id"] for k in kernels if k["tensor_flops_assumed"] and not k["matrix_precision_named"]]:
        notes.append(f"kernel{'s' if len(unnamed) > 1 else ''} {', '.join(unnamed)}: the name gives no matrix "
                     "precision, so FP16 is assumed")
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
