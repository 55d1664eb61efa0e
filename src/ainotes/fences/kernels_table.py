"""``kernels-table``: each kernel's FLOPs, bytes, arithmetic intensity and attainable rate on the
fence's presets.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ainotes.core.hardware import Preset
from ainotes.core.kernels import Kernel
from ainotes.fences.body import BodyReader, Fence, load_body
from ainotes.fences.kind import DrawSite, FenceKind
from ainotes.fences.roofline import read_kernels
from ainotes.html import tables
from ainotes.html.page import Drawn, Page


@dataclass(frozen=True)
class KernelsTableRequest:
    kernels: tuple[Kernel, ...]
    preset_ids: tuple[str, ...]


def parse_kernels_table(fence: Fence, where: str, presets: Mapping[str, Preset]) -> KernelsTableRequest:
    """``kernels-table`` fence: ``kernels`` (specs) and optional ``presets`` to show bounds on."""
    data, lines = load_body(fence, where)
    reader = BodyReader(fence, where, data, ("kernels", "presets"), lines)
    kernels = read_kernels(reader, data.get("kernels"))
    if not kernels:
        reader.fail("kernels", "'kernels' must list at least one kernel spec")
    return KernelsTableRequest(kernels, reader.preset_ids(tuple(presets)))


def _draw_kernels_table(site: DrawSite, request: KernelsTableRequest, page: Page) -> Drawn:
    return Drawn(tables.kernels_table_html(request.kernels, [site.presets_by_id[i] for i in request.preset_ids]))


KIND = FenceKind("kernels-table", parse_kernels_table, _draw_kernels_table, pure=True)
