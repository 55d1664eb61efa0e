"""What pages write about cost: the ``collective-cost`` and ``links-table`` fences, and the inline
figures ``{{ collective-time ... }}``, ``{{ crossover ... }}`` and ``{{ train-time ... }}``.

Parsers only validate and return requests (``ainotes.build.site`` draws them); inline forms return
plain text. Every number comes from :mod:`ainotes.core.collective_cost` and
:func:`ainotes.core.utilization.time_to_train`.

=========================================================================  ====================================
``{{ collective-time OP ranks=N bytes=S link=ID [algorithm=A] [part=P] }}``  P: ``time`` (default), ``latency``,
                                                                           ``bandwidth``, ``algbw``, ``busbw``;
                                                                           A defaults to the fastest; S a
                                                                           number of bytes, or a quantity of
                                                                           ``model=ID`` (below)
``{{ crossover OP ranks=N link=ID [algorithm=A] }}``                       where the ring (pairwise, direct)
                                                                           takes as long as A (default: the
                                                                           first size where the fastest
                                                                           algorithm changes)
``{{ train-time params= tokens= gpus= mfu= (preset= [precision=] |``       P: ``days`` (default), ``gpu-hours``,
``peak_tflops=) [layers= heads= head_dim= seq_len=] [part=P] }}``          ``flops``, ``seconds``, ``rate``
=========================================================================  ====================================

``bytes=`` may name a quantity of a model instead of a number, with ``model=ID``: ``weights`` or
``gradients`` (its parameters in BF16, 2 bytes each, divided over ``tp=`` and ``pp=``: one chip's
shard, what a data-parallel all-reduce moves), or ``activation`` (one tensor-parallel all-reduce's
b·s·h in BF16, with ``micro_batch=`` default 1 and ``seq_len=`` default 4,096):
``{{ collective-time all-reduce ranks=8 bytes=activation model=llama-3.1-70b link=nvlink-4 }}``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

from ainotes.base import units
from ainotes.base.errors import InputError
from ainotes.base.textcheck import closest, short, unknown_id
from ainotes.core import checks
from ainotes.core import collective_cost as cc
from ainotes.core.collectives import OPS
from ainotes.core.hardware import Preset
from ainotes.core.jobs import ModelsLoader, TrainingRun
from ainotes.core.links import Link
from ainotes.core.models import ModelPreset

LinksLoader = Callable[[], Mapping[str, Link]]

# --- fences -----------------------------------------------------------------------------


def link_for(links: Mapping[str, Link], link_id: str) -> Link:
    if link_id not in links:
        raise InputError(f"{unknown_id('link', link_id, links)}")
    return links[link_id]


# --- inline figures ---------------------------------------------------------------------


def _number(options: dict[str, str], key: str, form: str) -> float:
    if key not in options:
        raise InputError(f"'{form}' needs {key}=")
    return checks.positive_number(options[key], f"{key}=", key)


def _ranks(options: dict[str, str], form: str) -> int:
    """``ranks=``, under the model's one rule (:func:`ainotes.core.collective_cost.check_ranks`): the fence and
    ``ainotes collective-cost`` take the same counts, with the same words."""
    if "ranks" not in options:
        raise InputError(f"'{form}' needs ranks=")
    return cc.check_ranks(options["ranks"], "ranks=")


def _check_keys(options: dict[str, str], allowed: set[str], form: str) -> None:
    unknown = sorted(set(options) - allowed)
    if unknown:
        near = closest(unknown[0], allowed)
        hint = f": did you mean {near}=?" if near is not None else ""
        raise InputError(f"'{form}' does not take {unknown[0]}= (allowed: {', '.join(sorted(allowed))}){hint}")


def _op(args: list[str], form: str) -> str:
    if len(args) != 1 or args[0] not in OPS:
        given = " ".join(args) or "nothing"
        near = closest(given, OPS)
        hint = f": did you mean {near}?" if near is not None else ""
        raise InputError(f"'{form}' needs one op ({', '.join(OPS)}): {short(given)}{hint}")
    return args[0]


def _link(options: dict[str, str], links: LinksLoader | None, form: str) -> Link:
    if "link" not in options:
        raise InputError(f"'{form}' needs link=")
    if links is None:
        raise InputError(f"'{form}' needs the link presets, which this build has not loaded")
    return link_for(links(), options["link"])


def seconds_text(seconds: float) -> str:
    """``"3.92 ms"``, ``"26.6 days"``: a duration in the unit a reader expects."""
    if seconds >= 86_400:
        return f"{units.significant(seconds / 86_400, 3)} days"
    if seconds >= 3_600:
        return f"{units.significant(seconds / 3_600, 3)} hours"
    for scale, unit in ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs")):
        if seconds >= scale:
            return f"{units.significant(seconds / scale, 3)} {unit}"
    return f"{units.significant(seconds / 1e-9, 3)} ns"


def scientific(value: float, unit: str) -> str:
    """``5.88·10²³ FLOPs``."""
    exponent = math.floor(math.log10(value))
    superscript = str(exponent).translate(str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹"))
    return f"{units.significant(value / 10**exponent, 3)}·10{superscript} {unit}"


_TIME_PARTS = ("time", "latency", "bandwidth", "algbw", "busbw")


MODEL_QUANTITIES = ("weights", "gradients", "activation")
_MODEL_KEYS = {"model", "tp", "pp", "micro_batch", "seq_len"}
BF16_BYTES = 2
DEFAULT_SEQ_LEN = 4096


def message_bytes(options: dict[str, str], models: ModelsLoader | None, form: str) -> float:
    """``bytes=``: a number, or a quantity of ``model=`` (:data:`MODEL_QUANTITIES`): weights or gradients
    as 2·P/(tp·pp) bytes, one chip's shard; one TP activation as b·s·h·2 bytes."""
    quantity = options.get("bytes")
    if quantity not in MODEL_QUANTITIES:
        stray = sorted(_MODEL_KEYS & set(options))
        if stray:
            raise InputError(f"'{form}': {stray[0]}= goes with bytes= naming a quantity of a model "
                             f"({', '.join(MODEL_QUANTITIES)})")
        return _number(options, "bytes", form)
    if "model" not in options:
        raise InputError(f"'{form}': bytes={quantity} needs model= (a model preset id)")
    if models is None:
        raise InputError(f"'{form}' needs the model presets, which this build has not loaded")
    known: Mapping[str, ModelPreset] = models()
    model = known.get(options["model"])
    if model is None:
        raise InputError(f"'{form}': {unknown_id('model', options['model'], known)}")
    if quantity == "activation":
        for key in ("tp", "pp"):
            if key in options:
                raise InputError(f"'{form}': {key}= does not split one TP activation (b·s·h); "
                                 "give micro_batch= and seq_len=")
        batch = checks.whole_number(options.get("micro_batch", "1"), "micro_batch=", "micro_batch")
        seq_len = checks.whole_number(options.get("seq_len", str(DEFAULT_SEQ_LEN)), "seq_len=", "seq_len")
        return float(batch * seq_len * model.d_model * BF16_BYTES)
    for key in ("micro_batch", "seq_len"):
        if key in options:
            raise InputError(f"'{form}': {key}= is for bytes=activation; {quantity} are split by tp= and pp=")
    shards = (checks.whole_number(options.get("tp", "1"), "tp=", "tp")
              * checks.whole_number(options.get("pp", "1"), "pp=", "pp"))
    return model.params * BF16_BYTES / shards


