"""The collective stepper's controls in a real browser: schedule switch, rank count, the ring's byte counts.

Each test opens a standalone stepper page (``ainotes.charts.collective.standalone_html``) from a file,
so no site build is needed; every request leaving the file is aborted and recorded. The browser is
the session's (``conftest.browser``). The frames the
script draws for a rank count must match what the Python renderer draws for it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page

from ainotes.charts.collective import frame_svg, standalone_html
from ainotes.charts.figure import VegaFigure
from ainotes.core.collectives import simulate
from ainotes.html import embed
from browser_support import DESK, PHONE, WAIT_MS, Watch, file_only, guard_requests
from sitebuild import REPO

pytestmark = pytest.mark.browser

SCREENSHOTS = REPO / "artifacts" / "screenshots"


@pytest.fixture
def open_stepper(browser: Browser, tmp_path: Path) -> Iterator:
    watch = Watch()
    contexts = []

    def open_page(op: str, ranks: int = 4, *, viewport: dict = DESK, scheme: str = "light") -> Page:
        path = tmp_path / f"{op}-{ranks}-{len(contexts)}.html"
        path.write_text(standalone_html(simulate(op, ranks)), encoding="utf-8")
        context = browser.new_context(viewport=viewport, color_scheme=scheme)
        context.set_default_timeout(WAIT_MS)
        guard_requests(context, file_only, watch)
        contexts.append(context)
        page = watch.attach(context.new_page())
        page.goto(path.as_uri())
        page.wait_for_selector(".ainotes-stepper[data-ainotes-ready]")
        return page

    yield open_page
    for context in contexts:
        context.close()
    assert watch.problems() == []


def visible_frame(page: Page):
    return page.locator(".ainotes-stepper-frame:not([hidden])")


def counter(page: Page) -> str:
    return page.inner_text(".ainotes-stepper-counter")


def box_texts(svg_markup: str) -> list[str]:
    """What the boxes and counts say, in document order: the picture's content, without its geometry."""
    return re.findall(r">([^<>]+)</(?:text|tspan)>", svg_markup)


def test_schedule_switch_draws_the_ring_and_counts_bytes_per_link(open_stepper) -> None:
    page = open_stepper("all-reduce")
    assert counter(page) == "Frame 1 of 5"
    page.select_option('[data-control="schedule"]', "ring")
    assert counter(page) == "Frame 1 of 9"
    assert page.get_attribute(".ainotes-stepper", "data-variant") == "ring-4"
    sent_on = visible_frame(page).locator("text.lc")
    assert sent_on.all_text_contents() == ["0 × S/4"] * 4
    for step in range(1, 7):
        page.click(".ainotes-stepper-next")
        frame = visible_frame(page)
        if step <= 3 or step >= 5:  # frame 5 is the state between the two halves
            assert frame.locator("path.t").count() == 4, "every rank sends one chunk to the next"
        expected = step if step <= 3 else step - 1
        assert frame.locator("text.lc").all_text_contents() == [f"{expected} × S/4"] * 4
    page.keyboard.press("End")
    assert counter(page) == "Frame 9 of 9"
    assert visible_frame(page).locator("text.lc").all_text_contents() == ["6 × S/4"] * 4
    live = page.inner_text(".ainotes-stepper-live")
    assert "6 × S/4 = 2(n−1)/n · S, the bus factor" in live


@pytest.mark.parametrize(("op", "schedule", "ranks"), [
    ("all-reduce", "ring", 8), ("reduce-scatter", "ring", 3), ("all-gather", "ring", 5),
    ("all-to-all", "logical", 6), ("broadcast", "logical", 2),
])
def test_frames_drawn_in_the_browser_match_the_python_renderer(open_stepper, op, schedule, ranks) -> None:
    page = open_stepper(op)
    page.select_option('[data-control="ranks"]', str(ranks))
    if schedule == "ring":
        page.select_option('[data-control="schedule"]', "ring")
    run = simulate(op, ranks, schedule=schedule)
    assert counter(page) == f"Frame 1 of {len(run.frames)}"
    svgs = page.eval_on_selector_all(".ainotes-stepper-frame svg", "nodes => nodes.map(n => n.outerHTML)")
    assert len(svgs) == len(run.frames)
    for index, drawn in enumerate(svgs):
        expected = frame_svg(run, index, standalone=False)
        assert box_texts(drawn)[1:] == box_texts(expected)[1:], index  # [0]: the title, named per page
        for mark in ('class="k s"', 'class="n"', 'class="t"', 'class="lc"'):
            assert drawn.count(mark) == expected.count(mark), (index, mark)
        assert re.search(r'viewBox="([^"]+)"', drawn)[1] == re.search(r'viewBox="([^"]+)"', expected)[1]


