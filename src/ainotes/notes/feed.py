"""The notes' feeds: RSS 2.0 and Atom (written by feedgen) and JSON Feed 1.1, at the site root.

One function, :func:`write_feeds`, called after a build by ``hooks/notes.py`` (MkDocs,
ProperDocs) and by ``ainotes site-assets`` (Zensical), from the same notes catalogue the
pages were dated from. Links are absolute, from ``site_url``; without one no feed is
written (a feed reader cannot follow a relative link). Each item is one note: its title,
its summary (front matter ``description``, else its first paragraph), its link, its
created and updated dates, and its tags as categories; its id (:func:`entry_id`) stays the same
wherever the site is published. Items are ordered by update, newest first (a new note first among
those updated the same day); the feeds' own dates are the newest note's, so two builds of the same
notes write the same bytes.
"""

from __future__ import annotations

import datetime as dt
import json
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

from ainotes.base.files import write_atomic
from ainotes.notes.meta import Catalogue, Note

FEED_FILES = {"rss": "feed.xml", "atom": "atom.xml", "json": "feed.json"}
MAX_ITEMS = 50


def _moment(day: dt.date) -> dt.datetime:
    return dt.datetime(day.year, day.month, day.day, tzinfo=dt.UTC)


def _base(site_url: str) -> str:
    return site_url if site_url.endswith("/") else site_url + "/"


# The namespace of the notes' entry ids (a random UUID, drawn once): changing it re-announces every note.
_ENTRY_NAMESPACE = uuid.UUID("923d0e62-0d19-4bee-9cac-ecfe42f2bdeb")


def entry_id(note: Note) -> str:
    """The note's id in every feed: a UUID of its path in the docs folder and its creation date, so that
    publishing the site at another address, or retitling a note, re-announces nothing."""
    return f"urn:uuid:{uuid.uuid5(_ENTRY_NAMESPACE, f'{note.src}@{note.created}')}"


def feed_items(catalogue: Catalogue) -> list[Note]:
    return catalogue.listed()[:MAX_ITEMS]


def write_feeds(catalogue: Catalogue, site_dir: str | Path) -> list[str]:
    """Write the three feeds into ``site_dir``; returns the files written (none without ``site_url``)."""
    settings = catalogue.settings
    if not settings.site_url:
        return []
    base = _base(settings.site_url)
    notes = feed_items(catalogue)
    title = settings.site_name or "Notes"
    description = settings.site_description or title
    site = Path(site_dir)
    site.mkdir(parents=True, exist_ok=True)
    rss = _generator(catalogue, notes, base, FEED_FILES["rss"], title, description)
    write_atomic(site / FEED_FILES["rss"], rss.rss_str(pretty=True))
    atom = _generator(catalogue, notes, base, FEED_FILES["atom"], title, description)
    write_atomic(site / FEED_FILES["atom"], atom.atom_str(pretty=True))
    write_atomic(site / FEED_FILES["json"], json_feed(catalogue, notes, base, title, description))
    return list(FEED_FILES.values())


def _generator(catalogue: Catalogue, notes: list[Note], base: str, self_name: str, title: str,
               description: str) -> Any:
    """A feedgen FeedGenerator of ``notes`` whose self link is ``self_name``."""
    from feedgen.feed import FeedGenerator

    newest = _moment(max((n.updated for n in notes if n.updated is not None), default=dt.date(1970, 1, 1)))
    generator = FeedGenerator()
    generator.id(base)
    generator.title(title)
    generator.subtitle(description)  # RSS's description, Atom's subtitle
    generator.link(href=urljoin(base, self_name), rel="self")
    generator.link(href=base, rel="alternate")  # last: feedgen takes RSS's one <link> from the last link
    generator.language("en")
    generator.updated(newest)
    generator.lastBuildDate(newest)
    generator.generator("ainotes")
    for note in notes:
        assert note.created is not None and note.updated is not None
        link = urljoin(base, note.url)
        entry = generator.add_entry(order="append")
        entry.id(entry_id(note))
        entry.guid(entry_id(note), permalink=False)
        entry.title(note.title)
        entry.link(href=link)
        entry.summary(catalogue.summary(note))
        entry.published(_moment(note.created))
        entry.updated(_moment(note.updated))
        for tag in note.tags:
            entry.category(term=tag)
    return generator


def json_feed(catalogue: Catalogue, notes: list[Note], base: str, title: str, description: str) -> bytes:
    """JSON Feed 1.1 (jsonfeed.org/version/1.1): the same items as the XML feeds."""
    items = []
    for note in notes:
        assert note.created is not None and note.updated is not None
        link = urljoin(base, note.url)
        item: dict[str, object] = {
            "id": entry_id(note), "url": link, "title": note.title, "summary": catalogue.summary(note),
            "content_text": catalogue.summary(note),
            "date_published": _moment(note.created).isoformat(), "date_modified": _moment(note.updated).isoformat(),
        }
        if note.tags:
            item["tags"] = list(note.tags)
        items.append(item)
    feed = {"version": "https://jsonfeed.org/version/1.1", "title": title, "description": description,
            "home_page_url": base, "feed_url": urljoin(base, FEED_FILES["json"]), "language": "en", "items": items}
    return (json.dumps(feed, ensure_ascii=False, indent=2) + "\n").encode("utf-8")
