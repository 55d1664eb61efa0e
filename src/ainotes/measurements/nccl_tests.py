"""nccl-tests results (``all_reduce_perf`` and the rest) read into one table.

What nccl-tests prints is read from its source (``src/util.cu``, ``src/common.cu``, NVIDIA/nccl-tests
2.19): a header ``size count type redop root`` then, per block, ``time algbw busbw #wrong``, the
out-of-place block before the in-place one; sizes in bytes, times in µs, bandwidths in 1e9 B/s.
Variants the reader accepts, each recognised from the column header the file itself prints:

* builds before 2.13 have no ``root`` column, older still no ``redop`` (broadcast prints ``root``
  alone), and name the check column ``error`` (the largest deviation, ``0e+00``) not ``#wrong``;
* the first releases (NCCL 1's tests, nccl-tests of 2017–18) print ``bytes N type op time algbw busbw
  res`` with times in **ms** (10,000,000 bytes in ``1.628`` at 6.14 GB/s): read as today's columns, the
  times turned into µs; their device lines may lack ``Pid``;
* one run's rows step through the sizes per type and operation, ``-N`` repeating the sweep from its
  first size; rows that repeat a size or step back elsewhere are several runs interleaved (refused);
* ``N/A`` in the check column when checking is off (``-c 0``); a trailing ``*`` marks a failed check;
* ``-C 1`` prints ``cputime`` for ``time``; ``-I 1`` adds ``i_min i_max i_p99 i_cv%`` to each block;
  ``-S 1`` ends each row with a ``YYYY-MM-DD HH:MM:SS`` timestamp;
* lines prefixed by ``mpirun --tag-output`` (``[1,0]<stdout>:``), by other ``[rank]`` taggers (even
  in the middle of a line) or by ``srun --label`` (``0: ``); ``<stderr>`` lines are dropped;
* header and device lines whose leading ``#`` a Markdown paste has eaten;
* NCCL's own ``NCCL INFO``/``WARN`` lines, the program's banner and anything else between rows.

The footer ``# Avg bus bandwidth`` is nccl-tests' mean of busbw over every printed result, the
out-of-place and in-place ones alike (``common.cu``: ``bw[0] += busBw; bw_count[0]++`` after each,
``bw[0] /= bw_count[0]`` at the end). :attr:`NcclTestsRun.avg_busbw_gbps` is that mean over the rows
read, and a footer that disagrees by more than the printed rounding allows becomes a note, since
the file then lacks rows (a partial paste).

The collective comes from ``# Collective test starting: all_reduce_perf`` or a command line naming
``all_reduce_perf``; the rank count from the device lines (``#  Rank  0 Group  0 Pid ... device  0
[0x18] NVIDIA H100 80GB HBM3``), else from the caller, else from busbw ÷ algbw (2(n−1)/n for an
all-reduce, (n−1)/n for an all-gather, reduce-scatter or all-to-all). Two collectives or two rank
counts in one file, a rank listed twice, or a row cut short is one :class:`MeasuredFileError`
naming the line.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import pandas as pd

from ainotes.measurements.source import MeasuredFileError, parse_number, where

#: nccl-tests program (``all_reduce_perf``) → the collective's name in the notes.
PROGRAM_OPS = {
    "all_reduce": "all-reduce", "all_gather": "all-gather", "reduce_scatter": "reduce-scatter",
    "broadcast": "broadcast", "reduce": "reduce", "alltoall": "all-to-all", "scatter": "scatter",
    "gather": "gather", "sendrecv": "sendrecv", "hypercube": "hypercube", "alltoallv": "all-to-all-v",
}

#: busbw ÷ algbw per collective, as each test's ``GetBw`` computes it (src/*.cu); ``None``: depends on n.
_SHARE_OPS = frozenset({"all-gather", "reduce-scatter", "all-to-all", "scatter", "gather"})
_UNIT_OPS = frozenset({"broadcast", "reduce", "sendrecv", "hypercube"})

_TAG = re.compile(r"\[\d+(?:,\d+)*\](?:<std(?:out|err)>:)?")
_STDERR_TAG = re.compile(r"^\s*\[\d+(?:,\d+)*\]<stderr>:")
_SRUN_LABEL = re.compile(r"^\s*\d+:\s")
_PROGRAM_NAME = r"(" + "|".join(sorted(PROGRAM_OPS, key=len, reverse=True)) + r")_perf(?:_mpi)?"
# A program named on a command line: followed by a flag (build logs name programs without flags).
_COMMAND = re.compile(r"(?<![\w-])" + _PROGRAM_NAME + r"(?=\s+-|\s+\\\s*$)")
_PROGRAM = re.compile(r"^" + _PROGRAM_NAME + r"$")
_STARTING = re.compile(r"Collective test starting:\s*(\S+)")
_DEVICE = re.compile(r"^#?\s*Rank\s+(\d+)\s+(?:Group\s+\d+\s+)?(?:Pid\s+\d+\s+)?on\s+(\S+)\s+device\s+(\d+)\s+"
                     r"\[[^\]]*\]\s*(.*?)\s*$")
_BOUNDS = re.compile(r"Out of bounds values\s*:\s*(\d+)\s*(OK|FAILED)?", re.IGNORECASE)
_AVERAGE = re.compile(r"Avg bus bandwidth\s*:\s*(\S+)", re.IGNORECASE)
_NTHREAD = re.compile(r"^#?\s*nThread\s+\d+\s+nGpus\s+\d+")
_ALGO_ENV = re.compile(r"NCCL_ALGO=([A-Za-z,^_]+)")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
# NCCL's own log line (host:pid:tid [dev] NCCL INFO ...), which can land in the middle of a result row.
_NCCL_LOG = re.compile(r"\S+:\d+:\d+\s+(?:\[\d+\]\s+)?NCCL\s+(?:INFO|WARN|TRACE|ABORT)\b")

_PREFIX_NAMES = ("size", "count", "type", "redop", "root")
_TIME_NAMES = frozenset({"time", "cputime"})
_COLUMN_NAMES = {
    "time": "time_us", "cputime": "time_us", "algbw": "algbw_gbps", "busbw": "busbw_gbps", "#wrong": "wrong",
    "error": "wrong", "wrong": "wrong", "copybw": "copybw_gbps", "i_min": "i_min_us", "i_max": "i_max_us",
    "i_p99": "i_p99_us", "i_cv%": "i_cv_pct",
}
#: The block prefixes in the table: out-of-place (printed first) and in-place.
BLOCKS = ("out_of_place", "in_place")


@dataclass(frozen=True)
class _Layout:
    """The columns a header line announces: prefix names, each block's names, a trailing timestamp."""

    line: int
    prefix: tuple[str, ...]
    blocks: tuple[tuple[str, ...], ...]
    block_names: tuple[str, ...]
    timestamp: bool
    time_kind: str
    time_scale: float = 1.0  # to µs: 1000 where the header is the first releases' (times in ms)

    @property
    def width(self) -> int:
        return len(self.prefix) + sum(len(b) for b in self.blocks) + (2 if self.timestamp else 0)


