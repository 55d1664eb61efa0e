"""One training step on a parallel layout (ainotes.core.parallelism, parallel_step) and the published
thresholds (ainotes.core.thresholds), against each source's own inputs.

Fixed figures come from tests/fixtures/parallel: Llama 3.1's architectures, an H100 node of whitepaper
figures (lab-h100), and presets holding exactly the Scaling Book's C and W (book-v5p, book-h100,
book-h800), so adding or changing a shipped preset changes no verdict here.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ainotes.base.errors import InputError
from ainotes.core.checks import FieldError
from ainotes.core.parallel_step import search, step
from ainotes.core.parallelism import ParallelRun, bubble_fraction, bubble_ratio
from ainotes.core.thresholds import (
    dp_batch_threshold,
    fsdp_tp_batch_floor,
    moe_factor,
    preset_thresholds,
    tp_degree_limit,
    training_at_threshold,
)
from ainotes.presets.gpus import load_presets
from ainotes.presets.links import load_links
from ainotes.presets.models import load_models

FIXTURES = Path(__file__).parent / "fixtures" / "parallel"
PRESETS = {p.id: p for p in load_presets(FIXTURES)}
LINKS = {link.id: link for link in load_links(FIXTURES / "links")}
MODELS = {m.id: m for m in load_models(FIXTURES / "models")}
# The issue's layout: Llama 3.1 70B on 1,024 H100s, tp 8 in a node, pp 8 across nodes, dp 16, b = 1, s = 4,096.
ISSUE = {"model": "lab-70b", "preset": "lab-h100", "gpus": 1024, "tp": 8, "pp": 8, "micro_batches": 32}


def run(**fields: Any) -> ParallelRun:
    return ParallelRun.from_fields(fields, models=MODELS, presets=PRESETS, links=LINKS)


# --- what each kind sends per step --------------------------------------------------------------


def test_megatron_sends_four_tp_all_reduces_per_layer_of_b_s_h_bf16_bytes() -> None:
    """Shoeybi et al. 2019: 2 forward + 2 backward per layer, each b·s·h elements; 320 for 80 layers."""
    one_pass = step(run(model="lab-70b", preset="lab-h100", gpus=8, tp=8))
    (tp,) = one_pass.of("tp")
    assert tp.bytes == 1 * 4096 * 8192 * 2 == 67_108_864  # 67.1 MB
    assert f"{tp.bytes / 1e6:.1f}" == "67.1"
    assert tp.count_per_step == 320 == 4 * 80
    assert (tp.op, tp.ranks, tp.link) == ("all-reduce", 8, "lab-nvlink")
    # With a pipeline, each chip holds L/p layers and runs m micro-batches through them.
    assert step(run(**ISSUE)).of("tp")[0].count_per_step == 4 * 10 * 32


def test_sequence_parallelism_swaps_each_all_reduce_for_a_gather_and_a_scatter_of_the_same_volume() -> None:
    plain = step(run(model="lab-70b", preset="lab-h100", gpus=8, tp=8, seq_len=65536)).of("tp")
    split = step(run(model="lab-70b", preset="lab-h100", gpus=8, tp=8, seq_len=65536, sequence_parallel=True)).of("tp")
    assert [c.op for c in split] == ["all-gather", "reduce-scatter"]
    assert all(c.bytes == plain[0].bytes and c.count_per_step == plain[0].count_per_step for c in split)
    # Bandwidth-bound (a 1 GB message), a gather plus a scatter take what one all-reduce takes.
    assert sum(c.time_s for c in split) == pytest.approx(plain[0].time_s, rel=1e-3)


def test_zero_3_sends_three_psi_against_two() -> None:
    """Rajbhandari et al. 2020, section 7: 3Ψ elements of traffic against data parallelism's 2Ψ, 1.5×."""
    fields = {"model": "lab-70b", "preset": "lab-h100", "gpus": 64, "tp": 8}
    base, sharded = step(run(**fields)).of("dp"), step(run(**fields, zero=3)).of("dp")
    psi = MODELS["lab-70b"].params / 8
    assert [c.op for c in base] == ["all-reduce"] and base[0].bytes == pytest.approx(2 * psi)
    assert [c.op for c in sharded] == ["all-gather", "all-gather", "reduce-scatter"]
    assert all(c.bytes == pytest.approx(2 * psi) for c in sharded)
    assert sum(c.time_s for c in sharded) / base[0].time_s == pytest.approx(1.5, rel=0.01)


