"""Pictures of the collectives: SVG frames, the animated SVG, the stepper, the table, the page."""

from __future__ import annotations

import gzip
import json
import re
import xml.etree.ElementTree as ET
from importlib import resources

import pytest

from ainotes.base.errors import InputError
from ainotes.charts.collective import (
    animated_svg,
    chunk_box_label,
    frame_svg,
    standalone_html,
    stepper_data,
    stepper_html,
    table_html,
)
from ainotes.core.collectives import OPS, simulate

SVG = "{http://www.w3.org/2000/svg}"
HOSTILE = '<b>"Q&A"</b> \'x\''


def classes(element: ET.Element) -> set[str]:
    return set(element.get("class", "").split())


def box_rects(group: ET.Element) -> list[ET.Element]:
    """The chunk boxes of one frame, in row-major order (stripes and arrows excluded)."""
    return [el for el in group.iter(f"{SVG}rect") if classes(el) & {"k", "n"}]


def box_texts(group: ET.Element) -> list[str]:
    children = list(group)
    texts = []
    for i, el in enumerate(children):
        if el.tag == f"{SVG}rect" and "k" in classes(el):
            texts.append("".join(children[i + 1].itertext()))
    return texts


def expected_texts(run, frame_index: int) -> list[str]:
    return ["".join(chunk_box_label(c)) for row in run.frames[frame_index].buffers for c in row if c is not None]


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("ranks", [2, 3, 4, 8])
def test_animated_svg_ends_on_the_after_state(op, ranks):
    run = simulate(op, ranks, root=ranks - 1)
    root = ET.fromstring(animated_svg(run))
    assert root.find(f"{SVG}title").text == run.title
    assert root.find(f"{SVG}desc").text
    final = [g for g in root.iter(f"{SVG}g") if "fz" in classes(g)]
    assert len(final) == 1
    boxes = box_rects(final[0])
    after = [value for row in run.after for value in row]
    assert len(boxes) == ranks * ranks
    assert ["n" in classes(box) for box in boxes] == [value is None for value in after]
    assert box_texts(final[0]) == expected_texts(run, -1)
    # Every frame group carries its own title and description.
    frames = [g for g in root.iter(f"{SVG}g") if classes(g) & {"f", "f0"}]
    assert len(frames) == len(run.frames)
    for group in frames:
        assert group.find(f"{SVG}title").text and group.find(f"{SVG}desc").text


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("ranks", [2, 3, 4, 8])
def test_each_frame_svg_parses_and_describes_its_state(op, ranks):
    run = simulate(op, ranks, root=0)
    for i, frame in enumerate(run.frames):
        for standalone in (True, False):
            root = ET.fromstring(frame_svg(run, i, id_prefix=f"p{i}-", standalone=standalone))
            assert root.get("viewBox").startswith("0 0 ")
            assert root.find(f"{SVG}title").text.endswith(f"step {i + 1} of {len(run.frames)}")
            desc = root.find(f"{SVG}desc").text
            assert desc.startswith(frame.caption)
            assert box_texts(root) == expected_texts(run, i)
            arrows = [el for el in root.iter(f"{SVG}path") if "t" in classes(el)]
            assert len(arrows) == len(frame.transfers)
    final_desc = ET.fromstring(frame_svg(run, len(run.frames) - 1)).find(f"{SVG}desc").text
    for row in run.frames[-1].buffers:
        for chunk in row:
            if chunk is not None:
                assert f"{chunk.label} = {chunk.value}" in final_desc


def test_sums_are_spelled_out_at_four_ranks_and_shortened_at_eight():
    four = simulate("all-reduce", 4).frames[-1].buffers[0][0]
    eight = simulate("all-reduce", 8).frames[-1].buffers[0][3]
    assert chunk_box_label(four) == ("a0+b0+", "c0+d0")
    assert chunk_box_label(eight) == ("Σ a3…h3",)
    assert "a0+b0+" in animated_svg(simulate("all-reduce", 4))