def collective_time(args: list[str], options: dict[str, str], presets: Mapping[str, Preset],
                    links: LinksLoader | None = None, models: ModelsLoader | None = None) -> str:
    form = "collective-time"
    _check_keys(options, {"ranks", "bytes", "link", "algorithm", "part", *_MODEL_KEYS}, form)
    op = _op(args, form)
    link = _link(options, links, form)
    ranks, size = _ranks(options, form), message_bytes(options, models, form)
    # B of the group of ``ranks`` chips: less than the link's on a full mesh (Link.group_bandwidth_bytes_per_s).
    figures = {"bandwidth_bytes_per_s": link.group_bandwidth_bytes_per_s(ranks), "latency_s": link.latency_s}
    if "algorithm" in options:
        result = cc.algorithm_time(op, options["algorithm"], ranks, size, **figures)
    else:
        result = cc.best_algorithm(op, ranks, size, **figures)
    part = options.get("part", "time")
    if part not in _TIME_PARTS:
        raise InputError(f"part= must be one of {', '.join(_TIME_PARTS)}: {short(part)}")
    if part in ("algbw", "busbw"):
        rate = result.algbw_bytes_per_s if part == "algbw" else result.busbw_bytes_per_s
        return units.si(rate, "B/s", 3)
    seconds = {"time": result.time_s, "latency": result.latency_s, "bandwidth": result.bandwidth_s}[part]
    return seconds_text(seconds)


