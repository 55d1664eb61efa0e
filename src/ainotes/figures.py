"""Inline figures: ``{{ ridge h100 }}`` in prose becomes ``295 FLOP/byte``.

Every number a sentence states comes from the core through one of these forms,
so editing a preset changes the prose along with the charts. Each form returns
plain text; :func:`markdown_text` makes it safe to put back into Markdown.

Forms (documented in the README and on the "Adding a GPU preset" page):

=====================================  =========================================
``{{ presets }}``                      the presets' names as a list in words
``{{ preset-count }}``                 how many presets there are
``{{ name ID }}``                      a preset's display name
``{{ peak ID [sparse] }}``             its tensor ceiling, e.g. ``989.4 TFLOP/s``
``{{ bandwidth ID }}``                 its memory bandwidth, e.g. ``3.35 TB/s``
``{{ ridge ID [sparse] }}``            its ridge point, e.g. ``295 FLOP/byte``
``{{ intensity SPEC }}``               a kernel's arithmetic intensity
``{{ kernel-flops SPEC }}``            a kernel's FLOPs
``{{ kernel-bytes SPEC }}``            a kernel's minimum bytes moved
``{{ attainable ID SPEC [sparse] }}``  the roofline's ceiling for that kernel
``{{ bound ID SPEC [sparse] }}``       ``memory-bound`` or ``compute-bound``
``{{ bus-factor OP [ranks=N] }}``      ring bus factor, e.g. ``1.5``
``{{ mfu KEY=VALUE ... }}``            MFU of a training job, e.g. ``46.2 %``
``{{ hfu KEY=VALUE ... }}``            HFU of the same job (``recompute=``)
``{{ flops-per-token KEY=VALUE ... }}``  model FLOPs per token
``{{ train-time KEY=VALUE ... }}``     days (or GPU-hours, FLOPs) to train
``{{ collective-time OP ... }}``       a collective's α–β time (or algbw, busbw)
``{{ crossover OP ... }}``             where the fastest algorithm changes
=====================================  =========================================

The last three live in :mod:`ainotes.cost_notes`.

Job keys: ``params``, ``tokens_per_second``, ``gpus``, ``peak_tflops`` or
``preset``, and optionally ``layers heads head_dim seq_len`` and ``recompute``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping

from latex2mathml.converter import convert as latex_to_mathml

from ainotes import collectives, cost_notes, kernels, roofline, units, utilization
from ainotes.errors import InputError
from ainotes.hardware import Preset

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


def _peak(args, options, presets) -> str:
    preset = _preset(args, presets, "peak")
    sparse = "sparse" in _flag(args, ("sparse",), "peak", 1)
    return units.flops_per_s(preset.peak_flops_per_s(sparse))


def _bandwidth(args, options, presets) -> str:
    preset = _preset(args, presets, "bandwidth")
    _flag(args, (), "bandwidth", 1)
    return units.bytes_per_s(preset.memory_bandwidth_bytes_per_s)


def _ridge(args, options, presets) -> str:
    preset = _preset(args, presets, "ridge")
    sparse = "sparse" in _flag(args, ("sparse",), "ridge", 1)
    return units.intensity(preset.ridge_flop_per_byte(sparse))


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


def _roof(args, form, presets):
    preset = _preset(args, presets, form)
    kernel = _kernel(args, form, 1)
    sparse = "sparse" in _flag(args, ("sparse",), form, 2)
    peak = preset.peak_flops_per_s(sparse)
    return kernel.intensity_flop_per_byte, peak, preset.memory_bandwidth_bytes_per_s


def _attainable(args, options, presets) -> str:
    return units.flops_per_s(roofline.attainable_flops_per_s(*_roof(args, "attainable", presets)))


def _bound(args, options, presets) -> str:
    return f"{roofline.bound_at(*_roof(args, 'bound', presets))}-bound"


def _bus_factor(args, options, presets) -> str:
    if not args:
        raise InputError("'bus-factor' needs an op, e.g. {{ bus-factor all-reduce }}")
    ranks = _int_option(options, "ranks", 4)
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
        recompute=options.get("recompute", "none"),
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
