"""Charts embedded in another site by the snippet each chart offers, in a real browser.

The run's shared build of the real site (``conftest.real_site``); an outside page, served from
another origin (the same host, another port), embeds one chart of every kind in
``embed/manifest.json`` with the snippets copied from under that chart (the picture and the live
frame with its listener). At 360 and 700 px: nothing overflows
sideways, every picture fits its column, each frame takes its page's height, so that every
control inside it is in view, uncut; the roofline's frame carries the explorer's readout and
the reader's own kernel, and its plot keeps its proportions on a phone.
"""

from __future__ import annotations

import html
import json
import re
from urllib.parse import urljoin, urlsplit

import pytest

from ainotes.charts import frame
from ainotes.html import embed
from browser_support import WAIT_MS, StaticServer, Watch, guard_requests, wait_until
from sitebuild import REPO

SCREENSHOTS = REPO / "artifacts" / "screenshots"
WIDTHS = {"phone": 360, "column": 700}
_SNIPPET = re.compile(r'<code class="ainotes-embed__snippet" data-urls="([^"]*)">(.*?)</code>', re.S)


def _snippets(page_html: str, chart_id: str, site_origin: str, page_url: str) -> list[str]:
    """The snippets under one chart, as the page's script leaves them: URLs made absolute."""
    start = page_html.index(f'<div class="ainotes-downloads" data-chart="{chart_id}">')
    block = page_html[start:page_html.index("</details>", start)]
    found = []
    for match in _SNIPPET.finditer(block):
        text = html.unescape(match.group(2))
        for url in html.unescape(match.group(1)).split():
            text = text.replace(f'"{url}"', '"' + urljoin(f"{site_origin}/{page_url}", url) + '"')
        found.append(text)
    return found


@pytest.fixture(scope="module")
def hosts(tmp_path_factory, real_site):
    site_dir, host_dir = real_site.site, tmp_path_factory.mktemp("embed-hosts") / "host"
    host_dir.mkdir()
    manifest = json.loads((site_dir / "embed" / "manifest.json").read_text(encoding="utf-8"))
    chosen: dict[str, dict] = {}
    for chart in manifest["charts"]:
        chosen.setdefault(chart["kind"], chart)
    assert {"roofline", "collective", "collective-cost"} <= set(chosen)
    host = StaticServer(host_dir, host=urlsplit(real_site.origin).hostname).start()  # another port: another origin
    parts = []
    for kind, chart in sorted(chosen.items()):
        page = (site_dir / chart["page"] / "index.html").read_text(encoding="utf-8")
        snippets = _snippets(page, chart["id"], real_site.url.rstrip("/"), chart["page"])
        assert len(snippets) == 2, (kind, snippets)
        parts.append(f'<section data-kind="{kind}"><h2>{kind}</h2>{"".join(snippets)}</section>')
    (host_dir / "index.html").write_text(
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1"><title>An outside page</title>'
        '<link rel="icon" href="data:,">'
        "<style>body{margin:0;font:16px/1.5 Georgia,serif}main{max-width:700px;margin:0 auto;padding:0 10px}"
        "</style></head><body><main><h1>Someone else's notes</h1>" + "".join(parts) + "</main></body></html>",
        encoding="utf-8",
    )
    yield {"host": host.origin, "site": real_site.origin, "kinds": sorted(chosen), "charts": chosen}
    host.stop()


LIVE_JS = "() => !!document.querySelector('.ainotes-chart--live, .ainotes-stepper[data-ainotes-ready]')"
# The frame is as tall as its page (the page told the host, the host's listener set it).
FITS_JS = "() => Math.abs(innerHeight - Math.ceil(document.body.getBoundingClientRect().height)) <= 1"

# Inside one frame: its size, what overflows, and every control's box.
FRAME_STATE_JS = """() => {
  const controls = [...document.querySelectorAll('input, select, button, summary, a[href], [tabindex]')]
    .filter(e => e.getClientRects().length && getComputedStyle(e).visibility !== 'hidden')
    .filter(e => { const closed = e.closest('details:not([open])');  // inside a closed details: not shown
                   return !closed || (e.tagName === 'SUMMARY' && e.parentElement === closed); })
    .map(e => { const r = e.getBoundingClientRect();
                return {what: e.outerHTML.slice(0, 80), left: r.left, right: r.right, top: r.top + scrollY,
                        bottom: r.bottom + scrollY}; });
  const plot = document.querySelector('.ainotes-chart__view svg');
  // The smallest text the page shows outside its pictures (the charts' own text is checked elsewhere).
  const sizes = [...document.querySelectorAll('body *:not(svg):not(svg *)')]
    .filter(e => e.getClientRects().length && [...e.childNodes].some(n => n.nodeType === 3 && n.textContent.trim()))
    .filter(e => !e.closest('details:not([open])') || e.closest('summary'))
    .filter(e => !e.closest('.ainotes-sr-only'))
    .map(e => parseFloat(getComputedStyle(e).fontSize));
  return {width: innerWidth, height: innerHeight, content: Math.ceil(document.body.getBoundingClientRect().height),
          scrollWidth: document.documentElement.scrollWidth, controls, smallest: Math.min(...sizes),
          plot: plot ? [plot.getBoundingClientRect().width, plot.getBoundingClientRect().height] : null};
}"""


