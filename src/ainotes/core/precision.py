"""The one precision table: every number format a preset, a kernel or a chart names.

Each row gives a precision's name, its label, its bytes per element, which units carry it, and its
place in the roofline chart's roof order. Everything else is derived from :data:`TABLE`: the preset
loader's precisions per unit (:mod:`ainotes.core.hardware`), the kernels' dtype sizes
(:mod:`ainotes.core.kernels`), the chart's roofs, the command line's choices; the preset JSON Schema
(``ainotes/schema/preset.schema.json``) is tested equal to it. Adding a precision is one row here
plus the presets' figures for it.

Units: the matrix units (``tensor``: NVIDIA's tensor cores, AMD's Matrix Cores, Google's MXUs) and
the vector units (``vector``: CUDA cores, stream processors, VPUs; element-wise and reduction work).
A precision's ``units`` are those every preset states (a rate, ``none`` or "not given"), the first
being the unit a bare precision name means; ``optional_units`` are those a file may state only where
its vendor prints a rate: AMD's FP32 matrix rate (163.4 TFLOP/s on MI300X), which no modelled kernel
meets, and the FP16/BF16 rates of the vector units (NVIDIA's "Peak FP16 TFLOPS (non-Tensor)", 78 on
an A100), which only a measured kernel's HFMA/HADD/HMUL work meets. An optional pair is never one of
the roofline chart's roofs (:data:`ROOF_ORDER`): a chart that draws one roof per precision draws its
required units' roofs only. On NVIDIA parts FP32 matrix work is TF32, so ``fp32`` is a vector precision.
"""

from __future__ import annotations

from dataclasses import dataclass

UNITS = ("tensor", "vector")


@dataclass(frozen=True)
class Precision:
    """One number format.

    ``bytes_per_element``: storage per element (tf32 is stored as fp32; 4-bit formats are half a
    byte, packed two to a byte). ``units``/``optional_units``: see the module docstring; a precision
    with no unit is a storage format only (int4: no matrix unit computes in it, weights are widened
    on chip). ``roof_rank``: its place in the chart's roof order (lower first, within each unit).
    ``fp16_rate``: carried by a preset's required ``dense_fp16_tflops``. ``integer``: rated in OP/s
    (TOPS), not FLOP/s.
    """

    name: str
    label: str
    bytes_per_element: float
    units: tuple[str, ...] = ()
    optional_units: tuple[str, ...] = ()
    roof_rank: int | None = None
    fp16_rate: bool = False
    integer: bool = False

    @property
    def computes(self) -> bool:
        """Whether a kernel may compute in it (some unit carries it), not only store it."""
        return bool(self.units or self.optional_units)


# Table order is the order every list of precisions follows (flags, messages, the schema).
TABLE: tuple[Precision, ...] = (
    Precision("fp64", "FP64", 8, units=("tensor", "vector"), roof_rank=7),
    Precision("fp32", "FP32", 4, units=("vector",), optional_units=("tensor",), roof_rank=6),
    Precision("tf32", "TF32", 4, units=("tensor",), roof_rank=5),
    Precision("fp16", "FP16", 2, units=("tensor",), optional_units=("vector",), roof_rank=1, fp16_rate=True),
    Precision("bf16", "BF16", 2, units=("tensor",), optional_units=("vector",), roof_rank=0, fp16_rate=True),
    Precision("fp8", "FP8", 1, units=("tensor",), roof_rank=2),
    Precision("fp4", "FP4", 0.5, units=("tensor",), roof_rank=3),
    Precision("int8", "INT8", 1, units=("tensor",), roof_rank=4, integer=True),
    Precision("int4", "INT4", 0.5),  # GPTQ/AWQ-style 4-bit integer weights, widened on chip
)
BY_NAME: dict[str, Precision] = {p.name: p for p in TABLE}

# --- derived -----------------------------------------------------------------------------

#: Precisions some unit computes in, in table order.
PRECISIONS: tuple[str, ...] = tuple(p.name for p in TABLE if p.computes)
#: Per unit, the precisions every preset states (a rate, none, or not given).
UNIT_PRECISIONS: dict[str, tuple[str, ...]] = {
    unit: tuple(p.name for p in TABLE if unit in p.units) for unit in UNITS
}
#: Per unit, the precisions a file may state only where its vendor prints one.
OPTIONAL_UNIT_PRECISIONS: dict[str, tuple[str, ...]] = {
    unit: tuple(p.name for p in TABLE if unit in p.optional_units) for unit in UNITS
}
#: Everything a preset file's ``peaks`` may hold, per unit: the stated ones, then the optional ones.
FILE_PRECISIONS: dict[str, tuple[str, ...]] = {
    unit: UNIT_PRECISIONS[unit] + OPTIONAL_UNIT_PRECISIONS[unit] for unit in UNITS
}
PRECISION_LABELS: dict[str, str] = {p.name: p.label for p in TABLE if p.computes}
#: Carried by a preset's required ``dense_fp16_tflops``.
FP16_PRECISIONS: tuple[str, ...] = tuple(p.name for p in TABLE if p.fp16_rate)
#: Bytes per element of the dtypes a kernel computes in.
DTYPE_BYTES: dict[str, float] = {p.name: p.bytes_per_element for p in TABLE if p.computes}
#: Bytes per element of the dtypes a stored operand (weights, a KV cache) may have.
STORAGE_DTYPE_BYTES: dict[str, float] = {p.name: p.bytes_per_element for p in TABLE}
#: Every roof a chart can draw, (unit, precision), each unit's in ``roof_rank`` order, tensor first.
ROOF_ORDER: tuple[tuple[str, str], ...] = tuple(
    (unit, name) for unit in UNITS
    for name in sorted(UNIT_PRECISIONS[unit], key=lambda n: (BY_NAME[n].roof_rank is None, BY_NAME[n].roof_rank or 0))
)


def default_unit(precision: str) -> str:
    """The unit a bare precision name means: its first unit (``vector`` for fp32, the CUDA-core path),
    ``tensor`` for a name the table does not hold."""
    found = BY_NAME.get(precision)
    return found.units[0] if found is not None and found.units else "tensor"


def rate_unit(precision: str) -> str:
    """``TOPS`` for an integer format, else ``TFLOP/s``: how a preset's dense rate at ``precision`` reads."""
    found = BY_NAME.get(precision)
    return "TOPS" if found is not None and found.integer else "TFLOP/s"
