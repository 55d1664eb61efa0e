"""The roofline model: attainable FLOP/s against arithmetic intensity.

Williams, Waterman and Patterson, "Roofline: an insightful visual performance
model for multicore architectures", CACM 52(4), 2009:

    attainable = min(peak FLOP/s, bandwidth bytes/s × intensity FLOP/byte)
    ridge      = peak FLOP/s ÷ bandwidth bytes/s          (FLOP/byte)

Below the ridge a kernel is memory-bound (the sloped line), above it
compute-bound (the flat line). Pure functions; no I/O.

A GPU has one flat ceiling per unit and precision (tensor FP8, vector FP32, ...).
:func:`kernel_ceiling` says which one a kernel meets, from its kind and dtype;
:func:`kernel_roof` places the kernel under it. A preset that has no such path,
or does not give it, yields no ceiling: never another precision's.

Sparsity belongs to the kernel: a kernel declared 2:4 sparse meets the sparse
roof where the preset supports sparsity at its precision (and is "unsupported"
where it does not); a dense kernel always meets the dense roof. The
``sparsity`` toggle of a chart only draws the sparse ceilings, to show where a
sparse kernel would sit; it never moves a kernel.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, overload

from ainotes.base.errors import InputError
from ainotes.base.formula import Expr, greater, less, minimum, where
from ainotes.core import checks
from ainotes.core.hardware import Preset, check_precision, precision_label
from ainotes.core.kernels import Kernel

Bound = Literal["memory", "compute", "unsupported", "unknown"]

# Matrix kernels run on the tensor cores at their dtype; element-wise and
# reduction kernels run on the CUDA cores, whatever their storage dtype.
MATRIX_KINDS = ("gemm", "attention", "attention-naive", "decode-attention", "attention-kv")
VECTOR_KINDS = ("add", "softmax", "layernorm")


def _positive(name: str, value: float) -> float:
    return checks.positive_number(value, repr(name), name, text=False)


# -- the formulas, once: numbers for floats, Vega expression text for ainotes.base.formula.Expr -------
# (the live charts evaluate these texts; the checked wrappers below are what Python callers use)

Value = float | Expr


@overload
def attainable(intensity: float, peak: float, bandwidth: float) -> float: ...
@overload
def attainable(intensity: Value, peak: Value, bandwidth: Value) -> Value: ...
def attainable(intensity: Value, peak: Value, bandwidth: Value) -> Value:
    """attainable = min(peak, bandwidth × intensity) (Williams et al. 2009)."""
    return minimum(peak, bandwidth * intensity)


@overload
def ridge(peak: float, bandwidth: float) -> float: ...
@overload
def ridge(peak: Value, bandwidth: Value) -> Value: ...
def ridge(peak: Value, bandwidth: Value) -> Value:
    """ridge = peak ÷ bandwidth, in FLOP/byte."""
    return peak / bandwidth


def memory_bound(intensity: Value, ridge_flop_per_byte: Value) -> Any:
    """True (memory-bound) below the ridge, false (compute-bound) at or above it."""
    return less(intensity, ridge_flop_per_byte)


@overload
def time_at(flops: float, attainable_rate: float) -> float: ...
@overload
def time_at(flops: Value, attainable_rate: Value) -> Value: ...
def time_at(flops: Value, attainable_rate: Value) -> Value:
    """time = FLOPs ÷ attainable FLOP/s, in seconds: how long a kernel takes at its roof."""
    return flops / attainable_rate


def weight_gemm_crossing_tokens(ridge_flop_per_byte: Value, n: Value, k: Value, bytes_per_element: Value) -> Any:
    """The batch B at which a weight GEMM (B × K) · (K × N) reaches the intensity ``ridge``.

    Its intensity is 2·B·N·K ÷ (s·(B·K + K·N + B·N)) (:func:`ainotes.core.kernels.gemm`, s bytes per
    element); setting it equal to the ridge R and solving for B gives

        B = R·s·K·N ÷ (2·N·K − R·s·(K + N)),

    ``None`` (``null``) when the denominator is not positive: the intensity approaches
    2·N·K ÷ (s·(K + N)) as B grows and never reaches R.
    """
    denominator = 2 * n * k - ridge_flop_per_byte * bytes_per_element * (k + n)
    crossing = ridge_flop_per_byte * bytes_per_element * k * n
    if isinstance(denominator, Expr):
        return where(greater(denominator, 0), crossing / denominator, None)
    return crossing / denominator if denominator > 0 else None


def attainable_flops_per_s(
    intensity_flop_per_byte: float, peak_flops_per_s: float, memory_bandwidth_bytes_per_s: float
) -> float:
    """min(peak, bandwidth × intensity), in FLOP/s (:func:`attainable`, inputs checked)."""
    intensity = _positive("intensity_flop_per_byte", intensity_flop_per_byte)
    peak = _positive("peak_flops_per_s", peak_flops_per_s)
    bandwidth = _positive("memory_bandwidth_bytes_per_s", memory_bandwidth_bytes_per_s)
    return attainable(intensity, peak, bandwidth)


def ridge_point_flop_per_byte(peak_flops_per_s: float, memory_bandwidth_bytes_per_s: float) -> float:
    """peak ÷ bandwidth: the intensity where the sloped and flat ceilings meet, in FLOP/byte
    (:func:`ridge`, inputs checked)."""
    peak = _positive("peak_flops_per_s", peak_flops_per_s)
    bandwidth = _positive("memory_bandwidth_bytes_per_s", memory_bandwidth_bytes_per_s)
    return ridge(peak, bandwidth)


def kernel_time_s(kernel_flops: float, attainable_flops_per_s: float) -> float:
    """Seconds a kernel of ``kernel_flops`` takes at its attainable rate (:func:`time_at`): the
    roofline's lower bound on its run time."""
    flops = _positive("kernel_flops", kernel_flops)
    rate = _positive("attainable_flops_per_s", attainable_flops_per_s)
    return time_at(flops, rate)


