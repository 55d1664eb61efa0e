"""The inference chart and table: a valid Vega-Lite spec whose arithmetic is the core's (in Python and in
the browser), the fences' one-line errors, and the chart in a built page at 360 and 1280 px, light and dark.

Fixed figures come from tests/fixtures/inference, so shipped presets can change freely.
"""

from __future__ import annotations

import html
import json
import math
import re
import shutil
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page

from ainotes import render
from ainotes.base import scripts
from ainotes.base.errors import InputError
from ainotes.build.site import NotesSite
from ainotes.charts import inference as chart
from ainotes.charts.figure import VegaFigure
from ainotes.core.inference import InferenceSetup
from ainotes.html import embed
from ainotes.markdown.extension import convert_page
from ainotes.presets.gpus import load_presets
from ainotes.presets.links import load_links
from ainotes.presets.models import load_models
from browser_support import DESK, PHONE, StaticServer, Watch, file_only, guard_requests, same_origin, wait_for_charts
from sitebuild import REPO, make_fixture, run_build
from vega_eval import vega_lite_errors

# One worker runs this file (xdist_group): its fixture site is built once.
pytestmark = pytest.mark.xdist_group("inference_chart")

FIXTURES = Path(__file__).parent / "fixtures" / "inference"
PRESETS = {p.id: p for p in load_presets(FIXTURES)}
MODELS = {m.id: m for m in load_models(FIXTURES / "models")}
LINKS = {link.id: link for link in load_links(FIXTURES / "links")}
SCREENSHOTS = REPO / "artifacts" / "screenshots"
PRECISIONS = ("bf16/bf16", "fp8/bf16", "fp8/fp8", "int4/fp8")
TPS = (1, 2, 8, 16)
CHOSEN_MODELS = ("lab-70b", "lab-moe", "lab-13b", "lab-mqa")
CHOSEN_PRESETS = ("lab-gpu", "lab-tpu", "lab-nocap")


def spec(theme: str = "light", **overrides: object) -> dict:
    kwargs: dict = {
        "model_id": "lab-70b", "preset_id": "lab-gpu", "context": 8192, "contexts": (1024, 8192, 131072),
        "precision": "bf16/bf16", "precisions": PRECISIONS, "compute_dtype": "bf16", "tp": 8, "tps": TPS,
        "theme": theme, **overrides}
    return chart.inference_spec([MODELS[m] for m in CHOSEN_MODELS], [PRESETS[p] for p in CHOSEN_PRESETS],
                                {(p, t): LINKS["lab-link"] for p in CHOSEN_PRESETS for t in TPS if t > 1}, **kwargs)


@pytest.fixture(scope="module")
def light() -> dict:
    return spec(cached=False)


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_spec_is_valid_vega_lite(theme: str) -> None:
    assert vega_lite_errors(spec(theme, cached=False)) == []


def test_themes_differ_in_config_only(light: dict) -> None:
    dark = spec("dark")
    assert {k: v for k, v in light.items() if k != "config"} == {k: v for k, v in dark.items() if k != "config"}


def test_cached_spec_equals_a_fresh_build(light: dict) -> None:
    assert spec() == light


def test_selects_offer_the_fences_choices(light: dict) -> None:
    params = {p["name"]: p for p in light["params"]}
    assert params["model"]["bind"]["options"] == list(CHOSEN_MODELS)
    assert params["gpu"]["bind"]["labels"] == [PRESETS[p].name for p in CHOSEN_PRESETS]
    assert params["context"]["bind"]["options"] == [1024, 8192, 131072]
    assert params["precision"]["bind"]["labels"][1] == "8-bit weights, BF16 KV cache"
    assert params["tp"]["bind"]["options"] == list(TPS)
    assert (params["model"]["value"], params["tp"]["value"], params["context"]["value"]) == ("lab-70b", 8, 8192)


