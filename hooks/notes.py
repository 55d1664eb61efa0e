"""MkDocs hooks (MkDocs and ProperDocs): a thin driver for ``ainotes.markdown.extension``.

The Markdown extension draws the fences, figures and math; these events only load
the presets, hand the extension the build's state (and the notes' settings: docs folder,
site URL, allowed tags, bibliography), name each page for its messages, and write the
shared assets, embed files, manifest and the notes' feeds at the end. Zensical runs the
extension without these hooks; ``ainotes site-assets`` then writes what
:func:`on_post_build` writes here.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from mkdocs.exceptions import PluginError

from ainotes.base import publish
from ainotes.base.errors import InputError
from ainotes.build.site import NotesSite
from ainotes.notes import feed
from ainotes.notes import meta as notes_meta

log = logging.getLogger("mkdocs.plugins.ainotes")

EXTENSION = "ainotes.markdown"
_site: NotesSite | None = None
_command: str | None = None


def on_startup(command, **kwargs):
    """Remember the command: only ``serve`` may keep the local preview site_url."""
    global _command
    _command = command


def on_config(config, **kwargs):
    """Load the GPU presets next to mkdocs.yml and give them to the Markdown extension."""
    global _site
    publish.warn_about_site_url(config.site_url, _command, os.environ)
    presets_dir = Path(config.config_file_path).parent / "presets"
    try:
        # A user's mistake ends the build with its one line; on_post_page draws the figures,
        # while the renders run in parallel.
        _site = NotesSite(presets_dir, error_type=PluginError, defer_figures=True, render_progress=_report_renders)
    except InputError as exc:
        raise PluginError(str(exc)) from None
    if EXTENSION not in config.markdown_extensions:
        config.markdown_extensions.append(EXTENSION)
    settings = config.mdx_configs.get(EXTENSION, {})
    config.mdx_configs[EXTENSION] = {**settings, "site": _site}
    notes_meta.configure(_site, notes_meta.NotesSettings(
        docs_dir=Path(config.docs_dir), site_url=config.site_url or None, site_name=config.site_name,
        site_description=config.site_description or "", use_directory_urls=config.use_directory_urls,
        tags=dict(settings.get("tags") or {}), bibliography=str(settings.get("bibliography", "references.bib")),
    ), warn=publish.print_warning)  # dates, tags, references, the feed (ainotes.notes.meta)
    log.debug("ainotes: %d presets from %s", len(_site.presets), presets_dir)
    return config


def on_page_markdown(markdown, page, config, files, **kwargs):
    """Name the page for messages; count the front-matter lines MkDocs cut off."""
    source = page.file.content_string
    cut = source.count("\n") - markdown.count("\n") if source.endswith(markdown) else 0
    _build_site().announce_page(page.file.src_uri, page.url, cut)
    return markdown


def on_post_page(output, page, config, **kwargs):
    """Draw the page's chart figures (their renders ran while other pages were converted)."""
    return _build_site().finish_page(output)


def on_post_build(config, **kwargs):
    """Write the shared assets, the embed files, embed/manifest.json and the notes' feeds."""
    try:
        _build_site().write_outputs(config.site_dir)
        catalogue = notes_meta.known_catalogue(_build_site())
        if catalogue is not None:
            feed.write_feeds(catalogue, config.site_dir)
    except InputError as exc:
        raise PluginError(str(exc)) from None


def on_shutdown(**kwargs):
    """Stop the render workers (``mkdocs serve`` keeps them warm between rebuilds)."""
    from ainotes import render

    render.shutdown()


def _report_renders(done: int, total: int) -> None:
    log.info("ainotes: %d of %d chart renders done", done, total)


def _build_site() -> NotesSite:
    if _site is None:
        raise PluginError("ainotes: on_config did not run")
    return _site
