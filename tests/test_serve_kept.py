"""``mkdocs serve`` rebuilds with what the last build of the process kept (``ainotes.build.kept``: the
presets, inline figures, formulas and pure fences' HTML, the notes catalogue's git history, notes, backlinks scans and
bibliography), and gives the pages a clean build gives.

Each step edits the project as an author would (prose, front matter, a preset, a new page, a deleted
page, the bibliography, a commit), rebuilds as ``mkdocs serve`` does (the config loaded again, the
hooks' ``on_startup`` not called again: what the last build kept is used), then builds the same tree
clean (``on_startup`` again: nothing kept) and compares every file. The clean build's kept values are
those the next step's rebuild starts from.
"""

from __future__ import annotations

import os
import subprocess
from collections import Counter
from pathlib import Path

import pytest
from mkdocs.commands.build import build
from mkdocs.config import load_config
from mkdocs.exceptions import Abort

from ainotes import render
from ainotes.build import deferred
from ainotes.html import tables
from ainotes.inline import figures
from ainotes.markdown import extension
from ainotes.notes import citations
from ainotes.notes import meta as notes_meta
from sitebuild import FIXTURE_CONFIG, REPO, edit_file, make_fixture, site_bytes

pytestmark = [pytest.mark.build, pytest.mark.xdist_group("serve_kept")]

PAGES = {
    "index.md": "---\nlisted: false\n---\n# Home\n\n```whats-new\n```\n",
    "a.md": ("---\ncreated: 2026-01-02\ntags: [hardware]\n---\n# A\n\nThe ridge is {{ ridge h100 }} and "
             "$x^2$ holds [@palm].\n"),
    "b.md": ("# B\n\nPlain's ridge: {{ ridge plain }}.\n\n```presets-table\n```\n\n```preset-check\nname: Checked\n"
             "dense_fp16_tflops: 10\nmemory_bandwidth_tbps: 1\nsources:\n  - {title: S, url: 'https://example.com/s'}\n```\n"),
}
BIB = "@misc{palm,\n  title = {PaLM},\n  author = {Someone},\n  year = {2022},\n}\n"
CONFIG = FIXTURE_CONFIG.replace(
    "   ainotes.markdown.extension]",
    "   {{ainotes.markdown: {{tags: {{hardware: Chips, training: Runs}}}}}}]",
) + "site_url: https://example.org/notes/\n"


def _git(project: Path, *args: str, date: str = "2026-01-10T10:00:00+00:00") -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_SYSTEM": os.devnull,
           "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
    subprocess.run(["git", *args], cwd=project, env=env, check=True, capture_output=True)


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("AINOTES_CACHE_DIR", str(tmp_path / "render-cache"))
    monkeypatch.setenv("AINOTES_SHARED_CACHE_DIR", str(tmp_path / "shared-cache"))
    monkeypatch.setenv("AINOTES_RENDER_WORKERS", "0")
    root = make_fixture(tmp_path / "project", PAGES)
    (root / "mkdocs.yml").write_text(CONFIG.format(hooks=REPO / "hooks" / "notes.py"), encoding="utf-8")
    (root / "docs" / "references.bib").write_text(BIB, encoding="utf-8")
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "first")
    yield root
    render.shutdown()
    render.SESSION.render_while_building(False)  # on_startup("serve") set it; no on_shutdown ran


def _build(project: Path, site: str, *, fresh: bool) -> None:
    config = load_config(config_file=str(project / "mkdocs.yml"), site_dir=str(project / site))
    if fresh:  # a new serve (or a plain build): nothing kept from earlier builds
        config.plugins.on_startup(command="serve", dirty=False)
    build(config)
    deferred.wait()  # the embed files are written once the pages are served


class _Calls:
    """How often the readers a kept value stands in for ran during one rebuild."""

    def __init__(self, monkeypatch) -> None:
        self.counts: Counter[str] = Counter()
        for name, owner, attribute in (("note", notes_meta, "read_note"), ("figure", figures, "evaluate"),
                                       ("formula", figures, "mathml"), ("scan", extension, "locate_fences_and_forms"),
                                       ("bibliography", citations, "load_bibliography"),
                                       ("git log", notes_meta, "_commit_versions"),
                                       ("pure fence", tables, "preset_check_html")):
            monkeypatch.setattr(owner, attribute, self._counting(name, getattr(owner, attribute)))

    def _counting(self, name, function):
        def counted(*args, **kwargs):
            self.counts[name] += 1
            return function(*args, **kwargs)
        return counted


