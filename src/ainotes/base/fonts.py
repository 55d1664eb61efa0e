"""The font every chart is measured and drawn in: the package ships it (``ainotes/assets/fonts``,
Liberation Sans 2.1.5 under a name of its own), the renderer registers it with vl-convert, the charts
name it and the site serves it, so a still looks the same whatever fonts the machine has."""

from __future__ import annotations

FONT_FAMILY = "ainotes Sans"
