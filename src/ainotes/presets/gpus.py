"""Reading GPU presets: one YAML file per GPU in ``presets/``, checked and converted into
:class:`ainotes.core.hardware.Preset` values.

The keys and forms (per GPU or system totals, per-precision ``peaks``) are those of
:mod:`ainotes.core.hardware`'s docstring and the JSON Schema shipped with the package
(``ainotes/schema/preset.schema.json``, :func:`preset_schema`). The loader checks each rule itself
first, so that a mistake reads as one line naming the file and the key, the rule and the value,
e.g. ``presets/h100.yaml: 'memory_bandwidth_tbps' must be a finite number > 0: -3.0``; the schema
is then applied as a final structural check. Plausibility rules (:func:`_check_plausible`) stop on
figures no accelerator has. The folder, YAML and id rules are :mod:`ainotes.presets.folder`'s.
"""

from __future__ import annotations

import copy
import json
import logging
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema

from ainotes.base.errors import InputError
from ainotes.base.textcheck import closest, short
from ainotes.core.hardware import GIBI, GIGA, MAX_TORUS_AXES, UNITS, NodeTopology, PeakPath, Preset, Source
from ainotes.core.precision import FILE_PRECISIONS, FP16_PRECISIONS, rate_unit
from ainotes.presets import folder, models
from ainotes.presets.folder import (
    PRESET_SUFFIXES,
    PRESETS_DIR_ENV,
    check_figure,
    check_file_name,
    check_sources,
    check_text,
    default_presets_dir,
    folder_files,
    kind,
    load_folder,
    parse_yaml,
    sources_of,
)

__all__ = ["PRESETS_DIR_ENV", "PRESET_SUFFIXES", "PresetCheck", "default_presets_dir", "load_preset",
           "load_presets", "preset_files", "preset_schema", "validate_paths"]

PRESET_ID_PATTERN = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
MAX_GPU_COUNT = 1_000_000

PER_GPU_KEYS = ("dense_fp16_tflops", "memory_bandwidth_tbps")
SYSTEM_KEYS = ("gpu_count", "system_dense_fp16_tflops", "system_memory_bandwidth_tbps")
# Device-memory capacity (optional): per chip in GB (10^9 bytes, as NVIDIA and AMD print it) or GiB
# (2^30 bytes, as Google prints TPU memory), or a system total in GB divided by gpu_count. One at most.
CAPACITY_KEYS = ("memory_capacity_gb", "memory_capacity_gib", "system_memory_capacity_gb")
NO_PATH_WORDS = ("none",)
# Vendor tables round printed sparse figures (H100 FP16: "1,979" for 2 × 989.4), so
# "sparse = 2 × dense" is checked to 0.1 %; a sparse figure typed as dense is off by 2×.
SPARSE_RATIO_TOLERANCE = 1e-3
PEAK_ENTRY_KEYS = ("dense_tflops", "sparse_tflops", "structured_sparsity", "source", "note", "confirmed_dense")
# Plausibility: figures no accelerator has. A preset outside these holds a slip (GB/s typed as TB/s, a
# sparse figure typed as dense) far more often than a new kind of chip, so loading stops with one line
# naming the likely slip. Per chip: LPDDR edge parts move about 0.05-0.2 TB/s, HBM3e about 8; the densest
# printed per-chip rate is a few PFLOP/s (B200 FP4: 9 PFLOP/s dense); FP16/BF16 ridges lie between
# tens and a few hundred FLOP/byte.
PLAUSIBLE_BANDWIDTH_TBPS = (0.05, 100.0)
MAX_PLAUSIBLE_DENSE_TFLOPS = 100_000.0  # 100 PFLOP/s
PLAUSIBLE_RIDGE_FLOP_PER_BYTE = (1.0, 10_000.0)  # the dense FP16/BF16 tensor ridge
# Device memory per chip: from the few GB of an edge part to past the 288 GB of HBM3e parts (B300) and the
# terabyte HBM4 roadmaps promise.
PLAUSIBLE_CAPACITY_GB = (1.0, 2000.0)
# A dense rate twice what its neighbouring precisions predict, with no sparse figure beside it, is most
# likely the vendor's 2:4 sparse figure; within 3 % of twice (vendors round their tables).
SPARSE_LOOK_TOLERANCE = 0.03
CONFIRMED_DENSE_KEY = "confirmed_dense"  # a tensor entry's (or the file's) "this dense rate really is that high"
# The vendor's "with sparsity" column typed as dense doubles the FP16/BF16 ridge, whichever the chip. Of the
# parts with 2:4 sparsity, the highest dense ridge known here is the L40S's: 362.05 TFLOP/s BF16 over
# 0.864 TB/s, 419 FLOP/byte (NVIDIA L40S datasheet); H100 SXM's is 295, B200's 281, MI300X's 247, RTX 4090's 164
# (FACTS, the presets), and their sparse figures typed as dense put them at 591, 562, 493 and 328. Past this
# ridge a part with 2:4 sparsity is taken to give its sparse figure; below it, only another preset's sparse
# figure gives a copy away (:func:`sparse_copies`). An edge part on LPDDR memory can truly sit higher, and its
# file says so with a top-level ``confirmed_dense: true``.
SPARSE_RIDGE_FLOP_PER_BYTE = 450.0
_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PresetCheck:
    """The outcome of validating one path: a preset, or the one-line error."""

    path: str
    preset: Preset | None
    error: str | None

    @property
    def ok(self) -> bool:
        return self.error is None


