"""Node topology: a GPU preset's ``node`` key, the link a group of chips crosses, and no chip timed over
a link it does not have. Fixed figures come from tests/fixtures/parallel, so adding a shipped preset
changes nothing here; the shipped folder is only checked for properties every preset set must keep.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ainotes.base.errors import InputError
from ainotes.core.inference import default_link_id
from ainotes.core.parallel_step import step
from ainotes.core.parallelism import ParallelRun, point_to_point_s
from ainotes.core.topology import crosses_nodes, group_bandwidth_bytes_per_s, group_link, nodes_spanned
from ainotes.presets.gpus import load_preset, load_presets
from ainotes.presets.links import load_link, load_links
from ainotes.presets.models import load_models

FIXTURES = Path(__file__).parent / "fixtures" / "parallel"
PRESETS = {p.id: p for p in load_presets(FIXTURES)}
LINK_IDS = tuple(link.id for link in load_links(FIXTURES / "links"))
SHIPPED = Path(__file__).resolve().parent.parent / "presets"
H100, V5P, LONER = PRESETS["lab-h100"], PRESETS["book-v5p"], PRESETS["lab-loner"]


def test_the_node_key_loads_into_the_preset() -> None:
    assert H100.node is not None and (H100.node.chips, H100.node.link_id, H100.node.inter_node_link_id) == (
        8, "lab-nvlink", "lab-ib")
    assert V5P.node is not None and V5P.node.torus_axes == 3
    assert LONER.node is None


@pytest.mark.parametrize(("ranks", "stride", "link", "crosses", "nodes"), [
    (8, 1, "lab-nvlink", False, 1),  # 8-way TP fills one HGX board
    (4, 2, "lab-nvlink", False, 1),  # DP 4 over TP 2: span 8, one node
    (16, 1, "lab-ib", True, 2),  # 16-way TP spills onto a second node
    (4, 8, "lab-ib", True, 4),  # DP 4 over TP 8: each member in its own node
    (2, 3, "lab-ib", True, 1),  # span 6 does not divide 8: some groups straddle two nodes
    (1, 64, "lab-nvlink", False, 1),  # a group of one sends nothing
])
def test_a_group_stays_on_the_node_link_only_while_it_fits_in_one_node(
        ranks: int, stride: int, link: str, crosses: bool, nodes: int) -> None:
    placement = group_link(H100, ranks, stride=stride)
    assert (placement.link_id, placement.crosses_nodes) == (link, crosses)
    assert placement.nodes == nodes == nodes_spanned(8, ranks, stride)
    assert crosses_nodes(8, ranks, stride) is crosses


def test_a_tpu_group_crosses_hosts_on_the_same_ici() -> None:
    across = group_link(V5P, 64, stride=1)
    assert across.crosses_nodes and across.link_id == "book-ici" and across.nodes == 16


def test_named_links_override_the_node() -> None:
    assert group_link(H100, 16, intra_link_id="x", inter_link_id="y").link_id == "y"
    assert group_link(H100, 8, intra_link_id="x").link_id == "x"


def test_a_preset_without_a_node_has_no_default_link() -> None:
    with pytest.raises(InputError, match=r"preset lab-loner \(parallel/lab-loner.yaml\) names none: add node:"):
        group_link(LONER, 2)
    # Both links named: the chips share nothing, so every group crosses on the named inter-node link.
    assert group_link(LONER, 2, intra_link_id="lab-nvlink", inter_link_id="lab-ib").link_id == "lab-ib"


def test_inference_defaults_to_the_presets_own_node_link() -> None:
    assert default_link_id(H100, LINK_IDS) == "lab-nvlink"
    assert default_link_id(V5P, LINK_IDS) == "book-ici"
    with pytest.raises(InputError, match=r"tensor parallelism needs a link preset .* lab-loner names no node link"):
        default_link_id(LONER, LINK_IDS)
    with pytest.raises(InputError, match="lab-h100's node link lab-nvlink is not in presets/links"):
        default_link_id(H100, ("lab-ib",))


@pytest.mark.parametrize(("node", "message"), [
    ("node: {chips: 8, link: nvlink-4}", "missing required key 'node.inter_node_link'"),
    ("node: {chips: 0, link: a, inter_node_link: b}", "'node.chips' must be >= 1: 0"),
    ("node: {chips: 2.5, link: a, inter_node_link: b}", "'node.chips' must be a whole number: 2.5"),
    ("node: {chips: 8, link: NVLink 4, inter_node_link: b}", "'node.link' must be a link preset id"),
    ("node: {chips: 8, link: a, inter_node_link: b, torus: 3}", "unknown key 'node.torus'; allowed keys: chips,"),
    ("node: {chips: 8, link: a, inter_node_link: b, torus_axes: 4}", "'node.torus_axes' must be 1 to 3: 4"),
    ("node: 8", "'node' must be a mapping such as {chips: 8, link: nvlink-4, inter_node_link: ib-ndr}"),
])
def test_a_bad_node_is_one_line_naming_the_key(tmp_path: Path, node: str, message: str) -> None:
    text = (FIXTURES / "lab-loner.yaml").read_text(encoding="utf-8") + node + "\n"
    path = tmp_path / "chip.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as caught:
        load_preset(path)
    assert message in str(caught.value) and str(caught.value).startswith(str(path))
    assert "\n" not in str(caught.value)


def test_every_shipped_node_names_shipped_links() -> None:
    """Whatever presets ship, each one's node links are link presets that ship beside it."""
    links = {link.id for link in load_links(SHIPPED / "links")}
    for preset in load_presets(SHIPPED):
        if preset.node is not None:
            assert {preset.node.link_id, preset.node.inter_node_link_id} <= links, preset.id


