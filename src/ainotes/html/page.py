"""The page being converted and what a fence becomes on it: :class:`Page`, :class:`Drawn`, :class:`Chart`
(with the embed files it gets), and the small helpers every drawer shares."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import orjson


@dataclass
class Chart:
    """One chart on one page, and the embed files it gets."""

    chart_id: str
    kind: str
    title: str
    page_url: str
    page_src: str
    files: dict[str, Callable[[], str | bytes]] = field(default_factory=dict)
    about: dict[str, object] = field(default_factory=dict)  # extra manifest fields, e.g. presets shown
    # Kept drawings (ainotes.build.drawings): the key this chart's drawing is kept under once its figure is
    # drawn (write_outputs then keeps its files), or the key its figure came from (its files come from
    # there too), and what draws the chart should the kept files be lost.
    kept_key: str | None = None
    kept_from: str | None = None
    redraw: Callable[[], object] | None = None

    def file_name(self, kind: str) -> str:
        """``svg`` → ``ID.svg``; ``svg-dark`` → ``ID-dark.svg``, ``svg-narrow`` → ``ID-narrow.svg``."""
        variant = kind.removeprefix("svg-") if kind.startswith("svg-") else None
        return f"{self.chart_id}-{variant}.svg" if variant else f"{self.chart_id}.{kind}"


@dataclass
class Page:
    """The page being converted: its source path (for messages), URL (for links) and what it holds.

    ``line_offset`` counts the lines a generator removed before Markdown saw the text
    (front matter), so messages give the line in the file.
    """

    src: str
    url: str
    line_offset: int = 0
    links_from: str = ""  # what the page's relative links are relative to (default: its URL)
    scripts: list[str] = field(default_factory=list)  # runtime files this page's charts need
    claimed_ids: set[str] = field(default_factory=set)  # chart ids given out on this page

    def where(self, line: int | None) -> str:
        return self.src if line is None else f"{self.src}:{line + self.line_offset}"

    def need_script(self, *names: str) -> None:
        for name in names:
            if name not in self.scripts:
                self.scripts.append(name)


@dataclass
class Drawn:
    """What a fence became: its HTML, and the chart to register if the fence stays in the page."""

    html: str
    chart: Chart | None = None
    scripts: tuple[str, ...] = ()  # runtime files the page then needs, under assets/ainotes/


def figure_section(html_text: str) -> str:
    return f'<section class="ainotes-figure" data-search-exclude>{html_text}</section>'


def relative_prefix(page_url: str) -> str:
    """The way back to the site root from a page URL: ``"roofline/"`` → ``"../"``."""
    depth = page_url.strip("/").count("/") + 1 if page_url.strip("/") else 0
    if page_url and not page_url.endswith("/"):
        depth -= 1  # "page.html" sits in its folder
    return "../" * depth


def embed_json_bytes(data: object) -> bytes:
    """An embed file's JSON: keys sorted, indented two spaces, UTF-8 (orjson: the standard
    library's indenting encoder is pure Python, a few milliseconds a spec)."""
    return orjson.dumps(data, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n"


ASSET_URL = "assets/ainotes"


EMBED_DIR = "embed"


RUNTIME_FILE = "vega.min.js"
