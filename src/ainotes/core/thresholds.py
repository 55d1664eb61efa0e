"""The published thresholds of parallel training, for any chip: where data, tensor and mixed parallelism
turn communication-bound (Austin et al., the Scaling Book: "How to Parallelize a Transformer for
Training" and "How to Think About GPUs").

C is the chip's dense BF16 peak (FLOP/s), W the bandwidth per chip of the link a group talks over
(bytes/s, as the link preset gives it: per direction, per chip; the TPU ICI presets hold the book's
bidirectional W_ici of one torus axis), F the model's MLP width (d_ff).

* Data parallelism and FSDP stay compute-bound while the batch per chip B/X exceeds C/W, divided by
  the torus axes the group spans: 4.59e14 / 1.8e11 = 2,550 tokens on TPU v5p, 850 over all three axes;
  990e12 / 450e9 = 2,200 inside an H100 node, 2,475 across nodes at the book's 400e9 (8 GPUs × 50e9 B/s
  of NDR ports, :func:`ainotes.core.topology.group_bandwidth_bytes_per_s`), 3,300 for the H800s of
  DeepSeek-V3 at 300e9. A mixture of experts multiplies it by E/k.
* Tensor parallelism turns communication-bound past Y > n_axes · F / (C/W): F/2,550 on v5p, about 11
  for F near 28,000. Precision does not move it (int8 doubles C and halves the bytes).
* FSDP and tensor parallelism together stay compute-bound down to B/N > 2·(C/W)²/F on a 3D mesh
  (M_X·M_Y = 2): 2·2,550²/30,000 = 433.5 (the book prints 432), about 400 at F = 32,768.
* Training time with the smallest compute-bound batch share: chips = batch / (B/X threshold), days =
  6·P·D / (chips · C · MFU) / 86,400; LLaMA-3 70B's 6.3e24 FLOPs on 16e6 / 850 = 18,823 v5p chips
  at 50 % MFU take about 17 days.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from ainotes.core import checks
from ainotes.core.hardware import Preset
from ainotes.core.links import Link
from ainotes.core.models import ModelPreset
from ainotes.core.topology import node_of

SECONDS_PER_DAY = 86_400.0


def dp_batch_threshold(peak_flops_per_s: float, bandwidth_bytes_per_s: float, axes: int = 1) -> float:
    """C / (W · n_axes): tokens per chip below which a data-parallel (or FSDP) step waits on its
    gradient (or weight) collectives."""
    axes = checks.whole_number(axes, "'axes'", "axes", low=1, high=3)
    return peak_flops_per_s / (bandwidth_bytes_per_s * axes)


def tp_degree_limit(d_ff: int, peak_flops_per_s: float, bandwidth_bytes_per_s: float, axes: int = 1) -> float:
    """n_axes · F / (C/W): the tensor-parallel degree past which TP turns communication-bound."""
    return axes * d_ff / dp_batch_threshold(peak_flops_per_s, bandwidth_bytes_per_s)


def fsdp_tp_batch_floor(d_ff: int, peak_flops_per_s: float, bandwidth_bytes_per_s: float) -> float:
    """2·(C/W)²/F: the batch per chip that mixed FSDP + TP keeps compute-bound on a 3D mesh."""
    return 2 * dp_batch_threshold(peak_flops_per_s, bandwidth_bytes_per_s) ** 2 / d_ff


def moe_factor(model: ModelPreset) -> float:
    """E/k: how much larger a mixture of experts' data-parallel threshold is (1 for a dense model)."""
    if model.experts is None or model.active_experts is None:
        return 1.0
    return model.experts / model.active_experts


@dataclass(frozen=True)
class TrainingEstimate:
    """Chips a batch spreads over at the threshold, and the days a training run takes on them."""

    chips: int
    days: float


def training_at_threshold(total_flops: float, batch_tokens: float, tokens_per_chip: float,
                          peak_flops_per_s: float, mfu: float) -> TrainingEstimate:
    """chips = ⌊batch / tokens per chip⌋ (at least 1: a batch below one chip's share waits at any
    count); days = FLOPs / (chips · C · MFU) / 86,400."""
    chips = max(1, math.floor(batch_tokens / tokens_per_chip))
    return TrainingEstimate(chips, total_flops / (chips * peak_flops_per_s * mfu) / SECONDS_PER_DAY)