#: The layout every build since 2.13 prints without ``-I``/``-S``: assumed when a paste lost its header.
_CURRENT = _Layout(0, _PREFIX_NAMES, (("time", "algbw", "busbw", "#wrong"),) * 2, BLOCKS, False, "time")


@dataclass(frozen=True)
class NcclTestsRun:
    """One nccl-tests run: what the file says of itself and its results, one row per size.

    ``table`` has ``line``, ``bytes``, ``count``, ``dtype``, ``redop``, ``root`` and, per block
    (``out_of_place_``, ``in_place_``), ``time_us``, ``algbw_gbps``, ``busbw_gbps``, ``wrong`` (NaN
    where the file prints ``N/A``), plus the ``-I`` columns and ``timestamp`` when present.
    """

    path: str
    op: str | None
    program: str | None
    ranks: int | None
    ranks_from: str
    devices: tuple[str, ...]
    table: pd.DataFrame
    footer_avg_busbw_gbps: float | None
    out_of_bounds: int | None
    nccl_algo: str | None
    time_kind: str = "time"
    notes: tuple[str, ...] = field(default=())

    @property
    def dtype(self) -> str:
        """The data type(s) of the rows, in the order they appear (``-d all`` runs several)."""
        return ", ".join(dict.fromkeys(self.table["dtype"]))

    @property
    def avg_busbw_gbps(self) -> float:
        """nccl-tests' footer figure recomputed: the mean busbw over every result printed, both blocks."""
        values = [self.table[f"{block}_busbw_gbps"] for block in BLOCKS if f"{block}_busbw_gbps" in self.table]
        stacked = pd.concat(values).dropna()
        return float(stacked.mean()) if len(stacked) else math.nan


