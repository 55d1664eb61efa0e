"""Where the cost chart's crossover labels go, decided at build time so that no two texts ever meet.

A mark's label ("binomial tree → scatter + all-gather", "at 3.13 MB") is two lines about 190 px
wide; marks often lie a fraction of a decade apart, so labels drawn on a fixed side of their point
overlapped each other and the regime labels. For every state of the selects (primitive × rank count ×
link) this module places each label in one of a few spots around its point (:data:`SPOTS`), the
most telling marks first (diamonds, where the fastest algorithm changes, before circles), each in
the first spot that stays inside the plot and clear of every text and mark already placed; a label
with no such spot is not drawn (the caption still names that mark and its size, and its tooltip
stays).

The live chart takes the width of its column, so a placement must hold at any plot size. Every box
here is a point of the plot (a fraction of its width and height) plus fixed pixel offsets, so two
boxes apart along x at plot width W stay apart at any wider plot when the left one's point is not
right of the other's, and likewise along y. A placement is therefore checked at the smallest plot of
its :data:`TIERS` with that order condition, and holds on every larger plot; the chart picks the
tier its plot reaches, and draws no labels on a plot under the smallest tier.

The y axis is the nice log domain of the lines (powers of ten around the fastest time at 1 kB and
the slowest at 10 GB); the chart is given it (:func:`y_decades`), so these positions are Vega's.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ainotes.charts import textsize
from ainotes.core import collective_cost as cc
from ainotes.core.links import Link

LABEL_FONT_PX = 12
LABEL_LINE_PX = 14
# Vega puts the first line's baseline round(0.79 × size) below y for baseline "top" (vega-scenegraph,
# text offset), and the next lines one line height apart.
TOP_BASELINE_PX = round(0.79 * LABEL_FONT_PX)
GAP_PX = 2  # between any two boxes, and between a box and the plot's edge
KERNING_PX = 2  # a label's measured width errs this much on the wide side
POINT_PX = 7  # half a mark's side (diamond 110 px², circle 90 px², their strokes)
# Where a label may go around its point: (code, align, dx, dy) for a two-line label with baseline "top".
# dy: above, the block's bottom lies 6 px over the point; below, its top 6 px under it.
_ABOVE_DY = -6 - (TOP_BASELINE_PX + LABEL_LINE_PX) - 3  # descent of 12 px text: 2.5 px
_BELOW_DY = 6 - TOP_BASELINE_PX + 11  # ascent of 12 px text: 10.9 px
SPOTS: tuple[tuple[str, str, int, int], ...] = (
    ("a", "right", -8, _ABOVE_DY),  # above left
    ("b", "left", 8, _BELOW_DY),  # below right
    ("c", "left", 8, _ABOVE_DY),  # above right
    ("d", "right", -8, _BELOW_DY),  # below left
    ("e", "center", 0, _ABOVE_DY - 2),  # above
    ("f", "center", 0, _BELOW_DY + 2),  # below
)
NOT_DRAWN = "-"


@dataclass(frozen=True)
class Tier:
    """Labels placed for plots at least ``width_px`` × ``height_px``."""

    width_px: int
    height_px: int


#: The smallest plot each placement holds on, smallest first: an intermediate column (a 600–960 px
#: screen shows the plot about 486 × 177), then a desk's (the still's plot is 637 × 278 and more,
#: the live chart's at a 1280 px screen 605 × 257).
TIERS: tuple[Tier, ...] = (Tier(420, 130), Tier(580, 240))
# The regime labels at the plot's top (ainotes.charts.cost: 12 px italic, 6 px from the rule and the top).
REGIME_TEXTS = (("latency-bound", "right", -6), ("bandwidth-bound", "left", 6))
REGIME_TOP_PX = 6


@dataclass(frozen=True)
class Box:
    """A rectangle at a plot fraction (``fx`` from the left, ``fy`` from the top) plus pixel offsets."""

    fx: float
    x0: float
    x1: float
    fy: float
    y0: float
    y1: float


def _apart(lo: Box, hi: Box, tier: Tier, axis: str) -> bool:
    """``lo`` wholly before ``hi`` along ``axis`` on every plot at least ``tier``'s size."""
    f_lo, f_hi = (lo.fx, hi.fx) if axis == "x" else (lo.fy, hi.fy)
    end, start = (lo.x1, hi.x0) if axis == "x" else (lo.y1, hi.y0)
    size = tier.width_px if axis == "x" else tier.height_px
    return f_hi >= f_lo and (f_hi - f_lo) * size + start - end >= GAP_PX


