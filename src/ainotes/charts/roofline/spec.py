"""One roofline chart: :func:`roofline_spec` fills the grammar with these presets' and kernels'
data; :func:`caption_html` says what it assumes."""

from __future__ import annotations

import html
import itertools
import math
from collections.abc import Iterable, Sequence
from typing import Any

from ainotes.base import units
from ainotes.base.errors import InputError
from ainotes.base.textcheck import bad_character, short
from ainotes.charts import formats
from ainotes.charts.roofline.colours import THEME
from ainotes.charts.roofline.data import KernelData, ceiling_rows, extra_roofs, mode_kernels
from ainotes.charts.roofline.grammar import GRAMMAR
from ainotes.charts.roofline.names import (
    ALL_PRESETS,
    ALL_ROOFS,
    DEFAULT_MIN_INTENSITY_FLOP_PER_BYTE,
    DEFAULT_ROOF,
    DEFAULT_TITLE,
    DENSE_STYLE,
    INT8_ROOF,
    KERNEL_MARGIN,
    KERNEL_MODES,
    RIDGE_HEADROOM,
    ROOF_ORDER,
    SHOWN_STYLE,
    STATIC_HEIGHT_PX,
    STATIC_WIDTH_PX,
    TICKS_ABOVE,
    display_names,
    dtype_roofs,
    intensity_label,
    narrow_lines,
    roof_id,
    roof_name,
    roof_option_label,
    roof_term,
)
from ainotes.charts.roofline.stills import still_plot_size
from ainotes.charts.theme import Theme, gpu_colour_domain, gpu_colour_slots
from ainotes.core import roofline
from ainotes.core.hardware import Preset, default_unit
from ainotes.core.kernels import DTYPE_BYTES, Kernel


def _decade_floor(value: float) -> float:
    return 10.0 ** math.floor(math.log10(value))


def _decade_ceil(value: float) -> float:
    return 10.0 ** math.ceil(math.log10(value))


def _decades(low: float, high: float) -> list[float]:
    first, last = round(math.log10(low)), round(math.log10(high))
    return [10.0**exponent for exponent in range(first, last + 1)]


def _initial_intensity(rows: Sequence[dict[str, Any]], low: float, high: float) -> float:
    """Open the readout between the lowest and highest dense BF16 ridge points (their geometric
    mean, to three figures), where the presets disagree about what bounds a kernel."""
    ridges = [r["ridge"] for r in rows if r["r"] == DEFAULT_ROOF] or [r["ridge"] for r in rows]
    middle = math.sqrt(min(ridges) * max(ridges))
    return min(max(float(units.significant(middle, 3)), low), high)


# -- one chart ------------------------------------------------------------------------------------


def _check_inputs(presets: Sequence[Preset], kernels: Sequence[Kernel], title: str | None, theme: str) -> None:
    THEME.colours_of(theme)  # a bad theme is refused here
    if not presets:
        raise InputError("roofline chart: at least one preset is needed")
    texts = [("title", title or ""), *(("preset name", p.name) for p in presets),
             *(("kernel label", k.label) for k in kernels)]
    for what, text in texts:
        bad = bad_character(text)
        if bad is not None:
            raise InputError(f"roofline chart: the {what} {short(text)} holds a control character ({bad})")


def _opening_roof(precision: str, roofs: Sequence[str]) -> str:
    """The roof id a chart opens on: ``"fp8"`` → ``"tensor:fp8"``, ``"fp32"`` → ``"vector:fp32"``."""
    text = str(precision)
    opening = text if ":" in text else roof_id(default_unit(text), text)
    if opening not in roofs:
        known = ", ".join(r.removeprefix("tensor:") for r in roofs)
        raise InputError(f"roofline chart: 'precision' must be one the presets have ({known}): {short(precision)}")
    return opening


