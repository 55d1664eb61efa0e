"""The training-memory chart's axis, totals and caption in every state: the axis fits the selected
stage's bar and the capacity that holds it (no sliver under the largest GPU's line), no capacity line
strikes through a total, no two texts meet (a phone's clipped totals included), and the caption names
what is shown. Fixture presets and models only (tests/fixtures/memory)."""

from __future__ import annotations

import dataclasses
import math
import re
from pathlib import Path
from typing import Any

import pytest
import vl_convert as vlc

from ainotes import render
from ainotes.charts import memory as chart
from ainotes.charts import textsize
from ainotes.core.memory import TrainingMemory
from ainotes.fences import training_memory
from ainotes.presets.gpus import load_presets
from ainotes.presets.models import load_models
from svg_text import overlaps, text_boxes

FIXTURES = Path(__file__).parent / "fixtures" / "memory"
MODELS = {m.id: m for m in load_models(FIXTURES / "models")}
PRESETS = {p.id: p for p in load_presets(FIXTURES)}
WITH_CAPACITY = tuple(p for p in PRESETS.values() if p.memory_capacity_bytes is not None)
NICE = {round(step * 10.0**k, 9) for step in chart.NICE_STEPS for k in range(-2, 6)}


def config_for(model_id: str, **fields: Any) -> TrainingMemory:
    values = {**training_memory.CHART_DEFAULTS, **fields}
    return TrainingMemory.from_fields({"model": model_id, **values}, MODELS, PRESETS)


def scene(spec: dict) -> dict[str, list[dict]]:
    """The plot's items by mark type (every layer of the memory chart draws in one group)."""
    found: dict[str, list[dict]] = {}

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if node.get("marktype") in ("text", "rule", "rect") and node.get("role") == "mark":
                found.setdefault(node["marktype"], []).extend(node.get("items", []))
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(vlc.vegalite_to_scenegraph(spec, vl_version=render.vega_lite_version(spec)))
    return found


def axis_top_gb(svg: str) -> float:
    """The top of the y axis: its largest label (the axis's labels are the texts set flush right)."""
    labels = [float(t.replace(",", "")) for t in re.findall(r'<text text-anchor="end"[^>]*>([\d,.]+)</text>', svg)]
    return max(labels)


# States from a small layout (a few GB per GPU) to a run no GPU holds.
STATES = [
    ("gqa-like", {"zero": 3, "dp": 1024, "tp": 8, "pp": 1, "micro_batch": 1, "seq_len": 2048, "recompute": "full"}),
    ("gqa-like", {"zero": 1, "dp": 8, "tp": 1, "micro_batch": 1, "seq_len": 4096}),
    ("gpt-like", {"zero": 3, "dp": 1024, "tp": 8, "pp": 8, "micro_batch": 1, "seq_len": 2048,
                  "recompute": "selective", "sequence_parallel": True}),
    ("gpt-like", {"zero": 0, "dp": 8, "micro_batch": 4, "seq_len": 8192}),
]


@pytest.mark.parametrize(("model_id", "fields"), STATES)
def test_the_axis_fits_the_selected_bar_and_the_capacity_that_holds_it(model_id: str, fields: dict) -> None:
    config = config_for(model_id, **fields)
    spec = chart.memory_spec(tuple(MODELS.values()), WITH_CAPACITY, config)
    top = axis_top_gb(render.svg(spec))
    selected = config.estimate().total_bytes / 1e9
    capacities = sorted(p.memory_capacity_bytes / 1e9 for p in WITH_CAPACITY)
    holds = next((c for c in capacities if selected <= c <= chart.HOLDING_RANGE * selected), None)
    need = max(selected, holds or 0)
    # A nice number a little over what must show: the bar stands at least two thirds of the way up.
    assert round(top, 9) in NICE
    assert need < top <= need * chart.TOP_MARGIN * 1.25 + 1e-9, (top, need)
    assert selected <= top * chart.CLIP_FRACTION  # the selected stage is never clipped
    texts = [" ".join(t) if isinstance(t, list) else str(t) for t in (i.get("text") for i in scene(spec)["text"])]
    drawn = [p for p in WITH_CAPACITY if any(t.endswith(" " + p.id) for t in texts)]
    assert {p.id for p in drawn} == {p.id for p in WITH_CAPACITY if p.memory_capacity_bytes / 1e9 <= top}
    if holds is not None:
        assert any(p.memory_capacity_bytes / 1e9 == holds for p in drawn)  # the line it fits under


def test_a_small_layout_is_no_sliver() -> None:
    # ZeRO 3 over 1,024 ranks with TP 8 and full recomputation: a few GB, which the fixed 0-104 GB axis
    # (1.3 x the largest capacity) drew a few pixels tall.
    config = config_for(*STATES[0][:1], **STATES[0][1])
    top = axis_top_gb(render.svg(chart.memory_spec(tuple(MODELS.values()), WITH_CAPACITY, config)))
    assert config.estimate().total_bytes / 1e9 / top > 0.5 and top < 16


