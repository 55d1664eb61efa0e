"""Tables in a real browser: none is cut off at 1280 px, each has a readable form at 360 px, light and dark.

The real site is built with two presets added (an H200 and an MI325X) beside the shipped ones, so a
table that grows a column per GPU, or squeezes one, fails here before a reader sees it. Every table in
the pages' text is checked; the charts' own tables (inside a chart's figure) are the charts' to check.
"""

from __future__ import annotations

import pytest

from browser_support import DESK, PHONE, site_pages

pytestmark = pytest.mark.browser

# A cell is squeezed when a word spills out of it, or when it holds more than a few characters in
# under MIN_COLUMN_PX (three or four characters a line): the links table's sources column was one
# character (about 10 px) wide at 360 px.
MIN_COLUMN_PX = 48
MIN_TEXT_PX = 11

# Every visible table in the page's text (not inside a chart): how far it overflows the box that
# holds it, its narrowest cell that holds more than three characters, and any text under 11 px.
TABLES_JS = """() => [...document.querySelectorAll('.md-content table')]
  .filter(t => t.getClientRects().length && !t.closest('figure'))
  .map(t => {
    const scroller = t.closest('.md-typeset__scrollwrap, .ainotes-table') || t.parentElement;
    // Cells a reader sees (a header row kept only for screen readers is 1 px wide): how many characters
    // each of its lines holds, on average; a squeezed column holds one or two.
    const shown = el => el.getClientRects().length
      && !(el.closest('thead') && el.closest('thead').getBoundingClientRect().width <= 1);
    const cells = [...t.querySelectorAll('th, td')].filter(shown);
    const squeezed = cells.map(c => ({width: c.getBoundingClientRect().width, text: c.innerText.trim().slice(0, 40),
                                      spills: c.scrollWidth > c.clientWidth + 1}))
      .filter(c => (c.text.length > 8 && c.width < MIN_COLUMN_PX) || c.spills);
    const narrowest = squeezed.sort((a, b) => a.width - b.width)[0] || null;
    const small = [...t.querySelectorAll('*')]
      .filter(el => shown(el) && [...el.childNodes].some(n => n.nodeType === 3 && n.textContent.trim()))
      .map(el => parseFloat(getComputedStyle(el).fontSize)).filter(size => size < MIN_TEXT_PX);
    return {
      kind: (t.closest('.ainotes-table') || {className: 'markdown table'}).className,
      overflow: Math.max(scroller.scrollWidth - scroller.clientWidth, t.getBoundingClientRect().right
                         - document.querySelector('.md-content__inner').getBoundingClientRect().right),
      narrowest, small: small.length,
    };
  })""".replace("MIN_COLUMN_PX", str(MIN_COLUMN_PX)).replace("MIN_TEXT_PX", str(MIN_TEXT_PX))


@pytest.fixture(scope="module")
def served(site_with_additions):
    site = site_with_additions.site
    return site_with_additions.url.rstrip("/"), [p for p in site_pages(site)
                                                 if "<table" in (site / p / "index.html").read_text(encoding="utf-8")]


@pytest.mark.parametrize(("viewport", "scheme"), [
    # Both widths and both schemes in `make test`; the other two pairings in the matrix tier.
    pytest.param(DESK, "light", id="1280-light"),
    pytest.param(PHONE, "dark", id="360-dark"),
    pytest.param(PHONE, "light", id="360-light", marks=pytest.mark.matrix),
    pytest.param(DESK, "dark", id="1280-dark", marks=pytest.mark.matrix),
])
def test_no_table_is_cut_off_or_squeezed(browser, served, viewport, scheme) -> None:
    origin, pages = served
    assert pages, "the site has tables"
    context = browser.new_context(viewport=viewport, color_scheme=scheme)
    page = context.new_page()
    problems, seen = [], 0
    try:
        for url in pages:
            page.goto(f"{origin}/{url}")
            for index, table in enumerate(page.evaluate(TABLES_JS)):
                seen += 1
                where = f"{url or '/'} table {index} ({table['kind']})"
                if viewport is DESK and table["overflow"] > 1:
                    problems.append(f"{where}: {table['overflow']:.0f} px wider than its column at 1280 px")
                narrowest = table["narrowest"]
                if viewport is PHONE and narrowest:
                    spills = ", its text spilling out" if narrowest["spills"] else ""
                    problems.append(f"{where}: a {narrowest['width']:.0f} px cell at 360 px{spills}: "
                                    f"{narrowest['text']!r}")
                if table["small"]:
                    problems.append(f"{where}: {table['small']} texts under {MIN_TEXT_PX} px")
    finally:
        context.close()
    assert seen >= 6, "the presets, precision, kernels, MFU and links tables at least"
    assert problems == [], "\n".join(problems)


CARD_JS = """(row) => [row.querySelector('th').innerText.trim(),
  ...[...row.querySelectorAll('td')].filter(td => td.getClientRects().length).map(td =>
     getComputedStyle(td, '::before').content.replace(/^"|"$/g, '') + td.innerText.trim().replace(/\\s+/g, ' '))]"""


def test_at_360_px_each_row_of_a_notes_table_is_a_card_that_names_its_cells(browser, served) -> None:
    origin, _ = served
    context = browser.new_context(viewport=PHONE)
    page = context.new_page()
    try:
        page.goto(f"{origin}/roofline/")
        card = page.locator(".ainotes-precisions tbody tr").filter(has_text="AMD Instinct MI325X").first
        lines = card.evaluate(CARD_JS)
        assert lines[0] == "AMD Instinct MI325X (256 GB HBM3E)[1]"  # the row's one source
        assert "FP8 matrix units, TFLOP/s: 2,614.9 2:4 ×2" in lines
        assert "FP32 matrix units, TFLOP/s: 163.4" in lines  # AMD's FP32 matrix rate, where it prints one
        assert "FP4 matrix units, TFLOP/s: not given" in lines
        assert card.bounding_box()["width"] >= 300  # the card spans the column
        presets = page.locator(".ainotes-presets tbody tr").filter(has_text="AMD Instinct MI325X").first
        lines = presets.evaluate(CARD_JS)
        assert "Matrix Cores and stream processors" in lines[0]
        assert "memory: 256 GB" in lines and "memory bandwidth: 6 TB/s" in lines
        page.goto(f"{origin}/collective-cost/")
        sources = page.locator(".ainotes-links tbody td[data-label=sources]").first
        assert sources.bounding_box()["width"] >= 250
        assert sources.evaluate("td => getComputedStyle(td, '::before').content") == '"sources: "'
    finally:
        context.close()
