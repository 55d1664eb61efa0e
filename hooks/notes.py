"""MkDocs hooks (MkDocs and ProperDocs): a thin driver for ``ainotes.markdown.extension``.

The Markdown extension draws the fences, figures and math; these events only build the
settings once (:func:`ainotes.notes.settings.notes_settings`: docs and presets folders, site
URL, allowed tags, bibliography), hand the extension the build's site made from them (kept in
MkDocs' config, the one object that lasts the build), name each page for its messages, and
write the shared assets, embed files, manifest and the notes' feeds at the end (under ``mkdocs serve`` the
embed files and manifest once the pages are served: :mod:`ainotes.build.deferred`). Zensical runs the
extension without these hooks; ``ainotes site-assets`` then writes what
:func:`on_post_build` writes here.
"""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path

from mkdocs.exceptions import PluginError

from ainotes.base import publish
from ainotes.base.errors import InputError
from ainotes.build import deferred
from ainotes.build.kept import KeptBetweenBuilds
from ainotes.build.search import keep_search_parses
from ainotes.build.site import NotesSite
from ainotes.build.templates import keep_compiled_templates
from ainotes.fences.registry import VEGA_KINDS
from ainotes.notes import feed
from ainotes.notes import meta as notes_meta
from ainotes.notes.settings import EXTENSION, notes_settings

log = logging.getLogger("mkdocs.plugins.ainotes")

# What lasts from on_startup to on_shutdown: the process's command, and what each build leaves the next
# (mkdocs serve builds again in the same process after every edit, and loads this module once). The state
# of one build lives on its NotesSite.
_command: str | None = None
_kept: KeptBetweenBuilds | None = None


def on_startup(command, **kwargs):
    """Remember the command (only ``serve`` may keep the local preview site_url), and start what each
    build leaves the next (presets, inline figures, the notes catalogue's parts: ainotes.build.kept)."""
    global _command, _kept
    _command = command
    _kept = KeptBetweenBuilds()
    from ainotes import render

    render.SESSION.render_while_building(command == "serve")  # a changed chart renders while the other pages are built
    if command == "serve":  # each rebuild parses for search only the pages whose HTML changed
        keep_search_parses()
        keep_compiled_templates()  # and compiles no template an earlier build compiled


def on_config(config, **kwargs):
    """Build the settings once, load the presets, and give the build's site to the Markdown extension."""
    deferred.stop()  # the last rebuild's embed files: this build empties the site folder and writes them again
    publish.warn_about_site_url(config.site_url, _command, os.environ)
    options = config.mdx_configs.get(EXTENSION, {})
    root = Path(config.config_file_path).parent
    try:
        settings = notes_settings(
            root=root, docs_dir=config.docs_dir, options=options, site_url=config.site_url,
            site_name=config.site_name, site_description=config.site_description,
            use_directory_urls=config.use_directory_urls, where=config.config_file_path)
        # A user's mistake ends the build with its one line; on_post_page draws the figures,
        # while the renders run in parallel.
        # Under serve a fence's mistake shows on its page (and in the terminal); a build still stops on it.
        site = NotesSite(settings, error_type=PluginError, defer_figures=True, render_progress=_report_renders,
                         warn=publish.print_warning, errors_on_page=_print_error if _command == "serve" else None,
                         kept=_kept, embeds_later=_command == "serve")
    except InputError as exc:
        raise PluginError(str(exc)) from None
    if EXTENSION not in config.markdown_extensions:
        config.markdown_extensions.append(EXTENSION)
    config.mdx_configs[EXTENSION] = {**options, "site": site}
    log.debug("ainotes: %d presets from %s", len(site.presets), settings.presets_dir)
    return config


def on_page_markdown(markdown, page, config, files, **kwargs):
    """Name the page for messages; count the front-matter lines MkDocs cut off."""
    source = page.file.content_string
    cut = source.count("\n") - markdown.count("\n") if source.endswith(markdown) else 0
    _build_site(config).announce_page(page.file.src_uri, page.url, cut)
    return markdown


def on_post_page(output, page, config, **kwargs):
    """Draw the page's chart figures (their renders ran while other pages were converted)."""
    return _build_site(config).finish_page(output)


def on_post_build(config, **kwargs):
    """Write the shared assets, the embed files, embed/manifest.json and the notes' feeds; under serve the
    embed files and manifest in the background, once the pages are served, and vl-convert's V8 started
    when the serve is idle after a build that has Vega charts, so that the first chart edit does not wait for it."""
    site = _build_site(config)
    try:
        embeds = site.write_outputs(config.site_dir)
        catalogue = notes_meta.known_catalogue(site)
        if catalogue is not None:
            feed.write_feeds(catalogue, config.site_dir)
    except InputError as exc:
        raise PluginError(str(exc)) from None
    if embeds is not None:
        deferred.start(embeds, report=_print_error)
        if any(chart.kind in VEGA_KINDS for chart in site.charts.values()):
            from ainotes import render

            deferred.start_engine_when_idle(render.start_engine)


def on_shutdown(**kwargs):
    """Stop the render workers (``mkdocs serve`` keeps them warm between rebuilds); drop what builds kept."""
    global _kept
    from ainotes import render

    _kept = None
    deferred.stop()
    render.SESSION.render_while_building(False)
    render.shutdown()


def _print_error(line: str) -> None:
    """A mistake ``mkdocs serve`` shows on its page, in the terminal as MkDocs prints its errors (not through
    its logger: a strict serve would then refuse the whole rebuild and keep serving the old page)."""
    print(f"ERROR   -  {line}", file=sys.stderr, flush=True)


def _report_renders(done: int, total: int) -> None:
    log.info("ainotes: %d of %d chart renders done", done, total)


def _build_site(config) -> NotesSite:
    site = config.mdx_configs.get(EXTENSION, {}).get("site")
    if not isinstance(site, NotesSite):
        raise PluginError("ainotes: on_config did not run")
    return site
