"""The page pipeline as a Python-Markdown extension: chart and table fences, inline figures, math.

Declared in ``mkdocs.yml`` as ``ainotes.markdown`` after ``pymdownx.superfences``, it runs
under MkDocs, ProperDocs and Zensical alike (Zensical runs extensions but not hooks).

* Fences: every kind in :data:`ainotes.fences.registry.FENCE_KINDS` is registered with
  ``pymdownx.superfences`` as a custom fence, so Markdown decides what is a fence, once:
  a fence in a blockquote, an admonition, a list item, a details or tabbed block is
  drawn; an indented code block, or a fence inside a longer fence, stays code.
* ``{{ form ... }}`` inline figures and ``$...$`` inline math are inline processors
  (below code spans' priority, so code shows them as written); ``$$`` display math is a
  block processor. All output goes through Python-Markdown's own stash.

Page and line. A message names the page and the line. The page comes from whoever
drives the build: ``hooks/notes.py`` announces each page (with the lines of front matter
MkDocs cut off); under Zensical its rendering context (the preprocessor Zensical
registers as ``rendering_context``) names it, and the front matter Zensical cut off is
counted from the page's file; otherwise the extension's ``page`` setting. Every line is
found from the text: superfences replaces each whole fence by one placeholder line, so
:class:`_Locate`, right after it, walks its output against the page's lines to find each
fence's opening line; inline forms are found by their text in the page's lines.

Superfences formats a fence before the block parser knows whether it sits in an
indented code block (there superfences puts the source back). So nothing raises or
registers charts before block parsing: each fence's outcome waits under its stash index,
and :class:`_Settle`, after block parsing, raises the errors and registers the charts of
the fences whose output is really in the page. The same goes for the likely mistakes
:class:`_Locate` notes: a fence name a letter or two from one of ours (```` ```roofine ````),
and a fence of ours superfences left as text (a header, or no closing line).
"""

from __future__ import annotations

import re
import sys
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

from ainotes.base.errors import InputError
from ainotes.build.kept import KeptBetweenBuilds, folder_state, on_disk
from ainotes.build.site import NotesSite
from ainotes.fences import body as fence_body
from ainotes.fences.registry import FENCE_KINDS
from ainotes.html import backlinks
from ainotes.html.page import Chart, Drawn, Page
from ainotes.inline import figures
from ainotes.markdown import notes as notes_markdown
from ainotes.markdown.kinds import misspelt_kind
from ainotes.notes import meta as notes_meta
from ainotes.notes.settings import NotesSettings, notes_settings, presets_only

# Priorities. Superfences' preprocessor is 25 and Python-Markdown's whitespace
# normaliser 30: the page's lines are read between them. Code spans are 190.
_BEGIN_PRIORITY = 26
_BEGIN_NAME = "ainotes_begin"
_LOCATE_PRIORITY = 24  # right after superfences, before raw HTML blocks (20)
_FIGURE_PRIORITY = 186
_UNCLOSED_FIGURE_PRIORITY = 184  # after figures and math: a "{{" still there was never closed
_MATH_PRIORITY = 185
_BLOCK_MATH_PRIORITY = 75  # after indented code (80), before paragraphs
_SETTLE_PRIORITY = 25  # after the block parser, before inline processing (20)
_SCRIPTS_PRIORITY = 1  # after the table of contents (5), which runs postprocessors on each heading

_FIGURE = r"\{\{([^{}\n]*)\}\}"
# $x$ but not "$5 and $6", "\$", or "$$"; the content neither starts nor ends with a space.
_MATH = r"(?<![\\$\w])\$(?=[^\s$])([^$\n]*?[^\s$\\])\$(?![\w$])"
_CODE_SPAN = re.compile(r"(`+).+?(?<!`)\1(?!`)")

