"""Training memory as the model was trained and as recomputation runs: a model preset's ``dropout`` decides
whether Korthikanti et al.'s dropout masks are stored, and the peak with recomputation holds the layer the
backward pass computes again beside the stash.

Models are frozen copies (tests/fixtures/models-chapter/models: Llama 3.1 trained without dropout).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ainotes.core import memory
from ainotes.core.memory import TrainingMemory
from ainotes.presets.models import load_models

MODELS = {m.id: m for m in load_models(Path(__file__).parent / "fixtures" / "models-chapter" / "models")}
L8B, L70B, GPT = MODELS["llama-3.1-8b"], MODELS["llama-3.1-70b"], MODELS["gpt-3-175b"]


def _layer_gb(**fields: object) -> float:
    config = TrainingMemory(model=L70B, micro_batch=1, seq_len=8192, tp=8, sequence_parallel=True, **fields)
    return memory.activation_bytes_per_layer(
        L70B, seq_len=8192, micro_batch=1, tp=8, sequence_parallel=True, dropout=config.with_dropout) / 1e9


def test_a_model_trained_without_dropout_stores_no_masks() -> None:
    # One layer of Llama 3.1 70B at 8,192 tokens, t = 8 with sequence parallelism, scores stored:
    # 2.98 GB with Korthikanti et al.'s masks; as the model was trained, without the two residual masks
    # (h bytes each) and with the softmax output alone for 5·a bytes of scores: 1.35 GB.
    assert L70B.dropout is False
    assert round(_layer_gb(), 2) == 1.35
    assert round(_layer_gb(dropout=True), 2) == 2.98


def test_a_preset_silent_on_dropout_is_counted_as_korthikanti_counts() -> None:
    assert GPT.dropout is None and GPT.trained_with_dropout
    config = TrainingMemory(model=GPT, micro_batch=1, seq_len=2048)
    assert config.with_dropout is True


def test_full_recomputation_peaks_at_the_stash_and_one_layer_computed_again() -> None:
    # Llama 3.1 8B at 4,096 tokens: the stash is each layer's input, 32 · 2·s·h = 1.07 GB; the layer whose
    # backward runs holds its whole set again: 3.29 GB with dropout masks, 1.64 GB as the model was trained.
    shape = {"model": L8B, "micro_batch": 1, "seq_len": 4096, "recompute": "full"}
    with_masks = TrainingMemory(**shape, dropout=True).estimate()  # type: ignore[arg-type]
    stash = with_masks.activations_bytes - with_masks.rematerialized_bytes  # type: ignore[operator]
    assert round(stash / 1e9, 2) == 1.07
    layer_input = 2 * 4096 * 4096  # already in the stash
    assert round((with_masks.rematerialized_bytes + layer_input) / 1e9, 2) == 3.29
    as_trained = TrainingMemory(**shape).estimate()  # type: ignore[arg-type]
    assert round((as_trained.rematerialized_bytes + layer_input) / 1e9, 2) == 1.64
    assert as_trained.total_bytes == pytest.approx(as_trained.model_states_bytes + stash
                                                   + as_trained.rematerialized_bytes)


def test_without_recomputation_nothing_is_computed_again() -> None:
    estimate = TrainingMemory(model=L8B, micro_batch=1, seq_len=4096).estimate()
    assert estimate.rematerialized_bytes == 0
