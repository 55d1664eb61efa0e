"""Two clean builds of the real site are byte-identical, file by file.

The first is the run's shared build (``conftest.real_site``), the second is made here. Each runs in
its own temporary copy of the project (so an absolute path that leaks into the output shows up as a
difference), with its own empty render cache (so every chart is rendered twice, independently) and a
different ``PYTHONHASHSEED`` (so output that follows the iteration order of a set of strings shows up
too). The first renders its charts in two worker processes, the second in the build's own process
(``AINOTES_RENDER_WORKERS=0``): a build whose charts render in workers gives the bytes of one that
renders them all itself. A third build of the first copy, with the first build's cache, copies every
chart from the drawings the first build kept (:mod:`ainotes.build.drawings`): it must give the same bytes as
drawing them.

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


# One worker runs this file (xdist_group): its two builds are made once.
pytestmark = [pytest.mark.build, pytest.mark.integration, pytest.mark.xdist_group("reproducible")]


@pytest.fixture(scope="module")
def three_builds(real_site, tmp_path_factory) -> tuple[Path, Path, Path]:
    assert (real_site.env["PYTHONHASHSEED"], real_site.env["AINOTES_RENDER_WORKERS"]) == ("1", "2")
    root = tmp_path_factory.mktemp("reproducible-second")
    second = run_build(copy_real_project(root / "project"), env={
        **real_site.env, "AINOTES_CACHE_DIR": str(root / "render-cache"), "PYTHONHASHSEED": "2",
        "AINOTES_RENDER_WORKERS": "0"})
    assert second.returncode == 0, second.output
    kept = run_build(real_site.project, root / "site-kept", env={**real_site.env, "PYTHONHASHSEED": "3"})
    assert kept.returncode == 0, kept.output
    return real_site.site, second.site, kept.site


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
    names = _files(two_builds[0])
    assert any(name.endswith(".png") for name in names) and any(name.endswith("-dark.svg") for name in names)


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
