"""Checks shared by every place user text enters: which characters may pass, and how a
value reads inside a one-line error message."""

from __future__ import annotations

import difflib
import re
import reprlib
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

# Characters no user text may hold: those XML 1.0 cannot hold (C0 controls but tab, newline and
# carriage return; lone surrogates; U+FFFE, U+FFFF: SVG would not parse, and vl-convert aborts on
# them), and the other control characters, DEL and the C1 range (U+007F-U+009F, NEL among them), which
# XML discourages and no page shows.
_NOT_IN_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")

_repr = reprlib.Repr()
_repr.maxstring = 80
_repr.maxother = 80
_repr.maxlist = _repr.maxtuple = _repr.maxdict = _repr.maxset = 4
_repr.maxlevel = 2
MAX_SHORT_CHARS = 120
# The one length cap of every name and title a user writes (a preset's, a model's or a link's name, a
# chart or CLI title, a job name, a kernel label): a page shows them whole, in headings and legends.
MAX_NAME_CHARS = 120
MAX_SOURCE_TITLE_CHARS = 300  # a paper's or datasheet's title, cited in full
MAX_NOTES_CHARS = 4000  # a preset's free-text notes


def bad_character(text: str) -> str | None:
    """The first control character of ``text`` (C0 but tab and line breaks, DEL, C1 such as NEL) or
    other character XML cannot hold, as ``U+0001``, or ``None``."""
    match = _NOT_IN_XML.search(text)
    return None if match is None else f"U+{ord(match.group()):04X}"


def short(value: Any) -> str:
    """``repr(value)`` cut to a readable length, however large or deeply nested the value
    (a YAML alias can make a short file stand for millions of items)."""
    text = _repr.repr(value)
    return text if len(text) <= MAX_SHORT_CHARS else text[: MAX_SHORT_CHARS - 1] + "…"


def url_problem(url: str) -> str | None:
    """What makes ``url`` unusable as a link, in words (``must name a host``), or ``None``.

    :func:`urllib.parse.urlsplit` refuses some text outright (``https://[::1``, an unclosed IPv6
    host: ``ValueError``) and reads a port only on request; both are asked here, once, for every URL a
    preset or a bibliography gives."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018  # raises for a port that is not a number from 0 to 65535
    except ValueError as exc:
        reason = "an unclosed '[' around an IPv6 host" if "IPv6" in str(exc) else "a port that is not a number"
        return f"is not a URL a browser can open ({reason})"
    if not parts.netloc or not parts.hostname:
        return "must be a full http(s) URL with a host and no spaces"
    return None


def closest(word: Any, known: Iterable[str]) -> str | None:
    """The one of ``known`` nearest to ``word`` (:func:`difflib.get_close_matches`), or ``None`` when
    none is near: ``h300`` → ``h100``, ``nvlink4`` → ``nvlink-4``, ``llama-3-70b`` → ``llama-3.1-70b``."""
    if not isinstance(word, str) or len(word) > MAX_NAME_CHARS:
        return None
    known = [str(item) for item in known]
    by_lower = {item.lower(): item for item in known}
    found = difflib.get_close_matches(word.lower(), list(by_lower), n=1, cutoff=0.75)
    return by_lower[found[0]] if found else None


def unknown_id(what: str, value: Any, known: Iterable[str]) -> str:
    """The one message for an id no preset, model or link has: ``unknown preset 'h300' (did you mean
    'h100'? known: a100, b200, h100)``; the known ids are listed sorted, or ``none``."""
    known = sorted(str(item) for item in known)
    near = closest(value, known)
    hint = f"did you mean {near!r}? " if near is not None else ""
    return f"unknown {what} {short(value)} ({hint}known: {', '.join(known) or 'none'})"
