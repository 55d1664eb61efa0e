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

Per-precision peaks (optional): a ``peaks`` mapping (``system_peaks`` in the
system-totals form, divided by ``gpu_count`` like the other totals) gives
dense rates per unit and precision::

    peaks:
      tensor: {fp64: {dense_tflops: 66.9, structured_sparsity: false},
               tf32: 494.7, fp8: {dense_tflops: 1978.9, sparse_tflops: 3957.8}, fp4: none}
      vector: {fp32: 66.9, fp64: 33.5}

A value is a number (dense 10^12 FLOP/s; TOPS for int8), ``none`` (the GPU has
no such path) or a mapping with ``dense_tflops`` and optionally
``sparse_tflops`` (the vendor's printed 2:4 figure, checked to be 2 × dense),
``structured_sparsity``, ``source`` (1-based index into ``sources``) and
``note``. A precision the file leaves out is "not given", which is not the
same as "no such path": :meth:`Preset.path` returns ``None`` for the first and
a :class:`PeakPath` whose ``dense_tflops`` is ``None`` for the second. The
FP16/BF16 tensor rate is always ``dense_fp16_tflops``.
"""

from __future__ import annotations

import copy
import json
import logging
import math
import os
import re
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, Literal, TypeVar, overload
from urllib.parse import urlsplit

import jsonschema
import yaml

from ainotes.base.errors import InputError
from ainotes.base.textcheck import bad_character, short

_T = TypeVar("_T")

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
# Device-memory capacity (optional): per chip in GB (10^9 bytes, as NVIDIA and AMD print it) or GiB
# (2^30 bytes, as Google prints TPU memory), or a system total in GB divided by gpu_count. One at most.
CAPACITY_KEYS = ("memory_capacity_gb", "memory_capacity_gib", "system_memory_capacity_gb")
GIGA = 1e9
GIBI = 2.0**30
SOURCE_SCHEMES = ("http", "https")

PRECISIONS = ("fp64", "fp32", "tf32", "fp16", "bf16", "fp8", "fp4", "int8")
UNITS = ("tensor", "vector")
# Which precisions each unit has: the matrix units ("tensor": NVIDIA's tensor cores, AMD's Matrix
# Cores, Google's MXUs) and the vector units ("vector": CUDA cores, stream processors, VPUs; element-wise
# and reduction work). Every preset states each of these, or is "not given" on it. On NVIDIA parts FP32
# matrix work is TF32, so "fp32" is a vector precision here.
UNIT_PRECISIONS: dict[str, tuple[str, ...]] = {
    "tensor": ("fp64", "tf32", "fp16", "bf16", "fp8", "fp4", "int8"),
    "vector": ("fp32", "fp64"),
}
# Rates a file may state where its vendor prints one (AMD's FP32 matrix rate: 163.4 TFLOP/s on MI300X).
# They exist only where stated: other presets do not list them, not even as "not given", and no kernel
# meets them (an fp32 GEMM meets the vector FP32 rate on every part; see roofline.kernel_ceiling).
OPTIONAL_UNIT_PRECISIONS: dict[str, tuple[str, ...]] = {"tensor": ("fp32",), "vector": ()}
# Everything a preset file's `peaks` may hold, per unit (the schema lists them in this order).
FILE_PRECISIONS: dict[str, tuple[str, ...]] = {
    unit: UNIT_PRECISIONS[unit] + OPTIONAL_UNIT_PRECISIONS[unit] for unit in UNITS
}
PRECISION_LABELS = {p: p.upper() for p in PRECISIONS}
FP16_PRECISIONS = ("fp16", "bf16")  # both carried by the required 'dense_fp16_tflops'
NO_PATH_WORDS = ("none",)
# Vendor tables round printed sparse figures (H100 FP16: "1,979" for 2 × 989.4), so
# "sparse = 2 × dense" is checked to 0.1 %; a sparse figure typed as dense is off by 2×.
SPARSE_RATIO_TOLERANCE = 1e-3
PEAK_ENTRY_KEYS = ("dense_tflops", "sparse_tflops", "structured_sparsity", "source", "note", "confirmed_dense")
PathStatus = Literal["given", "no path", "not given"]
# Plausibility: figures no accelerator has. A preset outside these holds a slip (GB/s typed as TB/s, a
# sparse figure typed as dense) far more often than a new kind of chip, so loading stops with one line
# naming the likely slip. Per chip: LPDDR edge parts move about 0.05-0.2 TB/s, HBM3e about 8; the densest
# printed per-chip rate is a few PFLOP/s (B200 FP4: 9 PFLOP/s dense); FP16/BF16 ridges lie between
# tens and a few hundred FLOP/byte.
PLAUSIBLE_BANDWIDTH_TBPS = (0.05, 100.0)
MAX_PLAUSIBLE_DENSE_TFLOPS = 100_000.0  # 100 PFLOP/s
PLAUSIBLE_RIDGE_FLOP_PER_BYTE = (1.0, 10_000.0)  # the dense FP16/BF16 tensor ridge
# A dense rate twice what its neighbouring precisions predict, with no sparse figure beside it, is most
# likely the vendor's 2:4 sparse figure; within 3 % of twice (vendors round their tables).
SPARSE_LOOK_TOLERANCE = 0.03
CONFIRMED_DENSE_KEY = "confirmed_dense"  # a tensor entry's "this dense rate really is that high"
_log = logging.getLogger(__name__)
# The notes' vendor-neutral words for the two units; a preset's `unit_names` gives its vendor's own.
NEUTRAL_UNIT_TERMS = {"tensor": "matrix units", "vector": "vector units"}


def check_precision(precision: str, unit: str = "tensor") -> tuple[str, str]:
    """``(precision, unit)`` when the pair names a ceiling presets can state; an
    :class:`InputError` naming the known words otherwise."""
    if unit not in UNITS:
        raise InputError(f"unknown unit {short(unit)}; known units: {', '.join(UNITS)}")
    if precision not in PRECISIONS:
        raise InputError(f"unknown precision {short(precision)}; known precisions: {', '.join(PRECISIONS)}")
    if precision not in FILE_PRECISIONS[unit]:
        raise InputError(
            f"the {unit} unit has no {short(precision)} rate; {unit} precisions: {', '.join(FILE_PRECISIONS[unit])}"
        )
    return precision, unit


def default_unit(precision: str) -> str:
    """The unit a bare precision name means: ``vector`` for fp32 (the CUDA-core path), else ``tensor``."""
    return "vector" if precision == "fp32" else "tensor"


def precision_label(precision: str, unit: str) -> str:
    """``FP8 tensor``, ``FP32 vector``: how tables and captions name a ceiling."""
    return f"{PRECISION_LABELS.get(precision, precision)} {unit}"


@dataclass(frozen=True)
class Source:
    """Where a preset's figures come from: the vendor table's title and its address."""

    title: str
    url: str


@dataclass(frozen=True)
class PeakPath:
    """One ceiling of a GPU: a unit (tensor or vector) at one precision, per GPU.

    ``dense_tflops`` is ``None`` when the GPU has no such path (FP8 on A100).
    ``sparse_supported``: a supported 2:4 structured-sparse path doubles the
    rate (tensor units only; bandwidth unchanged). ``printed_sparse_tflops`` is
    the vendor's sparse figure where the file records it (checked = 2 × dense).
    ``derivation`` is set where the figure was divided from a system total;
    ``source`` is the cited table it comes from, where the file names one.
    """

    unit: str
    precision: str
    dense_tflops: float | None
    sparse_supported: bool = False
    printed_sparse_tflops: float | None = None
    source: Source | None = None
    note: str | None = None
    derivation: str | None = None

    def __post_init__(self) -> None:
        check_precision(self.precision, self.unit)
        where = f"{self.unit} {self.precision} peak"
        if self.dense_tflops is not None:
            _check_positive_number(where, "dense_tflops", self.dense_tflops)
        if self.sparse_supported and (self.unit != "tensor" or self.dense_tflops is None):
            raise InputError(f"{where}: only an existing tensor path can have a 2:4 sparse mode")

    @property
    def exists(self) -> bool:
        return self.dense_tflops is not None

    @property
    def label(self) -> str:
        return precision_label(self.precision, self.unit)

    def peak_tflops(self, sparsity: bool = False) -> float | None:
        """Dense rate, × 2 when ``sparsity`` is asked for and a 2:4 path exists; ``None`` without a path."""
        if self.dense_tflops is None:
            return None
        return self.dense_tflops * (2.0 if (sparsity and self.sparse_supported) else 1.0)


@dataclass(frozen=True, init=False)
class Preset:
    """One GPU's theoretical peaks, per GPU, as the roofline uses them.

    ``derivation`` is a one-line account of how per-GPU figures were derived from
    system totals, or ``None`` when the file states them per GPU. ``file`` is the
    preset file's path (``path`` is the method that looks up a ceiling; the
    constructor still accepts the file as ``path=`` for callers written before).
    """

    id: str
    name: str
    dense_fp16_tflops: float
    memory_bandwidth_tbps: float
    structured_sparsity: bool
    sources: tuple[Source, ...]
    file: str
    derivation: str | None = None
    variant: str | None = None
    notes: str | None = None
    system: str | None = None
    gpu_count: int | None = None
    system_dense_fp16_tflops: float | None = None
    system_memory_bandwidth_tbps: float | None = None
    peaks: tuple[PeakPath, ...] = ()
    memory_capacity_bytes: float | None = None
    memory_capacity_unit: str = "GB"  # how the file states it: "GB" (10^9) or "GiB" (2^30)
    unit_names: Mapping[str, str] | None = None  # vendor terms by unit ("tensor" → "tensor cores")
    warnings: tuple[str, ...] = ()  # figures the plausibility rules question but the file confirms

    def __init__(
        self, id: str, name: str, dense_fp16_tflops: float, memory_bandwidth_tbps: float,
        structured_sparsity: bool, sources: tuple[Source, ...], file: str | None = None, *,
        path: str | None = None, derivation: str | None = None, variant: str | None = None,
        notes: str | None = None, system: str | None = None, gpu_count: int | None = None,
        system_dense_fp16_tflops: float | None = None, system_memory_bandwidth_tbps: float | None = None,
        peaks: tuple[PeakPath, ...] = (), memory_capacity_bytes: float | None = None,
        memory_capacity_unit: str = "GB", unit_names: Mapping[str, str] | None = None,
        warnings: tuple[str, ...] = (),
    ) -> None:
        values = {
            "id": id, "name": name, "dense_fp16_tflops": dense_fp16_tflops,
            "memory_bandwidth_tbps": memory_bandwidth_tbps, "structured_sparsity": structured_sparsity,
            "sources": tuple(sources), "file": file if file is not None else (path or ""),
            "derivation": derivation, "variant": variant, "notes": notes, "system": system, "gpu_count": gpu_count,
            "system_dense_fp16_tflops": system_dense_fp16_tflops,
            "system_memory_bandwidth_tbps": system_memory_bandwidth_tbps, "peaks": tuple(peaks),
            "memory_capacity_bytes": memory_capacity_bytes, "memory_capacity_unit": memory_capacity_unit,
            "unit_names": dict(unit_names) if unit_names else None, "warnings": tuple(warnings),
        }
        for key, value in values.items():
            object.__setattr__(self, key, value)  # frozen: assigned once, here
        where = self.file or f"preset {short(self.id)}"
        _check_positive_number(where, "dense_fp16_tflops", self.dense_fp16_tflops)
        _check_positive_number(where, "memory_bandwidth_tbps", self.memory_bandwidth_tbps)
        if self.memory_capacity_bytes is not None:
            _check_positive_number(where, "memory_capacity_gb", self.memory_capacity_bytes / GIGA)
        if self.memory_capacity_unit not in ("GB", "GiB"):
            raise InputError(f"{where}: memory_capacity_unit must be GB or GiB: {short(self.memory_capacity_unit)}")

    def unit_term(self, unit: str) -> str:
        """The vendor's word for ``unit`` ("tensor cores", "MXUs"), else the notes' neutral one
        ("matrix units" for ``tensor``, "vector units" for ``vector``)."""
        if unit not in UNITS:
            raise InputError(f"unknown unit {short(unit)}; known units: {', '.join(UNITS)}")
        return (self.unit_names or {}).get(unit) or NEUTRAL_UNIT_TERMS[unit]

    @property
    def file_label(self) -> str:
        """The file as a page may name it: its folder and name (``presets/tpu-v4.yaml``), the same whichever
        builder loaded it and from where, with nothing of the build machine's folders; the id without a file."""
        if not self.file:
            return self.id
        path = Path(self.file)
        return f"{path.parent.name}/{path.name}" if path.parent.name else path.name

    @property
    def memory_capacity_gb(self) -> float | None:
        """Device memory per chip in 10^9 bytes, or ``None`` where the file gives no capacity."""
        return None if self.memory_capacity_bytes is None else self.memory_capacity_bytes / GIGA

    @property
    def memory_capacity_label(self) -> str | None:
        """The capacity as the vendor prints it, with its unit named: ``80 GB`` or ``32 GiB (34.4 GB)``."""
        if self.memory_capacity_bytes is None:
            return None
        if self.memory_capacity_unit == "GiB":
            return f"{self.memory_capacity_bytes / GIBI:g} GiB ({self.memory_capacity_bytes / GIGA:.3g} GB)"
        return f"{self.memory_capacity_bytes / GIGA:g} GB"

    def peak_flops_per_s(self, sparsity: bool = False) -> float:
        """Tensor-core ceiling in FLOP/s: dense rate × 10^12, doubled only when
        ``sparsity`` is asked for and the GPU has a supported 2:4 sparse path."""
        factor = 2.0 if (sparsity and self.structured_sparsity) else 1.0
        return self.dense_fp16_tflops * TERA * factor

    @property
    def memory_bandwidth_bytes_per_s(self) -> float:
        """Peak device-memory bandwidth in bytes/s (TB/s × 10^12); sparsity leaves it unchanged."""
        return self.memory_bandwidth_tbps * TERA

    @overload
    def ridge_flop_per_byte(self, sparsity: bool = False) -> float: ...

    @overload
    def ridge_flop_per_byte(self, sparsity: bool = False, *, precision: str, unit: str = "tensor") -> float | None: ...

    @overload
    def ridge_flop_per_byte(self, sparsity: bool = False, *, unit: str) -> float | None: ...

    def ridge_flop_per_byte(
        self, sparsity: bool = False, *, precision: str = "bf16", unit: str = "tensor"
    ) -> float | None:
        """Ridge point of the roofline: peak FLOP/s ÷ bandwidth in bytes/s (Williams et al. 2009),
        for one ceiling (default FP16/BF16 tensor); ``None`` where that peak is not given or has no path."""
        peak = self.peak_tflops(precision, unit=unit, sparsity=sparsity)
        return None if peak is None else peak * TERA / self.memory_bandwidth_bytes_per_s

    def path(self, precision: str, unit: str = "tensor") -> PeakPath | None:
        """The ceiling at ``precision`` on ``unit``; ``None`` when the file does not give it ("not given").

        FP16 and BF16 tensor are always given: they are ``dense_fp16_tflops``.
        Unknown or impossible names (``fp32`` on the tensor unit) raise :class:`InputError`.
        """
        check_precision(precision, unit)
        for peak in self.peaks:
            if peak.precision == precision and peak.unit == unit:
                return peak
        if unit == "tensor" and precision in FP16_PRECISIONS:
            return PeakPath(unit, precision, self.dense_fp16_tflops, self.structured_sparsity,
                            derivation=self.derivation)
        return None

    def status(self, precision: str, unit: str = "tensor") -> PathStatus:
        """``given``, ``no path`` (the GPU has none) or ``not given`` (the file is silent)."""
        path = self.path(precision, unit)
        if path is None:
            return "not given"
        return "given" if path.exists else "no path"

    def peak_tflops(self, precision: str, *, unit: str = "tensor", sparsity: bool = False) -> float | None:
        """Per-GPU peak at ``precision`` in 10^12 FLOP/s (TOPS for int8), doubled for a supported 2:4
        path when ``sparsity``; ``None`` when not given or when the GPU has no such path.
        Never falls back to another precision."""
        path = self.path(precision, unit)
        return None if path is None else path.peak_tflops(sparsity)

    def all_paths(self) -> tuple[tuple[str, str, PeakPath | None], ...]:
        """Every (unit, precision, path or None) of ``UNIT_PRECISIONS``, tensor first, in ``PRECISIONS``
        order, with the optional ones (``OPTIONAL_UNIT_PRECISIONS``: a matrix FP32 rate) where the file states them."""
        every = ((unit, precision, self.path(precision, unit))
                 for unit in UNITS for precision in PRECISIONS if precision in FILE_PRECISIONS[unit])
        return tuple((unit, precision, path) for unit, precision, path in every
                     if path is not None or precision in UNIT_PRECISIONS[unit])


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
    presets = [_say_warnings(load_preset(path)) for path in preset_files(folder)]
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
    return item_by_id(presets, preset_id, "preset")


