"""Cost in pages: the collective-cost and links-table fences, the cost inline figures, the mfu-table's
time-to-train column; errors name page:line; user text is escaped."""

from __future__ import annotations

import html
import re
import shutil
from pathlib import Path

import pytest

from ainotes.base.errors import InputError
from ainotes.build.site import NotesSite
from ainotes.core import collective_cost as cc
from ainotes.markdown.extension import convert_page
from ainotes.presets.links import load_links
from preset_support import FIXTURE_PRESETS

LINKS = {link.id: link for link in load_links(FIXTURE_PRESETS / "links")}  # the fixture site's links


@pytest.fixture(scope="module")
def site() -> NotesSite:
    return NotesSite(FIXTURE_PRESETS)  # the A100's published 312 TFLOP/s; the eight links as published


def page(site: NotesSite, text: str, src: str = "cost.md") -> str:
    return convert_page(site, text, src, "cost/")


def text_of(html_text: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", html_text))


def test_collective_cost_fence_draws_a_live_chart_with_its_embeds(site: NotesSite) -> None:
    out = page(site, "# Cost\n\n```collective-cost\nop: all-to-all\nranks: 64\nlink: ib-ndr\nid: a2a\n```\n", "a.md")
    assert 'class="ainotes-chart" id="a2a"' in out
    assert out.count('<template class="ainotes-chart__spec"') == 2
    assert "vega.min.js" in out and "vega-charts.js" in out
    chart = site.charts["a2a"]
    assert chart.kind == "collective-cost"
    assert chart.about == {"op": "all-to-all", "ranks": 64, "link": "ib-ndr"}
    # Its embeds, drawn now or kept from an earlier build with the same inputs (a warm render cache).
    assert set(site.embed_files(chart)) == {"svg", "svg-dark", "png", "json", "html"}
    assert "pairwise exchange" in text_of(out)
    # A phone's picture in each scheme, drawn at its width; a caption that follows the selects.
    assert out.count("ainotes-chart__still--narrow") == 2 and "--ainotes-aspect-narrow: 328 / 500" in out
    assert "data-cost-caption" in out and out.count('<template class="ainotes-cost-captions">') == 1
    # The embed snippets name the chart by its title: the live title is an expression the page computes,
    # which an embedding page's alt text and frame title never see.
    snippets = [html.unescape(s) for s in re.findall(r'<code class="ainotes-embed__snippet"[^>]*>(.*?)</code>', out)]
    assert snippets and all("expr" not in s for s in snippets)
    assert any('alt="All-to-all: time against message size"' in s for s in snippets)


def test_links_table_lists_every_link_with_its_sources(site: NotesSite) -> None:
    out = page(site, "```links-table\n```\n", "links.md")
    for link in LINKS.values():
        assert html.escape(link.name) in out
    assert "450 GB/s" in out and "1.9 µs" in out
    assert 'href="https://github.com/NVIDIA/nccl/' in out


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("# T\n\n```collective-cost\nop: gather\n```\n", "f.md:4: 'op' must be one of"),
        ("# T\n\n```collective-cost\nop: all-reduce\nranks: 1\n```\n",
         "f.md:5: 'ranks' must be a whole number from 2 to 1024: 1"),
        ("# T\n\n```collective-cost\nop: all-reduce\nranks: 2048\n```\n",
         "f.md:5: 'ranks' must be a whole number from 2 to 1024: 2048"),
        ("# T\n\n```collective-cost\nop: all-reduce\nlink: nvlink-9\n```\n", "f.md:5: unknown link 'nvlink-9'"),
        ("# T\n\n```collective-cost\nop: all-reduce\ncolour: red\n```\n", "f.md:5: unknown key 'colour'"),
        ("# T\n\n```collective-cost\nop: all-reduce\ntitle: \"a\\x01b\"\n```\n", "f.md:5: 'title' holds a control"),
        ("# T\n\n```links-table\nlinks: [x]\n```\n", "f.md:4: unknown key 'links'"),
        ("# T\n\n```collective\nop: broadcast\nschedule: ring\n```\n",
         "f.md:5: 'schedule: ring' is drawn for all-reduce, reduce-scatter, all-gather only, not broadcast"),
        ("# T\n\n```collective\nop: all-reduce\nschedule: tree\n```\n", "f.md:5: 'schedule' must be logical or ring"),
        ("x {{ collective-time all-reduce ranks=8 bytes=0 link=nvlink-4 }}\n", "f.md:1: bytes= must be a finite"),
        ("x {{ collective-time all-reduce ranks=1 bytes=1e6 link=nvlink-4 }}\n", "f.md:1: ranks= must be a whole"),
        ("x {{ collective-time all-reduce ranks=8 bytes=1e6 }}\n", "f.md:1: 'collective-time' needs link="),
        ("\n\nx {{ collective-time all-reduce ranks=8 bytes=1e6 link=x }}\n", "f.md:3: unknown link 'x'"),
        ("x {{ collective-time reduce ranks=8 bytes=1e6 link=ib-ndr algorithm=bruck }}\n",
         "f.md:1: 'algorithm' for reduce must be one of ring, binomial-tree"),
        ("x {{ crossover all-gather ranks=8 link=nvlink-4 }}\n", "f.md:1: 'crossover': no crossover"),
        ("x {{ train-time params=70e9 tokens=1.4e12 gpus=2048 preset=a100 mfu=40 }}\n",
         "f.md:1: mfu= must be a fraction from 0 to 1 (40 % is 0.4)"),
        ("x {{ train-time params=70e9 tokens=1.4e12 gpus=2048 preset=a100 precision=fp8 mfu=0.4 }}\n",
         "f.md:1: precision= fp8: preset a100 has no FP8 tensor path"),
        ("x {{ train-time params=70e9 tokens=1.4e12 gpus=2048 mfu=0.4 }}\n",
         "f.md:1: needs exactly one of preset= and peak_tflops="),
        ("x {{ train-time params=70e9 tokens=1.4e12 gpus=2048 mfu=0.4 peak_tflops=312 speed=9 }}\n",
         "f.md:1: unknown key speed= (allowed: params=, tokens="),
    ],
)
def test_errors_name_page_and_line(site: NotesSite, text: str, message: str) -> None:
    with pytest.raises(InputError) as info:
        page(site, text, "f.md")
    assert str(info.value).startswith(message), str(info.value)
    assert "\n" not in str(info.value)


