"""The built site in a real browser: Debian's chromium driven by Playwright (never a browser download).

The run's shared builds (tests/shared_sites.py): the real site (served under the sub-path ``/notes/``, as
GitHub Pages would serve a project site) and a small fixture site (``/fixture/``, with a preset that has
no 2:4 sparse path), both served from one ``http.server`` thread. Every request that leaves that origin is aborted and
recorded. Screenshots for a person to look at land in ``artifacts/screenshots/`` (git-ignored).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path

import pytest
from playwright.sync_api import BrowserContext, Page, expect

from ainotes.presets.gpus import load_presets
from browser_support import (
    DESK,
    PHONE,
    TABLET,
    WAIT_MS,
    Watch,
    file_only,
    guard_requests,
    same_origin,
    site_pages,
    wait_for_charts,
    wait_until,
)
from sitebuild import REPO, make_fixture

pytestmark = pytest.mark.browser

SCREENSHOTS = REPO / "artifacts" / "screenshots"
# How far a chart may move or resize when its script takes over (sub-pixel rounding, borders).
LAYOUT_TOLERANCE_PX = 3

FIXTURE_PAGES = {
    "index.md": """\
        # Fixture

        ```roofline
        id: fixture-roofline
        title: One GPU with a sparse path, one without
        presets: [h100, plain]
        ```
        """,
}


@dataclass(frozen=True)
class Sites:
    origin: str
    real_url: str  # the real site, under /notes/
    real_dir: Path
    fixture_url: str  # the fixture site, under /fixture/
    fixture_dir: Path
    fixture_presets_dir: Path


@pytest.fixture(scope="session")
def sites(real_site, shared_sites) -> Sites:
    fixture = shared_sites.build("fixture", lambda root: make_fixture(root, FIXTURE_PAGES))
    assert fixture.returncode == 0, fixture.output
    return Sites(real_site.origin, real_site.url, real_site.site, fixture.url, fixture.site,
                 fixture.project / "presets")


class Contexts:
    """Fresh browser contexts for one test, each with its requests guarded; all closed at the end."""

    def __init__(self, browser, allowed):
        self._browser = browser
        self._allowed = allowed
        self._open: list[BrowserContext] = []
        self.watch = Watch()

    def new(self, **options) -> BrowserContext:
        options.setdefault("viewport", DESK)
        context = self._browser.new_context(**options)
        context.set_default_timeout(WAIT_MS)
        guard_requests(context, self._allowed, self.watch)
        self._open.append(context)
        return context

    def page(self, url: str | None = None, **options) -> Page:
        page = self.watch.attach(self.new(**options).new_page())
        if url is not None:
            page.goto(url)
        return page

    def close(self) -> None:
        for context in self._open:
            context.close()


@pytest.fixture
def contexts(browser, sites):
    made = Contexts(browser, same_origin(sites.origin))
    yield made
    made.close()


@pytest.fixture
def file_contexts(browser):
    made = Contexts(browser, file_only)
    yield made
    made.close()


CHART_MARKUP = re.compile(r'class="(ainotes-chart|ainotes-coll ainotes-stepper)"')


def chart_pages(site: Path) -> list[str]:
    return [p for p in site_pages(site) if CHART_MARKUP.search((site / p / "index.html").read_text(encoding="utf-8"))]


def _manifest(site: Path) -> list[dict]:
    return json.loads((site / "embed" / "manifest.json").read_text(encoding="utf-8"))["charts"]


# -- 1. every page: nothing from outside, no errors --------------------------------------------------


def test_every_page_loads_nothing_from_outside_and_logs_no_errors(sites, contexts):
    pages = site_pages(sites.real_dir)
    assert len(pages) == len(list((REPO / "docs").rglob("*.md"))), pages
    page = contexts.page()
    for path in pages:
        page.goto(sites.real_url + path)
        wait_for_charts(page)
    assert contexts.watch.problems() == [], "\n".join(contexts.watch.problems())


# -- 2. static first, then live, without moving -------------------------------------------------------

NO_SCRIPT_STATE_JS = """() => ({
  charts: [...document.querySelectorAll('figure.ainotes-chart')].map(f => {
    const stills = [...f.querySelectorAll('.ainotes-chart__still')].filter(s => getComputedStyle(s).display !== 'none');
    const svg = stills.length ? stills[0].querySelector('svg').getBoundingClientRect() : {width: 0, height: 0};
    const box = f.querySelector('.ainotes-chart__box').getBoundingClientRect();
    return {id: f.id, height: f.getBoundingClientRect().height, visibleStills: stills.length,
            svgWidth: svg.width, svgHeight: svg.height, boxTop: box.top - f.getBoundingClientRect().top,
            boxHeight: box.height};
  }),
  steppers: [...document.querySelectorAll('.ainotes-stepper')].map(s => {
    const frames = [...s.querySelectorAll('.ainotes-stepper-frame')];
    const svg = frames[0].querySelector('svg').getBoundingClientRect();
    return {id: s.id, frames: frames.length, visibleFrames: frames.filter(f => f.getClientRects().length).length,
            svgWidth: svg.width, svgHeight: svg.height, svgTop: svg.top - s.getBoundingClientRect().top};
  }),
})"""

LIVE_STATE_JS = """() => ({
  charts: [...document.querySelectorAll('figure.ainotes-chart')].map(f => {
    const stills = [...f.querySelectorAll('.ainotes-chart__still')].filter(s => s.getClientRects().length);
    const view = f.querySelector('.ainotes-chart__view svg');
    const box = f.querySelector('.ainotes-chart__box').getBoundingClientRect();
    const svg = view ? view.getBoundingClientRect() : {width: 0, height: 0};
    // What only the script shows: the explorer's form and the selects' box (hidden without scripts).
    const outer = el => el ? el.getBoundingClientRect().height + parseFloat(getComputedStyle(el).marginTop)
                             + parseFloat(getComputedStyle(el).marginBottom) : 0;
    return {id: f.id, height: f.getBoundingClientRect().height, visibleStills: stills.length,
            viewWidth: svg.width, viewHeight: svg.height, boxWidth: box.width, boxHeight: box.height,
            boxTop: box.top - f.getBoundingClientRect().top,
            formHeight: outer(f.querySelector('form.ainotes-explorer'))
                        + outer(f.querySelector('.ainotes-chart__controls'))};
  }),
  steppers: [...document.querySelectorAll('.ainotes-stepper')].map(s => {
    const shown = [...s.querySelectorAll('.ainotes-stepper-frame')].filter(f => f.getClientRects().length);
    const svg = shown.length ? shown[0].querySelector('svg').getBoundingClientRect() : {width: 0, height: 0, top: 0};
    return {id: s.id, visibleFrames: shown.length, svgWidth: svg.width, svgHeight: svg.height,
            svgTop: svg.top - s.getBoundingClientRect().top};
  }),
})"""


@pytest.mark.parametrize("viewport", [DESK, PHONE], ids=["desk", "phone"])
def test_charts_are_static_without_script_and_go_live_in_place(sites, contexts, viewport):
    pages = chart_pages(sites.real_dir)
    assert {"roofline/", "collectives/"} <= set(pages)
    problems = []
    still_page = contexts.page(viewport=viewport, java_script_enabled=False)
    live_page = contexts.page(viewport=viewport)
    for path in pages:
        still_page.goto(sites.real_url + path)
        still = still_page.evaluate(NO_SCRIPT_STATE_JS)
        live_page.goto(sites.real_url + path)
        wait_for_charts(live_page)
        live = live_page.evaluate(LIVE_STATE_JS)
        assert still["charts"] or still["steppers"], path

        for before, after in zip(still["charts"], live["charts"], strict=True):
            where = f"{path}#{before['id']}"
            if before["visibleStills"] != 1 or before["svgWidth"] <= 0 or before["svgHeight"] <= 0:
                problems.append(f"{where}: without script, expected one visible static SVG: {before}")
            if after["visibleStills"] != 0 or after["viewWidth"] <= 0 or after["viewHeight"] <= 0:
                problems.append(f"{where}: live, expected the Vega view alone: {after}")
            if abs(after["viewHeight"] - after["boxHeight"]) > LAYOUT_TOLERANCE_PX:
                problems.append(f"{where}: the live view does not fill its box: {after}")
            # The picture keeps its place and size; the form and selects, which need the script, add their height.
            for key in ("boxTop", "boxHeight"):
                if abs(after[key] - before[key]) > LAYOUT_TOLERANCE_PX:
                    problems.append(f"{where}: the chart's {key} changes from {before[key]:.1f} px (static) "
                                    f"to {after[key]:.1f} px (live)")
            if abs(after["height"] - after["formHeight"] - before["height"]) > LAYOUT_TOLERANCE_PX:
                problems.append(f"{where}: the figure's height changes from {before['height']:.1f} px (static) "
                                f"to {after['height']:.1f} px (live), more than its form's "
                                f"{after['formHeight']:.1f} px")
        for before, after in zip(still["steppers"], live["steppers"], strict=True):
            where = f"{path}#{before['id']}"
            if before["visibleFrames"] != before["frames"] or before["svgWidth"] <= 0 or before["svgHeight"] <= 0:
                problems.append(f"{where}: without script, expected every frame visible: {before}")
            if after["visibleFrames"] != 1:
                problems.append(f"{where}: live, expected one frame at a time: {after}")
            for key in ("svgWidth", "svgHeight", "svgTop"):
                if abs(after[key] - before[key]) > LAYOUT_TOLERANCE_PX:
                    problems.append(f"{where}: the first frame's picture moves when the script takes over: "
                                    f"{key} {before[key]:.1f} px (static) → {after[key]:.1f} px (live)")
    assert not problems, "\n".join(problems)
    assert contexts.watch.problems() == [], "\n".join(contexts.watch.problems())


# -- 3. the roofline explorer: legible in every state, numbers in the reader's units -------------------

WIDTHS = {"phone": PHONE, "tablet": TABLET, "desk": DESK}
MIN_TEXT_PX = 11
MIN_TOUCH_PX = 44

# Every visible text element inside `root` (a live view or a static SVG): its text and box.
TEXT_BOXES_JS = """(root) => {
  const hidden = el => {
    for (let n = el; n && n !== root.parentNode; n = n.parentNode) {
      if (n.nodeType !== 1) continue;
      if (n.getAttribute('opacity') === '0' || n.getAttribute('fill-opacity') === '0') return true;
      const cs = getComputedStyle(n);
      if (cs.display === 'none' || cs.visibility === 'hidden' || cs.opacity === '0') return true;
    }
    return false;
  };
  return [...root.querySelectorAll('text')].filter(t => t.textContent.trim() && !hidden(t)).map(t => {
    const r = t.getBoundingClientRect();
    const size = parseFloat(getComputedStyle(t).fontSize) * (r.height ? 1 : 0);
    const scale = t.ownerSVGElement.getScreenCTM ? t.ownerSVGElement.getScreenCTM().a : 1;
    return {text: t.textContent, left: r.left, top: r.top, right: r.right, bottom: r.bottom,
            px: size * scale, transform: t.getAttribute('transform') || ''};
  }).filter(b => b.right > b.left && b.bottom > b.top);
}"""

# Overlaps between text boxes (more than half a pixel both ways) and text outside the SVG.
OVERLAPS_JS = """(boxes, frame) => {
  const found = [];
  for (let i = 0; i < boxes.length; i++) {
    const a = boxes[i];
    if (a.left < frame.left - 1 || a.right > frame.right + 1 || a.top < frame.top - 1 || a.bottom > frame.bottom + 1)
      found.push(`"${a.text}" leaves the chart`);
    for (let j = i + 1; j < boxes.length; j++) {
      const b = boxes[j];
      const x = Math.min(a.right, b.right) - Math.max(a.left, b.left);
      const y = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
      if (x > 0.5 && y > 0.5) found.push(`"${a.text}" overlaps "${b.text}" by ${x.toFixed(1)}×${y.toFixed(1)} px`);
    }
  }
  return found;
}"""

# Walks the live view of chart `id` through `states` (signal values), measuring its text after each.
SWEEP_JS = f"""async ([id, states]) => {{
  const boxesOf = {TEXT_BOXES_JS};
  const overlaps = {OVERLAPS_JS};
  const view = window.__ainotesRooflineView(id);
  const svg = document.querySelector('#' + id + ' .ainotes-chart__view svg');
  const problems = [];
  let small = [];
  for (const state of states) {{
    for (const [name, value] of Object.entries(state)) view.signal(name, value);
    // As the page's script does (vega-charts.js, redraw): the second pass lays out legends that changed.
    await view.runAsync();
    await view.runAsync();
    const boxes = boxesOf(svg);
    for (const found of overlaps(boxes, svg.getBoundingClientRect()))
      problems.push(JSON.stringify(state) + ': ' + found);
    for (const b of boxes) {{
      if (b.px < {MIN_TEXT_PX} - 0.01) small.push(`${{b.text}} at ${{b.px.toFixed(1)}} px`);
      if (/rotate/.test(b.transform) && b.text !== 'Attainable rate') problems.push(`rotated: ${{b.text}}`);
    }}
  }}
  return {{problems, small: [...new Set(small)]}};
}}"""


def _explorer_states(spec_meta: dict, preset_ids: list[str]) -> list[dict]:
    """Every preset selection × sparsity × precision, then the reader's marks across the axis."""
    states = [{"precision": roof, "preset": preset, "sparsity": sparse, "kmode": kmode, "readout_on": True,
               "own_on": False, "batch_on": False}
              for roof in spec_meta["roofs"] for preset in ["*", *preset_ids] for sparse in (False, True)
              for kmode in ("own", "shown")]
    for x, tokens in ((0.1, 1), (1.3, 2), (30, 32), (300, 512), (2730.7, 4096), (9000, 16384)):
        states.append({"precision": "tensor:bf16", "preset": "*", "sparsity": False, "intensity": x, "readout_on": True,
                       "own_on": True, "own_kind": "intensity", "own_typed_x": x, "own_roof": "tensor:bf16",
                       "batch_on": True, "batch_tokens": tokens, "batch_d": 8192, "batch_s": 2, "batch_dtype": "bf16",
                       "batch_roof": "tensor:bf16"})
        states.append({"precision": "tensor:bf16", "preset": "*", "sparsity": True, "intensity": x, "readout_on": True,
                       "own_on": True, "own_kind": "gemm", "own_m": 4096, "own_n": 4096, "own_k": 4096, "own_s": 1,
                       "own_dtype": "fp8", "own_roof": "tensor:fp8", "batch_on": False})
    return states