def test_the_expressions_state_the_cores_formula(light: dict) -> None:
    text = json.dumps(light)
    for expression in (*chart.EXPRESSIONS.values(), *chart.MARK_EXPRESSIONS.values()):
        assert json.dumps(expression)[1:-1] in text


def _rows(spec_dict: dict) -> tuple[list[dict], dict[str, dict]]:
    """The setups, and per GPU and TP degree (``lab-gpu/8``) its row with its link's."""
    gpus = {g["g"]: g for g in spec_dict["datasets"]["gpus"]}
    return spec_dict["datasets"]["setups"], {link["gt"]: {**gpus[link["gt"].split("/")[0]], **link}
                                             for link in spec_dict["datasets"]["links"]}


@pytest.mark.parametrize("batch", [1, 7, 64, 295, 296, 4096])
@pytest.mark.parametrize("context", [1, 8192, 131072])
def test_the_expressions_equal_the_core_at_every_setting(light: dict, batch: int, context: int) -> None:
    rows, gpus = _rows(light)
    checked = 0
    for row in rows:
        if "text" in row:
            continue
        weights, kv = row["q"].split("/")
        for key, gpu in gpus.items():
            gpu_id, tp = key.split("/")
            if int(tp) != row["t"]:
                continue
            core = InferenceSetup(MODELS[row["m"]], PRESETS[gpu_id], batch=batch, context=context,
                                  weights_dtype=weights, kv_dtype=kv, tp=row["t"],
                                  link=LINKS["lab-link"] if row["t"] > 1 else None)
            drawn = chart.evaluate_expressions(row, gpu, batch=batch, context=context)
            step = core.decode_step()
            for name, expected in (("kv_s", step.kv_s), ("weights_s", step.weights_s),
                                   ("compute_s", step.compute_s), ("allreduce_s", step.allreduce_s),
                                   ("step_s", step.time_s), ("tokens_per_s", step.tokens_per_s),
                                   ("bstar", core.compute_bound_batch)):
                assert drawn[name] == pytest.approx(expected, rel=1e-8, abs=1e-15), (row, gpu_id, name)
            assert drawn.get("bmax") == core.max_batch, (row, gpu_id)
            checked += 1
    assert checked == len([r for r in rows if "text" not in r]) * len(CHOSEN_PRESETS)


def test_tp_degrees_the_heads_forbid_carry_the_cores_reason(light: dict) -> None:
    rows, _ = _rows(light)
    notes = {(r["m"], r["t"]): r["text"] for r in rows if "text" in r}
    # 40 heads: 16 does not divide them; the 64-head model takes every degree offered.
    assert notes[("lab-13b", 16)] == "TP 16 does not divide its 40 heads"
    assert not any(m == "lab-70b" for m, _ in notes)


def test_a_gpu_without_a_capacity_has_no_largest_batch(light: dict) -> None:
    _, gpus = _rows(light)
    assert "cap" not in gpus["lab-nocap/8"] and gpus["lab-gpu/8"]["cap"] == 80e9
    assert gpus["lab-gpu/1"]["alpha"] == 0 and gpus["lab-gpu/8"]["alpha"] == pytest.approx(LINKS["lab-link"].latency_s)


def test_static_render_marks_b_crit_and_the_largest_batch(light: dict) -> None:
    svg = render.svg(light)
    one = InferenceSetup(MODELS["lab-70b"], PRESETS["lab-gpu"], context=8192, tp=8, link=LINKS["lab-link"])
    assert f"compute-bound past B = {one.compute_bound_batch:,.0f}" in svg
    assert f"KV cache full past B = {one.max_batch:,}" in svg
    assert "memory-bound" in svg and "decode step" in svg


def test_the_phone_picture_takes_the_short_labels(light: dict) -> None:
    svg = render.svg(chart.narrow_static(light))
    assert "compute past 295" in svg and "compute-bound past" not in svg


