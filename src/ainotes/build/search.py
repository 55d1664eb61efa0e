"""Material's search plugin, under ``mkdocs serve``: a page whose HTML is unchanged is not parsed again.

The plugin parses the HTML of every page at every build (:class:`material.plugins.search.plugin.Parser`:
the page cut into sections at its headings, each section's title and text), and ``mkdocs serve``
builds the whole site again after each edit, though one page changed. Our pages are long (tables,
MathML), so this parse was about a quarter of a rebuild after a prose edit (cProfile; bench/RESULTS.md).

:func:`keep_search_parses` puts a subclass in the plugin's module that keeps each parse's sections
(pickled, so that the plugin's changes to them, a title filled in from the page, never reach the
next build), keyed by the SHA-256 of the HTML fed: the parse is a function of that text alone, so the
search index is byte for byte a clean build's. A chart figure's placeholder
(:data:`ainotes.build.site.DEFERRED_FIGURE`) carries a nonce that differs at each build, so the key
is taken with placeholders written the same; a parse whose sections hold a placeholder's text (the
figure's section is ``data-search-exclude``, so none does) is not kept. Only ``hooks/notes.py``'s ``on_startup`` for
``serve`` calls it; a plain build parses every page as the plugin does.

The sections are also kept in the render cache (as JSON: each section's element, depth, text, title and
id), keyed by the same digest, Material's version and our code's fingerprint, so that ``make serve``
started again parses only the pages that changed since (about a third of a second of its start on our
pages).
"""

from __future__ import annotations

import hashlib
import json
import pickle  # nosec: our own pickles of the plugin's sections, in memory only, never read from disk
from collections import OrderedDict
from importlib import metadata
from typing import Any

from ainotes.base import cache
from ainotes.base.cache import code_fingerprint
from ainotes.build.site import DEFERRED_FIGURE

MAX_PAGES = 1024  # parses kept (one per page's HTML met); a section list pickles to a few kB
_PARSED: OrderedDict[str, bytes] = OrderedDict()


def keep_search_parses() -> bool:
    """Make Material's search plugin reuse the parse of HTML it has met; ``False`` without Material."""
    try:
        from material.plugins.search import plugin as search  # type: ignore[import-untyped]
    except ImportError:
        return False
    base: Any = search.Parser
    if getattr(base, "ainotes_kept", False):
        return True

    class KeptParser(base):  # Material's parser (Any to the type checker: it ships no types)
        """The plugin's parser; ``close()`` parses what was fed unless the same HTML was parsed before."""

        ainotes_kept = True

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.fed: list[str] = []

        def feed(self, data: str) -> None:
            self.fed.append(data)

        def close(self) -> None:
            html = "".join(self.fed)
            same = DEFERRED_FIGURE.sub(lambda m: m.group(0)[:19], html)  # the nonce left out
            key = hashlib.sha256(same.encode("utf-8", "surrogatepass")).hexdigest()
            kept = _PARSED.get(key)
            if kept is not None:
                _PARSED.move_to_end(key)
                self.data = pickle.loads(kept)  # nosec: made by this process, just below
                return
            disk_key = cache.cache_key("search-parse", {"html": key, "material": _material_version(),
                                                        "code": code_fingerprint(), "format": _FORMAT})
            on_disk = _sections_from_json(cache.read_kept(disk_key), search)
            if on_disk is not None:
                self.data = on_disk
            else:
                base.feed(self, html)
                base.close(self)
            parsed = pickle.dumps(self.data)
            if b"ainotesfigure" not in parsed:
                _PARSED[key] = parsed
                if on_disk is None:
                    cache.keep(disk_key, _sections_json(self.data))
            while len(_PARSED) > MAX_PAGES:
                _PARSED.popitem(last=False)

    search.Parser = KeptParser
    return True


_FORMAT = 1  # of the sections' JSON below


def _material_version() -> str:
    try:
        return metadata.version("mkdocs-material")
    except metadata.PackageNotFoundError:
        return ""


def _sections_json(sections: list[Any]) -> bytes:
    """The parser's sections as JSON: ``[tag, attributes, depth (null for the parser's infinity), text, title, id]``."""
    rows = [[s.el.tag, s.el.attrs, None if s.depth == float("inf") else s.depth, s.text, s.title, s.id]
            for s in sections]
    return json.dumps(rows, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _sections_from_json(payload: bytes | None, search: Any) -> list[Any] | None:
    """The sections :func:`_sections_json` wrote, as the plugin's own objects; ``None`` for none or another layout."""
    if payload is None:
        return None
    try:
        sections = []
        for tag, attrs, depth, text, title, section_id in json.loads(payload):
            section = search.Section(search.Element(tag, attrs), float("inf") if depth is None else depth)
            section.text, section.title, section.id = text, title, section_id
            sections.append(section)
    except (ValueError, TypeError):
        return None
    return sections


def forget_search_parses() -> None:
    """Drop every kept parse (a test's clean build; a long-lived process that wants its memory back)."""
    _PARSED.clear()