def _roofline_meta(page: Page, chart_id: str) -> dict:
    return page.evaluate("(id) => JSON.parse(document.querySelector('#' + id + ' form.ainotes-explorer')"
                         ".getAttribute('data-explorer'))", chart_id)


@pytest.mark.parametrize(("width", "scheme"), [
    # Every width in light; dark (its own spec, the same layout in other colours) on the phone, the
    # narrowest; dark at the other widths in the matrix tier.
    *[pytest.param(width, "light", id=width) for width in WIDTHS],
    pytest.param("phone", "dark", id="phone-dark"),
    *[pytest.param(width, "dark", id=f"{width}-dark", marks=pytest.mark.matrix)
      for width in WIDTHS if width != "phone"],
])
def test_roofline_text_never_overlaps_in_any_state(sites, contexts, width, scheme):
    problems, small = [], []
    for url in (sites.real_url + "roofline/", sites.fixture_url):
        page = contexts.page(url, viewport=WIDTHS[width], color_scheme=scheme)
        wait_for_charts(page)
        for chart_id in page.eval_on_selector_all("figure.ainotes-chart", "fs => fs.map(f => f.id)"):
            meta = _roofline_meta(page, chart_id)
            spec_meta = {"roofs": page.locator(f"#{chart_id} select[name=precision] option")
                         .evaluate_all("os => os.map(o => o.value)")}
            states = _explorer_states(spec_meta, list(meta["names"]))
            if scheme == "dark":  # the same layout in other colours: every roof, all presets, both modes
                states = [s for s in states if s.get("preset") == "*"]
            found = page.evaluate(SWEEP_JS, [chart_id, states])
            problems += [f"{width} {scheme} {chart_id}: {p}" for p in found["problems"]]
            small += [f"{width} {scheme} {chart_id}: {p}" for p in found["small"]]
        page.close()
    assert not problems, "\n".join(problems[:40])
    if width != "phone":
        assert not small, "\n".join(small[:40])
    else:
        assert not small, "text under 11 px on a phone:\n" + "\n".join(small[:40])
    assert contexts.watch.problems() == [], "\n".join(contexts.watch.problems())


