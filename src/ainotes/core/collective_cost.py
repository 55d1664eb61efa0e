"""How long a collective takes: the α–β (latency–bandwidth) model.

A message of S bytes between two ranks takes α + S/B (Hockney, "The
communication challenge for MPP: Intel Paragon and Meiko CS-2", Parallel
Computing 20, 1994): α is the per-message latency, B the link bandwidth per
direction. Each algorithm for a collective over p ranks is a number of rounds,
each round a message, so its time is::

    t = a·α + b·S/B        (latency term a·α, bandwidth term b·S/B)

with a and b depending on the algorithm and p. The per-algorithm counts are
those of Thakur, Rabenseifner & Gropp, "Optimization of Collective
Communication Operations in MPICH", IJHPCA 19(1), 2005; γ, the time to add
the bytes of a reduction, is left out. ``lg`` below is ⌈log₂ p⌉, the number
of rounds of a binomial tree or of recursive doubling; ``fl`` is ⌊log₂ p⌋ and
p' = 2^fl the largest power of two not above p. S is the size of the whole
tensor: an all-gather's output, a reduce-scatter's input, one rank's buffer in
an all-to-all.

=============== ================== ================================ ===========================
primitive       algorithm          latency term                     bandwidth term
=============== ================== ================================ ===========================
all-gather      ring               (p−1)·α                          (p−1)/p · S/B
all-gather      recursive-doubling lg·α                             (p−1)/p · S/B
reduce-scatter  ring               (p−1)·α                          (p−1)/p · S/B
reduce-scatter  recursive-halving  lg·α                             (p−1)/p · S/B
                (p not 2^k)        (fl + 2)·α                       (1 + (p'−1)/p' + 1/p) · S/B
all-reduce      ring               2(p−1)·α                         2(p−1)/p · S/B
all-reduce      rabenseifner       2·lg·α                           2(p−1)/p · S/B
                (p not 2^k)        (2·fl + 2)·α                     (2 + 2(p'−1)/p') · S/B
all-reduce      binomial-tree      2·lg·α                           2·lg · S/B
all-reduce      double-binary-tree 2·fl·α                           2 · S/B
broadcast       ring (chain)       (p−2+k)·α                        (p−2+k) · S/(kB)
broadcast       binomial-tree      lg·α                             lg · S/B
broadcast       scatter-allgather  (lg + p−1)·α                     2(p−1)/p · S/B
reduce          ring (chain)       (p−2+k)·α                        (p−2+k) · S/(kB)
reduce          binomial-tree      lg·α                             lg · S/B
scatter         direct             (p−1)·α                          (p−1)/p · S/B
scatter         binomial-tree      lg·α                             (p−1)/p · S/B
all-to-all      pairwise           (p−1)·α                          (p−1)/p · S/B
all-to-all      bruck              lg·α                             lg/2 · S/B
=============== ================== ================================ ===========================

Rank counts that are not powers of two. MPICH's recursive halving and
Rabenseifner's algorithm first fold the p − p' extra ranks into neighbours
(each sends its whole vector, α + S/B), run among p' ranks, and send the
results back at the end (S/p for a reduce-scatter, the whole S for an
all-reduce): the rows marked "p not 2^k", after the algorithms and cost
comments in MPICH's ``reduce_scatter_intra_recursive_halving.c`` and
``allreduce_intra_reduce_scatter_allgather.c``. Their latency counts are
MPICH's; for the bandwidth, whose comments write (p−1)/p for the middle
exchange, this model counts it over the p' ranks that run it. MPICH's
recursive-doubling all-gather runs on powers of two only; at other p it uses
Bruck's all-gather, whose cost is the same lg·α + (p−1)/p·S/B.
Binomial trees, Bruck's all-to-all and a binomial scatter take ⌈log₂ p⌉ rounds
at any p.

The double binary tree is NCCL's tree all-reduce (Sanders, Speck & Träff,
"Two-tree algorithms for full bandwidth broadcast, reduction and scan",
Parallel Computing 35, 2009): two binary trees, each carrying half the
tensor, with every rank a leaf in one of them, so each link carries the tensor
once up (reduce) and once down (broadcast), pipelined in chunks. Its terms are
those of NCCL's own tuning model (``src/graph/tuning.cc``): algorithm bandwidth
half the bus bandwidth, so 2·S/B, and latency twice the tree's depth,
⌊log₂ p⌋ hops; the pipeline's fill is left out, as NCCL's model leaves it out.
The binomial tree, by contrast, sends the whole tensor in every round, unpipelined.

A ring broadcast or reduce is a pipelined chain: the tensor goes down the
chain of p ranks in k chunks, (p−1) + (k−1) steps of α + S/(kB). The model
picks the best whole k, near k* = √((p−2)·S/(α·B)), which is where the
derivative of the time in k vanishes. NCCL calls it a ring (the chain is the
ring without its last link); the pages call it a pipelined chain.

nccl-tests (doc/PERFORMANCE.md) reports, for a run of time t::

    algbw = S / t
    busbw = algbw × factor,  factor = 2(p−1)/p for all-reduce; (p−1)/p for all-gather,
                                      reduce-scatter, all-to-all and scatter; 1 for broadcast and reduce

(nccl-tests' scatter test, ``src/scatter.cu``, takes (p−1)/p: its root sends
that share of S). With the factor, busbw of a bandwidth-optimal algorithm
approaches B as S grows, whatever p: it is the figure to compare with the link.

Two algorithms whose times agree to a relative :data:`TIE_RELATIVE` count as
equally fast (floating-point rounding is no reason to change algorithm); the
one listed first in :data:`ALGORITHMS` is then the fastest.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from ainotes.base.errors import InputError
from ainotes.core import checks
from ainotes.core.collectives import bus_factor_exact, check_op

MIN_RANKS = 2
MAX_RANKS = 1024
# Message sizes the model accepts, in bytes: one byte to a petabyte.
MIN_MESSAGE_BYTES = 1.0
MAX_MESSAGE_BYTES = 1e15

#: Algorithms per primitive, the bandwidth-optimal, neighbour-only one first.
ALGORITHMS: dict[str, tuple[str, ...]] = {
    "all-reduce": ("ring", "rabenseifner", "binomial-tree", "double-binary-tree"),
    "reduce": ("ring", "binomial-tree"),
    "reduce-scatter": ("ring", "recursive-halving"),
    "all-gather": ("ring", "recursive-doubling"),
    "broadcast": ("ring", "binomial-tree", "scatter-allgather"),
    "scatter": ("direct", "binomial-tree"),
    "all-to-all": ("pairwise", "bruck"),
}

#: How each algorithm reads in a legend (:func:`algorithm_title` names the chains).
ALGORITHM_TITLES = {
    "ring": "ring",
    "rabenseifner": "Rabenseifner (halving + doubling)",
    "binomial-tree": "binomial tree",
    "double-binary-tree": "double binary tree (NCCL's tree)",
    "recursive-halving": "recursive halving",
    "recursive-doubling": "recursive doubling",
    "scatter-allgather": "scatter + all-gather",
    "direct": "direct (root sends each shard)",
    "pairwise": "pairwise exchange",
    "bruck": "Bruck",
}
CHAIN_TITLE = "pipelined chain (NCCL's ring)"

#: Relative difference below which two times count as equal (see the module docstring).
TIE_RELATIVE = 1e-9

# Pipelined chains (ring broadcast and reduce): their terms depend on the chunk count k.
_CHAINS = frozenset({("broadcast", "ring"), ("reduce", "ring")})


@dataclass(frozen=True)
class AlgorithmTime:
    """One algorithm's estimated time for one collective: t = latency term + bandwidth term.

    ``chunks`` is the pipeline's chunk count k for a chain (ring broadcast, ring
    reduce), else ``None``.
    """

    op: str
    algorithm: str
    ranks: int
    message_bytes: float
    latency_s: float
    bandwidth_s: float
    chunks: int | None = None

    @property
    def time_s(self) -> float:
        """t = latency term + bandwidth term, in seconds."""
        return self.latency_s + self.bandwidth_s

    @property
    def algbw_bytes_per_s(self) -> float:
        """nccl-tests' algorithm bandwidth: S / t."""
        return self.message_bytes / self.time_s

    @property
    def busbw_bytes_per_s(self) -> float:
        """nccl-tests' bus bandwidth: algbw × the primitive's factor (:func:`bus_factor`)."""
        return self.algbw_bytes_per_s * bus_factor(self.op, self.ranks)