def crossover(args: list[str], options: dict[str, str], presets: Mapping[str, Preset],
              links: LinksLoader | None = None, models: ModelsLoader | None = None) -> str:
    del models  # a crossover is a size, not a quantity of a model
    form = "crossover"
    _check_keys(options, {"ranks", "link", "algorithm"}, form)
    op = _op(args, form)
    link = _link(options, links, form)
    ranks = _ranks(options, form)
    figures = {"bandwidth_bytes_per_s": link.group_bandwidth_bytes_per_s(ranks), "latency_s": link.latency_s}
    if "algorithm" in options:
        found = cc.crossovers(op, ranks, cc.ALGORITHMS[op][0], options["algorithm"], low_bytes=1.0,
                              high_bytes=cc.MAX_MESSAGE_BYTES, **figures)
    else:
        found = cc.best_algorithm_changes(op, ranks, low_bytes=1.0, high_bytes=cc.MAX_MESSAGE_BYTES, **figures)
    if not found:
        raise InputError(f"'{form}': no crossover for {op} on {ranks} ranks over {link.id} between 1 B and 1 PB")
    return units.si(found[0].message_bytes, "B", 3)


def _count(value: float) -> str:
    """``1.31 million``: three figures, as the FACTS example quotes it."""
    for scale, word in ((1e9, "billion"), (1e6, "million"), (1e3, "thousand")):
        if value >= scale:
            return f"{units.significant(value / scale, 3)} {word}"
    return units.significant(value, 3)


_TRAIN_PARTS = ("days", "gpu-hours", "flops", "seconds", "rate")


def train_time(args: list[str], options: dict[str, str], presets: Mapping[str, Preset],
               links: LinksLoader | None = None, models: ModelsLoader | None = None) -> str:
    """``{{ train-time params=… tokens=… gpus=… mfu=… preset=… }}``: the one training-run value
    (:meth:`ainotes.core.jobs.TrainingRun.from_fields`) that ``ainotes train-time`` builds too, timed;
    ``part=`` picks days (default), gpu-hours, flops, seconds or rate."""
    form = "train-time"
    if args:
        raise InputError(f"'{form}' takes KEY=VALUE options only: {short(' '.join(args))}")
    fields = {key: value for key, value in options.items() if key != "part"}
    # Its messages name the keys as written here (mfu=), as the mfu forms' do.
    result = TrainingRun.from_fields(fields, presets, label=lambda key: f"{key}=", models=models).time()
    part = options.get("part", "days")
    if part == "days":
        return f"{units.significant(result.days, 3)} days"
    if part == "gpu-hours":
        return f"{_count(result.gpu_hours)} GPU-hours"
    if part == "flops":
        return scientific(result.flops, "FLOPs")
    if part == "seconds":
        return scientific(result.seconds, "s")
    if part == "rate":
        return scientific(result.flops / result.seconds, "FLOP/s")
    raise InputError(f"part= must be one of {', '.join(_TRAIN_PARTS)}: {short(part)}")


FORMS: dict[str, Callable[[list[str], dict[str, str], Mapping[str, Preset], LinksLoader | None,
                           ModelsLoader | None], str]] = {
    "collective-time": collective_time,
    "crossover": crossover,
}
