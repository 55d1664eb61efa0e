"""Reading interconnect presets: one YAML file per link in ``presets/links/``, checked and converted
into :class:`ainotes.core.links.Link` values (the keys are listed in that module's docstring), with the
GPU presets' folder, YAML and id rules (:mod:`ainotes.presets.folder`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ainotes.base.errors import InputError
from ainotes.base.textcheck import short
from ainotes.core.links import Link
from ainotes.presets import folder
from ainotes.presets.folder import check_figure, check_file_name, check_mapping, check_sources, check_text
from ainotes.presets.gpus import PRESET_ID_PATTERN

LINKS_SUBDIR = "links"
REQUIRED_KEYS = ("name", "bandwidth_gbps", "latency_us", "sources")
OPTIONAL_KEYS = ("notes", "mesh_links")
# Plausibility, per direction per GPU: from 1 GbE (0.125 GB/s) to past NVLink 5 (900 GB/s) and the
# 1,800 GB/s a next NVLink would bring; latency per message from a switch hop (tenths of a µs) to a
# data-centre network's tens of µs. A figure outside is a slip far more often than a new link.
PLAUSIBLE_BANDWIDTH_GBPS = (0.1, 2000.0)
PLAUSIBLE_LATENCY_US = (0.05, 500.0)
# NVIDIA prints NVLink as both directions together (600, 900, 1,800 GB/s per GPU); a file holds one
# direction (the shipped nvlink-3/4/5 files, with NVIDIA's datasheets as sources).
NVLINK_PER_DIRECTION_GBPS = {"3": 300.0, "4": 450.0, "5": 900.0}
_NVLINK_NAME = re.compile(r"\bnvlink[ -]?([0-9])\b", re.IGNORECASE)


def default_links_dir(presets_dir: str | Path | None = None) -> Path:
    """``<presets dir>/links``, the presets folder being
    :func:`ainotes.presets.folder.default_presets_dir` by default."""
    return folder.subfolder(LINKS_SUBDIR, presets_dir)


def link_files(directory: str | Path) -> tuple[Path, ...]:
    """The link files in ``directory`` (not recursive), sorted by name."""
    return folder.folder_files(directory, "link")


def load_links(directory: str | Path | None = None) -> tuple[Link, ...]:
    """Every link in ``directory`` (default :func:`default_links_dir`), fastest first, then by id.

    Raises :class:`InputError` for the first problem: a missing or empty folder,
    a bad file, or two files with the same id.
    """
    links = folder.load_folder(directory if directory is not None else default_links_dir(), load_link,
                               what="link", id_of=_link_id, file_of=_link_file)
    return tuple(sorted(links, key=lambda link: (-link.bandwidth_gbps, link.id)))


def _link_id(link: Link) -> str:
    return link.id


def _link_file(link: Link) -> str:
    return link.path


@dataclass(frozen=True)
class LinkCheck:
    """The outcome of validating one link file: the link, or the one-line error."""

    path: str
    link: Link | None
    error: str | None


def is_link_path(path: str | Path) -> bool:
    """Whether ``path`` is a link file by where it lives (``.../links/<id>.yaml``)."""
    return Path(path).parent.name == LINKS_SUBDIR


def validate_link_files(files: Iterable[str | Path]) -> tuple[LinkCheck, ...]:
    """Check link files without stopping at the first error; a later file repeating an id is an error."""
    found = folder.validate_paths(files, load_link, what="link", id_of=_link_id)
    return tuple(LinkCheck(check.path, check.item, check.error) for check in found)


def load_link(path: str | Path) -> Link:
    """Read, check and convert one link file; the id is the file's stem."""
    path = Path(path)
    where = str(path)
    link_id = check_file_name(path, "link", PRESET_ID_PATTERN,
                              "lowercase letters and digits, words joined by single hyphens")
    data = folder.parse_yaml(path, where)
    try:
        return _link(data, link_id, where)
    except InputError as exc:  # at the line of the key it names
        raise InputError(folder.at_key_line(str(exc), where, path)) from None


def _link(data: Any, link_id: str, where: str) -> Link:
    check_mapping(data, where, (*REQUIRED_KEYS, *OPTIONAL_KEYS), REQUIRED_KEYS, suggest=True)
    check_text(where, "name", data["name"])
    check_figure(where, "bandwidth_gbps", data["bandwidth_gbps"])
    check_figure(where, "latency_us", data["latency_us"])
    _check_plausible(where, data)
    check_sources(where, data["sources"])
    if "notes" in data:
        check_text(where, "notes", data["notes"], one_line=False)
    mesh = data.get("mesh_links")
    if mesh is not None and (isinstance(mesh, bool) or not isinstance(mesh, int)):
        raise InputError(f"{where}: 'mesh_links' must be a whole number of links (7 for an 8-GPU full mesh): "
                         f"{short(mesh)}")
    return Link(
        id=link_id,
        name=data["name"].strip(),
        bandwidth_gbps=float(data["bandwidth_gbps"]),
        latency_us=float(data["latency_us"]),
        sources=folder.sources_of(data),
        path=where,
        notes=data.get("notes"),
        mesh_links=mesh,
    )


def _check_plausible(where: str, data: dict) -> None:
    """Stop on a bandwidth or latency no link has, naming the likely slip: both directions for one (NVLink
    by its generation, or any figure above :data:`PLAUSIBLE_BANDWIDTH_GBPS` whose half fits), a unit off
    by 1,000 (GB/s for Gb/s ÷ 8 is not guessed: the hint names the unit), ns typed as µs."""
    bandwidth, latency = float(data["bandwidth_gbps"]), float(data["latency_us"])
    generation = _NVLINK_NAME.search(str(data["name"]))
    per_direction = NVLINK_PER_DIRECTION_GBPS.get(generation.group(1)) if generation else None
    if per_direction is not None and abs(bandwidth - 2 * per_direction) <= 0.01 * per_direction:
        raise InputError(f"{where}: 'bandwidth_gbps' {bandwidth:g} is NVLink {generation.group(1)}'s both "  # type: ignore[union-attr]
                         f"directions together, as NVIDIA prints it; a link file gives one direction: "
                         f"{per_direction:g}")
    low, high = PLAUSIBLE_BANDWIDTH_GBPS
    if not low <= bandwidth <= high:
        hint = (f"both directions together? one direction is {bandwidth / 2:g}" if low <= bandwidth / 2 <= high
                else f"MB/s typed as GB/s? ({bandwidth:g} MB/s = {bandwidth / 1000:g} GB/s)"
                if bandwidth > high else f"TB/s typed as GB/s? ({bandwidth:g} TB/s = {bandwidth * 1000:g} GB/s)")
        raise InputError(f"{where}: 'bandwidth_gbps' {bandwidth:g} is outside {low:g}-{high:,g} GB/s per "
                         f"direction per GPU, where every link lies: {hint}")
    low, high = PLAUSIBLE_LATENCY_US
    if not low <= latency <= high:
        hint = (f"ns typed as µs? ({latency:g} ns = {latency / 1000:g} µs)" if latency > high
                else f"ms typed as µs? ({latency:g} ms = {latency * 1000:g} µs)")
        raise InputError(f"{where}: 'latency_us' {latency:g} is outside {low:g}-{high:g} µs, where every "
                         f"link's per-message latency lies: {hint}")
