"""Reading interconnect presets: one YAML file per link in ``presets/links/``, checked and converted
into :class:`ainotes.core.links.Link` values (the keys are listed in that module's docstring), with the
GPU presets' folder, YAML and id rules (:mod:`ainotes.presets.folder`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ainotes.core.links import Link
from ainotes.presets import folder
from ainotes.presets.folder import check_figure, check_file_name, check_mapping, check_sources, check_text
from ainotes.presets.gpus import PRESET_ID_PATTERN

LINKS_SUBDIR = "links"
REQUIRED_KEYS = ("name", "bandwidth_gbps", "latency_us", "sources")
OPTIONAL_KEYS = ("notes",)


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
    check_mapping(data, where, (*REQUIRED_KEYS, *OPTIONAL_KEYS), REQUIRED_KEYS)
    check_text(where, "name", data["name"])
    check_figure(where, "bandwidth_gbps", data["bandwidth_gbps"])
    check_figure(where, "latency_us", data["latency_us"])
    check_sources(where, data["sources"])
    if "notes" in data:
        check_text(where, "notes", data["notes"], one_line=False)
    return Link(
        id=link_id,
        name=data["name"].strip(),
        bandwidth_gbps=float(data["bandwidth_gbps"]),
        latency_us=float(data["latency_us"]),
        sources=folder.sources_of(data),
        path=where,
        notes=data.get("notes"),
    )
