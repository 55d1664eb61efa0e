"""A training job, validated once: what the ``mfu-table`` fence, the ``{{ mfu ... }}`` inline
forms and ``ainotes mfu`` all build before computing MFU and HFU.

:meth:`TrainingJob.from_fields` reads the fields as an author or a user typed them (YAML
scalars, ``key=value`` text, flag text) and names each field in the caller's style
(``'params'``, ``params=``, ``--params``); the constructor checks every rule. The peak is
resolved once, from ``peak_tflops`` or from a preset at a precision (default ``bf16``).

What model FLOPs per token are counted from (:class:`ModelCount`, :func:`model_count`) is
either typed (``params``, and ``layers heads head_dim seq_len`` for the attention term, all
four or none) or a model preset (``model``, :mod:`ainotes.core.models`). With ``model``:

* N is the parameters one token uses: every parameter of a dense model, the active experts'
  (plus attention, router and embeddings) of a mixture of experts;
* embeddings count, as PaLM's 6N counts them (Chowdhery et al. 2022, Appendix B);
  ``embeddings: false`` leaves the embedding matrices out (the "non-embedding" N of Kaplan
  et al. 2020);
* the attention term 12·L·H·Q·S takes L, H (the *query* heads: grouped-query attention
  shares keys and values, not the score work) and Q from the model, and S from ``seq_len``;
  without ``seq_len`` there is no attention term (6N only), and the convention says so.

``params`` or any of ``layers heads head_dim`` beside ``model`` is an error: the model gives them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ainotes.base.errors import InputError
from ainotes.base.textcheck import short, unknown_id
from ainotes.core import checks
from ainotes.core.checks import FieldError
from ainotes.core.hardware import UNIT_PRECISIONS, Preset, item_by_id
from ainotes.core.models import ModelPreset
from ainotes.core.utilization import RECOMPUTE_MODES, TrainingTime, Utilization, time_to_train, utilization

DEFAULT_PRECISION = "bf16"
# MFU compares with a tensor-core peak: FP32 matrix work there is tf32.
PRECISIONS = UNIT_PRECISIONS["tensor"]
ATTENTION_FIELDS = ("layers", "heads", "head_dim", "seq_len")
MODEL_FIELDS = ("model", "embeddings")  # a model preset instead of params and layers/heads/head_dim
COUNT_FIELDS = ("params", *ATTENTION_FIELDS, *MODEL_FIELDS)  # what model FLOPs per token come from
JOB_FIELDS = ("params", "tokens_per_second", "gpus", "peak_tflops", "preset", "precision", *ATTENTION_FIELDS,
              "recompute", "tokens", *MODEL_FIELDS)
# The model presets by id, loaded when a job first names one (NotesSite.models, FormContext.models).
ModelsLoader = Callable[[], Mapping[str, ModelPreset]]
_TRUE, _FALSE = ("true", "yes"), ("false", "no")


def quoted(key: str) -> str:
    """How a fence body names a key: ``'params'``."""
    return repr(key)


def preset_peak_tflops(preset: Preset, precision: str) -> float | None:
    """The preset's dense tensor peak per GPU at ``precision`` in 10^12 FLOP/s, or ``None``
    when the GPU has no such path or its file does not give the rate (never another
    precision's figure): ``Preset.peak_tflops(precision, unit="tensor", sparsity=False)``."""
    return preset.peak_tflops(precision, unit="tensor", sparsity=False)


def _boolean(value: Any, name: str, field: str) -> bool:
    """``true``/``false`` (YAML), or their text (``yes``/``no`` too) from an inline form or a flag."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in (*_TRUE, *_FALSE):
        return value.strip().lower() in _TRUE
    raise FieldError(f"{name} must be true or false: {short(value)}", field)


@dataclass(frozen=True)
class ModelCount:
    """What model FLOPs per token are counted from: N, the attention shape, and their origin.

    ``model`` is the preset they came from (``None``: typed); ``embeddings`` whether N
    counts the embedding matrices (only a model can leave them out).
    """

    params: float
    layers: int | None = None
    heads: int | None = None
    head_dim: int | None = None
    seq_len: int | None = None
    model: ModelPreset | None = None
    embeddings: bool = True

    @property
    def attention(self) -> dict[str, int] | None:
        """The four attention figures, or ``None`` without them."""
        if self.layers is None:
            return None
        return {key: getattr(self, key) for key in ATTENTION_FIELDS}

    @property
    def params_convention(self) -> str:
        """Which N this is, in words: ``palm-540b: every parameter, embeddings included``."""
        model = self.model
        if model is None:
            return "N as given"
        if model.is_moe:
            which = f"the parameters a token uses ({model.active_experts} of {model.experts} experts)"
        else:
            which = "every parameter"
        share = model.embedding_params
        size = f"{share / 1e9:.3g} B" if share >= 1e9 else f"{share / 1e6:.3g} M"
        embeddings = "embeddings included" if self.embeddings else f"embeddings ({size}) left out"
        return f"{model.id}: {which}, {embeddings}"

    @property
    def attention_convention(self) -> str:
        """Whether model FLOPs count the attention term and where L, H, Q, S came from."""
        if self.attention is None:
            return "6N, no attention term" + (" (no seq_len given)" if self.model is not None else "")
        where = f"L, H, Q from {self.model.id}" if self.model is not None else "L, H, Q as given"
        return (f"6N + 12·L·H·Q·S: L {self.layers:,}, H {self.heads:,} query heads, Q {self.head_dim:,} "
                f"({where}), S {self.seq_len:,}")


def model_count(
    fields: Mapping[str, Any],
    models: ModelsLoader | None,
    *,
    label: Callable[[str], str] = quoted,
) -> ModelCount:
    """N and the attention figures from raw fields (:data:`COUNT_FIELDS`; others are ignored):
    ``params`` with all four or none of ``layers heads head_dim seq_len``, or ``model``
    (with ``seq_len`` and ``embeddings`` optional). See the module docstring for the convention."""
    model_id = fields.get("model")
    if model_id is None:
        if fields.get("embeddings") is not None:
            raise FieldError(f"{label('embeddings')} goes with {label('model')} (a typed "
                             f"{label('params')} is already the N to count)", "embeddings")
        if fields.get("params") is None:
            raise FieldError(f"{label('params')} is required (or {label('model')}, a model preset)", "params")
        params = checks.positive_number(fields["params"], label("params"), "params")
        given = [key for key in ATTENTION_FIELDS if fields.get(key) is not None]
        if given and len(given) != len(ATTENTION_FIELDS):
            missing = [key for key in ATTENTION_FIELDS if key not in given]
            raise FieldError(
                f"{', '.join(label(k) for k in ATTENTION_FIELDS)} go together: "
                f"{', '.join(label(k) for k in given)} given, {', '.join(label(k) for k in missing)} missing",
                missing[0],
            )
        shape = {key: checks.whole_number(fields[key], label(key), key) for key in given}
        return ModelCount(params, layers=shape.get("layers"), heads=shape.get("heads"),
                          head_dim=shape.get("head_dim"), seq_len=shape.get("seq_len"))
    for key in ("params", "layers", "heads", "head_dim"):
        if fields.get(key) is not None:
            what = "N is its parameter count" if key == "params" else "the model gives it"
            raise FieldError(f"give {label('model')} or {label(key)}, not both: {what}", key)
    if models is None:
        raise FieldError(f"{label('model')}: no model presets are loaded here (presets/models/)", "model")
    known = models()
    if not isinstance(model_id, str) or model_id not in known:
        try:
            item_by_id(known.values(), str(model_id), "model")
        except InputError as exc:
            raise FieldError(f"{label('model')}: {exc}", "model") from None
    model = known[model_id]
    given_embeddings = fields.get("embeddings")
    embeddings = given_embeddings is None or _boolean(given_embeddings, label("embeddings"), "embeddings")
    seq_len = fields.get("seq_len")
    seq = None if seq_len is None else checks.whole_number(seq_len, label("seq_len"), "seq_len")
    params = model.active_params - (0 if embeddings else model.embedding_params)
    if seq is None:  # no sequence length, no attention term: the shape stays out as well
        return ModelCount(float(params), model=model, embeddings=embeddings)
    return ModelCount(float(params), layers=model.layers, heads=model.heads, head_dim=model.head_dim,
                      seq_len=seq, model=model, embeddings=embeddings)


def job_peak(fields: Mapping[str, Any], presets: Mapping[str, Preset], *, label: Callable[[str], str] = quoted,
             precision_needs_preset: bool = False) -> Any:
    """The peak per device a job's fields name, in 10^12 FLOP/s: ``peak_tflops`` as typed (checked by the
    constructor that takes it), or the ``preset``'s dense tensor rate at ``precision`` (default bf16),
    never another precision's; exactly one of the two. ``precision_needs_preset``: refuse ``precision``
    beside ``peak_tflops`` (where the precision would name nothing)."""
    preset_id = fields.get("preset")
    peak: Any = fields.get("peak_tflops")
    if (preset_id is None) == (peak is None):
        raise FieldError(f"needs exactly one of {label('preset')} and {label('peak_tflops')}", "preset")
    if preset_id is None:
        if precision_needs_preset and fields.get("precision") is not None:
            raise FieldError(f"{label('precision')} goes with {label('preset')}; {label('peak_tflops')} is "
                             "already the peak to use", "precision")
        checks.one_of(fields.get("precision", DEFAULT_PRECISION), label("precision"), "precision", choices=PRECISIONS)
        return peak
    precision = checks.one_of(fields.get("precision") or DEFAULT_PRECISION, label("precision"), "precision",
                              choices=PRECISIONS)
    preset = presets.get(preset_id) if isinstance(preset_id, str) else None
    if preset is None:
        raise FieldError(
            f"{label('preset')}: {unknown_id('preset', preset_id, presets)}", "preset"
        )
    found = preset_peak_tflops(preset, precision)
    if found is None:
        raise FieldError(f"{label('precision')} {precision}: {preset.missing_peak(precision)}", "precision")
    return found


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
    model: ModelPreset | None = None  # the preset params and layers/heads/head_dim came from
    embeddings: bool = True  # whether params counts the model's embeddings

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
        if self.model is not None:
            self._check_model()
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
        self._check_possible()

    def _check_possible(self) -> None:
        """No job runs its devices past their peak: HFU (≥ MFU) above 100 % is a slip in a unit, most often
        per-GPU throughput given as the job's, a count in billions, or a peak in PFLOP/s."""
        result = self.utilization()
        if result.hfu > 1:
            label = self.label
            raise FieldError(
                f"{label('tokens_per_second')} {self.tokens_per_second:g} over {self.gpus} devices of "
                f"{self.peak_tflops:g} TFLOP/s gives an MFU of {result.mfu * 100:.1f} % "
                f"(HFU {result.hfu * 100:.1f} %), above the 100 % no job reaches: check the units of "
                f"{label('params')}, {label('tokens_per_second')} (the whole job's, not one GPU's) and the peak",
                "tokens_per_second")

    def _check_model(self) -> None:
        """With a model, params and the attention shape must be the model's (:func:`model_count`)."""
        model = self.model
        assert model is not None
        expected = model.active_params - (0 if self.embeddings else model.embedding_params)
        if self.params != expected:
            raise FieldError(f"{self.label('params')} {self.params:g} is not {model.id}'s count under this "
                             f"convention ({expected:g})", "params")
        for key in ("layers", "heads", "head_dim"):
            if getattr(self, key) not in (None, getattr(model, key)):  # None: no attention term (no seq_len)
                raise FieldError(f"{self.label(key)} {getattr(self, key)} is not {model.id}'s "
                                 f"({getattr(model, key)})", key)

    @property
    def count(self) -> ModelCount:
        """What this job's model FLOPs per token are counted from."""
        return ModelCount(self.params, self.layers, self.heads, self.head_dim, self.seq_len, self.model,
                          self.embeddings)

    @property
    def params_convention(self) -> str:
        """Which N the job counts, in words (:attr:`ModelCount.params_convention`)."""
        return self.count.params_convention

    @property
    def attention_convention(self) -> str:
        """Whether and how the attention term is counted (:attr:`ModelCount.attention_convention`)."""
        return self.count.attention_convention

    @classmethod
    def from_fields(
        cls,
        fields: Mapping[str, Any],
        presets: Mapping[str, Preset],
        *,
        label: Callable[[str], str] = quoted,
        name: str | None = None,
        models: ModelsLoader | None = None,
    ) -> TrainingJob:
        """A job from raw field values (numbers or their text), keys as in :data:`JOB_FIELDS`.

        Exactly one of ``preset`` and ``peak_tflops``; ``precision`` picks the preset's peak.
        ``params`` or ``model`` (looked up in ``models()``); see :func:`model_count`.
        """
        for key in fields:
            if key not in JOB_FIELDS:
                allowed = ", ".join(label(k) for k in JOB_FIELDS)
                raise FieldError(f"unknown key {label(str(key))} (allowed: {allowed})", str(key))
        if fields.get("params") is None and fields.get("model") is None:
            raise FieldError(f"{label('params')} is required (or {label('model')}, a model preset)", "params")
        for key in ("tokens_per_second", "gpus"):
            if fields.get(key) is None:
                raise FieldError(f"{label(key)} is required", key)
        preset_id = fields.get("preset")
        precision = fields.get("precision", DEFAULT_PRECISION)
        peak = job_peak(fields, presets, label=label)
        count = model_count(fields, models, label=label)
        return cls(
            params=count.params,
            tokens_per_second=fields["tokens_per_second"],
            gpus=fields["gpus"],
            peak_tflops=peak,
            precision=precision,
            preset_id=preset_id,
            layers=count.layers, heads=count.heads, head_dim=count.head_dim, seq_len=count.seq_len,
            recompute=fields.get("recompute", "none"),
            tokens=fields.get("tokens"),
            name=name,
            label=label,
            model=count.model,
            embeddings=count.embeddings,
        )

    @property
    def peak_flops_per_s(self) -> float:
        """Peak per device in FLOP/s (TFLOP/s × 10^12)."""
        return self.peak_tflops * 1e12

    @property
    def attention(self) -> dict[str, int] | None:
        """The four attention figures, or ``None`` without them (a model without ``seq_len``)."""
        return self.count.attention

    def utilization(self) -> Utilization:
        """MFU and HFU (:func:`ainotes.core.utilization.utilization`: 6N + 12·L·H·Q·S model FLOPs per token)."""
        return utilization(
            self.params,
            tokens_per_second=self.tokens_per_second,
            gpus=self.gpus,
            peak_flops_per_s_per_gpu=self.peak_flops_per_s,
            recompute=self.recompute,  # type: ignore[arg-type]
            **(self.attention or {}),
        )