@pytest.mark.parametrize(("overrides", "message"), [
    ({"model_id": "lab-7b"}, "the initial model 'lab-7b' is not among its choices"),
    ({"tp": 3}, "the initial tp 3 is not among its choices"),
    ({"precision": "fp4/fp4"}, "the initial precision 'fp4/fp4' is not among its choices"),
    ({"theme": "sepia"}, "'theme' must be 'light' or 'dark'"),
])
def test_bad_chart_requests_are_one_line(overrides: dict, message: str) -> None:
    with pytest.raises(InputError, match=re.escape(message)):
        spec(**overrides)


# --- the fences ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def site() -> NotesSite:
    return NotesSite(FIXTURES)


def page(site: NotesSite, text: str, src: str = "serve.md") -> str:
    return convert_page(site, text, src, "serve/")


def test_the_fence_draws_a_live_chart_with_its_embeds(site: NotesSite) -> None:
    out = page(site, "# Serve\n\n```inference\nmodels: [lab-70b, lab-13b]\nlink: lab-link\nid: serve\n```\n")
    assert 'class="ainotes-chart" id="serve"' in out
    assert out.count('<template class="ainotes-chart__spec"') == 2
    assert out.count("ainotes-chart__still--narrow") == 2  # a phone picture in each scheme
    chart_record = site.charts["serve"]
    assert chart_record.kind == "inference"
    assert chart_record.about == {"models": ["lab-70b", "lab-13b"], "presets": ["lab-gpu", "lab-nocap", "lab-tpu"],
                                  "compute_dtype": "bf16"}
    assert set(chart_record.files) == {"svg", "svg-dark", "png", "json", "html"}


def test_a_gpu_preset_an_author_adds_reaches_the_chart_without_naming_it(tmp_path: Path) -> None:
    """The fence lists no presets: a part added to the folder (here the lab GPU's figures as an
    H200-like 141 GB part) is among the GPUs the chart offers, and ``preset`` opens the chart on it."""
    folder = tmp_path / "presets"
    shutil.copytree(FIXTURES, folder)
    added = (FIXTURES / "lab-gpu.yaml").read_text(encoding="utf-8").replace(
        "name: Lab GPU (H100 SXM figures)", "name: Lab GPU 141").replace("memory_capacity_gb: 80",
                                                                         "memory_capacity_gb: 141")
    (folder / "lab-new.yaml").write_text(added, encoding="utf-8")
    added_site = NotesSite(folder)
    out = page(added_site, "# Serve\n\n```inference\nmodels: [lab-70b]\nlink: lab-link\npreset: lab-new\n"
                           "id: serve\n```\n")
    assert added_site.charts["serve"].about["presets"][0] == "lab-new"
    assert {"lab-gpu", "lab-new", "lab-tpu", "lab-nocap"} <= set(added_site.charts["serve"].about["presets"])
    light = json.loads(html.unescape(re.search(r'<template class="ainotes-chart__spec"[^>]*>(.*?)</template>',
                                               out, re.S).group(1)))
    gpu = next(s for s in light["signals"] if s["name"] == "gpu")
    assert gpu["value"] == "lab-new" and "lab-new" in gpu["bind"]["options"]
    assert "Lab GPU 141" in html.unescape(out.split("<figcaption", 1)[1])


