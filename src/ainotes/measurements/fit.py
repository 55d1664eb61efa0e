"""A collective's measured times held against the α–β model, and α and β fitted to them.

The fit. A measured time t at size S is fitted with t = c + m·S by least squares on the *relative*
residuals, Σ((c + m·S − t)/t)², so a 10 µs point at 8 bytes counts as much as a 100 ms point at
8 GiB (plain least squares would fit the largest sizes only and leave c to chance). c and m are then
read through one algorithm's coefficients, t = a·α + b·S/B (:func:`ainotes.core.collective_cost.coefficients`):
α = c ÷ a and β = 1/B = m ÷ b, so the fitted α and β compare with a link preset's. The algorithm is
the bandwidth-optimal one listed first for the collective in
:data:`ainotes.core.collective_cost.ALGORITHMS` (the ring for an all-reduce, all-gather or
reduce-scatter: 2(p−1)·α + 2(p−1)/p·S·β for an all-reduce), which is what NCCL runs for large
messages when ``NCCL_ALGO=Ring``; a send/receive is t = α + S·β itself. A negative c (the smallest
sizes faster than the line through the rest) is refitted with c = 0 and said so.

The model's error, per size: the fastest algorithm of the α–β model on the link (what
:func:`~ainotes.core.collective_cost.best_algorithm` picks), error = model ÷ measured − 1, against
the out-of-place time (the in-place one where a file has only that block). NCCL itself picks among
Ring, Tree, NVLS (NVLink SHARP: the NVSwitch reduces, so busbw can pass the wire rate) and
CollNet by its own tuning table (``src/graph/tuning.cc``); a ``NCCL_ALGO`` the file sets is
reported beside the error, since the model knows no NVLS.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ainotes.core import collective_cost
from ainotes.core.collectives import OPS
from ainotes.core.links import Link
from ainotes.measurements.nccl_tests import BLOCKS, NcclTestsRun


@dataclass(frozen=True)
class AlphaBetaFit:
    """t = intercept + slope·S fitted to a run, read as α and β through ``algorithm``'s coefficients."""

    algorithm: str
    latency_rounds: float
    bandwidth_multiple: float
    intercept_s: float
    slope_s_per_byte: float
    points: int
    intercept_fixed: bool

    @property
    def alpha_s(self) -> float:
        """α = intercept ÷ the algorithm's latency rounds a."""
        return self.intercept_s / self.latency_rounds

    @property
    def beta_s_per_byte(self) -> float:
        """β = 1/B = slope ÷ the algorithm's bandwidth multiple b."""
        return self.slope_s_per_byte / self.bandwidth_multiple

    @property
    def bandwidth_gbps(self) -> float:
        """B = 1/β in 1e9 B/s."""
        return 1 / self.beta_s_per_byte / 1e9 if self.beta_s_per_byte > 0 else math.inf


@dataclass(frozen=True)
class ModelRow:
    """One size: the model's best algorithm and time, the measured time, error = model ÷ measured − 1."""

    message_bytes: int
    algorithm: str
    time_s: float
    measured_s: float

    @property
    def error(self) -> float:
        return self.time_s / self.measured_s - 1


def measured_times(run: NcclTestsRun) -> tuple[str, list[tuple[int, float]]]:
    """(block, [(bytes, seconds)]) for the sizes the model accepts (≥ 1 byte), out-of-place first."""
    for block in BLOCKS:
        column = f"{block}_time_us"
        if column in run.table:
            sizes, times = run.table["bytes"], run.table[column]
            pairs = [(int(size), float(us) * 1e-6) for size, us in zip(sizes, times, strict=True)
                     if size >= collective_cost.MIN_MESSAGE_BYTES and isinstance(us, float) and us > 0]
            if pairs:
                return block, pairs
    return BLOCKS[0], []


def fit_algorithm(op: str) -> str | None:
    """The algorithm whose coefficients read the fit: the first (bandwidth-optimal) for ``op``."""
    return collective_cost.ALGORITHMS[op][0] if op in OPS else ("point-to-point" if op == "sendrecv" else None)


def _coefficients(op: str, algorithm: str, ranks: int) -> tuple[float, float]:
    if algorithm == "point-to-point":
        return 1.0, 1.0
    if collective_cost.terms(op, algorithm) is None:  # a pipelined chain: its large-S limit, (p−1)·α + S/B
        return float(ranks - 1), 1.0
    return collective_cost.coefficients(op, algorithm, ranks)


def fit_alpha_beta(points: Sequence[tuple[int, float]], op: str, ranks: int) -> AlphaBetaFit | None:
    """α and β from (bytes, seconds) points; ``None`` with fewer than two sizes or an op the model lacks."""
    algorithm = fit_algorithm(op)
    if algorithm is None or len({size for size, _ in points}) < 2 or ranks < collective_cost.MIN_RANKS:
        return None
    sizes = np.array([float(size) for size, _ in points])
    times = np.array([time for _, time in points])
    design = np.column_stack([1 / times, sizes / times])
    (intercept, slope), *_ = np.linalg.lstsq(design, np.ones_like(times), rcond=None)
    fixed = bool(intercept < 0)
    if fixed:
        intercept = 0.0
        slope = float(np.sum(sizes / times) / np.sum((sizes / times) ** 2))
    rounds, multiple = _coefficients(op, algorithm, ranks)
    return AlphaBetaFit(algorithm, rounds, multiple, float(intercept), float(slope), len(points), fixed)


def model_rows(points: Sequence[tuple[int, float]], op: str, ranks: int, link: Link) -> list[ModelRow]:
    """The α–β model's fastest algorithm at each measured size on ``link``, beside the measurement."""
    if op not in OPS or not collective_cost.MIN_RANKS <= ranks <= collective_cost.MAX_RANKS:
        return []
    rows = []
    for size, measured in points:
        best = collective_cost.best_algorithm(op, ranks, float(size),
                                              bandwidth_bytes_per_s=link.group_bandwidth_bytes_per_s(ranks),
                                              latency_s=link.latency_s)
        rows.append(ModelRow(size, best.algorithm, best.time_s, measured))
    return rows