@dataclass
class _Segment:
    """One run inside the file: from its banner (or the file's start) to the next run's banner."""

    start_line: int
    devices: dict[int, tuple[int, str]] = field(default_factory=dict)
    started: dict[str, int] = field(default_factory=dict)
    commanded: dict[str, int] = field(default_factory=dict)
    layout: _Layout | None = None
    rows: list[dict] = field(default_factory=list)
    footer_avg: float | None = None
    out_of_bounds: int | None = None
    partial: tuple[int, list[str]] | None = None  # a row whose cells continue on later lines


def clean_line(raw: str) -> str | None:
    """A line without mpirun/srun tags; ``None`` for a tagged ``<stderr>`` line."""
    if _STDERR_TAG.match(raw):
        return None
    line = _TAG.sub(" ", raw)
    line = _SRUN_LABEL.sub("", line, count=1)
    return line.rstrip("\r\n")


def header_layout(line_number: int, text: str, banner: str | None) -> _Layout | None:
    """The layout a column-header line announces, or ``None`` if the line is not one."""
    tokens = _header_tokens(text)
    starts = [i for i, t in enumerate(tokens) if t in _TIME_NAMES]
    if not starts or "size" not in tokens[: starts[0]] or "algbw" not in tokens:
        return None
    prefix = tuple(tokens[: starts[0]])
    if not set(prefix) <= set(_PREFIX_NAMES) or prefix[:3] != ("size", "count", "type"):
        return None
    timestamp = tokens[-1] == "timestamp"
    body = tokens[:-1] if timestamp else tokens
    bounds = [*starts, len(body)]
    blocks = tuple(tuple(body[bounds[i]:bounds[i + 1]]) for i in range(len(starts)))
    if any("algbw" not in b or "busbw" not in b for b in blocks) or len(blocks) > 2:
        return None
    names = BLOCKS if len(blocks) == 2 else ((banner,) if banner else ("out_of_place",))
    first_release = text.strip().lstrip("#").split()[0].lower() == "bytes"
    return _Layout(line_number, prefix, blocks, names, timestamp, blocks[0][0], 1000.0 if first_release else 1.0)


#: The first releases' header (``bytes N type op time algbw busbw res``, NCCL 1's tests and nccl-tests
#: of 2017–18) in today's names; those builds printed times in ms, not µs.
_FIRST_NAMES = {"bytes": "size", "n": "count", "op": "redop", "res": "error"}


def _header_tokens(text: str) -> list[str]:
    """Header tokens, lower case, without the leading ``#`` but keeping ``#wrong`` whole; the first
    releases' names (:data:`_FIRST_NAMES`) read as today's."""
    body = text.strip()
    body = body[1:] if body.startswith("#") else body
    tokens = [t.lower() for t in body.split()]
    if tokens[:1] == ["bytes"]:
        tokens = [_FIRST_NAMES.get(t, t) for t in tokens]
    return tokens


def _value(token: str, name: str, where_text: str) -> float | str | None:
    """One cell: numbers parsed, ``N/A`` as ``None``, text kept for ``type`` and ``redop``."""
    if name in ("type", "redop"):
        return token
    if name in ("#wrong", "error", "wrong") and token.upper() == "N/A":
        return None
    try:
        return parse_number(token.rstrip("*"))
    except ValueError:
        raise MeasuredFileError(f"{where_text}: {name} must be a number, not {token!r}") from None