def item_by_id(items: Iterable[_T], item_id: str, what: str) -> _T:
    """The item (a GPU or link preset) whose ``id`` is ``item_id``; otherwise an
    :class:`InputError` naming ``what`` and listing the known ids."""
    items = tuple(items)
    for item in items:
        if getattr(item, "id", None) == item_id:
            return item
    known = ", ".join(sorted(str(getattr(item, "id", "")) for item in items)) or "none"
    raise InputError(f"unknown {what} {short(item_id)}; known {what}s: {known}")


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
    return _build_preset(data, preset_id, where, _check_plausible(data, where))


def _say_warnings(preset: Preset) -> Preset:
    """Log the preset's plausibility warnings (a confirmed unusual figure): loading a presets folder or
    validating files says them once per file; a single file loaded on its own (a page's example) does not."""
    for warning in preset.warnings:
        _log.warning(warning)
    return preset


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
                checks.append(PresetCheck(str(file), _say_warnings(load_preset(file)), None))
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
        return yaml.load(text, Loader=_PresetLoader)  # a SafeLoader subclass
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


# First match wins: bool before int, since YAML `true` is an int subclass in Python.
_KINDS: tuple[tuple[type | tuple[type, ...], str], ...] = (
    (type(None), "empty"), (bool, "a boolean"), ((int, float), "a number"), (str, "a string"),
    (list, "a list"), (Mapping, "a mapping"),
)


