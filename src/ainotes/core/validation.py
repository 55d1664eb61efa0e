"""Published measurements beside the core's estimate of the same run: the notes' validation table.

Each :class:`Published` row is a figure someone measured and printed, with the page or table it is
printed in. :func:`validation_rows` computes the core's estimate of the same run from the presets
(GPU peaks, link bandwidths, model architectures) when the table is built, so a changed preset
changes the estimate, never the measurement. error = estimate ÷ measured − 1; a row whose |error|
passes :data:`TOLERANCE` is marked (:attr:`ValidationRow.beyond_tolerance`), not dropped.

What each estimate is:

* **MFU rows** (PaLM, Llama 3, Megatron-LM): model FLOPs per token (6N + 12·L·H·Q·S, PaLM
  Appendix B) × the published throughput ÷ (devices × the preset's dense BF16 peak) where the paper
  gives a throughput in tokens/s; where it gives achieved TFLOP/s per GPU, that rate ÷ the preset's
  peak. The second kind checks the peak and the definition, not a throughput model.
* **bus bandwidth rows** (nccl-tests on one H100 node, an NDR NIC): the α–β model's busbw for an
  all-reduce at 16 GiB, its fastest algorithm on the link preset
  (:func:`ainotes.core.collective_cost.best_algorithm`); the model knows no NVLink SHARP, so the
  NVLS row sits far from it, and says why.
* **GPU-hours rows** (the LLaMA paper, as llm-analysis compares them): (6N + 12·L·H·Q·S) × tokens
  ÷ (0.5 × the A100 preset's BF16 peak), in GPU-hours: llm-analysis's ``flops_efficiency = 0.5``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from ainotes.core import collective_cost, utilization
from ainotes.core.hardware import Preset
from ainotes.core.links import Link
from ainotes.core.models import ModelPreset

#: |estimate ÷ measured − 1| above this is marked in the table.
TOLERANCE = 0.10
#: The size at which the bus-bandwidth rows read the model: large enough that α no longer counts.
LARGE_MESSAGE_BYTES = 16 * 2**30
#: llm-analysis's assumed fraction of peak for its GPU-hour estimates (its examples/llama README).
LLM_ANALYSIS_EFFICIENCY = 0.5


@dataclass(frozen=True)
class Published:
    """One published measurement: ``measured`` in ``unit``, where it is printed, and what run it is."""

    key: str
    name: str
    quantity: str
    measured: float
    unit: str
    source: str
    url: str
    run: str
    needs: tuple[str, ...]
    note: str = ""


@dataclass(frozen=True)
class ValidationRow:
    """A published measurement, the core's estimate (``None`` if a preset it needs is missing), and how."""

    published: Published
    estimate: float | None
    how: str
    missing: tuple[str, ...] = ()

    @property
    def error(self) -> float | None:
        """estimate ÷ measured − 1."""
        return None if self.estimate is None else self.estimate / self.published.measured - 1

    @property
    def beyond_tolerance(self) -> bool:
        return self.error is not None and abs(self.error) > TOLERANCE


_LLAMA3 = ("Llama Team 2024, The Llama 3 Herd of Models, Table 4 (the same figures in Balaji, SC'24)",
           "https://arxiv.org/abs/2407.21783")
_LLAMA1 = ("Touvron et al. 2023, LLaMA, Table 15, as quoted by llm-analysis's examples/llama README",
           "https://github.com/cli99/llm-analysis/blob/1c80683be2920414fe582ad6579857bcf22c2f12/examples/llama/README.md")
_NCCL_212 = ("NVIDIA/nccl-tests issue 212, S. Jeaugey (NVIDIA): ~480 GB/s busbw with NVLS, 370 GB/s effective NVLink",
             "https://github.com/NVIDIA/nccl-tests/issues/212")

#: (key, name, layers, d_model, heads, params, tokens, GPU-hours) for the LLaMA rows; head size 128, sequence 2,048.
_LLAMA1_RUNS = (
    ("llama-7b", "LLaMA-7B", 32, 4096, 32, 6.7e9, 1.0e12, 82_432),
    ("llama-13b", "LLaMA-13B", 40, 5120, 40, 13.0e9, 1.0e12, 135_168),
    ("llama-33b", "LLaMA-33B", 60, 6656, 52, 32.5e9, 1.4e12, 530_432),
    ("llama-65b", "LLaMA-65B", 80, 8192, 64, 65.2e9, 1.4e12, 1_022_362),
)

