"""A chart type's grammar: its Vega-Lite structure, built once with altair, filled with data per chart.

Building a layered chart with altair costs a few hundred milliseconds (import and
``to_dict``); filling in data costs microseconds. So a chart type states its
structure once, in a builder that uses altair and refers to everything that varies
from chart to chart through **named datasets** and **params** (``{"expr": "x_domain"}``
for a scale's domain, a legend's ``labelExpr`` reading a lookup param, and so on).
:meth:`Grammar.spec` then returns that structure with a chart's own datasets, param
values, title and theme config put in by name: no search and replace over the text.

The structure is cached twice: in-process, and in the render cache on disk
(:func:`ainotes.base.cache.memo_json`), keyed by the chart kind, the builder's variant and
a fingerprint of the code that builds it (:func:`code_fingerprint`), so that editing
the chart module or upgrading altair rebuilds it and nothing else does.
"""

from __future__ import annotations

import copy
import functools
import hashlib
from collections.abc import Callable, Hashable, Iterable, Mapping
from importlib import metadata
from pathlib import Path
from typing import Any, Literal

from ainotes.base import cache
from ainotes.base.errors import InputError

Theme = Literal["light", "dark"]

# -- one colour per GPU, on every chart of a site ---------------------------------------------------
#
# Ten hues, each in a darker form for the light scheme and a lighter one for the dark scheme
# (the same hue in both: a reader who flips the scheme finds each GPU in its colour). Every
# colour keeps at least 3:1 contrast against its background (WCAG 2.1, 1.4.11: graphical
# objects) and any two of one scheme lie at least 20 apart in CIELAB (ΔE*76): the tests check
# both. Names for the reader of this file only.
GPU_HUES = ("blue", "vermillion", "green", "purple", "magenta", "teal", "brown", "olive", "gold", "slate")
GPU_PALETTES: dict[str, tuple[str, ...]] = {
    "light": ("#0072B2", "#D55E00", "#00855F", "#8E5CC2", "#C2407E",
              "#00838F", "#8C5A2B", "#6E7B00", "#A87800", "#5F6B85"),
    "dark": ("#56B4E9", "#FF8A4C", "#2DC58E", "#B99AF0", "#F27DB5",
             "#3CC8D4", "#D09A66", "#B5C43A", "#F0C53C", "#A7B3CC"),
}
THEME_BACKGROUNDS = {"light": "#ffffff", "dark": "#1e2129"}
_SLOT_PLACEHOLDER = "~{}"  # '~' is no preset id's character (ids: lowercase letters, digits, hyphens)


def _hash(text: str) -> int:
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "big")


