"""Two clean builds of the real site are byte-identical, file by file.

Each build runs in its own temporary copy of the project (so an absolute path that leaks into
the output shows up as a difference), with its own empty render cache (so every chart is
rendered twice, independently) and a different ``PYTHONHASHSEED`` (so output that follows the
iteration order of a set of strings shows up too). A third build of the first copy, with the first
build's cache, copies every chart from the drawings the first build kept (:mod:`ainotes.build.drawings`):
it must give the same bytes as drawing them.

The only bytes allowed to differ are the ones MkDocs dates by itself, listed in
:data:`MKDOCS_DATED` with the reason for each. Today they agree anyway, because MkDocs dates
them by the day; they differ when the two builds straddle midnight.
"""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pytest

from sitebuild import copy_real_project, run_build

_LASTMOD = re.compile(rb"<lastmod>[^<]*</lastmod>")


def _sitemap_without_dates(data: bytes) -> bytes:
    return _LASTMOD.sub(b"<lastmod></lastmod>", data)


def _gzipped_sitemap_without_dates(data: bytes) -> bytes:
    # The gzip header carries a modification time, and the XML inside carries <lastmod>.
    return _sitemap_without_dates(gzip.decompress(data))


MKDOCS_DATED = {
    # MkDocs's sitemap template writes each page's <lastmod> as the build date.
    "sitemap.xml": _sitemap_without_dates,
    # MkDocs gzips the same sitemap with the build date as the gzip header's mtime.
    "sitemap.xml.gz": _gzipped_sitemap_without_dates,
}


pytestmark = pytest.mark.build


@pytest.fixture(scope="module")
def three_builds(tmp_path_factory) -> tuple[Path, Path, Path]:
    sites = []
    for name, seed in (("first", "1"), ("second", "2")):
        root = tmp_path_factory.mktemp(f"reproducible-{name}")
        project = copy_real_project(root / "project")
        build = run_build(project, env={"AINOTES_CACHE_DIR": str(root / "render-cache"), "PYTHONHASHSEED": seed})
        assert build.returncode == 0, build.output
        sites.append(build.site)
        if name == "first":
            env = {"AINOTES_CACHE_DIR": str(root / "render-cache"), "PYTHONHASHSEED": "3"}
            kept = run_build(project, project / "site-kept", env=env)
            assert kept.returncode == 0, kept.output
    return sites[0], sites[1], kept.site


@pytest.fixture(scope="module")
def two_builds(three_builds) -> tuple[Path, Path]:
    return three_builds[0], three_builds[1]


def _files(site: Path) -> dict[str, Path]:
    return {path.relative_to(site).as_posix(): path for path in sorted(site.rglob("*")) if path.is_file()}


def _first_difference(a: bytes, b: bytes) -> str:
    offset = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
    return (
        f"{len(a)} vs {len(b)} bytes, first difference at byte {offset}: "
        f"{a[max(0, offset - 60):offset + 60]!r} vs {b[max(0, offset - 60):offset + 60]!r}"
    )


def test_the_builds_hold_the_same_files(two_builds):
    first, second = (_files(site) for site in two_builds)
    assert sorted(first) == sorted(second)


def test_the_builds_have_charts_to_compare(two_builds):
    manifest = json.loads((two_builds[0] / "embed" / "manifest.json").read_text(encoding="utf-8"))
    kinds = {chart["kind"] for chart in manifest["charts"]}
    assert {"roofline", "collective"} <= kinds
    assert any(name.endswith(".png") for name in _files(two_builds[0]))


def test_every_file_is_byte_identical_apart_from_mkdocs_dates(two_builds):
    first, second = (_files(site) for site in two_builds)
    differences = []
    for name in sorted(set(first) & set(second)):
        a, b = first[name].read_bytes(), second[name].read_bytes()
        if a == b:
            continue
        normalise = MKDOCS_DATED.get(name)
        if normalise is not None and normalise(a) == normalise(b):
            continue
        differences.append(f"{name}: {_first_difference(a, b)}")
    assert not differences, "builds differ:\n" + "\n".join(differences)


def test_a_build_from_kept_drawings_is_byte_identical_to_drawing_them(three_builds):
    first, _, kept = (_files(site) for site in three_builds)
    assert sorted(first) == sorted(kept)
    differences = [
        f"{name}: {_first_difference(first[name].read_bytes(), kept[name].read_bytes())}"
        for name in sorted(first)
        if first[name].read_bytes() != kept[name].read_bytes()
        and not (name in MKDOCS_DATED and MKDOCS_DATED[name](first[name].read_bytes())
                 == MKDOCS_DATED[name](kept[name].read_bytes()))
    ]
    assert not differences, "a build from kept drawings differs:\n" + "\n".join(differences)
