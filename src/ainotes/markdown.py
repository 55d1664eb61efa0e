"""The page pipeline as a Python-Markdown extension: chart and table fences, inline figures, math.

Declared in ``mkdocs.yml`` as ``ainotes.markdown`` after ``pymdownx.superfences``, it runs
under MkDocs, ProperDocs and Zensical alike (Zensical runs extensions but not hooks).

* Fences: every kind in :data:`ainotes.site.FENCE_KINDS` is registered with
  ``pymdownx.superfences`` as a custom fence, so Markdown decides what is a fence, once:
  a fence in a blockquote, an admonition, a list item, a details or tabbed block is
  drawn; an indented code block, or a fence inside a longer fence, stays code.
* ``{{ form ... }}`` inline figures and ``$...$`` inline math are inline processors
  (below code spans' priority, so code shows them as written); ``$$`` display math is a
  block processor. All output goes through Python-Markdown's own stash.

Page and line. A message names the page and the line. The page comes from whoever
drives the build: ``hooks/notes.py`` announces each page (with the lines of front matter
MkDocs cut off); under Zensical its rendering context names it; otherwise the
extension's ``page`` setting. The fence's line is the one superfences is closing:
superfences' preprocessor passes the fence's first line to ``process_nested_block``,
which this extension wraps to note it before the formatter runs. Inline forms are
found by their text in the page's lines.

Superfences formats a fence before the block parser knows whether it sits in an
indented code block (there superfences puts the source back). So a formatter neither
raises nor registers charts: it keeps its outcome under its stash index, and
:class:`_Settle`, after block parsing, raises the errors and registers the charts of the
fences whose output is really in the page.
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from xml.etree.ElementTree import Element

from markdown import Extension, Markdown, util
from markdown.blockprocessors import BlockProcessor
from markdown.inlinepatterns import InlineProcessor
from markdown.preprocessors import Preprocessor
from markdown.treeprocessors import Treeprocessor

from ainotes import directives, notes_markdown
from ainotes.errors import InputError
from ainotes.site import FENCE_KINDS, Chart, Drawn, NotesSite, Page

# Priorities. Superfences' preprocessor is 25 and Python-Markdown's whitespace
# normaliser 30: the page's lines are read between them. Code spans are 190.
_BEGIN_PRIORITY = 26
_FIGURE_PRIORITY = 186
_MATH_PRIORITY = 185
_BLOCK_MATH_PRIORITY = 75  # after indented code (80), before paragraphs
_SETTLE_PRIORITY = 25  # after the block parser, before inline processing (20)
_SCRIPTS_PRIORITY = 1  # after the table of contents (5), which runs postprocessors on each heading

_FIGURE = r"\{\{([^{}\n]*)\}\}"
# $x$ but not "$5 and $6", "\$", or "$$"; the content neither starts nor ends with a space.
_MATH = r"(?<![\\$\w])\$(?=[^\s$])([^$\n]*?[^\s$\\])\$(?![\w$])"
_CODE_SPAN = re.compile(r"(`+).+?(?<!`)\1(?!`)")

_SITES: dict[Path, tuple[tuple[tuple[str, int], ...], NotesSite]] = {}


def shared_site(presets_dir: str | Path) -> NotesSite:
    """One :class:`NotesSite` per presets folder for this process (builds without hooks),
    loaded again when a preset file changes (``zensical serve``)."""
    folder = Path(presets_dir).resolve()
    stamp = tuple(sorted((p.name, p.stat().st_mtime_ns) for p in folder.glob("*.yaml"))) if folder.is_dir() else ()
    known = _SITES.get(folder)
    if known is None or known[0] != stamp:
        known = _SITES[folder] = (stamp, NotesSite(folder))
    return known[1]


@dataclass
class _PageRun:
    """One conversion of one page."""

    site: NotesSite
    page: Page
    lines: list[str]
    fence_start: int | None = None  # 0-based line of the fence superfences is closing
    fence_end: int | None = None  # 0-based line after its closing line
    pending: dict[int, tuple[int | None, Drawn | BaseException]] = field(default_factory=dict)

    def fail(self, exc: InputError) -> Exception:
        return self.site.error_type(str(exc))

    def line_of(self, text: str) -> int | None:
        """The first line (1-based) holding ``text`` outside code spans, else anywhere."""
        for index, line in enumerate(self.lines):
            if text in _CODE_SPAN.sub("", line):
                return index + 1
        for index, line in enumerate(self.lines):
            if text in line:
                return index + 1
        return None


_RUNS: weakref.WeakKeyDictionary[Markdown, _PageRun] = weakref.WeakKeyDictionary()


class NotesExtension(Extension):
    """``ainotes.markdown``: the notes' fences, inline figures and math."""

    def __init__(self, **kwargs: Any) -> None:
        # Defaults are strings: Python-Markdown turns a None default's value into a bool.
        self.config = {
            "site": ["", "the build's NotesSite (hooks/notes.py sets it); default: one loaded from presets_dir"],
            "presets_dir": ["presets", "folder of GPU presets when no site is given (relative: to the working folder)"],
            "page": ["page.md", "page name for messages when no generator names the page"],
            "url": ["", "page URL for links when no generator names the page"],
            "tags": [{}, "the tags notes may carry in front matter: tag → one line on it (ainotes.notes_meta)"],
            "bibliography": ["references.bib", "BibTeX file for [@key] citations, relative to docs_dir"],
        }
        super().__init__(**kwargs)

    def site(self) -> NotesSite:
        site = self.getConfig("site")
        return site if isinstance(site, NotesSite) else shared_site(self.getConfig("presets_dir"))

    def extendMarkdown(self, md: Markdown) -> None:  # noqa: N802 (Python-Markdown's name)
        md.registerExtension(self)
        md.preprocessors.register(_Begin(md, self), "ainotes_begin", _BEGIN_PRIORITY)
        md.parser.blockprocessors.register(_BlockMath(md.parser, md), "ainotes_block_math", _BLOCK_MATH_PRIORITY)
        md.treeprocessors.register(_Settle(md), "ainotes_settle", _SETTLE_PRIORITY)
        md.inlinePatterns.register(_Figure(_FIGURE, md), "ainotes_figure", _FIGURE_PRIORITY)
        md.inlinePatterns.register(_InlineMath(_MATH, md), "ainotes_math", _MATH_PRIORITY)
        md.treeprocessors.register(_Scripts(md), "ainotes_scripts", _SCRIPTS_PRIORITY)
        notes_markdown.register(md, self)  # dates, tags, citations, references (ainotes.notes_markdown)

    def begin(self, md: Markdown, lines: list[str]) -> _PageRun:
        site = self.site()
        page = _page_identity(md, site, self.getConfig("page"), self.getConfig("url"))
        run = _PageRun(site=site, page=page, lines=list(lines))
        _RUNS[md] = run
        return run