def _open(browser, hosts, width: int, scheme: str = "light"):
    watch = Watch()
    context = browser.new_context(viewport={"width": width, "height": 800}, color_scheme=scheme)
    context.set_default_timeout(WAIT_MS)
    guard_requests(context, lambda url: url.startswith((hosts["host"], hosts["site"], "data:")), watch)
    page = watch.attach(context.new_page())
    page.goto(hosts["host"] + "/index.html")
    for kind in hosts["kinds"]:
        _, inner = _frame_of(page, kind)
        wait_until(inner, LIVE_JS, failure=f"{kind}: the frame's chart did not go live")
        sizes = "[innerHeight, document.body.getBoundingClientRect().height]"
        wait_until(inner, FITS_JS, failure=lambda inner=inner, kind=kind, sizes=sizes:
                   f"{kind}: the frame is not its page's height: {inner.evaluate(sizes)}")
    return context, page, watch


def _frame_of(page, kind: str):
    element = page.locator(f'section[data-kind="{kind}"] iframe')
    return element, element.element_handle().content_frame()


@pytest.mark.browser
@pytest.mark.parametrize("width", list(WIDTHS.values()), ids=list(WIDTHS))
def test_every_kind_fits_an_outside_page(browser, hosts, width):
    context, page, watch = _open(browser, hosts, width)
    try:
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        column = page.evaluate("document.querySelector('main').clientWidth - 20")
        for kind in hosts["kinds"]:
            image = page.locator(f'section[data-kind="{kind}"] img')
            box = image.bounding_box()
            assert box is not None and 0 < box["width"] <= column + 0.5, (kind, box, column)
            assert image.evaluate("i => i.complete && i.naturalWidth > 0"), kind
            element, inner = _frame_of(page, kind)
            outer = element.bounding_box()
            assert outer is not None and abs(outer["width"] - column) <= 1, (kind, outer)
            state = inner.evaluate(FRAME_STATE_JS)
            # The frame is its page's height: nothing cut off below, nothing to scroll inside.
            assert abs(state["height"] - state["content"]) <= 1, (kind, state["height"], state["content"])
            assert state["scrollWidth"] <= state["width"], (kind, state["scrollWidth"], state["width"])
            assert state["controls"], kind
            assert state["smallest"] >= 11, (kind, state["smallest"])
            for control in state["controls"]:
                assert control["left"] >= -0.5 and control["right"] <= state["width"] + 0.5, (kind, control)
                assert control["top"] >= -0.5 and control["bottom"] <= state["height"] + 0.5, (kind, control)
            if kind != "collective":
                assert state["plot"] is not None, kind
                plot_width, plot_height = state["plot"]
                # Not squashed: on a phone the plot is at least as tall as it is wide (the narrow proportions).
                assert plot_height >= (plot_width if width == WIDTHS["phone"] else 0.5 * plot_width), (kind, state)
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / f"embed-host-{width}.png"), full_page=True)
        assert watch.problems() == [], "\n".join(watch.problems())
    finally:
        context.close()


@pytest.mark.browser
def test_phone_gets_the_narrow_still(browser, hosts):
    context, page, _ = _open(browser, hosts, WIDTHS["phone"])
    try:
        source = page.locator('section[data-kind="roofline"] img').evaluate("i => i.currentSrc")
        assert source.endswith("-narrow.svg"), source
    finally:
        context.close()


@pytest.mark.browser
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_roofline_frame_has_the_readout_and_the_readers_kernel(browser, hosts, scheme):
    context, page, watch = _open(browser, hosts, WIDTHS["phone"], scheme)
    try:
        element, inner = _frame_of(page, "roofline")
        form = inner.locator("form.ainotes-explorer")
        assert form.is_visible()
        assert "At " in form.locator("[data-role=readout]").inner_text()
        expected = "slate" if scheme == "dark" else "default"
        assert inner.locator("body").get_attribute("data-md-color-scheme") == expected
        before = inner.evaluate("document.body.getBoundingClientRect().height")
        for name, value in (("m", "4096"), ("n", "4096"), ("k", "4096")):
            form.locator(f"input[name={name}]").fill(value)
        form.locator("button[value=gemm]").click()
        own = "() => document.querySelector('[data-role=own]').textContent.includes('Your GEMM 4096×4096×4096')"
        wait_until(inner, own, failure="the frame's own-kernel readout did not appear")
        # The readout made the page taller: the frame follows, still cutting nothing off.
        assert inner.evaluate("document.body.getBoundingClientRect().height") > before
        wait_until(inner, FITS_JS, failure="the frame did not follow its page's new height")
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        element.screenshot(path=str(SCREENSHOTS / f"embed-roofline-frame-{scheme}-360.png"))
        assert watch.problems() == [], "\n".join(watch.problems())
    finally:
        context.close()


