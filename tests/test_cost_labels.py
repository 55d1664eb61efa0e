"""The cost chart's crossover labels never meet another text: each other, the regime labels, the axes,
the title or the legend, in any state of the selects, on the stills and on the live chart's plot sizes.

Rendered by vl-convert (the stills' renderer) and measured without a browser (tests/svg_text.py); the
browser tier sweeps every state of the live chart (tests/test_cost_labels_browser.py)."""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import pytest

from ainotes import render
from ainotes.charts import cost, cost_labels
from ainotes.core import collective_cost as cc
from ainotes.presets.links import load_links
from svg_text import overlaps, text_boxes

LINKS = load_links(Path(__file__).parent / "fixtures" / "cost" / "links")
# The picture sizes the chart is drawn at: the still, the phone still, and the live chart's box at a
# 1280 px screen (688 px column), a 600–960 px screen (569 px) and the smallest box that shows labels.
SIZES = {"still": (cost.STATIC_WIDTH_PX, cost.STATIC_HEIGHT_PX),
         "phone": (cost.NARROW_STATIC_WIDTH_PX, cost.NARROW_STATIC_HEIGHT_PX),
         "desk": (688, 459), "tablet": (569, 379), "smallest": (503, 335)}
STATES = [(op, ranks, link.id) for op in cc.ALGORITHMS for ranks in cost.RANK_CHOICES for link in LINKS]


def problems(op: str, ranks: int, link_id: str, size: str) -> list[str]:
    width, height = SIZES[size]
    spec = cost.cost_spec(LINKS, op=op, ranks=ranks, link_id=link_id)
    svg = render.svg({**spec, "width": width, "height": height})
    return [f"{op} {ranks} {link_id} {size}: {p}" for p in overlaps(text_boxes(svg), width=width, height=height)]


def _crowded() -> list[tuple[str, int, str]]:
    """The states with the most marks in view, one per primitive and link: where labels compete."""
    picked = []
    product = {link.id: link.latency_s * link.bandwidth_bytes_per_s for link in LINKS}
    rows = cost.cost_spec(LINKS, link_id=LINKS[0].id)["datasets"]["crossovers"]
    for op, link in itertools.product(cc.ALGORITHMS, LINKS):
        def shown(ranks: int, op: str = op, link_id: str = link.id) -> int:
            return sum(1 for r in rows if r["op"] == op and r["ranks"] == ranks
                       and cost.MIN_BYTES <= r["x"] * product[link_id] <= cost.MAX_BYTES)
        picked.append((op, max(cost.RANK_CHOICES, key=shown), link.id))
    return picked


CROWDED_SIZES = ("still", "desk", "tablet")


@pytest.mark.parametrize("size", CROWDED_SIZES)
def test_crowded_states_draw_no_overlapping_text(size: str) -> None:
    # Each crowded state at one of the three sizes, in turn (make test-matrix draws every state at each).
    turn = CROWDED_SIZES.index(size)
    found = [p for state in _crowded()[turn::len(CROWDED_SIZES)] for p in problems(*state, size)]
    assert not found, "\n".join(found)


def test_the_broadcast_chart_of_the_page_keeps_its_labels_apart() -> None:
    # docs/collective-cost.md's second chart (broadcast, 64 ranks): four marks within a decade and a half,
    # whose labels overlapped four times in the still.
    for size in ("still", "desk", "tablet", "smallest", "phone"):
        assert problems("broadcast", 64, "mid-fabric", size) == []
    svg = render.svg(cost.cost_spec(LINKS, op="broadcast", ranks=64, link_id="mid-fabric"))
    drawn = [box.text for box in text_boxes(svg) if " → " in box.text or " = " in box.text]
    assert len(drawn) >= 2, drawn  # the labels that fit are still drawn


@pytest.mark.matrix
# Not "smallest": no still is drawn there, and vl-convert lays a chart out once, where a title that
# takes two lines below a plot width (cost.NARROW_TITLE_PX) settles only in the live view's second pass
# (the browser tier sweeps that box: tests/test_cost_labels_browser.py).
@pytest.mark.parametrize("size", [size for size in SIZES if size != "smallest"])
def test_every_state_draws_no_overlapping_text(size: str) -> None:
    found = [p for state in STATES for p in problems(*state, size)]
    assert not found, "\n".join(found[:40])


