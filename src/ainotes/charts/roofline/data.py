"""What the core says for a roofline chart, computed at build time for every state: the ceilings
(one row per preset and roof), the kernels' marks in each way of typing them, and the roofs drawn beside."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ainotes.charts import formats
from ainotes.charts.roofline.names import (
    ALL_PRESETS,
    DENSE_STYLE,
    KERNEL_MODES,
    LABEL_CHAR_PX,
    LABEL_GAP_PX,
    NARROWEST_PLOT_PX,
    ON_LINE_TOLERANCE,
    ROOF_ORDER,
    SHOWN_STYLE,
    STYLE_DOMAIN,
    TERA,
    missing_text,
    op_word,
    precision_name,
    roof_dtype,
    roof_id,
    roof_term,
)
from ainotes.core import roofline
from ainotes.core.hardware import Preset
from ainotes.core.kernels import LAUNCH_REMARK, Kernel, below_launch, parse_kernel_spec

# -- what the core says, per roof -----------------------------------------------------------------


def _roof_peaks(preset: Preset, unit: str, precision: str) -> tuple[str, float | None, float | None]:
    """(status, dense peak FLOP/s, 2:4-sparse peak FLOP/s) of one roof of ``preset``.

    status is ``"ok"``, ``"none"`` (the GPU has no such path) or ``"not given"`` (the
    preset file does not say). Sparsity doubles tensor rates only, where supported.
    """
    path = preset.path(precision, unit)
    if path is None:
        return "not given", None, None
    dense, sparse = path.peak_tflops(False), path.peak_tflops(True)
    if dense is None or sparse is None:
        return "none", None, None
    return "ok", dense * TERA, sparse * TERA


def ceiling_rows(presets: Sequence[Preset]) -> tuple[list[dict[str, Any]], dict[str, dict[str, str]]]:
    """The ``ceilings`` rows, and per roof the presets that lack it (id → "no FP8 path")."""
    rows: list[dict[str, Any]] = []
    missing: dict[str, dict[str, str]] = {}
    for unit, precision in ROOF_ORDER:
        roof = roof_id(unit, precision)
        for preset in presets:
            status, dense, sparse = _roof_peaks(preset, unit, precision)
            if dense is None or sparse is None:
                missing.setdefault(roof, {})[preset.id] = missing_text(status, roof)
                continue
            bandwidth = preset.memory_bandwidth_bytes_per_s
            rows.append({
                "p": preset.id, "r": roof, "peak": dense, "speak": sparse, "bw": bandwidth,
                "ridge": roofline.ridge_point_flop_per_byte(dense, bandwidth),
                "sridge": roofline.ridge_point_flop_per_byte(sparse, bandwidth),
            })
    return rows, missing


def label_clusters(intensities: Sequence[float], x_min: float, x_max: float) -> list[int]:
    """Cluster index per kernel: kernels whose numbers would touch on the narrowest plot share a label.

    Walking in order of intensity, a kernel joins the previous one's cluster when the gap
    between them, in pixels of a :data:`NARROWEST_PLOT_PX` plot, is less than half of each
    label plus a gap (labels are centred on their cluster). Cluster labels list their numbers.
    """
    px_per_decade = NARROWEST_PLOT_PX / math.log10(x_max / x_min)
    order = sorted(range(len(intensities)), key=lambda i: intensities[i])
    cluster = [0] * len(intensities)
    current, previous = -1, None
    for index in order:
        if previous is not None:
            gap_px = math.log10(intensities[index] / intensities[previous]) * px_per_decade
            need_px = LABEL_CHAR_PX * (len(str(previous + 1)) + len(str(index + 1))) / 2 + LABEL_GAP_PX
        if previous is None or gap_px >= need_px:
            current += 1
        cluster[index] = current
        previous = index
    return cluster


# -- kernels, in each way of typing them ----------------------------------------------------------


def retyped(kernel: Kernel, dtype: str) -> tuple[Kernel, str]:
    """The same kernel in ``dtype`` ("this GEMM in FP8": its bytes change with the type, its
    FLOPs do not), and how its key names it: the kernel's own label when it is already of that
    type, the default label of the re-typed spec, or an author's label with "as fp8" after it."""
    if kernel.dtype == dtype:
        return kernel, kernel.label
    parts = kernel.spec.split(":")
    parts[2] = dtype
    other = parse_kernel_spec(":".join(parts))
    default = parse_kernel_spec(kernel.spec).label
    return other, (other.label if kernel.label == default else f"{kernel.label}, as {dtype}")