class HooklessSites:
    """The sites of builds whose builder runs no hooks (Zensical), one per presets folder.

    Zensical makes a Markdown instance, and so this extension, for every page, and gives the extension
    nothing that lasts the build: only its settings, page by page. The one thing that lives as long as
    the build (and as ``zensical serve``, whose rebuilds run in the same process) is the process, so the
    honest owner of their sites is one registry for the process, :data:`HOOKLESS_SITES`. It makes a site
    again when the settings or a preset file changed; the sites of one folder share what each build
    leaves the next (:class:`~ainotes.build.kept.KeptBetweenBuilds`). Builders with hooks never use it:
    ``hooks/notes.py`` hands the extension its site."""

    def __init__(self) -> None:
        self._sites: dict[Path, NotesSite] = {}
        self._kept: dict[Path, KeptBetweenBuilds] = {}

    def site(self, settings: NotesSettings) -> NotesSite:
        folder = settings.presets_dir.resolve()
        known = self._sites.get(folder)
        if known is None or known.settings != settings or known.presets_stamp != folder_state(folder):
            kept = self._kept.setdefault(folder, KeptBetweenBuilds())
            known = self._sites[folder] = NotesSite(settings, kept=kept)
        return known


HOOKLESS_SITES = HooklessSites()


def shared_site(settings: NotesSettings) -> NotesSite:
    """The process's site for ``settings`` under a builder without hooks (:class:`HooklessSites`)."""
    return HOOKLESS_SITES.site(settings)


@dataclass
class _PageRun:
    """One conversion of one page."""

    site: NotesSite
    page: Page
    lines: list[str]
    fence_start: int | None = None  # 1-based opening line of the fence being drawn
    fence_end: int | None = None  # 1-based closing line of the fence being drawn
    formatted: dict[int, _Formatted] = field(default_factory=dict)  # by stash index, awaiting their line
    pending: dict[int, tuple[int | None, Drawn | BaseException]] = field(default_factory=dict)
    unfenced: list[tuple[str, int, str]] = field(default_factory=list)  # (text, line, problem): see _Locate
    notes: Any = None  # the page's notes state (ainotes.markdown.notes), when the build has a catalogue
    lines_without_code: list[str] | None = None  # the lines less their code spans, made on first use

    def fail(self, exc: InputError) -> Exception:
        return self.site.error_type(str(exc))

    def shown(self, exc: InputError, *, inline: bool) -> str | None:
        """The error as a box in the page (``mkdocs serve``: the site shows errors there), else None."""
        return self.site.error_html(str(exc), inline=inline) if self.site.errors_on_page else None

    def line_of(self, text: str) -> int | None:
        """The first line (1-based) holding ``text`` outside code spans, else anywhere."""
        if self.lines_without_code is None:
            self.lines_without_code = [_CODE_SPAN.sub("", line) if "`" in line else line for line in self.lines]
        for index, line in enumerate(self.lines_without_code):
            if text in line:
                return index + 1
        for index, line in enumerate(self.lines):
            if text in line:
                return index + 1
        return None


def page_run(md: Markdown) -> _PageRun | None:
    """The page ``md`` is converting, once the extension has named it (None before, or without it).

    Asked of the extension whose processors ``md`` runs: listed twice (``ainotes.markdown`` and
    ``ainotes.markdown.extension``), the later one's replaced the earlier one's."""
    begin = md.preprocessors[_BEGIN_NAME] if _BEGIN_NAME in md.preprocessors else None  # noqa: SIM401
    return begin.extension.run if isinstance(begin, _Begin) else None


def _current_run(md: Markdown) -> _PageRun:
    run = page_run(md)
    assert run is not None, "ainotes.markdown: a processor ran before the page was named"
    return run


