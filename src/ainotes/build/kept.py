"""What one build leaves the next build in the same process: ``mkdocs serve`` rebuilds the whole site
after every edit, and most of what a build reads has not changed since the last one.

:class:`KeptBetweenBuilds` holds values that are functions of files alone, each with the state of
those files, and gives them to the next build only while those files are unchanged:

* the presets folder (GPU presets, links, models) with the size and modification time of every file
  in it: an unchanged folder is not parsed and checked again;
* the text of each inline figure (``{{ layout-best ... }}`` searches hundreds of layouts) and the HTML
  of each fence of a pure kind (:attr:`ainotes.fences.kind.FenceKind.pure`: tables of the presets), for
  the presets they were computed from, and the MathML of each formula;
* the notes catalogue's parts (:class:`ainotes.notes.meta.KeptCatalogue`): the git history of the
  commit checked out, each page's note and backlinks scan, the bibliography.

Inline figures, pure fences' HTML, backlinks scans and the formatted bibliography are also kept on disk,
in the render cache (:func:`on_disk`), keyed by what they are made from (the presets' bytes, a page's
text, the bibliography's bytes) and the code, so that ``make serve`` started again reads them instead of
computing them.

A rebuild gives exactly the pages a clean build gives (tests/test_serve_kept.py builds both and compares
them). Its owner says how long it lives: ``hooks/notes.py`` keeps one from MkDocs' ``on_startup`` to
``on_shutdown`` (one ``mkdocs serve``); the Markdown extension one per presets folder for builders
that run no hooks (Zensical); every other build makes its own, which lives as long as its
:class:`~ainotes.build.site.NotesSite`.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from ainotes.base import cache
from ainotes.build.drawings import code_fingerprint
from ainotes.core.hardware import Preset
from ainotes.core.links import Link
from ainotes.core.models import ModelPreset
from ainotes.notes.meta import KeptCatalogue
from ainotes.presets.every import load_every_preset
from ainotes.presets.gpus import load_presets

_T = TypeVar("_T")
_J = TypeVar("_J", str, list, dict)
FolderState = tuple[tuple[str, int, int], ...]  # (path inside the folder, size, mtime in ns) of each file


def folder_state(folder: Path) -> FolderState:
    """Every file under ``folder`` (its subfolders too), with its size and modification time; ``()`` for
    a folder that is not there."""
    found: list[tuple[str, int, int]] = []
    for root, dirs, files in os.walk(folder):
        dirs.sort()
        for name in sorted(files):
            path = Path(root, name)
            try:
                info = path.stat()
            except OSError:
                continue  # gone between the listing and the look: the loader will say what is wrong
            found.append((path.relative_to(folder).as_posix(), info.st_size, info.st_mtime_ns))
    return tuple(found)


def folder_digest(folder: Path, state: FolderState) -> str:
    """SHA-256 over the path and bytes of each file ``state`` lists, in its order."""
    digest = hashlib.sha256()
    for name, _, _ in state:
        digest.update(name.encode("utf-8") + b"\0")
        try:
            digest.update(hashlib.sha256((folder / name).read_bytes()).digest())
        except OSError:
            digest.update(b"\0unreadable")
    return digest.hexdigest()


def on_disk(kind: str, inputs: dict[str, object], compute: Callable[[], _J]) -> _J:
    """A JSON value (text, lists, mappings) that ``compute()`` gives for ``inputs`` and this code, kept in the
    render cache (:func:`ainotes.base.cache.memo_json`), so that the next process (``make serve`` started
    again) reads it instead of computing it. ``inputs`` must hold all it depends on but the code."""
    return cache.memo_json(kind, {**inputs, "code": code_fingerprint()}, compute)


@dataclass(frozen=True)
class LoadedPresets:
    """A presets folder as a build reads it, and the state of its files when it was read."""

    folder: Path  # resolved
    state: FolderState
    digest: str  # SHA-256 over every file's path and bytes: what a value kept on disk is keyed by
    presets: tuple[Preset, ...]
    links: dict[str, Link] | None  # None: no links/ folder
    models: dict[str, ModelPreset] | None  # None: no models/ folder


class KeptBetweenBuilds:
    """Values one build read or computed, for the next build of the same process (module docstring)."""

    def __init__(self) -> None:
        self.catalogue = KeptCatalogue(on_disk=on_disk)
        self._presets: dict[Path, LoadedPresets] = {}
        self._for_presets: dict[tuple[str, str], object] = {}
        self._for_presets_of: tuple[Path, FolderState] | None = None
        self._formulas: dict[tuple[str, bool], str] = {}

    def presets(self, folder: Path) -> LoadedPresets:
        """The folder's presets, links and models, read again only if a file in it changed. A broken
        file raises its :class:`~ainotes.base.errors.InputError` every time (nothing is kept of it)."""
        key = folder.resolve()
        state = folder_state(folder)
        known = self._presets.get(key)
        if known is None or known.state != state:
            presets = load_presets(folder)  # the GPU presets' error first, as a clean build gives it
            every = load_every_preset(folder)
            known = self._presets[key] = LoadedPresets(key, state, folder_digest(folder, state), presets,
                                                       every.links, every.models)
        return known

    def for_presets(self, key: tuple[str, str], presets: LoadedPresets, compute: Callable[[], _T]) -> _T:
        """A value computed from ``key`` (``("figure", body)``: an inline figure's text; ``("fence", kind +
        body)``: a pure fence's drawing) and the ``presets`` alone: ``compute()`` once while the presets
        folder is unchanged; an error is raised each time (nothing is kept of it)."""
        if (presets.folder, presets.state) != self._for_presets_of:
            self._for_presets.clear()
            self._for_presets_of = (presets.folder, presets.state)
        if key not in self._for_presets:
            self._for_presets[key] = compute()
        return self._for_presets[key]  # type: ignore[return-value]  # stored by compute() for this key

    def formula(self, latex: str, block: bool, compute: Callable[[], str]) -> str:
        """A formula's MathML (a function of its LaTeX alone): ``compute()`` once; an error is raised each time."""
        mathml = self._formulas.get((latex, block))
        if mathml is None:
            mathml = self._formulas[(latex, block)] = compute()
        return mathml
