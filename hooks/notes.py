"""MkDocs hooks: a thin adapter from MkDocs events to ``ainotes.site``.

Each event is a few lines; the work (fences, figures, charts, embed files)
happens in ``ainotes``, which knows nothing of MkDocs.
"""

from __future__ import annotations

import logging
from pathlib import Path

from mkdocs.exceptions import PluginError

from ainotes.errors import InputError
from ainotes.site import NotesSite

log = logging.getLogger("mkdocs.plugins.ainotes")

_site: NotesSite | None = None


def on_config(config, **kwargs):
    """Load and validate the GPU presets next to mkdocs.yml."""
    global _site
    presets_dir = Path(config.config_file_path).parent / "presets"
    try:
        _site = NotesSite(presets_dir)
    except InputError as exc:
        raise PluginError(str(exc)) from None
    log.debug("ainotes: %d presets from %s", len(_site.presets), presets_dir)
    return config


def on_page_markdown(markdown, page, config, files, **kwargs):
    """Turn fences, inline figures and math into slots and text."""
    try:
        return _site.page_markdown(markdown, page.file.src_uri, page.url)
    except InputError as exc:
        raise PluginError(str(exc)) from None


def on_page_content(html, page, config, files, **kwargs):
    """Put the tables and math into the page's HTML; mark where the charts go."""
    return _site.page_content(html, page.file.src_uri)


def on_post_page(output, page, config, **kwargs):
    """Put the charts into the finished page (after the search index has read it)."""
    return _site.page_output(output, page.file.src_uri)


def on_post_build(config, **kwargs):
    """Write the shared assets, the embed files and embed/manifest.json."""
    try:
        _site.write_outputs(config.site_dir)
    except InputError as exc:
        raise PluginError(str(exc)) from None
