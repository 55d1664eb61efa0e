"""The parallelism chart and fence: its numbers are the CLI's for the same layout at sampled states, its
title and caption follow the selects, and a bad fence is one line at its page and line. Fixtures:
tests/fixtures/parallel (so a shipped preset changes nothing here)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from ainotes import render
from ainotes.base.errors import InputError
from ainotes.charts import parallelism as chart_module
from ainotes.cli import main
from ainotes.core.parallelism import ParallelRun
from ainotes.presets.gpus import load_presets
from ainotes.presets.links import load_links
from ainotes.presets.models import load_models

FIXTURES = Path(__file__).parent / "fixtures" / "parallel"
PRESETS = {p.id: p for p in load_presets(FIXTURES)}
LINKS = {link.id: link for link in load_links(FIXTURES / "links")}
MODELS = {m.id: m for m in load_models(FIXTURES / "models")}
TOKENS = 2 * 1024 * 1024
COUNTS = (64, 256, 1024)


@pytest.fixture(scope="module")
def chart() -> chart_module.ParallelismChart:
    base = ParallelRun.from_fields({"model": "lab-70b", "preset": "lab-h100", "gpus": 1, "global_batch_tokens": TOKENS,
                                    "sequence_parallel": True}, models=MODELS, presets=PRESETS, links=LINKS)
    return chart_module.build_chart(base, [MODELS["lab-70b"], MODELS["lab-moe"]],
                                    [PRESETS["lab-h100"], PRESETS["book-v5p"]], COUNTS, ("lab-70b", "lab-h100", 1024))


@pytest.fixture(scope="module")
def spec(chart: chart_module.ParallelismChart) -> dict[str, Any]:
    return chart_module.parallelism_spec(chart, theme="light")


def cli_search(capsys: pytest.CaptureFixture[str], model: str, preset: str, gpus: int) -> list[dict[str, Any]]:
    code = main(["parallel", "--presets-dir", str(FIXTURES), "--model", model, "--preset", preset, "--gpus", str(gpus),
                 "--global-batch-tokens", str(TOKENS), "--sequence-parallel", "--search", "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)["layouts"]


@pytest.mark.parametrize(("model", "preset", "gpus"), [("lab-70b", "lab-h100", 1024), ("lab-70b", "book-v5p", 256),
                                                       ("lab-moe", "lab-h100", 64)])
def test_the_charts_numbers_are_the_clis(capsys: pytest.CaptureFixture[str], spec: dict[str, Any], model: str,
                                         preset: str, gpus: int) -> None:
    rows = [r for r in spec["datasets"]["layouts"] if r["k"] == f"{model}|{preset}|{gpus}"]
    found = cli_search(capsys, model, preset, gpus)
    assert rows and len(rows) == min(len(found), chart_module.MAX_LAYOUTS)
    for row, layout in zip(sorted(rows, key=lambda r: r["rank"]), found, strict=False):
        assert row["step_s"] == pytest.approx(layout["step_s"], rel=1e-9)
        assert row["compute"] == pytest.approx(layout["compute_s"], rel=1e-9)
        assert row["bubble"] == pytest.approx(layout["bubble_s"], rel=1e-9, abs=1e-15)
        parts = row["compute"] + row["dp"] + row["tp"] + row["pp"] + row["epcp"] + row["bubble"]
        assert parts == pytest.approx(layout["step_s"], rel=1e-9)
        assert row["mem_gb"] * 1e9 == pytest.approx(layout["memory_bytes_per_gpu"], rel=1e-9)
        assert row["mfu"] == pytest.approx(layout["mfu_ceiling"], rel=1e-9)
        degrees = layout["layout"]
        assert row["label"].startswith(f"dp {degrees['dp']}")


def test_the_selects_offer_the_charts_states(spec: dict[str, Any], chart: chart_module.ParallelismChart) -> None:
    signals = {p["name"]: p for p in spec["params"]}
    assert signals["model"]["bind"]["options"] == ["lab-70b", "lab-moe"]
    assert signals["preset"]["bind"]["options"] == ["lab-h100", "book-v5p"]
    assert signals["gpus"]["bind"]["options"] == [str(c) for c in COUNTS]
    assert (signals["model"]["value"], signals["preset"]["value"], signals["gpus"]["value"]) == (
        "lab-70b", "lab-h100", "1024")
    # The title and the caption follow the three selects.
    title = spec["title"]["text"]["expr"]
    assert all(name in title for name in ("model", "preset", "gpus"))
    captions = chart_module.caption_states(chart)
    assert captions["signals"] == ["model", "preset", "gpus"]
    assert set(captions["captions"]) == {f"{m}|{p}|{g}" for m in ("lab-70b", "lab-moe")
                                         for p in ("lab-h100", "book-v5p") for g in COUNTS}
    assert captions["captions"]["lab-moe|book-v5p|256"].startswith("Lab MoE")


def test_the_static_picture_shows_the_first_states_title(spec: dict[str, Any],
                                                         chart: chart_module.ParallelismChart) -> None:
    for drawn in (spec, chart_module.narrow_spec(spec)):
        svg = render.svg(drawn)
        assert chart_module.static_title(chart).replace("×", "&#215;") in svg or chart_module.static_title(chart) in svg
    assert render.svg_size(render.svg(chart_module.narrow_spec(spec)))[0] <= 360


def fence_page(body: str) -> str:
    return f"# T\n\nText.\n\n```parallelism\n{body}```\n"


@pytest.mark.parametrize(("body", "message"), [
    ("model: lab-70b\npreset: lab-h100\n", r"^p\.md:6: .*needs 'gpus'"),
    ("model: lab-70b\npreset: lab-loner\ngpus: 8\n", r"^p\.md:7: .*preset lab-loner needs a memory capacity"),
    ("model: lab-70b\npreset: lab-h100\ngpus: 8\nbatch: 4\n", r"^p\.md:9: .*'batch'"),
    ("model: llama-9\npreset: lab-h100\ngpus: 8\n", r"^p\.md:6: unknown model 'llama-9'"),
    ("model: lab-70b\npreset: lab-h100\ngpus: 8\ngpu_counts: [1, 2, 4, 8, 16, 32, 64, 128, 256]\n",
     r"^p\.md:9: 'gpu_counts' may offer at most 8"),
    ("model: lab-70b\npreset: lab-h100\ngpus: 8\nrecompute: most\n", r"^p\.md:9: .*'recompute' must be one of"),
])
def test_a_bad_fence_is_one_line_at_its_line(body: str, message: str) -> None:
    from ainotes.build.site import NotesSite
    from ainotes.markdown.extension import convert_page

    with pytest.raises(InputError) as caught:
        convert_page(NotesSite(FIXTURES), fence_page(body), "p.md", "p/")
    assert re.search(message, str(caught.value)) and "\n" not in str(caught.value)
