"""Today's architectures in the presets: latent attention, shared experts and dense first layers, sliding
windows, per-projection biases, and what each changes in the counts, the KV cache, decode and prefill.

The models are frozen copies in tests/fixtures/architectures (the shipped files may change); the GPU is
the H100 figures the inference page uses. Figures are the papers' and configs' own (FACTS.md, fourth round,
"Architectures the presets must describe").
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import yaml

from ainotes.base.errors import InputError
from ainotes.core.inference import InferenceSetup, kv_bytes_per_token, kv_cache_bytes
from ainotes.core.models import count_params
from ainotes.presets.gpus import load_presets
from ainotes.presets.links import load_links
from ainotes.presets.models import load_model, load_models

FIXTURES = Path(__file__).parent / "fixtures" / "architectures"
MODELS = {m.id: m for m in load_models(FIXTURES / "models")}
H100 = {p.id: p for p in load_presets(FIXTURES)}["page-h100"]
LINK = {link.id: link for link in load_links(Path(__file__).parent / "fixtures" / "inference" / "links")}["lab-link"]
DEEPSEEK, GEMMA, QWEN = MODELS["deepseek-v3"], MODELS["gemma-2-27b"], MODELS["qwen2.5-72b"]


# --- counts against the published ones --------------------------------------------------------


def test_deepseek_v3_counts_671_b_and_36_6_b_active() -> None:
    # 671 B without the multi-token-prediction module; DeepSeek's README_WEIGHTS.md counts 36.6 B activated,
    # the output head included and the input embedding (a lookup) not.
    assert round(DEEPSEEK.params / 1e9) == 671
    assert round(DEEPSEEK.active_params_as_published / 1e9, 1) == 36.6
    assert DEEPSEEK.active_params - DEEPSEEK.active_params_as_published == 129_280 * 7_168


def test_gemma_2_27b_counts_the_papers_parameters() -> None:
    # Table 2: 1,179,648,000 embedding + 26,047,480,320 non-embedding; the count keeps two of the four
    # norms each layer has, 2·46·4,608 short.
    assert GEMMA.params == 1_179_648_000 + 26_047_480_320 - 2 * 46 * 4_608


@pytest.mark.parametrize(("model_id", "published"), [("qwen2.5-72b", 72.7e9), ("mixtral-8x22b", 141e9)])
def test_the_published_totals(model_id: str, published: float) -> None:
    assert abs(MODELS[model_id].params / published - 1) < 0.01


def test_mixtral_8x22b_uses_39_b_per_token() -> None:
    assert round(MODELS["mixtral-8x22b"].active_params / 1e9) == 39


def test_qwen_biases_sit_on_q_k_and_v_only() -> None:
    plain = dataclasses.replace(QWEN, biases=())
    everywhere = dataclasses.replace(QWEN, biases=True)
    assert QWEN.params - plain.params == 80 * (8_192 + 1_024 + 1_024)
    assert everywhere.params > QWEN.params  # output projection, MLP and norms as well


def test_dense_first_layers_and_the_shared_expert_are_counted_at_their_own_widths() -> None:
    without = dataclasses.replace(DEEPSEEK, dense_layers=None, shared_experts=0)
    # three dense layers of d_ff 18,432 replace three MoE layers; the shared expert adds one expert a layer
    dense = 3 * 3 * 7_168 * 18_432
    moe = 3 * 7_168 * 2_048 * (256 + 1) + 7_168 * 256
    assert count_params(DEEPSEEK) - count_params(without) == dense - 3 * (moe - 3 * 7_168 * 2_048) \
        + 58 * 3 * 7_168 * 2_048


# --- the KV cache ---------------------------------------------------------------------------------


def test_deepseek_v3_caches_the_latent_and_the_rope_key() -> None:
    # (512 + 64) elements per token and layer, 61 layers, 2 bytes: 70,272 bytes per token in BF16.
    assert kv_bytes_per_token(DEEPSEEK) == 70_272
    eight = InferenceSetup(DEEPSEEK, H100, tp=8, link=LINK)
    assert eight.kv_bytes_per_token_per_chip == 70_272  # every head reads the latent: no chip holds less


def test_gemma_2_past_its_window_half_its_layers_stop_growing() -> None:
    per_token = 46 * 2 * 16 * 128 * 2  # 376,832 bytes per token below the window
    assert kv_bytes_per_token(GEMMA) == per_token
    assert kv_cache_bytes(GEMMA, 4_096) == 4_096 * per_token
    # 8,192 tokens: the 23 global layers hold all of them, the 23 local ones the last 4,096
    assert kv_cache_bytes(GEMMA, 8_192) == (23 * 8_192 + 23 * 4_096) * 2 * 16 * 128 * 2
    assert kv_cache_bytes(GEMMA, 8_192) == 0.75 * 8_192 * per_token
    long = InferenceSetup(GEMMA, H100, context=32_768)
    assert long.max_batch == int((80e9 - GEMMA.params * 2) // kv_cache_bytes(GEMMA, 32_768))


# --- decode and prefill -------------------------------------------------------------------------


def test_deepseek_v3_at_batch_one_reads_eight_routed_and_the_shared_expert() -> None:
    step = InferenceSetup(DEEPSEEK, H100, batch=1, context=1).decode_step()
    assert step.experts_touched == pytest.approx(8)
    read = (DEEPSEEK.active_params - 129_280 * 7_168 + 7_168) * 2  # a token's weights and its embedding row
    assert step.weights_s == pytest.approx(read / 3.35e12, rel=1e-9)


def test_the_8b_causal_prefill_of_8k_tokens_takes_151_ms() -> None:
    # 2·P·T in the matmuls plus causal attention, T(T+1)/2 query-key pairs a layer: 151 ms on the page's
    # H100 figures (a non-causal count, every query against every key, gave 169 ms).
    fill = InferenceSetup(MODELS["llama-3.1-8b"], H100, context=8_192).prefill()
    assert fill.bound == "compute" and round(fill.time_s * 1e3) == 151


def test_a_windowed_prefill_scores_at_most_the_window() -> None:
    short, long = (InferenceSetup(GEMMA, H100, context=t).prefill() for t in (4_096, 8_192))
    full = dataclasses.replace(GEMMA, sliding_window=None)
    assert long.flops < InferenceSetup(full, H100, context=8_192).prefill().flops
    assert short.flops == InferenceSetup(full, H100, context=4_096).prefill().flops


# --- an author's slips -----------------------------------------------------------------------------


def _write(tmp_path: Path, data: dict) -> Path:
    path = tmp_path / "moe.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def test_a_mixture_of_experts_without_its_active_count_is_refused_at_its_experts_line(tmp_path: Path) -> None:
    data = yaml.safe_load((FIXTURES / "models" / "mixtral-8x22b.yaml").read_text(encoding="utf-8"))
    del data["published_active_params"]
    path = _write(tmp_path, data)
    line = path.read_text(encoding="utf-8").splitlines().index("experts: 8") + 1
    with pytest.raises(InputError) as caught:
        load_model(path)
    message = str(caught.value)
    assert message.startswith(f"{path}:{line}: a mixture of experts needs 'published_active_params'")
    assert "\n" not in message


@pytest.mark.parametrize(("key", "value", "message"), [
    ("mla", {"kv_latent": 512}, "'mla' needs 'rope_head_dim'"),
    ("mla", {"kv_latent": 512, "rope_head_dim": 64, "rank": 3}, "'mla' has no key 'rank'"),
    ("sliding_window", 4096, "'sliding_window' must be a mapping such as {window: N, layers: N}"),
    ("sliding_window", {"window": 4096, "layers": 99}, "'sliding_window.layers' (99) cannot exceed 'layers' (56)"),
    ("biases", ["q", "qkv"], "'biases' must be true, false or a list of the projections"),
    ("dense_layers", {"count": 56, "d_ff": 100}, "'dense_layers.count' (56) must leave some of the 56 layers"),
    ("dropout", "no", "'dropout' must be true or false"),
])
def test_architecture_keys_are_checked_at_their_line(tmp_path: Path, key: str, value: object, message: str) -> None:
    data = yaml.safe_load((FIXTURES / "models" / "mixtral-8x22b.yaml").read_text(encoding="utf-8"))
    data[key] = value
    path = _write(tmp_path, data)
    with pytest.raises(InputError) as caught:
        load_model(path)
    text = str(caught.value)
    assert text.startswith(f"{path}:") and message in text and "\n" not in text
    assert text.split(":")[1].isdigit()  # the line of the key


# --- capacities as the vendor means them ------------------------------------------------------------


def test_a_printed_gb_the_vendor_means_as_gib_holds_2_to_the_30_bytes_each(tmp_path: Path) -> None:
    binary = {p.id: p for p in load_presets(FIXTURES)}["binary-h100"]
    assert binary.memory_capacity_bytes == 80 * 2**30 and binary.memory_capacity_label == "80 GiB (85.9 GB)"
    assert H100.memory_capacity_bytes == 80e9  # the same figure without the unit: decimal, as printed
    # The verdicts compare bytes: a batch that needs 82 GB fits the binary card, not the decimal one.
    assert InferenceSetup(MODELS["llama-3.1-8b"], binary, context=8_192).max_batch > \
        InferenceSetup(MODELS["llama-3.1-8b"], H100, context=8_192).max_batch
    text = (FIXTURES / "binary-h100.yaml").read_text(encoding="utf-8")
    (tmp_path / "odd.yaml").write_text(text.replace("memory_capacity_gb: 80\n", "memory_capacity_gib: 80\n"),
                                       encoding="utf-8")
    with pytest.raises(InputError, match=r"odd\.yaml:[0-9]+: 'memory_capacity_unit' says what the 'GB' of "):
        load_presets(tmp_path)