def bound_at(
    intensity_flop_per_byte: float, peak_flops_per_s: float, memory_bandwidth_bytes_per_s: float
) -> Literal["memory", "compute"]:
    """"memory" below the ridge point, "compute" at or above it."""
    intensity = _positive("intensity_flop_per_byte", intensity_flop_per_byte)
    ridge_at = ridge_point_flop_per_byte(peak_flops_per_s, memory_bandwidth_bytes_per_s)
    return "memory" if memory_bound(intensity, ridge_at) else "compute"


@dataclass(frozen=True)
class Ceiling:
    """One GPU's roofline: a sloped memory ceiling meeting a flat compute ceiling.

    ``sparse`` is true only where the 2:4 sparse path doubled the flat ceiling;
    ``unit`` and ``precision`` name the flat ceiling (``ceiling`` gives FP16/BF16 tensor).
    """

    preset_id: str
    name: str
    sparse: bool
    peak_flops_per_s: float
    memory_bandwidth_bytes_per_s: float
    ridge_flop_per_byte: float
    unit: str = "tensor"
    precision: str = "bf16"

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


def ceiling_at(preset: Preset, precision: str, *, unit: str = "tensor", sparsity: bool = False) -> Ceiling | None:
    """The preset's roofline at one precision on one unit, or ``None`` where the preset
    has no such path or does not give it (see ``Preset.status``). ``sparsity`` doubles
    the flat ceiling only where that path supports 2:4 sparsity."""
    path = preset.path(precision, unit)
    if path is None or path.dense_tflops is None:
        return None
    sparse = bool(sparsity and path.sparse_supported)
    peak = path.dense_tflops * (2.0 if sparse else 1.0) * 1e12
    bandwidth = preset.memory_bandwidth_bytes_per_s
    return Ceiling(
        preset_id=preset.id, name=preset.name, sparse=sparse, peak_flops_per_s=peak,
        memory_bandwidth_bytes_per_s=bandwidth, ridge_flop_per_byte=ridge_point_flop_per_byte(peak, bandwidth),
        unit=unit, precision=precision,
    )