def _row(tokens: list[str], layout: _Layout, line_number: int, path: str) -> dict:
    """One result row against its header: every block's cells, by name."""
    here = where(path, line_number)
    record: dict = {"line": line_number}
    position = 0
    for name in layout.prefix:
        record[{"size": "bytes", "type": "dtype"}.get(name, name)] = _value(tokens[position], name, here)
        position += 1
    for block_name, names in zip(layout.block_names, layout.blocks, strict=True):
        for name in names:
            cell = _value(tokens[position], name, here)
            if name in _TIME_NAMES and isinstance(cell, float):
                cell *= layout.time_scale
            record[f"{block_name}_{_COLUMN_NAMES.get(name, name)}"] = cell
            if name in ("#wrong", "error", "wrong") and tokens[position].endswith("*"):
                record[f"{block_name}_check_failed"] = True
            position += 1
    if layout.timestamp:
        record["timestamp"] = " ".join(tokens[position:position + 2])
    for name in ("bytes", "count"):
        value = record.get(name)
        if not isinstance(value, float) or value < 0 or not value.is_integer():
            raise MeasuredFileError(f"{here}: {name} must be a whole number of "
                                    f"{'bytes' if name == 'bytes' else 'elements'}, not {value!r}")
        record[name] = int(value)
    record.setdefault("redop", None)
    record["root"] = int(record["root"]) if isinstance(record.get("root"), float) else None
    return record


def _row_tokens(text: str) -> list[str] | None:
    """The whitespace-split cells of a result row (a line whose first cell is a whole number), else ``None``."""
    tokens = text.split()
    if not tokens or not tokens[0].isdigit():
        return None
    return tokens


def _read_line(segment: _Segment, number: int, text: str, path: str, banner: str | None) -> str | None:
    """Fold one cleaned line into the segment; return the block banner it sets, if any."""
    stripped = text.strip()
    if "out-of-place" in stripped and "size" not in stripped:
        return "in_place" if stripped.startswith("in-place") else banner
    if not stripped.lstrip("#").strip():
        return banner
    if started := _STARTING.search(stripped):
        if name := _PROGRAM.match(started.group(1).rsplit("/", 1)[-1]):
            segment.started.setdefault(name.group(1), number)
        return banner
    if command := _COMMAND.search(stripped):
        segment.commanded.setdefault(command.group(1), number)
    if _read_metadata(segment, number, stripped, path):
        return banner
    if layout := header_layout(number, stripped, banner):
        segment.layout = layout
        return banner
    if (tokens := _row_tokens(stripped)) is not None and not stripped.startswith("#"):
        _add_row(segment, tokens, number, path)
    elif not stripped.startswith("#"):
        _cut_short_check(segment, path)
    return banner


def _read_metadata(segment: _Segment, number: int, stripped: str, path: str) -> bool:
    """A device line or a footer line folded into the segment; ``False`` for any other line."""
    if device := _DEVICE.match(stripped):
        rank = int(device.group(1))
        if rank in segment.devices:
            raise MeasuredFileError(
                f"{where(path, number)}: rank {rank} is listed twice (lines {segment.devices[rank][0]} and "
                f"{number}): two runs' output is interleaved in one file; keep one run per file")
        segment.devices[rank] = (number, device.group(4))
        return True
    if bounds := _BOUNDS.search(stripped):
        segment.out_of_bounds = int(bounds.group(1))
        return True
    if average := _AVERAGE.search(stripped):
        try:
            segment.footer_avg = parse_number(average.group(1))
        except ValueError:
            raise MeasuredFileError(f"{where(path, number)}: the average bus bandwidth must be a number, "
                                    f"not {average.group(1)!r}") from None
        return True
    return False

def _cut_short_check(segment: _Segment, path: str) -> None:
    """A row left unfinished when a line that cannot continue it comes: the file is cut short there."""
    if segment.partial is not None:
        number, tokens = segment.partial
        width = segment.layout.width if segment.layout else _CURRENT.width
        raise MeasuredFileError(f"{where(path, number)}: a result row with {len(tokens)} of its {width} fields: "
                                "the file is cut short here or mixes two formats")


def _continue_row(segment: _Segment, text: str, path: str) -> bool:
    """Append a line's cells to an unfinished row (NCCL's log lines can split one); ``True`` if it did."""
    if segment.partial is None:
        return False
    number, tokens = segment.partial
    segment.partial = None
    _add_row(segment, tokens + text.split(), number, path)
    return True


