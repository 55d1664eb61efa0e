"""The roofline chart's spec: its data must be the core's numbers, and what it draws must say them."""

from __future__ import annotations

import json
import math
import xml.etree.ElementTree as ET

import pytest

from ainotes import render, roofline, units
from ainotes.charts import roofline as chart
from ainotes.errors import InputError
from ainotes.hardware import Preset, Source
from ainotes.kernels import parse_kernel_spec

SVG_NS = "{http://www.w3.org/2000/svg}"
ODD_NAME = "Odd <b>&\"' GPU"


def _preset(preset_id: str, name: str, tflops: float, tbps: float, sparse: bool) -> Preset:
    return Preset(
        id=preset_id, name=name, dense_fp16_tflops=tflops, memory_bandwidth_tbps=tbps,
        structured_sparsity=sparse, sources=(Source("vendor table", "https://example.com/spec"),),
        path=f"presets/{preset_id}.yaml",
    )


# Published figures (FACTS.md) for the first two; the last two are made up to cover the cases.
H100 = _preset("h100", "NVIDIA H100 SXM5 80 GB", 989.4, 3.35, True)
B200 = _preset("b200", "NVIDIA B200", 2250.0, 8.0, True)
NO_SPARSE = _preset("plain", "No-sparsity GPU", 100.0, 0.5, False)
ODD = _preset("odd", ODD_NAME, 400.0, 2.0, True)
FOUR = (B200, H100, NO_SPARSE, ODD)


