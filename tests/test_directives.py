"""Fences, inline figures and math as an author writes them: found, parsed, and refused with page:line."""

from __future__ import annotations

import dataclasses
import os

import pytest

from ainotes.base import units
from ainotes.base.errors import InputError
from ainotes.build.site import NotesSite
from ainotes.core import jobs
from ainotes.fences import collective as collective_fence
from ainotes.fences import mfu_table
from ainotes.fences import roofline as roofline_fence
from ainotes.inline import figures
from ainotes.markdown.extension import convert_page, locate_fences
from ainotes.presets.gpus import load_presets
from preset_support import FIXTURE_PRESETS

PRESETS = {p.id: p for p in load_presets(FIXTURE_PRESETS)}
KNOWN = tuple(PRESETS)
SITE = NotesSite(FIXTURE_PRESETS)


def fences(text):
    return locate_fences(text)


def page_html(text, src="p.md"):
    return convert_page(SITE, text, src, "p/")


def test_fences_are_found_with_their_lines():
    text = "# T\n\n```roofline\npresets: [h100]\n```\n\ntext\n\n~~~~collective\nop: reduce\n~~~~\n"
    found = fences(text)
    assert [(f.kind, f.start_line, f.end_line) for f in found] == [("roofline", 3, 5), ("collective", 9, 11)]
    assert found[0].body == "presets: [h100]\n"


def test_fence_inside_a_longer_fence_is_content():
    text = "````markdown\n```roofline\npresets: [nope]\n```\n````\n\n```python\nx = 1\n```\n"
    assert fences(text) == []
    assert "presets: [nope]" in page_html(text)


def test_other_fences_with_odd_headers_stay_as_superfences_leaves_them():
    assert "colour=red" in page_html("```python colour=red\nx = 1\n```\n")


def test_indented_code_block_is_code_even_with_a_bad_body():
    text = "An example:\n\n    ```roofline\n    presets: [nope]\n    ```\n"
    assert fences(text) == []
    html_text = page_html(text)
    assert "<pre><code>```roofline\npresets: [nope]\n```" in html_text
    assert "ainotes-chart" not in html_text
    assert "<script" not in html_text  # no chart, no chart runtime


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("> ```collective\n> op: reduce\n> ```\n", 1),
        ("!!! note\n\n    ```collective\n    op: reduce\n    ```\n", 3),
        ("- item\n\n    ```collective\n    op: reduce\n    ```\n", 3),
        ("??? note \"More\"\n\n    ```collective\n    op: reduce\n    ```\n", 3),
        ("=== \"Tab\"\n\n    ```collective\n    op: reduce\n    ```\n", 3),
    ],
    ids=["blockquote", "admonition", "list-item", "details", "tabbed"],
)
def test_fences_in_containers_are_charts(text, line):
    (fence,) = fences(text)
    assert (fence.kind, fence.start_line) == ("collective", line)
    assert 'class="ainotes-coll ainotes-stepper"' in page_html(text, "containers.md")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("# T\n\n> ```roofline\n> presets: [nope]\n> ```\n", "p.md:4: unknown preset 'nope'"),
        ("# T\n\n- a\n\n    ```collective\n    op: reduce\n    ranks: 99\n    ```\n",
         "p.md:7: 'ranks' must be a whole number from 2 to 8: 99"),
        ("!!! note\n\n    ```mfu-table\n    jobs: 3\n    ```\n", "p.md:4: 'jobs' must be a non-empty list"),
        ('# T\n\n```roofline title="x"\n```\n', "p.md:3: a roofline fence takes its settings in its body"),
        ("# T\n\n```roofline colour=red\n```\n",
         "p.md:3: a roofline fence takes its settings in its body, not after its name: colour=red"),
        ("# T\n\n> ```collective op: reduce\n> ```\n", "p.md:3: a collective fence takes its settings in its body"),
        ("# T\n\nx\n\nRidge: {{ ridge h101 }}.\n", "p.md:5: unknown preset 'h101'"),
        ("# T\n\n| a | b |\n|---|---|\n| x | {{ peak nope }} |\n", "p.md:5: unknown preset 'nope'"),
        ("# T\n\nx\n\n$$\n\\frac{1}{\n$$\n", "p.md:5: math"),
        ("# T\n\nx $\\frac{1}{$ y\n", "p.md:3: math"),
        ("# T\n\nx\n\n$$\na\n", "p.md:5: '$$' math block is never closed"),
        ("```collective\nop: reduce\nid: same\n```\n\n```collective\nop: scatter\nid: same\n```\n",
         "p.md:6: chart id 'same' is already used on p.md"),
    ],
)
def test_errors_name_page_and_line(text, message):
    with pytest.raises(InputError) as info:
        page_html(text)
    assert str(info.value).startswith(message), str(info.value)
    assert "\n" not in str(info.value)