def makeExtension(**kwargs: Any) -> NotesExtension:  # noqa: N802 (Python-Markdown's name)
    """Python-Markdown's entry point for ``ainotes.markdown``."""
    return NotesExtension(**kwargs)


def _page_identity(md: Markdown, site: NotesSite, page: str, url: str) -> Page:
    """The page being converted: from the driver (hooks), Zensical's context, or the settings."""
    announced = site.take_announced_page()
    if announced is not None:
        return site.begin_page(*announced)
    for processor in md.preprocessors:  # Zensical's rendering context
        context = getattr(processor, "page", None)
        path, address = getattr(context, "path", None), getattr(context, "url", None)
        if isinstance(path, str) and isinstance(address, str):
            # Zensical rewrites relative URLs in a page as relative to its source file.
            return site.begin_page(path, address, links_from=path)
    return site.begin_page(page, url)


# --------------------------------------------------------------------------
# Fences


class _Begin(Preprocessor):
    """Start the page; make sure superfences knows our fence kinds and tells us fence lines."""

    def __init__(self, md: Markdown, extension: NotesExtension) -> None:
        super().__init__(md)
        self.extension = extension

    def run(self, lines: list[str]) -> list[str]:
        run = self.extension.begin(self.md, lines)
        fences = self.md.preprocessors["fenced_code_block"] if "fenced_code_block" in self.md.preprocessors else None  # noqa: SIM401 (a Registry has no get)
        superfences: Any = getattr(fences, "extension", None)
        if fences is None or not hasattr(superfences, "extend_super_fences"):
            raise run.fail(InputError("ainotes.markdown needs pymdownx.superfences in markdown_extensions"))
        known = {entry["name"] for entry in superfences.superfences}
        for kind in FENCE_KINDS:
            if kind not in known:
                superfences.extend_super_fences(kind, _format_fence, _accept_fence, _reset)
        if not getattr(fences, "_ainotes_lines", False):
            _note_fence_lines(self.md, fences)
        return lines