def _add_row(segment: _Segment, tokens: list[str], number: int, path: str) -> None:
    layout = segment.layout
    width = layout.width if layout else _CURRENT.width
    if len(tokens) < width:  # the rest of the row follows, after the log lines that interrupted it
        segment.partial = (number, tokens)
        return
    if layout is None:
        if len(tokens) != _CURRENT.width:
            raise MeasuredFileError(
                f"{where(path, number)}: a result row before any column header ('# size count type redop root "
                "time algbw busbw #wrong ...'): the header was cut off, or this is not nccl-tests output")
        layout = segment.layout = _CURRENT
    if len(tokens) != layout.width:
        raise MeasuredFileError(
            f"{where(path, number)}: a result row with {len(tokens)} fields where the header on line "
            f"{layout.line or '(none; assumed the current layout)'} has {layout.width}: the file is cut short here "
            "or mixes two formats")
    if layout.timestamp and not _DATE.match(tokens[-2]):
        raise MeasuredFileError(f"{where(path, number)}: the header announces a timestamp, but the row ends "
                                f"with {' '.join(tokens[-2:])!r}")
    segment.rows.append(_row(tokens, layout, number, path))


def _check_sweep(segment: _Segment, path: str) -> None:
    """One run prints its sizes in order for each type and operation (``-d all``, ``-o all``), and ``-N``
    starts the sweep again from its first size; a size that repeats at once, or steps back to any other
    size, means several processes printed into the file (a build without MPI under ``mpirun``)."""
    seen: dict[tuple, tuple[int, int, int]] = {}  # (dtype, redop, root) -> (first size, last size, its line)
    for row in segment.rows:
        key = (row["dtype"], row.get("redop"), row.get("root"))
        size, line = row["bytes"], row["line"]
        if key in seen:
            first, last, last_line = seen[key]
            if size == last or (size < last and size != first):
                raise MeasuredFileError(
                    f"{where(path, line)}: {size:,} bytes follows {last:,} bytes (line {last_line}): the rows of "
                    "several runs are interleaved (processes of a build without MPI each printing their own run?); "
                    "keep one run per file")
            seen[key] = (first, size, line)
        else:
            seen[key] = (size, size, line)


def _segments(text: str, path: str) -> list[_Segment]:
    """The file's runs, split where a new banner or column header follows result rows."""
    segments = [_Segment(1)]
    banner: str | None = None
    for number, raw in enumerate(text.splitlines(), start=1):
        line = clean_line(raw)
        if line is None:
            continue
        log = _NCCL_LOG.search(line)
        if log is not None:
            line = line[: log.start()]
        stripped = line.strip()
        current = segments[-1]
        if not stripped or (current.partial is not None and not stripped.startswith("#")
                            and _continue_row(current, stripped, path)):
            continue
        if current.rows and (_STARTING.search(stripped) or _NTHREAD.match(stripped)
                             or header_layout(number, stripped, banner)):
            _cut_short_check(current, path)
            segments.append(_Segment(number))
            banner = None
        if stripped.startswith("#"):
            _cut_short_check(segments[-1], path)
        banner = _read_line(segments[-1], number, line, path, banner)
    _cut_short_check(segments[-1], path)
    for segment in segments:
        _check_sweep(segment, path)
    return [s for s in segments if s.rows or s.devices or s.started]


def _program(segment: _Segment, path: str) -> str | None:
    """The one nccl-tests program the segment names (its banner first, else its command line)."""
    for names in (segment.started, segment.commanded):
        if len(names) > 1:
            (first, a), (second, b) = sorted(names.items(), key=lambda item: item[1])[:2]
            raise MeasuredFileError(f"{where(path, b)}: this file names two collectives, {first}_perf (line {a}) "
                                    f"and {second}_perf (line {b}); keep one run per file")
        if names:
            return next(iter(names))
    return None


def _device_ranks(segment: _Segment) -> int | None:
    return max(segment.devices) + 1 if segment.devices else None


def _one_run(segments: list[_Segment], path: str) -> tuple[str | None, int | None]:
    """The program and device rank count all segments agree on; one line naming the first that differs."""
    first = segments[0]
    program, ranks = _program(first, path), _device_ranks(first)
    for later in segments[1:]:
        other_program, other_ranks = _program(later, path), _device_ranks(later)
        if other_program and program and other_program != program:
            raise MeasuredFileError(f"{where(path, later.start_line)}: a second run starts here, of "
                                    f"{other_program}_perf, after a run of {program}_perf: keep one run per file")
        if other_ranks and ranks and other_ranks != ranks:
            raise MeasuredFileError(f"{where(path, later.start_line)}: a second run starts here on "
                                    f"{other_ranks} ranks, after a run on {ranks}: keep one run per file")
        program, ranks = program or other_program, ranks or other_ranks
    return program, ranks


