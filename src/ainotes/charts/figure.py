"""What a chart module hands the page: one :class:`VegaFigure`, everything a Vega figure is drawn from.

A chart module turns core values into this one value; :mod:`ainotes.html.figure` turns it into the
page's figure, its embed files and its downloads (the renders, the stills, the live view's specs and
the snippets), the same way for every chart. A chart module knows nothing of pages, files or
vl-convert; the drawer knows nothing of any one chart.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Recolour:
    """How a chart makes its dark pictures from its light ones without a second Vega run: ``svg``
    recolours a rendered still, ``vega`` the compiled live view (the two themes differ only in
    colours, so the layout is the light one's)."""

    svg: Callable[[str], str]
    vega: Callable[[dict[str, Any]], dict[str, Any]]


@dataclass(frozen=True)
class Explorer:
    """The page around a chart that has more than a picture: a text alternative for the picture
    (``summary_text``, for screen readers), the form a script wires to the view and the chart's
    data as tables (``controls_html(chart_id)``, ``tables_html(chart_id)``)."""

    summary_text: str
    controls_html: Callable[[str], str]
    tables_html: Callable[[str], str]


@dataclass(frozen=True)
class VegaFigure:
    """One Vega-Lite chart as a page shows it.

    * ``light`` and ``dark``: the chart in each colour scheme (``dark`` ``None``: one scheme only,
      for a standalone page with no dark view);
    * ``narrow``: the phone-sized specs whose stills a narrow screen shows: the light one, and the
      dark one unless ``recolour`` makes it from the light one;
    * ``caption_html``: trusted HTML (the chart module escapes what it puts in it);
    * ``snippet_title``: what the embed snippets call the chart (alt text, iframe title); ``None``:
      the spec's own title;
    * ``recolour``: the dark still and live view made from the light ones (:class:`Recolour`);
      ``None``: rendered from ``dark``;
    * ``explorer``: the text alternative, form and tables beside the picture (:class:`Explorer`);
    * ``narrow_file``: the phone still is one of the chart's files: a download, and shown on its
      standalone page;
    * ``stylesheet``: an asset under ``assets/ainotes/`` the in-page figure links, whose CSS
      lays out the controls (the figure then reserves no rows for them), and ``css_class``, the
      figure's class for it.
    """

    light: dict[str, Any]
    dark: dict[str, Any] | None
    caption_html: str = ""
    narrow: tuple[dict[str, Any], ...] = ()
    snippet_title: str | None = None
    recolour: Recolour | None = None
    explorer: Explorer | None = None
    narrow_file: bool = False
    stylesheet: str | None = None
    css_class: str | None = None

    @property
    def dark_or_light(self) -> dict[str, Any]:
        """The dark spec, or the light one for a chart with one scheme."""
        return self.dark if self.dark is not None else self.light