@cache
def _schema() -> dict[str, Any]:
    text = resources.files("ainotes").joinpath("schema/preset.schema.json").read_text(encoding="utf-8")
    return json.loads(text)


def preset_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of a preset file, as a fresh dict."""
    return copy.deepcopy(_schema())


def load_presets(directory: str | Path | None = None) -> tuple[Preset, ...]:
    """Load every ``*.yaml`` / ``*.yml`` preset in ``directory``.

    ``None`` means :func:`default_presets_dir`. The result is ordered by dense
    rate, highest first, then by id. Raises :class:`InputError` for the first
    problem found: a missing or empty folder, a bad file, or two files with the
    same id (``h100.yaml`` and ``h100.yml``).
    """
    folder = Path(directory) if directory is not None else default_presets_dir()
    presets = load_folder(folder, lambda path: _say_warnings(load_preset(path)), what="preset",
                          id_of=_preset_id, file_of=_preset_file)
    for _, message in sparse_copies(presets):
        raise InputError(message)
    return tuple(sorted(presets, key=lambda p: (-p.dense_fp16_tflops, p.id)))


def _preset_id(preset: Preset) -> str:
    return preset.id


def _preset_file(preset: Preset) -> str:
    return preset.file


def preset_files(directory: str | Path) -> tuple[Path, ...]:
    """The preset files in ``directory`` (not recursive), sorted by name."""
    return folder_files(directory, "preset")


def load_preset(path: str | Path) -> Preset:
    """Read, check and convert one preset file; the id is the file's stem."""
    path = Path(path)
    where = str(path)
    preset_id = check_file_name(path, "preset", PRESET_ID_PATTERN,
                                "lowercase letters and digits, words joined by single hyphens")
    data = parse_yaml(path, where)
    try:
        _check_document(data, where)
        warnings = tuple(folder.at_key_line(w, where, path) for w in _check_plausible(data, where))
        return _build_preset(data, preset_id, where, warnings)
    except InputError as exc:  # at the line of the key it names
        raise InputError(folder.at_key_line(str(exc), where, path)) from None


def _say_warnings(preset: Preset) -> Preset:
    """Log the preset's plausibility warnings (a confirmed unusual figure): loading a presets folder or
    validating files says them once per file; a single file loaded on its own (a page's example) does not."""
    for warning in preset.warnings:
        _log.warning(warning)
    return preset


def validate_paths(paths: Iterable[str | Path]) -> tuple[PresetCheck, ...]:
    """Check preset files and folders without stopping at the first error
    (:func:`ainotes.presets.folder.validate_paths`): one :class:`PresetCheck` per file, or per folder
    without preset files; a preset id seen in an earlier file makes the later file an error."""
    found = folder.validate_paths(paths, lambda path: _say_warnings(load_preset(path)), what="preset",
                                  id_of=_preset_id)
    copies = dict(sparse_copies([check.item for check in found if check.item is not None]))
    return tuple(PresetCheck(check.path, None, copies[check.path]) if check.path in copies else
                 PresetCheck(check.path, check.item, check.error) for check in found)


def sparse_copies(presets: Iterable[Preset]) -> list[tuple[str, str]]:
    """(file, one line) for each preset whose dense tensor rate is another preset's 2:4 sparse figure at
    the same precision, with no sparse figure of its own beside it: the vendor's "with sparsity" column
    copied as dense (an H200 at 1,979 TFLOP/s FP16 beside the H100's 1,978.9 with sparsity). Only parts that
    have 2:4 sparsity are asked; a part whose dense rate truly is that high gives its own ``sparse_tflops``.
    """
    presets = list(presets)
    sparse_figures: dict[str, list[tuple[float, Preset]]] = {}
    for preset in presets:
        for precision in FILE_PRECISIONS["tensor"]:
            path = preset.path(precision)
            if path is not None and path.dense_tflops is not None and path.sparse_supported:
                sparse = path.printed_sparse_tflops or 2 * path.dense_tflops
                sparse_figures.setdefault(precision, []).append((sparse, preset))
    found: list[tuple[str, str]] = []
    for preset in presets:
        for precision in FILE_PRECISIONS["tensor"]:
            path = preset.path(precision)
            if path is None or path.dense_tflops is None or not path.sparse_supported or path.printed_sparse_tflops:
                continue
            dense = path.dense_tflops
            other = next((pair for pair in sparse_figures.get(precision, ())
                          if pair[1].id != preset.id and abs(pair[0] - dense) <= SPARSE_RATIO_TOLERANCE * dense), None)
            if other is not None:
                key = "dense_fp16_tflops" if precision in FP16_PRECISIONS else f"peaks.tensor.{precision}"
                said = (f"{preset.file}: {short(key)} {dense:g} is {other[1].file}'s "
                        f"{precision.upper()} rate with 2:4 sparsity ({other[0]:g}): the 'with sparsity' "
                        f"column copied as dense? Give the dense rate ({dense / 2:g} if so), with the "
                        f"sparse figure beside it as peaks.tensor.{precision}.sparse_tflops")
                found.append((preset.file, folder.at_key_line(said, preset.file, Path(preset.file))))
                break
    return found


