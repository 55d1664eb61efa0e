"""Helpers that build real MkDocs sites (the real site, or small fixture sites) into temp folders."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from typing import ClassVar

REPO = Path(__file__).resolve().parents[1]
MKDOCS = [sys.executable, "-m", "mkdocs"]

FIXTURE_CONFIG = """\
site_name: Fixture notes
docs_dir: docs
hooks:
  - {hooks}
theme:
  name: material
  font: false
  features: [navigation.instant]
  palette:
    - scheme: default
      toggle: {{icon: material/weather-night, name: dark}}
    - scheme: slate
      toggle: {{icon: material/weather-sunny, name: light}}
extra_css:
  - assets/ainotes/charts.css
  - assets/ainotes/collectives.css
  - assets/ainotes/notes.css
plugins: [search]
markdown_extensions:
  [admonition, attr_list, md_in_html, tables, pymdownx.details, pymdownx.superfences, pymdownx.tabbed,
   ainotes.markdown.extension]
"""

H100 = """\
name: {name}
dense_fp16_tflops: 989.4
memory_bandwidth_tbps: 3.35
structured_sparsity: true
sources:
  - title: {source_title}
    url: {url}
"""

A_NO_SPARSITY = """\
name: Plain GPU
dense_fp16_tflops: 100
memory_bandwidth_tbps: 1
sources:
  - {title: Sheet, url: "https://example.com/plain"}
"""


@dataclass
class Build:
    returncode: int
    output: str
    site: Path

    def page(self, url: str) -> str:
        return (self.site / url / "index.html").read_text(encoding="utf-8")


def run_build(project: Path, site: Path | None = None, *, env: dict | None = None, timeout: float = 300) -> Build:
    site = site or project / "site"
    proc = subprocess.run(
        [*MKDOCS, "build", "--strict", "-f", str(project / "mkdocs.yml"), "-d", str(site)],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
        check=False,
    )
    return Build(proc.returncode, proc.stdout + proc.stderr, site)


def make_fixture(root: Path, pages: dict[str, str], presets: dict[str, str] | None = None) -> Path:
    """A tiny notes project: mkdocs.yml using the real hooks, pages and presets."""
    (root / "docs").mkdir(parents=True, exist_ok=True)
    (root / "mkdocs.yml").write_text(FIXTURE_CONFIG.format(hooks=REPO / "hooks" / "notes.py"), encoding="utf-8")
    for name, text in pages.items():
        path = root / "docs" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    presets_dir = root / "presets"
    presets_dir.mkdir(exist_ok=True)
    if presets is None:
        presets = {
            "h100": H100.format(name="H100 test", source_title="Datasheet", url="https://example.com/h100"),
            "plain": A_NO_SPARSITY,
        }
    for preset_id, text in presets.items():
        (presets_dir / f"{preset_id}.yaml").write_text(text, encoding="utf-8")
    return root


def site_bytes(site: Path) -> dict[str, bytes]:
    """Every file of a built site (its path below ``site`` → its bytes), the sitemaps left out (they
    hold the build's date): what two builds are compared by."""
    return {p.relative_to(site).as_posix(): p.read_bytes() for p in sorted(site.rglob("*"))
            if p.is_file() and not p.name.startswith("sitemap")}


def edit_file(path: Path, old: str, new: str) -> None:
    """An author's edit: the first ``old`` in ``path`` replaced by ``new`` (``old`` must be there)."""
    text = path.read_text(encoding="utf-8")
    assert old in text, (path, old)
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def copy_real_project(dest: Path) -> Path:
    """The repository's own site sources (mkdocs.yml, docs, presets, hooks, overrides) in a temp folder."""
    for name in ("docs", "presets", "hooks", "overrides"):
        shutil.copytree(REPO / name, dest / name)
    shutil.copy(REPO / "mkdocs.yml", dest / "mkdocs.yml")
    (dest / "src").symlink_to(REPO / "src")  # mkdocs.yml watches it
    return dest


class ResourceRefs(HTMLParser):
    """Collects the URLs a page would load: scripts, styles, images, fonts, frames."""

    LOADING: ClassVar[set[tuple[str, str]]] = {
        ("script", "src"), ("link", "href"), ("img", "src"), ("img", "srcset"), ("source", "src"),
        ("source", "srcset"), ("iframe", "src"), ("embed", "src"), ("object", "data"),
        ("video", "src"), ("audio", "src"), ("image", "href"), ("use", "href"), ("image", "xlink:href"),
    }

    def __init__(self):
        super().__init__()
        self.urls: list[tuple[str, str]] = []

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if value and (tag, name) in self.LOADING:
                if tag == "link" and dict(attrs).get("rel") in ("canonical", "alternate", "prev", "next"):
                    continue
                self.urls.append((tag, value))


def loaded_urls(html_text: str) -> list[tuple[str, str]]:
    parser = ResourceRefs()
    parser.feed(html_text)
    return parser.urls


CSS_URL = re.compile(r"""url\(\s*['"]?([^'")]+)""")
CSS_IMPORT = re.compile(r"""@import\s+['"]([^'"]+)""")


def is_outside(url: str) -> bool:
    return bool(re.match(r"^(?:[a-z][a-z0-9+.-]*:)?//", url, re.I)) or url.lower().startswith(("http:", "https:"))
