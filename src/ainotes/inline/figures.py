"""Inline figures: ``{{ ridge h100 }}`` in prose becomes ``295 FLOP/byte``.

Every number a sentence states comes from the core through one of these forms,
so editing a preset changes the prose along with the charts. Each form returns
plain text, which the Markdown extension puts in the page as text (escaped).

Forms (documented in the README and on the "Adding a GPU preset" page):

=====================================  =========================================
``{{ presets }}``                      the presets' names as a list in words
``{{ preset-count }}``                 how many presets there are
``{{ name ID }}``                      a preset's display name
``{{ peak ID [P] [UNIT] [sparse] }}``  a ceiling, e.g. ``989.4 TFLOP/s`` (default bf16 tensor)
``{{ bandwidth ID }}``                 its memory bandwidth, e.g. ``3.35 TB/s``
``{{ ridge ID [P] [UNIT] [sparse] }}`` its ridge point, e.g. ``295 FLOP/byte``
``{{ ridges [P] [UNIT] [sparse] }}``   every preset's ridge point, in words
``{{ intensity SPEC }}``               a kernel's arithmetic intensity
``{{ kernel-flops SPEC }}``            a kernel's FLOPs
``{{ kernel-bytes SPEC }}``            a kernel's minimum bytes moved
``{{ attainable ID SPEC }}``           the kernel's ceiling at its own precision
``{{ bound ID SPEC }}``                ``memory-bound``, ``compute-bound`` or
                                       ``unsupported (no FP8 path)``
``{{ bus-factor OP [ranks=N] }}``      ring bus factor, e.g. ``1.5``
``{{ mfu KEY=VALUE ... }}``            MFU of a training job, e.g. ``46.2 %``
``{{ hfu KEY=VALUE ... }}``            HFU of the same job (``recompute=``)
``{{ flops-per-token KEY=VALUE ... }}``  model FLOPs per token
``{{ train-time KEY=VALUE ... }}``     days (or GPU-hours, FLOPs) to train
``{{ collective-time OP ... }}``       a collective's α–β time (or algbw, busbw)
``{{ crossover OP ... }}``             where the fastest algorithm changes
=====================================  =========================================

The last three live in :mod:`ainotes.inline.cost`.

P is a precision (``fp64 fp32 tf32 fp16 bf16 fp8 fp4 int8``), UNIT ``tensor``
or ``vector`` (default: ``vector`` for fp32, the CUDA-core path, else
``tensor``): ``{{ peak h100 fp8 }}``, ``{{ ridge b200 fp4 }}``,
``{{ peak h100 fp32 vector }}``. Each word may appear once; any other word is
an error, and so is a ceiling the preset lacks or does not give (never another
precision's figure). A kernel meets the roof of its own dtype
(``roofline.kernel_ceiling``); whether it is 2:4 sparse is part of its spec.

Job keys (:class:`ainotes.core.jobs.TrainingJob`): ``params``, ``tokens_per_second``,
``gpus``, ``peak_tflops`` or ``preset`` (with ``precision``, default ``bf16``), and
optionally ``layers heads head_dim seq_len`` and ``recompute``; or ``model`` (a model
preset, with ``seq_len`` and ``embeddings``) instead of ``params layers heads head_dim``.
The job forms (mfu, hfu, flops-per-token, train-time) live in :mod:`ainotes.inline.models`.
Every form is strict: an unknown option, an extra word or a misspelt key is an error
naming what is allowed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from latex2mathml.converter import convert as latex_to_mathml

from ainotes.base import units
from ainotes.base.errors import InputError
from ainotes.base.textcheck import closest, short, unknown_id
from ainotes.core import collective_cost, kernels, roofline
from ainotes.core.hardware import PRECISIONS, UNITS, Preset, check_precision, default_unit, precision_label
from ainotes.inline import cost as cost_forms
from ainotes.inline import inference as inference_forms
from ainotes.inline import memory as memory_forms
from ainotes.inline import parallelism as parallel_forms
from ainotes.inline.formcontext import Form, FormContext, ModelsLoader
from ainotes.inline.models import FORMS as MODEL_FORMS


def mathml(latex: str, *, block: bool) -> str:
    """LaTeX to MathML at build time, so formulas need no script and no web font."""
    try:
        return latex_to_mathml(latex.strip(), display="block" if block else "inline")
    except Exception as exc:  # latex2mathml raises many kinds for bad input
        raise InputError(f"math {latex.strip()!r} could not be converted: {exc}") from None


# Forms of the later chapters (models, memory, inference): name → form(args, options, context),
# each module's FORMS merged here, one line per module.
CHAPTER_FORMS: dict[str, Form] = {}


def _register_chapter(forms: Mapping[str, Form]) -> None:
    """Add a chapter's forms; a name another chapter (or the core forms) already uses is a
    programming error, caught at import rather than by one form silently replacing another."""
    for name, form in forms.items():
        if name in CHAPTER_FORMS or name in cost_forms.FORMS:
            raise RuntimeError(f"inline form {name!r} is registered twice")
        CHAPTER_FORMS[name] = form


_register_chapter(MODEL_FORMS)
_register_chapter(memory_forms.FORMS)
_register_chapter(inference_forms.FORMS)
_register_chapter(parallel_forms.FORMS)


def evaluate(body: str, presets: Mapping[str, Preset], links: cost_forms.LinksLoader | None = None,
             models: ModelsLoader | None = None) -> str:
    """The text of one inline figure body such as ``ridge h100 sparse``.

    Strict: a missing or extra word, an unknown flag or ``key=`` option is an error that
    names the allowed ones. ``links`` loads the interconnect presets for the cost forms
    (:mod:`ainotes.inline.cost`).
    """
    words = body.split()
    if not words:
        raise InputError("inline figure '{{ }}' is empty")
    if words[0] in cost_forms.FORMS:
        args, options = _split_options(words[0], words[1:])
        return cost_forms.FORMS[words[0]](args, options, presets, links, models)
    if words[0] in CHAPTER_FORMS:
        args, options = _split_options(words[0], words[1:])
        return CHAPTER_FORMS[words[0]](args, options, FormContext(presets, links, models))
    form = _FORMS.get(words[0])
    if form is None:
        known = sorted([*_FORMS, *cost_forms.FORMS, *CHAPTER_FORMS])
        near = closest(words[0], known)
        raise InputError(f"unknown inline figure {words[0]!r} (known: {', '.join(known)})"
                         + (f": did you mean {near!r}?" if near is not None else ""))
    return form.evaluate(words[0], words[1:], presets)


def unclosed_message(written: str) -> str:
    """What is wrong with ``written``, an inline figure from its ``{{`` to the end of its line
    that no ``}}`` closes, and what was likely meant."""
    body = written[2:].split("}", 1)[0].split("{{", 1)[0].strip()
    closing = re.search(r"\}+", written)
    shown = short(written[: closing.end()] if closing else written if len(written) < 60 else written[:59] + "…")
    if closing and body:
        return f"inline figure {shown} is not closed: write {short('{{ ' + body + ' }}')}"
    return f"inline figure {shown} is not closed: end it with '}}}}' on the same line"


def _split_options(name: str, words: list[str]) -> tuple[list[str], dict[str, str]]:
    """Positional words and ``key=value`` options; a key given twice is an error."""
    args: list[str] = []
    options: dict[str, str] = {}
    for word in words:
        key, sep, value = word.partition("=")
        if not sep:
            args.append(word)
        elif key in options:
            raise InputError(f"'{name}' is given {key}= twice")
        else:
            options[key] = value
    return args, options


@dataclass(frozen=True)
class _Call:
    """One use of a form: its positional words, flags and ``key=value`` options, checked."""

    args: tuple[str, ...]
    flags: frozenset[str]
    options: Mapping[str, str]
    ceiling: tuple[str, str, bool] | None = None  # (precision, unit, sparse) for the ceiling forms


@dataclass(frozen=True)
class _Form:
    """An inline form: the words it needs, the flags and options it allows, and what it computes."""

    compute: Callable[[_Call, Mapping[str, Preset]], str]
    needs: tuple[str, ...] = ()  # positional words, e.g. ("ID", "SPEC")
    flags: tuple[str, ...] = ()
    options: tuple[str, ...] = ()
    ceiling: bool = False  # takes [P] [UNIT] [sparse] after its positional words
    hints: Mapping[str, str] = field(default_factory=dict)  # a word it refuses → what to write instead

    def allowed(self) -> str:
        words = [*self.flags, *(f"{key}=" for key in self.options)]
        if self.ceiling:
            words = [f"a precision, {', '.join(PRECISIONS)}", f"a unit, {', '.join(UNITS)}", "sparse"]
        return "; ".join(words) if self.ceiling else (", ".join(words) if words else "nothing more")

    def usage(self, name: str) -> str:
        extra = ["[P]", "[UNIT]", "[sparse]"] if self.ceiling else []
        parts = [name, *_PLACEHOLDERS.get(self.needs, self.needs), *extra, *(f"[{flag}]" for flag in self.flags),
                 *(f"[{key}=...]" for key in self.options)]
        return "{{ " + " ".join(parts) + " }}"

    def evaluate(self, name: str, words: list[str], presets: Mapping[str, Preset]) -> str:
        args: list[str] = []
        flags: set[str] = set()
        extra: list[str] = []
        options: dict[str, str] = {}
        for word in words:
            key, sep, value = word.partition("=")
            if sep:
                if not self.options:
                    raise InputError(f"'{name}' takes no key=value options: {key}= (allowed: {self.allowed()})")
                if key not in self.options:
                    near = closest(key, self.options)
                    raise InputError(f"'{name}' does not take {key}= (allowed: {self.allowed()})"
                                     + (f": did you mean {near}=?" if near is not None else ""))
                if key in options:
                    raise InputError(f"'{name}' is given {key}= twice")
                options[key] = value
            elif len(args) < len(self.needs):
                args.append(word)
            elif self.ceiling:
                extra.append(word)  # _ceiling_words checks them
            elif word in self.flags:
                if word in flags:
                    raise InputError(f"'{name}' is given {word!r} twice")
                flags.add(word)
            else:
                hint = self.hints.get(word, "")
                raise InputError(f"'{name}' does not take {word!r} (allowed: {self.allowed()}){hint}")
        if len(args) < len(self.needs):
            raise InputError(f"'{name}' needs {' and '.join(self.needs[len(args):])}: {self.usage(name)}")
        ceiling = _ceiling_words(extra, name, self.allowed()) if self.ceiling else None
        return self.compute(_Call(tuple(args), frozenset(flags), options, ceiling), presets)


def _preset(preset_id: str, presets: Mapping[str, Preset], form: str) -> Preset:
    preset = presets.get(preset_id)
    if preset is None:
        raise InputError(f"{unknown_id('preset', preset_id, presets)} in '{form}'")
    return preset


def _names(call: _Call, presets: Mapping[str, Preset]) -> str:
    names = [p.name for p in presets.values()]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _count(call: _Call, presets: Mapping[str, Preset]) -> str:
    return str(len(presets))


def _name(call: _Call, presets: Mapping[str, Preset]) -> str:
    return _preset(call.args[0], presets, "name").name


def _ceiling_words(words: list[str], form: str, allowed: str) -> tuple[str, str, bool]:
    """(precision, unit, sparse) from the words after the preset id; each kind of word at most once."""
    precision: str | None = None
    unit: str | None = None
    sparse = False
    for word in words:
        kind = next((name for name, known in (("precision", PRECISIONS), ("unit", UNITS), ("sparse", ("sparse",)))
                     if word in known), None)
        if kind is None:
            near = closest(word, (*PRECISIONS, *UNITS, "sparse")) if len(word) > 3 else None  # fp6 is not fp64
            raise InputError(f"'{form}' does not take {word!r} (allowed: {allowed})"
                             + (f": did you mean {near!r}?" if near is not None else ""))
        if (kind == "precision" and precision) or (kind == "unit" and unit) or (kind == "sparse" and sparse):
            raise InputError(f"'{form}' takes one {kind}: {' '.join(words)!r}")
        if kind == "precision":
            precision = word
        elif kind == "unit":
            unit = word
        else:
            sparse = True
    precision = precision or "bf16"
    unit = unit or default_unit(precision)
    check_precision(precision, unit)
    return precision, unit, sparse


def _given_path(preset: Preset, precision: str, unit: str, form: str) -> None:
    """Refuse a ceiling the preset lacks or leaves out, in words, rather than print another one."""
    if preset.status(precision, unit) in ("no path", "not given"):
        raise InputError(f"'{form}': {preset.missing_peak(precision, unit)}")


def _rate(precision: str, flops_per_s: float) -> str:
    # int8 rates count integer operations: OP/s, not FLOP/s.
    return units.si(flops_per_s, "OP/s") if precision == "int8" else units.flops_per_s(flops_per_s)


def _peak(call: _Call, presets: Mapping[str, Preset]) -> str:
    preset = _preset(call.args[0], presets, "peak")
    assert call.ceiling is not None
    precision, unit, sparse = call.ceiling
    _given_path(preset, precision, unit, "peak")
    tflops = preset.peak_tflops(precision, unit=unit, sparsity=sparse)
    assert tflops is not None  # _given_path refused the other cases
    return _rate(precision, tflops * 1e12)


def _ridge_of(preset: Preset, precision: str, unit: str, sparse: bool) -> float | None:
    return preset.ridge_flop_per_byte(sparse, precision=precision, unit=unit)


def _ridges(call: _Call, presets: Mapping[str, Preset]) -> str:
    """Every preset's ridge at one ceiling, in words; presets without it are named as such."""
    assert call.ceiling is not None
    precision, unit, sparse = call.ceiling
    at, without = [], []
    for preset in presets.values():
        ridge = _ridge_of(preset, precision, unit, sparse)
        if ridge is None:
            label = precision_label(precision, unit)
            without.append(f"the {preset.name} has no {label} path" if preset.status(precision, unit) == "no path"
                           else f"the {preset.name} preset does not give its {label} rate")
        else:
            at.append(f"{preset.name} at {units.intensity(ridge)}")
    if not at:
        raise InputError(f"'ridges': no preset has a {precision_label(precision, unit)} ceiling")
    text = _in_words(at)
    return text + (f" ({_in_words(without)})" if without else "")