class NotesExtension(Extension):
    """``ainotes.markdown``: the notes' fences, inline figures and math."""

    def __init__(self, **kwargs: Any) -> None:
        # Defaults are strings: Python-Markdown turns a None default's value into a bool.
        self.config = {
            "site": ["", "the build's NotesSite (hooks/notes.py sets it); default: one loaded from presets_dir"],
            "presets_dir": ["presets", "folder of GPU presets when no site is given (relative: to mkdocs.yml's folder "
                           "under Zensical, else to the working folder)"],
            "page": ["page.md", "page name for messages when no generator names the page"],
            "url": ["", "page URL for links when no generator names the page"],
            "tags": [{}, "the tags notes may carry in front matter: tag → one line on it (ainotes.notes.meta)"],
            "bibliography": ["references.bib", "BibTeX file for [@key] citations, relative to docs_dir"],
        }
        super().__init__(**kwargs)
        self.run: _PageRun | None = None  # the page being converted (begin() names it)

    def site(self, md: Markdown) -> NotesSite:
        """The build's site: the driver's (``site`` setting), else one for Zensical's settings, else
        one for ``presets_dir`` alone."""
        site = self.getConfig("site")
        if isinstance(site, NotesSite):
            return site
        config = _zensical_config(md)
        if config is not None:
            settings = notes_settings(
                root=Path(str(config.get("root_dir") or ".")), docs_dir=str(config["docs_dir"]),
                options={"tags": self.getConfig("tags"), "bibliography": self.getConfig("bibliography"),
                         "presets_dir": self.getConfig("presets_dir")},
                site_url=config.get("site_url"), site_name=config.get("site_name"),
                site_description=config.get("site_description"),
                use_directory_urls=config.get("use_directory_urls", True), where="zensical.toml/mkdocs.yml")
            return shared_site(settings)
        return shared_site(presets_only(self.getConfig("presets_dir")))

    def extendMarkdown(self, md: Markdown) -> None:  # noqa: N802 (Python-Markdown's name)
        md.registerExtension(self)
        md.preprocessors.register(_Begin(md, self), _BEGIN_NAME, _BEGIN_PRIORITY)
        md.preprocessors.register(_Locate(md), "ainotes_locate", _LOCATE_PRIORITY)
        md.parser.blockprocessors.register(_BlockMath(md.parser, md), "ainotes_block_math", _BLOCK_MATH_PRIORITY)
        md.treeprocessors.register(_Settle(md), "ainotes_settle", _SETTLE_PRIORITY)
        md.inlinePatterns.register(_Figure(_FIGURE, md), "ainotes_figure", _FIGURE_PRIORITY)
        md.inlinePatterns.register(_InlineMath(_MATH, md), "ainotes_math", _MATH_PRIORITY)
        md.inlinePatterns.register(_UnclosedFigure(r"\{\{", md), "ainotes_unclosed_figure",
                                   _UNCLOSED_FIGURE_PRIORITY)
        md.treeprocessors.register(_Scripts(md), "ainotes_scripts", _SCRIPTS_PRIORITY)
        notes_markdown.register(md, self)  # dates, tags, citations, references (ainotes.markdown.notes)

    @staticmethod
    def backlinks_scanner(site: NotesSite) -> notes_meta.Scanner:
        """What the notes catalogue runs on each page to find the presets it draws on."""
        return backlinks_scanner(site)

    def begin(self, md: Markdown, lines: list[str]) -> _PageRun:
        site = self.site(md)
        page = _page_identity(md, site, self.getConfig("page"), self.getConfig("url"))
        self.run = _PageRun(site=site, page=page, lines=list(lines))
        return self.run


def makeExtension(**kwargs: Any) -> NotesExtension:  # noqa: N802 (Python-Markdown's name)
    """Python-Markdown's entry point for ``ainotes.markdown``."""
    return NotesExtension(**kwargs)


def _page_identity(md: Markdown, site: NotesSite, page: str, url: str) -> Page:
    """The page being converted: from the driver (hooks), Zensical's context, or the settings."""
    announced = site.take_announced_page()
    if announced is not None:
        return site.begin_page(*announced)
    zensical = _zensical_context(md)
    context = getattr(zensical, "page", None)
    path, address = getattr(context, "path", None), getattr(context, "url", None)
    if isinstance(path, str) and isinstance(address, str):
        _one_line_errors_under_zensical()
        _say_site_assets_once(site)
        config = _zensical_config(md)
        offset = _front_matter_lines(config, path) if config is not None else 0
        # Zensical rewrites relative URLs in a page as relative to its source file.
        return site.begin_page(path, address, offset, links_from=path)
    return site.begin_page(page, url)


# The name Zensical registers its rendering context (the page being rendered) under.
_ZENSICAL_CONTEXT = "rendering_context"
_FRONT_MATTER = re.compile(r"\A-{3}[ \t]*\n.*?\n(?:-{3}|\.{3})[ \t]*\n", re.S)
_ZENSICAL_ERROR = "Python error: InputError: "


def _zensical_context(md: Markdown) -> Any:
    return md.preprocessors[_ZENSICAL_CONTEXT] if _ZENSICAL_CONTEXT in md.preprocessors else None  # noqa: SIM401


