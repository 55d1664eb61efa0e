"""The notes' own lists as HTML: what is new by day, the tags index, and the line of dates and tags
under a note's title, from the catalogue (:mod:`ainotes.notes.meta`).
"""

from __future__ import annotations

import datetime as dt
from html import escape
from typing import Any

from ainotes.base.errors import InputError
from ainotes.notes.meta import Catalogue, Event, Note, known_catalogue, slug


def site_catalogue(site: Any, kind: str) -> Catalogue:
    catalogue = known_catalogue(site)
    if catalogue is None:
        raise InputError(f"the {kind} fence needs the notes catalogue, which this build has not read "
                         "(convert the page with the site's docs folder known)")
    return catalogue


def day_html(day: dt.date) -> str:
    return f'<time datetime="{day.isoformat()}">{day.day} {day:%b} {day.year}</time>'


def note_href(note: Note, prefix: str) -> str:
    """The note's address from a page whose links start with ``prefix``; the home page from a page in the
    site's root is "./" (an empty href is the page itself, as Zensical leaves it)."""
    return prefix + note.url or "./"


def note_link(note: Note, prefix: str) -> str:
    return f'<a href="{escape(note_href(note, prefix), quote=True)}">{escape(note.title)}</a>'


def tags_html(catalogue: Catalogue, tags: tuple[str, ...], prefix: str) -> str:
    """A note's tags as Material's tag chips, each linked to its entry in the tags index."""
    if not tags:
        return ""
    index = catalogue.page_with("tags-index")
    index_note = catalogue.notes.get(index) if index is not None else None
    chips = []
    for tag in tags:
        if index_note is not None:
            href = escape(f"{prefix}{index_note.url}#tag-{slug(tag)}", quote=True)
            chips.append(f'<a class="md-tag" href="{href}">{escape(tag)}</a>')
        else:
            chips.append(f'<span class="md-tag">{escape(tag)}</span>')
    return f'<nav class="md-tags ainotes-tags" aria-label="Tags">{"".join(chips)}</nav>'


def page_meta_html(catalogue: Catalogue, note: Note, prefix: str) -> str:
    """The line under a note's title: created, updated (when later), and its tags (the caller wraps it
    in ``<div class="ainotes-page-meta">``)."""
    parts = []
    if note.created is not None:
        parts.append(f"Created {day_html(note.created)}")
    if note.was_updated and note.updated is not None:
        parts.append(f"updated {day_html(note.updated)}")
    dates = f'<p class="ainotes-dates">{" · ".join(parts)}</p>' if parts else ""
    return f"{dates}{tags_html(catalogue, note.tags, prefix)}"


def _event_html(event: Event, prefix: str) -> str:
    kind = "New note" if event.kind == "new" else "Updated"
    text = event.text if event.text is not None else (event.note.description if event.kind == "new" else None)
    tail = f" — {escape(text)}" if text else ""
    return (f'<li class="ainotes-event ainotes-event--{event.kind}"><span class="ainotes-event-kind">{kind}</span> '
            f"{note_link(event.note, prefix)}{tail}</li>")


def whats_new_html(catalogue: Catalogue, prefix: str, *, limit: int | None = None, title: str | None = None) -> str:
    """Events grouped by day, newest first (the latest ``limit`` of them), under ``title``; the feed's
    links after them."""
    events = catalogue.events()
    if limit is not None:
        events = events[: limit]
    days: dict[dt.date, list[str]] = {}
    for event in events:
        days.setdefault(event.date, []).append(_event_html(event, prefix))
    groups = "".join(
        f'<li class="ainotes-day">{day_html(day)}<ul>{"".join(items)}</ul></li>' for day, items in days.items()
    )
    title = f'<p class="ainotes-whatsnew-title">{escape(title)}</p>' if title else ""
    body = f'<ol class="ainotes-whatsnew" reversed>{groups}</ol>' if groups else "<p>No notes yet.</p>"
    more = ""
    whats_new = catalogue.page_with("whats-new-page")
    if limit is not None and whats_new is not None and whats_new in catalogue.notes:
        more = f'<a href="{escape(prefix + catalogue.notes[whats_new].url, quote=True)}">Everything that changed</a> · '
    feeds = "" if catalogue.settings.site_url is None else (
        f'<p class="ainotes-feeds">{more}Follow the notes: '
        f'<a href="{prefix}feed.xml" type="application/rss+xml">RSS</a>'
        f' · <a href="{prefix}atom.xml" type="application/atom+xml">Atom</a>'
        f' · <a href="{prefix}feed.json" type="application/feed+json">JSON Feed</a></p>'
    )
    return f'<div class="ainotes-whatsnew-block">{title}{body}{feeds}</div>'


def tags_index_html(catalogue: Catalogue, prefix: str) -> str:
    """Every allowed tag, its description and its notes (a tag no note carries yet says so)."""
    sections = []
    for tag, description in sorted(catalogue.settings.tags.items()):
        notes = catalogue.tagged(tag)
        items = "".join(f"<li>{note_link(n, prefix)}</li>" for n in notes) or "<li>no note yet</li>"
        sections.append(
            f'<section class="ainotes-tag" id="tag-{slug(tag)}"><p class="ainotes-tag-name">'
            f'<span class="md-tag">{escape(tag)}</span> {escape(str(description))}</p><ul>{items}</ul></section>'
        )
    return f'<div class="ainotes-tags-index">{"".join(sections) or "<p>No tags are allowed yet.</p>"}</div>'
