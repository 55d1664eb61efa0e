"""``mkdocs serve`` writes a rebuild's embed files after the build has returned (``ainotes.build.deferred``), renders
a changed chart while the other pages are built (``RenderSession.render_while_building``) and reads the search
plugin's parses of unchanged pages from the render cache when it starts again (``ainotes.build.search``); once
the deferred work has finished, the site folder holds exactly what a clean ``mkdocs build`` writes.

Each rebuild is what ``mkdocs serve`` runs after an edit, in this process: the config loaded afresh and
the hooks told the command, ``serve`` or ``build``, as MkDocs tells them.
"""

from __future__ import annotations

import threading
from collections import Counter
from pathlib import Path

import mkdocs.utils
import pytest
from mkdocs.commands.build import build
from mkdocs.config import load_config

from ainotes import render
from ainotes.base import cache as render_cache
from ainotes.build import deferred, search, templates
from ainotes.build.site import NotesSite
from sitebuild import edit_file, make_fixture, site_bytes

pytestmark = [pytest.mark.build, pytest.mark.xdist_group("serve_deferred")]

PAGES = {
    "index.md": "# Home\n\nNo charts here.\n",
    "a.md": "# A\n\nSome prose.\n\n```roofline\npresets: [h100]\ntitle: Only H100\n```\n",
    "b.md": "# B\n\n## Part\n\nMore prose.\n\n```roofline\npresets: [h100, plain]\ntitle: Both\n```\n",
}


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("AINOTES_CACHE_DIR", str(tmp_path / "render-cache"))
    monkeypatch.setenv("AINOTES_SHARED_CACHE_DIR", str(tmp_path / "shared-cache"))
    monkeypatch.setenv("AINOTES_RENDER_WORKERS", "0")
    render.shutdown()
    render_cache.MEMO.clear()
    search.forget_search_parses()  # parses an earlier test kept in memory were never written to this cache
    yield make_fixture(tmp_path / "project", PAGES)
    deferred.wait()
    render.shutdown()
    render.SESSION.render_while_building(False)
    render_cache.MEMO.clear()


def _build(project: Path, site: str, command: str) -> NotesSite:
    """One build as ``mkdocs <command>`` runs it (``serve``: it returns before its embed files are written)."""
    config = load_config(config_file=str(project / "mkdocs.yml"), site_dir=str(project / site))
    config.plugins.on_startup(command=command, dirty=False)
    build(config)
    return config.mdx_configs["ainotes.markdown"]["site"]


def test_a_fence_edit_serves_its_page_first_and_ends_with_a_clean_builds_files(project):
    _build(project, "site", "serve")
    deferred.wait()
    edit_file(project / "docs" / "a.md", "title: Only H100", "title: Only the H100")
    before = render.SESSION.counts.copy()
    site = _build(project, "site", "serve")
    page = (project / "site" / "a" / "index.html").read_text(encoding="utf-8")
    assert "Only the H100" in page  # the page is there when the build returns
    assert site.embeds_later
    deferred.wait()
    # Both stills and the live view with the page, the PNG once its file was written: nothing twice.
    assert render.SESSION.counts - before == Counter({"svg": 2, "vega": 1, "png": 1})
    served = site_bytes(project / "site")
    _build(project, "clean", "build")  # a clean build writes everything before it returns
    assert served == site_bytes(project / "clean")
    png = served["embed/a-roofline.png"]
    assert png.startswith(b"\x89PNG")


