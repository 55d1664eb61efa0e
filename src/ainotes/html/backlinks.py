"""Which notes draw on which presets: found in the fences and inline forms the build resolves.

Every page is read once per build (:func:`ainotes.markdown.extension.backlinks_scanner`, called by
the notes catalogue): Markdown itself finds its fences and inline forms (the extension, with a site
that draws nothing, so a fence shown as code is not counted), each fence body goes through its kind's
own parser (:data:`ainotes.fences.registry.FENCE_KINDS`), and
the request it returns names the presets: fields called ``preset_ids`` / ``preset_id``
(GPU presets), ``link_id`` (interconnects) or ``model_id`` / ``model_ids`` (models), at any
depth (an ``mfu-table``'s jobs). An inline form names a preset by a positional word that is
a preset id (``{{ ridge h100 }}``) or by ``preset=``, ``link=``, ``model=``.

Not counted: the ``presets-table`` and ``links-table`` fences (they are the catalogues on
which the backlinks are shown) and the forms that list every preset (``{{ presets }}``).

Adding a kind of preset (models): one :class:`UseKind` in :data:`USE_KINDS` saying how to
look its entries up on a build (``site.models()``, say) and which table fence lists them;
requests that name it in a ``model_id`` field are then found as they are.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from html import escape
from typing import Any

from ainotes.base.errors import InputError
from ainotes.html.notes import note_link
from ainotes.html.tables import safe_link
from ainotes.notes import meta as notes_meta

Use = tuple[str, str]  # (kind, id): ("gpu", "h100"), ("link", "nvlink-4"), ("model", "palm-540b")

_FIELD_KINDS = {"preset_ids": "gpu", "preset_id": "gpu", "link_id": "link", "model_id": "model",
                "model_ids": "model"}
_OPTION_KINDS = {"preset": "gpu", "link": "link", "model": "model"}
CATALOGUE_FENCES = frozenset({"presets-table", "links-table", "models-table"})
_LISTING_FORMS = frozenset({"presets", "preset-count", "ridges"})


@dataclass(frozen=True)
class UseKind:
    """One kind of thing a note draws on, and where the site lists them."""

    kind: str
    heading: str  # "GPU presets"
    table_fence: str  # the fence whose table lists them (the backlinks' anchors sit there)
    anchor: str  # id prefix of an entry's row: "preset-" → #preset-h100
    entries: Callable[[Any], Mapping[str, Any]]  # site → id → object with .name and .sources


USE_KINDS: dict[str, UseKind] = {
    "gpu": UseKind("gpu", "GPU presets", "presets-table", "preset-", lambda site: site.presets_by_id),
    "link": UseKind("link", "Interconnect presets", "links-table", "link-", lambda site: site.links()),
    "model": UseKind("model", "Model presets", "models-table", "model-", lambda site: site.models()),
}


def request_uses(request: object) -> set[Use]:
    """The presets a parsed fence request names, by its fields' names (see the module's docstring)."""
    found: set[Use] = set()

    def walk(value: object, depth: int) -> None:
        if depth > 4 or not dataclasses.is_dataclass(value) or isinstance(value, type):
            return
        for item in dataclasses.fields(value):
            content = getattr(value, item.name, None)
            kind = _FIELD_KINDS.get(item.name)
            if kind is not None:
                ids = content if isinstance(content, (tuple, list)) else (content,)
                found.update((kind, i) for i in ids if isinstance(i, str))
            elif isinstance(content, Mapping):  # fields as an author typed them (an mfu-table job)
                found.update((_OPTION_KINDS[key], value) for key, value in content.items()
                             if key in _OPTION_KINDS and isinstance(value, str))
            elif isinstance(content, (tuple, list)):
                for element in content:
                    walk(element, depth + 1)
            else:
                walk(content, depth + 1)

    walk(request, 0)
    return found


def implied_uses(request: object, site: Any) -> set[Use]:
    """What a request draws on without naming it: every model where it names none, the link each
    tensor-parallel group crosses by default. A request says so with ``implied_uses(site)``; on a site
    that cannot load those presets it implies nothing (the page's own build reports why)."""
    method = getattr(request, "implied_uses", None)
    if not callable(method):
        return set()
    try:
        return {(kind, entry) for kind, entry in method(site)}
    except (InputError, OSError):
        return set()


def form_uses(body: str, known: Mapping[str, Iterable[str]]) -> set[Use]:
    """The presets an inline form ``{{ body }}`` names; ``known``: kind → ids on this build."""
    words = body.split()
    if not words or words[0] in _LISTING_FORMS:
        return set()
    found: set[Use] = set()
    ids = {kind: set(values) for kind, values in known.items()}
    for word in words[1:]:
        key, sep, value = word.partition("=")
        if sep:
            kind = _OPTION_KINDS.get(key)
            if kind is not None and value in ids.get(kind, ()):
                found.add((kind, value))
        else:
            found.update((kind, word) for kind, values in ids.items() if word in values)
    return found


def known_ids(site: Any) -> dict[str, list[str]]:
    """kind → the ids this build has (links and models loaded on demand; none where absent)."""
    known: dict[str, list[str]] = {}
    for kind, use_kind in USE_KINDS.items():
        try:
            known[kind] = list(use_kind.entries(site))
        except (InputError, AttributeError, OSError):
            known[kind] = []
    return known


# --------------------------------------------------------------------------
# HTML


def entry_url(catalogue: Any, kind: str, entry_id: str) -> str | None:
    """Site-relative URL of the row listing ``entry_id`` (the page with the kind's table), or ``None``."""
    use_kind = USE_KINDS[kind]
    page = catalogue.page_with(use_kind.table_fence)
    if page is None:
        return None
    note = catalogue.notes.get(page)
    url = note.url if note is not None else ""
    return f"{url}#{use_kind.anchor}{entry_id}"


def notes_using(catalogue: Any, kind: str, entry_id: str) -> list[Any]:
    """The listed notes whose fences or forms name ``entry_id``, by title."""
    notes = [catalogue.notes[src] for src, uses in catalogue.uses.items()
             if (kind, entry_id) in uses and src in catalogue.notes]
    return sorted(notes, key=lambda n: n.title.lower())


def used_in_html(site: Any, kind: str, entry_ids: Iterable[str], prefix: str) -> str:
    """The backlinks under a presets (or links) table: each entry, and the notes that use it.

    ``prefix`` leads from the page holding the table back to the site root."""

    catalogue = notes_meta.known_catalogue(site)
    if catalogue is None:
        return ""
    use_kind = USE_KINDS[kind]
    entries = use_kind.entries(site)
    rows = []
    for entry_id in entry_ids:
        entry = entries.get(entry_id)
        if entry is None:
            continue
        notes = notes_using(catalogue, kind, entry_id)
        links = ", ".join(note_link(n, prefix) for n in notes)
        rows.append(f'<tr id="{use_kind.anchor}{escape(entry_id, quote=True)}"><td>{escape(entry.name)}'
                    f'<br><code>{escape(entry_id)}</code></td><td>{links or "no note yet"}</td></tr>')
    if not rows:
        return ""
    return ('<div class="ainotes-table ainotes-backlinks"><table><caption>Notes that use each of these '
            f'{escape(use_kind.heading)}</caption><thead><tr><th scope="col">preset</th>'
            f'<th scope="col">used in</th></tr></thead><tbody>{"".join(rows)}</tbody></table></div>')


def draws_on_html(site: Any, catalogue: Any, uses: Iterable[Use], prefix: str,
                  by_url: Mapping[str, Any] | None = None) -> str:
    """A note's "draws on" list: each preset it uses, linked to its row, with its sources.

    ``by_url``: bibliography entries by URL; a source with the same URL is shown as that entry."""
    groups = []
    for kind, use_kind in USE_KINDS.items():
        try:
            entries = use_kind.entries(site)
        except (InputError, AttributeError, OSError):
            continue
        ids = sorted(i for k, i in uses if k == kind and i in entries)
        if not ids:
            continue
        items = []
        for entry_id in ids:
            entry = entries[entry_id]
            url = entry_url(catalogue, kind, entry_id)
            name = escape(entry.name)
            name = f'<a href="{escape(prefix + url, quote=True)}">{name}</a>' if url is not None else name
            sources = "".join(f"<li>{_source_html(s, by_url or {})}</li>" for s in getattr(entry, "sources", ()))
            items.append(f"<li>{name} (<code>{escape(entry_id)}</code>)<ul>{sources}</ul></li>")
        groups.append(f'<p class="ainotes-draws-on-kind">{escape(use_kind.heading)}</p>'
                      f'<ul class="ainotes-draws-on">{"".join(items)}</ul>')
    return "".join(groups)


def _source_html(source: Any, by_url: Mapping[str, Any]) -> str:
    """A preset source in the bibliography's style: its entry there, else ``Title. URL: <a>…</a>.``"""

    entry = by_url.get(source.url)
    if entry is not None:
        return f'<span class="ainotes-source">{entry.html}</span>'
    return f'<span class="ainotes-source">{escape(source.title)}. URL: {safe_link(source.url, source.url)}.</span>'
