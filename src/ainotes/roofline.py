"""The roofline model: attainable FLOP/s against arithmetic intensity.

Williams, Waterman and Patterson, "Roofline: an insightful visual performance
model for multicore architectures", CACM 52(4), 2009:

    attainable = min(peak FLOP/s, bandwidth bytes/s × intensity FLOP/byte)
    ridge      = peak FLOP/s ÷ bandwidth bytes/s          (FLOP/byte)

Below the ridge a kernel is memory-bound (the sloped line), above it
compute-bound (the flat line). Pure functions; no I/O.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from ainotes.errors import InputError
from ainotes.hardware import Preset


def _positive(name: str, value: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(f"{name!r} must be a number: {value!r}")
    if not math.isfinite(value) or value <= 0:
        raise InputError(f"{name!r} must be a finite number > 0: {value!r}")
    return float(value)


def attainable_flops_per_s(
    intensity_flop_per_byte: float, peak_flops_per_s: float, memory_bandwidth_bytes_per_s: float
) -> float:
    """min(peak, bandwidth × intensity), in FLOP/s."""
    intensity = _positive("intensity_flop_per_byte", intensity_flop_per_byte)
    peak = _positive("peak_flops_per_s", peak_flops_per_s)
    bandwidth = _positive("memory_bandwidth_bytes_per_s", memory_bandwidth_bytes_per_s)
    return min(peak, bandwidth * intensity)


def ridge_point_flop_per_byte(peak_flops_per_s: float, memory_bandwidth_bytes_per_s: float) -> float:
    """peak ÷ bandwidth: the intensity where the sloped and flat ceilings meet, in FLOP/byte."""
    peak = _positive("peak_flops_per_s", peak_flops_per_s)
    bandwidth = _positive("memory_bandwidth_bytes_per_s", memory_bandwidth_bytes_per_s)
    return peak / bandwidth


def bound_at(
    intensity_flop_per_byte: float, peak_flops_per_s: float, memory_bandwidth_bytes_per_s: float
) -> Literal["memory", "compute"]:
    """"memory" below the ridge point, "compute" at or above it."""
    intensity = _positive("intensity_flop_per_byte", intensity_flop_per_byte)
    ridge = ridge_point_flop_per_byte(peak_flops_per_s, memory_bandwidth_bytes_per_s)
    return "memory" if intensity < ridge else "compute"


@dataclass(frozen=True)
class Ceiling:
    """One GPU's roofline: a sloped memory ceiling meeting a flat compute ceiling.

    ``sparse`` is true only where the 2:4 sparse path doubled the flat ceiling.
    """

    preset_id: str
    name: str
    sparse: bool
    peak_flops_per_s: float
    memory_bandwidth_bytes_per_s: float
    ridge_flop_per_byte: float

    def attainable_flops_per_s(self, intensity_flop_per_byte: float) -> float:
        """min(peak, bandwidth × intensity) for this ceiling."""
        return attainable_flops_per_s(intensity_flop_per_byte, self.peak_flops_per_s, self.memory_bandwidth_bytes_per_s)

    def vertices(self, intensity_min: float, intensity_max: float) -> tuple[tuple[float, float], ...]:
        """Three (intensity, FLOP/s) points that draw the roofline exactly on log-log axes.

        On log axes both pieces are straight lines, so
        (min, attainable(min)), (ridge, peak), (max, attainable(max)) is exact.
        The ridge is clamped into [min, max]; when it falls outside, the middle
        point repeats an end point, so there are always three and all lie on the ceiling.
        """
        low = _positive("intensity_min", intensity_min)
        high = _positive("intensity_max", intensity_max)
        if not low < high:
            raise InputError(f"'intensity_min' must be < 'intensity_max': {low!r} >= {high!r}")
        middle = min(max(self.ridge_flop_per_byte, low), high)
        return tuple((x, self.attainable_flops_per_s(x)) for x in (low, middle, high))


def ceiling(preset: Preset, sparsity: bool = False) -> Ceiling:
    """The preset's roofline; ``sparsity`` doubles the flat ceiling only where the
    preset has a supported 2:4 structured-sparse path (bandwidth unchanged)."""
    sparse = bool(sparsity and preset.structured_sparsity)
    peak = preset.peak_flops_per_s(sparse)
    bandwidth = preset.memory_bandwidth_bytes_per_s
    return Ceiling(
        preset_id=preset.id,
        name=preset.name,
        sparse=sparse,
        peak_flops_per_s=peak,
        memory_bandwidth_bytes_per_s=bandwidth,
        ridge_flop_per_byte=ridge_point_flop_per_byte(peak, bandwidth),
    )
