"""Writing files so that no reader ever sees half of one."""

from __future__ import annotations

import os
import secrets
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