@pytest.mark.parametrize(("body", "message"), [
    ("preset: lab-cpu\nlink: lab-link\n", "serve.md:4: 'preset' must be one of the chart's GPU presets ("),
    ("models: [lab-7b]\nlink: lab-link\n", "serve.md:4: unknown model 'lab-7b' (did you mean 'lab-70b'? "
     "known: lab-13b, lab-70b"),
    ("presets: [lab-nocap]\ncompute_dtype: fp8\nprecision: fp8/fp8\n",
     "serve.md:4: 'compute_dtype' fp8: preset lab-nocap has no FP8 tensor path (its peaks: "),
    ("precision: fp8-bf16\n", "serve.md:4: 'precision' must be WEIGHTS/KV dtypes such as fp8/bf16"),
    ("precision: bf16/bf16\ncompute_dtype: fp8\npresets: [lab-gpu]\n",
     "serve.md:4: 'precision' bf16/bf16: the weights are wider than the fp8 compute dtype"),
    ("metric: speed\n", "serve.md:4: 'metric' must be one of time, tokens-per-second: 'speed'"),
    ("tp: two\n", "serve.md:4: 'tp' must be a whole number from 1 to 1024: 'two'"),
    ("contexts: 4096\n", "serve.md:4: 'contexts' must be a non-empty list: 4096"),
    ("link: nvlink-9\n", "serve.md:4: unknown link 'nvlink-9' (known: lab-link, lab-slow)"),
    ("presets: [lab-nocap]\ntp: 2\n", "serve.md:3: tensor parallelism needs a link preset"),
    ("presets: [lab-cpu]\n", "serve.md:4: unknown preset 'lab-cpu'"),
    ("colour: red\n", "serve.md:4: unknown key 'colour' in inference fence"),
])
def test_inference_fence_errors_name_page_and_line(site: NotesSite, body: str, message: str) -> None:
    with pytest.raises(InputError) as caught:
        page(site, f"# Serve\n\n```inference\n{body}```\n")
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_the_table_puts_each_model_on_each_gpu(site: NotesSite) -> None:
    out = page(site, "```inference-table\nmodels: [lab-70b, lab-13b]\npresets: [lab-gpu, lab-nocap]\n"
                     "context: 8192\ntp: 2\nlink: lab-link\n```\n")
    text = html.unescape(re.sub(r"<[^>]+>", " ", out))
    seventy = InferenceSetup(MODELS["lab-70b"], PRESETS["lab-gpu"], context=8192, tp=2, link=LINKS["lab-link"])
    assert f"fits {seventy.max_batch:,}" in text and "compute past 295" in text
    assert f"<strong>fits {seventy.max_batch:,}</strong>" in out  # the KV cache runs out first
    assert "capacity not given" in text  # the GPU without a capacity


def test_the_table_finds_the_fewest_chips_that_hold_a_model(site: NotesSite) -> None:
    out = page(site, "```inference-table\nmodels: [lab-70b]\npresets: [lab-gpu]\nlink: lab-link\n```\n")
    assert "2 chips" in out  # 141 GB of weights: one 80 GB chip is not enough


@pytest.mark.parametrize(("body", "message"), [
    ("tp: many\n", "serve.md:2: 'tp' must be a whole number"),
    ("models: 5\n", "serve.md:2: 'models' must be a list of model preset ids: 5"),
    ("models: [lab-7b]\nlink: lab-link\n", "serve.md:2: unknown model 'lab-7b'"),
    ("weights_dtype: fp6\n", "serve.md:2: 'weights_dtype' must be one of"),
])
def test_table_fence_errors_name_page_and_line(site: NotesSite, body: str, message: str) -> None:
    with pytest.raises(InputError) as caught:
        page(site, f"```inference-table\n{body}```\n")
    assert message in str(caught.value)


def test_names_are_escaped(tmp_path: Path) -> None:
    presets = shutil.copytree(FIXTURES, tmp_path / "presets")
    text = (presets / "models" / "lab-13b.yaml").read_text(encoding="utf-8")
    (presets / "models" / "lab-13b.yaml").write_text(text.replace("name: Lab 13B (LLaMA-2-13B architecture)",
                                                                  "name: Lab <b>13B</b> & co"), encoding="utf-8")
    hostile = NotesSite(presets)
    out = page(hostile, "```inference-table\nmodels: [lab-13b]\npresets: [lab-gpu]\n```\n\n"
                        "```inference\nmodels: [lab-13b]\npresets: [lab-gpu]\nlink: lab-link\n```\n")
    assert "<b>13B</b>" not in out and "Lab &lt;b&gt;13B&lt;/b&gt; &amp; co" in out


