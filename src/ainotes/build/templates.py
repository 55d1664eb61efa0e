"""MkDocs' Jinja templates under ``mkdocs serve``: compiled once a serve, not at every rebuild.

MkDocs makes a new Jinja environment for every build (``Theme.get_env``), so each rebuild of a serve
lexes, parses and compiles Material's templates again (about forty, a fifth of a prose-edit rebuild on
our site: cProfile, bench/RESULTS.md). :func:`keep_compiled_templates` gives every environment the theme
makes a bytecode cache that lives as long as the process: Jinja then takes a template's compiled code from it
when the template's source is the one it was compiled from (Jinja checks a checksum of the source, so
an edited override is compiled again), and the pages are those a fresh compile renders. The code is
kept in memory only, never written to disk. This is MkDocs' own work, which a plain MkDocs serve still
does at every rebuild (bench/serve.py compares the two).
"""

from __future__ import annotations

from typing import Any

import jinja2
from jinja2.bccache import Bucket

MAX_TEMPLATES = 512  # compiled templates kept (a theme has tens)


class _KeptCode(jinja2.BytecodeCache):
    """Compiled templates by Jinja's key for them (the template's name and loader), in memory."""

    def __init__(self) -> None:
        self.code: dict[str, bytes] = {}

    def load_bytecode(self, bucket: Bucket) -> None:
        kept = self.code.get(bucket.key)
        if kept is not None:
            bucket.bytecode_from_string(kept)  # Jinja drops it if the source's checksum differs

    def dump_bytecode(self, bucket: Bucket) -> None:
        if len(self.code) >= MAX_TEMPLATES and bucket.key not in self.code:
            self.code.pop(next(iter(self.code)))
        self.code[bucket.key] = bucket.bytecode_to_string()

    def clear(self) -> None:
        self.code.clear()


KEPT = _KeptCode()  # one a process: one mkdocs serve


def keep_compiled_templates() -> bool:
    """Give every Jinja environment MkDocs' theme makes from now on (a build's, and those Material's search
    plugin makes to read its translations) the templates compiled by earlier builds of this process
    (``hooks/notes.py``: ``on_startup``, under serve only). ``False`` where MkDocs' theme is not the one known."""
    try:
        from mkdocs.theme import Theme
    except ImportError:
        return False
    if getattr(Theme.get_env, "ainotes_kept", False):
        return True
    make_env = Theme.get_env

    def get_env(self: Any) -> jinja2.Environment:
        env = make_env(self)
        env.bytecode_cache = KEPT
        return env

    get_env.ainotes_kept = True  # type: ignore[attr-defined]
    Theme.get_env = get_env  # type: ignore[method-assign]
    return True
