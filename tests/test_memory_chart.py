"""The training-memory chart, its fences and inline forms: a valid Vega-Lite spec whose numbers are the core's.

The chart's Vega expressions are evaluated in a real Vega (vl-convert's, through its scenegraph) at
sampled states and compared with :mod:`ainotes.core.memory`; its static pictures are read for the core's
figures; the fences and forms are checked for their one-line errors. Fixture presets only
(tests/fixtures/memory), so adding a shipped model or GPU changes nothing here.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import itertools
import json
import re
from pathlib import Path
from typing import Any

import pytest
import vl_convert as vlc
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ainotes import render
from ainotes.base import units
from ainotes.base.errors import InputError
from ainotes.charts import memory as chart
from ainotes.charts import memory as memory_chart
from ainotes.core import memory
from ainotes.core.memory import TrainingMemory
from ainotes.fences import memory_fit_table, training_memory
from ainotes.fences.body import Fence
from ainotes.inline import memory as memory_forms
from ainotes.inline.formcontext import FormContext
from ainotes.presets.gpus import load_presets
from ainotes.presets.models import load_models
from vega_eval import vega_lite_errors

# One worker runs this file (xdist_group): its fixture site is built once.
pytestmark = pytest.mark.xdist_group("memory_chart")

FIXTURES = Path(__file__).parent / "fixtures" / "memory"
MODELS = {m.id: m for m in load_models(FIXTURES / "models")}
PRESETS = {p.id: p for p in load_presets(FIXTURES)}
WITH_CAPACITY = tuple(p for p in PRESETS.values() if p.memory_capacity_bytes is not None)
# A model whose 40 heads no tensor-parallel degree of 16 divides (LLaMA-2-13B's shape, fixture id).
ODD = dataclasses.replace(MODELS["gqa-like"], id="odd-heads", name="Odd heads", heads=40, kv_heads=40,
                          d_model=5120, d_ff=13824, layers=40, published_params=13e9)
ALL_MODELS = (*MODELS.values(), ODD)


def first_view(model_id: str = "gpt-like", **fields: Any) -> TrainingMemory:
    values = {**training_memory.CHART_DEFAULTS, **fields}
    return TrainingMemory.from_fields({"model": model_id, **values}, {m.id: m for m in ALL_MODELS}, PRESETS)


@functools.cache
def spec_for(optimizer: str = "adam", fp32_grad_accum: bool = False, dropout: bool | None = None,
             theme: str = "light") -> dict:
    config = first_view(optimizer=optimizer, fp32_grad_accum=fp32_grad_accum, dropout=dropout)
    return chart.memory_spec(ALL_MODELS, WITH_CAPACITY, config, theme=theme)  # type: ignore[arg-type]


def scenegraph_texts(spec: dict) -> list[str]:
    graph = vlc.vegalite_to_scenegraph(spec, vl_version=render.vega_lite_version(spec))
    texts: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if node.get("marktype") == "text":
                for item in node.get("items", []):
                    text = item.get("text")
                    texts.append(" ".join(text) if isinstance(text, list) else str(text))
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(graph)
    return texts


def with_state(spec: dict, state: dict[str, Any]) -> dict:
    spec = copy.deepcopy(spec)
    for param in spec["params"]:
        if param["name"] in state:
            param["value"] = state[param["name"]]
    return spec


def probe(spec: dict, state: dict[str, Any]) -> dict[int, dict[str, float]]:
    """Each stage's parts as the chart's own transforms compute them in Vega, at full precision."""
    spec = with_state(spec, state)
    spec.pop("title")
    (totals,) = [layer for layer in spec["layer"] if layer["mark"].get("style") == "total-label"]
    steps = totals["transform"]
    cut = next(i for i, step in enumerate(steps) if "filter" in step) + 1  # the parts and the validity filter
    fields = ["stage", *chart.PARTS, "logits", "total"]
    spec["layer"] = [{
        "data": totals["data"],
        "transform": [*steps[:cut], {"calculate": "join([" + ", ".join(f"datum.{f}" for f in fields) + "], '|')",
                                     "as": "probe"}],
        "mark": {"type": "text"},
        "encoding": {"text": {"field": "probe", "type": "nominal"}},
    }]
    rows = {}
    for text in scenegraph_texts(spec):
        values = [float(v) for v in text.split("|")]
        rows[int(values[0])] = dict(zip(fields[1:], values[1:], strict=True))
    return rows


# --- the spec ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_spec_is_valid_vega_lite(theme: str) -> None:
    assert vega_lite_errors(spec_for(theme=theme)) == []


def test_themes_differ_in_config_only() -> None:
    light, dark = spec_for(), spec_for(theme="dark")
    assert {k: v for k, v in light.items() if k != "config"} == {k: v for k, v in dark.items() if k != "config"}
    body = json.dumps({k: v for k, v in light.items() if k != "config"})
    assert not re.search(r"#[0-9a-fA-F]{6}", body), "colours belong in config"


def test_cached_spec_equals_a_fresh_build() -> None:
    config = first_view()
    assert chart.memory_spec(ALL_MODELS, WITH_CAPACITY, config, cached=False) == spec_for()


def test_selects_offer_every_model_and_the_choices_of_the_fence() -> None:
    params = {p["name"]: p for p in spec_for()["params"]}
    assert params["model"]["bind"]["options"] == [m.id for m in ALL_MODELS]
    assert params["model"]["bind"]["labels"] == [m.name for m in ALL_MODELS]
    assert params["zero"]["bind"]["options"] == [0, 1, 2, 3]
    assert params["dp"]["bind"]["options"] == list(memory_chart.DP_CHOICES)
    assert params["tp"]["bind"]["options"] == list(memory_chart.TP_CHOICES)
    assert params["seq"]["bind"]["options"] == list(memory_chart.SEQ_LEN_CHOICES)
    assert params["recompute"]["bind"]["options"] == ["none", "selective", "full"]
    assert params["attention"]["bind"]["options"] == ["standard", "fused"]
    assert params["sp"]["bind"]["input"] == "checkbox"
    assert {k: params[k]["value"] for k in ("model", "zero", "dp", "mb", "seq")} == {
        "model": "gpt-like", "zero": 0, "dp": 8, "mb": 1, "seq": 2048}


def test_page_weight_stays_small() -> None:
    spec = spec_for()
    data = len(json.dumps(spec["datasets"], separators=(",", ":")))
    assert data < 12_000, data  # five models, five GPUs: a few kB
    # The layers' shared expressions repeat in each (an axis per state and a live caption took it from 40 kB).
    assert len(json.dumps(spec, separators=(",", ":"))) < 48_000


def test_expressions_are_written_from_the_cores_constants() -> None:
    text = json.dumps(spec_for())
    for part, stage in memory.SHARDED_FROM_STAGE.items():
        assert json.dumps(chart.part_expression(part))[1:-1] in text
        assert f"datum.stage >= {stage} ? dp : 1" in chart.part_expression(part)
    params = {p["name"]: p["value"] for p in spec_for(optimizer="sgd", fp32_grad_accum=True)["params"]}
    assert params["bpp"] == {"weights": 2, "gradients": 6, "optimizer": 8}


# --- the expressions, evaluated in Vega, against the core ---------------------------------------------

STATES = st.fixed_dictionaries({
    "model": st.sampled_from([m.id for m in ALL_MODELS]),
    "zero": st.sampled_from(memory_chart.ZERO_CHOICES),
    "dp": st.sampled_from(memory_chart.DP_CHOICES),
    "tp": st.sampled_from(memory_chart.TP_CHOICES),
    "pp": st.sampled_from(memory_chart.PP_CHOICES),
    "mb": st.sampled_from(memory_chart.MICRO_BATCH_CHOICES),
    "seq": st.sampled_from(memory_chart.SEQ_LEN_CHOICES),
    "recompute": st.sampled_from(memory.RECOMPUTE_MODES),
    "attention": st.sampled_from(memory.ATTENTIONS),
    "sp": st.booleans(),
})
CHART_OPTIONS = st.tuples(st.sampled_from(memory.OPTIMIZERS), st.booleans(), st.booleans())


# make test draws a sample of the states; make test-matrix many more (each example is a Vega evaluation).
SAMPLED = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
MANY = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SAMPLED
@given(state=STATES, options=CHART_OPTIONS)
def test_vega_computes_what_the_core_computes(state: dict[str, Any], options: tuple[str, bool, bool]) -> None:
    vega_against_core(state, options)


@pytest.mark.matrix
@MANY
@given(state=STATES, options=CHART_OPTIONS)
def test_vega_computes_what_the_core_computes_at_many_more_states(state: dict[str, Any],
                                                                   options: tuple[str, bool, bool]) -> None:
    vega_against_core(state, options)


def vega_against_core(state: dict[str, Any], options: tuple[str, bool, bool]) -> None:
    optimizer, accum, dropout = options
    drawn = probe(spec_for(optimizer, accum, dropout), state)
    models = {m.id: m for m in ALL_MODELS}
    fields = {"model": state["model"], "dp": state["dp"], "tp": state["tp"], "pp": state["pp"],
              "micro_batch": state["mb"], "seq_len": state["seq"], "recompute": state["recompute"],
              "attention": state["attention"], "sequence_parallel": state["sp"], "optimizer": optimizer,
              "fp32_grad_accum": accum, "dropout": dropout}
    try:
        config = TrainingMemory.from_fields(fields, models, PRESETS)
    except InputError:
        assert drawn == {}  # the core refuses it: the chart draws no bars
        return
    assert sorted(drawn) == [0, 1, 2, 3]
    for stage, parts in drawn.items():
        estimate = config.with_zero(stage).estimate()
        for part in chart.PARTS:
            assert parts[part] == pytest.approx(estimate.part(part), rel=1e-9), (stage, part)
        assert parts["total"] == pytest.approx(estimate.total_bytes, rel=1e-9)
        assert parts["logits"] == pytest.approx(estimate.logits_bytes, rel=1e-9)


def test_the_zero_papers_example_in_vega() -> None:
    # Ψ = 7.5 B is no model preset, but the model states scale with Ψ alone: read them per parameter.
    state = {"model": "gqa-like", "dp": 64, "tp": 1, "pp": 1}
    drawn = probe(spec_for(), state)
    per_param = {s: sum(drawn[s][p] for p in ("weights", "gradients", "optimizer")) / MODELS["gqa-like"].params
                 for s in drawn}
    assert [round(per_param[s] * 7.5e9 / 1e9, 1) for s in range(4)] == [120, 31.4, 16.6, 1.9]


def test_a_refused_configuration_shows_the_cores_message_and_no_bars() -> None:
    spec = with_state(spec_for(), {"model": "odd-heads", "tp": 16})
    texts = " ".join(scenegraph_texts(spec))
    assert "Tensor parallel 16 must divide odd-heads's 40" in texts
    assert "GB per GPU" in texts  # the axis title stays
    assert not re.search(r"ZeRO \d: ", texts)
    svg = render.svg(spec)
    assert "attention heads" in svg


# --- the pictures -----------------------------------------------------------------------------------


def test_static_picture_states_the_cores_figures() -> None:
    config = first_view("gpt-like", zero=3, dp=64, tp=8, pp=8, micro_batch=1, seq_len=2048,
                        recompute="selective", sequence_parallel=True)
    spec = chart.memory_spec(ALL_MODELS, WITH_CAPACITY, config, cached=False)
    texts = scenegraph_texts(spec)
    estimate = config.estimate()
    assert f"ZeRO 3: {units.amount_text(estimate.total_bytes / 1e9)} GB per GPU" in texts
    assert f"+ logits {units.amount_text(estimate.logits_bytes / 1e9)} GB (FP32, not drawn)" in texts
    fitting = sorted(p.id for p in WITH_CAPACITY if dataclasses.replace(config, preset=p).estimate().fits)
    (fits_line,) = [t for t in texts if t.startswith("fits")]
    listed, _, above = fits_line.removeprefix("fits ").partition(" (")
    assert sorted(listed.split(", ")) == fitting
    # The capacities over the axis top (all of which hold the bar) are counted, not drawn.
    drawn = [p for p in WITH_CAPACITY if any(t.endswith(" " + p.id) for t in texts)]
    assert above == (f"{len(WITH_CAPACITY) - len(drawn)} above the axis)" if len(drawn) < len(WITH_CAPACITY) else "")
    for stage in range(4):
        total = config.with_zero(stage).estimate().total_bytes / 1e9
        label = units.amount_text(min(total, 1e9))
        assert any(label in t.split(" ") for t in texts), (stage, label)  # a clipped one: "↑" over its figure
    for preset in drawn:
        assert any(preset.id in t and (preset.memory_capacity_label or "").split(" (")[0] in t for t in texts)


def test_capacities_printed_in_gib_keep_their_unit_and_equal_ones_share_a_line() -> None:
    twin = dataclasses.replace(PRESETS["card-80"], id="card-80-twin", name="Card Eighty Twin")
    rows = chart.gpu_rows([*WITH_CAPACITY, twin])
    assert [r["cap"] for r in rows] == ["16 GiB", "24 GB", "80 GB"]
    assert rows[0]["gb"] == pytest.approx(16 * 2**30 / 1e9)
    assert rows[2]["ids"] == "card-80 · card-80-twin"


CAPACITIES = st.lists(st.floats(min_value=4, max_value=200), min_size=2, max_size=6, unique=True)
HEIGHTS = st.sampled_from([200, 300, 500])


@settings(SAMPLED, max_examples=5)
@given(capacities=CAPACITIES, height=HEIGHTS)
def test_capacity_labels_never_overlap(capacities: list[float], height: int) -> None:
    capacity_labels_apart(capacities, height)


@pytest.mark.matrix
@settings(MANY, max_examples=40)
@given(capacities=CAPACITIES, height=HEIGHTS)
def test_capacity_labels_never_overlap_at_many_more_layouts(capacities: list[float], height: int) -> None:
    capacity_labels_apart(capacities, height)


def capacity_labels_apart(capacities: list[float], height: int) -> None:
    presets = [dataclasses.replace(PRESETS["card-80"], id=f"card-{i}", name=f"Card {i}",
                                   memory_capacity_bytes=gb * 1e9) for i, gb in enumerate(capacities)]
    spec = chart.memory_spec(ALL_MODELS, presets, first_view(), cached=False)
    spec = {**spec, "height": height, "autosize": {"type": "pad"}}
    graph = vlc.vegalite_to_scenegraph(spec, vl_version=render.vega_lite_version(spec))
    ys: list[float] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if node.get("marktype") == "text":
                ys.extend(item["y"] + item.get("dy", 0) for item in node.get("items", [])
                          if str(item.get("text", "")).endswith(tuple(p.id for p in presets)))
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(graph)
    ys.sort()
    assert len(ys) == len(capacities)
    assert all(b - a >= chart.LABEL_LINE_PX - 0.01 for a, b in itertools.pairwise(ys)), ys


@pytest.mark.parametrize("narrow", [False, True])
def test_text_is_eleven_pixels_or_more(narrow: bool) -> None:
    spec = chart.narrow_spec(spec_for()) if narrow else spec_for()
    sizes = [float(s) for s in re.findall(r'font-size="([\d.]+)px"', render.svg(spec))]
    assert sizes and min(sizes) >= 11
    if narrow:
        assert render.svg_size(render.svg(spec))[0] <= chart.NARROW_WIDTH_PX + 1


def test_caption_states_the_first_view_and_escapes() -> None:
    hostile = dataclasses.replace(MODELS["gpt-like"], name="<b>GPT</b>")
    config = TrainingMemory(model=hostile, dp=8, micro_batch=1, seq_len=2048)
    caption = chart.caption_html(config, WITH_CAPACITY)
    assert "&lt;b&gt;GPT&lt;/b&gt;" in caption and "<b>" not in caption
    assert f"{units.amount_text(config.estimate().total_bytes / 1e9)} GB per GPU" in caption
    assert "logits" in caption and "fragmentation" in caption and "As first drawn" not in caption
    assert caption.startswith('<span class="ainotes-live-caption" data-live-caption')


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"theme": "sepia"}, "'theme' must be 'light' or 'dark'"),
        ({"title": "bad\x01title"}, "control character"),
        ({"config": first_view(dp=3)}, "'dp' must be one of 1, 2, 4"),
        ({"config": TrainingMemory(model=MODELS["gpt-like"])}, "needs a micro-batch and a sequence length"),
        ({"presets": ()}, "needs at least one model and one GPU"),
        ({"presets": (PRESETS["card-nocap"],)}, "preset card-nocap gives no memory capacity"),
    ],
)
def test_bad_chart_requests_are_one_clear_error(kwargs: dict, message: str) -> None:
    args = {"config": first_view(), "presets": WITH_CAPACITY, **kwargs}
    with pytest.raises(InputError, match=re.escape(message)):
        chart.memory_spec(ALL_MODELS, args.pop("presets"), args.pop("config"), cached=False, **args)


# --- fences -----------------------------------------------------------------------------------------


def fence(kind: str, body: str) -> Fence:
    return Fence(kind, body, start_line=10)


def test_training_memory_fence_reads_its_keys() -> None:
    request = training_memory.parse_training_memory(fence("training-memory", """\
