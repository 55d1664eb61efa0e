"""Hostile input: whatever an author writes in a fence or a preset file, the pipeline either
renders it or refuses it with one clear line, and user text never becomes markup.

For every generated case, the Markdown extension (:func:`ainotes.markdown.extension.convert_page`, no
MkDocs, so thousands of cases stay affordable) converts a page holding the fence. The outcome is either HTML, or an
:class:`~ainotes.base.errors.InputError` whose message is one line starting with ``page.md:<line>``
(a preset: naming the file). Any other exception, or a case that runs past the watchdog,
fails the test.

Two tiers: ``QUICK_EXAMPLES`` per property in every ``make test`` (``make test-fast`` sets
``AINOTES_QUICK_EXAMPLES`` lower); ``SLOW_EXAMPLES`` (marked
``slow``) only with ``pytest -m slow`` or ``AINOTES_SLOW=1`` (``python -m bench
--slow-hypothesis`` runs them). Strategies lean towards what validation has to catch (wrong
types, huge numbers, NaN, unknown keys, markup) rather than towards many valid charts, which
cost a render each.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator
from html.parser import HTMLParser
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ainotes.base.errors import InputError
from ainotes.build.site import NotesSite
from ainotes.core.collectives import OPS
from ainotes.core.kernels import DTYPE_BYTES
from ainotes.markdown.extension import convert_page, locate_fences
from preset_support import FIXTURE_PRESETS, without_line
from sitebuild import H100, make_fixture, run_build

PAGE = "page.md"
PAGE_URL = "page/"
QUICK_EXAMPLES = int(os.environ.get("AINOTES_QUICK_EXAMPLES", "50"))  # make test-fast: fewer
SLOW_EXAMPLES = 1000
WATCHDOG_S = 60  # one case (a page, or a preset plus a page) far past this is a hang, not slowness
# A message is for a person: a value shown in it must be shortened, never dumped whole.
MAX_MESSAGE_CHARS = 1000

_COMMON = {
    # Renders are seconds at worst on a loaded machine; a hang is caught by the watchdog.
    "deadline": dt.timedelta(seconds=30),
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
}
QUICK = settings(max_examples=QUICK_EXAMPLES, **_COMMON)
SLOW = settings(max_examples=SLOW_EXAMPLES, **_COMMON)


def _slow_tier_requested(config: pytest.Config) -> bool:
    expression = config.getoption("markexpr") or ""
    return os.environ.get("AINOTES_SLOW") == "1" or bool(re.search(r"(?<!not )\bslow\b", expression))


@pytest.fixture(autouse=True)
def _slow_tier_only_on_request(request):
    if request.node.get_closest_marker("slow") and not _slow_tier_requested(request.config):
        pytest.skip("slow hypothesis tier: run with `pytest -m slow` or AINOTES_SLOW=1")


@pytest.fixture(scope="module", autouse=True)
def _private_render_cache(tmp_path_factory):
    """Thousands of hostile titles must not land in the user's render cache."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("AINOTES_CACHE_DIR", str(tmp_path_factory.mktemp("render-cache")))
        yield


@pytest.fixture(scope="module")
def site() -> NotesSite:
    return NotesSite(FIXTURE_PRESETS)  # the hostile pages name h100; the fixture always has it


class HangError(Exception):
    pass


