"""Every state of the live cost chart, in Debian's chromium, at the sizes a page gives it: no two texts
overlap and none leaves the picture. The chart is the shipped format (the Vega-Lite spec compiled to
Vega for a box it fills, run by the site's Vega runtime) over the fixture links."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ainotes import render
from ainotes.charts import cost, cost_labels
from ainotes.core import collective_cost as cc
from ainotes.presets.links import load_links
from ainotes.render import engine
from browser_support import file_only

pytestmark = pytest.mark.browser

LINKS = load_links(Path(__file__).parent / "fixtures" / "cost" / "links")
# The box the live chart fills: a 1280 px screen's column (688 px, the still's aspect), a 600-960 px
# screen's (569 px), the narrowest box at the still's aspect that shows labels, and a 360 px phone's
# column (328 px at the phone still's aspect).
BOXES = {"1280": (688, 459), "tablet": (569, 379), "smallest": (503, 335), "360": (328, 500)}

MEASURE_JS = """async ([states, slack]) => {
  const view = window.__view, svg = document.querySelector('#chart svg');
  const found = [], drawn = [];
  for (const state of states) {
    for (const [name, value] of Object.entries(state)) view.signal(name, value);
    await view.runAsync();
    await view.runAsync();
    const frame = svg.getBoundingClientRect();
    const boxes = [...svg.querySelectorAll('text')].filter(t => t.textContent.trim()).filter(t => {
      for (let n = t; n && n !== svg; n = n.parentNode)
        if (n.getAttribute('opacity') === '0' || n.getAttribute('fill-opacity') === '0') return false;
      return true;
    }).map(t => ({text: t.textContent, r: t.getBoundingClientRect()})).filter(b => b.r.width && b.r.height);
    drawn.push({labels: boxes.filter(b => / (→|=) /.test(b.text)).length,
                width: view.signal('width'), height: view.signal('height')});
    const where = JSON.stringify(state);
    boxes.forEach((a, i) => {
      if (a.r.left < frame.left - 1 || a.r.right > frame.right + 1 || a.r.top < frame.top - 1
          || a.r.bottom > frame.bottom + 1) found.push(`${where}: "${a.text}" leaves the chart`);
      for (const b of boxes.slice(i + 1)) {
        const x = Math.min(a.r.right, b.r.right) - Math.max(a.r.left, b.r.left);
        const y = Math.min(a.r.bottom, b.r.bottom) - Math.max(a.r.top, b.r.top);
        if (x > slack && y > slack)
          found.push(`${where}: "${a.text}" overlaps "${b.text}" by ${x.toFixed(1)}x${y.toFixed(1)}`);
      }
    });
  }
  return {found, drawn};
}"""


def _spec() -> dict:
    return cost.cost_spec(LINKS, op="broadcast", ranks=64, link_id="mid-fabric")


def _placed(spec: dict, state: dict, width: float, height: float) -> int:
    """How many crossover labels the build placed for ``state`` on a plot of this size (cost_labels: one
    spot per link and size tier, ``-`` where none fits; no tier, no labels)."""
    tiers = [t for t, tier in enumerate(cost_labels.TIERS) if width >= tier.width_px and height >= tier.height_px]
    if not tiers:
        return 0
    (link,) = [row["index"] for row in spec["datasets"]["links"] if row["link"] == state["link"]]
    at = link * len(cost_labels.TIERS) + tiers[-1]
    return sum(1 for row in spec["datasets"]["crossovers"] if row["op"] == state["op"]
               and row["ranks"] == state["ranks"] and row["places"][at] != cost_labels.NOT_DRAWN)


@pytest.fixture(scope="module")
def chart_page(tmp_path_factory) -> Path:
    spec = _spec()
    compiled = render.vega(render.responsive(spec))
    fonts = engine.fonts_dir().as_uri()
    page = tmp_path_factory.mktemp("cost") / "chart.html"
    page.write_text(f"""<!doctype html><meta charset="utf-8">
<style>@font-face {{ font-family: "ainotes Sans"; src: url("{fonts}/ainotesSans-Regular.ttf"); }}
@font-face {{ font-family: "ainotes Sans"; font-style: italic; src: url("{fonts}/ainotesSans-Italic.ttf"); }}
@font-face {{ font-family: "ainotes Sans"; font-weight: 600; src: url("{fonts}/ainotesSans-Bold.ttf"); }}
body {{ margin: 0; }} #chart {{ width: var(--w); height: var(--h); }}</style>
<div id="chart"></div>
<script>{render.runtime_js()}</script>
<script>
const box = new URLSearchParams(location.search);
document.getElementById('chart').style.setProperty('--w', box.get('w') + 'px');
document.getElementById('chart').style.setProperty('--h', box.get('h') + 'px');
document.fonts.load('12px "ainotes Sans"').then(() => document.fonts.load('italic 12px "ainotes Sans"')).then(() => {{
  window.__view = new vega.View(vega.parse({json.dumps(compiled)}),
                                {{renderer: 'svg', container: '#chart'}});
  return window.__view.runAsync();
}}).then(() => {{ window.__ready = true; }});
</script>""", encoding="utf-8")
    return page


@pytest.mark.parametrize("box", list(BOXES))
def test_every_state_of_the_live_chart_keeps_its_texts_apart(browser, chart_page: Path, box: str) -> None:
    width, height = BOXES[box]
    context = browser.new_context(viewport={"width": 1000, "height": 1000})
    context.route("**/*", lambda route: route.continue_() if file_only(route.request.url) else route.abort())
    page = context.new_page()
    page.goto(f"{chart_page.as_uri()}?w={width}&h={height}")
    page.wait_for_function("window.__ready === true", timeout=60_000)
    states = [{"op": op, "ranks": ranks, "link": link.id}
              for op in cc.ALGORITHMS for ranks in cost.RANK_CHOICES for link in LINKS]
    result = page.evaluate(MEASURE_JS, [states, 0.5])
    context.close()
    assert not result["found"], "\n".join(result["found"][:40])
    drawn = [d["labels"] for d in result["drawn"]]
    if box == "360":
        assert sum(drawn) == 0  # a phone's plot is too narrow for them: the caption names every mark
        return
    # Every label the build placed for the plot this box gives is drawn, and no other (the live chart
    # picks the size tier its plot reaches); on a desk's plot most states have one.
    spec = _spec()
    placed = [_placed(spec, state, d["width"], d["height"]) for state, d in zip(states, result["drawn"], strict=True)]
    assert drawn == placed
    assert sum(drawn) > (len(states) // 2 if box == "1280" else len(states) // 3)
