"""Memory of a training run (ainotes.core.memory): the published figures, properties, one-line errors, the CLI.

Fixture presets live in tests/fixtures/memory (GPUs of 80 GB, 24 GB, 16 GiB and one without a
capacity; models with GPT-3 175B's, Llama 3.1 8B's, Mixtral 8x7B's and PaLM 540B's
architectures under fixture ids), so adding a shipped preset changes nothing here.
"""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ainotes import cli
from ainotes.base.errors import InputError
from ainotes.core import memory
from ainotes.core.memory import TrainingMemory
from ainotes.presets.gpus import load_presets
from ainotes.presets.models import load_models

FIXTURES = Path(__file__).parent / "fixtures" / "memory"
MODELS = {m.id: m for m in load_models(FIXTURES / "models")}
PRESETS = {p.id: p for p in load_presets(FIXTURES)}
GPT = MODELS["gpt-like"]
GQA = MODELS["gqa-like"]
MOE = MODELS["moe-like"]
MQA = MODELS["mqa-like"]
GB = 1e9


# --- the published figures -----------------------------------------------------------------


@pytest.mark.parametrize(("params", "adam_gb", "fp32_accum_gb"),
                         [(1e9, 16, 20), (7e9, 112, 140), (70e9, 1_120, 1_400), (405e9, 6_480, 8_100)])
def test_ultra_scale_playbook_table(params: float, adam_gb: float, fp32_accum_gb: float) -> None:
    # The Ultra-Scale Playbook: BF16 weights and gradients, FP32 master weights and Adam moments.
    plain = TrainingMemory(params=params).estimate()
    accumulated = TrainingMemory(params=params, fp32_grad_accum=True).estimate()
    assert plain.total_bytes == pytest.approx(adam_gb * GB)
    assert accumulated.total_bytes == pytest.approx(fp32_accum_gb * GB)
    assert plain.activations_bytes is None and plain.capacity_bytes is None and plain.fits is None


@pytest.mark.parametrize(("zero", "published_gb"), [(0, 120), (1, 31.4), (2, 16.6), (3, 1.9)])
def test_zero_paper_example(zero: int, published_gb: float) -> None:
    # Rajbhandari et al., SC 2020, Figure 1: Ψ = 7.5 B, N_d = 64, K = 12.
    estimate = TrainingMemory(params=7.5e9, zero=zero, dp=64).estimate()
    assert round(estimate.model_states_bytes / GB, 1) == published_gb


def test_optimizers_of_transformer_math_101() -> None:
    # 8-bit Adam: 6 bytes of state a parameter; SGD with momentum: 8; Adam: 12.
    assert memory.state_bytes_per_param("adam").total == 16
    assert memory.state_bytes_per_param("adam", fp32_grad_accum=True).total == 20
    assert memory.state_bytes_per_param("adam-8bit").optimizer == 6
    assert memory.state_bytes_per_param("sgd").optimizer == 8
    sgd = TrainingMemory(params=1e9, optimizer="sgd").estimate()
    assert sgd.optimizer_bytes == 8e9 and sgd.weights_bytes == 2e9 and sgd.gradients_bytes == 2e9


def test_tensor_and_pipeline_parallelism_divide_the_model_states() -> None:
    whole = TrainingMemory(params=70e9).estimate().model_states_bytes
    assert TrainingMemory(params=70e9, tp=8, pp=4).estimate().model_states_bytes == pytest.approx(whole / 32)


S, B, H, A, T = 2048, 1, 12288, 96, 8  # Korthikanti et al.'s GPT-3 175B, with t = 8


@pytest.mark.parametrize(
    ("options", "table_2"),
    [
        ({}, S * B * H * (34 + 5 * A * S / H)),
        ({"tp": T}, S * B * H * (10 + 24 / T + 5 * A * S / (H * T))),
        ({"tp": T, "sequence_parallel": True}, S * B * H * (34 + 5 * A * S / H) / T),
        ({"tp": T, "recompute": "selective"}, S * B * H * (10 + 24 / T)),
        ({"tp": T, "sequence_parallel": True, "recompute": "selective"}, S * B * H * 34 / T),
        ({"recompute": "full"}, S * B * H * 2),
    ],
    ids=["none", "tp", "tp+sp", "tp+selective", "tp+sp+selective", "full"],
)
def test_korthikanti_table_2_for_gpt_3(options: dict, table_2: float) -> None:
    # The closed forms of Table 2, against the core's term-by-term count on GPT-3's architecture.
    counted = memory.activation_bytes_per_layer(GPT, seq_len=S, micro_batch=B, **options)
    assert counted == pytest.approx(table_2, rel=1e-12)