def _total_boxes(items: list[dict]) -> list[tuple[float, float, float, float]]:
    font = textsize.metrics()
    boxes = []
    for item in items:
        text = item.get("text")
        lines = text if isinstance(text, list) else [str(text)]
        if item.get("baseline") != "alphabetic" or not all(re.fullmatch(r"[\d,.k↑]+", line) for line in lines):
            continue
        size = item.get("fontSize", 11)
        width = max(font.width_px(line, size) for line in lines)
        y = item["y"] + item.get("dy", 0)
        boxes.append((item["x"] - width / 2, y - font.ascent_px(size),
                      item["x"] + width / 2, y + (len(lines) - 1) * chart.TOTAL_LINE_PX + font.descent_px(size)))
    return boxes


@pytest.mark.parametrize("narrow", [False, True], ids=["still", "phone"])
def test_no_capacity_line_strikes_through_a_total(narrow: bool) -> None:
    config = config_for("gqa-like", zero=2, dp=8, micro_batch=1, seq_len=4096)
    stage_total = config.estimate().total_bytes
    # A capacity a few pixels over ZeRO 2's bar: its line runs where the bar's total is written.
    card = dataclasses.replace(PRESETS["card-80"], id="card-near", name="Card near",
                               memory_capacity_bytes=stage_total * 1.025)
    spec = chart.memory_spec(tuple(MODELS.values()), (*WITH_CAPACITY, card), config)
    spec = chart.narrow_spec(spec) if narrow else spec
    items = scene(spec)
    background = chart.THEME.colours_of("light")["background"].lower()
    backdrops = [r for r in items["rect"] if str(r.get("fill", "")).lower() == background]
    crossings = 0
    for rule in items["rule"]:
        if "strokeDash" not in rule:
            continue
        y, left, right = rule["y"], min(rule["x"], rule["x2"]), max(rule["x"], rule["x2"])
        for x0, y0, x1, y1 in _total_boxes(items["text"]):
            if y0 < y < y1 and left < x1 and right > x0:
                crossings += 1
                assert any(r["x"] <= x0 and r["x"] + r["width"] >= x1 and r["y"] <= y <= r["y"] + r["height"]
                           for r in backdrops), f"the line at {y:.1f} strikes the total at {x0:.0f}-{x1:.0f}"
    assert crossings > 0  # the fixture puts a line through a total's place


@pytest.mark.parametrize("narrow", [False, True], ids=["still", "phone"])
@pytest.mark.parametrize(("model_id", "fields"), STATES)
def test_no_two_texts_meet(model_id: str, fields: dict, narrow: bool) -> None:
    spec = chart.memory_spec(tuple(MODELS.values()), WITH_CAPACITY, config_for(model_id, **fields))
    spec = chart.narrow_spec(spec) if narrow else spec
    svg = render.svg(spec)
    width, height = render.svg_size(svg)
    assert overlaps(text_boxes(svg), width=width, height=height) == []


def test_a_clipped_bars_total_is_marked_and_shortened_on_a_phone() -> None:
    # ZeRO 0 of the 175 B model: thousands of GB, over a ZeRO 3 of a few
    config = config_for("gpt-like", zero=3, dp=1024, micro_batch=1, seq_len=2048, recompute="full")
    spec = chart.memory_spec(tuple(MODELS.values()), WITH_CAPACITY, config)
    zero_0 = config.with_zero(0).estimate().total_bytes / 1e9
    assert zero_0 >= 1000
    texts = [t.get("text") for t in scene(chart.narrow_spec(spec))["text"]]
    assert ["↑", f"{float(f'{zero_0 / 1000:.2g}'):g}k"] in texts
    wide = [t.get("text") for t in scene(spec)["text"]]
    assert ["↑", f"{zero_0:,.0f}"] in wide


def test_the_caption_names_the_model_the_layout_and_the_gpus() -> None:
    config = config_for("gqa-like", zero=1, dp=8, tp=2, pp=2, micro_batch=2, seq_len=4096, sequence_parallel=True)
    text = chart.caption_sentences(config, WITH_CAPACITY)
    model = MODELS["gqa-like"]
    assert text.startswith(f"{model.name} (")
    for part in ("ZeRO stage 1 over 8 data-parallel ranks", "tensor parallel 2", "2 pipeline stages",
                 "micro-batch 2 × 4,096 tokens", "sequence parallel"):
        assert part in text
    for preset in WITH_CAPACITY:
        assert preset.name in text
    total = config.estimate().total_bytes
    fitting = [p.name for p in WITH_CAPACITY if p.memory_capacity_bytes >= total]
    if 0 < len(fitting) < len(WITH_CAPACITY):
        fits, _, rest = text.partition(" but not ")
        assert all(name in fits for name in fitting) and not any(name in rest for name in fitting)
    assert not math.isnan(total)
