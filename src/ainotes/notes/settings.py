"""The build's settings, read once from ``mkdocs.yml``: :class:`NotesSettings` and :func:`notes_settings`.

Every driver builds one :class:`NotesSettings` with :func:`notes_settings` from what its builder
gives it — ``hooks/notes.py`` from MkDocs' (or ProperDocs') config, :mod:`ainotes.project` from
``mkdocs.yml`` read as YAML (``ainotes site-assets``), the Markdown extension from Zensical's
rendering context — and hands it to the build's :class:`ainotes.build.site.NotesSite`, which passes
it down. The defaults (``presets``, ``references.bib``) live here alone.

Knows nothing of MkDocs or Markdown.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ainotes.base.errors import InputError

EXTENSION = "ainotes.markdown"  # the Markdown extension's name in mkdocs.yml; its options are these settings'
DEFAULT_PRESETS_DIR = "presets"  # beside mkdocs.yml
DEFAULT_BIBLIOGRAPHY = "references.bib"  # in docs_dir
UNSAFE_IN_THEME = re.compile(r'[<>"]')  # what the theme's templates would write into HTML unescaped


@dataclass(frozen=True)
class NotesSettings:
    """Where the notes and presets are and how the site addresses them.

    ``docs_dir``: the pages (``None``: a build of loose pages, no notes catalogue).
    ``presets_dir``: the GPU presets (``links/`` and ``models/`` inside it).
    ``tags``: the allowed tags and a line on each (empty: no page may carry tags).
    ``bibliography``: the BibTeX file, relative to ``docs_dir`` (missing: none).
    ``site_url``: the published address (the feed's absolute links need it)."""

    docs_dir: Path | None
    site_url: str | None = None
    site_name: str = ""
    site_description: str = ""
    use_directory_urls: bool = True
    tags: Mapping[str, str] = field(default_factory=dict)
    bibliography: str = DEFAULT_BIBLIOGRAPHY
    presets_dir: Path = Path(DEFAULT_PRESETS_DIR)

    @property
    def bibliography_path(self) -> Path | None:
        return None if self.docs_dir is None else self.docs_dir / self.bibliography

    @property
    def bibliography_shown(self) -> str:
        """The bibliography as messages name it: ``docs/references.bib``."""
        docs = self.docs_dir.name if self.docs_dir is not None else "docs"
        return f"{docs}/{self.bibliography}"


def presets_only(presets_dir: str | Path) -> NotesSettings:
    """Settings for a build of loose pages (tests, plain Python-Markdown): presets, no notes."""
    return NotesSettings(docs_dir=None, presets_dir=Path(presets_dir))


def notes_settings(*, root: Path, docs_dir: str | Path, options: Mapping[str, Any] | None,
                   site_url: object = None, site_name: object = "", site_description: object = "",
                   use_directory_urls: object = True, where: str = "mkdocs.yml") -> NotesSettings:
    """The settings of a project whose ``mkdocs.yml`` sits in ``root``.

    ``docs_dir`` is relative to ``root`` (or absolute); ``options`` are the ``ainotes.markdown``
    extension's: ``tags``, ``bibliography`` (relative to ``docs_dir``) and ``presets_dir``
    (relative to ``root``; default ``presets``). ``where`` names the file in messages."""
    own = dict(options or {})
    tags = own.get("tags") or {}
    if not isinstance(tags, Mapping):
        raise InputError(f"{where}: '{EXTENSION}: tags' must map each tag to a line on it, got {type(tags).__name__}")
    presets = own.get("presets_dir") or DEFAULT_PRESETS_DIR
    for key, value in (("site_name", site_name), ("site_description", site_description)):
        bad = UNSAFE_IN_THEME.search(str(value or ""))
        if bad is not None:  # the theme writes both into every page's <head> as they are
            raise InputError(f"{where}: {key!r} may not hold {bad.group()!r}: the theme writes it into every "
                             f"page's HTML as it is (write quotation marks as “ ” and spell out < and >)")
    return NotesSettings(
        docs_dir=root / str(docs_dir),
        site_url=str(site_url) if site_url else None,
        site_name=str(site_name or ""),
        site_description=str(site_description or ""),
        use_directory_urls=bool(use_directory_urls),
        tags={str(tag): str(line) for tag, line in tags.items()},
        bibliography=str(own.get("bibliography") or DEFAULT_BIBLIOGRAPHY),
        presets_dir=root / str(presets),
    )
