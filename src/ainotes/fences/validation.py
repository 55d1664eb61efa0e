"""``validation``: published measurements beside the core's estimate of the same run, with the error.

Body keys, both optional: ``rows`` (a list of row keys from :data:`ainotes.core.validation.PUBLISHED`;
default: all, in that order) and ``title``. Every estimate is computed from the presets when the page
is built (:func:`ainotes.core.validation.validation_rows`); a row whose error passes the stated
tolerance is marked in the table, and a row whose presets are missing says which.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from html import escape

from ainotes.base.textcheck import short
from ainotes.core.hardware import Preset
from ainotes.core.validation import PUBLISHED, TOLERANCE, Presets, ValidationRow, validation_rows
from ainotes.fences.body import BodyReader, Fence, load_body
from ainotes.fences.kind import DrawSite, FenceKind
from ainotes.html import tables
from ainotes.html.page import Drawn, Page

_KEYS = tuple(row.key for row in PUBLISHED)


@dataclass(frozen=True)
class ValidationRequest:
    """The row keys to show, in order, and an optional title; ``preset_ids`` and ``link_id`` for backlinks."""

    rows: tuple[str, ...]
    title: str | None
    preset_ids: tuple[str, ...] = ()


def parse_validation(fence: Fence, where: str, presets: Mapping[str, Preset]) -> ValidationRequest:
    data, lines = load_body(fence, where)
    reader = BodyReader(fence, where, data, ("rows", "title"), lines)
    value = data.get("rows")
    if value is None:
        chosen = _KEYS
    else:
        if not isinstance(value, list) or not value:
            reader.fail("rows", f"'rows' must be a list of row keys ({', '.join(_KEYS)}): {short(value)}")
        for index, key in enumerate(value):
            if key not in _KEYS:
                reader.fail("rows", f"unknown row {short(key)} (known: {', '.join(_KEYS)})", item=index)
        chosen = tuple(dict.fromkeys(value))
    needs = {need.split(":", 1)[1] for row in PUBLISHED if row.key in chosen for need in row.needs
             if need.startswith("gpu:")}
    return ValidationRequest(chosen, reader.text("title"), tuple(sorted(needs & set(presets))))


def _value(value: float | None, unit: str) -> str:
    if value is None:
        return "—"
    if unit == "fraction":
        return f"{value * 100:.1f} %"
    if unit == "GPU-hours":
        return f"{value:,.0f}"
    return f"{value:.4g} {unit}"


def _error_cell(row: ValidationRow) -> str:
    if row.error is None:
        return escape(f"needs {', '.join(m.split(':', 1)[1] for m in row.missing)}")
    text = escape(f"{row.error * 100:+.1f} %")
    if row.beyond_tolerance:
        return f'<strong class="ainotes-validation__beyond">{text} (beyond ±{TOLERANCE * 100:.0f} %)</strong>'
    return text


def validation_html(rows: tuple[ValidationRow, ...], title: str | None) -> str:
    head = ["run", "source, and how the estimate is made", "quantity", "measured", "estimate", "error"]
    body = []
    for row in rows:
        published = row.published
        how = row.how + (f". {published.note}" if published.note else "")
        body.append([escape(published.name) + f"<br><small>{escape(published.run)}</small>",
                     tables.safe_link(published.source, published.url) + f"<br><small>{escape(how)}</small>",
                     escape(published.quantity), escape(_value(published.measured, published.unit)),
                     escape(_value(row.estimate, published.unit)), _error_cell(row)])
    caption = (f'<p class="ainotes-validation__title">{escape(title)}</p>' if title else "") + (
        f'<p class="ainotes-table-key">error = estimate ÷ measured − 1; rows beyond ±{TOLERANCE * 100:.0f} % are '
        "marked. Every estimate is computed from the presets when the site is built.</p>")
    table = tables.notes_table(head, body, "ainotes-validation-table", numeric_from=3,
                               labels=["run", "source", *head[2:]])
    return f'<div class="ainotes-validation">{caption}{table}</div>'


def _draw_validation(site: DrawSite, request: ValidationRequest, page: Page) -> Drawn:
    needs = {need.split(":", 1)[0] for row in PUBLISHED if row.key in request.rows for need in row.needs}
    # Each preset folder is read only if a row needs it (a site without models has no models folder).
    presets = Presets(site.presets_by_id, site.links() if "link" in needs else {},
                      site.models() if "model" in needs else {})
    return Drawn(validation_html(validation_rows(presets, request.rows), request.title))


KIND = FenceKind("validation", parse_validation, _draw_validation, chart=False)
