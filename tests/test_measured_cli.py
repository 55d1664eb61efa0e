"""``ainotes measured``: the file as read, α and β fitted to it, the model's error per size, one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ainotes.cli import main

FIXTURES = Path(__file__).parent / "fixtures" / "measured"
PRESETS = Path(__file__).parent / "fixtures" / "presets"


def _json(capsys, *argv):
    assert main(["measured", *map(str, argv), "--presets-dir", str(PRESETS), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_nccl_json_has_the_contract_keys_and_the_rows_as_printed(capsys):
    record = _json(capsys, FIXTURES / "nccl-tests" / "rtx5090-2rank-allreduce-tagged.log")
    assert {"format", "op", "dtype", "ranks", "rows", "avg_busbw_gbps", "fit"} <= record.keys()
    read = (record["format"], record["op"], record["dtype"], record["ranks"])
    assert read == ("nccl-tests", "all-reduce", "float", 2)
    last = record["rows"][-1]
    assert last["bytes"] == 134217728 and last["count"] == 33554432
    assert last["out_of_place"] == {"time_us": 58479.5, "algbw_gbps": 2.30, "busbw_gbps": 2.30, "wrong": 0}
    assert last["in_place"]["time_us"] == 58055.4
    assert record["footer_avg_busbw_gbps"] == 1.57614
    assert "model" not in record  # no link known or given


def test_fit_recovers_the_run_s_bandwidth_and_latency(capsys):
    """Ring all-reduce on 2 ranks: t = 2α + S·β, so at 128 MiB in 58.48 ms β is close to t/S."""
    record = _json(capsys, FIXTURES / "nccl-tests" / "rtx5090-2rank-allreduce-tagged.log")
    fit = record["fit"]
    assert fit["algorithm"] == "ring" and fit["points"] == 8 and fit["times"] == "out_of_place"
    # busbw of the largest sizes is 2.29-2.30 GB/s; for 2 ranks B = busbw at large S.
    assert 2.2 < fit["bandwidth_gbps"] < 3.2
    # The 1 MiB point takes 4.37 ms whatever its size: the socket transport's latency dominates, so α is ms.
    assert 1e-3 < fit["alpha_s"] < 2.5e-3


def test_model_rows_with_a_link_give_error_as_model_over_measured_minus_one(capsys, tmp_path):
    links = tmp_path / "presets" / "links"
    links.mkdir(parents=True)
    (links / "test-link.yaml").write_text("name: Test link\nbandwidth_gbps: 100\nlatency_us: 5\n"
                                          "sources:\n  - {title: test, url: 'https://example.com'}\n")
    for preset in PRESETS.glob("*.yaml"):
        (tmp_path / "presets" / preset.name).write_text(preset.read_text())
    assert main(["measured", str(FIXTURES / "nccl-tests" / "gb200-nvl72-allreduce-partial.txt"), "--presets-dir",
                 str(tmp_path / "presets"), "--link", "test-link", "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    model = record["model"]
    assert model["link"] == "test-link" and model["bandwidth_gbps"] == 100
    first = model["rows"][0]
    assert first["bytes"] == 536870912 and first["measured_s"] == pytest.approx(1806.7e-6)
    # Ring all-reduce at 72 ranks: 2·71·α + 2·71/72·S/B is the best algorithm at 512 MiB on this link.
    ring = 2 * 71 * 5e-6 + 2 * 71 / 72 * 536870912 / 100e9
    assert first["algorithm"] in ("ring", "double-binary-tree")
    assert first["time_s"] <= ring * (1 + 1e-9)
    assert first["error"] == pytest.approx(first["time_s"] / first["measured_s"] - 1)


def test_human_table_prints_the_same_numbers(capsys):
    assert main(["measured", str(FIXTURES / "nccl-tests" / "v100-broadcast-root-error-na.txt")]) == 0
    out = capsys.readouterr().out
    assert "broadcast of float on 2 ranks" in out and "45.82" in out and "38.17" in out
    assert "NCCL_ALGO=Ring" in out


def test_ncu_with_a_preset_gives_the_fraction_of_its_roof(capsys):
    record = _json(capsys, FIXTURES / "ncu" / "gemm-details.csv", "--preset", "a100")
    sgemm = record["kernels"][0]
    assert record["format"] == "ncu" and {"name", "flops", "dram_bytes", "duration_s", "flops_per_s",
                                          "intensity"} <= sgemm.keys()
    assert sgemm["fraction_of_roof"] == pytest.approx(sgemm["flops_per_s"] / sgemm["roof_flops_per_s"])
    assert sgemm["above_roof"] is (sgemm["fraction_of_roof"] > 1.02)


def test_kineto_json(capsys):
    record = _json(capsys, FIXTURES / "kineto" / "hta-nccl-2rank.pt.trace.json.gz")
    assert record["format"] == "kineto" and len(record["collectives"]) == 21 and record["kernels"]
    assert record["collectives"][0]["op"] == "all-reduce" and record["collectives"][0]["group_size"] == 2


@pytest.mark.parametrize(("argv", "words"), [
    (["no-such-file.log"], "no-such-file.log: no such file"),
    ([str(FIXTURES / "nccl-tests" / "v100-two-runs-interleaved.txt")], "rank 0 is listed twice"),
    ([str(FIXTURES / "nccl-tests" / "rtx5090-2rank-allreduce-tagged.log"), "--link", "nope"], "--link"),
    ([str(FIXTURES / "nccl-tests" / "rtx5090-2rank-allreduce-tagged.log"), "--ranks", "4"], "--ranks 4"),
    ([str(FIXTURES / "ncu" / "gemm-raw.csv"), "--preset", "nope"], "--preset"),
])
def test_mistakes_are_one_line_and_exit_2(capsys, argv, words):
    assert main(["measured", *argv, "--presets-dir", str(PRESETS)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and words in err and "Traceback" not in err


def test_a_gpu_preset_gives_its_node_link(capsys, tmp_path):
    """Without --link, --preset's node names the link: its NVLink for ranks inside one node."""
    presets = tmp_path / "presets"
    (presets / "links").mkdir(parents=True)
    for link in (PRESETS / "links").glob("*.yaml"):
        (presets / "links" / link.name).write_text(link.read_text())
    (presets / "gpu.yaml").write_text((PRESETS / "h100.yaml").read_text().split("\nnode:")[0]
                                      + "\nnode: {chips: 8, link: nvlink-4, inter_node_link: ib-ndr}\n")
    assert main(["measured", str(FIXTURES / "nccl-tests" / "rtx5090-2rank-allreduce-tagged.log"), "--presets-dir",
                 str(presets), "--preset", "gpu", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["model"]["link"] == "nvlink-4"


def test_a_print_summary_csv_counts_kernels_not_launches(capsys, tmp_path):
    """``--print-summary per-kernel``: one row per kernel, its values the average over its launches (the layout of
    the ECE382N GPU lab's README capture, https://github.com/hibagus/ECE382N-GPU-Lab; its visible columns)."""
    path = tmp_path / "summary.csv"
    path.write_text("\n".join([
        '"Kernel Name","Invocations","Metric Name","Metric Unit","Minimum","Maximum","Average"',
        '"add_vector","100","dram__bytes.sum","byte","23,989,882,752.00","23,990,681,984.00","23,990,083,863.04"',
        '"add_vector","100","gpu__time_duration.sum","nsecond","17,466,880.00","17,480,032.00","17,473,124.16"',
        '"scale","3","gpu__time_duration.sum","usecond","1.50","2.50","2.00"',
    ]) + "\n")
    assert main(["measured", str(path)]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first == f"{path}: Nsight Compute (summary page), 2 kernels, each averaged over its launches"
    assert main(["measured", str(FIXTURES / "ncu" / "gemm-raw.csv")]) == 0
    assert capsys.readouterr().out.splitlines()[0].endswith("(raw page), 2 launches")