def _kind(value: Any) -> str:
    return next((name for types, name in _KINDS if isinstance(value, types)), type(value).__name__)


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


def _check_value(where: str, key: str, kind: str, value: Any) -> None:
    """One top-level value against its schema type (peaks are checked on their own)."""
    if kind == "string":
        _check_text(where, key, value, one_line=key != "notes")
    elif kind == "number":
        _check_positive_number(where, key, value)
    elif kind == "integer":
        _check_count(where, key, value)
    elif kind == "boolean" and not isinstance(value, bool):
        raise InputError(f"{where}: {short(key)} must be true or false: {short(value)}")
    elif key == "sources":
        _check_sources(where, value)
    elif key == "unit_names":
        _check_unit_names(where, value)


def _check_unit_names(where: str, value: Any) -> None:
    if not isinstance(value, dict):
        raise InputError(f"{where}: 'unit_names' must be a mapping such as "
                         f"{{tensor: tensor cores, vector: CUDA cores}}, not {_kind(value)}")
    for unit, name in value.items():
        if unit not in UNITS:
            raise InputError(f"{where}: unknown unit {short(unit)} in 'unit_names'; known units: {', '.join(UNITS)}")
        _check_text(where, f"unit_names.{unit}", name)


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
            raise InputError(
                f"{where}: {short(at)} must be a mapping with 'title' and 'url', not {_kind(item)}: {short(item)}"
            )
        for key in item:
            if key not in ("title", "url"):
                raise InputError(f"{where}: unknown key {short(key)} in {short(at)}; allowed keys: title, url")
        for key in ("title", "url"):
            if key not in item:
                raise InputError(f"{where}: missing required key {f'{at}.{key}'!r}")
        _check_text(where, f"{at}.title", item["title"])
        _check_url(where, f"{at}.url", item["url"])


