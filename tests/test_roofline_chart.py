"""The roofline chart's spec: its data must be the core's numbers, and what it draws must say them."""

from __future__ import annotations

import html
import itertools
import json
import math
import xml.etree.ElementTree as ET

import pytest

from ainotes import render
from ainotes.base.errors import InputError
from ainotes.charts import explorer, formats
from ainotes.charts.grammar import deep_merge
from ainotes.charts.roofline.colours import THEME, dark_svg, dark_vega, retheme
from ainotes.charts.roofline.data import label_clusters
from ainotes.charts.roofline.names import (
    ALL_PRESETS,
    DEFAULT_ROOF,
    LABEL_CHAR_PX,
    LABEL_GAP_PX,
    NARROW_STATIC_WIDTH_PX,
    NARROW_STILL_PLOT_HEIGHT_PX,
    NARROWEST_PLOT_PX,
    STATIC_HEIGHT_PX,
    STATIC_WIDTH_PX,
    intensity_label,
    narrow_lines,
)
from ainotes.charts.roofline.spec import caption_html, roofline_spec
from ainotes.charts.roofline.stills import narrow_static, spec_meta
from ainotes.charts.theme import GPU_PALETTES
from ainotes.core import roofline
from ainotes.core.hardware import UNIT_PRECISIONS, Preset, Source
from ainotes.core.kernels import LAUNCH_LATENCY_S, LAUNCH_REMARK, parse_kernel_spec
from ainotes.presets.gpus import load_presets
from preset_support import FIXTURE_PRESETS, SHIPPED_PRESETS
from vega_eval import vega_lite_errors

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
KERNELS = ("gemm:8192x8192x8192:bf16", "gemm:16x8192x8192:bf16", "add:16777216:bf16", "softmax:8192x8192:bf16",
           "attention:1x32x4096x128:bf16", "attention-naive:1x32x4096x128:bf16")


