"""One colour per GPU on every chart of a site, legible on both schemes."""

from __future__ import annotations

import itertools
import math

import pytest

from ainotes.charts import theme as chart_theme
from ainotes.charts.roofline.spec import roofline_spec
from ainotes.core.hardware import Preset, Source
from ainotes.presets.gpus import load_presets
from sitebuild import REPO


def _linear(channel: float) -> float:
    return channel / 12.92 if channel <= 0.04045 else ((channel + 0.055) / 1.055) ** 2.4


def _rgb(colour: str) -> tuple[float, float, float]:
    return tuple(int(colour[i:i + 2], 16) / 255 for i in (1, 3, 5))


def _luminance(colour: str) -> float:
    r, g, b = (_linear(c) for c in _rgb(colour))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def _contrast(a: str, b: str) -> float:
    """WCAG 2.1 contrast ratio."""
    high, low = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def _lab(colour: str) -> tuple[float, float, float]:
    r, g, b = (_linear(c) for c in _rgb(colour))
    x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047
    y = 0.2126 * r + 0.7152 * g + 0.0722 * b
    z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883

    def f(t: float) -> float:
        return t ** (1 / 3) if t > 216 / 24389 else (24389 / 27 * t + 16) / 116

    return 116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_every_gpu_colour_stands_out_from_its_background_and_from_the_others(theme):
    palette = chart_theme.GPU_PALETTES[theme]
    assert len(palette) == len(chart_theme.GPU_HUES) == 10
    for colour in palette:  # WCAG 1.4.11: graphical objects at 3:1 or more
        assert _contrast(colour, chart_theme.THEME_BACKGROUNDS[theme]) >= 3.0, colour
    for a, b in itertools.combinations(palette, 2):
        assert math.dist(_lab(a), _lab(b)) >= 20, (a, b)


def _delta_e_2000(one: str, two: str) -> float:
    return _delta_e_2000_lab(_lab(one), _lab(two))


def _delta_e_2000_lab(one: tuple[float, float, float], two: tuple[float, float, float]) -> float:
    """CIEDE2000 of two CIELAB colours (Sharma, Wu and Dalal, 2005, equations 1-17)."""
    (l1, a1, b1), (l2, a2, b2) = one, two
    c_mean = (math.hypot(a1, b1) + math.hypot(a2, b2)) / 2
    g = 0.5 * (1 - math.sqrt(c_mean**7 / (c_mean**7 + 25**7)))
    a1, a2 = (1 + g) * a1, (1 + g) * a2
    c1, c2 = math.hypot(a1, b1), math.hypot(a2, b2)
    h1, h2 = (math.degrees(math.atan2(b, a)) % 360 for a, b in ((a1, b1), (a2, b2)))
    dh = 0.0 if c1 * c2 == 0 else (h2 - h1 + 180) % 360 - 180
    big_dh = 2 * math.sqrt(c1 * c2) * math.sin(math.radians(dh / 2))
    l_mean, c_bar = (l1 + l2) / 2, (c1 + c2) / 2
    h_mean = h1 + h2 if c1 * c2 == 0 else (h1 + h2) / 2 + (180 if abs(h1 - h2) > 180 else 0)
    t = (1 - 0.17 * math.cos(math.radians(h_mean - 30)) + 0.24 * math.cos(math.radians(2 * h_mean))
         + 0.32 * math.cos(math.radians(3 * h_mean + 6)) - 0.20 * math.cos(math.radians(4 * h_mean - 63)))
    rotation = -math.sin(math.radians(60 * math.exp(-(((h_mean % 360) - 275) / 25) ** 2))) * 2 * math.sqrt(
        c_bar**7 / (c_bar**7 + 25**7))
    s_l = 1 + 0.015 * (l_mean - 50) ** 2 / math.sqrt(20 + (l_mean - 50) ** 2)
    s_c, s_h = 1 + 0.045 * c_bar, 1 + 0.015 * c_bar * t
    return math.sqrt(((l2 - l1) / s_l) ** 2 + ((c2 - c1) / s_c) ** 2 + (big_dh / s_h) ** 2
                     + rotation * ((c2 - c1) / s_c) * (big_dh / s_h))