def _observed_factor(table: pd.DataFrame) -> float | None:
    """busbw ÷ algbw on the row with the largest algbw (the least rounding), out-of-place first."""
    for block in BLOCKS:
        algbw, busbw = table.get(f"{block}_algbw_gbps"), table.get(f"{block}_busbw_gbps")
        if algbw is None or busbw is None or not (algbw > 0).any():
            continue
        best = algbw.idxmax()
        return float(busbw[best] / algbw[best])
    return None


def expected_factor(op: str, ranks: int) -> float | None:
    """busbw ÷ algbw that nccl-tests uses for ``op`` on ``ranks`` ranks (each test's ``GetBw``)."""
    if op == "all-reduce":
        return 2 * (ranks - 1) / ranks
    if op in _SHARE_OPS:
        return (ranks - 1) / ranks
    if op in _UNIT_OPS:
        return 1.0
    return None


def _ranks_from_factor(op: str | None, factor: float | None) -> int | None:
    """n from busbw ÷ algbw: 2(n−1)/n = r gives n = 2/(2−r); (n−1)/n = r gives n = 1/(1−r)."""
    if op is None or factor is None:
        return None
    if op == "all-reduce" and factor < 1.999:
        guess = 2 / (2 - factor)
    elif op in _SHARE_OPS and factor < 0.999:
        guess = 1 / (1 - factor)
    else:
        return None
    whole = round(guess)
    return whole if whole >= 2 and abs(guess - whole) < 0.05 * whole else None


def _infer_op(table: pd.DataFrame, ranks: int | None, factor: float | None) -> str | None:
    """The collective when the file never names it and only one fits its columns and busbw ÷ algbw."""
    if factor is None:
        return None
    redops = set(table["redop"].dropna())
    roots = set(table["root"].dropna())
    ops = ("all-reduce", "reduce-scatter", "all-gather", "broadcast", "reduce")
    if ranks:
        fits = [op for op in ops
                if (expected := expected_factor(op, ranks)) and abs(factor - expected) < 0.02 * expected]
    else:  # no rank count: the collectives whose busbw ÷ algbw gives a whole number of ranks (or is 1)
        fits = [op for op in ops if _ranks_from_factor(op, factor)
                or (op in _UNIT_OPS and abs(factor - 1.0) < 0.02)]
    if "none" in redops:
        fits = [op for op in fits if op in ("all-gather", "broadcast")]
    elif redops:
        fits = [op for op in fits if op in ("all-reduce", "reduce-scatter", "reduce")]
    if roots == {-1}:
        fits = [op for op in fits if op not in ("broadcast", "reduce")]
    return fits[0] if len(fits) == 1 else None


def _check_factor(op: str, ranks: int, factor: float | None, path: str, ranks_from: str) -> None:
    expected = expected_factor(op, ranks)
    if expected is None or factor is None or expected == 1.0:
        return
    if abs(factor - expected) > 0.02 * expected:
        raise MeasuredFileError(
            f"{path}: busbw ÷ algbw is {factor:.3f} in the file, but {op} on {ranks} ranks ({ranks_from}) gives "
            f"{expected:.3f}: the rank count or the collective is not the file's")


def read_nccl_tests_text(text: str, path: str, *, op: str | None = None, ranks: int | None = None) -> NcclTestsRun:
    """Read nccl-tests text output; ``op`` and ``ranks`` fill in what the file does not say."""
    segments = _segments(text, path)
    rows = [row for segment in segments for row in segment.rows]
    if not rows:
        raise MeasuredFileError(f"{path}: no nccl-tests result rows (lines of 'size count type ... time algbw busbw'): "
                                "the file ends before its first row, or is not nccl-tests output")
    program, device_ranks = _one_run(segments, path)
    table = pd.DataFrame(rows)
    resolved_op, resolved_ranks, ranks_from = _resolve(table, program, device_ranks, op, ranks, path)
    devices = tuple(name for segment in segments for _, name in sorted(segment.devices.values()))
    last = segments[-1]
    run = NcclTestsRun(
        path=path, op=resolved_op, program=program, ranks=resolved_ranks, ranks_from=ranks_from,
        devices=tuple(dict.fromkeys(devices)), table=table, footer_avg_busbw_gbps=last.footer_avg,
        out_of_bounds=last.out_of_bounds, nccl_algo=_nccl_algo(text),
        time_kind=segments[0].layout.time_kind if segments[0].layout else "time")
    return _with_notes(run, segments, resolved_op, len(segments))