def _in_words(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _bandwidth(call: _Call, presets: Mapping[str, Preset]) -> str:
    return units.bytes_per_s(_preset(call.args[0], presets, "bandwidth").memory_bandwidth_bytes_per_s)


def _ridge(call: _Call, presets: Mapping[str, Preset]) -> str:
    preset = _preset(call.args[0], presets, "ridge")
    assert call.ceiling is not None
    precision, unit, sparse = call.ceiling
    _given_path(preset, precision, unit, "ridge")
    ridge = _ridge_of(preset, precision, unit, sparse)
    assert ridge is not None
    return units.intensity(ridge)


def _intensity(call: _Call, presets: Mapping[str, Preset]) -> str:
    return units.intensity(kernels.parse_kernel_spec(call.args[0]).intensity_flop_per_byte)


def _kernel_flops(call: _Call, presets: Mapping[str, Preset]) -> str:
    return units.si(kernels.parse_kernel_spec(call.args[0]).flops, "FLOP")


def _kernel_bytes(call: _Call, presets: Mapping[str, Preset]) -> str:
    return units.si(kernels.parse_kernel_spec(call.args[0]).bytes_moved, "B")


def _roof(call: _Call, presets: Mapping[str, Preset], form: str) -> roofline.KernelRoof:
    preset = _preset(call.args[0], presets, form)
    roof = roofline.kernel_roof(preset, kernels.parse_kernel_spec(call.args[1]))
    if roof.bound == "unknown":
        raise InputError(f"'{form}': {roof.reason}")
    return roof


def _attainable(call: _Call, presets: Mapping[str, Preset]) -> str:
    roof = _roof(call, presets, "attainable")
    if roof.attainable_flops_per_s is None:
        raise InputError(f"'attainable': {roof.reason} on {call.args[0]}, so no ceiling for {call.args[1]}")
    return _rate(roof.precision, roof.attainable_flops_per_s)


def _bound(call: _Call, presets: Mapping[str, Preset]) -> str:
    roof = _roof(call, presets, "bound")
    return f"unsupported ({roof.reason})" if roof.bound == "unsupported" else f"{roof.bound}-bound"


def _bus_factor(call: _Call, presets: Mapping[str, Preset]) -> str:
    # The cost model's rank counts (2 to 1024, as collective-time), not the pictures' 2 to 8.
    ranks = collective_cost.check_ranks(call.options.get("ranks", "4"), "ranks=")
    return units.significant(collective_cost.bus_factor(call.args[0], ranks), 3)


_ID, _SPEC, _OP = "a preset id", "a kernel spec such as gemm:8192x8192x8192:bf16", "an op such as all-reduce"
_SPARSE_HINT = {"sparse": "; a 2:4 sparse kernel says so in its spec: gemm:MxNxK:fp8:sparse"}
_PLACEHOLDERS = {(_ID,): ("ID",), (_SPEC,): ("SPEC",), (_ID, _SPEC): ("ID", "SPEC"), (_OP,): ("OP",)}
_FORMS: dict[str, _Form] = {
    "presets": _Form(_names),
    "preset-count": _Form(_count),
    "name": _Form(_name, needs=(_ID,)),
    "peak": _Form(_peak, needs=(_ID,), ceiling=True),
    "bandwidth": _Form(_bandwidth, needs=(_ID,)),
    "ridge": _Form(_ridge, needs=(_ID,), ceiling=True),
    "ridges": _Form(_ridges, ceiling=True),
    "intensity": _Form(_intensity, needs=(_SPEC,)),
    "kernel-flops": _Form(_kernel_flops, needs=(_SPEC,)),
    "kernel-bytes": _Form(_kernel_bytes, needs=(_SPEC,)),
    "attainable": _Form(_attainable, needs=(_ID, _SPEC), hints=_SPARSE_HINT),
    "bound": _Form(_bound, needs=(_ID, _SPEC), hints=_SPARSE_HINT),
    "bus-factor": _Form(_bus_factor, needs=(_OP,), options=("ranks",)),
}
