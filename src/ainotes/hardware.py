"""GPU presets: one YAML file per GPU in ``presets/``, loaded into frozen ``Preset`` objects.

A preset pairs two theoretical vendor peaks, which is all a roofline needs:

* ``dense_fp16_tflops``: the dense FP16/BF16 tensor-core rate with FP32
  accumulation, per GPU, in 10^12 FLOP/s (the vendor's "with sparsity" figure
  halved, where a table gives only that);
* ``memory_bandwidth_tbps``: peak device-memory bandwidth per GPU, in 10^12 bytes/s.

Vendors state some systems (eight-GPU HGX/DGX boards) only as totals. Such a
preset gives ``gpu_count``, ``system_dense_fp16_tflops`` and
``system_memory_bandwidth_tbps`` (and optionally the ``system`` name) instead of
the per-GPU keys; the loader divides by the GPU count and records the step in
``Preset.derivation``.

The structure is described by a JSON Schema shipped with the package
(``ainotes/schema/preset.schema.json``, returned by :func:`preset_schema`). The
loader checks each rule itself first, so that a mistake reads as one line naming
the file and the key, the rule and the value, e.g.
``presets/h100.yaml: 'memory_bandwidth_tbps' must be > 0: -3.0``;
the schema is then applied as a final structural check.
"""

from __future__ import annotations

import copy
import json
import math
import os
import re
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import jsonschema
import yaml

from ainotes.errors import InputError
from ainotes.textcheck import bad_character, short

PRESET_ID_PATTERN = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
PRESET_SUFFIXES = (".yaml", ".yml")
PRESETS_DIR_ENV = "AINOTES_PRESETS_DIR"
TERA = 1e12
# Bounds on a preset's figures (TFLOP/s, TB/s, per GPU or per system): far beyond any GPU, yet
# small enough that the roofline's products and logarithms stay finite.
MIN_FIGURE = 1e-6
MAX_FIGURE = 1e9
MAX_GPU_COUNT = 1_000_000

PER_GPU_KEYS = ("dense_fp16_tflops", "memory_bandwidth_tbps")
SYSTEM_KEYS = ("gpu_count", "system_dense_fp16_tflops", "system_memory_bandwidth_tbps")
SOURCE_SCHEMES = ("http", "https")


@dataclass(frozen=True)
class Source:
    """Where a preset's figures come from: the vendor table's title and its address."""

    title: str
    url: str


@dataclass(frozen=True)
class Preset:
    """One GPU's theoretical peaks, per GPU, as the roofline uses them.

    ``derivation`` is a one-line account of how per-GPU figures were derived from
    system totals, or ``None`` when the file states them per GPU.
    """

    id: str
    name: str
    dense_fp16_tflops: float
    memory_bandwidth_tbps: float
    structured_sparsity: bool
    sources: tuple[Source, ...]
    path: str
    derivation: str | None = None
    variant: str | None = None
    notes: str | None = None
    system: str | None = None
    gpu_count: int | None = None
    system_dense_fp16_tflops: float | None = None
    system_memory_bandwidth_tbps: float | None = None

    def __post_init__(self) -> None:
        where = self.path or f"preset {short(self.id)}"
        _check_positive_number(where, "dense_fp16_tflops", self.dense_fp16_tflops)
        _check_positive_number(where, "memory_bandwidth_tbps", self.memory_bandwidth_tbps)

    def peak_flops_per_s(self, sparsity: bool = False) -> float:
        """Tensor-core ceiling in FLOP/s: dense rate × 10^12, doubled only when
        ``sparsity`` is asked for and the GPU has a supported 2:4 sparse path."""
        factor = 2.0 if (sparsity and self.structured_sparsity) else 1.0
        return self.dense_fp16_tflops * TERA * factor

    @property
    def memory_bandwidth_bytes_per_s(self) -> float:
        """Peak device-memory bandwidth in bytes/s (TB/s × 10^12); sparsity leaves it unchanged."""
        return self.memory_bandwidth_tbps * TERA

    def ridge_flop_per_byte(self, sparsity: bool = False) -> float:
        """Ridge point of the roofline: peak FLOP/s ÷ bandwidth in bytes/s (Williams et al. 2009)."""
        return self.peak_flops_per_s(sparsity) / self.memory_bandwidth_bytes_per_s


@dataclass(frozen=True)
class PresetCheck:
    """The outcome of validating one path: a preset, or the one-line error."""

    path: str
    preset: Preset | None
    error: str | None

    @property
    def ok(self) -> bool:
        return self.error is None


