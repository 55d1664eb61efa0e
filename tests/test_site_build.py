"""The real MkDocs build, of the real site and of small fixture sites, checked from its output files."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from html import unescape

import pytest

from ainotes.build.site import VEGA_KINDS
from ainotes.fences.registry import CHART_KINDS, FENCE_KINDS
from ainotes.markdown.extension import locate_fences
from preset_support import ADDED
from sitebuild import (
    CSS_IMPORT,
    CSS_URL,
    H100,
    REPO,
    is_outside,
    loaded_urls,
    make_fixture,
    run_build,
)

pytestmark = pytest.mark.build


def _fence_counts() -> dict[str, dict[str, int]]:
    counts = {}
    for path in sorted((REPO / "docs").rglob("*.md")):
        kinds: dict[str, int] = {}
        text = path.read_text(encoding="utf-8")
        for fence in locate_fences(text):
            kinds[fence.kind] = kinds.get(fence.kind, 0) + 1
        # A collective-cost fence with a measured log draws a second chart: its bus bandwidth.
        kinds["collective-cost"] = kinds.get("collective-cost", 0) + len(re.findall(
            r"^```collective-cost\n(?:(?!^```).)*?^measured:", text, flags=re.M | re.S))
        counts[path.relative_to(REPO / "docs").as_posix()] = kinds
    return counts


def _with_class(html_text: str, name: str) -> list[str]:
    return re.findall(rf'class="(?:[^"]* )?{name}(?: [^"]*)?"', html_text)


def _page_url(src: str) -> str:
    stem = src[: -len(".md")]
    return "" if stem == "index" else stem + "/"


def test_every_fence_became_a_chart_or_table(real_site):
    counts = _fence_counts()
    assert counts["roofline.md"].get("roofline", 0) >= 1
    assert counts["collectives.md"].get("collective", 0) == 7
    for src, kinds in counts.items():
        html_text = real_site.page(_page_url(src))
        vega_charts = sum(kinds.get(kind, 0) for kind in VEGA_KINDS)  # the Vega figures
        assert len(_with_class(html_text, "ainotes-chart")) == vega_charts, src
        assert len(_with_class(html_text, "ainotes-stepper")) == kinds.get("collective", 0), src
        assert html_text.count('class="ainotes-table ainotes-presets"') == kinds.get("presets-table", 0), src
        for kind in FENCE_KINDS:
            assert f"language-{kind}" not in html_text, (src, kind)
        assert "ainotesslot" not in html_text, src
        assert "{{" not in re.sub(r"<code>.*?</code>", "", html_text, flags=re.S), src


def test_manifest_lists_every_chart_and_its_files_exist(real_site):
    manifest = json.loads((real_site.site / "embed" / "manifest.json").read_text(encoding="utf-8"))
    charts = manifest["charts"]
    expected = sum(kinds.get(k, 0) for kinds in _fence_counts().values() for k in CHART_KINDS)
    assert len(charts) == expected
    assert len({c["id"] for c in charts}) == len(charts)
    for chart in charts:
        assert set(chart) >= {"id", "kind", "title", "page", "files"}
        assert {"svg", "json", "html"} <= set(chart["files"]), chart["id"]
        for name in chart["files"].values():
            path = real_site.site / "embed" / name
            assert path.is_file() and path.stat().st_size > 0, name
        assert (real_site.site / chart["page"] / "index.html").is_file()
        if chart["kind"] == "roofline":
            assert "png" in chart["files"]
            assert (real_site.site / "embed" / chart["files"]["png"]).read_bytes().startswith(b"\x89PNG")


def test_no_page_or_stylesheet_loads_anything_from_outside(real_site):
    pages = list(real_site.site.rglob("*.html"))
    assert len(pages) >= 8
    for page in pages:
        for tag, url in loaded_urls(page.read_text(encoding="utf-8")):
            assert not is_outside(url), f"{page.relative_to(real_site.site)}: <{tag}> loads {url}"
    for sheet in real_site.site.rglob("*.css"):
        text = sheet.read_text(encoding="utf-8")
        for url in CSS_URL.findall(text) + CSS_IMPORT.findall(text):
            assert not is_outside(url) or url.startswith("data:"), f"{sheet.name}: {url}"


def test_published_numbers_reach_the_prose(real_site):
    assert "46.2 %" in real_site.page("mfu")
    roofline_page = unescape(real_site.page("roofline"))
    assert "ridge at 295 FLOP/byte" in roofline_page  # H100 SXM: 989.4 / 3.35
    assert "ridge at 281 FLOP/byte" in roofline_page  # B200: 2250 / 8
    collectives_page = real_site.page("collectives")
    assert "<td>1.5</td>" in collectives_page and "<td>0.75</td>" in collectives_page


def test_formulas_are_mathml_built_in_advance(real_site):
    page = real_site.page("mfu")
    assert page.count("<math") >= 3
    assert "$$" not in page
    assert "mathjax" not in page.lower() and "katex" not in page.lower()


def test_example_fence_inside_a_longer_fence_is_left_alone(real_site):
    page = unescape(re.sub(r"<[^>]+>", "", real_site.page("adding-a-preset")))
    assert "```roofline\npresets: [h100, b200]" in page


def test_chart_runtime_only_on_pages_with_charts(real_site):
    assert "vega.min.js" not in real_site.page("")
    assert "vega.min.js" not in real_site.page("mfu")
    assert "vega.min.js" in real_site.page("roofline")
    assert "collectives.js" in real_site.page("collectives")
    assert (real_site.site / "assets" / "ainotes" / "vega.min.js").is_file()


def test_bad_fence_fails_strict_build_naming_page_and_line(tmp_path):
    project = make_fixture(tmp_path, {"index.md": "# Home\n\nText.\n\n```roofline\npresets: [h100, nope]\n```\n"})
    build = run_build(project)
    assert build.returncode != 0
    assert "index.md:6: unknown preset 'nope'" in build.output
    assert "Traceback" not in build.output


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("op: all-sum\n", "index.md:4: 'op' must be one of"),
        ("op: all-reduce\nranks: 99\n", "index.md:5: 'ranks' must be a whole number from 2 to 8: 99"),
        ("op: [unclosed\n", "index.md:4: collective fence body is not valid YAML"),  # the "[" line
        ("op: reduce\ncolour: red\n", "index.md:5: unknown key 'colour'"),
    ],
)
def test_bad_collective_fences(tmp_path, body, expected):
    project = make_fixture(tmp_path, {"index.md": f"# Home\n\n```collective\n{body}```\n"})
    build = run_build(project)
    assert build.returncode != 0 and expected in build.output, build.output
    assert "Traceback" not in build.output


def test_bad_inline_figure_names_page_and_line(tmp_path):
    project = make_fixture(tmp_path, {"notes/page.md": "# P\n\nFirst line.\nRidge: {{ ridge h101 }}.\n"})
    build = run_build(project)
    assert build.returncode != 0
    assert "notes/page.md:4: unknown preset 'h101'" in build.output
    assert "Traceback" not in build.output


def test_broken_preset_stops_the_build_with_the_loader_message(tmp_path):
    bad = H100.format(name="H100", source_title="x", url="https://example.com").replace("3.35", "-3")
    project = make_fixture(tmp_path, {"index.md": "# Home\n"}, {"h100": bad})
    build = run_build(project)
    assert build.returncode != 0
    assert "h100.yaml" in build.output and "memory_bandwidth_tbps" in build.output
    assert "Traceback" not in build.output
    assert not (project / "site" / "embed" / "manifest.json").exists()


HOSTILE_NAME = "<script>alert(1)</script> & \"quoted\" 'GPU'"


def test_markup_in_user_strings_comes_out_escaped(tmp_path):
    preset = H100.format(
        name=json.dumps(HOSTILE_NAME),
        source_title=json.dumps("<img src=x onerror=alert(2)>"),
        url="https://example.com/?a=1&b=<2>",
    )
    page = (
        "# Home\n\n{{ name evil }} has ridge {{ ridge evil }}.\n\n"
        "```roofline\npresets: [evil]\ntitle: \"</script><script>alert(3)</script>\"\n"
        "kernels:\n  - {spec: \"add:1024:fp16\", label: \"<b>x</b>\"}\n```\n\n"
        "```presets-table\n```\n"
    )
    project = make_fixture(tmp_path, {"index.md": page}, {"evil": preset})
    build = run_build(project)
    assert build.returncode == 0, build.output
    site = build.site
    html_text = (site / "index.html").read_text(encoding="utf-8")
    assert "<script>alert(1)" not in html_text and "&lt;script&gt;alert(1)" in html_text
    assert "<img src=x" not in html_text
    assert "<script>alert(3)" not in html_text
    assert "<b>x</b>" not in html_text
    manifest = json.loads((site / "embed" / "manifest.json").read_text(encoding="utf-8"))
    (chart,) = manifest["charts"]
    assert chart["title"] == "</script><script>alert(3)</script>"
    for kind, name in chart["files"].items():
        path = site / "embed" / name
        if kind == "png":
            continue
        text = path.read_text(encoding="utf-8")
        if kind != "json":  # a .json file is data: the strings stay as written
            assert "<script>alert(" not in text, name
            assert "<b>x</b>" not in text, name
        if kind in ("svg", "svg-dark"):
            import xml.etree.ElementTree as ET

            ET.fromstring(text)  # well-formed with the hostile strings inside
        if kind == "json":
            assert HOSTILE_NAME in _strings(json.loads(text))


def _strings(value) -> set[str]:
    if isinstance(value, str):
        return {value}
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    return set().union(*(_strings(v) for v in items)) if items else set()


def test_chart_ids_are_unique_across_pages(tmp_path):
    pages = {
        "a.md": "# A\n\n```collective\nop: reduce\nid: same\n```\n",
        "b.md": "# B\n\n```collective\nop: scatter\nid: same\n```\n",
    }
    build = run_build(make_fixture(tmp_path, pages))
    assert build.returncode != 0
    assert "chart id 'same' is already used on a.md" in build.output


def test_adding_a_preset_is_one_file(site_with_additions):
    build, project = site_with_additions, site_with_additions.project  # an H200 and an MI325X beside what ships
    roofline_page = unescape(build.page("roofline"))
    for name in ("NVIDIA H200 SXM 141 GB", "AMD Instinct MI325X (256 GB HBM3E)"):
        assert name in roofline_page  # presets table and explorer
        assert name in unescape(build.page(""))  # the prose that lists presets
    assert "206 FLOP/byte" in roofline_page  # 989.4 / 4.8, from the core
    assert "218 FLOP/byte" in roofline_page  # 1,307.4 / 6
    spec = json.loads((build.site / "embed" / "roofline-roofline.json").read_text(encoding="utf-8"))
    assert "AMD Instinct MI325X (256 GB HBM3E)" in json.dumps(spec)
    manifest = (build.site / "embed" / "manifest.json").read_text(encoding="utf-8")
    for preset_id in ADDED:
        assert any(preset_id in chart.get("presets", []) for chart in json.loads(manifest)["charts"])
    cli = subprocess.run(
        [sys.executable, "-m", "ainotes", "--presets-dir", str(project / "presets"), "presets"],
        capture_output=True, text=True, check=True,
    )
    assert "h200" in cli.stdout and "mi325x" in cli.stdout


def test_search_index_holds_the_prose_not_the_chart_internals(real_site):
    index = json.loads((real_site.site / "search" / "search_index.json").read_text(encoding="utf-8"))
    text = {doc["location"]: doc["text"] for doc in index["docs"]}
    explorer = text["roofline/#the-explorer"]
    assert "Pick a precision and one GPU or all of them" in explorer  # the prose around the chart
    assert "TFLOP/s" not in explorer and '"signals"' not in explorer  # tick labels, the Vega spec
    assert "rank 0" not in text["collectives/#all-reduce"]
    assert "Gradient averaging" in text["collectives/#all-reduce"]


NESTED_PAGE = """\
# Nested

