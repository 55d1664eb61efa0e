"""The notes' own lists: what is new, the tags index, and the line of dates and tags under a title.

Two fences, drawn from the build's notes catalogue (:mod:`ainotes.notes.meta`), so every
builder shows the same lists:

* ``whats-new``: each note's creation and each of its changes, newest first, by date;
  optional ``limit`` (the home page shows the latest few) and ``title``;
* ``tags-index``: every allowed tag, its line from ``mkdocs.yml``, and the notes carrying it.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from html import escape
from typing import Any

from ainotes.base.errors import InputError
from ainotes.fences.body import BodyReader, Fence, load_body
from ainotes.notes.meta import Catalogue, Event, Note, known_catalogue, slug

MAX_LIMIT = 500


@dataclass(frozen=True)
class WhatsNewRequest:
    limit: int | None
    title: str | None


def parse_whats_new(fence: Fence, where: str, presets: Any = None) -> WhatsNewRequest:
    """``whats-new`` fence: optional ``limit`` (events shown, 1 to 500; default all) and ``title``."""
    data, lines = load_body(fence, where)
    reader = BodyReader(fence, where, data, ("limit", "title"), lines)
    limit = reader.integer("limit", MAX_LIMIT, 1, MAX_LIMIT) if "limit" in data else None
    return WhatsNewRequest(limit, reader.text("title"))


def parse_tags_index(fence: Fence, where: str, presets: Any = None) -> None:
    """``tags-index`` fence: no body."""
    data, lines = load_body(fence, where)
    BodyReader(fence, where, data, (), lines)


def _catalogue(site: Any, kind: str) -> Catalogue:
    catalogue = known_catalogue(site)
    if catalogue is None:
        raise InputError(f"the {kind} fence needs the notes catalogue, which this build has not read "
                         "(convert the page with the site's docs folder known)")
    return catalogue


def day_html(day: dt.date) -> str:
    return f'<time datetime="{day.isoformat()}">{day.day} {day:%b} {day.year}</time>'


def note_link(note: Note, prefix: str) -> str:
    return f'<a href="{escape(prefix + note.url, quote=True)}">{escape(note.title)}</a>'


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


def whats_new_html(catalogue: Catalogue, request: WhatsNewRequest, prefix: str) -> str:
    """Events grouped by day, newest first; the feed's links after them."""
    events = catalogue.events()
    if request.limit is not None:
        events = events[: request.limit]
    days: dict[dt.date, list[str]] = {}
    for event in events:
        days.setdefault(event.date, []).append(_event_html(event, prefix))
    groups = "".join(
        f'<li class="ainotes-day">{day_html(day)}<ul>{"".join(items)}</ul></li>' for day, items in days.items()
    )
    title = f'<p class="ainotes-whatsnew-title">{escape(request.title)}</p>' if request.title else ""
    body = f'<ol class="ainotes-whatsnew" reversed>{groups}</ol>' if groups else "<p>No notes yet.</p>"
    more = ""
    whats_new = catalogue.page_with("whats-new-page")
    if request.limit is not None and whats_new is not None and whats_new in catalogue.notes:
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


# Drawers for the fence table (ainotes.build.site.FENCE_KINDS): (site, request, page) → Drawn


def draw_whats_new(site: Any, request: WhatsNewRequest, page: Any) -> Any:
    from ainotes.html.page import Drawn, relative_prefix

    return Drawn(whats_new_html(_catalogue(site, "whats-new"), request, relative_prefix(page.links_from)))


def draw_tags_index(site: Any, request: None, page: Any) -> Any:
    from ainotes.html.page import Drawn, relative_prefix

    return Drawn(tags_index_html(_catalogue(site, "tags-index"), relative_prefix(page.links_from)))