def disjoint(a: Box, b: Box, tier: Tier) -> bool:
    """Apart along x or y on every plot at least ``tier``'s size."""
    return any(_apart(p, q, tier, axis) for axis in ("x", "y") for p, q in ((a, b), (b, a)))


def inside(box: Box, tier: Tier) -> bool:
    """Within the plot, :data:`GAP_PX` from each edge, on every plot at least ``tier``'s size."""
    return (box.fx * tier.width_px + box.x0 >= GAP_PX and (1 - box.fx) * tier.width_px - box.x1 >= GAP_PX
            and box.fy * tier.height_px + box.y0 >= GAP_PX and (1 - box.fy) * tier.height_px - box.y1 >= GAP_PX)


def text_box(fx: float, fy: float, lines: Sequence[str], align: str, dx: float, dy: float, *,
             size_px: float = LABEL_FONT_PX, style: str = "Regular") -> Box:
    """The box of ``lines`` drawn with baseline "top" at (``dx``, ``dy``) from a point."""
    font = textsize.metrics(style)
    width = max(font.width_px(line, size_px) for line in lines) + KERNING_PX
    left = {"left": dx, "right": dx - width, "center": dx - width / 2}[align]
    first = dy + round(0.79 * size_px)
    top, bottom = first - font.ascent_px(size_px), first + (len(lines) - 1) * LABEL_LINE_PX + font.descent_px(size_px)
    return Box(fx, left, left + width, fy, top, bottom)


def _point_box(fx: float, fy: float) -> Box:
    return Box(fx, -POINT_PX, POINT_PX, fy, -POINT_PX, POINT_PX)


def x_fraction(message_bytes: float, low_bytes: float, high_bytes: float) -> float:
    """Where a size sits across the log x axis, 0 at ``low_bytes`` and 1 at ``high_bytes``."""
    return (math.log10(message_bytes) - math.log10(low_bytes)) / (math.log10(high_bytes) - math.log10(low_bytes))


def y_decades(op: str, ranks: int, link: Link, low_bytes: float, high_bytes: float) -> tuple[int, int]:
    """The y axis in powers of ten: below the fastest line at ``low_bytes``, above the slowest at
    ``high_bytes`` (every line rises with the size), as Vega's nice log domain would take them; B is the
    group's at ``ranks`` (:meth:`~ainotes.core.links.Link.group_bandwidth_bytes_per_s`: less on a full mesh)."""
    figures = {"bandwidth_bytes_per_s": link.group_bandwidth_bytes_per_s(ranks), "latency_s": link.latency_s}
    fastest = min(cc.algorithm_time(op, name, ranks, low_bytes, **figures).time_s for name in cc.ALGORITHMS[op])
    slowest = max(cc.algorithm_time(op, name, ranks, high_bytes, **figures).time_s for name in cc.ALGORITHMS[op])
    return math.floor(math.log10(fastest)), math.ceil(math.log10(slowest))


@dataclass(frozen=True)
class Mark:
    """One mark of a state: its row's index in the chart's crossovers, kind, lines and position."""

    row: int
    switch: bool
    lines: tuple[str, str]
    fx: float
    fy: float


def _spots_in_order(mark: Mark) -> list[tuple[str, str, int, int]]:
    # Toward the plot's middle first: a label right of a point near the right edge has no room.
    first = ("a", "d") if mark.fx >= 0.5 else ("b", "c")
    return sorted(SPOTS, key=lambda spot: (spot[0] not in first, SPOTS.index(spot)))