def test_the_embedding_page_shows_the_snippets_charts_offer():
    """docs/embedding.md gives the same two snippets the charts do, for its example chart."""
    text = (REPO / "docs" / "embedding.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```html\n(.*?)```", text, re.S)
    base = "https://YOUR-HOST/embed/"
    urls = {kind: base + name for kind, name in
            (("svg", "roofline-roofline.svg"), ("svg-narrow", "roofline-roofline-narrow.svg"),
             ("html", "roofline-roofline.html"))}
    title = "Roofline of the GPU presets"
    expected = [embed.picture_snippet(urls, title=title), embed.frame_snippet(urls, title=title, kind="roofline")]
    assert [block.strip() for block in blocks[:2]] == expected


def test_the_listener_sets_only_the_frame_that_spoke():
    listener = frame.HOST_LISTENER_HTML
    assert "e.source" in listener and f"iframe[{frame.FRAME_ATTRIBUTE}]" in listener
    assert str(frame.MAX_FRAME_HEIGHT_PX) in listener and "innerHTML" not in listener


@pytest.mark.parametrize(("site_url", "absolute"), [
    ("https://notes.example.org/ai/", True), ("https://notes.example.org/ai", True),
    (None, False), ("http://127.0.0.1:8000/", False),  # no address, or the local preview's: relative
])
def test_embed_snippets_are_absolute_in_the_html_where_the_site_has_an_address(site_url, absolute):
    """The snippets a reader copies name the files by the address the site is published at, in the
    built HTML itself (a host that strips scripts, or a copy made without running them, gets them
    right); without one they stay relative to the page, for vega-charts.js to make absolute."""
    import dataclasses

    from ainotes.build.site import NotesSite
    from ainotes.markdown.extension import convert_page
    from ainotes.notes.settings import presets_only
    from preset_support import FIXTURE_PRESETS

    site = NotesSite(dataclasses.replace(presets_only(FIXTURE_PRESETS), site_url=site_url))
    page = convert_page(site, "```collective\nop: all-reduce\nranks: 4\nid: ring\n```\n", "comm/ring.md",
                        "comm/ring/")
    snippets = [html.unescape(text) for text in re.findall(r'<code class="ainotes-embed__snippet"[^>]*>(.*?)</code>',
                                                           page, re.S)]
    assert snippets
    iframe = next(s for s in snippets if "<iframe" in s)
    src = re.search(r'<iframe src="([^"]+)"', iframe).group(1)
    assert src == ("https://notes.example.org/ai/embed/ring.html" if absolute else "../../embed/ring.html")


def test_a_kept_drawing_is_not_reused_under_another_site_address(tmp_path, monkeypatch):
    """The same chart drawn in one process and one render cache for two addresses (a build for the
    local preview, then one with AINOTES_SITE_URL set): each page's snippets name its own address.
    The kept drawing's key once left the address out, so the second build copied the first's."""
    import dataclasses

    from ainotes.base import cache
    from ainotes.build.site import NotesSite
    from ainotes.markdown.extension import convert_page
    from ainotes.notes.settings import presets_only
    from preset_support import FIXTURE_PRESETS

    monkeypatch.setenv("AINOTES_CACHE_DIR", str(tmp_path / "cache"))
    cache.MEMO.clear()
    fence = "```collective\nop: all-reduce\nranks: 4\nid: ring\n```\n"
    sources = {}
    for site_url in ("https://notes.example.org/ai/", None, "https://other.example.com/"):
        site = NotesSite(dataclasses.replace(presets_only(FIXTURE_PRESETS), site_url=site_url))
        page = html.unescape(convert_page(site, fence, "comm/ring.md", "comm/ring/"))
        sources[site_url] = re.search(r'<iframe src="([^"]+)"', page).group(1)
    assert sources == {"https://notes.example.org/ai/": "https://notes.example.org/ai/embed/ring.html",
                       None: "../../embed/ring.html",
                       "https://other.example.com/": "https://other.example.com/embed/ring.html"}