def gpu_colour_slots(preset_ids: Iterable[str], fixed: Mapping[str, int] | None = None) -> dict[str, int]:
    """Each preset id's slot in :data:`GPU_PALETTES` (slot mod 10 is its colour), over every
    preset of a site, so that one GPU has one colour on every chart of it.

    Each id ranks the slots by a hash of (id, slot), its own order of preference; the ids, taken
    in the order of their own hashes, each take the first free slot on their list (rendezvous
    hashing). A colour depends on the id and the set of presets, never on a chart's order or
    subset. A preset added later takes a free slot of its choice; it moves one already there only
    when both prefer the same slot and the newcomer comes first in hash order, and the one moved
    goes to its own next choice, not its neighbour's, so the move rarely spreads. Up to ten
    presets get ten different colours; past that the table grows by ten and colours repeat.

    ``fixed`` pins ids to slots (a hue index, as a preset that names its colour would): those
    are placed first, and nothing moves them.
    """
    pinned = dict(fixed or {})
    ids = sorted(set(preset_ids) - set(pinned), key=lambda i: (_hash(i), i))
    hues = len(GPU_HUES)
    size = max(hues, -(-(len(ids) + len(pinned)) // hues) * hues)
    taken: dict[int, str] = {}
    for preset_id, slot in pinned.items():
        if slot in taken:
            raise InputError(f"GPU colours: {preset_id!r} and {taken[slot]!r} are both pinned to colour {slot}")
        taken[slot % size] = preset_id
    for preset_id in ids:
        choices = sorted(range(size), key=lambda slot: _hash(f"{preset_id}:{slot}"))
        slot = next(s for s in choices if s not in taken)
        taken[slot] = preset_id
    return {preset_id: slot for slot, preset_id in taken.items()}


def gpu_colour_domain(slots: Mapping[str, int]) -> list[str]:
    """An ordinal colour scale's domain that maps each id to ``range.category[slot]``: the
    ids at their slots, placeholders (never shown: legends list their own values) between."""
    size = max(len(GPU_HUES), max(slots.values(), default=0) + 1)
    by_slot = {slot: preset_id for preset_id, slot in slots.items()}
    return [by_slot.get(slot, _SLOT_PLACEHOLDER.format(slot)) for slot in range(size)]


def gpu_colour(preset_id: str, preset_ids: Iterable[str], theme: Theme = "light") -> str:
    """The colour of ``preset_id`` on every chart of a site whose presets are ``preset_ids``."""
    slots = gpu_colour_slots([*preset_ids, preset_id])
    return GPU_PALETTES[theme][slots[preset_id] % len(GPU_HUES)]


@functools.cache
def code_fingerprint(*sources: str) -> str:
    """SHA-256 over altair's version and the given source files (paths), in the order given."""
    digest = hashlib.sha256(metadata.version("altair").encode())
    for source in sources:
        path = Path(source)
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def whole_numbers_as_ints(value: Any) -> Any:
    """``2.25e15`` written ``2250000000000000``, not ``2250000000000000.0``: the same number in
    JSON, two bytes shorter, which over every row keeps a spec small."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    if isinstance(value, list):
        return [whole_numbers_as_ints(item) for item in value]
    if isinstance(value, dict):
        return {key: whole_numbers_as_ints(item) for key, item in value.items()}
    return value


class Grammar:
    """One chart type's structure.

    ``build(variant)`` returns the Vega-Lite dict of the chart without data: named
    datasets it reads (``{"data": {"name": ...}}``) and params it declares (their values
    are placeholders). ``variant`` is a small hashable (``()`` when the type has one
    form). ``sources`` are the files whose code decides the structure.
    """

    def __init__(self, kind: str, build: Callable[[Hashable], dict[str, Any]], *sources: str):
        self.kind = kind
        self._build = build
        self._sources = tuple(sources) or (__file__,)
        self._memo: dict[Hashable, dict[str, Any]] = {}
        self.builds = 0  # how many structures altair has built in this process (tests count with it)

    def forget(self) -> None:
        """Drop this process's structures (the disk cache keeps its own)."""
        self._memo.clear()

    def _built(self, variant: Hashable) -> dict[str, Any]:
        self.builds += 1
        return self._build(variant)

    def structure(self, variant: Hashable = (), *, cached: bool = True) -> dict[str, Any]:
        """The structure for ``variant`` (a fresh copy); ``cached=False`` runs altair again."""
        if not cached:
            return self._built(variant)
        if variant not in self._memo:

            payload = {"variant": repr(variant), "code": code_fingerprint(*self._sources, __file__)}
            # shared: a structure depends on code and altair only, so a cold render cache keeps it
            self._memo[variant] = cache.memo_json(
                f"grammar-{self.kind}", payload, lambda: self._built(variant), shared=True,
                versions={"altair": _altair_version()},
            )
        return copy.deepcopy(self._memo[variant])

    def spec(
        self,
        *,
        datasets: Mapping[str, list[dict[str, Any]]],
        params: Mapping[str, Any],
        config: Mapping[str, Any],
        variant: Hashable = (),
        top: Mapping[str, Any] | None = None,
        cached: bool = True,
        exprs: Mapping[str, str] | None = None,
    ) -> dict[str, Any]:
        """The structure with this chart's data in place.

        ``params`` sets each named param's ``value`` (a name the structure lacks is a
        programming error); ``exprs`` sets the ``expr`` of params the structure declares with
        one (expressions written for this chart's data, such as one term per GPU);
        ``config`` becomes the spec's ``config`` (the theme); ``top`` sets top-level
        properties such as ``title``.
        """
        spec = self.structure(variant, cached=cached)
        declared = {param["name"]: param for param in spec.get("params", [])}
        for name, value in params.items():
            if name not in declared:
                raise InputError(f"{self.kind} chart: the grammar has no param {name!r}")
            declared[name]["value"] = value
        for name, expr in (exprs or {}).items():
            if "expr" not in declared.get(name, {}):
                raise InputError(f"{self.kind} chart: the grammar has no expression param {name!r}")
            declared[name]["expr"] = expr
        spec.update(top or {})
        spec["datasets"] = dict(datasets)
        spec["config"] = deep_merge(spec.get("config", {}), config)
        return whole_numbers_as_ints(spec)


def deep_merge(base: Mapping[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    """``base`` with ``extra`` laid over it, dicts merged key by key (a theme's colours over
    the neutral config's sizes and fonts)."""
    merged = dict(base)
    for key, value in extra.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


@functools.cache
def _altair_version() -> str:
    from importlib.metadata import version

    return version("altair")