def default_presets_dir() -> Path:
    """``$AINOTES_PRESETS_DIR`` when set and non-empty, else ``./presets``."""
    configured = os.environ.get(PRESETS_DIR_ENV, "").strip()
    return Path(configured) if configured else Path("presets")


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
    presets = [load_preset(path) for path in preset_files(folder)]
    _check_unique_ids(presets)
    return tuple(sorted(presets, key=lambda p: (-p.dense_fp16_tflops, p.id)))


def preset_files(directory: str | Path) -> tuple[Path, ...]:
    """The preset files in ``directory`` (not recursive), sorted by name."""
    folder = Path(directory)
    if not folder.exists():
        raise InputError(f"{folder}: presets folder does not exist")
    if not folder.is_dir():
        raise InputError(f"{folder}: the presets folder is a file, not a folder")
    files = sorted(p for p in folder.iterdir() if p.suffix in PRESET_SUFFIXES)
    if not files:
        raise InputError(f"{folder}: presets folder holds no preset files (*.yaml, *.yml)")
    return tuple(files)


def preset_by_id(presets: Iterable[Preset], preset_id: str) -> Preset:
    """The preset called ``preset_id``; an :class:`InputError` lists the known ids otherwise."""
    presets = tuple(presets)
    for preset in presets:
        if preset.id == preset_id:
            return preset
    known = ", ".join(sorted(p.id for p in presets)) or "none"
    raise InputError(f"unknown preset {short(preset_id)}; known presets: {known}")


def load_preset(path: str | Path) -> Preset:
    """Read, check and convert one preset file; the id is the file's stem."""
    path = Path(path)
    where = str(path)
    preset_id = path.stem
    if path.suffix not in PRESET_SUFFIXES:
        raise InputError(f"{where}: a preset file must end in .yaml or .yml")
    if not PRESET_ID_PATTERN.fullmatch(preset_id):
        raise InputError(
            f"{where}: the file name must be a preset id "
            f"(lowercase letters and digits, words joined by single hyphens): {short(preset_id)}"
        )
    data = _parse_yaml(path, where)
    _check_document(data, where)
    return _build_preset(data, preset_id, where)


def validate_paths(paths: Iterable[str | Path]) -> tuple[PresetCheck, ...]:
    """Check preset files and folders without stopping at the first error.

    Each folder contributes its preset files (or one error if it has none);
    each file gives one :class:`PresetCheck`. A preset id seen in an earlier file
    makes the later file an error.
    """
    checks: list[PresetCheck] = []
    for given in paths:
        path = Path(given)
        if path.is_dir():
            try:
                files: tuple[Path, ...] = preset_files(path)
            except InputError as exc:
                checks.append(PresetCheck(str(path), None, str(exc)))
                continue
        elif path.exists():
            files = (path,)
        else:
            checks.append(PresetCheck(str(path), None, f"{path}: no such file or folder"))
            continue
        for file in files:
            try:
                checks.append(PresetCheck(str(file), load_preset(file), None))
            except InputError as exc:
                checks.append(PresetCheck(str(file), None, str(exc)))
    first_file_of_id: dict[str, str] = {}
    for index, check in enumerate(checks):
        if check.preset is None:
            continue
        earlier = first_file_of_id.setdefault(check.preset.id, check.path)
        if earlier != check.path:
            checks[index] = PresetCheck(check.path, None, _duplicate_message(check.path, check.preset.id, earlier))
    return tuple(checks)


# --- reading -----------------------------------------------------------------


class _PresetLoader(yaml.SafeLoader):
    """Safe YAML loading that refuses duplicate keys and reads YAML 1.2 floats.

    PyYAML follows YAML 1.1, where ``1e3`` is a string; a preset author writing
    an exponent means a number, so it is resolved as one.
    """

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        if isinstance(node, yaml.MappingNode):
            self.flatten_mapping(node)
            seen: set[Any] = set()
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=deep)
                if isinstance(key, Hashable):
                    if key in seen:
                        raise yaml.constructor.ConstructorError(
                            None, None, f"duplicate key {short(key)}", key_node.start_mark
                        )
                    seen.add(key)
        return super().construct_mapping(node, deep=deep)


_PresetLoader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:[0-9][0-9_]*)(?:\.[0-9_]*)?[eE][-+]?[0-9]+$"),
    list("-+0123456789"),
)


