"""Rendering through vl-convert: the cache, the standalone page and the in-page figure."""

from __future__ import annotations

import html
import json
import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import pytest
import vl_convert as vlc

from ainotes import render
from ainotes.base import cache as render_cache
from ainotes.base import scripts
from ainotes.charts import explorer
from ainotes.charts.roofline.colours import retheme
from ainotes.charts.roofline.names import STATIC_HEIGHT_PX, STATIC_WIDTH_PX
from ainotes.charts.roofline.spec import roofline_spec
from ainotes.charts.roofline.stills import narrow_static, spec_meta
from ainotes.core.hardware import Preset, Source
from ainotes.html import embed

TITLE = 'Rooflines <b>&"\' </script><script>alert(1)</script>'


def _preset(preset_id: str, name: str, tflops: float, tbps: float, sparse: bool) -> Preset:
    return Preset(
        id=preset_id, name=name, dense_fp16_tflops=tflops, memory_bandwidth_tbps=tbps,
        structured_sparsity=sparse, sources=(Source("vendor table", "https://example.com/spec"),),
        path=f"presets/{preset_id}.yaml",
    )


PRESETS = (
    _preset("h100", "NVIDIA H100 SXM5 80 GB", 989.4, 3.35, True),
    _preset("odd", "Odd <b>&\"' </script>", 312.0, 2.039, False),
)


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("AINOTES_CACHE_DIR", str(folder))
    monkeypatch.setenv("AINOTES_SHARED_CACHE_DIR", str(tmp_path / "runtime"))
    render_cache.MEMO.clear()  # a fresh process as far as the memo goes
    render.SESSION.runtime_text.clear()
    yield folder
    render_cache.MEMO.clear()
    render.SESSION.runtime_text.clear()


@pytest.fixture(scope="module")
def spec() -> dict:
    return roofline_spec(PRESETS, title=TITLE)


class _Calls:
    """Counts vl-convert calls of one kind while passing them through."""

    def __init__(self, monkeypatch, name: str):
        self.count = 0
        original = getattr(vlc, name)

        def counted(*args, **kwargs):
            self.count += 1
            return original(*args, **kwargs)

        monkeypatch.setattr(vlc, name, counted)


