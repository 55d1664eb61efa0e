"""What an inline form of the later chapters can look up: GPU presets, links and models.

:func:`ainotes.inline.figures.evaluate` hands one :class:`FormContext` to each form in
:data:`ainotes.inline.figures.CHAPTER_FORMS`, with the signature
``form(args, options, context) -> text`` (``args``: the positional words after the
form's name; ``options``: its ``key=value`` words, each key once). Links and models
are loaded only when a form first asks for them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from ainotes.base.errors import InputError
from ainotes.core.hardware import Preset, item_by_id
from ainotes.core.links import Link
from ainotes.core.models import ModelPreset

LinksLoader = Callable[[], Mapping[str, Link]]
ModelsLoader = Callable[[], Mapping[str, ModelPreset]]


@dataclass(frozen=True)
class FormContext:
    """The presets a form may name, by id; links and models through their loaders."""

    presets: Mapping[str, Preset]
    links_loader: LinksLoader | None = None
    models_loader: ModelsLoader | None = None

    def preset(self, preset_id: str) -> Preset:
        return item_by_id(self.presets.values(), preset_id, "preset")

    def links(self) -> Mapping[str, Link]:
        if self.links_loader is None:
            raise InputError("no interconnect presets are loaded here (presets/links/)")
        return self.links_loader()

    def link(self, link_id: str) -> Link:
        return item_by_id(self.links().values(), link_id, "link")

    def models(self) -> Mapping[str, ModelPreset]:
        if self.models_loader is None:
            raise InputError("no model presets are loaded here (presets/models/)")
        return self.models_loader()

    def model(self, model_id: str) -> ModelPreset:
        return item_by_id(self.models().values(), model_id, "model")


Form = Callable[[list[str], dict[str, str], FormContext], str]
