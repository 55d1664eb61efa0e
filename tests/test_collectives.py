"""The collective primitives as state transitions: values, nulls, frames, costs, identities."""

from __future__ import annotations

import json
import math
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ainotes.base.errors import InputError
from ainotes.core.collectives import (
    MAX_RANKS,
    MIN_RANKS,
    OPS,
    RING_OPS,
    bus_factor,
    bus_factor_fraction,
    default_inputs,
    ring_bytes_sent_per_rank,
    run_to_json,
    simulate,
)

N = 4
# Default input: rank r, chunk c holds 10 * (r + 1) + c.
INPUT = [[10 * (r + 1) + c for c in range(N)] for r in range(N)]
TOTALS = [sum(INPUT[r][c] for r in range(N)) for c in range(N)]  # [100, 104, 108, 112]


def lists(rows):
    return [list(row) for row in rows]


def test_default_inputs_are_distinct_and_documented():
    values = [v for row in default_inputs(MAX_RANKS) for v in row]
    assert len(set(values)) == len(values)
    assert lists(simulate("all-reduce", N).before) == INPUT
    assert TOTALS == [100, 104, 108, 112]


def test_all_reduce_every_rank_gets_the_whole_sum():
    run = simulate("all-reduce", N)
    assert lists(run.after) == [TOTALS] * N
    assert run.root is None


def test_reduce_only_the_root_gets_the_sum():
    run = simulate("reduce", N, root=2)
    assert lists(run.after) == [[None] * N, [None] * N, TOTALS, [None] * N]
    assert run.root == 2


def test_reduce_scatter_keeps_one_summed_shard_per_rank():
    run = simulate("reduce-scatter", N)
    assert lists(run.after) == [[TOTALS[c] if c == r else None for c in range(N)] for r in range(N)]


def test_all_gather_starts_from_one_shard_per_rank():
    run = simulate("all-gather", N)
    assert lists(run.before) == [[INPUT[r][c] if c == r else None for c in range(N)] for r in range(N)]
    assert lists(run.after) == [[INPUT[c][c] for c in range(N)]] * N


def test_broadcast_copies_the_root_tensor():
    run = simulate("broadcast", N, root=1)
    assert lists(run.before) == [[None] * N, INPUT[1], [None] * N, [None] * N]
    assert lists(run.after) == [INPUT[1]] * N


def test_scatter_sends_shard_j_to_rank_j():
    run = simulate("scatter", N, root=3)
    assert lists(run.before) == [[None] * N, [None] * N, [None] * N, INPUT[3]]
    assert lists(run.after) == [[INPUT[3][c] if c == r else None for c in range(N)] for r in range(N)]


def test_all_to_all_is_a_transpose():
    run = simulate("all-to-all", N)
    assert lists(run.after) == [[INPUT[c][r] for c in range(N)] for r in range(N)]


def test_symbolic_labels_name_the_parts_of_each_sum():
    run = simulate("all-reduce", N)
    assert run.frames[-1].labels[2][0] == "a0+b0+c0+d0"
    assert simulate("all-to-all", N).frames[-1].labels[0] == ("a0", "b0", "c0", "d0")
    assert simulate("broadcast", N, root=1).frames[-1].labels[3] == ("b0", "b1", "b2", "b3")


SCHEDULED = [(op, "logical") for op in OPS] + [(op, "ring") for op in RING_OPS]


@pytest.mark.parametrize(("op", "schedule"), SCHEDULED)
@pytest.mark.parametrize("ranks", [2, 3, 4, 8])
def test_frames_start_before_and_end_after(op, schedule, ranks):
    run = simulate(op, ranks, root=ranks - 1, schedule=schedule)
    assert run.frames[0].kind == "before" and run.frames[-1].kind == "after"
    assert run.frames[0].values == run.before
    assert run.frames[-1].values == run.after
    for frame in run.frames:
        assert frame.caption and "\n" not in frame.caption
        assert len(frame.buffers) == ranks and all(len(row) == ranks for row in frame.buffers)
    assert any(frame.transfers for frame in run.frames)


@pytest.mark.parametrize(("op", "schedule"), SCHEDULED)
@pytest.mark.parametrize("ranks", [2, 3, 4, 8])
def test_every_arrow_delivers_what_the_next_frame_shows(op, schedule, ranks):
    run = simulate(op, ranks, root=0, schedule=schedule)
    for frame, following in zip(run.frames, run.frames[1:], strict=False):
        arriving: dict[tuple[int, int], list] = {}
        for t in frame.transfers:
            assert t.src != t.dst
            assert frame.buffers[t.src][t.src_chunk] == t.chunk  # the source chunk stays visible
            arriving.setdefault((t.dst, t.dst_chunk), []).append(t)
        if not frame.transfers:
            continue
        for (dst, position), transfers in arriving.items():
            result = following.buffers[dst][position]
            assert result is not None
            for t in transfers:
                if t.combine == "copy":
                    assert result == t.chunk
                else:
                    assert set(t.chunk.sources) <= set(result.sources)
        # Anything that changed was delivered by an arrow (or is a local sum that one fed).
        for r in range(ranks):
            for c in range(ranks):
                now, then = frame.buffers[r][c], following.buffers[r][c]
                if then is not None and then != now:
                    assert (r, c) in arriving