STATIC_SVGS_JS = f"""(checkSize) => {{
  const boxesOf = {TEXT_BOXES_JS};
  const overlaps = {OVERLAPS_JS};
  return [...document.querySelectorAll('.ainotes-chart__still, body > svg')]
    .filter(s => s.getClientRects().length)
    .map(s => {{ const svg = s.tagName.toLowerCase() === 'svg' ? s : s.querySelector('svg');
                const boxes = boxesOf(svg);
                // In the page, the picture is scaled to its box: its text must still read at 11 px or more.
                const small = !checkSize || s.tagName.toLowerCase() === 'svg' ? []
                  : boxes.filter(b => b.px < {MIN_TEXT_PX} - 0.01)
                  .map(b => `"${{b.text}}" at ${{b.px.toFixed(1)}} px`);
                return [...overlaps(boxes, svg.getBoundingClientRect()), ...small]; }}).flat();
}}"""


@pytest.mark.parametrize("width", list(WIDTHS))
def test_static_roofline_svgs_never_overlap(sites, contexts, width):
    problems = []
    for scheme in ("light", "dark"):
        page = contexts.page(viewport=WIDTHS[width], color_scheme=scheme, java_script_enabled=False)
        page.goto(sites.real_url + "roofline/")
        # In the page (a phone shows the picture drawn at its size), text reads at 11 px or more.
        problems += [f"page {scheme}: {p}" for p in page.evaluate(STATIC_SVGS_JS, True)]
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.locator(".ainotes-chart__box").first.screenshot(
            path=str(SCREENSHOTS / f"explorer-no-script-{scheme}-{width}.png"))
        for chart in (c for c in _manifest(sites.real_dir) if c["kind"] == "roofline"):
            # The narrow still, as small hosts show it, where the chart has one (a measured roofline has none).
            for kind in (k for k in ("svg", "svg-dark", "svg-narrow") if k in chart["files"]):
                page.goto(sites.real_url + "embed/" + chart["files"][kind])
                problems += [f"{chart['files'][kind]}: {p}" for p in page.evaluate(STATIC_SVGS_JS, False)]
    assert not problems, "\n".join(problems)


def _explorer(page: Page) -> tuple[str, object]:
    chart_id = page.locator("figure.ainotes-chart").first.get_attribute("id")
    return chart_id, page.locator(f"#{chart_id} form.ainotes-explorer")


def _readout_lines(form, role: str) -> list[str]:
    return form.locator(f"[data-role={role}] li").all_inner_texts()


def _flops(text: str) -> float:
    number, unit = re.fullmatch(r"([\d.,]+) ([A-Z]?)FLOP/s", text).groups()
    return float(number.replace(",", "")) * {"": 1, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18}[unit]


def test_typing_an_intensity_reads_off_each_preset(sites, contexts):
    presets = load_presets(REPO / "presets")
    page = contexts.page(sites.real_url + "roofline/")
    wait_for_charts(page)
    chart_id, form = _explorer(page)
    field = form.locator("input[name=intensity]")
    expect(form.locator("label", has_text=re.compile(r"^Intensity \(FLOP/byte\)"))).to_be_visible()
    field.fill("300")
    field.press("Enter")
    expect(form.locator("[data-role=readout] p")).to_have_text("At 300 FLOP/byte, BF16 matrix units, dense:")
    assert page.evaluate(f"window.__ainotesRooflineView('{chart_id}').signal('intensity')") == 300
    # The slider beside it follows, on its log scale.
    assert float(form.locator("input[name=log_intensity]").input_value()) == pytest.approx(math.log10(300), abs=0.01)
    lines = _readout_lines(form, "readout")
    assert len(lines) == len(presets)
    for preset, line in zip(presets, lines, strict=True):
        ridge = preset.ridge_flop_per_byte()
        attainable = min(preset.peak_flops_per_s(), preset.memory_bandwidth_bytes_per_s * 300)
        bound = "memory" if ridge > 300 else "compute"
        match = re.fullmatch(r"(.+): ([\d.,]+ [A-Z]?FLOP/s), (memory|compute)-bound, ([\d.]+)× (the|below the) ridge "
                             r"\(([\d,]+) FLOP/byte\)", line)
        assert match, line
        assert match.group(1) == preset.name
        assert _flops(match.group(2)) == pytest.approx(attainable, rel=5e-4)
        assert match.group(3) == bound
        ratio = 300 / ridge if bound == "compute" else ridge / 300
        assert float(match.group(4)) == pytest.approx(ratio, rel=5e-3)
        assert match.group(6) == f"{ridge:,.0f}"
    # Sparsity on: H100's ridge doubles to 591, so 300 FLOP/byte is memory-bound there.
    form.locator("input[name=sparsity]").check()
    expect(form.locator("[data-role=readout]")).to_contain_text(
        "NVIDIA H100 SXM5 80 GB: 1.005 PFLOP/s (2:4 sparse), memory-bound")
    assert contexts.watch.problems() == [], "\n".join(contexts.watch.problems())


