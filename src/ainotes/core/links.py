"""Interconnect presets as values: frozen ``Link`` objects, one per file of ``presets/links/`` (read and
checked by :mod:`ainotes.presets.links`), each validated once, in its constructor.

A link is what the α–β model of collective cost needs (Hockney 1994; see
:mod:`ainotes.core.collective_cost`): a message of S bytes between two ranks takes
α + S/B.

* ``bandwidth_gbps``: B, per direction, per GPU, in 10^9 bytes/s. Vendors print
  NVLink as the sum of both directions; the file holds half of that figure.
* ``latency_us``: α, per message, in microseconds. No vendor prints it: it is
  an assumption, and each shipped file says where it comes from (NCCL's own
  tuning model, ``src/graph/tuning.cc``).
* ``mesh_links`` (optional): for a node whose chips are wired to one another directly, a full mesh
  with no switch (AMD's Infinity Fabric on an 8-GPU MI300X board: 7 links a GPU, one to each peer),
  how many point-to-point links ``bandwidth_gbps`` sums. A collective over all the node's chips spreads
  over every link (RCCL runs a ring on each); a group of r chips reaches only its r − 1 peers, so it
  moves B·min(r − 1, m)/m, and a send between two chips one link's B/m.
* ``sources``: non-empty list of ``{title, url}``; ``notes`` is optional text.

The rules are the GPU presets' (:mod:`ainotes.presets.folder`), reused from there: an
unknown or missing key, a non-number, zero, a negative, NaN or infinity is one
line naming the file and the key, e.g.
``presets/links/nvlink-4.yaml: 'bandwidth_gbps' must be a finite number > 0: -450``.
The GPU loader reads only the files directly in ``presets/``, so this
subfolder never reaches it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ainotes.base.textcheck import short
from ainotes.core import checks
from ainotes.core.hardware import Source, check_figure, item_by_id

GIGA = 1e9
MICRO = 1e-6
MAX_MESH_LINKS = 64  # point-to-point links one chip of a full mesh can have: far above any board's


@dataclass(frozen=True)
class Link:
    """One interconnect: bandwidth per direction per GPU, and the per-message latency α."""

    id: str
    name: str
    bandwidth_gbps: float
    latency_us: float
    sources: tuple[Source, ...]
    path: str
    notes: str | None = None
    mesh_links: int | None = None  # a full mesh: B is the sum of this many point-to-point links

    def __post_init__(self) -> None:
        where = self.path or f"link {short(self.id)}"
        check_figure(where, "bandwidth_gbps", self.bandwidth_gbps)
        check_figure(where, "latency_us", self.latency_us)
        if self.mesh_links is not None:
            checks.whole_number(self.mesh_links, f"{where}: 'mesh_links'", "mesh_links", high=MAX_MESH_LINKS)

    def group_bandwidth_bytes_per_s(self, ranks: int) -> float:
        """B per chip for a group of ``ranks`` chips on this link: all of it through a switch; on a full
        mesh of m links, B·min(r − 1, m)/m (the group's chips reach one another over r − 1 of their m
        links; 2 chips: one link)."""
        if self.mesh_links is None or ranks < 2:
            return self.bandwidth_bytes_per_s
        return self.bandwidth_bytes_per_s * min(ranks - 1, self.mesh_links) / self.mesh_links

    @property
    def bandwidth_bytes_per_s(self) -> float:
        """B in bytes/s: GB/s × 10^9."""
        return self.bandwidth_gbps * GIGA

    @property
    def latency_s(self) -> float:
        """α in seconds: µs × 10^-6."""
        return self.latency_us * MICRO


def link_by_id(links: Iterable[Link], link_id: str) -> Link:
    """The link called ``link_id``; an :class:`InputError` lists the known ids otherwise."""
    return item_by_id(links, link_id, "link")