# --- in the browser -----------------------------------------------------------------------------------

PAGE = """\
# Serving

```inference
models: [lab-70b, lab-moe, lab-13b]
presets: [lab-gpu, lab-tpu, lab-nocap]
contexts: [1024, 8192, 131072]
context: 8192
tps: [1, 2, 8, 16]
tp: 8
link: lab-link
id: serve
```
"""


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = make_fixture(tmp_path_factory.mktemp("inference-site"), {"index.md": PAGE}, presets={})
    shutil.copytree(FIXTURES, root / "presets", dirs_exist_ok=True)
    build = run_build(root)
    assert build.returncode == 0, build.output
    return build.site


VIEW_DATA_JS = """async ([state]) => {
  const spec = JSON.parse(document.querySelector('template.ainotes-chart__spec').content.textContent);
  const view = new vega.View(vega.parse(spec), {renderer: 'none'});
  for (const [name, value] of Object.entries(state)) view.signal(name, value);
  await view.runAsync();
  const steps = {}, marks = {};
  for (const name of Object.keys(view._runtime.data)) {
    let rows;
    try { rows = view.data(name); } catch (e) { continue; }
    for (const row of rows || []) {
      if (row.series_key === 'step_fit_s' || row.series_key === 'over_s') steps[row.batch] = row.seconds;
      if ('bstar' in row && row.log_batch === 0) marks.bstar = row.bstar, marks.bmax = row.bmax;
    }
  }
  view.finalize();
  return {steps, marks};
}"""

STATES = [
    {"model": "lab-70b", "gpu": "lab-gpu", "context": 8192, "precision": "bf16/bf16", "tp": 8},
    {"model": "lab-moe", "gpu": "lab-tpu", "context": 1024, "precision": "fp8/fp8", "tp": 1},
    {"model": "lab-13b", "gpu": "lab-nocap", "context": 131072, "precision": "int4/fp8", "tp": 2},
    {"model": "lab-70b", "gpu": "lab-gpu", "context": 1024, "precision": "fp8/bf16", "tp": 16},
]


@pytest.mark.browser
def test_the_browsers_arithmetic_is_the_cores(browser: Browser, tmp_path: Path) -> None:
    path = tmp_path / "inference.html"
    path.write_text(embed.standalone_html(VegaFigure(spec(), None), title="inference"), encoding="utf-8")
    watch = Watch()
    context = browser.new_context(viewport=DESK)
    guard_requests(context, file_only, watch)
    page_ = watch.attach(context.new_page())
    page_.goto(path.as_uri())
    for state in STATES:
        data = page_.evaluate(VIEW_DATA_JS, [{**state, "metric": "time"}])
        weights, kv = state["precision"].split("/")
        core = {"model": MODELS[state["model"]], "preset": PRESETS[state["gpu"]], "context": state["context"],
                "weights_dtype": weights, "kv_dtype": kv, "tp": state["tp"],
                "link": LINKS["lab-link"] if state["tp"] > 1 else None}
        # batch 1 to 16,384, four (whole) points per doubling
        assert {int(b) for b in data["steps"]} == {round(2 ** (i / 4)) for i in range(4 * 14 + 1)}
        for batch, seconds in data["steps"].items():
            expected = InferenceSetup(batch=int(batch), **core).decode_step().time_s
            assert seconds == pytest.approx(expected, rel=1e-8), (state, batch)
        one = InferenceSetup(**core)
        assert data["marks"]["bstar"] == pytest.approx(one.compute_bound_batch, rel=1e-8)
        if one.max_batch is None:  # no capacity: no number, so no mark
            assert math.isnan(data["marks"]["bmax"])
        else:
            assert data["marks"]["bmax"] == one.max_batch
    context.close()
    assert watch.problems() == []


