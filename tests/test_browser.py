"""The built site in a real browser: Debian's chromium driven by Playwright (never a browser download).

One session builds the real site (served under the sub-path ``/sub/``, as GitHub Pages would serve a
project site) and a small fixture site (``/fixture/``, with a preset that has no 2:4 sparse path), then
serves both from one ``http.server`` thread. Every request that leaves that origin is aborted and
recorded. Screenshots for a person to look at land in ``artifacts/screenshots/`` (git-ignored).
"""

from __future__ import annotations

import json
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest
from playwright.sync_api import BrowserContext, Page

from ainotes.hardware import load_presets
from browser_support import (
    DESK, PHONE, WAIT_MS, StaticServer, Watch, file_only, guard_requests, same_origin,
    site_pages, wait_for_charts, wait_until,
)
from sitebuild import REPO, copy_real_project, make_fixture, run_build

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
    real_url: str  # the real site, under /sub/
    real_dir: Path
    fixture_url: str  # the fixture site, under /fixture/
    fixture_dir: Path
    fixture_presets_dir: Path


@pytest.fixture(scope="session")
def sites(tmp_path_factory) -> Sites:
    work = tmp_path_factory.mktemp("browser")
    root = work / "root"
    root.mkdir()
    server = StaticServer(root).start()
    real_project = copy_real_project(work / "real")
    fixture_project = make_fixture(work / "fixture", FIXTURE_PAGES)
    site_url = f"{server.origin}/sub/"
    # Both builds at once: each spends most of its time in its own process.
    with ThreadPoolExecutor(max_workers=2) as pool:
        real = pool.submit(run_build, real_project, root / "sub", env={"AINOTES_SITE_URL": site_url})
        fixture = pool.submit(run_build, fixture_project, root / "fixture")
        real_build, fixture_build = real.result(), fixture.result()
    assert real_build.returncode == 0, real_build.output
    assert fixture_build.returncode == 0, fixture_build.output
    yield Sites(server.origin, site_url, root / "sub", f"{server.origin}/fixture/", root / "fixture",
                fixture_project / "presets")
    server.stop()


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
    return {id: f.id, height: f.getBoundingClientRect().height, visibleStills: stills.length,
            svgWidth: svg.width, svgHeight: svg.height};
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
    return {id: f.id, height: f.getBoundingClientRect().height, visibleStills: stills.length,
            viewWidth: svg.width, viewHeight: svg.height, boxWidth: box.width, boxHeight: box.height};
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
            if abs(after["height"] - before["height"]) > LAYOUT_TOLERANCE_PX:
                problems.append(f"{where}: the figure's height changes from {before['height']:.1f} px (static) "
                                f"to {after['height']:.1f} px (live)")
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


# -- 3. the roofline explorer's controls change what is drawn ----------------------------------------

# The numbers of the view's ridge labels ("295 FLOP/B"), and the readout's lines.
RIDGE_LABELS_JS = """(id) => [...document.querySelectorAll('#' + id + ' .ainotes-chart__view svg text')]
  .map(t => t.textContent.match(/^([\\d,.]+) FLOP\\/B$/)).filter(Boolean)
  .map(m => parseFloat(m[1].replace(/,/g, '')))"""
RIDGES_NEAR_JS = f"""([id, expected]) => {{
  const seen = ({RIDGE_LABELS_JS})(id).sort((a, b) => a - b);
  const want = [...expected].sort((a, b) => a - b);
  return seen.length === want.length && seen.every((v, i) => Math.abs(v - want[i]) <= Math.max(0.5, 0.005 * want[i]));
}}"""
VIEW_TEXTS_JS = ("(id) => [...document.querySelectorAll('#' + id + ' .ainotes-chart__view svg text')]"
                 ".map(t => t.textContent)")
FLOPS_UNITS = {"GFLOP/s": 1e9, "TFLOP/s": 1e12, "PFLOP/s": 1e15, "EFLOP/s": 1e18}


def _ridges_are(page: Page, chart_id: str, expected: list[float], what: str) -> None:
    wait_until(page, RIDGES_NEAR_JS, [chart_id, expected],
               failure=lambda: f"{what}: expected ridge labels ≈ {expected}, "
                               f"the view shows {page.evaluate(RIDGE_LABELS_JS, chart_id)}")


