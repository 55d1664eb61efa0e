"""Collective costs on a full-mesh link: a group of p chips of an 8-GPU Infinity Fabric board moves
B·min(p − 1, 7)/7 (one 64 GB/s link between 2 GPUs, three between 4), and every figure timed at p ranks
(the cost chart's still and live lines, marks, axis and caption, ``ainotes collective-cost``, the inline
forms, the measured-run model) takes that B, not the board's 448 GB/s."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ainotes import render
from ainotes.charts import cost
from ainotes.cli import main
from ainotes.core import collective_cost as cc
from ainotes.core.links import Link
from ainotes.inline import cost as inline_cost
from ainotes.measurements import fit
from ainotes.presets.links import load_links
from vega_eval import evaluate

FIXTURES = Path(__file__).resolve().parent / "fixtures"
PARALLEL_LINKS = {link.id: link for link in load_links(FIXTURES / "parallel" / "links")}
MESH = PARALLEL_LINKS["lab-infinity-fabric"]  # 7 links of 64 GB/s per direction, 448 GB/s in all, α = 2.1 µs
SWITCHED = {link.id: link for link in load_links(FIXTURES / "cost" / "links")}["fast-switch"]


def switched(gbps: float) -> Link:
    """A switched link with the mesh's α and ``gbps`` per direction: what the mesh must draw at a rank count."""
    return Link(id=f"switch-{gbps:g}", name=f"Switch at {gbps:g} GB/s", bandwidth_gbps=gbps,
                latency_us=MESH.latency_us, sources=MESH.sources, path="")


ONE_LINK, THREE_LINKS, ALL_LINKS = switched(64), switched(192), switched(448)


def test_the_fixture_mesh_moves_one_links_bandwidth_between_two_gpus() -> None:
    assert MESH.mesh_links == 7 and MESH.bandwidth_gbps == 448
    assert [MESH.group_bandwidth_bytes_per_s(p) / 1e9 for p in (2, 4, 8, 64)] == pytest.approx([64, 192, 448, 448])


@pytest.mark.parametrize(("op", "ranks", "same"), [("all-reduce", 2, ONE_LINK), ("broadcast", 4, THREE_LINKS),
                                                   ("all-to-all", 4, THREE_LINKS), ("reduce", 8, ALL_LINKS)])
def test_the_still_on_the_mesh_is_the_still_of_a_switch_at_the_groups_bandwidth(op: str, ranks: int,
                                                                                   same: Link) -> None:
    # Lines, marks, their labels and the y axis's decades: vl-convert runs the chart's own expressions.
    links = (MESH, same, ALL_LINKS)
    on_mesh = render.svg(cost.cost_spec(links, op=op, ranks=ranks, link_id=MESH.id))
    assert on_mesh == render.svg(cost.cost_spec(links, op=op, ranks=ranks, link_id=same.id))
    if same is not ALL_LINKS:  # the board's full B would draw another chart: the comparison can fail
        assert on_mesh != render.svg(cost.cost_spec(links, op=op, ranks=ranks, link_id=ALL_LINKS.id))


def test_the_marks_on_the_mesh_sit_where_the_core_puts_them_at_the_groups_bandwidth() -> None:
    # Broadcast on 4 of the 8 GPUs: three links, 192 GB/s; the core's changes of the fastest algorithm there.
    figures = {"bandwidth_bytes_per_s": 192e9, "latency_s": MESH.latency_s}
    changes = cc.best_algorithm_changes("broadcast", 4, low_bytes=cost.MIN_BYTES, high_bytes=cost.MAX_BYTES,
                                        **figures)
    assert changes
    svg = render.svg(cost.cost_spec((MESH,), op="broadcast", ranks=4, link_id=MESH.id))
    caption = cost.caption_text("broadcast", 4, MESH, (MESH,))
    for change in changes:
        assert f">at {cost.size_label(change.message_bytes)}<" in svg
        assert f"at {cost.size_label(change.message_bytes)}" in caption
    # At 448 GB/s the first change would sit 7/3 times further right.
    full = cc.best_algorithm_changes("broadcast", 4, low_bytes=cost.MIN_BYTES, high_bytes=cost.MAX_BYTES,
                                     bandwidth_bytes_per_s=448e9, latency_s=MESH.latency_s)
    assert f">at {cost.size_label(full[0].message_bytes)}<" not in svg


def _live_time(spec: dict[str, Any], op: str, algorithm: str, ranks: int, size: float) -> float:
    """The live chart's time for one algorithm at ``size``: its lines layer's expressions after the link
    lookup, evaluated one by one by Vega (tests/vega_eval.py) on the rows the chart holds."""
    (lines,) = [layer for layer in spec["layer"] if layer["mark"]["type"] == "line"]
    (row,) = [r for r in spec["datasets"]["algorithms"] if r["op"] == op and r["algorithm"] == algorithm]
    chosen = {param["name"]: param for param in spec["params"]}["link"]["value"]
    (link,) = [r for r in spec["datasets"]["links"] if r["link"] == chosen]
    datum = {**row, "link_bandwidth": link["bandwidth"], "latency": link["latency"],
             **({"mesh": link["mesh"]} if "mesh" in link else {}), "ranks": ranks, "bytes": size}
    for step in lines["transform"]:
        if "calculate" in step and step["as"] in ("a", "b", "bandwidth", "k_star", "k_limit", "k_low", "k_high",
                                                  "time"):
            (value,) = evaluate([step["calculate"]], rows=[datum])[0]
            datum[step["as"]] = float(value) if value not in ("true", "false") else value == "true"
    return float(datum["time"])