models: [gqa-like, gpt-like]
model: gpt-like
presets: [card-80, card-24]
zero: 2
dp: 64
tp: 8
micro_batch: 2
seq_len: 4096
recompute: selective
sequence_parallel: true
optimizer: adam-8bit
title: Mine
id: my-memory
"""), "page.md", PRESETS)
    assert request.model_ids == ("gqa-like", "gpt-like") and request.model_id == "gpt-like"
    assert request.preset_ids == ("card-80", "card-24")
    assert request.fields["dp"] == 64 and request.fields["optimizer"] == "adam-8bit"
    assert request.fields["attention"] == "standard"  # the default
    models, initial = training_memory.resolve_models(request, MODELS)
    assert [m.id for m in models] == ["gqa-like", "gpt-like"] and initial.id == "gpt-like"
    config = training_memory.initial_config(request, initial)
    assert (config.zero, config.tp, config.micro_batch, config.sequence_parallel) == (2, 8, 2, True)


def test_default_presets_are_those_with_a_capacity() -> None:
    request = training_memory.parse_training_memory(fence("training-memory", ""), "page.md", PRESETS)
    assert set(request.preset_ids) == {p.id for p in WITH_CAPACITY}


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("zero: 5", "page.md:11: 'zero' must be one of the chart's choices (0, 1, 2, 3): 5"),
        ("dp: 3", "page.md:11: 'dp' must be one of the chart's choices (1, 2, 4, 8"),
        ("seq_len: 1000", "page.md:11: 'seq_len' must be one of the chart's choices (512, 1,024"),
        ("\n\ntp: 3", "page.md:13: 'tp' must be one of the chart's choices (1, 2, 4, 8, 16): 3"),
        ("recompute: most", "page.md:11: 'recompute' must be one of none, selective, full: 'most'"),
        ("attention: flash", "page.md:11: 'attention' must be one of standard, fused: 'flash'"),
        ("optimizer: lion", "page.md:11: 'optimizer' must be one of adam, adam-8bit, sgd: 'lion'"),
        ("sequence_parallel: yes please", "page.md:11: 'sequence_parallel' must be true or false"),
        ("presets: [card-99]", "page.md:11: unknown preset 'card-99' (known: "),
        ("presets: [card-nocap]", "page.md:11: preset card-nocap gives no memory capacity"),
        ("models: 7", "page.md:11: 'models' must be a list of ids or 'all': 7"),
        ("model: 7", "page.md:11: 'model' must be a model id: 7"),
        ("models: [gpt-like]\nmodel: gqa-like", "page.md:12: 'model' 'gqa-like' must be one of 'models': gpt-like"),
        ("zeros: 1", "page.md:11: unknown key 'zeros' in training-memory fence (allowed: models, model, presets"),
        ("title: [1]", "page.md:11: 'title' must be text"),
        ("id: Not An Id", "page.md:11: 'id' must be lowercase letters, digits and hyphens"),
        ("- a list", "page.md:10: training-memory fence body must be a YAML mapping of keys"),
    ],
)
def test_training_memory_fence_errors_are_one_line_at_their_key(body: str, message: str) -> None:
    with pytest.raises(InputError) as caught:
        training_memory.parse_training_memory(fence("training-memory", body), "page.md", PRESETS)
    assert message in str(caught.value) and "\n" not in str(caught.value)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("models: [gpt-2]", "page.md:11: unknown model 'gpt-2' (known: "),
        ("model: gpt-2", "page.md:11: unknown model 'gpt-2' (known: "),
        ("models: [odd-heads]\ntp: 16", "page.md:12: with model odd-heads: 'tp' 16 must divide"),
    ],
)
def test_model_errors_are_found_when_drawn_at_their_key(body: str, message: str) -> None:
    request = training_memory.parse_training_memory(fence("training-memory", body), "page.md", PRESETS)
    with pytest.raises(InputError) as caught:
        _models, initial = training_memory.resolve_models(request, {m.id: m for m in ALL_MODELS})
        training_memory.initial_config(request, initial)
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_fit_table_finds_the_lowest_stage_per_model_and_gpu() -> None:
    request = memory_fit_table.parse_memory_fit_table(fence("memory-fit-table", """\