def test_a_gemm_lands_on_each_preset_where_the_core_says(sites, contexts):
    from ainotes.core import roofline
    from ainotes.core.kernels import parse_kernel_spec

    presets = load_presets(REPO / "presets")
    page = contexts.page(sites.real_url + "roofline/")
    wait_for_charts(page)
    chart_id, form = _explorer(page)
    for name, value in (("m", "4096"), ("n", "4096"), ("k", "4096")):
        form.locator(f"input[name={name}]").fill(value)
    form.locator("select[name=dtype]").select_option("fp8")
    form.locator("button[value=gemm]").click()
    kernel = parse_kernel_spec("gemm:4096x4096x4096:fp8")
    expect(form.locator("[data-role=own] p")).to_contain_text(
        "Your GEMM 4096×4096×4096 fp8: 137.4 GFLOP, 50.33 MB moved at least, "
        f"{kernel.intensity_flop_per_byte:,.0f} FLOP/byte")
    lines = dict(line.split(": ", 1) for line in _readout_lines(form, "own"))
    for preset in presets:
        core = roofline.kernel_roof(preset, kernel)
        if core.attainable_flops_per_s is None:
            assert lines[preset.name].startswith("unsupported, ") and "FP8" in lines[preset.name], lines[preset.name]
        else:
            match = re.fullmatch(r"(memory|compute)-bound, at most (.+) \((.+)\), ([\d.,]+) µs", lines[preset.name])
            assert match and match.group(1) == core.bound, lines[preset.name]
            assert _flops(match.group(2)) == pytest.approx(core.attainable_flops_per_s, rel=5e-4)
            assert match.group(3) == f"FP8 {preset.unit_term('tensor')}"
            # Its time at that rate: FLOPs ÷ attainable FLOP/s, in µs (three figures below 100 µs).
            assert float(match.group(4).replace(",", "")) == pytest.approx(core.time_s * 1e6, rel=5e-3)
    # 2·4096³ FLOPs at 1,978.9 TFLOP/s (the whitepaper's dense FP8 rate): 69.45 µs.
    assert lines["NVIDIA H100 SXM5 80 GB"] == "compute-bound, at most 1.979 PFLOP/s (FP8 tensor cores), 69.5 µs"
    assert lines["NVIDIA A100 80GB SXM"] == "unsupported, no FP8 path"
    view = f"window.__ainotesRooflineView('{chart_id}')"
    assert page.evaluate(f"{view}.signal('own_on')") is True
    assert page.evaluate(f"{view}.signal('own_x')") == pytest.approx(kernel.intensity_flop_per_byte, rel=1e-12)
    assert page.evaluate(f"{view}.signal('own_roof')") == "tensor:fp8"
    label = page.locator(f"#{chart_id} .ainotes-chart__view svg text", has_text="GEMM 4096×4096×4096 fp8")
    expect(label).to_have_count(1)
    assert contexts.watch.problems() == [], "\n".join(contexts.watch.problems())


GEMM_SHAPES = [(1, 1, 1), (16, 8192, 8192), (4096, 4096, 4096), (8192, 8192, 8192), (3, 7, 11), (1, 2**31, 1),
               (2**31, 2**31, 2**31), (128, 50257, 768), (65536, 1, 65536), (12345, 678, 91011)]


# The live chart, given a GEMM: its figures, and each preset's mark where the chart draws it.
OWN_GEMM_JS = """async ([id, m, n, k, bytes, dtype, roof]) => {
  const view = window.__ainotesRooflineView(id);
  const figure = document.getElementById(id);
  const spec = JSON.parse(figure.querySelector('template.ainotes-chart__spec').content.textContent);
  for (const [name, value] of Object.entries({own_on: true, own_kind: 'gemm', own_m: m, own_n: n, own_k: k,
                                              own_s: bytes, own_dtype: dtype, own_roof: roof, precision: roof}))
    view.signal(name, value);
  await view.runAsync();
  const marks = spec.data.map(d => d.name).flatMap(name => view.data(name)).filter(r => 'own_text' in r);
  return {flops: view.signal('own_flops'), bytes: view.signal('own_bytes'), x: view.signal('own_x'),
          marks: marks.map(r => ({p: r.p, x: r.x, y: r.y}))};
}"""


def test_the_pages_formulas_are_the_cores_for_many_shapes_and_every_dtype(sites, contexts):
    from ainotes.core import roofline
    from ainotes.core.kernels import DTYPE_BYTES, gemm

    presets = load_presets(REPO / "presets")
    page = contexts.page(sites.real_url + "roofline/")
    wait_for_charts(page)
    chart_id, _ = _explorer(page)
    meta = _roofline_meta(page, chart_id)
    roofs = page.locator(f"#{chart_id} select[name=precision] option").evaluate_all("os => os.map(o => o.value)")
    assert set(meta["dtypes"]) == set(DTYPE_BYTES)
    for dtype, info in meta["dtypes"].items():
        if info["roof"] not in roofs:  # no preset has it: the chart cannot show that roof
            continue
        for m, n, k in GEMM_SHAPES:
            kernel = gemm(m, n, k, dtype)
            got = page.evaluate(OWN_GEMM_JS, [chart_id, m, n, k, info["bytes"], dtype, info["roof"]])
            # (JSON from the page writes a large double as its shortest decimal: equal to 1 part in 10^15.)
            assert got["flops"] == pytest.approx(kernel.flops, rel=1e-15)
            assert got["bytes"] == pytest.approx(kernel.bytes_moved, rel=1e-15)
            assert got["x"] == pytest.approx(kernel.intensity_flop_per_byte, rel=1e-15)
            marks = {mark["p"]: mark for mark in got["marks"]}
            for preset in presets:
                core = roofline.kernel_roof(preset, kernel)
                assert info["roof"] == f"{core.unit}:{core.precision}"
                if core.attainable_flops_per_s is None:
                    assert preset.id not in marks, (preset.id, dtype)
                    continue
                assert marks[preset.id]["y"] == pytest.approx(core.attainable_flops_per_s, rel=1e-12)


