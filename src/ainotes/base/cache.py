"""The content-addressed cache every slow result goes through: renders, compiled grammars, kept drawings.

* key: SHA-256 of the canonical JSON of what decides the output (:func:`cache_key`), with
  :data:`CACHE_FORMAT` and the versions of the tools that made it;
* place: ``$AINOTES_CACHE_DIR``, else ``${XDG_CACHE_HOME:-~/.cache}/ainotes/render``; what depends on
  code and tool versions only goes to :func:`shared_dir`;
* entry: one file, a header line ``ainotes-render <format> sha256=<hex> length=<n>`` followed by the
  payload. An entry whose payload does not match its header (truncated, corrupted) is deleted and made
  again, never served; writes are atomic (:func:`ainotes.base.files.write_atomic`).

An in-process memo (:data:`MEMO`, least recently used, :data:`MEMO_BYTES`) sits in front of the disk.
Knows nothing of vl-convert: :mod:`ainotes.render` keys its renders with the engine's versions.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
from collections import OrderedDict
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import orjson

from ainotes.base.files import write_atomic

log = logging.getLogger(__name__)

CACHE_FORMAT = 1
CACHE_DIR_ENV = "AINOTES_CACHE_DIR"
SHARED_DIR_ENV = "AINOTES_SHARED_CACHE_DIR"
MEMO_BYTES = 48 * 2**20  # the in-process memo's budget; PNGs are a few hundred kB each

_HEADER = re.compile(rb"ainotes-render (\d+) sha256=([0-9a-f]{64}) length=(\d+)\n")
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


def read_entry(path: Path) -> bytes | None:
    """The payload of a sound entry; ``None`` if missing. A damaged entry is deleted."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        log.debug("render cache: cannot read %s: %s", path, exc)
        return None
    header = _HEADER.match(data)
    if header is not None and int(header.group(1)) == CACHE_FORMAT:
        payload = data[header.end():]
        if len(payload) == int(header.group(3)) and hashlib.sha256(payload).hexdigest() == header.group(2).decode():
            return payload
    log.debug("render cache: damaged entry %s deleted", path)
    path.unlink(missing_ok=True)
    return None


def write_entry(path: Path, payload: bytes) -> bool:
    """Write an entry atomically (:func:`ainotes.base.files.write_atomic`), its checksum header first.
    ``False`` when the disk refused it."""
    header = f"ainotes-render {CACHE_FORMAT} sha256={hashlib.sha256(payload).hexdigest()} length={len(payload)}\n"
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
    """A sound render-cache entry under ``key`` that a caller wrote with :func:`keep`, or ``None``."""
    return read_entry(entry_path(key))


def keep(key: str, payload: bytes) -> None:
    """Write ``payload`` to the render cache under ``key`` (checksummed, atomic)."""
    write_entry(entry_path(key), payload)