def place(marks: Sequence[Mark], fixed: Sequence[Box], tier: Tier) -> dict[int, str]:
    """Each mark's spot code (or :data:`NOT_DRAWN`) by row: diamonds first, then circles, left to right;
    each label in its first spot inside the plot and clear of ``fixed`` (the regime labels), every
    mark's point and every label placed before it."""
    points = {m.row: _point_box(m.fx, m.fy) for m in marks}
    taken = list(fixed)
    chosen = {}
    for mark in sorted(marks, key=lambda m: (not m.switch, m.fx)):
        chosen[mark.row] = NOT_DRAWN
        # Its own point: the spots' offsets keep clear of it.
        others = [*taken, *(box for row, box in points.items() if row != mark.row)]
        for code, align, dx, dy in _spots_in_order(mark):
            box = text_box(mark.fx, mark.fy, mark.lines, align, dx, dy)
            if inside(box, tier) and all(disjoint(box, other, tier) for other in others):
                chosen[mark.row] = code
                taken.append(box)
                break
    return chosen


def regime_boxes(first_balance_bytes: float, low_bytes: float, high_bytes: float) -> list[Box]:
    """The regime labels either side of the balance rule, as boxes (drawn only where they fit, so
    counted wherever they might be)."""
    clamped = min(max(first_balance_bytes, low_bytes), high_bytes)
    fx = x_fraction(clamped, low_bytes, high_bytes)
    return [text_box(fx, 0.0, [text], align, dx, REGIME_TOP_PX, style="Italic") for text, align, dx in REGIME_TEXTS]


def balance_bytes(op: str, ranks: int, link: Link) -> float:
    """Where the first algorithm's latency and bandwidth terms are equal, as the chart draws the rule:
    a·α·B ÷ b, or (p−2)·α·B (at least α·B) for a chain, B the group's at p."""
    product = link.latency_s * link.group_bandwidth_bytes_per_s(ranks)
    first = cc.ALGORITHMS[op][0]
    if cc.terms(op, first) is None:
        return max(1, ranks - 2) * product
    a, b = cc.coefficients(op, first, ranks)
    return a * product / b


@dataclass(frozen=True)
class Layout:
    """Per crossovers row, its spot code for each link and tier (``places``: ``len(links) × len(TIERS)``
    characters, link by link); per state, the y axis's powers of ten."""

    places: list[str]
    decades: dict[tuple[str, int, str], tuple[int, int]]


def layout(links: tuple[Link, ...], rows: Sequence[dict[str, Any]], *,
           low_bytes: float, high_bytes: float, ranks_choices: Sequence[int],
           size_label: Callable[[float], str]) -> Layout:
    """Every state's y axis and label spots for the chart's ``rows`` (the crossovers, at ``x`` = S ÷ (α·B)
    and ``tau`` = t ÷ α); ``size_label`` writes a size as the label does."""
    frozen = tuple(tuple(sorted(row.items())) for row in rows)
    return _layout(tuple(links), frozen, low_bytes, high_bytes, tuple(ranks_choices), size_label)


@functools.cache
def _layout(links: tuple[Link, ...], frozen_rows: tuple[tuple[tuple[str, Any], ...], ...],
            low_bytes: float, high_bytes: float, ranks_choices: tuple[int, ...],
            size_label: Callable[[float], str]) -> Layout:
    rows = [dict(row) for row in frozen_rows]
    places = [[NOT_DRAWN] * (len(links) * len(TIERS)) for _ in rows]
    decades = {}
    for op in cc.ALGORITHMS:
        for ranks in ranks_choices:
            mine = [(i, row) for i, row in enumerate(rows) if row["op"] == op and row["ranks"] == ranks]
            for k, link in enumerate(links):
                product = link.latency_s * link.group_bandwidth_bytes_per_s(ranks)
                lo, hi = decades[(op, ranks, link.id)] = y_decades(op, ranks, link, low_bytes, high_bytes)
                marks = []
                for i, row in mine:
                    size = row["x"] * product
                    if not low_bytes <= size <= high_bytes:
                        continue
                    time = row["tau"] * link.latency_s
                    lines = (row["pair"], "at " + size_label(size))
                    fy = 1 - (math.log10(time) - lo) / (hi - lo)
                    marks.append(Mark(i, row["kind"] == "switch", lines, x_fraction(size, low_bytes, high_bytes), fy))
                fixed = regime_boxes(balance_bytes(op, ranks, link), low_bytes, high_bytes)
                for t, tier in enumerate(TIERS):
                    for i, code in place(marks, fixed, tier).items():
                        places[i][k * len(TIERS) + t] = code
    return Layout(["".join(p) for p in places], decades)