def test_korthikanti_per_layer_figures_in_bytes() -> None:
    # Reading the formulas at s = 2048, b = 1, h = 12288, a = 96: 2.87 GB a layer without parallelism,
    # 107 MB with t = 8, sequence parallelism and selective recomputation, 50.3 MB under full recomputation.
    assert memory.activation_bytes_per_layer(GPT, seq_len=S, micro_batch=B) / 1e9 == pytest.approx(2.869, abs=1e-3)
    selective = memory.activation_bytes_per_layer(GPT, seq_len=S, micro_batch=B, tp=8, sequence_parallel=True,
                                                  recompute="selective")
    assert selective / 1e6 == pytest.approx(106.95, abs=0.01)


def test_pipeline_first_stage_holds_p_micro_batches_of_its_layers() -> None:
    per_layer = memory.activation_bytes_per_layer(GPT, seq_len=S, micro_batch=B, tp=8, sequence_parallel=True,
                                                  recompute="selective")
    # and the one layer whose attention core the backward pass computes again
    again = memory.rematerialized_bytes(GPT, seq_len=S, micro_batch=B, tp=8, sequence_parallel=True,
                                        recompute="selective")
    assert again == pytest.approx(5 * 96 * S * S / 8)  # 5·a·s²·b / t: the scores, their mask and dropout
    for pp, layers_held in ((1, 96), (8, 96), (7, 14 * 7)):  # ⌈96/7⌉ = 14 layers, 7 micro-batches in flight
        config = TrainingMemory(model=GPT, tp=8, pp=pp, micro_batch=1, seq_len=S, sequence_parallel=True,
                                recompute="selective")
        assert config.estimate().activations_bytes == pytest.approx(per_layer * layers_held + again)
        assert config.estimate().rematerialized_bytes == pytest.approx(again)
    # Fewer micro-batches than stages: only those are in flight.
    few = TrainingMemory(model=GPT, tp=8, pp=8, micro_batch=1, seq_len=S, sequence_parallel=True,
                         recompute="selective", micro_batches=3)
    assert few.estimate().activations_bytes == pytest.approx(per_layer * 12 * 3 + again)


def test_the_first_pipeline_stage_holds_its_layers_and_the_input_embedding() -> None:
    table = (50_257 + 2_048) * 12_288  # GPT's token and position tables
    one, eight = (TrainingMemory(model=GPT, pp=pp).estimate() for pp in (1, 8))
    assert one.weights_bytes == 2 * GPT.params
    # 12 of 96 layers and the tables: more than an eighth of the model (the tables are not split)
    layers = (GPT.params - table - 12_288) / 96
    assert eight.weights_bytes == pytest.approx(2 * (12 * layers + table))
    assert eight.weights_bytes > one.weights_bytes / 8


def test_logits_are_reported_apart_from_the_total() -> None:
    estimate = TrainingMemory(model=GPT, micro_batch=2, seq_len=2048, tp=4, preset=PRESETS["card-80"]).estimate()
    # s·b·V logits: the BF16 output (2 bytes), its FP32 copy (4) and the BF16 gradient (2), split over t = 4
    assert estimate.logits_bytes == pytest.approx(2048 * 2 * 50257 * (2 + 4 + 2) / 4)
    assert estimate.total_bytes == pytest.approx(estimate.model_states_bytes + estimate.activations_bytes)


# --- the generalisations -------------------------------------------------------------------


def test_fused_attention_drops_the_score_terms() -> None:
    standard = memory.activation_bytes_per_layer(GPT, seq_len=S, micro_batch=B)
    fused = memory.activation_bytes_per_layer(GPT, seq_len=S, micro_batch=B, attention="fused")
    # What is left: 34·s·b·h and the kernel's FP32 log-sum-exp, 4 bytes per head and row.
    assert fused == pytest.approx(S * B * H * 34 + 4 * A * S * B)
    assert standard - fused == pytest.approx(5 * A * S * S * B - 4 * A * S * B)


