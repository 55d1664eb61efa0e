"""Fences, inline figures and math as an author writes them: found, parsed, and refused with page:line."""

from __future__ import annotations

import pytest

from ainotes import directives, figures, units
from ainotes.errors import InputError
from ainotes.hardware import load_presets
from sitebuild import REPO

PRESETS = {p.id: p for p in load_presets(REPO / "presets")}
KNOWN = tuple(PRESETS)


def fences(text):
    return [p for p in directives.split_fences(text) if isinstance(p, directives.Fence)]


def test_fences_are_found_with_their_lines():
    text = "# T\n\n```roofline\npresets: [h100]\n```\n\ntext\n\n~~~~collective\nop: reduce\n~~~~\n"
    found = fences(text)
    assert [(f.kind, f.start_line, f.end_line) for f in found] == [("roofline", 3, 5), ("collective", 9, 11)]
    assert found[0].body == "presets: [h100]\n"


def test_fence_inside_a_longer_fence_is_content():
    text = "````markdown\n```roofline\npresets: [h100]\n```\n````\n\n```python\nx = 1\n```\n"
    assert fences(text) == []
    segments = directives.split_fences(text)
    assert "".join(s.text for s in segments) == text


def test_other_code_fences_and_indented_fences():
    text = "```python\n```roofline\n```\n\n!!! note\n\n    ```collective\n    op: scatter\n    ```\n"
    found = fences(text)
    assert [(f.kind, f.body, f.indent) for f in found] == [("collective", "op: scatter\n", "    ")]


def test_unclosed_fence_runs_to_the_end():
    (fence,) = fences("a\n```collective\nop: reduce\n")
    assert fence.body == "op: reduce\n"


def test_roofline_defaults_and_kernels():
    (fence,) = fences("```roofline\nkernels:\n  - gemm:64x64x64:fp16\n  - {spec: 'add:1024', label: residual}\n```\n")
    request = directives.parse_roofline(fence, "p.md", KNOWN)
    assert request.preset_ids == KNOWN and request.sparsity is False and request.title is None
    assert [k.spec for k in request.kernels][0].startswith("gemm:64x64x64")
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
        directives.parse_roofline(fence, "p.md", KNOWN)
    text = str(info.value)
    assert text.startswith(message), text
    assert "\n" not in text


def test_yaml_error_line_points_into_the_page():
    (fence,) = fences("# T\n\nintro\n\n```collective\nop: reduce\nranks: [4\n```\n")
    with pytest.raises(InputError, match=r"^p\.md:(7|8): collective fence body is not valid YAML"):
        directives.parse_collective(fence, "p.md")


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("op: reduce\nranks: 1\n", "'ranks' must be between 2 and 8: 1"),
        ("op: reduce\nranks: 9\n", "'ranks' must be between 2 and 8: 9"),
        ("op: reduce\nranks: 4\nroot: 4\n", "'root' must be between 0 and 3: 4"),
        ("op: reduce\nranks: two\n", "'ranks' must be a whole number: 'two'"),
        ("op: gather\n", "'op' must be one of all-reduce, reduce"),
        ("ranks: 4\n", "'op' must be one of"),
    ],
)
def test_bad_collective_bodies(body, message):
    (fence,) = fences(f"```collective\n{body}```\n")
    with pytest.raises(InputError, match=message):
        directives.parse_collective(fence, "p.md")


def test_mfu_table_jobs_need_one_peak():
    body = "jobs:\n  - {name: a, params: 1e9, tokens_per_second: 1e5, gpus: 8}\n"
    (fence,) = fences(f"```mfu-table\n{body}```\n")
    with pytest.raises(InputError, match="p.md:3: job 'a' needs exactly one of 'preset' and 'peak_tflops'"):
        directives.parse_mfu_table(fence, "p.md", KNOWN)


def test_inline_figures_skip_code_spans_and_find_lines():
    segment = directives.Segment("a `{{ ridge h100 }}` b\nc {{ ridge h100 }} $x^2$ and ``$y$``\n", 10)
    items = list(directives.find_inline(segment, "p.md"))
    assert [(i.kind, i.body, i.line) for i in items] == [("figure", " ridge h100 ", 11), ("math", "x^2", 11)]


def test_block_math_and_unclosed_block():
    segment = directives.Segment("text\n$$\na + b\n$$\nafter\n", 1)
    (item,) = directives.find_inline(segment, "p.md")
    assert item.kind == "block-math" and item.body == "a + b\n" and item.line == 2
    with pytest.raises(InputError, match=r"^p\.md:2: '\$\$' math block is never closed"):
        list(directives.find_inline(directives.Segment("x\n$$\na\n", 1), "p.md"))


def test_dollar_amounts_are_not_math():
    segment = directives.Segment("It cost $5 and $6 in 2020, or \\$7.\n", 1)
    assert list(directives.find_inline(segment, "p.md")) == []


def test_figures_come_from_the_core():
    h100 = PRESETS["h100"]
    assert figures.evaluate("ridge h100", PRESETS) == "295 FLOP/byte"
    assert figures.evaluate("ridge h100 sparse", PRESETS) == units.intensity(2 * h100.ridge_flop_per_byte())
    assert figures.evaluate("ridge b200", PRESETS) == "281 FLOP/byte"
    assert figures.evaluate("peak b200", PRESETS) == "2.25 PFLOP/s"
    assert figures.evaluate("bandwidth b200", PRESETS) == "8 TB/s"
    assert figures.evaluate("bus-factor all-reduce ranks=4", PRESETS) == "1.5"
    assert figures.evaluate("bus-factor all-gather", PRESETS) == "0.75"
    palm = "params=540e9 tokens_per_second=238.3e3 gpus=6144 peak_tflops=275 layers=118 heads=48 head_dim=256 seq_len=2048"
    assert figures.evaluate(f"mfu {palm}", PRESETS) == "46.2 %"
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
        ("ridge h100 dense", "'ridge' does not take 'dense'"),
        ("teraflops h100", "unknown inline figure 'teraflops'"),
        ("mfu params=1e9 tokens_per_second=1e5 gpus=8", "needs exactly one of preset= and peak_tflops="),
        ("mfu params=-1 tokens_per_second=1e5 gpus=8 peak_tflops=100", "params= must be a finite number > 0"),
        ("mfu params=1e9 tokens_per_second=nan gpus=8 peak_tflops=100", "tokens_per_second= must be a finite number > 0"),
        ("bus-factor all-reduce ranks=0", "ranks= must be a whole number >= 1"),
        ("intensity gemm:0x1x1", "kernel spec .gemm:0x1x1.: dimension M must be >= 1: 0"),
    ],
)
def test_bad_inline_figures(body, message):
    with pytest.raises(InputError, match=message):
        figures.evaluate(body, PRESETS)


def test_markdown_text_is_inert():
    assert figures.markdown_text("<b>*x*</b> & [y](z)") == "&lt;b&gt;\\*x\\*&lt;/b&gt; &amp; \\[y\\]\\(z\\)"


def test_math_becomes_mathml_and_bad_math_is_an_error():
    assert figures.mathml("a < b", block=False).startswith("<math")
    assert 'display="block"' in figures.mathml(r"\frac{1}{2}", block=True)
    with pytest.raises(InputError, match="could not be converted"):
        figures.mathml(r"\frac{1}{", block=True)