TRAIN_TIME_FIELDS = ("params", "tokens", "gpus", "mfu", "preset", "precision", "peak_tflops", *ATTENTION_FIELDS,
                     *MODEL_FIELDS)


@dataclass(frozen=True)
class TrainingRun:
    """A training run to time: N (and the attention shape), D tokens, G devices at utilization U of
    peak P per device; what ``ainotes train-time`` and ``{{ train-time ... }}`` build. Validated once,
    here; ``label`` names fields in messages (not compared)."""

    count: ModelCount
    tokens: float
    gpus: int
    mfu: float
    peak_tflops: float
    precision: str | None = None  # the preset's precision the peak is taken at (None: peak_tflops typed)
    preset_id: str | None = None
    label: Callable[[str], str] = field(default=quoted, compare=False, repr=False)

    def __post_init__(self) -> None:
        label, set_ = self.label, object.__setattr__
        set_(self, "tokens", checks.positive_number(self.tokens, label("tokens"), "tokens"))
        set_(self, "gpus", checks.whole_number(self.gpus, label("gpus"), "gpus"))
        set_(self, "mfu", checks.fraction(self.mfu, label("mfu"), "mfu"))
        set_(self, "peak_tflops", checks.positive_number(self.peak_tflops, label("peak_tflops"), "peak_tflops"))

    @classmethod
    def from_fields(
        cls,
        fields: Mapping[str, Any],
        presets: Mapping[str, Preset],
        *,
        label: Callable[[str], str] = quoted,
        models: ModelsLoader | None = None,
    ) -> TrainingRun:
        """A run from raw field values (numbers or their text), keys as in :data:`TRAIN_TIME_FIELDS`:
        ``params`` or ``model`` (:func:`model_count`), ``tokens``, ``gpus``, ``mfu``, and exactly one of
        ``preset`` (with ``precision``, default bf16) and ``peak_tflops`` (:func:`job_peak`)."""
        for key in fields:
            if key not in TRAIN_TIME_FIELDS:
                allowed = ", ".join(label(k) for k in TRAIN_TIME_FIELDS)
                raise FieldError(f"unknown key {label(str(key))} (allowed: {allowed})", str(key))
        for key in ("tokens", "gpus", "mfu"):
            if fields.get(key) is None:
                raise FieldError(f"{label(key)} is required", key)
        peak = job_peak(fields, presets, label=label, precision_needs_preset=True)
        count = model_count(fields, models, label=label)
        preset_id = fields.get("preset")
        return cls(count=count, tokens=fields["tokens"], gpus=fields["gpus"], mfu=fields["mfu"], peak_tflops=peak,
                   precision=(fields.get("precision") or DEFAULT_PRECISION) if preset_id is not None else None,
                   preset_id=preset_id, label=label)

    def time(self) -> TrainingTime:
        """Compute and wall-clock time (:func:`ainotes.core.utilization.time_to_train`)."""
        return time_to_train(self.count.params, tokens=self.tokens, gpus=self.gpus, mfu=self.mfu,
                             peak_flops_per_s_per_gpu=self.peak_tflops * 1e12, **(self.count.attention or {}))