def test_inline_forms_skip_code_and_dollar_amounts():
    html_text = page_html("a `{{ ridge nope }}` b {{ ridge h100 }} $x^2$ and ``$y$``; it cost $5 and $6, or \\$7.\n")
    assert "<code>{{ ridge nope }}</code>" in html_text
    assert "295 FLOP/byte" in html_text
    assert html_text.count("<math") == 1
    assert "<code>$y$</code>" in html_text
    assert "$5 and $6" in html_text


def test_display_math_stands_alone():
    html_text = page_html("text\n\n$$\na + b\n$$\n\n$$ c $$\n\nafter\n")
    assert html_text.count('display="block"') == 2
    assert "<p><math" not in html_text and "$$" not in html_text
    assert html_text.endswith("<p>after</p>")


def test_figure_text_is_escaped_not_markup():
    site = NotesSite(FIXTURE_PRESETS)
    site.presets_by_id["h100"] = dataclasses.replace(site.presets_by_id["h100"], name="<b>*x*</b> & [y](z)")
    html_text = convert_page(site, "{{ name h100 }}\n", "p.md", "p/")
    assert html_text == "<p>&lt;b&gt;*x*&lt;/b&gt; &amp; [y](z)</p>"


def test_chart_pages_get_their_scripts_once():
    html_text = page_html("```collective\nop: reduce\n```\n\n```collective\nop: scatter\n```\n", "scripts.md")
    assert html_text.count('<script src="../assets/ainotes/collectives.js"></script>') == 1
    assert "<script" not in page_html("# No charts\n\n{{ ridge h100 }}\n", "plain.md")


def test_roofline_defaults_and_kernels():
    (fence,) = fences("```roofline\nkernels:\n  - gemm:64x64x64:fp16\n  - {spec: 'add:1024', label: residual}\n```\n")
    request = roofline_fence.parse_roofline(fence, "p.md", PRESETS)
    assert request.preset_ids == KNOWN and request.sparsity is False and request.title is None
    assert request.kernels[0].spec.startswith("gemm:64x64x64")
    assert request.kernels[1].label == "residual"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("presets: [h100, x]\n", "p.md:2: unknown preset 'x'"),
        ("sparsity: maybe\n", "p.md:2: 'sparsity' must be true or false: 'maybe'"),
        ("kernels: [gemm:1x2]\n", "p.md:2: "),
        ("kernels: 3\n", "p.md:2: 'kernels' must be a list"),
        ("title: [a]\n", "p.md:2: 'title' must be text"),
        ("title: " + "x" * 200 + "\n", "p.md:2: 'title' must be at most 120 characters: 200"),
        ("id: Not An Id\n", "p.md:2: 'id' must be lowercase"),
        ("colour: red\n", "p.md:2: unknown key 'colour' in roofline fence"),
        ("- just\n- a list\n", "p.md:1: roofline fence body must be a YAML mapping"),
        ("presets: [h100\n", "p.md:"),
        ("kernels:\n" + "".join(f"  - add:{i + 1}\n" for i in range(13)), "p.md:2: 'kernels' may list at most 12: 13"),
    ],
)
def test_bad_roofline_bodies_name_page_and_line(body, message):
    (fence,) = fences(f"```roofline\n{body}```\n")
    with pytest.raises(InputError) as info:
        roofline_fence.parse_roofline(fence, "p.md", PRESETS)
    text = str(info.value)
    assert text.startswith(message), text
    assert "\n" not in text


def test_yaml_error_line_points_into_the_page():
    (fence,) = fences("# T\n\nintro\n\n```collective\nop: reduce\nranks: [4\n```\n")
    with pytest.raises(InputError, match=r"^p\.md:(7|8): collective fence body is not valid YAML"):
        collective_fence.parse_collective(fence, "p.md", PRESETS)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("op: reduce\nranks: 1\n", "'ranks' must be a whole number from 2 to 8: 1"),
        ("op: reduce\nranks: 9\n", "'ranks' must be a whole number from 2 to 8: 9"),
        ("op: reduce\nranks: 4\nroot: 4\n", "'root' must be a whole number from 0 to 3: 4"),
        ("op: reduce\nranks: two\n", "'ranks' must be a whole number from 2 to 8: 'two'"),
        ("op: gather\n", "'op' must be one of all-reduce, reduce"),
        ("ranks: 4\n", "'op' must be one of"),
    ],
)
def test_bad_collective_bodies(body, message):
    (fence,) = fences(f"```collective\n{body}```\n")
    with pytest.raises(InputError, match=message):
        collective_fence.parse_collective(fence, "p.md", PRESETS)