def test_root_row_is_marked():
    root = ET.fromstring(frame_svg(simulate("scatter", 4, root=2), 0))
    texts = [("".join(t.itertext()), t.get("y")) for t in root.iter(f"{SVG}text")]
    rank2_y = float(next(y for text, y in texts if text == "rank 2"))
    root_label = [float(y) for text, y in texts if text == "root"]
    assert len(root_label) == 1 and 0 < root_label[0] - rank2_y < 20


def test_labels_and_titles_are_escaped_everywhere():
    run = simulate("reduce", 3, root=1, rank_names=[HOSTILE, "two", "three"])
    outputs = {
        "animated": animated_svg(run, title=HOSTILE),
        "frame": frame_svg(run, 1, title=HOSTILE),
        "stepper": stepper_html(run, "c-1", title=HOSTILE),
        "table": table_html(run, title=HOSTILE),
        "page": standalone_html(run, title=HOSTILE),
    }
    for name, text in outputs.items():
        assert "<b>" not in text, name
        assert "&lt;b&gt;" in text, name
        assert "&quot;Q&amp;A&quot;" in text, name
    for name in ("animated", "frame", "stepper", "table"):
        ET.fromstring(f"<div>{outputs[name]}</div>")  # well-formed: nothing unescaped broke out
    assert ET.fromstring(outputs["animated"]).find(f"{SVG}title").text == HOSTILE
    assert "</script" not in outputs["page"].split("<script>", 1)[1].rsplit("</script>", 1)[0]


def test_stepper_data_in_its_template_escapes_markup():
    html_text = stepper_html(simulate("reduce", 2), "s", title="</template><b>&")
    data = html_text.split('<template class="ainotes-stepper-data">', 1)[1].split("</template>", 1)[0]
    assert "<" not in data and ">" not in data and "&" not in data
    assert {v["title"] for v in json.loads(data)["variants"].values()} == {"</template><b>&"}
    # The tables at every rank count, in the template after it, carry the title escaped.
    tables = html_text.split('<template class="ainotes-stepper-tables">', 1)[1]
    assert tables.count("</template>") == 1 and "<b>" not in tables
    assert tables.count("<caption>&lt;/template&gt;&lt;b&gt;&amp;: what each rank holds</caption>") == 7


def test_stepper_data_holds_every_rank_count_and_the_ring_where_drawn():
    data = stepper_data(simulate("all-reduce", 4))
    assert data["initial"] == "logical-4"
    assert data["variants"]["ring-8"]["title"] == "All-reduce across 8 ranks"
    assert sorted(data["variants"]) == sorted(f"{s}-{n}" for s in ("logical", "ring") for n in range(2, 9))
    ring = data["variants"]["ring-8"]
    assert len(ring["frames"]) == 2 * 7 + 3
    assert ring["frames"][-1]["sent"] == [14] * 8
    # Chunk codes: index × 256 + one bit per contributing rank; the whole sum of chunk 3 is 3·256 + 255.
    assert ring["frames"][-1]["chunks"][0][3] == 3 * 256 + 255
    assert set(stepper_data(simulate("broadcast", 4, root=3))["variants"]) == {f"logical-{n}" for n in range(2, 9)}
    assert stepper_data(simulate("broadcast", 4, root=3))["variants"]["logical-2"]["root"] == 1
    for variant in data["variants"].values():
        run = simulate("all-reduce", variant["ranks"], schedule=variant["schedule"])
        assert [f["caption"] for f in variant["frames"]] == [f.caption for f in run.frames]


def test_custom_rank_names_keep_the_stepper_without_controls():
    run = simulate("all-gather", 2, rank_names=["GPU A", "GPU B"])
    assert "ainotes-stepper-data" not in stepper_html(run, "s")
    assert "ainotes-stepper-data" in stepper_html(simulate("all-gather", 2), "s")


def test_too_many_ranks_is_an_input_error():
    with pytest.raises(InputError, match=r"^'ranks' must be between 2 and 8: 9$"):
        animated_svg(simulate("all-gather", 9))


def test_chart_id_and_title_are_checked():
    run = simulate("broadcast", 2)
    assert 'id="01-intro-broadcast"' in stepper_html(run, "01-intro-broadcast")
    with pytest.raises(InputError, match="'chart_id' must be letters, digits, '-' and '_'"):
        stepper_html(run, 'x" onclick="alert(1)')
    with pytest.raises(InputError, match="'title' must be a non-empty string"):
        animated_svg(run, title="  ")


