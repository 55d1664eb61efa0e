"""The trees the benchmarks build: copies of the real site, stripped copies, generated sites."""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from ainotes.core.collectives import MAX_RANKS, MIN_RANKS, OPS, OPS_WITH_ROOT
from ainotes.markdown.extension import locate_fences

REPO = Path(__file__).resolve().parents[1]
CHART_FENCES = ("roofline", "collective")
PROJECT_PARTS = ("docs", "presets", "hooks", "overrides")


def copy_project(dest: Path) -> Path:
    """docs/, presets/, hooks/, overrides/ and mkdocs.yml of the repository, copied into ``dest``.

    mkdocs.yml loses its ``watch`` list: it names src/, which the copy does not
    have, and only ``mkdocs serve`` reads it.
    """
    dest.mkdir(parents=True, exist_ok=True)
    for name in PROJECT_PARTS:
        shutil.copytree(REPO / name, dest / name)
    config = without_top_level_keys((REPO / "mkdocs.yml").read_text(encoding="utf-8"), ("watch",))
    (dest / "mkdocs.yml").write_text(config, encoding="utf-8")
    return dest


def strip_chart_fences(markdown: str) -> tuple[str, int]:
    """``markdown`` without its top-level roofline and collective fences, and how many went.

    The fences are found by :func:`ainotes.markdown.extension.locate_fences`, as
    Markdown finds them in the real build, so a fence shown as an example inside
    a longer fence (or an indented code block) stays, exactly as it stays there.
    """
    lines = markdown.splitlines(keepends=True)
    drop: set[int] = set()
    removed = 0
    for part in locate_fences(markdown):
        if part.kind in CHART_FENCES:
            drop.update(range(part.start_line - 1, part.end_line or part.start_line))  # 1-based, closing included
            removed += 1
    return "".join(line for index, line in enumerate(lines) if index not in drop), removed


def strip_project(project: Path) -> int:
    """Remove every chart fence from the pages under ``project/docs``; returns the count removed."""
    removed = 0
    for page in sorted((project / "docs").rglob("*.md")):
        text, count = strip_chart_fences(page.read_text(encoding="utf-8"))
        page.write_text(text, encoding="utf-8")
        removed += count
    return removed


def count_chart_fences(docs: Path) -> dict[str, dict[str, int]]:
    """Per page (path relative to ``docs``): how many fences of each of our kinds it holds."""
    counts: dict[str, dict[str, int]] = {}
    for page in sorted(docs.rglob("*.md")):
        kinds: dict[str, int] = {}
        for part in locate_fences(page.read_text(encoding="utf-8")):
            kinds[part.kind] = kinds.get(part.kind, 0) + 1
        counts[page.relative_to(docs).as_posix()] = kinds
    return counts


# --------------------------------------------------------------------------
# Generated sites for the scale benchmark


@dataclass(frozen=True)
class ScalePoint:
    """A generated site: ``charts`` chart fences spread over ``pages`` pages."""

    charts: int
    pages: int

    @property
    def name(self) -> str:
        return f"scale-{self.charts}c-{self.pages}p"


_PROSE = (
    "This page is generated for the scale benchmark. Its prose is ordinary Markdown with "
    "*emphasis*, `code` and a [link to the home page](index.md), so that the pages without "
    "charts cost what a real page of notes costs.\n\n"
    "A second paragraph gives Python-Markdown a little more to do. Ridge points come from the "
    "presets: the H100 ridge sits at {{ ridge h100 }}.\n\n"
)

_KERNEL_KINDS = ("gemm", "add", "softmax", "layernorm", "attention", "attention-naive")
_DTYPES = ("bf16", "fp16", "fp8", "fp32")