def test_zero_1_and_2_send_what_plain_data_parallelism_sends() -> None:
    fields = {"model": "lab-70b", "preset": "lab-h100", "gpus": 64, "tp": 8}
    base = step(run(**fields)).of("dp")[0]
    for stage in (1, 2):
        parts = step(run(**fields, zero=stage)).of("dp")
        assert [c.op for c in parts] == ["reduce-scatter", "all-gather"]
        assert sum(c.time_s for c in parts) == pytest.approx(base.time_s, rel=0.01)


def test_pipeline_sends_activations_forward_and_gradients_back_per_micro_batch() -> None:
    (pp,) = step(run(**ISSUE)).of("pp")
    assert pp.bytes == 67_108_864 and pp.count_per_step == 2 * 32 and pp.link == "lab-ib"
    (interleaved,) = step(run(**ISSUE, interleave=2)).of("pp")
    assert interleaved.count_per_step == 2 * 2 * 32  # v times the traffic


def test_expert_parallelism_moves_tokens_k_h_per_all_to_all() -> None:
    moe = step(run(model="lab-moe", preset="lab-h100", gpus=16, ep=8, micro_batch=2))
    (ep,) = moe.of("ep")
    assert ep.op == "all-to-all" and ep.bytes == 2 * 4096 * 2 * 4096 * 2  # b·s tokens × k × h × 2 bytes
    assert ep.count_per_step == 4 * 32 and ep.ranks == 8


# Mixtral 8x7B's experts, from its architecture: 32 layers × 8 experts × a SwiGLU MLP of 3·h·F.
ONE_EXPERT = 32 * 3 * 4096 * 14336
EXPERTS = 8 * ONE_EXPERT


def test_with_ep_equal_to_e_each_rank_holds_one_expert_and_the_whole_dense_part() -> None:
    """ep = E = 8: each rank keeps 1/8 of the experts' weights, gradients and Adam states (2, 2 and 12
    bytes a parameter) beside the whole attention, norms and embeddings."""
    model = MODELS["lab-moe"]
    dense = model.params - EXPERTS
    plain = step(run(model="lab-moe", preset="lab-h100", gpus=8)).memory
    split = step(run(model="lab-moe", preset="lab-h100", gpus=8, ep=8)).memory
    assert plain.weights_bytes == pytest.approx(2 * model.params)  # every expert on every rank
    assert split.weights_bytes == pytest.approx(2 * (dense + ONE_EXPERT))
    assert split.gradients_bytes == pytest.approx(2 * (dense + ONE_EXPERT))
    assert split.optimizer_bytes == pytest.approx(12 * (dense + ONE_EXPERT))
    assert split.activations_bytes == plain.activations_bytes
    # ZeRO-1 shards the dense optimizer states over all 16 dp ranks, and each expert's over the 2 ranks
    # that hold it: per rank, what sharding over 16 without expert parallelism leaves.
    zero = step(run(model="lab-moe", preset="lab-h100", gpus=16, ep=8, zero=1)).memory
    assert zero.optimizer_bytes == pytest.approx(12 * (dense / 16 + EXPERTS / 16))
    assert zero.weights_bytes == pytest.approx(2 * (dense + ONE_EXPERT))


def test_expert_gradients_are_reduced_only_among_the_ranks_that_hold_the_same_experts() -> None:
    model = MODELS["lab-moe"]
    one_copy = step(run(model="lab-moe", preset="lab-h100", gpus=8, ep=8)).of("dp")
    assert [(c.kind, c.ranks) for c in one_copy] == [("gradient all-reduce", 8)]
    assert one_copy[0].bytes == pytest.approx(2 * (model.params - EXPERTS))  # the dense part alone
    two_copies = step(run(model="lab-moe", preset="lab-h100", gpus=16, ep=8)).of("dp")
    assert [(c.kind, c.ranks) for c in two_copies] == [("gradient all-reduce", 16),
                                                       ("expert gradient all-reduce", 2)]
    assert two_copies[1].bytes == pytest.approx(2 * ONE_EXPERT)