# --- checking ----------------------------------------------------------------


def _check_document(data: Any, where: str) -> None:
    if data is None:
        raise InputError(f"{where}: the file is empty; expected a mapping with 'name', the figures and 'sources'")
    if not isinstance(data, dict):
        raise InputError(f"{where}: must be a mapping of keys to values, not {kind(data)}")
    schema = _schema()
    properties: dict[str, Any] = schema["properties"]
    stray = [key for key in data if key not in properties]
    model_keys = [key for key in stray if key in models.REQUIRED_KEYS]
    if len(model_keys) >= 2:  # a model file where the GPU presets are: say where the build reads it
        home = Path(where).parent / models.MODELS_SUBDIR
        raise InputError(f"{where}: a model file ({short(model_keys[0])}, {short(model_keys[1])}), not a GPU "
                         f"preset: the build reads model files from a {models.MODELS_SUBDIR}/ folder beside the GPU "
                         f"presets; move it to {home}/")
    for key in data:
        if key not in properties:
            allowed = ", ".join(properties)
            near = closest(key, properties)
            hint = f" (did you mean {near!r}?)" if near is not None else ""
            raise InputError(f"{where}: unknown key {short(key)}{hint}; allowed keys: {allowed}")

    _check_form(where, data, schema["required"])

    for key, rule in properties.items():
        if key in data:
            _check_value(where, key, rule["type"], data[key])
    for key in ("peaks", "system_peaks"):
        if key in data:
            _check_peaks(where, key, data)

    # Backstop: the shipped schema is the structural description; anything the
    # checks above let through is still refused, with the schema's words.
    validator = jsonschema.Draft202012Validator(schema)
    error = jsonschema.exceptions.best_match(validator.iter_errors(data))
    if error is not None:
        at = ".".join(str(part) for part in error.absolute_path) or "file"
        raise InputError(f"{where}: {short(at)} {error.message}")


def _check_form(where: str, data: dict[str, Any], always_required: list[str]) -> None:
    """Per-GPU figures or system totals, not both; then every key the chosen form requires."""
    system_form = any(key in data for key in (*SYSTEM_KEYS, "system", "system_peaks", "system_memory_capacity_gb"))
    capacities = [key for key in CAPACITY_KEYS if key in data]
    if len(capacities) > 1:
        raise InputError(f"{where}: {short(capacities[1])} cannot be combined with {short(capacities[0])}; "
                         "give the memory capacity once")
    if system_form:
        clashing = [key for key in (*PER_GPU_KEYS, "peaks", "memory_capacity_gb", "memory_capacity_gib")
                    if key in data]
        if clashing:
            raise InputError(
                f"{where}: {short(clashing[0])} cannot be combined with system totals "
                f"({', '.join(SYSTEM_KEYS)}); give per-GPU figures or system totals, not both"
            )
    for key in [*always_required, *(SYSTEM_KEYS if system_form else PER_GPU_KEYS)]:
        if key not in data:
            raise InputError(f"{where}: missing required key {short(key)}")


def _check_value(where: str, key: str, rule_type: str, value: Any) -> None:
    """One top-level value against its schema type (peaks are checked on their own)."""
    if rule_type == "string":
        check_text(where, key, value, one_line=key != "notes")
    elif rule_type == "number":
        check_figure(where, key, value)
    elif rule_type == "integer":
        _check_count(where, key, value)
    elif rule_type == "boolean" and not isinstance(value, bool):
        raise InputError(f"{where}: {short(key)} must be true or false: {short(value)}")
    elif key == "sources":
        check_sources(where, value)
    elif key == "unit_names":
        _check_unit_names(where, value)
    elif key == "node":
        _check_node(where, value)


NODE_KEYS = ("chips", "link", "inter_node_link", "torus_axes")
NODE_EXAMPLE = "{chips: 8, link: nvlink-4, inter_node_link: ib-ndr}"


def _check_node(where: str, value: Any) -> None:
    """``node``: chips per node (a whole number), the link preset ids inside and between nodes, and
    optionally the torus axes of a torus interconnect; each mistake names ``node.<key>``."""
    if not isinstance(value, dict):
        raise InputError(f"{where}: 'node' must be a mapping such as {NODE_EXAMPLE}, not {kind(value)}")
    for key in value:
        if key not in NODE_KEYS:
            raise InputError(f"{where}: unknown key {short(f'node.{key}')}{_near(key, NODE_KEYS)}; allowed keys: "
                             f"{', '.join(NODE_KEYS)}")
    for key in NODE_KEYS[:3]:
        if key not in value:
            raise InputError(f"{where}: missing required key {short(f'node.{key}')} (a node is {NODE_EXAMPLE})")
    _check_count(where, "node.chips", value["chips"])
    for key in ("link", "inter_node_link"):
        link_id = value[key]
        if not isinstance(link_id, str) or not PRESET_ID_PATTERN.match(link_id):
            raise InputError(f"{where}: {short(f'node.{key}')} must be a link preset id (a file in "
                             f"presets/links/) such as nvlink-4: {short(link_id)}")
    if "torus_axes" in value:
        _check_count(where, "node.torus_axes", value["torus_axes"])
        if value["torus_axes"] > MAX_TORUS_AXES:
            raise InputError(f"{where}: 'node.torus_axes' must be 1 to {MAX_TORUS_AXES}: {short(value['torus_axes'])}")


