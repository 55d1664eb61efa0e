"""The roofline explorer's page layout in a real browser (Debian's chromium through Playwright): its form
never covers the plot, its readouts flow in the page, and its kernels' table is a list of cards on a phone.

Every roofline page of the real site, on a phone (360 × 740) and a desk (1280 × 1000), as the page scrolls
past each explorer: the form (the panel of selects and readouts) and the plot's axes (their ticks and
titles, the union of Vega's axis groups) never share a pixel, whatever the scroll position.
"""

from __future__ import annotations

import pytest

from browser_support import PHONE, site_pages, wait_for_charts

pytestmark = pytest.mark.browser

DESK_TALL = {"width": 1280, "height": 1000}

# Viewport boxes of chart `id`'s form and of its plot's axes (ticks, labels and titles included).
BOXES_JS = """(id) => {
  const figure = document.getElementById(id);
  const form = figure.querySelector('form.ainotes-explorer').getBoundingClientRect();
  const axes = [...figure.querySelectorAll('.ainotes-chart__view svg g.role-axis')]
    .map(g => g.getBoundingClientRect()).filter(r => r.width && r.height);
  const union = axes.reduce((u, r) => ({left: Math.min(u.left, r.left), top: Math.min(u.top, r.top),
                                        right: Math.max(u.right, r.right), bottom: Math.max(u.bottom, r.bottom)}),
                            {left: Infinity, top: Infinity, right: -Infinity, bottom: -Infinity});
  return {form: {left: form.left, top: form.top, right: form.right, bottom: form.bottom},
          axes: union, count: axes.length, scrollY: window.scrollY,
          figureTop: figure.getBoundingClientRect().top + window.scrollY,
          figureBottom: figure.getBoundingClientRect().bottom + window.scrollY};
}"""

# Any box inside the form that scrolls in itself (a readout cut to a box with a scroll bar of its own).
SCROLLERS_JS = """(id) => [document.querySelector('#' + id + ' form.ainotes-explorer'),
    ...document.querySelectorAll('#' + id + ' form.ainotes-explorer *')]
  .filter(el => el.getClientRects().length && el.scrollHeight > el.clientHeight + 1
                && ['auto', 'scroll', 'hidden'].includes(getComputedStyle(el).overflowY)
                && el.tagName !== 'SELECT' && el.tagName !== 'INPUT')
  .map(el => el.tagName + '.' + el.className + ': ' + el.clientHeight + ' px showing ' + el.scrollHeight)"""


def _overlap(a: dict, b: dict, viewport: dict) -> float:
    """The area two viewport boxes share on screen, in px²."""
    return max(0.0, min(a["right"], b["right"], viewport["width"]) - max(a["left"], b["left"], 0)) * \
        max(0.0, min(a["bottom"], b["bottom"], viewport["height"]) - max(a["top"], b["top"], 0))


@pytest.fixture(scope="module")
def explorer_pages(real_site) -> list[str]:
    pages = [p for p in site_pages(real_site.site)
             if 'class="ainotes-explorer"' in (real_site.site / p / "index.html").read_text(encoding="utf-8")]
    assert "roofline/" in pages, pages
    return pages


@pytest.mark.parametrize("viewport", [PHONE, DESK_TALL], ids=["360x740", "1280x1000"])
def test_the_explorers_form_never_covers_the_plot_as_the_page_scrolls(browser, real_site, explorer_pages, viewport):
    context = browser.new_context(viewport=viewport)
    page = context.new_page()
    problems, checked = [], 0
    try:
        for path in explorer_pages:
            page.goto(real_site.url + path)
            wait_for_charts(page)
            for chart_id in page.eval_on_selector_all("figure.ainotes-chart:has(form.ainotes-explorer)",
                                                      "fs => fs.map(f => f.id)"):
                page.wait_for_function("(id) => !document.querySelector('#' + id + ' form.ainotes-explorer').hidden",
                                       arg=chart_id)
                first = page.evaluate(BOXES_JS, chart_id)
                step = viewport["height"] // 5
                # From the figure's top entering at the bottom of the screen to its end leaving at the top.
                for y in range(max(0, int(first["figureTop"]) - viewport["height"]), int(first["figureBottom"]), step):
                    page.evaluate("(y) => window.scrollTo(0, y)", y)
                    boxes = page.evaluate(BOXES_JS, chart_id)
                    assert boxes["count"] >= 2, f"{path} {chart_id}: no axes found in the live view"
                    checked += 1
                    shared = _overlap(boxes["form"], boxes["axes"], viewport)
                    if shared > 0:
                        problems.append(f"{path} {chart_id} at scroll {boxes['scrollY']:.0f}: the form covers "
                                        f"{shared:.0f} px² of the plot's axes ({boxes['form']} over {boxes['axes']})")
                scrollers = page.evaluate(SCROLLERS_JS, chart_id)
                problems += [f"{path} {chart_id}: scrolls in itself: {s}" for s in scrollers]
    finally:
        context.close()
    assert checked > 0
    assert problems == [], "\n".join(problems[:20])