@pytest.mark.parametrize(("op", "algorithm", "ranks", "gbps"), [("all-reduce", "ring", 2, 64),
                                                                 ("broadcast", "ring", 4, 192),
                                                                 ("all-to-all", "bruck", 4, 192),
                                                                 ("all-gather", "ring", 8, 448)])
def test_the_live_lines_on_the_mesh_take_the_groups_bandwidth(op: str, algorithm: str, ranks: int,
                                                               gbps: float) -> None:
    spec = cost.cost_spec((SWITCHED, MESH), op=op, ranks=ranks, link_id=MESH.id)
    for size in (1e3, 4.2e6, 1e9):
        expected = cc.algorithm_time(op, algorithm, ranks, size, bandwidth_bytes_per_s=gbps * 1e9,
                                     latency_s=MESH.latency_s).time_s
        assert _live_time(spec, op, algorithm, ranks, size) == pytest.approx(expected, rel=1e-9)
    # 1 GB all-reduced by 2 GPUs over their one 64 GB/s link: the ring sends S/B = 15.6 ms, not 448 GB/s's 2.2 ms.
    if (op, ranks) == ("all-reduce", 2):
        assert _live_time(spec, op, algorithm, ranks, 1e9) == pytest.approx(2.1e-6 * 2 + 1e9 / 64e9)


@pytest.mark.parametrize(("ranks", "words"), [
    (2, "(B = 64 GB/s per direction for 2 of its 8 GPUs, over 1 of each GPU's 7 links; α = 2.1 µs"),
    (4, "(B = 192 GB/s per direction for 4 of its 8 GPUs, over 3 of each GPU's 7 links; α = 2.1 µs"),
    (8, "(B = 448 GB/s per direction, all 7 links of each GPU; α = 2.1 µs"),
    (64, "(B = 448 GB/s per direction, all 7 links of each GPU; α = 2.1 µs"),
])
def test_the_caption_names_the_groups_bandwidth(ranks: int, words: str) -> None:
    links = (SWITCHED, MESH)
    text = cost.caption_text("all-reduce", ranks, MESH, links)
    assert text.startswith(f"All-reduce over {ranks} ranks on {MESH.name} {words}")
    # The live caption (vega-charts.js fills the same data) says the same for the state.
    data = cost.caption_states(links, choices=cost.rank_choices(ranks))
    assert cost.fill_caption(data, "all-reduce", ranks, MESH.id) == text
    shown = cost.caption_html("all-reduce", ranks, MESH, links).split("<template")[0]
    assert words.replace("'", "&#x27;") in shown


def test_a_switched_link_beside_a_mesh_draws_as_it_does_alone() -> None:
    alone, beside = (cost.cost_spec(links, op="broadcast", ranks=8, link_id=SWITCHED.id)
                     for links in ((SWITCHED,), (SWITCHED, MESH)))
    assert "mesh" not in json.dumps(alone["layer"]) and "datum.mesh" in json.dumps(beside["layer"])
    assert beside["datasets"]["links"][0] == alone["datasets"]["links"][0]
    assert render.svg(beside) == render.svg(alone)
    data_alone, data_beside = cost.caption_states((SWITCHED,)), cost.caption_states((SWITCHED, MESH))
    assert data_beside["links"][SWITCHED.id] == data_alone["links"][SWITCHED.id]
    assert {key: facts for key, facts in data_beside["states"].items() if key.endswith(f"|{SWITCHED.id}")} == \
        data_alone["states"]


def test_the_command_times_the_group_on_its_links(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--presets-dir", str(FIXTURES / "parallel"), "collective-cost", "all-reduce", "--bytes", "1e9",
            "--link", MESH.id]
    assert main([*argv, "--ranks", "2", "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["link"]["group_bandwidth_gbps"] == pytest.approx(64) and record["link"]["mesh_links"] == 7
    ring = {a["name"]: a for a in record["algorithms"]}["ring"]
    assert ring["time_s"] == pytest.approx(2 * 2.1e-6 + 1e9 / 64e9)  # 15.6 ms, not 2.2 ms at 448 GB/s
    assert main([*argv, "--ranks", "4"]) == 0
    out = capsys.readouterr().out
    assert "(B = 192 GB/s per direction: 3 of each GPU's 7 mesh links at 4 ranks, α = 2.1 µs)" in out


def test_the_inline_forms_time_the_group_on_its_links() -> None:
    def form(name: str, link: Link, **options: str) -> str:
        return inline_cost.FORMS[name](["broadcast"], {**options, "link": link.id}, {},
                                       lambda: {link.id: link}, None)

    assert form("collective-time", MESH, ranks="2", bytes="1e9") == form("collective-time", ONE_LINK, ranks="2",
                                                                           bytes="1e9")
    assert form("collective-time", MESH, ranks="2", bytes="1e9") != form("collective-time", ALL_LINKS, ranks="2",
                                                                           bytes="1e9")
    assert form("collective-time", MESH, ranks="4", bytes="1e9", part="busbw") == form(
        "collective-time", THREE_LINKS, ranks="4", bytes="1e9", part="busbw")
    assert form("crossover", MESH, ranks="4") == form("crossover", THREE_LINKS, ranks="4")
    assert form("crossover", MESH, ranks="4") != form("crossover", ALL_LINKS, ranks="4")


def test_a_measured_run_on_the_mesh_is_modelled_at_the_groups_bandwidth() -> None:
    points = [(1 << 20, 50e-6), (1 << 30, 20e-3)]
    assert fit.model_rows(points, "all-reduce", 2, MESH) == fit.model_rows(points, "all-reduce", 2, ONE_LINK)