def test_without_dropout_the_masks_and_the_dropped_out_softmax_go() -> None:
    with_dropout = memory.activation_bytes_per_layer(GPT, seq_len=S, micro_batch=B)
    without = memory.activation_bytes_per_layer(GPT, seq_len=S, micro_batch=B, dropout=False)
    # Two masks of s·b·h bytes on the residual stream; per score, a mask byte and a 16-bit copy.
    assert with_dropout - without == pytest.approx(2 * S * B * H + 3 * A * S * S * B)


def test_grouped_query_attention_stores_narrower_keys_and_values() -> None:
    mha = dataclasses.replace(GQA, kv_heads=GQA.heads)
    saved = (memory.activation_bytes_per_layer(mha, seq_len=4096, micro_batch=1)
             - memory.activation_bytes_per_layer(GQA, seq_len=4096, micro_batch=1))
    # K and V are kv_heads·d_head = 1,024 wide instead of 4,096: 2 tensors × 2 bytes × 3,072 a token.
    assert saved == pytest.approx(4096 * 2 * 2 * (4096 - 1024))


def test_swiglu_at_eight_thirds_h_stores_what_gelu_at_four_h_does() -> None:
    # GELU at d_ff = 4h keeps 2 tensors of 4h, 16h bytes a token; SwiGLU keeps 3 (gate, up, their
    # product) of 8h/3, 3 × 2 × 8h/3 = 16h: the same, as the same parameter count suggests.
    gelu = dataclasses.replace(GQA, mlp="gelu", d_ff=4 * 4096, kv_heads=GQA.heads)
    swiglu = dataclasses.replace(GQA, mlp="swiglu", d_ff=8 * 4096 // 3, kv_heads=GQA.heads)
    args = {"seq_len": 1024, "micro_batch": 1}
    assert memory.activation_bytes_per_layer(swiglu, **args) == pytest.approx(
        memory.activation_bytes_per_layer(gelu, **args), rel=1e-4)


def test_a_mixture_of_experts_stores_each_active_experts_activations_and_all_its_weights() -> None:
    dense = dataclasses.replace(MOE, experts=None, active_experts=None, published_active_params=None)
    args = {"seq_len": 4096, "micro_batch": 1}
    # One more expert per token: its input (2h bytes) and its gate, up and product (3 × 2·d_ff bytes).
    mlp_per_expert = 4096 * (2 * 4096 + 3 * 2 * 14336)
    extra = memory.activation_bytes_per_layer(MOE, **args) - memory.activation_bytes_per_layer(dense, **args)
    assert extra == pytest.approx(mlp_per_expert)  # the second active expert
    assert TrainingMemory(model=MOE).estimate().total_bytes == pytest.approx(16 * MOE.params)


def test_tensor_parallel_ranks_beyond_the_kv_heads_keep_copies() -> None:
    # One key/value head (multi-query): every rank keeps it whole, so K and V do not shrink with t.
    assert memory.kv_width_per_rank(MQA, 8) == MQA.head_dim
    assert memory.kv_width_per_rank(GQA, 4) == 2 * GQA.head_dim
    assert memory.kv_width_per_rank(GQA, 16) == GQA.head_dim


# --- properties ------------------------------------------------------------------------------

degrees = st.sampled_from([1, 2, 4, 8, 16, 64, 256, 1024])
params_st = st.floats(min_value=1e6, max_value=1e13)


@settings(max_examples=60, deadline=None)
@given(params=params_st, dp=degrees, more=st.sampled_from([1, 2, 4, 64]), zero=st.integers(1, 3),
       optimizer=st.sampled_from(memory.OPTIMIZERS), accum=st.booleans())
def test_memory_falls_as_data_parallelism_grows_and_never_below_stage_3(
        params: float, dp: int, more: int, zero: int, optimizer: str, accum: bool) -> None:
    def total(stage: int, ranks: int) -> float:
        return TrainingMemory(params=params, zero=stage, dp=ranks, optimizer=optimizer,
                              fp32_grad_accum=accum).estimate().total_bytes

    small, large = sorted((dp, dp * more))
    if large > small:
        assert total(zero, large) < total(zero, small)
    assert total(0, large) == pytest.approx(total(0, small))  # stage 0 shards nothing
    for stage in range(4):
        assert total(stage, large) >= total(3, large) * (1 - 1e-12)
        if stage:
            assert total(stage, large) <= total(stage - 1, large) * (1 + 1e-12)
    assert total(3, large) == pytest.approx(total(0, large) / large)


activation_models = st.sampled_from([GPT, GQA, MOE, MQA])
modes = st.sampled_from([("none", "standard"), ("none", "fused"), ("selective", "standard"),
                         ("selective", "fused"), ("full", "standard")])


@settings(max_examples=60, deadline=None)
@given(model=activation_models, b=st.integers(1, 64), k=st.integers(2, 8), s=st.sampled_from([128, 1024, 4096]),
       tp=st.sampled_from([1, 2, 8]), sp=st.booleans(), mode=modes, dropout=st.booleans())
def test_activations_scale_linearly_in_the_micro_batch(model, b, k, s, tp, sp, mode, dropout) -> None:
    recompute, attention = mode
    args = {"seq_len": s, "tp": tp, "sequence_parallel": sp, "recompute": recompute, "attention": attention,
            "dropout": dropout}
    one = memory.activation_bytes_per_layer(model, micro_batch=b, **args)
    assert memory.activation_bytes_per_layer(model, micro_batch=k * b, **args) == pytest.approx(k * one, rel=1e-12)


@settings(max_examples=60, deadline=None)
@given(model=activation_models, s=st.sampled_from([64, 512, 2048, 8192]), tp=st.sampled_from([1, 2, 8]),
       sp=st.booleans(), dropout=st.booleans())
def test_activations_are_quadratic_in_the_sequence_without_fused_attention_linear_with_it(
        model, s, tp, sp, dropout) -> None:
    args = {"micro_batch": 1, "tp": tp, "sequence_parallel": sp, "dropout": dropout}

    def per_token(seq: int, **extra: str) -> float:
        return memory.activation_bytes_per_layer(model, seq_len=seq, **args, **extra) / seq

    # Standard attention: bytes/s is affine in s with a positive slope (the a·s² terms), so quadratic in s.
    step_1 = per_token(2 * s) - per_token(s)
    step_2 = per_token(3 * s) - per_token(2 * s)
    assert step_1 > 0 and step_2 == pytest.approx(step_1, rel=1e-9)
    # Fused attention, selective and full recomputation: linear (bytes per token do not depend on s).
    for extra in ({"attention": "fused"}, {"recompute": "selective"}, {"recompute": "full"}):
        assert per_token(3 * s, **extra) == pytest.approx(per_token(s, **extra), rel=1e-12)


def test_fits_and_headroom_against_the_gpus_capacity() -> None:
    config = TrainingMemory(params=7.5e9, zero=1, dp=64, preset=PRESETS["card-80"])
    estimate = config.estimate()
    assert estimate.capacity_bytes == 80e9 and estimate.fits is True
    assert estimate.headroom_bytes == pytest.approx(80e9 - 31.40625e9)
    small = dataclasses.replace(config, preset=PRESETS["card-24"]).estimate()
    assert small.fits is False and small.headroom_bytes == pytest.approx(24e9 - 31.40625e9)
    assert memory.lowest_fitting_stage(dataclasses.replace(config, preset=PRESETS["card-24"]))[0] == 2
    assert dataclasses.replace(config, preset=PRESETS["card-nocap"]).estimate().fits is None
    assert dataclasses.replace(config, preset=PRESETS["card-16gib"]).estimate().capacity_bytes == 16 * 2**30


def test_lowest_fitting_stage_is_none_when_even_stage_3_is_too_big() -> None:
    config = TrainingMemory(params=405e9, dp=8, preset=PRESETS["card-80"])
    assert memory.lowest_fitting_stage(config) is None
    with pytest.raises(InputError, match="needs a GPU preset that gives its memory capacity"):
        memory.lowest_fitting_stage(dataclasses.replace(config, preset=PRESETS["card-nocap"]))


# --- one-line errors -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({}, "needs exactly one of 'model' and 'params'"),
        ({"model": "gpt-like", "params": 1e9}, "needs exactly one of 'model' and 'params'"),
        ({"params": 7.5}, "'params' is a count of parameters, not billions: 7.5 (write 7.5e9 for 7.5 B)"),
        ({"params": -1}, "'params' must be a finite number > 0: -1"),
        ({"params": "lots"}, "'params' must be a finite number > 0: 'lots'"),
        ({"params": 1e9, "zero": 4}, "'zero' must be a whole number from 0 to 3: 4"),
        ({"params": 1e9, "zero": 1.5}, "'zero' must be a whole number from 0 to 3: 1.5"),
        ({"params": 1e9, "dp": 0}, "'dp' must be a whole number from 1 to 1000000: 0"),
        ({"params": 1e9, "tp": 2.5}, "'tp' must be a whole number from 1 to 1000000: 2.5"),
        ({"params": 1e9, "pp": True}, "'pp' must be a whole number from 1 to 1000000: True"),
        ({"params": 1e9, "optimizer": "adamw"}, "'optimizer' must be one of adam, adam-8bit, sgd: 'adamw'"),
        ({"params": 1e9, "fp32_grad_accum": "yes"}, "'fp32_grad_accum' must be true or false: 'yes'"),
        ({"params": 1e9, "micro_batch": 1}, "'micro_batch' and 'seq_len' go together"),
        ({"params": 1e9, "micro_batch": 1, "seq_len": 2048}, "need 'model': activations depend on the architecture"),
        ({"params": 1e9, "recompute": "full"}, "'recompute' is about activations: give 'micro_batch' and 'seq_len'"),
        ({"model": "gpt-like", "micro_batch": 1, "seq_len": 8, "recompute": "some"},
         "'recompute' must be one of none, selective, full: 'some'"),
        ({"model": "gpt-like", "micro_batch": 1, "seq_len": 8, "attention": "flash"},
         "'attention' must be one of standard, fused: 'flash'"),
        ({"model": "gpt-like", "micro_batch": 0, "seq_len": 8}, "'micro_batch' must be a whole number from 1"),
        ({"model": "gpt-like", "tp": 5}, "'tp' 5 must divide gpt-like's 96 attention heads"),
        ({"model": "gqa-like", "tp": 32, "micro_batch": 1, "seq_len": 8}, None),  # 32 heads, copies of 8 KV heads
        ({"model": "gpt-like", "pp": 97}, "'pp' 97 cannot exceed gpt-like's 96 layers"),
        ({"model": "gpt-2"}, "'model': unknown model 'gpt-2' (known: "),
        ({"params": 1e9, "preset": "card-99"}, "'preset': unknown preset 'card-99' (known: "),
        ({"params": 1e9, "zeros": 1}, "unknown key 'zeros' (allowed: 'model', 'params', "),
    ],
)
def test_bad_configurations_are_one_line(fields: dict, message: str | None) -> None:
    if message is None:
        TrainingMemory.from_fields(fields, MODELS, PRESETS).estimate()
        return
    with pytest.raises(InputError) as caught:
        TrainingMemory.from_fields(fields, MODELS, PRESETS)
    text = str(caught.value)
    assert message in text and "\n" not in text


