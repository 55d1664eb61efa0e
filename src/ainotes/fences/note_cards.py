"""``note-cards``: a card for every note, newest first: its title linked, its summary, its date and tags.

The home page's "What is here" is this fence, so a note added to the docs folder gets its card
without anyone editing the home page. The summary is the note's front-matter ``description``, else its
first paragraph; the cards are Material's ``grid cards`` (the same markup its ``grid cards`` blocks make).
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape
from typing import Any

from ainotes.fences.body import BodyReader, Fence, load_body
from ainotes.fences.kind import DrawSite, FenceKind
from ainotes.html.notes import day_html, note_link, site_catalogue, tags_html
from ainotes.html.page import Drawn, Page, relative_prefix
from ainotes.notes.meta import Catalogue, Note

MAX_CARDS = 500


@dataclass(frozen=True)
class NoteCardsRequest:
    limit: int | None


def parse_note_cards(fence: Fence, where: str, presets: Any = None) -> NoteCardsRequest:
    """``note-cards`` fence: optional ``limit`` (cards shown, 1 to 500; default every note)."""
    data, lines = load_body(fence, where)
    reader = BodyReader(fence, where, data, ("limit",), lines)
    return NoteCardsRequest(reader.integer("limit", MAX_CARDS, 1, MAX_CARDS) if "limit" in data else None)


def newest_first(catalogue: Catalogue) -> list[Note]:
    """Every listed note, the most recently created first (then by title)."""
    notes = catalogue.listed()
    return sorted(notes, key=lambda n: (-n.created.toordinal() if n.created else 0, n.title.lower(), n.src))


def note_cards_html(catalogue: Catalogue, prefix: str, *, limit: int | None = None) -> str:
    cards = []
    for note in newest_first(catalogue)[:limit]:
        assert note.created is not None
        cards.append(
            f"<li><p><strong>{note_link(note, prefix)}</strong></p>"
            f"<p>{escape(catalogue.summary(note))}</p>"
            f'<p class="ainotes-card-date">Created {day_html(note.created)}</p>'
            f"{tags_html(catalogue, note.tags, prefix)}"
            "</li>"
        )
    if not cards:
        return "<p>No notes yet.</p>"
    return f'<div class="grid cards" id="ainotes-note-cards"><ul>{"".join(cards)}</ul></div>'


def draw_note_cards(site: DrawSite, request: NoteCardsRequest, page: Page) -> Drawn:
    catalogue, prefix = site_catalogue(site, "note-cards"), relative_prefix(page.links_from)
    # Drawn after every page is converted where the driver allows (the hooks, site-assets): a note without
    # a description shows its first paragraph, known once that note is converted.
    # Out of the search index, as the figures are: the cards repeat the notes' own summaries, and the
    # index is read before a deferred part is drawn.
    cards = site.figure_html(lambda: note_cards_html(catalogue, prefix, limit=request.limit))
    return Drawn(f'<div class="ainotes-note-cards" data-search-exclude>{cards}</div>')


KIND = FenceKind("note-cards", parse_note_cards, draw_note_cards, chart=False)
