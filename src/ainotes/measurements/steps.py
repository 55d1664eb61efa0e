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
from typing import TYPE_CHECKING, Any

from ainotes.core import collective_cost
from ainotes.core.collectives import OPS
from ainotes.core.links import Link
from ainotes.measurements.source import MeasuredFileError

if TYPE_CHECKING:  # the trace's tables are pandas; a page drawn from a kept summary imports none of it
    from ainotes.measurements.kineto import KinetoTrace

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


def no_steps(path: str, where: str) -> MeasuredFileError:
    """The one line for a trace that marks no step."""
    return MeasuredFileError(f"{where}: {path} marks no step (no 'ProfilerStep#N' event): record it with "
                             "torch.profiler.profile(schedule=...) and call prof.step() after each step")


def require_steps(trace: KinetoTrace, where: str) -> StepTimes:
    """:func:`step_times`, or one line saying the trace marks no step."""
    found = step_times(trace)
    if found is None:
        raise no_steps(trace.path, where)
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


#: One kind of NCCL collective in a trace: (op, message bytes, group size, calls, mean seconds a call).
CollectiveGroup = tuple[str, int, int, int, float]


def collective_groups(trace: KinetoTrace) -> list[CollectiveGroup]:
    """The trace's NCCL kernels that name their collective, grouped by (op, bytes, group size) in the
    order the trace first shows each."""
    table = trace.collectives
    if not len(table):
        return []
    rows = table.dropna(subset=["op", "bytes", "group_size"])
    return [(str(op), int(size), int(ranks), len(group), float(group["duration_s"].mean()))
            for (op, size, ranks), group in rows.groupby(["op", "bytes", "group_size"], sort=False)]


def collective_matches(trace: KinetoTrace, link_for: Callable[[int], Link | None]) -> list[CollectiveMatch]:
    """The trace's NCCL kernels grouped by (op, bytes, group size), each beside the model's fastest
    algorithm for that op and size on the link ``link_for(ranks)`` gives (``None``: no model)."""
    return matches_of(collective_groups(trace), link_for)


def matches_of(groups: list[CollectiveGroup], link_for: Callable[[int], Link | None]) -> list[CollectiveMatch]:
    """:func:`collective_matches` from the groups :func:`collective_groups` gives."""
    matches = []
    for op, size, ranks, calls, measured in groups:
        link = link_for(ranks) if op in OPS and ranks >= collective_cost.MIN_RANKS else None
        model = (collective_cost.best_algorithm(op, ranks, float(size),
                                                bandwidth_bytes_per_s=link.group_bandwidth_bytes_per_s(ranks),
                                                latency_s=link.latency_s)
                 if link is not None and ranks <= collective_cost.MAX_RANKS else None)
        matches.append(CollectiveMatch(op, size, ranks, calls, measured, model.time_s if model else None,
                                       model.algorithm if model else None, link.id if link else None))
    return sorted(matches, key=lambda m: (m.op, -m.message_bytes))


@dataclass(frozen=True)
class TraceSummary:
    """What a chart takes from a trace, free of pandas (kept across processes by
    :mod:`ainotes.measurements.kept`): its path and world size, its largest NCCL group, its steps, its
    collective groups, and the bytes per (collective, group size) the model's layouts are matched by."""

    path: str
    world_size: int | None
    largest_group: int | None
    steps: StepTimes | None
    groups: list[CollectiveGroup]
    bytes_by_kind: list[tuple[str, int, float]]  # (op, group size, bytes over the whole trace)

    @classmethod
    def of(cls, trace: KinetoTrace, modelled: frozenset[str]) -> TraceSummary:
        """The summary of a trace read; ``modelled``: the collectives a layout's model issues."""
        table = trace.collectives
        largest, by_kind = None, []
        if len(table):
            groups = table["group_size"].dropna()
            largest = int(groups.max()) if len(groups) else None
            rows = table.dropna(subset=["op", "bytes", "group_size"])
            rows = rows[rows["op"].isin(list(modelled)) & (rows["group_size"] >= 2)]
            by_kind = [(str(op), int(g), float(b)) for (op, g), b in rows.groupby(["op", "group_size"])["bytes"].sum()
                       .items()]
        return cls(trace.path, trace.world_size, largest, step_times(trace), collective_groups(trace), by_kind)

    def record(self) -> dict[str, Any]:
        steps = self.steps
        return {"path": self.path, "world_size": self.world_size, "largest_group": self.largest_group,
                "steps": None if steps is None else [list(steps.names), list(steps.durations_s), steps.source,
                                                     steps.warmup],
                "groups": [list(g) for g in self.groups], "bytes_by_kind": [list(k) for k in self.bytes_by_kind]}

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> TraceSummary:
        steps = record["steps"]
        return cls(record["path"], record["world_size"], record["largest_group"],
                   None if steps is None else StepTimes(tuple(steps[0]), tuple(steps[1]), steps[2], steps[3]),
                   [(op, size, ranks, calls, mean) for op, size, ranks, calls, mean in record["groups"]],
                   [(op, g, b) for op, g, b in record["bytes_by_kind"]])
