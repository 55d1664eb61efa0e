"""How wide a line of chart text is, in the font the package ships (:data:`ainotes.charts.theme.FONT`).

A chart that places its own labels (the cost chart's crossover labels, :mod:`ainotes.charts.cost_labels`)
needs the width Vega will give them. Vega measures text in the font it draws with, and every chart
names the shipped one, so the advance widths read here from the font file (``hmtx``, found through
its ``cmap``) are the ones the stills and the live chart use, kerning aside (a label keeps a margin
for that). Metrics per OpenType: advance width in font units × size ÷ ``unitsPerEm``.
"""

from __future__ import annotations

import functools
import struct
from dataclasses import dataclass
from importlib import resources
from pathlib import Path


@dataclass(frozen=True)
class FontMetrics:
    units_per_em: int
    ascender: int
    descender: int  # negative: below the baseline
    advances: dict[int, int]  # code point → advance width, font units
    fallback_advance: int  # a character the font lacks: the widest glyph, to err on the wide side

    def width_px(self, text: str, size_px: float) -> float:
        """The line's advance width at ``size_px``, without kerning."""
        units = sum(self.advances.get(ord(char), self.fallback_advance) for char in text)
        return units * size_px / self.units_per_em

    def ascent_px(self, size_px: float) -> float:
        return self.ascender * size_px / self.units_per_em

    def descent_px(self, size_px: float) -> float:
        return -self.descender * size_px / self.units_per_em


def _tables(data: bytes) -> dict[str, int]:
    count = struct.unpack(">H", data[4:6])[0]
    found = {}
    for i in range(count):
        tag, _checksum, offset, _length = struct.unpack(">4sIII", data[12 + 16 * i: 28 + 16 * i])
        found[tag.decode("latin-1")] = offset
    return found


def _cmap_format4(data: bytes, offset: int) -> dict[int, int]:
    """Code point → glyph id from a format-4 subtable (the Basic Multilingual Plane)."""
    segments = struct.unpack(">H", data[offset + 6: offset + 8])[0] // 2
    ends_at = offset + 14
    starts_at = ends_at + 2 * segments + 2
    deltas_at = starts_at + 2 * segments
    ranges_at = deltas_at + 2 * segments
    glyphs: dict[int, int] = {}
    for s in range(segments):
        end, start = (struct.unpack(">H", data[at + 2 * s: at + 2 * s + 2])[0] for at in (ends_at, starts_at))
        delta = struct.unpack(">h", data[deltas_at + 2 * s: deltas_at + 2 * s + 2])[0]
        range_offset = struct.unpack(">H", data[ranges_at + 2 * s: ranges_at + 2 * s + 2])[0]
        for code in range(start, min(end, 0xFFFE) + 1):
            if range_offset == 0:
                glyph = (code + delta) & 0xFFFF
            else:
                at = ranges_at + 2 * s + range_offset + 2 * (code - start)
                glyph = struct.unpack(">H", data[at: at + 2])[0]
                glyph = (glyph + delta) & 0xFFFF if glyph else 0
            if glyph:
                glyphs[code] = glyph
    return glyphs


def read_metrics(data: bytes) -> FontMetrics:
    """The metrics of a TrueType font file's bytes (``head``, ``hhea``, ``hmtx`` and a format-4 ``cmap``)."""
    tables = _tables(data)
    units_per_em = struct.unpack(">H", data[tables["head"] + 18: tables["head"] + 20])[0]
    hhea = tables["hhea"]
    ascender, descender = struct.unpack(">hh", data[hhea + 4: hhea + 8])
    metrics_count = struct.unpack(">H", data[hhea + 34: hhea + 36])[0]
    hmtx = tables["hmtx"]
    widths = [struct.unpack(">H", data[hmtx + 4 * i: hmtx + 4 * i + 2])[0] for i in range(metrics_count)]
    cmap = tables["cmap"]
    count = struct.unpack(">H", data[cmap + 2: cmap + 4])[0]
    glyphs: dict[int, int] = {}
    for i in range(count):
        platform, encoding, offset = struct.unpack(">HHI", data[cmap + 4 + 8 * i: cmap + 12 + 8 * i])
        at = cmap + offset
        if (platform, encoding) in ((3, 1), (0, 3)) and struct.unpack(">H", data[at: at + 2])[0] == 4:
            glyphs = _cmap_format4(data, at)
            break
    advances = {code: widths[min(glyph, metrics_count - 1)] for code, glyph in glyphs.items()}
    return FontMetrics(units_per_em, ascender, descender, advances, max(widths))


def metrics_path(style: str = "Regular") -> Path:
    """The shipped font file of ``style``."""
    return Path(str(resources.files("ainotes") / "assets" / "fonts" / f"ainotesSans-{style}.ttf"))


@functools.cache
def metrics(style: str = "Regular") -> FontMetrics:
    """The shipped font's metrics: ``style`` ``"Regular"``, ``"Italic"``, ``"Bold"`` or ``"BoldItalic"``."""
    return read_metrics(metrics_path(style).read_bytes())


def width_px(text: str, size_px: float, style: str = "Regular") -> float:
    """``text`` on one line at ``size_px`` in the shipped font, in px."""
    return metrics(style).width_px(text, size_px)