def _rebuild_matches_a_clean_build(project: Path, calls: _Calls) -> Counter[str]:
    """Rebuild with what the last build kept, then build clean; the same files. What the rebuild read."""
    calls.counts.clear()
    _build(project, "site", fresh=False)
    read = calls.counts.copy()
    _build(project, "clean", fresh=True)
    served, clean = site_bytes(project / "site"), site_bytes(project / "clean")
    assert sorted(served) == sorted(clean)
    assert [name for name in clean if served[name] != clean[name]] == []
    assert [n for n, data in clean.items() if n.endswith(".html") and b"ainotes-error" in data] == []  # no mistake
    return read


def test_every_rebuild_gives_the_pages_of_a_clean_build_and_reads_only_what_changed(project, monkeypatch):
    calls = _Calls(monkeypatch)
    _build(project, "clean", fresh=True)
    docs = project / "docs"

    edit_file(docs / "a.md", "holds", "still holds")  # prose: only a.md is read and scanned again
    assert _rebuild_matches_a_clean_build(project, calls) == Counter({"note": 1, "scan": 1})
    assert "still holds" in (project / "site" / "a" / "index.html").read_text(encoding="utf-8")

    edit_file(docs / "a.md", "tags: [hardware]", "tags: [hardware, training]")  # front matter: lists change
    assert _rebuild_matches_a_clean_build(project, calls)["note"] == 1
    assert "training" in (project / "site" / "a" / "index.html").read_text(encoding="utf-8")

    edit_file(project / "presets" / "plain.yaml", "memory_bandwidth_tbps: 1", "memory_bandwidth_tbps: 2")
    read = _rebuild_matches_a_clean_build(project, calls)  # a preset: figures and scans again, notes kept
    assert read["figure"] == 2 and read["pure fence"] == 1 and read["scan"] == 3 and read["note"] == 0
    assert "50 FLOP/byte" in (project / "site" / "b" / "index.html").read_text(encoding="utf-8")

    (docs / "c.md").write_text("# C\n\nAlso {{ ridge plain }}.\n", encoding="utf-8")  # a new page uses a preset
    assert _rebuild_matches_a_clean_build(project, calls) == Counter({"note": 1, "scan": 1})
    assert 'href="../c/"' in (project / "site" / "b" / "index.html").read_text(encoding="utf-8")

    (docs / "c.md").unlink()  # and goes again
    assert _rebuild_matches_a_clean_build(project, calls) == Counter()
    assert 'href="../c/"' not in (project / "site" / "b" / "index.html").read_text(encoding="utf-8")

    edit_file(docs / "references.bib", "{PaLM}", "{PaLM, again}")  # the bibliography is read again
    assert _rebuild_matches_a_clean_build(project, calls) == Counter({"bibliography": 1})
    assert "Palm, again" in (project / "site" / "a" / "index.html").read_text(encoding="utf-8")

    _git(project, "commit", "-q", "-am", "edits", date="2026-02-20T10:00:00+00:00")  # a.md's edits, committed
    read = _rebuild_matches_a_clean_build(project, calls)
    assert read["git log"] == 1 and read["note"] == 1  # the history again; a.md is dated again, b.md kept
    assert "2026-02-20" in (project / "site" / "a" / "index.html").read_text(encoding="utf-8")
    _git(project, "commit", "-q", "--allow-empty", "-m", "nothing", date="2026-02-21T10:00:00+00:00")
    assert _rebuild_matches_a_clean_build(project, calls) == Counter({"git log": 1})  # a new commit, same dates