@pytest.fixture(autouse=True)
def _private_cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("AINOTES_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "render-cache"))


def _ridges(spec: dict) -> dict[tuple[str, bool], dict]:
    return {(row["preset"], row["sparse"]): row for row in spec["datasets"]["ridges"]}


def _x_domain(spec: dict) -> list[float]:
    return spec["layer"][0]["encoding"]["x"]["scale"]["domain"]


def _texts(svg_text: str) -> list[str]:
    root = ET.fromstring(svg_text)
    return ["".join(node.itertext()) for node in root.iter(f"{SVG_NS}text")]


def _param(spec: dict, name: str) -> dict:
    return next(p for p in spec["params"] if p["name"] == name)


def test_ridge_points_are_peak_over_bandwidth_from_the_core():
    ridges = _ridges(chart.roofline_spec(FOUR))
    for preset in FOUR:
        for sparse in (False, True):
            row = ridges[(preset.id, sparse)]
            line = roofline.ceiling(preset, sparse)
            assert row["peak"] == line.peak_flops_per_s
            assert row["bandwidth"] == preset.memory_bandwidth_bytes_per_s
            assert row["ridge"] == pytest.approx(row["peak"] / row["bandwidth"], rel=1e-12)
            assert row["ridge"] == line.ridge_flop_per_byte
    # H100 SXM: 989.4 TFLOP/s over 3.35 TB/s is the textbook 295 FLOP/byte.
    assert ridges[("h100", False)]["ridge_label"] == "295 FLOP/B"


def test_sparsity_doubles_the_ridge_only_where_the_preset_supports_it():
    ridges = _ridges(chart.roofline_spec(FOUR))
    for preset in (B200, H100, ODD):
        dense, sparse = ridges[(preset.id, False)], ridges[(preset.id, True)]
        assert sparse["ridge"] == pytest.approx(2 * dense["ridge"])
        assert sparse["peak"] == 2 * dense["peak"]
        assert sparse["bandwidth"] == dense["bandwidth"]  # the sloped line does not move
    plain_dense, plain_sparse = ridges[("plain", False)], ridges[("plain", True)]
    assert {k: v for k, v in plain_sparse.items() if k != "sparse"} == {
        k: v for k, v in plain_dense.items() if k != "sparse"
    }


def test_each_ceiling_is_its_three_exact_vertices_not_samples():
    spec = chart.roofline_spec(FOUR)
    low, high = _x_domain(spec)
    rows = spec["datasets"]["vertices"]
    for preset in FOUR:
        for sparse in (False, True):
            drawn = [(r["intensity"], r["flops"]) for r in rows if r["preset"] == preset.id and r["sparse"] == sparse]
            assert tuple(drawn) == roofline.ceiling(preset, sparse).vertices(low, high)
        per_preset = [r for name in ("vertices", "ridges") for r in spec["datasets"][name] if r["preset"] == preset.id]
        assert len(per_preset) <= 8


def test_axes_hold_every_ridge_and_kernel_so_toggling_never_rescales():
    gemm = parse_kernel_spec("gemm:8192x8192x8192")
    add = parse_kernel_spec("add:1048576")
    spec = chart.roofline_spec(FOUR, kernels=[gemm, add])
    low, high = _x_domain(spec)
    for row in spec["datasets"]["ridges"]:
        assert low < row["ridge"] < high
    assert low < add.intensity_flop_per_byte and gemm.intensity_flop_per_byte < high


def test_params_sparsity_checkbox_preset_select_and_log_slider():
    spec = chart.roofline_spec(FOUR, sparsity=True)
    sparsity = _param(spec, "sparsity")
    assert sparsity["value"] is True and sparsity["bind"]["input"] == "checkbox"
    preset = _param(spec, "preset")
    assert preset["bind"]["options"] == [chart.ALL_PRESETS, "b200", "h100", "plain", "odd"]
    assert preset["bind"]["labels"] == ["All", "NVIDIA B200", "NVIDIA H100 SXM5 80 GB", "No-sparsity GPU", ODD_NAME]
    slider = _param(spec, "log_intensity")
    low, high = _x_domain(spec)
    assert slider["bind"]["input"] == "range"
    assert (slider["bind"]["min"], slider["bind"]["max"]) == (math.log10(low), math.log10(high))
    assert chart.roofline_spec(FOUR)["params"][0]["value"] is False


@pytest.mark.parametrize("factor", [0.5, 0.9, 1.1, 3.0])
def test_readout_states_what_the_core_says_at_the_slider(factor):
    # Off the ridge itself: there the browser's pow(10, log10(x)) may land one ulp either side.
    intensity = H100.ridge_flop_per_byte() * factor
    spec = chart.roofline_spec(FOUR, readout_intensity_flop_per_byte=intensity)
    texts = _texts(render.svg(spec))
    for preset in FOUR:
        line = roofline.ceiling(preset, False)
        attainable = roofline.attainable_flops_per_s(intensity, line.peak_flops_per_s, line.memory_bandwidth_bytes_per_s)
        bound = roofline.bound_at(intensity, line.peak_flops_per_s, line.memory_bandwidth_bytes_per_s)
        assert f"{units.flops_per_s(attainable)}, {bound}-bound · {preset.name}" in texts
    assert f"At the vertical line, {chart.intensity_label(intensity)}:" in texts


def test_readout_follows_the_sparsity_switch():
    intensity = 400.0  # H100: compute-bound dense (ridge 295), memory-bound sparse (ridge 591)
    spec = chart.roofline_spec([H100], sparsity=True, readout_intensity_flop_per_byte=intensity)
    texts = _texts(render.svg(spec))
    attainable = roofline.ceiling(H100, True).attainable_flops_per_s(intensity)
    assert f"{units.flops_per_s(attainable)}, memory-bound · {H100.name}" in texts


def test_static_svg_names_each_preset_and_its_ridge_and_escapes_the_title():
    title = 'Ridges <script>alert("x")</script> & more'
    svg_text = render.svg(chart.roofline_spec(FOUR, title=title))
    texts = _texts(svg_text)  # parses: the SVG is well-formed despite the markup in names and title
    joined = "\n".join(texts)
    assert title in texts
    for preset in FOUR:
        assert preset.name in joined
        assert chart.intensity_label(preset.ridge_flop_per_byte()) in texts
    assert "<script>" not in svg_text and "&lt;b&gt;" in svg_text
    assert "1 PFLOP/s" in texts and "100 TFLOP/s" in texts


def test_kernel_tooltips_give_the_core_bound_per_preset():
    gemm = parse_kernel_spec("gemm:8192x8192x8192", label="Big GEMM")
    spec = chart.roofline_spec(FOUR, kernels=[gemm])
    rows = [r for r in spec["datasets"]["kernels"] if not r["sparse"]]
    assert len(rows) == 1 and rows[0]["intensity"] == gemm.intensity_flop_per_byte
    for index, preset in enumerate(FOUR):
        line = roofline.ceiling(preset, False)
        bound = roofline.bound_at(gemm.intensity_flop_per_byte, line.peak_flops_per_s, line.memory_bandwidth_bytes_per_s)
        assert rows[0][f"bound_{index}"].startswith(f"{bound}-bound")
    assert "Big GEMM" in _texts(render.svg(spec))


def test_themes_light_and_dark():
    light = chart.roofline_spec(FOUR)
    dark = chart.roofline_spec(FOUR, theme="dark")
    assert light["config"]["background"] == "#ffffff"
    assert dark["config"]["background"] == "#1e2129"
    assert light["datasets"] == dark["datasets"]
    with pytest.raises(InputError, match="theme"):
        chart.roofline_spec(FOUR, theme="sepia")


def test_no_presets_is_an_input_error():
    with pytest.raises(InputError, match="at least one preset"):
        chart.roofline_spec([])


@pytest.mark.parametrize("intensity", [0.0, -1.0, float("nan"), 1e9])
def test_readout_intensity_off_the_axis_is_an_input_error(intensity):
    with pytest.raises(InputError, match="readout intensity must lie on the axis"):
        chart.roofline_spec(FOUR, readout_intensity_flop_per_byte=intensity)


def test_duplicate_names_get_distinct_legend_entries():
    twin = _preset("h100-twin", H100.name, 989.4, 3.35, True)
    names = [row["name"] for row in chart.roofline_spec([H100, twin])["datasets"]["ridges"]]
    assert len(set(names)) == 2


def test_spec_is_plain_json():
    text = json.dumps(chart.roofline_spec(FOUR), allow_nan=False)
    assert json.loads(text)["datasets"]["ridges"]


def test_caption_states_assumptions_and_escapes_names():
    caption = chart.caption_html(FOUR, sparsity=False)
    assert "FP32 accumulation" in caption and "not a benchmark" in caption
    assert "2:4" in caption and "bandwidth" in caption
    assert "No-sparsity GPU" in caption  # its line does not move
    odd_only = chart.caption_html([_preset("odd2", ODD_NAME, 1.0, 1.0, False)], sparsity=True)
    assert "&lt;b&gt;&amp;&quot;&#x27;" in odd_only and "<b>" not in odd_only
    assert "switched on" in odd_only


@pytest.mark.parametrize("theme", ["light", "dark"])
@pytest.mark.parametrize("with_kernels", [False, True])
def test_spec_is_valid_vega_lite(theme, with_kernels):
    # roofline_spec skips altair's validation for speed; every variant is validated here instead.
    import altair as alt

    kernels = [parse_kernel_spec("gemm:8192x8192x8192:bf16"), parse_kernel_spec("add:1024:fp16", "<b>")] if with_kernels else []
    spec = chart.roofline_spec(FOUR, kernels=kernels, sparsity=True, title="T", theme=theme)
    alt.LayerChart.from_dict(spec, validate=True)  # raises on any schema violation
    broken = {**spec, "layer": [{**spec["layer"][0], "mark": "not-a-mark"}, *spec["layer"][1:]]}
    with pytest.raises(Exception):
        alt.LayerChart.from_dict(broken, validate=True)


def test_png_is_the_static_svg_rasterised():
    spec = chart.roofline_spec([H100])
    picture = render.png(spec, scale=1.0)
    assert picture.startswith(b"\x89PNG\r\n\x1a\n")
    width = int.from_bytes(picture[16:20], "big")
    height = int.from_bytes(picture[20:24], "big")
    assert (width, height) == tuple(round(v) for v in render.svg_size(render.svg(spec)))


@pytest.mark.parametrize("sparsity", [False, True])
@pytest.mark.parametrize("presets", [FOUR, (H100,), (NO_SPARSE, ODD)], ids=["four", "one", "odd-names"])
def test_dark_svg_from_the_light_one_is_the_dark_render(presets, sparsity):
    kernels = [parse_kernel_spec("gemm:8192x8192x8192:bf16"), parse_kernel_spec("add:1024:fp16", "#ffffff & <b>")]
    title = "Title naming #1f2329 and #ffffff"  # colour-like text must stay as written
    light = render.svg(chart.roofline_spec(presets, kernels=kernels, sparsity=sparsity, title=title, theme="light"))
    dark = render.svg(chart.roofline_spec(presets, kernels=kernels, sparsity=sparsity, title=title, theme="dark", cached=False))
    assert chart.dark_svg(light) == dark
    assert light != dark