@dataclass(frozen=True)
class Crossover:
    """Where two algorithms take the same time: below ``message_bytes`` ``faster_below`` wins."""

    message_bytes: float
    time_s: float
    faster_below: str
    faster_above: str


def algorithm_title(op: str, algorithm: str) -> str:
    """How an algorithm of ``op`` reads on a page: the ring broadcast and reduce are pipelined chains."""
    check_algorithm(op, algorithm)
    return CHAIN_TITLE if (op, algorithm) in _CHAINS else ALGORITHM_TITLES[algorithm]


def short_title(op: str, algorithm: str) -> str:
    """The title without its parenthesis: ``"Rabenseifner"``, ``"pipelined chain"``."""
    return algorithm_title(op, algorithm).split(" (")[0]


def rounds_log2(ranks: int) -> int:
    """lg = ⌈log₂ p⌉: rounds of a binomial tree or of recursive doubling over p ranks."""
    return (ranks - 1).bit_length()


def bus_factor(op: str, ranks: int) -> float:
    """nccl-tests' busbw ÷ algbw: 2(p−1)/p for all-reduce; (p−1)/p for all-gather,
    reduce-scatter, all-to-all and scatter; 1 for broadcast and reduce (doc/PERFORMANCE.md)."""
    check_op(op)
    ranks = check_ranks(ranks)
    return float(bus_factor_exact(op, ranks))