@pytest.mark.parametrize(("field", "value", "message"), [
    ("m", "0", "GEMM M must be a whole number from 1 to 2,147,483,648"),
    ("n", "-4", "GEMM N must be a whole number"),
    ("k", "abc", "GEMM K must be a whole number"),
    ("m", "4096.5", "GEMM M must be a whole number"),
    ("k", "1e12", "GEMM K must be a whole number from 1 to 2,147,483,648"),
    ("own_intensity", "0", "above 0"),
    ("own_intensity", "NaN", "above 0"),
    ("own_intensity", "1e9", "off this chart's axis"),
    ("intensity", "-3", "above 0"),
    ("intensity", "1e7", "The axis runs from"),
])
def test_invalid_entries_show_a_message_and_leave_the_chart(sites, contexts, field, value, message):
    page = contexts.page(sites.real_url + "roofline/")
    wait_for_charts(page)
    chart_id, form = _explorer(page)
    view = f"window.__ainotesRooflineView('{chart_id}')"
    signals = "['intensity', 'own_on', 'own_x', 'own_label', 'precision']"
    for name, good in (("m", "64"), ("n", "64"), ("k", "64")):
        form.locator(f"input[name={name}]").fill(good)
    form.locator("button[value=gemm]").click()
    before = page.evaluate(f"{signals}.map(s => {view}.signal(s))")
    form.locator(f"input[name={field}]").fill(value)
    if field == "intensity":
        form.locator("input[name=intensity]").press("Enter")
    else:
        form.locator("button[value=intensity]" if field == "own_intensity" else "button[value=gemm]").click()
    alert = form.locator("[role=alert]", has_text=message)
    expect(alert).to_have_count(1)
    expect(alert).to_contain_text("The chart is unchanged.")
    assert page.evaluate(f"{signals}.map(s => {view}.signal(s))") == before
    assert contexts.watch.problems() == [], "\n".join(contexts.watch.problems())


def test_the_explorer_works_from_the_keyboard(sites, contexts):
    page = contexts.page(sites.real_url + "roofline/")
    wait_for_charts(page)
    chart_id, form = _explorer(page)
    view = f"window.__ainotesRooflineView('{chart_id}')"
    form.locator("select[name=precision]").focus()
    page.keyboard.press("ArrowDown")  # BF16 → FP16
    expect(form.locator("[data-role=readout] p")).to_contain_text("FP16 matrix units")
    assert page.evaluate(f"{view}.signal('precision')") == "tensor:fp16"
    page.keyboard.press("Tab")  # the GPUs select
    page.keyboard.press("Tab")  # how the kernels are typed
    assert page.evaluate("document.activeElement.name") == "kmode"
    page.keyboard.press("Tab")  # the sparsity box
    page.keyboard.press("Space")
    assert page.evaluate(f"{view}.signal('sparsity')") is True
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.name") == "intensity"
    page.keyboard.press("Control+A")
    page.keyboard.type("42")
    page.keyboard.press("Enter")
    expect(form.locator("[data-role=readout] p")).to_contain_text("At 42 FLOP/byte")
    page.keyboard.press("Tab")  # the log slider
    before = page.evaluate(f"{view}.signal('intensity')")
    page.keyboard.press("ArrowRight")
    wait_until(page, f"() => {view}.signal('intensity') > {before}", failure="the slider did not move by keyboard")
    for name, value in (("m", "8"), ("n", "8192"), ("k", "8192")):
        page.keyboard.press("Tab")
        assert page.evaluate("document.activeElement.name") == name
        page.keyboard.type(value)
    page.keyboard.press("Tab")  # type
    page.keyboard.press("Tab")  # Place GEMM
    page.keyboard.press("Enter")
    expect(form.locator("[data-role=own] p")).to_contain_text("Your GEMM 8×8192×8192 bf16")
    # Every control has a visible label.
    unlabelled = page.evaluate("""(id) => [...document.querySelectorAll(
          '#' + id + ' form input, #' + id + ' form select')]
        .filter(el => !(el.closest('label') && el.closest('label').innerText.trim())).map(el => el.name)""", chart_id)
    assert unlabelled == []
    assert contexts.watch.problems() == [], "\n".join(contexts.watch.problems())


def test_batch_slider_crosses_each_ridge_near_its_flop_per_byte(sites, contexts):
    presets = load_presets(REPO / "presets")
    page = contexts.page(sites.real_url + "roofline/")
    wait_for_charts(page)
    chart_id, form = _explorer(page)
    form.locator("input[name=batch_on]").check()
    view = f"window.__ainotesRooflineView('{chart_id}')"
    previous = 0.0
    for exponent in range(15):
        form.locator("input[name=batch]").fill(str(exponent))
        wait_until(page, f"() => {view}.signal('batch_x') > {previous}", failure=f"batch 2**{exponent}: no move")
        intensity = page.evaluate(f"{view}.signal('batch_x')")
        tokens, d = 2**exponent, 8192
        expected = 2 * tokens * 4 * d * d / ((tokens * d + 4 * d * d + tokens * 4 * d) * 2)
        assert intensity == pytest.approx(expected, rel=1e-12)
        previous = intensity
    lines = [line for line in _readout_lines(form, "batch") if "crosses its ridge" in line]
    assert len(lines) == len(presets)
    for preset, line in zip(presets, lines, strict=True):
        tokens = float(re.search(r"at about ([\d.]+) tokens", line).group(1))
        # A weight GEMM's intensity is about its tokens (BF16): the crossing is near the ridge's FLOP/byte.
        assert tokens == pytest.approx(preset.ridge_flop_per_byte(), rel=0.1), line
    assert contexts.watch.problems() == [], "\n".join(contexts.watch.problems())


def test_phone_controls_are_tall_enough_and_text_large_enough(sites, contexts):
    page = contexts.page(sites.real_url + "roofline/", viewport=PHONE)
    wait_for_charts(page)
    short_controls = page.evaluate(f"""() => [...document.querySelectorAll(
          'form.ainotes-explorer input:not([type=checkbox]), form.ainotes-explorer select,'
          + ' form.ainotes-explorer button,'
          + ' form.ainotes-explorer label.ainotes-explorer__check, .ainotes-data summary')]
        .filter(el => el.getClientRects().length && el.getBoundingClientRect().height < {MIN_TOUCH_PX} - 0.5)
        .map(el => el.tagName + '[name=' + el.getAttribute('name') + ']: ' + el.getBoundingClientRect().height)""")
    assert short_controls == []
    small_text = page.evaluate(f"""() => [...document.querySelectorAll('figure.ainotes-chart *')]
        .filter(el => el.getClientRects().length
                      && [...el.childNodes].some(n => n.nodeType === 3 && n.textContent.trim()))
        .filter(el => !el.closest('svg') && parseFloat(getComputedStyle(el).fontSize) < {MIN_TEXT_PX})
        .map(el => el.tagName + '.' + el.className + ': ' + getComputedStyle(el).fontSize)""")
    assert small_text == [], small_text


