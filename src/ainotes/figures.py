"""Inline figures: ``{{ ridge h100 }}`` in prose becomes ``295 FLOP/byte``.

Every number a sentence states comes from the core through one of these forms,
so editing a preset changes the prose along with the charts. Each form returns
plain text; :func:`markdown_text` makes it safe to put back into Markdown.

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

The last three live in :mod:`ainotes.cost_notes`.

P is a precision (``fp64 fp32 tf32 fp16 bf16 fp8 fp4 int8``), UNIT ``tensor``
or ``vector`` (default: ``vector`` for fp32, the CUDA-core path, else
``tensor``): ``{{ peak h100 fp8 }}``, ``{{ ridge b200 fp4 }}``,
``{{ peak h100 fp32 vector }}``. Each word may appear once; any other word is
an error, and so is a ceiling the preset lacks or does not give (never another
precision's figure). A kernel meets the roof of its own dtype
(``roofline.kernel_ceiling``); whether it is 2:4 sparse is part of its spec.

Job keys: ``params``, ``tokens_per_second``, ``gpus``, ``peak_tflops`` or
``preset``, and optionally ``layers heads head_dim seq_len`` and ``recompute``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from typing import cast

from latex2mathml.converter import convert as latex_to_mathml

from ainotes import collectives, cost_notes, kernels, roofline, units, utilization
from ainotes.errors import InputError
from ainotes.hardware import PRECISIONS, UNITS, Preset, check_precision, default_unit, precision_label

_MARKDOWN_SPECIALS = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>&])")


def markdown_text(text: str) -> str:
    """Backslash-escape Markdown's specials (and ``<``, ``&``) so ``text`` reads literally."""
    escaped = _MARKDOWN_SPECIALS.sub(r"\\\1", text)
    return escaped.replace("\\<", "&lt;").replace("\\>", "&gt;").replace("\\&", "&amp;")


def mathml(latex: str, *, block: bool) -> str:
    """LaTeX to MathML at build time, so formulas need no script and no web font."""
    try:
        return latex_to_mathml(latex.strip(), display="block" if block else "inline")
    except Exception as exc:  # latex2mathml raises many kinds for bad input
        raise InputError(f"math {latex.strip()!r} could not be converted: {exc}") from None


def evaluate(body: str, presets: Mapping[str, Preset], links: cost_notes.LinksLoader | None = None) -> str:
    """The text of one inline figure body such as ``ridge h100 sparse``.

    ``links`` loads the interconnect presets for the cost forms (:mod:`ainotes.cost_notes`).
    """
    name, args, options = _parse(body)
    if name in cost_notes.FORMS:
        return cost_notes.FORMS[name](args, options, presets, links)
    form = _FORMS.get(name)
    if form is None:
        known = sorted([*_FORMS, *cost_notes.FORMS])
        raise InputError(f"unknown inline figure {name!r} (known: {', '.join(known)})")
    return form(args, options, presets)


def _parse(body: str) -> tuple[str, list[str], dict[str, str]]:
    words = body.split()
    if not words:
        raise InputError("inline figure '{{ }}' is empty")
    args: list[str] = []
    options: dict[str, str] = {}
    for word in words[1:]:
        key, sep, value = word.partition("=")
        if sep:
            options[key] = value
        else:
            args.append(word)
    return words[0], args, options


def _preset(args: list[str], presets: Mapping[str, Preset], form: str) -> Preset:
    if not args:
        raise InputError(f"'{form}' needs a preset id, e.g. {{{{ {form} h100 }}}}")
    preset = presets.get(args[0])
    if preset is None:
        raise InputError(f"unknown preset {args[0]!r} in '{form}' (known: {', '.join(presets)})")
    return preset


def _flag(args: list[str], allowed: tuple[str, ...], form: str, positional: int) -> set[str]:
    extra = args[positional:]
    flags = set(extra)
    unknown = flags - set(allowed)
    if unknown:
        raise InputError(f"'{form}' does not take {sorted(unknown)[0]!r} (allowed: {', '.join(allowed) or 'nothing'})")
    return flags


def _no_options(options: dict[str, str], form: str) -> None:
    if options:
        raise InputError(f"'{form}' takes no key=value options: {', '.join(options)}")


