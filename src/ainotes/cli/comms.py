"""``ainotes links`` and ``collective-cost``: the interconnect presets and a collective's α–β time."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

from ainotes.base.errors import InputError
from ainotes.cli import shared

if TYPE_CHECKING:
    from ainotes.core.links import Link


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    """Register this module's subcommands."""
    links = commands.add_parser("links", parents=[common], help="list the interconnect presets",
                                description="List the interconnect presets in <presets dir>/links: bandwidth "
                                "per direction per GPU (GB/s) and the per-message latency α (µs, an assumption).")
    links.add_argument("--json", action="store_true", help="print JSON instead of a table")
    links.set_defaults(handler=_cmd_links)

    cost = commands.add_parser(
        "collective-cost", parents=[common], help="a collective's time under the α–β model",
        description="Estimate a collective's time on p ranks for a tensor of S bytes over a link, with the "
        "latency–bandwidth (α–β) model: one line per algorithm, split into latency and bandwidth terms, with "
        "nccl-tests' algbw = S/t and busbw = algbw × bus factor. No contention, no topology, no overlap.",
    )
    cost.add_argument("op", metavar="OP", help="all-reduce, reduce, reduce-scatter, all-gather, broadcast, "
                      "scatter or all-to-all")
    cost.add_argument("--ranks", type=shared.ranks, required=True, metavar="N",
                      help="number of ranks, 2 to 1024, a power of two or not")
    cost.add_argument("--bytes", type=shared.number, required=True, metavar="S",
                      help="tensor size in bytes, e.g. 1e9 (an all-gather's output, one rank's all-to-all buffer)")
    cost.add_argument("--link", required=True, metavar="ID", help="interconnect preset id (see 'ainotes links')")
    cost.add_argument("--json", action="store_true", help="print JSON")
    cost.set_defaults(handler=_cmd_collective_cost)


def _cmd_links(args: argparse.Namespace) -> int:
    links = shared.load_link_presets(args)
    if args.json:
        records = [
            {"id": link.id, "name": link.name, "bandwidth_gbps": link.bandwidth_gbps, "latency_us": link.latency_us,
             "sources": [{"title": s.title, "url": s.url} for s in link.sources], "path": link.path}
            for link in links
        ]
        print(json.dumps({"links": records}, indent=2, ensure_ascii=False))
        return 0
    header = ["id", "name", "GB/s per direction", "latency µs"]
    rows = [[link.id, link.name, f"{link.bandwidth_gbps:g}", f"{link.latency_us:g}"] for link in links]
    print(shared.table(header, rows, right={2, 3}))
    print()
    print("Bandwidth is per direction, per GPU (vendors print NVLink as both directions together). Latency is an")
    print("assumption for the α–β model, from NCCL's tuning model (src/graph/tuning.cc); edit it in the link's file.")
    return 0


def _bandwidth_words(link: Link, ranks: int) -> str:
    """``450 GB/s per direction``; on a full mesh of m links, the group's B and how many links it is."""
    if link.mesh_links is None:
        return f"{link.bandwidth_gbps:g} GB/s per direction"
    used = min(ranks - 1, link.mesh_links)
    return (f"{link.group_bandwidth_bytes_per_s(ranks) / 1e9:.4g} GB/s per direction: {used} of each GPU's "
            f"{link.mesh_links} mesh links at {ranks} ranks")


def _cmd_collective_cost(args: argparse.Namespace) -> int:
    from ainotes.core import collective_cost
    from ainotes.core.links import link_by_id

    try:
        link = link_by_id(shared.load_link_presets(args), args.link)
    except InputError as exc:
        raise InputError(f"--link: {exc}") from None
    # B of the group of --ranks chips: the link's own through a switch, less on a full mesh.
    bandwidth = link.group_bandwidth_bytes_per_s(args.ranks)
    figures = {"bandwidth_bytes_per_s": bandwidth, "latency_s": link.latency_s}
    times = collective_cost.collective_times(args.op, args.ranks, args.bytes, **figures)
    changes = collective_cost.best_algorithm_changes(args.op, args.ranks, **figures)
    if args.json:
        record = {
            "op": args.op,
            "ranks": args.ranks,
            "bytes": args.bytes,
            "link": {"id": link.id, "bandwidth_gbps": link.bandwidth_gbps, "latency_us": link.latency_us,
                     **({} if link.mesh_links is None else
                        {"mesh_links": link.mesh_links, "group_bandwidth_gbps": bandwidth / 1e9})},
            "algorithms": [
                {"name": t.algorithm, "time_s": t.time_s, "latency_s": t.latency_s, "bandwidth_s": t.bandwidth_s,
                 "algbw_gbps": t.algbw_bytes_per_s / 1e9, "busbw_gbps": t.busbw_bytes_per_s / 1e9}
                for t in times
            ],
            "note": collective_cost.non_power_of_two_note(args.op, args.ranks),
            "best_changes": [
                {"bytes": c.message_bytes, "faster_below": c.faster_below, "faster_above": c.faster_above}
                for c in changes
            ],
        }
        print(json.dumps(record, indent=2, ensure_ascii=False))
        return 0
    from ainotes.base import units

    print(f"{args.op} of {units.si(args.bytes, 'B')} on {args.ranks} ranks over {link.name} "
          f"(B = {_bandwidth_words(link, args.ranks)}, α = {link.latency_us:g} µs)")
    header = ["algorithm", "time", "latency term", "bandwidth term", "algbw GB/s", "busbw GB/s"]
    rows = [
        [t.algorithm + (f" (k={t.chunks})" if t.chunks else ""), shared.seconds(t.time_s), shared.seconds(t.latency_s),
         shared.seconds(t.bandwidth_s), f"{t.algbw_bytes_per_s / 1e9:.4g}", f"{t.busbw_bytes_per_s / 1e9:.4g}"]
        for t in times
    ]
    print(shared.table(header, rows, right={1, 2, 3, 4, 5}))
    note = collective_cost.non_power_of_two_note(args.op, args.ranks)
    if note:
        print(f"{note}.")
    for change in changes:
        print(f"fastest changes at {units.si(change.message_bytes, 'B')}: {change.faster_below} below, "
              f"{change.faster_above} above")
    if not changes:
        print("the fastest algorithm is the same from 1 kB to 10 GB")
    return 0