def _zensical_config(md: Markdown) -> dict | None:
    """Zensical's whole config (its rendering context holds it), or None under another builder."""
    config = getattr(_zensical_context(md), "config", None)
    if isinstance(config, dict) and "docs_dir" in config and "markdown_extensions" in config:
        return config
    return None


def _front_matter_lines(config: dict, path: str) -> int:
    """The lines of front matter Zensical cut off the page before Markdown saw it."""
    root, docs = config.get("root_dir"), config.get("docs_dir")
    if not isinstance(root, str) or not isinstance(docs, str):
        return 0
    try:
        text = (Path(root) / docs / path).read_text(encoding="utf-8")
    except (OSError, UnicodeError):
        return 0
    front = _FRONT_MATTER.match(text.replace("\r\n", "\n"))
    return 0 if front is None else front.group(0).count("\n")


SITE_ASSETS_REMINDER = (
    "ainotes: Zensical runs no hooks, so these pages link stylesheets, scripts and chart files that this "
    "build does not write: run `ainotes site-assets --config mkdocs.yml SITE_DIR` after it (make site-zensical does)")


def _say_site_assets_once(site: NotesSite) -> None:
    """Tell a Zensical build, once, what it leaves to ``ainotes site-assets`` (else its pages link missing CSS)."""
    if not site.told_site_assets:
        site.told_site_assets = True
        print(SITE_ASSETS_REMINDER, file=sys.stderr)


def _one_line_errors_under_zensical() -> None:
    """Zensical ends a build on an extension's exception with Python's traceback of it (two,
    the second holding the first); print an author's mistake as its one line instead."""
    if getattr(sys.excepthook, "ainotes", False):
        return
    previous = sys.excepthook

    def one_line(kind: type[BaseException], value: BaseException, tb: Any) -> None:
        text = str(value)
        if issubclass(kind, RuntimeError) and text.startswith(_ZENSICAL_ERROR):
            print(f"ainotes: {text.removeprefix(_ZENSICAL_ERROR).splitlines()[0]}", file=sys.stderr)
            return
        previous(kind, value, tb)

    one_line.ainotes = True  # type: ignore[attr-defined]
    sys.excepthook = one_line


# --------------------------------------------------------------------------
# Fences


class _Begin(Preprocessor):
    """Start the page; make sure superfences knows our fence kinds."""

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
        return lines


def _accept_fence(language: str, inputs: dict, options: dict, attrs: dict, md: Markdown) -> bool:
    """Superfences validator: every header is ours; the formatter refuses header options."""
    options.update(inputs)
    return True


def _reset(md: Markdown) -> None:
    """Superfences calls this on ``md.reset()``; the page state goes with the next page."""


@dataclass
class _Formatted:
    """A fence of ours as superfences handed it to the formatter: drawn once its line is known."""

    kind: str
    body: str
    header: list[str]  # what came after the fence's name (refused)


def _format_fence(
    src: str = "", language: str = "", md: Markdown | None = None, options: dict | None = None, **kwargs: Any
) -> str:
    """Superfences formatter for every kind in ``FENCE_KINDS``: an empty stash entry for now.

    The formatter is not told the fence's line, so the fence is drawn by :class:`_Locate`,
    which finds the line in the text and puts the HTML in the stash entry superfences is
    about to make. It never raises (superfences would quietly print the fence as text).
    """
    assert md is not None
    header = sorted(str(key) for key in (options or {}))
    if kwargs.get("id_value"):
        header.append("id")
    header += [f".{name}" for name in kwargs.get("classes") or ()]
    body = src + "\n" if src and not src.endswith("\n") else src  # each body line ends in one
    _current_run(md).formatted[md.htmlStash.html_counter] = _Formatted(language, body, sorted(header))
    return ""


# A line superfences made of a whole fence: the stash placeholder, after the fence's indent or quote marks.
_PLACEHOLDER_LINE = re.compile(r"[> \t]*" + util.HTML_PLACEHOLDER % r"([0-9]+)")
# A fence's opening line as superfences reads it: indent or quote marks, the fence, a name.
_OPENING = re.compile(
    r"(?P<ws>[> \t]*)(?P<fence>`{3,}|~{3,})[ \t]*"
    r"(?:\{[ \t]*\.?(?P<attr_name>[\w#.+-]+)[^}]*\}|\.?(?P<name>[\w#.+-]+))?(?P<rest>.*)$"
)
_PREFIX_CHARS = "> \t"