@dataclass(frozen=True)
class PresetThresholds:
    """The thresholds of one GPU preset on its own node links (:class:`ainotes.core.hardware.NodeTopology`)."""

    preset_id: str
    peak_flops_per_s: float
    intra_link: Link
    inter_link: Link
    torus_axes: int | None

    @property
    def dp_in_node(self) -> float:
        """C/W over the node's link."""
        return dp_batch_threshold(self.peak_flops_per_s, self.intra_link.bandwidth_bytes_per_s)

    chips_per_node: int = 1

    @property
    def dp_across_nodes(self) -> float:
        """C/W for a data-parallel group over whole nodes: W = min(W_node, chips · W_inter), every chip of a
        node on its own port (:func:`ainotes.core.topology.group_bandwidth_bytes_per_s`): the Scaling
        Book's 400e9 B/s for 8 H100s on 400 Gb/s ports; on a torus the ICI's own W."""
        if self.torus_axes is not None:
            bandwidth = self.inter_link.bandwidth_bytes_per_s
        else:
            bandwidth = min(self.intra_link.bandwidth_bytes_per_s,
                            self.chips_per_node * self.inter_link.bandwidth_bytes_per_s)
        return dp_batch_threshold(self.peak_flops_per_s, bandwidth)

    @property
    def dp_all_axes(self) -> float | None:
        """C/(W·n_axes) on a torus whose every axis carries the data-parallel group; ``None`` off a torus."""
        if self.torus_axes is None:
            return None
        return dp_batch_threshold(self.peak_flops_per_s, self.inter_link.bandwidth_bytes_per_s, self.torus_axes)

    def value(self, name: str, model: ModelPreset | None = None) -> float:
        """One threshold by name: ``dp`` (in a node), ``dp-inter`` (across nodes), ``dp-axes`` (all torus
        axes), ``tp`` (the TP limit for ``model``'s F), ``fsdp-tp`` (the mixed floor for its F), ``moe``
        (``dp`` × E/k)."""
        if name == "dp":
            return self.dp_in_node
        if name == "dp-inter":
            return self.dp_across_nodes
        if name == "dp-axes":
            found = self.dp_all_axes
            if found is None:
                raise checks.FieldError(f"preset {self.preset_id} has no torus axes ('node.torus_axes')", "preset")
            return found
        if model is None:
            raise checks.FieldError(f"the {name} threshold needs a model (its MLP width or experts)", "model")
        bandwidth = self.intra_link.bandwidth_bytes_per_s
        if name == "tp":
            return tp_degree_limit(model.d_ff, self.peak_flops_per_s, bandwidth)
        if name == "fsdp-tp":
            return fsdp_tp_batch_floor(model.d_ff, self.peak_flops_per_s, bandwidth)
        if name == "moe":
            return self.dp_in_node * moe_factor(model)
        raise checks.FieldError(f"unknown threshold {name!r} (known: {', '.join(THRESHOLD_NAMES)})", "threshold")


THRESHOLD_NAMES = ("dp", "dp-inter", "dp-axes", "tp", "fsdp-tp", "moe")


def preset_thresholds(preset: Preset, links: Mapping[str, Link], *, link_intra: str | None = None,
                      link_inter: str | None = None) -> PresetThresholds:
    """The thresholds of ``preset`` at its dense BF16 peak over its node's own links, or over
    ``link_intra`` / ``link_inter`` where named (as ``ainotes parallel --link-intra`` times a layout); a
    preset without ``node`` needs both named, and its board's ``gpu_count`` chips (else 1) share the first."""
    node = preset.node
    if node is None and (link_intra is None or link_inter is None):
        node = node_of(preset, what="a communication threshold")
    intra = link_intra or (node.link_id if node is not None else "")
    inter = link_inter or (node.inter_node_link_id if node is not None else "")
    missing = [link_id for link_id in (intra, inter) if link_id not in links]
    if missing:
        raise checks.FieldError(f"preset {preset.id}'s node names link {missing[0]!r}, which is not a link preset "
                                f"(known: {', '.join(sorted(links))})", "preset")
    chips = node.chips if node is not None else (preset.gpu_count or 1)
    torus = node.torus_axes if node is not None else None
    return PresetThresholds(preset.id, preset.peak_flops_per_s(), links[intra], links[inter], torus, chips)


