"""The measured-file readers: each variant parses to what a reader of the file sees, and broken
files are one line naming the file and line. Fixtures and their sources: tests/fixtures/measured."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from ainotes.measurements.nccl_tests import footer_tolerance_gbps, read_nccl_tests_text
from ainotes.measurements.ncu import FLOPS_PER_TENSOR_INSTRUCTION
from ainotes.measurements.read import read_measured
from ainotes.measurements.source import MeasuredFileError

FIXTURES = Path(__file__).parent / "fixtures" / "measured"
NCCL = FIXTURES / "nccl-tests"


def _row(run, size):
    rows = run.table[run.table["bytes"] == size]
    assert len(rows) == 1, f"one row of {size} bytes"
    return rows.iloc[0]


def test_tagged_mpirun_log_reads_as_printed():
    run = read_measured(NCCL / "rtx5090-2rank-allreduce-tagged.log")
    assert (run.op, run.ranks, run.dtype, run.program) == ("all-reduce", 2, "float", "all_reduce")
    assert run.devices == ("NVIDIA GeForce RTX 5090",)
    assert len(run.table) == 8
    row = _row(run, 33554432)
    assert row["count"] == 8388608 and row["redop"] == "sum" and row["root"] == -1
    assert row["out_of_place_time_us"] == 14977.1 and row["out_of_place_algbw_gbps"] == 2.24
    assert row["in_place_time_us"] == 14863.2 and row["in_place_busbw_gbps"] == 2.26
    assert row["out_of_place_wrong"] == 0 and row["in_place_wrong"] == 0
    assert run.out_of_bounds == 0
    assert run.notes == ()


def test_a_whole_two_node_run_in_a_markdown_file():
    run = read_measured(NCCL / "h100-2node-16rank-allreduce.md")
    assert (run.op, run.ranks, run.devices) == ("all-reduce", 16, ("NVIDIA H100 80GB HBM3",))
    assert len(run.table) == 31 and run.notes == ()
    row = _row(run, 8589934592)
    assert (row["out_of_place_time_us"], row["out_of_place_algbw_gbps"], row["out_of_place_busbw_gbps"]) == (
        47535, 180.71, 338.82)
    assert (row["in_place_time_us"], row["in_place_busbw_gbps"]) == (47743, 337.35)
    assert _row(run, 8)["out_of_place_time_us"] == 135.8


@pytest.mark.parametrize("name", ["rtx5090-2rank-allreduce-tagged.log", "gb200-nvl72-allreduce-partial.txt",
                                  "h100-2node-16rank-allreduce.md",
                                  "h100-8gpu-allgather-per-iter-timestamps.txt", "rtx5090-2rank-allreduce.json"])
def test_footer_average_is_the_mean_of_every_printed_busbw(name):
    """nccl-tests averages busbw over every result line, out-of-place and in-place (common.cu)."""
    run = read_measured(NCCL / name)
    assert run.footer_avg_busbw_gbps is not None
    assert abs(run.avg_busbw_gbps - run.footer_avg_busbw_gbps) <= footer_tolerance_gbps(run)


def test_footer_of_a_file_with_rows_missing_is_noted_not_hidden(tmp_path):
    text = (NCCL / "rtx5090-2rank-allreduce-tagged.log").read_text()
    lines = [line for line in text.splitlines() if "   134217728 " not in line]
    path = tmp_path / "short.log"
    path.write_text("\n".join(lines))
    run = read_measured(path)
    assert len(run.table) == 7
    assert any("not the mean of the rows read" in note and "1.57614" in note for note in run.notes)


def test_partial_paste_takes_ranks_from_the_last_device_line_and_checks_the_bus_factor():
    run = read_measured(NCCL / "gb200-nvl72-allreduce-partial.txt")
    assert (run.op, run.ranks) == ("all-reduce", 72)  # only "Rank 71" is listed; busbw/algbw = 2·71/72
    row = _row(run, 4294967296)
    assert (row["out_of_place_time_us"], row["out_of_place_busbw_gbps"], row["in_place_algbw_gbps"]) == (
        10094, 839.16, 423.54)
    assert any("1 of the 72 ranks" in note for note in run.notes)


def test_old_layout_root_without_redop_error_column_and_na():
    run = read_measured(NCCL / "v100-broadcast-root-error-na.txt")
    assert (run.op, run.ranks, run.nccl_algo) == ("broadcast", 2, "Ring")
    row = _row(run, 8)
    assert row["count"] == 2 and row["root"] == 0 and row["redop"] is None
    assert row["out_of_place_time_us"] == 45.82 and row["in_place_time_us"] == 38.17
    assert row["out_of_place_wrong"] is None and row["in_place_wrong"] is None  # N/A: checking was off
    assert run.devices == ("Tesla V100-PCIE-16GB",)


def test_per_iteration_columns_and_timestamps():
    run = read_measured(NCCL / "h100-8gpu-allgather-per-iter-timestamps.txt")
    assert (run.op, run.ranks) == ("all-gather", 8)
    row = _row(run, 2097152)
    assert row["redop"] == "none" and row["out_of_place_busbw_gbps"] == 75.36
    assert (row["out_of_place_i_min_us"], row["out_of_place_i_p99_us"], row["out_of_place_i_cv_pct"]) == (
        23.90, 26.81, 2.44)
    assert (row["in_place_time_us"], row["in_place_i_max_us"]) == (24.10, 26.02)
    assert row["timestamp"] == "2026-01-12 09:14:03"


def test_json_output_reads_like_the_text():
    run = read_measured(NCCL / "rtx5090-2rank-allreduce.json")
    text = read_measured(NCCL / "rtx5090-2rank-allreduce-tagged.log")
    assert (run.op, run.ranks, run.dtype) == (text.op, text.ranks, text.dtype)
    json_row, text_row = _row(run, 134217728), _row(text, 134217728)
    assert json_row["out_of_place_time_us"] == text_row["out_of_place_time_us"] == 58479.5
    assert round(json_row["in_place_busbw_gbps"], 2) == text_row["in_place_busbw_gbps"] == 2.31


def test_rows_without_a_header_use_the_current_layout_and_ranks_from_the_bus_factor(tmp_path):
    """A paste that starts at the rows: busbw/algbw = 2(n-1)/n gives n for a named all-reduce."""
    rows = [line for line in (NCCL / "gb200-nvl72-allreduce-partial.txt").read_text().splitlines()
            if line.startswith("  ")]
    path = tmp_path / "rows.txt"
    path.write_text("\n".join(rows))
    run = read_measured(path, op="all-reduce")
    assert run.ranks == 72 and run.ranks_from == "busbw ÷ algbw"
    assert len(run.table) == 5


def test_srun_labels_and_midline_rank_tags_are_stripped(tmp_path):
    text = (NCCL / "gb200-nvl72-allreduce-partial.txt").read_text()
    tagged = "\n".join(f"0: {line}" if i % 2 else line.replace("     sum      -1 ", "     sum      -1[0] ")
                       for i, line in enumerate(text.splitlines()))
    path = tmp_path / "tagged.txt"
    path.write_text(tagged)
    assert read_measured(path).table.equals(read_measured(NCCL / "gb200-nvl72-allreduce-partial.txt").table)


@pytest.mark.parametrize(("name", "line", "words"), [
    ("gb10-2node-allreduce-truncated.txt", 16, "cut short"),
    ("v100-two-runs-interleaved.txt", 9, "rank 0 is listed twice"),
])
def test_broken_nccl_files_are_one_line_naming_file_and_line(name, line, words):
    with pytest.raises(MeasuredFileError) as caught:
        read_measured(NCCL / name)
    message = str(caught.value)
    assert message.startswith(f"{NCCL / name}:{line}: ") and words in message and "\n" not in message


def test_two_collectives_in_one_file_is_refused(tmp_path):
    first = (NCCL / "rtx5090-2rank-allreduce-tagged.log").read_text()
    second = first.replace("all_reduce_perf_mpi", "all_gather_perf_mpi")
    path = tmp_path / "mixed.log"
    path.write_text(first + second)
    with pytest.raises(MeasuredFileError, match=r"mixed.log:\d+: a second run starts here, of all_gather_perf"):
        read_measured(path)


def test_two_runs_of_the_same_collective_read_as_one_table(tmp_path):
    text = (NCCL / "rtx5090-2rank-allreduce-tagged.log").read_text()
    path = tmp_path / "twice.log"
    path.write_text(text + text)
    run = read_measured(path)
    assert len(run.table) == 16 and any("2 runs" in note for note in run.notes)


def test_ranks_the_file_contradicts_are_refused():
    with pytest.raises(MeasuredFileError, match="--ranks 16, but the file's device lines list ranks 0 to 1"):
        read_measured(NCCL / "rtx5090-2rank-allreduce-tagged.log", ranks=16)
    with pytest.raises(MeasuredFileError, match=r"busbw ÷ algbw is 1\.972 in the file, but all-reduce on 8 ranks"):
        read_nccl_tests_text("\n".join(line for line in (NCCL / "gb200-nvl72-allreduce-partial.txt").read_text()
                                       .splitlines() if "Rank 71" not in line), "x.txt", op="all-reduce", ranks=8)


@pytest.mark.parametrize(("content", "words"), [
    (b"hello world\nthis is not a log\n", "not nccl-tests output, an ncu --csv file or a PyTorch profiler trace"),
    (b'{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur"', "not valid JSON"),
    (b"\xff\xfe\x00binary", "not UTF-8 text"),
    (gzip.compress(b'{"traceEvents": []}', mtime=0)[:-6], "gzip file that is cut short"),
    (b'{"traceEvents": []}', "without GPU kernel events"),
], ids=["text", "cut-json", "binary", "cut-gzip", "no-kernels"])
def test_files_of_no_known_kind_are_one_line(tmp_path, content, words):
    path = tmp_path / "thing.txt"
    path.write_bytes(content)
    with pytest.raises(MeasuredFileError) as caught:
        read_measured(path)
    assert str(caught.value).startswith(str(path)) and words in str(caught.value)


def test_ncu_long_form_counts_fma_twice_and_scales_units():
    run = read_measured(FIXTURES / "ncu" / "gemm-details.csv")
    sgemm = run.kernels.iloc[0]
    assert sgemm["name"] == "ampere_sgemm_128x64_nn"
    assert sgemm["flops"] == 4_194_304 + 2 * 8_589_934_592 + 4_194_304  # fadd + 2·ffma + fmul, as printed
    assert sgemm["dram_bytes"] == pytest.approx(51.38e6)  # 51.38 Mbyte
    assert sgemm["duration_s"] == pytest.approx(1180.32e-6)  # "1,180.32" usecond
    assert sgemm["intensity"] == pytest.approx(sgemm["flops"] / 51.38e6)
    assert run.kernels.iloc[1]["flops"] == 8_388_608


def test_ncu_raw_page_matches_the_long_form_and_marks_assumed_tensor_flops():
    raw = read_measured(FIXTURES / "ncu" / "gemm-raw.csv")
    details = read_measured(FIXTURES / "ncu" / "gemm-details.csv")
    assert raw.layout == "raw" and details.layout == "details"
    assert raw.kernels.iloc[0]["flops"] == details.kernels.iloc[0]["flops"]
    assert raw.kernels.iloc[0]["duration_s"] == pytest.approx(details.kernels.iloc[0]["duration_s"])
    tensor = raw.kernels.iloc[1]
    assert tensor["flops"] == 2_097_152 * FLOPS_PER_TENSOR_INSTRUCTION and tensor["tensor_flops_assumed"]
    assert not raw.kernels.iloc[0]["tensor_flops_assumed"]


def test_ncu_cut_short_is_one_line(tmp_path):
    lines = (FIXTURES / "ncu" / "gemm-details.csv").read_text().splitlines()
    path = tmp_path / "cut.csv"
    path.write_text("\n".join([*lines[:-1], lines[-1][:40]]))
    with pytest.raises(MeasuredFileError, match=rf"cut.csv:{len(lines)}: a CSV row with \d+ cells"):
        read_measured(path)


def test_kineto_trace_gives_collectives_with_sizes_and_groups():
    trace = read_measured(FIXTURES / "kineto" / "hta-nccl-2rank.pt.trace.json.gz")
    assert trace.world_size == 2
    first = trace.collectives.iloc[0]
    # The trace's first NCCL kernel: allreduce, In msg nelems 6637568 of Float, Group size 2, dur 2636.669 us.
    assert (first["op"], first["group_size"], first["in_bytes"]) == ("all-reduce", 2, 6637568 * 4)
    assert first["duration_s"] == pytest.approx(2636.669e-6)
    assert first["busbw_gbps"] == pytest.approx(6637568 * 4 / 2636.669e-6 * 1.0 / 1e9)  # 2(n-1)/n = 1 at n = 2
    assert len(trace.collectives) == 21 and len(trace.steps) == 3
    assert trace.kernels["count"].sum() == 2700 - 21


def test_markdown_pastes_without_the_leading_hash_and_cputime_columns(tmp_path):
    """Threads render '#' lines as headings, so pastes lose the '#'; -C 1 names the time column cputime."""
    text = (NCCL / "gb10-2node-allreduce-truncated.txt").read_text().splitlines()[:-1]
    pasted = [line.lstrip("#") for line in text]
    pasted = [line.replace("     time   algbw", "  cputime   algbw") for line in pasted]
    path = tmp_path / "pasted.txt"
    path.write_text("\n".join(pasted))
    run = read_measured(path)
    assert (run.op, run.ranks, run.time_kind) == ("all-reduce", 2, "cputime")
    assert _row(run, 65536)["out_of_place_time_us"] == 67.93 and len(run.table) == 4


def test_a_run_with_one_block_only(tmp_path):
    header = "#       size         count      type   redop    root     time   algbw   busbw #wrong"
    rows = ["        8192          2048     float     sum      -1    35.15    0.23    0.23       0",
            "       16384          4096     float     sum      -1    31.67    0.52    0.52       0"]
    path = tmp_path / "one.txt"
    path.write_text("# Collective test starting: all_reduce_perf\n" + "\n".join([header, *rows]))
    run = read_measured(path, ranks=2)
    assert "in_place_time_us" not in run.table and list(run.table["out_of_place_time_us"]) == [35.15, 31.67]


def test_rows_split_by_nccl_log_lines_are_joined(tmp_path):
    """NCCL_DEBUG=INFO output can land in the middle of a row, after its size columns and before its
    times, with mpirun's [0] tags on both pieces (the log in NVIDIA/nccl issue 1453 looks like this)."""
    log = "[0] h100clust-worker-1:497888:497888 [0] NCCL INFO 536870912 Bytes -> Algo 1 proto 2 time 1200.5"
    lines = []
    for line in (NCCL / "gb200-nvl72-allreduce-partial.txt").read_text().splitlines():
        if line.startswith("   536870912"):
            cut = line.index(" -1 ") + 3  # after the size, count, type, redop and root columns
            head, tail = line[:cut], line[cut:]
            lines += [f"[0] {head}{log}", log, f"[0] {tail}"]
        else:
            lines.append(f"[0] {line}")
    path = tmp_path / "interleaved.txt"
    path.write_text("\n".join(lines))
    run = read_measured(path)
    assert run.table.drop(columns="line").equals(
        read_measured(NCCL / "gb200-nvl72-allreduce-partial.txt").table.drop(columns="line"))
    assert run.footer_avg_busbw_gbps == 745.53
