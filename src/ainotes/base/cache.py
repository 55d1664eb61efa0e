"""The content-addressed cache every slow result goes through: renders, compiled grammars, kept drawings.

* key: SHA-256 of the canonical JSON of what decides the output (:func:`cache_key`), with
  :data:`CACHE_FORMAT` and the versions of the tools that made it;
* place: ``$AINOTES_CACHE_DIR``, else ``${XDG_CACHE_HOME:-~/.cache}/ainotes/render``; what depends on
  code and tool versions only goes to :func:`shared_dir`;
* entry: one file, a header line ``ainotes-render <format> sha256=<hex> length=<n> kind=<kind>``
  followed by the payload. The kind is what the payload was when written (:func:`payload_kind`: a PNG,
  an SVG, JSON or UTF-8 text). An entry whose payload does not match its header (truncated,
  corrupted) or is not what its kind must be (:func:`kind_problem`: an SVG that parses, a PNG's
  signature, header chunk and end, JSON that loads) is deleted with one warning and made again, never
  served; writes are atomic (:func:`ainotes.base.files.write_atomic`).

An in-process memo (:data:`MEMO`, least recently used, :data:`MEMO_BYTES`) sits in front of the disk.
Knows nothing of vl-convert: :mod:`ainotes.render` keys its renders with the engine's versions.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import os
import re
import struct
import zlib
from collections import OrderedDict
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any
from xml.parsers import expat

import orjson

from ainotes.base.files import write_atomic

log = logging.getLogger(__name__)

CACHE_FORMAT = 2  # 2: the header names the payload's kind
CACHE_DIR_ENV = "AINOTES_CACHE_DIR"
SHARED_DIR_ENV = "AINOTES_SHARED_CACHE_DIR"
MEMO_BYTES = 48 * 2**20  # the in-process memo's budget; PNGs are a few hundred kB each

_HEADER = re.compile(rb"ainotes-render (\d+) sha256=([0-9a-f]{64}) length=(\d+) kind=([a-z]+)\n")
_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_PNG_END = b"\x00\x00\x00\x00IEND\xaeB`\x82"
MAX_PNG_SIDE = 1 << 16  # pixels; a chart's still at its largest scale is a few thousand
_ENTRY_SUFFIX = ".entry"


class Memo(OrderedDict[str, bytes]):
    """Least recently used payloads, at most :data:`MEMO_BYTES` of them."""

    size = 0

    def put(self, key: str, payload: bytes) -> None:
        old = self.pop(key, None)
        self.size += len(payload) - (len(old) if old is not None else 0)
        self[key] = payload
        while self.size > MEMO_BYTES and len(self) > 1:
            self.size -= len(self.popitem(last=False)[1])

    def clear(self) -> None:
        super().clear()
        self.size = 0


MEMO = Memo()


def cache_dir() -> Path:
    """Where rendered results are kept: ``$AINOTES_CACHE_DIR``, else
    ``${XDG_CACHE_HOME:-~/.cache}/ainotes/render``."""
    configured = os.environ.get(CACHE_DIR_ENV, "").strip()
    if configured:
        return Path(configured).expanduser()
    base = os.environ.get("XDG_CACHE_HOME", "").strip() or str(Path.home() / ".cache")
    return Path(base).expanduser() / "ainotes" / "render"


def shared_dir() -> Path:
    """Where entries that depend only on code and tool versions are kept (the runtime bundle,
    chart grammars): ``$AINOTES_SHARED_CACHE_DIR``, else ``${XDG_CACHE_HOME:-~/.cache}/ainotes/shared``."""
    configured = os.environ.get(SHARED_DIR_ENV, "").strip()
    if configured:
        return Path(configured).expanduser()
    base = os.environ.get("XDG_CACHE_HOME", "").strip() or str(Path.home() / ".cache")
    return Path(base).expanduser() / "ainotes" / "shared"


def clear_cache() -> int:
    """Delete every cache entry on disk (and forget the in-process memo); returns how many files went."""
    MEMO.clear()
    folder = cache_dir()
    if not folder.is_dir():
        return 0
    removed = 0
    for path in folder.iterdir():
        # Only our own files: entries and temporary files left by an interrupted write.
        if path.is_file() and (path.suffix == _ENTRY_SUFFIX or (path.name.startswith(".") and path.suffix == ".tmp")):
            path.unlink(missing_ok=True)
            removed += 1
    return removed


def cache_key(kind: str, payload: Any, *, versions: Mapping[str, str] | None = None, **options: Any) -> str:
    """SHA-256 over everything that decides the output (canonical JSON, so key order in the spec does not
    matter): :data:`CACHE_FORMAT`, ``kind``, ``payload``, ``options`` and the tool ``versions``."""
    material = {"format": CACHE_FORMAT, "kind": kind, "input": payload, "options": options, **(versions or {})}
    return hashlib.sha256(orjson.dumps(material, option=orjson.OPT_SORT_KEYS)).hexdigest()


def entry_path(key: str, folder: Path | None = None) -> Path:
    return (folder or cache_dir()) / f"{key}{_ENTRY_SUFFIX}"


def payload_kind(payload: bytes) -> str:
    """What a payload is, as written: ``png``, ``svg``, ``json`` or ``text`` (UTF-8), else ``bytes``."""
    if payload.startswith(_PNG_SIGNATURE):
        return "png"
    head = payload[:256].lstrip()
    if head.startswith(b"<svg") or (head.startswith(b"<?xml") and b"<svg" in payload[:4096]):
        return "svg"
    if head[:1] in (b"{", b"[") and kind_problem("json", payload) is None:
        return "json"
    try:
        payload.decode("utf-8")
    except UnicodeDecodeError:
        return "bytes"
    return "text"


def kind_problem(kind: str, payload: bytes) -> str | None:
    """Why ``payload`` is not a sound ``kind`` (``"the SVG does not parse"``), or ``None``.

    A PNG: the signature, an ``IHDR`` chunk of 13 bytes whose CRC holds and whose width and height are
    1 to :data:`MAX_PNG_SIDE`, and the ``IEND`` chunk last. An SVG: well-formed XML (expat) whose root is
    ``<svg>``. JSON: it loads. Text: UTF-8. ``bytes``: anything."""
    check = _KIND_CHECKS.get(kind)
    return check(payload) if check is not None else f"unknown kind {kind!r}"


def _json_problem(payload: bytes) -> str | None:
    try:
        orjson.loads(payload)
    except orjson.JSONDecodeError:
        return "the JSON does not load"
    return None


def _text_problem(payload: bytes) -> str | None:
    try:
        payload.decode("utf-8")
    except UnicodeDecodeError:
        return "the text is not UTF-8"
    return None


def _png_problem(payload: bytes) -> str | None:
    if not payload.startswith(_PNG_SIGNATURE) or len(payload) < 8 + 25 + len(_PNG_END):
        return "not a PNG (no signature, or too short)"
    length, chunk = struct.unpack(">I4s", payload[8:16])
    if length != 13 or chunk != b"IHDR":
        return "the PNG does not start with its IHDR chunk"
    (crc,) = struct.unpack(">I", payload[29:33])
    if zlib.crc32(payload[12:29]) != crc:
        return "the PNG's IHDR chunk is damaged"
    width, height = struct.unpack(">II", payload[16:24])
    if not (1 <= width <= MAX_PNG_SIDE and 1 <= height <= MAX_PNG_SIDE):
        return f"the PNG is {width} × {height} pixels"
    if not payload.endswith(_PNG_END):
        return "the PNG has no IEND chunk at its end"
    return None


def _svg_problem(payload: bytes) -> str | None:
    roots: list[str] = []
    parser = expat.ParserCreate()
    parser.StartElementHandler = lambda name, attrs: roots.append(name) if not roots else None
    try:
        parser.Parse(payload, True)
    except expat.ExpatError as exc:
        return f"the SVG does not parse ({expat.ErrorString(exc.code)}, line {exc.lineno})"
    if not roots or roots[0].rsplit(":", 1)[-1].rsplit(" ", 1)[-1] != "svg":
        return "the XML's root is not <svg>"
    return None


_KIND_CHECKS: dict[str, Callable[[bytes], str | None]] = {
    "png": _png_problem, "svg": _svg_problem, "json": _json_problem, "text": _text_problem, "bytes": lambda _: None,
}


def read_entry(path: Path) -> bytes | None:
    """The payload of a sound entry; ``None`` if missing. A damaged entry (its header does not match its
    payload, or the payload is not what its kind must be: :func:`kind_problem`) is deleted, with one
    warning when it was an entry of this format (an older format's entry is dropped quietly)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        log.debug("render cache: cannot read %s: %s", path, exc)
        return None
    header = _HEADER.match(data)
    problem = "its header does not match its payload"
    if header is not None and int(header.group(1)) == CACHE_FORMAT:
        payload = data[header.end():]
        if len(payload) == int(header.group(3)) and hashlib.sha256(payload).hexdigest() == header.group(2).decode():
            problem = kind_problem(header.group(4).decode(), payload) or ""
            if not problem:
                return payload
    if data.startswith(b"ainotes-render ") and not data.startswith(f"ainotes-render {CACHE_FORMAT} ".encode()):
        log.debug("render cache: entry %s of an older format deleted", path)
    else:
        log.warning("render cache: %s was damaged (%s); deleted, it is made again", path.name, problem)
    path.unlink(missing_ok=True)
    return None


def write_entry(path: Path, payload: bytes) -> bool:
    """Write an entry atomically (:func:`ainotes.base.files.write_atomic`), its header first: checksum,
    length and :func:`payload_kind`. ``False`` when the disk refused it."""
    header = (f"ainotes-render {CACHE_FORMAT} sha256={hashlib.sha256(payload).hexdigest()} length={len(payload)} "
              f"kind={payload_kind(payload)}\n")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, header.encode("ascii") + payload)
    except OSError as exc:  # a read-only or full disk costs speed, not correctness
        log.debug("render cache: cannot write %s: %s", path, exc)
        return False
    return True