def test_a_rebuild_stops_the_last_ones_embed_files_and_writes_them_itself(project, monkeypatch):
    """The next build empties the site folder: the embed files still being written when it starts end
    at the next file, before it empties the folder (never cut in the middle or left over), and its own
    deferred work writes them all, the charts whose files were not kept drawn again for them."""
    events: list[str] = []
    written = NotesSite.write_embeds
    began, release = threading.Event(), threading.Event()

    def held_write(self: NotesSite, site_dir, stopped=None) -> None:
        began.set()
        release.wait()  # held until the test lets it go, once the next build has asked it to stop
        written(self, site_dir, stopped)
        events.append("embeds stopped" if stopped is not None and stopped() else "embeds written")

    cleaned = mkdocs.utils.clean_directory

    def clean(directory: str) -> None:
        events.append("site folder emptied")
        cleaned(directory)

    monkeypatch.setattr(deferred, "ANSWER_FIRST_S", 0.0)
    monkeypatch.setattr(NotesSite, "write_embeds", held_write)
    monkeypatch.setattr(mkdocs.utils, "clean_directory", clean)
    _build(project, "site", "serve")
    assert began.wait(timeout=30) and deferred.pending()
    assert not (project / "site" / "embed" / "manifest.json").exists()
    edit_file(project / "docs" / "b.md", "More prose.", "Other prose.")
    threading.Timer(0.2, release.set).start()  # the second build's on_config stops the work, then waits for it
    site = _build(project, "site", "serve")
    deferred.wait()
    assert events == ["site folder emptied", "embeds stopped", "site folder emptied", "embeds written"]
    assert site.drawing_counts == Counter({"kept": 2, "redrawn": 2})  # figures kept, their files never were
    monkeypatch.undo()
    served = site_bytes(project / "site")
    _build(project, "clean", "build")
    assert served == site_bytes(project / "clean")


def test_a_new_serve_reads_unchanged_pages_search_parses_from_the_cache(project, monkeypatch):
    _build(project, "site", "serve")
    deferred.wait()
    search.forget_search_parses()  # as a new process: nothing in memory
    from material.plugins.search import plugin as material_search

    parser_base = material_search.Parser.__mro__[1]  # Material's own parser, under ours
    parsed: list[int] = []
    close = parser_base.close
    monkeypatch.setattr(parser_base, "close", lambda self: (parsed.append(1), close(self))[1])
    edit_file(project / "docs" / "b.md", "More prose.", "Other prose.")
    _build(project, "site", "serve")
    deferred.wait()
    assert len(parsed) == 1  # b.md's page; the others' sections came from the cache
    monkeypatch.undo()
    served = site_bytes(project / "site")
    _build(project, "clean", "build")
    assert served["search/search_index.json"] == site_bytes(project / "clean")["search/search_index.json"]
    assert "Other prose" in served["search/search_index.json"].decode("utf-8")


def test_v8_is_started_once_the_serve_is_idle_and_once_a_process(monkeypatch):
    monkeypatch.setattr(deferred, "_engine_started", False)
    started = threading.Event()
    assert deferred.start_engine_when_idle(started.set, idle_s=0.2)
    deferred.stop()  # a build began before the serve was idle that long: put off
    assert not started.wait(timeout=0.6)
    assert deferred.start_engine_when_idle(started.set, idle_s=0.0)  # after that build
    assert started.wait(timeout=30)
    assert not deferred.start_engine_when_idle(started.set, idle_s=0.0)  # once a process


def test_a_serve_rebuild_compiles_no_template_an_earlier_build_compiled(project, monkeypatch):
    """MkDocs makes a new Jinja environment each build; under serve the templates' compiled code is
    kept (ainotes.build.templates), and the pages are a clean build's."""
    import jinja2

    templates.KEPT.clear()
    compiled: list[str] = []
    compile_source = jinja2.Environment.compile

    def counting(self, source, name=None, filename=None, raw=False, defer_init=False):
        compiled.append(str(name))
        return compile_source(self, source, name, filename, raw, defer_init)

    monkeypatch.setattr(jinja2.Environment, "compile", counting)
    _build(project, "site", "serve")
    assert compiled  # the first build compiles Material's templates
    compiled.clear()
    edit_file(project / "docs" / "b.md", "More prose.", "Other prose.")
    config = load_config(config_file=str(project / "mkdocs.yml"), site_dir=str(project / "site"))
    build(config)  # a serve rebuild: on_startup is not called again
    deferred.wait()
    assert compiled == []
    served = site_bytes(project / "site")
    monkeypatch.undo()
    _build(project, "clean", "build")
    assert served == site_bytes(project / "clean")
