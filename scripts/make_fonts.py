"""Make src/ainotes/assets/fonts/ from Debian's fonts-liberation2 files: Liberation Sans, renamed.

The charts are laid out and drawn in one font that the package ships, so that a build gives the same
bytes on any machine. A machine may have Liberation Sans installed in another version (Debian's
fonts-liberation is 1.07): a renderer that finds two fonts of one name may take either. So the
shipped files are Liberation Sans 2.1.5 under a family name of their own, "ainotes Sans": only
their name records change. That makes them a Modified Version under the SIL Open Font License,
which keeps the licence and forbids the Reserved Font Names (Liberation, Arimo, Tinos, Cousine);
THIRD_PARTY_NOTICES.txt says so.

Run with fontTools installed (not a dependency of ainotes):

    python scripts/make_fonts.py /usr/share/fonts/truetype/liberation2 src/ainotes/assets/fonts

The output is deterministic: no timestamp is changed.
"""

from __future__ import annotations

import sys
from pathlib import Path

from fontTools.ttLib import TTFont

FAMILY = "ainotes Sans"
POSTSCRIPT = "ainotesSans"
STYLES = {"Regular": "Regular", "Bold": "Bold", "Italic": "Italic", "BoldItalic": "Bold Italic"}


def rename(source: Path, target: Path, style_key: str) -> None:
    """``source`` with its family, full, PostScript and unique names made ainotes Sans."""
    font = TTFont(source, recalcTimestamp=False)
    style = STYLES[style_key]
    names = {1: FAMILY, 3: f"{FAMILY} {style}, a Modified Version of 2.1.5", 4: f"{FAMILY} {style}",
             6: f"{POSTSCRIPT}-{style_key}", 16: FAMILY}
    table = font["name"]
    for record in list(table.names):
        if record.nameID in names:
            table.setName(names[record.nameID], record.nameID, record.platformID, record.platEncID, record.langID)
        elif record.nameID in {21, 22}:  # WWS names, if any, would keep the old family
            table.removeNames(nameID=record.nameID)
    font.save(target)


def main(argv: list[str]) -> int:
    source_dir, target_dir = Path(argv[0]), Path(argv[1])
    target_dir.mkdir(parents=True, exist_ok=True)
    for style_key in STYLES:
        rename(source_dir / f"LiberationSans-{style_key}.ttf", target_dir / f"ainotesSans-{style_key}.ttf", style_key)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
