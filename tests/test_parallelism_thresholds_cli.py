"""``ainotes parallel`` reports the Scaling Book's thresholds of its preset and model, in text and in
JSON, from presets holding each source's own inputs (tests/fixtures/parallel): book-v5p (C = 4.59e14,
W_ici = 2 × 9e10 B/s per axis, 3 torus axes), book-h100 (990e12, 450e9 inside a node, 8 × 50e9 across),
book-h800 (300e9); lab-70b is Llama 3.1 70B (F = 28,672), book-f30k the same with the book's F = 30,000."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ainotes.cli import main

FIXTURES = Path(__file__).parent / "fixtures" / "parallel"
# LLaMA-3 70B's 16e6-token batch as a layout: 1,000 chips × 2 micro-batches × 8,000 tokens.
LLAMA_3_BATCH = ["--model", "lab-70b", "--preset", "book-v5p", "--gpus", "1000", "--seq-len", "8000",
                 "--global-batch-tokens", "16000000", "--zero", "3"]
CONTRACT_KEYS = {"layout", "step_s", "compute_s", "bubble_s", "bubble_fraction", "exposed_comm_s", "tokens_per_s",
                 "mfu_ceiling", "memory_bytes_per_gpu", "capacity_bytes", "fits", "collectives"}


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["parallel", "--presets-dir", str(FIXTURES), *argv])
    out, err = capsys.readouterr()
    return code, out, err


def thresholds(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    code, out, err = cli(capsys, *argv, "--json")
    assert code == 0, err
    record = json.loads(out)
    return record["thresholds"]


def test_tpu_v5p_gives_2550_tokens_850_over_three_axes_and_tp_about_11(capsys: pytest.CaptureFixture[str]) -> None:
    found = thresholds(capsys, "--model", "lab-70b", "--preset", "book-v5p", "--gpus", "64", "--tp", "4")
    assert found["dp_tokens_per_chip_in_node"] == pytest.approx(2550)  # 4.59e14 / 1.8e11
    assert found["dp_tokens_per_chip_across_nodes"] == pytest.approx(2550)  # ICI again between hosts
    assert found["dp_tokens_per_chip_all_torus_axes"] == pytest.approx(850)
    assert found["torus_axes"] == 3 and found["link_in_node"] == "book-ici"
    assert found["model_d_ff"] == 28672 and round(found["tp_degree_limit"]) == 11  # F / 2,550 = 11.2
    assert found["moe_experts_over_active"] == 1 and found["training"] is None


def test_the_mixed_fsdp_tp_floor_is_433_5_at_the_books_f(capsys: pytest.CaptureFixture[str]) -> None:
    """2·2550²/30,000 = 433.5; the book prints 432 (the note says so)."""
    found = thresholds(capsys, "--model", "book-f30k", "--preset", "book-v5p", "--gpus", "64", "--tp", "4")
    assert found["fsdp_tp_tokens_per_chip_floor"] == pytest.approx(433.5)
    code, out, _ = cli(capsys, "--model", "book-f30k", "--preset", "book-v5p", "--gpus", "64", "--tp", "4")
    assert code == 0 and "FSDP + TP stays compute-bound above 433.5 tokens per chip" in out


def test_llama_3_70b_takes_18823_v5p_chips_and_about_17_days(capsys: pytest.CaptureFixture[str]) -> None:
    training = thresholds(capsys, *LLAMA_3_BATCH, "--train-tokens", "15e12", "--mfu", "0.5")["training"]
    assert training["training_flops"] == pytest.approx(6.3e24, rel=0.01)  # 6 · 70e9 · 15e12
    assert training["batch_tokens"] == 16_000_000 and training["tokens_per_chip"] == pytest.approx(850)
    assert training["chips"] == 18_823
    assert round(training["days"]) == 17
    code, out, _ = cli(capsys, *LLAMA_3_BATCH, "--train-tokens", "15e12", "--mfu", "0.5")
    assert code == 0
    assert "850 over all 3 torus axes" in out and "18,823 chips" in out and ": 17 days" in out


def test_h100_gives_2200_in_a_node_and_2475_across_h800_3300(capsys: pytest.CaptureFixture[str]) -> None:
    h100 = thresholds(capsys, "--model", "lab-70b", "--preset", "book-h100", "--gpus", "16", "--tp", "8")
    assert h100["dp_tokens_per_chip_in_node"] == pytest.approx(2200)  # 990e12 / 450e9
    assert h100["dp_tokens_per_chip_across_nodes"] == pytest.approx(2475)  # 990e12 / 400e9
    assert h100["dp_tokens_per_chip_all_torus_axes"] is None and h100["torus_axes"] is None
    h800 = thresholds(capsys, "--model", "lab-70b", "--preset", "book-h800", "--gpus", "16", "--tp", "8")
    assert h800["dp_tokens_per_chip_across_nodes"] == pytest.approx(3300)  # 990e12 / 300e9
    code, out, _ = cli(capsys, "--model", "lab-70b", "--preset", "book-h100", "--gpus", "16", "--tp", "8")
    assert code == 0 and "above 2,200 tokens per chip inside a node, 2,475 across nodes" in out
    assert "torus" not in out


def test_a_mixture_of_experts_needs_e_over_k_times_the_batch(capsys: pytest.CaptureFixture[str]) -> None:
    moe = thresholds(capsys, "--model", "lab-moe", "--preset", "book-h100", "--gpus", "16", "--tp", "8")
    assert moe["moe_experts_over_active"] == 4  # Mixtral: 8 experts, 2 active
    assert moe["moe_dp_tokens_per_chip_in_node"] == pytest.approx(8800)
    code, out, _ = cli(capsys, "--model", "lab-moe", "--preset", "book-h100", "--gpus", "16", "--tp", "8")
    assert code == 0 and "E/k = 4, so data parallel needs 8,800 tokens per chip" in out


def test_the_contracts_keys_stay_and_the_search_reports_the_same_thresholds(
        capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--model", "lab-70b", "--preset", "book-h100", "--gpus", "64", "--tp", "8",
            "--train-tokens", "15e12", "--mfu", "0.4"]
    code, out, err = cli(capsys, *argv, "--json")
    assert code == 0, err
    one = json.loads(out)
    assert set(one) == CONTRACT_KEYS | {"thresholds"}
    code, out, err = cli(capsys, *argv, "--search", "--json")
    assert code == 0, err
    found = json.loads(out)
    assert set(found) == {"layouts", "thresholds"} and found["layouts"]
    assert found["thresholds"] == one["thresholds"]
    code, out, _ = cli(capsys, *argv, "--search")
    assert code == 0 and "fit, fastest first" in out and "2,475 across nodes" in out


def test_named_links_move_the_thresholds_with_the_layout(capsys: pytest.CaptureFixture[str]) -> None:
    """The thresholds are those of the links the layout is timed over: --link-intra replaces the node's."""
    found = thresholds(capsys, "--model", "lab-70b", "--preset", "book-h100", "--gpus", "8", "--tp", "8",
                       "--link-intra", "book-h800-link")
    assert found["link_in_node"] == "book-h800-link"
    assert found["dp_tokens_per_chip_in_node"] == pytest.approx(3300)


@pytest.mark.parametrize(("argv", "message"), [
    (["--mfu", "0.5"], "--mfu needs --train-tokens"),
    (["--train-tokens", "15e12"], "--train-tokens needs --mfu"),
    (["--train-tokens", "15e12", "--mfu", "50"], "--mfu must be a fraction from 0 to 1 (40 % is 0.4): '50'"),
    (["--train-tokens", "lots", "--mfu", "0.5"], "--train-tokens must be"),
    (["--train-tokens", "-1", "--mfu", "0.5"], "--train-tokens must be"),
])
def test_a_bad_training_flag_is_one_line(capsys: pytest.CaptureFixture[str], argv: list[str], message: str) -> None:
    code, out, err = cli(capsys, "--model", "lab-70b", "--preset", "book-v5p", "--gpus", "8", *argv)
    assert code == 2 and out == ""
    assert err.startswith("ainotes parallel") and "Traceback" not in err
    assert message in err and err.count("\n") == 1