def _x_domain(rows: Sequence[dict[str, Any]], intensities: Sequence[float]) -> tuple[float, float]:
    """Whole decades that hold every ridge of every roof (dense and sparse, so switching never
    rescales the x axis), every kernel in every mode, and element-wise intensities at the low end."""
    low = min([DEFAULT_MIN_INTENSITY_FLOP_PER_BYTE, *(r["ridge"] for r in rows)]
              + [i / KERNEL_MARGIN for i in intensities])
    high = max([RIDGE_HEADROOM * r["sridge"] for r in rows] + [i * KERNEL_MARGIN for i in intensities])
    return _decade_floor(low), _decade_ceil(high)


def _y_domains(rows: Sequence[dict[str, Any]], kernel_rows: Sequence[dict[str, Any]],
               extra_rows: Sequence[dict[str, Any]], roofs: Sequence[str], x_min: float) -> dict[str, list[float]]:
    """Per roof: from the slowest sloped line at the axis start (and below the lowest kernel
    mark, clear of the band of numbers) to its highest sparse peak, every kernel mark and every
    roof drawn beside it: the highest mark. The band of labels above it is the grammar's, in pixels
    (grammar.Y_DOMAIN_EXPR). A switch of precision may rescale the y axis; the sparsity toggle and
    the kernels' mode never do."""
    y_min = _decade_floor(min([r["bw"] * x_min for r in rows] + [r["y"] / 2 for r in kernel_rows]))
    kernel_top = max((r["y"] for r in kernel_rows), default=0.0)
    roof_tops = {r["r"]: 0.0 for r in rows}
    for r in rows:
        roof_tops[r["r"]] = max(roof_tops[r["r"]], r["speak"])
    for extra in extra_rows:  # its states: "kernel mode|roof shown|sparsity"
        for state in extra["s"].split():
            shown = state.split("|")[1]
            roof_tops[shown] = max(roof_tops.get(shown, 0.0), extra["top"])
    return {roof: [y_min, max(roof_tops[roof], kernel_top)] for roof in roofs}


def _readout_at(given: float | None, rows: Sequence[dict[str, Any]], x_min: float, x_max: float) -> float:
    if given is None:
        return _initial_intensity(rows, x_min, x_max)
    if not (isinstance(given, (int, float)) and math.isfinite(given) and x_min <= given <= x_max):
        raise InputError(
            f"roofline chart: the readout intensity must lie on the axis, {x_min:g} to {x_max:g} FLOP/byte: {given!r}"
        )
    return float(given)


def _legend_ridges(rows: Sequence[dict[str, Any]], missing: dict[str, dict[str, str]],
                   roofs: Sequence[str]) -> dict[str, dict[str, str]]:
    """Per roof and mode (``"tensor:fp8|s"``), each preset's legend prefix: its ridge, or why it
    draws nothing."""
    legend: dict[str, dict[str, str]] = {}
    for roof in roofs:
        for mode, field in (("d", "ridge"), ("s", "sridge")):
            texts = {r["p"]: f"ridge {intensity_label(r[field])}" for r in rows if r["r"] == roof}
            texts.update({i: f"not drawn: {text}" for i, text in missing.get(roof, {}).items()})
            legend[f"{roof}|{mode}"] = texts
    return legend


def _has_sparse(rows: Sequence[dict[str, Any]], roof: str) -> bool:
    return any(r["r"] == roof and r["speak"] != r["peak"] for r in rows)


def _mode_words(rows: Sequence[dict[str, Any]], roofs: Sequence[str]) -> dict[str, list[str]]:
    """Per roof, what its dense and its sparse state are called: a vector roof, or one no GPU
    has a 2:4 path for, stays dense with the box ticked, and says so (never "sparse")."""
    words = {}
    for roof in roofs:
        if _has_sparse(rows, roof):
            sparse = ", 2:4 sparse where supported"
        elif roof.startswith("vector:"):
            sparse = ", dense (vector units have no 2:4 mode)"
        else:
            sparse = ", dense (no 2:4 path on these GPUs)"
        words[roof] = [", dense", sparse]
    return words


