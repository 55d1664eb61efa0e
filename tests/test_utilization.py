"""MFU and HFU: the PaLM 540B figure, the recomputation models, and bad arguments."""

from __future__ import annotations

import dataclasses
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ainotes.base.errors import InputError
from ainotes.core.utilization import (
    RECOMPUTE_MODES,
    hardware_flops_per_token,
    hfu,
    mfu,
    model_flops_per_token,
    utilization,
)

# PaLM 540B (Chowdhery et al. 2022, Appendix B): 118 layers, 48 heads, head dimension 256,
# sequence 2048, 238.3K tokens/s on 6144 TPU v4 chips of 275 TFLOP/s peak bf16 → 46.2 % MFU.
PALM_ATTENTION = {"layers": 118, "heads": 48, "head_dim": 256, "seq_len": 2048}
PALM_JOB = {"tokens_per_second": 238.3e3, "gpus": 6144, "peak_flops_per_s_per_gpu": 275e12}


@pytest.mark.parametrize("params", [540e9, 540.35e9])
def test_palm_540b_mfu_is_the_published_46_2_percent(params: float) -> None:
    assert f"{mfu(params, **PALM_JOB, **PALM_ATTENTION) * 100:.1f}" == "46.2"


def test_palm_without_the_attention_term_is_lower() -> None:
    # 6N alone leaves out 12·L·H·Q·S ≈ 3.56e10 FLOPs per token (about 1 % of 6N).
    assert mfu(540e9, **PALM_JOB) == pytest.approx(6 * 540e9 * 238.3e3 / (6144 * 275e12))
    assert mfu(540e9, **PALM_JOB) * 100 == pytest.approx(45.70, abs=0.01)


def test_model_flops_per_token() -> None:
    assert model_flops_per_token(7e9) == 42e9
    assert model_flops_per_token(1e9, **PALM_ATTENTION) == 6e9 + 12 * 118 * 48 * 256 * 2048


def test_hardware_flops_per_recompute_mode() -> None:
    n = 1e9
    attention = 12 * 118 * 48 * 256 * 2048
    assert hardware_flops_per_token(n, recompute="none") == 6 * n
    assert hardware_flops_per_token(n, recompute="selective") == 6 * n  # nothing counted to recompute
    assert hardware_flops_per_token(n, recompute="full") == 8 * n  # FACTS: full recomputation ≈ 8N
    assert hardware_flops_per_token(n, recompute="none", **PALM_ATTENTION) == 6 * n + attention
    assert hardware_flops_per_token(n, recompute="selective", **PALM_ATTENTION) == pytest.approx(
        6 * n + attention * 4 / 3
    )
    assert hardware_flops_per_token(n, recompute="full", **PALM_ATTENTION) == pytest.approx(8 * n + attention * 4 / 3)


def test_utilization_result_says_what_each_figure_counts() -> None:
    result = utilization(540e9, **PALM_JOB, **PALM_ATTENTION, recompute="full")
    assert result.mfu == mfu(540e9, **PALM_JOB, **PALM_ATTENTION)
    assert result.hfu == hfu(540e9, **PALM_JOB, **PALM_ATTENTION, recompute="full")
    assert "6N + 12·L·H·Q·S" in result.counts and "8N + 16·L·H·Q·S" in result.counts
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.mfu = 1.0  # type: ignore[misc]


@given(
    params=st.floats(1e6, 1e13),
    tokens=st.floats(1.0, 1e8),
    gpus=st.integers(1, 100_000),
    peak=st.floats(1e12, 1e16),
    attention=st.one_of(st.none(), st.tuples(st.integers(1, 200), st.integers(1, 128), st.integers(1, 512),
                                             st.integers(1, 1 << 20))),
)
def test_mfu_never_exceeds_hfu(params: float, tokens: float, gpus: int, peak: float,
                               attention: tuple[int, int, int, int] | None) -> None:
    figures = dict(zip(("layers", "heads", "head_dim", "seq_len"), attention, strict=True)) if attention else {}
    job = {"tokens_per_second": tokens, "gpus": gpus, "peak_flops_per_s_per_gpu": peak}
    model = mfu(params, **job, **figures)
    for mode in RECOMPUTE_MODES:
        assert model <= hfu(params, **job, **figures, recompute=mode)
    assert hfu(params, **job, **figures, recompute="none") == pytest.approx(model)
    assert hfu(params, **job, **figures, recompute="full") > model


@pytest.mark.parametrize(
    ("given_figures", "missing"),
    [
        ({"layers": 118}, "heads, head_dim, seq_len missing"),
        ({"layers": 1, "heads": 1, "head_dim": 1}, "seq_len missing"),
    ],
)
def test_partial_attention_figures_are_an_error(given_figures: dict[str, int], missing: str) -> None:
    expected = f"the attention term needs all of layers, heads, head_dim, seq_len: .*{missing}"
    with pytest.raises(InputError, match=expected):
        model_flops_per_token(1e9, **given_figures)


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({"params": 0}, "'params' must be a finite number > 0: 0"),
        ({"params": -5e9}, "'params' must be a finite number > 0: -5000000000.0"),
        ({"params": math.nan}, "'params' must be a finite number > 0: nan"),
        ({"params": math.inf}, "'params' must be a finite number > 0: inf"),
        ({"params": True}, "'params' must be a number, not a boolean: True"),
        ({"tokens_per_second": 0.0}, "'tokens_per_second' must be a finite number > 0: 0.0"),
        ({"gpus": 0}, "'gpus' must be >= 1: 0"),
        ({"gpus": 1.5}, "'gpus' must be a whole number: 1.5"),
        ({"peak_flops_per_s_per_gpu": -1.0}, "'peak_flops_per_s_per_gpu' must be a finite number > 0: -1.0"),
        ({"recompute": "partial"}, "'recompute' must be one of none, selective, full: 'partial'"),
        ({"layers": 0, "heads": 1, "head_dim": 1, "seq_len": 1}, "'layers' must be >= 1: 0"),
    ],
)
def test_bad_arguments_name_the_argument_rule_and_value(changes: dict, expected: str) -> None:
    arguments = {"params": 1e9, "tokens_per_second": 1e4, "gpus": 8, "peak_flops_per_s_per_gpu": 1e15} | changes
    params = arguments.pop("params")
    with pytest.raises(InputError) as caught:
        utilization(params, **arguments)
    assert str(caught.value) == expected