def mode_kernels(kernels: Sequence[Kernel], roofs: Sequence[str]) -> dict[str, list[tuple[Kernel, str]]]:
    """Per mode key (``"own"``, or a roof for kernels re-typed to it): the kernels and their names."""
    modes = {"own": [(k, k.label) for k in kernels]}
    for roof in roofs:
        modes[roof] = [retyped(k, roof_dtype(roof)) for k in kernels]
    return modes


def _why_not(preset: Preset, found: roofline.KernelRoof) -> str:
    """Why a kernel has no roof on a preset, in the chart's words (never a file's path)."""
    roof = roof_id(found.unit, found.precision)
    if found.bound == "unknown":
        return missing_text("not given", roof)
    path = preset.path(found.precision, found.unit)
    if path is not None and path.dense_tflops is not None:  # the path is there, its 2:4 mode is not
        return f"no 2:4 sparse {precision_name(found.precision)} path"
    return missing_text("none", roof)


def kernel_cell_text(preset: Preset, found: roofline.KernelRoof) -> str:
    """A kernel on one preset, as the kernels' table and tooltips say it:
    ``"compute-bound, 989.4 TFLOP/s on BF16 tensor cores, 1,111 µs"``."""
    roof = roof_id(found.unit, found.precision)
    if found.attainable_flops_per_s is None or found.time_s is None:
        return f"not placed: {_why_not(preset, found)}"
    rate = formats.rate_text(found.attainable_flops_per_s, op_word(roof))
    sparse = ", 2:4 sparse" if found.sparse else ""
    # A roof time under one kernel launch is not what the kernel takes: say what bounds it then.
    launch = f", {LAUNCH_REMARK}" if below_launch(found.time_s) else ""
    return (f"{found.bound}-bound, {rate} on {roof_term(roof, preset)}{sparse}, "
            f"{formats.time_us_text(found.time_s)}{launch}")


class KernelData:
    """Every kernel mark of a chart, in every mode, from the core (:func:`roofline.kernel_roof`).

    ``rows`` are the ``kernels`` dataset: one per kernel, preset and place, with the mode keys
    (``"own"``, or the roof it was re-typed to) that draw it in ``m`` and the kernels' table's
    text in ``tx``; ``why`` says, per mode key, kernel number and preset, why a kernel has no
    mark there."""

    def __init__(self, kernels: Sequence[Kernel], presets: Sequence[Preset], roofs: Sequence[str],
                 x_min: float, x_max: float):
        self.modes = mode_kernels(kernels, roofs) if kernels else {}
        self.marks: dict[str, dict[str, list[dict[str, Any]]]] = {}  # mode key → preset → marks
        self.why: dict[str, dict[str, dict[str, str]]] = {}  # mode key → kernel number → preset → why not
        self.keys: dict[str, dict[str, str]] = {}  # mode key → kernel number → key text
        merged: dict[tuple[Any, ...], dict[str, Any]] = {}
        for mode, typed in self.modes.items():
            intensities = [k.intensity_flop_per_byte for k, _ in typed]
            clusters = label_clusters(intensities, x_min, x_max)
            members: dict[int, list[int]] = {}
            for index, cluster in enumerate(clusters):
                members.setdefault(cluster, []).append(index)
            self.keys[mode] = {str(i + 1): f"{i + 1} {name}" for i, (_, name) in enumerate(typed)}
            per_preset: dict[str, list[dict[str, Any]]] = {p.id: [] for p in presets}
            for index, (kernel, _) in enumerate(typed):
                group = sorted(members[clusters[index]], key=lambda i: intensities[i])
                centre = math.exp(sum(math.log(intensities[i]) for i in group) / len(group))
                for preset in presets:
                    found = roofline.kernel_roof(preset, kernel)
                    if found.attainable_flops_per_s is None:
                        self.why.setdefault(mode, {}).setdefault(str(index + 1), {})[preset.id] = (
                            kernel_cell_text(preset, found))
                        continue
                    row = {
                        "k": index + 1, "p": preset.id, "x": intensities[index], "y": found.attainable_flops_per_s,
                        "r": roof_id(found.unit, found.precision), "sp": int(found.sparse),
                        "b": found.bound, "t": found.time_s, "c": clusters[index], "cx": centre,
                        "ct": ",".join(str(i + 1) for i in sorted(group)), "tx": kernel_cell_text(preset, found),
                    }
                    per_preset[preset.id].append(row)
                    identity = tuple(sorted(row.items()))
                    merged.setdefault(identity, {**row, "m": " "})["m"] += f"{mode} "
            self.marks[mode] = per_preset
        self.rows = list(merged.values())