def _closing_line(lines: list[str], opening: int, match: re.Match[str]) -> int:
    """The 0-based line after the fence that opens on ``lines[opening]``: past the first line,
    less the opening's indent or quote marks, that is its fence alone (as superfences ends one)."""
    closing = re.compile(re.escape(match.group("fence")) + r"[ \t]*$")
    depth = len(match.group("ws"))
    for number in range(opening + 1, len(lines)):
        line = lines[number]
        cut = 0
        while cut < min(depth, len(line)) and line[cut] in _PREFIX_CHARS:
            cut += 1
        if closing.match(line, cut):
            return number + 1
    return opening + 1


class _Locate(Preprocessor):
    """Right after superfences: find each fence's line from the text, and draw our fences.

    Superfences replaced each whole fence by one placeholder line and left every other line
    as it was, so walking its output against the page's lines puts each placeholder at the
    fence's opening line. There our fences are drawn (into the stash entry the formatter
    left empty), fence names a letter or two from one of ours are noted as likely
    misspellings, and lines that open a fence of ours which superfences did not take
    (a header it cannot read, a fence never closed) are noted; :class:`_Settle` raises for
    those whose text is really in the page, not in an indented code block.
    """

    def run(self, lines: list[str]) -> list[str]:
        run = page_run(self.md)
        if run is None:
            return lines
        source, at = run.lines, 0
        for line in lines:
            placeholder = _PLACEHOLDER_LINE.fullmatch(line)
            if placeholder is not None and (at >= len(source) or source[at] != line):
                opening = _OPENING.fullmatch(source[at]) if at < len(source) else None
                end = at + 1 if opening is None else _closing_line(source, at, opening)
                self._fence(run, int(placeholder.group(1)), at + 1 if opening else None, end, opening)
                at = end
            elif at < len(source) and source[at] == line:
                self._plain(run, at)
                at += 1
            else:  # a line changed by something else: find it further on
                at = next((n + 1 for n in range(at, len(source)) if source[n] == line), at)
        for index in [i for i in run.formatted if i not in run.pending]:  # not found in the text
            self._draw(run, index, None, None)
        run.formatted.clear()
        return lines

    def _fence(self, run: _PageRun, index: int, line: int | None, end: int, opening: re.Match[str] | None) -> None:
        if index in run.formatted:
            self._draw(run, index, line, end)
            return
        name = None if opening is None else (opening.group("name") or opening.group("attr_name"))
        hint = misspelt_kind(name)
        if hint is not None:
            run.pending[index] = (line, InputError(f"{run.page.where(line)}: {hint}"))

    @staticmethod
    def _plain(run: _PageRun, at: int) -> None:
        """A line superfences left as text: note it if it opens a fence of ours (or a misspelt one)."""
        opening = _OPENING.fullmatch(run.lines[at])
        name = None if opening is None else (opening.group("name") or opening.group("attr_name"))
        if opening is None or name is None:
            return
        text = run.lines[at][len(opening.group("ws")):].strip()
        hint = misspelt_kind(name)
        if name in FENCE_KINDS:
            header = opening.group("rest").strip()
            hint = (f"a {name} fence takes its settings in its body, not after its name: {header}" if header
                    else f"this {name} fence is never closed: end it with a line of {opening.group('fence')}")
        if hint is not None:
            run.unfenced.append((text, at + 1, hint))

    def _draw(self, run: _PageRun, index: int, line: int | None, end: int | None) -> None:
        fence = run.formatted[index]
        run.fence_start, run.fence_end = line, end
        outcome: Drawn | BaseException
        try:
            if fence.header:
                raise InputError(
                    f"{run.page.where(line)}: a {fence.kind} fence takes its settings in its body, "
                    f"not after its name: {', '.join(fence.header)}"
                )
            outcome = run.site.draw_fence(fence.kind, fence.body, run.page, line or 1)
        except Exception as exc:  # kept for _Settle, which raises it if the fence is in the page
            outcome = exc
        if isinstance(outcome, Drawn) and index < len(self.md.htmlStash.rawHtmlBlocks):
            self.md.htmlStash.rawHtmlBlocks[index] = outcome.html
        run.pending[index] = (line, outcome)


