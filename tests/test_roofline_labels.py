"""The roofline's labels never lie on its marks or its axes, in a real browser (Debian's chromium).

Issue 30: "▲ 16384 tokens, BF16" was written over the B200's roof and the kernels' squares, and
"at 0.01 FLOP/B" across the y axis. Here every text the chart writes inside its plot (the readout's
and the reader's labels, the kernels' numbers, the subtitle) is measured as drawn, against every
symbol (kernel squares, ridge dots, readout dots, the reader's marks), every line and rule (sampled
along its path), and the boxes of the axes (domain, ticks, labels, title): in the opening state and
across a sweep of states (each roof, sparse or dense, all GPUs or one, the readout at both ends of
the axis and between, the reader's GEMM on the highest roof, the batch GEMM from 1 to 16,384 tokens),
at 360 and 1280 px. The stills (the picture without a script) are measured the same way.
"""

from __future__ import annotations

import math

import pytest

from browser_support import DESK, PHONE, wait_for_charts

pytestmark = pytest.mark.browser

# Every visible text of the plot's marks, symbol, line and rule of `svg` (a live view or a still), and the
# boxes of its axes; then each text that meets one of them (by more than half a pixel both ways).
COLLISIONS_JS = """(svg) => {
  const hidden = el => {
    for (let n = el; n && n !== svg.parentNode; n = n.parentNode) {
      if (n.nodeType !== 1) continue;
      for (const a of ['opacity', 'fill-opacity', 'stroke-opacity'])
        if (n.getAttribute(a) === '0') return true;
      const cs = getComputedStyle(n);
      if (cs.display === 'none' || cs.visibility === 'hidden' || cs.opacity === '0') return true;
    }
    return false;
  };
  const shown = sel => [...svg.querySelectorAll(sel)].filter(e => !hidden(e));
  const box = r => ({left: r.left + 0.5, right: r.right - 0.5, top: r.top + 0.5, bottom: r.bottom - 0.5});
  const texts = shown('g.mark-text.role-mark text').filter(t => t.textContent.trim())
    .map(t => ({text: t.textContent, ...box(t.getBoundingClientRect())})).filter(b => b.right > b.left);
  const meets = (a, b) => Math.min(a.right, b.right) > Math.max(a.left, b.left)
                          && Math.min(a.bottom, b.bottom) > Math.max(a.top, b.top);
  const inside = (p, b) => p.x > b.left && p.x < b.right && p.y > b.top && p.y < b.bottom;
  const found = [];
  for (const s of shown('g.mark-symbol.role-mark path')) {
    const r = s.getBoundingClientRect();
    if (!r.width) continue;
    for (const t of texts)
      if (meets(t, r)) found.push(`"${t.text}" over a symbol at ${Math.round(r.left)},${Math.round(r.top)}`);
  }
  for (const s of shown('g.mark-line.role-mark path, g.mark-rule.role-mark line')) {
    const length = s.getTotalLength(), m = s.getScreenCTM();
    if (!m || !length) continue;
    const hit = new Set();
    for (let d = 0; d <= length; d += 1.5) {
      const p = new DOMPoint(s.getPointAtLength(d).x, s.getPointAtLength(d).y).matrixTransform(m);
      for (const t of texts) if (!hit.has(t) && inside(p, t)) {
        hit.add(t);
        const what = s.tagName === 'line' ? 'rule' : 'line';
        found.push(`"${t.text}" over a ${what} at ${Math.round(p.x)},${Math.round(p.y)}`);
      }
    }
  }
  for (const g of shown('g.role-axis')) {
    if (!g.querySelector('.role-axis-domain, .role-axis-label, .role-axis-title')) continue;  // a grid
    for (const part of g.querySelectorAll('.role-axis-domain line, .role-axis-tick line, .role-axis-label text,'
                                          + ' .role-axis-title text')) {
      if (hidden(part)) continue;
      const r = part.getBoundingClientRect();
      for (const t of texts)
        if (meets(t, r)) found.push(`"${t.text}" over the axis: "${part.textContent || part.tagName}"`);
    }
  }
  return found;
}"""

SWEEP_JS = f"""async ([id, states]) => {{
  const collisions = {COLLISIONS_JS};
  const view = window.__ainotesRooflineView(id);
  const svg = document.querySelector('#' + id + ' .ainotes-chart__view svg');
  const problems = [];
  for (const state of states) {{
    for (const [name, value] of Object.entries(state)) view.signal(name, value);
    await view.runAsync();
    await view.runAsync();  // as the page does: legends that changed are laid out on the second pass
    for (const found of collisions(svg)) problems.push(JSON.stringify(state) + ': ' + found);
  }}
  return problems;
}}"""


