"""What pages write about parallel training: one layout's step and collectives, the pipeline bubble and
the published thresholds. Every number comes from :mod:`ainotes.core.parallelism`,
:mod:`ainotes.core.parallel_step` and :mod:`ainotes.core.thresholds`.

=====================================================================  =====================================
``{{ layout-step MODEL PRESET gpus=N [LAYOUT] [part=P] }}``             P: ``step`` (default), ``compute``,
                                                                       ``bubble``, ``bubble-fraction``,
                                                                       ``exposed`` (all communication), an
                                                                       axis's exposed time (``dp tp pp ep
                                                                       cp``), ``tokens-per-s``, ``mfu``,
                                                                       ``memory``, ``capacity``, ``fits``,
                                                                       ``layout``, ``batch``
``{{ layout-collective MODEL PRESET AXIS gpus=N [LAYOUT] [op=OP]``      one axis's collectives (``op=``
``[part=P] [per=step|layer] }}``                                       picks one kind): P ``bytes`` (one
                                                                       message, default), ``count``,
                                                                       ``time``, ``one`` (one of them),
                                                                       ``exposed``, ``ranks``, ``link``,
                                                                       ``algorithm``, ``op``; ``per=layer``
                                                                       divides count and times by the
                                                                       layers a chip holds
``{{ layout-best MODEL PRESET gpus=N [LAYOUT] [rank=R] [part=P] }}``    the R-th fastest layout that fits
                                                                       (default 1), its ``layout-step`` part
                                                                       (default ``layout``), or ``count``:
                                                                       how many fit
``{{ bubble pp=P micro_batches=M [interleave=V] [part=fraction|ratio]``  (p−1)/(v·m+p−1) of the pipeline,
``}}``                                                                 or (p−1)/(v·m) of the ideal
``{{ threshold NAME PRESET [model=ID | d_ff=F] }}``                    NAME: ``dp`` (in a node), ``dp-inter``,
                                                                       ``dp-axes``, ``moe`` (tokens per chip),
                                                                       ``tp`` (a degree), ``fsdp-tp`` (tokens
                                                                       per chip); from the preset's peak and
                                                                       its own node links
``{{ threshold-train PRESET params=P tokens=D batch=B mfu=U``          LLaMA-3 70B's "18,823 chips, about 17
``[part=chips|days] }}``                                               days": the batch over the all-axes
                                                                       (else across-node) DP threshold
=====================================================================  =====================================

LAYOUT is any of the :data:`ainotes.core.parallelism.FIELDS` keys after model, preset and gpus:
``dp tp pp ep cp zero global_batch_tokens micro_batch seq_len micro_batches interleave recompute
sequence_parallel link_intra link_inter``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from ainotes.base import units
from ainotes.base.errors import InputError
from ainotes.base.textcheck import short
from ainotes.core import checks
from ainotes.core.parallel_step import search, step
from ainotes.core.parallelism import FIELDS, KIND_TITLES, Collective, ParallelRun, StepBreakdown, bubble_fraction
from ainotes.core.thresholds import (
    THRESHOLD_NAMES,
    fsdp_tp_batch_floor,
    preset_thresholds,
    tp_degree_limit,
    training_at_threshold,
)
from ainotes.inline.cost import scientific, seconds_text
from ainotes.inline.formcontext import Form, FormContext

_LAYOUT_KEYS = tuple(key for key in FIELDS if key not in ("model", "preset"))
_STEP_PARTS = ("step", "compute", "bubble", "bubble-fraction", "exposed", "dp", "tp", "pp", "ep", "cp",
               "tokens-per-s", "mfu", "memory", "capacity", "fits", "layout", "batch")
_COLLECTIVE_PARTS = ("bytes", "count", "time", "one", "exposed", "ranks", "link", "algorithm", "op")


def _label(key: str) -> str:
    return f"{key}="


def _allowed(form: str, options: Mapping[str, str], allowed: tuple[str, ...]) -> None:
    for key in options:
        if key not in allowed:
            raise InputError(f"'{form}' does not take {key}= (allowed: {', '.join(k + '=' for k in allowed)})")


def _choice(form: str, options: Mapping[str, str], key: str, choices: tuple[str, ...], default: str) -> str:
    value = options.get(key, default)
    if value not in choices:
        raise InputError(f"'{form}': {key}= must be one of {', '.join(choices)}: {short(value)}")
    return value


def _breakdown(form: str, args: list[str], options: Mapping[str, str], context: FormContext,
               words: int) -> tuple[StepBreakdown, ParallelRun, list[str]]:
    usage = "MODEL PRESET" + (" AXIS" if words == 3 else "")
    if len(args) != words:
        raise InputError(f"'{form}' needs {usage} and gpus=: {{{{ {form} {usage} gpus=N ... }}}} "
                         f"(given: {short(' '.join(args) or 'nothing')})")
    fields = {"model": args[0], "preset": args[1],
              **{key: value for key, value in options.items() if key in _LAYOUT_KEYS}}
    try:
        run = ParallelRun.from_fields(fields, models=context.models(), presets=context.presets,
                                      links=context.links(), label=_label)
        return step(run), run, args[2:]
    except InputError as exc:
        raise InputError(f"'{form}': {exc}") from None


_STEP_TEXT: dict[str, Callable[[StepBreakdown], str]] = {
    "step": lambda b: seconds_text(b.step_s),
    "compute": lambda b: seconds_text(b.compute_s),
    "bubble": lambda b: seconds_text(b.bubble_s) if b.bubble_s else "0 s",
    "exposed": lambda b: seconds_text(b.exposed_comm_s) if b.exposed_comm_s else "0 s",
    "bubble-fraction": lambda b: units.percent(b.bubble_fraction),
    "tokens-per-s": lambda b: units.count(b.tokens_per_s),
    "mfu": lambda b: units.percent(b.mfu_ceiling),
    "memory": lambda b: units.bytes_text(b.memory.total_bytes),
    "layout": lambda b: b.layout.label,
    "batch": lambda b: f"{b.layout.global_batch_tokens:,} tokens",
}


def _exposed_text(axis: str) -> Callable[[StepBreakdown], str]:
    def text(b: StepBreakdown) -> str:
        return seconds_text(b.part_s(axis)) if b.part_s(axis) else "0 s"
    return text


_STEP_TEXT.update({axis: _exposed_text(axis) for axis in KIND_TITLES})


def layout_step(args: list[str], options: dict[str, str], context: FormContext) -> str:
    """``{{ layout-step llama-3.1-70b h100 gpus=1024 tp=8 pp=8 micro_batches=32 }}`` → ``1.64 s``."""
    form = "layout-step"
    _allowed(form, options, (*_LAYOUT_KEYS, "part"))
    part = _choice(form, options, "part", _STEP_PARTS, "step")
    b, run, _ = _breakdown(form, args, options, context, 2)
    if part in _STEP_TEXT:
        return _STEP_TEXT[part](b)
    if b.memory.capacity_bytes is None:
        raise InputError(f"'{form}': part={part} needs preset {run.preset.id}'s memory capacity")
    if part == "capacity":
        return units.bytes_text(b.memory.capacity_bytes)
    return "fits" if b.fits else "does not fit"


def layout_best(args: list[str], options: dict[str, str], context: FormContext) -> str:
    """``{{ layout-best llama-3.1-70b h100 gpus=1024 global_batch_tokens=2097152 }}`` → ``dp 512 · tp 2, ZeRO-3``:
    :func:`ainotes.core.parallel_step.search` at the layout's batch, the R-th fastest that fits."""
    form = "layout-best"
    _allowed(form, options, (*_LAYOUT_KEYS, "rank", "part"))
    part = _choice(form, options, "part", (*_STEP_PARTS, "count"), "layout")
    rank = checks.whole_number(options.get("rank", "1"), "rank=", "rank")
    if "global_batch_tokens" in options:  # the batch as given; else the layout given's
        if len(args) != 2 or "gpus" not in options:
            raise InputError(f"'{form}' needs MODEL PRESET and gpus=")
        tokens = checks.whole_number(options["global_batch_tokens"], "global_batch_tokens=", "global_batch_tokens")
        gpus = checks.whole_number(options["gpus"], "gpus=", "gpus")
    else:
        _, given, _ = _breakdown(form, args, options, context, 2)
        tokens, gpus = given.layout.global_batch_tokens, given.layout.gpus
    fields = {key: value for key, value in options.items() if key in _LAYOUT_KEYS and key not in (
        "dp", "tp", "pp", "ep", "cp", "micro_batches", "gpus", "global_batch_tokens", "zero")}
    zero = checks.whole_number(options["zero"], "zero=", "zero", low=0, high=3) if "zero" in options else None
    try:
        base = ParallelRun.from_fields({"model": args[0], "preset": args[1], **fields, "gpus": 1,
                                        "global_batch_tokens": tokens},
                                       models=context.models(), presets=context.presets, links=context.links(),
                                       label=_label)
        found = search(base, gpus=gpus, zero=zero)
    except InputError as exc:
        raise InputError(f"'{form}': {exc}") from None
    if part == "count":
        return f"{len(found):,}"
    if rank > len(found):
        raise InputError(f"'{form}': rank={rank}, but only {len(found)} layouts of these chips fit their memory")
    b = found[rank - 1]
    if part in _STEP_TEXT:
        return _STEP_TEXT[part](b)
    return units.bytes_text(b.memory.capacity_bytes or 0) if part == "capacity" else "fits"


