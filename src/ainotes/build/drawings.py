"""Finished chart drawings kept between builds: a cached build copies a chart instead of drawing it.

A chart's figure HTML and embed files are a pure function of its fence (the parsed request),
the presets or links it shows, its id, title and page, and the code that draws it. A build
that finds all of that unchanged reads the finished figure and files back in one cache entry
(a few hundred microseconds) instead of filling its specs, looking up each render and
formatting JSON and HTML again (10-20 ms a chart).

* key: :func:`ainotes.render.cache_key` (tool versions included) over the inputs the drawer
  names, the chart's identity and :func:`code_fingerprint`, a digest of every file of the
  ``ainotes`` package, so an upgrade or an edit of the code draws every chart afresh;
* place and format: the render cache (:func:`ainotes.render.cache_dir`), with its checksum
  header and atomic writes; a damaged entry is deleted and the chart drawn again;
* two entries a chart: the figure HTML, kept as soon as it is drawn and read when the page is
  converted, and the embed files, kept and read when they are written (one chart's files in
  memory at a time). Should the files entry be missing or damaged, the chart is drawn again
  for its files;
* size: the Vega runtime that each standalone HTML page inlines (about 600 kB) is kept as a
  marker and put back when read, so an entry costs what the chart's own bytes cost.

The output is byte-identical to drawing the chart: the tests build a site cold, then again
from kept drawings, and compare every file.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Mapping
from typing import Any

from ainotes import render
from ainotes.base import cache
from ainotes.base.cache import code_fingerprint

__all__ = ["code_fingerprint", "drawing_key", "load_figure", "load_files", "store_figure", "store_files"]

DRAWING_FORMAT = 1
_RUNTIME_MARKER = b"\x00ainotes-runtime\x00"  # NUL never occurs in the HTML the drawers write


def drawing_key(kind: str, identity: dict[str, str], inputs: Any) -> str:
    """The cache key of one chart's drawing.

    ``identity``: the chart's id, title and the page facts its HTML uses (URL, source path,
    what its links are relative to). ``inputs``: everything else the drawing depends on,
    as ``repr`` gives it (frozen dataclasses of the request, the presets or links shown).
    """
    return render.cache_key("drawing", {"kind": kind, "identity": identity, "inputs": repr(inputs),
                                        "code": code_fingerprint(), "format": DRAWING_FORMAT})


def _runtime_bytes(session: render.RenderSession) -> bytes:
    return _utf8(session.inline_runtime())  # assembled once a process


@functools.lru_cache(maxsize=1)  # the runtime (600 kB), encoded once: a str caches its hash, so the lookup is cheap
def _utf8(text: str) -> bytes:
    return text.encode("utf-8")


def _files_key(key: str) -> str:
    return hashlib.sha256(f"{key}:files".encode("ascii")).hexdigest()


def load_figure(key: str) -> str | None:
    """The figure HTML kept under ``key``, or ``None`` (never kept, or damaged and now deleted).

    The embed files are a second entry (:func:`load_files`), read when they are written, so a
    build holds one chart's files in memory at a time, not every chart's."""

    payload = cache.read_kept(key)
    try:
        return payload.decode("utf-8") if payload is not None else None
    except UnicodeDecodeError:  # not a figure (the key is a digest, so only if someone wrote it there)
        return None


def load_files(key: str, session: render.RenderSession) -> dict[str, bytes] | None:
    """The embed files kept under ``key`` by kind, as written to disk (text in UTF-8), or ``None``."""

    payload = cache.read_kept(_files_key(key))
    if payload is None:
        return None
    try:
        head_end = payload.index(b"\n")
        offset = head_end + 1
        files: dict[str, bytes] = {}
        for kind, has_runtime, length in json.loads(payload[:head_end]):
            blob = payload[offset:offset + length]
            offset += length
            files[kind] = blob.replace(_RUNTIME_MARKER, _runtime_bytes(session)) if has_runtime else blob
        if offset != len(payload):
            raise ValueError("trailing bytes")
    except (ValueError, TypeError):  # a sound entry of another layout: draw again
        return None
    return files


def store_figure(key: str, html: str) -> None:
    """Keep a chart's figure HTML under ``key`` as soon as it is drawn (nothing holds it for the end
    of the build). Its files follow in :func:`store_files`; a figure kept without them (a build that
    stopped between) is drawn again for its files, never served without them."""

    cache.keep(key, html.encode("utf-8"))


def store_files(key: str, files: Mapping[str, str | bytes], session: render.RenderSession) -> None:
    """Keep a chart's embed ``files`` beside its figure (a disk that refuses costs the next build
    time, not correctness)."""
    # Only a session that assembled the runtime can have written a file that holds it.
    runtime = _runtime_bytes(session) if session.inline_runtime_if_made() is not None else None
    blobs: list[bytes] = []
    heads: list[list[Any]] = []
    for kind, content in files.items():
        blob = content.encode("utf-8") if isinstance(content, str) else bytes(content)
        has_runtime = False
        if runtime is not None and runtime in blob:
            blob, has_runtime = blob.replace(runtime, _RUNTIME_MARKER), True
        heads.append([kind, has_runtime, len(blob)])
        blobs.append(blob)
    head = json.dumps(heads, separators=(",", ":")).encode("utf-8")
    cache.keep(_files_key(key), b"".join([head, b"\n", *blobs]))
