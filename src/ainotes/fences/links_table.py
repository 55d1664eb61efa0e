"""``links-table``: the interconnect presets with their bandwidth, latency and sources, and the notes
that use each.
"""

from __future__ import annotations

from collections.abc import Mapping

from ainotes.core.hardware import Preset
from ainotes.fences.body import BodyReader, Fence, load_body
from ainotes.fences.kind import DrawSite, FenceKind
from ainotes.html import backlinks, tables
from ainotes.html.page import Drawn, Page, relative_prefix


def parse_links_table(fence: Fence, where: str, presets: Mapping[str, Preset] | None = None) -> None:
    """``links-table`` fence: no body (every link in ``presets/links`` is listed)."""

    data, lines = load_body(fence, where)
    BodyReader(fence, where, data, (), lines)


def _draw_links_table(site: DrawSite, request: None, page: Page) -> Drawn:
    used_in = backlinks.used_in_html(site, "link", site.links(), relative_prefix(page.links_from))
    return Drawn(tables.links_table_html(tuple(site.links().values())) + used_in)


KIND = FenceKind("links-table", parse_links_table, _draw_links_table, chart=False)