def test_cie_2000_matches_the_published_test_pairs():
    # Sharma, Wu and Dalal (2005), table 1, pairs 1 and 17, from their CIELAB values.
    assert _delta_e_2000_lab((50, 2.6772, -79.7751), (50, 0, -82.7485)) == pytest.approx(2.0425, abs=1e-4)
    assert _delta_e_2000_lab((50, 2.5, 0), (73, 25, -18)) == pytest.approx(27.1492, abs=1e-4)


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_no_two_gpu_colours_read_as_one(theme):
    """Thin lines and small squares: any two colours 15 apart in CIEDE2000, and at most three of the
    cool hues (LCh hue 150°-330°: green, teal, blue, slate, purple), where a green beside a teal and a
    blue beside a slate read as one colour."""
    palette = chart_theme.GPU_PALETTES[theme]
    for a, b in itertools.combinations(palette, 2):
        assert _delta_e_2000(a, b) >= 15, (a, b, round(_delta_e_2000(a, b), 1))
    cool = []
    for colour in palette:
        _, a, b = _lab(colour)
        if math.hypot(a, b) >= 10 and 150 <= math.degrees(math.atan2(b, a)) % 360 <= 330:
            cool.append(colour)
    assert len(cool) <= 3, cool


def _fixture_ids(count: int) -> list[str]:
    return [f"gpu-{index}" for index in range(count)]


@pytest.mark.parametrize("count", [1, 4, 7, 10])
def test_up_to_ten_gpus_get_ten_colours_whatever_their_order(count):
    ids = _fixture_ids(count)
    slots = chart_theme.gpu_colour_slots(ids)
    assert len({slot % 10 for slot in slots.values()}) == count
    assert chart_theme.gpu_colour_slots(reversed(ids)) == slots


def test_more_than_ten_gpus_still_get_a_slot_each():
    slots = chart_theme.gpu_colour_slots(_fixture_ids(23))
    assert len(set(slots.values())) == 23 and max(slots.values()) < 30


def test_a_pinned_gpu_keeps_its_colour_and_two_pins_on_one_colour_are_refused():
    slots = chart_theme.gpu_colour_slots(_fixture_ids(9), fixed={"gpu-3": 7})
    assert slots["gpu-3"] == 7 and len(set(slots.values())) == 9
    with pytest.raises(Exception, match="both pinned"):
        chart_theme.gpu_colour_slots(["a", "b"], fixed={"a": 1, "b": 1})


def _preset(preset_id: str, tflops: float) -> Preset:
    return Preset(id=preset_id, name=preset_id.upper(), dense_fp16_tflops=tflops, memory_bandwidth_tbps=2.0,
                  structured_sparsity=False, sources=(Source("t", "https://example.com"),), path=f"{preset_id}.yaml")


def _colours(spec: dict) -> dict[str, str]:
    """Each GPU of a chart → the colour its lines take (the colour scale's domain over the theme's range)."""
    domain = next(p["value"] for p in spec["params"] if p["name"] == "colour_domain")
    category = spec["config"]["range"]["category"]
    ids = next(p["value"] for p in spec["params"] if p["name"] == "gpu_ids")
    return {i: category[domain.index(i) % len(category)] for i in ids}


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_a_gpu_has_one_colour_on_every_chart_of_a_site(theme):
    site = [_preset(f"chip-{i}", 100.0 + i) for i in range(6)]
    ids = [p.id for p in site]
    charts = [roofline_spec(subset, palette_ids=ids, theme=theme)
              for subset in (site, site[3:1:-1], site[1:2], [site[5], site[0]])]
    seen: dict[str, str] = {}
    for spec in charts:
        for preset_id, colour in _colours(spec).items():
            assert seen.setdefault(preset_id, colour) == colour, preset_id
            assert colour == chart_theme.gpu_colour(preset_id, ids, theme)
    assert len(set(seen.values())) == len(site)


def test_the_shipped_presets_and_one_more_all_differ():
    ids = [p.id for p in load_presets(REPO / "presets")]
    assert len(set(chart_theme.gpu_colour_slots(ids).values())) == len(ids)
    more = chart_theme.gpu_colour_slots([*ids, "fixture-gpu"])
    if len(ids) < 10:
        assert len({slot % 10 for slot in more.values()}) == len(ids) + 1
