"""The mistakes an author makes, caught by a real ``mkdocs build --strict`` at the line they are on.

Each case is a small fixture project (its own presets, its own render cache) with one
mistake; the build must stop with exactly one ``ERROR`` line naming the page, the line the
mistake is on (front matter counted) and what was likely meant, and no traceback. The
same mistakes shown as code (an indented block, a longer fence) must build.
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest
import yaml

from ainotes.base.errors import InputError
from ainotes.build.site import NotesSite
from ainotes.markdown.extension import convert_page
from sitebuild import REPO, make_fixture, run_build

pytestmark = pytest.mark.build

LINK = """\
name: Test link
bandwidth_gbps: 100
latency_us: 2
sources:
  - {title: Sheet, url: "https://example.com/link"}
"""
FRONT = "---\ntitle: A page with front matter\nsummary: three lines of it\n---\n"  # 4 lines


def _page(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def _project(root: Path, pages: dict[str, str], *, validation: bool = False) -> Path:
    project = make_fixture(root, pages)
    (project / "presets" / "links").mkdir()
    (project / "presets" / "links" / "test-link.yaml").write_text(LINK, encoding="utf-8")
    if validation:  # the repository's own link checks, as its mkdocs.yml writes them
        config = (REPO / "mkdocs.yml").read_text(encoding="utf-8")
        block = re.search(r"^validation:\n(?:[ #].*\n)+", config, re.M)
        assert block is not None, "mkdocs.yml has no validation section"
        (project / "mkdocs.yml").write_text((project / "mkdocs.yml").read_text() + block.group(0), encoding="utf-8")
    return project


@pytest.fixture
def build(tmp_path):
    def run(pages: dict[str, str], *, validation: bool = False):
        project = _project(tmp_path / "project", pages, validation=validation)
        cache = {"AINOTES_CACHE_DIR": str(tmp_path / "render"), "AINOTES_SHARED_CACHE_DIR": str(tmp_path / "shared"),
                 "AINOTES_SITE_URL": "https://notes.example/"}  # a published address: no site_url warning
        return run_build(project, env=cache)
    return run


def _errors(output: str) -> list[str]:
    return [line.split("-  ", 1)[1] for line in output.splitlines()
            if line.startswith("ERROR") and "Error reading page" not in line]


MISTAKES = [
    pytest.param(
        {"index.md": FRONT + _page("""
            # Costs

            Text.

            ```colective-cost
            op: all-reduce
            link: test-link
            ```
            """)},
        "index.md:9: 'colective-cost' is not a fence kind: did you mean 'collective-cost'?",
        id="misspelt-fence-after-front-matter",
    ),
    pytest.param(
        {"notes/roof.md": _page("""
            # Roof

            !!! note "A chart in a note"

                ```roofine
                presets: [h100]
                ```
            """)},
        "notes/roof.md:5: 'roofine' is not a fence kind: did you mean 'roofline'?",
        id="misspelt-fence-in-an-admonition",
    ),
    pytest.param(
        {"index.md": FRONT + _page("""
            # Ridge

            The ridge of the test GPU
            is {{ ridge h100 }, which the chart shows.
            """)},
        "index.md:8: inline figure '{{ ridge h100 }' is not closed: write '{{ ridge h100 }}'",
        id="unclosed-form-one-brace",
    ),
    pytest.param(
        {"index.md": _page("""
            # Ridge

            Its ridge is {{ ridge h100
            and the rest of the paragraph.
            """)},
        "index.md:3: inline figure '{{ ridge h100' is not closed: end it with '}}' on the same line",
        id="unclosed-form-at-end-of-line",
    ),
    pytest.param(
        {"index.md": FRONT + _page("""
            # Kernels

            ```python
            # another fence before ours, with a blank line

            x = 1
            ```

            Some prose between the two fences, over
            two lines.

            ```roofline
            presets: [h100]
            title: Kernels on the test GPU
            sparsity: false
            id: kernels
            kernels:
              - gemm:4096x4096x4096:bf16
              - {spec: "add:16777216:bf16", label: residual add
              - gemm:1024x1024x1024:bf16
            precision: bf16
            ```
            """)},
        # The flow mapping on line 23 lacks its "}"; YAML notices two lines later.
        "index.md:23: roofline fence body is not valid YAML: a '[' or '{' that is never closed",
        id="missing-brace-line-23",
    ),
    pytest.param(
        {"index.md": _page("""
            # Kernels

            ```roofline
            presets: [h100
            title: Still inside the list
            ```
            """)},
        "index.md:4: roofline fence body is not valid YAML: a '[' or '{' that is never closed",
        id="missing-bracket",
    ),
    pytest.param(
        {"index.md": _page("""
            # Kernels

            ```roofline
            title: "an unclosed quote
            presets: [h100]
            sparsity: true
            ```
            """)},
        "index.md:4: roofline fence body is not valid YAML: a quote that is never closed",
        id="unclosed-quote",
    ),
    pytest.param(
        {"index.md": _page("""
            # Kernels

            ```roofline
            title: Kernels
            presets
            sparsity: true
            ```
            """)},
        "index.md:5: roofline fence body is not valid YAML: a key without ':'",
        id="key-without-colon",
    ),
    pytest.param(
        {"index.md": _page("""
            # Kernels

            ```roofline
            presets: [h100]
            kernels:
              - gemm:64x64x64
              - gemm:64x0x64
            ```
            """)},
        "index.md:7: kernel spec 'gemm:64x0x64': dimension N must be >= 1: 0",
        id="bad-kernel-in-a-list",
    ),
    pytest.param(
        {"index.md": _page("""
            # Chart

            > ```roofline colour=red
            > presets: [h100]
            > ```
            """)},
        "index.md:3: a roofline fence takes its settings in its body, not after its name: colour=red",
        id="header-after-the-name",
    ),
    pytest.param(
        {"index.md": _page("""
            # Chart

            ```collective
            op: all-reduce
            """)},
        "index.md:3: this collective fence is never closed: end it with a line of ```",
        id="fence-never-closed",
    ),
    pytest.param(
        {"index.md": _page("""
            # Bus factors

            Nine ranks: {{ bus-factor all-reduce ranks=9 }}.
            Too many: {{ bus-factor all-reduce ranks=1025 }}.
            """)},
        "index.md:4: ranks= must be a whole number from 2 to 1024: '1025'",
        id="bus-factor-beyond-the-cost-model",
    ),
    pytest.param(
        {"index.md": "---\ntitle: A page with front matter\n summary: one key indented a space too far\n---\n"
                     "# Front matter\n"},
        "index.md:3: front matter is not valid YAML: a 'key: value' where a plain value was expected: this line is "
        "indented under a value",
        id="front-matter-indented",
    ),
    pytest.param(
        {"index.md": _page("""
            # Cost

            ```collective-cost
            op: all-reduce
            ranks: 48
            link: test-link
              title: one key indented under another
            ```
            """)},
        "index.md:7: collective-cost fence body is not valid YAML: a 'key: value' where a plain value was expected",
        id="fence-body-indented",
    ),
]


@pytest.mark.parametrize(("pages", "message"), MISTAKES)
def test_mistake_stops_the_strict_build_at_its_line(build, pages, message):
    result = build(pages)
    assert result.returncode != 0
    errors = _errors(result.output)
    assert len(errors) == 1 and errors[0].startswith(message), result.output
    assert "Traceback" not in result.output


AS_CODE = _page("""
    # Examples of mistakes, shown as code

        ```roofine
        presets: [nope
        ```

    ````markdown
    ```colective-cost
    op: all-reduce
    ```

    Ridge {{ ridge h100 }
    ````

    Inline code keeps `{{ ridge h100 }` and `` ```roofline colour=red `` as written.

    ```text
    ```roofline colour=red
    ```
    """)


def test_a_broken_model_file_is_told_at_its_own_line_not_the_page_that_loaded_it(tmp_path):
    project = _project(tmp_path / "project", {"index.md": "# Models\n\nWords.\n\n{{ params lab-70b }}\n"})
    (project / "presets" / "models").mkdir()
    model = (Path(__file__).parent / "fixtures" / "inference" / "models" / "lab-70b.yaml").read_text(encoding="utf-8")
    assert "vocab: 128256" in model
    (project / "presets" / "models" / "lab-70b.yaml").write_text(model.replace("vocab: 128256", "vocab: 128256x"),
                                                                  encoding="utf-8")
    result = run_build(project, env={"AINOTES_CACHE_DIR": str(tmp_path / "render"),
                                     "AINOTES_SITE_URL": "https://notes.example/"})
    assert result.returncode != 0 and "Traceback" not in result.output
    errors = _errors(result.output)
    model_file = project / "presets" / "models" / "lab-70b.yaml"
    assert errors == [f"{model_file}:9: 'vocab' must be a whole number, not a string: '128256x'"], result.output


def test_mistakes_shown_as_code_build(build):
    result = build({"index.md": AS_CODE})
    assert result.returncode == 0, result.output
    page = (result.site / "index.html").read_text(encoding="utf-8")
    assert "```roofine" in page and "```colective-cost" in page and "{{ ridge h100 }" in page


def test_bus_factor_takes_the_ranks_collective_time_takes(build):
    """``bus-factor`` at 9 and 1,024 ranks, as ``collective-time`` takes them; 2(n−1)/n for all-reduce."""
    page = _page("""
        # Ranks

        Nine: {{ bus-factor all-reduce ranks=9 }}; a thousand and twenty-four:
        {{ bus-factor all-gather ranks=1024 }}; the time at 1,024:
        {{ collective-time all-reduce ranks=1024 bytes=1e9 link=test-link }}.
        """)
    result = build({"index.md": page})
    assert result.returncode == 0, result.output
    text = (result.site / "index.html").read_text(encoding="utf-8")
    assert "Nine: 1.78;" in text  # all-reduce 2(n−1)/n = 16/9
    assert "\n0.999; the time" in text  # all-gather (n−1)/n = 1023/1024


def test_the_two_forms_refuse_a_rank_count_alike():
    site = NotesSite(REPO / "presets")
    messages = []
    for form in ("bus-factor all-reduce ranks=2048", "collective-time all-reduce ranks=2048 bytes=1e6 link=nvlink-4"):
        with pytest.raises(InputError) as info:
            convert_page(site, f"{{{{ {form} }}}}\n", "p.md", "p/")
        messages.append(str(info.value))
    assert messages[0] == messages[1] == "p.md:1: ranks= must be a whole number from 2 to 1024: '2048'"


@pytest.mark.parametrize(
    ("link", "expected"),
    [
        ("[the other page](other.md#no-such-part)", "the doc 'other.md' does not contain an anchor '#no-such-part'"),
        ("[a page](gone.md)", "contains a link 'gone.md', but the target is not found"),
        ("[here](#nowhere)", "contains a link '#nowhere', but there is no such anchor on this page"),
    ],
    ids=["missing-anchor", "missing-page", "missing-anchor-here"],
)
def test_link_to_a_missing_page_or_anchor_fails_strict(build, link, expected):
    result = build({"index.md": f"# Home\n\nSee {link}.\n", "other.md": "# Other\n\n## A real part\n"}, validation=True)
    assert result.returncode != 0
    warnings = [line for line in result.output.splitlines() if line.startswith("WARNING")]
    assert len(warnings) == 1 and "Doc file 'index.md'" in warnings[0] and expected in warnings[0], result.output


def test_links_that_exist_pass_the_same_checks(build):
    page = "# Home\n\nSee [the part](other.md#a-real-part), [the page](other.md) and [up](#home).\n"
    result = build({"index.md": page, "other.md": "# Other\n\n## A real part\n"}, validation=True)
    assert result.returncode == 0, result.output


def test_the_validation_section_is_what_mkdocs_reads():
    class Loader(yaml.SafeLoader):
        pass

    Loader.add_constructor("!ENV", lambda loader, node: "x")
    config = yaml.load((REPO / "mkdocs.yml").read_text(encoding="utf-8"), Loader=Loader)
    links = config["validation"]["links"]
    assert links["not_found"] == links["anchors"] == links["unrecognized_links"] == "warn"