def _parse_yaml(path: Path, where: str) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise InputError(f"{where}: the file is not UTF-8 text") from None
    except OSError as exc:
        raise InputError(f"{where}: cannot read the file: {exc.strerror or exc}") from None
    try:
        return yaml.load(text, Loader=_PresetLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = f"line {mark.line + 1}: " if mark is not None else ""
        problem = " ".join(str(exc.problem or exc.context or "invalid YAML").split())
        if problem.startswith("duplicate key"):
            raise InputError(f"{where}: {line}{problem}") from None
        raise InputError(f"{where}: {line}YAML does not parse: {problem}") from None
    except yaml.YAMLError as exc:
        raise InputError(f"{where}: YAML does not parse: {' '.join(str(exc).split())}") from None


# --- checking ----------------------------------------------------------------


def _kind(value: Any) -> str:
    if value is None:
        return "empty"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, Mapping):
        return "a mapping"
    return type(value).__name__


def _check_document(data: Any, where: str) -> None:
    if data is None:
        raise InputError(f"{where}: the file is empty; expected a mapping with 'name', the figures and 'sources'")
    if not isinstance(data, dict):
        raise InputError(f"{where}: must be a mapping of keys to values, not {_kind(data)}")
    schema = _schema()
    properties: dict[str, Any] = schema["properties"]
    for key in data:
        if key not in properties:
            allowed = ", ".join(properties)
            raise InputError(f"{where}: unknown key {short(key)}; allowed keys: {allowed}")

    system_form = any(key in data for key in (*SYSTEM_KEYS, "system"))
    if system_form:
        clashing = [key for key in PER_GPU_KEYS if key in data]
        if clashing:
            raise InputError(
                f"{where}: {short(clashing[0])} cannot be combined with system totals "
                f"({', '.join(SYSTEM_KEYS)}); give per-GPU figures or system totals, not both"
            )
    required = [*schema["required"], *(SYSTEM_KEYS if system_form else PER_GPU_KEYS)]
    for key in required:
        if key not in data:
            raise InputError(f"{where}: missing required key {short(key)}")

    for key, rule in properties.items():
        if key not in data:
            continue
        value = data[key]
        kind = rule["type"]
        if kind == "string":
            _check_text(where, key, value, one_line=key != "notes")
        elif kind == "number":
            _check_positive_number(where, key, value)
        elif kind == "integer":
            _check_count(where, key, value)
        elif kind == "boolean":
            if not isinstance(value, bool):
                raise InputError(f"{where}: {short(key)} must be true or false: {short(value)}")
        elif key == "sources":
            _check_sources(where, value)

    # Backstop: the shipped schema is the structural description; anything the
    # checks above let through is still refused, with the schema's words.
    validator = jsonschema.Draft202012Validator(schema)
    error = jsonschema.exceptions.best_match(validator.iter_errors(data))
    if error is not None:
        at = ".".join(str(part) for part in error.absolute_path) or "file"
        raise InputError(f"{where}: {short(at)} {error.message}")


def _check_text(where: str, key: str, value: Any, *, one_line: bool = True) -> None:
    if not isinstance(value, str):
        raise InputError(f"{where}: {short(key)} must be text, not {_kind(value)}: {short(value)}")
    if not value.strip():
        raise InputError(f"{where}: {short(key)} must not be empty: {short(value)}")
    if one_line and ("\n" in value or "\r" in value):
        raise InputError(f"{where}: {short(key)} must be one line: {short(value)}")
    bad = bad_character(value)
    if bad is not None:
        raise InputError(f"{where}: {short(key)} holds a control character ({bad}), which no page or SVG can show")


def _check_positive_number(where: str, key: str, value: Any) -> None:
    # bool is an int subclass: YAML `true` must not pass as 1.
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(f"{where}: {short(key)} must be a number, not {_kind(value)}: {short(value)}")
    if math.isnan(value) or math.isinf(value):
        raise InputError(f"{where}: {short(key)} must be a finite number: {short(value)}")
    if value <= 0:
        raise InputError(f"{where}: {short(key)} must be > 0: {short(value)}")
    if not MIN_FIGURE <= value <= MAX_FIGURE:
        raise InputError(f"{where}: {short(key)} must be between {MIN_FIGURE:g} and {MAX_FIGURE:g}: {short(value)}")