> ```collective
> op: reduce
> ```

!!! note

    ```collective
    op: broadcast
    ```

- an item

    ```collective
    op: scatter
    ```

??? note "More"

    ```collective
    op: all-gather
    ```

=== "A tab"

    ```collective
    op: all-to-all
    ```

An example, indented:

    ```roofline
    presets: [nope]
    ```

````markdown
```roofline
presets: [nope]
```
````
"""


def test_the_issues_fences_in_a_real_build(tmp_path):
    """A fence in a blockquote, admonition, list item, details or tab is a chart; an indented
    one, or one inside a longer fence, is code (its bad body is no error)."""
    build = run_build(make_fixture(tmp_path, {"index.md": NESTED_PAGE}))
    assert build.returncode == 0, build.output
    page = build.page("")
    assert len(_with_class(page, "ainotes-stepper")) == 5
    assert page.count("presets: [nope]") == 2
    manifest = json.loads((build.site / "embed" / "manifest.json").read_text(encoding="utf-8"))
    assert sorted(c["op"] for c in manifest["charts"]) == ["all-gather", "all-to-all", "broadcast", "reduce", "scatter"]


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("Ring: {{ bus-factor all-reduce rank=8 }}.", "index.md:5: 'bus-factor' does not take rank= (allowed: ranks=)"),
        ("Ridge: {{ ridge h100 colour=red }}.", "index.md:5: 'ridge' takes no key=value options: colour="),
        ("GEMM: {{ intensity gemm:8x8x8 typo }}.",
         "index.md:5: 'intensity' does not take 'typo' (allowed: nothing more)"),
    ],
)
def test_the_issues_inline_typos_fail_a_real_build(tmp_path, line, expected):
    build = run_build(make_fixture(tmp_path, {"index.md": f"# Home\n\nText.\n\n{line}\n"}))
    assert build.returncode != 0
    assert expected in build.output, build.output
    assert "Traceback" not in build.output
