"""What every reader shares: the one error type, reading a file's text, and number parsing."""

from __future__ import annotations

import gzip
import math
import re
from pathlib import Path

from ainotes.base.errors import InputError

#: The formats :func:`ainotes.measurements.read.read_measured` knows.
FORMATS = ("nccl-tests", "ncu", "kineto")
#: Bumped whenever a reader's output changes, so that no table parsed by an older reader is reused
#: (in this process, :func:`ainotes.measurements.read.read_measured`; on disk, :mod:`ainotes.measurements.kept`).
READER_VERSION = 3  # 3: ncu FLOPs per precision, matrix precision from the name


class MeasuredFileError(InputError):
    """A measured file that cannot be read as it claims: ``path:line: what is wrong (what was meant)``."""


def where(path: str, line: int | None = None) -> str:
    """``path:line`` (or ``path`` alone) for the start of a message."""
    return f"{path}:{line}" if line else path


def read_bytes(path: Path) -> bytes:
    """The file's bytes, gunzipped when it is gzip (``.json.gz`` traces); one line if it cannot be read."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise MeasuredFileError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise MeasuredFileError(f"{path}: is a folder, not a measured file") from None
    except OSError as exc:
        raise MeasuredFileError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    if data[:2] == b"\x1f\x8b":
        try:
            return gzip.decompress(data)
        except (OSError, EOFError) as exc:
            raise MeasuredFileError(f"{path}: a gzip file that is cut short or damaged ({exc})") from None
    return data


def decode(data: bytes, path: str) -> str:
    """UTF-8 text (a byte-order mark dropped); one line naming the first undecodable line otherwise."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise MeasuredFileError(f"{where(path, line)}: not UTF-8 text (byte {exc.start}): is this a binary file "
                                "(an .ncu-rep or .nsys-rep report)? Export it as CSV or JSON first") from None


#: Commas only as thousands separators: groups of exactly three digits after the first.
_GROUPED = re.compile(r"^[-+]?\d{1,3}(,\d{3})+(\.\d*)?([eE][-+]?\d+)?$")


def parse_number(text: str) -> float:
    """A number as a tool prints it: ``1,234.5`` (thousands separators), ``0e+00``, ``nan``; ``ValueError`` else,
    also for a comma that cannot separate thousands (``9,00``, ``65,77``: a decimal comma would be misread 100×)."""
    if "," in text and not _GROUPED.match(text.strip()):
        raise ValueError(text)
    cleaned = text.strip().replace(",", "")
    value = float(cleaned)
    if math.isinf(value) and "inf" not in cleaned.lower():
        raise ValueError(text)
    return value