@pytest.mark.parametrize("op", OPS)
def test_animated_svg_at_four_ranks_is_small(op):
    data = animated_svg(simulate(op, 4)).encode()
    assert len(data) <= 25_000
    assert len(gzip.compress(data, 9)) <= 8_000


def test_animated_svg_holds_still_for_reduced_motion_and_loads_nothing():
    text = animated_svg(simulate("all-reduce", 4))
    assert "@media (prefers-reduced-motion:reduce){.f{animation:none}}" in text
    assert ".fz{opacity:1}" in text  # the final state is what shows without motion
    assert "infinite" in text
    assert re.findall(r"https?://[^\"']+", text) == ["http://www.w3.org/2000/svg"]
    assert re.findall(r"url\((?!#)", text) == []
    assert "<script" not in text


def test_stepper_lists_every_frame_without_javascript():
    run = simulate("all-reduce", 4)
    root = ET.fromstring(stepper_html(run, "ar"))
    assert root.get("id") == "ar" and "ainotes-stepper" in classes(root)
    items = root.findall("./ol/li")
    assert len(items) == len(run.frames)
    for i, (item, frame) in enumerate(zip(items, run.frames, strict=True)):
        assert item.find(f"figure/{SVG}svg") is not None
        caption = "".join(item.find("figure/figcaption").itertext())
        assert caption == f"Frame {i + 1} of {len(run.frames)}. {frame.caption}"
    ids = re.findall(r'id="([^"]+)"', stepper_html(run, "ar"))
    assert len(ids) == len(set(ids))


def test_table_lists_holdings_and_ring_cost():
    text = table_html(simulate("all-reduce", 4))
    root = ET.fromstring(text)
    rows = root.findall(".//tbody/tr")
    assert len(rows) == 4
    assert "a0 = 10" in "".join(rows[0].findall("td")[0].itertext())
    assert "a0+b0+c0+d0 = 100" in "".join(rows[3].findall("td")[1].itertext())
    assert "each rank sends 3/2 (1.5) × the tensor's bytes; bus factor 2(n−1)/n = 1.5 at n = 4." in text
    assert "Ring algorithm" in text


@pytest.mark.parametrize(
    ("op", "sentence"),
    [("all-to-all", "Pairwise exchange: each rank sends"), ("scatter", "The root sends each shard directly"),
     ("broadcast", "Pipelined chain: each rank but the last"), ("reduce", "Pipelined chain: each rank but the root")],
)
def test_table_names_the_algorithm_that_sends_those_bytes(op, sentence):
    text = table_html(simulate(op, 4))
    assert sentence in text
    assert "Ring algorithm" not in text
    assert "bus factor (n−1)/n = 0.75 at n = 4" in table_html(simulate("reduce-scatter", 4))
    assert "(root)" in table_html(simulate("broadcast", 4, root=3))


def test_standalone_page_is_self_contained():
    page = standalone_html(simulate("all-to-all", 4))
    assert page.startswith("<!DOCTYPE html>")
    assert re.findall(r"\b(?:src|href)=", page) == []
    assert set(re.findall(r"https?://[^\"']+", page)) == {"http://www.w3.org/2000/svg"}  # the SVG namespace only
    assert "prefers-color-scheme:dark" in page and "ainotes-stepper" in page and "<table" in page


def _css_hex(css: str, selector: str, prop: str) -> str:
    match = re.search(re.escape(selector) + r"\s*\{[^}]*?" + prop + r":\s*(#[0-9A-Fa-f]{3,6})", css)
    assert match, selector
    return match.group(1)


