"""A training job, validated once: what the ``mfu-table`` fence, the ``{{ mfu ... }}`` inline
forms and ``ainotes mfu`` all build before computing MFU and HFU.

:meth:`TrainingJob.from_fields` reads the fields as an author or a user typed them (YAML
scalars, ``key=value`` text, flag text) and names each field in the caller's style
(``'params'``, ``params=``, ``--params``); the constructor checks every rule. The peak is
resolved once, from ``peak_tflops`` or from a preset at a precision (default ``bf16``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ainotes import checks
from ainotes.checks import FieldError
from ainotes.hardware import UNIT_PRECISIONS, Preset, precision_label
from ainotes.textcheck import short
from ainotes.utilization import RECOMPUTE_MODES, Utilization, utilization

DEFAULT_PRECISION = "bf16"
# MFU compares with a tensor-core peak: FP32 matrix work there is tf32.
PRECISIONS = UNIT_PRECISIONS["tensor"]
ATTENTION_FIELDS = ("layers", "heads", "head_dim", "seq_len")
JOB_FIELDS = ("params", "tokens_per_second", "gpus", "peak_tflops", "preset", "precision", *ATTENTION_FIELDS,
              "recompute", "tokens")


def quoted(key: str) -> str:
    """How a fence body names a key: ``'params'``."""
    return repr(key)


def preset_peak_tflops(preset: Preset, precision: str) -> float | None:
    """The preset's dense tensor peak per GPU at ``precision`` in 10^12 FLOP/s, or ``None``
    when the GPU has no such path or its file does not give the rate (never another
    precision's figure): ``Preset.peak_tflops(precision, unit="tensor", sparsity=False)``."""
    return preset.peak_tflops(precision, unit="tensor", sparsity=False)


@dataclass(frozen=True)
class TrainingJob:
    """One training job: model size, throughput, devices, peak per device, attention shape.

    ``tokens_per_second`` is the whole job's throughput, shared by ``gpus`` devices;
    ``peak_tflops`` is per device. ``label`` names fields in messages (not compared).
    """

    params: float
    tokens_per_second: float
    gpus: int
    peak_tflops: float
    precision: str = DEFAULT_PRECISION
    preset_id: str | None = None
    layers: int | None = None
    heads: int | None = None
    head_dim: int | None = None
    seq_len: int | None = None
    recompute: str = "none"
    tokens: float | None = None  # training tokens D, for the time to train (optional)
    name: str | None = None
    label: Callable[[str], str] = field(default=quoted, compare=False, repr=False)

    def __post_init__(self) -> None:
        label = self.label
        set_ = object.__setattr__  # frozen: store the checked, typed values
        set_(self, "params", checks.positive_number(self.params, label("params"), "params"))
        set_(self, "tokens_per_second",
             checks.positive_number(self.tokens_per_second, label("tokens_per_second"), "tokens_per_second"))
        set_(self, "gpus", checks.whole_number(self.gpus, label("gpus"), "gpus"))
        set_(self, "peak_tflops", checks.positive_number(self.peak_tflops, label("peak_tflops"), "peak_tflops"))
        checks.one_of(self.precision, label("precision"), "precision", choices=PRECISIONS)
        checks.one_of(self.recompute, label("recompute"), "recompute", choices=RECOMPUTE_MODES)
        given = [key for key in ATTENTION_FIELDS if getattr(self, key) is not None]
        if given and len(given) != len(ATTENTION_FIELDS):
            missing = [key for key in ATTENTION_FIELDS if key not in given]
            raise FieldError(
                f"{', '.join(label(k) for k in ATTENTION_FIELDS)} go together: "
                f"{', '.join(label(k) for k in given)} given, {', '.join(label(k) for k in missing)} missing",
                missing[0],
            )
        for key in given:
            set_(self, key, checks.whole_number(getattr(self, key), label(key), key))
        if self.tokens is not None:
            set_(self, "tokens", checks.positive_number(self.tokens, label("tokens"), "tokens"))

    @classmethod
    def from_fields(
        cls,
        fields: Mapping[str, Any],
        presets: Mapping[str, Preset],
        *,
        label: Callable[[str], str] = quoted,
        name: str | None = None,
    ) -> TrainingJob:
        """A job from raw field values (numbers or their text), keys as in :data:`JOB_FIELDS`.

        Exactly one of ``preset`` and ``peak_tflops``; ``precision`` picks the preset's peak.
        """
        for key in fields:
            if key not in JOB_FIELDS:
                allowed = ", ".join(label(k) for k in JOB_FIELDS)
                raise FieldError(f"unknown key {label(str(key))} (allowed: {allowed})", str(key))
        for key in ("params", "tokens_per_second", "gpus"):
            if fields.get(key) is None:
                raise FieldError(f"{label(key)} is required", key)
        preset_id = fields.get("preset")
        peak: Any = fields.get("peak_tflops")  # a number or its text; checked by the constructor
        if (preset_id is None) == (peak is None):
            raise FieldError(f"needs exactly one of {label('preset')} and {label('peak_tflops')}", "preset")
        precision = checks.one_of(
            fields.get("precision", DEFAULT_PRECISION), label("precision"), "precision", choices=PRECISIONS
        )
        if preset_id is not None:
            preset = presets.get(preset_id) if isinstance(preset_id, str) else None
            if preset is None:
                raise FieldError(
                    f"{label('preset')}: unknown preset {short(preset_id)} (known: {', '.join(presets)})", "preset"
                )
            peak = preset_peak_tflops(preset, precision)
            if peak is None:
                ceiling = precision_label(precision, "tensor")
                why = (f"has no {ceiling} path" if preset.status(precision, "tensor") == "no path"
                       else f"does not give its {ceiling} rate")
                raise FieldError(f"{label('precision')} {precision}: preset {preset.id} {why}", "precision")
        return cls(
            params=fields["params"],
            tokens_per_second=fields["tokens_per_second"],
            gpus=fields["gpus"],
            peak_tflops=peak,
            precision=precision,
            preset_id=preset_id,
            layers=fields.get("layers"), heads=fields.get("heads"),
            head_dim=fields.get("head_dim"), seq_len=fields.get("seq_len"),
            recompute=fields.get("recompute", "none"),
            tokens=fields.get("tokens"),
            name=name,
            label=label,
        )

    @property
    def peak_flops_per_s(self) -> float:
        """Peak per device in FLOP/s (TFLOP/s × 10^12)."""
        return self.peak_tflops * 1e12

    @property
    def attention(self) -> dict[str, int] | None:
        """The four attention figures, or ``None`` without them."""
        if self.layers is None:
            return None
        return {key: getattr(self, key) for key in ATTENTION_FIELDS}

    def utilization(self) -> Utilization:
        """MFU and HFU (:func:`ainotes.utilization.utilization`: 6N + 12·L·H·Q·S model FLOPs per token)."""
        return utilization(
            self.params,
            tokens_per_second=self.tokens_per_second,
            gpus=self.gpus,
            peak_flops_per_s_per_gpu=self.peak_flops_per_s,
            layers=self.layers, heads=self.heads, head_dim=self.head_dim, seq_len=self.seq_len,
            recompute=self.recompute,  # type: ignore[arg-type]
        )