def test_roofline_preset_and_sparsity_move_the_ridge_label(sites, contexts):
    h100 = {p.id: p for p in load_presets(REPO / "presets")}["h100"]
    assert h100.structured_sparsity
    page = contexts.page(sites.real_url + "roofline/")
    wait_for_charts(page)
    chart_id = page.locator("figure.ainotes-chart").first.get_attribute("id")
    figure = page.locator(f"#{chart_id}")
    assert not figure.locator("input[name=sparsity]").is_checked()

    figure.locator("select[name=preset]").select_option("h100")
    _ridges_are(page, chart_id, [h100.ridge_flop_per_byte(False)], "H100 chosen, dense")
    figure.locator("input[name=sparsity]").check()
    _ridges_are(page, chart_id, [h100.ridge_flop_per_byte(True)], "H100 chosen, 2:4 sparse")
    assert h100.ridge_flop_per_byte(True) == pytest.approx(2 * h100.ridge_flop_per_byte(False))
    figure.locator("input[name=sparsity]").uncheck()
    _ridges_are(page, chart_id, [h100.ridge_flop_per_byte(False)], "H100 chosen, sparse unticked")
    assert contexts.watch.problems() == [], "\n".join(contexts.watch.problems())


def test_roofline_sparsity_leaves_a_preset_without_a_sparse_path_alone(sites, contexts):
    presets = {p.id: p for p in load_presets(sites.fixture_presets_dir)}
    plain, h100 = presets["plain"], presets["h100"]
    assert not plain.structured_sparsity and h100.structured_sparsity
    page = contexts.page(sites.fixture_url)
    wait_for_charts(page)
    figure = page.locator("#fixture-roofline")

    figure.locator("select[name=preset]").select_option("plain")
    _ridges_are(page, "fixture-roofline", [plain.ridge_flop_per_byte(False)], "plain chosen, dense")
    figure.locator("input[name=sparsity]").check()
    # Back to all presets: the sparse H100 label proves the toggle took effect; plain's stays put.
    figure.locator("select[name=preset]").select_option("*")
    _ridges_are(page, "fixture-roofline", [plain.ridge_flop_per_byte(False), h100.ridge_flop_per_byte(True)],
                "all presets, 2:4 sparse")
    assert plain.ridge_flop_per_byte(True) == plain.ridge_flop_per_byte(False)
    assert contexts.watch.problems() == [], "\n".join(contexts.watch.problems())


def _readout(page: Page, chart_id: str) -> tuple[float, dict[str, tuple[float, str]]]:
    """The readout's intensity (FLOP/byte) and, per preset name, (attainable FLOP/s, bound)."""
    intensity = None
    lines: dict[str, tuple[float, str]] = {}
    for text in page.evaluate(VIEW_TEXTS_JS, chart_id):
        heading = re.fullmatch(r"At the vertical line, ([\d,.]+) FLOP/B:", text)
        if heading:
            intensity = float(heading.group(1).replace(",", ""))
        line = re.fullmatch(r"([\d,.]+) ([A-Z]FLOP/s), (memory|compute)-bound · (.+)", text)
        if line:
            lines[line.group(4)] = (float(line.group(1).replace(",", "")) * FLOPS_UNITS[line.group(2)], line.group(3))
    assert intensity is not None, page.evaluate(VIEW_TEXTS_JS, chart_id)
    return intensity, lines


@pytest.mark.parametrize("log_intensity", [1.0, 3.0])
def test_roofline_slider_moves_the_readout(sites, contexts, log_intensity):
    presets = load_presets(REPO / "presets")
    page = contexts.page(sites.real_url + "roofline/")
    wait_for_charts(page)
    chart_id = page.locator("figure.ainotes-chart").first.get_attribute("id")
    slider = page.locator(f"#{chart_id} input[name=log_intensity]")
    heading_js = f"""(id) => ({VIEW_TEXTS_JS})(id).find(t => t.startsWith('At the vertical line'))"""
    before = page.evaluate(heading_js, chart_id)
    assert float(slider.input_value()) != log_intensity
    slider.fill(f"{log_intensity:g}")
    wait_until(page, f"([id, before]) => ({heading_js})(id) !== before", [chart_id, before],
               failure=lambda: f"the readout still says {before!r} after moving the slider")

    at = 10**log_intensity
    intensity, lines = _readout(page, chart_id)
    assert intensity == pytest.approx(at, rel=0.005)
    assert set(lines) == {p.name for p in presets}
    for preset in presets:
        attainable = min(preset.peak_flops_per_s(), preset.memory_bandwidth_bytes_per_s * at)
        bound = "memory" if at < preset.ridge_flop_per_byte() else "compute"
        assert lines[preset.name][0] == pytest.approx(attainable, rel=0.005), preset.id
        assert lines[preset.name][1] == bound, preset.id
    assert contexts.watch.problems() == [], "\n".join(contexts.watch.problems())


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
    page = contexts.page(sites.real_url)
    page.wait_for_load_state("load")
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
  const wide = [...document.querySelectorAll('figure.ainotes-chart, .ainotes-chart svg, .ainotes-stepper, '
      + '.ainotes-stepper svg, .ainotes-chart__controls, .ainotes-coll-table-wrap, .ainotes-downloads')]
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
  const live = document.querySelector('.ainotes-standalone__view svg');
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