def test_context_parallelism_passes_kv_blocks_round_the_group() -> None:
    long = step(run(model="lab-70b", preset="lab-h100", gpus=16, tp=8, cp=2, seq_len=131072))
    assert {c.op for c in long.of("cp")} == {"all-gather", "reduce-scatter"}
    assert all(c.ranks == 2 and c.link == "lab-ib" for c in long.of("cp"))  # stride 8: the next node


def test_groups_are_timed_on_the_link_they_cross() -> None:
    issue = step(run(**ISSUE))
    assert issue.of("tp")[0].link == "lab-nvlink"  # 8-way TP inside the HGX node
    assert issue.of("dp")[0].link == "lab-ib" and issue.of("pp")[0].link == "lab-ib"
    in_node = step(run(model="lab-70b", preset="lab-h100", gpus=8, tp=4, zero=3))
    assert in_node.of("dp")[0].link == "lab-nvlink"  # dp 2 over tp 4: span 8, still one node


# --- the bubble ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("p", "m", "v", "ratio", "share"), [
    (8, 32, 1, 7 / 32, 7 / 39),  # the issue's layout: 17.9 % of the pipeline's time
    (4, 8, 1, 3 / 8, 3 / 11),  # GPipe / 1F1B: (p−1)/m of the ideal
    (4, 8, 2, 3 / 16, 3 / 19),  # interleaved: (p−1)/(v·m)
    (1, 1, 1, 0.0, 0.0),
])
def test_the_bubble_is_the_playbooks(p: int, m: int, v: int, ratio: float, share: float) -> None:
    assert bubble_ratio(p, m, v) == pytest.approx(ratio) and bubble_fraction(p, m, v) == pytest.approx(share)


def test_the_issues_layout_idles_17_9_percent_of_its_pipeline() -> None:
    issue = step(run(**ISSUE))
    assert f"{issue.bubble_fraction:.1%}" == "17.9%"
    assert issue.layout.global_batch_tokens == 16 * 32 * 4096


# --- the step and the search --------------------------------------------------------------------


def test_the_step_adds_up_and_its_contract_keys_are_there() -> None:
    issue = step(run(**ISSUE))
    record = issue.record()
    assert set(record) == {"layout", "step_s", "compute_s", "bubble_s", "bubble_fraction", "exposed_comm_s",
                           "tokens_per_s", "mfu_ceiling", "memory_bytes_per_gpu", "capacity_bytes", "fits",
                           "collectives"}
    assert set(record["layout"]) == {"dp", "tp", "pp", "ep", "cp", "zero", "micro_batches", "interleave"}
    assert set(record["collectives"][0]) == {"kind", "parallelism", "op", "count_per_step", "bytes", "ranks",
                                             "link", "algorithm", "time_s", "hidden"}
    assert record["step_s"] == pytest.approx(record["compute_s"] + record["bubble_s"] + record["exposed_comm_s"])
    assert record["tokens_per_s"] * record["step_s"] == pytest.approx(16 * 32 * 4096)
    assert 0 < record["mfu_ceiling"] < 1 and record["fits"] is True
    assert record["capacity_bytes"] == 80e9


@settings(max_examples=25, deadline=None)
@given(st.sampled_from([(8, 1), (8, 2), (4, 4), (2, 8), (8, 4)]), st.sampled_from([0, 1, 3]),
       st.sampled_from(["none", "selective", "full"]))
def test_a_slower_link_never_makes_a_step_faster(degrees: tuple[int, int], zero: int, recompute: str) -> None:
    tp, pp = degrees
    fields = {"model": "lab-70b", "preset": "lab-h100", "gpus": 256, "tp": tp, "pp": pp, "zero": zero,
              "recompute": recompute}
    fast = step(run(**fields))
    slow = step(run(**fields, link_inter="lab-ib", link_intra="lab-ib"))
    assert slow.step_s >= fast.step_s >= fast.compute_s
    assert slow.compute_s == fast.compute_s


def test_full_recomputation_costs_compute_and_repeats_the_forward_all_reduces() -> None:
    plain = step(run(model="lab-70b", preset="lab-h100", gpus=8, tp=8))
    full = step(run(model="lab-70b", preset="lab-h100", gpus=8, tp=8, recompute="full"))
    assert full.compute_s > plain.compute_s and full.of("tp")[0].count_per_step == 6 * 80
    assert full.memory.total_bytes < plain.memory.total_bytes