def test_summary_and_data_table_without_script(sites, contexts):
    presets = load_presets(REPO / "presets")
    page = contexts.page(sites.real_url + "roofline/", java_script_enabled=False)
    figure = page.locator("figure.ainotes-chart").first
    chart_id = figure.get_attribute("id")
    assert figure.locator("form.ainotes-explorer").is_hidden()  # nothing to press without the script
    box = figure.locator(".ainotes-chart__box")
    assert box.get_attribute("role") == "img"
    summary = page.locator(f"#{box.get_attribute('aria-labelledby')}").inner_text()
    for preset in presets:
        assert f"{preset.name}: ridge at {preset.ridge_flop_per_byte():,.0f} FLOP/byte" in summary
    bounds = figure.locator("table.ainotes-kernel-bounds")
    assert bounds.is_visible() and bounds.locator("tbody tr").count() == 6
    data = page.locator(f"#{chart_id}-data")
    data.locator("summary").click()
    assert data.locator("table").is_visible()
    assert data.locator("td", has_text="no FP8 path").count() >= 1


EMBED_HOST = """<!doctype html><html><head><meta charset="utf-8"><title>host</title></head>
<body style="margin:0"><main style="width:700px">{snippet}</main></body></html>"""


def test_embed_snippet_shows_the_whole_chart_and_its_controls_in_a_700px_page(sites, contexts, shared_sites):
    page = contexts.page(sites.real_url + "roofline/")
    wait_for_charts(page)
    # The frame snippet: the <iframe> and the listener that gives it its page's height.
    snippet = page.locator(".ainotes-embed__snippet").nth(1).text_content()
    assert re.search(r"<iframe[^>]*></iframe>", snippet) and "<script>" in snippet
    folder, url = shared_sites.scratch()  # another page of the same origin, outside the shared site
    host = folder / "host-test.html"
    host.write_text(EMBED_HOST.format(snippet=snippet), encoding="utf-8")
    try:
        page.set_viewport_size({"width": 700, "height": 1200})
        page.goto(url + "host-test.html")
        frame = page.frame_locator("iframe")
        frame.locator(".ainotes-chart--live .ainotes-chart__view svg").wait_for()
        inner = page.frames[1]
        wait_until(inner, "() => Math.abs(innerHeight - Math.ceil(document.body.getBoundingClientRect().height)) <= 1",
                   failure="the frame did not take its page's height")
        frame_box = page.locator("iframe").bounding_box()
        extent = inner.evaluate("""() => { const c = document.querySelector('form.ainotes-explorer');
            const v = document.querySelector('.ainotes-chart__view svg');
            return {controls: c.getBoundingClientRect().bottom, controlsTop: c.getBoundingClientRect().top,
                    inputs: c.querySelectorAll('input, select').length, chart: v.getBoundingClientRect().bottom,
                    scroll: document.scrollingElement.scrollHeight, height: window.innerHeight}; }""")
        assert extent["inputs"] >= 3, extent
        assert extent["controls"] <= frame_box["height"] and extent["scroll"] <= extent["height"] + 1, extent
    finally:
        host.unlink()


# -- 4. collective steppers -------------------------------------------------------------------------

STEPPER_JS = """(id) => {
  const s = document.getElementById(id);
  const frames = [...s.querySelectorAll('.ainotes-stepper-frame')];
  const live = s.querySelector('[aria-live]');
  const play = s.querySelector('button[data-action=play]');
  return {
    shown: frames.map((f, i) => f.getClientRects().length ? i : -1).filter(i => i >= 0),
    count: frames.length,
    captions: frames.map(f => f.querySelector('.ainotes-step-caption').textContent.trim()),
    live: live ? live.textContent.trim() : null,
    liveMode: live ? live.getAttribute('aria-live') : null,
    liveVisible: live ? live.getClientRects().length > 0 : false,
    playing: play ? play.getAttribute('aria-pressed') : null,
    focus: document.activeElement === s ? 'stepper'
         : (s.contains(document.activeElement) ? (document.activeElement.dataset.action || 'inside') : 'outside'),
  };
}"""


def _stepper(page: Page, stepper_id: str) -> dict:
    return page.evaluate(STEPPER_JS, stepper_id)


def _expect_frame(page: Page, stepper_id: str, index: int, how: str) -> dict:
    shown_alone = f"(id) => {{ const s = ({STEPPER_JS})(id); return s.shown.length === 1 && s.shown[0] === {index}; }}"
    wait_until(page, shown_alone, stepper_id,
               failure=lambda: f"{how}: expected frame {index + 1} alone, got {_stepper(page, stepper_id)}")
    state = _stepper(page, stepper_id)
    # The caption of the frame shown, read out through a polite live region.
    assert state["liveMode"] == "polite" and state["liveVisible"], state
    assert state["captions"][index] and state["captions"][index] in state["live"], state
    assert f"{index + 1} of {state['count']}" in state["live"], state
    return state


@pytest.fixture
def stepper_page(sites, contexts) -> tuple[Page, str]:
    page = contexts.page()
    page.clock.install()
    page.goto(sites.real_url + "collectives/")
    wait_for_charts(page)
    return page, page.locator(".ainotes-stepper").first.get_attribute("id")


def test_stepper_buttons_by_mouse(stepper_page, contexts):
    page, sid = stepper_page
    stepper = page.locator(f"#{sid}")
    first = _expect_frame(page, sid, 0, "on load")
    assert first["count"] >= 3 and first["captions"][0] != first["captions"][1]
    assert first["playing"] == "false"
    assert stepper.locator("button[data-action=prev]").is_disabled()
    stepper.locator("button[data-action=next]").click()
    _expect_frame(page, sid, 1, "after Next")
    stepper.locator("button[data-action=prev]").click()
    _expect_frame(page, sid, 0, "after Previous")

    stepper.locator("button[data-action=play]").click()
    assert _stepper(page, sid)["playing"] == "true"
    page.clock.run_for(1_900)
    assert _stepper(page, sid)["shown"][0] >= 1, "Play did not advance"
    page.clock.run_for(1_800 * first["count"])
    last = _expect_frame(page, sid, first["count"] - 1, "after playing through")
    assert last["playing"] == "false", "Play should stop on the final state"
    assert stepper.locator("button[data-action=next]").is_disabled()
    assert contexts.watch.problems() == [], "\n".join(contexts.watch.problems())


