"""Steppers are drawn at their own size, one SVG unit to one CSS pixel (issue 19): what fits where.

A 360 px phone's column is 328 px wide and a 1280 px desk's 688 px (Material's layout, measured in
tests/test_browser_collectives.py and tests/test_cost_truth.py, which check the same in a browser).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

from ainotes.charts.collective import BOX_W, chunk_box_label, frame_svg
from ainotes.core.collectives import OPS, RING_OPS, Chunk, simulate

PHONE_COLUMN_PX = 328
DESK_COLUMN_PX = 688
# DejaVu Sans Mono, the monospace face Debian's chromium draws the box labels in: 0.602 em a glyph.
MONO_GLYPH_PX = 11 * 0.602


def frame_width(op: str, ranks: int, schedule: str = "logical") -> float:
    svg = ET.fromstring(frame_svg(simulate(op, ranks, schedule=schedule), 0, standalone=False))
    width = float(svg.get("width"))
    assert svg.get("viewBox") == f"0 0 {svg.get('width')} {svg.get('height')}", "drawn at its own size"
    return width


@pytest.mark.parametrize("op", OPS)
def test_four_ranks_fit_a_phone_and_eight_a_desk(op: str) -> None:
    assert frame_width(op, 4) <= PHONE_COLUMN_PX
    assert frame_width(op, 8) <= DESK_COLUMN_PX
    if op in RING_OPS:
        assert frame_width(op, 8, "ring") <= DESK_COLUMN_PX


@pytest.mark.parametrize(("op", "schedule"), [(op, "logical") for op in OPS] + [(op, "ring") for op in RING_OPS])
def test_every_box_label_fits_its_box_at_eleven_px(op: str, schedule: str) -> None:
    for ranks in range(2, 9):
        for frame in simulate(op, ranks, schedule=schedule).frames:
            for row in frame.buffers:
                for chunk in row:
                    if chunk is not None:
                        for line in chunk_box_label(chunk):
                            assert len(line) * MONO_GLYPH_PX <= BOX_W - 4, (op, ranks, line)


def test_a_ring_sum_that_wraps_is_named_from_where_it_started() -> None:
    # Ring reduce-scatter on 8 ranks: the running sum of chunk 4 that began at rank 6 (g) and went on
    # through h, a and b to c.
    assert chunk_box_label(Chunk(value=0, index=4, sources=(0, 1, 2, 6, 7))) == ("Σ g4…c4",)
    assert chunk_box_label(Chunk(value=0, index=3, sources=tuple(range(8)))) == ("Σ a3…h3",)
    ring = simulate("reduce-scatter", 8, schedule="ring")
    labels = {line for frame in ring.frames for row in frame.buffers for chunk in row if chunk is not None
              for line in chunk_box_label(chunk)}
    assert not any(re.fullmatch(r"chunk \d", label) for label in labels), "every sum is named by its parts"
