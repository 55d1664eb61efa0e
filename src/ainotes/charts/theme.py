"""Every chart's colours and fonts, in one place: the neutral colours all charts share, each chart's
own colours and palette, one colour per GPU on every chart of a site, and :class:`ChartTheme`, which
turns a chart's layout and its use of the colours into its Vega-Lite ``config`` per scheme.

The light and dark specs of a chart differ in their ``config`` alone (the grammar puts it in by name,
:meth:`ainotes.charts.grammar.Grammar.spec`), so a chart's theme is defined once, here or in its
module from the colours here, and asked for by scheme: ``THEME.config("dark")``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ainotes.base.errors import InputError
from ainotes.base.fonts import FONT_FAMILY
from ainotes.base.textcheck import short
from ainotes.charts.grammar import deep_merge

Theme = Literal["light", "dark"]
SCHEMES: tuple[Theme, ...] = ("light", "dark")

# Every chart's text: the font the package ships (ainotes/assets/fonts, Liberation Sans 2.1.5 under a
# name of its own), which the renderer measures and the site serves (assets/charts.css, @font-face),
# so a still is laid out, and a page shows it, in one font on any machine. Arial has its metrics,
# should a browser not load it.
FONT = f"'{FONT_FAMILY}', Arial, Helvetica, sans-serif"

THEME_BACKGROUNDS = {"light": "#ffffff", "dark": "#1e2129"}
# The colours every chart shares. Dark: Material's slate scheme (--md-default-bg-color hsl(232 15% 14%),
# text hsl(232 75% 95% / .82)).
NEUTRALS: dict[str, dict[str, str]] = {
    "light": {"background": THEME_BACKGROUNDS["light"], "text": "#1f2329", "muted": "#5c6370", "grid": "#e3e5e8",
              "domain": "#9aa0a8", "marker_stroke": "#ffffff"},
    "dark": {"background": THEME_BACKGROUNDS["dark"], "text": "#e2e4e9", "muted": "#a3a9b7", "grid": "#323744",
             "domain": "#6b7180", "marker_stroke": "#1e2129"},
}

# -- one colour per GPU, on every chart of a site ---------------------------------------------------
#
# Ten hues, each in a darker form for the light scheme and a lighter one for the dark scheme
# (the same hue in both: a reader who flips the scheme finds each GPU in its colour). Every
# colour keeps at least 3:1 contrast against its background (WCAG 2.1, 1.4.11: graphical
# objects), any two of one scheme lie at least 15 apart in CIEDE2000 (ΔE00, which weighs hue as
# a reader does: ΔE*76 at 20 let a blue and a slate through), and at most three take a cool hue
# (blue, green, purple: a green beside a teal, a blue beside a slate read as one colour in thin
# lines); the tenth is a neutral grey. The tests check all three. Names for the reader of this file only.
GPU_HUES = ("blue", "vermillion", "green", "purple", "magenta", "crimson", "brown", "olive", "gold", "grey")
GPU_PALETTES: dict[str, tuple[str, ...]] = {
    "light": ("#0072B2", "#D55E00", "#00855F", "#8E5CC2", "#C2407E",
              "#B3132C", "#8C5A2B", "#6E7B00", "#A87800", "#6B6B6B"),
    "dark": ("#56B4E9", "#FF8A4C", "#2DC58E", "#B99AF0", "#F27DB5",
             "#FF6B6B", "#A8815E", "#B5C43A", "#F0C53C", "#B3B3B3"),
}
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


# -- each chart's own colours -------------------------------------------------------------------------
#
# Okabe & Ito's colour-blind-safe palette; dark mode takes the lighter member of a pair where it reads better.
COST_COLOURS = {"light": {"band": "#eef0f3"}, "dark": {"band": "#2a2e38"}}
COST_PALETTES = {"light": ("#0072B2", "#D55E00", "#009E73", "#CC79A7"),
                 "dark": ("#56B4E9", "#E69F00", "#009E73", "#CC79A7")}
INFERENCE_COLOURS = {"light": {"memory": "#f3f5f8", "compute": "#fdf0e6"},
                     "dark": {"memory": "#252933", "compute": "#3a2e25"}}
INFERENCE_PALETTES = {"light": ("#1f2329", "#0072B2", "#009E73", "#D55E00", "#CC79A7"),
                      "dark": ("#e2e4e9", "#56B4E9", "#009E73", "#E69F00", "#CC79A7")}
MEMORY_COLOURS = {"light": {"capacity": "#1f2329"}, "dark": {"capacity": "#e2e4e9"}}
MEMORY_PALETTES = {"light": ("#0072B2", "#56B4E9", "#E69F00", "#009E73"),
                   "dark": ("#3d8fd1", "#8fd0f5", "#E69F00", "#2fbf8f")}

Colours = Mapping[str, str]


@dataclass(frozen=True)
class ChartTheme:
    """One chart's look in both schemes.

    * ``name``: the chart, as an error about a bad theme names it;
    * ``layout``: its config without colours (fonts, sizes, anchors);
    * ``palettes``: its ``range.category`` per scheme;
    * ``paint(colours)``: its own config that takes colours (named styles, subtitle colours), from the
      scheme's :data:`NEUTRALS` with ``colours`` (its own, per scheme) over them;

    and every chart's axes, legend labels, title, view outline and background in the neutral colours.
    """

    name: str
    layout: Mapping[str, Any]
    palettes: Mapping[str, Sequence[str]]
    paint: Callable[[Colours], dict[str, Any]]
    colours: Mapping[str, Colours] = field(default_factory=dict)

    def colours_of(self, theme: str) -> dict[str, str]:
        """The scheme's colours by name: the neutrals with the chart's own over them."""
        if theme not in SCHEMES:
            raise InputError(f"{self.name} chart: 'theme' must be 'light' or 'dark': {short(theme)}")
        return {**NEUTRALS[theme], **self.colours.get(theme, {})}

    def config(self, theme: str) -> dict[str, Any]:
        """The Vega-Lite ``config`` of the chart in ``theme``: every colour it uses."""
        c = self.colours_of(theme)
        shared = {
            "background": c["background"], "font": FONT, "view": {"stroke": c["grid"]},
            "range": {"category": list(self.palettes[theme])},
            "axis": {"labelColor": c["muted"], "titleColor": c["text"], "gridColor": c["grid"],
                     "domainColor": c["domain"], "tickColor": c["domain"]},
            "legend": {"labelColor": c["text"]},
            "title": {"color": c["text"]},
        }
        return deep_merge(deep_merge(self.layout, shared), self.paint(c))

    def colour_swap(self) -> dict[str, str]:
        """Each light colour (lower case) → its dark counterpart, the palette's included: what recolours
        a light picture dark when the two differ in colours alone."""
        light, dark = self.colours_of("light"), self.colours_of("dark")
        swap = {light[key].lower(): dark[key] for key in light}
        swap.update((a.lower(), b) for a, b in zip(self.palettes["light"], self.palettes["dark"], strict=True))
        return swap
