"""Which link a group of chips talks over: inside one node, or across nodes.

A GPU preset's ``node`` (:class:`ainotes.core.hardware.NodeTopology`) says how many chips share the
fast link (8 GPUs on an HGX H100 board, over NVLink through NVSwitch; 4 chips per TPU host) and which
link presets join chips inside a node and between nodes. A parallel layout numbers its chips with the
innermost axis fastest (Megatron-LM's order: tensor, then context, then data, then pipeline), so one
group of an axis is ``ranks`` chips spaced ``stride`` apart, the stride being the product of the inner
axes' degrees: tensor-parallel groups have stride 1, data-parallel groups stride tp·cp, pipeline groups
stride tp·cp·dp.

Such a group stays inside one node when its span ``ranks · stride`` fits in the node and divides it
(groups are then aligned to node boundaries); otherwise at least one of its hops crosses nodes, and a
ring or tree over it runs at the slower inter-node link, which sets its pace. Where g members of the
group share each node (a data-parallel group over every chip of an HGX board), a library runs g rings
side by side, one per network port (NCCL's channels over the node's rails), each carrying 1/g of the
message across nodes, so the group moves min(W_node, g·W_port) bytes per second per chip: the Scaling
Book's 400e9 B/s across H100 nodes is 8 GPUs × 50e9 B/s of NDR. A node wired as a full mesh (AMD's
Infinity Fabric joins each of 8 MI300X GPUs to the other 7 by its own link, with no switch) gives a group
only the links among its own members: r − 1 of each chip's 7, so 2-way tensor parallelism runs on one
link where 8-way runs on all seven. No chip is timed over a link it does
not have: a preset without ``node`` has no default link, and the caller must name one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ainotes.base.errors import InputError
from ainotes.base.textcheck import short
from ainotes.core import checks
from ainotes.core.hardware import NodeTopology, Preset
from ainotes.core.links import Link

MAX_GROUP = 1_000_000


@dataclass(frozen=True)
class GroupPlacement:
    """Where one group of ``ranks`` chips, ``stride`` apart, lies: the link it is timed over, whether it
    crosses nodes, how many nodes it spans, and how many of its members share each node."""

    ranks: int
    stride: int
    link_id: str
    crosses_nodes: bool
    nodes: int
    members_per_node: int = 1
    intra_link_id: str = ""  # the node's own link, which caps what parallel rings across nodes reach


def group_bandwidth_bytes_per_s(placement: GroupPlacement, intra: Link | None, inter: Link) -> float:
    """Bytes per second per chip a group moves over ``inter`` (the link :func:`group_link` named): that
    link's B inside a node; across nodes min(B_intra, g · B_inter) with g members per node (g rings side
    by side, one per port); ``intra`` may be ``None`` where the chips share no node link. On a full-mesh
    node link (``mesh_links``) a group reaches only its own members' links:
    :meth:`ainotes.core.links.Link.group_bandwidth_bytes_per_s` of the r chips inside the node, or of
    the g that share each node."""
    if not placement.crosses_nodes:
        return inter.group_bandwidth_bytes_per_s(placement.ranks)
    if placement.members_per_node == 1:
        return inter.bandwidth_bytes_per_s
    across = placement.members_per_node * inter.bandwidth_bytes_per_s
    return across if intra is None else min(intra.group_bandwidth_bytes_per_s(placement.members_per_node), across)


def node_of(preset: Preset, *, what: str = "a collective") -> NodeTopology:
    """The preset's node topology; an :class:`InputError` saying the file names none otherwise."""
    if preset.node is None:
        where = f" ({preset.file_label})" if preset.file else ""
        raise InputError(f"{what} needs the links its chips share, and preset {preset.id}{where} names none: "
                         "add node: {chips: N, link: ID, inter_node_link: ID} to its file, or name the links")
    return preset.node


def crosses_nodes(chips_per_node: int, ranks: int, stride: int = 1) -> bool:
    """Whether a group of ``ranks`` chips ``stride`` apart leaves one node of ``chips_per_node``: its span
    ranks·stride must fit in the node and divide it (so every group is aligned inside one node)."""
    span = ranks * stride
    return ranks > 1 and (span > chips_per_node or chips_per_node % span != 0)


def nodes_spanned(chips_per_node: int, ranks: int, stride: int = 1) -> int:
    """How many nodes one group touches: 1 inside a node; ``ranks`` when the stride is a whole number of
    nodes (each member in its own node); else ⌈ranks·stride / chips per node⌉."""
    if not crosses_nodes(chips_per_node, ranks, stride):
        return 1
    if stride % chips_per_node == 0:
        return ranks
    return min(ranks, math.ceil(ranks * stride / chips_per_node))


def group_link(preset: Preset, ranks: int, *, stride: int = 1, intra_link_id: str | None = None,
               inter_link_id: str | None = None) -> GroupPlacement:
    """The link one group of a parallel axis talks over, on ``preset``'s node topology.

    ``ranks``: the group's size (the axis's degree); ``stride``: how far apart its members are, the
    product of the degrees of the axes inside it (1 for tensor parallelism). The group is inside a node
    when :func:`crosses_nodes` says it does not cross; it is then timed over the node's ``link`` (NVLink
    on an HGX board, ICI on a TPU host), else over ``inter_node_link`` (an InfiniBand port per GPU; ICI
    again between TPU hosts of one pod). ``intra_link_id`` / ``inter_link_id`` override the preset's
    own; a preset without ``node`` needs both named, or an :class:`InputError` says so.
    Example: on an 8-GPU H100 node, tp = 8 (stride 1) stays on NVLink; dp = 4 with stride 8 crosses
    nodes over InfiniBand; tp = 2 and dp = 4 with stride 2 stays inside (span 8).
    """
    ranks = checks.whole_number(ranks, "'ranks'", "ranks", low=1, high=MAX_GROUP)
    stride = checks.whole_number(stride, "'stride'", "stride", low=1, high=MAX_GROUP)
    node = preset.node
    if node is None:
        if intra_link_id is None or inter_link_id is None:
            node_of(preset)
        # No node in the file but both links named: a board's GPUs (gpu_count) share the fast link.
        chips = preset.gpu_count or 1
        intra, inter = intra_link_id or "", inter_link_id or ""
    else:
        chips = node.chips
        intra, inter = intra_link_id or node.link_id, inter_link_id or node.inter_node_link_id
    crosses = crosses_nodes(chips, ranks, stride)
    link_id = inter if crosses else intra
    if not link_id:
        raise InputError(f"a group of {ranks} chips on preset {short(preset.id)} needs a link; name one")
    members = ranks if not crosses else (1 if stride >= chips else max(1, min(ranks, chips // stride)))
    return GroupPlacement(ranks, stride, link_id, crosses, nodes_spanned(chips, ranks, stride), members, intra)

