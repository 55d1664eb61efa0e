"""What a page needs from a measured file, kept in the render cache across processes.

A measured fence reads its file into a pandas table and turns the table into a JSON-ready record
(:mod:`ainotes.measurements.report`) or a trace's summary (:func:`trace_summary`). Importing pandas
and parsing a file cost a process start about a second, and the record is a function of the file's
bytes, the fence's settings, the presets it is held against and the code alone. :func:`kept_value`
keeps it in the render cache (:func:`ainotes.base.cache.cached`) keyed by

* the SHA-256 of the file's bytes (as stored: a ``.json.gz`` trace by its compressed bytes),
* what the caller says the value depends on beside the file (the format, op, ranks, the preset and
  links shown, as ``repr`` gives them),
* :data:`~ainotes.measurements.source.READER_VERSION` and
  :func:`~ainotes.base.cache.code_fingerprint` (every file of the package),

so that ``mkdocs serve`` started again neither imports pandas nor parses a file it has seen, and an
edited file (other bytes) is read again. A file that cannot be read, or a value that fails, is
never kept: its error is raised every time. The value goes through JSON both when it is made and
when it is read back, so a page drawn from a kept value is the page drawn from a fresh one.

This module imports no pandas: the callers import the readers inside ``compute`` only.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ainotes.base import cache
from ainotes.measurements.source import READER_VERSION

#: Bumped when the shape of a kept value changes.
KEPT_FORMAT = 1


def file_digest(path: Path) -> str | None:
    """SHA-256 of the file's bytes; ``None`` when it cannot be read (the reader says why)."""
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def _dumps(value: Any) -> bytes:
    # Key order kept (a page lists what it iterates); NaN stays NaN (json writes and reads the token NaN).
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def kept_value(kind: str, path: Path, inputs: dict[str, Any], compute: Callable[[], Any]) -> Any:
    """``compute()``'s JSON value for the file at ``path`` and ``inputs``, from the render cache when a
    process already made it for the same bytes, inputs, reader and code (module docstring). Tuples
    come back as lists: the caller gets the JSON round trip either way."""
    digest = file_digest(path)
    if digest is None:
        return json.loads(_dumps(compute()))  # compute() raises the reader's one line
    key = cache.cache_key("measured-" + kind, {**inputs, "bytes_sha256": digest, "reader": READER_VERSION,
                                               "format": KEPT_FORMAT, "code": cache.code_fingerprint()})
    return json.loads(cache.cached(key, lambda: _dumps(compute())))