def _subtitles(rows: Sequence[dict[str, Any]], roofs: Sequence[str]) -> dict[str, list[str]]:
    """Per roof and mode, the line above the plot, wide and narrow: the roof shown."""
    subtitles = {}
    words = _mode_words(rows, roofs)
    for roof in roofs:
        for index, mode in enumerate(("d", "s")):
            word = words[roof][index]
            integer = " · integer OP/s, OP/byte" if roof == INT8_ROOF else ""
            short_word = word.split(" (")[0].replace(" where supported", "")
            subtitles[f"{roof}|{mode}"] = [roof_name(roof) + word + integer + " · ridge points in the legend",
                                           roof_name(roof) + short_word + integer]
    return subtitles


def _padded(texts: dict[str, str]) -> dict[str, str]:
    """Narrow labels, each padded with blank lines to as many lines as the longest: an entry of a
    legend whose values change keeps its height whichever value it shows (Vega reuses an entry's
    place by its index and does not measure it again when its label grows a line)."""
    lines = max((text.count("\n") + 1 for text in texts.values()), default=1)
    return {key: text + "\n " * (lines - text.count("\n") - 1) for key, text in texts.items()}


def _style_names() -> dict[str, list[str]]:
    """The line key's labels, wide and wrapped for a narrow plot, one per style (the same in
    every state: the subtitle names the roof shown)."""
    wide = {SHOWN_STYLE: "the roof shown", DENSE_STYLE: "dense roof behind its 2:4 sparse one"}
    for roof in ALL_ROOFS:
        wide[roof] = f"{roof_name(roof)}: roof of marks on it"
        wide[f"{roof}|s"] = f"{roof_name(roof)} 2:4: roof of marks on it"
    narrow = _padded({style: narrow_lines(text) for style, text in wide.items()})
    return {style: [text, narrow[style]] for style, text in wide.items()}


NOT_DRAWN_KEY = " (not drawn here)"


def _narrow_keys(keys: dict[str, dict[str, str]], flagged: set[str]) -> dict[str, dict[str, list[str]]]:
    """Per mode and kernel, its key wrapped for a narrow plot, drawn and not drawn, each padded
    with blank lines to as many lines as the longest of its forms in any mode takes (only the
    kernels some state leaves undrawn, ``flagged``, have a longer "not drawn" form)."""
    wrapped = {mode: {n: (narrow_lines(text).split("\n"),
                          narrow_lines(text + (NOT_DRAWN_KEY if n in flagged else "")).split("\n"))
                      for n, text in by_number.items()} for mode, by_number in keys.items()}
    longest: dict[str, int] = {}
    for by_number in wrapped.values():
        for n, forms in by_number.items():
            longest[n] = max(longest.get(n, 0), *(len(form) for form in forms))
    return {mode: {n: ["\n".join(form + [" "] * (longest[n] - len(form))) for form in forms]
                   for n, forms in by_number.items()} for mode, by_number in wrapped.items()}


def _key_values(data: KernelData, drawn: dict[str, dict[str, list[str]]], roofs: Sequence[str],
                ids: Sequence[str], has_roof: dict[str, list[str]]) -> dict[str, list[str]]:
    """The kernels' key entries per state ("own|tensor:fp8|h100"): each kernel as
    ``"number|x"``, ``x`` where no GPU shown draws it."""
    values: dict[str, list[str]] = {}
    numbers = list(data.keys.get("own", {}))
    for kmode, roof, choice in itertools.product(KERNEL_MODES, roofs, (ALL_PRESETS, *ids)):
        shown = has_roof[roof] if choice == ALL_PRESETS else [i for i in has_roof[roof] if i == choice]
        entries = []
        for n in numbers:
            where = drawn[f"{kmode}|{roof}"][n]
            # Where no GPU shown has the roof at all, the legend says so; the key does not repeat it.
            missing = bool(shown) and (not where if choice == ALL_PRESETS else choice not in where)
            entries.append(f"{n}|{'x' if missing else ''}")
        values[f"{kmode}|{roof}|{choice}"] = entries
    return values


