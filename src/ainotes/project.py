"""A notes project read from its ``mkdocs.yml``, for builders that run no hooks (Zensical).

:func:`write_site_assets` does what ``hooks/notes.py`` does after a MkDocs build: it
converts every page with the Markdown extensions ``mkdocs.yml`` lists (so it meets the
same fences, with the same chart ids) and writes the shared assets, the embed files and
``embed/manifest.json`` into the built site folder.
"""

from __future__ import annotations

import importlib
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from ainotes.base.errors import InputError
from ainotes.build.site import NotesSite
from ainotes.markdown.extension import convert_page
from ainotes.notes import feed
from ainotes.notes import meta as notes_meta
from ainotes.notes.meta import page_url
from ainotes.notes.settings import EXTENSION, NotesSettings, notes_settings

_FRONT_MATTER = re.compile(r"\A-{3}[ \t]*\n.*?\n(?:-{3}|\.{3})[ \t]*\n", re.S)


@dataclass(frozen=True)
class Project:
    """What a build needs from ``mkdocs.yml``: its settings (built once, here), the extensions and their options."""

    config_path: Path
    settings: NotesSettings
    extensions: tuple[str, ...]
    extension_configs: dict[str, dict[str, Any]]

    @property
    def docs_dir(self) -> Path:
        assert self.settings.docs_dir is not None  # read_project always gives one
        return self.settings.docs_dir

    @property
    def presets_dir(self) -> Path:
        return self.settings.presets_dir


class _ConfigLoader(yaml.SafeLoader):
    """Safe YAML plus the tags mkdocs.yml files use: ``!ENV`` and ``!!python/name:``."""


def _env(loader: _ConfigLoader, node: yaml.Node) -> Any:
    if isinstance(node, yaml.ScalarNode):
        names, default = [loader.construct_scalar(node)], None
    else:
        items = loader.construct_sequence(node)  # type: ignore[arg-type]
        names, default = items[:-1], items[-1] if len(items) > 1 else None
    for name in names:
        if isinstance(name, str) and name in os.environ:
            return os.environ[name]
    return default


def _python_name(loader: _ConfigLoader, suffix: str, node: yaml.Node) -> Any:
    module, _, attribute = suffix.rpartition(".")
    try:
        return getattr(importlib.import_module(module), attribute)
    except (ImportError, AttributeError, ValueError) as exc:
        raise InputError(f"cannot import {suffix!r}: {exc}") from None


_ConfigLoader.add_constructor("!ENV", _env)
_ConfigLoader.add_multi_constructor("tag:yaml.org,2002:python/name:", _python_name)


def read_project(config_path: str | Path) -> Project:
    """The project that ``config_path`` (a ``mkdocs.yml``) describes; presets sit beside it."""
    path = Path(config_path)
    try:
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=_ConfigLoader)
    except OSError as exc:
        raise InputError(f"{path}: cannot read the file: {exc.strerror or exc}") from None
    except (yaml.YAMLError, InputError) as exc:
        raise InputError(f"{path}: not a readable mkdocs.yml: {' '.join(str(exc).split())}") from None
    if not isinstance(data, dict):
        raise InputError(f"{path}: not a mkdocs.yml: expected a mapping of settings")
    names: list[str] = []
    configs: dict[str, dict[str, Any]] = {}
    for item in data.get("markdown_extensions") or []:
        name, config = (item, {}) if isinstance(item, str) else next(iter(item.items()), ("", {}))
        if not isinstance(name, str) or not name:
            raise InputError(f"{path}: 'markdown_extensions' holds an entry that is not a name: {item!r}")
        names.append(name)
        configs[name] = dict(config or {})
    settings = notes_settings(
        root=path.parent, docs_dir=str(data.get("docs_dir", "docs")), options=configs.get(EXTENSION),
        site_url=data.get("site_url"), site_name=data.get("site_name"), site_description=data.get("site_description"),
        use_directory_urls=data.get("use_directory_urls", True), where=str(path))
    return Project(config_path=path, settings=settings, extensions=tuple(names), extension_configs=configs)


def write_site_assets(config_path: str | Path, site_dir: str | Path, *,
                      progress: Callable[[int, int], None] | None = None) -> NotesSite:
    """Convert every page of the project and write assets, embed files, manifest and the notes'
    feeds (:mod:`ainotes.notes.feed`) into ``site_dir``.

    ``progress(done, total)`` hears how far the chart renders are, every few seconds of a long run."""
    project = read_project(config_path)
    site_folder = Path(site_dir)
    if not site_folder.is_dir():
        raise InputError(f"{site_folder}: no such folder; build the site first")
    if not project.docs_dir.is_dir():
        raise InputError(f"{project.config_path}: docs folder {str(project.docs_dir)!r} does not exist")
    # The pages are the generator's: their figures are never drawn here.
    site = NotesSite(project.settings, defer_figures=True, render_progress=progress)
    for page in sorted(project.docs_dir.rglob("*.md")):
        src = page.relative_to(project.docs_dir).as_posix()
        text = _FRONT_MATTER.sub(lambda m: "\n" * m.group(0).count("\n"), page.read_text(encoding="utf-8"), count=1)
        convert_page(site, text, src, page_url(src, project.settings.use_directory_urls),
                     extensions=project.extensions, extension_configs=project.extension_configs)
    site.write_outputs(site_folder)
    catalogue = notes_meta.known_catalogue(site)
    if catalogue is not None:
        feed.write_feeds(catalogue, site_folder)  # as hooks/notes.py does
    return site