@pytest.fixture(autouse=True)
def _private_cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("AINOTES_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "render-cache"))


def _ceilings(spec: dict, roof: str = DEFAULT_ROOF) -> dict[str, dict]:
    return {row["p"]: row for row in spec["datasets"]["ceilings"] if row["r"] == roof}


def _param(spec: dict, name: str) -> dict:
    return next(p for p in spec["params"] if p["name"] == name)


def _value(spec: dict, name: str):
    return _param(spec, name)["value"]


def _texts(svg_text: str) -> list[str]:
    root = ET.fromstring(svg_text)
    return ["".join(node.itertext()) for node in root.iter(f"{SVG_NS}text")]


def test_ceilings_are_the_core_figures_and_ridges_peak_over_bandwidth():
    rows = _ceilings(roofline_spec(FOUR))
    for preset in FOUR:
        row = rows[preset.id]
        for sparse, peak, ridge in ((False, "peak", "ridge"), (True, "speak", "sridge")):
            line = roofline.ceiling(preset, sparse)
            assert row[peak] == line.peak_flops_per_s
            assert row["bw"] == line.memory_bandwidth_bytes_per_s
            assert row[ridge] == line.ridge_flop_per_byte
            assert row[ridge] == pytest.approx(row[peak] / row["bw"], rel=1e-12)
    # Published: H100 SXM 989.4 TFLOP/s over 3.35 TB/s ≈ 295 FLOP/byte; B200 2.25 PFLOP/s over 8 TB/s ≈ 281.
    assert round(rows["h100"]["ridge"]) == 295 and round(rows["b200"]["ridge"]) == 281


def test_sparsity_doubles_the_peak_only_where_the_preset_supports_it():
    rows = _ceilings(roofline_spec(FOUR))
    for preset in (B200, H100, ODD):
        assert rows[preset.id]["speak"] == 2 * rows[preset.id]["peak"]
        assert rows[preset.id]["sridge"] == pytest.approx(2 * rows[preset.id]["ridge"])
    assert rows["plain"]["speak"] == rows["plain"]["peak"]


def test_axes_hold_every_ridge_of_every_roof_and_every_kernel():
    gemm = parse_kernel_spec("gemm:8192x8192x8192")
    add = parse_kernel_spec("add:1048576")
    spec = roofline_spec(FOUR, kernels=[gemm, add])
    low, high = _value(spec, "x_domain")
    for row in spec["datasets"]["ceilings"]:
        assert low < row["ridge"] and row["sridge"] < high
    assert low < add.intensity_flop_per_byte and gemm.intensity_flop_per_byte < high
    for row in spec["datasets"]["ceilings"]:
        y_low, y_high = _value(spec, "y_domains")[row["r"]]
        assert y_low < row["bw"] * low and row["speak"] <= y_high
    # The highest mark tops the domain; the band of labels above it is added in pixels (grammar.Y_DOMAIN_EXPR).
    assert all(row["y"] <= _value(spec, "y_domains")["tensor:bf16"][1] for row in spec["datasets"]["kernels"])
    assert _value(spec, "x_ticks") == [10.0**e for e in range(round(math.log10(low)), round(math.log10(high)) + 1)]


def test_params_open_on_bf16_all_presets_and_the_sparsity_asked_for():
    spec = roofline_spec(FOUR, sparsity=True)
    assert _value(spec, "sparsity") is True and _param(spec, "sparsity")["bind"]["input"] == "checkbox"
    assert _value(spec, "precision") == "tensor:bf16"
    assert _param(spec, "precision")["bind"]["options"][:2] == ["tensor:bf16", "tensor:fp16"]
    preset = _param(spec, "preset")
    assert preset["bind"]["options"] == [ALL_PRESETS, "b200", "h100", "plain", "odd"]
    assert preset["bind"]["labels"] == ["All", "NVIDIA B200", "NVIDIA H100 SXM5 80 GB", "No-sparsity GPU", ODD_NAME]
    assert _value(roofline_spec(FOUR), "sparsity") is False


def test_precision_keyword_opens_on_that_roof_and_refuses_one_no_preset_has():
    spec = roofline_spec(FOUR, precision="fp16")
    assert _value(spec, "precision") == "tensor:fp16"
    with pytest.raises(InputError, match="precision"):
        roofline_spec(FOUR, precision="fp12")


def test_readout_opens_between_the_ridges_and_refuses_an_intensity_off_the_axis():
    spec = roofline_spec(FOUR)
    ridges = [row["ridge"] for row in _ceilings(spec).values()]
    assert min(ridges) < _value(spec, "intensity") < max(ridges)
    assert _value(roofline_spec(FOUR, readout_intensity_flop_per_byte=300.0), "intensity") == 300.0


@pytest.mark.parametrize("intensity", [0.0, -1.0, float("nan"), 1e9])
def test_readout_intensity_off_the_axis_is_an_input_error(intensity):
    with pytest.raises(InputError, match="readout intensity must lie on the axis"):
        roofline_spec(FOUR, readout_intensity_flop_per_byte=intensity)


@pytest.mark.parametrize("presets", ["test", "shipped"])
def test_kernel_marks_sit_where_the_core_says_each_meets_its_own_roof(presets):
    chosen = FOUR if presets == "test" else load_presets(SHIPPED_PRESETS)
    kernels = [parse_kernel_spec(spec) for spec in (*KERNELS, "gemm:4096x4096x4096:fp8", "gemm:4096x4096x4096:fp32",
                                                     "gemm:4096x4096x4096:fp4", "add:1048576:fp64")]
    spec = roofline_spec(chosen, kernels=kernels)
    # The kernels as written ("own" mode); every other mode is each kernel re-typed to a roof.
    rows = {(row["k"], row["p"]): row for row in spec["datasets"]["kernels"] if " own " in row["m"]}
    table = spec_meta(spec)["kernels"]
    for number, kernel in enumerate(kernels, start=1):
        for preset in chosen:
            core = roofline.kernel_roof(preset, kernel)
            why = table[number - 1]["modes"]["own"]["why"]
            if core.attainable_flops_per_s is None:  # no path, or not given: no mark, and the table says why
                assert (number, preset.id) not in rows
                assert why[preset.id].startswith("not placed: ") and "FP" in why[preset.id]
                assert "/" not in why[preset.id]  # a reason in words, never the preset file's path
                continue
            row = rows[(number, preset.id)]
            assert row["x"] == kernel.intensity_flop_per_byte
            assert row["y"] == core.attainable_flops_per_s
            assert row["b"] == core.bound and row["r"] == f"{core.unit}:{core.precision}"
            # Its time at that rate: FLOPs ÷ attainable FLOP/s (issue 22, item 3).
            assert row["t"] == pytest.approx(kernel.flops / core.attainable_flops_per_s, rel=1e-15)
            assert row["tx"].startswith(f"{core.bound}-bound, ")
            # Under one kernel launch, the launch bounds it, not the roof (issue 29).
            launch = f", {LAUNCH_REMARK}" if row["t"] < LAUNCH_LATENCY_S else ""
            assert row["tx"].endswith(f", {formats.time_us_text(row['t'])}{launch}")
            assert preset.id not in why
    assert [k["spec"] for k in table] == [k.spec for k in kernels]


def test_an_fp8_gemm_meets_the_fp8_roof_on_h100_and_none_on_a100():
    presets = {p.id: p for p in load_presets(FIXTURE_PRESETS)}
    fp8 = parse_kernel_spec("gemm:8192x8192x8192:fp8")
    spec = roofline_spec([presets["h100"], presets["a100"]], kernels=[fp8])
    own = [row for row in spec["datasets"]["kernels"] if " own " in row["m"]]
    assert [row["p"] for row in own] == ["h100"]
    # 1.1 TFLOP at 1,978.9 TFLOP/s (the whitepaper's FP8 dense rate): 556 µs.
    assert own[0]["tx"] == "compute-bound, 1.979 PFLOP/s on FP8 tensor cores, 556 µs"
    assert spec_meta(spec)["kernels"][0]["modes"]["own"]["why"] == {"a100": "not placed: no FP8 path"}


@pytest.mark.parametrize("folder", [FIXTURE_PRESETS, SHIPPED_PRESETS], ids=["published", "shipped"])
def test_every_roof_the_presets_have_is_in_the_data_and_the_select(folder):
    presets = load_presets(folder)
    spec = roofline_spec(presets)
    roofs = _param(spec, "precision")["bind"]["options"]
    assert roofs[:2] == ["tensor:bf16", "tensor:fp16"]
    for preset in presets:
        for unit, precision, path in preset.all_paths():
            if precision not in UNIT_PRECISIONS[unit]:
                continue  # an optional rate (a matrix FP32 one) meets no kernel; the chart draws no roof for it
            roof = f"{unit}:{precision}"
            row = _ceilings(spec, roof).get(preset.id)
            if path is None or path.dense_tflops is None:
                assert row is None
                assert preset.id in spec_meta(spec)["missing"].get(roof, {})
            else:
                assert roof in roofs
                assert row["peak"] == preset.peak_tflops(precision, unit=unit) * 1e12
                assert row["speak"] == preset.peak_tflops(precision, unit=unit, sparsity=True) * 1e12
    if folder != FIXTURE_PRESETS:
        return
    # Published FP8 and FP4 ridges of the B200: 4.5 and 9 PFLOP/s over 8 TB/s.
    assert round(_ceilings(spec, "tensor:fp8")["b200"]["ridge"]) == 562
    assert round(_ceilings(spec, "tensor:fp4")["b200"]["ridge"]) == 1125
    assert "a100" not in _ceilings(spec, "tensor:fp8")
    legend = _value(spec, "legend_ridge")
    assert legend["tensor:fp8|d"]["a100"] == "not drawn: no FP8 path"
    assert legend["tensor:fp8|d"]["h100"] == "ridge 591 FLOP/B"


def test_close_kernels_share_one_label_and_labels_never_touch_on_the_narrowest_plot():
    kernels = [parse_kernel_spec(spec) for spec in KERNELS]
    real = load_presets(FIXTURE_PRESETS)
    rows = roofline_spec(real, kernels=kernels)["datasets"]["kernels"]
    labels = {row["c"]: (row["cx"], row["ct"]) for row in rows if " own " in row["m"]}
    # The fused attention (2,068 FLOP/byte) and the 8K GEMM (2,731) share "1,5".
    assert sorted(text for _, text in labels.values()) == ["1,5", "2", "3", "4", "6"]
    low, high = _value(roofline_spec(real, kernels=kernels), "x_domain")
    px_per_decade = NARROWEST_PLOT_PX / math.log10(high / low)
    spans = sorted((math.log10(x / low) * px_per_decade, len(text) * LABEL_CHAR_PX)
                   for x, text in labels.values())
    for (x1, w1), (x2, w2) in itertools.pairwise(spans):
        assert x2 - w2 / 2 > x1 + w1 / 2, spans


@pytest.mark.parametrize("gap_decades", [0.0, 0.05, 0.2, 0.5, 1.0, 3.0])
def test_label_clusters_split_exactly_when_labels_would_not_touch(gap_decades):
    low, high = 0.1, 10_000.0
    clusters = label_clusters([10.0, 10.0 * 10**gap_decades], low, high)
    gap_px = gap_decades * NARROWEST_PLOT_PX / math.log10(high / low)
    assert (clusters[0] == clusters[1]) == (gap_px < LABEL_CHAR_PX + LABEL_GAP_PX)


def test_static_svg_names_each_preset_with_its_ridge_and_escapes_the_title():
    title = 'Ridges <script>alert("x")</script> & more'
    svg_text = render.svg(roofline_spec(FOUR, title=title))
    texts = _texts(svg_text)  # parses: the SVG is well-formed despite the markup in names and title
    assert title in texts
    joined = "\n".join(texts)
    for preset in FOUR:
        assert f"ridge {intensity_label(preset.ridge_flop_per_byte())} · {preset.name}"[:30] in joined
    assert "BF16 matrix units, dense · ridge points in the legend" in texts
    assert "<script>" not in svg_text and "&lt;b&gt;" in svg_text
    assert "1 PFLOP/s" in texts and "100 TFLOP/s" in texts


@pytest.mark.parametrize("sparsity", [False, True])
def test_a_still_holds_no_unlabelled_mark(sparsity):
    """The readout's rule and dots appear only once a reader moves it (and then with their value in
    the top band); a still names every mark it draws: lines and ridges in the GPUs' legend and the
    line key, kernels in their key."""
    kernels = [parse_kernel_spec(spec) for spec in KERNELS]
    spec = roofline_spec(FOUR, kernels=kernels, sparsity=sparsity)
    assert _value(spec, "readout_on") is False
    svg_text = render.svg(spec)
    assert 'stroke-dasharray="3,2"' not in svg_text  # the readout's rule
    texts = _texts(svg_text)
    assert not any(t.startswith("at ") and t.endswith("FLOP/B") for t in texts)
    assert "the roof shown" in texts
    assert ("dense roof behind its 2:4 sparse one" in texts) == sparsity
    for number in range(1, len(kernels) + 1):
        assert any(t.startswith(f"{number} ") for t in texts), number
    # The live view draws it, labelled, once the page's script turns it on.
    live = render.svg({**spec, "params": [{**p, "value": True} if p["name"] == "readout_on" else p
                                          for p in spec["params"]]})
    assert 'stroke-dasharray="3,2"' in live
    assert f"at {intensity_label(_value(spec, 'intensity'))}" in _texts(live)


def test_no_text_is_rotated_in_the_static_svg():
    kernels = [parse_kernel_spec(spec) for spec in KERNELS]
    svg_text = render.svg(roofline_spec(FOUR, kernels=kernels))
    root = ET.fromstring(svg_text)
    for node in root.iter(f"{SVG_NS}text"):
        if "".join(node.itertext()) != "Attainable rate":  # the y axis title reads upwards, as axes do
            assert "rotate" not in (node.get("transform") or ""), node.attrib


def test_dark_spec_is_the_light_spec_plus_the_dark_config():
    light = roofline_spec(FOUR, kernels=[parse_kernel_spec(KERNELS[0])])
    dark = roofline_spec(FOUR, kernels=[parse_kernel_spec(KERNELS[0])], theme="dark")
    assert {k: v for k, v in light.items() if k != "config"} == {k: v for k, v in dark.items() if k != "config"}
    assert dark["config"] == deep_merge(light["config"], THEME.config("dark"))
    assert light["config"]["range"]["category"] == list(GPU_PALETTES["light"])
    assert dark["config"]["range"]["category"] == list(GPU_PALETTES["dark"])
    assert dark["config"]["background"] == "#1e2129"
    with pytest.raises(InputError, match="theme"):
        roofline_spec(FOUR, theme="sepia")


def test_spec_is_the_grammar_with_data_and_identical_with_or_without_the_cache():
    kernels = [parse_kernel_spec(spec) for spec in KERNELS]
    cached = roofline_spec(FOUR, kernels=kernels, title="T")
    fresh = roofline_spec(FOUR, kernels=kernels, title="T", cached=False)
    assert cached == fresh
    other = roofline_spec([H100], kernels=kernels[:1], title="Other")
    # Two charts share their structure: only param values, binds, datasets, title and usermeta differ.
    assert cached["layer"] == other["layer"]
    assert [p["name"] for p in cached["params"]] == [p["name"] for p in other["params"]]


def test_spec_stays_small():
    kernels = [parse_kernel_spec(spec) for spec in KERNELS]
    text = json.dumps(roofline_spec(FOUR, kernels=kernels), separators=(",", ":"))
    # Four presets, nine roofs, six kernels in each of up to ten typings: about 65 kB (the chart
    # that left the kernels at their own types alone was about 27 kB, the FP16-only one 10 kB).
    assert len(text) < 90_000, len(text)


def test_no_presets_is_an_input_error():
    with pytest.raises(InputError, match="at least one preset"):
        roofline_spec([])


def test_duplicate_names_get_distinct_legend_entries():
    twin = _preset("h100-twin", H100.name, 989.4, 3.35, True)
    names = _value(roofline_spec([H100, twin]), "names")
    assert len(set(names.values())) == 2


def test_spec_is_plain_json():
    text = json.dumps(roofline_spec(FOUR), allow_nan=False)
    assert json.loads(text)["datasets"]["ceilings"]


def test_caption_states_assumptions_and_escapes_names():
    caption = caption_html(FOUR, sparsity=False)
    assert "FP32 accumulation" in caption and "not a benchmark" in caption
    assert "2:4" in caption and "bandwidth" in caption
    assert "No-sparsity GPU" in caption  # its line does not move
    odd_only = caption_html([_preset("odd2", ODD_NAME, 1.0, 1.0, False)], sparsity=True)
    assert "&lt;b&gt;&amp;&quot;&#x27;" in odd_only and "<b>" not in odd_only
    assert "switched on" in odd_only


def test_page_parts_escape_names_and_state_the_core_figures():
    kernels = [parse_kernel_spec("gemm:8192x8192x8192:bf16", label="<i>big</i>")]
    spec = roofline_spec(FOUR, kernels=kernels)
    summary = explorer.summary_text(spec)
    assert "BF16 matrix units, dense" in summary and "295 FLOP/byte" in summary and "281 FLOP/byte" in summary
    controls = explorer.controls_html('c"1', spec)
    tables = explorer.tables_html('c"1', spec)
    for fragment in (controls, tables):
        assert "<b>" not in fragment and "<i>" not in fragment and 'c"1' not in fragment
    assert "&lt;i&gt;big&lt;/i&gt;" in tables and "compute-bound, 989.4 TFLOP/s on BF16" in tables
    assert 'name="precision"' in controls and 'name="intensity"' in controls and 'name="m"' in controls
    assert "hidden" in controls.split(">")[0]  # nothing to press without the script


@pytest.mark.parametrize("theme", ["light", "dark"])
@pytest.mark.parametrize("with_kernels", [False, True])
def test_spec_is_valid_vega_lite(theme, with_kernels):
    # roofline_spec skips altair's validation for speed; every variant is validated here instead.
    kernels = [parse_kernel_spec(KERNELS[0]), parse_kernel_spec("add:1024:fp16", "<b>")] if with_kernels else []
    spec = roofline_spec(FOUR, kernels=kernels, sparsity=True, title="T", theme=theme)
    assert vega_lite_errors(spec) == []
    broken = {**spec, "layer": [*spec["layer"][:-1], {**spec["layer"][-1], "mark": "not-a-mark"}]}
    assert vega_lite_errors(broken) != []


def test_png_is_the_static_svg_rasterised():
    spec = roofline_spec([H100])
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
    light = render.svg(roofline_spec(presets, kernels=kernels, sparsity=sparsity, title=title, theme="light"))
    dark = render.svg(roofline_spec(presets, kernels=kernels, sparsity=sparsity, title=title, theme="dark"))
    assert dark_svg(light) == dark
    assert light != dark


def test_the_page_figure_names_its_picture_with_the_summary_and_carries_form_and_tables():
    from ainotes.html import embed

    spec = roofline_spec(FOUR, kernels=[parse_kernel_spec(KERNELS[0])])
    fragment = embed.interactive_figure_html("r1", explorer.figure(spec, caption_html="Caption."), downloads={})
    box = '<div class="ainotes-chart__box ainotes-chart__box--narrow" role="img" aria-labelledby="r1-summary"'
    assert box in fragment
    assert f'<p class="ainotes-sr-only" id="r1-summary">{html.escape(explorer.summary_text(spec))}</p>' in fragment
    assert ODD_NAME not in fragment.split("<template")[0]  # escaped wherever it is shown
    assert '<form class="ainotes-explorer" hidden' in fragment and 'class="ainotes-kernel-bounds"' in fragment
    assert 'id="r1-data"' in fragment


# -- stills: laid out once, at the size the page expects ----------------------------------------

def _svg_size(svg_text: str) -> tuple[float, float]:
    root = ET.fromstring(svg_text)
    return float(root.get("width")), float(root.get("height"))


@pytest.mark.parametrize(("gpus", "kernels"), [(1, 0), (2, 1), (3, 3), (2, 6), (4, 3), (4, 7)])
def test_stills_come_to_their_size_whatever_the_legends_hold(gpus, kernels):
    chosen = [parse_kernel_spec(k) for k in (KERNELS * 2)[:kernels]]
    spec = roofline_spec(FOUR[:gpus], kernels=chosen, sparsity=kernels % 2 == 1)
    # Heights follow font sizes alone; the width, the y axis's measured labels (a machine whose
    # fonts measure otherwise is off by a pixel or two, which the page's box absorbs).
    width, height = _svg_size(render.svg(spec))
    assert height == STATIC_HEIGHT_PX and abs(width - STATIC_WIDTH_PX) <= 4
    # A phone's picture: a plot of fixed height, and the legends below it as tall as they need.
    narrow = narrow_static(spec)
    width, height = _svg_size(render.svg(narrow))
    assert abs(width - NARROW_STATIC_WIDTH_PX) <= 4
    assert height == narrow["height"] > NARROW_STILL_PLOT_HEIGHT_PX + 130


def test_a_phone_picture_grows_with_its_legend_and_wraps_long_names():
    small = narrow_static(roofline_spec(FOUR[:1]))
    spec = roofline_spec(FOUR, kernels=[parse_kernel_spec(k) for k in KERNELS])
    large = narrow_static(spec)
    assert large["height"] > small["height"]
    assert large["usermeta"]["ainotes"]["still"] == small["usermeta"]["ainotes"]["still"]  # the same plot
    texts = "\n".join(_texts(render.svg(large)))
    for preset in FOUR:  # every name whole, on lines of its own
        assert " ".join(narrow_lines(preset.name).split("\n")) == preset.name
        for line in narrow_lines(preset.name).split("\n"):
            assert line in texts
    assert "…" not in texts  # nothing cut


def test_a_still_laid_out_once_is_the_picture_fit_would_draw():
    import vl_convert as vlc

    spec = roofline_spec(FOUR, kernels=[parse_kernel_spec(k) for k in KERNELS], title="Fit or pad")
    still = render.still_spec(spec)
    assert still["autosize"]["type"] == "pad" and spec["autosize"]["type"] == "fit"  # the page's spec still fits
    fitted = vlc.vegalite_to_svg(spec, vl_version=render.vega_lite_version(spec))
    padded = render.svg(spec)
    assert _texts(padded) == _texts(fitted)
    assert all(abs(a - b) <= 4 for a, b in zip(_svg_size(padded), _svg_size(fitted), strict=True))
    assert render.still_spec({"mark": "point"}) == {"mark": "point"}  # a spec without a still size is drawn as it is


@pytest.mark.parametrize("kernels", [0, 3])
def test_retheme_is_the_spec_built_in_that_theme(kernels):
    chosen = [parse_kernel_spec(k) for k in KERNELS[:kernels]]
    light = roofline_spec(FOUR, kernels=chosen, sparsity=True, title="Both themes")
    dark = roofline_spec(FOUR, kernels=chosen, sparsity=True, title="Both themes", theme="dark")
    assert retheme(light, "dark") == dark
    assert retheme(dark, "light") == light
    with pytest.raises(InputError, match="'theme' must be 'light' or 'dark'"):
        retheme(light, "sepia")


@pytest.mark.parametrize(("gpus", "kernels", "title"), [(1, 0, None), (4, 3, "A #ffffff title"), (2, 6, "x")])
def test_dark_vega_is_the_compilers_dark_output(gpus, kernels, title):
    import vl_convert as vlc

    chosen = [parse_kernel_spec(k) for k in KERNELS[:kernels]]
    light = roofline_spec(FOUR[:gpus], kernels=chosen, title=title, sparsity=kernels % 2 == 1)
    version = render.vega_lite_version(light)
    compiled_light = vlc.vegalite_to_vega(render.responsive(light), vl_version=version)
    compiled_dark = vlc.vegalite_to_vega(render.responsive(retheme(light, "dark")), vl_version=version)
    assert dark_vega(compiled_light) == compiled_dark  # a title's "#ffffff" is text, left alone