def test_mfu_table_jobs_need_one_peak():
    body = "jobs:\n  - {name: a, params: 1e9, tokens_per_second: 1e5, gpus: 8}\n"
    (fence,) = fences(f"```mfu-table\n{body}```\n")
    with pytest.raises(InputError, match=r"p\.md:3: job 'a': needs exactly one of 'preset' and 'peak_tflops'"):
        mfu_table.parse_mfu_table(fence, "p.md", PRESETS)


def test_figures_come_from_the_core():
    assert figures.evaluate("ridge h100", PRESETS) == "295 FLOP/byte"
    assert figures.evaluate("ridge h100 sparse", PRESETS) == "591 FLOP/byte"  # 1978.8 / 3.35
    assert figures.evaluate("ridge b200", PRESETS) == "281 FLOP/byte"
    assert figures.evaluate("peak b200", PRESETS) == "2.25 PFLOP/s"
    assert figures.evaluate("bandwidth b200", PRESETS) == "8 TB/s"
    assert figures.evaluate("bus-factor all-reduce ranks=4", PRESETS) == "1.5"
    assert figures.evaluate("bus-factor all-gather", PRESETS) == "0.75"
    palm = ("params=540e9 tokens_per_second=238.3e3 gpus=6144 peak_tflops=275 "
            "layers=118 heads=48 head_dim=256 seq_len=2048")
    assert figures.evaluate(f"mfu {palm}", PRESETS) == "46.2 %"
    # Full recomputation: the ceiling above the paper's 57.8 % HFU (it rematerialized part of a layer).
    assert figures.evaluate(f"hfu {palm} recompute=full", PRESETS) == "61.6 %"
    assert figures.evaluate("bound h100 add:1048576:bf16", PRESETS) == "memory-bound"
    assert figures.evaluate("bound h100 gemm:8192x8192x8192:bf16", PRESETS) == "compute-bound"
    names = figures.evaluate("presets", PRESETS)
    ordered = [p.name for p in PRESETS.values()]
    assert names.endswith(" and " + ordered[-1])
    assert [names.index(n) for n in ordered] == sorted(names.index(n) for n in ordered)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("ridge", "'ridge' needs a preset id"),
        ("ridge h101", "unknown preset 'h101'"),
        ("ridge h100 dense", "'ridge' does not take 'dense' (allowed: a precision, fp64, fp32, tf32, fp16, bf16, "
                             "fp8, fp4, int8; a unit, tensor, vector; sparse)"),
        ("ridge h100 colour=red", "'ridge' takes no key=value options: colour= (allowed: a precision,"),
        ("peak h100 fp8 fp16", "'peak' takes one precision: 'fp8 fp16'"),
        ("attainable h100 add:1024 sparse", "'attainable' does not take 'sparse' (allowed: nothing more)"),
        ("bus-factor all-reduce rank=8", "'bus-factor' does not take rank= (allowed: ranks=)"),
        ("name h100 colour=red", "'name' takes no key=value options: colour= (allowed: nothing more)"),
        ("bus-factor all-reduce ranks=4 ranks=8", "'bus-factor' is given ranks= twice"),
        ("intensity gemm:8x8x8 typo", "'intensity' does not take 'typo' (allowed: nothing more)"),
        ("presets all", "'presets' does not take 'all' (allowed: nothing more)"),
        ("bandwidth h100 sparse", "'bandwidth' does not take 'sparse'"),
        ("bound h100", "'bound' needs a kernel spec"),
        ("teraflops h100", "unknown inline figure 'teraflops'"),
        ("mfu params=1e9 tokens_per_second=1e5 gpus=8", "needs exactly one of preset= and peak_tflops="),
        ("mfu params=1e9 tokens_per_second=1e5 gpus=8 preset=h100 layer=80",
         "'mfu' does not take layer= (allowed: params=, tokens_per_second=, gpus=, peak_tflops=, preset="),
        ("mfu params=1e9 tokens_per_second=1e5 gpus=8 preset=h100 sparse", "'mfu' does not take 'sparse'"),
        ("hfu params=1e9 tokens_per_second=1e5 gpus=8 preset=h100 tokens=1e12", "'hfu' does not take tokens="),
        ("mfu params=-1 tokens_per_second=1e5 gpus=8 peak_tflops=100", "params= must be a finite number > 0: '-1'"),
        ("mfu params=1e9 tokens_per_second=nan gpus=8 peak_tflops=100",
         "tokens_per_second= must be a finite number > 0: 'nan'"),
        ("mfu params=1e9 tokens_per_second=1e5 gpus=2.5 peak_tflops=100", "gpus= must be a whole number >= 1: '2.5'"),
        ("hfu params=1e9 tokens_per_second=1e5 gpus=8 peak_tflops=100 recompute=some",
         "recompute= must be one of none, selective, full: 'some'"),
        ("mfu params=1e9 tokens_per_second=1e5 gpus=8 peak_tflops=100 layers=2 heads=2",
         "layers=, heads=, head_dim=, seq_len= go together: layers=, heads= given, head_dim=, seq_len= missing"),
        ("mfu params=1e9 tokens_per_second=1e5 gpus=8 preset=h100 precision=fp9",
         "precision= must be one of fp64, tf32, fp16, bf16, fp8, fp4, int8: 'fp9'"),
        ("bus-factor all-reduce ranks=0", "ranks= must be a whole number from 2 to 1024: '0'"),
        ("intensity gemm:0x1x1", "kernel spec 'gemm:0x1x1': dimension M must be >= 1: 0"),
    ],
)
def test_bad_inline_figures(body, message):
    with pytest.raises(InputError) as info:
        figures.evaluate(body, PRESETS)
    assert message in str(info.value)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("# T\n\nRing: {{ bus-factor all-reduce rank=8 }}.\n", "p.md:3: 'bus-factor' does not take rank="),
        ("# T\n\n!!! note\n\n    {{ ridge h100 colour=red }}\n", "p.md:5: 'ridge' takes no key=value options: colour="),
        ("# T\n\n- a\n- {{ intensity gemm:8x8x8 typo }}\n", "p.md:4: 'intensity' does not take 'typo'"),
    ],
)
def test_strict_inline_forms_name_page_and_line(text, message):
    with pytest.raises(InputError) as info:
        page_html(text)
    assert str(info.value).startswith(message), str(info.value)