def kernel_ceiling(kernel: Kernel) -> tuple[str, str]:
    """``(unit, precision)`` of the flat ceiling a kernel meets.

    Matrix kernels (gemm and the attention kinds) meet the tensor rate of
    their compute dtype (``Kernel.dtype``: a GEMM with 8-bit weights and BF16
    compute meets the BF16 roof), except fp32, which runs on the CUDA cores (``("vector", "fp32")``;
    ``tf32`` is the FP32-input tensor path). Element-wise and reduction kernels
    (add, softmax, layernorm) compute in FP32 on the CUDA cores whatever they
    store (``("vector", "fp32")``), and in FP64 for fp64 data
    (``("vector", "fp64")``). int8 element-wise work is counted the same way.
    """
    if kernel.kind in MATRIX_KINDS:
        return ("vector", "fp32") if kernel.dtype == "fp32" else ("tensor", kernel.dtype)
    if kernel.kind in VECTOR_KINDS:
        return ("vector", "fp64") if kernel.dtype == "fp64" else ("vector", "fp32")
    raise InputError(f"no ceiling rule for kernel kind {kernel.kind!r}")


@dataclass(frozen=True)
class KernelRoof:
    """Where one kernel sits on one preset's roofline, at the ceiling it meets.

    ``bound`` is ``"memory"`` or ``"compute"`` (at or above the ridge), or
    ``"unsupported"`` where the preset has no such path (FP8 on A100, or a 2:4
    sparse kernel where the path has no sparse mode), or ``"unknown"`` where the
    preset file does not give that ceiling. In the last two cases the peak,
    the attainable rate, the ridge and the time are ``None``. ``reason`` says why in words.
    ``time_s`` is the kernel's FLOPs at the attainable rate (:func:`kernel_time_s`).
    """

    preset_id: str
    unit: str
    precision: str
    sparse: bool
    peak_flops_per_s: float | None
    attainable_flops_per_s: float | None
    ridge_flop_per_byte: float | None
    bound: Bound
    reason: str | None = None
    peak_tflops: float | None = None  # the preset's figure as printed, free of × 10^12 rounding
    time_s: float | None = None  # the kernel's FLOPs ÷ the attainable rate (kernel_time_s)

    @property
    def attainable_tflops(self) -> float | None:
        """Attainable rate in 10^12 FLOP/s: the printed peak when compute-bound."""
        if self.attainable_flops_per_s is None:
            return None
        return self.peak_tflops if self.bound == "compute" else self.attainable_flops_per_s / 1e12

    @property
    def label(self) -> str:
        """``FP8 tensor``, ``FP32 vector``, with ``2:4 sparse`` where the kernel meets a sparse roof."""
        return precision_label(self.precision, self.unit) + (" 2:4 sparse" if self.sparse else "")


def kernel_roof(preset: Preset, kernel: Kernel, *, sparsity: bool = False) -> KernelRoof:
    """The kernel on the preset's roofline at :func:`kernel_ceiling`'s ceiling.

    attainable = min(peak, bandwidth × intensity) with that ceiling's peak.
    ``sparsity`` is the chart's toggle and does not change the answer (module
    docstring): a dense kernel meets the dense roof, a sparse one the sparse roof.
    """
    del sparsity  # display only: accepted so chart code can pass its toggle through
    unit, precision = kernel_ceiling(kernel)
    check_precision(precision, unit)
    name = precision_label(precision, unit)
    path = preset.path(precision, unit)

    def without(bound: Bound, reason: str) -> KernelRoof:
        return KernelRoof(preset.id, unit, precision, kernel.sparse, None, None, None, bound, reason)

    if path is None:
        return without("unknown", f"{name} rate not given in {preset.file_label}")
    if path.dense_tflops is None:
        return without("unsupported", f"no {name.split()[0]} path" if unit == "tensor" else f"no {name} path")
    if kernel.sparse and not path.sparse_supported:
        return without("unsupported", f"no 2:4 sparse {name} path")
    peak_tflops = path.dense_tflops * (2.0 if kernel.sparse else 1.0)
    peak = peak_tflops * 1e12
    bandwidth = preset.memory_bandwidth_bytes_per_s
    intensity = kernel.intensity_flop_per_byte
    rate = attainable_flops_per_s(intensity, peak, bandwidth)
    return KernelRoof(
        preset_id=preset.id, unit=unit, precision=precision, sparse=kernel.sparse,
        peak_flops_per_s=peak, peak_tflops=peak_tflops,
        attainable_flops_per_s=rate,
        ridge_flop_per_byte=ridge_point_flop_per_byte(peak, bandwidth),
        bound=bound_at(intensity, peak, bandwidth),
        time_s=kernel_time_s(kernel.flops, rate),
    )