class _Settle(Treeprocessor):
    """After block parsing: raise the errors and register the charts of fences in the page."""

    def run(self, root: Element) -> None:
        run = page_run(self.md)
        if run is None:
            return
        if run.unfenced:
            _refuse_unfenced(root, run)
        if not run.pending:
            return
        used = _stash_indices_in(root, self.md)
        for index in sorted(run.pending):
            line, outcome = run.pending[index]
            if index not in used:
                continue  # superfences put the source back: an indented code block
            if isinstance(outcome, InputError):
                box = run.shown(outcome, inline=False)
                if box is None:
                    raise run.fail(outcome)
                self.md.htmlStash.rawHtmlBlocks[index] = box
                continue
            if isinstance(outcome, BaseException):
                raise outcome
            if outcome.chart is not None:
                try:
                    run.site.register(outcome.chart, run.page, line or 1)
                except InputError as exc:
                    raise run.fail(exc) from None
            run.page.need_script(*outcome.scripts)
        run.pending.clear()


def _refuse_unfenced(root: Element, run: _PageRun) -> None:
    """Raise for the first fence of ours that superfences left as text, if the text is in the
    page (not in an indented code block)."""
    texts = []
    for element in root.iter():
        if element.tag not in ("code", "pre") and element.text:
            texts.append(element.text)
        if element.tail:
            texts.append(element.tail)
    for text, line, problem in run.unfenced:
        if any(text in part for part in texts):
            raise run.fail(InputError(f"{run.page.where(line)}: {problem}"))
    run.unfenced.clear()


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
        run = _current_run(self.md)
        try:
            text = run.site.figure(m.group(1), run.page, run.line_of(m.group(0)))
        except InputError as exc:
            box = run.shown(exc, inline=True)
            if box is None:
                raise run.fail(exc) from None
            return self.md.htmlStash.store(box), m.start(0), m.end(0)
        return text, m.start(0), m.end(0)


class _UnclosedFigure(InlineProcessor):
    """A ``{{`` that no complete ``{{ ... }}`` on its line took: refused, at its line."""

    def handleMatch(self, m: re.Match[str], data: str) -> tuple[str, int, int]:  # noqa: N802
        run = _current_run(self.md)
        written = data[m.start(0):].split("\n", 1)[0].rstrip()
        raise run.fail(InputError(f"{run.page.where(run.line_of(written))}: {figures.unclosed_message(written)}"))


class _InlineMath(InlineProcessor):
    """``$x^2$`` → MathML, built now so pages need no script and no web font."""

    def handleMatch(self, m: re.Match[str], data: str) -> tuple[str, int, int]:  # noqa: N802
        run = _current_run(self.md)
        try:
            mathml = run.site.math(m.group(1), run.page, run.line_of(m.group(0)), block=False)
        except InputError as exc:
            mathml = run.shown(exc, inline=True) or ""
            if not mathml:
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
        run = _current_run(self.md)
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
            box = run.shown(exc, inline=False)
            if box is None:
                raise run.fail(exc) from None
            return box


class _Scripts(Treeprocessor):
    """The runtime scripts, once, at the end of a page that has charts.

    A tree processor, not a postprocessor: ``toc`` runs the postprocessors on every
    heading it lists, and Zensical shows that HTML in its navigation.
    """

    def run(self, root: Element) -> None:
        run = page_run(self.md)
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