def test_kv_heads_and_tp_must_divide_one_another() -> None:
    odd = dataclasses.replace(GQA, heads=48, kv_heads=6)
    with pytest.raises(InputError, match=r"'tp' 4 and gqa-like's 6 key/value heads must divide one another"):
        TrainingMemory(model=odd, tp=4)


def test_labels_name_flags_in_the_callers_style() -> None:
    with pytest.raises(InputError, match=r"^--zero must be a whole number from 0 to 3: '7'$"):
        TrainingMemory.from_fields({"params": "1e9", "zero": "7"}, MODELS, PRESETS, label=lambda k: "--" + k)
    config = TrainingMemory.from_fields({"params": "7.5e9", "zero": "1", "dp": "64", "fp32_grad_accum": "false"},
                                        MODELS, PRESETS, label=lambda k: k + "=")
    assert config.estimate().total_bytes == pytest.approx(31.40625e9)


def test_values_arrive_typed() -> None:
    config = TrainingMemory.from_fields({"model": "gpt-like", "tp": "8", "micro_batch": "1", "seq_len": "2048",
                                         "sequence_parallel": "true"}, MODELS, PRESETS)
    assert (config.tp, config.micro_batch, config.seq_len, config.sequence_parallel) == (8, 1, 2048, True)
    assert math.isclose(config.param_count, GPT.params)