def test_inline_forms_come_from_the_core(site: NotesSite) -> None:
    nvlink4 = LINKS["nvlink-4"]
    figures = {"bandwidth_bytes_per_s": nvlink4.bandwidth_bytes_per_s, "latency_s": nvlink4.latency_s}
    ring = cc.algorithm_time("all-reduce", "ring", 8, 1e9, **figures)
    out = text_of(page(site, (
        "a {{ collective-time all-reduce ranks=8 bytes=1e9 link=nvlink-4 algorithm=ring }}"
        " b {{ collective-time all-reduce ranks=8 bytes=1e9 link=nvlink-4 algorithm=ring part=busbw }}"
        " c {{ crossover all-reduce ranks=8 link=nvlink-4 algorithm=binomial-tree }}"
        " d {{ crossover broadcast ranks=8 link=nvlink-4 }}\n"
    )))
    assert f"a {ring.time_s * 1e3:.3g} ms " in out
    assert f"b {ring.busbw_bytes_per_s / 1e9:.3g} GB/s " in out
    # 2(p−1)α + 2(p−1)/p·S/B = 2·lg·(α + S/B) at p = 8
    crossing = 8 * nvlink4.latency_s * nvlink4.bandwidth_bytes_per_s / 4.25
    assert f"c {crossing / 1e6:.3g} MB " in out
    first_change = cc.best_algorithm_changes("broadcast", 8, **figures)[0].message_bytes
    assert out.rstrip().endswith(f"d {first_change / 1e6:.3g} MB")


def test_train_time_form_reproduces_the_facts_example(site: NotesSite) -> None:
    job = "params=70e9 tokens=1.4e12 gpus=2048 preset=a100 mfu=0.4"
    out = text_of(page(site, (
        f"{{{{ train-time {job} }}}}; {{{{ train-time {job} part=gpu-hours }}}}; "
        f"{{{{ train-time {job} part=flops }}}}; {{{{ train-time {job} part=rate }}}}; "
        "{{ train-time params=70e9 tokens=1.4e12 gpus=2048 peak_tflops=312 mfu=0.4 }}\n"
    )))
    assert out.strip() == "26.6 days; 1.31 million GPU-hours; 5.88·10²³ FLOPs; 2.56·10¹⁷ FLOP/s; 26.6 days"


def test_mfu_table_shows_time_to_train_for_jobs_with_tokens(site: NotesSite) -> None:
    out = page(site, (
        "```mfu-table\njobs:\n"
        "  - name: with tokens\n    params: 70e9\n    tokens_per_second: 608.5e3\n    gpus: 2048\n"
        "    preset: a100\n    tokens: 1.4e12\n"
        "  - name: without\n    params: 7e9\n    tokens_per_second: 3e6\n    gpus: 1024\n    preset: a100\n```\n"
    ))
    assert "time to train" in out
    rows = [text_of(row) for row in re.findall(r"<tr[^>]*>(.*?)</tr>", out)]
    assert "26.6\xa0days" in rows[1] and "1.309 million GPU-hours" in rows[1]
    assert rows[2].endswith("—")


def test_a_build_without_links_fails_only_where_a_page_needs_them(tmp_path: Path) -> None:
    presets = tmp_path / "presets"
    presets.mkdir()
    shutil.copy(FIXTURE_PRESETS / "h100.yaml", presets)
    site = NotesSite(presets)
    assert "295" in page(site, "{{ ridge h100 }}\n")
    with pytest.raises(InputError, match=r"^n\.md:1: .*links folder does not exist"):
        page(site, "```collective-cost\nop: all-reduce\n```\n", "n.md")


def test_collective_fence_can_open_on_the_ring_schedule(site: NotesSite) -> None:
    out = page(site, "```collective\nop: reduce-scatter\nschedule: ring\nid: rs-ring\n```\n", "ring.md")
    assert "Ring step 1 of 3 (reduce-scatter)" in out
    assert '"initial":"ring-4"' in out
    assert site.charts["rs-ring"].about["schedule"] == "ring"
    assert '"title":"Reduce-scatter across 8 ranks"' in out, "without an author's title each rank count names itself"
