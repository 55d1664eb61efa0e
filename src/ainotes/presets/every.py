"""Every preset a presets folder holds, and which kind a preset file is.

* :func:`load_every_preset`: the link and model folders beside the GPU presets, each loaded whole where
  it exists, so that a build checks every preset file and not only those a page happens to use (a broken
  model preset that no page names stops a strict build as a broken GPU preset does).
* :func:`file_kind`: whether one file is a GPU, link or model preset: by its folder (``links/``,
  ``models/``) where that says, else by its keys, so that ``ainotes validate`` checks a model file kept
  elsewhere as a model.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ainotes.base.errors import InputError
from ainotes.base.files import path_state
from ainotes.core.links import Link
from ainotes.core.models import ModelPreset
from ainotes.presets import links, models
from ainotes.presets.folder import parse_yaml

__all__ = ["EveryPreset", "FileKind", "file_kind", "load_every_preset"]

FileKind = Literal["gpu", "link", "model"]
# Keys only one kind of file has (a GPU preset's are the rest): a file holding one is that kind.
_MODEL_ONLY_KEYS = frozenset(models.REQUIRED_KEYS + models.OPTIONAL_KEYS) - {"name", "sources", "notes"}
_LINK_ONLY_KEYS = frozenset(links.REQUIRED_KEYS + links.OPTIONAL_KEYS) - {"name", "sources", "notes"}


@dataclass(frozen=True)
class EveryPreset:
    """The links and models of a presets folder by id; ``None`` for a subfolder that does not exist
    (a site without links or models: a page that asks for one then says the folder is missing)."""

    links: dict[str, Link] | None
    models: dict[str, ModelPreset] | None


def load_every_preset(presets_dir: str | Path) -> EveryPreset:
    """Load ``<presets_dir>/links`` and ``<presets_dir>/models`` whole, where they exist; the first
    broken file is one :class:`InputError` line naming it (the GPU presets are
    :func:`ainotes.presets.gpus.load_presets`')."""
    links_dir, models_dir = links.default_links_dir(presets_dir), models.default_models_dir(presets_dir)
    found_links = ({link.id: link for link in links.load_links(links_dir)}
                   if path_state(links_dir) != "missing" else None)
    found_models = ({model.id: model for model in models.load_models(models_dir)}
                    if path_state(models_dir) != "missing" else None)
    return EveryPreset(found_links, found_models)


def file_kind(path: str | Path) -> FileKind:
    """``"link"`` or ``"model"`` for a file in a ``links/`` or ``models/`` folder, or elsewhere one whose
    keys only a link (``bandwidth_gbps``, ``latency_us``) or a model (``layers``, ``d_model``, ...) has;
    else ``"gpu"``. A file that cannot be read is ``"gpu"`` unless its folder says otherwise: its loader
    then gives the one-line reason."""
    path = Path(path)
    if links.is_link_path(path):
        return "link"
    if models.is_model_path(path):
        return "model"
    try:
        data = parse_yaml(path, str(path))
    except InputError:
        return "gpu"
    keys = {key for key in data if isinstance(key, str)} if isinstance(data, dict) else set()
    if keys & _MODEL_ONLY_KEYS:
        return "model"
    if keys & _LINK_ONLY_KEYS:
        return "link"
    return "gpu"
