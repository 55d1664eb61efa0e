"""How long it takes: link presets, the α–β model of collectives, time to train, and their commands.

Every formula is checked against a computation written here independently of
the core: the FACTS table typed out with ``math.log2`` at powers of two, and a
step-by-step count of the rounds and bytes of each ring schedule.
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ainotes.base.errors import InputError
from ainotes.cli import main
from ainotes.core import collective_cost as cc
from ainotes.core.links import Link, link_by_id
from ainotes.core.utilization import time_to_train
from ainotes.presets.gpus import load_presets, validate_paths
from ainotes.presets.links import default_links_dir, load_link, load_links
from preset_support import FIXTURE_PRESETS, UNKNOWN_ID, names_the_file, shipped_ids

REPO = Path(__file__).resolve().parents[1]
PRESETS_DIR = REPO / "presets"
LINKS_DIR = PRESETS_DIR / "links"

GOOD_LINK = (
    "name: Test link\nbandwidth_gbps: 100\nlatency_us: 2\n"
    "sources:\n  - title: Vendor table\n    url: https://example.com/spec\n"
)

# --- link presets -------------------------------------------------------------------

# FACTS, "Collective cost": per direction, per GPU, GB/s.
PUBLISHED_LINKS = {
    "nvlink-3": 300, "nvlink-4": 450, "nvlink-5": 900, "pcie-4-x16": 32, "pcie-5-x16": 64,
    "ib-hdr": 25, "ib-ndr": 50, "ib-xdr": 100,
}


def test_the_published_links_carry_the_published_bandwidths() -> None:
    links = {link.id: link for link in load_links(FIXTURE_PRESETS / "links")}  # the files as first published
    assert {i: links[i].bandwidth_gbps for i in links} == PUBLISHED_LINKS
    for link in links.values():
        assert any("tuning.cc" in s.url for s in link.sources), f"{link.id} must cite where α comes from"
    assert links["nvlink-4"].bandwidth_bytes_per_s == 450e9
    assert links["ib-ndr"].latency_s == pytest.approx(4e-6)


def test_every_shipped_link_is_plausible_and_cited() -> None:
    # Whatever links ship (an author adds one as a file), each loads, cites a source and has an α of a few µs.
    links = load_links(LINKS_DIR)
    assert links
    for link in links:
        assert 0.1 <= link.latency_us <= 20, "α is a few microseconds in NCCL's model"
        assert link.sources, f"{link.id} cites no source"
    shipped = {link.id: link.bandwidth_gbps for link in links}
    assert {i: shipped[i] for i in PUBLISHED_LINKS if i in shipped} == {
        i: gbps for i, gbps in PUBLISHED_LINKS.items() if i in shipped}


def test_gpu_loader_ignores_the_links_subfolder() -> None:
    ids = sorted(p.id for p in load_presets(PRESETS_DIR))
    assert ids == list(shipped_ids())  # the GPU files, not the links beside them
    checks = validate_paths([PRESETS_DIR])
    assert all(c.ok for c in checks)
    assert not any("links" in c.path for c in checks)
    assert default_links_dir(PRESETS_DIR) == LINKS_DIR


def test_adding_a_link_is_one_file(tmp_path: Path) -> None:
    (tmp_path / "my-link.yaml").write_text(GOOD_LINK)
    (link,) = load_links(tmp_path)
    assert (link.id, link.name, link.bandwidth_gbps, link.latency_us) == ("my-link", "Test link", 100.0, 2.0)
    assert link_by_id([link], "my-link") is link
    with pytest.raises(InputError, match=r"unknown link 'nope' \(known: my-link\)"):
        link_by_id([link], "nope")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (GOOD_LINK.replace("bandwidth_gbps: 100", "bandwidth_gbps: -450"),
         "'bandwidth_gbps' must be a finite number > 0: -450"),
        (GOOD_LINK.replace("bandwidth_gbps: 100", "bandwidth_gbps: 0"),
         "'bandwidth_gbps' must be a finite number > 0: 0"),
        (GOOD_LINK.replace("latency_us: 2", "latency_us: .nan"), "'latency_us' must be a finite number"),
        (GOOD_LINK.replace("latency_us: 2", "latency_us: .inf"), "'latency_us' must be a finite number"),
        (GOOD_LINK.replace("latency_us: 2", "latency_us: fast"), "'latency_us' must be a number, not a string"),
        (GOOD_LINK.replace("latency_us: 2", "latency_us: true"), "'latency_us' must be a number, not a boolean"),
        (GOOD_LINK.replace("latency_us: 2\n", ""), "missing required key 'latency_us'"),
        (GOOD_LINK + "colour: red\n", "unknown key 'colour'"),
        (GOOD_LINK.replace("https://example.com/spec", "ftp://example.com"), "must be an http or https URL"),
        (GOOD_LINK.replace("sources:\n  - title: Vendor table\n    url: https://example.com/spec\n", "sources: []\n"),
         "'sources' must name at least one source"),
        ("", "the file is empty"),
        ("bandwidth_gbps: [1\n", "YAML does not parse"),
    ],
)
def test_a_bad_link_file_fails_with_one_line_naming_file_and_key(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad-link.yaml"
    path.write_text(text)
    with pytest.raises(InputError) as info:
        load_link(path)
    line = str(info.value)
    assert "\n" not in line
    assert names_the_file(line, path)
    assert message in line


def test_link_value_objects_refuse_bad_figures() -> None:
    with pytest.raises(InputError, match="'latency_us' must be a finite number > 0"):
        Link(id="x", name="x", bandwidth_gbps=1, latency_us=-1, sources=(), path="")


def test_links_folder_errors(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="links folder does not exist"):
        load_links(tmp_path / "missing")
    with pytest.raises(InputError, match="holds no link files"):
        load_links(tmp_path)


# --- the α–β model ------------------------------------------------------------------


def facts_time(op: str, algorithm: str, p: int, s: float, alpha: float, b: float) -> float:
    """The FACTS table, typed out, at a power of two p (so that log₂p is whole)."""
    lg = math.log2(p)
    share = (p - 1) / p
    if (op, algorithm) in (("broadcast", "ring"), ("reduce", "ring")):
        # Pipelined chain, with the best whole chunk count by brute force over a range around √((p−2)S/(αB)).
        guess = math.sqrt((p - 2) * s / (alpha * b))
        ks = range(max(1, int(guess) - 3), int(guess) + 4)
        return min((p - 1 + k - 1) * (alpha + s / (k * b)) for k in ks if k <= s)
    table = {
        ("all-gather", "ring"): (p - 1) * alpha + share * s / b,
        ("all-gather", "recursive-doubling"): lg * alpha + share * s / b,
        ("reduce-scatter", "ring"): (p - 1) * alpha + share * s / b,
        ("reduce-scatter", "recursive-halving"): lg * alpha + share * s / b,
        ("all-reduce", "ring"): 2 * (p - 1) * alpha + 2 * share * s / b,
        ("all-reduce", "rabenseifner"): 2 * lg * alpha + 2 * share * s / b,
        ("all-reduce", "binomial-tree"): 2 * lg * (alpha + s / b),
        # NCCL's tuning model for its tree: two passes of the tree's depth, algbw = busbw ÷ 2.
        ("all-reduce", "double-binary-tree"): 2 * lg * alpha + 2 * s / b,
        ("broadcast", "binomial-tree"): lg * (alpha + s / b),
        ("broadcast", "scatter-allgather"): (lg + p - 1) * alpha + 2 * share * s / b,
        ("reduce", "binomial-tree"): lg * (alpha + s / b),
        ("scatter", "direct"): (p - 1) * alpha + share * s / b,
        ("scatter", "binomial-tree"): lg * alpha + share * s / b,
        ("all-to-all", "pairwise"): (p - 1) * alpha + share * s / b,
        ("all-to-all", "bruck"): lg * alpha + (s / 2) * lg / b,
    }
    return table[(op, algorithm)]


LINK_FIGURES = [(300e9, 1.9e-6), (25e9, 4e-6), (900e9, 0.5e-6)]


@given(op=st.sampled_from(list(cc.ALGORITHMS)), p=st.sampled_from([2**n for n in range(1, 11)]),
       s=st.floats(1e3, 1e10), link=st.sampled_from(LINK_FIGURES))
def test_every_algorithm_matches_the_facts_table(op: str, p: int, s: float, link: tuple[float, float]) -> None:
    b, alpha = link
    times = cc.collective_times(op, p, s, bandwidth_bytes_per_s=b, latency_s=alpha)
    assert [t.algorithm for t in times] == list(cc.ALGORITHMS[op])
    for t in times:
        assert t.time_s == pytest.approx(facts_time(op, t.algorithm, p, s, alpha, b), rel=1e-12)
        assert t.time_s == pytest.approx(t.latency_s + t.bandwidth_s, rel=1e-15)
        assert t.algbw_bytes_per_s == pytest.approx(s / t.time_s)


def ring_schedule_time(op: str, p: int, s: float, alpha: float, b: float) -> tuple[float, float]:
    """Walk a ring step by step: each step every rank sends one chunk of S/p to its neighbour.

    Returns (latency term, bandwidth term): α per step, chunk bytes ÷ B per step.
    """
    steps = {"all-gather": p - 1, "reduce-scatter": p - 1, "all-reduce": 2 * (p - 1)}[op]
    latency = bandwidth = 0.0
    for _ in range(steps):
        latency += alpha
        bandwidth += (s / p) / b
    return latency, bandwidth


@pytest.mark.parametrize("op", ["all-gather", "reduce-scatter", "all-reduce"])
@pytest.mark.parametrize("p", [2, 3, 5, 8, 100])
def test_ring_terms_match_a_step_by_step_schedule(op: str, p: int) -> None:
    s, b, alpha = 7.7e7, 450e9, 1.9e-6
    t = cc.algorithm_time(op, "ring", p, s, bandwidth_bytes_per_s=b, latency_s=alpha)
    latency, bandwidth = ring_schedule_time(op, p, s, alpha, b)
    assert t.latency_s == pytest.approx(latency, rel=1e-12)
    assert t.bandwidth_s == pytest.approx(bandwidth, rel=1e-12)


def test_log_rounds_are_the_ceiling_of_log2() -> None:
    assert [cc.rounds_log2(p) for p in (2, 3, 4, 5, 8, 9, 1000, 1024)] == [1, 2, 2, 3, 3, 4, 10, 10]


@pytest.mark.parametrize("op", list(cc.ALGORITHMS))
@pytest.mark.parametrize("p", [2, 8, 1024])
def test_bus_factors_are_nccl_tests(op: str, p: int) -> None:
    expected = {"all-reduce": 2 * (p - 1) / p, "broadcast": 1.0, "reduce": 1.0}.get(op, (p - 1) / p)
    assert cc.bus_factor(op, p) == pytest.approx(expected)


@pytest.mark.parametrize("op", ["all-reduce", "all-gather", "reduce-scatter", "all-to-all", "broadcast", "reduce"])
@pytest.mark.parametrize("p", [2, 8, 256])
def test_large_messages_are_bandwidth_bound_and_busbw_approaches_the_link(op: str, p: int) -> None:
    b, alpha = 450e9, 1.9e-6
    bandwidth_optimal = cc.ALGORITHMS[op][0]
    t = cc.algorithm_time(op, bandwidth_optimal, p, 1e14, bandwidth_bytes_per_s=b, latency_s=alpha)
    assert t.bandwidth_s > 100 * t.latency_s
    assert t.busbw_bytes_per_s == pytest.approx(b, rel=0.02)
    assert t.busbw_bytes_per_s < b


@pytest.mark.parametrize("op", list(cc.ALGORITHMS))
def test_tiny_messages_are_latency_bound_and_trees_win(op: str) -> None:
    b, alpha, p = 450e9, 1.9e-6, 64
    times = cc.collective_times(op, p, 1.0, bandwidth_bytes_per_s=b, latency_s=alpha)
    for t in times:
        assert t.latency_s > 100 * t.bandwidth_s
    best = cc.best_algorithm(op, p, 1.0, bandwidth_bytes_per_s=b, latency_s=alpha)
    assert best.algorithm != cc.ALGORITHMS[op][0], "log p rounds beat p − 1 rounds when only α counts"
    assert best.latency_s == pytest.approx(cc.rounds_log2(p) * alpha * (2 if op == "all-reduce" else 1))


def test_ring_all_reduce_latency_grows_with_ranks_while_bandwidth_barely_does() -> None:
    b, alpha, s = 450e9, 1.9e-6, 1e9
    small = cc.algorithm_time("all-reduce", "ring", 8, s, bandwidth_bytes_per_s=b, latency_s=alpha)
    large = cc.algorithm_time("all-reduce", "ring", 1024, s, bandwidth_bytes_per_s=b, latency_s=alpha)
    assert large.latency_s / small.latency_s == pytest.approx(2046 / 14)
    assert large.bandwidth_s / small.bandwidth_s == pytest.approx((2046 / 1024) / (14 / 8))


def test_ring_meets_the_binomial_tree_where_the_closed_form_says() -> None:
    # 2(p−1)α + 2(p−1)/p·S/B = 2·lg·(α + S/B)  ⇒  S = (2(p−1) − 2·lg)·α·B ÷ (2·lg − 2(p−1)/p)
    b, alpha, p = 450e9, 1.9e-6, 8
    expected = (2 * 7 - 2 * 3) * alpha * b / (2 * 3 - 2 * 7 / 8)
    (crossing,) = cc.crossovers("all-reduce", p, "ring", "binomial-tree", bandwidth_bytes_per_s=b, latency_s=alpha)
    assert crossing.message_bytes == pytest.approx(expected, rel=1e-12)
    assert (crossing.faster_below, crossing.faster_above) == ("binomial-tree", "ring")
    just_below, just_above = crossing.message_bytes * 0.99, crossing.message_bytes * 1.01
    for size, winner in ((just_below, "binomial-tree"), (just_above, "ring")):
        pair = [cc.algorithm_time("all-reduce", a, p, size, bandwidth_bytes_per_s=b, latency_s=alpha)
                for a in ("ring", "binomial-tree")]
        assert min(pair, key=lambda t: t.time_s).algorithm == winner


def test_best_algorithm_changes_are_where_the_winner_changes() -> None:
    b, alpha = 450e9, 1.9e-6
    changes = cc.best_algorithm_changes("broadcast", 8, bandwidth_bytes_per_s=b, latency_s=alpha)
    assert [(c.faster_below, c.faster_above) for c in changes] == [
        ("binomial-tree", "scatter-allgather"), ("scatter-allgather", "ring")]
    for change in changes:
        below = cc.best_algorithm("broadcast", 8, change.message_bytes * 0.999, bandwidth_bytes_per_s=b,
                                  latency_s=alpha)
        above = cc.best_algorithm("broadcast", 8, change.message_bytes * 1.001, bandwidth_bytes_per_s=b,
                                  latency_s=alpha)
        assert (below.algorithm, above.algorithm) == (change.faster_below, change.faster_above)
    # Same bytes, fewer rounds: recursive doubling is never slower than the ring in this model.
    assert cc.best_algorithm_changes("all-gather", 64, bandwidth_bytes_per_s=b, latency_s=alpha) == ()
    # A chain crosses scatter + all-gather twice.
    assert len(cc.crossovers("broadcast", 8, "ring", "scatter-allgather", bandwidth_bytes_per_s=b,
                             latency_s=alpha)) == 2


# MPICH's cost comments for p not a power of two (fl = ⌊log₂ p⌋, p' = 2^fl): the extra ranks fold their
# whole vector into a neighbour first and get their result back last.
# allreduce_intra_reduce_scatter_allgather.c: (2·fl + 2)·α; reduce_scatter_intra_recursive_halving.c: (fl + 2)·α.
@pytest.mark.parametrize(("p", "fl"), [(3, 1), (5, 2), (6, 2), (7, 2), (12, 3), (1000, 9)])
def test_rank_counts_that_are_not_powers_of_two_pay_the_folding_steps(p: int, fl: int) -> None:
    b, alpha, s = 450e9, 1.9e-6, 1e9
    kept = 2**fl
    rab = cc.algorithm_time("all-reduce", "rabenseifner", p, s, bandwidth_bytes_per_s=b, latency_s=alpha)
    assert rab.latency_s == pytest.approx((2 * fl + 2) * alpha)
    assert rab.bandwidth_s == pytest.approx((2 + 2 * (kept - 1) / kept) * s / b)
    halving = cc.algorithm_time("reduce-scatter", "recursive-halving", p, s, bandwidth_bytes_per_s=b,
                                latency_s=alpha)
    assert halving.latency_s == pytest.approx((fl + 2) * alpha)
    assert halving.bandwidth_s == pytest.approx((1 + (kept - 1) / kept + 1 / p) * s / b)
    # The folding costs a whole tensor: at a large message the ring is faster again.
    for op, algorithm in (("all-reduce", "rabenseifner"), ("reduce-scatter", "recursive-halving")):
        ring = cc.algorithm_time(op, "ring", p, s, bandwidth_bytes_per_s=b, latency_s=alpha)
        assert ring.time_s < cc.algorithm_time(op, algorithm, p, s, bandwidth_bytes_per_s=b, latency_s=alpha).time_s


def test_five_ranks_no_longer_rank_rabenseifner_fastest(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "collective-cost", "all-reduce", "--ranks", "5", "--bytes", "1e9", "--link",
                         "nvlink-4", "--json")
    assert status == 0
    times = {a["name"]: a["time_s"] for a in json.loads(out)["algorithms"]}
    assert min(times, key=times.__getitem__) == "ring"
    assert times["rabenseifner"] > times["ring"]


@pytest.mark.parametrize("p", [2, 4, 8, 64, 1024])
def test_the_double_binary_tree_is_priced_as_nccl_prices_its_tree(p: int) -> None:
    b, alpha, s = 50e9, 4e-6, 1e8
    tree = cc.algorithm_time("all-reduce", "double-binary-tree", p, s, bandwidth_bytes_per_s=b, latency_s=alpha)
    assert tree.latency_s == pytest.approx(2 * math.log2(p) * alpha)  # two passes of the tree's depth
    assert s / tree.bandwidth_s == pytest.approx(b / 2)  # NCCL: the tree's algbw is half its bus bandwidth
    ring = cc.algorithm_time("all-reduce", "ring", p, s, bandwidth_bytes_per_s=b, latency_s=alpha)
    # Its bandwidth term is close to the ring's (2 against 2(p−1)/p), unlike the binomial tree's 2·log₂p.
    assert ring.bandwidth_s <= tree.bandwidth_s <= 2 * ring.bandwidth_s
    assert cc.coefficients("all-reduce", "double-binary-tree", 6) == (4, 2)  # ⌊log₂ 6⌋ = 2 hops deep


def test_ring_and_double_binary_tree_trade_places_with_the_message_size() -> None:
    b, alpha, p = 50e9, 4e-6, 64
    (crossing,) = cc.crossovers("all-reduce", p, "ring", "double-binary-tree", bandwidth_bytes_per_s=b,
                                latency_s=alpha)
    # 2(p−1)α + 2(p−1)/p·S/B = 2·log₂p·α + 2·S/B  ⇒  S = (p − 1 − log₂p)·p·α·B
    assert crossing.message_bytes == pytest.approx((p - 1 - 6) * p * alpha * b, rel=1e-12)
    assert (crossing.faster_below, crossing.faster_above) == ("double-binary-tree", "ring")


@given(p=st.integers(2, 1024))
def test_the_binomial_trees_bandwidth_term_is_worse_than_the_rings_from_two_ranks(p: int) -> None:
    # The collective-cost page: worse "for every p", twice the ring's already at p = 2.
    ring = cc.coefficients("all-reduce", "ring", p)[1]
    binomial = cc.coefficients("all-reduce", "binomial-tree", p)[1]
    assert binomial > ring
    assert cc.coefficients("all-reduce", "binomial-tree", 2)[1] == 2 * cc.coefficients("all-reduce", "ring", 2)[1]


def test_a_three_rank_broadcast_has_ties_not_changes(capsys: pytest.CaptureFixture[str]) -> None:
    # At p = 3 the chain with one chunk is the binomial tree (2α + 2S/B), and with three chunks it is
    # scatter + all-gather (4α + 4/3·S/B): ties that rounding must not turn into a dozen changes.
    for b, alpha in LINK_FIGURES:
        assert cc.best_algorithm_changes("broadcast", 3, bandwidth_bytes_per_s=b, latency_s=alpha) == ()
        assert cc.crossovers("broadcast", 3, "ring", "binomial-tree", bandwidth_bytes_per_s=b,
                             latency_s=alpha) == ()
    for link in ("nvlink-4", "ib-ndr", "pcie-4-x16"):
        status, out, _ = run(capsys, "collective-cost", "broadcast", "--ranks", "3", "--bytes", "1e6", "--link", link)
        assert status == 0 and "fastest changes" not in out
        assert "the fastest algorithm is the same from 1 kB to 10 GB" in out


@given(op=st.sampled_from(list(cc.ALGORITHMS)), p=st.integers(2, 256),
       b=st.sampled_from([25e9, 450e9, 900e9]), alpha=st.sampled_from([0.5e-6, 1.9e-6, 4e-6]))
def test_the_fastest_algorithm_never_flips_back_and_forth(op: str, p: int, b: float, alpha: float) -> None:
    changes = cc.best_algorithm_changes(op, p, bandwidth_bytes_per_s=b, latency_s=alpha)
    assert len(changes) <= len(cc.ALGORITHMS[op])
    for before, after in itertools.pairwise(changes):
        assert before.faster_above == after.faster_below
        assert after.message_bytes > before.message_bytes * 1.01
        assert {before.faster_below, before.faster_above} != {after.faster_below, after.faster_above}


def test_the_model_docstring_cites_nccl_tests_scatter() -> None:
    assert "src/scatter.cu" in (cc.__doc__ or "")
    assert "does not measure" not in (cc.__doc__ or "")


@given(p=st.integers(3, 1024), s=st.floats(1e3, 1e12))
def test_the_chain_picks_the_best_whole_chunk_count(p: int, s: float) -> None:
    b, alpha = 300e9, 2e-6
    k = cc.best_chunks(p, s, bandwidth_bytes_per_s=b, latency_s=alpha)

    def total(chunks: int) -> float:
        return sum(cc.chain_time(p, s, chunks, bandwidth_bytes_per_s=b, latency_s=alpha))

    assert total(k) <= total(k + 1) * (1 + 1e-12)
    if k > 1:
        assert total(k) <= total(k - 1) * (1 + 1e-12)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: cc.collective_times("all-reduce", 1, 1e6, bandwidth_bytes_per_s=1e9, latency_s=1e-6),
         "'ranks' must be a whole number from 2 to 1024: 1"),
        (lambda: cc.collective_times("all-reduce", 1025, 1e6, bandwidth_bytes_per_s=1e9, latency_s=1e-6),
         "'ranks' must be a whole number from 2 to 1024: 1025"),
        (lambda: cc.collective_times("all-reduce", 8, 0, bandwidth_bytes_per_s=1e9, latency_s=1e-6),
         "'bytes' must be a finite number > 0: 0"),
        (lambda: cc.collective_times("all-reduce", 8, -1.0, bandwidth_bytes_per_s=1e9, latency_s=1e-6),
         "'bytes' must be a finite number > 0"),
        (lambda: cc.collective_times("all-reduce", 8, math.nan, bandwidth_bytes_per_s=1e9, latency_s=1e-6),
         "'bytes' must be a finite number > 0"),
        (lambda: cc.collective_times("gather", 8, 1e6, bandwidth_bytes_per_s=1e9, latency_s=1e-6), "'op' must be"),
        (lambda: cc.algorithm_time("scatter", "ring", 8, 1e6, bandwidth_bytes_per_s=1e9, latency_s=1e-6),
         "'algorithm' for scatter must be one of direct, binomial-tree"),
        (lambda: cc.collective_times("all-reduce", 8, 1e6, bandwidth_bytes_per_s=0, latency_s=1e-6),
         "'bandwidth_bytes_per_s' must be a finite number > 0"),
    ],
)
def test_bad_model_input_is_one_clear_error(call: Callable[[], object], message: str) -> None:
    with pytest.raises(InputError, match=message.replace("(", r"\(").replace(")", r"\)")):
        call()


# --- time to train -------------------------------------------------------------------


def test_facts_training_example() -> None:
    run = time_to_train(70e9, tokens=1.4e12, gpus=2048, mfu=0.4, peak_flops_per_s_per_gpu=312e12)
    assert run.flops == pytest.approx(5.88e23)
    assert run.flops / run.seconds == pytest.approx(2.556e17, rel=1e-3)
    assert run.seconds == pytest.approx(2.30e6, rel=1e-3)
    assert round(run.days, 1) == 26.6
    assert run.gpu_hours == pytest.approx(1.31e6, rel=1e-3)


def test_time_to_train_counts_the_attention_term_and_refuses_bad_input() -> None:
    plain = time_to_train(1e9, tokens=1e9, gpus=1, mfu=0.5, peak_flops_per_s_per_gpu=1e12)
    assert plain.seconds == pytest.approx(6e9 * 1e9 / 0.5e12)
    with_attention = time_to_train(1e9, tokens=1e9, gpus=1, mfu=0.5, peak_flops_per_s_per_gpu=1e12,
                                   layers=2, heads=4, head_dim=8, seq_len=16)
    assert with_attention.flops_per_token == 6e9 + 12 * 2 * 4 * 8 * 16
    with pytest.raises(InputError, match="'mfu' must be a fraction from 0 to 1"):
        time_to_train(1e9, tokens=1e9, gpus=1, mfu=40, peak_flops_per_s_per_gpu=1e12)
    with pytest.raises(InputError, match="'tokens' must be a finite number > 0"):
        time_to_train(1e9, tokens=0, gpus=1, mfu=0.4, peak_flops_per_s_per_gpu=1e12)


# --- commands ------------------------------------------------------------------------


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(["--presets-dir", str(FIXTURE_PRESETS), *argv])  # the A100's published 312 TFLOP/s
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_links_command(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "links")
    assert status == 0
    assert "nvlink-4" in out and "450" in out
    status, out, _ = run(capsys, "links", "--json")
    records = json.loads(out)["links"]
    assert {r["id"]: r["bandwidth_gbps"] for r in records} == PUBLISHED_LINKS
    assert set(records[0]) >= {"id", "name", "bandwidth_gbps", "latency_us", "sources"}


def test_collective_cost_json_shape(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(capsys, "collective-cost", "all-reduce", "--ranks", "8", "--bytes", "1e9",
                           "--link", "nvlink-4", "--json")
    assert status == 0, err
    record = json.loads(out)
    assert list(record)[:5] == ["op", "ranks", "bytes", "link", "algorithms"]
    assert record["link"] == {"id": "nvlink-4", "bandwidth_gbps": 450.0, "latency_us": 1.9}
    assert [a["name"] for a in record["algorithms"]] == ["ring", "rabenseifner", "binomial-tree", "double-binary-tree"]
    ring = record["algorithms"][0]
    assert set(ring) == {"name", "time_s", "latency_s", "bandwidth_s", "algbw_gbps", "busbw_gbps"}
    assert ring["time_s"] == pytest.approx(14 * 1.9e-6 + 1.75 * 1e9 / 450e9)
    assert ring["busbw_gbps"] == pytest.approx(ring["algbw_gbps"] * 1.75)


@pytest.mark.parametrize(("op", "first"), [("all-to-all", "pairwise"), ("scatter", "direct"), ("broadcast", "ring")])
def test_collective_cost_names_the_bandwidth_optimal_algorithm_first(
    capsys: pytest.CaptureFixture[str], op: str, first: str
) -> None:
    status, out, _ = run(capsys, "collective-cost", op, "--ranks", "16", "--bytes", "4096", "--link", "ib-ndr",
                         "--json")
    assert status == 0
    assert json.loads(out)["algorithms"][0]["name"] == first
    status, out, _ = run(capsys, "collective-cost", op, "--ranks", "16", "--bytes", "4096", "--link", "ib-ndr")
    assert status == 0 and first in out


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["--ranks", "1", "--bytes", "1e6", "--link", "nvlink-4"], "--ranks: must be a whole number from 2 to 1024"),
        (["--ranks", "1025", "--bytes", "1e6", "--link", "nvlink-4"], "--ranks: must be a whole number from 2 to 10"),
        (["--ranks", "8", "--bytes", "0", "--link", "nvlink-4"], "--bytes must be a finite number > 0: 0.0"),
        (["--ranks", "8", "--bytes", "-5e9", "--link", "nvlink-4"],
         "--bytes must be a finite number > 0: -5000000000.0"),
        (["--ranks", "8", "--bytes", "nan", "--link", "nvlink-4"], "--bytes must be a finite number > 0: nan"),
        (["--ranks", "8", "--bytes", "1e6", "--link", "nvlink-9"], "--link: unknown link 'nvlink-9'"),
    ],
)
def test_collective_cost_errors_are_one_line(
    capsys: pytest.CaptureFixture[str], argv: list[str], fragment: str
) -> None:
    status, out, err = run(capsys, "collective-cost", "all-reduce", *argv)
    assert status == 2
    assert out == ""
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert err.startswith("ainotes collective-cost: ")
    assert fragment in err


def test_collective_cost_unknown_op(capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = run(capsys, "collective-cost", "gather", "--ranks", "8", "--bytes", "1", "--link", "nvlink-4")
    assert status == 2 and "OP must be one of all-reduce" in err and "'gather'" in err and len(err.splitlines()) == 1


def test_train_time_json_reproduces_the_facts_example(capsys: pytest.CaptureFixture[str]) -> None:
    base = ["train-time", "--params", "70e9", "--tokens", "1.4e12", "--gpus", "2048", "--mfu", "0.4"]
    status, out, err = run(capsys, *base, "--preset", "a100", "--json")
    assert status == 0, err
    record = json.loads(out)
    assert list(record) == ["flops", "seconds", "days", "gpu_hours", "peak_tflops", "precision"]
    assert round(record["days"], 1) == 26.6
    assert record["gpu_hours"] == pytest.approx(1.31e6, rel=1e-3)
    assert (record["peak_tflops"], record["precision"]) == (312.0, "bf16")
    status, out, _ = run(capsys, *base, "--peak-tflops", "312", "--json")
    assert json.loads(out)["precision"] is None and round(json.loads(out)["days"], 1) == 26.6
    status, out, _ = run(capsys, *base, "--preset", "a100")
    assert "26.6 days" in out


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["--mfu", "40", "--preset", "a100"], "--mfu must be a fraction from 0 to 1"),
        (["--mfu", "0", "--preset", "a100"], "--mfu must be a finite number > 0: '0'"),
        (["--mfu", "0.4", "--preset", UNKNOWN_ID], f"--preset: unknown preset '{UNKNOWN_ID}'"),
        (["--mfu", "0.4", "--peak-tflops", "312", "--precision", "bf16"], "--precision goes with --preset"),
        (["--mfu", "0.4", "--preset", "a100", "--layers", "2"], "go together"),
    ],
)
def test_train_time_errors_are_one_line(capsys: pytest.CaptureFixture[str], argv: list[str], fragment: str) -> None:
    status, out, err = run(capsys, "train-time", "--params", "70e9", "--tokens", "1.4e12", "--gpus", "2048", *argv)
    assert status == 2 and out == ""
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert fragment in err


def test_train_time_offers_only_the_precisions_it_accepts(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "train-time", "--help")
    assert status == 0
    help_text = " ".join(out.split())
    offered = help_text.split("for --preset (", 1)[1].split(";", 1)[0].split(", ")
    assert "fp32" not in offered and "bf16" in offered  # fp32 is the vector units' rate, never a job's peak
    base = ["train-time", "--params", "70e9", "--tokens", "1.4e12", "--gpus", "2048", "--mfu", "0.4",
            "--preset", "a100"]
    status, _, err = run(capsys, *base, "--precision", "fp32")
    assert status == 2 and len(err.splitlines()) == 1 and "invalid choice: 'fp32'" in err
    for precision in ("tf32", "fp16", "bf16", "int8"):  # what the A100's tensor cores run
        status, out, err = run(capsys, *base, "--precision", precision)
        assert status == 0 and "time to train" in out, err


def test_the_cost_core_imports_neither_mkdocs_nor_altair() -> None:
    import subprocess
    import sys

    code = ("import sys, ainotes.core.collective_cost, ainotes.core.links, ainotes.core.utilization, "
            "ainotes.core.collectives; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('altair', 'mkdocs', 'markdown')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
