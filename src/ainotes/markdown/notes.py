"""The notes' part of the Markdown extension: dates and tags under the title, citations, references.

Registered by :class:`ainotes.markdown.extension.NotesExtension` (one call, :func:`register`), so it
runs wherever the extension runs: MkDocs, ProperDocs, Zensical, ``ainotes site-assets``.

* A preprocessor, after the extension names the page and before superfences draws its
  fences, finds the build's notes catalogue (:mod:`ainotes.notes.meta`) and the page's note
  in it; a front-matter mistake (an unknown tag, a bad date) stops the build there, at
  ``page:line``. The settings come from the driver (``hooks/notes.py``, ``ainotes
  site-assets``) or, under Zensical, from its rendering context; without either (plain
  Python-Markdown) this part does nothing.
* ``[@key]`` citations are an inline processor, below code spans (so code shows them as
  written) and above links; an unknown key stops the build at ``page:line``.
* A tree processor, after inline processing and before the table of contents, puts the
  dates and tags under the page's first heading, appends the numbered references and the
  presets the note draws on (real ``<h2>`` headings, so the contents list them), and keeps
  the first paragraph's text for the feed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from html import unescape
from pathlib import Path
from typing import Any
from xml.etree.ElementTree import Element

from markdown import Markdown, util
from markdown.inlinepatterns import InlineProcessor
from markdown.preprocessors import Preprocessor
from markdown.treeprocessors import Treeprocessor

from ainotes.base.errors import InputError
from ainotes.html import backlinks
from ainotes.html import notes as notes_html
from ainotes.notes import citations
from ainotes.notes import meta as notes_meta

_BEGIN_PRIORITY = 25.5  # after ainotes_begin (26) names the page, before superfences (25) draws fences
_CITE_PRIORITY = 175  # below code spans (190) and backslash escapes (180), above links (160)
_UNCLOSED_CITE_PRIORITY = 174  # after citations: a "[@" still there has no closing bracket
_PAGE_PRIORITY = 10  # after inline processing (20), before the table of contents (5)
_TAGS = re.compile(r"<[^>]+>")
_ESCAPED = re.compile(f"{util.STX}([0-9]+){util.ETX}")


@dataclass
class _NotesRun:
    run: Any  # ainotes.markdown.extension._PageRun
    catalogue: notes_meta.Catalogue
    note: notes_meta.Note | None
    cited: dict[str, int] = field(default_factory=dict)  # key → number on this page


def register(md: Markdown, extension: Any) -> None:
    """Add the notes' processors to ``md`` (called from the extension's ``extendMarkdown``)."""
    md.preprocessors.register(_NotesBegin(md, extension), "ainotes_notes_begin", _BEGIN_PRIORITY)
    md.inlinePatterns.register(_Citation(citations.CITATION, md, extension), "ainotes_citation", _CITE_PRIORITY)
    md.inlinePatterns.register(_UnclosedCitation(citations.UNCLOSED_CITATION, md, extension),
                               "ainotes_unclosed_citation", _UNCLOSED_CITE_PRIORITY)
    md.treeprocessors.register(_NotesPage(md, extension), "ainotes_notes_page", _PAGE_PRIORITY)


def _state(extension: Any) -> _NotesRun | None:
    """The notes' state of the page ``extension`` is converting (None: no catalogue for this build)."""
    run = extension.run
    return None if run is None else run.notes


class _NotesBegin(Preprocessor):
    def __init__(self, md: Markdown, extension: Any) -> None:
        super().__init__(md)
        self.extension = extension

    def run(self, lines: list[str]) -> list[str]:
        run = self.extension.run
        if run is None or run.site.notes is None:
            return lines
        try:
            catalogue = run.site.notes.current(scan=self.extension.backlinks_scanner(run.site))
            note = catalogue.note(run.page.src)
        except InputError as exc:
            box = run.shown(exc, inline=False)
            if box is None:
                raise run.fail(exc) from None
            return [self.md.htmlStash.store(box), "", *lines]  # serve: the page without its notes part
        if note is not None and run.page.line_offset == 0 and note.front_matter_lines:
            run.page.line_offset = _lines_cut(catalogue.docs_dir / run.page.src, note.front_matter_lines, lines)
        run.notes = _NotesRun(run, catalogue, note)
        return lines


def _lines_cut(path: Path, front_matter_lines: int, lines: list[str]) -> int:
    """Lines a builder cut off the top of the file (Zensical drops front matter before Markdown runs)."""
    try:
        file_lines = path.read_text(encoding="utf-8").split("\n")
    except OSError:
        return 0
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is None or lines[first].strip() == "---":
        return 0
    for index in range(front_matter_lines, len(file_lines)):
        if file_lines[index].strip():
            return index - first if file_lines[index].rstrip() == lines[first].rstrip() else 0
    return 0