def _node(data: dict[str, Any]) -> NodeTopology | None:
    node = data.get("node")
    if node is None:
        return None
    return NodeTopology(chips=node["chips"], link_id=node["link"], inter_node_link_id=node["inter_node_link"],
                        torus_axes=node.get("torus_axes"))


def _check_unit_names(where: str, value: Any) -> None:
    if not isinstance(value, dict):
        raise InputError(f"{where}: 'unit_names' must be a mapping such as "
                         f"{{tensor: tensor cores, vector: CUDA cores}}, not {kind(value)}")
    for unit, name in value.items():
        if unit not in UNITS:
            raise InputError(f"{where}: unknown unit {short(unit)} in 'unit_names'{_near(unit, UNITS)}; known units: "
                             f"{', '.join(UNITS)}")
        check_text(where, f"unit_names.{unit}", name)


def _check_count(where: str, key: str, value: Any) -> None:
    if isinstance(value, float):
        raise InputError(f"{where}: {short(key)} must be a whole number: {short(value)}")
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError(f"{where}: {short(key)} must be a whole number, not {kind(value)}: {short(value)}")
    if value < 1:
        raise InputError(f"{where}: {short(key)} must be >= 1: {short(value)}")
    if value > MAX_GPU_COUNT:
        raise InputError(f"{where}: {short(key)} must be at most {MAX_GPU_COUNT}: {short(value)}")


def _near(name: Any, choices: Iterable[str]) -> str:
    """`` (did you mean 'tf32'?)`` for a misspelt key, unit or precision; ``""`` where none is close."""
    near = closest(str(name), tuple(choices))
    return f" (did you mean {near!r}?)" if near is not None else ""


def _is_no_path(value: Any) -> bool:
    return value is None or (isinstance(value, str) and value.strip().lower() in NO_PATH_WORDS)


def _check_peaks(where: str, key: str, data: dict[str, Any]) -> None:
    """Per-precision peaks: units, precisions, each entry's figures, and sparse = 2 × dense."""
    value = data[key]
    if not isinstance(value, dict):
        raise InputError(f"{where}: {short(key)} must be a mapping of units ({', '.join(UNITS)}) "
                         f"to precisions, not {kind(value)}: {short(value)}")
    for unit, entries in value.items():
        if unit not in UNITS:
            raise InputError(f"{where}: unknown unit {short(f'{key}.{unit}')}{_near(unit, UNITS)}; units: "
                             f"{', '.join(UNITS)}")
        if not isinstance(entries, dict):
            raise InputError(f"{where}: {short(f'{key}.{unit}')} must be a mapping of precisions to rates, "
                             f"not {kind(entries)}: {short(entries)}")
        for precision, entry in entries.items():
            at = f"{key}.{unit}.{precision}"
            if precision not in FILE_PRECISIONS[unit]:
                other = next(u for u in UNITS if u != unit)
                hint = (f" ({other} units have it: write it under {key}.{other})"
                        if precision in FILE_PRECISIONS[other] else _near(precision, FILE_PRECISIONS[unit]))
                raise InputError(f"{where}: unknown precision {short(at)}{hint}; "
                                 f"{unit} precisions: {', '.join(FILE_PRECISIONS[unit])}")
            _check_peak_entry(where, at, unit, precision, entry, data)


def _peak_fields(where: str, at: str, entry: Any) -> dict[str, Any]:
    """An entry's fields as a mapping: a bare number is ``{dense_tflops: number}``."""
    if isinstance(entry, dict):
        for name in entry:
            if name not in PEAK_ENTRY_KEYS:
                raise InputError(f"{where}: unknown key {short(f'{at}.{name}')}{_near(name, PEAK_ENTRY_KEYS)}; "
                                 f"allowed keys: {', '.join(PEAK_ENTRY_KEYS)}")
        if "dense_tflops" not in entry:
            raise InputError(f"{where}: missing required key {short(f'{at}.dense_tflops')} (write {short(at)}: none "
                             "where the GPU has no such path)")
        check_figure(where, f"{at}.dense_tflops", entry["dense_tflops"])
        return entry
    if isinstance(entry, (int, float)) and not isinstance(entry, bool):
        check_figure(where, at, entry)
        return {"dense_tflops": entry}
    raise InputError(f"{where}: {short(at)} must be a number (dense TFLOP/s), none (no such path) or a mapping "
                     f"with 'dense_tflops', not {kind(entry)}: {short(entry)}")


def _check_peak_entry(where: str, at: str, unit: str, precision: str, entry: Any, data: dict[str, Any]) -> None:
    fp16_key = "system_dense_fp16_tflops" if at.startswith("system_") else "dense_fp16_tflops"
    is_fp16 = unit == "tensor" and precision in FP16_PRECISIONS
    if _is_no_path(entry):
        if is_fp16:
            raise InputError(f"{where}: {short(at)} cannot be none: the FP16/BF16 tensor rate is {short(fp16_key)}")
        return
    fields = _peak_fields(where, at, entry)
    _check_sparse_fields(where, at, unit, fields)
    if "source" in fields:
        index = fields["source"]
        count = len(data["sources"])
        if isinstance(index, bool) or not isinstance(index, int) or not 1 <= index <= count:
            raise InputError(f"{where}: {short(f'{at}.source')} must be a source number from 1 to {count} "
                             f"(its place in 'sources'): {short(index)}")
    if "note" in fields:
        check_text(where, f"{at}.note", fields["note"])
    if is_fp16:
        _check_fp16_entry(where, at, fp16_key, fields, data)


