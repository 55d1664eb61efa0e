"""The text boxes of a Vega SVG, without a browser: each visible ``<text>``'s lines measured in the font
the package ships (advance widths, ascent and descent from the font file), placed by the group and text
transforms, so a test can count overlapping text in a still rendered by vl-convert."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass

from ainotes.charts import textsize

_SVG = "{http://www.w3.org/2000/svg}"
_TRANSLATE = re.compile(r"translate\(\s*([-\d.e]+)[ ,]+([-\d.e]+)\s*\)")
_ROTATE = re.compile(r"rotate\(\s*([-\d.e]+)")


@dataclass(frozen=True)
class TextBox:
    text: str
    left: float
    top: float
    right: float
    bottom: float


def _style(element: ET.Element) -> str:
    bold = element.get("font-weight", "normal") in ("bold", "600", "700", "800", "900")
    italic = element.get("font-style") == "italic"
    return {(False, False): "Regular", (False, True): "Italic", (True, False): "Bold", (True, True): "BoldItalic"}[
        (bold, italic)]


def _hidden(element: ET.Element) -> bool:
    return element.get("opacity") == "0" or element.get("fill-opacity") == "0" or element.get("display") == "none"


def text_boxes(svg: str) -> list[TextBox]:
    """Every visible text's box, in the SVG's pixels (lines of a multi-line text are one box)."""
    boxes: list[TextBox] = []

    def walk(element: ET.Element, x: float, y: float) -> None:
        if _hidden(element):
            return
        transform = element.get("transform", "")
        moved = _TRANSLATE.search(transform)
        if moved:
            x, y = x + float(moved.group(1)), y + float(moved.group(2))
        if element.tag == _SVG + "text":
            _add_text(element, x, y, transform, boxes)
            return
        for child in element:
            walk(child, x, y)

    walk(ET.fromstring(svg), 0.0, 0.0)
    return boxes


def _add_text(element: ET.Element, x: float, y: float, transform: str, boxes: list[TextBox]) -> None:
    spans = element.findall(_SVG + "tspan")
    lines, baseline, offsets = [], 0.0, []
    for span in spans or [element]:
        baseline += float(span.get("dy", 0) or 0) if spans else 0.0
        lines.append("".join(span.itertext()))
        offsets.append(baseline)
    if not "".join(lines).strip():
        return
    size = float(element.get("font-size", "11px").rstrip("px"))
    font = textsize.metrics(_style(element))
    width = max(font.width_px(line, size) for line in lines)
    anchor = element.get("text-anchor", "start")
    left = {"start": 0.0, "middle": -width / 2, "end": -width}[anchor]
    local = (left, offsets[0] - font.ascent_px(size), left + width, offsets[-1] + font.descent_px(size))
    rotated = _ROTATE.search(transform)
    if rotated and round(float(rotated.group(1))) % 360 == 270:  # rotate(-90): (lx, ly) → (ly, −lx)
        local = (local[1], -local[2], local[3], -local[0])
    boxes.append(TextBox(" / ".join(lines), x + local[0], y + local[1], x + local[2], y + local[3]))


def overlaps(boxes: list[TextBox], *, width: float, height: float, slack_px: float = 0.5) -> list[str]:
    """Pairs of boxes overlapping by more than ``slack_px`` both ways, and boxes leaving the picture."""
    found = []
    for i, a in enumerate(boxes):
        if a.left < -1 or a.top < -1 or a.right > width + 1 or a.bottom > height + 1:
            found.append(f"{a.text!r} leaves the picture")
        for b in boxes[i + 1:]:
            x = min(a.right, b.right) - max(a.left, b.left)
            y = min(a.bottom, b.bottom) - max(a.top, b.top)
            if x > slack_px and y > slack_px:
                found.append(f"{a.text!r} overlaps {b.text!r} by {x:.1f}×{y:.1f} px")
    return found
