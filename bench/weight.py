"""Page weight: the bytes a built page is, and the bytes of script it makes a browser load."""

from __future__ import annotations

import gzip
import re
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

# gzip -9, what a static host that precompresses would serve; servers compressing
# on the fly often use level 6, which is a few per cent larger.
GZIP_LEVEL = 9
_INLINE_SVG = re.compile(r"<svg\b.*?</svg>", re.S | re.I)


def gzipped_size(data: bytes) -> int:
    """Bytes of ``data`` after gzip at :data:`GZIP_LEVEL` (mtime fixed, so the size is repeatable)."""
    return len(gzip.compress(data, compresslevel=GZIP_LEVEL, mtime=0))


@dataclass(frozen=True)
class Weight:
    raw_bytes: int
    gzip_bytes: int

    @classmethod
    def of(cls, data: bytes) -> Weight:
        return cls(len(data), gzipped_size(data) if data else 0)


@dataclass(frozen=True)
class PageWeight:
    """One built page: its HTML, the external scripts it loads, the SVG inlined in it."""

    url: str
    html: Weight
    scripts: Weight  # every <script src> of the page: raw bytes summed, each file gzipped on its own and summed
    script_sources: tuple[str, ...]  # as written in the page, relative to it
    inline_svg: Weight
    inline_svg_count: int


class _ScriptSources(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.sources: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag == "script":
            src = dict(attrs).get("src")
            if src:
                self.sources.append(src)


def script_sources(html_text: str) -> list[str]:
    parser = _ScriptSources()
    parser.feed(html_text)
    return parser.sources


def page_weight(site: Path, url: str) -> PageWeight:
    """Weigh the page at ``url`` (``""`` for home, ``"roofline/"``) of the built ``site``.

    Script sources are followed relative to the page, as a browser would;
    each file is gzipped on its own (as it is served) and the sizes summed.
    """
    page_file = site / url / "index.html"
    data = page_file.read_bytes()
    text = data.decode("utf-8")
    raw = gz = 0
    sources = script_sources(text)
    for src in sources:
        parts = urlsplit(src)
        if parts.scheme or parts.netloc:
            raise ValueError(f"{url or 'home'}: loads a script from outside the site: {src}")
        path = (page_file.parent / unquote(parts.path)).resolve()
        body = path.read_bytes()
        raw += len(body)
        gz += gzipped_size(body)
    svgs = _INLINE_SVG.findall(text)
    svg_bytes = "".join(svgs).encode("utf-8")
    return PageWeight(
        url=url,
        html=Weight.of(data),
        scripts=Weight(raw, gz),
        script_sources=tuple(sources),
        inline_svg=Weight.of(svg_bytes),
        inline_svg_count=len(svgs),
    )