def _is_no_path(value: Any) -> bool:
    return value is None or (isinstance(value, str) and value.strip().lower() in NO_PATH_WORDS)


def _check_peaks(where: str, key: str, data: dict[str, Any]) -> None:
    """Per-precision peaks: units, precisions, each entry's figures, and sparse = 2 × dense."""
    value = data[key]
    if not isinstance(value, dict):
        raise InputError(f"{where}: {short(key)} must be a mapping of units ({', '.join(UNITS)}) "
                         f"to precisions, not {_kind(value)}: {short(value)}")
    for unit, entries in value.items():
        if unit not in UNITS:
            raise InputError(f"{where}: unknown unit {short(f'{key}.{unit}')}; units: {', '.join(UNITS)}")
        if not isinstance(entries, dict):
            raise InputError(f"{where}: {short(f'{key}.{unit}')} must be a mapping of precisions to rates, "
                             f"not {_kind(entries)}: {short(entries)}")
        for precision, entry in entries.items():
            at = f"{key}.{unit}.{precision}"
            if precision not in FILE_PRECISIONS[unit]:
                raise InputError(f"{where}: unknown precision {short(at)}; {unit} precisions: "
                                 f"{', '.join(FILE_PRECISIONS[unit])}")
            _check_peak_entry(where, at, unit, precision, entry, data)