def floor_log2(ranks: int) -> int:
    """fl = ⌊log₂ p⌋: the depth of a binary tree over p ranks; p' = 2^fl is the largest power of two ≤ p."""
    return ranks.bit_length() - 1


def is_power_of_two(ranks: int) -> bool:
    return ranks & (ranks - 1) == 0


# Each affine algorithm's terms at a power of two p, as multiples of the quantities they are built from:
# a = a₁·(p−1) + a₂·lg rounds of α; b = b₀ + b₁·(p−1)/p + b₂·lg multiples of S/B (the module table).
_TERMS: dict[tuple[str, str], tuple[float, float, float, float, float]] = {
    ("all-gather", "ring"): (1, 0, 0, 1, 0),
    ("all-gather", "recursive-doubling"): (0, 1, 0, 1, 0),
    ("reduce-scatter", "ring"): (1, 0, 0, 1, 0),
    ("reduce-scatter", "recursive-halving"): (0, 1, 0, 1, 0),
    ("all-reduce", "ring"): (2, 0, 0, 2, 0),
    ("all-reduce", "rabenseifner"): (0, 2, 0, 2, 0),
    ("all-reduce", "binomial-tree"): (0, 2, 0, 0, 2),
    ("all-reduce", "double-binary-tree"): (0, 2, 2, 0, 0),
    ("broadcast", "binomial-tree"): (0, 1, 0, 0, 1),
    ("broadcast", "scatter-allgather"): (1, 1, 0, 2, 0),
    ("reduce", "binomial-tree"): (0, 1, 0, 0, 1),
    ("scatter", "direct"): (1, 0, 0, 1, 0),
    ("scatter", "binomial-tree"): (0, 1, 0, 1, 0),
    ("all-to-all", "pairwise"): (1, 0, 0, 1, 0),
    ("all-to-all", "bruck"): (0, 1, 0, 0, 0.5),
}