def test_the_search_ranks_layouts_that_fit_fastest_first() -> None:
    found = search(run(**ISSUE))
    assert found and all(b.fits for b in found)
    assert [b.step_s for b in found] == sorted(b.step_s for b in found)
    assert all(b.layout.gpus == 1024 and b.layout.global_batch_tokens == 16 * 32 * 4096 for b in found)
    # 70B on 1,024 H100s: the winner keeps its tensor-parallel group inside one node.
    assert found[0].layout.tp <= 8 and found[0].of("tp")[0].link == "lab-nvlink"
    # Nothing that does not fit: one H100 cannot hold 70B's model states without a split.
    assert all(b.memory.total_bytes <= 80e9 for b in found)


def test_a_405b_layout_like_llama_3s_needs_its_activations_cut_to_fit() -> None:
    """Llama 3 405B's layout on 8,192 H100s (tp 8, pp 16, dp 64) at s = 8,192 and 16 M tokens: under 1F1B
    the first stage holds 16 micro-batches of 8 layers' activations, beyond 80 GB until sequence
    parallelism and recomputation cut them."""
    fields = {"model": "lab-405b", "preset": "lab-h100", "gpus": 8192, "tp": 8, "pp": 16, "seq_len": 8192,
              "global_batch_tokens": 16 * 1024 * 1024, "zero": 1}
    plain = step(run(**fields))
    assert plain.layout.dp == 64 and plain.layout.micro_batches == 32
    assert not plain.fits and (plain.memory.activations_bytes or 0) > plain.memory.model_states_bytes
    cut = step(run(**fields, sequence_parallel=True, recompute="full"))
    assert cut.fits and cut.mfu_ceiling < plain.mfu_ceiling  # recomputation's price


# --- one line naming the field ------------------------------------------------------------------


@pytest.mark.parametrize(("fields", "field", "message"), [
    ({"dp": 8}, "dp", "'dp' 8 × 'tp' 8 × 'pp' 8 × 'cp' 1 = 512 chips, not 'gpus' 1024"),
    ({"tp": 3}, "gpus", "'tp' 3 × 'pp' 8 × 'cp' 1 = 24 does not divide 'gpus' 1024"),
    ({"gpus": 96, "tp": 3, "pp": 1}, "tp", "'tp' 3 does not divide the 64 attention heads of lab-70b"),
    ({"model": "lab-48h", "gpus": 6, "tp": 6, "pp": 1}, "tp",
     "'tp' 6 and the 8 key/value heads of lab-48h must divide"),
    ({"ep": 2}, "ep", "'ep' 2 needs a mixture of experts; lab-70b is dense"),
    ({"model": "lab-moe", "gpus": 48, "tp": 1, "pp": 1, "ep": 3}, "ep", "'ep' 3 does not divide the 8 experts"),
    ({"global_batch_tokens": 2 ** 21, "micro_batches": 64}, "micro_batches",
     "'micro_batches' 64 is more than the batch allows: 'global_batch_tokens' 2,097,152 over 'dp' 16 × "
     "'micro_batch' 1 × 'seq_len' 4,096 gives 32"),
    ({"global_batch_tokens": 1000, "micro_batches": None}, "global_batch_tokens",
     "'global_batch_tokens' 1,000 is not a whole number"),
    ({"micro_batches": 12, "interleave": 2}, "micro_batches", "must be a multiple of 'pp' 8"),
    ({"pp": 1, "interleave": 2}, "interleave", "'interleave' 2 needs a pipeline"),
    ({"zero": 4}, "zero", "'zero' must be a whole number from 0 to 3: 4"),
    ({"recompute": "some"}, "recompute", "'recompute' must be one of none, selective, full: 'some'"),
    ({"link_inter": "nvlink-9"}, "link_inter", "'link_inter': unknown link 'nvlink-9'"),
    ({"batch": 4}, "batch", "unknown key 'batch' (allowed: 'model', 'preset', 'gpus'"),
    ({"model": "llama-9"}, "model", "'model': unknown model 'llama-9'"),
])
def test_a_bad_layout_is_one_line_naming_its_field(fields: dict[str, Any], field: str, message: str) -> None:
    with pytest.raises(FieldError) as caught:
        run(**{**ISSUE, **fields})
    assert caught.value.field == field and message in str(caught.value) and "\n" not in str(caught.value)