class _Citation(InlineProcessor):
    """``[@key]``, ``[@key, Table 2]``, ``[@a; @b]`` → numbered links to the page's references."""

    def __init__(self, pattern: str, md: Markdown, extension: Any) -> None:
        super().__init__(pattern, md)
        self.extension = extension

    def handleMatch(self, m: re.Match[str], data: str) -> tuple[Any, Any, Any]:  # noqa: N802
        state = _state(self.extension)
        if state is None:
            return None, None, None
        run = state.run
        try:
            numbers = self._numbers(state, m.group(1), run.page.where(run.line_of(m.group(0).split("\n")[0])))
        except InputError as exc:
            box = run.shown(exc, inline=True)
            if box is None:
                raise run.fail(exc) from None
            return self.md.htmlStash.store(box), m.start(0), m.end(0)
        bib = state.catalogue.bibliography()
        titles = {key: entry.text for key, entry in bib.entries.items() if key in state.cited} if bib else {}
        html = citations.citation_html(numbers, titles)
        return self.md.htmlStash.store(html), m.start(0), m.end(0)

    @staticmethod
    def _numbers(state: _NotesRun, inner: str, where: str) -> list[tuple[int, str, str | None]]:
        """Each cite's number on the page, key and locator; an :class:`InputError` at ``where`` if one is wrong."""
        try:
            cites = citations.parse_citation(inner)
            bib = state.catalogue.bibliography()
        except InputError as exc:
            message = str(exc)
            raise InputError(message if message.startswith(state.catalogue.docs_dir.name)
                             else f"{where}: {message}") from None
        shown = state.catalogue.settings.bibliography_shown
        for cite in cites:
            if bib is None:
                raise InputError(f"{where}: citation [@{cite.key}], but there is no bibliography "
                                 f"({shown} does not exist)")
            if bib.get(cite.key) is None:
                close = bib.closest(cite.key)
                hint = f"; did you mean {close!r}?" if close else ""
                raise InputError(f"{where}: unknown citation key {cite.key!r}: {shown} has no such entry{hint}")
        return [(state.cited.setdefault(c.key, len(state.cited) + 1), c.key, c.locator) for c in cites]


class _UnclosedCitation(InlineProcessor):
    """A ``[@`` that no citation took (no closing bracket): refused at its line, not printed as it is."""

    def __init__(self, pattern: str, md: Markdown, extension: Any) -> None:
        super().__init__(pattern, md)
        self.extension = extension

    def handleMatch(self, m: re.Match[str], data: str) -> tuple[Any, Any, Any]:  # noqa: N802
        state = _state(self.extension)
        if state is None:
            return None, None, None
        written = data[m.start(0):].split("\n", 1)[0].rstrip()
        written = util.HTML_PLACEHOLDER_RE.sub("…", written)
        run = state.run
        error = InputError(f"{run.page.where(run.line_of(written))}: {citations.unclosed_message(written)}")
        box = run.shown(error, inline=True)
        if box is None:
            raise run.fail(error)
        return self.md.htmlStash.store(box), m.start(0), m.start(0) + 2  # the "[@"; the rest stays text


class _NotesPage(Treeprocessor):
    """Dates and tags under the title; references and the presets drawn on at the end."""

    def __init__(self, md: Markdown, extension: Any) -> None:
        super().__init__(md)
        self.extension = extension

    def run(self, root: Element) -> None:
        state = _state(self.extension)
        if state is None:
            return
        run, catalogue, note = state.run, state.catalogue, state.note
        prefix = _prefix(run.page)
        self._keep_summary(root, catalogue, run.page.src)
        if note is not None and note.listed:
            headings = [i for i, child in enumerate(root) if child.tag == "h1"]
            meta = Element("div", {"class": "ainotes-page-meta"})
            meta.text = self.md.htmlStash.store(notes_html.page_meta_html(catalogue, note, prefix))
            root.insert(headings[0] + 1 if headings else 0, meta)
        if state.cited:
            bib = catalogue.bibliography()
            assert bib is not None
            cited = sorted(((number, bib.entries[key]) for key, number in state.cited.items()), key=lambda c: c[0])
            self._section(root, "References", citations.references_html(cited))
        uses = catalogue.uses.get(run.page.src, frozenset())
        if uses and note is not None and note.listed:
            try:
                bib = catalogue.bibliography()
            except InputError:
                bib = None  # a broken bibliography stops the build where a page cites it
            html = backlinks.draws_on_html(run.site, catalogue, uses, prefix, bib.by_url() if bib else None)
            if html:
                self._section(root, "Presets this note draws on", html)

    def _section(self, root: Element, heading: str, html: str) -> None:
        title = Element("h2")
        title.text = heading
        body = Element("div", {"class": "ainotes-references-block"})
        body.text = self.md.htmlStash.store(html)
        root.append(title)
        root.append(body)

    def _keep_summary(self, root: Element, catalogue: notes_meta.Catalogue, src: str) -> None:
        for child in root:
            if child.tag != "p":
                continue
            text = "".join(child.itertext())
            text = util.HTML_PLACEHOLDER_RE.sub("", text)
            # A backslash escape (\[) waits as STX + its code point + ETX until Markdown's last step.
            text = _ESCAPED.sub(lambda m: chr(int(m.group(1))), text).replace(util.STX, "").replace(util.ETX, "")
            text = " ".join(unescape(_TAGS.sub("", text)).split())
            if text:
                catalogue.summaries[src] = text
                return


def _prefix(page: Any) -> str:
    from ainotes.html.page import relative_prefix

    return relative_prefix(page.links_from)