def test_stepper_buttons_by_keyboard(stepper_page, contexts):
    page, sid = stepper_page
    page.locator(f"#{sid}").focus()
    assert _stepper(page, sid)["focus"] == "stepper"
    page.keyboard.press("Tab")  # Previous is disabled on the first frame, so Play comes first
    assert _stepper(page, sid)["focus"] == "play"
    page.keyboard.press("Tab")
    assert _stepper(page, sid)["focus"] == "next"
    page.keyboard.press("Enter")
    _expect_frame(page, sid, 1, "Enter on Next")
    page.keyboard.press("Space")
    _expect_frame(page, sid, 2, "Space on Next")
    page.keyboard.press("Shift+Tab")
    page.keyboard.press("Shift+Tab")
    assert _stepper(page, sid)["focus"] == "prev"
    page.keyboard.press("Space")
    _expect_frame(page, sid, 1, "Space on Previous")
    page.keyboard.press("Enter")
    state = _expect_frame(page, sid, 0, "Enter on Previous")
    # Previous is now disabled; the keyboard user must not be thrown out of the stepper.
    assert state["focus"] != "outside", state

    page.locator(f"#{sid}").focus()
    page.keyboard.press("Shift+Tab")  # out of the stepper, then back: Tab reaches Play
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")
    assert _stepper(page, sid)["focus"] == "play"
    page.keyboard.press("Enter")
    assert _stepper(page, sid)["playing"] == "true"
    page.clock.run_for(1_900)
    assert _stepper(page, sid)["shown"][0] >= 1, "Play (keyboard) did not advance"
    page.keyboard.press("Space")
    assert _stepper(page, sid)["playing"] == "false", "Space on Pause should stop"
    assert contexts.watch.problems() == [], "\n".join(contexts.watch.problems())


def test_stepper_arrow_keys(stepper_page, contexts):
    page, sid = stepper_page
    count = _stepper(page, sid)["count"]
    page.locator(f"#{sid}").focus()
    page.keyboard.press("ArrowRight")
    _expect_frame(page, sid, 1, "ArrowRight")
    page.keyboard.press("ArrowLeft")
    _expect_frame(page, sid, 0, "ArrowLeft")
    page.keyboard.press("ArrowLeft")
    _expect_frame(page, sid, 0, "ArrowLeft on the first frame")
    page.keyboard.press("End")
    _expect_frame(page, sid, count - 1, "End")
    page.keyboard.press("Home")
    _expect_frame(page, sid, 0, "Home")
    assert contexts.watch.problems() == [], "\n".join(contexts.watch.problems())


# Every element's running animations and transitions: name and duration (seconds).
MOTION_JS = """(selector) => {
  const moving = [];
  for (const root of document.querySelectorAll(selector)) {
    for (const el of [root, ...root.querySelectorAll('*')]) {
      const cs = getComputedStyle(el);
      const seconds = v => Math.max(...v.split(',').map(s => parseFloat(s) * (s.trim().endsWith('ms') ? 0.001 : 1)));
      if (cs.animationName !== 'none' && seconds(cs.animationDuration) > 0)
        moving.push(`${el.tagName}.${el.getAttribute('class')}: animation ${cs.animationName} ${cs.animationDuration}`);
      if (cs.transitionProperty !== 'none' && seconds(cs.transitionDuration) > 0)
        moving.push(`${el.tagName}.${el.getAttribute('class')}: transition ${cs.transitionProperty} `
                    + cs.transitionDuration);
    }
  }
  return moving;
}"""


@pytest.mark.parametrize("motion", ["reduce", "no-preference"])
def test_reduced_motion_stops_every_animation(sites, contexts, motion):
    page = contexts.page(sites.real_url + "collectives/", reduced_motion=motion)
    wait_for_charts(page)
    for stepper in page.locator(".ainotes-stepper").all():
        stepper.locator("button[data-action=next]").click()
    moving_frames = page.evaluate(MOTION_JS, ".ainotes-stepper-frames")
    moving_svgs = {}
    for chart in (c for c in _manifest(sites.real_dir) if c["kind"] == "collective"):
        page.goto(sites.real_url + "embed/" + chart["files"]["svg"])
        moving_svgs[chart["id"]] = page.evaluate(MOTION_JS, "svg")
    if motion == "reduce":
        assert moving_frames == []
        assert all(moving == [] for moving in moving_svgs.values()), moving_svgs
    else:
        # The same checks see the motion that a reader who has not asked for less gets.
        assert moving_frames, "expected the frame fade without reduced motion"
        assert all(moving_svgs.values()), moving_svgs
    assert contexts.watch.problems() == [], "\n".join(contexts.watch.problems())


# -- 5. light/dark and instant navigation -----------------------------------------------------------

# A fingerprint of each chart's colours as drawn now: text fills of the live Vega view, or the computed
# fills and strokes of the text, arrows and empty boxes in a stepper's visible frame.
COLOURS_JS = """() => Object.fromEntries([
  ...[...document.querySelectorAll('figure.ainotes-chart')].map(f => [f.id,
      [...f.querySelectorAll('.ainotes-chart__view svg text')].map(t => t.getAttribute('fill')).join(',')
      + '|' + getComputedStyle(f.querySelector('.ainotes-chart__view svg')).backgroundColor]),
  ...[...document.querySelectorAll('.ainotes-stepper')].map(s => {
      const frame = [...s.querySelectorAll('.ainotes-stepper-frame')].find(f => f.getClientRects().length);
      const svg = frame.querySelector('svg');
      const parts = [...svg.querySelectorAll('text, .t, .ah, .n')].map(el => getComputedStyle(el))
        .map(cs => cs.fill + ' ' + cs.stroke);
      return [s.id, [...new Set(parts)].sort().join(',')];
  }),
])"""


@pytest.mark.parametrize("path", ["roofline/", "collectives/"])
def test_palette_toggle_rethemes_every_chart(sites, contexts, path):
    page = contexts.page(sites.real_url + path, color_scheme="light")
    wait_for_charts(page)
    assert page.locator("body").get_attribute("data-md-color-scheme") == "default"
    roofline = page.locator("figure.ainotes-chart").first
    if path == "roofline/":
        roofline.locator("select[name=preset]").select_option("h100")
    light = page.evaluate(COLOURS_JS)
    assert light

    page.locator('label[for="__palette_1"]').click()
    assert page.locator("body").get_attribute("data-md-color-scheme") == "slate"
    wait_until(page, f"""(light) => {{ const now = ({COLOURS_JS})();
                 return Object.keys(light).every(id => now[id] && now[id] !== light[id]); }}""", light,
               failure=lambda: f"charts kept their light colours: {light} → {page.evaluate(COLOURS_JS)}")
    wait_for_charts(page)
    if path == "roofline/":
        # The reader's choice survives the re-render.
        assert roofline.locator("select[name=preset]").input_value() == "h100"
    page.locator('label[for="__palette_0"]').click()
    wait_until(page, f"(light) => JSON.stringify(({COLOURS_JS})()) === JSON.stringify(light)", light,
               failure=lambda: f"back to light, charts differ: {light} → {page.evaluate(COLOURS_JS)}")
    assert contexts.watch.problems() == [], "\n".join(contexts.watch.problems())