def _check_count(where: str, key: str, value: Any) -> None:
    if isinstance(value, float):
        raise InputError(f"{where}: {short(key)} must be a whole number: {short(value)}")
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError(f"{where}: {short(key)} must be a whole number, not {_kind(value)}: {short(value)}")
    if value < 1:
        raise InputError(f"{where}: {short(key)} must be >= 1: {short(value)}")
    if value > MAX_GPU_COUNT:
        raise InputError(f"{where}: {short(key)} must be at most {MAX_GPU_COUNT}: {short(value)}")


def _check_url(where: str, key: str, value: Any) -> None:
    if not isinstance(value, str):
        raise InputError(f"{where}: {short(key)} must be text, not {_kind(value)}: {short(value)}")
    parts = urlsplit(value)
    if not value.startswith(tuple(f"{scheme}://" for scheme in SOURCE_SCHEMES)):
        raise InputError(f"{where}: {short(key)} must be an http or https URL: {short(value)}")
    if not parts.netloc or any(ch.isspace() or ord(ch) < 32 for ch in value) or bad_character(value):
        raise InputError(f"{where}: {short(key)} must be a full http(s) URL with a host and no spaces: {short(value)}")


def _check_sources(where: str, value: Any) -> None:
    if not isinstance(value, list):
        raise InputError(f"{where}: 'sources' must be a list of {{title, url}}, not {_kind(value)}: {short(value)}")
    if not value:
        raise InputError(f"{where}: 'sources' must name at least one source: []")
    for index, item in enumerate(value):
        at = f"sources[{index}]"
        if not isinstance(item, dict):
            raise InputError(f"{where}: {short(at)} must be a mapping with 'title' and 'url', not {_kind(item)}: {short(item)}")
        for key in item:
            if key not in ("title", "url"):
                raise InputError(f"{where}: unknown key {short(key)} in {short(at)}; allowed keys: title, url")
        for key in ("title", "url"):
            if key not in item:
                raise InputError(f"{where}: missing required key {f'{at}.{key}'!r}")
        _check_text(where, f"{at}.title", item["title"])
        _check_url(where, f"{at}.url", item["url"])


def _check_unique_ids(presets: Iterable[Preset]) -> None:
    first_path: dict[str, str] = {}
    for preset in presets:
        earlier = first_path.setdefault(preset.id, preset.path)
        if earlier != preset.path:
            raise InputError(_duplicate_message(preset.path, preset.id, earlier))


def _duplicate_message(path: str, preset_id: str, earlier: str) -> str:
    return f"{path}: duplicate preset id {short(preset_id)}: {earlier} has the same id"


# --- building ----------------------------------------------------------------


def _format_tflops(tflops: float) -> str:
    return f"{tflops / 1000:g} PFLOP/s" if tflops >= 1000 else f"{tflops:g} TFLOP/s"


def _build_preset(data: dict[str, Any], preset_id: str, where: str) -> Preset:
    sources = tuple(Source(title=item["title"].strip(), url=item["url"].strip()) for item in data["sources"])
    common = dict(
        id=preset_id,
        name=data["name"].strip(),
        structured_sparsity=data.get("structured_sparsity", False),
        sources=sources,
        path=where,
        variant=data.get("variant"),
        notes=data.get("notes"),
    )
    if "gpu_count" not in data:
        return Preset(
            dense_fp16_tflops=float(data["dense_fp16_tflops"]),
            memory_bandwidth_tbps=float(data["memory_bandwidth_tbps"]),
            **common,
        )
    gpus: int = data["gpu_count"]
    system_tflops = float(data["system_dense_fp16_tflops"])
    system_tbps = float(data["system_memory_bandwidth_tbps"])
    # Per-GPU figure = system total ÷ GPU count (vendor boards share work evenly).
    dense_tflops = system_tflops / gpus
    bandwidth_tbps = system_tbps / gpus
    system = data.get("system")
    derivation = (
        f"{system + ' totals' if system else 'System totals'} ÷ {gpus} GPU{'' if gpus == 1 else 's'}: "
        f"{_format_tflops(system_tflops)} → {_format_tflops(dense_tflops)}; "
        f"{system_tbps:g} TB/s → {bandwidth_tbps:g} TB/s"
    )
    return Preset(
        dense_fp16_tflops=dense_tflops,
        memory_bandwidth_tbps=bandwidth_tbps,
        derivation=derivation,
        system=system,
        gpu_count=gpus,
        system_dense_fp16_tflops=system_tflops,
        system_memory_bandwidth_tbps=system_tbps,
        **common,
    )