def _check_sparse_fields(where: str, at: str, unit: str, fields: dict[str, Any]) -> None:
    """Sparsity only on tensor rates; a printed sparse figure must be 2 × dense (to rounding)."""
    supported = fields.get("structured_sparsity")
    confirmed = fields.get(CONFIRMED_DENSE_KEY)
    if confirmed is not None and (unit != "tensor" or not isinstance(confirmed, bool)):
        raise InputError(f"{where}: {short(f'{at}.{CONFIRMED_DENSE_KEY}')} must be true or false, on a tensor "
                         f"rate (vector rates are not compared with their neighbours): {short(confirmed)}")
    if unit == "vector" and ("sparse_tflops" in fields or "structured_sparsity" in fields):
        raise InputError(f"{where}: {short(at)}: vector (CUDA-core) rates have no 2:4 sparse path; "
                         "remove 'sparse_tflops' and 'structured_sparsity'")
    if supported is not None and not isinstance(supported, bool):
        raise InputError(f"{where}: {short(f'{at}.structured_sparsity')} must be true or false: {short(supported)}")
    if "sparse_tflops" not in fields:
        return
    sparse, dense = fields["sparse_tflops"], float(fields["dense_tflops"])
    check_figure(where, f"{at}.sparse_tflops", sparse)
    if supported is False:
        raise InputError(f"{where}: {short(at)} gives 'sparse_tflops' but says structured_sparsity: false")
    if abs(float(sparse) - 2.0 * dense) > SPARSE_RATIO_TOLERANCE * 2.0 * dense:
        raise InputError(
            f"{where}: {short(f'{at}.sparse_tflops')} must be 2 × {short(f'{at}.dense_tflops')} "
            f"(2:4 sparsity doubles the dense rate): sparse {float(sparse):g}, dense {dense:g}; "
            "is a sparse figure typed as dense, or a dense one as sparse?"
        )


def _check_fp16_entry(where: str, at: str, fp16_key: str, fields: dict[str, Any], data: dict[str, Any]) -> None:
    """fp16/bf16 entries restate the required FP16/BF16 rate: they must agree with it."""
    dense, reference = float(fields["dense_tflops"]), float(data[fp16_key])
    if dense != reference:
        _check_thousandfold(where, at, fp16_key, dense, reference)
        raise InputError(f"{where}: {short(at)} must equal {short(fp16_key)} ({reference:g}), "
                         f"the FP16/BF16 tensor rate: {dense:g}")
    top = data.get("structured_sparsity", False)
    implied = fields.get("structured_sparsity", True if "sparse_tflops" in fields else top)
    if implied != top:
        raise InputError(f"{where}: {short(at)} says 2:4 sparsity is {'' if implied else 'not '}supported "
                         f"but 'structured_sparsity' is {str(top).lower()}; the FP16/BF16 rate follows "
                         "'structured_sparsity'")


def _check_thousandfold(where: str, at: str, fp16_key: str, dense: float, reference: float) -> None:
    """Two statements of the FP16/BF16 rate 1,000 × apart: the one in ``fp16_key`` is in PFLOP/s or
    GFLOP/s, the unit hint a file without ``peaks`` gets, rather than "must equal" the wrong figure."""
    for factor, unit in ((1000.0, "PFLOP/s"), (0.001, "GFLOP/s")):
        if abs(reference * factor - dense) <= SPARSE_RATIO_TOLERANCE * dense:
            raise InputError(f"{where}: {short(fp16_key)} {reference:g} is {short(at)} {dense:g} "
                             f"{'÷' if factor > 1 else '×'} 1,000: {unit} typed as TFLOP/s? ({reference:g} {unit} = "
                             f"{reference * factor:g} TFLOP/s)")


# --- plausibility ------------------------------------------------------------

_SCALES = {"TB/s": ("GB/s", "PB/s"), "TFLOP/s": ("GFLOP/s", "PFLOP/s"), "TOPS": ("GOPS", "POPS")}


def _scale_slip(value: float, low: float, high: float, unit: str) -> str:
    """The likely slip behind a figure outside ``[low, high]``: a factor of 1,000 in its unit."""
    smaller, larger = _SCALES[unit]
    if value > high and low <= value / 1000 <= high:
        return f"{smaller} typed as {unit}? ({value:g} {smaller} = {value / 1000:g} {unit})"
    if value < low <= value * 1000 <= high:
        return f"{larger} typed as {unit}? ({value:g} {larger} = {value * 1000:g} {unit})"
    return f"check the figure and its unit ({unit})"