def _resolve(table: pd.DataFrame, program: str | None, device_ranks: int | None, op: str | None,
             ranks: int | None, path: str) -> tuple[str | None, int | None, str]:
    """The collective, the rank count and where the count came from: the file first, then the caller,
    then busbw ÷ algbw; a caller's value the file contradicts is one line."""
    factor = _observed_factor(table)
    file_op = PROGRAM_OPS[program] if program else None
    if op and file_op and op != file_op:
        raise MeasuredFileError(f"{path}: --op {op}, but the file is a run of {program}_perf ({file_op})")
    resolved_ranks, ranks_from = _resolve_ranks(device_ranks, ranks, path)
    resolved_op = op or file_op or _infer_op(table, resolved_ranks, factor)
    if resolved_ranks is None and resolved_op:
        resolved_ranks, ranks_from = _ranks_from_factor(resolved_op, factor), "busbw ÷ algbw"
    if resolved_op and resolved_ranks:
        _check_factor(resolved_op, resolved_ranks, factor, path, ranks_from)
    return resolved_op, resolved_ranks, ranks_from if resolved_ranks else ""


def _resolve_ranks(device_ranks: int | None, asked: int | None, path: str) -> tuple[int | None, str]:
    if device_ranks and asked and device_ranks != asked:
        raise MeasuredFileError(f"{path}: --ranks {asked}, but the file's device lines list ranks 0 to "
                                f"{device_ranks - 1} ({device_ranks} ranks)")
    if device_ranks:
        return device_ranks, "the device lines"
    if asked:
        return asked, "--ranks"
    return None, ""


def _nccl_algo(text: str) -> str | None:
    """``NCCL_ALGO`` as the file's command line or environment sets it (``-x NCCL_ALGO=Ring``)."""
    found = _ALGO_ENV.findall(text)
    return found[-1] if found else None


def footer_tolerance_gbps(run: NcclTestsRun) -> float:
    """How far the footer may sit from the mean of the printed busbw: half the last printed digit of
    each value (the rows are rounded, the footer is not), averaged, plus the footer's own %g rounding."""
    digits: list[float] = []
    for block in BLOCKS:
        column = run.table.get(f"{block}_busbw_gbps")
        if column is not None:
            digits.extend(_half_unit(v) for v in column.dropna())
    footer = abs(run.footer_avg_busbw_gbps or 0.0)
    return (sum(digits) / len(digits) if digits else 0.0) + footer * 5e-6 + 1e-12


def _half_unit(value: float) -> float:
    """Half a unit of the last digit nccl-tests prints for a bandwidth (``%6.2f``, then fewer decimals)."""
    return 0.005 if value < 1000 else 0.05 if value < 10000 else 0.5


def _with_notes(run: NcclTestsRun, segments: Sequence[_Segment], op: str | None, count: int) -> NcclTestsRun:
    notes = []
    if count > 1:
        notes.append(f"{count} runs of the same collective and rank count, read as one table")
    if run.footer_avg_busbw_gbps is not None and math.isfinite(run.avg_busbw_gbps):
        gap = abs(run.footer_avg_busbw_gbps - run.avg_busbw_gbps)
        if count == 1 and gap > footer_tolerance_gbps(run):
            notes.append(f"the footer's average bus bandwidth ({run.footer_avg_busbw_gbps:g} GB/s) is not the mean "
                         f"of the rows read ({run.avg_busbw_gbps:.4g} GB/s): rows are missing from the file")
    listed = {rank for segment in segments for rank in segment.devices}
    if run.ranks and listed and len(listed) < run.ranks:
        notes.append(f"the device lines list {len(listed)} of the {run.ranks} ranks (ranks up to {max(listed)})")
    if op is None:
        notes.append("the file does not name its collective: give it (--op) for the model")
    if run.ranks is None:
        notes.append("the file does not list its ranks: give them (--ranks) for the model")
    if run.out_of_bounds:
        notes.append(f"nccl-tests found {run.out_of_bounds} results out of bounds: the data check failed")
    return NcclTestsRun(**{**run.__dict__, "notes": tuple(notes)})