def _absolute(box: cost_labels.Box, width: float, height: float) -> tuple[float, float, float, float]:
    return (box.fx * width + box.x0, box.fy * height + box.y0, box.fx * width + box.x1, box.fy * height + box.y1)


def test_a_placement_holds_on_every_plot_its_tier_covers() -> None:
    # The spots are chosen once per tier; the live chart's plot may be any size from the tier's up.
    rows = cost.cost_spec(LINKS, link_id=LINKS[0].id)["datasets"]["crossovers"]
    checked = 0
    for (op, ranks, link_id), tier_index in itertools.product(STATES, range(len(cost_labels.TIERS))):
        tier = cost_labels.TIERS[tier_index]
        k = [link.id for link in LINKS].index(link_id)
        link = LINKS[k]
        product = link.latency_s * link.bandwidth_bytes_per_s
        lo, hi = cost_labels.y_decades(op, ranks, link, cost.MIN_BYTES, cost.MAX_BYTES)
        boxes = cost_labels.regime_boxes(cost_labels.balance_bytes(op, ranks, link), cost.MIN_BYTES, cost.MAX_BYTES)
        for row in rows:
            size = row["x"] * product
            spot = row["places"][k * len(cost_labels.TIERS) + tier_index]
            if row["op"] != op or row["ranks"] != ranks or spot == cost_labels.NOT_DRAWN:
                continue
            assert cost.MIN_BYTES <= size <= cost.MAX_BYTES
            fy = 1 - (math.log10(row["tau"] * link.latency_s) - lo) / (hi - lo)
            (_, align, dx, dy), = [s for s in cost_labels.SPOTS if s[0] == spot]
            boxes.append(cost_labels.text_box(cost_labels.x_fraction(size, cost.MIN_BYTES, cost.MAX_BYTES), fy,
                                              [row["pair"], "at " + cost.size_label(size)], align, dx, dy))
        for scale_x, scale_y in ((1, 1), (1.3, 1), (1, 1.7), (2.5, 1.2), (6, 6)):
            width, height = tier.width_px * scale_x, tier.height_px * scale_y
            placed = [_absolute(b, width, height) for b in boxes]
            for i, a in enumerate(placed):
                if i >= 2:  # a label (the regime labels are drawn only where they fit)
                    assert a[0] >= 0 and a[1] >= 0 and a[2] <= width and a[3] <= height, (op, ranks, link_id, tier)
                for b in placed[i + 1:]:
                    apart = min(a[2], b[2]) - max(a[0], b[0]) <= 0 or min(a[3], b[3]) - max(a[1], b[1]) <= 0
                    assert apart, (op, ranks, link_id, tier, scale_x, scale_y)
            checked += 1
    assert checked == len(STATES) * len(cost_labels.TIERS) * 5


def test_the_y_axis_spans_whole_decades_around_every_line() -> None:
    for op, ranks, link in itertools.product(cc.ALGORITHMS, (2, 64, 1024), LINKS):
        lo, hi = cost_labels.y_decades(op, ranks, link, cost.MIN_BYTES, cost.MAX_BYTES)
        figures = {"bandwidth_bytes_per_s": link.bandwidth_bytes_per_s, "latency_s": link.latency_s}
        for name in cc.ALGORITHMS[op]:
            for size in (cost.MIN_BYTES, cost.MAX_BYTES):
                time = cc.algorithm_time(op, name, ranks, size, **figures).time_s
                assert 10.0**lo <= time <= 10.0**hi
        assert hi - lo <= 8  # nice: no wider than the powers of ten around the lines


def test_a_label_left_out_is_named_in_the_caption() -> None:
    rows = cost.cost_spec(LINKS, link_id=LINKS[0].id)["datasets"]["crossovers"]
    left_out = 0
    for k, link in enumerate(LINKS):
        product = link.latency_s * link.bandwidth_bytes_per_s
        for row in rows:
            size = row["x"] * product
            if cost.MIN_BYTES <= size <= cost.MAX_BYTES and row["places"][2 * k + 1] == cost_labels.NOT_DRAWN:
                left_out += 1
                assert f"at {cost.size_label(size)}" in cost.caption_text(row["op"], row["ranks"], link, LINKS)
    assert left_out > 0