_DARK_TEXT = chart.THEME.config("dark")["style"]["mark-label"]["color"]

TEXT_SIZES_JS = """(id) => {
  const svg = document.querySelector('#' + id + ' .ainotes-chart__view svg');
  const scale = svg.getBoundingClientRect().width / svg.width.baseVal.value;
  return [...svg.querySelectorAll('text')].filter(t => t.textContent.trim() && t.getClientRects().length)
    .map(t => [t.textContent, parseFloat(getComputedStyle(t).fontSize) * scale]);
}"""


def _live_text(page_: Page) -> str:
    return page_.evaluate("() => document.querySelector('#serve .ainotes-chart__view svg').textContent")


def _wait_for_text(page_: Page, text: str) -> None:
    page_.wait_for_function("(t) => document.querySelector('#serve .ainotes-chart__view svg')"
                            ".textContent.includes(t)", arg=text, timeout=20_000)


def _caption(page_: Page) -> str:
    return page_.locator("#serve [data-live-caption]").inner_text()


@pytest.mark.browser
def test_title_legend_and_caption_follow_the_selects(browser: Browser, built: Path) -> None:
    """The caption names the model, GPU and TP degree shown, with the core's figures (the same words as
    the page's first view); the title says time or tokens per second; the legend lists the lines drawn."""
    server = StaticServer(built).start()
    context = browser.new_context(viewport=DESK)
    page_ = context.new_page()
    try:
        page_.goto(server.origin + "/")
        wait_for_charts(page_)
        seventy = InferenceSetup(MODELS["lab-70b"], PRESETS["lab-gpu"], batch=1, context=8192, tp=8,
                                 link=LINKS["lab-link"])
        first = chart.caption_sentences(MODELS["lab-70b"], PRESETS["lab-gpu"], seventy, LINKS["lab-link"])
        static = html.unescape(re.sub(r"<[^>]+>", "", page_.locator("#serve [data-live-caption]").inner_html()))
        assert static == first and _caption(page_) == first
        assert "Lab 70B" in first and PRESETS["lab-gpu"].name in first and "over 8 chips" in first
        page_.select_option("#serve select[name='model']", "lab-13b")
        page_.select_option("#serve select[name='tp']", "1")
        page_.select_option("#serve select[name='gpu']", "lab-tpu")
        thirteen = InferenceSetup(MODELS["lab-13b"], PRESETS["lab-tpu"], batch=1, context=8192, tp=1)
        page_.wait_for_function("(t) => document.querySelector('#serve [data-live-caption]').textContent === t",
                                arg=chart.caption_sentences(MODELS["lab-13b"], PRESETS["lab-tpu"], thirteen, None),
                                timeout=20_000)
        assert f"past B = {thirteen.compute_bound_batch:,.0f}" in _caption(page_)
        page_.select_option("#serve select[name='metric']", "tokens-per-second")
        _wait_for_text(page_, "tokens per second against batch size")
        texts = _live_text(page_)
        assert "tokens/s of one chip" in texts
        for gone in [title for key, title in chart.SERIES if key != "step_s"]:
            assert gone not in texts, gone  # lines tokens per second does not draw
        page_.select_option("#serve select[name='model']", "lab-70b")
        page_.select_option("#serve select[name='tp']", "8")
        _wait_for_text(page_, "tokens/s of 8 chips together (÷ 8 per chip)")
    finally:
        context.close()
        server.stop()