def _check_plausible(data: dict[str, Any], where: str) -> tuple[str, ...]:
    """Stop on figures no accelerator has; return the warnings for ones the file confirms.

    Per chip (system totals ÷ ``gpu_count``): memory bandwidth within :data:`PLAUSIBLE_BANDWIDTH_TBPS`,
    every dense peak at most :data:`MAX_PLAUSIBLE_DENSE_TFLOPS`, the dense FP16/BF16 ridge within
    :data:`PLAUSIBLE_RIDGE_FLOP_PER_BYTE`; and no tensor rate that looks like its precision's sparse
    figure (:func:`_sparse_look`). Each stop is one line naming the key, the value and the likely slip.
    """
    system_form = "gpu_count" in data
    gpus: int = data.get("gpu_count", 1)
    _check_capacity(data, where, gpus)
    _check_nvidia_fp32_matrix(data, where)
    per_chip = " per chip" + (f" ({data['gpu_count']} GPUs share the total: is 'gpu_count' right?)"
                              if system_form else "")
    prefix = "system_" if system_form else ""
    bandwidth_key, fp16_key = f"{prefix}memory_bandwidth_tbps", f"{prefix}dense_fp16_tflops"
    bandwidth, fp16 = float(data[bandwidth_key]) / gpus, float(data[fp16_key]) / gpus
    low, high = PLAUSIBLE_BANDWIDTH_TBPS
    if not low <= bandwidth <= high:
        raise InputError(f"{where}: {short(bandwidth_key)} {float(data[bandwidth_key]):g} is outside {low:g}-{high:g} "
                         f"TB/s{per_chip}, where every accelerator's memory lies: "
                         f"{_scale_slip(bandwidth, low, high, 'TB/s')}")
    peaks_key = f"{prefix}peaks"
    rates: list[tuple[str, float, str]] = [(fp16_key, fp16, "TFLOP/s")]
    for unit, entries in data.get(peaks_key, {}).items():
        for precision, entry in entries.items():
            if not _is_no_path(entry):
                at = f"{peaks_key}.{unit}.{precision}" + (".dense_tflops" if isinstance(entry, dict) else "")
                dense = float(entry["dense_tflops"] if isinstance(entry, dict) else entry)
                rates.append((at, dense / gpus, rate_unit(precision)))
    for at, rate, unit_name in rates:
        if rate > MAX_PLAUSIBLE_DENSE_TFLOPS:
            raise InputError(f"{where}: {short(at)} {rate * gpus:g} is above {MAX_PLAUSIBLE_DENSE_TFLOPS:,.0f} "
                             f"{unit_name}{per_chip}, more than any chip's dense rate: "
                             f"{_scale_slip(rate, 0.0, MAX_PLAUSIBLE_DENSE_TFLOPS, unit_name)}")
    ridge = fp16 / bandwidth  # TFLOP/s ÷ TB/s = FLOP/byte
    low, high = PLAUSIBLE_RIDGE_FLOP_PER_BYTE
    if not low <= ridge <= high:
        slip = (f"is {short(fp16_key)} in PFLOP/s ({float(data[fp16_key]):g} PFLOP/s = "
                f"{float(data[fp16_key]) * 1000:g} TFLOP/s)?" if ridge < low else
                f"is {short(fp16_key)} in GFLOP/s ({float(data[fp16_key]):g} GFLOP/s = "
                f"{float(data[fp16_key]) / 1000:g} TFLOP/s)?")
        raise InputError(f"{where}: {short(fp16_key)} {float(data[fp16_key]):g} over {short(bandwidth_key)} "
                         f"{float(data[bandwidth_key]):g} puts the FP16/BF16 ridge at {ridge:.3g} FLOP/byte, "
                         f"{'below' if ridge < low else 'above'} {low if ridge < low else high:,g}, "
                         f"where no accelerator's lies: {slip}")
    return (*_sparse_ridge(data, where, (fp16_key, bandwidth_key, peaks_key), ridge),
            *_sparse_look(data, where, peaks_key, fp16_key))


def _sparse_ridge(data: dict[str, Any], where: str, keys: tuple[str, str, str], ridge: float) -> tuple[str, ...]:
    """A part with 2:4 sparsity whose dense FP16/BF16 ridge lies past :data:`SPARSE_RIDGE_FLOP_PER_BYTE` most
    likely gives its "with sparsity" figure as dense (peaks copied from the same column keep their ratios, so
    :func:`_sparse_look` cannot see it): stop, naming the half, unless the file says ``confirmed_dense: true``."""
    fp16_key, bandwidth_key, peaks_key = keys
    tensor = data.get(peaks_key, {}).get("tensor", {})
    entries = [tensor.get(precision) for precision in ("fp16", "bf16")]
    sparse = data.get("structured_sparsity") is True or any(
        isinstance(entry, dict) and ("sparse_tflops" in entry or entry.get("structured_sparsity") is True)
        for entry in entries)
    if not sparse or ridge <= SPARSE_RIDGE_FLOP_PER_BYTE:
        return ()
    stated = float(data[fp16_key])
    said = (f"{short(fp16_key)} {stated:g} over {short(bandwidth_key)} {float(data[bandwidth_key]):g} puts the "
            f"FP16/BF16 ridge at {ridge:.0f} FLOP/byte, past the {SPARSE_RIDGE_FLOP_PER_BYTE:g} of any part with "
            "2:4 sparsity")
    if data.get(CONFIRMED_DENSE_KEY) is True:
        return (f"{where}: {said}; kept, since the file says {CONFIRMED_DENSE_KEY}: true",)
    column = f" (and halve each {peaks_key}.tensor rate taken from the same column)" if tensor else ""
    raise InputError(f"{where}: {said}: it looks like the 'with sparsity' figure; the dense one is half: write "
                     f"{stated / 2:g}{column}, or {CONFIRMED_DENSE_KEY}: true if the part really runs this fast dense")