PUBLISHED: tuple[Published, ...] = (
    Published("palm-540b", "PaLM 540B on 6,144 TPU v4", "MFU", 0.462, "fraction",
              "Chowdhery et al. 2022, PaLM, Table 3 and Appendix B", "https://arxiv.org/abs/2204.02311",
              "238.3 thousand tokens/s, sequence 2,048", ("gpu:tpu-v4", "model:palm-540b")),
    Published("llama3-405b-8k", "Llama 3 405B on 8,192 H100s (TP 8, PP 16, DP 64)", "MFU", 0.43, "fraction",
              *_LLAMA3, "430 TFLOP/s per GPU, sequence 8,192", ("gpu:h100",)),
    Published("llama3-405b-16k", "Llama 3 405B on 16,384 H100s (TP 8, PP 16, DP 128)", "MFU", 0.41, "fraction",
              *_LLAMA3, "400 TFLOP/s per GPU, sequence 8,192", ("gpu:h100",),
              "the paper rounds: 400 ÷ 989.4 is 40.4 %"),
    Published("megatron-1t", "Megatron-LM 1T parameters on 3,072 A100s (t 8, p 64)", "fraction of peak", 0.52,
              "fraction", "Narayanan et al. 2021, Efficient Large-Scale Language Model Training on GPU Clusters, "
              "Table 1 and abstract (502 PFLOP/s in all)", "https://arxiv.org/abs/2104.04473",
              "163 TFLOP/s per GPU", ("gpu:a100",)),
    Published("nccl-h100-nvls", "nccl-tests all-reduce, 8 H100s, NVLink SHARP (default)", "busbw", 480, "GB/s",
              *_NCCL_212, "all_reduce_perf, large sizes", ("link:nvlink-4",),
              "NVLS reduces inside the NVSwitch: each GPU sends its data once and gets the sum back once, "
              "so the bytes on a GPU's link are about S each way, not 2(n−1)/n·S; busbw, which multiplies "
              "algbw by 2(n−1)/n, then passes the 450 GB/s wire rate. The α–β model has no switch that adds"),
    Published("nccl-h100-ring", "nccl-tests all-reduce, 8 H100s, NCCL_ALGO=Ring", "busbw", 370, "GB/s",
              *_NCCL_212, "all_reduce_perf, large sizes", ("link:nvlink-4",),
              "the model counts the wire rate; NCCL's protocols cost about 20 % of it (the thread)"),
    Published("nccl-ndr-nic", "nccl-tests over one NDR InfiniBand NIC per GPU, two nodes, Ring", "busbw", 47, "GB/s",
              "NVIDIA/nccl-tests issue 290, D. Addison (NVIDIA): 46-48 GB/s per NDR NIC",
              "https://github.com/NVIDIA/nccl-tests/issues/290", "midpoint of 46-48 GB/s", ("link:ib-ndr",)),
    *(Published(key, f"{name} GPU-hours, 2,048 A100s", "GPU-hours", hours, "GPU-hours", *_LLAMA1,
                f"{params / 1e9:g}B parameters, {tokens / 1e12:g}T tokens, sequence 2,048", ("gpu:a100",),
                "llm-analysis's own estimate, at the same 0.5 of peak, is off by −5.58 %, +9.53 %, −3.81 % and "
                "−0.65 % for the four sizes")
      for key, name, _layers, _d_model, _heads, params, tokens, hours in _LLAMA1_RUNS),
)


@dataclass(frozen=True)
class Presets:
    """What the estimates read: GPU presets, link presets and model presets, by id."""

    gpus: Mapping[str, Preset]
    links: Mapping[str, Link]
    models: Mapping[str, ModelPreset]

    def missing(self, needs: tuple[str, ...]) -> tuple[str, ...]:
        tables = {"gpu": self.gpus, "link": self.links, "model": self.models}
        return tuple(need for need in needs if need.split(":", 1)[1] not in tables[need.split(":", 1)[0]])


def _bf16_peak(preset: Preset) -> float:
    peak = preset.peak_tflops("bf16", unit="tensor") or preset.peak_tflops("fp16", unit="tensor")
    if peak is None:
        raise ValueError(preset.missing_peak("bf16"))
    return peak * 1e12