def terms(op: str, algorithm: str) -> tuple[float, float, float, float, float] | None:
    """(a₁, a₂, b₀, b₁, b₂) with a = a₁·(p−1) + a₂·lg and b = b₀ + b₁·(p−1)/p + b₂·lg, exact at powers
    of two (:func:`coefficients` adds what other rank counts cost); ``None`` for a chain."""
    check_algorithm(op, algorithm)
    return _TERMS.get((op, algorithm))


def coefficients(op: str, algorithm: str, ranks: int) -> tuple[float, float]:
    """(a, b) in t = a·α + b·S/B for every algorithm but the chains, at any p (the module table)."""
    ranks = check_ranks(ranks)
    found = terms(op, algorithm)
    if found is None:
        raise InputError(f"{op} {algorithm} is a pipelined chain: its terms depend on the chunk count")
    fl = floor_log2(ranks)
    if (op, algorithm) == ("all-reduce", "double-binary-tree"):
        return 2 * fl, 2.0  # two passes over a tree ⌊log₂ p⌋ hops deep, at any p
    if not is_power_of_two(ranks):
        kept = 2**fl  # p': the ranks left once the extra ones are folded into neighbours
        if (op, algorithm) == ("reduce-scatter", "recursive-halving"):
            return fl + 2, 1 + (kept - 1) / kept + 1 / ranks
        if (op, algorithm) == ("all-reduce", "rabenseifner"):
            return 2 * fl + 2, 2 + 2 * (kept - 1) / kept
    a_steps, a_rounds, b_whole, b_share, b_rounds = found
    lg = rounds_log2(ranks)
    return (a_steps * (ranks - 1) + a_rounds * lg,
            b_whole + b_share * (ranks - 1) / ranks + b_rounds * lg)


def chain_time(ranks: int, message_bytes: float, chunks: int, *, bandwidth_bytes_per_s: float,
               latency_s: float) -> tuple[float, float]:
    """A pipelined chain of k chunks: (p−2+k)·α and (p−2+k)·S/(kB), as (latency term, bandwidth term)."""
    steps = ranks - 2 + chunks
    return steps * latency_s, steps * message_bytes / (chunks * bandwidth_bytes_per_s)


def best_chunks(ranks: int, message_bytes: float, *, bandwidth_bytes_per_s: float, latency_s: float) -> int:
    """The whole k in 1..⌊S⌋ that minimises the chain's time; k* = √((p−2)·S/(α·B)) is the real optimum."""
    limit = max(1, math.floor(message_bytes))
    optimum = math.sqrt((ranks - 2) * message_bytes / (latency_s * bandwidth_bytes_per_s))
    candidates = {min(limit, max(1, math.floor(optimum))), min(limit, max(1, math.ceil(optimum)))}

    def total(k: int) -> float:
        return sum(chain_time(ranks, message_bytes, k, bandwidth_bytes_per_s=bandwidth_bytes_per_s,
                              latency_s=latency_s))

    return min(sorted(candidates), key=total)


def algorithm_time(op: str, algorithm: str, ranks: int, message_bytes: float, *,
                   bandwidth_bytes_per_s: float, latency_s: float) -> AlgorithmTime:
    """The α–β estimate for one algorithm: S = ``message_bytes``, B = ``bandwidth_bytes_per_s``, α = ``latency_s``."""
    check_algorithm(op, algorithm)
    ranks = check_ranks(ranks)
    size = check_message_bytes(message_bytes)
    bandwidth = _check_link_figure("bandwidth_bytes_per_s", bandwidth_bytes_per_s)
    alpha = _check_link_figure("latency_s", latency_s)
    if (op, algorithm) in _CHAINS:
        k = best_chunks(ranks, size, bandwidth_bytes_per_s=bandwidth, latency_s=alpha)
        latency_term, bandwidth_term = chain_time(ranks, size, k, bandwidth_bytes_per_s=bandwidth, latency_s=alpha)
        return AlgorithmTime(op, algorithm, ranks, size, latency_term, bandwidth_term, chunks=k)
    rounds, multiple = coefficients(op, algorithm, ranks)
    return AlgorithmTime(op, algorithm, ranks, size, rounds * alpha, multiple * size / bandwidth)