def _mode_key(kmode: str, roof: str) -> str:
    return "own" if kmode == "own" else roof


def _on_line(mark: dict[str, Any], lines: Sequence[tuple[float, float]]) -> bool:
    """Whether a mark lies on one of ``lines`` ((flat top, bandwidth) pairs) at its intensity."""
    return any(abs(mark["y"] - min(top, bw * mark["x"])) <= ON_LINE_TOLERANCE * mark["y"] for top, bw in lines)


def _drawn_lines(ceiling: dict[str, Any], sparsity: bool) -> list[tuple[float, float]]:
    """The lines a preset draws at its roof shown: the roof (sparse where asked and supported)
    and, behind a doubled one, the dense roof."""
    lines = [(ceiling["speak"] if sparsity else ceiling["peak"], ceiling["bw"])]
    if sparsity and ceiling["speak"] != ceiling["peak"]:
        lines.append((ceiling["peak"], ceiling["bw"]))
    return lines


_Drawn = dict[str, dict[str, list[str]]]  # "own|tensor:fp8" → kernel number → the presets that draw it


def extra_roofs(data: KernelData, presets: Sequence[Preset], ceilings: dict[tuple[str, str], dict[str, Any]],
                 roofs: Sequence[str]) -> tuple[list[dict[str, Any]], dict[str, list[str]], _Drawn]:
    """What each state draws beside the roof shown, from the kernel marks.

    Returns the ``extra_roofs`` rows (a preset's roof, dense or 2:4 sparse, with the states
    that draw it: "own|tensor:fp64|d", kernel mode, roof shown, sparsity), the line key's
    entries per state and GPU choice (those that are more than the roof shown alone), and per
    kernel mode and roof the presets that draw each kernel (for its key)."""
    states: dict[tuple[str, str, int], list[str]] = {}
    line_keys: dict[str, list[str]] = {}
    drawn: dict[str, dict[str, list[str]]] = {}
    ids = [p.id for p in presets]
    for kmode in KERNEL_MODES:
        for roof in roofs:
            mode = _mode_key(kmode, roof)
            marks = data.marks.get(mode, {})
            shown = [i for i in ids if (i, roof) in ceilings]
            numbers = {str(n) for n in range(1, len(data.keys.get(mode, {})) + 1)}
            drawn[f"{kmode}|{roof}"] = {n: [i for i in shown if any(str(m["k"]) == n for m in marks.get(i, []))]
                                        for n in sorted(numbers, key=int)}
            for sparsity in (False, True):
                state = f"{kmode}|{roof}|{'s' if sparsity else 'd'}"
                extras: dict[str, set[str]] = {}
                for preset_id in shown:
                    lines = _drawn_lines(ceilings[(preset_id, roof)], sparsity)
                    for mark in marks.get(preset_id, []):
                        if _on_line(mark, lines):
                            continue
                        where = states.setdefault((preset_id, mark["r"], mark["sp"]), [])
                        if state not in where:
                            where.append(state)
                        extras.setdefault(preset_id, set()).add(mark["r"] + ("|s" if mark["sp"] else ""))
                for choice in (ALL_PRESETS, *ids):
                    visible = shown if choice == ALL_PRESETS else [i for i in shown if i == choice]
                    styles = [SHOWN_STYLE]
                    if sparsity and any(ceilings[(i, roof)]["speak"] != ceilings[(i, roof)]["peak"] for i in visible):
                        styles.append(DENSE_STYLE)
                    present = set().union(*(extras.get(i, set()) for i in visible)) if visible else set()
                    styles += [s for s in STYLE_DOMAIN if s in present]
                    if styles != [SHOWN_STYLE]:
                        line_keys[f"{state}|{choice}"] = styles
    rows = []
    for (preset_id, roof, sparse), where in states.items():
        ceiling = ceilings[(preset_id, roof)]
        rows.append({"p": preset_id, "r": roof, "sp": sparse, "top": ceiling["speak"] if sparse else ceiling["peak"],
                     "bw": ceiling["bw"], "s": " " + " ".join(where) + " "})
    return rows, line_keys, drawn


