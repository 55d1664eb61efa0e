"""Inline figures: ``{{ ridge h100 }}`` in prose becomes ``295 FLOP/byte``.

Every number a sentence states comes from the core through one of these forms,
so editing a preset changes the prose along with the charts. Each form returns
plain text, which the Markdown extension puts in the page as text (escaped).

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
=====================================  =========================================

Job keys (:class:`ainotes.jobs.TrainingJob`): ``params``, ``tokens_per_second``,
``gpus``, ``peak_tflops`` or ``preset`` (with ``precision``, default ``bf16``), and
optionally ``layers heads head_dim seq_len`` and ``recompute``. Every form is strict:
an unknown option, an extra word or a misspelt key is an error naming what is allowed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from latex2mathml.converter import convert as latex_to_mathml

from ainotes import checks, collectives, kernels, roofline, units
from ainotes.errors import InputError
from ainotes.hardware import Preset
from ainotes.jobs import JOB_FIELDS, TrainingJob


def mathml(latex: str, *, block: bool) -> str:
    """LaTeX to MathML at build time, so formulas need no script and no web font."""
    try:
        return latex_to_mathml(latex.strip(), display="block" if block else "inline")
    except Exception as exc:  # latex2mathml raises many kinds for bad input
        raise InputError(f"math {latex.strip()!r} could not be converted: {exc}") from None


def evaluate(body: str, presets: Mapping[str, Preset]) -> str:
    """The text of one inline figure body such as ``ridge h100 sparse``.

    Strict: a missing or extra word, an unknown flag or ``key=`` option is an error that
    names the allowed ones.
    """
    words = body.split()
    if not words:
        raise InputError("inline figure '{{ }}' is empty")
    form = _FORMS.get(words[0])
    if form is None:
        raise InputError(f"unknown inline figure {words[0]!r} (known: {', '.join(sorted(_FORMS))})")
    return form.evaluate(words[0], words[1:], presets)


@dataclass(frozen=True)
class _Call:
    """One use of a form: its positional words, flags and ``key=value`` options, checked."""

    args: tuple[str, ...]
    flags: frozenset[str]
    options: Mapping[str, str]


@dataclass(frozen=True)
class _Form:
    """An inline form: the words it needs, the flags and options it allows, and what it computes."""

    compute: Callable[[_Call, Mapping[str, Preset]], str]
    needs: tuple[str, ...] = ()  # positional words, e.g. ("ID", "SPEC")
    flags: tuple[str, ...] = ()
    options: tuple[str, ...] = ()

    def allowed(self) -> str:
        words = [*self.flags, *(f"{key}=" for key in self.options)]
        return ", ".join(words) if words else "nothing more"

    def usage(self, name: str) -> str:
        parts = [name, *self.needs, *(f"[{flag}]" for flag in self.flags), *(f"[{key}=...]" for key in self.options)]
        return "{{ " + " ".join(parts) + " }}"

    def evaluate(self, name: str, words: list[str], presets: Mapping[str, Preset]) -> str:
        args: list[str] = []
        flags: set[str] = set()
        options: dict[str, str] = {}
        for word in words:
            key, sep, value = word.partition("=")
            if sep:
                if key not in self.options:
                    raise InputError(f"'{name}' does not take {key}= (allowed: {self.allowed()})")
                if key in options:
                    raise InputError(f"'{name}' is given {key}= twice")
                options[key] = value
            elif len(args) < len(self.needs):
                args.append(word)
            elif word in self.flags:
                flags.add(word)
            else:
                raise InputError(f"'{name}' does not take {word!r} (allowed: {self.allowed()})")
        if len(args) < len(self.needs):
            raise InputError(f"'{name}' needs {' and '.join(self.needs[len(args):])}: {self.usage(name)}")
        return self.compute(_Call(tuple(args), frozenset(flags), options), presets)


def _preset(preset_id: str, presets: Mapping[str, Preset], form: str) -> Preset:
    preset = presets.get(preset_id)
    if preset is None:
        raise InputError(f"unknown preset {preset_id!r} in '{form}' (known: {', '.join(presets)})")
    return preset


def _names(call: _Call, presets: Mapping[str, Preset]) -> str:
    names = [p.name for p in presets.values()]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _count(call: _Call, presets: Mapping[str, Preset]) -> str:
    return str(len(presets))


def _name(call: _Call, presets: Mapping[str, Preset]) -> str:
    return _preset(call.args[0], presets, "name").name


def _peak(call: _Call, presets: Mapping[str, Preset]) -> str:
    return units.flops_per_s(_preset(call.args[0], presets, "peak").peak_flops_per_s("sparse" in call.flags))


def _bandwidth(call: _Call, presets: Mapping[str, Preset]) -> str:
    return units.bytes_per_s(_preset(call.args[0], presets, "bandwidth").memory_bandwidth_bytes_per_s)


def _ridge(call: _Call, presets: Mapping[str, Preset]) -> str:
    return units.intensity(_preset(call.args[0], presets, "ridge").ridge_flop_per_byte("sparse" in call.flags))


def _intensity(call: _Call, presets: Mapping[str, Preset]) -> str:
    return units.intensity(kernels.parse_kernel_spec(call.args[0]).intensity_flop_per_byte)


def _kernel_flops(call: _Call, presets: Mapping[str, Preset]) -> str:
    return units.si(kernels.parse_kernel_spec(call.args[0]).flops, "FLOP")


def _kernel_bytes(call: _Call, presets: Mapping[str, Preset]) -> str:
    return units.si(kernels.parse_kernel_spec(call.args[0]).bytes_moved, "B")


def _roof(call: _Call, presets: Mapping[str, Preset], form: str) -> tuple[float, float, float]:
    preset = _preset(call.args[0], presets, form)
    kernel = kernels.parse_kernel_spec(call.args[1])
    return kernel.intensity_flop_per_byte, preset.peak_flops_per_s("sparse" in call.flags), \
        preset.memory_bandwidth_bytes_per_s


def _attainable(call: _Call, presets: Mapping[str, Preset]) -> str:
    return units.flops_per_s(roofline.attainable_flops_per_s(*_roof(call, presets, "attainable")))


def _bound(call: _Call, presets: Mapping[str, Preset]) -> str:
    return f"{roofline.bound_at(*_roof(call, presets, 'bound'))}-bound"


def _bus_factor(call: _Call, presets: Mapping[str, Preset]) -> str:
    ranks = checks.whole_number(call.options.get("ranks", "4"), "ranks=")
    return units.significant(collectives.bus_factor(call.args[0], ranks), 3)


def _job(call: _Call, presets: Mapping[str, Preset]) -> TrainingJob:
    return TrainingJob.from_fields(call.options, presets, label=lambda key: f"{key}=")


def _mfu(call: _Call, presets: Mapping[str, Preset]) -> str:
    return units.percent(_job(call, presets).utilization().mfu)


def _hfu(call: _Call, presets: Mapping[str, Preset]) -> str:
    return units.percent(_job(call, presets).utilization().hfu)


def _flops_per_token(call: _Call, presets: Mapping[str, Preset]) -> str:
    return units.si(_job(call, presets).utilization().model_flops_per_token, "FLOP")


_ID, _SPEC = "a preset id", "a kernel spec such as gemm:8192x8192x8192:bf16"
_FORMS: dict[str, _Form] = {
    "presets": _Form(_names),
    "preset-count": _Form(_count),
    "name": _Form(_name, needs=(_ID,)),
    "peak": _Form(_peak, needs=(_ID,), flags=("sparse",)),
    "bandwidth": _Form(_bandwidth, needs=(_ID,)),
    "ridge": _Form(_ridge, needs=(_ID,), flags=("sparse",)),
    "intensity": _Form(_intensity, needs=(_SPEC,)),
    "kernel-flops": _Form(_kernel_flops, needs=(_SPEC,)),
    "kernel-bytes": _Form(_kernel_bytes, needs=(_SPEC,)),
    "attainable": _Form(_attainable, needs=(_ID, _SPEC), flags=("sparse",)),
    "bound": _Form(_bound, needs=(_ID, _SPEC), flags=("sparse",)),
    "bus-factor": _Form(_bus_factor, needs=("an op such as all-reduce",), options=("ranks",)),
    "mfu": _Form(_mfu, options=JOB_FIELDS),
    "hfu": _Form(_hfu, options=JOB_FIELDS),
    "flops-per-token": _Form(_flops_per_token, options=JOB_FIELDS),
}
