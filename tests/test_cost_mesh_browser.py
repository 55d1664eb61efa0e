"""The live cost chart on a full-mesh link, in Debian's chromium: moving the selects draws what a chart
opened on that state draws (a mesh's B depends on the rank count, so a value the chart derives from the
link must be derived afresh at every count), and the mesh at 2 ranks draws one link's 64 GB/s."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ainotes import render
from ainotes.charts import cost
from ainotes.core.links import Link
from ainotes.presets.links import load_links
from browser_support import file_only

pytestmark = pytest.mark.browser

FIXTURES = Path(__file__).parent / "fixtures"
MESH = {link.id: link for link in load_links(FIXTURES / "parallel" / "links")}["lab-infinity-fabric"]
SWITCHED = {link.id: link for link in load_links(FIXTURES / "cost" / "links")}["fast-switch"]
ONE_LINK = Link(id="one-link", name="One link", bandwidth_gbps=64, latency_us=MESH.latency_us,
                sources=MESH.sources, path="")

# Each state's picture twice: in the view the walk moved there, and in a fresh view opened on it.
WALK_JS = """async (states) => {
  const walked = new vega.View(vega.parse(window.__compiled), {renderer: 'none'});
  await walked.runAsync();
  const pictures = [];
  for (const state of states) {
    for (const [name, value] of Object.entries(state)) walked.signal(name, value);
    await walked.runAsync();
    await walked.resize().runAsync();  // autosize "fit": lay the walked view out afresh, as the fresh one is
    const fresh = new vega.View(vega.parse(window.__compiled), {renderer: 'none'});
    for (const [name, value] of Object.entries(state)) fresh.signal(name, value);
    await fresh.runAsync();
    pictures.push([await walked.toSVG(), await fresh.toSVG()]);
    fresh.finalize();
  }
  return pictures;
}"""


def marks(svg: str) -> list[str]:
    """The data's marks in a picture (lines, band, rule, points, labels), not its axes (a walked view can
    keep an earlier state's grid ticks), in no order (a walked view may draw the lines in another)."""
    return sorted(re.findall(r'<g class="mark-\w+ role-mark[^"]*"[^>]*>.*?</g>', svg, re.S))


@pytest.fixture(scope="module")
def chart_page(tmp_path_factory) -> Path:
    spec = cost.cost_spec((SWITCHED, MESH, ONE_LINK), op="all-reduce", ranks=8, link_id=SWITCHED.id)
    page = tmp_path_factory.mktemp("cost-mesh") / "chart.html"
    page.write_text(f"""<!doctype html><meta charset="utf-8">
<script>{render.runtime_js()}</script>
<script>window.__compiled = {json.dumps(render.vega(spec))};</script>""", encoding="utf-8")
    return page


def test_moving_the_selects_on_a_mesh_draws_what_opening_on_the_state_draws(browser, chart_page: Path) -> None:
    context = browser.new_context()
    context.route("**/*", lambda route: route.continue_() if file_only(route.request.url) else route.abort())
    page = context.new_page()
    page.goto(chart_page.as_uri())
    walk = [{"link": MESH.id, "ranks": 2}, {"ranks": 8}, {"ranks": 64}, {"op": "broadcast", "ranks": 4},
            {"ranks": 2}, {"link": SWITCHED.id}, {"link": MESH.id, "ranks": 8}, {"link": ONE_LINK.id, "ranks": 2}]
    states, state = [], {"op": "all-reduce", "ranks": 8, "link": SWITCHED.id}
    for step in walk:
        state = {**state, **step}
        states.append(state)
    pictures = page.evaluate(WALK_JS, states)
    context.close()
    drawn = [[marks(walked), marks(fresh)] for walked, fresh in pictures]
    for state, (walked, fresh) in zip(states, drawn, strict=True):
        assert walked and walked == fresh, state
    # The mesh at 2 ranks (one link of 64 GB/s) and a switch of 64 GB/s with the same α: one picture.
    assert drawn[4][0] == drawn[7][0]