def test_instant_navigation_renders_charts(sites, contexts):
    page = contexts.page()
    # Material intercepts link clicks only once it has read sitemap.xml; a click before that is an
    # ordinary page load, so the test waits for the sitemap as a reader's second click would.
    with page.expect_response(lambda response: response.url.endswith("/sitemap.xml")) as sitemap:
        page.goto(sites.real_url)
    assert sitemap.value.ok, f"sitemap.xml: HTTP {sitemap.value.status}"
    sitemap.value.finished()
    page.wait_for_load_state("networkidle")  # and has had half a second of quiet to parse it
    page.evaluate("window.__ainotesNoReload = 'kept'")
    nav = page.locator("nav.md-nav--primary")
    for name, path in (("Roofline", "roofline/"), ("Collectives", "collectives/")):
        nav.get_by_role("link", name=name, exact=True).first.click()
        page.wait_for_url(sites.real_url + path)
        page.locator("figure.ainotes-chart, .ainotes-stepper").first.wait_for(state="attached")
        wait_for_charts(page)
        assert page.evaluate("window.__ainotesNoReload") == "kept", f"{path}: the page was reloaded"

    assert contexts.watch.problems() == [], "\n".join(contexts.watch.problems())


# -- 6. phones: nothing scrolls sideways --------------------------------------------------------------

OVERFLOW_JS = """() => {
  const vw = document.documentElement.clientWidth;
  const scroller = document.scrollingElement;
  // A stepper frame wider than a phone scrolls inside its own box (.ainotes-stepper-figure) rather than shrink.
  const wide = [...document.querySelectorAll('figure.ainotes-chart, .ainotes-chart svg, .ainotes-stepper, '
      + '.ainotes-stepper-figure, .ainotes-chart__controls, .ainotes-coll-table-wrap, .ainotes-downloads')]
    .filter(el => el.getClientRects().length)
    .map(el => [el, el.getBoundingClientRect()])
    .filter(([el, r]) => r.left < -0.5 || r.right > vw + 0.5)
    .map(([el, r]) => `${el.tagName}.${el.getAttribute('class')} spans ${r.left.toFixed(1)}..${r.right.toFixed(1)}`);
  return {scrollWidth: scroller.scrollWidth, clientWidth: scroller.clientWidth, wide};
}"""


def test_no_page_scrolls_sideways_on_a_phone(sites, contexts):
    problems = {}
    page = contexts.page(viewport=PHONE)
    for path in site_pages(sites.real_dir):
        page.goto(sites.real_url + path)
        wait_for_charts(page)
        state = page.evaluate(OVERFLOW_JS)
        if state["scrollWidth"] > state["clientWidth"] or state["wide"]:
            problems[path or "/"] = state
    assert not problems, json.dumps(problems, indent=1)
    assert contexts.watch.problems() == [], "\n".join(contexts.watch.problems())


# -- 7. standalone embeds from file:// ----------------------------------------------------------------

EMBED_READY_JS = """() => {
  const live = document.querySelector('.ainotes-chart--live .ainotes-chart__view svg');
  const stepper = document.querySelector('.ainotes-stepper[data-ainotes-ready]');
  const svg = live || (stepper && [...stepper.querySelectorAll('svg')].find(s => s.getClientRects().length));
  return !!svg && svg.getBoundingClientRect().width > 0 && svg.getBoundingClientRect().height > 0;
}"""


def test_standalone_embeds_work_offline_from_file(sites, file_contexts):
    charts = _manifest(sites.real_dir)
    assert charts
    page = file_contexts.page()
    for chart in charts:
        path = sites.real_dir / "embed" / chart["files"]["html"]
        page.goto(path.as_uri())
        wait_until(page, EMBED_READY_JS, failure=f"{path.name}: no chart rendered")
    assert file_contexts.watch.problems() == [], "\n".join(file_contexts.watch.problems())


# -- 8. screenshots for a person ----------------------------------------------------------------------


@pytest.mark.screenshots  # the scheme each follows: test_a11y; what each loads and logs: the first test here
@pytest.mark.parametrize("viewport", [DESK, PHONE], ids=["desk", "phone"])
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_screenshots_of_chart_pages(sites, contexts, scheme, viewport):
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    width = "desk" if viewport == DESK else "phone"
    page = contexts.page(viewport=viewport, color_scheme=scheme)
    for path in ("roofline/", "collectives/"):
        page.goto(sites.real_url + path)
        wait_for_charts(page)
        expected = "slate" if scheme == "dark" else "default"
        # Material follows the system preference until the reader picks a scheme.
        assert page.locator("body").get_attribute("data-md-color-scheme") == expected
        target = SCREENSHOTS / f"{path.strip('/')}-{scheme}-{width}.png"
        page.screenshot(path=str(target), full_page=True)
        assert target.read_bytes().startswith(b"\x89PNG")
    assert contexts.watch.problems() == [], "\n".join(contexts.watch.problems())


@pytest.mark.parametrize(("scheme", "width"), [
    # The states it reaches are checked in one pairing in `make test`; the others only add pictures.
    pytest.param(scheme, width, id=f"{scheme}-{width}",
                 marks=() if (scheme, width) == ("light", "desk") else pytest.mark.screenshots)
    for scheme in ("light", "dark") for width in WIDTHS
])
def test_screenshots_of_explorer_states(sites, contexts, scheme, width):
    """The explorer's figure in each state a reader reaches, for a person to look at."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page = contexts.page(sites.real_url + "roofline/", viewport=WIDTHS[width], color_scheme=scheme)
    wait_for_charts(page)
    chart_id, form = _explorer(page)
    figure = page.locator(f"#{chart_id}")

    def shot(state: str) -> None:
        target = SCREENSHOTS / f"explorer-{state}-{scheme}-{width}.png"
        figure.screenshot(path=str(target))
        assert target.read_bytes().startswith(b"\x89PNG")

    shot("opening")
    form.locator("select[name=precision]").select_option("tensor:fp8")
    form.locator("input[name=sparsity]").check()
    for name, value in (("m", "4096"), ("n", "4096"), ("k", "4096")):
        form.locator(f"input[name={name}]").fill(value)
    form.locator("select[name=dtype]").select_option("fp8")
    form.locator("button[value=gemm]").click()
    form.locator("input[name=batch_on]").check()
    form.locator("input[name=batch]").fill("9")
    expect(form.locator("[data-role=batch] p")).to_contain_text("512 tokens")
    shot("fp8-gemm-batch")
    form.locator("select[name=preset]").select_option("a100")
    form.locator("input[name=m]").fill("0")
    form.locator("button[value=gemm]").click()
    expect(form.locator("[data-role=own-message]")).to_contain_text("The chart is unchanged.")
    shot("a100-invalid")
    assert contexts.watch.problems() == [], "\n".join(contexts.watch.problems())