def _short_missing(text: str) -> str:
    """A narrow legend's form of "not drawn: no FP8 path": the path's name is in the subtitle."""
    return "not drawn: no path" if text.startswith("not drawn: no ") else "not drawn: not given"


class _ChartData:
    """Everything one chart fills the grammar with: the ceilings' rows, the kernels' marks, the
    roofs drawn beside, and the param values (:data:`params`)."""

    def __init__(self, presets: tuple[Preset, ...], kernels: tuple[Kernel, ...], *, sparsity: bool, precision: str,
                 readout_intensity_flop_per_byte: float | None, palette_ids: Iterable[str] | None):
        rows, missing = ceiling_rows(presets)
        roofs = [roof_id(u, p) for u, p in ROOF_ORDER if any(r["r"] == roof_id(u, p) for r in rows)]
        opening = _opening_roof(precision, roofs)
        typed = mode_kernels(kernels, roofs) if kernels else {}
        x_min, x_max = _x_domain(rows, [k.intensity_flop_per_byte for ks in typed.values() for k, _ in ks])
        data = KernelData(kernels, presets, roofs, x_min, x_max)
        by_key = {(r["p"], r["r"]): r for r in rows}
        extra_rows, line_keys, drawn = extra_roofs(data, presets, by_key, roofs)
        y_domains = _y_domains(rows, data.rows, extra_rows, roofs, x_min)
        names = dict(zip((p.id for p in presets), display_names(presets), strict=True))
        slots = gpu_colour_slots([*(palette_ids or ()), *names])
        has_roof = {roof: [r["p"] for r in rows if r["r"] == roof] for roof in ALL_ROOFS}
        key_values = _key_values(data, drawn, roofs, [p.id for p in presets], has_roof) if kernels else {}
        narrow_keys = _narrow_keys(data.keys, {v.split("|")[0] for vs in key_values.values() for v in vs
                                               if v.endswith("|x")})
        legend_ridge = _legend_ridges(rows, missing, roofs)
        params = {
            "precision": opening, "preset": ALL_PRESETS, "sparsity": bool(sparsity), "kmode": "own",
            "intensity": _readout_at(readout_intensity_flop_per_byte, rows, x_min, x_max),
            "intensity_opening": _readout_at(readout_intensity_flop_per_byte, rows, x_min, x_max),
            "x_domain": [x_min, x_max], "y_domains": y_domains, "x_ticks": _decades(x_min, x_max),
            # Up to decades above the highest mark: the band of labels over it (grammar.Y_DOMAIN_EXPR)
            # may reach one; Vega drops the ticks a domain does not hold.
            "y_ticks": _decades(min(low for low, _ in y_domains.values()),
                                max(top for _, top in y_domains.values()) * TICKS_ABOVE),
            "colour_domain": gpu_colour_domain({i: slots[i] for i in names}), "gpu_ids": list(names),
            "names": names, "narrow_names": _padded({i: narrow_lines(name) for i, name in names.items()}),
            # The key's scale: the kernels' numbers (the marks') and every entry value (the key's).
            "kernel_nums": [*data.keys.get("own", {}), *sorted({v for vs in key_values.values() for v in vs})] or ["1"],
            "kernel_keys": data.keys, "narrow_keys": narrow_keys, "key_values": key_values,
            "roof_names": {roof: roof_name(roof) for roof in ALL_ROOFS},
            "roof_terms": {p.id: {roof: roof_term(roof, p) for roof in ALL_ROOFS} for p in presets},
            "mode_words": _mode_words(rows, ALL_ROOFS), "subtitles": _subtitles(rows, roofs),
            "legend_ridge": legend_ridge,
            "legend_ridge_narrow": {mode: {i: text if text.startswith("ridge ") else _short_missing(text)
                                           for i, text in texts.items()} for mode, texts in legend_ridge.items()},
            "has_roof": has_roof,
            "missing": {roof: {p.id: missing.get(roof, {}).get(p.id, "") for p in presets} for roof in ALL_ROOFS},
            "ceil": {p.id: {r["r"]: [r["peak"], r["speak"], r["bw"]] for r in rows if r["p"] == p.id} for p in presets},
            "line_keys": line_keys, "style_names": _style_names(),
            # Per roof shown and roof of a reader's mark: the GPUs that draw both (the mark's roof beside).
            "both_roofs": {shown: {other: [i for i in names if (i, shown) in by_key and (i, other) in by_key]
                                   for other in ALL_ROOFS} for shown in roofs},
        }
        self.rows, self.missing, self.roofs, self.data = rows, missing, roofs, data
        self.extra_rows, self.names, self.params = extra_rows, names, params