def test_a_chip_without_a_node_needs_its_links_named() -> None:
    with pytest.raises(FieldError, match=r"^'link_intra' and 'link_inter' are needed: preset lab-loner .* names no "
                                         r"node") as caught:
        step(run(model="lab-70b", preset="lab-loner", gpus=8, tp=8))
    assert caught.value.field == "link_intra"
    named = step(run(model="lab-70b", preset="lab-loner", gpus=8, tp=8, link_intra="lab-nvlink",
                     link_inter="lab-ib"))
    assert named.of("tp")[0].link == "lab-ib"  # no shared link: every group crosses on the one named


# --- the published thresholds, from each source's own inputs -----------------------------------


def test_the_scaling_books_tpu_v5p_thresholds() -> None:
    v5p = preset_thresholds(PRESETS["book-v5p"], LINKS)
    assert v5p.dp_in_node == pytest.approx(2550)  # 4.59e14 / 1.8e11
    assert v5p.dp_all_axes == pytest.approx(850)  # three axes
    assert 8960 * v5p.dp_all_axes / 1e6 == pytest.approx(7.6, abs=0.05)  # 7.6 M tokens per pod
    # TP: Y < n_axes · F / 2,550, about 11 for F near 28,000 (Llama 3.1 70B: 28,672).
    assert v5p.value("tp", MODELS["lab-70b"]) == pytest.approx(28672 / 2550)
    assert round(v5p.value("tp", MODELS["lab-70b"])) == 11
    # Precision does not move it: int8 doubles C and halves the bytes.
    assert tp_degree_limit(28672, 2 * 4.59e14, 2 * 1.8e11) == pytest.approx(28672 / 2550)


def test_the_mixed_fsdp_tp_floor_and_the_books_own_rounding() -> None:
    """2·2550²/F: the book prints 432 at F = 30,000, where the formula gives 433.5; about 400 at 32,768."""
    at_30k = fsdp_tp_batch_floor(30000, 4.59e14, 1.8e11)
    assert at_30k == pytest.approx(433.5)
    assert abs(at_30k / 432 - 1) < 0.005  # the book's 432 is 433.5 rounded down
    assert fsdp_tp_batch_floor(32768, 4.59e14, 1.8e11) == pytest.approx(397, abs=1)


def test_llama_3_70b_trains_in_about_17_days_on_18823_v5p_chips() -> None:
    flops = 15e12 * 70e9 * 6
    assert flops == pytest.approx(6.3e24)
    estimate = training_at_threshold(flops, 16e6, 2550 / 3, 4.59e14, 0.5)
    assert estimate.chips == 18_823
    assert round(estimate.days) == 17


def test_the_scaling_books_h100_and_h800_thresholds() -> None:
    h100 = preset_thresholds(PRESETS["book-h100"], LINKS)
    assert h100.dp_in_node == pytest.approx(2200)  # 990e12 / 450e9
    assert h100.dp_across_nodes == pytest.approx(2475)  # the book's 400e9 across nodes
    assert 16000 * h100.dp_across_nodes / 1e6 == pytest.approx(40, abs=0.5)  # LLaMA-3 would need ~40 M tokens
    h800 = preset_thresholds(PRESETS["book-h800"], LINKS)
    assert h800.dp_across_nodes == pytest.approx(3300)
    assert 2048 * h800.dp_across_nodes / 1e6 == pytest.approx(6.7, abs=0.1)  # DeepSeek-V3: ~6.7 M


def test_a_mixture_of_experts_multiplies_the_threshold_by_e_over_k() -> None:
    assert moe_factor(MODELS["lab-moe"]) == 4 and moe_factor(MODELS["lab-70b"]) == 1
    h100 = preset_thresholds(PRESETS["book-h100"], LINKS)
    assert h100.value("moe", MODELS["lab-moe"]) == pytest.approx(4 * 2200)


def test_thresholds_need_the_presets_own_links() -> None:
    with pytest.raises(InputError, match="a communication threshold needs the links its chips share, and preset "
                       "lab-loner"):
        preset_thresholds(PRESETS["lab-loner"], LINKS)
    assert math.isclose(dp_batch_threshold(1e15, 1e11, 2), 5000)
