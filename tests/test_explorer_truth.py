"""What the reader sees is what is true: the roofline explorer in a real browser, in every state.

One small fixture site (its own GPU presets, so no verdict depends on what ships), one browser,
one page load per width and scheme; the select states are switched in the page, through the
form's own controls, and each is checked where Vega drew it:

* no kernel or reader's mark lies off the lines drawn for its GPU (so none sits above a roof
  without its own roof drawn), and a GPU without the roof shown draws nothing;
* the GPU select filters lines, marks, the legend, the readout and the kernels' table together;
* the readout's rates are the lines' values at the intensity read, and never say "sparse" for a
  vector-unit roof; the line key names every line style drawn;
* no text in the chart is smaller than 11 CSS px.

Then the controls do what their labels say (Enter acts on its own field, a typed intensity
redraws as the reader types), the selects are on screen with the plot at 1280 px, and
screenshots of moved selects land in artifacts/screenshots/ for a person to look at.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from ainotes.core.kernels import LAUNCH_REMARK
from browser_support import DESK, PHONE, TABLET, StaticServer, Watch, guard_requests, same_origin, wait_until
from sitebuild import REPO, make_fixture, run_build

# One worker runs this file (xdist_group): its fixture site is built once.
pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("explorer_truth")]

SCREENSHOTS = REPO / "artifacts" / "screenshots"
MIN_TEXT_PX = 11
WIDTHS = {"phone": PHONE, "tablet": TABLET, "desk": DESK}

# Made-up GPUs covering every case: every path and 2:4 sparsity, vendor words for the units
# ("full"); no FP8 or FP64 path and no sparsity, other vendor words ("part"); a file that gives
# FP16/BF16 only ("bare").
PRESETS = {
    "full": """\
name: Full GPU
dense_fp16_tflops: 1000
memory_bandwidth_tbps: 4
structured_sparsity: true
unit_names: {tensor: tensor cores, vector: CUDA cores}
sources:
  - {title: Sheet, url: "https://example.com/full"}
peaks:
  tensor:
    fp8: {dense_tflops: 2000, sparse_tflops: 4000}
    fp4: {dense_tflops: 4000, sparse_tflops: 8000}
    int8: {dense_tflops: 2000, sparse_tflops: 4000}
    tf32: {dense_tflops: 500, sparse_tflops: 1000}
    fp64: {dense_tflops: 60, structured_sparsity: false}
  vector:
    fp32: {dense_tflops: 60}
    fp64: {dense_tflops: 30}
""",
    "part": """\
name: Part GPU
dense_fp16_tflops: 300
memory_bandwidth_tbps: 2
unit_names: {tensor: MXUs, vector: VPUs}
sources:
  - {title: Sheet, url: "https://example.com/part"}
peaks:
  tensor:
    fp8: none
    fp64: none
    int8: {dense_tflops: 600}
  vector:
    fp32: {dense_tflops: 20}
""",
    "bare": """\
name: Bare GPU
dense_fp16_tflops: 200
memory_bandwidth_tbps: 0.8
sources:
  - {title: Sheet, url: "https://example.com/bare"}