def test_rank_control_offers_two_to_eight_and_keeps_the_schedule(open_stepper) -> None:
    page = open_stepper("reduce-scatter")
    options = page.eval_on_selector('[data-control="ranks"]', "s => [...s.options].map(o => o.value)")
    assert options == [str(n) for n in range(2, 9)]
    page.select_option('[data-control="schedule"]', "ring")
    page.select_option('[data-control="ranks"]', "2")
    assert page.get_attribute(".ainotes-stepper", "data-variant") == "ring-2"
    assert counter(page) == "Frame 1 of 3"
    assert page.get_attribute(".ainotes-stepper", "aria-label") == "Reduce-scatter across 2 ranks"
    page.select_option('[data-control="schedule"]', "logical")
    assert page.get_attribute(".ainotes-stepper", "data-variant") == "logical-2"


@pytest.mark.parametrize("op", ["all-reduce", "scatter"])
def test_the_before_and_after_table_follows_the_rank_count(open_stepper, op) -> None:
    page = open_stepper(op)
    rows = page.locator(".ainotes-coll-table tbody tr")
    assert rows.count() == 4
    page.select_option('[data-control="ranks"]', "7")
    assert rows.count() == 7
    run = simulate(op, 7)
    first_after = page.locator(".ainotes-coll-table tbody tr").last.locator("td").last.inner_text()
    last_rank = run.frames[-1].buffers[6]
    assert first_after.split() == " ".join(
        "—" if chunk is None else f"{chunk.label} = {chunk.value:g}" for chunk in last_rank).split()
    assert "at n = 7" in page.inner_text(".ainotes-coll-cost") or op == "scatter"
    assert page.locator(".ainotes-coll-table caption").inner_text().startswith(run.title)
    if op == "all-reduce":  # the schedule changes the picture, not what each rank ends with
        page.select_option('[data-control="schedule"]', "ring")
        assert rows.count() == 7
    page.select_option('[data-control="ranks"]', "4")
    assert rows.count() == 4
    assert page.locator(".ainotes-coll-table-wrap").count() == 1


def test_ops_without_a_ring_picture_offer_ranks_only(open_stepper) -> None:
    page = open_stepper("broadcast")
    assert page.locator('[data-control="schedule"]').count() == 0
    page.select_option('[data-control="ranks"]', "7")
    assert counter(page) == f"Frame 1 of {len(simulate('broadcast', 7).frames)}"


def test_play_runs_through_a_new_rank_count(open_stepper) -> None:
    page = open_stepper("all-gather")
    page.select_option('[data-control="schedule"]', "ring")
    page.select_option('[data-control="ranks"]', "3")
    page.click(".ainotes-stepper-play")
    page.wait_for_function("() => document.querySelector('.ainotes-stepper-counter').textContent === 'Frame 4 of 4'",
                           timeout=WAIT_MS)
    assert page.get_attribute(".ainotes-stepper-play", "aria-pressed") == "false"


# The smallest text a reader sees in the shown frame, in CSS pixels: each text's font size times the
# scale its SVG is drawn at; and how wide that frame is drawn against the box it sits in.
SMALLEST_TEXT_JS = """(root) => {
  const svg = root.querySelector('.ainotes-stepper-frame:not([hidden]) svg');
  let smallest = Infinity, which = '';
  for (const t of svg.querySelectorAll('text')) {
    const px = parseFloat(getComputedStyle(t).fontSize) * svg.getScreenCTM().a;
    if (px < smallest) { smallest = px; which = t.textContent; }
  }
  const box = svg.parentNode;
  return {smallest, which, drawn: svg.getBoundingClientRect().width, box: box.clientWidth,
          scrolls: box.scrollWidth > box.clientWidth + 1, focusable: box.tabIndex === 0,
          hint: !root.querySelector('.ainotes-stepper-hint').hidden};
}"""


@pytest.mark.parametrize("viewport", [PHONE, DESK], ids=["360", "1280"])
@pytest.mark.parametrize(("op", "schedule"), [("all-reduce", "ring"), ("reduce-scatter", "ring"),
                                              ("all-gather", "logical"), ("broadcast", "logical"),
                                              ("all-to-all", "logical")])