@contextlib.contextmanager
def watchdog(seconds: int = WATCHDOG_S) -> Iterator[None]:
    """Raise :class:`Hang` if the block runs past ``seconds`` (SIGALRM; Python code only)."""

    def expire(signum, frame):
        raise HangError(f"no result after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


# --------------------------------------------------------------------------
# What counts as a good outcome


def assert_page_line_message(message: str, markdown: str) -> None:
    assert len(message.splitlines()) == 1, f"not one line: {message!r}"
    match = re.match(rf"^{re.escape(PAGE)}:(\d+): \S", message)
    assert match, f"does not start with {PAGE}:<line>: {message[:300]!r}"
    assert 1 <= int(match.group(1)) <= markdown.count("\n") + 1, message[:300]


def process(site: NotesSite, markdown: str) -> str | None:
    """The page's HTML, or None when refused with a good one-line message (asserted here)."""
    try:
        with watchdog():
            return convert_page(site, markdown, PAGE, PAGE_URL)
    except InputError as exc:
        assert_page_line_message(str(exc), markdown)
        return None


def page_with_fence(kind: str, body: str) -> str:
    if not body.endswith("\n"):
        body += "\n"
    return f"# Hostile input\n\nSome prose first.\n\n```{kind}\n{body}```\n\nSome prose after.\n"


def dump(data: object) -> str:
    return yaml.safe_dump(data, allow_unicode=True, sort_keys=False, default_flow_style=None, width=10_000)


# --------------------------------------------------------------------------
# Markup that must come out inert


MARKER = "PWNED"
MARKUP = (
    f"</script><script>alert('{MARKER}')</script>",
    f"<img src=x onerror=alert('{MARKER}')>",
    f"<svg onload=alert('{MARKER}')>",
    f"\" onmouseover=\"alert('{MARKER}')\" x=\"",
    f"' onfocus='alert(`{MARKER}`)' autofocus x='",
    f"<!--{MARKER}-->",
    f"]]><{MARKER}/><![CDATA[",
    f"&lt;b&gt;{MARKER}&amp;",
    f"{{{{ ridge h100 }}}} $x$ {MARKER}",
    f"\u2028{MARKER}\u2029",
)
# These hold '<': they must never appear verbatim in HTML, SVG, JSON-in-<script> or a standalone
# page (each context escapes '<' its own way). Strings without '<' can be legitimately verbatim,
# e.g. a '"' inside SVG text, so quotes are checked by parsing instead.
MARKUP_WITH_TAGS = tuple(m for m in MARKUP if "<" in m)


class _Tags(HTMLParser):
    """Start tags and attribute names, and the text of every <script> and <template>.

    A chart's spec travels as JSON either in ``<script type="application/json">`` or in an
    inert ``<template>`` (which Material's instant navigation does not re-run as script).
    """

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.blocks: list[tuple[str, dict[str, str | None], str]] = []  # (script|template, attrs, text)
        self._open: str | None = None

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag in ("script", "template"):
            self._open = tag
            self.blocks.append((tag, dict(attrs), ""))

    def handle_data(self, data):
        if self._open is not None:
            tag, attrs, text = self.blocks[-1]
            self.blocks[-1] = (tag, attrs, text + data)

    def handle_endtag(self, tag):
        if tag == self._open:
            self._open = None


def assert_inert_html(html_text: str, where: str) -> list[object]:
    """No user markup became markup; returns the parsed JSON of every JSON <script> or <template>."""
    for markup in MARKUP_WITH_TAGS:
        assert markup not in html_text, f"{where}: raw user markup {markup!r}"
    parser = _Tags()
    parser.feed(html_text)
    parser.close()
    for tag, attrs in parser.tags:
        assert tag not in ("img", MARKER.lower()), f"{where}: user text made an <{tag}> element"
        handlers = [name for name in attrs if name.startswith("on")]
        assert not handlers, f"{where}: <{tag}> has event handler attributes {handlers}"
        assert "autofocus" not in attrs, f"{where}: user text added an attribute to <{tag}>"
    data = []
    for tag, attrs, text in parser.blocks:
        if tag == "script" and attrs.get("src"):
            continue
        if "json" in (attrs.get("type") or "") or (tag == "template" and text.lstrip()[:1] in ("{", "[")):
            data.append(json.loads(text))
        elif tag == "script":
            assert MARKER not in text, f"{where}: user text inside an executable <script>"
    return data


def assert_inert_svg(svg_text: str, where: str) -> None:
    for markup in MARKUP_WITH_TAGS:
        assert markup not in svg_text, f"{where}: raw user markup {markup!r}"
    root = ET.fromstring(svg_text.encode("utf-8"))  # well-formed XML with the hostile text inside
    for element in root.iter():
        name = element.tag.rsplit("}", 1)[-1]
        assert name != "script", f"{where}: <script> in an SVG"
        assert not [a for a in element.attrib if a.rsplit("}", 1)[-1].startswith("on")], f"{where}: handler on <{name}>"


def strings_in(value: object) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from strings_in(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings_in(item)


def assert_chart_files_inert(site: NotesSite, texts: list[str]) -> None:
    """Every embed file of every chart on the page: SVG parses, standalone page and JSON are inert."""
    charts = [c for c in site.charts.values() if c.page_src == PAGE]
    assert charts
    for chart in charts:
        for kind, make in chart.files.items():
            where = f"{chart.chart_id} {kind}"
            content = make()
            if kind == "png":
                assert content.startswith(b"\x89PNG"), where
            elif kind in ("svg", "svg-dark"):
                assert_inert_svg(content, where)
            elif kind == "html":
                assert_inert_html(content, where)
            elif kind == "json":
                data = json.loads(content)  # a .json file: user text may be verbatim, but it must parse
                assert any(t in s for t in texts for s in strings_in(data)), where


# --------------------------------------------------------------------------
# Strategies

MARKUP_TEXT = st.sampled_from(MARKUP)
# Characters XML 1.0 cannot hold (C0 controls, lone surrogates, U+FFFE, U+FFFF) make vl-convert
# abort the whole interpreter, which no in-process test survives: they are tested in a
# subprocess by test_text_that_svg_cannot_hold_is_refused_not_a_crash instead.
XML_UNSAFE = "".join(chr(c) for c in range(32) if chr(c) not in "\t\n\r") + "\ufffe\uffff"
ANY_TEXT = st.text(alphabet=st.characters(exclude_categories=("Cs",), exclude_characters=XML_UNSAFE), max_size=60)
HOSTILE_TEXT = st.one_of(MARKUP_TEXT, ANY_TEXT, st.just(""), st.just(" "), st.just("x" * 200),
                         st.just("line one\nline two"))
NUMBER_LIKE = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(min_value=-(2**80), max_value=2**80),
    st.sampled_from([0, -1, 1, 2**31, 2**31 + 1, 2**63, 1e308, 5e-324, -0.0,
                     "1e9", "nan", "inf", "-inf", "0x10", "1_000", "12 GPUs", ""]),
)
SCALAR = st.one_of(st.none(), st.booleans(), NUMBER_LIKE, HOSTILE_TEXT)
VALUE = st.recursive(
    SCALAR,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)
PRESET_IDS = tuple(sorted(p.stem for p in FIXTURE_PRESETS.glob("*.yaml")))
PRESET_LIST = st.one_of(
    st.just("all"),
    st.lists(st.sampled_from((*PRESET_IDS, "nope", "H100", "<b>x</b>", "")), max_size=4),
    st.lists(st.sampled_from(PRESET_IDS), min_size=17, max_size=18),
    VALUE,
)
DIMENSION = st.one_of(st.integers(min_value=1, max_value=2**31),
                      st.sampled_from([0, -1, 2**31 + 1, 2**64, 10**30]),
                      st.sampled_from(["1.5", "x", "", "1e3", "08"]))
DIMS_PER_KIND = {"gemm": 3, "add": 1, "softmax": 2, "layernorm": 2, "attention": 4, "attention-naive": 4}


@st.composite
def kernel_spec(draw) -> str:
    kind = draw(st.sampled_from((*DIMS_PER_KIND, "conv", "GEMM", "")))
    count = DIMS_PER_KIND.get(kind, 2)
    if draw(st.integers(0, 9)) == 0:
        count = draw(st.integers(0, 5))  # the wrong number of dimensions now and then
    dims = "x".join(str(draw(DIMENSION)) for _ in range(count))
    dtype = draw(st.sampled_from((*DTYPE_BYTES, "int4", "BF16", None)))
    return f"{kind}:{dims}" + (f":{dtype}" if dtype is not None else "")


KERNEL_ITEM = st.one_of(
    kernel_spec(),
    st.fixed_dictionaries({"spec": kernel_spec()}, optional={"label": st.one_of(HOSTILE_TEXT, VALUE)}),
    st.fixed_dictionaries({"spec": kernel_spec(), "colour": VALUE}),
    VALUE,
)
KERNELS = st.one_of(st.lists(KERNEL_ITEM, max_size=3), st.lists(kernel_spec(), min_size=13, max_size=13), VALUE)
CHART_ID = st.one_of(st.from_regex(r"[a-z0-9]{1,8}(-[a-z0-9]{1,8}){0,2}", fullmatch=True),
                     st.sampled_from(["Bad_ID", "-x", "x--y", "a" * 65, "roofline"]), VALUE)
UNKNOWN_KEYS = st.one_of(st.just({}), st.just({}), st.dictionaries(st.text(min_size=1, max_size=12), VALUE, max_size=2))


def body_of(required: dict, optional: dict) -> st.SearchStrategy[str]:
    """YAML text of a mapping with these keys (now and then unknown ones), or plain garbage."""
    mapping = st.tuples(st.fixed_dictionaries(required, optional=optional), UNKNOWN_KEYS).map(
        lambda pair: {**pair[1], **pair[0]}
    )
    garbage = st.one_of(
        st.text(max_size=200),
        st.sampled_from([
            "[", "{a: 1", "- just\n- a list\n", "just text", "123", "~", "!!python/object:os.system ls\n",
            "a: &x [*x]\n", "key: value\nkey: again\n", "\t- tab", "? complex\n: key\n", "---\n...\n---\n",
            "```\n", "{{ ridge h100 }}", "$$\n", "x" * 20_001,
        ]),
        VALUE.map(dump),
    )
    return st.one_of(mapping.map(dump), mapping.map(dump), garbage)


ROOFLINE_BODY = body_of({}, {"presets": PRESET_LIST, "sparsity": st.one_of(st.booleans(), VALUE),
                             "kernels": KERNELS, "title": st.one_of(HOSTILE_TEXT, VALUE), "id": CHART_ID})
COLLECTIVE_BODY = body_of(
    {"op": st.one_of(st.sampled_from(OPS), st.sampled_from(["all-sum", "ALL-REDUCE", "gather", ""]), VALUE)},
    {"ranks": st.one_of(st.integers(-3, 12), NUMBER_LIKE, VALUE), "root": st.one_of(st.integers(-2, 9), VALUE),
     "id": CHART_ID},
)
PRESETS_TABLE_BODY = body_of({}, {"presets": PRESET_LIST})
KERNELS_TABLE_BODY = body_of({"kernels": KERNELS}, {"presets": PRESET_LIST})
JOB = st.fixed_dictionaries(
    {"name": st.one_of(HOSTILE_TEXT, VALUE), "params": NUMBER_LIKE, "tokens_per_second": NUMBER_LIKE,
     "gpus": NUMBER_LIKE},
    optional={"preset": st.one_of(st.sampled_from((*PRESET_IDS, "nope")), VALUE), "peak_tflops": NUMBER_LIKE,
              "layers": NUMBER_LIKE, "heads": NUMBER_LIKE, "head_dim": NUMBER_LIKE, "seq_len": NUMBER_LIKE,
              "recompute": st.one_of(st.sampled_from(["none", "selective", "full", "some"]), VALUE),
              "colour": VALUE},
)
MFU_TABLE_BODY = body_of({"jobs": st.one_of(st.lists(JOB, max_size=3), st.lists(JOB, min_size=21, max_size=21),
                                             VALUE)}, {})
FENCE_BODIES = {
    "roofline": ROOFLINE_BODY,
    "collective": COLLECTIVE_BODY,
    "presets-table": PRESETS_TABLE_BODY,
    "mfu-table": MFU_TABLE_BODY,
    "kernels-table": KERNELS_TABLE_BODY,
}


def check_fence(site: NotesSite, kind: str, body: str) -> None:
    markdown = page_with_fence(kind, body)
    html_text = process(site, markdown)
    if html_text is None:
        return
    fences = locate_fences(markdown)
    if len(fences) == 1 and fences[0].body == (body if body.endswith("\n") else body + "\n"):
        # The fence is whole (a body line of backticks can end it early and leave author
        # Markdown, raw HTML included, in the page, which is the author's to write).
        assert_inert_html(html_text, f"{kind} fence")


def _tiers(kind: str) -> tuple[Callable, Callable]:
    strategy = FENCE_BODIES[kind]

    @QUICK
    @given(body=strategy)
    def quick(site, body):
        check_fence(site, kind, body)

    @pytest.mark.slow
    @SLOW
    @given(body=strategy)
    def slow(site, body):
        check_fence(site, kind, body)

    return quick, slow


test_roofline_fence, test_roofline_fence_slow = _tiers("roofline")
test_collective_fence, test_collective_fence_slow = _tiers("collective")
test_presets_table_fence, test_presets_table_fence_slow = _tiers("presets-table")
test_mfu_table_fence, test_mfu_table_fence_slow = _tiers("mfu-table")
test_kernels_table_fence, test_kernels_table_fence_slow = _tiers("kernels-table")


# --------------------------------------------------------------------------
# Preset files

VALID_PRESET = {
    "name": "Test GPU",
    "dense_fp16_tflops": 100.0,
    "memory_bandwidth_tbps": 1.0,
    "sources": [{"title": "Sheet", "url": "https://example.com/sheet"}],
}
PRESET_FIELDS = {
    "name": st.one_of(HOSTILE_TEXT, VALUE),
    "dense_fp16_tflops": st.one_of(st.floats(min_value=1e-300, max_value=1e308), NUMBER_LIKE),
    "memory_bandwidth_tbps": st.one_of(st.floats(min_value=1e-300, max_value=1e308), NUMBER_LIKE),
    "structured_sparsity": st.one_of(st.booleans(), VALUE),
    "sources": st.one_of(
        st.lists(st.fixed_dictionaries(
            {"title": st.one_of(HOSTILE_TEXT, VALUE),
             "url": st.one_of(st.sampled_from(["https://example.com/a?b=1&c=<d>", "javascript:alert(1)",
                                               "JAVASCRIPT:alert(1)", " https://x.org", "http://", "ftp://x.org/f",
                                               "data:text/html,<script>alert(1)</script>",
                                               f"https://example.com/\"><script>alert('{MARKER}')</script>"]),
                              HOSTILE_TEXT, VALUE)}),
            max_size=2),
        VALUE),
    "gpu_count": st.one_of(st.integers(-1, 16), NUMBER_LIKE),
    "system_dense_fp16_tflops": NUMBER_LIKE,
    "system_memory_bandwidth_tbps": NUMBER_LIKE,
    "system": st.one_of(HOSTILE_TEXT, VALUE),
    "variant": st.one_of(HOSTILE_TEXT, VALUE),
    "notes": st.one_of(HOSTILE_TEXT, VALUE),
}


@st.composite
def preset_file(draw) -> tuple[str, str]:
    """(file stem, file text): a valid preset with a few fields replaced, dropped or added, or garbage."""
    stem = draw(st.one_of(st.sampled_from(["gpu", "h100", "rtx-4090"]),
                          st.sampled_from(["GPU", "my_gpu", "-gpu", "gpu--x", "gpu.v2", "ü"])))
    if draw(st.integers(0, 9)) == 0:
        return stem, draw(st.one_of(st.text(max_size=200), st.sampled_from(["", "- a\n- b\n", "[", "a: 1\na: 2\n"])))
    data = dict(VALID_PRESET)
    for key in draw(st.lists(st.sampled_from(sorted(PRESET_FIELDS)), max_size=3, unique=True)):
        data[key] = draw(PRESET_FIELDS[key])
    for key in draw(st.lists(st.sampled_from(sorted(data)), max_size=1)):
        del data[key]
    data.update(draw(UNKNOWN_KEYS))
    return stem, dump(data)


PRESET_PAGE = (
    "# Presets\n\n{{{{ name {id} }}}}: {{{{ peak {id} sparse }}}}, {{{{ bandwidth {id} }}}}, "
    "ridge {{{{ ridge {id} }}}}; a GEMM is {{{{ bound {id} gemm:4096x4096x4096 }}}}-bound.\n\n"
    "```presets-table\n```\n\n"
    "```kernels-table\nkernels: [gemm:4096x4096x4096, add:1024]\npresets: [{id}]\n```\n\n"
    "```mfu-table\njobs:\n  - {{name: job, params: 7e9, tokens_per_second: 1e4, gpus: 8, preset: {id}}}\n```\n"
)


def check_preset(stem: str, text: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"{stem}.yaml"
        path.write_text(text, encoding="utf-8")
        try:
            with watchdog():
                site = NotesSite(tmp)
        except InputError as exc:
            message = str(exc)
            assert len(message.splitlines()) == 1, f"not one line: {message!r}"
            assert message.startswith(f"{path}:"), f"does not name the file: {message[:300]!r}"
            return
        markdown = PRESET_PAGE.format(id=stem)
        html_text = process(site, markdown)
        if html_text is not None:
            assert_inert_html(html_text, "preset page")


@QUICK
@given(case=preset_file())
def test_preset_file(case):
    check_preset(*case)


@pytest.mark.slow
@SLOW
@given(case=preset_file())
def test_preset_file_slow(case):
    check_preset(*case)


# --------------------------------------------------------------------------
# Fixed cases: markup in every user string, refused URLs, extreme figures


def hostile_preset(name: str, source_title: str, url: str) -> str:
    return dump({**VALID_PRESET, "name": name, "structured_sparsity": True,
                 "sources": [{"title": source_title, "url": url}]})


USER_FIELDS = ("preset_name", "source_title", "source_url", "kernel_label", "chart_title", "job_name")
# Every field gets the script break-out and both quote break-outs; the other strings are dealt round.
MARKUP_CASES = {
    "script": dict.fromkeys(USER_FIELDS, MARKUP[0]),
    "double-quote": dict.fromkeys(USER_FIELDS, MARKUP[3]),
    "single-quote": dict.fromkeys(USER_FIELDS, MARKUP[4]),
    "mixed-a": dict(zip(USER_FIELDS, (MARKUP[1], MARKUP[2], MARKUP[5], MARKUP[6], MARKUP[7], MARKUP[8]), strict=True)),
    "mixed-b": dict(zip(USER_FIELDS, (MARKUP[9], MARKUP[8], MARKUP[1], MARKUP[2], MARKUP[6], MARKUP[5]), strict=True)),
}


def _one_line(text: str) -> str:
    return text.replace("\u2028", " ").replace("\u2029", " ").strip()[:120]


@pytest.mark.parametrize("case", sorted(MARKUP_CASES))
def test_markup_in_every_user_string_is_inert(tmp_path, case):
    """Preset name, source title and URL, kernel label, chart title and job name all carry markup;
    the page HTML, the JSON in it, both SVGs and the standalone page stay inert."""
    fields = MARKUP_CASES[case]
    url = "https://example.com/?q=" + "".join(
        ch for ch in fields["source_url"].replace(" ", "%20") if ch not in "\u2028\u2029"
    )
    (tmp_path / "evil.yaml").write_text(
        hostile_preset(fields["preset_name"], fields["source_title"], url), encoding="utf-8"
    )
    site = NotesSite(tmp_path)
    title, label, job = (_one_line(fields[k]) for k in ("chart_title", "kernel_label", "job_name"))
    page = (
        "# Page\n\n{{ name evil }} has ridge {{ ridge evil }}.\n\n"
        f"```roofline\npresets: [evil]\ntitle: {json.dumps(title)}\n"
        f"kernels:\n  - {{spec: 'gemm:4096x4096x4096', label: {json.dumps(label)}}}\n"
        "  - add:1048576:fp16\n```\n\n"
        "```presets-table\n```\n\n"
        f"```mfu-table\njobs:\n  - {{name: {json.dumps(job)}, params: 7e9, tokens_per_second: 1e4, gpus: 8, "
        "preset: evil}\n```\n\n"
        f"```kernels-table\nkernels:\n  - {{spec: 'add:1024', label: {json.dumps(label)}}}\npresets: [evil]\n```\n"
    )
    html_text = process(site, page)
    assert html_text is not None, "a page whose strings are merely odd must render"
    data = assert_inert_html(html_text, "page")
    assert data, "the roofline ships its spec as JSON in the page"
    assert any(title in s for d in data for s in strings_in(d)), "the title survives the JSON round trip"
    assert_chart_files_inert(site, [title, fields["preset_name"]])


@pytest.mark.parametrize("url", ["javascript:alert(1)", "JavaScript:alert(document.domain)",
                                 " javascript:alert(1)", "data:text/html,<script>alert(1)</script>",
                                 "vbscript:msgbox(1)", "//evil.example/x"])
def test_unsafe_source_urls_are_refused_naming_the_file(tmp_path, url):
    path = tmp_path / "evil.yaml"
    path.write_text(hostile_preset("Evil GPU", "Sheet", url), encoding="utf-8")
    with pytest.raises(InputError) as caught:
        NotesSite(tmp_path)
    message = str(caught.value)
    assert len(message.splitlines()) == 1
    assert without_line(message, path).startswith(f"{path}: 'sources[0].url' must be an http or https URL"), message
    assert message != without_line(message, path)  # at the line of the URL


@pytest.mark.parametrize(
    ("dense_fp16_tflops", "memory_bandwidth_tbps"),
    [(1e300, 1.0), (1.0, 1e300), (1e-300, 1.0), (1.0, 5e-324), (1.7e308, 1.7e308)],
)
def test_extreme_but_finite_figures_render_or_are_refused_cleanly(tmp_path, dense_fp16_tflops, memory_bandwidth_tbps):
    """Finite figures whose products overflow (TFLOP/s × 10^12) or underflow must not crash a chart."""
    path = tmp_path / "odd.yaml"
    path.write_text(dump({**VALID_PRESET, "dense_fp16_tflops": dense_fp16_tflops,
                          "memory_bandwidth_tbps": memory_bandwidth_tbps}), encoding="utf-8")
    try:
        site = NotesSite(tmp_path)
    except InputError as exc:
        assert str(exc).startswith(f"{path}:") and len(str(exc).splitlines()) == 1
        return
    page = ("# P\n\nRidge {{ ridge odd }}.\n\n```roofline\nkernels: [gemm:8192x8192x8192]\n```\n\n"
            "```presets-table\n```\n")
    html_text = process(site, page)
    if html_text is not None:
        assert_chart_files_inert(site, ["Test GPU"])


def _alias_bomb(levels: int, width: int = 10) -> str:
    """YAML of ``width ** levels`` leaves in a few hundred characters (anchors and aliases)."""
    value = '["lol"]'
    for level in range(levels):
        value = "[" + ", ".join([f"&l{level} {value}"] + [f"*l{level}"] * (width - 1)) + "]"
    return value


@pytest.mark.parametrize("key", ["title", "presets", "kernels", "sparsity", "id"])
def test_yaml_alias_bomb_in_a_fence_gets_a_short_message(site, key):
    """Aliases let 300 characters stand for 10^6 values; a message must not spell them all out.

    (Three more levels are 10^9 values, gigabytes of message: a hang.)
    """
    markdown = page_with_fence("roofline", f"{key}: {_alias_bomb(6)}\n")
    with pytest.raises(InputError) as caught, watchdog():
        convert_page(site, markdown, PAGE, PAGE_URL)
    message = str(caught.value)
    assert_page_line_message(message, markdown)
    assert len(message) <= MAX_MESSAGE_CHARS, f"{len(message)} characters: {message[:200]}..."


def test_yaml_alias_bomb_in_a_preset_gets_a_short_message(tmp_path):
    path = tmp_path / "bomb.yaml"
    path.write_text(dump(VALID_PRESET).replace("name: Test GPU", f"name: {_alias_bomb(6)}"), encoding="utf-8")
    with pytest.raises(InputError) as caught, watchdog():
        NotesSite(tmp_path)
    message = str(caught.value)
    assert message.startswith(f"{path}:") and len(message.splitlines()) == 1
    assert len(message) <= MAX_MESSAGE_CHARS, f"{len(message)} characters: {message[:200]}..."


_CRASH_PROBE = r"""
import json, sys, tempfile
from pathlib import Path
from ainotes.base.errors import InputError
from ainotes.markdown.extension import convert_page
from ainotes.build.site import NotesSite
place, chars = sys.argv[1], json.loads(sys.argv[2])
presets = sys.argv[3]
for ch in chars:
    text = "odd" + ch + "text"
    print(json.dumps({"trying": ch}), flush=True)
    try:
        folder = presets
        if place == "preset name":
            folder = tempfile.mkdtemp()
            Path(folder, "odd.yaml").write_text(sys.argv[4].replace("NAME", json.dumps(text)), encoding="utf-8")
        site = NotesSite(folder)
        ids = [p.id for p in site.presets][:1]
        fence = {"chart title": f"title: {json.dumps(text)}\n",
                 "kernel label": f"kernels: [{{spec: 'add:1024', label: {json.dumps(text)}}}]\n",
                 "preset name": ""}[place]
        page = f"# P\n\n```roofline\npresets: {json.dumps(ids)}\n{fence}```\n"
        convert_page(site, page, "page.md", "page/")
        for chart in site.charts.values():
            for make in chart.files.values():
                content = make()
                if isinstance(content, str):
                    content.encode("utf-8")  # what writing the file does
        print(json.dumps({"char": ch, "outcome": "rendered"}), flush=True)
    except InputError as exc:
        print(json.dumps({"char": ch, "outcome": "refused", "message": str(exc)}), flush=True)
"""


@pytest.mark.parametrize("place", ["chart title", "kernel label", "preset name"])
def test_text_that_svg_cannot_hold_is_refused_not_a_crash(tmp_path, place):
    """A YAML escape (``"\\x01"``, ``"\\ud800"``) puts characters XML cannot hold into user text.

    Handed to the renderer they abort the interpreter (vl-convert panics on them) or fail to
    encode; they must be refused with the usual one line instead. Run in a subprocess, so an
    abort is a failed test rather than the end of the test run.
    """
    chars = ["\x00", "\x01", "\x08", "\x1b", "\ufffe", "\ud800"]
    preset = dump(VALID_PRESET).replace("name: Test GPU", "name: NAME")
    proc = subprocess.run(
        [sys.executable, "-c", _CRASH_PROBE, place, json.dumps(chars), str(FIXTURE_PRESETS), preset],
        capture_output=True, text=True, timeout=600, check=False,
        env={**os.environ, "AINOTES_CACHE_DIR": str(tmp_path / "cache")},
    )
    results = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    tried = [r["trying"] for r in results if "trying" in r]
    assert proc.returncode == 0, (
        f"{place}: the process died (status {proc.returncode}) while rendering text holding {tried[-1]!r}: "
        + (proc.stderr.strip().splitlines() or ["no output"])[-1][:300]
    )
    for result in (r for r in results if "outcome" in r):
        if result["outcome"] == "refused":
            message = result["message"]
            assert len(message.splitlines()) == 1, message
            assert re.match(r"^(page\.md:\d+|\S*odd\.yaml(:\d+)?): ", message), message


# --------------------------------------------------------------------------
# Whole builds (real MkDocs): one clear line, no traceback, no manifest


def _error_lines(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.startswith("ERROR")]


@pytest.mark.parametrize(
    ("preset", "expected"),
    [
        (H100.format(name="H100", source_title="x", url="https://example.com").replace("3.35", ".nan"),
         "h100.yaml:3: 'memory_bandwidth_tbps' must be a finite number > 0: nan"),
        (H100.format(name="H100", source_title="x", url="javascript:alert(1)"),
         "h100.yaml:7: 'sources[0].url' must be an http or https URL: 'javascript:alert(1)'"),
        (H100.format(name=json.dumps(MARKUP[0]), source_title="x", url="https://example.com") + "colour: red\n",
         "h100.yaml:8: unknown key 'colour'"),
    ],
)
@pytest.mark.build
def test_broken_preset_stops_the_build_with_one_line(tmp_path, preset, expected):
    project = make_fixture(tmp_path, {"index.md": "# Home\n\n```roofline\n```\n"}, {"h100": preset})
    build = run_build(project)
    assert build.returncode != 0
    errors = _error_lines(build.output)
    assert len(errors) == 1 and expected in errors[0], build.output
    assert "Traceback" not in build.output
    assert not (build.site / "embed" / "manifest.json").exists()


@pytest.mark.parametrize(
    ("page", "expected"),
    [
        ("# Home\n\n```roofline\nkernels: [gemm:1x1x99999999999999]\n```\n", "index.md:4: kernel spec"),
        ("# Home\n\nText.\n\n```mfu-table\njobs:\n  - name: \"<script>x</script>\"\n    params: .nan\n"
         "    tokens_per_second: 1\n    gpus: 1\n    preset: h100\n```\n",
         "index.md:8: job '<script>x</script>': 'params' must be a finite number > 0"),
        ("# Home\n\n```collective\nop: all-reduce\nranks: 3\nroot: 5\n```\n",
         "index.md:6: 'root' must be a whole number from 0 to 2: 5"),
    ],
)
@pytest.mark.build
def test_broken_fence_stops_the_build_with_one_line(tmp_path, page, expected):
    project = make_fixture(tmp_path, {"index.md": page})
    build = run_build(project)
    assert build.returncode != 0
    errors = [line for line in _error_lines(build.output) if "Error reading page" not in line]
    assert len(errors) == 1 and expected in errors[0], build.output
    assert "Traceback" not in build.output
    assert not (build.site / "embed" / "manifest.json").exists()