def _json_block(record: dict, block: str, here: str) -> dict:
    """One ``out_of_place``/``in_place`` object of ``-J`` output as table cells (``time`` or ``cpu_time``)."""
    cells = record.get(block)
    if cells is None:
        return {}
    if not isinstance(cells, dict):
        raise MeasuredFileError(f"{here}: '{block}' must be an object with time, alg_bw, bus_bw, nwrong")
    out = {}
    for key, column in (("time", "time_us"), ("cpu_time", "time_us"), ("alg_bw", "algbw_gbps"),
                        ("bus_bw", "busbw_gbps"), ("nwrong", "wrong")):
        if key in cells:
            value = cells[key]
            try:
                out[f"{block}_{column}"] = None if value is None else parse_number(str(value))
            except ValueError:
                raise MeasuredFileError(f"{here}: '{block}.{key}' must be a number, not {value!r}") from None
    if f"{block}_time_us" not in out or f"{block}_busbw_gbps" not in out:
        raise MeasuredFileError(f"{here}: '{block}' lacks 'time' or 'bus_bw'")
    return out


def read_nccl_tests_json(data: dict, path: str, *, op: str | None = None, ranks: int | None = None) -> NcclTestsRun:
    """Read nccl-tests' ``-J`` JSON (``util.cu``: ``args``, ``config.devices``, ``results``,
    ``average_bus_bandwidth``); ``op`` and ``ranks`` fill in what the file does not say."""
    results = data.get("results")
    if not isinstance(results, list) or not results:
        raise MeasuredFileError(f"{path}: nccl-tests JSON without results (the run stopped before its first size?)")
    rows = []
    for index, record in enumerate(results):
        here = f"{path}: results[{index}]"
        if not isinstance(record, dict) or "size" not in record:
            raise MeasuredFileError(f"{here}: each result must be an object with 'size', 'count', 'type'")
        row: dict = {"line": index + 1}
        try:
            row.update(bytes=int(record["size"]), count=int(record.get("count", 0)),
                       dtype=str(record.get("type", "")), redop=record.get("redop"),
                       root=int(str(record.get("root", "-1")).strip()))
        except (TypeError, ValueError):
            raise MeasuredFileError(f"{here}: 'size', 'count' and 'root' must be whole numbers") from None
        for block in BLOCKS:
            row.update(_json_block(record, block, here))
        rows.append(row)
    args = [str(a) for a in data.get("args", []) if isinstance(a, (str, int))]
    program = next((m.group(1) for a in args[:1] if (m := _PROGRAM.match(a.rsplit("/", 1)[-1]))), None)
    config: dict = data["config"] if isinstance(data.get("config"), dict) else {}
    devices = [d for d in config.get("devices", []) if isinstance(d, dict)]
    device_ranks = max((int(d.get("rank", 0)) for d in devices), default=-1) + 1 or None
    table = pd.DataFrame(rows)
    resolved_op, resolved_ranks, ranks_from = _resolve(table, program, device_ranks, op, ranks, path)
    average = data.get("average_bus_bandwidth")
    footer = average.get("bandwidth") if isinstance(average, dict) else None
    bounds = data.get("out_of_bounds")
    env = " ".join(str(e) for e in data.get("env", []) if isinstance(e, str) and e.startswith("NCCL_ALGO="))
    run = NcclTestsRun(
        path=path, op=resolved_op, program=program, ranks=resolved_ranks, ranks_from=ranks_from,
        devices=tuple(dict.fromkeys(str(d.get("device_info", "")) for d in devices)), table=table,
        footer_avg_busbw_gbps=float(footer) if isinstance(footer, (int, float)) else None,
        out_of_bounds=bounds["count"] if isinstance(bounds, dict) and isinstance(bounds.get("count"), int) else None,
        nccl_algo=_nccl_algo(" ".join(args) + " " + env))
    return _with_notes(run, [], resolved_op, 1)