def _luminance(hex_colour: str) -> float:
    hex_colour = hex_colour.lstrip("#")
    if len(hex_colour) == 3:
        hex_colour = "".join(ch * 2 for ch in hex_colour)
    channels = [int(hex_colour[i : i + 2], 16) / 255 for i in (0, 2, 4)]
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def _contrast(a: str, b: str) -> float:
    la, lb = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def test_palette_is_okabe_ito_and_labels_keep_contrast():
    css = resources.files("ainotes").joinpath("assets/collectives.css").read_text(encoding="utf-8")
    okabe_ito = ["#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7", "#999999"]
    fills = [_css_hex(css, f".ainotes-coll .c{i}", "fill") for i in range(8)]
    assert fills == okabe_ito
    dark_text = _css_hex(css, ".ainotes-coll .k + text", "fill")
    for i, fill in enumerate(fills):
        text = _css_hex(css, f".ainotes-coll .c{i} + text", "fill") if i == 4 else dark_text
        assert _contrast(fill, text) >= 4.5, (i, fill, text)  # WCAG AA for small text
    light, dark = (
        re.search(re.escape(sel) + r"\s*\{([^}]*)\}", css).group(1)
        for sel in ('[data-md-color-scheme="default"] .ainotes-coll', '[data-md-color-scheme="slate"] .ainotes-coll')
    )
    for block in (light, dark):
        tokens = dict(re.findall(r"(--ac-[a-z-]+):\s*(#[0-9a-fA-F]{6})", block))
        assert _contrast(tokens["--ac-sum"], tokens["--ac-sum-fg"]) >= 4.5
        assert _contrast(tokens["--ac-bg"], tokens["--ac-fg"]) >= 7
        assert _contrast(tokens["--ac-bg"], tokens["--ac-null"]) >= 3  # dashed empty boxes stay visible


# --- in a browser ------------------------------------------------------------------------


@pytest.mark.browser
def test_stepper_in_a_browser(browser, tmp_path):
    page_file = tmp_path / "all-reduce.html"
    page_file.write_text(standalone_html(simulate("all-reduce", 4)), encoding="utf-8")
    context = browser.new_context(viewport={"width": 360, "height": 800})
    page = context.new_page()
    page.goto(page_file.as_uri())
    visible = "[...document.querySelectorAll('.ainotes-stepper-frame')].map(f => !f.hidden)"
    assert page.evaluate(visible) == [True, False, False, False, False]
    assert page.inner_text(".ainotes-stepper-counter") == "Frame 1 of 5"
    assert page.get_attribute(".ainotes-stepper-live", "aria-live") == "polite"
    page.get_by_role("button", name="Next ▶").click()
    assert page.evaluate(visible) == [False, True, False, False, False]
    assert page.inner_text(".ainotes-stepper-live").startswith("Frame 2 of 5: Reduce step")
    page.focus(".ainotes-stepper")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    assert page.inner_text(".ainotes-stepper-counter") == "Frame 4 of 5"
    page.keyboard.press("ArrowLeft")
    assert page.inner_text(".ainotes-stepper-counter") == "Frame 3 of 5"
    page.keyboard.press("End")
    assert page.is_disabled("text=Next ▶")
    # Running the enhancement again (as after instant navigation) adds nothing.
    script = resources.files("ainotes").joinpath("assets/collectives.js").read_text(encoding="utf-8")
    page.add_script_tag(content=script)
    assert page.locator(".ainotes-stepper-controls").count() == 1
    assert page.evaluate("document.documentElement.scrollWidth") <= 360
    context.close()


@pytest.mark.browser
def test_animated_svg_plays_and_respects_reduced_motion(browser, tmp_path):
    svg_file = tmp_path / "all-reduce.svg"
    svg_file.write_text(animated_svg(simulate("all-reduce", 4)), encoding="utf-8")
    opacities = "[...document.querySelectorAll('g.f')].map(g => getComputedStyle(g).opacity)"
    running = "document.getAnimations().length"
    for motion, animations in (("no-preference", 4), ("reduce", 0)):
        context = browser.new_context(reduced_motion=motion)
        page = context.new_page()
        page.goto(svg_file.as_uri())
        assert page.evaluate(running) == animations
        if motion == "reduce":
            assert page.evaluate(opacities) == ["0", "0", "0", "1"]
        else:
            page.evaluate("document.getAnimations().forEach(a => { a.pause(); a.currentTime = 1200; })")
            assert page.evaluate(opacities) == ["1", "0", "0", "0"]
        context.close()