def _palm(presets: Presets) -> tuple[float, str]:
    model, chip = presets.models["palm-540b"], presets.gpus["tpu-v4"]
    value = utilization.mfu(model.published_params, tokens_per_second=238.3e3, gpus=6144,
                            peak_flops_per_s_per_gpu=_bf16_peak(chip), layers=model.layers, heads=model.heads,
                            head_dim=model.head_dim, seq_len=2048)
    return value, (f"(6N + 12·L·H·Q·S) × 238.3e3 tokens/s ÷ (6,144 × {_bf16_peak(chip) / 1e12:g} TFLOP/s), "
                   f"N = {model.published_params:.4g} (presets {model.id}, {chip.id})")


def _rate_over_peak(gpu: str, tflops: float) -> Callable[[Presets], tuple[float, str]]:
    def estimate(presets: Presets) -> tuple[float, str]:
        peak = _bf16_peak(presets.gpus[gpu])
        return tflops * 1e12 / peak, f"{tflops:g} TFLOP/s ÷ {peak / 1e12:g} TFLOP/s dense BF16 (preset {gpu})"
    return estimate


def _busbw(link_id: str, ranks: int) -> Callable[[Presets], tuple[float, str]]:
    def estimate(presets: Presets) -> tuple[float, str]:
        link = presets.links[link_id]
        best = collective_cost.best_algorithm("all-reduce", ranks, LARGE_MESSAGE_BYTES, latency_s=link.latency_s,
                                              bandwidth_bytes_per_s=link.bandwidth_bytes_per_s)
        algorithm = collective_cost.short_title("all-reduce", best.algorithm)
        figures = f"link {link.id}: {link.bandwidth_gbps:g} GB/s, α {link.latency_us:g} µs"
        return best.busbw_bytes_per_s / 1e9, f"α–β all-reduce busbw at 16 GiB on {ranks} ranks, {algorithm} ({figures})"
    return estimate


def _gpu_hours(layers: int, d_model: int, heads: int, params: float, tokens: float
               ) -> Callable[[Presets], tuple[float, str]]:
    def estimate(presets: Presets) -> tuple[float, str]:
        peak = _bf16_peak(presets.gpus["a100"])
        run = utilization.time_to_train(params, tokens=tokens, gpus=2048, mfu=LLM_ANALYSIS_EFFICIENCY,
                                        peak_flops_per_s_per_gpu=peak, layers=layers, heads=heads,
                                        head_dim=d_model // heads, seq_len=2048)
        return run.gpu_hours, (f"(6N + 12·L·H·Q·S) × {tokens:.2g} tokens ÷ (0.5 × {peak / 1e12:g} TFLOP/s), "
                               "in GPU-hours (preset a100)")
    return estimate


_ESTIMATES: dict[str, Callable[[Presets], tuple[float, str]]] = {
    "palm-540b": _palm,
    "llama3-405b-8k": _rate_over_peak("h100", 430),
    "llama3-405b-16k": _rate_over_peak("h100", 400),
    "megatron-1t": _rate_over_peak("a100", 163),
    "nccl-h100-nvls": _busbw("nvlink-4", 8),
    "nccl-h100-ring": _busbw("nvlink-4", 8),
    "nccl-ndr-nic": _busbw("ib-ndr", 16),
    **{key: _gpu_hours(layers, d_model, heads, params, tokens)
       for key, _name, layers, d_model, heads, params, tokens, _hours in _LLAMA1_RUNS},
}


def validation_rows(presets: Presets, keys: tuple[str, ...] | None = None) -> tuple[ValidationRow, ...]:
    """Every published row (or those in ``keys``, in that order) with the core's estimate from ``presets``."""
    by_key = {row.key: row for row in PUBLISHED}
    chosen = [by_key[key] for key in keys] if keys else list(PUBLISHED)
    rows = []
    for published in chosen:
        missing = presets.missing(published.needs)
        if missing:
            rows.append(ValidationRow(published, None, "", missing))
            continue
        estimate, how = _ESTIMATES[published.key](presets)
        rows.append(ValidationRow(published, estimate if math.isfinite(estimate) else None, how))
    return tuple(rows)
