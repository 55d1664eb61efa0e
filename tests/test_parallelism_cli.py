"""``ainotes parallel``: the contract's JSON, the published figures from the fixtures' own inputs, the
search, and one line (exit 2) for every bad flag. Fixtures: tests/fixtures/parallel."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ainotes.cli import main
from ainotes.core.parallel_step import step
from ainotes.core.parallelism import ParallelRun
from ainotes.presets.gpus import load_presets
from ainotes.presets.links import load_links
from ainotes.presets.models import load_models

FIXTURES = Path(__file__).parent / "fixtures" / "parallel"
SHIPPED = Path(__file__).resolve().parent.parent / "presets"
ISSUE = ["--model", "lab-70b", "--preset", "lab-h100", "--gpus", "1024", "--tp", "8", "--pp", "8",
         "--micro-batches", "32"]


def cli(capsys: pytest.CaptureFixture[str], *argv: str, presets: Path = FIXTURES) -> tuple[int, str, str]:
    code = main(["parallel", "--presets-dir", str(presets), *argv])
    out, err = capsys.readouterr()
    return code, out, err


def as_json(capsys: pytest.CaptureFixture[str], *argv: str, presets: Path = FIXTURES) -> Any:
    code, out, err = cli(capsys, *argv, "--json", presets=presets)
    assert code == 0, err
    return json.loads(out)


def test_the_issues_layout_in_text(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(capsys, *ISSUE)
    assert code == 0
    assert "dp 16 · tp 8 · pp 8" in out and "2,097,152 tokens" in out
    assert "activation all-reduce" in out and "67.11 MB" in out and "1,280" in out
    assert "bubble 17.9% of the pipeline" in out and "fits" in out


def test_the_json_carries_megatrons_tp_all_reduces_and_the_bubble(capsys: pytest.CaptureFixture[str]) -> None:
    one = as_json(capsys, "--model", "lab-70b", "--preset", "lab-h100", "--gpus", "8", "--tp", "8")
    (tp,) = [c for c in one["collectives"] if c["parallelism"] == "tp"]
    assert (tp["bytes"], tp["count_per_step"], tp["op"], tp["link"]) == (67_108_864, 320, "all-reduce", "lab-nvlink")
    assert tp["algorithm"] in ("ring", "rabenseifner", "binomial-tree", "double-binary-tree")
    issue = as_json(capsys, *ISSUE)
    assert round(issue["bubble_fraction"], 3) == 0.179
    assert issue["layout"] == {"dp": 16, "tp": 8, "pp": 8, "ep": 1, "cp": 1, "zero": 0, "micro_batches": 32,
                               "interleave": 1}
    assert issue["step_s"] == pytest.approx(issue["compute_s"] + issue["bubble_s"] + issue["exposed_comm_s"])


def test_zero_3_in_json_sends_three_messages_of_two_psi(capsys: pytest.CaptureFixture[str]) -> None:
    base = as_json(capsys, "--model", "lab-70b", "--preset", "lab-h100", "--gpus", "64", "--tp", "8")
    sharded = as_json(capsys, "--model", "lab-70b", "--preset", "lab-h100", "--gpus", "64", "--tp", "8", "--zero", "3")
    dp0 = [c for c in base["collectives"] if c["parallelism"] == "dp"]
    dp3 = [c for c in sharded["collectives"] if c["parallelism"] == "dp"]
    assert len(dp0) == 1 and len(dp3) == 3 and all(c["bytes"] == pytest.approx(dp0[0]["bytes"]) for c in dp3)
    assert sum(c["time_s"] for c in dp3) / dp0[0]["time_s"] == pytest.approx(1.5, rel=0.01)


def test_the_search_lists_layouts_that_fit_fastest_first(capsys: pytest.CaptureFixture[str]) -> None:
    found = as_json(capsys, *ISSUE, "--search")["layouts"]
    assert found and all(layout["fits"] for layout in found)
    steps = [layout["step_s"] for layout in found]
    assert steps == sorted(steps)
    assert all(b["layout"]["dp"] * b["layout"]["tp"] * b["layout"]["pp"] * b["layout"]["cp"] == 1024 for b in found)
    code, out, _ = cli(capsys, *ISSUE, "--search")
    assert code == 0 and "fit, fastest first" in out


def test_a_tpu_is_timed_on_its_own_ici(capsys: pytest.CaptureFixture[str]) -> None:
    tpu = as_json(capsys, "--model", "lab-70b", "--preset", "book-v5p", "--gpus", "64", "--tp", "4", "--zero", "3")
    assert {c["link"] for c in tpu["collectives"]} == {"book-ici"}


@pytest.mark.parametrize(("argv", "message"), [
    (["--dp", "8"], "--dp 8 × --tp 8 × --pp 8 × --cp 1 = 512 chips, not --gpus 1024"),
    (["--tp", "3"], "--tp 3 × --pp 8 × --cp 1 = 24 does not divide --gpus 1024"),
    (["--gpus", "48", "--tp", "3", "--pp", "2"], "--tp 3 does not divide the 64 attention heads of lab-70b"),
    (["--ep", "2"], "--ep 2 needs a mixture of experts; lab-70b is dense"),
    (["--global-batch-tokens", "2097152", "--micro-batches", "64"], "--micro-batches 64 is more than the batch "
     "allows: --global-batch-tokens 2,097,152 over --dp 16"),
    (["--zero", "5"], "--zero must be a whole number from 0 to 3: 5"),
    (["--recompute", "most"], "--recompute must be one of none, selective, full: 'most'"),
    (["--link-inter", "nvlink-9"], "--link-inter: unknown link 'nvlink-9'"),
    (["--model", "llama-9"], "--model: unknown model 'llama-9'"),
    (["--preset", "lab-loner"], "--link-intra and --link-inter are needed: preset lab-loner"),
    (["--gpus", "0"], "--gpus"),
])
def test_a_bad_flag_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str], argv: list[str], message: str) -> None:
    args = list(ISSUE)
    for flag, value in zip(argv[::2], argv[1::2], strict=True):
        if flag in args:
            args[args.index(flag) + 1] = value
        else:
            args += [flag, value]
    code, out, err = cli(capsys, *args)
    assert code == 2 and out == ""
    assert err.startswith("ainotes parallel") and "Traceback" not in err
    assert message in err and err.count("\n") == 1


def test_no_shipped_preset_is_timed_over_a_link_it_does_not_have() -> None:
    """Whatever presets ship: a two-chip tensor-parallel group is timed on the preset's own node link,
    and a data-parallel group across two nodes on its own inter-node link."""
    links = {link.id: link for link in load_links(SHIPPED / "links")}
    models = {m.id: m for m in load_models(FIXTURES / "models")}
    for preset in load_presets(SHIPPED):
        if preset.node is None:
            continue
        assert {preset.node.link_id, preset.node.inter_node_link_id} <= set(links), preset.id
        chips = max(2, preset.node.chips) * 2
        layout = ParallelRun.from_fields({"model": "lab-70b", "preset": preset.id, "gpus": chips, "tp": 2},
                                         models=models, presets={preset.id: preset}, links=links)
        by_kind = {c.parallelism: c.link for c in step(layout).collectives}
        tp_link = preset.node.link_id if preset.node.chips >= 2 else preset.node.inter_node_link_id
        assert by_kind["tp"] == tp_link, preset.id
        assert by_kind["dp"] == preset.node.inter_node_link_id, preset.id  # dp reaches the second node