def _peak_fields(where: str, at: str, entry: Any) -> dict[str, Any]:
    """An entry's fields as a mapping: a bare number is ``{dense_tflops: number}``."""
    if isinstance(entry, dict):
        for name in entry:
            if name not in PEAK_ENTRY_KEYS:
                raise InputError(f"{where}: unknown key {short(f'{at}.{name}')}; "
                                 f"allowed keys: {', '.join(PEAK_ENTRY_KEYS)}")
        if "dense_tflops" not in entry:
            raise InputError(f"{where}: missing required key {short(f'{at}.dense_tflops')} (write {short(at)}: none "
                             "where the GPU has no such path)")
        _check_positive_number(where, f"{at}.dense_tflops", entry["dense_tflops"])
        return entry
    if isinstance(entry, (int, float)) and not isinstance(entry, bool):
        _check_positive_number(where, at, entry)
        return {"dense_tflops": entry}
    raise InputError(f"{where}: {short(at)} must be a number (dense TFLOP/s), none (no such path) or a mapping "
                     f"with 'dense_tflops', not {_kind(entry)}: {short(entry)}")


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
        _check_text(where, f"{at}.note", fields["note"])
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
    _check_positive_number(where, f"{at}.sparse_tflops", sparse)
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
        raise InputError(f"{where}: {short(at)} must equal {short(fp16_key)} ({reference:g}), "
                         f"the FP16/BF16 tensor rate: {dense:g}")
    top = data.get("structured_sparsity", False)
    implied = fields.get("structured_sparsity", True if "sparse_tflops" in fields else top)
    if implied != top:
        raise InputError(f"{where}: {short(at)} says 2:4 sparsity is {'' if implied else 'not '}supported "
                         f"but 'structured_sparsity' is {str(top).lower()}; the FP16/BF16 rate follows "
                         "'structured_sparsity'")


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
                rates.append((at, dense / gpus, "TOPS" if precision == "int8" else "TFLOP/s"))
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
    return _sparse_look(data, where, peaks_key, fp16_key)


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