""",
}
PAGES = {
    "index.md": """\
        # Explorer

        ```roofline
        id: truth
        title: Every case
        kernels:
          - gemm:8192x8192x8192:bf16
          - gemm:16x8192x8192:bf16
          - add:16777216:bf16
          - softmax:8192x8192:bf16
          - attention:1x32x4096x128:bf16
          - gemm:4096x4096x4096:fp8
          - gemm:2048x2048x2048:fp8:sparse
          - layernorm:4096x4096:fp64
        ```

        ```roofline
        id: pair
        title: Two of them, sparse
        presets: [part, full]
        sparsity: true
        kernels:
          - gemm:8192x8192x8192:bf16
        ```
        """,
}


@dataclass(frozen=True)
class Site:
    url: str
    origin: str


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Site:
    work = tmp_path_factory.mktemp("truth")
    root = work / "root"
    root.mkdir()
    server = StaticServer(root).start()
    project = make_fixture(work / "project", PAGES, presets=PRESETS)
    build = run_build(project, root / "site")
    assert build.returncode == 0, build.output
    yield Site(f"{server.origin}/site/", server.origin)
    server.stop()


@pytest.fixture
def open_page(browser, site):
    watch = Watch()
    contexts = []

    def make(viewport: dict, scheme: str = "light") -> Page:
        context = browser.new_context(viewport=viewport, color_scheme=scheme)
        guard_requests(context, same_origin(site.origin), watch)
        contexts.append(context)
        page = watch.attach(context.new_page())
        page.goto(site.url)
        wait_until(page, "() => [...document.querySelectorAll('form.ainotes-explorer')]"
                         ".every(f => f.hasAttribute('data-ainotes-ready'))",
                   failure=f"{site.url}: the explorers did not become ready")
        return page

    yield make
    for context in contexts:
        context.close()
    assert watch.problems() == [], "\n".join(watch.problems())


# -- every state, checked where Vega drew it -----------------------------------------------------------

SWEEP_JS = """async ([id, states, minPx]) => {
  const figure = document.getElementById(id);
  const form = figure.querySelector('form.ainotes-explorer');
  const meta = JSON.parse(form.getAttribute('data-explorer'));
  const scheme = document.body.getAttribute('data-md-color-scheme') === 'slate' ? 'dark' : 'light';
  const spec = JSON.parse(figure.querySelector(`template[data-scheme="${scheme}"]`).content.textContent);
  const names = spec.data.map(d => d.name);
  const problems = [];
  const set = (name, value) => {
    const el = form.elements[name];
    if (!el) return;
    if (el.type === 'checkbox') el.checked = value; else el.value = value;
    el.dispatchEvent(new Event('change', {bubbles: true}));
  };
  const rate = text => {
    const m = /: ([\\d.,]+) ([kMGTPE]?)(?:FLOP|OP)\\/s/.exec(text);
    const scale = {'': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18};
    return m ? parseFloat(m[1].replace(/,/g, '')) * scale[m[2]] : NaN;
  };
  const legendValues = view => {
    const found = [];
    const walk = node => {
      if (!node) return;
      if (node.marktype && node.role === 'legend-label') node.items.forEach(i => found.push([i.datum.value, i.text]));
      (node.items || []).forEach(walk);
    };
    walk(view.scenegraph().root);
    return found;
  };
  let checked = 0;
  for (const s of states) {
    set('precision', s.precision); set('preset', s.preset); set('sparsity', s.sparsity); set('kmode', s.kmode);
    await window.__ainotesVegaCharts.settled(figure);
    const view = window.__ainotesRooflineView(id);
    const where = JSON.stringify(s);
    const visible = meta.ids.filter(i => s.preset === '*' || i === s.preset);
    const lacking = meta.missing[s.precision] || {};
    const drawn = visible.filter(i => !(i in lacking));
    const rows = names.flatMap(n => { try { return view.data(n).map(r => [n, r]); } catch (e) { return []; } });
    const lines = rows.filter(([, r]) => 'top' in r && 'bw' in r && 'style' in r).map(([, r]) => r);
    const marks = rows.filter(([, r]) => 'kk' in r || 'own_text' in r || 'batch_text' in r).map(([, r]) => r);
    const shown = [...new Set(lines.filter(r => r.style === 'shown').map(r => r.p))].sort();
    if (JSON.stringify(shown) !== JSON.stringify([...drawn].sort()))
      problems.push(`${where}: solid lines for ${shown}, expected ${drawn}`);
    for (const r of lines)
      if (!drawn.includes(r.p)) problems.push(`${where}: a line of ${r.p}, which draws nothing here`);
    for (const m of marks) {
      checked += 1;
      if (!drawn.includes(m.p)) { problems.push(`${where}: a mark of ${m.p}, which draws nothing here`); continue; }
      const on = lines.some(l => l.p === m.p && Math.abs(m.y - Math.min(l.top, l.bw * m.x)) <= 1e-9 * m.y);
      if (!on) problems.push(`${where}: ${m.kk ? 'kernel ' + m.kk : 'a reader\\'s mark'} on ${m.p} at `
                             + `(${m.x}, ${m.y}) lies on no line drawn for it`);
    }
    // The legends: one GPU entry per GPU the select shows; every line style drawn is named.
    const legend = legendValues(view);
    const gpuEntries = legend.filter(([v]) => meta.ids.includes(v));
    const gpuIds = gpuEntries.map(([v]) => v);
    if (JSON.stringify(gpuIds) !== JSON.stringify(visible)) problems.push(`${where}: GPU legend ${gpuIds}`);
    for (const [v, text] of gpuEntries) {
      const label = [].concat(text).join(' ');
      if ((v in lacking) !== label.includes('not drawn')) problems.push(`${where}: legend "${label}" for ${v}`);
    }
    const styles = new Set(legend.map(([v]) => v)
      .filter(v => typeof v === 'string' && (v === 'shown' || v === 'dense' || v.includes(':'))));
    for (const style of new Set(lines.map(l => l.style)))
      if (!styles.has(style)) problems.push(`${where}: a ${style} line the line key does not name`);
    // The readout: one line per GPU shown, each rate the line's value at the intensity read.
    const readout = [...form.querySelectorAll('[data-role=readout] li')].map(li => li.textContent);
    if (readout.length !== visible.length) problems.push(`${where}: readout has ${readout.length} lines`);
    const heading = form.querySelector('[data-role=readout] p').textContent;
    const x = view.signal('intensity');
    for (const id of visible) {
      const line = readout.find(t => t.startsWith(meta.names[id] + ':'));
      if (!line) { problems.push(`${where}: no readout line for ${id}`); continue; }
      if (id in lacking) { if (!line.includes('not drawn')) problems.push(`${where}: readout "${line}"`); continue; }
      const solid = lines.find(l => l.p === id && l.style === 'shown');
      const expected = Math.min(solid.top, solid.bw * x);
      if (!(Math.abs(rate(line) - expected) <= 5e-4 * expected))
        problems.push(`${where}: readout "${line}", line ${expected}`);
      if (s.precision.startsWith('vector') && /sparse/.test(line)) problems.push(`${where}: "sparse" in "${line}"`);
    }
    if (s.precision.startsWith('vector') && /sparse/.test(heading)) problems.push(`${where}: heading "${heading}"`);
    // The kernels' table shows the GPUs the select shows.
    const columns = [...figure.querySelectorAll('table.ainotes-kernel-bounds thead th[data-p]')]
      .filter(th => !th.hidden).map(th => th.getAttribute('data-p'));
    if (columns.length && JSON.stringify(columns) !== JSON.stringify(visible))
      problems.push(`${where}: table shows ${columns}`);
    // Every text in the chart reads at 11 px or more.
    const svg = figure.querySelector('.ainotes-chart__view svg');
    const scale = svg.getScreenCTM().a;
    for (const t of svg.querySelectorAll('text')) {
      if (!t.textContent.trim() || !t.getClientRects().length) continue;
      const px = parseFloat(getComputedStyle(t).fontSize) * scale;
      if (px < minPx - 0.01) problems.push(`${where}: "${t.textContent}" at ${px.toFixed(1)} px`);
    }
  }
  return {problems, checked};
}"""


def _states(page: Page, chart_id: str, *, every_gpu: bool) -> list[dict]:
    form = page.locator(f"#{chart_id} form.ainotes-explorer")
    roofs = form.locator("select[name=precision] option").evaluate_all("os => os.map(o => o.value)")
    gpus = form.locator("select[name=preset] option").evaluate_all("os => os.map(o => o.value)")
    return [{"precision": roof, "preset": gpu, "sparsity": sparse, "kmode": kmode}
            for roof, gpu, sparse, kmode in itertools.product(roofs, gpus if every_gpu else ["*"], (False, True),
                                                              ("own", "shown"))]


def _place_marks(page: Page, chart_id: str) -> None:
    """An FP8 GEMM (its own roof, not the one shown at first) and the batch GEMM, on every state."""
    form = page.locator(f"#{chart_id} form.ainotes-explorer")
    for name, value in (("m", "4096"), ("n", "4096"), ("k", "4096")):
        form.locator(f"input[name={name}]").fill(value)
    form.locator("select[name=dtype]").select_option("fp8")
    form.locator("button[value=gemm]").click()
    expect(form.locator("[data-role=own] p")).to_contain_text("Your GEMM 4096×4096×4096 fp8")
    form.locator("input[name=batch_on]").check()
    expect(form.locator("[data-role=batch] p")).to_contain_text("Decode projection")


@pytest.mark.parametrize("width", list(WIDTHS))
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_every_state_draws_only_what_is_true_and_reads_at_11px(open_page, width, scheme):
    page = open_page(WIDTHS[width], scheme)
    problems, checked = [], 0
    for chart_id in ("truth", "pair"):
        _place_marks(page, chart_id)
        # Every GPU choice once per layout; the other scheme and widths take all GPUs (the same layout).
        every_gpu = scheme == "light" and width != "tablet"
        found = page.evaluate(SWEEP_JS, [chart_id, _states(page, chart_id, every_gpu=every_gpu), MIN_TEXT_PX])
        problems += [f"{width} {scheme} {chart_id}: {p}" for p in found["problems"]]
        checked += found["checked"]
    assert not problems, "\n".join(problems[:40])
    assert checked > 200


def test_a_gpu_has_one_colour_on_both_charts(open_page):
    page = open_page(DESK)
    colours = page.evaluate("""() => Object.fromEntries(['truth', 'pair'].map(id => {
        const view = window.__ainotesRooflineView(id);
        const ids = view.signal('gpu_ids');
        return [id, Object.fromEntries(ids.map(i => [i, view.scale('color')(i)]))]; }))""")
    for preset_id, colour in colours["pair"].items():
        assert colours["truth"][preset_id] == colour, (preset_id, colours)
    assert len(set(colours["truth"].values())) == 3


# -- the controls do what their labels say ----------------------------------------------------------


def test_enter_acts_on_its_own_field_and_typing_redraws(open_page):
    page = open_page(DESK)
    form = page.locator("#truth form.ainotes-explorer")
    view = "window.__ainotesRooflineView('truth')"
    # Enter in "Or an intensity" places that intensity, even with M, N and K left empty.
    field = form.locator("input[name=own_intensity]")
    field.fill("300")
    field.press("Enter")
    expect(form.locator("[data-role=own] p")).to_have_text(
        re.compile(r"^Your kernel at 300 FLOP/byte, on the roof shown"))
    expect(form.locator("[data-role=own-message]")).to_have_text("")
    assert page.evaluate(f"{view}.signal('own_x')") == 300
    # Enter in a GEMM dimension places the GEMM.
    for name, value in (("m", "64"), ("n", "64"), ("k", "64")):
        form.locator(f"input[name={name}]").fill(value)
    form.locator("input[name=k]").press("Enter")
    expect(form.locator("[data-role=own] p")).to_contain_text("Your GEMM 64×64×64 bf16")
    # The intensity readout follows the typing, without Enter or leaving the field.
    typed = form.locator("input[name=intensity]")
    typed.click()
    typed.press("Control+A")
    typed.press_sequentially("42", delay=30)
    expect(form.locator("[data-role=readout] p")).to_have_text(re.compile(r"^At 42 FLOP/byte, "), timeout=3000)
    assert page.evaluate(f"{view}.signal('intensity')") == 42
    assert page.evaluate("document.activeElement.name") == "intensity"  # still typing there
    # A readout of a kernel's time: its FLOPs at the rate the chart reads (µs); a 64×64×64 GEMM's is far under
    # one kernel launch, which then bounds it, not the roof (issue 29).
    lines = [line for line in form.locator("[data-role=own] li").all_inner_texts() if "bound" in line]
    assert lines and all(re.search(rf", [\d.,]+ µs, {re.escape(LAUNCH_REMARK)}$", line) for line in lines), lines


def test_the_selects_are_on_screen_with_the_whole_plot_at_1280_px(open_page):
    """The form follows the chart in the page (it never covers the plot: tests/test_explorer_layout.py):
    on a desk, with the plot just under the header, the selects that redraw it are on screen too."""
    page = open_page(DESK)
    page.evaluate("() => window.scrollTo(0, document.querySelector('#truth .ainotes-chart__view svg')"
                  ".getBoundingClientRect().top + window.scrollY"
                  " - document.querySelector('.md-header').getBoundingClientRect().height)")
    state = page.evaluate("""() => {
      const form = document.querySelector('#truth form.ainotes-explorer');
      const view = window.__ainotesRooflineView('truth');
      const svg = document.querySelector('#truth .ainotes-chart__view svg').getBoundingClientRect();
      const [, oy] = view.origin();
      const selects = [...form.querySelectorAll('select[name=precision], select[name=preset], select[name=kmode],'
                                                + ' input[name=sparsity]')];
      return {plotTop: svg.top + oy, plotBottom: svg.top + oy + view.height(),
              header: document.querySelector('.md-header').getBoundingClientRect().bottom,
              formTop: form.getBoundingClientRect().top, height: window.innerHeight,
              selects: selects.map(e => [e.name, e.getBoundingClientRect().bottom])};
    }""")
    assert len(state["selects"]) == 4, state
    assert state["plotTop"] >= state["header"] - 1 and state["plotBottom"] <= state["formTop"], state
    off = [name for name, bottom in state["selects"] if bottom > state["height"] + 1]
    assert not off, state


# -- screenshots for a person --------------------------------------------------------------------------


@pytest.mark.screenshots  # what each state draws and reads: the tests above
@pytest.mark.parametrize("viewport", [PHONE, DESK], ids=["360", "1280"])
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_screenshots_with_the_selects_moved(open_page, viewport, scheme):
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page = open_page(viewport, scheme)
    form = page.locator("#truth form.ainotes-explorer")
    width = viewport["width"]

    def shot(name: str) -> Path:
        page.evaluate("() => window.scrollTo(0, document.getElementById('truth').getBoundingClientRect().top"
                      " + window.scrollY - document.querySelector('.md-header').getBoundingClientRect().height)")
        target = SCREENSHOTS / f"truth-{name}-{scheme}-{width}.png"
        page.screenshot(path=str(target))
        return target

    form.locator("select[name=precision]").select_option("tensor:fp64")
    page.evaluate("() => window.__ainotesVegaCharts.settled(document.getElementById('truth'))")
    shot("fp64-own-types")
    form.locator("select[name=kmode]").select_option("shown")
    form.locator("input[name=sparsity]").check()
    form.locator("select[name=precision]").select_option("tensor:fp8")
    _place_marks(page, "truth")
    page.evaluate("() => window.__ainotesVegaCharts.settled(document.getElementById('truth'))")
    shot("fp8-retyped-sparse")
    form.locator("select[name=preset]").select_option("part")
    page.evaluate("() => window.__ainotesVegaCharts.settled(document.getElementById('truth'))")
    assert shot("fp8-part-only").read_bytes().startswith(b"\x89PNG")