@dataclass(frozen=True)
class TrainingAtThreshold:
    """A whole training run whose batch is spread at the smallest compute-bound share per chip."""

    train_tokens: float
    mfu: float
    flops: float  # 6·P·D, P the parameters a token uses
    batch_tokens: float
    tokens_per_chip: float  # the DP threshold over every torus axis (else across nodes), × E/k
    estimate: TrainingEstimate

    def record(self) -> dict[str, Any]:
        return {"train_tokens": self.train_tokens, "mfu": self.mfu, "training_flops": self.flops,
                "batch_tokens": self.batch_tokens, "tokens_per_chip": self.tokens_per_chip,
                "chips": self.estimate.chips, "days": self.estimate.days}


@dataclass(frozen=True)
class ModelThresholds:
    """The thresholds of one preset for one model: what ``ainotes parallel`` reports beside a layout."""

    preset: PresetThresholds
    model: ModelPreset
    training: TrainingAtThreshold | None = None

    def training_at(self, batch_tokens: float, train_tokens: Any, mfu: Any,
                    label: Callable[[str], str] = repr) -> ModelThresholds:
        """These thresholds with a training run of ``train_tokens`` (D) at ``mfu`` (U) on a batch of
        ``batch_tokens``: FLOPs = 6·P_active·D (the Scaling Book's count), chips = ⌊batch / (threshold ×
        E/k)⌋, the threshold being the one over every torus axis (850 on TPU v5p), else across nodes; days
        = FLOPs / (chips · C · U) / 86,400. LLaMA-3 70B's 15e12 tokens on a 16e6 batch: 18,823 v5p chips
        at 50 % MFU, about 17 days."""
        tokens = checks.positive_number(train_tokens, label("train_tokens"), "train_tokens", high=1e18)
        fraction = checks.fraction(mfu, label("mfu"), "mfu")
        flops = 6.0 * self.model.active_params * tokens
        per_chip = (self.preset.dp_all_axes or self.preset.dp_across_nodes) * moe_factor(self.model)
        estimate = training_at_threshold(flops, batch_tokens, per_chip, self.preset.peak_flops_per_s, fraction)
        return replace(self, training=TrainingAtThreshold(tokens, fraction, flops, batch_tokens, per_chip, estimate))

    def record(self) -> dict[str, Any]:
        """The ``thresholds`` object of ``ainotes parallel --json``: tokens per chip below which each
        kind of data parallelism waits on its link, the TP degree past which TP waits, E/k."""
        found, model = self.preset, self.model
        bandwidth = found.intra_link.bandwidth_bytes_per_s
        return {
            "peak_flops_per_s": found.peak_flops_per_s, "link_in_node": found.intra_link.id,
            "link_across_nodes": found.inter_link.id, "torus_axes": found.torus_axes,
            "dp_tokens_per_chip_in_node": found.dp_in_node,
            "dp_tokens_per_chip_across_nodes": found.dp_across_nodes,
            "dp_tokens_per_chip_all_torus_axes": found.dp_all_axes,
            "model_d_ff": model.d_ff,
            "tp_degree_limit": tp_degree_limit(model.d_ff, found.peak_flops_per_s, bandwidth),
            "fsdp_tp_tokens_per_chip_floor": fsdp_tp_batch_floor(model.d_ff, found.peak_flops_per_s, bandwidth),
            "moe_experts_over_active": moe_factor(model),
            "moe_dp_tokens_per_chip_in_node": found.dp_in_node * moe_factor(model),
            "training": None if self.training is None else self.training.record(),
        }