def test_json_matches_the_contract():
    data = run_to_json(simulate("reduce-scatter", N))
    assert set(data) == {"op", "ranks", "root", "before", "after", "frames"}
    assert data["root"] is None and data["ranks"] == N and data["op"] == "reduce-scatter"
    assert data["frames"][-1]["buffers"] == data["after"]
    transfer = data["frames"][1]["transfers"][0]
    assert set(transfer) == {"src", "dst", "chunk", "dst_chunk", "label", "combine"}
    text = json.dumps(data, allow_nan=False)
    assert '"after": [[100, null, null, null]' in text
    assert run_to_json(simulate("scatter", N, root=2))["root"] == 2


def test_all_to_all_transfers_name_both_positions():
    frame = simulate("all-to-all", N).frames[1]
    t = next(t for t in frame.transfers if t.src == 0 and t.dst == 2)
    assert (t.src_chunk, t.dst_chunk, t.label) == (2, 0, "a2")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"op": "all-reduce", "ranks": MAX_RANKS + 1}, "'ranks' must be between 2 and 8: 9"),
        ({"op": "all-reduce", "ranks": MIN_RANKS - 1}, "'ranks' must be between 2 and 8: 1"),
        ({"op": "all-reduce", "ranks": True}, "'ranks' must be a whole number between 2 and 8: True"),
        ({"op": "all-sum", "ranks": 4}, "'op' must be one of all-reduce, reduce, reduce-scatter"),
        ({"op": "broadcast", "ranks": 4, "root": 4}, "'root' must be between 0 and 3: 4"),
        ({"op": "scatter", "ranks": 4, "root": -1}, "'root' must be between 0 and 3: -1"),
        ({"op": "reduce", "ranks": 4, "root": "0"}, "'root' must be a whole number between 0 and 3: '0'"),
        ({"op": "all-reduce", "ranks": 2, "inputs": [[1, 2]]}, "'inputs' must have one row per rank (2): 1"),
        ({"op": "all-reduce", "ranks": 2, "inputs": [[1, 2], [3]]}, "'inputs[1]' must have one entry per chunk (2): 1"),
        ({"op": "all-reduce", "ranks": 2, "inputs": [[1, 2], [3, math.nan]]},
         "'inputs[1][1]' must be a finite number: nan"),
        ({"op": "all-reduce", "ranks": 2, "inputs": [[1, "x"], [3, 4]]}, "'inputs[0][1]' must be a finite number: 'x'"),
        ({"op": "all-reduce", "ranks": 2, "rank_names": ["a"]}, "'rank_names' must have one name per rank (2): 1"),
        ({"op": "all-reduce", "ranks": 2, "rank_names": ["a", " "]}, "'rank_names[1]' must be a non-empty string: ' '"),
    ],
)
def test_bad_input_is_one_line_naming_the_field(kwargs, message):
    with pytest.raises(InputError) as caught:
        simulate(**kwargs)
    assert str(caught.value).startswith(message)
    assert "\n" not in str(caught.value)


def test_root_is_ignored_by_ops_without_one():
    assert simulate("all-gather", 4, root=9).root is None


def test_positions_an_op_does_not_read_may_be_null():
    run = simulate("broadcast", 2, root=1, inputs=[[None, None], [5, 6]])
    assert lists(run.after) == [[5, 6], [5, 6]]


def test_bus_factors_at_four_ranks():
    assert bus_factor("all-reduce", 4) == 1.5
    assert bus_factor("reduce-scatter", 4) == 0.75
    assert bus_factor("all-gather", 4) == 0.75
    assert bus_factor("all-to-all", 4) == 0.75
    assert bus_factor("broadcast", 4) == 1.0
    assert bus_factor("reduce", 4) == 1.0
    with pytest.raises(InputError, match="'ranks' must be between 2 and 8: 9"):
        bus_factor("all-reduce", 9)


