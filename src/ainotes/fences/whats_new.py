"""``whats-new``: each note's creation and each of its changes, newest first, by day (optional ``limit``
and ``title``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ainotes.fences.body import BodyReader, Fence, load_body
from ainotes.fences.kind import DrawSite, FenceKind
from ainotes.html.notes import site_catalogue, whats_new_html
from ainotes.html.page import Drawn, Page, relative_prefix

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


def draw_whats_new(site: DrawSite, request: WhatsNewRequest, page: Page) -> Drawn:

    return Drawn(whats_new_html(site_catalogue(site, "whats-new"), relative_prefix(page.links_from),
                                limit=request.limit, title=request.title))


KIND = FenceKind("whats-new", parse_whats_new, draw_whats_new, chart=False)
