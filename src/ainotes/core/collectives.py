"""The seven collective communication primitives as pure state transitions.

Each primitive is a change of state across ``n`` ranks. Every rank's buffer
has ``n`` chunk positions (one per rank, so that shards line up with ranks).
:func:`simulate` computes what each rank holds before and after, plus the
frames that teach the change: ``before``, one or two logical transfer steps
(arrows from a source chunk that stays visible), any intermediate state, and
``after``. The pictures are logical, not message schedules: real libraries
(NCCL and others) pick ring or tree algorithms by topology and message size.

Default inputs: rank ``r`` holds ``10 * (r + 1) + c`` at chunk position ``c``
(rank 0: 10, 11, 12, ...; rank 1: 20, 21, ...). With at most 8 ranks and 8
chunks every default value is distinct. Symbolically rank ``r`` is the letter
``"abcdefgh"[r]``, so ``b2`` is rank 1's chunk 2 and ``a0+b0+c0+d0`` is the
sum of every rank's chunk 0 on four ranks.

``None`` (JSON ``null``) marks a position that is not part of a rank's defined
input or output: a scatter's or broadcast's non-root ranks before, an
all-gather's positions other than a rank's own shard before, a reduce's
non-root ranks after, a reduce-scatter's and a scatter's other shards after.

Sums are always taken in rank order 0, 1, ..., n-1, so floating-point results
are reproducible and the identities in the tests hold exactly.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

from ainotes.base.errors import InputError
from ainotes.core import checks

OPS = ("all-reduce", "reduce", "reduce-scatter", "all-gather", "broadcast", "scatter", "all-to-all")
OPS_WITH_ROOT = frozenset({"reduce", "broadcast", "scatter"})
#: The primitives whose ring schedule the pictures can draw, chunk by chunk.
RING_OPS = ("all-reduce", "reduce-scatter", "all-gather")
SCHEDULES = ("logical", "ring")
MIN_RANKS = 2
MAX_RANKS = 8
RANK_LETTERS = "abcdefgh"

#: Display names for titles and captions.
OP_TITLES = {
    "all-reduce": "All-reduce",
    "reduce": "Reduce",
    "reduce-scatter": "Reduce-scatter",
    "all-gather": "All-gather",
    "broadcast": "Broadcast",
    "scatter": "Scatter",
    "all-to-all": "All-to-all",
}

Number = int | float
Combine = Literal["copy", "sum"]
FrameKind = Literal["before", "transfer", "state", "after"]


@dataclass(frozen=True)
class Chunk:
    """What one buffer position holds: a value and where it came from.

    ``index`` is the chunk's position in the source tensors; ``sources`` are
    the ranks whose chunk ``index`` is summed here (one rank: a plain copy).
    """

    value: Number
    index: int
    sources: tuple[int, ...]

    @property
    def label(self) -> str:
        """Full symbolic label, e.g. ``b2`` or ``a0+b0+c0+d0``."""
        return "+".join(f"{RANK_LETTERS[r]}{self.index}" for r in self.sources)

    @property
    def is_sum(self) -> bool:
        return len(self.sources) > 1


Buffers = tuple[tuple[Chunk | None, ...], ...]


@dataclass(frozen=True)
class Transfer:
    """One logical message: rank ``src`` sends its chunk at ``src_chunk`` to
    rank ``dst``, which stores it at ``dst_chunk`` (``combine="copy"``) or adds
    it to what it holds there (``combine="sum"``)."""

    src: int
    dst: int
    src_chunk: int
    dst_chunk: int
    combine: Combine
    chunk: Chunk

    @property
    def label(self) -> str:
        return self.chunk.label


@dataclass(frozen=True)
class Frame:
    """One picture: a caption, the buffers every rank holds at that point
    and, for a transfer frame, the messages about to be delivered (drawn from
    the source chunks, which stay visible)."""

    kind: FrameKind
    caption: str
    buffers: Buffers
    transfers: tuple[Transfer, ...] = ()
    #: Ring schedule only: chunks (of S/n bytes each) rank r has sent to rank r+1 so far,
    #: counting this frame's transfers.
    link_chunks: tuple[int, ...] | None = None

    @property
    def values(self) -> tuple[tuple[Number | None, ...], ...]:
        return _values(self.buffers)

    @property
    def labels(self) -> tuple[tuple[str | None, ...], ...]:
        return tuple(tuple(None if c is None else c.label for c in row) for row in self.buffers)


@dataclass(frozen=True)
class CollectiveRun:
    """The result of :func:`simulate`: the op, its ranks, its frames.

    ``before`` and ``after`` are the values (numbers or ``None``) of the first
    and last frame, as lists over ranks of lists over chunk positions.
    """

    op: str
    ranks: int
    root: int | None
    rank_names: tuple[str, ...]
    frames: tuple[Frame, ...]
    schedule: str = "logical"

    @property
    def before(self) -> tuple[tuple[Number | None, ...], ...]:
        return self.frames[0].values

    @property
    def after(self) -> tuple[tuple[Number | None, ...], ...]:
        return self.frames[-1].values

    @property
    def title(self) -> str:
        return f"{OP_TITLES[self.op]} across {self.ranks} ranks"


def default_inputs(ranks: int) -> tuple[tuple[int, ...], ...]:
    """Rank ``r`` chunk ``c`` holds ``10 * (r + 1) + c``: distinct for n <= 9."""
    return tuple(tuple(10 * (r + 1) + c for c in range(ranks)) for r in range(ranks))


def simulate(
    op: str,
    ranks: int = 4,
    root: int = 0,
    *,
    inputs: Sequence[Sequence[Number | None]] | None = None,
    rank_names: Sequence[str] | None = None,
    schedule: str = "logical",
) -> CollectiveRun:
    """Run collective ``op`` over ``ranks`` ranks and return its frames.

    ``root`` matters only for reduce, broadcast and scatter (``run.root`` is
    ``None`` for the others). ``inputs[r][c]`` overrides rank ``r``'s chunk
    ``c``; positions the op does not read may be ``None`` and are ignored.
    ``rank_names`` replaces the display names ``"rank 0"``, ``"rank 1"``, ...
    ``schedule="ring"`` (all-reduce, reduce-scatter, all-gather only) draws the ring
    algorithm step by step instead of one logical exchange: each step every rank
    passes one chunk to rank r+1, and each frame counts the chunks every link has
    carried (:func:`ring_frames`).

    Raises :class:`InputError` naming the field for an unknown op, ranks
    outside ``MIN_RANKS..MAX_RANKS``, a root outside ``0..ranks-1``, or
    malformed inputs or names.
    """
    check_op(op)
    _check_ranks(ranks)
    has_root = op in OPS_WITH_ROOT
    if has_root:
        _check_root(root, ranks)
    names = _check_rank_names(rank_names, ranks)
    reads = _input_positions(op, ranks, root)
    table = _check_inputs(inputs, ranks, reads) if inputs is not None else default_inputs(ranks)
    before: Buffers = tuple(
        tuple(_input_chunk(table[r][c], c, r) if reads[r][c] else None for c in range(ranks))
        for r in range(ranks)
    )
    if schedule not in SCHEDULES:
        raise InputError(f"'schedule' must be one of {', '.join(SCHEDULES)}: {schedule!r}")
    if schedule == "ring":
        if op not in RING_OPS:
            raise InputError(f"'schedule' ring is drawn for {', '.join(RING_OPS)} only, not {op}")
        frames = ring_frames(op, before, ranks)
    else:
        frames = _FRAME_BUILDERS[op](before, ranks, root, names)
    return CollectiveRun(op=op, ranks=ranks, root=root if has_root else None, rank_names=names, frames=frames,
                         schedule=schedule)


def _input_chunk(value: Number | None, index: int, rank: int) -> Chunk:
    assert value is not None, "every position the op reads was checked to hold a number"
    return Chunk(value, index, (rank,))


def run_to_json(run: CollectiveRun) -> dict:
    """The contract's JSON object: ``{"op", "ranks", "root", "before", "after", "frames"}``.

    A ring schedule adds ``"schedule": "ring"``. Each frame: ``kind``, ``caption``,
    ``buffers`` (values), ``labels`` (symbolic, e.g. ``"a0+b0"``), for a ring schedule
    ``link_chunks`` (see :class:`Frame`), and ``transfers``, each ``{"src", "dst",
    "chunk", "dst_chunk", "label", "combine"}`` where ``chunk`` is the source
    position and ``dst_chunk`` the destination position (they differ only in
    all-to-all).
    """
    return {
        "op": run.op,
        "ranks": run.ranks,
        "root": run.root,
        **({"schedule": run.schedule} if run.schedule != "logical" else {}),
        "before": _lists(run.before),
        "after": _lists(run.after),
        "frames": [
            {
                "kind": frame.kind,
                "caption": frame.caption,
                "buffers": _lists(frame.values),
                "labels": _lists(frame.labels),
                "transfers": [
                    {
                        "src": t.src,
                        "dst": t.dst,
                        "chunk": t.src_chunk,
                        "dst_chunk": t.dst_chunk,
                        "label": t.label,
                        "combine": t.combine,
                    }
                    for t in frame.transfers
                ],
                **({"link_chunks": list(frame.link_chunks)} if frame.link_chunks is not None else {}),
            }
            for frame in run.frames
        ],
    }


# Bus factor: bytes each rank must send, as a multiple of the tensor size S,
# under the bandwidth-optimal (ring or pipelined) algorithm. Source: NCCL tests,
# doc/PERFORMANCE.md ("bus bandwidth"): all-reduce 2(n-1)/n; reduce-scatter,
# all-gather and all-to-all (n-1)/n; broadcast and reduce 1. A scatter's root
# must send the n-1 shards that are not its own: (n-1)/n.
_BUS_FACTORS = {
    "all-reduce": (lambda n: Fraction(2 * (n - 1), n), "2(n−1)/n"),
    "reduce-scatter": (lambda n: Fraction(n - 1, n), "(n−1)/n"),
    "all-gather": (lambda n: Fraction(n - 1, n), "(n−1)/n"),
    "all-to-all": (lambda n: Fraction(n - 1, n), "(n−1)/n"),
    "scatter": (lambda n: Fraction(n - 1, n), "(n−1)/n"),
    "broadcast": (lambda n: Fraction(1), "1"),
    "reduce": (lambda n: Fraction(1), "1"),
}


def bus_factor_fraction(op: str, ranks: int) -> Fraction:
    """Exact bus factor (see :func:`bus_factor`) at a rank count the pictures can draw."""
    _check_ranks(ranks)
    return bus_factor_exact(op, ranks)


def bus_factor_exact(op: str, ranks: int) -> Fraction:
    """Exact bus factor at any rank count >= 2 (the cost model goes far past the pictures' 8)."""
    check_op(op)
    if isinstance(ranks, bool) or not isinstance(ranks, int) or ranks < MIN_RANKS:
        raise InputError(f"'ranks' must be a whole number >= {MIN_RANKS}: {ranks!r}")
    return _BUS_FACTORS[op][0](ranks)


def bus_factor_formula(op: str) -> str:
    """The bus factor as a formula in n, e.g. ``"2(n−1)/n"``."""
    check_op(op)
    return _BUS_FACTORS[op][1]


def bus_factor(op: str, ranks: int) -> float:
    """Bus bandwidth factor: busbw = algbw × factor (NCCL tests, PERFORMANCE.md).

    all-reduce 2(n−1)/n; reduce-scatter, all-gather, all-to-all and scatter
    (n−1)/n; broadcast and reduce 1. At n = 4: all-reduce 1.5, reduce-scatter
    and all-gather 0.75.
    """
    return float(bus_factor_fraction(op, ranks))


def ring_bytes_sent_per_rank(op: str, ranks: int, tensor_bytes: float) -> float:
    """Bytes the busiest rank sends under a ring (or pipelined chain) algorithm.

    bytes = bus_factor(op, n) × S, with S = ``tensor_bytes`` the size of the
    whole tensor (an all-gather's output, a reduce-scatter's input). A ring
    all-reduce is a reduce-scatter ((n−1)/n · S) followed by an all-gather
    ((n−1)/n · S): 2(n−1)/n · S per rank.
    """
    if isinstance(tensor_bytes, bool) or not isinstance(tensor_bytes, int | float):
        raise InputError(f"'tensor_bytes' must be a number: {tensor_bytes!r}")
    if not math.isfinite(tensor_bytes) or tensor_bytes < 0:
        raise InputError(f"'tensor_bytes' must be a finite number >= 0: {tensor_bytes!r}")
    return bus_factor(op, ranks) * tensor_bytes


# --- validation ---------------------------------------------------------------


def check_op(op: object, name: str = "'op'", field: str = "op") -> str:
    """The one op-name check: ``op`` is one of :data:`OPS`, else a :class:`FieldError` (``field``)
    naming them, ``name`` being how the caller names the field (``'op'``, ``OP``, ``op=``); the
    signature of :mod:`ainotes.core.checks`, so a fence's ``reader.checked(check_op, "op", value)`` works."""
    return checks.one_of(op, name, field, choices=OPS)


def _check_ranks(ranks: object) -> None:
    if isinstance(ranks, bool) or not isinstance(ranks, int):
        raise InputError(f"'ranks' must be a whole number between {MIN_RANKS} and {MAX_RANKS}: {ranks!r}")
    if not MIN_RANKS <= ranks <= MAX_RANKS:
        raise InputError(f"'ranks' must be between {MIN_RANKS} and {MAX_RANKS}: {ranks}")


def _check_root(root: object, ranks: int) -> None:
    if isinstance(root, bool) or not isinstance(root, int):
        raise InputError(f"'root' must be a whole number between 0 and {ranks - 1}: {root!r}")
    if not 0 <= root < ranks:
        raise InputError(f"'root' must be between 0 and {ranks - 1}: {root}")


def _check_rank_names(rank_names: Sequence[str] | None, ranks: int) -> tuple[str, ...]:
    if rank_names is None:
        return tuple(f"rank {r}" for r in range(ranks))
    names = tuple(rank_names)
    if len(names) != ranks:
        raise InputError(f"'rank_names' must have one name per rank ({ranks}): {len(names)}")
    for r, name in enumerate(names):
        if not isinstance(name, str) or not name.strip():
            raise InputError(f"'rank_names[{r}]' must be a non-empty string: {name!r}")
    return names


def _check_inputs(
    inputs: Sequence[Sequence[Number | None]], ranks: int, reads: tuple[tuple[bool, ...], ...]
) -> tuple[tuple[Number | None, ...], ...]:
    rows = list(inputs)
    if len(rows) != ranks:
        raise InputError(f"'inputs' must have one row per rank ({ranks}): {len(rows)}")
    table = []
    for r, row in enumerate(rows):
        cells = list(row)
        if len(cells) != ranks:
            raise InputError(f"'inputs[{r}]' must have one entry per chunk ({ranks}): {len(cells)}")
        for c, value in enumerate(cells):
            if not reads[r][c]:
                continue
            if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
                raise InputError(f"'inputs[{r}][{c}]' must be a finite number: {value!r}")
        table.append(tuple(cells))
    return tuple(table)


def _input_positions(op: str, ranks: int, root: int) -> tuple[tuple[bool, ...], ...]:
    """Which (rank, chunk) positions the op reads: its defined input."""
    if op in ("broadcast", "scatter"):
        return tuple(tuple(r == root for _ in range(ranks)) for r in range(ranks))
    if op == "all-gather":
        return tuple(tuple(c == r for c in range(ranks)) for r in range(ranks))
    return tuple(tuple(True for _ in range(ranks)) for _ in range(ranks))


# --- frames ---------------------------------------------------------------------


def _total(before: Buffers, index: int, ranks: int) -> Chunk:
    """Every rank's chunk ``index`` summed, in rank order."""
    return _partial(before, index, tuple(range(ranks)))


def _empty(ranks: int) -> list[list[Chunk | None]]:
    return [[None] * ranks for _ in range(ranks)]


def _freeze(rows: list[list[Chunk | None]]) -> Buffers:
    return tuple(tuple(row) for row in rows)


def _send(buffers: Buffers, src: int, dst: int, src_chunk: int, dst_chunk: int, combine: Combine) -> Transfer:
    chunk = buffers[src][src_chunk]
    assert chunk is not None
    return Transfer(src, dst, src_chunk, dst_chunk, combine, chunk)


def _whole_tensor(ranks: int) -> str:
    return f"its own tensor, split into {ranks} chunks"


def _reduce_scatter_step(before: Buffers, n: int) -> tuple[tuple[Transfer, ...], Buffers]:
    """Every rank sends its chunk j to rank j, which sums them: the transfers and the shards after."""
    step = tuple(_send(before, r, j, j, j, "sum") for j in range(n) for r in range(n) if r != j)
    rows = _empty(n)
    for j in range(n):
        rows[j][j] = _total(before, j, n)
    return step, _freeze(rows)


def _all_gather_step(shards: Buffers, n: int) -> tuple[tuple[Transfer, ...], Buffers]:
    """Every rank sends its shard j to every other rank: the transfers and the whole tensor after."""
    step = tuple(_send(shards, j, r, j, j, "copy") for j in range(n) for r in range(n) if r != j)
    return step, _freeze([[shards[c][c] for c in range(n)] for _ in range(n)])


def _all_reduce(before: Buffers, n: int, root: int, names: tuple[str, ...]) -> tuple[Frame, ...]:
    # All-reduce = reduce-scatter then all-gather, drawn as those two steps.
    reduce_step, middle = _reduce_scatter_step(before, n)
    gather_step, after = _all_gather_step(middle, n)
    return (
        Frame("before", f"Before: each rank holds {_whole_tensor(n)}.", before),
        Frame("transfer", "Reduce step: every rank sends its chunk j to rank j, which adds the pieces up.",
              before, reduce_step),
        Frame("state", "Now rank j holds the full sum of chunk j (this half is a reduce-scatter).", middle),
        Frame("transfer", "Share step: each rank sends its summed chunk to every other rank (an all-gather).",
              middle, gather_step),
        Frame("after", "After: every rank holds the whole summed tensor.", after),
    )


def _reduce(before: Buffers, n: int, root: int, names: tuple[str, ...]) -> tuple[Frame, ...]:
    step = tuple(_send(before, r, root, c, c, "sum") for c in range(n) for r in range(n) if r != root)
    rows = _empty(n)
    rows[root] = [_total(before, c, n) for c in range(n)]
    return (
        Frame("before", f"Before: each rank holds {_whole_tensor(n)}.", before),
        Frame("transfer", f"Every other rank sends its whole tensor to the root, {names[root]}, which adds them up.",
              before, step),
        Frame("after", "After: only the root holds the sum; the other ranks have no output.", _freeze(rows)),
    )


def _reduce_scatter(before: Buffers, n: int, root: int, names: tuple[str, ...]) -> tuple[Frame, ...]:
    step, after = _reduce_scatter_step(before, n)
    return (
        Frame("before", f"Before: each rank holds {_whole_tensor(n)}.", before),
        Frame("transfer", "Every rank sends its chunk j to rank j, which adds the pieces up.", before, step),
        Frame("after", "After: rank j holds the sum of chunk j, and only that shard.", after),
    )


def _all_gather(before: Buffers, n: int, root: int, names: tuple[str, ...]) -> tuple[Frame, ...]:
    step, after = _all_gather_step(before, n)
    return (
        Frame("before", "Before: rank j holds only its own shard, chunk j.", before),
        Frame("transfer", "Every rank sends a copy of its shard to every other rank.", before, step),
        Frame("after", "After: every rank holds all the shards, the whole tensor.", after),
    )


def _broadcast(before: Buffers, n: int, root: int, names: tuple[str, ...]) -> tuple[Frame, ...]:
    step = tuple(_send(before, root, r, c, c, "copy") for r in range(n) if r != root for c in range(n))
    after = _freeze([list(before[root]) for _ in range(n)])
    return (
        Frame("before", f"Before: only the root, {names[root]}, holds the tensor.", before),
        Frame("transfer", "The root sends a copy of its whole tensor to every other rank.", before, step),
        Frame("after", "After: every rank holds the root's tensor.", after),
    )


def _scatter(before: Buffers, n: int, root: int, names: tuple[str, ...]) -> tuple[Frame, ...]:
    step = tuple(_send(before, root, j, j, j, "copy") for j in range(n) if j != root)
    rows = _empty(n)
    for j in range(n):
        rows[j][j] = before[root][j]
    return (
        Frame("before", f"Before: only the root, {names[root]}, holds the tensor.", before),
        Frame("transfer", f"The root sends chunk j to rank j and keeps chunk {root} for itself.", before, step),
        Frame("after", "After: rank j holds chunk j of the root's tensor, and only that shard.", _freeze(rows)),
    )


def _all_to_all(before: Buffers, n: int, root: int, names: tuple[str, ...]) -> tuple[Frame, ...]:
    step = tuple(_send(before, r, c, c, r, "copy") for r in range(n) for c in range(n) if c != r)
    after = _freeze([[before[c][r] for c in range(n)] for r in range(n)])
    return (
        Frame("before", f"Before: each rank holds {_whole_tensor(n)}.", before),
        Frame("transfer", "Rank i sends its chunk j to rank j, into slot i: chunks swap across the diagonal.",
              before, step),
        Frame("after", "After: rank j holds chunk j of every rank, a transpose across ranks.", after),
    )


# --- the ring schedule -------------------------------------------------------------


def _partial(before: Buffers, index: int, sources: tuple[int, ...]) -> Chunk:
    """Chunk ``index`` summed over ``sources``, in rank order (so the final sums equal :func:`_total`'s)."""
    value: Number = 0
    for r in sorted(sources):
        chunk = before[r][index]
        assert chunk is not None
        value = value + chunk.value
    return Chunk(value, index, tuple(sorted(sources)))


def _ring_pass(state: Buffers, n: int, step: int, combine: Combine) -> tuple[Transfer, ...]:
    """One ring step: rank r sends chunk (r − step − 1) mod n when reducing, (r − step) mod n when
    gathering, to rank (r + 1) mod n. With these offsets rank j ends a reduce-scatter holding the
    whole sum of chunk j, as the logical pictures show."""
    shift = 1 if combine == "sum" else 0
    return tuple(
        _send(state, r, (r + 1) % n, (r - step - shift) % n, (r - step - shift) % n, combine) for r in range(n)
    )


def _apply(state: Buffers, before: Buffers, transfers: tuple[Transfer, ...]) -> Buffers:
    rows = [list(row) for row in state]
    for t in transfers:
        held = rows[t.dst][t.dst_chunk]
        if t.combine == "sum" and held is not None:
            rows[t.dst][t.dst_chunk] = _partial(before, t.dst_chunk, tuple(set(held.sources) | set(t.chunk.sources)))
        else:
            rows[t.dst][t.dst_chunk] = t.chunk
    return _freeze(rows)


def ring_frames(op: str, before: Buffers, n: int) -> tuple[Frame, ...]:
    """The ring algorithm, step by step (Patarasuk & Yuan 2009; NCCL's ring).

    Reduce-scatter: n − 1 steps; in step s rank r sends its running sum of chunk
    (r − s − 1) mod n to rank r + 1, which adds its own piece. All-gather: n − 1 steps;
    rank r forwards chunk (r − s) mod n. All-reduce: the first, then the second. Every
    step each link carries one chunk of S/n bytes, so at the end each link has carried
    (n − 1)/n · S (reduce-scatter, all-gather) or 2(n − 1)/n · S (all-reduce): the bus factor.
    """
    steps_total = 2 * (n - 1) if op == "all-reduce" else n - 1
    frames: list[Frame] = []
    sent = [0] * n
    done = 0

    def run_phase(state: Buffers, combine: Combine, phase: str) -> Buffers:
        nonlocal done
        for step in range(n - 1):
            transfers = _ring_pass(state, n, step, combine)
            done += 1
            for t in transfers:
                sent[t.src] += 1
            what = ("passes its running sum of one chunk to the next rank, which adds its own piece"
                    if combine == "sum" else "forwards one finished chunk to the next rank")
            frames.append(Frame(
                "transfer",
                f"Ring step {done} of {steps_total} ({phase}): each rank {what}. "
                f"Each link has now carried {done} × S/{n}.",
                state, transfers, link_chunks=tuple(sent),
            ))
            state = _apply(state, before, transfers)
        return state

    if op == "all-gather":
        frames.append(Frame("before", "Before: rank j holds only its own shard, chunk j.", before,
                            link_chunks=tuple(sent)))
        state = run_phase(before, "copy", "all-gather")
        return (*frames, Frame("after", f"After: every rank holds the whole tensor. Each link carried {n - 1} × S/{n}"
                               f" = (n−1)/n · S, the bus factor.", state, link_chunks=tuple(sent)))
    frames.append(Frame("before", f"Before: each rank holds {_whole_tensor(n)}.", before, link_chunks=tuple(sent)))
    state = run_phase(before, "sum", "reduce-scatter")
    shards = _empty(n)
    for j in range(n):
        shards[j][j] = state[j][j]
    middle = _freeze(shards)
    if op == "reduce-scatter":
        return (*frames, Frame("after", f"After: rank j keeps the whole sum of chunk j, its shard. Each link carried "
                               f"{n - 1} × S/{n} = (n−1)/n · S, the bus factor.", middle, link_chunks=tuple(sent)))
    frames.append(Frame("state", "Rank j now holds the whole sum of chunk j; the second half passes these on.",
                        middle, link_chunks=tuple(sent)))
    state = run_phase(middle, "copy", "all-gather")
    return (*frames, Frame("after", f"After: every rank holds the whole sum. Each link carried {2 * (n - 1)} × S/{n}"
                           f" = 2(n−1)/n · S, the bus factor.", state, link_chunks=tuple(sent)))


_FRAME_BUILDERS = {
    "all-reduce": _all_reduce,
    "reduce": _reduce,
    "reduce-scatter": _reduce_scatter,
    "all-gather": _all_gather,
    "broadcast": _broadcast,
    "scatter": _scatter,
    "all-to-all": _all_to_all,
}


def _values(buffers: Buffers) -> tuple[tuple[Number | None, ...], ...]:
    return tuple(tuple(None if c is None else c.value for c in row) for row in buffers)


def _lists(rows: tuple[tuple, ...]) -> list[list]:
    return [list(row) for row in rows]
