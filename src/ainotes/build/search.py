"""Material's search plugin, under ``mkdocs serve``: a page whose HTML is unchanged is not parsed again.

The plugin parses the HTML of every page at every build (:class:`material.plugins.search.plugin.Parser`:
the page cut into sections at its headings, each section's title and text), and ``mkdocs serve``
builds the whole site again after each edit, though one page changed. Our pages are long (tables,
MathML), so this parse was about a quarter of a rebuild after a prose edit (cProfile; bench/RESULTS.md).

:func:`keep_search_parses` puts a subclass in the plugin's module that keeps each parse's sections
(pickled, so that the plugin's changes to them, a title filled in from the page, never reach the
next build), keyed by the SHA-256 of the HTML fed: the parse is a function of that text alone, so the
search index is byte for byte a clean build's. A chart figure's placeholder
(:data:`ainotes.build.site.DEFERRED_FIGURE`) carries a nonce that differs at each build, so the key
is taken with placeholders written the same; a parse whose sections hold a placeholder's text (the
figure's section is ``data-search-exclude``, so none does) is not kept. Only ``hooks/notes.py``'s ``on_startup`` for
``serve`` calls it; a plain build parses every page as the plugin does.
"""

from __future__ import annotations

import hashlib
import pickle  # nosec: our own pickles of the plugin's sections, in memory only, never read from disk
from collections import OrderedDict
from typing import Any

from ainotes.build.site import DEFERRED_FIGURE

MAX_PAGES = 1024  # parses kept (one per page's HTML met); a section list pickles to a few kB
_PARSED: OrderedDict[str, bytes] = OrderedDict()


def keep_search_parses() -> bool:
    """Make Material's search plugin reuse the parse of HTML it has met; ``False`` without Material."""
    try:
        from material.plugins.search import plugin as search  # type: ignore[import-untyped]
    except ImportError:
        return False
    base: Any = search.Parser
    if getattr(base, "ainotes_kept", False):
        return True

    class KeptParser(base):  # Material's parser (Any to the type checker: it ships no types)
        """The plugin's parser; ``close()`` parses what was fed unless the same HTML was parsed before."""

        ainotes_kept = True

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.fed: list[str] = []

        def feed(self, data: str) -> None:
            self.fed.append(data)

        def close(self) -> None:
            html = "".join(self.fed)
            same = DEFERRED_FIGURE.sub(lambda m: m.group(0)[:19], html)  # the nonce left out
            key = hashlib.sha256(same.encode("utf-8", "surrogatepass")).hexdigest()
            kept = _PARSED.get(key)
            if kept is not None:
                _PARSED.move_to_end(key)
                self.data = pickle.loads(kept)  # nosec: made by this process, just below
                return
            base.feed(self, html)
            base.close(self)
            parsed = pickle.dumps(self.data)
            if b"ainotesfigure" not in parsed:
                _PARSED[key] = parsed
            while len(_PARSED) > MAX_PAGES:
                _PARSED.popitem(last=False)

    search.Parser = KeptParser
    return True


def forget_search_parses() -> None:
    """Drop every kept parse (a test's clean build; a long-lived process that wants its memory back)."""
    _PARSED.clear()