def _kernel_spec(chart: int, slot: int) -> str:
    """A valid kernel spec for chart ``chart``, kernel ``slot``; neighbouring charts get different ones."""
    kind = _KERNEL_KINDS[(chart + slot) % len(_KERNEL_KINDS)]
    dtype = _DTYPES[(chart // 3 + slot) % len(_DTYPES)]
    size = 256 * (1 + (chart * 7 + slot * 3) % 64)
    if kind == "gemm":
        return f"gemm:{size}x{size * 2}x{256 * (1 + slot)}:{dtype}"
    if kind == "add":
        return f"add:{size * 1024}:{dtype}"
    if kind in ("softmax", "layernorm"):
        return f"{kind}:{size}x{size}:{dtype}"
    return f"{kind}:1x{8 * (1 + slot)}x{size}x128:{dtype}"


def _roofline_fence(chart: int, preset_ids: list[str]) -> str:
    first = (chart // 2) % len(preset_ids)  # rooflines are the even charts
    chosen = [preset_ids[(first + k) % len(preset_ids)] for k in range(1 + (chart // 2) % len(preset_ids))]
    kernels = "".join(f"  - {_kernel_spec(chart, slot)}\n" for slot in range(1 + (chart // 2) % 4))
    return (
        "```roofline\n"
        f"title: Scale roofline {chart}\n"  # the title alone makes every spec, so every render, distinct
        f"presets: [{', '.join(chosen)}]\n"
        f"sparsity: {'true' if chart % 5 == 0 else 'false'}\n"
        f"kernels:\n{kernels}"
        f"id: scale-roofline-{chart}\n"
        "```\n\n"
    )


def _collective_fence(chart: int) -> str:
    op = OPS[chart % len(OPS)]
    ranks = MIN_RANKS + (chart // len(OPS)) % (MAX_RANKS - MIN_RANKS + 1)
    root = f"root: {chart % ranks}\n" if op in OPS_WITH_ROOT else ""
    return f"```collective\nop: {op}\nranks: {ranks}\n{root}id: scale-collective-{chart}\n```\n\n"


def chart_fence(chart: int, preset_ids: list[str]) -> str:
    """Chart ``chart`` of a generated site: even numbers are rooflines, odd ones collectives."""
    return _roofline_fence(chart, preset_ids) if chart % 2 == 0 else _collective_fence(chart)


def without_top_level_keys(config_text: str, keys: tuple[str, ...]) -> str:
    """mkdocs.yml text without the named top-level keys and their blocks.

    Edited as text, not loaded and dumped: the file uses MkDocs's own YAML tags (``!ENV``).
    """
    out, skipping = [], False
    for line in config_text.splitlines(keepends=True):
        top = re.match(r"^([A-Za-z_][\w-]*):", line)
        if top:
            skipping = top.group(1) in keys
        if not skipping:
            out.append(line)
    return "".join(out)


def make_scale_site(dest: Path, point: ScalePoint, *, with_charts: bool) -> Path:
    """A generated project: the real presets, hooks and theme settings, ``point.pages`` pages.

    With ``with_charts`` false the pages are identical apart from having no
    chart fences: the no-chart baseline the chart cost is measured against.
    """
    dest.mkdir(parents=True, exist_ok=True)
    for name in ("presets", "hooks", "overrides"):
        shutil.copytree(REPO / name, dest / name)
    config = without_top_level_keys((REPO / "mkdocs.yml").read_text(encoding="utf-8"), ("nav", "watch"))
    site_name = f"Scale benchmark {point.name}"
    config = re.sub(r"^site_name:.*$", f"site_name: {site_name}", config, count=1, flags=re.M)
    (dest / "mkdocs.yml").write_text(config, encoding="utf-8")

    preset_ids = sorted(p.stem for p in (REPO / "presets").glob("*.yaml"))
    docs = dest / "docs"
    docs.mkdir()
    (docs / "index.md").write_text(f"# {site_name}\n\n{_PROSE}", encoding="utf-8")
    pages: list[list[str]] = [[] for _ in range(point.pages)]
    for chart in range(point.charts):
        pages[chart % point.pages].append(chart_fence(chart, preset_ids) if with_charts else "")
    for number, fences in enumerate(pages, start=1):
        body = "".join(f"## Section {k + 1}\n\n{_PROSE}{fence}" for k, fence in enumerate(fences))
        (docs / f"page-{number:03d}.md").write_text(f"# Page {number}\n\n{_PROSE}{body}", encoding="utf-8")
    return dest


def charts_showing(docs: Path, preset_id: str) -> int:
    """How many roofline fences under ``docs`` draw ``preset_id`` (a fence without a presets
    list draws them all): the charts that must render again when that preset changes."""
    count = 0
    for page in sorted(docs.rglob("*.md")):
        for part in locate_fences(page.read_text(encoding="utf-8")):
            if part.kind == "roofline":
                listed = re.search(r"^presets:\s*\[([^\]]*)\]", part.body, re.M)
                if listed is None or preset_id in [p.strip() for p in listed.group(1).split(",")]:
                    count += 1
    return count


def edit_preset(project: Path, preset_id: str) -> None:
    """Change one figure of ``presets/<preset_id>.yaml`` in ``project``, as an author correcting
    a datasheet number would (the memory bandwidth, by one part in a thousand)."""
    path = project / "presets" / f"{preset_id}.yaml"
    text = path.read_text(encoding="utf-8")
    match = re.search(r"^(memory_bandwidth_tbps:\s*)([0-9.]+)", text, re.M)
    if match is None:
        raise ValueError(f"{path}: no memory_bandwidth_tbps line to edit")
    edited = f"{float(match.group(2)) * 1.001:.6g}"
    path.write_text(text[: match.start(2)] + edited + text[match.end(2):], encoding="utf-8")
