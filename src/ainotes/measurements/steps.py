"""Step times from a PyTorch profiler trace, and the trace's collectives beside the α–β model.

A step is what ``torch.profiler.profile(schedule=...)`` marks with ``prof.step()``: a complete event
named ``ProfilerStep#N`` (``N`` the step's number) on the CPU thread, ``cat: "user_annotation"``
(``cpu_op`` in traces before PyTorch 1.13), whose ``dur`` is the step's wall time in µs. Where a
trace has no such CPU event, the GPU's copy of the annotation (``cat: "gpu_user_annotation"``, the
span of the step's GPU work) is read instead. The first step read is left out as warm-up (allocator,
NCCL communicator and cuDNN autotuning costs land in it) when more than one step remains; the figure
shown is the median of the rest, with their least and greatest.

The model's error is ``model ÷ measured − 1`` (the sign says which way the model is off), as for
the nccl-tests and Nsight Compute files (:mod:`ainotes.measurements.fit`).
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Callable
from dataclasses import dataclass

from ainotes.core import collective_cost
from ainotes.core.collectives import OPS
from ainotes.core.links import Link
from ainotes.measurements.kineto import KinetoTrace
from ainotes.measurements.source import MeasuredFileError

_STEP_NUMBER = re.compile(r"ProfilerStep#(\d+)")


@dataclass(frozen=True)
class StepTimes:
    """The steps a trace marks: ``names`` and ``durations_s`` in trace order, ``source`` says which events,
    ``warmup`` how many leading steps the figures leave out (0 or 1)."""

    names: tuple[str, ...]
    durations_s: tuple[float, ...]
    source: str
    warmup: int

    @property
    def counted_s(self) -> tuple[float, ...]:
        return self.durations_s[self.warmup:]

    @property
    def median_s(self) -> float:
        return float(statistics.median(self.counted_s))

    @property
    def min_s(self) -> float:
        return min(self.counted_s)

    @property
    def max_s(self) -> float:
        return max(self.counted_s)

    @property
    def spread(self) -> float:
        """(greatest − least) ÷ median of the counted steps: 0 for one step."""
        return (self.max_s - self.min_s) / self.median_s if self.median_s > 0 else 0.0

    def warmup_text(self) -> str:
        """How the figure was taken, in words (for captions and the command)."""
        counted = len(self.counted_s)
        steps = f"{counted} step{'s' if counted != 1 else ''}"
        if self.warmup:
            return f"the median of {steps}, the first ({self.names[0]}) left out as warm-up"
        return f"{steps}, none left out as warm-up (the trace holds one)"

    def record(self) -> dict:
        return {"source": self.source, "steps": [{"step": n, "duration_s": d} for n, d in
                                                 zip(self.names, self.durations_s, strict=True)],
                "warmup_steps": self.warmup, "counted": len(self.counted_s), "median_s": self.median_s,
                "min_s": self.min_s, "max_s": self.max_s}


def _ordered(table) -> tuple[tuple[str, ...], tuple[float, ...]]:
    """Steps by number (a trace lists events in no set order); one entry per number."""
    rows: dict[int, tuple[str, float]] = {}
    for position, row in enumerate(table.itertuples(index=False)):
        found = _STEP_NUMBER.match(str(row.step))
        number = int(found.group(1)) if found else position
        rows.setdefault(number, (str(row.step), float(row.duration_s)))
    ordered = [rows[n] for n in sorted(rows)]
    return tuple(n for n, _ in ordered), tuple(d for _, d in ordered)


def step_times(trace: KinetoTrace) -> StepTimes | None:
    """The trace's steps (CPU annotations first, else the GPU's), ``None`` when it marks none."""
    for table, source in ((trace.steps, "ProfilerStep#N annotations (CPU wall time)"),
                          (trace.gpu_steps, "ProfilerStep#N GPU annotations (span of the step's GPU work)")):
        if len(table):
            names, durations = _ordered(table)
            positive = [d for d in durations if d > 0]
            if not positive:
                continue
            return StepTimes(names, durations, source, 1 if len(durations) > 1 else 0)
    return None


def require_steps(trace: KinetoTrace, where: str) -> StepTimes:
    """:func:`step_times`, or one line saying the trace marks no step."""
    found = step_times(trace)
    if found is None:
        raise MeasuredFileError(f"{where}: {trace.path} marks no step (no 'ProfilerStep#N' event): record it with "
                                "torch.profiler.profile(schedule=...) and call prof.step() after each step")
    return found


@dataclass(frozen=True)
class CollectiveMatch:
    """One kind of NCCL collective in the trace (op, message bytes, group size) beside the α–β model."""

    op: str
    message_bytes: int
    ranks: int
    calls: int
    measured_s: float  # the mean of the calls
    model_s: float | None
    algorithm: str | None
    link: str | None

    @property
    def error(self) -> float | None:
        return self.model_s / self.measured_s - 1 if self.model_s is not None and self.measured_s > 0 else None


def collective_matches(trace: KinetoTrace, link_for: Callable[[int], Link | None]) -> list[CollectiveMatch]:
    """The trace's NCCL kernels grouped by (op, bytes, group size), each beside the model's fastest
    algorithm for that op and size on the link ``link_for(ranks)`` gives (``None``: no model)."""
    table = trace.collectives
    if not len(table):
        return []
    rows = table.dropna(subset=["op", "bytes", "group_size"])
    matches = []
    for (op, size_cell, ranks_cell), group in rows.groupby(["op", "bytes", "group_size"], sort=False):
        size, ranks = int(size_cell), int(ranks_cell)
        measured = float(group["duration_s"].mean())
        link = link_for(ranks) if op in OPS and ranks >= collective_cost.MIN_RANKS else None
        model = (collective_cost.best_algorithm(op, ranks, float(size),
                                                bandwidth_bytes_per_s=link.bandwidth_bytes_per_s,
                                                latency_s=link.latency_s)
                 if link is not None and ranks <= collective_cost.MAX_RANKS else None)
        matches.append(CollectiveMatch(str(op), size, ranks, len(group), measured,
                                       model.time_s if model else None, model.algorithm if model else None,
                                       link.id if link else None))
    return sorted(matches, key=lambda m: (m.op, -m.message_bytes))