def _note_fence_lines(md: Markdown, fences: Any) -> None:
    """Wrap two methods of superfences' preprocessor.

    ``process_nested_block(ws, content, start, end)``: ``start`` is the fence's first line,
    which the formatter it is about to call does not receive. ``handle_unrecognized(m)``:
    superfences drops a fence whose header it cannot read (```` ```roofline colour=red ````)
    to plain text; one of ours is kept, with the header, so that the formatter refuses it.
    """
    close = fences.process_nested_block
    unrecognized = fences.handle_unrecognized

    def process_nested_block(ws: str, content: str, start: int, end: int) -> Any:
        run = _RUNS.get(md)
        if run is not None:
            run.fence_start, run.fence_end = start, end
        return close(ws, content, start, end)

    def handle_unrecognized(m: re.Match[str]) -> bool:
        if m.group("lang") not in FENCE_KINDS:
            return bool(unrecognized(m))
        fences.lang, fences.attrs, fences.formatter = m.group("lang"), {}, _format_fence
        fences.options = {(m.group("unrecognized") or "").strip(): True}
        return True

    fences.process_nested_block = process_nested_block
    fences.handle_unrecognized = handle_unrecognized
    fences._ainotes_lines = True


def _accept_fence(language: str, inputs: dict, options: dict, attrs: dict, md: Markdown) -> bool:
    """Superfences validator: every header is ours; the formatter refuses header options."""
    options.update(inputs)
    return True


def _reset(md: Markdown) -> None:
    """Superfences calls this on ``md.reset()``; the page state goes with the next page."""


def _format_fence(
    src: str = "", language: str = "", md: Markdown | None = None, options: dict | None = None, **kwargs: Any
) -> str:
    """Superfences formatter for every kind in ``FENCE_KINDS``: the fence's HTML, or ``""``.

    Never raises (superfences would quietly print the fence as text): the outcome waits
    for :class:`_Settle` under the stash index superfences is about to use.
    """
    assert md is not None
    run = _RUNS[md]
    line = None if run.fence_start is None else run.fence_start + 1
    index = md.htmlStash.html_counter
    outcome: Drawn | BaseException
    try:
        header = dict(options or {})
        if kwargs.get("id_value"):
            header["id"] = kwargs["id_value"]
        for name in kwargs.get("classes") or ():
            header[f".{name}"] = True
        if header:
            raise InputError(
                f"{run.page.where(line)}: a {language} fence takes its settings in its body, "
                f"not after its name: {', '.join(sorted(header))}"
            )
        body = src + "\n" if src and not src.endswith("\n") else src  # each body line ends in one
        outcome = run.site.draw_fence(language, body, run.page, line or 1)
    except Exception as exc:  # kept for _Settle, which raises it if the fence is in the page
        outcome = exc
    run.pending[index] = (line, outcome)
    return outcome.html if isinstance(outcome, Drawn) else ""


class _Settle(Treeprocessor):
    """After block parsing: raise the errors and register the charts of fences in the page."""

    def run(self, root: Element) -> None:
        run = _RUNS.get(self.md)
        if run is None or not run.pending:
            return
        used = _stash_indices_in(root, self.md)
        for index in sorted(run.pending):
            line, outcome = run.pending[index]
            if index not in used:
                continue  # superfences put the source back: an indented code block
            if isinstance(outcome, InputError):
                raise run.fail(outcome)
            if isinstance(outcome, BaseException):
                raise outcome
            if outcome.chart is not None:
                try:
                    run.site.register(outcome.chart, run.page, line or 1)
                except InputError as exc:
                    raise run.fail(exc) from None
            run.page.need_script(*outcome.scripts)
        run.pending.clear()