def test_at_eight_ranks_every_text_stays_eleven_px_or_more(open_stepper, viewport, op, schedule) -> None:
    page = open_stepper(op, viewport=viewport)
    page.select_option('[data-control="ranks"]', "8")
    if schedule == "ring":
        page.select_option('[data-control="schedule"]', "ring")
    run = simulate(op, 8, schedule=schedule)
    root = page.locator(".ainotes-stepper").element_handle()
    for index in range(len(run.frames)):
        seen = page.evaluate(SMALLEST_TEXT_JS, root)
        assert seen["smallest"] >= 11, (index, seen)
        if viewport is DESK:  # the whole frame fits a desk's column: nothing to scroll
            assert not seen["scrolls"] and not seen["hint"], seen
        else:  # a phone scrolls the frame sideways instead of shrinking it, says so, and lets a keyboard scroll
            assert seen["scrolls"] and seen["hint"] and seen["focusable"], seen
        if index < len(run.frames) - 1:
            page.click(".ainotes-stepper-next")
    assert page.evaluate("() => document.documentElement.scrollWidth") <= viewport["width"]


def test_on_a_phone_the_arrow_keys_scroll_a_focused_wide_frame(open_stepper) -> None:
    page = open_stepper("all-gather", viewport=PHONE)
    page.select_option('[data-control="ranks"]', "8")
    box = visible_frame(page).locator(".ainotes-stepper-figure")
    box.focus()
    page.keyboard.press("ArrowRight")
    page.wait_for_function("() => document.querySelector('.ainotes-stepper-frame:not([hidden]) "
                           ".ainotes-stepper-figure').scrollLeft > 0", timeout=WAIT_MS)
    assert counter(page) == "Frame 1 of 3", "an arrow in the picture scrolls it; it does not step"


def test_four_ranks_fit_a_phone_without_scrolling(open_stepper) -> None:
    page = open_stepper("all-reduce", viewport=PHONE)
    seen = page.evaluate(SMALLEST_TEXT_JS, page.locator(".ainotes-stepper").element_handle())
    assert seen["smallest"] >= 11 and not seen["scrolls"] and not seen["hint"], seen


@pytest.mark.parametrize(("viewport", "scheme"), [
    # 360 px, where sideways scrolling would start, in `make test`; the rest only add pictures.
    pytest.param(PHONE, "light", id="360-light"),
    pytest.param(PHONE, "dark", id="360-dark", marks=pytest.mark.screenshots),
    pytest.param(DESK, "light", id="1280-light", marks=pytest.mark.screenshots),
    pytest.param(DESK, "dark", id="1280-dark", marks=pytest.mark.screenshots),
])
def test_screenshots_of_the_ring_stepper(open_stepper, scheme: str, viewport: dict) -> None:
    page = open_stepper("all-reduce", viewport=viewport, scheme=scheme)
    page.select_option('[data-control="schedule"]', "ring")
    page.select_option('[data-control="ranks"]', "8")
    for _ in range(5):
        page.click(".ainotes-stepper-next")
    width = page.evaluate("() => document.documentElement.scrollWidth")
    assert width <= viewport["width"], "the stepper must not scroll sideways"
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"ring-stepper-{viewport['width']}-{scheme}.png"), full_page=True)


# -- the collective-cost chart: the browser's arithmetic is the core's --------------------------------

def _links():
    from ainotes.presets.links import load_links

    return load_links(REPO / "presets" / "links")


VIEW_DATA_JS = """async ([op, ranks, link]) => {
  const template = document.querySelector('template.ainotes-chart__spec[data-scheme="light"]');
  const spec = JSON.parse(template.content.textContent);
  const view = new vega.View(vega.parse(spec), {renderer: 'none'});
  view.signal('op', op).signal('ranks', ranks).signal('link', link);
  await view.runAsync();
  const out = {lines: [], crosses: [], balance: []};
  for (const name of Object.keys(view._runtime.data)) {
    let rows;
    try { rows = view.data(name); } catch (e) { continue; }
    for (const row of rows || []) {
      if ('log_bytes' in row && 'time' in row) out.lines.push([row.algorithm, row.bytes, row.time]);
      else if ('pair' in row && 'label' in row) out.crosses.push([row.kind, row.pair, row.bytes, row.label]);
      else if ('balance' in row && 'bytes' in row) out.balance.push([row.algorithm, row.balance]);
    }
  }
  view.finalize();
  return out;
}"""


