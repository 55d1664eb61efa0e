"""Where the built site will be published: the one setting a build cannot work out for itself.

MkDocs writes ``site_url`` into every page's canonical link and into ``sitemap.xml``, and
Material's instant navigation only intercepts links whose addresses the sitemap lists: a site
built for ``http://127.0.0.1:8000/`` and served from any other host or port loads every page
in full, silently. ``mkdocs.yml`` takes the address from :data:`SITE_URL_VARIABLE` and falls
back to the local preview address (:data:`PREVIEW_SITE_URL`), which is right for ``mkdocs
serve`` only, so a build that keeps the fallback says so (:func:`site_url_warning`).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import TextIO

SITE_URL_VARIABLE = "AINOTES_SITE_URL"
PREVIEW_SITE_URL = "http://127.0.0.1:8000/"
# Commands that publish nothing: a preview serves the site where site_url points anyway.
_PREVIEW_COMMANDS = frozenset({"serve"})


def site_url_warning(site_url: str | None, command: str | None, environ: Mapping[str, str]) -> str | None:
    """One line for a build that will point at the local preview, or ``None``.

    Warns when ``command`` is not ``serve``, :data:`SITE_URL_VARIABLE` is unset (or empty) in
    ``environ``, and ``site_url`` is missing or still :data:`PREVIEW_SITE_URL`. A site_url set
    on purpose (the variable, or an address typed into mkdocs.yml) is never second-guessed,
    even one on localhost: the browser tests serve their builds there.
    """
    if command in _PREVIEW_COMMANDS or environ.get(SITE_URL_VARIABLE):
        return None
    if site_url and site_url.rstrip("/") != PREVIEW_SITE_URL.rstrip("/"):
        return None
    where = f"the local preview address {PREVIEW_SITE_URL}" if site_url else "not set"
    return (f"ainotes: site_url is {where}: the pages' canonical links and sitemap.xml will point there, and on "
            "any other host or port Material's instant navigation falls back to full page loads. Set "
            f"{SITE_URL_VARIABLE} to the address the site will be published at, e.g. "
            f"{SITE_URL_VARIABLE}=https://example.org/notes/ make site")


def warn_about_site_url(site_url: str | None, command: str | None, environ: Mapping[str, str],
                        stream: TextIO | None = None) -> bool:
    """Print :func:`site_url_warning`'s line, if any, as MkDocs prints a warning; ``True`` if printed.

    Printed rather than logged: ``strict: true`` (mkdocs.yml sets it) turns every logged warning
    into a failed build, and ``make site`` on a fresh clone must still build a site to look at.
    """
    line = site_url_warning(site_url, command, environ)
    if line is None:
        return False
    print_warning(line, stream)
    return True


def print_warning(line: str, stream: TextIO | None = None) -> None:
    """One ``WARNING -`` line as MkDocs prints its own, on stderr, that a strict build survives: for
    what a build can still publish but its author must hear (a localhost site_url; a shallow git
    clone that cannot date the notes, whose dates then fall back to the files' times). A CI checkout
    is often shallow by default: ``make site`` there must still build."""
    print(f"WARNING -  {line}", file=stream if stream is not None else sys.stderr, flush=True)