def _stash_indices_in(root: Element, md: Markdown) -> set[int]:
    """The htmlStash entries the tree shows, directly or inside other stashed HTML."""
    texts = [part for element in root.iter() for part in (element.text, element.tail) if part]
    found: set[int] = set()
    while texts:
        for match in util.HTML_PLACEHOLDER_RE.finditer(texts.pop()):
            index = int(match.group(1))
            if index not in found:
                found.add(index)
                stashed = md.htmlStash.rawHtmlBlocks[index] if index < len(md.htmlStash.rawHtmlBlocks) else None
                if isinstance(stashed, str):
                    texts.append(stashed)
    return found


# --------------------------------------------------------------------------
# Inline figures and math


class _Figure(InlineProcessor):
    """``{{ ridge h100 }}`` → ``295 FLOP/byte``, as plain text (escaped on output)."""

    def handleMatch(self, m: re.Match[str], data: str) -> tuple[str, int, int]:  # noqa: N802
        run = _RUNS[self.md]
        try:
            text = run.site.figure(m.group(1), run.page, run.line_of(m.group(0)))
        except InputError as exc:
            raise run.fail(exc) from None
        return text, m.start(0), m.end(0)


class _InlineMath(InlineProcessor):
    """``$x^2$`` → MathML, built now so pages need no script and no web font."""

    def handleMatch(self, m: re.Match[str], data: str) -> tuple[str, int, int]:  # noqa: N802
        run = _RUNS[self.md]
        try:
            mathml = run.site.math(m.group(1), run.page, run.line_of(m.group(0)), block=False)
        except InputError as exc:
            raise run.fail(exc) from None
        return self.md.htmlStash.store(mathml), m.start(0), m.end(0)


class _BlockMath(BlockProcessor):
    """Display math: lines ``$$`` … ``$$`` (blank lines allowed inside), or one line ``$$…$$``."""

    def __init__(self, parser: Any, md: Markdown) -> None:
        super().__init__(parser)
        self.md = md

    @staticmethod
    def _opening(lines: Sequence[str]) -> int | None:
        for index, line in enumerate(lines):
            stripped = line.strip()
            if stripped == "$$" or (len(stripped) > 4 and stripped.startswith("$$") and stripped.endswith("$$")):
                return index
        return None

    def test(self, parent: Element, block: str) -> bool:
        return self._opening(block.split("\n")) is not None

    def run(self, parent: Element, blocks: list[str]) -> None:
        run = _RUNS[self.md]
        lines = blocks.pop(0).split("\n")
        first = self._opening(lines)
        assert first is not None
        if any(line.strip() for line in lines[:first]):
            self.parser.parseBlocks(parent, ["\n".join(lines[:first])])
        opening = lines[first].strip()
        if opening != "$$":
            latex, rest = opening[2:-2], lines[first + 1 :]
        else:
            latex, rest = self._body(run, lines[first], lines[first + 1 :], blocks)
        mathml = self._mathml(run, latex, lines[first])
        placeholder = self.md.htmlStash.store(mathml)
        # Raw text between blocks, as fenced code's placeholder: no <p> around display math.
        if len(parent):
            parent[-1].tail = f"{parent[-1].tail or ''}\n{placeholder}\n"
        else:
            parent.text = f"{parent.text or ''}\n{placeholder}\n"
        if any(line.strip() for line in rest):
            blocks.insert(0, "\n".join(rest))

    @staticmethod
    def _body(run: _PageRun, opening: str, lines: list[str], blocks: list[str]) -> tuple[str, list[str]]:
        body: list[str] = []
        while True:
            for index, line in enumerate(lines):
                if line.strip() == "$$":
                    return "\n".join(body + lines[:index]), lines[index + 1 :]
            body += [*lines, ""]
            if not blocks:  # an unclosed block's "$$" is the page's last one
                marks = [i + 1 for i, text in enumerate(run.lines) if text.strip(" >\t") == "$$"]
                raise run.fail(
                    InputError(f"{run.page.where(marks[-1] if marks else None)}: '$$' math block is never closed")
                )
            lines = blocks.pop(0).split("\n")

    @staticmethod
    def _mathml(run: _PageRun, latex: str, opening: str) -> str:
        stripped = opening.strip()
        line: int | None
        if stripped != "$$":
            line = run.line_of(stripped)
        else:  # the line above the formula's first line
            first = next((part.strip() for part in latex.split("\n") if part.strip()), "")
            found = run.line_of(first) if first else None
            line = None if found is None else found - 1
        try:
            return run.site.math(latex, run.page, line, block=True)
        except InputError as exc:
            raise run.fail(exc) from None