def roofline_spec(
    presets: Iterable[Preset],
    *,
    kernels: Iterable[Kernel] = (),
    sparsity: bool = False,
    precision: str = "bf16",
    title: str | None = None,
    theme: Theme = "light",
    readout_intensity_flop_per_byte: float | None = None,
    palette_ids: Iterable[str] | None = None,
    cached: bool = True,
) -> dict[str, Any]:
    """The roofline explorer as a Vega-Lite dict: :data:`GRAMMAR` with these presets' data.

    ``presets`` are drawn in the order given. ``precision`` picks the roof the chart opens
    on (a precision name, ``bf16`` by default, or a roof id such as ``vector:fp32``);
    ``sparsity`` is the toggle's initial state. ``kernels`` become numbered marks where each
    meets its roof (module docstring). ``readout_intensity_flop_per_byte`` sets where the
    readout opens (default: between the presets' ridge points; it is drawn once the reader
    moves it). ``palette_ids`` are the ids of every preset of the site, which the GPUs'
    colours are assigned over (:func:`ainotes.charts.grammar.gpu_colour_slots`; default: these
    presets). ``theme`` is ``"light"`` (Material's default scheme) or ``"dark"`` (its slate
    scheme): only the config differs. ``cached=False`` builds the grammar with altair afresh.
    """
    presets, kernels = tuple(presets), tuple(kernels)
    _check_inputs(presets, kernels, title, theme)
    chart = _ChartData(presets, kernels, sparsity=sparsity, precision=precision,
                       readout_intensity_flop_per_byte=readout_intensity_flop_per_byte, palette_ids=palette_ids)
    rows, missing, roofs, data, params, names = (chart.rows, chart.missing, chart.roofs, chart.data, chart.params,
                                                 chart.names)
    datasets: dict[str, list[dict[str, Any]]] = {"ceilings": rows, "one_row": [{}], "extra_roofs": chart.extra_rows}
    if kernels:
        datasets["kernels"] = data.rows
    spec = GRAMMAR.spec(
        datasets=datasets,
        params=params,
        variant=("kernels",) if kernels else (),
        config=THEME.config(theme),
        top={
            "title": {"text": title if title is not None else DEFAULT_TITLE, "limit": {"expr": "width + 60"}},
            # The chart's accessible name and short text alternative (Vega puts it in the SVG's aria-label).
            "description": ("Roofline chart on log-log axes: attainable FLOP/s against arithmetic intensity for "
                            f"{', '.join(names.values())}."),
            # What the page around the chart needs (charts/explorer.py), passed through to Vega untouched.
            "usermeta": {"ainotes": {
                "still": still_plot_size(STATIC_WIDTH_PX, STATIC_HEIGHT_PX, params),
                "kind": "roofline", "roofs": roofs, "missing": missing,
                "roof_labels": {roof: roof_option_label(roof, presets) for roof in roofs},
                "kernels": kernel_table_rows(kernels, data),
                "dtypes": {d: {"bytes": DTYPE_BYTES[d], "roof": r} for d, r in dtype_roofs().items()},
            }},
        },
        cached=cached,
    )
    _bind_choices(spec, roofs, presets, names, bool(kernels))
    return spec