def _check_capacity(data: dict[str, Any], where: str, gpus: int) -> None:
    """Device memory per chip within :data:`PLAUSIBLE_CAPACITY_GB`, or one line naming the unit slip
    (141,000 is MB typed as GB; 0.141 TB typed as GB)."""
    key = next((key for key in CAPACITY_KEYS if key in data), None)
    if key is None:
        return
    unit = "GiB" if key.endswith("_gib") else "GB"
    stated = float(data[key])
    per_chip = stated / (gpus if key.startswith("system_") else 1)
    low, high = PLAUSIBLE_CAPACITY_GB
    if low <= per_chip <= high:
        return
    hint = (f"MB typed as {unit}? ({stated:g} MB = {stated / 1000:g} GB)" if per_chip > high
            else f"TB typed as {unit}? ({stated:g} TB = {stated * 1000:g} GB)")
    raise InputError(f"{where}: {short(key)} {stated:g} is outside {low:g}-{high:,g} {unit} per chip, where every "
                     f"accelerator's device memory lies: {hint}")


def _check_nvidia_fp32_matrix(data: dict[str, Any], where: str) -> None:
    """NVIDIA's tensor cores have no FP32 matrix path: their FP32 matrix work is TF32, so a tensor
    ``fp32`` rate on an NVIDIA part (by its name, or its matrix units named tensor cores) is a slip for
    ``tf32`` or for the CUDA cores' ``vector`` ``fp32``."""
    for peaks_key in ("peaks", "system_peaks"):
        entry = data.get(peaks_key, {}).get("tensor", {}).get("fp32")
        if entry is None or _is_no_path(entry):
            continue
        names = f"{data.get('name', '')} {data.get('system', '')} {data.get('unit_names', {}).get('tensor', '')}"
        if "nvidia" in names.lower() or "tensor core" in names.lower():
            raise InputError(f"{where}: {short(f'{peaks_key}.tensor.fp32')}: NVIDIA's tensor cores have no FP32 "
                             f"matrix path (their FP32 matrix work is TF32): write the rate as "
                             f"{peaks_key}.tensor.tf32, or as {peaks_key}.vector.fp32 if it is the CUDA cores' FP32")


def _predicted_dense(precision: str, fp16: float, tensor: Mapping[str, float]) -> tuple[float, str] | None:
    """What the neighbouring precisions predict for a dense tensor rate, and the reasoning: each halving
    of operand width doubles the matrix rate (TF32 half of FP16, FP8 twice FP16, FP4 twice FP8, INT8
    as FP8), as every vendor table so far prints. ``None`` for precisions without a neighbour rule."""
    if precision == "tf32":
        return fp16 / 2, "half the FP16/BF16 rate"
    if precision == "fp8":
        return fp16 * 2, "twice the FP16/BF16 rate"
    if precision == "fp4":
        return (tensor["fp8"] * 2, "twice the FP8 rate") if "fp8" in tensor else (fp16 * 4, "4 × the FP16/BF16 rate")
    if precision == "int8":
        return (tensor["fp8"], "the FP8 rate") if "fp8" in tensor else (fp16 * 2, "twice the FP16/BF16 rate")
    return None


def _sparse_look(data: dict[str, Any], where: str, peaks_key: str, fp16_key: str) -> tuple[str, ...]:
    """A tensor rate twice what its neighbours predict, with no ``sparse_tflops`` beside it, is most
    likely the vendor's 2:4 figure typed as dense: stop, unless the entry says ``confirmed_dense: true``,
    in which case the rate stands and the returned warning says it is unusual."""
    fp16 = float(data[fp16_key])
    entries = data.get(peaks_key, {}).get("tensor", {})
    tensor = {precision: float(entry["dense_tflops"] if isinstance(entry, dict) else entry)
              for precision, entry in entries.items() if not _is_no_path(entry)}
    warnings = []
    for precision, dense in tensor.items():
        entry = entries[precision]
        fields = entry if isinstance(entry, dict) else {}
        predicted = _predicted_dense(precision, fp16, tensor)
        if predicted is None or "sparse_tflops" in fields:
            continue
        expected, reason = predicted
        if abs(dense / expected - 2.0) > 2.0 * SPARSE_LOOK_TOLERANCE:
            continue
        at = f"{peaks_key}.tensor.{precision}"
        said = (f"{short(at)} {dense:g} is twice what its neighbours predict ({expected:g}, {reason}), "
                "as a 2:4 sparse figure is")
        if fields.get(CONFIRMED_DENSE_KEY) is True:
            warnings.append(f"{where}: {said}; kept, since the file says {CONFIRMED_DENSE_KEY}: true")
            continue
        raise InputError(f"{where}: {said}: the sparse figure typed as dense? Give the dense rate (with "
                         f"sparse_tflops beside it), or write {CONFIRMED_DENSE_KEY}: true where the part "
                         "really runs this fast dense")
    return tuple(warnings)


# --- building ----------------------------------------------------------------


def _format_tflops(tflops: float) -> str:
    return f"{tflops / 1000:g} PFLOP/s" if tflops >= 1000 else f"{tflops:g} TFLOP/s"


