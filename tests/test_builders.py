"""The same mkdocs.yml built by ProperDocs (runs hooks) and Zensical (runs the Markdown
extension but no hooks; ``ainotes site-assets`` then writes what the hooks would have)."""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import pytest

from ainotes.fences.registry import CHART_KINDS, FENCE_KINDS
from ainotes.markdown.extension import locate_fences
from sitebuild import REPO, copy_real_project, make_fixture

# One worker runs this file (xdist_group): its ProperDocs and Zensical sites are built once.
pytestmark = [pytest.mark.build, pytest.mark.integration, pytest.mark.xdist_group("builders")]

GENERATOR = re.compile(r'<meta name="generator" content="[^"]*">')
LASTMOD = re.compile(r"<lastmod>[^<]*</lastmod>")


def _tool(name: str) -> list[str]:
    path = shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)
    if path is None:
        pytest.fail(f"{name} is not installed (it is in the test extra)")
    return [path]


def _run(command: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=600, env={**os.environ, **env},
                          check=False)


@pytest.fixture(scope="module")
def cache(real_site) -> dict[str, str]:
    """What the shared MkDocs build ran with: its site address and its render cache, so that every builder
    here builds for the same address and the PNGs are the same renders."""
    return real_site.env


def _files(site: Path) -> dict[str, bytes]:
    return {p.relative_to(site).as_posix(): p.read_bytes() for p in sorted(site.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def mkdocs_site(real_site) -> Path:
    return real_site.site


@pytest.fixture(scope="module")
def properdocs_site(tmp_path_factory, cache) -> Path:
    project = copy_real_project(tmp_path_factory.mktemp("properdocs"))
    proc = _run([*_tool("properdocs"), "build", "--strict", "-f", "mkdocs.yml", "-d", "site"], project, cache)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return project / "site"


def test_properdocs_builds_what_mkdocs_builds(mkdocs_site, properdocs_site):
    ours, theirs = _files(mkdocs_site), _files(properdocs_site)
    assert sorted(ours) == sorted(theirs)
    differences = []
    for name, data in ours.items():
        if name == "sitemap.xml.gz":
            continue  # the gzip header's date
        dated = {".html": GENERATOR, ".xml": LASTMOD}.get(Path(name).suffix)
        mine, other = (data, theirs[name]) if dated is None else (
            dated.sub("", data.decode()).encode(), dated.sub("", theirs[name].decode()).encode())
        if mine != other:
            differences.append(name)
    assert not differences
    assert 'content="mkdocs-ProperDocs' in (properdocs_site / "roofline" / "index.html").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def zensical_site(tmp_path_factory, cache) -> Path:
    # The renders, not the address: this site is checked as served from its root (404.html's links are absolute).
    cache = {"AINOTES_CACHE_DIR": cache["AINOTES_CACHE_DIR"]}
    project = copy_real_project(tmp_path_factory.mktemp("zensical"))
    proc = _run([*_tool("zensical"), "build", "--clean", "--strict", "-f", "mkdocs.yml"], project, cache)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    site = project / "site"
    assets = _run([sys.executable, "-m", "ainotes", "site-assets", "--config", "mkdocs.yml", "site"], project, cache)
    assert assets.returncode == 0, assets.stdout + assets.stderr
    return site


def _visible_text(page: str) -> str:
    return re.sub(r"<code>.*?</code>", "", page, flags=re.S)


def test_zensical_pages_show_charts_tables_figures_and_math(zensical_site):
    manifest = json.loads((zensical_site / "embed" / "manifest.json").read_text(encoding="utf-8"))
    for source in sorted((REPO / "docs").glob("*.md")):
        stem = source.stem
        page = (zensical_site / ("" if stem == "index" else stem) / "index.html").read_text(encoding="utf-8")
        fences = locate_fences(source.read_text(encoding="utf-8"))
        for fence in fences:
            assert f"language-{fence.kind}" not in page, (stem, fence.kind)
        charts = [chart for chart in manifest["charts"] if chart["source"] == source.name]
        # A chart fence draws one chart or more (a measured collective-cost fence: time and bus bandwidth).
        assert len(charts) >= sum(FENCE_KINDS[fence.kind].chart for fence in fences), stem
        for chart in charts:
            assert f'id="{chart["id"]}"' in page, (stem, chart["id"])
        tables = sum(not FENCE_KINDS[fence.kind].chart for fence in fences)
        blocks = ('<div class="ainotes-table', '<div class="ainotes-preset-check"',
                  '<div class="ainotes-whatsnew-block"', '<div class="ainotes-tags-index"',
                  '<div class="ainotes-note-cards"')
        assert sum(page.count(block) for block in blocks) >= tables, stem
        visible = _visible_text(page)
        assert "{{" not in visible and "```" not in visible, stem
        assert "$$" not in page, stem
    mfu = (zensical_site / "mfu" / "index.html").read_text(encoding="utf-8")
    assert "46.2 %" in mfu and mfu.count("<math") >= 3
    assert "ridge at 295 FLOP/byte" in (zensical_site / "roofline" / "index.html").read_text(encoding="utf-8")


def test_zensical_site_gets_assets_embeds_and_manifest(zensical_site):
    manifest = json.loads((zensical_site / "embed" / "manifest.json").read_text(encoding="utf-8"))
    assert {"roofline", "collective"} <= {chart["kind"] for chart in manifest["charts"]} <= set(CHART_KINDS)
    for chart in manifest["charts"]:
        assert (zensical_site / chart["page"] / "index.html").is_file(), chart["page"]
        for name in chart["files"].values():
            assert (zensical_site / "embed" / name).stat().st_size > 0, name
    for page in zensical_site.rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        # The links the pipeline writes: scripts, styles and chart downloads (embedding.md's own
        # raw-HTML link to the manifest is the page's, written for MkDocs' URLs).
        for url in re.findall(r'(?:src|href)="([^"#?]*(?:assets/ainotes|embed)/[^"#?]+)"', text):
            if url.endswith("manifest.json"):
                continue
            target = zensical_site / url.lstrip("/") if url.startswith("/") else page.parent / url  # 404.html: absolute
            assert target.resolve().is_file(), f"{page.relative_to(zensical_site)}: {url}"


def test_zensical_pages_show_dates_tags_and_references(zensical_site):
    from ainotes.notes.meta import split_front_matter

    for source in sorted((REPO / "docs").glob("*.md")):
        front = split_front_matter(source.read_text(encoding="utf-8"), source.name).data
        folder = zensical_site / ("" if source.stem == "index" else source.stem)
        page = (folder / "index.html").read_text(encoding="utf-8")
        assert ('class="ainotes-dates"' in page) == front.get("listed", True), source.name
        meta = re.search(r'<div class="ainotes-page-meta">.*?</div>', page, re.S)
        assert (meta.group(0).count('class="md-tag"') if meta else 0) == len(front.get("tags", [])), source.name
        assert page.count('<nav class="md-tags"') == 0, source.name  # Zensical's own row is switched off
    mfu = (zensical_site / "mfu" / "index.html").read_text(encoding="utf-8")
    assert '<li id="ref-1" value="1">' in mfu and 'href="#ref-1"' in mfu
    assert (zensical_site / "feed.xml").is_file() and (zensical_site / "feed.json").is_file()


def test_zensical_search_index_holds_the_prose_not_the_chart_internals(zensical_site):
    items = json.loads((zensical_site / "search.json").read_text(encoding="utf-8"))["items"]
    text = {item["location"]: item["text"] for item in items}
    assert "Pick a precision and one GPU or all of them" in text["roofline/#the-explorer"]  # the prose
    assert "TFLOP/s" not in text["roofline/#the-explorer"] and "signals" not in text["roofline/#the-explorer"]
    assert "Gradient averaging" in text["collectives/#all-reduce"] and "rank 0" not in text["collectives/#all-reduce"]


_SNIPPET = re.compile(r'<code class="ainotes-embed__snippet" data-urls="([^"]*)">(.*?)</code>', re.S)
_SNIPPET_URL = re.compile(r'(?:src|srcset)="([^"]+)"')


@pytest.mark.parametrize("builder", ["mkdocs", "properdocs", "zensical"])
def test_every_snippet_url_finds_its_file(request, builder):
    """Each snippet under each chart reaches an embed file: an absolute one (a build with a real
    site_url) by its path, a relative one as a reader's browser resolves it from the page's address."""
    site = request.getfixturevalue(f"{builder}_site")
    manifest = json.loads((site / "embed" / "manifest.json").read_text(encoding="utf-8"))
    followed: dict[str, int] = {}
    for chart in manifest["charts"]:
        page_file = site / chart["page"] / "index.html"
        text = page_file.read_text(encoding="utf-8")
        assert "<base " not in text  # the page's own address is what relative URLs resolve against
        start = text.index(f'<div class="ainotes-downloads" data-chart="{chart["id"]}">')
        block = text[start:text.index("</details>", start)]
        snippets = _SNIPPET.findall(block)
        assert len(snippets) == 2, chart["id"]
        for listed, snippet in snippets:
            urls = _SNIPPET_URL.findall(html.unescape(snippet))
            assert urls and sorted(urls) == sorted(html.unescape(listed).split()), (chart["id"], urls, listed)
            for url in urls:
                if urlsplit(url).scheme:
                    # A build with a real site_url writes the snippet absolute: its path reaches the embed folder.
                    assert "/embed/" in urlsplit(url).path, (builder, chart["page"], url)
                    target = site / "embed" / urlsplit(url).path.split("/embed/", 1)[1]
                else:
                    address = urljoin(f"https://example.org/notes/{chart['page']}", url)
                    assert address.startswith("https://example.org/notes/embed/"), (builder, chart["page"], url)
                    target = site / address.removeprefix("https://example.org/notes/")
                assert target.is_file() and target.stat().st_size > 0, (builder, chart["page"], url)
                followed[chart["kind"]] = followed.get(chart["kind"], 0) + 1
    assert {"roofline", "collective", "collective-cost"} <= set(followed)


_FENCE_ERROR_PAGE = """---
title: A page with front matter
---
# Kernels

```roofline
presets: [h100]
kernels:
  - {spec: "gemm:64x64x64", label: one
  - gemm:32x32x32
title: x
```
"""
_FENCE_ERROR = ("index.md:9: roofline fence body is not valid YAML: a '[' or '{' that is never closed, "
                "or items without ',' between them")


def test_a_fence_error_under_zensical_is_one_line(tmp_path, cache):
    """Zensical prints its own "No issues found" first (its link check); then our one line, no traceback."""
    project = make_fixture(tmp_path, {"index.md": _FENCE_ERROR_PAGE})
    proc = _run([*_tool("zensical"), "build", "--clean", "--strict", "-f", "mkdocs.yml"], project, cache)
    assert proc.returncode == 1
    # Besides the error, one line (printed as the build starts) says a hook-less build needs site-assets.
    lines = [line for line in proc.stderr.splitlines() if not line.startswith("ainotes: Zensical runs no hooks")]
    assert lines == ["No issues found", f"ainotes: {_FENCE_ERROR}"], proc.stderr


def test_a_fence_error_under_properdocs_is_the_mkdocs_line(tmp_path, cache):
    project = make_fixture(tmp_path, {"index.md": _FENCE_ERROR_PAGE})
    proc = _run([*_tool("properdocs"), "build", "--strict", "-f", "mkdocs.yml"], project, cache)
    assert proc.returncode == 1
    errors = [line for line in (proc.stdout + proc.stderr).splitlines() if line.startswith("ERROR")]
    assert errors[-1] == f"ERROR   -  {_FENCE_ERROR}", proc.stdout + proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
