"""Serving figures (ainotes.core.inference) and `ainotes inference`: the Scaling Book's numbers, the
formula's properties, tensor parallelism, and one line for every bad input.

Fixed figures come from tests/fixtures/inference (presets of H100's and TPU v5e's figures, models
of the published architectures), so adding a shipped preset changes nothing here.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ainotes.base.errors import InputError
from ainotes.cli import main
from ainotes.core import collective_cost
from ainotes.core.checks import FieldError
from ainotes.core.inference import (
    InferenceSetup,
    b_crit,
    compute_bound_batch,
    kv_bytes_per_token,
    layer_kernels,
    weights_bytes,
)
from ainotes.presets.gpus import load_presets
from ainotes.presets.links import load_links
from ainotes.presets.models import load_models

FIXTURES = Path(__file__).parent / "fixtures" / "inference"
PRESETS = {p.id: p for p in load_presets(FIXTURES)}
MODELS = {m.id: m for m in load_models(FIXTURES / "models")}
LINKS = {link.id: link for link in load_links(FIXTURES / "links")}

GPU, TPU, NOCAP = PRESETS["lab-gpu"], PRESETS["lab-tpu"], PRESETS["lab-nocap"]
M70, M13, MOE, MQA = MODELS["lab-70b"], MODELS["lab-13b"], MODELS["lab-moe"], MODELS["lab-mqa"]


def setup(**fields: object) -> InferenceSetup:
    fields.setdefault("model", "lab-70b")
    fields.setdefault("preset", "lab-gpu")
    return InferenceSetup.from_fields(fields, models=MODELS, presets=PRESETS, links=lambda: LINKS)


# --- the published numbers ------------------------------------------------------------------


def test_kv_cache_per_token_of_llama_31_70b_is_320_kib() -> None:
    assert kv_bytes_per_token(M70) == 327_680 == 320 * 1024
    assert kv_bytes_per_token(M70, "fp8") == 163_840  # an 8-bit cache halves it


def test_an_8k_llama_2_13b_sequence_holds_6_7_gb_of_kv_cache() -> None:
    assert kv_bytes_per_token(M13) == 819_200
    assert f"{kv_bytes_per_token(M13) * 8192 / 1e9:.1f}" == "6.7"


def test_multi_query_attention_keeps_one_head_of_keys_and_values() -> None:
    assert kv_bytes_per_token(MQA) == kv_bytes_per_token(M13) / 40


@pytest.mark.parametrize(("preset", "weights", "expected"), [
    ("lab-gpu", "bf16", 295), ("lab-gpu", "int8", 148), ("lab-gpu", "fp8", 148), ("lab-tpu", "bf16", 240),
])
def test_b_crit_is_the_scaling_books(preset: str, weights: str, expected: int) -> None:
    assert round(b_crit(PRESETS[preset], weights, "bf16")) == expected


def test_b_crit_at_fp8_compute_doubles_with_the_peak() -> None:
    assert b_crit(GPU, "fp8", "fp8") == pytest.approx(2 * b_crit(GPU, "fp8", "bf16"), rel=1e-4)  # 1978.9 ≈ 2 × 989.4


def test_llama_70b_weights_in_bf16_are_141_gb() -> None:
    assert weights_bytes(M70) == 2 * M70.params
    assert round(weights_bytes(M70) / 1e9) == 141


def test_the_done_means_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--presets-dir", str(FIXTURES), "inference", "--model", "lab-70b", "--preset", "lab-gpu",
                 "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["kv_bytes_per_token"] == 327_680
    assert round(record["b_crit"]) == 295
    assert set(record) >= {"kv_bytes_per_token", "weights_bytes", "decode_step_s", "decode_bound", "tokens_per_s",
                           "b_crit", "max_batch", "prefill_s"}


# --- the decode step: properties of the formula ------------------------------------------------

batches = st.integers(1, 4096)
contexts = st.integers(1, 1 << 17)


@given(b=batches, s=contexts, db=st.integers(0, 4096), ds=st.integers(0, 1 << 16),
       model=st.sampled_from(["lab-70b", "lab-moe", "lab-mqa"]), tp=st.sampled_from([1, 2, 8]))
def test_step_time_never_falls_as_batch_or_context_grow(b: int, s: int, db: int, ds: int, model: str, tp: int) -> None:
    link = {"link": "lab-link"} if tp > 1 else {}
    base = setup(model=model, batch=b, context=s, tp=tp, **link).decode_step().time_s
    assert setup(model=model, batch=b + db, context=s, tp=tp, **link).decode_step().time_s >= base
    assert setup(model=model, batch=b, context=s + ds, tp=tp, **link).decode_step().time_s >= base


TABLE = 128_256 * 8_192  # Llama 3.1 70B's input embedding: a lookup reads one row of it per token


@given(b=st.integers(1, 295), s=contexts)
def test_below_b_crit_a_step_takes_the_bytes_it_reads_over_the_bandwidth(b: int, s: int) -> None:
    step = setup(batch=b, context=s).decode_step()
    assert step.bound == "memory"
    # every weight but the input table, the B rows of it the batch looks up, every cached key and value
    moved = (M70.params - TABLE) * 2 + b * 8_192 * 2 + b * s * 327_680
    assert step.time_s == pytest.approx(moved / 3.35e12, rel=1e-12)


@given(b=st.integers(296, 1 << 16), s=contexts)
def test_above_b_crit_the_matmuls_take_their_flops_over_the_peak(b: int, s: int) -> None:
    step = setup(batch=b, context=s).decode_step()
    assert step.bound == "compute"
    matmul_params = M70.params - TABLE  # the lookup does no arithmetic
    assert step.time_s - b * s * 327_680 / 3.35e12 == pytest.approx(2 * b * matmul_params / 989.4e12, rel=1e-9)


def test_tokens_per_second_is_the_batch_over_one_step() -> None:
    one = setup(batch=64, context=4096)
    assert one.record()["tokens_per_s"] == pytest.approx(64 / one.record()["decode_step_s"])


def test_a_mixture_of_experts_turns_compute_bound_where_each_expert_does() -> None:
    # Attention at B_crit = 295; each of 8 experts sees B·2/8 tokens, so the experts at 4·295 = 1,181
    # (the blend B_crit·P/P_active = 1,071 of the third round is neither).
    assert round(b_crit(GPU)) == 295 and round(compute_bound_batch(MOE, GPU)) == 1_181
    b = math.floor(compute_bound_batch(MOE, GPU))
    assert setup(model="lab-moe", batch=b).decode_step().bound == "memory"
    assert setup(model="lab-moe", batch=b + 1).decode_step().bound == "compute"
    assert setup(model="lab-moe", batch=296).decode_step().dense_compute_s > \
        setup(model="lab-moe", batch=296).decode_step().dense_weights_s  # attention turned already


def test_mixtral_at_batch_one_reads_the_two_experts_a_token_uses() -> None:
    step = setup(model="lab-moe", batch=1, context=1).decode_step()
    assert step.experts_touched == pytest.approx(2)
    # 27.9 ms if all eight experts were read (46.7 B · 2 bytes over 3.35 TB/s); about 7.7 ms for the 13 B a token uses
    assert 7.5e-3 < step.time_s < 7.8e-3
    assert setup(model="lab-moe", batch=8, context=1).decode_step().experts_touched == pytest.approx(7.2, abs=0.05)
    assert setup(model="lab-moe", batch=4096, context=1).decode_step().weights_s == pytest.approx(
        (MOE.params - 32_000 * 4096 + 4096 * 4096) * 2 / 3.35e12, rel=1e-9)  # every expert, 4,096 rows


def test_prefill_is_compute_bound_once_its_tokens_pass_b_crit() -> None:
    assert setup(context=200).prefill().bound == "memory"
    assert setup(context=400).prefill().bound == "compute"
    fill = setup(context=4096).prefill()
    assert fill.time_s == pytest.approx(fill.flops / 989.4e12)
    assert fill.flops > 2 * M70.params * 4096  # attention on top of 2·P·T


# --- memory: the largest batch ----------------------------------------------------------------


@given(s=st.integers(64, 1 << 17), model=st.sampled_from(["lab-13b", "lab-moe", "lab-mqa"]))
def test_the_largest_batch_fits_and_one_more_does_not(s: int, model: str) -> None:
    largest = setup(model=model, preset="lab-gpu", context=s).max_batch
    assert largest is not None
    if largest >= 1:
        assert setup(model=model, context=s, batch=largest).fits() is True
    assert setup(model=model, context=s, batch=largest + 1).fits() is False


def test_weights_that_do_not_fit_leave_no_batch() -> None:
    one = setup(context=1024)  # 141 GB of weights on an 80 GB chip
    assert (one.max_batch, one.fits()) == (0, False)
    assert setup(context=1024, tp=2, link="lab-link").max_batch > 0


def test_no_capacity_no_largest_batch() -> None:
    one = setup(preset="lab-nocap", model="lab-13b")
    assert one.max_batch is None and one.fits() is None
    assert one.record()["max_batch"] is None


def test_tpu_capacity_is_16_gib() -> None:
    one = setup(preset="lab-tpu", model="lab-13b", context=1)
    assert one.capacity_bytes == 16 * 2**30 and one.max_batch == 0  # 26 GB of weights


# --- tensor parallelism ---------------------------------------------------------------------------


def test_tensor_parallelism_divides_weights_kv_and_flops() -> None:
    one, eight = setup(batch=64, context=4096), setup(batch=64, context=4096, tp=8, link="lab-link")
    a, b = one.decode_step(), eight.decode_step()
    assert b.weights_s == pytest.approx(a.weights_s / 8)
    assert b.kv_s == pytest.approx(a.kv_s / 8)
    assert b.compute_s == pytest.approx(a.compute_s / 8)
    assert a.allreduce_s == 0 < b.allreduce_s


def test_two_all_reduces_per_layer_timed_with_the_fastest_algorithm_for_their_size() -> None:
    step = setup(batch=64, context=4096, tp=8, link="lab-link").decode_step()
    one = collective_cost.best_algorithm("all-reduce", 8, 64 * 8192 * 2, bandwidth_bytes_per_s=450e9,
                                         latency_s=1.9e-6)
    assert step.allreduce_s == pytest.approx(2 * 80 * one.time_s)
    assert step.allreduce_algorithm == one.algorithm == "rabenseifner"
    # The figure: a 16 kB message (batch 1) over 8 ranks takes 26.7 µs as a ring, 11.5 µs at best.
    single = setup(batch=1, context=1, tp=8, link="lab-link").decode_step()
    ring = collective_cost.algorithm_time("all-reduce", "ring", 8, 16_384, bandwidth_bytes_per_s=450e9,
                                          latency_s=1.9e-6)
    assert (round(ring.time_s * 1e6, 1), round(single.allreduce_s / 160 * 1e6, 1)) == (26.7, 11.5)
    slow = setup(batch=64, context=4096, tp=8, link="lab-slow").decode_step()
    assert slow.allreduce_s > step.allreduce_s


def test_kv_heads_stop_shrinking_past_their_count() -> None:
    eight = setup(model="lab-70b", tp=8, link="lab-link")
    sixteen = setup(model="lab-70b", tp=16, link="lab-link")
    assert eight.kv_bytes_per_token_per_chip == sixteen.kv_bytes_per_token_per_chip == 327_680 / 8
    mqa = setup(model="lab-mqa", tp=8, link="lab-link")
    assert mqa.kv_bytes_per_token_per_chip == kv_bytes_per_token(MQA)  # one head, on every chip


# --- a layer as its operators ------------------------------------------------------------------------


@pytest.mark.parametrize("model", ["lab-70b", "lab-13b", "lab-moe"])
def test_a_layers_matrices_hold_the_models_weights(model: str) -> None:
    m = MODELS[model]
    kernels = layer_kernels(m, "decode", batch=1, context=1)
    # M = 1: a GEMM's FLOPs are 2·K·N, twice its weights; a mixture's MLP kernels are one expert's.
    weights = sum(k.flops / 2 * ((m.experts or 1) if k.label.startswith("MLP") else 1)
                  for k in kernels if k.kind == "gemm")
    total = m.layers * weights + m.embedding_params
    assert total == pytest.approx(m.params, rel=2e-3)  # norms are the rest


@pytest.mark.parametrize("batch", [1, 8, 64, 512])
def test_decode_attention_intensity_is_the_group_size_whatever_the_batch(batch: int) -> None:
    for model, group in ((M13, 1), (M70, 8)):
        attention = next(k for k in layer_kernels(model, "decode", batch=batch, context=8192)
                         if k.kind == "decode-attention")
        assert attention.intensity_flop_per_byte == pytest.approx(group, rel=0.02)  # bf16: ≈ H/KV FLOP/byte


def test_decode_matmuls_gain_intensity_with_the_batch_and_weight_bytes_shrink() -> None:
    qkv = [next(k for k in layer_kernels(M70, "decode", batch=b, context=1) if k.label == "QKV projection")
           for b in (1, 64)]
    assert qkv[1].intensity_flop_per_byte > 50 * qkv[0].intensity_flop_per_byte
    quantized = next(k for k in layer_kernels(M70, "decode", weights_dtype="fp8") if k.label == "QKV projection")
    assert quantized.dtype == "bf16" and quantized.storage_dtype == "fp8"
    assert quantized.bytes_moved == pytest.approx(qkv[0].bytes_moved / 2, rel=1e-3)


def test_prefill_layer_attends_every_prompt_token() -> None:
    kernels = layer_kernels(M70, "prefill", batch=2, context=2048)
    attention = next(k for k in kernels if k.kind == "attention-kv")
    assert attention.spec == "attention-kv:2x64x8x2048x2048x128:bf16"
    assert next(k for k in kernels if k.label == "QKV projection").spec == "gemm:4096x10240x8192:bf16"


def test_moe_layer_has_a_router_and_spreads_tokens_over_experts() -> None:
    labels = [k.label for k in layer_kernels(MOE, "decode", batch=64)]
    assert "Router" in labels and "MLP gate and up, one of 8 experts" in labels
    up = next(k for k in layer_kernels(MOE, "decode", batch=64) if k.label.startswith("MLP gate"))
    assert up.spec.startswith("gemm:16x")  # 64 tokens × 2 experts ÷ 8 experts


# --- one line for every bad input --------------------------------------------------------------------


BAD = [
    ({"batch": 0}, "'batch' must be a whole number from 1 to 1048576: 0"),
    ({"context": "lots"}, "'context' must be a whole number from 1 to 16777216: 'lots'"),
    ({"model": "lab-7b"},
     "'model': unknown model 'lab-7b' (did you mean 'lab-70b'? known: lab-13b, lab-70b, lab-moe, lab-mqa)"),
    ({"preset": "lab-cpu"},
     "'preset': unknown preset 'lab-cpu' (did you mean 'lab-tpu'? known: lab-gpu, lab-nocap, lab-tpu)"),
    ({"weights_dtype": "int3"}, "'weights_dtype' must be one of fp64, fp32, tf32, fp16, bf16, fp8, fp4, int8, int4"),
    ({"kv_dtype": "fp6"}, "'kv_dtype' must be one of"),
    ({"compute_dtype": "int4"}, "'compute_dtype' must be one of fp64, tf32, fp16, bf16, fp8, fp4, int8: 'int4'"),
    ({"compute_dtype": "fp8", "weights_dtype": "fp8", "preset": "lab-nocap"},
     "'compute_dtype' fp8: preset lab-nocap has no FP8 tensor path (its peaks: "),
    ({"compute_dtype": "fp8", "weights_dtype": "fp8", "preset": "lab-tpu"},
     "'compute_dtype' fp8: preset lab-tpu does not give its FP8 tensor rate in "),
    ({"compute_dtype": "fp8"}, "'compute_dtype' fp8 is narrower than the bf16 weights"),
    ({"tp": 3, "link": "lab-link"}, "'tp' 3 does not divide the 64 attention heads of lab-70b"),
    ({"tp": 2, "preset": "lab-nocap", "model": "lab-13b"},
     "'link': tensor parallelism needs a link preset to time its all-reduces, and preset lab-nocap names no node"),
    ({"tp": 2, "link": "nvlink-9"}, "'link': unknown link 'nvlink-9' (known: lab-link, lab-slow)"),
    ({"tp": 2048, "link": "lab-link"}, "'tp' must be a whole number from 1 to 1024: 2048"),
    ({"speed": 3}, "unknown key 'speed'"),
]


@pytest.mark.parametrize(("fields", "expected"), BAD)
def test_each_bad_field_is_one_line(fields: dict, expected: str) -> None:
    with pytest.raises(InputError) as caught:
        setup(**fields)
    message = str(caught.value)
    assert expected in message and "\n" not in message


def test_field_errors_name_their_field() -> None:
    with pytest.raises(FieldError) as caught:
        setup(compute_dtype="fp8")
    assert caught.value.field == "compute_dtype"


def _cli(capsys: pytest.CaptureFixture[str], *flags: str) -> tuple[int, str, str]:
    code = main(["--presets-dir", str(FIXTURES), "inference", *flags])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(("flags", "expected"), [
    (["--model", "lab-70b", "--preset", "lab-gpu", "--tp", "3", "--link", "lab-link"],
     "ainotes inference: --tp 3 does not divide the 64 attention heads of lab-70b"),
    (["--model", "lab-70b", "--preset", "lab-nocap", "--compute-dtype", "fp8", "--weights-dtype", "fp8"],
     "ainotes inference: --compute-dtype fp8: preset lab-nocap has no FP8 tensor path (its peaks: "),
    (["--model", "lab-70b", "--preset", "lab-gpu", "--weights-dtype", "int3"],
     "ainotes inference: --weights-dtype must be one of"),
    (["--model", "lab-70b", "--preset", "lab-gpu", "--batch", "0"], "argument --batch: must be a whole number"),
    (["--model", "lab-13b", "--preset", "lab-nocap", "--tp", "2"],
     "ainotes inference: --link: tensor parallelism needs a link preset"),
    (["--model", "lab-7b", "--preset", "lab-gpu"], "ainotes inference: --model: unknown model 'lab-7b'"),
    (["--preset", "lab-gpu"], "the following arguments are required: --model"),
])
def test_cli_errors_are_one_line_and_exit_2(capsys: pytest.CaptureFixture[str], flags: list[str],
                                            expected: str) -> None:
    code, out, err = _cli(capsys, *flags)
    assert code == 2 and out == ""
    assert expected in err and err.count("\n") == 1


def test_cli_without_a_capacity_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _cli(capsys, "--model", "lab-13b", "--preset", "lab-nocap", "--json")
    assert code == 0 and json.loads(out)["max_batch"] is None
    code, out, _ = _cli(capsys, "--model", "lab-13b", "--preset", "lab-nocap")
    assert code == 0 and "gives no memory capacity" in out


def test_cli_defaults_and_text(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _cli(capsys, "--model", "lab-70b", "--preset", "lab-gpu", "--json")
    record = json.loads(out)
    assert code == 0
    assert (record["batch"], record["context"], record["tp"], record["weights_dtype"], record["kv_dtype"],
            record["compute_dtype"]) == (1, 1, 1, "bf16", "bf16", "bf16")
    assert record["decode_bound"] == "memory" and record["max_batch"] == 0
    code, out, _ = _cli(capsys, "--model", "lab-70b", "--preset", "lab-gpu", "--tp", "8", "--link", "lab-link",
                        "--batch", "64", "--context", "8192")
    assert code == 0
    assert "327,680 bytes (320 KiB)" in out and "B_crit: 295.3" in out and "all-reduces" in out


# --- the inline forms ----------------------------------------------------------------------------------


def form(body: str) -> str:
    from ainotes.inline import figures

    return figures.evaluate(body, PRESETS, lambda: LINKS, lambda: MODELS)


@pytest.mark.parametrize(("body", "expected"), [
    ("kv-cache lab-70b", "327,680 bytes"),
    ("kv-cache lab-70b KiB", "320 KiB"),
    ("kv-cache lab-70b kv=fp8 KiB", "160 KiB"),
    ("kv-cache lab-13b tokens=8192 GB digits=2", "6.7 GB"),
    ("b-crit lab-gpu", "295"),
    ("b-crit lab-gpu weights=fp8", "148"),
    ("b-crit lab-tpu", "240"),
    ("weight-bytes lab-70b GB", "141 GB"),
    ("decode-step lab-70b lab-gpu batch=400 context=1 tp=2 link=lab-link part=bound", "compute-bound"),
    ("decode-step lab-70b lab-gpu batch=1 context=1 tp=2 link=lab-link part=bound", "memory-bound"),
    ("prefill lab-13b lab-gpu prompt=8192 part=bound", "compute-bound"),
    ("prefill lab-13b lab-gpu prompt=16 part=bound", "memory-bound"),
])
def test_forms_print_the_published_numbers(body: str, expected: str) -> None:
    assert form(body) == expected


def test_forms_agree_with_the_core() -> None:
    one = setup(model="lab-13b", batch=32, context=4096)
    assert form("max-batch lab-13b lab-gpu context=4096") == f"{setup(model='lab-13b', context=4096).max_batch:,}"
    seconds = one.decode_step().time_s
    assert form("decode-step lab-13b lab-gpu batch=32 context=4096 digits=6") == f"{seconds * 1e3:.6g} ms"
    rate = one.decode_step().tokens_per_s
    assert form("decode-step lab-13b lab-gpu batch=32 context=4096 part=tokens-per-second") == f"{rate:,.0f} tokens/s"
    assert form("b-crit lab-gpu model=lab-moe") == f"{compute_bound_batch(MOE, GPU):,.0f}"


@pytest.mark.parametrize(("body", "message"), [
    ("kv-cache", "'kv-cache' needs MODEL or a unit"),
    ("kv-cache lab-70b parsecs", "'kv-cache' needs MODEL or a unit (bytes, kB, MB, GB, TB, KiB, MiB, GiB): "
                                 "'lab-70b parsecs'"),
    ("kv-cache lab-7b", "'kv-cache': unknown model 'lab-7b'"),
    ("kv-cache lab-70b kv=fp6", "'kv-cache': kv= must be one of"),
    ("kv-cache lab-70b token=3", "'kv-cache' does not take token= (allowed: kv=, tokens=, digits=)"),
    ("kv-cache lab-70b digits=9", "digits= must be a whole number from 1 to 6: '9'"),
    ("decode-step lab-70b lab-gpu batch=8", "'decode-step' needs context="),
    ("decode-step lab-70b lab-gpu batch=8 context=8 part=speed", "part= must be one of time, tokens-per-second"),
    ("decode-step lab-70b lab-gpu batch=0 context=8", "'decode-step': batch= must be a whole number from 1"),
    ("decode-step lab-13b lab-nocap batch=8 context=8 tp=2", "'decode-step': link=: tensor parallelism needs"),
    ("decode-step lab-70b lab-nocap batch=8 context=8 compute=fp8 weights=fp8",
     "'decode-step': compute= fp8: preset lab-nocap has no FP8 tensor path (its peaks: "),
    ("b-crit lab-nocap compute=fp8", "'b-crit': compute= fp8: preset lab-nocap has no FP8 tensor path"),
    ("b-crit lab-cpu", "'b-crit': unknown preset 'lab-cpu'"),
    ("max-batch lab-13b lab-nocap context=8", "'max-batch': preset lab-nocap gives no memory capacity"),
    ("max-batch lab-13b lab-gpu", "'max-batch' needs context="),
    ("prefill lab-13b lab-gpu", "'prefill' needs prompt="),
    ("weight-bytes lab-70b tp=3", "'weight-bytes': tp= 3 does not divide the 64 attention heads"),
])
def test_form_errors_are_one_line(body: str, message: str) -> None:
    with pytest.raises(InputError) as caught:
        form(body)
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_a_form_error_names_the_page_and_line(tmp_path: Path) -> None:
    from ainotes.build.site import NotesSite
    from ainotes.markdown.extension import convert_page

    with pytest.raises(InputError, match=r"^serve\.md:3: 'max-batch': preset lab-nocap gives no memory capacity"):
        convert_page(NotesSite(FIXTURES), "# T\n\nIt fits {{ max-batch lab-13b lab-nocap context=8 }}.\n",
                     "serve.md", "serve/")