def test_precision_picks_the_peak_and_unknown_peaks_are_refused():
    job = "params=7e9 tokens_per_second=3000 gpus=1 preset=h100"
    assert figures.evaluate(f"mfu {job}", PRESETS) == figures.evaluate(f"mfu {job} precision=bf16", PRESETS)
    assert figures.evaluate(f"mfu {job}", PRESETS) == units.percent(6 * 7e9 * 3000 / 989.4e12)
    h100 = PRESETS["h100"]
    if jobs.preset_peak_tflops(h100, "fp64") is None:
        with pytest.raises(InputError, match="precision= fp64: preset h100 gives no dense fp64 tensor peak"):
            figures.evaluate(f"mfu {job} precision=fp64", PRESETS)


def test_math_becomes_mathml_and_bad_math_is_an_error():
    assert figures.mathml("a < b", block=False).startswith("<math")
    assert 'display="block"' in figures.mathml(r"\frac{1}{2}", block=True)
    with pytest.raises(InputError, match="could not be converted"):
        figures.mathml(r"\frac{1}{", block=True)


def test_errors_raised_while_drawing_a_fence_still_name_page_and_line(monkeypatch):
    from ainotes.charts.roofline import spec as roofline_chart

    def refuse(*args, **kwargs):
        raise InputError("roofline chart: cannot draw this")

    monkeypatch.setattr(roofline_chart, "roofline_spec", refuse)
    site = NotesSite(FIXTURE_PRESETS)
    with pytest.raises(InputError, match=r"^notes/p\.md:3: roofline chart: cannot draw this$"):
        convert_page(site, "# P\n\n```roofline\n```\n", "notes/p.md", "notes/p/")


def test_without_a_driver_the_extension_loads_presets_and_reloads_them(tmp_path):
    """Zensical runs the extension with no hooks: it reads presets/ itself, again when a file changes."""
    from markdown import Markdown

    preset = (FIXTURE_PRESETS / "a100.yaml").read_text(encoding="utf-8")
    (tmp_path / "gpu.yaml").write_text(preset, encoding="utf-8")

    def convert() -> str:
        md = Markdown(extensions=["pymdownx.superfences", "ainotes.markdown"],
                      extension_configs={"ainotes.markdown": {"presets_dir": str(tmp_path)}})
        return md.convert("{{ name gpu }}")

    assert convert() == f"<p>{PRESETS['a100'].name}</p>"
    (tmp_path / "gpu.yaml").write_text(preset.replace(PRESETS["a100"].name, "Renamed GPU"), encoding="utf-8")
    os.utime(tmp_path / "gpu.yaml", ns=(1, 1))  # a different stamp even within the clock's resolution
    assert convert() == "<p>Renamed GPU</p>"


def test_the_extension_needs_superfences():
    from markdown import Markdown

    with pytest.raises(InputError, match=r"ainotes\.markdown needs pymdownx\.superfences"):
        Markdown(extensions=["ainotes.markdown"]).convert("text")
