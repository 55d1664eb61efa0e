"""Interconnect presets: one YAML file per link in ``presets/links/``, loaded into frozen ``Link`` objects.

A link is what the α–β model of collective cost needs (Hockney 1994; see
:mod:`ainotes.core.collective_cost`): a message of S bytes between two ranks takes
α + S/B.

* ``bandwidth_gbps``: B, per direction, per GPU, in 10^9 bytes/s. Vendors print
  NVLink as the sum of both directions; the file holds half of that figure.
* ``latency_us``: α, per message, in microseconds. No vendor prints it: it is
  an assumption, and each shipped file says where it comes from (NCCL's own
  tuning model, ``src/graph/tuning.cc``).
* ``sources``: non-empty list of ``{title, url}``; ``notes`` is optional text.

The rules are the GPU presets' (:mod:`ainotes.core.hardware`), reused from there: an
unknown or missing key, a non-number, zero, a negative, NaN or infinity is one
line naming the file and the key, e.g.
``presets/links/nvlink-4.yaml: 'bandwidth_gbps' must be > 0: -450``.
The GPU loader reads only the files directly in ``presets/``, so this
subfolder never reaches it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ainotes.base.errors import InputError
from ainotes.base.textcheck import short
from ainotes.core.hardware import (
    PRESET_ID_PATTERN,
    PRESET_SUFFIXES,
    Source,
    _check_positive_number,
    _check_sources,
    _check_text,
    _duplicate_message,
    _kind,
    _parse_yaml,
    default_presets_dir,
    item_by_id,
)

LINKS_SUBDIR = "links"
GIGA = 1e9
MICRO = 1e-6
REQUIRED_KEYS = ("name", "bandwidth_gbps", "latency_us", "sources")
OPTIONAL_KEYS = ("notes",)


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

    def __post_init__(self) -> None:
        where = self.path or f"link {short(self.id)}"
        _check_positive_number(where, "bandwidth_gbps", self.bandwidth_gbps)
        _check_positive_number(where, "latency_us", self.latency_us)

    @property
    def bandwidth_bytes_per_s(self) -> float:
        """B in bytes/s: GB/s × 10^9."""
        return self.bandwidth_gbps * GIGA

    @property
    def latency_s(self) -> float:
        """α in seconds: µs × 10^-6."""
        return self.latency_us * MICRO


def default_links_dir(presets_dir: str | Path | None = None) -> Path:
    """``<presets dir>/links``, the presets folder being
    :func:`ainotes.core.hardware.default_presets_dir` by default."""
    base = Path(presets_dir) if presets_dir is not None else default_presets_dir()
    return base / LINKS_SUBDIR


def link_files(directory: str | Path) -> tuple[Path, ...]:
    """The link files in ``directory`` (not recursive), sorted by name."""
    folder = Path(directory)
    if not folder.is_dir():
        raise InputError(f"{folder}: links folder does not exist")
    files = sorted(p for p in folder.iterdir() if p.suffix in PRESET_SUFFIXES)
    if not files:
        raise InputError(f"{folder}: links folder holds no link files (*.yaml, *.yml)")
    return tuple(files)


def load_links(directory: str | Path | None = None) -> tuple[Link, ...]:
    """Every link in ``directory`` (default :func:`default_links_dir`), fastest first, then by id.

    Raises :class:`InputError` for the first problem: a missing or empty folder,
    a bad file, or two files with the same id.
    """
    folder = Path(directory) if directory is not None else default_links_dir()
    links = [load_link(path) for path in link_files(folder)]
    seen: dict[str, str] = {}
    for link in links:
        earlier = seen.setdefault(link.id, link.path)
        if earlier != link.path:
            raise InputError(_duplicate_message(link.path, link.id, earlier, "link"))
    return tuple(sorted(links, key=lambda link: (-link.bandwidth_gbps, link.id)))


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
    checks: list[LinkCheck] = []
    seen: dict[str, str] = {}
    for file in files:
        try:
            link = load_link(file)
        except InputError as exc:
            checks.append(LinkCheck(str(file), None, str(exc)))
            continue
        earlier = seen.setdefault(link.id, link.path)
        if earlier != link.path:
            checks.append(LinkCheck(link.path, None, _duplicate_message(link.path, link.id, earlier, "link")))
        else:
            checks.append(LinkCheck(link.path, link, None))
    return tuple(checks)


def link_by_id(links: Iterable[Link], link_id: str) -> Link:
    """The link called ``link_id``; an :class:`InputError` lists the known ids otherwise."""
    return item_by_id(links, link_id, "link")


def load_link(path: str | Path) -> Link:
    """Read, check and convert one link file; the id is the file's stem."""
    path = Path(path)
    where = str(path)
    if path.suffix not in PRESET_SUFFIXES:
        raise InputError(f"{where}: a link file must end in .yaml or .yml")
    if not PRESET_ID_PATTERN.fullmatch(path.stem):
        raise InputError(
            f"{where}: the file name must be a link id "
            f"(lowercase letters and digits, words joined by single hyphens): {short(path.stem)}"
        )
    data = _parse_yaml(path, where)
    _check_link_document(data, where)
    return Link(
        id=path.stem,
        name=data["name"].strip(),
        bandwidth_gbps=float(data["bandwidth_gbps"]),
        latency_us=float(data["latency_us"]),
        sources=tuple(Source(title=s["title"].strip(), url=s["url"].strip()) for s in data["sources"]),
        path=where,
        notes=data.get("notes"),
    )


def _check_link_document(data: Any, where: str) -> None:
    if data is None:
        raise InputError(f"{where}: the file is empty; expected a mapping with {', '.join(REQUIRED_KEYS)}")
    if not isinstance(data, dict):
        raise InputError(f"{where}: must be a mapping of keys to values, not {_kind(data)}")
    allowed = (*REQUIRED_KEYS, *OPTIONAL_KEYS)
    for key in data:
        if key not in allowed:
            raise InputError(f"{where}: unknown key {short(key)}; allowed keys: {', '.join(allowed)}")
    for key in REQUIRED_KEYS:
        if key not in data:
            raise InputError(f"{where}: missing required key {short(key)}")
    _check_text(where, "name", data["name"])
    _check_positive_number(where, "bandwidth_gbps", data["bandwidth_gbps"])
    _check_positive_number(where, "latency_us", data["latency_us"])
    _check_sources(where, data["sources"])
    if "notes" in data:
        _check_text(where, "notes", data["notes"], one_line=False)