class FenceLocator(NotesSite):
    """A site that draws nothing and notes where each fence is (for :func:`locate_fences`)."""

    def __init__(self) -> None:
        self.presets = ()
        self.presets_by_id = {}
        self.charts = {}
        self.error_type = InputError
        self._announced = None
        self.settings = presets_only(".")
        self.notes = None
        self.md: Markdown | None = None
        self.found: list[fence_body.Fence] = []

    def draw_fence(self, kind: str, body: str, page: Page, line: int) -> Drawn:
        assert self.md is not None
        end = _current_run(self.md).fence_end
        fence = fence_body.Fence(kind, body, line, end if end is not None else line)
        # A stand-in chart: _Settle registers it only if the fence is in the page, not in code.
        return Drawn("", Chart(f"fence-{line}", kind, "", page.url, page.src, about={"fence": fence}))

    def register(self, chart: Chart, page: Page, line: int) -> None:
        fence = chart.about["fence"]
        assert isinstance(fence, fence_body.Fence)
        self.found.append(fence)

    def figure(self, body: str, page: Page, line: int | None) -> str:
        return ""

    def math(self, latex: str, page: Page, line: int | None, *, block: bool) -> str:
        return ""


def locate_fences(text: str, *, extensions: Sequence[Any] = DEFAULT_EXTENSIONS) -> list[fence_body.Fence]:
    """The fences of our kinds in ``text`` as Markdown finds them, with their first and last
    lines (1-based); fences shown as code (indented, or inside a longer fence) are not among them."""
    locator = FenceLocator()
    names = [e for e in extensions if e != "ainotes.markdown"]
    locator.md = Markdown(extensions=[*names, NotesExtension(site=locator)])
    locator.md.convert(text)
    return locator.found


# --------------------------------------------------------------------------
# Backlinks: which presets each page draws on (ainotes.html.backlinks)


def _strip_front_matter(text: str) -> str:
    return notes_meta.FRONT_MATTER.sub(lambda m: "\n" * m.group(0).count("\n"), text, count=1)


def locate_fences_and_forms(text: str) -> tuple[tuple[Any, ...], tuple[str, ...]]:
    """The fences (:class:`ainotes.fences.body.Fence`) and inline-form bodies Markdown finds in a page."""
    class Locator(FenceLocator):  # draws nothing; notes what it meets
        def __init__(self) -> None:
            super().__init__()
            self.forms: list[str] = []

        def figure(self, body: str, page: Any, line: int | None) -> str:
            self.forms.append(body)
            return ""

    locator = Locator()
    locator.md = Markdown(extensions=[*DEFAULT_EXTENSIONS, NotesExtension(site=locator)])
    locator.md.convert(_strip_front_matter(text))
    return tuple(locator.found), tuple(locator.forms)


def backlinks_scanner(site: NotesSite) -> notes_meta.Scanner:
    """What the notes catalogue runs on each page: the presets it uses and its fence kinds. Its key is
    the site's presets (:attr:`NotesSite.presets_stamp`): a rebuild that kept them scans again only
    the pages whose text changed (:class:`ainotes.notes.meta.KeptCatalogue`); a new process reads
    the scans of pages, presets and code it met before from the render cache."""
    known: dict[str, list[str]] | None = None

    def scan(src: str, text: str) -> notes_meta.PageScan:
        found = on_disk("backlinks-scan", {"src": src, "text": text, "presets": site.presets_digest},
                        lambda: _scan_json(src, text))
        return notes_meta.PageScan(frozenset((kind, entry) for kind, entry in found["uses"]), tuple(found["kinds"]))

    def _scan_json(src: str, text: str) -> dict[str, list]:
        nonlocal known
        if known is None:
            known = backlinks.known_ids(site)
        try:
            fences, forms = locate_fences_and_forms(text)
        except Exception:  # the page's own conversion reports what is wrong with it
            return {"uses": [], "kinds": []}
        uses: set[backlinks.Use] = set()
        kinds: list[str] = []
        for fence in fences:
            kinds.append(fence.kind)
            if fence.kind in backlinks.CATALOGUE_FENCES or fence.kind not in FENCE_KINDS:
                continue
            try:
                request = FENCE_KINDS[fence.kind].parse(fence, src, site.presets_by_id)
            except InputError:
                continue  # reported when the page is built
            if fence.kind == "whats-new" and getattr(request, "limit", 0) is None:
                kinds.append("whats-new-page")  # the full list
            uses |= backlinks.request_uses(request) | backlinks.implied_uses(request, site)
        for body in forms:
            uses |= backlinks.form_uses(body, known)
        return {"uses": sorted(uses), "kinds": kinds}

    return notes_meta.Scanner(scan, key=site.presets_stamp or None)
