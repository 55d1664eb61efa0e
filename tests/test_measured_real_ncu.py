"""Real ``ncu --csv`` captures from a public repository (tests/fixtures/measured/SOURCES.md), each read
against a hand reading of its rows: ncu 2021.2's long form with rule columns that only the rule rows
fill (metric rows stop after their value), a rule description that runs over two lines, no
``gpu__time_duration.sum`` (the time is elapsed SM cycles ÷ cycles per second), and an A100's
``HFMA2.MMA`` instructions counted on the tensor pipe by kernels that do no matrix work.

The attention runs are ``multihead_atten.py`` of that repository, GPT-2's case: 12 heads of 64, batch
2, sequence 32, so each projection multiplies 64 tokens by 768 × 768 (fused 768 × 2304 in FlashMHA)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ainotes.measurements.read import read_measured
from ainotes.measurements.source import MeasuredFileError

NCU = Path(__file__).parent / "fixtures" / "measured" / "ncu"
TOKENS, EMBED = 2 * 32, 12 * 64  # batch × sequence, heads × head size


def _launch(run, launch_id: str) -> dict:
    return run.kernels.set_index("id").loc[launch_id].to_dict()


def test_fp32_attention_reads_every_launch_of_the_rule_column_layout() -> None:
    run = read_measured(NCU / "a100-gpt2-mha-fp32-launches.csv")
    assert run.layout == "details"
    assert list(run.kernels["id"]) == ["6", "7", "18", "19", "20"]
    assert list(run.kernels["name"].str[:23]) == ["ampere_sgemm_128x32_tn", "void splitKreduce_kerne",
                                                  "ampere_sgemm_128x128_tn", "void <unnamed>::softmax",
                                                  "ampere_sgemm_128x128_nn"]


def test_fp32_projection_gemm_by_hand() -> None:
    sgemm = _launch(read_measured(NCU / "a100-gpt2-mha-fp32-launches.csv"), "6")
    # Rows of launch 6: ffma "37,748,736", fmul "589,824", every other FLOP counter "0",
    # dram__bytes.sum "2,556,672" byte, sm__cycles_elapsed.avg "18,179.96" cycle at "1,044,345,298.88" cycle/second.
    assert sgemm["flops"] == 2 * 37_748_736 + 589_824
    assert TOKENS * EMBED * EMBED == 37_748_736  # one FMA per multiply-add of the 64 × 768 × 768 product
    assert sgemm["dram_bytes"] == 2_556_672
    assert sgemm["duration_s"] == pytest.approx(18_179.96 / 1_044_345_298.88)  # 17.41 µs
    assert sgemm["duration_s"] == pytest.approx(17.408e-6, rel=1e-4)
    assert sgemm["flops_per_s"] == pytest.approx(76_087_296 / 17.408e-6, rel=1e-4)
    assert sgemm["intensity"] == pytest.approx(76_087_296 / 2_556_672)
    assert not sgemm["tensor_flops_assumed"]


def test_hfma2_mma_on_the_tensor_pipe_is_not_matrix_work() -> None:
    run = read_measured(NCU / "a100-gpt2-mha-fp32-launches.csv")
    reduce = _launch(run, "7")
    # Launch 7 (split-K reduction): sm__inst_executed_pipe_tensor.sum "6,144" and hfma "196,608" (= 32 × 6,144);
    # fadd "589,824", fmul "49,152". Its FLOPs are the vector ones only, none assumed from the tensor pipe.
    assert reduce["tensor_instructions"] == 6_144
    assert reduce["flops"] == 589_824 + 49_152 + 2 * 196_608
    assert not reduce["tensor_flops_assumed"]
    softmax = _launch(run, "19")
    # Launch 19: tensor "384", hfma "12,288"; fadd "196,608", ffma "270,336", fmul "24,576".
    assert softmax["flops"] == 196_608 + 2 * 270_336 + 24_576 + 2 * 12_288
    assert not softmax["tensor_flops_assumed"]


def test_fp16_flash_attention_tensor_instructions_give_the_projection_flops() -> None:
    run = read_measured(NCU / "a100-gpt2-flashmha-fp16-launches.csv")
    qkv = _launch(run, "5")
    # Launch 5 (ampere_fp16_s16816gemm, the fused QKV projection): tensor "55,296", fadd and fmul "294,912" each.
    # At 2·16·8·16 FLOPs an m16n8k16 instruction, 55,296 instructions are 2 × 64 × 768 × 2304 exactly.
    assert qkv["tensor_instructions"] == 55_296 and qkv["tensor_flops_assumed"]
    assert 2 * TOKENS * EMBED * 3 * EMBED == 55_296 * 4096
    assert qkv["flops"] == 55_296 * 4096 + 294_912 + 294_912
    assert qkv["dram_bytes"] == 3_642_496
    assert qkv["duration_s"] == pytest.approx(12_580.52 / 990_280_110.08)
    out = _launch(run, "8")
    # Launch 8 (the CUTLASS output projection): tensor "18,432", ffma "294,912": 2 × 64 × 768 × 768 in the tensor term.
    assert 2 * TOKENS * EMBED * EMBED == 18_432 * 4096
    assert out["flops"] == 18_432 * 4096 + 2 * 294_912
    arange = _launch(run, "6")
    # Launch 6 (arange): one tensor-pipe instruction, hfma "3": an HFMA2.MMA run by three threads, not a matrix.
    assert (arange["tensor_instructions"], arange["flops"], arange["tensor_flops_assumed"]) == (1, 6, False)


def test_a_rule_description_over_two_lines_is_one_cell() -> None:
    text = (NCU / "a100-gpt2-flashmha-fp16-launches.csv").read_text()
    assert '"ERR","float division by zero\n/root/Documents/NVIDIA Nsight Compute/2021.2.0/' in text
    run = read_measured(NCU / "a100-gpt2-flashmha-fp16-launches.csv")
    assert list(run.kernels["id"]) == ["5", "6", "7", "8"]


def test_older_layout_prefers_the_timer_and_agrees_with_the_cycle_count() -> None:
    run = read_measured(NCU / "dropout-fp64-launches.csv")
    first = _launch(run, "0")
    # Launch 0: gpu__time_duration.sum "11,744" nsecond; sm__cycles_elapsed.avg "12,288.78" at "1,046,387,753.56"
    # cycle/second (11.744 µs as well); dfma "655,360", dmul "1,048,576", ffma "524,288"; dram "4,194,688" byte.
    assert first["duration_s"] == pytest.approx(11_744e-9)
    assert first["duration_s"] == pytest.approx(12_288.78 / 1_046_387_753.56, rel=1e-3)
    assert first["flops"] == 2 * 655_360 + 1_048_576 + 2 * 524_288
    assert first["dram_bytes"] == 4_194_688
    last = _launch(run, "29")
    # Launch 29: "25,856" nsecond; dfma "1,105,920", dmul "4,194,304", ffma "2,097,152"; dram "18,445,056" byte.
    assert last["duration_s"] == pytest.approx(25_856e-9)
    assert last["flops"] == 2 * 1_105_920 + 4_194_304 + 2 * 2_097_152
    assert last["dram_bytes"] == 18_445_056


def test_without_a_timer_or_cycle_rate_the_launch_is_named(tmp_path: Path) -> None:
    kept = [line for line in (NCU / "a100-gpt2-mha-fp32-launches.csv").read_text().splitlines()
            if "sm__cycles_elapsed.avg.per_second" not in line]
    path = tmp_path / "no-rate.csv"
    path.write_text("\n".join(kept) + "\n")
    with pytest.raises(MeasuredFileError, match=r"no-rate.csv:\d+: launch 6 \(ampere_sgemm_128x32_tn\) has no "
                                                r"gpu__time_duration.sum \(nor sm__cycles_elapsed.avg"):
        read_measured(path)


def test_a_metric_row_cut_before_its_value_is_one_line(tmp_path: Path) -> None:
    lines = (NCU / "a100-gpt2-mha-fp32-launches.csv").read_text().splitlines()
    cut = lines[3].rsplit('","', 2)[0] + '"'  # drops the unit and the value
    path = tmp_path / "cut.csv"
    path.write_text("\n".join([*lines[:3], cut, *lines[4:]]) + "\n")
    with pytest.raises(MeasuredFileError, match=r"cut.csv:4: a CSV row with 10 cells where the header has 15"):
        read_measured(path)


def test_default_sections_without_counters_are_one_line() -> None:
    """ncu run without --metrics (a 2020 capture on a V100): the rows are the sections' display names
    ("Duration", "SOL FB", "Achieved Occupancy"), with the program's own output and ==PROF== lines before them."""
    path = NCU / "v100-cfd-default-sections.csv"
    with pytest.raises(MeasuredFileError) as caught:
        read_measured(path)
    message = str(caught.value)
    assert message.startswith(f"{path}:13: launch 0 (cuda_compute_step_factor(int,float*,float*,float*)) has only "
                              "ncu's default sections")
    assert "\n" not in message and "--metrics gpu__time_duration.sum,dram__bytes.sum" in message