def _bind_choices(spec: dict[str, Any], roofs: Sequence[str], presets: Sequence[Preset], names: dict[str, str],
                  has_kernels: bool) -> None:
    """The standalone page's own inputs list this chart's roofs and presets."""
    for signal in spec["params"]:
        if signal["name"] == "precision":
            signal["bind"].update(options=roofs, labels=[roof_option_label(r, presets) for r in roofs])
        elif signal["name"] == "preset":
            signal["bind"].update(options=[ALL_PRESETS, *names], labels=["All", *names.values()])
        elif signal["name"] == "kmode" and not has_kernels:
            del signal["bind"]  # nothing to type without kernels


def kernel_table_rows(kernels: Sequence[Kernel], data: KernelData) -> list[dict[str, Any]]:
    """Per kernel: its figures, and per mode key its name and intensity in that mode and why it
    has no roof on a preset (the table's other cells are the ``kernels`` rows' ``tx``)."""
    return [{
        "n": index + 1, "label": kernel.label, "spec": kernel.spec,
        "flops": kernel.flops, "bytes": kernel.bytes_moved, "intensity": kernel.intensity_flop_per_byte,
        "modes": {mode: {"label": typed[index][1], "intensity": typed[index][0].intensity_flop_per_byte,
                         "intensity_text": formats.intensity_text(typed[index][0].intensity_flop_per_byte),
                         "why": data.why.get(mode, {}).get(str(index + 1), {})}
                  for mode, typed in data.modes.items()},
    } for index, kernel in enumerate(kernels)]


def caption_html(presets: Iterable[Preset], sparsity: bool) -> str:
    """A short HTML caption: what the chart assumes, what its dashed lines are, and what the
    sparsity toggle does and does not mean."""
    presets = tuple(presets)
    without_sparse_path = [p.name for p in presets if roofline.ceiling(p, True).peak_flops_per_s
                           == roofline.ceiling(p, False).peak_flops_per_s]
    parts = [
        "Each solid line is one GPU's ceiling at the chosen precision, min(peak, bandwidth × intensity), on "
        "log-log axes. Peak is the dense matrix-unit rate of that precision (tensor cores, MXUs; FP32 "
        "accumulation for FP16 and BF16), or the vector-unit rate for the FP32 and FP64 vector paths; "
        "bandwidth is the peak device-memory figure; the dot where the two lines meet is the ridge point, "
        "peak ÷ bandwidth, given in the legend. A GPU without a path at that precision, or whose preset "
        "does not give one, draws nothing, and its legend entry says which.",
        "Numbered squares are the kernels listed below the chart, each where it meets the roof of its own data "
        "type, or, with \"Kernels re-typed to the precision shown\", the same kernel in that type (its bytes "
        "change with the type). Where a mark's roof is not the one shown and the mark would not lie on a line "
        "drawn, that roof is drawn beside it, thinner and dashed, and the line key names it.",
        "The sparsity box switches to the vendor's 2:4 structured-sparse rate: the flat ceiling doubles and the "
        "ridge moves to twice the intensity, while bandwidth and the sloped line stay as they are; the dense roof "
        "stays behind, dashed. It applies only to weights pruned to that pattern on a path that supports it, "
        "not to any model with many zeros, and a dense kernel still meets the dense roof.",
    ]
    if without_sparse_path:
        listed = ", ".join(html.escape(name) for name in without_sparse_path)
        parts.append(f"No supported sparse path in the preset, so the line does not move: {listed}.")
    if sparsity:
        parts.append("The chart opens with the sparse rate switched on.")
    parts.append(
        "INT8 rates count integer operations (OP/s). A simplification for intuition, not a benchmark: real "
        "kernels, and work off the matrix units, land below the lines."
    )
    return " ".join(parts)


