"""Every reader, every page: axe-core, keyboard and screen-reader checks on the built site.

The run's shared build of the real site (``conftest.real_site``, served under ``/notes/`` as a
project site on a static host is), and one Debian chromium per worker (``conftest.browser``). axe-core
comes from the pinned ``axe-playwright-python`` package, which bundles ``axe.min.js``:
nothing is downloaded at test time.

The page list is every ``index.html`` the build wrote, plus ``404.html`` and the standalone
chart pages in ``embed/``: a page added later is checked without editing this file.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Browser, BrowserContext, Page

from ainotes.base import notices
from browser_support import DESK, PHONE, WAIT_MS, site_pages, wait_for_charts, wait_until

pytestmark = pytest.mark.browser

BLOCKING_IMPACTS = ("serious", "critical")
RUNTIME_MARKER = "Access path missing open bracket"  # vega-util: the Vega runtime is in a file when this is
SNIPPET_CHARS = 160

AXE = Axe()


@dataclass(frozen=True)
class Site:
    url: str  # ends with "/"
    root: Path

    def pages(self) -> list[str]:
        return [*site_pages(self.root), "404.html"]

    def embeds(self) -> list[str]:
        """The standalone chart pages (``embed/ID.html``): pages of the site too, opened on their own."""
        return sorted(f"embed/{path.name}" for path in (self.root / "embed").glob("*.html"))


@pytest.fixture(scope="module")
def site(real_site) -> Site:
    return Site(real_site.url, real_site.site)


@pytest.fixture
def open_context(browser: Browser, real_site) -> Iterator:
    """Opens browser contexts (desk width unless told) that reach nothing outside the site's origin; closes
    them after."""
    made: list[BrowserContext] = []
    outside = re.compile(rf"^(?!{re.escape(real_site.origin)}/).*")

    def open_one(**options) -> BrowserContext:
        context = browser.new_context(**{"viewport": DESK, **options})
        context.set_default_timeout(WAIT_MS)
        # The site loads nothing from outside itself; keep it that way here too.
        context.route(outside, lambda route: route.abort())
        made.append(context)
        return context

    yield open_one
    for context in made:
        context.close()


@pytest.fixture
def context(open_context) -> BrowserContext:
    return open_context()


def _settled(page: Page, url: str) -> None:
    """Open ``url`` and wait for what scripts add: live charts, enhanced steppers, scroll regions."""
    page.goto(url)
    wait_for_charts(page)
    # scroll-regions.js runs on the animation frame after Material's document$ fires.
    page.evaluate("() => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)))")


def _report(violations: list[dict], where: str) -> list[str]:
    lines = []
    for violation in violations:
        if violation["impact"] not in BLOCKING_IMPACTS:
            continue
        for node in violation["nodes"]:
            checks = node.get("any", []) + node.get("all", []) + node.get("none", [])
            message = checks[0]["message"] if checks else violation["help"]
            snippet = re.sub(r"\s+", " ", node["html"])[:SNIPPET_CHARS]
            lines.append(f"{violation['id']} ({violation['impact']}) on {where}: {' > '.join(node['target'])}"
                         f"\n    {snippet}\n    {message}")
    return lines


# -- 1. axe-core: no serious or critical violation, any page, either scheme, either width -----------

# Every page in both schemes and at both widths: light at 1280 px and dark at 360 px in `make test`; the
# other two pairings (the same pages again) in the matrix tier, `make test-matrix`.
SCHEMES_AND_WIDTHS = [
    pytest.param("light", DESK, id="light-1280px"),
    pytest.param("dark", PHONE, id="dark-360px"),
    pytest.param("light", PHONE, id="light-360px", marks=pytest.mark.matrix),
    pytest.param("dark", DESK, id="dark-1280px", marks=pytest.mark.matrix),
]


def _axe_problems(page: Page, url: str, where: str, scheme: str | None = None) -> list[str]:
    _settled(page, url)
    if scheme is not None:
        expected = "slate" if scheme == "dark" else "default"
        assert page.locator("body").get_attribute("data-md-color-scheme") == expected, url
    return _report(AXE.run(page).response["violations"], where)


@pytest.mark.parametrize(("scheme", "size"), SCHEMES_AND_WIDTHS)
def test_axe_finds_no_serious_violation_on_any_page(site, open_context, scheme, size):
    page = open_context(color_scheme=scheme, viewport=size).new_page()
    pages = site.pages()
    assert len(pages) >= 9, pages  # the eight notes pages and 404.html, at least
    problems: list[str] = []
    for path in pages:
        problems += _axe_problems(page, site.url + path, f"/{path} [{scheme}, {size['width']} px]", scheme)
    assert not problems, f"{len(problems)} serious or critical axe-core violations:\n" + "\n".join(problems)


@pytest.mark.parametrize(("scheme", "size"), SCHEMES_AND_WIDTHS)
def test_axe_finds_no_serious_violation_on_any_standalone_chart_page(site, open_context, scheme, size):
    page = open_context(color_scheme=scheme, viewport=size).new_page()
    embeds = site.embeds()  # the standalone pages: a phone gets its own layout there too
    assert embeds
    problems: list[str] = []
    for path in embeds:
        problems += _axe_problems(page, site.url + path, f"/{path} [{scheme}, {size['width']} px]")
    assert not problems, f"{len(problems)} serious or critical axe-core violations:\n" + "\n".join(problems)


# -- 2. keyboard: every chart and stepper control reached by Tab, with a visible focus ring -----------

CONTROLS_JS = """() => {
  const scopes = [...document.querySelectorAll('figure.ainotes-chart, .ainotes-stepper')];
  const inside = 'a[href], button, input, select, summary, [tabindex]';
  const controls = scopes.flatMap(s => [s, ...s.querySelectorAll(inside)])
    .filter(el => el.tabIndex >= 0 && !el.disabled && el.checkVisibility({visibilityProperty: true}));
  controls.forEach((el, i) => el.setAttribute('data-a11y-control', String(i)));
  return controls.length;
}"""

FOCUSED_JS = """() => {
  const el = document.activeElement;
  if (!el || el === document.body) return null;
  const cs = getComputedStyle(el);
  const ring = cs.outlineStyle !== 'none' && parseFloat(cs.outlineWidth) >= 1;
  return {id: el.getAttribute('data-a11y-control'), ring, what: el.tagName + ' ' + (el.getAttribute('name')
          || el.getAttribute('data-action') || el.textContent.trim().slice(0, 30))};
}"""


def _chart_pages(site: Site) -> list[str]:
    pattern = re.compile(r'class="(ainotes-chart|ainotes-coll ainotes-stepper)"')
    return [p for p in site_pages(site.root) if pattern.search((site.root / p / "index.html").read_text("utf-8"))]


def test_every_chart_and_stepper_control_is_reached_by_tab_with_a_focus_ring(site, context):
    page = context.new_page()
    chart_pages = _chart_pages(site)
    assert {"roofline/", "collectives/"} <= set(chart_pages), chart_pages
    for path in chart_pages:
        _settled(page, site.url + path)
        count = page.evaluate(CONTROLS_JS)
        assert count, f"/{path}: no chart controls found"
        reached: set[str] = set()
        no_ring: list[str] = []
        first = None
        for _ in range(600):
            page.keyboard.press("Tab")
            focused = page.evaluate(FOCUSED_JS)
            if focused is None:
                continue
            key = focused["what"] + str(focused["id"])
            if key == first:
                break  # round the page once
            first = first or key
            if focused["id"] is not None:
                reached.add(focused["id"])
                if not focused["ring"]:
                    no_ring.append(focused["what"])
        missing = page.evaluate("(reached) => [...document.querySelectorAll('[data-a11y-control]')]"
                                ".filter(el => !reached.includes(el.getAttribute('data-a11y-control')))"
                                ".map(el => el.tagName + ' ' + el.className)", sorted(reached))
        assert not missing, f"/{path}: Tab never reaches {missing}"
        assert not no_ring, f"/{path}: no visible focus ring on {sorted(set(no_ring))}"


# Vega writes a mark layer with no items as an empty group with role "graphics-symbol" and, unless the layer
# is hidden, no name: a screen reader announces an unlabelled image. A state the selects reach can empty a
# layer the first view fills (the inference chart's KV-cache rule), so every option of every select is tried.
UNNAMED_EMPTY_JS = """() => [...document.querySelectorAll('.ainotes-chart__view g[role="graphics-symbol"]')]
  .filter(g => !g.childElementCount && !g.getAttribute('aria-label') && g.getAttribute('aria-hidden') !== 'true')
  .map(g => ((g.closest('figure') || {}).id || '?') + ': ' + g.getAttribute('class'))"""


def test_no_state_a_select_reaches_leaves_an_unnamed_empty_mark_group(site, context):
    page = context.new_page()
    found: set[str] = set()
    moved = 0
    for path in _chart_pages(site):
        _settled(page, site.url + path)
        found.update(f"/{path} first view, {g}" for g in page.evaluate(UNNAMED_EMPTY_JS))
        selects = page.locator("figure select")
        counts = selects.evaluate_all("all => all.map(s => s.options.length)")
        for index, count in enumerate(counts):
            for option in range(count):
                selects.nth(index).select_option(index=option)
                page.evaluate("() => new Promise(done => setTimeout(done, 60))")
                moved += 1
                found.update(f"/{path} select {index} at option {option}, {g}" for g in page.evaluate(UNNAMED_EMPTY_JS))
            selects.nth(index).select_option(index=0)
    assert moved > 20, "the chart pages' selects"
    assert not found, "\n".join(sorted(found)[:30])


def test_roofline_controls_work_from_the_keyboard(site, context):
    page = context.new_page()
    _settled(page, site.url + "roofline/")
    figure = page.locator("figure.ainotes-chart").first
    # What the reader sees change: the chart's text and the explorer's readout under it.
    seen_js = ("(sel) => [...document.querySelectorAll(sel)].map(t => t.textContent).join(' ')")
    seen = "figure.ainotes-chart .ainotes-chart__view svg text, figure.ainotes-chart [data-role=readout]"

    for name, keys in (("log_intensity", ["End"]), ("preset", ["ArrowDown"]), ("sparsity", ["Space"]),
                       ("precision", ["ArrowDown"])):
        control = figure.locator(f"form.ainotes-explorer [name={name}]")
        before_value = control.evaluate("el => el.type === 'checkbox' ? String(el.checked) : el.value")
        before_text = page.evaluate(seen_js, seen)
        control.focus()
        for key in keys:
            page.keyboard.press(key)
        after_value = control.evaluate("el => el.type === 'checkbox' ? String(el.checked) : el.value")
        assert after_value != before_value, f"{name}: {keys} left it at {before_value}"
        wait_until(page, f"([before, sel]) => ({seen_js})(sel) !== before", [before_text, seen],
                   failure=f"{name}: the chart did not change after {keys}")


# -- 3. screen readers: names and text alternatives ---------------------------------------------------

NAMES_JS = """() => ({
  charts: [...document.querySelectorAll('figure.ainotes-chart')].map(f => ({
    id: f.id,
    caption: (f.querySelector('figcaption') || {}).textContent || '',
    view: (f.querySelector('.ainotes-chart__view') || {getAttribute: () => null}).getAttribute('aria-label') || '',
    role: (f.querySelector('.ainotes-chart__view') || {getAttribute: () => null}).getAttribute('role'),
  })),
  frames: [...document.querySelectorAll('.ainotes-stepper svg')].map(svg => {
    const ids = (svg.getAttribute('aria-labelledby') || '').split(/\\s+/).filter(Boolean);
    return {role: svg.getAttribute('role'),
            name: ids.map(id => (document.getElementById(id) || {}).textContent || '').join(' ').trim()};
  }),
  steppers: [...document.querySelectorAll('.ainotes-stepper')].map(s => ({
    name: s.getAttribute('aria-label') || '', live: (s.querySelector('[aria-live]') || {}).textContent || '',
    mode: (s.querySelector('[aria-live]') || {getAttribute: () => null}).getAttribute('aria-live'),
  })),
})"""


def test_charts_and_steppers_have_names_and_text_alternatives(site, context):
    page = context.new_page()
    for path in _chart_pages(site):
        _settled(page, site.url + path)
        found = page.evaluate(NAMES_JS)
        for chart in found["charts"]:
            assert len(chart["caption"].strip()) > 40, (path, chart)
            assert chart["role"] == "graphics-document" and len(chart["view"]) > 20, (path, chart)
        for frame in found["frames"]:
            assert frame["role"] == "img" and frame["name"], (path, frame)
        for stepper in found["steppers"]:
            assert stepper["name"] and stepper["mode"] == "polite" and "Frame 1 of" in stepper["live"], (path, stepper)


# -- 4. licences: notices wherever the Vega runtime is, and linked from every page --------------------


def test_notices_travel_with_every_copy_of_the_runtime(site):
    notice = notices.js_comment()
    carriers = []
    for path in sorted(site.root.rglob("*")):
        if path.suffix not in (".js", ".html") or not path.is_file():
            continue
        text = path.read_text("utf-8", errors="replace")
        if RUNTIME_MARKER in text:
            carriers.append(path.relative_to(site.root).as_posix())
            assert notice in text and text.index(notice) < text.index(RUNTIME_MARKER), path
    assert "assets/ainotes/vega.min.js" in carriers
    assert any(c.startswith("embed/") for c in carriers), carriers
    assert (site.root / "assets/ainotes/vega.min.js").read_text("utf-8").startswith(notice)


def test_every_page_links_the_notices_file_from_its_footer(site):
    shipped = site.root / "assets" / "ainotes" / notices.NOTICES_FILE
    assert shipped.read_text("utf-8") == notices.notices_text()
    for path in site_pages(site.root):
        page = (site.root / path / "index.html").read_text("utf-8")
        footer = page[page.index('<footer class="md-footer">'):]
        match = re.search(r'<a href="([^"]*THIRD_PARTY_NOTICES\.txt)"', footer)
        assert match, f"/{path}: no notices link in the footer"
        assert (site.root / path / match.group(1)).resolve() == shipped.resolve(), (path, match.group(1))
        assert "the ainotes authors, MIT licence" in footer, path