def _names(args, options, presets) -> str:
    _no_options(options, "presets")
    names = [p.name for p in presets.values()]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _count(args, options, presets) -> str:
    _no_options(options, "preset-count")
    return str(len(presets))


def _name(args, options, presets) -> str:
    return _preset(args, presets, "name").name


def _ceiling_words(args: list[str], form: str, start: int) -> tuple[str, str, bool]:
    """(precision, unit, sparse) from the words after the preset id; each kind of word at most once."""
    precision: str | None = None
    unit: str | None = None
    sparse = False
    for word in args[start:]:
        kind = next((name for name, words in (("precision", PRECISIONS), ("unit", UNITS), ("sparse", ("sparse",)))
                     if word in words), None)
        if kind is None:
            raise InputError(f"'{form}' does not take {word!r} (allowed: a precision, {', '.join(PRECISIONS)}; "
                             f"a unit, {', '.join(UNITS)}; sparse)")
        if (kind == "precision" and precision) or (kind == "unit" and unit) or (kind == "sparse" and sparse):
            raise InputError(f"'{form}' takes one {kind}: {' '.join(args[start:])!r}")
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
    status = preset.status(precision, unit)
    if status == "no path":
        raise InputError(f"'{form}': {preset.id} has no {precision_label(precision, unit)} path")
    if status == "not given":
        raise InputError(f"'{form}': {preset.id}'s {precision_label(precision, unit)} rate is not given "
                         f"in {preset.file or 'its preset file'}")


def _rate(precision: str, flops_per_s: float) -> str:
    # int8 rates count integer operations: OP/s, not FLOP/s.
    return units.si(flops_per_s, "OP/s") if precision == "int8" else units.flops_per_s(flops_per_s)


def _peak(args, options, presets) -> str:
    _no_options(options, "peak")
    preset = _preset(args, presets, "peak")
    precision, unit, sparse = _ceiling_words(args, "peak", 1)
    _given_path(preset, precision, unit, "peak")
    tflops = preset.peak_tflops(precision, unit=unit, sparsity=sparse)
    assert tflops is not None  # _given_path refused the other cases
    return _rate(precision, tflops * 1e12)


def _ridge_of(preset: Preset, precision: str, unit: str, sparse: bool) -> float | None:
    return preset.ridge_flop_per_byte(sparse, precision=precision, unit=unit)


def _ridges(args, options, presets) -> str:
    """Every preset's ridge at one ceiling, in words; presets without it are named as such."""
    _no_options(options, "ridges")
    precision, unit, sparse = _ceiling_words(args, "ridges", 0)
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


def _bandwidth(args, options, presets) -> str:
    preset = _preset(args, presets, "bandwidth")
    _flag(args, (), "bandwidth", 1)
    return units.bytes_per_s(preset.memory_bandwidth_bytes_per_s)


def _ridge(args, options, presets) -> str:
    _no_options(options, "ridge")
    preset = _preset(args, presets, "ridge")
    precision, unit, sparse = _ceiling_words(args, "ridge", 1)
    _given_path(preset, precision, unit, "ridge")
    ridge = _ridge_of(preset, precision, unit, sparse)
    assert ridge is not None
    return units.intensity(ridge)


def _kernel(args: list[str], form: str, index: int = 0) -> kernels.Kernel:
    if len(args) <= index:
        raise InputError(f"'{form}' needs a kernel spec such as gemm:8192x8192x8192:bf16")
    return kernels.parse_kernel_spec(args[index])


def _intensity(args, options, presets) -> str:
    return units.intensity(_kernel(args, "intensity").intensity_flop_per_byte)


def _kernel_flops(args, options, presets) -> str:
    return units.si(_kernel(args, "kernel-flops").flops, "FLOP")


def _kernel_bytes(args, options, presets) -> str:
    return units.si(_kernel(args, "kernel-bytes").bytes_moved, "B")


def _roof(args, options, form, presets) -> roofline.KernelRoof:
    _no_options(options, form)
    preset = _preset(args, presets, form)
    kernel = _kernel(args, form, 1)
    if len(args) > 2:
        hint = " (a 2:4 sparse kernel says so in its spec: gemm:MxNxK:fp8:sparse)" if "sparse" in args[2:] else ""
        raise InputError(f"'{form}' takes a preset id and a kernel spec only: {' '.join(args[2:])!r}{hint}")
    roof = roofline.kernel_roof(preset, kernel)
    if roof.bound == "unknown":
        raise InputError(f"'{form}': {roof.reason}")
    return roof