def _states(view_signals: dict) -> list[dict]:
    """The opening state, then each roof × sparsity × (all GPUs, one) with the readout at both ends of the
    axis and between, then the reader's marks where they reach highest and lowest."""
    low, high = view_signals["x_domain"]
    middle = math.sqrt(low * high)
    states: list[dict] = [{}]
    for roof in view_signals["roofs"]:
        for sparse in (False, True):
            for preset in ("*", view_signals["gpu_ids"][0]):
                states += [{"precision": roof, "sparsity": sparse, "preset": preset, "readout_on": True,
                            "intensity": x, "own_on": False, "batch_on": False} for x in (low, middle, high)]
    for tokens in (1, 64, 1024, 16384):  # the batch GEMM along the top of the plot, with the readout beside it
        states.append({"precision": "tensor:bf16", "sparsity": False, "preset": "*", "readout_on": True,
                       "intensity": tokens, "own_on": False, "batch_on": True, "batch_tokens": tokens, "batch_d": 8192,
                       "batch_s": 2, "batch_dtype": "bf16", "batch_roof": "tensor:bf16"})
    for x in (low, high):  # the reader's intensity at each end of the axis, with the batch GEMM on
        states.append({"precision": "tensor:bf16", "sparsity": True, "preset": "*", "readout_on": True,
                       "intensity": x, "own_on": True, "own_kind": "intensity", "own_typed_x": x,
                       "own_roof": "tensor:bf16", "batch_on": True, "batch_tokens": 16384})
    for dtype, size in (("fp8", 1), ("fp4", 0.5)):  # the reader's GEMM on a roof above the one shown
        states.append({"precision": "tensor:bf16", "sparsity": False, "preset": "*", "readout_on": True,
                       "intensity": high, "own_on": True, "own_kind": "gemm", "own_m": 16384, "own_n": 16384,
                       "own_k": 16384, "own_s": size, "own_dtype": dtype, "own_roof": f"tensor:{dtype}",
                       "batch_on": True, "batch_tokens": 16384})
    return states


@pytest.mark.parametrize("viewport", [PHONE, DESK], ids=["360", "1280"])
def test_no_label_lies_on_a_mark_or_an_axis_in_any_state(browser, real_site, viewport):
    context = browser.new_context(viewport=viewport)
    page = context.new_page()
    problems = []
    try:
        page.goto(real_site.url + "roofline/")
        wait_for_charts(page)
        for chart_id in page.eval_on_selector_all("figure.ainotes-chart:has(form.ainotes-explorer)",
                                                  "fs => fs.map(f => f.id)"):
            signals = page.evaluate("""(id) => { const v = window.__ainotesRooflineView(id);
                const form = document.querySelector('#' + id + ' form.ainotes-explorer');
                return {x_domain: v.signal('x_domain'), gpu_ids: v.signal('gpu_ids'),
                        roofs: [...form.querySelectorAll('select[name=precision] option')].map(o => o.value)}; }""",
                                    chart_id)
            problems += [f"{chart_id}: {p}" for p in page.evaluate(SWEEP_JS, [chart_id, _states(signals)])]
    finally:
        context.close()
    assert problems == [], f"{len(problems)} collisions:\n" + "\n".join(problems[:30])


# The stills of the rooflines (the figures with an explorer's form), whichever the width shows.
STILLS = "figure:has(form.ainotes-explorer) .ainotes-chart__still"


@pytest.mark.parametrize("viewport", [PHONE, DESK], ids=["360", "1280"])
def test_no_label_lies_on_a_mark_or_an_axis_in_the_stills(browser, real_site, viewport):
    context = browser.new_context(viewport=viewport, java_script_enabled=False)
    page = context.new_page()
    problems = []
    try:
        for path in ("roofline/", "inference/"):
            page.goto(real_site.url + path)
            stills = page.eval_on_selector_all(
                STILLS, "ss => ss.filter(s => s.getClientRects().length).map(s => s.closest('figure').id)")
            assert stills, path
            found = page.evaluate(f"""() => {{ const collisions = {COLLISIONS_JS};
                return [...document.querySelectorAll({STILLS!r})]
                  .filter(s => s.getClientRects().length)
                  .flatMap(s => collisions(s.querySelector('svg')).map(p => s.closest('figure').id + ': ' + p)); }}""")
            problems += [f"{path} {p}" for p in found]
    finally:
        context.close()
    assert problems == [], "\n".join(problems[:30])