class _Scripts(Treeprocessor):
    """The runtime scripts, once, at the end of a page that has charts.

    A tree processor, not a postprocessor: ``toc`` runs the postprocessors on every
    heading it lists, and Zensical shows that HTML in its navigation.
    """

    def run(self, root: Element) -> None:
        run = _RUNS.get(self.md)
        tags = "" if run is None else run.site.scripts_html(run.page)
        if not tags:
            return
        placeholder = self.md.htmlStash.store(tags)
        if len(root):
            root[-1].tail = (root[-1].tail or "").rstrip() + placeholder
        else:
            root.text = (root.text or "") + placeholder


# --------------------------------------------------------------------------
# Converting pages without a generator (tests, ``ainotes site-assets``)

# The extensions the site's pages are written for (mkdocs.yml lists the same).
DEFAULT_EXTENSIONS: tuple[str, ...] = (
    "abbr", "admonition", "attr_list", "def_list", "footnotes", "md_in_html", "tables",
    "pymdownx.details", "pymdownx.superfences", "pymdownx.tabbed",
)


def convert_page(
    site: NotesSite,
    text: str,
    src: str,
    url: str,
    *,
    extensions: Sequence[Any] = DEFAULT_EXTENSIONS,
    extension_configs: dict[str, dict[str, Any]] | None = None,
) -> str:
    """``text`` (one page's Markdown) as HTML, with ``site`` collecting its charts."""
    configs = dict(extension_configs or {})
    configs["ainotes.markdown"] = {**configs.get("ainotes.markdown", {}), "site": site, "page": src, "url": url}
    names = [e for e in extensions if e != "ainotes.markdown"]
    md = Markdown(extensions=[*names, "ainotes.markdown"], extension_configs=configs)
    return md.convert(text)


class _FenceLocator(NotesSite):
    """A site that draws nothing and notes where each fence is (for :func:`locate_fences`)."""

    def __init__(self) -> None:
        self.presets = ()
        self.presets_by_id = {}
        self.charts = {}
        self.error_type = InputError
        self._announced = None
        self.md: Markdown | None = None
        self.found: list[directives.Fence] = []

    def draw_fence(self, kind: str, body: str, page: Page, line: int) -> Drawn:
        assert self.md is not None
        end = _RUNS[self.md].fence_end
        fence = directives.Fence(kind, body, line, end if end is not None else line)
        # A stand-in chart: _Settle registers it only if the fence is in the page, not in code.
        return Drawn("", Chart(f"fence-{line}", kind, "", page.url, page.src, about={"fence": fence}))

    def register(self, chart: Chart, page: Page, line: int) -> None:
        fence = chart.about["fence"]
        assert isinstance(fence, directives.Fence)
        self.found.append(fence)

    def figure(self, body: str, page: Page, line: int | None) -> str:
        return ""

    def math(self, latex: str, page: Page, line: int | None, *, block: bool) -> str:
        return ""


def locate_fences(text: str, *, extensions: Sequence[Any] = DEFAULT_EXTENSIONS) -> list[directives.Fence]:
    """The fences of our kinds in ``text`` as Markdown finds them, with their first and last
    lines (1-based); fences shown as code (indented, or inside a longer fence) are not among them."""
    locator = _FenceLocator()
    names = [e for e in extensions if e != "ainotes.markdown"]
    locator.md = Markdown(extensions=[*names, NotesExtension(site=locator)])
    locator.md.convert(text)
    return locator.found