def collective_times(op: str, ranks: int, message_bytes: float, *, bandwidth_bytes_per_s: float,
                     latency_s: float) -> tuple[AlgorithmTime, ...]:
    """Every modelled algorithm for ``op``, in :data:`ALGORITHMS` order."""
    check_op(op)
    return tuple(
        algorithm_time(op, name, ranks, message_bytes, bandwidth_bytes_per_s=bandwidth_bytes_per_s,
                       latency_s=latency_s)
        for name in ALGORITHMS[op]
    )


def best_algorithm(op: str, ranks: int, message_bytes: float, *, bandwidth_bytes_per_s: float,
                   latency_s: float) -> AlgorithmTime:
    """The fastest algorithm at this size: the earliest in :data:`ALGORITHMS` within
    :data:`TIE_RELATIVE` of the least time (a three-rank broadcast's chain and binomial tree
    take the same 2α + 2S/B, and rounding must not pick one, then the other)."""
    times = collective_times(op, ranks, message_bytes, bandwidth_bytes_per_s=bandwidth_bytes_per_s,
                             latency_s=latency_s)
    least = min(t.time_s for t in times)
    return next(t for t in times if t.time_s <= least * (1 + TIE_RELATIVE))


def _gap_sign(first: float, second: float) -> int:
    """+1 where ``first`` is slower, −1 where faster, 0 within :data:`TIE_RELATIVE`."""
    if abs(first - second) <= TIE_RELATIVE * max(first, second):
        return 0
    return 1 if first > second else -1


def _bisect(low: float, high: float, sign_at: Callable[[float], bool]) -> float:
    """Geometric bisection of the size where ``sign_at`` flips, to a relative 1e-12."""
    below = sign_at(low)
    for _ in range(200):
        middle = math.sqrt(low * high)
        if sign_at(middle) == below:
            low = middle
        else:
            high = middle
        if high / low - 1 < 1e-12:
            break
    return math.sqrt(low * high)


def _grid(low_bytes: float, high_bytes: float, per_decade: int = 64) -> list[float]:
    """Sizes from ``low_bytes`` to ``high_bytes``, ``per_decade`` per decade, evenly spaced in log S."""
    low, high = check_message_bytes(low_bytes), check_message_bytes(high_bytes)
    if high <= low:
        raise InputError(f"the size range must grow: {low:g} to {high:g} bytes")
    points = max(2, math.ceil(per_decade * math.log10(high / low)) + 1)
    return [low * (high / low) ** (i / (points - 1)) for i in range(points)]


def _locate(op: str, ranks: int, first: str, second: str, low: float, high: float,
            link: dict[str, float]) -> Crossover:
    """The size between ``low`` and ``high`` where ``first`` and ``second`` take the same time.

    Between two affine algorithms it is exact: a₁α + b₁S/B = a₂α + b₂S/B gives
    S = (a₂ − a₁)·α·B ÷ (b₁ − b₂). With a chain (not affine in S) it is bisected.
    """

    def first_slower(size: float) -> bool:
        return _gap_sign(algorithm_time(op, first, ranks, size, **link).time_s,
                         algorithm_time(op, second, ranks, size, **link).time_s) > 0

    if (op, first) in _CHAINS or (op, second) in _CHAINS:
        size = _bisect(low, high, first_slower)
    else:
        a1, b1 = coefficients(op, first, ranks)
        a2, b2 = coefficients(op, second, ranks)
        size = (a2 - a1) * link["latency_s"] * link["bandwidth_bytes_per_s"] / (b1 - b2)
    time = algorithm_time(op, first, ranks, size, **link).time_s
    below, above = (second, first) if first_slower(low) else (first, second)
    return Crossover(size, time, below, above)