def _attainable(args, options, presets) -> str:
    roof = _roof(args, options, "attainable", presets)
    if roof.attainable_flops_per_s is None:
        raise InputError(f"'attainable': {roof.reason} on {args[0]}, so no ceiling for {args[1]}")
    return _rate(roof.precision, roof.attainable_flops_per_s)


def _bound(args, options, presets) -> str:
    roof = _roof(args, options, "bound", presets)
    return f"unsupported ({roof.reason})" if roof.bound == "unsupported" else f"{roof.bound}-bound"


def _bus_factor(args, options, presets) -> str:
    if not args:
        raise InputError("'bus-factor' needs an op, e.g. {{ bus-factor all-reduce }}")
    ranks = _int_option(options, "ranks", 4) or 4
    return units.significant(collectives.bus_factor(args[0], ranks), 3)


def _int_option(options: dict[str, str], key: str, default: int | None = None) -> int | None:
    value = options.get(key)
    if value is None:
        return default
    try:
        number = float(value)
    except ValueError:
        raise InputError(f"{key}= must be a number: {value!r}") from None
    if not math.isfinite(number) or number != int(number) or number < 1:
        raise InputError(f"{key}= must be a whole number >= 1: {value!r}")
    return int(number)


def _job(options: dict[str, str], presets: Mapping[str, Preset], form: str) -> utilization.Utilization:
    allowed = {"params", "tokens_per_second", "gpus", "peak_tflops", "preset",
               "layers", "heads", "head_dim", "seq_len", "recompute"}
    unknown = set(options) - allowed
    if unknown:
        raise InputError(f"'{form}' does not take {sorted(unknown)[0]}= (allowed: {', '.join(sorted(allowed))})")

    def number(key: str) -> float:
        if key not in options:
            raise InputError(f"'{form}' needs {key}=")
        try:
            value = float(options[key])
        except ValueError:
            raise InputError(f"{key}= must be a number: {options[key]!r}") from None
        if not math.isfinite(value) or value <= 0:
            raise InputError(f"{key}= must be a finite number > 0: {options[key]!r}")
        return value

    if ("preset" in options) == ("peak_tflops" in options):
        raise InputError(f"'{form}' needs exactly one of preset= and peak_tflops=")
    if "preset" in options:
        peak_flops_per_s = _preset([options["preset"]], presets, form).peak_flops_per_s(False)
    else:
        peak_flops_per_s = number("peak_tflops") * 1e12
    attention = {k: _int_option(options, k) for k in ("layers", "heads", "head_dim", "seq_len")}
    return utilization.utilization(
        number("params"),
        tokens_per_second=number("tokens_per_second"),
        gpus=_int_option(options, "gpus") or int(number("gpus")),
        peak_flops_per_s_per_gpu=peak_flops_per_s,
        recompute=cast("utilization.Recompute", options.get("recompute", "none")),  # utilization checks it
        **attention,
    )


def _mfu(args, options, presets) -> str:
    return units.percent(_job(options, presets, "mfu").mfu)


def _hfu(args, options, presets) -> str:
    return units.percent(_job(options, presets, "hfu").hfu)


def _flops_per_token(args, options, presets) -> str:
    return units.si(_job(options, presets, "flops-per-token").model_flops_per_token, "FLOP")


_FORMS: dict[str, Callable[[list[str], dict[str, str], Mapping[str, Preset]], str]] = {
    "presets": _names,
    "preset-count": _count,
    "name": _name,
    "peak": _peak,
    "bandwidth": _bandwidth,
    "ridge": _ridge,
    "ridges": _ridges,
    "intensity": _intensity,
    "kernel-flops": _kernel_flops,
    "kernel-bytes": _kernel_bytes,
    "attainable": _attainable,
    "bound": _bound,
    "bus-factor": _bus_factor,
    "mfu": _mfu,
    "hfu": _hfu,
    "flops-per-token": _flops_per_token,
}