def _build_peaks(data: dict[str, Any], sources: tuple[Source, ...]) -> tuple[PeakPath, ...]:
    """PeakPath objects from ``peaks`` (per GPU) or ``system_peaks`` (÷ ``gpu_count``)."""
    gpus: int = data.get("gpu_count", 1)
    system_form = "system_peaks" in data
    given = data.get("system_peaks" if system_form else "peaks", {})
    system = data.get("system")
    paths = []
    for unit in UNITS:
        for precision in FILE_PRECISIONS[unit]:
            if precision not in given.get(unit, {}):
                continue
            entry = given[unit][precision]
            if _is_no_path(entry):
                paths.append(PeakPath(unit, precision, None))
                continue
            fields = entry if isinstance(entry, dict) else {"dense_tflops": entry}
            total = float(fields["dense_tflops"])
            printed = fields.get("sparse_tflops")
            supported = fields.get(
                "structured_sparsity",
                "sparse_tflops" in fields or (unit == "tensor" and data.get("structured_sparsity", False)),
            )
            derivation = None
            if system_form:
                derivation = f"{_totals_label(system, gpus)}: {_format_tflops(total)} → {_format_tflops(total / gpus)}"
            source = fields.get("source")
            paths.append(PeakPath(
                unit=unit,
                precision=precision,
                dense_tflops=total / gpus,  # per GPU = system total ÷ GPU count (1 for per-GPU files)
                sparse_supported=bool(unit == "tensor" and supported),
                printed_sparse_tflops=float(printed) / gpus if printed is not None else None,
                source=sources[source - 1] if source is not None else None,
                note=fields.get("note"),
                derivation=derivation,
            ))
    return tuple(paths)


def _totals_label(system: str | None, gpus: int) -> str:
    return f"{system + ' totals' if system else 'System totals'} ÷ {gpus} GPU{'' if gpus == 1 else 's'}"


def _build_preset(data: dict[str, Any], preset_id: str, where: str, warnings: tuple[str, ...] = ()) -> Preset:
    sources = sources_of(data)
    system_form = "gpu_count" in data
    gpus: int = data.get("gpu_count", 1)
    system = data.get("system")
    derivation = None
    if system_form:
        # Per-GPU figure = system total ÷ GPU count (vendor boards share work evenly).
        dense_tflops = float(data["system_dense_fp16_tflops"]) / gpus
        bandwidth_tbps = float(data["system_memory_bandwidth_tbps"]) / gpus
        derivation = (
            f"{_totals_label(system, gpus)}: "
            f"{_format_tflops(data['system_dense_fp16_tflops'])} → {_format_tflops(dense_tflops)}; "
            f"{float(data['system_memory_bandwidth_tbps']):g} TB/s → {bandwidth_tbps:g} TB/s"
        )
        if "system_memory_capacity_gb" in data:
            total_gb = float(data["system_memory_capacity_gb"])
            derivation += f"; {total_gb:g} GB → {total_gb / gpus:g} GB"
    else:
        dense_tflops = float(data["dense_fp16_tflops"])
        bandwidth_tbps = float(data["memory_bandwidth_tbps"])
    return Preset(
        id=preset_id,
        name=data["name"].strip(),
        dense_fp16_tflops=dense_tflops,
        memory_bandwidth_tbps=bandwidth_tbps,
        structured_sparsity=data.get("structured_sparsity", False),
        sources=sources,
        file=where,
        derivation=derivation,
        variant=data.get("variant"),
        notes=data.get("notes"),
        system=system,
        gpu_count=gpus if system_form else None,
        system_dense_fp16_tflops=float(data["system_dense_fp16_tflops"]) if system_form else None,
        system_memory_bandwidth_tbps=float(data["system_memory_bandwidth_tbps"]) if system_form else None,
        peaks=_build_peaks(data, sources),
        **_capacity(data, gpus, where),
        unit_names={unit: name.strip() for unit, name in data.get("unit_names", {}).items()},
        warnings=warnings,
        node=_node(data),
    )


def _capacity(data: dict[str, Any], gpus: int, where: str = "") -> dict[str, Any]:
    """Per-chip capacity in bytes, and the unit it is in (``{}`` where none is given). A printed "GB" is
    10^9 bytes unless ``memory_capacity_unit: GiB`` says the vendor's GB are 2^30 (NVIDIA's 80 GB H100)."""
    binary = data.get("memory_capacity_unit") == "GiB"
    printed = ("memory_capacity_gb", "system_memory_capacity_gb")
    if "memory_capacity_unit" in data and not any(k in data for k in printed):
        raise InputError(f"{where}: 'memory_capacity_unit' says what the 'GB' of memory_capacity_gb or "
                         "system_memory_capacity_gb means; give one of those (memory_capacity_gib is 2^30 already)")
    scale, unit = (GIBI, "GiB") if binary else (GIGA, "GB")
    if "memory_capacity_gib" in data:
        return {"memory_capacity_bytes": float(data["memory_capacity_gib"]) * GIBI, "memory_capacity_unit": "GiB"}
    if "memory_capacity_gb" in data:
        return {"memory_capacity_bytes": float(data["memory_capacity_gb"]) * scale, "memory_capacity_unit": unit}
    if "system_memory_capacity_gb" in data:
        return {"memory_capacity_bytes": float(data["system_memory_capacity_gb"]) * scale / gpus,
                "memory_capacity_unit": unit}
    return {}