def test_a_broken_preset_stops_each_rebuild_until_it_is_mended(project, monkeypatch, caplog):
    _build(project, "site", fresh=True)
    edit_file(project / "presets" / "plain.yaml", "memory_bandwidth_tbps: 1", "memory_bandwidth_tbps: fast")
    for _ in range(2):  # nothing is kept of a broken folder: the second rebuild says it again
        caplog.clear()
        with pytest.raises(Abort):
            _build(project, "site", fresh=False)
        assert "plain.yaml:3: 'memory_bandwidth_tbps' must be a number" in caplog.text
    edit_file(project / "presets" / "plain.yaml", "memory_bandwidth_tbps: fast", "memory_bandwidth_tbps: 1")
    calls = _Calls(monkeypatch)
    _rebuild_matches_a_clean_build(project, calls)


def test_a_new_serve_reads_what_an_earlier_process_computed(project, monkeypatch):
    """``make serve`` started again: what the render cache kept stands in for the backlinks scans, the inline
    figures, the pure fences' HTML and the formatted bibliography (keyed by what each is made from and the
    code); other code computes them again."""
    from ainotes.base import cache
    from ainotes.build import kept

    cache.MEMO.clear()  # (an earlier test's values, in memory, would not be written to this test's cache)
    _build(project, "clean", fresh=True)
    calls = _Calls(monkeypatch)
    cache.MEMO.clear()  # a new process: nothing in memory
    _build(project, "site", fresh=True)
    start = Counter({"note": 3, "formula": 1, "git log": 1})  # read by every start
    assert calls.counts == start  # not the scans, figures, pure fences, bibliography
    assert site_bytes(project / "site") == site_bytes(project / "clean")
    monkeypatch.setattr(kept, "code_fingerprint", lambda: "other code")
    cache.MEMO.clear()
    _build(project, "site", fresh=True)
    assert calls.counts - start - start == Counter({"scan": 3, "figure": 2, "pure fence": 1, "bibliography": 1})


def test_search_parses_only_the_changed_pages_and_indexes_as_a_clean_build(project, monkeypatch):
    """Under serve, Material's search plugin parses again only a page whose HTML changed; a page whose
    title alone changed (no heading: its section takes the page's title) is indexed under its new title."""
    from html.parser import HTMLParser

    from ainotes.build.search import forget_search_parses

    docs = project / "docs"
    (docs / "d.md").write_text("---\ntitle: Dee\n---\nNo heading here, only prose.\n", encoding="utf-8")
    parsed: list[str] = []
    real_feed = HTMLParser.feed

    def feed(self, data):
        if type(self).__name__ == "KeptParser":
            parsed.append(data)
        return real_feed(self, data)

    monkeypatch.setattr(HTMLParser, "feed", feed)
    forget_search_parses()  # (an earlier test met the same pages in this process)
    _build(project, "site", fresh=True)

    def rebuild_then_clean() -> tuple[int, str]:
        parsed.clear()
        _build(project, "site", fresh=False)
        count = len(parsed)
        forget_search_parses()
        _build(project, "clean", fresh=True)
        served, clean = site_bytes(project / "site"), site_bytes(project / "clean")
        assert sorted(served) == sorted(clean) and [n for n in clean if served[n] != clean[n]] == []
        return count, served["search/search_index.json"].decode("utf-8")

    edit_file(docs / "a.md", "holds", "still holds")
    count, index = rebuild_then_clean()
    assert count == 1 and "still holds" in index
    edit_file(docs / "d.md", "title: Dee", "title: Dum")
    count, index = rebuild_then_clean()
    assert count <= 1 and '"title":"Dum"' in index and '"title":"Dee"' not in index


def test_a_kept_search_parse_is_a_fresh_copy_each_time():
    """The plugin fills an untitled section's title from its page: that change must not reach the next page
    with the same HTML (a page renamed keeps its HTML)."""
    from material.plugins.search import plugin as search

    from ainotes.build.search import keep_search_parses

    assert keep_search_parses()
    html = "<p>No heading here, only prose.</p>"
    first = search.Parser()
    first.feed(html)
    first.close()
    first.data[0].title = ["Dee"]
    again = search.Parser()
    again.feed(html)
    again.close()
    assert again.data[0].title == [] and "".join(again.data[0].text) == html