# --- ainotes memory ----------------------------------------------------------------------------


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = cli.main(["memory", "--presets-dir", str(FIXTURES), *argv])
    out, err = capsys.readouterr()
    return status, out, err


def test_cli_gives_the_zero_papers_stage_1_figure(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run_cli(capsys, "--params", "7.5e9", "--zero", "1", "--dp", "64", "--json")
    record = json.loads(out)
    assert status == 0
    assert round(record["total_bytes"] / GB, 1) == 31.4 and record["model_states_bytes"] == record["total_bytes"]
    assert record["activations_bytes"] is None and record["capacity_bytes"] is None and record["fits"] is None
    for key in ("weights_bytes", "gradients_bytes", "optimizer_bytes"):
        assert record[key] > 0
    assert record["weights_bytes"] + record["gradients_bytes"] + record["optimizer_bytes"] == record["total_bytes"]


def test_cli_with_a_model_a_micro_batch_and_a_gpu(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run_cli(capsys, "--model", "gpt-like", "--zero", "3", "--dp", "64", "--tp", "8", "--pp", "8",
                             "--micro-batch", "1", "--seq-len", "2048", "--sequence-parallel", "--recompute",
                             "selective", "--preset", "card-80", "--json")
    record = json.loads(out)
    assert status == 0
    # Table 2's s·b·h·34/t per layer, 96 layers' worth on the first stage (12 layers × 8 micro-batches).
    # plus the one layer whose attention core is computed again: 5·a·s²·b/t
    assert record["activations_bytes"] == pytest.approx(96 * 2048 * 12288 * 34 / 8 + 5 * 96 * 2048**2 / 8)
    assert record["capacity_bytes"] == 80e9 and record["fits"] is True
    assert record["headroom_bytes"] == pytest.approx(80e9 - record["total_bytes"])
    assert record["logits_bytes"] == pytest.approx(2048 * 50257 * 8 / 8)
    assert record["total_bytes"] == pytest.approx(sum(record[k] for k in (
        "weights_bytes", "gradients_bytes", "optimizer_bytes", "activations_bytes")))


def test_cli_text_says_whether_it_fits_and_what_the_total_leaves_out(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run_cli(capsys, "--params", "7.5e9", "--zero", "1", "--dp", "64", "--preset", "card-24")
    assert status == 0
    assert "31.41 GB" in out and "does not fit, 7.406 GB short" in out
    assert "not in the total" in out and "fragmentation" in out
    status, out, _ = run_cli(capsys, "--params", "7.5e9", "--preset", "card-nocap")
    assert "gives no memory capacity" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--params", "7.5e9", "--zero", "4"], "ainotes memory: --zero must be a whole number from 0 to 3: '4'"),
        (["--params", "7.5e9", "--dp", "0"], "ainotes memory: --dp must be a whole number from 1 to 1000000: '0'"),
        (["--params", "7.5"], "--params is a count of parameters, not billions: '7.5' (write 7.5e9 for 7.5 B)"),
        (["--params", "1e9", "--optimizer", "lion"], "--optimizer must be one of adam, adam-8bit, sgd: 'lion'"),
        (["--params", "1e9", "--micro-batch", "1", "--seq-len", "8"], "--micro-batch and --seq-len need --model"),
        (["--model", "gpt-like", "--micro-batch", "1"], "--micro-batch and --seq-len go together"),
        (["--params", "1e9", "--sequence-parallel"], "--sequence-parallel is about activations"),
        (["--model", "gpt-like", "--tp", "7"], "--tp 7 must divide gpt-like's 96 attention heads"),
        (["--model", "gpt-like", "--pp", "200"], "--pp 200 cannot exceed gpt-like's 96 layers"),
        (["--model", "gpt-7"], "--model: unknown model 'gpt-7' (known: "),
        (["--params", "1e9", "--preset", "card-7"],
         "--preset: unknown preset 'card-7' (did you mean 'card-80'? known: "),
        (["--params", "1e9", "--model", "gpt-like"], "argument --model: not allowed with argument --params"),
        ([], "one of the arguments --model --params is required"),
        (["--model", "gpt-like", "--micro-batch", "1", "--seq-len", "8", "--recompute", "most"],
         "--recompute must be one of none, selective, full: 'most'"),
    ],
)
def test_cli_errors_are_one_line_with_status_2(capsys: pytest.CaptureFixture[str], argv: list[str],
                                               message: str) -> None:
    status, out, err = run_cli(capsys, *argv)
    assert status == 2 and out == ""
    assert message in err and err.count("\n") == 1 and "Traceback" not in err