def test_a_decimal_comma_is_refused_not_read_a_hundred_times_too_large(tmp_path: Path) -> None:
    """No public capture in a decimal-comma locale was found; this rewrites one value of a real file the way
    such a locale would print it ("18.179,96" for "18,179.96"), which a thousands-separator reading makes 1817996."""
    text = (NCU / "a100-gpt2-mha-fp32-launches.csv").read_text()
    assert text.count('"cycle","18,179.96"') == 1
    path = tmp_path / "comma.csv"
    path.write_text(text.replace('"cycle","18,179.96"', '"cycle","18.179,96"'))
    with pytest.raises(MeasuredFileError, match=r"comma.csv:\d+: sm__cycles_elapsed.avg must be a number, not "
                                                r"'18.179,96' \(a decimal comma\?"):
        read_measured(path)


def test_print_summary_per_kernel_reads_the_average_of_each_kernel(tmp_path: Path) -> None:
    """``--print-summary per-kernel`` (no ID column; Minimum, Maximum, Average for the value). A format sample:
    the only public capture found (the ECE382N GPU lab's README, https://github.com/hibagus/ECE382N-GPU-Lab, an
    A100 with ncu 2023.2) elides some columns with "...", so this keeps its visible columns and its numbers."""
    text = "\n".join([
        '"Kernel Name","Invocations","Metric Name","Metric Unit","Minimum","Maximum","Average"',
        '"add_vector","100","dram__bytes.sum","byte","23,989,882,752.00","23,990,681,984.00","23,990,083,863.04"',
        '"add_vector","100","gpu__time_duration.sum","nsecond","17,466,880.00","17,480,032.00","17,473,124.16"',
        '"add_vector","100","sm__sass_thread_inst_executed_op_fp32_pred_on.sum","inst","2,000,000,000.00",'
        '"2,000,000,000.00","2,000,000,000.00"',
        '"scale","3","gpu__time_duration.sum","usecond","1.50","2.50","2.00"',
    ])
    path = tmp_path / "summary.csv"
    path.write_text(text + "\n")
    run = read_measured(path)
    assert run.layout == "summary" and list(run.kernels["id"]) == ["0", "1"]
    add = _launch(run, "0")
    assert add["name"] == "add_vector"
    assert add["duration_s"] == pytest.approx(17_473_124.16e-9)
    assert add["dram_bytes"] == pytest.approx(23_990_083_863.04)
    assert add["flops"] is None  # fp32_pred_on counts FP32 instructions of every kind, not FLOPs
    assert _launch(run, "1")["duration_s"] == pytest.approx(2.0e-6)