def cached(key: str, make: Callable[[], bytes], folder: Path | None = None) -> bytes:
    """The payload under ``key``: from the memo, else the disk, else ``make()`` (then kept in both)."""
    payload = MEMO.get(key)
    if payload is not None:
        MEMO.move_to_end(key)
        return payload
    path = entry_path(key, folder)
    payload = read_entry(path)
    if payload is None:
        payload = make()
        write_entry(path, payload)
    MEMO.put(key, payload)
    return payload


def memo_json(kind: str, payload: Any, make: Callable[[], Any], *, shared: bool = False,
              versions: Mapping[str, str] | None = None) -> Any:
    """A JSON value that ``make()`` computes, cached like a render under ``kind`` and ``payload``.

    ``payload`` must hold everything the value depends on, code included: callers put a
    fingerprint of their source in it. ``shared``: the value depends on code and tool
    versions only (a chart grammar), so it goes to :func:`shared_dir`, where a cold render
    cache does not lose it. A fresh copy each call."""
    key = cache_key(kind, payload, versions=versions)
    text = cached(
        key,
        lambda: json.dumps(make(), sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                           allow_nan=False).encode("utf-8"),
        shared_dir() if shared else None,
    )
    return json.loads(text)


def read_kept(key: str) -> bytes | None:
    """A sound render-cache entry under ``key`` that a caller wrote with :func:`keep`, or ``None``. An entry's
    key is a digest of what it was made from, so its payload never changes: one this process has read or
    written is served from :data:`MEMO` (``mkdocs serve``'s rebuilds do not read and checksum the same kept
    drawings from disk again)."""
    payload = MEMO.get(key)
    if payload is not None:
        MEMO.move_to_end(key)
        return payload
    payload = read_entry(entry_path(key))
    if payload is not None:
        MEMO.put(key, payload)
    return payload


def keep(key: str, payload: bytes) -> None:
    """Write ``payload`` to the render cache under ``key`` (checksummed, atomic)."""
    if write_entry(entry_path(key), payload):
        MEMO.put(key, payload)


@functools.cache
def code_fingerprint() -> str:
    """SHA-256 over every file of the ``ainotes`` package (its path inside the package, then its
    bytes), in path order; compiled bytecode left out. What a value kept across processes is keyed by
    beside its inputs, so that an upgrade or an edit of the code makes it afresh."""
    root = Path(__file__).resolve().parent.parent  # the ainotes package, not this folder
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        digest.update(path.relative_to(root).as_posix().encode("utf-8") + b"\0")
        digest.update(path.read_bytes())
    return digest.hexdigest()
