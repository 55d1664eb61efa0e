"""GPU presets as values: frozen ``Preset`` objects, one per file of ``presets/`` (read and checked by
:mod:`ainotes.presets.gpus`), each validated once, in its constructor.

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
(``ainotes/schema/preset.schema.json``, :func:`ainotes.presets.gpus.preset_schema`). The
loader checks each rule itself first, so that a mistake reads as one line naming
the file and the key, the rule and the value, e.g.
``presets/h100.yaml: 'memory_bandwidth_tbps' must be a finite number > 0: -3.0``;
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

Node topology (optional, :class:`NodeTopology`): how many chips share the fast link and which link
presets (``presets/links/<id>.yaml``) a group of chips talks over inside a node and across nodes::

    node: {chips: 8, link: nvlink-4, inter_node_link: ib-ndr}
    node: {chips: 4, link: tpu-v5p-ici, inter_node_link: tpu-v5p-ici, torus_axes: 3}

A collective is timed over the node's own links (:func:`ainotes.core.topology.group_link`); a preset
without ``node`` has no default link, so a caller must name one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, TypeVar, overload

from ainotes.base.errors import InputError
from ainotes.base.textcheck import short, unknown_id
from ainotes.core import checks

# The precisions per unit come from the one precision table; older importers find them here too.
from ainotes.core.precision import (
    FILE_PRECISIONS,
    FP16_PRECISIONS,
    OPTIONAL_UNIT_PRECISIONS,
    PRECISION_LABELS,
    PRECISIONS,
    UNIT_PRECISIONS,
    UNITS,
    default_unit,
)

__all__ = [
    "FILE_PRECISIONS",
    "FP16_PRECISIONS",
    "GIBI",
    "GIGA",
    "MAX_FIGURE",
    "MIN_FIGURE",
    "NEUTRAL_UNIT_TERMS",
    "OPTIONAL_UNIT_PRECISIONS",
    "PRECISIONS",
    "PRECISION_LABELS",
    "TERA",
    "UNITS",
    "UNIT_PRECISIONS",
    "NodeTopology",
    "PathStatus",
    "PeakPath",
    "Preset",
    "Source",
    "check_figure",
    "check_precision",
    "default_unit",
    "item_by_id",
    "precision_label",
    "preset_by_id",
]
_T = TypeVar("_T")

TERA = 1e12
# Bounds on a preset's figures (TFLOP/s, TB/s, per GPU or per system): far beyond any GPU, yet
# small enough that the roofline's products and logarithms stay finite.
MIN_FIGURE = 1e-6
MAX_FIGURE = 1e9
GIGA = 1e9
GIBI = 2.0**30

PathStatus = Literal["given", "no path", "not given"]
# The notes' vendor-neutral words for the two units; a preset's `unit_names` gives its vendor's own.
NEUTRAL_UNIT_TERMS = {"tensor": "matrix units", "vector": "vector units"}


def check_figure(where: str, key: str, value: object) -> float:
    """One of a preset's figures (a rate, a bandwidth, a capacity): a number, finite, > 0 and within
    :data:`MIN_FIGURE` to :data:`MAX_FIGURE` (:func:`ainotes.core.checks.positive_number`)."""
    return checks.positive_number(value, f"{where}: {short(key)}", key, text=False, low=MIN_FIGURE, high=MAX_FIGURE)


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
            check_figure(where, "dense_tflops", self.dense_tflops)
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


MAX_NODE_CHIPS = 1_000_000
MAX_TORUS_AXES = 3


@dataclass(frozen=True)
class NodeTopology:
    """Which chips share the fast link, and the link presets a group of them crosses.

    ``chips``: chips per node on ``link_id`` (8 on an HGX H100 or B200 board over NVLink through
    NVSwitch; 4 per TPU host; 1 where chips have no shared fast link, as an RTX 4090). ``link_id``: the
    link preset inside a node. ``inter_node_link_id``: the link between nodes (an InfiniBand port per
    GPU; on a TPU pod the same ICI, which runs between hosts too). ``torus_axes``: for a torus
    interconnect (TPU ICI), how many axes it has (2 on v5e, 3 on v4 and v5p); ``None`` for a switch.
    """

    chips: int
    link_id: str
    inter_node_link_id: str
    torus_axes: int | None = None

    def __post_init__(self) -> None:
        checks.whole_number(self.chips, "'node.chips'", "node.chips", low=1, high=MAX_NODE_CHIPS)
        for key, value in (("node.link", self.link_id), ("node.inter_node_link", self.inter_node_link_id)):
            if not isinstance(value, str) or not value:
                raise InputError(f"{short(key)} must be a link preset id such as nvlink-4: {short(value)}")
        if self.torus_axes is not None:
            checks.whole_number(self.torus_axes, "'node.torus_axes'", "node.torus_axes", low=1, high=MAX_TORUS_AXES)


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
    node: NodeTopology | None = None  # chips per node and their links; None: the file names no links

    def __init__(
        self, id: str, name: str, dense_fp16_tflops: float, memory_bandwidth_tbps: float,
        structured_sparsity: bool, sources: tuple[Source, ...], file: str | None = None, *,
        path: str | None = None, derivation: str | None = None, variant: str | None = None,
        notes: str | None = None, system: str | None = None, gpu_count: int | None = None,
        system_dense_fp16_tflops: float | None = None, system_memory_bandwidth_tbps: float | None = None,
        peaks: tuple[PeakPath, ...] = (), memory_capacity_bytes: float | None = None,
        memory_capacity_unit: str = "GB", unit_names: Mapping[str, str] | None = None,
        warnings: tuple[str, ...] = (), node: NodeTopology | None = None,
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
            "node": node,
        }
        for key, value in values.items():
            object.__setattr__(self, key, value)  # frozen: assigned once, here
        where = self.file or f"preset {short(self.id)}"
        check_figure(where, "dense_fp16_tflops", self.dense_fp16_tflops)
        check_figure(where, "memory_bandwidth_tbps", self.memory_bandwidth_tbps)
        if self.memory_capacity_bytes is not None:
            check_figure(where, "memory_capacity_gb", self.memory_capacity_bytes / GIGA)
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

    def missing_peak(self, precision: str, unit: str = "tensor") -> str:
        """The one message for a ceiling this preset lacks: whether it has no such path or its file is
        silent, and the peaks it does give, e.g. ``preset a100 has no FP8 tensor path (its peaks: ...)``."""
        label = precision_label(precision, unit)
        what = (f"has no {label} path" if self.status(precision, unit) == "no path"
                else f"does not give its {label} rate" + (f" in {self.file}" if self.file else ""))
        given = [path.label for _, _, path in self.all_paths() if path is not None and path.exists]
        return f"preset {self.id} {what} (its peaks: {', '.join(given)})"

    def require_peak(self, precision: str, unit: str = "tensor", *, sparsity: bool = False) -> float:
        """:meth:`peak_tflops`, or an :class:`InputError` with :meth:`missing_peak` where it is ``None``."""
        peak = self.peak_tflops(precision, unit=unit, sparsity=sparsity)
        if peak is None:
            raise InputError(self.missing_peak(precision, unit))
        return peak

    def all_paths(self) -> tuple[tuple[str, str, PeakPath | None], ...]:
        """Every (unit, precision, path or None) of ``UNIT_PRECISIONS``, tensor first, in ``PRECISIONS``
        order, with the optional ones (``OPTIONAL_UNIT_PRECISIONS``: a matrix FP32 rate) where the file states them."""
        every = ((unit, precision, self.path(precision, unit))
                 for unit in UNITS for precision in PRECISIONS if precision in FILE_PRECISIONS[unit])
        return tuple((unit, precision, path) for unit, precision, path in every
                     if path is not None or precision in UNIT_PRECISIONS[unit])


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
    raise InputError(unknown_id(what, item_id, (str(getattr(item, "id", "")) for item in items)))
