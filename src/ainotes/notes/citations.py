"""The bibliography: BibTeX read and formatted by pybtex; ``[@key]`` citations parsed here.

Knows nothing of Markdown or MkDocs. :func:`load_bibliography` reads one ``.bib`` file
(pybtex's parser, strict: a duplicate key or a syntax error is an error naming the file),
checks the fields that become links, and formats every entry once with pybtex's ``unsrt``
style into HTML (pybtex's HTML backend escapes the text) and plain text (for tooltips).

A citation is ``[@key]``, ``[@key, Table 2]`` (a locator after a comma) or several at once,
``[@a; @b, p. 3]``, as in Pandoc. Numbers are given per page, in order of first citation.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from html import escape
from pathlib import Path
from urllib.parse import urlsplit

from ainotes.base.errors import InputError
from ainotes.base.textcheck import short, url_problem

CITATION = r"\[(@[^\[\]]*)\]"  # may wrap onto the next line, as prose does
UNCLOSED_CITATION = r"\[@(?![^\[\]]*\])"  # "[@" with no "]" before the next "[" or the paragraph's end
_ITEM = re.compile(r"^@(?P<key>[A-Za-z0-9_][A-Za-z0-9_:.+/-]*)(?:\s*,\s*(?P<locator>[^;]+?))?\s*$")
_LINK_FIELDS = ("url", "doi", "eprint")
_UNSAFE_IN_LINK = re.compile(r"[\s\"'<>\\`\x00-\x1f]")
MAX_LOCATOR_CHARS = 60


@dataclass(frozen=True)
class Entry:
    """One formatted bibliography entry."""

    key: str
    html: str  # pybtex's unsrt style through its HTML backend (escaped text, links from checked fields)
    text: str  # the same in plain text
    line: int  # where it starts in the .bib file
    url: str | None = None


@dataclass(frozen=True)
class Bibliography:
    path: Path
    entries: dict[str, Entry]

    def by_url(self) -> dict[str, Entry]:
        return {entry.url: entry for entry in self.entries.values() if entry.url}

    def get(self, key: str) -> Entry | None:
        return self.entries.get(key)

    def closest(self, key: str) -> str | None:
        close = difflib.get_close_matches(key, list(self.entries), n=1, cutoff=0.5)
        return close[0] if close else None


@dataclass(frozen=True)
class Cite:
    key: str
    locator: str | None = None


def parse_citation(inner: str) -> list[Cite]:
    """``@a; @b, p. 3`` → cites; raises :class:`InputError` (no place: the caller adds it)."""
    cites = []
    for part in " ".join(inner.split()).split(";"):
        match = _ITEM.match(part.strip())
        if match is None:
            raise InputError(f"citation [{short(inner)[1:-1]}] is not [@key], [@key, locator] or [@a; @b]: "
                             f"{short(part.strip())}")
        locator = match.group("locator")
        if locator is not None and len(locator) > MAX_LOCATOR_CHARS:
            raise InputError(f"citation locator must be at most {MAX_LOCATOR_CHARS} characters: {short(locator)}")
        cites.append(Cite(match.group("key"), locator))
    return cites


def unclosed_message(written: str) -> str:
    """The one line for ``[@key`` left open: what was written and what was meant."""
    shown = written if len(written) <= 40 else written[:39] + "…"
    return (f"citation {shown!r} is never closed: end it with ']' ([@key] or [@key, locator]), "
            "or write \\[@ for a literal bracket")


def _entry_lines(text: str) -> dict[str, int]:
    lines: dict[str, int] = {}
    for match in re.finditer(r"@\s*[A-Za-z]+\s*[{(]\s*([^,\s]+)\s*,", text):
        lines.setdefault(match.group(1), text.count("\n", 0, match.start()) + 1)
    return lines


def load_bibliography(path: Path, shown_as: str) -> Bibliography:
    """Read and format ``path``; ``shown_as`` names it in messages (``docs/references.bib``)."""
    from pybtex import errors as pybtex_errors
    from pybtex.database import parse_string
    from pybtex.plugin import find_plugin

    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"{shown_as}: cannot read the bibliography: {exc.strerror or exc}") from None
    lines = _entry_lines(text)
    previous = pybtex_errors.strict
    pybtex_errors.set_strict_mode(True)
    try:
        data = parse_string(text, "bibtex")
    except Exception as exc:  # pybtex raises its own kinds (PybtexSyntaxError, BibliographyDataError, ...)
        message = " ".join(str(exc).split())
        line = getattr(exc, "lineno", None)
        raise InputError(f"{shown_as}{f':{line}' if line else ''}: not a readable BibTeX file: {message}") from None
    finally:
        pybtex_errors.set_strict_mode(previous)
    for key, entry in data.entries.items():
        for name in _LINK_FIELDS:
            value = entry.fields.get(name)
            if value is None:
                continue
            bad = _UNSAFE_IN_LINK.search(value)
            unreadable = url_problem(value) if name == "url" else None  # https://[::1: urlsplit raises
            scheme = "" if unreadable else urlsplit(value).scheme.lower()
            if bad is not None or (name == "url" and scheme not in ("http", "https")):
                raise InputError(f"{shown_as}:{lines.get(key, 1)}: entry {key!r}: {name!r} must be "
                                 f"{'an http(s) URL' if name == 'url' else 'an identifier'} without spaces "
                                 f"or quotes: {short(value)}")
    style = find_plugin("pybtex.style.formatting", "unsrt")()
    html_backend = find_plugin("pybtex.backends", "html")()
    text_backend = find_plugin("pybtex.backends", "text")()
    entries: dict[str, Entry] = {}
    try:
        formatted = list(style.format_entries(data.entries.values()))
    except Exception as exc:  # a field the style needs is missing: pybtex names it
        raise InputError(f"{shown_as}: pybtex cannot format the bibliography: {' '.join(str(exc).split())}") from None
    for item in formatted:
        html_text = item.text.render(html_backend).replace("\n", " ")
        html_text = re.sub(r"<a href=\"", '<a rel="noopener" href="', html_text)
        entries[item.key] = Entry(item.key, html_text, item.text.render(text_backend), lines.get(item.key, 1),
                                  data.entries[item.key].fields.get("url"))
    return Bibliography(path, entries)


def citation_html(numbers: list[tuple[int, str, str | None]], title_of: dict[str, str]) -> str:
    """``[1, Table 2; 3]``: each number links to its entry (``#ref-N``) and names it on hover.

    ``numbers``: (number, key, locator) in the order written."""
    parts = []
    for number, key, locator in numbers:
        title = escape(title_of.get(key, key), quote=True)
        link = f'<a href="#ref-{number}" title="{title}">{number}</a>'
        parts.append(link + (f", {escape(locator)}" if locator else ""))
    joined = "; ".join(parts) if any(locator for _, _, locator in numbers) else ", ".join(parts)
    return f'<span class="ainotes-cite">[{joined}]</span>'


def references_html(cited: list[tuple[int, Entry]]) -> str:
    """The numbered list at the end of a page."""
    items = "".join(f'<li id="ref-{number}" value="{number}">{entry.html}</li>' for number, entry in cited)
    return f'<ol class="ainotes-references">{items}</ol>'

