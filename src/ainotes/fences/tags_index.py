"""``tags-index``: every allowed tag, its line from ``mkdocs.yml``, and the notes carrying it.
"""

from __future__ import annotations

from typing import Any

from ainotes.fences.body import BodyReader, Fence, load_body
from ainotes.fences.kind import DrawSite, FenceKind
from ainotes.html.notes import site_catalogue, tags_index_html
from ainotes.html.page import Drawn, Page, relative_prefix


def parse_tags_index(fence: Fence, where: str, presets: Any = None) -> None:
    """``tags-index`` fence: no body."""
    data, lines = load_body(fence, where)
    BodyReader(fence, where, data, (), lines)


def draw_tags_index(site: DrawSite, request: None, page: Page) -> Drawn:

    return Drawn(tags_index_html(site_catalogue(site, "tags-index"), relative_prefix(page.links_from)))


KIND = FenceKind("tags-index", parse_tags_index, draw_tags_index, chart=False)
