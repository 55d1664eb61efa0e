"""Writing files so that no reader ever sees half of one; reading a file a user names without hanging on a
pipe or reading a device without end."""

from __future__ import annotations

import os
import secrets
import stat
from pathlib import Path


def write_atomic(path: Path, content: str | bytes) -> None:
    """Write ``content`` (text as UTF-8) to a temporary file beside ``path``, then rename it
    over ``path``. The file gets the usual permissions (0666 less the umask). On any error
    the temporary file is removed and the error goes to the caller."""
    data = content.encode("utf-8") if isinstance(content, str) else content
    temporary = path.parent / f".{path.name}.{secrets.token_hex(6)}.tmp"
    try:
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        temporary.replace(path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


MAX_PATH_CHARS = 160  # a path in a message; a longer one is cut in the middle
# A preset file is a few kB; a megabyte is far past any, and small enough to read whole at once.
MAX_USER_FILE_BYTES = 2**20
_KINDS_OF_FILE = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a named pipe (FIFO)"), (stat.S_ISCHR, "a device"),
                  (stat.S_ISBLK, "a device"), (stat.S_ISSOCK, "a socket"))


class UnreadableFileError(OSError):
    """A file a user named that is not a regular, readable, bounded UTF-8 text file; the message says which
    (``is a named pipe (FIFO), not a regular file``) and carries no path: the caller names the file."""


def read_user_text(path: Path, max_bytes: int = MAX_USER_FILE_BYTES) -> str:
    """The UTF-8 text of a file a user wrote, or :class:`UnreadableFileError` with the reason.

    Opened without blocking (a FIFO would wait for a writer forever) and checked on the open handle
    before a byte is read: a regular file (not a pipe, a device such as ``/dev/zero``, a socket or a
    folder) of at most ``max_bytes``; then at most ``max_bytes + 1`` bytes are read, so a file that grows
    meanwhile is still bounded."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise UnreadableFileError(_reason(exc)) from None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(fd)
        for test, what in _KINDS_OF_FILE:
            if test(info.st_mode):
                raise UnreadableFileError(f"is {what}, not a regular file")
        if not stat.S_ISREG(info.st_mode):
            raise UnreadableFileError("is not a regular file")
        if info.st_size > max_bytes:
            raise UnreadableFileError(f"is {info.st_size:,} bytes, more than the {max_bytes:,} a file here may hold")
        try:
            data = handle.read(max_bytes + 1)
        except OSError as exc:
            raise UnreadableFileError(_reason(exc)) from None
    if len(data) > max_bytes:
        raise UnreadableFileError(f"holds more than the {max_bytes:,} bytes a file here may hold")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise UnreadableFileError("is not UTF-8 text") from None


def _reason(exc: OSError) -> str:
    """``cannot be read: File name too long`` (the system's words, without the path it repeats)."""
    return f"cannot be read: {exc.strerror or exc.__class__.__name__}"


def path_state(path: Path) -> str:
    """``"dir"``, ``"file"`` (anything else that exists), ``"missing"``, or the reason a path cannot be
    looked at (``cannot be read: File name too long``): a question about a path that never raises."""
    try:
        info = path.stat()
    except FileNotFoundError:
        return "missing"
    except NotADirectoryError:
        return "missing"
    except OSError as exc:
        return _reason(exc)
    return "dir" if stat.S_ISDIR(info.st_mode) else "file"


def short_path(path: str | Path) -> str:
    """A path as a message shows it: whole up to :data:`MAX_PATH_CHARS`, else its start and end."""
    text = str(path)
    if len(text) <= MAX_PATH_CHARS:
        return text
    return f"{text[:MAX_PATH_CHARS // 2 - 1]}…{text[-(MAX_PATH_CHARS // 2):]}"