def _chosen(form: str, b: StepBreakdown, axis: str, op: str | None) -> tuple[Collective, ...]:
    if axis not in KIND_TITLES:
        raise InputError(f"'{form}': the axis must be one of {', '.join(KIND_TITLES)}: {short(axis)}")
    found = tuple(c for c in b.of(axis) if op is None or c.op == op)
    if not found:
        ops = sorted({c.op for c in b.of(axis)})
        raise InputError(f"'{form}': this layout issues no {axis} " + (f"{op} " if op else "") + "collective"
                         + (f" (its {axis} ops: {', '.join(ops)})" if ops else f" ({axis} is 1)"))
    return found


def layout_collective(args: list[str], options: dict[str, str], context: FormContext) -> str:
    """``{{ layout-collective llama-3.1-70b h100 tp gpus=8 tp=8 part=count }}`` → ``320``."""
    form = "layout-collective"
    _allowed(form, options, (*_LAYOUT_KEYS, "op", "part", "per"))
    part = _choice(form, options, "part", _COLLECTIVE_PARTS, "bytes")
    per = _choice(form, options, "per", ("step", "layer"), "step")
    b, run, rest = _breakdown(form, args, options, context, 3)
    chosen = _chosen(form, b, rest[0], options.get("op"))
    layers = -(-run.model.layers // run.layout.pp) if per == "layer" else 1
    first = chosen[0]
    if part == "bytes":
        return units.bytes_text(first.bytes)
    if part == "count":
        count = sum(c.count_per_step for c in chosen)
        return units.fixed(count / layers, 0 if count % layers == 0 else 2, grouping=True)
    if part in ("time", "exposed"):
        total = sum(c.time_s if part == "time" else c.exposed_s for c in chosen)
        return seconds_text(total / layers) if total else "0 s"
    if part == "one":
        return seconds_text(first.one_s)
    if part == "ranks":
        return str(first.ranks)
    return {"link": first.link, "algorithm": first.algorithm, "op": first.op}[part]


def bubble(args: list[str], options: dict[str, str], context: FormContext) -> str:
    """``{{ bubble pp=8 micro_batches=32 }}`` → ``17.9 %``: the idle share of the pipeline's time."""
    form = "bubble"
    del context
    if args:
        raise InputError(f"'{form}' takes key=value options only: {short(' '.join(args))}")
    _allowed(form, options, ("pp", "micro_batches", "interleave", "part"))
    part = _choice(form, options, "part", ("fraction", "ratio"), "fraction")
    values = {}
    for key in ("pp", "micro_batches", "interleave"):
        if key not in options and key != "interleave":
            raise InputError(f"'{form}' needs {key}=")
        values[key] = checks.whole_number(options.get(key, "1"), f"{key}=", key)
    p, m, v = values["pp"], values["micro_batches"], values["interleave"]
    return units.percent(bubble_fraction(p, m, v) if part == "fraction" else (p - 1) / (v * m))


def threshold(args: list[str], options: dict[str, str], context: FormContext) -> str:
    """``{{ threshold dp tpu-v5p }}`` → ``2,550 tokens``; ``{{ threshold tp h100 model=llama-3.1-70b }}`` → ``…``."""
    form = "threshold"
    _allowed(form, options, ("model", "d_ff"))
    if len(args) != 2 or args[0] not in THRESHOLD_NAMES:
        raise InputError(f"'{form}' needs a threshold ({', '.join(THRESHOLD_NAMES)}) and a preset: "
                         f"{{{{ threshold dp h100 }}}} (given: {short(' '.join(args) or 'nothing')})")
    name, preset = args[0], context.preset(args[1])
    model = context.model(options["model"]) if "model" in options else None
    try:
        found = preset_thresholds(preset, context.links())
        if "d_ff" in options:  # an MLP width of its own, as the book's F = 30,000
            if name not in ("tp", "fsdp-tp") or model is not None:
                raise InputError(f"d_ff= goes with tp or fsdp-tp, instead of model=: {short(name)}")
            d_ff = checks.whole_number(options["d_ff"], "d_ff=", "d_ff")
            bandwidth = found.intra_link.bandwidth_bytes_per_s
            value = (tp_degree_limit(d_ff, found.peak_flops_per_s, bandwidth) if name == "tp"
                     else fsdp_tp_batch_floor(d_ff, found.peak_flops_per_s, bandwidth))
        else:
            value = found.value(name, model)
    except InputError as exc:
        raise InputError(f"'{form}': {exc}") from None
    if name == "tp":
        return units.significant(value, 3)
    return f"{units.fixed(value, 0, grouping=True)} tokens"


def threshold_train(args: list[str], options: dict[str, str], context: FormContext) -> str:
    """``{{ threshold-train tpu-v5p params=70e9 tokens=15e12 batch=16e6 mfu=0.5 }}`` → ``17 days``."""
    form = "threshold-train"
    _allowed(form, options, ("params", "tokens", "batch", "mfu", "part"))
    if len(args) != 1:
        raise InputError(f"'{form}' needs one preset: {{{{ threshold-train PRESET params= tokens= batch= mfu= }}}}")
    part = _choice(form, options, "part", ("days", "chips", "flops"), "days")
    figures = {}
    for key in ("params", "tokens", "batch", "mfu"):
        if key not in options:
            raise InputError(f"'{form}' needs {key}=")
        check = checks.fraction if key == "mfu" else checks.positive_number
        figures[key] = check(options[key], f"{key}=", key)
    preset = context.preset(args[0])
    found = preset_thresholds(preset, context.links())
    per_chip = found.dp_all_axes or found.dp_across_nodes
    flops = 6 * figures["params"] * figures["tokens"]
    if part == "flops":
        return scientific(flops, "FLOPs")
    estimate = training_at_threshold(flops, figures["batch"], per_chip, found.peak_flops_per_s, figures["mfu"])
    if part == "chips":
        return f"{estimate.chips:,}"
    return f"{units.significant(estimate.days, 2)} days"


FORMS: dict[str, Form] = {
    "layout-step": layout_step,
    "layout-collective": layout_collective,
    "layout-best": layout_best,
    "bubble": bubble,
    "threshold": threshold,
    "threshold-train": threshold_train,
}