@pytest.mark.parametrize(("op", "ranks", "link_id"), [
    ("all-reduce", 8, "nvlink-4"), ("broadcast", 64, "ib-ndr"), ("all-to-all", 1024, "pcie-4-x16"),
    ("reduce", 2, "nvlink-5"), ("scatter", 16, "ib-hdr"),
])
def test_cost_chart_lines_in_the_browser_equal_the_core(browser: Browser, tmp_path: Path, op, ranks, link_id) -> None:
    from ainotes.charts.cost import cost_spec, size_label
    from ainotes.core import collective_cost as cc

    links = _links()
    (link,) = [candidate for candidate in links if candidate.id == link_id]
    figures = {"bandwidth_bytes_per_s": link.bandwidth_bytes_per_s, "latency_s": link.latency_s}
    path = tmp_path / "cost.html"
    path.write_text(embed.standalone_html(VegaFigure(cost_spec(links), None), title="cost"), encoding="utf-8")
    watch = Watch()
    context = browser.new_context(viewport=DESK)
    guard_requests(context, file_only, watch)
    page = watch.attach(context.new_page())
    page.goto(path.as_uri())
    data = page.evaluate(VIEW_DATA_JS, [op, ranks, link_id])
    context.close()
    assert watch.problems() == []

    assert {row[0] for row in data["lines"]} == set(cc.ALGORITHMS[op])
    assert len(data["lines"]) == len(cc.ALGORITHMS[op]) * 113  # 7 decades, 16 points each, both ends
    for algorithm, size, time in data["lines"]:
        expected = cc.algorithm_time(op, algorithm, ranks, size, **figures).time_s
        assert time == pytest.approx(expected, rel=1e-9), (algorithm, size)
    first = cc.ALGORITHMS[op][0]
    switches = cc.best_algorithm_changes(op, ranks, **figures)
    expected = [("switch", f"{cc.short_title(op, c.faster_below)} → {cc.short_title(op, c.faster_above)}",
                 c.message_bytes) for c in switches]
    expected += [("meet", f"{cc.short_title(op, first)} = {cc.short_title(op, other)}", c.message_bytes)
                 for other in cc.ALGORITHMS[op][1:] for c in cc.crossovers(op, ranks, first, other, **figures)
                 if not any({s.faster_below, s.faster_above} == {first, other}
                            and c.message_bytes == pytest.approx(s.message_bytes, rel=1e-6) for s in switches)]
    expected.sort(key=lambda row: row[2])
    # Layers that share a filtered dataset list its rows once each: compare the distinct rows.
    drawn = sorted({(kind, pair, size, label) for kind, pair, size, label in data["crosses"]},
                   key=lambda row: row[2])
    assert [(kind, pair) for kind, pair, _, _ in drawn] == [(kind, pair) for kind, pair, _ in expected]
    assert [size for _, _, size, _ in drawn] == pytest.approx([size for _, _, size in expected], rel=1e-6)
    # Each label prints its size as the caption does (units.si, three figures).
    for (_, pair, _, label), (_, _, size) in zip(drawn, expected, strict=True):
        assert label == f"{pair} at {size_label(size)}"
    (balance,) = {(algorithm, value) for algorithm, value in data["balance"]}
    assert balance[1] == pytest.approx(cc.latency_bandwidth_balance_bytes(op, first, ranks, **figures), rel=1e-9)


def test_cost_chart_controls_redraw_the_live_view(browser: Browser, tmp_path: Path) -> None:
    from ainotes.charts.cost import cost_spec

    path = tmp_path / "cost.html"
    path.write_text(embed.standalone_html(VegaFigure(cost_spec(_links()), None), title="cost"), encoding="utf-8")
    watch = Watch()
    context = browser.new_context(viewport=PHONE)
    guard_requests(context, file_only, watch)
    page = watch.attach(context.new_page())
    page.goto(path.as_uri())
    live = ".ainotes-chart--live .ainotes-chart__view svg"
    page.wait_for_selector(live)
    page.select_option("select[name='op']", "all-to-all")
    page.wait_for_function(f"() => document.querySelector('{live}').textContent.includes('Bruck')", timeout=WAIT_MS)
    assert page.evaluate("() => document.documentElement.scrollWidth") <= PHONE["width"]
    context.close()
    assert watch.problems() == []
