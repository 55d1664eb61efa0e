"""One entry point for every measured file: the format given, or told from the file itself."""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from pathlib import Path

from ainotes.measurements.kineto import KinetoTrace, read_kineto_text
from ainotes.measurements.nccl_tests import (
    NcclTestsRun,
    clean_line,
    header_layout,
    read_nccl_tests_json,
    read_nccl_tests_text,
)
from ainotes.measurements.ncu import NcuRun, read_ncu_text
from ainotes.measurements.source import FORMATS, READER_VERSION, MeasuredFileError, decode, read_bytes

Measured = NcclTestsRun | NcuRun | KinetoTrace
__all__ = ["READER_VERSION", "Measured", "clear_cache", "read_measured", "sniff"]

CACHE_SIZE = 64  # parsed files kept per process (a site ships a handful)
_CACHE: OrderedDict[tuple, Measured] = OrderedDict()
_CACHE_LOCK = threading.Lock()


def clear_cache() -> None:
    """Forget every parsed file (tests; a long-lived process that wants its memory back)."""
    with _CACHE_LOCK:
        _CACHE.clear()


def sniff(text: str, path: str) -> str:
    """``nccl-tests``, ``ncu`` or ``kineto`` from the file's first lines; one line if it is none of them."""
    head = text.lstrip()[:4096]
    if head.startswith("{"):
        if '"traceEvents"' in text[:1 << 20] or '"traceEvents"' in text[-4096:]:
            return "kineto"
        if '"results"' in text and ('"nccl_version"' in text or '"args"' in text):
            return "nccl-tests"
        return "kineto"  # JSON of no known kind: the trace reader names what is missing
    for line in text.splitlines()[:400]:
        stripped = line.strip()
        if stripped.startswith('"ID"') or ('"Kernel Name"' in stripped and stripped.startswith('"')):
            return "ncu"
        if "nccl-tests" in stripped or "Collective test starting" in stripped or "Avg bus bandwidth" in stripped:
            return "nccl-tests"
        cleaned = (clean_line(line) or "").strip()
        tokens = cleaned.split()
        if header_layout(0, cleaned, None) or (len(tokens) == 13 and tokens[0].isdigit() and tokens[1].isdigit()):
            return "nccl-tests"
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    raise MeasuredFileError(
        f"{path}:1: not nccl-tests output, an ncu --csv file or a PyTorch profiler trace (it starts {first[:60]!r}); "
        f"name the format with --format {'|'.join(FORMATS)} if it is one of them")


def read_measured(path: Path, *, format_name: str | None = None, op: str | None = None,
                  ranks: int | None = None, shown_as: str | None = None) -> Measured:
    """Read ``path`` as ``format_name`` (or the format the file shows). ``shown_as`` is the name used in
    messages (a page's ``docs/…`` path); ``op`` and ``ranks`` fill in an nccl-tests file's gaps.

    The parsed value is kept per process, keyed by the resolved path, the file's size and mtime_ns, the
    arguments and :data:`READER_VERSION`: ``mkdocs serve`` rebuilds a page without parsing an unchanged
    file again, and a file that changed (size or mtime) is read again. Errors are not kept."""
    try:
        stat = path.stat()
        key: tuple | None = (str(path.resolve()), stat.st_size, stat.st_mtime_ns, format_name, op, ranks, shown_as,
                             READER_VERSION)
    except OSError:
        key = None  # read_bytes names what is wrong
    if key is not None:
        with _CACHE_LOCK:
            if key in _CACHE:
                _CACHE.move_to_end(key)
                return _CACHE[key]
    found = _read(path, format_name=format_name, op=op, ranks=ranks, shown_as=shown_as)
    if key is not None:
        with _CACHE_LOCK:
            _CACHE[key] = found
            while len(_CACHE) > CACHE_SIZE:
                _CACHE.popitem(last=False)
    return found


def _read(path: Path, *, format_name: str | None, op: str | None, ranks: int | None, shown_as: str | None) -> Measured:
    name = shown_as or str(path)
    if format_name is not None and format_name not in FORMATS:
        raise MeasuredFileError(f"--format must be one of {', '.join(FORMATS)}: {format_name!r}")
    text = decode(read_bytes(path), name)
    kind = format_name or sniff(text, name)
    if kind == "kineto":
        return read_kineto_text(text, name)
    if kind == "ncu":
        return read_ncu_text(text, name)
    if text.lstrip().startswith("{"):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise MeasuredFileError(f"{name}:{exc.lineno}: not valid JSON at column {exc.colno} ({exc.msg}): "
                                    "the file is cut short or damaged") from None
        if not isinstance(data, dict):
            raise MeasuredFileError(f"{name}: nccl-tests JSON must be an object with 'results'")
        return read_nccl_tests_json(data, name, op=op, ranks=ranks)
    return read_nccl_tests_text(text, name, op=op, ranks=ranks)
