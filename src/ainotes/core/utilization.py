"""Model and hardware FLOPs utilization (MFU, HFU) of a training job.

Model FLOPs per token (Chowdhery et al. 2022, "PaLM: Scaling Language Modeling
with Pathways", arXiv:2204.02311, Appendix B)::

    6·N                      dense weights: 2·N forward, 4·N backward
    + 12·L·H·Q·S             attention scores and their use, forward and backward

N parameters, L layers, H heads, Q head dimension, S sequence length. The
attention term is 3 × 4·L·H·Q·S: per layer a token's query meets S keys (2·H·Q·S
FLOPs for Q·Kᵀ, 2·H·Q·S for the product with V) forward, twice that backward.

Hardware FLOPs add what recomputation runs again (Korthikanti et al. 2022,
"Reducing Activation Recomputation in Large Transformer Models",
arXiv:2205.05198):

* ``none``: nothing recomputed; hardware FLOPs = model FLOPs.
* ``selective``: only the attention core (Q·Kᵀ, softmax, dropout, the product
  with V) is recomputed in the backward pass, i.e. its forward matrix
  products once more: + 4·L·H·Q·S, so 6·N + 16·L·H·Q·S (the attention term
  × 4/3). Without the attention figures that term is not counted at all, and
  selective equals none.
* ``full``: the whole forward pass runs again: + 2·N + 4·L·H·Q·S, so
  8·N + 16·L·H·Q·S (the attention term × 4/3).

Over a whole job::

    MFU = model FLOPs per token × tokens/s ÷ (GPUs × peak FLOP/s per GPU)
    HFU = hardware FLOPs per token × tokens/s ÷ (GPUs × peak FLOP/s per GPU)

With PaLM 540B (N = 540e9, L = 118, H = 48, Q = 256, S = 2048) at 238.3e3
tokens/s on 6144 TPU v4 chips of 275e12 FLOP/s, MFU = 46.2 % as the paper
reports (46.199 %; the nominal N = 540.35e9 would give 46.229 %, the same to
one decimal).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ainotes.base.errors import InputError
from ainotes.core import checks

Recompute = Literal["none", "selective", "full"]
RECOMPUTE_MODES: tuple[str, ...] = ("none", "selective", "full")

ATTENTION_ARGUMENTS = ("layers", "heads", "head_dim", "seq_len")


def _positive_number(name: str, value: float) -> float:
    return checks.positive_number(value, repr(name), name, text=False)


def _whole_number(name: str, value: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError(f"{name!r} must be a whole number: {value!r}")
    if value < 1:
        raise InputError(f"{name!r} must be >= 1: {value!r}")
    return value


def _check_recompute(recompute: str) -> str:
    if recompute not in RECOMPUTE_MODES:
        raise InputError(f"'recompute' must be one of {', '.join(RECOMPUTE_MODES)}: {recompute!r}")
    return recompute


def attention_flops_per_token(
    *, layers: int | None = None, heads: int | None = None, head_dim: int | None = None, seq_len: int | None = None
) -> float:
    """12·L·H·Q·S (PaLM, Appendix B), or 0 when none of the four is given.

    Giving only some of the four is an :class:`InputError` naming the missing ones.
    """
    given = {"layers": layers, "heads": heads, "head_dim": head_dim, "seq_len": seq_len}
    missing = [name for name, value in given.items() if value is None]
    if len(missing) == len(given):
        return 0.0
    if missing:
        present = [name for name in given if name not in missing]
        raise InputError(
            f"the attention term needs all of {', '.join(ATTENTION_ARGUMENTS)}: "
            f"{', '.join(present)} given, {', '.join(missing)} missing"
        )
    for name, value in given.items():
        _whole_number(name, value)  # type: ignore[arg-type]
    return 12.0 * layers * heads * head_dim * seq_len  # type: ignore[operator]


def model_flops_per_token(
    params: float,
    *,
    layers: int | None = None,
    heads: int | None = None,
    head_dim: int | None = None,
    seq_len: int | None = None,
) -> float:
    """6·N, plus 12·L·H·Q·S when all four attention figures are given (PaLM, Appendix B)."""
    n = _positive_number("params", params)
    return 6.0 * n + attention_flops_per_token(layers=layers, heads=heads, head_dim=head_dim, seq_len=seq_len)


def hardware_flops_per_token(
    params: float,
    *,
    layers: int | None = None,
    heads: int | None = None,
    head_dim: int | None = None,
    seq_len: int | None = None,
    recompute: Recompute = "none",
) -> float:
    """Model FLOPs plus what recomputation executes again (see the module docstring).

    none: 6N + A; selective: 6N + A·4/3; full: 8N + A·4/3, where A = 12·L·H·Q·S
    (0 without the attention figures).
    """
    mode = _check_recompute(recompute)
    n = _positive_number("params", params)
    attention = attention_flops_per_token(layers=layers, heads=heads, head_dim=head_dim, seq_len=seq_len)
    # The recomputed part is a forward pass: one third of the forward+backward count.
    attention_forward = attention / 3.0
    if mode == "none":
        return 6.0 * n + attention
    if mode == "selective":
        return 6.0 * n + attention + attention_forward
    return 8.0 * n + attention + attention_forward


def _utilization(flops_per_token: float, tokens_per_second: float, gpus: int, peak_flops_per_s_per_gpu: float) -> float:
    throughput = _positive_number("tokens_per_second", tokens_per_second)
    devices = _whole_number("gpus", gpus)
    peak = _positive_number("peak_flops_per_s_per_gpu", peak_flops_per_s_per_gpu)
    return flops_per_token * throughput / (devices * peak)


def mfu(
    params: float,
    *,
    tokens_per_second: float,
    gpus: int,
    peak_flops_per_s_per_gpu: float,
    layers: int | None = None,
    heads: int | None = None,
    head_dim: int | None = None,
    seq_len: int | None = None,
) -> float:
    """Model FLOPs utilization, a fraction: model FLOPs/token × tokens/s ÷ (GPUs × peak per GPU).

    ``tokens_per_second`` is the whole job's throughput, shared by ``gpus`` devices.
    """
    flops = model_flops_per_token(params, layers=layers, heads=heads, head_dim=head_dim, seq_len=seq_len)
    return _utilization(flops, tokens_per_second, gpus, peak_flops_per_s_per_gpu)


def hfu(
    params: float,
    *,
    tokens_per_second: float,
    gpus: int,
    peak_flops_per_s_per_gpu: float,
    layers: int | None = None,
    heads: int | None = None,
    head_dim: int | None = None,
    seq_len: int | None = None,
    recompute: Recompute = "none",
) -> float:
    """Hardware FLOPs utilization, a fraction: as :func:`mfu`, counting recomputed FLOPs too."""
    flops = hardware_flops_per_token(
        params, layers=layers, heads=heads, head_dim=head_dim, seq_len=seq_len, recompute=recompute
    )
    return _utilization(flops, tokens_per_second, gpus, peak_flops_per_s_per_gpu)


@dataclass(frozen=True)
class Utilization:
    """MFU and HFU of one job, with the FLOP counts behind them and what each counts."""

    params: float
    tokens_per_second: float
    gpus: int
    peak_flops_per_s_per_gpu: float
    recompute: str
    attention_flops_per_token: float
    model_flops_per_token: float
    hardware_flops_per_token: float
    mfu: float
    hfu: float
    counts: str


def _counts_text(has_attention: bool, recompute: str) -> str:
    model = "6N + 12·L·H·Q·S" if has_attention else "6N"
    hardware = {
        "none": f"{model} (no recomputation: the same as model FLOPs)",
        "selective": (
            "6N + 16·L·H·Q·S (selective recomputation: the attention core's forward matrix products run again)"
            if has_attention
            else "6N (selective recomputation repeats only attention-score work, which is not counted "
            "without the four attention figures)"
        ),
        "full": (
            "8N + 16·L·H·Q·S (full recomputation: the whole forward pass runs again)"
            if has_attention
            else "8N (full recomputation: the whole forward pass runs again)"
        ),
    }[recompute]
    return (
        f"MFU counts model FLOPs per token = {model}: the forward and backward work the model needs, "
        f"whatever the implementation. HFU counts hardware FLOPs per token = {hardware}."
    )


def utilization(
    params: float,
    *,
    tokens_per_second: float,
    gpus: int,
    peak_flops_per_s_per_gpu: float,
    layers: int | None = None,
    heads: int | None = None,
    head_dim: int | None = None,
    seq_len: int | None = None,
    recompute: Recompute = "none",
) -> Utilization:
    """MFU and HFU together, with the per-token FLOP counts and a ``counts`` text saying what each counts."""
    attention = {"layers": layers, "heads": heads, "head_dim": head_dim, "seq_len": seq_len}
    mode = _check_recompute(recompute)
    model = model_flops_per_token(params, **attention)
    hardware = hardware_flops_per_token(params, recompute=mode, **attention)  # type: ignore[arg-type]
    attention_term = attention_flops_per_token(**attention)
    return Utilization(
        params=float(params),
        tokens_per_second=_positive_number("tokens_per_second", tokens_per_second),
        gpus=_whole_number("gpus", gpus),
        peak_flops_per_s_per_gpu=_positive_number("peak_flops_per_s_per_gpu", peak_flops_per_s_per_gpu),
        recompute=mode,
        attention_flops_per_token=attention_term,
        model_flops_per_token=model,
        hardware_flops_per_token=hardware,
        mfu=_utilization(model, tokens_per_second, gpus, peak_flops_per_s_per_gpu),
        hfu=_utilization(hardware, tokens_per_second, gpus, peak_flops_per_s_per_gpu),
        counts=_counts_text(attention_term > 0, mode),
    )


SECONDS_PER_DAY = 86_400.0
SECONDS_PER_HOUR = 3_600.0


@dataclass(frozen=True)
class TrainingTime:
    """How long a training run takes at a given MFU, and what it costs in GPU-hours."""

    flops: float
    seconds: float
    gpus: int
    mfu: float
    peak_flops_per_s_per_gpu: float
    flops_per_token: float
    tokens: float

    @property
    def days(self) -> float:
        return self.seconds / SECONDS_PER_DAY

    @property
    def gpu_hours(self) -> float:
        """GPUs × hours: what a cloud bill counts."""
        return self.gpus * self.seconds / SECONDS_PER_HOUR


def _fraction(name: str, value: float) -> float:
    return checks.fraction(value, repr(name), name, text=False)


def time_to_train(
    params: float,
    *,
    tokens: float,
    gpus: int,
    mfu: float,
    peak_flops_per_s_per_gpu: float,
    layers: int | None = None,
    heads: int | None = None,
    head_dim: int | None = None,
    seq_len: int | None = None,
) -> TrainingTime:
    """Training compute and wall-clock time at utilization U on G GPUs of peak P.

    C = model FLOPs per token × D tokens (≈ 6·N·D for a dense model; with the
    attention figures, (6N + 12·L·H·Q·S)·D as :func:`model_flops_per_token` counts);
    time = C ÷ (U · G · P). Example (``FACTS``, "Time to train"): 70e9 parameters,
    1.4e12 tokens, 2,048 A100s at 312 TFLOP/s and 40 % MFU: 5.88e23 FLOPs ÷
    2.556e17 FLOP/s = 2.30e6 s ≈ 26.6 days, about 1.31 million GPU-hours.
    """
    per_token = model_flops_per_token(params, layers=layers, heads=heads, head_dim=head_dim, seq_len=seq_len)
    total_tokens = _positive_number("tokens", tokens)
    devices = _whole_number("gpus", gpus)
    utilization_fraction = _fraction("mfu", mfu)
    peak = _positive_number("peak_flops_per_s_per_gpu", peak_flops_per_s_per_gpu)
    flops = per_token * total_tokens
    seconds = flops / (utilization_fraction * devices * peak)
    return TrainingTime(
        flops=flops, seconds=seconds, gpus=devices, mfu=utilization_fraction,
        peak_flops_per_s_per_gpu=peak, flops_per_token=per_token, tokens=total_tokens,
    )