def crossovers(op: str, ranks: int, first: str, second: str, *, bandwidth_bytes_per_s: float,
               latency_s: float, low_bytes: float = 1e3, high_bytes: float = 1e10) -> tuple[Crossover, ...]:
    """Every size between ``low_bytes`` and ``high_bytes`` where ``first`` and ``second`` take the same time.

    Two affine algorithms cross at most once, where the closed form says. A chain against
    another algorithm can cross twice (a ring broadcast against scatter + all-gather): those
    crossings are found on a grid of 16 points per decade, then bisected.
    """
    check_algorithm(op, first)
    check_algorithm(op, second)
    link = {"bandwidth_bytes_per_s": bandwidth_bytes_per_s, "latency_s": latency_s}
    if (op, first) not in _CHAINS and (op, second) not in _CHAINS:
        low, high = check_message_bytes(low_bytes), check_message_bytes(high_bytes)
        (a1, b1), (a2, b2) = coefficients(op, first, ranks), coefficients(op, second, ranks)
        if math.isclose(b1, b2, rel_tol=TIE_RELATIVE):
            return ()
        size = (a2 - a1) * latency_s * bandwidth_bytes_per_s / (b1 - b2)
        return (_locate(op, ranks, first, second, low, high, link),) if low < size < high else ()

    def sign(size: float) -> int:
        return _gap_sign(algorithm_time(op, first, ranks, size, **link).time_s,
                         algorithm_time(op, second, ranks, size, **link).time_s)

    sizes = _grid(low_bytes, high_bytes, per_decade=16)
    signs = [sign(s) for s in sizes]
    found = []
    for i in range(len(sizes) - 1):
        if signs[i] != 0 and signs[i + 1] != 0 and signs[i] != signs[i + 1]:
            found.append(_locate(op, ranks, first, second, sizes[i], sizes[i + 1], link))
    return tuple(found)


def best_algorithm_changes(op: str, ranks: int, *, bandwidth_bytes_per_s: float, latency_s: float,
                           low_bytes: float = 1e3, high_bytes: float = 1e10) -> tuple[Crossover, ...]:
    """Every size in the range where the fastest algorithm changes, smallest first.

    The fastest algorithm is found on a grid of 64 points per decade, and each
    change is then located exactly between the two grid points around it.
    """
    link = {"bandwidth_bytes_per_s": bandwidth_bytes_per_s, "latency_s": latency_s}
    sizes = _grid(low_bytes, high_bytes)
    winners = _fastest_on_grid(op, ranks, sizes, link)
    return tuple(
        _locate(op, ranks, winners[i], winners[i + 1], sizes[i], sizes[i + 1], link)
        for i in range(len(sizes) - 1)
        if winners[i] != winners[i + 1]
    )


def _fastest_on_grid(op: str, ranks: int, sizes: list[float], link: dict[str, float]) -> list[str]:
    """:func:`best_algorithm`'s pick at each of ``sizes``, its inputs checked once rather than at every
    size and algorithm (the grid has hundreds of points): the same times, summed in the same order."""
    check_op(op)
    ranks = check_ranks(ranks)
    bandwidth = _check_link_figure("bandwidth_bytes_per_s", link["bandwidth_bytes_per_s"])
    alpha = _check_link_figure("latency_s", link["latency_s"])

    def time_at(algorithm: str) -> Callable[[float], float]:
        if (op, algorithm) in _CHAINS:
            def chain(size: float) -> float:
                k = best_chunks(ranks, size, bandwidth_bytes_per_s=bandwidth, latency_s=alpha)
                latency_term, bandwidth_term = chain_time(ranks, size, k, bandwidth_bytes_per_s=bandwidth,
                                                          latency_s=alpha)
                return latency_term + bandwidth_term
            return chain
        rounds, multiple = coefficients(op, algorithm, ranks)
        return lambda size: rounds * alpha + multiple * size / bandwidth

    timers = [(name, time_at(name)) for name in ALGORITHMS[op]]
    winners = []
    for size in sizes:
        times = [(name, timer(size)) for name, timer in timers]
        least = min(t for _, t in times)
        winners.append(next(name for name, t in times if t <= least * (1 + TIE_RELATIVE)))
    return winners