@pytest.mark.browser
@pytest.mark.parametrize("viewport", [PHONE, DESK], ids=["360", "1280"])
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_chart_in_a_page(browser: Browser, built: Path, viewport: dict, scheme: str) -> None:
    server = StaticServer(built).start()
    watch = Watch()
    context = browser.new_context(viewport=viewport, color_scheme=scheme)
    guard_requests(context, same_origin(server.origin), watch)
    page_ = watch.attach(context.new_page())
    try:
        page_.goto(server.origin + "/")
        wait_for_charts(page_)
        if scheme == "dark":  # the fixture's palette does not follow the system: switch it as a reader does
            page_.click("label[for='__palette_1']")
            page_.wait_for_function("() => document.body.getAttribute('data-md-color-scheme') === 'slate'")
            wait_for_charts(page_)
            page_.wait_for_function("(c) => [...document.querySelectorAll('#serve .ainotes-chart__view svg text')]"
                                    ".some(t => (t.getAttribute('fill') || '').toLowerCase() === c)",
                                    arg=_DARK_TEXT, timeout=20_000)
        width = viewport["width"]
        name = f"{scheme}-{width}"
        assert page_.evaluate("() => document.documentElement.scrollWidth") <= width
        small = [(t, px) for t, px in page_.evaluate(TEXT_SIZES_JS, "serve") if px < 11 - 0.01]
        assert small == [], small
        seventy = InferenceSetup(MODELS["lab-70b"], PRESETS["lab-gpu"], context=8192, tp=8, link=LINKS["lab-link"])
        short = width < 600
        assert (f"past {'' if short else 'B = '}{seventy.compute_bound_batch:,.0f}") in _live_text(page_)
        # The plot and every select on screen together.
        figure = page_.locator("#serve")
        figure.scroll_into_view_if_needed()
        page_.evaluate("() => document.querySelector('#serve .ainotes-chart__box').scrollIntoView()")
        top = page_.evaluate("() => document.querySelector('#serve .ainotes-chart__box').getBoundingClientRect().top")
        bottom = page_.evaluate("() => Math.max(...[...document.querySelectorAll('#serve select')]"
                                ".map(s => s.getBoundingClientRect().bottom))")
        assert bottom - top <= viewport["height"] - 48, (top, bottom)  # under Material's header
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        figure.screenshot(path=str(SCREENSHOTS / f"inference-chart-{name}.png"))
        # Move the selects: a mixture of experts turns compute-bound later; no capacity, no fit mark.
        moe = InferenceSetup(MODELS["lab-moe"], PRESETS["lab-gpu"], context=8192, tp=8, link=LINKS["lab-link"])
        page_.select_option("#serve select[name='model']", "lab-moe")
        _wait_for_text(page_, f"{moe.compute_bound_batch:,.0f}")
        page_.select_option("#serve select[name='gpu']", "lab-nocap")
        page_.wait_for_function("() => !document.querySelector('#serve .ainotes-chart__view svg')"
                                ".textContent.includes('full past')", timeout=20_000)
        page_.select_option("#serve select[name='model']", "lab-13b")
        page_.select_option("#serve select[name='tp']", "16")
        _wait_for_text(page_, "does not divide its 40 heads")
        page_.select_option("#serve select[name='tp']", "1")
        page_.select_option("#serve select[name='gpu']", "lab-tpu")
        _wait_for_text(page_, "16 GiB")
        page_.select_option("#serve select[name='metric']", "tokens-per-second")
        _wait_for_text(page_, "tok/s")
        figure.screenshot(path=str(SCREENSHOTS / f"inference-chart-moved-{name}.png"))
        small = [(t, px) for t, px in page_.evaluate(TEXT_SIZES_JS, "serve") if px < 11 - 0.01]
        assert small == [], small
    finally:
        context.close()
        server.stop()
    assert watch.problems() == []


def test_the_chart_weighs_tens_of_kilobytes(light: dict) -> None:
    # Four models × four weight/KV choices × four TP degrees (dense, expert, window and per-algorithm
    # all-reduce coefficients) and three GPUs at four degrees: coefficients, not a grid of batches.
    assert len(json.dumps(light["datasets"])) < 20_000
    # The compiled view, its expressions included (the caption's sentences and the titles follow the selects).
    assert len(scripts.script_json(render.vega(render.responsive(light)))) < 48_000