def _entries(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.entry"))


# -- cache ---------------------------------------------------------------------


def test_cache_dir_follows_the_environment(monkeypatch, tmp_path):
    assert render_cache.cache_dir() == tmp_path / "cache"
    monkeypatch.delenv("AINOTES_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert render_cache.cache_dir() == tmp_path / "xdg" / "ainotes" / "render"


def test_second_call_is_a_hit_on_disk_and_output_is_byte_identical(spec, cache, monkeypatch):
    calls = _Calls(monkeypatch, "vega_to_svg")
    first = render.svg(spec)
    assert calls.count == 1 and len(_entries(cache)) == 1
    render_cache.MEMO.clear()
    assert render.svg(spec) == first
    assert calls.count == 1  # served from disk
    # Same spec with its keys in another order: same key (canonical JSON).
    assert render.svg(dict(reversed(list(spec.items())))) == first and calls.count == 1
    # Rendering afresh gives the same bytes: the output is deterministic.
    render_cache.clear_cache()
    assert render.svg(spec) == first and calls.count == 2
    assert not list(cache.glob(".tmp-*"))  # atomic writes leave no temporary files


@pytest.mark.parametrize("damage", ["truncate", "flip", "header", "empty"])
def test_damaged_entry_is_deleted_and_rendered_again(spec, cache, monkeypatch, damage):
    calls = _Calls(monkeypatch, "vega_to_svg")
    good = render.svg(spec)
    (entry,) = _entries(cache)
    data = entry.read_bytes()
    if damage == "truncate":
        entry.write_bytes(data[: len(data) - 100])
    elif damage == "flip":  # same length, one byte changed
        entry.write_bytes(data[:-10] + bytes([data[-10] ^ 0x01]) + data[-9:])
    elif damage == "header":
        entry.write_bytes(b"garbage\n" + data.split(b"\n", 1)[1])
    else:
        entry.write_bytes(b"")
    render_cache.MEMO.clear()
    assert render.svg(spec) == good
    assert calls.count == 2
    assert entry.read_bytes() == data  # repaired


def test_clear_cache_empties_it(spec, cache):
    render.svg(spec)
    render.vega(spec)
    assert len(_entries(cache)) == 2
    assert render_cache.clear_cache() == 2
    assert _entries(cache) == []
    assert render_cache.clear_cache() == 0


def test_kinds_and_scales_are_separate_entries(spec, cache):
    one = render.png(spec, scale=1.0)
    two = render.png(spec, scale=2.0)
    assert one.startswith(b"\x89PNG\r\n\x1a\n") and two.startswith(b"\x89PNG\r\n\x1a\n")
    assert one != two and len(_entries(cache)) == 3  # two PNGs and the SVG both are rasterised from


def test_unwritable_cache_still_renders(spec, tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("AINOTES_CACHE_DIR", str(blocker / "cache"))
    assert render.svg(spec).startswith("<svg")


# -- outputs -------------------------------------------------------------------


def test_vega_is_compiled_vega(spec):
    compiled = render.vega(spec)
    assert "/schema/vega/" in compiled["$schema"]
    assert {s["name"] for s in compiled["signals"] if "bind" in s} == {"precision", "sparsity", "preset", "intensity"}
    compiled["signals"].clear()  # callers get their own copy
    assert render.vega(spec)["signals"]


def test_responsive_fills_the_container(spec):
    compiled = render.vega(render.responsive(spec))
    width = next(s for s in compiled["signals"] if s["name"] == "width")
    assert "containerSize" in json.dumps(width)
    assert spec["width"] == STATIC_WIDTH_PX  # the static spec is untouched


def test_runtime_is_vega_only_deterministic_and_cached(cache, monkeypatch):
    calls = _Calls(monkeypatch, "javascript_bundle")
    code = render.runtime_js()
    assert "window.vega=" in code.replace(" ", "")
    assert "vegaEmbed" not in code and "vegaLite" not in code
    assert not re.search(r"</script", code, re.IGNORECASE)
    render_cache.MEMO.clear()
    render.SESSION.runtime_text.clear()
    assert render.runtime_js() == code and calls.count == 1


def test_a_render_queued_under_another_cache_is_kept_in_this_one_too(tmp_path, monkeypatch):
    """What made test_runtime_is_vega_only_deterministic_and_cached fail under load: a job an earlier
    build (or test) queued while the cache was another folder, still queued or running when this one
    asks for the same key. Its payload is served, and kept here as well, so it is not made again."""
    monkeypatch.setenv(render.WORKERS_ENV, "0")  # the job stays queued until someone needs it
    monkeypatch.setenv("AINOTES_SHARED_CACHE_DIR", str(tmp_path / "earlier"))
    render.prefetch([render.RUNTIME_REQUEST])
    monkeypatch.setenv("AINOTES_SHARED_CACHE_DIR", str(tmp_path / "now"))
    calls = _Calls(monkeypatch, "javascript_bundle")
    code = render.runtime_js()  # the earlier job, run now
    assert calls.count <= 1 and _entries(tmp_path / "now")
    render_cache.MEMO.clear()
    render.SESSION.runtime_text.clear()
    assert render.runtime_js() == code and calls.count <= 1  # read back from this folder, not made again


def test_runtime_is_shared_across_render_caches_and_a_damaged_one_is_rebuilt(cache, tmp_path, monkeypatch):
    calls = _Calls(monkeypatch, "javascript_bundle")
    code = render.runtime_js()
    # Another project, or a cold render cache: the bundle is not built again.
    monkeypatch.setenv("AINOTES_CACHE_DIR", str(tmp_path / "other-project-cache"))
    render_cache.MEMO.clear()
    render.SESSION.runtime_text.clear()
    assert render.runtime_js() == code and calls.count == 1
    assert not list(cache.glob("*.entry")) if cache.exists() else True  # not in the render cache
    (entry,) = list((tmp_path / "runtime").glob("*.entry"))
    entry.write_bytes(entry.read_bytes()[:-100])  # truncated
    render_cache.MEMO.clear()
    render.SESSION.runtime_text.clear()
    assert render.runtime_js() == code and calls.count == 2
    render_cache.MEMO.clear()
    render.SESSION.runtime_text.clear()
    assert render.runtime_js() == code and calls.count == 2  # the rebuilt entry is sound


def test_script_json_cannot_close_the_script():
    text = scripts.script_json({"name": "</script><!-- & \u2028"})
    assert "<" not in text and ">" not in text and "&" not in text and "\u2028" not in text
    assert json.loads(text) == {"name": "</script><!-- & \u2028"}


class _Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.title = ""
        self._in_title = False
        self.scripts: list[str] = []
        self.templates: list[str] = []
        self._script: list[str] | None = None
        self._template: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        self._in_title = tag == "title"
        if tag == "script":
            self._script = []
        if tag == "template":
            self._template = []

    def handle_endtag(self, tag):
        if tag == "template" and self._template is not None:
            self.templates.append("".join(self._template))
            self._template = None
        if tag == "script" and self._script is not None:
            self.scripts.append("".join(self._script))
            self._script = None
        self._in_title = False

    def handle_data(self, data):
        if self._in_title:
            self.title += data
        if self._script is not None:
            self._script.append(data)
        if self._template is not None:
            self._template.append(data)


def _parse(text: str) -> _Page:
    page = _Page()
    page.feed(text)
    page.close()
    return page


def _outside_references(page: _Page, text: str) -> list[str]:
    found = []
    for tag, attrs in page.tags:
        for name in ("src", "href", "srcset", "poster", "data", "xlink:href"):
            value = attrs.get(name) or ""
            if re.match(r"\s*(https?:)?//", value):
                found.append(f"<{tag} {name}={value!r}>")
    # CSS in style elements and attributes: url(...) and @import
    for style in re.findall(r"<style[^>]*>(.*?)</style>", text, re.S) + [a.get("style") or "" for _, a in page.tags]:
        found += re.findall(r"url\(\s*['\"]?\s*(?:https?:)?//[^)]*\)|@import[^;]*", style)
    return found


def test_standalone_html_is_self_contained_and_escaped(spec):
    text = embed.standalone_html(explorer.figure(spec), title=TITLE)
    page = _parse(text)
    assert page.title == TITLE  # escaped in the source, the same text once parsed
    assert "<title>Rooflines &lt;b&gt;" in text
    assert _outside_references(page, text) == []
    tags = [tag for tag, _ in page.tags]
    # The reader's scheme, the runtime, the site's vega-charts.js (which wires the explorer) and the
    # height it tells a host.
    assert tags.count("script") == 4 and "svg" in tags and "noscript" in tags and "form" in tags
    # The compiled spec parses and is what render.vega gives for the page's responsive spec.
    assert json.loads(page.templates[0]) == render.vega(render.responsive(spec))
    assert "</script><script>alert" not in text


def test_embed_figure_has_both_stills_specs_caption_and_escaped_downloads(spec):
    downloads = {"svg": "../embed/a&b.svg", "png": "../embed/a.png", "json": "../embed/a.json",
                 "html": '../embed/a".html'}
    fragment = embed.interactive_figure_html(
        'chart-1"x', explorer.figure(spec, caption_html="A <em>caption</em>."), downloads=downloads
    )
    page = _parse(f"<div>{fragment}</div>")
    figure = next(a for t, a in page.tags if t == "figure")
    assert figure["id"] == 'chart-1"x' and figure["class"] == "ainotes-chart"
    stills = [a["class"] for t, a in page.tags if t == "div" and "ainotes-chart__still" in (a.get("class") or "")]
    # Light and dark, at desk size and (a roofline) at phone size.
    assert stills == ["ainotes-chart__still ainotes-chart__still--light",
                      "ainotes-chart__still ainotes-chart__still--dark",
                      "ainotes-chart__still ainotes-chart__still--light ainotes-chart__still--narrow",
                      "ainotes-chart__still ainotes-chart__still--dark ainotes-chart__still--narrow"]
    box = next(a for t, a in page.tags if t == "div" and "ainotes-chart__box" in (a.get("class") or "").split())
    narrow_size = render.svg_size(render.svg(narrow_static(spec)))
    assert box["style"] == (f"--ainotes-aspect: {STATIC_WIDTH_PX} / {STATIC_HEIGHT_PX}; "
                            f"--ainotes-aspect-narrow: {narrow_size[0]:g} / {narrow_size[1]:g}")
    # In <template>s: Material's instant navigation would run a <script> of JSON as JavaScript.
    assert page.scripts == []
    specs = [json.loads(s) for s in page.templates]
    assert [a["data-scheme"] for t, a in page.tags if t == "template"] == ["light", "dark"]
    assert [s["background"] for s in specs] == ["#ffffff", "#1e2129"]
    assert all("<" not in s and "&" not in s for s in page.templates)
    hrefs = [a["href"] for t, a in page.tags if t == "a"]
    assert hrefs == list(downloads.values())
    assert "A <em>caption</em>." in fragment
    snippets = re.findall(r'<code class="ainotes-embed__snippet"[^>]*>(.*?)</code>', fragment, re.S)
    assert len(snippets) == 2 and all("<" not in snippet for snippet in snippets)
    assert '<iframe src="../embed/a&quot;.html"' in html.unescape(snippets[1])
    # Each inline SVG is well-formed XML on its own.
    for part in re.findall(r"<svg.*?</svg>", fragment, re.S):
        ET.fromstring(part)
    assert _outside_references(page, fragment) == []


def test_namespace_ids_keeps_two_inline_svgs_apart():
    text = '<svg><clipPath id="clip1"/><g clip-path="url(#clip1)"/><use href="#clip1"/><g id="other"/></svg>'
    out = embed.namespace_ids(text, "c-light")
    assert 'id="c-light-clip1"' in out and "url(#c-light-clip1)" in out and 'href="#c-light-clip1"' in out
    assert 'id="c-light-other"' in out


@pytest.mark.browser
def test_a_phone_scrolls_the_standalone_tables_instead_of_breaking_their_words(tmp_path, browser):
    """At 360 px the kernels' table of a standalone roofline is a card per kernel (charts.css, as the
    notes' tables are) that fits the page, and keeps its words whole (the page's overflow-wrap:
    anywhere once broke them every few letters)."""
    from ainotes.core.kernels import parse_kernel_spec

    kernels = [parse_kernel_spec(k) for k in ("gemm:8192x8192x8192:bf16", "softmax:8192x8192", "add:16777216")]
    roofline = roofline_spec(PRESETS, kernels=kernels, title=TITLE)
    page_file = tmp_path / "chart.html"
    page_file.write_text(embed.standalone_html(explorer.figure(roofline), title=TITLE), encoding="utf-8")
    context = browser.new_context(viewport={"width": 360, "height": 800})
    try:
        tab = context.new_page()
        tab.goto(page_file.as_uri())
        wrap = tab.locator(".ainotes-table-wrap").first
        # The table fits: no sideways scroll, each row a card of cells one under another ...
        assert wrap.evaluate("w => w.scrollWidth <= w.clientWidth + 1")
        assert wrap.evaluate("w => getComputedStyle(w.querySelector('td')).display") == "block"
        # ... and no cell breaks a word: each cell is at least as wide as its longest word.
        narrow = tab.evaluate("""() => Array.from(document.querySelectorAll('.ainotes-kernel-bounds td')).filter(td => {
            const probe = document.createElement('span');
            probe.style.whiteSpace = 'nowrap';
            const longest = td.textContent.split(/\\s+/).reduce((a, b) => b.length > a.length ? b : a, '');
            probe.textContent = longest;
            td.appendChild(probe);
            const too = probe.getBoundingClientRect().width > td.clientWidth + 1;
            probe.remove();
            return too;
        }).length""")
        assert narrow == 0
    finally:
        context.close()


@pytest.mark.browser
def test_standalone_page_is_interactive_in_chromium(spec, tmp_path, browser):
    from playwright import sync_api as playwright

    page_file = tmp_path / "chart.html"
    page_file.write_text(embed.standalone_html(explorer.figure(spec), title=TITLE), encoding="utf-8")
    errors: list[str] = []
    outside: list[str] = []
    context = browser.new_context(viewport={"width": 900, "height": 900})
    try:
        tab = context.new_page()
        tab.on("console", lambda m: errors.append(m.text) if m.type in ("error", "warning") else None)
        tab.on("pageerror", lambda e: errors.append(str(e)))
        tab.on("request", lambda r: outside.append(r.url) if not r.url.startswith(("file:", "data:")) else None)
        tab.goto(page_file.as_uri())
        view = tab.locator(".ainotes-chart--live .ainotes-chart__view:not(.ainotes-chart__view--pending) svg")
        view.wait_for()
        # The static SVGs go only once the live view has rendered.
        assert tab.locator(".ainotes-chart__still").first.is_hidden()

        def legend(fragment: str):  # Vega updates asynchronously; expect() retries until it holds
            return playwright.expect(view.locator("text", has_text=fragment))

        # The standalone page has the explorer the notes' page has: precision, GPUs, sparsity, intensity.
        form = tab.locator("form.ainotes-explorer")
        legend("ridge 295 FLOP/B · NVIDIA H100").to_have_count(1)
        form.locator("input[name=sparsity]").check()
        # H100's sparse ridge, 591 FLOP/byte, replaces the dense one in its legend entry.
        legend("ridge 591 FLOP/B · NVIDIA H100").to_have_count(1)
        form.locator("select[name=precision]").select_option("tensor:fp16")
        legend("ridge 591 FLOP/B · NVIDIA H100").to_have_count(1)
        form.locator("input[name=intensity]").fill("398")
        form.locator("input[name=intensity]").press("Enter")
        playwright.expect(form.locator("[data-role=readout]")).to_contain_text("At 398 FLOP/byte")
    finally:
        context.close()
    assert errors == [] and outside == []


@pytest.mark.browser
def test_page_figure_goes_live_and_follows_the_colour_scheme(spec, tmp_path, browser):
    from importlib import resources

    from playwright import sync_api as playwright

    assets = resources.files("ainotes") / "assets"
    fragment = embed.interactive_figure_html("roof", explorer.figure(spec, caption_html="Caption."),
                                             downloads={"svg": "a.svg"})
    (tmp_path / "vega.min.js").write_text(render.runtime_js(), encoding="utf-8")
    for name in ("vega-charts.js", "charts.css"):
        (tmp_path / name).write_text((assets / name).read_text(encoding="utf-8"), encoding="utf-8")
    (tmp_path / "fonts").mkdir()  # beside charts.css, as the site serves them
    for font in (assets / "fonts").iterdir():
        if font.is_file():
            (tmp_path / "fonts" / font.name).write_bytes(font.read_bytes())
    (tmp_path / "page.html").write_text(
        '<!doctype html><html><head><meta charset="utf-8"><link rel="stylesheet" href="charts.css"></head>'
        f'<body data-md-color-scheme="default">{fragment}'
        '<script src="vega.min.js"></script><script src="vega-charts.js"></script></body></html>',
        encoding="utf-8",
    )
    errors: list[str] = []
    context = browser.new_context(viewport={"width": 800, "height": 900})
    try:
        tab = context.new_page()
        tab.on("console", lambda m: errors.append(m.text) if m.type in ("error", "warning") else None)
        tab.on("pageerror", lambda e: errors.append(str(e)))
        tab.goto((tmp_path / "page.html").as_uri())
        figure = tab.locator("figure.ainotes-chart")
        playwright.expect(figure).to_have_class(re.compile("ainotes-chart--live"))
        box = tab.locator(".ainotes-chart__box").bounding_box()
        live = tab.locator(".ainotes-chart__view > svg")
        assert live.bounding_box() == box  # the live view fills the box the static SVG reserved
        assert all(still.is_hidden() for still in tab.locator(".ainotes-chart__still").all())
        readout = tab.locator("[data-role=readout]")
        tab.locator("form.ainotes-explorer input[name=intensity]").fill("1")
        tab.locator("form.ainotes-explorer input[name=intensity]").press("Enter")
        playwright.expect(readout).to_contain_text("At 1 FLOP/byte")
        tab.evaluate("document.body.setAttribute('data-md-color-scheme', 'slate')")
        # Re-rendered with the dark spec, the reader's intensity kept.
        playwright.expect(live).to_have_css("background-color", "rgb(30, 33, 41)")  # #1e2129
        playwright.expect(readout).to_contain_text("At 1 FLOP/byte")
        assert tab.evaluate("window.__ainotesRooflineView('roof').signal('intensity')") == 1
        assert tab.locator(".ainotes-chart__view").count() == 1
        assert tab.locator("form.ainotes-explorer").is_visible()
    finally:
        context.close()
    assert errors == []


# -- one compile for a chart's still, phone still and live view ---------------------------------

def _layouts(spec: dict) -> list[dict]:
    variants = [spec, render.still_spec(spec), render.responsive(spec)]
    if spec_meta(spec) is not None:
        variants.append(render.still_spec(narrow_static(spec)))
    return variants


def test_a_shared_compile_is_the_compilers_own_output_at_every_layout():
    from ainotes.charts import cost
    from ainotes.presets.links import load_links

    links = tuple(load_links())
    from ainotes.core.kernels import parse_kernel_spec

    kernels = [parse_kernel_spec("gemm:8192x8192x8192:fp8"), parse_kernel_spec("softmax:4096x4096")]
    specs = [roofline_spec(PRESETS, title=TITLE, sparsity=True, kernels=kernels),
             roofline_spec(PRESETS[:1], theme="dark"),
             cost.cost_spec(links, op="all-to-all", ranks=16, link_id=links[0].id, title=None, theme="dark")]
    for spec in specs:
        version = render.vega_lite_version(spec)
        for variant in _layouts(spec):
            own = vlc.vegalite_to_vega(variant, vl_version=version)
            # Equal as JSON values: usermeta is passed on as given, where the compiler writes a
            # whole number over 2**32 as 1099511627776.0.
            assert render.compile_vega(variant, version) == own
    odd = {**specs[0], "width": "container", "height": 300}  # a layout the relayout does not know: compiled as is
    assert render.relayout({}, odd) is None
    assert render.compile_vega(odd, render.vega_lite_version(odd)) == vlc.vegalite_to_vega(
        odd, vl_version=render.vega_lite_version(odd))


def test_a_chart_group_compiles_each_theme_once(spec, monkeypatch):
    monkeypatch.setenv("AINOTES_RENDER_WORKERS", "0")
    render.SESSION.compiled_bases.clear()
    compiles = _Calls(monkeypatch, "vegalite_to_vega")
    renders = _Calls(monkeypatch, "vega_to_svg")
    dark = retheme(spec, "dark")
    group = render.group_request([
        render.svg_request(spec, png_scales=(2.0,)), render.vega_request(render.responsive(spec)),
        render.svg_request(narrow_static(spec)), render.vega_request(render.responsive(dark)),
    ])
    summary = render.render_many([group])
    assert (compiles.count, renders.count) == (2, 2)  # light and dark; the desk and phone stills
    assert summary is not None
    version = render.vega_lite_version(spec)
    assert render.svg(spec) == vlc.vegalite_to_svg(render.still_spec(spec), vl_version=version)


def test_a_spec_that_names_no_font_is_drawn_in_the_shipped_one():
    """Vega's default "sans-serif" is whatever the machine has when the engine starts: a still drawn
    from a spec without a font would differ between machines, and between render workers started
    before and after a font package was installed. The renderer draws it in the shipped font."""
    bare = {"data": {"values": [{"x": 1, "y": 2}]}, "mark": "point", "title": "bare <&>",
            "encoding": {"x": {"field": "x", "type": "quantitative"}, "y": {"field": "y", "type": "quantitative"}}}
    families = set(re.findall(r'font-family="([^"]+)"', render.svg(bare)))
    assert families == {"ainotes Sans"}
    themed = {**bare, "title": "themed", "config": {"font": "Georgia"}}
    assert set(re.findall(r'font-family="([^"]+)"', render.svg(themed))) == {"Georgia"}