# Each kernel row of the chart's bounds table as a phone shows it: its header, then each visible cell as
# "column: text" (the column named by the cell's ::before), and whether the cells stack (one per line).
CARDS_JS = """(id) => [...document.querySelectorAll('#' + id + ' table.ainotes-kernel-bounds tbody tr')]
  .map(tr => {
  const cells = [...tr.querySelectorAll('td')].filter(td => td.getClientRects().length);
  return {head: tr.querySelector('th').innerText.trim(),
          lines: cells.map(td => getComputedStyle(td, '::before').content.replace(/^"|"$/g, '')
                                 + td.innerText.trim().replace(/\\s+/g, ' ')),
          stacked: cells.every((td, i) => i === 0 || td.getBoundingClientRect().top
                                                  >= cells[i - 1].getBoundingClientRect().bottom - 1)};
})"""

WRAP_JS = """(id) => {
  const w = document.querySelector('#' + id + ' table.ainotes-kernel-bounds').closest('.ainotes-table-wrap');
  return {overflow: w.scrollWidth - w.clientWidth, display: getComputedStyle(w.querySelector('td')).display,
          gpus: [...w.querySelectorAll('thead th[data-p]')]
            .map(th => [th.getAttribute('data-p'), th.innerText.trim()])}; }"""


def test_the_kernels_table_is_a_card_per_kernel_at_360_px(browser, real_site):
    context = browser.new_context(viewport=PHONE)
    page = context.new_page()
    try:
        page.goto(real_site.url + "roofline/")
        wait_for_charts(page)
        chart_id = page.locator("figure.ainotes-chart:has(table.ainotes-kernel-bounds)").first.get_attribute("id")
        wrap = page.evaluate(WRAP_JS, chart_id)
        assert wrap["overflow"] <= 1 and wrap["display"] == "block", wrap
        gpus = dict(wrap["gpus"])
        cards = page.evaluate(CARDS_JS, chart_id)
        assert len(cards) >= 2
        for card in cards:
            assert card["stacked"], card
            assert card["lines"][0].startswith("Intensity: ") and "FLOP/byte" in card["lines"][0], card
            # One line per GPU, named by the GPU, saying its bound (or why it has none).
            assert [line.split(": ", 1)[0] for line in card["lines"][1:]] == list(gpus.values()), card
            assert all(line.split(": ", 1)[1] for line in card["lines"][1:]), card
        # The GPU select keeps one GPU's line in each card.
        gpu_id, name = next(iter(gpus.items()))
        page.locator(f"#{chart_id} select[name=preset]").select_option(gpu_id)
        page.wait_for_function("(id) => window.__ainotesVegaCharts.settled(document.getElementById(id))"
                               ".then(() => true)", arg=chart_id)
        page.wait_for_function(f"""(id) => [...document.querySelectorAll(
              '#' + id + ' table.ainotes-kernel-bounds td[data-p]')]
            .filter(td => td.getClientRects().length).every(td => td.getAttribute('data-p') === {gpu_id!r})""",
                               arg=chart_id)
        for card in page.evaluate(CARDS_JS, chart_id):
            assert [line.split(": ", 1)[0] for line in card["lines"]] == ["Intensity", name], card
        # On a desk it is a table again.
        page.set_viewport_size(DESK_TALL)
        assert page.evaluate(WRAP_JS, chart_id)["display"] == "table-cell"
    finally:
        context.close()
