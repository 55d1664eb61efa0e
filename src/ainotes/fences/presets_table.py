"""``presets-table``: the GPU presets with their peaks, bandwidth, ridge points and sources, and the
notes that use each.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ainotes.core.hardware import Preset
from ainotes.fences.body import BodyReader, Fence, load_body
from ainotes.fences.kind import DrawSite, FenceKind
from ainotes.html import backlinks, tables
from ainotes.html.page import Drawn, Page, relative_prefix


@dataclass(frozen=True)
class PresetsTableRequest:
    preset_ids: tuple[str, ...]


def parse_presets_table(fence: Fence, where: str, presets: Mapping[str, Preset]) -> PresetsTableRequest:
    """``presets-table`` fence: optional ``presets`` list; default all."""
    data, lines = load_body(fence, where)
    reader = BodyReader(fence, where, data, ("presets",), lines)
    return PresetsTableRequest(reader.preset_ids(tuple(presets)))


def _draw_presets_table(site: DrawSite, request: PresetsTableRequest, page: Page) -> Drawn:
    used_in = backlinks.used_in_html(site, "gpu", request.preset_ids, relative_prefix(page.links_from))
    return Drawn(tables.presets_table_html([site.presets_by_id[i] for i in request.preset_ids]) + used_in)


KIND = FenceKind("presets-table", parse_presets_table, _draw_presets_table, chart=False)
