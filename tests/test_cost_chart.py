"""The collective-cost chart: a valid Vega-Lite spec whose data is the core's, themed by config alone."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from ainotes import render
from ainotes.base import cache
from ainotes.base.errors import InputError
from ainotes.charts import cost
from ainotes.core import collective_cost as cc
from ainotes.core.collectives import OP_TITLES
from ainotes.core.links import Link
from ainotes.presets.links import load_links
from vega_eval import vega_lite_errors

LINKS = load_links(Path(__file__).resolve().parents[1] / "presets" / "links")


@pytest.fixture(scope="module")
def light() -> dict:
    return cost.cost_spec(LINKS, cached=False)


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_spec_is_valid_vega_lite(theme: str) -> None:
    spec = cost.cost_spec(LINKS, op="broadcast", ranks=64, link_id="ib-ndr", theme=theme, cached=False)
    assert vega_lite_errors(spec) == []
    assert vega_lite_errors({**spec, "width": "wide"}) != []


def test_themes_differ_in_config_only(light: dict) -> None:
    dark = cost.cost_spec(LINKS, theme="dark", cached=False)
    assert {k: v for k, v in light.items() if k != "config"} == {k: v for k, v in dark.items() if k != "config"}
    assert light["config"]["background"] == "#ffffff" and dark["config"]["background"] == "#1e2129"
    body = json.dumps({k: v for k, v in light.items() if k != "config"})
    assert not re.search(r"#[0-9a-fA-F]{6}", body), "colours belong in config"


def test_cached_spec_equals_a_fresh_build(light: dict) -> None:
    assert cost.cost_spec(LINKS) == light


def test_a_second_chart_fills_in_the_grammar_without_altair(monkeypatch, tmp_path: Path) -> None:
    # A private, empty render cache and grammar memo: the first spec builds the grammar, no later one does.
    monkeypatch.setenv("AINOTES_CACHE_DIR", str(tmp_path / "render"))
    monkeypatch.setenv("AINOTES_SHARED_CACHE_DIR", str(tmp_path / "shared"))
    cache.clear_cache()
    cost.GRAMMAR.forget()
    before = cost.GRAMMAR.builds
    first = cost.cost_spec(LINKS)
    # Two links with a full mesh among them if LINKS has one: a chart with a mesh has a structure of its own.
    meshes = [link for link in LINKS if link.mesh_links is not None]
    pair = (LINKS[0], LINKS[1]) if not meshes or meshes[0] in LINKS[:2] else (meshes[0], LINKS[1])
    second = cost.cost_spec(pair, op="broadcast", ranks=64, link_id=LINKS[1].id, title="Other", theme="dark")
    assert cost.GRAMMAR.builds - before == 1
    assert first["layer"] == second["layer"]
    params = {p["name"]: p for p in second["params"]}
    assert (params["op"]["value"], params["ranks"]["value"], params["link"]["value"]) == ("broadcast", 64, LINKS[1].id)
    assert params["link"]["bind"]["options"] == [link.id for link in pair]
    assert '"Other"' in second["title"]["text"]["expr"] and '"broadcast"' in second["title"]["text"]["expr"]
    assert [row["link"] for row in second["datasets"]["links"]] == [link.id for link in pair]
    # A fresh process with the grammar on disk does not even import altair.
    script = ("import sys; from pathlib import Path; from ainotes.charts import cost; from ainotes.presets.links import"
              " load_links; cost.cost_spec(load_links(Path(sys.argv[1])), op='scatter', ranks=2);"
              " assert 'altair' not in sys.modules, 'altair imported'")
    links_dir = Path(__file__).resolve().parents[1] / "presets" / "links"
    subprocess.run([sys.executable, "-c", script, str(links_dir)], check=True)
    assert cost.GRAMMAR.builds - before == 1


def test_controls_offer_every_primitive_rank_count_and_link(light: dict) -> None:
    params = {p["name"]: p for p in light["params"]}
    assert params["op"]["value"] == "all-reduce" and params["op"]["bind"]["options"] == list(cc.ALGORITHMS)
    assert params["ranks"]["bind"]["options"] == [2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]
    assert params["link"]["bind"]["options"] == [link.id for link in LINKS]


@pytest.mark.parametrize("link", LINKS, ids=lambda link: link.id)
def test_line_terms_reproduce_the_core(light: dict, link: Link) -> None:
    # The chart evaluates a·α + b·S/B with the a and b its rows hold for the rank select's count (the browser
    # tests run the real expressions); here the same arithmetic in Python, against the core's times.
    figures = {"bandwidth_bytes_per_s": link.bandwidth_bytes_per_s, "latency_s": link.latency_s}
    rows = light["datasets"]["algorithms"]
    assert len(rows) == sum(len(names) for names in cc.ALGORITHMS.values())
    for row in rows:
        if row["chain"]:
            continue
        for ranks in cost.RANK_CHOICES:
            a, b = row["a_at"][str(ranks)], row["b_at"][str(ranks)]
            for size in (1e3, 4.2e6, 1e10):
                expected = cc.algorithm_time(row["op"], row["algorithm"], ranks, size, **figures).time_s
                drawn = a * link.latency_s + b * size / link.bandwidth_bytes_per_s
                assert drawn == pytest.approx(expected, rel=1e-12)


def test_a_rank_count_past_a_power_of_two_is_offered_and_drawn_at_its_own_terms() -> None:
    # 48 GPUs, six nodes of eight: the fence opens on it, the select offers it among the powers of two, and
    # its lines are the core's at p = 48 (Rabenseifner folds 16 ranks in: 12 rounds, not 2·⌈log₂ 48⌉ = 12
    # by luck alone; its bandwidth multiple 2 + 2·31/32 is no formula of p the powers of two would give).
    spec = cost.cost_spec(LINKS, op="all-reduce", ranks=48, cached=False)
    params = {param["name"]: param for param in spec["params"]}
    assert params["ranks"]["value"] == 48
    assert params["ranks"]["bind"]["options"] == [2, 4, 8, 16, 32, 48, 64, 128, 256, 512, 1024]
    rows = {row["algorithm"]: row for row in spec["datasets"]["algorithms"] if row["op"] == "all-reduce"}
    assert (rows["rabenseifner"]["a_at"]["48"], rows["rabenseifner"]["b_at"]["48"]) == (12, 2 + 2 * 31 / 32)
    assert (rows["double-binary-tree"]["a_at"]["48"], rows["double-binary-tree"]["b_at"]["48"]) == (10, 2)
    assert any(r["ranks"] == 48 for r in spec["datasets"]["crossovers"])
    (nvlink4,) = [link for link in LINKS if link.id == "nvlink-4"]
    assert cost.caption_text("all-reduce", 48, nvlink4, LINKS).startswith("All-reduce over 48 ranks on ")


def core_marks(op: str, ranks: int, link: Link) -> tuple[list[tuple[str, float]], list[tuple[str, float]]]:
    """What the chart must mark, asked of the core for this link at B of a group of ``ranks`` (less on a full
    mesh): (switches, meets) as (pair, bytes)."""
    figures = {"bandwidth_bytes_per_s": link.group_bandwidth_bytes_per_s(ranks), "latency_s": link.latency_s}
    first, *others = cc.ALGORITHMS[op]
    switches = cc.best_algorithm_changes(op, ranks, low_bytes=cost.MIN_BYTES, high_bytes=cost.MAX_BYTES, **figures)
    meets = [(f"{cc.short_title(op, first)} = {cc.short_title(op, other)}", c.message_bytes)
             for other in others for c in cc.crossovers(op, ranks, first, other, **figures)
             if not any({s.faster_below, s.faster_above} == {first, other}
                        and c.message_bytes == pytest.approx(s.message_bytes, rel=1e-6) for s in switches)]
    return ([(f"{cc.short_title(op, s.faster_below)} → {cc.short_title(op, s.faster_above)}", s.message_bytes)
             for s in switches], sorted(meets, key=lambda m: m[1]))


@pytest.mark.parametrize("link", LINKS, ids=lambda link: link.id)
def test_marks_scale_with_alpha_times_b_and_match_the_core(light: dict, link: Link) -> None:
    rows = light["datasets"]["crossovers"]
    for op in cc.ALGORITHMS:
        for ranks in cost.RANK_CHOICES:
            product = link.latency_s * link.group_bandwidth_bytes_per_s(ranks)
            drawn = {kind: sorted(((r["pair"], r["x"] * product) for r in rows if r["op"] == op and r["ranks"] == ranks
                                   and r["kind"] == kind and cost.MIN_BYTES <= r["x"] * product <= cost.MAX_BYTES),
                                  key=lambda m: m[1]) for kind in ("switch", "meet")}
            switches, meets = core_marks(op, ranks, link)
            for kind, expected in (("switch", switches), ("meet", meets)):
                assert [pair for pair, _ in drawn[kind]] == [pair for pair, _ in expected], (op, ranks, kind)
                assert [size for _, size in drawn[kind]] == pytest.approx([size for _, size in expected], rel=1e-6)


def test_all_reduce_marks_where_the_ring_meets_each_tree(light: dict) -> None:
    rows = [r for r in light["datasets"]["crossovers"] if r["op"] == "all-reduce" and r["ranks"] == 8]
    assert [(r["kind"], r["pair"], r["below"]) for r in rows] == [
        ("meet", "ring = binomial tree", "binomial tree"), ("meet", "ring = double binary tree", "double binary tree")]
    # 2(p−1)α + 2(p−1)/p·S/B = 2·lg·(α + S/B) at p = 8: S/(α·B) = (14 − 6) ÷ (6 − 1.75)
    assert rows[0]["x"] == pytest.approx(8 / 4.25, rel=1e-6)
    # 2(p−1)α + 2(p−1)/p·S/B = 2·lg·α + 2·S/B: S/(α·B) = (p − 1 − lg)·p = 32
    assert rows[1]["x"] == pytest.approx(32, rel=1e-6)


def test_the_broadcast_chart_marks_the_switches_its_caption_names(light: dict) -> None:
    (ndr,) = [link for link in LINKS if link.id == "ib-ndr"]
    product = ndr.latency_s * ndr.bandwidth_bytes_per_s
    rows = [r for r in light["datasets"]["crossovers"] if r["op"] == "broadcast" and r["ranks"] == 64
            and cost.MIN_BYTES <= r["x"] * product <= cost.MAX_BYTES]
    switches = [(r["pair"], cost.size_label(r["x"] * product)) for r in rows if r["kind"] == "switch"]
    assert switches == [("binomial tree → scatter + all-gather", "3.13 MB"),
                        ("scatter + all-gather → pipelined chain", "49.9 MB")]
    caption = cost.caption_text("broadcast", 64, ndr, LINKS)
    for _, size in switches:
        assert f"at {size}" in caption
    assert "the pipelined chain takes over from scatter + all-gather at 49.9 MB" in caption


def test_expressions_state_the_core_formula(light: dict) -> None:
    text = json.dumps(light)
    assert "datum.a * datum.latency + datum.b * datum.bytes / datum.bandwidth" in text
    assert "datum.a_at[datum.ranks]" in text and "datum.b_at[datum.ranks]" in text  # the core's a and b at p
    assert "sqrt((datum.ranks - 2) * datum.bytes / (datum.latency * datum.bandwidth))" in text


def test_static_render_draws_the_lines_and_the_marks(light: dict) -> None:
    svg = render.svg(light)
    for label in ("ring = binomial tree", "ring = double binary tree"):
        assert f">{label}<" in svg
    assert ">at 1.61 MB<" in svg and ">at 27.4 MB<" in svg
    assert "latency-bound" in svg and "bandwidth-bound" in svg
    for title in ("ring", "Rabenseifner (halving + doubling)", "binomial tree", "double binary tree (NCCL's tree)"):
        assert f">{title}<" in svg
    assert ">All-reduce: time against message size<" in svg


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_the_narrow_still_is_drawn_at_a_phones_column(theme: str) -> None:
    spec = cost.narrow_static(cost.cost_spec(LINKS, op="broadcast", ranks=64, link_id="ib-ndr", theme=theme))
    svg = render.svg(spec)
    assert render.svg_size(svg) == (cost.NARROW_STATIC_WIDTH_PX, cost.NARROW_STATIC_HEIGHT_PX)
    assert ">Broadcast:<" in svg and ">time against message size<" in svg  # two lines on a narrow chart


def test_the_chain_is_never_called_a_ring() -> None:
    for op in ("broadcast", "reduce"):
        assert cc.algorithm_title(op, "ring").startswith("pipelined chain")
        assert cost.algorithm_noun(op, "ring") == "the pipelined chain"
        rows = [r for r in cost.algorithm_rows() if r["op"] == op and r["algorithm"] == "ring"]
        assert [(r["title"], r["short"]) for r in rows] == [("pipelined chain (NCCL's ring)", "pipelined chain")]
    assert cc.algorithm_title("all-reduce", "ring") == "ring"


def test_every_state_has_a_caption_from_the_core() -> None:
    data = cost.caption_states(LINKS, cached=False)
    assert len(data["states"]) == len(cc.ALGORITHMS) * len(cost.RANK_CHOICES) * len(LINKS)
    for op in cc.ALGORITHMS:
        own = {cost.algorithm_noun(op, name) for name in cc.ALGORITHMS[op]}
        foreign = {cost.algorithm_noun(other, name) for other in cc.ALGORITHMS for name in cc.ALGORITHMS[other]} - own
        for ranks in cost.RANK_CHOICES:
            for link in LINKS:
                text = cost.fill_caption(data, op, ranks, link.id)
                assert text.startswith(f"{OP_TITLES[op]} over {ranks} ranks on {link.name} ")
                switches, meets = core_marks(op, ranks, link)
                for _, size in switches + meets:
                    # A size on a rounding tie (8.75 α·B = 1.575 MB) may round either way: crossovers are bisected.
                    assert any(f" at {cost.size_label(size * (1 + tie))}" in text for tie in (0, 1e-6, -1e-6)), (
                        op, ranks, link.id)
                if switches:
                    assert "Diamonds mark where the fastest algorithm changes" in text
                else:
                    figures = {"bandwidth_bytes_per_s": link.group_bandwidth_bytes_per_s(ranks),
                               "latency_s": link.latency_s}
                    winner = cc.best_algorithm(op, ranks, cost.MIN_BYTES, **figures).algorithm
                    assert f"{cost.algorithm_noun(op, winner)} is fastest at every size drawn".lower() in text.lower()
                # It names only algorithms the chart draws for this primitive (the note says what NCCL calls them).
                named = text.replace(data["ops"][op]["note"], "")
                for noun in foreign:
                    assert noun not in named, (op, noun)
                if op != "all-reduce":
                    assert "Rabenseifner" not in text


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"op": "gather"}, "'op' must be one of"),
        ({"ranks": 1}, "'ranks' must be a whole number from 2 to 1024: 1"),
        ({"ranks": 2048}, "'ranks' must be a whole number from 2 to 1024: 2048"),
        ({"link_id": "nvlink-9"}, "unknown link 'nvlink-9'"),
        ({"theme": "sepia"}, "'theme' must be 'light' or 'dark'"),
        ({"title": "bad\x01title"}, "control character"),
    ],
)
def test_bad_requests_are_one_clear_error(kwargs: dict, message: str) -> None:
    with pytest.raises(InputError, match=message):
        cost.cost_spec(LINKS, cached=False, **kwargs)


def test_caption_escapes_and_states_the_fastest_algorithm() -> None:
    (nvlink4,) = [link for link in LINKS if link.id == "nvlink-4"]
    caption = cost.caption_html("broadcast", 8, nvlink4)
    assert "binomial tree" in caption and "takes over" in caption
    assert "α = 1.9 µs" in caption
    hostile = type(nvlink4)(id="x", name="<b>link</b>", bandwidth_gbps=1, latency_us=1, sources=(), path="")
    assert "&lt;b&gt;link&lt;/b&gt;" in cost.caption_html("all-gather", 8, hostile)
    live = cost.caption_html("all-gather", 8, hostile, (hostile, nvlink4))
    assert "<b>" not in live and live.count("<template") == 1 and live.endswith("</template>")
    assert "data-cost-caption" in live


def test_the_title_follows_the_primitive_and_an_authors_title_names_its_own_state_only(light: dict) -> None:
    expression = light["title"]["text"]["expr"]
    for op in cc.ALGORITHMS:
        assert f'"{op}": "{OP_TITLES[op]}"' in expression
    authored = cost.cost_spec(LINKS, op="broadcast", ranks=64, link_id="ib-ndr", title='A "quoted" title')
    expression = authored["title"]["text"]["expr"]
    assert expression.startswith('op == "broadcast" && ranks == 64 && link == "ib-ndr" ? "A \\"quoted\\" title" : (')