def test_ring_all_reduce_sends_twice_a_reduce_scatter():
    # 2(n-1)/n of 1 GB on 8 ranks: 1.75 GB per rank; reduce-scatter and all-gather 0.875 GB each.
    assert ring_bytes_sent_per_rank("all-reduce", 8, 1e9) == pytest.approx(1.75e9)
    assert ring_bytes_sent_per_rank("reduce-scatter", 8, 1e9) + ring_bytes_sent_per_rank(
        "all-gather", 8, 1e9
    ) == pytest.approx(1.75e9)
    with pytest.raises(InputError, match=r"'tensor_bytes' must be a finite number >= 0: -1"):
        ring_bytes_sent_per_rank("all-gather", 4, -1)


@pytest.mark.parametrize("op", RING_OPS)
@pytest.mark.parametrize("ranks", [2, 3, 4, 5, 8])
def test_ring_steps_go_to_the_neighbour_and_count_the_bus_factor(op, ranks):
    run = simulate(op, ranks, schedule="ring")
    steps = [frame for frame in run.frames if frame.transfers]
    assert len(steps) == (2 if op == "all-reduce" else 1) * (ranks - 1)
    carried = [0] * ranks
    for frame in steps:
        # One chunk per link per step, every rank to rank r + 1 (mod n).
        assert sorted((t.src, t.dst) for t in frame.transfers) == [(r, (r + 1) % ranks) for r in range(ranks)]
        for t in frame.transfers:
            carried[t.src] += 1
        assert list(frame.link_chunks) == carried
    # Chunks of S/n: each link carried bus_factor × S, as the cost notes say.
    assert [Fraction(k, ranks) for k in run.frames[-1].link_chunks] == [bus_factor_fraction(op, ranks)] * ranks
    assert run_to_json(run)["schedule"] == "ring"
    assert run_to_json(run)["frames"][-1]["link_chunks"] == [int(bus_factor_fraction(op, ranks) * ranks)] * ranks


def test_ring_schedule_is_drawn_for_three_ops_only():
    with pytest.raises(InputError, match="'schedule' ring is drawn for all-reduce, reduce-scatter, all-gather only"):
        simulate("broadcast", 4, schedule="ring")
    with pytest.raises(InputError, match="'schedule' must be one of logical, ring: 'tree'"):
        simulate("all-reduce", 4, schedule="tree")


# --- identities, over random sizes, roots and values ------------------------------------

numbers = st.one_of(
    st.integers(min_value=-(10**9), max_value=10**9),
    st.floats(min_value=-1e12, max_value=1e12, allow_nan=False, allow_infinity=False),
)


@st.composite
def cases(draw):
    ranks = draw(st.integers(MIN_RANKS, MAX_RANKS))
    root = draw(st.integers(0, ranks - 1))
    table = draw(st.lists(st.lists(numbers, min_size=ranks, max_size=ranks), min_size=ranks, max_size=ranks))
    return ranks, root, table


@settings(max_examples=60, deadline=None)
@given(cases())
def test_all_reduce_is_reduce_scatter_then_all_gather(case):
    ranks, _, table = case
    shards = simulate("reduce-scatter", ranks, inputs=table).after
    assert simulate("all-gather", ranks, inputs=shards).after == simulate("all-reduce", ranks, inputs=table).after


@settings(max_examples=60, deadline=None)
@given(cases())
def test_ring_schedule_ends_where_the_logical_one_does(case):
    ranks, _, table = case
    for op in RING_OPS:
        inputs = table if op != "all-gather" else [[v if c == r else None for c, v in enumerate(row)]
                                                  for r, row in enumerate(table)]
        ring = simulate(op, ranks, inputs=inputs, schedule="ring")
        logical = simulate(op, ranks, inputs=inputs)
        assert ring.after == logical.after
        assert ring.frames[-1].buffers == logical.frames[-1].buffers


@settings(max_examples=60, deadline=None)
@given(cases())
def test_scatter_then_all_gather_is_broadcast(case):
    ranks, root, table = case
    shards = simulate("scatter", ranks, root=root, inputs=table).after
    gathered = simulate("all-gather", ranks, inputs=shards).after
    assert gathered == simulate("broadcast", ranks, root=root, inputs=table).after


@settings(max_examples=60, deadline=None)
@given(cases())
def test_all_to_all_twice_is_the_identity(case):
    ranks, _, table = case
    once = simulate("all-to-all", ranks, inputs=table).after
    assert lists(simulate("all-to-all", ranks, inputs=once).after) == table


@settings(max_examples=60, deadline=None)
@given(cases())
def test_reduce_root_holds_what_all_reduce_gives_everyone(case):
    ranks, root, table = case
    reduced = simulate("reduce", ranks, root=root, inputs=table).after
    everyone = simulate("all-reduce", ranks, inputs=table).after
    assert all(row == reduced[root] for row in everyone)
    assert all(row == (None,) * ranks for r, row in enumerate(reduced) if r != root)
