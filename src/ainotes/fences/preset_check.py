"""``preset-check``: a whole preset file in the body, shown with the loader's verdict on it.
"""

from __future__ import annotations

from collections.abc import Mapping

from ainotes.base.errors import InputError
from ainotes.core.hardware import Preset
from ainotes.fences.body import MAX_FENCE_BODY_CHARS, Fence
from ainotes.fences.kind import DrawSite, FenceKind
from ainotes.html import tables
from ainotes.html.page import Drawn, Page


def check_preset_example(fence: Fence, where: str, presets: Mapping[str, Preset]) -> str:
    """``preset-check`` fence: the body is a whole preset file, shown with the loader's verdict."""
    if len(fence.body) > MAX_FENCE_BODY_CHARS:
        raise InputError(
            f"{where}:{fence.start_line}: preset-check fence body must be at most {MAX_FENCE_BODY_CHARS} characters"
        )
    return fence.body


def _draw_preset_check(site: DrawSite, request: str, page: Page) -> Drawn:
    return Drawn(tables.preset_check_html(request))


KIND = FenceKind("preset-check", check_preset_example, _draw_preset_check, pure=True)