def _check_unique_ids(presets: Iterable[Preset]) -> None:
    first_path: dict[str, str] = {}
    for preset in presets:
        earlier = first_path.setdefault(preset.id, preset.file)
        if earlier != preset.file:
            raise InputError(_duplicate_message(preset.file, preset.id, earlier))


def _duplicate_message(path: str, preset_id: str, earlier: str, what: str = "preset") -> str:
    """The one line for a ``what`` file (a GPU preset, a link) whose id an ``earlier`` file took."""
    return f"{path}: duplicate {what} id {short(preset_id)}: {earlier} has the same id"


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
    sources = tuple(Source(title=item["title"].strip(), url=item["url"].strip()) for item in data["sources"])
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
        **_capacity(data, gpus),
        unit_names={unit: name.strip() for unit, name in data.get("unit_names", {}).items()},
        warnings=warnings,
    )


def _capacity(data: dict[str, Any], gpus: int) -> dict[str, Any]:
    """Per-chip capacity in bytes, and the unit the file states it in (``{}`` where none is given)."""
    if "memory_capacity_gib" in data:
        return {"memory_capacity_bytes": float(data["memory_capacity_gib"]) * GIBI, "memory_capacity_unit": "GiB"}
    if "memory_capacity_gb" in data:
        return {"memory_capacity_bytes": float(data["memory_capacity_gb"]) * GIGA}
    if "system_memory_capacity_gb" in data:
        return {"memory_capacity_bytes": float(data["system_memory_capacity_gb"]) * GIGA / gpus}
    return {}
