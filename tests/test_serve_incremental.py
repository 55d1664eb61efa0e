"""``mkdocs serve`` stays instant: a rebuild renders only the charts whose spec changed, and
draws only the charts whose fence, presets, page or code changed (the others are copied from
the drawings the last build kept, :mod:`ainotes.build.drawings`).

Each rebuild here is what ``mkdocs serve`` does after a change: the config loaded afresh
(hooks included) and a full build in the same process. Renders are counted
(:data:`ainotes.render.SESSION.counts`, which counts what vl-convert really did, in this
process or in a worker), never timed.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest
from mkdocs.commands.build import build
from mkdocs.config import load_config

from ainotes import render
from ainotes.base import cache as render_cache
from ainotes.build import deferred
from sitebuild import edit_file, make_fixture, site_bytes

# Whole-site builds: not in make test-fast. One worker runs this file (xdist_group): its Vega bundle is built once.
pytestmark = [pytest.mark.build, pytest.mark.xdist_group("serve_incremental")]

PAGES = {
    "index.md": "# Home\n\nNo charts here.\n",
    "a.md": "# A\n\nSome prose.\n\n```roofline\npresets: [h100]\ntitle: Only H100\n```\n",
    "b.md": "# B\n\n```roofline\npresets: [plain]\ntitle: Only plain\n```\n",
    "c.md": "# C\n\n```roofline\npresets: [h100, plain]\ntitle: Both\n```\n\n```collective\nop: all-gather\n```\n",
}


@pytest.fixture(scope="module")
def runtime_cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("runtime-cache")  # the bundle is built once for the module


@pytest.fixture
def project(tmp_path, monkeypatch, runtime_cache) -> Path:
    monkeypatch.setenv("AINOTES_CACHE_DIR", str(tmp_path / "render-cache"))
    monkeypatch.setenv("AINOTES_SHARED_CACHE_DIR", str(runtime_cache))
    monkeypatch.setenv("AINOTES_RENDER_WORKERS", "0")  # counts are the same with workers; this is quicker
    render.shutdown()  # renders an earlier test left running would count in this one
    render_cache.MEMO.clear()
    render.SESSION.runtime_text.clear()
    yield make_fixture(tmp_path / "project", PAGES)
    render.shutdown()
    render.SESSION.render_while_building(False)  # on_startup("serve") set it; no on_shutdown ran
    render_cache.MEMO.clear()


def rebuild(project: Path) -> Counter[str]:
    """One serve-style rebuild; what vl-convert rendered during it."""
    return rebuild_counting(project)[0]


def rebuild_counting(project: Path) -> tuple[Counter[str], Counter[str]]:
    """One serve-style rebuild; what vl-convert rendered, and how many charts were drawn or kept."""
    before = render.SESSION.counts.copy()
    config = load_config(config_file=str(project / "mkdocs.yml"), site_dir=str(project / "site"))
    config.plugins.on_startup(command="serve", dirty=False)
    build(config)
    deferred.wait()  # the embed files (and a new chart's PNG) are written once the pages are served
    site = config.mdx_configs["ainotes.markdown"]["site"]  # the build's NotesSite (hooks/notes.py)
    return render.SESSION.counts - before, site.drawing_counts


def test_unchanged_rebuild_renders_nothing(project):
    first = rebuild(project)
    assert first["svg"] == 6 and first["png"] == 3 and first["vega"] == 3  # stills at desk and phone size
    assert rebuild(project) == Counter()
    # Prose edits re-render nothing either.
    edit_file(project / "docs" / "a.md", "Some prose.", "Some other prose.")
    assert rebuild(project) == Counter()


def test_editing_one_chart_renders_only_that_chart(project):
    rebuild(project)
    edit_file(project / "docs" / "a.md", "title: Only H100", "title: Only the H100")
    again = rebuild(project)
    assert again == Counter({"svg": 2, "png": 1, "vega": 1})
    assert "Only the H100" in (project / "site" / "a" / "index.html").read_text(encoding="utf-8")


def test_editing_a_preset_renders_only_the_charts_that_show_it(project):
    rebuild(project)
    edit_file(project / "presets" / "plain.yaml", "memory_bandwidth_tbps: 1", "memory_bandwidth_tbps: 1.5")
    again = rebuild(project)
    assert again == Counter({"svg": 4, "png": 2, "vega": 2})  # pages b and c; a shows only h100
    page_a_svg = (project / "site" / "embed" / "a-roofline.svg").read_bytes()
    edit_file(project / "presets" / "h100.yaml", "memory_bandwidth_tbps: 3.35", "memory_bandwidth_tbps: 3.36")
    assert rebuild(project) == Counter({"svg": 4, "png": 2, "vega": 2})  # pages a and c
    assert (project / "site" / "embed" / "a-roofline.svg").read_bytes() != page_a_svg


def test_rebuild_with_workers_renders_the_same_count(project, monkeypatch):
    monkeypatch.setenv("AINOTES_RENDER_WORKERS", "2")
    first = rebuild(project)
    assert first["svg"] == 6 and first["png"] == 3 and first["vega"] == 3  # stills at desk and phone size
    edit_file(project / "presets" / "plain.yaml", "memory_bandwidth_tbps: 1", "memory_bandwidth_tbps: 1.5")
    assert rebuild(project) == Counter({"svg": 4, "png": 2, "vega": 2})


def test_a_long_render_batch_reports_progress_through_mkdocs_logger(project, monkeypatch, caplog):
    monkeypatch.setattr(render.pool, "PROGRESS_AFTER_S", 0.0)  # "a long batch": every batch, here
    monkeypatch.setattr(render.pool, "PROGRESS_EVERY_S", 0.0)
    with caplog.at_level("INFO", logger="mkdocs.plugins.ainotes"):
        rebuild(project)
    lines = [r.getMessage() for r in caplog.records if r.name == "mkdocs.plugins.ainotes"]
    counts = [re.fullmatch(r"ainotes: (\d+) of (\d+) chart renders done", line) for line in lines]
    assert counts and all(counts), lines
    done, total = (int(n) for n in counts[-1].groups())
    # Per roofline two SVGs (the desk still with its PNG, and the phone still) and the live view's
    # compiled Vega (the dark one is recoloured from it): 9 for three, and the runtime bundle
    # unless an earlier test of this module built it.
    assert done == total and total in (9, 10)


def test_site_assets_reports_render_progress_on_stderr(project, monkeypatch, capsys):
    from ainotes import cli

    monkeypatch.setattr(render.pool, "PROGRESS_AFTER_S", 0.0)
    monkeypatch.setattr(render.pool, "PROGRESS_EVERY_S", 0.0)
    (project / "site").mkdir()
    assert cli.main(["site-assets", "--config", str(project / "mkdocs.yml"), str(project / "site")]) == 0
    err_lines = capsys.readouterr().err.splitlines()
    assert err_lines and all(re.fullmatch(r"ainotes: \d+ of \d+ chart renders done", line) for line in err_lines)
    done, total = (int(n) for n in re.findall(r"\d+", err_lines[-1]))
    assert done == total >= 9
    assert (project / "site" / "embed" / "a-roofline.png").read_bytes().startswith(b"\x89PNG")


def test_an_unchanged_chart_is_copied_from_its_kept_drawing(project):
    renders, charts = rebuild_counting(project)
    assert charts == Counter({"drawn": 4})  # three rooflines and a collective
    before = site_bytes(project / "site")
    renders, charts = rebuild_counting(project)
    assert (renders, charts) == (Counter(), Counter({"kept": 4}))
    assert site_bytes(project / "site") == before  # the same bytes as drawing them


def test_a_preset_edit_draws_again_only_the_charts_that_show_it(project):
    rebuild(project)
    edit_file(project / "presets" / "plain.yaml", "memory_bandwidth_tbps: 1", "memory_bandwidth_tbps: 1.5")
    assert rebuild_counting(project)[1] == Counter({"drawn": 2, "kept": 2})  # b and c; a and the collective kept
    edit_file(project / "docs" / "c.md", "op: all-gather", "op: all-gather\nranks: 8")
    assert rebuild_counting(project)[1] == Counter({"drawn": 1, "kept": 3})
    assert "8 ranks" in (project / "site" / "c" / "index.html").read_text(encoding="utf-8")


def test_a_moved_chart_is_drawn_for_its_new_page(project):
    rebuild(project)
    (project / "docs" / "a.md").rename(project / "docs" / "moved.md")
    renders, charts = rebuild_counting(project)
    assert charts == Counter({"drawn": 1, "kept": 3}) and renders == Counter()  # same spec, new page and id
    assert (project / "site" / "embed" / "moved-roofline.svg").is_file()


def test_damaged_kept_drawings_are_drawn_again_with_the_same_bytes(project):
    rebuild(project)
    before = site_bytes(project / "site")
    entries = sorted((project.parent / "render-cache").glob("*.entry"))
    assert entries
    for entry in entries:  # flip the last byte of every entry: renders and drawings alike
        data = bytearray(entry.read_bytes())
        data[-1] ^= 0xFF
        entry.write_bytes(bytes(data))
    render_cache.MEMO.clear()
    renders, charts = rebuild_counting(project)
    assert charts == Counter({"drawn": 4}) and renders["svg"] == 6  # nothing damaged was served
    assert site_bytes(project / "site") == before


def test_a_lost_files_entry_draws_the_chart_again_for_its_files(project):
    rebuild(project)
    before = site_bytes(project / "site")
    cache = project.parent / "render-cache"
    # A files entry's payload opens with its JSON list of files: [["svg", ...
    files_entries = [p for p in cache.glob("*.entry") if p.read_bytes().split(b"\n", 1)[1].startswith(b'[["')]
    assert len(files_entries) == 4
    for path in files_entries:
        path.unlink()
    render_cache.MEMO.clear()
    renders, charts = rebuild_counting(project)
    assert charts == Counter({"kept": 4, "redrawn": 4}) and renders == Counter()  # the renders are still cached
    assert site_bytes(project / "site") == before
    assert rebuild_counting(project)[1] == Counter({"kept": 4})  # both entries kept again