models: [gqa-like, gpt-like, odd-heads]
presets: [card-24, card-80]
dp: 64
tp: 16
"""), "page.md", PRESETS)
    html = memory_fit_table.memory_fit_table_html(request, {m.id: m for m in ALL_MODELS}, PRESETS)
    rows = re.findall(r"<tr>(.*?)</tr>", html)[1:]
    assert '<abbr title="Card Twenty-Four">card-24</abbr><br><small>24 GB</small>' in html
    cells = [re.findall(r"<td[^>]*>(.*?)</td>", row) for row in rows]
    for model_id, row in zip(("gqa-like", "gpt-like"), cells, strict=False):
        for preset_id, cell in zip(("card-24", "card-80"), row, strict=True):
            config = TrainingMemory(model=MODELS[model_id], dp=64, tp=16, preset=PRESETS[preset_id])
            found = memory.lowest_fitting_stage(config)
            if found is None:
                assert "no" in cell
            else:
                assert f"ZeRO {found[0]}" in cell and units.bytes_text(found[1].total_bytes) in cell
    assert "must divide odd-heads" in cells[2][0]  # the core's refusal, in its row
    assert "model states only" in html


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("dp: 0", "page.md:11: 'dp' must be a whole number from 1 to 1000000: 0"),
        ("micro_batch: 1", "page.md:11: 'micro_batch' and 'seq_len' go together"),
        ("recompute: full", "page.md:11: 'recompute' is about activations: give 'micro_batch' and 'seq_len'"),
        ("micro_batch: 1\nseq_len: 2048\nattention: flash", "page.md:13: 'attention' must be one of standard, fused"),
        ("zero: 1", "page.md:11: unknown key 'zero' in memory-fit-table fence"),
        ("presets: [card-nocap]", "page.md:11: preset card-nocap gives no memory capacity"),
    ],
)
def test_fit_table_errors_are_one_line(body: str, message: str) -> None:
    with pytest.raises(InputError) as caught:
        memory_fit_table.parse_memory_fit_table(fence("memory-fit-table", body), "page.md", PRESETS)
    assert message in str(caught.value) and "\n" not in str(caught.value)


# --- inline forms -------------------------------------------------------------------------------------

CONTEXT = FormContext(PRESETS, models_loader=lambda: {m.id: m for m in ALL_MODELS})


def form(text: str) -> str:
    name, *words = text.split()
    args = [w for w in words if "=" not in w]
    options = dict(w.split("=", 1) for w in words if "=" in w)
    return memory_forms.FORMS[name](args, options, CONTEXT)


@pytest.mark.parametrize(
    ("text", "published"),
    [
        ("model-states params=7.5e9 zero=0 dp=64 decimals=1", "120 GB"),
        ("model-states params=7.5e9 zero=1 dp=64 decimals=1", "31.4 GB"),
        ("model-states params=7.5e9 zero=2 dp=64 decimals=1", "16.6 GB"),
        ("model-states params=7.5e9 zero=3 dp=64 decimals=1", "1.9 GB"),
        ("model-states params=70e9 unit=GB", "1,120 GB"),
        ("model-states params=405e9 fp32_grad_accum=true unit=GB", "8,100 GB"),
        ("model-states params=1e9 fp32_grad_accum=true", "20 GB"),
        ("bytes-per-param", "16"),
        ("bytes-per-param fp32_grad_accum=true", "20"),
        ("bytes-per-param optimizer=adam-8bit part=optimizer", "6"),
        ("bytes-per-param optimizer=sgd part=optimizer", "8"),
        ("activations-per-layer gpt-like seq_len=2048 micro_batch=1 recompute=full unit=MB decimals=1", "50.3 MB"),
        ("activations-per-layer gpt-like seq_len=2048 micro_batch=1 tp=8 sequence_parallel=true recompute=selective",
         "107 MB"),
        ("gpu-memory card-80", "80 GB"),
        ("gpu-memory card-16gib", "16 GiB (17.2 GB)"),
        ("layer-shape gpt-like", "h = 12,288, a = 96 heads, L = 96 layers"),
    ],
)
def test_forms_give_the_published_figures(text: str, published: str) -> None:
    assert form(text) == published


def test_memory_per_gpu_parts_and_verdicts() -> None:
    base = "memory-per-gpu gpt-like zero=3 dp=64 tp=8 pp=8 micro_batch=1 seq_len=2048"
    config = TrainingMemory(model=MODELS["gpt-like"], zero=3, dp=64, tp=8, pp=8, micro_batch=1, seq_len=2048,
                            preset=PRESETS["card-80"])
    estimate = config.estimate()
    assert form(base) == units.bytes_text(estimate.total_bytes)
    assert form(base + " part=activations") == units.bytes_text(estimate.activations_bytes)
    assert form(base + " part=logits") == units.bytes_text(estimate.logits_bytes)
    assert form(base + " preset=card-80 part=fits") == ("fits" if estimate.fits else "does not fit")
    assert form(base + " preset=card-80 part=headroom").endswith(" free" if estimate.fits else " short")
    assert form("memory-per-gpu gpt-like dp=8 preset=card-80 part=lowest-stage") == "no ZeRO stage"
    stage = memory.lowest_fitting_stage(TrainingMemory(model=MODELS["gqa-like"], dp=8, preset=PRESETS["card-80"]))
    assert form("memory-per-gpu gqa-like dp=8 preset=card-80 part=lowest-stage") == f"ZeRO stage {stage[0]}"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("model-states", "'model-states': needs exactly one of model= and params="),
        ("model-states params=7.5e9 zeros=1", "'model-states' does not take zeros= (allowed: params=, model="),
        ("model-states params=7.5e9 zero=9", "'model-states': zero= must be a whole number from 0 to 3: '9'"),
        ("model-states params=7.5", "params= is a count of parameters, not billions"),
        ("model-states gpt-like", "'model-states' takes key=value options only: 'gpt-like' (write model=ID"),
        ("model-states params=1e9 part=activations", "part= must be one of total, weights, gradients, optimizer"),
        ("model-states params=1e9 unit=gigs", "unit= must be one of B, kB, MB, GB"),
        ("model-states params=1e9 decimals=x", "decimals= must be a whole number from 0 to 6: 'x'"),
        ("memory-per-gpu", "'memory-per-gpu' needs one model id"),
        ("memory-per-gpu gpt-2", "'memory-per-gpu': model=: unknown model 'gpt-2'"),
        ("memory-per-gpu gpt-like part=fits", "part=fits needs preset= naming a GPU"),
        ("memory-per-gpu gpt-like preset=card-nocap part=fits", "part=fits needs preset= naming a GPU"),
        ("memory-per-gpu gpt-like part=activations", "part=activations needs micro_batch= and seq_len="),
        ("memory-per-gpu gpt-like tp=5", "tp= 5 must divide gpt-like's 96 attention heads"),
        ("memory-per-gpu gpt-like recompute=full", "recompute= is about activations"),
        ("activations-per-layer gpt-like micro_batch=1", "'activations-per-layer' needs seq_len="),
        ("activations-per-layer gpt-like seq_len=8 micro_batch=1 dp=8", "does not take dp="),
        ("bytes-per-param adam", "'bytes-per-param' takes key=value options only"),
        ("gpu-memory card-nocap", "preset card-nocap gives no memory capacity"),
        ("gpu-memory", "'gpu-memory' needs one preset id"),
        ("layer-shape", "'layer-shape' needs one model id"),
    ],
)
def test_form_errors_are_one_line(text: str, message: str) -> None:
    with pytest.raises(InputError) as caught:
        form(text)
    assert message in str(caught.value) and "\n" not in str(caught.value)


# --- a fixture site, built for real, in a real browser ------------------------------------------------

MEMORY_PAGE = """\
    # Memory

    Stage 1 of the paper's example needs {{ model-states params=7.5e9 zero=1 dp=64 }}.

    ```training-memory
    id: fixture-memory
    models: [gpt-like, gqa-like, odd-heads]
    model: gqa-like
    presets: [card-80, card-24, card-16gib]
    zero: 1
    dp: 8
    micro_batch: 1
    seq_len: 4096
    ```

    ```memory-fit-table
    presets: [card-80, card-24]
    micro_batch: 1
    seq_len: 2048
    recompute: full
    ```
    """

ODD_MODEL = """\
name: Odd heads
layers: 40
d_model: 5120
heads: 40
kv_heads: 40
head_dim: 128
d_ff: 13824
vocab: 32000
mlp: swiglu
tied_embeddings: false
published_params: 13.02e9
sources:
  - {title: LLaMA-2-13B's shape under a fixture id, url: "https://arxiv.org/abs/2307.09288"}
"""


def memory_project(root: Path, page: str = MEMORY_PAGE) -> Path:
    import shutil

    from sitebuild import make_fixture

    presets = {p.stem: p.read_text(encoding="utf-8") for p in FIXTURES.glob("*.yaml")}
    project = make_fixture(root, {"index.md": page}, presets)
    shutil.copytree(FIXTURES / "models", project / "presets" / "models")
    (project / "presets" / "models" / "odd-heads.yaml").write_text(ODD_MODEL, encoding="utf-8")
    return project


@pytest.fixture(scope="module")
def memory_site(tmp_path_factory):
    from browser_support import StaticServer
    from sitebuild import run_build

    root = tmp_path_factory.mktemp("memory-site")
    build = run_build(memory_project(root / "project"), root / "site")
    assert build.returncode == 0, build.output
    server = StaticServer(root / "site").start()
    yield server.origin, build
    server.stop()


@pytest.mark.build
def test_a_strict_build_fails_on_a_bad_fence_naming_the_line(tmp_path: Path) -> None:
    from sitebuild import run_build

    page = MEMORY_PAGE.replace("    dp: 8\n", "    dp: 8\n    tp: 3\n")
    build = run_build(memory_project(tmp_path / "project", page), tmp_path / "site")
    assert build.returncode != 0
    assert "index.md:12: 'tp' must be one of the chart's choices (1, 2, 4, 8, 16): 3" in build.output


@pytest.mark.build
def test_the_built_page_holds_the_figures_and_the_embeds(memory_site) -> None:
    _, build = memory_site
    page = build.page("")
    assert "needs 31.4 GB." in page
    assert page.count('class="ainotes-chart__still') == 4  # light, dark, and a phone's picture of each
    assert "memory-chart.css" in page and (build.site / "assets" / "ainotes" / "memory-chart.css").exists()
    assert "ainotes-memory-fit" in page and "ZeRO" in page
    manifest = json.loads((build.site / "embed" / "manifest.json").read_text(encoding="utf-8"))["charts"]
    (entry,) = [c for c in manifest if c["id"] == "fixture-memory"]
    assert entry["kind"] == "training-memory" and entry["models"] == ["gpt-like", "gqa-like", "odd-heads"]
    assert set(entry["files"]) == {"svg", "svg-dark", "png", "json", "html"}
    for name in entry["files"].values():
        assert (build.site / "embed" / name).stat().st_size > 0


SCREENSHOTS = Path(__file__).resolve().parents[1] / "artifacts" / "screenshots"
READOUT_JS = """() => [...document.querySelectorAll('#fixture-memory .ainotes-chart__view text')]
  .map(t => t.textContent).filter(t => /^ZeRO \\d: /.test(t))"""
SMALLEST_TEXT_JS = """() => Math.min(...[...document.querySelectorAll(
  '#fixture-memory .ainotes-chart__view text, #fixture-memory .ainotes-chart__controls label')]
  .map(t => parseFloat(getComputedStyle(t).fontSize)))"""


def set_scheme(page: Any, scheme: str) -> None:
    """Material's palette (the fixture site has no media query), and wait for the live view in its colours."""
    text = chart.THEME.colours_of("dark" if scheme == "slate" else "light")["text"]
    page.evaluate(f"document.body.setAttribute('data-md-color-scheme', '{scheme}')")
    page.wait_for_function(f"""() => [...document.querySelectorAll('#fixture-memory .ainotes-chart__view text')]
        .some(t => (t.getAttribute('fill') || '').toLowerCase() === '{text.lower()}')
        && !document.querySelector('#fixture-memory .ainotes-chart__view--pending')""")


CAPTION = "#fixture-memory [data-live-caption]"


def expected_caption(model: str, **fields: Any) -> str:
    config = TrainingMemory.from_fields({"model": model, "micro_batch": 1, "seq_len": 4096, **fields},
                                        {m.id: m for m in ALL_MODELS}, PRESETS)
    return chart.caption_sentences(config, WITH_CAPACITY)


def expected_readout(model: str, **fields: Any) -> str:
    config = TrainingMemory.from_fields({"model": model, "micro_batch": 1, "seq_len": 4096, **fields},
                                        {m.id: m for m in ALL_MODELS}, PRESETS)
    return f"ZeRO {config.zero}: {units.amount_text(config.estimate().total_bytes / 1e9)} GB per GPU"


@pytest.mark.build
@pytest.mark.browser
@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("viewport", [{"width": 360, "height": 740}, {"width": 1280, "height": 900}],
                         ids=["phone", "desk"])
def test_the_chart_goes_live_its_selects_move_it_and_it_reads_at_every_size(
        memory_site, browser, scheme: str, viewport: dict) -> None:
    from browser_support import Watch, guard_requests, same_origin, wait_for_charts

    origin, _ = memory_site
    context = browser.new_context(viewport=viewport, color_scheme=scheme)
    watch = Watch()
    guard_requests(context, same_origin(origin), watch)
    page = watch.attach(context.new_page())
    page.goto(origin + "/")
    wait_for_charts(page)
    set_scheme(page, "slate" if scheme == "dark" else "default")
    figure = page.locator("#fixture-memory")
    figure.scroll_into_view_if_needed()
    page.evaluate("y => window.scrollTo(0, y)", figure.evaluate("f => f.getBoundingClientRect().top + scrollY - 56"))
    assert page.evaluate(READOUT_JS) == [expected_readout("gqa-like", zero=1, dp=8)]
    # The caption names what is shown, and follows the selects (its first words are the build's).
    assert page.locator(CAPTION).inner_text() == expected_caption("gqa-like", zero=1, dp=8)
    # Plot and selects on screen together.
    box = page.locator("#fixture-memory .ainotes-chart__box").bounding_box()
    controls = page.locator("#fixture-memory .ainotes-chart__controls").bounding_box()
    assert box["y"] >= 0 and controls["y"] + controls["height"] <= viewport["height"], (box, controls)
    assert page.evaluate(SMALLEST_TEXT_JS) >= 11
    tag = f"memory-{scheme}-{viewport['width']}"
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{tag}.png"))

    selects = {name: page.locator(f'#fixture-memory .ainotes-chart__controls select[name="{name}"]')
               for name in ("model", "zero", "dp", "tp", "seq", "recompute", "attention")}
    selects["model"].select_option("gpt-like")
    selects["zero"].select_option("3")
    selects["dp"].select_option("64")
    selects["tp"].select_option("8")
    selects["recompute"].select_option("selective")
    page.locator('#fixture-memory .ainotes-chart__controls input[name="sp"]').check()
    want = expected_readout("gpt-like", zero=3, dp=64, tp=8, recompute="selective", sequence_parallel=True)
    page.wait_for_function(f"() => ({READOUT_JS})().includes({json.dumps(want)})")
    selects["seq"].select_option("16384")
    selects["attention"].select_option("fused")
    want = expected_readout("gpt-like", zero=3, dp=64, tp=8, recompute="selective", sequence_parallel=True,
                            seq_len=16384, attention="fused")
    page.wait_for_function(f"() => ({READOUT_JS})().includes({json.dumps(want)})")
    caption = expected_caption("gpt-like", zero=3, dp=64, tp=8, recompute="selective", sequence_parallel=True,
                               seq_len=16384, attention="fused")
    page.wait_for_function(f"() => document.querySelector({json.dumps(CAPTION)}).textContent === {json.dumps(caption)}")
    page.screenshot(path=str(SCREENSHOTS / f"{tag}-moved.png"))
    # A degree the core refuses: its message, no bars.
    selects["model"].select_option("odd-heads")
    selects["tp"].select_option("16")
    page.wait_for_function("""() => [...document.querySelectorAll('#fixture-memory .ainotes-chart__view text')]
        .some(t => t.textContent.includes('must divide odd-heads'))""")
    assert page.evaluate(READOUT_JS) == []
    refused = page.locator(CAPTION).inner_text()
    assert refused.startswith("Odd heads, tensor parallel 16, 1 pipeline stage: not drawn.")
    assert "must divide" in refused
    page.screenshot(path=str(SCREENSHOTS / f"{tag}-refused.png"))
    # The colour scheme flips: the live view follows, keeping the reader's choices.
    set_scheme(page, "default" if scheme == "dark" else "slate")
    page.wait_for_function("""() => [...document.querySelectorAll('#fixture-memory .ainotes-chart__view text')]
        .some(t => t.textContent.includes('must divide odd-heads'))""")
    assert page.locator('#fixture-memory select[name="tp"]').input_value() == "16"
    assert watch.problems() == []
    context.close()
