"""The fence kinds the notes can use: one module each, named once here.

Adding a kind is a module in this folder ending in ``KIND = FenceKind("name", parse, draw)``
(:mod:`ainotes.fences.kind`) and its name in :data:`FENCE_MODULES`. The Markdown extension registers
every kind here with ``pymdownx.superfences``; neither ``mkdocs.yml`` nor the hooks change.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping

from ainotes.fences.kind import FenceKind

# One line per fence kind: the module in ainotes/fences that defines its KIND. The order is the
# order of the kinds in messages and in the manifest's kind list.
FENCE_MODULES: tuple[str, ...] = (
    "roofline",
    "collective",
    "presets_table",
    "mfu_table",
    "kernels_table",
    "preset_check",
    "collective_cost",
    "links_table",
    "models_table",
    "whats_new",
    "tags_index",
    "note_cards",
    "training_memory",
    "memory_fit_table",
    "inference",
    "inference_table",
    "parallelism",
    "measured",
    "validation",
)


def _kinds(module_names: tuple[str, ...]) -> dict[str, FenceKind]:
    kinds: dict[str, FenceKind] = {}
    for module_name in module_names:
        module = importlib.import_module(f"{__package__}.{module_name}")
        kind = getattr(module, "KIND", None)
        if not isinstance(kind, FenceKind):
            raise TypeError(f"{module.__name__} is listed in FENCE_MODULES but defines no KIND = FenceKind(...)")
        if kind.name in kinds:  # two modules claiming one name: the second would silently win
            raise ValueError(f"fence kind {kind.name!r} is defined twice (the second in {module.__name__})")
        kinds[kind.name] = kind
    return kinds


FENCE_KINDS: Mapping[str, FenceKind] = _kinds(FENCE_MODULES)
CHART_KINDS: tuple[str, ...] = tuple(name for name, kind in FENCE_KINDS.items() if kind.chart)
VEGA_KINDS: tuple[str, ...] = tuple(name for name, kind in FENCE_KINDS.items() if kind.vega)