def latency_bandwidth_balance_bytes(op: str, algorithm: str, ranks: int, *, bandwidth_bytes_per_s: float,
                                    latency_s: float) -> float:
    """The size where the latency and bandwidth terms are equal: a·α = b·S/B, so S = a·α·B ÷ b.

    Below it the algorithm is latency-bound, above it bandwidth-bound. A chain with its
    best k ≈ √((p−2)·S/(α·B)) has bandwidth term ÷ latency term = S/(k·α·B) = √(S/((p−2)·α·B)),
    so the two are equal at S = (p−2)·α·B (α·B for p = 2, where k = 1).
    """
    if (op, algorithm) in _CHAINS:
        ranks = check_ranks(ranks)
        product = _check_link_figure("latency_s", latency_s) * _check_link_figure(
            "bandwidth_bytes_per_s", bandwidth_bytes_per_s)
        return max(1, ranks - 2) * product
    rounds, multiple = coefficients(op, algorithm, ranks)
    return rounds * latency_s * bandwidth_bytes_per_s / multiple


# --- validation -------------------------------------------------------------------


def check_algorithm(op: object, algorithm: object) -> None:
    check_op(op)
    checks.one_of(algorithm, f"'algorithm' for {op}", "algorithm", choices=ALGORITHMS[str(op)])


def check_ranks(ranks: object, name: str = "'ranks'", field: str = "ranks") -> int:
    """The one rank-count rule of the model, and so of the chart fence, the inline forms and the command
    line: a whole number from :data:`MIN_RANKS` to :data:`MAX_RANKS`, a power of two or not. Every
    algorithm here has a cost at any p (the module docstring): rings, chains, pairwise exchanges and
    trees run on any count; recursive halving and Rabenseifner's algorithm fold the ranks past the
    largest power of two into neighbours first, as MPICH does; at other p the recursive-doubling
    all-gather is Bruck's, at the same cost. ``name`` is the key as the author wrote it
    (``'ranks'``, ``ranks=``, ``--ranks``); a text of digits passes (a flag, an inline option)."""
    return checks.whole_number(ranks, name, field, low=MIN_RANKS, high=MAX_RANKS)


def non_power_of_two_note(op: str, ranks: int) -> str:
    """What the model does differently at a rank count that is not a power of two, for ``op``; ``""`` at a
    power of two or for an op whose algorithms all run unchanged at any p."""
    if is_power_of_two(check_ranks(ranks)):
        return ""
    kept = 2 ** floor_log2(ranks)
    folded = {"reduce-scatter": "recursive halving", "all-reduce": "Rabenseifner's algorithm"}
    if op in folded:
        return (f"{ranks} is not a power of two: {folded[op]} first folds the {ranks - kept} ranks past {kept} "
                "into neighbours and sends them the result at the end, as MPICH does")
    if op == "all-gather":
        return (f"{ranks} is not a power of two: MPICH runs Bruck's all-gather there instead of recursive "
                "doubling, at the same cost (⌈log₂ p⌉ rounds, (p−1)/p·S/B)")
    return ""


def check_message_bytes(value: object, name: str = "'bytes'") -> float:
    """A message size in bytes, from :data:`MIN_MESSAGE_BYTES` to :data:`MAX_MESSAGE_BYTES`."""
    return checks.positive_number(value, name, "bytes", text=False, low=MIN_MESSAGE_BYTES, high=MAX_MESSAGE_BYTES)


def _check_link_figure(name: str, value: object) -> float:
    return checks.positive_number(value, repr(name), name, text=False)