def test_a_group_over_whole_nodes_runs_one_ring_per_port() -> None:
    """8 GPUs a node, each on its own 50 GB/s port: a data-parallel group over every chip of two nodes
    moves min(450, 8 × 50) = 400 GB/s per chip (the Scaling Book's 400e9); one chip a node, 50."""
    links = {link.id: link for link in load_links(FIXTURES / "links")}
    whole = group_link(H100, 16, stride=1)
    assert whole.members_per_node == 8
    assert group_bandwidth_bytes_per_s(whole, links["lab-nvlink"], links["lab-ib"]) == 400e9
    one_a_node = group_link(H100, 16, stride=8)
    assert one_a_node.members_per_node == 1
    assert group_bandwidth_bytes_per_s(one_a_node, links["lab-nvlink"], links["lab-ib"]) == 50e9


def test_a_full_mesh_gives_a_group_only_its_own_members_links() -> None:
    """AMD's 8-GPU MI300X board joins each GPU to the other 7 by its own 64 GB/s link, with no switch:
    a group of r GPUs moves (r − 1) × 64 GB/s per direction, all 448 only with the whole board
    (ROCm's MI300X tuning guide: 2- or 4-GPU collectives use a fraction of the node's bandwidth)."""
    links = {link.id: link for link in load_links(FIXTURES / "links")}
    mi300x, mesh = PRESETS["lab-mi300x"], links["lab-infinity-fabric"]
    moved = {ranks: group_bandwidth_bytes_per_s(group_link(mi300x, ranks), mesh, mesh) for ranks in (2, 4, 8)}
    assert moved == {2: pytest.approx(64e9), 4: pytest.approx(192e9), 8: pytest.approx(448e9)}
    # A send between two pipeline stages on the board crosses the one link that joins them.
    assert point_to_point_s(64e9, mesh) == pytest.approx(1.0 + 2.1e-6)
    # Across nodes, 4 members a node on their own 50 GB/s ports: min(3 × 64, 4 × 50) = 192 GB/s.
    spread = group_link(mi300x, 8, stride=2)
    assert (spread.crosses_nodes, spread.members_per_node) == (True, 4)
    assert group_bandwidth_bytes_per_s(spread, mesh, links["lab-ib"]) == pytest.approx(192e9)
    # A switched link gives every group size its whole bandwidth.
    nvlink = links["lab-nvlink"]
    assert group_bandwidth_bytes_per_s(group_link(H100, 2), nvlink, nvlink) == 450e9


def test_an_mi300x_is_timed_over_its_infinity_fabric_never_nvlink() -> None:
    links = {link.id: link for link in load_links(FIXTURES / "links")}
    models = {m.id: m for m in load_models(FIXTURES / "models")}
    run = ParallelRun.from_fields({"model": "lab-70b", "preset": "lab-mi300x", "gpus": 16, "tp": 8},
                                  models=models, presets=PRESETS, links=links)
    by_kind = {c.parallelism: c.link for c in step(run).collectives}
    assert by_kind == {"tp": "lab-infinity-fabric", "dp": "lab-ib"}


@pytest.mark.parametrize(("value", "message"), [
    ("seven", "'mesh_links' must be a whole number of links (7 for an 8-GPU full mesh): 'seven'"),
    ("0", "'mesh_links' must be a whole number from 1 to 64: 0"),
    ("true", "'mesh_links' must be a whole number of links"),
])
def test_a_bad_mesh_is_one_line_naming_the_key(tmp_path: Path, value: str, message: str) -> None:
    text = (FIXTURES / "links" / "lab-infinity-fabric.yaml").read_text(encoding="utf-8")
    path = tmp_path / "links" / "mesh.yaml"
    path.parent.mkdir()
    path.write_text(text.replace("mesh_links: 7", f"mesh_links: {value}"), encoding="utf-8")
    with pytest.raises(InputError) as caught:
        load_link(path)
    assert message in str(caught.value) and str(caught.value).startswith(str(path))
    assert "\n" not in str(caught.value)


def test_inference_tensor_parallelism_on_a_full_mesh_moves_only_its_members_links() -> None:
    """Two or four MI300X of a board serving one model talk over 1 or 3 of their 7 links: their
    all-reduces run at 64 and 192 GB/s, not the 448 GB/s of the whole board (issue 27's "no chip is
    timed over a link it does not have", for the inference figures too)."""
    from ainotes.core.inference import tp_link

    links = {link.id: link for link in load_links(FIXTURES / "links")}
    mi300x = PRESETS["lab-mi300x"]
    moved = {tp: tp_link(mi300x, tp, links).bandwidth_bytes_per_s for tp in (2, 4, 8)}
    assert moved == {2: pytest.approx(64e9), 4: pytest.approx(192e9), 8: pytest.approx(448e9)}
    assert tp_link(mi300x, 4, links).latency_us == links["lab-infinity-fabric"].latency_us
    # A switched node link gives any group inside the node its whole bandwidth.
    assert tp_link(H100, 2, links) == links["lab-nvlink"]
